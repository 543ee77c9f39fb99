/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_strided_ops.c -- random fills, .npy files and ops on strided local
   storage (dt_tensor_desc.local_strides).

   Each rank wraps its shard (DT_BORROW) in a buffer laid out by strides:
   a padded leading dim, column-major (innermost stride > 1), one field of
   an array of 3-element structs, a 3-D permuted order; every byte that is
   not an element (the padding, and guard zones before and after the
   storage) holds a poison pattern. A twin contiguous tensor holds the same
   values. Checked, on 1-D and 2-D meshes with even, uneven, empty and
   block-cyclic shards:
   - dt_uniform_ / dt_normal_ / dt_randint_ / dt_bernoulli_ / dt_tensor_rand
     into a strided *out / dt_dropout of a strided x: bit-identical to the
     contiguous fill from the same (seed, offset), the same offset after;
   - dt_tensor_save_npy of the strided tensor writes the contiguous twin's
     file byte for byte; dt_tensor_load_npy into a strided *out writes the
     elements;
   - unary, binary (strided with strided, with contiguous, broadcast), cast,
     narrow, reductions (sum, mean, max, argmax), softmax and transpose on
     strided inputs give the contiguous results bit for bit; a strided op
     *out (elementwise in place, a reduction's result) gets the result's
     elements;
   and after every call the padding and guards still hold the poison. */
#define _POSIX_C_SOURCE 200112L /* getpid */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"
#include <unistd.h>

#define GUARD 16
static long ncases = 0;
static const unsigned char POISON = 0xA5;

enum { L_PAD, L_COLMAJOR, L_AOS, L_NLAYOUTS };
static const char *lname[L_NLAYOUTS] = {"padded", "column-major", "struct-field"};

/* one rank's strided storage: the shard's elements at offsets sum(i[d] * st[d]) */
typedef struct sarr {
    dt_tensor_desc d;
    int nd;
    size_t es, span;       /* span: elements the storage covers */
    int64_t ls[DT_MAX_DIMS], st[DT_MAX_DIMS];
    unsigned char *buf;    /* GUARD guard elements, span storage elements, GUARD guards */
    unsigned char *arr;    /* buf + GUARD * es: element 0 */
    unsigned char *is_el;  /* per storage element: 1 where an element lives */
    dt_tensor *t;
} sarr;

static void local_shape(const dtt_mesh *m, const dt_tensor_desc *d, int64_t *ls)
{
    dt_tensor *e = NULL;
    CHECK_OK(dt_tensor_empty(m->mesh, d, &e));
    dt_tensor_local_shape(e, ls);
    dt_tensor_destroy(e);
}

/* the element offsets in row-major order of the local index */
static int64_t elem_off(const sarr *a, int64_t k)
{
    int64_t off = 0;
    int d;
    for (d = a->nd - 1; d >= 0; d--) {
        off += (k % a->ls[d]) * a->st[d];
        k /= a->ls[d];
    }
    return off;
}

static int64_t numel(const sarr *a)
{
    int64_t n = 1;
    int d;
    for (d = 0; d < a->nd; d++) n *= a->ls[d];
    return n;
}

static int sarr_make(sarr *a, const dtt_mesh *m, const dt_tensor_desc *d, int layout)
{
    int64_t e[DT_MAX_DIMS], s = 1, k, n;
    int i;
    memset(a, 0, sizeof *a);
    a->d = *d;
    a->nd = d->ndim;
    a->es = dt_dtype_size(d->dtype);
    local_shape(m, d, a->ls);
    for (i = 0; i < a->nd; i++) e[i] = a->ls[i] > 0 ? a->ls[i] : 1;
    if (layout < 0) { /* contiguous: row-major, no local_strides */
        for (i = a->nd - 1; i >= 0; i--) { a->st[i] = s; s *= e[i]; }
    } else if (layout == L_COLMAJOR) {
        for (i = 0; i < a->nd; i++) { a->st[i] = s; s *= e[i]; }
    } else if (layout == L_AOS) {
        s = 3;
        for (i = a->nd - 1; i >= 0; i--) { a->st[i] = s; s *= e[i]; }
    } else { /* padded: each dim's run 2 longer than it needs */
        for (i = a->nd - 1; i >= 0; i--) { a->st[i] = s; s *= e[i] + (i == a->nd - 1 ? 2 : 1); }
    }
    a->span = 1;
    for (i = 0; i < a->nd; i++) a->span += (size_t)((e[i] - 1) * a->st[i]);
    a->buf = (unsigned char *)dtt_malloc((a->span + 2 * GUARD) * a->es);
    a->arr = a->buf + GUARD * a->es;
    a->is_el = (unsigned char *)dtt_malloc(a->span + 1);
    memset(a->buf, POISON, (a->span + 2 * GUARD) * a->es);
    memset(a->is_el, 0, a->span + 1);
    n = numel(a);
    for (k = 0; k < n; k++) a->is_el[elem_off(a, k)] = 1;
    a->d.local_shape = a->ls;
    a->d.local_strides = layout < 0 ? NULL : a->st;
    a->d.local_alloc = a->buf;
    a->d.local_alloc_bytes = (int64_t)((a->span + 2 * GUARD) * a->es);
    CHECK_OK(dt_tensor_from_local(m->mesh, &a->d, a->arr, DT_BORROW | DT_VERIFY, &a->t));
    a->d.local_shape = NULL;
    a->d.local_strides = NULL;
    a->d.local_alloc = NULL;
    a->d.local_alloc_bytes = 0;
    return a->t != NULL;
}

static void sarr_free(sarr *a)
{
    dt_tensor_destroy(a->t);
    free(a->buf);
    free(a->is_el);
    memset(a, 0, sizeof *a);
}

/* the elements, row-major, into dense (numel * es bytes) */
static void sarr_get(const sarr *a, void *dense)
{
    int64_t k, n = numel(a);
    for (k = 0; k < n; k++) memcpy((char *)dense + (size_t)k * a->es, a->arr + (size_t)elem_off(a, k) * a->es, a->es);
}

static void sarr_set(const sarr *a, const void *dense)
{
    int64_t k, n = numel(a);
    for (k = 0; k < n; k++) memcpy(a->arr + (size_t)elem_off(a, k) * a->es, (const char *)dense + (size_t)k * a->es, a->es);
}

/* padding and guards still poison */
static void sarr_check_pad(const sarr *a, const char *what)
{
    size_t i, j, bad = 0;
    for (i = 0; i < a->span + 2 * GUARD; i++) {
        if (i >= GUARD && i < GUARD + a->span && a->is_el[i - GUARD]) continue;
        for (j = 0; j < a->es; j++)
            if (a->buf[i * a->es + j] != POISON) { bad++; break; }
    }
    CHECK(bad == 0, "%s: %zu padding/guard elements written", what, bad);
    ncases++;
}

/* the strided tensor's elements equal the contiguous tensor c's, bytewise */
static void sarr_check_eq(const sarr *a, const dt_tensor *c, const char *what)
{
    size_t n = (size_t)numel(a) * a->es;
    unsigned char *v = (unsigned char *)dtt_malloc(n + 1);
    sarr_get(a, v);
    CHECK(c && dt_tensor_local_numel(c) == (size_t)numel(a) && (n == 0 || memcmp(v, dt_tensor_data(c), n) == 0),
          "%s: the strided tensor's elements differ from the contiguous one's", what);
    free(v);
    sarr_check_pad(a, what);
}

/* two results equal on every rank's shard, bytewise (both contiguous here) */
static void same_result(const dt_tensor *x, const dt_tensor *y, const char *what)
{
    const dt_tensor_desc *dx, *dy;
    size_t n;
    if (!x || !y) { CHECK(0, "%s: no result", what); return; }
    dx = dt_tensor_get_desc(x);
    dy = dt_tensor_get_desc(y);
    n = dt_tensor_local_numel(x) * dt_dtype_size(dx->dtype);
    CHECK(dx->dtype == dy->dtype && dx->ndim == dy->ndim && dt_tensor_local_numel(y) == dt_tensor_local_numel(x) &&
          (n == 0 || memcmp(dt_tensor_data(x), dt_tensor_data(y), n) == 0), "%s: results differ", what);
    ncases++;
}

static int files_equal(const char *p1, const char *p2)
{
    FILE *f = fopen(p1, "rb"), *g = fopen(p2, "rb");
    int x = 0, same = f && g;
    while (same && (x = getc(f)) != EOF) same = getc(g) == x;
    if (same) same = getc(g) == EOF;
    if (f) fclose(f);
    if (g) fclose(g);
    return same;
}

/* ---------------------------------------------------------------- random fills */

static void rng_cases(const dtt_mesh *m, const dt_tensor_desc *d0, int layout)
{
    static const dt_dtype types[] = {DT_F64, DT_F32, DT_BF16, DT_I32};
    int ti;
    for (ti = 0; ti < (int)(sizeof types / sizeof types[0]); ti++) {
        dt_tensor_desc d = *d0;
        sarr a;
        dt_tensor *c = NULL, *o;
        uint64_t s1, o1, s2, o2;
        int isf = types[ti] != DT_I32, kind;
        d.dtype = types[ti];
        dtt_ctx("rng %s %s mesh %s", dtt_dtname(d.dtype), lname[layout], m->name);
        if (!sarr_make(&a, m, &d, layout)) { sarr_free(&a); continue; }
        CHECK_OK(dt_tensor_empty(m->mesh, &d, &c));
        for (kind = 0; kind < 5 && c; kind++) {
            if (!isf && kind != 2) continue;
            CHECK_OK(dt_rng_set_state(m->mesh, 1234 + (uint64_t)kind, 4 * (uint64_t)kind));
            switch (kind) {
            case 0: CHECK_OK(dt_uniform_(a.t, -2.0, 3.0)); break;
            case 1: CHECK_OK(dt_normal_(a.t, 1.0, 2.0)); break;
            case 2: CHECK_OK(dt_randint_(a.t, -50, 200)); break;
            case 3: CHECK_OK(dt_bernoulli_(a.t, 0.3)); break;
            default: o = a.t; CHECK_OK(dt_tensor_randn(m->mesh, &a.d, &o)); CHECK(o == a.t, "randn replaced *out"); break;
            }
            CHECK_OK(dt_rng_get_state(m->mesh, &s1, &o1));
            CHECK_OK(dt_rng_set_state(m->mesh, 1234 + (uint64_t)kind, 4 * (uint64_t)kind));
            switch (kind) {
            case 0: CHECK_OK(dt_uniform_(c, -2.0, 3.0)); break;
            case 1: CHECK_OK(dt_normal_(c, 1.0, 2.0)); break;
            case 2: CHECK_OK(dt_randint_(c, -50, 200)); break;
            case 3: CHECK_OK(dt_bernoulli_(c, 0.3)); break;
            default: o = c; CHECK_OK(dt_tensor_randn(m->mesh, &d, &o)); break;
            }
            CHECK_OK(dt_rng_get_state(m->mesh, &s2, &o2));
            CHECK(s1 == s2 && o1 == o2, "kind %d: the stream moved differently", kind);
            sarr_check_eq(&a, c, kind == 0 ? "dt_uniform_" : kind == 1 ? "dt_normal_" : kind == 2 ? "dt_randint_" :
                          kind == 3 ? "dt_bernoulli_" : "dt_tensor_randn into a strided *out");
        }
        if (isf && c) { /* dropout reads a strided x */
            dt_tensor *y1 = NULL, *y2 = NULL, *k1 = NULL, *k2 = NULL;
            CHECK_OK(dt_uniform_(c, 0.5, 1.5));
            sarr_set(&a, dt_tensor_data(c));
            CHECK_OK(dt_rng_set_state(m->mesh, 99, 8));
            CHECK_OK(dt_dropout(a.t, 0.25, &y1, &k1));
            CHECK_OK(dt_rng_set_state(m->mesh, 99, 8));
            CHECK_OK(dt_dropout(c, 0.25, &y2, &k2));
            same_result(y1, y2, "dt_dropout of a strided x");
            same_result(k1, k2, "dt_dropout's mask");
            sarr_check_pad(&a, "dt_dropout");
            o = a.t; /* into a strided *out: from contiguous x, then in place (x = *out) */
            CHECK_OK(dt_rng_set_state(m->mesh, 99, 8));
            CHECK_OK(dt_dropout(c, 0.25, &o, NULL));
            CHECK(o == a.t, "dt_dropout replaced *out");
            sarr_check_eq(&a, y2, "dt_dropout into a strided *out");
            sarr_set(&a, dt_tensor_data(c));
            CHECK_OK(dt_rng_set_state(m->mesh, 99, 8));
            CHECK_OK(dt_dropout(a.t, 0.25, &o, NULL));
            sarr_check_eq(&a, y2, "dt_dropout in place on a strided x");
            dt_tensor_destroy(y1); dt_tensor_destroy(y2); dt_tensor_destroy(k1); dt_tensor_destroy(k2);
        }
        dt_tensor_destroy(c);
        sarr_free(&a);
    }
}

/* ---------------------------------------------------------------- .npy */

static void npy_cases(const dtt_mesh *m, const dt_tensor_desc *d0, int layout, const char *dir)
{
    dt_tensor_desc d = *d0;
    sarr a;
    dt_tensor *c = NULL, *o;
    char p1[256], p2[256];
    dtt_ctx("npy %s mesh %s", lname[layout], m->name);
    d.dtype = DT_F32;
    if (!sarr_make(&a, m, &d, layout)) { sarr_free(&a); return; }
    snprintf(p1, sizeof p1, "%s.s.npy", dir);
    snprintf(p2, sizeof p2, "%s.c.npy", dir);
    CHECK_OK(dt_tensor_empty(m->mesh, &d, &c));
    if (c) {
        CHECK_OK(dt_manual_seed(m->mesh, 5));
        CHECK_OK(dt_normal_(c, 0.0, 1.0));
        sarr_set(&a, dt_tensor_data(c));
        CHECK_OK(dt_tensor_save_npy(a.t, p1));
        CHECK_OK(dt_tensor_save_npy(c, p2));
        if (dtt_rank == 0) CHECK(files_equal(p1, p2), "save: %s and %s differ", p1, p2);
        sarr_check_pad(&a, "dt_tensor_save_npy");
        CHECK_OK(dt_uniform_(c, 10.0, 20.0));
        CHECK_OK(dt_tensor_save_npy(c, p2));
        o = a.t;
        CHECK_OK(dt_tensor_load_npy(m->mesh, p2, d.placements, &o));
        CHECK(o == a.t, "load replaced *out");
        sarr_check_eq(&a, c, "dt_tensor_load_npy into a strided *out");
        MPI_Barrier(MPI_COMM_WORLD);
        if (dtt_rank == 0) { remove(p1); remove(p2); }
    }
    dt_tensor_destroy(c);
    sarr_free(&a);
}

/* ---------------------------------------------------------------- ops */

static void op_cases(const dtt_mesh *m, const dt_tensor_desc *d0, int la, int lb)
{
    dt_tensor_desc d = *d0;
    sarr a, b, r;
    dt_tensor *ca = NULL, *cb = NULL, *y1, *y2, *o;
    int nd = d.ndim, dims1[1] = {nd - 1}, dims0[1] = {0};
    dtt_ctx("ops %s / %s %dd mesh %s", lname[la], lname[lb], nd, m->name);
    d.dtype = DT_F64;
    if (!sarr_make(&a, m, &d, la) || !sarr_make(&b, m, &d, lb) || !sarr_make(&r, m, &d, la)) {
        sarr_free(&a); sarr_free(&b); sarr_free(&r);
        return;
    }
    CHECK_OK(dt_tensor_empty(m->mesh, &d, &ca));
    CHECK_OK(dt_tensor_empty(m->mesh, &d, &cb));
    if (!ca || !cb) goto done;
    CHECK_OK(dt_manual_seed(m->mesh, 77));
    CHECK_OK(dt_uniform_(ca, 0.25, 4.0));
    CHECK_OK(dt_normal_(cb, 0.0, 3.0));
    sarr_set(&a, dt_tensor_data(ca));
    sarr_set(&b, dt_tensor_data(cb));
#define PAIR(what, call1, call2) do { \
        y1 = y2 = NULL; CHECK_OK(call1); CHECK_OK(call2); same_result(y1, y2, what); \
        dt_tensor_destroy(y1); dt_tensor_destroy(y2); } while (0)
    PAIR("dt_neg", dt_neg(a.t, &y1), dt_neg(ca, &y2));
    PAIR("dt_exp", dt_exp(a.t, &y1), dt_exp(ca, &y2));
    PAIR("dt_scale", dt_scale(a.t, -1.5, &y1), dt_scale(ca, -1.5, &y2));
    PAIR("dt_cast", dt_cast(a.t, DT_F32, &y1), dt_cast(ca, DT_F32, &y2));
    PAIR("dt_add strided+strided", dt_add(a.t, b.t, &y1), dt_add(ca, cb, &y2));
    PAIR("dt_mul strided*contiguous", dt_mul(a.t, cb, &y1), dt_mul(ca, cb, &y2));
    PAIR("dt_sub contiguous-strided", dt_sub(cb, a.t, &y1), dt_sub(cb, ca, &y2));
    PAIR("dt_div", dt_div(b.t, a.t, &y1), dt_div(cb, ca, &y2));
    PAIR("dt_maximum", dt_maximum(a.t, b.t, &y1), dt_maximum(ca, cb, &y2));
    PAIR("dt_sum all", dt_sum(a.t, 0, NULL, 0, &y1), dt_sum(ca, 0, NULL, 0, &y2));
    PAIR("dt_sum last dim", dt_sum(b.t, 1, dims1, 0, &y1), dt_sum(cb, 1, dims1, 0, &y2));
    PAIR("dt_mean dim 0", dt_mean(a.t, 1, dims0, 1, &y1), dt_mean(ca, 1, dims0, 1, &y2));
    PAIR("dt_max", dt_max(b.t, 1, dims1, 0, &y1), dt_max(cb, 1, dims1, 0, &y2));
    PAIR("dt_min all", dt_min(b.t, 0, NULL, 0, &y1), dt_min(cb, 0, NULL, 0, &y2));
    PAIR("dt_argmax", dt_argmax(b.t, 1, dims1, 0, &y1), dt_argmax(cb, 1, dims1, 0, &y2));
    PAIR("dt_softmax", dt_softmax(a.t, nd - 1, &y1), dt_softmax(ca, nd - 1, &y2));
    if (nd >= 2) PAIR("dt_transpose", dt_transpose(a.t, 0, 1, &y1), dt_transpose(ca, 0, 1, &y2));
    if (d.shape[nd - 1] >= 3)
        PAIR("dt_narrow", dt_narrow(b.t, nd - 1, 1, d.shape[nd - 1] - 2, &y1), dt_narrow(cb, nd - 1, 1, d.shape[nd - 1] - 2, &y2));
    { /* broadcast: a row vector (replicated) against the strided tensor */
        dt_tensor_desc vd;
        dt_tensor *v = NULL;
        memset(&vd, 0, sizeof vd);
        vd.dtype = DT_F64;
        vd.ndim = 1;
        vd.shape[0] = d.shape[nd - 1];
        CHECK_OK(dt_tensor_empty(m->mesh, &vd, &v));
        if (v) {
            CHECK_OK(dt_uniform_(v, 1.0, 2.0));
            PAIR("dt_add broadcast", dt_add(a.t, v, &y1), dt_add(ca, v, &y2));
        }
        dt_tensor_destroy(v);
    }
#undef PAIR
    sarr_check_pad(&a, "ops on a");
    sarr_check_pad(&b, "ops on b");
    /* strided *out: a new value, then elementwise in place (out == a strided input) */
    y2 = NULL;
    o = r.t;
    CHECK_OK(dt_add(a.t, cb, &o));
    CHECK(o == r.t, "dt_add replaced a strided *out");
    CHECK_OK(dt_add(ca, cb, &y2));
    sarr_check_eq(&r, y2, "dt_add into a strided *out");
    dt_tensor_destroy(y2);
    y2 = NULL;
    o = a.t;
    CHECK_OK(dt_mul(a.t, b.t, &o));
    CHECK_OK(dt_mul(ca, cb, &y2));
    sarr_check_eq(&a, y2, "dt_mul in place into a strided input");
    dt_tensor_destroy(y2);
    y2 = NULL;
    o = b.t;
    CHECK_OK(dt_axpy(2.0, ca, b.t));
    CHECK_OK(dt_axpy(2.0, ca, cb));
    sarr_check_eq(&b, cb, "dt_axpy into a strided y");
    /* a reduction over nothing keeps the shape: into a strided *out */
    y2 = NULL;
    o = r.t;
    CHECK_OK(dt_exp(b.t, &o));
    CHECK_OK(dt_exp(cb, &y2));
    sarr_check_eq(&r, y2, "dt_exp into a strided *out");
    dt_tensor_destroy(y2);
done:
    dt_tensor_destroy(ca);
    dt_tensor_destroy(cb);
    sarr_free(&a);
    sarr_free(&b);
    sarr_free(&r);
}

