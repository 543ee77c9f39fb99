/* matmul2d.c -- a large GEMM C = A B on a 2-D mesh through dt_matmul.

       make run-matmul2d NP=4                     (2x2 mesh, 2048^3 F64)
       make run-matmul2d NP=4 ARGS="--m 4096 --n 4096 --k 1024 --reps 5"

   The mesh is a x b with a*b = ranks, a <= b (4: 2x2, 6: 2x3, 8: 2x4).
   A [M,K] and B [K,N] are F64 sharded 2-D, [Shard(0), Shard(1)]: blocks of
   rows over the mesh's first dim, of columns over its second, as a 2-D
   block-distributed simulation code holds them; each rank fills its own
   block from the closed form (no data leaves rank 0), and dt_matmul picks a
   strategy from its table (printed with dt_explain): the redistributions it
   needs, the local GEMM (BLIS), and C's placement.

   The entries are small integers, A[i,k] = (3i + 5k) mod 11 - 5 and
   B[k,j] = (7k + 2j) mod 13 - 6, so every product and partial sum is an
   integer below 2^53 and the result is exact whatever the summation order:
     - 256 entries of C on every rank equal the closed form sum_k A[i,k] B[k,j]
     - C x == A (B x) exactly (x[j] = j mod 5 - 2, dt_matmul with a 1-D x)
   GFLOP/s = 2 M N K / (median time of --reps calls of dt_matmul, the output
   tensor reused as a time loop would). One core per rank: BLIS_NUM_THREADS=1
   (make run-matmul2d sets it). */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include <stdlib.h>
#include <string.h>

static double aval(int64_t i, int64_t k) { return (double)((3 * i + 5 * k) % 11 - 5); }
static double bval(int64_t k, int64_t j) { return (double)((7 * k + 2 * j) % 13 - 6); }

