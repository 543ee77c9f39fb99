/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi blas
   impl:  own
*/
/* test_ops_kernels.c -- the host compute kernels (src/kernels.inc) called
   directly through (&dt__host_kernels), each against a naive double-precision (or
   exact integer) reference written independently here: every op, every
   dtype the op is defined for, odd sizes (0, 1, 7, 300), broadcast and
   non-contiguous strides, GEMM with transposed and gapped strides, NaN/inf
   and integer extremes. The kernels are local, so every rank runs all of it.
   --quick (or DT_TEST_QUICK=1): fewer random cases. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"
#include <float.h>

#define NT 7
static const dt_dtype g_all[NT] = { DT_F32, DT_F64, DT_F16, DT_BF16, DT_I32, DT_I64, DT_U8 };
static const dt_dtype g_floats[4] = { DT_F32, DT_F64, DT_F16, DT_BF16 };
static const size_t g_sizes[4] = { 0, 1, 7, 300 };

/* ------------------------------------------------------------ reference numerics */

static int is_nan(double v) { return v != v; }
static int is_inf(double v) { return v == v && v - v != 0; }

/* unit in the last place at 1.0 */
static double eps_of(dt_dtype t)
{
    switch (t) {
    case DT_F32: return 1.0 / 8388608.0;
    case DT_F64: return 2.220446049250313e-16;
    case DT_F16: return 1.0 / 1024.0;
    case DT_BF16: return 1.0 / 128.0;
    default: return 0.0;
    }
}

/* round to nearest even with `sig` significant bits, exponent >= emin
   (gradual underflow), overflow to inf above maxf */
static double round_sig(double v, int sig, int emin, double maxf)
{
    int e;
    double ulp, q;
    if (v == 0 || is_nan(v) || is_inf(v)) return v;
    (void)frexp(v, &e);
    e -= 1;
    if (e < emin) e = emin;
    ulp = ldexp(1.0, e - (sig - 1));
    q = nearbyint(v / ulp) * ulp;
    if (fabs(q) > maxf) return v > 0 ? HUGE_VAL : -HUGE_VAL;
    return q;
}

/* a double rounded to a float dtype, directly (one rounding) */
static double ref_round(dt_dtype t, double v)
{
    switch (t) {
    case DT_F32: return round_sig(v, 24, -126, 3.4028234663852886e38);
    case DT_F16: return round_sig(v, 11, -14, 65504.0);
    case DT_BF16: return round_sig(v, 8, -126, 3.3895313892515355e38);
    default: return v;
    }
}

/* an int64 rounded to a float dtype, exactly, in integer arithmetic */
static double ref_round_int(dt_dtype t, int64_t x)
{
    int sig = t == DT_F64 ? 53 : t == DT_F32 ? 24 : t == DT_F16 ? 11 : 8, bits = 0, shift;
    uint64_t m = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x, q, rem, half;
    double r;
    while (bits < 64 && (m >> bits) != 0) bits++;
    if (bits <= sig) r = (double)m;
    else {
        shift = bits - sig;
        q = m >> shift;
        rem = m & (((uint64_t)1 << shift) - 1);
        half = (uint64_t)1 << (shift - 1);
        if (rem > half || (rem == half && (q & 1))) q++;
        r = ldexp((double)q, shift);
    }
    if (t == DT_F16 && r > 65504.0) r = HUGE_VAL;
    return x < 0 ? -r : r;
}

/* an integer wrapped into an integer dtype (two's complement, mod 2^bits) */
static int64_t wrap_int(dt_dtype t, uint64_t v)
{
    if (t == DT_U8) return (int64_t)(v & 0xFF);
    if (t == DT_I32) {
        uint64_t w = v & 0xFFFFFFFFull;
        return w >= 0x80000000ull ? (int64_t)w - 4294967296LL : (int64_t)w;
    }
    return v >= 0x8000000000000000ull ? -(int64_t)(~v) - 1 : (int64_t)v;
}

static void int_range(dt_dtype t, int64_t *lo, int64_t *hi)
{
    if (t == DT_U8) { *lo = 0; *hi = 255; }
    else if (t == DT_I32) { *lo = -2147483647 - 1; *hi = 2147483647; }
    else { *lo = INT64_MIN; *hi = INT64_MAX; }
}

/* ------------------------------------------------------------ element access (independent of the library) */

static double get(dt_dtype t, const void *buf, size_t i)
{
    const unsigned char *p = (const unsigned char *)buf;
    switch (t) {
    case DT_F32: { float f; memcpy(&f, p + 4 * i, 4); return f; }
    case DT_F64: { double d; memcpy(&d, p + 8 * i, 8); return d; }
    case DT_F16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return dtt_half_to_float(h); }
    case DT_BF16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return dtt_bf16_to_float(h); }
    case DT_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case DT_I64: { int64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
    case DT_U8: return p[i];
    default: break; /* complex: tests/test_complex.c */
    }
    return 0;
}

static int64_t geti(dt_dtype t, const void *buf, size_t i)
{
    const unsigned char *p = (const unsigned char *)buf;
    if (t == DT_I64) { int64_t v; memcpy(&v, p + 8 * i, 8); return v; }
    if (t == DT_I32) { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    return p[i];
}

/* store v, which must be representable in t (ints: wrapped) */
static void put(dt_dtype t, void *buf, size_t i, double v)
{
    unsigned char *p = (unsigned char *)buf;
    switch (t) {
    case DT_F32: { float f = (float)v; memcpy(p + 4 * i, &f, 4); break; }
    case DT_F64: memcpy(p + 8 * i, &v, 8); break;
    case DT_F16: { uint16_t h = dtt_float_to_half((float)v); memcpy(p + 2 * i, &h, 2); break; }
    case DT_BF16: { uint16_t h = dtt_float_to_bf16((float)v); memcpy(p + 2 * i, &h, 2); break; }
    default: break;
    }
}

static void puti(dt_dtype t, void *buf, size_t i, int64_t v)
{
    unsigned char *p = (unsigned char *)buf;
    int64_t w = wrap_int(t, (uint64_t)v);
    if (t == DT_I64) memcpy(p + 8 * i, &w, 8);
    else if (t == DT_I32) { int32_t x = (int32_t)w; memcpy(p + 4 * i, &x, 4); }
    else p[i] = (unsigned char)w;
}

/* |got - ref| <= tol, NaN only as NaN, inf only as the same inf */
static int near(double got, double ref, double tol)
{
    if (is_nan(ref)) return is_nan(got);
    if (is_inf(ref)) return got == ref;
    return fabs(got - ref) <= tol;
}

/* the smallest subnormal step of t: an absolute floor for tolerances */
static double sub_floor(dt_dtype t)
{
    return t == DT_F16 ? 5.960464477539063e-08 : t == DT_BF16 ? 9.183549615799121e-41 : 1.401298464324817e-45;
}

static double frand(dtt_rng *r, double lo, double hi) { return lo + (hi - lo) * dtt_frand(r); }

/* a random value exactly representable in t: floats in [lo, hi], ints over a spread range */
static void fill_random(dt_dtype t, void *buf, size_t n, dtt_rng *r, double lo, double hi)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (dtt_is_float(t)) put(t, buf, i, ref_round(t, frand(r, lo, hi)));
        else if (t == DT_U8) puti(t, buf, i, (int64_t)(dtt_next(r) & 0xFF));
        else if (t == DT_I32) puti(t, buf, i, (int64_t)(dtt_next(r) % 2001) - 1000);
        else puti(t, buf, i, (int64_t)(dtt_next(r) % 200001) - 100000);
    }
}

/* integer extremes at the first positions (for n large enough) */
static void put_int_extremes(dt_dtype t, void *buf, size_t n)
{
    int64_t lo, hi;
    int_range(t, &lo, &hi);
    if (n > 4) {
        puti(t, buf, 0, lo);
        puti(t, buf, 1, hi);
        puti(t, buf, 2, lo + 1);
        puti(t, buf, 3, 0);
    }
}

/* NaN, +-inf, -0 at fixed positions (for n large enough) */
static void put_specials(dt_dtype t, void *buf, size_t n)
{
    if (n > 40) {
        put(t, buf, 3, NAN);
        put(t, buf, 17, HUGE_VAL);
        put(t, buf, 29, -HUGE_VAL);
        put(t, buf, 31, -0.0);
        put(t, buf, 33, 0.0);
    }
}

/* ------------------------------------------------------------ unary */

/* the names and the float-only flag come from the op registry's lines
   (DT__UNARY_OPS); the reference math below is written independently */
#define UOP_NAME(NAME, name, wrap, fl, pm, fmath, imath) #name,
#define UOP_FLOAT_ONLY(NAME, name, wrap, fl, pm, fmath, imath) ((fl) & DT__FLOAT_ONLY) != 0,
static const char *uop_name(int op)
{
    static const char *const names[DT__U_NUM] = { DT__UNARY_OPS(UOP_NAME) };
    return op >= 0 && op < DT__U_NUM ? names[op] : "?";
}

static int uop_float_only(int op)
{
    static const int float_only[DT__U_NUM] = { DT__UNARY_OPS(UOP_FLOAT_ONLY) };
    return op >= 0 && op < DT__U_NUM && float_only[op];
}

