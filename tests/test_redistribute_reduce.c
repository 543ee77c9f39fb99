/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_redistribute_reduce.c -- dt_tensor_redistribute_reduce: out = out
   (op) redistribute(t, placements), the combine fused with the unpack.

   Values are closed forms of the global flat index g: the source holds
   f(g), out holds o(g) before the call; after it every local element of
   out holds o(g) + f(g) (DT_SUM), max or min. Small integers (|v| <= 60),
   exact in every dtype (BF16 included); complex: re = v, im = 2v + 1.
   The local layout of out is read back with dt_tensor_local_indices, so
   every rule (chunk, balanced, block-cyclic, nested) is checked the same way.

   Checked on the 1-D mesh of all ranks and on a 2-D mesh (2 x np/2 at even
   np): S->R, S(i)->S(j), R->S, R->R and S->S (no step), P(sum)->R,
   P(sum)->S, P(max)->R, balanced -> chunk, block-cyclic -> Shard and back,
   2-D and 3-D tensors with odd extents (uneven and empty shards at 4+
   ranks); every dtype with DT_SUM, the real ones with DT_MAX / DT_MIN;
   out contiguous, column-major with a padded leading dim (local_strides)
   and ghosted (local_ghost, the ghost ring and padding still the sentinel
   afterwards); t == out (out = out op out).

   Bad input, the same verdict on every rank, out unchanged byte for byte,
   dt_last_error naming the call: NULL t / placements / out, op DT_AVG and
   out of range, out with another shape, dtype or placements, a Partial
   destination, complex with DT_MAX, a different op on one rank only. */
#define _POSIX_C_SOURCE 200112L /* setenv */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "tests/dt_test.h"

static int64_t fval(dt_dtype t, int64_t g) { return (g * 7 + 3) % 61 - (t == DT_U8 ? 0 : 30); }
static int64_t oval(dt_dtype t, int64_t g) { return (g * 5 + 1) % 37 - (t == DT_U8 ? 0 : 18); }
static int is_cx(dt_dtype t) { return t == DT_C64 || t == DT_C128; }

static void put(dt_dtype t, void *buf, size_t i, int64_t v) {
    if (t == DT_C64) { float p[2]; p[0] = (float)v; p[1] = (float)(2 * v + 1); memcpy((char *)buf + 8 * i, p, 8); }
    else if (t == DT_C128) { double p[2]; p[0] = (double)v; p[1] = (double)(2 * v + 1); memcpy((char *)buf + 16 * i, p, 16); }
    else dtt_store_d(t, buf, i, (double)v);
}
/* re and im (im = 0 for real dtypes) */
static void get(dt_dtype t, const void *buf, size_t i, double *re, double *im) {
    *im = 0;
    if (t == DT_C64) { float p[2]; memcpy(p, (const char *)buf + 8 * i, 8); *re = p[0]; *im = p[1]; }
    else if (t == DT_C128) { double p[2]; memcpy(p, (const char *)buf + 16 * i, 16); *re = p[0]; *im = p[1]; }
    else *re = dtt_load_d(t, buf, i);
}
static int64_t comb(dt_reduce op, int64_t a, int64_t b) {
    return op == DT_SUM ? a + b : op == DT_MAX ? (a > b ? a : b) : (a < b ? a : b);
}

enum { ST_CONTIG, ST_COLMAJOR, ST_GHOST };

typedef struct store {
    char *buf;           /* the allocation */
    size_t bytes;
    int64_t ls[DT_MAX_DIMS], st[DT_MAX_DIMS], ghost[DT_MAX_DIMS];
    size_t first;        /* element offset of local element 0 in buf */
    int64_t *gi[DT_MAX_DIMS];
} store;

/* the global flat index of local element idx, and its element offset in the store */
static void locate(int ndim, const int64_t *shape, const store *s, const int64_t *idx, int64_t *g, size_t *off) {
    int d;
    *g = 0; *off = s->first;
    for (d = 0; d < ndim; d++) {
        *g = *g * shape[d] + s->gi[d][idx[d]];
        *off += (size_t)(idx[d] * s->st[d]);
    }
}

