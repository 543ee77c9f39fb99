/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_layouts.c -- the Shard split rules: dt_shard (torch.chunk),
   dt_shard_balanced, dt_shard_sizes and dt_shard_cyclic, alone and nested
   (several mesh dims on one tensor dim), against an independent reference
   written here from DESIGN.md §4 (no library internals):

     part c of n over k:  chunk     positions [c*q, (c+1)*q) & [0, n), q = ceil(n/k)
                          balanced  n/k + (c < n%k) positions, offsets the running sum
                          sizes     sizes[c] positions, offsets the running sum
                          cyclic(b) positions p with (p / b) % k == c, in order
     nested: a later mesh dim applies its rule to positions 0..n'-1 of the part
     the earlier mesh dims left (in local order), so a cyclic block counts from
     that part's first element; a sizes array must sum to n' for every
     coordinate of the earlier mesh dims, else every call refuses the
     placements (DT_ERR_PLACEMENT).

   From it, per mesh coordinate and tensor dim, the global indices held, in
   local order; local element (i0, i1, ..) is global (idx0[i0], idx1[i1], ..).
   Values are the closed form dtt_val(dtype, g) of the global row-major index.

   1. dt_layout / dt_layout_indices for every mesh coordinate, dt_tensor_empty's
      dt_tensor_local_shape / dt_tensor_local_indices, for every rule on 1-D
      and 2-D meshes (incl. nested), extents 0, below the rank count, not
      multiples; cyclic blocks 1, 2, 3 and 100; sizes with zero parts; sizes
      that do not fit a nesting are refused.
   2. PETSc-style balanced buffers wrapped with DT_BORROW (zero copies), with
      DT_INFER_SIZES (desc naming plain dt_shard), explicit sizes with empty
      parts; gathered and compared.
   3. Redistribution between rule pairs (S->R, R->S, S(i)->S(j), S->S with
      another rule, 2-D meshes, nested), every dtype: values via
      dt_tensor_local_indices and bytes_recv == the bytes of the destination
      part not already held (reference intersection); Partial(SUM) sources to
      every rule (values).
   4. Ops: dt_add / dt_mul / dt_exp on identical layouts (no bytes moved) and
      on different rules, dt_sum over a sharded dim and over all dims,
      dt_matmul with a cyclic / balanced / sizes row-sharded A.
   5. RNG on every rule: bit-identical with the replicated fill (and with a
      one-rank mesh).
   6. .npy: save a cyclic tensor, load it with every rule.
   7. dt_tensor_distribute with every rule, from rank 0 and DT_SRC_ALL.

   Options: --quick (or DT_TEST_QUICK=1) samples less; --seed N (or
   DT_TEST_SEED); DT_TEST_VERBOSE=1 prints the time of each part. */
#define _POSIX_C_SOURCE 200112L /* setenv */
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

static dt_comm *g_comm = NULL;
static uint64_t g_seed = 1717;
static char g_dir[256];
static int g_rot = 0; /* dtype rotation */

/* ------------------------------------------------------------ the reference */

#define NRULES 7
enum { RU_CHUNK, RU_BAL, RU_SIZES, RU_CYC1, RU_CYC2, RU_CYC3, RU_CYCBIG };
static const char *const k_rule[NRULES] = { "chunk", "bal", "sizes", "cyc1", "cyc2", "cyc3", "cyc100" };
#define BIG_BLOCK 100
#define CODE_P (-1) /* Partial(SUM) */
#define MAXK 64     /* sizes entries per mesh dim */

static int64_t mini(int64_t a, int64_t b) { return a < b ? a : b; }

/* positions (0..n-1) of part c of n over k under the Shard placement p, in
   local order, into pos; returns the count, -1 if a sizes array does not sum to n */
static int64_t ref_part(int64_t n, int k, int c, const dt_placement *p, int64_t *pos)
{
    int64_t i, cnt = 0, lo = 0, len = 0;
    int j;
    switch (p->split) {
    case DT_SPLIT_CHUNK: {
        int64_t q = (n + k - 1) / k;
        lo = mini((int64_t)c * q, n);
        len = mini((int64_t)(c + 1) * q, n) - lo;
        break;
    }
    case DT_SPLIT_BALANCED:
        lo = (int64_t)c * (n / k) + mini(c, n % k);
        len = n / k + (c < n % k);
        break;
    case DT_SPLIT_SIZES: {
        int64_t sum = 0;
        for (j = 0; j < k; j++) {
            if (p->sizes[j] < 0) return -1;
            sum += p->sizes[j];
            if (j < c) lo += p->sizes[j];
        }
        if (sum != n) return -1;
        len = p->sizes[c];
        break;
    }
    case DT_SPLIT_CYCLIC:
        for (i = 0; i < n; i++)
            if ((i / p->block) % k == c) pos[cnt++] = i;
        return cnt;
    default: return -1;
    }
    for (i = 0; i < len; i++) pos[i] = lo + i;
    return len;
}

/* the global indices of tensor dim d held by mesh coordinate coord (mesh dims
   0..nd-1), in local order, into out (room for shape[d]); the count, -1 if refused */
static int64_t ref_indices(int nd, const int *mshape, const int *coord, int ndim, const int64_t *shape,
                           const dt_placement *pl, int d, int64_t *out)
{
    int64_t n = shape[d], i;
    int64_t *pos = (int64_t *)dtt_malloc(sizeof(int64_t) * (size_t)(n + 1));
    int k;
    for (i = 0; i < n; i++) out[i] = i;
    for (k = 0; k < nd; k++) {
        if (pl[k].kind != DT_SHARD || dtt_norm_dim(pl[k].dim, ndim) != d) continue;
        n = ref_part(n, mshape[k], coord[k], &pl[k], pos);
        if (n < 0) break;
        for (i = 0; i < n; i++) pos[i] = out[pos[i]];
        memcpy(out, pos, sizeof(int64_t) * (size_t)n);
    }
    free(pos);
    return n;
}

/* a placement tuple with its sizes arrays (never copied by value: pl points into sizes) */
typedef struct spec {
    int nd, ndim;
    int mshape[DT_MAX_MESH_DIMS];
    int64_t shape[DT_MAX_DIMS];
    int code[DT_MAX_MESH_DIMS];
    dt_placement pl[DT_MAX_MESH_DIMS];
    int64_t sizes[DT_MAX_MESH_DIMS][MAXK];
    int valid; /* every coordinate's sizes fit */
} spec;

static int nopts(int ndim) { return 1 + ndim * NRULES; }

static dt_placement rule_pl(int d, int rule, const int64_t *sizes)
{
    switch (rule) {
    case RU_BAL: return dt_shard_balanced(d);
    case RU_SIZES: return dt_shard_sizes(d, sizes);
    case RU_CYC1: return dt_shard_cyclic(d, 1);
    case RU_CYC2: return dt_shard_cyclic(d, 2);
    case RU_CYC3: return dt_shard_cyclic(d, 3);
    case RU_CYCBIG: return dt_shard_cyclic(d, BIG_BLOCK);
    }
    return dt_shard(d);
}

/* sizes of n over k with zero parts: the elements dealt at random (seeded) to
   the coordinates c with (c + salt) % 3 != 1 (coordinate 0 if none) */
static void make_sizes(int64_t n, int k, uint64_t salt, int64_t *sizes)
{
    int allowed[MAXK], na = 0, c;
    int64_t i;
    dtt_rng r;
    r.s = salt * 7919u + (uint64_t)n * 31u + (uint64_t)k;
    for (c = 0; c < k; c++) {
        sizes[c] = 0;
        if ((c + (int)(salt % 3)) % 3 != 1) allowed[na++] = c;
    }
    if (!na) allowed[na++] = 0;
    for (i = 0; i < n; i++) sizes[allowed[dtt_randint(&r, na)]]++;
}

static int all_coords(int nd, const int *mshape) /* the mesh size */
{
    int k, n = 1;
    for (k = 0; k < nd; k++) n *= mshape[k];
    return n;
}

static void coord_of(int nd, const int *mshape, int lin, int *coord) { dtt_unravel(nd, mshape, lin, coord); }

/* code per mesh dim: 0 Replicate, 1 + d*NRULES + rule Shard(d) by rule, CODE_P Partial(SUM).
   A sizes array gets the extent its mesh dim splits at coordinate 0 of the earlier mesh dims. */
static void spec_make(spec *s, int nd, const int *mshape, int ndim, const int64_t *shape, const int *code,
                      uint64_t salt)
{
    int k, d, c;
    int zero[DT_MAX_MESH_DIMS];
    memset(s, 0, sizeof *s);
    memset(zero, 0, sizeof zero);
    s->nd = nd;
    s->ndim = ndim;
    for (k = 0; k < nd; k++) s->mshape[k] = mshape[k];
    for (d = 0; d < ndim; d++) s->shape[d] = shape[d];
    for (k = 0; k < nd; k++) {
        s->code[k] = code[k];
        if (code[k] == CODE_P) s->pl[k] = dt_partial(DT_SUM);
        else if (code[k] == 0) s->pl[k] = dt_replicate();
        else {
            int rule = (code[k] - 1) % NRULES;
            d = (code[k] - 1) / NRULES;
            if (rule == RU_SIZES) {
                int64_t *tmp = (int64_t *)dtt_malloc(sizeof(int64_t) * (size_t)(shape[d] + 1));
                int64_t np = ref_indices(k, mshape, zero, ndim, shape, s->pl, d, tmp);
                free(tmp);
                make_sizes(np < 0 ? 0 : np, mshape[k], salt + (uint64_t)k, s->sizes[k]);
            }
            s->pl[k] = rule_pl(d, rule, s->sizes[k]);
        }
    }
    s->valid = 1;
    for (c = 0; c < all_coords(nd, mshape) && s->valid; c++) {
        int co[DT_MAX_MESH_DIMS];
        coord_of(nd, mshape, c, co);
        for (d = 0; d < ndim; d++) {
            int64_t *tmp = (int64_t *)dtt_malloc(sizeof(int64_t) * (size_t)(shape[d] + 1));
            if (ref_indices(nd, mshape, co, ndim, shape, s->pl, d, tmp) < 0) s->valid = 0;
            free(tmp);
        }
    }
}

