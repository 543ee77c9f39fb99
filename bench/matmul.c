/* bench/matmul.c -- distributed dt_matmul against ScaLAPACK's pdgemm/psgemm
   on the same ranks, the same distributed inputs and the same output
   distribution, and dt_matmul's local GEMM against bare BLIS.

       make bench-ops NP=2                     (this bench and bench/dispatch.c)
       mpiexec -n 2 ./build/mpich/bench_matmul [--sizes "256 512 1024 2048"]
               [--reps N] [--dtype f64|f32|both] [--cases "1d 2d s0r local 25d"] [--grid ROWS] [--quick]
               [--callgrind] [--csv FILE] [--shm]

   Cases (M = N = K = size; p ranks):

     1d     1-D mesh of p, A [M,K], B [K,N], C [M,N] all Shard(0) (row blocks);
            ScaLAPACK: the same row blocks on a p x 1 process grid.
     2d     2-D mesh pr x pc (the squarest factorisation of p with pr <= pc;
            1 x 2 at p = 2; --grid ROWS: pr = ROWS), A, B, C all [Shard(0), Shard(1)];
            ScaLAPACK: the same blocks on a pr x pc process grid.
     s0r    1-D mesh, A Shard(0), B Replicate -> C Shard(0) (the usual
            tensor-parallel layout; no communication needed). ScaLAPACK cannot
            hold a replicated matrix, so this compares against bare BLIS
            ?gemm on each rank's local blocks.
     local  a mesh of one rank (dt_comm_self) on every rank, all Replicate:
            dt_matmul vs bli_?gemm on the same buffers (each rank runs its own,
            both cores busy, as in the distributed cases).
     25d    (only when named) a 3-D mesh P x Q x c, all [S(0), S(1), R]:
            dt_matmul with the c copies splitting k (2.5D) and without; see
            run_layers.

   Distributions: every ScaLAPACK block size is ceil(dim / ranks along that
   dim), so the block-cyclic layout has one block per process and is exactly
   torch.chunk's block layout that dt_tensor uses; the bench checks that
   numroc gives each rank dt's local shape. ScaLAPACK is column-major and
   dt_tensor row-major, so it runs two ways: "pdgemm-T" computes
   C^T = B^T A^T directly on dt's row-major local buffers (a row-major block is
   the column-major block of the transpose; the BLACS grid is the transposed
   one, ordered so each rank keeps its blocks), and "pdgemm-N" is ScaLAPACK's
   natural orientation on column-major copies of the same blocks. The ratio
   is min(pdgemm-T, pdgemm-N) / dt (>= 1: dt_matmul is at least as fast), of
   the medians; the "min" column is the same ratio of the fastest reps (less
   sensitive to other processes on a shared machine).
   If dt_matmul returns C in another placement than the target (e.g.
   Partial), the dt time includes the dt_tensor_redistribute to the target.

   Inputs are multiples of 1/8 in [-1, 1], so every product and partial sum
   is exact in f32 and f64 (K <= 2^14): all results must agree exactly. The
   bench checks dt against both ScaLAPACK results (max abs diff over all
   elements) and against direct dot products at sample entries, and exits 1
   if anything differs.

   BLAS: BLIS for everything. The bench prints which shared object provides
   bli_dgemm (dt_matmul) and the Fortran dgemm_ that pdgemm calls (looked up
   with dlsym/dladdr in this process: the bench links -lblis before
   ScaLAPACK's own libblas.so.3, so dgemm_ binds to libblis.so.4, the same
   library). Run with BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1: one core a rank.

   --callgrind (under valgrind --tool=callgrind; bench/run.sh does it): for
   the s0r and local cases, one dt_matmul call and one bare BLIS call are
   each bracketed by CALLGRIND_ZERO_STATS / CALLGRIND_DUMP_STATS_AT, so the
   instructions of the two sides can be compared exactly, whatever the load
   (the distributed cases are not: MPI's busy-waiting makes their
   instruction counts depend on timing).

   Method: two untimed warm-ups of each side, then --reps repetitions
   alternating the sides (dt_matmul and its gather strategy take turns at
   going first: the second finds the operands in cache, worth 1-3 % at
   n = 1024); each timing is preceded by a barrier, taken with
   MPI_Wtime and reduced to the max over ranks; tables show medians.

   --shm: every mesh is made with the shared path on (dt_comm_set_shm), so
   that A, B and C live in its shared arena from the start: the streamed
   product then reads the other ranks' panels in place (no message, no
   buffer) and the gather copies them once from the owners' segments.
   Without it A and B are allocated before the arena that DTENSOR_SHM=auto
   makes at the mesh's first large redistribution, and both strategies
   move them by MPI messages.

   --csv FILE appends the raw rows of the `make bench` harness (bench.h),
   for the 1d and 2d cases in f64 whose results agree:
       pdgemm,1d|2d,<n>,ours,<dt median>,ms
       pdgemm,1d|2d,<n>,peer,<the faster of the pdgemm-T / pdgemm-N medians>,ms
   With --csv every case runs at least 5 repetitions (--quick's 3 become 5). */
#define _GNU_SOURCE 1
#include <stdlib.h>
/* every byte the library allocates, counted (the memory columns): the
   size sits in a header before the block */
static size_t mem_now = 0, mem_peak = 0;
static void *cnt_malloc(size_t n) {
    size_t *p = (size_t *)malloc(n + 16);
    if (!p) return NULL;
    p[0] = n;
    mem_now += n;
    if (mem_now > mem_peak) mem_peak = mem_now;
    return (char *)p + 16;
}
static void cnt_free(void *q) {
    if (!q) return;
    size_t *p = (size_t *)(void *)((char *)q - 16);
    mem_now -= p[0];
    free(p);
}
#define DT_MALLOC(sz) cnt_malloc(sz)
#define DT_FREE(p) cnt_free(p)
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "bench/bench.h"

