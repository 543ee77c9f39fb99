/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_ops_pointwise.c -- the pointwise ops: unary (neg abs exp log sqrt
   rsqrt sin cos tanh sigmoid relu gelu silu scale shift pow cast copy fill),
   binary with numpy broadcasting (add sub mul div maximum minimum) and axpy.

   Every op runs over every input placement (Replicate, Shard(each dim),
   Partial SUM/AVG/MAX/MIN per mesh dim; binary: every pair) on the 1-D mesh
   and on the 2-D meshes of the rank count (sampled by a seeded rng there,
   identically on every rank), with uneven shapes (7x5, 2x3 below the rank
   count so that shards are empty, 0-size dims, 1-element and 0-d tensors).
   Inputs are built with dt_tensor_from_local from a closed form of the
   global index; Partial inputs hold real parts (different values per rank
   that reduce to the value; dtt_from_full). The result is gathered
   (dt_tensor_gather resolves Partial) and compared with a serial computation
   in double on the global inputs (floats within a tolerance of the dtype,
   integers exactly); its own local layout is checked against the
   independent torch.chunk layout of its placements, its placements against
   /tmp/ops_semantics.md's table (unary: Shard/Replicate kept; neg/scale/
   shift/monotone/rsqrt/copy/cast/fill Partial rules; binary: S(d),S(d)->S,
   S,R->S, P(SUM)+-P(SUM)/R->P(SUM) (the replicated value added once:
   pytorch #163193), AVG/MAX/MIN rules, mul/div, maximum/minimum), and the
   inputs must be untouched.

   Also: dtypes F32/F64 everywhere, F16/BF16 rotating, I32/I64/U8 where the
   op is defined (float-only ops on integers: DT_ERR_DTYPE); reuse of *out
   (same buffer, right values on the second call), in place (*out == input),
   a wrong *out (dtype/shape/placements/mesh) refused and untouched; host
   scalars (0-d tensors on a dt_comm_self mesh) as replicated operands; bad
   input (NULLs, broadcast failures, mixed dtypes, two meshes) with the
   status and a message naming the call.

   Options: --quick (or DT_TEST_QUICK=1): a smaller sweep; --seed N (or
   DT_TEST_SEED). DT_TEST_VERBOSE=1 prints counts and times. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

static dt_comm *g_comm = NULL;
static dt_comm *g_selfcomm = NULL;
static dt_mesh *g_selfmesh = NULL;
static uint64_t g_seed = 9001;
static long g_cases = 0;

/* ------------------------------------------------------------ values */

/* value of element g: exact in t; floats are multiples of 1/4 */
static double val(dt_dtype t, int dom, int salt, int64_t g)
{
    uint64_t u = dtt_mix(g, salt);
    if (dtt_is_float(t)) return dtt_val_float(dom, u);
    if (t == DT_U8) {
        if (dom == DTT_DOM_POS) return 4.0 + (double)(u % 29);
        if (dom == DTT_DOM_SMALL) return (double)(u % 4);
        return 20.0 + (double)(u % 61);
    }
    if (dom == DTT_DOM_POS) return 4.0 + (double)(u % 29);
    if (dom == DTT_DOM_SMALL) return (double)(u % 9) - 4.0;
    return dtt_val_int(t, u);
}

static double atol_of(dt_dtype t)
{
    return t == DT_F64 ? 1e-13 : t == DT_F32 ? 1e-6 : t == DT_F16 ? 2e-3 : t == DT_BF16 ? 1e-2 : 0.0;
}

static dt_dtype rot_dtype(long *rot)
{
    static const dt_dtype ts[] = { DT_F32, DT_F64, DT_F16, DT_F64, DT_I32, DT_F32, DT_BF16, DT_I64, DT_F64, DT_U8 };
    return ts[(*rot)++ % NELEM(ts)];
}

/* ------------------------------------------------------------ unary ops */

enum { U_NEG, U_ABS, U_EXP, U_LOG, U_SQRT, U_RSQRT, U_SIN, U_COS, U_TANH, U_SIGMOID, U_RELU, U_GELU,
       U_SILU, U_SCALE, U_SHIFT, U_POW, U_COPY, U_FILL, U_CAST };

typedef struct uop_t {
    const char *name;
    int id;
    double a;       /* scale / shift / pow / fill argument (floats)          */
    double ai;      /* the same for integer dtypes (integral); NaN: float-only */
    int dom;
    signed char pmap[4]; /* out reduce for Partial SUM, AVG, MAX, MIN input; -1 reduced first; -2 Replicate */
} uop_t;

#define NOI NAN
#define RS (-1)
static const uop_t uops[] = {
    { "dt_neg", U_NEG, 0, 0, DTT_DOM_ANY, { DT_SUM, DT_AVG, DT_MIN, DT_MAX } },
    { "dt_abs", U_ABS, 0, 0, DTT_DOM_ANY, { RS, RS, RS, RS } },
    { "dt_exp", U_EXP, 0, NOI, DTT_DOM_ANY, { RS, RS, DT_MAX, DT_MIN } },
    { "dt_log", U_LOG, 0, NOI, DTT_DOM_POS, { RS, RS, DT_MAX, DT_MIN } },
    { "dt_sqrt", U_SQRT, 0, NOI, DTT_DOM_POS, { RS, RS, DT_MAX, DT_MIN } },
    { "dt_rsqrt", U_RSQRT, 0, NOI, DTT_DOM_POS, { RS, RS, DT_MIN, DT_MAX } },
    { "dt_sin", U_SIN, 0, NOI, DTT_DOM_ANY, { RS, RS, RS, RS } },
    { "dt_cos", U_COS, 0, NOI, DTT_DOM_ANY, { RS, RS, RS, RS } },
    { "dt_tanh", U_TANH, 0, NOI, DTT_DOM_ANY, { RS, RS, DT_MAX, DT_MIN } },
    { "dt_sigmoid", U_SIGMOID, 0, NOI, DTT_DOM_ANY, { RS, RS, DT_MAX, DT_MIN } },
    { "dt_relu", U_RELU, 0, 0, DTT_DOM_ANY, { RS, RS, DT_MAX, DT_MIN } },
    { "dt_gelu", U_GELU, 0, NOI, DTT_DOM_ANY, { RS, RS, RS, RS } },
    { "dt_silu", U_SILU, 0, NOI, DTT_DOM_ANY, { RS, RS, RS, RS } },
    { "dt_scale", U_SCALE, 2.5, 3, DTT_DOM_ANY, { DT_SUM, DT_AVG, DT_MAX, DT_MIN } },
    { "dt_scale", U_SCALE, -1.5, -2, DTT_DOM_ANY, { DT_SUM, DT_AVG, DT_MIN, DT_MAX } },
    { "dt_scale", U_SCALE, 0.0, 0, DTT_DOM_ANY, { DT_SUM, DT_AVG, DT_MAX, DT_MIN } },
    { "dt_shift", U_SHIFT, 1.25, 5, DTT_DOM_ANY, { RS, DT_AVG, DT_MAX, DT_MIN } },
    { "dt_shift", U_SHIFT, -0.75, -3, DTT_DOM_ANY, { RS, DT_AVG, DT_MAX, DT_MIN } },
    { "dt_pow", U_POW, 2.0, NOI, DTT_DOM_ANY, { RS, RS, RS, RS } },
    { "dt_pow", U_POW, 3.0, NOI, DTT_DOM_ANY, { RS, RS, RS, RS } },
    { "dt_pow", U_POW, 0.5, NOI, DTT_DOM_POS, { RS, RS, RS, RS } },
    { "dt_pow", U_POW, -1.0, NOI, DTT_DOM_POS, { RS, RS, RS, RS } },
    { "dt_copy", U_COPY, 0, 0, DTT_DOM_ANY, { DT_SUM, DT_AVG, DT_MAX, DT_MIN } },
    { "dt_fill", U_FILL, 2.75, 7, DTT_DOM_ANY, { -2, -2, -2, -2 } },
    { "dt_cast", U_CAST, 0, 0, DTT_DOM_ANY, { RS, RS, DT_MAX, DT_MIN } },
};

static int uop_int_ok(const uop_t *op, dt_dtype t)
{
    if (dtt_is_float(t)) return 1;
    if (op->ai != op->ai) return 0;
    if (t == DT_U8 && (op->id == U_NEG || op->ai < 0)) return 0; /* wrap-around: not specified */
    return 1;
}

static dt_status call_unary(const uop_t *op, const dt_tensor *x, dt_dtype to, dt_tensor **out)
{
    int fl = x && dt_tensor_get_desc(x) ? dtt_is_float(dt_tensor_get_desc(x)->dtype) : 1;
    double a = fl ? op->a : op->ai;
    switch (op->id) {
    case U_NEG: return dt_neg(x, out);
    case U_ABS: return dt_abs(x, out);
    case U_EXP: return dt_exp(x, out);
    case U_LOG: return dt_log(x, out);
    case U_SQRT: return dt_sqrt(x, out);
    case U_RSQRT: return dt_rsqrt(x, out);
    case U_SIN: return dt_sin(x, out);
    case U_COS: return dt_cos(x, out);
    case U_TANH: return dt_tanh(x, out);
    case U_SIGMOID: return dt_sigmoid(x, out);
    case U_RELU: return dt_relu(x, out);
    case U_GELU: return dt_gelu(x, out);
    case U_SILU: return dt_silu(x, out);
    case U_SCALE: return dt_scale(x, a, out);
    case U_SHIFT: return dt_shift(x, a, out);
    case U_POW: return dt_pow(x, op->a, out);
    case U_COPY: return dt_copy(x, out);
    case U_FILL: return dt_fill(x, a, out);
    case U_CAST: return dt_cast(x, to, out);
    }
    return DT_ERR_ARG;
}

/* float -> integer: truncation toward zero, saturating (kernels' documented cast) */
static double cast_ref(double x, dt_dtype to)
{
    double lo, hi;
    if (dtt_is_float(to)) return dtt_round_to(to, x);
    x = x < 0 ? ceil(x) : floor(x);
    lo = to == DT_U8 ? 0 : to == DT_I32 ? -2147483648.0 : -9223372036854775808.0;
    hi = to == DT_U8 ? 255 : to == DT_I32 ? 2147483647.0 : 9223372036854775807.0;
    return x < lo ? lo : x > hi ? hi : x;
}

static double ref_unary(const uop_t *op, dt_dtype t, dt_dtype to, double x)
{
    int fl = dtt_is_float(t);
    double a = fl ? op->a : op->ai;
    switch (op->id) {
    case U_NEG: return -x;
    case U_ABS: return fabs(x);
    case U_EXP: return exp(x);
    case U_LOG: return log(x);
    case U_SQRT: return sqrt(x);
    case U_RSQRT: return 1.0 / sqrt(x);
    case U_SIN: return sin(x);
    case U_COS: return cos(x);
    case U_TANH: return tanh(x);
    case U_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case U_RELU: return x > 0 ? x : 0.0;
    case U_GELU: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case U_SILU: return x / (1.0 + exp(-x));
    case U_SCALE: return x * a;
    case U_SHIFT: return x + a;
    case U_POW: return pow(x, op->a);
    case U_COPY: return x;
    case U_FILL: return a;
    case U_CAST: return cast_ref(x, to);
    }
    return 0;
}

/* the documented output placement of a unary op on one mesh dim (an integer
   Partial(avg) passes only through neg and copy: dt_reduce) */
static dt_placement unary_expect(const uop_t *op, dt_dtype t, dt_placement in)
{
    int r;
    if (in.kind != DT_PARTIAL) return in;
    if (!dtt_is_float(t) && in.reduce == DT_AVG && op->id != U_NEG && op->id != U_COPY) return dtt_pl_notp();
    r = op->pmap[in.reduce];
    if (r == -2) return dt_replicate();
    if (r < 0) return dtt_pl_notp();
    return dt_partial((dt_reduce)r);
}

static int unary_dom(const uop_t *op, dt_dtype t, dt_dtype to)
{
    if (op->id == U_CAST && !dtt_is_float(t) && !dtt_is_float(to) && dtt_size(to) < dtt_size(t)) return DTT_DOM_POS;
    if (op->id == U_CAST && t == DT_I64 && (to == DT_F16 || to == DT_BF16)) return DTT_DOM_SMALL;
    return op->dom;
}

/* one unary case: build x, run, check placements, layout, values, x untouched */
static void run_unary(const dtt_mesh *m, const uop_t *op, dt_dtype t, dt_dtype to, int ndim, const int64_t *shape,
                      const dt_placement *pl, int salt)
{
    int64_t n = dtt_numel(ndim, shape), i;
    double *full = (double *)dtt_malloc(sizeof(double) * (size_t)(n + 1));
    double *want = (double *)dtt_malloc(sizeof(double) * (size_t)(n + 1));
    double *got = (double *)dtt_malloc(sizeof(double) * (size_t)(n + 1));
    dt_tensor *x, *out = NULL;
    dt_placement ex[DT_MAX_MESH_DIMS];
    dt_dtype ot = op->id == U_CAST ? to : t;
    void *saved;
    char s1[64], s2[64];
    int k, dom = unary_dom(op, t, to);
    g_cases++;
    dtt_ctx("%s(a=%g) %s%s%s mesh %s %s %s", op->name, op->a, dtt_dtname(t), op->id == U_CAST ? "->" : "",
            op->id == U_CAST ? dtt_dtname(to) : "", m->name, dtt_shape_str(ndim, shape, s1, sizeof s1),
            dtt_pl_str(pl, m->nd, s2, sizeof s2));
    for (i = 0; i < n; i++) full[i] = val(t, dom, salt, i);
    x = dtt_from_full(m, t, ndim, shape, pl, full, dtt_val_unit(t));
    if (!x) goto done;
    saved = dtt_save_local(x);
    CHECK_OK(call_unary(op, x, to, &out));
    if (out) {
        const dt_tensor_desc *d = dt_tensor_get_desc(out);
        memset(ex, 0, sizeof ex);
        for (k = 0; k < m->nd; k++) ex[k] = unary_expect(op, t, pl[k]);
        if (n > 0) dtt_expect_pl(m, out, ex, "output placements"); /* empty: every choice costs nothing */
        dtt_check_own_layout(m, out, "output layout");
        CHECK(d->dtype == ot && d->ndim == ndim, "output dtype %s ndim %d, want %s %d", dtt_dtname(d->dtype), d->ndim,
              dtt_dtname(ot), ndim);
        for (k = 0; k < ndim && k < d->ndim; k++) CHECK(d->shape[k] == shape[k], "output shape[%d] = %lld", k, (long long)d->shape[k]);
        if (d->dtype == ot && d->ndim == ndim) {
            CHECK_OK(dtt_gather_full(out, got));
            for (i = 0; i < n; i++) want[i] = ref_unary(op, t, to, full[i]);
            dtt_cmp("values", ot, n, got, want, NULL, dtt_rtol(ot), atol_of(ot));
        }
    }
    CHECK(dtt_same_local(x, saved), "the input changed");
    free(saved);
    dt_tensor_destroy(out);
    dt_tensor_destroy(x);
done:
    free(full);
    free(want);
    free(got);
}

static const int64_t ushapes[][2] = { { 7, 5 }, { 2, 3 }, { 0, 4 }, { 1, 1 }, { 13, 0 } };
static const int ushape_nd[] = { 2, 2, 2, 2, 1 };

static void unary_sweep_mesh(const dtt_mesh *m, double frac, dtt_rng *rng, long *rot)
{
    int s, o, oi, np, idx;
    for (s = 0; s < NELEM(ushapes); s++) {
        int ndim = ushape_nd[s];
        int64_t shape[2];
        shape[0] = ushapes[s][0];
        shape[1] = ushapes[s][1];
        if (ndim == 1) shape[0] = 13;
        np = 1;
        for (o = 0; o < m->nd; o++) np *= dtt_nopts(ndim);
        for (idx = 0; idx < np; idx++) {
            dt_placement pl[DT_MAX_MESH_DIMS];
            dtt_pl_of(idx, m->nd, ndim, pl);
            for (oi = 0; oi < NELEM(uops); oi++) {
                const uop_t *op = &uops[oi];
                dt_dtype t, to = DT_F32;
                int tries;
                if (frac < 1.0 && dtt_frand(rng) >= frac) continue;
                /* F64 always on the first shape; the other dtypes rotate */
                for (tries = 0; tries < 2; tries++) {
                    if (tries == 0) {
                        if (s != 0) continue;
                        t = DT_F64;
                    } else {
                        int guard = 0;
                        do t = rot_dtype(rot);
                        while ((!uop_int_ok(op, t) || !dtt_pl_ok(m->nd, pl, t)) && ++guard < 20);
                        if (guard >= 20) continue;
                    }
                    if (!dtt_pl_ok(m->nd, pl, t)) continue;
                    if (op->id == U_CAST) to = (dt_dtype)((int)(t + 1 + (*rot) % (DTT_NUM_REAL_DTYPES - 1)) % DTT_NUM_REAL_DTYPES);
                    run_unary(m, op, t, to, ndim, shape, pl, (int)(*rot % 7));
                }
            }
        }
    }
    /* 0-d: Replicate and Partial */
    for (idx = 0; idx < 5; idx++) {
        dt_placement pl[DT_MAX_MESH_DIMS];
        int64_t sh0[1] = { 0 };
        memset(pl, 0, sizeof pl);
        if (idx) pl[m->nd - 1] = dt_partial((dt_reduce)(idx - 1));
        for (oi = 0; oi < NELEM(uops); oi++) {
            if (frac < 1.0 && dtt_frand(rng) >= frac * 2) continue;
            run_unary(m, &uops[oi], DT_F32, DT_F64, 0, sh0, pl, idx);
        }
    }
}

static void test_unary_sweep(void)
{
    dtt_sweep_meshes(g_comm, unary_sweep_mesh, g_seed ^ 0x11u, 0, dtt_quick ? 0.04 : 1.0, dtt_quick ? 0.02 : 0.08, 0.3);
}

/* all casts between all dtypes on a few placements */
static void test_cast_all(void)
{
    dtt_mesh m;
    int one[1], a, b, p;
    int64_t sh[2] = { 6, 5 };
    const uop_t *cast = &uops[NELEM(uops) - 1];
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    for (a = 0; a < DTT_NUM_REAL_DTYPES; a++)
        for (b = 0; b < DTT_NUM_REAL_DTYPES; b++)
            for (p = 0; p < 4; p++) {
                dt_placement pl[DT_MAX_MESH_DIMS];
                memset(pl, 0, sizeof pl);
                pl[0] = p == 0 ? dt_replicate() : p == 1 ? dt_shard(1) : p == 2 ? dt_partial(DT_MAX) : dt_partial(DT_SUM);
                if (!dtt_pl_ok(1, pl, (dt_dtype)a)) continue;
                if (dtt_quick && (p > 1 ? (a + b) % 3 : (a + b + p) % 2)) continue;
                run_unary(&m, cast, (dt_dtype)a, (dt_dtype)b, 2, sh, pl, a + b);
            }
    dtt_mesh_close(&m);
}

/* float-only ops on integers: DT_ERR_DTYPE, nothing made */
static void test_unary_int_refused(void)
{
    dtt_mesh m;
    int one[1], oi, ti;
    static const dt_dtype its[3] = { DT_I32, DT_I64, DT_U8 };
    int64_t sh[1] = { 5 };
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    for (ti = 0; ti < 3; ti++) {
        double full[5];
        dt_placement pl[DT_MAX_MESH_DIMS];
        dt_tensor *x;
        int i;
        memset(pl, 0, sizeof pl);
        pl[0] = dt_shard(0);
        for (i = 0; i < 5; i++) full[i] = val(its[ti], DTT_DOM_POS, 0, i);
        x = dtt_from_full(&m, its[ti], 1, sh, pl, full, 1.0);
        for (oi = 0; oi < NELEM(uops) && x; oi++) {
            dt_tensor *out = NULL;
            if (uops[oi].ai == uops[oi].ai) continue;
            dtt_ctx("%s on %s", uops[oi].name, dtt_dtname(its[ti]));
            CHECK_ST(call_unary(&uops[oi], x, DT_F32, &out), DT_ERR_DTYPE);
            CHECK_ERRMSG(uops[oi].name);
            CHECK(out == NULL, "*out must stay NULL");
            dt_tensor_destroy(out);
        }
        if (x) { /* div of integers too */
            dt_tensor *out = NULL;
            dtt_ctx("dt_div on %s", dtt_dtname(its[ti]));
            CHECK_ST(dt_div(x, x, &out), DT_ERR_DTYPE);
            CHECK_ERRMSG("dt_div");
            CHECK(out == NULL, "*out must stay NULL");
        }
        dt_tensor_destroy(x);
    }
    dtt_mesh_close(&m);
}

/* ------------------------------------------------------------ binary ops */

enum { B_ADD, B_SUB, B_MUL, B_DIV, B_MAX, B_MIN };
static const char *const bnames[] = { "dt_add", "dt_sub", "dt_mul", "dt_div", "dt_maximum", "dt_minimum" };

static dt_status call_binary(int op, const dt_tensor *a, const dt_tensor *b, dt_tensor **out)
{
    switch (op) {
    case B_ADD: return dt_add(a, b, out);
    case B_SUB: return dt_sub(a, b, out);
    case B_MUL: return dt_mul(a, b, out);
    case B_DIV: return dt_div(a, b, out);
    case B_MAX: return dt_maximum(a, b, out);
    case B_MIN: return dt_minimum(a, b, out);
    }
    return DT_ERR_ARG;
}

static double ref_binary(int op, double a, double b)
{
    switch (op) {
    case B_ADD: return a + b;
    case B_SUB: return a - b;
    case B_MUL: return a * b;
    case B_DIV: return a / b;
    case B_MAX: return a > b ? a : b;
    case B_MIN: return a < b ? a : b;
    }
    return 0;
}

static int b_dom(int op, int which, dt_dtype t)
{
    if (which == 0) return DTT_DOM_ANY;
    if (op == B_MUL) return DTT_DOM_SMALL;
    if (op == B_DIV) return DTT_DOM_POS;
    if (op == B_SUB && t == DT_U8) return DTT_DOM_SMALL;
    return DTT_DOM_ANY;
}

/* Partial rules of the semantics table: the out reduce for (a, b) on one mesh
   dim, a and b each R (-1) or a Partial op; -1: not listed */
static int partial_rule(int op, int ra, int rb)
{
    if (ra < 0 && rb < 0) return -1;
    switch (op) {
    case B_ADD:
        if (ra == rb && (ra == DT_SUM || ra == DT_AVG)) return ra;
        if (ra < 0) return rb;
        if (rb < 0) return ra;
        return -1;
    case B_SUB:
        if (ra == rb && (ra == DT_SUM || ra == DT_AVG)) return ra;
        if (rb < 0) return ra;
        if (ra < 0) return rb == DT_MAX ? DT_MIN : rb == DT_MIN ? DT_MAX : rb;
        return -1;
    case B_MUL:
        if (ra < 0 && (rb == DT_SUM || rb == DT_AVG)) return rb;
        if (rb < 0 && (ra == DT_SUM || ra == DT_AVG)) return ra;
        return -1;
    case B_DIV: return rb < 0 && ra == DT_SUM ? DT_SUM : -1;
    case B_MAX:
        if ((ra == DT_MAX || ra < 0) && (rb == DT_MAX || rb < 0)) return DT_MAX;
        return -1;
    case B_MIN:
        if ((ra == DT_MIN || ra < 0) && (rb == DT_MIN || rb < 0)) return DT_MIN;
        return -1;
    }
    return -1;
}

/* expected output placement on one mesh dim; DTT_ANYPL where the table leaves a choice
   (an integer Partial(avg) input is reduced first: any placement may follow) */
static dt_placement binary_expect(int op, dt_dtype t, int na, const int64_t *sa, dt_placement pa, int nb,
                                  const int64_t *sb, dt_placement pb, int no, const int64_t *so)
{
    int oa = pa.kind == DT_SHARD ? pa.dim + (no - na) : -1, ob = pb.kind == DT_SHARD ? pb.dim + (no - nb) : -1;
    if (pa.kind == DT_REPLICATE && pb.kind == DT_REPLICATE) return dt_replicate();
    if (pa.kind == DT_PARTIAL || pb.kind == DT_PARTIAL) {
        int r;
        if (pa.kind == DT_SHARD || pb.kind == DT_SHARD) return dtt_pl_any();
        if (!dtt_is_float(t) && ((pa.kind == DT_PARTIAL && pa.reduce == DT_AVG) || (pb.kind == DT_PARTIAL && pb.reduce == DT_AVG)))
            return dtt_pl_any();
        r = partial_rule(op, pa.kind == DT_PARTIAL ? pa.reduce : -1, pb.kind == DT_PARTIAL ? pb.reduce : -1);
        return r < 0 ? dtt_pl_any() : dt_partial((dt_reduce)r);
    }
    if (oa >= 0 && ob >= 0) {
        if (oa == ob && sa[pa.dim] == so[oa] && sb[pb.dim] == so[ob]) return dt_shard(oa);
        return dtt_pl_any();
    }
    if (oa >= 0) /* b replicated: it shards locally (or is broadcast on that dim) */
        return sa[pa.dim] == so[oa] ? dt_shard(oa) : dtt_pl_any();
    return sb[pb.dim] == so[ob] ? dt_shard(ob) : dtt_pl_any();
}

/* broadcast out shape; 0 if the shapes do not broadcast */
static int bcast_shape(int na, const int64_t *sa, int nb, const int64_t *sb, int *no, int64_t *so)
{
    int n = na > nb ? na : nb, d;
    for (d = 0; d < n; d++) {
        int ia = d - (n - na), ib = d - (n - nb);
        int64_t x = ia >= 0 ? sa[ia] : 1, y = ib >= 0 ? sb[ib] : 1;
        if (x != y && x != 1 && y != 1) return 0;
        so[d] = x == 1 ? y : x;
    }
    *no = n;
    return 1;
}

/* flat index into an operand of the out element with coordinates c */
static int64_t bidx(int n, const int64_t *s, int no, const int64_t *c)
{
    int64_t g = 0;
    int d;
    for (d = 0; d < n; d++) {
        int64_t ci = s[d] == 1 ? 0 : c[d + (no - n)];
        g = g * s[d] + ci;
    }
    return g;
}

static void binary_ref(int op, int na, const int64_t *sa, const double *fa, int nb, const int64_t *sb,
                       const double *fb, int no, const int64_t *so, double *want)
{
    int64_t n = dtt_numel(no, so), i, c[DT_MAX_DIMS];
    int d;
    for (i = 0; i < n; i++) {
        int64_t r = i;
        for (d = no - 1; d >= 0; d--) {
            c[d] = so[d] ? r % so[d] : 0;
            r = so[d] ? r / so[d] : 0;
        }
        want[i] = ref_binary(op, fa[bidx(na, sa, no, c)], fb[bidx(nb, sb, no, c)]);
    }
}

/* the number of Partial parts of a placement tuple */
static int parts_of(const dtt_mesh *m, const dt_placement *pl)
{
    int k, n = 1;
    for (k = 0; k < m->nd; k++)
        if (pl[k].kind == DT_PARTIAL) n *= m->shape[k];
    return n;
}

/* one binary case. bmesh: b lives on the self mesh (a host scalar) when non-NULL */
static void run_binary(const dtt_mesh *m, int op, dt_dtype t, int na, const int64_t *sa, const dt_placement *pa,
                       int nb, const int64_t *sb, const dt_placement *pb, int salt, const dtt_mesh *bmesh)
{
    int64_t so[DT_MAX_DIMS], nA = dtt_numel(na, sa), nB = dtt_numel(nb, sb), nO, i;
    int no = 0, k;
    double *fa, *fb, *want, *got;
    dt_tensor *a, *b, *out = NULL;
    char s1[64], s2[64], s3[64], s4[64];
    void *sva, *svb;
    if (!bcast_shape(na, sa, nb, sb, &no, so)) return;
    nO = dtt_numel(no, so);
    g_cases++;
    dtt_ctx("%s %s mesh %s a%s%s b%s%s%s", bnames[op], dtt_dtname(t), m->name, dtt_shape_str(na, sa, s1, sizeof s1),
            dtt_pl_str(pa, m->nd, s2, sizeof s2), dtt_shape_str(nb, sb, s3, sizeof s3),
            bmesh ? "[host scalar]" : dtt_pl_str(pb, m->nd, s4, sizeof s4), "");
    fa = dtt_alloc_d(nA);
    fb = dtt_alloc_d(nB);
    want = dtt_alloc_d(nO);
    got = dtt_alloc_d(nO);
    for (i = 0; i < nA; i++) fa[i] = val(t, b_dom(op, 0, t), salt, i);
    for (i = 0; i < nB; i++) fb[i] = val(t, b_dom(op, 1, t), salt + 3, i);
    a = dtt_from_full(m, t, na, sa, pa, fa, dtt_val_unit(t));
    b = dtt_from_full(bmesh ? bmesh : m, t, nb, sb, pb, fb, dtt_val_unit(t));
    if (a && b) {
        sva = dtt_save_local(a);
        svb = dtt_save_local(b);
        CHECK_OK(call_binary(op, a, b, &out));
        if (out) {
            const dt_tensor_desc *d = dt_tensor_get_desc(out);
            dt_placement ex[DT_MAX_MESH_DIMS];
            dt_placement rb = dt_replicate();
            memset(ex, 0, sizeof ex);
            for (k = 0; k < m->nd; k++)
                ex[k] = binary_expect(op, t, na, sa, pa[k], nb, sb, bmesh ? rb : pb[k], no, so);
            if (nA > 0 && nB > 0) dtt_expect_pl(m, out, ex, "output placements");
            dtt_check_own_layout(m, out, "output layout");
            CHECK(d->dtype == t && d->ndim == no, "output dtype %s ndim %d", dtt_dtname(d->dtype), d->ndim);
            for (k = 0; k < no && k < d->ndim; k++) CHECK(d->shape[k] == so[k], "output shape[%d] = %lld want %lld", k,
                                                         (long long)d->shape[k], (long long)so[k]);
            if (d->dtype == t && d->ndim == no) {
                CHECK_OK(dtt_gather_full(out, got));
                double *mag = NULL;
                binary_ref(op, na, sa, fa, nb, sb, fb, no, so, want);
                for (i = 0; i < nO; i++) want[i] = dtt_round_to(t, want[i]);
                if ((t == DT_F16 || t == DT_BF16) && (parts_of(m, pa) > 1 || (!bmesh && parts_of(m, pb) > 1))) {
                    /* half types: a Partial result is rounded once per part (each part
                       may be larger than the value): allow for the parts' size */
                    double P = (double)(parts_of(m, pa) + (bmesh ? 1 : parts_of(m, pb)));
                    double *ma = dtt_alloc_d(nA), *mb = dtt_alloc_d(nB);
                    for (i = 0; i < nA; i++) ma[i] = fabs(fa[i]) + 1.0 + 0.5 * P;
                    for (i = 0; i < nB; i++) mb[i] = fabs(fb[i]) + 1.0 + 0.5 * P;
                    mag = dtt_alloc_d(nO);
                    binary_ref(op == B_MUL || op == B_DIV ? op : B_ADD, na, sa, ma, nb, sb, mb, no, so, mag);
                    for (i = 0; i < nO; i++) mag[i] *= P / 4.0;
                    free(ma);
                    free(mb);
                }
                dtt_cmp("values", t, nO, got, want, mag, dtt_rtol(t), atol_of(t));
                free(mag);
            }
        }
        CHECK(dtt_same_local(a, sva), "input a changed");
        CHECK(dtt_same_local(b, svb), "input b changed");
        free(sva);
        free(svb);
    }
    dt_tensor_destroy(out);
    dt_tensor_destroy(a);
    dt_tensor_destroy(b);
    free(fa);
    free(fb);
    free(want);
    free(got);
}

typedef struct bshape { int na; int64_t sa[3]; int nb; int64_t sb[3]; } bshape;
static const bshape bshapes[] = {
    { 2, { 7, 5 }, 2, { 7, 5 } },
    { 2, { 7, 5 }, 1, { 5 } },
    { 2, { 7, 1 }, 2, { 1, 5 } },
    { 3, { 3, 1, 4 }, 2, { 5, 4 } },
    { 1, { 6 }, 0, { 0 } },
    { 2, { 2, 3 }, 2, { 2, 3 } },
    { 1, { 1 }, 1, { 5 } },
    { 2, { 0, 3 }, 1, { 3 } },
};

static int bdtype_ok(int op, dt_dtype t, int nd, const dt_placement *pa, const dt_placement *pb)
{
    int k;
    if (op == B_DIV && !dtt_is_float(t)) return 0;
    if (!dtt_pl_ok(nd, pa, t) || !dtt_pl_ok(nd, pb, t)) return 0;
    if (t == DT_U8) /* U8: no Partial (parts of small values leave the range) */
        for (k = 0; k < nd; k++)
            if (pa[k].kind == DT_PARTIAL || pb[k].kind == DT_PARTIAL) return 0;
    return 1;
}

static void binary_sweep_mesh(const dtt_mesh *m, double frac, dtt_rng *rng, long *rot)
{
    int s, op, ia, ib, k;
    for (s = 0; s < NELEM(bshapes); s++) {
        const bshape *bs = &bshapes[s];
        int noa = 1, nob = 1;
        for (k = 0; k < m->nd; k++) {
            noa *= dtt_nopts(bs->na);
            nob *= dtt_nopts(bs->nb);
        }
        for (ia = 0; ia < noa; ia++) {
            for (ib = 0; ib < nob; ib++) {
                dt_placement pa[DT_MAX_MESH_DIMS], pb[DT_MAX_MESH_DIMS];
                dtt_pl_of(ia, m->nd, bs->na, pa);
                dtt_pl_of(ib, m->nd, bs->nb, pb);
                for (op = 0; op < 6; op++) {
                    dt_dtype t;
                    int guard = 0;
                    /* 1-D mesh: every pair for the first and the 3-D shapes, a quarter of the others */
                    double fr = frac * (frac == 1.0 && s != 0 && s != 3 ? 0.25 : 1.0);
                    if (fr < 1.0 && dtt_frand(rng) >= fr) continue;
                    /* F64 on two of three, the others rotating */
                    if ((ia + ib + op) % 3) t = (ia + op) % 2 ? DT_F64 : DT_F32;
                    else
                        do t = rot_dtype(rot);
                        while (!bdtype_ok(op, t, m->nd, pa, pb) && ++guard < 20);
                    if (!bdtype_ok(op, t, m->nd, pa, pb)) continue;
                    run_binary(m, op, t, bs->na, bs->sa, pa, bs->nb, bs->sb, pb, (int)(*rot % 5), NULL);
                }
            }
        }
    }
}

static void test_binary_sweep(void)
{
    dtt_sweep_meshes(g_comm, binary_sweep_mesh, g_seed ^ 0x22u, 3, dtt_quick ? 0.025 : 1.0, dtt_quick ? 0.002 : 0.005,
                     0.3);
}

/* named Partial algebra cases on every mesh dim: the value is exact */
static void test_partial_algebra(void)
{
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, nd, k, op, r;
    int64_t sh[2] = { 5, 4 }, sh1[1] = { 4 }, sh0[1] = { 0 };
    dtt_mesh sm;
    int one[1] = { 1 };
    memset(&sm, 0, sizeof sm);
    if (g_selfmesh) {
        sm.mesh = g_selfmesh;
        sm.nd = 1;
        sm.shape[0] = 1;
        snprintf(sm.name, sizeof sm.name, "self");
    }
    (void)one;
    for (nd = 1; nd <= 2; nd++) {
        for (f = 0, nf = dtt_factorizations(dtt_np, nd, fac, 64); f < nf; f++) {
            dtt_mesh m;
            if (f != nf / 2 || (dtt_quick && nd == 2)) continue;
            if (!dtt_mesh_open(&m, g_comm, nd, &fac[f * DT_MAX_MESH_DIMS])) continue;
            for (k = 0; k < nd; k++) {
                for (r = 0; r < 4; r++) {
                    dt_placement p[DT_MAX_MESH_DIMS], rep[DT_MAX_MESH_DIMS];
                    memset(p, 0, sizeof p);
                    memset(rep, 0, sizeof rep);
                    p[k] = dt_partial((dt_reduce)r);
                    if (nd == 2) p[1 - k] = dt_shard(1);
                    for (op = 0; op < 6; op++) {
                        dt_dtype t = op % 2 ? DT_F32 : DT_F64;
                        /* P + R, R + P, P + P, P + 0-d R, P + host scalar, P(0-d) + R */
                        run_binary(&m, op, t, 2, sh, p, 2, sh, rep, r, NULL);
                        run_binary(&m, op, t, 2, sh, rep, 2, sh, p, r + 1, NULL);
                        run_binary(&m, op, t, 2, sh, p, 2, sh, p, r + 2, NULL);
                        if (!dtt_quick) run_binary(&m, op, t, 2, sh, p, 1, sh1, rep, r + 3, NULL);
                        if (!dtt_quick) run_binary(&m, op, t, 2, sh, p, 0, sh0, rep, r + 4, NULL);
                        if (g_selfmesh) run_binary(&m, op, t, 2, sh, p, 0, sh0, rep, r + 5, &sm);
                        if (nd == 1 && op != B_DIV && !dtt_quick) {
                            run_binary(&m, op, DT_I64, 2, sh, p, 0, sh0, rep, r, NULL);
                            run_binary(&m, op, DT_I32, 2, sh, rep, 2, sh, p, r, NULL);
                        }
                    }
                }
            }
            dtt_mesh_close(&m);
        }
    }
}

/* A P(SUM) tensor plus a replicated 1.0 must add 1.0 once (pytorch #163193):
   checked on the local parts too, with an explicit value. */
static void test_partial_add_once(void)
{
    dtt_mesh m;
    int one[1];
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    {
        dt_tensor_desc d;
        dt_tensor *x = NULL, *s = NULL, *y = NULL, *z = NULL;
        double part[3] = { 1.0, 2.0, 3.0 }, one_v = 1.0, got[3];
        int i;
        memset(&d, 0, sizeof d);
        d.dtype = DT_F64;
        d.ndim = 1;
        d.shape[0] = 3;
        d.placements[0] = dt_partial(DT_SUM);
        dtt_ctx("P(SUM) + 1 once");
        CHECK_OK(dt_tensor_from_local(m.mesh, &d, part, DT_COPY, &x)); /* value = np * (1,2,3) */
        d.ndim = 0;
        d.placements[0] = dt_replicate();
        CHECK_OK(dt_tensor_from_local(m.mesh, &d, &one_v, DT_COPY, &s));
        CHECK_OK(dt_add(x, s, &y));
        if (y) {
            CHECK_OK(dtt_gather_full(y, got));
            for (i = 0; i < 3; i++)
                CHECK(got[i] == dtt_np * part[i] + 1.0, "elem %d = %g want %g", i, got[i], dtt_np * part[i] + 1.0);
        }
        CHECK_OK(dt_shift(x, 1.0, &z));
        if (z) {
            CHECK_OK(dtt_gather_full(z, got));
            for (i = 0; i < 3; i++)
                CHECK(got[i] == dtt_np * part[i] + 1.0, "shift: elem %d = %g want %g", i, got[i], dtt_np * part[i] + 1.0);
        }
        dt_tensor_destroy(z);
        dt_tensor_destroy(y);
        dt_tensor_destroy(s);
        dt_tensor_destroy(x);
    }
    dtt_mesh_close(&m);
}

/* ------------------------------------------------------------ axpy */

static void run_axpy(const dtt_mesh *m, dt_dtype t, double a, int ndim, const int64_t *shape, const dt_placement *px,
                     const dt_placement *py, int salt)
{
    int64_t n = dtt_numel(ndim, shape), i;
    double *fx = dtt_alloc_d(n), *fy = dtt_alloc_d(n), *want = dtt_alloc_d(n), *got = dtt_alloc_d(n);
    dt_tensor *x, *y;
    char s1[64], s2[64], s3[64];
    int refused = 0;
    g_cases++;
    dtt_ctx("dt_axpy a=%g %s mesh %s %s x%s y%s", a, dtt_dtname(t), m->name, dtt_shape_str(ndim, shape, s1, sizeof s1),
            dtt_pl_str(px, m->nd, s2, sizeof s2), dtt_pl_str(py, m->nd, s3, sizeof s3));
    for (i = 0; i < n; i++) {
        fx[i] = val(t, DTT_DOM_ANY, salt, i);
        fy[i] = val(t, DTT_DOM_ANY, salt + 1, i);
    }
    x = dtt_from_full(m, t, ndim, shape, px, fx, dtt_val_unit(t));
    y = dtt_from_full(m, t, ndim, shape, py, fy, dtt_val_unit(t));
    for (i = 0; i < m->nd; i++) /* an integer Partial(avg) y over more than one rank is refused */
        refused |= !dtt_is_float(t) && py[i].kind == DT_PARTIAL && py[i].reduce == DT_AVG && m->shape[i] > 1;
    if (x && y && refused) {
        void *sy = dtt_save_local(y);
        CHECK_ST(dt_axpy(a, x, y), DT_ERR_PLACEMENT);
        CHECK_ERRMSG("dt_axpy");
        CHECK(dtt_same_local(y, sy), "a refused axpy changed y");
        free(sy);
    } else if (x && y) {
        void *sx = dtt_save_local(x), *p0 = dt_tensor_data(y);
        CHECK_OK(dt_axpy(a, x, y));
        CHECK(dt_tensor_data(y) == p0 || dt_tensor_local_numel(y) == 0, "y's buffer must stay");
        dtt_expect_pl(m, y, py, "y keeps its placements");
        dtt_check_own_layout(m, y, "y layout");
        CHECK_OK(dtt_gather_full(y, got));
        for (i = 0; i < n; i++) want[i] = dtt_round_to(t, a * fx[i] + fy[i]);
        dtt_cmp("values", t, n, got, want, NULL, dtt_rtol(t), atol_of(t));
        CHECK(dtt_same_local(x, sx), "x changed");
        free(sx);
    }
    dt_tensor_destroy(x);
    dt_tensor_destroy(y);
    free(fx);
    free(fy);
    free(want);
    free(got);
}

static void test_axpy(void)
{
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, nd, ix, iy, k;
    static const int64_t shapes[][2] = { { 7, 5 }, { 2, 3 } };
    long rot = 0;
    dtt_rng rng;
    rng.s = g_seed ^ 0x33u;
    for (nd = 1; nd <= 2; nd++) {
        for (f = 0, nf = dtt_factorizations(dtt_np, nd, fac, 64); f < nf; f++) {
            dtt_mesh m;
            int no = 1, s;
            if (nd == 2 && f != nf / 2) continue;
            if (!dtt_mesh_open(&m, g_comm, nd, &fac[f * DT_MAX_MESH_DIMS])) continue;
            for (k = 0; k < nd; k++) no *= dtt_nopts(2);
            for (s = 0; s < 2; s++)
                for (ix = 0; ix < no; ix++)
                    for (iy = 0; iy < no; iy++) {
                        dt_placement px[DT_MAX_MESH_DIMS], py[DT_MAX_MESH_DIMS];
                        dt_dtype t;
                        double a;
                        if (dtt_frand(&rng) >= (nd == 1 ? (dtt_quick ? 0.06 : 1.0) : (dtt_quick ? 0.01 : 0.15))) continue;
                        dtt_pl_of(ix, nd, 2, px);
                        dtt_pl_of(iy, nd, 2, py);
                        t = (ix + iy) % 4 ? ((ix + iy) % 2 ? DT_F64 : DT_F32) : rot_dtype(&rot);
                        if (t == DT_U8) t = DT_I32;
                        if (!dtt_pl_ok(nd, px, t) || !dtt_pl_ok(nd, py, t)) continue;
                        a = dtt_is_float(t) ? ((ix + iy) % 3 == 0 ? 2.5 : (ix + iy) % 3 == 1 ? -1.5 : 0.0)
                                            : ((ix + iy) % 2 ? 3.0 : -2.0);
                        run_axpy(&m, t, a, 2, shapes[s], px, py, ix + iy);
                    }
            dtt_mesh_close(&m);
        }
    }
}

/* ------------------------------------------------------------ *out reuse, in place, wrong *out */

static dt_tensor *mk(const dtt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, dt_placement p0, int dom, int salt)
{
    return dtt_mk_val(m, t, ndim, shape, p0, val, dom, salt);
}

/* the gathered value of x against f(full) computed by the caller */
static void check_vals(const dt_tensor *x, dt_dtype t, int64_t n, const double *want, const char *what)
{
    double *got = dtt_alloc_d(n);
    CHECK_OK(dtt_gather_full(x, got));
    dtt_cmp(what, t, n, got, want, NULL, dtt_rtol(t), atol_of(t));
    free(got);
}

static void test_out_reuse(void)
{
    dtt_mesh m;
    int one[1], oi, pi, salt;
    int64_t sh[2] = { 9, 4 }, n = 36, i;
    static const dt_reduce prs[2] = { DT_MAX, DT_SUM };
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    /* unary: out reused across calls with new input values */
    for (oi = 0; oi < NELEM(uops); oi++) {
        for (pi = 0; pi < 3; pi++) {
            const uop_t *op = &uops[oi];
            if (dtt_quick && (oi + pi) % 3) continue;
            dt_placement p0 = pi == 0 ? dt_shard(0) : pi == 1 ? dt_partial(prs[0]) : dt_replicate();
            dt_tensor *out = NULL, *out0 = NULL;
            void *data0 = NULL;
            double want[36];
            dtt_ctx("reuse %s(a=%g) x%s", op->name, op->a, pi == 0 ? "S0" : pi == 1 ? "Pmax" : "R");
            for (salt = 0; salt < 3; salt++) {
                dt_tensor *x = mk(&m, DT_F32, 2, sh, p0, op->dom, salt);
                if (!x) continue;
                CHECK_OK(call_unary(op, x, DT_F64, &out));
                if (salt == 0) {
                    out0 = out;
                    data0 = out ? dt_tensor_data(out) : NULL;
                } else {
                    CHECK(out == out0, "*out must stay the same tensor");
                    CHECK(!out || dt_tensor_local_numel(out) == 0 || dt_tensor_data(out) == data0,
                          "the buffer must be reused (call %d)", salt);
                }
                if (out) {
                    for (i = 0; i < n; i++)
                        want[i] = ref_unary(op, DT_F32, DT_F64, val(DT_F32, op->dom, salt, i));
                    check_vals(out, op->id == U_CAST ? DT_F64 : DT_F32, n, want, "reused out values");
                }
                dt_tensor_destroy(x);
            }
            dt_tensor_destroy(out);
        }
    }
    /* binary: reuse */
    for (oi = 0; oi < 6; oi++) {
        dt_tensor *out = NULL, *out0 = NULL;
        void *data0 = NULL;
        double want[36];
        int64_t shb[1] = { 4 };
        dtt_ctx("reuse %s", bnames[oi]);
        for (salt = 0; salt < 3; salt++) {
            dt_tensor *a = mk(&m, DT_F64, 2, sh, salt == 1 ? dt_shard(0) : dt_shard(0), DTT_DOM_ANY, salt);
            dt_tensor *b = mk(&m, DT_F64, 1, shb, dt_replicate(), b_dom(oi, 1, DT_F64), salt + 7);
            if (a && b) {
                CHECK_OK(call_binary(oi, a, b, &out));
                dtt_check_reuse(salt == 0, out, &out0, &data0);
                for (i = 0; i < n; i++)
                    want[i] = ref_binary(oi, val(DT_F64, DTT_DOM_ANY, salt, i), val(DT_F64, b_dom(oi, 1, DT_F64), salt + 7, i % 4));
                if (out) check_vals(out, DT_F64, n, want, "reused out values");
            }
            dt_tensor_destroy(a);
            dt_tensor_destroy(b);
        }
        dt_tensor_destroy(out);
    }
    dtt_mesh_close(&m);
}

static void test_in_place(void)
{
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, nd, pi, oi;
    int64_t sh[2] = { 7, 5 }, n = 35, i;
    for (nd = 1; nd <= 2; nd++) {
        for (f = 0, nf = dtt_factorizations(dtt_np, nd, fac, 64); f < nf; f++) {
            dtt_mesh m;
            if (nd == 2 && (f != nf / 2 || dtt_quick)) continue;
            if (!dtt_mesh_open(&m, g_comm, nd, &fac[f * DT_MAX_MESH_DIMS])) continue;
            for (pi = 0; pi < 6; pi++) {
                dt_placement p0 = dtt_opt(pi, 2);
                if (dtt_quick && pi != 1 && pi != 5) continue;
                if (pi == 5) p0 = dt_partial(DT_MAX);
                /* unary in place: where the spec is kept it works, else DT_ERR_PLACEMENT and x untouched */
                for (oi = 0; oi < NELEM(uops); oi++) {
                    const uop_t *op = &uops[oi];
                    dt_placement ex = unary_expect(op, DT_F64, p0);
                    dt_tensor *x, *o;
                    double want[35];
                    int keeps = ex.kind == p0.kind && ex.dim == p0.dim && (ex.kind != DT_PARTIAL || ex.reduce == p0.reduce);
                    if (op->id == U_CAST) continue;
                    dtt_ctx("in place %s(a=%g) mesh %s x[%s%d]", op->name, op->a, m.name,
                            p0.kind == DT_SHARD ? "S" : p0.kind == DT_PARTIAL ? "P" : "R", p0.kind == DT_PARTIAL ? p0.reduce : p0.dim);
                    x = mk(&m, DT_F64, 2, sh, p0, op->dom, oi);
                    if (!x) continue;
                    o = x;
                    if (keeps) {
                        void *p = dt_tensor_data(x);
                        CHECK_OK(call_unary(op, x, DT_F64, &o));
                        CHECK(o == x, "in place: *out must stay x");
                        CHECK(dt_tensor_local_numel(x) == 0 || dt_tensor_data(x) == p, "in place: x's buffer must stay");
                        for (i = 0; i < n; i++) want[i] = ref_unary(op, DT_F64, DT_F64, val(DT_F64, op->dom, oi, i));
                        check_vals(x, DT_F64, n, want, "in-place values");
                    } else if (ex.kind == DTT_NOTP || ex.kind == DT_REPLICATE) {
                        void *sv = dtt_save_local(x);
                        CHECK_ST(call_unary(op, x, DT_F64, &o), DT_ERR_PLACEMENT);
                        CHECK_ERRMSG(op->name);
                        CHECK(o == x, "*out must stay x");
                        CHECK(dtt_same_local(x, sv), "a refused in-place op changed x");
                        free(sv);
                    }
                    dt_tensor_destroy(x);
                }
                /* binary in place: a = a op b where the out spec is a's */
                for (oi = 0; oi < 6; oi++) {
                    dt_tensor *a = mk(&m, DT_F64, 2, sh, p0, DTT_DOM_ANY, oi), *b, *o;
                    double want2[35];
                    int64_t shb[1] = { 5 };
                    int r = p0.kind == DT_PARTIAL ? partial_rule(oi, p0.reduce, -1) : -1;
                    b = mk(&m, DT_F64, 1, shb, dt_replicate(), b_dom(oi, 1, DT_F64), oi + 1);
                    dtt_ctx("in place %s mesh %s a[%d] b R", bnames[oi], m.name, pi);
                    o = a;
                    if (a && b && (p0.kind != DT_PARTIAL || r == (int)p0.reduce)) {
                        CHECK_OK(call_binary(oi, a, b, &o));
                        CHECK(o == a, "in place: *out must stay a");
                        for (i = 0; i < n; i++)
                            want2[i] = ref_binary(oi, val(DT_F64, DTT_DOM_ANY, oi, i), val(DT_F64, b_dom(oi, 1, DT_F64), oi + 1, i % 5));
                        check_vals(a, DT_F64, n, want2, "in-place values");
                    }
                    /* and as the second operand: b = a op b (b full size, spec S/R of a) */
                    /* (on a mesh dim of one rank the table order may pick R: only where every dim has ranks) */
                    if (a && p0.kind != DT_PARTIAL && (p0.kind == DT_REPLICATE || (m.shape[0] > 1 && m.shape[nd - 1] > 1))) {
                        dt_tensor *c = mk(&m, DT_F64, 2, sh, p0, b_dom(oi, 1, DT_F64), oi + 2), *a2 = mk(&m, DT_F64, 2, sh, dt_replicate(), DTT_DOM_ANY, oi + 3);
                        if (c && a2) {
                            o = c;
                            CHECK_OK(call_binary(oi, a2, c, &o));
                            CHECK(o == c, "in place (second operand): *out must stay b");
                            for (i = 0; i < n; i++)
                                want2[i] = ref_binary(oi, val(DT_F64, DTT_DOM_ANY, oi + 3, i), val(DT_F64, b_dom(oi, 1, DT_F64), oi + 2, i));
                            check_vals(c, DT_F64, n, want2, "in-place (second operand) values");
                        }
                        dt_tensor_destroy(c);
                        dt_tensor_destroy(a2);
                    }
                    dt_tensor_destroy(a);
                    dt_tensor_destroy(b);
                }
            }
            dtt_mesh_close(&m);
        }
    }
}

/* a wrong *out: refused with the documented status, its pointer and data untouched */
static void wrong_out_case(const dtt_mesh *m, const char *fn, int kind, dt_tensor *wrong, dt_status want_st,
                           const dt_tensor *x, const dt_tensor *y)
{
    dt_tensor *o = wrong;
    void *sv = dtt_save_local(wrong);
    dt_status st;
    (void)m;
    switch (kind) {
    case 0: st = dt_exp(x, &o); break;
    case 1: st = dt_add(x, y, &o); break;
    case 2: st = dt_cast(x, DT_F64, &o); break;
    case 3: st = dt_neg(x, &o); break;
    default: st = dt_fill(x, 1.0, &o); break;
    }
    CHECK(st == want_st, "%s returned %s, want %s: %s", fn, dt_status_string(st), dt_status_string(want_st), dt_last_error());
    CHECK_ERRMSG(fn);
    CHECK(o == wrong, "*out must stay the same pointer");
    CHECK(dtt_same_local(wrong, sv), "a refused *out's data changed");
    free(sv);
}

static void test_wrong_out(void)
{
    dtt_mesh m, m2;
    int64_t sh[2] = { 6, 4 }, sh2[2] = { 4, 6 }, sh3[3] = { 6, 4, 1 };
    static const char *fns[5] = { "dt_exp", "dt_add", "dt_cast", "dt_neg", "dt_fill" };
    int k;
    if (!dtt_open_1d_2d(&m, &m2, g_comm)) return;
    for (k = 0; k < 5; k++) {
        dt_tensor *x = mk(&m, DT_F32, 2, sh, dt_shard(0), DTT_DOM_ANY, 1), *y = mk(&m, DT_F32, 2, sh, dt_shard(0), DTT_DOM_ANY, 2);
        dt_tensor *w;
        dt_dtype ot = k == 2 ? DT_F64 : DT_F32, bad_t = k == 2 ? DT_F32 : DT_F64;
        dtt_ctx("wrong out %s", fns[k]);
        if (!x || !y) { dt_tensor_destroy(x); dt_tensor_destroy(y); continue; }
        w = mk(&m, bad_t, 2, sh, dt_shard(0), DTT_DOM_ANY, 5); /* dtype */
        if (w) wrong_out_case(&m, fns[k], k, w, DT_ERR_DTYPE, x, y);
        dt_tensor_destroy(w);
        w = mk(&m, ot, 2, sh2, dt_shard(0), DTT_DOM_ANY, 5); /* shape */
        if (w) wrong_out_case(&m, fns[k], k, w, DT_ERR_SHAPE, x, y);
        dt_tensor_destroy(w);
        w = mk(&m, ot, 3, sh3, dt_shard(0), DTT_DOM_ANY, 5); /* ndim */
        if (w) wrong_out_case(&m, fns[k], k, w, DT_ERR_SHAPE, x, y);
        dt_tensor_destroy(w);
        w = mk(&m, ot, 2, sh, dt_shard(1), DTT_DOM_ANY, 5); /* placements */
        if (w) wrong_out_case(&m, fns[k], k, w, DT_ERR_PLACEMENT, x, y);
        dt_tensor_destroy(w);
        w = mk(&m, ot, 2, sh, dt_replicate(), DTT_DOM_ANY, 5); /* placements */
        if (w) wrong_out_case(&m, fns[k], k, w, DT_ERR_PLACEMENT, x, y);
        dt_tensor_destroy(w);
        w = mk(&m2, ot, 2, sh, dt_replicate(), DTT_DOM_ANY, 5); /* another mesh */
        if (w) wrong_out_case(&m, fns[k], k, w, DT_ERR_MESH, x, y);
        dt_tensor_destroy(w);
        dt_tensor_destroy(x);
        dt_tensor_destroy(y);
    }
    /* axpy with x that cannot be brought to y: shape / dtype / mesh; y untouched */
    {
        dt_tensor *y = mk(&m, DT_F32, 2, sh, dt_shard(0), DTT_DOM_ANY, 1);
        dt_tensor *xs = mk(&m, DT_F32, 2, sh2, dt_shard(0), DTT_DOM_ANY, 2);
        dt_tensor *xt = mk(&m, DT_F64, 2, sh, dt_shard(0), DTT_DOM_ANY, 2);
        dt_tensor *xm = mk(&m2, DT_F32, 2, sh, dt_replicate(), DTT_DOM_ANY, 2);
        void *sv = y ? dtt_save_local(y) : NULL;
        dtt_ctx("axpy errors");
        if (y && xs) { CHECK_ST(dt_axpy(2.0, xs, y), DT_ERR_SHAPE); CHECK_ERRMSG("dt_axpy"); }
        if (y && xt) { CHECK_ST(dt_axpy(2.0, xt, y), DT_ERR_DTYPE); CHECK_ERRMSG("dt_axpy"); }
        if (y && xm) { CHECK_ST(dt_axpy(2.0, xm, y), DT_ERR_MESH); CHECK_ERRMSG("dt_axpy"); }
        if (y) {
            CHECK_ST(dt_axpy(2.0, NULL, y), DT_ERR_ARG);
            CHECK_ERRMSG("dt_axpy");
            CHECK_ST(dt_axpy(2.0, y, NULL), DT_ERR_ARG);
            CHECK(dtt_same_local(y, sv), "a refused axpy changed y");
        }
        free(sv);
        dt_tensor_destroy(y);
        dt_tensor_destroy(xs);
        dt_tensor_destroy(xt);
        dt_tensor_destroy(xm);
    }
    dtt_mesh_close(&m2);
    dtt_mesh_close(&m);
}

/* ------------------------------------------------------------ bad input */

static void test_bad_input(void)
{
    dtt_mesh m, m2;
    int oi;
    int64_t sh[2] = { 2, 3 }, shb[2] = { 3, 2 }, sh0[1] = { 0 };
    dt_tensor *a, *b, *c, *d64, *om, *hs = NULL, *sentinel;
    if (!dtt_open_1d_2d(&m, &m2, g_comm)) return;
    sentinel = (dt_tensor *)&m;
    a = mk(&m, DT_F32, 2, sh, dt_shard(0), DTT_DOM_POS, 1);
    b = mk(&m, DT_F32, 2, shb, dt_replicate(), DTT_DOM_POS, 2);
    c = mk(&m, DT_F32, 2, sh, dt_replicate(), DTT_DOM_POS, 3);
    d64 = mk(&m, DT_F64, 2, sh, dt_replicate(), DTT_DOM_POS, 3);
    om = mk(&m2, DT_F32, 2, sh, dt_replicate(), DTT_DOM_POS, 4);
    if (g_selfmesh) {
        dt_tensor_desc dd;
        memset(&dd, 0, sizeof dd);
        dd.dtype = DT_F32;
        dd.ndim = 2;
        dd.shape[0] = 2;
        dd.shape[1] = 3;
        CHECK_OK(dt_tensor_zeros(g_selfmesh, &dd, &hs)); /* a non-0-d tensor of the self mesh */
    }
    (void)sh0;
    if (!a || !b || !c || !d64 || !om) goto out;
    for (oi = 0; oi < NELEM(uops); oi++) {
        dt_tensor *o = NULL;
        dtt_ctx("bad input %s", uops[oi].name);
        CHECK_ST(call_unary(&uops[oi], NULL, DT_F64, &o), DT_ERR_ARG);
        CHECK_ERRMSG(uops[oi].name);
        CHECK(o == NULL, "*out must stay NULL");
        CHECK_ST(call_unary(&uops[oi], a, DT_F64, NULL), DT_ERR_ARG);
        CHECK_ERRMSG(uops[oi].name);
    }
    {
        dt_tensor *o = NULL;
        dtt_ctx("dt_cast to an unknown dtype");
        CHECK_ST(dt_cast(a, (dt_dtype)77, &o), DT_ERR_DTYPE);
        CHECK_ERRMSG("dt_cast");
        CHECK(o == NULL, "*out must stay NULL");
    }
    for (oi = 0; oi < 6; oi++) {
        dt_tensor *o = NULL;
        const char *fn = bnames[oi];
        dtt_ctx("bad input %s", fn);
        CHECK_ST(call_binary(oi, NULL, c, &o), DT_ERR_ARG);
        CHECK_ERRMSG(fn);
        CHECK_ST(call_binary(oi, a, NULL, &o), DT_ERR_ARG);
        CHECK_ERRMSG(fn);
        CHECK_ST(call_binary(oi, a, c, NULL), DT_ERR_ARG);
        CHECK_ERRMSG(fn);
        CHECK_ST(call_binary(oi, a, b, &o), DT_ERR_SHAPE); /* (2,3) vs (3,2) */
        CHECK_ERRMSG(fn);
        CHECK(o == NULL, "*out must stay NULL");
        CHECK_ST(call_binary(oi, a, d64, &o), DT_ERR_DTYPE);
        CHECK_ERRMSG(fn);
        CHECK(o == NULL, "*out must stay NULL");
        CHECK_ST(call_binary(oi, a, om, &o), DT_ERR_MESH);
        CHECK_ERRMSG(fn);
        CHECK(dtt_has_word(dt_last_error(), "a") && dtt_has_word(dt_last_error(), "b"),
              "the message should name a and b: \"%s\"", dt_last_error());
        CHECK(o == NULL, "*out must stay NULL");
        CHECK_ST(call_binary(oi, om, a, &o), DT_ERR_MESH);
        CHECK(o == NULL, "*out must stay NULL");
        if (hs) {
            CHECK_ST(call_binary(oi, a, hs, &o), DT_ERR_MESH);
            CHECK_ERRMSG(fn);
            CHECK(o == NULL, "*out must stay NULL");
        }
        o = sentinel;
        CHECK_ST(call_binary(oi, a, b, &o), DT_ERR_SHAPE);
        CHECK(o == sentinel, "*out must stay untouched");
        o = NULL;
    }
out:
    dt_tensor_destroy(a);
    dt_tensor_destroy(b);
    dt_tensor_destroy(c);
    dt_tensor_destroy(d64);
    dt_tensor_destroy(om);
    dt_tensor_destroy(hs);
    dtt_mesh_close(&m2);
    dtt_mesh_close(&m);
}

/* host scalars: 0-d tensors on the self mesh, on either side, all ops */
static void test_host_scalar(void)
{
    dtt_mesh m, sm;
    int one[1], op, pi;
    int64_t sh[2] = { 5, 3 }, sh0[1] = { 0 };
    one[0] = dtt_np;
    if (!g_selfmesh) return;
    memset(&sm, 0, sizeof sm);
    sm.mesh = g_selfmesh;
    sm.nd = 1;
    sm.shape[0] = 1;
    snprintf(sm.name, sizeof sm.name, "self");
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    for (op = 0; op < 6; op++)
        for (pi = 0; pi < 7; pi++) {
            dt_placement pa[DT_MAX_MESH_DIMS], pb[DT_MAX_MESH_DIMS];
            memset(pa, 0, sizeof pa);
            memset(pb, 0, sizeof pb);
            pa[0] = dtt_opt(pi, 2);
            if (dtt_quick && (op + pi) % 2) continue;
            run_binary(&m, op, pi % 2 ? DT_F32 : DT_F64, 2, sh, pa, 0, sh0, pb, pi, &sm);
            if (op != B_DIV && pi < 3) run_binary(&m, op, DT_I32, 2, sh, pa, 0, sh0, pb, pi, &sm);
        }
    dtt_mesh_close(&m);
}

/* the op cache stays bounded */
static void test_cache_bound(void)
{
    dtt_mesh m;
    int one[1], i;
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    for (i = 0; i < (dtt_quick ? 40 : 300); i++) {
        int64_t sh[1];
        dt_tensor *x, *o = NULL;
        sh[0] = 1 + i; /* distinct shapes: distinct cache keys */
        x = mk(&m, DT_F32, 1, sh, dt_shard(0), DTT_DOM_ANY, i);
        if (x) CHECK_OK(dt_neg(x, &o));
        dt_tensor_destroy(o);
        dt_tensor_destroy(x);
    }
    dtt_ctx("op cache");
    CHECK(dt_mesh_op_cache_count(m.mesh) >= 1 && dt_mesh_op_cache_count(m.mesh) <= DT_OP_CACHE,
          "dt_mesh_op_cache_count = %d", dt_mesh_op_cache_count(m.mesh));
    dtt_mesh_close(&m);
}

/* the input builder itself: dtt_from_full's parts reduce to the value (checked once per placement) */
static void test_builder(void)
{
    dtt_mesh m;
    int one[1], pi, ti;
    int64_t sh[2] = { 7, 3 }, i;
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    for (ti = 0; ti < DTT_NUM_REAL_DTYPES; ti++)
        for (pi = 0; pi < dtt_nopts(2); pi++) {
            dt_placement pl[DT_MAX_MESH_DIMS];
            double full[21], got[21];
            dt_tensor *x;
            memset(pl, 0, sizeof pl);
            pl[0] = dtt_opt(pi, 2);
            if (!dtt_pl_ok(1, pl, (dt_dtype)ti)) continue;
            if (dtt_quick && (ti + pi) % 3) continue;
            dtt_ctx("builder %s %d", dtt_dtname((dt_dtype)ti), pi);
            for (i = 0; i < 21; i++) full[i] = val((dt_dtype)ti, DTT_DOM_ANY, 0, i);
            x = dtt_from_full(&m, (dt_dtype)ti, 2, sh, pl, full, dtt_val_unit((dt_dtype)ti));
            if (!x) continue;
            CHECK_OK(dtt_gather_full(x, got));
            dtt_cmp("builder", (dt_dtype)ti, 21, got, full, NULL, 1e-15, 0);
            dt_tensor_destroy(x);
        }
    dtt_mesh_close(&m);
}

/* DT_TEST_VERBOSE: the time of each part on rank 0 */
static double g_t_start = 0;

int main(int argc, char **argv)
{
    double t0;
    dtt_init(&argc, &argv, "ops_pointwise");
    g_seed = dtt_seed(argc, argv, g_seed);
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    dtt_self_mesh(&g_selfcomm, &g_selfmesh);
    t0 = g_t_start = MPI_Wtime();
    if (g_comm) {
        test_builder();
        dtt_lap("builder", &t0);
        test_unary_sweep();
        dtt_lap("unary_sweep", &t0);
        test_cast_all();
        dtt_lap("cast_all", &t0);
        test_unary_int_refused();
        dtt_lap("unary_int_refused", &t0);
        test_binary_sweep();
        dtt_lap("binary_sweep", &t0);
        test_partial_algebra();
        dtt_lap("partial_algebra", &t0);
        test_partial_add_once();
        dtt_lap("partial_add_once", &t0);
        test_host_scalar();
        dtt_lap("host_scalar", &t0);
        test_axpy();
        dtt_lap("axpy", &t0);
        test_out_reuse();
        dtt_lap("out_reuse", &t0);
        test_in_place();
        dtt_lap("in_place", &t0);
        test_wrong_out();
        dtt_lap("wrong_out", &t0);
        test_bad_input();
        dtt_lap("bad_input", &t0);
        test_cache_bound();
        dtt_lap("cache_bound", &t0);
    }
    if (getenv("DT_TEST_VERBOSE") && dtt_rank == 0)
        fprintf(stderr, "ops_pointwise: %ld cases, %.1f s\n", g_cases, MPI_Wtime() - g_t_start);
    dt_mesh_destroy(g_selfmesh);
    dt_comm_destroy(g_selfcomm);
    dt_comm_destroy(g_comm);
    return dtt_finish();
}
