/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  own
*/
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
     promptly (the refusal takes part in the one agreement exchange).
   - One rank's argument bad, for every public collective call (g_cases:
     meshes, distribute/from_local/redistribute/gather, every op family,
     conv1d, stencils, halos, random fills and seeds, RNG state and .npy
     files, the layers): NULL/empty paths, NULL callbacks and *out pointers,
     scalars out of range, and (at 2+ ranks) another valid scalar, name,
     placement or file. Every rank returns the same non-OK status within
     CASE_SECONDS (an alarm: a hang prints a FAIL line naming the case), the
     message starts with the call's name, *out stays NULL, the inputs and
     the fill target keep their values, the RNG state does not move, no
     file is created. DT_TEST_TABLE=1 prints the statuses as markdown rows.
   - The split rules: ranks passing another sizes array, cyclic
     block or rule (balanced vs torch.chunk too) to redistribute, distribute
     and from_local get DT_ERR_MISMATCH naming exactly them; one rank's bad
     rule (sizes adding up to R + 1, negative, NULL, block <= 0, split > 3,
     split fields on Replicate/Partial), local_shape or DT_INFER_SIZES
     variant (local_shape NULL, a row more, an unsplit dim off, the flag on
     one rank only, a replica disagreeing) is one of the one-rank cases
     below. dt_tensor_empty is local (test_badinput has its rules).
   - from_local is collective: one rank's local_shape contradicting the
     placements fails every rank with checks on and off, with DT_COPY,
     DT_BORROW, DT_VERIFY and DT_INFER_SIZES, and rank 0's message carries
     that rank's own reason; a refusal of up to 490 characters arrives
     whole on the ranks that accepted theirs (whole_messages).
   - conv1d with checks off: another padding on one rank is DT_ERR_MISMATCH
     everywhere (no MPI abort), a refused padding fails every rank.
   - Allocation faults (DT_MALLOC below) in dt_tensor_save_npy/load_npy and
     dt_rng_save_state/load_state: allocation n of the last rank, then of
     rank 0, fails (every n the call makes), and rank 0's first allocation
     fails while the last rank passes an empty path (the agreement's slow
     path): every rank returns an error, none hangs, *out and the RNG state
     stay, and the call works afterwards. */
#define _POSIX_C_SOURCE 200112L /* setenv, alarm, sigaction */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* allocation faults: allocation number ck_fail_at (counted from the last
   reset) returns NULL on this rank */
static long ck_count = 0, ck_fail_at = 0;
static void *ck_malloc(size_t n)
{
    if (++ck_count == ck_fail_at && ck_fail_at) return NULL;
    return malloc(n);
}
#define DT_MALLOC(sz) ck_malloc(sz)
#define DT_FREE(p) free(p)
/* the agreements' first exchange: an allgather at 1-2 ranks, the max-reduction at 3+ */
#define DT__CTL_RANKS 2
#define DTENSOR_IMPLEMENTATION
#include "dtensor_layers.h" /* includes dtensor.h */
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

/* the split rules: sizes of R rows over the np ranks (PETSc's
   balanced parts), another valid array, one adding up to R + 1, one with a
   negative entry; filled by szk_init */
static int64_t g_szk_ok[64], g_szk_other[64], g_szk_bad[64], g_szk_neg[64];
static double g_flbuf[R * C]; /* from_local's buffer (DT_BORROW tensors outlive a case's frame) */
static void szk_init(void)
{
    int r;
    for (r = 0; r < dtt_np; r++) g_szk_ok[r] = R / dtt_np + (r < R % dtt_np);
    memcpy(g_szk_other, g_szk_ok, sizeof g_szk_ok);
    memcpy(g_szk_bad, g_szk_ok, sizeof g_szk_ok);
    memcpy(g_szk_neg, g_szk_ok, sizeof g_szk_ok);
    if (dtt_np > 1) {
        g_szk_other[0] += 1;
        g_szk_other[dtt_np - 1] -= 1;
        g_szk_neg[dtt_np - 1] += g_szk_neg[0] + 1;
    }
    g_szk_neg[0] = -1;
    g_szk_bad[dtt_np - 1] += 1;
}
static double gval(int64_t i, int64_t j) { return (double)(10 * i + j); }