/* in long double (x87 on x86-64): also the accuracy test's reference */
static long double ref_unary_ld(int op, long double x, long double a)
{
    switch (op) {
    case DT__U_NEG: return -x;
    case DT__U_ABS: return fabsl(x);
    case DT__U_EXP: return expl(x);
    case DT__U_LOG: return logl(x);
    case DT__U_SQRT: return sqrtl(x);
    case DT__U_RSQRT: return 1.0L / sqrtl(x);
    case DT__U_SIN: return sinl(x);
    case DT__U_COS: return cosl(x);
    case DT__U_TANH: return tanhl(x);
    case DT__U_SIGMOID: return 1.0L / (1.0L + expl(-x));
    case DT__U_RELU: return x != x ? x : x > 0 ? x : 0.0L; /* NaN stays */
    case DT__U_GELU: return 0.5L * x * erfcl(-x / sqrtl(2.0L));
    case DT__U_SILU: return x / (1.0L + expl(-x));
    case DT__U_SCALE: return x * a;
    case DT__U_SHIFT: return x + a;
    case DT__U_POW: return powl(x, a);
    case DT__U_COPY: return x;
    case DT__U_FILL: return a;
    }
    return 0;
}

static double ref_unary_f(int op, double x, double a) { return (double)ref_unary_ld(op, x, a); }

static int64_t ref_unary_i(dt_dtype t, int op, int64_t x, int64_t a)
{
    uint64_t u = (uint64_t)x, ua = (uint64_t)a;
    switch (op) {
    case DT__U_NEG: return wrap_int(t, 0 - u);
    case DT__U_ABS: return wrap_int(t, x < 0 ? 0 - u : u);
    case DT__U_RELU: return x < 0 ? 0 : x;
    case DT__U_SCALE: return wrap_int(t, u * ua);
    case DT__U_SHIFT: return wrap_int(t, u + ua);
    case DT__U_COPY: return x;
    case DT__U_FILL: return wrap_int(t, ua);
    }
    return 0;
}

/* ------------------------------------------------------------ unary accuracy */

/* The element math's error in units in the last place of the output type,
   against long double (x87 extended) references, over the tails as well as
   the middle: the unary test above allows |got - ref| <= k eps (|ref| + 1),
   which hides a relative error near zero (GELU written as x/2 (1 + erf(x/sqrt2))
   cancelled in the left tail: 4e-4 relative at x = -3.8 in F32, host and GPU
   alike). The same functions run on the GPU (>>math), so these bounds are the
   device's too up to its libm's erf/erfc/log/sin... (test_cuda_host compiles
   the device math for the host).
   Bounds, ULPs of the output (measured here, glibc 2.36, then rounded up):
     neg abs relu copy            0      exact
     scale shift                  0.5    one rounding
     exp (F32: dt__expf)          ACC_EXP
     log sqrt sin cos pow         ACC_LIBM   libm
     tanh                         2      glibc's tanhf/tanh: 1.9 and 1.7 measured
     rsqrt                        1.5    two roundings
     sigmoid silu                 ACC_SIG    exp, an add, a divide
     gelu                         ACC_GELU + 2 x^2   x/2 erfc(-x/sqrt2): no cancellation; the
                                  roundings of 1/sqrt2 and of x/sqrt2 (an ULP of the argument
                                  at most, up to 2 of the result's binade) times GELU's
                                  condition number, about x^2 for x << 0 (measured: 156 ULPs
                                  at x = -11.46 in F32, 57 at x = -6.2 in F64; the old
                                  1 + erf form: 1.7e7 ULPs at x = -6.19 in F32)
   Inputs: 4001 points evenly in [-20, 20] and +-2^k for k in [-30, 6] in
   quarter steps; log, sqrt, rsqrt, pow get |x|. Results past the type's
   range are skipped; below the normal range the ULP is the subnormal
   spacing (an absolute bound). */
#define ACC_EXP 2.0
#define ACC_LIBM 1.0
#define ACC_SIG 3.0
#define ACC_GELU 3.0


static double acc_bound(int op, double x)
{
    switch (op) {
    case DT__U_EXP: return ACC_EXP;
    case DT__U_SCALE: case DT__U_SHIFT: return 0.5;
    case DT__U_RSQRT: return 1.5;
    case DT__U_SIGMOID: case DT__U_SILU: return ACC_SIG;
    case DT__U_GELU: return ACC_GELU + 2.0 * x * x;
    case DT__U_TANH: return 2.0;
    case DT__U_LOG: case DT__U_SQRT: case DT__U_SIN: case DT__U_COS: case DT__U_POW: return ACC_LIBM;
    default: return 0.0;
    }
}

/* the size of one unit in the last place of `ref` in type t (F32/F64) */
static long double ulp_of(dt_dtype t, long double ref)
{
    int mant = t == DT_F32 ? 24 : 53, emin = t == DT_F32 ? -125 : -1021, e;
    (void)frexpl(ref, &e);
    if (e < emin) e = emin; /* subnormal: their fixed spacing */
    return ldexpl(1.0L, e - mant);
}

/* long double wider than double (x87 on x86-64)? Not under valgrind, which
   runs x87 code in double precision: then only F32 is checked (against
   double-precision references, still 2^29 times finer than its ULP) */
static int long_double_is_wide(void)
{
    volatile long double one = 1.0L, tiny = ldexpl(1.0L, -60);
    return one + tiny != one;
}

static void test_unary_accuracy(void)
{
    enum { NLIN = 4001, NEXP = 2 * 145 };
    const dt__kernels *k = (&dt__host_kernels);
    static const dt_dtype types[2] = { DT_F32, DT_F64 };
    double xs[NLIN + NEXP];
    size_t n = 0, i;
    int ti, op;
    for (i = 0; i < NLIN; i++) xs[n++] = -20.0 + 40.0 * (double)i / (NLIN - 1);
    for (i = 0; i < NEXP / 2; i++) {
        double m = pow(2.0, -30.0 + 0.25 * (double)i);
        xs[n++] = m;
        xs[n++] = -m;
    }
    for (ti = 0; ti < (long_double_is_wide() ? 2 : 1); ti++) {
        dt_dtype t = types[ti];
        size_t es = dt_dtype_size(t);
        unsigned char *x = (unsigned char *)dtt_malloc(n * es), *y = (unsigned char *)dtt_malloc(n * es);
        for (op = 0; op < DT__U_NUM; op++) {
            double a = op == DT__U_POW ? 2.5 : op == DT__U_SHIFT ? -0.75 : 1.5, worst = 0, worst_x = 0;
            int positive = op == DT__U_LOG || op == DT__U_SQRT || op == DT__U_RSQRT || op == DT__U_POW, bad = 0;
            if (op == DT__U_FILL) continue;
            dtt_ctx("unary accuracy %s %s", uop_name(op), dtt_dtname(t));
            for (i = 0; i < n; i++) put(t, x, i, positive ? fabs(xs[i]) : xs[i]);
            k->unary((dt__uop)op, t, x, y, n, a);
            for (i = 0; i < n; i++) {
                long double xv = (long double)get(t, x, i), ref = ref_unary_ld(op, xv, (long double)a);
                double got = get(t, y, i), lim = t == DT_F32 ? FLT_MAX : DBL_MAX, err;
                if (!(fabsl(ref) <= lim)) continue; /* past the type's range, or no value */
                err = is_nan(got) ? HUGE_VAL : (double)(fabsl((long double)got - ref) / ulp_of(t, ref));
                if (err > worst) worst = err, worst_x = (double)xv;
                if (!(err <= acc_bound(op, (double)xv)) && !bad++)
                    CHECK(0, "error %.3g ULPs at x = %.9g (bound %.3g)", err, (double)xv, acc_bound(op, (double)xv));
            }
            CHECK(bad == 0, "%d of %zu inputs over the bound", bad, n);
            if (getenv("DT_TEST_ACCURACY"))
                printf("accuracy %-8s %s: worst %.3f ULPs at x = %.9g (bound there %.3g)\n", uop_name(op),
                       dtt_dtname(t), worst, worst_x, acc_bound(op, worst_x));
        }
        free(x);
        free(y);
    }
}

