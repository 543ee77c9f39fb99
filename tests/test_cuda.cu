/* TEST
   ranks:   1
   quick:   no
   needs:   nompi (and a GPU when built by nvcc: make cuda)
   standin: yes
*/
/* test_cuda.cu -- dtensor_cuda.h's DT_CUDA device and kernel table ON A GPU,
   against dtensor.h's host kernels (tests/test_cuda_host.cu checks the
   same math on the CPU without a GPU).

       nvcc -std=c++17 -arch=sm_90 -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror \
            -DDTENSOR_NO_MPI -I. -o build/cuda/test_cuda tests/test_cuda.cu -lcublas -lnccl -lblis -lm
       ./build/cuda/test_cuda          (exits 0 with "SKIP" when no GPU is visible)

   Every kernel runs on random inputs on the device and on the host; the
   results must be the same bits where the host's are exactly defined
   (casts, + - * / max min axpy, integer ops, dt__expf-based ops, every
   random kind, box copies, permute, embedding, MAX/MIN/ARGMAX and integer
   reductions) and close (relative 1e-5 F32-kind, 1e-12 F64) where the
   device sums in another order or uses CUDA's libm (log, sin, erf, ...;
   sums; softmax; norm; gemm; xent). Plus the device's memory functions:
   alloc, copy both ways, zero, owns, sync, and the allocator hook. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor_cuda.h"
#include "dt_test.h"

static const dt__device *dev;
static const dt__kernels *dk, *hk;

/* No one buffer of this test may be larger than this (by construction: the
   shapes are drawn within it, see test_reduce); a larger request is a
   failed check, not minutes of copying (the first GPU run drew a 39.5 GB
   reduce input) */
#define TEST_BUFFER_BUDGET ((size_t)256 << 20)

/* device copy of n bytes of host memory */
static void *up(const void *h, size_t n) {
    void *d = NULL;
    CHECK(n <= TEST_BUFFER_BUDGET, "a %zu-byte device buffer exceeds the test's budget of %zu", n, TEST_BUFFER_BUDGET);
    if (n > TEST_BUFFER_BUDGET) n = 0;
    CHECK_OK(dev->alloc("test", n ? n : 1, &d));
    if (n) CHECK_OK(dev->copy("test", d, h, n));
    return d;
}
static void down(void *h, const void *d, size_t n) {
    CHECK_OK(dev->sync("test"));
    if (n) CHECK_OK(dev->copy("test", h, d, n));
}

static void fill_random(dtt_rng *r, dt_dtype t, void *p, size_t n, int small) {
    size_t i;
    for (i = 0; i < n; i++) {
        double v = small ? (double)(dtt_randint(r, 17) - 8) : ((double)(int64_t)dtt_next(r) * 0x1p-63) * 4.0;
        dt__cu_st_f64(t, p, (int64_t)i, v);
    }
}

static void fill_bytes(dtt_rng *r, void *p, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) ((unsigned char *)p)[i] = (unsigned char)dtt_next(r);
}

/* a[i] vs b[i]: same bits, both NaN, or (tol > 0) relatively close */
static int close_elem(dt_dtype t, const void *a, const void *b, size_t i, double tol) {
    size_t es = dt_dtype_size(t);
    double x, y;
    if (!memcmp((const char *)a + i * es, (const char *)b + i * es, es)) return 1;
    x = dt__cu_ld_f64(t, a, (int64_t)i);
    y = dt__cu_ld_f64(t, b, (int64_t)i);
    if (x != x && y != y) return 1;
    return tol > 0 && fabs(x - y) <= tol * (fabs(x) + fabs(y) + 1e-30);
}

static int compare(const char *what, dt_dtype t, const void *h, const void *d, size_t n, double tol) {
    size_t i;
    for (i = 0; i < n; i++)
        if (!close_elem(t, h, d, i, tol)) {
            CHECK(0, "%s (%s): element %zu: host %.17g device %.17g", what, dt_dtype_name(t), i,
                  dt__cu_ld_f64(t, h, (int64_t)i), dt__cu_ld_f64(t, d, (int64_t)i));
            return 0;
        }
    return 1;
}

static int is_int(dt_dtype t) { return t == DT_I32 || t == DT_I64 || t == DT_U8; }
static double tol_of(dt_dtype t) { return t == DT_F64 ? 1e-12 : is_int(t) ? 0 : t == DT_F32 ? 1e-5 : 1e-2; }

static const dt_dtype types[] = {DT_F32, DT_F64, DT_F16, DT_BF16, DT_I32, DT_I64, DT_U8};

