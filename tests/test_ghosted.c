/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
   env:   DTENSOR_HALO_TYPES=1 | DTENSOR_HALO_TYPES=0
*/
/* test_ghosted.c -- halos in the tensor's own storage.

   A user's ghosted array (interior + ghost room on both sides of every
   dim) wrapped with dt_tensor_from_local(DT_BORROW, desc->local_ghost)
   exchanges its ghost cells in place. Every array sits inside a larger
   buffer whose guard zones hold a sentinel, and every ghost cell starts
   poisoned: after an exchange each cell is checked -- interior = the
   closed form f(global index) (or what was written between _begin and
   _end), ghost cells inside the halo = f at the (wrapped) neighbour index,
   the CONSTANT fill, or still poisoned past a NONE edge; ghost room past
   the halo and both guards unchanged. Layouts: torch.chunk, balanced and
   explicit-sizes shards (empty and narrow shards included) on 1-D and 2-D
   meshes, CONSTANT / PERIODIC / NONE boundaries, corners on and off, ghost
   room equal to and wider than the halo, whole and split-phase exchanges.
   dt_stencil_apply on a ghosted x equals it on a contiguous copy with the
   copying halo; gather and redistribute of a ghosted tensor read the
   interior; bad input is refused on every rank with nothing written; a
   random fill, a .npy save and load, ops reading a ghosted array and an
   op writing into one touch the interior only (values = the contiguous
   twin's, ghost room and guards byte-for-byte unchanged). */
#define _POSIX_C_SOURCE 200112L /* getpid */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"
#include <unistd.h>

static double fval(int nd, const int64_t *g)
{
    double v = 0;
    int d;
    for (d = 0; d < nd; d++) v = v * 100 + (double)(g[d] + 1);
    return v;
}

static const double GUARD = -9.0, POISON = -5.0;
enum { C = DT_BOUNDARY_CONSTANT, P = DT_BOUNDARY_PERIODIC, N = DT_BOUNDARY_NONE };
#define NGUARD 64

/* one rank's ghosted array inside a guarded buffer */
typedef struct garr {
    int nd;
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], room[DT_MAX_DIMS], rhi[DT_MAX_DIMS], gs[DT_MAX_DIMS], gn;
    int sided;       /* wrapped with local_ghost_lo / _hi: room below, rhi above */
    double *buf;     /* NGUARD guards, gn array cells, NGUARD guards */
    double *arr;     /* buf + NGUARD */
    dt_tensor *t;
} garr;

static dt_tensor_desc mkdesc(int nd, const int64_t *shape, const dtt_mesh *m, const dt_placement *pl)
{
    return dtt_desc(DT_F64, nd, shape, m->nd, pl);
}

/* the local box the library gives this rank (any rule), from a throwaway tensor */
static void local_box(const dtt_mesh *m, const dt_tensor_desc *d, int64_t *ls, int64_t *lo)
{
    dt_tensor *e = NULL;
    CHECK_OK(dt_tensor_empty(m->mesh, d, &e));
    dt_tensor_local_shape(e, ls);
    dt_tensor_local_offset(e, lo);
    dt_tensor_destroy(e);
}

/* the global index of array cell i; *inside: in the interior */
static void cell_index(const garr *a, int64_t i, int64_t *u, int *outside)
{
    int k;
    *outside = 0;
    for (k = a->nd - 1; k >= 0; k--) { u[k] = a->lo[k] - a->room[k] + i % a->gs[k]; i /= a->gs[k]; }
    for (k = 0; k < a->nd; k++) *outside += u[k] < a->lo[k] || u[k] >= a->lo[k] + a->ls[k];
}

/* room: the ghost room on both sides (local_ghost), or below with rhi above
   (rhi not NULL: local_ghost_lo / _hi) */
static int garr_make_sided(garr *a, const dtt_mesh *m, int nd, const int64_t *shape, const dt_placement *pl,
                           const int64_t *room, const int64_t *rhi)
{
    dt_tensor_desc d = mkdesc(nd, shape, m, pl);
    int64_t i, u[DT_MAX_DIMS];
    int k, out;
    memset(a, 0, sizeof *a);
    a->nd = nd;
    local_box(m, &d, a->ls, a->lo);
    a->gn = 1;
    for (k = 0; k < nd; k++) {
        a->room[k] = room[k];
        a->rhi[k] = rhi ? rhi[k] : room[k];
        a->gs[k] = a->ls[k] + a->room[k] + a->rhi[k];
        a->gn *= a->gs[k];
    }
    a->buf = (double *)dtt_malloc((size_t)(a->gn + 2 * NGUARD) * sizeof(double));
    a->arr = a->buf + NGUARD;
    for (i = 0; i < a->gn + 2 * NGUARD; i++) a->buf[i] = GUARD;
    for (i = 0; i < a->gn; i++) {
        cell_index(a, i, u, &out);
        a->arr[i] = out ? POISON : fval(nd, u);
    }
    d.local_shape = a->ls;
    a->sided = rhi != NULL;
    if (rhi) {
        d.local_ghost_lo = a->room;
        d.local_ghost_hi = a->rhi;
    } else {
        d.local_ghost = a->room;
    }
    d.local_alloc = a->arr; /* the ghosted array's start and size: the wrap checks it stays inside */
    d.local_alloc_bytes = (int64_t)((size_t)a->gn * sizeof(double));
    CHECK_OK(dt_tensor_from_local(m->mesh, &d, a->arr, DT_BORROW, &a->t));
    return a->t != NULL;
}

static int garr_make(garr *a, const dtt_mesh *m, int nd, const int64_t *shape, const dt_placement *pl,
                     const int64_t *room)
{
    return garr_make_sided(a, m, nd, shape, pl, room, NULL);
}

