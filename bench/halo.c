/* bench/halo.c -- dt_halo_exchange and dt_stencil_apply against a
   hand-written MPI halo exchange moving the same ghost bytes.

       make bench-halo MPI=mpich            (2 ranks: bench/results/halo-mpich-np2.txt)
       mpiexec -n 2 ./build/mpich/bench_halo [--quick] [--reps N] [--sizes "256 1024"] [--widths "1 2"]
                                            [--group-sizes "128 512"]

   F64 global N x N (--sizes, default 256 512 1024 2048 4096), placements
   [Shard(0), Shard(1)] on every 2-D mesh P0 x P1 of the ranks (2 ranks: 2x1
   and 1x2), halo widths 1 and 2, both dims PERIODIC, faces only (no
   corners: a star stencil). Per rank, per exchange, both sides move the
   same ghost bytes: 2 * w * (local rows + local cols) * 8.

     dt        dt_halo_exchange(t): copies t's interior into its ghosted
               block, then fills the ghosts (one packed message per
               neighbour rank, Isend/Irecv; a periodic dim that is not
               sharded is a local copy)
     hand      what a simulation code writes: the field lives in a ghosted
               array; MPI_Type_vector row and column faces, 4 MPI_Irecv +
               4 MPI_Isend to the Cartesian neighbours, MPI_Waitall (a
               neighbour that is this rank itself: a local copy instead)
     hand+cp   hand plus the interior copy into the ghosted array (memcpy
               per row), i.e. the same work as dt: like for like
     step dt   dt_stencil_apply(x, 5-point, &y): exchange begun, interior
               cells computed while the messages fly, exchange ended, rim
     step hand hand exchange on the ghosted array, then the same 5-point
               loop (the same callback, so the arithmetic is identical)

   Checked before timing: dt's ghosted block equals the hand-written ghosted
   array on every non-corner cell, and the two stencil outputs are bitwise
   equal (exit status 1 otherwise). Method as bench/redistribute.c: one
   untimed warm-up of each side, then --reps repetitions of all the sides
   in a rotating order (repetition k starts with side k mod 5, so none
   always runs on caches another left warm), each preceded by a barrier, timed with MPI_Wtime and reduced to the
   max over ranks; the table shows medians (microseconds) and ratios
   dt / hand. --quick: sizes 64 128, 5 repetitions (CI).

   Then a row per --group-sizes N (default 128 512; --quick 64): 15 fields
   of mixed centring at depth 2 exchanged as one dt_halo_group, one by one,
   and by a hand-written exchange packing all fields into one message per
   direction (run_group, below); ratios group / hand and group / one; on
   both orientations of the mesh (faces as rows, then as columns).

   Then a row per --sizes N: width 1 of a width-2 halo
   (dt_halo_exchange_layers) against a width-1 halo's exchange of the same
   field (run_layers); ratio layers / w1. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "bench/bench.h"
#include "bench/ghosted.h"

#include <stdlib.h>
#include <string.h>

/* the interior (contiguous lx x ly) into the ghosted array */
static void hand_copy_in(const hand *h, double *g, const double *x) {
    int64_t i;
    for (i = 0; i < h->lx; i++) memcpy(AT(h, g, i, 0), x + i * h->ly, (size_t)h->ly * sizeof(double));
}

static void hand_step(const hand *h, double *g, double *out, double r) {
    dt_stencil_block b;
    memset(&b, 0, sizeof b);
    b.dtype = DT_F64; b.ndim = 2;
    b.in = g; b.out = out;
    b.in_stride[0] = h->gy; b.in_stride[1] = 1;
    b.out_stride[0] = h->ly; b.out_stride[1] = 1;
    b.width[0] = b.width[1] = h->w;
    b.ext[0] = b.local_shape[0] = h->lx;
    b.ext[1] = b.local_shape[1] = h->ly;
    hand_exchange(h, g);
    five(&b, &r);
}

/* ---------------------------------------------------------------- the cases */

enum { A_DT, B_HAND, C_HANDCP, S_DT, S_HAND, NSIDE };

typedef struct result { int p0, p1; int64_t n, w, lx, ly; double med[NSIDE]; } result;

static double timed_max(double t0) { return max_over_ranks(MPI_Wtime() - t0); }