static void test_memory(void) {
    char h[1000], back[1000];
    void *d = NULL, *pinned = NULL;
    int i;
    for (i = 0; i < 1000; i++) h[i] = (char)i;
    CHECK_OK(dev->alloc("test", 1000, &d));
    CHECK(dev->owns(d) == 1, "owns(device pointer)");
    CHECK(dev->owns(h) == 0, "owns(stack pointer)");
    CHECK_OK(dev->copy("test", d, h, 1000));
    CHECK_OK(dev->zero("test", (char *)d + 100, 50));
    CHECK_OK(dev->copy("test", back, d, 1000));
    for (i = 0; i < 1000; i++) CHECK(back[i] == (i >= 100 && i < 150 ? 0 : (char)i), "copy/zero byte %d", i);
    CHECK_OK(dev->alloc_host("test", 64, &pinned));
    CHECK(dev->owns(pinned) == 0, "owns(pinned host)");
    dev->free_host(pinned);
    dev->free(d);
    CHECK_ST(dev->alloc("test", (size_t)1 << 62, &d), DT_ERR_NOMEM);
    CHECK(strstr(dt_last_error(), "cudaMalloc") != NULL, "error names cudaMalloc: %s", dt_last_error());
    CHECK_OK(dev->sync("test")); /* the failed allocation left no error behind */
}

static void test_unary_cast_binary(dtt_rng *r) {
    int ti, op, tj;
    size_t n = 100003;
    for (ti = 0; ti < 7; ti++) {
        dt_dtype t = types[ti];
        size_t es = dt_dtype_size(t);
        char *x = (char *)malloc(n * es), *yh = (char *)malloc(n * 8), *yd = (char *)malloc(n * 8);
        char *b = (char *)malloc(n * es);
        void *dx, *db, *dy = NULL;
        fill_random(r, t, x, n, is_int(t));
        fill_random(r, t, b, n, is_int(t));
        dx = up(x, n * es);
        db = up(b, n * es);
        CHECK_OK(dev->alloc("test", n * 8, &dy));
        for (op = 0; op < DT__U_NUM; op++) {
            int libm = op == DT__U_LOG || op == DT__U_SQRT || op == DT__U_SIN || op == DT__U_COS || op == DT__U_TANH ||
                       op == DT__U_GELU || op == DT__U_POW || op == DT__U_RSQRT || (t == DT_F64 && (op == DT__U_EXP ||
                       op == DT__U_SIGMOID || op == DT__U_SILU));
            if (is_int(t) && (libm || op == DT__U_EXP || op == DT__U_SIGMOID || op == DT__U_SILU)) continue;
            dtt_ctx("unary op %d", op);
            hk->unary((dt__uop)op, t, x, yh, n, 1.5);
            dk->unary((dt__uop)op, t, dx, dy, n, 1.5);
            down(yd, dy, n * es);
            compare("unary", t, yh, yd, n, libm ? tol_of(t) * 4 : 0);
        }
        for (tj = 0; tj < 7; tj++) {
            dtt_ctx("cast to %s", dt_dtype_name(types[tj]));
            hk->cast(t, x, types[tj], yh, n);
            dk->cast(t, dx, types[tj], dy, n);
            down(yd, dy, n * dt_dtype_size(types[tj]));
            compare("cast", types[tj], yh, yd, n, 0);
        }
        for (op = 0; op < DT__B_NUM; op++) {
            /* contiguous; b broadcast along rows; a read transposed */
            int64_t sh1[1] = {(int64_t)n}, s1[1] = {1};
            int64_t sh2[2] = {300, 333}, sa[2] = {1, 300}, sb[2] = {0, 1};
            if (op == DT__B_DIV && is_int(t)) continue;
            dtt_ctx("binary op %d", op);
            hk->binary((dt__bop)op, t, 1, sh1, x, s1, b, s1, yh, 0.75);
            dk->binary((dt__bop)op, t, 1, sh1, dx, s1, db, s1, dy, 0.75);
            down(yd, dy, n * es);
            compare("binary flat", t, yh, yd, n, 0);
            hk->binary((dt__bop)op, t, 2, sh2, x, sa, b, sb, yh, 0.75);
            dk->binary((dt__bop)op, t, 2, sh2, dx, sa, db, sb, dy, 0.75);
            down(yd, dy, 300 * 333 * es);
            compare("binary strided", t, yh, yd, 300 * 333, 0);
            {
                /* the rows kernels: [rows, cols] with inner strides 0/1 (float4 rows when F32 and cols % 4 == 0,
                   the element kernel otherwise), and a narrow one (the general kernel) */
                static const int64_t g[][6] = {
                    {300, 332, 332, 1, 0, 1},   /* row-broadcast a + b[cols] (float4 rows for F32) */
                    {300, 333, 333, 1, 0, 1},   /* the same, odd cols */
                    {300, 332, 332, 1, 1, 0},   /* per-row scalar a * b[rows, 1] */
                    {300, 333, 0, 1, 333, 1},   /* a broadcast along rows, b a matrix */
                    {297, 336, 0, 0, 1, 0},     /* both broadcast: a scalar, b per row */
                    {1000, 40, 40, 1, 0, 1},    /* narrow rows: the general kernel */
                };
                size_t q;
                for (q = 0; q < sizeof g / sizeof g[0]; q++) {
                    int64_t shr[2] = {g[q][0], g[q][1]}, sar[2] = {g[q][2], g[q][3]}, sbr[2] = {g[q][4], g[q][5]};
                    size_t m = (size_t)(g[q][0] * g[q][1]);
                    dtt_ctx("binary op %d rows case %zu", op, q);
                    CHECK(m <= n, "rows case %zu: %zu elements, the buffers hold %zu", q, m, n);
                    if (m > n) continue;
                    hk->binary((dt__bop)op, t, 2, shr, x, sar, b, sbr, yh, 0.75);
                    dk->binary((dt__bop)op, t, 2, shr, dx, sar, db, sbr, dy, 0.75);
                    down(yd, dy, m * es);
                    compare("binary rows", t, yh, yd, m, 0);
                }
            }
        }
        dtt_ctx("");
        dev->free(dx); dev->free(db); dev->free(dy);
        free(x); free(b); free(yh); free(yd);
    }
}