static void garr_free(garr *a)
{
    dt_tensor_destroy(a->t);
    free(a->buf);
    a->t = NULL;
    a->buf = NULL;
}

/* every cell of the array and its guards (interior_v: the interior's value, NAN: f) */
static void garr_check(const garr *a, const int64_t *shape, const dt_halo_desc *hd, double interior_v)
{
    int64_t i, u[DT_MAX_DIMS], w[DT_MAX_DIMS], wl[DT_MAX_DIMS], wh[DT_MAX_DIMS];
    int k, bad = 0, out;
    dtt_side_widths(hd, a->nd, wl, wh);
    for (i = 0; i < NGUARD; i++)
        if ((a->buf[i] != GUARD || a->buf[NGUARD + a->gn + i] != GUARD) && bad++ < 3)
            dtt_fail(__FILE__, __LINE__, "guard", "guard cell %lld written", (long long)i);
    for (i = 0; i < a->gn; i++) {
        int inhalo = 1, cfill = 0, none = 0;
        double want, got = a->arr[i];
        cell_index(a, i, u, &out);
        for (k = 0; k < a->nd; k++) {
            w[k] = u[k];
            if (u[k] < a->lo[k] - wl[k] || u[k] >= a->lo[k] + a->ls[k] + wh[k]) inhalo = 0;
            if (u[k] < 0 || u[k] >= shape[k]) {
                if (hd->boundary[k] == P) w[k] = (u[k] + shape[k]) % shape[k];
                else if (hd->boundary[k] == C) cfill = 1;
                else none = 1;
            }
        }
        if (!out) want = interior_v == interior_v ? interior_v : fval(a->nd, u);
        else if (!inhalo) want = POISON;               /* ghost room past the halo: the caller's */
        else if (cfill) want = hd->fill;
        else if (none) want = POISON;
        else want = fval(a->nd, w);
        if (out > 1 && !hd->corners) want = POISON; /* a star's corners are not the halo's: the caller's values */
        if (got != want && bad++ < 5) {
            char c[96];
            dtt_shape_str(a->nd, u, c, sizeof c);
            dtt_fail(__FILE__, __LINE__, "cell", "cell %s (%s): got %g want %g", c,
                     !out ? "interior" : inhalo ? "halo" : "room", got, want);
        }
    }
}

static dt_halo_desc hdesc(int64_t w0, int64_t w1, int b0, int b1, int corners, double fill)
{
    dt_halo_desc h;
    memset(&h, 0, sizeof h);
    h.width[0] = w0; h.width[1] = w1;
    h.boundary[0] = (uint8_t)b0; h.boundary[1] = (uint8_t)b1;
    h.corners = corners;
    h.fill = fill;
    return h;
}

static long ncases = 0;

/* exchange twice (the second over the first's ghosts), whole or split */
static void gcase_sided(const dtt_mesh *m, const int64_t *shape, const dt_placement *pl, const int64_t *room,
                        const int64_t *rhi, const dt_halo_desc *hd, int split)
{
    garr a;
    dt_halo_desc none;
    int64_t i, u[DT_MAX_DIMS], gsh[DT_MAX_DIMS];
    int out, k, rep;
    memset(&none, 0, sizeof none);
    char s[96], p[96];
    dtt_shape_str(2, shape, s, sizeof s);
    dtt_pl_str(pl, m->nd, p, sizeof p);
    dtt_ctx("mesh %s, %s %s, room %lld/%lld (above %lld/%lld), width %lld/%lld (lo %lld/%lld, hi %lld/%lld), "
            "bnd %d%d, corners %d, %s", m->name, s, p, (long long)room[0], (long long)room[1],
            (long long)(rhi ? rhi : room)[0], (long long)(rhi ? rhi : room)[1], (long long)hd->width[0],
            (long long)hd->width[1], (long long)hd->width_lo[0], (long long)hd->width_lo[1],
            (long long)hd->width_hi[0], (long long)hd->width_hi[1], hd->boundary[0], hd->boundary[1], hd->corners,
            split ? "split" : "whole");
    if (!garr_make_sided(&a, m, 2, shape, pl, room, rhi)) { free(a.buf); return; }
    CHECK_OK(dt_tensor_set_halo(a.t, hd));
    CHECK(dt_tensor_ghosted_data(a.t, gsh) == (void *)a.arr, "ghosted data is not the array");
    for (k = 0; k < 2; k++) CHECK(gsh[k] == a.gs[k], "ghosted shape[%d] = %lld", k, (long long)gsh[k]);
    garr_check(&a, shape, &none, NAN); /* set_halo wrote nothing (widths 0: every ghost cell still poisoned) */
    for (rep = 0; rep < 2; rep++) {
        if (split) {
            CHECK_OK(dt_halo_exchange_begin(a.t));
            for (i = 0; i < a.gn; i++) { /* the interior may change after _begin */
                cell_index(&a, i, u, &out);
                if (!out) a.arr[i] = -1.0;
            }
            CHECK_OK(dt_halo_exchange_end(a.t));
            garr_check(&a, shape, hd, -1.0);
            for (i = 0; i < a.gn; i++) { /* back to f for the next round */
                cell_index(&a, i, u, &out);
                if (!out) a.arr[i] = fval(2, u);
            }
        } else {
            CHECK_OK(dt_halo_exchange(a.t));
            garr_check(&a, shape, hd, NAN);
        }
    }
    ncases++;
    garr_free(&a);
}

static void gcase(const dtt_mesh *m, const int64_t *shape, const dt_placement *pl, const int64_t *room,
                  const dt_halo_desc *hd, int split)
{
    gcase_sided(m, shape, pl, room, NULL, hd, split);
}

