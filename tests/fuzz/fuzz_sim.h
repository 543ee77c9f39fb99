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

/* mesh rank -> coordinate (row-major) */
static void ref_coord(int mnd, const int *ms, int rank, int *coord) {
    int i;
    for (i = mnd - 1; i >= 0; i--) { coord[i] = rank % ms[i]; rank /= ms[i]; }
}

/* ------------------------------------------------------------ the reference split rules

   Every Shard split rule (chunk, balanced, sizes, cyclic), nested in
   mesh-dim order, written here again from the contract (not the library's
   code): a rank's part of one tensor dim is a set of global indices, kept
   as sorted disjoint intervals [lo, hi), its
   "local order" being increasing. A Shard on mesh dim i with k ranks and
   coordinate c takes, of the n positions of the part the earlier mesh dims
   left:
     chunk     positions [c*ceil(n/k), (c+1)*ceil(n/k)) clipped to n;
     balanced  n/k + (c < n%k) positions after the earlier parts;
     sizes     sizes[c] positions after sizes[0..c) (they sum to n);
     cyclic(b) the positions p with (p / b) % k == c (blocks of b, the last
               one short, block j to coordinate j mod k). */
typedef struct ref_set { int n, cap; int64_t len; int64_t *iv; /* lo0, hi0, lo1, hi1, ... */ } ref_set;
typedef struct ref_part { int nd; ref_set s[DT_MAX_DIMS]; } ref_part;

static void ref_set_free(ref_set *s) { free(s->iv); memset(s, 0, sizeof *s); }
static void ref_part_free(ref_part *p) { int d; for (d = 0; d < DT_MAX_DIMS; d++) ref_set_free(&p->s[d]); }

static void ref_set_add(ref_set *s, int64_t lo, int64_t hi) {
    if (hi <= lo) return;
    if (s->n && s->iv[2 * s->n - 1] == lo) { s->iv[2 * s->n - 1] = hi; s->len += hi - lo; return; } /* merge */
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 4;
        int64_t *iv = (int64_t *)realloc(s->iv, (size_t)cap * 2 * sizeof(int64_t));
        if (!iv) FZ_FAIL("out of memory");
        s->iv = iv;
        s->cap = cap;
    }
    s->iv[2 * s->n] = lo;
    s->iv[2 * s->n + 1] = hi;
    s->n++;
    s->len += hi - lo;
}

/* positions [a, b) of src, appended to dst; *cur / *base: a cursor (interval, its first position) kept
   across calls with increasing a */
static void ref_take(const ref_set *src, int64_t a, int64_t b, ref_set *dst, int *cur, int64_t *base) {
    while (a < b && *cur < src->n) {
        int64_t lo = src->iv[2 * *cur], hi = src->iv[2 * *cur + 1], w = hi - lo;
        if (a >= *base + w) { *base += w; (*cur)++; continue; }
        {
            int64_t s0 = lo + (a - *base), e = b - *base < w ? lo + (b - *base) : hi;
            ref_set_add(dst, s0, e);
            a += e - s0;
        }
    }
}

/* one rule: the part of coordinate c of k, of the set `in` (n = in->len positions) */
static void ref_rule(const ref_set *in, const dt_placement *p, int k, int c, ref_set *out) {
    uint64_t n = (uint64_t)in->len, uk = (uint64_t)k, uc = (uint64_t)c;
    int cur = 0;
    int64_t base = 0;
    memset(out, 0, sizeof *out);
    switch (p->split) {
    case DT_SPLIT_BALANCED: {
        uint64_t q = n / uk, r = n % uk, a = uc * q + (uc < r ? uc : r);
        ref_take(in, (int64_t)a, (int64_t)(a + q + (uc < r)), out, &cur, &base);
        break;
    }
    case DT_SPLIT_SIZES: {
        int64_t a = 0;
        int j;
        for (j = 0; j < c; j++) a += p->sizes[j];
        ref_take(in, a, a + p->sizes[c], out, &cur, &base);
        break;
    }
    case DT_SPLIT_CYCLIC: {
        uint64_t b = (uint64_t)p->block, j;
        for (j = uc; j <= (n - 1) / b && n; j += uk) { /* block j: positions [j b, min(n, (j+1) b)) */
            uint64_t a = j * b, e = n - a < b ? n : a + b;
            ref_take(in, (int64_t)a, (int64_t)e, out, &cur, &base);
            if (n / b - j < uk) break; /* (j + k) b would pass n or wrap */
        }
        break;
    }
    default: { /* torch.chunk; in uint64: c * ceil < n + ceil, no wrap */
        uint64_t ch = n / uk + (n % uk != 0), a = ch * uc, e = a + ch;
        if (a > n) a = n;
        if (e > n) e = n;
        ref_take(in, (int64_t)a, (int64_t)e, out, &cur, &base);
    }
    }
}