static void test_unary(dtt_rng *rng)
{
    const dt__kernels *k = (&dt__host_kernels);
    int ti, op, si, inplace;
    for (ti = 0; ti < NT; ti++) {
        dt_dtype t = g_all[ti];
        size_t es = dt_dtype_size(t);
        for (op = 0; op < DT__U_NUM; op++) {
            if (!dtt_is_float(t) && uop_float_only(op)) continue;
            for (si = 0; si < 4; si++)
                for (inplace = 0; inplace < 2; inplace++) {
                    size_t n = g_sizes[si], i;
                    unsigned char *x = (unsigned char *)dtt_malloc(n * es), *y = (unsigned char *)dtt_malloc(n * es);
                    unsigned char *x0 = (unsigned char *)dtt_malloc(n * es);
                    double a = op == DT__U_POW ? 2.5 : op == DT__U_SHIFT ? -0.75 : 1.5;
                    int64_t ia = op == DT__U_SHIFT ? -3 : op == DT__U_FILL ? 300 : 7;
                    double ulps = (op == DT__U_GELU || op == DT__U_POW || op == DT__U_TANH || op == DT__U_SILU) ? 8 : 4;
                    dtt_ctx("unary %s %s n=%zu%s", uop_name(op), dtt_dtname(t), n, inplace ? " in place" : "");
                    fill_random(t, x, n, rng, -4.0, 4.0);
                    if (dtt_is_float(t)) put_specials(t, x, n);
                    else put_int_extremes(t, x, n);
                    memcpy(x0, x, n * es);
                    if (inplace) k->unary((dt__uop)op, t, x, x, n, dtt_is_float(t) ? a : (double)ia);
                    else k->unary((dt__uop)op, t, x, y, n, dtt_is_float(t) ? a : (double)ia);
                    if (!inplace) CHECK(n == 0 || memcmp(x, x0, n * es) == 0, "x changed");
                    for (i = 0; i < n; i++) {
                        const void *out = inplace ? x : y;
                        if (dtt_is_float(t)) {
                            double xv = get(t, x0, i), ref = ref_unary_f(op, xv, a), got = get(t, out, i);
                            double tol = ulps * eps_of(t) * (fabs(ref) + 1.0);
                            if (t == DT_F16 || t == DT_BF16) ref = ref_round(t, ref), tol = eps_of(t) * (fabs(ref) + 0.01);
                            CHECK(near(got, ref, tol), "[%zu] x=%.9g: got %.9g want %.9g", i, xv, got, ref);
                        } else {
                            int64_t xv = geti(t, x0, i), ref = ref_unary_i(t, op, xv, ia), got = geti(t, out, i);
                            CHECK(got == ref, "[%zu] x=%lld: got %lld want %lld", i, (long long)xv, (long long)got,
                                  (long long)ref);
                        }
                    }
                    free(x);
                    free(y);
                    free(x0);
                }
        }
    }
    /* U8 wraps mod 256; RELU keeps NaN and gives +0 for negatives */
    {
        unsigned char u[3] = { 5, 0, 255 }, v[3];
        float f[3] = { NAN, -2.0f, 3.0f }, g[3];
        dtt_ctx("unary u8 neg / f32 relu specifics");
        k->unary(DT__U_NEG, DT_U8, u, v, 3, 0);
        CHECK(v[0] == 251 && v[1] == 0 && v[2] == 1, "u8 neg: %d %d %d", v[0], v[1], v[2]);
        k->unary(DT__U_RELU, DT_F32, f, g, 3, 0);
        CHECK(is_nan(g[0]) && g[1] == 0.0f && g[2] == 3.0f, "relu: %g %g %g", g[0], g[1], g[2]);
    }
}

/* ------------------------------------------------------------ cast */

static void test_cast(dtt_rng *rng)
{
    const dt__kernels *k = (&dt__host_kernels);
    /* specials for float sources: rounding ties, saturation, NaN, values that
       round twice through float */
    static const double fspecial[] = { NAN, HUGE_VAL, -HUGE_VAL, -0.0, 0.5, -0.5, 1.5, 2.5, -2.7, 255.9, 256.0, -1.0,
                                       3e9, -3e9, 2147483647.5, -2147483648.7, 9.3e18, -9.3e18, 65519.0, 65520.0,
                                       1.00048828125, 1.000244140625000001, 1e-8, 3.0e38, 1.0 + 1.0 / 2048.0 + 1e-12,
                                       6.103515625e-05, 5.960464477539063e-08, 2.98e-08 };
    static const int64_t ispecial[] = { 0, 1, -1, 255, 256, -129, 2147483647, -2147483647 - 1, 4294967296LL + 7,
                                        INT64_MAX, INT64_MIN, 16777217, 33554435, (1LL << 60) + (1LL << 36) + 1,
                                        65519, 65520, -65521, 9007199254740993LL, (1LL << 60) + (1LL << 52) + 1,
                                        -((1LL << 40) + (1LL << 32) + 1) };
    int fi, ti;
    for (fi = 0; fi < NT; fi++)
        for (ti = 0; ti < NT; ti++) {
            dt_dtype from = g_all[fi], to = g_all[ti];
            size_t nsp = dtt_is_float(from) ? sizeof fspecial / sizeof *fspecial : sizeof ispecial / sizeof *ispecial;
            int si;
            for (si = 0; si < 5; si++) {
                size_t n = si < 4 ? g_sizes[si] : nsp, i;
                unsigned char *x = (unsigned char *)dtt_malloc(n * 8), *y = (unsigned char *)dtt_malloc(n * 8);
                dtt_ctx("cast %s -> %s n=%zu%s", dtt_dtname(from), dtt_dtname(to), n, si == 4 ? " (specials)" : "");
                if (dtt_is_float(from)) fill_random(from, x, n, rng, -300.0, 300.0);
                else {
                    fill_random(from, x, n, rng, 0, 0);
                    put_int_extremes(from, x, n);
                }
                if (si == 4)
                    for (i = 0; i < n; i++) {
                        if (dtt_is_float(from)) put(from, x, i, ref_round(from, fspecial[i]));
                        else puti(from, x, i, ispecial[i]);
                    }
                k->cast(from, x, to, y, n);
                for (i = 0; i < n; i++) {
                    if (dtt_is_float(from) && dtt_is_float(to)) {
                        double xv = get(from, x, i), ref = ref_round(to, xv), got = get(to, y, i);
                        CHECK(near(got, ref, 0.0), "[%zu] %.17g: got %.17g want %.17g", i, xv, got, ref);
                    } else if (dtt_is_float(from)) {
                        double xv = get(from, x, i), tr = trunc(xv);
                        int64_t lo, hi, ref, got = geti(to, y, i);
                        int_range(to, &lo, &hi);
                        if (is_nan(xv)) ref = 0;
                        else if (tr <= (double)lo) ref = lo;
                        else if (tr >= (double)hi) ref = hi;
                        else ref = (int64_t)tr;
                        CHECK(got == ref, "[%zu] %.17g: got %lld want %lld", i, xv, (long long)got, (long long)ref);
                    } else if (dtt_is_float(to)) {
                        int64_t xv = geti(from, x, i);
                        double ref = ref_round_int(to, xv), got = get(to, y, i);
                        CHECK(near(got, ref, 0.0), "[%zu] %lld: got %.17g want %.17g", i, (long long)xv, got, ref);
                    } else {
                        int64_t xv = geti(from, x, i), ref = wrap_int(to, (uint64_t)xv), got = geti(to, y, i);
                        CHECK(got == ref, "[%zu] %lld: got %lld want %lld", i, (long long)xv, (long long)got,
                              (long long)ref);
                    }
                }
                free(x);
                free(y);
            }
        }
}

/* every F16/BF16 value widened, and float -> half narrowing at every tie
   and its neighbours, against the harness's own conversions */
static void test_half_conversions(dtt_rng *rng)
{
    const dt__kernels *k = (&dt__host_kernels);
    uint16_t *h = (uint16_t *)dtt_malloc(65536 * 2), *h2 = (uint16_t *)dtt_malloc(3 * 65536 * 2);
    float *f = (float *)dtt_malloc(3 * 65536 * 4);
    uint32_t u;
    int ti, i, bad;
    for (ti = 0; ti < 2; ti++) {
        dt_dtype t = ti ? DT_BF16 : DT_F16;
        dtt_ctx("half conversions %s", dtt_dtname(t));
        for (u = 0; u < 65536; u++) h[u] = (uint16_t)u;
        k->cast(t, h, DT_F32, f, 65536);
        for (u = 0, bad = 0; u < 65536 && bad < 5; u++) {
            float want = t == DT_F16 ? dtt_half_to_float((uint16_t)u) : dtt_bf16_to_float((uint16_t)u);
            if (!(dtt_f2u(f[u]) == dtt_f2u(want) || (is_nan(f[u]) && is_nan(want)))) {
                CHECK(0, "widen 0x%04x: got %a want %a", (unsigned)u, f[u], want);
                bad++;
            }
        }
        /* each value, the tie above it, and the float either side of the tie */
        for (u = 0; u < 65536; u++) {
            float lo = t == DT_F16 ? dtt_half_to_float((uint16_t)u) : dtt_bf16_to_float((uint16_t)u);
            float hi = t == DT_F16 ? dtt_half_to_float((uint16_t)(u + 1)) : dtt_bf16_to_float((uint16_t)(u + 1));
            float mid = (float)(((double)lo + (double)hi) / 2);
            f[3 * u] = mid;
            f[3 * u + 1] = dtt_u2f(dtt_f2u(mid) + 1);
            f[3 * u + 2] = (u & 7) == 0 ? dtt_u2f((uint32_t)dtt_next(rng)) : dtt_u2f(dtt_f2u(mid) - 1);
        }
        k->cast(DT_F32, f, t, h2, 3 * 65536);
        for (i = 0, bad = 0; i < 3 * 65536 && bad < 5; i++) {
            uint16_t want = t == DT_F16 ? dtt_float_to_half(f[i]) : dtt_float_to_bf16(f[i]);
            int wnan = t == DT_F16 ? (want & 0x7c00) == 0x7c00 && (want & 0x3ff) : (want & 0x7f80) == 0x7f80 && (want & 0x7f);
            int gnan = t == DT_F16 ? (h2[i] & 0x7c00) == 0x7c00 && (h2[i] & 0x3ff) : (h2[i] & 0x7f80) == 0x7f80 && (h2[i] & 0x7f);
            if (!(h2[i] == want || (wnan && gnan))) {
                CHECK(0, "narrow %a: got 0x%04x want 0x%04x", f[i], h2[i], want);
                bad++;
            }
        }
    }
    free(h);
    free(h2);
    free(f);
}

