/* bench/pdgemr2d.c -- dt_tensor_redistribute against ScaLAPACK's pdgemr2d
   (the general block-cyclic to block-cyclic copy) between the same three
   layouts of one F64 matrix, on the same ranks and the same local buffers.

       make build/openmpi/bench_pdgemr2d MPI=openmpi
       mpiexec -n 4 ./build/openmpi/bench_pdgemr2d [--sizes "512 1024 2048 4096"]
               [--reps N] [--quick] [--csv FILE]

   An F64 M x N matrix, M = N = size (default 512 1024 2048 4096; --quick: 512
   1024, 5 reps), A[i,j] = i*N + j (exact in F64), on p ranks as ONE dt 2-D
   mesh pr x pc (the squarest factorisation of p with pr <= pc: 1x1, 1x2,
   1x3, 2x2, 2x3, 2x4 at p = 1, 2, 3, 4, 6, 8), so dt redistributes within
   one mesh. The layouts and their BLACS equivalents (one block per process:
   the block-cyclic layout is exactly dt's torch.chunk blocks):

     rows  [Shard(0), Shard(0)]  row blocks in mesh-rank order = p x 1 grid,
                                 blocks ceil(M/p) x N
     cols  [Shard(1), Shard(1)]  column blocks = 1 x p grid, M x ceil(N/p)
     2d    [Shard(0), Shard(1)]  pr x pc grid, blocks ceil(M/pr) x ceil(N/pc)

   and three block-cyclic layouts (dt_shard_cyclic: several blocks per
   process; their BLACS grid and descriptor come from
   dt_tensor_scalapack_desc, checked against Cblacs_gridinfo and numroc):

     cyc64   [cyclic(0, 64), cyclic(1, 64)]   64 x 64 blocks, pc x pr grid "C"
     cyc32   [cyclic(0, 32), cyclic(1, 32)]   32 x 32 blocks, the same grid
     cyc64T  [cyclic(1, 64), cyclic(0, 64)]   64 x 64 blocks on the transposed
                                             grid, pr x pc "R" (rows of the
                                             matrix over the mesh's 2nd dim)

   Cases: rows->cols, cols->rows, rows->2d, 2d->rows, cols->2d, 2d->cols
   (family pdgemr2d), and (family pdgemr2d-cyclic): cyc64->cyc32,
   cyc32->cyc64 (block size), cyc64->cyc64T, cyc64T->cyc64 (grid shape
   PxQ <-> QxP: 1x2 <-> 2x1 at 2 ranks), 2d->cyc64, cyc64->2d (chunk <->
   block-cyclic).
   A dim sharded twice is split by mesh dim 0, then each part by mesh dim 1
   (nested torch.chunk). That equals one split into p blocks of ceil(M/p)
   when pr = 1 or p divides M; when pr > 1 and p does not divide the size
   (p = 6 with 1024), the size is rounded down to a multiple of p (1020) and
   the table says so. The bench checks on every rank that numroc and the
   block offsets agree with dt_tensor_local_shape / dt_tensor_local_offset.

   Orientation: dt_tensor is row-major, ScaLAPACK column-major. As
   bench/matmul.c does, ScaLAPACK works on the transpose: a row-major
   lm x ln block of A is the column-major ln x lm block of A^T (N x M, LLD =
   ln), so pdgemr2d copies A^T between the transposed grids (rows: 1 x p,
   cols: p x 1, 2d: pc x pr in column-major order, so every process keeps
   its BLACS number = its mesh rank = its MPI_COMM_WORLD rank and sits at
   the grid position of its dt block). Both sides read the same input
   buffers (the dt input tensors' data); pdgemr2d writes into a plain buffer
   of the target block's size, dt into its output tensor, which is reused
   across repetitions (the same *out is passed back). No copies are timed.

   Method: per (case, size) one untimed warm-up of each side, then the
   repetitions (default 11 up to 1024, 7 at 2048, 5 above; --reps N, at
   least 5) interleaved ours, peer, ours, peer, ...; each timing is preceded
   by MPI_Barrier and is the max over ranks of the MPI_Wtime difference; the
   value is the median. Both outputs (set to NaN before the warm-up) are
   checked against the closed form at every element after the warm-up and
   after the last repetition; any difference makes the exit status 1.
   speedup = pdgemr2d / ours (the target: >= 2).

   --csv FILE appends the raw rows of the `make bench` harness (bench.h):
       pdgemr2d[-cyclic],<case>,<M*N*8 bytes>,ours|peer,<median>,ms */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "bench/bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* BLACS / ScaLAPACK (no C header on Debian) */
