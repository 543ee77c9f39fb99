/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  own
*/
/* test_transport.c -- the transport of an exchange is chosen alike on every
   rank, and integer sums wrap alike on every reduce path.

   1. The count limit swept (DT__COUNT_MAX: the largest count or
      displacement one MPI call takes; past it a collective goes over
      sendrecv and a started message is cut in pieces). Here it is a
      variable, swept at run time from one element to past every rank's
      totals, so that for some value it falls between two ranks' own totals:
      a rank that chose its collective from its own counts would enter
      MPI_Alltoallv while another sends over MPI_Sendrecv, and the run would
      hang (the test's timeout). For each value: block-cyclic span exchanges
      (1-D and 2-D), box exchanges over every engine (one alltoallv, posted
      messages, pipelined rounds), a gather, redistributions out of a
      ghosted array (whose in-place pieces sit past the shard's bytes), a
      halo exchange with corners (packed, and with every face an MPI
      datatype where it fits: the others packed, face by face, as elements
      of the same type), and a streamed matmul's panels. Every
      result is checked against a closed-form global function of the index.
   2. Overflowing I32 / I64 Partial(sum): reduced to Replicate and to Shard
      through MPI's own reduction, the library's ring reduce-scatter, the
      emulation over sendrecv (a backend with sendrecv only), and the
      accumulate of dt_tensor_redistribute_reduce, each checked bit for bit
      against the two's-complement (wrapped) sum computed here.
   3. DTENSOR_EXCHANGE_TYPES is read once, "0" (MPICH's default) too. */
#define _POSIX_C_SOURCE 200112L /* setenv */
#include <stddef.h>
static size_t dtt_count_max = (size_t)0x7fffffff; /* the limit under test */
static size_t dtt_ring_min = (size_t)64 << 10;
#define DT__COUNT_MAX dtt_count_max
#define DT__RING_MIN dtt_ring_min
#define DT__RING_PIECE ((size_t)24)
#define DTENSOR_IMPLEMENTATION
#include "dt_test.h"

static double fval(int64_t g) { return (double)(g % 1009) * 0.5 + 1.0; }

static dt_tensor *make_full(dt_mesh *m, int ndim, const int64_t *shape, const dt_placement *pl)
{
    dt_tensor_desc d;
    dt_tensor *t = NULL;
    int64_t n = dtt_numel(ndim, shape), g;
    double *full = (double *)dtt_malloc((size_t)n * sizeof(double));
    int k;
    for (g = 0; g < n; g++) full[g] = fval(g);
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = ndim;
    for (k = 0; k < ndim; k++) d.shape[k] = shape[k];
    for (k = 0; k < DT_MAX_MESH_DIMS; k++) d.placements[k] = pl[k];
    CHECK_OK(dt_tensor_distribute(m, &d, full, DT_SRC_ALL, &t));
    free(full);
    return t;
}

/* t gathered equals fval of the global index */
static void check_full(const dt_tensor *t, int ndim, const int64_t *shape, const char *what)
{
    int64_t n = dtt_numel(ndim, shape), g;
    double *full = (double *)dtt_malloc((size_t)n * sizeof(double) + 8);
    if (!t) { CHECK(0, "%s: no tensor", what); free(full); return; }
    CHECK_OK(dt_tensor_gather(t, full));
    for (g = 0; g < n; g++)
        if (full[g] != fval(g)) {
            CHECK(0, "%s: element %lld = %g want %g", what, (long long)g, full[g], fval(g));
            break;
        }
    free(full);
}

/* src -> dst, checked */
static void move(dt_mesh *m, int ndim, const int64_t *shape, const dt_placement *src, const dt_placement *dst,
                 const char *what)
{
    dt_tensor *a = make_full(m, ndim, shape, src), *b = NULL;
    if (a) CHECK_OK(dt_tensor_redistribute(a, dst, &b));
    if (b) check_full(b, ndim, shape, what);
    dt_tensor_destroy(b);
    dt_tensor_destroy(a);
}

static void pl_set(dt_placement *pl, dt_placement a, dt_placement b)
{
    memset(pl, 0, DT_MAX_MESH_DIMS * sizeof *pl);
    pl[0] = a;
    pl[1] = b;
}

