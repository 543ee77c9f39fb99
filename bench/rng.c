/* bench/rng.c -- dtensor.h's random fills against Random123's philox4x32
   in a plain loop that produces the same values, on one rank.

       make bench-rng                          (this bench + its callgrind counts -> bench/results/rng.txt)
       mpiexec -n 1 ./build/mpich/bench_rng [--sizes "65536 16777216"] [--reps N]
               [--quick] [--callgrind] [--kinds "uniform-f32 uniform-f64 normal-f32 bernoulli-f32 randint-i32"]
       DTENSOR_SIMD=avx2|none mpiexec -n 1 ...   (dtensor.h's narrower generators; bench/run.sh does both)

   Fills (a 1-D tensor of n elements, Replicate, on a mesh of one rank over
   dt_comm_self; the call writes the tensor in place):

     uniform  F32  dt_uniform_(t, 0, 1)     the fast path: u24 = (w >> 8) * 2^-24
     uniform  F64  dt_uniform_(t, 0, 1)     u53 of the element's two words
     normal   F32  dt_normal_(t, 0, 1)      Box-Muller on word pairs, float math
     bernoulli F32 dt_bernoulli_(t, 0.3)    1 if u24 < 0.3
     randint  I32  dt_randint_(t, 0, 1000)  Lemire's multiply, rejection redraws

   The peer: Random123's own philox4x32 (Philox4x32-10, <Random123/philox.h>,
   Debian librandom123-dev) in a plain C loop over blocks, with the stream
   mapping that dtensor.h documents (its "random numbers" API block): key =
   (seed lo, seed hi), counter = (b lo, b hi, 0, 0) for block b = position/4,
   the same values at the same stream offset (read with dt_rng_get_state
   before the fill). The peer writes its own buffer of the same size.

   Checks: before the timing, every fill is compared with the peer at odd
   sizes (tails), at a stream offset past 2^34 words (counter word 1 != 0), a
   seed with both key words non-zero, and extra bounds (uniform(-2, 3),
   bernoulli(0) and (1), randint ranges with many rejections); the warm-up of
   every timed size is compared too, and the mesh's offset must advance by
   w*n rounded up to a multiple of 4. Uniform, bernoulli and randint must be
   bit for bit identical; normal uses libm's logf/sqrtf/cosf/sinf in the peer,
   so its difference is reported in ulp (it fails only beyond 1e-4 absolute).
   The bench prints "values: identical" and exits 0, or prints what differs
   and exits 1.

   Time: clock_gettime(CLOCK_MONOTONIC) around `inner` back-to-back fills
   (inner = 2^22 / n, at least 1; 2^18 / n with --quick), the median over
   --reps repetitions (default 11, at least 7), ours and the peer alternating
   (ours, peer, ours, peer, ...) after the warm-up. GB/s = bytes of the
   tensor / time per fill; ratio = peer time / our time (> 1: ours faster);
   "min" = the same ratio of the fastest repetitions. memset rows: memset of
   a buffer of the same bytes, the write-bandwidth bound.

   --callgrind (under valgrind --tool=callgrind; bench/run.sh does it): for
   each fill, n = 2^20 elements (or --sizes' first), after a warm-up, one
   fill by ours and one by the peer, each in its own non-inlined function
   (cg_ours / cg_peer) and bracketed by CALLGRIND_ZERO_STATS /
   CALLGRIND_DUMP_STATS_AT("ours_uniform_f32") etc., so each dump's total
   divided by n is the instructions per element of that side. */
#define _GNU_SOURCE 1
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "bench/bench.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <valgrind/callgrind.h>
#include <Random123/philox.h>

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#define ALWAYS_INLINE inline __attribute__((always_inline))
/* the compiler must assume *p is read here: no store to it is dropped */
#define KEEP(p) __asm__ __volatile__("" : : "r"(p) : "memory")
#else
#define NOINLINE
#define ALWAYS_INLINE inline
#define KEEP(p) ((void)(p))
#endif

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------ the fills */

enum { K_UNIF_F32, K_UNIF_F64, K_NORMAL_F32, K_BERN_F32, K_RANDINT_I32, NK };

