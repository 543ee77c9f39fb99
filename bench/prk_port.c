/* bench/prk_port.c -- dtensor.h ports of three Parallel Research Kernels
   MPI1 programs (github.com/ParRes/Kernels: MPI1/Transpose, MPI1/Stencil,
   MPI1/DGEMM), each a separate program with PRK's command line, PRK's data
   layout, PRK's validation and PRK's last two output lines, so that
   bench/prk_vs.sh times PRK's own binaries and these ports with one parser
   (`make bench-prk-real PRK_DIR=...`). One source, built three ways:

     -DPRK_TRANSPOSE  build/<mpi>/prk_port_transpose <# iterations> <matrix order> [tile size]
     -DPRK_STENCIL    build/<mpi>/prk_port_stencil   <# iterations> <array dimension>
     -DPRK_DGEMM      build/<mpi>/prk_port_dgemm     <# iterations> <matrix order> <outer block size> <local block flag>

   Each allocates PRK's arrays as PRK does (64-byte aligned, PRK's sizes and
   leading dimensions, PRK's initial values), wraps them zero-copy with
   dt_tensor_from_local (DT_BORROW) and does PRK's iteration through the
   library; iteration 0 is a warm-up, the timer starts after a barrier at
   iteration 1, and the time is the max over ranks (MPI_Reduce, MPI_MAX) of
   the loop, divided by the iterations -- PRK's own rule. The result is
   checked with PRK's own test and tolerance; the output ends as PRK's does:

     Solution validates
     Rate (MB/s): <rate> Avg time (s): <seconds>          (transpose)
     Rate (MFlops/s): <rate>  Avg time (s): <seconds>     (stencil, dgemm)

   Transpose (PRK: transpose.c). A and B are n x n, column-major, in column
   blocks of n/P columns (n % P == 0, as PRK requires); A(i,j) = n*j + i,
   B = 0; each iteration B += A^T, then A += 1. Port: A wrapped as the
   global A[i][j] with local_strides {1, n}, Shard(1); B's storage read
   row-major is C = B^T, Shard(0), contiguous. B += A^T is C += A re-placed
   as Shard(0): ONE dt_tensor_redistribute_reduce(A, [Shard(0)], DT_SUM, C)
   per iteration, then A += 1 as a loop over the local block (as
   bench/prk_transpose.c's port). The tile size is read and printed, not
   used (the library picks its own blocking). Check: sum |B - reference| <
   1e-8.

   Stencil (PRK: stencil.c, STAR=1, DOUBLE=1, RADIUS 2 unless -DRADIUS=r
   as PRK's `make RADIUS=r`). The n x n grid on PRK's rank grid
   (factor(P): Num_procsx x Num_procsy, rank = y*Num_procsx + x, balanced
   splits), IN(i,j) = i + j with RADIUS ghost cells on every side (i the
   fast index), OUT = 0; each iteration OUT += the star stencil (weights
   +-1/(2*k*RADIUS)) on the points at least RADIUS from the global edge,
   then IN += 1 on the interior. Port: a 2-D mesh [Num_procsy, Num_procsx],
   IN wrapped as the ghosted array it is (tensor [n(j), n(i)],
   [Shard(0), Shard(1)] balanced, local_ghost {RADIUS, RADIUS}) with a halo
   of width RADIUS (no corners, DT_BOUNDARY_NONE: PRK never reads past the
   global edge), OUT wrapped as the existing *out of dt_stencil_apply (the
   exchange overlapped with the inner cells; the callback adds PRK's terms
   in PRK's order), then IN += 1 as a loop. Check: the L1 norm of OUT over
   the active points / (n - 2*RADIUS)^2 within 1e-8 of (iterations+1)*2.

   DGEMM (PRK: dgemm.c). PRK's rank grid nprow x npcol (nprow the largest
   divisor of P not above sqrt(P), rank = row*npcol + col), balanced row
   and column blocks, column-major local blocks with PRK's leading
   dimension (mynrows rounded up to a multiple of the outer block size);
   A(i,j) = B(i,j) = j, C = 0; each iteration C += A B. Port: a 2-D mesh
   [nprow, npcol], A, B and C wrapped with local_strides {1, lda},
   [Shard(0), Shard(1)] balanced; each iteration T = dt_matmul(A, B) (a
   streamed SUMMA reading A and B in place, into T made at the warm-up and
   reused), then C += T as a loop. The outer block size and the local block
   flag are read and printed (lda follows the block size as PRK's does),
   not used by dt_matmul (its own panels, BLIS's kernels: PRK's MPI1 DGEMM
   multiplies with its own C loops, no BLAS). Check: |sum C - ref| / ref <=
   1e-5, ref = n^4 (n-1)^2 / 4 * (iterations+1).

   The library's own checks on the wraps (local shape and offset against
   PRK's split) run at set-up: a rank whose block differs from PRK's aborts
   with a message. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "bench/bench.h"
#include <math.h>

#if !defined(PRK_TRANSPOSE) && !defined(PRK_STENCIL) && !defined(PRK_DGEMM)
#error "build with -DPRK_TRANSPOSE, -DPRK_STENCIL or -DPRK_DGEMM"
#endif

/* PRK's bail_out: every rank leaves if any rank set error */
static void bail_out(int error) {
    int e = 0;
    MPI_Allreduce(&error, &e, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (e) {
        MPI_Finalize();
        exit(1);
    }
}

/* PRK's prk_malloc: 64-byte aligned (PRK_ALIGNMENT's default); *raw is what to free */
static double *alloc64(size_t bytes, void **raw) {
    char *p = (char *)xmalloc(bytes + 64);
    *raw = p;
    return (double *)(void *)(p + (64 - (uintptr_t)p % 64) % 64);
}

static void header(const char *what) {
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    printf("dtensor.h port of the Parallel Research Kernels' MPI1 %s (bench/prk_port.c)\n", what);
    printf("MPI: %s\n", mpi_library(ver));
}

/* the mesh of PRK's rank grid (row-major: rank = c0 * shape[1] + c1) */
static dt_mesh *grid(dt_comm *comm, int p0, int p1) {
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    memset(&md, 0, sizeof md);
    md.ndim = p1 ? 2 : 1;
    md.shape[0] = p0;
    md.shape[1] = p1;
    CHECK(dt_mesh_create(comm, &md, &m));
    return m;
}

/* the wrap's local block is PRK's: shape ls0 x ls1 at offset o0, o1 (else abort) */
static void same_block(const dt_tensor *t, const char *name, int64_t ls0, int64_t ls1, int64_t o0, int64_t o1) {
    int64_t ls[DT_MAX_DIMS], off[DT_MAX_DIMS];
    dt_tensor_local_shape(t, ls);
    dt_tensor_local_offset(t, off);
    if (ls[0] != ls0 || ls[1] != ls1 || off[0] != o0 || off[1] != o1) {
        fprintf(stderr, "[%d] %s: the wrap's block is %lld x %lld at (%lld, %lld), PRK's %lld x %lld at (%lld, %lld)\n",
                rank, name, (long long)ls[0], (long long)ls[1], (long long)off[0], (long long)off[1], (long long)ls0,
                (long long)ls1, (long long)o0, (long long)o1);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

#ifdef PRK_TRANSPOSE
int main(int argc, char **argv) {
    long order = 0, block_order, colblock_size, i, j;
    int iterations = 0, tile_order = 32, error = 0, iter;
    double *a, *b, abserr = 0.0, abserr_tot = 0.0, t = 0.0, trans_time = 0.0;
    void *ra, *rb;
    int64_t ls[2], st[2], colstart;
    dt_comm *comm = NULL;
    dt_mesh *m;
    dt_tensor_desc d;
    dt_tensor *ta = NULL, *tc = NULL;
    dt_placement to[1];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (rank == 0) {
        header("matrix transpose: B = A^T");
        if (argc != 3 && argc != 4) {
            printf("Usage: %s <# iterations> <matrix order> [Tile size]\n", argv[0]);
            error = 1;
        } else {
            iterations = atoi(argv[1]);
            order = atol(argv[2]);
            if (argc == 4) tile_order = atoi(argv[3]);
            if (iterations < 1) { printf("ERROR: iterations must be >= 1 : %d \n", iterations); error = 1; }
            else if (order < nranks) {
                printf("ERROR: matrix order %ld should at least # procs %d\n", order, nranks);
                error = 1;
            } else if (order % nranks) {
                printf("ERROR: matrix order %ld should be divisible by # procs %d\n", order, nranks);
                error = 1;
            }
        }
    }
    bail_out(error);
    if (rank == 0) {
        printf("Number of ranks      = %d\n", nranks);
        printf("Matrix order         = %ld\n", order);
        printf("Number of iterations = %d\n", iterations);
        printf("Tile size            = %d (read, not used: the library's own blocking)\n", tile_order);
        printf("One dt_tensor_redistribute_reduce(A, [Shard(0)], DT_SUM, B^T) per iteration, then A += 1\n");
    }
    MPI_Bcast(&order, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Bcast(&iterations, 1, MPI_INT, 0, MPI_COMM_WORLD);
    block_order = order / nranks;
    colstart = block_order * rank;
    colblock_size = order * block_order;
    a = alloc64((size_t)colblock_size * sizeof(double), &ra);
    b = alloc64((size_t)colblock_size * sizeof(double), &rb);
    for (j = 0; j < block_order; j++)
        for (i = 0; i < order; i++) {
            a[i + order * j] = (double)(order * (j + colstart) + i);
            b[i + order * j] = 0.0;
        }

    CHECK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    m = grid(comm, nranks, 0);
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = 2;
    d.shape[0] = d.shape[1] = order;
    d.placements[0] = dt_shard_balanced(1); /* A[i][j], column-major: strides {1, n} */
    ls[0] = order; ls[1] = block_order;
    st[0] = 1; st[1] = order;
    d.local_shape = ls;
    d.local_strides = st;
    d.local_alloc = a;
    d.local_alloc_bytes = (int64_t)((size_t)colblock_size * sizeof(double));
    CHECK(dt_tensor_from_local(m, &d, a, DT_BORROW, &ta));
    same_block(ta, "A", order, block_order, 0, colstart);
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = 2;
    d.shape[0] = d.shape[1] = order;
    d.placements[0] = dt_shard_balanced(0); /* C = B^T, B's storage read row-major */
    ls[0] = block_order; ls[1] = order;
    d.local_shape = ls;
    CHECK(dt_tensor_from_local(m, &d, b, DT_BORROW, &tc));
    same_block(tc, "B^T", block_order, order, colstart, 0);
    to[0] = dt_shard_balanced(0);

    for (iter = 0; iter <= iterations; iter++) {
        if (iter == 1) { /* start timer after a warmup iteration */
            MPI_Barrier(MPI_COMM_WORLD);
            t = MPI_Wtime();
        }
        CHECK(dt_tensor_redistribute_reduce(ta, to, DT_SUM, tc)); /* B += A^T */
        for (i = 0; i < colblock_size; i++) a[i] += 1.0;         /* A += 1 */
    }
    t = MPI_Wtime() - t;
    MPI_Reduce(&t, &trans_time, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    {
        double addit = ((double)(iterations + 1) * (double)iterations) / 2.0;
        for (j = 0; j < block_order; j++)
            for (i = 0; i < order; i++)
                abserr += fabs(b[i + order * j] - ((double)(order * i + j + colstart) * (iterations + 1) + addit));
    }
    MPI_Reduce(&abserr, &abserr_tot, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (abserr_tot < 1.e-8) {
            double bytes = 2.0 * sizeof(double) * (double)order * (double)order, avgtime = trans_time / iterations;
            printf("Solution validates\n");
            printf("Rate (MB/s): %lf Avg time (s): %lf\n", 1.0E-06 * bytes / avgtime, avgtime);
        } else {
            printf("ERROR: Aggregate squared error %lf exceeds threshold %e\n", abserr_tot, 1.e-8);
            error = 1;
        }
    }
    dt_tensor_destroy(ta);
    dt_tensor_destroy(tc);
    dt_mesh_destroy(m);
    dt_comm_destroy(comm);
    free(ra);
    free(rb);
    bail_out(error);
    MPI_Finalize();
    return 0;
}
#endif /* PRK_TRANSPOSE */

#ifdef PRK_STENCIL
#ifndef RADIUS
#define RADIUS 2
#endif

/* PRK's factor: fac1 the largest divisor of r not above sqrt(r+1) */
static void factor(int r, int *fac1, int *fac2) {
    for (*fac1 = (int)(sqrt(r + 1.0)); *fac1 > 0; (*fac1)--)
        if (!(r % (*fac1))) { *fac2 = r / (*fac1); break; }
}

typedef struct star {
    double w[2 * RADIUS + 1][2 * RADIUS + 1]; /* WEIGHT(ii,jj) = w[ii+RADIUS][jj+RADIUS] */
    int64_t n;
} star;

/* OUT(i,j) += PRK's star terms, in PRK's order (LOOPGEN=0), on the block's points at least RADIUS from the
   global edge. Tensor dim 0 is PRK's j, dim 1 its i (the fast index). */
static void star_fn(const dt_stencil_block *bk, void *user) {
    const star *s = (const star *)user;
    const int64_t sj = bk->in_stride[0], si = bk->in_stride[1], oj = bk->out_stride[0];
    int64_t j0 = bk->lo[0], j1 = bk->lo[0] + bk->ext[0], i0 = bk->lo[1], i1 = bk->lo[1] + bk->ext[1], lj, li;
    /* clip to the active points: global index in [RADIUS, n-RADIUS-1] */
    if (bk->offset[0] + j0 < RADIUS) j0 = RADIUS - bk->offset[0];
    if (bk->offset[0] + j1 > s->n - RADIUS) j1 = s->n - RADIUS - bk->offset[0];
    if (bk->offset[1] + i0 < RADIUS) i0 = RADIUS - bk->offset[1];
    if (bk->offset[1] + i1 > s->n - RADIUS) i1 = s->n - RADIUS - bk->offset[1];
    for (lj = j0; lj < j1; lj++) {
        const double *in = (const double *)bk->in + (lj + bk->width[0]) * sj + bk->width[1] * si;
        double *out = (double *)bk->out + lj * oj;
        for (li = i0; li < i1; li++) {
            const double *c = in + li * si;
            double o = out[li];
            int k;
            for (k = -RADIUS; k <= RADIUS; k++) o += s->w[RADIUS][k + RADIUS] * c[k * sj];
            for (k = -RADIUS; k < 0; k++) o += s->w[k + RADIUS][RADIUS] * c[k * si];
            for (k = 1; k <= RADIUS; k++) o += s->w[k + RADIUS][RADIUS] * c[k * si];
            out[li] = o;
        }
    }
}

int main(int argc, char **argv) {
    int n = 0, iterations = 0, error = 0, npx = 1, npy = 1, idx, idy, width, height, leftover, iter, i, j;
    int istart, iend, jstart, jend;
    long nsquare;
    double *in, *out, t = 0.0, stencil_time = 0.0, local_norm = 0.0, norm = 0.0, f_active_points;
    void *rin, *rout;
    int64_t ls[2], ghost[2] = {RADIUS, RADIUS}, gw;
    star s;
    dt_comm *comm = NULL;
    dt_mesh *m;
    dt_tensor_desc d;
    dt_halo_desc hd;
    dt_tensor *tin = NULL, *tout = NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (rank == 0) {
        header("stencil execution on 2D grid");
        if (argc != 3) {
            printf("Usage: %s <# iterations> <array dimension> \n", argv[0]);
            error = 1;
        } else {
            iterations = atoi(argv[1]);
            n = atoi(argv[2]);
            nsquare = (long)n * (long)n;
            if (iterations < 1) { printf("ERROR: iterations must be >= 1 : %d \n", iterations); error = 1; }
            else if (nsquare < nranks) {
                printf("ERROR: grid size %ld must be at least # ranks: %d\n", nsquare, nranks);
                error = 1;
            } else if (2 * RADIUS + 1 > n) {
                printf("ERROR: Stencil radius %d exceeds grid size %d\n", RADIUS, n);
                error = 1;
            }
        }
    }
    bail_out(error);
    factor(nranks, &npx, &npy);
    idx = rank % npx;
    idy = rank / npx;
    if (rank == 0) {
        printf("Number of ranks        = %d\n", nranks);
        printf("Grid size              = %d\n", n);
        printf("Radius of stencil      = %d\n", RADIUS);
        printf("Tiles in x/y-direction = %d/%d\n", npx, npy);
        printf("Type of stencil        = star\n");
        printf("Data type              = double precision\n");
        printf("dt_stencil_apply on a ghosted wrap of IN (halo width %d, faces only), OUT its *out; then IN += 1\n",
               RADIUS);
        printf("Number of iterations   = %d\n", iterations);
    }
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(&iterations, 1, MPI_INT, 0, MPI_COMM_WORLD);
    /* PRK's split */
    width = n / npx;
    leftover = n % npx;
    if (idx < leftover) { istart = (width + 1) * idx; iend = istart + width; }
    else { istart = (width + 1) * leftover + width * (idx - leftover); iend = istart + width - 1; }
    width = iend - istart + 1;
    height = n / npy;
    leftover = n % npy;
    if (idy < leftover) { jstart = (height + 1) * idy; jend = jstart + height; }
    else { jstart = (height + 1) * leftover + height * (idy - leftover); jend = jstart + height - 1; }
    height = jend - jstart + 1;
    if (width == 0 || height == 0) { printf("ERROR: rank %d has no work to do\n", rank); error = 1; }
    bail_out(error);
    if (width < RADIUS || height < RADIUS) {
        printf("ERROR: rank %d has work tile smaller then stencil radius\n", rank);
        error = 1;
    }
    bail_out(error);
    gw = width + 2 * RADIUS;
    in = alloc64((size_t)(gw * (height + 2 * RADIUS)) * sizeof(double), &rin);
    out = alloc64((size_t)width * (size_t)height * sizeof(double), &rout);
    memset(&s, 0, sizeof s);
    s.n = n;
    for (i = 1; i <= RADIUS; i++) { /* WEIGHT(0, ii) = WEIGHT(ii, 0) = 1/(2 ii R), negative at -ii */
        s.w[RADIUS][RADIUS + i] = s.w[RADIUS + i][RADIUS] = (1.0 / (2.0 * i * RADIUS));
        s.w[RADIUS][RADIUS - i] = s.w[RADIUS - i][RADIUS] = -(1.0 / (2.0 * i * RADIUS));
    }
    f_active_points = (double)(n - 2 * RADIUS) * (double)(n - 2 * RADIUS);
    for (j = jstart; j <= jend; j++)
        for (i = istart; i <= iend; i++) {
            in[(i - istart + RADIUS) + (j - jstart + RADIUS) * gw] = 1.0 * i + 1.0 * j;
            out[(i - istart) + (j - jstart) * width] = 0.0;
        }

    CHECK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    m = grid(comm, npy, npx);
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = 2;
    d.shape[0] = d.shape[1] = n;
    d.placements[0] = dt_shard_balanced(0); /* PRK's y: j, the slow index */
    d.placements[1] = dt_shard_balanced(1); /* PRK's x: i */
    ls[0] = height; ls[1] = width;
    d.local_shape = ls;
    d.local_ghost = ghost;
    d.local_alloc = in;
    d.local_alloc_bytes = (int64_t)((size_t)(gw * (height + 2 * RADIUS)) * sizeof(double));
    CHECK(dt_tensor_from_local(m, &d, in, DT_BORROW, &tin));
    same_block(tin, "IN", height, width, jstart, istart);
    d.local_ghost = NULL;
    d.local_alloc = NULL;
    d.local_alloc_bytes = 0;
    CHECK(dt_tensor_from_local(m, &d, out, DT_BORROW, &tout));
    memset(&hd, 0, sizeof hd);
    hd.width[0] = hd.width[1] = RADIUS;
    hd.boundary[0] = hd.boundary[1] = DT_BOUNDARY_NONE;
    CHECK(dt_tensor_set_halo(tin, &hd));

    for (iter = 0; iter <= iterations; iter++) {
        if (iter == 1) { /* start timer after a warmup iteration */
            MPI_Barrier(MPI_COMM_WORLD);
            t = MPI_Wtime();
        }
        CHECK(dt_stencil_apply(tin, star_fn, &s, &tout)); /* exchange + OUT += star(IN) */
        for (j = 0; j < height; j++) {                     /* IN += 1 on the interior */
            double *row = in + (j + RADIUS) * gw + RADIUS;
            for (i = 0; i < width; i++) row[i] += 1.0;
        }
    }
    t = MPI_Wtime() - t;
    MPI_Reduce(&t, &stencil_time, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    for (j = jstart > RADIUS ? jstart : RADIUS; j <= (n - RADIUS - 1 < jend ? n - RADIUS - 1 : jend); j++)
        for (i = istart > RADIUS ? istart : RADIUS; i <= (n - RADIUS - 1 < iend ? n - RADIUS - 1 : iend); i++)
            local_norm += fabs(out[(i - istart) + (j - jstart) * width]);
    MPI_Reduce(&local_norm, &norm, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double reference_norm = (double)(iterations + 1) * (1.0 + 1.0);
        norm /= f_active_points;
        if (fabs(norm - reference_norm) > 1.e-8) {
            printf("ERROR: L1 norm = %lf, Reference L1 norm = %lf\n", norm, reference_norm);
            error = 1;
        } else {
            double flops = (double)(2 * (4 * RADIUS + 1) + 1) * f_active_points, avgtime = stencil_time / iterations;
            printf("Solution validates\n");
            printf("Rate (MFlops/s): %lf  Avg time (s): %lf\n", 1.0E-06 * flops / avgtime, avgtime);
        }
    }
    dt_tensor_destroy(tin);
    dt_tensor_destroy(tout);
    dt_mesh_destroy(m);
    dt_comm_destroy(comm);
    free(rin);
    free(rout);
    bail_out(error);
    MPI_Finalize();
    return 0;
}
#endif /* PRK_STENCIL */

#ifdef PRK_DGEMM
int main(int argc, char **argv) {
    int order = 0, iterations = 0, inner_block_flag = 0, error = 0, nprow, npcol, myrow, mycol, iter;
    long nb = 0, lda, mynrows, myncols, myfrow, myfcol, i, j;
    double *a, *b, *c, t = 0.0, dgemm_time = 0.0, checksum_local = 0.0, checksum = 0.0;
    void *ra, *rb, *rc;
    int64_t ls[2], st[2];
    dt_comm *comm = NULL;
    dt_mesh *m;
    dt_tensor_desc d;
    dt_tensor *ta = NULL, *tb = NULL, *tt = NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (rank == 0) {
        header("Dense matrix-matrix multiplication: C = A x B");
        if (argc != 5) {
            printf("Usage: %s <# iterations> <matrix order> <outer block size> ", argv[0]);
            printf("<local block flag (non-zero=yes, zero=no)>\n");
            error = 1;
        } else {
            iterations = atoi(argv[1]);
            order = atoi(argv[2]);
            nb = atol(argv[3]);
            inner_block_flag = atoi(argv[4]);
            if (iterations < 1) { printf("ERROR: iterations must be positive: %d \n", iterations); error = 1; }
            else if (order < nranks) { printf("ERROR: matrix order too small: %d\n", order); error = 1; }
        }
    }
    bail_out(error);
    nprow = (int)(sqrt((double)nranks + 0.00001));
    while (nranks % nprow) nprow--;
    npcol = nranks / nprow;
    if (rank == 0) {
        printf("Number of ranks      = %d\n", nranks);
        printf("Rank grid            = %d rows x %d columns\n", nprow, npcol);
        printf("Matrix order         = %d\n", order);
        printf("Outer block size     = %ld (sets lda as PRK's does; dt_matmul picks its own panels)\n", nb);
        printf("Number of iterations = %d\n", iterations);
        printf("Local block flag     = %d (read, not used: BLIS multiplies)\n", inner_block_flag);
        printf("T = dt_matmul(A, B) on the wrapped blocks, then C += T\n");
    }
    MPI_Bcast(&order, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(&iterations, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(&nb, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    myrow = rank / npcol;
    mycol = rank % npcol;
    mynrows = order / nprow + (myrow < order % nprow);
    myncols = order / npcol + (mycol < order % npcol);
    myfrow = (long)myrow * (order / nprow) + (myrow < order % nprow ? myrow : order % nprow);
    myfcol = (long)mycol * (order / npcol) + (mycol < order % npcol ? mycol : order % npcol);
    if (nb < 1 || mynrows % nb == 0 || mynrows < nb) lda = mynrows; /* PRK: lda a multiple of nb */
    else lda = (mynrows / nb + 1) * nb;
    if (lda < 1) lda = 1;
    a = alloc64((size_t)(lda * myncols) * sizeof(double), &ra);
    b = alloc64((size_t)(lda * myncols) * sizeof(double), &rb);
    c = alloc64((size_t)(lda * myncols) * sizeof(double), &rc);
    for (j = 0; j < myncols; j++)
        for (i = 0; i < mynrows; i++) {
            a[i + j * lda] = (double)(myfcol + j);
            b[i + j * lda] = (double)(myfcol + j);
            c[i + j * lda] = 0.0;
        }

    CHECK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    m = grid(comm, nprow, npcol);
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = 2;
    d.shape[0] = d.shape[1] = order;
    d.placements[0] = dt_shard_balanced(0);
    d.placements[1] = dt_shard_balanced(1);
    ls[0] = mynrows; ls[1] = myncols;
    st[0] = 1; st[1] = lda;
    d.local_shape = ls;
    d.local_strides = st;
    d.local_alloc_bytes = (int64_t)((size_t)(lda * myncols) * sizeof(double));
    d.local_alloc = a;
    CHECK(dt_tensor_from_local(m, &d, a, DT_BORROW, &ta));
    d.local_alloc = b;
    CHECK(dt_tensor_from_local(m, &d, b, DT_BORROW, &tb));
    same_block(ta, "A", mynrows, myncols, myfrow, myfcol);

    for (iter = 0; iter <= iterations; iter++) {
        const double *tp;
        if (iter == 1) { /* start timer after a warmup iteration */
            MPI_Barrier(MPI_COMM_WORLD);
            t = MPI_Wtime();
        }
        CHECK(dt_matmul(ta, tb, &tt)); /* T = A B, row-major [mynrows, myncols] */
        tp = (const double *)dt_tensor_data(tt);
        for (i = 0; i < mynrows; i++) /* C += T */
            for (j = 0; j < myncols; j++) c[i + j * lda] += tp[i * myncols + j];
    }
    t = MPI_Wtime() - t;
    MPI_Reduce(&t, &dgemm_time, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    same_block(tt, "A B", mynrows, myncols, myfrow, myfcol);

    for (j = 0; j < myncols; j++)
        for (i = 0; i < mynrows; i++) checksum_local += c[i + j * lda];
    MPI_Reduce(&checksum_local, &checksum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double forder = (double)order, ref_checksum = 0.25 * forder * forder * forder * (forder - 1.0) * (forder - 1.0);
        ref_checksum *= (iterations + 1);
        if (fabs((checksum - ref_checksum) / ref_checksum) > 0.00001) {
            printf("ERROR: Checksum = %lf, Reference checksum = %lf\n", checksum, ref_checksum);
            error = 1;
        } else {
            double nflops = 2.0 * forder * forder * forder, avgtime = dgemm_time / iterations;
            printf("Solution validates\n");
            printf("Rate (MFlops/s): %lf Avg time (s): %lf\n", 1.0E-06 * nflops / avgtime, avgtime);
        }
    }
    dt_tensor_destroy(ta);
    dt_tensor_destroy(tb);
    dt_tensor_destroy(tt);
    dt_mesh_destroy(m);
    dt_comm_destroy(comm);
    free(ra);
    free(rb);
    free(rc);
    bail_out(error);
    MPI_Finalize();
    return 0;
}
#endif /* PRK_DGEMM */