static int run_case(dt_comm *comm, int p0, int p1, int64_t n, int64_t w, int reps, result *res) {
    dt_mesh *mesh;
    dt_tensor_desc td;
    dt_tensor *x = NULL, *y = NULL;
    dt_halo_desc hd;
    MPI_Comm cart;
    int dims[2], periods[2] = {1, 1}, coords[2], k, bad = 0, side;
    int64_t sh[2], off[2], gsh[2], i, j;
    hand h;
    double r = 0.2, *t[NSIDE], *hout, *x0, *hg;
    mesh = grid_mesh(comm, p0, p1, n, &td);
    CHECK(dt_tensor_empty(mesh, &td, &x));
    dt_tensor_local_shape(x, sh);
    dt_tensor_local_offset(x, off);
    x0 = (double *)dt_tensor_data(x);
    for (i = 0; i < sh[0]; i++)
        for (j = 0; j < sh[1]; j++) x0[i * sh[1] + j] = val(off[0] + i, off[1] + j, n);
    memset(&hd, 0, sizeof hd);
    hd.width[0] = hd.width[1] = w;
    hd.boundary[0] = hd.boundary[1] = DT_BOUNDARY_PERIODIC;
    CHECK(dt_tensor_set_halo(x, &hd));

    /* the same rank grid: mesh rank = row-major (coord0, coord1) = MPI_Cart's order */
    dims[0] = p0; dims[1] = p1;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 2, coords);
    hand_init(&h, cart, sh[0], sh[1], w);
    hg = hand_array(&h);
    hout = (double *)xmalloc((size_t)(sh[0] * sh[1]) * sizeof(double));

    /* warm-up + check: ghosts (non-corner cells) and stencil outputs */
    CHECK(dt_halo_exchange(x));
    hand_copy_in(&h, hg, x0);
    hand_exchange(&h, hg);
    {
        const double *gb = (const double *)dt_tensor_ghosted_data(x, gsh);
        for (i = 0; i < gsh[0]; i++)
            for (j = 0; j < gsh[1]; j++) {
                int outi = i < w || i >= w + sh[0], outj = j < w || j >= w + sh[1];
                if (outi && outj) continue;
                if (gb[i * gsh[1] + j] != hg[i * h.gy + j] && bad++ < 3)
                    fprintf(stderr, "[%d] mesh %dx%d n %lld w %lld: ghosted cell (%lld, %lld): dt %g hand %g\n", rank,
                            p0, p1, (long long)n, (long long)w, (long long)i, (long long)j, gb[i * gsh[1] + j],
                            hg[i * h.gy + j]);
            }
    }
    CHECK(dt_stencil_apply(x, five, &r, &y));
    hand_step(&h, hg, hout, r);
    if (memcmp(dt_tensor_data(y), hout, (size_t)(sh[0] * sh[1]) * sizeof(double)) && bad++ < 3)
        fprintf(stderr, "[%d] mesh %dx%d n %lld w %lld: stencil outputs differ\n", rank, p0, p1, (long long)n,
                (long long)w);

    for (side = 0; side < NSIDE; side++) t[side] = (double *)xmalloc((size_t)reps * sizeof(double));
    /* the sides in a rotating order (repetition k starts with side k mod NSIDE): a side that
       follows another reads what that one left in the caches, and no side always goes first */
    for (k = 0; k < reps; k++) {
        int q;
        for (q = 0; q < NSIDE; q++) {
            double t0;
            side = (k + q) % NSIDE;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            switch (side) {
            case A_DT: CHECK(dt_halo_exchange(x)); break;
            case B_HAND: hand_exchange(&h, hg); break;
            case C_HANDCP: hand_copy_in(&h, hg, x0); hand_exchange(&h, hg); break;
            case S_DT: CHECK(dt_stencil_apply(x, five, &r, &y)); break;
            default: hand_step(&h, hg, hout, r); break;
            }
            t[side][k] = timed_max(t0);
        }
    }
    res->p0 = p0; res->p1 = p1; res->n = n; res->w = w; res->lx = sh[0]; res->ly = sh[1];
    for (side = 0; side < NSIDE; side++) { res->med[side] = median(t[side], reps) * 1e6; free(t[side]); }

    free(hout);
    free(hg);
    hand_free(&h);
    MPI_Comm_free(&cart);
    dt_tensor_destroy(y);
    dt_tensor_destroy(x);
    dt_mesh_destroy(mesh);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return bad == 0;
}