/* ---------------------------------------------------------------- checks on */

/* consistency checks compare specs, never storage: mesh rank 0 strided,
   the others contiguous (and the reverse), every call agrees */
static void mixed_cases(const dtt_mesh *m, const dt_tensor_desc *d0, const char *dir)
{
    dt_tensor_desc d = *d0;
    int was = dt_get_checks(), flip;
    char p1[256], p2[256];
    snprintf(p1, sizeof p1, "%s.m1.npy", dir);
    snprintf(p2, sizeof p2, "%s.m2.npy", dir);
    dt_set_checks(1);
    for (flip = 0; flip < 2; flip++) {
        sarr a;
        dt_tensor *c = NULL, *y1 = NULL, *y2 = NULL, *o;
        int strided = (dtt_rank == 0) != flip;
        dtt_ctx("checks on, %s strided, mesh %s", flip ? "ranks > 0" : "rank 0", m->name);
        if (!sarr_make(&a, m, &d, strided ? L_COLMAJOR : -1)) { sarr_free(&a); continue; }
        CHECK_OK(dt_tensor_empty(m->mesh, &d, &c));
        if (c) {
            CHECK_OK(dt_rng_set_state(m->mesh, 3, 0));
            CHECK_OK(dt_uniform_(a.t, 0.0, 1.0));
            CHECK_OK(dt_rng_set_state(m->mesh, 3, 0));
            CHECK_OK(dt_uniform_(c, 0.0, 1.0));
            sarr_check_eq(&a, c, "dt_uniform_, checks on");
            CHECK_OK(dt_add(a.t, c, &y1));
            CHECK_OK(dt_add(c, c, &y2));
            same_result(y1, y2, "dt_add, checks on");
            dt_tensor_destroy(y1); dt_tensor_destroy(y2);
            y1 = y2 = NULL;
            CHECK_OK(dt_sum(a.t, 0, NULL, 0, &y1));
            CHECK_OK(dt_sum(c, 0, NULL, 0, &y2));
            same_result(y1, y2, "dt_sum, checks on");
            dt_tensor_destroy(y1); dt_tensor_destroy(y2);
            o = a.t;
            CHECK_OK(dt_neg(c, &o));
            CHECK_OK(dt_neg(c, &c));
            sarr_check_eq(&a, c, "dt_neg into *out, checks on");
            CHECK_OK(dt_tensor_save_npy(a.t, p1));
            CHECK_OK(dt_tensor_save_npy(c, p2));
            if (dtt_rank == 0) CHECK(files_equal(p1, p2), "save, checks on: %s and %s differ", p1, p2);
            o = a.t;
            CHECK_OK(dt_scale(c, 2.0, &c));
            CHECK_OK(dt_tensor_save_npy(c, p2));
            CHECK_OK(dt_tensor_load_npy(m->mesh, p2, d.placements, &o));
            sarr_check_eq(&a, c, "load, checks on");
            MPI_Barrier(MPI_COMM_WORLD);
            if (dtt_rank == 0) { remove(p1); remove(p2); }
        }
        dt_tensor_destroy(c);
        sarr_free(&a);
    }
    dt_set_checks(was);
}