static void test_reduce(dtt_rng *r) {
    int iter;
    for (iter = 0; iter < 200; iter++) {
        dt_dtype t = types[dtt_randint(r, 7)];
        dt__rop op = (dt__rop)dtt_randint(r, DT__R_NUM);
        dt_dtype ot = op == DT__R_ARGMAX ? DT_I64 : t;
        int nd = 1 + dtt_randint(r, 3), d;
        int64_t shape[4], n = 1, nout = 1;
        unsigned mask = (unsigned)dtt_randint(r, 1 << nd);
        char *x, *oh, *od;
        void *dx, *dout = NULL;
        for (d = 0; d < nd; d++)
            shape[d] = dtt_randint(r, 10) == 0 ? 0 : 1 + dtt_randint(r, iter % 3 == 0 ? 3000 : 40);
        /* long dims, but at most 2^22 elements (32 MiB of F64) in all */
        for (;;) {
            int big = 0;
            for (n = 1, d = 0; d < nd; d++) {
                n *= shape[d];
                if (shape[d] > shape[big]) big = d;
            }
            if (n <= ((int64_t)1 << 22)) break;
            shape[big] = (shape[big] + 1) / 2;
        }
        for (d = 0; d < nd; d++)
            if (!((mask >> d) & 1u)) nout *= shape[d];
        x = (char *)malloc((size_t)n * dt_dtype_size(t) + 8);
        oh = (char *)malloc((size_t)nout * 8 + 8);
        od = (char *)malloc((size_t)nout * 8 + 8);
        fill_random(r, t, x, (size_t)n, 1);
        dx = up(x, (size_t)n * dt_dtype_size(t));
        CHECK_OK(dev->alloc("test", (size_t)nout * 8 + 8, &dout));
        hk->reduce(op, t, nd, shape, mask, x, oh, op == DT__R_SUM ? 0.5 : 1.0);
        dk->reduce(op, t, nd, shape, mask, dx, dout, op == DT__R_SUM ? 0.5 : 1.0);
        down(od, dout, (size_t)nout * dt_dtype_size(ot));
        dtt_ctx("reduce op %d nd %d mask %x", (int)op, nd, mask);
        compare("reduce", ot, oh, od, (size_t)nout, op == DT__R_SUM || op == DT__R_SUMSQ ? tol_of(ot) : 0);
        dev->free(dx); dev->free(dout);
        free(x); free(oh); free(od);
    }
    dtt_ctx("");
}

