/* TEST
   ranks: 1
   quick: yes
   needs: nompi
   impl:  own
*/
/* test_nompi.c -- the serial build: no MPI at all.

   gcc -DDTENSOR_NO_MPI -std=c99 ... tests/test_nompi.c
   dt_comm_self, meshes of shape 1, 1x1, 1x1x1; every redistribution between
   Replicate, Shard(d) and Partial SUM/AVG/MAX/MIN on one rank, with values,
   layout, gather, and zero bytes / zero calls counted; distribute, zeros,
   the Shard -> Partial refusal, a custom one-rank backend without sendrecv;
   with a counting DT_MALLOC/DT_FREE: everything made is freed, and an
   allocation failing at any point gives DT_ERR_NOMEM (no crash, no leak). */
#include <stdlib.h>

/* a counting allocator that can be told to fail: every allocation of the
   library goes through DT_MALLOC/DT_FREE */
static long g_live = 0;     /* blocks allocated and not freed */
static long g_count = 0;    /* allocations so far */
static long g_fail_at = -1; /* >= 0: allocations after the first g_fail_at fail */
static void *count_malloc(size_t n)
{
    void *p;
    if (g_fail_at >= 0 && g_count >= g_fail_at) return NULL;
    g_count++;
    p = malloc(n);
    if (p) g_live++;
    return p;
}
static void count_free(void *p)
{
    if (p) g_live--;
    free(p);
}
#define DT_MALLOC(sz) count_malloc(sz)
#define DT_FREE(p) count_free(p)

#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"
#include <time.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef DTENSOR_NO_MPI
#error "test_nompi.c is built with -DDTENSOR_NO_MPI"
#endif

/* options: R, S(0..ndim-1), P sum/avg/max/min */
static dt_placement opt(int i, int ndim)
{
    if (i == 0) return dt_replicate();
    if (i <= ndim) return dt_shard(i - 1);
    return dt_partial((dt_reduce)(i - ndim - 1));
}

static void sweep(dt_comm *c, int nd)
{
    static const int64_t shapes[][3] = { { 5, 3, 2 }, { 0, 4, 1 }, { 1, 1, 1 } };
    int ones[DT_MAX_MESH_DIMS] = { 1, 1, 1, 1 };
    dtt_mesh m;
    int ndim, s, i, j;
    dtt_rng rng;
    rng.s = 7;
    if (!dtt_mesh_open(&m, c, nd, ones)) return;
    for (ndim = 0; ndim <= 3; ndim++) {
        for (s = 0; s < 3; s++) {
            int nopt = ndim + 5, np = 1, k;
            for (k = 0; k < nd; k++) np *= nopt;
            for (i = 0; i < np; i++) {
                for (j = 0; j < np; j++) {
                    dt_placement a[DT_MAX_MESH_DIMS], b[DT_MAX_MESH_DIMS];
                    dt_comm_stats st;
                    int x = i, y = j;
                    if (nd == 3 && dtt_randint(&rng, 100) != 0) continue; /* 3-D mesh: 1% sampled */
                    memset(a, 0, sizeof a);
                    memset(b, 0, sizeof b);
                    for (k = nd - 1; k >= 0; k--) {
                        a[k] = opt(x % nopt, ndim);
                        b[k] = opt(y % nopt, ndim);
                        /* a Partial source to another Partial op is not a pair we model */
                        if (a[k].kind == DT_PARTIAL && b[k].kind == DT_PARTIAL) b[k] = a[k];
                        x /= nopt;
                        y /= nopt;
                    }
                    if (dtt_refused(nd, a, b)) {
                        /* Shard -> Partial is refused */
                        dt_tensor_desc d;
                        dt_tensor *t = NULL, *o = NULL;
                        memset(&d, 0, sizeof d);
                        d.dtype = DT_F32;
                        d.ndim = ndim;
                        for (k = 0; k < ndim; k++) d.shape[k] = shapes[s][k];
                        for (k = 0; k < nd; k++) d.placements[k] = a[k];
                        CHECK_OK(dt_tensor_zeros(m.mesh, &d, &t));
                        if (t) CHECK_ST(dt_tensor_redistribute(t, b, &o), DT_ERR_PLACEMENT);
                        CHECK(o == NULL, "*out set on failure");
                        dt_tensor_destroy(t);
                        continue;
                    }
                    dtt_run_pair(&m, (dt_dtype)((i + j) % DTT_NUM_REAL_DTYPES), ndim, shapes[s], a, b,
                                 DTT_BYTES | ((i + j) % 2 ? DTT_BORROW : 0u), &st);
                    CHECK(st.calls == 0 && st.bytes_sent == 0 && st.bytes_recv == 0,
                          "one rank communicates nothing: calls %llu sent %llu recv %llu", (unsigned long long)st.calls,
                          (unsigned long long)st.bytes_sent, (unsigned long long)st.bytes_recv);
                }
            }
        }
    }
    dtt_mesh_close(&m);
}

