/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_points.c -- dims of points (dt_shard_points): vertex- and
   face-centred fields, one wrap of the program's own array each.

   A field of (NX+1) x (NY+1) vertices (points along both dims) and one of
   (NX+1) x NY x-faces (points along dim 0, cells along dim 1) on 1-D and
   2-D meshes. Each rank's array holds its cells' points and the point it
   shares with the next part (n_cells + 1 a dim), with ghost room around;
   the shared copies start as junk. Checked against the closed form
   f(global index) and the rule written out here (n-1 cells balanced, the
   last part owning the edge point):
   - the parts: dt_tensor_local_shape / _offset are the owned points;
   - gather and redistribute count each point once, from its owner (the
     junk copies never show);
   - a halo exchange fills the ghosts beyond the shared point (corners
     included, CONSTANT edges), never the shared copies;
   - dt_tensor_sync_shared gives every copy its owner's value, and nothing
     else changes;
   - a random fill equals a replicated tensor's (each point drawn once)
     and leaves the copies alone; a .npy save loads back as f;
   - a DT_COPY wrap of a held array takes the owned points;
   - bad input: local_shape without the shared point, a dim with fewer
     cells than parts, DT_INFER_SIZES, a halo wider than the room beyond
     the shared point: refused on every rank, nothing written. */
#define _POSIX_C_SOURCE 200112L /* getpid */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"
#include <unistd.h>

enum { NX = 13, NY = 9, W = 2 };
static const double POISON = -5.0, JUNK = -3.0, FILL = 0.5;

static double fval(const int64_t *g) { return 1000.0 * (double)(g[0] + 1) + (double)(g[1] + 1); }

/* the rule, written out: part c of k of a dim of n points (points: n-1 cells
   balanced, the last part owning the edge point), or of n cells (balanced) */
static void part(int points, int64_t n, int k, int c, int64_t *off, int64_t *len, int64_t *shr)
{
    int64_t cells = points ? n - 1 : n, q = cells / k, e = cells % k;
    *off = (int64_t)c * q + (c < e ? c : e);
    *len = q + (c < e) + (points && c == k - 1);
    *shr = points && c != k - 1;
}

/* one rank's array: held points (part + shared) with W ghost cells around */
typedef struct field {
    int points[2];
    int64_t shape[2], off[2], own[2], shr[2], held[2], as[2], n;
    double *a;
    dt_tensor *t;
} field;

static int64_t at(const field *f, int64_t i, int64_t j) { return (i + W) * f->as[1] + (j + W); }

static void field_layout(field *f, const dtt_mesh *m, const int *points, int64_t nx, int64_t ny,
                         const dt_placement *pl)
{
    int k, md;
    memset(f, 0, sizeof *f);
    f->shape[0] = nx;
    f->shape[1] = ny;
    for (k = 0; k < 2; k++) {
        f->points[k] = points[k];
        f->off[k] = 0;
        f->own[k] = f->shape[k];
        f->shr[k] = 0;
        for (md = 0; md < m->nd; md++) /* (one mesh dim per tensor dim here) */
            if (pl[md].kind == DT_SHARD && pl[md].dim == k)
                part(points[k], f->shape[k], m->shape[md], m->coord[md], &f->off[k], &f->own[k], &f->shr[k]);
        f->held[k] = f->own[k] + f->shr[k];
        f->as[k] = f->held[k] + 2 * W;
    }
    f->n = f->as[0] * f->as[1];
}

/* the held points f(g), the shared copies JUNK, the ghost room POISON */
static void field_fill(field *f)
{
    int64_t i, j;
    for (i = -W; i < f->held[0] + W; i++)
        for (j = -W; j < f->held[1] + W; j++) {
            int64_t g[2] = {f->off[0] + i, f->off[1] + j};
            int ghost = i < 0 || j < 0 || i >= f->held[0] || j >= f->held[1];
            int copy = !ghost && (i >= f->own[0] || j >= f->own[1]);
            f->a[at(f, i, j)] = ghost ? POISON : copy ? JUNK : fval(g);
        }
}

