/* bench/prk_transpose.c -- the Parallel Research Kernels' MPI1 transpose
   (github.com/ParRes/Kernels, MPI1/Transpose) against its dtensor.h port,
   side by side in one program, alternated round by round.

   The kernel: A and B are n x n, column-major, split by column blocks (a
   balanced split: rank r holds n/P + (r < n%P) columns, so n need not be a
   multiple of P); A(i,j) = n*j + i, B = 0; each iteration does B += A^T,
   then A += 1. After `iters` iterations B(i,j) = (n*i + j)*iters +
   iters*(iters-1)/2, checked exactly for both sides every round.

   "prk": a re-implementation of the reference's structure (written here,
   not copied): the local diagonal block B += A^T with the A += 1 fused, in
   T x T tiles (T = 64 by default, --tile); then P-1 phases, each packing
   the block for rank (me - phase) transposed into a work buffer (tiled,
   A += 1 fused), MPI_Irecv / MPI_Isend / MPI_Wait of it, and B += the
   received block.

   "port": A and B wrapped zero-copy with dt_tensor_from_local. A is the
   global tensor A[i][j] with local_strides {1, n}, Shard(1) balanced. B's
   storage, read row-major, is the transpose C = B^T: C[j][i] = B(i,j),
   contiguous, Shard(0) balanced. B += A^T is then C += A re-placed as
   Shard(0): ONE dt_tensor_redistribute_reduce(A, [Shard(0)], DT_SUM, C)
   per iteration (the transposing pack is cache-blocked, the add fused with
   the unpack), then A += 1 as a loop over the local storage.

   Time per round: the max over ranks of `iters` iterations (after one
   warm-up iteration that is not timed); ratio port/prk per round and the
   median over the rounds.

   --shm: A and B (both sides') come from dt_mesh_shm_alloc on a mesh with
   the shared path on, so the port's redistribution reads each block of A
   straight from its owner's memory, transposing and adding into B in that
   one copy (dt_comm_set_shm); without it they come from malloc and the
   port moves by MPI like any borrowed storage.

     mpiexec -n 2 ./build/mpich/bench_prk_transpose [--n "2000 4000"] [--iters 10] [--rounds 5] [--tile 64] [--shm] [--quick]
*/
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "bench/bench.h"

static int64_t ncols(int64_t n, int r) { return n / nranks + (r < n % nranks); }
static int64_t col0(int64_t n, int r) { return r * (n / nranks) + (r < n % nranks ? r : n % nranks); }

static void fill(int64_t n, double *a, double *b) {
    int64_t me0 = col0(n, rank), w = ncols(n, rank), i, j;
    for (j = 0; j < w; j++)
        for (i = 0; i < n; i++) {
            a[i + j * n] = (double)(n * (j + me0) + i);
            b[i + j * n] = 0.0;
        }
}

/* B(i,j) == (n*i + j)*iters + iters*(iters-1)/2 everywhere: the number of bad elements */
static long check(int64_t n, const double *b, int iters) {
    int64_t me0 = col0(n, rank), w = ncols(n, rank), i, j;
    double add = (double)iters * (double)(iters - 1) / 2.0;
    long bad = 0;
    for (j = 0; j < w; j++)
        for (i = 0; i < n; i++)
            if (b[i + j * n] != (double)(n * i + j + me0) * iters + add) bad++;
    return bad;
}

/* ---- the reference's structure, re-implemented ---- */

/* dst(jj, ii) (op)= A(r0 + ii, jj) over a rows x cols block of A (leading dim n),
   dst a cols x rows column-major block with leading dim ld; A += 1 over the block.
   add: dst += (B's diagonal block), else dst = (the work buffer). Tiled T x T. */
static void tile_transpose(double *a, int64_t n, int64_t r0, int64_t rows, int64_t cols, double *dst, int64_t ld,
                           int add, int64_t T) {
    int64_t i, j, it, jt;
    for (i = 0; i < rows; i += T)
        for (j = 0; j < cols; j += T) {
            int64_t ie = i + T < rows ? i + T : rows, je = j + T < cols ? j + T : cols;
            for (it = i; it < ie; it++)
                for (jt = j; jt < je; jt++) {
                    double *x = &a[(r0 + it) + jt * n];
                    if (add) dst[jt + it * ld] += *x;
                    else dst[jt + it * ld] = *x;
                    *x += 1.0;
                }
        }
}