static int64_t arg(int argc, char **argv, const char *name, int64_t def) {
    int i;
    for (i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return strtoll(argv[i + 1], NULL, 0);
    return def;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* a tensor [r, c] with placements pl, each rank's block filled from f */
static dt_tensor *make(dt_mesh *m, int64_t r, int64_t c, const dt_placement *pl, double (*f)(int64_t, int64_t)) {
    dt_tensor_desc d = {0};
    dt_tensor *t = NULL;
    int64_t sh[2], off[2], i, j;
    double *p;
    d.dtype = DT_F64;  d.ndim = 2;  d.shape[0] = r;  d.shape[1] = c;
    d.placements[0] = pl[0];  d.placements[1] = pl[1];
    DT_CHECK(dt_tensor_empty(m, &d, &t));
    dt_tensor_local_shape(t, sh);
    dt_tensor_local_offset(t, off);
    p = (double *)dt_tensor_data(t);
    for (i = 0; i < sh[0]; i++)
        for (j = 0; j < sh[1]; j++) p[i * sh[1] + j] = f(off[0] + i, off[1] + j);
    return t;
}

static const char *pls(const dt_tensor *t, char *buf) {
    const dt_tensor_desc *d = dt_tensor_get_desc(t);
    int i, k = 0;
    for (i = 0; i < 2; i++) {
        const dt_placement p = d->placements[i];
        k += sprintf(buf + k, "%s", i ? ", " : "[");
        if (p.kind == DT_SHARD) k += sprintf(buf + k, "Shard(%d)", p.dim);
        else if (p.kind == DT_PARTIAL) k += sprintf(buf + k, "Partial(%s)", p.reduce == DT_SUM ? "sum" : "op");
        else k += sprintf(buf + k, "Replicate");
    }
    sprintf(buf + k, "]");
    return buf;
}

int main(int argc, char **argv) {
    int rank, nranks, a = 1, r, reps, ok = 1, all_ok;
    int64_t M, N, K, sh[2], off[2], i, j, k;
    dt_comm *comm;  dt_mesh *mesh;
    dt_mesh_desc md = {0};
    dt_placement pl[2];
    dt_tensor *A, *B, *C = NULL, *x, *bx = NULL, *abx = NULL, *cx = NULL;
    double *times, t, gflops;
    char s1[64], s2[64], s3[64];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    M = arg(argc, argv, "--m", 2048);
    N = arg(argc, argv, "--n", M);
    K = arg(argc, argv, "--k", M);
    reps = (int)arg(argc, argv, "--reps", 3);
    if (M < 1 || N < 1 || K < 1 || reps < 1 || K > (1 << 20)) {
        if (rank == 0) fprintf(stderr, "matmul2d: sizes must be positive (K <= 2^20 keeps C exact)\n");
        MPI_Finalize();
        return 2;
    }
    for (r = 1; r * r <= nranks; r++) if (nranks % r == 0) a = r;

    DT_CHECK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    md.ndim = 2;  md.shape[0] = a;  md.shape[1] = nranks / a;
    md.names[0] = "row";  md.names[1] = "col";
    DT_CHECK(dt_mesh_create(comm, &md, &mesh));
    pl[0] = dt_shard(0);  pl[1] = dt_shard(1);
    A = make(mesh, M, K, pl, aval);
    B = make(mesh, K, N, pl, bval);

    if (rank == 0) {
        printf("matmul2d: C[%lld,%lld] = A[%lld,%lld] B[%lld,%lld], f64, mesh %dx%d (row x col), %d ranks\n",
               (long long)M, (long long)N, (long long)M, (long long)K, (long long)K, (long long)N, a, nranks / a,
               nranks);
        printf("  A %s, B %s; dt_matmul's strategy (dt_explain):\n", pls(A, s1), pls(B, s2));
        fflush(stdout);
        DT_CHECK(dt_explain(mesh, stdout));
    }
    DT_CHECK(dt_matmul(A, B, &C));                           /* the first call: plan, allocate */
    if (rank == 0) { fflush(stdout); DT_CHECK(dt_explain(mesh, NULL)); }

    times = (double *)malloc((size_t)reps * sizeof(double));
    for (r = 0; r < reps; r++) {                          /* C reused: no allocation */
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        DT_CHECK(dt_matmul(A, B, &C));
        t = MPI_Wtime() - t;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        times[r] = t;
    }
    qsort(times, (size_t)reps, sizeof(double), cmp);
    t = times[reps / 2];
    gflops = 2.0 * (double)M * (double)N * (double)K / t * 1e-9;

    /* check 1: entries of my block against the closed form */
    dt_tensor_local_shape(C, sh);
    dt_tensor_local_offset(C, off);
    {
        const dt_tensor_desc *cd = dt_tensor_get_desc(C);
        int partial = cd->placements[0].kind == DT_PARTIAL || cd->placements[1].kind == DT_PARTIAL;
        dt_tensor *cr = NULL;
        const double *c;
        uint64_t h = 88172645463325252ull + (uint64_t)rank;
        if (partial) {                                    /* a Partial C: reduce it first */
            dt_placement p2[2] = { dt_shard(0), dt_shard(1) };
            DT_CHECK(dt_tensor_redistribute(C, p2, &cr));
            dt_tensor_local_shape(cr, sh);
            dt_tensor_local_offset(cr, off);
        }
        c = (const double *)dt_tensor_data(cr ? cr : C);
        for (r = 0; r < 256 && sh[0] > 0 && sh[1] > 0; r++) {
            double want = 0;
            h ^= h << 13;  h ^= h >> 7;  h ^= h << 17;    /* xorshift: which entry */
            i = (int64_t)(h % (uint64_t)sh[0]);
            j = (int64_t)((h >> 32) % (uint64_t)sh[1]);
            for (k = 0; k < K; k++) want += aval(off[0] + i, k) * bval(k, off[1] + j);
            if (c[i * sh[1] + j] != want) ok = 0;
        }
        dt_tensor_destroy(cr);
    }
    /* check 2: C x == A (B x), x replicated; exact in integers */
    {
        dt_tensor_desc xd = {0};
        double *xf = (double *)malloc((size_t)N * sizeof(double));
        double *v1 = (double *)malloc((size_t)M * sizeof(double)), *v2 = (double *)malloc((size_t)M * sizeof(double));
        for (j = 0; j < N; j++) xf[j] = (double)(j % 5 - 2);
        xd.dtype = DT_F64;  xd.ndim = 1;  xd.shape[0] = N;
        DT_CHECK(dt_tensor_distribute(mesh, &xd, xf, DT_SRC_ALL, &x));
        DT_CHECK(dt_matmul(C, x, &cx));
        DT_CHECK(dt_matmul(B, x, &bx));
        DT_CHECK(dt_matmul(A, bx, &abx));
        DT_CHECK(dt_tensor_gather(cx, v1));
        DT_CHECK(dt_tensor_gather(abx, v2));
        for (i = 0; i < M; i++) if (v1[i] != v2[i]) ok = 0;
        free(xf);  free(v1);  free(v2);
    }
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("  C %s, local block %lldx%lld on rank 0\n", pls(C, s3), (long long)sh[0], (long long)sh[1]);
        printf("  time %.3f s (median of %d), %.1f GFLOP/s in all, %.1f per rank\n", t, reps, gflops,
               gflops / nranks);
        printf("  check: 256 entries per rank == closed form, C x == A (B x) exactly: %s\n",
               all_ok ? "OK" : "FAILED");
    }
    free(times);
    dt_tensor_destroy(abx);  dt_tensor_destroy(bx);  dt_tensor_destroy(cx);  dt_tensor_destroy(x);
    dt_tensor_destroy(C);  dt_tensor_destroy(B);  dt_tensor_destroy(A);
    dt_mesh_destroy(mesh);
    dt_comm_destroy(comm);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