static void misc(dt_comm *c)
{
    int one[1] = { 1 };
    dtt_mesh m;
    dt_tensor_desc d;
    dt_tensor *x = NULL, *z = NULL;
    int64_t sh[2] = { 6, 4 }, lo[2] = { 0, 0 };
    float full[24];
    dtt_model md = { 0, 0, 0 };
    dt_comm_stats st;
    if (!dtt_mesh_open(&m, c, 1, one)) return;
    CHECK(dt_comm_rank(c) == 0 && dt_comm_size(c) == 1, "self comm rank/size");
    CHECK(dt_mesh_rank(m.mesh) == 0 && dt_mesh_size(m.mesh) == 1, "mesh rank/size");
    memset(&d, 0, sizeof d);
    d.dtype = DT_F32;
    d.ndim = 2;
    d.shape[0] = sh[0];
    d.shape[1] = sh[1];
    d.placements[0] = dt_shard(1);
    dtt_fill_box(DT_F32, 2, sh, sh, lo, full);
    dtt_ctx("nompi distribute");
    dt_comm_reset_stats(c);
    CHECK_OK(dt_tensor_distribute(m.mesh, &d, full, 0, &x));
    if (x) dtt_check_tensor(&m, x, DT_F32, 2, sh, d.placements, &md, "distributed");
    dt_tensor_destroy(x);
    x = NULL;
    CHECK_OK(dt_tensor_distribute(m.mesh, &d, full, DT_SRC_ALL, &x));
    if (x) dtt_check_tensor(&m, x, DT_F32, 2, sh, d.placements, &md, "distributed (all)");
    CHECK_ST(dt_tensor_distribute(m.mesh, &d, full, 1, &z), DT_ERR_ARG);
    dt_comm_get_stats(c, &st);
    CHECK(st.calls == 0 && st.bytes_recv == 0 && st.bytes_sent == 0, "one rank communicates nothing");
    CHECK_OK(dt_tensor_zeros(m.mesh, &d, &z));
    if (z) {
        size_t i;
        for (i = 0; i < dt_tensor_local_numel(z); i++)
            if (((float *)dt_tensor_data(z))[i] != 0.0f) { CHECK(0, "zeros: elem %zu", i); break; }
    }
    CHECK_OK(dt_comm_barrier(c));
    dt_tensor_destroy(z);
    dt_tensor_destroy(x);
    dtt_mesh_close(&m);
    /* a custom one-rank backend needs no sendrecv */
    {
        dt_comm_desc cd;
        dt_comm *cc = NULL;
        memset(&cd, 0, sizeof cd);
        cd.size = 1;
        CHECK_OK(dt_comm_custom(&cd, &cc));
        if (cc && dtt_mesh_open(&m, cc, 1, one)) {
            dt_placement a[DT_MAX_MESH_DIMS], b[DT_MAX_MESH_DIMS];
            memset(a, 0, sizeof a);
            memset(b, 0, sizeof b);
            a[0] = dt_shard(0);
            dtt_run_pair(&m, DT_F64, 2, sh, a, b, DTT_BYTES, NULL);
            b[0] = dt_partial(DT_SUM);
            dtt_run_pair(&m, DT_I32, 2, sh, b, a, DTT_BYTES, NULL);
            a[0] = dt_replicate();
            dtt_run_pair(&m, DT_BF16, 2, sh, a, b, DTT_BYTES, NULL);
            dtt_mesh_close(&m);
        }
        dt_comm_destroy(cc);
    }
}

/* one scenario touching every allocating call; returns the calls that failed.
   Every failure must be DT_ERR_NOMEM with a message, and leave *out untouched. */