static int next_idx(int ndim, const int64_t *ls, int64_t *idx) {
    int d;
    for (d = ndim - 1; d >= 0; d--) {
        if (++idx[d] < ls[d]) return 1;
        idx[d] = 0;
    }
    return 0;
}

static int64_t numel_of(int ndim, const int64_t *s) {
    int64_t n = 1;
    int d;
    for (d = 0; d < ndim; d++) n *= s[d];
    return n;
}

/* out with placements dst in the given storage, holding o(g) */
static dt_tensor *make_store(dt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, const dt_placement *dst,
                             int storage, store *s, int src_values) {
    dt_tensor_desc d = dtt_desc(t, ndim, shape, dt_mesh_ndim(m), dst);
    dt_tensor *probe = NULL, *out = NULL;
    size_t es = dt_dtype_size(t), n = 1;
    int64_t idx[DT_MAX_DIMS] = {0}, g;
    size_t off;
    int dd;
    memset(s, 0, sizeof *s);
    CHECK_OK(dt_tensor_empty(m, &d, &probe));
    if (!probe) return NULL;
    dt_tensor_local_shape(probe, s->ls);
    for (dd = 0; dd < ndim; dd++) {
        s->gi[dd] = (int64_t *)dtt_malloc((size_t)(s->ls[dd] + 1) * sizeof(int64_t));
        CHECK_OK(dt_tensor_local_indices(probe, dd, s->gi[dd]));
    }
    dt_tensor_destroy(probe);
    if (storage == ST_COLMAJOR) { /* column-major, the leading dim padded by 1 */
        int64_t acc = 1;
        for (dd = 0; dd < ndim; dd++) { s->st[dd] = acc; acc *= s->ls[dd] + (dd == 0); }
        n = (size_t)acc;
    } else { /* row-major over ls + 2 * ghost */
        int64_t acc = 1;
        for (dd = ndim - 1; dd >= 0; dd--) {
            s->ghost[dd] = storage == ST_GHOST;
            s->st[dd] = acc;
            acc *= s->ls[dd] + 2 * s->ghost[dd];
        }
        n = (size_t)acc;
        for (dd = 0; dd < ndim; dd++) s->first += (size_t)(s->ghost[dd] * s->st[dd]);
    }
    s->bytes = n * es;
    s->buf = (char *)dtt_malloc(s->bytes + 1);
    memset(s->buf, 0xA5, s->bytes + 1);
    if (numel_of(ndim, s->ls) > 0)
        do {
            locate(ndim, shape, s, idx, &g, &off);
            put(t, s->buf, off, src_values ? fval(t, g) : oval(t, g));
        } while (next_idx(ndim, s->ls, idx));
    if (storage == ST_CONTIG) {
        d.local_shape = s->ls;
        CHECK_OK(dt_tensor_from_local(m, &d, s->buf, DT_BORROW, &out));
    } else {
        d.local_shape = s->ls;
        if (storage == ST_COLMAJOR) d.local_strides = s->st;
        else d.local_ghost = s->ghost;
        d.local_alloc = s->buf;
        d.local_alloc_bytes = (int64_t)s->bytes + 1;
        CHECK_OK(dt_tensor_from_local(m, &d, s->buf, DT_BORROW, &out));
    }
    return out;
}

static dt_tensor *make_out(dt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, const dt_placement *dst,
                           int storage, store *s) {
    return make_store(m, t, ndim, shape, dst, storage, s, 0);
}

static void store_free(store *s) {
    int d;
    for (d = 0; d < DT_MAX_DIMS; d++) free(s->gi[d]);
    free(s->buf);
}