typedef struct {
    const char *name, *dt, *call;
    dt_dtype dtype;
    int size;  /* bytes per element */
    int words; /* stream words per element */
    int exact; /* 0: compare in ulp (normal) */
} kind_info;

static const kind_info kinds[NK] = {
    { "uniform", "f32", "dt_uniform_(t, 0, 1)", DT_F32, 4, 1, 1 },
    { "uniform", "f64", "dt_uniform_(t, 0, 1)", DT_F64, 8, 2, 1 },
    { "normal", "f32", "dt_normal_(t, 0, 1)", DT_F32, 4, 1, 0 },
    { "bernoulli", "f32", "dt_bernoulli_(t, 0.3)", DT_F32, 4, 1, 1 },
    { "randint", "i32", "dt_randint_(t, 0, 1000)", DT_I32, 4, 1, 1 },
};

/* the parameters of a fill: the timed ones are the defaults of kinds[] */
typedef struct {
    double a, b;      /* uniform lo, hi; normal mean, std; bernoulli p */
    int64_t lo, hi;   /* randint */
} params;

static params default_params(int k) {
    params p = { 0, 1, 0, 1000 };
    if (k == K_BERN_F32) p.a = 0.3;
    return p;
}

static void ours(int k, dt_tensor *t, params p) {
    switch (k) {
    case K_UNIF_F32: case K_UNIF_F64: CHECK(dt_uniform_(t, p.a, p.b)); break;
    case K_NORMAL_F32: CHECK(dt_normal_(t, p.a, p.b)); break;
    case K_BERN_F32: CHECK(dt_bernoulli_(t, p.a)); break;
    default: CHECK(dt_randint_(t, p.lo, p.hi)); break;
    }
}

/* ---------------------------------------------- the peer: Random123 loops */

static philox4x32_key_t key_of(uint64_t seed) {
    philox4x32_key_t k = {{ (uint32_t)seed, (uint32_t)(seed >> 32) }};
    return k;
}

/* inlined like Random123's philox4x32 itself: the loops are plain loops */
static ALWAYS_INLINE philox4x32_ctr_t block(uint64_t b, uint32_t w2, philox4x32_key_t k) {
    philox4x32_ctr_t c = {{ (uint32_t)b, (uint32_t)(b >> 32), w2, 0 }};
    return philox4x32(c, k);
}

static ALWAYS_INLINE float u24(uint32_t w) { return (float)(w >> 8) * 0x1p-24f; }
static ALWAYS_INLINE double u53(uint32_t w0, uint32_t w1) {
    return (double)((((uint64_t)w1 << 32) | w0) >> 11) * 0x1p-53;
}

/* uniform [lo, hi) in double, rounded to float; a result that rounds up to hi
   is stepped down one ulp (lo = 0, hi = 1: exactly u24) */
static float unif_f32(float u, double lo, double hi) {
    float f = (float)(lo + (hi - lo) * (double)u), fh = (float)hi;
    return f >= fh ? nextafterf(fh, -INFINITY) : f;
}
static double unif_f64(double u, double lo, double hi) {
    double d = lo + (hi - lo) * u;
    return d >= hi ? nextafter(hi, -INFINITY) : d;
}

/* The stream offset `off` is a multiple of 4 (the library rounds every
   advance up to one), so element i of an F32/I32 fill is word i % 4 of
   block off/4 + i/4, and an F64 element takes two words of a block. */
static void peer_uniform_f32(float *y, int64_t n, uint64_t seed, uint64_t off, params p) {
    philox4x32_key_t k = key_of(seed);
    uint64_t b = off / 4;
    int64_t i = 0;
    if (p.a == 0 && p.b == 1) {
        for (; i + 4 <= n; i += 4, b++) {
            philox4x32_ctr_t r = block(b, 0, k);
            y[i] = u24(r.v[0]);
            y[i + 1] = u24(r.v[1]);
            y[i + 2] = u24(r.v[2]);
            y[i + 3] = u24(r.v[3]);
        }
        if (i < n) {
            philox4x32_ctr_t r = block(b, 0, k);
            for (int j = 0; i < n; i++, j++) y[i] = u24(r.v[j]);
        }
        return;
    }
    for (; i < n; i += 4, b++) {
        philox4x32_ctr_t r = block(b, 0, k);
        for (int j = 0; j < 4 && i + j < n; j++) y[i + j] = unif_f32(u24(r.v[j]), p.a, p.b);
    }
}

