/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_strided.c -- strided local storage (desc.local_strides).

   A rank's shard wrapped where it lies in the caller's memory: a row-major
   array with each row padded, a column-major (Fortran) array, one field of
   an array of structs (innermost stride 3), a 3-D array padded on two dims,
   a ghosted array (local_ghost) with explicit padded strides, permuted
   strides (dim 1 innermost, then dim 0, then the rest). Every storage
   sits inside a larger buffer; guards, padding, ghost cells and the unused
   struct fields hold a sentinel byte pattern. Values are a closed form of
   the global index (dtt_val, Partial parts from dtt_model_value), with the
   local layout of every rule (torch.chunk, balanced, explicit sizes,
   block-cyclic, nested) computed here from the placements alone.

   Checked, on the 1-D mesh of all ranks and every 2-D factorisation
   (--quick: the middle one), F64 / I32 / F32 / I64 / F16 / U8, 1-D, 2-D
   and 3-D tensors:
   - redistribution from a strided source to Shard / Replicate / balanced /
     sizes / block-cyclic / Partial targets: the result's local values, a
     gather of it, the source buffer unchanged, and the bytes sent and
     received equal to the same redistribution from a contiguous copy;
   - strided targets: an existing *out wrapping strided storage, from a
     strided and from a contiguous source: its elements hold the closed
     form, every other byte of its buffer is still the sentinel (and its
     bytes moved equal a contiguous target's); a refused redistribution
     into it writes nothing;
   - dt_tensor_gather of strided tensors, DT_COPY of a strided buffer
     (contiguous, row-major strides), dt_tensor_local_strides, dt_tensor_data;
   - empty shards (more ranks than rows, empty explicit sizes), uneven ones;
     DT_INFER_SIZES (own-sized shards, column-major with a padded leading
     dimension); a sub-mesh with a rank outside it; DT_VERIFY sources; one
     row per rank with a huge row stride (never stepped);
   - bad strides on every rank and on one rank alone (0, negative, overlap,
     overflow, a device tensor): refused everywhere, dt_last_error names
     dt_tensor_from_local and the value, no tensor made, the buffer
     byte-for-byte unchanged; ops / random fills / .npy on a strided tensor
     agree on every rank and, when refused, write nothing. */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

#define NG 13            /* guard elements before and after each storage */
#define SENT 0xA7        /* the sentinel byte: guards, padding, ghost cells */
#define MAXLIST 24

static long ncases = 0;

/* ---------------------------------------------------------------- reference layout */

/* the global indices of this rank's local positions along each tensor dim,
   from the placements alone (nested in mesh-dim order) */
typedef struct lay {
    int nd;
    int64_t n[DT_MAX_DIMS];
    int64_t *idx[DT_MAX_DIMS];
} lay;

static void lay_make(lay *L, const dtt_mesh *m, int nd, const int64_t *shape, const dt_placement *pl)
{
    int d, k;
    memset(L, 0, sizeof *L);
    L->nd = nd;
    for (d = 0; d < nd; d++) {
        int64_t *cur = (int64_t *)dtt_malloc(sizeof(int64_t) * (size_t)(shape[d] + 1)), len = shape[d], i, j;
        for (i = 0; i < len; i++) cur[i] = i;
        if (m->nd > 0 && m->coord[0] < 0) len = 0; /* a rank outside the mesh: nothing */
        for (k = 0; k < m->nd; k++) {
            int64_t parts = m->shape[k], c = m->coord[k], lo = 0, cnt = 0;
            if (pl[k].kind != DT_SHARD || dtt_norm_dim(pl[k].dim, nd) != d) continue;
            switch (pl[k].split) {
            case DT_SPLIT_CHUNK: {
                int64_t ch = (len + parts - 1) / parts, hi;
                lo = c * ch < len ? c * ch : len;
                hi = (c + 1) * ch < len ? (c + 1) * ch : len;
                cnt = hi - lo;
                break;
            }
            case DT_SPLIT_BALANCED: {
                int64_t q = len / parts, r = len % parts;
                lo = c * q + (c < r ? c : r);
                cnt = q + (c < r);
                break;
            }
            case DT_SPLIT_SIZES:
                for (j = 0; j < c; j++) lo += pl[k].sizes[j];
                cnt = pl[k].sizes[c];
                break;
            case DT_SPLIT_CYCLIC:
                for (i = 0, j = 0; i < len; i++)
                    if ((i / pl[k].block) % parts == c) cur[j++] = cur[i];
                len = j;
                continue;
            }
            for (i = 0; i < cnt; i++) cur[i] = cur[lo + i];
            len = cnt;
        }
        L->n[d] = len;
        L->idx[d] = cur;
    }
}

static void lay_free(lay *L)
{
    int d;
    for (d = 0; d < L->nd; d++) free(L->idx[d]);
    memset(L, 0, sizeof *L);
}

static int64_t lay_numel(const lay *L) { return dtt_numel(L->nd, L->n); }

/* local position li (row-major over L->n): its multi-index and global linear index */
static int64_t lay_global(const lay *L, const int64_t *shape, int64_t li, int64_t *ix)
{
    int64_t g = 0;
    int d;
    for (d = L->nd - 1; d >= 0; d--) {
        ix[d] = L->n[d] ? li % L->n[d] : 0;
        li = L->n[d] ? li / L->n[d] : 0;
    }
    for (d = 0; d < L->nd; d++) g = g * shape[d] + L->idx[d][ix[d]];
    return g;
}

/* ---------------------------------------------------------------- strided storage */

enum { K_CONTIG, K_ROWPAD, K_COLMAJOR, K_AOS, K_PAD3D, K_GHOST, K_PERM, NKIND };
static const char *kname[] = { "contiguous", "padded-rows", "column-major", "struct-field", "3d-pad2", "ghosted+padded",
                               "permuted" };

typedef struct sarr {
    int kind, nd;
    dt_dtype t;
    size_t es;
    int64_t shape[DT_MAX_DIMS];
    dt_placement pl[DT_MAX_MESH_DIMS];
    lay L;
    int64_t g[DT_MAX_DIMS];    /* ghost room (K_GHOST) */
    int64_t st[DT_MAX_DIMS];   /* element strides of the storage */
    int64_t base;              /* element offset of the storage's start (`local`) in buf */
    int64_t e0;                /* element offset of interior element 0 from the storage's start */
    int64_t nbuf;              /* elements in buf */
    unsigned char *buf, *mask; /* mask[i]: buf element i is a tensor element */
    dt_tensor *t_;
} sarr;

static int64_t sarr_pos(const sarr *a, const int64_t *ix)
{
    int64_t p = a->base + a->e0;
    int d;
    for (d = 0; d < a->nd; d++) p += ix[d] * a->st[d];
    return p;
}

/* the sentinel everywhere (the tensor's elements included) */
static void sarr_poison(sarr *a) { memset(a->buf, SENT, (size_t)a->nbuf * a->es); }

/* the tensor's elements from the model (md), everything else the sentinel */
static void sarr_fill(sarr *a, const dtt_mesh *m, const dtt_model *md)
{
    int64_t n = lay_numel(&a->L), li, ix[DT_MAX_DIMS];
    sarr_poison(a);
    for (li = 0; li < n; li++) {
        int64_t g = lay_global(&a->L, a->shape, li, ix);
        dtt_store(a->t, a->buf, (size_t)sarr_pos(a, ix), dtt_model_value(m, a->t, g, md));
    }
}

/* the storage of `kind` for the placements pl (interior poisoned until sarr_fill) */
static void sarr_init(sarr *a, const dtt_mesh *m, dt_dtype t, int nd, const int64_t *shape, const dt_placement *pl,
                      int kind)
{
    int64_t ext[DT_MAX_DIMS], E[DT_MAX_DIMS], span = 1, n, li, ix[DT_MAX_DIMS];
    int d, empty = 0;
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->nd = nd;
    a->t = t;
    a->es = dtt_size(t);
    for (d = 0; d < nd; d++) a->shape[d] = shape[d];
    for (d = 0; d < m->nd; d++) a->pl[d] = pl[d];
    lay_make(&a->L, m, nd, shape, pl);
    for (d = 0; d < nd; d++) {
        a->g[d] = kind == K_GHOST ? (d == 0 ? 1 : d == nd - 1 ? 2 : 1) : 0;
        ext[d] = a->L.n[d] + 2 * a->g[d];
        E[d] = ext[d] > 0 ? ext[d] : 1;
        empty |= ext[d] == 0;
    }
    switch (kind) {
    case K_CONTIG:
        for (d = nd - 1; d >= 0; d--) a->st[d] = d == nd - 1 ? 1 : a->st[d + 1] * E[d + 1];
        break;
    case K_ROWPAD: /* the leading dimension (row length) padded by 3 */
        for (d = nd - 1; d >= 0; d--) a->st[d] = d == nd - 1 ? 1 : a->st[d + 1] * (E[d + 1] + (d == nd - 2 ? 3 : 0));
        break;
    case K_PAD3D: /* padding on the two inner dims: rows by 2, planes by one row */
        for (d = nd - 1; d >= 0; d--)
            a->st[d] = d == nd - 1 ? 1 : a->st[d + 1] * (E[d + 1] + (d == nd - 2 ? 2 : 1));
        break;
    case K_GHOST: /* a ghosted array whose rows are padded by 2 */
        for (d = nd - 1; d >= 0; d--) a->st[d] = d == nd - 1 ? 1 : a->st[d + 1] * (E[d + 1] + (d == nd - 2 ? 2 : 0));
        break;
    case K_COLMAJOR:
        for (d = 0; d < nd; d++) a->st[d] = d == 0 ? 1 : a->st[d - 1] * E[d - 1];
        break;
    case K_PERM: /* dim 1 innermost, then dim 0 (padded by 1), then dims 2.. (a 2-D array: padded column-major) */
        if (nd == 1) { a->st[0] = 2; break; }
        a->st[1] = 1;
        a->st[0] = E[1] + 1;
        for (d = 2; d < nd; d++) a->st[d] = (d == 2 ? a->st[0] * E[0] : a->st[d - 1] * E[d - 1]);
        break;
    case K_AOS: /* field 1 of struct { T f0, f1, f2; } s[...] (row-major over the local shape) */
        for (d = nd - 1; d >= 0; d--) a->st[d] = d == nd - 1 ? 3 : a->st[d + 1] * E[d + 1];
        break;
    }
    for (d = 0; d < nd; d++) span += (E[d] - 1) * a->st[d];
    if (empty) span = 0;
    for (d = 0; d < nd; d++) a->e0 += a->g[d] * a->st[d];
    a->base = NG + (kind == K_AOS ? 1 : 0);
    a->nbuf = a->base + span + 2 + NG;
    a->buf = (unsigned char *)dtt_malloc((size_t)a->nbuf * a->es);
    a->mask = (unsigned char *)dtt_malloc((size_t)a->nbuf);
    memset(a->mask, 0, (size_t)a->nbuf);
    n = lay_numel(&a->L);
    for (li = 0; li < n; li++) {
        lay_global(&a->L, a->shape, li, ix);
        a->mask[sarr_pos(a, ix)] = 1;
    }
    sarr_poison(a);
}

static void *sarr_local(const sarr *a) { return a->buf + (size_t)a->base * a->es; }

static dt_tensor_desc sarr_desc(const sarr *a, const dtt_mesh *m)
{
    dt_tensor_desc d;
    int k;
    memset(&d, 0, sizeof d);
    d.dtype = a->t;
    d.ndim = a->nd;
    for (k = 0; k < a->nd; k++) d.shape[k] = a->shape[k];
    for (k = 0; k < m->nd; k++) d.placements[k] = a->pl[k];
    d.local_shape = a->L.n;
    d.local_alloc = a->buf; /* the whole allocation, guards included */
    d.local_alloc_bytes = (int64_t)((size_t)a->nbuf * a->es);
    if (a->kind != K_CONTIG) d.local_strides = a->st;
    if (a->kind == K_GHOST) d.local_ghost = a->g;
    return d;
}

/* wrap the storage (DT_BORROW); checks dt_tensor_data and dt_tensor_local_strides */
#define sarr_wrap(a, m) sarr_wrap_f(a, m, DT_BORROW)
static dt_tensor *sarr_wrap_f(sarr *a, const dtt_mesh *m, unsigned flags)
{
    dt_tensor_desc d = sarr_desc(a, m);
    int64_t got[DT_MAX_DIMS];
    int k;
    a->t_ = NULL;
    CHECK_OK(dt_tensor_from_local(m->mesh, &d, sarr_local(a), flags, &a->t_));
    if (!a->t_) return NULL;
    if (lay_numel(&a->L) > 0)
        CHECK(dt_tensor_data(a->t_) == (void *)(a->buf + (size_t)(a->base + a->e0) * a->es),
              "%s: dt_tensor_data is not local element 0", kname[a->kind]);
    CHECK(dt_tensor_local_strides(a->t_, got) == a->nd, "%s: dt_tensor_local_strides ndim", kname[a->kind]);
    if (a->kind != K_CONTIG || lay_numel(&a->L) > 0)
        for (k = 0; k < a->nd; k++)
            CHECK(got[k] == a->st[k], "%s: dt_tensor_local_strides[%d] = %lld, gave %lld", kname[a->kind], k,
                  (long long)got[k], (long long)a->st[k]);
    return a->t_;
}

static void sarr_free(sarr *a)
{
    dt_tensor_destroy(a->t_);
    lay_free(&a->L);
    free(a->buf);
    free(a->mask);
    memset(a, 0, sizeof *a);
}

/* every element against the model, every other byte of the buffer the sentinel; returns mismatches */
#define sarr_check(a, m, md, what) sarr_check_at(__LINE__, a, m, md, what)
static int sarr_check_at(int line, const sarr *a, const dtt_mesh *m, const dtt_model *md, const char *what)
{
    int64_t n = lay_numel(&a->L), li, ix[DT_MAX_DIMS], i;
    int bad = 0;
    size_t b;
    for (li = 0; li < n; li++) {
        int64_t g = lay_global(&a->L, a->shape, li, ix), p = sarr_pos(a, ix);
        int64_t want = dtt_model_value(m, a->t, g, md), got = dtt_load(a->t, a->buf, (size_t)p);
        if (got != want) {
            if (!bad)
                dtt_fail(__FILE__, line, what, "%s %s: local elem %lld (global %lld) = %.17g want %lld (value units)",
                         kname[a->kind], dtt_dtname(a->t), (long long)li, (long long)g,
                         dtt_load_d(a->t, a->buf, (size_t)p) / dtt_scale(a->t), (long long)want);
            bad++;
        }
    }
    for (i = 0; i < a->nbuf; i++) {
        if (a->mask[i]) continue;
        for (b = 0; b < a->es; b++)
            if (a->buf[(size_t)i * a->es + b] != SENT) break;
        if (b < a->es) {
            if (bad < 1000)
                dtt_fail(__FILE__, line, what, "%s %s: buffer element %lld (%s) was written", kname[a->kind],
                         dtt_dtname(a->t), (long long)i,
                         i < a->base ? "front guard" : i >= a->nbuf - NG ? "back guard" : "padding / ghost cell");
            bad += 1000;
            break;
        }
    }
    return bad;
}

/* only the bytes outside the tensor's elements are the sentinel */
static int sarr_padding_intact(const sarr *a)
{
    int64_t i;
    size_t b;
    for (i = 0; i < a->nbuf; i++)
        if (!a->mask[i])
            for (b = 0; b < a->es; b++)
                if (a->buf[(size_t)i * a->es + b] != SENT) return 0;
    return 1;
}

/* a contiguous tensor's local shape and values against the reference layout and the model */
#define check_contig(x, m, L, t, shape, md, what) check_contig_at(__LINE__, x, m, L, t, shape, md, what)
static void check_contig_at(int line, const dt_tensor *x, const dtt_mesh *m, const lay *L, dt_dtype t,
                            const int64_t *shape, const dtt_model *md, const char *what)
{
    int64_t ls[DT_MAX_DIMS], n = lay_numel(L), li, ix[DT_MAX_DIMS];
    const void *data;
    int d;
    if (!x) { dtt_fail(__FILE__, line, what, "no tensor"); return; }
    dt_tensor_local_shape(x, ls);
    for (d = 0; d < L->nd; d++)
        if (ls[d] != L->n[d]) {
            dtt_fail(__FILE__, line, what, "local_shape[%d] = %lld want %lld", d, (long long)ls[d], (long long)L->n[d]);
            return;
        }
    data = dt_tensor_data(x);
    for (li = 0; li < n; li++) {
        int64_t g = lay_global(L, shape, li, ix);
        int64_t want = dtt_model_value(m, t, g, md), got = dtt_load(t, data, (size_t)li);
        if (got != want) {
            dtt_fail(__FILE__, line, what, "%s: local elem %lld (global %lld) = %.17g want %lld (value units)",
                     dtt_dtname(t), (long long)li, (long long)g, dtt_load_d(t, data, (size_t)li) / dtt_scale(t),
                     (long long)want);
            return;
        }
    }
}

/* ---------------------------------------------------------------- placement lists */

typedef struct plist {
    int n;
    dt_placement p[MAXLIST][DT_MAX_MESH_DIMS];
} plist;

static void padd(plist *l, int nd, dt_placement a, dt_placement b)
{
    memset(l->p[l->n], 0, sizeof l->p[l->n]);
    l->p[l->n][0] = a;
    if (nd > 1) l->p[l->n][1] = b;
    l->n++;
}

/* explicit sizes of n over `parts`, uneven, part 0 empty (when parts > 1) */
static int64_t g_sizes[DT_MAX_MESH_DIMS][DT_MAX_DIMS][64];
static const int64_t *sizes_of(const dtt_mesh *m, int k, int d, int64_t n)
{
    int64_t *s = g_sizes[k][d];
    int c, parts = m->shape[k];
    if (parts == 1) { s[0] = n; return s; }
    s[0] = 0;
    for (c = 1; c < parts; c++) s[c] = n / (parts - 1) + (c - 1 < n % (parts - 1));
    return s;
}

static void src_list(const dtt_mesh *m, int nd, const int64_t *shape, plist *l)
{
    int last = nd - 1;
    dt_placement R = dt_replicate(), P = dt_partial(DT_SUM);
    l->n = 0;
    if (m->nd == 1) {
        padd(l, 1, dt_shard(0), R);
        padd(l, 1, dt_shard(last), R);
        padd(l, 1, R, R);
        padd(l, 1, dt_shard_balanced(last), R);
        padd(l, 1, dt_shard_sizes(0, sizes_of(m, 0, 0, shape[0])), R);
        padd(l, 1, dt_shard_cyclic(0, 2), R);
        padd(l, 1, P, R);
    } else {
        padd(l, 2, dt_shard(0), dt_shard(last));
        padd(l, 2, R, dt_shard(0));
        padd(l, 2, dt_shard(last), R);
        if (nd > 1) padd(l, 2, dt_shard_balanced(0), dt_shard_sizes(last, sizes_of(m, 1, last, shape[last])));
        if (nd > 1) padd(l, 2, dt_shard_cyclic(0, 2), dt_shard_cyclic(last, 1));
        padd(l, 2, P, dt_shard(last));
        padd(l, 2, dt_shard(0), dt_shard(0)); /* nested */
        padd(l, 2, R, R);
    }
}

static void dst_list(const dtt_mesh *m, int nd, const int64_t *shape, plist *l)
{
    int last = nd - 1;
    dt_placement R = dt_replicate(), P = dt_partial(DT_SUM);
    l->n = 0;
    if (m->nd == 1) {
        padd(l, 1, dt_shard(0), R);
        if (nd > 1) padd(l, 1, dt_shard(1), R);
        if (last > 1) padd(l, 1, dt_shard(last), R);
        padd(l, 1, R, R);
        padd(l, 1, dt_shard_balanced(0), R);
        padd(l, 1, dt_shard_sizes(last, sizes_of(m, 0, last, shape[last])), R);
        padd(l, 1, dt_shard_cyclic(0, 2), R);
        padd(l, 1, dt_shard_cyclic(last, 1), R);
        padd(l, 1, P, R);
    } else {
        padd(l, 2, dt_shard(0), dt_shard(last));
        padd(l, 2, dt_shard(last), dt_shard(0));
        padd(l, 2, R, R);
        padd(l, 2, dt_shard(0), R);
        padd(l, 2, R, dt_shard(nd > 1 ? 1 : 0));
        padd(l, 2, dt_shard(0), dt_shard(0));
        if (nd > 1) padd(l, 2, dt_shard_balanced(last), dt_shard_balanced(0));
        padd(l, 2, dt_shard_sizes(0, sizes_of(m, 0, 0, shape[0])), R);
        if (nd > 1) padd(l, 2, dt_shard_cyclic(0, 1), dt_shard_cyclic(last, 2));
        padd(l, 2, P, R);
        padd(l, 2, R, P);
        padd(l, 2, P, P);
        padd(l, 2, dt_shard(nd > 1 ? 1 : 0), P);
    }
}

static int pl_cyclic(int nd, const dt_placement *pl)
{
    int k;
    for (k = 0; k < nd; k++)
        if (pl[k].kind == DT_SHARD && pl[k].split == DT_SPLIT_CYCLIC) return 1;
    return 0;
}

static void pl_name(const dtt_mesh *m, const dt_placement *pl, char *buf, size_t cap)
{
    static const char *rule[] = { "", "b", "z", "c" };
    size_t o = 0;
    int k;
    o += (size_t)snprintf(buf, cap, "[");
    for (k = 0; k < m->nd && o < cap; k++) {
        const char *sep = k ? "," : "";
        if (pl[k].kind == DT_SHARD)
            o += (size_t)snprintf(buf + o, cap - o, "%sS%s%d", sep, rule[pl[k].split & 3], pl[k].dim);
        else if (pl[k].kind == DT_PARTIAL) o += (size_t)snprintf(buf + o, cap - o, "%sP", sep);
        else o += (size_t)snprintf(buf + o, cap - o, "%sR", sep);
    }
    if (o < cap) snprintf(buf + o, cap - o, "]");
}

/* ---------------------------------------------------------------- redistribution */

static void stats_of(const dtt_mesh *m, dt_comm_stats *s) { dt_comm_get_stats(m->comm, s); }

/* one strided source (kind, placements src) redistributed to every target of the list */
static void redist_case(const dtt_mesh *m, dt_dtype t, int nd, const int64_t *shape, const dt_placement *src,
                        int kind, int tkind0)
{
    sarr A, C;
    plist dl;
    dt_tensor *ta, *tc;
    dtt_model ms = dtt_model_source(m->nd, src);
    unsigned char *saved;
    size_t bytes;
    char sn[64], dn[64], shs[64];
    int di;

    pl_name(m, src, sn, sizeof sn);
    dtt_ctx("mesh %s %s %s %s source %s", m->name, dtt_dtname(t), dtt_shape_str(nd, shape, shs, sizeof shs), sn,
            kname[kind]);
    sarr_init(&A, m, t, nd, shape, src, kind);
    sarr_fill(&A, m, &ms);
    sarr_init(&C, m, t, nd, shape, src, K_CONTIG);
    sarr_fill(&C, m, &ms);
    ta = sarr_wrap_f(&A, m, tkind0 % 2 ? DT_BORROW | DT_VERIFY : DT_BORROW);
    tc = sarr_wrap(&C, m);
    if (!ta || !tc) { sarr_free(&A); sarr_free(&C); return; }
    bytes = (size_t)A.nbuf * A.es;
    saved = (unsigned char *)dtt_malloc(bytes);
    memcpy(saved, A.buf, bytes);

    /* gather of the strided source */
    dtt_check_gather(ta, t, nd, shape, "gather of the strided source");
    /* DT_COPY of the strided buffer: a contiguous, row-major shard */
    {
        dt_tensor_desc d = sarr_desc(&A, m);
        dt_tensor *cp = NULL;
        if (kind == K_GHOST) d.local_ghost = NULL; /* (ghost room is DT_BORROW only): the strides, from the interior */
        if (kind == K_GHOST)
            CHECK_OK(dt_tensor_from_local(m->mesh, &d, A.buf + (size_t)(A.base + A.e0) * A.es, DT_COPY, &cp));
        else CHECK_OK(dt_tensor_from_local(m->mesh, &d, sarr_local(&A), DT_COPY, &cp));
        if (cp) {
            int64_t st[DT_MAX_DIMS], s = 1, n = lay_numel(&A.L);
            int k;
            unsigned char *p = (unsigned char *)dt_tensor_data(cp);
            CHECK(n == 0 || p + n * (int64_t)A.es <= A.buf || p >= A.buf + bytes, "DT_COPY data inside the buffer");
            check_contig(cp, m, &A.L, t, shape, &ms, "DT_COPY of a strided buffer");
            CHECK(dt_tensor_local_strides(cp, st) == nd, "DT_COPY local_strides ndim");
            for (k = nd - 1; k >= 0 && n > 0; k--) {
                CHECK(st[k] == s, "DT_COPY local_strides[%d] = %lld, want row-major %lld", k, (long long)st[k],
                      (long long)s);
                s *= A.L.n[k];
            }
            dt_tensor_destroy(cp);
        }
        CHECK(memcmp(saved, A.buf, bytes) == 0, "DT_COPY changed the caller's buffer");
    }

    dst_list(m, nd, shape, &dl);
    for (di = 0; di < dl.n; di++) {
        const dt_placement *dst = dl.p[di];
        dt_tensor *b = NULL, *bc = NULL;
        dt_comm_stats s1, s2;
        dtt_model md = dtt_model_after(ms, m->nd, src, dst);
        lay Ld;
        int tkind = (tkind0 + di) % (NKIND - 1) + 1; /* a strided kind */
        sarr T;
        if (tkind == K_PAD3D && nd != 3) tkind = K_ROWPAD;
        pl_name(m, dst, dn, sizeof dn);
        dtt_ctx("mesh %s %s %s %s %s -> %s", m->name, dtt_dtname(t), dtt_shape_str(nd, shape, shs, sizeof shs),
                kname[kind], sn, dn);
        ncases++;
        if (dtt_refused(m->nd, src, dst)) {
            /* Shard -> Partial: refused, a strided *out keeps every byte */
            unsigned char *tsaved;
            dt_tensor *o;
            sarr_init(&T, m, t, nd, shape, dst, tkind);
            sarr_fill(&T, m, &md);
            o = sarr_wrap(&T, m);
            tsaved = (unsigned char *)dtt_malloc((size_t)T.nbuf * T.es);
            memcpy(tsaved, T.buf, (size_t)T.nbuf * T.es);
            if (o) {
                dt_tensor *o2 = o;
                CHECK_ST(dt_tensor_redistribute(ta, dst, &o2), DT_ERR_PLACEMENT);
                CHECK(o2 == o, "*out replaced");
                CHECK(memcmp(tsaved, T.buf, (size_t)T.nbuf * T.es) == 0, "a refused redistribution wrote *out");
            }
            free(tsaved);
            sarr_free(&T);
            continue;
        }
        lay_make(&Ld, m, nd, shape, dst);
        /* strided source -> new tensor, and the same from the contiguous copy */
        dt_comm_reset_stats(m->comm);
        CHECK_OK(dt_tensor_redistribute(ta, dst, &b));
        stats_of(m, &s1);
        dt_comm_reset_stats(m->comm);
        CHECK_OK(dt_tensor_redistribute(tc, dst, &bc));
        stats_of(m, &s2);
        check_contig(b, m, &Ld, t, shape, &md, "from the strided source");
        check_contig(bc, m, &Ld, t, shape, &md, "from the contiguous copy");
        CHECK(s1.bytes_sent == s2.bytes_sent && s1.bytes_recv == s2.bytes_recv,
              "bytes sent/recv %llu/%llu from the strided source, %llu/%llu from the contiguous copy",
              (unsigned long long)s1.bytes_sent, (unsigned long long)s1.bytes_recv,
              (unsigned long long)s2.bytes_sent, (unsigned long long)s2.bytes_recv);
        CHECK(memcmp(saved, A.buf, bytes) == 0, "the redistribution changed the strided source's buffer");
        if (b && di % 3 == 0) dtt_check_gather(b, t, nd, shape, "gather of the result");

        /* strided targets: an existing *out over poisoned strided storage */
        sarr_init(&T, m, t, nd, shape, dst, tkind);
        if (sarr_wrap(&T, m)) {
            dt_tensor *o = T.t_;
            dt_comm_stats s3;
            CHECK_OK(dt_tensor_redistribute(ta, dst, &o));
            CHECK(o == T.t_, "*out replaced");
            sarr_check(&T, m, &md, "strided source -> strided *out");
            if (di % 2 == 0) {
                CHECK(memcmp(saved, A.buf, bytes) == 0, "the source's buffer changed");
                dtt_check_gather(T.t_, t, nd, shape, "gather of the strided target");
            }
            sarr_poison(&T);
            dt_comm_reset_stats(m->comm);
            CHECK_OK(dt_tensor_redistribute(tc, dst, &o));
            stats_of(m, &s3);
            CHECK(o == T.t_, "*out replaced");
            sarr_check(&T, m, &md, "contiguous source -> strided *out");
            CHECK(s3.bytes_sent == s2.bytes_sent && s3.bytes_recv == s2.bytes_recv,
                  "bytes sent/recv %llu/%llu into a strided *out, %llu/%llu into a new tensor",
                  (unsigned long long)s3.bytes_sent, (unsigned long long)s3.bytes_recv,
                  (unsigned long long)s2.bytes_sent, (unsigned long long)s2.bytes_recv);
            /* a *out of another spec: refused, nothing written */
            if (!pl_cyclic(m->nd, dst)) {
                int k, other = 0;
                for (k = 0; k < m->nd; k++) other |= dst[k].kind != DT_REPLICATE;
                if (other) {
                    dt_placement rep[DT_MAX_MESH_DIMS];
                    unsigned char *tsaved = (unsigned char *)dtt_malloc((size_t)T.nbuf * T.es);
                    memset(rep, 0, sizeof rep);
                    memcpy(tsaved, T.buf, (size_t)T.nbuf * T.es);
                    CHECK_ST(dt_tensor_redistribute(ta, rep, &o), DT_ERR_PLACEMENT);
                    CHECK(o == T.t_, "*out replaced");
                    CHECK(memcmp(tsaved, T.buf, (size_t)T.nbuf * T.es) == 0, "a refused redistribution wrote *out");
                    free(tsaved);
                }
            }
        }
        sarr_free(&T);
        lay_free(&Ld);
        dt_tensor_destroy(b);
        dt_tensor_destroy(bc);
    }
    free(saved);
    sarr_free(&A);
    sarr_free(&C);
}

/* a Partial contiguous source, and a strided Replicate source, into strided Partial targets */
static void partial_case(const dtt_mesh *m, dt_dtype t, int nd, const int64_t *shape, int tkind)
{
    dt_placement R[DT_MAX_MESH_DIMS], P[DT_MAX_MESH_DIMS];
    dtt_model mr, mp;
    sarr S, T;
    int k;
    char shs[64];
    memset(R, 0, sizeof R);
    memset(P, 0, sizeof P);
    for (k = 0; k < m->nd; k++) P[k] = dt_partial(DT_SUM);
    mr = dtt_model_source(m->nd, R);
    mp = dtt_model_source(m->nd, P);
    dtt_ctx("mesh %s %s %s partial into %s", m->name, dtt_dtname(t), dtt_shape_str(nd, shape, shs, sizeof shs),
            kname[tkind]);
    /* P (contiguous, split in parts) -> P (strided *out): the parts kept */
    sarr_init(&S, m, t, nd, shape, P, K_CONTIG);
    sarr_fill(&S, m, &mp);
    sarr_init(&T, m, t, nd, shape, P, tkind);
    if (sarr_wrap(&S, m) && sarr_wrap(&T, m)) {
        dt_tensor *o = T.t_;
        CHECK_OK(dt_tensor_redistribute(S.t_, P, &o));
        sarr_check(&T, m, &mp, "P -> P into a strided *out");
        dtt_check_gather(T.t_, t, nd, shape, "gather of a strided Partial");
    }
    sarr_free(&S);
    sarr_free(&T);
    /* R (strided) -> P (strided *out) */
    sarr_init(&S, m, t, nd, shape, R, tkind == K_COLMAJOR ? K_AOS : K_COLMAJOR);
    sarr_fill(&S, m, &mr);
    sarr_init(&T, m, t, nd, shape, P, tkind);
    if (sarr_wrap(&S, m) && sarr_wrap(&T, m)) {
        dt_tensor *o = T.t_;
        dtt_model after = dtt_model_after(mr, m->nd, R, P);
        CHECK_OK(dt_tensor_redistribute(S.t_, P, &o));
        sarr_check(&T, m, &after, "strided R -> P into a strided *out");
        /* and back: strided P -> R into a strided *out */
        {
            sarr U;
            sarr_init(&U, m, t, nd, shape, R, K_ROWPAD);
            if (sarr_wrap(&U, m)) {
                dt_tensor *o2 = U.t_;
                dtt_model back = dtt_model_after(after, m->nd, P, R);
                CHECK_OK(dt_tensor_redistribute(T.t_, R, &o2));
                sarr_check(&U, m, &back, "strided P -> R into a strided *out");
            }
            sarr_free(&U);
        }
    }
    sarr_free(&S);
    sarr_free(&T);
}

/* ---------------------------------------------------------------- bad input */

/* the agreed verdict: 1 if every rank's status is OK-ness `ok` */
static int all_agree(const dtt_mesh *m, dt_status st)
{
    int mine = st == DT_OK, lo = 0, hi = 0;
    (void)m;
    MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

#define refuse(m, a, strides, device, flags, all_bad, want_msg, what) \
    refuse2(m, a, strides, device, flags, all_bad, want_msg, NULL, what)
static void refuse2(const dtt_mesh *m, const sarr *a, const int64_t *strides, int device, unsigned flags, int all_bad,
                    const char *want_msg, const char *want_msg2, const char *what)
{
    dt_tensor_desc d = sarr_desc(a, m);
    dt_tensor *t = NULL;
    size_t bytes = (size_t)a->nbuf * a->es;
    unsigned char *saved = (unsigned char *)dtt_malloc(bytes);
    dt_status st;
    int64_t i;
    int empty = 1; /* this rank's part is empty: a 0 or huge stride addresses nothing there, so
                      only the other ranks' refusal (a mismatch) fails it */
    for (i = 0; i < a->nbuf && empty; i++) empty = !a->mask[i];
    memcpy(saved, a->buf, bytes);
    d.local_strides = strides;
    d.device = device;
    dtt_ctx("bad input, mesh %s: %s", m->name, what);
    st = dt_tensor_from_local(m->mesh, &d, sarr_local(a), flags, &t);
    CHECK(st != DT_OK, "accepted");
    if (all_bad && !(flags & DT_VERIFY) && !(empty && device == DT_HOST)) {
        if (device == DT_HOST) CHECK(st == DT_ERR_ARG, "status %s: %s", dt_status_string(st), dt_last_error());
        else CHECK(st == DT_ERR_UNSUPPORTED || st == DT_ERR_DEVICE, "status %s: %s", dt_status_string(st),
                   dt_last_error());
    }
    CHECK_ERRMSG("dt_tensor_from_local");
    if (all_bad && empty && device == DT_HOST && !(flags & DT_VERIFY))
        CHECK(st == DT_ERR_ARG || st == DT_ERR_MISMATCH, "empty part: status %s: %s", dt_status_string(st),
              dt_last_error());
    if (want_msg && ((all_bad && !empty) || dtt_rank == 0))
        CHECK(strstr(dt_last_error(), want_msg) != NULL, "dt_last_error() = \"%s\" should name \"%s\"",
              dt_last_error(), want_msg);
    if (want_msg2 && ((all_bad && !empty) || dtt_rank == 0))
        CHECK(strstr(dt_last_error(), want_msg2) != NULL, "dt_last_error() = \"%s\" should name \"%s\"",
              dt_last_error(), want_msg2);
    CHECK(t == NULL, "a tensor was made");
    CHECK(memcmp(saved, a->buf, bytes) == 0, "the buffer changed");
    dt_tensor_destroy(t);
    free(saved);
}

static void bad_input(const dtt_mesh *m)
{
    int64_t shape[2] = {7, 5}, sq[2], st[2], one[2] = {1, 1};
    dt_placement pl[DT_MAX_MESH_DIMS];
    sarr a, q;
    dtt_model md0 = {0, 0, 0};
    char msg[96];
    memset(pl, 0, sizeof pl);
    pl[0] = dt_shard(0);
    sarr_init(&a, m, DT_F64, 2, shape, pl, K_ROWPAD);
    sarr_fill(&a, m, &md0);
    /* stride 0, negative, on every rank */
    st[0] = a.st[0]; st[1] = 0;
    refuse(m, &a, st, DT_HOST, DT_BORROW, 1, "local_strides[1] = 0", "stride 0");
    refuse(m, &a, st, DT_HOST, DT_COPY, 1, "local_strides[1] = 0", "stride 0, DT_COPY");
    st[0] = -a.st[0]; st[1] = 1;
    snprintf(msg, sizeof msg, "local_strides[0] = %lld", (long long)-a.st[0]);
    refuse(m, &a, st, DT_HOST, DT_BORROW, 1, msg, "negative stride");
    /* overflow: a huge stride on the dim of 5 (every rank's extent) */
    st[0] = 1; st[1] = INT64_MAX / 2;
    snprintf(msg, sizeof msg, "local_strides = [1, %lld]", (long long)st[1]);
    refuse2(m, &a, st, DT_HOST, DT_BORROW, 1, msg, "spans more than", "huge stride");
    st[0] = INT64_MAX / 8; st[1] = INT64_MAX / 4;
    snprintf(msg, sizeof msg, "local_strides = [%lld, %lld]", (long long)st[0], (long long)st[1]);
    refuse2(m, &a, st, DT_HOST, DT_COPY, 1, msg, "spans more than", "huge strides, DT_COPY");
    /* a device tensor with strides */
    refuse(m, &a, a.st, DT_CUDA, DT_BORROW, 1, NULL, "DT_CUDA with strides");
    /* one rank alone with a bad stride: every rank fails (negative: a 0 is
       allowed where it addresses nothing, and that rank's part may be empty) */
    st[0] = a.st[0]; st[1] = dtt_rank == dtt_np - 1 ? -1 : 1;
    refuse(m, &a, st, DT_HOST, DT_BORROW, dtt_np == 1, "local_strides[1] = -1", "one rank's stride -1");
    if (dtt_np > 1) { /* the bad rank its own reason, the others a mismatch naming it */
        dt_tensor_desc d = sarr_desc(&a, m);
        dt_tensor *t = NULL;
        dt_status s0;
        d.local_strides = st;
        s0 = dt_tensor_from_local(m->mesh, &d, sarr_local(&a), DT_BORROW, &t);
        if (dtt_rank == dtt_np - 1) CHECK(s0 == DT_ERR_ARG || s0 == DT_ERR_MISMATCH, "bad rank: %s", dt_status_string(s0));
        else CHECK(s0 == DT_ERR_MISMATCH, "a good rank: %s: %s", dt_status_string(s0), dt_last_error());
        CHECK(t == NULL, "a tensor was made");
        dt_tensor_destroy(t);
    }
    refuse(m, &a, st, DT_HOST, DT_VERIFY, dtt_np == 1, NULL, "one rank's stride -1, DT_VERIFY");
    sarr_free(&a);
    /* local_ghost with DT_COPY, strides or not: ghost room describes a borrowed array */
    sarr_init(&a, m, DT_F64, 2, shape, pl, K_GHOST);
    sarr_fill(&a, m, &md0);
    {
        dt_tensor_desc d = sarr_desc(&a, m);
        dt_tensor *t = NULL;
        size_t bytes = (size_t)a.nbuf * a.es;
        unsigned char *saved = (unsigned char *)dtt_malloc(bytes);
        memcpy(saved, a.buf, bytes);
        dtt_ctx("bad input, mesh %s: local_ghost + local_strides with DT_COPY", m->name);
        CHECK_ST(dt_tensor_from_local(m->mesh, &d, sarr_local(&a), DT_COPY, &t), DT_ERR_ARG);
        CHECK(strstr(dt_last_error(), "dt_tensor_from_local") && strstr(dt_last_error(), "DT_COPY"), "message: %s",
              dt_last_error());
        CHECK(t == NULL, "a tensor was made");
        CHECK(memcmp(saved, a.buf, bytes) == 0, "the buffer changed");
        /* ghost room and strides that overlap: the storage's rows (5 + 2 * 2) do not fit a row stride of 8 */
        st[0] = a.L.n[1] + 3; st[1] = 1;
        {
            int64_t g2[2];
            g2[0] = a.g[0]; g2[1] = a.g[1];
            d.local_ghost = g2;
            d.local_strides = st;
            t = NULL;
            dtt_ctx("bad input, mesh %s: ghosted rows longer than the row stride", m->name);
            CHECK_ST(dt_tensor_from_local(m->mesh, &d, sarr_local(&a), DT_BORROW, &t), DT_ERR_ARG);
            CHECK(strstr(dt_last_error(), "dt_tensor_from_local") && strstr(dt_last_error(), "overlap"), "message: %s",
                  dt_last_error());
            CHECK(t == NULL, "a tensor was made");
        }
        CHECK(memcmp(saved, a.buf, bytes) == 0, "the buffer changed");
        free(saved);
    }
    sarr_free(&a);
    /* {1, 1} for a 2 x 2 local block: overlap on every rank */
    sq[0] = 2 * (int64_t)m->shape[0];
    sq[1] = 2;
    sarr_init(&q, m, DT_I32, 2, sq, pl, K_COLMAJOR);
    refuse(m, &q, one, DT_HOST, DT_BORROW, 1, "local_strides = [1, 1] overlap", "strides {1,1}, 2x2 local");
    refuse(m, &q, one, DT_HOST, DT_COPY, 1, "local_strides = [1, 1] overlap", "strides {1,1}, 2x2 local, DT_COPY");
    sarr_free(&q);
    /* row-major strides too small for the row: 2 rows of 5 per rank, a row stride of 4 */
    sq[1] = 5;
    sarr_init(&q, m, DT_F32, 2, sq, pl, K_ROWPAD);
    st[0] = 4; st[1] = 1;
    refuse(m, &q, st, DT_HOST, DT_BORROW, 1, "local_strides = [4, 1] overlap", "row stride 4 < row length 5");
    /* {2, 1}: each row starts inside the one before */
    st[0] = 2; st[1] = 1;
    refuse(m, &q, st, DT_HOST, DT_BORROW, 1, "local_strides = [2, 1] overlap", "strides {2,1}, 2x5 local");
    sarr_free(&q);
}

/* ops, random fills and .npy on a strided tensor: every rank agrees; a refused call writes nothing
   (they may become supported: their success is not asserted either way) */
static char g_npy[256];

#define AGREE(st, what) CHECK(all_agree(m, st), "%s: the ranks disagree (this rank: %s)", what, dt_status_string(st))

static void other_calls(const dtt_mesh *m, int kind)
{
    int64_t shape[2] = {7, 5};
    dt_placement pl[DT_MAX_MESH_DIMS];
    dtt_model md = {0, 0, 0};
    sarr a;
    dt_tensor *y = NULL, *z = NULL, *o;
    size_t bytes;
    unsigned char *saved;
    dt_status st;
    memset(pl, 0, sizeof pl);
    pl[0] = dt_shard(0);
    dtt_ctx("ops on strided storage, mesh %s, %s", m->name, kname[kind]);
    sarr_init(&a, m, DT_F64, 2, shape, pl, kind);
    sarr_fill(&a, m, &md);
    if (!sarr_wrap(&a, m)) { sarr_free(&a); return; }
    bytes = (size_t)a.nbuf * a.es;
    saved = (unsigned char *)dtt_malloc(bytes);
    memcpy(saved, a.buf, bytes);
    /* as an input: the buffer is never written */
    st = dt_neg(a.t_, &y);
    AGREE(st, "dt_neg");
    if (st != DT_OK) CHECK(y == NULL, "dt_neg refused but made *out");
    dt_tensor_destroy(y);
    y = NULL;
    st = dt_add(a.t_, a.t_, &y);
    AGREE(st, "dt_add");
    if (st != DT_OK) CHECK(y == NULL, "dt_add refused but made *out");
    dt_tensor_destroy(y);
    y = NULL;
    CHECK(memcmp(saved, a.buf, bytes) == 0, "an op changed its strided input's buffer");
    /* .npy save of a strided tensor */
    st = dt_tensor_save_npy(a.t_, g_npy);
    AGREE(st, "dt_tensor_save_npy");
    CHECK(memcmp(saved, a.buf, bytes) == 0, "save_npy changed the buffer");
    MPI_Barrier(MPI_COMM_WORLD);
    if (dtt_rank == 0) remove(g_npy);
    MPI_Barrier(MPI_COMM_WORLD);
    /* as *out and in place: when refused, nothing written; always, nothing outside the elements */
    {
        dt_tensor_desc d = sarr_desc(&a, m);
        d.local_shape = NULL;
        d.local_strides = NULL;
        d.local_ghost = NULL;
        CHECK_OK(dt_tensor_zeros(m->mesh, &d, &z));
    }
    if (z) {
        o = a.t_;
        st = dt_neg(z, &o);
        AGREE(st, "dt_neg into a strided *out");
        CHECK(o == a.t_, "*out replaced");
        if (st != DT_OK) CHECK(memcmp(saved, a.buf, bytes) == 0, "a refused op wrote its strided *out");
        CHECK(sarr_padding_intact(&a), "dt_neg wrote outside the strided *out's elements");
        memcpy(a.buf, saved, bytes);
        /* .npy load into a strided *out: a file of the right spec first */
        st = dt_tensor_save_npy(z, g_npy);
        CHECK_OK(st);
        if (st == DT_OK) {
            o = a.t_;
            st = dt_tensor_load_npy(m->mesh, g_npy, pl, &o);
            AGREE(st, "dt_tensor_load_npy into a strided *out");
            CHECK(o == a.t_, "*out replaced");
            if (st != DT_OK) CHECK(memcmp(saved, a.buf, bytes) == 0, "a refused load wrote its strided *out");
            CHECK(sarr_padding_intact(&a), "load_npy wrote outside the strided *out's elements");
            memcpy(a.buf, saved, bytes);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (dtt_rank == 0) remove(g_npy);
        MPI_Barrier(MPI_COMM_WORLD);
        dt_tensor_destroy(z);
    }
    /* random fills in place */
    st = dt_uniform_(a.t_, 0.0, 1.0);
    AGREE(st, "dt_uniform_");
    if (st != DT_OK) CHECK(memcmp(saved, a.buf, bytes) == 0, "a refused dt_uniform_ wrote the buffer");
    CHECK(sarr_padding_intact(&a), "dt_uniform_ wrote outside the elements");
    memcpy(a.buf, saved, bytes);
    st = dt_randint_(a.t_, 0, 100);
    AGREE(st, "dt_randint_");
    if (st != DT_OK) CHECK(memcmp(saved, a.buf, bytes) == 0, "a refused dt_randint_ wrote the buffer");
    CHECK(sarr_padding_intact(&a), "dt_randint_ wrote outside the elements");
    memcpy(a.buf, saved, bytes);
    free(saved);
    sarr_free(&a);
}

/* ---------------------------------------------------------------- own sizes, sub-meshes */

/* DT_INFER_SIZES: rank r holds r + 1 rows of a column-major array with a padded leading dimension
   (LDA = rows + 2), the global shape the sum of the parts */
static void infer_case(dt_comm *comm)
{
    int one[1];
    dtt_mesh m;
    int64_t rows = dtt_rank + 1, cols = 4, shape[2], ls[2], st[2], off = (int64_t)dtt_rank * (dtt_rank + 1) / 2;
    int64_t i, j, got[2], nbuf;
    dt_tensor_desc d;
    dt_tensor *t = NULL, *r = NULL;
    double *buf, *saved;
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, comm, 1, one)) return;
    dtt_ctx("DT_INFER_SIZES with local_strides, mesh %s", m.name);
    shape[0] = (int64_t)dtt_np * (dtt_np + 1) / 2;
    shape[1] = cols;
    ls[0] = rows;
    ls[1] = cols;
    st[0] = 1;
    st[1] = rows + 2;
    nbuf = 2 * NG + st[1] * cols;
    buf = (double *)dtt_malloc(sizeof(double) * (size_t)nbuf);
    saved = (double *)dtt_malloc(sizeof(double) * (size_t)nbuf);
    memset(buf, SENT, sizeof(double) * (size_t)nbuf);
    for (i = 0; i < rows; i++)
        for (j = 0; j < cols; j++) dtt_store(DT_F64, buf + NG, (size_t)(i + j * st[1]), dtt_val(DT_F64, (off + i) * cols + j));
    memcpy(saved, buf, sizeof(double) * (size_t)nbuf);
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = 2;
    d.shape[0] = shape[0];
    d.shape[1] = shape[1];
    d.placements[0] = dt_shard(0);
    d.local_shape = ls;
    d.local_strides = st;
    d.local_alloc = buf;
    d.local_alloc_bytes = (int64_t)(sizeof(double) * (size_t)nbuf);
    CHECK_OK(dt_tensor_from_local(m.mesh, &d, buf + NG, DT_BORROW | DT_INFER_SIZES, &t));
    if (t) {
        int64_t lo[2];
        dt_placement rep[DT_MAX_MESH_DIMS];
        memset(rep, 0, sizeof rep);
        dt_tensor_local_offset(t, lo);
        CHECK(lo[0] == off && lo[1] == 0, "local offset %lld %lld want %lld 0", (long long)lo[0], (long long)lo[1],
              (long long)off);
        CHECK(dt_tensor_local_strides(t, got) == 2 && got[0] == st[0] && got[1] == st[1], "local strides %lld %lld",
              (long long)got[0], (long long)got[1]);
        CHECK(dt_tensor_data(t) == (void *)(buf + NG), "data is not element 0");
        dtt_check_gather(t, DT_F64, 2, shape, "gather of own-sized strided shards");
        CHECK_OK(dt_tensor_redistribute(t, rep, &r));
        if (r) {
            lay L;
            dtt_model md = {0, 0, 0};
            lay_make(&L, &m, 2, shape, rep);
            check_contig(r, &m, &L, DT_F64, shape, &md, "own-sized strided shards -> [R]");
            lay_free(&L);
        }
        /* into a strided target of the same (explicit-sizes) spec: a row-major padded copy */
        {
            sarr T;
            const dt_tensor_desc *td = dt_tensor_get_desc(t);
            dtt_model md = {0, 0, 0};
            dt_placement pl[DT_MAX_MESH_DIMS];
            memset(pl, 0, sizeof pl);
            pl[0] = td->placements[0];
            CHECK(pl[0].split == DT_SPLIT_SIZES, "DT_INFER_SIZES gave rule %d", pl[0].split);
            sarr_init(&T, &m, DT_F64, 2, shape, pl, K_ROWPAD);
            if (sarr_wrap(&T, &m)) {
                dt_tensor *o = T.t_;
                CHECK_OK(dt_tensor_redistribute(t, pl, &o));
                sarr_check(&T, &m, &md, "own-sized strided -> own-sized padded *out");
            }
            sarr_free(&T);
        }
        CHECK(memcmp(saved, buf, sizeof(double) * (size_t)nbuf) == 0, "the source buffer changed");
    }
    dt_tensor_destroy(r);
    dt_tensor_destroy(t);
    free(buf);
    free(saved);
    dtt_mesh_close(&m);
}

/* a mesh of ranks 1..np-1: rank 0 is outside it (no storage, NULL local and strides it does not use) */
static void submesh_case(dt_comm *comm)
{
    dt_mesh_desc md;
    int *ranks, k;
    dtt_mesh m;
    int64_t shape[2] = {7, 5};
    dt_placement src[DT_MAX_MESH_DIMS], dst[DT_MAX_MESH_DIMS];
    dtt_model m0 = {0, 0, 0};
    sarr A, T;
    if (dtt_np < 2) return;
    ranks = (int *)dtt_malloc(sizeof(int) * (size_t)dtt_np);
    for (k = 0; k < dtt_np - 1; k++) ranks[k] = k + 1;
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np - 1;
    md.ranks = ranks;
    memset(&m, 0, sizeof m);
    m.comm = comm;
    m.nd = 1;
    m.shape[0] = dtt_np - 1;
    m.coord[0] = dtt_rank - 1;
    snprintf(m.name, sizeof m.name, "ranks 1..%d", dtt_np - 1);
    dtt_ctx("sub-mesh %s", m.name);
    CHECK_OK(dt_mesh_create(comm, &md, &m.mesh));
    free(ranks);
    if (!m.mesh) return;
    memset(src, 0, sizeof src);
    memset(dst, 0, sizeof dst);
    src[0] = dt_shard(0);
    dst[0] = dt_shard_cyclic(1, 2);
    sarr_init(&A, &m, DT_I32, 2, shape, src, K_COLMAJOR);
    sarr_fill(&A, &m, &m0);
    sarr_init(&T, &m, DT_I32, 2, shape, dst, K_AOS);
    if (sarr_wrap(&A, &m) && sarr_wrap(&T, &m)) {
        dt_tensor *o = T.t_, *b = NULL;
        dt_placement rep[DT_MAX_MESH_DIMS];
        memset(rep, 0, sizeof rep);
        CHECK_OK(dt_tensor_redistribute(A.t_, dst, &o));
        sarr_check(&T, &m, &m0, "sub-mesh: strided [S0] -> strided [Sc1]");
        sarr_poison(&T);
        o = T.t_;
        CHECK_OK(dt_tensor_redistribute(A.t_, dst, &o));
        sarr_check(&T, &m, &m0, "sub-mesh: again (scratch reused)");
        CHECK_OK(dt_tensor_redistribute(T.t_, rep, &b));
        if (b) {
            lay L;
            lay_make(&L, &m, 2, shape, rep);
            check_contig(b, &m, &L, DT_I32, shape, &m0, "sub-mesh: strided [Sc1] -> [R]");
            lay_free(&L);
        }
        if (dtt_rank > 0) dtt_check_gather(A.t_, DT_I32, 2, shape, "sub-mesh: gather");
        else {
            int32_t full[35];
            memset(full, SENT, sizeof full);
            CHECK_OK(dt_tensor_gather(A.t_, full));
            for (k = 0; k < 35; k++) CHECK(full[k] == (int32_t)0xA7A7A7A7, "outside rank: gather wrote full[%d]", k);
        }
        dt_tensor_destroy(b);
    }
    sarr_free(&A);
    sarr_free(&T);
    dt_mesh_destroy(m.mesh);
}

/* one row per rank with a huge row stride: the stride of a dim of extent 1 is never stepped. If it is
   accepted (every rank agrees), the shard reads and writes as any other; if refused, nothing is made. */
static void one_row_case(const dtt_mesh *m)
{
    int64_t shape[2], st[2] = {INT64_MAX / 4, 1};
    dt_placement pl[DT_MAX_MESH_DIMS];
    dtt_model m0 = {0, 0, 0};
    dt_tensor_desc d;
    dt_tensor *t = NULL;
    dt_status rc;
    sarr A;
    shape[0] = m->shape[0];
    shape[1] = 5;
    memset(pl, 0, sizeof pl);
    pl[0] = dt_shard(0);
    dtt_ctx("one row per rank, row stride INT64_MAX/4, mesh %s", m->name);
    sarr_init(&A, m, DT_F64, 2, shape, pl, K_CONTIG);
    sarr_fill(&A, m, &m0);
    d = sarr_desc(&A, m);
    d.local_strides = st;
    rc = dt_tensor_from_local(m->mesh, &d, sarr_local(&A), DT_BORROW, &t);
    CHECK(all_agree(m, rc), "the ranks disagree: %s", dt_status_string(rc));
    if (rc == DT_OK && t) {
        dt_placement to[2][DT_MAX_MESH_DIMS];
        static const char *const toname[2] = { "-> [R]", "-> [S1]" };
        sarr T;
        int j;
        memset(to, 0, sizeof to);
        to[1][0] = dt_shard(1);
        dtt_check_gather(t, DT_F64, 2, shape, "gather");
        for (j = 0; j < 2; j++) { /* to [R], then to [S1] */
            dt_tensor *r = NULL;
            CHECK_OK(dt_tensor_redistribute(t, to[j], &r));
            if (r) {
                lay L;
                lay_make(&L, m, 2, shape, to[j]);
                check_contig(r, m, &L, DT_F64, shape, &m0, toname[j]);
                lay_free(&L);
            }
            dt_tensor_destroy(r);
        }
        /* and as a target: a fresh copy of the storage, written through the huge stride */
        sarr_init(&T, m, DT_F64, 2, shape, pl, K_CONTIG);
        {
            dt_tensor_desc dt_ = sarr_desc(&T, m);
            dt_tensor *o = NULL;
            dt_.local_strides = st;
            CHECK_OK(dt_tensor_from_local(m->mesh, &dt_, sarr_local(&T), DT_BORROW, &o));
            if (o) {
                dt_tensor *o2 = o;
                CHECK_OK(dt_tensor_redistribute(t, pl, &o2));
                sarr_check(&T, m, &m0, "huge-stride target");
            }
            dt_tensor_destroy(o);
        }
        sarr_free(&T);
    } else {
        CHECK(t == NULL, "refused but a tensor was made");
    }
    dt_tensor_destroy(t);
    sarr_free(&A);
}

/* ---------------------------------------------------------------- sweep */

static void sweep_mesh(const dtt_mesh *m, int mi)
{
    static const int kinds2[] = { K_ROWPAD, K_COLMAJOR, K_AOS, K_GHOST, K_PERM };
    static const dt_dtype types[] = { DT_F64, DT_I32, DT_F32, DT_F64, DT_I64, DT_U8, DT_F16 };
    enum { NK2 = 5, NT = 7 };
    int64_t s2[2] = {7, 5}, s3[3] = {5, 4, 3}, sempty[2] = {2, 9};
    plist sl;
    int ki, si;
    /* 2-D tensors, every strided kind */
    src_list(m, 2, s2, &sl);
    for (ki = 0; ki < NK2; ki++)
        for (si = 0; si < sl.n; si++) {
            if (dtt_quick && (si + ki + mi) % 2) continue;
            redist_case(m, types[(si + ki + mi) % NT], 2, s2, sl.p[si], kinds2[ki], ki + si);
        }
    /* a 3-D tensor padded on two dims */
    src_list(m, 3, s3, &sl);
    for (si = 0; si < sl.n; si++) {
        if (dtt_quick && (si + mi) % 2) continue;
        redist_case(m, types[(si + mi) % NT], 3, s3, sl.p[si], si % 3 == 0 ? K_PERM : si % 3 == 1 ? K_PAD3D : K_GHOST, si);
    }
    /* a 1-D tensor: one field of an array of structs, and a ghosted vector */
    {
        int64_t s1[1] = {11};
        src_list(m, 1, s1, &sl);
        for (si = 0; si < sl.n; si++) {
            if (dtt_quick && (si + mi) % 2) continue;
            redist_case(m, types[(si + mi + 2) % NT], 1, s1, sl.p[si], si % 2 ? K_AOS : K_GHOST, si);
        }
    }
    /* a larger array: many runs per piece */
    {
        int64_t sb[2] = {37, 29};
        src_list(m, 2, sb, &sl);
        for (si = 0; si < sl.n; si++) {
            if (si != 0 && si != 5 && (dtt_quick || si != 4)) continue; /* a few sources, the cyclic ones */
            redist_case(m, types[(si + mi) % NT], 2, sb, sl.p[si], kinds2[(si + mi) % NK2], si + mi);
        }
    }
    /* more ranks than rows: empty shards */
    src_list(m, 2, sempty, &sl);
    for (si = 0; si < sl.n; si++) {
        if (dtt_quick && (si + mi) % 2) continue;
        redist_case(m, types[(si + mi + 1) % NT], 2, sempty, sl.p[si], kinds2[si % NK2], si + 2);
    }
    for (ki = 0; ki < NK2; ki++) partial_case(m, types[(ki + mi) % NT], 2, ki % 2 ? sempty : s2, kinds2[ki]);
    partial_case(m, DT_F64, 3, s3, K_PAD3D);
}

static void sweep(dt_comm *comm)
{
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, one[1], mi = 0;
    dtt_mesh m;
    one[0] = dtt_np;
    if (dtt_mesh_open(&m, comm, 1, one)) {
        sweep_mesh(&m, mi++);
        bad_input(&m);
        other_calls(&m, K_ROWPAD);
        other_calls(&m, K_GHOST);
        one_row_case(&m);
        dtt_mesh_close(&m);
    }
    infer_case(comm);
    submesh_case(comm);
    nf = dtt_factorizations(dtt_np, 2, fac, 64);
    for (f = 0; f < nf; f++) {
        if (dtt_quick && f != nf / 2) continue;
        if (!dtt_mesh_open(&m, comm, 2, &fac[f * DT_MAX_MESH_DIMS])) continue;
        sweep_mesh(&m, mi++);
        if (f == nf / 2) {
            bad_input(&m);
            other_calls(&m, K_COLMAJOR);
        }
        dtt_mesh_close(&m);
    }
}

int main(int argc, char **argv)
{
    dt_comm *comm = NULL;
    unsigned long id = 0;
    dtt_init(&argc, &argv, "strided");
    DTT_EXCHANGE_PATHS(); /* every exchange path through the sweep (dt_test.h) */
    if (dtt_rank == 0) id = (unsigned long)getpid();
    MPI_Bcast(&id, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
    snprintf(g_npy, sizeof g_npy, "/tmp/dt_test_strided_%lu.npy", id);
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    if (comm) {
        sweep(comm);
        dt_comm_destroy(comm);
    }
    if (dtt_rank == 0 && getenv("DT_TEST_VERBOSE")) fprintf(stderr, "test_strided: %ld cases\n", ncases);
    return dtt_finish();
}
