/* bench/fftw_transpose.c -- dt_tensor_redistribute [Shard(0)] -> [Shard(1)]
   against FFTW-MPI's distributed transpose of the same array.

       make build/openmpi/bench_fftw_transpose
       mpiexec.openmpi -n 4 ./build/openmpi/bench_fftw_transpose [--sizes "1024 2048 4096"]
               [--reps N] [--quick] [--peer best|plain|tout] [--csv FILE]

   A 2-D F64 array n0 x n1, n0 = n1 = size (default 1024 2048 4096; --quick:
   512 1024, 5 reps), a[i,j] = i*n1 + j (exact in F64), rows distributed over
   the p ranks: a 1-D dt mesh, [Shard(0)], and FFTW's default blocks
   ceil(n0/p) (torch.chunk's; the bench checks that FFTW's local_n0 /
   local_0_start and local_n1 / local_1_start equal dt's local boxes).

     ours   dt_tensor_redistribute to [Shard(1)]: on each rank the n0 x ln1
            column block, row-major (the output tensor is reused)
     plain  fftw_mpi_plan_transpose(n0, n1, in, out, MPI_COMM_WORLD,
            FFTW_MEASURE): the ln1 x n0 block of the transposed matrix on
            each rank (the column block, locally transposed)
     tout   the same with FFTW_MEASURE | FFTW_MPI_TRANSPOSED_OUT: on each
            rank the same n0 x ln1 block as ours, row-major

   Both FFTW plans are made with FFTW_MEASURE before anything is timed, out
   of place (as dtensor is), on their own buffers filled with the same values
   after planning (planning overwrites them).

   Which FFTW is the peer (the `peer` row of --csv; --peer picks): by
   default the faster of the two FFTW medians at each size (as bench/matmul.c
   takes the faster of pdgemm-T / pdgemm-N), i.e. FFTW's best way to get
   the column blocks onto their ranks. All three move the same bytes between
   ranks. Reasoning: FFTW_MPI_TRANSPOSED_OUT looks like the like-for-like
   variant, since its output is byte for byte dtensor's Shard(1) block
   (FFTW's manual: "the output is n0 by local_n1 instead of local_n1 by
   n0"). But FFTW's transpose solvers work in transposed order internally
   and produce TRANSPOSED_OUT by one more local transposition after the
   exchange (fftw_print_plan of the MEASURE plan at 1 and 2 ranks, 1024^2:
   mpi-transpose-pairwise (rdft-rank0-tiled...) (rdft-rank0-ip-sq-tiledbuf
   ...) for TRANSPOSED_OUT, no second transposition for the plain plan), so
   it is mostly the slower of the two (up to 2x in our runs), and using it
   alone would flatter dtensor. The plain transpose is FFTW's fastest path and
   the one FFTW codes use; its output is locally transposed, a layout
   dtensor does not produce, and that transposition is part of its cost.
   Taking the faster of the two charges dtensor against FFTW at its best
   whichever it is on the machine. FFTW_MPI_TRANSPOSED_IN is not used: it
   changes the input layout (n1 x local_n0), which is not the array both
   sides start from. --peer plain or --peer tout pins one variant; the table
   shows both (interleaved: ours, plain, tout, ours, ...).
   At 1 rank the comparison is degenerate: [Shard(0)] -> [Shard(1)] is a
   copy of the local block for dtensor, a local transpose (plain) or a
   transpose and back (tout) for FFTW.

   Method: per size one untimed warm-up of each side, then the repetitions
   (default 11 up to 1024, 7 at 2048, 5 above; --reps N, at least 5)
   interleaved ours, plain, tout, ours, plain, ...; each timing is
   preceded by MPI_Barrier and is the max over ranks of the MPI_Wtime
   difference; the value is the median. Every output (set to NaN before the
   warm-up) is checked against the closed form at every element after the
   warm-up and after the last repetition, and the inputs are checked to be
   unchanged; any difference makes the exit status 1. ratio = ours / peer
   (the target: <= 1); the table's "peer" column says which FFTW it was.

   --csv FILE appends the raw rows of the `make bench` harness (bench.h):
       fftw,S(0)->S(1),<n0*n1*8 bytes>,ours|peer,<median>,ms

   Debian builds FFTW-MPI (libfftw3-mpi-dev) against Open MPI only: this
   program is always compiled with mpicc.openmpi (-lfftw3_mpi -lfftw3). */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "bench/bench.h"
