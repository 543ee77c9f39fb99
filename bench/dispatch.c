/* bench/dispatch.c -- the cost of dispatching a cached op on tiny tensors:
   argument checks, strategy-cache lookup, placement propagation, output
   reuse, the kernel call. The tensors are so small (4 elements) that the
   kernel is a few dozen instructions and no op here communicates, so the
   time is the dispatch.

       make bench-ops NP=2                  (with bench/matmul.c)
       mpiexec -n 2 ./build/mpich/bench_dispatch [--iters N] [--batches N] [--quick]
                                                 [--csv FILE] [--ops "add_S relu_S"]
       bench/run.sh                         (also the instruction counts, see below)

   Ops (F32; *out is passed back every call, so the output is reused):
     add   R   dt_add of two [4] tensors, Replicate, on a mesh of one rank
     add   S   dt_add of two [8] tensors, Shard(0), on a 1-D mesh of all ranks
               (4 elements a rank at 2 ranks)
     mm    R   dt_matmul [2,2] x [2,2], Replicate, mesh of one rank
     mm    S   dt_matmul [4,2] Shard(0) x [2,2] Replicate -> Shard(0), all ranks
     sum   R   dt_sum over all dims of a [4] tensor -> 0-d, mesh of one rank
     sum   S   dt_sum over all dims of a [8] Shard(0) tensor -> 0-d Partial(sum),
               all ranks (no communication: the Partial is not reduced)
     relu  R   dt_relu of a [4] tensor, mesh of one rank
     relu  S   dt_relu of a [8] Shard(0) tensor, all ranks

   Time: clock_gettime(CLOCK_MONOTONIC) around batches of --iters calls; the
   median over --batches batches of the time per call, max over ranks. The
   mesh of one rank is dt_comm_self (no MPI); every rank runs it at once.
   Allocations: DT_MALLOC/DT_FREE count the library's allocations, printed
   per call (0 means the time loop allocates nothing).
   Result checks: each op's output is compared with the expected values once
   after the timing; the bench exits 1 on a wrong value or a failed call.

   --csv FILE appends the harness's raw rows (bench/bench.sh): family
   dispatch, case "OP R|S", size = the global numel, value = us per call.
   --ops "NAME ...": only these cases (NAME as the dumps name them: add_S,
   relu_R, ...); a case named here runs at any number of ranks, an S case
   at 1 rank too (tests/dispatch_callgrind.sh, the cost guard).

   Instructions (with --callgrind, run under valgrind --tool=callgrind):
   each op's loop of --iters calls is bracketed by CALLGRIND_ZERO_STATS and
   CALLGRIND_DUMP_STATS_AT("op"), after its warm-up, so only the loop is
   counted (start-up, set-up and the first, strategy-choosing call are not),
   one dump per op; bench/run.sh divides each
   dump's total by --iters and reads the kernel's share (the inclusive cost
   of the dt__k_* functions) with callgrind_annotate. */
#define _GNU_SOURCE 1
#include <stdlib.h>
static size_t g_allocs;
static void *count_malloc(size_t n) { g_allocs++; return malloc(n); }
#define DT_MALLOC(sz) count_malloc(sz)
#define DT_FREE(p) free(p)
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "bench/bench.h"

#include <math.h>
#include <string.h>
#include <time.h>
#include <valgrind/callgrind.h>

static int failures, use_callgrind;
static const char *only_ops; /* --ops: the cases to run (NULL: all) */
static FILE *csv; /* --csv: the harness's raw rows (bench/bench.sh) */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum { OP_ADD, OP_MM, OP_SUM, OP_RELU, NOPS };
static const char *op_name[NOPS] = { "add", "mm", "sum", "relu" };
static const char *op_call[NOPS] = { "dt_add(a, b, &out)", "dt_matmul(a, b, &out)",
                                     "dt_sum(a, 0, NULL, 0, &out)", "dt_relu(a, &out)" };

static dt_status call(int op, const dt_tensor *a, const dt_tensor *b, dt_tensor **out) {
    switch (op) {
    case OP_ADD: return dt_add(a, b, out);
    case OP_MM: return dt_matmul(a, b, out);
    case OP_SUM: return dt_sum(a, 0, NULL, 0, out);
    default: return dt_relu(a, out);
    }
}

/* a 1-D or 2-D F32 tensor from the global row-major values `full` */
static dt_tensor *make(dt_mesh *m, int ndim, int64_t d0, int64_t d1, dt_placement p, const float *full) {
    dt_tensor_desc d = {0};
    d.dtype = DT_F32;
    d.ndim = ndim;
    d.shape[0] = d0;
    d.shape[1] = d1;
    d.placements[0] = p;
    dt_tensor *t;
    CHECK(dt_tensor_distribute(m, &d, full, DT_SRC_ALL, &t));
    return t;
}

