/* test_check.c -- cross-rank consistency checks (dt_set_checks, DTENSOR_CHECK).

   - DTENSOR_CHECK=1 is read lazily: setenv before the first call turns the
     checks on; dt_set_checks overrides it, dt_get_checks reports it.
   - With checks on, the last rank (and, at 3+ ranks, every odd rank) passes
     different arguments: another destination placement, another shape,
     another dtype, another op, another static arg (reduction dim), another
     scalar, an input another rank rejects; to redistribute, distribute,
     from_local, ops and random fills. Every rank gets DT_ERR_MISMATCH, the
     message names the call and exactly the disagreeing ranks, *out stays
     NULL, the inputs keep their values and no payload byte moves.
   - The agreeing calls work, with checks on and off, and give the closed
     form: x[i][j] = 10 i + j (8 x 6), gathered; column sums 280 + 8 j.
   - Late argument errors (refused after the inputs were accepted: a dim out
     of range, a repeated perm entry, a reshape that does not fit, a narrow
     past the end, mm/dot/addmm ranks, a bad cast target, a fractional
     scalar for an integer tensor, split sizes, embedding/cross-entropy
     index dtypes) on the bad ranks only: every rank returns DT_ERR_MISMATCH
     promptly (the refusal takes part in the one agreement exchange). */
#define _POSIX_C_SOURCE 200112L /* setenv */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

#define R 8
#define C 6

static dt_comm *g_comm = NULL;
static dt_mesh *g_mesh = NULL;

static int is_bad(int rank, int odd) { return odd ? rank % 2 == 1 : rank == dtt_np - 1; }

/* every rank: DT_ERR_MISMATCH naming fn and exactly the bad ranks */
static void expect_mismatch(dt_status st, const char *fn, int odd, int rejected)
{
    char want[256];
    size_t len;
    int r, n = 0;
    for (r = 0; r < dtt_np; r++) n += is_bad(r, odd);
    len = (size_t)snprintf(want, sizeof want, "%s: consistency check: rank%s ", fn, n == 1 ? "" : "s");
    for (r = 0, n = 0; r < dtt_np; r++)
        if (is_bad(r, odd)) len += (size_t)snprintf(want + len, sizeof want - len, "%s%d", n++ ? ", " : "", r);
    if (rejected)
        snprintf(want + len, sizeof want - len, " rejected");
    else
        snprintf(want + len, sizeof want - len, " passed different arguments than rank 0 (rank 0: ");
    CHECK(st == DT_ERR_MISMATCH, "%s returned %s: %s", fn, dt_status_string(st), dt_last_error());
    if (rejected && is_bad(dtt_rank, odd)) { /* the rejecting rank tells its own story */
        snprintf(want, sizeof want, "%s: consistency check: this rank (%d) rejected its arguments", fn, dtt_rank);
    }
    if (getenv("DT_TEST_VERBOSE") && (dtt_rank == 0 || dtt_rank == dtt_np - 1))
        fprintf(stderr, "[rank %d] %s\n", dtt_rank, dt_last_error());
    CHECK(strstr(dt_last_error(), want) != NULL, "message \"%s\" lacks \"%s\"", dt_last_error(), want);
}

static double gval(int64_t i, int64_t j) { return (double)(10 * i + j); }

/* x: f64 [r, c] Shard(0) with the closed form, made with checks off */
static dt_tensor *make_x(int64_t r, int64_t c, dt_dtype t)
{
    dt_tensor_desc d;
    dt_tensor *x = NULL;
    double *full = (double *)dtt_malloc((size_t)(r * c) * sizeof(double));
    float *ff = (float *)dtt_malloc((size_t)(r * c) * sizeof(float));
    int64_t i, j;
    int was = dt_get_checks();
    for (i = 0; i < r; i++)
        for (j = 0; j < c; j++) { full[i * c + j] = gval(i, j); ff[i * c + j] = (float)gval(i, j); }
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = 2;
    d.shape[0] = r;
    d.shape[1] = c;
    d.placements[0] = dt_shard(0);
    dt_set_checks(0);
    CHECK_OK(dt_tensor_distribute(g_mesh, &d, t == DT_F32 ? (void *)ff : (void *)full, DT_SRC_ALL, &x));
    dt_set_checks(was);
    free(full);
    free(ff);
    return x;
}

