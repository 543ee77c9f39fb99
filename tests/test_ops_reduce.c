/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_ops_reduce.c -- reductions (dt_sum, dt_mean, dt_max, dt_min,
   dt_norm2, dt_argmax over dim lists, keepdim 0/1, full reductions) and the
   row ops dt_softmax, dt_log_softmax, dt_layer_norm, dt_rms_norm.

   Every op runs over every input placement (Replicate, Shard(each dim),
   Partial SUM/AVG/MAX/MIN per mesh dim) on the 1-D mesh and, sampled by a
   seeded rng identically on every rank, on the 2-D meshes of the rank
   count; uneven shapes (5x7, 3x4x2, 2x3 and 1x6 with fewer rows than ranks
   so that shards are empty, 0-size dims) and every dim list (single dims,
   negative dims, pairs, all dims by ndims == 0 and by dims == NULL).
   Inputs come from a closed form of the global index through
   dt_tensor_from_local; Partial inputs hold real parts (dtt_from_full).
   The result is gathered and compared with a serial reduction in double of
   the global input (sum/mean/norm2 within a tolerance scaled by the sum of
   the magnitudes; max/min and argmax exactly, ties included: argmax is the
   first maximum); its own layout is checked against the independent
   torch.chunk layout of its placements and its placements against
   /tmp/ops_semantics.md: a reduction over a sharded dim is Partial (sum,
   mean: SUM; max: MAX; min: MIN) and moves nothing, non-reduced Shard dims
   are kept (renumbered without keepdim), sum/mean of P(SUM)/P(AVG) stay
   Partial, norm2 and argmax are never Partial (pytorch #159856, #165962:
   max/min/norm2 of Partial inputs have the right value), softmax and the
   norms never leave the normalised dim sharded and keep the other shards.

   Also: dtypes (F32/F64 everywhere, F16/BF16 rotating, I32/I64/U8 for
   sum/max/min/argmax; mean, norm2, softmax and the norms on integers:
   DT_ERR_DTYPE), the mean of nothing (a reduced extent of 0: NaN in the
   sweep and, in test_mean_empty, for every floating and complex dtype,
   sharded and Partial; integers refused naming the dtype and dims), reuse
   of *out, wrong *out refused and untouched, bad input (NULLs, dims out of
   range, repeated dims, weights of the wrong shape, dtype or mesh) with the
   status and a message naming the call.

   Options: --quick (or DT_TEST_QUICK=1): a smaller sweep; --seed N (or
   DT_TEST_SEED). DT_TEST_VERBOSE=1 prints counts and times. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

static dt_comm *g_comm = NULL;
static uint64_t g_seed = 5150;
static long g_cases = 0;

/* ------------------------------------------------------------ values */

static double val(dt_dtype t, int dom, int salt, int64_t g)
{
    uint64_t u = dtt_mix(g, salt);
    if (dtt_is_float(t)) return dtt_val_float(dom, u); /* DTT_DOM_ANY has ties (argmax) */
    if (t == DT_U8) return 3.0 + (double)(u % 3); /* sums of <= 50 elements stay in range; MAX parts (v - 3) >= 0 */
    return dtt_val_int(t, u);
}

static double atol_of(dt_dtype t)
{
    return t == DT_F64 ? 1e-12 : t == DT_F32 ? 2e-6 : t == DT_F16 ? 3e-3 : t == DT_BF16 ? 2e-2 : 0.0;
}

static dt_dtype rot_dtype(long *rot)
{
    static const dt_dtype ts[] = { DT_F32, DT_F64, DT_F16, DT_I32, DT_F32, DT_BF16, DT_I64, DT_F64, DT_U8 };
    return ts[(*rot)++ % NELEM(ts)];
}

/* ------------------------------------------------------------ reductions */

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_NORM2, R_ARGMAX };
static const char *const rnames[] = { "dt_sum", "dt_mean", "dt_max", "dt_min", "dt_norm2", "dt_argmax" };

static dt_status call_red(int op, const dt_tensor *x, int ndims, const int *dims, int keepdim, dt_tensor **out)
{
    switch (op) {
    case R_SUM: return dt_sum(x, ndims, dims, keepdim, out);
    case R_MEAN: return dt_mean(x, ndims, dims, keepdim, out);
    case R_MAX: return dt_max(x, ndims, dims, keepdim, out);
    case R_MIN: return dt_min(x, ndims, dims, keepdim, out);
    case R_NORM2: return dt_norm2(x, ndims, dims, keepdim, out);
    case R_ARGMAX: return dt_argmax(x, ndims, dims, keepdim, out);
    }
    return DT_ERR_ARG;
}
static int red_float_only(int op) { return op == R_MEAN || op == R_NORM2; }

/* the reduced-dims mask of a dim list (all dims when ndims == 0 or dims == NULL) */
static unsigned red_mask(int ndim, int ndims, const int *dims)
{
    unsigned m = 0;
    int i;
    if (ndims == 0 || !dims) return ndim > 0 ? (1u << ndim) - 1u : 0u;
    for (i = 0; i < ndims; i++) m |= 1u << dtt_norm_dim(dims[i], ndim);
    return m;
}

/* output shape of a reduction */
static int red_shape(int ndim, const int64_t *shape, unsigned mask, int keepdim, int64_t *os)
{
    int d, no = 0;
    for (d = 0; d < ndim; d++) {
        if ((mask >> d) & 1u) {
            if (keepdim) os[no++] = 1;
        } else os[no++] = shape[d];
    }
    return no;
}

