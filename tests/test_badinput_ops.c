/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_badinput_ops.c -- the ops, RNG, halo, conv, I/O and TP-layer half of
   the bad-input suite (test_badinput.c has comms, meshes, descs, tensors).

   Every failing call must return the exact dt_status, leave a dt_last_error()
   that names the public function (and the offending value where there is
   one: the dim, the dtype number, the scalar), and change nothing: after
   every case the fixtures' descs and local bytes are compared with a
   snapshot; each call runs twice, once with *out == NULL (it must stay
   NULL) and once with *out an existing tensor (identity and bytes kept).
   All ranks pass the same bad arguments (one-rank-only errors: test_check).

   Coverage (function -> cases; N = each pointer argument NULL, D = dim out
   of range incl. negative beyond -ndim, T = dtype mismatch / unsupported
   dtype, M = tensors on different meshes, S = shapes that do not fit,
   O = overflow, E = bad enum / scalar value):
     dt_neg abs exp log sqrt rsqrt sin cos tanh sigmoid relu gelu silu copy  N
     dt_scale shift fill       N, E (a = 2.5 for an i32 tensor)
     dt_pow                    N
     dt_cast                   N, E (to = 99, -1)
     dt_add sub mul div maximum minimum   N, T, M, S (no broadcast)
     dt_axpy                   N, T, M (y on another mesh), S, E (a = 0.5, i32)
     dt_sum mean max min norm2 argmax     N, D (2, -3, INT_MIN), dim twice,
                               ndims -1, argmax ndims 2; max min argmax
                               over a 0-size dim or all dims of no elements
     dt_cat stack add matmul reshape conv1d   O: results whose dims (0
                               counted as 1) overflow int64 from inputs
                               without elements
     dt_matmul                 N, S (k), T, M
     dt_mm bmm dot             N, S (ranks)
     dt_addmm                  N (c, a, b, out), S
     dt_linear                 N (x, w, out), S (w), T
     dt_softmax log_softmax    N, D (2, -3)
     dt_layer_norm rms_norm    N, S (w), T
     dt_transpose              N, D (d0, d1)
     dt_permute                N (x, perm), D, repeated dim
     dt_reshape                N (x, shape), ndim -1 / 9, O (INT64_MAX x 2),
                               two -1, S (element count)
     dt_squeeze unsqueeze      N, D
     dt_narrow                 N, D, start -1, length past the end, O (INT64_MAX)
     dt_cat stack              N (xs, xs[1], out), n 0 / 9, D, T, M, S
     dt_split                  N (x, sizes, outs), D, n 0, sizes negative /
                               not summing; outs untouched
     dt_embedding              N, S (1-D table), T (f32 idx), index out of range
     dt_cross_entropy          N, T (f32 target, i32 logits), index out of range
     dt_manual_seed rng_set_state rng_get_state   N
     dt_rng_save_state rng_load_state   N, unwritable path, missing file,
                               malformed file (IO); state unchanged
     dt_tensor_rand randn      N, desc: dtype 99, ndim -1, O, T (i32), a bad
                               split rule (sizes not adding up, block 0)
     dt_uniform_ normal_ bernoulli_ randint_   N, E (lo > hi, NaN, std < 0,
                               p 1.5, lo >= hi), T; tensor unchanged, RNG
                               offset unchanged
     dt_dropout                N (x, out), E (p 1.5, -0.1)
     dt_tensor_set_halo        N (t), E (width < 0, width past ndim,
                               boundary 7)
     dt_tensor_ghosted_data    N (answers NULL)
     dt_halo_exchange begin end  N, no halo set, end without begin
     dt_stencil_apply          N (x, fn, out), no halo
     dt_conv1d conv2d conv3d   N (x, w, out), S (x rank, channels), E
                               (padding -1)
     dt_tensor_save_npy        N (t, path), unwritable path (IO)
     dt_tensor_load_npy        N (m, path, out), missing / malformed file
                               (IO), placements that do not fit (PLACEMENT:
                               Shard(2) of a 2-D file, Partial reduce 9,
                               sizes NULL, split 7, cyclic block -2)
     dt_tp_linear_create mlp_create   N, in_features 0, style 7, dtype i32,
                               tp_dim unknown, dropout 1.5
     dt_tp_linear_forward backward zero_grad sgd, dt_tp_mlp_*   N, S (x),
                               T, backward before forward, lr NaN
     getters (tp weight/bias/grads/placements/fc1/fc2, explain,
       dt_mesh_op_cache_count, dt_mesh_dim_size)  N (documented answers)
     dt_set_checks / dt_get_checks take any int: no bad input.
   Not detectable (documented, not tested): destroyed objects (a freed
   dt_tensor / dt_mesh / dt_comm is use-after-free; the library keeps no
   registry), objects of another type passed through a cast, buffers
   shorter than the shape says, and a NULL input on only some ranks (that
   rank cannot know the mesh to tell the others). */
#define _POSIX_C_SOURCE 200112L /* getpid, mkdir, rmdir */
#define DTENSOR_IMPLEMENTATION
#include "dtensor_layers.h" /* includes dtensor.h */
#include "dt_test.h"
#include <limits.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

static dt_comm *g_comm = NULL;
static dt_mesh *g_mesh = NULL, *g_mesh2 = NULL;
static char g_dir[256];

/* ------------------------------------------------------------ fixtures */

#define NFIX 12
static dt_tensor *g_fix[NFIX];
static dt_tensor_desc g_fdesc[NFIX];
static unsigned char *g_fbytes[NFIX];
static int g_nfix = 0;
static dt_tensor *keep = NULL; /* an existing *out */

static dt_tensor *fixture(dt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, dt_placement p0, int seed)
{
    dt_tensor_desc d;
    dt_tensor *x = NULL;
    size_t i, n;
    unsigned char *p;
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = ndim;
    memcpy(d.shape, shape, (size_t)ndim * sizeof(int64_t));
    d.placements[0] = p0;
    CHECK_OK(dt_tensor_zeros(m, &d, &x));
    if (!x) return NULL;
    n = dt_tensor_local_numel(x) * dt_dtype_size(t);
    p = (unsigned char *)dt_tensor_data(x);
    if (t == DT_I32 || t == DT_I64) memset(p, 0, n); /* valid indices */
    else
        for (i = 0; i < n; i++) p[i] = (unsigned char)(i * 7 + (size_t)seed) & 0x3f; /* finite floats */
    g_fix[g_nfix] = x;
    g_fdesc[g_nfix] = *dt_tensor_get_desc(x);
    g_fbytes[g_nfix] = (unsigned char *)dtt_malloc(n + 1);
    memcpy(g_fbytes[g_nfix], p, n);
    g_nfix++;
    return x;
}

static int fixtures_ok(void)
{
    int i;
    for (i = 0; i < g_nfix; i++) {
        size_t n = dt_tensor_local_numel(g_fix[i]) * dt_dtype_size(g_fdesc[i].dtype);
        if (memcmp(dt_tensor_get_desc(g_fix[i]), &g_fdesc[i], sizeof g_fdesc[i])) return 0;
        if (n && memcmp(dt_tensor_data(g_fix[i]), g_fbytes[i], n)) return 0;
    }
    return 1;
}

static int keep_ok(void)
{
    const unsigned char *p = (const unsigned char *)dt_tensor_data(keep);
    size_t i, n = dt_tensor_local_numel(keep) * 4;
    for (i = 0; i < n; i++)
        if (p[i] != 0x3c) return 0;
    return 1;
}

/* the message gives the offending value (NULL: no value to give) */
static int has_val(const char *val) { return !val || strstr(dt_last_error(), val) != NULL; }