/* the part of mesh coordinate `coord`, every tensor dim */
static void ref_part_of(int nd, const int64_t *g, int mnd, const int *ms, const int *coord, const dt_placement *pl,
                        ref_part *part) {
    int d, i;
    memset(part, 0, sizeof *part);
    part->nd = nd;
    for (d = 0; d < nd; d++) ref_set_add(&part->s[d], 0, g[d]);
    for (i = 0; i < mnd; i++)
        if (pl[i].kind == DT_SHARD) {
            int td = pl[i].dim < 0 ? pl[i].dim + nd : pl[i].dim;
            ref_set next;
            ref_rule(&part->s[td], &pl[i], ms[i], coord[i], &next);
            ref_set_free(&part->s[td]);
            part->s[td] = next;
        }
}

/* how many positions one rule gives coordinate c of k out of n (the length only) */
static int64_t ref_rule_len(int64_t n, const dt_placement *p, int k, int c) {
    uint64_t un = (uint64_t)n, uk = (uint64_t)k, uc = (uint64_t)c;
    switch (p->split) {
    case DT_SPLIT_BALANCED: return (int64_t)(un / uk + (uc < un % uk));
    case DT_SPLIT_SIZES: return p->sizes[c];
    case DT_SPLIT_CYCLIC: { /* NUMROC */
        uint64_t b = (uint64_t)p->block, full = un / b, rem = un % b;
        return (int64_t)((full / uk + (uc < full % uk)) * b + (full % uk == uc ? rem : 0));
    }
    default: {
        uint64_t ch = un / uk + (un % uk != 0), a = ch * uc, e = a + ch;
        if (a > un) a = un;
        if (e > un) e = un;
        return (int64_t)(e - a);
    }
    }
}

static int64_t ref_set_overlap(const ref_set *a, const ref_set *b) {
    int i = 0, j = 0;
    int64_t n = 0;
    while (i < a->n && j < b->n) {
        int64_t lo = a->iv[2 * i] > b->iv[2 * j] ? a->iv[2 * i] : b->iv[2 * j];
        int64_t hi = a->iv[2 * i + 1] < b->iv[2 * j + 1] ? a->iv[2 * i + 1] : b->iv[2 * j + 1];
        if (hi > lo) n += hi - lo;
        if (a->iv[2 * i + 1] < b->iv[2 * j + 1]) i++; else j++;
    }
    return n;
}

static int ref_set_same(const ref_set *a, const ref_set *b) {
    return a->n == b->n && (a->n == 0 || !memcmp(a->iv, b->iv, (size_t)a->n * 2 * sizeof(int64_t)));
}

/* elements of a part (its sets' lengths multiplied; callers keep the tensor small) */
static int64_t ref_part_numel(const ref_part *p) {
    int64_t n = 1;
    int d;
    for (d = 0; d < p->nd; d++) n *= p->s[d].len;
    return n;
}

static int64_t ref_part_overlap(const ref_part *a, const ref_part *b) {
    int64_t n = 1;
    int d;
    for (d = 0; d < a->nd && n; d++) n *= ref_set_overlap(&a->s[d], &b->s[d]);
    return n;
}

/* the i-th (local order) global index of a set */
static int64_t ref_set_at(const ref_set *s, int64_t i) {
    int k;
    for (k = 0; k < s->n; k++) {
        int64_t w = s->iv[2 * k + 1] - s->iv[2 * k];
        if (i < w) return s->iv[2 * k] + i;
        i -= w;
    }
    return -1;
}

