/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
   env:   DTENSOR_HALO_TYPES=1 | DTENSOR_HALO_TYPES=0
*/
/* test_halo.c -- ghost cells, stencils and convolution against serial references.

   Halo exchange: tensors whose value at global index g is a closed form
   f(g), on 1-D and 2-D meshes (every factorisation of the rank count),
   sharded along one or several dims, two mesh dims sharding one dim,
   replicated mesh dims, uneven and empty shards, shards narrower than the
   halo; CONSTANT (with a fill value), PERIODIC and NONE boundaries, with
   and without corners; whole and split-phase (the interior is overwritten
   between _begin and _end: the ghosts must hold the values at _begin).
   Every cell of every ghosted block is checked against f at its (wrapped)
   global index, the fill value, or the untouched sentinel. The same cases
   run over a custom backend that has only sendrecv (no split, no
   start/wait): group sub-communicators and the blocking fallback.
   dt_stencil_apply: a 5-point and a 9-point 2-D stencil and a 7-point 3-D
   stencil against the serial stencil on the global array, every cell
   computed exactly once. dt_conv1d/2d/3d: against a serial
   cross-correlation (padding, dilation, kernels larger than shards, outputs
   wider and narrower than inputs), inputs sharded along batch, channel and
   spatial dims; the values are multiples of 1/32 so every sum is exact and
   results are compared exactly. Bad input: clear errors, nothing changed.
   --quick: fewer cases. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

/* ---------------------------------------------------------------- values */

static double fval(int nd, const int64_t *g)
{
    double v = 0;
    int d;
    for (d = 0; d < nd; d++) v = v * 100 + (double)(g[d] + 1);
    return v;
}

static const double SENTINEL = -7.0;

/* a tensor with values fval, built from the reference layout */
static dt_tensor *make_f(dt_mesh *mesh, const dtt_mesh *m, dt_dtype t, int nd, const int64_t *shape,
                         const dt_placement *pl)
{
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], n, i, g[DT_MAX_DIMS];
    dt_tensor_desc d;
    dt_tensor *x = NULL;
    void *buf;
    int k;
    dtt_ref_layout(m->nd, m->shape, m->coord, nd, shape, pl, ls, lo);
    n = dtt_numel(nd, ls);
    buf = dtt_malloc((size_t)(n ? n : 1) * dtt_size(t));
    for (i = 0; i < n; i++) {
        int64_t r = i;
        for (k = nd - 1; k >= 0; k--) { g[k] = lo[k] + r % ls[k]; r /= ls[k]; }
        dtt_store_d(t, buf, (size_t)i, fval(nd, g));
    }
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = nd;
    for (k = 0; k < nd; k++) d.shape[k] = shape[k];
    for (k = 0; k < m->nd; k++) d.placements[k] = pl[k];
    CHECK_OK(dt_tensor_from_local(mesh, &d, buf, DT_COPY, &x));
    free(buf);
    return x;
}

/* ---------------------------------------------------------------- halo exchange */

static long halo_cases = 0;

/* layers (NULL: all): an exchange of that many layers; cells further out keep the sentinel */
static void check_ghosts(const dtt_mesh *m, dt_tensor *x, dt_dtype t, int nd, const int64_t *shape,
                         const dt_placement *pl, const dt_halo_desc *hd, const int64_t *layers)
{
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], gsh[DT_MAX_DIMS], gn, i, u[DT_MAX_DIMS], w[DT_MAX_DIMS];
    int64_t wl[DT_MAX_DIMS], wh[DT_MAX_DIMS];
    const void *gb;
    int k, bad = 0;
    dtt_ref_layout(m->nd, m->shape, m->coord, nd, shape, pl, ls, lo);
    dtt_side_widths(hd, nd, wl, wh);
    gb = dt_tensor_ghosted_data(x, gsh);
    CHECK(gb != NULL || dtt_numel(nd, ls) == 0, "no ghosted block");
    gn = 1;
    for (k = 0; k < nd; k++) {
        CHECK(gsh[k] == ls[k] + wl[k] + wh[k], "ghosted shape[%d] = %lld, want %lld", k, (long long)gsh[k],
              (long long)(ls[k] + wl[k] + wh[k]));
        gn *= gsh[k];
    }
    if (!gb) return;
    for (i = 0; i < gn; i++) {
        int64_t r = i;
        int outside = 0, cfill = 0, none = 0, beyond = 0;
        double want, got;
        for (k = nd - 1; k >= 0; k--) { u[k] = lo[k] - wl[k] + r % gsh[k]; r /= gsh[k]; }
        for (k = 0; k < nd; k++) {
            int64_t dist = u[k] < lo[k] ? lo[k] - u[k] : u[k] >= lo[k] + ls[k] ? u[k] - (lo[k] + ls[k] - 1) : 0;
            if (layers && dist > layers[k]) beyond = 1;
            w[k] = u[k];
            if (u[k] < lo[k] || u[k] >= lo[k] + ls[k]) outside++;
            if (u[k] < 0 || u[k] >= shape[k]) {
                if (hd->boundary[k] == DT_BOUNDARY_PERIODIC) w[k] = (u[k] + shape[k]) % shape[k];
                else if (hd->boundary[k] == DT_BOUNDARY_CONSTANT) cfill = 1;
                else none = 1;
            }
        }
        if (outside > 1 && !hd->corners) continue; /* corners undefined for a star stencil */
        want = beyond ? SENTINEL : cfill ? hd->fill : none ? SENTINEL : fval(nd, w);
        got = dtt_load_d(t, gb, (size_t)i);
        if (got != want && bad++ < 5) {
            char c[96];
            dtt_shape_str(nd, u, c, sizeof c);
            dtt_fail(__FILE__, __LINE__, "ghost value", "cell %s: got %g want %g", c, got, want);
        }
    }
}

