/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi blas
   impl:  own
*/
/* test_ops_matmul.c -- the matmul family: dt_mm, dt_bmm, dt_addmm, dt_matmul
   (N-D, batch broadcasting, 1-D operands as torch.matmul), dt_linear (with
   and without bias) and dt_dot.

   Every op runs over every combination of input placements (Replicate,
   Shard(each dim), Partial(SUM) per mesh dim and input) on the 1-D mesh and
   on 2-D meshes (exhaustive for mm and dot and the small matmul cases;
   sampled by a seeded rng for bmm, addmm, linear and the other matmul cases,
   all of them without --quick on 1-D), with uneven shapes (1, 5, 7, 13,
   sizes below the rank count so that shards are empty, and 0), dtypes
   rotating through F32, F64, F16, BF16, I32 and I64. Partial inputs hold
   real parts (different values per rank that sum to the value, built with
   dt_tensor_from_local). The reference is a serial loop in double on the
   full inputs computed from a closed form of the global index (exact for
   every dtype used: the values are small dyadic numbers or integers); floats
   are compared within a tolerance that grows with k and the number of
   Partial parts, integers exactly. Each result's own layout is checked
   against the independent torch.chunk layout of its placements, the inputs
   must be untouched, and where the inputs already sit in one strategy's
   placements on a mesh dim (> 1 rank) the documented output placement is
   asserted: (S(m),R)->S(m), (R,S(n))->S(n), (S(k),S(k))->P(SUM),
   (P,R)->P, (R,P)->P, batch (S(b),S(b))->S(b), linear colwise/rowwise, dot
   (S0,S0)->P. Every 5th case calls the op a second time with the result as
   *out: same tensor, same buffer (poisoned before), right values.
   Partial(AVG/MAX/MIN) inputs (no strategy takes them: reduced first) run
   for mm, bmm, linear and dot against R, S and Partial partners.

   Then the streamed matmul (SUMMA; tests/summa_cases.h): values under
   forced streaming in every split rule and storage kind, the bytes
   received, the working memory through the counting DT_MALLOC below, the
   overlap recorded by a start/wait backend, the auto choice, bad budgets.

   Options: --quick (or DT_TEST_QUICK=1) samples the 2-D meshes thinly;
   --seed N (or DT_TEST_SEED). DT_TEST_VERBOSE=1 prints counts and times. */
#define _POSIX_C_SOURCE 200112L /* setenv (summa_cases.h: the shared arena's settings) */
#include <stdlib.h>
#include <stddef.h>
/* a counting allocator (summa_cases.h's memory checks): the size sits in a header before the block */
static size_t sm_mem_now = 0, sm_mem_peak = 0;
static void *cnt_malloc(size_t n) {
    size_t *p = (size_t *)malloc(n + 16);
    if (!p) return NULL;
    p[0] = n;
    sm_mem_now += n;
    if (sm_mem_now > sm_mem_peak) sm_mem_peak = sm_mem_now;
    return (char *)p + 16;
}
static void cnt_free(void *q) {
    size_t *p;
    if (!q) return;
    p = (size_t *)(void *)((char *)q - 16);
    sm_mem_now -= p[0];
    free(p);
}
#define DT_MALLOC(sz) cnt_malloc(sz)
#define DT_FREE(p) cnt_free(p)
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

static dt_comm *g_comm = NULL;
static uint64_t g_seed = 4242;
static long g_cases = 0;
static long g_asserted = 0; /* output placements asserted */

#define MAXIN 3

enum { K_MM, K_BMM, K_ADDMM, K_MATMUL, K_LINEAR, K_DOT };
static const char *const kname[] = { "dt_mm", "dt_bmm", "dt_addmm", "dt_matmul", "dt_linear", "dt_dot" };

/* ------------------------------------------------------------ values */

/* the closed-form value of element g of input `which`: exact in t and small
   enough that every sum the tests form is exact in double */
static double val(dt_dtype t, int which, int64_t g)
{
    uint64_t u = dtt_mix(g, which);
    switch (t) {
    case DT_F32: case DT_F64: return (double)((int64_t)(u % 129) - 64) / 16.0; /* [-4, 4] by 1/16 */
    case DT_F16: case DT_BF16: return (double)((int64_t)(u % 9) - 4);
    case DT_I32: return (double)((int64_t)(u % 6001) - 3000);
    case DT_I64: return (double)((int64_t)(u % 2000003) - 1000001); /* products past 2^32 */
    case DT_U8: return (double)(u % 7);
    default: break; /* complex: tests/test_complex.c */
    }
    return 0;
}
static double unit_of(dt_dtype t) { return (t == DT_F32 || t == DT_F64) ? 0.25 : 1.0; }

/* |part| summed over the parts: the magnitude a Partial input contributes */
static double absparts(dt_reduce op, double v, int64_t g, int n, double unit)
{
    double s = 0;
    int p;
    if (n <= 1) return fabs(v);
    for (p = 0; p < n; p++) s += fabs(dtt_part_d(op, v, g, p, n, unit));
    return s;
}

/* ------------------------------------------------------------ reference (torch.matmul: dtt_ref_matmul) */

/* ------------------------------------------------------------ one case */

typedef struct mcase {
    int kind, nin;                       /* nin: inputs (linear without bias: 2) */
    int ndim[MAXIN];
    int64_t shape[MAXIN][DT_MAX_DIMS];
    double alpha, beta;                  /* addmm */
} mcase;