static void peer_uniform_f64(double *y, int64_t n, uint64_t seed, uint64_t off, params p) {
    philox4x32_key_t k = key_of(seed);
    uint64_t b = off / 4;
    int64_t i = 0;
    if (p.a == 0 && p.b == 1) {
        for (; i + 2 <= n; i += 2, b++) {
            philox4x32_ctr_t r = block(b, 0, k);
            y[i] = u53(r.v[0], r.v[1]);
            y[i + 1] = u53(r.v[2], r.v[3]);
        }
        if (i < n) {
            philox4x32_ctr_t r = block(b, 0, k);
            y[i] = u53(r.v[0], r.v[1]);
        }
        return;
    }
    for (; i + 2 <= n; i += 2, b++) {
        philox4x32_ctr_t r = block(b, 0, k);
        y[i] = unif_f64(u53(r.v[0], r.v[1]), p.a, p.b);
        y[i + 1] = unif_f64(u53(r.v[2], r.v[3]), p.a, p.b);
    }
    if (i < n) {
        philox4x32_ctr_t r = block(b, 0, k);
        y[i] = unif_f64(u53(r.v[0], r.v[1]), p.a, p.b);
    }
}

/* The loops below compute the 4 values of a block into v[] with a fixed
   inner loop and copy them out (all 4, or the tail's n - i). */

/* pairs (2k, 2k+1): u1 from element 2k's word, u2 from 2k+1's, float math */
static void peer_normal_f32(float *y, int64_t n, uint64_t seed, uint64_t off, params p) {
    philox4x32_key_t k = key_of(seed);
    uint64_t b = off / 4;
    const float two_pi = (float)(2 * M_PI);
    for (int64_t i = 0; i < n; i += 4, b++) {
        philox4x32_ctr_t r = block(b, 0, k);
        float v[4];
        for (int j = 0; j < 4; j += 2) {
            float u1 = u24(r.v[j]), u2 = u24(r.v[j + 1]);
            float rad = sqrtf(-2.0f * logf(1.0f - u1));
            v[j] = rad * cosf(two_pi * u2);
            v[j + 1] = rad * sinf(two_pi * u2);
        }
        if (p.a != 0 || p.b != 1)
            for (int j = 0; j < 4; j++) v[j] = (float)(p.a + p.b * (double)v[j]);
        memcpy(y + i, v, sizeof(float) * (size_t)(n - i < 4 ? n - i : 4));
    }
}

/* 1 if u24 < p: the comparison as documented, in double, no branch */
static void peer_bernoulli_f32(float *y, int64_t n, uint64_t seed, uint64_t off, params p) {
    philox4x32_key_t k = key_of(seed);
    uint64_t b = off / 4;
    for (int64_t i = 0; i < n; i += 4, b++) {
        philox4x32_ctr_t r = block(b, 0, k);
        float v[4];
        for (int j = 0; j < 4; j++) v[j] = (float)((double)u24(r.v[j]) < p.a);
        memcpy(y + i, v, sizeof(float) * (size_t)(n - i < 4 ? n - i : 4));
    }
}

/* lo + floor(x * R / 2^32) with Lemire's rejection: l = low word of x * R;
   while l < (2^32 - R) mod R, redraw x from the same position with counter
   word 2 = 1, 2, ... */
static void peer_randint_i32(int32_t *y, int64_t n, uint64_t seed, uint64_t off, params p) {
    philox4x32_key_t k = key_of(seed);
    uint64_t b = off / 4, R = (uint64_t)(p.hi - p.lo);
    uint32_t t = R == ((uint64_t)1 << 32) ? 0 : (uint32_t)(((uint64_t)1 << 32) - R) % (uint32_t)R;
    for (int64_t i = 0; i < n; i += 4, b++) {
        philox4x32_ctr_t r = block(b, 0, k);
        int32_t v[4];
        for (int j = 0; j < 4; j++) {
            uint64_t m = (uint64_t)r.v[j] * R;
            for (uint32_t w2 = 1; (uint32_t)m < t; w2++) m = (uint64_t)block(b, w2, k).v[j] * R;
            v[j] = (int32_t)(p.lo + (int64_t)(m >> 32));
        }
        memcpy(y + i, v, sizeof(int32_t) * (size_t)(n - i < 4 ? n - i : 4));
    }
}