/* block-cyclic spans: the exchange whose bound was once this rank's own totals */
static void run_spans(dt_mesh *m, int nd)
{
    static const int64_t s1[1] = { 100 }, s2[2] = { 37, 29 };
    dt_placement a[DT_MAX_MESH_DIMS], b[DT_MAX_MESH_DIMS];
    pl_set(a, dt_shard_cyclic(0, 30), dt_replicate());
    pl_set(b, dt_shard_cyclic(0, 7), dt_replicate());
    if (nd == 1) {
        move(m, 1, s1, a, b, "spans cyclic(30) -> cyclic(7)");
        move(m, 1, s1, b, a, "spans cyclic(7) -> cyclic(30)");
    } else {
        pl_set(a, dt_shard_cyclic(0, 5), dt_shard_cyclic(1, 3));
        pl_set(b, dt_shard_cyclic(1, 4), dt_shard_cyclic(0, 2));
        move(m, 2, s2, a, b, "spans 2-D");
    }
}

/* piece exchanges over each engine, and a gather */
static void run_boxes(dt_mesh *m, int nd)
{
    static const int64_t s2[2] = { 37, 29 };
    dt_placement a[DT_MAX_MESH_DIMS], b[DT_MAX_MESH_DIMS];
    int engine;
    for (engine = 0; engine < 3; engine++) {
        dt__xposted_state = engine == 1;     /* 0: one alltoallv; 1: posted messages */
        dt__pipe_chunk_state = engine == 2 ? 64 : 0; /* pipelined rounds of 64 bytes */
        dtt_ctx("engine %d limit %zu", engine, dtt_count_max);
        if (nd == 1) {
            pl_set(a, dt_shard(0), dt_replicate());
            pl_set(b, dt_shard(1), dt_replicate());
            move(m, 2, s2, a, b, "boxes S(0) -> S(1)");
            pl_set(b, dt_shard_balanced(0), dt_replicate());
            move(m, 2, s2, a, b, "boxes S(0) -> balanced S(0)");
            pl_set(b, dt_replicate(), dt_replicate());
            move(m, 2, s2, a, b, "gather S(0) -> R");
        } else {
            pl_set(a, dt_shard(0), dt_shard(1));
            pl_set(b, dt_shard(1), dt_shard(0));
            move(m, 2, s2, a, b, "boxes [S(0),S(1)] -> [S(1),S(0)]");
        }
    }
    dt__xposted_state = -1;
    dt__pipe_chunk_state = (size_t)-1;
}

/* a ghosted wrap of 1-D F64 [n] S(0): its pieces lie `ghost` elements into
   the array, past the largest shard's bytes for the last elements */
static void run_ghosted(dt_mesh *m)
{
    static const int64_t shape[1] = { 53 };
    const int64_t ghost[1] = { 3 };
    dt_tensor_desc d;
    dt_tensor *t = NULL, *b = NULL;
    int64_t ls[1], lo[1], i;
    dt_placement dst[DT_MAX_MESH_DIMS];
    double *arr;
    int k, engine;
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = 1;
    d.shape[0] = shape[0];
    d.placements[0] = dt_shard(0);
    {
        dt_tensor *probe = make_full(m, 1, shape, d.placements);
        if (!probe) return;
        dt_tensor_local_shape(probe, ls);
        dt_tensor_local_offset(probe, lo);
        dt_tensor_destroy(probe);
    }
    arr = (double *)dtt_malloc((size_t)(ls[0] + 2 * ghost[0]) * sizeof(double));
    for (i = 0; i < ls[0] + 2 * ghost[0]; i++) arr[i] = -1.0;
    for (i = 0; i < ls[0]; i++) arr[ghost[0] + i] = fval(lo[0] + i);
    d.local_shape = ls;
    d.local_ghost = ghost;
    d.local_alloc = arr;
    d.local_alloc_bytes = (int64_t)((size_t)(ls[0] + 2 * ghost[0]) * sizeof(double));
    CHECK_OK(dt_tensor_from_local(m, &d, arr, DT_BORROW, &t));
    for (engine = 0; t && engine < 2; engine++) {
        dt__xposted_state = engine;
        for (k = 0; k < 2; k++) {
            pl_set(dst, k ? dt_replicate() : dt_shard_balanced(0), dt_replicate());
            dtt_ctx("ghosted engine %d limit %zu -> %s", engine, dtt_count_max, k ? "R" : "balanced S(0)");
            CHECK_OK(dt_tensor_redistribute(t, dst, &b));
            check_full(b, 1, shape, "ghosted wrap redistributed");
            dt_tensor_destroy(b);
            b = NULL;
        }
    }
    dt__xposted_state = -1;
    dt_tensor_destroy(t);
    free(arr);
}