static int64_t k_of(const mcase *c)
{
    int i = c->kind == K_ADDMM ? 1 : 0; /* the first matrix operand */
    return c->shape[i][c->ndim[i] - 1];
}

/* the reference: out (full), mag (the bound sum |a||b| over the parts), shape */
static int reference(const mcase *c, double *const *in, double *const *ab, double *out, double *mag, int *ondim,
                     int64_t *osh)
{
    int64_t n, i;
    if (c->kind == K_LINEAR) {
        /* x @ w^T + bias */
        const int64_t *ws = c->shape[1];
        int64_t wt[2], o, q;
        double *w1 = (double *)dtt_malloc((size_t)(ws[0] * ws[1]) * sizeof(double));
        double *w2 = (double *)dtt_malloc((size_t)(ws[0] * ws[1]) * sizeof(double));
        int ok;
        wt[0] = ws[1];
        wt[1] = ws[0];
        for (o = 0; o < ws[0]; o++)
            for (q = 0; q < ws[1]; q++) {
                w1[q * ws[0] + o] = in[1][o * ws[1] + q];
                w2[q * ws[0] + o] = ab[1][o * ws[1] + q];
            }
        ok = dtt_ref_matmul(in[0], c->ndim[0], c->shape[0], w1, 2, wt, out, ondim, osh);
        if (ok) ok = dtt_ref_matmul(ab[0], c->ndim[0], c->shape[0], w2, 2, wt, mag, ondim, osh);
        free(w1);
        free(w2);
        if (!ok) return 0;
        n = dtt_numel(*ondim, osh);
        if (c->nin == 3)
            for (i = 0; i < n; i++) {
                out[i] += in[2][i % ws[0]];
                mag[i] += ab[2][i % ws[0]];
            }
        return 1;
    }
    if (c->kind == K_ADDMM) {
        if (!dtt_ref_matmul(in[1], 2, c->shape[1], in[2], 2, c->shape[2], out, ondim, osh)) return 0;
        if (!dtt_ref_matmul(ab[1], 2, c->shape[1], ab[2], 2, c->shape[2], mag, ondim, osh)) return 0;
        n = dtt_numel(*ondim, osh);
        for (i = 0; i < n; i++) {
            out[i] = c->beta * in[0][i] + c->alpha * out[i];
            mag[i] = fabs(c->beta) * ab[0][i] + fabs(c->alpha) * mag[i];
        }
        return 1;
    }
    if (!dtt_ref_matmul(in[0], c->ndim[0], c->shape[0], in[1], c->ndim[1], c->shape[1], out, ondim, osh)) return 0;
    return dtt_ref_matmul(ab[0], c->ndim[0], c->shape[0], ab[1], c->ndim[1], c->shape[1], mag, ondim, osh);
}

static dt_status call_op(const mcase *c, dt_tensor *const *x, dt_tensor **out)
{
    switch (c->kind) {
    case K_MM: return dt_mm(x[0], x[1], out);
    case K_BMM: return dt_bmm(x[0], x[1], out);
    case K_ADDMM: return dt_addmm(x[0], x[1], x[2], c->beta, c->alpha, out);
    case K_MATMUL: return dt_matmul(x[0], x[1], out);
    case K_LINEAR: return dt_linear(x[0], x[1], c->nin == 3 ? x[2] : NULL, out);
    case K_DOT: return dt_dot(x[0], x[1], out);
    }
    return DT_ERR_ARG;
}

static int same_pl(dt_placement a, dt_placement b)
{
    if (a.kind != b.kind) return 0;
    if (a.kind == DT_SHARD) return a.dim == b.dim;
    if (a.kind == DT_PARTIAL) return a.reduce == b.reduce;
    return 1;
}
static int is_s(dt_placement p, int dim) { return p.kind == DT_SHARD && p.dim == dim; }
static int is_r(dt_placement p) { return p.kind == DT_REPLICATE; }
static int is_p(dt_placement p) { return p.kind == DT_PARTIAL && p.reduce == DT_SUM; }

/* the documented output placement when the inputs (on one mesh dim) already
   sit in a strategy's placements; 0 if not such a case */
