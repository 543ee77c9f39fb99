/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  own
*/
/* test_faults.c -- fault injection: failing allocations and failing backend calls.

   1. Allocation faults. DT_MALLOC / DT_FREE are a counting allocator that
      returns NULL on allocation number `fa_fail_at` and tracks the live
      blocks. For each case (a public function that allocates, with its
      inputs), a fault-free run on a fresh fixture counts the allocations A
      the call makes; then for n = 1..A a fresh fixture (comm, mesh, inputs,
      made with injection off) runs the call with allocation n failing:
      - the call returns DT_ERR_NOMEM (DT_OK is accepted where the library
        tolerates the failure, e.g. the optional strategy cache; the result
        is then checked as below) and dt_last_error() names the call;
      - the inputs are intact (each input's desc and local bytes compared
        with a copy taken before the call);
      - *out is unchanged: NULL stays NULL; for the "reuse" variant an
        existing *out, filled with a sentinel no case can produce, keeps its
        identity and every byte (gather's caller buffer likewise);
      - after the fixture is destroyed, the live-block count is back to zero
        (nothing leaked; also run under valgrind --leak-check=full / LSan).
      The fault-free run's result is checked against closed-form values where
      the case has a checker, and every tolerated-DT_OK run against the
      fault-free run's local bytes.

   2. Backend faults. The same cases on the simulated backend (below) whose
      k-th callback (sendrecv) returns DT_ERR_COMM, k = 1..K (K: the callbacks
      of a fault-free call): the call returns DT_ERR_COMM, names itself, leaks
      nothing, leaves its inputs and *out alone (the reuse variant too: a
      collective emulated over sendrecv that fails part-way must not have
      written the existing *out).
   Every failure's dt_last_error() must name the public call the test made
   (not only an inner call or "dt_comm"): no exceptions.

   Multi-rank design. A failure injected on one MPI rank inside a collective
   would leave its peers blocked in MPI, so no sweep here talks to another
   process. Each case runs on two single-process backends:
   - "self": dt_comm_self(), a one-rank mesh (the local kernels, planners,
     one-rank short cuts);
   - "mirror": dt_comm_custom of size N = 4 with this process as rank
     r = (MPI rank) % 4 (rank 0 for the rooted calls: distribute from rank 0,
     npy save/load) and only a `sendrecv` callback that "mirrors": what
     I receive from a peer is what I send (min of the two sizes; the rest is
     zeroed and counted as an asymmetry). The library emulates every
     collective (allgather, all-to-all, allreduce, reduce-scatter, halo
     messages) over sendrecv, so the N > 1 code paths run in one process.
     The inputs are periodic with period 2 along every dim and every sharded
     dim has a multiple of 8 elements (2 per rank at N = 4, or more), so
     every rank's shard holds the same values and the mirrored messages are
     exactly what a real run would deliver: the closed forms hold.
   Every MPI rank runs the same sweeps independently (with its own r), so
   the test is meaningful at every rank count; MPI is used only by the
   harness (dtt_finish). --quick (DT_TEST_QUICK) sweeps only every 3rd
   allocation / callback index beyond the first 8 (plus the last). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long fa_count = 0;   /* allocations since the last reset */
static long fa_fail_at = 0; /* 0: never fail */
static long fa_live = 0;    /* live blocks from DT_MALLOC */
static void *fa_malloc(size_t n)
{
    void *p;
    fa_count++;
    if (fa_fail_at && fa_count == fa_fail_at) return NULL;
    p = malloc(n);
    if (p) fa_live++;
    return p;
}
static void fa_free(void *p)
{
    if (p) {
        fa_live--;
        free(p);
    }
}
#define DT_MALLOC(sz) fa_malloc(sz)
#define DT_FREE(p) fa_free(p)
#define DTENSOR_IMPLEMENTATION
#include "dtensor_layers.h" /* includes dtensor.h */
#include "dt_test.h"

/* ------------------------------------------------------------ the mirror backend */

typedef struct mirror {
    long calls;      /* callbacks since the last reset */
    long fail_at;    /* 0: never */
    long asym;       /* receives larger than the send */
} mirror;
static mirror g_mirror;

static dt_status mirror_sendrecv(void *user, const void *sb, size_t sn, int dest, void *rb, size_t rn, int src, int tag)
{
    mirror *mi = (mirror *)user;
    (void)dest; (void)tag;
    mi->calls++;
    if (mi->fail_at && mi->calls == mi->fail_at) return DT_ERR_COMM;
    if (src >= 0 && rn) {
        size_t k = dest >= 0 && sn < rn ? sn : rn;
        if (dest < 0) k = 0;
        if (k) memcpy(rb, sb, k);
        if (k < rn) {
            memset((char *)rb + k, 0, rn - k);
            mi->asym++;
        }
    }
    return DT_OK;
}

#define NMIRROR 4
/* rooted calls (distribute from rank 0, npy I/O through mesh rank 0) run as
   simulated rank 0: a mirrored peer cannot play the root for a non-root rank */
static int g_rooted = 0;

/* ------------------------------------------------------------ fixtures */

/* the byte a reused *out (and gather's buffer) is filled with before a call:
   no case can produce 0xA5A5... (F64 -2.5e-127, I64 -6.5e18, F32 -2.9e-16,
   U8 165: not a mask), so a partial write cannot pass for an untouched *out */
#define SENTINEL 0xA5

typedef struct fx {
    int backend; /* 0 self, 1 mirror */
    dt_comm *c;
    dt_mesh *m;
    dt_tensor *in[6];
    int nin;
    dt_tensor *out, *out2;
    void *obj;   /* a layer, a comm or a mesh made by the call */
    char path[256];
    double buf[512]; /* caller buffers (gather's full, distribute's source) */
} fx;

static int mesh_n(const fx *f) { return f->backend ? NMIRROR : 1; }