static void check_full(const dt_tensor *x, const char *what)
{
    double full[R * C];
    int i, j, bad = 0;
    CHECK_OK(dt_tensor_gather(x, full));
    for (i = 0; i < R; i++)
        for (j = 0; j < C; j++) bad += full[i * C + j] != gval(i, j);
    CHECK(bad == 0, "%s: %d wrong values", what, bad);
}

static void check_unchanged(const dt_tensor *x)
{
    int64_t ls[2], lo[2], i, j, bad = 0;
    const double *p = (const double *)dt_tensor_data(x);
    dt_tensor_local_shape(x, ls);
    dt_tensor_local_offset(x, lo);
    for (i = 0; i < ls[0]; i++)
        for (j = 0; j < ls[1]; j++) bad += p[i * ls[1] + j] != gval(lo[0] + i, lo[1] + j);
    CHECK(bad == 0, "input changed (%lld values)", (long long)bad);
}

/* the calls every rank agrees on: values by the closed form */
static void agreeing_calls(void)
{
    dt_tensor *x = make_x(R, C, DT_F64), *y = NULL, *s = NULL, *z = NULL, *u = NULL, *w = NULL;
    dt_placement rep[1], s1[1];
    dt_tensor_desc d;
    double cs[C], full[R * C];
    int j, bad = 0, dim0 = 0;
    rep[0] = dt_replicate();
    s1[0] = dt_shard(1);
    CHECK_OK(dt_tensor_redistribute(x, rep, &y));
    if (y) check_full(y, "redistribute S(0) -> R");
    CHECK_OK(dt_tensor_redistribute(x, s1, &z));
    if (z) check_full(z, "redistribute S(0) -> S(1)");
    CHECK_OK(dt_tensor_redistribute(x, s1, &z)); /* *out reused */
    CHECK_OK(dt_sum(x, 1, &dim0, 0, &s));
    if (s) {
        CHECK_OK(dt_tensor_gather(s, cs));
        for (j = 0; j < C; j++) bad += cs[j] != 280.0 + 8.0 * j;
        CHECK(bad == 0, "column sums: %d wrong", bad);
    }
    CHECK_OK(dt_scale(x, 2.0, &u));
    if (u) {
        CHECK_OK(dt_tensor_gather(u, full));
        for (j = 0, bad = 0; j < R * C; j++) bad += full[j] != 2.0 * gval(j / C, j % C);
        CHECK(bad == 0, "scale: %d wrong", bad);
    }
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = 2;
    d.shape[0] = R;
    d.shape[1] = C;
    d.placements[0] = dt_shard(1);
    for (j = 0; j < R * C; j++) full[j] = gval(j / C, j % C);
    CHECK_OK(dt_tensor_distribute(g_mesh, &d, full, 0, &w));
    if (w) check_full(w, "distribute from rank 0");
    CHECK_OK(dt_manual_seed(g_mesh, 7));
    CHECK_OK(dt_uniform_(w, 0.0, 1.0));
    check_unchanged(x);
    dt_tensor_destroy(w);
    dt_tensor_destroy(u);
    dt_tensor_destroy(s);
    dt_tensor_destroy(z);
    dt_tensor_destroy(y);
    dt_tensor_destroy(x);
}

