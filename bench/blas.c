/* bench/blas.c -- dt_matmul on the BLAS it was built for, against the same
   BLAS's dgemm called directly on the same local matrices (make bench-blas).

   C[n,n] = A[n,n] B[n,n], F64, A Shard(0) and B Replicate on a 1-D mesh of
   all ranks: dt_matmul's strategy needs no communication, so each rank runs
   one local GEMM of (n/p) x n x n, and the ratio dt_matmul / direct is what
   dtensor adds (dispatch, strategy lookup, the output tensor, and for a
   CBLAS or Fortran BLAS the stride mapping). "direct" calls the library
   itself (bli_dgemm, cblas_dgemm, dgemm_) on the same local buffers; with
   DTENSOR_BLAS=none there is no library, and direct is the loops' kernel.
   A third column runs the local kernel with A stored without a unit stride
   (every other element of rows of 2n+1): BLIS takes it directly, a CBLAS or
   Fortran BLAS gets a packed copy; "strided" is its time over the
   contiguous kernel's. Medians of --reps (default 5) timings, max over ranks.

   Build with the -D and -l of one variant (see the Makefile's bench-blas);
   options: --quick (n = 256, 512), --max N (largest n, default 2048),
   --reps R. Exits non-zero if dt_matmul and direct disagree. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "bench.h"
#include <string.h>

#define CK(x)                                                                                     \
    do {                                                                                          \
        dt_status s_ = (x);                                                                       \
        if (s_) {                                                                                 \
            fprintf(stderr, "[%d] %s: %s\n", rank, #x, dt_last_error());                          \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                         \
        }                                                                                         \
    } while (0)

/* C = A B, row-major m x k times k x n, by the library directly */
static void direct_dgemm(int64_t m, int64_t n, int64_t k, const double *a, const double *b, double *c) {
#if DT__BLAS == 1
    double one = 1.0, zero = 0.0;
    bli_dgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &one, (double *)a, k, 1, (double *)b, n, 1, &zero, c, n, 1);
#elif DT__BLAS == 2
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (DTENSOR_BLAS_INT)m, (DTENSOR_BLAS_INT)n,
                (DTENSOR_BLAS_INT)k, 1.0, a, (DTENSOR_BLAS_INT)k, b, (DTENSOR_BLAS_INT)n, 0.0, c, (DTENSOR_BLAS_INT)n);
#elif DT__BLAS == 3
    /* row-major C = A B is column-major C^T = B^T A^T */
    DTENSOR_BLAS_INT im = (DTENSOR_BLAS_INT)m, in = (DTENSOR_BLAS_INT)n, ik = (DTENSOR_BLAS_INT)k;
    double one = 1.0, zero = 0.0;
    dgemm_("N", "N", &in, &im, &ik, &one, b, &in, a, &ik, &zero, c, &in, 1, 1);
#else
    dt__k_gemm(DT_F64, m, n, k, 1.0, a, k, 1, b, n, 1, 0.0, c, n, 1);
#endif
}