/* Draw the split rule of Shard placement pl[i] (the earlier ones final), into pl[i]:
   chunk, balanced, cyclic with a random block (at most ~4096 blocks of the
   global extent g[td], so the reference stays small), or sizes (with zeros)
   stored in store[0..ms[i]) when the part the earlier mesh dims leave has one
   length L for every earlier coordinate. With allow_bad, now and then a bad
   rule on purpose: sizes not adding up, a negative size, sizes for a part
   whose length varies, block <= 0, an unknown split. Returns 1 if the rule
   is valid, 0 if it was made bad. */
static int fz_rule(fz *f, int nd, const int64_t *g, int mnd, const int *ms, dt_placement *pl, int i, int64_t *store,
                   int allow_bad) {
    int td = pl[i].dim < 0 ? pl[i].dim + nd : pl[i].dim, k = ms[i], j, ncoord = 1, e, uniform = 1;
    unsigned what = fz_u8(f) % 8;
    int64_t L = -1;
    int coord[DT_MAX_MESH_DIMS];
    (void)mnd;
    if (what <= 2) return 1;                                     /* torch.chunk, as drawn */
    if (what == 3) { pl[i] = dt_shard_balanced(pl[i].dim); return 1; }
    if (what >= 6) {                                             /* cyclic */
        int64_t b = 1 + (int64_t)fz_below(f, 6), min = g[td] / 4096 + 1;
        if (fz_u8(f) % 4 == 0) b = 1 + (int64_t)fz_u16(f);
        if (b < min) b = min;
        pl[i] = dt_shard_cyclic(pl[i].dim, b);
        if (allow_bad && fz_u8(f) == 255) { pl[i].block = -(int64_t)fz_below(f, 3); return 0; }
        if (allow_bad && fz_u8(f) == 254) { pl[i].split = (uint8_t)(4 + fz_below(f, 250)); return 0; }
        return 1;
    }
    /* sizes: the length of the part left for every coordinate of the earlier mesh dims */
    for (j = 0; j < i; j++) ncoord *= ms[j];
    for (e = 0; e < ncoord; e++) {
        int64_t n = g[td], rest = e;
        for (j = i - 1; j >= 0; j--) { coord[j] = (int)(rest % ms[j]); rest /= ms[j]; }
        for (j = 0; j < i; j++)
            if (pl[j].kind == DT_SHARD && (pl[j].dim < 0 ? pl[j].dim + nd : pl[j].dim) == td)
                n = ref_rule_len(n, &pl[j], ms[j], coord[j]);
        if (L < 0) L = n;
        else if (n != L) uniform = 0;
    }
    if (!uniform && !(allow_bad && (fz_u8(f) & 1))) { pl[i] = dt_shard_balanced(pl[i].dim); return 1; }
    {
        int64_t left = L;
        for (j = 0; j < k - 1; j++) {
            unsigned m = fz_u8(f) % 4;
            int64_t s = m == 0 ? 0 : m == 1 ? left : (left <= 65535 ? (int64_t)fz_below(f, (int)left + 1) : left / (int64_t)(2 + m));
            store[j] = s;
            left -= s;
        }
        store[k - 1] = left;
    }
    pl[i] = dt_shard_sizes(pl[i].dim, store);
    if (!uniform) return 0;
    if (allow_bad && fz_u8(f) == 255) {
        unsigned m = fz_u8(f) % 3;
        j = fz_below(f, k);
        if (m == 0 && store[j] < INT64_MAX) {
            store[j] += 1; /* adds up to L + 1 */
        } else if (m == 1) { /* a negative size, the sum kept where it can be */
            int j2 = (j + 1) % k;
            int64_t x = store[j] < INT64_MAX ? store[j] + 1 : INT64_MAX;
            if (k > 1 && store[j2] <= INT64_MAX - x) store[j2] += x;
            store[j] = -1;
        } else {
            pl[i].sizes = NULL;
        }
        return 0;
    }
    return 1;
}

/* silence the library's prints of plans/ops if the environment asks for them */
static void fz_quiet(void) { unsetenv("DTENSOR_LOG"); }
#endif