/* per-side widths of a 2-D halo */
static dt_halo_desc hsided(int64_t lo0, int64_t hi0, int64_t lo1, int64_t hi1, int b0, int b1, int corners,
                           double fill)
{
    dt_halo_desc h = hdesc(0, 0, b0, b1, corners, fill);
    h.width_lo[0] = lo0; h.width_hi[0] = hi0;
    h.width_lo[1] = lo1; h.width_hi[1] = hi1;
    return h;
}

/* a staggered field's array: ghost room 2 below and 3 above along dim 0
   (a vertex-centred dim), 1 and 2 along dim 1; halos of that room, of
   less, of both sides the same in it, and over a symmetric room */
static void cases_sided(const dtt_mesh *m, const dt_placement *pl)
{
    int64_t s[2] = {13, 7}, sn[2] = {3, 5}, lo[2] = {2, 1}, hi[2] = {3, 2}, r22[2] = {2, 2}, z[2] = {0, 0};
    dt_halo_desc h;
    h = hsided(2, 3, 1, 2, P, C, 1, 0.5); gcase_sided(m, s, pl, lo, hi, &h, 0);
    h = hsided(2, 3, 1, 2, C, P, 0, 0.0); gcase_sided(m, s, pl, lo, hi, &h, 1);
    h = hsided(1, 3, 0, 2, P, N, 1, 0.0); gcase_sided(m, s, pl, lo, hi, &h, 0); /* less than the room below */
    h = hdesc(2, 1, P, C, 1, 2.0); gcase_sided(m, s, pl, lo, hi, &h, 1);        /* symmetric halo, sided room */
    h = hsided(0, 2, 2, 1, P, P, 1, 0.0); gcase(m, s, pl, r22, &h, 0);           /* sided halo, symmetric room */
    h = hsided(2, 3, 0, 2, P, C, 1, 0.0); gcase_sided(m, sn, pl, lo, hi, &h, 1); /* empty shards */
    h = hsided(0, 3, 0, 1, C, C, 1, 1.0); gcase_sided(m, s, pl, z, hi, &h, 0);   /* room above only */
}

static void cases_1d(const dtt_mesh *m)
{
    int64_t s[2] = {13, 7}, sn[2] = {3, 5}, r11[2] = {1, 1}, r22[2] = {2, 2}, r31[2] = {3, 1}, sizes[64];
    dt_placement pl[DT_MAX_MESH_DIMS];
    dt_halo_desc h;
    int c, k = m->shape[0];
    memset(pl, 0, sizeof pl);
    pl[0] = dt_shard(0);
    h = hdesc(1, 1, P, C, 1, 0.0); gcase(m, s, pl, r11, &h, 0);
    h = hdesc(1, 1, C, P, 0, 2.5); gcase(m, s, pl, r11, &h, 1);
    h = hdesc(1, 1, N, C, 1, -3.0); gcase(m, s, pl, r22, &h, 0); /* room wider than the halo */
    h = hdesc(2, 1, P, N, 0, 0.0); gcase(m, s, pl, r22, &h, 1);
    h = hdesc(3, 0, P, C, 1, 0.0); gcase(m, s, pl, r31, &h, 0);  /* wider than 2-row shards */
    h = hdesc(2, 2, P, P, 1, 0.0); gcase(m, sn, pl, r22, &h, 0); /* empty shards */
    pl[0] = dt_shard_balanced(0);
    h = hdesc(1, 1, P, C, 1, 1.5); gcase(m, s, pl, r11, &h, 0);
    h = hdesc(2, 1, C, P, 0, 0.0); gcase(m, s, pl, r22, &h, 1);
    for (c = 0; c < k; c++) sizes[c] = c == 0 ? 13 - (k - 1) * (13 / (2 * k)) : 13 / (2 * k);
    pl[0] = dt_shard_sizes(0, sizes);
    h = hdesc(1, 1, P, C, 1, 0.0); gcase(m, s, pl, r11, &h, 0);
    h = hdesc(2, 1, P, N, 0, 0.0); gcase(m, s, pl, r22, &h, 1);
    pl[0] = dt_shard(1);
    h = hdesc(1, 2, C, P, 1, 4.0); gcase(m, s, pl, r22, &h, 1);
    pl[0] = dt_replicate();
    h = hdesc(1, 1, P, C, 1, 0.0); gcase(m, s, pl, r11, &h, 0);
}

static void cases_2d(const dtt_mesh *m)
{
    int64_t s[2] = {13, 7}, r11[2] = {1, 1}, r21[2] = {2, 1}, sizes[64];
    dt_placement pl[DT_MAX_MESH_DIMS];
    dt_halo_desc h;
    int c, k = m->shape[1];
    memset(pl, 0, sizeof pl);
    pl[0] = dt_shard(0); pl[1] = dt_shard(1);
    h = hdesc(1, 1, P, P, 1, 0.0); gcase(m, s, pl, r11, &h, 0);
    h = hdesc(1, 1, C, P, 0, 4.0); gcase(m, s, pl, r21, &h, 1);
    pl[0] = dt_shard_balanced(0); pl[1] = dt_shard_balanced(1);
    h = hdesc(2, 1, P, C, 1, 0.0); gcase(m, s, pl, r21, &h, 1);
    for (c = 0; c < k; c++) sizes[c] = c == k - 1 ? 7 - (k - 1) * (7 / (2 * k)) : 7 / (2 * k);
    pl[0] = dt_shard(0); pl[1] = dt_shard_sizes(1, sizes);
    h = hdesc(1, 1, N, P, 1, 0.0); gcase(m, s, pl, r11, &h, 0);
    pl[0] = dt_replicate(); pl[1] = dt_shard(1); /* replica groups */
    h = hdesc(1, 1, C, P, 1, 0.0); gcase(m, s, pl, r21, &h, 1);
}

/* ---------------------------------------------------------------- stencil, gather */