static void test_rows(dtt_rng *r) {
    static const dt_dtype ft[] = {DT_F32, DT_F64, DT_F16, DT_BF16};
    int ti, lg;
    for (ti = 0; ti < 4; ti++) {
        dt_dtype t = ft[ti];
        size_t es = dt_dtype_size(t), outer = 7, n = 1000, inner = 3, tot = outer * n * inner;
        char *x = (char *)malloc(tot * es), *w = (char *)malloc(n * es), *bb = (char *)malloc(n * es);
        char *yh = (char *)malloc(tot * es), *yd = (char *)malloc(tot * es);
        void *dx, *dw, *db, *dy = NULL;
        fill_random(r, t, x, tot, 0);
        fill_random(r, t, w, n, 0);
        fill_random(r, t, bb, n, 0);
        dx = up(x, tot * es); dw = up(w, n * es); db = up(bb, n * es);
        CHECK_OK(dev->alloc("test", tot * es, &dy));
        for (lg = 0; lg < 2; lg++) {
            dtt_ctx("softmax log %d", lg);
            hk->softmax(t, x, yh, outer, n, inner, lg);
            dk->softmax(t, dx, dy, outer, n, inner, lg);
            down(yd, dy, tot * es);
            compare("softmax", t, yh, yd, tot, tol_of(t) * 10);
            dtt_ctx("norm rms %d", lg);
            hk->norm(t, x, w, bb, yh, outer * inner, n, 1e-5, lg);
            dk->norm(t, dx, dw, db, dy, outer * inner, n, 1e-5, lg);
            down(yd, dy, tot * es);
            compare("norm", t, yh, yd, tot, tol_of(t) * 10);
        }
        {   /* xent: rows = outer*inner, ncls = n; targets half local */
            size_t rows = outer * inner;
            int64_t tg[21];
            double hm[21], hs[21], ht[21], dm[21], ds[21], dtl[21];
            void *dtg, *dM = NULL, *dS = NULL, *dT = NULL;
            size_t i;
            for (i = 0; i < rows; i++) tg[i] = 500 + dtt_randint(r, 1000);
            dtg = up(tg, sizeof tg);
            CHECK_OK(dev->alloc("test", sizeof hm, &dM));
            CHECK_OK(dev->alloc("test", sizeof hm, &dS));
            CHECK_OK(dev->alloc("test", sizeof hm, &dT));
            hk->xent(t, x, rows, n, 1000, DT_I64, tg, NULL, hm, NULL, NULL);
            hk->xent(t, x, rows, n, 1000, DT_I64, tg, hm, NULL, hs, ht);
            dk->xent(t, dx, rows, n, 1000, DT_I64, dtg, NULL, (double *)dM, NULL, NULL);
            dk->xent(t, dx, rows, n, 1000, DT_I64, dtg, (const double *)dM, NULL, (double *)dS, (double *)dT);
            down(dm, dM, rows * 8); down(ds, dS, rows * 8); down(dtl, dT, rows * 8);
            dtt_ctx("xent");
            compare("xent rowmax", DT_F64, hm, dm, rows, 0);
            compare("xent sumexp", DT_F64, hs, ds, rows, 1e-6);
            compare("xent tlogit", DT_F64, ht, dtl, rows, 0);
            dev->free(dtg); dev->free(dM); dev->free(dS); dev->free(dT);
        }
        dev->free(dx); dev->free(dw); dev->free(db); dev->free(dy);
        free(x); free(w); free(bb); free(yh); free(yd);
    }
    dtt_ctx("");
}

static void test_gemm(dtt_rng *r) {
    static const dt_dtype gt[] = {DT_F32, DT_F64, DT_F16, DT_BF16, DT_I32, DT_I64};
    int iter;
    for (iter = 0; iter < 120; iter++) {
        dt_dtype t = gt[iter % 6];
        int64_t m = 1 + dtt_randint(r, 70), n = 1 + dtt_randint(r, 70), k = dtt_randint(r, 70);
        int ta = dtt_randint(r, 3), tb = dtt_randint(r, 3), tc = dtt_randint(r, 2);
        /* row-major, column-major, or every other column (neither stride 1) */
        int64_t rsa = ta == 0 ? k : ta == 1 ? 1 : 2 * k, csa = ta == 0 ? 1 : ta == 1 ? m : 2;
        int64_t rsb = tb == 0 ? n : tb == 1 ? 1 : 2 * n, csb = tb == 0 ? 1 : tb == 1 ? k : 2;
        int64_t rsc = tc ? n : 1, csc = tc ? 1 : m;
        size_t es = dt_dtype_size(t), na = (size_t)(2 * m * k + 2), nb = (size_t)(2 * k * n + 2), nc = (size_t)(m * n);
        double beta = iter % 4 == 0 ? 0.0 : 1.0;
        char *a = (char *)malloc(na * es), *b = (char *)malloc(nb * es), *ch = (char *)malloc(nc * es), *cd = (char *)malloc(nc * es);
        void *da, *db, *dc;
        fill_random(r, t, a, na, 1);
        fill_random(r, t, b, nb, 1);
        fill_random(r, t, ch, nc, 1);
        da = up(a, na * es); db = up(b, nb * es); dc = up(ch, nc * es);
        CHECK_OK(hk->gemm(t, m, n, k, 2.0, a, rsa, csa, b, rsb, csb, beta, ch, rsc, csc));
        CHECK_OK(dk->gemm(t, m, n, k, 2.0, da, rsa, csa, db, rsb, csb, beta, dc, rsc, csc));
        down(cd, dc, nc * es);
        dtt_ctx("gemm %s m %lld n %lld k %lld layouts %d %d %d", dt_dtype_name(t), (long long)m, (long long)n,
                (long long)k, ta, tb, tc);
        compare("gemm", t, ch, cd, nc, t == DT_F16 || t == DT_BF16 ? 2e-2 : 0); /* small integers: exact */
        dev->free(da); dev->free(db); dev->free(dc);
        free(a); free(b); free(ch); free(cd);
    }
    dtt_ctx("");
}

