/* bench/strided.c -- redistribution of a padded array: the
   user's storage with a padded leading dimension, wrapped as it is
   (dt_tensor_from_local, desc.local_strides), against the same
   redistribution of a contiguous tensor and against hand-written MPI on
   the same padded arrays.

       make bench-strided MPI=openmpi       (2 ranks)
       mpiexec -n 2 ./build/openmpi/bench_strided [--quick] [--reps N] [--sizes "256 1024"]

   F64 global N x N (--sizes, default 256 512 1024 2048 4096), a row slab
   [Shard(0)] becoming a column slab [Shard(1)] (the transpose every
   pencil/slab code writes). Each rank's source is rows x (N + PAD) with
   the row padded by PAD = 8 elements, its target N x (cols + PAD). Sides:

     contig   dt_tensor_redistribute of contiguous tensors (no padding), the
              target *out reused: the library's own speed on this transition
     strided  the same from the padded source into the padded target
              (both DT_BORROW with local_strides = {ld, 1}): packed straight
              from the strides, unpacked straight into them
     staged   what a code without strides does: copy the padded source into
              a contiguous buffer, redistribute contiguous, copy the result
              into the padded target
     hand     MPI_Alltoallw with MPI_Type_create_subarray blocks straight
              from and into the padded arrays (one block per peer)

   Checked before timing: every side's target equals the closed form and
   the padding still holds its sentinel. Method as bench/stencil.c: one
   untimed warm-up of every side, then --reps repetitions of all sides in
   a rotating order, each after a barrier, timed with MPI_Wtime and reduced
   to the max over ranks; medians (microseconds) and ratios strided /
   contig, strided / hand, staged / strided. --quick: sizes 64 128, 5
   repetitions. Exit status 1 if a check fails. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "bench/bench.h"

#include <stdlib.h>
#include <string.h>

enum { PAD = 8 };
static const double SENTINEL = -7.0;

static double val(int64_t i, int64_t j, int64_t n) { return (double)((i * n + j) % 1021) * 0.25; }

enum { CONTIG, STRIDED, STAGED, HAND, NSIDE };
static const char *side_name[NSIDE] = { "contig", "strided", "staged", "hand" };

typedef struct slab { int64_t lo, n; } slab;

typedef struct ccase {
    int64_t n, ldsrc, lddst;
    slab rows, cols;                         /* mine: source rows, target cols */
    double *src, *dst;                       /* padded user arrays             */
    double *csrc, *cdst;                     /* contiguous (staged side)       */
    dt_tensor *tc, *oc;                      /* contiguous tensors             */
    dt_tensor *ts, *os;                      /* strided tensors                */
    int *scnt, *rcnt, *disp;
    MPI_Datatype *st, *rt;
} ccase;

static slab slab_of(int64_t n, int k, int r) {
    int64_t q = n / k, e = n % k;
    slab s;
    s.lo = r * q + (r < e ? r : e);
    s.n = q + (r < e);
    return s;
}

static dt_tensor_desc desc_of(int64_t n, int dim) {
    dt_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = 2;
    d.shape[0] = d.shape[1] = n;
    d.placements[0] = dt_shard_balanced(dim);
    return d;
}