/* a periodic halo with corners: every ghost cell is fval of its wrapped index.
   typed: every strided face an MPI datatype where it fits the limit
   (DTENSOR_HALO_TYPES=1; past the limit a face is packed, as elements of
   the same type), else the default (packed under MPICH) */
static void run_halo(dt_mesh *m, int nd, const int *mshape, int typed)
{
    int64_t shape[2], gs[2], ls[2], lo[2], i, j;
    dt_placement pl[DT_MAX_MESH_DIMS];
    dt_halo_desc h;
    dt_tensor *t;
    const double *gd;
    shape[0] = 3 * mshape[0] + 2;
    shape[1] = nd == 2 ? 3 * mshape[1] + 1 : 7;
    pl_set(pl, dt_shard(0), nd == 2 ? dt_shard(1) : dt_replicate());
    t = make_full(m, 2, shape, pl);
    if (!t) return;
    memset(&h, 0, sizeof h);
    h.width[0] = 2;
    h.width[1] = 1;
    h.boundary[0] = h.boundary[1] = DT_BOUNDARY_PERIODIC;
    h.corners = 1;
    if (typed) setenv("DTENSOR_HALO_TYPES", "1", 1); /* (read by each dt_tensor_set_halo) */
    else unsetenv("DTENSOR_HALO_TYPES");
    CHECK_OK(dt_tensor_set_halo(t, &h));
    CHECK_OK(dt_halo_exchange(t));
    dt_tensor_local_shape(t, ls);
    dt_tensor_local_offset(t, lo);
    gd = (const double *)dt_tensor_ghosted_data(t, gs);
    for (i = 0; gd && i < gs[0]; i++)
        for (j = 0; j < gs[1]; j++) {
            int64_t g0 = ((lo[0] + i - 2) % shape[0] + shape[0]) % shape[0];
            int64_t g1 = ((lo[1] + j - 1) % shape[1] + shape[1]) % shape[1];
            double want = fval(g0 * shape[1] + g1), got = gd[i * gs[1] + j];
            if (got != want) {
                CHECK(0, "halo limit %zu: ghosted (%lld, %lld) = %g want %g", dtt_count_max, (long long)i,
                      (long long)j, got, want);
                i = gs[0];
                break;
            }
        }
    dt_tensor_destroy(t);
}

/* a streamed matmul (SUMMA): its panels travel as started messages */
static void run_matmul(dt_mesh *m, int nd)
{
    static const int64_t sa[2] = { 13, 11 }, sb[2] = { 11, 9 };
    dt_placement pa[DT_MAX_MESH_DIMS], pb[DT_MAX_MESH_DIMS];
    dt_tensor *a, *b, *c = NULL;
    double *full;
    int saved = dt__mm_mode_state;
    int64_t i, j, k;
    if (nd == 1) { pl_set(pa, dt_shard(0), dt_replicate()); pl_set(pb, dt_shard(0), dt_replicate()); }
    else { pl_set(pa, dt_shard(0), dt_shard(1)); pl_set(pb, dt_shard(0), dt_shard(1)); }
    a = make_full(m, 2, sa, pa);
    b = make_full(m, 2, sb, pb);
    dt__mm_mode_state = 1; /* stream */
    if (a && b) CHECK_OK(dt_matmul(a, b, &c));
    dt__mm_mode_state = saved;
    full = (double *)dtt_malloc(13 * 9 * sizeof(double));
    if (c && dt_tensor_gather(c, full) == DT_OK)
        for (i = 0; i < 13; i++)
            for (j = 0; j < 9; j++) {
                double want = 0;
                for (k = 0; k < 11; k++) want += fval(i * 11 + k) * fval(k * 9 + j);
                if (full[i * 9 + j] != want) {
                    CHECK(0, "matmul limit %zu: (%lld, %lld) = %g want %g", dtt_count_max, (long long)i, (long long)j,
                          full[i * 9 + j], want);
                    i = 13;
                    break;
                }
            }
    free(full);
    dt_tensor_destroy(c);
    dt_tensor_destroy(b);
    dt_tensor_destroy(a);
}

