/* test_cuda_host.cu -- dtensor_cuda.h's kernel math, checked on the CPU.

   Needs no GPU and calls no CUDA runtime function: the device kernels of
   dtensor_cuda.h are thin grid-stride loops over __host__ __device__
   functions (element conversions and ops, the box-copy plan, the Philox
   work items, the reduction merge, the gemm layout plan), and this file
   runs those functions on the host and compares them with dtensor.h's
   host kernels (dt__k_*), which define the semantics:

   1. F16/BF16 conversions (dtensor.h's >>math, the one copy both sides
      run): every half, and floats across the whole range, against the
      straightforward branchy reference below.
   2. Unary, binary and cast element functions over special values (NaN,
      +-inf, -0, subnormals, integer extremes) for every dtype, bit for bit;
      binary also through random broadcast/transposed geometries.
   3. The random fill: every work item of the device kernel, run here in
      order, gives the host kernel's bytes for many boxes, every kind and
      dtype, offsets not multiple of 4. Plus Box-Muller's logf/sinf/cosf
      replacements against glibc on all 2^24 arguments each.
   4. copy_box: the device plan's units against dt__copy_box on random boxes.
   5. reduce: the block kernel's strided accumulation and tree merge
      against dt__k_reduce; gemm: the cuBLAS layout plan, executed by a
      column-major reference, and the plain kernel's elements (every
      dtype) against dt__k_gemm; permute: the tiled transpose's element
      mapping, tile by tile, against dt__k_permute.
   Each section prints "name: N checked, M failed"; the last line is
   dt_test.h's "PASS cuda_host np=1" (exit 0) or "FAIL ..." (exit 1).
   tests/test_cuda.cu runs the kernels themselves on a GPU.

   Build (no GPU needed to build or run):
     nvcc -std=c++17 -arch=sm_90 -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror \
          -DDTENSOR_NO_MPI -I. -o build/cuda/test_cuda_host tests/test_cuda_host.cu \
          -lblis -lcublas -lcudart -lm
   What it cannot check: that nvcc's device code computes what the same
   source computes here (the arithmetic that must not be contracted into
   fma is written with __fmul_rn & co. for that reason), CUDA's own libm
   (log, sin, erf, ... of the unary ops and F64 normal), and anything that
   needs a GPU (launches, streams, cuBLAS). */
#define DTENSOR_IMPLEMENTATION
#include "dtensor_cuda.h"
#include "dt_test.h"

static long checked = 0;

/* a section's tally: "name: N checked, M failed" */
static int section_fail0 = 0;
static void section_begin(void) { section_fail0 = dtt_failures; checked = 0; }
static void section_end(const char *name) {
    printf("%-10s %ld checked, %d failed\n", name, checked, dtt_failures - section_fail0);
    fflush(stdout);
}

static const dt_dtype all_types[] = {DT_F32, DT_F64, DT_F16, DT_BF16, DT_I32, DT_I64, DT_U8};
#define NTYPES 7

static uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* ------------------------------------------------------------ 1. halves */

/* The reference: IEEE half <-> float, round to nearest even, written the
   obvious way (branches, a loop for subnormals), independent of the
   branchless dt__f2h & co. that host and device share. */
static uint16_t ref_f2h(float f) {
    uint32_t x, sign, absx, h, rem;
    memcpy(&x, &f, 4);
    sign = (x >> 16) & 0x8000u;
    absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf, nan (keep it a quiet nan) */
        return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0u));
    if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds past 65504 */
    if (absx < 0x38800000u) {                                     /* half subnormal */
        uint32_t e = absx >> 23, m = (absx & 0x7fffffu) | 0x800000u, shift, half;
        if (absx < 0x33000000u) return (uint16_t)sign;
        shift = 126u - e;
        h = m >> shift;
        rem = m & ((1u << shift) - 1u);
        half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (h & 1u))) h++;
        return (uint16_t)(sign | h);
    }
    h = (absx >> 13) - ((127u - 15u) << 10);
    rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

static float ref_h2f(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
    float f;
    if (e == 0) {
        if (m == 0) x = sign;
        else {
            e = 113;
            while (!(m & 0x400u)) { m <<= 1; e--; }
            x = sign | (e << 23) | ((m & 0x3ffu) << 13);
        }
    } else if (e == 31) x = sign | 0x7f800000u | (m << 13);
    else x = sign | ((e + 112u) << 23) | (m << 13);
    memcpy(&f, &x, 4);
    return f;
}