/* every local element of out = op(o(g), f(g)); every other byte the sentinel */
static void check_out(dt_dtype t, int ndim, const int64_t *shape, const store *s, dt_reduce op, int self,
                      const char *what) {
    size_t es = dt_dtype_size(t), nel = s->bytes / es, e, bad = 0;
    int64_t idx[DT_MAX_DIMS] = {0}, g;
    size_t off;
    char *mark = (char *)calloc(nel + 1, 1);
    if (numel_of(ndim, s->ls) > 0)
        do {
            double re, im;
            int64_t a, b, w;
            locate(ndim, shape, s, idx, &g, &off);
            mark[off] = 1;
            get(t, s->buf, off, &re, &im);
            a = oval(t, g);
            b = self == 1 ? a : fval(t, g);
            w = self == 2 ? b : comb(op, a, b);
            if (re != (double)w ||
                (is_cx(t) && im != (double)(self == 2 ? 2 * b + 1 : (2 * a + 1) + (2 * b + 1)))) {
                if (bad++ < 3)
                    CHECK(0, "%s: %s at g=%lld: got (%g, %g), want %lld", what, dtt_dtname(t), (long long)g, re, im,
                          (long long)w);
            }
        } while (next_idx(ndim, s->ls, idx));
    for (e = 0; e < nel; e++) { /* padding and ghost cells: untouched */
        size_t k;
        if (mark[e]) continue;
        for (k = 0; k < es; k++)
            if ((unsigned char)s->buf[e * es + k] != 0xA5) { bad++; break; }
    }
    CHECK(bad == 0, "%s: %s: %zu bad elements or padding bytes", what, dtt_dtname(t), bad);
    free(mark);
}

static void run(dt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, const dt_placement *src,
                const dt_placement *dst, dt_reduce op, int storage) {
    int mnd = dt_mesh_ndim(m);
    int64_t n = numel_of(ndim, shape), g;
    size_t es = dt_dtype_size(t);
    char *full = (char *)dtt_malloc((size_t)n * es + 1);
    dt_tensor_desc d = dtt_desc(t, ndim, shape, mnd, src);
    dt_tensor *a = NULL, *out;
    store s;
    char ps[96], pd[96], sh[64];
    char what[320];
    snprintf(what, sizeof what, "%s %s -> %s op %d storage %d", dtt_shape_str(ndim, shape, sh, sizeof sh),
             dtt_pl_str(src, mnd, ps, sizeof ps), dtt_pl_str(dst, mnd, pd, sizeof pd), (int)op, storage);
    for (g = 0; g < n; g++) put(t, full, (size_t)g, fval(t, g));
    CHECK_OK(dt_tensor_distribute(m, &d, full, DT_SRC_ALL, &a));
    out = make_out(m, t, ndim, shape, dst, storage, &s);
    if (a && out) {
        dt_status st = dt_tensor_redistribute_reduce(a, dst, op, out);
        CHECK(st == DT_OK, "%s: %s: %s", what, dt_status_string(st), dt_last_error());
        if (st == DT_OK) check_out(t, ndim, shape, &s, op, 0, what);
    }
    dt_tensor_destroy(a);
    dt_tensor_destroy(out);
    store_free(&s);
    free(full);
}

/* t == out: out = out op out */
static void run_self(dt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, const dt_placement *pl, dt_reduce op,
                     int storage) {
    store s;
    dt_tensor *out = make_out(m, t, ndim, shape, pl, storage, &s);
    if (out) {
        CHECK_OK(dt_tensor_redistribute_reduce(out, pl, op, out));
        check_out(t, ndim, shape, &s, op, 1, "self");
    }
    dt_tensor_destroy(out);
    store_free(&s);
}

/* the plain copy (deliverable 1): a strided source holding f(g) (column-major
   with a padded leading dim, or ghosted) redistributed into a new row-major
   tensor, and into an existing column-major one; extents past the copy's
   tiles (16, 32, 64 elements) and not multiples of them */