#include <blis.h>
#include <dlfcn.h>
#include <valgrind/callgrind.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ScaLAPACK / BLACS (C interfaces; PBLAS's p?gemm_ are written in C) */
#include "bench/scalapack.h"
void pdgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k, const double *alpha,
             const double *a, const int *ia, const int *ja, const int *desca, const double *b, const int *ib,
             const int *jb, const int *descb, const double *beta, double *c, const int *ic, const int *jc,
             const int *descc);
void psgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k, const float *alpha,
             const float *a, const int *ia, const int *ja, const int *desca, const float *b, const int *ib,
             const int *jb, const int *descb, const float *beta, float *c, const int *ic, const int *jc,
             const int *descc);

static int failures;



/* inputs: multiples of 1/8 in [-1, 1] (exact products and sums) */
static double aval(int64_t i, int64_t k) { return (double)((i * 7 + k * 3) % 17 - 8) * 0.125; }
static double bval(int64_t k, int64_t j) { return (double)((k * 5 + j * 11) % 13 - 6) * 0.125; }
static double cval(int64_t i, int64_t j, int64_t K) {
    double s = 0;
    for (int64_t k = 0; k < K; k++) s += aval(i, k) * bval(k, j);
    return s;
}

static double get(const void *p, dt_dtype t, size_t i) {
    return t == DT_F64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}
static void put(void *p, dt_dtype t, size_t i, double v) {
    if (t == DT_F64) ((double *)p)[i] = v; else ((float *)p)[i] = (float)v;
}

/* fill a 2-D tensor's local part, row-major, from f(global i, global j) */
static void fill_tensor(dt_tensor *t, double (*f)(int64_t, int64_t)) {
    int64_t sh[2], off[2];
    dt_tensor_local_shape(t, sh);
    dt_tensor_local_offset(t, off);
    void *p = dt_tensor_data(t);
    dt_dtype ty = dt_tensor_get_desc(t)->dtype;
    for (int64_t i = 0; i < sh[0]; i++)
        for (int64_t j = 0; j < sh[1]; j++) put(p, ty, (size_t)(i * sh[1] + j), f(off[0] + i, off[1] + j));
}

static const char *placement_str(const dt_tensor_desc *d, int mesh_ndim, char *buf, size_t n) {
    size_t at = 0;
    at += (size_t)snprintf(buf + at, n - at, "[");
    for (int i = 0; i < mesh_ndim && at < n; i++) {
        dt_placement p = d->placements[i];
        const char *sep = i ? "," : "";
        if (p.kind == DT_SHARD) at += (size_t)snprintf(buf + at, n - at, "%sS(%d)", sep, p.dim);
        else if (p.kind == DT_PARTIAL) at += (size_t)snprintf(buf + at, n - at, "%sP", sep);
        else at += (size_t)snprintf(buf + at, n - at, "%sR", sep);
    }
    if (at < n) snprintf(buf + at, n - at, "]");
    return buf;
}

static int same_placements(const dt_tensor_desc *d, const dt_placement *p, int mesh_ndim) {
    for (int i = 0; i < mesh_ndim; i++) {
        dt_placement q = d->placements[i];
        if (q.kind != p[i].kind) return 0;
        if (q.kind == DT_SHARD && q.dim != p[i].dim) return 0;
        if (q.kind == DT_PARTIAL && q.reduce != p[i].reduce) return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------ BLAS */
static void report_blas(void) {
    Dl_info di;
    const char *blis_so = "?", *dgemm_so = "?", *sgemm_so = "?";
    void *dg = dlsym(RTLD_DEFAULT, "dgemm_"), *sg = dlsym(RTLD_DEFAULT, "sgemm_");
    if (dladdr((void *)(uintptr_t)&bli_dgemm, &di) && di.dli_fname) blis_so = di.dli_fname;
    char blis_path[4096], dgemm_path[4096], sgemm_path[4096];
    snprintf(blis_path, sizeof blis_path, "%s", blis_so);
    if (dg && dladdr(dg, &di) && di.dli_fname) dgemm_so = di.dli_fname;
    snprintf(dgemm_path, sizeof dgemm_path, "%s", dgemm_so);
    if (sg && dladdr(sg, &di) && di.dli_fname) sgemm_so = di.dli_fname;
    snprintf(sgemm_path, sizeof sgemm_path, "%s", sgemm_so);
    char rb[3][4096];
    const char *paths[3] = { blis_path, dgemm_path, sgemm_path };
    for (int i = 0; i < 3; i++)
        if (!realpath(paths[i], rb[i])) snprintf(rb[i], sizeof rb[i], "%s", paths[i]);
    int same = !strcmp(rb[0], rb[1]) && !strcmp(rb[0], rb[2]);
    const char *bt = getenv("BLIS_NUM_THREADS"), *ot = getenv("OMP_NUM_THREADS");
    if (rank == 0) {
        printf("# BLIS %s, arch %s, openmp %d, threads per rank %ld (BLIS_NUM_THREADS=%s OMP_NUM_THREADS=%s)\n",
               bli_info_get_version_str(), bli_arch_string(bli_arch_query_id()),
               (int)bli_info_get_enable_openmp(), (long)bli_thread_get_num_threads(), bt ? bt : "unset",
               ot ? ot : "unset");
        printf("# dt_matmul's bli_dgemm is in   %s\n", rb[0]);
        printf("# pdgemm's dgemm_ resolves to   %s\n", rb[1]);
        printf("# psgemm's sgemm_ resolves to   %s\n", rb[2]);
        printf("# => %s\n", same ? "ScaLAPACK and dt_matmul run the same BLIS library (same kernels)"
                                 : "WARNING: ScaLAPACK's BLAS is NOT dt_matmul's BLIS");
    }
    if (!same) failures++;
}

static void bare_gemm(dt_dtype t, int64_t m, int64_t n, int64_t k, const void *a, const void *b, void *c) {
    if (t == DT_F64) {
        double one = 1, zero = 0;
        bli_dgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, (dim_t)m, (dim_t)n, (dim_t)k, &one, (double *)a,
                  (inc_t)k, 1, (double *)b, (inc_t)n, 1, &zero, (double *)c, (inc_t)n, 1);
    } else {
        float one = 1, zero = 0;
        bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, (dim_t)m, (dim_t)n, (dim_t)k, &one, (float *)a,
                  (inc_t)k, 1, (float *)b, (inc_t)n, 1, &zero, (float *)c, (inc_t)n, 1);
    }
}