/* exchange (whole or split, with the interior overwritten in between) and check */
static void halo_case(const dtt_mesh *m, dt_dtype t, int nd, const int64_t *shape, const dt_placement *pl,
                      const dt_halo_desc *hd, int split)
{
    dt_tensor *x = make_f(m->mesh, m, t, nd, shape, pl);
    void *gb;
    int64_t gsh[DT_MAX_DIMS], gn = 1, i;
    int k;
    char s[96], p[96];
    dtt_shape_str(nd, shape, s, sizeof s);
    dtt_pl_str(pl, m->nd, p, sizeof p);
    dtt_ctx("mesh %s, %s %s %s, width %lld/%lld/%lld (lo %lld/%lld, hi %lld/%lld), bnd %d%d%d, corners %d, %s",
            m->name, dtt_dtname(t), s, p, (long long)hd->width[0], (long long)hd->width[1], (long long)hd->width[2],
            (long long)hd->width_lo[0], (long long)hd->width_lo[1], (long long)hd->width_hi[0],
            (long long)hd->width_hi[1], hd->boundary[0], hd->boundary[1], hd->boundary[2], hd->corners,
            split ? "split" : "whole");
    if (!x) return;
    CHECK_OK(dt_tensor_set_halo(x, hd));
    gb = dt_tensor_ghosted_data(x, gsh);
    for (k = 0; k < nd; k++) gn *= gsh[k];
    for (i = 0; gb && i < gn; i++) dtt_store_d(t, gb, (size_t)i, SENTINEL);
    if (split) {
        size_t n = dt_tensor_local_numel(x);
        CHECK_OK(dt_halo_exchange_begin(x));
        for (i = 0; i < (int64_t)n; i++) dtt_store_d(t, dt_tensor_data(x), (size_t)i, -1.0);
        CHECK_OK(dt_halo_exchange_end(x));
        /* the interior in the ghosted block is the value at _begin: check_ghosts checks it as f */
    } else {
        CHECK_OK(dt_halo_exchange(x));
    }
    check_ghosts(m, x, t, nd, shape, pl, hd, NULL);
    halo_cases++;
    dt_tensor_destroy(x);
}

/* Fewer layers than the halo's (dt_halo_exchange_layers): the layers asked
   for hold what a full exchange puts there, the ones past them keep the
   sentinel, and the messages are those of a halo of that width (bytes
   counted against one). Whole and split, a width planned twice, then the
   full exchange still whole. */
static void halo_layers_case(const dtt_mesh *m, dt_comm *comm, int nd, const int64_t *shape, const dt_placement *pl,
                             const dt_halo_desc *hd, const int64_t *layers)
{
    dt_tensor *x = make_f(m->mesh, m, DT_F64, nd, shape, pl), *y = make_f(m->mesh, m, DT_F64, nd, shape, pl);
    dt_halo_desc hy = *hd;
    dt_comm_stats a, b;
    int64_t gsh[DT_MAX_DIMS], gn = 1, i;
    int k, round;
    void *gb;
    int64_t wl[DT_MAX_DIMS], wh[DT_MAX_DIMS];
    dtt_ctx("mesh %s, layers %lld/%lld of width %lld/%lld (lo %lld/%lld, hi %lld/%lld), corners %d", m->name,
            (long long)layers[0], (long long)layers[1], (long long)hd->width[0], (long long)hd->width[1],
            (long long)hd->width_lo[0], (long long)hd->width_lo[1], (long long)hd->width_hi[0],
            (long long)hd->width_hi[1], hd->corners);
    if (!x || !y) goto done;
    dtt_side_widths(hd, nd, wl, wh);
    memset(hy.width, 0, sizeof hy.width);
    memset(hy.width_lo, 0, sizeof hy.width_lo);
    memset(hy.width_hi, 0, sizeof hy.width_hi);
    for (k = 0; k < nd; k++) { /* each side as deep as it is, up to layers[k] */
        hy.width_lo[k] = layers[k] < wl[k] ? layers[k] : wl[k];
        hy.width_hi[k] = layers[k] < wh[k] ? layers[k] : wh[k];
    }
    CHECK_OK(dt_tensor_set_halo(x, hd));
    CHECK_OK(dt_tensor_set_halo(y, &hy));
    gb = dt_tensor_ghosted_data(x, gsh);
    for (k = 0; k < nd; k++) gn *= gsh[k];
    for (round = 0; round < 3; round++) {
        for (i = 0; gb && i < gn; i++) dtt_store_d(DT_F64, gb, (size_t)i, SENTINEL);
        dt_comm_reset_stats(comm);
        if (round == 1) {
            CHECK_OK(dt_halo_exchange_layers_begin(x, layers));
            CHECK_ST(dt_halo_exchange_layers_begin(x, layers), DT_ERR_ARG); /* one at a time */
            CHECK_ST(dt_halo_exchange_begin(x), DT_ERR_ARG);
            CHECK_OK(dt_halo_exchange_end(x));
        } else {
            CHECK_OK(dt_halo_exchange_layers(x, layers));
        }
        dt_comm_get_stats(comm, &a);
        check_ghosts(m, x, DT_F64, nd, shape, pl, hd, layers);
        dt_comm_reset_stats(comm);
        CHECK_OK(dt_halo_exchange(y));
        dt_comm_get_stats(comm, &b);
        CHECK(a.bytes_sent == b.bytes_sent && a.bytes_recv == b.bytes_recv,
              "layers moved %llu/%llu bytes, a halo of that width %llu/%llu", (unsigned long long)a.bytes_sent,
              (unsigned long long)a.bytes_recv, (unsigned long long)b.bytes_sent, (unsigned long long)b.bytes_recv);
    }
    for (i = 0; gb && i < gn; i++) dtt_store_d(DT_F64, gb, (size_t)i, SENTINEL);
    CHECK_OK(dt_halo_exchange_layers(x, NULL));
    check_ghosts(m, x, DT_F64, nd, shape, pl, hd, NULL);
    halo_cases++;
done:
    dt_tensor_destroy(x);
    dt_tensor_destroy(y);
}

