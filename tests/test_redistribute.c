/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_redistribute.c -- redistribution between every pair of placements.

   For every mesh shape whose product is the number of ranks (every pair of
   {R, S(0..ndim-1), P(SUM)} per mesh dim on 1-D and 2-D meshes, and for 1-D
   and 2-D tensors on 3-D meshes; sampled for 3-D tensors on 3-D and on 4-D; dtypes rotate through the pairs) and 0-D to 3-D tensor shapes
   with 0-size dims, size 1, primes and divisible sizes:
   build the source with dt_tensor_from_local from closed-form values at the
   global indices of an independent torch.chunk layout (Partial(SUM) sources
   hold parts that sum exactly to the value), redistribute, and check every
   local element, the local shape/offset, the descriptor, dt_tensor_gather on
   every rank and, for transitions without Partial, that the bytes received
   equal the lower bound |dst box| - |dst box & src box| exactly.

   Then: the Shard->Partial refusal, named multi-dim changes (and 5-D/8-D
   tensors), all dtypes, Partial SUM/AVG/MAX/MIN -> Replicate/Shard with exact
   values, Replicate -> Partial semantics, integer AVG near the dtype's range,
   mixed Partials ([P(max), P(sum)]) reduced in the documented mesh-dim
   order, reuse of *out, begin/end (several in flight, the reduce pair, the
   misuses), Partial(op1) -> Partial(op2), and seeded random chains
   (random mesh, shape, dtype, placements incl. Partial) that must come back
   bit-identical.

   At 3 ranks the exchanges run pipelined (DTENSOR_PIPE_CHUNK=64).

   Options: --quick (or DT_TEST_QUICK=1) shrinks the sweep; --seed N (or
   DT_TEST_SEED) seeds the random tests. */
#define _POSIX_C_SOURCE 200112L /* setenv */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

static dt_comm *g_comm = NULL;
static uint64_t g_seed = 12345;

/* ------------------------------------------------------------ the sweep */

static int ipow(int b, int e)
{
    int r = 1;
    while (e-- > 0) r *= b;
    return r;
}

static int g_dtype_rot = 0;

/* all pairs (or a fraction `fr` of them, chosen by a seeded rng, identical on every rank) */
static void sweep(const dtt_mesh *m, int ndim, const int64_t *shape, double fr, dtt_rng *rng)
{
    int np = ipow(ndim + 2, m->nd), i, j;
    dt_placement src[DT_MAX_MESH_DIMS], dst[DT_MAX_MESH_DIMS];
    for (i = 0; i < np; i++) {
        for (j = 0; j < np; j++) {
            unsigned flags = DTT_BYTES;
            dt_dtype t;
            if (fr < 1.0 && (double)(dtt_next(rng) >> 11) / 9007199254740992.0 >= fr) continue;
            dtt_placements_of(i, m->nd, ndim, src);
            dtt_placements_of(j, m->nd, ndim, dst);
            if (dtt_refused(m->nd, src, dst)) continue;
            t = (dt_dtype)(g_dtype_rot++ % DTT_NUM_REAL_DTYPES);
            if (g_dtype_rot % 2) flags |= DTT_BORROW;
            if (g_dtype_rot % 3 == 0) flags |= DTT_LOCALSHAPE;
            dtt_run_pair(m, t, ndim, shape, src, dst, flags, NULL);
        }
    }
}

static const int64_t shapes1[][1] = { { 0 }, { 1 }, { 5 }, { 7 }, { 13 }, { 24 } };
static const int64_t shapes2[][2] = { { 7, 5 }, { 0, 3 }, { 6, 4 }, { 1, 13 } };
static const int64_t shapes3[][3] = { { 3, 5, 2 }, { 2, 0, 3 }, { 4, 1, 7 } };

/* fractions of the pairs run, per mesh rank: full run / --quick */
static double frac(double full, double quick) { return dtt_quick ? quick : full; }

/* a 2-D tensor pair on a 2-D mesh given as dtt_option codes {src0, src1, dst0, dst1} */
static void run_coded_pair(const dtt_mesh *m, dt_dtype t, const int64_t *shape, const int *code)
{
    dt_placement src[DT_MAX_MESH_DIMS], dst[DT_MAX_MESH_DIMS];
    memset(src, 0, sizeof src);
    memset(dst, 0, sizeof dst);
    src[0] = dtt_option(code[0], 2);
    src[1] = dtt_option(code[1], 2);
    dst[0] = dtt_option(code[2], 2);
    dst[1] = dtt_option(code[3], 2);
    dtt_run_pair(m, t, 2, shape, src, dst, DTT_BYTES, NULL);
}

static void test_sweep(void)
{
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, s, nd;
    int64_t scalar[1] = { 0 };
    dtt_rng rng;
    rng.s = g_seed ^ 0x5EEDu;
    for (nd = 1; nd <= 4; nd++) {
        nf = dtt_factorizations(dtt_np, nd, fac, 64);
        for (f = 0; f < nf; f++) {
            dtt_mesh m;
            if (nd == 4 && f >= (dtt_quick ? 1 : 3)) break;
            if (nd == 3 && dtt_quick && f >= 2) break;
            if (!dtt_mesh_open(&m, g_comm, nd, &fac[f * DT_MAX_MESH_DIMS])) continue;
            if (nd == 1) { /* exhaustive (1-D tensors and one 2-D shape with --quick) */
                for (s = 0; s < NELEM(shapes1); s++) sweep(&m, 1, shapes1[s], 1.0, &rng);
                for (s = 0; s < NELEM(shapes2); s++) sweep(&m, 2, shapes2[s], frac(1.0, s ? 0.3 : 1.0), &rng);
                for (s = 0; s < NELEM(shapes3); s++) sweep(&m, 3, shapes3[s], frac(1.0, 0.1), &rng);
                sweep(&m, 0, scalar, 1.0, &rng);
            } else if (nd == 2) { /* exhaustive (sampled with --quick) */
                double q = f == nf / 2 ? 1.0 : 0.3; /* --quick: mostly one mesh shape */
                for (s = 0; s < NELEM(shapes1); s++) sweep(&m, 1, shapes1[s], frac(1.0, 0.2 * q), &rng);
                for (s = 0; s < NELEM(shapes2); s++) sweep(&m, 2, shapes2[s], frac(1.0, 0.04 * q), &rng);
                for (s = 0; s < NELEM(shapes3); s++) sweep(&m, 3, shapes3[s], frac(1.0, 0.006 * q), &rng);
                sweep(&m, 0, scalar, 1.0, &rng);
            } else if (nd == 3) { /* 1-D and 2-D tensors exhaustive; 3-D tensors (125^2 pairs) sampled */
                sweep(&m, 1, shapes1[2], frac(1.0, 0.05), &rng);
                sweep(&m, 1, shapes1[4], frac(1.0, 0.05), &rng);
                for (s = 0; s < NELEM(shapes2); s++) sweep(&m, 2, shapes2[s], frac(s ? 0.1 : 1.0, s ? 0.0 : 0.005), &rng);
                sweep(&m, 3, shapes3[0], frac(0.05, 0.001), &rng);
                sweep(&m, 3, shapes3[1], frac(0.02, 0.0), &rng);
            } else {
                sweep(&m, 1, shapes1[3], frac(0.1, 0.0), &rng);
                sweep(&m, 2, shapes2[2], frac(0.02, 0.0005), &rng);
            }
            dtt_mesh_close(&m);
        }
    }
}