static void pgemm(dt_dtype t, const char *ta, int m, int n, int k, const void *a, const int *da, const void *b,
                  const int *db, void *c, const int *dc) {
    int one_i = 1;
    if (t == DT_F64) {
        double one = 1, zero = 0;
        pdgemm_(ta, ta, &m, &n, &k, &one, (const double *)a, &one_i, &one_i, da, (const double *)b, &one_i,
                &one_i, db, &zero, (double *)c, &one_i, &one_i, dc);
    } else {
        float one = 1, zero = 0;
        psgemm_(ta, ta, &m, &n, &k, &one, (const float *)a, &one_i, &one_i, da, (const float *)b, &one_i,
                &one_i, db, &zero, (float *)c, &one_i, &one_i, dc);
    }
}

static int g_shm = 0; /* --shm */

static int cdiv(int a, int b) { return b > 0 ? (a + b - 1) / b : 0; }
static int imax(int a, int b) { return a > b ? a : b; }

static void desc(int *d, int m, int n, int mb, int nb, int ctx, int lld) {
    int zero = 0, info = 0;
    mb = imax(mb, 1);  nb = imax(nb, 1);  lld = imax(lld, 1);
    descinit_(d, &m, &n, &mb, &nb, &zero, &zero, &ctx, &lld, &info);
    if (info != 0) { fprintf(stderr, "[%d] descinit info %d\n", rank, info); MPI_Abort(MPI_COMM_WORLD, 1); }
}

/* ------------------------------------------------------------------ cases */
enum { C_1D, C_2D, C_S0R, C_LOCAL, NCASES };
static const char *case_name[NCASES] = { "1d", "2d", "s0r", "local" };

typedef struct timing {
    double dt, pT, pN, bare, dtmin, pmin, baremin, gat, gatmin, pair;
    double diff;
    double mib, lb;
    double work[2], held[2]; /* [0]: dt_matmul as it runs (streamed where it applies), [1]: gathering; per shard */
    char outpl[64];
} timing;

/* one call's working bytes (the peak above the bytes held before it) and
   the bytes the mesh holds after it, in units of the largest operand
   shard, max over ranks; mode: DTENSOR_MATMUL's state (0 auto, 2 gather) */
static void measure_memory(dt_mesh *mesh, const dt_tensor *A, const dt_tensor *B, dt_tensor **C, int mode,
                           double *work, double *held) {
    int64_t sh[2];
    int saved = dt__mm_mode_state;
    dt_tensor_local_shape(A, sh);
    double shard = (double)(sh[0] * sh[1]) * (double)dt_dtype_size(dt_tensor_get_desc(A)->dtype);
    dt__mm_mode_state = mode;
    CHECK(dt_matmul(A, B, C)); /* warm: the strategy cached, *out reused below */
    dt_mesh_trim(mesh);
    size_t base = mem_now;
    mem_peak = mem_now;
    CHECK(dt_matmul(A, B, C));
    *work = max_over_ranks((double)(mem_peak - base) / (shard > 0 ? shard : 1));
    *held = max_over_ranks((double)(mem_now - base) / (shard > 0 ? shard : 1));
    dt_mesh_trim(mesh);
    dt__mm_mode_state = saved;
}

static double max_abs_diff_rowmajor(const void *x, const void *y, dt_dtype t, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) { double d = fabs(get(x, t, i) - get(y, t, i)); if (d > m || d != d) m = d != d ? INFINITY : d; }
    return m;
}

/* dt tensor C's local part (row-major lm x ln) against a column-major local (lm x ln, lld) */
static double max_abs_diff_colmajor(const dt_tensor *c, const void *y, dt_dtype t, int lld) {
    int64_t sh[2];
    dt_tensor_local_shape(c, sh);
    const void *x = dt_tensor_data(c);
    double m = 0;
    for (int64_t i = 0; i < sh[0]; i++)
        for (int64_t j = 0; j < sh[1]; j++) {
            double d = fabs(get(x, t, (size_t)(i * sh[1] + j)) - get(y, t, (size_t)(i + j * (int64_t)lld)));
            if (d > m || d != d) m = d != d ? INFINITY : d;
        }
    return m;
}

/* direct dot products at up to 24 local entries */
static double spot_check(const dt_tensor *c, int64_t K) {
    int64_t sh[2] = {0, 0}, off[2] = {0, 0};
    dt_tensor_local_shape(c, sh);
    dt_tensor_local_offset(c, off);
    if (sh[0] == 0 || sh[1] == 0) return 0;
    const void *x = dt_tensor_data(c);
    dt_dtype t = dt_tensor_get_desc(c)->dtype;
    double m = 0;
    for (int s = 0; s < 24; s++) {
        int64_t i = (s * 7919) % sh[0], j = (s * 104729 + 13) % sh[1];
        if (s == 0) { i = 0; j = 0; }
        if (s == 1) { i = sh[0] - 1; j = sh[1] - 1; }
        double d = fabs(get(x, t, (size_t)(i * sh[1] + j)) - cval(off[0] + i, off[1] + j, K));
        if (d > m || d != d) m = d != d ? INFINITY : d;
    }
    return m;
}