/* a failing call, run with *out NULL and with *out = keep. `call` uses `o`. */
#define BADV(want, fn, val, call)                                                                    \
    do {                                                                                             \
        dt_tensor *o = NULL;                                                                         \
        int rep_;                                                                                    \
        for (rep_ = 0; rep_ < 2; rep_++) {                                                           \
            o = rep_ ? keep : NULL;                                                                  \
            dt_clear_error();                                                                        \
            CHECK_ST(call, want);                                                                    \
            CHECK_ERRMSG(fn);                                                                        \
            CHECK(has_val(val), "%s: message lacks \"%s\": %s", #call, (const char *)(val), dt_last_error()); \
            CHECK(o == (rep_ ? keep : NULL), "%s: *out changed", #call);                             \
            if (o && o != keep) { dt_tensor_destroy(o); }                                            \
        }                                                                                            \
        CHECK(keep_ok(), "%s wrote into the existing *out", #call);                                  \
        CHECK(fixtures_ok(), "%s changed an input", #call);                                          \
    } while (0)
#define BAD(want, fn, call) BADV(want, fn, (const char *)NULL, call)
/* calls without *out */
#define BAD0(want, fn, call)                                                       \
    do {                                                                           \
        dt_clear_error();                                                          \
        CHECK_ST(call, want);                                                      \
        CHECK_ERRMSG(fn);                                                          \
        CHECK(fixtures_ok(), "%s changed an input", #call);                        \
    } while (0)

static dt_tensor *a, *b, *ai, *ad, *v, *a2, *m3, *v4, *xc, *wc, *al;

/* ------------------------------------------------------------ pointwise */

typedef dt_status (*unary_fn)(const dt_tensor *, dt_tensor **);

static void test_pointwise(void)
{
    static const struct { unary_fn f; const char *n; } un[] = {
        { dt_neg, "dt_neg" }, { dt_abs, "dt_abs" }, { dt_exp, "dt_exp" }, { dt_log, "dt_log" },
        { dt_sqrt, "dt_sqrt" }, { dt_rsqrt, "dt_rsqrt" }, { dt_sin, "dt_sin" }, { dt_cos, "dt_cos" },
        { dt_tanh, "dt_tanh" }, { dt_sigmoid, "dt_sigmoid" }, { dt_relu, "dt_relu" }, { dt_gelu, "dt_gelu" },
        { dt_silu, "dt_silu" }, { dt_copy, "dt_copy" } };
    typedef dt_status (*bin_fn)(const dt_tensor *, const dt_tensor *, dt_tensor **);
    static const struct { bin_fn f; const char *n; } bi[] = {
        { dt_add, "dt_add" }, { dt_sub, "dt_sub" }, { dt_mul, "dt_mul" }, { dt_div, "dt_div" },
        { dt_maximum, "dt_maximum" }, { dt_minimum, "dt_minimum" } };
    size_t i;
    dtt_ctx("pointwise");
    for (i = 0; i < sizeof un / sizeof un[0]; i++) {
        BAD(DT_ERR_ARG, un[i].n, un[i].f(NULL, &o));
        BAD0(DT_ERR_ARG, un[i].n, un[i].f(a, NULL));
    }
    BAD(DT_ERR_ARG, "dt_scale", dt_scale(NULL, 2.0, &o));
    BAD0(DT_ERR_ARG, "dt_scale", dt_scale(a, 2.0, NULL));
    BADV(DT_ERR_ARG, "dt_scale", "2.5", dt_scale(ai, 2.5, &o));
    BADV(DT_ERR_ARG, "dt_shift", "0.5", dt_shift(ai, 0.5, &o));
    BADV(DT_ERR_ARG, "dt_fill", "0.25", dt_fill(ai, 0.25, &o));
    BAD(DT_ERR_ARG, "dt_shift", dt_shift(NULL, 1.0, &o));
    BAD(DT_ERR_ARG, "dt_fill", dt_fill(NULL, 1.0, &o));
    BAD(DT_ERR_ARG, "dt_pow", dt_pow(NULL, 2.0, &o));
    BAD0(DT_ERR_ARG, "dt_pow", dt_pow(a, 2.0, NULL));
    BAD(DT_ERR_ARG, "dt_cast", dt_cast(NULL, DT_F64, &o));
    BAD0(DT_ERR_ARG, "dt_cast", dt_cast(a, DT_F64, NULL));
    BADV(DT_ERR_DTYPE, "dt_cast", "99", dt_cast(a, (dt_dtype)99, &o));
    BADV(DT_ERR_DTYPE, "dt_cast", "-1", dt_cast(a, (dt_dtype)-1, &o));
    for (i = 0; i < sizeof bi / sizeof bi[0]; i++) {
        BAD(DT_ERR_ARG, bi[i].n, bi[i].f(NULL, b, &o));
        BAD(DT_ERR_ARG, bi[i].n, bi[i].f(a, NULL, &o));
        BAD0(DT_ERR_ARG, bi[i].n, bi[i].f(a, b, NULL));
        BADV(DT_ERR_DTYPE, bi[i].n, "f64", bi[i].f(a, ad, &o));
        BAD(DT_ERR_MESH, bi[i].n, bi[i].f(a, a2, &o));
        BAD(DT_ERR_SHAPE, bi[i].n, bi[i].f(a, v4, &o));
    }
    BAD0(DT_ERR_ARG, "dt_axpy", dt_axpy(1.0, NULL, b));
    BAD0(DT_ERR_ARG, "dt_axpy", dt_axpy(1.0, a, NULL));
    BAD0(DT_ERR_DTYPE, "dt_axpy", dt_axpy(1.0, ad, b));
    BAD0(DT_ERR_MESH, "dt_axpy", dt_axpy(1.0, a, a2));
    BAD0(DT_ERR_SHAPE, "dt_axpy", dt_axpy(1.0, a, v4));
    BAD0(DT_ERR_SHAPE, "dt_axpy", dt_axpy(1.0, a, v)); /* y must keep its shape */
    BAD0(DT_ERR_ARG, "dt_axpy", dt_axpy(0.5, ai, ai));
}

/* ------------------------------------------------------------ reductions */

typedef dt_status (*red_fn)(const dt_tensor *, int, const int *, int, dt_tensor **);

static void test_reduce(void)
{
    static const struct { red_fn f; const char *n; } rd[] = {
        { dt_sum, "dt_sum" }, { dt_mean, "dt_mean" }, { dt_max, "dt_max" }, { dt_min, "dt_min" },
        { dt_norm2, "dt_norm2" }, { dt_argmax, "dt_argmax" } };
    int d2 = 2, dm3 = -3, dmin = INT_MIN, twice[2] = { 0, -2 }, zero = 0;
    size_t i;
    dtt_ctx("reductions");
    for (i = 0; i < sizeof rd / sizeof rd[0]; i++) {
        BAD(DT_ERR_ARG, rd[i].n, rd[i].f(NULL, 1, &zero, 0, &o));
        BAD0(DT_ERR_ARG, rd[i].n, rd[i].f(a, 1, &zero, 0, NULL));
        BADV(DT_ERR_ARG, rd[i].n, "-1", rd[i].f(a, -1, &zero, 0, &o));
        BADV(DT_ERR_SHAPE, rd[i].n, "= 2", rd[i].f(a, 1, &d2, 0, &o));
        BADV(DT_ERR_SHAPE, rd[i].n, "-3", rd[i].f(a, 1, &dm3, 1, &o));
        BAD(DT_ERR_SHAPE, rd[i].n, rd[i].f(a, 1, &dmin, 0, &o));
        BAD(i == 5 ? DT_ERR_ARG : DT_ERR_SHAPE, rd[i].n, rd[i].f(a, 2, twice, 0, &o));
    }
}

/* ------------------------------------------------------------ empty extents, huge shapes */

/* a tensor with no elements (nothing allocated) on g_mesh */
static dt_tensor *no_elements(dt_dtype t, int ndim, int64_t s0, int64_t s1, int64_t s2, dt_placement p0)
{
    dt_tensor_desc d;
    dt_tensor *x = NULL;
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = ndim;
    d.shape[0] = s0;
    d.shape[1] = s1;
    d.shape[2] = s2;
    d.placements[0] = p0;
    CHECK_OK(dt_tensor_zeros(g_mesh, &d, &x));
    return x;
}

/* max / min / argmax of nothing: DT_ERR_SHAPE naming the call and the shape
   (torch: "Expected reduction dim ... to have non-zero size"); over a
   non-empty dim of an empty tensor they give an empty result, and sums of
   nothing stay 0 */
static void test_empty_extents(void)
{
    static const struct { red_fn f; const char *n; } rd[] = {
        { dt_max, "dt_max" }, { dt_min, "dt_min" }, { dt_argmax, "dt_argmax" } };
    dt_tensor *e0 = no_elements(DT_F32, 2, 0, 3, 0, dt_shard(0)), *e1 = no_elements(DT_I64, 2, 4, 0, 0, dt_shard(0));
    int d0 = 0, d1 = 1, dm1 = -1;
    size_t i;
    dtt_ctx("empty extents");
    if (!e0 || !e1) goto done;
    for (i = 0; i < 3; i++) {
        BADV(DT_ERR_SHAPE, rd[i].n, "[0, 3]", rd[i].f(e0, 1, &d0, 0, &o));
        BADV(DT_ERR_SHAPE, rd[i].n, "[0, 3]", rd[i].f(e0, 1, &d0, 1, &o));
        BADV(DT_ERR_SHAPE, rd[i].n, "[0, 3]", rd[i].f(e0, 0, NULL, 0, &o)); /* all dims of no elements */
        BADV(DT_ERR_SHAPE, rd[i].n, "[4, 0]", rd[i].f(e1, 1, &dm1, 0, &o));
        BADV(DT_ERR_SHAPE, rd[i].n, "[4, 0]", rd[i].f(e1, 0, NULL, 1, &o));
    }
    for (i = 0; i < 3; i++) {
        dt_tensor *o = NULL;
        const dt_tensor_desc *od;
        CHECK_OK(rd[i].f(e0, 1, &d1, 0, &o));
        od = o ? dt_tensor_get_desc(o) : NULL;
        CHECK(od && od->ndim == 1 && od->shape[0] == 0, "%s over dim 1 of [0, 3]: want an empty [0]", rd[i].n);
        dt_tensor_destroy(o);
    }
    {
        dt_tensor *o = NULL;
        int64_t got[4] = { 7, 7, 7, 7 }, k;
        CHECK_OK(dt_sum(e1, 1, &d1, 0, &o));
        if (o) CHECK_OK(dt_tensor_gather(o, got));
        for (k = 0; k < 4; k++) CHECK(got[k] == 0, "dt_sum over the empty dim of [4, 0]: element %lld = %lld", (long long)k,
                                      (long long)got[k]);
        dt_tensor_destroy(o);
    }
done:
    dt_tensor_destroy(e0);
    dt_tensor_destroy(e1);
}

/* results whose extents overflow int64 (the size rule: dims, 0 counted
   as 1, times the element size) from inputs that obey it: refused before
   anything moves, *out untouched */
static void test_huge_shapes(void)
{
    const int64_t g62 = (int64_t)1 << 62, g40 = (int64_t)1 << 40, g31 = (int64_t)1 << 31, g30 = (int64_t)1 << 30;
    dt_tensor *u = no_elements(DT_U8, 2, 0, g62, 0, dt_replicate());
    dt_tensor *us = no_elements(DT_U8, 2, 0, g62, 0, dt_shard(1));
    dt_tensor *u1 = no_elements(DT_U8, 2, 0, g62 - 1, 0, dt_shard(1));
    dt_tensor *ba = no_elements(DT_U8, 3, 0, g40, 1, dt_replicate());
    dt_tensor *bb = no_elements(DT_U8, 3, 0, 1, g40, dt_replicate());
    dt_tensor *ma = no_elements(DT_F32, 2, g31, 0, 0, dt_shard(0));
    dt_tensor *mb = no_elements(DT_F32, 2, 0, g31, 0, dt_replicate());
    dt_tensor *r4 = no_elements(DT_U8, 2, 0, 4, 0, dt_shard(1));
    dt_tensor *cx = no_elements(DT_F32, 3, g30, 0, g30, dt_replicate());
    dt_tensor *cw = no_elements(DT_F32, 3, g30, 0, 1, dt_replicate());
    const dt_tensor *xs[2];
    int64_t shp[3];
    dt_conv_desc cd;
    dtt_ctx("huge shapes");
    if (!u || !us || !u1 || !ba || !bb || !ma || !mb || !r4 || !cx || !cw) goto done;
    xs[0] = u;
    xs[1] = u;
    BADV(DT_ERR_SHAPE, "dt_cat", "INT64_MAX", dt_cat(2, xs, 1, &o));       /* 2^62 + 2^62 */
    BADV(DT_ERR_SHAPE, "dt_stack", "overflow", dt_stack(2, xs, 0, &o));    /* [2, 0, 2^62] */
    xs[0] = us;
    xs[1] = us;
    BADV(DT_ERR_SHAPE, "dt_cat", "INT64_MAX", dt_cat(2, xs, -1, &o));
    BADV(DT_ERR_SHAPE, "dt_add", "overflow", dt_add(ba, bb, &o));          /* broadcast [0, 2^40, 2^40] */
    BADV(DT_ERR_SHAPE, "dt_matmul", "overflow", dt_matmul(ma, mb, &o));    /* f32 [2^31, 2^31] */
    shp[0] = 0; shp[1] = g62; shp[2] = 4;
    BADV(DT_ERR_SHAPE, "dt_reshape", "overflow", dt_reshape(r4, 3, shp, &o));
    memset(&cd, 0, sizeof cd);
    BADV(DT_ERR_SHAPE, "dt_conv1d", "overflow", dt_conv1d(cx, cw, NULL, &cd, &o)); /* [2^30, 2^30, 2^30] */
    { /* right at the limit: 2^62 + (2^62 - 1) = INT64_MAX fits */
        dt_tensor *o = NULL;
        xs[0] = us;
        xs[1] = u1;
        CHECK_OK(dt_cat(2, xs, 1, &o));
        CHECK(o && dt_tensor_get_desc(o)->shape[1] == INT64_MAX, "cat to [0, INT64_MAX]");
        dt_tensor_destroy(o);
    }
done:
    dt_tensor_destroy(u);
    dt_tensor_destroy(us);
    dt_tensor_destroy(u1);
    dt_tensor_destroy(ba);
    dt_tensor_destroy(bb);
    dt_tensor_destroy(ma);
    dt_tensor_destroy(mb);
    dt_tensor_destroy(r4);
    dt_tensor_destroy(cx);
    dt_tensor_destroy(cw);
}

/* ------------------------------------------------------------ matmul, norms */

static void test_matmul(void)
{
    dtt_ctx("matmul");
    BAD(DT_ERR_ARG, "dt_matmul", dt_matmul(NULL, m3, &o));
    BAD(DT_ERR_ARG, "dt_matmul", dt_matmul(a, NULL, &o));
    BAD0(DT_ERR_ARG, "dt_matmul", dt_matmul(a, m3, NULL));
    BAD(DT_ERR_SHAPE, "dt_matmul", dt_matmul(a, a, &o));
    BAD(DT_ERR_DTYPE, "dt_matmul", dt_matmul(ad, m3, &o));
    BAD(DT_ERR_MESH, "dt_matmul", dt_matmul(a2, m3, &o));
    BAD(DT_ERR_ARG, "dt_mm", dt_mm(NULL, m3, &o));
    BAD(DT_ERR_ARG, "dt_mm", dt_mm(a, NULL, &o));
    BADV(DT_ERR_SHAPE, "dt_mm", "1-d", dt_mm(a, v, &o));
    BAD(DT_ERR_ARG, "dt_bmm", dt_bmm(NULL, a, &o));
    BADV(DT_ERR_SHAPE, "dt_bmm", "2-d", dt_bmm(a, m3, &o));
    BAD(DT_ERR_ARG, "dt_dot", dt_dot(v, NULL, &o));
    BADV(DT_ERR_SHAPE, "dt_dot", "2-d", dt_dot(v, a, &o));
    BAD(DT_ERR_ARG, "dt_addmm", dt_addmm(NULL, a, m3, 1, 1, &o));
    BAD(DT_ERR_ARG, "dt_addmm", dt_addmm(a, NULL, m3, 1, 1, &o));
    BAD(DT_ERR_ARG, "dt_addmm", dt_addmm(a, a, NULL, 1, 1, &o));
    BAD0(DT_ERR_ARG, "dt_addmm", dt_addmm(a, a, m3, 1, 1, NULL));
    BAD(DT_ERR_SHAPE, "dt_addmm", dt_addmm(a, v, m3, 1, 1, &o));
    BAD(DT_ERR_ARG, "dt_linear", dt_linear(NULL, a, NULL, &o));
    BAD(DT_ERR_ARG, "dt_linear", dt_linear(a, NULL, NULL, &o));
    BAD0(DT_ERR_ARG, "dt_linear", dt_linear(a, al, NULL, NULL));
    BAD(DT_ERR_SHAPE, "dt_linear", dt_linear(a, m3, NULL, &o)); /* w [3, 4]: in 4 != 3 */
    BAD(DT_ERR_DTYPE, "dt_linear", dt_linear(ad, al, NULL, &o));
    BAD(DT_ERR_ARG, "dt_softmax", dt_softmax(NULL, 0, &o));
    BAD0(DT_ERR_ARG, "dt_softmax", dt_softmax(a, 0, NULL));
    BADV(DT_ERR_SHAPE, "dt_softmax", "= 2", dt_softmax(a, 2, &o));
    BADV(DT_ERR_SHAPE, "dt_log_softmax", "-3", dt_log_softmax(a, -3, &o));
    BAD(DT_ERR_ARG, "dt_layer_norm", dt_layer_norm(NULL, NULL, NULL, 1e-5, &o));
    BAD0(DT_ERR_ARG, "dt_layer_norm", dt_layer_norm(a, NULL, NULL, 1e-5, NULL));
    BAD(DT_ERR_SHAPE, "dt_layer_norm", dt_layer_norm(a, v4, NULL, 1e-5, &o));
    BAD(DT_ERR_DTYPE, "dt_layer_norm", dt_layer_norm(ad, v, NULL, 1e-5, &o));
    BAD(DT_ERR_ARG, "dt_rms_norm", dt_rms_norm(NULL, NULL, 1e-5, &o));
    BAD(DT_ERR_SHAPE, "dt_rms_norm", dt_rms_norm(a, v4, 1e-5, &o));
    BAD(DT_ERR_DTYPE, "dt_rms_norm", dt_rms_norm(ad, v, 1e-5, &o));
}

/* ------------------------------------------------------------ views */

static void test_views(void)
{
    int perm_bad[2] = { 0, 2 }, perm_rep[2] = { 1, -1 };
    int64_t shp[3] = { 1, 1, 1 }, sizes[3];
    const dt_tensor *xs[9];
    dt_tensor *outs[3];
    int i;
    dtt_ctx("views");
    for (i = 0; i < 9; i++) xs[i] = a;
    BAD(DT_ERR_ARG, "dt_transpose", dt_transpose(NULL, 0, 1, &o));
    BAD0(DT_ERR_ARG, "dt_transpose", dt_transpose(a, 0, 1, NULL));
    BADV(DT_ERR_SHAPE, "dt_transpose", "d0 = 2", dt_transpose(a, 2, 1, &o));
    BADV(DT_ERR_SHAPE, "dt_transpose", "d1 = -3", dt_transpose(a, 0, -3, &o));
    BAD(DT_ERR_ARG, "dt_permute", dt_permute(NULL, perm_bad, &o));
    BAD(DT_ERR_ARG, "dt_permute", dt_permute(a, NULL, &o));
    BADV(DT_ERR_SHAPE, "dt_permute", "= 2", dt_permute(a, perm_bad, &o));
    BADV(DT_ERR_SHAPE, "dt_permute", "twice", dt_permute(a, perm_rep, &o));
    BAD(DT_ERR_ARG, "dt_reshape", dt_reshape(NULL, 1, shp, &o));
    BAD(DT_ERR_ARG, "dt_reshape", dt_reshape(a, 1, NULL, &o));
    BADV(DT_ERR_SHAPE, "dt_reshape", "-1", dt_reshape(a, -1, shp, &o));
    BADV(DT_ERR_SHAPE, "dt_reshape", "9", dt_reshape(a, DT_MAX_DIMS + 1, shp, &o));
    shp[0] = INT64_MAX; shp[1] = 2;
    BADV(DT_ERR_SHAPE, "dt_reshape", "overflow", dt_reshape(a, 2, shp, &o));
    shp[0] = -1; shp[1] = -1;
    BAD(DT_ERR_SHAPE, "dt_reshape", dt_reshape(a, 2, shp, &o));
    shp[0] = 5; shp[1] = 7;
    BAD(DT_ERR_SHAPE, "dt_reshape", dt_reshape(a, 2, shp, &o));
    shp[0] = -1; shp[1] = 0;
    BAD(DT_ERR_SHAPE, "dt_reshape", dt_reshape(a, 2, shp, &o));
    BAD(DT_ERR_ARG, "dt_squeeze", dt_squeeze(NULL, 0, &o));
    BADV(DT_ERR_SHAPE, "dt_squeeze", "= 2", dt_squeeze(a, 2, &o));
    BADV(DT_ERR_SHAPE, "dt_squeeze", "-3", dt_squeeze(a, -3, &o));
    BAD(DT_ERR_ARG, "dt_unsqueeze", dt_unsqueeze(NULL, 0, &o));
    BADV(DT_ERR_SHAPE, "dt_unsqueeze", "= 3", dt_unsqueeze(a, 3, &o));
    BADV(DT_ERR_SHAPE, "dt_unsqueeze", "-4", dt_unsqueeze(a, -4, &o));
    BAD(DT_ERR_ARG, "dt_narrow", dt_narrow(NULL, 0, 0, 1, &o));
    BADV(DT_ERR_SHAPE, "dt_narrow", "= 2", dt_narrow(a, 2, 0, 1, &o));
    BAD(DT_ERR_SHAPE, "dt_narrow", dt_narrow(a, 1, -1, 1, &o));
    BAD(DT_ERR_SHAPE, "dt_narrow", dt_narrow(a, 1, 1, 3, &o));
    BAD(DT_ERR_SHAPE, "dt_narrow", dt_narrow(a, 1, 1, -1, &o));
    BAD(DT_ERR_SHAPE, "dt_narrow", dt_narrow(a, 1, INT64_MAX, INT64_MAX, &o));
    BAD(DT_ERR_SHAPE, "dt_narrow", dt_narrow(a, 1, 2, INT64_MAX, &o));
    BAD(DT_ERR_ARG, "dt_cat", dt_cat(2, NULL, 0, &o));
    BADV(DT_ERR_ARG, "dt_cat", "n = 0", dt_cat(0, xs, 0, &o));
    BADV(DT_ERR_ARG, "dt_cat", "n = 9", dt_cat(9, xs, 0, &o));
    BADV(DT_ERR_ARG, "dt_cat", "-1", dt_cat(-1, xs, 0, &o));
    BAD0(DT_ERR_ARG, "dt_cat", dt_cat(2, xs, 0, NULL));
    BADV(DT_ERR_SHAPE, "dt_cat", "= 2", dt_cat(2, xs, 2, &o));
    BADV(DT_ERR_SHAPE, "dt_stack", "= 3", dt_stack(2, xs, 3, &o));
    BADV(DT_ERR_SHAPE, "dt_stack", "-4", dt_stack(2, xs, -4, &o));
    xs[1] = NULL;
    BADV(DT_ERR_ARG, "dt_cat", "xs[1]", dt_cat(2, xs, 0, &o));
    BADV(DT_ERR_ARG, "dt_stack", "xs[1]", dt_stack(2, xs, 0, &o));
    xs[1] = ad;
    BAD(DT_ERR_DTYPE, "dt_cat", dt_cat(2, xs, 0, &o));
    xs[1] = a2;
    BAD(DT_ERR_MESH, "dt_cat", dt_cat(2, xs, 0, &o));
    xs[1] = v4;
    BAD(DT_ERR_SHAPE, "dt_cat", dt_cat(2, xs, 0, &o));
    BAD(DT_ERR_SHAPE, "dt_stack", dt_stack(2, xs, 0, &o));
    xs[1] = a;
    /* split: outs untouched */
    sizes[0] = 1; sizes[1] = 2; sizes[2] = 0;
    for (i = 0; i < 3; i++) outs[i] = NULL;
#define SPLIT_BAD(want, val, call)                                                     \
    do {                                                                               \
        dt_clear_error();                                                              \
        CHECK_ST(call, want);                                                          \
        CHECK_ERRMSG("dt_split");                                                      \
        CHECK(has_val(val), "%s: %s", #call, dt_last_error());                                       \
        CHECK(outs[0] == NULL && outs[1] == NULL && outs[2] == NULL, "%s set outs", #call); \
        CHECK(fixtures_ok(), "%s changed an input", #call);                           \
    } while (0)
    SPLIT_BAD(DT_ERR_ARG, NULL, dt_split(NULL, 1, 2, sizes, outs));
    SPLIT_BAD(DT_ERR_ARG, NULL, dt_split(a, 1, 2, NULL, outs));
    SPLIT_BAD(DT_ERR_ARG, NULL, dt_split(a, 1, 2, sizes, NULL));
    SPLIT_BAD(DT_ERR_ARG, "n = 0", dt_split(a, 1, 0, sizes, outs));
    SPLIT_BAD(DT_ERR_SHAPE, "= 2", dt_split(a, 2, 2, sizes, outs));
    SPLIT_BAD(DT_ERR_SHAPE, "-3", dt_split(a, -3, 2, sizes, outs));
    SPLIT_BAD(DT_ERR_SHAPE, "add up", dt_split(a, 1, 1, sizes, outs));
    sizes[0] = -1; sizes[1] = 4;
    SPLIT_BAD(DT_ERR_SHAPE, "sizes[0] = -1", dt_split(a, 1, 2, sizes, outs));
    sizes[0] = INT64_MAX; sizes[1] = INT64_MAX;
    SPLIT_BAD(DT_ERR_SHAPE, NULL, dt_split(a, 1, 2, sizes, outs));
    sizes[0] = 2 * dtt_np; sizes[1] = 1;
    SPLIT_BAD(DT_ERR_SHAPE, NULL, dt_split(a, 0, 2, sizes, outs)); /* sharded dim: refused before it moves */
#undef SPLIT_BAD
}

/* ------------------------------------------------------------ embedding, cross entropy */

static void test_index_ops(void)
{
    dt_tensor *idx = NULL, *bad = NULL;
    dt_tensor_desc d;
    int64_t vals[4] = { 0, 1, 2, 1 };
    dtt_ctx("index ops");
    memset(&d, 0, sizeof d);
    d.dtype = DT_I64;
    d.ndim = 1;
    d.shape[0] = 4;
    CHECK_OK(dt_tensor_distribute(g_mesh, &d, vals, DT_SRC_ALL, &idx));
    vals[2] = 2 * dtt_np; /* == V: out of range */
    CHECK_OK(dt_tensor_distribute(g_mesh, &d, vals, DT_SRC_ALL, &bad));
    if (!idx || !bad) return;
    BAD(DT_ERR_ARG, "dt_embedding", dt_embedding(NULL, idx, &o));
    BAD(DT_ERR_ARG, "dt_embedding", dt_embedding(a, NULL, &o));
    BAD0(DT_ERR_ARG, "dt_embedding", dt_embedding(a, idx, NULL));
    BADV(DT_ERR_SHAPE, "dt_embedding", "1-d", dt_embedding(v, idx, &o));
    BADV(DT_ERR_DTYPE, "dt_embedding", "f32", dt_embedding(a, v4, &o));
    BADV(DT_ERR_ARG, "dt_embedding", "holds", dt_embedding(a, bad, &o));
    vals[2] = 3; /* cross entropy: 3 classes */
    BAD(DT_ERR_ARG, "dt_cross_entropy", dt_cross_entropy(NULL, idx, &o));
    BAD(DT_ERR_ARG, "dt_cross_entropy", dt_cross_entropy(m3, NULL, &o));
    BAD0(DT_ERR_ARG, "dt_cross_entropy", dt_cross_entropy(m3, idx, NULL));
    BAD(DT_ERR_DTYPE, "dt_cross_entropy", dt_cross_entropy(m3, v4, &o));
    BAD(DT_ERR_DTYPE, "dt_cross_entropy", dt_cross_entropy(ai, idx, &o));
    dt_tensor_destroy(bad);
    dt_tensor_destroy(idx);
}

/* ------------------------------------------------------------ rng */

static void test_rng(void)
{
    uint64_t s0, o0, s1, o1, s;
    dt_tensor_desc d;
    char path[300];
    FILE *f;
    dtt_ctx("rng");
    CHECK_OK(dt_manual_seed(g_mesh, 5));
    CHECK_OK(dt_rng_get_state(g_mesh, &s0, &o0));
    BAD0(DT_ERR_ARG, "dt_manual_seed", dt_manual_seed(NULL, 1));
    BAD0(DT_ERR_ARG, "dt_rng_set_state", dt_rng_set_state(NULL, 1, 0));
    BAD0(DT_ERR_ARG, "dt_rng_get_state", dt_rng_get_state(NULL, &s, &s));
    BAD0(DT_ERR_ARG, "dt_rng_save_state", dt_rng_save_state(NULL, "x"));
    BAD0(DT_ERR_ARG, "dt_rng_save_state", dt_rng_save_state(g_mesh, NULL));
    BAD0(DT_ERR_IO, "dt_rng_save_state", dt_rng_save_state(g_mesh, "/nonexistent-dir/x/state"));
    BAD0(DT_ERR_ARG, "dt_rng_load_state", dt_rng_load_state(NULL, "x"));
    BAD0(DT_ERR_ARG, "dt_rng_load_state", dt_rng_load_state(g_mesh, NULL));
    BAD0(DT_ERR_IO, "dt_rng_load_state", dt_rng_load_state(g_mesh, "/nonexistent-dir/x/state"));
    snprintf(path, sizeof path, "%s/garbage.bin", g_dir);
    if (dtt_rank == 0 && (f = fopen(path, "wb")) != NULL) { fputs("not a state file at all", f); fclose(f); }
    dt_comm_barrier(g_comm);
    BAD0(DT_ERR_IO, "dt_rng_load_state", dt_rng_load_state(g_mesh, path));
    memset(&d, 0, sizeof d);
    d.dtype = DT_F32;
    d.ndim = 1;
    d.shape[0] = 4;
    BAD(DT_ERR_ARG, "dt_tensor_rand", dt_tensor_rand(NULL, &d, &o));
    BAD(DT_ERR_ARG, "dt_tensor_rand", dt_tensor_rand(g_mesh, NULL, &o));
    BAD0(DT_ERR_ARG, "dt_tensor_rand", dt_tensor_rand(g_mesh, &d, NULL));
    BAD0(DT_ERR_ARG, "dt_tensor_randn", dt_tensor_randn(g_mesh, &d, NULL));
    d.dtype = (dt_dtype)99;
    BADV(DT_ERR_DTYPE, "dt_tensor_rand", "99", dt_tensor_rand(g_mesh, &d, &o));
    d.dtype = DT_I32;
    BAD(DT_ERR_DTYPE, "dt_tensor_randn", dt_tensor_randn(g_mesh, &d, &o));
    d.dtype = DT_F32;
    d.ndim = -1;
    BAD(DT_ERR_SHAPE, "dt_tensor_randn", dt_tensor_randn(g_mesh, &d, &o));
    d.ndim = 2;
    d.shape[0] = d.shape[1] = (int64_t)1 << 40;
    BAD(DT_ERR_SHAPE, "dt_tensor_rand", dt_tensor_rand(g_mesh, &d, &o));
    { /* a bad split rule */
        static const int64_t one[64] = { 1 };
        d.shape[0] = 4 + dtt_np;
        d.shape[1] = 3;
        d.placements[0] = dt_shard_sizes(0, one); /* 1, then zeros: never 4 + np */
        BAD(DT_ERR_PLACEMENT, "dt_tensor_rand", dt_tensor_rand(g_mesh, &d, &o));
        d.placements[0] = dt_shard_cyclic(1, 0);
        BAD(DT_ERR_PLACEMENT, "dt_tensor_randn", dt_tensor_randn(g_mesh, &d, &o));
        d.placements[0] = dt_replicate();
    }
    BAD0(DT_ERR_ARG, "dt_uniform_", dt_uniform_(NULL, 0, 1));
    BAD0(DT_ERR_ARG, "dt_uniform_", dt_uniform_(a, 1, 0));
    BAD0(DT_ERR_ARG, "dt_uniform_", dt_uniform_(a, NAN, 1));
    BAD0(DT_ERR_ARG, "dt_normal_", dt_normal_(NULL, 0, 1));
    BADV(DT_ERR_ARG, "dt_normal_", "-1", dt_normal_(a, 0, -1));
    BAD0(DT_ERR_DTYPE, "dt_normal_", dt_normal_(ai, 0, 1));
    BAD0(DT_ERR_ARG, "dt_bernoulli_", dt_bernoulli_(NULL, 0.5));
    BADV(DT_ERR_ARG, "dt_bernoulli_", "1.5", dt_bernoulli_(a, 1.5));
    BAD0(DT_ERR_ARG, "dt_bernoulli_", dt_bernoulli_(a, NAN));
    BAD0(DT_ERR_ARG, "dt_randint_", dt_randint_(NULL, 0, 3));
    BAD0(DT_ERR_ARG, "dt_randint_", dt_randint_(ai, 3, 3));
    BAD0(DT_ERR_ARG, "dt_randint_", dt_randint_(ai, 4, -4));
    {
        dt_tensor *mask = NULL;
        BAD(DT_ERR_ARG, "dt_dropout", dt_dropout(NULL, 0.5, &o, &mask));
        BAD0(DT_ERR_ARG, "dt_dropout", dt_dropout(a, 0.5, NULL, &mask));
        BADV(DT_ERR_ARG, "dt_dropout", "1.5", dt_dropout(a, 1.5, &o, &mask));
        BAD(DT_ERR_ARG, "dt_dropout", dt_dropout(a, -0.1, &o, &mask));
        BAD(DT_ERR_ARG, "dt_dropout", dt_dropout(a, NAN, &o, NULL));
        CHECK(mask == NULL, "dt_dropout set *mask on a failure");
    }
    CHECK_OK(dt_rng_get_state(g_mesh, &s1, &o1));
    CHECK(s0 == s1 && o0 == o1, "a refused call moved the RNG state");
}

/* ------------------------------------------------------------ halo, stencil, conv */

static void dummy_stencil(const dt_stencil_block *blk, void *user) { (void)blk; (void)user; }

static void test_halo_conv(void)
{
    dt_halo_desc h;
    dt_conv_desc cd;
    int64_t gs[DT_MAX_DIMS];
    dtt_ctx("halo");
    memset(&h, 0, sizeof h);
    h.width[0] = 1;
    BAD0(DT_ERR_ARG, "dt_tensor_set_halo", dt_tensor_set_halo(NULL, &h));
    h.width[0] = -1;
    BADV(DT_ERR_ARG, "dt_tensor_set_halo", "-1", dt_tensor_set_halo(a, &h));
    h.width[0] = 1;
    h.width[5] = 1;
    BAD0(DT_ERR_ARG, "dt_tensor_set_halo", dt_tensor_set_halo(a, &h));
    h.width[5] = 0;
    h.boundary[1] = 7;
    BADV(DT_ERR_ARG, "dt_tensor_set_halo", "7", dt_tensor_set_halo(a, &h));
    h.boundary[1] = 0;
    h.width[0] = INT64_MAX;
    BAD0(DT_ERR_SHAPE, "dt_tensor_set_halo", dt_tensor_set_halo(a, &h));
    memset(gs, 0x5a, sizeof gs);
    CHECK(dt_tensor_ghosted_data(NULL, gs) == NULL, "ghosted_data(NULL)");
    CHECK(dt_tensor_ghosted_data(a, gs) == NULL, "ghosted_data of a tensor without halo");
    BAD0(DT_ERR_ARG, "dt_halo_exchange", dt_halo_exchange(NULL));
    BAD0(DT_ERR_ARG, "dt_halo_exchange", dt_halo_exchange(a));
    BAD0(DT_ERR_ARG, "dt_halo_exchange_begin", dt_halo_exchange_begin(NULL));
    BAD0(DT_ERR_ARG, "dt_halo_exchange_begin", dt_halo_exchange_begin(a));
    BAD0(DT_ERR_ARG, "dt_halo_exchange_end", dt_halo_exchange_end(NULL));
    BAD0(DT_ERR_ARG, "dt_halo_exchange_end", dt_halo_exchange_end(a));
    BAD(DT_ERR_ARG, "dt_stencil_apply", dt_stencil_apply(NULL, dummy_stencil, NULL, &o));
    BAD(DT_ERR_ARG, "dt_stencil_apply", dt_stencil_apply(a, NULL, NULL, &o));
    BAD0(DT_ERR_ARG, "dt_stencil_apply", dt_stencil_apply(a, dummy_stencil, NULL, NULL));
    BAD(DT_ERR_ARG, "dt_stencil_apply", dt_stencil_apply(a, dummy_stencil, NULL, &o));
    dtt_ctx("conv");
    memset(&cd, 0, sizeof cd);
    BAD(DT_ERR_ARG, "dt_conv1d", dt_conv1d(NULL, wc, NULL, &cd, &o));
    BAD(DT_ERR_ARG, "dt_conv1d", dt_conv1d(xc, NULL, NULL, &cd, &o));
    BAD0(DT_ERR_ARG, "dt_conv1d", dt_conv1d(xc, wc, NULL, &cd, NULL));
    BAD(DT_ERR_SHAPE, "dt_conv2d", dt_conv2d(xc, wc, NULL, &cd, &o));
    BAD(DT_ERR_SHAPE, "dt_conv3d", dt_conv3d(xc, wc, NULL, &cd, &o));
    BAD(DT_ERR_SHAPE, "dt_conv1d", dt_conv1d(xc, m3, NULL, &cd, &o)); /* w 2-D */
    BAD(DT_ERR_SHAPE, "dt_conv1d", dt_conv1d(xc, wc, v, &cd, &o));    /* bias [3], C_out 4 */
    cd.padding[0] = -1;
    BADV(DT_ERR_ARG, "dt_conv1d", "-1", dt_conv1d(xc, wc, NULL, &cd, &o));
    cd.padding[0] = 0;
    cd.dilation[0] = -2;
    BAD(DT_ERR_ARG, "dt_conv1d", dt_conv1d(xc, wc, NULL, &cd, &o));
}

/* ------------------------------------------------------------ npy */

static void test_npy(void)
{
    char path[300], garbage[300];
    dt_placement pl[DT_MAX_MESH_DIMS];
    FILE *f;
    dtt_ctx("npy");
    memset(pl, 0, sizeof pl);
    snprintf(path, sizeof path, "%s/a.npy", g_dir);
    snprintf(garbage, sizeof garbage, "%s/garbage.npy", g_dir);
    if (dtt_rank == 0 && (f = fopen(garbage, "wb")) != NULL) { fputs("\x93NUMPY\x01\x00zz{'descr': '<q8', 'fortran_order': True", f); fclose(f); }
    dt_comm_barrier(g_comm);
    BAD0(DT_ERR_ARG, "dt_tensor_save_npy", dt_tensor_save_npy(NULL, path));
    BAD0(DT_ERR_ARG, "dt_tensor_save_npy", dt_tensor_save_npy(a, NULL));
    BAD0(DT_ERR_IO, "dt_tensor_save_npy", dt_tensor_save_npy(a, "/nonexistent-dir/x/a.npy"));
    CHECK_OK(dt_tensor_save_npy(a, path));
    BAD(DT_ERR_ARG, "dt_tensor_load_npy", dt_tensor_load_npy(NULL, path, pl, &o));
    BAD(DT_ERR_ARG, "dt_tensor_load_npy", dt_tensor_load_npy(g_mesh, NULL, pl, &o));
    BAD0(DT_ERR_ARG, "dt_tensor_load_npy", dt_tensor_load_npy(g_mesh, path, pl, NULL));
    BAD(DT_ERR_IO, "dt_tensor_load_npy", dt_tensor_load_npy(g_mesh, "/nonexistent-dir/x/a.npy", pl, &o));
    BAD(DT_ERR_IO, "dt_tensor_load_npy", dt_tensor_load_npy(g_mesh, garbage, pl, &o));
    pl[0] = dt_shard(2);
    BADV(DT_ERR_PLACEMENT, "dt_tensor_load_npy", "2", dt_tensor_load_npy(g_mesh, path, pl, &o));
    pl[0] = dt_partial((dt_reduce)9); /* (only the mesh's ndim entries are read) */
    BAD(DT_ERR_PLACEMENT, "dt_tensor_load_npy", dt_tensor_load_npy(g_mesh, path, pl, &o));
    { /* a bad split rule */
        static const int64_t one[64] = { 1 };
        pl[0] = dt_shard_sizes(0, NULL);
        BAD(DT_ERR_PLACEMENT, "dt_tensor_load_npy", dt_tensor_load_npy(g_mesh, path, pl, &o));
        pl[0] = dt_shard_sizes(1, one);
        pl[0].sizes = one;
        pl[0].block = 0;
        pl[0].split = 7;
        BAD(DT_ERR_PLACEMENT, "dt_tensor_load_npy", dt_tensor_load_npy(g_mesh, path, pl, &o));
        pl[0] = dt_shard_cyclic(0, -2);
        BAD(DT_ERR_PLACEMENT, "dt_tensor_load_npy", dt_tensor_load_npy(g_mesh, path, pl, &o));
    }
    if (dtt_rank == 0) { remove(path); remove(garbage); }
}

/* ------------------------------------------------------------ tp layers, getters */

static void test_tp(void)
{
    dt_tp_linear_desc ld;
    dt_tp_mlp_desc md;
    dt_tp_linear *l = NULL, *lsent = (dt_tp_linear *)(void *)&ld;
    dt_tp_mlp *mlp = NULL, *msent = (dt_tp_mlp *)(void *)&md;
    dt_tp_linear *lo;
    dt_tp_mlp *mo;
    dtt_ctx("tp layers");
    memset(&ld, 0, sizeof ld);
    ld.in_features = 3;
    ld.out_features = 2 * dtt_np;
    memset(&md, 0, sizeof md);
    md.in_features = 3;
    md.hidden_features = 2 * dtt_np;
#define TPBAD(want, fn, val, call, outv, sent)                                                      \
    do {                                                                                           \
        outv = sent;                                                                               \
        dt_clear_error();                                                                          \
        CHECK_ST(call, want);                                                                      \
        CHECK_ERRMSG(fn);                                                                          \
        CHECK(has_val(val), "%s: %s", #call, dt_last_error());                                       \
        CHECK(outv == sent, "%s: *out changed", #call);                                           \
    } while (0)
    TPBAD(DT_ERR_ARG, "dt_tp_linear_create", NULL, dt_tp_linear_create(NULL, &ld, &lo), lo, lsent);
    TPBAD(DT_ERR_ARG, "dt_tp_linear_create", NULL, dt_tp_linear_create(g_mesh, NULL, &lo), lo, lsent);
    TPBAD(DT_ERR_ARG, "dt_tp_linear_create", NULL, dt_tp_linear_create(g_mesh, &ld, NULL), lo, lsent);
    ld.in_features = 0;
    TPBAD(DT_ERR_ARG, "dt_tp_linear_create", "0", dt_tp_linear_create(g_mesh, &ld, &lo), lo, lsent);
    ld.in_features = -3;
    TPBAD(DT_ERR_ARG, "dt_tp_linear_create", "-3", dt_tp_linear_create(g_mesh, &ld, &lo), lo, lsent);
    ld.in_features = INT64_MAX;
    ld.out_features = INT64_MAX;
    TPBAD(DT_ERR_SHAPE, "dt_tp_linear_create", NULL, dt_tp_linear_create(g_mesh, &ld, &lo), lo, lsent);
    ld.in_features = 3;
    ld.out_features = 2 * dtt_np;
    ld.style = (dt_tp_style)7;
    TPBAD(DT_ERR_ARG, "dt_tp_linear_create", "7", dt_tp_linear_create(g_mesh, &ld, &lo), lo, lsent);
    ld.style = DT_TP_COLWISE;
    ld.dtype = DT_I32;
    TPBAD(DT_ERR_DTYPE, "dt_tp_linear_create", NULL, dt_tp_linear_create(g_mesh, &ld, &lo), lo, lsent);
    ld.dtype = DT_F32;
    ld.tp_dim = "nope";
    TPBAD(DT_ERR_MESH, "dt_tp_linear_create", "nope", dt_tp_linear_create(g_mesh, &ld, &lo), lo, lsent);
    ld.tp_dim = NULL;
    ld.init = (dt_tp_init)9;
    TPBAD(DT_ERR_ARG, "dt_tp_linear_create", "9", dt_tp_linear_create(g_mesh, &ld, &lo), lo, lsent);
    ld.init = DT_TP_INIT_ZEROS;
    CHECK_OK(dt_tp_linear_create(g_mesh, &ld, &l));
    TPBAD(DT_ERR_ARG, "dt_tp_mlp_create", NULL, dt_tp_mlp_create(NULL, &md, &mo), mo, msent);
    TPBAD(DT_ERR_ARG, "dt_tp_mlp_create", NULL, dt_tp_mlp_create(g_mesh, NULL, &mo), mo, msent);
    TPBAD(DT_ERR_ARG, "dt_tp_mlp_create", NULL, dt_tp_mlp_create(g_mesh, &md, NULL), mo, msent);
    md.dropout = 1.5;
    TPBAD(DT_ERR_ARG, "dt_tp_mlp_create", "1.5", dt_tp_mlp_create(g_mesh, &md, &mo), mo, msent);
    md.dropout = 0;
    md.hidden_features = 0;
    TPBAD(DT_ERR_ARG, "dt_tp_mlp_create", NULL, dt_tp_mlp_create(g_mesh, &md, &mo), mo, msent);
    md.hidden_features = 2 * dtt_np;
    md.activation = (dt_tp_activation)5;
    TPBAD(DT_ERR_ARG, "dt_tp_mlp_create", "5", dt_tp_mlp_create(g_mesh, &md, &mo), mo, msent);
    md.activation = DT_TP_RELU;
    md.dtype = DT_U8;
    TPBAD(DT_ERR_DTYPE, "dt_tp_mlp_create", NULL, dt_tp_mlp_create(g_mesh, &md, &mo), mo, msent);
    md.dtype = DT_F32;
    CHECK_OK(dt_tp_mlp_create(g_mesh, &md, &mlp));
    if (l) {
        dt_tensor *dx = NULL;
        BAD(DT_ERR_ARG, "dt_tp_linear_forward", dt_tp_linear_forward(NULL, a, &o));
        BAD(DT_ERR_ARG, "dt_tp_linear_forward", dt_tp_linear_forward(l, NULL, &o));
        BAD0(DT_ERR_ARG, "dt_tp_linear_forward", dt_tp_linear_forward(l, a, NULL));
        BAD(DT_ERR_SHAPE, "dt_tp_linear_forward", dt_tp_linear_forward(l, m3, &o));
        BAD(DT_ERR_DTYPE, "dt_tp_linear_forward", dt_tp_linear_forward(l, ad, &o));
        BAD(DT_ERR_ARG, "dt_tp_linear_backward", dt_tp_linear_backward(NULL, a, a, &o));
        BAD(DT_ERR_ARG, "dt_tp_linear_backward", dt_tp_linear_backward(l, NULL, a, &o));
        BAD(DT_ERR_ARG, "dt_tp_linear_backward", dt_tp_linear_backward(l, a, NULL, &o));
        BAD(DT_ERR_SHAPE, "dt_tp_linear_backward", dt_tp_linear_backward(l, a, m3, &o));
        BAD0(DT_ERR_ARG, "dt_tp_linear_zero_grad", dt_tp_linear_zero_grad(NULL));
        BAD0(DT_ERR_ARG, "dt_tp_linear_sgd", dt_tp_linear_sgd(NULL, 0.1));
        BAD0(DT_ERR_ARG, "dt_tp_linear_sgd", dt_tp_linear_sgd(l, NAN));
        (void)dx;
    }
    if (mlp) {
        BAD(DT_ERR_ARG, "dt_tp_mlp_forward", dt_tp_mlp_forward(NULL, a, 0, &o));
        BAD(DT_ERR_ARG, "dt_tp_mlp_forward", dt_tp_mlp_forward(mlp, NULL, 0, &o));
        BAD0(DT_ERR_ARG, "dt_tp_mlp_forward", dt_tp_mlp_forward(mlp, a, 0, NULL));
        BAD(DT_ERR_SHAPE, "dt_tp_mlp_forward", dt_tp_mlp_forward(mlp, m3, 0, &o));
        BAD(DT_ERR_ARG, "dt_tp_mlp_backward", dt_tp_mlp_backward(NULL, a, a, &o));
        BAD(DT_ERR_ARG, "dt_tp_mlp_backward", dt_tp_mlp_backward(mlp, a, NULL, &o));
        BADV(DT_ERR_ARG, "dt_tp_mlp_backward", "forward", dt_tp_mlp_backward(mlp, a, m3, &o)); /* no forward yet */
        BAD0(DT_ERR_ARG, "dt_tp_mlp_zero_grad", dt_tp_mlp_zero_grad(NULL));
        BAD0(DT_ERR_ARG, "dt_tp_mlp_sgd", dt_tp_mlp_sgd(NULL, 0.1));
    }
#undef TPBAD
    /* getters and destroys with NULL: documented answers, no crash */
    CHECK(dt_tp_linear_weight(NULL) == NULL && dt_tp_linear_bias(NULL) == NULL && dt_tp_linear_grad_weight(NULL) == NULL &&
          dt_tp_linear_grad_bias(NULL) == NULL, "tp linear getters of NULL");
    CHECK(dt_tp_linear_input_placement(NULL).kind == DT_REPLICATE && dt_tp_linear_output_placement(NULL).kind == DT_REPLICATE,
          "tp placements of NULL");
    CHECK(dt_tp_mlp_fc1(NULL) == NULL && dt_tp_mlp_fc2(NULL) == NULL, "mlp getters of NULL");
    dt_tp_linear_destroy(NULL);
    dt_tp_mlp_destroy(NULL);
    dt_tp_mlp_destroy(mlp);
    dt_tp_linear_destroy(l);
    dtt_ctx("misc");
    BAD0(DT_ERR_ARG, "dt_explain", dt_explain(NULL, stderr));
    CHECK_OK(dt_explain(g_mesh, NULL)); /* documented: NULL stops printing */
    CHECK(dt_mesh_op_cache_count(NULL) == 0, "dt_mesh_op_cache_count(NULL)");
    CHECK(dt_mesh_dim_size(g_mesh, -1) == 0 && dt_mesh_dim_size(g_mesh, 99) == 0, "dt_mesh_dim_size out of range");
}

int main(int argc, char **argv)
{
    int64_t s[4];
    dt_mesh_desc md;
    int i;
    dtt_init(&argc, &argv, "badinput_ops");
    snprintf(g_dir, sizeof g_dir, "%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    md.names[0] = "x";
    if (g_comm) CHECK_OK(dt_mesh_create(g_comm, &md, &g_mesh));
    md.ndim = 2;
    md.shape[1] = 1;
    md.names[0] = "a";
    md.names[1] = "b";
    if (g_comm) CHECK_OK(dt_mesh_create(g_comm, &md, &g_mesh2));
    if (g_mesh && g_mesh2) {
        /* pid-specific file names would differ across ranks: one name per run, made by rank 0's pid */
        long pid = (long)getpid();
        MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        snprintf(g_dir + strlen(g_dir), sizeof g_dir - strlen(g_dir), "/dtbad%ld", pid);
        if (dtt_rank == 0) mkdir(g_dir, 0700);
        MPI_Barrier(MPI_COMM_WORLD);
        s[0] = 2 * dtt_np; s[1] = 3;
        a = fixture(g_mesh, DT_F32, 2, s, dt_shard(0), 1);
        b = fixture(g_mesh, DT_F32, 2, s, dt_shard(0), 2);
        ai = fixture(g_mesh, DT_I32, 2, s, dt_shard(0), 3);
        ad = fixture(g_mesh, DT_F64, 2, s, dt_shard(0), 4);
        a2 = fixture(g_mesh2, DT_F32, 2, s, dt_shard(0), 5);
        s[0] = 3; s[1] = 4;
        m3 = fixture(g_mesh, DT_F32, 2, s, dt_replicate(), 6);
        s[0] = 4; s[1] = 3; /* a linear weight [out 4, in 3] */
        al = fixture(g_mesh, DT_F32, 2, s, dt_replicate(), 7);
        s[0] = 3;
        v = fixture(g_mesh, DT_F32, 1, s, dt_replicate(), 8);
        s[0] = 4;
        v4 = fixture(g_mesh, DT_F32, 1, s, dt_replicate(), 9);
        s[0] = 2; s[1] = 3; s[2] = 5; /* conv1d x [N, C_in, L], w [C_out, C_in, K] */
        xc = fixture(g_mesh, DT_F32, 3, s, dt_replicate(), 10);
        s[0] = 4; s[1] = 3; s[2] = 2;
        wc = fixture(g_mesh, DT_F32, 3, s, dt_replicate(), 11);
        s[0] = 4;
        {
            dt_tensor_desc kd;
            memset(&kd, 0, sizeof kd);
            kd.dtype = DT_F32;
            kd.ndim = 1;
            kd.shape[0] = 4;
            CHECK_OK(dt_tensor_zeros(g_mesh, &kd, &keep));
            if (keep) memset(dt_tensor_data(keep), 0x3c, dt_tensor_local_numel(keep) * 4);
        }
        if (keep && g_nfix == 11) {
            test_pointwise();
            test_reduce();
            test_empty_extents();
            test_huge_shapes();
            test_matmul();
            test_views();
            test_index_ops();
            test_rng();
            test_halo_conv();
            test_npy();
            test_tp();
        }
        dt_tensor_destroy(keep);
        for (i = 0; i < g_nfix; i++) { dt_tensor_destroy(g_fix[i]); free(g_fbytes[i]); }
        MPI_Barrier(MPI_COMM_WORLD);
        if (dtt_rank == 0) rmdir(g_dir);
    }
    dt_mesh_destroy(g_mesh2);
    dt_mesh_destroy(g_mesh);
    dt_comm_destroy(g_comm);
    return dtt_finish();
}