static int canonical(const mcase *c, const dt_placement *p, dt_placement *o)
{
    dt_placement a = p[0], b = p[1];
    int an = c->ndim[0];
    switch (c->kind) {
    case K_MM:
    case K_MATMUL:
        if (c->kind == K_MATMUL && (an != 2 || c->ndim[1] != 2)) return 0;
        if (is_s(a, 0) && is_r(b)) { *o = dt_shard(0); return 1; }
        if (is_r(a) && is_s(b, 1)) { *o = dt_shard(1); return 1; }
        if (is_s(a, 1) && is_s(b, 0)) { *o = dt_partial(DT_SUM); return 1; }
        if ((is_p(a) && is_r(b)) || (is_r(a) && is_p(b))) { *o = dt_partial(DT_SUM); return 1; }
        return 0;
    case K_BMM:
        if (is_s(a, 0) && is_s(b, 0)) { *o = dt_shard(0); return 1; }
        if (is_s(a, 1) && is_r(b)) { *o = dt_shard(1); return 1; }
        if (is_r(a) && is_s(b, 2)) { *o = dt_shard(2); return 1; }
        if (is_s(a, 2) && is_s(b, 1)) { *o = dt_partial(DT_SUM); return 1; }
        if ((is_p(a) && is_r(b)) || (is_r(a) && is_p(b))) { *o = dt_partial(DT_SUM); return 1; }
        return 0;
    case K_DOT:
        if (is_s(a, 0) && is_s(b, 0)) { *o = dt_partial(DT_SUM); return 1; }
        if ((is_p(a) && is_r(b)) || (is_r(a) && is_p(b))) { *o = dt_partial(DT_SUM); return 1; }
        return 0;
    case K_ADDMM: { /* c already in the product's output placement */
        mcase mm = *c;
        dt_placement q[2], r;
        mm.kind = K_MM;
        mm.ndim[0] = 2;
        mm.ndim[1] = 2;
        q[0] = p[1];
        q[1] = p[2];
        if (!canonical(&mm, q, &r) || !same_pl(r, p[0])) return 0;
        *o = r;
        return 1;
    }
    case K_LINEAR: {
        int bias = c->nin == 3, last = an - 1;
        dt_placement bb = bias ? p[2] : dt_replicate();
        if (is_r(a) && is_s(b, 0) && (is_r(bb) || is_s(bb, 0))) { *o = dt_shard(last); return 1; } /* colwise */
        if (is_s(a, last) && is_s(b, 1) && is_r(bb)) { *o = dt_partial(DT_SUM); return 1; }       /* rowwise */
        if (a.kind == DT_SHARD && a.dim < last && is_r(b) && is_r(bb)) { *o = a; return 1; }
        if (!bias && ((is_p(a) && is_r(b)) || (is_r(a) && is_p(b)))) { *o = dt_partial(DT_SUM); return 1; }
        return 0;
    }
    }
    return 0;
}

static double eps_of(dt_dtype t)
{
    switch (t) {
    case DT_F64: return 2.220446049250313e-16;
    case DT_F32: return 1.1920928955078125e-07;
    case DT_F16: return 9.765625e-04;
    case DT_BF16: return 7.8125e-03;
    default: return 0;
    }
}