static dt_tensor_desc field_desc(const field *f, const dtt_mesh *m, const dt_placement *pl)
{
    return dtt_desc(DT_F64, 2, f->shape, m->nd, pl);
}

static int field_wrap(field *f, const dtt_mesh *m, const dt_placement *pl)
{
    dt_tensor_desc d = field_desc(f, m, pl);
    int64_t g[2] = {W, W};
    f->a = (double *)dtt_malloc((size_t)f->n * sizeof(double));
    field_fill(f);
    d.local_shape = f->held;
    d.local_ghost = g;
    d.local_alloc = f->a;
    d.local_alloc_bytes = f->n * (int64_t)sizeof(double);
    CHECK_OK(dt_tensor_from_local(m->mesh, &d, f->a, DT_BORROW, &f->t));
    return f->t != NULL;
}

/* every cell of the array: held points f (copies: `copies`, JUNK or f),
   ghosts beyond: f inside the global shape, FILL past it (after an
   exchange) or POISON (before) */
static void field_check(const field *f, int exchanged, int copies_synced, const char *what)
{
    int64_t i, j;
    int bad = 0;
    for (i = -W; i < f->held[0] + W; i++)
        for (j = -W; j < f->held[1] + W; j++) {
            int64_t g[2] = {f->off[0] + i, f->off[1] + j};
            int ghost = i < 0 || j < 0 || i >= f->held[0] || j >= f->held[1];
            int copy = !ghost && (i >= f->own[0] || j >= f->own[1]);
            int past = g[0] < 0 || g[1] < 0 || g[0] >= f->shape[0] || g[1] >= f->shape[1];
            double want = ghost ? (!exchanged ? POISON : past ? FILL : fval(g))
                          : copy ? (copies_synced ? fval(g) : JUNK) : fval(g);
            double got = f->a[at(f, i, j)];
            if (got != want && bad++ < 4)
                dtt_fail(__FILE__, __LINE__, what, "local (%lld, %lld) = global (%lld, %lld) %s: got %g want %g",
                         (long long)i, (long long)j, (long long)g[0], (long long)g[1],
                         ghost ? "ghost" : copy ? "shared copy" : "owned", got, want);
        }
}

static void check_full(const double *full, const int64_t *shape, const char *what)
{
    int64_t i, j;
    int bad = 0;
    for (i = 0; i < shape[0]; i++)
        for (j = 0; j < shape[1]; j++) {
            int64_t g[2] = {i, j};
            if (full[i * shape[1] + j] != fval(g) && bad++ < 4)
                dtt_fail(__FILE__, __LINE__, what, "(%lld, %lld): got %g want %g", (long long)i, (long long)j,
                         full[i * shape[1] + j], fval(g));
        }
}

/* how many parts hold global point g along dim k: 2 where a part starts there (its owner and the part
   before, which holds a copy), else 1 */
static int holders(const dtt_mesh *m, const dt_placement *pl, const field *f, int k, int64_t g)
{
    int md, c;
    int64_t off, len, shr;
    for (md = 0; md < m->nd; md++)
        if (pl[md].kind == DT_SHARD && pl[md].dim == k && f->points[k])
            for (c = 1; c < m->shape[md]; c++) {
                part(1, f->shape[k], m->shape[md], c, &off, &len, &shr);
                if (off == g) return 2;
            }
    return 1;
}

/* dt_tensor_sum_shared: owned points f, every copy 1; after it every holder of a point has f plus its
   number of copies */
