/* TEST
   ranks: 1 2
   quick: no
   needs: mpi
   impl:  linked
   args:  --level single | --level funneled | --level serialized
*/
/* test_threads.c -- dt_comm_mpi and MPI's state and thread level (the
   header's "THREADS AND MPI'S THREAD LEVEL").

       test_threads [--level single|funneled|serialized]   (default funneled)

   1. before MPI_Init: dt_comm_mpi fails with DT_ERR_COMM, "not initialized";
   2. MPI_Init (single) or MPI_Init_thread at the level; from a second thread
      (pthread), dt_comm_mpi fails with DT_ERR_COMM naming the level when MPI
      provides less than MPI_THREAD_SERIALIZED, and works (a collective dup,
      every rank's second thread at once) when it provides SERIALIZED or more;
   3. from the main thread it works at every level: a 1-D mesh, S(0) -> R;
   4. after MPI_Finalize: DT_ERR_COMM, "finalized".
   Prints "PASS threads np=N" (rank 0) like the dt_test.h tests; make
   test-threads runs it at 1 and 2 ranks and every level. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"

static int fails = 0, rank = 0;
#define EXPECT(c, ...) do { if (!(c)) { fails++; printf("rank %d: %s:%d: ", rank, __FILE__, __LINE__); \
                                        printf(__VA_ARGS__); printf("\n"); } } while (0)

struct thread_result { dt_status st; char msg[512]; int size; };

static void *in_thread(void *arg) {
    struct thread_result *r = (struct thread_result *)arg;
    dt_comm *c = NULL;
    r->st = dt_comm_mpi(MPI_COMM_WORLD, &c);
    snprintf(r->msg, sizeof r->msg, "%s", dt_last_error());
    r->size = r->st == DT_OK ? dt_comm_size(c) : -1;
    if (r->st == DT_OK) dt_comm_destroy(c);
    return NULL;
}

int main(int argc, char **argv) {
    const char *lv = "funneled";
    int want = MPI_THREAD_FUNNELED, provided = -1, np = 1, i, all = 0;
    dt_comm *c = NULL;
    dt_mesh *m = NULL;
    dt_tensor *a = NULL, *b = NULL;
    dt_status st;
    pthread_t th;
    struct thread_result r;
    for (i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--level")) lv = argv[i + 1];
    if (!strcmp(lv, "single")) want = MPI_THREAD_SINGLE;
    else if (!strcmp(lv, "serialized")) want = MPI_THREAD_SERIALIZED;
    else if (strcmp(lv, "funneled")) { printf("FAIL threads: unknown --level %s\n", lv); return 2; }

    /* 1. before MPI_Init */
    st = dt_comm_mpi(MPI_COMM_WORLD, &c);
    EXPECT(st == DT_ERR_COMM && strstr(dt_last_error(), "not initialized"), "before MPI_Init: %s: %s",
           dt_status_string(st), dt_last_error());

    if (want == MPI_THREAD_SINGLE) MPI_Init(&argc, &argv);
    else MPI_Init_thread(&argc, &argv, want, &provided);
    MPI_Query_thread(&provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);

    /* 2. from another thread */
    memset(&r, 0, sizeof r);
    if (pthread_create(&th, NULL, in_thread, &r) == 0) {
        pthread_join(th, NULL);
        if (provided < MPI_THREAD_SERIALIZED) {
            EXPECT(r.st == DT_ERR_COMM && strstr(r.msg, "main thread") &&
                       strstr(r.msg, provided == MPI_THREAD_SINGLE ? "MPI_THREAD_SINGLE" : "MPI_THREAD_FUNNELED"),
                   "second thread, level %d: %s: %s", provided, dt_status_string(r.st), r.msg);
        } else {
            EXPECT(r.st == DT_OK && r.size == np, "second thread, level %d: %s: %s", provided,
                   dt_status_string(r.st), r.msg);
        }
        if (rank == 0) printf("level %s (provided %d), second thread: %s%s%s\n", lv, provided,
                              dt_status_string(r.st), r.st ? ": " : "", r.st ? r.msg : "");
    } else {
        EXPECT(0, "pthread_create failed");
    }

    /* 3. from the main thread */
    {
        dt_mesh_desc md;
        dt_tensor_desc td;
        dt_placement rep[1];
        double full[9];
        const double *x;
        memset(&md, 0, sizeof md);
        md.ndim = 1;
        md.shape[0] = np;
        memset(&td, 0, sizeof td);
        td.dtype = DT_F64;
        td.ndim = 1;
        td.shape[0] = 9;
        td.placements[0] = dt_shard(0);
        rep[0] = dt_replicate();
        for (i = 0; i < 9; i++) full[i] = i;
        st = dt_comm_mpi(MPI_COMM_WORLD, &c);
        EXPECT(st == DT_OK, "main thread: %s", dt_last_error());
        if (st == DT_OK) {
            st = dt_mesh_create(c, &md, &m);
            if (st == DT_OK) st = dt_tensor_distribute(m, &td, full, 0, &a);
            if (st == DT_OK) st = dt_tensor_redistribute(a, rep, &b);
            EXPECT(st == DT_OK, "main thread: %s", dt_last_error());
            if (st == DT_OK) {
                x = (const double *)dt_tensor_data(b);
                for (i = 0; i < 9; i++) EXPECT(x[i] == i, "x[%d] = %g", i, x[i]);
            }
            dt_tensor_destroy(b);
            dt_tensor_destroy(a);
            dt_mesh_destroy(m);
            dt_comm_destroy(c);
        }
    }
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();

    /* 4. after MPI_Finalize (each rank on its own: no MPI left to agree with) */
    c = NULL;
    st = dt_comm_mpi(MPI_COMM_WORLD, &c);
    EXPECT(st == DT_ERR_COMM && strstr(dt_last_error(), "finalized"), "after MPI_Finalize: %s: %s",
           dt_status_string(st), dt_last_error());
    if (rank == 0) printf("%s threads np=%d (level %s)\n", all || fails ? "FAIL" : "PASS", np, lv);
    return all || fails;
}