static dt_status make_comm(int backend, dt_comm **c)
{
    if (!backend) return dt_comm_self(c);
    {
        dt_comm_desc d;
        memset(&d, 0, sizeof d);
        d.name = "mirror";
        d.size = NMIRROR;
        d.rank = g_rooted ? 0 : dtt_rank % NMIRROR;
        d.user = &g_mirror;
        d.sendrecv = mirror_sendrecv;
        return dt_comm_custom(&d, c);
    }
}

static dt_status make_mesh(dt_comm *c, int n, dt_mesh **m)
{
    dt_mesh_desc md;
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = n;
    md.names[0] = "tp";
    return dt_mesh_create(c, &md, m);
}

/* the periodic closed form: period 2 along every dim */
static double pval(int ndim, const int64_t *idx)
{
    int d;
    double v = 0.5;
    for (d = 0; d < ndim; d++) v += 0.25 * (double)((idx[d] & 1) * (d + 1));
    return v;
}

static void fill_local(dt_tensor *t, int kind)
{
    const dt_tensor_desc *d = dt_tensor_get_desc(t);
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], idx[DT_MAX_DIMS];
    size_t i, n = dt_tensor_local_numel(t);
    int k;
    dt_tensor_local_shape(t, ls);
    dt_tensor_local_offset(t, lo);
    for (i = 0; i < n; i++) {
        size_t r = i;
        double v;
        for (k = d->ndim - 1; k >= 0; k--) {
            idx[k] = lo[k] + (int64_t)(r % (size_t)ls[k]);
            r /= (size_t)ls[k];
        }
        v = pval(d->ndim, idx);
        if (kind == 1) v = (double)((idx[d->ndim - 1] & 1) + 2 * (d->ndim > 1 ? (idx[0] & 1) : 0)); /* ints 0..3 */
        dtt_store_d(d->dtype, dt_tensor_data(t), i, v);
    }
}

/* an input: dtype, shape, placement on the 1-D mesh (pl: -1 Replicate, d >= 0 Shard(d),
   -2 Partial(SUM)); kind 0 periodic floats, 1 small ints */
static dt_status mk(fx *f, dt_dtype dt, int ndim, const int64_t *shape, int pl, int kind)
{
    dt_tensor_desc d;
    dt_tensor *t = NULL;
    dt_status st;
    memset(&d, 0, sizeof d);
    d.dtype = dt;
    d.ndim = ndim;
    memcpy(d.shape, shape, (size_t)ndim * sizeof(int64_t));
    d.placements[0] = pl == -1 ? dt_replicate() : pl == -2 ? dt_partial(DT_SUM) : dt_shard(pl);
    if (pl == -2) d.placements[0] = dt_replicate(); /* filled as replicated, wrapped as Partial below */
    if ((st = dt_tensor_empty(f->m, &d, &t))) return st;
    fill_local(t, kind);
    if (pl == -2) { /* every rank's local is the value: the global value is N times it */
        dt_tensor *p = NULL;
        d.placements[0] = dt_partial(DT_SUM);
        st = dt_tensor_from_local(f->m, &d, dt_tensor_data(t), DT_COPY, &p);
        dt_tensor_destroy(t);
        if (st) return st;
        t = p;
    }
    f->in[f->nin++] = t;
    return DT_OK;
}

static void fx_destroy(fx *f)
{
    int i;
    for (i = 0; i < f->nin; i++) dt_tensor_destroy(f->in[i]);
    dt_tensor_destroy(f->out);
    dt_tensor_destroy(f->out2);
    f->nin = 0;
    f->out = f->out2 = NULL;
    dt_mesh_destroy(f->m);
    dt_comm_destroy(f->c);
    f->m = NULL;
    f->c = NULL;
}

/* ------------------------------------------------------------ cases */

typedef struct fcase {
    const char *name;   /* case label */
    const char *fn;     /* the function dt_last_error() must name */
    int (*setup)(fx *); /* inputs on f->m; 0 on success */
    dt_status (*call)(fx *);
    int (*check)(fx *); /* closed form of the fault-free result: 1 ok; NULL: none */
    void (*done)(fx *); /* frees f->obj etc. after a successful call; may be NULL */
    int reuse;          /* 1: also with an existing *out (f->out) from a first call */
} fcase;

static const int64_t S8[1] = { 8 }, S88[2] = { 8, 8 }, S816[2] = { 8, 16 }, S848[3] = { 8, 4, 8 };