/* ---------------------------------------------------------------- 15 fields, one group */

/* 15 F64 fields of a staggered grid on an N x N mesh of cells -- 5 cell
   centred [N, N], 5 x-face [N+1, N], 5 y-face [N, N+1] -- each a ghosted
   array of depth 2 wrapped in place (dt_tensor_from_local, local_ghost),
   periodic, faces only. Sides, on the same arrays:
     group     dt_halo_group_exchange of the 15 (one message per neighbour rank)
     one       dt_halo_exchange_begin of each, then dt_halo_exchange_end of each
     hand      what a code that groups by hand writes: per Cartesian direction
               one buffer holding the faces of all 15 fields, packed by loops,
               4 MPI_Irecv + 4 MPI_Isend, MPI_Waitall, unpacked by loops (a
               direction whose neighbour is this rank: unpacked from the send
               buffer); on separate copies of the arrays
   Checked before timing: every non-corner ghost cell of the group's arrays
   equals the hand-written one's. */
#define GF 15
#define GW 2
enum { G_GROUP, G_ONE, G_HAND, NG };

typedef struct gfield {
    int64_t lx, ly, gy, n0, n1;      /* interior, ghosted row length, global shape */
    double *a, *h;                   /* the dt array (wrapped), the hand array     */
    dt_tensor *t;
} gfield;

#define GAT(f, g, i, j) ((g) + ((i) + GW) * (f)->gy + (j) + GW) /* interior coordinates */

typedef struct ghand {
    int nb[2][2];                    /* neighbours: [dim][0 lower, 1 upper] */
    double *sb[2][2], *rb[2][2];     /* per direction: all fields' faces    */
    int64_t cnt[2];                  /* doubles per direction along dim d    */
    MPI_Comm cart;
    int me;
} ghand;

/* face slab along dim d of field f: rows/cols [s, s + GW) of the interior along d, all of the other */
static void gh_slab(const gfield *f, int d, int64_t s, double *arr, double *buf, int pack) {
    int64_t i, j, ni = d == 0 ? GW : f->lx, nj = d == 0 ? f->ly : GW;
    for (i = 0; i < ni; i++)
        for (j = 0; j < nj; j++) {
            double *c = GAT(f, arr, d == 0 ? s + i : i, d == 0 ? j : s + j);
            if (pack) *buf++ = *c;
            else *c = *buf++;
        }
}

static void gh_exchange(ghand *x, gfield *fs) {
    MPI_Request rq[8];
    MPI_Status sts[8];
    int nrq = 0, d, s, k;
    for (d = 0; d < 2; d++)
        for (s = 0; s < 2; s++)
            if (x->nb[d][s] != x->me)
                MPI_Irecv(x->rb[d][s], (int)x->cnt[d], MPI_DOUBLE, x->nb[d][s], 2 * d + (1 - s), x->cart, &rq[nrq++]);
    for (d = 0; d < 2; d++)
        for (s = 0; s < 2; s++) { /* s = 0: my first GW to the lower neighbour (its upper ghosts) */
            double *b = x->sb[d][s];
            for (k = 0; k < GF; k++) {
                const gfield *f = &fs[k];
                gh_slab(f, d, s ? (d ? f->ly : f->lx) - GW : 0, f->h, b, 1);
                b += d == 0 ? GW * f->ly : f->lx * GW;
            }
            if (x->nb[d][s] != x->me)
                MPI_Isend(x->sb[d][s], (int)x->cnt[d], MPI_DOUBLE, x->nb[d][s], 2 * d + s, x->cart, &rq[nrq++]);
        }
    MPI_Waitall(nrq, rq, sts);
    for (d = 0; d < 2; d++)
        for (s = 0; s < 2; s++) { /* from the lower neighbour (s = 0): my lower ghosts */
            const double *b = x->nb[d][s] != x->me ? x->rb[d][s] : x->sb[d][1 - s];
            for (k = 0; k < GF; k++) {
                gfield *f = &fs[k];
                gh_slab(f, d, s ? (d ? f->ly : f->lx) : -GW, f->h, (double *)b, 0);
                b += d == 0 ? GW * f->ly : f->lx * GW;
            }
        }
}