/* exp (and what is built on it) over its whole range, subnormal results included */
static void test_exp_range(void)
{
    const dt__kernels *k = (&dt__host_kernels);
    int n = 0, i, bad = 0;
    float *x = (float *)dtt_malloc(40000 * 4), *y = (float *)dtt_malloc(40000 * 4);
    double v;
    for (v = -110.0; v < 95.0 && n < 40000; v += 0.00517) x[n++] = (float)v;
    dtt_ctx("exp f32 range");
    k->unary(DT__U_EXP, DT_F32, x, y, (size_t)n, 0);
    for (i = 0; i < n && bad < 5; i++) {
        double ref = ref_round(DT_F32, exp((double)x[i]));
        double tol = 2 * eps_of(DT_F32) * fabs(ref) + 1.401298464324817e-45;
        if (!near(y[i], ref, tol)) {
            CHECK(0, "exp(%.9g): got %.9g want %.9g", x[i], y[i], ref);
            bad++;
        }
    }
    free(x);
    free(y);
}

/* ------------------------------------------------------------ binary */

static const char *bop_name(int op)
{
    static const char *const names[DT__B_NUM] = { "add", "sub", "mul", "div", "max", "min", "axpy" };
    return op >= 0 && op < DT__B_NUM ? names[op] : "?";
}

static double ref_binary_f(int op, double a, double b, double alpha)
{
    switch (op) {
    case DT__B_ADD: return a + b;
    case DT__B_SUB: return a - b;
    case DT__B_MUL: return a * b;
    case DT__B_DIV: return a / b;
    case DT__B_MAX: return is_nan(a) || is_nan(b) ? NAN : a > b ? a : b;
    case DT__B_MIN: return is_nan(a) || is_nan(b) ? NAN : a < b ? a : b;
    case DT__B_AXPY: return alpha * a + b;
    }
    return 0;
}

static int64_t ref_binary_i(dt_dtype t, int op, int64_t a, int64_t b, int64_t alpha)
{
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (op) {
    case DT__B_ADD: return wrap_int(t, ua + ub);
    case DT__B_SUB: return wrap_int(t, ua - ub);
    case DT__B_MUL: return wrap_int(t, ua * ub);
    case DT__B_MAX: return a > b ? a : b;
    case DT__B_MIN: return a < b ? a : b;
    case DT__B_AXPY: return wrap_int(t, (uint64_t)alpha * ua + ub);
    }
    return 0;
}

/* an operand view of an output `shape`: mode 0 contiguous, 1 broadcast
   (some dims extent 1, stride 0), 2 transposed storage, 3 gapped (strides x2
   plus an offset) */
typedef struct operand {
    int64_t st[DT_MAX_DIMS], off, nstore;
} operand;

static void make_operand(int ndim, const int64_t *shape, int mode, dtt_rng *r, operand *o)
{
    int64_t ext[DT_MAX_DIMS], s = 1;
    int order[DT_MAX_DIMS], d, j;
    for (d = 0; d < ndim; d++) {
        ext[d] = shape[d];
        order[d] = d;
        if (mode == 1 && dtt_randint(r, 2)) ext[d] = 1;
    }
    if (mode == 2) /* a random storage order */
        for (d = ndim - 1; d > 0; d--) {
            int q = dtt_randint(r, d + 1), tmp = order[d];
            order[d] = order[q];
            order[q] = tmp;
        }
    for (j = ndim - 1; j >= 0; j--) {
        d = order[j];
        o->st[d] = ext[d] == 1 && mode == 1 ? 0 : s * (mode == 3 ? 2 : 1);
        s *= ext[d] * (mode == 3 ? 2 : 1);
    }
    o->off = mode == 3 ? 3 : 0;
    o->nstore = s + o->off + 1;
}

static void test_binary(dtt_rng *rng)
{
    const dt__kernels *k = (&dt__host_kernels);
    int ti, op, c, ncase = dtt_quick ? 12 : 40;
    for (ti = 0; ti < NT; ti++) {
        dt_dtype t = g_all[ti];
        size_t es = dt_dtype_size(t);
        for (op = 0; op < DT__B_NUM; op++) {
            if (op == DT__B_DIV && !dtt_is_float(t)) continue;
            for (c = 0; c < ncase; c++) {
                int ndim, d, ma, mb, alias = 0;
                int64_t shape[DT_MAX_DIMS], n, i;
                operand A, B;
                unsigned char *a, *b, *out;
                double alpha = op == DT__B_AXPY ? (dtt_is_float(t) ? -1.5 : 3.0) : 1.0;
                char s1[64];
                /* the fixed shapes: sizes 0, 1, 7, 300 and a scalar */
                if (c < 4) {
                    ndim = 1;
                    shape[0] = (int64_t)g_sizes[c];
                } else if (c == 4) ndim = 0;
                else if (c == 5 || c == 6) { /* many row tiles of a transposed or gapped operand */
                    ndim = 2;
                    shape[0] = 37;
                    shape[1] = 300;
                } else {
                    ndim = 1 + dtt_randint(rng, 4);
                    for (d = 0; d < ndim; d++) shape[d] = dtt_randint(rng, 9) == 0 ? 1 : 1 + dtt_randint(rng, 6);
                    if (c % 7 == 0) shape[dtt_randint(rng, ndim)] = 0;
                    if (c % 5 == 0) shape[ndim - 1] = 300;
                }
                n = dtt_numel(ndim, shape);
                ma = c < 5 ? c % 2 : c == 5 ? 2 : c == 6 ? 3 : dtt_randint(rng, 4);
                mb = c < 5 ? (c + 1) % 2 : c == 5 ? 3 : c == 6 ? 2 : dtt_randint(rng, 4);
                make_operand(ndim, shape, ma, rng, &A);
                make_operand(ndim, shape, mb, rng, &B);
                a = (unsigned char *)dtt_malloc((size_t)A.nstore * es);
                b = (unsigned char *)dtt_malloc((size_t)B.nstore * es);
                fill_random(t, a, (size_t)A.nstore, rng, -4.0, 4.0);
                fill_random(t, b, (size_t)B.nstore, rng, -4.0, 4.0);
                if (dtt_is_float(t)) {
                    if (A.nstore > 5) put(t, a, (size_t)A.nstore / 2, NAN);
                    if (B.nstore > 7) put(t, b, (size_t)B.nstore / 3, NAN);
                    if (op == DT__B_DIV && B.nstore > 9) put(t, b, (size_t)B.nstore / 5, 0.0);
                } else {
                    put_int_extremes(t, a, (size_t)A.nstore);
                }
                /* out may be a when a is the contiguous operand */
                if (ma == 0 && c % 3 == 0) alias = 1;
                out = alias ? a : (unsigned char *)dtt_malloc((size_t)(n ? n : 1) * es);
                {
                    unsigned char *a0 = (unsigned char *)dtt_malloc((size_t)A.nstore * es);
                    memcpy(a0, a, (size_t)A.nstore * es);
                    dtt_ctx("binary %s %s shape %s modes %d,%d%s", bop_name(op), dtt_dtname(t),
                            dtt_shape_str(ndim, shape, s1, sizeof s1), ma, mb, alias ? " out=a" : "");
                    k->binary((dt__bop)op, t, ndim, shape, a + A.off * (int64_t)es, A.st, b + B.off * (int64_t)es, B.st,
                              alias ? a : out, alpha);
                    for (i = 0; i < n; i++) {
                        int64_t rem = i, oa = A.off, ob = B.off;
                        for (d = ndim - 1; d >= 0; d--) {
                            oa += (rem % shape[d]) * A.st[d];
                            ob += (rem % shape[d]) * B.st[d];
                            rem /= shape[d];
                        }
                        if (dtt_is_float(t)) {
                            double av = get(t, a0, (size_t)oa), bv = get(t, b, (size_t)ob);
                            double ref = ref_round(t, ref_binary_f(op, av, bv, alpha)), got = get(t, out, (size_t)i);
                            double tol = sub_floor(t) + 2 * eps_of(t) * (op == DT__B_AXPY ? fabs(alpha * av) + fabs(bv) : fabs(ref));
                            CHECK(near(got, ref, tol), "[%lld] %.9g, %.9g: got %.9g want %.9g", (long long)i, av, bv,
                                  got, ref);
                        } else {
                            int64_t av = geti(t, a0, (size_t)oa), bv = geti(t, b, (size_t)ob);
                            int64_t ref = ref_binary_i(t, op, av, bv, (int64_t)alpha), got = geti(t, out, (size_t)i);
                            CHECK(got == ref, "[%lld] %lld, %lld: got %lld want %lld", (long long)i, (long long)av,
                                  (long long)bv, (long long)got, (long long)ref);
                        }
                    }
                    free(a0);
                }
                if (!alias) free(out);
                free(a);
                free(b);
            }
        }
    }
}