static dt_halo_desc hdesc(int64_t w0, int64_t w1, int64_t w2, int b0, int b1, int b2, int corners, double fill)
{
    dt_halo_desc h;
    memset(&h, 0, sizeof h);
    h.width[0] = w0; h.width[1] = w1; h.width[2] = w2;
    h.boundary[0] = (uint8_t)b0; h.boundary[1] = (uint8_t)b1; h.boundary[2] = (uint8_t)b2;
    h.corners = corners;
    h.fill = fill;
    return h;
}

/* per-side widths of a 2-D halo: lo0/hi0 along dim 0, lo1/hi1 along dim 1 */
static dt_halo_desc hsided(int64_t lo0, int64_t hi0, int64_t lo1, int64_t hi1, int b0, int b1, int corners,
                           double fill)
{
    dt_halo_desc h = hdesc(0, 0, 0, b0, b1, 0, corners, fill);
    h.width_lo[0] = lo0; h.width_hi[0] = hi0;
    h.width_lo[1] = lo1; h.width_hi[1] = hi1;
    return h;
}

enum { C = DT_BOUNDARY_CONSTANT, P = DT_BOUNDARY_PERIODIC, N = DT_BOUNDARY_NONE };

static void halo_cases_1d(const dtt_mesh *m)
{
    int64_t s2[2] = {13, 7}, s2b[2] = {3, 5}, s3[3] = {5, 6, 4};
    dt_placement pl[DT_MAX_MESH_DIMS];
    dt_halo_desc h;
    memset(pl, 0, sizeof pl);
    pl[0] = dt_shard(0);
    h = hdesc(2, 1, 0, P, C, 0, 1, 0.0); halo_case(m, DT_F64, 2, s2, pl, &h, 0);
    h = hdesc(2, 1, 0, P, C, 0, 0, 0.0); halo_case(m, DT_F64, 2, s2, pl, &h, 1);
    h = hdesc(3, 0, 0, C, 0, 0, 1, 2.5); halo_case(m, DT_F64, 2, s2, pl, &h, 0);   /* wider than 2-row shards */
    h = hdesc(5, 2, 0, P, P, 0, 1, 0.0); halo_case(m, DT_I32, 2, s2, pl, &h, 1);
    h = hdesc(13, 7, 0, P, P, 0, 1, 0.0); halo_case(m, DT_F64, 2, s2, pl, &h, 0);  /* width == n */
    h = hdesc(1, 1, 0, N, C, 0, 1, -3.0); halo_case(m, DT_F32, 2, s2, pl, &h, 0);
    h = hdesc(2, 2, 0, P, N, 0, 1, 0.0); halo_case(m, DT_F64, 2, s2b, pl, &h, 0);  /* empty shards */
    /* per side (a vertex-centred field's 2 below, 3 above), one side 0, wider than the shards */
    h = hsided(2, 3, 1, 0, P, C, 1, 1.5); halo_case(m, DT_F64, 2, s2, pl, &h, 0);
    h = hsided(0, 2, 2, 1, C, P, 1, -2.0); halo_case(m, DT_F64, 2, s2, pl, &h, 1);
    h = hsided(3, 1, 0, 2, P, N, 0, 0.0); halo_case(m, DT_F32, 2, s2b, pl, &h, 0);
    if (dtt_quick) return;
    pl[0] = dt_shard(1);
    h = hdesc(1, 2, 0, C, P, 0, 1, 9.0); halo_case(m, DT_F64, 2, s2, pl, &h, 1);
    h = hdesc(0, 3, 0, 0, C, 0, 0, 0.0); halo_case(m, DT_F64, 2, s2b, pl, &h, 0);
    pl[0] = dt_replicate();
    h = hdesc(2, 1, 0, P, C, 0, 1, 1.0); halo_case(m, DT_F64, 2, s2, pl, &h, 0);
    pl[0] = dt_shard(2);
    h = hdesc(1, 1, 1, P, C, P, 1, 0.0); halo_case(m, DT_F64, 3, s3, pl, &h, 0);
    h = hdesc(1, 2, 1, C, P, N, 0, 0.0); halo_case(m, DT_F64, 3, s3, pl, &h, 1);
}