/* run one case: inputs with placements pl[i]; checks everything listed at the top */
static void run_case(const dtt_mesh *m, const mcase *c0, dt_dtype t, dt_placement (*pl)[DT_MAX_MESH_DIMS])
{
    mcase cc = *c0, *c = &cc;
    double *in[MAXIN] = { NULL, NULL, NULL }, *ab[MAXIN] = { NULL, NULL, NULL }, *ref, *mag, *got;
    dt_tensor *x[MAXIN] = { NULL, NULL, NULL }, *out = NULL;
    void *saved[MAXIN] = { NULL, NULL, NULL };
    size_t savedn[MAXIN] = { 0, 0, 0 };
    int64_t osh[DT_MAX_DIMS], on, g;
    int i, k, ondim = 0, nparts = 1, ok = 1, rep;
    char s1[256], tmp[64];
    size_t o = 0;
    dt_status st;
    const dt_tensor_desc *od;
    double u = unit_of(t);

    g_cases++;
    if (!dtt_is_float(t)) { /* integer tensors take integral scalars (as torch) */
        cc.alpha = floor(2 * cc.alpha + 0.5);
        cc.beta = floor(2 * cc.beta + 0.5);
    }
    o += (size_t)snprintf(s1 + o, sizeof s1 - o, "%s %s mesh %s", kname[c->kind], dtt_dtname(t), m->name);
    for (i = 0; i < c->nin && o < sizeof s1; i++) {
        o += (size_t)snprintf(s1 + o, sizeof s1 - o, " %s", dtt_shape_str(c->ndim[i], c->shape[i], tmp, sizeof tmp));
        if (o < sizeof s1) o += (size_t)snprintf(s1 + o, sizeof s1 - o, "%s", dtt_pl_str(pl[i], m->nd, tmp, sizeof tmp));
    }
    if (c->kind == K_ADDMM && o < sizeof s1) snprintf(s1 + o, sizeof s1 - o, " beta %g alpha %g", c->beta, c->alpha);
    dtt_ctx("%s", s1);

    /* full inputs and their part magnitudes */
    for (i = 0; i < c->nin; i++) {
        int64_t n = dtt_numel(c->ndim[i], c->shape[i]);
        dt_reduce op;
        int np;
        dtt_part_index(m, pl[i], &np, &op);
        if (np > nparts) nparts = np;
        in[i] = (double *)dtt_malloc((size_t)n * sizeof(double));
        ab[i] = (double *)dtt_malloc((size_t)n * sizeof(double));
        for (g = 0; g < n; g++) {
            in[i][g] = val(t, i, g);
            ab[i][g] = absparts(op, in[i][g], g, np, u);
        }
    }
    /* the output is at most the largest input times the other's last dim */
    { /* every output dim is some input's dim: the product of all of them bounds the output */
        int64_t cap = 1;
        for (i = 0; i < c->nin; i++)
            for (k = 0; k < c->ndim[i]; k++) cap *= c->shape[i][k] > 1 ? c->shape[i][k] : 1;
        ref = (double *)dtt_malloc((size_t)cap * sizeof(double));
        mag = (double *)dtt_malloc((size_t)cap * sizeof(double));
        got = (double *)dtt_malloc((size_t)cap * sizeof(double));
    }
    if (!reference(c, in, ab, ref, mag, &ondim, osh)) {
        CHECK(0, "test bug: the reference refused the shapes");
        ok = 0;
    }
    for (i = 0; i < c->nin && ok; i++) {
        x[i] = dtt_from_full(m, t, c->ndim[i], c->shape[i], pl[i], in[i], u);
        if (!x[i]) ok = 0;
        else {
            savedn[i] = dt_tensor_local_numel(x[i]) * dtt_size(t);
            saved[i] = dtt_malloc(savedn[i]);
            if (savedn[i]) memcpy(saved[i], dt_tensor_data(x[i]), savedn[i]);
        }
    }
    if (ok) {
        st = call_op(c, x, &out);
        if (st != DT_OK) CHECK(0, "%s returned %s: %s", kname[c->kind], dt_status_string(st), dt_last_error());
        else if (!out) CHECK(0, "%s returned DT_OK and no tensor", kname[c->kind]);
    }
    if (out) {
        od = dt_tensor_get_desc(out);
        on = dtt_numel(ondim, osh);
        CHECK(od != NULL, "no descriptor");
        if (od) {
            int shape_ok = od->ndim == ondim && od->dtype == t;
            for (k = 0; k < ondim && shape_ok; k++) shape_ok = od->shape[k] == osh[k];
            CHECK(shape_ok, "result %s ndim %d %s, want %s ndim %d %s", dtt_dtname(od->dtype), od->ndim,
                  dtt_shape_str(od->ndim, od->shape, s1, 128), dtt_dtname(t), ondim,
                  dtt_shape_str(ondim, osh, tmp, sizeof tmp));
            dtt_check_own_layout(m, out, "result");
            /* the documented placement where the inputs already fit a strategy */
            if (on > 0) {
                int64_t minsz = 1;
                for (i = 0; i < c->nin; i++)
                    if (dtt_numel(c->ndim[i], c->shape[i]) < minsz || dtt_numel(c->ndim[i], c->shape[i]) == 0) minsz = 0;
                for (k = 0; k < m->nd && minsz; k++) {
                    dt_placement p[MAXIN], want;
                    if (m->shape[k] < 2) continue; /* a 1-rank mesh dim costs nothing either way */
                    for (i = 0; i < c->nin; i++) p[i] = pl[i][k];
                    if (!canonical(c, p, &want)) continue;
                    if (want.kind == DT_SHARD) want.dim = (int8_t)dtt_norm_dim(want.dim, ondim);
                    g_asserted++;
                    CHECK(same_pl(od->placements[k], want), "mesh dim %d: output placement %s, want %s", k,
                          dtt_pl_str(&od->placements[k], 1, s1, 64), dtt_pl_str(&want, 1, tmp, sizeof tmp));
                }
            }
            /* every 5th case runs twice: the second call reuses *out (same tensor, same buffer) */
            for (rep = 0; rep < (g_cases % 5 == 0 ? 2 : 1) && shape_ok; rep++) {
                if (rep == 1) {
                    dt_tensor *keep = out;
                    void *data = dt_tensor_data(out);
                    size_t nb = dt_tensor_local_numel(out) * dtt_size(t);
                    if (nb) memset(dt_tensor_data(out), 0x7F, nb); /* stale values must be overwritten */
                    st = call_op(c, x, &out);
                    CHECK(st == DT_OK, "second call with *out: %s: %s", dt_status_string(st), dt_last_error());
                    CHECK(out == keep && dt_tensor_data(out) == data, "*out's buffer must be reused");
                    if (st != DT_OK || out != keep) break;
                }
                st = dtt_gather_full(out, got);
                if (st != DT_OK) CHECK(0, "dt_tensor_gather returned %s: %s", dt_status_string(st), dt_last_error());
                else {
                    double eps = eps_of(t), kk = (double)k_of(c);
                    for (g = 0; g < on; g++) {
                        double tol;
                        if (t == DT_F16 || t == DT_BF16) tol = (kk * 1.2e-7 + 2.0 * (nparts + 2) * eps) * mag[g];
                        else tol = 2.0 * (kk + nparts + 4) * eps * mag[g];
                        if (!(fabs(got[g] - ref[g]) <= tol)) {
                            CHECK(0, "%selement %lld = %.17g want %.17g (tol %.3g)", rep ? "reused *out: " : "",
                                  (long long)g, got[g], ref[g], tol);
                            break;
                        }
                    }
                }
            }
        }
    }
    for (i = 0; i < c->nin; i++) {
        if (x[i] && saved[i])
            CHECK(dt_tensor_local_numel(x[i]) * dtt_size(t) == savedn[i] &&
                      (savedn[i] == 0 || memcmp(saved[i], dt_tensor_data(x[i]), savedn[i]) == 0),
                  "input %d changed", i);
        dt_tensor_destroy(x[i]);
        free(saved[i]);
        free(in[i]);
        free(ab[i]);
    }
    dt_tensor_destroy(out);
    free(ref);
    free(mag);
    free(got);
}

/* ------------------------------------------------------------ sweeps */

static const dt_dtype rot_types[] = { DT_F32, DT_F64, DT_I32, DT_F64, DT_F32, DT_F16, DT_F64, DT_I64, DT_F32, DT_BF16 };
static int g_rot = 0;
static dt_dtype next_type(void) { return rot_types[g_rot++ % NELEM(rot_types)]; }

static int ipow(int b, int e)
{
    int r = 1;
    while (e-- > 0) r *= b;
    return r;
}

static double uniform(dtt_rng *r) { return (double)(dtt_next(r) >> 11) / 9007199254740992.0; }