/* ------------------------------------------------------------ refusal */

static void test_refusal(void)
{
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, k;
    for (f = 0, nf = dtt_factorizations(dtt_np, 2, fac, 64); f < nf; f++) {
        dtt_mesh m;
        if (!dtt_mesh_open(&m, g_comm, 2, &fac[f * DT_MAX_MESH_DIMS])) continue;
        for (k = 0; k < 2; k++) {
            dt_tensor_desc d;
            dt_tensor *a = NULL, *b = NULL, *sentinel = (dt_tensor *)&m;
            dt_placement dst[DT_MAX_MESH_DIMS];
            memset(&d, 0, sizeof d);
            d.dtype = DT_F32;
            d.ndim = 2;
            d.shape[0] = 9;
            d.shape[1] = 4;
            d.placements[k] = dt_shard(k);
            dtt_ctx("refusal mesh %s shard on mesh dim %d", m.name, k);
            CHECK_OK(dt_tensor_zeros(m.mesh, &d, &a));
            memset(dst, 0, sizeof dst);
            dst[k] = dt_partial(DT_SUM);
            CHECK_ST(dt_tensor_redistribute(a, dst, &b), DT_ERR_PLACEMENT);
            CHECK(b == NULL, "out must stay NULL");
            CHECK_ERRMSG("dt_tensor_redistribute");
            b = sentinel;
            dst[k] = dt_partial(DT_MAX);
            CHECK_ST(dt_tensor_redistribute(a, dst, &b), DT_ERR_PLACEMENT);
            CHECK(b == sentinel, "out must stay untouched");
            b = NULL;
            /* the other mesh dim Partial is fine: Replicate -> Partial */
            memset(dst, 0, sizeof dst);
            dst[k] = dt_shard(k);
            dst[1 - k] = dt_partial(DT_SUM);
            CHECK_OK(dt_tensor_redistribute(a, dst, &b));
            dt_tensor_destroy(b);
            dt_tensor_destroy(a);
        }
        dtt_mesh_close(&m);
    }
}

/* ------------------------------------------------------------ named multi-dim changes */

static void test_multidim(void)
{
    static const int pairs[][4] = {
        /* src0, src1, dst0, dst1 as option codes: 0 R, 1 S0, 2 S1, 3 P */
        { 1, 2, 2, 1 }, { 1, 1, 0, 2 }, { 1, 2, 0, 0 }, { 2, 1, 1, 1 }, { 1, 0, 0, 1 },
        { 0, 0, 1, 2 }, { 1, 1, 2, 2 }, { 2, 2, 1, 1 }, { 1, 1, 1, 1 }, { 0, 1, 1, 0 },
        { 2, 1, 1, 2 }, { 1, 2, 1, 1 }, { 3, 1, 0, 0 }, { 1, 3, 2, 0 }, { 3, 3, 1, 2 },
    };
    static const int64_t shapes[][2] = { { 37, 23 }, { 48, 24 }, { 5, 3 } };
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, p, s;
    for (f = 0, nf = dtt_factorizations(dtt_np, 2, fac, 64); f < nf; f++) {
        dtt_mesh m;
        if (dtt_quick && f != nf / 2) continue;
        if (!dtt_mesh_open(&m, g_comm, 2, &fac[f * DT_MAX_MESH_DIMS])) continue;
        for (s = 0; s < NELEM(shapes); s++) {
            if (dtt_quick && s == 1) continue;
            for (p = 0; p < NELEM(pairs); p++) run_coded_pair(&m, s == 1 ? DT_F64 : DT_F32, shapes[s], pairs[p]);
        }
        /* negative shard dims count from the end */
        {
            dt_placement src[DT_MAX_MESH_DIMS], dst[DT_MAX_MESH_DIMS];
            int64_t sh3[3] = { 5, 6, 7 };
            memset(src, 0, sizeof src);
            memset(dst, 0, sizeof dst);
            src[0] = dt_shard(-1);
            src[1] = dt_shard(-3);
            dst[0] = dt_shard(1);
            dst[1] = dt_shard(-1);
            dtt_run_pair(&m, DT_I32, 3, sh3, src, dst, DTT_BYTES, NULL);
        }
        dtt_mesh_close(&m);
    }
    /* tensors of DT_MAX_DIMS (8) and 5 dims */
    {
        int one[1];
        dtt_mesh m;
        one[0] = dtt_np;
        if (dtt_mesh_open(&m, g_comm, 1, one)) {
            int64_t sh8[8] = { 2, 1, 3, 2, 1, 2, 3, 5 }, sh5[5] = { 3, 4, 1, 2, 9 };
            dt_placement a[DT_MAX_MESH_DIMS], b[DT_MAX_MESH_DIMS];
            int i;
            for (i = 0; i < 8; i++) {
                memset(a, 0, sizeof a);
                memset(b, 0, sizeof b);
                a[0] = dt_shard(i);
                b[0] = i % 3 == 0 ? dt_replicate() : dt_shard(7 - i);
                dtt_run_pair(&m, (dt_dtype)(i % DTT_NUM_REAL_DTYPES), 8, sh8, a, b, DTT_BYTES, NULL);
                if (i < 5) {
                    b[0] = dt_shard((i + 2) % 5);
                    dtt_run_pair(&m, DT_F32, 5, sh5, a, b, DTT_BYTES, NULL);
                }
            }
            a[0] = dt_partial(DT_SUM);
            b[0] = dt_shard(7);
            dtt_run_pair(&m, DT_F64, 8, sh8, a, b, DTT_BYTES, NULL);
            dtt_mesh_close(&m);
        }
    }
    /* a 3-D mesh where there is one */
    for (f = 0, nf = dtt_factorizations(dtt_np, 3, fac, 64); f < nf && f < (dtt_quick ? 1 : 4); f++) {
        dtt_mesh m;
        dt_placement src[DT_MAX_MESH_DIMS], dst[DT_MAX_MESH_DIMS];
        int64_t sh[3] = { 11, 8, 3 };
        if (!dtt_mesh_open(&m, g_comm, 3, &fac[f * DT_MAX_MESH_DIMS])) continue;
        memset(src, 0, sizeof src);
        memset(dst, 0, sizeof dst);
        src[0] = dt_shard(0); src[1] = dt_shard(1); src[2] = dt_shard(0);
        dst[0] = dt_shard(1); dst[1] = dt_shard(0); dst[2] = dt_shard(2);
        dtt_run_pair(&m, DT_F32, 3, sh, src, dst, DTT_BYTES, NULL);
        dtt_run_pair(&m, DT_F32, 3, sh, dst, src, DTT_BYTES, NULL);
        memset(dst, 0, sizeof dst);
        dtt_run_pair(&m, DT_I64, 3, sh, src, dst, DTT_BYTES, NULL);
        dst[1] = dt_partial(DT_SUM);
        src[1] = dt_partial(DT_SUM);
        dtt_run_pair(&m, DT_BF16, 3, sh, src, dst, DTT_BYTES, NULL);
        dtt_mesh_close(&m);
    }
}