static void spec_code(spec *s, const dtt_mesh *m, int ndim, const int64_t *shape, const int *code, uint64_t salt)
{
    spec_make(s, m->nd, m->shape, ndim, shape, code, salt);
}

static const char *spec_str(const spec *s, char *buf, size_t cap)
{
    size_t o = 0;
    int k, j;
    o += (size_t)snprintf(buf, cap, "[");
    for (k = 0; k < s->nd && o < cap; k++) {
        const char *sep = k ? "," : "";
        int c = s->code[k];
        if (c == CODE_P) o += (size_t)snprintf(buf + o, cap - o, "%sPsum", sep);
        else if (c == 0) o += (size_t)snprintf(buf + o, cap - o, "%sR", sep);
        else {
            int rule = (c - 1) % NRULES;
            o += (size_t)snprintf(buf + o, cap - o, "%sS%d:%s", sep, (c - 1) / NRULES, k_rule[rule]);
            if (rule == RU_SIZES) {
                for (j = 0; j < s->mshape[k] && o < cap; j++)
                    o += (size_t)snprintf(buf + o, cap - o, "%s%lld", j ? "/" : "{", (long long)s->sizes[k][j]);
                if (o < cap) o += (size_t)snprintf(buf + o, cap - o, "}");
            }
        }
    }
    if (o < cap) snprintf(buf + o, cap - o, "]%s", s->valid ? "" : "(refused)");
    return buf;
}

static void desc_of(const spec *s, dt_dtype t, dt_tensor_desc *d)
{
    int k;
    memset(d, 0, sizeof *d);
    d->dtype = t;
    d->ndim = s->ndim;
    for (k = 0; k < s->ndim; k++) d->shape[k] = s->shape[k];
    for (k = 0; k < s->nd; k++) d->placements[k] = s->pl[k];
}

/* one coordinate's part: per tensor dim its global indices */
typedef struct lay {
    int ndim;
    int64_t shape[DT_MAX_DIMS];
    int64_t n[DT_MAX_DIMS];
    int64_t *idx[DT_MAX_DIMS];
} lay;

static void lay_make(lay *L, const spec *s, const int *coord)
{
    int d;
    memset(L, 0, sizeof *L);
    L->ndim = s->ndim;
    for (d = 0; d < s->ndim; d++) {
        L->shape[d] = s->shape[d];
        L->idx[d] = (int64_t *)dtt_malloc(sizeof(int64_t) * (size_t)(s->shape[d] + 1));
        L->n[d] = ref_indices(s->nd, s->mshape, coord, s->ndim, s->shape, s->pl, d, L->idx[d]);
        if (L->n[d] < 0) L->n[d] = 0;
    }
}

static void lay_free(lay *L)
{
    int d;
    for (d = 0; d < L->ndim; d++) free(L->idx[d]);
}

static int64_t lay_numel(const lay *L) { return dtt_numel(L->ndim, L->n); }

/* global row-major index of local element li, from per-dim index lists */
static int64_t gidx_of(int ndim, const int64_t *shape, const int64_t *n, int64_t *const *idx, int64_t li)
{
    int64_t g = 0, i[DT_MAX_DIMS];
    int d;
    for (d = ndim - 1; d >= 0; d--) {
        i[d] = n[d] > 0 ? li % n[d] : 0;
        li = n[d] > 0 ? li / n[d] : 0;
    }
    for (d = 0; d < ndim; d++) g = g * shape[d] + idx[d][i[d]];
    return g;
}

static int64_t lay_g(const lay *L, int64_t li)
{
    return gidx_of(L->ndim, L->shape, L->n, (int64_t *const *)L->idx, li);
}

/* |a & b| of two increasing lists */
static int64_t isect(const int64_t *a, int64_t na, const int64_t *b, int64_t nb)
{
    int64_t i = 0, j = 0, c = 0;
    while (i < na && j < nb) {
        if (a[i] < b[j]) i++;
        else if (a[i] > b[j]) j++;
        else { c++; i++; j++; }
    }
    return c;
}

/* hand-made cases of the rules, DESIGN.md §4 (rank 0, pure) */
static void test_reference_by_hand(void)
{
    static const struct { int rule; int64_t n; int k; int c; int64_t want[8]; int nw; } cases[] = {
        { RU_CHUNK, 10, 4, 0, { 0, 1, 2 }, 3 },      { RU_CHUNK, 10, 4, 3, { 9 }, 1 },
        { RU_CHUNK, 6, 4, 3, { 0 }, 0 },             { RU_BAL, 10, 4, 1, { 3, 4, 5 }, 3 },
        { RU_BAL, 10, 4, 3, { 8, 9 }, 2 },           { RU_BAL, 2, 4, 3, { 0 }, 0 },
        { RU_CYC2, 10, 3, 0, { 0, 1, 6, 7 }, 4 },    { RU_CYC2, 10, 3, 1, { 2, 3, 8, 9 }, 4 },
        { RU_CYC2, 10, 3, 2, { 4, 5 }, 2 },          { RU_CYC1, 7, 3, 1, { 1, 4 }, 2 },
        { RU_CYC3, 7, 2, 0, { 0, 1, 2, 6 }, 4 },     { RU_CYCBIG, 7, 2, 1, { 0 }, 0 },
    };
    int i, j;
    int64_t pos[64];
    dtt_ctx("reference by hand");
    for (i = 0; i < NELEM(cases); i++) {
        dt_placement p = rule_pl(0, cases[i].rule, NULL);
        int64_t n = ref_part(cases[i].n, cases[i].k, cases[i].c, &p, pos);
        int ok = n == cases[i].nw;
        for (j = 0; ok && j < n; j++) ok = pos[j] == cases[i].want[j];
        CHECK(ok, "reference case %d (%s n=%lld k=%d c=%d) wrong", i, k_rule[cases[i].rule], (long long)cases[i].n,
              cases[i].k, cases[i].c);
    }
    { /* sizes {3,0,2}: c=2 holds 3,4 */
        int64_t sz[3] = { 3, 0, 2 };
        dt_placement p = dt_shard_sizes(0, sz);
        CHECK(ref_part(5, 3, 2, &p, pos) == 2 && pos[0] == 3 && pos[1] == 4, "sizes reference");
        CHECK(ref_part(5, 3, 1, &p, pos) == 0, "sizes reference (empty part)");
        CHECK(ref_part(6, 3, 1, &p, pos) == -1, "sizes that do not sum are refused");
    }
    { /* nested: 10 over mesh (2,3), [S0:cyc2, S0:cyc2]: coordinate (0,1): mesh dim 0 leaves
         {0,1,4,5,8,9}; positions 2,3 of it -> {4,5} */
        int ms[2] = { 2, 3 }, co[2] = { 0, 1 };
        dt_placement pl[2];
        int64_t sh[1] = { 10 }, out[16];
        pl[0] = dt_shard_cyclic(0, 2);
        pl[1] = dt_shard_cyclic(0, 2);
        CHECK(ref_indices(2, ms, co, 1, sh, pl, 0, out) == 2 && out[0] == 4 && out[1] == 5, "nested cyclic reference");
        /* [S0:bal, S0:cyc1] of 11 over (2,2): coordinate 0 holds 0..5, coordinate (0,1) its odd positions: 1,3,5 */
        ms[1] = 2;
        sh[0] = 11;
        pl[0] = dt_shard_balanced(0);
        pl[1] = dt_shard_cyclic(0, 1);
        CHECK(ref_indices(2, ms, co, 1, sh, pl, 0, out) == 3 && out[0] == 1 && out[1] == 3 && out[2] == 5,
              "nested balanced/cyclic reference");
        /* [S0:cyc1, S0:chunk] of 9 over (2,2): coordinate (1,0): {1,3,5,7}, chunk 2 -> {1,3} */
        co[0] = 1;
        co[1] = 0;
        sh[0] = 9;
        pl[0] = dt_shard_cyclic(0, 1);
        pl[1] = dt_shard(0);
        CHECK(ref_indices(2, ms, co, 1, sh, pl, 0, out) == 2 && out[0] == 1 && out[1] == 3, "nested cyclic/chunk reference");
    }
}

/* ------------------------------------------------------------ meshes */

/* the 2-D mesh shapes: (2, n/2), (n/2, 2) where n is even, else (1, n) */
static int mesh2_shapes(int *out /* pairs */)
{
    int c = 0;
    if (dtt_np % 2 == 0) {
        out[2 * c] = 2;
        out[2 * c + 1] = dtt_np / 2;
        c++;
        if (dtt_np / 2 != 2) {
            out[2 * c] = dtt_np / 2;
            out[2 * c + 1] = 2;
            c++;
        }
    } else {
        out[0] = 1;
        out[1] = dtt_np;
        c = 1;
    }
    return c;
}

/* ------------------------------------------------------------ tensors and checks */

static int same_pl(const dt_placement *a, const dt_placement *b, int mshape_k)
{
    int j;
    if (a->kind != b->kind) return 0;
    if (a->kind == DT_PARTIAL) return a->reduce == b->reduce;
    if (a->kind != DT_SHARD) return 1;
    if (a->dim != b->dim || a->split != b->split) return 0;
    if (a->split == DT_SPLIT_CYCLIC) return a->block == b->block;
    if (a->split == DT_SPLIT_SIZES) {
        if (!a->sizes || !b->sizes) return 0;
        for (j = 0; j < mshape_k; j++)
            if (a->sizes[j] != b->sizes[j]) return 0;
    }
    return 1;
}

/* x's layout (local shape, local indices, desc placements) is the reference's for s
   at this rank's coordinate; returns the failures found */