#include <fftw3-mpi.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double aval(int64_t i, int64_t j, int64_t n1) { return (double)(i * n1 + j); }

static void nan_fill(double *p, size_t n) {
    for (size_t i = 0; i < n; i++) p[i] = NAN;
}

/* wrong elements of a row-major rows x cols block of a whose element (r, c)
   is a[r0 + r, c0 + c], or with `transposed` a[r0 + c, c0 + r] */
static long long wrong(const double *p, int64_t rows, int64_t cols, int64_t r0, int64_t c0, int transposed,
                       int64_t n1) {
    long long bad = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            double want = transposed ? aval(r0 + c, c0 + r, n1) : aval(r0 + r, c0 + c, n1);
            bad += p[r * cols + c] != want;
        }
    return bad;
}

enum { S_OURS, S_PLAIN, S_TOUT, NSIDES };
enum { PEER_BEST = -1 };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    fftw_mpi_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *sizes = "1024 2048 4096", *csv = NULL, *peer_arg = "best";
    int reps_arg = 0, quick = 0, failures = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) sizes = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps_arg = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
        else if (!strcmp(argv[i], "--peer") && i + 1 < argc) peer_arg = argv[++i];
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else { reps_arg = -1; break; }
    }
    if (quick) { sizes = "512 1024"; if (!reps_arg) reps_arg = 5; }
    int peer = !strcmp(peer_arg, "best") ? PEER_BEST : !strcmp(peer_arg, "plain") ? S_PLAIN
             : !strcmp(peer_arg, "tout") ? S_TOUT : -2;
    if (reps_arg < 0 || (reps_arg > 0 && reps_arg < 5) || peer == -2) {
        if (rank == 0) fprintf(stderr, "usage: %s [--sizes \"1024 2048 4096\"] [--reps N (>= 5)] [--quick] "
                                       "[--peer best|plain|tout] [--csv FILE]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    FILE *fc;
    if (!bench_csv_open(csv, &fc)) { MPI_Finalize(); return 2; }

    dt_comm *comm;
    dt_mesh *mesh;
    CHECK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    dt_mesh_desc md = {0};
    md.ndim = 1;  md.shape[0] = nranks;  md.names[0] = "p";
    CHECK(dt_mesh_create(comm, &md, &mesh));

    if (rank == 0) {
        char ver[MPI_MAX_LIBRARY_VERSION_STRING];
        mpi_library(ver);
        printf("# dtensor.h %d.%d.%d: dt_tensor_redistribute [S(0)] -> [S(1)] vs FFTW-MPI transpose (%s), "
               "f64 n0 x n1, %d rank(s), 1-D mesh\n", DTENSOR_VERSION_MAJOR, DTENSOR_VERSION_MINOR,
               DTENSOR_VERSION_PATCH, fftw_version, nranks);
        printf("# MPI: %s\n", ver);
        printf("# plain: output local_n1 x n0 (transposed); tout: FFTW_MPI_TRANSPOSED_OUT (output n0 x local_n1 =\n"
               "# dt's [S(1)] block); both FFTW_MEASURE, out of place. peer = %s\n",
               peer == PEER_BEST ? "the faster FFTW (median) at each size" : peer_arg);
        printf("# times: median over reps of the max over ranks (interleaved, barrier before each, 1 warm-up);\n"
               "# ratio = ours / peer (< 1: dtensor faster); check: every output == closed form everywhere\n");
        printf("%-11s %11s %9s %4s %10s %10s %10s %5s %7s  %s\n", "case", "n0 x n1", "MiB", "reps", "ours ms",
               "plain ms", "tout ms", "peer", "ratio", "check");
        fflush(stdout);
    }

    const char *p = sizes;
    char *end;
    for (long sz = strtol(p, &end, 10); end != p; p = end, sz = strtol(p, &end, 10)) {
        if (sz < 1 || sz > (1L << 20)) {
            if (rank == 0) fprintf(stderr, "size %ld out of range\n", sz);
            failures++;
            continue;
        }
        int64_t n0 = sz, n1 = sz;
        long long bytes = (long long)(n0 * n1 * 8);
        int reps = reps_arg ? reps_arg : sz <= 1024 ? 11 : sz <= 2048 ? 7 : 5;

        /* ours: [S(0)] -> [S(1)], the output reused */
        dt_tensor_desc td = {0};
        td.dtype = DT_F64;  td.ndim = 2;  td.shape[0] = n0;  td.shape[1] = n1;
        td.placements[0] = dt_shard(0);
        dt_tensor *in, *out = NULL;
        CHECK(dt_tensor_empty(mesh, &td, &in));
        int64_t ish[2], ioff[2], osh[2], ooff[2];
        dt_tensor_local_shape(in, ish);
        dt_tensor_local_offset(in, ioff);
        dt_placement dst[1] = { dt_shard(1) };
        {
            double *a = (double *)dt_tensor_data(in);
            for (int64_t i = 0; i < ish[0]; i++)
                for (int64_t j = 0; j < n1; j++) a[i * n1 + j] = aval(ioff[0] + i, j, n1);
        }
        td.placements[0] = dt_shard(1);
        int coord[1] = { 0 };
        dt_mesh_coordinate(mesh, coord);
        CHECK(dt_layout(mesh, &td, coord, osh, ooff));

        /* FFTW: the same distribution (checked), its own buffers */
        ptrdiff_t nn[2] = { (ptrdiff_t)n0, (ptrdiff_t)n1 }, ln0, l0s, ln1, l1s;
        ptrdiff_t alloc = fftw_mpi_local_size_many_transposed(2, nn, 1, FFTW_MPI_DEFAULT_BLOCK,
                                                              FFTW_MPI_DEFAULT_BLOCK, MPI_COMM_WORLD, &ln0, &l0s,
                                                              &ln1, &l1s);
        if (ln0 != ish[0] || l0s != ioff[0] || ln1 != osh[1] || l1s != ooff[1]) {
            fprintf(stderr, "[%d] FFTW's blocks (rows %td at %td, cols %td at %td) are not dt's (rows %lld at "
                            "%lld, cols %lld at %lld)\n", rank, ln0, l0s, ln1, l1s, (long long)ish[0],
                    (long long)ioff[0], (long long)osh[1], (long long)ooff[1]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (alloc < 1) alloc = 1;
        double *fin = fftw_alloc_real((size_t)alloc), *fout[NSIDES] = { NULL, NULL, NULL };
        fout[S_TOUT] = fftw_alloc_real((size_t)alloc);
        fout[S_PLAIN] = fftw_alloc_real((size_t)alloc);
        if (!fin || !fout[S_TOUT] || !fout[S_PLAIN]) {
            fprintf(stderr, "[%d] fftw_alloc_real failed\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        fftw_plan plan[NSIDES] = { NULL, NULL, NULL };
        plan[S_TOUT] = fftw_mpi_plan_transpose(nn[0], nn[1], fin, fout[S_TOUT], MPI_COMM_WORLD,
                                               FFTW_MEASURE | FFTW_MPI_TRANSPOSED_OUT);
        plan[S_PLAIN] = fftw_mpi_plan_transpose(nn[0], nn[1], fin, fout[S_PLAIN], MPI_COMM_WORLD, FFTW_MEASURE);
        if (!plan[S_TOUT] || !plan[S_PLAIN]) {
            fprintf(stderr, "[%d] fftw_mpi_plan_transpose failed\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (ptrdiff_t i = 0; i < ln0; i++)   /* after planning */
            for (ptrdiff_t j = 0; j < nn[1]; j++) fin[i * nn[1] + j] = aval(l0s + i, j, n1);
        nan_fill(fout[S_TOUT], (size_t)alloc);
        nan_fill(fout[S_PLAIN], (size_t)alloc);

        double *t[NSIDES], *tmax = (double *)xmalloc(sizeof(double) * (size_t)reps), med[NSIDES];
        for (int s = 0; s < NSIDES; s++) t[s] = (double *)xmalloc(sizeof(double) * (size_t)reps);
        long long bad[NSIDES + 1] = { 0, 0, 0, 0 }; /* + the inputs */
        for (int rep = -1; rep <= reps; rep++) {  /* rep -1: the warm-up; rep == reps: only the check */
            if (rep < reps)
                for (int s = 0; s < NSIDES; s++) {  /* ours, plain, tout */
                    MPI_Barrier(MPI_COMM_WORLD);
                    double t0 = MPI_Wtime();
                    if (s == S_OURS) CHECK(dt_tensor_redistribute(in, dst, &out));
                    else fftw_mpi_execute_r2r(plan[s], fin, fout[s]);
                    double t1 = MPI_Wtime();
                    if (rep >= 0) t[s][rep] = t1 - t0;
                }
            if (rep == -1 || rep == reps) {
                /* ours and tout: n0 x ln1 at column l1s; plain: ln1 x n0, transposed */
                bad[S_OURS] += wrong((const double *)dt_tensor_data(out), n0, osh[1], 0, ooff[1], 0, n1);
                bad[S_TOUT] += wrong(fout[S_TOUT], n0, ln1, 0, l1s, 0, n1);
                bad[S_PLAIN] += wrong(fout[S_PLAIN], ln1, n0, 0, l1s, 1, n1);
                bad[NSIDES] += wrong((const double *)dt_tensor_data(in), ish[0], n1, ioff[0], 0, 0, n1) +
                               wrong(fin, ln0, n1, l0s, 0, 0, n1);
            }
        }
        MPI_Allreduce(MPI_IN_PLACE, bad, NSIDES + 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        int ok = bad[0] == 0 && bad[1] == 0 && bad[2] == 0 && bad[3] == 0;
        if (!ok) failures++;
        for (int s = 0; s < NSIDES; s++) {
            MPI_Allreduce(t[s], tmax, reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            med[s] = median(tmax, reps) * 1e3;
        }
        if (rank == 0) {
            char shape[48];
            snprintf(shape, sizeof shape, "%lldx%lld", (long long)n0, (long long)n1);
            int ps = peer == PEER_BEST ? (med[S_TOUT] < med[S_PLAIN] ? S_TOUT : S_PLAIN) : peer;
            printf("%-11s %11s %9.2f %4d %10.3f %10.3f %10.3f %5s %7.2f  ", "S(0)->S(1)", shape,
                   (double)bytes / 1048576.0, reps, med[S_OURS], med[S_PLAIN], med[S_TOUT],
                   ps == S_TOUT ? "tout" : "plain", med[S_OURS] / med[ps]);
            if (ok) printf("OK\n");
            else printf("WRONG (elements wrong: ours %lld, plain %lld, tout %lld, inputs changed %lld)\n",
                        bad[S_OURS], bad[S_PLAIN], bad[S_TOUT], bad[NSIDES]);
            fflush(stdout);
            if (ok) {
                bench_csv_row(fc, "fftw", "S(0)->S(1)", bytes, "ours", med[S_OURS]);
                bench_csv_row(fc, "fftw", "S(0)->S(1)", bytes, "peer", med[ps]);
            }
        }
        for (int s = 0; s < NSIDES; s++) free(t[s]);
        free(tmax);
        fftw_destroy_plan(plan[S_TOUT]);
        fftw_destroy_plan(plan[S_PLAIN]);
        fftw_free(fin);
        fftw_free(fout[S_TOUT]);
        fftw_free(fout[S_PLAIN]);
        dt_tensor_destroy(out);
        dt_tensor_destroy(in);
    }
    int all = sum_over_ranks(failures);
    if (rank == 0) printf("# %s\n", all ? "FAILED: a wrong result" : "all results checked: OK");
    if (fc) fclose(fc);
    dt_mesh_destroy(mesh);
    dt_comm_destroy(comm);
    fftw_mpi_cleanup();
    MPI_Finalize();
    return all ? 1 : 0;
}