/* serial reference: want[] and mag[] (the size of the terms) over the output elements */
static void red_ref(int op, int ndim, const int64_t *shape, unsigned mask, const double *full, int64_t nout,
                    double *want, double *mag)
{
    int64_t n = dtt_numel(ndim, shape), i, o, cnt;
    int64_t c[DT_MAX_DIMS];
    int64_t *first = (int64_t *)dtt_malloc(sizeof(int64_t) * (size_t)(nout + 1));
    double *acc = dtt_alloc_d(nout), *ab = dtt_alloc_d(nout);
    int d;
    cnt = 1;
    for (d = 0; d < ndim; d++)
        if ((mask >> d) & 1u) cnt *= shape[d];
    for (o = 0; o < nout; o++) {
        acc[o] = op == R_MAX || op == R_ARGMAX ? -INFINITY : op == R_MIN ? INFINITY : 0.0;
        ab[o] = 0;
        first[o] = 0;
    }
    for (i = 0; i < n; i++) {
        int64_t r = i, oi = 0, ri = 0;
        for (d = ndim - 1; d >= 0; d--) {
            c[d] = r % shape[d];
            r /= shape[d];
        }
        for (d = 0; d < ndim; d++) {
            if ((mask >> d) & 1u) ri = ri * shape[d] + c[d];
            else oi = oi * shape[d] + c[d];
        }
        switch (op) {
        case R_SUM: case R_MEAN: acc[oi] += full[i]; ab[oi] += fabs(full[i]); break;
        case R_NORM2: acc[oi] += full[i] * full[i]; break;
        case R_MAX: if (full[i] > acc[oi]) acc[oi] = full[i]; break;
        case R_MIN: if (full[i] < acc[oi]) acc[oi] = full[i]; break;
        case R_ARGMAX:
            if (full[i] > acc[oi]) { acc[oi] = full[i]; first[oi] = ri; } /* first maximum: strict > */
            break;
        }
    }
    for (o = 0; o < nout; o++) {
        switch (op) {
        case R_SUM: want[o] = acc[o]; mag[o] = ab[o] + 2.0 * (double)cnt; break;
        case R_MEAN: want[o] = acc[o] / (double)cnt; mag[o] = (ab[o] + 2.0 * (double)cnt) / (double)cnt; break;
        case R_NORM2: want[o] = sqrt(acc[o]); mag[o] = want[o]; break;
        case R_ARGMAX: want[o] = (double)first[o]; mag[o] = 0; break;
        default: want[o] = acc[o]; mag[o] = 0; break;
        }
    }
    free(first);
    free(acc);
    free(ab);
}

/* documented output placement on one mesh dim (an integer Partial(avg) is reduced first) */
static dt_placement red_expect(int op, dt_dtype t, dt_placement in, unsigned mask, int keepdim)
{
    if (in.kind == DT_REPLICATE) return in;
    if (in.kind == DT_SHARD) {
        int d = in.dim, k, nd = d;
        if ((mask >> d) & 1u) {
            switch (op) {
            case R_SUM: case R_MEAN: return dt_partial(DT_SUM);
            case R_MAX: return dt_partial(DT_MAX);
            case R_MIN: return dt_partial(DT_MIN);
            case R_NORM2: return dt_replicate();
            default: return dtt_pl_notp();
            }
        }
        if (!keepdim)
            for (k = 0; k < d; k++)
                if ((mask >> k) & 1u) nd--;
        return dt_shard(nd);
    }
    /* Partial input */
    if ((op == R_SUM || op == R_MEAN) && (in.reduce == DT_SUM || (in.reduce == DT_AVG && dtt_is_float(t)))) return in;
    if (op == R_NORM2 || op == R_ARGMAX) return dtt_pl_notp();
    return dtt_pl_any();
}

static void run_red(const dtt_mesh *m, int op, dt_dtype t, int ndim, const int64_t *shape, const dt_placement *pl,
                    int ndims, const int *dims, int keepdim, int salt)
{
    int64_t n = dtt_numel(ndim, shape), os[DT_MAX_DIMS], nout;
    unsigned mask = red_mask(ndim, ndims, dims);
    int no = red_shape(ndim, shape, mask, keepdim, os), k;
    double *full = dtt_alloc_d(n), *want, *mag, *got;
    dt_tensor *x, *out = NULL;
    dt_dtype ot = op == R_ARGMAX ? DT_I64 : t;
    char s1[64], s2[64], s3[64];
    int64_t i;
    nout = dtt_numel(no, os);
    want = dtt_alloc_d(nout);
    mag = dtt_alloc_d(nout);
    got = dtt_alloc_d(nout);
    g_cases++;
    s3[0] = 0;
    for (k = 0; k < ndims && dims; k++) snprintf(s3 + strlen(s3), sizeof s3 - strlen(s3), "%s%d", k ? "," : "", dims[k]);
    dtt_ctx("%s dims{%s}%s keepdim %d %s mesh %s %s %s", rnames[op], s3, dims ? "" : "(NULL)", keepdim, dtt_dtname(t),
            m->name, dtt_shape_str(ndim, shape, s1, sizeof s1), dtt_pl_str(pl, m->nd, s2, sizeof s2));
    for (i = 0; i < n; i++) full[i] = val(t, DTT_DOM_ANY, salt, i);
    x = dtt_from_full(m, t, ndim, shape, pl, full, dtt_val_unit(t));
    if (x) {
        void *sv = dtt_save_local(x);
        CHECK_OK(call_red(op, x, ndims, dims, keepdim, &out));
        if (out) {
            const dt_tensor_desc *d = dt_tensor_get_desc(out);
            dt_placement ex[DT_MAX_MESH_DIMS];
            memset(ex, 0, sizeof ex);
            for (k = 0; k < m->nd; k++) ex[k] = red_expect(op, t, pl[k], mask, keepdim);
            if (n > 0) dtt_expect_pl(m, out, ex, "output placements");
            dtt_check_own_layout(m, out, "output layout");
            CHECK(d->dtype == ot && d->ndim == no, "output dtype %s ndim %d, want %s %d", dtt_dtname(d->dtype), d->ndim,
                  dtt_dtname(ot), no);
            for (k = 0; k < no && k < d->ndim; k++)
                CHECK(d->shape[k] == os[k], "output shape[%d] = %lld want %lld", k, (long long)d->shape[k], (long long)os[k]);
            if (d->dtype == ot && d->ndim == no) {
                CHECK_OK(dtt_gather_full(out, got));
                red_ref(op, ndim, shape, mask, full, nout, want, mag);
                if (op == R_MAX || op == R_MIN || op == R_ARGMAX) dtt_cmp("values (exact)", DT_I64, nout, got, want, NULL, 0, 0);
                else {
                    for (i = 0; i < nout; i++) want[i] = dtt_round_to(ot, want[i]);
                    dtt_cmp("values", ot, nout, got, want, mag, dtt_rtol(ot), atol_of(ot));
                }
            }
        }
        CHECK(dtt_same_local(x, sv), "the input changed");
        free(sv);
    }
    dt_tensor_destroy(out);
    dt_tensor_destroy(x);
    free(full);
    free(want);
    free(mag);
    free(got);
}