#define check_layout(m, x, s, what) check_layout_at(__FILE__, __LINE__, m, x, s, what)
static int check_layout_at(const char *file, int line, const dtt_mesh *m, const dt_tensor *x, const spec *s,
                           const char *what)
{
    lay L;
    int64_t ls[DT_MAX_DIMS], *buf;
    const dt_tensor_desc *dd;
    int d, k, before = dtt_failures;
    if (!x) {
        dtt_fail(file, line, what, "no tensor");
        return 1;
    }
    lay_make(&L, s, m->coord);
    dt_tensor_local_shape(x, ls);
    for (d = 0; d < s->ndim; d++)
        if (ls[d] != L.n[d])
            dtt_fail(file, line, what, "local_shape[%d] = %lld want %lld", d, (long long)ls[d], (long long)L.n[d]);
    if (dt_tensor_local_numel(x) != (size_t)lay_numel(&L))
        dtt_fail(file, line, what, "local_numel %zu want %lld", dt_tensor_local_numel(x), (long long)lay_numel(&L));
    if (lay_numel(&L) > 0) { /* the global index of local element 0 (unspecified for an empty part) */
        int64_t lo[DT_MAX_DIMS];
        dt_tensor_local_offset(x, lo);
        for (d = 0; d < s->ndim; d++)
            if (lo[d] != L.idx[d][0])
                dtt_fail(file, line, what, "local_offset[%d] = %lld want %lld", d, (long long)lo[d],
                         (long long)L.idx[d][0]);
    }
    for (d = 0; d < s->ndim && dtt_failures == before; d++) {
        int64_t i;
        dt_status st;
        buf = (int64_t *)dtt_malloc(sizeof(int64_t) * (size_t)(s->shape[d] + 2));
        for (i = 0; i < s->shape[d] + 2; i++) buf[i] = -77;
        st = dt_tensor_local_indices(x, d, buf);
        if (st != DT_OK) dtt_fail(file, line, what, "dt_tensor_local_indices(dim %d) returned %s: %s", d,
                                  dt_status_string(st), dt_last_error());
        else {
            for (i = 0; i < L.n[d]; i++)
                if (buf[i] != L.idx[d][i]) {
                    dtt_fail(file, line, what, "dt_tensor_local_indices(dim %d)[%lld] = %lld want %lld", d,
                             (long long)i, (long long)buf[i], (long long)L.idx[d][i]);
                    break;
                }
            if (buf[L.n[d]] != -77) dtt_fail(file, line, what, "dt_tensor_local_indices(dim %d) wrote past %lld", d,
                                             (long long)L.n[d]);
        }
        free(buf);
    }
    dd = dt_tensor_get_desc(x);
    if (dd)
        for (k = 0; k < s->nd; k++)
            if (!same_pl(&dd->placements[k], &s->pl[k], s->mshape[k])) {
                char b1[256];
                dtt_fail(file, line, what, "desc placement[%d] (kind %d dim %d split %d block %lld) is not %s's", k,
                         dd->placements[k].kind, dd->placements[k].dim, dd->placements[k].split,
                         (long long)dd->placements[k].block, spec_str(s, b1, sizeof b1));
            }
    lay_free(&L);
    return dtt_failures - before;
}

/* every local element of x is dtt_val(t, g), g from dt_tensor_local_indices; returns mismatches */
#define check_values(x, what) check_values_at(__FILE__, __LINE__, x, what)
static int check_values_at(const char *file, int line, const dt_tensor *x, const char *what)
{
    const dt_tensor_desc *dd = dt_tensor_get_desc(x);
    int64_t n[DT_MAX_DIMS], *idx[DT_MAX_DIMS], i, ne;
    int d, bad = 0;
    if (!dd) return 1;
    dt_tensor_local_shape(x, n);
    for (d = 0; d < dd->ndim; d++) {
        idx[d] = (int64_t *)dtt_malloc(sizeof(int64_t) * (size_t)(n[d] + 1));
        if (dt_tensor_local_indices(x, d, idx[d]) != DT_OK) bad = 1;
    }
    ne = dtt_numel(dd->ndim, n);
    if (bad) dtt_fail(file, line, what, "dt_tensor_local_indices failed: %s", dt_last_error());
    else
        for (i = 0; i < ne; i++) {
            int64_t g = gidx_of(dd->ndim, dd->shape, n, idx, i);
            int64_t want = dtt_val(dd->dtype, g), got = dtt_load(dd->dtype, dt_tensor_data(x), (size_t)i);
            if (got != want) {
                dtt_fail(file, line, what, "local elem %lld (global %lld) = %.17g want %lld (value units, %s)",
                         (long long)i, (long long)g, dtt_load_d(dd->dtype, dt_tensor_data(x), (size_t)i) /
                         dtt_scale(dd->dtype), (long long)want, dtt_dtname(dd->dtype));
                bad = 1;
                break;
            }
        }
    for (d = 0; d < dd->ndim; d++) free(idx[d]);
    return bad;
}

/* the local buffer of spec s at this rank (model values: Partial(SUM) dims hold parts); n elements */
static void *local_buffer(const dtt_mesh *m, const spec *s, dt_dtype t, int64_t *n_out)
{
    lay L;
    dtt_model md = dtt_model_source(s->nd, s->pl);
    int64_t n, i;
    void *buf;
    lay_make(&L, s, m->coord);
    n = lay_numel(&L);
    buf = dtt_malloc((size_t)n * dtt_size(t));
    for (i = 0; i < n; i++) dtt_store(t, buf, (size_t)i, dtt_model_value(m, t, lay_g(&L, i), &md));
    lay_free(&L);
    if (n_out) *n_out = n;
    return buf;
}

/* a DT_COPY tensor of spec s with the model values; NULL (counted) on failure */
static dt_tensor *make_tensor(const dtt_mesh *m, const spec *s, dt_dtype t)
{
    dt_tensor_desc d;
    dt_tensor *x = NULL;
    void *buf = local_buffer(m, s, t, NULL);
    desc_of(s, t, &d);
    CHECK_OK(dt_tensor_from_local(m->mesh, &d, buf, DT_COPY, &x));
    free(buf);
    return x;
}

/* gather x and compare with dtt_val everywhere */
#define check_gather(x, what) check_gather_at(__FILE__, __LINE__, x, what)
static void check_gather_at(const char *file, int line, const dt_tensor *x, const char *what)
{
    const dt_tensor_desc *dd = dt_tensor_get_desc(x);
    if (!dd) {
        dtt_fail(file, line, what, "no tensor");
        return;
    }
    dtt_check_gather_at(file, line, x, dd->dtype, dd->ndim, dd->shape, what);
}

/* ------------------------------------------------------------ 1. layouts */

/* dt_layout and dt_layout_indices for every coordinate (pure); with `tensor`, also
   dt_tensor_empty's own layout (collective) */
static void layout_case(const dtt_mesh *m, const spec *s, int tensor)
{
    dt_tensor_desc d;
    char b1[256], b2[64];
    int c, nc = all_coords(m->nd, m->shape), k;
    dt_dtype t = (dt_dtype)(g_rot++ % DTT_NUM_REAL_DTYPES);
    desc_of(s, t, &d);
    dtt_ctx("layout mesh %s shape %s %s", m->name, dtt_shape_str(s->ndim, s->shape, b2, sizeof b2),
            spec_str(s, b1, sizeof b1));
    for (c = 0; c < nc; c++) {
        int co[DT_MAX_MESH_DIMS];
        int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS];
        lay L;
        dt_status st;
        coord_of(m->nd, m->shape, c, co);
        for (k = 0; k < DT_MAX_DIMS; k++) ls[k] = lo[k] = -5;
        st = dt_layout(m->mesh, &d, co, ls, lo);
        if (!s->valid) {
            int64_t *tmp = (int64_t *)dtt_malloc(sizeof(int64_t) * (size_t)(s->shape[0] + 2));
            CHECK(st == DT_ERR_PLACEMENT, "dt_layout of a sizes array that does not fit: %s, want DT_ERR_PLACEMENT",
                  dt_status_string(st));
            CHECK_ST(dt_layout_indices(m->mesh, &d, co, 0, tmp), DT_ERR_PLACEMENT);
            free(tmp);
            continue;
        }
        if (st != DT_OK) {
            CHECK(0, "coord %d: dt_layout returned %s: %s", c, dt_status_string(st), dt_last_error());
            continue;
        }
        lay_make(&L, s, co);
        for (k = 0; k < s->ndim; k++) {
            int64_t *buf = (int64_t *)dtt_malloc(sizeof(int64_t) * (size_t)(s->shape[k] + 2)), i;
            CHECK(ls[k] == L.n[k], "coord %d: dt_layout local_shape[%d] = %lld want %lld", c, k, (long long)ls[k],
                  (long long)L.n[k]);
            /* the global index of local element 0 (unspecified for an empty part) */
            if (lay_numel(&L) > 0)
                CHECK(lo[k] == L.idx[k][0], "coord %d: dt_layout local_offset[%d] = %lld want %lld", c, k,
                      (long long)lo[k], (long long)L.idx[k][0]);
            for (i = 0; i < s->shape[k] + 2; i++) buf[i] = -77;
            st = dt_layout_indices(m->mesh, &d, co, k, buf);
            if (st != DT_OK) CHECK(0, "coord %d dim %d: dt_layout_indices returned %s: %s", c, k, dt_status_string(st),
                                   dt_last_error());
            else {
                for (i = 0; i < L.n[k]; i++)
                    if (buf[i] != L.idx[k][i]) {
                        CHECK(0, "coord %d dim %d: dt_layout_indices[%lld] = %lld want %lld", c, k, (long long)i,
                              (long long)buf[i], (long long)L.idx[k][i]);
                        break;
                    }
                CHECK(buf[L.n[k]] == -77, "coord %d dim %d: dt_layout_indices wrote past %lld entries", c, k,
                      (long long)L.n[k]);
            }
            free(buf);
        }
        lay_free(&L);
    }
    if (tensor) {
        dt_tensor *x = NULL;
        dt_status st = dt_tensor_empty(m->mesh, &d, &x);
        if (!s->valid) CHECK(st == DT_ERR_PLACEMENT && !x, "dt_tensor_empty of a sizes array that does not fit: %s",
                             dt_status_string(st));
        else if (st != DT_OK) CHECK(0, "dt_tensor_empty returned %s: %s", dt_status_string(st), dt_last_error());
        else check_layout(m, x, s, "dt_tensor_empty");
        dt_tensor_destroy(x);
    }
}

