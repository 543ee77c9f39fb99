/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_ops_intavg.c -- integer Partial(AVG) through the ops.

   An integer Partial(AVG) tensor's value is the exact mean of its parts
   truncated toward zero (dt_reduce). Truncation commutes with almost no
   op: trunc(mean(3x)) != 3 trunc(mean(x)), so an op may not carry the
   Partial through and truncate at the end; it must reduce first (only data
   movement and negation may pass it). The parts here make the mean a
   fraction: 1 and 0 (the case: value 0 on two ranks), -1 and 0
   (trunc, not floor), and mixed small values. Every result is gathered and
   compared with the closed form computed here from the truncated mean
   (int64, serially): I64 and I32, and F64 (the plain mean) as control.

   Ops: scale (a > 0, a < 0), shift, add (P + P, P + R), sub (P - R,
   R - P), mul (both sides), sum (of x, of a stack of two), neg and copy
   (which may keep the Partial), matmul (either operand Partial(AVG)),
   addmm (c or a), axpy (x Partial: fine; y Partial(AVG) over more than
   one rank: refused with DT_ERR_PLACEMENT naming dt_axpy, y untouched).
   Meshes: 1-D over all ranks; with an even rank count also [np/2, 2] with
   the average on either mesh dim and Shard / Replicate on the other. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

static dt_comm *g_comm = NULL;
static long g_cases = 0;

#define MAXN 64

/* part p of n of global element g */
static int64_t part(int salt, int64_t g, int p, int n)
{
    (void)n;
    if (salt == 0) return p == 0 ? 1 : 0;
    if (salt == 1) return p == 0 ? -1 : 0;
    return (int64_t)((p * 7 + g * 3 + salt * 5) % 11) - 5;
}

/* the value of element g: the mean of the parts (truncated toward zero for integers) */
static double value(dt_dtype t, int salt, int64_t g, int n)
{
    int64_t s = 0;
    int p;
    for (p = 0; p < n; p++) s += part(salt, g, p, n);
    return dtt_is_float(t) ? (double)s / n : (double)(s / n); /* C division truncates toward zero */
}

/* replicated operand values */
static double rval(int64_t g, int salt) { return (double)((g * 5 + salt * 3) % 7) - 3.0; }

typedef struct spec {
    const dtt_mesh *m;
    dt_placement pl[DT_MAX_MESH_DIMS]; /* x's placements: one Partial(AVG) mesh dim */
    int avg;                           /* that mesh dim */
} spec;

/* a tensor of shape `shape` with placements sp->pl whose parts are part(salt, ...); ref[] its value */
static dt_tensor *make_avg(const spec *sp, dt_dtype t, int ndim, const int64_t *shape, int salt, double *ref)
{
    const dtt_mesh *m = sp->m;
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], n = dtt_numel(ndim, shape), ln, i;
    int k, np = m->shape[sp->avg], p = m->coord[sp->avg];
    dt_tensor_desc d;
    dt_tensor *x = NULL;
    void *buf;
    dtt_ref_layout(m->nd, m->shape, m->coord, ndim, shape, sp->pl, ls, lo);
    ln = dtt_numel(ndim, ls);
    buf = dtt_malloc((size_t)ln * dtt_size(t));
    for (i = 0; i < ln; i++) dtt_store_d(t, buf, (size_t)i, (double)part(salt, dtt_gidx(ndim, shape, ls, lo, i), p, np));
    for (i = 0; i < n; i++) ref[i] = value(t, salt, i, np);
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = ndim;
    for (k = 0; k < ndim; k++) d.shape[k] = shape[k];
    for (k = 0; k < m->nd; k++) d.placements[k] = sp->pl[k];
    CHECK_OK(dt_tensor_from_local(m->mesh, &d, buf, DT_COPY, &x));
    free(buf);
    return x;
}

static dt_tensor *make_rep(const dtt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, int salt, double *ref)
{
    int64_t n = dtt_numel(ndim, shape), i;
    int k;
    dt_tensor_desc d;
    dt_tensor *x = NULL;
    void *buf = dtt_malloc((size_t)n * dtt_size(t));
    for (i = 0; i < n; i++) {
        ref[i] = rval(i, salt);
        dtt_store_d(t, buf, (size_t)i, ref[i]);
    }
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = ndim;
    for (k = 0; k < ndim; k++) d.shape[k] = shape[k];
    CHECK_OK(dt_tensor_from_local(m->mesh, &d, buf, DT_COPY, &x));
    free(buf);
    return x;
}

/* gather out and compare with want[n] (exact for integers) */
static void expect(const char *what, dt_dtype t, const dt_tensor *out, int64_t n, const double *want)
{
    double got[MAXN];
    const dt_tensor_desc *d = out ? dt_tensor_get_desc(out) : NULL;
    g_cases++;
    if (!d) return; /* the call's failure is counted */
    CHECK(d->dtype == t && dtt_numel(d->ndim, d->shape) == n, "%s: result %s with %lld elements, want %s %lld", what,
          dtt_dtname(d->dtype), (long long)dtt_numel(d->ndim, d->shape), dtt_dtname(t), (long long)n);
    if (d->dtype != t || dtt_numel(d->ndim, d->shape) != n) return;
    CHECK_OK(dtt_gather_full(out, got));
    dtt_cmp(what, t, n, got, want, NULL, 1e-12, 1e-12);
}