static void stencil5(const dt_stencil_block *b, void *user)
{
    const double *in = (const double *)b->in;
    double *out = (double *)b->out;
    int64_t i, j, r = b->in_stride[0], q = b->in_stride[1];
    (void)user;
    for (i = b->lo[0]; i < b->lo[0] + b->ext[0]; i++)
        for (j = b->lo[1]; j < b->lo[1] + b->ext[1]; j++) {
            const double *c = in + (i + b->width[0]) * r + (j + b->width[1]) * q;
            out[i * b->out_stride[0] + j * b->out_stride[1]] = 4 * c[0] - c[-r] - c[r] - c[-q] - c[q];
        }
}

static void stencil_and_gather(const dtt_mesh *m, const dt_placement *pl, const int64_t *room, const int64_t *rhi)
{
    int64_t s[2] = {13, 7}, i, n = 13 * 7;
    dt_halo_desc h = hdesc(1, 1, P, C, 0, 0.0);
    dt_tensor_desc d = mkdesc(2, s, m, pl);
    dt_tensor *copy = NULL, *y1 = NULL, *y2 = NULL, *rep = NULL;
    dt_placement r[DT_MAX_MESH_DIMS];
    double *full = (double *)dtt_malloc((size_t)n * sizeof(double)), *intr;
    garr a;
    char p[96];
    dtt_pl_str(pl, m->nd, p, sizeof p);
    dtt_ctx("stencil/gather, mesh %s, %s, room %lld/%lld (above %lld/%lld)", m->name, p, (long long)room[0],
            (long long)room[1], (long long)(rhi ? rhi : room)[0], (long long)(rhi ? rhi : room)[1]);
    if (!garr_make_sided(&a, m, 2, s, pl, room, rhi)) { free(a.buf); free(full); return; }
    /* the contiguous twin, with the copying halo */
    intr = (double *)dtt_malloc((size_t)(a.ls[0] * a.ls[1] + 1) * sizeof(double));
    for (i = 0; i < a.ls[0] * a.ls[1]; i++) {
        int64_t g[2] = {a.lo[0] + i / a.ls[1], a.lo[1] + i % a.ls[1]};
        intr[i] = fval(2, g);
    }
    d.local_shape = a.ls;
    CHECK_OK(dt_tensor_from_local(m->mesh, &d, intr, DT_COPY, &copy));
    CHECK_OK(dt_tensor_set_halo(copy, &h));
    CHECK_OK(dt_tensor_set_halo(a.t, &h));
    CHECK_OK(dt_stencil_apply(copy, stencil5, NULL, &y1));
    CHECK_OK(dt_stencil_apply(a.t, stencil5, NULL, &y2));
    CHECK_OK(dt_stencil_apply(a.t, stencil5, NULL, &y2)); /* *out reused */
    if (y1 && y2)
        CHECK(memcmp(dt_tensor_data(y1), dt_tensor_data(y2), dt_tensor_local_numel(y1) * sizeof(double)) == 0,
              "stencil on the ghosted array differs from the copying halo's");
    /* gather and redistribute read the interior through a staged copy */
    memset(full, 0, (size_t)n * sizeof(double));
    CHECK_OK(dt_tensor_gather(a.t, full));
    for (i = 0; i < n; i++) {
        int64_t g[2] = {i / 7, i % 7};
        if (full[i] != fval(2, g)) { CHECK(0, "gather: element %lld = %g want %g", (long long)i, full[i], fval(2, g)); break; }
    }
    memset(r, 0, sizeof r);
    CHECK_OK(dt_tensor_redistribute(a.t, r, &rep));
    if (rep) CHECK(memcmp(dt_tensor_data(rep), full, (size_t)n * sizeof(double)) == 0, "redistribute to [R] differs");
    {
        int64_t st[2] = {0, 0};
        CHECK(dt_tensor_local_strides(a.t, st) == 2 && st[1] == 1 && st[0] == a.gs[1], "strides %lld %lld",
              (long long)st[0], (long long)st[1]);
        CHECK(dt_tensor_data(a.t) == (void *)(a.arr + room[0] * a.gs[1] + room[1]), "data is not interior element 0");
    }
    dt_tensor_destroy(rep);
    dt_tensor_destroy(y1);
    dt_tensor_destroy(y2);
    dt_tensor_destroy(copy);
    garr_free(&a);
    free(intr);
    free(full);
}

static int files_equal(const char *p1, const char *p2)
{
    FILE *f = fopen(p1, "rb"), *g = fopen(p2, "rb");
    int a = 0, b = 0, same = f && g;
    while (same && (a = getc(f)) != EOF) same = (b = getc(g)) == a;
    if (same) same = getc(g) == EOF;
    if (f) fclose(f);
    if (g) fclose(g);
    return same;
}

/* the guards and the ghost room as in `before`, the interior = want (row-major) */
static void interior_only(const garr *a, const double *before, const double *want, const char *what)
{
    int64_t i, u[DT_MAX_DIMS], j;
    int k, out, bad = 0;
    for (i = 0; i < a->gn + 2 * NGUARD; i++) {
        if (i >= NGUARD && i < NGUARD + a->gn) {
            cell_index(a, i - NGUARD, u, &out);
            if (!out) {
                for (j = 0, k = 0; k < a->nd; k++) j = j * a->ls[k] + (u[k] - a->lo[k]);
                if (memcmp(&a->buf[i], &want[j], sizeof(double)) && bad++ < 3)
                    dtt_fail(__FILE__, __LINE__, what, "interior cell %lld: %g, want %g", (long long)i, a->buf[i], want[j]);
                continue;
            }
        }
        if (memcmp(&a->buf[i], &before[i], sizeof(double)) && bad++ < 3)
            dtt_fail(__FILE__, __LINE__, what, "ghost/guard cell %lld written: %g (was %g)", (long long)i, a->buf[i],
                     before[i]);
    }
    ncases++;
}