static void disagreeing_calls(int odd)
{
    dt_tensor *x = make_x(R, C, DT_F64), *o = NULL, *other;
    int me_bad = is_bad(dtt_rank, odd), dim;
    dt_placement pl[1];
    dt_comm_stats cs;
    dt_tensor_desc d;
    dt_status st;
    double full[R * C];

    dtt_ctx("odd %d", odd);
    /* another destination placement; no payload moves */
    dt_comm_reset_stats(g_comm);
    pl[0] = me_bad ? dt_shard(1) : dt_replicate();
    st = dt_tensor_redistribute(x, pl, &o);
    expect_mismatch(st, "dt_tensor_redistribute", odd, 0);
    CHECK(o == NULL, "*out set on a mismatch");
    dt_comm_get_stats(g_comm, &cs);
    CHECK(cs.calls == 0 && cs.bytes_sent == 0 && cs.bytes_recv == 0, "a refused call moved %llu bytes in %llu calls",
          (unsigned long long)cs.bytes_sent, (unsigned long long)cs.calls);
    if (!me_bad) CHECK(strstr(dt_last_error(), "f64[8, 6] [S(0)] -> [R]; rank") != NULL, "rank 0's side: %s",
                       dt_last_error());
    CHECK(strstr(dt_last_error(), "f64[8, 6] [S(0)] -> [S(1)])") != NULL, "the bad side: %s", dt_last_error());
    check_unchanged(x);

    /* another shape (the tensors made with checks off), gather and redistribute */
    other = me_bad ? make_x(R, C + 1, DT_F64) : x;
    pl[0] = dt_replicate();
    st = dt_tensor_redistribute(other, pl, &o);
    expect_mismatch(st, "dt_tensor_redistribute", odd, 0);
    CHECK(o == NULL, "*out set on a mismatch");
    st = dt_tensor_gather(other, me_bad ? NULL : full); /* NULL: the bad ranks' own error comes second */
    CHECK(st == DT_ERR_MISMATCH, "gather: %s", dt_status_string(st));
    if (other != x) dt_tensor_destroy(other);

    /* another dtype */
    other = me_bad ? make_x(R, C, DT_F32) : x;
    st = dt_tensor_redistribute(other, pl, &o);
    expect_mismatch(st, "dt_tensor_redistribute", odd, 0);
    CHECK(strstr(dt_last_error(), "f32[8, 6]") != NULL, "f32 side: %s", dt_last_error());
    /* an op whose inputs one rank rejects (f64 + f32): all fail */
    st = dt_add(x, other, &o);
    if (me_bad) expect_mismatch(st, "dt_add", odd, 1);
    else {
        CHECK(st == DT_ERR_MISMATCH, "dt_add: %s", dt_status_string(st));
        expect_mismatch(st, "dt_add", odd, 1);
    }
    CHECK(o == NULL, "*out set on a mismatch");
    if (other != x) dt_tensor_destroy(other);

    /* another op */
    st = me_bad ? dt_neg(x, &o) : dt_abs(x, &o);
    CHECK(st == DT_ERR_MISMATCH, "neg/abs: %s", dt_status_string(st));
    CHECK(o == NULL, "*out set on a mismatch");
    CHECK(strstr(dt_last_error(), "dt_neg") != NULL || strstr(dt_last_error(), "dt_abs") != NULL, "%s",
          dt_last_error());
    /* another static arg */
    dim = me_bad ? 1 : 0;
    st = dt_sum(x, 1, &dim, 0, &o);
    expect_mismatch(st, "dt_sum", odd, 0);
    CHECK(o == NULL, "*out set on a mismatch");
    CHECK(strstr(dt_last_error(), "; args ") != NULL, "args shown: %s", dt_last_error());
    /* another scalar */
    st = dt_scale(x, me_bad ? 3.0 : 2.0, &o);
    expect_mismatch(st, "dt_scale", odd, 0);
    CHECK(o == NULL, "*out set on a mismatch");
    check_unchanged(x);

    /* distribute: another shape (DT_SRC_ALL, which moves nothing) and another src_rank */
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = 2;
    d.shape[0] = R;
    d.shape[1] = me_bad ? C - 1 : C;
    d.placements[0] = dt_shard(0);
    st = dt_tensor_distribute(g_mesh, &d, full, DT_SRC_ALL, &o);
    expect_mismatch(st, "dt_tensor_distribute", odd, 0);
    CHECK(o == NULL, "*out set on a mismatch");
    d.shape[1] = C;
    st = dt_tensor_distribute(g_mesh, &d, full, me_bad ? 1 : 0, &o);
    expect_mismatch(st, "dt_tensor_distribute", odd, 0);
    CHECK(strstr(dt_last_error(), "src_rank 1") != NULL, "src_rank shown: %s", dt_last_error());
    /* from_local without DT_VERIFY: another placement */
    {
        int64_t ls[2];
        d.placements[0] = me_bad ? dt_shard(1) : dt_shard(0);
        dt_layout(g_mesh, &d, &dtt_rank, ls, NULL);
        d.local_shape = ls;
        st = dt_tensor_from_local(g_mesh, &d, full, DT_COPY, &o);
        expect_mismatch(st, "dt_tensor_from_local", odd, 0);
        d.local_shape = NULL;
    }
    /* random fills: tensors of another shape; the RNG state stays */
    {
        uint64_t s0, o0, s1, o1;
        CHECK_OK(dt_rng_get_state(g_mesh, &s0, &o0));
        other = me_bad ? make_x(R, C + 1, DT_F64) : make_x(R, C, DT_F64);
        st = dt_uniform_(other, 0.0, 1.0);
        expect_mismatch(st, "dt_uniform_", odd, 0);
        CHECK_OK(dt_rng_get_state(g_mesh, &s1, &o1));
        CHECK(s0 == s1 && o0 == o1, "the RNG state moved");
        dt_tensor_destroy(other);
    }
    dt_tensor_destroy(x);
    dtt_ctx("");
}