static void peer(int k, void *y, int64_t n, uint64_t seed, uint64_t off, params p) {
    switch (k) {
    case K_UNIF_F32: peer_uniform_f32((float *)y, n, seed, off, p); break;
    case K_UNIF_F64: peer_uniform_f64((double *)y, n, seed, off, p); break;
    case K_NORMAL_F32: peer_normal_f32((float *)y, n, seed, off, p); break;
    case K_BERN_F32: peer_bernoulli_f32((float *)y, n, seed, off, p); break;
    default: peer_randint_i32((int32_t *)y, n, seed, off, p); break;
    }
}

/* ------------------------------------------------------------ checking */

static int failures, nchecks;
static int64_t normal_max_ulp;
static double normal_max_abs;

static int64_t ordered(float f) {
    int32_t i;
    memcpy(&i, &f, sizeof i);
    return i < 0 ? (int64_t)INT32_MIN - i : i;
}

static dt_mesh *g_mesh;

static dt_tensor *make_tensor(dt_dtype dt, int64_t n) {
    dt_tensor_desc d = {0};
    d.dtype = dt;
    d.ndim = 1;
    d.shape[0] = n;
    d.placements[0] = dt_replicate();
    dt_tensor *t;
    CHECK(dt_tensor_empty(g_mesh, &d, &t));
    return t;
}

/* one fill by ours and by the peer at the same state; compare */
static void check_fill(int k, dt_tensor *t, int64_t n, void *ref, params p, const char *what) {
    const kind_info *ki = &kinds[k];
    uint64_t seed = 0, off = 0, seed2 = 0, off2 = 0;
    CHECK(dt_rng_get_state(g_mesh, &seed, &off));
    ours(k, t, p);
    CHECK(dt_rng_get_state(g_mesh, &seed2, &off2));
    nchecks++;
    uint64_t adv = ((uint64_t)ki->words * (uint64_t)n + 3) / 4 * 4;
    if (seed2 != seed || off2 != off + adv) {
        printf("# FAILED %s %s n=%lld (%s): state (seed %llu, offset %llu) -> (%llu, %llu), expected offset + %llu\n",
               ki->name, ki->dt, (long long)n, what, (unsigned long long)seed, (unsigned long long)off,
               (unsigned long long)seed2, (unsigned long long)off2, (unsigned long long)adv);
        failures++;
    }
    if (off % 4) {
        printf("# FAILED %s %s: stream offset %llu is not a multiple of 4 (the peer assumes it)\n", ki->name,
               ki->dt, (unsigned long long)off);
        failures++;
        return;
    }
    peer(k, ref, n, seed, off, p);
    const void *y = dt_tensor_data(t);
    if (ki->exact) {
        if (memcmp(y, ref, (size_t)n * (size_t)ki->size) == 0) return;
        int64_t i = 0, nd = 0;
        while (memcmp((const char *)y + i * ki->size, (const char *)ref + i * ki->size, (size_t)ki->size) == 0) i++;
        for (int64_t j = 0; j < n; j++)
            nd += memcmp((const char *)y + j * ki->size, (const char *)ref + j * ki->size, (size_t)ki->size) != 0;
        char a[64], b[64];
        if (ki->dtype == DT_F32) {
            snprintf(a, sizeof a, "%.9g", (double)((const float *)y)[i]);
            snprintf(b, sizeof b, "%.9g", (double)((const float *)ref)[i]);
        } else if (ki->dtype == DT_F64) {
            snprintf(a, sizeof a, "%.17g", ((const double *)y)[i]);
            snprintf(b, sizeof b, "%.17g", ((const double *)ref)[i]);
        } else {
            snprintf(a, sizeof a, "%d", (int)((const int32_t *)y)[i]);
            snprintf(b, sizeof b, "%d", (int)((const int32_t *)ref)[i]);
        }
        printf("# FAILED %s %s n=%lld (%s; seed %#llx, offset %llu): %lld of %lld values differ, first at %lld: "
               "ours %s, Random123 %s\n",
               ki->name, ki->dt, (long long)n, what, (unsigned long long)seed, (unsigned long long)off,
               (long long)nd, (long long)n, (long long)i, a, b);
        failures++;
        return;
    }
    /* normal: ulp and absolute difference */
    const float *yf = (const float *)y, *rf = (const float *)ref;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(yf[i]) || !isfinite(rf[i]) || fabs((double)yf[i] - (double)rf[i]) > 1e-4) {
            printf("# FAILED %s %s n=%lld (%s; seed %#llx, offset %llu): element %lld: ours %.9g, Random123 + libm "
                   "%.9g\n",
                   ki->name, ki->dt, (long long)n, what, (unsigned long long)seed, (unsigned long long)off,
                   (long long)i, (double)yf[i], (double)rf[i]);
            failures++;
            return;
        }
        int64_t du = ordered(yf[i]) - ordered(rf[i]);
        if (du < 0) du = -du;
        if (du > normal_max_ulp) normal_max_ulp = du;
        double da = fabs((double)yf[i] - (double)rf[i]);
        if (da > normal_max_abs) normal_max_abs = da;
    }
}