/* ------------------------------------------------------------ reduce */

static const char *rop_name(int op)
{
    static const char *const names[DT__R_NUM] = { "sum", "max", "min", "sumsq", "argmax" };
    return op >= 0 && op < DT__R_NUM ? names[op] : "?";
}

static void test_reduce_case(dt_dtype t, int op, int ndim, const int64_t *shape, unsigned mask, double scale,
                             dtt_rng *rng, int with_nan)
{
    const dt__kernels *k = (&dt__host_kernels);
    size_t es = dt_dtype_size(t), oes = op == DT__R_ARGMAX ? 8 : es;
    int64_t n = dtt_numel(ndim, shape), nout = 1, nred = 1, o;
    int64_t oshape[DT_MAX_DIMS];
    int d;
    unsigned char *x, *out;
    char s1[64];
    for (d = 0; d < ndim; d++) {
        oshape[d] = (mask >> d & 1u) ? 1 : shape[d];
        if (mask >> d & 1u) nred *= shape[d];
        else nout *= shape[d];
    }
    x = (unsigned char *)dtt_malloc((size_t)n * es);
    out = (unsigned char *)dtt_malloc((size_t)(nout ? nout : 1) * oes);
    fill_random(t, x, (size_t)n, rng, -4.0, 4.0);
    if (!dtt_is_float(t)) put_int_extremes(t, x, (size_t)n);
    if (with_nan && dtt_is_float(t) && n > 3) {
        put(t, x, (size_t)(n / 3), NAN);
        put(t, x, (size_t)(n / 2), NAN);
    }
    dtt_ctx("reduce %s %s shape %s mask 0x%x scale %g%s", rop_name(op), dtt_dtname(t),
            dtt_shape_str(ndim, shape, s1, sizeof s1), mask, scale, with_nan ? " with NaN" : "");
    k->reduce((dt__rop)op, t, ndim, shape, mask, x, out, scale);
    for (o = 0; o < nout; o++) {
        /* the output's coordinate, then every input element that maps to it */
        int64_t oc[DT_MAX_DIMS], rem = o, r;
        double fs = 0, fabs_sum = 0, fm = (op == DT__R_MIN) ? HUGE_VAL : -HUGE_VAL;
        uint64_t is = 0;
        int64_t lo, hi, im, arg = 0, argbest_i = 0;
        double argbest = -HUGE_VAL;
        int first = 1;
        int_range(t, &lo, &hi);
        im = op == DT__R_MIN ? hi : lo;
        for (d = ndim - 1; d >= 0; d--) {
            oc[d] = oshape[d] ? rem % oshape[d] : 0;
            rem = oshape[d] ? rem / oshape[d] : 0;
        }
        for (r = 0; r < nred; r++) { /* r: row-major index within the reduced dims */
            int64_t c[DT_MAX_DIMS], rr = r, li = 0;
            for (d = ndim - 1; d >= 0; d--) {
                if (mask >> d & 1u) {
                    c[d] = rr % shape[d];
                    rr /= shape[d];
                } else c[d] = oc[d];
            }
            for (d = 0; d < ndim; d++) li = li * shape[d] + c[d];
            if (dtt_is_float(t)) {
                double v = get(t, x, (size_t)li);
                fs += op == DT__R_SUMSQ ? v * v : v;
                fabs_sum += op == DT__R_SUMSQ ? v * v : fabs(v);
                if (op == DT__R_MAX) fm = (is_nan(v) || is_nan(fm)) ? NAN : (v > fm ? v : fm);
                if (op == DT__R_MIN) fm = (is_nan(v) || is_nan(fm)) ? NAN : (v < fm ? v : fm);
                if (op == DT__R_ARGMAX && !is_nan(argbest) && (first || is_nan(v) || v > argbest)) {
                    argbest = v;
                    arg = r;
                }
            } else {
                int64_t v = geti(t, x, (size_t)li);
                is += op == DT__R_SUMSQ ? (uint64_t)v * (uint64_t)v : (uint64_t)v;
                if (op == DT__R_MAX && v > im) im = v;
                if (op == DT__R_MIN && v < im) im = v;
                if (op == DT__R_ARGMAX && (first || v > argbest_i)) {
                    argbest_i = v;
                    arg = r;
                }
            }
            first = 0;
        }
        if (op == DT__R_ARGMAX) {
            int64_t got = geti(DT_I64, out, (size_t)o);
            CHECK(got == arg, "[%lld] argmax got %lld want %lld", (long long)o, (long long)got, (long long)arg);
        } else if (dtt_is_float(t)) {
            double ref = ref_round(t, (op == DT__R_SUM || op == DT__R_SUMSQ) ? fs * scale : fm);
            /* the reference's own sequential-sum error grows with the count */
            double got = get(t, out, (size_t)o),
                   tol = eps_of(t) * fabs(ref) + (double)(nred + 4) * 2.3e-16 * fabs_sum * fabs(scale);
            tol += sub_floor(t);
            CHECK(near(got, ref, tol), "[%lld] got %.17g want %.17g", (long long)o, got, ref);
        } else {
            int64_t got = geti(t, out, (size_t)o), ref;
            if (op == DT__R_MAX || op == DT__R_MIN) ref = im;
            else if (scale == 1.0) ref = wrap_int(t, is);
            else {
                double v = trunc((double)(int64_t)is * scale);
                ref = v <= (double)lo ? lo : v >= (double)hi ? hi : (int64_t)v;
            }
            CHECK(got == ref, "[%lld] got %lld want %lld", (long long)o, (long long)got, (long long)ref);
        }
    }
    free(x);
    free(out);
}

static void test_reduce(dtt_rng *rng)
{
    int ti, op, c, ncase = dtt_quick ? 10 : 30;
    for (ti = 0; ti < NT; ti++) {
        dt_dtype t = g_all[ti];
        for (op = 0; op < DT__R_NUM; op++) {
            int64_t s1[1], s2[2], s3[3];
            int si;
            for (si = 0; si < 4; si++) { /* 1-D: sizes 0, 1, 7, 300; reduce all and none */
                s1[0] = (int64_t)g_sizes[si];
                test_reduce_case(t, op, 1, s1, 1u, 1.0, rng, 0);
                test_reduce_case(t, op, 1, s1, 0u, 1.0, rng, 0);
            }
            s1[0] = 300;
            test_reduce_case(t, op, 1, s1, 1u, 1.0 / 300.0, rng, 0); /* mean */
            test_reduce_case(t, op, 1, s1, 1u, 1.0, rng, 1);
            s2[0] = 300; s2[1] = 7;
            test_reduce_case(t, op, 2, s2, 1u, 1.0, rng, 1);
            test_reduce_case(t, op, 2, s2, 2u, 0.5, rng, 0);
            s2[0] = 7; s2[1] = 300;
            test_reduce_case(t, op, 2, s2, 2u, 1.0, rng, 1);
            test_reduce_case(t, op, 2, s2, 1u, 1.0, rng, 0);
            s2[0] = 0; s2[1] = 5; /* empty reduced dim: the identity */
            test_reduce_case(t, op, 2, s2, 1u, 1.0, rng, 0);
            test_reduce_case(t, op, 2, s2, 2u, 1.0, rng, 0);
            s3[0] = 3; s3[1] = 300; s3[2] = 5;
            test_reduce_case(t, op, 3, s3, 2u, 1.0, rng, 1);
            test_reduce_case(t, op, 3, s3, 5u, 1.0, rng, 0);
            test_reduce_case(t, op, 0, s3, 0u, 1.0, rng, 0); /* a scalar */
            for (c = 0; c < ncase; c++) {
                int64_t sh[4];
                int nd = 1 + dtt_randint(rng, 4), d;
                for (d = 0; d < nd; d++) sh[d] = dtt_randint(rng, 8) == 0 ? 1 : 1 + dtt_randint(rng, 6);
                if (c % 9 == 0) sh[dtt_randint(rng, nd)] = 0;
                test_reduce_case(t, op, nd, sh, (unsigned)dtt_randint(rng, 1 << nd), c % 4 ? 1.0 : 0.25, rng, c % 3 == 0);
            }
        }
    }
    /* the identities of an empty reduction, spelled out */
    {
        const dt__kernels *k = (&dt__host_kernels);
        int64_t sh[1] = { 0 };
        float f;
        int32_t i32;
        unsigned char u8;
        int64_t a = 5;
        dtt_ctx("reduce empty identities");
        k->reduce(DT__R_MAX, DT_F32, 1, sh, 1u, NULL, &f, 1.0);
        CHECK(f == -HUGE_VAL, "f32 max of nothing %g", f);
        k->reduce(DT__R_MIN, DT_F32, 1, sh, 1u, NULL, &f, 1.0);
        CHECK(f == HUGE_VAL, "f32 min of nothing %g", f);
        k->reduce(DT__R_MAX, DT_I32, 1, sh, 1u, NULL, &i32, 1.0);
        CHECK(i32 == INT32_MIN, "i32 max of nothing %d", i32);
        k->reduce(DT__R_MIN, DT_U8, 1, sh, 1u, NULL, &u8, 1.0);
        CHECK(u8 == 255, "u8 min of nothing %d", u8);
        k->reduce(DT__R_ARGMAX, DT_F64, 1, sh, 1u, NULL, &a, 1.0);
        CHECK(a == 0, "argmax of nothing %lld", (long long)a);
    }
}