/* pointwise ops and sums of x (shape [n] or 0-d) */
static void run_pointwise(const spec *sp, dt_dtype t, int ndim, int salt)
{
    const dtt_mesh *m = sp->m;
    int64_t shape[1] = { 5 }, n = ndim ? shape[0] : 1, i;
    double X[MAXN], Y[MAXN], R[MAXN], want[MAXN], one[1];
    dt_tensor *x, *y, *r, *o = NULL, *s = NULL;
    const dt_tensor *two[2];
    int dim0[1] = { 0 }, k;
    char s1[64];
    for (k = 0; k < m->nd; k++)
        if (ndim == 0 && sp->pl[k].kind == DT_SHARD) return; /* a 0-d tensor has no dim to shard */
    x = make_avg(sp, t, ndim, shape, salt, X);
    y = make_avg(sp, t, ndim, shape, salt + 3, Y);
    r = make_rep(m, t, ndim, shape, salt, R);
    dtt_ctx("%s mesh %s x %s%s salt %d", dtt_dtname(t), m->name, ndim ? "[5] " : "0-d ",
            dtt_pl_str(sp->pl, m->nd, s1, sizeof s1), salt);
    if (!x || !y || !r) goto done;
#define CASE(call, what, expr)                                 \
    do {                                                       \
        o = NULL;                                              \
        CHECK_OK(call);                                        \
        for (i = 0; i < n; i++) want[i] = (expr);              \
        expect(what, t, o, n, want);                           \
        dt_tensor_destroy(o);                                  \
    } while (0)
    CASE(dt_scale(x, 3, &o), "dt_scale(x, 3)", 3 * X[i]);
    CASE(dt_scale(x, -2, &o), "dt_scale(x, -2)", -2 * X[i]);
    CASE(dt_shift(x, -1, &o), "dt_shift(x, -1)", X[i] - 1);
    CASE(dt_shift(x, 2, &o), "dt_shift(x, 2)", X[i] + 2);
    CASE(dt_add(x, y, &o), "dt_add(x, y)", X[i] + Y[i]);
    CASE(dt_add(x, r, &o), "dt_add(x, r)", X[i] + R[i]);
    CASE(dt_sub(x, r, &o), "dt_sub(x, r)", X[i] - R[i]);
    CASE(dt_sub(r, x, &o), "dt_sub(r, x)", R[i] - X[i]);
    CASE(dt_sub(x, y, &o), "dt_sub(x, y)", X[i] - Y[i]);
    CASE(dt_mul(x, r, &o), "dt_mul(x, r)", X[i] * R[i]);
    CASE(dt_mul(r, x, &o), "dt_mul(r, x)", R[i] * X[i]);
    CASE(dt_neg(x, &o), "dt_neg(x)", -X[i]);
    CASE(dt_copy(x, &o), "dt_copy(x)", X[i]);
#undef CASE
    /* the sum of all elements, and of a stack of two along the new dim */
    one[0] = 0;
    for (i = 0; i < n; i++) one[0] += X[i];
    o = NULL;
    CHECK_OK(dt_sum(x, 0, NULL, 0, &o));
    expect("dt_sum(x)", t, o, 1, one);
    dt_tensor_destroy(o);
    two[0] = x;
    two[1] = x;
    o = NULL;
    CHECK_OK(dt_stack(2, two, 0, &s));
    if (s) CHECK_OK(dt_sum(s, 1, dim0, 0, &o));
    for (i = 0; i < n; i++) want[i] = 2 * X[i];
    expect("dt_sum(dt_stack(x, x), dim 0)", t, o, n, want);
    dt_tensor_destroy(o);
    /* axpy: x Partial(AVG) into a replicated y; and y Partial(AVG) itself */
    CHECK_OK(dt_axpy(2, x, r));
    for (i = 0; i < n; i++) want[i] = R[i] + 2 * X[i];
    expect("dt_axpy(2, x, y replicated)", t, r, n, want);
    {
        void *saved = dtt_save_local(y);
        dt_status st;
        dt_clear_error();
        st = dt_axpy(2, r, y);
        if (dtt_is_float(t) || m->shape[sp->avg] == 1) {
            CHECK(st == DT_OK, "dt_axpy(2, r, y Partial(avg)) returned %s: %s", dt_status_string(st), dt_last_error());
            for (i = 0; i < n; i++) want[i] = Y[i] + 2 * want[i];
            expect("dt_axpy(2, r, y Partial(avg))", t, y, n, want);
        } else {
            CHECK(st == DT_ERR_PLACEMENT, "dt_axpy into an integer Partial(avg) y returned %s, want DT_ERR_PLACEMENT",
                  dt_status_string(st));
            CHECK_ERRMSG("dt_axpy");
            CHECK(strstr(dt_last_error(), "avg") != NULL, "the message should name the placement: %s", dt_last_error());
            CHECK(dtt_same_local(y, saved), "the refused y changed");
        }
        free(saved);
    }
done:
    dt_tensor_destroy(s);
    dt_tensor_destroy(r);
    dt_tensor_destroy(y);
    dt_tensor_destroy(x);
}

