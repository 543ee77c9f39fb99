/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_scalapack.c -- dt_tensor_scalapack_desc against ScaLAPACK's own
   index rules, written out here (no ScaLAPACK library needed):
     NUMROC(n, nb, p, 0, np)   the local extent of process p
     INDXL2G(l, nb, p, 0, np)  the global index of local index l
   For every 2-D mesh of the ranks, both placement orders, cyclic blocks
   (1, 3, 7, and one longer than the extent), chunk, balanced and sizes
   splits, and shapes with short last blocks and empty parts: when the call
   accepts a tensor, the descriptor is {1, ictxt, N, M, MB, NB, 0, 0, LLD}
   of T^T, the grid (nprow, npcol, order, myrow, mycol) puts every process
   at its mesh rank in BLACS numbering, NUMROC gives the tensor's local
   extents, LLD = max(1, local columns), and INDXL2G gives, per local
   position, the global index dt_tensor_local_indices gives: local element
   (i, j) of the row-major buffer, which ScaLAPACK reads as A_loc(j, i) with
   that LLD, is T(INDXL2G(i), INDXL2G(j)), the zero-copy claim. A chunk,
   balanced or sizes split must be accepted exactly when its parts are
   block-cyclic (computed here from the parts' sizes). Then the refusals:
   NULL arguments, 1-D / 3-D tensors, 1-D / 3-D meshes, dtypes, Replicate,
   Partial, one dim sharded twice, an extent above INT_MAX; each message
   names the call. Ranks outside a mesh get myrow = mycol = -1, LLD 1.
   --quick: fewer shapes. */
#define _POSIX_C_SOURCE 200112L /* getpid */
#define DTENSOR_IMPLEMENTATION
#include <limits.h>
#include <unistd.h>
#include "dtensor.h"
#include "dt_test.h"

static dt_comm *g_comm;

static int numroc0(int64_t n, int64_t nb, int p, int np) {
    int64_t nblocks = n / nb, r = (nblocks / np) * nb, extra = nblocks % np;
    if (p < extra) r += nb;
    else if (p == extra) r += n % nb;
    return (int)r;
}

/* NUMROC(n, nb, p, src, np) and INDXL2G(l, nb, p, src, np): with the first
   block on process src, process p is (np + p - src) mod np in the deal */
static int numroc(int64_t n, int64_t nb, int p, int src, int np) { return numroc0(n, nb, (np + p - src) % np, np); }

static int64_t indxl2g(int64_t l, int64_t nb, int p, int src, int np) {
    return (int64_t)np * nb * (l / nb) + l % nb + (int64_t)((np + p - src) % np) * nb;
}

/* the parts' sizes of a split of n over k (chunk, balanced, sizes) */
static void part_sizes(const dt_placement *p, int64_t n, int k, int64_t *out) {
    int c;
    for (c = 0; c < k; c++) {
        if (p->split == DT_SPLIT_BALANCED) out[c] = n / k + (c < n % k);
        else if (p->split == DT_SPLIT_SIZES) out[c] = p->sizes[c];
        else {
            int64_t b = (n + k - 1) / k, lo = c * b, hi = (c + 1) * b < n ? (c + 1) * b : n;
            out[c] = hi > lo ? hi - lo : 0;
        }
    }
}

/* is the split block-cyclic? its block in *b (the first part's size, 1 if none) */
static int is_block_cyclic(const dt_placement *p, int64_t n, int k, int64_t *b) {
    int64_t s[64] = {0}, rem = n;
    int c;
    if (p->split == DT_SPLIT_CYCLIC) {
        *b = p->block < n ? p->block : (n > 0 ? n : 1);
        return 1;
    }
    part_sizes(p, n, k, s);
    *b = s[0] > 0 ? s[0] : 1;
    if (k == 1) return 1;
    for (c = 0; c < k; c++) {
        int64_t want = rem < *b ? rem : *b;
        if (s[c] != want) return 0;
        rem -= want;
    }
    return 1;
}

/* The descriptor back to a spec (dt_tensor_desc_from_scalapack): the same
   global shape, this rank's local shape, a tensor with the same local
   indices on every dim, and the same descriptor again */
static void import_round_trip(dt_mesh *mesh, const dt_tensor *t, const int *desc, const dt_scalapack_grid *g,
                              dt_dtype dt) {
    dt_tensor_desc id;
    dt_tensor *u = NULL;
    int64_t ls[2], lst[2], sh[2], *a, *b;
    int d3[9], k;
    const dt_tensor_desc *td = dt_tensor_get_desc(t);
    CHECK_OK(dt_tensor_desc_from_scalapack(desc, g, dt, &id, ls, lst));
    dt_tensor_local_shape(t, sh);
    CHECK(id.dtype == dt && id.ndim == 2 && id.shape[0] == td->shape[0] && id.shape[1] == td->shape[1],
          "import: shape %lld x %lld", (long long)id.shape[0], (long long)id.shape[1]);
    CHECK(ls[0] == sh[0] && ls[1] == sh[1] && id.local_shape == ls && !id.local_strides, "import: local %lld x %lld, "
          "tensor's %lld x %lld", (long long)ls[0], (long long)ls[1], (long long)sh[0], (long long)sh[1]);
    id.local_shape = NULL;
    CHECK_OK(dt_tensor_empty(mesh, &id, &u));
    if (!u) return;
    CHECK_OK(dt_tensor_scalapack_desc(u, desc[1], d3, NULL));
    CHECK(memcmp(d3, desc, sizeof d3) == 0, "import round trip: {%d %d %d %d %d %d %d %d %d}", d3[0], d3[1], d3[2],
          d3[3], d3[4], d3[5], d3[6], d3[7], d3[8]);
    a = (int64_t *)malloc(sizeof(int64_t) * (size_t)(sh[0] + sh[1] + 2));
    b = (int64_t *)malloc(sizeof(int64_t) * (size_t)(sh[0] + sh[1] + 2));
    for (k = 0; k < 2 && a && b; k++) {
        CHECK_OK(dt_tensor_local_indices(t, k, a));
        CHECK_OK(dt_tensor_local_indices(u, k, b));
        CHECK(memcmp(a, b, sizeof(int64_t) * (size_t)sh[k]) == 0, "import: the local indices of dim %d differ", k);
    }
    free(a);
    free(b);
    dt_tensor_destroy(u);
}

/* one tensor: accepted or refused as expected, and when accepted every claim */
static void check_one(dt_mesh *mesh, const int *mshape, int64_t M, int64_t N, dt_placement p0, dt_placement p1,
                      dt_dtype dt) {
    dt_tensor_desc d;
    dt_tensor *t = NULL;
    dt_scalapack_grid g;
    int desc[9], coord[2] = {0, 0}, in, first = p0.dim, k, ok;
    int rsrc = p0.dim == 1 ? p0.src : p1.src, csrc = p0.dim == 0 ? p0.src : p1.src; /* A's rows are T's dim 1 */
    int64_t b0, b1, blk[2], sh[2], *idx[2], i;
    char buf[160];
    memset(&d, 0, sizeof d);
    d.dtype = dt;  d.ndim = 2;  d.shape[0] = M;  d.shape[1] = N;
    d.placements[0] = p0;  d.placements[1] = p1;
    dtt_ctx("mesh %dx%d, %lldx%lld %s", mshape[0], mshape[1], (long long)M, (long long)N,
            dtt_pl_str(d.placements, 2, buf, sizeof buf));
    CHECK_OK(dt_tensor_empty(mesh, &d, &t));
    if (!t) return;
    ok = is_block_cyclic(&p0, d.shape[p0.dim], mshape[0], &b0) && is_block_cyclic(&p1, d.shape[p1.dim], mshape[1], &b1);
    memset(desc, 0x55, sizeof desc);
    if (!ok) {
        CHECK_ST(dt_tensor_scalapack_desc(t, 7, desc, &g), DT_ERR_PLACEMENT);
        CHECK_ERRMSG("dt_tensor_scalapack_desc");
        dt_tensor_destroy(t);
        return;
    }
    blk[p0.dim] = b0;
    blk[p1.dim] = b1;
    CHECK_OK(dt_tensor_scalapack_desc(t, 7, desc, &g));
    in = dt_mesh_coordinate(mesh, coord);
    dt_tensor_local_shape(t, sh);
    CHECK(desc[0] == 1 && desc[1] == 7 && desc[2] == N && desc[3] == M && desc[4] == blk[1] && desc[5] == blk[0] &&
          desc[6] == rsrc && desc[7] == csrc, "desc {%d %d %d %d %d %d %d %d}, want {1 7 %lld %lld %lld %lld %d %d}",
          desc[0], desc[1], desc[2], desc[3], desc[4], desc[5], desc[6], desc[7], (long long)N, (long long)M,
          (long long)blk[1], (long long)blk[0], rsrc, csrc);
    CHECK(desc[8] == (sh[1] > 1 ? sh[1] : 1), "LLD %d, local columns %lld", desc[8], (long long)sh[1]);
    if (first == 0) {
        CHECK(g.nprow == mshape[1] && g.npcol == mshape[0] && strcmp(g.order, "C") == 0,
              "grid %dx%d %s, want %dx%d C", g.nprow, g.npcol, g.order, mshape[1], mshape[0]);
        CHECK(!in || (g.myrow == coord[1] && g.mycol == coord[0]), "at (%d,%d), coordinate (%d,%d)", g.myrow,
              g.mycol, coord[0], coord[1]);
    } else {
        CHECK(g.nprow == mshape[0] && g.npcol == mshape[1] && strcmp(g.order, "R") == 0,
              "grid %dx%d %s, want %dx%d R", g.nprow, g.npcol, g.order, mshape[0], mshape[1]);
        CHECK(!in || (g.myrow == coord[0] && g.mycol == coord[1]), "at (%d,%d), coordinate (%d,%d)", g.myrow,
              g.mycol, coord[0], coord[1]);
    }
    if (in) { /* the BLACS number of the grid position is the mesh rank */
        int blacs = g.order[0] == 'C' ? g.myrow + g.mycol * g.nprow : g.myrow * g.npcol + g.mycol;
        CHECK(blacs == dt_mesh_rank(mesh), "BLACS number %d, mesh rank %d", blacs, dt_mesh_rank(mesh));
        /* A = T^T: A's rows are T's columns (MB over nprow), A's columns T's rows (NB over npcol) */
        CHECK(numroc(N, desc[4], g.myrow, rsrc, g.nprow) == sh[1] && numroc(M, desc[5], g.mycol, csrc, g.npcol) == sh[0],
              "NUMROC %d x %d (of A), local %lld x %lld (of T)", numroc(N, desc[4], g.myrow, rsrc, g.nprow),
              numroc(M, desc[5], g.mycol, csrc, g.npcol), (long long)sh[0], (long long)sh[1]);
        for (k = 0; k < 2; k++) {
            idx[k] = (int64_t *)malloc(sizeof(int64_t) * (size_t)(sh[k] + 1));
            CHECK_OK(dt_tensor_local_indices(t, k, idx[k]));
        }
        for (i = 0; i < sh[0]; i++)
            if (idx[0][i] != indxl2g(i, desc[5], g.mycol, csrc, g.npcol)) {
                CHECK(0, "local row %lld is global %lld, INDXL2G says %lld", (long long)i, (long long)idx[0][i],
                      (long long)indxl2g(i, desc[5], g.mycol, csrc, g.npcol));
                break;
            }
        for (i = 0; i < sh[1]; i++)
            if (idx[1][i] != indxl2g(i, desc[4], g.myrow, rsrc, g.nprow)) {
                CHECK(0, "local column %lld is global %lld, INDXL2G says %lld", (long long)i, (long long)idx[1][i],
                      (long long)indxl2g(i, desc[4], g.myrow, rsrc, g.nprow));
                break;
            }
        free(idx[0]);
        free(idx[1]);
    } else {
        CHECK(g.myrow == -1 && g.mycol == -1 && desc[8] == 1, "outside the mesh: at (%d,%d), LLD %d", g.myrow,
              g.mycol, desc[8]);
    }
    /* either output alone gives the same */
    {
        int d2[9];
        dt_scalapack_grid g2;
        CHECK_OK(dt_tensor_scalapack_desc(t, 7, d2, NULL));
        CHECK(memcmp(d2, desc, sizeof d2) == 0, "desc alone differs");
        CHECK_OK(dt_tensor_scalapack_desc(t, 7, NULL, &g2));
        CHECK(g2.nprow == g.nprow && g2.npcol == g.npcol && g2.myrow == g.myrow && g2.mycol == g.mycol &&
              strcmp(g2.order, g.order) == 0, "grid alone differs");
    }
    import_round_trip(mesh, t, desc, &g, dt);
    dt_tensor_destroy(t);
}

/* every split of both dims on one mesh */
static void sweep(dt_mesh *mesh, const int *mshape) {
    static const int64_t shapes[][2] = { { 10, 7 }, { 1, 1 }, { 0, 5 }, { 64, 48 }, { 23, 17 }, { 5, 31 }, { 100, 3 } };
    static const int64_t blocks[] = { 1, 3, 7, 1000 };
    int ns = dtt_quick ? 4 : (int)(sizeof shapes / sizeof shapes[0]), s, o, r0, r1, c;
    for (s = 0; s < ns; s++)
        for (o = 0; o < 2; o++) { /* o = 1: [S(1), S(0)] */
            int64_t M = shapes[s][0], N = shapes[s][1];
            int d0 = o, d1 = 1 - o;
            int64_t sz0[64], sz1[64];
            /* sizes: the block-cyclic pattern, and a ragged one */
            for (r0 = 0; r0 < 6; r0++)
                for (r1 = 0; r1 < 6; r1++) {
                    dt_placement p[2];
                    int rr[2] = { r0, r1 }, e, dims[2] = { d0, d1 };
                    int64_t *szs[2] = { sz0, sz1 };
                    for (e = 0; e < 2; e++) {
                        int k = mshape[e];
                        int64_t n = dims[e] == 0 ? M : N;
                        switch (rr[e]) {
                        case 0: p[e] = dt_shard(dims[e]); break;
                        case 1: p[e] = dt_shard_balanced(dims[e]); break;
                        case 2: /* sizes in the block-cyclic pattern: ceil(n/k) each, the rest last */
                            for (c = 0; c < k; c++) {
                                int64_t b = n / k + 1, lo = c * b;
                                szs[e][c] = lo >= n ? 0 : (n - lo < b ? n - lo : b);
                            }
                            p[e] = dt_shard_sizes(dims[e], szs[e]);
                            break;
                        case 3: /* ragged sizes: everything on the last coordinate */
                            for (c = 0; c < k; c++) szs[e][c] = c == k - 1 ? n : 0;
                            p[e] = dt_shard_sizes(dims[e], szs[e]);
                            break;
                        default: p[e] = dt_shard_cyclic(dims[e], blocks[(rr[e] - 4 + s) % 4]); break;
                        }
                    }
                    check_one(mesh, mshape, M, N, p[0], p[1], (s + r0 + r1) % 2 ? DT_F32 : DT_F64);
                }
        }
}

/* block-cyclic with every source coordinate (RSRC, CSRC) on both dims */
static void sweep_src(dt_mesh *mesh, const int *mshape) {
    static const int64_t shapes[][2] = { { 10, 7 }, { 1, 1 }, { 0, 5 }, { 23, 17 }, { 64, 48 } };
    static const int64_t blocks[] = { 1, 3, 7 };
    int ns = dtt_quick ? 4 : (int)(sizeof shapes / sizeof shapes[0]), s, o, b, s0, s1;
    for (s = 0; s < ns; s++)
        for (o = 0; o < 2; o++)
            for (b = 0; b < 3; b++)
                for (s0 = 0; s0 < mshape[0]; s0++)
                    for (s1 = 0; s1 < mshape[1]; s1++) {
                        dt_placement p0 = dt_shard_cyclic_src(o, blocks[b], s0);
                        dt_placement p1 = dt_shard_cyclic_src(1 - o, blocks[(b + s) % 3], s1);
                        check_one(mesh, mshape, shapes[s][0], shapes[s][1], p0, p1, (s0 + s1) % 2 ? DT_F32 : DT_F64);
                    }
}

static int all_failed(dt_status st) {
    int bad = st != DT_OK, all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* Wrapping mistake (c): a block-cyclic array whose first block is on
   coordinate 1 (ScaLAPACK RSRC = 1), wrapped with dt_shard_cyclic (first
   block on 0) and its own NUMROC local shapes. Refused on every rank, by
   default; a rank whose shape differs names dt_shard_cyclic_src(0, 3, 1);
   the buffer untouched. The right rule wraps it with the right values. A
   src outside the mesh dim: DT_ERR_PLACEMENT. */
static void wrong_source(dt_mesh *m1) {
    const int64_t nb = 3, n = 6 * (int64_t)dtt_np + 4;
    int64_t ls, i, *full;
    double *buf, *saved;
    dt_tensor_desc d;
    dt_tensor *t = NULL;
    dt_status st;
    char want[64];
    dtt_ctx("RSRC = 1 wrapped as dt_shard_cyclic, n %lld, block %lld", (long long)n, (long long)nb);
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;  d.ndim = 1;  d.shape[0] = n;
    d.placements[0] = dt_shard_cyclic_src(0, nb, dtt_np); /* src out of range, and negative */
    CHECK_ST(dt_tensor_empty(m1, &d, &t), DT_ERR_PLACEMENT);
    CHECK(strstr(dt_last_error(), "dt_tensor_empty") && strstr(dt_last_error(), "src"), "message: %s", dt_last_error());
    d.placements[0] = dt_shard_cyclic_src(0, nb, -1);
    CHECK_ST(dt_tensor_empty(m1, &d, &t), DT_ERR_PLACEMENT);
    if (dtt_np < 2) return;
    ls = numroc(n, nb, dtt_rank, 1, dtt_np);
    buf = (double *)malloc(sizeof(double) * (size_t)(ls + 1));
    saved = (double *)malloc(sizeof(double) * (size_t)(ls + 1));
    full = (int64_t *)malloc(sizeof(double) * (size_t)n);
    for (i = 0; i < ls; i++) buf[i] = (double)indxl2g(i, nb, dtt_rank, 1, dtt_np);
    memcpy(saved, buf, sizeof(double) * (size_t)ls);
    d.placements[0] = dt_shard_cyclic(0, nb);
    d.local_shape = &ls;
    st = dt_tensor_from_local(m1, &d, buf, DT_BORROW, &t);
    CHECK(all_failed(st), "some rank accepted the wrong source: %s", dt_status_string(st));
    CHECK(t == NULL, "a tensor was made");
    CHECK_ERRMSG("dt_tensor_from_local");
    snprintf(want, sizeof want, "dt_shard_cyclic_src(0, %lld, 1)", (long long)nb);
    if (ls != numroc(n, nb, dtt_rank, 0, dtt_np))
        CHECK(strstr(dt_last_error(), want) != NULL, "the message should name %s: %s", want, dt_last_error());
    CHECK(memcmp(saved, buf, sizeof(double) * (size_t)ls) == 0, "the buffer changed");
    d.placements[0] = dt_shard_cyclic_src(0, nb, 1);
    CHECK_OK(dt_tensor_from_local(m1, &d, buf, DT_BORROW, &t));
    if (t && full) {
        double *g = (double *)full;
        char path[96];
        int pid = (int)getpid(), k;
        CHECK_OK(dt_tensor_gather(t, g));
        for (i = 0; i < n; i++)
            if (g[i] != (double)i) { CHECK(0, "gathered [%lld] = %g", (long long)i, g[i]); break; }
        /* .npy with a source: saved in global order, loaded back under each rule */
        MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
        snprintf(path, sizeof path, "/tmp/dt_test_scalapack.%d.npy", pid);
        CHECK_OK(dt_tensor_save_npy(t, path));
        for (k = 0; k < 3; k++) {
            dt_placement lp[DT_MAX_MESH_DIMS];
            dt_tensor *l = NULL;
            memset(lp, 0, sizeof lp);
            lp[0] = k == 0 ? dt_shard(0) : dt_shard_cyclic_src(0, nb, k == 1 ? 1 : dtt_np - 1);
            CHECK_OK(dt_tensor_load_npy(m1, path, lp, &l));
            if (l) {
                memset(g, 0, sizeof(double) * (size_t)n);
                CHECK_OK(dt_tensor_gather(l, g));
                for (i = 0; i < n; i++)
                    if (g[i] != (double)i) { CHECK(0, "loaded (rule %d) [%lld] = %g", k, (long long)i, g[i]); break; }
            }
            dt_tensor_destroy(l);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (dtt_rank == 0) remove(path);
    }
    dt_tensor_destroy(t);
    free(full);
    free(saved);
    free(buf);
}

/* dt_tensor_desc_from_scalapack: padded LLD, and malformed descriptors and
   grids, each DT_ERR_ARG naming the call and the entry, out untouched */
static void import_refusals(void) {
    static const struct { int k, v; const char *name; } bad[] = {
        { 0, 2, "DTYPE_" }, { 2, -1, "M_" }, { 3, -4, "N_" }, { 4, 0, "MB_" }, { 5, -3, "NB_" },
        { 6, 2, "RSRC_" }, { 6, -1, "RSRC_" }, { 7, 3, "CSRC_" }, { 7, -1, "CSRC_" }, { 8, 3, "LLD_" }, { 8, 0, "LLD_" } };
    dt_scalapack_grid g;
    dt_tensor_desc out, before;
    int desc[9] = { 1, 0, 8, 6, 2, 3, 1, 2, 10 }, d2[9];
    int64_t ls[2], lst[2];
    unsigned i;
    dtt_ctx("dt_tensor_desc_from_scalapack: padded LLD, malformed descriptors");
    memset(&g, 0, sizeof g);
    g.nprow = 2;  g.npcol = 3;  g.order[0] = 'R';  g.myrow = 1;  g.mycol = 2;
    /* process (1, 2): rows 8 in blocks of 2 from row 1: blocks 0, 2 -> 4 rows; columns 6 in blocks of 3 from column 2: block 1 -> 3 */
    CHECK_OK(dt_tensor_desc_from_scalapack(desc, &g, DT_F64, &out, ls, lst));
    CHECK(out.shape[0] == 6 && out.shape[1] == 8 && ls[0] == 3 && ls[1] == 4 && out.local_strides == lst &&
          lst[0] == 10 && lst[1] == 1 && out.local_alloc_bytes == 10 * 3 * 8 && !out.local_alloc,
          "shape %lld x %lld, local %lld x %lld, strides %lld %lld, bytes %lld", (long long)out.shape[0],
          (long long)out.shape[1], (long long)ls[0], (long long)ls[1], (long long)lst[0], (long long)lst[1],
          (long long)out.local_alloc_bytes);
    CHECK(out.placements[0].split == DT_SPLIT_CYCLIC && out.placements[0].dim == 1 && out.placements[0].block == 2 &&
          out.placements[0].src == 1 && out.placements[1].dim == 0 && out.placements[1].block == 3 &&
          out.placements[1].src == 2, "order R: [cyclic_src(1, MB, RSRC), cyclic_src(0, NB, CSRC)]");
    g.order[0] = 'C';
    CHECK_OK(dt_tensor_desc_from_scalapack(desc, &g, DT_F32, &out, NULL, NULL));
    CHECK(out.placements[0].dim == 0 && out.placements[0].src == 2 && out.placements[1].dim == 1 &&
          out.placements[1].src == 1 && !out.local_shape && !out.local_strides, "order C: [cyclic_src(0, NB, CSRC), "
          "cyclic_src(1, MB, RSRC)]");
    g.order[0] = 'R';
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memcpy(d2, desc, sizeof d2);
        d2[bad[i].k] = bad[i].v;
        memset(&out, 0x5a, sizeof out);
        memcpy(&before, &out, sizeof out);
        CHECK_ST(dt_tensor_desc_from_scalapack(d2, &g, DT_F64, &out, ls, lst), DT_ERR_ARG);
        CHECK(strstr(dt_last_error(), "dt_tensor_desc_from_scalapack") && strstr(dt_last_error(), bad[i].name),
              "desc[%d] = %d: message: %s", bad[i].k, bad[i].v, dt_last_error());
        CHECK(memcmp(&out, &before, sizeof out) == 0, "desc[%d] = %d: out written", bad[i].k, bad[i].v);
    }
    CHECK_ST(dt_tensor_desc_from_scalapack(desc, &g, DT_I32, &out, NULL, NULL), DT_ERR_DTYPE);
    CHECK_ST(dt_tensor_desc_from_scalapack(NULL, &g, DT_F64, &out, NULL, NULL), DT_ERR_ARG);
    CHECK_ST(dt_tensor_desc_from_scalapack(desc, NULL, DT_F64, &out, NULL, NULL), DT_ERR_ARG);
    CHECK_ST(dt_tensor_desc_from_scalapack(desc, &g, DT_F64, NULL, NULL, NULL), DT_ERR_ARG);
    g.order[0] = 'X';
    CHECK_ST(dt_tensor_desc_from_scalapack(desc, &g, DT_F64, &out, NULL, NULL), DT_ERR_ARG);
    CHECK(strstr(dt_last_error(), "order"), "message: %s", dt_last_error());
    g.order[0] = 'R';  g.nprow = 0;
    CHECK_ST(dt_tensor_desc_from_scalapack(desc, &g, DT_F64, &out, NULL, NULL), DT_ERR_ARG);
    g.nprow = 2;  g.myrow = 2;
    CHECK_ST(dt_tensor_desc_from_scalapack(desc, &g, DT_F64, &out, NULL, NULL), DT_ERR_ARG);
    CHECK(strstr(dt_last_error(), "myrow"), "message: %s", dt_last_error());
    g.myrow = g.mycol = -1; /* outside the grid: no local part, any LLD >= 1 */
    desc[8] = 1;
    CHECK_OK(dt_tensor_desc_from_scalapack(desc, &g, DT_F64, &out, ls, lst));
    CHECK(ls[0] == 0 && ls[1] == 0 && !out.local_strides, "outside: local %lld x %lld", (long long)ls[0],
          (long long)ls[1]);
}

static void refusals(dt_mesh *m2, dt_mesh *m1, dt_mesh *m3) {
    dt_tensor_desc d;
    dt_tensor *t = NULL;
    dt_scalapack_grid g;
    int desc[9];
    static const dt_dtype bad[] = { DT_F16, DT_BF16, DT_I32, DT_I64, DT_U8 };
    unsigned i;
    dtt_ctx("refusals");
    CHECK_ST(dt_tensor_scalapack_desc(NULL, 0, desc, &g), DT_ERR_ARG);
    CHECK_ERRMSG("dt_tensor_scalapack_desc");
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;  d.ndim = 2;  d.shape[0] = 6;  d.shape[1] = 4;
    d.placements[0] = dt_shard_cyclic(0, 2);  d.placements[1] = dt_shard_cyclic(1, 2);
    CHECK_OK(dt_tensor_empty(m2, &d, &t));
    CHECK_ST(dt_tensor_scalapack_desc(t, 0, NULL, NULL), DT_ERR_ARG);
    CHECK_ERRMSG("dt_tensor_scalapack_desc");
    dt_tensor_destroy(t);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        d.dtype = bad[i];
        CHECK_OK(dt_tensor_empty(m2, &d, &t));
        CHECK_ST(dt_tensor_scalapack_desc(t, 0, desc, &g), DT_ERR_DTYPE);
        CHECK_ERRMSG("dt_tensor_scalapack_desc");
        dt_tensor_destroy(t);
    }
    d.dtype = DT_F32;
    { /* Replicate, Partial, one dim twice */
        dt_placement pls[3][2];
        pls[0][0] = dt_replicate();              pls[0][1] = dt_shard_cyclic(1, 2);
        pls[1][0] = dt_shard_cyclic(0, 2);       pls[1][1] = dt_partial(DT_SUM);
        pls[2][0] = dt_shard_cyclic(0, 2);       pls[2][1] = dt_shard_cyclic(0, 1);
        for (i = 0; i < 3; i++) {
            d.placements[0] = pls[i][0];
            d.placements[1] = pls[i][1];
            CHECK_OK(dt_tensor_empty(m2, &d, &t));
            CHECK_ST(dt_tensor_scalapack_desc(t, 0, desc, &g), DT_ERR_PLACEMENT);
            CHECK_ERRMSG("dt_tensor_scalapack_desc");
            CHECK(strstr(dt_last_error(), "accepted") != NULL, "the message should say what is accepted: %s",
                  dt_last_error());
            dt_tensor_destroy(t);
        }
    }
    /* 1-D and 3-D tensors */
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;  d.ndim = 1;  d.shape[0] = 8;
    d.placements[0] = dt_shard_cyclic(0, 2);
    CHECK_OK(dt_tensor_empty(m2, &d, &t));
    CHECK_ST(dt_tensor_scalapack_desc(t, 0, desc, &g), DT_ERR_SHAPE);
    CHECK_ERRMSG("dt_tensor_scalapack_desc");
    dt_tensor_destroy(t);
    d.ndim = 3;  d.shape[1] = 3;  d.shape[2] = 2;
    d.placements[1] = dt_shard_cyclic(1, 1);
    CHECK_OK(dt_tensor_empty(m2, &d, &t));
    CHECK_ST(dt_tensor_scalapack_desc(t, 0, desc, &g), DT_ERR_SHAPE);
    CHECK_ERRMSG("dt_tensor_scalapack_desc");
    dt_tensor_destroy(t);
    /* 1-D and 3-D meshes */
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;  d.ndim = 2;  d.shape[0] = 8;  d.shape[1] = 8;
    d.placements[0] = dt_shard_cyclic(0, 2);
    CHECK_OK(dt_tensor_empty(m1, &d, &t));
    CHECK_ST(dt_tensor_scalapack_desc(t, 0, desc, &g), DT_ERR_MESH);
    CHECK_ERRMSG("dt_tensor_scalapack_desc");
    dt_tensor_destroy(t);
    d.placements[1] = dt_shard_cyclic(1, 2);
    CHECK_OK(dt_tensor_empty(m3, &d, &t));
    CHECK_ST(dt_tensor_scalapack_desc(t, 0, desc, &g), DT_ERR_MESH);
    CHECK_ERRMSG("dt_tensor_scalapack_desc");
    dt_tensor_destroy(t);
    /* an extent above INT_MAX (no elements: the other dim is 0) */
    d.shape[0] = (int64_t)INT_MAX + 1;  d.shape[1] = 0;
    d.placements[0] = dt_shard_cyclic(0, 2);  d.placements[1] = dt_shard_cyclic(1, 2);
    CHECK_OK(dt_tensor_empty(m2, &d, &t));
    CHECK_ST(dt_tensor_scalapack_desc(t, 0, desc, &g), DT_ERR_SHAPE);
    CHECK_ERRMSG("dt_tensor_scalapack_desc");
    CHECK(strstr(dt_last_error(), "2147483648") != NULL, "the message should name the extent: %s", dt_last_error());
    dt_tensor_destroy(t);
    /* a cyclic block longer than an int, on a short extent, is the extent */
    d.shape[0] = 5;  d.shape[1] = 3;
    d.placements[0] = dt_shard_cyclic(0, (int64_t)1 << 40);
    CHECK_OK(dt_tensor_empty(m2, &d, &t));
    CHECK_OK(dt_tensor_scalapack_desc(t, 0, desc, &g));
    CHECK(desc[5] == 5, "NB %d, want 5 (the extent)", desc[5]);
    dt_tensor_destroy(t);
}

int main(int argc, char **argv) {
    int fac[64 * DT_MAX_MESH_DIMS], nf, f;
    dt_mesh_desc md;
    dt_mesh *m1, *m2, *m3;
    dtt_init(&argc, &argv, "test_scalapack");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    nf = dtt_factorizations(dtt_np, 2, fac, 64);
    for (f = 0; f < nf; f++) {
        dt_mesh *m;
        memset(&md, 0, sizeof md);
        md.ndim = 2;  md.shape[0] = fac[f * DT_MAX_MESH_DIMS];  md.shape[1] = fac[f * DT_MAX_MESH_DIMS + 1];
        CHECK_OK(dt_mesh_create(g_comm, &md, &m));
        sweep(m, md.shape);
        sweep_src(m, md.shape);
        dt_mesh_destroy(m);
    }
    if (dtt_np >= 3) { /* a 1 x 2 mesh of ranks 1 and 2: the others are outside */
        static const int ranks[2] = { 1, 2 };
        dt_mesh *m;
        memset(&md, 0, sizeof md);
        md.ndim = 2;  md.shape[0] = 1;  md.shape[1] = 2;  md.ranks = ranks;
        CHECK_OK(dt_mesh_create(g_comm, &md, &m));
        sweep(m, md.shape);
        dt_mesh_destroy(m);
    }
    memset(&md, 0, sizeof md);
    md.ndim = 1;  md.shape[0] = dtt_np;
    CHECK_OK(dt_mesh_create(g_comm, &md, &m1));
    md.ndim = 2;  md.shape[0] = 1;  md.shape[1] = dtt_np;
    CHECK_OK(dt_mesh_create(g_comm, &md, &m2));
    md.ndim = 3;  md.shape[0] = 1;  md.shape[1] = 1;  md.shape[2] = dtt_np;
    CHECK_OK(dt_mesh_create(g_comm, &md, &m3));
    refusals(m2, m1, m3);
    wrong_source(m1);
    import_refusals();
    dt_mesh_destroy(m3);
    dt_mesh_destroy(m2);
    dt_mesh_destroy(m1);
    dt_comm_destroy(g_comm);
    return dtt_finish();
}
