/* scalapack.c -- ScaLAPACK on dtensor tensors, in place: no copy, no
   redistribution. dt_tensor_scalapack_desc gives the BLACS grid and the
   array descriptor of a block-cyclic tensor's local buffer, and ScaLAPACK
   reads and writes that buffer as it is.

       make run-scalapack NP=4                    (2x2 mesh)
       make run-scalapack NP=6 MPI=openmpi ARGS="--m 301 --n 203 --k 250 --mb 32 --nb 24 --kb 16"

   Options (defaults): --m 300 --n 200 --k 250 (the GEMM), --mb 32 --nb 24
   --kb 16 (its blocks along M, N, K), --s 257 (the order of the linear
   system), --b 20 (its square blocks), --nrhs 3. The defaults are not
   multiples of the blocks, so the last block of every dim is short.

   The mesh is P x Q with P*Q = ranks, P <= Q as square as possible (1: 1x1,
   2: 1x2, 4: 2x2, 6: 2x3). Every tensor is [dt_shard_cyclic(0, ..),
   dt_shard_cyclic(1, ..)] and made with dt_tensor_empty; each rank fills its
   local elements from a closed form of the global index, which
   dt_tensor_local_indices gives per local position.

   ScaLAPACK is column-major and the buffers row-major, so ScaLAPACK sees
   each tensor transposed: T (r x c) is the ScaLAPACK matrix T^T (c x r) on
   a BLACS grid of Q x P processes in column-major order, which puts every
   process at its mesh rank (dtensor.h, dt_tensor_scalapack_desc).
     1. GEMM. C = A B is C^T = B^T A^T, so
          pdgemm("N", "N", N, M, K, 1, B, descB, A, descA, 0, C, descC)
        writes C's local buffers. C is gathered (dt_tensor_gather) and
        compared with a serial product: the entries are small integers, so
        every sum is exact and the check is equality.
     2. Linear system. S (s x s, diagonally dominant) and R (nrhs x s, one
        right-hand side per row, r_h = S x_h for a closed-form x_h).
        ScaLAPACK sees S^T: pdgetrf factors it in place and pdgetrs with
        trans "T" solves S X = R^T, writing the solutions into R's buffer;
        gathered, they must match x_h to 1e-12 and leave a residual
        max |S x - r| / (|S| |x|) below 1e-14.
     3. The descriptor of other layouts: dt_shard (chunk) is block-cyclic
        with block ceil(n/k) and is accepted; a balanced split that is not
        block-cyclic, and Replicate, are refused with DT_ERR_PLACEMENT.
     4. The other placement order, [dt_shard_cyclic(1, nb),
        dt_shard_cyclic(0, mb)]: a P x Q grid in row-major order, checked
        against BLACS (grid position) and numroc (local extents).
   Exit status 1 if any check fails.

   The BLACS context comes from Csys2blacs_handle(MPI_COMM_WORLD): the mesh
   is made over MPI_COMM_WORLD in rank order, so BLACS numbers are mesh
   ranks (dtensor.h does not hand out its MPI communicator; a mesh over
   another communicator would pass that one). */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "bench/scalapack.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

/* the closed forms. GEMM: small integers (every sum exact in f64) */
static double aval(int64_t i, int64_t k, int64_t u) { (void)u; return (double)((3 * i + 5 * k) % 11 - 5); }
static double bval(int64_t k, int64_t j, int64_t u) { (void)u; return (double)((7 * k + 2 * j) % 13 - 6); }
/* the system of order s: S diagonally dominant (off-diagonal entries of at
   most 0.5 in magnitude), solutions x_h with entries k/4, r_h = S x_h */
static double sval(int64_t i, int64_t j, int64_t s) {
    return (i == j ? (double)s + 2.0 : 0.0) + (double)((3 * i + 7 * j) % 11 - 5) / 10.0;
}
static double xval(int64_t h, int64_t j) { return (double)((5 * h + 3 * j) % 17 - 8) / 4.0; }
static double rval(int64_t h, int64_t i, int64_t s) {
    double r = 0;
    int64_t j;
    for (j = 0; j < s; j++) r += sval(i, j, s) * xval(h, j);
    return r;
}