/* every combination of per-input placement tuples (or a fraction `fr`) */
static void sweep(const dtt_mesh *m, const mcase *c, double fr, dtt_rng *rng)
{
    int nopt[MAXIN], ncomb[MAXIN], total = 1, idx, i;
    for (i = 0; i < c->nin; i++) {
        nopt[i] = c->ndim[i] + 2;
        ncomb[i] = ipow(nopt[i], m->nd);
        total *= ncomb[i];
    }
    for (idx = 0; idx < total; idx++) {
        dt_placement pl[MAXIN][DT_MAX_MESH_DIMS];
        int rem = idx;
        if (fr < 1.0 && uniform(rng) >= fr) continue;
        for (i = c->nin - 1; i >= 0; i--) {
            dtt_placements_of(rem % ncomb[i], m->nd, c->ndim[i], pl[i]);
            rem /= ncomb[i];
        }
        run_case(m, c, next_type(), pl);
    }
}

static mcase mk2(int kind, int n0, const int64_t *s0, int n1, const int64_t *s1)
{
    mcase c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.nin = 2;
    c.ndim[0] = n0;
    c.ndim[1] = n1;
    memcpy(c.shape[0], s0, sizeof(int64_t) * (size_t)n0);
    memcpy(c.shape[1], s1, sizeof(int64_t) * (size_t)n1);
    c.alpha = 1;
    c.beta = 1;
    return c;
}

static mcase mk_mm(int kind, int64_t mm, int64_t k, int64_t n)
{
    int64_t a[2], b[2];
    a[0] = mm; a[1] = k; b[0] = k; b[1] = n;
    return mk2(kind, 2, a, 2, b);
}

static mcase mk_bmm(int64_t B, int64_t mm, int64_t k, int64_t n)
{
    int64_t a[3], b[3];
    a[0] = B; a[1] = mm; a[2] = k; b[0] = B; b[1] = k; b[2] = n;
    return mk2(K_BMM, 3, a, 3, b);
}

static mcase mk_addmm(int64_t mm, int64_t k, int64_t n, double beta, double alpha)
{
    mcase c = mk_mm(K_ADDMM, mm, k, n);
    c.nin = 3;
    c.ndim[2] = 2;
    memcpy(c.shape[2], c.shape[1], sizeof(int64_t) * 2);
    memcpy(c.shape[1], c.shape[0], sizeof(int64_t) * 2);
    c.shape[0][0] = mm;
    c.shape[0][1] = n;
    c.ndim[0] = 2;
    c.beta = beta;
    c.alpha = alpha;
    return c;
}

static mcase mk_linear(int xnd, const int64_t *xs, int64_t nout, int bias)
{
    mcase c;
    int64_t w[2];
    w[0] = nout;
    w[1] = xs[xnd - 1];
    c = mk2(K_LINEAR, xnd, xs, 2, w);
    if (bias) {
        c.nin = 3;
        c.ndim[2] = 1;
        c.shape[2][0] = nout;
    }
    return c;
}

static mcase mk_dot(int64_t k)
{
    int64_t a[1];
    a[0] = k;
    return mk2(K_DOT, 1, a, 1, a);
}

/* the meshes: the 1-D mesh and the 2-D ones (both dims > 1 where np allows) */
static int mesh_list(int *fac, int max)
{
    int all[64 * DT_MAX_MESH_DIMS], n = dtt_factorizations(dtt_np, 2, all, 64), i, cnt = 0, k;
    for (i = 0; i < n && cnt < max; i++)
        if (all[i * DT_MAX_MESH_DIMS] > 1 && all[i * DT_MAX_MESH_DIMS + 1] > 1) {
            for (k = 0; k < DT_MAX_MESH_DIMS; k++) fac[cnt * DT_MAX_MESH_DIMS + k] = all[i * DT_MAX_MESH_DIMS + k];
            cnt++;
        }
    if (cnt == 0) /* np prime or 1: 1xN and Nx1 */
        for (i = 0; i < n && cnt < max; i++, cnt++)
            for (k = 0; k < DT_MAX_MESH_DIMS; k++) fac[cnt * DT_MAX_MESH_DIMS + k] = all[i * DT_MAX_MESH_DIMS + k];
    return cnt;
}

/* sweep case c on each 2-D mesh of mesh_list with frac fq under dtt_quick, else f0 on the first and fr on the rest */
static void sweep_2d(const mcase *c, double fq, double f0, double fr, dtt_rng *rng)
{
    int fac[16 * DT_MAX_MESH_DIMS], nf, f;
    dtt_mesh m;
    nf = mesh_list(fac, 16);
    for (f = 0; f < nf; f++) {
        if (!dtt_mesh_open(&m, g_comm, 2, &fac[f * DT_MAX_MESH_DIMS])) continue;
        sweep(&m, c, dtt_quick ? fq : (f == 0 ? f0 : fr), rng);
        dtt_mesh_close(&m);
    }
}

static double now(void) { return MPI_Wtime(); }
static void section(const char *name, double t0, long c0)
{
    if (dtt_rank == 0 && getenv("DT_TEST_VERBOSE"))
        fprintf(stderr, "matmul: %-10s %5ld cases %6.2f s\n", name, g_cases - c0, now() - t0);
}