static int g_reps, g_warm = 2, g_callgrind, g_grid_rows;
static FILE *g_csv;

static void run_case(int cs, dt_dtype ty, int64_t n, dt_comm *world, dt_comm *self) {
    int64_t M = n, N = n, K = n;
    int pr = nranks, pc = 1;
    if (cs == C_2D) {
        for (int r = 1; r * r <= nranks; r++) if (nranks % r == 0) pr = r;
        if (g_grid_rows > 0 && nranks % g_grid_rows == 0) pr = g_grid_rows; /* --grid */
        pc = nranks / pr;
    }
    dt_mesh *mesh;
    dt_mesh_desc md = {0};
    if (cs == C_LOCAL) { md.ndim = 1; md.shape[0] = 1; }
    else if (cs == C_2D) { md.ndim = 2; md.shape[0] = pr; md.shape[1] = pc; }
    else { md.ndim = 1; md.shape[0] = nranks; }
    CHECK(dt_mesh_create(cs == C_LOCAL ? self : world, &md, &mesh));
    dt_comm *comm = cs == C_LOCAL ? self : world;

    dt_placement pa[2] = { dt_replicate(), dt_replicate() }, pb[2], pcpl[2];
    if (cs == C_1D || cs == C_S0R) pa[0] = dt_shard(0);
    if (cs == C_2D) { pa[0] = dt_shard(0); pa[1] = dt_shard(1); }
    memcpy(pb, pa, sizeof pa);
    memcpy(pcpl, pa, sizeof pa);
    if (cs == C_S0R) pb[0] = dt_replicate();

    dt_tensor_desc da = {0}, db = {0};
    da.dtype = db.dtype = ty;
    da.ndim = db.ndim = 2;
    da.shape[0] = M; da.shape[1] = K;
    db.shape[0] = K; db.shape[1] = N;
    memcpy(da.placements, pa, sizeof pa);
    memcpy(db.placements, pb, sizeof pb);
    dt_tensor *A, *B, *C = NULL, *Cr = NULL;
    CHECK(dt_tensor_empty(mesh, &da, &A));
    CHECK(dt_tensor_empty(mesh, &db, &B));
    fill_tensor(A, aval);
    fill_tensor(B, bval);

    timing r;
    memset(&r, 0, sizeof r);
    size_t es = dt_dtype_size(ty);

    /* warm-up and the spec of dt's result */
    dt_comm_stats s0, s1;
    dt_status st = dt_matmul(A, B, &C);
    if (st != DT_OK) {
        if (rank == 0) printf("%-6s %-4s %6lld  dt_matmul failed: %s\n", case_name[cs], dt_dtype_name(ty),
                              (long long)n, dt_last_error());
        failures++;
        dt_tensor_destroy(A); dt_tensor_destroy(B);
        dt_mesh_destroy(mesh);
        return;
    }
    int need_redist = !same_placements(dt_tensor_get_desc(C), pcpl, md.ndim);
    placement_str(dt_tensor_get_desc(C), md.ndim, r.outpl, sizeof r.outpl);
    if (need_redist) CHECK(dt_tensor_redistribute(C, pcpl, &Cr));
    dt_comm_get_stats(comm, &s0);
    CHECK(dt_matmul(A, B, &C));
    if (need_redist) CHECK(dt_tensor_redistribute(C, pcpl, &Cr));
    dt_comm_get_stats(comm, &s1);
    r.mib = max_over_ranks((double)(s1.bytes_recv - s0.bytes_recv) / 1048576.0);
    r.lb = max_over_ranks((double)(s1.matmul_bound - s0.matmul_bound) / 1048576.0);
    dt_tensor *Cout = need_redist ? Cr : C;

    int64_t csh[2];
    dt_tensor_local_shape(Cout, csh);
    int64_t ash[2], bsh[2];
    dt_tensor_local_shape(A, ash);
    dt_tensor_local_shape(B, bsh);

    if (cs == C_1D || cs == C_2D) { /* memory, both ways; their times in the loop below */
        measure_memory(mesh, A, B, &C, 0, &r.work[0], &r.held[0]);
        measure_memory(mesh, A, B, &C, 2, &r.work[1], &r.held[1]);
    }

    /* ScaLAPACK setup (1d, 2d) */
    int ctxT = -1, ctxN = -1, dAt[9], dBt[9], dCt[9], dAn[9], dBn[9], dCn[9];
    void *Ct = NULL, *An = NULL, *Bn = NULL, *Cn = NULL, *Cb = NULL;
    int lldCn = 1;
    int scal = cs == C_1D || cs == C_2D;
    if (scal) {
        int coord[2] = {0, 0}, nr, nc, myr, myc, zero = 0;
        dt_mesh_coordinate(mesh, coord);
        if (md.ndim == 1) coord[1] = 0;
        /* transposed problem on dt's buffers: grid pc x pr, column-major order so that
           BLACS rank = pcol*nprow + prow = coord0*pc + coord1 = the mesh rank */
        Cblacs_get(-1, 0, &ctxT);
        Cblacs_gridinit(&ctxT, "C", pc, pr);
        Cblacs_gridinfo(ctxT, &nr, &nc, &myr, &myc);
        if (myr != coord[1] || myc != coord[0]) {
            fprintf(stderr, "[%d] BLACS grid (T) places me at (%d,%d), mesh at (%d,%d)\n", rank, myr, myc,
                    coord[0], coord[1]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        int iM = (int)M, iN = (int)N, iK = (int)K;
        int bM = cdiv(iM, pr), bKr = cdiv(iK, pr), bKc = cdiv(iK, pc), bN = cdiv(iN, pc);
        /* A^T [K, M]: rows K split over pc (MB = ceil(K/pc)), cols M over pr */
        desc(dAt, iK, iM, bKc, bM, ctxT, (int)ash[1]);
        desc(dBt, iN, iK, bN, bKr, ctxT, (int)bsh[1]);
        desc(dCt, iN, iM, bN, bM, ctxT, (int)csh[1]);
        /* numroc agrees with dt's local shapes (the distributions are identical) */
        int lr = numroc_(&iK, &dAt[4], &myr, &zero, &pc), lc = numroc_(&iM, &dAt[5], &myc, &zero, &pr);
        int ok = lr == ash[1] && lc == ash[0];
        lr = numroc_(&iN, &dCt[4], &myr, &zero, &pc); lc = numroc_(&iM, &dCt[5], &myc, &zero, &pr);
        ok = ok && lr == csh[1] && lc == csh[0];
        if (!ok) {
            fprintf(stderr, "[%d] numroc disagrees with dt's local shape\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        Ct = xmalloc((size_t)(csh[0] * csh[1]) * es);

        /* natural orientation: grid pr x pc row-major, column-major local copies */
        Cblacs_get(-1, 0, &ctxN);
        Cblacs_gridinit(&ctxN, "R", pr, pc);
        Cblacs_gridinfo(ctxN, &nr, &nc, &myr, &myc);
        if (myr != coord[0] || myc != coord[1]) {
            fprintf(stderr, "[%d] BLACS grid (N) mismatch\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        desc(dAn, iM, iK, bM, bKc, ctxN, (int)ash[0]);
        desc(dBn, iK, iN, bKr, bN, ctxN, (int)bsh[0]);
        desc(dCn, iM, iN, bM, bN, ctxN, (int)csh[0]);
        lldCn = imax(1, (int)csh[0]);
        An = xmalloc((size_t)(ash[0] * ash[1]) * es);
        Bn = xmalloc((size_t)(bsh[0] * bsh[1]) * es);
        Cn = xmalloc((size_t)(csh[0] * csh[1]) * es);
        int64_t off[2];
        dt_tensor_local_offset(A, off);
        for (int64_t i = 0; i < ash[0]; i++)
            for (int64_t j = 0; j < ash[1]; j++) put(An, ty, (size_t)(i + j * imax(1, (int)ash[0])), aval(off[0] + i, off[1] + j));
        dt_tensor_local_offset(B, off);
        for (int64_t i = 0; i < bsh[0]; i++)
            for (int64_t j = 0; j < bsh[1]; j++) put(Bn, ty, (size_t)(i + j * imax(1, (int)bsh[0])), bval(off[0] + i, off[1] + j));
    } else {
        Cb = xmalloc((size_t)(csh[0] * csh[1]) * es);
    }

    if (g_callgrind && !scal) {
        /* one dump per side (after the warm-up above): instructions of one call */
        char name[64];
        snprintf(name, sizeof name, "dt_%s_%s_%lld", case_name[cs], dt_dtype_name(ty), (long long)n);
        CALLGRIND_ZERO_STATS;
        CHECK(dt_matmul(A, B, &C));
        CALLGRIND_DUMP_STATS_AT(name);
        bare_gemm(ty, ash[0], bsh[1], ash[1], dt_tensor_data(A), dt_tensor_data(B), Cb); /* warm */
        snprintf(name, sizeof name, "bare_%s_%s_%lld", case_name[cs], dt_dtype_name(ty), (long long)n);
        CALLGRIND_ZERO_STATS;
        bare_gemm(ty, ash[0], bsh[1], ash[1], dt_tensor_data(A), dt_tensor_data(B), Cb);
        CALLGRIND_DUMP_STATS_AT(name);
    }
    double *tdt = (double *)xmalloc(sizeof(double) * (size_t)g_reps);
    double *tT = (double *)xmalloc(sizeof(double) * (size_t)g_reps);
    double *tN = (double *)xmalloc(sizeof(double) * (size_t)g_reps);
    double *tB = (double *)xmalloc(sizeof(double) * (size_t)g_reps);
    double *tG = (double *)xmalloc(sizeof(double) * (size_t)g_reps);
    for (int rep = -g_warm; rep < g_reps; rep++) {
        double t0, t;
        /* dt_matmul as it runs, and (1d, 2d) the gather strategy (DTENSOR_MATMUL=gather), same call;
           the two in turn first (the one after the other finds a, b and c in cache) */
        for (int side = 0; side < 1 + scal; side++) {
            int gather = scal && (side ^ (rep & 1)), saved = dt__mm_mode_state;
            if (gather) dt__mm_mode_state = 2;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            CHECK(dt_matmul(A, B, &C));
            if (need_redist) CHECK(dt_tensor_redistribute(C, pcpl, &Cr));
            t = max_over_ranks(MPI_Wtime() - t0);
            if (rep >= 0) (gather ? tG : tdt)[rep] = t;
            dt__mm_mode_state = saved;
        }
        if (scal) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            pgemm(ty, "N", (int)N, (int)M, (int)K, dt_tensor_data(B), dBt, dt_tensor_data(A), dAt, Ct, dCt);
            t = max_over_ranks(MPI_Wtime() - t0);
            if (rep >= 0) tT[rep] = t;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            pgemm(ty, "N", (int)M, (int)N, (int)K, An, dAn, Bn, dBn, Cn, dCn);
            t = max_over_ranks(MPI_Wtime() - t0);
            if (rep >= 0) tN[rep] = t;
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            bare_gemm(ty, ash[0], bsh[1], ash[1], dt_tensor_data(A), dt_tensor_data(B), Cb);
            t = max_over_ranks(MPI_Wtime() - t0);
            if (rep >= 0) tB[rep] = t;
        }
    }
    if (scal) { /* each rep's two sides ran back to back: their ratio is spared the machine's slower drifts */
        double *pair = (double *)xmalloc(sizeof(double) * (size_t)g_reps);
        for (int i = 0; i < g_reps; i++) pair[i] = tG[i] / tdt[i];
        r.pair = median(pair, g_reps);
        free(pair);
    }
    r.dt = median(tdt, g_reps);  /* median() sorts: [0] is then the minimum */
    r.dtmin = tdt[0];
    if (scal) {
        r.pT = median(tT, g_reps);
        r.pN = median(tN, g_reps);
        r.pmin = fmin(tT[0], tN[0]);
        r.gat = median(tG, g_reps);
        r.gatmin = tG[0];
    } else {
        r.bare = median(tB, g_reps);
        r.baremin = tB[0];
    }

    if (scal) { /* the result checked below is the default path's */
        CHECK(dt_matmul(A, B, &C));
        if (need_redist) CHECK(dt_tensor_redistribute(C, pcpl, &Cr));
    }
    /* correctness: everything must agree exactly (see the top comment) */
    double d = spot_check(Cout, K);
    size_t cn = (size_t)(csh[0] * csh[1]);
    if (scal) {
        double d1 = max_abs_diff_rowmajor(dt_tensor_data(Cout), Ct, ty, cn);
        double d2 = max_abs_diff_colmajor(Cout, Cn, ty, lldCn);
        d = fmax(d, fmax(d1, d2));
    } else {
        d = fmax(d, max_abs_diff_rowmajor(dt_tensor_data(Cout), Cb, ty, cn));
    }
    r.diff = max_over_ranks(d);
    if (!(r.diff == 0)) failures++;
    if (scal && ty == DT_F64 && r.diff == 0) {
        bench_csv_row(g_csv, "pdgemm", case_name[cs], (long long)n, "ours", r.dt * 1e3);
        bench_csv_row(g_csv, "pdgemm", case_name[cs], (long long)n, "peer", fmin(r.pT, r.pN) * 1e3);
    }

    if (rank == 0) {
        double flops = 2.0 * (double)M * (double)N * (double)K;
        char grid[16];
        if (cs == C_LOCAL) snprintf(grid, sizeof grid, "1 (self)");
        else snprintf(grid, sizeof grid, "%dx%d", pr, pc);
        if (scal) {
            double best = fmin(r.pT, r.pN);
            printf("%-5s %-4s %5lld %-8s %-10s %8.2f %6.2f %10.3f %10.3f %10.3f %8s %7.2f %7.2f %7.1f %9.3g"
                   " | %9.3f %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f%s\n",
                   case_name[cs], dt_dtype_name(ty), (long long)n, grid, r.outpl, r.mib, r.lb, r.dt * 1e3,
                   r.pT * 1e3, r.pN * 1e3, "-", best / r.dt, r.pmin / r.dtmin, flops / r.dt * 1e-9, r.diff,
                   r.gat * 1e3, r.gat / r.dt, r.pair, r.work[0], r.held[0], r.work[1], r.held[1],
                   r.diff == 0 ? "" : "  MISMATCH");
        } else {
            printf("%-5s %-4s %5lld %-8s %-10s %8.2f %6.2f %10.3f %10s %10s %8.3f %7.2f %7.2f %7.1f %9.3g%s\n",
                   case_name[cs], dt_dtype_name(ty), (long long)n, grid, r.outpl, r.mib, r.lb, r.dt * 1e3, "-", "-",
                   r.bare * 1e3, r.bare / r.dt, r.baremin / r.dtmin, flops / r.dt * 1e-9, r.diff,
                   r.diff == 0 ? "" : "  MISMATCH");
        }
        fflush(stdout);
    }

    free(tdt); free(tT); free(tN); free(tB); free(tG);
    free(Ct); free(An); free(Bn); free(Cn); free(Cb);
    if (ctxT >= 0) Cblacs_gridexit(ctxT);
    if (ctxN >= 0) Cblacs_gridexit(ctxN);
    dt_tensor_destroy(Cr);
    dt_tensor_destroy(C);
    dt_tensor_destroy(B);
    dt_tensor_destroy(A);
    dt_mesh_destroy(mesh);
}

/* --cases 25d: 2.5D. A mesh [P, Q, c] (c >= 2 copies, P x Q the squarest
   factoring of the rest; --grid ROWS: P = ROWS), A, B, C all [S(0), S(1),
   R]: each copy holds the
   whole product. dt_matmul streams it with the copies splitting k (layers,
   DTENSOR_MATMUL_LAYERS=on) and without (off: each copy computes the
   product whole), both streamed. Per rank, max over ranks: MiB received
   (dt_comm_stats' matmul_bytes_recv), the lower bound (matmul_bound), the
   working bytes per operand shard; the median time. */
static void run_layers(dt_dtype ty, int64_t n, int c, dt_comm *world) {
    int P = 1, Q, saved_mode = dt__mm_mode_state, saved_layers = dt__mm_layers_state;
    int rest = nranks / c;
    for (int r = 1; r * r <= rest; r++) if (rest % r == 0) P = r;
    if (g_grid_rows > 0 && rest % g_grid_rows == 0) P = g_grid_rows; /* --grid */
    Q = rest / P;
    dt_mesh *mesh;
    dt_mesh_desc md = {0};
    md.ndim = 3;
    md.shape[0] = P; md.shape[1] = Q; md.shape[2] = c;
    CHECK(dt_mesh_create(world, &md, &mesh));
    dt_tensor_desc d = {0};
    d.dtype = ty;
    d.ndim = 2;
    d.shape[0] = d.shape[1] = n;
    d.placements[0] = dt_shard(0);
    d.placements[1] = dt_shard(1);
    d.placements[2] = dt_replicate();
    dt_tensor *A, *B, *C = NULL;
    CHECK(dt_tensor_empty(mesh, &d, &A));
    CHECK(dt_tensor_empty(mesh, &d, &B));
    fill_tensor(A, aval);
    fill_tensor(B, bval);
    int64_t sh[2];
    dt_tensor_local_shape(A, sh);
    double shard = (double)(sh[0] * sh[1]) * (double)dt_dtype_size(ty);
    double mib[2], lb[2], work[2], ms[2], diff = 0;
    double *t = (double *)xmalloc(sizeof(double) * (size_t)g_reps * 2);
    dt__mm_mode_state = 1;
    for (int w = 0; w < 2; w++) { /* 0: layers, 1: none; one call each for bytes and memory */
        dt_comm_stats s0, s1;
        dt__mm_layers_state = w ? 2 : 1;
        CHECK(dt_matmul(A, B, &C));
        dt_mesh_trim(mesh);
        size_t base = mem_now;
        mem_peak = mem_now;
        dt_comm_get_stats(world, &s0);
        CHECK(dt_matmul(A, B, &C));
        dt_comm_get_stats(world, &s1);
        mib[w] = max_over_ranks((double)(s1.matmul_bytes_recv - s0.matmul_bytes_recv) / 1048576.0);
        lb[w] = max_over_ranks((double)(s1.matmul_bound - s0.matmul_bound) / 1048576.0);
        work[w] = max_over_ranks((double)(mem_peak - base) / (shard > 0 ? shard : 1));
        diff = fmax(diff, max_over_ranks(spot_check(C, n)));
    }
    for (int rep = -g_warm; rep < g_reps; rep++)
        for (int w = 0; w < 2; w++) {
            dt__mm_layers_state = w ? 2 : 1;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            CHECK(dt_matmul(A, B, &C));
            double x = max_over_ranks(MPI_Wtime() - t0);
            if (rep >= 0) t[w * g_reps + rep] = x;
        }
    for (int w = 0; w < 2; w++) ms[w] = median(t + w * g_reps, g_reps) * 1e3;
    if (!(diff == 0)) failures++;
    if (rank == 0) {
        char grid[40];
        snprintf(grid, sizeof grid, "%dx%dx%d", P, Q, c);
        char rel[16];
        if (mib[1] > 0) snprintf(rel, sizeof rel, "%.2f", mib[0] / mib[1]);
        else snprintf(rel, sizeof rel, "-");
        printf("%-5s %-4s %5lld %-8s %8.2f %8.2f %8.2f %6s %6.2f %9.3f %9.3f %6.2f %9.3g%s\n", "25d",
               dt_dtype_name(ty), (long long)n, grid, mib[0], mib[1], lb[0], rel, work[0], ms[0], ms[1],
               ms[1] / ms[0], diff, diff == 0 ? "" : "  MISMATCH");
        fflush(stdout);
    }
    free(t);
    dt__mm_mode_state = saved_mode;
    dt__mm_layers_state = saved_layers;
    dt_tensor_destroy(C);
    dt_tensor_destroy(B);
    dt_tensor_destroy(A);
    dt_mesh_destroy(mesh);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *sizes = "256 512 1024 2048", *cases = "1d 2d s0r local", *dts = "both", *csv = NULL;
    int reps = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) sizes = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dtype") && i + 1 < argc) dts = argv[++i];
        else if (!strcmp(argv[i], "--cases") && i + 1 < argc) cases = argv[++i];
        else if (!strcmp(argv[i], "--grid") && i + 1 < argc) g_grid_rows = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick")) { sizes = "64 129"; reps = 3; }
        else if (!strcmp(argv[i], "--callgrind")) { g_callgrind = 1; reps = 1; g_warm = 1; }
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
        else if (!strcmp(argv[i], "--shm")) g_shm = 1;
        else {
            if (rank == 0) fprintf(stderr, "usage: %s [--sizes \"256 512\"] [--reps N] [--dtype f64|f32|both] "
                                           "[--cases \"1d 2d s0r local\"] [--grid ROWS] [--quick] [--callgrind] "
                                           "[--csv FILE] [--shm]\n", argv[0]);
            MPI_Finalize();
            return 2;
        }
    }
    if (!bench_csv_open(csv, &g_csv)) { MPI_Finalize(); return 2; }
    int bm, bn;
    Cblacs_pinfo(&bm, &bn);

    dt_comm *world, *self;
    CHECK(dt_comm_mpi(MPI_COMM_WORLD, &world));
    CHECK(dt_comm_self(&self));
    if (g_shm) CHECK(dt_comm_set_shm(world, 1)); /* every mesh of world gets a shared arena, A, B and C in it */

    if (rank == 0) {
        char ver[MPI_MAX_LIBRARY_VERSION_STRING];
        mpi_library(ver);
        printf("# dtensor.h matmul benchmark: %d rank(s); dt_matmul vs ScaLAPACK p?gemm (same ranks, same\n"
               "# input and output distributions) and vs bare BLIS on the same local blocks\n", nranks);
        printf("# MPI: %s\n", ver);
        printf("# storage of A, B, C: %s\n", g_shm ? "the mesh's shared arena (--shm: dt_comm_set_shm(world, 1); the "
               "streamed product reads the other ranks' panels in place, the gather copies them once)" :
               "the library's, allocated before the arena that DTENSOR_SHM=auto makes at a mesh's first large "
               "redistribution (so outside it: panels move by MPI messages)");
    }
    report_blas();
    int main_cases = 0;
    for (int cs = 0; cs < NCASES; cs++) main_cases += strstr(cases, case_name[cs]) != NULL;
    if (rank == 0 && main_cases) {
        printf("# M = N = K = size. ScaLAPACK block sizes = ceil(dim / procs along it): one block per\n"
               "# process, i.e. exactly torch.chunk's blocks (numroc checked against dt's local shapes).\n"
               "# 1d: A, B, C Shard(0) on a 1-D mesh = row blocks on a p x 1 BLACS grid\n"
               "# 2d: A, B, C [Shard(0), Shard(1)] on a pr x pc mesh = 2-D blocks on a pr x pc grid\n"
               "# s0r: A Shard(0), B Replicate -> C Shard(0) (no ScaLAPACK equivalent): vs bli_?gemm per rank\n"
               "# local: mesh of one rank (each rank its own) vs bli_?gemm on the same buffers\n"
               "# dt out: placements dt_matmul returned (if not the target, dt ms includes the redistribution)\n"
               "# dt MiB: MiB received per rank by one dt call (dt_comm_stats, max over ranks); LB: its lower bound\n"
               "# (dt_comm_stats' matmul_bound, streamed calls only; docs/guide.md \"Matmul at scale\")\n"
               "# pdgemm-T: C^T = B^T A^T on dt's row-major buffers; pdgemm-N: column-major copies\n"
               "# ratio: min(pdgemm-T, pdgemm-N) / dt, or bare / dt (>= 1: dt as fast), of the medians;\n"
               "# min: the same ratio of the fastest reps (robust to other load); GF/s: dt's (median)\n"
               "# diff: max |dt - other| over all elements and |dt - direct dot| at 24 entries a rank\n"
               "# times: median over reps of the max over ranks; 2 warm-ups\n"
               "# after |: gather ms: dt_matmul gathering the operands (DTENSOR_MATMUL=gather); vs gat: gather /\n"
               "# dt (>= 1: streaming as fast); pair: the median over reps of each rep's gather / dt (the two ran\n"
               "# back to back); wk/sh, hd/sh: one call's working bytes (peak above what was\n"
               "# held before it) and the bytes held after it, per operand shard, through a counting\n"
               "# DT_MALLOC, max over ranks (dt_mesh_trim between); g wk, g hd: the same gathering\n");
        printf("%-5s %-4s %5s %-8s %-10s %8s %6s %10s %10s %10s %8s %7s %7s %7s %9s | %9s %6s %6s %6s %6s %6s %6s\n", "case",
               "type", "size", "grid", "dt out", "dt MiB", "LB", "dt ms", "pdgemm-T", "pdgemm-N", "bare ms", "ratio", "min",
               "GF/s", "diff", "gather ms", "vs gat", "pair", "wk/sh", "hd/sh", "g wk", "g hd");
    }

    dt_dtype types[2];
    int ntypes = 0;
    if (!strcmp(dts, "f64") || !strcmp(dts, "both")) types[ntypes++] = DT_F64;
    if (!strcmp(dts, "f32") || !strcmp(dts, "both")) types[ntypes++] = DT_F32;

    for (int cs = 0; cs < NCASES; cs++) {
        if (!strstr(cases, case_name[cs])) continue;
        for (int ti = 0; ti < ntypes; ti++) {
            const char *p = sizes;
            char *end;
            for (long n = strtol(p, &end, 10); end != p; p = end, n = strtol(p, &end, 10)) {
                g_reps = reps > 0 ? reps : n >= 2048 ? 5 : n >= 1024 ? 7 : 11;
                if (csv && g_reps < 5) g_reps = 5;
                run_case(cs, types[ti], (int64_t)n, world, self);
            }
        }
    }
    if (strstr(cases, "25d")) {
        if (rank == 0)
            printf("# 25d: mesh P x Q x c, A, B, C [S(0), S(1), R]: the c copies split k (layers) or each computes\n"
                   "# the product whole (none), both streamed. MiB: received per rank by one call (matmul_bytes_recv,\n"
                   "# max over ranks); LB: dt_comm_stats' matmul_bound, the lower bound (max over ranks); /none:\n"
                   "# layers' bytes over none's; wk/sh: layers' working bytes per operand shard; ms: medians;\n"
                   "# speedup: none ms / layers ms\n"
                   "%-5s %-4s %5s %-8s %8s %8s %8s %6s %6s %9s %9s %6s %9s\n", "case", "type", "size", "mesh",
                   "MiB lay", "MiB none", "LB MiB", "/none", "wk/sh", "ms lay", "ms none", "speed", "diff");
        for (int ti = 0; ti < ntypes; ti++)
            for (int c = 2; c <= nranks; c++) {
                const char *p = sizes;
                char *end;
                if (nranks % c) continue;
                for (long n = strtol(p, &end, 10); end != p; p = end, n = strtol(p, &end, 10)) {
                    g_reps = reps > 0 ? reps : n >= 2048 ? 5 : n >= 1024 ? 7 : 11;
                    run_layers(types[ti], (int64_t)n, c, world);
                }
            }
    }
    int all = sum_over_ranks(failures);
    if (rank == 0) printf("# %s\n", all ? "FAILED: results differ or a call failed" : "all results agree exactly");
    if (g_csv) fclose(g_csv);
    dt_comm_destroy(self);
    dt_comm_destroy(world);
    Cblacs_exit(1);
    MPI_Finalize();
    return all ? 1 : 0;
}