static void prk_iteration(int64_t n, double *a, double *b, double *work_in, double *work_out, int64_t T) {
    int64_t w = ncols(n, rank), me0 = col0(n, rank);
    int phase;
    /* local block: B(me0 + j, jb) += A(me0 + jb, j)  -- B's rows me0.., A's rows me0.. */
    tile_transpose(a, n, me0, w, w, b + me0, n, 1, T);
    for (phase = 1; phase < nranks; phase++) {
        int from = (rank + phase) % nranks, to = (rank - phase + nranks) % nranks;
        int64_t wt = ncols(n, to), wf = ncols(n, from), f0 = col0(n, from), i, j;
        MPI_Request rq[2];
        /* what `to` needs: A's rows of its columns, my columns, transposed: a w x wt block (ld w) */
        MPI_Irecv(work_in, (int)(w * wf), MPI_DOUBLE, from, phase, MPI_COMM_WORLD, &rq[0]);
        tile_transpose(a, n, col0(n, to), wt, w, work_out, w, 0, T);
        MPI_Isend(work_out, (int)(w * wt), MPI_DOUBLE, to, phase, MPI_COMM_WORLD, &rq[1]);
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
        /* work_in: `from`'s columns as rows: B(f0 + i, j) += work_in(i, j), ld wf */
        for (j = 0; j < w; j++)
            for (i = 0; i < wf; i++) b[f0 + i + j * n] += work_in[i + j * wf];
    }
}

/* ---- the port ---- */

typedef struct port {
    dt_tensor *a, *c;
    dt_placement to[1];
} port;

static void port_open(dt_mesh *m, int64_t n, double *a, double *b, port *p) {
    dt_tensor_desc d;
    int64_t ls[2], st[2];
    size_t bytes = (size_t)(n * ncols(n, rank)) * sizeof(double);
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = 2;
    d.shape[0] = d.shape[1] = n;
    d.placements[0] = dt_shard_balanced(1);
    ls[0] = n; ls[1] = ncols(n, rank);
    st[0] = 1; st[1] = n;
    d.local_shape = ls;
    d.local_strides = st;
    d.local_alloc = a;
    d.local_alloc_bytes = (int64_t)bytes;
    CHECK(dt_tensor_from_local(m, &d, a, DT_BORROW, &p->a));
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = 2;
    d.shape[0] = d.shape[1] = n;
    d.placements[0] = dt_shard_balanced(0);
    ls[0] = ncols(n, rank); ls[1] = n;
    d.local_shape = ls;
    CHECK(dt_tensor_from_local(m, &d, b, DT_BORROW, &p->c));
    p->to[0] = dt_shard_balanced(0);
}

static void port_iteration(int64_t n, double *a, port *p) {
    int64_t k, cnt = n * ncols(n, rank);
    CHECK(dt_tensor_redistribute_reduce(p->a, p->to, DT_SUM, p->c)); /* B += A^T */
    for (k = 0; k < cnt; k++) a[k] += 1.0;                               /* A += 1 */
}

