/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_hardening.c -- issue 37: the eight defects adversarial input found
   in the calls 0.5 added, each as its repro, and the contract sentences
   they broke as tests:

   1. dt_tensor_redistribute_reduce on a rank outside the mesh: DT_OK, out
      untouched (it crashed reading the non-member's comm);
   3. a dtensor_layers.h-style failure (dt_set_last_error, then
      dt_mesh_agree) fires the handler once, after the agreement, with the
      outer call's name: a handler that makes a collective call does not
      deadlock when one rank alone refused its argument;
   4. dt_tensor_desc_from_scalapack: LLD x LOCc x size overflow, the cyclic
      arithmetic near INT_MAX (NUMROC, computed here in int64), negative
      grid positions other than (-1, -1);
   5. dt_mesh_allreduce refuses DT_MAX/DT_MIN on complex values with
      DT_ERR_DTYPE and a complex reason, and averages them (both parts);
   6. dt_tensor_from_local: an empty part with a huge stride is refused,
      not overflowed;
   7. a failing call inside the handler leaves the handled call's message
      (dt_last_error() and the msg given) as it was;
   8. dt_mesh_allreduce with count (size_t)-1: DT_ERR_SHAPE on every rank.
   2. the shared arena's fit: a 32 MiB shard a rank with the path on
      (DT_TEST_SHM_BIG=1, run by tests/test_shm_small.sh on a 64 MiB tmpfs
      under both MPIs, with test_shm). The smaller
   things: dt_mesh_shm_free of a block freed twice or of a foreign pointer
   is refused without touching the arena's count; a contiguous wrap whose
   local_alloc does not contain the data is refused. */
#include <limits.h>
#include "dtensor_layers.h"
#include "dt_test.h"

static dt_comm *g_comm;

/* NUMROC in int64: the count of a dim of n in blocks of nb that process
   iproc of nprocs holds, block 0 on isrc */
static int64_t numroc64(int64_t n, int64_t nb, int64_t iproc, int64_t isrc, int64_t nprocs)
{
    int64_t mydist = (nprocs + iproc - isrc) % nprocs, nblocks = n / nb, num = (nblocks / nprocs) * nb;
    int64_t extra = nblocks % nprocs;
    if (mydist < extra) num += nb;
    else if (mydist == extra) num += n % nb;
    return num;
}

/* ------------------------------------------------------------ 1 */

static void test_reduce_outside(void)
{
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    dt_tensor_desc d;
    dt_tensor *t = NULL, *o = NULL;
    dt_placement rep[1];
    int ranks[1] = { 0 };
    int64_t shape[1] = { 5 };
    dt_status st;
    dtt_ctx("redistribute_reduce outside the mesh");
    rep[0] = dt_replicate();
    memset(&md, 0, sizeof md);
    md.ndim = 1, md.shape[0] = 1, md.ranks = ranks;
    CHECK_OK(dt_mesh_create(g_comm, &md, &m));
    d = dtt_desc(DT_F64, 1, shape, 1, rep);
    CHECK_OK(dt_tensor_zeros(m, &d, &t));
    CHECK_OK(dt_tensor_zeros(m, &d, &o));
    if (dt_mesh_rank(m) == 0) ((double *)dt_tensor_data(t))[2] = 7;
    st = dt_tensor_redistribute_reduce(t, rep, DT_SUM, o);
    CHECK(st == DT_OK, "dt_tensor_redistribute_reduce: %s (%s)", dt_status_string(st), dt_last_error());
    if (dt_mesh_rank(m) == 0)
        CHECK(((double *)dt_tensor_data(o))[2] == 7, "the member's sum is %g, want 7", ((double *)dt_tensor_data(o))[2]);
    /* with checks on: the agreement too skips the non-member */
    dt_set_checks(1);
    st = dt_tensor_redistribute_reduce(t, rep, DT_MAX, o);
    dt_set_checks(0);
    CHECK(st == DT_OK, "checks on: %s (%s)", dt_status_string(st), dt_last_error());
    /* the other calls' sentence on non-members, on the same mesh */
    if (dt_mesh_rank(m) < 0) {
        double v[2] = { 3, 4 };
        void *p = NULL;
        dt_tensor *u = NULL;
        CHECK(dt_mesh_allreduce(m, 0, NULL, v, 2, DT_F64, DT_SUM) == DT_OK && v[0] == 3 && v[1] == 4,
              "dt_mesh_allreduce outside: values (%g, %g)", v[0], v[1]);
        CHECK(dt_mesh_allreduce(m, 0, NULL, v, 1, DT_C128, DT_MAX) == DT_OK, "complex max outside: not a member's "
              "call to refuse");
        CHECK_OK(dt_tensor_redistribute(t, rep, &u));
        dt_tensor_destroy(u);
        CHECK_OK(dt_mesh_shm_alloc(m, 64, &p)); /* plain memory */
        CHECK(p != NULL, "dt_mesh_shm_alloc outside: NULL");
        dt_mesh_shm_free(m, p);
    } else {
        dt_tensor *u = NULL;
        CHECK_OK(dt_tensor_redistribute(t, rep, &u));
        dt_tensor_destroy(u);
    }
    dt_tensor_destroy(t);
    dt_tensor_destroy(o);
    dt_mesh_destroy(m);
}

/* ------------------------------------------------------------ 3 and 7 */

static struct {
    int calls;
    char call[64], msg[512];
    dt_mesh *mesh;     /* the handler reduces over it: a collective call */
    int inner_fail;    /* the handler makes a failing call of its own */
    char after_inner[512];
} g_h;

static void handler(dt_status st, const char *call, const char *msg, void *user)
{
    (void)st, (void)user;
    g_h.calls++;
    snprintf(g_h.call, sizeof g_h.call, "%s", call);
    if (g_h.mesh) {
        double one = 1;
        (void)dt_mesh_allreduce(g_h.mesh, 0, NULL, &one, 1, DT_F64, DT_SUM);
    }
    if (g_h.inner_fail) {
        void *p = NULL;
        (void)dt_mesh_shm_alloc(NULL, 8, &p);
        (void)dt_tensor_zeros(NULL, NULL, NULL);
    }
    snprintf(g_h.msg, sizeof g_h.msg, "%s", msg);
    snprintf(g_h.after_inner, sizeof g_h.after_inner, "%s", dt_last_error());
}

/* a collective layer call as dtensor_layers.h writes one: its own check,
   reported with dt_set_last_error, then the agreement */
static dt_status my_layer_call_body(dt_mesh *m, int bad)
{
    dt_status st = DT_OK;
    if (bad) st = dt_set_last_error(DT_ERR_ARG, "my_layer_call: n = %d, must be > 0", -bad);
    return dt_mesh_agree(m, "my_layer_call", st, NULL, NULL, 0, NULL);
}
static dt_status my_layer_call(dt_mesh *m, int bad)
{
    dt_call_begin();
    return dt_call_end("my_layer_call", my_layer_call_body(m, bad));
}

static void test_handler_once(dt_mesh *m)
{
    int np = dt_mesh_size(m), r = dt_mesh_rank(m);
    dt_status st;
    int each;
    dtt_ctx("handler once, after the agreement");
    dt_set_error_handler(handler, NULL);
    for (each = 0; each < 2; each++) { /* 0: every rank bad; 1: the last rank alone (a collective handler) */
        int bad = each == 0 || r == np - 1;
        dt_set_checks(1);
        memset(&g_h, 0, sizeof g_h);
        g_h.mesh = m;
        st = my_layer_call(m, bad);
        dt_set_checks(0);
        if (np == 1 && !bad) continue;
        CHECK(st != DT_OK, "each %d: my_layer_call returned DT_OK", each);
        CHECK(g_h.calls == 1, "each %d: the handler ran %d times, want 1", each, g_h.calls);
        CHECK(!strcmp(g_h.call, "my_layer_call"), "each %d: the handler got call \"%s\"", each, g_h.call);
        CHECK(!strcmp(g_h.msg, dt_last_error()), "each %d: handler's msg \"%s\" is not dt_last_error() \"%s\"", each,
              g_h.msg, dt_last_error());
    }
    /* dtensor_layers.h's own calls: a bad desc on the last rank alone */
    {
        dt_tp_linear_desc ld;
        dt_tp_linear *l = NULL;
        memset(&ld, 0, sizeof ld);
        ld.style = DT_TP_COLWISE, ld.in_features = 4, ld.out_features = r == np - 1 ? -3 : 6, ld.dtype = DT_F64;
        dt_set_checks(1);
        memset(&g_h, 0, sizeof g_h);
        g_h.mesh = m;
        st = dt_tp_linear_create(m, &ld, &l);
        dt_set_checks(0);
        CHECK(st != DT_OK && l == NULL, "dt_tp_linear_create: %s", dt_status_string(st));
        CHECK(g_h.calls == 1 && !strcmp(g_h.call, "dt_tp_linear_create"), "dt_tp_linear_create: %d handler calls, "
              "the last as \"%s\"", g_h.calls, g_h.call);
        memset(&g_h, 0, sizeof g_h);
        ld.out_features = 6;
        CHECK_OK(dt_tp_linear_create(m, &ld, &l));
        st = dt_tp_linear_forward(l, NULL, NULL);
        CHECK(st == DT_ERR_ARG && g_h.calls == 1 && !strcmp(g_h.call, "dt_tp_linear_forward"),
              "dt_tp_linear_forward(x NULL): %s, %d handler calls, the last as \"%s\"", dt_status_string(st), g_h.calls,
              g_h.call);
        dt_tp_linear_destroy(l);
    }
    /* checks off (no agreement), bracketed or not: still once, under the layer's name */
    for (each = 0; each < 2; each++) {
        memset(&g_h, 0, sizeof g_h);
        st = each ? my_layer_call_body(m, 1) : my_layer_call(m, 1);
        CHECK(st == DT_ERR_ARG && g_h.calls == 1 && !strcmp(g_h.call, "my_layer_call"),
              "checks off, %s: %s, %d calls, call \"%s\"", each ? "unbracketed" : "bracketed", dt_status_string(st),
              g_h.calls, g_h.call);
    }
    /* unbracketed with checks on, every rank bad (the handler makes no
       collective call): dt_set_last_error reports, dt_mesh_agree does not again */
    memset(&g_h, 0, sizeof g_h);
    dt_set_checks(1);
    st = my_layer_call_body(m, 1);
    dt_set_checks(0);
    CHECK(st != DT_OK && g_h.calls == 1 && !strcmp(g_h.call, "my_layer_call"),
          "unbracketed, checks on: %s, %d calls, call \"%s\"", dt_status_string(st), g_h.calls, g_h.call);
    /* 7: the handler's own failing calls leave the outer call's message */
    {
        dt_tensor *out = NULL;
        char want[512];
        memset(&g_h, 0, sizeof g_h);
        g_h.inner_fail = 1;
        st = dt_tensor_zeros(m, NULL, &out);
        snprintf(want, sizeof want, "%s", dt_last_error());
        CHECK(st == DT_ERR_ARG && g_h.calls == 1, "zeros(NULL desc): %s, %d handler calls", dt_status_string(st),
              g_h.calls);
        CHECK(!strncmp(want, "dt_tensor_zeros", 15), "dt_last_error() after the handler: \"%s\"", want);
        CHECK(!strcmp(g_h.msg, want), "the msg the handler was given became \"%s\" (dt_last_error \"%s\")", g_h.msg, want);
        CHECK(strncmp(g_h.after_inner, "dt_tensor_zeros: out is NULL", 28) == 0,
              "inside the handler, after its own failing calls, dt_last_error() is \"%s\"", g_h.after_inner);
    }
    dt_set_error_handler(NULL, NULL);
}

/* ------------------------------------------------------------ 4 */

static void test_scalapack_numbers(void)
{
    dt_scalapack_grid g;
    dt_tensor_desc d, keep;
    int64_t ls[2], lst[2];
    dt_status st;
    dtt_ctx("dt_tensor_desc_from_scalapack's numbers");
    memset(&keep, 0x5a, sizeof keep);
    /* LLD x LOCc x 8 past int64? No: INT_MAX x INT_MAX x 8 = 2^65: refused */
    {
        int desc[9] = { 1, 0, 1, INT_MAX, 1, INT_MAX, 0, 0, INT_MAX };
        memset(&g, 0, sizeof g);
        g.nprow = g.npcol = 1, g.order[0] = 'R', g.myrow = g.mycol = 0;
        d = keep;
        st = dt_tensor_desc_from_scalapack(desc, &g, DT_F64, &d, ls, lst);
        CHECK(st == DT_ERR_SHAPE, "LLD INT_MAX x LOCc INT_MAX: %s (%s), local_alloc_bytes %lld", dt_status_string(st),
              dt_last_error(), (long long)d.local_alloc_bytes);
        CHECK(!memcmp(&d, &keep, sizeof d), "out changed");
        if (st) CHECK(strstr(dt_last_error(), "dt_tensor_desc_from_scalapack") != NULL, "message: %s", dt_last_error());
    }
    /* grids near INT_MAX: NUMROC in int64 is the truth */
    {
        static const int cases[][9] = { /* M N MB NB RSRC CSRC nprow npcol myrow/mycol */
            { 100, 100, 7, 7, 0, 0, INT_MAX, INT_MAX, INT_MAX - 1 },
            { 100, 49, 7, INT_MAX - 3, 0, INT_MAX - 2, 1, INT_MAX - 1, INT_MAX - 3 },
            { INT_MAX, 1000, INT_MAX - 1, 300, 0, 1, 2, 2, 1 },
            { 1000, 2000, 3, 5, INT_MAX - 10, 3, INT_MAX, 4, INT_MAX - 11 },
        };
        int k;
        for (k = 0; k < NELEM(cases); k++) {
            const int *c = cases[k];
            int desc[9] = { 1, 0, c[0], c[1], c[2], c[3], c[4], c[5], 1 };
            int64_t locr, locc;
            memset(&g, 0, sizeof g);
            g.nprow = c[6], g.npcol = c[7], g.order[0] = 'R';
            g.myrow = c[8] % c[6], g.mycol = c[8] % c[7];
            locr = numroc64(c[0], c[2], g.myrow, c[4], g.nprow);
            locc = numroc64(c[1], c[3], g.mycol, c[5], g.npcol);
            desc[8] = (int)(locr > 1 ? locr : 1);
            if (c[4] >= g.nprow || c[5] >= g.npcol) continue;
            ls[0] = ls[1] = -1;
            st = dt_tensor_desc_from_scalapack(desc, &g, DT_F64, &d, ls, lst);
            CHECK(st == DT_OK, "case %d: %s (%s)", k, dt_status_string(st), dt_last_error());
            if (!st)
                CHECK(ls[0] == locc && ls[1] == locr, "case %d: local shape {%lld, %lld}, NUMROC gives {%lld, %lld}", k,
                      (long long)ls[0], (long long)ls[1], (long long)locc, (long long)locr);
        }
    }
    /* negative positions other than (-1, -1) */
    {
        int desc[9] = { 1, 0, 10, 10, 2, 2, 0, 0, 10 };
        static const int pos[][2] = { { -2, -2 }, { -1, 0 }, { 0, -1 }, { -1, -2 }, { INT_MIN, INT_MIN } };
        int k;
        for (k = 0; k < NELEM(pos); k++) {
            memset(&g, 0, sizeof g);
            g.nprow = g.npcol = 2, g.order[0] = 'C', g.myrow = pos[k][0], g.mycol = pos[k][1];
            d = keep;
            st = dt_tensor_desc_from_scalapack(desc, &g, DT_F64, &d, ls, lst);
            CHECK(st == DT_ERR_ARG, "myrow %d mycol %d: %s, want DT_ERR_ARG", pos[k][0], pos[k][1], dt_status_string(st));
            CHECK(!memcmp(&d, &keep, sizeof d), "myrow %d mycol %d: out changed", pos[k][0], pos[k][1]);
        }
        g.myrow = g.mycol = -1;
        CHECK_OK(dt_tensor_desc_from_scalapack(desc, &g, DT_F64, &d, ls, lst));
        CHECK(ls[0] == 0 && ls[1] == 0, "outside the grid: local shape {%lld, %lld}", (long long)ls[0], (long long)ls[1]);
    }
}

/* a padded ScaLAPACK array (LLD_ > LOCr) wrapped and described again: the
   same descriptor (where the part is not empty) */
static void test_scalapack_padded(void)
{
    dt_scalapack_grid g;
    dt_tensor_desc d;
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    dt_tensor *t = NULL;
    int64_t ls[2], lst[2], locc;
    int desc[9] = { 1, 0, 7, 10, 2, 3, 0, 0, 9 }, back[9], k;
    double *a;
    dtt_ctx("a padded ScaLAPACK array round-trips");
    memset(&g, 0, sizeof g);
    g.nprow = 1, g.npcol = dtt_np, g.order[0] = 'R', g.myrow = 0, g.mycol = dtt_rank;
    desc[7] = dtt_np > 1 ? 1 : 0;
    CHECK_OK(dt_tensor_desc_from_scalapack(desc, &g, DT_F64, &d, ls, lst));
    locc = numroc64(10, 3, dtt_rank, desc[7], dtt_np);
    CHECK(ls[0] == locc && ls[1] == 7, "local shape {%lld, %lld}", (long long)ls[0], (long long)ls[1]);
    a = (double *)malloc((size_t)(9 * (locc ? locc : 1)) * sizeof *a);
    d.local_alloc = a;
    memset(&md, 0, sizeof md);
    md.ndim = 2, md.shape[0] = 1, md.shape[1] = dtt_np;
    CHECK_OK(dt_mesh_create(g_comm, &md, &m));
    CHECK_OK(dt_tensor_from_local(m, &d, a, DT_BORROW, &t));
    CHECK_OK(dt_tensor_scalapack_desc(t, 5, back, NULL));
    for (k = 2; k < 9; k++)
        CHECK(back[k] == desc[k] || (k == 8 && locc == 0), "desc[%d] = %d back, %d given", k, back[k], desc[k]);
    dt_tensor_destroy(t);
    dt_mesh_destroy(m);
    free(a);
}

/* ------------------------------------------------------------ 5 and 8 */

static void test_allreduce_args(dt_mesh *m)
{
    double z[4] = { 0, 10, 1, 9 }, keep[4];
    static const dt_reduce ops[2] = { DT_MAX, DT_MIN };
    dt_status st;
    int k;
    dtt_ctx("dt_mesh_allreduce's arguments");
    memcpy(keep, z, sizeof z);
    for (k = 0; k < 2; k++) {
        dt_clear_error();
        st = dt_mesh_allreduce(m, 0, NULL, z, 2, DT_C128, ops[k]);
        CHECK(st == DT_ERR_DTYPE, "c128 op %d: %s, want DT_ERR_DTYPE", (int)ops[k], dt_status_string(st));
        CHECK(strstr(dt_last_error(), "dt_mesh_allreduce") && strstr(dt_last_error(), "complex"),
              "c128 op %d: message \"%s\" names neither the call nor complex values", (int)ops[k], dt_last_error());
        CHECK(!strstr(dt_last_error(), "integer"), "c128 op %d: the integer reason: \"%s\"", (int)ops[k], dt_last_error());
        CHECK(!memcmp(z, keep, sizeof z), "values changed");
    }
    st = dt_mesh_allreduce(m, 0, NULL, z, 1, DT_C64, DT_MAX);
    CHECK(st == DT_ERR_DTYPE, "c64 max: %s", dt_status_string(st));
    /* complex sums still work */
    z[0] = 1, z[1] = -2;
    CHECK_OK(dt_mesh_allreduce(m, 0, NULL, z, 1, DT_C128, DT_SUM));
    CHECK(z[0] == dt_mesh_size(m) && z[1] == -2.0 * dt_mesh_size(m), "c128 sum (%g, %g)", z[0], z[1]);
    /* and their means: both parts divided */
    {
        float c[2];
        c[0] = (float)dt_mesh_rank(m), c[1] = (float)(-2 * dt_mesh_rank(m));
        CHECK_OK(dt_mesh_allreduce(m, 0, NULL, c, 1, DT_C64, DT_AVG));
        CHECK(c[0] == (float)(dt_mesh_size(m) - 1) / 2 && c[1] == (float)(1 - dt_mesh_size(m)),
              "c64 avg (%g, %g), want (%g, %g)", c[0], c[1], (dt_mesh_size(m) - 1) / 2.0, 1.0 - dt_mesh_size(m));
    }
    /* 8: the byte count overflows size_t */
    memcpy(z, keep, sizeof z);
    for (k = 0; k < 3; k++) {
        static const size_t counts[3] = { (size_t)-1, (size_t)-1 / 4 + 1, (size_t)PTRDIFF_MAX };
        dt_clear_error();
        st = dt_mesh_allreduce(m, 0, NULL, z, counts[k], DT_F64, DT_SUM);
        CHECK(st == DT_ERR_SHAPE || st == DT_ERR_ARG, "count %zu: %s (%s)", counts[k], dt_status_string(st),
              dt_last_error());
        CHECK(strstr(dt_last_error(), "dt_mesh_allreduce") != NULL, "count %zu: message \"%s\"", counts[k],
              dt_last_error());
        CHECK(!memcmp(z, keep, sizeof z), "count %zu: values changed", counts[k]);
    }
}

/* ------------------------------------------------------------ 6 and the wraps */

static void test_wrap_numbers(dt_mesh *m)
{
    dt_tensor_desc d;
    dt_tensor *t = NULL;
    dt_placement pl[1];
    double buf[64];
    int np = dt_mesh_size(m);
    dt_status st;
    dtt_ctx("dt_tensor_from_local's numbers");
    pl[0] = dt_shard(0);
    {   /* an empty part with a huge stride */
        int64_t shape[2] = { 0, 6 }, ls[2] = { 0, 6 }, str[2] = { 1, INT64_MAX };
        d = dtt_desc(DT_F64, 2, shape, 1, pl);
        d.local_shape = ls, d.local_strides = str, d.local_alloc = buf, d.local_alloc_bytes = sizeof buf;
        t = (dt_tensor *)(void *)buf;
        st = dt_tensor_from_local(m, &d, buf, DT_BORROW, &t);
        CHECK(st == DT_ERR_SHAPE || st == DT_ERR_ARG, "[0, 6] strides {1, INT64_MAX}: %s", dt_status_string(st));
        CHECK(t == (dt_tensor *)(void *)buf, "*out changed");
        str[0] = INT64_MAX, str[1] = 1;
        st = dt_tensor_from_local(m, &d, buf, DT_BORROW, &t);
        CHECK(st == DT_ERR_SHAPE || st == DT_ERR_ARG, "[0, 6] strides {INT64_MAX, 1}: %s", dt_status_string(st));
        str[0] = 6, str[1] = 1; /* what it is: fine */
        t = NULL;
        st = dt_tensor_from_local(m, &d, buf, DT_BORROW, &t);
        CHECK(st == DT_OK, "[0, 6] strides {6, 1}: %s (%s)", dt_status_string(st), dt_last_error());
        dt_tensor_destroy(t);
    }
    {   /* a contiguous wrap whose local_alloc does not hold the data */
        int64_t shape[1], ls[1] = { 4 };
        shape[0] = 4 * np;
        d = dtt_desc(DT_F64, 1, shape, 1, pl);
        d.local_shape = ls, d.local_alloc = buf + 8, d.local_alloc_bytes = 8 * sizeof(double);
        t = NULL;
        st = dt_tensor_from_local(m, &d, buf, DT_BORROW, &t); /* buf[0..4) is before buf + 8 */
        CHECK(st == DT_ERR_ARG, "contiguous, local_alloc after the data: %s", dt_status_string(st));
        CHECK(t == NULL, "*out written");
        d.local_alloc = buf, d.local_alloc_bytes = 3 * sizeof(double); /* too short */
        st = dt_tensor_from_local(m, &d, buf, DT_BORROW, &t);
        CHECK(st == DT_ERR_ARG, "contiguous, local_alloc too short: %s", dt_status_string(st));
        d.local_alloc_bytes = 4 * sizeof(double); /* exact: fine */
        CHECK_OK(dt_tensor_from_local(m, &d, buf, DT_BORROW, &t));
        dt_tensor_destroy(t);
    }
}

/* ------------------------------------------------------------ the shm allocator's smaller things */

static void test_shm_free(void)
{
    dt_comm *c = NULL;
    dt_mesh *m = NULL;
    dt_mesh_desc md;
    void *p = NULL, *q = NULL;
    int i;
    dtt_ctx("dt_mesh_shm_free misuse");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &c));
    CHECK_OK(dt_comm_set_shm(c, 1));
    memset(&md, 0, sizeof md);
    md.ndim = 1, md.shape[0] = dtt_np;
    CHECK_OK(dt_mesh_create(c, &md, &m));
    CHECK_OK(dt_mesh_shm_alloc(m, 1000, &p));
    dt_mesh_shm_free(m, p);
    if (dtt_np > 1) { /* in the arena (one rank has none: p was malloc's, and freeing it twice is free's bug) */
        dt_mesh_shm_free(m, p); /* twice: ignored */
        dt_mesh_shm_free(m, (char *)p + 8); /* not a block's start: ignored */
        dt_mesh_shm_free(NULL, p);
    }
    /* the arena still gives and takes blocks as before */
    for (i = 0; i < 3; i++) {
        CHECK_OK(dt_mesh_shm_alloc(m, 4096, &q));
        CHECK(q != NULL, "alloc %d: NULL", i);
        if (q) memset(q, i, 4096);
        dt_mesh_shm_free(m, q);
    }
    CHECK_OK(dt_mesh_shm_alloc(m, 64, &q)); /* held at destroy, freed after it with no mesh */
    CHECK_OK(dt_mesh_shm_alloc(m, 64, &p)); /* held to the end: its bookkeeping is not leaked (ASan) */
    dt_mesh_destroy(m);
    if (q) memset(q, 1, 64); /* still mapped */
    dt_mesh_shm_free(NULL, q);
    if (dtt_np == 1) dt_mesh_shm_free(NULL, p); /* malloc's: the caller's to free */
    dt_comm_destroy(c);
}