/* ------------------------------------------------------------ all dtypes */

static void test_dtypes(void)
{
    static const int pairs1[][2] = { { 1, 0 }, { 0, 1 }, { 1, 2 }, { 2, 1 }, { 3, 0 }, { 3, 1 }, { 0, 3 }, { 3, 2 } };
    static const int pairs2[][4] = { { 1, 2, 2, 1 }, { 3, 1, 0, 0 }, { 0, 3, 1, 1 }, { 1, 1, 0, 2 } };
    int64_t sh[2] = { 13, 6 };
    int fac[64 * DT_MAX_MESH_DIMS], nf, ti, p, f;
    dtt_mesh m;
    int one[1];
    one[0] = dtt_np;
    if (dtt_mesh_open(&m, g_comm, 1, one)) {
        for (ti = 0; ti < DTT_NUM_REAL_DTYPES; ti++) {
            for (p = 0; p < NELEM(pairs1); p++) {
                dt_placement src[DT_MAX_MESH_DIMS], dst[DT_MAX_MESH_DIMS];
                memset(src, 0, sizeof src);
                memset(dst, 0, sizeof dst);
                src[0] = dtt_option(pairs1[p][0], 2);
                dst[0] = dtt_option(pairs1[p][1], 2);
                dtt_run_pair(&m, (dt_dtype)ti, 2, sh, src, dst, DTT_BYTES | (p % 2 ? DTT_BORROW : 0), NULL);
            }
        }
        dtt_mesh_close(&m);
    }
    for (f = 0, nf = dtt_factorizations(dtt_np, 2, fac, 64); f < nf; f++) {
        if (dtt_quick && f != nf / 2) continue;
        if (!dtt_mesh_open(&m, g_comm, 2, &fac[f * DT_MAX_MESH_DIMS])) continue;
        for (ti = 0; ti < DTT_NUM_REAL_DTYPES; ti++) {
            for (p = 0; p < NELEM(pairs2); p++) run_coded_pair(&m, (dt_dtype)ti, sh, pairs2[p]);
        }
        dtt_mesh_close(&m);
    }
}

/* ------------------------------------------------------------ Partial ops */

/* part r (the coordinate along the partial mesh dim) of element g, value units */
static int64_t op_part(dt_dtype t, int64_t g, int r)
{
    int64_t s = (int64_t)((g * 5 + r * 11 + 3) % 17) - 8;
    if (t == DT_U8) return (int64_t)((g * 5 + r * 11 + 3) % 32);
    if (t == DT_I64 && r == 0) s += g * 4294967311LL * ((g % 2) ? 1 : -1);
    return s;
}

/* writes the expected reduced value as element 0 of `want` (dtype t) */
static void op_expect(dt_dtype t, dt_reduce op, int64_t g, int n, void *want)
{
    int64_t acc = op_part(t, g, 0);
    int r;
    for (r = 1; r < n; r++) {
        int64_t v = op_part(t, g, r);
        if (op == DT_SUM || op == DT_AVG) acc += v;
        else if (op == DT_MAX) acc = v > acc ? v : acc;
        else acc = v < acc ? v : acc;
    }
    if (op == DT_AVG) {
        if (dtt_is_float(t)) {
            dtt_store_d(t, want, 0, (double)acc * dtt_scale(t) / n);
            return;
        }
        acc /= n; /* C99: truncation toward zero */
    }
    dtt_store(t, want, 0, acc);
}

static int64_t rep_val(dt_dtype t, int64_t g) { return op_part(t, g, 3); } /* small values */

/* Partial(op) on mesh dim pk (other mesh dim: `other`) -> dst, exact values */
static void partial_case(const dtt_mesh *m, dt_dtype t, dt_reduce op, int pk, dt_placement other,
                         const dt_placement *dst, int ndim, const int64_t *shape)
{
    dt_tensor_desc d;
    dt_tensor *a = NULL, *b = NULL;
    dt_placement src[DT_MAX_MESH_DIMS];
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], n, i;
    size_t es = dtt_size(t);
    unsigned char *buf, want[8];
    char s1[64], s2[64];
    int k;
    static const char *opn[] = { "sum", "avg", "max", "min" };
    memset(src, 0, sizeof src);
    for (k = 0; k < m->nd && k < DT_MAX_MESH_DIMS; k++) src[k] = other;
    src[pk] = dt_partial(op);
    dtt_ctx("partial %s mesh %s %s %s -> %s", opn[op], m->name, dtt_dtname(t),
            dtt_pl_str(src, m->nd, s1, sizeof s1), dtt_pl_str(dst, m->nd, s2, sizeof s2));
    dtt_ref_layout(m->nd, m->shape, m->coord, ndim, shape, src, ls, lo);
    n = dtt_numel(ndim, ls);
    buf = (unsigned char *)dtt_malloc((size_t)n * es);
    for (i = 0; i < n; i++)
        dtt_store(t, buf, (size_t)i, op_part(t, dtt_gidx(ndim, shape, ls, lo, i), m->coord[pk]));
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = ndim;
    for (k = 0; k < ndim; k++) d.shape[k] = shape[k];
    for (k = 0; k < m->nd; k++) d.placements[k] = src[k];
    CHECK_OK(dt_tensor_from_local(m->mesh, &d, buf, DT_BORROW, &a));
    CHECK_OK(dt_tensor_redistribute(a, dst, &b));
    if (b) {
        const unsigned char *data = (const unsigned char *)dt_tensor_data(b);
        int64_t dls[DT_MAX_DIMS], dlo[DT_MAX_DIMS], gls[DT_MAX_DIMS];
        dtt_ref_layout(m->nd, m->shape, m->coord, ndim, shape, dst, dls, dlo);
        dt_tensor_local_shape(b, gls);
        for (k = 0; k < ndim; k++) CHECK(gls[k] == dls[k], "local_shape[%d] %lld want %lld", k, (long long)gls[k], (long long)dls[k]);
        n = dtt_numel(ndim, dls);
        for (i = 0; i < n; i++) {
            int64_t g = dtt_gidx(ndim, shape, dls, dlo, i);
            int ok;
            op_expect(t, op, g, m->shape[pk], want);
            if (op == DT_AVG && dtt_is_float(t))
                ok = dtt_close(t, dtt_load_d(t, data, (size_t)i), dtt_load_d(t, want, 0), 2.0);
            else
                ok = memcmp(data + (size_t)i * es, want, es) == 0 ||
                     (dtt_is_float(t) && dtt_load_d(t, data, (size_t)i) == dtt_load_d(t, want, 0));
            if (!ok) {
                dtt_fail(__FILE__, __LINE__, "reduced value", "global %lld: got %.17g want %.17g", (long long)g,
                         dtt_load_d(t, data, (size_t)i), dtt_load_d(t, want, 0));
                break;
            }
        }
    }
    dt_tensor_destroy(b);
    dt_tensor_destroy(a);
    free(buf);
}

