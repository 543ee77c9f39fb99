/* dt_test.h -- the tiny harness shared by dtensor.h's tests.

   C99 and C++17 (mpicxx). Each test .c does, once:

       #define DTENSOR_IMPLEMENTATION
       #include "dtensor.h"
       #include "dt_test.h"

   and main() calls dtt_init(&argc, &argv, "name") first and returns
   dtt_finish() last. dtt_finish reduces the failure counts over all ranks
   (MAX) and rank 0 prints exactly one line, "PASS name np=N" or
   "FAIL name np=N (K failures)"; the exit code is 0 on pass, 1 on fail.

   What is here:
   - CHECK(cond, fmt, ...), CHECK_OK(expr), CHECK_ST(expr, status): count a
     failure with file:line, the current context (dtt_ctx) and a message; only
     the first DTT_MAX_PRINT failures of each rank are printed.
   - dtt_ref_layout: an independent torch.chunk layout (nested sharding in
     mesh-dim order), and box helpers.
   - dtt_val: closed-form values, exactly representable in every dtype, kept
     as integers in "value units" (F32/F64 store k/4, the others k).
   - f16/bf16 <-> float conversions, element encode/decode, compare.
   - a splitmix64 RNG and mesh factorisation enumeration.
   Under DTENSOR_NO_MPI the harness needs no MPI. */
#ifndef DT_TEST_H
#define DT_TEST_H

#ifndef DTENSOR_H
#include "dtensor.h"
#endif
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#define DTT_MAX_PRINT 20
/* the real dtypes DT_F32..DT_U8, the ones the value models below cover (the
   complex ones, DT_C64 and DT_C128, are tests/test_complex.c's) */
#define DTT_NUM_REAL_DTYPES (DT_U8 + 1)

static int dtt_failures = 0;
static int dtt_rank = 0;
static int dtt_np = 1;
static int dtt_quick = 0;
static const char *dtt_name = "?";
static char dtt_ctxbuf[512] = "";

#ifndef NELEM
#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0]))) /* the length of an array */
#endif

/* ------------------------------------------------------------ reporting */

static inline void dtt_ctx(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dtt_ctxbuf, sizeof dtt_ctxbuf, fmt, ap);
    va_end(ap);
}

static inline void dtt_fail(const char *file, int line, const char *what, const char *fmt, ...)
{
    dtt_failures++;
    if (dtt_failures <= DTT_MAX_PRINT) { /* one write per line: ranks interleave less */
        char line_buf[1024];
        size_t o;
        va_list ap;
        o = (size_t)snprintf(line_buf, sizeof line_buf, "[rank %d] %s:%d: FAILED %s%s%s%s: ", dtt_rank, file, line,
                             what, dtt_ctxbuf[0] ? " [" : "", dtt_ctxbuf, dtt_ctxbuf[0] ? "]" : "");
        if (o < sizeof line_buf) {
            va_start(ap, fmt);
            vsnprintf(line_buf + o, sizeof line_buf - o, fmt, ap);
            va_end(ap);
        }
        fprintf(stderr, "%s\n%s", line_buf,
                dtt_failures == DTT_MAX_PRINT ? "(further failures of this rank not printed)\n" : "");
        fflush(stderr);
    }
}

#define CHECK(cond, ...) \
    do { if (!(cond)) dtt_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); } while (0)

/* expr must return DT_OK */
#define CHECK_OK(expr) \
    do { dt_status dtt_s_ = (expr); \
         if (dtt_s_ != DT_OK) dtt_fail(__FILE__, __LINE__, #expr, "returned %s: %s", \
                                       dt_status_string(dtt_s_), dt_last_error()); } while (0)

#define CHECK_ST(expr, want) \
    do { dt_status dtt_s_ = (expr); dt_status dtt_w_ = (want); \
         if (dtt_s_ != dtt_w_) dtt_fail(__FILE__, __LINE__, #expr, "returned %s, want %s: %s", \
                                        dt_status_string(dtt_s_), dt_status_string(dtt_w_), \
                                        dt_last_error()); } while (0)

static inline void dtt_init(int *argc, char ***argv, const char *name)
{
    int i;
    const char *q = getenv("DT_TEST_QUICK");
    dtt_name = name;
#ifdef DTCU_STANDIN /* the CUDA build of a test on tests/standin/: told apart in the PASS line */
    {
        static char sname[64];
        snprintf(sname, sizeof sname, "%s@standin", name);
        dtt_name = sname;
    }
#endif
#ifndef DTENSOR_NO_MPI
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &dtt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &dtt_np);
#endif
    if (q && q[0] && q[0] != '0') dtt_quick = 1;
    for (i = 1; i < *argc; i++)
        if (strcmp((*argv)[i], "--quick") == 0) dtt_quick = 1;
}