int main(int argc, char **argv) {
    int quick = 0, reps = 5, i, r;
    int64_t nmax = 2048, n;
    dt_comm *comm;
    dt_mesh *mesh;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1, nmax = 512;
        else if (!strcmp(argv[i], "--max") && i + 1 < argc) nmax = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    }
    (void)quick;
    CK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    {
        dt_mesh_desc md;
        memset(&md, 0, sizeof md);
        md.ndim = 1;
        md.shape[0] = nranks;
        CK(dt_mesh_create(comm, &md, &mesh));
    }
    if (rank == 0) {
        printf("# local GEMM: %s, %d rank(s); C[n,n] = A[n,n] B[n,n] F64, A S(0), B R: one (n/%d) x n x n GEMM per rank\n",
               dt__gemm_backend(), nranks, nranks);
        printf("# medians of %d, ms, max over ranks; dt/direct = dt_matmul over the library called directly;\n"
               "# strided = the local kernel with A stored without a unit stride over the contiguous kernel\n", reps);
        printf("%-6s %12s %12s %10s %12s %10s\n", "n", "direct_ms", "dt_matmul_ms", "dt/direct", "strided_ms",
               "strided/c");
    }
    for (n = 256; n <= nmax; n *= 2) {
        dt_tensor_desc da, db;
        dt_tensor *A, *B, *C = NULL;
        double *ta = (double *)xmalloc((size_t)reps * sizeof(double) * 4), *tb = ta + reps, *tc = tb + reps,
               *td = tc + reps;
        double *al, *bl, *cl, *cd, *as, maxdiff = 0, t0;
        int64_t ml, j;
        memset(&da, 0, sizeof da);
        da.dtype = DT_F64;
        da.ndim = 2;
        da.shape[0] = da.shape[1] = n;
        db = da;
        da.placements[0] = dt_shard(0);
        db.placements[0] = dt_replicate();
        CK(dt_tensor_empty(mesh, &da, &A));
        CK(dt_tensor_empty(mesh, &db, &B));
        al = (double *)dt_tensor_data(A);
        bl = (double *)dt_tensor_data(B);
        ml = (n + nranks - 1) / nranks;
        if (rank == nranks - 1) ml = n - ml * (nranks - 1);
        for (j = 0; j < ml * n; j++) al[j] = (double)((j * 7 + rank) % 13) / 8.0 - 0.75;
        for (j = 0; j < n * n; j++) bl[j] = (double)((j * 5) % 11) / 8.0 - 0.6;
        cd = (double *)xmalloc((size_t)(ml * n) * sizeof(double) + 8);
        as = (double *)xmalloc((size_t)(ml * (2 * n + 1)) * sizeof(double) + 8);
        for (j = 0; j < ml; j++) {
            int64_t q;
            for (q = 0; q < n; q++) as[j * (2 * n + 1) + 2 * q] = al[j * n + q];
        }
        CK(dt_matmul(A, B, &C)); /* warm-up: strategy cached, C allocated */
        direct_dgemm(ml, n, n, al, bl, cd);
        for (r = 0; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            direct_dgemm(ml, n, n, al, bl, cd);
            ta[r] = max_over_ranks(1e3 * (MPI_Wtime() - t0));
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            CK(dt_matmul(A, B, &C)); /* into the same C */
            tb[r] = max_over_ranks(1e3 * (MPI_Wtime() - t0));
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            CK(dt__k_gemm(DT_F64, ml, n, n, 1.0, al, n, 1, bl, n, 1, 0.0, cd, n, 1));
            tc[r] = max_over_ranks(1e3 * (MPI_Wtime() - t0));
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            CK(dt__k_gemm(DT_F64, ml, n, n, 1.0, as, 2 * n + 1, 2, bl, n, 1, 0.0, cd, n, 1));
            td[r] = max_over_ranks(1e3 * (MPI_Wtime() - t0));
        }
        cl = (double *)dt_tensor_data(C);
        direct_dgemm(ml, n, n, al, bl, cd);
        for (j = 0; j < ml * n; j++) {
            double d = cl[j] - cd[j];
            if (d < 0) d = -d;
            if (d > maxdiff) maxdiff = d;
        }
        maxdiff = max_over_ranks(maxdiff);
        {
            double mta = median(ta, reps), mtb = median(tb, reps), mtc = median(tc, reps), mtd = median(td, reps);
            if (rank == 0)
                printf("%-6lld %12.3f %12.3f %10.3f %12.3f %10.3f\n", (long long)n, mta, mtb, mtb / mta, mtd, mtd / mtc);
        }
        fflush(stdout);
        if (maxdiff > 1e-9 * (double)n) {
            if (rank == 0) fprintf(stderr, "n=%lld: dt_matmul and direct differ by %g\n", (long long)n, maxdiff);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        free(ta);
        free(cd);
        free(as);
        dt_tensor_destroy(C);
        dt_tensor_destroy(B);
        dt_tensor_destroy(A);
    }
    dt_mesh_destroy(mesh);
    dt_comm_destroy(comm);
    MPI_Finalize();
    return 0;
}