#include "bench/scalapack.h"
void pdgemr2d_(const int *m, const int *n, const double *a, const int *ia, const int *ja, const int *desca,
               double *b, const int *ib, const int *jb, const int *descb, const int *ictxt);

enum { L_ROWS, L_COLS, L_2D, L_CYC64, L_CYC32, L_CYC64T, NLAYOUTS };
static const char *layout_name[NLAYOUTS] = { "rows", "cols", "2d", "cyc64", "cyc32", "cyc64T" };
#define NCASES 12
#define NCASES_CHUNK 6 /* the first six: family pdgemr2d; the rest pdgemr2d-cyclic */
static const int cases[NCASES][2] = { { L_ROWS, L_COLS },   { L_COLS, L_ROWS },   { L_ROWS, L_2D },
                                      { L_2D, L_ROWS },     { L_COLS, L_2D },     { L_2D, L_COLS },
                                      { L_CYC64, L_CYC32 }, { L_CYC32, L_CYC64 }, { L_CYC64, L_CYC64T },
                                      { L_CYC64T, L_CYC64 }, { L_2D, L_CYC64 },   { L_CYC64, L_2D } };

static int pr, pc;            /* the mesh */
static int failures;

static int cdiv(int a, int b) { return (a + b - 1) / b; }
static int imax(int a, int b) { return a > b ? a : b; }

static double aval(int64_t i, int64_t j, int64_t n) { return (double)(i * n + j); }

/* ri, ci: the global row / column of each local row / column */
static void fill(double *p, const int64_t *sh, const int64_t *ri, const int64_t *ci, int64_t n) {
    for (int64_t i = 0; i < sh[0]; i++)
        for (int64_t j = 0; j < sh[1]; j++) p[i * sh[1] + j] = aval(ri[i], ci[j], n);
}

/* elements of the row-major local part that differ from the closed form */
static long long wrong(const double *p, const int64_t *sh, const int64_t *ri, const int64_t *ci, int64_t n) {
    long long bad = 0;
    for (int64_t i = 0; i < sh[0]; i++)
        for (int64_t j = 0; j < sh[1]; j++) bad += p[i * sh[1] + j] != aval(ri[i], ci[j], n);
    return bad;
}

static void nan_fill(double *p, size_t n) {
    for (size_t i = 0; i < n; i++) p[i] = NAN;
}

/* one layout of the matrix: the dt tensor (which is also the input of
   both sides) and the ScaLAPACK view of its transpose */
typedef struct layout {
    dt_placement pl[2];
    dt_tensor *t;
    int64_t sh[2], off[2];    /* dt's local box (the chunk layouts) */
    int64_t *ri, *ci;         /* the global index of each local row / column */
    int ctx, desc[9];
    double *peer_out;         /* pdgemr2d's output when this is the target */
} layout;

/* a block-cyclic layout: dt_tensor_scalapack_desc gives its grid and
   descriptor, which BLACS (grid position) and numroc (local extents) confirm */