static void test_layouts(void)
{
    int ms2[8], n2 = mesh2_shapes(ms2), i, j, a, b, e;
    int one[1];
    dtt_mesh m;
    spec s;
    int64_t ext[12];
    int next = 0;
    dtt_rng rng;
    rng.s = g_seed ^ 0x1A7u;
    ext[next++] = 0;
    ext[next++] = 1;
    ext[next++] = 2;
    if (dtt_np > 3) ext[next++] = dtt_np - 1;
    ext[next++] = dtt_np;
    ext[next++] = dtt_np + 1;
    ext[next++] = 7;
    ext[next++] = 13;
    ext[next++] = 24;
    ext[next++] = 101;
    one[0] = dtt_np;
    if (dtt_mesh_open(&m, g_comm, 1, one)) {
        for (e = 0; e < next; e++)
            for (i = 0; i < nopts(1); i++) {
                spec_code(&s, &m, 1, &ext[e], &i, (uint64_t)(e * 17 + i));
                layout_case(&m, &s, 1);
            }
        { /* 2-D tensors: every option, both dims */
            static const int64_t sh[3][2] = { { 7, 5 }, { 0, 3 }, { 3, 11 } };
            for (e = 0; e < 3; e++)
                for (i = 0; i < nopts(2); i++) {
                    spec_code(&s, &m, 2, sh[e], &i, (uint64_t)(e * 31 + i));
                    layout_case(&m, &s, 1);
                }
        }
        dtt_mesh_close(&m);
    }
    for (j = 0; j < n2; j++) {
        if (!dtt_mesh_open(&m, g_comm, 2, &ms2[2 * j])) continue;
        for (e = 0; e < next; e++) { /* 1-D tensors: every pair of options (mostly nested) */
            if (dtt_quick && e % 2) continue;
            for (a = 0; a < nopts(1); a++)
                for (b = 0; b < nopts(1); b++) {
                    int code[2];
                    code[0] = a;
                    code[1] = b;
                    spec_code(&s, &m, 1, &ext[e], code, (uint64_t)(e * 101 + a * 11 + b));
                    layout_case(&m, &s, (a * 8 + b + e) % 5 == 0);
                }
        }
        { /* 2-D tensors: every pair of options */
            static const int64_t sh[3][2] = { { 7, 5 }, { 0, 3 }, { 12, 1 } };
            for (e = 0; e < 3; e++)
                for (a = 0; a < nopts(2); a++)
                    for (b = 0; b < nopts(2); b++) {
                        int code[2];
                        code[0] = a;
                        code[1] = b;
                        spec_code(&s, &m, 2, sh[e], code, (uint64_t)(e * 1001 + a * 17 + b));
                        layout_case(&m, &s, dtt_frand(&rng) < (dtt_quick ? 0.03 : 0.1));
                    }
        }
        dtt_mesh_close(&m);
    }
    { /* a sizes array that cannot fit a nesting: [S0:bal, S0:sizes] over 2 x k with an odd extent */
        int ms[2], code[2];
        ms[0] = 2;
        ms[1] = dtt_np / 2 > 0 ? dtt_np / 2 : 1;
        if (dtt_np % 2 == 0 && dtt_mesh_open(&m, g_comm, 2, ms)) {
            int64_t n = 2 * ms[1] + 1;
            code[0] = 1 + RU_BAL;
            code[1] = 1 + RU_SIZES;
            spec_code(&s, &m, 1, &n, code, 3);
            CHECK(!s.valid, "the reference should refuse sizes under an uneven balanced split");
            layout_case(&m, &s, 1);
            dtt_mesh_close(&m);
        }
    }
}

/* ------------------------------------------------------------ 2. wrapping caller buffers */

static int64_t bal_len(int64_t n, int k, int c) { return n / k + (c < n % k); }
static int64_t bal_off(int64_t n, int k, int c) { return (int64_t)c * (n / k) + mini(c, n % k); }

/* a buffer of rows [off, off+len) of an n x cols tensor with dtt_val */
static void *rows_buffer(dt_dtype t, int64_t n, int64_t cols, int64_t off, int64_t len)
{
    int64_t sh[2], ls[2], lo[2];
    void *buf = dtt_malloc((size_t)(len * cols) * dtt_size(t));
    sh[0] = n;
    sh[1] = cols;
    ls[0] = len;
    ls[1] = cols;
    lo[0] = off;
    lo[1] = 0;
    dtt_fill_box(t, 2, sh, ls, lo, buf);
    return buf;
}

/* wrap rows [off, off+len) as pl on a 1-D mesh (flags), check zero copies, the sizes
   (for DT_INFER_SIZES: the desc's inferred sizes), indices and the gathered values */
static void wrap_case(const dtt_mesh *m, dt_dtype t, int ndim, int64_t n, dt_placement pl, unsigned flags,
                      const int64_t *all_sizes, const char *what)
{
    int64_t cols = ndim == 2 ? 3 : 1, len = all_sizes[m->coord[0]], off = 0, lsh[2];
    void *buf;
    dt_tensor_desc d;
    dt_tensor *x = NULL;
    int c;
    for (c = 0; c < m->coord[0]; c++) off += all_sizes[c];
    buf = rows_buffer(t, n, cols, off, len);
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = ndim;
    d.shape[0] = n;
    d.shape[1] = cols;
    d.placements[0] = pl;
    lsh[0] = len;
    lsh[1] = cols;
    if (flags & DT_INFER_SIZES) d.local_shape = lsh;
    dtt_ctx("wrap %s %s n=%lld ndim %d", what, dtt_dtname(t), (long long)n, ndim);
    CHECK_OK(dt_tensor_from_local(m->mesh, &d, buf, flags, &x));
    if (x) {
        const dt_tensor_desc *dd = dt_tensor_get_desc(x);
        int64_t *idx = (int64_t *)dtt_malloc(sizeof(int64_t) * (size_t)(n + 1)), i;
        if (len * cols > 0) CHECK(dt_tensor_data(x) == buf, "DT_BORROW must wrap the caller's buffer (zero copies)");
        if (flags & DT_INFER_SIZES) {
            CHECK(dd->placements[0].kind == DT_SHARD && dd->placements[0].split == DT_SPLIT_SIZES &&
                  dd->placements[0].sizes != NULL, "DT_INFER_SIZES: the desc should name dt_shard_sizes (split %d)",
                  dd->placements[0].split);
            if (dd->placements[0].split == DT_SPLIT_SIZES && dd->placements[0].sizes)
                for (c = 0; c < m->shape[0]; c++)
                    CHECK(dd->placements[0].sizes[c] == all_sizes[c], "inferred sizes[%d] = %lld want %lld", c,
                          (long long)dd->placements[0].sizes[c], (long long)all_sizes[c]);
        }
        CHECK_OK(dt_tensor_local_indices(x, 0, idx));
        for (i = 0; i < len; i++)
            if (idx[i] != off + i) {
                CHECK(0, "local index %lld = %lld want %lld", (long long)i, (long long)idx[i], (long long)(off + i));
                break;
            }
        check_values(x, what);
        check_gather(x, what);
        { /* and it redistributes to the default chunk rows from there */
            dt_placement ch[DT_MAX_MESH_DIMS];
            dt_tensor *y = NULL;
            memset(ch, 0, sizeof ch);
            ch[0] = dt_shard(0);
            CHECK_OK(dt_tensor_redistribute(x, ch, &y));
            if (y) check_values(y, "-> chunk");
            dt_tensor_destroy(y);
        }
        free(idx);
    }
    dt_tensor_destroy(x);
    free(buf);
}

static void test_wrap(void)
{
    static const dt_dtype types[3] = { DT_F64, DT_I32, DT_F16 };
    int64_t ns[5], all[MAXK];
    int one[1], i, c, ti = 0, nd;
    dtt_mesh m;
    ns[0] = 0;
    ns[1] = 1;
    ns[2] = dtt_np > 1 ? dtt_np - 1 : 2;
    ns[3] = 10;
    ns[4] = 37;
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    for (nd = 1; nd <= 2; nd++)
        for (i = 0; i < 5; i++) {
            dt_dtype t = types[ti++ % 3];
            int64_t n = ns[i];
            if (dtt_quick && (i + nd) % 2) continue;
            /* PETSc's PETSC_DECIDE: each rank computes its own n/k + (r < n%k) */
            for (c = 0; c < dtt_np; c++) all[c] = bal_len(n, dtt_np, c);
            CHECK(bal_off(n, dtt_np, m.coord[0]) + all[m.coord[0]] <= n, "balanced reference");
            wrap_case(&m, t, nd, n, dt_shard_balanced(0), DT_BORROW, all, "balanced");
            /* the same buffers, only local_shape given: the desc names plain dt_shard */
            wrap_case(&m, t, nd, n, dt_shard(0), DT_BORROW | DT_INFER_SIZES, all, "infer (balanced buffers)");
            /* explicit sizes with empty parts */
            make_sizes(n, dtt_np, (uint64_t)i + 1, all);
            wrap_case(&m, t, nd, n, dt_shard_sizes(0, all), DT_BORROW, all, "sizes");
            wrap_case(&m, t, nd, n, dt_shard_balanced(0), DT_BORROW | DT_INFER_SIZES, all, "infer (sizes buffers)");
        }
    dtt_mesh_close(&m);
    { /* 2-D mesh, both tensor dims inferred: rows balanced over mesh dim 0, cols sizes (with zeros) over dim 1 */
        int ms2[8], n2 = mesh2_shapes(ms2), j;
        for (j = 0; j < n2; j++) {
            int64_t n0 = 11, n1 = 7, rs[MAXK], cs[MAXK], lsh[2], off0 = 0, off1 = 0;
            dt_tensor_desc d;
            dt_tensor *x = NULL;
            void *buf;
            int64_t sh[2], lo[2];
            if (!dtt_mesh_open(&m, g_comm, 2, &ms2[2 * j])) continue;
            for (c = 0; c < m.shape[0]; c++) rs[c] = bal_len(n0, m.shape[0], c);
            make_sizes(n1, m.shape[1], 5, cs);
            for (c = 0; c < m.coord[0]; c++) off0 += rs[c];
            for (c = 0; c < m.coord[1]; c++) off1 += cs[c];
            lsh[0] = rs[m.coord[0]];
            lsh[1] = cs[m.coord[1]];
            sh[0] = n0;
            sh[1] = n1;
            lo[0] = off0;
            lo[1] = off1;
            buf = dtt_malloc((size_t)(lsh[0] * lsh[1]) * 8);
            dtt_fill_box(DT_I64, 2, sh, lsh, lo, buf);
            memset(&d, 0, sizeof d);
            d.dtype = DT_I64;
            d.ndim = 2;
            d.shape[0] = n0;
            d.shape[1] = n1;
            d.placements[0] = dt_shard(0);
            d.placements[1] = dt_shard_cyclic(1, 2); /* whatever rule: the local shapes are the truth */
            d.local_shape = lsh;
            dtt_ctx("wrap infer 2-D mesh %s", m.name);
            CHECK_OK(dt_tensor_from_local(m.mesh, &d, buf, DT_BORROW | DT_INFER_SIZES, &x));
            if (x) {
                const dt_tensor_desc *dd = dt_tensor_get_desc(x);
                if (lsh[0] * lsh[1] > 0) CHECK(dt_tensor_data(x) == buf, "DT_BORROW must wrap the caller's buffer");
                CHECK(dd->placements[0].split == DT_SPLIT_SIZES && dd->placements[1].split == DT_SPLIT_SIZES,
                      "DT_INFER_SIZES: both dims should become sizes (%d %d)", dd->placements[0].split,
                      dd->placements[1].split);
                check_values(x, "infer 2-D");
                check_gather(x, "infer 2-D");
            }
            dt_tensor_destroy(x);
            free(buf);
            dtt_mesh_close(&m);
        }
    }
}