/* the agreed failure count: MAX over all ranks */
static inline int dtt_global_failures(void)
{
    int g = dtt_failures;
#ifndef DTENSOR_NO_MPI
    MPI_Allreduce(&dtt_failures, &g, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#endif
    return g;
}

static long dtt_pairs = 0; /* redistribution pairs run by dtt_run_pair */

static inline int dtt_finish(void)
{
    int g = dtt_global_failures();
    if (dtt_rank == 0 && getenv("DT_TEST_VERBOSE") && dtt_pairs)
        fprintf(stderr, "%s: %ld redistribution pairs checked\n", dtt_name, dtt_pairs);
    if (dtt_rank == 0) {
        if (g == 0) printf("PASS %s np=%d\n", dtt_name, dtt_np);
        else printf("FAIL %s np=%d (%d failures)\n", dtt_name, dtt_np, g);
        fflush(stdout);
    }
#ifndef DTENSOR_NO_MPI
    MPI_Finalize();
#endif
    return g == 0 ? 0 : 1;
}

/* Call after dtt_init, before the first redistribution (the settings are
   read once), in a test that defines _POSIX_C_SOURCE (setenv): the piece
   exchanges over MPI go, at 2 ranks, as one alltoallv of packed pieces
   (DTENSOR_EXCHANGE=alltoallv); at 6, posted with every strided piece an
   MPI datatype, transposing ones too (DTENSOR_EXCHANGE_TYPES=1); elsewhere
   the MPI's default (posted; datatypes under Open MPI, packed under
   MPICH). So a sweep over 1 2 3 4 6 8 ranks takes every path. */
#define DTT_EXCHANGE_PATHS()                                                    \
    do {                                                                        \
        if (dtt_np == 2) setenv("DTENSOR_EXCHANGE", "alltoallv", 1);            \
        if (dtt_np == 6) setenv("DTENSOR_EXCHANGE_TYPES", "1", 1);              \
    } while (0)

/* last error names the function */
#define CHECK_ERRMSG(fn) \
    CHECK(strlen(dt_last_error()) > 0 && strstr(dt_last_error(), fn) != NULL, \
          "dt_last_error() = \"%s\" should name %s", dt_last_error(), fn)

/* ------------------------------------------------------------ rng */

typedef struct dtt_rng { uint64_t s; } dtt_rng;
static inline uint64_t dtt_next(dtt_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline int dtt_randint(dtt_rng *r, int n) /* 0..n-1 */
{
    return n <= 1 ? 0 : (int)(dtt_next(r) % (uint64_t)n);
}

/* ------------------------------------------------------------ shapes */

static inline int64_t dtt_numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    int i;
    for (i = 0; i < ndim; i++) n *= shape[i];
    return n;
}

/* the descriptor of a t tensor of shape[ndim] with placements pl[mnd] (the rest zero) */
static inline dt_tensor_desc dtt_desc(dt_dtype t, int ndim, const int64_t *shape, int mnd, const dt_placement *pl)
{
    dt_tensor_desc d;
    int k;
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = ndim;
    for (k = 0; k < ndim; k++) d.shape[k] = shape[k];
    for (k = 0; k < mnd; k++) d.placements[k] = pl[k];
    return d;
}

/* all ordered factorisations of n into exactly `ndim` factors (>= 1);
   writes up to `max` of them into out[k*DT_MAX_MESH_DIMS + d]; returns the count */
static inline int dtt_factorizations(int n, int ndim, int *out, int max)
{
    int count = 0, f[DT_MAX_MESH_DIMS], d;
    for (d = 0; d < DT_MAX_MESH_DIMS; d++) f[d] = 1;
    if (ndim < 1 || ndim > DT_MAX_MESH_DIMS) return 0;
    /* odometer over divisors */
    for (;;) {
        int prod = 1;
        for (d = 0; d < ndim - 1; d++) prod *= f[d];
        if (n % prod == 0) {
            f[ndim - 1] = n / prod;
            if (count < max) {
                for (d = 0; d < DT_MAX_MESH_DIMS; d++) out[count * DT_MAX_MESH_DIMS + d] = d < ndim ? f[d] : 0;
            }
            count++;
        }
        for (d = ndim - 2; d >= 0; d--) {
            f[d]++;
            if (f[d] <= n) break;
            f[d] = 1;
        }
        if (d < 0) break;
    }
    return count < max ? count : max;
}

/* row-major unravel of a linear index over `shape` */
static inline void dtt_unravel(int ndim, const int *shape, int idx, int *coord)
{
    int d;
    for (d = ndim - 1; d >= 0; d--) {
        coord[d] = shape[d] > 0 ? idx % shape[d] : 0;
        idx = shape[d] > 0 ? idx / shape[d] : 0;
    }
}

/* ------------------------------------------------------------ reference layout */

static inline int dtt_norm_dim(int dim, int ndim) { return dim < 0 ? dim + ndim : dim; }

/* torch.chunk, nested in mesh-dim order. coord: this rank's mesh coordinate. */
static inline void dtt_ref_layout(int mndim, const int *mshape, const int *coord, int ndim,
                                  const int64_t *shape, const dt_placement *pl,
                                  int64_t *lshape, int64_t *loff)
{
    int d, k;
    for (d = 0; d < ndim; d++) {
        int64_t n = shape[d], off = 0;
        for (k = 0; k < mndim; k++) {
            if (pl[k].kind == DT_SHARD && dtt_norm_dim(pl[k].dim, ndim) == d) {
                int64_t parts = mshape[k], r = coord[k];
                int64_t c = (n + parts - 1) / parts;
                int64_t lo = r * c < n ? r * c : n;
                int64_t hi = (r + 1) * c < n ? (r + 1) * c : n;
                off += lo;
                n = hi - lo;
            }
        }
        lshape[d] = n;
        loff[d] = off;
    }
}

/* elements in the intersection of two boxes */
static inline int64_t dtt_box_overlap(int ndim, const int64_t *s1, const int64_t *o1,
                                      const int64_t *s2, const int64_t *o2)
{
    int64_t n = 1;
    int d;
    for (d = 0; d < ndim; d++) {
        int64_t lo = o1[d] > o2[d] ? o1[d] : o2[d];
        int64_t h1 = o1[d] + s1[d], h2 = o2[d] + s2[d];
        int64_t hi = h1 < h2 ? h1 : h2;
        if (hi <= lo) return 0;
        n *= hi - lo;
    }
    return n;
}

/* global row-major linear index of local element li */
static inline int64_t dtt_gidx(int ndim, const int64_t *shape, const int64_t *lshape,
                               const int64_t *loff, int64_t li)
{
    int64_t idx[DT_MAX_DIMS], g = 0;
    int d;
    for (d = ndim - 1; d >= 0; d--) {
        idx[d] = lshape[d] > 0 ? li % lshape[d] : 0;
        li = lshape[d] > 0 ? li / lshape[d] : 0;
    }
    for (d = 0; d < ndim; d++) g = g * shape[d] + loff[d] + idx[d];
    return g;
}

/* ------------------------------------------------------------ dtypes */

static inline size_t dtt_size(dt_dtype t)
{
    switch (t) {
    case DT_F32: case DT_I32: return 4;
    case DT_F64: case DT_I64: return 8;
    case DT_F16: case DT_BF16: return 2;
    case DT_U8: return 1;
    case DT_C64: return 8;
    case DT_C128: return 16;
    }
    return 0;
}
static inline const char *dtt_dtname(dt_dtype t)
{
    static const char *n[] = { "f32", "f64", "f16", "bf16", "i32", "i64", "u8", "c64", "c128" };
    return (int)t >= 0 && (int)t < DT_NUM_DTYPES ? n[t] : "?";
}
static inline int dtt_is_float(dt_dtype t)
{
    return t == DT_F32 || t == DT_F64 || t == DT_F16 || t == DT_BF16;
}

static inline uint32_t dtt_f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float dtt_u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static inline float dtt_half_to_float(uint16_t h)
{
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31u, m = h & 1023u;
    if (e == 0) {
        float f = (float)m * (1.0f / 16777216.0f); /* m * 2^-24 */
        return s ? -f : f;
    }
    if (e == 31) return dtt_u2f(s | 0x7F800000u | (m << 13));
    return dtt_u2f(s | ((e + 112u) << 23) | (m << 13));
}

/* round to nearest even */
static inline uint16_t dtt_float_to_half(float f)
{
    uint32_t u = dtt_f2u(f), s = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7FFFFFFFu;
    if (a >= 0x7F800000u) return (uint16_t)(s | 0x7C00u | (a > 0x7F800000u ? 0x200u : 0u));
    if (a >= 0x477FF000u) return (uint16_t)(s | 0x7C00u); /* >= 65520: inf */
    if (a < 0x38800000u) { /* subnormal or zero in half: value * 2^24, rounded */
        float v = dtt_u2f(a) * 16777216.0f;
        float r = (float)floor(v);
        float fr = v - r;
        uint32_t m = (uint32_t)r;
        if (fr > 0.5f || (fr == 0.5f && (m & 1u))) m++;
        return (uint16_t)(s | m);
    }
    {
        uint32_t e = ((a >> 23) - 112u) << 10, m = (a >> 13) & 1023u, rest = a & 0x1FFFu;
        uint32_t h = e | m;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++;
        return (uint16_t)(s | h);
    }
}

static inline float dtt_bf16_to_float(uint16_t b) { return dtt_u2f((uint32_t)b << 16); }
static inline uint16_t dtt_float_to_bf16(float f)
{
    uint32_t u = dtt_f2u(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* the scale of a value unit: F32/F64 values are k/4 */
static inline double dtt_scale(dt_dtype t) { return (t == DT_F32 || t == DT_F64) ? 0.25 : 1.0; }

/* store the double x (already in the dtype's range) as element i of buf */
static inline void dtt_store_d(dt_dtype t, void *buf, size_t i, double x)
{
    unsigned char *p = (unsigned char *)buf;
    switch (t) {
    case DT_F32: { float v = (float)x; memcpy(p + 4 * i, &v, 4); break; }
    case DT_F64: { memcpy(p + 8 * i, &x, 8); break; }
    case DT_F16: { uint16_t v = dtt_float_to_half((float)x); memcpy(p + 2 * i, &v, 2); break; }
    case DT_BF16: { uint16_t v = dtt_float_to_bf16((float)x); memcpy(p + 2 * i, &v, 2); break; }
    case DT_I32: { int32_t v = (int32_t)x; memcpy(p + 4 * i, &v, 4); break; }
    case DT_I64: { int64_t v = (int64_t)x; memcpy(p + 8 * i, &v, 8); break; }
    case DT_U8: { p[i] = (unsigned char)x; break; }
    case DT_C64: case DT_C128: break; /* complex: tests/test_complex.c has its own */
    }
}

/* store the value k (value units) as element i of buf, exactly */
static inline void dtt_store(dt_dtype t, void *buf, size_t i, int64_t k)
{
    unsigned char *p = (unsigned char *)buf;
    if (t == DT_I64) { memcpy(p + 8 * i, &k, 8); return; }
    dtt_store_d(t, buf, i, (double)k * dtt_scale(t));
}

static inline double dtt_load_d(dt_dtype t, const void *buf, size_t i)
{
    const unsigned char *p = (const unsigned char *)buf;
    switch (t) {
    case DT_F32: { float v; memcpy(&v, p + 4 * i, 4); return v; }
    case DT_F64: { double v; memcpy(&v, p + 8 * i, 8); return v; }
    case DT_F16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return dtt_half_to_float(v); }
    case DT_BF16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return dtt_bf16_to_float(v); }
    case DT_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case DT_I64: { int64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
    case DT_U8: return p[i];
    case DT_C64: case DT_C128: break;
    }
    return 0;
}

/* element i as value units (exact for every value the tests store) */
static inline int64_t dtt_load(dt_dtype t, const void *buf, size_t i)
{
    if (t == DT_I64) { int64_t v; memcpy(&v, (const unsigned char *)buf + 8 * i, 8); return v; }
    {
        double x = dtt_load_d(t, buf, i) / dtt_scale(t);
        return (int64_t)x == x ? (int64_t)x : INT64_MIN; /* not an integer: mismatch marker */
    }
}

/* |got - want| within `ulps` units in the last place of want, in dtype t */
static inline int dtt_close(dt_dtype t, double got, double want, double ulps)
{
    double eps = t == DT_F32 ? 1.0 / 8388608.0 : t == DT_F64 ? 2.220446049250313e-16
               : t == DT_F16 ? 1.0 / 1024.0 : t == DT_BF16 ? 1.0 / 128.0 : 0.0;
    double tol = fabs(want) * eps * ulps;
    if (!dtt_is_float(t)) return got == want;
    if (t == DT_F16 && tol < ulps * 5.960464477539063e-08) tol = ulps * 5.960464477539063e-08;
    return fabs(got - want) <= tol;
}

/* ------------------------------------------------------------ values */

/* closed-form value of global element g, in value units */
static inline int64_t dtt_val(dt_dtype t, int64_t g)
{
    uint64_t u = (uint64_t)g;
    switch (t) {
    case DT_F16: case DT_BF16: return (int64_t)((u * 7 + 3) % 61) - 30;
    case DT_U8: return (int64_t)((u * 7 + 3) % 251);
    case DT_F32: return (int64_t)((u * 40503u + 11) % 2097143u) - 1048571; /* /4: 19 bits */
    case DT_I32: return (int64_t)((u * 2654435761u + 17) % 2000000011u) - 1000000005;
    case DT_F64: return (int64_t)((u * 2862933555777941757ull + 3037000493ull) >> 22) - ((int64_t)1 << 41);
    case DT_I64: return (int64_t)((u * 6364136223846793005ull + 1442695040888963407ull) >> 3) - ((int64_t)1 << 60);
    case DT_C64: case DT_C128: break;
    }
    return 0;
}

/* a small term used to split values into Partial parts; p > 0 */
static inline int64_t dtt_small(dt_dtype t, int64_t g, int p)
{
    if (t == DT_U8) return dtt_val(t, g) >= 16 ? (int64_t)((g + p) % 3) : 0;
    return (int64_t)((g * 3 + p * 5) % 5) - 2;
}

/* part p of n of the value of g, the parts summing exactly to dtt_val */
static inline int64_t dtt_part(dt_dtype t, int64_t g, int p, int n)
{
    int q;
    int64_t v;
    if (p > 0) return dtt_small(t, g, p);
    v = dtt_val(t, g);
    for (q = 1; q < n; q++) v -= dtt_small(t, g, q);
    return v;
}

/* ------------------------------------------------------------ printing */

static inline const char *dtt_pl_str(const dt_placement *pl, int n, char *buf, size_t cap)
{
    size_t o = 0;
    int k;
    static const char *red[] = { "sum", "avg", "max", "min" };
    buf[0] = 0;
    o += (size_t)snprintf(buf + o, cap - o, "[");
    for (k = 0; k < n && o < cap; k++) {
        const char *sep = k ? "," : "";
        if (pl[k].kind == DT_SHARD) o += (size_t)snprintf(buf + o, cap - o, "%sS%d", sep, pl[k].dim);
        else if (pl[k].kind == DT_PARTIAL)
            o += (size_t)snprintf(buf + o, cap - o, "%sP%s", sep, pl[k].reduce < 4 ? red[pl[k].reduce] : "?");
        else o += (size_t)snprintf(buf + o, cap - o, "%sR", sep);
    }
    if (o < cap) snprintf(buf + o, cap - o, "]");
    return buf;
}

static inline const char *dtt_shape_str(int ndim, const int64_t *s, char *buf, size_t cap)
{
    size_t o = 0;
    int d;
    o += (size_t)snprintf(buf, cap, "(");
    for (d = 0; d < ndim && o < cap; d++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%lld", d ? "," : "", (long long)s[d]);
    if (o < cap) snprintf(buf + o, cap - o, ")");
    return buf;
}

static inline const char *dtt_ishape_str(int ndim, const int *s, char *buf, size_t cap)
{
    size_t o = 0;
    int d;
    buf[0] = 0;
    for (d = 0; d < ndim && o < cap; d++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%d", d ? "x" : "", s[d]);
    return buf;
}

static inline void *dtt_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) { fprintf(stderr, "dt_test: out of memory (%zu bytes)\n", n); exit(2); }
    return p;
}

/* fill a local buffer with dtt_val at the global indices of a box */
static inline void dtt_fill_box(dt_dtype t, int ndim, const int64_t *shape, const int64_t *lshape,
                                const int64_t *loff, void *buf)
{
    int64_t n = dtt_numel(ndim, lshape), i;
    for (i = 0; i < n; i++) dtt_store(t, buf, (size_t)i, dtt_val(t, dtt_gidx(ndim, shape, lshape, loff, i)));
}

/* check a local buffer holds dtt_val at the global indices of a box;
   returns the number of mismatches (reports the first) */
#define dtt_check_box(t, ndim, shape, lshape, loff, buf, what) \
    dtt_check_box_at(__FILE__, __LINE__, t, ndim, shape, lshape, loff, buf, what)
static inline int dtt_check_box_at(const char *file, int line, dt_dtype t, int ndim,
                                   const int64_t *shape, const int64_t *lshape,
                                   const int64_t *loff, const void *buf, const char *what)
{
    int64_t n = dtt_numel(ndim, lshape), i, bad = 0;
    for (i = 0; i < n; i++) {
        int64_t g = dtt_gidx(ndim, shape, lshape, loff, i);
        int64_t want = dtt_val(t, g), got = dtt_load(t, buf, (size_t)i);
        if (got != want) {
            if (!bad)
                dtt_fail(file, line, what, "local elem %lld (global %lld): got %.17g want %lld%s",
                         (long long)i, (long long)g, dtt_load_d(t, buf, (size_t)i) / dtt_scale(t),
                         (long long)want, dtt_is_float(t) && dtt_scale(t) != 1 ? " (x1/4)" : "");
            bad++;
        }
    }
    return (int)bad;
}

/* ------------------------------------------------------------ mesh context */

static int64_t dtt_shift = 0; /* model values are dtt_val(t, g + dtt_shift) */

typedef struct dtt_mesh {
    dt_comm *comm;   /* the comm the mesh was made from (stats) */
    dt_mesh *mesh;
    int nd;
    int shape[DT_MAX_MESH_DIMS];
    int coord[DT_MAX_MESH_DIMS];
    char name[96];
} dtt_mesh;

/* the widths a halo desc gives below (lo) and above (hi) each of its first nd
   dims, as dtensor.h states them: width_lo / width_hi when any is set, else
   width on both sides */
static inline void dtt_side_widths(const dt_halo_desc *hd, int nd, int64_t *lo, int64_t *hi)
{
    int k, sided = 0;
    for (k = 0; k < DT_MAX_DIMS; k++) sided |= hd->width_lo[k] != 0 || hd->width_hi[k] != 0;
    for (k = 0; k < nd; k++) {
        lo[k] = sided ? hd->width_lo[k] : hd->width[k];
        hi[k] = sided ? hd->width_hi[k] : hd->width[k];
    }
}

/* a one-rank mesh on dt_comm_self (the "one-rank run" a test compares with);
   both stay NULL (a failure counted) if it cannot be made */
static inline void dtt_self_mesh(dt_comm **comm, dt_mesh **mesh)
{
    *mesh = NULL;
    CHECK_OK(dt_comm_self(comm));
    if (*comm) {
        dt_mesh_desc md;
        memset(&md, 0, sizeof md);
        md.ndim = 1;
        md.shape[0] = 1;
        CHECK_OK(dt_mesh_create(*comm, &md, mesh));
    }
}

/* a mesh over all of comm's ranks (rank r at the row-major coordinate of r) */
static inline int dtt_mesh_open(dtt_mesh *m, dt_comm *comm, int nd, const int *shape)
{
    dt_mesh_desc md;
    int k, lib[DT_MAX_MESH_DIMS];
    memset(m, 0, sizeof *m);
    memset(&md, 0, sizeof md);
    md.ndim = nd;
    m->nd = nd;
    m->comm = comm;
    for (k = 0; k < nd; k++) md.shape[k] = m->shape[k] = shape[k];
    dtt_ishape_str(nd, shape, m->name, sizeof m->name);
    dtt_ctx("mesh %s", m->name);
    CHECK_OK(dt_mesh_create(comm, &md, &m->mesh));
    if (!m->mesh) return 0;
    dtt_unravel(nd, m->shape, dt_comm_rank(comm), m->coord);
    CHECK(dt_mesh_coordinate(m->mesh, lib) == 1, "rank should be in the mesh");
    for (k = 0; k < nd; k++) CHECK(lib[k] == m->coord[k], "coord[%d] = %d want %d", k, lib[k], m->coord[k]);
    return 1;
}

static inline void dtt_mesh_close(dtt_mesh *m)
{
    dt_mesh_destroy(m->mesh);
    m->mesh = NULL;
}

/* ------------------------------------------------------------ value model

   The local value of global element g at mesh coordinate c is
       [c_k == 0 for every k in rsum] * (sum of the parts t of the original
       split over mesh dims `ps` with t_k == c_k on the dims still in `split`)
   ps:    mesh dims the source was built Partial(SUM) on, its value split in
          parts (dtt_part, linearised row-major over the ps dims)
   split: those of ps still Partial (not yet reduced)
   rsum:  mesh dims made Partial(SUM) from Replicate (value on coordinate 0)
   Partial MAX/MIN/AVG made from Replicate keep the value everywhere: no bit.
   Every model's global (reduced) value is dtt_val(t, g + dtt_shift). */
typedef struct dtt_model { unsigned ps, split, rsum; } dtt_model;

static inline unsigned dtt_partial_mask(int nd, const dt_placement *pl)
{
    unsigned m = 0;
    int k;
    for (k = 0; k < nd; k++)
        if (pl[k].kind == DT_PARTIAL) m |= 1u << k;
    return m;
}

static inline dtt_model dtt_model_source(int nd, const dt_placement *pl)
{
    dtt_model md;
    md.ps = md.split = dtt_partial_mask(nd, pl);
    md.rsum = 0;
    return md;
}

/* the model after src -> dst: Partial(op) -> Partial(op) keeps the parts;
   Partial(op1) -> Partial(op2) reduces, then follows Replicate -> Partial(op2) */
static inline dtt_model dtt_model_after(dtt_model md, int nd, const dt_placement *src, const dt_placement *dst)
{
    int k;
    for (k = 0; k < nd; k++) {
        unsigned b = 1u << k;
        int sp = src[k].kind == DT_PARTIAL, dp = dst[k].kind == DT_PARTIAL;
        if (dp && sp && src[k].reduce == dst[k].reduce) continue;
        md.split &= ~b;
        md.rsum &= ~b;
        if (dp && dst[k].reduce == DT_SUM) md.rsum |= b;
    }
    return md;
}

static inline int64_t dtt_model_value(const dtt_mesh *m, dt_dtype t, int64_t g, const dtt_model *md)
{
    int k, nparts = 1, p;
    int64_t sum = 0;
    g += dtt_shift;
    for (k = 0; k < m->nd; k++)
        if (((md->rsum >> k) & 1u) && m->coord[k] != 0) return 0;
    if (!md->ps) return dtt_val(t, g);
    for (k = 0; k < m->nd; k++)
        if ((md->ps >> k) & 1u) nparts *= m->shape[k];
    for (p = 0; p < nparts; p++) {
        int rem = p, ok = 1;
        for (k = m->nd - 1; k >= 0; k--) {
            if ((md->ps >> k) & 1u) {
                int tk = rem % m->shape[k];
                rem /= m->shape[k];
                if (((md->split >> k) & 1u) && tk != m->coord[k]) ok = 0;
            }
        }
        if (ok) sum += dtt_part(t, g, p, nparts);
    }
    return sum;
}

static inline void dtt_fill_model(const dtt_mesh *m, dt_dtype t, int ndim, const int64_t *shape,
                                  const int64_t *ls, const int64_t *lo, const dtt_model *md, void *buf)
{
    int64_t n = dtt_numel(ndim, ls), i;
    for (i = 0; i < n; i++)
        dtt_store(t, buf, (size_t)i, dtt_model_value(m, t, dtt_gidx(ndim, shape, ls, lo, i), md));
}

/* ------------------------------------------------------------ tensor checks */

/* layout, descriptor and every local value of x against the reference;
   returns the failures found */
#define dtt_check_tensor(m, x, t, ndim, shape, pl, md, what) \
    dtt_check_tensor_at(__FILE__, __LINE__, m, x, t, ndim, shape, pl, md, what)
static inline int dtt_check_tensor_at(const char *file, int line, const dtt_mesh *m, const dt_tensor *x,
                                      dt_dtype t, int ndim, const int64_t *shape, const dt_placement *pl,
                                      const dtt_model *md, const char *what)
{
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], gls[DT_MAX_DIMS], glo[DT_MAX_DIMS], n, i;
    int d, k, before = dtt_failures;
    const dt_tensor_desc *dd;
    const void *data;
    if (!x) {
        dtt_fail(file, line, what, "no tensor");
        return 1;
    }
    dtt_ref_layout(m->nd, m->shape, m->coord, ndim, shape, pl, ls, lo);
    for (d = 0; d < DT_MAX_DIMS; d++) gls[d] = glo[d] = -7;
    dt_tensor_local_shape(x, gls);
    dt_tensor_local_offset(x, glo);
    n = dtt_numel(ndim, ls);
    for (d = 0; d < ndim; d++) {
        if (gls[d] != ls[d])
            dtt_fail(file, line, what, "local_shape[%d] = %lld want %lld", d, (long long)gls[d], (long long)ls[d]);
        /* an empty part sits at the end of its parent (dtensor.h's documented
           rule, the reference's min(r*c, N)): checked for empty parts too */
        if (glo[d] != lo[d])
            dtt_fail(file, line, what, "local_offset[%d] = %lld want %lld", d, (long long)glo[d], (long long)lo[d]);
    }
    if (dt_tensor_local_numel(x) != (size_t)n)
        dtt_fail(file, line, what, "local_numel %zu want %lld", dt_tensor_local_numel(x), (long long)n);
    dd = dt_tensor_get_desc(x);
    if (!dd) dtt_fail(file, line, what, "dt_tensor_get_desc returned NULL");
    if (dd) {
        if (dd->dtype != t || dd->ndim != ndim)
            dtt_fail(file, line, what, "desc dtype %d ndim %d want %d %d", (int)dd->dtype, dd->ndim, (int)t, ndim);
        for (d = 0; d < ndim && d < DT_MAX_DIMS; d++)
            if (dd->shape[d] != shape[d])
                dtt_fail(file, line, what, "desc shape[%d] = %lld", d, (long long)dd->shape[d]);
        for (k = 0; k < m->nd; k++) {
            if (dd->placements[k].kind != pl[k].kind)
                dtt_fail(file, line, what, "desc placement[%d] kind %d want %d", k, dd->placements[k].kind, pl[k].kind);
            else if (pl[k].kind == DT_SHARD && dd->placements[k].dim != dtt_norm_dim(pl[k].dim, ndim))
                dtt_fail(file, line, what, "desc placement[%d] dim %d want %d (normalised)", k,
                         dd->placements[k].dim, dtt_norm_dim(pl[k].dim, ndim));
            else if (pl[k].kind == DT_PARTIAL && dd->placements[k].reduce != pl[k].reduce)
                dtt_fail(file, line, what, "desc placement[%d] reduce %d want %d", k, dd->placements[k].reduce, pl[k].reduce);
        }
    }
    if (dt_tensor_mesh(x) != m->mesh) dtt_fail(file, line, what, "dt_tensor_mesh is not the mesh");
    data = dt_tensor_data(x);
    if (n > 0 && !data) dtt_fail(file, line, what, "data NULL with %lld local elements", (long long)n);
    if (n > 0 && data && dtt_failures == before) {
        for (i = 0; i < n; i++) {
            int64_t g = dtt_gidx(ndim, shape, ls, lo, i);
            int64_t want = dtt_model_value(m, t, g, md), got = dtt_load(t, data, (size_t)i);
            if (got != want) {
                dtt_fail(file, line, what, "local elem %lld (global %lld) = %.17g want %lld (value units)",
                         (long long)i, (long long)g, dtt_load_d(t, data, (size_t)i) / dtt_scale(t), (long long)want);
                break;
            }
        }
    }
    return dtt_failures - before;
}

/* dt_tensor_gather gives the full (reduced) tensor dtt_val(g + dtt_shift) */
#define dtt_check_gather(x, t, ndim, shape, what) dtt_check_gather_at(__FILE__, __LINE__, x, t, ndim, shape, what)
static inline void dtt_check_gather_at(const char *file, int line, const dt_tensor *x, dt_dtype t, int ndim,
                                       const int64_t *shape, const char *what)
{
    int64_t n = dtt_numel(ndim, shape), g;
    size_t es = dtt_size(t), bytes = (size_t)n * es;
    unsigned char *full = (unsigned char *)dtt_malloc(bytes + 16);
    dt_status st;
    memset(full, 0xA5, bytes + 16);
    st = dt_tensor_gather(x, full);
    if (st != DT_OK)
        dtt_fail(file, line, what, "dt_tensor_gather returned %s: %s", dt_status_string(st), dt_last_error());
    else
        for (g = 0; g < n; g++) {
            int64_t want = dtt_val(t, g + dtt_shift), got = dtt_load(t, full, (size_t)g);
            if (got != want) {
                dtt_fail(file, line, what, "gather: global %lld = %.17g want %lld (value units)",
                         (long long)g, dtt_load_d(t, full, (size_t)g) / dtt_scale(t), (long long)want);
                break;
            }
        }
    for (g = 0; g < 16; g++)
        if (full[bytes + (size_t)g] != 0xA5) {
            dtt_fail(file, line, what, "gather wrote past the end of the full tensor");
            break;
        }
    free(full);
}

/* ------------------------------------------------------------ one pair */

#define DTT_BYTES 1u      /* check bytes_recv == the lower bound (pairs without Partial) */
#define DTT_BORROW 2u     /* the source wraps the buffer (else DT_COPY) */
#define DTT_LOCALSHAPE 4u /* pass desc.local_shape */
#define DTT_NOGATHER 8u   /* skip the dt_tensor_gather check */

static inline int dtt_refused(int nd, const dt_placement *src, const dt_placement *dst)
{
    int k;
    for (k = 0; k < nd; k++)
        if (src[k].kind == DT_SHARD && dst[k].kind == DT_PARTIAL) return 1;
    return 0;
}

/* option i of a mesh dim for a tensor of ndim dims: R, S(0..ndim-1), P(SUM) */
static inline dt_placement dtt_option(int i, int ndim)
{
    if (i == 0) return dt_replicate();
    if (i <= ndim) return dt_shard(i - 1);
    return dt_partial(DT_SUM);
}

/* placement tuple number idx (of (ndim+2)^nd) */
static inline void dtt_placements_of(int idx, int nd, int ndim, dt_placement *pl)
{
    int k, nopt = ndim + 2;
    memset(pl, 0, sizeof(dt_placement) * DT_MAX_MESH_DIMS);
    for (k = nd - 1; k >= 0; k--) {
        pl[k] = dtt_option(idx % nopt, ndim);
        idx /= nopt;
    }
}


/* Build a source with placements src holding the model's values (Partial(SUM)
   sources split into parts), redistribute to dst and check: source layout,
   destination layout/desc/values, the source unchanged, (DTT_BYTES, no
   Partial) bytes_recv == the lower bound, dt_tensor_gather, and for Partial
   destinations the value after a reduction to Replicate. The stats of the
   redistribution go to *st_out when given. */
#define dtt_run_pair(m, t, ndim, shape, src, dst, flags, st_out) \
    dtt_run_pair_at(__FILE__, __LINE__, m, t, ndim, shape, src, dst, flags, st_out)
static inline void dtt_run_pair_at(const char *file, int line, const dtt_mesh *m, dt_dtype t, int ndim,
                                   const int64_t *shape, const dt_placement *src, const dt_placement *dst,
                                   unsigned flags, dt_comm_stats *st_out)
{
    dt_tensor_desc d;
    dt_tensor *a = NULL, *b = NULL;
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], dls[DT_MAX_DIMS], dlo[DT_MAX_DIMS], n;
    size_t es = dtt_size(t);
    void *buf, *saved;
    dtt_model ms = dtt_model_source(m->nd, src), md;
    dt_comm_stats st;
    dt_status rc;
    char s1[64], s2[64], s3[64];

    dtt_ctx("mesh %s %s %s %s -> %s (from %s:%d)", m->name, dtt_dtname(t), dtt_shape_str(ndim, shape, s1, sizeof s1),
            dtt_pl_str(src, m->nd, s2, sizeof s2), dtt_pl_str(dst, m->nd, s3, sizeof s3), file, line);
    dtt_pairs++;
    memset(&st, 0, sizeof st);
    if (st_out) *st_out = st;
    dtt_ref_layout(m->nd, m->shape, m->coord, ndim, shape, src, ls, lo);
    n = dtt_numel(ndim, ls);
    buf = dtt_malloc((size_t)n * es);
    saved = dtt_malloc((size_t)n * es);
    dtt_fill_model(m, t, ndim, shape, ls, lo, &ms, buf);
    memcpy(saved, buf, (size_t)n * es);

    d = dtt_desc(t, ndim, shape, m->nd, src);
    if (flags & DTT_LOCALSHAPE) d.local_shape = ls;
    CHECK_OK(dt_tensor_from_local(m->mesh, &d, buf, (flags & DTT_BORROW) ? DT_BORROW : DT_COPY, &a));
    if (!a) {
        free(buf);
        free(saved);
        return;
    }
    if (flags & DTT_BORROW) CHECK(n == 0 || dt_tensor_data(a) == buf, "DT_BORROW must wrap the caller's buffer");
    else CHECK(n == 0 || dt_tensor_data(a) != buf, "DT_COPY must copy");
    dtt_check_tensor(m, a, t, ndim, shape, src, &ms, "source");

    dt_comm_reset_stats(m->comm);
    rc = dt_tensor_redistribute(a, dst, &b);
    dt_comm_get_stats(m->comm, &st);
    if (st_out) *st_out = st;
    if (rc != DT_OK) dtt_fail(file, line, "dt_tensor_redistribute", "returned %s: %s", dt_status_string(rc), dt_last_error());
    if (b) {
        md = dtt_model_after(ms, m->nd, src, dst);
        dtt_check_tensor(m, b, t, ndim, shape, dst, &md, "dest");
        CHECK(n == 0 || memcmp(dt_tensor_data(a), saved, (size_t)n * es) == 0, "the source changed");
        if ((flags & DTT_BYTES) && !dtt_partial_mask(m->nd, src) && !dtt_partial_mask(m->nd, dst)) {
            int64_t want;
            dtt_ref_layout(m->nd, m->shape, m->coord, ndim, shape, dst, dls, dlo);
            want = (dtt_numel(ndim, dls) - dtt_box_overlap(ndim, dls, dlo, ls, lo)) * (int64_t)es;
            if (st.bytes_recv != (uint64_t)want)
                dtt_fail(file, line, "bytes_recv == lower bound", "bytes_recv %llu, lower bound %lld (calls %llu, sent %llu)",
                         (unsigned long long)st.bytes_recv, (long long)want, (unsigned long long)st.calls,
                         (unsigned long long)st.bytes_sent);
        }
        if (!(flags & DTT_NOGATHER)) dtt_check_gather_at(file, line, b, t, ndim, shape, "dest");
        if (dtt_partial_mask(m->nd, dst)) {
            dt_placement rep[DT_MAX_MESH_DIMS];
            dt_tensor *c = NULL;
            dtt_model mr;
            memset(rep, 0, sizeof rep);
            CHECK_OK(dt_tensor_redistribute(b, rep, &c));
            mr = dtt_model_after(md, m->nd, dst, rep);
            if (c) dtt_check_tensor_at(file, line, m, c, t, ndim, shape, rep, &mr, "dest->R");
            dt_tensor_destroy(c);
        }
    }
    dt_tensor_destroy(b);
    dt_tensor_destroy(a);
    free(buf);
    free(saved);
}


