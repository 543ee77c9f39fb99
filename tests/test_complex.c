/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_complex.c -- the complex dtypes DT_C64 and DT_C128: interleaved
   (re, im) pairs of F32 / F64 (C99 _Complex's layout).

   Every value is checked against a closed form of the global row-major
   index (zval, wval: exact in both dtypes) or against a serial computation
   written here on pairs of doubles (complex product and quotient, a zgemm
   reference loop, sums):
   1. dtype basics: sizes 8/16, names c64/c128.
   2. bytes: distribute/gather, redistribute between Shard/Replicate on the
      1-D mesh and a 2-D one, from_local of this rank's box, a transpose,
      cat and narrow (views move pairs whole).
   3. Partial(SUM) and Partial(AVG): every rank holds zval, the reduction
      (allreduce and reduce-scatter) gives np*zval and zval; Partial(MAX/MIN)
      refused with DT_ERR_DTYPE naming the call and the dtype, on every rank
      (tensor creation, from_local, redistribute: *out untouched).
   4. Pointwise: add, sub, mul (the complex product), div, neg, scale, shift,
      fill, exp, axpy, cast (f64 -> c128, c64 -> c128); sum and mean (all
      dims and one dim, sharded: a Partial result reduced); the ops complex
      does not define refused (relu, abs, sqrt, maximum, max, min, argmax,
      norm2, softmax, cast to a real dtype, a real Partial(max) cast to
      complex, bernoulli, randint, dropout).
   5. matmul/mm/addmm/linear/dot: sharded along m, along k (a Partial(SUM) result) and
      replicated, small (the loops) and large (the BLAS's cgemm/zgemm)
      against the reference loop.
   6. .npy: save (numpy.load checks '<c8'/'<c16' and the values: tests/
      npy_check.py), numpy writes the closed form and dt_tensor_load_npy
      reads it back under another placement.
   7. RNG: rand/randn on complex equal the part dtype's uniform/normal over
      a doubled last dim, bit for bit (normal: std/sqrt(2)); the same values
      whatever the mesh and placements (against a one-rank mesh); the
      offset advances 2 (C64) / 4 (C128) words per element; statistics
      (each part of randn has mean 0 and variance 1/2, |z|^2 mean 1; rand's
      parts uniform on [0, 1)).

   Options: --quick (or DT_TEST_QUICK=1): smaller sizes. */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

static dt_comm *g_comm = NULL;
static dt_comm *g_selfcomm = NULL;
static dt_mesh *g_self = NULL;
static int g_numpy = 0;
static const char *g_python = "python3";
static char g_dir[256];

typedef struct cx { double re, im; } cx;

static cx cmake(double re, double im) { cx z; z.re = re; z.im = im; return z; }
static cx cmul(cx a, cx b) { return cmake(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
static cx cdiv(cx a, cx b)
{
    double d = b.re * b.re + b.im * b.im;
    return cmake((a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d);
}

/* the closed forms (tests/npy_check.py's cval is zval): small multiples of
   1/4 and 1/2, exact in F32 and F64; wval is never 0 (a divisor) */
static cx zval(int64_t g) { return cmake((double)(g % 17 - 8) * 0.25, (double)((g * 7) % 13 - 6) * 0.5); }
static cx wval(int64_t g) { return cmake((double)(g % 5 + 1) * 0.5, (double)(g % 3 - 1) * 0.25); }

static size_t esz(dt_dtype t) { return t == DT_C64 ? 8 : 16; }

static cx load(dt_dtype t, const void *p, int64_t i)
{
    if (t == DT_C64) return cmake(((const float *)p)[2 * i], ((const float *)p)[2 * i + 1]);
    return cmake(((const double *)p)[2 * i], ((const double *)p)[2 * i + 1]);
}
static void store(dt_dtype t, void *p, int64_t i, cx z)
{
    if (t == DT_C64) {
        ((float *)p)[2 * i] = (float)z.re;
        ((float *)p)[2 * i + 1] = (float)z.im;
    } else {
        ((double *)p)[2 * i] = z.re;
        ((double *)p)[2 * i + 1] = z.im;
    }
}

/* |got - want| within rel * (1 + |want|) in each part */
static int cclose(cx got, cx want, double rel)
{
    double s = 1.0 + fabs(want.re) + fabs(want.im);
    return fabs(got.re - want.re) <= rel * s && fabs(got.im - want.im) <= rel * s;
}
static double tol(dt_dtype t) { return t == DT_C64 ? 2e-6 : 1e-13; }

static void *fill_full(dt_dtype t, int64_t n, cx (*f)(int64_t))
{
    void *b = dtt_malloc((size_t)n * esz(t) + 1);
    int64_t i;
    for (i = 0; i < n; i++) store(t, b, i, f(i));
    return b;
}

static dt_tensor *make(dt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, const dt_placement *pl,
                       cx (*f)(int64_t))
{
    dt_tensor_desc d = dtt_desc(t, ndim, shape, dt_mesh_ndim(m), pl);
    dt_tensor *x = NULL;
    void *full = fill_full(t, dtt_numel(ndim, shape), f);
    CHECK_OK(dt_tensor_distribute(m, &d, full, DT_SRC_ALL, &x));
    free(full);
    return x;
}

/* gather t and compare every element with want(g) */
static void expect(const dt_tensor *x, cx (*want)(int64_t), const char *what)
{
    const dt_tensor_desc *d;
    int64_t n, i, bad = 0;
    void *full;
    if (!x) { CHECK(0, "%s: no tensor", what); return; }
    d = dt_tensor_get_desc(x);
    n = dtt_numel(d->ndim, d->shape);
    full = dtt_malloc((size_t)n * esz(d->dtype) + 1);
    CHECK_OK(dt_tensor_gather(x, full));
    for (i = 0; i < n; i++) {
        cx g = load(d->dtype, full, i), w = want(i);
        if (!cclose(g, w, tol(d->dtype)) && bad++ < 3)
            CHECK(0, "%s %s: element %lld is (%g, %g), want (%g, %g)", what, dtt_dtname(d->dtype), (long long)i,
                  g.re, g.im, w.re, w.im);
    }
    free(full);
}

/* a mesh: 1-D over all ranks, or 2-D (a x np/a) when np has a factor */
static int open_mesh(dtt_mesh *m, int twod)
{
    int sh[2], a;
    if (!twod) {
        sh[0] = dtt_np;
        return dtt_mesh_open(m, g_comm, 1, sh);
    }
    for (a = 2; a < dtt_np && dtt_np % a; a++) {}
    if (a >= dtt_np) return 0;
    sh[0] = a;
    sh[1] = dtt_np / a;
    return dtt_mesh_open(m, g_comm, 2, sh);
}

static const dt_dtype g_types[2] = {DT_C64, DT_C128};

/* ------------------------------------------------------------ 1. basics */

static void test_basics(void)
{
    dtt_ctx("basics");
    CHECK(DT_C64 == 7 && DT_C128 == 8 && DT_NUM_DTYPES == 9, "enum values");
    CHECK(dt_dtype_size(DT_C64) == 8 && dt_dtype_size(DT_C128) == 16, "sizes %zu %zu", dt_dtype_size(DT_C64),
          dt_dtype_size(DT_C128));
    CHECK(strcmp(dt_dtype_name(DT_C64), "c64") == 0 && strcmp(dt_dtype_name(DT_C128), "c128") == 0, "names");
}

/* ------------------------------------------------------------ 2. bytes */

static int64_t g_rows = 7, g_cols = 5; /* the 2-D shape: uneven shards, empty ones at 8 ranks */

static cx zval_t(int64_t g) { return zval((g % g_rows) * g_cols + g / g_rows); } /* zval of [rows, cols], transposed */
static cx zval_cat(int64_t g) /* cat([z, z], dim 1) of [rows, cols] */
{
    int64_t r = g / (2 * g_cols), c = g % (2 * g_cols);
    return zval(r * g_cols + c % g_cols);
}
static cx zval_narrow(int64_t g) { return zval((g / 2) * g_cols + 1 + g % 2); } /* narrow(dim 1, 1, 2) */

static void test_bytes(int twod)
{
    dtt_mesh m;
    int ti, a, b;
    int64_t sh[2];
    if (!open_mesh(&m, twod)) return;
    sh[0] = g_rows;
    sh[1] = g_cols;
    for (ti = 0; ti < 2; ti++) {
        dt_dtype t = g_types[ti];
        dt_placement opts[4][DT_MAX_MESH_DIMS];
        memset(opts, 0, sizeof opts);
        opts[0][0] = dt_shard(0); opts[0][1] = dt_shard(1);
        opts[1][0] = dt_replicate(); opts[1][1] = dt_shard(0);
        opts[2][0] = dt_shard(1); opts[2][1] = dt_replicate();
        opts[3][0] = dt_replicate(); opts[3][1] = dt_replicate();
        for (a = 0; a < 4; a++) {
            dt_tensor *x = make(m.mesh, t, 2, sh, opts[a], zval);
            dtt_ctx("bytes %s mesh %s from %d", dtt_dtname(t), m.name, a);
            expect(x, zval, "distribute");
            for (b = 0; b < 4; b++) {
                dt_tensor *y = NULL;
                CHECK_OK(dt_tensor_redistribute(x, opts[b], &y));
                expect(y, zval, "redistribute");
                dt_tensor_destroy(y);
            }
            { /* views move pairs whole */
                dt_tensor *tr = NULL, *ct = NULL, *nw = NULL;
                const dt_tensor *two[2]; /* (dt_cat's const dt_tensor *const *) */
                two[0] = x;
                two[1] = x;
                CHECK_OK(dt_transpose(x, 0, 1, &tr));
                expect(tr, zval_t, "transpose");
                CHECK_OK(dt_cat(2, two, 1, &ct));
                expect(ct, zval_cat, "cat");
                CHECK_OK(dt_narrow(x, 1, 1, 2, &nw));
                expect(nw, zval_narrow, "narrow");
                dt_tensor_destroy(tr);
                dt_tensor_destroy(ct);
                dt_tensor_destroy(nw);
            }
            { /* from_local of this rank's box, the closed form written here */
                int64_t ls[2], lo[2], i, j;
                dt_tensor *w = NULL;
                dt_tensor_desc d = dtt_desc(t, 2, sh, m.nd, opts[a]);
                void *buf;
                dt_tensor_local_shape(x, ls);
                dt_tensor_local_offset(x, lo);
                buf = dtt_malloc((size_t)(ls[0] * ls[1]) * esz(t) + 1);
                for (i = 0; i < ls[0]; i++)
                    for (j = 0; j < ls[1]; j++) store(t, buf, i * ls[1] + j, zval((lo[0] + i) * g_cols + lo[1] + j));
                CHECK(ls[0] * ls[1] == 0 || memcmp(buf, dt_tensor_data(x), (size_t)(ls[0] * ls[1]) * esz(t)) == 0,
                      "local data"); /* (an empty shard's data may be NULL) */
                CHECK_OK(dt_tensor_from_local(m.mesh, &d, buf, DT_BORROW, &w));
                expect(w, zval, "from_local");
                dt_tensor_destroy(w);
                free(buf);
            }
            dt_tensor_destroy(x);
        }
    }
    dtt_mesh_close(&m);
}

/* ------------------------------------------------------------ 3. Partial */

static double g_factor = 1.0;
static cx zval_times(int64_t g) { cx z = zval(g); return cmake(z.re * g_factor, z.im * g_factor); }

/* every rank holds zval: Partial(SUM) is np*zval (mesh dim 0 of size k), AVG zval */
static void test_partial(int twod)
{
    dtt_mesh m;
    int ti, r, k;
    int64_t sh[2];
    if (!open_mesh(&m, twod)) return;
    sh[0] = g_rows;
    sh[1] = g_cols;
    k = m.shape[0];
    for (ti = 0; ti < 2; ti++)
        for (r = 0; r < 2; r++) {
            dt_dtype t = g_types[ti];
            dt_reduce op = r ? DT_AVG : DT_SUM;
            dt_placement pl[DT_MAX_MESH_DIMS], to[DT_MAX_MESH_DIMS];
            dt_tensor_desc d;
            dt_tensor *x = NULL, *y = NULL, *z = NULL;
            void *full = fill_full(t, g_rows * g_cols, zval);
            memset(pl, 0, sizeof pl);
            memset(to, 0, sizeof to);
            pl[0] = dt_partial(op);
            pl[1] = dt_shard(1);
            to[0] = dt_replicate();
            to[1] = dt_shard(1);
            d = dtt_desc(t, 2, sh, m.nd, pl);
            dtt_ctx("partial %s %s mesh %s", dtt_dtname(t), r ? "avg" : "sum", m.name);
            /* from_local: each rank's block is its own value of the box */
            {
                dt_tensor *box = NULL;
                dt_placement bpl[DT_MAX_MESH_DIMS];
                memset(bpl, 0, sizeof bpl);
                bpl[0] = dt_replicate();
                bpl[1] = dt_shard(1);
                box = make(m.mesh, t, 2, sh, bpl, zval);
                if (box) {
                    int64_t ls[2];
                    dt_tensor_local_shape(box, ls);
                    CHECK_OK(dt_tensor_from_local(m.mesh, &d, dt_tensor_data(box), DT_COPY, &x));
                }
                dt_tensor_destroy(box);
            }
            g_factor = op == DT_SUM ? (double)k : 1.0;
            CHECK_OK(dt_tensor_redistribute(x, to, &y)); /* allreduce */
            expect(y, zval_times, "P -> R");
            to[0] = dt_shard(0); /* reduce-scatter */
            CHECK_OK(dt_tensor_redistribute(x, to, &z));
            expect(z, zval_times, "P -> S");
            dt_tensor_destroy(x);
            dt_tensor_destroy(y);
            dt_tensor_destroy(z);
            free(full);
        }
    g_factor = 1.0;
    dtt_mesh_close(&m);
}

/* Partial(MAX/MIN) of complex: DT_ERR_DTYPE on every rank, naming the call and dtype, *out untouched */
static void test_partial_refused(void)
{
    dtt_mesh m;
    int ti, r;
    int64_t sh[1] = {6};
    if (!open_mesh(&m, 0)) return;
    for (ti = 0; ti < 2; ti++)
        for (r = 0; r < 2; r++) {
            dt_dtype t = g_types[ti];
            dt_placement pl[DT_MAX_MESH_DIMS];
            dt_tensor_desc d;
            dt_tensor *x = NULL, *y = NULL, *rep;
            void *buf = dtt_malloc(6 * esz(t));
            memset(buf, 0, 6 * esz(t));
            memset(pl, 0, sizeof pl);
            pl[0] = dt_partial(r ? DT_MIN : DT_MAX);
            d = dtt_desc(t, 1, sh, 1, pl);
            dtt_ctx("partial refused %s %s", dtt_dtname(t), r ? "min" : "max");
            CHECK_ST(dt_tensor_zeros(m.mesh, &d, &x), DT_ERR_DTYPE);
            CHECK_ERRMSG("dt_tensor_zeros");
            CHECK(strstr(dt_last_error(), dtt_dtname(t)) != NULL, "message names the dtype: %s", dt_last_error());
            CHECK(x == NULL, "*out made");
            CHECK_ST(dt_tensor_from_local(m.mesh, &d, buf, DT_BORROW, &x), DT_ERR_DTYPE);
            CHECK_ERRMSG("dt_tensor_from_local");
            CHECK(x == NULL, "*out made");
            pl[0] = dt_replicate();
            rep = make(m.mesh, t, 1, sh, pl, zval);
            pl[0] = dt_partial(r ? DT_MIN : DT_MAX);
            CHECK_ST(dt_tensor_redistribute(rep, pl, &y), DT_ERR_DTYPE);
            CHECK_ERRMSG("dt_tensor_redistribute");
            CHECK(y == NULL, "*out made");
            expect(rep, zval, "source kept");
            dt_tensor_destroy(rep);
            free(buf);
        }
    dtt_mesh_close(&m);
}

/* ------------------------------------------------------------ 4. pointwise */

static cx r_add(int64_t g) { cx a = zval(g), b = wval(g); return cmake(a.re + b.re, a.im + b.im); }
static cx r_sub(int64_t g) { cx a = zval(g), b = wval(g); return cmake(a.re - b.re, a.im - b.im); }
static cx r_mul(int64_t g) { return cmul(zval(g), wval(g)); }
static cx r_div(int64_t g) { return cdiv(zval(g), wval(g)); }
static cx r_neg(int64_t g) { cx a = zval(g); return cmake(-a.re, -a.im); }
static cx r_scale(int64_t g) { cx a = zval(g); return cmake(-2.5 * a.re, -2.5 * a.im); }
static cx r_shift(int64_t g) { cx a = zval(g); return cmake(a.re + 1.5, a.im); }
static cx r_fill(int64_t g) { (void)g; return cmake(3.0, 0.0); }
static cx r_exp(int64_t g) { cx a = zval(g); double e = exp(a.re); return cmake(e * cos(a.im), e * sin(a.im)); }
static cx r_axpy(int64_t g) { cx a = zval(g), b = wval(g); return cmake(2.0 * a.re + b.re, 2.0 * a.im + b.im); }
static cx r_real(int64_t g) { return cmake(zval(g).re, 0.0); }

static void test_pointwise(int twod)
{
    dtt_mesh m;
    int ti, pi;
    int64_t sh[2];
    if (!open_mesh(&m, twod)) return;
    sh[0] = g_rows;
    sh[1] = g_cols;
    for (ti = 0; ti < 2; ti++)
        for (pi = 0; pi < 3; pi++) {
            dt_dtype t = g_types[ti];
            dt_placement pa[DT_MAX_MESH_DIMS], pb[DT_MAX_MESH_DIMS];
            dt_tensor *a, *b, *o = NULL;
            memset(pa, 0, sizeof pa);
            memset(pb, 0, sizeof pb);
            pa[0] = pi == 2 ? dt_replicate() : dt_shard(pi);
            pb[0] = pi == 1 ? dt_replicate() : dt_shard(0);
            if (m.nd == 2) {
                pa[1] = dt_shard(1);
                pb[1] = dt_replicate();
            }
            dtt_ctx("pointwise %s mesh %s case %d", dtt_dtname(t), m.name, pi);
            a = make(m.mesh, t, 2, sh, pa, zval);
            b = make(m.mesh, t, 2, sh, pb, wval);
#define BIN(fn, ref)                              \
    CHECK_OK(fn(a, b, &o));                       \
    expect(o, ref, #fn);                          \
    dt_tensor_destroy(o);                         \
    o = NULL;
            BIN(dt_add, r_add)
            BIN(dt_sub, r_sub)
            BIN(dt_mul, r_mul)
            BIN(dt_div, r_div)
#undef BIN
            CHECK_OK(dt_neg(a, &o)); expect(o, r_neg, "dt_neg"); dt_tensor_destroy(o); o = NULL;
            CHECK_OK(dt_scale(a, -2.5, &o)); expect(o, r_scale, "dt_scale"); dt_tensor_destroy(o); o = NULL;
            CHECK_OK(dt_shift(a, 1.5, &o)); expect(o, r_shift, "dt_shift"); dt_tensor_destroy(o); o = NULL;
            CHECK_OK(dt_fill(a, 3.0, &o)); expect(o, r_fill, "dt_fill"); dt_tensor_destroy(o); o = NULL;
            CHECK_OK(dt_exp(a, &o)); expect(o, r_exp, "dt_exp"); dt_tensor_destroy(o); o = NULL;
            CHECK_OK(dt_copy(a, &o)); expect(o, zval, "dt_copy"); dt_tensor_destroy(o); o = NULL;
            CHECK_OK(dt_copy(b, &o));
            CHECK_OK(dt_axpy(2.0, a, o));
            expect(o, r_axpy, "dt_axpy");
            dt_tensor_destroy(o);
            o = NULL;
            { /* casts into complex */
                dt_tensor *re = NULL, *c = NULL;
                int64_t n = g_rows * g_cols, i;
                double *full = (double *)dtt_malloc((size_t)n * sizeof(double));
                dt_tensor_desc d = dtt_desc(DT_F64, 2, sh, m.nd, pa);
                for (i = 0; i < n; i++) full[i] = zval(i).re;
                CHECK_OK(dt_tensor_distribute(m.mesh, &d, full, DT_SRC_ALL, &re));
                CHECK_OK(dt_cast(re, t, &c));
                expect(c, r_real, "dt_cast f64 -> complex");
                dt_tensor_destroy(c);
                c = NULL;
                CHECK_OK(dt_cast(a, t == DT_C64 ? DT_C128 : DT_C64, &c));
                expect(c, zval, "dt_cast c64 <-> c128");
                dt_tensor_destroy(c);
                dt_tensor_destroy(re);
                free(full);
            }
            dt_tensor_destroy(a);
            dt_tensor_destroy(b);
        }
    dtt_mesh_close(&m);
}

/* sum/mean over all dims and over dim 0, of a sharded tensor (a Partial result) */
static cx g_red[64];
static int64_t g_redn = 0;
static cx r_red(int64_t g) { return g < g_redn ? g_red[g] : cmake(NAN, NAN); }

static void test_reduce(int twod)
{
    dtt_mesh m;
    int ti, pi, mean, all;
    int64_t sh[2];
    if (!open_mesh(&m, twod)) return;
    sh[0] = g_rows;
    sh[1] = g_cols;
    for (ti = 0; ti < 2; ti++)
        for (pi = 0; pi < 3; pi++)
            for (mean = 0; mean < 2; mean++)
                for (all = 0; all < 2; all++) {
                    dt_dtype t = g_types[ti];
                    dt_placement pl[DT_MAX_MESH_DIMS];
                    dt_tensor *x, *o = NULL;
                    int dim0 = 0, i, j;
                    memset(pl, 0, sizeof pl);
                    pl[0] = pi == 2 ? dt_replicate() : dt_shard(pi);
                    if (m.nd == 2) pl[1] = dt_shard(1 - (pi & 1));
                    dtt_ctx("reduce %s mesh %s case %d %s %s", dtt_dtname(t), m.name, pi, mean ? "mean" : "sum",
                            all ? "all" : "dim 0");
                    x = make(m.mesh, t, 2, sh, pl, zval);
                    g_redn = all ? 1 : g_cols;
                    for (j = 0; j < g_redn; j++) g_red[j] = cmake(0, 0);
                    for (i = 0; i < g_rows; i++)
                        for (j = 0; j < g_cols; j++) {
                            cx z = zval(i * g_cols + j);
                            g_red[all ? 0 : j].re += z.re;
                            g_red[all ? 0 : j].im += z.im;
                        }
                    if (mean)
                        for (j = 0; j < g_redn; j++) {
                            double n = all ? (double)(g_rows * g_cols) : (double)g_rows;
                            g_red[j].re /= n;
                            g_red[j].im /= n;
                        }
                    if (mean) CHECK_OK(dt_mean(x, all ? 0 : 1, all ? NULL : &dim0, 0, &o));
                    else CHECK_OK(dt_sum(x, all ? 0 : 1, all ? NULL : &dim0, 0, &o));
                    expect(o, r_red, mean ? "dt_mean" : "dt_sum");
                    dt_tensor_destroy(o);
                    dt_tensor_destroy(x);
                }
    dtt_mesh_close(&m);
}

/* the ops complex does not define: DT_ERR_DTYPE on every rank, the call and dtype named */
static void test_refused_ops(void)
{
    dtt_mesh m;
    int ti;
    int64_t sh[2];
    if (!open_mesh(&m, 0)) return;
    sh[0] = g_rows;
    sh[1] = g_cols;
    for (ti = 0; ti < 2; ti++) {
        dt_dtype t = g_types[ti];
        dt_placement pl[DT_MAX_MESH_DIMS];
        dt_tensor *x, *o = NULL, *k = NULL;
        int dim0 = 0;
        memset(pl, 0, sizeof pl);
        pl[0] = dt_shard(0);
        x = make(m.mesh, t, 2, sh, pl, zval);
        dtt_ctx("refused %s", dtt_dtname(t));
#define REFUSED(call, fn)                                                                                 \
    CHECK_ST(call, DT_ERR_DTYPE);                                                                         \
    CHECK_ERRMSG(fn);                                                                                     \
    CHECK(strstr(dt_last_error(), dtt_dtname(t)) != NULL, "%s: names the dtype: %s", fn, dt_last_error()); \
    CHECK(o == NULL, "%s made *out", fn);
        REFUSED(dt_relu(x, &o), "dt_relu")
        REFUSED(dt_abs(x, &o), "dt_abs")
        REFUSED(dt_sqrt(x, &o), "dt_sqrt")
        REFUSED(dt_log(x, &o), "dt_log")
        REFUSED(dt_tanh(x, &o), "dt_tanh")
        REFUSED(dt_pow(x, 2.0, &o), "dt_pow")
        REFUSED(dt_maximum(x, x, &o), "dt_maximum")
        REFUSED(dt_minimum(x, x, &o), "dt_minimum")
        REFUSED(dt_max(x, 1, &dim0, 0, &o), "dt_max")
        REFUSED(dt_min(x, 1, &dim0, 0, &o), "dt_min")
        REFUSED(dt_argmax(x, 1, &dim0, 0, &o), "dt_argmax")
        REFUSED(dt_norm2(x, 0, NULL, 0, &o), "dt_norm2")
        REFUSED(dt_softmax(x, 1, &o), "dt_softmax")
        REFUSED(dt_cast(x, DT_F64, &o), "dt_cast")
        REFUSED(dt_bernoulli_(x, 0.5), "dt_bernoulli_")
        REFUSED(dt_randint_(x, 0, 4), "dt_randint_")
        REFUSED(dt_dropout(x, 0.5, &o, &k), "dt_dropout")
#undef REFUSED
        { /* a real Partial(max) cast to complex would make a complex Partial(max): refused */
            dt_placement pm[DT_MAX_MESH_DIMS], rp[DT_MAX_MESH_DIMS];
            dt_tensor *re = NULL, *p = NULL;
            double full[35];
            int64_t i;
            dt_tensor_desc d;
            memset(rp, 0, sizeof rp);
            memset(pm, 0, sizeof pm);
            pm[0] = dt_partial(DT_MAX);
            d = dtt_desc(DT_F64, 2, sh, 1, rp);
            for (i = 0; i < 35; i++) full[i] = (double)i;
            CHECK_OK(dt_tensor_distribute(m.mesh, &d, full, DT_SRC_ALL, &re));
            CHECK_OK(dt_tensor_redistribute(re, pm, &p));
            CHECK_ST(dt_cast(p, t, &o), DT_ERR_DTYPE);
            CHECK_ERRMSG("dt_cast");
            CHECK(o == NULL, "dt_cast made *out");
            dt_tensor_destroy(p);
            dt_tensor_destroy(re);
        }
        expect(x, zval, "input kept");
        dt_tensor_destroy(x);
    }
    dtt_mesh_close(&m);
}

/* ------------------------------------------------------------ 5. matmul */

static int64_t g_m, g_n, g_k;
static cx *g_ref = NULL;
static cx r_mm(int64_t g) { return g_ref[g]; }
static cx r_addmm(int64_t g)
{
    cx w = wval(g);
    return cmake(0.5 * w.re + 2.0 * g_ref[g].re, 0.5 * w.im + 2.0 * g_ref[g].im);
}
static cx r_linear(int64_t g)
{
    cx w = wval(g % g_n);
    return cmake(w.re + g_ref[g].re, w.im + g_ref[g].im);
}
static cx aval(int64_t g) { return zval(g * 3 + 1); }
static cx bval(int64_t g) { return wval(g * 5 + 2); }

/* the zgemm reference loop: C[i,j] = sum_p A[i,p] B[p,j] */
static void ref_mm(void)
{
    int64_t i, j, p;
    for (i = 0; i < g_m; i++)
        for (j = 0; j < g_n; j++) {
            cx acc = cmake(0, 0);
            for (p = 0; p < g_k; p++) {
                cx x = cmul(aval(i * g_k + p), bval(p * g_n + j));
                acc.re += x.re;
                acc.im += x.im;
            }
            g_ref[i * g_n + j] = acc;
        }
}

static void test_matmul(int twod)
{
    dtt_mesh m;
    int ti, si, pi;
    static const int64_t sizes[2][3] = {{5, 3, 4}, {33, 29, 31}}; /* 60 and 29667 multiply-adds: loops, BLAS */
    if (!open_mesh(&m, twod)) return;
    for (si = 0; si < 2; si++) {
        g_m = sizes[si][0];
        g_n = sizes[si][1];
        g_k = sizes[si][2];
        g_ref = (cx *)dtt_malloc((size_t)(g_m * g_n) * sizeof(cx));
        ref_mm();
        for (ti = 0; ti < 2; ti++)
            for (pi = 0; pi < 3; pi++) {
                dt_dtype t = g_types[ti];
                dt_placement pa[DT_MAX_MESH_DIMS], pb[DT_MAX_MESH_DIMS];
                dt_tensor *a, *b, *c = NULL;
                int64_t sa[2], sb[2];
                memset(pa, 0, sizeof pa);
                memset(pb, 0, sizeof pb);
                sa[0] = g_m; sa[1] = g_k; sb[0] = g_k; sb[1] = g_n;
                /* 0: A rows split; 1: the contraction split (Partial(SUM) result); 2: replicated */
                pa[0] = pi == 0 ? dt_shard(0) : pi == 1 ? dt_shard(1) : dt_replicate();
                pb[0] = pi == 1 ? dt_shard(0) : dt_replicate();
                if (m.nd == 2) {
                    pa[1] = dt_replicate();
                    pb[1] = dt_shard(1);
                }
                dtt_ctx("matmul %s %lldx%lldx%lld mesh %s case %d", dtt_dtname(t), (long long)g_m, (long long)g_n,
                        (long long)g_k, m.name, pi);
                a = make(m.mesh, t, 2, sa, pa, aval);
                b = make(m.mesh, t, 2, sb, pb, bval);
                CHECK_OK(dt_matmul(a, b, &c));
                expect(c, r_mm, "dt_matmul");
                dt_tensor_destroy(c);
                c = NULL;
                CHECK_OK(dt_mm(a, b, &c));
                expect(c, r_mm, "dt_mm");
                dt_tensor_destroy(c);
                c = NULL;
                { /* addmm: 0.5 c + 2 a@b with c = wval; linear: a @ (b^T)^T + bias (bias = wval of the column) */
                    int64_t sc[2];
                    dt_placement pr[DT_MAX_MESH_DIMS];
                    dt_tensor *cm, *bt = NULL, *bias;
                    memset(pr, 0, sizeof pr);
                    sc[0] = g_m;
                    sc[1] = g_n;
                    cm = make(m.mesh, t, 2, sc, pr, wval);
                    CHECK_OK(dt_addmm(cm, a, b, 0.5, 2.0, &c));
                    expect(c, r_addmm, "dt_addmm");
                    dt_tensor_destroy(c);
                    c = NULL;
                    bias = make(m.mesh, t, 1, &g_n, pr, wval);
                    CHECK_OK(dt_transpose(b, 0, 1, &bt));
                    CHECK_OK(dt_linear(a, bt, bias, &c));
                    expect(c, r_linear, "dt_linear");
                    dt_tensor_destroy(c);
                    c = NULL;
                    CHECK_OK(dt_linear(a, bt, NULL, &c));
                    expect(c, r_mm, "dt_linear, no bias");
                    dt_tensor_destroy(c);
                    dt_tensor_destroy(bias);
                    dt_tensor_destroy(bt);
                    dt_tensor_destroy(cm);
                }
                dt_tensor_destroy(a);
                dt_tensor_destroy(b);
            }
        free(g_ref);
        g_ref = NULL;
    }
    { /* dot of two sharded vectors: a 0-d Partial(SUM) */
        int64_t n = 23, p;
        dt_placement pl[DT_MAX_MESH_DIMS];
        static cx dot[1];
        memset(pl, 0, sizeof pl);
        pl[0] = dt_shard(0);
        dot[0] = cmake(0, 0);
        for (p = 0; p < n; p++) {
            cx x = cmul(aval(p), bval(p));
            dot[0].re += x.re;
            dot[0].im += x.im;
        }
        g_ref = dot;
        for (ti = 0; ti < 2; ti++) {
            dt_tensor *a = make(m.mesh, g_types[ti], 1, &n, pl, aval), *b = make(m.mesh, g_types[ti], 1, &n, pl, bval);
            dt_tensor *c = NULL;
            dtt_ctx("dot %s mesh %s", dtt_dtname(g_types[ti]), m.name);
            CHECK_OK(dt_dot(a, b, &c));
            expect(c, r_mm, "dt_dot");
            dt_tensor_destroy(c);
            dt_tensor_destroy(a);
            dt_tensor_destroy(b);
        }
        g_ref = NULL;
    }
    dtt_mesh_close(&m);
}

/* ------------------------------------------------------------ 6. npy */

static void barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }

static void test_npy(void)
{
    dtt_mesh m;
    int ti;
    int64_t sh[2];
    if (!open_mesh(&m, 0)) return;
    sh[0] = g_rows;
    sh[1] = g_cols;
    for (ti = 0; ti < 2; ti++) {
        dt_dtype t = g_types[ti];
        dt_placement pl[DT_MAX_MESH_DIMS], p2[DT_MAX_MESH_DIMS];
        dt_tensor *x, *y = NULL;
        char path[512], cmd[1200];
        memset(pl, 0, sizeof pl);
        memset(p2, 0, sizeof p2);
        pl[0] = dt_shard(0);
        p2[0] = dt_shard(1);
        dtt_ctx("npy %s", dtt_dtname(t));
        x = make(m.mesh, t, 2, sh, pl, zval);
        snprintf(path, sizeof path, "%s/lib_%s.npy", g_dir, dtt_dtname(t));
        CHECK_OK(dt_tensor_save_npy(x, path));
        CHECK_OK(dt_tensor_load_npy(m.mesh, path, p2, &y));
        expect(y, zval, "load_npy of save_npy");
        dt_tensor_destroy(y);
        y = NULL;
        if (g_numpy && dtt_rank == 0) {
            int rc;
            snprintf(cmd, sizeof cmd, "%s tests/npy_check.py '%s' %s", g_python, path, dtt_dtname(t));
            rc = system(cmd);
            CHECK(rc == 0, "numpy check failed (%d): %s", rc, cmd);
            snprintf(path, sizeof path, "%s/np_%s.npy", g_dir, dtt_dtname(t));
            snprintf(cmd, sizeof cmd, "%s tests/npy_check.py --write '%s' %s %lld %lld", g_python, path,
                     dtt_dtname(t), (long long)g_rows, (long long)g_cols);
            rc = system(cmd);
            CHECK(rc == 0, "numpy write failed (%d): %s", rc, cmd);
        }
        barrier();
        if (g_numpy) {
            snprintf(path, sizeof path, "%s/np_%s.npy", g_dir, dtt_dtname(t));
            CHECK_OK(dt_tensor_load_npy(m.mesh, path, p2, &y));
            expect(y, zval, "load_npy of numpy's file");
            if (y) CHECK(dt_tensor_get_desc(y)->dtype == t, "loaded dtype %d", (int)dt_tensor_get_desc(y)->dtype);
            dt_tensor_destroy(y);
        }
        barrier();
        dt_tensor_destroy(x);
    }
    dtt_mesh_close(&m);
}

/* ------------------------------------------------------------ 7. RNG */

/* gathered values of a random fill of [rows, cols] under pl on mesh mm at seed 77 */
static void *draw(dt_mesh *mm, dt_dtype t, int normal, int64_t rows, int64_t cols, const dt_placement *pl)
{
    int64_t sh[2];
    dt_tensor_desc d;
    dt_tensor *x = NULL;
    void *full = dtt_malloc((size_t)(rows * cols) * dt_dtype_size(t) + 1);
    sh[0] = rows;
    sh[1] = cols;
    d = dtt_desc(t, 2, sh, dt_mesh_ndim(mm), pl);
    CHECK_OK(dt_manual_seed(mm, 77));
    if (normal) CHECK_OK(dt_tensor_randn(mm, &d, &x));
    else CHECK_OK(dt_tensor_rand(mm, &d, &x));
    if (x) CHECK_OK(dt_tensor_gather(x, full));
    dt_tensor_destroy(x);
    return full;
}

static void test_rng(int twod)
{
    dtt_mesh m;
    int ti, normal, pi;
    int64_t rows = 13, cols = 9;
    if (!open_mesh(&m, twod)) return;
    for (ti = 0; ti < 2; ti++)
        for (normal = 0; normal < 2; normal++) {
            dt_dtype t = g_types[ti], part = t == DT_C64 ? DT_F32 : DT_F64;
            dt_placement rep[DT_MAX_MESH_DIMS];
            size_t bytes = (size_t)(rows * cols) * esz(t);
            void *one, *real;
            memset(rep, 0, sizeof rep);
            dtt_ctx("rng %s %s mesh %s", dtt_dtname(t), normal ? "randn" : "rand", m.name);
            /* the definition: the part dtype over a doubled last dim (normal: std 1/sqrt 2) */
            one = draw(g_self, t, normal, rows, cols, rep);
            {
                int64_t sh[2];
                dt_tensor_desc d;
                dt_tensor *x = NULL;
                sh[0] = rows;
                sh[1] = 2 * cols;
                d = dtt_desc(part, 2, sh, 1, rep);
                real = dtt_malloc(bytes);
                CHECK_OK(dt_manual_seed(g_self, 77));
                CHECK_OK(dt_tensor_empty(g_self, &d, &x));
                if (normal) CHECK_OK(dt_normal_(x, 0.0, sqrt(0.5)));
                else CHECK_OK(dt_uniform_(x, 0.0, 1.0));
                if (x) CHECK(memcmp(dt_tensor_data(x), one, bytes) == 0, "not the part dtype's values over [%lld, %lld]",
                             (long long)rows, (long long)(2 * cols));
                dt_tensor_destroy(x);
                free(real);
            }
            for (pi = 0; pi < 4; pi++) { /* the same values whatever the sharding */
                dt_placement pl[DT_MAX_MESH_DIMS];
                void *got;
                memset(pl, 0, sizeof pl);
                pl[0] = pi == 0 ? dt_shard(0) : pi == 1 ? dt_shard(1) : pi == 2 ? dt_replicate() : dt_shard_cyclic(1, 2);
                if (m.nd == 2) pl[1] = pi == 1 ? dt_shard(0) : dt_shard(1);
                if (pi == 3 && m.nd == 2) pl[1] = dt_replicate();
                got = draw(m.mesh, t, normal, rows, cols, pl);
                CHECK(memcmp(got, one, bytes) == 0, "placement case %d: not the one-rank values", pi);
                free(got);
            }
            { /* the offset: 2 or 4 words per element, rounded up to 4 */
                uint64_t s0, o0, s1, o1, want = ((uint64_t)(t == DT_C64 ? 2 : 4) * (uint64_t)(rows * cols) + 3u) & ~3ull;
                dt_tensor_desc d;
                dt_tensor *x = NULL;
                int64_t sh[2];
                sh[0] = rows;
                sh[1] = cols;
                d = dtt_desc(t, 2, sh, m.nd, rep);
                CHECK_OK(dt_rng_get_state(m.mesh, &s0, &o0));
                CHECK_OK(dt_tensor_randn(m.mesh, &d, &x));
                CHECK_OK(dt_rng_get_state(m.mesh, &s1, &o1));
                CHECK(o1 - o0 == want, "offset advanced %llu, want %llu", (unsigned long long)(o1 - o0),
                      (unsigned long long)want);
                dt_tensor_destroy(x);
            }
            free(one);
        }
    dtt_mesh_close(&m);
}

/* statistics of N complex samples on the 1-D mesh (sharded), gathered */
static void test_rng_stats(void)
{
    dtt_mesh m;
    int ti, normal;
    int64_t n = dtt_quick ? 20000 : 200000, i;
    if (!open_mesh(&m, 0)) return;
    for (ti = 0; ti < 2; ti++)
        for (normal = 0; normal < 2; normal++) {
            dt_dtype t = g_types[ti];
            dt_placement pl[DT_MAX_MESH_DIMS];
            dt_tensor_desc d;
            dt_tensor *x = NULL;
            void *full = dtt_malloc((size_t)n * esz(t));
            double sr = 0, si = 0, qr = 0, qi = 0, sab = 0, lo = 1, hi = 0, se = sqrt((double)n);
            memset(pl, 0, sizeof pl);
            pl[0] = dt_shard(0);
            d = dtt_desc(t, 1, &n, 1, pl);
            dtt_ctx("rng stats %s %s", dtt_dtname(t), normal ? "randn" : "rand");
            if (normal) CHECK_OK(dt_tensor_randn(m.mesh, &d, &x));
            else CHECK_OK(dt_tensor_rand(m.mesh, &d, &x));
            if (x) CHECK_OK(dt_tensor_gather(x, full));
            for (i = 0; i < n; i++) {
                cx z = load(t, full, i);
                sr += z.re;
                si += z.im;
                qr += z.re * z.re;
                qi += z.im * z.im;
                sab += z.re * z.im;
                lo = fmin(lo, fmin(z.re, z.im));
                hi = fmax(hi, fmax(z.re, z.im));
            }
            sr /= (double)n; si /= (double)n; qr /= (double)n; qi /= (double)n; sab /= (double)n;
            if (normal) { /* each part N(0, 1/2), independent; E|z|^2 = 1 */
                CHECK(fabs(sr) < 5 * sqrt(0.5) / se && fabs(si) < 5 * sqrt(0.5) / se, "means %g %g", sr, si);
                CHECK(fabs(qr - 0.5) < 5 * 0.71 / se && fabs(qi - 0.5) < 5 * 0.71 / se, "variances %g %g", qr, qi);
                CHECK(fabs(qr + qi - 1.0) < 5 * 1.0 / se, "E|z|^2 = %g", qr + qi);
                CHECK(fabs(sab) < 5 * 0.5 / se, "E[re im] = %g", sab);
            } else { /* each part U[0, 1): mean 1/2, variance 1/12 */
                CHECK(lo >= 0 && hi < 1, "range [%g, %g]", lo, hi);
                CHECK(fabs(sr - 0.5) < 5 * 0.29 / se && fabs(si - 0.5) < 5 * 0.29 / se, "means %g %g", sr, si);
                CHECK(fabs(qr - sr * sr - 1.0 / 12) < 5 * 0.09 / se && fabs(qi - si * si - 1.0 / 12) < 5 * 0.09 / se,
                      "variances %g %g", qr - sr * sr, qi - si * si);
                CHECK(fabs(sab - 0.25) < 5 * 0.15 / se, "E[re im] = %g (independent parts: 1/4)", sab);
            }
            dt_tensor_destroy(x);
            free(full);
        }
    dtt_mesh_close(&m);
}

int main(int argc, char **argv)
{
    int twod;
    dtt_init(&argc, &argv, "complex");
    {
        const char *base = getenv("DT_TEST_TMPDIR");
        unsigned long id = (unsigned long)getpid();
        MPI_Bcast(&id, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
        snprintf(g_dir, sizeof g_dir, "%s/dt_test_complex.%lu", base && base[0] ? base : "/tmp", id);
        if (dtt_rank == 0) {
            static const char *const pys[2] = {"python3", "/usr/bin/python3"};
            char probe[128];
            int k;
            CHECK(mkdir(g_dir, 0755) == 0, "cannot make %s", g_dir);
            for (k = 0; k < 2 && !g_numpy; k++) {
                snprintf(probe, sizeof probe, "%s -c 'import numpy' >/dev/null 2>&1", pys[k]);
                if (system(probe) == 0) { g_numpy = 1; g_python = pys[k]; }
            }
            if (!g_numpy) fprintf(stderr, "test_complex: numpy not importable, numpy checks skipped\n");
        }
        MPI_Bcast(&g_numpy, 1, MPI_INT, 0, MPI_COMM_WORLD);
        barrier();
    }
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    dtt_self_mesh(&g_selfcomm, &g_self);
    if (g_comm && g_self) {
        test_basics();
        for (twod = 0; twod < 2; twod++) {
            test_bytes(twod);
            test_partial(twod);
            test_pointwise(twod);
            test_reduce(twod);
            test_matmul(twod);
            test_rng(twod);
        }
        test_partial_refused();
        test_refused_ops();
        test_npy();
        test_rng_stats();
    }
    barrier();
    if (dtt_rank == 0) { /* the npy files */
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
        CHECK(system(cmd) == 0, "rm %s", g_dir);
    }
    dt_mesh_destroy(g_self);
    dt_comm_destroy(g_selfcomm);
    dt_comm_destroy(g_comm);
    return dtt_finish();
}
