/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi scalapack
   impl:  linked
*/
/* test_pdgemr2d.c -- block-cyclic layouts with the first block on any
   process (ScaLAPACK's RSRC/CSRC, dt_shard_cyclic_src) against ScaLAPACK
   itself (linked: -lscalapack-<mpi>, Debian libscalapack-<mpi>-dev).

   For every 2-D mesh of the ranks, both placement orders (BLACS grids "C"
   and "R") and sources (RSRC, CSRC) in {0, 1, last} on each grid dim, a
   matrix T (23 x 17, blocks 3 and 2; --quick: fewer sources) distributed
   by the library with [dt_shard_cyclic_src, dt_shard_cyclic_src] is
   copied by the real pdgemr2d, under the descriptor dt_tensor_scalapack_desc
   gives (RSRC/CSRC = the sources), into a tensor laid out with source 0,
   and back into a third with the sources: every gathered value equals the
   original (ScaLAPACK reads and writes our buffers by its own rule, so a
   layout that differed from ScaLAPACK's would scramble them). The
   descriptor imported back (dt_tensor_desc_from_scalapack) gives the same
   placements, and the array wrapped from it (DT_BORROW, local_shape) is
   the same tensor. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"
#include "bench/scalapack.h"

void pdgemr2d_(const int *m, const int *n, const double *a, const int *ia, const int *ja, const int *desca,
               double *b, const int *ib, const int *jb, const int *descb, const int *ictxt);

static dt_comm *g_comm;

static double val(int64_t i, int64_t j) { return (double)(i * 1000 + j); }

static void check_values(dt_tensor *t, int64_t M, int64_t N, const char *what) {
    double *full = (double *)malloc(sizeof(double) * (size_t)(M * N + 1));
    int64_t i;
    if (!full) return;
    CHECK_OK(dt_tensor_gather(t, full));
    for (i = 0; i < M * N; i++)
        if (full[i] != val(i / N, i % N)) {
            CHECK(0, "%s: T[%lld, %lld] = %g, want %g", what, (long long)(i / N), (long long)(i % N), full[i],
                  val(i / N, i % N));
            break;
        }
    free(full);
}

static void one_case(dt_mesh *mesh, const int *mshape, int order, int rsrc, int csrc) {
    const int64_t M = 23, N = 17, mb = 3, nb = 2; /* T's blocks: mb on dim 0, nb on dim 1 */
    dt_tensor_desc d, z, id;
    dt_tensor *x = NULL, *y = NULL, *x2 = NULL, *w = NULL;
    dt_scalapack_grid g;
    double *full;
    int dx[9], dy[9], dx2[9], ctx, one = 1, k, nprow, npcol, myr, myc;
    int64_t i, ls[2];
    char buf[160];
    /* A = T^T: A's rows (T's dim 1) over the grid rows, A's columns (T's dim 0) over the grid columns */
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;  d.ndim = 2;  d.shape[0] = M;  d.shape[1] = N;
    if (order == 0) { /* grid "C": mesh dim 0 = grid columns */
        d.placements[0] = dt_shard_cyclic_src(0, mb, csrc % mshape[0]);
        d.placements[1] = dt_shard_cyclic_src(1, nb, rsrc % mshape[1]);
    } else {          /* grid "R": mesh dim 0 = grid rows */
        d.placements[0] = dt_shard_cyclic_src(1, nb, rsrc % mshape[0]);
        d.placements[1] = dt_shard_cyclic_src(0, mb, csrc % mshape[1]);
    }
    dtt_ctx("mesh %dx%d, %s", mshape[0], mshape[1], dtt_pl_str(d.placements, 2, buf, sizeof buf));
    full = (double *)malloc(sizeof(double) * (size_t)(M * N));
    for (i = 0; i < M * N && full; i++) full[i] = val(i / N, i % N);
    CHECK_OK(dt_tensor_distribute(mesh, &d, full, DT_SRC_ALL, &x));
    free(full);
    z = d; /* the same blocks, source 0 */
    for (k = 0; k < 2; k++) z.placements[k].src = 0;
    CHECK_OK(dt_tensor_zeros(mesh, &z, &y));
    CHECK_OK(dt_tensor_zeros(mesh, &d, &x2));
    if (!x || !y || !x2) goto done;
    CHECK_OK(dt_tensor_scalapack_desc(x, 0, NULL, &g));
    Cblacs_get(-1, 0, &ctx);
    Cblacs_gridinit(&ctx, g.order, g.nprow, g.npcol);
    Cblacs_gridinfo(ctx, &nprow, &npcol, &myr, &myc);
    CHECK(nprow == g.nprow && npcol == g.npcol && myr == g.myrow && myc == g.mycol, "BLACS grid %dx%d at (%d,%d), "
          "ours %dx%d at (%d,%d)", nprow, npcol, myr, myc, g.nprow, g.npcol, g.myrow, g.mycol);
    CHECK_OK(dt_tensor_scalapack_desc(x, ctx, dx, NULL));
    CHECK_OK(dt_tensor_scalapack_desc(y, ctx, dy, NULL));
    CHECK_OK(dt_tensor_scalapack_desc(x2, ctx, dx2, NULL));
    CHECK(dx[6] == rsrc % g.nprow && dx[7] == csrc % g.npcol && dy[6] == 0 && dy[7] == 0,
          "RSRC/CSRC %d %d (want %d %d), source-0 copy %d %d", dx[6], dx[7], rsrc % g.nprow, csrc % g.npcol, dy[6],
          dy[7]);
    { /* ScaLAPACK's own local extents for the descriptor: NUMROC with the sources */
        int lr = numroc_(&dx[2], &dx[4], &myr, &dx[6], &nprow), lc = numroc_(&dx[3], &dx[5], &myc, &dx[7], &npcol);
        int64_t sh[2];
        dt_tensor_local_shape(x, sh);
        CHECK(lr == sh[1] && lc == sh[0], "NUMROC %d x %d (of A), local %lld x %lld (of T)", lr, lc,
              (long long)sh[0], (long long)sh[1]);
    }
    /* sources -> source 0 -> sources, by ScaLAPACK */
    pdgemr2d_(&dx[2], &dx[3], (const double *)dt_tensor_data(x), &one, &one, dx, (double *)dt_tensor_data(y), &one,
              &one, dy, &ctx);
    check_values(y, M, N, "pdgemr2d to source 0");
    pdgemr2d_(&dy[2], &dy[3], (const double *)dt_tensor_data(y), &one, &one, dy, (double *)dt_tensor_data(x2), &one,
              &one, dx2, &ctx);
    check_values(x2, M, N, "pdgemr2d back to the sources");
    /* the descriptor imported: the same placements; the array wrapped as it is */
    CHECK_OK(dt_tensor_desc_from_scalapack(dx, &g, DT_F64, &id, ls, NULL));
    for (k = 0; k < 2; k++)
        CHECK(id.placements[k].dim == d.placements[k].dim && id.placements[k].split == DT_SPLIT_CYCLIC &&
              id.placements[k].block == d.placements[k].block && id.placements[k].src == d.placements[k].src,
              "imported placements[%d] = %s", k, dtt_pl_str(id.placements, 2, buf, sizeof buf));
    CHECK_OK(dt_tensor_from_local(mesh, &id, dt_tensor_data(x2), DT_BORROW, &w));
    if (w) check_values(w, M, N, "the imported array, wrapped");
    dt_tensor_destroy(w);
    Cblacs_gridexit(ctx);