static void test_moves(dtt_rng *r) {
    int iter;
    for (iter = 0; iter < 300; iter++) { /* copy_box */
        dt__array s, d, ds_, dd_;
        dt__box p;
        int nd = 1 + dtt_randint(r, 4), k;
        size_t es = (size_t)1 << dtt_randint(r, 4), ns, ndb;
        char *hs, *hd, *back;
        void *gs_, *gd_;
        s.ndim = d.ndim = nd; s.es = d.es = es;
        s.stride = d.stride = NULL; /* row-major over their boxes */
        for (k = 0; k < nd; k++) {
            int64_t g = 1 + dtt_randint(r, 40);
            s.box.lo[k] = 0; s.box.ext[k] = g;
            p.lo[k] = dtt_randint(r, (int)g);
            p.ext[k] = dtt_randint(r, 2) ? g - p.lo[k] : 1 + dtt_randint(r, (int)(g - p.lo[k]));
        }
        d.box = p;
        ns = dt__box_numel(nd, &s.box) * es;
        ndb = dt__box_numel(nd, &d.box) * es;
        hs = (char *)malloc(ns); hd = (char *)malloc(ndb + 1); back = (char *)malloc(ndb + 1);
        fill_bytes(r, hs, ns);
        gs_ = up(hs, ns);
        gd_ = NULL;
        CHECK_OK(dev->alloc("test", ndb + 1, &gd_));
        s.data = hs; d.data = hd;
        dt__copy_box(&s, &d, &p); /* pack on the host */
        ds_ = s; dd_ = d; ds_.data = (char *)gs_; dd_.data = (char *)gd_;
        CHECK_OK(dev->copy_box("test", &ds_, &dd_, &p)); /* and on the device */
        down(back, gd_, ndb);
        CHECK(!memcmp(hd, back, ndb), "copy_box iter %d", iter);
        dev->free(gs_); dev->free(gd_);
        free(hs); free(hd); free(back);
    }
    for (iter = 0; iter < 200; iter++) { /* copy_box from permuted strides (a transpose: the tiled kernel) */
        dt__array s, d, ds_, dd_;
        dt__box p;
        int nd = 2 + dtt_randint(r, 2), k, j, perm[3];
        size_t es = (size_t)1 << dtt_randint(r, 5), ns, ndb;
        int64_t st[3], acc = 1;
        char *hs, *hd, *back;
        void *gs_, *gd_;
        s.ndim = d.ndim = nd; s.es = d.es = es;
        for (k = 0; k < nd; k++) perm[k] = k;
        for (k = nd - 1; k > 0; k--) { j = dtt_randint(r, k + 1); int tmp = perm[k]; perm[k] = perm[j]; perm[j] = tmp; }
        if (perm[nd - 1] == nd - 1) { int tmp = perm[nd - 1]; perm[nd - 1] = perm[0]; perm[0] = tmp; }
        for (k = 0; k < nd; k++) {
            int64_t g = 1 + dtt_randint(r, 70);
            s.box.lo[k] = 0; s.box.ext[k] = g;
            p.lo[k] = dtt_randint(r, (int)g);
            p.ext[k] = dtt_randint(r, 2) ? g - p.lo[k] : 1 + dtt_randint(r, (int)(g - p.lo[k]));
        }
        for (k = nd - 1; k >= 0; k--) { st[perm[k]] = acc; acc *= s.box.ext[perm[k]] + (k == nd - 1); } /* padded */
        s.stride = st; d.stride = NULL;
        d.box = p;
        ns = (size_t)acc * es;
        ndb = dt__box_numel(nd, &d.box) * es;
        hs = (char *)malloc(ns); hd = (char *)malloc(ndb + 1); back = (char *)malloc((ns > ndb ? ns : ndb) + 1);
        fill_bytes(r, hs, ns);
        gs_ = up(hs, ns);
        gd_ = NULL;
        CHECK_OK(dev->alloc("test", ndb + 1, &gd_));
        s.data = hs; d.data = hd;
        dt__copy_box(&s, &d, &p);
        ds_ = s; dd_ = d; ds_.data = (char *)gs_; dd_.data = (char *)gd_;
        CHECK_OK(dev->copy_box("test", &ds_, &dd_, &p)); /* pack */
        down(back, gd_, ndb);
        CHECK(!memcmp(hd, back, ndb), "copy_box (strided source) iter %d es %zu", iter, es);
        fill_bytes(r, hd, ndb); /* new values for the unpack into the strided array */
        CHECK_OK(dev->copy("test", gd_, hd, ndb));
        dt__copy_box(&d, &s, &p);
        CHECK_OK(dev->copy_box("test", &dd_, &ds_, &p)); /* unpack into the strided array */
        down(back, gs_, ns);
        CHECK(!memcmp(hs, back, ns), "copy_box (strided target) iter %d es %zu", iter, es);
        dev->free(gs_); dev->free(gd_);
        free(hs); free(hd); free(back);
    }
    for (iter = 0; iter < 100; iter++) { /* permute */
        int nd = 1 + dtt_randint(r, 4), perm[4], k, j;
        int64_t xs[4], n = 1;
        size_t es = (size_t)1 << dtt_randint(r, 4);
        char *x, *yh, *yd;
        void *dx, *dy = NULL;
        for (k = 0; k < nd; k++) { xs[k] = 1 + dtt_randint(r, 20); n *= xs[k]; perm[k] = k; }
        for (k = nd - 1; k > 0; k--) { j = dtt_randint(r, k + 1); int tmp = perm[k]; perm[k] = perm[j]; perm[j] = tmp; }
        x = (char *)malloc((size_t)n * es); yh = (char *)malloc((size_t)n * es); yd = (char *)malloc((size_t)n * es);
        fill_bytes(r, x, (size_t)n * es);
        dx = up(x, (size_t)n * es);
        CHECK_OK(dev->alloc("test", (size_t)n * es, &dy));
        hk->permute(es, nd, xs, perm, x, yh);
        dk->permute(es, nd, xs, perm, dx, dy);
        down(yd, dy, (size_t)n * es);
        CHECK(!memcmp(yh, yd, (size_t)n * es), "permute iter %d", iter);
        dev->free(dx); dev->free(dy);
        free(x); free(yh); free(yd);
    }
    { /* embedding */
        float table[50 * 8], oh[30 * 8], od[30 * 8];
        int32_t idx[30];
        void *dt_, *di, *dout = NULL;
        int i;
        for (i = 0; i < 400; i++) table[i] = (float)i;
        for (i = 0; i < 30; i++) idx[i] = dtt_randint(r, 120) - 10;
        dt_ = up(table, sizeof table); di = up(idx, sizeof idx);
        CHECK_OK(dev->alloc("test", sizeof od, &dout));
        hk->embedding(DT_F32, table, 20, 50, 8, DT_I32, idx, 30, oh);
        dk->embedding(DT_F32, dt_, 20, 50, 8, DT_I32, di, 30, dout);
        down(od, dout, sizeof od);
        CHECK(!memcmp(oh, od, sizeof od), "embedding");
        dev->free(dt_); dev->free(di); dev->free(dout);
    }
}