/* write and read 8 MiB of other memory: what the previous exchange touched leaves the core's caches
   (4 times this machine's 2 MiB of L2 a core), as a step's compute between two exchanges does */
static void sweep_caches(void) {
    static unsigned char *junk;
    static volatile unsigned sink;
    size_t n = (size_t)8 << 20, i;
    unsigned acc = 0;
    if (!junk && !(junk = (unsigned char *)malloc(n))) return;
    memset(junk, (int)(sink & 0xff), n);
    for (i = 0; i < n; i += 64) acc += junk[i];
    sink = acc;
}

static int run_group(dt_comm *comm, int p0, int p1, int64_t n, int reps, double *med) {
    dt_mesh_desc md;
    dt_mesh *mesh;
    gfield fs[GF];
    dt_tensor *ts[GF];
    dt_halo_group *g = NULL;
    dt_halo_desc hd;
    ghand x;
    int dims[2], periods[2] = {1, 1}, coords[2], k, d, s, side, bad = 0;
    int64_t i, j, room[2] = {GW, GW};
    double *t[NG];
    memset(&md, 0, sizeof md);
    md.ndim = 2; md.shape[0] = p0; md.shape[1] = p1;
    CHECK(dt_mesh_create(comm, &md, &mesh));
    memset(&hd, 0, sizeof hd);
    hd.width[0] = hd.width[1] = GW;
    hd.boundary[0] = hd.boundary[1] = DT_BOUNDARY_PERIODIC;
    dims[0] = p0; dims[1] = p1;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &x.cart);
    MPI_Cart_coords(x.cart, rank, 2, coords);
    MPI_Comm_rank(x.cart, &x.me);
    MPI_Cart_shift(x.cart, 0, 1, &x.nb[0][0], &x.nb[0][1]);
    MPI_Cart_shift(x.cart, 1, 1, &x.nb[1][0], &x.nb[1][1]);
    x.cnt[0] = x.cnt[1] = 0;
    for (k = 0; k < GF; k++) {
        gfield *f = &fs[k];
        dt_tensor_desc td;
        dt_tensor *e = NULL;
        int64_t ls[2], lo[2], gn;
        memset(&td, 0, sizeof td);
        td.dtype = DT_F64; td.ndim = 2;
        td.shape[0] = f->n0 = n + (k % 3 == 1);
        td.shape[1] = f->n1 = n + (k % 3 == 2);
        td.placements[0] = dt_shard(0); td.placements[1] = dt_shard(1);
        CHECK(dt_tensor_empty(mesh, &td, &e)); /* (its local box) */
        dt_tensor_local_shape(e, ls);
        dt_tensor_local_offset(e, lo);
        dt_tensor_destroy(e);
        f->lx = ls[0]; f->ly = ls[1]; f->gy = ls[1] + 2 * GW;
        gn = (ls[0] + 2 * GW) * f->gy;
        f->a = (double *)xmalloc((size_t)gn * sizeof(double));
        f->h = (double *)xmalloc((size_t)gn * sizeof(double));
        for (i = 0; i < gn; i++) f->a[i] = -1.0;
        for (i = 0; i < ls[0]; i++)
            for (j = 0; j < ls[1]; j++) *GAT(f, f->a, i, j) = val(lo[0] + i, lo[1] + j, n) + k;
        memcpy(f->h, f->a, (size_t)gn * sizeof(double));
        td.local_shape = ls;
        td.local_ghost = room;
        td.local_alloc = f->a;
        td.local_alloc_bytes = gn * (int64_t)sizeof(double);
        CHECK(dt_tensor_from_local(mesh, &td, f->a, DT_BORROW, &f->t));
        CHECK(dt_tensor_set_halo(f->t, &hd));
        ts[k] = f->t;
        x.cnt[0] += GW * f->ly;
        x.cnt[1] += f->lx * GW;
    }
    for (d = 0; d < 2; d++)
        for (s = 0; s < 2; s++) {
            x.sb[d][s] = (double *)xmalloc((size_t)(x.cnt[d] ? x.cnt[d] : 1) * sizeof(double));
            x.rb[d][s] = (double *)xmalloc((size_t)(x.cnt[d] ? x.cnt[d] : 1) * sizeof(double));
        }
    CHECK(dt_halo_group_create(ts, GF, &g));

    /* warm-up + check: every non-corner ghost cell */
    CHECK(dt_halo_group_exchange(g));
    gh_exchange(&x, fs);
    for (k = 0; k < GF; k++) {
        const gfield *f = &fs[k];
        for (i = -GW; i < f->lx + GW; i++)
            for (j = -GW; j < f->ly + GW; j++) {
                int oi = i < 0 || i >= f->lx, oj = j < 0 || j >= f->ly;
                if (oi && oj) continue;
                if (*GAT(f, f->a, i, j) != *GAT(f, f->h, i, j) && bad++ < 3)
                    fprintf(stderr, "[%d] group n %lld field %d: ghost (%lld, %lld): dt %g hand %g\n", rank,
                            (long long)n, k, (long long)i, (long long)j, *GAT(f, f->a, i, j), *GAT(f, f->h, i, j));
            }
    }
    for (side = 0; side < NG; side++) t[side] = (double *)xmalloc((size_t)reps * sizeof(double));
    for (i = 0; i < reps; i++) {
        int q;
        for (q = 0; q < NG; q++) {
            double t0;
            side = (int)((i + q) % NG);
            /* each exchange after a sweep over other memory, as after a time step's compute: the group and
               the one-by-one exchange the same arrays, and in the rotation one-by-one came right after the
               group twice as often as the other way round, finding the faces in cache */
            sweep_caches();
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            if (side == G_GROUP) CHECK(dt_halo_group_exchange(g));
            else if (side == G_ONE) {
                for (k = 0; k < GF; k++) CHECK(dt_halo_exchange_begin(ts[k]));
                for (k = 0; k < GF; k++) CHECK(dt_halo_exchange_end(ts[k]));
            } else gh_exchange(&x, fs);
            t[side][i] = timed_max(t0);
        }
    }
    for (side = 0; side < NG; side++) { med[side] = median(t[side], reps) * 1e6; free(t[side]); }
    dt_halo_group_destroy(g);
    for (k = 0; k < GF; k++) {
        dt_tensor_destroy(fs[k].t);
        free(fs[k].a);
        free(fs[k].h);
    }
    for (d = 0; d < 2; d++)
        for (s = 0; s < 2; s++) { free(x.sb[d][s]); free(x.rb[d][s]); }
    MPI_Comm_free(&x.cart);
    dt_mesh_destroy(mesh);
    (void)coords;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return bad == 0;
}