/* ------------------------------------------------------------ ops: tensors from full arrays

   For the op tests: build a distributed tensor from a full global array of
   doubles (each value exactly representable in the dtype), and gather one
   back as doubles. Partial placements get real parts (different local
   values per rank): all Partial mesh dims of one tensor use one reduce op;
   the parts are indexed row-major over those dims' coordinates. */

/* part p (of n) of the value v of global element g under Partial(op):
   SUM parts add up to v, AVG parts average to v, MAX/MIN: v on part g % n,
   smaller (larger) values elsewhere. unit: the step of the small terms
   (1 for integers; small multiples of it keep every part exact) */
static inline double dtt_part_d(dt_reduce op, double v, int64_t g, int p, int n, double unit)
{
    double s = 0;
    int q;
    if (n <= 1) return v;
    switch (op) {
    case DT_SUM:
    case DT_AVG:
        if (p > 0) return (op == DT_AVG ? v : 0.0) + (double)dtt_small(DT_F64, g, p) * unit;
        for (q = 1; q < n; q++) s += (double)dtt_small(DT_F64, g, q) * unit;
        return v - s;
    case DT_MAX: return p == (int)(g % n) ? v : v - (double)(1 + (g + p) % 3) * unit;
    case DT_MIN: return p == (int)(g % n) ? v : v + (double)(1 + (g + p) % 3) * unit;
    }
    return v;
}