static void halo_cases_2d(const dtt_mesh *m)
{
    int64_t s2[2] = {13, 7}, s3[3] = {5, 6, 4};
    dt_placement pl[DT_MAX_MESH_DIMS];
    dt_halo_desc h;
    memset(pl, 0, sizeof pl);
    pl[0] = dt_shard(0); pl[1] = dt_shard(1);
    h = hdesc(2, 1, 0, P, P, 0, 1, 0.0); halo_case(m, DT_F64, 2, s2, pl, &h, 0);
    h = hdesc(1, 2, 0, C, P, 0, 0, 4.0); halo_case(m, DT_F64, 2, s2, pl, &h, 1);
    pl[0] = dt_shard(1); pl[1] = dt_shard(0);
    h = hdesc(3, 3, 0, P, C, 0, 1, 0.0); halo_case(m, DT_F64, 2, s2, pl, &h, 1);
    pl[0] = dt_shard(0); pl[1] = dt_shard(0); /* two mesh dims split one tensor dim */
    h = hdesc(2, 1, 0, P, C, 0, 1, 0.0); halo_case(m, DT_F64, 2, s2, pl, &h, 0);
    pl[0] = dt_replicate(); pl[1] = dt_shard(1); /* replica groups */
    h = hdesc(1, 2, 0, C, P, 0, 1, 0.0); halo_case(m, DT_I32, 2, s2, pl, &h, 1);
    {
        int64_t one[2] = {1, 1}, mixed[2] = {2, 0};
        pl[0] = dt_shard(0); pl[1] = dt_shard(1);
        h = hdesc(2, 2, 0, P, C, 0, 1, 2.5); halo_layers_case(m, m->comm, 2, s2, pl, &h, one);
        h = hdesc(2, 2, 0, C, P, 0, 0, 0.0); halo_layers_case(m, m->comm, 2, s2, pl, &h, mixed);
        h = hsided(2, 3, 1, 0, P, C, 1, 0.5); halo_case(m, DT_F64, 2, s2, pl, &h, 1);
        h = hsided(2, 1, 0, 2, P, C, 1, 0.5); halo_layers_case(m, m->comm, 2, s2, pl, &h, one);
        h = hsided(3, 1, 1, 2, C, P, 1, 0.0); halo_layers_case(m, m->comm, 2, s2, pl, &h, mixed);
    }
    if (dtt_quick) return;
    pl[0] = dt_shard(0); pl[1] = dt_shard(2);
    h = hdesc(1, 1, 1, P, N, P, 1, 0.0); halo_case(m, DT_F64, 3, s3, pl, &h, 0);
    h = hdesc(2, 0, 2, C, 0, P, 0, 0.0); halo_case(m, DT_F64, 3, s3, pl, &h, 1);
    pl[0] = dt_shard(2); pl[1] = dt_shard(1);
    h = hdesc(1, 2, 1, P, P, P, 1, 0.0); halo_case(m, DT_F32, 3, s3, pl, &h, 0);
}

static void halo_sweep(dt_comm *comm)
{
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, one[1];
    dtt_mesh m;
    one[0] = dtt_np;
    if (dtt_mesh_open(&m, comm, 1, one)) { halo_cases_1d(&m); dtt_mesh_close(&m); }
    nf = dtt_factorizations(dtt_np, 2, fac, 64);
    for (f = 0; f < nf; f++) {
        if (dtt_quick && f != nf / 2) continue;
        if (!dtt_mesh_open(&m, comm, 2, &fac[f * DT_MAX_MESH_DIMS])) continue;
        halo_cases_2d(&m);
        dtt_mesh_close(&m);
    }
}

/* ---------------------------------------------------------------- a sendrecv-only backend */

static void custom_backend(void)
{
    static MPI_Comm dup;
    dt_comm *comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    comm = dtt_p2p_comm(&dup);
    if (comm) {
        int save = dtt_quick;
        dtt_quick = 1;
        halo_sweep(comm);
        dtt_quick = save;
        dt_comm_destroy(comm);
    }
    MPI_Comm_free(&dup);
}

/* ---------------------------------------------------------------- stencils */

typedef struct sten { int kind; long *count; } sten;

static void stencil_fn(const dt_stencil_block *b, void *user)
{
    const sten *s = (const sten *)user;
    const double *in = (const double *)b->in;
    double *out = (double *)b->out;
    int64_t i, j, k;
    if (b->ndim == 2) {
        for (i = b->lo[0]; i < b->lo[0] + b->ext[0]; i++)
            for (j = b->lo[1]; j < b->lo[1] + b->ext[1]; j++) {
                const double *c = in + (i + b->width[0]) * b->in_stride[0] + (j + b->width[1]) * b->in_stride[1];
                int64_t r = b->in_stride[0], q = b->in_stride[1];
                double v = 4 * c[0] - c[-r] - c[r] - c[-q] - c[q];
                if (s->kind == 4) /* one-sided: i-2 .. i+1 along dim 0, j .. j+1 along dim 1 */
                    v = c[0] + 2 * c[-2 * r] - c[r] + 3 * c[q];
                if (s->kind == 9) v += 0.5 * (c[-r - q] + c[-r + q] + c[r - q] + c[r + q]);
                out[i * b->out_stride[0] + j * b->out_stride[1]] = v;
                s->count[i * b->local_shape[1] + j]++;
            }
    } else {
        for (i = b->lo[0]; i < b->lo[0] + b->ext[0]; i++)
            for (j = b->lo[1]; j < b->lo[1] + b->ext[1]; j++)
                for (k = b->lo[2]; k < b->lo[2] + b->ext[2]; k++) {
                    const double *c = in + (i + b->width[0]) * b->in_stride[0] +
                                      (j + b->width[1]) * b->in_stride[1] + (k + b->width[2]) * b->in_stride[2];
                    int64_t a = b->in_stride[0], q = b->in_stride[1], z = b->in_stride[2];
                    out[i * b->out_stride[0] + j * b->out_stride[1] + k * b->out_stride[2]] =
                        6 * c[0] - c[-a] - c[a] - c[-q] - c[q] - c[-z] - c[z];
                    s->count[(i * b->local_shape[1] + j) * b->local_shape[2] + k]++;
                }
    }
}

/* the serial stencil at global index g of a periodic (dim 0) / constant-0 (others) field */
static double stencil_ref(int kind, int nd, const int64_t *shape, const int64_t *g)
{
    int64_t u[3];
    int d, e;
    double v;
#define AT(expr) (memcpy(u, g, sizeof u), (expr), \
                  u[0] = (u[0] + shape[0]) % shape[0], \
                  ((u[1] < 0 || u[1] >= shape[1] || (nd == 3 && (u[2] < 0 || u[2] >= shape[2]))) ? 0.0 : fval(nd, u)))
    if (kind == 4) { /* one statement per neighbour: u is shared */
        v = fval(nd, g);
        v += 2 * AT(u[0] -= 2);
        v -= AT(u[0] += 1);
        v += 3 * AT(u[1] += 1);
        return v;
    }
    v = 2.0 * nd * fval(nd, g);
    for (d = 0; d < nd; d++) { v -= AT(u[d] -= 1); v -= AT(u[d] += 1); }
    if (kind == 9)
        for (d = -1; d <= 1; d += 2)
            for (e = -1; e <= 1; e += 2) v += 0.5 * AT((u[0] += d, u[1] += e));