/* Width 1 of a width-2 halo (dt_halo_exchange_layers) against a width-1
   halo's exchange of the same field: the same messages, so the same time
   is the target. Alternated, each after a barrier; medians in us. */
static int run_layers(dt_comm *comm, int p0, int p1, int64_t n, int reps, double *med) {
    dt_mesh *mesh;
    dt_tensor_desc td;
    dt_tensor *x2 = NULL, *x1 = NULL;
    dt_halo_desc hd;
    int64_t one[2] = {1, 1}, g1[2], g2[2], i, j;
    double *t[2];
    int k, side, bad = 0;
    mesh = grid_mesh(comm, p0, p1, n, &td);
    CHECK(dt_tensor_empty(mesh, &td, &x2));
    CHECK(dt_tensor_empty(mesh, &td, &x1));
    memset(&hd, 0, sizeof hd);
    hd.boundary[0] = hd.boundary[1] = DT_BOUNDARY_PERIODIC;
    hd.width[0] = hd.width[1] = 2;
    CHECK(dt_tensor_set_halo(x2, &hd));
    hd.width[0] = hd.width[1] = 1;
    CHECK(dt_tensor_set_halo(x1, &hd));
    {
        int64_t sh[2], off[2];
        double *a = (double *)dt_tensor_data(x2), *b = (double *)dt_tensor_data(x1);
        dt_tensor_local_shape(x2, sh);
        dt_tensor_local_offset(x2, off);
        for (i = 0; i < sh[0] * sh[1]; i++) a[i] = b[i] = val(off[0] + i / sh[1], off[1] + i % sh[1], n);
    }
    CHECK(dt_halo_exchange_layers(x2, one)); /* (warm-up; the first use plans width 1) */
    CHECK(dt_halo_exchange(x1));
    { /* the width-1 ring of x2's block holds what x1's block holds (corners aside) */
        const double *a = (const double *)dt_tensor_ghosted_data(x2, g2), *b = (const double *)dt_tensor_ghosted_data(x1, g1);
        for (i = 0; i < g1[0]; i++)
            for (j = 0; j < g1[1]; j++)
                if (!((i == 0 || i == g1[0] - 1) && (j == 0 || j == g1[1] - 1)) &&
                    a[(i + 1) * g2[1] + j + 1] != b[i * g1[1] + j])
                    bad++;
    }
    for (side = 0; side < 2; side++) t[side] = (double *)xmalloc((size_t)reps * sizeof(double));
    for (k = 0; k < reps; k++)
        for (side = 0; side < 2; side++) {
            int s = (k + side) % 2;
            double t0;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            if (s == 0) CHECK(dt_halo_exchange_layers(x2, one));
            else CHECK(dt_halo_exchange(x1));
            t[s][k] = timed_max(t0);
        }
    for (side = 0; side < 2; side++) { med[side] = median(t[side], reps) * 1e6; free(t[side]); }
    dt_tensor_destroy(x2);
    dt_tensor_destroy(x1);
    dt_mesh_destroy(mesh);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return bad == 0;
}