/* mm: 1-D exhaustive over shapes incl. empty shards and 0 dims; 2-D exhaustive on one shape */
static void test_mm(dtt_rng *rng)
{
    static const int64_t sh[][3] = { { 5, 7, 13 }, { 13, 5, 7 }, { 1, 5, 7 }, { 7, 1, 5 }, { 5, 7, 1 },
                                     { 2, 3, 2 }, { 0, 3, 4 }, { 3, 0, 4 }, { 24, 16, 8 } };
    int fac[16 * DT_MAX_MESH_DIMS], nf, f, s, one = dtt_np;
    double t0 = now();
    long c0 = g_cases;
    dtt_mesh m;
    if (dtt_mesh_open(&m, g_comm, 1, &one)) {
        for (s = 0; s < NELEM(sh); s++) {
            mcase c = mk_mm(K_MM, sh[s][0], sh[s][1], sh[s][2]);
            sweep(&m, &c, dtt_quick && s ? 0.12 : 1.0, rng);
        }
        dtt_mesh_close(&m);
    }
    nf = mesh_list(fac, 16);
    for (f = 0; f < nf; f++) {
        if (!dtt_mesh_open(&m, g_comm, 2, &fac[f * DT_MAX_MESH_DIMS])) continue;
        {
            mcase c = mk_mm(K_MM, 5, 7, 13), c2 = mk_mm(K_MM, 3, 1, 2);
            sweep(&m, &c, dtt_quick ? (f == 0 ? 0.12 : 0.02) : 1.0, rng);
            sweep(&m, &c2, dtt_quick ? 0.02 : 0.25, rng);
        }
        dtt_mesh_close(&m);
    }
    section("mm", t0, c0);
}

static void test_bmm(dtt_rng *rng)
{
    static const int64_t sh[][4] = { { 3, 5, 7, 2 }, { 1, 4, 3, 5 }, { 5, 1, 2, 3 }, { 2, 0, 3, 1 } };
    int s, one = dtt_np;
    double t0 = now();
    long c0 = g_cases;
    dtt_mesh m;
    if (dtt_mesh_open(&m, g_comm, 1, &one)) {
        for (s = 0; s < NELEM(sh); s++) {
            mcase c = mk_bmm(sh[s][0], sh[s][1], sh[s][2], sh[s][3]);
            sweep(&m, &c, dtt_quick && s ? 0.12 : 1.0, rng);
        }
        dtt_mesh_close(&m);
    }
    {
        mcase c = mk_bmm(5, 3, 7, 2);
        sweep_2d(&c, 0.01, 0.6, 0.15, rng);
    }
    section("bmm", t0, c0);
}

static void test_addmm(dtt_rng *rng)
{
    int one = dtt_np;
    double t0 = now();
    long c0 = g_cases;
    dtt_mesh m;
    if (dtt_mesh_open(&m, g_comm, 1, &one)) {
        mcase c1 = mk_addmm(5, 7, 13, 1.0, 1.0), c2 = mk_addmm(7, 2, 3, 0.5, -2.0), c3 = mk_addmm(1, 13, 5, 0.0, 1.0);
        sweep(&m, &c1, dtt_quick ? 0.3 : 1.0, rng);
        sweep(&m, &c2, dtt_quick ? 0.1 : 1.0, rng);
        sweep(&m, &c3, dtt_quick ? 0.05 : 0.5, rng);
        dtt_mesh_close(&m);
    }
    {
        mcase c = mk_addmm(5, 7, 3, 2.0, 0.5);
        sweep_2d(&c, 0.002, 0.05, 0.05, rng);
    }
    section("addmm", t0, c0);
}

static void test_linear(dtt_rng *rng)
{
    static const int64_t x2[2] = { 7, 5 }, x2b[2] = { 3, 13 }, x3[3] = { 2, 5, 3 };
    int fac[16 * DT_MAX_MESH_DIMS], nf, f, one = dtt_np, bias;
    double t0 = now();
    long c0 = g_cases;
    dtt_mesh m;
    if (dtt_mesh_open(&m, g_comm, 1, &one)) {
        for (bias = 0; bias <= 1; bias++) {
            mcase c1 = mk_linear(2, x2, 6, bias), c2 = mk_linear(3, x3, 7, bias), c3 = mk_linear(2, x2b, 1, bias);
            mcase c4 = mk_linear(1, x2 + 1, 6, bias); /* x [in] -> [out] */
            sweep(&m, &c1, dtt_quick ? (bias ? 0.2 : 1.0) : 1.0, rng);
            sweep(&m, &c4, dtt_quick ? 0.3 : 1.0, rng);
            sweep(&m, &c2, dtt_quick ? 0.08 : 1.0, rng);
            sweep(&m, &c3, dtt_quick ? 0.05 : 0.5, rng);
        }
        dtt_mesh_close(&m);
    }
    nf = mesh_list(fac, 16);
    for (f = 0; f < nf; f++) {
        if (!dtt_mesh_open(&m, g_comm, 2, &fac[f * DT_MAX_MESH_DIMS])) continue;
        for (bias = 0; bias <= 1; bias++) {
            mcase c = mk_linear(2, x2, 6, bias), c3 = mk_linear(3, x3, 4, bias);
            sweep(&m, &c, dtt_quick ? 0.005 : (bias ? 0.06 : 0.3), rng);
            sweep(&m, &c3, dtt_quick ? 0.001 : 0.02, rng);
        }
        dtt_mesh_close(&m);
    }
    section("linear", t0, c0);
}

