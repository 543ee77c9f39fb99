/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_layers.c -- the tensor-parallel layers (dt_tp_linear, dt_tp_mlp).

   Every result is checked against an independent serial reference computed
   here in double precision loops over the global arrays (inputs and
   weights from a closed-form function of the global index, rounded to the
   dtype), on every mesh the rank count allows: the 1-D mesh ("tp" = all
   ranks), each 2-D factorisation as [dp, tp], and one as [tp, dp] (tp_dim
   named, not the last dim).
   - dt_tp_linear, colwise and rowwise, with and without sequence
     parallelism and bias, x 2-D [N, in] and 3-D [B, S, in], F32 and F64,
     x in the layer's input layout and in another (Replicate) one: y
     (values and placements: x's on dp, the documented one on tp), dx
     (x's spec), dW and db (W's / b's spec: summed over dp), *y / *dx
     reuse, accumulate_grads, zero_grad, sgd;
   - dt_tp_mlp (colwise -> relu/gelu -> dropout -> rowwise), with and
     without dropout (the reference mask drawn on a one-rank mesh from the
     same RNG state: the masks are sharding-invariant), sequence parallel,
     F32/F64: y, dx and all four gradients;
   - the default init: W and b gathered equal bit for bit a one-rank run
     with the same seed;
   - bad input: NULLs, bad descs, unknown tp_dim, feature / batch
     mismatches, dtype, Partial x / dy, a feature dim sharded on dp,
     another mesh, a wrong *y / *dx, backward before forward: the
     documented status, a message naming the call, nothing changed.
   Tolerance: |got - want| <= rtol (|want| + max|want|), rtol 1e-5 (F32),
   1e-12 (F64). Options: --quick (or DT_TEST_QUICK=1): fewer cases. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor_layers.h" /* includes dtensor.h */
#include "dt_test.h"

static dt_comm *g_comm = NULL;
static int g_cases = 0;

/* ------------------------------------------------------------ helpers */

/* room for n doubles, zeroed (one spare, so n may be 0) */
static double *zd(int64_t n)
{
    double *p = (double *)calloc((size_t)(n + 1), sizeof(double));
    if (!p) { fprintf(stderr, "test_layers: out of memory\n"); exit(2); }
    return p;
}

/* closed-form value in [-1, 1] of element g of input `salt` */
static double cval(int64_t g, int salt)
{
    return sin(0.7 * (double)g + 1.3 * salt + 0.1) * (0.5 + 0.5 * cos(0.11 * (double)g * (salt + 1)));
}

/* a full array of n closed-form values, rounded to t */
static double *cfull(dt_dtype t, int64_t n, int salt)
{
    double *v = zd(n);
    int64_t i;
    for (i = 0; i < n; i++) v[i] = dtt_round_to(t, cval(i, salt));
    return v;
}

static double rtol_of(dt_dtype t) { return t == DT_F64 ? 1e-12 : 1e-5; }

/* a mesh with names: nd dims, shape, names */
static int open_named(dtt_mesh *m, int nd, const int *shape, const char *n0, const char *n1)
{
    dt_mesh_desc md;
    int k;
    memset(m, 0, sizeof *m);
    memset(&md, 0, sizeof md);
    md.ndim = nd;
    m->nd = nd;
    m->comm = g_comm;
    for (k = 0; k < nd; k++) md.shape[k] = m->shape[k] = shape[k];
    md.names[0] = n0;
    if (nd > 1) md.names[1] = n1;
    snprintf(m->name, sizeof m->name, nd == 1 ? "[%s=%d]" : "[%s=%d,%s=%d]", n0, shape[0], nd > 1 ? n1 : "",
             nd > 1 ? shape[1] : 0);
    CHECK_OK(dt_mesh_create(g_comm, &md, &m->mesh));
    if (!m->mesh) return 0;
    dtt_unravel(nd, m->shape, dt_comm_rank(g_comm), m->coord);
    return 1;
}

/* overwrite the local part of t (no Partial) with full[] at its global indices */
static void set_full(dt_tensor *t, const double *full)
{
    const dt_tensor_desc *d = dt_tensor_get_desc(t);
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], n, i;
    dt_tensor_local_shape(t, ls);
    dt_tensor_local_offset(t, lo);
    n = dtt_numel(d->ndim, ls);
    for (i = 0; i < n; i++) dtt_store_d(d->dtype, dt_tensor_data(t), (size_t)i, full[dtt_gidx(d->ndim, d->shape, ls, lo, i)]);
}

/* gather t and compare with want[n]: |got - want| <= rtol (|want| + max|want|) */
static int check_vals(const dt_tensor *t, const double *want, int64_t n, double rtol, const char *what)
{
    double *got = zd(n), mx = 0;
    int64_t i;
    int bad = 0;
    dt_status st;
    if (!t) {
        CHECK(0, "%s: no tensor", what);
        free(got);
        return 1;
    }
    CHECK(dtt_numel(dt_tensor_get_desc(t)->ndim, dt_tensor_get_desc(t)->shape) == n, "%s: %lld elements, want %lld",
          what, (long long)dtt_numel(dt_tensor_get_desc(t)->ndim, dt_tensor_get_desc(t)->shape), (long long)n);
    st = dtt_gather_full(t, got);
    CHECK(st == DT_OK, "%s: gather %s", what, dt_status_string(st));
    for (i = 0; i < n; i++) mx = fabs(want[i]) > mx ? fabs(want[i]) : mx;
    for (i = 0; i < n && st == DT_OK; i++)
        if (!(fabs(got[i] - want[i]) <= rtol * (fabs(want[i]) + mx))) {
            CHECK(0, "%s: element %lld of %lld = %.17g, want %.17g", what, (long long)i, (long long)n, got[i], want[i]);
            bad = 1;
            break;
        }
    free(got);
    return bad;
}

static int same_pl(dt_placement a, dt_placement b)
{
    if (a.kind != b.kind) return 0;
    if (a.kind == DT_SHARD) return a.dim == b.dim;
    if (a.kind == DT_PARTIAL) return a.reduce == b.reduce;
    return 1;
}

/* t's placements are want[0..nd) (Shard dims normalised) */
static void check_pl(const dtt_mesh *m, const dt_tensor *t, const dt_placement *want, const char *what)
{
    const dt_tensor_desc *d = t ? dt_tensor_get_desc(t) : NULL;
    char a[64], b[64];
    int k, ok = d != NULL;
    for (k = 0; k < m->nd && ok; k++) ok = same_pl(d->placements[k], want[k]);
    CHECK(ok, "%s: placements %s, want %s", what, d ? dtt_pl_str(d->placements, m->nd, a, sizeof a) : "(none)",
          dtt_pl_str(want, m->nd, b, sizeof b));
}

/* ------------------------------------------------------------ serial reference */

/* y[N,o] = x[N,i] W[o,i]^T + b[o] (b may be NULL) */
static void ref_linear(const double *x, int64_t N, int64_t in, const double *w, int64_t out, const double *b, double *y)
{
    int64_t n, o, i;
    for (n = 0; n < N; n++)
        for (o = 0; o < out; o++) {
            double s = b ? b[o] : 0.0;
            for (i = 0; i < in; i++) s += x[n * in + i] * w[o * in + i];
            y[n * out + o] = s;
        }
}

/* dx = dy W, dW = dy^T x, db = sum_n dy (db may be NULL) */
static void ref_linear_back(const double *x, const double *dy, int64_t N, int64_t in, const double *w, int64_t out,
                            double *dx, double *dw, double *db)
{
    int64_t n, o, i;
    for (n = 0; n < N; n++)
        for (i = 0; i < in; i++) {
            double s = 0;
            for (o = 0; o < out; o++) s += dy[n * out + o] * w[o * in + i];
            dx[n * in + i] = s;
        }
    for (o = 0; o < out; o++)
        for (i = 0; i < in; i++) {
            double s = 0;
            for (n = 0; n < N; n++) s += dy[n * out + o] * x[n * in + i];
            dw[o * in + i] = s;
        }
    for (o = 0; o < out && db; o++) {
        double s = 0;
        for (n = 0; n < N; n++) s += dy[n * out + o];
        db[o] = s;
    }
}

/* ------------------------------------------------------------ one linear case */

typedef struct lin_case {
    dt_dtype t;
    dt_tp_style style;
    int sp, bias, ndim, xrep, acc;
} lin_case;

static void linear_case(const dtt_mesh *m, int tp, int dp, const char *tpname, const lin_case *c)
{
    int T = m->shape[tp], D = dp >= 0 ? m->shape[dp] : 1, k;
    int64_t in = T + 3, out = 2 * T + 1, B = 2 * D + 1, S = T + 1, N, xs[DT_MAX_DIMS] = { 0 }, ys[DT_MAX_DIMS] = { 0 };
    double *xv, *wv, *bv, *dyv, *y, *dx, *dw, *db, rt = rtol_of(c->t);
    dt_tp_linear_desc ld;
    dt_tp_linear *l = NULL;
    dt_placement xpl[DT_MAX_MESH_DIMS], ypl[DT_MAX_MESH_DIMS], wpl[DT_MAX_MESH_DIMS], bpl[DT_MAX_MESH_DIMS];
    dt_tensor *x, *dy, *yt = NULL, *dxt = NULL;
    void *ydata;
    int nd = c->ndim, seqd = nd - 2;
    g_cases++;
    dtt_ctx("linear mesh %s tp=%s %s %s sp %d bias %d x %d-D xrep %d acc %d", m->name, tpname, dtt_dtname(c->t),
            c->style == DT_TP_COLWISE ? "colwise" : "rowwise", c->sp, c->bias, nd, c->xrep, c->acc);
    if (nd == 2) { xs[0] = B * S; xs[1] = in; }
    else { xs[0] = B; xs[1] = S; xs[2] = in; }
    memcpy(ys, xs, sizeof ys);
    ys[nd - 1] = out;
    N = nd == 2 ? B * S : B * S;
    xv = cfull(c->t, N * in, 1);
    wv = cfull(c->t, out * in, 2);
    bv = cfull(c->t, out, 3);
    dyv = cfull(c->t, N * out, 4);
    y = zd(N * out);
    dx = zd(N * in);
    dw = zd(out * in);
    db = zd(out);
    ref_linear(xv, N, in, wv, out, c->bias ? bv : NULL, y);
    ref_linear_back(xv, dyv, N, in, wv, out, dx, dw, db);

    memset(&ld, 0, sizeof ld);
    ld.style = c->style;
    ld.in_features = in;
    ld.out_features = out;
    ld.dtype = c->t;
    ld.no_bias = !c->bias;
    ld.tp_dim = tpname;
    ld.sequence_parallel = c->sp;
    ld.accumulate_grads = c->acc;
    ld.init = DT_TP_INIT_ZEROS;
    CHECK_OK(dt_tp_linear_create(m->mesh, &ld, &l));
    if (!l) goto done;
    set_full(dt_tp_linear_weight(l), wv);
    if (c->bias) set_full(dt_tp_linear_bias(l), bv);
    CHECK((dt_tp_linear_bias(l) != NULL) == (c->bias != 0), "bias tensor presence");

    /* placements: x batch-sharded on dp, the layer's input layout on tp */
    memset(xpl, 0, sizeof xpl);
    if (dp >= 0) xpl[dp] = dt_shard(0);
    xpl[tp] = c->xrep ? dt_replicate() : dt_tp_linear_input_placement(l);
    if (xpl[tp].kind == DT_SHARD && xpl[tp].dim < 0) xpl[tp].dim = (int8_t)(xpl[tp].dim + nd);
    memcpy(ypl, xpl, sizeof ypl);
    ypl[tp] = dt_tp_linear_output_placement(l);
    if (ypl[tp].kind == DT_SHARD && ypl[tp].dim < 0) ypl[tp].dim = (int8_t)(ypl[tp].dim + nd);
    /* the documented layouts */
    if (c->style == DT_TP_COLWISE) {
        CHECK(same_pl(dt_tp_linear_input_placement(l), c->sp ? dt_shard(-2) : dt_replicate()), "colwise input placement");
        CHECK(same_pl(dt_tp_linear_output_placement(l), dt_shard(-1)), "colwise output placement");
    } else {
        CHECK(same_pl(dt_tp_linear_input_placement(l), dt_shard(-1)), "rowwise input placement");
        CHECK(same_pl(dt_tp_linear_output_placement(l), c->sp ? dt_shard(-2) : dt_replicate()), "rowwise output placement");
    }
    if (c->sp) CHECK(ypl[tp].kind != DT_SHARD || c->style == DT_TP_COLWISE || ypl[tp].dim == seqd, "seq dim");
    memset(wpl, 0, sizeof wpl);
    memset(bpl, 0, sizeof bpl);
    wpl[tp] = dt_shard(c->style == DT_TP_COLWISE ? 0 : 1);
    bpl[tp] = c->style == DT_TP_COLWISE ? dt_shard(0) : dt_replicate();
    check_pl(m, dt_tp_linear_weight(l), wpl, "W");
    check_pl(m, dt_tp_linear_grad_weight(l), wpl, "dW");
    if (c->bias) check_pl(m, dt_tp_linear_bias(l), bpl, "b");

    x = dtt_from_full(m, c->t, nd, xs, xpl, xv, 1.0);
    /* dy in y's layout */
    dy = dtt_from_full(m, c->t, nd, ys, ypl, dyv, 1.0);
    if (!x || !dy) goto done2;
    CHECK_OK(dt_tp_linear_forward(l, x, &yt));
    if (yt) {
        check_pl(m, yt, ypl, "y");
        check_vals(yt, y, N * out, rt, "y");
        /* *y reused: same tensor, same buffer, same values */
        ydata = dt_tensor_data(yt);
        {
            dt_tensor *y0 = yt;
            CHECK_OK(dt_tp_linear_forward(l, x, &yt));
            CHECK(yt == y0 && dt_tensor_data(yt) == ydata, "*y not reused");
            check_vals(yt, y, N * out, rt, "y (reused)");
        }
    }
    CHECK_OK(dt_tp_linear_backward(l, x, dy, &dxt));
    if (dxt) {
        check_pl(m, dxt, xpl, "dx");
        check_vals(dxt, dx, N * in, rt, "dx");
    }
    check_pl(m, dt_tp_linear_grad_weight(l), wpl, "dW after backward");
    check_vals(dt_tp_linear_grad_weight(l), dw, out * in, rt, "dW");
    if (c->bias) {
        check_pl(m, dt_tp_linear_grad_bias(l), bpl, "db after backward");
        check_vals(dt_tp_linear_grad_bias(l), db, out, rt, "db");
    }
    /* a second backward: accumulate doubles the gradients, else the same; dx not wanted */
    CHECK_OK(dt_tp_linear_backward(l, x, dy, NULL));
    if (c->acc) {
        for (k = 0; k < out * in; k++) dw[k] *= 2;
        for (k = 0; k < out; k++) db[k] *= 2;
    }
    check_vals(dt_tp_linear_grad_weight(l), dw, out * in, rt, "dW (second backward)");
    if (c->bias) check_vals(dt_tp_linear_grad_bias(l), db, out, rt, "db (second backward)");
    /* sgd: W - 0.5 dW */
    CHECK_OK(dt_tp_linear_sgd(l, 0.5));
    for (k = 0; k < out * in; k++) dw[k] = wv[k] - 0.5 * dw[k];
    for (k = 0; k < out; k++) db[k] = bv[k] - 0.5 * db[k];
    check_vals(dt_tp_linear_weight(l), dw, out * in, rt, "W after sgd");
    if (c->bias) check_vals(dt_tp_linear_bias(l), db, out, rt, "b after sgd");
    CHECK_OK(dt_tp_linear_zero_grad(l));
    for (k = 0; k < out * in; k++) dw[k] = 0;
    check_vals(dt_tp_linear_grad_weight(l), dw, out * in, rt, "dW after zero_grad");
done2:
    dt_tensor_destroy(x);
    dt_tensor_destroy(dy);
done:
    dt_tensor_destroy(yt);
    dt_tensor_destroy(dxt);
    dt_tp_linear_destroy(l);
    free(xv); free(wv); free(bv); free(dyv); free(y); free(dx); free(dw); free(db);
}

/* ------------------------------------------------------------ one MLP case */

static double act_f(int gelu, double h) { return gelu ? 0.5 * h * (1.0 + erf(h / sqrt(2.0))) : (h > 0 ? h : 0); }
static double act_d(int gelu, double h)
{
    return gelu ? 0.5 * (1.0 + erf(h / sqrt(2.0))) + h * exp(-0.5 * h * h) / sqrt(2.0 * 3.14159265358979323846)
                : (h > 0 ? 1.0 : 0.0);
}

typedef struct mlp_case {
    dt_dtype t;
    int gelu, sp, ndim, bias;
    double p;
} mlp_case;

/* the dropout keep mask the mesh's RNG will give a [shape] tensor of dtype t,
   drawn on a one-rank mesh from the same state */
static double *ref_mask(dt_mesh *mesh, dt_dtype t, int ndim, const int64_t *shape, double p)
{
    dt_comm *sc = NULL;
    dt_mesh *sm = NULL;
    dt_tensor *k = NULL;
    dt_tensor_desc d;
    uint64_t seed = 0, off = 0;
    int64_t n = dtt_numel(ndim, shape), i;
    double *mask = zd(n);
    for (i = 0; i < n; i++) mask[i] = 1;
    dtt_self_mesh(&sc, &sm);
    CHECK_OK(dt_rng_get_state(mesh, &seed, &off));
    if (sm) {
        CHECK_OK(dt_rng_set_state(sm, seed, off));
        memset(&d, 0, sizeof d);
        d.dtype = t;
        d.ndim = ndim;
        for (i = 0; i < ndim; i++) d.shape[i] = shape[i];
        CHECK_OK(dt_tensor_zeros(sm, &d, &k));
        if (k) {
            CHECK_OK(dt_bernoulli_(k, 1.0 - p));
            CHECK_OK(dtt_gather_full(k, mask));
        }
    }
    dt_tensor_destroy(k);
    dt_mesh_destroy(sm);
    dt_comm_destroy(sc);
    return mask;
}

static void mlp_case_run(const dtt_mesh *m, int tp, int dp, const char *tpname, const mlp_case *c)
{
    int T = m->shape[tp], D = dp >= 0 ? m->shape[dp] : 1, nd = c->ndim;
    int64_t in = T + 2, hid = 3 * T + 1, out = in + 1, B = 2 * D + 1, S = T + 1, N = B * S, n, j, o, i;
    int64_t xs[DT_MAX_DIMS] = { 0 }, ys[DT_MAX_DIMS] = { 0 }, hs[DT_MAX_DIMS] = { 0 };
    double *xv, *w1, *b1, *w2, *b2, *dyv, *h, *a, *mask, *y, *gd, *dw2, *db2, *gh, *dw1, *db1, *dx, *dd;
    double rt = rtol_of(c->t), s = 1.0 / (1.0 - c->p);
    dt_tp_mlp_desc md;
    dt_tp_mlp *mlp = NULL;
    dt_placement xpl[DT_MAX_MESH_DIMS], ypl[DT_MAX_MESH_DIMS];
    dt_tensor *x = NULL, *dy = NULL, *yt = NULL, *dxt = NULL;
    dt_comm_stats cs;
    int nested;
    memset(hs, 0, sizeof hs);
    g_cases++;
    dtt_ctx("mlp mesh %s tp=%s %s %s p %g sp %d bias %d x %d-D", m->name, tpname, dtt_dtname(c->t),
            c->gelu ? "gelu" : "relu", c->p, c->sp, c->bias, nd);
    if (nd == 2) { xs[0] = N; xs[1] = in; }
    else { xs[0] = B; xs[1] = S; xs[2] = in; }
    memcpy(ys, xs, sizeof ys);
    ys[nd - 1] = out;
    memcpy(hs, xs, sizeof hs);
    hs[nd - 1] = hid;
    xv = cfull(c->t, N * in, 11);
    w1 = cfull(c->t, hid * in, 12);
    b1 = cfull(c->t, hid, 13);
    w2 = cfull(c->t, out * hid, 14);
    b2 = cfull(c->t, out, 15);
    dyv = cfull(c->t, N * out, 16);
    h = zd(N * hid); a = zd(N * hid); y = zd(N * out); gd = zd(N * hid);
    dd = zd(N * hid);
    dw2 = zd(out * hid); db2 = zd(out); gh = zd(N * hid); dw1 = zd(hid * in);
    db1 = zd(hid); dx = zd(N * in);

    memset(&md, 0, sizeof md);
    md.in_features = in;
    md.hidden_features = hid;
    md.out_features = out;
    md.dtype = c->t;
    md.activation = c->gelu ? DT_TP_GELU : DT_TP_RELU;
    md.dropout = c->p;
    md.no_bias = !c->bias;
    md.tp_dim = tpname;
    md.sequence_parallel = c->sp;
    md.init = DT_TP_INIT_ZEROS;
    CHECK_OK(dt_tp_mlp_create(m->mesh, &md, &mlp));
    mask = ref_mask(m->mesh, c->t, nd, hs, c->p > 0 ? c->p : 0.0);
    if (!mlp) goto done;
    set_full(dt_tp_linear_weight(dt_tp_mlp_fc1(mlp)), w1);
    set_full(dt_tp_linear_weight(dt_tp_mlp_fc2(mlp)), w2);
    if (c->bias) {
        set_full(dt_tp_linear_bias(dt_tp_mlp_fc1(mlp)), b1);
        set_full(dt_tp_linear_bias(dt_tp_mlp_fc2(mlp)), b2);
    }
    /* reference: h = x W1^T + b1, a = act(h), d = mask a s, y = d W2^T + b2 */
    ref_linear(xv, N, in, w1, hid, c->bias ? b1 : NULL, h);
    for (n = 0; n < N * hid; n++) {
        a[n] = act_f(c->gelu, h[n]);
        dd[n] = c->p > 0 ? (mask[n] != 0 ? a[n] * s : 0.0) : a[n];
    }
    ref_linear(dd, N, hid, w2, out, c->bias ? b2 : NULL, y);
    /* backward */
    ref_linear_back(dd, dyv, N, hid, w2, out, gd, dw2, db2);
    for (n = 0; n < N * hid; n++) {
        double g = c->p > 0 ? (mask[n] != 0 ? gd[n] * s : 0.0) : gd[n];
        gh[n] = g * act_d(c->gelu, h[n]);
    }
    ref_linear_back(xv, gh, N, in, w1, hid, dx, dw1, db1);

    memset(xpl, 0, sizeof xpl);
    if (dp >= 0) xpl[dp] = dt_shard(0);
    xpl[tp] = c->sp ? dt_shard(nd - 2) : dt_replicate();
    memcpy(ypl, xpl, sizeof ypl);
    x = dtt_from_full(m, c->t, nd, xs, xpl, xv, 1.0);
    dy = dtt_from_full(m, c->t, nd, ys, ypl, dyv, 1.0);
    if (!x || !dy) goto done;
    CHECK_ST(dt_tp_mlp_backward(mlp, x, dy, &dxt), DT_ERR_ARG); /* no forward yet */
    CHECK_ERRMSG("dt_tp_mlp_backward");
    dt_comm_reset_stats(g_comm);
    CHECK_OK(dt_tp_mlp_forward(mlp, x, 1, &yt));
    dt_comm_get_stats(g_comm, &cs);
    /* the collectives Megatron-LM runs: forward one allreduce of y (sequence
       parallel: allgather x, reduce-scatter y); nothing over dp */
    /* (not when tp splits the seq dim before dp splits it further: [tp, dp] with a 2-D x,
       where bringing tp to Replicate also re-splits dp's parts) */
    nested = c->sp && nd == 2 && dp > tp && D > 1;
    if (!nested)
        CHECK(cs.calls == (uint64_t)(T > 1 ? (c->sp ? 2 : 1) : 0), "mlp forward: %llu backend calls, want %d",
          (unsigned long long)cs.calls, T > 1 ? (c->sp ? 2 : 1) : 0);
    if (yt) {
        check_pl(m, yt, ypl, "mlp y");
        check_vals(yt, y, N * out, rt, "mlp y");
    }
    dt_comm_reset_stats(g_comm);
    CHECK_OK(dt_tp_mlp_backward(mlp, x, dy, &dxt));
    dt_comm_get_stats(g_comm, &cs);
    /* backward: one allreduce of dx (sequence parallel: allgather dy, allgather
       x again, reduce-scatter dx), plus one allreduce over dp per weight and
       bias gradient (when the batch flattens without moving: 2-D x or dp 1) */
    if ((nd == 2 || D == 1) && !nested) {
        int want = (T > 1 ? (c->sp ? 3 : 1) : 0) + (D > 1 ? (c->bias ? 4 : 2) : 0);
        CHECK(cs.calls == (uint64_t)want, "mlp backward: %llu backend calls, want %d", (unsigned long long)cs.calls, want);
    }
    if (dxt) {
        check_pl(m, dxt, xpl, "mlp dx");
        check_vals(dxt, dx, N * in, rt, "mlp dx");
    }
    check_vals(dt_tp_linear_grad_weight(dt_tp_mlp_fc2(mlp)), dw2, out * hid, rt, "mlp dW2");
    check_vals(dt_tp_linear_grad_weight(dt_tp_mlp_fc1(mlp)), dw1, hid * in, rt, "mlp dW1");
    if (c->bias) {
        check_vals(dt_tp_linear_grad_bias(dt_tp_mlp_fc2(mlp)), db2, out, rt, "mlp db2");
        check_vals(dt_tp_linear_grad_bias(dt_tp_mlp_fc1(mlp)), db1, hid, rt, "mlp db1");
    }
    /* eval mode: no dropout, the RNG untouched; *y reused */
    {
        uint64_t s0 = 0, o0 = 0, s1 = 1, o1 = 1;
        dt_tensor *y0 = yt;
        CHECK_OK(dt_rng_get_state(m->mesh, &s0, &o0));
        for (n = 0; n < N * hid; n++) dd[n] = a[n];
        ref_linear(dd, N, hid, w2, out, c->bias ? b2 : NULL, y);
        CHECK_OK(dt_tp_mlp_forward(mlp, x, 0, &yt));
        CHECK(yt == y0, "*y not reused");
        check_vals(yt, y, N * out, rt, "mlp y (eval)");
        CHECK_OK(dt_rng_get_state(m->mesh, &s1, &o1));
        CHECK(s0 == s1 && o0 == o1, "eval forward moved the RNG");
    }
    CHECK_OK(dt_tp_mlp_sgd(mlp, 0.25));
    for (j = 0; j < out * hid; j++) dw2[j] = w2[j] - 0.25 * dw2[j];
    check_vals(dt_tp_linear_weight(dt_tp_mlp_fc2(mlp)), dw2, out * hid, rt, "mlp W2 after sgd");
    CHECK_OK(dt_tp_mlp_zero_grad(mlp));
    for (j = 0; j < hid * in; j++) dw1[j] = 0;
    check_vals(dt_tp_linear_grad_weight(dt_tp_mlp_fc1(mlp)), dw1, hid * in, rt, "mlp dW1 after zero_grad");
    (void)o;
    (void)i;
done:
    dt_tensor_destroy(x);
    dt_tensor_destroy(dy);
    dt_tensor_destroy(yt);
    dt_tensor_destroy(dxt);
    dt_tp_mlp_destroy(mlp);
    free(xv); free(w1); free(b1); free(w2); free(b2); free(dyv); free(h); free(a); free(mask); free(y); free(gd);
    free(dd); free(dw2); free(db2); free(gh); free(dw1); free(db1); free(dx);
}

/* ------------------------------------------------------------ the sweep */

/* fn on the 1-D mesh, each [dp, tp] factorisation, and [tp, dp] for the first with both > 1 */
static void sweep(void (*fn)(const dtt_mesh *, int, int, const char *))
{
    int fac[64 * DT_MAX_MESH_DIMS], nf = dtt_factorizations(dtt_np, 2, fac, 64), f, one = dtt_np, rev = 0;
    dtt_mesh m;
    if (open_named(&m, 1, &one, "tp", NULL)) {
        fn(&m, 0, -1, NULL);
        dtt_mesh_close(&m);
    }
    for (f = 0; f < nf; f++) {
        int *sh = &fac[f * DT_MAX_MESH_DIMS];
        if (dtt_quick && nf > 2 && (sh[0] == 1 || sh[1] == 1)) continue;
        if (open_named(&m, 2, sh, "dp", "tp")) {
            fn(&m, 1, 0, "tp");
            dtt_mesh_close(&m);
        }
        if (!rev && sh[0] > 1 && sh[1] > 1) {
            rev = 1;
            if (open_named(&m, 2, sh, "tp", "dp")) {
                fn(&m, 0, 1, "tp");
                dtt_mesh_close(&m);
            }
        }
    }
}

static void linear_mesh(const dtt_mesh *m, int tp, int dp, const char *tpname)
{
    static const dt_dtype ts[2] = { DT_F64, DT_F32 };
    lin_case c;
    int ti, style, sp, bias, nd, i = 0;
    for (ti = 0; ti < 2; ti++)
        for (style = 0; style < 2; style++)
            for (sp = 0; sp < 2; sp++)
                for (bias = 0; bias < 2; bias++)
                    for (nd = 2; nd <= 3; nd++, i++) {
                        if (dtt_quick && (i % 3)) continue;
                        memset(&c, 0, sizeof c);
                        c.t = ts[ti];
                        c.style = (dt_tp_style)style;
                        c.sp = sp;
                        c.bias = bias;
                        c.ndim = nd;
                        c.xrep = (i % 5) == 2 && !sp; /* x Replicate on tp (rowwise: sliced locally) */
                        c.acc = (i % 4) == 1;
                        linear_case(m, tp, dp, tpname, &c);
                    }
}

static void mlp_mesh(const dtt_mesh *m, int tp, int dp, const char *tpname)
{
    static const dt_dtype ts[2] = { DT_F64, DT_F32 };
    mlp_case c;
    int ti, gelu, sp, drop, i = 0;
    for (ti = 0; ti < 2; ti++)
        for (gelu = 0; gelu < 2; gelu++)
            for (sp = 0; sp < 2; sp++)
                for (drop = 0; drop < 2; drop++, i++) {
                    if (dtt_quick && (i % 3)) continue;
                    memset(&c, 0, sizeof c);
                    c.t = ts[ti];
                    c.gelu = gelu;
                    c.sp = sp;
                    c.p = drop ? 0.3 : 0.0;
                    c.ndim = (i % 3) == 1 ? 2 : 3;
                    c.bias = (i % 4) != 3;
                    mlp_case_run(m, tp, dp, tpname, &c);
                }
}

/* ------------------------------------------------------------ default init: sharding-invariant */

static void test_init(void)
{
    int fac[64 * DT_MAX_MESH_DIMS], nf = dtt_factorizations(dtt_np, 2, fac, 64), f, w;
    dt_comm *sc = NULL;
    dt_mesh *sm = NULL;
    dt_tp_mlp_desc md;
    dt_tp_mlp *ref = NULL;
    double *rv[4], *got;
    int64_t nel[4], k;
    memset(&md, 0, sizeof md);
    md.in_features = 9;
    md.hidden_features = 13;
    md.dtype = DT_F32;
    dtt_ctx("init");
    dtt_self_mesh(&sc, &sm);
    if (!sm) return;
    CHECK_OK(dt_manual_seed(sm, 4242));
    CHECK_OK(dt_tp_mlp_create(sm, &md, &ref));
    if (!ref) goto out;
    for (w = 0; w < 4; w++) {
        dt_tp_linear *l = w < 2 ? dt_tp_mlp_fc1(ref) : dt_tp_mlp_fc2(ref);
        dt_tensor *t = w % 2 ? dt_tp_linear_bias(l) : dt_tp_linear_weight(l);
        nel[w] = (int64_t)dt_tensor_local_numel(t);
        rv[w] = zd(nel[w]);
        CHECK_OK(dtt_gather_full(t, rv[w]));
        for (k = 0; k < nel[w]; k++) CHECK(fabs(rv[w][k]) < 1.0 / 3.0 + 1e-7 && (k == 0 || rv[w][k] != rv[w][k - 1]),
                                           "init value %d/%lld = %g out of range", w, (long long)k, rv[w][k]);
    }
    for (f = 0; f < nf; f++) {
        dtt_mesh m;
        dt_tp_mlp *mlp = NULL;
        if (!open_named(&m, 2, &fac[f * DT_MAX_MESH_DIMS], "dp", "tp")) continue;
        dtt_ctx("init mesh %s", m.name);
        CHECK_OK(dt_manual_seed(m.mesh, 4242));
        CHECK_OK(dt_tp_mlp_create(m.mesh, &md, &mlp));
        for (w = 0; w < 4 && mlp; w++) {
            dt_tp_linear *l = w < 2 ? dt_tp_mlp_fc1(mlp) : dt_tp_mlp_fc2(mlp);
            dt_tensor *t = w % 2 ? dt_tp_linear_bias(l) : dt_tp_linear_weight(l);
            got = zd(nel[w]);
            CHECK_OK(dtt_gather_full(t, got));
            for (k = 0; k < nel[w]; k++)
                if (got[k] != rv[w][k]) {
                    CHECK(0, "tensor %d element %lld = %.9g, the one-rank run has %.9g", w, (long long)k, got[k], rv[w][k]);
                    break;
                }
            free(got);
        }
        dt_tp_mlp_destroy(mlp);
        dtt_mesh_close(&m);
    }
    for (w = 0; w < 4; w++) free(rv[w]);
out:
    dt_tp_mlp_destroy(ref);
    dt_mesh_destroy(sm);
    dt_comm_destroy(sc);
}

/* ------------------------------------------------------------ bad input */

#define BAD(expr, want, fn) \
    do { dt_clear_error(); CHECK_ST(expr, want); CHECK_ERRMSG(fn); } while (0)

static void test_badinput(void)
{
    int two[2], one = dtt_np;
    dtt_mesh m, m1;
    dt_tp_linear_desc ld;
    dt_tp_mlp_desc md;
    dt_tp_linear *l = NULL, *lr = NULL, *out = NULL;
    dt_tp_mlp *mlp = NULL, *mo = NULL;
    dt_tensor *x = NULL, *x32 = NULL, *xbad = NULL, *xp = NULL, *xf = NULL, *x1 = NULL, *xo = NULL, *dy = NULL,
              *dyb = NULL, *yt = NULL, *ywrong = NULL, *dxt = NULL;
    dt_placement pl[DT_MAX_MESH_DIMS];
    int64_t xs[2] = { 5, 4 }, ys[2] = { 5, 6 }, bs[2] = { 3, 6 }, s1[1] = { 4 }, xs3[2] = { 5, 3 };
    double *v = cfull(DT_F64, 64, 7);
    void *gw_save, *w_save;
    dtt_ctx("badinput");
    two[0] = 1;
    two[1] = dtt_np;
    if (!open_named(&m, 2, two, "dp", "tp")) { free(v); return; }
    if (!open_named(&m1, 1, &one, "tp", NULL)) { dtt_mesh_close(&m); free(v); return; }
    memset(&ld, 0, sizeof ld);
    ld.in_features = 4;
    ld.out_features = 6;
    ld.dtype = DT_F64;
    /* create */
    BAD(dt_tp_linear_create(NULL, &ld, &out), DT_ERR_ARG, "dt_tp_linear_create");
    BAD(dt_tp_linear_create(m.mesh, NULL, &out), DT_ERR_ARG, "dt_tp_linear_create");
    BAD(dt_tp_linear_create(m.mesh, &ld, NULL), DT_ERR_ARG, "dt_tp_linear_create");
    ld.in_features = 0;
    BAD(dt_tp_linear_create(m.mesh, &ld, &out), DT_ERR_ARG, "dt_tp_linear_create");
    CHECK(strstr(dt_last_error(), "in_features = 0") != NULL, "message: %s", dt_last_error());
    ld.in_features = 4;
    ld.dtype = DT_I32;
    BAD(dt_tp_linear_create(m.mesh, &ld, &out), DT_ERR_DTYPE, "dt_tp_linear_create");
    ld.dtype = DT_F64;
    ld.style = (dt_tp_style)7;
    BAD(dt_tp_linear_create(m.mesh, &ld, &out), DT_ERR_ARG, "dt_tp_linear_create");
    ld.style = DT_TP_COLWISE;
    ld.tp_dim = "model";
    BAD(dt_tp_linear_create(m.mesh, &ld, &out), DT_ERR_MESH, "dt_tp_linear_create");
    CHECK(strstr(dt_last_error(), "\"model\"") != NULL && strstr(dt_last_error(), "\"dp\"") != NULL, "message: %s",
          dt_last_error());
    ld.tp_dim = "tp";
    ld.init = (dt_tp_init)3;
    BAD(dt_tp_linear_create(m.mesh, &ld, &out), DT_ERR_ARG, "dt_tp_linear_create");
    ld.init = DT_TP_INIT_ZEROS;
    CHECK(out == NULL, "*out set on error");
    memset(&md, 0, sizeof md);
    md.in_features = 4;
    md.hidden_features = 6;
    md.dtype = DT_F64;
    md.dropout = 1.0;
    BAD(dt_tp_mlp_create(m.mesh, &md, &mo), DT_ERR_ARG, "dt_tp_mlp_create");
    md.dropout = -0.1;
    BAD(dt_tp_mlp_create(m.mesh, &md, &mo), DT_ERR_ARG, "dt_tp_mlp_create");
    md.dropout = 0.0;
    md.activation = (dt_tp_activation)9;
    BAD(dt_tp_mlp_create(m.mesh, &md, &mo), DT_ERR_ARG, "dt_tp_mlp_create");
    md.activation = DT_TP_RELU;
    md.hidden_features = 0;
    BAD(dt_tp_mlp_create(m.mesh, &md, &mo), DT_ERR_ARG, "dt_tp_mlp_create");
    md.hidden_features = 6;
    md.tp_dim = "nope";
    BAD(dt_tp_mlp_create(m.mesh, &md, &mo), DT_ERR_MESH, "dt_tp_mlp_create");
    md.tp_dim = NULL;
    BAD(dt_tp_mlp_create(NULL, &md, &mo), DT_ERR_ARG, "dt_tp_mlp_create");
    CHECK(mo == NULL, "*out set on error");

    CHECK_OK(dt_tp_linear_create(m.mesh, &ld, &l));
    ld.style = DT_TP_ROWWISE;
    ld.sequence_parallel = 1;
    ld.seq_dim = -3; /* not a batch dim of a 2-D x */
    CHECK_OK(dt_tp_linear_create(m.mesh, &ld, &lr));
    CHECK_OK(dt_tp_mlp_create(m.mesh, &md, &mlp));
    if (!l || !lr || !mlp) goto done;
    memset(pl, 0, sizeof pl);
    x = dtt_from_full(&m, DT_F64, 2, xs, pl, v, 1.0);
    x32 = dtt_from_full(&m, DT_F32, 2, xs, pl, v, 1.0);
    xbad = dtt_from_full(&m, DT_F64, 2, xs3, pl, v, 1.0);       /* 3 features */
    x1 = dtt_from_full(&m, DT_F64, 1, s1, pl, v, 1.0);          /* no batch dim */
    xo = dtt_from_full(&m1, DT_F64, 2, xs, pl, v, 1.0);         /* another mesh */
    dy = dtt_from_full(&m, DT_F64, 2, ys, pl, v, 1.0);
    dyb = dtt_from_full(&m, DT_F64, 2, bs, pl, v, 1.0);         /* 3 rows, x has 5 */
    pl[1] = dt_shard(0);
    ywrong = dtt_from_full(&m, DT_F64, 2, ys, pl, v, 1.0);      /* colwise y is S(-1), not S(0) */
    pl[1] = dt_partial(DT_SUM);
    xp = dtt_from_full(&m, DT_F64, 2, xs, pl, v, 1.0);
    pl[1] = dt_replicate();
    pl[0] = dt_shard(1);                                       /* features split on dp */
    xf = dtt_from_full(&m, DT_F64, 2, xs, pl, v, 1.0);
    if (!x || !x32 || !xbad || !x1 || !xo || !dy || !dyb || !ywrong || !xp || !xf) goto done;
    w_save = dtt_save_local(dt_tp_linear_weight(l));
    BAD(dt_tp_linear_forward(NULL, x, &yt), DT_ERR_ARG, "dt_tp_linear_forward");
    BAD(dt_tp_linear_forward(l, NULL, &yt), DT_ERR_ARG, "dt_tp_linear_forward");
    BAD(dt_tp_linear_forward(l, x, NULL), DT_ERR_ARG, "dt_tp_linear_forward");
    BAD(dt_tp_linear_forward(l, xbad, &yt), DT_ERR_SHAPE, "dt_tp_linear_forward");
    CHECK(strstr(dt_last_error(), "[5, 3]") != NULL, "message names the shape: %s", dt_last_error());
    BAD(dt_tp_linear_forward(l, x1, &yt), DT_ERR_SHAPE, "dt_tp_linear_forward");
    BAD(dt_tp_linear_forward(l, x32, &yt), DT_ERR_DTYPE, "dt_tp_linear_forward");
    BAD(dt_tp_linear_forward(l, xo, &yt), DT_ERR_MESH, "dt_tp_linear_forward");
    BAD(dt_tp_linear_forward(l, xp, &yt), DT_ERR_PLACEMENT, "dt_tp_linear_forward");
    BAD(dt_tp_linear_forward(l, xf, &yt), DT_ERR_PLACEMENT, "dt_tp_linear_forward");
    BAD(dt_tp_linear_forward(lr, x, &yt), DT_ERR_SHAPE, "dt_tp_linear_forward"); /* seq_dim -3 of a 2-D x */
    CHECK(yt == NULL, "*y set on error");
    {
        void *ys_save = dtt_save_local(ywrong);
        dt_tensor *y0 = ywrong;
        BAD(dt_tp_linear_forward(l, x, &ywrong), DT_ERR_PLACEMENT, "dt_tp_linear_forward");
        CHECK(ywrong == y0 && dtt_same_local(ywrong, ys_save), "a refused *y was changed");
        free(ys_save);
    }
    CHECK(dtt_same_local(dt_tp_linear_weight(l), w_save), "W changed by a refused call");
    free(w_save);
    /* backward: nothing changed on error */
    CHECK_OK(dt_tp_linear_backward(l, x, dy, NULL));
    gw_save = dtt_save_local(dt_tp_linear_grad_weight(l));
    BAD(dt_tp_linear_backward(NULL, x, dy, &dxt), DT_ERR_ARG, "dt_tp_linear_backward");
    BAD(dt_tp_linear_backward(l, x, NULL, &dxt), DT_ERR_ARG, "dt_tp_linear_backward");
    BAD(dt_tp_linear_backward(l, x, dyb, &dxt), DT_ERR_SHAPE, "dt_tp_linear_backward");
    BAD(dt_tp_linear_backward(l, x, x, &dxt), DT_ERR_SHAPE, "dt_tp_linear_backward"); /* 4 features, not 6 */
    BAD(dt_tp_linear_backward(l, xp, dy, &dxt), DT_ERR_PLACEMENT, "dt_tp_linear_backward");
    BAD(dt_tp_linear_backward(l, x, ywrong, &ywrong), DT_ERR_ARG, "dt_tp_linear_backward"); /* *dx is dy */
    BAD(dt_tp_linear_backward(l, x, dy, &ywrong), DT_ERR_SHAPE, "dt_tp_linear_backward");    /* *dx not x's spec */
    CHECK(dxt == NULL, "*dx set on error");
    CHECK(dtt_same_local(dt_tp_linear_grad_weight(l), gw_save), "dW changed by a refused call");
    free(gw_save);
    BAD(dt_tp_linear_sgd(NULL, 0.1), DT_ERR_ARG, "dt_tp_linear_sgd");
    BAD(dt_tp_linear_sgd(l, nan("")), DT_ERR_ARG, "dt_tp_linear_sgd");
    BAD(dt_tp_linear_zero_grad(NULL), DT_ERR_ARG, "dt_tp_linear_zero_grad");
    CHECK(dt_tp_linear_weight(NULL) == NULL && dt_tp_mlp_fc1(NULL) == NULL, "NULL accessors");
    dt_tp_linear_destroy(NULL);
    dt_tp_mlp_destroy(NULL);
    /* MLP */
    BAD(dt_tp_mlp_backward(mlp, x, x, &dxt), DT_ERR_ARG, "dt_tp_mlp_backward"); /* no forward yet */
    BAD(dt_tp_mlp_forward(NULL, x, 1, &yt), DT_ERR_ARG, "dt_tp_mlp_forward");
    BAD(dt_tp_mlp_forward(mlp, xbad, 1, &yt), DT_ERR_SHAPE, "dt_tp_mlp_forward");
    BAD(dt_tp_mlp_forward(mlp, xp, 1, &yt), DT_ERR_PLACEMENT, "dt_tp_mlp_forward");
    BAD(dt_tp_mlp_forward(mlp, x, 1, &ywrong), DT_ERR_SHAPE, "dt_tp_mlp_forward"); /* y is [5, 4] */
    CHECK_OK(dt_tp_mlp_forward(mlp, x, 1, &yt));
    BAD(dt_tp_mlp_backward(mlp, xf, x, &dxt), DT_ERR_PLACEMENT, "dt_tp_mlp_backward");
    BAD(dt_tp_mlp_backward(mlp, x, dy, &dxt), DT_ERR_SHAPE, "dt_tp_mlp_backward"); /* dy has 6 features */
    BAD(dt_tp_mlp_backward(mlp, x, xp, &dxt), DT_ERR_PLACEMENT, "dt_tp_mlp_backward");
    BAD(dt_tp_mlp_sgd(NULL, 1), DT_ERR_ARG, "dt_tp_mlp_sgd");
    CHECK_OK(dt_tp_mlp_backward(mlp, x, x, NULL));
done:
    dt_tensor_destroy(x); dt_tensor_destroy(x32); dt_tensor_destroy(xbad); dt_tensor_destroy(x1);
    dt_tensor_destroy(xo); dt_tensor_destroy(dy); dt_tensor_destroy(dyb); dt_tensor_destroy(ywrong);
    dt_tensor_destroy(xp); dt_tensor_destroy(xf); dt_tensor_destroy(yt); dt_tensor_destroy(dxt);
    dt_tp_linear_destroy(l);
    dt_tp_linear_destroy(lr);
    dt_tp_mlp_destroy(mlp);
    dtt_mesh_close(&m1);
    dtt_mesh_close(&m);
    free(v);
}

int main(int argc, char **argv)
{
    double t0;
    dtt_init(&argc, &argv, "layers");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    if (g_comm) {
        t0 = MPI_Wtime();
        sweep(linear_mesh);
        dtt_lap("linear", &t0);
        sweep(mlp_mesh);
        dtt_lap("mlp", &t0);
        test_init();
        dtt_lap("init", &t0);
        test_badinput();
        dtt_lap("badinput", &t0);
        if (dtt_rank == 0 && getenv("DT_TEST_VERBOSE")) fprintf(stderr, "layers: %d cases per rank\n", g_cases);
        dt_comm_destroy(g_comm);
    }
    return dtt_finish();
}