/* 2: with the shared path on, a 32 MiB shard per rank is placed, every
   page of it written and summed over the mesh: on a node whose shared
   memory cannot hold the arena (tests/test_shm_small.sh: a 64 MiB tmpfs)
   it must live elsewhere, never die of SIGBUS. Only where
   DT_TEST_SHM_BIG=1 (that script), to keep the sweep small. */
static void test_shm_big(void)
{
    dt_comm *c = NULL;
    dt_mesh *m = NULL;
    dt_mesh_desc md;
    dt_tensor_desc d;
    dt_tensor *t = NULL;
    dt_placement pl[1];
    int64_t shape[1], i, n;
    double sum, want;
    const char *e = getenv("DT_TEST_SHM_BIG");
    if (!e || strcmp(e, "1")) return;
    dtt_ctx("a 32 MiB shard a rank with the shared path on");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &c));
    CHECK_OK(dt_comm_set_shm(c, 1));
    memset(&md, 0, sizeof md);
    md.ndim = 1, md.shape[0] = dtt_np;
    CHECK_OK(dt_mesh_create(c, &md, &m));
    pl[0] = dt_shard(0);
    shape[0] = (int64_t)dtt_np << 22; /* 4 Mi f64 a rank */
    d = dtt_desc(DT_F64, 1, shape, 1, pl);
    CHECK_OK(dt_tensor_zeros(m, &d, &t));
    if (t) {
        double *x = (double *)dt_tensor_data(t);
        n = (int64_t)dt_tensor_local_numel(t);
        for (i = 0; i < n; i++) x[i] = 1.0;
        sum = (double)n;
        CHECK_OK(dt_mesh_allreduce(m, 0, NULL, &sum, 1, DT_F64, DT_SUM));
        want = (double)shape[0];
        CHECK(sum == want, "sum %g, want %g", sum, want);
    }
    dt_tensor_destroy(t);
    dt_mesh_destroy(m);
    dt_comm_destroy(c);
}