static void test_partial_ops(void)
{
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, op, ti, pk;
    int64_t sh[2] = { 7, 12 };
    dtt_mesh m;
    int one[1];
    one[0] = dtt_np;
    if (dtt_mesh_open(&m, g_comm, 1, one)) {
        for (op = 0; op < 4; op++) {
            for (ti = 0; ti < DTT_NUM_REAL_DTYPES; ti++) {
                dt_placement dst[DT_MAX_MESH_DIMS];
                memset(dst, 0, sizeof dst);
                partial_case(&m, (dt_dtype)ti, (dt_reduce)op, 0, dt_replicate(), dst, 2, sh);
                dst[0] = dt_shard(0);
                partial_case(&m, (dt_dtype)ti, (dt_reduce)op, 0, dt_replicate(), dst, 2, sh);
                dst[0] = dt_shard(1);
                partial_case(&m, (dt_dtype)ti, (dt_reduce)op, 0, dt_replicate(), dst, 2, sh);
            }
        }
        dtt_mesh_close(&m);
    }
    for (f = 0, nf = dtt_factorizations(dtt_np, 2, fac, 64); f < nf; f++) {
        if (dtt_quick && f != nf / 2) continue;
        if (!dtt_mesh_open(&m, g_comm, 2, &fac[f * DT_MAX_MESH_DIMS])) continue;
        for (op = 0; op < 4; op++) {
            for (ti = 0; ti < DTT_NUM_REAL_DTYPES; ti++) {
                for (pk = 0; pk < 2; pk++) {
                    dt_placement dst[DT_MAX_MESH_DIMS];
                    if ((ti + pk + op) % 2 && dtt_quick) continue;
                    memset(dst, 0, sizeof dst);
                    dst[1 - pk] = dt_shard(1);
                    /* P on pk, S1 on the other -> R, S1 */
                    partial_case(&m, (dt_dtype)ti, (dt_reduce)op, pk, dt_shard(1), dst, 2, sh);
                    /* P on pk, R on the other -> S0 (reduce-scatter) on pk */
                    memset(dst, 0, sizeof dst);
                    dst[pk] = dt_shard(0);
                    partial_case(&m, (dt_dtype)ti, (dt_reduce)op, pk, dt_replicate(), dst, 2, sh);
                }
            }
        }
        dtt_mesh_close(&m);
    }
}

/* Replicate -> Partial: SUM keeps the value on coordinate 0 and zeros elsewhere;
   AVG/MAX/MIN keep it everywhere. Then back to Replicate. */
static void test_rep_to_partial(void)
{
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, op, ti, pk, nd;
    int64_t sh[2] = { 5, 9 };
    static const char *opn[] = { "sum", "avg", "max", "min" };
    for (nd = 1; nd <= 2; nd++) {
        for (f = 0, nf = dtt_factorizations(dtt_np, nd, fac, 64); f < nf; f++) {
            dtt_mesh m;
            if (dtt_quick && f != nf / 2) continue;
            if (!dtt_mesh_open(&m, g_comm, nd, &fac[f * DT_MAX_MESH_DIMS])) continue;
            for (op = 0; op < 4; op++) {
                for (ti = 0; ti < DTT_NUM_REAL_DTYPES; ti++) {
                    for (pk = 0; pk < nd; pk++) {
                        dt_tensor_desc d;
                        dt_tensor *a = NULL, *b = NULL, *c = NULL;
                        dt_placement dst[DT_MAX_MESH_DIMS];
                        dt_dtype t = (dt_dtype)ti;
                        int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], n, i;
                        size_t es = dtt_size(t);
                        unsigned char *buf;
                        int k;
                        memset(&d, 0, sizeof d);
                        d.dtype = t;
                        d.ndim = 2;
                        d.shape[0] = sh[0];
                        d.shape[1] = sh[1];
                        if (nd == 2) d.placements[1 - pk] = dt_shard(1);
                        dtt_ctx("R->P%s mesh %s %s mesh dim %d", opn[op], m.name, dtt_dtname(t), pk);
                        dtt_ref_layout(m.nd, m.shape, m.coord, 2, sh, d.placements, ls, lo);
                        n = dtt_numel(2, ls);
                        buf = (unsigned char *)dtt_malloc((size_t)n * es);
                        for (i = 0; i < n; i++) dtt_store(t, buf, (size_t)i, rep_val(t, dtt_gidx(2, sh, ls, lo, i)));
                        CHECK_OK(dt_tensor_from_local(m.mesh, &d, buf, DT_COPY, &a));
                        for (k = 0; k < DT_MAX_MESH_DIMS; k++) dst[k] = d.placements[k];
                        dst[pk] = dt_partial((dt_reduce)op);
                        dt_comm_reset_stats(g_comm);
                        CHECK_OK(dt_tensor_redistribute(a, dst, &b));
                        {
                            dt_comm_stats st;
                            dt_comm_get_stats(g_comm, &st);
                            CHECK(st.bytes_recv == 0 && st.bytes_sent == 0, "R->P is local: %llu bytes",
                                  (unsigned long long)st.bytes_recv);
                        }
                        if (b) {
                            const void *data = dt_tensor_data(b);
                            CHECK(dt_tensor_local_numel(b) == (size_t)n, "local numel");
                            for (i = 0; i < n && data; i++) {
                                int64_t want = rep_val(t, dtt_gidx(2, sh, ls, lo, i));
                                if (op == DT_SUM && m.coord[pk] != 0) want = 0;
                                if (dtt_load(t, data, (size_t)i) != want) {
                                    dtt_fail(__FILE__, __LINE__, "R->P local value", "elem %lld = %.17g want %lld",
                                             (long long)i, dtt_load_d(t, data, (size_t)i) / dtt_scale(t), (long long)want);
                                    break;
                                }
                            }
                            /* back */
                            CHECK_OK(dt_tensor_redistribute(b, d.placements, &c));
                            data = c ? dt_tensor_data(c) : NULL;
                            for (i = 0; i < n && data; i++) {
                                int64_t want = rep_val(t, dtt_gidx(2, sh, ls, lo, i));
                                int ok = op == DT_AVG && dtt_is_float(t)
                                       ? dtt_close(t, dtt_load_d(t, data, (size_t)i), (double)want * dtt_scale(t), 2.0)
                                       : dtt_load(t, data, (size_t)i) == want;
                                if (!ok) {
                                    dtt_fail(__FILE__, __LINE__, "R->P->R value", "elem %lld = %.17g want %lld",
                                             (long long)i, dtt_load_d(t, data, (size_t)i) / dtt_scale(t), (long long)want);
                                    break;
                                }
                            }
                        }
                        dt_tensor_destroy(c);
                        dt_tensor_destroy(b);
                        dt_tensor_destroy(a);
                        free(buf);
                    }
                }
            }
            dtt_mesh_close(&m);
        }
    }
}

/* Replicate -> Partial(AVG) -> Replicate / Shard must give the value back for
   integers near the top of their range too: avg(v, v, ..., v) == v. A sum
   taken in the element dtype overflows. */