typedef struct rshape { int ndim; int64_t s[3]; } rshape;
static const rshape rshapes[] = {
    { 2, { 5, 7 } }, { 3, { 3, 4, 2 } }, { 1, { 7 } }, { 2, { 2, 3 } }, { 2, { 1, 6 } }, { 3, { 4, 0, 3 } },
};

/* dim lists for an ndim tensor: count, and list i */
typedef struct dimlist { int n; int d[3]; int null_dims; } dimlist;
static int dimlists(int ndim, dimlist *out)
{
    int c = 0, i, j;
    for (i = 0; i < ndim; i++) { out[c].n = 1; out[c].d[0] = i; out[c].null_dims = 0; c++; }
    out[c].n = 1; out[c].d[0] = -1; out[c].null_dims = 0; c++;
    for (i = 0; i < ndim; i++)
        for (j = i + 1; j < ndim; j++) {
            if (j == ndim - 1 && i == 0 && ndim == 2) continue; /* all dims: below */
            out[c].n = 2; out[c].d[0] = j; out[c].d[1] = i - ndim; out[c].null_dims = 0; c++; /* unordered, negative */
        }
    out[c].n = 0; out[c].null_dims = 0; c++;           /* ndims == 0: all */
    /* dims == NULL with ndims > 0: test_null_dims */
    if (ndim >= 2) { out[c].n = ndim; for (i = 0; i < ndim; i++) out[c].d[i] = ndim - 1 - i; out[c].null_dims = 0; c++; }
    return c;
}

static int red_dtype_ok(int op, dt_dtype t, int nd, const dt_placement *pl)
{
    if (red_float_only(op) && !dtt_is_float(t)) return 0;
    return dtt_pl_ok(nd, pl, t);
}

static void red_sweep_mesh(const dtt_mesh *m, double frac, dtt_rng *rng, long *rot)
{
    int s, op, idx, np, li, nl, k;
    dimlist dl[16];
    for (s = 0; s < NELEM(rshapes); s++) {
        const rshape *rs = &rshapes[s];
        np = 1;
        for (k = 0; k < m->nd; k++) np *= dtt_nopts(rs->ndim);
        nl = dimlists(rs->ndim, dl);
        for (idx = 0; idx < np; idx++) {
            dt_placement pl[DT_MAX_MESH_DIMS];
            dtt_pl_of(idx, m->nd, rs->ndim, pl);
            for (li = 0; li < nl; li++) {
                unsigned mask = red_mask(rs->ndim, dl[li].n, dl[li].null_dims ? NULL : dl[li].d);
                int empty_red = 0, d;
                for (d = 0; d < rs->ndim; d++)
                    if (((mask >> d) & 1u) && rs->s[d] == 0) empty_red = 1;
                for (op = 0; op < 6; op++) {
                    dt_dtype t;
                    int guard = 0, keepdim = (idx + li + op) % 2;
                    if (frac < 1.0 && dtt_frand(rng) >= frac) continue;
                    if (op == R_ARGMAX && dl[li].n > 1 && !(dl[li].n == rs->ndim && dl[li].null_dims)) continue;
                    if (op == R_ARGMAX && dl[li].n == rs->ndim && rs->ndim > 1 && !dl[li].null_dims) continue;
                    if (empty_red && (op == R_MAX || op == R_MIN || op == R_ARGMAX)) continue; /* max of nothing */
                    if ((idx + li + op) % 3 == 0) {
                        do t = rot_dtype(rot);
                        while (!red_dtype_ok(op, t, m->nd, pl) && ++guard < 20);
                    } else t = (idx + op) % 2 ? DT_F64 : DT_F32;
                    if (!red_dtype_ok(op, t, m->nd, pl)) continue;
                    run_red(m, op, t, rs->ndim, rs->s, pl, dl[li].n, dl[li].null_dims ? NULL : dl[li].d, keepdim,
                            (int)(*rot % 11));
                }
            }
        }
    }
    /* 0-d input: all ops, full reduction */
    for (idx = 0; idx < 5; idx++) {
        dt_placement pl[DT_MAX_MESH_DIMS];
        int64_t sh0[1] = { 0 };
        memset(pl, 0, sizeof pl);
        if (idx) pl[0] = dt_partial((dt_reduce)(idx - 1));
        for (op = 0; op < 6; op++) run_red(m, op, DT_F64, 0, sh0, pl, 0, NULL, idx % 2, idx);
    }
}

static void test_red_sweep(void)
{
    dtt_sweep_meshes(g_comm, red_sweep_mesh, g_seed ^ 0x44u, 0, dtt_quick ? 0.1 : 1.0, dtt_quick ? 0.01 : 0.1, 1.0);
}

/* "ndims == 0 or dims == NULL: all dims": dims NULL with ndims > 0 */
static void test_null_dims(void)
{
    dtt_mesh m;
    int one[1], op;
    int64_t sh[2] = { 5, 7 };
    dt_placement pl[DT_MAX_MESH_DIMS];
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    memset(pl, 0, sizeof pl);
    pl[0] = dt_shard(1);
    for (op = 0; op < 6; op++) run_red(&m, op, DT_F64, 2, sh, pl, 2, NULL, op % 2, op);
    pl[0] = dt_partial(DT_SUM);
    run_red(&m, R_SUM, DT_F32, 2, sh, pl, 1, NULL, 0, 1);
    dtt_mesh_close(&m);
}