/* checkers */
static int near(double a, double b) { return fabs(a - b) <= 1e-9 * (1 + fabs(b)); }
/* out's local elements against fn(global index) */
static int check_each(dt_tensor *t, double (*fn)(int ndim, const int64_t *idx, void *u), void *u)
{
    const dt_tensor_desc *d;
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], idx[DT_MAX_DIMS];
    size_t i, n;
    int k;
    if (!t) return 0;
    d = dt_tensor_get_desc(t);
    n = dt_tensor_local_numel(t);
    dt_tensor_local_shape(t, ls);
    dt_tensor_local_offset(t, lo);
    for (i = 0; i < n; i++) {
        size_t r = i;
        for (k = d->ndim - 1; k >= 0; k--) {
            idx[k] = lo[k] + (int64_t)(r % (size_t)ls[k]);
            r /= (size_t)ls[k];
        }
        if (!near(dtt_load_d(d->dtype, dt_tensor_data(t), i), fn(d->ndim, idx, u))) return 0;
    }
    return 1;
}
static double f_pval(int nd, const int64_t *idx, void *u) { (void)u; return pval(nd, idx); }
static double f_neg(int nd, const int64_t *idx, void *u) { (void)u; return -pval(nd, idx); }
static double f_twice(int nd, const int64_t *idx, void *u) { (void)u; return 2 * pval(nd, idx); }
static double f_times(int nd, const int64_t *idx, void *u) { return *(double *)u * pval(nd, idx); }
static int chk_same(fx *f) { return check_each(f->out, f_pval, NULL); }
static int chk_neg(fx *f) { return check_each(f->out, f_neg, NULL); }
static int chk_twice(fx *f) { return check_each(f->out, f_twice, NULL); }
static int chk_partial_sum(fx *f) /* P(SUM) -> R or S: N times the local value */
{
    double n = mesh_n(f);
    return check_each(f->out, f_times, &n);
}
/* sum over dim 1 of an [8, 8] periodic tensor: 4 * (v(i,0) + v(i,1)) */
static double f_rowsum(int nd, const int64_t *idx, void *u)
{
    int64_t a[2];
    (void)nd; (void)u;
    a[0] = idx[0]; a[1] = 0;
    {
        double s = pval(2, a);
        a[1] = 1;
        return 4 * (s + pval(2, a));
    }
}
/* check_each of f's output brought to Replicate first (fault-free): the result may be Partial */
static int check_replicated(fx *f, double (*fn)(int ndim, const int64_t *idx, void *u))
{
    dt_tensor *r = NULL;
    int ok;
    dt_placement pl[DT_MAX_MESH_DIMS];
    memset(pl, 0, sizeof pl);
    if (dt_tensor_redistribute(f->out, pl, &r)) return 0;
    ok = check_each(r, fn, NULL);
    dt_tensor_destroy(r);
    return ok;
}
static int chk_rowsum(fx *f) { return check_replicated(f, f_rowsum); }
/* a @ b with a, b [8,8] periodic: sum_k v(i,k) v(k,j) = 4 * (v(i,0)v(0,j) + v(i,1)v(1,j)) */
static double f_mm(int nd, const int64_t *idx, void *u)
{
    int64_t a[2], b[2];
    double s = 0;
    int k;
    (void)nd; (void)u;
    for (k = 0; k < 2; k++) {
        a[0] = idx[0]; a[1] = k;
        b[0] = k; b[1] = idx[1];
        s += pval(2, a) * pval(2, b);
    }
    return 4 * s;
}
static int chk_mm(fx *f) { return check_replicated(f, f_mm); }
static int chk_gather(fx *f)
{
    int64_t i, j, idx[2];
    for (i = 0; i < 8; i++)
        for (j = 0; j < 16; j++) {
            idx[0] = i; idx[1] = j;
            if (!near(f->buf[i * 16 + j], pval(2, idx))) return 0;
        }
    return 1;
}

/* setups */
static int su_none(fx *f) { (void)f; return 0; }
static int su_s0(fx *f) { return mk(f, DT_F64, 2, S816, 0, 0) != DT_OK; }
static int su_s1(fx *f) { return mk(f, DT_F64, 2, S816, 1, 0) != DT_OK; }
static int su_r(fx *f) { return mk(f, DT_F64, 2, S816, -1, 0) != DT_OK; }
static int su_p(fx *f) { return mk(f, DT_F64, 2, S816, -2, 0) != DT_OK; }
static int su_s0_f32(fx *f) { return mk(f, DT_F32, 2, S88, 0, 0) != DT_OK; }
static int su_two(fx *f) { return mk(f, DT_F64, 2, S88, 0, 0) || mk(f, DT_F64, 2, S88, 1, 0); }
static int su_mm(fx *f) { return mk(f, DT_F64, 2, S88, 1, 0) || mk(f, DT_F64, 2, S88, 0, 0); }
static int su_3d(fx *f) { return mk(f, DT_F64, 3, S848, 2, 0) != DT_OK; }
static int su_1d(fx *f) { return mk(f, DT_F64, 1, S8, 0, 0) || mk(f, DT_F64, 1, S8, 0, 0); }
static int su_norm(fx *f)
{
    return mk(f, DT_F64, 2, S88, 0, 0) || mk(f, DT_F64, 1, S8, -1, 0) || mk(f, DT_F64, 1, S8, -1, 0);
}
static int su_emb(fx *f) { return mk(f, DT_F64, 2, S88, 0, 0) || mk(f, DT_I64, 1, S8, 0, 1); }
static int su_xent(fx *f) { return mk(f, DT_F64, 2, S88, 1, 0) || mk(f, DT_I64, 1, S8, 0, 1); }
static int su_halo(fx *f)
{
    dt_halo_desc h;
    if (mk(f, DT_F64, 2, S816, 0, 0)) return 1;
    memset(&h, 0, sizeof h);
    h.width[0] = 1;
    h.width[1] = 1;
    h.boundary[0] = DT_BOUNDARY_PERIODIC;
    h.corners = 1;
    return dt_tensor_set_halo(f->in[0], &h) != DT_OK;
}
static int su_npy(fx *f)
{
    snprintf(f->path, sizeof f->path, "build/test_faults.%d.%d.npy", dtt_rank, f->backend);
    if (mk(f, DT_F64, 2, S816, 0, 0)) return 1;
    if (f->backend == 0) return dt_tensor_save_npy(f->in[0], f->path) != DT_OK;
    {   /* the mirror mesh's rank 0 does the file I/O: write it through a self mesh */
        dt_comm *c = NULL;
        dt_mesh *m = NULL;
        fx g;
        int bad;
        memset(&g, 0, sizeof g);
        if (dt_comm_self(&c) || make_mesh(c, 1, &m)) { dt_comm_destroy(c); return 1; }
        g.c = c; g.m = m;
        bad = mk(&g, DT_F64, 2, S816, -1, 0) || dt_tensor_save_npy(g.in[0], f->path);
        fx_destroy(&g);
        return bad;
    }
}