/* the Partial parts of a placement tuple: their count and this rank's index */
static inline int dtt_part_index(const dtt_mesh *m, const dt_placement *pl, int *nparts, dt_reduce *op)
{
    int k, p = 0, n = 1;
    *op = DT_SUM;
    for (k = 0; k < m->nd; k++)
        if (pl[k].kind == DT_PARTIAL) {
            p = p * m->shape[k] + m->coord[k];
            n *= m->shape[k];
            *op = (dt_reduce)pl[k].reduce;
        }
    *nparts = n;
    return p;
}

/* a tensor with the global values full[] (row-major), placements pl, local
   layout from the independent reference (dtt_ref_layout); NULL on failure
   (counted) */
static inline dt_tensor *dtt_from_full(const dtt_mesh *m, dt_dtype t, int ndim, const int64_t *shape,
                                       const dt_placement *pl, const double *full, double unit)
{
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], n, i;
    dt_tensor_desc d;
    dt_tensor *x = NULL;
    dt_reduce op;
    int np, p = dtt_part_index(m, pl, &np, &op);
    void *buf;
    dtt_ref_layout(m->nd, m->shape, m->coord, ndim, shape, pl, ls, lo);
    n = dtt_numel(ndim, ls);
    buf = dtt_malloc((size_t)n * dtt_size(t));
    for (i = 0; i < n; i++) {
        int64_t g = dtt_gidx(ndim, shape, ls, lo, i);
        double v = dtt_part_d(op, full[g], g, p, np, unit);
        if (t == DT_I64) {
            int64_t iv = (int64_t)v;
            memcpy((unsigned char *)buf + 8 * (size_t)i, &iv, 8);
        } else dtt_store_d(t, buf, (size_t)i, v);
    }
    d = dtt_desc(t, ndim, shape, m->nd, pl);
    CHECK_OK(dt_tensor_from_local(m->mesh, &d, buf, DT_COPY, &x));
    free(buf);
    return x;
}