static void sum_case(const dtt_mesh *m, const dt_placement *pl, field *f)
{
    int64_t i, j;
    int bad = 0;
    for (i = 0; i < f->held[0]; i++)
        for (j = 0; j < f->held[1]; j++) {
            int64_t g[2] = {f->off[0] + i, f->off[1] + j};
            f->a[at(f, i, j)] = i >= f->own[0] || j >= f->own[1] ? 1.0 : fval(g);
        }
    CHECK_OK(dt_tensor_sum_shared(f->t));
    for (i = 0; i < f->held[0]; i++)
        for (j = 0; j < f->held[1]; j++) {
            int64_t g[2] = {f->off[0] + i, f->off[1] + j};
            double want = fval(g) + (double)(holders(m, pl, f, 0, g[0]) * holders(m, pl, f, 1, g[1]) - 1);
            if (f->a[at(f, i, j)] != want && bad++ < 4)
                dtt_fail(__FILE__, __LINE__, "dt_tensor_sum_shared", "local (%lld, %lld): got %g want %g",
                         (long long)i, (long long)j, f->a[at(f, i, j)], want);
        }
}

static void points_case(const dtt_mesh *m, const int *points, int64_t nx, int64_t ny, const dt_placement *pl)
{
    field f;
    int64_t ls[2], lo[2], n = nx * ny, i;
    double *full = (double *)dtt_malloc((size_t)n * sizeof(double));
    dt_tensor *r = NULL, *rep = NULL, *back = NULL;
    dt_placement rp[DT_MAX_MESH_DIMS];
    dt_halo_desc h;
    char p[96], path[128];
    memset(rp, 0, sizeof rp);
    dtt_pl_str(pl, m->nd, p, sizeof p);
    dtt_ctx("mesh %s, (%lld, %lld) %s", m->name, (long long)nx, (long long)ny, p);
    field_layout(&f, m, points, nx, ny, pl);
    if (!field_wrap(&f, m, pl)) { free(f.a); free(full); return; }
    /* the parts: the owned points */
    dt_tensor_local_shape(f.t, ls);
    dt_tensor_local_offset(f.t, lo);
    CHECK(ls[0] == f.own[0] && ls[1] == f.own[1] && lo[0] == f.off[0] && lo[1] == f.off[1],
          "part (%lld, %lld) at (%lld, %lld), want (%lld, %lld) at (%lld, %lld)", (long long)ls[0], (long long)ls[1],
          (long long)lo[0], (long long)lo[1], (long long)f.own[0], (long long)f.own[1], (long long)f.off[0],
          (long long)f.off[1]);
    /* each point once, from its owner */
    memset(full, 0, (size_t)n * sizeof(double));
    CHECK_OK(dt_tensor_gather(f.t, full));
    check_full(full, f.shape, "gather");
    CHECK_OK(dt_tensor_redistribute(f.t, rp, &r));
    if (r) check_full((const double *)dt_tensor_data(r), f.shape, "redistribute to Replicate");
    field_check(&f, 0, 0, "after gather and redistribute");
    /* the halo: ghosts beyond the shared point, the copies untouched */
    memset(&h, 0, sizeof h);
    h.width[0] = h.width[1] = W;
    h.corners = 1;
    h.fill = FILL;
    CHECK_OK(dt_tensor_set_halo(f.t, &h));
    CHECK_OK(dt_halo_exchange(f.t));
    field_check(&f, 1, 0, "halo exchange");
    CHECK_OK(dt_halo_exchange_begin(f.t));
    CHECK_OK(dt_halo_exchange_end(f.t));
    field_check(&f, 1, 0, "split exchange");
    /* the copies take their owners' values, nothing else moves */
    CHECK_OK(dt_tensor_sync_shared(f.t));
    field_check(&f, 1, 1, "dt_tensor_sync_shared");
    CHECK_OK(dt_tensor_sync_shared(f.t)); /* planned once, run again */
    field_check(&f, 1, 1, "dt_tensor_sync_shared again");
    /* a .npy file holds each point once */
    {
        int pid = (int)getpid(); /* rank 0's: one file for all ranks, none shared between runs */
        MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
        snprintf(path, sizeof path, "/tmp/dt_test_points.%d.npy", pid);
    }
    CHECK_OK(dt_tensor_save_npy(f.t, path));
    CHECK_OK(dt_tensor_load_npy(m->mesh, path, rp, &back));
    if (back) check_full((const double *)dt_tensor_data(back), f.shape, ".npy save, load");
    dt_tensor_destroy(back);
    MPI_Barrier(MPI_COMM_WORLD);
    if (dtt_rank == 0) remove(path);
    /* random fill: a replicated tensor's values, each point drawn once; the copies keep theirs */
    {
        dt_tensor_desc rd = dtt_desc(DT_F64, 2, f.shape, m->nd, rp);
        double *rf = (double *)dtt_malloc((size_t)n * sizeof(double));
        CHECK_OK(dt_tensor_empty(m->mesh, &rd, &rep));
        CHECK_OK(dt_rng_set_state(m->mesh, 11, 3));
        CHECK_OK(dt_uniform_(rep, -1.0, 1.0));
        CHECK_OK(dt_rng_set_state(m->mesh, 11, 3));
        CHECK_OK(dt_uniform_(f.t, -1.0, 1.0));
        CHECK_OK(dt_tensor_gather(f.t, rf));
        if (rep) CHECK(memcmp(rf, dt_tensor_data(rep), (size_t)n * sizeof(double)) == 0, "a random fill differs from "
                       "a replicated tensor's");
        for (i = 0; i < f.held[0] * f.held[1]; i++) { /* the copies: still f after the sync */
            int64_t a = i / f.held[1], b = i % f.held[1], g[2] = {f.off[0] + a, f.off[1] + b};
            if ((a >= f.own[0] || b >= f.own[1]) && f.a[at(&f, a, b)] != fval(g)) {
                CHECK(0, "the random fill wrote the shared copy (%lld, %lld)", (long long)a, (long long)b);
                break;
            }
        }
        free(rf);
    }
    sum_case(m, pl, &f);
    dt_tensor_destroy(rep);
    dt_tensor_destroy(r);
    dt_tensor_destroy(f.t);
    free(f.a);
    /* DT_COPY of a held array (no ghosts): the owned points */
    {
        dt_tensor_desc d = field_desc(&f, m, pl);
        double *h2 = (double *)dtt_malloc((size_t)(f.held[0] * f.held[1] + 1) * sizeof(double));
        dt_tensor *c = NULL;
        for (i = 0; i < f.held[0] * f.held[1]; i++) {
            int64_t a = i / f.held[1], b = i % f.held[1], g[2] = {f.off[0] + a, f.off[1] + b};
            h2[i] = a >= f.own[0] || b >= f.own[1] ? JUNK : fval(g);
        }
        d.local_shape = f.held;
        CHECK_OK(dt_tensor_from_local(m->mesh, &d, h2, DT_COPY, &c));
        memset(full, 0, (size_t)n * sizeof(double));
        CHECK_OK(dt_tensor_gather(c, full));
        check_full(full, f.shape, "DT_COPY wrap");
        CHECK(dt_tensor_sync_shared(c) == DT_OK, "sync of a tensor without shared copies"); /* nothing to do */
        dt_tensor_destroy(c);
        free(h2);
    }
    free(full);
}