static void sweep_limits(dt_mesh *m, int nd, const int *mshape)
{
    /* up to past the largest total of any case (100 doubles; 37 x 29 / ranks; the halo's faces) */
    size_t top = 37 * 29 * 8 + 64, lim, step = dtt_quick ? 40 : 8;
    for (lim = 8; lim <= top; lim += step) {
        dtt_count_max = lim;
        dtt_ctx("mesh %dx%d limit %zu", mshape[0], nd == 2 ? mshape[1] : 1, lim);
        run_spans(m, nd);
        if (lim < 1200 || lim % (5 * step) == 8) { /* the boxes' totals are a few hundred bytes */
            run_boxes(m, nd);
            if (nd == 1) run_ghosted(m);
            run_halo(m, nd, mshape, 0);
            run_halo(m, nd, mshape, 1);
            run_matmul(m, nd);
        }
    }
    dtt_count_max = (size_t)0x7fffffff;
}

/* ---- integer sums that overflow ---- */

/* rank r's part of element g: near the top of the range, so the sum wraps */
static int64_t part_i64(int64_t g, int r) { return INT64_MAX - 3 * g - 1000 * (int64_t)r; }
static int32_t part_i32(int64_t g, int r) { return (int32_t)(INT32_MAX - 3 * (int32_t)g - 1000 * r); }

static uint64_t want_sum(dt_dtype t, int64_t g, int np)
{
    uint64_t s = 0;
    uint32_t s32 = 0;
    int r;
    for (r = 0; r < np; r++) {
        s += (uint64_t)part_i64(g, r);
        s32 += (uint32_t)part_i32(g, r);
    }
    return t == DT_I64 ? s : (uint64_t)s32;
}