/* dt_tensor_gather of x as doubles (numel elements); returns the status */
static inline dt_status dtt_gather_full(const dt_tensor *x, double *full)
{
    const dt_tensor_desc *d = dt_tensor_get_desc(x);
    int64_t n, i;
    void *buf;
    dt_status st;
    if (!d) return DT_ERR_ARG;
    n = dtt_numel(d->ndim, d->shape);
    buf = dtt_malloc((size_t)n * dtt_size(d->dtype));
    st = dt_tensor_gather(x, buf);
    for (i = 0; i < n && st == DT_OK; i++) full[i] = dtt_load_d(d->dtype, buf, (size_t)i);
    free(buf);
    return st;
}

/* the local shape and offset of x agree with the reference layout of its own
   descriptor's placements; returns the failures found */
static inline int dtt_check_own_layout(const dtt_mesh *m, const dt_tensor *x, const char *what)
{
    const dt_tensor_desc *d = dt_tensor_get_desc(x);
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], gls[DT_MAX_DIMS], glo[DT_MAX_DIMS];
    int k, before = dtt_failures;
    if (!d) {
        CHECK(0, "%s: no descriptor", what);
        return 1;
    }
    dtt_ref_layout(m->nd, m->shape, m->coord, d->ndim, d->shape, d->placements, ls, lo);
    dt_tensor_local_shape(x, gls);
    dt_tensor_local_offset(x, glo);
    for (k = 0; k < d->ndim; k++)
        CHECK(gls[k] == ls[k] && glo[k] == lo[k], "%s: local dim %d shape %lld offset %lld, want %lld %lld", what, k,
              (long long)gls[k], (long long)glo[k], (long long)ls[k], (long long)lo[k]);
    CHECK(dt_tensor_local_numel(x) == (size_t)dtt_numel(d->ndim, ls), "%s: local_numel %zu", what,
          dt_tensor_local_numel(x));
    CHECK(dt_tensor_mesh(x) == m->mesh, "%s: not on the mesh", what);
    for (k = m->nd; k < DT_MAX_MESH_DIMS; k++)
        CHECK(d->placements[k].kind == 0, "%s: placement past the mesh's dims set", what);
    return dtt_failures - before;
}