/* DT_INFER_SIZES refusals, on every rank alike: local sizes that do not sum to the
   extent, an unsplit dim that is not the extent, a dim split by two mesh dims */
static void test_infer_refusals(void)
{
    int one[1], ms2[8], n2 = mesh2_shapes(ms2), c;
    int64_t n = 3 * dtt_np + 1, len, lsh[2];
    double *buf = dtt_alloc_d(2 * n);
    dt_tensor_desc d;
    dt_tensor *x = NULL;
    dt_status st;
    dtt_mesh m;
    for (c = 0; c < 2 * n; c++) buf[c] = 0;
    one[0] = dtt_np;
    if (dtt_mesh_open(&m, g_comm, 1, one)) {
        memset(&d, 0, sizeof d);
        d.dtype = DT_F64;
        d.ndim = 2;
        d.shape[0] = n;
        d.shape[1] = 2;
        d.placements[0] = dt_shard(0);
        d.local_shape = lsh;
        len = bal_len(n, dtt_np, m.coord[0]);
        dtt_ctx("infer refusals mesh %s", m.name);
        lsh[0] = len + (dtt_rank == dtt_np - 1); /* one too many in all */
        lsh[1] = 2;
        st = dt_tensor_from_local(m.mesh, &d, buf, DT_BORROW | DT_INFER_SIZES, &x);
        CHECK(st != DT_OK && !x, "local sizes summing to %lld + 1: %s", (long long)n, dt_status_string(st));
        dt_tensor_destroy(x);
        x = NULL;
        lsh[0] = len;
        lsh[1] = dtt_rank == 0 ? 1 : 2; /* the unsplit dim is not the extent on rank 0 */
        st = dt_tensor_from_local(m.mesh, &d, buf, DT_BORROW | DT_INFER_SIZES, &x);
        CHECK(st != DT_OK && !x, "an unsplit dim of %lld on rank 0: %s", (long long)lsh[1], dt_status_string(st));
        dt_tensor_destroy(x);
        x = NULL;
        dtt_mesh_close(&m);
    }
    for (c = 0; c < n2; c++) {
        if (!dtt_mesh_open(&m, g_comm, 2, &ms2[2 * c])) continue;
        memset(&d, 0, sizeof d);
        d.dtype = DT_F64;
        d.ndim = 2;
        d.shape[0] = n;
        d.shape[1] = 2;
        d.placements[0] = dt_shard(0);
        d.placements[1] = dt_shard(0);
        d.local_shape = lsh;
        lsh[0] = (n + m.shape[0] - 1) / m.shape[0]; /* the chunk-in-chunk part: only the nesting is wrong */
        lsh[0] = mini(mini((int64_t)(m.coord[0] + 1) * lsh[0], n) - mini((int64_t)m.coord[0] * lsh[0], n), n);
        {
            int64_t q = (lsh[0] + m.shape[1] - 1) / m.shape[1];
            lsh[0] = mini((int64_t)(m.coord[1] + 1) * q, lsh[0]) - mini((int64_t)m.coord[1] * q, lsh[0]);
        }
        lsh[1] = 2;
        dtt_ctx("infer refusals mesh %s", m.name);
        st = dt_tensor_from_local(m.mesh, &d, buf, DT_BORROW | DT_INFER_SIZES, &x);
        CHECK(st == DT_ERR_PLACEMENT && !x, "DT_INFER_SIZES with two mesh dims on dim 0: %s, want DT_ERR_PLACEMENT (%s)",
              dt_status_string(st), dt_last_error());
        dt_tensor_destroy(x);
        x = NULL;
        dtt_mesh_close(&m);
    }
    free(buf);
}

/* ------------------------------------------------------------ 3. redistribution */

static long g_pairs = 0;

/* src -> dst: values (via dt_tensor_local_indices) and, without Partial, the byte lower bound */
static void run_pair(const dtt_mesh *m, const spec *src, const spec *dst, dt_dtype t, int borrow)
{
    dt_tensor_desc d;
    dt_tensor *a = NULL, *b = NULL;
    dt_comm_stats st;
    dt_status rc;
    int64_t n;
    void *buf;
    char s1[256], s2[256], s3[64];
    dt_placement tmp[DT_MAX_MESH_DIMS];
    int64_t *scopy[DT_MAX_MESH_DIMS], lsh[DT_MAX_DIMS];
    int k, partial = 0;
    spec_str(src, s1, sizeof s1);
    spec_str(dst, s2, sizeof s2);
    dtt_ctx("redistribute mesh %s %s %s %s -> %s", m->name, dtt_dtname(t), dtt_shape_str(src->ndim, src->shape, s3,
            sizeof s3), s1, s2);
    if (!src->valid) return;
    g_pairs++;
    for (k = 0; k < m->nd; k++) partial |= src->pl[k].kind == DT_PARTIAL;
    buf = local_buffer(m, src, t, &n);
    desc_of(src, t, &d);
    if (g_pairs % 3 == 0) { /* DT_VERIFY checks the buffer against the local shape given */
        lay L;
        lay_make(&L, src, m->coord);
        memcpy(lsh, L.n, sizeof lsh);
        lay_free(&L);
        d.local_shape = lsh;
    }
    CHECK_OK(dt_tensor_from_local(m->mesh, &d, buf, (borrow ? DT_BORROW : DT_COPY) | (g_pairs % 3 ? 0u : DT_VERIFY),
                                  &a));
    if (!a) {
        free(buf);
        return;
    }
    if (borrow && n > 0) CHECK(dt_tensor_data(a) == buf, "DT_BORROW must wrap the caller's buffer");
    /* the destination's sizes arrays live only during the call (the tensor keeps a copy) */
    memcpy(tmp, dst->pl, sizeof tmp);
    for (k = 0; k < m->nd; k++) {
        scopy[k] = NULL;
        if (tmp[k].kind == DT_SHARD && tmp[k].split == DT_SPLIT_SIZES) {
            scopy[k] = (int64_t *)dtt_malloc(sizeof(int64_t) * (size_t)m->shape[k]);
            memcpy(scopy[k], tmp[k].sizes, sizeof(int64_t) * (size_t)m->shape[k]);
            tmp[k].sizes = scopy[k];
        }
    }
    dt_comm_reset_stats(m->comm);
    rc = dt_tensor_redistribute(a, tmp, &b);
    dt_comm_get_stats(m->comm, &st);
    for (k = 0; k < m->nd; k++)
        if (scopy[k]) {
            memset(scopy[k], 0x55, sizeof(int64_t) * (size_t)m->shape[k]);
            free(scopy[k]);
        }
    if (!dst->valid) {
        CHECK(rc == DT_ERR_PLACEMENT && !b, "a destination whose sizes do not fit: %s, want DT_ERR_PLACEMENT",
              dt_status_string(rc));
    } else if (rc != DT_OK) {
        CHECK(0, "dt_tensor_redistribute returned %s: %s", dt_status_string(rc), dt_last_error());
    } else if (check_layout(m, b, dst, "dest") == 0) {
        check_values(b, "dest");
        if (!partial) {
            lay Ls, Ld;
            int64_t held = 1, want;
            lay_make(&Ls, src, m->coord);
            lay_make(&Ld, dst, m->coord);
            for (k = 0; k < src->ndim; k++) held *= isect(Ls.idx[k], Ls.n[k], Ld.idx[k], Ld.n[k]);
            want = (lay_numel(&Ld) - held) * (int64_t)dtt_size(t);
            if (st.bytes_recv != (uint64_t)want)
                dtt_fail(__FILE__, __LINE__, "bytes_recv == lower bound",
                         "src %s dst %s mesh %s rank %d %s shape %s: expected %lld bytes received, got %llu "
                         "(sent %llu, calls %llu)", s1, s2, m->name, dtt_rank, dtt_dtname(t), s3, (long long)want,
                         (unsigned long long)st.bytes_recv, (unsigned long long)st.bytes_sent,
                         (unsigned long long)st.calls);
            lay_free(&Ls);
            lay_free(&Ld);
        }
        if (g_pairs % 5 == 0) check_gather(b, "dest");
        if (g_pairs % 7 == 0) { /* *out reused: same buffer, the values again */
            void *p = dt_tensor_data(b);
            if (p) memset(p, 0, dt_tensor_local_numel(b) * dtt_size(t));
            CHECK_OK(dt_tensor_redistribute(a, dst->pl, &b));
            CHECK(dt_tensor_local_numel(b) == 0 || dt_tensor_data(b) == p, "*out's buffer was not reused");
            check_values(b, "dest (reused *out)");
        }
    }
    dt_tensor_destroy(b);
    dt_tensor_destroy(a);
    free(buf);
}

static void pair_codes(const dtt_mesh *m, int ndim, const int64_t *shape, const int *ca, const int *cb, uint64_t salt)
{
    static spec src, dst; /* large: not on the stack */
    dt_dtype t = (dt_dtype)(g_rot % DTT_NUM_REAL_DTYPES);
    spec_code(&src, m, ndim, shape, ca, salt);
    spec_code(&dst, m, ndim, shape, cb, salt + 7);
    run_pair(m, &src, &dst, t, g_rot % 2);
    g_rot++;
}

/* a random code for a mesh dim; with nest >= 0, a Shard of tensor dim `nest` (any rule) */
static int rand_code(dtt_rng *r, int ndim, int nest)
{
    if (nest >= 0) return 1 + nest * NRULES + dtt_randint(r, NRULES);
    return dtt_randint(r, nopts(ndim));
}