int main(int argc, char **argv) {
    int64_t sizes[8] = { 2000, 4000 }, T = 64;
    int nsizes = 2, iters = 10, rounds = 5, quick = 0, shm = 0, i, z, r, bad_total = 0;
    dt_comm *comm = NULL;
    dt_mesh *m = NULL;
    dt_mesh_desc md;
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) { quick = 1; sizes[0] = 200; sizes[1] = 301; iters = 2; rounds = 2; }
        else if (!strcmp(argv[i], "--n") && i + 1 < argc) nsizes = parse_list(argv[++i], sizes, 8);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tile") && i + 1 < argc) T = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--shm")) shm = 1;
    }
    if (iters < 1) iters = 1;
    if (rounds < 1) rounds = 1;
    if (T < 1) T = 1;
    CHECK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    if (shm) CHECK(dt_comm_set_shm(comm, 1)); /* the mesh gets a shared arena; A and B are allocated in it */
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = nranks;
    CHECK(dt_mesh_create(comm, &md, &m));
    if (rank == 0) {
        printf("# PRK MPI1 transpose (B += A^T; A += 1) vs its dtensor.h port (one dt_tensor_redistribute_reduce per "
               "iteration); %d ranks, %d iterations, %d rounds%s\n", nranks, iters, rounds, quick ? " (--quick)" : "");
        printf("# MPI: %s\n", mpi_library(ver));
        printf("# storage of A and B (both sides): %s\n", shm ? "dt_mesh_shm_alloc (--shm: the port's redistribution "
               "reads A straight from its owner, one copy)" : "malloc (the port's redistribution moves by MPI)");
        printf("# time per round: max over ranks of %d iterations (ms); ratio = port / prk per round\n", iters);
        printf("%6s %6s %5s %12s %12s %8s %s\n", "n", "ranks", "tile", "prk ms", "port ms", "ratio", "per-round ratios");
    }
    for (z = 0; z < nsizes; z++) {
        int64_t n = sizes[z], w = ncols(n, rank), maxw = ncols(n, 0);
        double *a = NULL, *b = NULL;
        double *wi = (double *)xmalloc((size_t)(maxw * maxw) * sizeof(double) + 8);
        double *wo = (double *)xmalloc((size_t)(maxw * maxw) * sizeof(double) + 8);
        double *tp = (double *)xmalloc((size_t)rounds * sizeof(double));
        double *tq = (double *)xmalloc((size_t)rounds * sizeof(double));
        double *ratio = (double *)xmalloc((size_t)rounds * sizeof(double));
        char rs[256] = "";
        port p;
        long bad = 0;
        if (n < nranks) { if (rank == 0) printf("%6lld: fewer columns than ranks, skipped\n", (long long)n); continue; }
        /* without --shm, malloc: dt_mesh_shm_alloc would hand out the arena that DTENSOR_SHM=auto made at the
           first size's first call */
        if (shm) {
            CHECK(dt_mesh_shm_alloc(m, (size_t)(n * w) * sizeof(double) + 8, (void **)&a));
            CHECK(dt_mesh_shm_alloc(m, (size_t)(n * w) * sizeof(double) + 8, (void **)&b));
        } else {
            a = (double *)xmalloc((size_t)(n * w) * sizeof(double) + 8);
            b = (double *)xmalloc((size_t)(n * w) * sizeof(double) + 8);
        }
        port_open(m, n, a, b, &p);
        for (r = 0; r < rounds; r++) {
            int side;
            for (side = 0; side < 2; side++) {
                int k;
                double t0;
                fill(n, a, b);
                /* one warm-up iteration, not timed; then the B check covers iters+1 iterations */
                if (side == 0) prk_iteration(n, a, b, wi, wo, T);
                else port_iteration(n, a, &p);
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
                for (k = 0; k < iters; k++) {
                    if (side == 0) prk_iteration(n, a, b, wi, wo, T);
                    else port_iteration(n, a, &p);
                }
                t0 = max_over_ranks(MPI_Wtime() - t0) * 1e3;
                if (side == 0) tp[r] = t0; else tq[r] = t0;
                bad += check(n, b, iters + 1);
            }
            ratio[r] = tq[r] / tp[r];
            if (strlen(rs) < sizeof rs - 12) snprintf(rs + strlen(rs), sizeof rs - strlen(rs), "%s%.2f", r ? " " : "", ratio[r]);
        }
        bad = sum_over_ranks((int)(bad > 0 ? 1 : 0));
        bad_total += (int)bad;
        if (rank == 0) {
            double mp = median(tp, rounds), mq = median(tq, rounds), mr = median(ratio, rounds);
            printf("%6lld %6d %5lld %12.2f %12.2f %8.2f %s%s\n", (long long)n, nranks, (long long)T, mp, mq, mr, rs,
                   bad ? "  WRONG RESULT" : "");
            fflush(stdout);
        }
        dt_tensor_destroy(p.a);
        dt_tensor_destroy(p.c);
        if (shm) { dt_mesh_shm_free(m, a); dt_mesh_shm_free(m, b); }
        else { free(a); free(b); }
        free(wi); free(wo); free(tp); free(tq); free(ratio);
    }
    dt_mesh_destroy(m);
    dt_comm_destroy(comm);
    MPI_Finalize();
    return bad_total ? 1 : 0;
}