/* ------------------------------------------------------------ softmax */

static void test_softmax(dtt_rng *rng)
{
    static const size_t cases[][3] = { { 1, 0, 1 }, { 2, 1, 1 }, { 3, 7, 1 }, { 2, 300, 1 }, { 2, 7, 3 },
                                       { 1, 5, 300 }, { 3, 3, 257 }, { 0, 4, 4 }, { 2, 1, 5 } };
    const dt__kernels *k = (&dt__host_kernels);
    int ti, ci, lg, inplace;
    for (ti = 0; ti < 4; ti++) {
        dt_dtype t = g_floats[ti];
        size_t es = dt_dtype_size(t);
        for (ci = 0; ci < (int)(sizeof cases / sizeof *cases); ci++)
            for (lg = 0; lg < 2; lg++)
                for (inplace = 0; inplace < 2; inplace++) {
                    size_t outer = cases[ci][0], n = cases[ci][1], inner = cases[ci][2], tot = outer * n * inner;
                    size_t o, j, c;
                    unsigned char *x = (unsigned char *)dtt_malloc(tot * es), *y = (unsigned char *)dtt_malloc(tot * es);
                    unsigned char *x0 = (unsigned char *)dtt_malloc(tot * es);
                    dtt_ctx("%s %s [%zu,%zu,%zu]%s", lg ? "log_softmax" : "softmax", dtt_dtname(t), outer, n, inner,
                            inplace ? " in place" : "");
                    fill_random(t, x, tot, rng, -20.0, 20.0);
                    if (tot > 10) put(t, x, 1, 60.0); /* exp would overflow without the max */
                    memcpy(x0, x, tot * es);
                    k->softmax(t, x, inplace ? x : y, outer, n, inner, lg);
                    for (o = 0; o < outer; o++)
                        for (c = 0; c < inner; c++) {
                            double m = -HUGE_VAL, s = 0;
                            for (j = 0; j < n; j++) {
                                double v = get(t, x0, (o * n + j) * inner + c);
                                m = v > m ? v : m;
                            }
                            for (j = 0; j < n; j++) s += exp(get(t, x0, (o * n + j) * inner + c) - m);
                            for (j = 0; j < n; j++) {
                                size_t li = (o * n + j) * inner + c;
                                double v = get(t, x0, li), got = get(t, inplace ? x : y, li);
                                double ref = lg ? v - m - log(s) : exp(v - m) / s;
                                /* x - m is rounded in the working type, exp amplifies it by |x - m|;
                                   the kernel sums the n exponentials in double in another order than
                                   this loop (lanes), which moves s by up to n double epsilons */
                                double ds = (double)n * DBL_EPSILON;
                                double tol = lg ? 4 * eps_of(t) * (fabs(v) + fabs(m) + fabs(log(s)) + 1) + ds
                                                : (2 * eps_of(t) * (fabs(v - m) + 4) + ds) * fabs(ref) + 1e-30;
                                if (t == DT_F16) tol += 6e-8; /* subnormal outputs */
                                CHECK(near(got, ref, tol), "[%zu] x=%.9g: got %.9g want %.9g", li, v, got, ref);
                            }
                        }
                    free(x);
                    free(y);
                    free(x0);
                }
    }
}

/* ------------------------------------------------------------ norm */

static void test_norm(dtt_rng *rng)
{
    static const size_t cases[][2] = { { 1, 1 }, { 3, 7 }, { 2, 300 }, { 0, 5 }, { 4, 0 }, { 5, 2 } };
    const dt__kernels *k = (&dt__host_kernels);
    int ti, ci, rms, wb, inplace;
    for (ti = 0; ti < 4; ti++) {
        dt_dtype t = g_floats[ti];
        size_t es = dt_dtype_size(t);
        for (ci = 0; ci < (int)(sizeof cases / sizeof *cases); ci++)
            for (rms = 0; rms < 2; rms++)
                for (wb = 0; wb < 3; wb++) /* w and b: none, w only, both */
                    for (inplace = 0; inplace < 2; inplace++) {
                        size_t rows = cases[ci][0], n = cases[ci][1], r, j;
                        unsigned char *x = (unsigned char *)dtt_malloc(rows * n * es);
                        unsigned char *x0 = (unsigned char *)dtt_malloc(rows * n * es);
                        unsigned char *y = (unsigned char *)dtt_malloc(rows * n * es);
                        unsigned char *w = (unsigned char *)dtt_malloc(n * es), *b = (unsigned char *)dtt_malloc(n * es);
                        double eps = 1e-5;
                        dtt_ctx("%s %s rows=%zu n=%zu w/b=%d%s", rms ? "rms_norm" : "layer_norm", dtt_dtname(t), rows, n,
                                wb, inplace ? " in place" : "");
                        fill_random(t, x, rows * n, rng, 2.0, 6.0); /* an offset mean: catches a one-pass variance */
                        fill_random(t, w, n, rng, -2.0, 2.0);
                        fill_random(t, b, n, rng, -1.0, 1.0);
                        memcpy(x0, x, rows * n * es);
                        k->norm(t, x, wb ? w : NULL, wb == 2 ? b : NULL, inplace ? x : y, rows, n, eps, rms);
                        for (r = 0; r < rows; r++) {
                            double mean = 0, var = 0, inv;
                            for (j = 0; j < n; j++) mean += get(t, x0, r * n + j);
                            mean /= (double)n;
                            if (rms) {
                                for (j = 0; j < n; j++) var += get(t, x0, r * n + j) * get(t, x0, r * n + j);
                                mean = 0;
                            } else {
                                for (j = 0; j < n; j++)
                                    var += (get(t, x0, r * n + j) - mean) * (get(t, x0, r * n + j) - mean);
                            }
                            inv = 1.0 / sqrt(var / (double)n + eps);
                            for (j = 0; j < n; j++) {
                                double v = get(t, x0, r * n + j), ref = (v - mean) * inv, got;
                                double tol;
                                if (wb) ref *= get(t, w, j);
                                if (wb == 2 && !rms) ref += get(t, b, j);
                                got = get(t, inplace ? x : y, r * n + j);
                                /* x - mean loses the bits of |x| + |mean| in the working type */
                                tol = 4 * eps_of(t == DT_F64 ? DT_F64 : DT_F32) *
                                          (fabs(ref) + 1 + (fabs(v) + fabs(mean)) * inv * (wb ? fabs(get(t, w, j)) : 1)) +
                                      eps_of(t) * fabs(ref);
                                CHECK(near(got, ref, tol), "[%zu,%zu] x=%.9g: got %.9g want %.9g", r, j, v, got, ref);
                            }
                        }
                        free(x);
                        free(x0);
                        free(y);
                        free(w);
                        free(b);
                    }
    }
}

/* ------------------------------------------------------------ gemm */

/* a rows x cols matrix's strides: layout 0 row-major, 1 column-major
   (a transposed view), 2 row-major with gaps, 3 column-major with gaps,
   4 no unit stride (every other element of padded rows: a CBLAS or Fortran
   BLAS cannot take it, dtensor packs it) */
static void mat_layout(int layout, int64_t rows, int64_t cols, int64_t *rs, int64_t *cs, int64_t *nstore)
{
    int64_t gap = layout >= 2 ? 3 : 0;
    if (layout == 4) {
        *cs = 2;
        *rs = 2 * cols + 1;
    } else if (layout % 2 == 0) {
        *cs = 1;
        *rs = cols + gap;
    } else {
        *rs = 1;
        *cs = rows + gap;
    }
    *nstore = rows * *rs + cols * *cs + 1;
}