/* the 3-D mesh of the rank count with the most dims above 1 (NULL-free: 0 if none fits) */
static int mesh3_shape(int *ms)
{
    if (dtt_np == 8) { ms[0] = 2; ms[1] = 2; ms[2] = 2; return 1; }
    if (dtt_np == 4) { ms[0] = 1; ms[1] = 2; ms[2] = 2; return 1; }
    if (dtt_np == 6) { ms[0] = 3; ms[1] = 1; ms[2] = 2; return 1; }
    if (dtt_np == 2) { ms[0] = 2; ms[1] = 1; ms[2] = 1; return 1; }
    return 0;
}

/* random pairs of placement tuples on an nd-dim mesh; with `nest`, mesh dims after the
   first often shard the tensor dim an earlier one shards (nesting up to nd deep) */
static void random_pairs(const dtt_mesh *m, int ndim, const int64_t (*shapes)[3], int nshapes, int npairs,
                         dtt_rng *rng)
{
    int i, k;
    for (i = 0; i < npairs; i++) {
        int ca[DT_MAX_MESH_DIMS], cb[DT_MAX_MESH_DIMS];
        for (k = 0; k < m->nd; k++) {
            int na = k > 0 && ca[k - 1] > 0 && dtt_randint(rng, 2) ? (ca[k - 1] - 1) / NRULES : -1;
            int nb = k > 0 && cb[k - 1] > 0 && dtt_randint(rng, 3) == 0 ? (cb[k - 1] - 1) / NRULES : -1;
            ca[k] = rand_code(rng, ndim, na);
            cb[k] = rand_code(rng, ndim, nb);
        }
        if (i % 10 == 0) ca[dtt_randint(rng, m->nd)] = CODE_P;
        pair_codes(m, ndim, shapes[i % nshapes], ca, cb, (uint64_t)(1000 + i));
    }
}

static void test_redistribute_rules(void)
{
    int one[1], ms2[8], ms3[3], n2 = mesh2_shapes(ms2), i, j, e, p;
    dtt_mesh m;
    dtt_rng rng;
    rng.s = g_seed ^ 0xBEEFu;
    one[0] = dtt_np;
    if (dtt_mesh_open(&m, g_comm, 1, one)) {
        static const int64_t ext[6] = { 0, 1, 2, 5, 13, 24 };
        static const int64_t sh2[3][2] = { { 7, 5 }, { 3, 9 }, { 0, 4 } };
        static const int64_t sh3[2][3] = { { 3, 4, 5 }, { 2, 0, 7 } };
        int cp = CODE_P;
        /* 1-D tensors: every pair of rules (and R), Partial(SUM) to each */
        for (e = 0; e < 6; e++) {
            for (i = 0; i < nopts(1); i++)
                for (j = 0; j < nopts(1); j++) {
                    if (dtt_quick && dtt_frand(&rng) > 0.3) continue;
                    pair_codes(&m, 1, &ext[e], &i, &j, (uint64_t)(e * 100 + i * 10 + j));
                }
            for (j = 0; j < nopts(1); j++)
                if (!dtt_quick || (e + j) % 3 == 0) pair_codes(&m, 1, &ext[e], &cp, &j, (uint64_t)(e + j));
        }
        /* 2-D tensors: every pair (S0->S1, S1->S0, same dim other rule, R) */
        for (e = 0; e < 3; e++) {
            for (i = 0; i < nopts(2); i++)
                for (j = 0; j < nopts(2); j++) {
                    if (dtt_frand(&rng) > (dtt_quick ? 0.05 : e == 0 ? 1.0 : 0.4)) continue;
                    pair_codes(&m, 2, sh2[e], &i, &j, (uint64_t)(e * 1000 + i * 20 + j));
                }
            for (j = 0; j < nopts(2); j++)
                if (!dtt_quick || (e + j) % 3 == 0) pair_codes(&m, 2, sh2[e], &cp, &j, (uint64_t)(e + j));
        }
        /* 3-D tensors: sampled */
        for (e = 0; e < 2; e++)
            for (i = 0; i < nopts(3); i++)
                for (j = 0; j < nopts(3); j++) {
                    if (dtt_frand(&rng) > (dtt_quick ? 0.03 : 0.2)) continue;
                    pair_codes(&m, 3, sh3[e], &i, &j, (uint64_t)(e * 5000 + i * 30 + j));
                }
        dtt_mesh_close(&m);
    }
    for (p = 0; p < n2; p++) {
        static const int64_t ext1[4][3] = { { 5 }, { 13 }, { 24 }, { 3 } };
        static const int64_t sh2[3][3] = { { 7, 5 }, { 9, 4 }, { 0, 6 } };
        int npairs = dtt_quick ? 20 : 300;
        if (!dtt_mesh_open(&m, g_comm, 2, &ms2[2 * p])) continue;
        random_pairs(&m, 1, ext1, 4, npairs, &rng); /* 1-D tensors: mostly nested */
        random_pairs(&m, 2, sh2, 3, npairs, &rng);
        /* named nested combos: [S0:a, S0:b] <-> [S0:c, S1:d] and [S1:a, S1:b] */
        for (i = 0; i < (dtt_quick ? 2 : NRULES); i++) {
            int ca[2], cb[2];
            ca[0] = 1 + i;
            ca[1] = 1 + (i + 3) % NRULES;
            cb[0] = 1 + (i + 1) % NRULES;
            cb[1] = 1 + NRULES + (i + 5) % NRULES;
            pair_codes(&m, 2, sh2[0], ca, cb, (uint64_t)(7 * i));
            pair_codes(&m, 2, sh2[1], cb, ca, (uint64_t)(7 * i + 1));
            cb[0] = 1 + NRULES + (i + 2) % NRULES;
            pair_codes(&m, 2, sh2[0], ca, cb, (uint64_t)(7 * i + 2));
            pair_codes(&m, 2, sh2[1], cb, ca, (uint64_t)(7 * i + 3));
        }
        dtt_mesh_close(&m);
    }
    if (mesh3_shape(ms3) && dtt_mesh_open(&m, g_comm, 3, ms3)) { /* nesting three deep */
        static const int64_t ext1[2][3] = { { 17 }, { 30 } };
        static const int64_t sh2[2][3] = { { 9, 7 }, { 12, 5 } };
        static const int64_t sh3[1][3] = { { 4, 5, 6 } };
        random_pairs(&m, 1, ext1, 2, dtt_quick ? 12 : 150, &rng);
        random_pairs(&m, 2, sh2, 2, dtt_quick ? 12 : 150, &rng);
        random_pairs(&m, 3, sh3, 1, dtt_quick ? 6 : 60, &rng);
        dtt_mesh_close(&m);
    }
}

/* ------------------------------------------------------------ 4. ops */

static double va(int64_t g) { return (double)((g * 7 + 3) % 61 - 30) * 0.25; }
static double vb(int64_t g) { return (double)((g * 5 + 1) % 37 - 18) * 0.5; }

/* an F64 tensor of spec s holding fn(g) (no Partial) */
static dt_tensor *make_fn(const dtt_mesh *m, const spec *s, double (*fn)(int64_t))
{
    lay L;
    dt_tensor_desc d;
    dt_tensor *x = NULL;
    int64_t n, i;
    double *buf;
    lay_make(&L, s, m->coord);
    n = lay_numel(&L);
    buf = dtt_alloc_d(n);
    for (i = 0; i < n; i++) buf[i] = fn(lay_g(&L, i));
    lay_free(&L);
    desc_of(s, DT_F64, &d);
    CHECK_OK(dt_tensor_from_local(m->mesh, &d, buf, DT_COPY, &x));
    free(buf);
    return x;
}

/* the local values of x against want[g] (full array), via dt_tensor_local_indices */
static void check_local_d(const dt_tensor *x, const double *want, double rtol, const char *what)
{
    const dt_tensor_desc *dd = dt_tensor_get_desc(x);
    int64_t n[DT_MAX_DIMS], *idx[DT_MAX_DIMS], i, ne;
    int d, bad = 0;
    if (!dd) {
        CHECK(0, "%s: no tensor", what);
        return;
    }
    dt_tensor_local_shape(x, n);
    for (d = 0; d < dd->ndim; d++) {
        idx[d] = (int64_t *)dtt_malloc(sizeof(int64_t) * (size_t)(n[d] + 1));
        if (dt_tensor_local_indices(x, d, idx[d]) != DT_OK) bad = 1;
    }
    CHECK(!bad, "%s: dt_tensor_local_indices: %s", what, dt_last_error());
    ne = dtt_numel(dd->ndim, n);
    for (i = 0; i < ne && !bad; i++) {
        int64_t g = gidx_of(dd->ndim, dd->shape, n, idx, i);
        double got = ((const double *)dt_tensor_data(x))[i];
        if (!(fabs(got - want[g]) <= rtol * fabs(want[g]))) {
            CHECK(0, "%s: local elem %lld (global %lld) = %.17g want %.17g", what, (long long)i, (long long)g, got,
                  want[g]);
            bad = 1;
        }
    }
    for (d = 0; d < dd->ndim; d++) free(idx[d]);
}

static void check_full_d(const dt_tensor *x, int64_t n, const double *want, double rtol, const char *what)
{
    double *got = dtt_alloc_d(n);
    int64_t i;
    CHECK_OK(dtt_gather_full(x, got));
    for (i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= rtol * fabs(want[i]))) {
            CHECK(0, "%s: global %lld = %.17g want %.17g", what, (long long)i, got[i], want[i]);
            break;
        }
    free(got);
}

static int same_layout(const dtt_mesh *m, const dt_tensor *x, const spec *s)
{
    const dt_tensor_desc *dd = dt_tensor_get_desc(x);
    int k;
    if (!dd) return 0;
    for (k = 0; k < m->nd; k++)
        if (!same_pl(&dd->placements[k], &s->pl[k], m->shape[k])) return 0;
    return 1;
}

