/* bench/stencil.c -- a 2-D 5-point Jacobi time step on the user's own
   ghosted array: dtensor's in-place halo exchange against a
   hand-written MPI face exchange on the same kind of array.

       make bench-stencil MPI=openmpi       (2 ranks)
       mpiexec -n 2 ./build/openmpi/bench_stencil [--quick] [--reps N] [--sizes "256 1024"]

   F64 global N x N (--sizes, default 256 512 1024 2048 4096), each rank's
   field in two ghosted arrays (1 ghost cell on every side, row-major
   (lx+2) x (ly+2)); a step reads one and writes the other, then they swap.
   Placements [Shard(0), Shard(1)] on every 2-D mesh P0 x P1 of the ranks
   (2 ranks: 2x1 and 1x2; a dim held whole wraps locally), both dims
   PERIODIC, faces only. Sides, per step:

     hand step   MPI_Type_vector faces (rows and columns) straight from and
                 into the ghosted array, 4 Irecv + 4 Isend to the Cartesian
                 neighbours, Waitall (a neighbour that is this rank: a local
                 copy), then the loop
     dt step     dt_halo_exchange on the tensor wrapping the array
                 (dt_tensor_from_local, DT_BORROW, desc.local_ghost = {1, 1}:
                 no interior copy), then the same loop
     hand xchg / dt xchg   the exchanges alone (dt: the library's default
                 for this MPI, see DTENSOR_HALO_TYPES in bench/README.md)
     pack / types    dt's exchange alone on arrays whose halos were planned
                 with DTENSOR_HALO_TYPES=0 (every strided face packed) and
                 =1 (every strided face an MPI derived datatype): the
                 switch's two sides, each against hand
     apply       dt_stencil_apply(x, the same 5-point update, &y): exchange
                 begun, inner cells computed while the messages fly, rim
                 after _end; y is a contiguous tensor (no swap)

   Checked before timing: the ghost cells of dt's array equal the hand
   array's (faces), and one step of each gives bitwise equal interiors; the
   apply output equals the loop's. Method as bench/halo.c: one untimed
   warm-up of every side, then --reps repetitions of all sides in a rotating
   order, each after a barrier, timed with MPI_Wtime and reduced to the max
   over ranks; the table prints medians (microseconds) and ratios dt / hand.
   --quick: sizes 64 128, 5 repetitions. Exit status 1 if the checks fail.
   faces: what crosses ranks -- cols (dim 1 split: strided column faces),
   rows (dim 0 split: contiguous row faces), both, or none (one rank). */
#define _POSIX_C_SOURCE 200112L /* setenv */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "bench/bench.h"
#include "bench/ghosted.h"

#include <stdlib.h>
#include <string.h>

static const double R = 0.2;

/* the user's own Jacobi loop: interior of `cur` -> interior of `nxt` (both ghosted, row length gy) */
static void jacobi(const double *cur, double *nxt, int64_t lx, int64_t ly, int64_t gy) {
    int64_t i, j;
    for (i = 0; i < lx; i++) {
        const double *c = cur + (i + 1) * gy + 1;
        double *o = nxt + (i + 1) * gy + 1;
        for (j = 0; j < ly; j++) {
            double u = c[j];
            o[j] = u + R * (((c[j - gy] + c[j + gy]) + (c[j - 1] + c[j + 1])) - 4.0 * u);
        }
    }
}

/* ---------------------------------------------------------------- the case */

enum { HAND_STEP, DT_STEP, HAND_X, DT_X, APPLY, DT_XPACK, DT_XTYPES, NSIDE };

typedef struct result { int p0, p1; int64_t n, lx, ly; double med[NSIDE]; } result;

/* a ghosted array with the closed form in its interior, ghosts zero */
static double *ghosted_array(int64_t lx, int64_t ly, const int64_t *off, int64_t n) {
    double *g = (double *)xmalloc((size_t)((lx + 2) * (ly + 2)) * sizeof(double));
    int64_t i, j;
    for (i = 0; i < lx; i++)
        for (j = 0; j < ly; j++) g[(i + 1) * (ly + 2) + j + 1] = val(off[0] + i, off[1] + j, n);
    return g;
}