/* ------------------------------------------------------------ ops: expected placements, tolerant compare

   DTT_ANYPL in an expected placement tuple: that mesh dim is not asserted;
   DTT_NOTP: any placement but Partial; DTT_NOTS(d): neither Partial nor
   Shard(d) (d normalised). Mesh dims of one rank are not asserted: every
   choice costs nothing there, so the table order decides. */
#define DTT_ANYPL 200
#define DTT_NOTP 201
#define DTT_NOTS 202
static inline dt_placement dtt_pl_any(void) { dt_placement p; p.kind = DTT_ANYPL; p.dim = 0; p.reduce = 0; return p; }
static inline dt_placement dtt_pl_notp(void) { dt_placement p; p.kind = DTT_NOTP; p.dim = 0; p.reduce = 0; return p; }
static inline dt_placement dtt_pl_nots(int d) { dt_placement p; p.kind = DTT_NOTS; p.dim = (int8_t)d; p.reduce = 0; return p; }

/* the descriptor of x has the placements `want` (see DTT_ANYPL...); returns failures */
#define dtt_expect_pl(m, x, want, what) dtt_expect_pl_at(__FILE__, __LINE__, m, x, want, what)
static inline int dtt_expect_pl_at(const char *file, int line, const dtt_mesh *m, const dt_tensor *x,
                                   const dt_placement *want, const char *what)
{
    const dt_tensor_desc *d = x ? dt_tensor_get_desc(x) : NULL;
    char s1[96], s2[96];
    int k, bad = 0;
    if (!d) {
        dtt_fail(file, line, what, "no tensor / descriptor");
        return 1;
    }
    for (k = 0; k < m->nd; k++) {
        dt_placement g = d->placements[k], w = want[k];
        if (w.kind == DTT_ANYPL || m->shape[k] == 1) continue;
        if (w.kind == DTT_NOTP) { bad |= g.kind == DT_PARTIAL; continue; }
        if (w.kind == DTT_NOTS) { bad |= g.kind == DT_PARTIAL || (g.kind == DT_SHARD && g.dim == w.dim); continue; }
        if (g.kind != w.kind) bad = 1;
        else if (g.kind == DT_SHARD && g.dim != dtt_norm_dim(w.dim, d->ndim)) bad = 1;
        else if (g.kind == DT_PARTIAL && g.reduce != w.reduce) bad = 1;
    }
    if (bad) {
        static const char *red[] = { "sum", "avg", "max", "min" };
        size_t o = 0;
        s2[0] = 0;
        for (k = 0; k < m->nd && o < sizeof s2; k++) {
            dt_placement w = want[k];
            const char *sep = k ? "," : "";
            if (w.kind == DTT_ANYPL) o += (size_t)snprintf(s2 + o, sizeof s2 - o, "%s*", sep);
            else if (w.kind == DTT_NOTP) o += (size_t)snprintf(s2 + o, sizeof s2 - o, "%s!P", sep);
            else if (w.kind == DTT_NOTS) o += (size_t)snprintf(s2 + o, sizeof s2 - o, "%s!P!S%d", sep, w.dim);
            else if (w.kind == DT_SHARD) o += (size_t)snprintf(s2 + o, sizeof s2 - o, "%sS%d", sep, w.dim);
            else if (w.kind == DT_PARTIAL) o += (size_t)snprintf(s2 + o, sizeof s2 - o, "%sP%s", sep, red[w.reduce & 3]);
            else o += (size_t)snprintf(s2 + o, sizeof s2 - o, "%sR", sep);
        }
        dtt_fail(file, line, what, "output placements %s, want [%s]", dtt_pl_str(d->placements, m->nd, s1, sizeof s1),
                 s2);
    }
    return bad;
}