static void ops_case(const dtt_mesh *m, const spec *s, const spec *s2)
{
    int64_t n = dtt_numel(s->ndim, s->shape), i, r, c, rows = s->shape[0], cols = s->shape[1];
    double *wa = dtt_alloc_d(n), *wb = dtt_alloc_d(n), *w = dtt_alloc_d(n);
    dt_tensor *a = make_fn(m, s, va), *b = make_fn(m, s, vb), *b2 = make_fn(m, s2, vb), *o = NULL;
    dt_comm_stats st;
    char c1[256], c2[256];
    dtt_ctx("ops mesh %s %s / %s", m->name, spec_str(s, c1, sizeof c1), spec_str(s2, c2, sizeof c2));
    for (i = 0; i < n; i++) {
        wa[i] = va(i);
        wb[i] = vb(i);
    }
    if (!a || !b || !b2) goto done;
    /* identical layouts: local, the result keeps the layout */
    for (i = 0; i < 3; i++) {
        static const char *const nm[3] = { "dt_add", "dt_mul", "dt_exp" };
        dt_status rc;
        int64_t g;
        dt_comm_reset_stats(m->comm);
        rc = i == 0 ? dt_add(a, b, &o) : i == 1 ? dt_mul(a, b, &o) : dt_exp(a, &o);
        dt_comm_get_stats(m->comm, &st);
        CHECK(rc == DT_OK, "%s returned %s: %s", nm[i], dt_status_string(rc), dt_last_error());
        if (!o) continue;
        CHECK(st.bytes_recv == 0 && st.bytes_sent == 0, "%s on identical layouts moved bytes (recv %llu sent %llu)",
              nm[i], (unsigned long long)st.bytes_recv, (unsigned long long)st.bytes_sent);
        CHECK(same_layout(m, o, s), "%s on identical layouts: the result has another layout", nm[i]);
        for (g = 0; g < n; g++) w[g] = i == 0 ? wa[g] + wb[g] : i == 1 ? wa[g] * wb[g] : exp(wa[g]);
        check_local_d(o, w, i == 2 ? dtt_rtol(DT_F64) : 0.0, nm[i]);
        check_full_d(o, n, w, i == 2 ? dtt_rtol(DT_F64) : 0.0, nm[i]);
        dt_tensor_destroy(o);
        o = NULL;
    }
    /* different rules: values */
    CHECK_OK(dt_add(a, b2, &o));
    for (i = 0; i < n; i++) w[i] = wa[i] + wb[i];
    if (o) check_full_d(o, n, w, 0.0, "dt_add (other rule)");
    dt_tensor_destroy(o);
    o = NULL;
    CHECK_OK(dt_mul(b2, a, &o));
    for (i = 0; i < n; i++) w[i] = wa[i] * wb[i];
    if (o) check_full_d(o, n, w, 0.0, "dt_mul (other rule)");
    dt_tensor_destroy(o);
    o = NULL;
    /* sums over each dim and over all dims (exact: quarters) */
    for (i = 0; i < 3; i++) {
        int dim = (int)i;
        int64_t nout = i == 0 ? cols : i == 1 ? rows : 1;
        for (c = 0; c < nout; c++) w[c] = 0;
        for (r = 0; r < rows; r++)
            for (c = 0; c < cols; c++) w[i == 0 ? c : i == 1 ? r : 0] += wa[r * cols + c];
        CHECK_OK(dt_sum(a, i < 2 ? 1 : 0, i < 2 ? &dim : NULL, 0, &o));
        if (o) check_full_d(o, nout, w, 0.0, i == 0 ? "dt_sum dim 0" : i == 1 ? "dt_sum dim 1" : "dt_sum all");
        dt_tensor_destroy(o);
        o = NULL;
    }
done:
    dt_tensor_destroy(a);
    dt_tensor_destroy(b);
    dt_tensor_destroy(b2);
    free(wa);
    free(wb);
    free(w);
}

static void matmul_case(const dtt_mesh *m, const spec *sa, const spec *sb)
{
    int64_t mm = sa->shape[0], kk = sa->shape[1], nn = sb->shape[1], i, osh[DT_MAX_DIMS];
    double *fa = dtt_alloc_d(mm * kk), *fb = dtt_alloc_d(kk * nn), *w = dtt_alloc_d(mm * nn);
    dt_tensor *a = make_fn(m, sa, va), *b = make_fn(m, sb, vb), *o = NULL;
    char c1[256], c2[256];
    int ond;
    dtt_ctx("matmul mesh %s A %s B %s", m->name, spec_str(sa, c1, sizeof c1), spec_str(sb, c2, sizeof c2));
    for (i = 0; i < mm * kk; i++) fa[i] = va(i);
    for (i = 0; i < kk * nn; i++) fb[i] = vb(i);
    dtt_ref_matmul(fa, 2, sa->shape, fb, 2, sb->shape, w, &ond, osh);
    if (a && b) {
        CHECK_OK(dt_matmul(a, b, &o));
        if (o) check_full_d(o, mm * nn, w, 0.0, "dt_matmul");
        dt_tensor_destroy(o);
    }
    dt_tensor_destroy(a);
    dt_tensor_destroy(b);
    free(fa);
    free(fb);
    free(w);
}

static void test_ops(void)
{
    static spec s, s2, sb;
    int one[1], ms2[8], n2 = mesh2_shapes(ms2), i, p;
    int64_t sh[2] = { 9, 6 }, sha[2] = { 10, 4 }, shb[2] = { 4, 3 };
    dtt_mesh m;
    one[0] = dtt_np;
    if (dtt_mesh_open(&m, g_comm, 1, one)) {
        for (i = 0; i < nopts(2); i++) { /* R and every rule on each dim */
            int j = 1 + (i * 5) % (nopts(2) - 1);
            if (dtt_quick && i % 3) continue;
            spec_code(&s, &m, 2, sh, &i, (uint64_t)i);
            spec_code(&s2, &m, 2, sh, &j, (uint64_t)j + 50);
            ops_case(&m, &s, &s2);
        }
        for (i = 0; i < NRULES; i++) { /* A row-sharded by each rule; B replicated, then k-sharded cyclic */
            int ca = 1 + i, cb = 0;
            if (dtt_quick && i % 2) continue;
            spec_code(&s, &m, 2, sha, &ca, (uint64_t)i);
            spec_code(&sb, &m, 2, shb, &cb, 0);
            matmul_case(&m, &s, &sb);
            cb = 1 + RU_CYC1;
            spec_code(&sb, &m, 2, shb, &cb, 0);
            matmul_case(&m, &s, &sb);
        }
        dtt_mesh_close(&m);
    }
    for (p = 0; p < n2; p++) {
        static const int nested[4][2] = { { 1 + RU_CYC2, 1 + RU_BAL }, { 1 + RU_BAL, 1 + NRULES + RU_CYC3 },
                                          { 1 + NRULES + RU_SIZES, 1 + NRULES + RU_CYC1 },
                                          { 1 + RU_CYC3, 1 + RU_SIZES } };
        if (!dtt_mesh_open(&m, g_comm, 2, &ms2[2 * p])) continue;
        for (i = 0; i < (dtt_quick ? 2 : 4); i++) {
            spec_code(&s, &m, 2, sh, nested[i], (uint64_t)i);
            spec_code(&s2, &m, 2, sh, nested[(i + 1) % 4], (uint64_t)i + 9);
            if (s.valid && s2.valid) ops_case(&m, &s, &s2);
            spec_code(&s, &m, 2, sha, nested[i % 2 == 0 ? 0 : 3], (uint64_t)i);
            {
                int cb[2];
                cb[0] = 0;
                cb[1] = i < 2 ? 0 : 1 + NRULES + RU_BAL;
                spec_code(&sb, &m, 2, shb, cb, 0);
            }
            if (s.valid && sb.valid) matmul_case(&m, &s, &sb);
        }
        dtt_mesh_close(&m);
    }
}

/* ------------------------------------------------------------ 5. rng */

/* fill op `op` (0 rand, 1 randn, 2 uniform_ on zeros, 3 randint_) after dt_manual_seed(seed) */
static dt_status rng_fill(dt_mesh *mesh, const dt_tensor_desc *d, int op, dt_tensor **x)
{
    dt_status st = dt_manual_seed(mesh, 4242);
    if (st) return st;
    switch (op) {
    case 0: return dt_tensor_rand(mesh, d, x);
    case 1: return dt_tensor_randn(mesh, d, x);
    case 2: if ((st = dt_tensor_zeros(mesh, d, x))) return st; return dt_uniform_(*x, -2.0, 3.0);
    default: if ((st = dt_tensor_zeros(mesh, d, x))) return st; return dt_randint_(*x, 3, 100); /* U8 holds it */
    }
}

static void rng_case(const dtt_mesh *m, const spec *s, int op, dt_dtype t, int self)
{
    dt_tensor_desc d, dr;
    dt_tensor *x = NULL, *r = NULL;
    int64_t n = dtt_numel(s->ndim, s->shape);
    size_t bytes = (size_t)n * dtt_size(t);
    unsigned char *gx = (unsigned char *)dtt_malloc(bytes), *gr = (unsigned char *)dtt_malloc(bytes);
    char c1[256];
    dtt_ctx("rng op %d %s mesh %s %s", op, dtt_dtname(t), m->name, spec_str(s, c1, sizeof c1));
    desc_of(s, t, &d);
    desc_of(s, t, &dr);
    memset(dr.placements, 0, sizeof dr.placements);
    CHECK_OK(rng_fill(m->mesh, &d, op, &x));
    CHECK_OK(rng_fill(m->mesh, &dr, op, &r));
    if (x && r) {
        check_layout(m, x, s, "random tensor");
        CHECK_OK(dt_tensor_gather(x, gx));
        CHECK_OK(dt_tensor_gather(r, gr));
        CHECK(memcmp(gx, gr, bytes) == 0, "not bit-identical with the replicated fill");
        if (self) { /* the one-rank run */
            dt_comm *sc = NULL;
            dt_mesh *sm = NULL;
            dt_tensor *y = NULL;
            dtt_self_mesh(&sc, &sm);
            if (sm) {
                dt_tensor_desc d1 = dr;
                CHECK_OK(rng_fill(sm, &d1, op, &y));
                if (y) CHECK(memcmp(dt_tensor_data(y), gx, bytes) == 0, "not bit-identical with a one-rank run");
            }
            dt_tensor_destroy(y);
            dt_mesh_destroy(sm);
            dt_comm_destroy(sc);
        }
    }
    dt_tensor_destroy(x);
    dt_tensor_destroy(r);
    free(gx);
    free(gr);
}