static MPI_Datatype block(int64_t rows, int64_t ld, int64_t r0, int64_t c0, int64_t nr, int64_t nc) {
    int sizes[2], sub[2], start[2];
    MPI_Datatype t;
    sizes[0] = (int)rows; sizes[1] = (int)ld;
    sub[0] = (int)nr; sub[1] = (int)nc;
    start[0] = (int)r0; start[1] = (int)c0;
    if (nr == 0 || nc == 0) { MPI_Type_dup(MPI_DOUBLE, &t); return t; } /* sent with count 0 */
    MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

static void case_init(ccase *c, dt_mesh *m, int64_t n) {
    dt_tensor_desc ds = desc_of(n, 0), dd = desc_of(n, 1);
    int64_t i, j, ls[2], st[2];
    int p;
    memset(c, 0, sizeof *c);
    c->n = n;
    c->rows = slab_of(n, nranks, rank);
    c->cols = slab_of(n, nranks, rank);
    c->ldsrc = n + PAD;
    c->lddst = c->cols.n + PAD;
    c->src = (double *)xmalloc((size_t)(c->rows.n * c->ldsrc) * sizeof(double));
    c->dst = (double *)xmalloc((size_t)(n * c->lddst) * sizeof(double));
    c->csrc = (double *)xmalloc((size_t)(c->rows.n * n) * sizeof(double));
    c->cdst = (double *)xmalloc((size_t)(n * c->cols.n) * sizeof(double));
    for (i = 0; i < c->rows.n; i++)
        for (j = 0; j < c->ldsrc; j++) c->src[i * c->ldsrc + j] = j < n ? val(c->rows.lo + i, j, n) : SENTINEL;
    CHECK(dt_tensor_empty(m, &ds, &c->tc));
    CHECK(dt_tensor_empty(m, &dd, &c->oc));
    for (i = 0; i < c->rows.n; i++)
        for (j = 0; j < n; j++) ((double *)dt_tensor_data(c->tc))[i * n + j] = val(c->rows.lo + i, j, n);
    ls[0] = c->rows.n; ls[1] = n; st[0] = c->ldsrc; st[1] = 1;
    ds.local_shape = ls;
    ds.local_strides = st;
    ds.local_alloc = c->src;
    ds.local_alloc_bytes = (int64_t)((size_t)(c->rows.n * c->ldsrc) * sizeof(double));
    CHECK(dt_tensor_from_local(m, &ds, c->src, 0, &c->ts));
    ls[0] = n; ls[1] = c->cols.n; st[0] = c->lddst; st[1] = 1;
    dd.local_shape = ls;
    dd.local_strides = st;
    dd.local_alloc = c->dst;
    dd.local_alloc_bytes = (int64_t)((size_t)(n * c->lddst) * sizeof(double));
    CHECK(dt_tensor_from_local(m, &dd, c->dst, 0, &c->os));
    c->scnt = (int *)xmalloc(3 * (size_t)nranks * sizeof(int));
    c->rcnt = c->scnt + nranks;
    c->disp = c->rcnt + nranks;
    c->st = (MPI_Datatype *)xmalloc(2 * (size_t)nranks * sizeof(MPI_Datatype));
    c->rt = c->st + nranks;
    for (p = 0; p < nranks; p++) {
        slab pr = slab_of(n, nranks, p), pc = slab_of(n, nranks, p);
        c->scnt[p] = c->rows.n && pc.n;
        c->rcnt[p] = pr.n && c->cols.n;
        c->disp[p] = 0;
        c->st[p] = block(c->rows.n, c->ldsrc, 0, pc.lo, c->rows.n, pc.n);   /* my rows x p's cols */
        c->rt[p] = block(n, c->lddst, pr.lo, 0, pr.n, c->cols.n);          /* p's rows x my cols */
    }
}

static void case_free(ccase *c) {
    int p;
    for (p = 0; p < nranks; p++) { MPI_Type_free(&c->st[p]); MPI_Type_free(&c->rt[p]); }
    dt_tensor_destroy(c->tc); dt_tensor_destroy(c->oc); dt_tensor_destroy(c->ts); dt_tensor_destroy(c->os);
    free(c->src); free(c->dst); free(c->csrc); free(c->cdst); free(c->scnt); free(c->st);
}

static void run_side(ccase *c, int s) {
    dt_placement to[DT_MAX_MESH_DIMS];
    int64_t i, j;
    memset(to, 0, sizeof to);
    to[0] = dt_shard_balanced(1);
    if (s == CONTIG) {
        CHECK(dt_tensor_redistribute(c->tc, to, &c->oc));
    } else if (s == STRIDED) {
        CHECK(dt_tensor_redistribute(c->ts, to, &c->os));
    } else if (s == STAGED) {
        dt_tensor_desc ds = desc_of(c->n, 0), dd = desc_of(c->n, 1);
        dt_tensor *a = NULL, *b = NULL;
        for (i = 0; i < c->rows.n; i++) memcpy(c->csrc + i * c->n, c->src + i * c->ldsrc, (size_t)c->n * sizeof(double));
        CHECK(dt_tensor_from_local(dt_tensor_mesh(c->tc), &ds, c->csrc, 0, &a));
        CHECK(dt_tensor_from_local(dt_tensor_mesh(c->tc), &dd, c->cdst, 0, &b));
        CHECK(dt_tensor_redistribute(a, to, &b));
        for (i = 0; i < c->n; i++)
            for (j = 0; j < c->cols.n; j++) c->dst[i * c->lddst + j] = c->cdst[i * c->cols.n + j];
        dt_tensor_destroy(a);
        dt_tensor_destroy(b);
    } else {
        MPI_Alltoallw(c->src, c->scnt, c->disp, c->st, c->dst, c->rcnt, c->disp, c->rt, MPI_COMM_WORLD);
    }
}

/* the padded target (or the contiguous one) against the closed form; padding untouched */
static int check_side(ccase *c, int s) {
    int64_t i, j, bad = 0;
    for (i = 0; i < c->n; i++)
        for (j = 0; j < (s == CONTIG ? c->cols.n : c->lddst); j++) {
            double got = s == CONTIG ? ((double *)dt_tensor_data(c->oc))[i * c->cols.n + j] : c->dst[i * c->lddst + j];
            double want = j < c->cols.n ? val(i, c->cols.lo + j, c->n) : SENTINEL;
            if (got != want) bad++;
        }
    return bad == 0;
}

int main(int argc, char **argv) {
    int64_t sizes[16];
    int nsz = 0, reps = 21, quick = 0, a, k, s, bad = 0;
    dt_comm *comm = NULL;
    dt_mesh *mesh = NULL;
    dt_mesh_desc md;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--quick")) quick = 1;
        else if (!strcmp(argv[a], "--reps") && a + 1 < argc) reps = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--sizes") && a + 1 < argc) {
            char *p = argv[++a], *e;
            while (nsz < 16 && (sizes[nsz] = strtoll(p, &e, 10)) > 0 && e != p) { nsz++; p = e; }
        }
    }
    if (!nsz) {
        if (quick) { sizes[0] = 64; sizes[1] = 128; nsz = 2; }
        else { sizes[0] = 256; sizes[1] = 512; sizes[2] = 1024; sizes[3] = 2048; sizes[4] = 4096; nsz = 5; }
    }
    if (quick) reps = 5;
    CHECK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = nranks;
    CHECK(dt_mesh_create(comm, &md, &mesh));
    if (rank == 0) {
        printf("# bench_strided: F64 N x N, [Shard(0)] -> [Shard(1)] (balanced), %d ranks, rows padded by %d, "
               "%d reps, medians of the max over ranks, microseconds\n", nranks, PAD, reps);
        printf("%6s %10s %10s %10s %10s  %14s %14s %14s\n", "N", "contig", "strided", "staged", "hand",
               "strided/contig", "strided/hand", "staged/strided");
    }
    for (k = 0; k < nsz; k++) {
        ccase c;
        double *t[NSIDE], med[NSIDE];
        int r;
        case_init(&c, mesh, sizes[k]);
        for (s = 0; s < NSIDE; s++) { /* warm-up and check */
            int i;
            for (i = 0; i < c.n * c.lddst; i++) c.dst[i] = SENTINEL;
            run_side(&c, s);
            if (!check_side(&c, s)) { fprintf(stderr, "[%d] N=%lld: %s wrong\n", rank, (long long)c.n, side_name[s]); bad = 1; }
            t[s] = (double *)xmalloc((size_t)reps * sizeof(double));
        }
        for (r = 0; r < reps; r++)
            for (a = 0; a < NSIDE; a++) {
                double t0;
                s = (a + r) % NSIDE;
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
                run_side(&c, s);
                t[s][r] = max_over_ranks(MPI_Wtime() - t0) * 1e6;
            }
        for (s = 0; s < NSIDE; s++) { med[s] = median(t[s], reps); free(t[s]); }
        if (rank == 0)
            printf("%6lld %10.1f %10.1f %10.1f %10.1f  %14.3f %14.3f %14.3f\n", (long long)c.n, med[CONTIG],
                   med[STRIDED], med[STAGED], med[HAND], med[STRIDED] / med[CONTIG], med[STRIDED] / med[HAND],
                   med[STAGED] / med[STRIDED]);
        case_free(&c);
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    dt_mesh_destroy(mesh);
    dt_comm_destroy(comm);
    if (rank == 0) printf(bad ? "# CHECK FAILED\n" : "# checks OK\n");
    MPI_Finalize();
    return bad;
}