/* c[M,N] = a[M,K] @ b[K,N] on doubles */
static void ref_mm(int64_t M, int64_t K, int64_t N, const double *a, const double *b, double *c)
{
    int64_t i, j, k;
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            double s = 0;
            for (k = 0; k < K; k++) s += a[i * K + k] * b[k * N + j];
            c[i * N + j] = s;
        }
}

static void run_matmul(const spec *sp, dt_dtype t, int salt)
{
    const dtt_mesh *m = sp->m;
    int64_t as[2] = { 5, 3 }, bs[2] = { 3, 2 }, cs[2] = { 5, 2 }, i;
    double A[MAXN], B[MAXN], C[MAXN], Ar[MAXN], Br[MAXN], Cr[MAXN], want[MAXN];
    dt_tensor *a = make_avg(sp, t, 2, as, salt, A), *b = make_avg(sp, t, 2, bs, salt + 1, B);
    dt_tensor *c = make_avg(sp, t, 2, cs, salt + 2, C), *ar = make_rep(m, t, 2, as, salt, Ar);
    dt_tensor *br = make_rep(m, t, 2, bs, salt + 1, Br), *cr = make_rep(m, t, 2, cs, salt + 2, Cr), *o = NULL;
    char s1[64];
    dtt_ctx("matmul %s mesh %s %s salt %d", dtt_dtname(t), m->name, dtt_pl_str(sp->pl, m->nd, s1, sizeof s1), salt);
    if (!a || !b || !c || !ar || !br || !cr) goto done;
    CHECK_OK(dt_matmul(a, br, &o));
    ref_mm(5, 3, 2, A, Br, want);
    expect("dt_matmul(a avg, b)", t, o, 10, want);
    dt_tensor_destroy(o);
    o = NULL;
    CHECK_OK(dt_matmul(ar, b, &o));
    ref_mm(5, 3, 2, Ar, B, want);
    expect("dt_matmul(a, b avg)", t, o, 10, want);
    dt_tensor_destroy(o);
    o = NULL;
    CHECK_OK(dt_addmm(c, ar, br, 1, 1, &o));
    ref_mm(5, 3, 2, Ar, Br, want);
    for (i = 0; i < 10; i++) want[i] += C[i];
    expect("dt_addmm(c avg, a, b)", t, o, 10, want);
    dt_tensor_destroy(o);
    o = NULL;
    CHECK_OK(dt_addmm(cr, a, br, -1, 2, &o));
    ref_mm(5, 3, 2, A, Br, want);
    for (i = 0; i < 10; i++) want[i] = 2 * want[i] - Cr[i];
    expect("dt_addmm(c, a avg, b, beta -1, alpha 2)", t, o, 10, want);
    dt_tensor_destroy(o);
done:
    dt_tensor_destroy(a);
    dt_tensor_destroy(b);
    dt_tensor_destroy(c);
    dt_tensor_destroy(ar);
    dt_tensor_destroy(br);
    dt_tensor_destroy(cr);
}

static void run_spec(const spec *sp)
{
    static const dt_dtype types[3] = { DT_I64, DT_I32, DT_F64 };
    int k, salt;
    for (k = 0; k < 3; k++)
        for (salt = 0; salt < 4; salt++) {
            run_pointwise(sp, types[k], 0, salt);
            run_pointwise(sp, types[k], 1, salt);
            run_matmul(sp, types[k], salt);
        }
}

static void test_intavg(void)
{
    dtt_mesh m;
    spec sp;
    int one[1], two[2], other;
    one[0] = dtt_np;
    if (dtt_mesh_open(&m, g_comm, 1, one)) {
        memset(&sp, 0, sizeof sp);
        sp.m = &m;
        sp.pl[0] = dt_partial(DT_AVG);
        run_spec(&sp);
        dtt_mesh_close(&m);
    }
    if (dtt_np % 2) return;
    two[0] = dtt_np / 2;
    two[1] = 2;
    if (!dtt_mesh_open(&m, g_comm, 2, two)) return;
    for (sp.avg = 0; sp.avg < 2; sp.avg++)
        for (other = 0; other < 2; other++) { /* the other mesh dim: Replicate, or Shard(0) (rows, uneven) */
            memset(sp.pl, 0, sizeof sp.pl);
            sp.m = &m;
            sp.pl[sp.avg] = dt_partial(DT_AVG);
            sp.pl[1 - sp.avg] = other ? dt_shard(0) : dt_replicate();
            run_spec(&sp);
        }
    dtt_mesh_close(&m);
}

int main(int argc, char **argv)
{
    dtt_init(&argc, &argv, "ops_intavg");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    if (g_comm) test_intavg();
    if (getenv("DT_TEST_VERBOSE") && dtt_rank == 0) fprintf(stderr, "ops_intavg: %ld cases\n", g_cases);
    dt_comm_destroy(g_comm);
    return dtt_finish();
}