static void test_avg_overflow(void)
{
    static const dt_dtype types[3] = { DT_U8, DT_I32, DT_I64 };
    dtt_mesh m;
    int one[1], ti, back;
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    for (ti = 0; ti < 3; ti++) {
        for (back = 0; back < 2; back++) {
            dt_dtype t = types[ti];
            dt_tensor_desc d;
            dt_tensor *a = NULL, *b = NULL, *c = NULL;
            dt_placement p[DT_MAX_MESH_DIMS], q[DT_MAX_MESH_DIMS];
            unsigned char buf[8 * 8];
            int64_t v[8], ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], i, n;
            for (i = 0; i < 8; i++)
                v[i] = t == DT_U8 ? 249 - i : t == DT_I32 ? (i % 2 ? -2147483600 + i : 2147483600 - i)
                     : (i % 2 ? -(INT64_C(1) << 62) - i : (INT64_C(1) << 62) + i);
            for (i = 0; i < 8; i++) dtt_store(t, buf, (size_t)i, v[i]);
            memset(&d, 0, sizeof d);
            d.dtype = t;
            d.ndim = 1;
            d.shape[0] = 8;
            dtt_ctx("avg_overflow %s R -> Pavg -> %s", dtt_dtname(t), back ? "S0" : "R");
            CHECK_OK(dt_tensor_from_local(m.mesh, &d, buf, DT_BORROW, &a));
            memset(p, 0, sizeof p);
            memset(q, 0, sizeof q);
            p[0] = dt_partial(DT_AVG);
            if (back) q[0] = dt_shard(0);
            if (a) CHECK_OK(dt_tensor_redistribute(a, p, &b));
            if (b) CHECK_OK(dt_tensor_redistribute(b, q, &c));
            if (c) {
                dtt_ref_layout(1, m.shape, m.coord, 1, d.shape, q, ls, lo);
                n = ls[0];
                for (i = 0; i < n; i++) {
                    int64_t got = dtt_load(t, dt_tensor_data(c), (size_t)i);
                    if (got != v[lo[0] + i]) {
                        dtt_fail(__FILE__, __LINE__, "avg of equal values", "global %lld: got %lld want %lld",
                                 (long long)(lo[0] + i), (long long)got, (long long)v[lo[0] + i]);
                        break;
                    }
                }
            }
            dt_tensor_destroy(c);
            dt_tensor_destroy(b);
            dt_tensor_destroy(a);
        }
    }
    dtt_mesh_close(&m);
}

/* ------------------------------------------------------------ mixed Partials: the reduction order */

/* x local on mesh coordinate (i, j): v(i, j) = (i + 1) * (j % 2 ? -1 : 1) + 3 j, on [P(max), P(sum)].
   Documented: -> [R, R] is sum_j max_i v; -> [P(max), R] -> [R, R] is max_i sum_j v (another number
   whenever the mesh has 2+ ranks on both dims). */
static double mixed_v(int i, int j) { return (double)(i + 1) * (j % 2 ? -1.0 : 1.0) + 3.0 * j; }

static void test_mixed_partial_order(void)
{
    int fac[64 * DT_MAX_MESH_DIMS], f, nf;
    for (f = 0, nf = dtt_factorizations(dtt_np, 2, fac, 64); f < nf; f++) {
        dtt_mesh m;
        dt_tensor_desc d;
        dt_tensor *x = NULL, *y = NULL, *z = NULL, *w = NULL;
        dt_placement src[DT_MAX_MESH_DIMS], mid[DT_MAX_MESH_DIMS], rep[DT_MAX_MESH_DIMS];
        double local, want_sm = 0.0, want_ms = -1e300;
        int i, j;
        if (!dtt_mesh_open(&m, g_comm, 2, &fac[f * DT_MAX_MESH_DIMS])) continue;
        for (j = 0; j < m.shape[1]; j++) { /* sum over dim 1 of max over dim 0 */
            double mx = -1e300;
            for (i = 0; i < m.shape[0]; i++) mx = mixed_v(i, j) > mx ? mixed_v(i, j) : mx;
            want_sm += mx;
        }
        for (i = 0; i < m.shape[0]; i++) { /* max over dim 0 of sum over dim 1 */
            double sm = 0.0;
            for (j = 0; j < m.shape[1]; j++) sm += mixed_v(i, j);
            want_ms = sm > want_ms ? sm : want_ms;
        }
        local = mixed_v(m.coord[0], m.coord[1]);
        memset(&d, 0, sizeof d);
        d.dtype = DT_F64;
        memset(src, 0, sizeof src);
        memset(mid, 0, sizeof mid);
        memset(rep, 0, sizeof rep);
        src[0] = dt_partial(DT_MAX);
        src[1] = dt_partial(DT_SUM);
        mid[0] = dt_partial(DT_MAX);
        memcpy(d.placements, src, sizeof src);
        dtt_ctx("[P(max), P(sum)] on %s", m.name);
        CHECK_OK(dt_tensor_from_local(m.mesh, &d, &local, DT_COPY, &x));
        if (x) CHECK_OK(dt_tensor_redistribute(x, rep, &y));
        if (y) CHECK(*(const double *)dt_tensor_data(y) == want_sm, "-> [R, R]: %g, want sum_j max_i = %g",
                     *(const double *)dt_tensor_data(y), want_sm);
        if (x) CHECK_OK(dt_tensor_redistribute(x, mid, &z));
        if (z) CHECK_OK(dt_tensor_redistribute(z, rep, &w));
        if (w) CHECK(*(const double *)dt_tensor_data(w) == want_ms,
                     "-> [P(max), R] -> [R, R]: %g, want max_i sum_j = %g", *(const double *)dt_tensor_data(w),
                     want_ms);
        dt_tensor_destroy(w);
        dt_tensor_destroy(z);
        dt_tensor_destroy(y);
        dt_tensor_destroy(x);
        dtt_mesh_close(&m);
    }
}

/* ------------------------------------------------------------ reuse of *out */