static int run_case(dt_comm *comm, int p0, int p1, int64_t n, int reps, result *res) {
    dt_mesh *mesh;
    dt_tensor_desc td;
    dt_tensor *probe = NULL, *x[2] = {NULL, NULL}, *y = NULL, *xs[2] = {NULL, NULL};
    dt_halo_desc hd;
    MPI_Comm cart;
    int dims[2], periods[2] = {1, 1}, k, q, bad = 0, side, cur = 0, hcur = 0;
    int64_t ls[2], off[2], ghost[2] = {1, 1}, i, j, gy, gn;
    hand h;
    double r = R, *d[2], *hg[2], *t[NSIDE], *ds[2];
    mesh = grid_mesh(comm, p0, p1, n, &td);
    CHECK(dt_tensor_empty(mesh, &td, &probe));
    dt_tensor_local_shape(probe, ls);
    dt_tensor_local_offset(probe, off);
    dt_tensor_destroy(probe);
    gy = ls[1] + 2;
    gn = (ls[0] + 2) * gy;
    memset(&hd, 0, sizeof hd);
    hd.width[0] = hd.width[1] = 1;
    hd.boundary[0] = hd.boundary[1] = DT_BOUNDARY_PERIODIC;
    td.local_shape = ls;
    td.local_ghost = ghost;
    for (k = 0; k < 2; k++) {
        d[k] = ghosted_array(ls[0], ls[1], off, n);
        hg[k] = ghosted_array(ls[0], ls[1], off, n);
        td.local_alloc = d[k];
        td.local_alloc_bytes = (int64_t)((size_t)gn * sizeof(double));
        CHECK(dt_tensor_from_local(mesh, &td, d[k], DT_BORROW, &x[k]));
        CHECK(dt_tensor_set_halo(x[k], &hd));
        /* the switch's two sides: planned with every strided face packed (0) or a datatype (1) */
        ds[k] = ghosted_array(ls[0], ls[1], off, n);
        td.local_alloc = ds[k];
        CHECK(dt_tensor_from_local(mesh, &td, ds[k], DT_BORROW, &xs[k]));
        setenv("DTENSOR_HALO_TYPES", k ? "1" : "0", 1);
        CHECK(dt_tensor_set_halo(xs[k], &hd));
        unsetenv("DTENSOR_HALO_TYPES");
    }
    dims[0] = p0; dims[1] = p1;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    hand_init(&h, cart, ls[0], ls[1], 1);

    /* check: ghosts (faces), one step each, and apply against the loop */
    CHECK(dt_halo_exchange(x[0]));
    hand_exchange(&h, hg[0]);
    for (i = 0; i < ls[0] + 2; i++)
        for (j = 0; j < gy; j++) {
            int oi = i == 0 || i == ls[0] + 1, oj = j == 0 || j == gy - 1;
            if (!(oi && oj) && d[0][i * gy + j] != hg[0][i * gy + j] && bad++ < 3)
                fprintf(stderr, "[%d] %dx%d n %lld: cell (%lld, %lld): dt %g hand %g\n", rank, p0, p1, (long long)n,
                        (long long)i, (long long)j, d[0][i * gy + j], hg[0][i * gy + j]);
        }
    jacobi(d[0], d[1], ls[0], ls[1], gy);
    jacobi(hg[0], hg[1], ls[0], ls[1], gy);
    if (memcmp(d[1], hg[1], (size_t)gn * sizeof(double)) && bad++ < 3)
        fprintf(stderr, "[%d] %dx%d n %lld: step results differ\n", rank, p0, p1, (long long)n);
    for (k = 0; k < 2; k++) { /* the switch's sides fill the same ghosts */
        CHECK(dt_halo_exchange(xs[k]));
        if (memcmp(ds[k], d[0], (size_t)gn * sizeof(double)) && bad++ < 3)
            fprintf(stderr, "[%d] %dx%d n %lld: the %s plan's ghosts differ\n", rank, p0, p1, (long long)n,
                    k ? "datatype" : "packing");
    }
    CHECK(dt_stencil_apply(x[0], five, &r, &y));
    for (i = 0; i < ls[0]; i++)
        if (memcmp((const double *)dt_tensor_data(y) + i * ls[1], d[1] + (i + 1) * gy + 1,
                   (size_t)ls[1] * sizeof(double)) && bad++ < 3)
            fprintf(stderr, "[%d] %dx%d n %lld: dt_stencil_apply row %lld differs from the loop\n", rank, p0, p1,
                    (long long)n, (long long)i);

    for (side = 0; side < NSIDE; side++) t[side] = (double *)xmalloc((size_t)reps * sizeof(double));
    for (k = 0; k < reps; k++)
        for (q = 0; q < NSIDE; q++) {
            double t0;
            side = (k + q) % NSIDE;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            switch (side) {
            case HAND_STEP:
                hand_exchange(&h, hg[hcur]);
                jacobi(hg[hcur], hg[1 - hcur], ls[0], ls[1], gy);
                hcur = 1 - hcur;
                break;
            case DT_STEP:
                CHECK(dt_halo_exchange(x[cur]));
                jacobi(d[cur], d[1 - cur], ls[0], ls[1], gy);
                cur = 1 - cur;
                break;
            case HAND_X: hand_exchange(&h, hg[hcur]); break;
            case DT_X: CHECK(dt_halo_exchange(x[cur])); break;
            case DT_XPACK: CHECK(dt_halo_exchange(xs[0])); break;
            case DT_XTYPES: CHECK(dt_halo_exchange(xs[1])); break;
            default: CHECK(dt_stencil_apply(x[cur], five, &r, &y)); break;
            }
            t[side][k] = max_over_ranks(MPI_Wtime() - t0);
        }
    res->p0 = p0; res->p1 = p1; res->n = n; res->lx = ls[0]; res->ly = ls[1];
    for (side = 0; side < NSIDE; side++) { res->med[side] = median(t[side], reps) * 1e6; free(t[side]); }

    hand_free(&h);
    MPI_Comm_free(&cart);
    dt_tensor_destroy(y);
    for (k = 0; k < 2; k++) {
        dt_tensor_destroy(x[k]); dt_tensor_destroy(xs[k]);
        free(d[k]); free(hg[k]); free(ds[k]);
    }
    dt_mesh_destroy(mesh);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return bad == 0;
}