/* ---------------------------------------------------------------- bad input */

static void bad_input(const dtt_mesh *m)
{
    int64_t s[2] = {13, 7}, r1[2] = {1, 1}, r2[2] = {2, 2}, neg[2] = {1, -1}, huge[2] = {INT64_MAX / 2, 1};
    dt_placement pl[DT_MAX_MESH_DIMS];
    dt_tensor_desc d;
    dt_tensor *t = NULL, *y = NULL;
    dt_halo_desc h2 = hdesc(2, 1, P, C, 0, 0.0);
    garr a;
    double *before;
    size_t bytes;
    memset(pl, 0, sizeof pl);
    pl[0] = dt_shard(0);
    dtt_ctx("bad input, mesh %s", m->name);
    /* a rank with less ghost room than the halo: every rank fails, nothing written */
    if (!garr_make(&a, m, 2, s, pl, dtt_rank == 0 ? r1 : r2)) { free(a.buf); return; }
    bytes = (size_t)(a.gn + 2 * NGUARD) * sizeof(double);
    before = (double *)dtt_malloc(bytes);
    memcpy(before, a.buf, bytes);
    {
        dt_status st = dt_tensor_set_halo(a.t, &h2);
        CHECK(st != DT_OK, "set_halo wider than rank 0's room succeeded");
        if (dtt_rank == 0) {
            CHECK(st == DT_ERR_ARG, "rank 0: %s", dt_status_string(st));
            CHECK(strstr(dt_last_error(), "dt_tensor_set_halo") && strstr(dt_last_error(), "width[0] = 2") &&
                  strstr(dt_last_error(), "ghost room 1"), "message: %s", dt_last_error());
        }
    }
    CHECK(dt_tensor_ghosted_data(a.t, NULL) == NULL, "a halo was set");
    {
        dt_halo_desc hs = hdesc(0, 0, P, C, 0, 0.0);
        hs.width_lo[0] = 1;
        hs.width_hi[0] = 2;
        hs.width_hi[1] = 1;
        dt_status st = dt_tensor_set_halo(a.t, &hs);
        CHECK(st != DT_OK, "a halo 2 above rank 0's room of 1 succeeded");
        if (dtt_rank == 0)
            CHECK(strstr(dt_last_error(), "width_hi[0] = 2") && strstr(dt_last_error(), "ghost room 1 above"),
                  "message: %s", dt_last_error());
    }
    CHECK(dt_tensor_ghosted_data(a.t, NULL) == NULL, "a halo was set");
    CHECK_ST(dt_halo_exchange(a.t), DT_ERR_ARG);
    CHECK(memcmp(before, a.buf, bytes) == 0, "a refused call wrote the array");
    /* dt_tensor_from_local refusals */
    d = mkdesc(2, s, m, pl);
    d.local_shape = a.ls;
    d.local_ghost = r1;
    CHECK_ST(dt_tensor_from_local(m->mesh, &d, a.arr, DT_COPY, &t), DT_ERR_ARG);
    CHECK(strstr(dt_last_error(), "dt_tensor_from_local") && strstr(dt_last_error(), "DT_COPY"), "message: %s",
          dt_last_error());
    d.local_ghost = neg;
    CHECK_ST(dt_tensor_from_local(m->mesh, &d, a.arr, DT_BORROW, &t), DT_ERR_ARG);
    CHECK(strstr(dt_last_error(), "local_ghost[1] = -1"), "message: %s", dt_last_error());
    d.local_ghost = huge;
    CHECK_ST(dt_tensor_from_local(m->mesh, &d, a.arr, DT_BORROW, &t), DT_ERR_ARG);
    CHECK(strstr(dt_last_error(), "overflows"), "message: %s", dt_last_error());
    d.local_ghost = dtt_rank == dtt_np - 1 ? neg : r1; /* one bad rank fails every rank */
    {
        dt_status st = dt_tensor_from_local(m->mesh, &d, a.arr, DT_BORROW, &t);
        CHECK(st != DT_OK, "one rank's negative room accepted");
    }
    /* per side: not with local_ghost, no negative side, no wider than the array */
    d.local_ghost = r1;
    d.local_ghost_hi = r1;
    CHECK_ST(dt_tensor_from_local(m->mesh, &d, a.arr, DT_BORROW, &t), DT_ERR_ARG);
    CHECK(strstr(dt_last_error(), "local_ghost_hi") && strstr(dt_last_error(), "not both"), "message: %s",
          dt_last_error());
    d.local_ghost = NULL;
    d.local_ghost_lo = r1;
    d.local_ghost_hi = neg;
    CHECK_ST(dt_tensor_from_local(m->mesh, &d, a.arr, DT_BORROW, &t), DT_ERR_ARG);
    CHECK(strstr(dt_last_error(), "local_ghost_hi[1] = -1"), "message: %s", dt_last_error());
    d.local_ghost_hi = r2; /* the array has room 1 or 2: 1 below + 2 above is past rank 0's array's end */
    d.local_alloc = a.arr;
    d.local_alloc_bytes = (int64_t)((size_t)a.gn * sizeof(double));
    {
        dt_status st = dt_tensor_from_local(m->mesh, &d, a.arr, DT_BORROW, &t);
        if (dtt_rank == 0) {
            CHECK(st == DT_ERR_ARG, "rank 0: %s", dt_status_string(st));
            CHECK(strstr(dt_last_error(), "local_shape + local_ghost_lo + local_ghost_hi") &&
                  strstr(dt_last_error(), "past the allocation"), "message: %s", dt_last_error());
        }
        CHECK(st != DT_OK, "an array too small for its room accepted");
    }
    d.local_ghost_lo = d.local_ghost_hi = NULL;
    d.local_ghost = r1;
    d.device = DT_CUDA;
    CHECK(dt_tensor_from_local(m->mesh, &d, a.arr, DT_BORROW, &t) != DT_OK, "device ghosted array accepted");
    CHECK_ERRMSG("dt_tensor_from_local");
    CHECK(t == NULL, "a tensor was made");
    CHECK(memcmp(before, a.buf, bytes) == 0, "a refused call wrote the array");
    /* a random fill writes the interior only, the values a contiguous tensor gets */
    {
        dt_tensor *c = NULL;
        d = mkdesc(2, s, m, pl);
        CHECK_OK(dt_tensor_empty(m->mesh, &d, &c));
        CHECK_OK(dt_rng_set_state(m->mesh, 7, 40));
        CHECK_OK(dt_uniform_(a.t, -1.0, 2.0));
        CHECK_OK(dt_rng_set_state(m->mesh, 7, 40));
        CHECK_OK(dt_uniform_(c, -1.0, 2.0));
        if (c) interior_only(&a, before, (const double *)dt_tensor_data(c), "dt_uniform_");
        /* .npy: the ghosted tensor's file is the contiguous one's, byte for byte; a load
           into it writes the interior only */
        {
            char p1[96], p2[96];
            int pid = (int)getpid();
            dt_tensor *o = a.t;
            MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
            snprintf(p1, sizeof p1, "/tmp/dt_test_ghosted.%d.g.npy", pid);
            snprintf(p2, sizeof p2, "/tmp/dt_test_ghosted.%d.c.npy", pid);
            CHECK_OK(dt_tensor_save_npy(a.t, p1));
            CHECK_OK(dt_tensor_save_npy(c, p2));
            if (dtt_rank == 0) CHECK(files_equal(p1, p2), "%s and %s differ", p1, p2);
            memcpy(before, a.buf, bytes);
            CHECK_OK(dt_normal_(c, 3.0, 1.0));
            CHECK_OK(dt_tensor_save_npy(c, p2));
            CHECK_OK(dt_tensor_load_npy(m->mesh, p2, pl, &o));
            CHECK(o == a.t, "load replaced *out");
            if (c) interior_only(&a, before, (const double *)dt_tensor_data(c), "dt_tensor_load_npy");
            MPI_Barrier(MPI_COMM_WORLD);
            /* ops read the interior (in place or through a contiguous copy) and write a
               ghosted *out's interior only */
            if (c) {
                dt_tensor *s1 = NULL, *s2 = NULL, *w = a.t;
                size_t k, n = dt_tensor_local_numel(c);
                const double *cv = (const double *)dt_tensor_data(c);
                double *want = (double *)dtt_malloc(n * sizeof(double) + 1);
                CHECK_OK(dt_add(a.t, a.t, &y));
                for (k = 0; y && k < n; k++)
                    if (((const double *)dt_tensor_data(y))[k] != 2 * cv[k]) {
                        CHECK(0, "dt_add on a ghosted array: element %zu", k);
                        break;
                    }
                CHECK_OK(dt_sum(a.t, 0, NULL, 0, &s1));
                CHECK_OK(dt_sum(c, 0, NULL, 0, &s2));
                if (s1 && s2) CHECK(*(double *)dt_tensor_data(s1) == *(double *)dt_tensor_data(s2), "dt_sum differs");
                for (k = 0; k < n; k++) want[k] = -cv[k];
                CHECK_OK(dt_neg(c, &w));
                CHECK(w == a.t, "dt_neg replaced *out");
                interior_only(&a, before, want, "dt_neg into a ghosted *out");
                dt_tensor_destroy(s1);
                dt_tensor_destroy(s2);
                free(want);
            }
            if (dtt_rank == 0) { remove(p1); remove(p2); }
        }
        dt_tensor_destroy(c);
    }
    dt_tensor_destroy(y);
    free(before);
    garr_free(&a);
}