/* the calls */
static dt_placement P(int k) { return k == -1 ? dt_replicate() : k == -2 ? dt_partial(DT_SUM) : dt_shard(k); }
static dt_status redist(fx *f, int k)
{
    dt_placement pl[DT_MAX_MESH_DIMS];
    memset(pl, 0, sizeof pl);
    pl[0] = P(k);
    return dt_tensor_redistribute(f->in[0], pl, &f->out);
}
static dt_status c_comm_self(fx *f) { return dt_comm_self((dt_comm **)&f->obj); }
static void done_comm(fx *f) { dt_comm_destroy((dt_comm *)f->obj); f->obj = NULL; }
static dt_status c_mesh(fx *f) { return make_mesh(f->c, mesh_n(f), (dt_mesh **)&f->obj); }
static void done_mesh(fx *f) { dt_mesh_destroy((dt_mesh *)f->obj); f->obj = NULL; }
static dt_status c_mesh_slice(fx *f)
{
    const char *nm[1] = { "tp" };
    return dt_mesh_slice(f->m, 1, nm, (dt_mesh **)&f->obj);
}
static dt_status c_mesh_flatten(fx *f)
{
    const char *nm[1] = { "tp" };
    return dt_mesh_flatten(f->m, 1, nm, "z", (dt_mesh **)&f->obj);
}
static dt_status c_empty(fx *f)
{
    dt_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64; d.ndim = 2; d.shape[0] = 8; d.shape[1] = 16; d.placements[0] = dt_shard(0);
    return dt_tensor_empty(f->m, &d, &f->out);
}
static dt_status c_zeros(fx *f)
{
    dt_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64; d.ndim = 2; d.shape[0] = 8; d.shape[1] = 16; d.placements[0] = dt_shard(1);
    return dt_tensor_zeros(f->m, &d, &f->out);
}
static void full_pattern(fx *f)
{
    int64_t i, j, idx[2];
    for (i = 0; i < 8; i++)
        for (j = 0; j < 16; j++) { idx[0] = i; idx[1] = j; f->buf[i * 16 + j] = pval(2, idx); }
}
static dt_status c_distribute_all(fx *f)
{
    dt_tensor_desc d;
    full_pattern(f);
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64; d.ndim = 2; d.shape[0] = 8; d.shape[1] = 16; d.placements[0] = dt_shard(0);
    return dt_tensor_distribute(f->m, &d, f->buf, DT_SRC_ALL, &f->out);
}
static dt_status c_distribute_0(fx *f)
{
    dt_tensor_desc d;
    full_pattern(f);
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64; d.ndim = 2; d.shape[0] = 8; d.shape[1] = 16; d.placements[0] = dt_shard(1);
    return dt_tensor_distribute(f->m, &d, f->buf, 0, &f->out);
}
static dt_status c_from_local(fx *f)
{
    dt_tensor_desc d = *dt_tensor_get_desc(f->in[0]);
    d.local_shape = NULL;
    return dt_tensor_from_local(f->m, &d, dt_tensor_data(f->in[0]), DT_COPY | DT_VERIFY, &f->out);
}
static dt_status c_gather(fx *f) { memset(f->buf, SENTINEL, sizeof f->buf); return dt_tensor_gather(f->in[0], f->buf); }
/* does the caller's buffer still hold only the sentinel? */
static int buf_untouched(const fx *f)
{
    size_t i;
    for (i = 0; i < sizeof f->buf; i++)
        if (((const unsigned char *)f->buf)[i] != SENTINEL) return 0;
    return 1;
}
static dt_status c_to_r(fx *f) { return redist(f, -1); }
static dt_status c_to_s0(fx *f) { return redist(f, 0); }
static dt_status c_to_s1(fx *f) { return redist(f, 1); }
static dt_status c_to_p(fx *f) { return redist(f, -2); }
static dt_status c_neg(fx *f) { return dt_neg(f->in[0], &f->out); }
static dt_status c_exp(fx *f) { return dt_exp(f->in[0], &f->out); }
static dt_status c_cast(fx *f) { return dt_cast(f->in[0], DT_F64, &f->out); }
static dt_status c_add_self(fx *f) { return dt_add(f->in[0], f->in[0], &f->out); }
static dt_status c_add(fx *f) { return dt_add(f->in[0], f->in[1], &f->out); }
static dt_status c_mul(fx *f) { return dt_mul(f->in[0], f->in[1], &f->out); }
static dt_status c_axpy(fx *f) { return dt_axpy(2.0, f->in[1], f->in[0]); }
static dt_status c_sum(fx *f) { int d = 1; return dt_sum(f->in[0], 1, &d, 0, &f->out); }
static dt_status c_sum_all(fx *f) { return dt_sum(f->in[0], 0, NULL, 0, &f->out); }
static dt_status c_mean(fx *f) { int d = 0; return dt_mean(f->in[0], 1, &d, 1, &f->out); }
static dt_status c_norm2(fx *f) { int d = 0; return dt_norm2(f->in[0], 1, &d, 0, &f->out); }
static dt_status c_argmax(fx *f) { int d = 0; return dt_argmax(f->in[0], 1, &d, 0, &f->out); }
static dt_status c_matmul(fx *f) { return dt_matmul(f->in[0], f->in[1], &f->out); }
static dt_status c_linear(fx *f) { return dt_linear(f->in[0], f->in[1], NULL, &f->out); }
static dt_status c_addmm(fx *f) { return dt_addmm(f->in[1], f->in[0], f->in[1], 1.0, 2.0, &f->out); }
static dt_status c_dot(fx *f) { return dt_dot(f->in[0], f->in[1], &f->out); }
static dt_status c_softmax(fx *f) { return dt_softmax(f->in[0], 0, &f->out); }
static dt_status c_log_softmax(fx *f) { return dt_log_softmax(f->in[0], 1, &f->out); }
static dt_status c_layer_norm(fx *f) { return dt_layer_norm(f->in[0], f->in[1], f->in[2], 1e-5, &f->out); }
static dt_status c_rms_norm(fx *f) { return dt_rms_norm(f->in[0], f->in[1], 1e-5, &f->out); }
static dt_status c_transpose(fx *f) { return dt_transpose(f->in[0], 0, 1, &f->out); }
static dt_status c_permute(fx *f) { int p[3] = { 2, 0, 1 }; return dt_permute(f->in[0], p, &f->out); }
static dt_status c_reshape(fx *f) { int64_t s[2] = { -1, 8 }; return dt_reshape(f->in[0], 2, s, &f->out); }
static dt_status c_unsqueeze(fx *f) { return dt_unsqueeze(f->in[0], 1, &f->out); }
static dt_status c_narrow(fx *f) { return dt_narrow(f->in[0], 0, 1, 5, &f->out); }
static dt_status c_cat(fx *f)
{
    const dt_tensor *xs[2];
    xs[0] = f->in[0]; xs[1] = f->in[1];
    return dt_cat(2, xs, 1, &f->out);
}
static dt_status c_stack(fx *f)
{
    const dt_tensor *xs[2];
    xs[0] = f->in[0]; xs[1] = f->in[1];
    return dt_stack(2, xs, 0, &f->out);
}
static dt_status c_split(fx *f)
{
    int64_t sz[2] = { 6, 10 };
    dt_tensor *o[2];
    dt_status st;
    o[0] = f->out; o[1] = f->out2;
    st = dt_split(f->in[0], 1, 2, sz, o);
    f->out = o[0]; f->out2 = o[1];
    return st;
}
static dt_status c_embedding(fx *f) { return dt_embedding(f->in[0], f->in[1], &f->out); }
static dt_status c_xent(fx *f) { return dt_cross_entropy(f->in[0], f->in[1], &f->out); }
static dt_status c_rand(fx *f)
{
    dt_tensor_desc d = *dt_tensor_get_desc(f->in[0]);
    return dt_tensor_rand(f->m, &d, &f->out);
}
static dt_status c_randn(fx *f)
{
    dt_tensor_desc d = *dt_tensor_get_desc(f->in[0]);
    return dt_tensor_randn(f->m, &d, &f->out);
}
static dt_status c_uniform(fx *f) { return dt_uniform_(f->in[0], -1, 1); }
static dt_status c_normal(fx *f) { return dt_normal_(f->in[0], 0, 1); }
static dt_status c_dropout(fx *f) { return dt_dropout(f->in[0], 0.5, &f->out, &f->out2); }
static dt_status c_manual_seed(fx *f) { return dt_manual_seed(f->m, 7); }
static dt_status c_rng_save(fx *f)
{
    snprintf(f->path, sizeof f->path, "build/test_faults.%d.%d.rng.json", dtt_rank, f->backend);
    return dt_rng_save_state(f->m, f->path);
}
static int su_rng(fx *f)
{
    FILE *fp;
    snprintf(f->path, sizeof f->path, "build/test_faults.%d.%d.rng.json", dtt_rank, f->backend);
    fp = fopen(f->path, "wb");
    if (!fp) return 1;
    fprintf(fp, "{\"generator\": \"philox4x32-10\", \"seed\": 7, \"offset\": 3}\n");
    return fclose(fp) != 0;
}
static dt_status c_rng_load(fx *f) { return dt_rng_load_state(f->m, f->path); }
static dt_status c_set_halo(fx *f)
{
    dt_halo_desc h;
    memset(&h, 0, sizeof h);
    h.width[0] = 1;
    h.boundary[0] = DT_BOUNDARY_PERIODIC;
    return dt_tensor_set_halo(f->in[0], &h);
}
static dt_status c_halo_exchange(fx *f) { return dt_halo_exchange(f->in[0]); }
static void st_copy(const dt_stencil_block *b, void *user)
{
    int64_t i, j;
    (void)user;
    for (i = b->lo[0]; i < b->lo[0] + b->ext[0]; i++)
        for (j = b->lo[1]; j < b->lo[1] + b->ext[1]; j++)
            ((double *)b->out)[i * b->out_stride[0] + j * b->out_stride[1]] =
                ((const double *)b->in)[(i + 1) * b->in_stride[0] + (j + 1) * b->in_stride[1]];
}
static dt_status c_stencil(fx *f) { return dt_stencil_apply(f->in[0], st_copy, NULL, &f->out); }
static dt_status c_save_npy(fx *f)
{
    snprintf(f->path, sizeof f->path, "build/test_faults.%d.%d.out.npy", dtt_rank, f->backend);
    return dt_tensor_save_npy(f->in[0], f->path);
}
static dt_status c_load_npy(fx *f)
{
    dt_placement pl[DT_MAX_MESH_DIMS];
    memset(pl, 0, sizeof pl);
    pl[0] = dt_shard(1);
    return dt_tensor_load_npy(f->m, f->path, pl, &f->out);
}
static dt_status c_tp_linear(fx *f)
{
    dt_tp_linear_desc d;
    memset(&d, 0, sizeof d);
    d.in_features = 8;
    d.out_features = 8;
    d.dtype = DT_F64;
    return dt_tp_linear_create(f->m, &d, (dt_tp_linear **)&f->obj);
}
static void done_tp_linear(fx *f) { dt_tp_linear_destroy((dt_tp_linear *)f->obj); f->obj = NULL; }
static dt_status c_tp_mlp(fx *f)
{
    dt_tp_mlp_desc d;
    memset(&d, 0, sizeof d);
    d.in_features = 8;
    d.hidden_features = 16;
    d.dtype = DT_F64;
    return dt_tp_mlp_create(f->m, &d, (dt_tp_mlp **)&f->obj);
}
static void done_tp_mlp(fx *f) { dt_tp_mlp_destroy((dt_tp_mlp *)f->obj); f->obj = NULL; }
/* forward / backward: the layer is made in setup (f->obj) */
static int su_layer(fx *f)
{
    if (mk(f, DT_F64, 2, S88, -1, 0)) return 1;
    return c_tp_mlp(f) != DT_OK;
}
static dt_status c_mlp_forward(fx *f) { return dt_tp_mlp_forward((dt_tp_mlp *)f->obj, f->in[0], 1, &f->out); }
static int su_layer_bwd(fx *f)
{
    dt_tensor *y = NULL;
    if (su_layer(f)) return 1;
    if (dt_tp_mlp_forward((dt_tp_mlp *)f->obj, f->in[0], 1, &y)) return 1;
    f->in[f->nin++] = y;
    return 0;
}
static dt_status c_mlp_backward(fx *f) { return dt_tp_mlp_backward((dt_tp_mlp *)f->obj, f->in[0], f->in[1], &f->out); }
static int su_lin(fx *f)
{
    if (mk(f, DT_F64, 2, S88, -1, 0)) return 1;
    return c_tp_linear(f) != DT_OK;
}
static dt_status c_lin_forward(fx *f) { return dt_tp_linear_forward((dt_tp_linear *)f->obj, f->in[0], &f->out); }
static int su_lin_bwd(fx *f)
{
    dt_tensor *y = NULL;
    if (su_lin(f)) return 1;
    if (dt_tp_linear_forward((dt_tp_linear *)f->obj, f->in[0], &y)) return 1;
    f->in[f->nin++] = y;
    return 0;
}
static dt_status c_lin_backward(fx *f) { return dt_tp_linear_backward((dt_tp_linear *)f->obj, f->in[0], f->in[1], &f->out); }