/* relative tolerance for results in dtype t computed from exact inputs */
static inline double dtt_rtol(dt_dtype t)
{
    return t == DT_F64 ? 1e-12 : t == DT_F32 ? 2e-5 : t == DT_F16 ? 6e-3 : t == DT_BF16 ? 3e-2 : 0.0;
}

/* got[i] vs want[i], i < n: integers exactly; floats within
   rtol * (|want| + mag[i]) + atol (mag may be NULL: the size of the terms a
   sum was made of), NaN matches NaN, an infinity only the same infinity.
   Reports the first mismatch; returns the number of mismatches. */
#define dtt_cmp(what, t, n, got, want, mag, rtol, atol) \
    dtt_cmp_at(__FILE__, __LINE__, what, t, n, got, want, mag, rtol, atol)
static inline int64_t dtt_cmp_at(const char *file, int line, const char *what, dt_dtype t, int64_t n,
                                 const double *got, const double *want, const double *mag, double rtol, double atol)
{
    int64_t i, bad = 0;
    for (i = 0; i < n; i++) {
        double g = got[i], w = want[i];
        int ok;
        if (!dtt_is_float(t)) ok = g == w;
        else if (w != w) ok = g != g;
        else if (isinf(w)) ok = g == w;
        else ok = fabs(g - w) <= rtol * (fabs(w) + (mag ? mag[i] : 0.0)) + atol;
        if (!ok) {
            if (!bad)
                dtt_fail(file, line, what, "element %lld of %lld: got %.17g want %.17g (%s)", (long long)i,
                         (long long)n, g, w, dtt_dtname(t));
            bad++;
        }
    }
    return bad;
}

/* ------------------------------------------------------------ ops: small utilities */

/* a copy of x's local data (to check later that an input or a refused *out was not touched) */
static inline void *dtt_save_local(const dt_tensor *x)
{
    size_t n = x && dt_tensor_get_desc(x) ? dt_tensor_local_numel(x) * dtt_size(dt_tensor_get_desc(x)->dtype) : 0;
    void *p = dtt_malloc(n);
    if (n) memcpy(p, dt_tensor_data(x), n);
    return p;
}
static inline int dtt_same_local(const dt_tensor *x, const void *saved)
{
    size_t n = x && dt_tensor_get_desc(x) ? dt_tensor_local_numel(x) * dtt_size(dt_tensor_get_desc(x)->dtype) : 0;
    return n == 0 || memcmp(dt_tensor_data(x), saved, n) == 0;
}