static void run_copy(dt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, const dt_placement *src,
                     const dt_placement *dst) {
    store s, so;
    dt_tensor *a = make_store(m, t, ndim, shape, src, ST_COLMAJOR, &s, 1), *b = NULL, *o;
    int64_t ls[DT_MAX_DIMS], off[DT_MAX_DIMS], idx[DT_MAX_DIMS] = {0}, n, g, bad = 0;
    size_t es = dt_dtype_size(t), e;
    int d;
    char *data;
    if (!a) { store_free(&s); return; }
    CHECK_OK(dt_tensor_redistribute(a, dst, &b));
    if (b) {
        int64_t *gi[DT_MAX_DIMS];
        dt_tensor_local_shape(b, ls);
        (void)off;
        for (d = 0; d < ndim; d++) {
            gi[d] = (int64_t *)dtt_malloc((size_t)(ls[d] + 1) * sizeof(int64_t));
            CHECK_OK(dt_tensor_local_indices(b, d, gi[d]));
        }
        data = (char *)dt_tensor_data(b);
        n = numel_of(ndim, ls);
        for (e = 0; n > 0; e++) {
            double re, im;
            g = 0;
            for (d = 0; d < ndim; d++) g = g * shape[d] + gi[d][idx[d]];
            get(t, data, e, &re, &im);
            if (re != (double)fval(t, g) || (is_cx(t) && im != (double)(2 * fval(t, g) + 1))) bad++;
            if (!next_idx(ndim, ls, idx)) break;
        }
        for (d = 0; d < ndim; d++) free(gi[d]);
        CHECK(bad == 0, "copy %s ndim %d: %lld wrong", dtt_dtname(t), ndim, (long long)bad);
    }
    /* into an existing column-major out: every element f(g), padding untouched */
    o = make_store(m, t, ndim, shape, dst, ST_COLMAJOR, &so, 0);
    if (o) {
        CHECK_OK(dt_tensor_redistribute(a, dst, &o));
        check_out(t, ndim, shape, &so, DT_SUM, 2, "copy into column-major");
    }
    (void)es;
    dt_tensor_destroy(o);
    dt_tensor_destroy(a);
    dt_tensor_destroy(b);
    store_free(&s);
    store_free(&so);
}

static void sweep_1d(dt_mesh *m) {
    static const dt_dtype all[] = { DT_F64, DT_F32, DT_F16, DT_BF16, DT_I32, DT_I64, DT_U8, DT_C64, DT_C128 };
    int64_t s2[2] = { 13, 7 }, s3[3] = { 5, 4, 6 }, s2b[2] = { 9, 11 };
    dt_placement R[1], S0[1], S1[1], S2[1], B0[1], C0[1], C1[1], PS[1], PM[1];
    int i, k, st;
    R[0] = dt_replicate(); S0[0] = dt_shard(0); S1[0] = dt_shard(1); S2[0] = dt_shard(2);
    B0[0] = dt_shard_balanced(0); C0[0] = dt_shard_cyclic(0, 2); C1[0] = dt_shard_cyclic(1, 3);
    PS[0] = dt_partial(DT_SUM); PM[0] = dt_partial(DT_MAX);
    for (i = 0; i < NELEM(all); i++) {
        dt_dtype t = all[i];
        int nops = is_cx(t) ? 1 : 3;
        for (k = 0; k < nops; k++) {
            dt_reduce op = k == 0 ? DT_SUM : k == 1 ? DT_MAX : DT_MIN;
            for (st = ST_CONTIG; st <= ST_GHOST; st++) {
                if (dtt_quick && st != ST_CONTIG && t != DT_F64 && t != DT_C128 && t != DT_U8) continue;
                run(m, t, 2, s2, S0, R, op, st);
                run(m, t, 2, s2, S1, S0, op, st);
                run(m, t, 2, s2, S0, S1, op, st);
                run(m, t, 2, s2, R, S1, op, st);
                run(m, t, 2, s2, R, R, op, st);
                run(m, t, 2, s2b, S1, S1, op, st);
                run(m, t, 2, s2, PS, R, op, st);
                run(m, t, 2, s2, PS, S0, op, st);
                run(m, t, 2, s2, B0, S0, op, st);
                run(m, t, 2, s2b, C0, S1, op, st);
                run(m, t, 3, s3, S2, S0, op, st);
                run(m, t, 3, s3, S0, S2, op, st);
                if (!is_cx(t)) run(m, t, 2, s2, PM, R, op, st);
                run_self(m, t, 2, s2, S1, op, st);
            }
            run(m, t, 2, s2b, S0, C1, op, ST_CONTIG); /* block-cyclic targets: contiguous storage */
            run(m, t, 2, s2b, C0, C1, op, ST_CONTIG);
        }
        { /* past the copy's tiles: 2-D and 3-D, odd extents */
            int64_t big2[2] = { 67, 75 }, big3[3] = { 9, 35, 70 };
            run_copy(m, t, 2, big2, S1, S0);
            run_copy(m, t, 2, big2, R, R);
            run_copy(m, t, 3, big3, S2, S0);
            run(m, t, 2, big2, S1, S0, DT_SUM, ST_COLMAJOR);
            run(m, t, 2, big2, S1, S0, DT_SUM, ST_CONTIG);
            run(m, t, 3, big3, S0, S2, DT_SUM, ST_COLMAJOR);
        }
    }
}