done:
    dt_tensor_destroy(x2);
    dt_tensor_destroy(y);
    dt_tensor_destroy(x);
}

int main(int argc, char **argv) {
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, o, a, b;
    dtt_init(&argc, &argv, "test_pdgemr2d");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    nf = dtt_factorizations(dtt_np, 2, fac, 64);
    for (f = 0; f < nf; f++) {
        dt_mesh_desc md;
        dt_mesh *m = NULL;
        memset(&md, 0, sizeof md);
        md.ndim = 2;  md.shape[0] = fac[f * DT_MAX_MESH_DIMS];  md.shape[1] = fac[f * DT_MAX_MESH_DIMS + 1];
        CHECK_OK(dt_mesh_create(g_comm, &md, &m));
        if (!m) continue;
        for (o = 0; o < 2; o++) {
            int nr = o == 0 ? md.shape[1] : md.shape[0], nc = o == 0 ? md.shape[0] : md.shape[1];
            int srcs_r[3] = { 0, 1 % nr, nr - 1 }, srcs_c[3] = { 0, 1 % nc, nc - 1 }, n = dtt_quick ? 2 : 3;
            for (a = 0; a < n; a++)
                for (b = 0; b < n; b++)
                    if (!dtt_quick || a == b || (a == 1 && b == 0)) one_case(m, md.shape, o, srcs_r[a], srcs_c[b]);
        }
        dt_mesh_destroy(m);
    }
    dt_comm_destroy(g_comm);
    Cblacs_exit(1);
    return dtt_finish();
}