static int alloc_scenario(void)
{
    dt_comm *c = NULL;
    dt_mesh *m = NULL, *sl = NULL, *fl = NULL;
    dt_tensor *a = NULL, *b = NULL, *d = NULL, *e = NULL, *hx = NULL, *hw = NULL, *hy = NULL;
    dt_mesh_desc md;
    dt_tensor_desc td;
    dt_placement p[DT_MAX_MESH_DIMS];
    const char *names[2] = { "x", "y" };
    float full[6 * 5];
    int failed = 0;
    dt_status st;
#define STEP(call, out)                                                                     \
    do {                                                                                    \
        st = (call);                                                                        \
        if (st != DT_OK) {                                                                  \
            failed++;                                                                       \
            CHECK(st == DT_ERR_NOMEM, #call " under a failing allocator: %s (%s)",          \
                  dt_status_string(st), dt_last_error());                                   \
            CHECK(dt_last_error()[0] != 0, #call ": no message");                           \
            CHECK((out) == NULL, #call ": *out set on failure");                            \
        }                                                                                   \
    } while (0)
    memset(full, 0, sizeof full);
    STEP(dt_comm_self(&c), c);
    if (c) {
        memset(&md, 0, sizeof md);
        md.ndim = 2;
        md.shape[0] = md.shape[1] = 1;
        md.names[0] = names[0];
        md.names[1] = names[1];
        STEP(dt_mesh_create(c, &md, &m), m);
    }
    if (m) {
        STEP(dt_mesh_slice(m, 1, names + 1, &sl), sl);
        STEP(dt_mesh_flatten(m, 2, names, "xy", &fl), fl);
        memset(&td, 0, sizeof td);
        td.dtype = DT_F16;
        td.ndim = 2;
        td.shape[0] = 6;
        td.shape[1] = 5;
        td.placements[0] = dt_shard(0);
        td.placements[1] = dt_partial(DT_AVG);
        STEP(dt_tensor_zeros(m, &td, &a), a);
        STEP(dt_tensor_distribute(m, &td, full, 0, &d), d);
        STEP(dt_tensor_from_local(m, &td, full, DT_COPY | DT_VERIFY, &e), e);
    }
    if (a) {
        memset(p, 0, sizeof p);
        p[0] = dt_shard(1);
        STEP(dt_tensor_redistribute(a, p, &b), b);
        if (b) {
            st = dt_tensor_redistribute(a, p, &b); /* reuse: may not allocate, may fail cleanly */
            CHECK(st == DT_OK || st == DT_ERR_NOMEM, "reuse: %s", dt_status_string(st));
            st = dt_tensor_gather(b, full);
            CHECK(st == DT_OK || st == DT_ERR_NOMEM, "gather: %s", dt_status_string(st));
        }
    }
    if (m) { /* halo, stencil-free exchange and a convolution */
        dt_halo_desc hd;
        memset(&td, 0, sizeof td);
        td.dtype = DT_F32;
        td.ndim = 3;
        td.shape[0] = 1;
        td.shape[1] = 2;
        td.shape[2] = 6;
        STEP(dt_tensor_zeros(m, &td, &hx), hx);
        td.shape[0] = 3;
        td.shape[2] = 3;
        STEP(dt_tensor_zeros(m, &td, &hw), hw);
        if (hx) {
            memset(&hd, 0, sizeof hd);
            hd.width[2] = 2;
            hd.boundary[2] = DT_BOUNDARY_PERIODIC;
            st = dt_tensor_set_halo(hx, &hd);
            CHECK(st == DT_OK || st == DT_ERR_NOMEM, "set_halo: %s", dt_status_string(st));
            if (st) CHECK(dt_tensor_ghosted_data(hx, NULL) == NULL, "a failed set_halo left a halo");
            else CHECK_OK(dt_halo_exchange(hx)); /* planned: allocates nothing */
        }
        if (hx && hw) STEP(dt_conv1d(hx, hw, NULL, NULL, &hy), hy);
    }
#undef STEP
    dt_tensor_destroy(hy);
    dt_tensor_destroy(hw);
    dt_tensor_destroy(hx);
    dt_tensor_destroy(e);
    dt_tensor_destroy(d);
    dt_tensor_destroy(b);
    dt_tensor_destroy(a);
    dt_mesh_destroy(fl);
    dt_mesh_destroy(sl);
    dt_mesh_destroy(m);
    dt_comm_destroy(c);
    return failed;
}

/* rewrite path with its first n bytes only (stdio: C99 has no truncate) */
static int truncate_file(const char *path, long n)
{
    FILE *f = fopen(path, "rb");
    char *b;
    int ok;
    if (!f) return 0;
    b = (char *)malloc((size_t)n + 1);
    ok = b && fread(b, 1, (size_t)n, f) == (size_t)n;
    fclose(f);
    if (ok && (f = fopen(path, "wb")) != NULL) { ok = fwrite(b, 1, (size_t)n, f) == (size_t)n; fclose(f); }
    free(b);
    return ok;
}

/* run fn in a child whose stderr is captured into err; its wait status */
static int in_child(void (*fn)(void), char *err, size_t cap)
{
    int fds[2], status = 0;
    size_t got = 0;
    ssize_t r;
    pid_t pid;
    err[0] = 0;
    if (pipe(fds) != 0) return -1;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        fn();
        _exit(0);
    }
    close(fds[1]);
    while (got + 1 < cap && (r = read(fds[0], err + got, cap - 1 - got)) > 0) got += (size_t)r;
    err[got] = 0;
    close(fds[0]);
    waitpid(pid, &status, 0);
    return status;
}

static void check_fails(void) { DT_CHECK(dt_tensor_gather(NULL, NULL)); }
static void check_passes(void) { DT_CHECK(dt_set_last_error(DT_OK, NULL)); }
static void stock_handler_fails(void)
{
    dt_set_error_handler(dt_error_abort, NULL);
    (void)dt_tensor_redistribute(NULL, NULL, NULL);
}

/* DT_CHECK and the stock handler end the program (abort() without MPI)
   after printing where and why; a passing DT_CHECK does nothing */
static void test_abort_paths(void)
{
    char err[1024];
    int st = in_child(check_fails, err, sizeof err);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "DT_CHECK of a failing call: wait status %#x, want SIGABRT", st);
    CHECK(strstr(err, "test_nompi.c:") && strstr(err, "dt_tensor_gather(NULL, NULL)") && strstr(err, "DT_ERR_ARG") &&
              strstr(err, "dt_tensor_gather: "),
          "DT_CHECK printed \"%s\": want file:line, the call, its status and message", err);
    st = in_child(check_passes, err, sizeof err);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && err[0] == 0, "DT_CHECK of DT_OK: wait status %#x, stderr \"%s\"", st,
          err);
    st = in_child(stock_handler_fails, err, sizeof err);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "dt_error_abort: wait status %#x, want SIGABRT", st);
    CHECK(strstr(err, "dt_tensor_redistribute failed (DT_ERR_ARG): dt_tensor_redistribute:") != NULL,
          "dt_error_abort printed \"%s\"", err);
}