static void test_reuse(void)
{
    static const int cases[][4] = { { 1, 0, 0, 0 }, { 3, 0, 0, 0 }, { 1, 2, 0, 0 }, { 0, 1, 0, 0 },
                                    { 1, 0, 2, 0 }, { 3, 1, 0, 0 }, { 1, 2, 2, 1 } };
    int fac[64 * DT_MAX_MESH_DIMS], c, nd;
    int64_t sh[2] = { 10, 7 };
    for (nd = 1; nd <= 2; nd++) {
        dtt_mesh m;
        if (dtt_factorizations(dtt_np, nd, fac, 64) < 1) continue;
        if (nd == 2 && dtt_factorizations(dtt_np, 2, fac, 64) > 2)
            memmove(fac, fac + DT_MAX_MESH_DIMS, sizeof(int) * DT_MAX_MESH_DIMS); /* e.g. 2xN/2, not 1xN */
        if (!dtt_mesh_open(&m, g_comm, nd, fac)) continue;
        for (c = 0; c < NELEM(cases); c++) {
            dt_placement src[DT_MAX_MESH_DIMS], dst[DT_MAX_MESH_DIMS];
            dt_tensor_desc d;
            dt_tensor *a = NULL, *b = NULL, *b0;
            void *p0, *buf;
            int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], n;
            dtt_model ms, md;
            int k;
            char s1[64], s2[64];
            if (nd == 1 && c >= 4) continue;
            memset(src, 0, sizeof src);
            memset(dst, 0, sizeof dst);
            src[0] = dtt_option(cases[c][0], 2);
            dst[0] = dtt_option(cases[c][1], 2);
            if (nd == 2) {
                src[1] = dtt_option(cases[c][2], 2);
                dst[1] = dtt_option(cases[c][3], 2);
            }
            dtt_ctx("reuse mesh %s %s -> %s", m.name, dtt_pl_str(src, nd, s1, sizeof s1), dtt_pl_str(dst, nd, s2, sizeof s2));
            ms = dtt_model_source(nd, src);
            md = dtt_model_after(ms, nd, src, dst);
            dtt_ref_layout(m.nd, m.shape, m.coord, 2, sh, src, ls, lo);
            n = dtt_numel(2, ls);
            buf = dtt_malloc((size_t)n * 8);
            dtt_shift = 0;
            dtt_fill_model(&m, DT_F64, 2, sh, ls, lo, &ms, buf);
            memset(&d, 0, sizeof d);
            d.dtype = DT_F64;
            d.ndim = 2;
            d.shape[0] = sh[0];
            d.shape[1] = sh[1];
            for (k = 0; k < nd; k++) d.placements[k] = src[k];
            CHECK_OK(dt_tensor_from_local(m.mesh, &d, buf, DT_BORROW, &a));
            CHECK_OK(dt_tensor_redistribute(a, dst, &b));
            if (!b) { dt_tensor_destroy(a); free(buf); continue; }
            dtt_check_tensor(&m, b, DT_F64, 2, sh, dst, &md, "first");
            b0 = b;
            p0 = dt_tensor_data(b);
            /* new values in the borrowed source, same out */
            dtt_shift = 1000;
            dtt_fill_model(&m, DT_F64, 2, sh, ls, lo, &ms, buf);
            CHECK_OK(dt_tensor_redistribute(a, dst, &b));
            CHECK(b == b0, "*out must stay the same tensor");
            CHECK(dt_tensor_data(b) == p0, "the buffer must be reused: %p then %p", p0, dt_tensor_data(b));
            dtt_check_tensor(&m, b, DT_F64, 2, sh, dst, &md, "second (reused out)");
            /* a third time */
            dtt_shift = 2000;
            dtt_fill_model(&m, DT_F64, 2, sh, ls, lo, &ms, buf);
            CHECK_OK(dt_tensor_redistribute(a, dst, &b));
            CHECK(dt_tensor_data(b) == p0, "the buffer must be reused (third call)");
            dtt_check_tensor(&m, b, DT_F64, 2, sh, dst, &md, "third (reused out)");
            dtt_shift = 0;
            dt_tensor_destroy(b);
            dt_tensor_destroy(a);
            free(buf);
        }
        dtt_mesh_close(&m);
    }
}

/* ------------------------------------------------------------ begin / end */

/* Every case's redistribution begun at once on one mesh (several
   outstanding), the sources overwritten once begun (begin packs what it
   sends), a blocking redistribution and an op in between, then ended in
   order and checked against the model; a reduce pair (out += the result);
   the misuses: end with nothing begun, end twice, begin on an out in
   flight, a blocking call or an op given it, destroy before end. */
#define NASYNC 7
static void async_case(const dtt_mesh *m, int nd, const int64_t *sh, int c, dt_placement *src, dt_placement *dst)
{
    static const int cases[NASYNC][4] = { { 1, 0, 0, 0 }, { 1, 2, 0, 0 }, { 0, 1, 0, 0 }, { 3, 0, 0, 0 },
                                          { 1, 0, 2, 0 }, { 1, 2, 2, 1 }, { 2, 1, 1, 2 } };
    (void)m;
    (void)sh;
    memset(src, 0, sizeof(dt_placement) * DT_MAX_MESH_DIMS);
    memset(dst, 0, sizeof(dt_placement) * DT_MAX_MESH_DIMS);
    src[0] = dtt_option(cases[c][0], 2);
    dst[0] = dtt_option(cases[c][1], 2);
    if (nd == 2) {
        src[1] = dtt_option(cases[c][2], 2);
        dst[1] = dtt_option(cases[c][3], 2);
    }
}

static void test_async_values(const dtt_mesh *m, int nd, const int64_t *sh)
{
    dt_tensor *a[NASYNC], *b[NASYNC], *mid = NULL, *sum = NULL;
    void *buf[NASYNC];
    dtt_model ms[NASYNC], md[NASYNC];
    dt_placement src[NASYNC][DT_MAX_MESH_DIMS], dst[NASYNC][DT_MAX_MESH_DIMS];
    int c, k, n = 0;
    char s1[64], s2[64];
    for (c = 0; c < NASYNC; c++) {
        int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS];
        dt_tensor_desc d;
        a[c] = b[c] = NULL;
        buf[c] = NULL;
        if (nd == 1 && c >= 4) continue;
        async_case(m, nd, sh, c, src[c], dst[c]);
        ms[c] = dtt_model_source(nd, src[c]);
        md[c] = dtt_model_after(ms[c], nd, src[c], dst[c]);
        dtt_ref_layout(m->nd, m->shape, m->coord, 2, sh, src[c], ls, lo);
        buf[c] = dtt_malloc((size_t)dtt_numel(2, ls) * 8);
        dtt_shift = c;
        dtt_fill_model(m, DT_F64, 2, sh, ls, lo, &ms[c], buf[c]);
        memset(&d, 0, sizeof d);
        d.dtype = DT_F64;
        d.ndim = 2;
        d.shape[0] = sh[0];
        d.shape[1] = sh[1];
        for (k = 0; k < nd; k++) d.placements[k] = src[c][k];
        CHECK_OK(dt_tensor_from_local(m->mesh, &d, buf[c], DT_BORROW, &a[c]));
        n = c + 1;
    }
    for (c = 0; c < n; c++) /* all in flight at once */
        CHECK_OK(dt_tensor_redistribute_begin(a[c], dst[c], &b[c]));
    for (c = 0; c < n; c++) { /* begin has packed what it sends: the sources are free */
        int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS];
        dtt_ref_layout(m->nd, m->shape, m->coord, 2, sh, src[c], ls, lo);
        memset(buf[c], 0xff, (size_t)dtt_numel(2, ls) * 8);
    }
    /* other calls in between: a blocking redistribution, an op */
    if (a[0]) {
        dt_placement rep[DT_MAX_MESH_DIMS];
        memset(rep, 0, sizeof rep);
        CHECK_OK(dt_tensor_redistribute(a[0], rep, &mid));
        CHECK_OK(dt_add(mid, mid, &sum));
    }
    for (c = 0; c < n; c++) {
        dtt_ctx("async mesh %s %s -> %s", m->name, dtt_pl_str(src[c], nd, s1, sizeof s1), dtt_pl_str(dst[c], nd, s2, sizeof s2));
        CHECK_OK(dt_tensor_redistribute_end(b[c]));
        dtt_shift = c;
        if (b[c]) dtt_check_tensor(m, b[c], DT_F64, 2, sh, dst[c], &md[c], "after _end");
    }
    dtt_shift = 0;
    /* the reduce pair: out (holding the result) += the result again */
    for (c = 0; c < n; c++) {
        int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], i, nl;
        double *got;
        if (ms[c].ps || !b[c]) continue; /* (a Partial source's model values: checked above) */
        dtt_ref_layout(m->nd, m->shape, m->coord, 2, sh, src[c], ls, lo);
        dtt_shift = c;
        dtt_fill_model(m, DT_F64, 2, sh, ls, lo, &ms[c], buf[c]);
        dtt_ctx("async reduce mesh %s %s -> %s", m->name, dtt_pl_str(src[c], nd, s1, sizeof s1),
                dtt_pl_str(dst[c], nd, s2, sizeof s2));
        CHECK_OK(dt_tensor_redistribute_reduce_begin(a[c], dst[c], DT_SUM, b[c]));
        CHECK_OK(dt_tensor_redistribute_end(b[c]));
        dtt_ref_layout(m->nd, m->shape, m->coord, 2, sh, dst[c], ls, lo);
        nl = dtt_numel(2, ls);
        got = (double *)dt_tensor_data(b[c]);
        for (i = 0; i < nl && got; i++) {
            double want = 2.0 * (double)dtt_model_value(m, DT_F64, dtt_gidx(2, sh, ls, lo, i), &md[c]) *
                          dtt_scale(DT_F64);
            CHECK(got[i] == want, "reduce: element %lld = %g, want %g", (long long)i, got[i], want);
            if (got[i] != want) break;
        }
    }
    dtt_shift = 0;
    dt_tensor_destroy(sum);
    dt_tensor_destroy(mid);
    for (c = 0; c < n; c++) {
        dt_tensor_destroy(b[c]);
        dt_tensor_destroy(a[c]);
        free(buf[c]);
    }
}