static void test_rng(dtt_rng *r) {
    static const dt__rkind kinds[] = {DT__RK_UNIFORM, DT__RK_NORMAL, DT__RK_BERNOULLI, DT__RK_RANDINT, DT__RK_DROPOUT};
    static const dt_dtype ft[] = {DT_F32, DT_F64, DT_F16, DT_BF16};
    int iter;
    for (iter = 0; iter < 300; iter++) {
        dt__rng_op op;
        int nd = 1 + dtt_randint(r, 3), d;
        int64_t gs[3], lo[3], ext[3];
        size_t n = 1, es;
        char *yh, *yd, *x;
        uint8_t *mh, *md;
        void *dy = NULL, *dx, *dm = NULL;
        memset(&op, 0, sizeof op);
        op.kind = kinds[iter % 5];
        op.t = op.kind == DT__RK_RANDINT || op.kind == DT__RK_BERNOULLI ? types[dtt_randint(r, 6)] : ft[dtt_randint(r, 4)];
        op.w = op.t == DT_F64 || op.t == DT_I64 ? 2 : 1;
        op.seed = dtt_next(r);
        op.offset = dtt_next(r) >> 20;
        op.a = op.kind == DT__RK_UNIFORM ? -1.0 : 0.5;
        op.b = op.kind == DT__RK_DROPOUT ? 0.7 : 2.0;
        op.thr = (uint64_t)ceil((op.kind == DT__RK_DROPOUT ? 0.7 : 0.3) * (op.w == 1 ? 16777216.0 : 9007199254740992.0));
        op.range = op.t == DT_U8 ? 200 : op.t == DT_F16 || op.t == DT_BF16 ? 100 : 3000000000ull;
        op.lo = op.t == DT_I32 ? -1500000000 : 0;
        for (d = 0; d < nd; d++) {
            gs[d] = 1 + dtt_randint(r, d == nd - 1 ? 5000 : 30);
            ext[d] = 1 + dtt_randint(r, (int)gs[d]);
            lo[d] = dtt_randint(r, (int)(gs[d] - ext[d] + 1));
            n *= (size_t)ext[d];
        }
        es = dt_dtype_size(op.t);
        yh = (char *)malloc(n * es); yd = (char *)malloc(n * es); x = (char *)malloc(n * es);
        mh = (uint8_t *)malloc(n); md = (uint8_t *)malloc(n);
        fill_random(r, op.t, x, n, 0);
        dx = up(x, n * es);
        CHECK_OK(dev->alloc("test", n * es, &dy));
        CHECK_OK(dev->alloc("test", n, &dm));
        op.x = x; op.mask = mh;
        hk->rng(&op, nd, gs, lo, ext, yh);
        op.x = dx; op.mask = dm;
        dk->rng(&op, nd, gs, lo, ext, dy);
        down(yd, dy, n * es);
        dtt_ctx("rng kind %d %s offset %llu", (int)op.kind, dt_dtype_name(op.t), (unsigned long long)op.offset);
        CHECK(!memcmp(yh, yd, n * es), "random values differ");
        if (op.kind == DT__RK_DROPOUT) {
            down(md, dm, n);
            CHECK(!memcmp(mh, md, n), "dropout mask differs");
        }
        dev->free(dx); dev->free(dy); dev->free(dm);
        free(yh); free(yd); free(x); free(mh); free(md);
    }
    dtt_ctx("");
}