static int all_failed(dt_status st)
{
    int bad = st != DT_OK, all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* An agreed failure: on the ranks that did not fail themselves, the
   message carries the lowest failing rank's own message whole (its remedy
   is at its end), not cut at a fixed length */
static void expect_whole(int failed_here, const char *what)
{
    char msg[512];
    int me = failed_here ? dtt_rank : dtt_np, first = dtt_np;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == dtt_np) { CHECK(0, "%s: no rank failed", what); return; }
    memset(msg, 0, sizeof msg);
    if (dtt_rank == first) snprintf(msg, sizeof msg, "%s", dt_last_error());
    MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, MPI_COMM_WORLD);
    CHECK(strlen(msg) > 200, "%s: rank %d's message is %d characters, not one past the old cut: %s", what, first,
          (int)strlen(msg), msg);
    if (!failed_here)
        CHECK(strstr(dt_last_error(), msg) != NULL, "%s: rank %d's message (%d characters) did not arrive whole: %s",
              what, first, (int)strlen(msg), dt_last_error());
}

/* Wrapping mistakes (a), (b) and (c), refused by default (no DT_VERIFY) on
   every rank, the buffer byte-for-byte unchanged: (a) a PETSc-style
   balanced split's ghosted array wrapped with dt_shard (torch.chunk): with
   no local_shape (required with ghost room), and with its true local_shape
   where chunk's parts differ (3 ranks and more: the message names
   dt_shard_balanced); (b) the interior pointer &A(1,1) passed with
   local_ghost: the message says local must be the array's start (and
   not when local is the start, of an array too small for its
   local_ghost); and no local_alloc; (c) local_alloc_bytes given as the count of elements: the
   message says so (and a size a byte short does not). Then the right
   wrap, with its values. */
