/* tests/fuzz/fuzz_sim.h -- what the libFuzzer targets share: a byte reader
   that turns the fuzz input into bounded parameters, a counting "simulation"
   backend (one process plays rank r of N, after bench/planner.c's idea), and
   an independent torch.chunk layout. Included once by each target, after
   dtensor.h's implementation. */
#ifndef FUZZ_SIM_H
#define FUZZ_SIM_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the library must see allocation failures (huge fuzzed shapes) as NULL, not
   have ASan abort the run */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

/* ------------------------------------------------------------ the byte reader */

typedef struct fz { const uint8_t *p; size_t n, i; } fz;

static unsigned fz_u8(fz *f) { return f->i < f->n ? f->p[f->i++] : 0u; }
static unsigned fz_u16(fz *f) { unsigned a = fz_u8(f); return a | fz_u8(f) << 8; }
/* an integer in [0, k) (k >= 1) */
static int fz_below(fz *f, int k) { return k <= 1 ? 0 : (int)(fz_u16(f) % (unsigned)k); }

#define FZ_FAIL(...) do { fprintf(stderr, "FUZZ CHECK FAILED (%s:%d): ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } while (0)
#define FZ_ASSERT(c, ...) do { if (!(c)) FZ_FAIL(__VA_ARGS__); } while (0)

/* ------------------------------------------------------------ the counting backend

   Every callback counts the bytes this rank would receive from other ranks
   and writes what keeps the library's control logic sane when one process
   plays one rank: the simulated peers "mirror" this rank (allgatherv: every
   block gets my contribution, alltoallv / sendrecv: I receive what I send,
   allreduce SUM: p x mine, MAX/MIN: mine). `split` takes the sizes of the
   communicators dt_mesh_create will split off from a queue the target fills
   (the mesh comm, then one per mesh dim); the key is the new rank. */

typedef struct sim_world {
    uint64_t calls, sent, recv;
    int queue[DT_MAX_MESH_DIMS + 1], nq, iq;
    unsigned char pat[8]; /* what the peers hold where I hold nothing: pat_n-byte */
    size_t pat_n;         /* elements repeated (0: zeros)                          */
} sim_world;

typedef struct sim_comm { sim_world *w; int rank, size; } sim_comm;

static sim_world *sim_cur; /* the world of the comm the callback runs for */
static void sim_mirror(void *dst, size_t n, const void *src, size_t have) {
    size_t k = have < n ? have : n, i;
    if (!n || !dst) return;
    if (k && dst != src) memmove(dst, src, k);
    if (n > k) {
        if (sim_cur && sim_cur->pat_n)
            for (i = k; i < n; i++) ((unsigned char *)dst)[i] = sim_cur->pat[i % sim_cur->pat_n];
        else
            memset((char *)dst + k, 0, n - k);
    }
}

static void sim_times_p(void *buf, size_t count, dt_dtype t, dt_reduce op, int p) {
    size_t i;
    if (op != DT_SUM) return;
    for (i = 0; i < count; i++) switch (t) {
        case DT_F32: ((float *)buf)[i] *= (float)p; break;
        case DT_F64: ((double *)buf)[i] *= (double)p; break;
        case DT_I32: ((int32_t *)buf)[i] = (int32_t)((uint32_t)((int32_t *)buf)[i] * (uint32_t)p); break;
        case DT_I64: ((int64_t *)buf)[i] = (int64_t)((uint64_t)((int64_t *)buf)[i] * (uint64_t)p); break;
        case DT_U8: ((uint8_t *)buf)[i] = (uint8_t)(((uint8_t *)buf)[i] * p); break;
        default: break;
        }
}

static dt_status sim_sendrecv(void *user, const void *sb, size_t sn, int dest, void *rb, size_t rn, int src, int tag) {
    sim_comm *c = (sim_comm *)user;
    sim_cur = c->w;
    (void)tag;
    c->w->calls++;
    c->w->sent += dest >= 0 ? sn : 0;
    c->w->recv += src >= 0 ? rn : 0;
    if (src >= 0) sim_mirror(rb, rn, sb, dest >= 0 ? sn : 0);
    return DT_OK;
}