/* expected global output, checked on the local part */
static int check(int op, const dt_tensor *out, const dt_tensor *xa, const float *a, const float *b) {
    const dt_tensor_desc *d = dt_tensor_get_desc(out);
    int64_t off[2] = {0, 0}, sh[2] = {1, 1};
    dt_tensor_local_offset(out, off);
    dt_tensor_local_shape(out, sh);
    const float *y = (const float *)dt_tensor_data(out);
    if (op == OP_SUM) {
        /* 0-d: the full sum, or (Partial(sum)) the sum of this rank's part of x */
        float e = 0;
        if (d->placements[0].kind == DT_PARTIAL) {
            const float *x = (const float *)dt_tensor_data(xa);
            for (size_t i = 0; i < dt_tensor_local_numel(xa); i++) e += x[i];
        } else {
            for (int64_t i = 0; i < dt_tensor_get_desc(xa)->shape[0]; i++) e += a[i];
        }
        return y[0] == e;
    }
    if (op == OP_MM) {
        for (int64_t i = 0; i < sh[0]; i++)
            for (int j = 0; j < 2; j++) {
                int64_t gi = off[0] + i;
                float e = a[gi * 2] * b[j] + a[gi * 2 + 1] * b[2 + j];
                if (y[i * 2 + j] != e) return 0;
            }
        return 1;
    }
    for (int64_t i = 0; i < sh[0]; i++) {
        int64_t g = off[0] + i;
        float e = op == OP_ADD ? a[g] + b[g] : (a[g] > 0 ? a[g] : 0);
        if (y[i] != e) return 0;
    }
    return 1;
}

/* is case OP_pl named by --ops? (all of them without --ops) */
static int wanted(int op, int sharded) {
    char name[32];
    const char *p;
    size_t n;
    if (!only_ops) return 1;
    n = (size_t)snprintf(name, sizeof name, "%s_%s", op_name[op], sharded ? "S" : "R");
    for (p = strstr(only_ops, name); p; p = strstr(p + 1, name))
        if ((p == only_ops || p[-1] == ' ') && (p[n] == 0 || p[n] == ' ')) return 1;
    return 0;
}