static int64_t arg(int argc, char **argv, const char *name, int64_t def) {
    int i;
    for (i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return strtoll(argv[i + 1], NULL, 0);
    return def;
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "[%d] out of memory (%zu bytes)\n", rank, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* an F64 tensor r x c, [cyclic(0, br), cyclic(1, bc)], local element (i, j)
   = f(global row, global column, u) */
static dt_tensor *make(dt_mesh *m, int64_t r, int64_t c, int64_t br, int64_t bc,
                       double (*f)(int64_t, int64_t, int64_t), int64_t u) {
    dt_tensor_desc d = {0};
    dt_tensor *t = NULL;
    int64_t sh[2], i, j, *rows, *cols;
    double *p;
    d.dtype = DT_F64;  d.ndim = 2;  d.shape[0] = r;  d.shape[1] = c;
    d.placements[0] = dt_shard_cyclic(0, br);
    d.placements[1] = dt_shard_cyclic(1, bc);
    DT_CHECK(dt_tensor_empty(m, &d, &t));
    dt_tensor_local_shape(t, sh);
    rows = (int64_t *)xmalloc((size_t)sh[0] * sizeof(int64_t));
    cols = (int64_t *)xmalloc((size_t)sh[1] * sizeof(int64_t));
    DT_CHECK(dt_tensor_local_indices(t, 0, rows));
    DT_CHECK(dt_tensor_local_indices(t, 1, cols));
    p = (double *)dt_tensor_data(t);
    for (i = 0; i < sh[0]; i++)
        for (j = 0; j < sh[1]; j++) p[i * sh[1] + j] = f(rows[i], cols[j], u);
    free(rows);
    free(cols);
    return t;
}

/* t's descriptor in context ctx, checked against BLACS and ScaLAPACK's own
   numroc: the grid position and the local array's extents */
static void describe(const dt_tensor *t, int ctx, int *desc, int *failures) {
    dt_scalapack_grid g;
    int nprow, npcol, myrow, mycol, zero = 0, lr, lc;
    int64_t sh[2];
    DT_CHECK(dt_tensor_scalapack_desc(t, ctx, desc, &g));
    Cblacs_gridinfo(ctx, &nprow, &npcol, &myrow, &mycol);
    dt_tensor_local_shape(t, sh);
    lr = numroc_(&desc[2], &desc[4], &myrow, &zero, &nprow);
    lc = numroc_(&desc[3], &desc[5], &mycol, &zero, &npcol);
    if (g.nprow != nprow || g.npcol != npcol || g.myrow != myrow || g.mycol != mycol || lr != sh[1] ||
        lc != sh[0] || desc[8] != (lr > 1 ? lr : 1)) {
        fprintf(stderr, "[%d] descriptor: grid %dx%d at (%d,%d), BLACS says %dx%d at (%d,%d); local %lldx%lld, "
                        "numroc says %dx%d (of the transpose), LLD %d\n", rank, g.nprow, g.npcol, g.myrow, g.mycol,
                nprow, npcol, myrow, mycol, (long long)sh[0], (long long)sh[1], lc, lr, desc[8]);
        ++*failures;
    }
}

/* dt_tensor_scalapack_desc on a tensor of placements p0, p1: its status,
   and the desc's blocks (MB, NB) when it is accepted */
static dt_status try_desc(dt_mesh *m, int64_t r, int64_t c, dt_placement p0, dt_placement p1, int *desc) {
    dt_tensor_desc d = {0};
    dt_tensor *t = NULL;
    dt_status st;
    d.dtype = DT_F64;  d.ndim = 2;  d.shape[0] = r;  d.shape[1] = c;
    d.placements[0] = p0;
    d.placements[1] = p1;
    DT_CHECK(dt_tensor_empty(m, &d, &t));
    st = dt_tensor_scalapack_desc(t, 0, desc, NULL);
    dt_tensor_destroy(t);
    return st;
}

int main(int argc, char **argv) {
    int64_t M, N, K, mb, nb, kb, S, b, nrhs, i, j, k, h;
    int P = 1, Q, failures = 0, all, sys, ctx, descA[9], descB[9], descC[9], descS[9], descR[9], info = 0;
    int iM, iN, iK, iS, inrhs, one_i = 1, desc[9];
    double one = 1.0, zero = 0.0, t0, t_gemm, t_solve, *full, err = 0, res = 0, snorm = 0, xnorm = 0;
    long long wrong = 0, wrong_all;
    dt_comm *comm;
    dt_mesh *mesh;
    dt_mesh_desc md = {0};
    dt_scalapack_grid g;
    dt_tensor *A, *B, *C, *Smat, *R;
    int64_t sh[2];
    int *ipiv;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    M = arg(argc, argv, "--m", 300);   N = arg(argc, argv, "--n", 200);   K = arg(argc, argv, "--k", 250);
    mb = arg(argc, argv, "--mb", 32);  nb = arg(argc, argv, "--nb", 24);  kb = arg(argc, argv, "--kb", 16);
    S = arg(argc, argv, "--s", 257);   b = arg(argc, argv, "--b", 20);    nrhs = arg(argc, argv, "--nrhs", 3);
    if (M < 1 || N < 1 || K < 1 || S < 1 || nrhs < 1 || mb < 1 || nb < 1 || kb < 1 || b < 1 || M > 4096 ||
        N > 4096 || K > 4096 || S > 4096 || nrhs > 64) {
        if (rank == 0) fprintf(stderr, "scalapack: sizes 1..4096 (--nrhs 1..64), blocks >= 1\n");
        MPI_Finalize();
        return 2;
    }
    for (i = 1; i * i <= nranks; i++)
        if (nranks % i == 0) P = (int)i;
    Q = nranks / P;

    DT_CHECK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    md.ndim = 2;  md.shape[0] = P;  md.shape[1] = Q;  md.names[0] = "p";  md.names[1] = "q";
    DT_CHECK(dt_mesh_create(comm, &md, &mesh));

    /* 1. GEMM on the tensors' own buffers */
    A = make(mesh, M, K, mb, kb, aval, 0);
    B = make(mesh, K, N, kb, nb, bval, 0);
    C = make(mesh, M, N, mb, nb, aval, 0); /* overwritten: beta = 0 */
    DT_CHECK(dt_tensor_scalapack_desc(A, 0, NULL, &g)); /* the grid first, then the context */
    sys = Csys2blacs_handle(MPI_COMM_WORLD);
    ctx = sys;
    Cblacs_gridinit(&ctx, g.order, g.nprow, g.npcol);
    if (rank == 0)
        printf("scalapack: %d ranks, mesh %dx%d, BLACS grid %dx%d (order %s), every tensor seen transposed\n",
               nranks, P, Q, g.nprow, g.npcol, g.order);
    describe(A, ctx, descA, &failures);
    describe(B, ctx, descB, &failures);
    describe(C, ctx, descC, &failures);
    iM = (int)M;  iN = (int)N;  iK = (int)K;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    pdgemm_("N", "N", &iN, &iM, &iK, &one, (const double *)dt_tensor_data(B), &one_i, &one_i, descB,
            (const double *)dt_tensor_data(A), &one_i, &one_i, descA, &zero, (double *)dt_tensor_data(C), &one_i,
            &one_i, descC);
    t_gemm = MPI_Wtime() - t0;
    full = (double *)xmalloc((size_t)(M * N) * sizeof(double));
    DT_CHECK(dt_tensor_gather(C, full));
    for (i = rank; i < M; i += nranks) /* each rank checks its share of the rows */
        for (j = 0; j < N; j++) {
            double c = 0;
            for (k = 0; k < K; k++) c += aval(i, k, 0) * bval(k, j, 0);
            wrong += full[i * N + j] != c;
        }
    free(full);
    MPI_Allreduce(&wrong, &wrong_all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    failures += wrong_all != 0;
    if (rank == 0)
        printf("pdgemm: C[%lldx%lld] = A[%lldx%lld] B[%lldx%lld], blocks %lld/%lld/%lld, in place: %.3f ms; "
               "%lld of %lld entries differ from the serial product: %s\n", (long long)M, (long long)N,
               (long long)M, (long long)K, (long long)K, (long long)N, (long long)mb, (long long)nb, (long long)kb,
               t_gemm * 1e3, wrong_all, (long long)(M * N), wrong_all ? "WRONG" : "OK");

    /* 2. LU: ScaLAPACK factors S^T and solves with its transpose, S X = R^T */
    Smat = make(mesh, S, S, b, b, sval, S);
    R = make(mesh, nrhs, S, 1, b, rval, S); /* row h = r_h; S's columns and R's share the block b */
    describe(Smat, ctx, descS, &failures);
    describe(R, ctx, descR, &failures);
    dt_tensor_local_shape(Smat, sh);
    ipiv = (int *)xmalloc((size_t)(sh[1] + descS[4]) * sizeof(int)); /* LOCr(S^T) + MB */
    iS = (int)S;  inrhs = (int)nrhs;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    pdgetrf_(&iS, &iS, (double *)dt_tensor_data(Smat), &one_i, &one_i, descS, ipiv, &info);
    if (info == 0)
        pdgetrs_("T", &iS, &inrhs, (const double *)dt_tensor_data(Smat), &one_i, &one_i, descS, ipiv,
                 (double *)dt_tensor_data(R), &one_i, &one_i, descR, &info);
    t_solve = MPI_Wtime() - t0;
    free(ipiv);
    if (info != 0) {
        fprintf(stderr, "[%d] pdgetrf/pdgetrs: info %d\n", rank, info);
        failures++;
    }
    full = (double *)xmalloc((size_t)(nrhs * S) * sizeof(double));
    DT_CHECK(dt_tensor_gather(R, full));
    for (h = 0; h < nrhs; h++)
        for (i = 0; i < S; i++) {
            double d = fabs(full[h * S + i] - xval(h, i)), ri = -rval(h, i, S), row = 0;
            err = d > err ? d : err;
            xnorm = fabs(full[h * S + i]) > xnorm ? fabs(full[h * S + i]) : xnorm;
            if (i % nranks != rank) continue; /* the residual's rows shared out */
            for (j = 0; j < S; j++) {
                ri += sval(i, j, S) * full[h * S + j];
                row += fabs(sval(i, j, S));
            }
            res = fabs(ri) > res ? fabs(ri) : res;
            snorm = row > snorm ? row : snorm;
        }
    free(full);
    MPI_Allreduce(MPI_IN_PLACE, &res, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &snorm, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    res = snorm > 0 && xnorm > 0 ? res / (snorm * xnorm) : res;
    all = err <= 1e-12 && res <= 1e-14 && info == 0;
    failures += !all;
    if (rank == 0)
        printf("pdgetrf + pdgetrs(T): S[%lldx%lld] x = r, %lld right-hand sides, block %lld, in place: %.3f ms; "
               "max |x - x_true| = %.2g, residual |Sx - r| / (|S| |x|) = %.2g: %s\n", (long long)S, (long long)S,
               (long long)nrhs, (long long)b, t_solve * 1e3, err, res, all ? "OK" : "WRONG");

    /* 3. other layouts: chunk is block-cyclic; ragged balanced and Replicate are not */
    {
        dt_status st1, st2, st3;
        int ok;
        st1 = try_desc(mesh, 10, 7, dt_shard(0), dt_shard(1), desc);
        ok = st1 == DT_OK && desc[2] == 7 && desc[3] == 10 && desc[4] == (7 + Q - 1) / Q &&
             desc[5] == (10 + P - 1) / P;
        /* balanced n over k is block-cyclic where k divides n, n <= k, or all parts but the last are
           full (7 over 2: 4, 3); not 10 over 4 (3, 3, 2, 2) or 7 over 3 (3, 2, 2) */
        st2 = try_desc(mesh, 10, 7, dt_shard_balanced(0), dt_shard_balanced(1), desc);
        ok = ok && (st2 == DT_OK) == ((10 % P == 0 || 10 % P == P - 1 || P >= 10) &&
                                      (7 % Q == 0 || 7 % Q == Q - 1 || Q >= 7));
        st3 = try_desc(mesh, 10, 7, dt_replicate(), dt_shard(1), desc);
        ok = ok && st3 == DT_ERR_PLACEMENT;
        failures += !ok;
        if (rank == 0)
            printf("descriptors: [S(0),S(1)] chunk %s (blocks %d x %d of the transpose), balanced %s, [R,S(1)] %s: "
                   "%s\n", st1 ? dt_status_string(st1) : "accepted", desc[4], desc[5],
                   st2 ? "refused (not block-cyclic here)" : "accepted (block-cyclic here)",
                   st3 ? "refused" : "ACCEPTED", ok ? "OK" : "WRONG");
    }

    /* 4. the other placement order, [S(1), S(0)]: a P x Q grid in row-major order */
    {
        dt_tensor_desc d = {0};
        dt_tensor *T;
        int ctxr = sys, descT[9];
        d.dtype = DT_F64;  d.ndim = 2;  d.shape[0] = M;  d.shape[1] = N;
        d.placements[0] = dt_shard_cyclic(1, nb);
        d.placements[1] = dt_shard_cyclic(0, mb);
        DT_CHECK(dt_tensor_empty(mesh, &d, &T));
        DT_CHECK(dt_tensor_scalapack_desc(T, 0, NULL, &g));
        Cblacs_gridinit(&ctxr, g.order, g.nprow, g.npcol);
        all = failures;
        describe(T, ctxr, descT, &failures);
        if (rank == 0)
            printf("placements [S(1),S(0)]: BLACS grid %dx%d (order %s), descriptor {%d, ., %d, %d, %d, %d, 0, 0, "
                   "%d} on rank 0, grid position and numroc: %s\n", g.nprow, g.npcol, g.order, descT[0], descT[2],
                   descT[3], descT[4], descT[5], descT[8], all == failures ? "OK" : "WRONG");
        Cblacs_gridexit(ctxr);
        dt_tensor_destroy(T);
    }

    dt_tensor_destroy(R);
    dt_tensor_destroy(Smat);
    dt_tensor_destroy(C);
    dt_tensor_destroy(B);
    dt_tensor_destroy(A);
    Cblacs_gridexit(ctx);
    Cfree_blacs_system_handle(sys);
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("scalapack: %s\n", all ? "FAILED" : "OK");
    dt_mesh_destroy(mesh);
    dt_comm_destroy(comm);
    Cblacs_exit(1);
    MPI_Finalize();
    return all ? 1 : 0;
}
