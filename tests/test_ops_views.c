/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_ops_views.c -- the view ops: dt_transpose, dt_permute, dt_reshape
   (split and merge cases where the shards do and do not line up), dt_squeeze,
   dt_unsqueeze, dt_narrow, dt_cat, dt_stack, dt_split.

   Every op runs over every input placement (Replicate, Shard(each dim),
   Partial SUM/AVG/MAX/MIN per mesh dim) on the 1-D mesh and, sampled by a
   seeded rng identically on every rank, on the 2-D meshes of the rank
   count, with uneven shapes (5x3, 7, sizes below the rank count so that
   shards are empty, 0-size dims), all dtypes (rotating). Inputs hold a
   distinct value per element (a permutation or a wrong offset cannot go
   unnoticed), built with dt_tensor_from_local; Partial inputs hold real
   parts (dtt_from_full). The gathered result must equal the serial view of
   the global input exactly; its own layout is checked against the
   independent torch.chunk layout of its placements, the input must be
   untouched, and the placements follow /tmp/ops_semantics.md:
   transpose/permute/squeeze/unsqueeze move the Shard dims along (Partial
   kept) and communicate nothing (dt_comm stats); reshape keeps the shards
   exactly when every rank's elements stay on that rank (found here by
   comparing each mesh coordinate's set of global elements under every
   candidate output placement) and then moves nothing, else the data moves
   and the values must still be right (pytorch #179502); narrow/cat/split
   along a sharded dim do not leave that dim sharded and keep shards on the
   other dims; stack renumbers.

   Also: reuse of *out, an *out aliasing the input refused, a wrong *out
   refused and untouched, and bad input (NULLs, dims out of range, bad
   perms, reshape numel mismatches and two -1, narrow past the end, cat/stack
   shape/dtype/mesh mismatches, split sizes that do not add up) with the
   status and a message naming the call.

   Options: --quick (or DT_TEST_QUICK=1): a smaller sweep; --seed N (or
   DT_TEST_SEED). DT_TEST_VERBOSE=1 prints counts and times. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

static dt_comm *g_comm = NULL;
static uint64_t g_seed = 31337;
static long g_cases = 0;

#define MAXN 4 /* inputs of cat / stack */

/* ------------------------------------------------------------ values */

/* distinct per element (exact in t); salt shifts them */
static double val(dt_dtype t, int salt, int64_t g)
{
    int64_t k = g + 37 * (int64_t)((unsigned)salt % 97u);
    switch (t) {
    case DT_F32: case DT_F64: return (double)k * 0.25 - 20.0;
    case DT_F16: return (double)(k % 400) - 200.0;
    case DT_BF16: return (double)(k % 200) - 100.0;
    case DT_I32: return (double)(k * 3 - 1000);
    case DT_I64: return (double)(k * 3 - 1000) + (double)(k % 3 - 1) * 1099511627776.0;
    case DT_U8: return (double)(3 + k % 249);
    default: break; /* complex: tests/test_complex.c */
    }
    return 0;
}
static double unit_of(dt_dtype t) { return (t == DT_F32 || t == DT_F64) ? 0.25 : 1.0; }

static dt_dtype rot_dtype(long *rot, int nd, const dt_placement *pl)
{
    static const dt_dtype ts[] = { DT_F64, DT_F32, DT_I64, DT_F16, DT_I32, DT_BF16, DT_U8, DT_F64, DT_F32 };
    int guard = 0;
    dt_dtype t;
    do t = ts[(*rot)++ % NELEM(ts)];
    while (!dtt_pl_ok(nd, pl, t) && ++guard < 20);
    return dtt_pl_ok(nd, pl, t) ? t : DT_F64;
}

/* the sweep's next placement tuple for an ndim tensor on m, from number *idx on: each kept with probability
   frac (one draw per number), and only those usable with F64; 0 when none is left */
static int next_pl(const dtt_mesh *m, int ndim, double frac, dtt_rng *rng, int *idx, dt_placement *pl)
{
    int np = 1, k;
    for (k = 0; k < m->nd; k++) np *= dtt_nopts(ndim);
    for (; *idx < np; (*idx)++) {
        if (frac < 1.0 && dtt_frand(rng) >= frac) continue;
        dtt_pl_of(*idx, m->nd, ndim, pl);
        if (dtt_pl_ok(m->nd, pl, DT_F64)) return 1;
    }
    return 0;
}

static uint64_t bytes_moved(void)
{
    dt_comm_stats st;
    dt_comm_get_stats(g_comm, &st);
    return st.bytes_sent + st.bytes_recv;
}

/* check out: dtype, shape, own layout, gathered values == want (exactly) */
static void check_out(const dtt_mesh *m, const dt_tensor *out, dt_dtype t, int no, const int64_t *so, const double *want)
{
    const dt_tensor_desc *d = dt_tensor_get_desc(out);
    int64_t n = dtt_numel(no, so);
    int k, ok = 1;
    double *got;
    if (!d) {
        CHECK(0, "no output descriptor");
        return;
    }
    dtt_check_own_layout(m, out, "output layout");
    if (d->dtype != t || d->ndim != no) ok = 0;
    for (k = 0; k < no && ok; k++)
        if (d->shape[k] != so[k]) ok = 0;
    if (!ok) {
        char s1[64], s2[64];
        CHECK(0, "output %s %s, want %s %s", dtt_dtname(d->dtype), dtt_shape_str(d->ndim, d->shape, s1, sizeof s1),
              dtt_dtname(t), dtt_shape_str(no, so, s2, sizeof s2));
        return;
    }
    got = dtt_alloc_d(n);
    CHECK_OK(dtt_gather_full(out, got));
    dtt_cmp("values (exact)", DT_I64, n, got, want, NULL, 0, 0);
    free(got);
}

/* the end of a one-output case: out (when made) has placements ex (when given) and the values want, x its
   saved local data sv (freed here) */
static void check_case(const dtt_mesh *m, const dt_tensor *x, void *sv, const dt_tensor *out, const dt_placement *ex,
                       dt_dtype t, int no, const int64_t *so, const double *want)
{
    if (out) {
        if (ex) dtt_expect_pl(m, out, ex, "output placements");
        check_out(m, out, t, no, so, want);
    }
    CHECK(dtt_same_local(x, sv), "the input changed");
    free(sv);
}

static void fill_full(dt_dtype t, int salt, int64_t n, double *f)
{
    int64_t i;
    for (i = 0; i < n; i++) f[i] = val(t, salt, i);
}

/* unravel / ravel over int64 shapes */
static void unravel(int nd, const int64_t *s, int64_t i, int64_t *c)
{
    int d;
    for (d = nd - 1; d >= 0; d--) {
        c[d] = s[d] ? i % s[d] : 0;
        i = s[d] ? i / s[d] : 0;
    }
}
static int64_t ravel(int nd, const int64_t *s, const int64_t *c)
{
    int64_t g = 0;
    int d;
    for (d = 0; d < nd; d++) g = g * s[d] + c[d];
    return g;
}

/* ------------------------------------------------------------ transpose / permute */

/* perm form of everything: out dim j is input dim perm[j] */
static void run_permute(const dtt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, const dt_placement *pl,
                        const int *perm, int as_transpose, int d0, int d1, int salt)
{
    int64_t n = dtt_numel(ndim, shape), so[DT_MAX_DIMS], c[DT_MAX_DIMS], oc[DT_MAX_DIMS], i;
    double *full = dtt_alloc_d(n), *want = dtt_alloc_d(n);
    dt_tensor *x, *out = NULL;
    dt_placement ex[DT_MAX_MESH_DIMS];
    char s1[64], s2[64];
    int j, k, inv[DT_MAX_DIMS];
    g_cases++;
    if (as_transpose)
        dtt_ctx("dt_transpose(%d,%d) %s mesh %s %s %s", d0, d1, dtt_dtname(t), m->name,
                dtt_shape_str(ndim, shape, s1, sizeof s1), dtt_pl_str(pl, m->nd, s2, sizeof s2));
    else
        dtt_ctx("dt_permute(%d,%d,%d) %s mesh %s %s %s", perm[0], ndim > 1 ? perm[1] : -9, ndim > 2 ? perm[2] : -9,
                dtt_dtname(t), m->name, dtt_shape_str(ndim, shape, s1, sizeof s1), dtt_pl_str(pl, m->nd, s2, sizeof s2));
    for (j = 0; j < ndim; j++) {
        so[j] = shape[perm[j]];
        inv[perm[j]] = j;
    }
    fill_full(t, salt, n, full);
    for (i = 0; i < n; i++) {
        unravel(ndim, shape, i, c);
        for (j = 0; j < ndim; j++) oc[j] = c[perm[j]];
        want[ravel(ndim, so, oc)] = full[i];
    }
    x = dtt_from_full(m, t, ndim, shape, pl, full, unit_of(t));
    if (x) {
        void *sv = dtt_save_local(x);
        dt_comm_reset_stats(g_comm);
        if (as_transpose) CHECK_OK(dt_transpose(x, d0, d1, &out));
        else CHECK_OK(dt_permute(x, perm, &out));
        CHECK(bytes_moved() == 0, "a permutation moved %llu bytes", (unsigned long long)bytes_moved());
        if (out) {
            memset(ex, 0, sizeof ex);
            for (k = 0; k < m->nd; k++) {
                ex[k] = pl[k];
                if (pl[k].kind == DT_SHARD) ex[k] = dt_shard(inv[pl[k].dim]);
            }
        }
        check_case(m, x, sv, out, ex, t, ndim, so, want);
    }
    dt_tensor_destroy(out);
    dt_tensor_destroy(x);
    free(full);
    free(want);
}

typedef struct vshape { int ndim; int64_t s[4]; } vshape;

static void test_permute(const dtt_mesh *m, double frac, dtt_rng *rng, long *rot)
{
    static const vshape shp[] = { { 2, { 5, 7 } }, { 3, { 3, 4, 2 } }, { 2, { 2, 3 } }, { 3, { 1, 0, 5 } }, { 1, { 6 } } };
    static const int perms3[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
    int s, idx, np, k, p, d0, d1;
    for (s = 0; s < NELEM(shp); s++) {
        int nd = shp[s].ndim;
        np = 1;
        for (k = 0; k < m->nd; k++) np *= dtt_nopts(nd);
        for (idx = 0; idx < np; idx++) {
            dt_placement pl[DT_MAX_MESH_DIMS];
            dtt_pl_of(idx, m->nd, nd, pl);
            if (!dtt_pl_ok(m->nd, pl, DT_F64)) continue;
            for (p = 0; p < (nd == 3 ? 6 : nd == 2 ? 2 : 1); p++) {
                int perm[3];
                if (frac < 1.0 && dtt_frand(rng) >= frac) continue;
                for (k = 0; k < nd; k++) perm[k] = nd == 3 ? perms3[p][k] : nd == 2 ? (p ? 1 - k : k) : 0;
                run_permute(m, rot_dtype(rot, m->nd, pl), nd, shp[s].s, pl, perm, 0, 0, 0, idx + p);
            }
            for (d0 = -nd; d0 < nd; d0++)
                for (d1 = 0; d1 < nd; d1++) {
                    int perm[3], a = dtt_norm_dim(d0, nd);
                    if (frac < 1.0 && dtt_frand(rng) >= frac * 0.5) continue;
                    if (!dtt_quick && frac == 1.0 && d0 >= 0 && dtt_frand(rng) < 0.5) continue;
                    for (k = 0; k < nd; k++) perm[k] = k;
                    perm[a] = d1;
                    perm[d1] = a;
                    run_permute(m, rot_dtype(rot, m->nd, pl), nd, shp[s].s, pl, perm, 1, d0, d1, idx + d0);
                }
        }
    }
}

/* ------------------------------------------------------------ reshape */

/* the global flat indices of mesh coordinate `coord`'s shard, in increasing order; returns the count */
static int64_t shard_set(const dtt_mesh *m, const int *coord, int ndim, const int64_t *shape, const dt_placement *pl,
                         int64_t *outv)
{
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], n, i;
    dtt_ref_layout(m->nd, m->shape, coord, ndim, shape, pl, ls, lo);
    n = dtt_numel(ndim, ls);
    for (i = 0; i < n; i++) outv[i] = dtt_gidx(ndim, shape, ls, lo, i);
    return n;
}

/* output placements (Partial mesh dims kept) under which every coordinate keeps
   exactly its elements; writes up to `max` of them; returns the count */
static int zero_move_candidates(const dtt_mesh *m, int ndim, const int64_t *shape, const dt_placement *pl, int no,
                               const int64_t *so, dt_placement (*cand)[DT_MAX_MESH_DIMS], int max)
{
    int64_t n = dtt_numel(ndim, shape);
    int64_t *a = (int64_t *)dtt_malloc(sizeof(int64_t) * (size_t)(n + 1)), *b = (int64_t *)dtt_malloc(sizeof(int64_t) * (size_t)(n + 1));
    int ntup = 1, tu, k, count = 0, ncoord = 1;
    for (k = 0; k < m->nd; k++) {
        ntup *= no + 1;
        ncoord *= m->shape[k];
    }
    for (tu = 0; tu < ntup; tu++) {
        dt_placement op[DT_MAX_MESH_DIMS];
        int rem = tu, c, ok = 1;
        memset(op, 0, sizeof op);
        for (k = m->nd - 1; k >= 0; k--) {
            int o = rem % (no + 1);
            rem /= no + 1;
            op[k] = pl[k].kind == DT_PARTIAL ? pl[k] : o == 0 ? dt_replicate() : dt_shard(o - 1);
            if (pl[k].kind == DT_PARTIAL && o) ok = 0; /* one tuple per Partial dim */
        }
        for (c = 0; c < ncoord && ok; c++) {
            int coord[DT_MAX_MESH_DIMS];
            int64_t na, nb;
            dtt_unravel(m->nd, m->shape, c, coord);
            na = shard_set(m, coord, ndim, shape, pl, a);
            nb = shard_set(m, coord, no, so, op, b);
            if (na != nb || (na && memcmp(a, b, sizeof(int64_t) * (size_t)na) != 0)) ok = 0;
        }
        if (ok && count < max) memcpy(cand[count++], op, sizeof op);
    }
    free(a);
    free(b);
    return count;
}

static int pl_equal(int nd, const dt_placement *a, const dt_placement *b)
{
    int k;
    for (k = 0; k < nd; k++) {
        if (a[k].kind != b[k].kind) return 0;
        if (a[k].kind == DT_SHARD && a[k].dim != b[k].dim) return 0;
        if (a[k].kind == DT_PARTIAL && a[k].reduce != b[k].reduce) return 0;
    }
    return 1;
}

static long g_reshape_kept = 0, g_reshape_moved = 0;

static void run_reshape(const dtt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, const dt_placement *pl, int nq,
                        const int64_t *req, int salt)
{
    int64_t n = dtt_numel(ndim, shape), so[DT_MAX_DIMS], known = 1;
    double *full = dtt_alloc_d(n);
    dt_tensor *x, *out = NULL;
    dt_placement cand[64][DT_MAX_MESH_DIMS];
    char s1[64], s2[64], s3[64];
    int k, ncand, neg = -1, haspart = 0;
    for (k = 0; k < nq; k++) {
        if (req[k] < 0) neg = k;
        else known *= req[k];
        so[k] = req[k];
    }
    if (neg >= 0) so[neg] = known ? n / known : 0;
    for (k = 0; k < m->nd; k++) haspart |= pl[k].kind == DT_PARTIAL;
    g_cases++;
    dtt_ctx("dt_reshape %s -> %s %s mesh %s %s", dtt_shape_str(ndim, shape, s1, sizeof s1),
            dtt_shape_str(nq, req, s2, sizeof s2), dtt_dtname(t), m->name, dtt_pl_str(pl, m->nd, s3, sizeof s3));
    fill_full(t, salt, n, full);
    ncand = zero_move_candidates(m, ndim, shape, pl, nq, so, cand, 64);
    x = dtt_from_full(m, t, ndim, shape, pl, full, unit_of(t));
    if (x) {
        void *sv = dtt_save_local(x);
        uint64_t moved;
        dt_comm_reset_stats(g_comm);
        CHECK_OK(dt_reshape(x, nq, req, &out));
        moved = bytes_moved();
        if (out) {
            const dt_tensor_desc *d = dt_tensor_get_desc(out);
            if (ncand > 0 && n > 0) {
                /* the shards line up: kept, nothing moves */
                int c, found = 0;
                for (c = 0; c < ncand; c++) found |= pl_equal(m->nd, d->placements, cand[c]);
                if (!haspart || found) {
                    CHECK(found, "the shards line up (e.g. %s) but the output is %s",
                          dtt_pl_str(cand[0], m->nd, s1, sizeof s1), dtt_pl_str(d->placements, m->nd, s2, sizeof s2));
                    CHECK(moved == 0, "the shards line up but %llu bytes moved", (unsigned long long)moved);
                }
                g_reshape_kept++;
            } else g_reshape_moved++;
            check_out(m, out, t, nq, so, full); /* row-major order is the same */
        }
        CHECK(dtt_same_local(x, sv), "the input changed");
        free(sv);
    }
    dt_tensor_destroy(out);
    dt_tensor_destroy(x);
    free(full);
}

typedef struct rcase { int ndim; int64_t s[4]; int nq; int64_t q[4]; } rcase;
static const rcase rcases[] = {
    { 2, { 6, 4 }, 1, { 24 } }, { 2, { 6, 4 }, 2, { 4, 6 } }, { 2, { 6, 4 }, 3, { 2, 3, 4 } }, { 2, { 6, 4 }, 3, { 6, 2, 2 } },
    { 2, { 6, 4 }, 2, { -1, 8 } }, { 2, { 6, 4 }, 2, { 24, 1 } },
    { 2, { 5, 3 }, 1, { 15 } }, { 2, { 5, 3 }, 2, { 3, 5 } }, { 2, { 5, 3 }, 3, { 5, 1, 3 } }, { 2, { 5, 3 }, 2, { 1, -1 } },
    { 3, { 2, 3, 4 }, 2, { 6, 4 } }, { 3, { 2, 3, 4 }, 2, { 2, 12 } }, { 3, { 2, 3, 4 }, 1, { 24 } },
    { 3, { 2, 3, 4 }, 3, { 4, 3, 2 } }, { 3, { 2, 3, 4 }, 4, { 2, 3, 2, 2 } },
    { 2, { 8, 3 }, 3, { 2, 4, 3 } }, { 2, { 8, 3 }, 3, { 4, 2, 3 } }, { 2, { 8, 3 }, 1, { -1 } },
    { 1, { 12 }, 2, { 3, 4 } }, { 1, { 12 }, 2, { 4, 3 } }, { 1, { 12 }, 3, { 2, 2, 3 } }, { 1, { 12 }, 2, { 12, 1 } },
    { 1, { 7 }, 2, { 7, 1 } }, { 1, { 7 }, 2, { 1, 7 } }, { 2, { 1, 7 }, 1, { 7 } },
    { 3, { 4, 0, 3 }, 2, { 0, 12 } }, { 3, { 4, 0, 3 }, 2, { 12, 0 } },
    { 1, { 1 }, 0, { 0 } }, { 0, { 0 }, 2, { 1, 1 } },
};

static void test_reshape(const dtt_mesh *m, double frac, dtt_rng *rng, long *rot)
{
    int c, idx;
    dt_placement pl[DT_MAX_MESH_DIMS];
    for (c = 0; c < NELEM(rcases); c++) {
        const rcase *rc = &rcases[c];
        for (idx = 0; next_pl(m, rc->ndim, frac, rng, &idx, pl); idx++)
            run_reshape(m, rot_dtype(rot, m->nd, pl), rc->ndim, rc->s, pl, rc->nq, rc->q, idx + c);
    }
}

/* ------------------------------------------------------------ squeeze / unsqueeze */

static void run_squeeze(const dtt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, const dt_placement *pl, int dim,
                        int unsq, int salt)
{
    int64_t n = dtt_numel(ndim, shape), so[DT_MAX_DIMS];
    double *full = dtt_alloc_d(n);
    dt_tensor *x, *out = NULL;
    dt_placement ex[DT_MAX_MESH_DIMS];
    char s1[64], s2[64];
    int k, no = 0, a, removes;
    g_cases++;
    dtt_ctx("%s(%d) %s mesh %s %s %s", unsq ? "dt_unsqueeze" : "dt_squeeze", dim, dtt_dtname(t), m->name,
            dtt_shape_str(ndim, shape, s1, sizeof s1), dtt_pl_str(pl, m->nd, s2, sizeof s2));
    a = unsq ? (dim < 0 ? dim + ndim + 1 : dim) : dtt_norm_dim(dim, ndim);
    removes = !unsq && shape[a] == 1;
    for (k = 0; k < ndim; k++) {
        if (unsq && k == a) so[no++] = 1;
        if (!(removes && k == a)) so[no++] = shape[k];
    }
    if (unsq && a == ndim) so[no++] = 1;
    memset(ex, 0, sizeof ex);
    for (k = 0; k < m->nd; k++) {
        ex[k] = pl[k];
        if (pl[k].kind == DT_SHARD) {
            int e = pl[k].dim;
            if (unsq) ex[k] = dt_shard(e >= a ? e + 1 : e);
            else if (removes && e == a) ex[k] = dtt_pl_any(); /* a size-1 dim sharded: data moves */
            else if (removes && e > a) ex[k] = dt_shard(e - 1);
        }
    }
    fill_full(t, salt, n, full);
    x = dtt_from_full(m, t, ndim, shape, pl, full, unit_of(t));
    if (x) {
        void *sv = dtt_save_local(x);
        int anyshard = 0;
        for (k = 0; k < m->nd; k++) anyshard |= ex[k].kind == DTT_ANYPL;
        dt_comm_reset_stats(g_comm);
        if (unsq) CHECK_OK(dt_unsqueeze(x, dim, &out));
        else CHECK_OK(dt_squeeze(x, dim, &out));
        if (!anyshard) CHECK(bytes_moved() == 0, "moved %llu bytes", (unsigned long long)bytes_moved());
        check_case(m, x, sv, out, ex, t, no, so, full);
    }
    dt_tensor_destroy(out);
    dt_tensor_destroy(x);
    free(full);
}

static void test_squeeze(const dtt_mesh *m, double frac, dtt_rng *rng, long *rot)
{
    static const vshape shp[] = { { 3, { 5, 1, 3 } }, { 2, { 1, 7 } }, { 1, { 1 } }, { 2, { 4, 3 } }, { 0, { 0 } }, { 3, { 2, 0, 1 } } };
    int s, idx, np, k, dim;
    for (s = 0; s < NELEM(shp); s++) {
        int nd = shp[s].ndim;
        np = 1;
        for (k = 0; k < m->nd; k++) np *= dtt_nopts(nd);
        for (idx = 0; idx < np; idx++) {
            dt_placement pl[DT_MAX_MESH_DIMS];
            dtt_pl_of(idx, m->nd, nd, pl);
            if (!dtt_pl_ok(m->nd, pl, DT_F64)) continue;
            for (dim = -nd; dim < nd; dim++) {
                if (frac < 1.0 && dtt_frand(rng) >= frac) continue;
                run_squeeze(m, rot_dtype(rot, m->nd, pl), nd, shp[s].s, pl, dim, 0, idx + dim);
            }
            for (dim = -nd - 1; dim <= nd; dim++) {
                if (frac < 1.0 && dtt_frand(rng) >= frac) continue;
                run_squeeze(m, rot_dtype(rot, m->nd, pl), nd, shp[s].s, pl, dim, 1, idx + dim);
            }
        }
    }
}

/* ------------------------------------------------------------ narrow / split */

/* expected placement along `dim`: that dim not sharded after, other shards and R kept */
static dt_placement along_expect(dt_placement in, int dim)
{
    if (in.kind == DT_REPLICATE) return in;
    if (in.kind == DT_SHARD) return in.dim == dim ? dtt_pl_nots(dim) : in;
    return dtt_pl_any();
}

static void narrow_ref(int ndim, const int64_t *shape, const double *full, int dim, int64_t start, int64_t len,
                       int64_t *so, double *want)
{
    int64_t n, i, c[DT_MAX_DIMS];
    int k;
    for (k = 0; k < ndim; k++) so[k] = shape[k];
    so[dim] = len;
    n = dtt_numel(ndim, so);
    for (i = 0; i < n; i++) {
        unravel(ndim, so, i, c);
        c[dim] += start;
        want[i] = full[ravel(ndim, shape, c)];
    }
}

static void run_narrow(const dtt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, const dt_placement *pl, int dim,
                       int64_t start, int64_t len, int salt)
{
    int64_t n = dtt_numel(ndim, shape), so[DT_MAX_DIMS];
    double *full = dtt_alloc_d(n), *want = dtt_alloc_d(n);
    dt_tensor *x, *out = NULL;
    dt_placement ex[DT_MAX_MESH_DIMS];
    char s1[64], s2[64];
    int k, a = dtt_norm_dim(dim, ndim);
    g_cases++;
    dtt_ctx("dt_narrow(%d, %lld, %lld) %s mesh %s %s %s", dim, (long long)start, (long long)len, dtt_dtname(t), m->name,
            dtt_shape_str(ndim, shape, s1, sizeof s1), dtt_pl_str(pl, m->nd, s2, sizeof s2));
    fill_full(t, salt, n, full);
    narrow_ref(ndim, shape, full, a, start, len, so, want);
    memset(ex, 0, sizeof ex);
    for (k = 0; k < m->nd; k++) ex[k] = along_expect(pl[k], a);
    x = dtt_from_full(m, t, ndim, shape, pl, full, unit_of(t));
    if (x) {
        void *sv = dtt_save_local(x);
        CHECK_OK(dt_narrow(x, dim, start, len, &out));
        check_case(m, x, sv, out, n > 0 ? ex : NULL, t, ndim, so, want);
    }
    dt_tensor_destroy(out);
    dt_tensor_destroy(x);
    free(full);
    free(want);
}

static void run_split(const dtt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, const dt_placement *pl, int dim,
                      int np, const int64_t *sizes, int salt)
{
    int64_t n = dtt_numel(ndim, shape), so[DT_MAX_DIMS], start = 0;
    double *full = dtt_alloc_d(n), *want = dtt_alloc_d(n);
    dt_tensor *x, *outs[8];
    dt_placement ex[DT_MAX_MESH_DIMS];
    char s1[64], s2[64];
    int k, i, a = dtt_norm_dim(dim, ndim);
    g_cases++;
    dtt_ctx("dt_split(dim %d, %d pieces: %lld,%lld,..) %s mesh %s %s %s", dim, np, (long long)sizes[0],
            (long long)(np > 1 ? sizes[1] : -1), dtt_dtname(t), m->name, dtt_shape_str(ndim, shape, s1, sizeof s1),
            dtt_pl_str(pl, m->nd, s2, sizeof s2));
    fill_full(t, salt, n, full);
    memset(ex, 0, sizeof ex);
    for (k = 0; k < m->nd; k++) ex[k] = along_expect(pl[k], a);
    for (i = 0; i < 8; i++) outs[i] = NULL;
    x = dtt_from_full(m, t, ndim, shape, pl, full, unit_of(t));
    if (x) {
        void *sv = dtt_save_local(x);
        CHECK_OK(dt_split(x, dim, np, sizes, outs));
        for (i = 0; i < np; start += sizes[i], i++) {
            CHECK(outs[i] != NULL, "piece %d missing", i);
            if (!outs[i]) continue;
            narrow_ref(ndim, shape, full, a, start, sizes[i], so, want);
            if (n > 0) dtt_expect_pl(m, outs[i], ex, "output placements");
            check_out(m, outs[i], t, ndim, so, want);
        }
        CHECK(dtt_same_local(x, sv), "the input changed");
        free(sv);
    }
    for (i = 0; i < 8; i++) dt_tensor_destroy(outs[i]);
    dt_tensor_destroy(x);
    free(full);
    free(want);
}

static void test_narrow_split(const dtt_mesh *m, double frac, dtt_rng *rng, long *rot)
{
    typedef struct ncase { int v; int dim; int64_t start, len; } ncase;
    static const vshape shp[] = { { 2, { 7, 5 } }, { 3, { 3, 4, 2 } }, { 2, { 2, 3 } } };
    static const ncase nc[] = { { 0, 0, 1, 4 }, { 0, 0, 0, 7 }, { 0, 0, 6, 1 }, { 0, 1, 2, 0 }, { 0, -1, 1, 3 },
                                { 1, 1, 1, 2 }, { 1, 0, 2, 1 }, { 1, -1, 0, 1 }, { 2, 0, 1, 1 }, { 2, 1, 0, 2 } };
    typedef struct scase { int v; int dim; int n; int64_t sz[3]; } scase;
    static const scase sc[] = { { 0, 0, 2, { 2, 5 } }, { 0, 0, 3, { 3, 0, 4 } }, { 0, 1, 2, { 1, 4 } }, { 0, -1, 1, { 5 } },
                                { 1, 1, 2, { 3, 1 } }, { 1, 2, 2, { 1, 1 } }, { 2, 0, 2, { 1, 1 } } };
    int c, idx;
    dt_placement pl[DT_MAX_MESH_DIMS];
    for (c = 0; c < NELEM(nc); c++) {
        const vshape *vs = &shp[nc[c].v];
        for (idx = 0; next_pl(m, vs->ndim, frac, rng, &idx, pl); idx++)
            run_narrow(m, rot_dtype(rot, m->nd, pl), vs->ndim, vs->s, pl, nc[c].dim, nc[c].start, nc[c].len, idx + c);
    }
    for (c = 0; c < NELEM(sc); c++) {
        const vshape *vs = &shp[sc[c].v];
        for (idx = 0; next_pl(m, vs->ndim, frac, rng, &idx, pl); idx++)
            run_split(m, rot_dtype(rot, m->nd, pl), vs->ndim, vs->s, pl, sc[c].dim, sc[c].n, sc[c].sz, idx + c);
    }
}

/* ------------------------------------------------------------ cat / stack */

static void run_cat(const dtt_mesh *m, dt_dtype t, int stack, int nin, int ndim, const int64_t (*shapes)[3],
                    const dt_placement (*pls)[DT_MAX_MESH_DIMS], int dim, int salt)
{
    int64_t so[DT_MAX_DIMS], nO, off = 0, i, c[DT_MAX_DIMS];
    double *full[MAXN], *want;
    dt_tensor *xs[MAXN], *out = NULL;
    dt_placement ex[DT_MAX_MESH_DIMS];
    char s1[64], s2[64];
    int k, j, no = stack ? ndim + 1 : ndim, a = stack ? (dim < 0 ? dim + ndim + 1 : dim) : dtt_norm_dim(dim, ndim), same = 1, ok = 1;
    g_cases++;
    dtt_ctx("%s(%d inputs, dim %d) %s mesh %s first %s %s", stack ? "dt_stack" : "dt_cat", nin, dim, dtt_dtname(t), m->name,
            dtt_shape_str(ndim, shapes[0], s1, sizeof s1), dtt_pl_str(pls[0], m->nd, s2, sizeof s2));
    for (k = 0; k < no; k++) so[k] = 0;
    if (stack) {
        for (k = 0, j = 0; k < no; k++) so[k] = k == a ? nin : shapes[0][j++];
    } else {
        for (k = 0; k < ndim; k++) so[k] = shapes[0][k];
        so[a] = 0;
        for (j = 0; j < nin; j++) so[a] += shapes[j][a];
    }
    nO = dtt_numel(no, so);
    want = dtt_alloc_d(nO);
    for (j = 0; j < nin; j++) {
        int64_t nj = dtt_numel(ndim, shapes[j]);
        full[j] = dtt_alloc_d(nj);
        fill_full(t, salt + 11 * j, nj, full[j]);
        /* place input j into want */
        for (i = 0; i < nj; i++) {
            int64_t oc[DT_MAX_DIMS];
            unravel(ndim, shapes[j], i, c);
            if (stack) {
                int q = 0;
                for (k = 0; k < no; k++) oc[k] = k == a ? j : c[q++];
            } else {
                for (k = 0; k < ndim; k++) oc[k] = c[k];
                oc[a] += off;
            }
            want[ravel(no, so, oc)] = full[j][i];
        }
        if (!stack) off += shapes[j][a];
        xs[j] = dtt_from_full(m, t, ndim, shapes[j], pls[j], full[j], unit_of(t));
        if (!xs[j]) ok = 0;
        if (j && !pl_equal(m->nd, pls[j], pls[0])) same = 0;
    }
    memset(ex, 0, sizeof ex);
    for (k = 0; k < m->nd; k++) {
        if (!same) ex[k] = dtt_pl_any();
        else if (stack) ex[k] = pls[0][k].kind == DT_SHARD ? dt_shard(pls[0][k].dim >= a ? pls[0][k].dim + 1 : pls[0][k].dim)
                              : pls[0][k].kind == DT_REPLICATE ? pls[0][k] : dtt_pl_any();
        else ex[k] = along_expect(pls[0][k], a);
    }
    if (ok) {
        void *sv[MAXN];
        for (j = 0; j < nin; j++) sv[j] = dtt_save_local(xs[j]);
        if (stack) CHECK_OK(dt_stack(nin, (const dt_tensor *const *)xs, dim, &out));
        else CHECK_OK(dt_cat(nin, (const dt_tensor *const *)xs, dim, &out));
        if (out) {
            if (nO > 0) dtt_expect_pl(m, out, ex, "output placements");
            check_out(m, out, t, no, so, want);
        }
        for (j = 0; j < nin; j++) {
            CHECK(dtt_same_local(xs[j], sv[j]), "input %d changed", j);
            free(sv[j]);
        }
    }
    dt_tensor_destroy(out);
    for (j = 0; j < nin; j++) {
        dt_tensor_destroy(xs[j]);
        free(full[j]);
    }
    free(want);
}

static void test_cat_stack(const dtt_mesh *m, double frac, dtt_rng *rng, long *rot)
{
    typedef struct ccase { int nin; int ndim; int64_t s[MAXN][3]; int dim; int stack; } ccase;
    static const ccase cc[] = {
        { 3, 2, { { 3, 5 }, { 2, 5 }, { 4, 5 } }, 0, 0 },
        { 2, 2, { { 3, 2 }, { 3, 4 } }, 1, 0 },
        { 2, 2, { { 3, 2 }, { 3, 4 } }, -1, 0 },
        { 3, 1, { { 2 }, { 0 }, { 5 } }, 0, 0 },
        { 2, 3, { { 2, 3, 2 }, { 2, 1, 2 } }, 1, 0 },
        { 3, 2, { { 3, 4 }, { 3, 4 }, { 3, 4 } }, 0, 1 },
        { 3, 2, { { 3, 4 }, { 3, 4 }, { 3, 4 } }, 1, 1 },
        { 2, 2, { { 3, 4 }, { 3, 4 } }, 2, 1 },
        { 2, 2, { { 3, 4 }, { 3, 4 } }, -1, 1 },
        { 4, 1, { { 5 }, { 5 }, { 5 }, { 5 } }, 0, 1 },
    };
    int c, idx, np, k, j;
    for (c = 0; c < NELEM(cc); c++) {
        np = 1;
        for (k = 0; k < m->nd; k++) np *= dtt_nopts(cc[c].ndim);
        for (idx = 0; idx < np; idx++) {
            dt_placement pls[MAXN][DT_MAX_MESH_DIMS];
            dt_dtype t;
            if (frac < 1.0 && dtt_frand(rng) >= frac) continue;
            dtt_pl_of(idx, m->nd, cc[c].ndim, pls[0]);
            if (!dtt_pl_ok(m->nd, pls[0], DT_F64)) continue;
            t = rot_dtype(rot, m->nd, pls[0]);
            for (j = 1; j < cc[c].nin; j++) memcpy(pls[j], pls[0], sizeof pls[0]);
            run_cat(m, t, cc[c].stack, cc[c].nin, cc[c].ndim, cc[c].s, (const dt_placement(*)[DT_MAX_MESH_DIMS])pls, cc[c].dim, idx);
            /* mixed placements: input j gets another placement (values only) */
            if (dtt_frand(rng) < 0.3) {
                for (j = 1; j < cc[c].nin; j++) {
                    dtt_pl_of((idx * 7 + j * 3) % np, m->nd, cc[c].ndim, pls[j]);
                    if (!dtt_pl_ok(m->nd, pls[j], DT_F64)) memset(pls[j], 0, sizeof pls[j]);
                }
                for (j = 0; j < cc[c].nin; j++)
                    if (!dtt_pl_ok(m->nd, pls[j], t)) t = DT_F64;
                run_cat(m, t, cc[c].stack, cc[c].nin, cc[c].ndim, cc[c].s, (const dt_placement(*)[DT_MAX_MESH_DIMS])pls,
                        cc[c].dim, idx + 1);
            }
        }
    }
}

/* ------------------------------------------------------------ sweep driver */

static void sweep(void (*fn)(const dtt_mesh *, double, dtt_rng *, long *), double f1, double f2, uint64_t salt)
{
    dtt_sweep_meshes(g_comm, fn, g_seed ^ salt, (long)salt, dtt_quick ? f1 * 0.15 : f1, dtt_quick ? f2 * 0.15 : f2, 0.3);
}

/* ------------------------------------------------------------ reuse, aliasing, wrong *out, bad input */

static dt_tensor *mk(const dtt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, dt_placement p0, int salt)
{
    dt_placement pl[DT_MAX_MESH_DIMS];
    int64_t n = dtt_numel(ndim, shape);
    double *full = dtt_alloc_d(n);
    dt_tensor *x;
    memset(pl, 0, sizeof pl);
    pl[0] = p0;
    fill_full(t, salt, n, full);
    x = dtt_from_full(m, t, ndim, shape, pl, full, unit_of(t));
    free(full);
    return x;
}

static void test_reuse_alias_wrong(void)
{
    dtt_mesh m;
    int one[1], salt, v;
    int64_t sh[2] = { 6, 4 }, sh24[1] = { 24 }, sh46[2] = { 4, 6 }, i;
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    for (v = 0; v < 2; v++) { /* 0: transpose, 1: reshape (6,4)->(24) */
        dt_tensor *out = NULL, *out0 = NULL;
        void *p0 = NULL;
        const char *fn = v ? "dt_reshape" : "dt_transpose";
        dtt_ctx("reuse %s", fn);
        for (salt = 0; salt < 3; salt++) {
            dt_tensor *x = mk(&m, DT_F64, 2, sh, dt_shard(0), salt);
            double full[24], want[24];
            int64_t c[2];
            if (!x) continue;
            if (v) CHECK_OK(dt_reshape(x, 1, sh24, &out));
            else CHECK_OK(dt_transpose(x, 0, 1, &out));
            dtt_check_reuse(salt == 0, out, &out0, &p0);
            fill_full(DT_F64, salt, 24, full);
            for (i = 0; i < 24; i++) {
                unravel(2, sh, i, c);
                want[v ? i : c[1] * 6 + c[0]] = full[i];
            }
            if (out) check_out(&m, out, DT_F64, v ? 1 : 2, v ? sh24 : sh46, want);
            dt_tensor_destroy(x);
        }
        /* wrong *out: dtype / shape / placements; refused and untouched */
        if (out) {
            dt_tensor *x = mk(&m, DT_F64, 2, sh, dt_shard(0), 5), *w[3], *o;
            static const dt_status want_st[3] = { DT_ERR_DTYPE, DT_ERR_SHAPE, DT_ERR_PLACEMENT };
            const dt_tensor_desc *od = dt_tensor_get_desc(out);
            int c2;
            w[0] = mk(&m, DT_F32, od->ndim, od->shape, od->placements[0], 1);
            w[1] = mk(&m, DT_F64, 2, v ? sh : sh, od->placements[0].kind == DT_SHARD ? dt_shard(0) : od->placements[0], 1);
            w[2] = mk(&m, DT_F64, od->ndim, od->shape, od->placements[0].kind == DT_REPLICATE ? dt_shard(0) : dt_replicate(), 1);
            for (c2 = 0; c2 < 3 && x; c2++) {
                void *sv;
                if (!w[c2]) continue;
                sv = dtt_save_local(w[c2]);
                o = w[c2];
                dtt_ctx("wrong out %s case %d", fn, c2);
                if (v) CHECK_ST(dt_reshape(x, 1, sh24, &o), want_st[c2]);
                else CHECK_ST(dt_transpose(x, 0, 1, &o), want_st[c2]);
                CHECK_ERRMSG(fn);
                CHECK(o == w[c2], "*out must stay the same pointer");
                CHECK(dtt_same_local(w[c2], sv), "a refused *out's data changed");
                free(sv);
            }
            for (c2 = 0; c2 < 3; c2++) dt_tensor_destroy(w[c2]);
            /* *out aliasing the input: refused, input untouched */
            if (x) {
                dt_tensor *o2 = x;
                void *sv = dtt_save_local(x);
                dt_status st;
                int64_t same[2] = { 6, 4 };
                dtt_ctx("alias %s", fn);
                st = v ? dt_reshape(x, 2, same, &o2) : dt_transpose(x, 0, 0, &o2);
                CHECK(st != DT_OK, "%s with *out == the input returned DT_OK", fn);
                CHECK_ERRMSG(fn);
                CHECK(o2 == x, "*out must stay the input pointer");
                CHECK(dtt_same_local(x, sv), "the input changed");
                free(sv);
            }
            dt_tensor_destroy(x);
        }
        dt_tensor_destroy(out);
    }
    dtt_mesh_close(&m);
}

static void test_bad_input(void)
{
    dtt_mesh m, m2;
    int64_t sh[2] = { 4, 6 }, sh3[2] = { 3, 6 }, sh5[2] = { 4, 5 };
    dt_tensor *x, *y3, *y5, *y64, *ym, *o = NULL;
    if (!dtt_open_1d_2d(&m, &m2, g_comm)) return;
    x = mk(&m, DT_F32, 2, sh, dt_shard(0), 1);
    y3 = mk(&m, DT_F32, 2, sh3, dt_shard(0), 2);
    y5 = mk(&m, DT_F32, 2, sh5, dt_replicate(), 3);
    y64 = mk(&m, DT_F64, 2, sh, dt_replicate(), 4);
    ym = mk(&m2, DT_F32, 2, sh, dt_replicate(), 5);
    if (x && y3 && y5 && y64 && ym) {
        static const int p_dup[2] = { 0, 0 }, p_oor[2] = { 0, 2 }, p_neg[2] = { -3, 0 };
        static const int64_t r_bad[2] = { 5, 5 }, r_two[2] = { -1, -1 }, r_zero[3] = { 4, 0, 6 }, r_neg[2] = { -2, 12 };
        static const int64_t s_bad[2] = { 2, 3 }, s_neg[2] = { 5, -1 };
        const dt_tensor *xs[2], *xs3[3];
        dtt_ctx("bad input views");
        CHECK_ST(dt_transpose(NULL, 0, 1, &o), DT_ERR_ARG); CHECK_ERRMSG("dt_transpose");
        CHECK_ST(dt_transpose(x, 0, 1, NULL), DT_ERR_ARG); CHECK_ERRMSG("dt_transpose");
        CHECK_ST(dt_transpose(x, 0, 2, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_transpose");
        CHECK_ST(dt_transpose(x, -3, 1, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_transpose");
        CHECK_ST(dt_permute(NULL, p_dup, &o), DT_ERR_ARG); CHECK_ERRMSG("dt_permute");
        CHECK_ST(dt_permute(x, NULL, &o), DT_ERR_ARG); CHECK_ERRMSG("dt_permute");
        CHECK_ST(dt_permute(x, p_dup, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_permute");
        CHECK_ST(dt_permute(x, p_oor, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_permute");
        CHECK_ST(dt_permute(x, p_neg, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_permute");
        CHECK_ST(dt_reshape(NULL, 2, r_bad, &o), DT_ERR_ARG); CHECK_ERRMSG("dt_reshape");
        CHECK_ST(dt_reshape(x, 2, NULL, &o), DT_ERR_ARG); CHECK_ERRMSG("dt_reshape");
        CHECK_ST(dt_reshape(x, 2, r_bad, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_reshape");
        CHECK_ST(dt_reshape(x, 2, r_two, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_reshape");
        CHECK_ST(dt_reshape(x, 3, r_zero, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_reshape");
        CHECK_ST(dt_reshape(x, 2, r_neg, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_reshape");
        CHECK_ST(dt_squeeze(NULL, 0, &o), DT_ERR_ARG); CHECK_ERRMSG("dt_squeeze");
        CHECK_ST(dt_squeeze(x, 2, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_squeeze");
        CHECK_ST(dt_squeeze(x, -3, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_squeeze");
        CHECK_ST(dt_unsqueeze(NULL, 0, &o), DT_ERR_ARG); CHECK_ERRMSG("dt_unsqueeze");
        CHECK_ST(dt_unsqueeze(x, 3, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_unsqueeze");
        CHECK_ST(dt_unsqueeze(x, -4, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_unsqueeze");
        CHECK_ST(dt_narrow(NULL, 0, 0, 1, &o), DT_ERR_ARG); CHECK_ERRMSG("dt_narrow");
        CHECK_ST(dt_narrow(x, 2, 0, 1, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_narrow");
        CHECK_ST(dt_narrow(x, 0, 3, 2, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_narrow");
        CHECK_ST(dt_narrow(x, 1, 0, 7, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_narrow");
        CHECK_ST(dt_narrow(x, 1, 2, -1, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_narrow");
        xs[0] = x;
        xs[1] = y5; /* (4,6) and (4,5): cat along 1 fine, along 0 not */
        CHECK_ST(dt_cat(2, xs, 0, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_cat");
        CHECK_ST(dt_cat(2, xs, 2, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_cat");
        CHECK_ST(dt_stack(2, xs, 0, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_stack");
        xs[1] = y64;
        CHECK_ST(dt_cat(2, xs, 0, &o), DT_ERR_DTYPE); CHECK_ERRMSG("dt_cat");
        CHECK_ST(dt_stack(2, xs, 0, &o), DT_ERR_DTYPE); CHECK_ERRMSG("dt_stack");
        xs[1] = ym;
        CHECK_ST(dt_cat(2, xs, 0, &o), DT_ERR_MESH); CHECK_ERRMSG("dt_cat");
        CHECK_ST(dt_stack(2, xs, 0, &o), DT_ERR_MESH); CHECK_ERRMSG("dt_stack");
        xs[1] = NULL;
        CHECK_ST(dt_cat(2, xs, 0, &o), DT_ERR_ARG); CHECK_ERRMSG("dt_cat");
        CHECK_ST(dt_cat(2, NULL, 0, &o), DT_ERR_ARG); CHECK_ERRMSG("dt_cat");
        xs[1] = y3;
        CHECK_ST(dt_stack(2, xs, 3, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_stack");
        CHECK(dt_cat(0, xs, 0, &o) != DT_OK, "dt_cat of 0 tensors must fail");
        CHECK_ERRMSG("dt_cat");
        xs3[0] = x;
        xs3[1] = y3;
        xs3[2] = x;
        CHECK_ST(dt_stack(3, xs3, 0, &o), DT_ERR_SHAPE); CHECK_ERRMSG("dt_stack");
        {
            dt_tensor *outs[2] = { NULL, NULL };
            CHECK_ST(dt_split(NULL, 0, 2, s_bad, outs), DT_ERR_ARG); CHECK_ERRMSG("dt_split");
            CHECK_ST(dt_split(x, 0, 2, NULL, outs), DT_ERR_ARG); CHECK_ERRMSG("dt_split");
            CHECK_ST(dt_split(x, 0, 2, s_bad, NULL), DT_ERR_ARG); CHECK_ERRMSG("dt_split");
            CHECK_ST(dt_split(x, 0, 2, s_bad, outs), DT_ERR_SHAPE); CHECK_ERRMSG("dt_split");
            CHECK_ST(dt_split(x, 0, 2, s_neg, outs), DT_ERR_SHAPE); CHECK_ERRMSG("dt_split");
            CHECK_ST(dt_split(x, 2, 2, s_bad, outs), DT_ERR_SHAPE); CHECK_ERRMSG("dt_split");
            CHECK(outs[0] == NULL && outs[1] == NULL, "outs must stay NULL");
        }
        CHECK(o == NULL, "*out must stay NULL after refusals");
    }
    dt_tensor_destroy(o);
    dt_tensor_destroy(x);
    dt_tensor_destroy(y3);
    dt_tensor_destroy(y5);
    dt_tensor_destroy(y64);
    dt_tensor_destroy(ym);
    dtt_mesh_close(&m2);
    dtt_mesh_close(&m);
}

/* pytorch #179502: a reshape whose shards do not line up (sharded inner dim
   merged, uneven split) must move the data and give the right values;
   explicit, every rank count, both meshes */
static void test_reshape_named(void)
{
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, nd;
    static const rcase nc[] = {
        { 2, { 4, 6 }, 1, { 24 } },            /* S(1): inner dim merged */
        { 3, { 2, 3, 4 }, 2, { 6, 4 } },       /* S(1): merged with dim 0 */
        { 2, { 5, 3 }, 1, { 15 } },            /* S(0) uneven: chunks of 15 differ from 3 x chunks of 5 */
        { 1, { 10 }, 2, { 2, 5 } },            /* split an uneven S(0) */
        { 2, { 6, 4 }, 2, { 4, 6 } },
    };
    for (nd = 1; nd <= 2; nd++)
        for (f = 0, nf = dtt_factorizations(dtt_np, nd, fac, 64); f < nf; f++) {
            dtt_mesh m;
            int c, k;
            if (nd == 2 && f != nf / 2) continue;
            if (!dtt_mesh_open(&m, g_comm, nd, &fac[f * DT_MAX_MESH_DIMS])) continue;
            for (c = 0; c < NELEM(nc); c++)
                for (k = 0; k < nc[c].ndim; k++) {
                    dt_placement pl[DT_MAX_MESH_DIMS];
                    memset(pl, 0, sizeof pl);
                    pl[0] = dt_shard(k);
                    if (nd == 2) pl[1] = dt_shard(nc[c].ndim - 1 - k);
                    run_reshape(&m, DT_F64, nc[c].ndim, nc[c].s, pl, nc[c].nq, nc[c].q, c);
                    pl[nd - 1] = dt_partial(DT_SUM);
                    run_reshape(&m, DT_F32, nc[c].ndim, nc[c].s, pl, nc[c].nq, nc[c].q, c + 1);
                }
            dtt_mesh_close(&m);
        }
}

static double g_t0 = 0;

int main(int argc, char **argv)
{
    double t;
    dtt_init(&argc, &argv, "ops_views");
    g_seed = dtt_seed(argc, argv, g_seed);
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    t = g_t0 = MPI_Wtime();
    if (g_comm) {
        sweep(test_permute, 1.0, 0.1, 0x61);
        dtt_lap("permute", &t);
        sweep(test_reshape, 1.0, 0.15, 0x62);
        dtt_lap("reshape", &t);
        test_reshape_named();
        dtt_lap("reshape_named", &t);
        sweep(test_squeeze, 1.0, 0.15, 0x63);
        dtt_lap("squeeze", &t);
        sweep(test_narrow_split, 1.0, 0.1, 0x64);
        dtt_lap("narrow_split", &t);
        sweep(test_cat_stack, 1.0, 0.1, 0x65);
        dtt_lap("cat_stack", &t);
        test_reuse_alias_wrong();
        test_bad_input();
        dtt_lap("errors", &t);
    }
    if (getenv("DT_TEST_VERBOSE") && dtt_rank == 0)
        fprintf(stderr, "ops_views: %ld cases (reshape: %ld kept, %ld moved), %.1f s\n", g_cases, g_reshape_kept,
                g_reshape_moved, MPI_Wtime() - g_t0);
    dt_comm_destroy(g_comm);
    return dtt_finish();
}