/* a backend of sendrecv only: every collective emulated by the library */
static dt_status p2p_sendrecv(void *user, const void *sb, size_t sn, int dest, void *rb, size_t rn, int src, int tag)
{
    MPI_Comm c = *(MPI_Comm *)user;
    int rc = MPI_Sendrecv(sb, (int)sn, MPI_BYTE, dest < 0 ? MPI_PROC_NULL : dest, tag, rb, (int)rn, MPI_BYTE,
                          src < 0 ? MPI_PROC_NULL : src, tag, c, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? DT_OK : DT_ERR_COMM;
}

/* P(sum) of `t` [n] reduced to dst on m; every element's bits against the wrapped sum */
static void wrap_case(dt_mesh *m, int np, int me, dt_dtype t, int64_t n, dt_placement dst, int accumulate,
                      const char *path)
{
    dt_tensor_desc d;
    dt_tensor *a = NULL, *b = NULL;
    size_t es = dtt_size(t);
    char *buf = (char *)dtt_malloc((size_t)n * es), *full = (char *)dtt_malloc((size_t)n * es + 8);
    int64_t g;
    dt_placement pl[DT_MAX_MESH_DIMS];
    for (g = 0; g < n; g++) {
        if (t == DT_I64) { int64_t v = part_i64(g, me); memcpy(buf + g * 8, &v, 8); }
        else { int32_t v = part_i32(g, me); memcpy(buf + g * 4, &v, 4); }
    }
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = 1;
    d.shape[0] = n;
    d.placements[0] = dt_partial(DT_SUM);
    pl_set(pl, dst, dt_replicate());
    dtt_ctx("wrap %s %s n=%lld -> %s%s", path, dtt_dtname(t), (long long)n, dst.kind == DT_SHARD ? "S(0)" : "R",
            accumulate ? " (accumulate)" : "");
    CHECK_OK(dt_tensor_from_local(m, &d, buf, DT_BORROW, &a));
    if (a && accumulate) { /* out holds zeros: out + reduced = reduced, computed by the combine */
        dt_tensor_desc z = d;
        z.placements[0] = dst;
        CHECK_OK(dt_tensor_zeros(m, &z, &b));
        if (b) CHECK_OK(dt_tensor_redistribute_reduce(a, pl, DT_SUM, b));
    } else if (a) {
        CHECK_OK(dt_tensor_redistribute(a, pl, &b));
    }
    if (b && dt_tensor_gather(b, full) == DT_OK)
        for (g = 0; g < n; g++) {
            uint64_t got = 0, want = want_sum(t, g, np);
            memcpy(&got, full + g * es, es);
            if (got != want) {
                CHECK(0, "element %lld: bits %llx want %llx", (long long)g, (unsigned long long)got,
                      (unsigned long long)want);
                break;
            }
        }
    dt_tensor_destroy(b);
    dt_tensor_destroy(a);
    free(buf);
    free(full);
}

static void wrap_paths(dt_mesh *m, int np, int me, const char *path)
{
    static const dt_dtype ts[2] = { DT_I32, DT_I64 };
    int k, acc;
    for (k = 0; k < 2; k++)
        for (acc = 0; acc < 2; acc++) {
            wrap_case(m, np, me, ts[k], 5 * np + 3, dt_replicate(), acc, path);
            wrap_case(m, np, me, ts[k], 5 * np + 3, dt_shard(0), acc, path);
        }
}

static void run_wrap(dt_comm *c)
{
    int np = dt_comm_size(c), me = dt_comm_rank(c);
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    dt_comm *p = NULL;
    dt_comm_desc cd;
    MPI_Comm dup;
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = np;
    CHECK_OK(dt_mesh_create(c, &md, &m));
    if (m) {
        dtt_ring_min = (size_t)64 << 10;
        wrap_paths(m, np, me, "MPI's reduction");
        dtt_ring_min = 8; /* every reduce-scatter block round the ring, in pieces */
        wrap_paths(m, np, me, "ring");
        dtt_ring_min = (size_t)64 << 10;
    }
    dt_mesh_destroy(m);
    m = NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    memset(&cd, 0, sizeof cd);
    cd.name = "p2p";
    cd.rank = me;
    cd.size = np;
    cd.user = &dup;
    cd.sendrecv = p2p_sendrecv;
    CHECK_OK(dt_comm_custom(&cd, &p));
    if (p) CHECK_OK(dt_mesh_create(p, &md, &m));
    if (m) wrap_paths(m, np, me, "emulated over sendrecv");
    dt_mesh_destroy(m);
    dt_comm_destroy(p);
    MPI_Comm_free(&dup);
}

/* DTENSOR_EXCHANGE_TYPES is read once, whatever it says: "0" (never a
   datatype, MPICH's default) is stored as SIZE_MAX, which was also the
   mark for "not read yet", so every exchange read the environment again */
static void run_xrun_once(void)
{
    const char *had = getenv("DTENSOR_EXCHANGE_TYPES");
    char keep[64] = "";
    size_t first;
    if (had) snprintf(keep, sizeof keep, "%s", had);
    dtt_ctx("DTENSOR_EXCHANGE_TYPES read once");
    setenv("DTENSOR_EXCHANGE_TYPES", "0", 1);
    dt__xrun_state = 0;
    first = dt__xrun();
    CHECK(first == SIZE_MAX, "DTENSOR_EXCHANGE_TYPES=0: %zu, not SIZE_MAX", first);
    setenv("DTENSOR_EXCHANGE_TYPES", "512", 1);
    CHECK(dt__xrun() == first, "DTENSOR_EXCHANGE_TYPES read again: %zu after %zu", dt__xrun(), first);
    if (had) setenv("DTENSOR_EXCHANGE_TYPES", keep, 1);
    else unsetenv("DTENSOR_EXCHANGE_TYPES");
    dt__xrun_state = 0; /* read again by the next exchange */
}

int main(int argc, char **argv)
{
    dt_comm *c = NULL;
    int fac[64 * DT_MAX_MESH_DIMS], nd, nf, f;
    dtt_init(&argc, &argv, "transport");
    setenv("DTENSOR_SHM", "0", 1); /* the MPI paths, not the shared arena */
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &c));
    for (nd = 1; c && nd <= 2; nd++) {
        nf = dtt_factorizations(dtt_np, nd, fac, 64);
        for (f = 0; f < nf && f < 2; f++) {
            dtt_mesh m;
            if (!dtt_mesh_open(&m, c, nd, &fac[f * DT_MAX_MESH_DIMS])) continue;
            sweep_limits(m.mesh, nd, m.shape);
            dtt_mesh_close(&m);
        }
    }
    if (c) run_wrap(c);
    run_xrun_once();
    dt_comm_destroy(c);
    return dtt_finish();
}