#ifdef DTCU_STANDIN
/* the n doubles at p are k * i (i their index) */
static int all_times(const double *p, int n, double k) {
    int i;
    for (i = 0; i < n; i++)
        if (p[i] != k * i) return 0;
    return 1;
}

/* p += p on dtensor's stream: a library kernel (binary ADD), its shape and
   strides from host arrays scribbled over right after the launch (static:
   the stores stay), so the queued kernel must have taken their values at
   the launch, as CUDA does */
static void twice(double *p, int n) {
    static int64_t shape[1], st[1];
    shape[0] = n, st[0] = 1;
    dk->binary(DT__B_ADD, DT_F64, 1, shape, p, st, p, st, p, 1.0);
    shape[0] = 0, st[0] = -1;
}

/* The stand-in's streams are asynchronous (tests/standin/cuda_runtime.h):
   device work runs when the host waits for it, not before. These checks pin
   that down, so that a missing synchronisation -- in dtensor_cuda.h or in a
   test -- reads the old bytes and fails, as it may on a GPU (where these
   "stale" reads are races: this part runs on the stand-in only). Step 5
   shows the library's own wait doing its job: without the sync in
   dt__cu_copy, its download would leave the 8i of step 3 in `host`. */
static void test_streams(void) {
    enum { N = 1000 };
    double x[N], host[N], *d = NULL, *pin = NULL;
    void *spare = NULL;
    cudaStream_t side = NULL;
    cudaEvent_t ev = NULL;
    int i;
    if (!dtcu_standin_deferred()) {
        printf("test_streams: skipped (DTCU_STANDIN_EAGER=1 runs device work when issued)\n");
        return;
    }
    CHECK(dt_cuda_stream() == 0, "dtensor's stream is the legacy default stream here");
    for (i = 0; i < N; i++) x[i] = i;
    d = (double *)up(x, sizeof x);
    CHECK(cudaMallocHost((void **)&pin, sizeof x) == cudaSuccess, "cudaMallocHost");
    CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) == cudaSuccess, "cudaStreamCreateWithFlags");
    CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) == cudaSuccess, "cudaEventCreateWithFlags");
    if (!pin || !side || !ev) return;
    for (i = 0; i < N; i++) pin[i] = -1;

    /* 1. a kernel and a download into pinned memory, read before the
       stream is synchronised: the old bytes; after it: the result */
    twice(d, N);
    CHECK(cudaMemcpyAsync(pin, d, sizeof x, cudaMemcpyDeviceToHost, dt_cuda_stream()) == cudaSuccess, "D2H");
    CHECK(pin[0] == -1 && pin[N - 1] == -1, "a read before cudaStreamSynchronize saw %g (the stale -1 expected)",
          pin[N - 1]);
    CHECK(cudaStreamSynchronize(dt_cuda_stream()) == cudaSuccess, "cudaStreamSynchronize");
    CHECK(all_times(pin, N, 2), "after cudaStreamSynchronize: 2i expected, element 999 is %g", pin[N - 1]);

    /* 2. a non-blocking stream does not wait for the legacy stream's
       kernel; an event orders it after the kernel */
    twice(d, N); /* 4i, queued */
    CHECK(cudaMemcpyAsync(pin, d, sizeof x, cudaMemcpyDeviceToHost, side) == cudaSuccess, "D2H on side");
    CHECK(cudaStreamSynchronize(side) == cudaSuccess, "cudaStreamSynchronize(side)");
    CHECK(all_times(pin, N, 2), "a non-blocking stream read the kernel's output without waiting: %g", pin[N - 1]);
    CHECK(cudaEventRecord(ev, dt_cuda_stream()) == cudaSuccess, "cudaEventRecord");
    CHECK(cudaStreamWaitEvent(side, ev, 0) == cudaSuccess, "cudaStreamWaitEvent");
    CHECK(cudaMemcpyAsync(pin, d, sizeof x, cudaMemcpyDeviceToHost, side) == cudaSuccess, "D2H on side");
    CHECK(cudaStreamSynchronize(side) == cudaSuccess, "cudaStreamSynchronize(side)");
    CHECK(all_times(pin, N, 4), "after cudaStreamWaitEvent: 4i expected, element 999 is %g", pin[N - 1]);

    /* 3. cudaMemcpy to the host waits for the legacy stream's earlier work */
    twice(d, N); /* 8i */
    CHECK(cudaMemcpy(host, d, sizeof x, cudaMemcpyDeviceToHost) == cudaSuccess, "cudaMemcpy D2H");
    CHECK(all_times(host, N, 8), "cudaMemcpy D2H: 8i expected, element 999 is %g", host[N - 1]);

    /* 4. cudaFree waits for the whole device */
    twice(d, N); /* 16i */
    CHECK(cudaMemcpyAsync(pin, d, sizeof x, cudaMemcpyDeviceToHost, dt_cuda_stream()) == cudaSuccess, "D2H");
    CHECK(cudaMalloc(&spare, 1) == cudaSuccess, "cudaMalloc");
    CHECK(all_times(pin, N, 4), "before cudaFree: the stale 4i expected, element 999 is %g", pin[N - 1]);
    CHECK(cudaFree(spare) == cudaSuccess, "cudaFree");
    CHECK(all_times(pin, N, 16), "after cudaFree: 16i expected, element 999 is %g", pin[N - 1]);

    /* 5. the library's download (dt__cu_copy) synchronises before it returns */
    twice(d, N); /* 32i */
    CHECK_OK(dev->copy("test", host, d, sizeof x));
    CHECK(all_times(host, N, 32), "the device's copy to the host returned before the kernel ran: element 999 is %g",
          host[N - 1]);

    cudaEventDestroy(ev);
    cudaStreamDestroy(side);
    cudaFreeHost(pin);
    dev->free(d);
}
#endif

