/* bench/shm_startup.c -- what the shared-memory path (dt_comm_set_shm,
   DTENSOR_SHM) costs a program that never needs it, and what it gives one
   that does: dt_mesh_create with the path off, auto (the default: the arena
   made at the first large redistribution) and on (made with the mesh), the
   first redistribution after it, and the ones that follow.

       mpiexec -n 2 ./build/mpich/bench_shm_startup [--mib N] [--reps N] [--small]

   Per repetition, the three modes in rotating order, each on a fresh mesh
   of every rank (1-D), F32 [rows, rows] tensors of --mib MiB (default 2):

     create   dt_mesh_create (+ dt_mesh_destroy at the end, not timed)
     first    the first S(0) -> S(1) of a tensor made right after the mesh
              (auto: the call that makes the arena; its source, older, moves
              by MPI; on: the source in the arena, its pages touched once by
              the fill, the shared path)
     later    a tensor made after that first call, S(0) -> S(1) into the
              same *out, the median of 5 (auto and on: the shared path)
     small    a small program's whole life after MPI_Init: mesh, an 8 x 8
              tensor distributed from rank 0, redistributed S(0) -> R,
              checked, destroyed (--small: only this column, more reps);
              against MPI_Init's own time, printed above the table

   Each timing is preceded by a barrier and is the max over ranks; the
   table gives medians over --reps (default 9) and each mode's ratio to off.
   Every result is checked against the closed form v(i, j) = i * cols + j. */
#define _POSIX_C_SOURCE 200112L
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "bench.h"
#include <math.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static const char *mode_name[3] = {"off", "on", "auto"}; /* dt_comm_set_shm's 0, 1, 2 */

static void fill(dt_tensor *t, int64_t cols) {
    int64_t off[2], ls[2], i, j;
    float *p = (float *)dt_tensor_data(t);
    dt_tensor_local_offset(t, off);
    dt_tensor_local_shape(t, ls);
    for (i = 0; i < ls[0]; i++)
        for (j = 0; j < ls[1]; j++) p[i * ls[1] + j] = (float)((off[0] + i) * cols + off[1] + j);
}