/* dt_mesh_trim (DESIGN.md section 7): the buffers go, the next call
   allocates again and computes the same; NULL refused */
static void test_trim(dt_mesh *m)
{
    int64_t shape[2] = { 13, 7 }, i, n;
    dt_placement s0[1], s1[1];
    dt_tensor_desc d;
    dt_tensor *t = NULL, *u = NULL, *v = NULL;
    int round;
    dtt_ctx("dt_mesh_trim");
    s0[0] = dt_shard(0), s1[0] = dt_shard(1);
    d = dtt_desc(DT_F64, 2, shape, 1, s0);
    CHECK_OK(dt_tensor_zeros(m, &d, &t));
    {
        double *x = (double *)dt_tensor_data(t);
        int64_t ls[2], lo[2];
        dt_tensor_local_shape(t, ls);
        dt_tensor_local_offset(t, lo);
        for (i = 0; i < ls[0] * ls[1]; i++) x[i] = (double)((lo[0] + i / ls[1]) * 7 + i % ls[1]);
    }
    for (round = 0; round < 3; round++) {
        CHECK_OK(dt_tensor_redistribute(t, s1, &u));
        CHECK_OK(dt_tensor_redistribute(u, s0, &v));
        n = (int64_t)dt_tensor_local_numel(v);
        for (i = 0; i < n; i++)
            CHECK(((double *)dt_tensor_data(v))[i] == ((double *)dt_tensor_data(t))[i], "round %d: element %lld",
                  round, (long long)i);
        dt_tensor_destroy(u);
        dt_tensor_destroy(v);
        u = v = NULL;
        CHECK_OK(dt_mesh_trim(m));
    }
    dt_clear_error();
    CHECK_ST(dt_mesh_trim(NULL), DT_ERR_ARG);
    CHECK_ERRMSG("dt_mesh_trim");
    dt_tensor_destroy(t);
}

int main(int argc, char **argv)
{
    dt_mesh *m = NULL;
    dt_mesh_desc md;
    dtt_init(&argc, &argv, "hardening");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    memset(&md, 0, sizeof md);
    md.ndim = 1, md.shape[0] = dtt_np;
    CHECK_OK(dt_mesh_create(g_comm, &md, &m));
    test_reduce_outside();
    test_handler_once(m);
    test_scalapack_numbers();
    test_scalapack_padded();
    test_allreduce_args(m);
    test_wrap_numbers(m);
    test_shm_free();
    test_shm_big();
    test_trim(m);
    dt_mesh_destroy(m);
    dt_comm_destroy(g_comm);
    return dtt_finish();
}