static void test_async_misuse(const dtt_mesh *m)
{
    int64_t sh[2] = { 6, 5 };
    dt_placement s0[DT_MAX_MESH_DIMS], s1[DT_MAX_MESH_DIMS];
    dt_tensor_desc d;
    dt_tensor *a = NULL, *b = NULL, *c = NULL, *x = NULL;
    int done = 0;
    memset(s0, 0, sizeof s0);
    memset(s1, 0, sizeof s1);
    s0[0] = dt_shard(0);
    s1[0] = dt_shard(1);
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = 2;
    d.shape[0] = sh[0];
    d.shape[1] = sh[1];
    d.placements[0] = s0[0];
    dtt_ctx("async misuse mesh %s", m->name);
    CHECK_OK(dt_tensor_zeros(m->mesh, &d, &a));
    CHECK_ST(dt_tensor_redistribute_end(a), DT_ERR_ARG); /* nothing begun */
    CHECK(strstr(dt_last_error(), "dt_tensor_redistribute_end") != NULL, "message: %s", dt_last_error());
    CHECK_ST(dt_tensor_redistribute_end(NULL), DT_ERR_ARG);
    CHECK_OK(dt_tensor_redistribute_begin(a, s1, &b));
    CHECK_OK(dt_tensor_redistribute_test(b, &done));
    CHECK_ST(dt_tensor_redistribute_begin(a, s1, &b), DT_ERR_ARG); /* two begins on one out */
    CHECK(strstr(dt_last_error(), "has not ended") != NULL, "message: %s", dt_last_error());
    CHECK_ST(dt_tensor_redistribute(a, s1, &b), DT_ERR_ARG);       /* a blocking call into it */
    CHECK_ST(dt_tensor_redistribute(b, s0, &c), DT_ERR_ARG);       /* reading it */
    CHECK(c == NULL, "no tensor made");
    CHECK_ST(dt_add(b, b, &c), DT_ERR_ARG);                        /* an op on it */
    CHECK_ST(dt_tensor_redistribute_reduce(a, s1, DT_SUM, b), DT_ERR_ARG);
    CHECK_OK(dt_tensor_redistribute_end(b));
    CHECK_ST(dt_tensor_redistribute_end(b), DT_ERR_ARG);           /* ended twice */
    CHECK_OK(dt_tensor_redistribute(b, s0, &c));                   /* usable again */
    /* destroyed before its end: completed, reported, no hang */
    CHECK_OK(dt_tensor_redistribute_begin(a, s1, &x));
    dt_clear_error();
    dt_tensor_destroy(x);
    CHECK(strstr(dt_last_error(), "dt_tensor_destroy") != NULL, "destroy before end is reported: '%s'",
          dt_last_error());
    dt_tensor_destroy(c);
    dt_tensor_destroy(b);
    dt_tensor_destroy(a);
}

static void test_async(void)
{
    int fac[64 * DT_MAX_MESH_DIMS], nd, s;
    static const int64_t shapes[][2] = { { 10, 7 }, { 0, 3 }, { 3, 1 } };
    for (nd = 1; nd <= 2; nd++) {
        dtt_mesh m;
        if (dtt_factorizations(dtt_np, nd, fac, 64) < 1) continue;
        if (nd == 2 && dtt_factorizations(dtt_np, 2, fac, 64) > 2)
            memmove(fac, fac + DT_MAX_MESH_DIMS, sizeof(int) * DT_MAX_MESH_DIMS);
        if (!dtt_mesh_open(&m, g_comm, nd, fac)) continue;
        for (s = 0; s < NELEM(shapes); s++) test_async_values(&m, nd, shapes[s]);
        test_async_misuse(&m);
        dtt_mesh_close(&m);
    }
}

/* ------------------------------------------------------------ random chains */

static dt_placement random_placement(dtt_rng *r, int ndim, dt_placement cur, int allow_partial)
{
    static const dt_reduce ops[3] = { DT_SUM, DT_MAX, DT_MIN };
    int x = dtt_randint(r, 8);
    if (cur.kind == DT_PARTIAL && x < 2) return cur;                       /* stay partial */
    if (allow_partial && x == 7) {
        if (cur.kind == DT_SHARD) return dt_replicate();                  /* Shard -> Partial is refused */
        return dt_partial(ops[dtt_randint(r, 3)]);                         /* maybe another op */
    }
    if (ndim == 0 || x < 3) return dt_replicate();
    {
        int dim = dtt_randint(r, ndim);
        if (dtt_randint(r, 4) == 0) dim -= ndim; /* negative form */
        return dt_shard(dim);
    }
}

/* start (no Partial) -> steps[0] -> ... -> steps[nsteps-1] -> start: every step
   checked against the model, the end bit-identical to the start */