/* odd sizes, a far offset, other parameters */
static void check_all(uint64_t seed) {
    static const int64_t ns[] = { 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 1023, 65536 + 5, 1000003 };
    const int nn = (int)(sizeof ns / sizeof ns[0]);
    int64_t nmax = ns[nn - 1];
    void *ref = xmalloc((size_t)nmax * 8);
    for (int k = 0; k < NK; k++) {
        CHECK(dt_manual_seed(g_mesh, seed));
        for (int far = 0; far < 2; far++) {
            /* far: an offset past 2^34 words, so counter word 1 (block >> 32) is 4 */
            if (far) CHECK(dt_rng_set_state(g_mesh, seed, ((uint64_t)1 << 34) + 4 * 12345));
            for (int s = 0; s < nn; s++) {
                dt_tensor *t = make_tensor(kinds[k].dtype, ns[s]);
                check_fill(k, t, ns[s], ref, default_params(k), far ? "far offset" : "odd sizes");
                dt_tensor_destroy(t);
            }
        }
        /* other parameters, at a few sizes */
        params ps[4];
        int np = 0;
        const char *pn[4];
        if (k == K_UNIF_F32 || k == K_UNIF_F64) {
            ps[np] = default_params(k); ps[np].a = -2; ps[np].b = 3; pn[np++] = "uniform(-2, 3)";
            ps[np] = default_params(k); ps[np].a = 1; ps[np].b = 1.0000002; pn[np++] = "uniform(1, 1.0000002)";
        } else if (k == K_NORMAL_F32) {
            ps[np] = default_params(k); ps[np].a = 3; ps[np].b = 0.5; pn[np++] = "normal(3, 0.5)";
        } else if (k == K_BERN_F32) {
            ps[np] = default_params(k); ps[np].a = 0; pn[np++] = "bernoulli(0)";
            ps[np] = default_params(k); ps[np].a = 1; pn[np++] = "bernoulli(1)";
            ps[np] = default_params(k); ps[np].a = 0.5; pn[np++] = "bernoulli(0.5)";
        } else {
            ps[np] = default_params(k); ps[np].lo = -1000000000; ps[np].hi = 2000000000;
            pn[np++] = "randint(-1e9, 2e9): 30% rejected";
            ps[np] = default_params(k); ps[np].lo = 0; ps[np].hi = 65536; pn[np++] = "randint(0, 2^16)";
            ps[np] = default_params(k); ps[np].lo = -5; ps[np].hi = -4; pn[np++] = "randint(-5, -4)";
            ps[np] = default_params(k); ps[np].lo = INT32_MIN; ps[np].hi = INT32_MAX; pn[np++] = "randint(INT32_MIN, INT32_MAX)";
        }
        for (int q = 0; q < np; q++) {
            static const int64_t qs[] = { 1, 5, 4099, 1000003 };
            for (int s = 0; s < 4; s++) {
                dt_tensor *t = make_tensor(kinds[k].dtype, qs[s]);
                check_fill(k, t, qs[s], ref, ps[q], pn[q]);
                dt_tensor_destroy(t);
            }
        }
    }
    free(ref);
    CHECK(dt_manual_seed(g_mesh, seed));
}

