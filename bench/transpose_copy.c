/* bench/transpose_copy.c -- the one-rank transposing copy: an n x n F64
   in column-major storage (wrapped with local_strides = {1, n}) redistributed
   into a row-major tensor, against a hand-written 64 x 64 tiled loop and
   against memcpy of the same bytes; and the accumulating form
   (dt_tensor_redistribute_reduce, DT_SUM: out += the transpose) against the
   same tiled loop with +=.

       make bench-transpose-copy           (1 rank)
       mpiexec -n 1 ./build/mpich/bench_transpose_copy [--quick] [--reps N] [--sizes "1000 2000 4000"]

   Sides, alternated repetition by repetition (so a loaded machine slows
   them alike): dt (dt_tensor_redistribute into an existing row-major *out),
   tiled (for each 64 x 64 tile: for i, for j: out[i][j] = src[j*n + i]),
   memcpy (n*n*8 bytes, a lower bound), dt+= and tiled+=. Medians over the
   repetitions in ms, ratios dt/tiled, dt/memcpy, dt+=/tiled+=. Every side's
   result is checked against the closed form before timing; exit status 1
   if one is wrong. Target: dt/tiled <= 1.1. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "bench/bench.h"

enum { DT, TILED, MEMCPY, DTACC, TILEDACC, NSIDE };
static const char *side_name[NSIDE] = { "dt", "tiled", "memcpy", "dt+=", "tiled+=" };

static double val(int64_t i, int64_t j) { return (double)((i * 131 + j * 7) % 1021); }

static void tiled(const double *src, double *dst, int64_t n, int acc) {
    int64_t i, j, it, jt;
    for (i = 0; i < n; i += 64)
        for (j = 0; j < n; j += 64) {
            int64_t ie = i + 64 < n ? i + 64 : n, je = j + 64 < n ? j + 64 : n;
            for (it = i; it < ie; it++)
                for (jt = j; jt < je; jt++) {
                    if (acc) dst[it * n + jt] += src[jt * n + it];
                    else dst[it * n + jt] = src[jt * n + it];
                }
        }
}

int main(int argc, char **argv) {
    int64_t sizes[8] = { 1000, 2000, 4000 };
    int nsizes = 3, reps = 9, quick = 0, a, z, bad = 0;
    dt_comm *comm = NULL;
    dt_mesh *m = NULL;
    dt_mesh_desc md;
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--quick")) { quick = 1; nsizes = 2; sizes[0] = 100; sizes[1] = 257; reps = 3; }
        else if (!strcmp(argv[a], "--reps") && a + 1 < argc) reps = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--sizes") && a + 1 < argc) nsizes = parse_list(argv[++a], sizes, 8);
    }
    if (reps < 1) reps = 1;
    CHECK(dt_comm_self(&comm));
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = 1;
    CHECK(dt_mesh_create(comm, &md, &m));
    if (rank == 0) {
        printf("# one-rank column-major -> row-major F64 copy: dt_tensor_redistribute vs a 64x64 tiled loop vs memcpy;"
               " dt_tensor_redistribute_reduce(SUM) vs the tiled loop with +=%s\n", quick ? " (--quick)" : "");
        printf("# MPI: %s\n# medians of %d repetitions, ms\n", mpi_library(ver), reps);
        printf("%6s %9s %9s %9s %9s %9s %9s %9s %9s\n", "n", "dt", "tiled", "memcpy", "dt+=", "tiled+=", "dt/tiled",
               "dt/memcpy", "+=ratio");
    }
    for (z = 0; z < nsizes && rank == 0; z++) {
        int64_t n = sizes[z], i, j, st[2], ls[2];
        size_t bytes = (size_t)(n * n) * sizeof(double);
        double *src = (double *)xmalloc(bytes), *dst = (double *)xmalloc(bytes), *ref = (double *)xmalloc(bytes);
        double *t[NSIDE], med[NSIDE];
        dt_tensor_desc d;
        dt_tensor *ts = NULL, *to = NULL;
        dt_placement rep[1];
        int r, s;
        for (s = 0; s < NSIDE; s++) t[s] = (double *)xmalloc((size_t)reps * sizeof(double));
        for (j = 0; j < n; j++)
            for (i = 0; i < n; i++) src[j * n + i] = val(i, j); /* global (i, j), column-major */
        memset(&d, 0, sizeof d);
        d.dtype = DT_F64; d.ndim = 2; d.shape[0] = d.shape[1] = n; d.placements[0] = dt_replicate();
        ls[0] = ls[1] = n; st[0] = 1; st[1] = n;
        d.local_shape = ls; d.local_strides = st; d.local_alloc = src; d.local_alloc_bytes = (int64_t)bytes;
        CHECK(dt_tensor_from_local(m, &d, src, DT_BORROW, &ts));
        d.local_strides = NULL; d.local_alloc = NULL; d.local_alloc_bytes = 0;
        CHECK(dt_tensor_from_local(m, &d, dst, DT_BORROW, &to));
        rep[0] = dt_replicate();
        /* checks */
        for (s = 0; s < NSIDE; s++) {
            int acc = s == DTACC || s == TILEDACC;
            int64_t wrong = 0;
            if (s == MEMCPY) continue;
            for (i = 0; i < n * n; i++) dst[i] = acc ? 1.0 : -1.0;
            if (s == DT) CHECK(dt_tensor_redistribute(ts, rep, &to));
            else if (s == DTACC) CHECK(dt_tensor_redistribute_reduce(ts, rep, DT_SUM, to));
            else tiled(src, dst, n, acc);
            for (i = 0; i < n; i++)
                for (j = 0; j < n; j++)
                    if (dst[i * n + j] != val(i, j) + (acc ? 1.0 : 0.0)) wrong++;
            if (wrong) { printf("%6lld: %s WRONG (%lld elements)\n", (long long)n, side_name[s], (long long)wrong); bad = 1; }
        }
        for (r = 0; r < reps; r++)
            for (s = 0; s < NSIDE; s++) {
                int k = (s + r) % NSIDE; /* rotating order */
                double t0 = MPI_Wtime();
                if (k == DT) CHECK(dt_tensor_redistribute(ts, rep, &to));
                else if (k == TILED) tiled(src, dst, n, 0);
                else if (k == MEMCPY) memcpy(ref, src, bytes);
                else if (k == DTACC) CHECK(dt_tensor_redistribute_reduce(ts, rep, DT_SUM, to));
                else tiled(src, dst, n, 1);
                t[k][r] = (MPI_Wtime() - t0) * 1e3;
            }
        for (s = 0; s < NSIDE; s++) med[s] = median(t[s], reps);
        printf("%6lld %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f\n", (long long)n, med[DT], med[TILED],
               med[MEMCPY], med[DTACC], med[TILEDACC], med[DT] / med[TILED], med[DT] / med[MEMCPY],
               med[DTACC] / med[TILEDACC]);
        fflush(stdout);
        dt_tensor_destroy(ts);
        dt_tensor_destroy(to);
        for (s = 0; s < NSIDE; s++) free(t[s]);
        free(src); free(dst); free(ref);
    }
    dt_mesh_destroy(m);
    dt_comm_destroy(comm);
    MPI_Finalize();
    return bad;
}