static void test_dot(dtt_rng *rng)
{
    static const int64_t ks[] = { 13, 1, 5, 0, 40 };
    int s, one = dtt_np;
    double t0 = now();
    long c0 = g_cases;
    dtt_mesh m;
    if (dtt_mesh_open(&m, g_comm, 1, &one)) {
        for (s = 0; s < NELEM(ks); s++) {
            mcase c = mk_dot(ks[s]);
            sweep(&m, &c, dtt_quick && s ? 0.3 : 1.0, rng);
        }
        dtt_mesh_close(&m);
    }
    {
        mcase c = mk_dot(7);
        sweep_2d(&c, 0.08, 1.0, 1.0, rng);
    }
    section("dot", t0, c0);
}

/* N-D matmul: 1-D operands, batch broadcasting (size-1 and missing dims) */
static void test_matmul(dtt_rng *rng)
{
    static const struct { int an, bn; int64_t a[4], b[4]; double fr1, fr2; } cs[] = {
        { 1, 1, { 7 }, { 7 }, 1.0, 1.0 },                                /* dot -> 0-d */
        { 1, 2, { 5 }, { 5, 3 }, 1.0, 1.0 },                             /* [k]x[k,n] -> [n] */
        { 2, 1, { 7, 5 }, { 5 }, 1.0, 1.0 },                             /* [m,k]x[k] -> [m] */
        { 2, 2, { 5, 7 }, { 7, 13 }, 1.0, 0.3 },                         /* mm */
        { 1, 3, { 4 }, { 3, 4, 2 }, 1.0, 0.2 },                          /* [k]x[b,k,n] -> [b,n] */
        { 3, 1, { 3, 5, 4 }, { 4 }, 1.0, 0.2 },                          /* [b,m,k]x[k] -> [b,m] */
        { 3, 2, { 3, 5, 4 }, { 4, 2 }, 1.0, 0.1 },                       /* batch x matrix */
        { 2, 3, { 5, 4 }, { 3, 4, 2 }, 1.0, 0.1 },                       /* matrix x batch */
        { 3, 3, { 3, 2, 4 }, { 1, 4, 5 }, 1.0, 0.05 },                   /* size-1 batch stretches */
        { 4, 3, { 2, 1, 3, 4 }, { 5, 4, 2 }, 0.5, 0.01 },                /* [2,1,m,k]x[5,k,n] -> [2,5,m,n] */
        { 4, 4, { 2, 1, 3, 2 }, { 1, 3, 2, 5 }, 0.3, 0.005 },            /* both stretch */
        { 3, 3, { 7, 2, 3 }, { 7, 3, 1 }, 1.0, 0.05 },                   /* equal batch (bmm) */
    };
    int fac[16 * DT_MAX_MESH_DIMS], nf, f, s, one = dtt_np;
    double t0 = now();
    long c0 = g_cases;
    dtt_mesh m;
    if (dtt_mesh_open(&m, g_comm, 1, &one)) {
        for (s = 0; s < NELEM(cs); s++) {
            mcase c = mk2(K_MATMUL, cs[s].an, cs[s].a, cs[s].bn, cs[s].b);
            sweep(&m, &c, dtt_quick ? cs[s].fr1 * 0.12 : cs[s].fr1, rng);
        }
        dtt_mesh_close(&m);
    }
    nf = mesh_list(fac, 16);
    for (f = 0; f < nf; f++) {
        if (!dtt_mesh_open(&m, g_comm, 2, &fac[f * DT_MAX_MESH_DIMS])) continue;
        for (s = 0; s < NELEM(cs); s++) {
            mcase c = mk2(K_MATMUL, cs[s].an, cs[s].a, cs[s].bn, cs[s].b);
            sweep(&m, &c, dtt_quick ? cs[s].fr2 * 0.05 : cs[s].fr2 * 0.6, rng);
        }
        dtt_mesh_close(&m);
    }
    section("matmul", t0, c0);
}

/* Partial(AVG/MAX/MIN) inputs: no strategy takes them, they must be reduced
   first; every family, both operands, with the other operand R, S or P(SUM) */
static void test_other_partials(dtt_rng *rng)
{
    static const dt_reduce ops[3] = { DT_AVG, DT_MAX, DT_MIN };
    int one = dtt_np, o, i, j, which;
    double t0 = now();
    long c0 = g_cases;
    dtt_mesh m;
    if (!dtt_mesh_open(&m, g_comm, 1, &one)) return;
    for (o = 0; o < 3; o++)
        for (which = 0; which < 4; which++) {
            mcase c;
            int64_t x2[2] = { 7, 5 }, v[1] = { 11 };
            if (which == 0) c = mk_mm(K_MM, 5, 7, 13);
            else if (which == 1) c = mk_bmm(3, 2, 5, 4);
            else if (which == 2) c = mk_linear(2, x2, 6, 1);
            else c = mk_dot(v[0]);
            for (i = 0; i < c.nin; i++)
                for (j = 0; j < c.ndim[i == 0 ? 1 : 0] + 3; j++) {
                    dt_placement pl[MAXIN][DT_MAX_MESH_DIMS];
                    int other = i == 0 ? 1 : 0, q;
                    if (dtt_quick && dtt_randint(rng, 3)) continue;
                    memset(pl, 0, sizeof pl);
                    pl[i][0] = dt_partial(ops[o]);
                    pl[other][0] = j < c.ndim[other] + 2 ? dtt_option(j, c.ndim[other]) : dt_partial(ops[o]);
                    for (q = 0; q < c.nin; q++)
                        if (q != i && q != other) pl[q][0] = dt_replicate();
                    run_case(&m, &c, next_type(), pl);
                }
        }
    dtt_mesh_close(&m);
    section("partials", t0, c0);
}