/* ------------------------------------------------------------ timing */

static int reps = 11, quick, use_callgrind;
static int kind_on[NK] = { 1, 1, 1, 1, 1 };

static NOINLINE void cg_ours(int k, dt_tensor *t) { ours(k, t, default_params(k)); }
static NOINLINE void cg_peer(int k, void *y, int64_t n, uint64_t seed, uint64_t off) {
    peer(k, y, n, seed, off, default_params(k));
    KEEP(y);
}

typedef struct { double ours, peer, ours_min, peer_min; } timing;

static timing time_kind(int k, int64_t n, int inner) {
    const kind_info *ki = &kinds[k];
    dt_tensor *t = make_tensor(ki->dtype, n);
    void *ref = xmalloc((size_t)n * (size_t)ki->size);
    params p = default_params(k);
    check_fill(k, t, n, ref, p, "warm-up of the timed size"); /* warm-up: touches both buffers */
    peer(k, ref, n, 1, 0, p);
    ours(k, t, p);
    uint64_t seed = 0, off = 0;
    CHECK(dt_rng_get_state(g_mesh, &seed, &off));
    uint64_t adv = ((uint64_t)ki->words * (uint64_t)n + 3) / 4 * 4;
    double *to = (double *)xmalloc(sizeof(double) * (size_t)reps), *tp = (double *)xmalloc(sizeof(double) * (size_t)reps);
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        for (int i = 0; i < inner; i++) ours(k, t, p);
        to[r] = (now() - t0) / inner;
        t0 = now();
        for (int i = 0; i < inner; i++, off += adv) {
            peer(k, ref, n, seed, off, p);
            KEEP(ref);
        }
        tp[r] = (now() - t0) / inner;
    }
    timing tm;
    tm.ours = median(to, reps);
    tm.peer = median(tp, reps);
    tm.ours_min = to[0];
    tm.peer_min = tp[0];
    free(to);
    free(tp);
    free(ref);
    dt_tensor_destroy(t);
    return tm;
}

static double time_memset(size_t bytes, int inner) {
    unsigned char *buf = (unsigned char *)xmalloc(bytes);
    double *tv = (double *)xmalloc(sizeof(double) * (size_t)reps);
    memset(buf, 1, bytes);
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        for (int i = 0; i < inner; i++) {
            memset(buf, i & 0xff, bytes);
            KEEP(buf);
        }
        tv[r] = (now() - t0) / inner;
    }
    double m = median(tv, reps);
    free(tv);
    free(buf);
    return m;
}

static void run_callgrind(int64_t n) {
    printf("# --callgrind: n = %lld, one fill each side per dump\n", (long long)n);
    for (int k = 0; k < NK; k++) {
        const kind_info *ki = &kinds[k];
        if (!kind_on[k]) continue;
        dt_tensor *t = make_tensor(ki->dtype, n);
        void *ref = xmalloc((size_t)n * (size_t)ki->size);
        check_fill(k, t, n, ref, default_params(k), "callgrind warm-up");
        uint64_t seed = 0, off = 0;
        CHECK(dt_rng_get_state(g_mesh, &seed, &off));
        char name[64];
        snprintf(name, sizeof name, "ours_%s_%s", ki->name, ki->dt);
        CALLGRIND_ZERO_STATS;
        cg_ours(k, t);
        CALLGRIND_DUMP_STATS_AT(name);
        snprintf(name, sizeof name, "peer_%s_%s", ki->name, ki->dt);
        CALLGRIND_ZERO_STATS;
        cg_peer(k, ref, n, seed, off);
        CALLGRIND_DUMP_STATS_AT(name);
        /* the two fills drew the same stream: they must agree */
        if (ki->exact && memcmp(dt_tensor_data(t), ref, (size_t)n * (size_t)ki->size)) {
            printf("# FAILED %s %s: the callgrind fills differ\n", ki->name, ki->dt);
            failures++;
        }
        free(ref);
        dt_tensor_destroy(t);
    }
}