static void test_allocator(void)
{
    long total, k;
    dtt_ctx("counting allocator");
    g_fail_at = -1;
    g_count = 0;
    g_live = 0;
    CHECK(alloc_scenario() == 0, "the scenario fails without allocation failures");
    CHECK(g_live == 0, "%ld blocks leaked", g_live);
    total = g_count;
    CHECK(total > 0, "DT_MALLOC was never called");
    for (k = 0; k < total; k++) {
        dtt_ctx("allocation %ld of %ld fails", k + 1, total);
        g_count = 0;
        g_live = 0;
        g_fail_at = k;
        alloc_scenario();
        CHECK(g_live == 0, "%ld blocks leaked", g_live);
    }
    g_fail_at = -1;
}

/* .npy checkpoints without MPI (stdio): a round trip, a truncated file and a
   missing directory (DT_ERR_IO), nothing leaked (the counting allocator);
   the same for an RNG state file (dt_rng_save_state / dt_rng_load_state) */
static void test_npy(dt_comm *c)
{
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    dt_tensor_desc d;
    dt_tensor *x = NULL, *y = NULL;
    dt_placement pl[DT_MAX_MESH_DIMS];
    char path[256], bad[300];
    const char *base = getenv("TMPDIR");
    int64_t lo[2] = { 0, 0 };
    FILE *f;
    long sz = -1;
    dtt_ctx("npy");
    snprintf(path, sizeof path, "%s/dt_test_nompi.%lu.npy", base && base[0] ? base : "/tmp",
             (unsigned long)time(NULL) ^ (unsigned long)clock());
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = 1;
    CHECK_OK(dt_mesh_create(c, &md, &m));
    if (!m) return;
    memset(&d, 0, sizeof d);
    memset(pl, 0, sizeof pl);
    d.dtype = DT_F32;
    d.ndim = 2;
    d.shape[0] = 3;
    d.shape[1] = 5;
    CHECK_OK(dt_tensor_empty(m, &d, &x));
    if (x) dtt_fill_box(DT_F32, 2, d.shape, d.shape, lo, dt_tensor_data(x));
    CHECK_OK(dt_tensor_save_npy(x, path));
    CHECK_OK(dt_tensor_load_npy(m, path, pl, &y));
    if (y) dtt_check_box(DT_F32, 2, d.shape, d.shape, lo, dt_tensor_data(y), "npy round trip");
    dt_tensor_destroy(y);
    y = NULL;
    if ((f = fopen(path, "rb")) != NULL) { fseek(f, 0, SEEK_END); sz = ftell(f); fclose(f); }
    CHECK(sz == 128 + 15 * 4, "file is %ld bytes", sz);
    if (sz > 0 && truncate_file(path, sz - 1)) {
        CHECK_ST(dt_tensor_load_npy(m, path, pl, &y), DT_ERR_IO);
        CHECK(y == NULL && strstr(dt_last_error(), "bytes") != NULL, "%s", dt_last_error());
    }
    snprintf(bad, sizeof bad, "%s.no_such_dir/x.npy", path);
    CHECK_ST(dt_tensor_save_npy(x, bad), DT_ERR_IO);
    remove(path);
    /* the RNG state beside it: save, draw, load, draw again: the same numbers */
    dtt_ctx("rng state file");
    {
        dt_tensor *r1 = NULL, *r2 = NULL;
        uint64_t s0, o0, s1, o1;
        CHECK_OK(dt_manual_seed(m, 77));
        CHECK_OK(dt_tensor_rand(m, &d, &r1));
        CHECK_OK(dt_rng_get_state(m, &s0, &o0));
        CHECK_OK(dt_rng_save_state(m, path));
        CHECK_OK(dt_tensor_rand(m, &d, &r1));
        CHECK_OK(dt_rng_load_state(m, path));
        CHECK_OK(dt_rng_get_state(m, &s1, &o1));
        CHECK(s0 == s1 && o0 == o1 && o0 == 16, "state %llu %llu after load",
              (unsigned long long)s1, (unsigned long long)o1);
        CHECK_OK(dt_tensor_rand(m, &d, &r2));
        CHECK(r1 && r2 && memcmp(dt_tensor_data(r1), dt_tensor_data(r2), 15 * 4) == 0, "draws differ after load");
        if (truncate_file(path, 10)) { /* {"generato */
            CHECK_ST(dt_rng_load_state(m, path), DT_ERR_IO);
            CHECK(strstr(dt_last_error(), "dt_rng_load_state") != NULL, "%s", dt_last_error());
        }
        CHECK_ST(dt_rng_save_state(m, bad), DT_ERR_IO);
        CHECK_ST(dt_rng_load_state(m, bad), DT_ERR_IO);
        CHECK_OK(dt_rng_get_state(m, &s1, &o1));
        CHECK(s1 == 77 && o1 == 32, "state changed by failed loads");
        remove(path);
        dt_tensor_destroy(r1);
        dt_tensor_destroy(r2);
    }
    dt_tensor_destroy(x);
    dt_mesh_destroy(m);
}

int main(int argc, char **argv)
{
    dt_comm *c = NULL;
    int nd;
    dtt_init(&argc, &argv, "nompi");
    CHECK_OK(dt_comm_self(&c));
    if (c) {
        for (nd = 1; nd <= 3; nd++) sweep(c, nd);
        misc(c);
        test_npy(c);
        dt_comm_destroy(c);
    }
    CHECK(g_live == 0, "%ld blocks leaked over the whole test", g_live);
    test_allocator();
    test_abort_paths();
    return dtt_finish();
}