static int hook_allocs = 0;
static void *hook_alloc(size_t bytes, void *user) {
    void *p = NULL;
    (void)user;
    hook_allocs++;
    return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
}
static void hook_free(void *p, void *user) { (void)user; (void)cudaFree(p); }

int main(int argc, char **argv) {
    dtt_rng r = {424242};
    int ndev = 0;
    dtt_init(&argc, &argv, "cuda");
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("SKIP cuda (no GPU)\n");
        return 0;
    }
    dev = dt__device_of(DT_CUDA);
    dk = dev->kernels();
    hk = dt__device_of(DT_HOST)->kernels();
    test_memory();
    test_unary_cast_binary(&r);
    test_reduce(&r);
    test_rows(&r);
    test_gemm(&r);
    test_moves(&r);
    test_rng(&r);
#ifdef DTCU_STANDIN
    test_streams();
#endif
    {
        dt_cuda_allocator a;
        void *p = NULL;
        a.alloc = hook_alloc; a.free = hook_free; a.user = NULL;
        dt_cuda_set_allocator(&a);
        CHECK_OK(dev->alloc("test", 100, &p));
        dev->free(p);
        dt_cuda_set_allocator(NULL);
        CHECK(hook_allocs == 1, "the allocator hook was called %d times", hook_allocs);
    }
    CHECK_OK(dev->sync("test"));
    return dtt_finish();
}