int main(int argc, char **argv) {
    int64_t sizes[16] = {256, 512, 1024, 2048, 4096};
    int nsizes = 5, reps = 0, quick = 0, i, a, si, ok = 1;
    dt_comm *comm;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            quick = 1; nsizes = 2; sizes[0] = 64; sizes[1] = 128;
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            nsizes = parse_list(argv[++i], sizes, 16);
        } else {
            if (rank == 0) fprintf(stderr, "usage: bench_stencil [--quick] [--reps N] [--sizes \"256 1024\"]\n");
            MPI_Finalize();
            return 2;
        }
    }
    CHECK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    if (rank == 0) {
        printf("# bench_stencil: %d ranks; F64 N x N, [Shard(0), Shard(1)], periodic, 5-point Jacobi on ghosted "
               "arrays (1 ghost cell)\n", nranks);
        printf("# medians in microseconds (max over ranks per repetition); step = exchange + the user's loop;\n"
               "# xchg = exchange alone (dt: this build's default); pack / types = dt's exchange planned with\n"
               "# DTENSOR_HALO_TYPES=0 / =1; apply = dt_stencil_apply (overlapped); ratios dt / hand\n");
        printf("%-5s %-5s %5s %10s %10s %10s %6s %9s %9s %6s %9s %6s %9s %6s %10s %6s\n", "mesh", "faces", "N",
               "local", "hand step", "dt step", "ratio", "hand xchg", "dt xchg", "ratio", "pack", "ratio", "types",
               "ratio", "apply", "a/hand");
    }
    for (a = 1; a <= nranks; a++) {
        if (nranks % a) continue;
        for (si = 0; si < nsizes; si++) {
            int64_t n = sizes[si];
            int rp = reps ? reps : quick ? 5 : n >= 2048 ? 21 : n >= 1024 ? 41 : 101;
            result r;
            char mesh[16], loc[24];
            if (n / a < 1 || n / (nranks / a) < 1) continue;
            ok &= run_case(comm, a, nranks / a, n, rp, &r);
            if (rank == 0) {
                snprintf(mesh, sizeof mesh, "%dx%d", r.p0, r.p1);
                snprintf(loc, sizeof loc, "%lldx%lld", (long long)r.lx, (long long)r.ly);
                printf("%-5s %-5s %5lld %10s %10.1f %10.1f %6.3f %9.1f %9.1f %6.3f %9.1f %6.3f %9.1f %6.3f %10.1f "
                       "%6.3f\n", mesh, r.p0 > 1 ? (r.p1 > 1 ? "both" : "rows") : r.p1 > 1 ? "cols" : "none",
                       (long long)n, loc, r.med[HAND_STEP], r.med[DT_STEP], r.med[DT_STEP] / r.med[HAND_STEP],
                       r.med[HAND_X], r.med[DT_X], r.med[DT_X] / r.med[HAND_X], r.med[DT_XPACK],
                       r.med[DT_XPACK] / r.med[HAND_X], r.med[DT_XTYPES], r.med[DT_XTYPES] / r.med[HAND_X],
                       r.med[APPLY], r.med[APPLY] / r.med[HAND_STEP]);
                fflush(stdout);
            }
        }
    }
    if (rank == 0) printf("results agree (ghost faces, step and apply outputs bitwise): %s\n", ok ? "yes" : "NO: FAILED");
    dt_comm_destroy(comm);
    MPI_Finalize();
    return ok ? 0 : 1;
}