/* one element of a gathered result is NaN: read from its bits (a complex
   element: both parts), independently of the library's conversions */
static int nan_at(dt_dtype t, const unsigned char *p)
{
    uint16_t h;
    float f;
    double v;
    switch (t) {
    case DT_F16: memcpy(&h, p, 2); return (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0;
    case DT_BF16: memcpy(&h, p, 2); return (h & 0x7f80u) == 0x7f80u && (h & 0x007fu) != 0;
    case DT_F32: memcpy(&f, p, 4); return f != f;
    case DT_F64: memcpy(&v, p, 8); return v != v;
    case DT_C64: return nan_at(DT_F32, p) && nan_at(DT_F32, p + 4);
    case DT_C128: return nan_at(DT_F64, p) && nan_at(DT_F64, p + 8);
    default: return 0;
    }
}

static int same_everywhere(int v)
{
    int lo = 0, hi = 0;
    MPI_Allreduce(&v, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&v, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

/* dt_mean over an empty extent is 0/0: NaN (NaN+NaNi for complex), torch's
   answer, in every floating dtype and placement, also when the empty dim is
   sharded (every shard empty, a Partial(SUM) of NaNs) or the input Partial;
   the kept elements of [4, 0] over dim 1 are each NaN. Integers have no
   NaN: their mean is DT_ERR_DTYPE on every rank, the message naming the
   call, the dtype and the dims. */
static void test_mean_empty(void)
{
    static const dt_dtype ts[] = { DT_F32, DT_F64, DT_F16, DT_BF16, DT_C64, DT_C128 };
    static const struct { int ndim; int64_t s[2]; int ndims; int dims[2]; int64_t nout; } cs[] = {
        { 2, { 4, 0 }, 2, { 0, 1 }, 1 }, { 2, { 4, 0 }, 1, { 1 }, 4 }, { 2, { 4, 0 }, 1, { -1 }, 4 },
        { 1, { 0 }, 1, { 0 }, 1 }, { 2, { 0, 3 }, 1, { 0 }, 3 }, { 2, { 0, 3 }, 0, { 0 }, 1 },
    };
    dtt_mesh m;
    int one[1], ti, ci, pi, k;
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    for (ti = 0; ti < NELEM(ts); ti++)
        for (ci = 0; ci < NELEM(cs); ci++)
            for (pi = 0; pi < 5; pi++) {
                dt_placement pl[DT_MAX_MESH_DIMS];
                dt_tensor_desc d;
                dt_tensor *x = NULL, *o = NULL;
                unsigned char got[4 * 16];
                size_t es = dt_dtype_size(ts[ti]);
                memset(pl, 0, sizeof pl);
                if (pi == 1) pl[0] = dt_shard(0);
                else if (pi == 2) pl[0] = cs[ci].ndim > 1 ? dt_shard(1) : dt_shard_balanced(0);
                else if (pi == 3) pl[0] = dt_partial(DT_SUM);
                else if (pi == 4) pl[0] = dt_partial(DT_AVG);
                dtt_ctx("dt_mean of nothing: %s shape [%lld%s%lld] %d dims, placement %d", dtt_dtname(ts[ti]),
                        (long long)cs[ci].s[0], cs[ci].ndim > 1 ? ", " : "", cs[ci].ndim > 1 ? (long long)cs[ci].s[1] : 0LL,
                        cs[ci].ndims, pi);
                d = dtt_desc(ts[ti], cs[ci].ndim, cs[ci].s, 1, pl);
                CHECK_OK(dt_tensor_zeros(m.mesh, &d, &x));
                CHECK_OK(dt_mean(x, cs[ci].ndims, cs[ci].dims, (ci + pi) % 2, &o));
                if (o) {
                    const dt_tensor_desc *od = dt_tensor_get_desc(o);
                    int64_t no = dtt_numel(od->ndim, od->shape);
                    CHECK(no == cs[ci].nout, "%lld elements, want %lld", (long long)no, (long long)cs[ci].nout);
                    memset(got, 0, sizeof got);
                    if (no == cs[ci].nout) {
                        CHECK_OK(dt_tensor_gather(o, got));
                        for (k = 0; k < cs[ci].nout; k++)
                            CHECK(nan_at(ts[ti], got + (size_t)k * es), "element %d is not NaN", k);
                    }
                }
                dt_tensor_destroy(o);
                dt_tensor_destroy(x);
            }
    for (ti = 0; ti < 3; ti++) {
        static const dt_dtype its[] = { DT_I32, DT_I64, DT_U8 };
        dt_placement pl[DT_MAX_MESH_DIMS];
        dt_tensor_desc d;
        dt_tensor *x = NULL, *o = NULL;
        int64_t sh[2] = { 4, 0 };
        int dims[1] = { 1 };
        dt_status st;
        char want[64];
        memset(pl, 0, sizeof pl);
        pl[0] = ti == 1 ? dt_shard(1) : dt_replicate();
        dtt_ctx("dt_mean of nothing: %s", dtt_dtname(its[ti]));
        d = dtt_desc(its[ti], 2, sh, 1, pl);
        CHECK_OK(dt_tensor_zeros(m.mesh, &d, &x));
        st = dt_mean(x, 1, dims, 0, &o);
        CHECK(same_everywhere((int)st) && st == DT_ERR_DTYPE, "status %s: %s", dt_status_string(st), dt_last_error());
        snprintf(want, sizeof want, "dt_mean: x is %s [4, 0], dims {1}", dt_dtype_name(its[ti]));
        CHECK(strstr(dt_last_error(), want) != NULL, "message: %s", dt_last_error());
        CHECK(o == NULL, "*out written");
        dt_tensor_destroy(x);
    }
    dtt_mesh_close(&m);
}

/* named: max/min/norm2 of Partial inputs (#159856, #165962) with explicit values */
static void test_partial_named(void)
{
    dtt_mesh m;
    int one[1], r;
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    for (r = 0; r < 2; r++) {
        /* rank q holds (q+1) * (1, -2, 3): Partial(SUM) value np(np+1)/2 * (1,-2,3);
           Partial(MAX) value np * (1, -2, 3) for element 0 and 2, -2 for element 1 */
        dt_tensor_desc d;
        dt_tensor *x = NULL, *o = NULL;
        double part[3], got[1], s = r == 0 ? dtt_np * (dtt_np + 1) / 2.0 : 0.0;
        int q = dtt_rank;
        part[0] = (q + 1) * 1.0;
        part[1] = (q + 1) * -2.0;
        part[2] = (q + 1) * 3.0;
        memset(&d, 0, sizeof d);
        d.dtype = DT_F64;
        d.ndim = 1;
        d.shape[0] = 3;
        d.placements[0] = dt_partial(r == 0 ? DT_SUM : DT_MAX);
        dtt_ctx("named Partial(%s) reductions", r == 0 ? "sum" : "max");
        CHECK_OK(dt_tensor_from_local(m.mesh, &d, part, DT_COPY, &x));
        if (!x) continue;
        CHECK_OK(dt_max(x, 0, NULL, 0, &o));
        if (o) {
            double want = r == 0 ? 3.0 * s : 3.0 * dtt_np;
            CHECK_OK(dtt_gather_full(o, got));
            CHECK(got[0] == want, "max = %g want %g", got[0], want);
        }
        dt_tensor_destroy(o);
        o = NULL;
        CHECK_OK(dt_min(x, 0, NULL, 0, &o));
        if (o) {
            double want = r == 0 ? -2.0 * s : -2.0;
            CHECK_OK(dtt_gather_full(o, got));
            CHECK(got[0] == want, "min = %g want %g", got[0], want);
        }
        dt_tensor_destroy(o);
        o = NULL;
        CHECK_OK(dt_norm2(x, 0, NULL, 0, &o));
        if (o) {
            double want = r == 0 ? s * sqrt(14.0) : sqrt(dtt_np * dtt_np * 10.0 + 4.0);
            CHECK_OK(dtt_gather_full(o, got));
            CHECK(fabs(got[0] - want) <= 1e-12 * want, "norm2 = %.17g want %.17g", got[0], want);
        }
        dt_tensor_destroy(o);
        o = NULL;
        CHECK_OK(dt_sum(x, 0, NULL, 0, &o));
        if (o) {
            double want = r == 0 ? 2.0 * s : 4.0 * dtt_np - 2.0;
            CHECK_OK(dtt_gather_full(o, got));
            CHECK(got[0] == want, "sum = %g want %g", got[0], want);
        }
        dt_tensor_destroy(o);
        o = NULL;
        CHECK_OK(dt_argmax(x, 0, NULL, 0, &o));
        if (o) {
            CHECK_OK(dtt_gather_full(o, got));
            CHECK(got[0] == 2.0, "argmax = %g want 2", got[0]);
        }
        dt_tensor_destroy(o);
        dt_tensor_destroy(x);
    }
    dtt_mesh_close(&m);
}

/* ------------------------------------------------------------ softmax and norms */

enum { N_SOFTMAX, N_LOGSOFTMAX, N_LAYERNORM, N_RMSNORM };
static const char *const nnames[] = { "dt_softmax", "dt_log_softmax", "dt_layer_norm", "dt_rms_norm" };

/* wmode: 0 no weights, 1 w only, 2 w and b (layer_norm) */
static void norm_ref(int op, int ndim, const int64_t *shape, int dim, const double *x, const double *w,
                     const double *b, double eps, double *y)
{
    int64_t len = ndim ? shape[dim] : 1, inner = 1, outer = 1, o, in, j;
    int d;
    for (d = 0; d < dim; d++) outer *= shape[d];
    for (d = dim + 1; d < ndim; d++) inner *= shape[d];
    for (o = 0; o < outer; o++)
        for (in = 0; in < inner; in++) {
            double mx = -INFINITY, s = 0, s2 = 0, mean, var;
#define X(j) x[(o * len + (j)) * inner + in]
#define Y(j) y[(o * len + (j)) * inner + in]
            if (op == N_SOFTMAX || op == N_LOGSOFTMAX) {
                for (j = 0; j < len; j++) mx = X(j) > mx ? X(j) : mx;
                for (j = 0; j < len; j++) s += exp(X(j) - mx);
                for (j = 0; j < len; j++) Y(j) = op == N_SOFTMAX ? exp(X(j) - mx) / s : X(j) - mx - log(s);
            } else if (op == N_LAYERNORM) {
                for (j = 0; j < len; j++) s += X(j);
                mean = s / (double)len;
                for (j = 0; j < len; j++) s2 += (X(j) - mean) * (X(j) - mean);
                var = s2 / (double)len;
                for (j = 0; j < len; j++)
                    Y(j) = (X(j) - mean) / sqrt(var + eps) * (w ? w[j] : 1.0) + (b ? b[j] : 0.0);
            } else {
                for (j = 0; j < len; j++) s2 += X(j) * X(j);
                for (j = 0; j < len; j++) Y(j) = X(j) / sqrt(s2 / (double)len + eps) * (w ? w[j] : 1.0);
            }
#undef X
#undef Y
        }
}

static dt_placement norm_expect(dt_placement in, int dim)
{
    if (in.kind == DT_REPLICATE) return in;
    if (in.kind == DT_SHARD && in.dim != dim) return in;
    return dtt_pl_nots(dim);
}

static void run_norm(const dtt_mesh *m, int op, dt_dtype t, int ndim, const int64_t *shape, const dt_placement *pl,
                     int dim, int wmode, dt_placement pw, int salt)
{
    int64_t n = dtt_numel(ndim, shape), i, D = ndim ? shape[ndim - 1] : 1;
    double *full = dtt_alloc_d(n), *want = dtt_alloc_d(n), *got = dtt_alloc_d(n), *fw = dtt_alloc_d(D), *fb = dtt_alloc_d(D);
    dt_tensor *x, *w = NULL, *b = NULL, *out = NULL;
    dt_placement pwl[DT_MAX_MESH_DIMS];
    int nd = dtt_norm_dim(dim, ndim), k;
    double eps = 1e-5;
    char s1[64], s2[64];
    g_cases++;
    dtt_ctx("%s dim %d w%d %s mesh %s %s %s", nnames[op], dim, wmode, dtt_dtname(t), m->name,
            dtt_shape_str(ndim, shape, s1, sizeof s1), dtt_pl_str(pl, m->nd, s2, sizeof s2));
    for (i = 0; i < n; i++) full[i] = val(t, DTT_DOM_ANY, salt, i);
    for (i = 0; i < D; i++) {
        fw[i] = val(t, DTT_DOM_SMALL, salt + 1, i) + 1.0; /* [0, 2] */
        fb[i] = val(t, DTT_DOM_SMALL, salt + 2, i);
    }
    memset(pwl, 0, sizeof pwl);
    pwl[0] = pw;
    x = dtt_from_full(m, t, ndim, shape, pl, full, dtt_val_unit(t));
    if (wmode >= 1) w = dtt_from_full(m, t, 1, &D, pwl, fw, dtt_val_unit(t));
    if (wmode >= 2) b = dtt_from_full(m, t, 1, &D, pwl, fb, dtt_val_unit(t));
    if (x && (wmode < 1 || w) && (wmode < 2 || b)) {
        void *sv = dtt_save_local(x);
        dt_status st;
        if (op == N_SOFTMAX) st = dt_softmax(x, dim, &out);
        else if (op == N_LOGSOFTMAX) st = dt_log_softmax(x, dim, &out);
        else if (op == N_LAYERNORM) st = dt_layer_norm(x, w, b, eps, &out);
        else st = dt_rms_norm(x, w, eps, &out);
        CHECK(st == DT_OK, "returned %s: %s", dt_status_string(st), dt_last_error());
        if (out) {
            const dt_tensor_desc *d = dt_tensor_get_desc(out);
            dt_placement ex[DT_MAX_MESH_DIMS];
            memset(ex, 0, sizeof ex);
            for (k = 0; k < m->nd; k++) ex[k] = norm_expect(pl[k], nd);
            if (n > 0) dtt_expect_pl(m, out, ex, "output placements");
            dtt_check_own_layout(m, out, "output layout");
            CHECK(d->dtype == t && d->ndim == ndim, "output dtype %s ndim %d", dtt_dtname(d->dtype), d->ndim);
            for (k = 0; k < ndim && k < d->ndim; k++) CHECK(d->shape[k] == shape[k], "output shape[%d]", k);
            if (d->dtype == t && d->ndim == ndim) {
                CHECK_OK(dtt_gather_full(out, got));
                norm_ref(op, ndim, shape, nd, full, wmode >= 1 ? fw : NULL, wmode >= 2 ? fb : NULL, eps, want);
                for (i = 0; i < n; i++) want[i] = dtt_round_to(t, want[i]);
                dtt_cmp("values", t, n, got, want, NULL, dtt_rtol(t) * (op == N_LOGSOFTMAX ? 4 : 2), atol_of(t) * 4);
            }
        }
        CHECK(dtt_same_local(x, sv), "the input changed");
        free(sv);
    }
    dt_tensor_destroy(out);
    dt_tensor_destroy(x);
    dt_tensor_destroy(w);
    dt_tensor_destroy(b);
    free(full);
    free(want);
    free(got);
    free(fw);
    free(fb);
}

static void norm_sweep_mesh(const dtt_mesh *m, double frac, dtt_rng *rng, long *rot)
{
    static const rshape ns[] = { { 2, { 5, 7 } }, { 3, { 3, 4, 2 } }, { 1, { 7 } }, { 2, { 2, 3 } }, { 2, { 0, 3 } }, { 2, { 6, 1 } } };
    int s, idx, np, op, dim, k;
    for (s = 0; s < NELEM(ns); s++) {
        np = 1;
        for (k = 0; k < m->nd; k++) np *= dtt_nopts(ns[s].ndim);
        for (idx = 0; idx < np; idx++) {
            dt_placement pl[DT_MAX_MESH_DIMS];
            dtt_pl_of(idx, m->nd, ns[s].ndim, pl);
            for (op = 0; op < 4; op++) {
                int ndl = op < 2 ? ns[s].ndim + 1 : 1;
                for (dim = 0; dim < ndl; dim++) {
                    dt_dtype t;
                    int d = op < 2 ? (dim == ns[s].ndim ? -1 : dim) : ns[s].ndim - 1;
                    int wmode = op == N_LAYERNORM ? (idx + dim) % 3 : op == N_RMSNORM ? (idx + dim) % 2 : 0;
                    dt_placement pw = (idx % 4) == 1 ? dt_shard(0) : (idx % 4) == 2 ? dt_partial(DT_SUM) : dt_replicate();
                    if (frac < 1.0 && dtt_frand(rng) >= frac) continue;
                    t = (idx + dim + op) % 4 == 0 ? rot_dtype(rot) : ((idx + op) % 2 ? DT_F64 : DT_F32);
                    if (!dtt_is_float(t)) t = DT_F32;
                    if (!dtt_pl_ok(m->nd, pl, t)) continue;
                    run_norm(m, op, t, ns[s].ndim, ns[s].s, pl, d, wmode, pw, (int)(*rot % 7));
                }
            }
        }
    }
}

static void test_norm_sweep(void)
{
    dtt_sweep_meshes(g_comm, norm_sweep_mesh, g_seed ^ 0x55u, 1, dtt_quick ? 0.15 : 1.0, dtt_quick ? 0.02 : 0.15, 1.0);
}

/* ------------------------------------------------------------ errors, reuse */

static dt_tensor *mk(const dtt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, dt_placement p0, int salt)
{
    return dtt_mk_val(m, t, ndim, shape, p0, val, DTT_DOM_ANY, salt);
}

static void test_reuse_and_wrong_out(void)
{
    dtt_mesh m;
    int one[1], op, salt, dim0[1] = { 0 }, dim1[1] = { 1 };
    int64_t sh[2] = { 6, 5 }, i;
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    for (op = 0; op < 6; op++) {
        dt_tensor *out = NULL, *out0 = NULL;
        void *p0 = NULL;
        dtt_ctx("reuse %s", rnames[op]);
        for (salt = 0; salt < 3; salt++) {
            dt_tensor *x = mk(&m, DT_F64, 2, sh, salt == 2 ? dt_shard(0) : dt_shard(0), salt);
            double full[30], want[6], mag[6], got[6];
            if (!x) continue;
            CHECK_OK(call_red(op, x, 1, dim1, 0, &out));
            dtt_check_reuse(salt == 0, out, &out0, &p0);
            if (out) {
                for (i = 0; i < 30; i++) full[i] = val(DT_F64, DTT_DOM_ANY, salt, i);
                red_ref(op, 2, sh, 2u, full, 6, want, mag);
                CHECK_OK(dtt_gather_full(out, got));
                dtt_cmp("reused out values", op == R_ARGMAX ? DT_I64 : DT_F64, 6, got, want, mag, 1e-12, 1e-12);
            }
            dt_tensor_destroy(x);
        }
        /* wrong *out: dtype, shape, placements */
        if (out) {
            dt_tensor *x = mk(&m, DT_F64, 2, sh, dt_shard(0), 9), *w, *o;
            int64_t s6[1] = { 6 }, s5[1] = { 5 };
            dt_tensor *cases[3];
            dt_status want_st[3] = { DT_ERR_DTYPE, DT_ERR_SHAPE, DT_ERR_PLACEMENT };
            int c;
            cases[0] = mk(&m, op == R_ARGMAX ? DT_F64 : DT_F32, 1, s6, dt_shard(0), 1);
            cases[1] = mk(&m, op == R_ARGMAX ? DT_I64 : DT_F64, 1, s5, dt_shard(0), 1);
            cases[2] = mk(&m, op == R_ARGMAX ? DT_I64 : DT_F64, 1, s6, dt_replicate(), 1);
            for (c = 0; c < 3 && x; c++) {
                void *sv;
                w = cases[c];
                if (!w) continue;
                sv = dtt_save_local(w);
                o = w;
                dtt_ctx("wrong out %s case %d", rnames[op], c);
                CHECK_ST(call_red(op, x, 1, dim1, 0, &o), want_st[c]);
                CHECK_ERRMSG(rnames[op]);
                CHECK(o == w, "*out must stay the same pointer");
                CHECK(dtt_same_local(w, sv), "a refused *out's data changed");
                free(sv);
            }
            for (c = 0; c < 3; c++) dt_tensor_destroy(cases[c]);
            dt_tensor_destroy(x);
        }
        dt_tensor_destroy(out);
    }
    (void)dim0;
    dtt_mesh_close(&m);
}

static void test_bad_input(void)
{
    dtt_mesh m, m2;
    int op, k;
    int64_t sh[2] = { 4, 5 }, s5[1] = { 5 }, s6[1] = { 6 };
    dt_tensor *x, *xi, *w5, *w6, *w64, *wm;
    if (!dtt_open_1d_2d(&m, &m2, g_comm)) return;
    x = mk(&m, DT_F32, 2, sh, dt_shard(0), 1);
    xi = mk(&m, DT_I32, 2, sh, dt_shard(0), 1);
    w5 = mk(&m, DT_F32, 1, s5, dt_replicate(), 2);
    w6 = mk(&m, DT_F32, 1, s6, dt_replicate(), 2);
    w64 = mk(&m, DT_F64, 1, s5, dt_replicate(), 2);
    wm = mk(&m2, DT_F32, 1, s5, dt_replicate(), 2);
    if (x && xi && w5 && w6 && w64 && wm) {
        static const int bad2[1] = { 2 }, badm3[1] = { -3 }, dup[2] = { 1, 1 }, dupn[2] = { 0, -2 }, two_d[2] = { 0, 1 };
        for (op = 0; op < 6; op++) {
            dt_tensor *o = NULL;
            const char *fn = rnames[op];
            dtt_ctx("bad input %s", fn);
            CHECK_ST(call_red(op, NULL, 0, NULL, 0, &o), DT_ERR_ARG);
            CHECK_ERRMSG(fn);
            CHECK_ST(call_red(op, x, 0, NULL, 0, NULL), DT_ERR_ARG);
            CHECK_ERRMSG(fn);
            CHECK_ST(call_red(op, x, 1, bad2, 0, &o), DT_ERR_SHAPE);
            CHECK_ERRMSG(fn);
            CHECK(o == NULL, "*out must stay NULL");
            CHECK_ST(call_red(op, x, 1, badm3, 1, &o), DT_ERR_SHAPE);
            CHECK_ERRMSG(fn);
            CHECK(o == NULL, "*out must stay NULL");
            if (op != R_ARGMAX) {
                CHECK_ST(call_red(op, x, 2, dup, 0, &o), DT_ERR_SHAPE);
                CHECK_ERRMSG(fn);
                CHECK_ST(call_red(op, x, 2, dupn, 0, &o), DT_ERR_SHAPE);
                CHECK_ERRMSG(fn);
                CHECK(o == NULL, "*out must stay NULL");
            } else {
                dt_status st = call_red(op, x, 2, two_d, 0, &o); /* argmax: one dim or all */
                CHECK(st == DT_ERR_SHAPE || st == DT_ERR_ARG || st == DT_ERR_UNSUPPORTED,
                      "argmax over two dims returned %s", dt_status_string(st));
                CHECK_ERRMSG(fn);
                CHECK(o == NULL, "*out must stay NULL");
            }
            if (red_float_only(op)) {
                CHECK_ST(call_red(op, xi, 0, NULL, 0, &o), DT_ERR_DTYPE);
                CHECK_ERRMSG(fn);
                CHECK(o == NULL, "*out must stay NULL");
            }
        }
        for (op = 0; op < 4; op++) {
            dt_tensor *o = NULL;
            const char *fn = nnames[op];
            dtt_ctx("bad input %s", fn);
#define CALLN(xx, ww, bb, oo) (op == N_SOFTMAX ? dt_softmax(xx, 1, oo) : op == N_LOGSOFTMAX ? dt_log_softmax(xx, 1, oo) \
                               : op == N_LAYERNORM ? dt_layer_norm(xx, ww, bb, 1e-5, oo) : dt_rms_norm(xx, ww, 1e-5, oo))
            CHECK_ST(CALLN(NULL, w5, w5, &o), DT_ERR_ARG);
            CHECK_ERRMSG(fn);
            CHECK_ST(CALLN(x, w5, w5, NULL), DT_ERR_ARG);
            CHECK_ERRMSG(fn);
            CHECK_ST(CALLN(xi, NULL, NULL, &o), DT_ERR_DTYPE);
            CHECK_ERRMSG(fn);
            CHECK(o == NULL, "*out must stay NULL");
            if (op >= N_LAYERNORM) {
                CHECK_ST(CALLN(x, w6, NULL, &o), DT_ERR_SHAPE);
                CHECK_ERRMSG(fn);
                CHECK_ST(CALLN(x, w64, NULL, &o), DT_ERR_DTYPE);
                CHECK_ERRMSG(fn);
                CHECK_ST(CALLN(x, wm, NULL, &o), DT_ERR_MESH);
                CHECK_ERRMSG(fn);
                if (op == N_LAYERNORM) {
                    CHECK_ST(dt_layer_norm(x, w5, w6, 1e-5, &o), DT_ERR_SHAPE);
                    CHECK_ERRMSG(fn);
                }
                CHECK(o == NULL, "*out must stay NULL");
            } else {
                for (k = 0; k < 2; k++) {
                    dt_status st = op == N_SOFTMAX ? dt_softmax(x, k ? -3 : 2, &o) : dt_log_softmax(x, k ? -3 : 2, &o);
                    CHECK(st == DT_ERR_SHAPE, "dim %d returned %s", k ? -3 : 2, dt_status_string(st));
                    CHECK_ERRMSG(fn);
                    CHECK(o == NULL, "*out must stay NULL");
                }
            }
#undef CALLN
        }
    }
    dt_tensor_destroy(x);
    dt_tensor_destroy(xi);
    dt_tensor_destroy(w5);
    dt_tensor_destroy(w6);
    dt_tensor_destroy(w64);
    dt_tensor_destroy(wm);
    dtt_mesh_close(&m2);
    dtt_mesh_close(&m);
}

/* softmax / norms reuse *out and can run in place */
static void test_norm_reuse(void)
{
    dtt_mesh m;
    int one[1], op, salt;
    int64_t sh[2] = { 6, 5 }, D = 5, i;
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    for (op = 0; op < 4; op++) {
        dt_tensor *out = NULL, *out0 = NULL;
        void *p0 = NULL;
        dt_tensor *w = mk(&m, DT_F64, 1, &D, dt_replicate(), 3);
        double full[30], fw[5], want[30], got[30];
        dtt_ctx("reuse %s", nnames[op]);
        for (i = 0; i < 5; i++) fw[i] = val(DT_F64, DTT_DOM_ANY, 3, i);
        for (salt = 0; salt < 2 && w; salt++) {
            dt_tensor *x = mk(&m, DT_F64, 2, sh, dt_shard(0), salt);
            if (!x) continue;
            if (op == N_SOFTMAX) CHECK_OK(dt_softmax(x, 1, &out));
            else if (op == N_LOGSOFTMAX) CHECK_OK(dt_log_softmax(x, 1, &out));
            else if (op == N_LAYERNORM) CHECK_OK(dt_layer_norm(x, w, NULL, 1e-5, &out));
            else CHECK_OK(dt_rms_norm(x, w, 1e-5, &out));
            dtt_check_reuse(salt == 0, out, &out0, &p0);
            if (out) {
                for (i = 0; i < 30; i++) full[i] = val(DT_F64, DTT_DOM_ANY, salt, i);
                norm_ref(op, 2, sh, 1, full, op >= N_LAYERNORM ? fw : NULL, NULL, 1e-5, want);
                CHECK_OK(dtt_gather_full(out, got));
                dtt_cmp("reused out values", DT_F64, 30, got, want, NULL, 1e-12, 1e-12);
            }
            dt_tensor_destroy(x);
        }
        dt_tensor_destroy(out);
        dt_tensor_destroy(w);
    }
    dtt_mesh_close(&m);
}

int main(int argc, char **argv)
{
    double t0;
    dtt_init(&argc, &argv, "ops_reduce");
    g_seed = dtt_seed(argc, argv, g_seed);
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    t0 = MPI_Wtime();
    if (g_comm) {
        test_red_sweep();
        test_null_dims();
        test_mean_empty();
        test_partial_named();
        test_norm_sweep();
        test_reuse_and_wrong_out();
        test_norm_reuse();
        test_bad_input();
    }
    if (getenv("DT_TEST_VERBOSE") && dtt_rank == 0)
        fprintf(stderr, "ops_reduce: %ld cases, %.1f s\n", g_cases, MPI_Wtime() - t0);
    dt_comm_destroy(g_comm);
    return dtt_finish();
}