#undef AT
    return v;
}

static void stencil_case(const dtt_mesh *m, int kind, int nd, const int64_t *shape, const dt_placement *pl)
{
    dt_tensor *x = make_f(m->mesh, m, DT_F64, nd, shape, pl), *y = NULL;
    /* kind 4 reads 2 below and 1 above along dim 0, 1 above along dim 1: per-side widths */
    dt_halo_desc h = kind == 4 ? hsided(2, 1, 0, 1, P, C, 1, 0.0)
                               : hdesc(1, 1, nd == 3 ? 1 : 0, P, C, nd == 3 ? C : 0, kind == 9, 0.0);
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], n, i, g[3];
    long *count;
    sten s;
    int k, bad = 0, rep;
    char p[96];
    dtt_pl_str(pl, m->nd, p, sizeof p);
    dtt_ctx("stencil %d-point, mesh %s, %s", kind, m->name, p);
    if (!x) return;
    dtt_ref_layout(m->nd, m->shape, m->coord, nd, shape, pl, ls, lo);
    n = dtt_numel(nd, ls);
    count = (long *)dtt_malloc((size_t)(n ? n : 1) * sizeof *count);
    memset(count, 0, (size_t)(n ? n : 1) * sizeof *count);
    s.kind = kind;
    s.count = count;
    CHECK_OK(dt_tensor_set_halo(x, &h));
    /* checked after each run: the first finds the ghosted block zeroed, so an
       inner cell computed from a ghost before the exchange ended shows */
    for (rep = 0; rep < 2; rep++) { /* the second run reuses *out */
        CHECK_OK(dt_stencil_apply(x, stencil_fn, &s, &y));
        for (i = 0; y && i < n; i++) {
            int64_t r = i;
            double want, got = ((const double *)dt_tensor_data(y))[i];
            for (k = nd - 1; k >= 0; k--) { g[k] = lo[k] + r % ls[k]; r /= ls[k]; }
            want = stencil_ref(kind, nd, shape, g);
            if ((got != want || count[i] != rep + 1) && bad++ < 5)
                dtt_fail(__FILE__, __LINE__, "stencil", "run %d, local cell %lld: got %g want %g, computed %ld times "
                         "(want %d)", rep, (long long)i, got, want, count[i], rep + 1);
        }
    }
    free(count);
    dt_tensor_destroy(y);
    dt_tensor_destroy(x);
}

static void stencil_sweep(dt_comm *comm)
{
    int64_t s2[2] = {17, 11}, s3[3] = {7, 5, 6};
    dt_placement pl[DT_MAX_MESH_DIMS];
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, one[1];
    dtt_mesh m;
    memset(pl, 0, sizeof pl);
    one[0] = dtt_np;
    if (dtt_mesh_open(&m, comm, 1, one)) {
        pl[0] = dt_shard(0);
        stencil_case(&m, 5, 2, s2, pl);
        stencil_case(&m, 9, 2, s2, pl);
        stencil_case(&m, 4, 2, s2, pl);
        pl[0] = dt_shard(1);
        stencil_case(&m, 9, 2, s2, pl);
        pl[0] = dt_shard(2);
        stencil_case(&m, 7, 3, s3, pl);
        dtt_mesh_close(&m);
    }
    nf = dtt_factorizations(dtt_np, 2, fac, 64);
    for (f = 0; f < nf; f++) {
        if (dtt_quick && f != nf / 2) continue;
        if (!dtt_mesh_open(&m, comm, 2, &fac[f * DT_MAX_MESH_DIMS])) continue;
        pl[0] = dt_shard(0); pl[1] = dt_shard(1);
        stencil_case(&m, 9, 2, s2, pl);
        stencil_case(&m, 4, 2, s2, pl);
        pl[0] = dt_shard(1); pl[1] = dt_shard(2);
        stencil_case(&m, 7, 3, s3, pl);
        dtt_mesh_close(&m);
    }
}

/* ---------------------------------------------------------------- convolution */

static double xval(int64_t g) { return (double)((g * 7) % 13 - 6) / 8.0; }
static double wval(int64_t g) { return (double)((g * 5) % 11 - 5) / 4.0; }
static double bval(int64_t g) { return (double)(g % 5 - 2) / 2.0; }

/* serial cross-correlation on global arrays: x [N,Ci,S..], w [Co,Ci,K..] */
static void conv_ref(int nsp, const int64_t *xs, const int64_t *ws, const int64_t *pad, const int64_t *dil,
                     int bias, const int64_t *os, double *out)
{
    int64_t on = dtt_numel(nsp + 2, os), i;
    for (i = 0; i < on; i++) {
        int64_t o[5], r = i, ci, kt, ktot = 1;
        int k;
        double v;
        for (k = nsp + 1; k >= 0; k--) { o[k] = r % os[k]; r /= os[k]; }
        v = bias ? bval(o[1]) : 0.0;
        for (k = 0; k < nsp; k++) ktot *= ws[2 + k];
        for (ci = 0; ci < xs[1]; ci++)
            for (kt = 0; kt < ktot; kt++) {
                int64_t kk[3], q = kt, xi = o[0] * xs[1] + ci, wi = o[1] * ws[1] + ci;
                int inside = 1;
                for (k = nsp - 1; k >= 0; k--) { kk[k] = q % ws[2 + k]; q /= ws[2 + k]; }
                for (k = 0; k < nsp; k++) {
                    int64_t p = o[2 + k] - pad[k] + kk[k] * dil[k];
                    if (p < 0 || p >= xs[2 + k]) inside = 0;
                    xi = xi * xs[2 + k] + p;
                    wi = wi * ws[2 + k] + kk[k];
                }
                if (inside) v += xval(xi) * wval(wi);
            }
        out[i] = v;
    }
}