static void run_chain(const dtt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, const dt_placement *start,
                      dt_placement (*steps)[DT_MAX_MESH_DIMS], int nsteps, const char *label)
{
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], n;
    dt_placement cur[DT_MAX_MESH_DIMS], nxt[DT_MAX_MESH_DIMS];
    dt_tensor_desc d;
    dt_tensor *a = NULL, *x;
    size_t es = dtt_size(t);
    void *buf;
    dtt_model md;
    char s1[64], s2[64], s3[64];
    int k, dim, step;
    dtt_ref_layout(m->nd, m->shape, m->coord, ndim, shape, start, ls, lo);
    n = dtt_numel(ndim, ls);
    buf = dtt_malloc((size_t)n * es);
    dtt_fill_box(t, ndim, shape, ls, lo, buf);
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = ndim;
    for (dim = 0; dim < ndim; dim++) d.shape[dim] = shape[dim];
    for (k = 0; k < m->nd; k++) d.placements[k] = start[k];
    dtt_ctx("%s mesh %s %s %s start %s", label, m->name, dtt_dtname(t), dtt_shape_str(ndim, shape, s1, sizeof s1),
            dtt_pl_str(start, m->nd, s2, sizeof s2));
    CHECK_OK(dt_tensor_from_local(m->mesh, &d, buf, DT_BORROW, &a));
    md = dtt_model_source(m->nd, start);
    x = a;
    memcpy(cur, start, sizeof cur);
    for (step = 0; step <= nsteps && x; step++) {
        dt_tensor *y = NULL;
        memcpy(nxt, step == nsteps ? start : steps[step], sizeof nxt);
        dtt_ctx("%s mesh %s %s %s step %d %s -> %s", label, m->name, dtt_dtname(t),
                dtt_shape_str(ndim, shape, s1, sizeof s1), step, dtt_pl_str(cur, m->nd, s2, sizeof s2),
                dtt_pl_str(nxt, m->nd, s3, sizeof s3));
        CHECK_OK(dt_tensor_redistribute(x, nxt, &y));
        md = dtt_model_after(md, m->nd, cur, nxt);
        if (y) dtt_check_tensor(m, y, t, ndim, shape, nxt, &md, "chain step");
        if (x != a) dt_tensor_destroy(x);
        x = y;
        memcpy(cur, nxt, sizeof cur);
    }
    if (x && x != a) {
        CHECK(dt_tensor_local_numel(x) == (size_t)n, "chain end: numel");
        CHECK(n == 0 || memcmp(dt_tensor_data(x), buf, (size_t)n * es) == 0, "chain end: not bit-identical to the start");
        dtt_check_gather(x, t, ndim, shape, "chain end");
        dt_tensor_destroy(x);
    }
    dt_tensor_destroy(a);
    free(buf);
}

static void test_random_chains(void)
{
    int ncase = dtt_quick ? 10 : 200, c;
    dtt_rng rng;
    char label[64];
    rng.s = g_seed;
    for (c = 0; c < ncase; c++) {
        int nd = 1 + dtt_randint(&rng, 3), fac[256 * DT_MAX_MESH_DIMS], nf, fidx, ndim, k, dim, step, nsteps;
        int64_t shape[DT_MAX_DIMS];
        dt_dtype t = (dt_dtype)dtt_randint(&rng, DTT_NUM_REAL_DTYPES);
        dt_placement start[DT_MAX_MESH_DIMS], steps[6][DT_MAX_MESH_DIMS];
        dtt_mesh m;
        nf = dtt_factorizations(dtt_np, nd, fac, 256);
        fidx = dtt_randint(&rng, nf);
        ndim = dtt_randint(&rng, 4);
        for (dim = 0; dim < ndim; dim++) {
            int z = dtt_randint(&rng, 12);
            shape[dim] = z == 0 ? 0 : z == 1 ? 1 : 1 + dtt_randint(&rng, ndim == 1 ? 40 : 11);
        }
        memset(start, 0, sizeof start);
        for (k = 0; k < nd; k++) start[k] = random_placement(&rng, ndim, dt_replicate(), 0);
        nsteps = 2 + dtt_randint(&rng, 4);
        for (step = 0; step < nsteps; step++) {
            memset(steps[step], 0, sizeof steps[step]);
            for (k = 0; k < nd; k++) steps[step][k] = random_placement(&rng, ndim, step ? steps[step - 1][k] : start[k], 1);
        }
        if (!dtt_mesh_open(&m, g_comm, nd, &fac[fidx * DT_MAX_MESH_DIMS])) continue;
        snprintf(label, sizeof label, "chain %d seed %llu", c, (unsigned long long)g_seed);
        run_chain(&m, t, ndim, shape, start, steps, nsteps, label);
        dtt_mesh_close(&m);
    }
}

/* Partial(op1) -> Partial(op2) on the same mesh dim: reduce, then
   Replicate -> Partial(op2) */
static void test_partial_to_partial(void)
{
    static const dt_reduce ops[3] = { DT_SUM, DT_MAX, DT_MIN };
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, nd, i, j, rot = 0;
    int64_t sh[2] = { 7, 6 };
    for (nd = 1; nd <= 2; nd++) {
        for (f = 0, nf = dtt_factorizations(dtt_np, nd, fac, 64); f < nf; f++) {
            dtt_mesh m;
            if (dtt_quick && f != nf / 2) continue;
            if (!dtt_mesh_open(&m, g_comm, nd, &fac[f * DT_MAX_MESH_DIMS])) continue;
            for (i = 0; i < 3; i++) {
                for (j = 0; j < 3; j++) {
                    dt_placement start[DT_MAX_MESH_DIMS], steps[4][DT_MAX_MESH_DIMS];
                    memset(start, 0, sizeof start);
                    memset(steps, 0, sizeof steps);
                    start[0] = dt_shard(0);
                    if (nd == 1) { /* S0 -> R -> P(op1) -> P(op2) -> S1 -> S0 */
                        steps[1][0] = dt_partial(ops[i]);
                        steps[2][0] = dt_partial(ops[j]);
                        steps[3][0] = dt_shard(1);
                    } else { /* [S0,R] -> [S1,P1] -> [R,P2] -> [S1,P2] -> [S0,S1] -> [S0,R] */
                        steps[0][0] = dt_shard(1);
                        steps[0][1] = dt_partial(ops[i]);
                        steps[1][1] = dt_partial(ops[j]);
                        steps[2][0] = dt_shard(1);
                        steps[2][1] = dt_partial(ops[j]);
                        steps[3][0] = dt_shard(0);
                        steps[3][1] = dt_shard(1);
                    }
                    run_chain(&m, (dt_dtype)(rot++ % DTT_NUM_REAL_DTYPES), 2, sh, start, steps, 4, "partial->partial");
                }
            }
            dtt_mesh_close(&m);
        }
    }
}

int main(int argc, char **argv)
{
    int i;
    const char *s = getenv("DT_TEST_SEED");
    dtt_init(&argc, &argv, "redistribute");
    DTT_EXCHANGE_PATHS(); /* every exchange path through the sweep (dt_test.h) */
    if (s) g_seed = strtoull(s, NULL, 10);
    for (i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--seed") == 0) g_seed = strtoull(argv[i + 1], NULL, 10);
    /* at 3 ranks every exchange of more than 128 bytes a part runs
       pipelined (parts of 64 bytes, round by round); elsewhere the default
       (one alltoallv at these sizes): both paths through the whole sweep */
    if (dtt_np == 3) setenv("DTENSOR_PIPE_CHUNK", "64", 1);
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    if (g_comm) {
        test_sweep();
        test_refusal();
        test_multidim();
        test_dtypes();
        test_partial_ops();
        test_rep_to_partial();
        test_avg_overflow();
        test_mixed_partial_order();
        test_reuse();
        test_async();
        test_partial_to_partial();
        test_random_chains();
        dt_comm_destroy(g_comm);
    }
    return dtt_finish();
}