static void test_gemm_case(dt_dtype t, int64_t m, int64_t n, int64_t kk, int la, int lb, int lc, double alpha,
                           double beta, dtt_rng *rng)
{
    const dt__kernels *k = (&dt__host_kernels);
    size_t es = dt_dtype_size(t);
    int64_t rsa, csa, rsb, csb, rsc, csc, na, nb, nc, i, j, p;
    unsigned char *a, *b, *c, *c0;
    mat_layout(la, m, kk, &rsa, &csa, &na);
    mat_layout(lb, kk, n, &rsb, &csb, &nb);
    mat_layout(lc, m, n, &rsc, &csc, &nc);
    a = (unsigned char *)dtt_malloc((size_t)na * es);
    b = (unsigned char *)dtt_malloc((size_t)nb * es);
    c = (unsigned char *)dtt_malloc((size_t)nc * es);
    c0 = (unsigned char *)dtt_malloc((size_t)nc * es);
    if (dtt_is_float(t)) {
        fill_random(t, a, (size_t)na, rng, -2.0, 2.0);
        fill_random(t, b, (size_t)nb, rng, -2.0, 2.0);
        if (beta == 0.0)
            for (i = 0; i < nc; i++) put(t, c, (size_t)i, NAN); /* must not be read */
        else fill_random(t, c, (size_t)nc, rng, -2.0, 2.0);
    } else {
        for (i = 0; i < na; i++) puti(t, a, (size_t)i, (int64_t)(dtt_next(rng) % 41) - 20);
        for (i = 0; i < nb; i++) puti(t, b, (size_t)i, (int64_t)(dtt_next(rng) % 41) - 20);
        fill_random(t, c, (size_t)nc, rng, 0, 0);
    }
    memcpy(c0, c, (size_t)nc * es);
    dtt_ctx("gemm %s m=%lld n=%lld k=%lld layouts A%d B%d C%d alpha %g beta %g", dtt_dtname(t), (long long)m,
            (long long)n, (long long)kk, la, lb, lc, alpha, beta);
    CHECK_OK(k->gemm(t, m, n, kk, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc));
    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++) {
            size_t ci = (size_t)(i * rsc + j * csc);
            if (dtt_is_float(t)) {
                double s = 0, sa = 0, ref, got = get(t, c, ci), tol;
                for (p = 0; p < kk; p++) {
                    double av = get(t, a, (size_t)(i * rsa + p * csa)), bv = get(t, b, (size_t)(p * rsb + j * csb));
                    s += av * bv;
                    sa += fabs(av * bv);
                }
                ref = ref_round(t, alpha * s + (beta != 0.0 ? beta * get(t, c0, ci) : 0.0));
                tol = sub_floor(t) + eps_of(t) * fabs(ref) + 2 * (double)(kk + 2) * eps_of(t == DT_F64 ? DT_F64 : DT_F32) *
                                                  (fabs(alpha) * sa + fabs(beta * (beta != 0.0 ? get(t, c0, ci) : 0)));
                CHECK(near(got, ref, tol), "C[%lld,%lld]: got %.9g want %.9g", (long long)i, (long long)j, got, ref);
            } else {
                uint64_t s = 0;
                int64_t ref, got = geti(t, c, ci);
                for (p = 0; p < kk; p++)
                    s += (uint64_t)geti(t, a, (size_t)(i * rsa + p * csa)) * (uint64_t)geti(t, b, (size_t)(p * rsb + j * csb));
                s = (uint64_t)(int64_t)alpha * s;
                if (beta != 0.0) s += (uint64_t)(int64_t)beta * (uint64_t)geti(t, c0, ci);
                ref = wrap_int(t, s);
                CHECK(got == ref, "C[%lld,%lld]: got %lld want %lld", (long long)i, (long long)j, (long long)got,
                      (long long)ref);
            }
        }
    /* the gaps of C are untouched */
    {
        unsigned char *touched = (unsigned char *)dtt_malloc((size_t)nc);
        int64_t q;
        memset(touched, 0, (size_t)nc);
        for (i = 0; i < m; i++)
            for (j = 0; j < n; j++) touched[i * rsc + j * csc] = 1;
        for (q = 0; q < nc; q++)
            if (!touched[q])
                CHECK(memcmp(c + q * (int64_t)es, c0 + q * (int64_t)es, es) == 0, "C gap %lld written", (long long)q);
        free(touched);
    }
    free(a);
    free(b);
    free(c);
    free(c0);
}

static void test_gemm(dtt_rng *rng)
{
    static const int64_t dims[5] = { 0, 1, 3, 17, 64 };
    int ti, im, in, ik, bi;
    for (ti = 0; ti < NT; ti++) {
        dt_dtype t = g_all[ti];
        for (im = 0; im < 5; im++)
            for (in = 0; in < 5; in++)
                for (ik = 0; ik < 5; ik++)
                    for (bi = 0; bi < 2; bi++) {
                        int la = dtt_randint(rng, 4), lb = dtt_randint(rng, 4), lc = dtt_randint(rng, 4);
                        double alpha = dtt_is_float(t) ? (bi ? -0.5 : 1.0) : (bi ? -2.0 : 1.0);
                        if (dtt_quick && (im + in + ik) % 3 != 0) continue;
                        test_gemm_case(t, dims[im], dims[in], dims[ik], la, lb, lc, alpha, bi ? 1.0 : 0.0, rng);
                    }
        /* every layout pair once at an odd size; a size past the loop blocks */
        for (bi = 0; bi < 16; bi++) test_gemm_case(t, 5, 7, 3, bi % 4, bi / 4, (bi + 1) % 4, 1.0, 0.5, rng);
        if (!dtt_quick) test_gemm_case(t, 130, 300, 150, 0, 1, 0, 1.0, 1.0, rng);
        /* past the loops' size: A, then B, then C without a unit stride */
        for (bi = 0; bi < 5; bi++) test_gemm_case(t, 40, 33, 70, 4, bi, (bi + 2) % 5, 1.0, bi % 2 ? 0.5 : 0.0, rng);
    }
    /* strides BLIS would reject: zero and equal strides on extent-1 dims,
       a broadcast (stride 0) B, negative strides */
    {
        const dt__kernels *k = (&dt__host_kernels);
        float a[6] = { 1, 2, 3, 4, 5, 6 }, b[3] = { 1, -1, 2 }, cc[2], bb[1] = { 2 }, c6[6];
        double ad[4] = { 1, 2, 3, 4 }, cd[4];
        dtt_ctx("gemm odd strides");
        /* 1x3 A (row stride 0), 3x1 B (col stride 0): dot product */
        CHECK_OK(k->gemm(DT_F32, 1, 1, 3, 1.0, a, 0, 1, b, 1, 0, 0.0, cc, 0, 0));
        CHECK(cc[0] == 1 - 2 + 6, "dot got %g", cc[0]);
        /* 2x1 C = A[2x1] * B[1x1] with rs == cs on extent-1 dims */
        CHECK_OK(k->gemm(DT_F32, 2, 1, 1, 1.0, a, 3, 3, bb, 5, 5, 0.0, cc, 1, 1));
        CHECK(cc[0] == 2 && cc[1] == 8, "2x1 got %g %g", cc[0], cc[1]);
        /* B broadcast along rows (rsb = 0): C[i,j] = (A[i,0] + A[i,1]) * b[j] */
        CHECK_OK(k->gemm(DT_F32, 2, 3, 2, 1.0, a, 2, 1, b, 0, 1, 0.0, c6, 3, 1));
        CHECK(c6[0] == 3 && c6[1] == -3 && c6[2] == 6 && c6[3] == 7 && c6[4] == -7 && c6[5] == 14,
              "broadcast B got %g %g %g %g %g %g", c6[0], c6[1], c6[2], c6[3], c6[4], c6[5]);
        /* negative strides: A read backwards */
        CHECK_OK(k->gemm(DT_F64, 2, 2, 2, 1.0, ad + 3, -2, -1, ad, 2, 1, 0.0, cd, 2, 1));
        /* A = [[4,3],[2,1]], B = [[1,2],[3,4]] */
        CHECK(cd[0] == 13 && cd[1] == 20 && cd[2] == 5 && cd[3] == 8, "negative strides got %g %g %g %g", cd[0], cd[1],
              cd[2], cd[3]);
    }
}

/* ------------------------------------------------------------ permute */

static void test_permute(dtt_rng *rng)
{
    const dt__kernels *k = (&dt__host_kernels);
    static const size_t ess[5] = { 1, 2, 4, 8, 3 };
    int c, ncase = dtt_quick ? 60 : 200;
    for (c = 0; c < ncase; c++) {
        int ndim = c < 4 ? 2 : 1 + dtt_randint(rng, 5), d, perm[DT_MAX_DIMS];
        size_t es = ess[c % 5];
        int64_t xs[DT_MAX_DIMS], ys[DT_MAX_DIMS], xst[DT_MAX_DIMS], n, i, s = 1;
        unsigned char *x, *y;
        char s1[64], s2[64];
        int ip[DT_MAX_DIMS];
        for (d = 0; d < ndim; d++) {
            xs[d] = dtt_randint(rng, 6) == 0 ? 1 : 1 + dtt_randint(rng, 7);
            perm[d] = d;
        }
        if (c < 4) { /* big transposes: the tiled path with partial tiles */
            xs[0] = c < 2 ? 300 : 33;
            xs[1] = c < 2 ? 257 : 1;
            perm[0] = 1;
            perm[1] = 0;
        } else {
            if (c % 11 == 0) xs[dtt_randint(rng, ndim)] = 0;
            for (d = ndim - 1; d > 0; d--) {
                int q = dtt_randint(rng, d + 1), tmp = perm[d];
                perm[d] = perm[q];
                perm[q] = tmp;
            }
        }
        for (d = ndim - 1; d >= 0; d--) {
            xst[d] = s;
            s *= xs[d];
        }
        n = s;
        for (d = 0; d < ndim; d++) {
            ys[d] = xs[perm[d]];
            ip[d] = perm[d];
        }
        x = (unsigned char *)dtt_malloc((size_t)n * es);
        y = (unsigned char *)dtt_malloc((size_t)n * es);
        for (i = 0; i < n * (int64_t)es; i++) x[i] = (unsigned char)(dtt_next(rng) & 0xFF);
        {
            char pb[32];
            size_t o = 0;
            pb[0] = 0;
            for (d = 0; d < ndim && o < sizeof pb; d++) o += (size_t)snprintf(pb + o, sizeof pb - o, "%d", ip[d]);
            dtt_ctx("permute es=%zu x %s -> y %s perm %s", es, dtt_shape_str(ndim, xs, s1, sizeof s1),
                    dtt_shape_str(ndim, ys, s2, sizeof s2), pb);
        }
        k->permute(es, ndim, xs, perm, x, y);
        for (i = 0; i < n; i++) { /* y element i (row-major in ys) is x at the permuted coordinate */
            int64_t rem = i, xo = 0;
            for (d = ndim - 1; d >= 0; d--) {
                xo += (rem % ys[d]) * xst[perm[d]];
                rem /= ys[d];
            }
            if (memcmp(y + i * (int64_t)es, x + xo * (int64_t)es, es) != 0) {
                CHECK(0, "y[%lld] != x[%lld]", (long long)i, (long long)xo);
                break;
            }
        }
        free(x);
        free(y);
    }
}