int main(int argc, char **argv) {
    int64_t sizes[16] = {256, 512, 1024, 2048, 4096}, widths[4] = {1, 2}, gsizes[16] = {128, 512};
    int nsizes = 5, nwidths = 2, ngsizes = 2, reps = 0, quick = 0, i, a, si, wi, ok = 1;
    dt_comm *comm;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            quick = 1; nsizes = 2; sizes[0] = 64; sizes[1] = 128; ngsizes = 1; gsizes[0] = 64;
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--group-sizes") && i + 1 < argc) {
            ngsizes = parse_list(argv[++i], gsizes, 16);
        } else if ((!strcmp(argv[i], "--sizes") || !strcmp(argv[i], "--widths")) && i + 1 < argc) {
            if (argv[i][2] == 'w') nwidths = parse_list(argv[++i], widths, 4);
            else nsizes = parse_list(argv[++i], sizes, 16);
        } else {
            if (rank == 0)
                fprintf(stderr, "usage: bench_halo [--quick] [--reps N] [--sizes \"256 1024\"] [--widths \"1 2\"] "
                                "[--group-sizes \"128 512\"]\n");
            MPI_Finalize();
            return 2;
        }
    }
    CHECK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    if (rank == 0) {
        printf("# bench_halo: %d ranks; F64 N x N global, [Shard(0), Shard(1)], periodic, faces only (no corners)\n",
               nranks);
        printf("# medians in microseconds (max over ranks per repetition); ratio = dt / hand\n");
        printf("# dt = dt_halo_exchange (includes the interior copy into the ghosted block); hand = MPI_Type_vector +\n"
               "# Isend/Irecv on a ghosted array; hand+cp = hand + the interior copy; step = one 5-point stencil step\n"
               "# (dt_stencil_apply, overlapped, vs hand exchange then loop); ghostKiB = ghost bytes filled per rank\n");
        printf("%-6s %5s %2s %11s %8s %10s %10s %10s %7s %7s %11s %11s %7s\n", "mesh", "N", "w", "local", "ghostKiB",
               "dt", "hand", "hand+cp", "dt/hand", "dt/h+cp", "step dt", "step hand", "ratio");
    }
    for (a = 1; a <= nranks; a++) {
        if (nranks % a) continue;
        for (si = 0; si < nsizes; si++)
            for (wi = 0; wi < nwidths; wi++) {
                int64_t n = sizes[si], w = widths[wi];
                int rp = reps ? reps : quick ? 5 : n >= 2048 ? 21 : n >= 1024 ? 41 : 101;
                result res;
                char mesh[16], loc[24];
                if (n / a < w || n / (nranks / a) < w) continue;  /* shards narrower than the halo */
                ok &= run_case(comm, a, nranks / a, n, w, rp, &res);
                if (rank == 0) {
                    snprintf(mesh, sizeof mesh, "%dx%d", res.p0, res.p1);
                    snprintf(loc, sizeof loc, "%lldx%lld", (long long)res.lx, (long long)res.ly);
                    printf("%-6s %5lld %2lld %11s %8.1f %10.1f %10.1f %10.1f %7.2f %7.2f %11.1f %11.1f %7.2f\n", mesh,
                           (long long)n, (long long)w, loc, 2.0 * w * (res.lx + res.ly) * 8 / 1024, res.med[A_DT],
                           res.med[B_HAND], res.med[C_HANDCP], res.med[A_DT] / res.med[B_HAND],
                           res.med[A_DT] / res.med[C_HANDCP], res.med[S_DT], res.med[S_HAND],
                           res.med[S_DT] / res.med[S_HAND]);
                    fflush(stdout);
                }
            }
    }
    { /* 15 fields of mixed centring at depth 2, on the squarest 2-D mesh of the ranks, both ways round: split
         along dim 0 the faces are contiguous rows, along dim 1 strided columns */
        int p0 = 1, o;
        for (a = 1; a * a <= nranks; a++)
            if (nranks % a == 0) p0 = a;
        if (rank == 0) {
            printf("# 15 F64 fields (5 cells [N,N], 5 x-faces [N+1,N], 5 y-faces [N,N+1]), ghosted arrays, width 2,\n"
                   "# periodic, faces only, meshes %dx%d and %dx%d: group = dt_halo_group_exchange; one = the 15 one\n"
                   "# by one (all _begin, then all _end); hand = all fields packed into one buffer per direction,\n"
                   "# Isend/Irecv\n", nranks / p0, p0, p0, nranks / p0);
            printf("%-6s %5s %10s %10s %10s %8s %8s\n", "mesh", "N", "group", "one", "hand", "grp/hand", "grp/one");
        }
        for (o = 0; o < (p0 * p0 == nranks ? 1 : 2); o++) {
            int q0 = o ? p0 : nranks / p0, q1 = nranks / q0;
            for (si = 0; si < ngsizes; si++) {
                double med[NG];
                int64_t n = gsizes[si];
                int rp = reps ? reps : quick ? 5 : n >= 1024 ? 41 : 101;
                if (n / q0 < GW || n / q1 < GW) continue;
                ok &= run_group(comm, q0, q1, n, rp, med);
                if (rank == 0) {
                    char mesh[16];
                    snprintf(mesh, sizeof mesh, "%dx%d", q0, q1);
                    printf("%-6s %5lld %10.1f %10.1f %10.1f %8.2f %8.2f\n", mesh, (long long)n, med[G_GROUP],
                           med[G_ONE], med[G_HAND], med[G_GROUP] / med[G_HAND], med[G_GROUP] / med[G_ONE]);
                    fflush(stdout);
                }
            }
        }
    }
    { /* width 1 of a width-2 halo against a width-1 halo, on the squarest mesh */
        int p0 = 1;
        for (a = 1; a * a <= nranks; a++)
            if (nranks % a == 0) p0 = a;
        if (rank == 0) {
            printf("# one F64 field, periodic, mesh %dx%d: layers = dt_halo_exchange_layers(width 1) of a width-2\n"
                   "# halo; w1 = dt_halo_exchange of a width-1 halo (target: layers / w1 <= 1.05)\n", nranks / p0, p0);
            printf("%-6s %5s %10s %10s %8s\n", "mesh", "N", "layers", "w1", "lay/w1");
        }
        for (si = 0; si < nsizes; si++) {
            double med[2];
            int64_t n = sizes[si];
            int rp = reps ? reps : quick ? 5 : n >= 1024 ? 41 : 101;
            if (n / p0 < 2 || n / (nranks / p0) < 2) continue;
            ok &= run_layers(comm, nranks / p0, p0, n, rp, med);
            if (rank == 0) {
                char mesh[16];
                snprintf(mesh, sizeof mesh, "%dx%d", nranks / p0, p0);
                printf("%-6s %5lld %10.1f %10.1f %8.2f\n", mesh, (long long)n, med[0], med[1], med[0] / med[1]);
                fflush(stdout);
            }
        }
    }
    if (rank == 0) printf("results agree (ghost cells and stencil outputs bitwise): %s\n", ok ? "yes" : "NO: FAILED");
    dt_comm_destroy(comm);
    MPI_Finalize();
    return ok ? 0 : 1;
}