static const fcase g_cases[] = {
    { "comm_self", "dt_comm_self", su_none, c_comm_self, NULL, done_comm, 0 },
    { "mesh_create", "dt_mesh_create", su_none, c_mesh, NULL, done_mesh, 0 },
    { "mesh_slice", "dt_mesh_slice", su_none, c_mesh_slice, NULL, done_mesh, 0 },
    { "mesh_flatten", "dt_mesh_flatten", su_none, c_mesh_flatten, NULL, done_mesh, 0 },
    { "empty", "dt_tensor_empty", su_none, c_empty, NULL, NULL, 0 },
    { "zeros", "dt_tensor_zeros", su_none, c_zeros, NULL, NULL, 0 },
    { "distribute(all)", "dt_tensor_distribute", su_none, c_distribute_all, chk_same, NULL, 0 },
    { "distribute(0)", "dt_tensor_distribute", su_none, c_distribute_0, chk_same, NULL, 0 },
    { "from_local(COPY|VERIFY)", "dt_tensor_from_local", su_s0, c_from_local, chk_same, NULL, 0 },
    { "gather", "dt_tensor_gather", su_s1, c_gather, chk_gather, NULL, 0 },
    { "redistribute S0->R (allgather)", "dt_tensor_redistribute", su_s0, c_to_r, chk_same, NULL, 1 },
    { "redistribute R->S1 (slice)", "dt_tensor_redistribute", su_r, c_to_s1, chk_same, NULL, 1 },
    { "redistribute S0->S1 (all-to-all)", "dt_tensor_redistribute", su_s0, c_to_s1, chk_same, NULL, 1 },
    { "redistribute P->R (allreduce)", "dt_tensor_redistribute", su_p, c_to_r, chk_partial_sum, NULL, 1 },
    { "redistribute P->S0 (reduce-scatter)", "dt_tensor_redistribute", su_p, c_to_s0, chk_partial_sum, NULL, 1 },
    { "redistribute R->P (to-partial)", "dt_tensor_redistribute", su_r, c_to_p, NULL, NULL, 1 },
    { "redistribute S1->S0 (exchange)", "dt_tensor_redistribute", su_3d, c_to_s0, chk_same, NULL, 1 },
    { "neg", "dt_neg", su_s0, c_neg, chk_neg, NULL, 1 },
    { "exp", "dt_exp", su_s0, c_exp, NULL, NULL, 0 },
    { "cast f32->f64", "dt_cast", su_s0_f32, c_cast, NULL, NULL, 0 },
    { "add(x, x)", "dt_add", su_s0, c_add_self, chk_twice, NULL, 1 },
    { "add S0 + S1", "dt_add", su_two, c_add, NULL, NULL, 1 },
    { "mul S0 * S1", "dt_mul", su_two, c_mul, NULL, NULL, 0 },
    { "axpy", "dt_axpy", su_two, c_axpy, NULL, NULL, 0 },
    { "sum dim 1", "dt_sum", su_two, c_sum, chk_rowsum, NULL, 1 },
    { "sum all", "dt_sum", su_s0, c_sum_all, NULL, NULL, 0 },
    { "mean", "dt_mean", su_s0, c_mean, NULL, NULL, 0 },
    { "norm2", "dt_norm2", su_s0, c_norm2, NULL, NULL, 0 },
    { "argmax", "dt_argmax", su_s0, c_argmax, NULL, NULL, 0 },
    { "matmul S1 x S0", "dt_matmul", su_mm, c_matmul, chk_mm, NULL, 1 },
    { "linear", "dt_linear", su_mm, c_linear, NULL, NULL, 0 },
    { "addmm", "dt_addmm", su_mm, c_addmm, NULL, NULL, 0 },
    { "dot", "dt_dot", su_1d, c_dot, NULL, NULL, 0 },
    { "softmax over sharded dim", "dt_softmax", su_s0, c_softmax, NULL, NULL, 1 },
    { "log_softmax", "dt_log_softmax", su_s0, c_log_softmax, NULL, NULL, 0 },
    { "layer_norm", "dt_layer_norm", su_norm, c_layer_norm, NULL, NULL, 0 },
    { "rms_norm", "dt_rms_norm", su_norm, c_rms_norm, NULL, NULL, 0 },
    { "transpose", "dt_transpose", su_s0, c_transpose, NULL, NULL, 0 },
    { "permute", "dt_permute", su_3d, c_permute, NULL, NULL, 0 },
    { "reshape", "dt_reshape", su_s0, c_reshape, NULL, NULL, 0 },
    { "unsqueeze", "dt_unsqueeze", su_s0, c_unsqueeze, NULL, NULL, 0 },
    { "narrow", "dt_narrow", su_s0, c_narrow, NULL, NULL, 0 },
    { "cat", "dt_cat", su_two, c_cat, NULL, NULL, 0 },
    { "stack", "dt_stack", su_two, c_stack, NULL, NULL, 0 },
    { "split", "dt_split", su_s0, c_split, NULL, NULL, 0 },
    { "embedding", "dt_embedding", su_emb, c_embedding, NULL, NULL, 0 },
    { "cross_entropy", "dt_cross_entropy", su_xent, c_xent, NULL, NULL, 0 },
    { "manual_seed", "dt_manual_seed", su_none, c_manual_seed, NULL, NULL, 0 },
    { "rng_save_state", "dt_rng_save_state", su_none, c_rng_save, NULL, NULL, 0 },
    { "rng_load_state", "dt_rng_load_state", su_rng, c_rng_load, NULL, NULL, 0 },
    { "tensor_rand", "dt_tensor_rand", su_s0, c_rand, NULL, NULL, 0 },
    { "tensor_randn", "dt_tensor_randn", su_s0, c_randn, NULL, NULL, 0 },
    { "uniform_", "dt_uniform_", su_s0, c_uniform, NULL, NULL, 0 },
    { "normal_", "dt_normal_", su_s0, c_normal, NULL, NULL, 0 },
    { "dropout", "dt_dropout", su_s0, c_dropout, NULL, NULL, 0 },
    { "set_halo", "dt_tensor_set_halo", su_s0, c_set_halo, NULL, NULL, 0 },
    { "halo_exchange", "dt_halo_exchange", su_halo, c_halo_exchange, NULL, NULL, 0 },
    { "stencil_apply", "dt_stencil_apply", su_halo, c_stencil, NULL, NULL, 1 },
    { "save_npy", "dt_tensor_save_npy", su_s0, c_save_npy, NULL, NULL, 0 },
    { "load_npy", "dt_tensor_load_npy", su_npy, c_load_npy, chk_same, NULL, 1 },
    { "tp_linear_create", "dt_tp_linear_create", su_none, c_tp_linear, NULL, done_tp_linear, 0 },
    { "tp_mlp_create", "dt_tp_mlp_create", su_none, c_tp_mlp, NULL, done_tp_mlp, 0 },
    { "tp_linear_forward", "dt_tp_linear_forward", su_lin, c_lin_forward, NULL, done_tp_linear, 0 },
    { "tp_linear_backward", "dt_tp_linear_backward", su_lin_bwd, c_lin_backward, NULL, done_tp_linear, 0 },
    { "tp_mlp_forward", "dt_tp_mlp_forward", su_layer, c_mlp_forward, NULL, done_tp_mlp, 0 },
    { "tp_mlp_backward", "dt_tp_mlp_backward", su_layer_bwd, c_mlp_backward, NULL, done_tp_mlp, 0 },
};
#define NCASES ((int)(sizeof g_cases / sizeof g_cases[0]))