static void wrap_mistakes(const dtt_mesh *m)
{
    const int64_t n = 3 * (int64_t)dtt_np + 1, cols = 5, q = n / dtt_np, e = n % dtt_np;
    int64_t ls[2], room[2] = {1, 1}, wide[2] = {2, 2}, gs1 = cols + 2, gn, i, lo, shape[2], c, cl;
    double *buf, *arr, *saved, *full;
    size_t bytes;
    dt_placement pl[DT_MAX_MESH_DIMS];
    dt_tensor_desc d;
    dt_tensor *t = NULL;
    dt_status st;
    ls[0] = q + (dtt_rank < e);
    ls[1] = cols;
    lo = dtt_rank * q + (dtt_rank < e ? dtt_rank : e);
    shape[0] = n;
    shape[1] = cols;
    gn = (ls[0] + 2) * gs1;
    bytes = (size_t)(gn + 2 * NGUARD) * sizeof(double);
    buf = (double *)dtt_malloc(bytes);
    saved = (double *)dtt_malloc(bytes);
    full = (double *)dtt_malloc((size_t)(n * cols) * sizeof(double));
    arr = buf + NGUARD;
    for (i = 0; i < gn + 2 * NGUARD; i++) buf[i] = GUARD;
    for (i = 0; i < gn; i++) arr[i] = POISON;
    for (i = 0; i < ls[0]; i++)
        for (c = 0; c < cols; c++) {
            int64_t g[2] = {lo + i, c};
            arr[(i + 1) * gs1 + c + 1] = fval(2, g);
        }
    memcpy(saved, buf, bytes);
    memset(pl, 0, sizeof pl);
    pl[0] = dt_shard(0);
    d = mkdesc(2, shape, m, pl);
    d.local_ghost = room;
    d.local_alloc = arr;
    d.local_alloc_bytes = (int64_t)((size_t)gn * sizeof(double));
    dtt_ctx("mistake (a): a balanced ghosted array wrapped with dt_shard and no local_shape, mesh %s", m->name);
    st = dt_tensor_from_local(m->mesh, &d, arr, DT_BORROW, &t);
    CHECK(all_failed(st) && st == DT_ERR_ARG, "status %s: %s", dt_status_string(st), dt_last_error());
    CHECK(strstr(dt_last_error(), "dt_tensor_from_local") && strstr(dt_last_error(), "local_shape") &&
          strstr(dt_last_error(), "dt_shard_balanced"), "message: %s", dt_last_error());
    CHECK(t == NULL && memcmp(saved, buf, bytes) == 0, "a tensor was made or the buffer changed");
    dtt_ctx("mistake (a): a balanced ghosted array wrapped with dt_shard and its local_shape, mesh %s", m->name);
    d.local_shape = ls;
    cl = (n + dtt_np - 1) / dtt_np; /* torch.chunk's part */
    cl = lo >= n ? 0 : (dtt_rank * cl >= n ? 0 : (n - dtt_rank * cl < cl ? n - dtt_rank * cl : cl));
    st = dt_tensor_from_local(m->mesh, &d, arr, DT_BORROW, &t);
    if (dtt_np >= 3) { /* the parts differ: 10 over 3 is 4,4,2 against 4,3,3 */
        CHECK(all_failed(st), "some rank accepted: %s", dt_status_string(st));
        CHECK(strstr(dt_last_error(), "dt_tensor_from_local") && strstr(dt_last_error(), "dt_shard_balanced"),
              "message: %s", dt_last_error());
        expect_whole(cl != ls[0], "a balanced split wrapped with dt_shard");
        CHECK(t == NULL, "a tensor was made");
    } else {
        CHECK_OK(st); /* 1 and 2 ranks: chunk and balanced agree, the wrap is right */
    }
    dt_tensor_destroy(t);
    t = NULL;
    CHECK(memcmp(saved, buf, bytes) == 0, "the buffer changed");
    pl[0] = dt_shard_balanced(0);
    d.placements[0] = pl[0];
    dtt_ctx("mistake (b): the interior pointer &A(1,1) with local_ghost, mesh %s", m->name);
    st = dt_tensor_from_local(m->mesh, &d, arr + gs1 + 1, DT_BORROW, &t);
    CHECK(all_failed(st) && st == DT_ERR_ARG, "status %s: %s", dt_status_string(st), dt_last_error());
    CHECK(strstr(dt_last_error(), "dt_tensor_from_local") && strstr(dt_last_error(), "START") &&
          strstr(dt_last_error(), "interior"), "message: %s", dt_last_error());
    CHECK(t == NULL && memcmp(saved, buf, bytes) == 0, "a tensor was made or the buffer changed");
    dtt_ctx("mistake (b'): local already the array's start, local_ghost larger than its room, mesh %s", m->name);
    d.local_ghost = wide;
    st = dt_tensor_from_local(m->mesh, &d, arr, DT_BORROW, &t);
    d.local_ghost = room;
    CHECK(all_failed(st) && st == DT_ERR_ARG, "status %s: %s", dt_status_string(st), dt_last_error());
    CHECK(strstr(dt_last_error(), "the array's start, so the array is smaller than local_shape + 2 * local_ghost") &&
          !strstr(dt_last_error(), "START") && !strstr(dt_last_error(), "&A(1,1)"), "message: %s", dt_last_error());
    CHECK(t == NULL && memcmp(saved, buf, bytes) == 0, "a tensor was made or the buffer changed");
    dtt_ctx("mistake (c): local_alloc_bytes given as the count of elements, mesh %s", m->name);
    d.local_alloc_bytes = gn;
    st = dt_tensor_from_local(m->mesh, &d, arr, DT_BORROW, &t);
    CHECK(all_failed(st) && st == DT_ERR_ARG, "status %s: %s", dt_status_string(st), dt_last_error());
    {
        char want[96];
        snprintf(want, sizeof want, "local_alloc_bytes = %lld looks like a count of elements", (long long)gn);
        CHECK(strstr(dt_last_error(), want) && !strstr(dt_last_error(), "START"), "message: %s", dt_last_error());
        snprintf(want, sizeof want, "%lld elements are %lld bytes", (long long)gn, (long long)gn * 8);
        CHECK(strstr(dt_last_error(), want), "message: %s", dt_last_error());
    }
    CHECK(t == NULL && memcmp(saved, buf, bytes) == 0, "a tensor was made or the buffer changed");
    if (dtt_np >= 2) { /* on one rank only: the others' message carries its whole */
        dtt_ctx("mistake (c) on rank 1 alone, mesh %s", m->name);
        d.local_alloc_bytes = dtt_rank == 1 ? gn : (int64_t)((size_t)gn * sizeof(double));
        st = dt_tensor_from_local(m->mesh, &d, arr, DT_BORROW, &t);
        CHECK(all_failed(st), "some rank accepted: %s", dt_status_string(st));
        expect_whole(dtt_rank == 1, "local_alloc_bytes in elements on rank 1");
        CHECK(t == NULL && memcmp(saved, buf, bytes) == 0, "a tensor was made or the buffer changed");
    }
    dtt_ctx("mistake (c): local_alloc_bytes a byte short is not taken for a count, mesh %s", m->name);
    d.local_alloc_bytes = (int64_t)((size_t)gn * sizeof(double)) - 1;
    st = dt_tensor_from_local(m->mesh, &d, arr, DT_BORROW, &t);
    CHECK(all_failed(st) && st == DT_ERR_ARG, "status %s: %s", dt_status_string(st), dt_last_error());
    CHECK(!strstr(dt_last_error(), "count of elements") && strstr(dt_last_error(), "past the allocation's end"),
          "message: %s", dt_last_error());
    d.local_alloc_bytes = (int64_t)((size_t)gn * sizeof(double));
    dtt_ctx("mistake (b): no local_alloc, mesh %s", m->name);
    d.local_alloc = NULL;
    st = dt_tensor_from_local(m->mesh, &d, arr, DT_BORROW, &t);
    CHECK(all_failed(st) && st == DT_ERR_ARG, "status %s: %s", dt_status_string(st), dt_last_error());
    CHECK(strstr(dt_last_error(), "local_alloc"), "message: %s", dt_last_error());
    CHECK(t == NULL && memcmp(saved, buf, bytes) == 0, "a tensor was made or the buffer changed");
    if (dtt_np >= 3) { /* DTENSOR_CHECK (dt_set_checks) implies DT_VERIFY: a contiguous wrap without
                          local_shape of an uneven torch.chunk split is refused, on every rank */
        dt_tensor_desc c = mkdesc(2, shape, m, pl);
        int was = dt_get_checks();
        dtt_ctx("DTENSOR_CHECK implies DT_VERIFY, mesh %s", m->name);
        c.placements[0] = dt_shard(0);
        dt_set_checks(1);
        st = dt_tensor_from_local(m->mesh, &c, arr, DT_BORROW, &t);
        dt_set_checks(was);
        CHECK(all_failed(st), "some rank accepted: %s", dt_status_string(st));
        CHECK(strstr(dt_last_error(), "dt_tensor_from_local") && strstr(dt_last_error(), "dt_shard_balanced"),
              "message: %s", dt_last_error());
        CHECK(t == NULL && memcmp(saved, buf, bytes) == 0, "a tensor was made or the buffer changed");
    }
    dtt_ctx("the right wrap: dt_shard_balanced, local_shape, the array's start, mesh %s", m->name);
    d.local_alloc = arr;
    CHECK_OK(dt_tensor_from_local(m->mesh, &d, arr, DT_BORROW, &t));
    if (t) {
        CHECK_OK(dt_tensor_gather(t, full));
        for (i = 0; i < n * cols; i++) {
            int64_t g[2] = {i / cols, i % cols};
            if (full[i] != fval(2, g)) { CHECK(0, "gathered [%lld] = %g", (long long)i, full[i]); break; }
        }
    }
    dt_tensor_destroy(t);
    CHECK(memcmp(saved, buf, bytes) == 0, "the buffer changed");
    free(full);
    free(saved);
    free(buf);
}