static dt_status sim_split(void *user, int color, int key, void **new_user, int *new_rank, int *new_size) {
    sim_comm *c = (sim_comm *)user, *n;
    *new_user = NULL;
    if (color < 0) return DT_OK;
    if (c->w->iq >= c->w->nq) return DT_ERR_UNSUPPORTED; /* a split the target did not queue */
    n = (sim_comm *)calloc(1, sizeof *n);
    if (!n) return DT_ERR_COMM;
    n->w = c->w;
    n->size = c->w->queue[c->w->iq++];
    n->rank = key;
    if (key < 0 || key >= n->size) { free(n); return DT_ERR_COMM; }
    *new_user = n;
    *new_rank = n->rank;
    *new_size = n->size;
    return DT_OK;
}

static dt_status sim_allgatherv(void *user, const void *sb, size_t sn, void *rb, const size_t *rc, const size_t *rd) {
    sim_comm *c = (sim_comm *)user;
    sim_cur = c->w;
    int j;
    c->w->calls++;
    for (j = 0; j < c->size; j++) {
        if (j != c->rank) { c->w->sent += rc[j]; c->w->recv += rc[j]; }
        if (rc[j] && (const char *)rb + rd[j] != (const char *)sb) sim_mirror((char *)rb + rd[j], rc[j], sb, sn);
    }
    return DT_OK;
}

static dt_status sim_alltoallv(void *user, const void *sb, const size_t *sc, const size_t *sd, void *rb,
                               const size_t *rc, const size_t *rd) {
    sim_comm *c = (sim_comm *)user;
    sim_cur = c->w;
    int j;
    c->w->calls++;
    for (j = 0; j < c->size; j++) {
        if (j != c->rank) { c->w->sent += sc[j]; c->w->recv += rc[j]; }
        if (rc[j]) sim_mirror((char *)rb + rd[j], rc[j], sc[j] ? (const char *)sb + sd[j] : NULL, sc[j]);
    }
    return DT_OK;
}

static dt_status sim_allreduce(void *user, const void *sb, void *rb, size_t count, dt_dtype t, dt_reduce op) {
    sim_comm *c = (sim_comm *)user;
    sim_cur = c->w;
    size_t bytes = count * dt_dtype_size(t);
    uint64_t p = (uint64_t)c->size;
    c->w->calls++;
    c->w->sent += 2 * (p - 1) * bytes / p;
    c->w->recv += 2 * (p - 1) * bytes / p;
    sim_mirror(rb, bytes, sb, bytes);
    sim_times_p(rb, count, t, op, c->size);
    return DT_OK;
}

static dt_status sim_reduce_scatter(void *user, const void *sb, void *rb, const size_t *counts, dt_dtype t,
                                    dt_reduce op) {
    sim_comm *c = (sim_comm *)user;
    sim_cur = c->w;
    size_t es = dt_dtype_size(t), off = 0, total = 0;
    int j;
    c->w->calls++;
    for (j = 0; j < c->size; j++) { if (j < c->rank) off += counts[j]; total += counts[j]; }
    c->w->sent += (total - counts[c->rank]) * es;
    c->w->recv += (total - counts[c->rank]) * es;
    if (counts[c->rank]) sim_mirror(rb, counts[c->rank] * es, (const char *)sb + off * es, counts[c->rank] * es);
    sim_times_p(rb, counts[c->rank], t, op, c->size);
    return DT_OK;
}

static dt_status sim_broadcast(void *user, void *buf, size_t bytes, int root) {
    sim_comm *c = (sim_comm *)user;
    (void)buf;
    c->w->calls++;
    c->w->sent += c->rank == root ? bytes : 0;
    c->w->recv += c->rank == root ? 0 : bytes;
    return DT_OK;
}

static dt_status sim_barrier(void *user) { ((sim_comm *)user)->w->calls++; return DT_OK; }
static void sim_destroy(void *user) { free(user); }