/* ------------------------------------------------------------ snapshots */

typedef struct snap {
    int n;
    dt_tensor_desc d[6];
    unsigned char *data[6];
    size_t bytes[6];
    const dt_tensor *out;
    unsigned char *outdata;
    size_t outbytes;
} snap;

static void snap_take(snap *s, const fx *f)
{
    int i;
    s->n = f->nin;
    for (i = 0; i < f->nin; i++) {
        s->d[i] = *dt_tensor_get_desc(f->in[i]);
        s->bytes[i] = dt_tensor_local_numel(f->in[i]) * dt_dtype_size(s->d[i].dtype);
        s->data[i] = (unsigned char *)malloc(s->bytes[i] + 1);
        memcpy(s->data[i], dt_tensor_data(f->in[i]), s->bytes[i]);
    }
    s->out = f->out;
    s->outdata = NULL;
    s->outbytes = 0;
    if (f->out) {
        s->outbytes = dt_tensor_local_numel(f->out) * dt_dtype_size(dt_tensor_get_desc(f->out)->dtype);
        s->outdata = (unsigned char *)malloc(s->outbytes + 1);
        memcpy(s->outdata, dt_tensor_data(f->out), s->outbytes);
    }
}

/* inputs that the call writes by design (axpy's y, in-place fills, halo's tensor) are skipped */
static int writes_input(const fcase *c)
{
    return c->call == c_axpy || c->call == c_uniform || c->call == c_normal;
}