/* `name` occurs in s as a word (not inside an identifier) */
static inline int dtt_has_word(const char *s, const char *name)
{
    size_t l = strlen(name);
    const char *p = s;
    while ((p = strstr(p, name)) != NULL) {
        int before = p == s || !((p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z') ||
                                 (p[-1] >= '0' && p[-1] <= '9') || p[-1] == '_');
        char c = p[l];
        int after = !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_');
        if (before && after) return 1;
        p++;
    }
    return 0;
}

/* a draw in [0, 1), identical on every rank for the same rng state */
static inline double dtt_frand(dtt_rng *r) { return (double)(dtt_next(r) >> 11) / 9007199254740992.0; }

/* room for n doubles (one spare, so n may be 0) */
static inline double *dtt_alloc_d(int64_t n) { return (double *)dtt_malloc(sizeof(double) * (size_t)(n + 1)); }

/* the value x stored in dtype t and read back (what a kernel writing t returns) */
static inline double dtt_round_to(dt_dtype t, double x)
{
    unsigned char b[8];
    if (!dtt_is_float(t)) return x;
    dtt_store_d(t, b, 0, x);
    return dtt_load_d(t, b, 0);
}

/* ------------------------------------------------------------ ops: placement sweeps */

/* a dtype t tensor can be split into Partial(r) parts (U8 only under MAX and MIN) */
static inline int dtt_can_partial(dt_dtype t, dt_reduce r) { return t != DT_U8 || r == DT_MAX || r == DT_MIN; }

/* the number of placement options per mesh dim for an ndim tensor (see dtt_opt) */
static inline int dtt_nopts(int ndim) { return 5 + ndim; }

/* placement option i for an ndim tensor: R, S(0..ndim-1), P(SUM), P(AVG), P(MAX), P(MIN) */
static inline dt_placement dtt_opt(int i, int ndim)
{
    if (i == 0) return dt_replicate();
    if (i <= ndim) return dt_shard(i - 1);
    return dt_partial((dt_reduce)(i - ndim - 1));
}

/* a placement tuple is usable: all Partial mesh dims share one op, and the dtype can be split */
static inline int dtt_pl_ok(int nd, const dt_placement *pl, dt_dtype t)
{
    int k, op = -1;
    for (k = 0; k < nd; k++)
        if (pl[k].kind == DT_PARTIAL) {
            if (op >= 0 && op != pl[k].reduce) return 0;
            op = pl[k].reduce;
            if (!dtt_can_partial(t, (dt_reduce)op)) return 0;
        }
    return 1;
}

/* placement tuple number idx (0 .. dtt_nopts(ndim)^nd - 1) on an nd-dim mesh, the last mesh dim fastest;
   pl (DT_MAX_MESH_DIMS entries) is zeroed first */
static inline void dtt_pl_of(int idx, int nd, int ndim, dt_placement *pl)
{
    int k;
    memset(pl, 0, sizeof(dt_placement) * DT_MAX_MESH_DIMS);
    for (k = nd - 1; k >= 0; k--) {
        pl[k] = dtt_opt(idx % dtt_nopts(ndim), ndim);
        idx /= dtt_nopts(ndim);
    }
}

/* the op tests' mesh sweep: fn(mesh, frac, rng, rot) on the 1-D mesh of all ranks with frac f1, then on each
   2-D factorisation (Nx1 / 1xN only the first when there are others; only the middle one under dtt_quick) with
   frac f2, times thin where a side is 1; one rng (seeded with seed) and one rotation (from rot) run through all */
static inline void dtt_sweep_meshes(dt_comm *comm, void (*fn)(const dtt_mesh *, double, dtt_rng *, long *),
                                    uint64_t seed, long rot, double f1, double f2, double thin)
{
    int fac[64 * DT_MAX_MESH_DIMS], nf, f;
    dtt_rng rng;
    dtt_mesh m;
    int one[1];
    rng.s = seed;
    one[0] = dtt_np;
    if (dtt_mesh_open(&m, comm, 1, one)) {
        fn(&m, f1, &rng, &rot);
        dtt_mesh_close(&m);
    }
    nf = dtt_factorizations(dtt_np, 2, fac, 64);
    for (f = 0; f < nf; f++) {
        int *sh = &fac[f * DT_MAX_MESH_DIMS];
        if ((sh[0] == 1 || sh[1] == 1) && nf > 2 && f != 0) continue;
        if (dtt_quick && f != nf / 2) continue;
        if (!dtt_mesh_open(&m, comm, 2, sh)) continue;
        fn(&m, f2 * (sh[0] == 1 || sh[1] == 1 ? thin : 1.0), &rng, &rot);
        dtt_mesh_close(&m);
    }
}

/* ------------------------------------------------------------ ops: reference matmul */

/* torch.matmul on full row-major arrays (1-D operands, batch broadcasting): out (may be NULL: shape only) gets
   the result, ondim/osh its shape; returns 0 (and sets nothing) if the shapes do not fit */
static inline int dtt_ref_matmul(const double *a, int an, const int64_t *ash, const double *b, int bn,
                                 const int64_t *bsh, double *out, int *ondim, int64_t *osh)
{
    int64_t ash2[DT_MAX_DIMS + 1], bsh2[DT_MAX_DIMS + 1], bat[DT_MAX_DIMS], m, k, n, nb, i, j, l, bi;
    int an2 = an, bn2 = bn, nbat, d, a1 = an == 1, b1 = bn == 1;
    if (an < 1 || bn < 1) return 0;
    for (d = 0; d < an; d++) ash2[d + a1] = ash[d];
    for (d = 0; d < bn; d++) bsh2[d] = bsh[d];
    if (a1) { ash2[0] = 1; an2 = 2; }
    if (b1) { bsh2[1] = 1; bn2 = 2; }
    m = ash2[an2 - 2];
    k = ash2[an2 - 1];
    n = bsh2[bn2 - 1];
    if (bsh2[bn2 - 2] != k) return 0;
    nbat = (an2 > bn2 ? an2 : bn2) - 2;
    for (d = 0; d < nbat; d++) { /* right-aligned broadcast */
        int da = d - (nbat - (an2 - 2)), db = d - (nbat - (bn2 - 2));
        int64_t x = da >= 0 ? ash2[da] : 1, y = db >= 0 ? bsh2[db] : 1;
        if (x != y && x != 1 && y != 1) return 0;
        bat[d] = x == 1 ? y : x;
    }
    nb = dtt_numel(nbat, bat);
    for (bi = 0; bi < nb && out; bi++) {
        int64_t rem = bi, ia = 0, ib = 0, sa = 1, sb = 1;
        for (d = nbat - 1; d >= 0; d--) {
            int64_t c = rem % bat[d];
            int da = d - (nbat - (an2 - 2)), db = d - (nbat - (bn2 - 2));
            rem /= bat[d];
            if (da >= 0) { ia += (ash2[da] == 1 ? 0 : c) * sa; sa *= ash2[da]; }
            if (db >= 0) { ib += (bsh2[db] == 1 ? 0 : c) * sb; sb *= bsh2[db]; }
        }
        for (i = 0; i < m; i++)
            for (j = 0; j < n; j++) {
                double s = 0;
                for (l = 0; l < k; l++) s += a[ia * m * k + i * k + l] * b[ib * k * n + l * n + j];
                out[bi * m * n + i * n + j] = s;
            }
    }
    *ondim = 0;
    for (d = 0; d < nbat; d++) osh[(*ondim)++] = bat[d];
    if (!a1) osh[(*ondim)++] = m;
    if (!b1) osh[(*ondim)++] = n;
    return 1;
}

/* ------------------------------------------------------------ ops: test setup */

/* the op tests' seed: dflt, else DT_TEST_SEED, else --seed N (the last one given wins) */
static inline uint64_t dtt_seed(int argc, char **argv, uint64_t dflt)
{
    int i;
    const char *s = getenv("DT_TEST_SEED");
    uint64_t seed = dflt;
    if (s) seed = strtoull(s, NULL, 10);
    for (i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--seed") == 0) seed = strtoull(argv[i + 1], NULL, 10);
    return seed;
}

/* the hash behind the op tests' closed-form values: element g, input / salt `salt` */
static inline uint64_t dtt_mix(int64_t g, int salt)
{
    uint64_t u = (uint64_t)g * 2654435761u + (uint64_t)salt * 977u + 13u;
    u ^= u >> 15;
    u *= 0x2C1B3C6Dull;
    u ^= u >> 12;
    return u;
}

/* the op tests' value domains: any sign, positive (log, sqrt, division), small (|v| <= 1 in floats) */
enum { DTT_DOM_ANY, DTT_DOM_POS, DTT_DOM_SMALL };

/* a float value of domain dom from the hash u: a multiple of 1/4, exact in every float dtype */
static inline double dtt_val_float(int dom, uint64_t u)
{
    if (dom == DTT_DOM_POS) return 1.0 + (double)(u % 29) * 0.25;    /* [1, 8]      */
    if (dom == DTT_DOM_SMALL) return ((double)(u % 9) - 4.0) * 0.25; /* [-1, 1]     */
    return ((double)(u % 61) - 30.0) * 0.25;                         /* [-7.5, 7.5] */
}

/* a signed integer value from the hash u: [-100, 100], I64 ones also past 32 bits */
static inline double dtt_val_int(dt_dtype t, uint64_t u)
{
    if (t == DT_I64) return (double)((int64_t)(u % 201) - 100) + (double)((int64_t)((u >> 20) % 5) - 2) * 8589934592.0;
    return (double)((int64_t)(u % 201) - 100);
}

/* the step of the dtt_val_float / dtt_val_int values: 1/4 in every float dtype, 1 in integers */
static inline double dtt_val_unit(dt_dtype t) { return dtt_is_float(t) ? 0.25 : 1.0; }

/* a tensor on m, placements p0 then Replicate, element g = f(t, dom, salt, g) (a test's value generator) */
static inline dt_tensor *dtt_mk_val(const dtt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, dt_placement p0,
                                    double (*f)(dt_dtype, int, int, int64_t), int dom, int salt)
{
    dt_placement pl[DT_MAX_MESH_DIMS];
    int64_t n = dtt_numel(ndim, shape), i;
    double *full = dtt_alloc_d(n);
    dt_tensor *x;
    memset(pl, 0, sizeof pl);
    pl[0] = p0;
    for (i = 0; i < n; i++) full[i] = f(t, dom, salt, i);
    x = dtt_from_full(m, t, ndim, shape, pl, full, dtt_val_unit(t));
    free(full);
    return x;
}

/* *out reuse over repeated calls: the first call (first) records its *out and buffer in *out0 and *data0;
   a later one must return the same tensor and, when it holds elements, the same buffer */
#define dtt_check_reuse(first, out, out0, data0) dtt_check_reuse_at(__FILE__, __LINE__, first, out, out0, data0)
static inline void dtt_check_reuse_at(const char *file, int line, int first, dt_tensor *out, dt_tensor **out0,
                                      void **data0)
{
    if (first) {
        *out0 = out;
        *data0 = out ? dt_tensor_data(out) : NULL;
        return;
    }
    if (out != *out0) dtt_fail(file, line, "out == out0", "*out must stay the same tensor");
    if (out && dt_tensor_local_numel(out) != 0 && dt_tensor_data(out) != *data0)
        dtt_fail(file, line, "dt_tensor_data(out) == data0", "the buffer must be reused");
}

/* the bad-input tests' meshes: m 1-D over all ranks, m2 1 x all ranks; 0 (neither left open) if one fails */
static inline int dtt_open_1d_2d(dtt_mesh *m, dtt_mesh *m2, dt_comm *comm)
{
    int one[1], two[2];
    one[0] = dtt_np;
    if (!dtt_mesh_open(m, comm, 1, one)) return 0;
    two[0] = 1;
    two[1] = dtt_np;
    if (!dtt_mesh_open(m2, comm, 2, two)) {
        dtt_mesh_close(m);
        return 0;
    }
    return 1;
}

#ifndef DTENSOR_NO_MPI
/* a dt_comm_desc.sendrecv over the MPI_Comm *user: MPI_Sendrecv of bytes, a negative rank sends or receives
   nothing (MPI_PROC_NULL) */
static inline dt_status dtt_mpi_sendrecv(void *user, const void *sb, size_t sn, int dest, void *rb, size_t rn, int src,
                                         int tag)
{
    MPI_Comm c = *(MPI_Comm *)user;
    int rc = MPI_Sendrecv(sb, (int)sn, MPI_BYTE, dest >= 0 ? dest : MPI_PROC_NULL, tag, rb, (int)rn, MPI_BYTE,
                          src >= 0 ? src : MPI_PROC_NULL, tag, c, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? DT_OK : DT_ERR_COMM;
}

/* a dt_comm_custom "p2p" with only sendrecv (dtt_mpi_sendrecv) over *dup, an MPI_Comm the caller
   duplicated and frees after the comm; NULL on failure (counted) */
static inline dt_comm *dtt_p2p_comm(MPI_Comm *dup)
{
    dt_comm_desc cd;
    dt_comm *c = NULL;
    memset(&cd, 0, sizeof cd);
    cd.name = "p2p";
    cd.rank = dtt_rank;
    cd.size = dtt_np;
    cd.user = dup;
    cd.sendrecv = dtt_mpi_sendrecv;
    CHECK_OK(dt_comm_custom(&cd, &c));
    return c;
}

/* DT_TEST_VERBOSE: print (rank 0) the time since *t for part `what`, and restart *t */
static inline void dtt_lap(const char *what, double *t)
{
    double now = MPI_Wtime();
    if (getenv("DT_TEST_VERBOSE") && dtt_rank == 0) fprintf(stderr, "  %-20s %6.2f s\n", what, now - *t);
    *t = now;
}
#endif

#endif /* DT_TEST_H */