static uint16_t ref_f2b(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

static float ref_b2f(uint16_t h) { return u2f((uint32_t)h << 16); }

static void test_halves(void) {
    uint64_t x;
    section_begin();
    for (x = 0; x < 65536; x++) {
        uint16_t h = (uint16_t)x;
        checked += 2;
        CHECK(f2u(dt__h2f(h)) == f2u(ref_h2f(h)), "h2f(%04x)", (unsigned)h);
        CHECK(f2u(dt__b2f(h)) == f2u(ref_b2f(h)), "b2f(%04x)", (unsigned)h);
    }
    /* every float whose low bits are a fixed odd stride apart, plus the
       neighbourhood of every half boundary (where rounding is decided) */
    for (x = 0; x < ((uint64_t)1 << 32); x += 251) {
        float f = u2f((uint32_t)x);
        checked += 2;
        CHECK(dt__f2h(f) == ref_f2h(f), "f2h(%08x)", (unsigned)x);
        CHECK(dt__f2b(f) == ref_f2b(f), "f2b(%08x)", (unsigned)x);
    }
    for (x = 0; x < 65536; x++) {
        uint32_t mid = f2u(ref_h2f((uint16_t)x)) + 0x1000u, d; /* halfway to the next half (normals) */
        for (d = 0; d < 5; d++) {
            uint32_t v = mid - 2 + d;
            checked++;
            CHECK(dt__f2h(u2f(v)) == ref_f2h(u2f(v)), "f2h(%08x)", (unsigned)v);
            v = ((uint32_t)x << 16) + 0x8000u - 2 + d; /* bf16 halfway points */
            checked++;
            CHECK(dt__f2b(u2f(v)) == ref_f2b(u2f(v)), "f2b(%08x)", (unsigned)v);
        }
    }
    section_end("halves");
}

/* ------------------------------------------------------ special values */

#define NSPEC 44
/* special values as doubles; stored per dtype (ints saturate, halves round) */
static int specials(dt_dtype t, void *buf) {
    static const double fv[] = {0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-40, -1e-45, 1.17549435e-38, 6e-8, 65504.0,
                                65520.0, 1e30, -1e30, 3.4028234663852886e38, 1e300, -1e-310, 1e-320, 0.1, 0.7,
                                -0.7, 88.7, -104.5, 9223372036854775808.0, -9223372036854775808.0, 2147483648.0,
                                4294967296.0, 255.5, 256.0, -0.5, 1.5, 2.5, -3.5};
    static const int64_t iv[] = {0, 1, -1, 2, -2, 7, 127, 128, 255, 256, -128, 32767, 65535, INT32_MAX, INT32_MIN,
                                 (int64_t)INT32_MAX + 1, (int64_t)INT32_MIN - 1, INT64_MAX, INT64_MIN, INT64_MIN + 1,
                                 INT64_MAX - 1, 1000000007, -99, 3, 12345678901234ll, -4096, 5, 6, 9, 10};
    int n = 0, i;
    if (dt__is_int(t)) {
        for (i = 0; i < 30; i++) dt__cu_st_i64(t, buf, n++, iv[i]);
    } else {
        for (i = 0; i < (int)(sizeof fv / sizeof fv[0]); i++) dt__cu_st_f64(t, buf, n++, fv[i]);
        dt__cu_st_f64(t, buf, n++, HUGE_VAL);
        dt__cu_st_f64(t, buf, n++, -HUGE_VAL);
        dt__cu_st_f64(t, buf, n++, NAN);
        dt__cu_st_f64(t, buf, n++, -NAN);
    }
    return n;
}

static int same_bytes(const void *a, const void *b, size_t n) { return memcmp(a, b, n) == 0; }

/* element i equal bit for bit, or both NaN: which NaN an arithmetic op
   returns is left open by IEEE 754 (x86 returns the first operand's, and
   the compiler may swap the operands of a + b; a GPU returns its canonical
   NaN), so NaN results are compared as NaN */
static int same_elem(dt_dtype t, const void *a, const void *b, int64_t i) {
    size_t es = dt_dtype_size(t);
    if (same_bytes((const char *)a + i * (int64_t)es, (const char *)b + i * (int64_t)es, es)) return 1;
    if (dt__is_int(t)) return 0;
    return dt__cu_ld_f64(t, a, i) != dt__cu_ld_f64(t, a, i) && dt__cu_ld_f64(t, b, i) != dt__cu_ld_f64(t, b, i);
}

static void hexs(const void *p, size_t es, char *out) {
    size_t i;
    for (i = 0; i < es; i++) sprintf(out + 2 * i, "%02x", ((const unsigned char *)p)[es - 1 - i]);
}

/* ------------------------------------------------------------ 2. unary */

static void test_unary(void) {
    int ti, op;
    section_begin();
    for (ti = 0; ti < NTYPES; ti++) {
        dt_dtype t = all_types[ti];
        size_t es = dt_dtype_size(t);
        char x[NSPEC * 8], yh[NSPEC * 8], yd[NSPEC * 8];
        int n = specials(t, x), i, ai;
        static const double as[] = {2.0, -0.5, 3.0, 0.0};
        for (op = 0; op < DT__U_NUM; op++) {
            /* the op registry's DT__FLOAT_ONLY lines (dtensor.h's DT__UNARY_OPS) */
#define UOP_FLOAT_ONLY(NAME, name, wrap, fl, pm, fmath, imath) ((fl) & DT__FLOAT_ONLY) != 0,
            static const int float_only_of[DT__U_NUM] = { DT__UNARY_OPS(UOP_FLOAT_ONLY) };
#undef UOP_FLOAT_ONLY
            int float_only = float_only_of[op];
            if (float_only && dt__is_int(t)) continue;
            for (ai = 0; ai < 4; ai++) {
                double a = as[ai];
                dt__k_unary((dt__uop)op, t, x, yh, (size_t)n, a);
                for (i = 0; i < n; i++) dt__cu_unary_elem((dt__uop)op, t, x, yd, i, a, dt__i64_of(a));
                for (i = 0; i < n; i++) {
                    char hx[20], hh[20], hd[20];
                    checked++;
                    if (same_elem(t, yh, yd, i)) continue;
                    hexs(x + i * es, es, hx); hexs(yh + i * es, es, hh); hexs(yd + i * es, es, hd);
                    CHECK(0, "unary op %d %s a=%g x=%s: host %s device %s", op, dt_dtype_name(t), a, hx, hh, hd);
                }
            }
        }
    }
    /* and random values of every magnitude, where the polynomials' last bits show */
    {
        dtt_rng r = {99};
        static float x[4096], yh[4096], yd[4096];
        int i;
        for (i = 0; i < 4096; i++) x[i] = (float)((double)(int64_t)dtt_next(&r) * 0x1p-63 * ldexp(1.0, dtt_randint(&r, 14) - 6));
        for (op = 0; op < DT__U_NUM; op++) {
            dt__k_unary((dt__uop)op, DT_F32, x, yh, 4096, 1.75);
            for (i = 0; i < 4096; i++) dt__cu_unary_elem((dt__uop)op, DT_F32, x, yd, i, 1.75, 1);
            for (i = 0; i < 4096; i++) {
                checked++;
                CHECK(same_elem(DT_F32, yh, yd, i), "unary op %d f32 x=%a: host %a device %a", op, x[i], yh[i], yd[i]);
            }
        }
    }
    section_end("unary");
}

/* ------------------------------------------------------------ 2. binary */

static void test_binary_specials(void) {
    int ti, op;
    for (ti = 0; ti < NTYPES; ti++) {
        dt_dtype t = all_types[ti];
        size_t es = dt_dtype_size(t);
        char x[NSPEC * 8], a[NSPEC * NSPEC * 8], b[NSPEC * NSPEC * 8], oh[NSPEC * NSPEC * 8], od[NSPEC * NSPEC * 8];
        int n = specials(t, x), i, j;
        int64_t shape[1], s1[1] = {1};
        for (i = 0; i < n; i++)
            for (j = 0; j < n; j++) {
                memcpy(a + (i * n + j) * es, x + i * es, es);
                memcpy(b + (i * n + j) * es, x + j * es, es);
            }
        shape[0] = n * n;
        for (op = 0; op < DT__B_NUM; op++) {
            double alpha = op == DT__B_AXPY ? 0.3 : 1.0;
            if (op == DT__B_AXPY && dt__is_int(t)) alpha = -3.0;
            dt__k_binary((dt__bop)op, t, 1, shape, a, s1, b, s1, oh, alpha);
            for (i = 0; i < n * n; i++)
                dt__cu_binary_at((dt__bop)op, t, a, i, b, i, od, i, alpha, dt__i64_of(alpha));
            for (i = 0; i < n * n; i++) {
                char ha[20], hb[20], hh[20], hd[20];
                checked++;
                if (same_elem(t, oh, od, i)) continue;
                hexs(a + i * es, es, ha); hexs(b + i * es, es, hb); hexs(oh + i * es, es, hh); hexs(od + i * es, es, hd);
                CHECK(0, "binary op %d %s %s, %s: host %s device %s", op, dt_dtype_name(t), ha, hb, hh, hd);
            }
        }
    }
}

/* random shapes; a and b broadcast (stride 0) or read transposed */
static void test_binary_geometry(dtt_rng *rng) {
    int iter;
    for (iter = 0; iter < 400; iter++) {
        dt_dtype t = all_types[dtt_randint(rng, NTYPES)];
        dt__bop op = (dt__bop)dtt_randint(rng, DT__B_NUM);
        int nd = 1 + dtt_randint(rng, 4), d;
        int64_t shape[DT_MAX_DIMS], sa[DT_MAX_DIMS], sb[DT_MAX_DIMS], n = 1, na = 1, nb = 1, i;
        size_t es = dt_dtype_size(t);
        char *a, *b, *oh, *od;
        dt__bgeom g;
        for (d = 0; d < nd; d++) shape[d] = 1 + dtt_randint(rng, 6);
        /* a: row-major over its non-broadcast dims in reversed order (a transposed view); b: plain row-major */
        for (d = 0; d < nd; d++) {
            sa[d] = dtt_randint(rng, 4) == 0 ? 0 : na;
            if (sa[d]) na *= shape[d];
        }
        for (d = nd - 1; d >= 0; d--) {
            sb[d] = dtt_randint(rng, 4) == 0 ? 0 : nb;
            if (sb[d]) nb *= shape[d];
        }
        for (d = 0; d < nd; d++) n *= shape[d];
        a = (char *)malloc((size_t)na * es); b = (char *)malloc((size_t)nb * es);
        oh = (char *)malloc((size_t)n * es); od = (char *)malloc((size_t)n * es);
        for (i = 0; i < na; i++) dt__cu_st_f64(t, a, i, (double)(dtt_randint(rng, 200) - 100) / 8);
        for (i = 0; i < nb; i++) dt__cu_st_f64(t, b, i, (double)(dtt_randint(rng, 200) - 100) / 8 + (op == DT__B_DIV ? 0.25 : 0));
        dt__k_binary(op, t, nd, shape, a, sa, b, sb, oh, 1.5);
        if (dt__bgeom_make(nd, shape, sa, sb, &g))
            for (i = 0; i < n; i++) {
                int64_t ia, ib;
                dt__cu_bgeom_offsets(&g, i, &ia, &ib);
                dt__cu_binary_at(op, t, a, ia, b, ib, od, i, 1.5, 1);
            }
        checked += n;
        for (i = 0; i < n && same_elem(t, oh, od, i); i++) {}
        CHECK(i == n, "binary geometry iter %d op %d %s nd %d", iter, (int)op,
              dt_dtype_name(t), nd);
        free(a); free(b); free(oh); free(od);
    }
}

/* ------------------------------------------------------------ 2. cast */

static void test_cast(void) {
    int fi, ti;
    section_begin();
    for (fi = 0; fi < NTYPES; fi++)
        for (ti = 0; ti < NTYPES; ti++) {
            dt_dtype from = all_types[fi], to = all_types[ti];
            char x[NSPEC * 8], yh[NSPEC * 8], yd[NSPEC * 8];
            int n = specials(from, x), i;
            size_t es = dt_dtype_size(to);
            dt__k_cast(from, x, to, yh, (size_t)n);
            for (i = 0; i < n; i++) dt__cu_cast_elem(from, x, to, yd, i);
            for (i = 0; i < n; i++) {
                char hx[20], hh[20], hd[20];
                checked++;
                if (same_bytes(yh + i * es, yd + i * es, es)) continue;
                hexs(x + i * dt_dtype_size(from), dt_dtype_size(from), hx);
                hexs(yh + i * es, es, hh); hexs(yd + i * es, es, hd);
                CHECK(0, "cast %s -> %s of %s: host %s device %s", dt_dtype_name(from), dt_dtype_name(to), hx, hh, hd);
            }
        }
    /* int64 -> float rounding near 2^53.. 2^63 and halves' boundaries */
    {
        dtt_rng r = {77};
        int i;
        for (i = 0; i < 200000; i++) {
            int64_t v = (int64_t)(dtt_next(&r) >> dtt_randint(&r, 64));
            if (i & 1) v = -v;
            for (ti = 0; ti < 4; ti++) {
                char yh[8], yd[8];
                dt__k_cast(DT_I64, &v, all_types[ti], yh, 1);
                dt__cu_cast_elem(DT_I64, &v, all_types[ti], yd, 0);
                checked++;
                CHECK(same_bytes(yh, yd, dt_dtype_size(all_types[ti])), "cast i64 %lld -> %s", (long long)v,
                      dt_dtype_name(all_types[ti]));
            }
            {
                double dv = u2f((uint32_t)dtt_next(&r)) * 1.0 + (double)(int64_t)dtt_next(&r) * 1e-300;
                char yh[8], yd[8];
                for (ti = 0; ti < NTYPES; ti++) {
                    dt__k_cast(DT_F64, &dv, all_types[ti], yh, 1);
                    dt__cu_cast_elem(DT_F64, &dv, all_types[ti], yd, 0);
                    checked++;
                    CHECK(same_bytes(yh, yd, dt_dtype_size(all_types[ti])), "cast f64 %a -> %s", dv,
                          dt_dtype_name(all_types[ti]));
                }
            }
        }
    }
    section_end("cast");
}

/* ------------------------------------------------------------ 3. rng */

/* Box-Muller's log and sin/cos (dtensor.h's >>math, the one copy host and
   device run): within one ulp of the correctly rounded value on every F32
   argument the generator produces, and within a few ulp of libm's double
   functions on random F64 ones; and, for the record, how often the float
   ones and glibc's logf/sinf/cosf are not the correctly rounded value */
static void test_boxmuller_math(dtt_rng *rng) {
    uint32_t k;
    long glibc_log = 0, glibc_trig = 0, ours_log = 0, ours_trig = 0;
    int i;
    section_begin();
    for (k = 0; k < (1u << 24); k++) {
        float u = (float)(int32_t)k * 5.9604644775390625e-08f; /* u24 of word k << 8 */
        float x = 1.0f - u, th = 6.28318530717958647692f * u, s, c, l = dt__bm_logf(x);
        float crl = (float)log((double)x), crs = (float)sin((double)th), crc = (float)cos((double)th);
        dt__bm_sincosf(th, &s, &c);
        /* to float, glibc's double functions are correctly rounded: the yardstick */
        ours_log += f2u(l) != f2u(crl);
        ours_trig += f2u(s) != f2u(crs) || f2u(c) != f2u(crc);
        glibc_log += f2u(logf(x)) != f2u(crl);
        glibc_trig += f2u(sinf(th)) != f2u(crs) || f2u(cosf(th)) != f2u(crc);
        /* and never more than one ulp off */
        if ((f2u(l) > f2u(crl) ? f2u(l) - f2u(crl) : f2u(crl) - f2u(l)) > 1) CHECK(0, "logf(%a) %a vs %a", x, l, crl);
    }
    for (i = 0; i < 4000000; i++) {
        double u1 = dt__u53(dtt_next(rng)), th = 6.28318530717958647692 * dt__u53(dtt_next(rng)), s, c;
        if (i < 64) u1 = ldexp(1.0, -i) * (1.0 - ldexp(1.0, -53)); /* near 0, exponent by exponent */
        dt__bm_sincos(th, &s, &c);
        /* and accurate: within a few ulp of libm's double functions */
        CHECK(fabs(dt__bm_log(1.0 - u1) - log(1.0 - u1)) <= 1e-15 * fabs(log(1.0 - u1)) + 1e-300 &&
              fabs(s - sin(th)) <= 1e-15 * fabs(sin(th)) + 1e-30 && fabs(c - cos(th)) <= 1e-15 * fabs(cos(th)) + 1e-30,
              "log/sincos accuracy at u1 %a th %a", u1, th);
    }
    checked = (2l << 24) + 8000000;
    printf("(boxmuller, of the 2^24 F32 arguments, not correctly rounded: ours log %ld, sin/cos %ld; glibc logf %ld, "
           "sinf/cosf %ld)\n", ours_log, ours_trig, glibc_log, glibc_trig);
    section_end("boxmuller");
}

/* one box: the host kernel vs every work item of the device kernel */
static void rng_case(const dt__rng_op *op0, int nd, const int64_t *gs, const int64_t *lo, const int64_t *ext) {
    dt__rng_op op = *op0;
    size_t n = 1, es = dt_dtype_size(op.t), i;
    char *yh, *yd, *x = NULL;
    uint8_t *mh = NULL, *md = NULL;
    dt__cu_rngplan pl;
    uint64_t t;
    int d;
    for (d = 0; d < nd; d++) n *= (size_t)ext[d];
    yh = (char *)malloc(n * es + 1); yd = (char *)malloc(n * es + 1);
    memset(yh, 0xa5, n * es + 1); memset(yd, 0xa5, n * es + 1);
    if (op.kind == DT__RK_DROPOUT) {
        x = (char *)malloc(n * es + 1);
        mh = (uint8_t *)malloc(n + 1); md = (uint8_t *)malloc(n + 1);
        memset(mh, 0x77, n + 1); memset(md, 0x77, n + 1);
        for (i = 0; i < n; i++) dt__cu_st_f64(op.t, x, (int64_t)i, (double)((int)(i % 17) - 8) * 0.37);
        op.x = x;
        op.mask = mh;
    }
    dt__k_rng(&op, nd, gs, lo, ext, yh);
    if (op.kind == DT__RK_DROPOUT) op.mask = md;
    if (dt__cu_rngplan_make(&op, nd, gs, lo, ext, &pl))
        for (t = 0; t < pl.nspans * pl.bpr; t++) dt__cu_rng_item(&op, &pl, t, yd);
    checked += (long)n;
    if (!same_bytes(yh, yd, n * es + 1)) {
        size_t first = 0;
        while (first < n * es && yh[first] == yd[first]) first++;
        CHECK(0, "rng kind %d %s w %d offset %llu nd %d ext0 %lld lo0 %lld: element %zu differs", (int)op.kind,
              dt_dtype_name(op.t), op.w, (unsigned long long)op.offset, nd, nd ? (long long)ext[0] : 0,
              nd ? (long long)lo[0] : 0, first / es);
    }
    if (mh) CHECK(same_bytes(mh, md, n + 1), "dropout mask, %s offset %llu", dt_dtype_name(op.t), (unsigned long long)op.offset);
    free(yh); free(yd); free(x); free(mh); free(md);
}

static void test_rng(dtt_rng *rng) {
    static const dt__rkind kinds[] = {DT__RK_UNIFORM, DT__RK_NORMAL, DT__RK_BERNOULLI, DT__RK_RANDINT, DT__RK_DROPOUT};
    static const dt_dtype float_types[] = {DT_F32, DT_F64, DT_F16, DT_BF16};
    int iter, iters = dtt_quick ? 300 : 1500;
    section_begin();
    for (iter = 0; iter < iters; iter++) {
        dt__rng_op op;
        int nd = dtt_randint(rng, 5), d, pick = dtt_randint(rng, 4);
        int64_t gs[DT_MAX_DIMS], lo[DT_MAX_DIMS], ext[DT_MAX_DIMS];
        memset(&op, 0, sizeof op);
        op.kind = kinds[iter % 5];
        op.seed = pick == 0 ? 1234u : dtt_next(rng);
        op.offset = pick == 1 ? (uint64_t)dtt_randint(rng, 9) : pick == 2 ? dtt_next(rng) >> 8 : (uint64_t)dtt_randint(rng, 1 << 20);
        if (op.kind == DT__RK_RANDINT || op.kind == DT__RK_BERNOULLI) op.t = all_types[dtt_randint(rng, 6)];
        else op.t = float_types[dtt_randint(rng, 4)];
        op.w = op.t == DT_F64 || op.t == DT_I64 ? 2 : 1;
        switch (op.kind) {
        case DT__RK_UNIFORM:
            if (dtt_randint(rng, 2)) { op.a = 0; op.b = 1; }
            else { op.a = -3.0 + dtt_randint(rng, 5) * 0.7; op.b = op.a + 0.001 + dtt_randint(rng, 100) * 0.37; }
            if (dtt_randint(rng, 3) == 0) { /* two ulps of the dtype above 1: rounding often reaches hi */
                op.a = 1.0;
                op.b = 1.0 + ldexp(1.0, op.t == DT_F64 ? -51 : op.t == DT_F32 ? -22 : op.t == DT_F16 ? -9 : -6);
            }
            break;
        case DT__RK_NORMAL: op.a = dtt_randint(rng, 3) - 1.0; op.b = 0.5 + dtt_randint(rng, 3); break;
        case DT__RK_BERNOULLI: op.thr = (uint64_t)ceil((dtt_randint(rng, 101) / 100.0) * (op.w == 1 ? 16777216.0 : 9007199254740992.0)); break;
        case DT__RK_RANDINT: {
            /* ranges that need rejection often (R just above a power of two), small, huge */
            static const uint64_t ranges[] = {1, 2, 3, 5, 100, 257, 65537, 2147483649ull, 3000000000ull, ((uint64_t)1 << 32)};
            int ri = dtt_randint(rng, 10);
            op.range = ranges[ri];
            if (op.w == 2 && dtt_randint(rng, 2)) op.range = (dtt_next(rng) >> 1) | ((uint64_t)1 << 62);
            if (op.t == DT_U8) op.range = 1 + (uint64_t)dtt_randint(rng, 255);
            if (op.t == DT_F16 || op.t == DT_BF16) op.range = 1 + (uint64_t)dtt_randint(rng, 300);
            if (op.t == DT_I32 && op.range > ((uint64_t)1 << 32)) op.range = (uint64_t)1 << 31;
            op.lo = op.t == DT_U8 ? 0 : op.t == DT_I32 ? -(int64_t)(op.range / 2) : (int64_t)dtt_randint(rng, 50) - 25;
            break;
        }
        default: {
            double keep = dtt_randint(rng, 11) / 10.0;
            op.b = keep;
            op.thr = (uint64_t)ceil(keep * (op.w == 1 ? 16777216.0 : 9007199254740992.0));
            break;
        }
        }
        for (d = 0; d < nd; d++) {
            gs[d] = 1 + dtt_randint(rng, d == nd - 1 ? 40 : 7);
            ext[d] = dtt_randint(rng, 3) == 0 ? gs[d] : 1 + dtt_randint(rng, (int)gs[d]);
            lo[d] = dtt_randint(rng, (int)(gs[d] - ext[d] + 1));
        }
        rng_case(&op, nd, gs, lo, ext);
    }
    /* the 16-byte store path of F32 uniform [0, 1): 1-D and 2-D boxes, every offset mod 4 */
    for (iter = 0; iter < 400; iter++) {
        dt__rng_op op;
        int64_t gs[2], lo[2], ext[2];
        int nd = 1 + (iter & 1), d;
        memset(&op, 0, sizeof op);
        op.kind = DT__RK_UNIFORM; op.t = DT_F32; op.w = 1; op.a = 0; op.b = 1;
        op.seed = dtt_next(rng);
        op.offset = (uint64_t)(iter % 16) + ((uint64_t)dtt_randint(rng, 1000) << 4);
        for (d = 0; d < nd; d++) {
            gs[d] = 1 + dtt_randint(rng, d == nd - 1 ? 300 : 9);
            ext[d] = 1 + dtt_randint(rng, (int)gs[d]);
            lo[d] = dtt_randint(rng, (int)(gs[d] - ext[d] + 1));
        }
        rng_case(&op, nd, gs, lo, ext);
    }
    section_end("rng");
}

/* ------------------------------------------------------------ 4. copy_box */

static void test_copy_box(dtt_rng *rng) {
    int iter;
    section_begin();
    for (iter = 0; iter < 3000; iter++) {
        static const size_t ess[] = {1, 2, 4, 8, 16, 3, 12};
        dt__array s, dd;
        dt__box p;
        size_t es = ess[dtt_randint(rng, 7)], ns, nd_, i;
        int nd = dtt_randint(rng, 5), d;
        char *sb, *db1, *db2;
        dt__cu_boxplan pl;
        pl.vec = 0;
        uint64_t u;
        s.ndim = dd.ndim = nd;
        s.es = dd.es = es;
        s.stride = dd.stride = NULL; /* row-major over their boxes */
        for (d = 0; d < nd; d++) {
            int64_t g = 1 + dtt_randint(rng, 9);
            /* both arrays inside [0, g); p inside both */
            s.box.lo[d] = dtt_randint(rng, 3) ? 0 : dtt_randint(rng, (int)g);
            s.box.ext[d] = g - s.box.lo[d];
            dd.box.lo[d] = s.box.lo[d] + (dtt_randint(rng, 2) ? 0 : dtt_randint(rng, (int)s.box.ext[d]));
            dd.box.ext[d] = dtt_randint(rng, 2) ? g - dd.box.lo[d] : 1 + dtt_randint(rng, (int)(g - dd.box.lo[d]));
            p.lo[d] = dd.box.lo[d] + dtt_randint(rng, (int)dd.box.ext[d]);
            p.ext[d] = dtt_randint(rng, 3) == 0 ? dd.box.lo[d] + dd.box.ext[d] - p.lo[d]
                                                 : dtt_randint(rng, (int)(dd.box.lo[d] + dd.box.ext[d] - p.lo[d]) + 1);
            if (dtt_randint(rng, 3) == 0) { p.lo[d] = dd.box.lo[d]; p.ext[d] = dd.box.ext[d]; }
        }
        if (dtt_randint(rng, 2)) { /* unpack direction: the smaller array is the source */
            dt__box tmp = s.box;
            s.box = dd.box;
            dd.box = tmp;
        }
        ns = dt__box_numel(nd, &s.box) * es;
        nd_ = dt__box_numel(nd, &dd.box) * es;
        /* 16-aligned buffers, shifted by a random multiple of es sometimes, for every vector width */
        sb = (char *)aligned_alloc(16, ns + 64);
        db1 = (char *)aligned_alloc(16, nd_ + 64);
        db2 = (char *)aligned_alloc(16, nd_ + 64);
        for (i = 0; i < ns + 64; i++) sb[i] = (char)dtt_next(rng);
        memset(db1, 0x5a, nd_ + 64);
        memset(db2, 0x5a, nd_ + 64);
        {
            size_t shift = dtt_randint(rng, 2) ? 0 : es * (size_t)dtt_randint(rng, 3);
            s.data = sb + shift;
            dd.data = db1 + shift;
            dt__copy_box(&s, &dd, &p);
            dd.data = db2 + shift;
            if (dt__cu_boxplan_make(&s, &dd, &p, &pl)) {
                /* the kernel's two paths: any plan, and the 1-D one where it applies */
                if (dt__cu_boxplan_is_1d(&pl) && (iter & 1))
                    for (u = 0; u < pl.rows * pl.nunit; u++) dt__cu_boxplan_unit_1d(&pl, (uint32_t)u);
                else
                    for (u = 0; u < pl.rows * pl.nunit; u++) dt__cu_boxplan_unit(&pl, u);
            }
        }
        checked += (long)dt__box_numel(nd, &p);
        CHECK(same_bytes(db1, db2, nd_ + 64), "copy_box iter %d nd %d es %zu vec %u", iter, nd, es, pl.vec);
        free(sb); free(db1); free(db2);
    }
    section_end("copy_box");
}

/* ------------------------------------------------------------ 5. reduce */

/* the block kernel on the host: DT__CU_THREADS strided accumulators, then the tree */
static void emulate_reduce(dt__rop op, dt_dtype t, int ndim, const int64_t *shape, unsigned mask, const void *x, void *out,
                           double scale) {
    dt__cu_rplan p;
    static dt__cu_racc acc[DT__CU_THREADS];
    int64_t nout = 1, nred = 1, o, r;
    int d, th;
    for (d = 0; d < ndim; d++) {
        if ((mask >> d) & 1u) nred *= shape[d];
        else nout *= shape[d];
    }
    if (nout == 0) return;
    dt__cu_rplan_make(ndim, shape, mask, &p);
    if (nred == 0) { p.nred = 0; p.nk = 0; p.nout = nout; scale = 1.0; }
    for (o = 0; o < p.nout; o++) {
        int64_t base = dt__cu_unravel(p.nk, p.kext, p.kst, o);
        unsigned s;
        for (th = 0; th < DT__CU_THREADS; th++) {
            dt__cu_racc_init(op, t, &acc[th]);
            for (r = th; r < p.nred; r += DT__CU_THREADS)
                dt__cu_racc_add(op, t, &acc[th], x, base + dt__cu_unravel(p.nr, p.rext, p.rst, r), r);
        }
        for (s = DT__CU_THREADS / 2; s > 0; s >>= 1)
            for (th = 0; th < (int)s; th++) dt__cu_racc_merge(op, dt__is_int(t), &acc[th], &acc[th + s]);
        dt__cu_rstore(op, t, &acc[0], out, o, scale);
    }
}

static void test_reduce(dtt_rng *rng) {
    int iter;
    section_begin();
    for (iter = 0; iter < 1500; iter++) {
        dt_dtype t = all_types[dtt_randint(rng, NTYPES)];
        dt__rop op = (dt__rop)dtt_randint(rng, DT__R_NUM);
        dt_dtype ot = op == DT__R_ARGMAX ? DT_I64 : t;
        int nd = dtt_randint(rng, 5), d;
        int64_t shape[DT_MAX_DIMS], n = 1, nout = 1, i;
        unsigned mask = (unsigned)dtt_randint(rng, 1 << nd);
        size_t es = dt_dtype_size(t), oes = dt_dtype_size(ot);
        double scale = (op == DT__R_SUM && dtt_randint(rng, 2)) ? 0.25 : 1.0;
        char *x, *oh, *od;
        for (d = 0; d < nd; d++) {
            shape[d] = dtt_randint(rng, 8) == 0 ? 0 : 1 + dtt_randint(rng, d == nd - 1 ? 300 : 6);
            n *= shape[d];
            if (!((mask >> d) & 1u)) nout *= shape[d];
        }
        x = (char *)malloc((size_t)n * es + 1);
        oh = (char *)malloc((size_t)nout * oes + 1);
        od = (char *)malloc((size_t)nout * oes + 1);
        /* small integers (exact sums in any order), with ties, and NaNs in some floats */
        for (i = 0; i < n; i++) {
            double v = (double)(dtt_randint(rng, 9) - 4);
            if (!dt__is_int(t) && dtt_randint(rng, 200) == 0) v = NAN;
            if (!dt__is_int(t) && dtt_randint(rng, 100) == 0) v = dtt_randint(rng, 2) ? HUGE_VAL : -HUGE_VAL;
            dt__cu_st_f64(t, x, i, v);
        }
        memset(oh, 0x3c, (size_t)nout * oes + 1);
        memset(od, 0x3c, (size_t)nout * oes + 1);
        dt__k_reduce(op, t, nd, shape, mask, x, oh, scale);
        emulate_reduce(op, t, nd, shape, mask, x, od, scale);
        checked += (long)nout;
        /* the values are small integers: every summation order gives the same double */
        if (!same_bytes(oh, od, (size_t)nout * oes + 1)) {
            /* NaN sums: the NaN payload may differ, the NaN-ness may not */
            int ok = 1;
            for (i = 0; i < nout && ok; i++)
                if (!same_bytes(oh + i * oes, od + i * oes, oes)) {
                    double a = dt__cu_ld_f64(ot, oh, i), b = dt__cu_ld_f64(ot, od, i);
                    ok = !dt__is_int(ot) && a != a && b != b;
                }
            CHECK(ok, "reduce iter %d op %d %s nd %d mask %x", iter, (int)op, dt_dtype_name(t), nd, mask);
        }
        free(x); free(oh); free(od);
    }
    section_end("reduce");
}

/* ------------------------------------------------------------ 5. gemm plan */

/* cuBLAS's column-major gemm by its definition: C(i,j) at c[i + j*ldc] */
static void colmajor_gemm(dt_dtype t, const dt__cu_gemmplan *p, double alpha, double beta, void *c) {
    int i, j, q;
    for (i = 0; i < p->m; i++)
        for (j = 0; j < p->n; j++) {
            double s = 0;
            for (q = 0; q < p->k; q++) {
                int64_t ia = p->ta ? q + (int64_t)i * p->lda : i + (int64_t)q * p->lda;
                int64_t ib = p->tb ? j + (int64_t)q * p->ldb : q + (int64_t)j * p->ldb;
                s += dt__cu_ld_f64(t, p->a, ia) * dt__cu_ld_f64(t, p->b, ib);
            }
            s = alpha * s + (beta != 0 ? beta * dt__cu_ld_f64(t, c, i + (int64_t)j * p->ldc) : 0.0);
            dt__cu_st_f64(t, c, i + (int64_t)j * p->ldc, s);
        }
}

/* a matrix rows x cols inside a buffer: row-major, column-major, or padded either way */
static void pick_strides(dtt_rng *rng, int64_t rows, int64_t cols, int64_t *rs, int64_t *cs, int64_t *span) {
    int kind = dtt_randint(rng, 5), pad = dtt_randint(rng, 3);
    if (kind <= 1) { *cs = 1; *rs = cols + pad; }
    else if (kind <= 3) { *rs = 1; *cs = rows + pad; }
    else { *rs = 2 * cols + 1; *cs = 2; } /* neither stride 1: the plain kernel */
    *span = (rows - 1) * *rs + (cols - 1) * *cs + 1;
}

static void test_gemm_plan(dtt_rng *rng) {
    int iter, planned = 0;
    section_begin();
    for (iter = 0; iter < 2000; iter++) {
        static const dt_dtype gt[] = {DT_F32, DT_F64, DT_F16, DT_BF16, DT_I32, DT_I64, DT_U8};
        dt_dtype t = gt[dtt_randint(rng, 7)];
        int64_t m = 1 + dtt_randint(rng, 7), n = 1 + dtt_randint(rng, 7), k = 1 + dtt_randint(rng, 7);
        int64_t rsa, csa, rsb, csb, rsc, csc, sa, sb, sc, i;
        double beta = dtt_randint(rng, 2) ? 0.0 : 2.0;
        size_t es = dt_dtype_size(t);
        char *a, *b, *ch, *cd;
        dt__cu_gemmplan p;
        pick_strides(rng, m, k, &rsa, &csa, &sa);
        pick_strides(rng, k, n, &rsb, &csb, &sb);
        pick_strides(rng, m, n, &rsc, &csc, &sc);
        a = (char *)malloc((size_t)sa * es); b = (char *)malloc((size_t)sb * es);
        ch = (char *)malloc((size_t)sc * es); cd = (char *)malloc((size_t)sc * es);
        for (i = 0; i < sa; i++) dt__cu_st_f64(t, a, i, dtt_randint(rng, 9) - 4.0);
        for (i = 0; i < sb; i++) dt__cu_st_f64(t, b, i, dtt_randint(rng, 9) - 4.0);
        /* beta == 0: C is not read, so NaN there must not show */
        for (i = 0; i < sc; i++) dt__cu_st_f64(t, ch, i, beta == 0 && !dt__is_int(t) ? NAN : dtt_randint(rng, 9) - 4.0);
        memcpy(cd, ch, (size_t)sc * es);
        if (dt__cu_gemm_plan(t, m, n, k, a, rsa, csa, b, rsb, csb, rsc, csc, &p)) {
            planned++;
            CHECK_OK(dt__k_gemm(t, m, n, k, 2.0, a, rsa, csa, b, rsb, csb, beta, ch, rsc, csc));
            colmajor_gemm(t, &p, 2.0, beta, cd);
            checked += (long)(m * n);
            CHECK(same_bytes(ch, cd, (size_t)sc * es), "gemm plan iter %d m %lld n %lld k %lld strides a (%lld,%lld) "
                  "b (%lld,%lld) c (%lld,%lld)", iter, (long long)m, (long long)n, (long long)k, (long long)rsa,
                  (long long)csa, (long long)rsb, (long long)csb, (long long)rsc, (long long)csc);
        } else {
            int64_t ii, jj;
            /* the plain kernel's elements */
            CHECK_OK(dt__k_gemm(t, m, n, k, 2.0, a, rsa, csa, b, rsb, csb, beta, ch, rsc, csc));
            for (ii = 0; ii < m; ii++)
                for (jj = 0; jj < n; jj++) dt__cu_gemm_elem(t, ii, jj, k, 2.0, a, rsa, csa, b, rsb, csb, beta, cd, rsc, csc);
            checked += (long)(m * n);
            CHECK(same_bytes(ch, cd, (size_t)sc * es), "gemm plain iter %d", iter);
            /* only integers and a matrix with neither stride 1 (and more than one row and column) may be refused */
            int odd = dt__is_int(t) || (rsa != 1 && csa != 1 && m > 1 && k > 1) || (rsb != 1 && csb != 1 && k > 1 && n > 1) ||
                      (rsc != 1 && csc != 1 && m > 1 && n > 1);
            CHECK(odd, "gemm plan refused m %lld n %lld k %lld", (long long)m, (long long)n, (long long)k);
        }
        free(a); free(b); free(ch); free(cd);
    }
    CHECK(planned > 300, "only %d of 2000 gemms went to cuBLAS", planned);
    section_end("gemm");
}

/* ------------------------------------------------------------ permute */

/* the tiled kernel's element mapping, tile by tile, against dt__k_permute */
static void test_permute(dtt_rng *rng) {
    int iter, tiled = 0;
    section_begin();
    for (iter = 0; iter < 1500; iter++) {
        int nd = 1 + dtt_randint(rng, 5), perm[DT_MAX_DIMS], k, j;
        int64_t xs[DT_MAX_DIMS], n = 1, t, i;
        size_t es = (size_t)1 << dtt_randint(rng, 4);
        char *x, *yh, *yd;
        dt__cu_pplan p;
        for (k = 0; k < nd; k++) { xs[k] = 1 + dtt_randint(rng, k == nd - 1 ? 70 : 9); n *= xs[k]; perm[k] = k; }
        for (k = nd - 1; k > 0; k--) { int tmp; j = dtt_randint(rng, k + 1); tmp = perm[k]; perm[k] = perm[j]; perm[j] = tmp; }
        x = (char *)malloc((size_t)n * es); yh = (char *)malloc((size_t)n * es); yd = (char *)malloc((size_t)n * es);
        for (i = 0; i < (int64_t)((size_t)n * es); i++) x[i] = (char)dtt_next(rng);
        memset(yd, 0x6b, (size_t)n * es);
        dt__k_permute(es, nd, xs, perm, x, yh);
        dt__cu_pplan_make(nd, xs, perm, &p);
        if (p.nd >= 2 && dt__cu_pplan_tiled(&p)) {
            tiled++;
            for (t = 0; t < p.nout * p.ntq * p.ntl; t++) {
                int64_t xo, yo, q0, l0, a, b;
                dt__cu_pplan_tile(&p, t, &xo, &yo, &q0, &l0);
                for (a = 0; a < DT__CU_TILE; a++)
                    for (b = 0; b < DT__CU_TILE; b++)
                        if (q0 + a < p.eq && l0 + b < p.el)
                            dt__cu_move(es, yd + (yo + a * p.yq + b) * (int64_t)es, x + (xo + a + b * p.xl) * (int64_t)es);
            }
        } else {
            for (i = 0; i < n; i++) dt__cu_move(es, yd + i * (int64_t)es, x + dt__cu_unravel(p.nd, p.ext, p.xst, i) * (int64_t)es);
        }
        checked += (long)n;
        CHECK(same_bytes(yh, yd, (size_t)n * es), "permute iter %d nd %d es %zu", iter, nd, es);
        free(x); free(yh); free(yd);
    }
    CHECK(tiled > 300, "only %d permutes were tiled", tiled);
    section_end("permute");
}

int main(int argc, char **argv) {
    dtt_rng rng = {20261122};
    dtt_init(&argc, &argv, "cuda_host");
    test_halves();
    test_unary();
    section_begin();
    test_binary_specials();
    test_binary_geometry(&rng);
    section_end("binary");
    test_cast();
    test_boxmuller_math(&rng);
    test_rng(&rng);
    test_copy_box(&rng);
    test_reduce(&rng);
    test_gemm_plan(&rng);
    test_permute(&rng);
    return dtt_finish();
}
