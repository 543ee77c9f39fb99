/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_error_hook.c -- dt_set_error_handler: the handler is called once per
   failing call the program made, on every rank, with the call's name, its
   status and the message dt_last_error() then holds; never on success;
   once (not again for the library's inner calls) for a call that fails
   inside another; for dt_set_last_error under the name its message starts
   with; never after dt_set_error_handler(NULL, ...). DT_CHECK of a call that
   succeeds does nothing (its failing end, which aborts, is tested in the
   serial build, test_nompi.c, where a child process can be forked). */
#include "dtensor.h"
#include "dt_test.h"

static struct seen {
    int calls;
    dt_status st;
    char call[64];
    char msg[512];
    void *user;
} g_seen;

static void record(dt_status st, const char *call, const char *msg, void *user)
{
    g_seen.calls++;
    g_seen.st = st;
    snprintf(g_seen.call, sizeof g_seen.call, "%s", call);
    snprintf(g_seen.msg, sizeof g_seen.msg, "%s", msg);
    g_seen.user = user;
}

static void reset(void) { memset(&g_seen, 0, sizeof g_seen); }

/* the handler saw exactly one failure of `call` with status `st`, and its
   message is what dt_last_error() says */
static void expect_one(const char *what, const char *call, dt_status st, dt_status got)
{
    CHECK(got == st, "%s: returned %s, want %s", what, dt_status_string(got), dt_status_string(st));
    CHECK(g_seen.calls == 1, "%s: handler called %d times, want 1", what, g_seen.calls);
    CHECK(strcmp(g_seen.call, call) == 0, "%s: handler got call \"%s\", want \"%s\"", what, g_seen.call, call);
    CHECK(g_seen.st == st, "%s: handler got %s, want %s", what, dt_status_string(g_seen.st), dt_status_string(st));
    CHECK(strcmp(g_seen.msg, dt_last_error()) == 0, "%s: handler's message \"%s\" is not dt_last_error() \"%s\"", what,
          g_seen.msg, dt_last_error());
    reset();
}

int main(int argc, char **argv)
{
    static int token;
    dt_comm *comm = NULL;
    dt_mesh *mesh = NULL;
    dt_mesh_desc md;
    dt_tensor_desc d;
    dt_tensor *t = NULL, *u = NULL, *v = NULL;
    dt_placement bad[DT_MAX_MESH_DIMS];
    int dims[1] = { 5 };
    dtt_init(&argc, &argv, "error_hook");
    dt_set_error_handler(record, &token);
    reset();

    DT_CHECK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    DT_CHECK(dt_mesh_create(comm, &md, &mesh));
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = 2;
    d.shape[0] = 7;
    d.shape[1] = 3;
    d.placements[0] = dt_shard(0);
    DT_CHECK(dt_tensor_zeros(mesh, &d, &t));
    DT_CHECK(dt_add(t, t, &u));
    CHECK(g_seen.calls == 0, "successful calls called the handler %d times", g_seen.calls);

    /* a collective call refused on every rank (Shard of a dim the tensor lacks) */
    memset(bad, 0, sizeof bad);
    bad[0] = dt_shard(5);
    expect_one("redistribute to S(5)", "dt_tensor_redistribute", DT_ERR_PLACEMENT, dt_tensor_redistribute(t, bad, &v));
    CHECK(v == NULL, "*out set by a failed redistribute");
    CHECK(g_seen.user == NULL, "reset");

    /* the op families defined by macros and by the one-line wrappers */
    expect_one("sum over dim 5", "dt_sum", DT_ERR_SHAPE, dt_sum(t, 1, dims, 0, &v));
    expect_one("relu of NULL", "dt_relu", DT_ERR_ARG, dt_relu(NULL, &v));
    {
        dt_tensor_desc e = d;
        dt_tensor *w = NULL;
        e.shape[0] = 4; /* [7,3] @ [4,3]: inner dims differ */
        e.placements[0] = dt_replicate();
        DT_CHECK(dt_tensor_zeros(mesh, &e, &w));
        expect_one("matmul [7,3]x[4,3]", "dt_matmul", DT_ERR_SHAPE, dt_matmul(t, w, &v));
        dt_tensor_destroy(w);
    }
    /* a call whose body makes inner public calls (the gather behind a save)
       that fail: reported once, under the outer name */
    expect_one("save to a missing directory", "dt_tensor_save_npy", DT_ERR_IO,
               dt_tensor_save_npy(t, "/nonexistent-dir/x.npy"));

    /* the user pointer is handed over */
    CHECK_ST(dt_tensor_redistribute(t, bad, &v), DT_ERR_PLACEMENT);
    CHECK(g_seen.user == &token, "handler's user %p, want %p", g_seen.user, (void *)&token);
    reset();

    /* code on the public API reports through dt_set_last_error */
    expect_one("dt_set_last_error", "my_layer", DT_ERR_SHAPE,
               dt_set_last_error(DT_ERR_SHAPE, "my_layer: n = %d, must be > 0", 0));
    CHECK(dt_set_last_error(DT_OK, NULL) == DT_OK && g_seen.calls == 0, "DT_OK is not a failure");

    /* NULL restores "no handler" */
    dt_set_error_handler(NULL, &token);
    CHECK_ST(dt_tensor_redistribute(t, bad, &v), DT_ERR_PLACEMENT);
    CHECK(g_seen.calls == 0, "handler called %d times after it was removed", g_seen.calls);

    dt_tensor_destroy(u);
    dt_tensor_destroy(t);
    dt_mesh_destroy(mesh);
    dt_comm_destroy(comm);
    return dtt_finish();
}