/* a comm: rank r of n */
static dt_status sim_comm_make(sim_world *w, int r, int n, dt_comm **comm) {
    dt_comm_desc d;
    sim_comm *c = (sim_comm *)calloc(1, sizeof *c);
    dt_status st;
    if (!c) return DT_ERR_NOMEM;
    memset(w, 0, sizeof *w);
    c->w = w; c->rank = r; c->size = n;
    memset(&d, 0, sizeof d);
    d.name = "sim"; d.rank = r; d.size = n; d.user = c;
    d.sendrecv = sim_sendrecv; d.split = sim_split; d.allgatherv = sim_allgatherv;
    d.alltoallv = sim_alltoallv; d.allreduce = sim_allreduce; d.reduce_scatter = sim_reduce_scatter;
    d.broadcast = sim_broadcast; d.barrier = sim_barrier; d.destroy = sim_destroy;
    st = dt_comm_custom(&d, comm);
    if (st) free(c);
    return st;
}

/* queue the splits dt_mesh_create(comm, md) makes, then make it */
static dt_status sim_mesh_make(sim_world *w, dt_comm *comm, const dt_mesh_desc *md, dt_mesh **mesh) {
    int i;
    long long prod = 1;
    w->nq = w->iq = 0;
    for (i = 0; i < md->ndim && i < DT_MAX_MESH_DIMS; i++) {
        prod *= md->shape[i] > 0 ? md->shape[i] : 1;
        if (prod > INT32_MAX) prod = INT32_MAX; /* refused by the validation anyway */
    }
    w->queue[w->nq++] = (int)prod;
    for (i = 0; i < md->ndim && i < DT_MAX_MESH_DIMS; i++) w->queue[w->nq++] = md->shape[i];
    return dt_mesh_create(comm, md, mesh);
}

/* ------------------------------------------------------------ the reference layout

   torch.chunk (ceil-div chunks, trailing parts empty, placed at the end of
   their parent) nested in mesh-dim order; written here again, not the
   library's dt__layout_box. */
typedef struct ref_box { int64_t lo[DT_MAX_DIMS], ext[DT_MAX_DIMS]; } ref_box;

static void ref_layout(int nd, const int64_t *g, int mnd, const int *ms, const int *coord, const dt_placement *pl,
                       ref_box *b) {
    int d, i;
    for (d = 0; d < nd; d++) { b->lo[d] = 0; b->ext[d] = g[d]; }
    for (i = 0; i < mnd; i++)
        if (pl[i].kind == DT_SHARD) {
            int td = pl[i].dim < 0 ? pl[i].dim + nd : pl[i].dim;
            /* in uint64: n < 2^63, so c * coord and a + c (< n + ms) do not wrap */
            uint64_t n = (uint64_t)b->ext[td], k = (uint64_t)ms[i], c = n / k + (n % k != 0);
            uint64_t a = c * (uint64_t)coord[i], e = a + c;
            if (a > n) a = n;
            if (e > n) e = n;
            b->lo[td] += (int64_t)a;
            b->ext[td] = (int64_t)(e - a);
        }
}

static int64_t ref_numel(int nd, const ref_box *b) {
    int64_t n = 1;
    int d;
    for (d = 0; d < nd; d++) n *= b->ext[d];
    return n;
}

static int64_t ref_overlap(int nd, const ref_box *a, const ref_box *b) {
    int64_t n = 1;
    int d;
    for (d = 0; d < nd; d++) {
        int64_t lo = a->lo[d] > b->lo[d] ? a->lo[d] : b->lo[d];
        int64_t ha = a->lo[d] + a->ext[d], hb = b->lo[d] + b->ext[d], hi = ha < hb ? ha : hb;
        n *= hi > lo ? hi - lo : 0;
    }
    return n;
}

/* mesh rank -> coordinate (row-major) */
static void ref_coord(int mnd, const int *ms, int rank, int *coord) {
    int i;
    for (i = mnd - 1; i >= 0; i--) { coord[i] = rank % ms[i]; rank /= ms[i]; }
}

/* silence the library's prints of plans/ops if the environment asks for them */
static void fz_quiet(void) { unsetenv("DTENSOR_LOG"); }
#endif