static void make_cyclic(layout *L, int which, dt_mesh *mesh, dt_tensor_desc *td) {
    int64_t b = which == L_CYC32 ? 32 : 64;
    int gr, gc, r, c, zero = 0;
    dt_scalapack_grid g;
    L->pl[0] = which == L_CYC64T ? dt_shard_cyclic(1, b) : dt_shard_cyclic(0, b);
    L->pl[1] = which == L_CYC64T ? dt_shard_cyclic(0, b) : dt_shard_cyclic(1, b);
    memcpy(td->placements, L->pl, sizeof L->pl);
    CHECK(dt_tensor_empty(mesh, td, &L->t));
    dt_tensor_local_shape(L->t, L->sh);
    L->off[0] = L->off[1] = 0;
    L->ri = (int64_t *)xmalloc(sizeof(int64_t) * (size_t)(L->sh[0] + 1));
    L->ci = (int64_t *)xmalloc(sizeof(int64_t) * (size_t)(L->sh[1] + 1));
    CHECK(dt_tensor_local_indices(L->t, 0, L->ri));
    CHECK(dt_tensor_local_indices(L->t, 1, L->ci));
    fill((double *)dt_tensor_data(L->t), L->sh, L->ri, L->ci, td->shape[1]);
    L->peer_out = (double *)xmalloc((size_t)(L->sh[0] * L->sh[1] + 1) * sizeof(double));
    CHECK(dt_tensor_scalapack_desc(L->t, 0, NULL, &g));
    Cblacs_get(-1, 0, &L->ctx);
    Cblacs_gridinit(&L->ctx, g.order, g.nprow, g.npcol);
    CHECK(dt_tensor_scalapack_desc(L->t, L->ctx, L->desc, NULL));
    Cblacs_gridinfo(L->ctx, &gr, &gc, &r, &c);
    int lr = numroc_(&L->desc[2], &L->desc[4], &r, &zero, &gr), lc = numroc_(&L->desc[3], &L->desc[5], &c, &zero, &gc);
    if (gr != g.nprow || gc != g.npcol || r != g.myrow || c != g.mycol || lr != L->sh[1] || lc != L->sh[0]) {
        fprintf(stderr, "[%d] %s: dt_tensor_scalapack_desc says grid %dx%d at (%d,%d), local %lldx%lld; BLACS "
                        "and numroc say %dx%d at (%d,%d), local %dx%d\n", rank, layout_name[which], g.nprow,
                g.npcol, g.myrow, g.mycol, (long long)L->sh[0], (long long)L->sh[1], gr, gc, r, c, lc, lr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void make_layout(layout *L, int which, dt_mesh *mesh, int64_t M, int64_t N) {
    int p = pr * pc, coord[2] = { 0, 0 }, me = dt_mesh_rank(mesh);
    dt_mesh_coordinate(mesh, coord);
    dt_tensor_desc td = {0};
    td.dtype = DT_F64;  td.ndim = 2;  td.shape[0] = M;  td.shape[1] = N;
    if (which >= L_CYC64) {
        make_cyclic(L, which, mesh, &td);
        return;
    }
    /* the grid of A^T (N x M): nprow x npcol, my position, block sizes MB (of N) x NB (of M) */
    int nprow, npcol, myr, myc, mb, nb;
    const char *order;
    switch (which) {
    case L_ROWS:
        L->pl[0] = dt_shard(0);  L->pl[1] = dt_shard(0);
        nprow = 1;  npcol = p;  myr = 0;  myc = me;  order = "R";
        mb = (int)N;  nb = cdiv((int)M, p);
        break;
    case L_COLS:
        L->pl[0] = dt_shard(1);  L->pl[1] = dt_shard(1);
        nprow = p;  npcol = 1;  myr = me;  myc = 0;  order = "C";
        mb = cdiv((int)N, p);  nb = (int)M;
        break;
    default:
        L->pl[0] = dt_shard(0);  L->pl[1] = dt_shard(1);
        nprow = pc;  npcol = pr;  myr = coord[1];  myc = coord[0];  order = "C";
        mb = cdiv((int)N, pc);  nb = cdiv((int)M, pr);
        break;
    }
    memcpy(td.placements, L->pl, sizeof L->pl);
    CHECK(dt_tensor_empty(mesh, &td, &L->t));
    dt_tensor_local_shape(L->t, L->sh);
    dt_tensor_local_offset(L->t, L->off);
    L->ri = (int64_t *)xmalloc(sizeof(int64_t) * (size_t)(L->sh[0] + 1));
    L->ci = (int64_t *)xmalloc(sizeof(int64_t) * (size_t)(L->sh[1] + 1));
    for (int64_t i = 0; i < L->sh[0]; i++) L->ri[i] = L->off[0] + i;
    for (int64_t j = 0; j < L->sh[1]; j++) L->ci[j] = L->off[1] + j;
    fill((double *)dt_tensor_data(L->t), L->sh, L->ri, L->ci, N);
    L->peer_out = (double *)xmalloc((size_t)(L->sh[0] * L->sh[1]) * sizeof(double));

    int gr, gc, r, c, zero = 0, one_info = 0;
    Cblacs_get(-1, 0, &L->ctx);
    Cblacs_gridinit(&L->ctx, order, nprow, npcol);
    Cblacs_gridinfo(L->ctx, &gr, &gc, &r, &c);
    if (gr != nprow || gc != npcol || r != myr || c != myc) {
        fprintf(stderr, "[%d] %s: BLACS grid %dx%d places me at (%d,%d), expected %dx%d (%d,%d)\n", rank,
                layout_name[which], gr, gc, r, c, nprow, npcol, myr, myc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* numroc and the block offsets against dt's local box (transposed) */
    int iM = (int)M, iN = (int)N;
    int lr = numroc_(&iN, &mb, &myr, &zero, &nprow), lc = numroc_(&iM, &nb, &myc, &zero, &npcol);
    int ok = lr == L->sh[1] && lc == L->sh[0] && (lr == 0 || L->off[1] == (int64_t)myr * mb) &&
             (lc == 0 || L->off[0] == (int64_t)myc * nb);
    if (!ok) {
        fprintf(stderr, "[%d] %s: ScaLAPACK block %dx%d at (%d,%d) of A^T differs from dt's local box "
                        "%lldx%lld at (%lld,%lld)\n", rank, layout_name[which], lr, lc, myr * mb, myc * nb,
                (long long)L->sh[1], (long long)L->sh[0], (long long)L->off[1], (long long)L->off[0]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int lld = imax(1, lr);
    descinit_(L->desc, &iN, &iM, &mb, &nb, &zero, &zero, &L->ctx, &lld, &one_info);
    if (one_info != 0) {
        fprintf(stderr, "[%d] descinit info %d\n", rank, one_info);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void free_layout(layout *L) {
    dt_tensor_destroy(L->t);
    free(L->peer_out);
    free(L->ri);
    free(L->ci);
    Cblacs_gridexit(L->ctx);
}

/* ours and the peer's outputs against the closed form; 1 if both right */
static int verify(const layout *dst, const dt_tensor *out, int64_t N, long long *bad_ours, long long *bad_peer) {
    long long b[2] = { wrong((const double *)dt_tensor_data(out), dst->sh, dst->ri, dst->ci, N),
                       wrong(dst->peer_out, dst->sh, dst->ri, dst->ci, N) }, all[2];
    MPI_Allreduce(b, all, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    *bad_ours += all[0];
    *bad_peer += all[1];
    return all[0] == 0 && all[1] == 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *sizes = "512 1024 2048 4096", *csv = NULL; /* the cyclic target holds from 512^2 up */
    int reps_arg = 0, quick = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) sizes = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps_arg = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else { reps_arg = -1; break; }
    }
    if (quick) { sizes = "512 1024"; if (!reps_arg) reps_arg = 5; }
    if (reps_arg < 0 || (reps_arg > 0 && reps_arg < 5)) {
        if (rank == 0) fprintf(stderr, "usage: %s [--sizes \"512 1024 2048 4096\"] [--reps N (>= 5)] [--quick] "
                                       "[--csv FILE]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    FILE *fc;
    if (!bench_csv_open(csv, &fc)) { MPI_Finalize(); return 2; }

    int bm, bn;
    Cblacs_pinfo(&bm, &bn);
    if (bm != rank || bn != nranks) {
        fprintf(stderr, "[%d] BLACS process %d of %d, MPI rank %d of %d\n", rank, bm, bn, rank, nranks);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int r = 1; r * r <= nranks; r++) if (nranks % r == 0) pr = r;
    pc = nranks / pr;

    dt_comm *comm;
    dt_mesh *mesh;
    CHECK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    dt_mesh_desc md = {0};
    md.ndim = 2;  md.shape[0] = pr;  md.shape[1] = pc;  md.names[0] = "r";  md.names[1] = "c";
    CHECK(dt_mesh_create(comm, &md, &mesh));
    if (dt_mesh_rank(mesh) != rank) {
        fprintf(stderr, "[%d] mesh rank %d\n", rank, dt_mesh_rank(mesh));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    if (rank == 0) {
        char ver[MPI_MAX_LIBRARY_VERSION_STRING];
        mpi_library(ver);
        printf("# dtensor.h %d.%d.%d: dt_tensor_redistribute vs ScaLAPACK pdgemr2d, f64 M x N, %d rank(s), "
               "dt mesh %dx%d\n", DTENSOR_VERSION_MAJOR, DTENSOR_VERSION_MINOR, DTENSOR_VERSION_PATCH, nranks,
               pr, pc);
        printf("# MPI: %s\n", ver);
        printf("# rows = [S(0),S(0)] (%dx1 BLACS grid), cols = [S(1),S(1)] (1x%d), 2d = [S(0),S(1)] (%dx%d)\n",
               nranks, nranks, pr, pc);
        printf("# cycB = [cyclic(0,B),cyclic(1,B)] (%dx%d, B x B blocks), cyc64T = [cyclic(1,64),cyclic(0,64)] "
               "(%dx%d: the grid transposed)\n", pr, pc, pc, pr);
        printf("# times: median over reps of the max over ranks (interleaved, barrier before each, 1 warm-up);\n"
               "# speedup = pdgemr2d / ours; check: both outputs == closed form at every element\n");
        printf("%-14s %11s %9s %4s %10s %12s %8s  %s\n", "case", "M x N", "MiB", "reps", "ours ms",
               "pdgemr2d ms", "speedup", "check");
        fflush(stdout);
    }

    const int one = 1;
    const char *p = sizes;
    char *end;
    for (long sz = strtol(p, &end, 10); end != p; p = end, sz = strtol(p, &end, 10)) {
        if (sz < 1 || sz > 46340) {
            if (rank == 0) fprintf(stderr, "size %ld out of range (1 .. 46340)\n", sz);
            failures++;
            continue;
        }
        int64_t M = sz, N = sz;
        int adjusted = 0;
        if (pr > 1 && sz % nranks) {  /* nested split = flat split only for multiples of p */
            M = N = sz - sz % nranks;
            adjusted = 1;
            if (M < 1) continue;
        }
        int reps = reps_arg ? reps_arg : sz <= 1024 ? 11 : sz <= 2048 ? 7 : 5;
        long long bytes = (long long)(M * N * 8);
        if (rank == 0 && adjusted)
            printf("# size %ld is not a multiple of %d ranks on a %dx%d mesh: M = N = %lld\n", sz, nranks, pr, pc,
                   (long long)M);

        layout L[NLAYOUTS];
        for (int l = 0; l < NLAYOUTS; l++) make_layout(&L[l], l, mesh, M, N);
        double *tours = (double *)xmalloc(sizeof(double) * (size_t)reps);
        double *tpeer = (double *)xmalloc(sizeof(double) * (size_t)reps);
        double *tmax = (double *)xmalloc(sizeof(double) * (size_t)reps);
        int iM = (int)M, iN = (int)N;

        for (int c = 0; c < NCASES; c++) {
            layout *src = &L[cases[c][0]], *dst = &L[cases[c][1]];
            char name[32];
            snprintf(name, sizeof name, "%s->%s", layout_name[cases[c][0]], layout_name[cases[c][1]]);
            dt_tensor *out = NULL;
            long long bad_ours = 0, bad_peer = 0;
            nan_fill(dst->peer_out, (size_t)(dst->sh[0] * dst->sh[1]));
            for (int rep = -1; rep < reps; rep++) {  /* rep -1: the warm-up */
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                CHECK(dt_tensor_redistribute(src->t, dst->pl, &out));
                double t1 = MPI_Wtime();
                if (rep >= 0) tours[rep] = t1 - t0;
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
                pdgemr2d_(&iN, &iM, (const double *)dt_tensor_data(src->t), &one, &one, src->desc,
                          dst->peer_out, &one, &one, dst->desc, &L[L_2D].ctx);
                t1 = MPI_Wtime();
                if (rep >= 0) tpeer[rep] = t1 - t0;
                if (rep < 0) verify(dst, out, N, &bad_ours, &bad_peer);
            }
            int ok = verify(dst, out, N, &bad_ours, &bad_peer);
            /* the inputs are untouched */
            long long bin = wrong((const double *)dt_tensor_data(src->t), src->sh, src->ri, src->ci, N), ball;
            MPI_Allreduce(&bin, &ball, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            ok = ok && bad_ours == 0 && bad_peer == 0 && ball == 0;
            MPI_Allreduce(tours, tmax, reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            double ours = median(tmax, reps) * 1e3;
            MPI_Allreduce(tpeer, tmax, reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            double peer = median(tmax, reps) * 1e3;
            if (!ok) failures++;
            if (rank == 0) {
                char shape[32];
                snprintf(shape, sizeof shape, "%lldx%lld", (long long)M, (long long)N);
                printf("%-14s %11s %9.2f %4d %10.3f %12.3f %8.2f  ", name, shape, (double)bytes / 1048576.0, reps,
                       ours, peer, peer / ours);
                if (ok) printf("OK\n");
                else printf("WRONG (elements wrong: ours %lld, pdgemr2d %lld, input %lld)\n", bad_ours, bad_peer,
                            ball);
                fflush(stdout);
                if (ok) {
                    const char *fam = c < NCASES_CHUNK ? "pdgemr2d" : "pdgemr2d-cyclic";
                    bench_csv_row(fc, fam, name, bytes, "ours", ours);
                    bench_csv_row(fc, fam, name, bytes, "peer", peer);
                }
            }
            dt_tensor_destroy(out);
        }
        free(tours); free(tpeer); free(tmax);
        for (int l = NLAYOUTS - 1; l >= 0; l--) free_layout(&L[l]);
    }
    int all = sum_over_ranks(failures);
    if (rank == 0) printf("# %s\n", all ? "FAILED: a wrong result" : "all results checked: OK");
    if (fc) fclose(fc);
    dt_mesh_destroy(mesh);
    dt_comm_destroy(comm);
    Cblacs_exit(1);
    MPI_Finalize();
    return all ? 1 : 0;
}