/* a tensor of zeros (checks off while it is made) */
static dt_tensor *zeros(dt_dtype t, int ndim, int64_t s0, int64_t s1, dt_placement p0)
{
    dt_tensor_desc d;
    dt_tensor *z = NULL;
    int was = dt_get_checks();
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = ndim;
    d.shape[0] = s0;
    d.shape[1] = s1;
    d.placements[0] = p0;
    dt_set_checks(0);
    CHECK_OK(dt_tensor_zeros(g_mesh, &d, &z));
    dt_set_checks(was);
    return z;
}

/* late argument errors: the bad ranks pass an argument that the op refuses
   after its inputs were accepted (a dim, a perm, a shape, a scalar). Every
   rank returns promptly with DT_ERR_MISMATCH (the bad ranks' message tells
   their own error), *out stays NULL, the input keeps its values. */
static void late_refusals(int odd)
{
    dt_tensor *x = make_x(R, C, DT_F64), *o = NULL, *outs[2] = { NULL, NULL };
    dt_tensor *v = zeros(DT_F64, 1, C, 0, dt_replicate()), *w = zeros(DT_F64, 2, C, 4, dt_replicate());
    dt_tensor *cm = zeros(DT_F64, 2, R, 4, dt_replicate()), *xi = zeros(DT_I32, 2, R, C, dt_shard(0));
    dt_tensor *yi = zeros(DT_I32, 2, R, C, dt_shard(0)), *idx = zeros(DT_I64, 1, 4, 0, dt_replicate());
    dt_tensor *tgt = zeros(DT_I64, 1, R, 0, dt_replicate());
    const dt_tensor *xs[2];
    int me_bad = is_bad(dtt_rank, odd), dim, perm[2], k;
    int64_t shp[2], sizes[2];
    dt_status st;
    dtt_ctx("late refusals, odd %d", odd);
    xs[0] = xs[1] = x;
#define LATE(fname, call)                                                          \
    do {                                                                           \
        o = NULL;                                                                  \
        st = (call);                                                               \
        expect_mismatch(st, fname, odd, 1);                                        \
        CHECK(o == NULL, "%s: *out set on a refusal", fname);                      \
        if (o) { dt_tensor_destroy(o); o = NULL; }                                 \
    } while (0)
    LATE("dt_softmax", dt_softmax(x, me_bad ? 2 : 1, &o));
    LATE("dt_log_softmax", dt_log_softmax(x, me_bad ? -3 : -1, &o));
    dim = me_bad ? -3 : 0;
    LATE("dt_sum", dt_sum(x, 1, &dim, 0, &o));
    LATE("dt_mean", dt_mean(x, me_bad ? -1 : 1, &dim, 0, &o));
    LATE("dt_transpose", dt_transpose(x, 0, me_bad ? 2 : 1, &o));
    perm[0] = me_bad ? 0 : 1;
    perm[1] = 0;
    LATE("dt_permute", dt_permute(x, perm, &o));
    LATE("dt_squeeze", dt_squeeze(x, me_bad ? 5 : 0, &o));
    LATE("dt_unsqueeze", dt_unsqueeze(x, me_bad ? 4 : 0, &o));
    shp[0] = me_bad ? 7 : C;
    shp[1] = R;
    LATE("dt_reshape", dt_reshape(x, 2, shp, &o));
    LATE("dt_narrow", dt_narrow(x, 1, 0, me_bad ? C + 1 : 2, &o));
    LATE("dt_cat", dt_cat(2, xs, me_bad ? 2 : 0, &o));
    LATE("dt_stack", dt_stack(2, xs, me_bad ? 3 : 0, &o));
    LATE("dt_mm", dt_mm(x, me_bad ? v : w, &o));
    LATE("dt_dot", dt_dot(v, me_bad ? w : v, &o));
    LATE("dt_addmm", dt_addmm(cm, x, me_bad ? v : w, 1.0, 1.0, &o));
    LATE("dt_cast", dt_cast(x, me_bad ? (dt_dtype)99 : DT_F32, &o));
    LATE("dt_scale", dt_scale(xi, me_bad ? 2.5 : 2.0, &o));
    LATE("dt_embedding", dt_embedding(me_bad ? v : x, idx, &o));
    LATE("dt_cross_entropy", dt_cross_entropy(x, me_bad ? x : tgt, &o));
    st = dt_axpy(me_bad ? 0.5 : 1.0, xi, yi);
    expect_mismatch(st, "dt_axpy", odd, 1);
    sizes[0] = 3;
    sizes[1] = me_bad ? 4 : 3;
    st = dt_split(x, 1, 2, sizes, outs); /* the good ranks meet the refusal in the first inner call's check */
    CHECK(st == DT_ERR_MISMATCH, "dt_split returned %s: %s", dt_status_string(st), dt_last_error());
    CHECK(strncmp(dt_last_error(), "dt_split: ", 10) == 0 && strstr(dt_last_error(), "rejected") != NULL,
          "dt_split's message: %s", dt_last_error());
    CHECK(outs[0] == NULL && outs[1] == NULL, "dt_split: outs set on a refusal");
    for (k = 0; k < 2; k++) dt_tensor_destroy(outs[k]);
#undef LATE
    /* and the same calls still work afterwards (nobody is left in an exchange) */
    CHECK_OK(dt_softmax(x, 1, &o));
    dt_tensor_destroy(o);
    check_unchanged(x);
    dt_tensor_destroy(tgt);
    dt_tensor_destroy(idx);
    dt_tensor_destroy(yi);
    dt_tensor_destroy(xi);
    dt_tensor_destroy(cm);
    dt_tensor_destroy(w);
    dt_tensor_destroy(v);
    dt_tensor_destroy(x);
    dtt_ctx("");
}

int main(int argc, char **argv)
{
    dt_mesh_desc md;
    dtt_init(&argc, &argv, "test_check");
    /* the environment is read at the first check or dt_get_checks */
    setenv("DTENSOR_CHECK", "1", 1);
    CHECK(dt_get_checks() == 1, "DTENSOR_CHECK=1 did not turn the checks on");
    dt_set_checks(0);
    CHECK(dt_get_checks() == 0, "dt_set_checks(0)");
    dt_set_checks(1);
    CHECK(dt_get_checks() == 1, "dt_set_checks(1)");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    CHECK_OK(dt_mesh_create(g_comm, &md, &g_mesh));
    if (g_mesh) {
        dtt_ctx("checks on");
        agreeing_calls();
        if (dtt_np > 1) {
            disagreeing_calls(0);
            late_refusals(0);
            if (dtt_np > 2) { disagreeing_calls(1); late_refusals(1); }
        }
        dt_set_checks(0);
        dtt_ctx("checks off");
        agreeing_calls();
        dtt_ctx("");
    }
    dt_mesh_destroy(g_mesh);
    dt_comm_destroy(g_comm);
    return dtt_finish();
}