static int all_failed(dt_status st)
{
    int bad = st != DT_OK, all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

static void bad_input(const dtt_mesh *m)
{
    int pts[2] = {1, 1};
    dt_placement pl[DT_MAX_MESH_DIMS];
    field f;
    dt_tensor_desc d;
    dt_tensor *t = NULL;
    dt_halo_desc h;
    double *before;
    int64_t g[2] = {W, W}, own[2], shape[2];
    dt_status st;
    memset(pl, 0, sizeof pl);
    pl[0] = dt_shard_points(0);
    dtt_ctx("bad input, mesh %s", m->name);
    field_layout(&f, m, pts, NX + 1, NY + 1, pl);
    f.a = (double *)dtt_malloc((size_t)f.n * sizeof(double));
    field_fill(&f);
    before = (double *)dtt_malloc((size_t)f.n * sizeof(double));
    memcpy(before, f.a, (size_t)f.n * sizeof(double));
    d = field_desc(&f, m, pl);
    d.local_ghost = g;
    d.local_alloc = f.a;
    d.local_alloc_bytes = f.n * (int64_t)sizeof(double);
    /* local_shape without the shared point: every rank that holds one fails, so all do */
    own[0] = f.own[0];
    own[1] = f.own[1];
    d.local_shape = own;
    st = dt_tensor_from_local(m->mesh, &d, f.a, DT_BORROW, &t);
    if (dtt_np > 1) CHECK(all_failed(st), "a local_shape without the shared point accepted");
    if (f.shr[0]) CHECK(st == DT_ERR_SHAPE && strstr(dt_last_error(), "local_shape"), "%s: %s", dt_status_string(st),
                        dt_last_error());
    dt_tensor_destroy(t);
    t = NULL;
    d.local_shape = f.held;
    CHECK_ST(dt_tensor_from_local(m->mesh, &d, f.a, DT_BORROW | DT_INFER_SIZES, &t), DT_ERR_ARG);
    CHECK(strstr(dt_last_error(), "dt_shard_points") != NULL, "message: %s", dt_last_error());
    /* a dim with fewer cells than parts */
    shape[0] = m->shape[0];
    shape[1] = NY + 1;
    {
        dt_tensor_desc s = dtt_desc(DT_F64, 2, shape, m->nd, pl);
        CHECK_ST(dt_tensor_empty(m->mesh, &s, &t), DT_ERR_PLACEMENT);
        CHECK(strstr(dt_last_error(), "dt_shard_points") && strstr(dt_last_error(), "cells"), "message: %s",
              dt_last_error());
    }
    /* a halo wider than the room beyond the shared point */
    CHECK_OK(dt_tensor_from_local(m->mesh, &d, f.a, DT_BORROW, &t));
    memset(&h, 0, sizeof h);
    h.width_lo[0] = W;
    h.width_hi[0] = W + 1;
    st = t ? dt_tensor_set_halo(t, &h) : DT_ERR_ARG;
    CHECK(st == DT_ERR_ARG, "a halo past the room above: %s", dt_status_string(st));
    CHECK(memcmp(before, f.a, (size_t)f.n * sizeof(double)) == 0, "a refused call wrote the array");
    dt_tensor_destroy(t);
    free(before);
    free(f.a);
}

int main(int argc, char **argv)
{
    dt_comm *comm = NULL;
    int fac[64 * DT_MAX_MESH_DIMS], nf, fi, one[1], vert[2] = {1, 1}, xface[2] = {1, 0};
    dt_placement pl[DT_MAX_MESH_DIMS];
    dtt_mesh m;
    dtt_init(&argc, &argv, "points");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    memset(pl, 0, sizeof pl);
    one[0] = dtt_np;
    if (comm && dtt_mesh_open(&m, comm, 1, one)) {
        pl[0] = dt_shard_points(0);
        points_case(&m, vert, NX + 1, NY + 1, pl);
        points_case(&m, xface, NX + 1, NY, pl);
        pl[0] = dt_shard_points(1);
        points_case(&m, vert, NX + 1, NY + 1, pl);
        bad_input(&m);
        dtt_mesh_close(&m);
    }
    nf = comm ? dtt_factorizations(dtt_np, 2, fac, 64) : 0;
    for (fi = 0; fi < nf; fi++) {
        if (!dtt_mesh_open(&m, comm, 2, &fac[fi * DT_MAX_MESH_DIMS])) continue;
        pl[0] = dt_shard_points(0); pl[1] = dt_shard_points(1);
        points_case(&m, vert, NX + 1, NY + 1, pl);
        pl[1] = dt_shard_balanced(1); /* x-faces: points along x, cells along y */
        points_case(&m, xface, NX + 1, NY, pl);
        dtt_mesh_close(&m);
    }
    dt_comm_destroy(comm);
    return dtt_finish();
}