static void compiled_for(char *s, size_t cap) {
    const char *isa = "x86-64 baseline (SSE2)";
#if defined(__AVX512F__)
    isa = "AVX-512F enabled (-march)";
#elif defined(__AVX2__)
    isa = "AVX2 enabled (-march)";
#elif !defined(__x86_64__)
    isa = "not x86-64";
#endif
#if defined(__OPTIMIZE__)
    const char *opt = "optimised";
#else
    const char *opt = "not optimised (-O0)";
#endif
#if defined(__clang__)
    snprintf(s, cap, "clang %s, %s, %s", __VERSION__, opt, isa);
#elif defined(__GNUC__)
    snprintf(s, cap, "gcc %s, %s, %s", __VERSION__, opt, isa);
#else
    snprintf(s, cap, "%s, %s", opt, isa);
#endif
}

/* dtensor.h does not report which Philox generator it runs; it documents
   the rule (ENVIRONMENT: DTENSOR_SIMD, and its generator's comment): the
   widest of AVX-512F / AVX2 / scalar that the CPU has, capped by
   DTENSOR_SIMD=avx2|none (read once); scalar without x86-64 GCC/Clang or
   with DTENSOR_NO_SIMD. The bench applies the same rule. */
static void simd_line(void) {
    const char *cap = getenv("DTENSOR_SIMD"), *path = "scalar";
    int avx2 = 0, avx512 = 0;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(DTENSOR_NO_SIMD)
    __builtin_cpu_init();
    avx2 = __builtin_cpu_supports("avx2") != 0;
    avx512 = __builtin_cpu_supports("avx512f") != 0;
    path = avx512 ? "AVX-512F" : avx2 ? "AVX2" : "scalar";
#endif
    if (cap && (!strcmp(cap, "none") || !strcmp(cap, "0") || !strcmp(cap, "scalar"))) path = "scalar";
    else if (cap && !strcmp(cap, "avx2") && avx512) path = "AVX2";
    printf("# CPU: avx2 %s, avx512f %s; DTENSOR_SIMD=%s -> dtensor.h's Philox generator: %s\n"
           "#      (by the rule dtensor.h documents; the library does not report it)\n",
           avx2 ? "yes" : "no", avx512 ? "yes" : "no", cap && *cap ? cap : "(unset)", path);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int64_t sizes[8] = { (int64_t)1 << 16, (int64_t)1 << 24 };
    int nsizes = 2, sizes_given = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--callgrind")) use_callgrind = 1;
        else if (!strcmp(argv[i], "--kinds") && i + 1 < argc) {
            const char *list = argv[++i];
            int any = 0;
            for (int k = 0; k < NK; k++) {
                char nm[32];
                snprintf(nm, sizeof nm, "%s-%s", kinds[k].name, kinds[k].dt);
                const char *h = strstr(list, nm);
                size_t l = strlen(nm);
                kind_on[k] = h && (h == list || h[-1] == ' ' || h[-1] == ',') &&
                             (h[l] == 0 || h[l] == ' ' || h[l] == ',');
                any |= kind_on[k];
            }
            if (!any) { fprintf(stderr, "--kinds: none of uniform-f32 uniform-f64 normal-f32 bernoulli-f32 randint-i32\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
        } else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            char *s = argv[++i], *e;
            nsizes = 0;
            sizes_given = 1;
            while (nsizes < 8) {
                long long v = strtoll(s, &e, 10);
                if (e == s) break;
                if (v < 1) { fprintf(stderr, "--sizes: sizes must be >= 1\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
                sizes[nsizes++] = v;
                s = e;
            }
            if (!nsizes) { fprintf(stderr, "--sizes: no size given\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
        } else {
            fprintf(stderr, "usage: %s [--sizes \"65536 16777216\"] [--reps N (>= 7)] [--quick] [--callgrind]\n"
                    "       [--kinds \"uniform-f32 uniform-f64 normal-f32 bernoulli-f32 randint-i32\"]\n",
                    argv[0]);
            MPI_Finalize();
            return 2;
        }
    }
    if (nranks != 1) {
        if (rank == 0) fprintf(stderr, "bench_rng runs on one rank (mpiexec -n 1), not %d\n", nranks);
        MPI_Finalize();
        return 2;
    }
    if (reps < 7) reps = 7;
    if (quick && !sizes_given) {
        sizes[0] = (int64_t)1 << 12;
        sizes[1] = (int64_t)1 << 16;
    }
    if (quick) reps = 7;
    int64_t target = quick ? (int64_t)1 << 18 : (int64_t)1 << 22; /* elements per timed sample */

    dt_comm *self;
    CHECK(dt_comm_self(&self));
    dt_mesh_desc md = {0};
    md.ndim = 1;
    md.shape[0] = 1;
    CHECK(dt_mesh_create(self, &md, &g_mesh));
    const uint64_t seed = 0x0123456789abcdefULL; /* both key words non-zero */

    char cc[256];
    compiled_for(cc, sizeof cc);
    printf("# dtensor.h random fills vs Random123 philox4x32 (Philox4x32-10) in a plain loop, same values;\n"
           "# one rank, 1-D tensor [n] Replicate on a mesh of one rank (dt_comm_self), seed %#llx\n",
           (unsigned long long)seed);
    printf("# %s\n", cc);
    simd_line();
    CHECK(dt_manual_seed(g_mesh, seed));
    if (!use_callgrind) { /* under callgrind only the measured fills are compared */
        check_all(seed);
        printf("# checked before timing: %d fills (sizes 1 .. 1000003, offset past 2^34 words, other bounds)%s\n",
               nchecks, failures ? " -- FAILURES above" : ", all agree");
    }
    fflush(stdout);

    if (use_callgrind) {
        run_callgrind(sizes_given ? sizes[0] : (int64_t)1 << 20);
    } else {
        printf("# time: median over %d reps of `inner` back-to-back fills (clock_gettime), ours and the peer "
               "alternating,\n#       after a checked warm-up; GB/s = tensor bytes / time per fill; ratio = peer "
               "time / our time (> 1: ours faster);\n#       min = the ratio of the fastest reps; target: >= 2 "
               "for uniform f32\n",
               reps);
        printf("%-10s %-4s %9s %6s %11s %11s %10s %10s %7s %7s\n", "fill", "type", "n", "inner", "ours ns/el",
               "peer ns/el", "ours GB/s", "peer GB/s", "ratio", "min");
        for (int s = 0; s < nsizes; s++) {
            int64_t n = sizes[s];
            int inner = n >= target ? 1 : (int)(target / n);
            for (int k = 0; k < NK; k++) {
                if (!kind_on[k]) continue;
                timing tm = time_kind(k, n, inner);
                double bytes = (double)n * kinds[k].size;
                printf("%-10s %-4s %9lld %6d %11.3f %11.3f %10.2f %10.2f %7.2f %7.2f\n", kinds[k].name,
                       kinds[k].dt, (long long)n, inner, tm.ours * 1e9 / (double)n, tm.peer * 1e9 / (double)n,
                       bytes / tm.ours * 1e-9, bytes / tm.peer * 1e-9, tm.peer / tm.ours, tm.peer_min / tm.ours_min);
                fflush(stdout);
            }
            for (int sz = 4; sz <= 8; sz += 4) {
                double tmem = time_memset((size_t)n * (size_t)sz, inner);
                printf("%-10s %-4s %9lld %6d %11.3f %11s %10.2f %10s %7s %7s\n", "memset", sz == 4 ? "4 B" : "8 B",
                       (long long)n, inner, tmem * 1e9 / (double)n, "-", (double)n * sz / tmem * 1e-9, "-", "-", "-");
            }
            fflush(stdout);
        }
        for (int k = 0; k < NK; k++)
            if (kind_on[k]) printf("# %-9s %s: %s\n", kinds[k].name, kinds[k].dt, kinds[k].call);
    }
    if (failures) {
        printf("# values: DIFFER -- FAILED (%d of %d checked fills; see above)\n", failures, nchecks);
    } else {
        printf("# values: identical (uniform f32/f64, bernoulli, randint bit for bit in %d checked fills);\n"
               "#   normal f32 against libm logf/sqrtf/cosf/sinf: max %lld ulp, max abs difference %.3g\n",
               nchecks, (long long)normal_max_ulp, normal_max_abs);
    }
    dt_mesh_destroy(g_mesh);
    dt_comm_destroy(self);
    MPI_Finalize();
    return failures ? 1 : 0;
}