static void sweep(dt_comm *comm)
{
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, one[1];
    dt_placement pl[DT_MAX_MESH_DIMS];
    int64_t r11[2] = {1, 1}, r23[2] = {2, 3}, r12[2] = {1, 2}, r31[2] = {3, 1};
    dtt_mesh m;
    one[0] = dtt_np;
    memset(pl, 0, sizeof pl);
    if (dtt_mesh_open(&m, comm, 1, one)) {
        cases_1d(&m);
        pl[0] = dt_shard(0);
        stencil_and_gather(&m, pl, r11, NULL);
        stencil_and_gather(&m, pl, r23, NULL);
        stencil_and_gather(&m, pl, r12, r31);
        cases_sided(&m, pl);
        bad_input(&m);
        wrap_mistakes(&m);
        dtt_mesh_close(&m);
    }
    nf = dtt_factorizations(dtt_np, 2, fac, 64);
    for (f = 0; f < nf; f++) {
        if (!dtt_mesh_open(&m, comm, 2, &fac[f * DT_MAX_MESH_DIMS])) continue;
        cases_2d(&m);
        pl[0] = dt_shard(0); pl[1] = dt_shard(1);
        stencil_and_gather(&m, pl, r23, NULL);
        stencil_and_gather(&m, pl, r12, r31);
        cases_sided(&m, pl);
        dtt_mesh_close(&m);
    }
}

int main(int argc, char **argv)
{
    dt_comm *comm = NULL;
    dtt_init(&argc, &argv, "ghosted");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    if (comm) {
        sweep(comm);
        dt_comm_destroy(comm);
    }
    if (dtt_rank == 0 && getenv("DT_TEST_VERBOSE")) fprintf(stderr, "test_ghosted: %ld cases\n", ncases);
    return dtt_finish();
}