/* ---------------------------------------------------------------- sweep */

static dt_tensor_desc mk(int nd, const int64_t *shape, const dtt_mesh *m, const dt_placement *pl)
{
    return dtt_desc(DT_F64, nd, shape, m->nd, pl);
}

static void cases(const dtt_mesh *m, const dt_placement *pl, int nd, const int64_t *shape, const char *dir, int cyclic)
{
    dt_tensor_desc d = mk(nd, shape, m, pl);
    int l;
    for (l = 0; l < L_NLAYOUTS; l++) {
        rng_cases(m, &d, l);
        npy_cases(m, &d, l, dir);
        if (!cyclic) op_cases(m, &d, l, (l + 1) % L_NLAYOUTS);
    }
}

static void sweep(dt_comm *comm, const char *dir)
{
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, one[1];
    dt_placement pl[DT_MAX_MESH_DIMS];
    int64_t s2[2] = {11, 6}, s3[3] = {5, 4, 7}, s1[2] = {3, 5}, s4[2] = {4, 75};
    dtt_mesh m;
    one[0] = dtt_np;
    memset(pl, 0, sizeof pl);
    if (dtt_mesh_open(&m, comm, 1, one)) {
        pl[0] = dt_shard(0);
        cases(&m, pl, 2, s2, dir, 0);
        pl[0] = dt_shard_balanced(1);
        cases(&m, pl, 3, s3, dir, 0);
        pl[0] = dt_shard(0); /* 3 rows over up to 8 ranks: empty shards */
        cases(&m, pl, 2, s1, dir, 0);
        pl[0] = dt_replicate();
        cases(&m, pl, 2, s2, dir, 0);
        pl[0] = dt_shard_cyclic(0, 2);
        cases(&m, pl, 2, s2, dir, 1);
        pl[0] = dt_shard(0); /* rows longer than the fills' stack buffer (32 elements) */
        cases(&m, pl, 2, s4, dir, 0);
        pl[0] = dt_shard_cyclic(1, 5);
        cases(&m, pl, 2, s4, dir, 1);
        pl[0] = dt_shard(0);
        {
            dt_tensor_desc d = mk(2, s2, &m, pl);
            mixed_cases(&m, &d, dir);
        }
        dtt_mesh_close(&m);
    }
    nf = dtt_factorizations(dtt_np, 2, fac, 64);
    for (f = 0; f < nf; f++) {
        if (dtt_quick && f != nf / 2) continue;
        if (!dtt_mesh_open(&m, comm, 2, &fac[f * DT_MAX_MESH_DIMS])) continue;
        pl[0] = dt_shard(0); pl[1] = dt_shard(1);
        cases(&m, pl, 2, s2, dir, 0);
        pl[0] = dt_shard(2); pl[1] = dt_replicate();
        cases(&m, pl, 3, s3, dir, 0);
        dtt_mesh_close(&m);
    }
}

int main(int argc, char **argv)
{
    dt_comm *comm = NULL;
    char dir[128];
    int pid;
    dtt_init(&argc, &argv, "strided_ops");
    pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(dir, sizeof dir, "/tmp/dt_test_strided_ops.%d", pid);
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    if (comm) {
        sweep(comm, dir);
        dt_comm_destroy(comm);
    }
    if (dtt_rank == 0 && getenv("DT_TEST_VERBOSE")) fprintf(stderr, "test_strided_ops: %ld cases\n", ncases);
    return dtt_finish();
}