static void run(int op, int sharded, dt_mesh *mesh, int iters, int batches) {
    static const float av[8] = { 1, -2, 3, -4, 5, -6, 7, -8 }, bv[8] = { 0.5f, 1, 1.5f, 2, 2.5f, 3, 3.5f, 4 };
    dt_placement p = sharded ? dt_shard(0) : dt_replicate();
    int64_t n = sharded ? 8 : 4;
    dt_tensor *a, *b = NULL, *out = NULL;
    if (op == OP_MM) {
        a = make(mesh, 2, sharded ? 4 : 2, 2, p, av);
        b = make(mesh, 2, 2, 2, dt_replicate(), bv);
    } else {
        a = make(mesh, 1, n, 0, p, av);
        if (op == OP_ADD) b = make(mesh, 1, n, 0, p, bv);
    }
    dt_status st = call(op, a, b, &out); /* first call: strategy chosen and cached, out made */
    if (st != DT_OK) {
        if (rank == 0) printf("%-5s %-2s  %s failed: %s\n", op_name[op], sharded ? "S" : "R", op_call[op],
                              dt_last_error());
        failures++;
        dt_tensor_destroy(a);
        dt_tensor_destroy(b);
        return;
    }
    dt_tensor *out0 = out;
    for (int i = 0; i < 1000; i++) CHECK(call(op, a, b, &out)); /* warm-up */

    double *per = (double *)malloc(sizeof(double) * (size_t)batches);
    size_t allocs0 = g_allocs;
    if (use_callgrind) {
        char name[32];
        snprintf(name, sizeof name, "%s_%s", op_name[op], sharded ? "S" : "R");
        CALLGRIND_ZERO_STATS;
        for (int i = 0; i < iters; i++) call(op, a, b, &out);
        CALLGRIND_DUMP_STATS_AT(name);
    }
    for (int bt = 0; bt < batches; bt++) {
        double t0 = now();
        for (int i = 0; i < iters; i++) call(op, a, b, &out);
        per[bt] = (now() - t0) / iters;
    }
    double allocs = (double)(g_allocs - allocs0) / ((double)iters * (batches + (use_callgrind ? 1 : 0)));
    double med = median(per, batches), q1 = per[batches / 4], q3 = per[(3 * batches) / 4], mn = per[0];
    double mx;
    MPI_Allreduce(&med, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int ok = out == out0 && check(op, out, a, av, bv);
    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) failures++;

    if (rank == 0) {
        char pl[16];
        const dt_tensor_desc *d = dt_tensor_get_desc(out);
        dt_placement q = d->placements[0];
        if (q.kind == DT_SHARD) snprintf(pl, sizeof pl, "S(%d)", q.dim);
        else if (q.kind == DT_PARTIAL) snprintf(pl, sizeof pl, "P(sum)");
        else snprintf(pl, sizeof pl, "R");
        printf("%-5s %-2s %6d %-28s %-7s %9.1f %9.1f %9.1f %9.1f %9.1f %8.2f %s\n", op_name[op], sharded ? "S" : "R",
               dt_mesh_size(mesh), op_call[op], pl, mx * 1e9, med * 1e9, mn * 1e9, q1 * 1e9, q3 * 1e9, allocs,
               all_ok ? "ok" : "WRONG RESULT (or *out not reused)");
        fflush(stdout);
        if (csv) fprintf(csv, "dispatch,%s %s,%lld,ours,%.4f,us\n", op_name[op], sharded ? "S" : "R",
                         (long long)dt_tensor_get_desc(a)->shape[0] * (op == OP_MM ? 2 : 1), mx * 1e6);
    }
    free(per);
    dt_tensor_destroy(out);
    dt_tensor_destroy(b);
    dt_tensor_destroy(a);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int iters = 10000, batches = 101;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batches") && i + 1 < argc) batches = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--callgrind")) use_callgrind = 1;
        else if (!strcmp(argv[i], "--quick")) { iters = 1000; batches = 11; }
        else if (!strcmp(argv[i], "--ops") && i + 1 < argc) only_ops = argv[++i];
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
            if (rank == 0 && !(csv = fopen(argv[i + 1], "a"))) fprintf(stderr, "cannot open %s\n", argv[i + 1]);
            i++;
        } else {
            if (rank == 0) fprintf(stderr, "usage: %s [--iters N] [--batches N] [--callgrind] [--quick] [--csv FILE] [--ops \"add_S ...\"]\n", argv[0]);
            MPI_Finalize();
            return 2;
        }
    }
    if (iters < 1) iters = 1;
    if (batches < 1) batches = 1;
    dt_comm *world, *self;
    dt_mesh *m1, *mw;
    CHECK(dt_comm_mpi(MPI_COMM_WORLD, &world));
    CHECK(dt_comm_self(&self));
    dt_mesh_desc md = {0};
    md.ndim = 1;
    md.shape[0] = 1;
    CHECK(dt_mesh_create(self, &md, &m1));
    md.shape[0] = nranks;
    CHECK(dt_mesh_create(world, &md, &mw));

    if (rank == 0) {
        printf("# dtensor.h dispatch benchmark: %d rank(s), f32, cached strategy, *out reused\n", nranks);
        printf("# ns/call: median over %d batches of %d calls (clock_gettime), max over ranks;\n"
               "#          rank 0's median, fastest batch (min) and quartiles beside it\n",
               batches, iters);
        printf("# allocs/call: the library's DT_MALLOC calls per call in the timed loops\n");
        printf("# targets: <= 1000 ns and <= 2,000 instructions per call (instructions: bench/run.sh)\n");
        printf("# anchors: PyTorch CI budget for one DTensor dispatch 90 us (test_dtensor_dispatch_overhead.py);\n"
               "#          its C++ fast path about 25 us; about 134,000 instructions per detach (pytorch PR #167394)\n");
        printf("%-5s %-2s %6s %-28s %-7s %9s %9s %9s %9s %9s %8s\n", "op", "pl", "ranks", "call", "out", "ns/call",
               "rank0 ns", "min", "q1", "q3", "allocs");
    }
    for (int op = 0; op < NOPS; op++) {
        if (wanted(op, 0)) run(op, 0, m1, iters, batches);
        if ((nranks > 1 || only_ops) && wanted(op, 1)) run(op, 1, mw, iters, batches);
    }
    int all = sum_over_ranks(failures);
    if (rank == 0) printf("# %s\n", all ? "FAILED: a call failed or a result was wrong" : "all results correct");
    if (csv) fclose(csv);
    dt_mesh_destroy(mw);
    dt_mesh_destroy(m1);
    dt_comm_destroy(self);
    dt_comm_destroy(world);
    MPI_Finalize();
    return all ? 1 : 0;
}