static void snap_check(const snap *s, const fx *f, const fcase *c, int check_out)
{
    int i;
    for (i = 0; i < s->n; i++) {
        if (i == 0 && writes_input(c)) continue;
        CHECK(memcmp(&s->d[i], dt_tensor_get_desc(f->in[i]), sizeof s->d[i]) == 0, "input %d's desc changed", i);
        CHECK(dt_tensor_local_numel(f->in[i]) * dt_dtype_size(s->d[i].dtype) == s->bytes[i] &&
                  memcmp(s->data[i], dt_tensor_data(f->in[i]), s->bytes[i]) == 0,
              "input %d's local data changed", i);
    }
    if (!check_out) return;
    CHECK(f->out == s->out, "*out changed: %p -> %p", (const void *)s->out, (void *)f->out);
    if (s->out && f->out == s->out)
        CHECK(memcmp(s->outdata, dt_tensor_data(f->out), s->outbytes) == 0, "the existing *out's contents changed");
}

static void snap_free(snap *s)
{
    int i;
    for (i = 0; i < s->n; i++) free(s->data[i]);
    free(s->outdata);
    s->n = 0;
}

/* ------------------------------------------------------------ the sweeps */

static long g_runs = 0;


/* a fresh fixture with injection off; 0 on success */
static int fx_make(fx *f, int backend, const fcase *c, int reuse)
{
    long save = fa_fail_at, msave = g_mirror.fail_at;
    int bad;
    fa_fail_at = 0;
    g_mirror.fail_at = 0;
    memset(f, 0, sizeof *f);
    f->backend = backend;
    bad = make_comm(backend, &f->c) || make_mesh(f->c, mesh_n(f), &f->m) || c->setup(f);
    if (!bad && reuse) { /* a first call makes *out, filled with a pattern */
        bad = c->call(f) != DT_OK || !f->out;
        if (!bad) memset(dt_tensor_data(f->out), SENTINEL, dt_tensor_local_numel(f->out) * dt_dtype_size(dt_tensor_get_desc(f->out)->dtype));
    }
    fa_fail_at = save;
    g_mirror.fail_at = msave;
    return bad;
}