static void sweep_2d(dt_mesh *m) {
    int64_t s2[2] = { 11, 9 }, s3[3] = { 6, 5, 7 };
    dt_placement a[2], b[2];
    int st;
    for (st = ST_CONTIG; st <= ST_GHOST; st++) {
        dt_dtype t = st == ST_CONTIG ? DT_F64 : DT_I32;
        a[0] = dt_shard(0); a[1] = dt_shard(1); b[0] = dt_replicate(); b[1] = dt_replicate();
        run(m, t, 2, s2, a, b, DT_SUM, st);
        a[0] = dt_shard(0); a[1] = dt_replicate(); b[0] = dt_shard(1); b[1] = dt_shard(0);
        run(m, t, 2, s2, a, b, DT_SUM, st);
        a[0] = dt_replicate(); a[1] = dt_shard(0); b[0] = dt_shard(1); b[1] = dt_replicate();
        run(m, t, 2, s2, a, b, DT_MAX, st);
        a[0] = dt_partial(DT_SUM); a[1] = dt_shard(0); b[0] = dt_replicate(); b[1] = dt_shard(1);
        run(m, t, 2, s2, a, b, DT_SUM, st);
        a[0] = dt_shard(2); a[1] = dt_shard(0); b[0] = dt_shard(0); b[1] = dt_shard(1);
        run(m, t, 3, s3, a, b, DT_MIN, st);
    }
}

/* the call must fail with `want` on every rank, out byte for byte as before */
static void expect_fail(const dt_tensor *a, const dt_placement *pl, dt_reduce op, dt_tensor *out, const store *s,
                        dt_status want, const char *what) {
    char *before = NULL;
    dt_status st;
    int mine, any;
    if (s) { before = (char *)dtt_malloc(s->bytes + 1); memcpy(before, s->buf, s->bytes + 1); }
    st = dt_tensor_redistribute_reduce(a, pl, op, out);
    CHECK(st == want, "%s: got %s, want %s: %s", what, dt_status_string(st), dt_status_string(want), dt_last_error());
    if (st) CHECK_ERRMSG("dt_tensor_redistribute_reduce");
    if (s) CHECK(memcmp(before, s->buf, s->bytes + 1) == 0, "%s: out changed", what);
    mine = (int)st;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(any == mine, "%s: ranks disagree (%d here, %d somewhere)", what, mine, any);
    free(before);
}