/* a t [r, c] descriptor on the 1-D mesh with placement p0 */
static dt_tensor_desc desc2(dt_dtype t, int64_t r, int64_t c, dt_placement p0)
{
    int64_t shape[2];
    shape[0] = r;
    shape[1] = c;
    return dtt_desc(t, 2, shape, 1, &p0);
}

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
    d = desc2(t, r, c, dt_shard(0));
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
    d = desc2(DT_F64, R, C, dt_shard(1));
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
    d = desc2(DT_F64, R, me_bad ? C - 1 : C, dt_shard(0));
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
    /* the split rules: another sizes array, block or rule; no payload moves */
    {
        int64_t ls[2];
        int k;
        szk_init();
        for (k = 0; k < 4; k++) {
            dt_placement mine = k == 0 ? dt_shard_sizes(0, me_bad ? g_szk_other : g_szk_ok)
                              : k == 1 ? dt_shard_cyclic(1, me_bad ? 3 : 2)
                              : k == 2 ? (me_bad ? dt_shard_cyclic(0, 1) : dt_shard_balanced(0))
                                       : (me_bad ? dt_shard(0) : dt_shard_balanced(0)); /* same parts at 2-4 ranks */
            dtt_ctx("odd %d, split rules case %d", odd, k);
            dt_comm_reset_stats(g_comm);
            pl[0] = mine;
            st = dt_tensor_redistribute(x, pl, &o);
            expect_mismatch(st, "dt_tensor_redistribute", odd, 0);
            CHECK(o == NULL, "*out set on a mismatch");
            dt_comm_get_stats(g_comm, &cs);
            CHECK(cs.bytes_sent == 0 && cs.bytes_recv == 0, "a refused call moved %llu bytes",
                  (unsigned long long)cs.bytes_sent);
            d.placements[0] = mine;
            st = dt_tensor_distribute(g_mesh, &d, full, DT_SRC_ALL, &o);
            expect_mismatch(st, "dt_tensor_distribute", odd, 0);
            CHECK(o == NULL, "*out set on a mismatch");
            CHECK_OK(dt_layout(g_mesh, &d, &dtt_rank, ls, NULL));
            d.local_shape = ls;
            st = dt_tensor_from_local(g_mesh, &d, full, DT_COPY, &o);
            expect_mismatch(st, "dt_tensor_from_local", odd, 0);
            CHECK(o == NULL, "*out set on a mismatch");
            d.local_shape = NULL;
        }
        d.placements[0] = dt_shard(0);
        check_unchanged(x);
        dtt_ctx("odd %d", odd);
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
    d = desc2(t, s0, s1, p0);
    d.ndim = ndim;
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

/* ---- one rank's argument bad, for every public collective call ----------
   For each case (call x bad argument) the last rank (at 1 rank: rank 0, the
   only one) passes the bad argument and the others a good one. Every rank
   must return the same non-OK status, promptly (an alarm per case: a hang
   prints a FAIL line naming the case and exits), with a message that starts
   with the public call's name; *out stays NULL, the inputs and the fill
   target keep their values, the mesh's RNG state does not move. "differs"
   cases pass another valid value (scalar, name, placements, file), which
   is no error at 1 rank: they run at 2+ ranks. DT_TEST_TABLE=1: rank 0
   prints the table case -> every rank's status (markdown rows). */

#define CASE_SECONDS 20

static dt_mesh *g_mesh2 = NULL;     /* [1, np] named dp, tp */
static dt_tensor *g_x = NULL;       /* f64 [8, 6] S(0), the closed form */
static dt_tensor *g_t = NULL;       /* f64 [8, 6] S(0) zeros: random fills' target */
static dt_tensor *g_i = NULL;       /* i64 [4] R, zeros: indices */
static dt_tensor *g_i100 = NULL;    /* i64 [4] R, 100s: indices out of range */
static dt_tensor *g_i8 = NULL;      /* i64 [8] R, zeros: g_x's targets */
static dt_tensor *g_w64 = NULL;     /* f64 [6, 4] R */
static dt_tensor *g_h = NULL;       /* f64 [16] S(0) with a halo of 1 */
static dt_tensor *g_nh = NULL;      /* f64 [16] S(0), no halo */
static dt_tensor *g_cx = NULL, *g_cw = NULL; /* conv1d: x [2, 3, 16] S(2), w [4, 3, 3] R */
static dt_tp_linear *g_lin = NULL;  /* in 4, out 6, colwise */
static dt_tp_mlp *g_mlp = NULL;     /* in 4, hidden 8, dropout 0.5 */
static dt_tensor *g_lx = NULL, *g_lx5 = NULL, *g_ldy = NULL; /* [2, 4] R, [2, 5] R, dy [2, 6] S(-1) */
static dt_tensor *g_out = NULL;     /* every case's *out: must stay NULL */
static char g_path[4][256];         /* npy a, npy b (another file), rng a, rng b */
static char g_missing[256];         /* a path no case may create */
static char g_alarm_msg[256];
static int g_control = 0;           /* 1: the control run (every rank good): outputs are made */

static void on_alarm(int sig)
{
    ssize_t n;
    (void)sig;
    n = write(2, g_alarm_msg, strlen(g_alarm_msg));
    (void)n;
    _exit(1);
}

typedef dt_status (*case_fn)(int bad);
typedef struct onebad {
    const char *call; /* the public call the message must name */
    const char *bad;  /* what the bad rank passes */
    int differs;      /* 1: a valid value that differs (no error at 1 rank) */
    case_fn run;
} onebad;

static void noop_stencil(const dt_stencil_block *b, void *user) { (void)b; (void)user; }

static dt_tensor *mk(dt_dtype t, int ndim, const int64_t *shape, const dt_placement *pl)
{
    dt_tensor_desc d;
    dt_tensor *z = NULL;
    int was = dt_get_checks();
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = ndim;
    memcpy(d.shape, shape, (size_t)ndim * sizeof *shape);
    if (pl) d.placements[0] = pl[0];
    dt_set_checks(0);
    CHECK_OK(dt_tensor_zeros(g_mesh, &d, &z));
    dt_set_checks(was);
    return z;
}

static dt_tensor_desc desc86(int64_t cols) { return desc2(DT_F64, R, cols, dt_shard(0)); }

/* meshes */
/* a 1-D mesh over every rank: shape[0] np + extra, dim name `name`, out NULL if null_out */
static dt_status mesh_create_case(int extra, const char *name, int null_out)
{
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    dt_status st;
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np + extra;
    md.names[0] = name;
    st = dt_mesh_create(g_comm, &md, null_out ? NULL : &m);
    CHECK(g_control || m == NULL, "dt_mesh_create: *out set");
    dt_mesh_destroy(m);
    return st;
}
static dt_status c_mesh_create_shape(int bad) { return mesh_create_case(bad ? 1 : 0, NULL, 0); }
static dt_status c_mesh_create_names(int bad) { return mesh_create_case(0, bad ? "y" : "x", 0); }
static dt_status c_mesh_create_out(int bad) { return mesh_create_case(0, NULL, bad); }
static dt_status slice(int n, const char *const *names)
{
    dt_mesh *m = NULL;
    dt_status st = dt_mesh_slice(g_mesh2, n, names, &m);
    CHECK(g_control || m == NULL, "dt_mesh_slice: *out set");
    dt_mesh_destroy(m);
    return st;
}
static dt_status c_slice_unknown(int bad)
{
    const char *n[1];
    n[0] = bad ? "zz" : "tp";
    return slice(1, n);
}
static dt_status c_slice_other(int bad)
{
    const char *n[1];
    n[0] = bad ? "dp" : "tp";
    return slice(1, n);
}
static dt_status c_slice_null(int bad)
{
    const char *n[1] = { "tp" };
    return slice(1, bad ? NULL : n);
}
static dt_status flatten(const char *a, const char *name)
{
    dt_mesh *m = NULL;
    const char *n[2];
    dt_status st;
    n[0] = a;
    n[1] = "tp";
    st = dt_mesh_flatten(g_mesh2, 2, n, name, &m);
    CHECK(g_control || m == NULL, "dt_mesh_flatten: *out set");
    dt_mesh_destroy(m);
    return st;
}
static dt_status c_flatten_unknown(int bad) { return flatten(bad ? "zz" : "dp", "all"); }
static dt_status c_flatten_name(int bad) { return flatten("dp", bad ? "other" : "all"); }

/* tensors */
static dt_status c_distribute_src(int bad)
{
    dt_tensor_desc d = desc86(C);
    double full[R * C];
    memset(full, 0, sizeof full);
    return dt_tensor_distribute(g_mesh, &d, full, bad ? dtt_np + 3 : 0, &g_out);
}
static dt_status c_distribute_null(int bad)
{
    dt_tensor_desc d = desc86(C);
    double full[R * C];
    memset(full, 0, sizeof full);
    return dt_tensor_distribute(g_mesh, bad ? NULL : &d, full, DT_SRC_ALL, &g_out);
}
static dt_status c_distribute_out(int bad)
{
    dt_tensor_desc d = desc86(C);
    double full[R * C];
    memset(full, 0, sizeof full);
    return dt_tensor_distribute(g_mesh, &d, full, 0, bad ? NULL : &g_out);
}
static dt_status c_from_local_out(int bad)
{
    dt_tensor_desc d = desc86(C);
    double buf[R * C];
    d.placements[0] = dt_replicate();
    memset(buf, 0, sizeof buf);
    return dt_tensor_from_local(g_mesh, &d, buf, DT_COPY, bad ? NULL : &g_out);
}
static dt_status c_from_local_pl(int bad)
{
    dt_tensor_desc d = desc86(C);
    int64_t ls[2];
    double buf[R * C];
    if (bad) d.placements[0] = dt_shard(1);
    dt_layout(g_mesh, &d, &dtt_rank, ls, NULL);
    d.local_shape = ls;
    return dt_tensor_from_local(g_mesh, &d, buf, DT_COPY, &g_out);
}
static dt_status c_from_local_null(int bad)
{
    dt_tensor_desc d = desc86(C);
    double buf[R * C];
    d.placements[0] = dt_replicate(); /* (no rank's part is empty) */
    memset(buf, 0, sizeof buf);
    return dt_tensor_from_local(g_mesh, &d, bad ? NULL : buf, DT_COPY, &g_out);
}
static dt_status c_redistribute_null(int bad)
{
    dt_placement r[1];
    r[0] = dt_replicate();
    return dt_tensor_redistribute(g_x, bad ? NULL : r, &g_out);
}
static dt_status c_redistribute_pl(int bad)
{
    dt_placement r[1];
    r[0] = bad ? dt_shard(1) : dt_replicate();
    return dt_tensor_redistribute(g_x, r, &g_out);
}
static dt_status c_gather_null(int bad)
{
    double full[R * C];
    return dt_tensor_gather(g_x, bad ? NULL : full);
}

static dt_placement split_field(dt_placement p, int split, int64_t block, const int64_t *sizes)
{
    p.split = (uint8_t)split;
    p.block = block;
    p.sizes = sizes;
    return p;
}
/* (dt_tensor_empty / _zeros are local calls, not collective: test_badinput has their bad rules) */
static dt_status redist_to(dt_placement p)
{
    dt_placement r[1];
    r[0] = p;
    return dt_tensor_redistribute(g_x, r, &g_out);
}
static dt_status c_redist_sum(int bad) { return redist_to(dt_shard_sizes(0, bad ? g_szk_bad : g_szk_ok)); }
static dt_status c_redist_block(int bad) { return redist_to(dt_shard_cyclic(1, bad ? -1 : 2)); }
static dt_status c_redist_stray(int bad) { return redist_to(split_field(dt_replicate(), bad ? 3 : 0, 0, NULL)); }
static dt_status c_redist_sizes_other(int bad) { return redist_to(dt_shard_sizes(0, bad ? g_szk_other : g_szk_ok)); }
static dt_status c_redist_block_other(int bad) { return redist_to(dt_shard_cyclic(1, bad ? 1 : 2)); }
static dt_status distribute_with(dt_placement p, int src)
{
    dt_tensor_desc d = desc86(C);
    double full[R * C];
    memset(full, 0, sizeof full);
    d.placements[0] = p;
    return dt_tensor_distribute(g_mesh, &d, full, src, &g_out);
}
static dt_status c_distribute_sum(int bad) { return distribute_with(dt_shard_sizes(0, bad ? g_szk_bad : g_szk_ok), 0); }
static dt_status c_distribute_split(int bad)
{
    return distribute_with(split_field(dt_shard(0), bad ? 9 : DT_SPLIT_BALANCED, 0, NULL), DT_SRC_ALL);
}
static dt_status c_distribute_sizes_other(int bad)
{
    return distribute_with(dt_shard_sizes(0, bad ? g_szk_other : g_szk_ok), DT_SRC_ALL);
}
/* from_local of g_flbuf: placements[0] p; ls (or NULL) the local shape given */
static dt_status from_local_with(dt_mesh *m, dt_placement p, const int64_t *ls, unsigned flags)
{
    dt_tensor_desc d = desc86(C);
    d.placements[0] = p;
    d.local_shape = ls;
    return dt_tensor_from_local(m, &d, g_flbuf, flags, &g_out);
}
static dt_status c_from_local_sum(int bad)
{
    return from_local_with(g_mesh, dt_shard_sizes(0, bad ? g_szk_bad : g_szk_ok), NULL, DT_COPY);
}
static dt_status c_from_local_sizes_other(int bad)
{
    return from_local_with(g_mesh, dt_shard_sizes(0, bad ? g_szk_other : g_szk_ok), NULL, DT_COPY);
}
/* this rank's local shape under torch.chunk rows (dt_layout), rows + drow */
static const int64_t *chunk_ls(int64_t *ls, int64_t drow)
{
    dt_tensor_desc d = desc86(C);
    CHECK_OK(dt_layout(g_mesh, &d, &dtt_rank, ls, NULL));
    ls[0] += drow;
    return ls;
}
static dt_status c_from_local_ls(int bad)
{
    int64_t ls[2];
    return from_local_with(g_mesh, dt_shard(0), chunk_ls(ls, bad), DT_COPY);
}
static dt_status c_from_local_ls_verify(int bad)
{
    int64_t ls[2];
    return from_local_with(g_mesh, dt_shard(0), chunk_ls(ls, bad), DT_BORROW | DT_VERIFY);
}
static dt_status c_from_local_ls_borrow(int bad)
{
    int64_t ls[2];
    return from_local_with(g_mesh, dt_shard(0), chunk_ls(ls, bad ? -1 : 0), DT_BORROW);
}
static dt_status c_infer_null(int bad)
{
    int64_t ls[2];
    ls[0] = g_szk_ok[dtt_rank];
    ls[1] = C;
    return from_local_with(g_mesh, dt_shard(0), bad ? NULL : ls, DT_INFER_SIZES);
}
static dt_status c_infer_sum(int bad)
{
    int64_t ls[2];
    ls[0] = g_szk_ok[dtt_rank] + bad;
    ls[1] = C;
    return from_local_with(g_mesh, dt_shard(0), ls, DT_INFER_SIZES | DT_COPY);
}
static dt_status c_infer_unsplit(int bad)
{
    int64_t ls[2];
    ls[0] = g_szk_ok[dtt_rank];
    ls[1] = C + bad;
    return from_local_with(g_mesh, dt_shard_balanced(0), ls, DT_INFER_SIZES);
}
static dt_status c_infer_verify(int bad)
{
    int64_t ls[2];
    ls[0] = g_szk_ok[dtt_rank] - bad;
    ls[1] = C;
    return from_local_with(g_mesh, dt_shard_cyclic(0, 2), ls, DT_INFER_SIZES | DT_VERIFY);
}
static dt_status c_infer_flag(int bad)
{
    int64_t ls[2];
    return from_local_with(g_mesh, dt_shard(0), chunk_ls(ls, 0), DT_COPY | (bad ? DT_INFER_SIZES : 0));
}
/* [1, np] mesh, S(0) then R: every rank holds the whole tensor; the last claims a row less */
static dt_status c_infer_replica(int bad)
{
    int64_t ls[2];
    ls[0] = R - bad;
    ls[1] = C;
    return from_local_with(g_mesh2, dt_shard(0), ls, DT_INFER_SIZES | DT_COPY);
}

/* ops, one case per family at least */
static dt_status c_neg_out(int bad) { return dt_neg(g_x, bad ? NULL : &g_out); }
static dt_status c_scale_a(int bad) { return dt_scale(g_x, bad ? 3.0 : 2.0, &g_out); }
static dt_status c_pow_p(int bad) { return dt_pow(g_x, bad ? 3.0 : 2.0, &g_out); }
static dt_status c_fill_v(int bad) { return dt_fill(g_x, bad ? 1.0 : 0.0, &g_out); }
static dt_status c_cast_to(int bad) { return dt_cast(g_x, bad ? (dt_dtype)99 : DT_F32, &g_out); }
static dt_status c_add_shape(int bad) { return dt_add(g_x, bad ? g_i : g_x, &g_out); }
static dt_status c_axpy_a(int bad)
{
    dt_status st = dt_axpy(bad ? 0.5 : 1.0, g_x, g_t);
    return st;
}
static dt_status c_sum_dim(int bad)
{
    int dim = bad ? 2 : 0;
    return dt_sum(g_x, 1, &dim, 0, &g_out);
}
static dt_status c_sum_other(int bad)
{
    int dim = bad ? 1 : 0;
    return dt_sum(g_x, 1, &dim, 0, &g_out);
}
static dt_status c_argmax_n(int bad)
{
    int dims[2] = { 0, 1 };
    return dt_argmax(g_x, bad ? 2 : 1, dims, 0, &g_out);
}
static dt_status c_matmul_shape(int bad) { return dt_matmul(g_x, bad ? g_x : g_w64, &g_out); }
static dt_status c_addmm_beta(int bad)
{
    int64_t sh[2] = { R, 4 };
    dt_tensor *c = mk(DT_F64, 2, sh, NULL); /* [8, 6] @ [6, 4] + [8, 4] */
    dt_status st = dt_addmm(c, g_x, g_w64, bad ? 0.5 : 1.0, 1.0, &g_out);
    dt_tensor_destroy(c);
    return st;
}
static dt_status c_softmax_dim(int bad) { return dt_softmax(g_x, bad ? 2 : 1, &g_out); }
static dt_status c_layer_norm_eps(int bad) { return dt_layer_norm(g_x, NULL, NULL, bad ? 1e-3 : 1e-5, &g_out); }
static dt_status c_rms_norm_w(int bad) { return dt_rms_norm(g_x, bad ? g_w64 : NULL, 1e-5, &g_out); }
static dt_status c_transpose_dim(int bad) { return dt_transpose(g_x, 0, bad ? 5 : 1, &g_out); }
static dt_status c_reshape_shape(int bad)
{
    int64_t sh[2];
    sh[0] = bad ? 7 : C;
    sh[1] = R;
    return dt_reshape(g_x, 2, sh, &g_out);
}
static dt_status c_narrow_len(int bad) { return dt_narrow(g_x, 1, 0, bad ? C + 1 : 2, &g_out); }
static dt_status c_cat_dim(int bad)
{
    const dt_tensor *xs[2];
    xs[0] = xs[1] = g_x;
    return dt_cat(2, xs, bad ? 3 : 0, &g_out);
}
static dt_status c_split_sizes(int bad)
{
    dt_tensor *outs[2] = { NULL, NULL };
    int64_t sizes[2];
    dt_status st;
    sizes[0] = 3;
    sizes[1] = bad ? 4 : 3;
    st = dt_split(g_x, 1, 2, sizes, outs);
    CHECK(g_control || (outs[0] == NULL && outs[1] == NULL), "dt_split: outs set");
    dt_tensor_destroy(outs[0]);
    dt_tensor_destroy(outs[1]);
    return st;
}
static dt_status c_embedding_idx(int bad) { return dt_embedding(g_x, bad ? g_i100 : g_i, &g_out); }
static dt_status c_xent_target(int bad) { return dt_cross_entropy(g_x, bad ? g_x : g_i8, &g_out); }

/* the rest of the unary family (out NULL on the bad rank) */
#define UNARY_CASE(op) \
    static dt_status c_##op##_out(int bad) { return op(g_x, bad ? NULL : &g_out); }
UNARY_CASE(dt_abs)
UNARY_CASE(dt_exp)
UNARY_CASE(dt_log)
UNARY_CASE(dt_sqrt)
UNARY_CASE(dt_rsqrt)
UNARY_CASE(dt_sin)
UNARY_CASE(dt_cos)
UNARY_CASE(dt_tanh)
UNARY_CASE(dt_sigmoid)
UNARY_CASE(dt_relu)
UNARY_CASE(dt_gelu)
UNARY_CASE(dt_silu)
UNARY_CASE(dt_copy)
#undef UNARY_CASE
static dt_status c_shift_a(int bad) { return dt_shift(g_x, bad ? 1.0 : 2.0, &g_out); }
/* binary: b [6, 4] does not broadcast with x [8, 6] */
#define BINARY_CASE(op) \
    static dt_status c_##op##_b(int bad) { return op(g_x, bad ? g_w64 : g_x, &g_out); }
BINARY_CASE(dt_sub)
BINARY_CASE(dt_mul)
BINARY_CASE(dt_div)
BINARY_CASE(dt_maximum)
BINARY_CASE(dt_minimum)
#undef BINARY_CASE
/* reductions: another keepdim */
#define REDUCE_CASE(op) \
    static dt_status c_##op##_keep(int bad) { int d = 1; return op(g_x, 1, &d, bad, &g_out); }
REDUCE_CASE(dt_mean)
REDUCE_CASE(dt_max)
REDUCE_CASE(dt_min)
REDUCE_CASE(dt_norm2)
#undef REDUCE_CASE
static dt_status c_mm_shape(int bad) { return dt_mm(g_x, bad ? g_x : g_w64, &g_out); }
static dt_status c_dot_shape(int bad)
{
    int64_t sh[1] = { C };
    dt_tensor *v = mk(DT_F64, 1, sh, NULL);
    dt_status st = dt_dot(v, bad ? g_x : v, &g_out);
    dt_tensor_destroy(v);
    return st;
}
static dt_status c_bmm_shape(int bad)
{
    int64_t sa[3] = { 2, 3, 4 }, sb[3] = { 2, 4, 5 };
    dt_tensor *a = mk(DT_F64, 3, sa, NULL), *b = mk(DT_F64, 3, sb, NULL);
    dt_status st = dt_bmm(a, bad ? a : b, &g_out);
    dt_tensor_destroy(b);
    dt_tensor_destroy(a);
    return st;
}
static dt_status c_linear_w(int bad)
{
    int64_t sw[2] = { 4, C };
    dt_tensor *w = mk(DT_F64, 2, sw, NULL);
    dt_status st = dt_linear(g_x, bad ? g_w64 : w, NULL, &g_out);
    dt_tensor_destroy(w);
    return st;
}
static dt_status c_log_softmax_dim(int bad) { return dt_log_softmax(g_x, bad ? -3 : -1, &g_out); }
static dt_status c_permute_dup(int bad)
{
    int perm[2];
    perm[0] = bad ? 0 : 1;
    perm[1] = 0;
    return dt_permute(g_x, perm, &g_out);
}
static dt_status c_squeeze_dim(int bad) { return dt_squeeze(g_x, bad ? 5 : 0, &g_out); }
static dt_status c_unsqueeze_dim(int bad) { return dt_unsqueeze(g_x, bad ? 4 : 0, &g_out); }
static dt_status c_stack_dim(int bad)
{
    const dt_tensor *xs[2];
    xs[0] = xs[1] = g_x;
    return dt_stack(2, xs, bad ? 4 : 0, &g_out);
}

/* convolution, stencils, halos */
/* dt_conv2d / dt_conv3d of an F64 x (nd dims sx, Shard(2)) with an F64 replicated w (sw) */
static dt_status conv_nd(int nd, const int64_t *sx, const int64_t *sw, const dt_conv_desc *cd)
{
    dt_placement s2[1];
    dt_tensor *x, *w;
    dt_status st;
    s2[0] = dt_shard(2);
    x = mk(DT_F64, nd, sx, s2);
    w = mk(DT_F64, nd, sw, NULL);
    st = nd == 4 ? dt_conv2d(x, w, NULL, cd, &g_out) : dt_conv3d(x, w, NULL, cd, &g_out);
    dt_tensor_destroy(w);
    dt_tensor_destroy(x);
    return st;
}
static dt_status c_conv2d_pad(int bad)
{
    int64_t sx[4] = { 1, 2, 8, 4 }, sw[4] = { 3, 2, 3, 3 };
    dt_conv_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.padding[0] = cd.padding[1] = 1;
    if (bad) cd.padding[1] = -1;
    return conv_nd(4, sx, sw, &cd);
}
static dt_status c_conv3d_dil(int bad)
{
    int64_t sx[5] = { 1, 1, 8, 3, 3 }, sw[5] = { 1, 1, 2, 2, 2 };
    dt_conv_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.dilation[0] = bad ? 2 : 1;
    return conv_nd(5, sx, sw, &cd);
}
static dt_status conv(int64_t pad)
{
    dt_conv_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.padding[0] = pad;
    return dt_conv1d(g_cx, g_cw, NULL, &cd, &g_out);
}
static dt_status c_conv_pad_neg(int bad) { return conv(bad ? -1 : 1); }
static dt_status c_conv_pad_other(int bad) { return conv(bad ? 2 : 1); }
static dt_status c_conv_w_null(int bad)
{
    dt_conv_desc cd;
    memset(&cd, 0, sizeof cd);
    return dt_conv1d(g_cx, bad ? NULL : g_cw, NULL, &cd, &g_out);
}
static dt_status c_stencil_fn(int bad) { return dt_stencil_apply(g_h, bad ? NULL : noop_stencil, NULL, &g_out); }
static dt_status c_stencil_out(int bad) { return dt_stencil_apply(g_h, noop_stencil, NULL, bad ? NULL : &g_out); }
static dt_status set_halo(int64_t width)
{
    dt_halo_desc hd;
    memset(&hd, 0, sizeof hd);
    hd.width[0] = width;
    return dt_tensor_set_halo(g_nh, &hd);
}
static dt_status c_set_halo_width(int bad) { return set_halo(bad ? -1 : 1); }
static dt_status c_set_halo_other(int bad) { return set_halo(bad ? 2 : 1); }
static dt_status c_halo_exchange_nohalo(int bad) { return dt_halo_exchange(bad ? g_nh : g_h); }
static dt_status c_halo_begin_nohalo(int bad)
{
    dt_status st = dt_halo_exchange_begin(bad ? g_nh : g_h);
    if (!st) dt_halo_exchange_end(g_h); /* (would be a failure; keep the tensor usable) */
    return st;
}

/* random numbers */
static dt_status c_uniform_lohi(int bad) { return dt_uniform_(g_t, bad ? 2.0 : 0.0, 1.0); }
static dt_status c_uniform_lo(int bad) { return dt_uniform_(g_t, bad ? -1.0 : 0.0, 1.0); }
static dt_status c_normal_std(int bad) { return dt_normal_(g_t, 0.0, bad ? -1.0 : 1.0); }
static dt_status c_normal_mean(int bad) { return dt_normal_(g_t, bad ? 1.0 : 0.0, 1.0); }
static dt_status c_bernoulli_p(int bad) { return dt_bernoulli_(g_t, bad ? 2.0 : 0.5); }
static dt_status c_bernoulli_other(int bad) { return dt_bernoulli_(g_t, bad ? 0.25 : 0.5); }
static dt_status c_randint_range(int bad) { return dt_randint_(g_t, bad ? 5 : 0, 5); }
static dt_status c_randint_hi(int bad) { return dt_randint_(g_t, 0, bad ? 6 : 5); }
static dt_status c_dropout_p(int bad) { return dt_dropout(g_x, bad ? 1.5 : 0.5, &g_out, NULL); }
static dt_status c_dropout_other(int bad) { return dt_dropout(g_x, bad ? 0.25 : 0.5, &g_out, NULL); }
static dt_status c_dropout_out(int bad) { return dt_dropout(g_x, 0.5, bad ? NULL : &g_out, NULL); }
static dt_status c_rand_shape(int bad)
{
    dt_tensor_desc d = desc86(bad ? C + 1 : C);
    return dt_tensor_rand(g_mesh, &d, &g_out);
}
static dt_status c_rand_out(int bad)
{
    dt_tensor_desc d = desc86(C);
    return dt_tensor_rand(g_mesh, &d, bad ? NULL : &g_out);
}
static dt_status c_randn_dtype(int bad)
{
    dt_tensor_desc d = desc86(C);
    if (bad) d.dtype = DT_I32;
    return dt_tensor_randn(g_mesh, &d, &g_out);
}
static dt_status c_manual_seed(int bad) { return dt_manual_seed(g_mesh, bad ? 8 : 7); }
static dt_status c_set_state(int bad)
{
    uint64_t s, o;
    dt_rng_get_state(g_mesh, &s, &o);
    return dt_rng_set_state(g_mesh, s, bad ? o + 4 : o);
}
/* a save of fn to badpath (bad) or to g_missing: g_missing must not be created when a rank refuses */
static dt_status save_to(dt_status (*fn)(const char *), const char *fname, int bad, const char *badpath)
{
    dt_status st = fn(bad ? badpath : g_missing);
    CHECK(g_control || access(g_missing, F_OK) != 0, "%s created %s", fname, g_missing);
    return st;
}
static dt_status rng_save(const char *path) { return dt_rng_save_state(g_mesh, path); }
static dt_status c_rng_save_empty(int bad) { return save_to(rng_save, "dt_rng_save_state", bad, ""); }
static dt_status c_rng_save_null(int bad) { return save_to(rng_save, "dt_rng_save_state", bad, NULL); }
static dt_status c_rng_save_other(int bad) { return save_to(rng_save, "dt_rng_save_state", bad, g_path[3]); }
static dt_status c_rng_load_empty(int bad) { return dt_rng_load_state(g_mesh, bad ? "" : g_path[2]); }
static dt_status c_rng_load_null(int bad) { return dt_rng_load_state(g_mesh, bad ? NULL : g_path[2]); }
static dt_status c_rng_load_other(int bad) { return dt_rng_load_state(g_mesh, g_path[bad ? 3 : 2]); }

/* checkpoints */
static dt_status x_save(const char *path) { return dt_tensor_save_npy(g_x, path); }
static dt_status c_save_empty(int bad) { return save_to(x_save, "dt_tensor_save_npy", bad, ""); }
static dt_status c_save_null(int bad) { return save_to(x_save, "dt_tensor_save_npy", bad, NULL); }
static dt_status c_save_other(int bad) { return save_to(x_save, "dt_tensor_save_npy", bad, g_path[1]); }
static dt_status load(const char *path, const dt_placement *pl, dt_tensor **out) { return dt_tensor_load_npy(g_mesh, path, pl, out); }
static dt_placement g_s0[1], g_s1[1];
static dt_status c_load_empty(int bad) { return load(bad ? "" : g_path[0], g_s0, &g_out); }
static dt_status c_load_null(int bad) { return load(bad ? NULL : g_path[0], g_s0, &g_out); }
static dt_status c_load_pl_null(int bad) { return load(g_path[0], bad ? NULL : g_s0, &g_out); }
static dt_status c_load_out_null(int bad) { return load(g_path[0], g_s0, bad ? NULL : &g_out); }
static dt_status c_load_pl_other(int bad) { return load(g_path[0], bad ? g_s1 : g_s0, &g_out); }
static dt_status c_load_other(int bad) { return load(g_path[bad ? 1 : 0], g_s0, &g_out); }

/* tensor-parallel layers */
/* dt_tp_linear_create (in -> out; hidden 0) or dt_tp_mlp_create (in -> hidden, dropout p); a refused
   create leaves *out NULL */
static dt_status layer_create(int64_t in, int64_t out, int64_t hidden, double p)
{
    dt_tp_linear_desc ld;
    dt_tp_mlp_desc md;
    dt_tp_linear *l = NULL;
    dt_tp_mlp *m = NULL;
    dt_status st;
    memset(&ld, 0, sizeof ld);
    memset(&md, 0, sizeof md);
    ld.in_features = md.in_features = in;
    ld.out_features = out;
    md.hidden_features = hidden;
    md.dropout = p;
    st = hidden ? dt_tp_mlp_create(g_mesh, &md, &m) : dt_tp_linear_create(g_mesh, &ld, &l);
    CHECK(g_control || (l == NULL && m == NULL), "%s: *out set", hidden ? "dt_tp_mlp_create" : "dt_tp_linear_create");
    dt_tp_linear_destroy(l);
    dt_tp_mlp_destroy(m);
    return st;
}
static dt_status c_lin_create_in0(int bad) { return layer_create(bad ? 0 : 4, 6, 0, 0.0); }
static dt_status c_lin_create_out(int bad) { return layer_create(4, bad ? 7 : 6, 0, 0.0); }
static dt_status c_mlp_create_p(int bad) { return layer_create(4, 0, 8, bad ? 1.5 : 0.5); }
static dt_status c_mlp_create_hidden(int bad) { return layer_create(4, 0, bad ? 16 : 8, 0.5); }
static dt_status c_lin_fwd_y(int bad) { return dt_tp_linear_forward(g_lin, g_lx, bad ? NULL : &g_out); }
static dt_status c_lin_fwd_x(int bad) { return dt_tp_linear_forward(g_lin, bad ? g_lx5 : g_lx, &g_out); }
static dt_status c_lin_bwd_dy(int bad) { return dt_tp_linear_backward(g_lin, g_lx, bad ? g_lx : g_ldy, &g_out); }
static dt_status c_mlp_fwd_y(int bad) { return dt_tp_mlp_forward(g_mlp, g_lx, 1, bad ? NULL : &g_out); }
static dt_status c_mlp_fwd_training(int bad) { return dt_tp_mlp_forward(g_mlp, g_lx, bad ? 0 : 1, &g_out); }
static dt_status c_mlp_bwd_x(int bad) { return dt_tp_mlp_backward(g_mlp, bad ? g_lx5 : g_lx, g_lx, &g_out); }

static const onebad g_cases[] = {
    { "dt_mesh_create", "shape[0] = np + 1", 0, c_mesh_create_shape },
    { "dt_mesh_create", "another dim name", 1, c_mesh_create_names },
    { "dt_mesh_create", "out NULL", 0, c_mesh_create_out },
    { "dt_mesh_slice", "unknown name", 0, c_slice_unknown },
    { "dt_mesh_slice", "names NULL", 0, c_slice_null },
    { "dt_mesh_slice", "another valid name", 1, c_slice_other },
    { "dt_mesh_flatten", "unknown name", 0, c_flatten_unknown },
    { "dt_mesh_flatten", "another new name", 1, c_flatten_name },
    { "dt_tensor_distribute", "src_rank out of range", 0, c_distribute_src },
    { "dt_tensor_distribute", "desc NULL", 0, c_distribute_null },
    { "dt_tensor_distribute", "out NULL", 0, c_distribute_out },
    { "dt_tensor_from_local", "out NULL", 0, c_from_local_out },
    { "dt_tensor_from_local", "local NULL", 0, c_from_local_null },
    { "dt_tensor_from_local", "another placement", 1, c_from_local_pl },
    { "dt_tensor_distribute", "sizes adding up to R + 1", 0, c_distribute_sum },
    { "dt_tensor_distribute", "split 9", 0, c_distribute_split },
    { "dt_tensor_distribute", "another sizes array", 1, c_distribute_sizes_other },
    { "dt_tensor_from_local", "sizes adding up to R + 1", 0, c_from_local_sum },
    { "dt_tensor_from_local", "another sizes array", 1, c_from_local_sizes_other },
    { "dt_tensor_from_local", "local_shape a row more than the placements give", 0, c_from_local_ls },
    { "dt_tensor_from_local", "DT_VERIFY, local_shape a row more", 0, c_from_local_ls_verify },
    { "dt_tensor_from_local", "DT_BORROW, local_shape a row less", 0, c_from_local_ls_borrow },
    { "dt_tensor_from_local", "DT_INFER_SIZES, local_shape NULL", 0, c_infer_null },
    { "dt_tensor_from_local", "DT_INFER_SIZES, a row more (sum R + 1)", 0, c_infer_sum },
    { "dt_tensor_from_local", "DT_INFER_SIZES, unsplit dim C + 1", 0, c_infer_unsplit },
    { "dt_tensor_from_local", "DT_INFER_SIZES | DT_VERIFY, a row less", 0, c_infer_verify },
    { "dt_tensor_from_local", "DT_INFER_SIZES on this rank only", 1, c_infer_flag },
    { "dt_tensor_from_local", "DT_INFER_SIZES, a replica claiming a row less", 0, c_infer_replica },
    { "dt_tensor_redistribute", "placements NULL", 0, c_redistribute_null },
    { "dt_tensor_redistribute", "sizes adding up to R + 1", 0, c_redist_sum },
    { "dt_tensor_redistribute", "cyclic block -1", 0, c_redist_block },
    { "dt_tensor_redistribute", "a split field on Replicate", 0, c_redist_stray },
    { "dt_tensor_redistribute", "another sizes array", 1, c_redist_sizes_other },
    { "dt_tensor_redistribute", "another cyclic block", 1, c_redist_block_other },
    { "dt_tensor_redistribute", "another placement", 1, c_redistribute_pl },
    { "dt_tensor_gather", "full NULL", 0, c_gather_null },
    { "dt_neg", "out NULL", 0, c_neg_out },
    { "dt_abs", "out NULL", 0, c_dt_abs_out },
    { "dt_exp", "out NULL", 0, c_dt_exp_out },
    { "dt_log", "out NULL", 0, c_dt_log_out },
    { "dt_sqrt", "out NULL", 0, c_dt_sqrt_out },
    { "dt_rsqrt", "out NULL", 0, c_dt_rsqrt_out },
    { "dt_sin", "out NULL", 0, c_dt_sin_out },
    { "dt_cos", "out NULL", 0, c_dt_cos_out },
    { "dt_tanh", "out NULL", 0, c_dt_tanh_out },
    { "dt_sigmoid", "out NULL", 0, c_dt_sigmoid_out },
    { "dt_relu", "out NULL", 0, c_dt_relu_out },
    { "dt_gelu", "out NULL", 0, c_dt_gelu_out },
    { "dt_silu", "out NULL", 0, c_dt_silu_out },
    { "dt_copy", "out NULL", 0, c_dt_copy_out },
    { "dt_shift", "another a", 1, c_shift_a },
    { "dt_scale", "another a", 1, c_scale_a },
    { "dt_pow", "another p", 1, c_pow_p },
    { "dt_fill", "another value", 1, c_fill_v },
    { "dt_cast", "dtype 99", 0, c_cast_to },
    { "dt_add", "b of another dtype/shape", 0, c_add_shape },
    { "dt_sub", "b [6, 4] (x [8, 6])", 0, c_dt_sub_b },
    { "dt_mul", "b [6, 4] (x [8, 6])", 0, c_dt_mul_b },
    { "dt_div", "b [6, 4] (x [8, 6])", 0, c_dt_div_b },
    { "dt_maximum", "b [6, 4] (x [8, 6])", 0, c_dt_maximum_b },
    { "dt_minimum", "b [6, 4] (x [8, 6])", 0, c_dt_minimum_b },
    { "dt_axpy", "another a", 1, c_axpy_a },
    { "dt_sum", "dim 2 of a 2-d x", 0, c_sum_dim },
    { "dt_sum", "another dim", 1, c_sum_other },
    { "dt_mean", "another keepdim", 1, c_dt_mean_keep },
    { "dt_max", "another keepdim", 1, c_dt_max_keep },
    { "dt_min", "another keepdim", 1, c_dt_min_keep },
    { "dt_norm2", "another keepdim", 1, c_dt_norm2_keep },
    { "dt_argmax", "ndims 2", 0, c_argmax_n },
    { "dt_matmul", "b that does not fit", 0, c_matmul_shape },
    { "dt_mm", "b that does not fit", 0, c_mm_shape },
    { "dt_bmm", "b that does not fit", 0, c_bmm_shape },
    { "dt_dot", "b 2-d", 0, c_dot_shape },
    { "dt_linear", "w [6, 4] (x [8, 6])", 0, c_linear_w },
    { "dt_addmm", "another beta", 1, c_addmm_beta },
    { "dt_softmax", "dim 2 of a 2-d x", 0, c_softmax_dim },
    { "dt_log_softmax", "dim -3 of a 2-d x", 0, c_log_softmax_dim },
    { "dt_layer_norm", "another eps", 1, c_layer_norm_eps },
    { "dt_rms_norm", "w [6, 4]", 0, c_rms_norm_w },
    { "dt_transpose", "dim 5", 0, c_transpose_dim },
    { "dt_permute", "a dim twice", 0, c_permute_dup },
    { "dt_squeeze", "dim 5", 0, c_squeeze_dim },
    { "dt_unsqueeze", "dim 4", 0, c_unsqueeze_dim },
    { "dt_reshape", "a shape that does not fit", 0, c_reshape_shape },
    { "dt_narrow", "past the end", 0, c_narrow_len },
    { "dt_cat", "dim 3", 0, c_cat_dim },
    { "dt_stack", "dim 4", 0, c_stack_dim },
    { "dt_split", "sizes not adding up", 0, c_split_sizes },
    { "dt_embedding", "index 100 (8 rows)", 0, c_embedding_idx },
    { "dt_cross_entropy", "f64 target", 0, c_xent_target },
    { "dt_conv1d", "padding -1", 0, c_conv_pad_neg },
    { "dt_conv1d", "padding 2 (others 1)", 1, c_conv_pad_other },
    { "dt_conv1d", "w NULL", 0, c_conv_w_null },
    { "dt_conv2d", "padding[1] -1", 0, c_conv2d_pad },
    { "dt_conv3d", "dilation[0] 2 (others 1)", 1, c_conv3d_dil },
    { "dt_stencil_apply", "fn NULL", 0, c_stencil_fn },
    { "dt_stencil_apply", "out NULL", 0, c_stencil_out },
    { "dt_tensor_set_halo", "width -1", 0, c_set_halo_width },
    { "dt_tensor_set_halo", "another width", 1, c_set_halo_other },
    { "dt_halo_exchange", "a tensor without halo", 0, c_halo_exchange_nohalo },
    { "dt_halo_exchange_begin", "a tensor without halo", 0, c_halo_begin_nohalo },
    { "dt_uniform_", "lo > hi", 0, c_uniform_lohi },
    { "dt_uniform_", "another lo", 1, c_uniform_lo },
    { "dt_normal_", "std -1", 0, c_normal_std },
    { "dt_normal_", "another mean", 1, c_normal_mean },
    { "dt_bernoulli_", "p 2", 0, c_bernoulli_p },
    { "dt_bernoulli_", "another p", 1, c_bernoulli_other },
    { "dt_randint_", "lo == hi", 0, c_randint_range },
    { "dt_randint_", "another hi", 1, c_randint_hi },
    { "dt_dropout", "p 1.5", 0, c_dropout_p },
    { "dt_dropout", "another p", 1, c_dropout_other },
    { "dt_dropout", "out NULL", 0, c_dropout_out },
    { "dt_tensor_rand", "another shape", 1, c_rand_shape },
    { "dt_tensor_rand", "out NULL", 0, c_rand_out },
    { "dt_tensor_randn", "i32 dtype", 0, c_randn_dtype },
    { "dt_manual_seed", "another seed", 1, c_manual_seed },
    { "dt_rng_set_state", "another offset", 1, c_set_state },
    { "dt_rng_save_state", "path \"\"", 0, c_rng_save_empty },
    { "dt_rng_save_state", "path NULL", 0, c_rng_save_null },
    { "dt_rng_save_state", "another path", 1, c_rng_save_other },
    { "dt_rng_load_state", "path \"\"", 0, c_rng_load_empty },
    { "dt_rng_load_state", "path NULL", 0, c_rng_load_null },
    { "dt_rng_load_state", "another file", 1, c_rng_load_other },
    { "dt_tensor_save_npy", "path \"\"", 0, c_save_empty },
    { "dt_tensor_save_npy", "path NULL", 0, c_save_null },
    { "dt_tensor_save_npy", "another path", 1, c_save_other },
    { "dt_tensor_load_npy", "path \"\"", 0, c_load_empty },
    { "dt_tensor_load_npy", "path NULL", 0, c_load_null },
    { "dt_tensor_load_npy", "placements NULL", 0, c_load_pl_null },
    { "dt_tensor_load_npy", "out NULL", 0, c_load_out_null },
    { "dt_tensor_load_npy", "another placement", 1, c_load_pl_other },
    { "dt_tensor_load_npy", "another file", 1, c_load_other },
    { "dt_tp_linear_create", "in_features 0", 0, c_lin_create_in0 },
    { "dt_tp_linear_create", "another out_features", 1, c_lin_create_out },
    { "dt_tp_mlp_create", "dropout 1.5", 0, c_mlp_create_p },
    { "dt_tp_mlp_create", "another hidden_features", 1, c_mlp_create_hidden },
    { "dt_tp_linear_forward", "y NULL", 0, c_lin_fwd_y },
    { "dt_tp_linear_forward", "x with 5 features", 0, c_lin_fwd_x },
    { "dt_tp_linear_backward", "dy of x's shape", 0, c_lin_bwd_dy },
    { "dt_tp_mlp_forward", "y NULL", 0, c_mlp_fwd_y },
    { "dt_tp_mlp_forward", "training 0 (others 1)", 1, c_mlp_fwd_training },
    { "dt_tp_mlp_backward", "x with 5 features", 0, c_mlp_bwd_x },
};

static int all_zero(const dt_tensor *t)
{
    const double *p = (const double *)dt_tensor_data(t);
    size_t i, n = dt_tensor_local_numel(t), bad = 0;
    for (i = 0; i < n; i++) bad += p[i] != 0.0;
    return bad == 0;
}

static void onebad_setup(void)
{
    dt_mesh_desc md;
    dt_halo_desc hd;
    dt_tp_linear_desc ld;
    dt_tp_mlp_desc mld;
    dt_placement s0[1], s2[1], rep[1], sl[1];
    int64_t sh[3];
    long tag = (long)getpid();
    int k;
    dt_set_checks(0);
    szk_init();
    memset(&md, 0, sizeof md);
    md.ndim = 2;
    md.shape[0] = 1;
    md.shape[1] = dtt_np;
    md.names[0] = "dp";
    md.names[1] = "tp";
    CHECK_OK(dt_mesh_create(g_comm, &md, &g_mesh2));
    s0[0] = dt_shard(0);
    s2[0] = dt_shard(2);
    rep[0] = dt_replicate();
    sl[0] = dt_shard(-1);
    g_s0[0] = dt_shard(0);
    g_s1[0] = dt_shard(1);
    g_x = make_x(R, C, DT_F64);
    sh[0] = R;
    sh[1] = C;
    g_t = mk(DT_F64, 2, sh, s0);
    sh[0] = 4;
    g_i = mk(DT_I64, 1, sh, rep);
    sh[0] = R;
    g_i8 = mk(DT_I64, 1, sh, rep);
    {
        int64_t hundred[4] = { 100, 100, 100, 100 };
        dt_tensor_desc d;
        memset(&d, 0, sizeof d);
        d.dtype = DT_I64;
        d.ndim = 1;
        d.shape[0] = 4;
        CHECK_OK(dt_tensor_distribute(g_mesh, &d, hundred, DT_SRC_ALL, &g_i100));
    }
    sh[0] = C;
    sh[1] = 4;
    g_w64 = mk(DT_F64, 2, sh, rep);
    sh[0] = 16;
    g_h = mk(DT_F64, 1, sh, s0);
    g_nh = mk(DT_F64, 1, sh, s0);
    memset(&hd, 0, sizeof hd);
    hd.width[0] = 1;
    CHECK_OK(dt_tensor_set_halo(g_h, &hd));
    sh[0] = 2;
    sh[1] = 3;
    sh[2] = 16;
    g_cx = mk(DT_F64, 3, sh, s2);
    sh[0] = 4;
    sh[2] = 3;
    g_cw = mk(DT_F64, 3, sh, rep);
    memset(&ld, 0, sizeof ld);
    ld.in_features = 4;
    ld.out_features = 6;
    ld.init = DT_TP_INIT_ZEROS;
    ld.dtype = DT_F64;
    CHECK_OK(dt_tp_linear_create(g_mesh, &ld, &g_lin));
    memset(&mld, 0, sizeof mld);
    mld.in_features = 4;
    mld.hidden_features = 8;
    mld.dropout = 0.5;
    mld.init = DT_TP_INIT_ZEROS;
    mld.dtype = DT_F64;
    CHECK_OK(dt_tp_mlp_create(g_mesh, &mld, &g_mlp));
    sh[0] = 2;
    sh[1] = 4;
    g_lx = mk(DT_F64, 2, sh, rep);
    sh[1] = 5;
    g_lx5 = mk(DT_F64, 2, sh, rep);
    sh[1] = 6;
    g_ldy = mk(DT_F64, 2, sh, sl);
    { /* a forward for the MLP's backward */
        dt_tensor *y = NULL;
        CHECK_OK(dt_tp_mlp_forward(g_mlp, g_lx, 0, &y));
        dt_tensor_destroy(y);
    }
    /* the files: one name on every rank (rank 0's pid) */
    MPI_Bcast(&tag, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    for (k = 0; k < 4; k++) snprintf(g_path[k], sizeof g_path[k], "/tmp/dt_check_%ld_%d.%s", tag, k, k < 2 ? "npy" : "json");
    snprintf(g_missing, sizeof g_missing, "/tmp/dt_check_%ld_missing", tag);
    CHECK_OK(dt_tensor_save_npy(g_x, g_path[0]));
    CHECK_OK(dt_tensor_save_npy(g_t, g_path[1]));
    CHECK_OK(dt_rng_save_state(g_mesh, g_path[2]));
    CHECK_OK(dt_rng_set_state(g_mesh, 99, 8));
    CHECK_OK(dt_rng_save_state(g_mesh, g_path[3]));
    CHECK_OK(dt_manual_seed(g_mesh, 7));
    dt_set_checks(1);
}

static void onebad_teardown(void)
{
    int k;
    MPI_Barrier(MPI_COMM_WORLD);
    if (dtt_rank == 0)
        for (k = 0; k < 4; k++) remove(g_path[k]);
    dt_tensor_destroy(g_ldy);
    dt_tensor_destroy(g_lx5);
    dt_tensor_destroy(g_lx);
    dt_tp_mlp_destroy(g_mlp);
    dt_tp_linear_destroy(g_lin);
    dt_tensor_destroy(g_cw);
    dt_tensor_destroy(g_cx);
    dt_tensor_destroy(g_nh);
    dt_tensor_destroy(g_h);
    dt_tensor_destroy(g_w64);
    dt_tensor_destroy(g_i100);
    dt_tensor_destroy(g_i8);
    dt_tensor_destroy(g_i);
    dt_tensor_destroy(g_t);
    dt_tensor_destroy(g_x);
    dt_mesh_destroy(g_mesh2);
}

/* The control: the same call with every rank's argument good returns
   DT_OK everywhere (so the case fails only through the one bad argument);
   then what it made or changed is undone: *out, the RNG state, the fill
   target, a halo given to g_nh, a file written to g_missing. */
static void onebad_control(const onebad *c, uint64_t s0, uint64_t o0)
{
    dt_status st;
    int was = dt_get_checks();
    snprintf(g_alarm_msg, sizeof g_alarm_msg, "FAIL test_check np=%d: %s, every rank good (the control), hung on "
             "rank %d\n", dtt_np, c->call, dtt_rank);
    g_control = 1;
    g_out = NULL;
    alarm(CASE_SECONDS);
    st = c->run(0);
    alarm(0);
    g_control = 0;
    CHECK(st == DT_OK, "the control (every rank good) returned %s: %s", dt_status_string(st), dt_last_error());
    dt_tensor_destroy(g_out);
    g_out = NULL;
    dt_set_checks(0);
    CHECK_OK(dt_rng_set_state(g_mesh, s0, o0));
    CHECK_OK(dt_scale(g_t, 0.0, &g_t));
    CHECK_OK(dt_tensor_set_halo(g_nh, NULL));
    dt_set_checks(was);
    MPI_Barrier(MPI_COMM_WORLD);
    if (dtt_rank == 0) remove(g_missing);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void onebad_one(const onebad *c, int table)
{
    int bad = dtt_rank == dtt_np - 1, me, all[64], r, same = 1;
    uint64_t s0, o0, s1, o1;
    dt_status st;
    char msg[512];
    if (c->differs && dtt_np == 1) {
        if (table && dtt_rank == 0) printf("| %s | %s | (a valid value at 1 rank: not run) |\n", c->call, c->bad);
        return;
    }
    dtt_ctx("%s / %s", c->call, c->bad);
    snprintf(g_alarm_msg, sizeof g_alarm_msg, "FAIL test_check np=%d: %s with %s on rank %d hung (no return within "
             "%d s) on rank %d\n", dtt_np, c->call, c->bad, dtt_np - 1, CASE_SECONDS, dtt_rank);
    CHECK_OK(dt_rng_get_state(g_mesh, &s0, &o0));
    g_out = NULL;
    dt_clear_error();
    alarm(CASE_SECONDS);
    st = c->run(bad);
    alarm(0);
    snprintf(msg, sizeof msg, "%s", dt_last_error());
    CHECK(st != DT_OK, "returned DT_OK");
    CHECK(strncmp(msg, c->call, strlen(c->call)) == 0 && (msg[strlen(c->call)] == ':' || /* "fn (DT_VERIFY): " */
          strncmp(msg + strlen(c->call), " (", 2) == 0), "the message does not start with \"%s:\": %s", c->call, msg);
    CHECK(g_out == NULL, "*out set");
    if (g_out) { dt_tensor_destroy(g_out); g_out = NULL; }
    CHECK_OK(dt_rng_get_state(g_mesh, &s1, &o1));
    CHECK(s0 == s1 && o0 == o1, "the RNG state moved: seed %llu offset %llu -> seed %llu offset %llu",
          (unsigned long long)s0, (unsigned long long)o0, (unsigned long long)s1, (unsigned long long)o1);
    check_unchanged(g_x);
    CHECK(all_zero(g_t), "the fill target changed");
    me = (int)st;
    MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (r = 1; r < dtt_np; r++) same &= all[r] == all[0];
    CHECK(same, "the ranks returned different statuses (rank 0: %s, rank %d: %s)", dt_status_string((dt_status)all[0]),
          dtt_np - 1, dt_status_string((dt_status)all[dtt_np - 1]));
    if (getenv("DT_TEST_VERBOSE") && dtt_rank == dtt_np - 1) fprintf(stderr, "[rank %d] %s\n", dtt_rank, msg);
    onebad_control(c, s0, o0);
    if (table && dtt_rank == 0) {
        printf("| %s | %s |", c->call, c->bad);
        for (r = 0; r < dtt_np; r++) printf(" %s", dt_status_string((dt_status)all[r]));
        printf(" |\n");
    }
    dtt_ctx("");
}

/* With checks off, conv still agrees on its arguments before its halo
   messages (whose sizes follow the padding) meet: padding 1 on some ranks
   and 2 on others is DT_ERR_MISMATCH everywhere, not an MPI abort
   (MPICH: "Message truncated"); a padding one rank refuses fails them all
   (no wait). */
static void conv_checks_off(void)
{
    int bad = dtt_rank == dtt_np - 1, me, all[64], r, same = 1;
    dt_status st;
    if (dtt_np == 1) return;
    dtt_ctx("checks off: dt_conv1d with padding 2 on rank %d, 1 elsewhere", dtt_np - 1);
    snprintf(g_alarm_msg, sizeof g_alarm_msg, "FAIL test_check np=%d: dt_conv1d with another padding, checks off, "
             "hung on rank %d\n", dtt_np, dtt_rank);
    dt_set_checks(0);
    g_out = NULL;
    alarm(CASE_SECONDS);
    st = conv(bad ? 2 : 1);
    alarm(0);
    dt_set_checks(1);
    CHECK(st == DT_ERR_MISMATCH, "returned %s: %s", dt_status_string(st), dt_last_error());
    CHECK(strncmp(dt_last_error(), "dt_conv1d: ", 11) == 0, "message: %s", dt_last_error());
    CHECK(g_out == NULL, "*out set");
    me = (int)st;
    MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (r = 1; r < dtt_np; r++) same &= all[r] == all[0];
    CHECK(same, "the ranks returned different statuses");
    if (g_out) { dt_tensor_destroy(g_out); g_out = NULL; }
    /* a padding the last rank refuses: its DT_ERR_ARG, DT_ERR_MISMATCH on the others */
    dt_set_checks(0);
    alarm(CASE_SECONDS);
    st = conv(bad ? -1 : 1);
    alarm(0);
    dt_set_checks(1);
    CHECK(st == (bad ? DT_ERR_ARG : DT_ERR_MISMATCH), "padding -1 on rank %d: returned %s: %s", dtt_np - 1,
          dt_status_string(st), dt_last_error());
    CHECK(g_out == NULL, "*out set");
    if (g_out) { dt_tensor_destroy(g_out); g_out = NULL; }
    CHECK_OK(conv(1)); /* and the agreeing call works */
    dt_tensor_destroy(g_out);
    g_out = NULL;
    dtt_ctx("");
}

/* from_local is collective: a local_shape on the last rank that contradicts
   the placements fails every rank, with checks on and off, with and without
   DT_VERIFY, and under DT_INFER_SIZES; nothing hangs, *out stays NULL, and
   rank 0's message carries the failing rank's own reason (the text after
   the call's name in the last rank's message, its first 32 characters). */
static void from_local_contradiction(void)
{
    static const unsigned flags[4] = { DT_COPY, DT_BORROW, DT_COPY | DT_VERIFY, DT_INFER_SIZES };
    int bad = dtt_rank == dtt_np - 1, k, on, me, all[64], r, allfail;
    char badmsg[512], reason[33];
    const char *p, *q;
    dt_status st;
    if (dtt_np == 1) return;
    for (on = 1; on >= 0; on--)
        for (k = 0; k < 4; k++) {
            int64_t ls[2];
            dtt_ctx("from_local: rank %d's local_shape contradicts the placements, checks %s, flags 0x%x", dtt_np - 1,
                    on ? "on" : "off", flags[k]);
            snprintf(g_alarm_msg, sizeof g_alarm_msg, "FAIL test_check np=%d: from_local with a contradicting local_shape "
                     "(checks %d, flags 0x%x) hung on rank %d\n", dtt_np, on, flags[k], dtt_rank);
            if (flags[k] & DT_INFER_SIZES) {
                ls[0] = g_szk_ok[dtt_rank];
                ls[1] = C + bad; /* the unsplit dim */
            } else {
                chunk_ls(ls, bad);
            }
            dt_set_checks(on);
            g_out = NULL;
            dt_clear_error();
            alarm(CASE_SECONDS);
            st = from_local_with(g_mesh, dt_shard(0), ls, flags[k]);
            alarm(0);
            dt_set_checks(1);
            me = (int)st;
            MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
            for (r = 0, allfail = 1; r < dtt_np; r++) allfail &= all[r] != DT_OK;
            CHECK(allfail, "not every rank failed: rank 0 %s, rank %d %s", dt_status_string((dt_status)all[0]), dtt_np - 1,
                  dt_status_string((dt_status)all[dtt_np - 1]));
            CHECK(st == DT_OK || strncmp(dt_last_error(), "dt_tensor_from_local", 20) == 0, "message: %s", dt_last_error());
            CHECK(g_out == NULL, "*out set");
            if (g_out) { dt_tensor_destroy(g_out); g_out = NULL; }
            snprintf(badmsg, sizeof badmsg, "%s", dt_last_error());
            MPI_Bcast(badmsg, (int)sizeof badmsg, MPI_CHAR, dtt_np - 1, MPI_COMM_WORLD);
            /* the reason: after the last "dt_tensor_from_local...: " of the failing rank's message */
            for (p = badmsg, q = NULL; (p = strstr(p, "dt_tensor_from_local")) != NULL; p++) q = p;
            if (q && (q = strstr(q, ": ")) != NULL) q += 2;
            snprintf(reason, sizeof reason, "%.32s", q ? q : badmsg);
            if (dtt_rank == 0 && all[dtt_np - 1] != DT_OK)
                CHECK(strstr(dt_last_error(), reason) != NULL, "rank 0's message \"%s\" lacks rank %d's reason \"%s\"",
                      dt_last_error(), dtt_np - 1, reason);
            if (getenv("DT_TEST_VERBOSE") && (dtt_rank == 0 || bad)) fprintf(stderr, "[rank %d] %s\n", dtt_rank, dt_last_error());
        }
    dtt_ctx("");
}

static void onebad_all(void)
{
    struct sigaction sa;
    size_t k;
    int table = getenv("DT_TEST_TABLE") && atoi(getenv("DT_TEST_TABLE")) > 0;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    onebad_setup();
    if (table && dtt_rank == 0) {
        printf("\n| call | bad argument (rank %d only) | status on ranks 0..%d |\n|---|---|---|\n", dtt_np - 1,
               dtt_np - 1);
    }
    for (k = 0; k < sizeof g_cases / sizeof g_cases[0]; k++) onebad_one(&g_cases[k], table);
    if (table && dtt_rank == 0) fflush(stdout);
    conv_checks_off();
    from_local_contradiction();
    onebad_teardown();
}

/* ---- allocation faults in the agreement steps of the I/O calls ----------
   (a) the last rank's allocation number n fails, n = 1..A (A: what that
       rank allocates in a fault-free call), the arguments good everywhere;
   (b) the last rank passes an empty path (so the ranks take the slow path
       of the agreement, which allocates) and rank 0's first allocation
       fails. Every rank returns an error (no hang: the alarm), the RNG state
       and the loaded-into *out stay, and a fault-free call works after. */
typedef dt_status (*io_fn)(const char *path);
static dt_status io_save(const char *path) { return dt_tensor_save_npy(g_x, path); }
static dt_status io_load(const char *path) { return dt_tensor_load_npy(g_mesh, path, g_s0, &g_out); }
static dt_status io_rsave(const char *path) { return dt_rng_save_state(g_mesh, path); }
static dt_status io_rload(const char *path) { return dt_rng_load_state(g_mesh, path); }

/* who: the rank whose allocation n fails; -1: rank 0's, with the last rank's path empty */
static void alloc_fault_case(const char *call, io_fn f, const char *path, int n, int who)
{
    int me, all[64], r, ok = 1, empty_on_last = who < 0;
    dt_status st;
    if (who < 0) who = 0;
    dtt_ctx("%s, allocation %d of rank %d fails%s", call, n, who, empty_on_last ? ", the last rank's path empty" : "");
    snprintf(g_alarm_msg, sizeof g_alarm_msg, "FAIL test_check np=%d: %s with allocation %d of rank %d failing hung "
             "on rank %d\n", dtt_np, call, n, who, dtt_rank);
    g_out = NULL;
    ck_count = 0;
    ck_fail_at = dtt_rank == who ? n : 0;
    alarm(CASE_SECONDS);
    st = f(empty_on_last && dtt_rank == dtt_np - 1 ? "" : path);
    alarm(0);
    ck_fail_at = 0;
    me = (int)st;
    MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (r = 0; r < dtt_np; r++) ok &= all[r] != DT_OK;
    /* an allocation that is not reached or tolerated leaves the call working: all DT_OK is fine then */
    if (!ok) {
        for (r = 0, ok = 1; r < dtt_np; r++) ok &= all[r] == DT_OK;
        CHECK(ok && !empty_on_last, "ranks disagree: rank 0 %s, rank %d %s (%s)", dt_status_string((dt_status)all[0]),
              dtt_np - 1, dt_status_string((dt_status)all[dtt_np - 1]), dt_last_error());
    } else {
        CHECK(strncmp(dt_last_error(), call, strlen(call)) == 0, "message: %s", dt_last_error());
        CHECK(g_out == NULL, "*out set");
    }
    if (g_out) { dt_tensor_destroy(g_out); g_out = NULL; }
    dtt_ctx("");
}

static void alloc_faults(void)
{
    static const char *calls[4] = { "dt_tensor_save_npy", "dt_tensor_load_npy", "dt_rng_save_state", "dt_rng_load_state" };
    io_fn fs[4];
    char path[256];
    long tag = (long)getpid(), allocs;
    int k, n, who;
    fs[0] = io_save;
    fs[1] = io_load;
    fs[2] = io_rsave;
    fs[3] = io_rload;
    g_x = make_x(R, C, DT_F64);
    g_s0[0] = dt_shard(0);
    MPI_Bcast(&tag, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    for (k = 0; k < 4; k++) {
        uint64_t s0, o0, s1, o1;
        long total = 0;
        snprintf(path, sizeof path, "/tmp/dt_check_alloc_%ld.%s", tag, k < 2 ? "npy" : "json");
        if (k == 0 || k == 2) CHECK_OK(fs[k](path)); /* the file the load reads */
        CHECK_OK(dt_rng_get_state(g_mesh, &s0, &o0));
        for (who = dtt_np - 1; who >= 0; who -= dtt_np > 1 ? dtt_np - 1 : 1) { /* the last rank, then rank 0 */
            /* A on that rank, told to all */
            ck_count = 0;
            g_out = NULL;
            CHECK_OK(fs[k](path));
            dt_tensor_destroy(g_out);
            g_out = NULL;
            allocs = ck_count;
            MPI_Bcast(&allocs, 1, MPI_LONG, who, MPI_COMM_WORLD);
            total += allocs;
            for (n = 1; n <= allocs; n++) alloc_fault_case(calls[k], fs[k], path, n, who);
        }
        CHECK(k == 3 || total > 0, "%s allocates nothing?", calls[k]);
        if (dtt_np > 1) alloc_fault_case(calls[k], fs[k], path, 1, -1);
        CHECK_OK(dt_rng_get_state(g_mesh, &s1, &o1));
        CHECK(s0 == s1 && o0 == o1, "%s: the RNG state moved", calls[k]);
        g_out = NULL;
        CHECK_OK(fs[k](path)); /* still works */
        dt_tensor_destroy(g_out);
        g_out = NULL;
        MPI_Barrier(MPI_COMM_WORLD);
        if (dtt_rank == 0 && (k == 1 || k == 3)) remove(path);
    }
    dt_tensor_destroy(g_x);
    g_x = NULL;
}


/* A refusal's message arrives whole on the ranks that accepted theirs: the
   last rank refuses through dt_mesh_agree with messages of 200 to 490
   characters (490: the longest a rank's 511-byte message can be and still
   carry the call's name and the refusing rank), each ending in its remedy;
   the others' message carries it all, the refusing rank's its own. */
static void whole_messages(void)
{
    static const int lens[] = { 200, 400, 490 };
    int li, i;
    char body[512];
    for (li = 0; li < NELEM(lens); li++) {
        int bad = dtt_rank == dtt_np - 1, blen = lens[li] - (int)strlen("my_call: ");
        dt_status st;
        dtt_ctx("a refusal of %d characters arrives whole", lens[li]);
        for (i = 0; i < blen; i++) body[i] = (char)('a' + (i * 7 + li) % 26);
        memcpy(body + blen - 7, " REMEDY", 7);
        body[blen] = 0;
        if (bad) dt_set_last_error(DT_ERR_ARG, "my_call: %s", body);
        else dt_clear_error();
        st = dt_mesh_agree(g_mesh, "my_call", bad ? DT_ERR_ARG : DT_OK, NULL, NULL, 0, NULL);
        CHECK(st == DT_ERR_MISMATCH, "status %s", dt_status_string(st));
        CHECK(strncmp(dt_last_error(), "my_call: ", 9) == 0, "message: %s", dt_last_error());
        CHECK(strstr(dt_last_error(), body) != NULL, "the %d-character message did not arrive whole: %s (%d characters)",
              lens[li], dt_last_error(), (int)strlen(dt_last_error()));
    }
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
        onebad_all();
        alloc_faults();
        if (dtt_np > 1) {
            whole_messages();
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