static void fx_finish(fx *f, const fcase *c)
{
    if (f->obj && c->done) c->done(f);
    fx_destroy(f);
}

/* one run: mode 0 allocation n fails, mode 1 backend callback n fails, n = 0: none.
   Returns the status; *count gets the allocations / callbacks the call made. */
static dt_status run_one(const fcase *c, int backend, int reuse, int mode, long n, long *count, fx *keep)
{
    fx f;
    snap s;
    dt_status st;
    long base = fa_live;
    if (fx_make(&f, backend, c, reuse)) {
        CHECK(0, "fixture setup failed: %s", dt_last_error());
        fx_finish(&f, c);
        return DT_ERR_ARG;
    }
    snap_take(&s, &f);
    dt_clear_error();
    fa_count = 0;
    g_mirror.calls = 0;
    if (mode == 0) fa_fail_at = n; else g_mirror.fail_at = n;
    g_runs++;
    st = c->call(&f);
    fa_fail_at = 0;
    g_mirror.fail_at = 0;
    *count = mode == 0 ? fa_count : g_mirror.calls;
    if (n > 0 && st != DT_OK) {
        dt_status want = mode == 0 ? DT_ERR_NOMEM : DT_ERR_COMM;
        CHECK(st == want, "returned %s, want %s: %s", dt_status_string(st), dt_status_string(want), dt_last_error());
        CHECK_ERRMSG(c->fn);
        snap_check(&s, &f, c, 1);
        if (c->call == c_gather) CHECK(buf_untouched(&f), "the caller's buffer was written on failure");
        if (!reuse) CHECK(f.out == NULL && f.out2 == NULL, "*out set on failure");
        if (c->done && c->setup == su_none) CHECK(f.obj == NULL, "*out set on failure");
    } else if (st == DT_OK) {
        snap_check(&s, &f, c, 0);
    } else {
        CHECK(0, "fault-free call failed: %s: %s", dt_status_string(st), dt_last_error());
    }
    snap_free(&s);
    if (keep && st == DT_OK) {
        *keep = f;
        return st;
    }
    fx_finish(&f, c);
    CHECK(fa_live == base, "%ld blocks live after cleanup (leak)", fa_live - base);
    fa_live = base;
    return st;
}

static int g_check_out = 1;

static void compare_out(const fx *a, const fx *b)
{
    size_t n;
    if (!a->out || !b->out) return;
    n = dt_tensor_local_numel(a->out) * dt_dtype_size(dt_tensor_get_desc(a->out)->dtype);
    CHECK(n == dt_tensor_local_numel(b->out) * dt_dtype_size(dt_tensor_get_desc(b->out)->dtype) &&
              memcmp(dt_tensor_data(a->out), dt_tensor_data(b->out), n) == 0,
          "a tolerated failure gave another result than the fault-free call");
}

static void sweep(const fcase *c, int backend, int reuse, int mode)
{
    long total = 0, n, dummy;
    fx ref;
    dt_status st;
    dtt_ctx("%s: %s backend, %s%s", c->name, backend ? "mirror" : "self", mode ? "backend faults" : "allocation faults",
            reuse ? ", existing *out" : "");
    g_rooted = c->call == c_distribute_0 || c->call == c_save_npy || c->call == c_load_npy || c->call == c_rng_save ||
               c->call == c_rng_load;
    /* fault-free: the count, and the closed form */
    memset(&ref, 0, sizeof ref);
    st = run_one(c, backend, reuse, mode, 0, &total, &ref);
    if (st != DT_OK) return;
    if (c->check && g_check_out) CHECK(c->check(&ref), "wrong values from the fault-free call");
    for (n = 1; n <= total; n++) {
        if (dtt_quick && n > 8 && n < total && n % 3) continue;
        dtt_ctx("%s: %s backend, %s %ld of %ld%s", c->name, backend ? "mirror" : "self",
                mode ? "backend callback" : "allocation", n, total, reuse ? ", existing *out" : "");
        {
            fx got;
            long base = fa_live;
            memset(&got, 0, sizeof got);
            st = run_one(c, backend, reuse, mode, n, &dummy, &got);
            if (st == DT_OK) {
                if (!reuse) compare_out(&ref, &got);
                fx_finish(&got, c);
                CHECK(fa_live == base, "%ld blocks live after cleanup (leak)", fa_live - base);
                fa_live = base;
            }
        }
    }
    fx_finish(&ref, c);
    CHECK(fa_live == 0, "%ld blocks live after cleanup (leak)", fa_live);
    fa_live = 0;
}

int main(int argc, char **argv)
{
    int i, b;
    dtt_init(&argc, &argv, "faults");
    for (b = 0; b < 2; b++)
        for (i = 0; i < NCASES; i++) {
            const fcase *c = &g_cases[i];
            if (b == 0 && c->call == c_mesh_flatten) { /* a one-rank mesh has nothing to flatten differently */ }
            sweep(c, b, 0, 0);
            if (c->reuse) sweep(c, b, 1, 0);
            if (b == 1) sweep(c, b, 0, 1);
            if (b == 1 && c->reuse) sweep(c, b, 1, 1);
        }
    if (g_mirror.asym && dtt_rank == 0 && getenv("DT_TEST_VERBOSE"))
        fprintf(stderr, "faults: %ld asymmetric mirror receives\n", g_mirror.asym);
    if (dtt_rank == 0 && getenv("DT_TEST_VERBOSE")) fprintf(stderr, "faults: %ld runs\n", g_runs);
    return dtt_finish();
}