static void bad_input(dt_mesh *m) {
    int64_t s2[2] = { 9, 7 }, s2x[2] = { 9, 8 };
    dt_placement S0[1], S1[1], PS[1];
    dt_tensor *a = NULL, *ac = NULL, *o2 = NULL;
    dt_tensor_desc d;
    store s, sx, sc;
    dt_tensor *out, *outx, *outc;
    S0[0] = dt_shard(0); S1[0] = dt_shard(1); PS[0] = dt_partial(DT_SUM);
    d = dtt_desc(DT_F64, 2, s2, 1, S0);
    CHECK_OK(dt_tensor_zeros(m, &d, &a));
    d = dtt_desc(DT_C128, 2, s2, 1, S0);
    CHECK_OK(dt_tensor_zeros(m, &d, &ac));
    out = make_out(m, DT_F64, 2, s2, S1, ST_COLMAJOR, &s);
    outx = make_out(m, DT_F64, 2, s2x, S1, ST_CONTIG, &sx);
    outc = make_out(m, DT_C128, 2, s2, S1, ST_CONTIG, &sc);
    expect_fail(NULL, S1, DT_SUM, out, &s, DT_ERR_ARG, "t NULL");
    expect_fail(a, NULL, DT_SUM, out, &s, DT_ERR_ARG, "placements NULL");
    expect_fail(a, S1, DT_SUM, NULL, NULL, DT_ERR_ARG, "out NULL");
    expect_fail(a, S1, DT_AVG, out, &s, DT_ERR_ARG, "DT_AVG");
    expect_fail(a, S1, (dt_reduce)7, out, &s, DT_ERR_ARG, "op 7");
    expect_fail(a, S0, DT_SUM, out, &s, DT_ERR_PLACEMENT, "out has other placements");
    expect_fail(a, S1, DT_SUM, outx, &sx, DT_ERR_SHAPE, "out has another shape");
    expect_fail(a, S1, DT_SUM, outc, &sc, DT_ERR_DTYPE, "out has another dtype");
    expect_fail(ac, S1, DT_MAX, outc, &sc, DT_ERR_DTYPE, "complex DT_MAX");
    d = dtt_desc(DT_F64, 2, s2, 1, PS);
    CHECK_OK(dt_tensor_zeros(m, &d, &o2));
    expect_fail(a, PS, DT_SUM, o2, NULL, DT_ERR_PLACEMENT, "Partial destination");
    if (dtt_np > 1 && dt_get_checks()) { /* one rank's op differs: every rank fails */
        dt_status st = dt_tensor_redistribute_reduce(a, S1, dtt_rank == 1 ? DT_MAX : DT_SUM, out);
        int mine = (int)st, any;
        CHECK(st != DT_OK, "a different op on rank 1 passed");
        MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        CHECK(any != DT_OK, "a different op on rank 1 passed somewhere");
    }
    /* out still usable, unchanged: a correct call now */
    CHECK_OK(dt_tensor_redistribute_reduce(a, S1, DT_SUM, out)); /* a is zeros: out unchanged */
    {
        int64_t idx[DT_MAX_DIMS] = {0}, g;
        size_t off;
        int bad = 0;
        if (numel_of(2, s.ls) > 0)
            do {
                double re, im;
                locate(2, s2, &s, idx, &g, &off);
                get(DT_F64, s.buf, off, &re, &im);
                if (re != (double)oval(DT_F64, g)) bad++;
            } while (next_idx(2, s.ls, idx));
        CHECK(bad == 0, "out + zeros: %d bad", bad);
    }
    dt_tensor_destroy(a); dt_tensor_destroy(ac); dt_tensor_destroy(o2);
    dt_tensor_destroy(out); dt_tensor_destroy(outx); dt_tensor_destroy(outc);
    store_free(&s); store_free(&sx); store_free(&sc);
}

int main(int argc, char **argv) {
    dt_comm *comm = NULL;
    dt_mesh *m1 = NULL;
    dt_mesh_desc md;
    dtt_init(&argc, &argv, "redistribute_reduce");
    DTT_EXCHANGE_PATHS(); /* every exchange path through the sweep (dt_test.h) */
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    CHECK_OK(dt_mesh_create(comm, &md, &m1));
    if (m1) {
        sweep_1d(m1);
        bad_input(m1);
    }
    if (dtt_np % 2 == 0) {
        dt_mesh *m2 = NULL;
        md.ndim = 2;
        md.shape[0] = 2;
        md.shape[1] = dtt_np / 2;
        CHECK_OK(dt_mesh_create(comm, &md, &m2));
        if (m2) sweep_2d(m2);
        dt_mesh_destroy(m2);
    }
    dt_mesh_destroy(m1);
    dt_comm_destroy(comm);
    return dtt_finish();
}