static dt_tensor *conv_tensor(const dtt_mesh *m, dt_dtype t, int nd, const int64_t *shape, const dt_placement *pl,
                              double (*f)(int64_t))
{
    int64_t n = dtt_numel(nd, shape), i;
    double *full = (double *)dtt_malloc((size_t)n * sizeof *full);
    dt_tensor *x;
    for (i = 0; i < n; i++) full[i] = f(i);
    x = dtt_from_full(m, t, nd, shape, pl, full, 1.0);
    free(full);
    return x;
}

static void conv_case(const dtt_mesh *m, dt_dtype t, int nsp, const int64_t *xs, const int64_t *ws, int64_t pad,
                      int64_t dil, int bias, const dt_placement *xpl)
{
    dt_placement rep[DT_MAX_MESH_DIMS];
    dt_tensor *x, *w, *b = NULL, *y = NULL;
    dt_conv_desc cd;
    int64_t os[5], pads[3], dils[3], on, i;
    double *want, *got;
    int k, bad = 0;
    char s[96], p[96];
    memset(rep, 0, sizeof rep);
    memset(&cd, 0, sizeof cd);
    for (k = 0; k < nsp; k++) {
        cd.padding[k] = pads[k] = pad;
        cd.dilation[k] = dils[k] = dil;
    }
    os[0] = xs[0];
    os[1] = ws[0];
    for (k = 0; k < nsp; k++) os[2 + k] = xs[2 + k] + 2 * pad - dil * (ws[2 + k] - 1);
    dtt_shape_str(nsp + 2, xs, s, sizeof s);
    dtt_pl_str(xpl, m->nd, p, sizeof p);
    dtt_ctx("conv%dd %s x %s %s, k %lld, pad %lld, dil %lld, bias %d, mesh %s", nsp, dtt_dtname(t), s, p,
            (long long)ws[2], (long long)pad, (long long)dil, bias, m->name);
    x = conv_tensor(m, t, nsp + 2, xs, xpl, xval);
    w = conv_tensor(m, t, nsp + 2, ws, rep, wval);
    if (bias) b = conv_tensor(m, t, 1, ws, rep, bval);
    on = dtt_numel(nsp + 2, os);
    want = (double *)dtt_malloc((size_t)on * sizeof *want);
    got = (double *)dtt_malloc((size_t)on * sizeof *got);
    conv_ref(nsp, xs, ws, pads, dils, bias, os, want);
    if (x && w) {
        dt_status st = nsp == 1 ? dt_conv1d(x, w, b, &cd, &y) : nsp == 2 ? dt_conv2d(x, w, b, &cd, &y)
                                                                         : dt_conv3d(x, w, b, &cd, &y);
        CHECK(st == DT_OK, "conv: %s", dt_last_error());
    }
    if (y) {
        const dt_tensor_desc *yd = dt_tensor_get_desc(y);
        for (k = 0; k < nsp + 2; k++) CHECK(yd->shape[k] == os[k], "out shape[%d] = %lld want %lld", k,
                                            (long long)yd->shape[k], (long long)os[k]);
        CHECK_OK(dtt_gather_full(y, got));
        for (i = 0; i < on; i++)
            if (got[i] != want[i] && bad++ < 5)
                dtt_fail(__FILE__, __LINE__, "conv value", "flat %lld: got %.17g want %.17g", (long long)i, got[i],
                         want[i]);
        for (k = 0; k < m->nd; k++) {
            dt_placement q = xpl[k];
            if (q.kind == DT_SHARD && q.dim == 1) q = dt_replicate();
            CHECK(yd->placements[k].kind == q.kind && yd->placements[k].dim == q.dim, "out placement[%d]", k);
        }
    }
    free(want);
    free(got);
    dt_tensor_destroy(y);
    dt_tensor_destroy(b);
    dt_tensor_destroy(w);
    dt_tensor_destroy(x);
}

static void conv_sweep(dt_comm *comm)
{
    int64_t x1[3] = {2, 3, 19}, w1[3] = {4, 3, 3}, w1b[3] = {2, 3, 5};
    int64_t x2[4] = {2, 2, 9, 7}, w2[4] = {3, 2, 3, 3};
    int64_t x3[5] = {1, 2, 5, 6, 4}, w3[5] = {2, 2, 3, 3, 3};
    dt_placement pl[DT_MAX_MESH_DIMS];
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, one[1];
    dtt_mesh m;
    memset(pl, 0, sizeof pl);
    one[0] = dtt_np;
    if (dtt_mesh_open(&m, comm, 1, one)) {
        pl[0] = dt_shard(2);
        conv_case(&m, DT_F64, 1, x1, w1, 1, 1, 1, pl);
        conv_case(&m, DT_F64, 1, x1, w1b, 0, 2, 0, pl);   /* output narrower than input */
        conv_case(&m, DT_F32, 1, x1, w1b, 5, 1, 1, pl);   /* output wider than input */
        conv_case(&m, DT_F64, 2, x2, w2, 1, 1, 1, pl);
        conv_case(&m, DT_F64, 2, x2, w2, 2, 2, 0, pl);
        conv_case(&m, DT_F64, 3, x3, w3, 1, 1, 1, pl);
        pl[0] = dt_shard(0);
        conv_case(&m, DT_F64, 2, x2, w2, 1, 1, 1, pl);
        pl[0] = dt_shard(1); /* channels: gathered first */
        conv_case(&m, DT_F64, 1, x1, w1, 1, 1, 1, pl);
        pl[0] = dt_replicate();
        conv_case(&m, DT_F32, 2, x2, w2, 0, 1, 1, pl);
        dtt_mesh_close(&m);
    }
    nf = dtt_factorizations(dtt_np, 2, fac, 64);
    for (f = 0; f < nf; f++) {
        if (dtt_quick && f != nf / 2) continue;
        if (!dtt_mesh_open(&m, comm, 2, &fac[f * DT_MAX_MESH_DIMS])) continue;
        pl[0] = dt_shard(2); pl[1] = dt_shard(3);
        conv_case(&m, DT_F64, 2, x2, w2, 1, 2, 1, pl);
        pl[0] = dt_shard(0); pl[1] = dt_shard(2);
        conv_case(&m, DT_F64, 2, x2, w2, 1, 1, 0, pl);
        pl[0] = dt_shard(3); pl[1] = dt_shard(4);
        conv_case(&m, DT_F64, 3, x3, w3, 1, 1, 1, pl);
        dtt_mesh_close(&m);
    }
}