static void test_rng_rules(void)
{
    static const dt_dtype ft[4] = { DT_F32, DT_F64, DT_BF16, DT_F16 };
    static const dt_dtype it[3] = { DT_I32, DT_I64, DT_U8 };
    static spec s;
    int one[1], ms2[8], n2 = mesh2_shapes(ms2), i, p, rot = 0;
    int64_t sh[2] = { 7, 5 }, sh1 = 23;
    dtt_mesh m;
    dtt_rng rng;
    rng.s = g_seed ^ 0x4A4Du;
    one[0] = dtt_np;
    if (dtt_mesh_open(&m, g_comm, 1, one)) {
        for (i = 0; i < nopts(2); i++) {
            int op = rot % 4;
            spec_code(&s, &m, 2, sh, &i, (uint64_t)i);
            rng_case(&m, &s, op, op == 3 ? it[rot % 3] : ft[rot % 4], i < 4);
            rot++;
        }
        for (i = 0; i < nopts(1); i++) {
            int op = rot % 4;
            spec_code(&s, &m, 1, &sh1, &i, (uint64_t)i);
            rng_case(&m, &s, op, op == 3 ? it[rot % 3] : ft[rot % 4], 0);
            rot++;
        }
        dtt_mesh_close(&m);
    }
    for (p = 0; p < n2; p++) {
        if (!dtt_mesh_open(&m, g_comm, 2, &ms2[2 * p])) continue;
        for (i = 0; i < (dtt_quick ? 6 : 16); i++) {
            int code[2], op = rot % 4;
            code[0] = rand_code(&rng, 2, -1);
            code[1] = rand_code(&rng, 2, (i % 2 && code[0] > 0) ? (code[0] - 1) / NRULES : -1);
            spec_code(&s, &m, 2, sh, code, (uint64_t)i);
            if (s.valid) rng_case(&m, &s, op, op == 3 ? it[rot % 3] : ft[rot % 4], 0);
            rot++;
        }
        dtt_mesh_close(&m);
    }
}

/* ------------------------------------------------------------ 6. npy */

static void npy_case(const dtt_mesh *m, const spec *save, const spec *const *loads, int nload, dt_dtype t,
                     const char *name)
{
    char path[512], c1[256], c2[256];
    dt_tensor *x = NULL;
    int i;
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    dtt_ctx("npy mesh %s save %s", m->name, spec_str(save, c1, sizeof c1));
    x = make_tensor(m, save, t);
    if (!x) return;
    CHECK_OK(dt_tensor_save_npy(x, path));
    for (i = 0; i < nload; i++) {
        dt_tensor *y = NULL;
        dtt_ctx("npy mesh %s save %s load %s", m->name, c1, spec_str(loads[i], c2, sizeof c2));
        if (!loads[i]->valid || (dtt_quick && i % 4 != 1)) continue;
        CHECK_OK(dt_tensor_load_npy(m->mesh, path, loads[i]->pl, &y));
        if (y && check_layout(m, y, loads[i], "loaded") == 0) check_values(y, "loaded");
        dt_tensor_destroy(y);
    }
    dt_tensor_destroy(x);
    MPI_Barrier(MPI_COMM_WORLD);
    if (dtt_rank == 0) remove(path);
}

static void test_npy(void)
{
    static spec sv, ld[1 + 2 * NRULES];
    const spec *lp[1 + 2 * NRULES];
    int one[1], ms2[8], n2 = mesh2_shapes(ms2), i, p, code;
    int64_t sh[2] = { 13, 6 };
    dtt_mesh m;
    one[0] = dtt_np;
    if (dtt_mesh_open(&m, g_comm, 1, one)) {
        for (i = 0; i < nopts(2); i++) {
            spec_code(&ld[i], &m, 2, sh, &i, (uint64_t)i + 3);
            lp[i] = &ld[i];
        }
        code = 1 + RU_CYC2;
        spec_code(&sv, &m, 2, sh, &code, 1);
        npy_case(&m, &sv, lp, nopts(2), DT_F32, "cyc.npy");
        if (!dtt_quick) {
            code = 1 + NRULES + RU_CYC3;
            spec_code(&sv, &m, 2, sh, &code, 1);
            npy_case(&m, &sv, lp, nopts(2), DT_I64, "cyc1.npy");
            code = 1 + RU_SIZES;
            spec_code(&sv, &m, 2, sh, &code, 2);
            npy_case(&m, &sv, lp, nopts(2), DT_F16, "sizes.npy");
        }
        dtt_mesh_close(&m);
    }
    for (p = 0; p < n2; p++) {
        static const int codes[6][2] = { { 1 + RU_CYC3, 1 + RU_CYC1 }, { 1 + NRULES + RU_BAL, 1 + RU_SIZES },
                                         { 1 + RU_CHUNK, 1 + RU_CYC2 }, { 0, 1 + NRULES + RU_CYCBIG },
                                         { 1 + NRULES + RU_CYC1, 1 + NRULES + RU_BAL }, { 1 + RU_BAL, 1 + NRULES } };
        if (!dtt_mesh_open(&m, g_comm, 2, &ms2[2 * p])) continue;
        for (i = 0; i < 6; i++) {
            spec_code(&ld[i], &m, 2, sh, codes[i], (uint64_t)i);
            lp[i] = &ld[i];
        }
        spec_code(&sv, &m, 2, sh, codes[0], 0); /* nested cyclic */
        npy_case(&m, &sv, lp, 6, DT_F64, "nested.npy");
        dtt_mesh_close(&m);
    }
}

/* ------------------------------------------------------------ 7. distribute */

static void distribute_case(const dtt_mesh *m, const spec *s, dt_dtype t)
{
    int64_t n = dtt_numel(s->ndim, s->shape), lo[DT_MAX_DIMS];
    void *full = dtt_malloc((size_t)n * dtt_size(t));
    dt_tensor_desc d;
    char c1[256];
    int src;
    memset(lo, 0, sizeof lo);
    dtt_fill_box(t, s->ndim, s->shape, s->shape, lo, full);
    desc_of(s, t, &d);
    for (src = 0; src < 2; src++) {
        dt_tensor *x = NULL;
        dt_status st;
        dtt_ctx("distribute %s mesh %s %s %s", src ? "DT_SRC_ALL" : "from rank 0", m->name, dtt_dtname(t),
                spec_str(s, c1, sizeof c1));
        st = dt_tensor_distribute(m->mesh, &d, (src || dtt_rank == 0) ? full : NULL, src ? DT_SRC_ALL : 0, &x);
        if (!s->valid) CHECK(st == DT_ERR_PLACEMENT, "refused sizes: %s", dt_status_string(st));
        else if (st != DT_OK) CHECK(0, "dt_tensor_distribute returned %s: %s", dt_status_string(st), dt_last_error());
        else if (check_layout(m, x, s, "distributed") == 0) check_values(x, "distributed");
        dt_tensor_destroy(x);
    }
    free(full);
}

static void test_distribute_rules(void)
{
    static spec s;
    int one[1], ms2[8], n2 = mesh2_shapes(ms2), i, p;
    int64_t sh[2] = { 7, 5 }, sh1 = 11;
    dtt_mesh m;
    dtt_rng rng;
    rng.s = g_seed ^ 0xD157u;
    one[0] = dtt_np;
    if (dtt_mesh_open(&m, g_comm, 1, one)) {
        for (i = 0; i < nopts(2); i++) {
            spec_code(&s, &m, 2, sh, &i, (uint64_t)i);
            distribute_case(&m, &s, (dt_dtype)(g_rot++ % DTT_NUM_REAL_DTYPES));
        }
        for (i = 0; i < nopts(1); i++) {
            spec_code(&s, &m, 1, &sh1, &i, (uint64_t)i);
            distribute_case(&m, &s, (dt_dtype)(g_rot++ % DTT_NUM_REAL_DTYPES));
        }
        dtt_mesh_close(&m);
    }
    for (p = 0; p < n2; p++) {
        if (!dtt_mesh_open(&m, g_comm, 2, &ms2[2 * p])) continue;
        for (i = 0; i < (dtt_quick ? 6 : 20); i++) {
            int code[2];
            code[0] = rand_code(&rng, 2, -1);
            code[1] = rand_code(&rng, 2, (i % 2 && code[0] > 0) ? (code[0] - 1) / NRULES : -1);
            spec_code(&s, &m, 2, sh, code, (uint64_t)i);
            distribute_case(&m, &s, (dt_dtype)(g_rot++ % DTT_NUM_REAL_DTYPES));
        }
        dtt_mesh_close(&m);
    }
}

/* ------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    double t0;
    dtt_init(&argc, &argv, "layouts");
    DTT_EXCHANGE_PATHS(); /* every exchange path through the sweep (dt_test.h) */
    g_seed = dtt_seed(argc, argv, g_seed);
    {
        const char *base = getenv("DT_TEST_TMPDIR");
        unsigned long id = (unsigned long)getpid();
        MPI_Bcast(&id, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
        snprintf(g_dir, sizeof g_dir, "%s/dt_test_layouts.%lu", base && base[0] ? base : "/tmp", id);
        if (dtt_rank == 0) CHECK(mkdir(g_dir, 0755) == 0, "cannot make %s", g_dir);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    t0 = MPI_Wtime();
    if (dtt_rank == 0) test_reference_by_hand();
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    if (g_comm) {
        test_layouts();
        dtt_lap("layouts", &t0);
        test_wrap();
        test_infer_refusals();
        dtt_lap("wrap", &t0);
        test_redistribute_rules();
        dtt_lap("redistribute", &t0);
        test_ops();
        dtt_lap("ops", &t0);
        test_rng_rules();
        dtt_lap("rng", &t0);
        test_npy();
        dtt_lap("npy", &t0);
        test_distribute_rules();
        dtt_lap("distribute", &t0);
        dt_comm_destroy(g_comm);
    }
    if (dtt_rank == 0 && getenv("DT_TEST_VERBOSE")) fprintf(stderr, "layouts: %ld redistribution pairs\n", g_pairs);
    MPI_Barrier(MPI_COMM_WORLD);
    if (dtt_rank == 0) CHECK(rmdir(g_dir) == 0, "%s not empty at the end", g_dir);
    return dtt_finish();
}