/* ------------------------------------------------------------ embedding */

static void test_embedding(dtt_rng *rng)
{
    const dt__kernels *k = (&dt__host_kernels);
    static const int64_t dimsz[4] = { 0, 1, 7, 300 };
    int ti, di, it;
    for (ti = 0; ti < NT; ti++)
        for (di = 0; di < 4; di++)
            for (it = 0; it < 2; it++) {
                dt_dtype t = g_all[ti], idx_t = it ? DT_I64 : DT_I32;
                size_t es = dt_dtype_size(t), nidx = 9, i;
                int64_t dim = dimsz[di], nrows = 5, row0 = 10, b;
                int64_t idx[9] = { 10, 14, 9, 15, 12, -1, 0, 10, 13 };
                int32_t idx32[9];
                unsigned char *table = (unsigned char *)dtt_malloc((size_t)(nrows * dim) * es);
                unsigned char *out = (unsigned char *)dtt_malloc(nidx * (size_t)dim * es);
                if (it) idx[6] = INT64_MIN;
                for (i = 0; i < nidx; i++) idx32[i] = (int32_t)idx[i];
                for (b = 0; b < nrows * dim * (int64_t)es; b++) table[b] = (unsigned char)(dtt_next(rng) | 1u);
                memset(out, 0xAB, nidx * (size_t)dim * es);
                dtt_ctx("embedding %s dim %lld idx %s", dtt_dtname(t), (long long)dim, dtt_dtname(idx_t));
                k->embedding(t, table, row0, nrows, dim, idx_t, it ? (const void *)idx : (const void *)idx32, nidx, out);
                for (i = 0; i < nidx; i++) {
                    size_t row = (size_t)dim * es;
                    int in = idx[i] >= row0 && idx[i] < row0 + nrows;
                    for (b = 0; b < (int64_t)row; b++) {
                        unsigned char want = in ? table[(size_t)(idx[i] - row0) * row + (size_t)b] : 0;
                        if (out[i * row + (size_t)b] != want) {
                            CHECK(0, "out[%zu] byte %lld: got %d want %d (idx %lld)", i, (long long)b,
                                  out[i * row + (size_t)b], want, (long long)idx[i]);
                            break;
                        }
                    }
                }
                /* nidx 0 writes nothing */
                k->embedding(t, table, row0, nrows, dim, idx_t, idx, 0, NULL);
                free(table);
                free(out);
            }
}

/* ------------------------------------------------------------ xent */

static void test_xent(dtt_rng *rng)
{
    const dt__kernels *k = (&dt__host_kernels);
    static const size_t ncs[4] = { 0, 1, 7, 300 };
    int ti, ni, it;
    for (ti = 0; ti < 4; ti++)
        for (ni = 0; ni < 4; ni++)
            for (it = 0; it < 2; it++) {
                dt_dtype t = g_floats[ti], tt = it ? DT_I64 : DT_I32;
                size_t es = dt_dtype_size(t), rows = 6, ncls = ncs[ni], r, c;
                int64_t cls0 = 100, tg[6];
                int32_t tg32[6];
                double M[6], rowmax[6], sumexp[6], tlogit[6], sent = -12345.0;
                unsigned char *x = (unsigned char *)dtt_malloc(rows * ncls * es);
                fill_random(t, x, rows * ncls, rng, -10.0, 10.0);
                if (ncls > 2) put(t, x, 5 * ncls + 1, NAN); /* row 5's max is NaN */
                for (r = 0; r < rows; r++) {
                    /* in range, below, above, the ignore index */
                    tg[r] = r == 1 ? 99 : r == 2 ? cls0 + (int64_t)ncls : r == 3 ? -100
                          : cls0 + (ncls ? (int64_t)(dtt_next(rng) % ncls) : 0);
                    tg32[r] = (int32_t)tg[r];
                    rowmax[r] = sumexp[r] = tlogit[r] = sent;
                }
                dtt_ctx("xent %s ncls %zu target %s", dtt_dtname(t), ncls, dtt_dtname(tt));
                k->xent(t, x, rows, ncls, cls0, tt, it ? (const void *)tg : (const void *)tg32, NULL, rowmax, sumexp,
                        tlogit);
                for (r = 0; r < rows; r++) {
                    double m = -HUGE_VAL;
                    for (c = 0; c < ncls; c++) {
                        double v = get(t, x, r * ncls + c);
                        m = (is_nan(v) || is_nan(m)) ? NAN : v > m ? v : m;
                    }
                    CHECK(near(rowmax[r], m, 0.0), "rowmax[%zu] got %g want %g", r, rowmax[r], m);
                    CHECK(sumexp[r] == sent && tlogit[r] == sent, "pass 1 wrote sumexp/tlogit[%zu]", r);
                    M[r] = is_nan(m) ? 0.0 : m + 0.5; /* another rank's larger max */
                    if (ncls == 0) M[r] = 1.0;
                }
                for (r = 0; r < rows; r++) rowmax[r] = sent;
                k->xent(t, x, rows, ncls, cls0, tt, it ? (const void *)tg : (const void *)tg32, M, rowmax, sumexp,
                        tlogit);
                for (r = 0; r < rows; r++) {
                    double s = 0, tl = 0;
                    int64_t lc = tg[r] - cls0;
                    for (c = 0; c < ncls; c++) s += exp(get(t, x, r * ncls + c) - M[r]);
                    if (lc >= 0 && lc < (int64_t)ncls) tl = get(t, x, r * ncls + (size_t)lc);
                    CHECK(rowmax[r] == sent, "pass 2 wrote rowmax[%zu]", r);
                    CHECK(near(sumexp[r], s, (double)(ncls + 8) * eps_of(t == DT_F64 ? DT_F64 : DT_F32) * (fabs(s) + 1e-30)),
                          "sumexp[%zu] got %.17g want %.17g", r, sumexp[r], s);
                    CHECK(near(tlogit[r], tl, 0.0) || (is_nan(tl) && is_nan(tlogit[r])), "tlogit[%zu] got %g want %g", r,
                          tlogit[r], tl);
                }
                free(x);
            }
}

/* make test-blas: DT_TEST_GEMM names the local GEMM this build must run
   (dt__gemm_backend()); unless it is a "none", GEMMs went through the BLAS,
   and through packing for a CBLAS or Fortran BLAS (layout 4) */
static void check_gemm_backend(void)
{
    const char *want = getenv("DT_TEST_GEMM");
    if (!want) return;
    dtt_ctx("local GEMM backend");
    CHECK(strcmp(dt__gemm_backend(), want) == 0, "local GEMM is '%s', DT_TEST_GEMM wants '%s'", dt__gemm_backend(),
          want);
#if DT__BLAS != 0
    if (dtt_rank == 0 && getenv("DT_TEST_VERBOSE"))
        fprintf(stderr, "gemm %s: %ld direct, %ld packed, %ld loops\n", want, dt__gemm_count[0], dt__gemm_count[1],
                dt__gemm_count[2]);
    if (strncmp(want, "none", 4) != 0) CHECK(dt__gemm_count[0] > 0, "no GEMM called the BLAS directly");
    if (DT__BLAS != 1 && strncmp(want, "none", 4) != 0) CHECK(dt__gemm_count[1] > 0, "no GEMM was packed");
#endif
}

int main(int argc, char **argv)
{
    dtt_rng rng;
    dtt_init(&argc, &argv, "ops_kernels");
    rng.s = 0x5EEDull + (uint64_t)dtt_rank; /* each rank its own cases */
    CHECK((&dt__host_kernels) != NULL, "no host kernels");
    test_unary(&rng);
    test_unary_accuracy();
    test_cast(&rng);
    test_half_conversions(&rng);
    test_exp_range();
    test_binary(&rng);
    test_reduce(&rng);
    test_softmax(&rng);
    test_norm(&rng);
    test_gemm(&rng);
    test_permute(&rng);
    test_embedding(&rng);
    test_xent(&rng);
    check_gemm_backend();
    dtt_ctx("%s", "");
    return dtt_finish();
}