/* named placement assertions on the 1-D mesh (np > 1), shapes whose every
   shard is non-empty, F32, with the batch-dim rule for N-D matmul too */
static void test_named(void)
{
    int one = dtt_np, i;
    dtt_mesh m;
    double t0 = now();
    long c0 = g_cases;
    if (!dtt_mesh_open(&m, g_comm, 1, &one)) return;
    for (i = 0; i < 2; i++) {
        dt_dtype t = i ? DT_F64 : DT_F32;
        int64_t B = 2 * dtt_np, M = 3 * dtt_np, K = 2 * dtt_np + 1, N = dtt_np + 2;
        /* batch dims sharded on both, with broadcasting: [B,M,K] S0 x [B,K,N] S0 -> S0;
           [B,1,M,K] S0 x [C,K,N] R -> S0 (a's batch); [M,K] R x [B,K,N] S0 -> S0 */
        int64_t a3[3], b3[3], a4[4], b3b[3], a2[2];
        dt_placement pl[MAXIN][DT_MAX_MESH_DIMS], want;
        const dt_tensor_desc *od;
        dt_tensor *x[2], *out = NULL;
        double *fa, *fb;
        int64_t n;
        int cs;
        a3[0] = B; a3[1] = M; a3[2] = K;
        b3[0] = B; b3[1] = K; b3[2] = N;
        a4[0] = B; a4[1] = 1; a4[2] = M; a4[3] = K;
        b3b[0] = 3; b3b[1] = K; b3b[2] = N;
        a2[0] = M; a2[1] = K;
        for (cs = 0; cs < 3; cs++) {
            mcase c;
            memset(pl, 0, sizeof pl);
            if (cs == 0) { c = mk2(K_MATMUL, 3, a3, 3, b3); pl[0][0] = dt_shard(0); pl[1][0] = dt_shard(0); want = dt_shard(0); }
            else if (cs == 1) { c = mk2(K_MATMUL, 4, a4, 3, b3b); pl[0][0] = dt_shard(0); want = dt_shard(0); }
            else { c = mk2(K_MATMUL, 2, a2, 3, b3); pl[1][0] = dt_shard(0); want = dt_shard(0); }
            run_case(&m, &c, t, pl); /* values */
            if (dtt_np < 2) continue;
            dtt_ctx("named batch case %d %s", cs, dtt_dtname(t));
            n = dtt_numel(c.ndim[0], c.shape[0]) > dtt_numel(c.ndim[1], c.shape[1]) ? dtt_numel(c.ndim[0], c.shape[0])
                                                                                     : dtt_numel(c.ndim[1], c.shape[1]);
            fa = (double *)dtt_malloc((size_t)n * sizeof(double));
            fb = (double *)dtt_malloc((size_t)n * sizeof(double));
            for (n = 0; n < dtt_numel(c.ndim[0], c.shape[0]); n++) fa[n] = val(t, 0, n);
            for (n = 0; n < dtt_numel(c.ndim[1], c.shape[1]); n++) fb[n] = val(t, 1, n);
            x[0] = dtt_from_full(&m, t, c.ndim[0], c.shape[0], pl[0], fa, 0.25);
            x[1] = dtt_from_full(&m, t, c.ndim[1], c.shape[1], pl[1], fb, 0.25);
            if (x[0] && x[1]) {
                CHECK_OK(dt_matmul(x[0], x[1], &out));
                od = out ? dt_tensor_get_desc(out) : NULL;
                if (od) CHECK(same_pl(od->placements[0], want), "batch-sharded matmul: output placement kind %d dim %d, want S0",
                              od->placements[0].kind, od->placements[0].dim);
            }
            dt_tensor_destroy(out);
            out = NULL;
            dt_tensor_destroy(x[0]);
            dt_tensor_destroy(x[1]);
            free(fa);
            free(fb);
        }
    }
    dtt_mesh_close(&m);
    section("named", t0, c0);
}

#include "summa_cases.h" /* the streamed matmul (SUMMA) */

int main(int argc, char **argv)
{
    dtt_rng rng;
    dtt_init(&argc, &argv, "ops_matmul");
    g_seed = dtt_seed(argc, argv, g_seed);
    rng.s = g_seed;
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    if (g_comm) {
        test_mm(&rng);
        test_bmm(&rng);
        test_addmm(&rng);
        test_linear(&rng);
        test_dot(&rng);
        test_matmul(&rng);
        test_other_partials(&rng);
        test_named();
        test_summa();
        dt_comm_destroy(g_comm);
    }
    /* make test-blas: the local GEMM this build must run */
    if (getenv("DT_TEST_GEMM"))
        CHECK(strcmp(dt__gemm_backend(), getenv("DT_TEST_GEMM")) == 0, "local GEMM is '%s', DT_TEST_GEMM wants '%s'",
              dt__gemm_backend(), getenv("DT_TEST_GEMM"));
    if (dtt_rank == 0 && getenv("DT_TEST_VERBOSE")) fprintf(stderr, "matmul: %ld cases, %ld output placements asserted\n", g_cases, g_asserted);
    return dtt_finish();
}