/* ---------------------------------------------------------------- bad input */

static void bad_input(dt_comm *comm)
{
    dtt_mesh m;
    int one[1];
    int64_t s2[2] = {6, 5};
    dt_placement pl[DT_MAX_MESH_DIMS];
    dt_tensor *x, *part = NULL, *y = NULL;
    dt_halo_desc h;
    void *before;
    one[0] = dtt_np;
    memset(pl, 0, sizeof pl);
    if (!dtt_mesh_open(&m, comm, 1, one)) return;
    dtt_ctx("bad input");
    pl[0] = dt_shard(0);
    x = make_f(m.mesh, &m, DT_F64, 2, s2, pl);
    if (!x) { dtt_mesh_close(&m); return; }
    CHECK_ST(dt_halo_exchange(x), DT_ERR_ARG);
    CHECK_ERRMSG("dt_halo_exchange");
    CHECK_ST(dt_stencil_apply(x, stencil_fn, NULL, &y), DT_ERR_ARG);
    CHECK(y == NULL, "out touched");
    CHECK_ST(dt_tensor_set_halo(NULL, NULL), DT_ERR_ARG);
    h = hdesc(-1, 0, 0, 0, 0, 0, 0, 0); CHECK_ST(dt_tensor_set_halo(x, &h), DT_ERR_ARG);
    CHECK(strstr(dt_last_error(), "dt_tensor_set_halo") != NULL, "message: %s", dt_last_error());
    h = hdesc(1, 0, 1, 0, 0, 0, 0, 0); CHECK_ST(dt_tensor_set_halo(x, &h), DT_ERR_ARG); /* dim 2 of a 2-D */
    h = hdesc(7, 0, 0, P, 0, 0, 0, 0); CHECK_ST(dt_tensor_set_halo(x, &h), DT_ERR_ARG); /* wider than n */
    h = hdesc(1, 0, 0, 3, 0, 0, 0, 0); CHECK_ST(dt_tensor_set_halo(x, &h), DT_ERR_ARG);
    h = hdesc(1, 0, 0, 0, 0, 0, 2, 0); CHECK_ST(dt_tensor_set_halo(x, &h), DT_ERR_ARG);
    h = hsided(1, 2, 0, 0, 0, 0, 0, 0); h.width[1] = 1; /* both forms at once */
    CHECK_ST(dt_tensor_set_halo(x, &h), DT_ERR_ARG);
    CHECK(strstr(dt_last_error(), "not both") != NULL, "message: %s", dt_last_error());
    h = hsided(1, -1, 0, 0, 0, 0, 0, 0); CHECK_ST(dt_tensor_set_halo(x, &h), DT_ERR_ARG);
    CHECK(strstr(dt_last_error(), "width_hi[0] = -1") != NULL, "message: %s", dt_last_error());
    h = hsided(0, 0, 0, 0, 0, 0, 0, 0); h.width_lo[2] = 1; CHECK_ST(dt_tensor_set_halo(x, &h), DT_ERR_ARG);
    h = hsided(1, 7, 0, 0, P, 0, 0, 0); CHECK_ST(dt_tensor_set_halo(x, &h), DT_ERR_ARG); /* wider than n */
    CHECK(dt_tensor_ghosted_data(x, NULL) == NULL, "a failed set_halo left a halo");
    /* every rank passed the same bad desc: each names its own error; ranks that
       disagree: all fail (DT_ERR_MISMATCH), none keeps a halo */
    if (dtt_np > 1) {
        h = hdesc(dtt_rank == 1 ? 2 : 1, 0, 0, 0, 0, 0, 0, 0);
        CHECK_ST(dt_tensor_set_halo(x, &h), DT_ERR_MISMATCH);
        CHECK(dt_tensor_ghosted_data(x, NULL) == NULL, "a mismatched set_halo left a halo");
    }
    h = hdesc(1, 1, 0, 0, 0, 0, 0, 0);
    CHECK_OK(dt_tensor_set_halo(x, &h));
    before = dt_tensor_ghosted_data(x, NULL);
    CHECK_ST(dt_halo_exchange_end(x), DT_ERR_ARG);
    {
        dt_halo_desc hs = hsided(1, 2, 0, 1, 0, 0, 0, 0);
        int64_t w3[2] = {3, 0}, w2[2] = {2, 2}, w1[2] = {2, 1};
        CHECK_OK(dt_tensor_set_halo(x, &hs));
        CHECK_ST(dt_halo_exchange_layers(x, w3), DT_ERR_ARG); /* past both sides */
        CHECK(strstr(dt_last_error(), "width[0] = 3") && strstr(dt_last_error(), "halo's width 2"), "message: %s",
              dt_last_error());
        CHECK_ST(dt_halo_exchange_layers(x, w2), DT_ERR_ARG);
        CHECK_OK(dt_halo_exchange_layers(x, w1)); /* each side as deep as it is: the whole plan */
        CHECK_OK(dt_tensor_set_halo(x, &h));
        before = dt_tensor_ghosted_data(x, NULL);
    }
    CHECK_OK(dt_halo_exchange_begin(x));
    CHECK_ST(dt_halo_exchange_begin(x), DT_ERR_ARG);
    CHECK_ST(dt_tensor_set_halo(x, &h), DT_ERR_ARG);
    CHECK_OK(dt_halo_exchange_end(x));
    CHECK(dt_tensor_ghosted_data(x, NULL) == before, "halo replaced");
    /* destroyed between _begin and _end: the messages complete (no hang, no
       write after the free: ASan and valgrind runs), and the next exchange
       of x meets its peers' messages, not the abandoned ones */
    {
        dt_tensor *z = NULL;
        CHECK_OK(dt_tensor_zeros(m.mesh, dt_tensor_get_desc(x), &z));
        dt_status sz = z ? dt_tensor_set_halo(z, &h) : DT_ERR_NOMEM; /* (the same on every rank) */
        CHECK_OK(sz);
        if (sz == DT_OK) CHECK_OK(dt_halo_exchange_begin(z));
        dt_tensor_destroy(z);
        CHECK_OK(dt_halo_exchange(x));
    }
    CHECK_ST(dt_stencil_apply(x, NULL, NULL, &y), DT_ERR_ARG);
    y = x;
    CHECK_ST(dt_stencil_apply(x, stencil_fn, NULL, &y), DT_ERR_ARG);
    y = NULL;
    /* a Partial tensor has no values to exchange */
    pl[0] = dt_partial(DT_SUM);
    {
        dt_tensor_desc d = *dt_tensor_get_desc(x);
        d.placements[0] = pl[0];
        CHECK_OK(dt_tensor_zeros(m.mesh, &d, &part));
        CHECK_ST(dt_tensor_set_halo(part, &h), DT_ERR_PLACEMENT);
        CHECK(strstr(dt_last_error(), "partial sums") != NULL,
              "message: %s", dt_last_error());
        dt_tensor_destroy(part);
    }
    CHECK_OK(dt_tensor_set_halo(x, NULL));
    CHECK(dt_tensor_ghosted_data(x, NULL) == NULL, "halo not removed");
    /* convolution */
    {
        int64_t xs[3] = {1, 2, 8}, ws[3] = {3, 2, 3}, wbad[3] = {3, 4, 3}, xi[3] = {1, 2, 8};
        dt_placement rep[DT_MAX_MESH_DIMS];
        dt_tensor *cx, *cw, *cwb, *ci, *out = NULL;
        dt_conv_desc cd;
        memset(rep, 0, sizeof rep);
        memset(&cd, 0, sizeof cd);
        cx = conv_tensor(&m, DT_F64, 3, xs, rep, xval);
        cw = conv_tensor(&m, DT_F64, 3, ws, rep, wval);
        cwb = conv_tensor(&m, DT_F64, 3, wbad, rep, wval);
        ci = conv_tensor(&m, DT_I32, 3, xi, rep, xval);
        CHECK_ST(dt_conv1d(cx, cwb, NULL, &cd, &out), DT_ERR_SHAPE);
        CHECK_ERRMSG("dt_conv1d");
        CHECK_ST(dt_conv2d(cx, cw, NULL, &cd, &out), DT_ERR_SHAPE);
        CHECK_ST(dt_conv1d(ci, cw, NULL, &cd, &out), DT_ERR_DTYPE);
        CHECK_ST(dt_conv1d(NULL, cw, NULL, &cd, &out), DT_ERR_ARG);
        cd.padding[0] = -1;
        CHECK_ST(dt_conv1d(cx, cw, NULL, &cd, &out), DT_ERR_ARG);
        cd.padding[0] = 0;
        cd.dilation[0] = 5; /* span 11 > 8 */
        CHECK_ST(dt_conv1d(cx, cw, NULL, &cd, &out), DT_ERR_SHAPE);
        cd.dilation[0] = 0;
        cd.padding[1] = 1;
        CHECK_ST(dt_conv1d(cx, cw, NULL, &cd, &out), DT_ERR_ARG);
        CHECK(out == NULL, "out touched");
        cd.padding[1] = 0;
        CHECK_ST(dt_conv1d(cx, cw, cw, &cd, &out), DT_ERR_SHAPE); /* bias [3,2,3] */
        out = cx;
        CHECK_ST(dt_conv1d(cx, cw, NULL, &cd, &out), DT_ERR_ARG);
        out = NULL;
        dt_tensor_destroy(ci);
        dt_tensor_destroy(cwb);
        dt_tensor_destroy(cw);
        dt_tensor_destroy(cx);
    }
    dt_tensor_destroy(x);
    dtt_mesh_close(&m);
}

int main(int argc, char **argv)
{
    dt_comm *comm = NULL;
    dtt_init(&argc, &argv, "halo");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    if (comm) {
        halo_sweep(comm);
        stencil_sweep(comm);
        conv_sweep(comm);
        bad_input(comm);
        dt_comm_destroy(comm);
    }
    custom_backend();
    if (dtt_rank == 0 && getenv("DT_TEST_VERBOSE")) fprintf(stderr, "test_halo: %ld halo cases\n", halo_cases);
    return dtt_finish();
}