/* every element of t against the closed form; MPI_Abort on a wrong one */
static void verify(const dt_tensor *t, int64_t cols, const char *what) {
    int64_t off[2], ls[2], i, j;
    const float *p = (const float *)dt_tensor_data(t);
    dt_tensor_local_offset(t, off);
    dt_tensor_local_shape(t, ls);
    for (i = 0; i < ls[0]; i++)
        for (j = 0; j < ls[1]; j++)
            if (p[i * ls[1] + j] != (float)((off[0] + i) * cols + off[1] + j)) {
                fprintf(stderr, "[%d] %s: wrong value at (%lld, %lld)\n", rank, what, (long long)(off[0] + i),
                        (long long)(off[1] + j));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
}

static dt_mesh *make_mesh(dt_comm *comm, int mode, double *ms) {
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    double t0;
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = nranks;
    CHECK(dt_comm_set_shm(comm, mode));
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    CHECK(dt_mesh_create(comm, &md, &m));
    *ms = max_over_ranks(MPI_Wtime() - t0) * 1e3;
    return m;
}

/* one mode's create, first and later times (ms) */
static void large(dt_comm *comm, int mode, int64_t n, double *create, double *first, double *later) {
    dt_placement s0 = dt_shard(0), s1 = dt_shard(1);
    int64_t shape[2];
    dt_tensor_desc d;
    dt_tensor *a = NULL, *b = NULL, *a2 = NULL;
    double t0, v[5];
    int r;
    dt_mesh *m = make_mesh(comm, mode, create);
    memset(&d, 0, sizeof d);
    shape[0] = shape[1] = n;
    d.dtype = DT_F32;
    d.ndim = 2;
    d.shape[0] = d.shape[1] = n;
    d.placements[0] = s0;
    CHECK(dt_tensor_empty(m, &d, &a));
    fill(a, n);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    CHECK(dt_tensor_redistribute(a, &s1, &b));
    *first = max_over_ranks(MPI_Wtime() - t0) * 1e3;
    verify(b, shape[1], "first");
    CHECK(dt_tensor_empty(m, &d, &a2));
    fill(a2, n);
    for (r = 0; r < 5; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        CHECK(dt_tensor_redistribute(a2, &s1, &b));
        v[r] = max_over_ranks(MPI_Wtime() - t0) * 1e3;
    }
    verify(b, shape[1], "later");
    *later = median(v, 5);
    dt_tensor_destroy(a2);
    dt_tensor_destroy(b);
    dt_tensor_destroy(a);
    dt_mesh_destroy(m);
}

/* a small program's life after MPI_Init (ms) */
static double small(dt_comm *comm, int mode) {
    dt_placement s0 = dt_shard(0), rep = dt_replicate();
    dt_tensor_desc d;
    dt_tensor *a = NULL, *b = NULL;
    float full[64];
    double t0, ignore;
    int i;
    dt_mesh *m;
    for (i = 0; i < 64; i++) full[i] = (float)i;
    memset(&d, 0, sizeof d);
    d.dtype = DT_F32;
    d.ndim = 2;
    d.shape[0] = d.shape[1] = 8;
    d.placements[0] = s0;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    m = make_mesh(comm, mode, &ignore);
    CHECK(dt_tensor_distribute(m, &d, full, 0, &a));
    CHECK(dt_tensor_redistribute(a, &rep, &b));
    verify(b, 8, "small");
    dt_tensor_destroy(b);
    dt_tensor_destroy(a);
    dt_mesh_destroy(m);
    return max_over_ranks(MPI_Wtime() - t0) * 1e3;
}

int main(int argc, char **argv) {
    int reps = 9, only_small = 0, i, k, mode;
    double mib = 2;
    dt_comm *comm = NULL;
    double *t[3][4];
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int64_t n;
    double init_ms = now_ms();
    MPI_Init(&argc, &argv);
    init_ms = now_ms() - init_ms;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mib") && i + 1 < argc) mib = atof(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--small")) only_small = 1;
        else {
            if (!rank) fprintf(stderr, "usage: %s [--mib N] [--reps N] [--small]\n", argv[0]);
            MPI_Finalize();
            return 2;
        }
    }
    if (reps < 1) reps = 1;
    if (only_small) reps *= 5;
    /* rows = cols, a multiple of the ranks, about --mib MiB of F32 */
    n = (int64_t)(sqrt(mib * 1048576.0 / 4.0) / nranks) * nranks;
    if (n < nranks) n = nranks;
    init_ms = max_over_ranks(init_ms);
    CHECK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    for (mode = 0; mode < 3; mode++)
        for (k = 0; k < 4; k++) t[mode][k] = (double *)xmalloc(sizeof(double) * (size_t)reps);
    for (mode = 0; mode < 3; mode++) { /* warm-up: MPI's own first-time costs */
        double c, f, l;
        if (!only_small) large(comm, mode, n, &c, &f, &l);
        (void)small(comm, mode);
    }
    for (i = 0; i < reps; i++)
        for (k = 0; k < 3; k++) {
            mode = (i + k) % 3;
            if (!only_small) large(comm, mode, n, &t[mode][0][i], &t[mode][1][i], &t[mode][2][i]);
            t[mode][3][i] = small(comm, mode);
        }
    if (!rank) {
        double med[3][4];
        printf("# bench_shm_startup: %d ranks, %s\n", nranks, mpi_library(ver));
        printf("# MPI_Init took %.1f ms (max over ranks): the start-up the small program's column adds to\n", init_ms);
        printf("# ms, medians of %d; first/later: S(0)->S(1) of an F32 [%lld, %lld] (%.2f MiB); (x): / off\n", reps,
               (long long)n, (long long)n, (double)(n * n * 4) / 1048576.0);
        for (mode = 0; mode < 3; mode++)
            for (k = 0; k < 4; k++) med[mode][k] = only_small && k < 3 ? 0 : median(t[mode][k], reps);
        printf("%-5s %18s %18s %18s %18s\n", "mode", "dt_mesh_create", "first", "later", "small program");
        for (k = 0; k < 3; k++) {
            mode = k == 0 ? 0 : k == 1 ? 2 : 1; /* off, auto, on */
            printf("%-5s", mode_name[mode]);
            for (i = 0; i < 4; i++) {
                char cell[40];
                if (only_small && i < 3) snprintf(cell, sizeof cell, "-");
                else snprintf(cell, sizeof cell, "%.3f (%.2f)", med[mode][i], med[0][i] > 0 ? med[mode][i] / med[0][i] : 0);
                printf(" %18s", cell);
            }
            printf("\n");
        }
    }
    for (mode = 0; mode < 3; mode++)
        for (k = 0; k < 4; k++) free(t[mode][k]);
    dt_comm_destroy(comm);
    MPI_Finalize();
    return 0;
}
