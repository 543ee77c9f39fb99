/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_ops_model.c -- the model-level ops and the op machinery.

   - dt_embedding with every table placement (Replicate, row-sharded
     Shard(0), column-sharded Shard(1), Partial(SUM)) and index placements
     (Replicate, Shard(each dim)), I32 and I64 indices, 1-D and 2-D index
     tensors, vocabularies smaller than the rank count, on 1-D and 2-D meshes;
   - dt_cross_entropy with class-sharded (Shard(1), loss_parallel) and
     row-sharded logits, Replicate and Partial(SUM) logits, I32/I64 targets,
     logits large enough that exp overflows without the max subtraction;
   - seeded random chains of ops mixing every family (pointwise unary and
     binary with broadcasting, reductions, matmul/linear, softmax and norms,
     views, embedding, cross_entropy, axpy, cast) with random placements
     (Partial SUM/MAX/MIN inputs with real parts), each result checked
     against a serial replay in double;
   - the standard placements: colwise linear (Replicate x Shard(0) weight ->
     Shard(last)), rowwise (Shard(last) x Shard(1) weight -> Partial(SUM)),
     the two together on a [dp, tp] mesh, embedding row-sharded ->
     Partial(SUM);
   - the strategy cache stays bounded (dt_mesh_op_cache_count <= 256 after
     more than 300 distinct shapes) and results stay right after eviction;
   - dt_explain prints one line per op naming it (also linear with a bias
     and addmm), and nothing after NULL;
   - *out reuse in a time loop (same tensor and data pointer, right values);
   - bad input: inner-dim mismatch, batch broadcast failure, different
     meshes, mixed dtypes, wrong *out dtype/shape/placements/mesh, *out
     aliasing an input, out-of-range indices (also seen by one rank only),
     NULLs: the documented status, a message naming the call, nothing
     written;
   - ranks outside the mesh (desc.ranks): members get right values, the
     outside rank DT_OK, empty tensors and an untouched gather buffer (run
     last).

   Options: --quick (or DT_TEST_QUICK=1): fewer cases and chains; --seed N
   (or DT_TEST_SEED) seeds the chains. DT_TEST_VERBOSE=1 prints times. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

static dt_comm *g_comm = NULL;
static uint64_t g_seed = 777;

static double now(void) { return MPI_Wtime(); }
static void section(const char *name, double t0)
{
    if (dtt_rank == 0 && getenv("DT_TEST_VERBOSE")) fprintf(stderr, "model: %-12s %6.2f s\n", name, now() - t0);
}

static double hashv(uint64_t g, uint64_t salt)
{
    uint64_t u = g * 0x9E3779B97F4A7C15ull + salt * 0xBF58476D1CE4E5B9ull + 1;
    u ^= u >> 29;
    u *= 0x94D049BB133111EBull;
    u ^= u >> 32;
    return (double)(u % 1000003) / 1000003.0; /* [0, 1) */
}

/* a dyadic value in [-2, 2] (exact in every float dtype with 1/8 steps) */
static double dval(uint64_t g, uint64_t salt) { return floor(hashv(g, salt) * 33.0) / 8.0 - 2.0; }

/* shapes as arguments (C++ has no compound literals): a few rotating buffers */
static const int64_t *shn(int n, int64_t a, int64_t b, int64_t c)
{
    static int64_t buf[8][3];
    static int next = 0;
    int64_t *p = buf[next++ % 8];
    p[0] = a;
    p[1] = b;
    p[2] = c;
    (void)n;
    return p;
}
#define sh1(a) shn(1, (a), 0, 0)
#define sh2(a, b) shn(2, (a), (b), 0)
#define sh3(a, b, c) shn(3, (a), (b), (c))

/* the one 1-D mesh and a 2-D one with both dims > 1 where np allows */
static int open_1d(dtt_mesh *m)
{
    int one = dtt_np;
    return dtt_mesh_open(m, g_comm, 1, &one);
}
static int open_2d(dtt_mesh *m, int which)
{
    int fac[64 * DT_MAX_MESH_DIMS], n = dtt_factorizations(dtt_np, 2, fac, 64), i, cnt = 0;
    for (i = 0; i < n; i++)
        if (fac[i * DT_MAX_MESH_DIMS] > 1 && fac[i * DT_MAX_MESH_DIMS + 1] > 1 && cnt++ == which)
            return dtt_mesh_open(m, g_comm, 2, &fac[i * DT_MAX_MESH_DIMS]);
    if (cnt == 0 && which < n) return dtt_mesh_open(m, g_comm, 2, &fac[which * DT_MAX_MESH_DIMS]);
    return 0;
}

static dt_placement pl_code(int code, int ndim)
{
    if (code == 0) return dt_replicate();
    if (code <= ndim) return dt_shard(code - 1);
    return dt_partial(DT_SUM);
}

static int same_pl(dt_placement a, dt_placement b)
{
    if (a.kind != b.kind) return 0;
    if (a.kind == DT_SHARD) return a.dim == b.dim;
    if (a.kind == DT_PARTIAL) return a.reduce == b.reduce;
    return 1;
}

/* gather x and compare with want[] (numel n): |got - want| <= atol + rtol*|want| */
static int check_values(const dt_tensor *x, const double *want, int64_t n, double atol, double rtol, const char *what)
{
    double *got = (double *)dtt_malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    dt_status st = dtt_gather_full(x, got);
    int64_t g;
    int bad = 0;
    if (st != DT_OK) {
        CHECK(0, "%s: dt_tensor_gather returned %s: %s", what, dt_status_string(st), dt_last_error());
        bad = 1;
    }
    for (g = 0; g < n && !bad; g++)
        if (!(fabs(got[g] - want[g]) <= atol + rtol * fabs(want[g]))) {
            CHECK(0, "%s: element %lld = %.17g want %.17g", what, (long long)g, got[g], want[g]);
            bad = 1;
        }
    free(got);
    return !bad;
}

/* an integer index tensor with the values idx[] */
static dt_tensor *make_idx(const dtt_mesh *m, dt_dtype t, int ndim, const int64_t *shape, const dt_placement *pl,
                           const double *idx)
{
    return dtt_from_full(m, t, ndim, shape, pl, idx, 1.0);
}

/* ================================================================ embedding */

static void embed_case(const dtt_mesh *m, dt_dtype t, dt_dtype it, int64_t V, int64_t D, int indim, const int64_t *ish,
                       const dt_placement *tpl, const dt_placement *ipl, int assert_pl)
{
    int64_t ni = dtt_numel(indim, ish), i, d;
    double *tab = (double *)dtt_malloc((size_t)(V * D + 1) * sizeof(double));
    double *idx = (double *)dtt_malloc((size_t)(ni + 1) * sizeof(double));
    double *ref = (double *)dtt_malloc((size_t)(ni * D + 1) * sizeof(double));
    dt_tensor *tt, *ti, *out = NULL;
    char s1[64], s2[64], s3[64];
    int k;
    dtt_ctx("embedding mesh %s %s table (%lld,%lld)%s idx %s %s%s", m->name, dtt_dtname(t), (long long)V, (long long)D,
            dtt_pl_str(tpl, m->nd, s1, sizeof s1), dtt_dtname(it), dtt_shape_str(indim, ish, s2, sizeof s2),
            dtt_pl_str(ipl, m->nd, s3, sizeof s3));
    for (i = 0; i < V * D; i++) tab[i] = t == DT_I64 || t == DT_I32 ? (double)((int64_t)(hashv((uint64_t)i, 5) * 2001) - 1000) : dval((uint64_t)i, 5);
    for (i = 0; i < ni; i++) idx[i] = (double)((i * 7 + 3 + (int64_t)(hashv((uint64_t)i, 9) * 5)) % V); /* repeats */
    if (ni > 1) { idx[0] = 0; idx[ni - 1] = (double)(V - 1); }
    for (i = 0; i < ni; i++)
        for (d = 0; d < D; d++) ref[i * D + d] = tab[(int64_t)idx[i] * D + d];
    tt = dtt_from_full(m, t, 2, sh2(V, D), tpl, tab, dtt_is_float(t) ? 0.25 : 1.0);
    ti = make_idx(m, it, indim, ish, ipl, idx);
    if (tt && ti) {
        CHECK_OK(dt_embedding(tt, ti, &out));
        if (out) {
            const dt_tensor_desc *od = dt_tensor_get_desc(out);
            int ok = od->ndim == indim + 1 && od->dtype == t && od->shape[indim] == D;
            for (k = 0; k < indim && ok; k++) ok = od->shape[k] == ish[k];
            CHECK(ok, "result shape %s %s", dtt_shape_str(od->ndim, od->shape, s1, sizeof s1), dtt_dtname(od->dtype));
            dtt_check_own_layout(m, out, "embedding");
            if (ok) check_values(out, ref, ni * D, 0, 0, "embedding");
            for (k = 0; k < m->nd && assert_pl; k++) {
                dt_placement want;
                int have = 0;
                if (m->shape[k] < 2) continue;
                /* row-sharded: the masked lookup moves nothing (whatever the sizes) */
                if (tpl[k].kind == DT_SHARD && tpl[k].dim == 0 && ipl[k].kind == DT_REPLICATE) { want = dt_partial(DT_SUM); have = 1; }
                else if (tpl[k].kind == DT_SHARD && tpl[k].dim == 1 && ipl[k].kind == DT_REPLICATE) { want = dt_shard(indim); have = 1; }
                else if (tpl[k].kind == DT_REPLICATE && ipl[k].kind == DT_SHARD) { want = ipl[k]; have = 1; }
                if (have)
                    CHECK(same_pl(od->placements[k], want), "mesh dim %d: output %s, want %s", k,
                          dtt_pl_str(&od->placements[k], 1, s1, sizeof s1), dtt_pl_str(&want, 1, s2, sizeof s2));
            }
        }
    }
    dt_tensor_destroy(out);
    dt_tensor_destroy(tt);
    dt_tensor_destroy(ti);
    free(tab);
    free(idx);
    free(ref);
}

static void test_embedding(void)
{
    static const int64_t VD[][2] = { { 11, 6 }, { 3, 5 }, { 1, 2 }, { 16, 13 }, { 400, 3 } };
    static const int64_t i1[1] = { 9 }, i2[2] = { 2, 5 }, i3[1] = { 1 };
    static const dt_dtype tt[] = { DT_F32, DT_F64, DT_BF16, DT_F16, DT_I64 };
    double t0 = now();
    int rot = 0, s, a, b, w;
    dtt_mesh m;
    if (open_1d(&m)) {
        for (s = 0; s < NELEM(VD); s++) {
            if (dtt_quick && (s == 3 || s == 4)) continue;
            for (a = 0; a < 4; a++) /* table R, S0, S1, P */
                for (b = 0; b < 3; b++) { /* idx R, S0, S1 (2-D idx) */
                    dt_placement tp[DT_MAX_MESH_DIMS], ip[DT_MAX_MESH_DIMS];
                    int two = (s + b) % 2 == 1 || b == 2;
                    memset(tp, 0, sizeof tp);
                    memset(ip, 0, sizeof ip);
                    tp[0] = pl_code(a, 2);
                    ip[0] = pl_code(b, two ? 2 : 1);
                    embed_case(&m, tt[rot % NELEM(tt)], rot % 2 ? DT_I32 : DT_I64, VD[s][0], VD[s][1], two ? 2 : 1,
                               two ? i2 : (s == 2 ? i3 : i1), tp, ip, 1);
                    rot++;
                }
        }
        dtt_mesh_close(&m);
    }
    for (w = 0; w < 2; w++) {
        if (!open_2d(&m, w)) continue;
        for (a = 0; a < 16; a++)
            for (b = 0; b < 9; b++) {
                dt_placement tp[DT_MAX_MESH_DIMS], ip[DT_MAX_MESH_DIMS];
                if (dtt_quick && (a * 9 + b) % 11 != 0) continue;
                if (!dtt_quick && w == 1 && (a * 9 + b) % 3 != 0) continue;
                memset(tp, 0, sizeof tp);
                memset(ip, 0, sizeof ip);
                tp[0] = pl_code(a / 4, 2);
                tp[1] = pl_code(a % 4, 2);
                ip[0] = pl_code(b / 3, 2);
                ip[1] = pl_code(b % 3, 2);
                embed_case(&m, tt[rot % NELEM(tt)], rot % 2 ? DT_I32 : DT_I64, 13, 7, 2, i2, tp, ip, 1);
                rot++;
            }
        dtt_mesh_close(&m);
    }
    section("embedding", t0);
}

/* ================================================================ cross_entropy */

static double xent_ref(const double *l, const double *tg, int64_t N, int64_t C)
{
    int64_t i, j;
    double s = 0;
    for (i = 0; i < N; i++) {
        double mx = -INFINITY, se = 0;
        for (j = 0; j < C; j++) mx = l[i * C + j] > mx ? l[i * C + j] : mx;
        for (j = 0; j < C; j++) se += exp(l[i * C + j] - mx);
        s += mx + log(se) - l[i * C + (int64_t)tg[i]];
    }
    return N ? s / (double)N : 0.0;
}

static void xent_case(const dtt_mesh *m, dt_dtype t, dt_dtype it, int64_t N, int64_t C, double amp,
                      const dt_placement *lpl, const dt_placement *tpl, int assert_pl)
{
    double *l = (double *)dtt_malloc((size_t)(N * C + 1) * sizeof(double));
    double *tg = (double *)dtt_malloc((size_t)(N + 1) * sizeof(double));
    double want;
    dt_tensor *tl, *tt, *out = NULL;
    int64_t i;
    int k;
    char s1[64], s2[64];
    dtt_ctx("cross_entropy mesh %s %s (%lld,%lld) amp %g logits %s target %s %s", m->name, dtt_dtname(t), (long long)N,
            (long long)C, amp, dtt_pl_str(lpl, m->nd, s1, sizeof s1), dtt_dtname(it), dtt_pl_str(tpl, m->nd, s2, sizeof s2));
    for (i = 0; i < N * C; i++) l[i] = dval((uint64_t)i, 17) * amp; /* amp 64: |l| up to 128, exp overflows f32 */
    for (i = 0; i < N; i++) tg[i] = (double)((i * 5 + 2) % C);
    want = xent_ref(l, tg, N, C);
    tl = dtt_from_full(m, t, 2, sh2(N, C), lpl, l, 0.25 * amp);
    tt = make_idx(m, it, 1, &N, tpl, tg);
    if (tl && tt) {
        CHECK_OK(dt_cross_entropy(tl, tt, &out));
        if (out) {
            const dt_tensor_desc *od = dt_tensor_get_desc(out);
            double tol = t == DT_F64 ? 1e-12 : t == DT_F32 ? 2e-5 : 3e-2;
            CHECK(od->ndim == 0 && od->dtype == t, "result ndim %d dtype %s", od->ndim, dtt_dtname(od->dtype));
            dtt_check_own_layout(m, out, "cross_entropy");
            check_values(out, &want, 1, tol * (1 + amp), tol, "cross_entropy");
            for (k = 0; k < m->nd && assert_pl; k++) {
                if (m->shape[k] < 2) continue;
                if (lpl[k].kind == DT_SHARD && lpl[k].dim == 1 && tpl[k].kind == DT_REPLICATE)
                    CHECK(od->placements[k].kind == DT_REPLICATE, "mesh dim %d: class-sharded loss is %s, want R", k,
                          dtt_pl_str(&od->placements[k], 1, s1, sizeof s1));
                if (lpl[k].kind == DT_SHARD && lpl[k].dim == 0 && tpl[k].kind == DT_SHARD)
                    CHECK(same_pl(od->placements[k], dt_partial(DT_SUM)), "mesh dim %d: row-sharded loss is %s, want Psum",
                          k, dtt_pl_str(&od->placements[k], 1, s1, sizeof s1));
            }
        }
    }
    dt_tensor_destroy(out);
    dt_tensor_destroy(tl);
    dt_tensor_destroy(tt);
    free(l);
    free(tg);
}

static void test_cross_entropy(void)
{
    static const int64_t NC[][2] = { { 6, 11 }, { 13, 3 }, { 1, 1 }, { 2, 17 }, { 5, 2 } };
    static const dt_dtype ft[] = { DT_F32, DT_F64, DT_F32, DT_BF16, DT_F64, DT_F16 };
    double t0 = now();
    int s, a, b, w, rot = 0;
    dtt_mesh m;
    if (open_1d(&m)) {
        for (s = 0; s < NELEM(NC); s++)
            for (a = 0; a < 4; a++)
                for (b = 0; b < 2; b++) {
                    dt_placement lp[DT_MAX_MESH_DIMS], tp[DT_MAX_MESH_DIMS];
                    dt_dtype t = ft[rot % NELEM(ft)];
                    if (dtt_quick && s >= 3 && (a + b) % 2) continue;
                    memset(lp, 0, sizeof lp);
                    memset(tp, 0, sizeof tp);
                    lp[0] = pl_code(a, 2);
                    tp[0] = pl_code(b, 1);
                    xent_case(&m, t, rot % 3 ? DT_I64 : DT_I32, NC[s][0], NC[s][1], 1.0, lp, tp, 1);
                    rot++;
                }
        /* large logits (exp(128) overflows f32): class- and row-sharded, f32 and f64 */
        for (a = 0; a < 4; a++) {
            dt_placement lp[DT_MAX_MESH_DIMS], tp[DT_MAX_MESH_DIMS];
            memset(lp, 0, sizeof lp);
            memset(tp, 0, sizeof tp);
            lp[0] = pl_code(a % 2 ? 2 : 1, 2);
            tp[0] = pl_code(a % 2 ? 0 : 1, 1);
            xent_case(&m, a < 2 ? DT_F32 : DT_F64, DT_I64, 7, 2 * dtt_np + 3, 64.0, lp, tp, 1);
        }
        dtt_mesh_close(&m);
    }
    for (w = 0; w < 2; w++) {
        if (!open_2d(&m, w)) continue;
        for (a = 0; a < 16; a++)
            for (b = 0; b < 4; b++) {
                dt_placement lp[DT_MAX_MESH_DIMS], tp[DT_MAX_MESH_DIMS];
                if (dtt_quick ? (a * 4 + b) % 9 != 0 : (w == 1 && (a + b) % 3 != 0)) continue;
                memset(lp, 0, sizeof lp);
                memset(tp, 0, sizeof tp);
                lp[0] = pl_code(a / 4, 2);
                lp[1] = pl_code(a % 4, 2);
                tp[0] = pl_code(b / 2, 1);
                tp[1] = pl_code(b % 2, 1);
                xent_case(&m, ft[rot % NELEM(ft)], rot % 2 ? DT_I64 : DT_I32, 7, 9, rot % 4 == 0 ? 40.0 : 1.0, lp, tp, 1);
                rot++;
            }
        dtt_mesh_close(&m);
    }
    section("xent", t0);
}

/* ================================================================ serial tensors */

typedef struct st {
    int nd;
    int64_t sh[DT_MAX_DIMS];
    double *v;
} st;

static int64_t st_n(const st *a) { return dtt_numel(a->nd, a->sh); }
static st st_make(int nd, const int64_t *sh)
{
    st a;
    int k;
    memset(&a, 0, sizeof a);
    a.nd = nd;
    for (k = 0; k < nd; k++) a.sh[k] = sh[k];
    a.v = (double *)calloc((size_t)(dtt_numel(nd, sh) + 1), sizeof(double));
    if (!a.v) exit(2);
    return a;
}
static st st_copy(const st *a)
{
    st b = st_make(a->nd, a->sh);
    memcpy(b.v, a->v, (size_t)st_n(a) * sizeof(double));
    return b;
}
static void st_free(st *a)
{
    free(a->v);
    a->v = NULL;
}
static double st_maxabs(const st *a)
{
    int64_t i, n = st_n(a);
    double mx = 0;
    for (i = 0; i < n; i++) mx = fabs(a->v[i]) > mx ? fabs(a->v[i]) : mx;
    return mx;
}
static void st_strides(const st *a, int64_t *s)
{
    int k;
    int64_t x = 1;
    for (k = a->nd - 1; k >= 0; k--) {
        s[k] = x;
        x *= a->sh[k];
    }
}

/* numpy broadcasting of a and b with op; 0 if they do not broadcast */
static int st_binary(const st *a, const st *b, int op, st *out)
{
    int nd = a->nd > b->nd ? a->nd : b->nd, d;
    int64_t sh[DT_MAX_DIMS], sa[DT_MAX_DIMS], sb[DT_MAX_DIMS], as[DT_MAX_DIMS], bs[DT_MAX_DIMS], i, n;
    st_strides(a, as);
    st_strides(b, bs);
    for (d = 0; d < nd; d++) {
        int da = d - (nd - a->nd), db = d - (nd - b->nd);
        int64_t x = da >= 0 ? a->sh[da] : 1, y = db >= 0 ? b->sh[db] : 1;
        if (x != y && x != 1 && y != 1) return 0;
        sh[d] = x == 1 ? y : x;
        sa[d] = da >= 0 && a->sh[da] != 1 ? as[da] : 0;
        sb[d] = db >= 0 && b->sh[db] != 1 ? bs[db] : 0;
    }
    *out = st_make(nd, sh);
    n = st_n(out);
    for (i = 0; i < n; i++) {
        int64_t rem = i, ia = 0, ib = 0;
        double x, y, r = 0;
        for (d = nd - 1; d >= 0; d--) {
            int64_t c = rem % sh[d];
            rem /= sh[d];
            ia += c * sa[d];
            ib += c * sb[d];
        }
        x = a->v[ia];
        y = b->v[ib];
        switch (op) {
        case 0: r = x + y; break;
        case 1: r = x - y; break;
        case 2: r = x * y; break;
        case 3: r = x > y ? x : y; break;
        case 4: r = x < y ? x : y; break;
        }
        out->v[i] = r;
    }
    return 1;
}

/* reduce over the dims in mask: 0 sum, 1 mean, 2 max, 3 min */
static st st_reduce(const st *a, unsigned mask, int op, int keepdim)
{
    int64_t sh[DT_MAX_DIMS], ksh[DT_MAX_DIMS], as[DT_MAX_DIMS], i, n = st_n(a), cnt = 1, *tmp;
    int d, nd = 0;
    st out, full;
    for (d = 0; d < a->nd; d++) {
        ksh[d] = (mask >> d) & 1u ? 1 : a->sh[d];
        if ((mask >> d) & 1u) cnt *= a->sh[d];
        if (!((mask >> d) & 1u) || keepdim) sh[nd++] = ksh[d];
    }
    full = st_make(a->nd, ksh);
    tmp = (int64_t *)calloc((size_t)st_n(&full) + 1, sizeof(int64_t));
    for (i = 0; i < st_n(&full); i++) full.v[i] = op == 2 ? -INFINITY : op == 3 ? INFINITY : 0.0;
    st_strides(&full, as);
    for (i = 0; i < n; i++) {
        int64_t rem = i, o = 0;
        for (d = a->nd - 1; d >= 0; d--) {
            int64_t c = rem % a->sh[d];
            rem /= a->sh[d];
            if (!((mask >> d) & 1u)) o += c * as[d];
        }
        if (op <= 1) full.v[o] += a->v[i];
        else if (op == 2) full.v[o] = a->v[i] > full.v[o] ? a->v[i] : full.v[o];
        else full.v[o] = a->v[i] < full.v[o] ? a->v[i] : full.v[o];
    }
    if (op == 1)
        for (i = 0; i < st_n(&full); i++) full.v[i] /= (double)cnt;
    free(tmp);
    out = st_make(nd, sh);
    memcpy(out.v, full.v, (size_t)st_n(&out) * sizeof(double));
    st_free(&full);
    return out;
}

static st st_permute(const st *a, const int *perm)
{
    int64_t sh[DT_MAX_DIMS], as[DT_MAX_DIMS], i, n = st_n(a);
    int d;
    st out;
    for (d = 0; d < a->nd; d++) sh[d] = a->sh[perm[d]];
    out = st_make(a->nd, sh);
    st_strides(a, as);
    for (i = 0; i < n; i++) {
        int64_t rem = i, src = 0;
        for (d = a->nd - 1; d >= 0; d--) {
            int64_t c = rem % sh[d];
            rem /= sh[d];
            src += c * as[perm[d]];
        }
        out.v[i] = a->v[src];
    }
    return out;
}

/* [outer, n, inner] view along dim */
static void st_split3(const st *a, int dim, int64_t *outer, int64_t *n, int64_t *inner)
{
    int d;
    *outer = 1;
    *inner = 1;
    for (d = 0; d < dim; d++) *outer *= a->sh[d];
    for (d = dim + 1; d < a->nd; d++) *inner *= a->sh[d];
    *n = a->sh[dim];
}

static st st_softmax(const st *a, int dim, int logsm)
{
    int64_t o, n, in, i, j, l;
    st out = st_copy(a);
    st_split3(a, dim, &o, &n, &in);
    for (i = 0; i < o; i++)
        for (l = 0; l < in; l++) {
            double mx = -INFINITY, se = 0;
            for (j = 0; j < n; j++) mx = a->v[(i * n + j) * in + l] > mx ? a->v[(i * n + j) * in + l] : mx;
            for (j = 0; j < n; j++) se += exp(a->v[(i * n + j) * in + l] - mx);
            for (j = 0; j < n; j++) {
                double x = a->v[(i * n + j) * in + l] - mx;
                out.v[(i * n + j) * in + l] = logsm ? x - log(se) : exp(x) / se;
            }
        }
    return out;
}

static st st_norm(const st *a, const double *w, const double *b, double eps, int rms)
{
    int64_t n = a->nd ? a->sh[a->nd - 1] : 1, rows = n ? st_n(a) / n : 0, r, j;
    st out = st_copy(a);
    for (r = 0; r < rows; r++) {
        const double *x = a->v + r * n;
        double mean = 0, var = 0;
        for (j = 0; j < n; j++) mean += x[j];
        mean /= (double)n;
        if (rms) {
            for (j = 0; j < n; j++) var += x[j] * x[j];
            var /= (double)n;
            for (j = 0; j < n; j++) out.v[r * n + j] = x[j] / sqrt(var + eps) * (w ? w[j] : 1.0);
        } else {
            for (j = 0; j < n; j++) var += (x[j] - mean) * (x[j] - mean);
            var /= (double)n;
            for (j = 0; j < n; j++) out.v[r * n + j] = (x[j] - mean) / sqrt(var + eps) * (w ? w[j] : 1.0) + (b ? b[j] : 0.0);
        }
    }
    return out;
}

static st st_narrow(const st *a, int dim, int64_t start, int64_t len)
{
    int64_t sh[DT_MAX_DIMS], o, n, in, i, j, l;
    int d;
    st out;
    for (d = 0; d < a->nd; d++) sh[d] = a->sh[d];
    sh[dim] = len;
    out = st_make(a->nd, sh);
    st_split3(a, dim, &o, &n, &in);
    for (i = 0; i < o; i++)
        for (j = 0; j < len; j++)
            for (l = 0; l < in; l++) out.v[(i * len + j) * in + l] = a->v[(i * n + start + j) * in + l];
    return out;
}

static st st_cat(const st *a, const st *b, int dim)
{
    int64_t sh[DT_MAX_DIMS], o, na, nb, in, i, j, l, nn;
    int d;
    st out;
    for (d = 0; d < a->nd; d++) sh[d] = a->sh[d];
    sh[dim] = a->sh[dim] + b->sh[dim];
    out = st_make(a->nd, sh);
    st_split3(a, dim, &o, &na, &in);
    nb = b->sh[dim];
    nn = na + nb;
    for (i = 0; i < o; i++)
        for (l = 0; l < in; l++) {
            for (j = 0; j < na; j++) out.v[(i * nn + j) * in + l] = a->v[(i * na + j) * in + l];
            for (j = 0; j < nb; j++) out.v[(i * nn + na + j) * in + l] = b->v[(i * nb + j) * in + l];
        }
    return out;
}

/* ================================================================ random chains */

typedef struct ent {
    dt_tensor *x;
    st s;
} ent;

#define POOL 4
static long g_chain_ops = 0;

typedef struct chain {
    const dtt_mesh *m;
    dtt_rng *r;
    dt_dtype t;
    ent pool[POOL];
    int n;
    uint64_t salt;
    int resync; /* f32: the serial copy follows the gathered result after each check */
    int ops;
    char what[256];
} chain;

static void random_pl(chain *c, int ndim, dt_placement *pl, int allow_partial)
{
    static const dt_reduce ops[3] = { DT_SUM, DT_MAX, DT_MIN };
    dt_reduce op = ops[dtt_randint(c->r, 3)];
    int k;
    memset(pl, 0, sizeof(dt_placement) * DT_MAX_MESH_DIMS);
    for (k = 0; k < c->m->nd; k++) {
        int x = dtt_randint(c->r, 6);
        if (x <= 1 || (x == 5 && !allow_partial)) pl[k] = dt_replicate();
        else if (x == 5) pl[k] = dt_partial(op);
        else if (ndim > 0) pl[k] = dt_shard(dtt_randint(c->r, ndim));
    }
}

/* a fresh tensor (dyadic values in [-2, 2]) with random placements */
static ent fresh(chain *c, int nd, const int64_t *sh, int allow_partial)
{
    ent e;
    int64_t i, n;
    dt_placement pl[DT_MAX_MESH_DIMS];
    e.s = st_make(nd, sh);
    n = st_n(&e.s);
    c->salt++;
    for (i = 0; i < n; i++) e.s.v[i] = dval((uint64_t)i, c->salt);
    random_pl(c, nd, pl, allow_partial);
    e.x = dtt_from_full(c->m, c->t, nd, sh, pl, e.s.v, 0.125);
    return e;
}

static void ent_free(ent *e)
{
    dt_tensor_destroy(e->x);
    e->x = NULL;
    st_free(&e->s);
}

/* compare a result with its serial value; ok -> 1 */
static int verify(chain *c, ent *e, const char *op)
{
    const dt_tensor_desc *d = e->x ? dt_tensor_get_desc(e->x) : NULL;
    int64_t n = st_n(&e->s), g;
    double *got, scale = st_maxabs(&e->s), tol;
    int k, ok = 1;
    dt_status stt;
    c->ops++;
    dtt_ctx("%s op %d %s", c->what, c->ops, op);
    if (!d) {
        CHECK(0, "no result");
        return 0;
    }
    ok = d->ndim == e->s.nd && d->dtype == c->t;
    for (k = 0; k < d->ndim && ok; k++) ok = d->shape[k] == e->s.sh[k];
    if (!ok) {
        char s1[64], s2[64];
        CHECK(0, "result %s %s, want %s", dtt_dtname(d->dtype), dtt_shape_str(d->ndim, d->shape, s1, sizeof s1),
              dtt_shape_str(e->s.nd, e->s.sh, s2, sizeof s2));
        return 0;
    }
    if (dtt_check_own_layout(c->m, e->x, "result")) return 0;
    got = (double *)dtt_malloc((size_t)(n + 1) * sizeof(double));
    stt = dtt_gather_full(e->x, got);
    if (stt != DT_OK) {
        CHECK(0, "gather: %s %s", dt_status_string(stt), dt_last_error());
        free(got);
        return 0;
    }
    tol = (c->t == DT_F64 ? 1e-9 : 2e-3) * (scale > 1 ? scale : 1);
    for (g = 0; g < n; g++)
        if (!(fabs(got[g] - e->s.v[g]) <= tol)) {
            char s1[64];
            CHECK(0, "element %lld = %.17g want %.17g (tol %.3g, placements %s)", (long long)g, got[g], e->s.v[g], tol,
                  dtt_pl_str(d->placements, c->m->nd, s1, sizeof s1));
            ok = 0;
            break;
        }
    if (ok && c->resync) memcpy(e->s.v, got, (size_t)n * sizeof(double));
    free(got);
    return ok;
}

static void push(chain *c, ent e)
{
    if (!e.x) {
        st_free(&e.s);
        return;
    }
    if (c->n == POOL) {
        int v = dtt_randint(c->r, POOL);
        ent_free(&c->pool[v]);
        c->pool[v] = c->pool[--c->n];
    }
    c->pool[c->n++] = e;
}

/* a pool entry (or a fresh one) with at least `minnd` dims */
static ent *pick(chain *c, int minnd, int maxnd)
{
    int i, tries;
    for (tries = 0; tries < 6 && c->n; tries++) {
        i = dtt_randint(c->r, c->n);
        if (c->pool[i].s.nd >= minnd && c->pool[i].s.nd <= maxnd) return &c->pool[i];
    }
    {
        int64_t sh[DT_MAX_DIMS];
        int nd = minnd + dtt_randint(c->r, maxnd - minnd + 1), k;
        if (nd > 3) nd = minnd > 3 ? minnd : 3;
        for (k = 0; k < nd; k++) sh[k] = 1 + dtt_randint(c->r, dtt_randint(c->r, 3) ? 7 : 13);
        push(c, fresh(c, nd, sh, 1));
        return c->n ? &c->pool[c->n - 1] : NULL;
    }
}

static void op_unary(chain *c)
{
    ent *a = pick(c, 0, 4), e;
    int which = dtt_randint(c->r, 10);
    double p = (double)(dtt_randint(c->r, 7) - 3) * 0.5;
    int64_t i, n;
    dt_status s = DT_OK;
    static const char *const names[] = { "neg", "abs", "scale", "shift", "tanh", "sigmoid", "relu", "exp", "silu", "gelu" };
    if (!a) return;
    if (which == 7 && st_maxabs(&a->s) > 8) which = 4;
    e.s = st_copy(&a->s);
    e.x = NULL;
    n = st_n(&e.s);
    for (i = 0; i < n; i++) {
        double x = e.s.v[i];
        switch (which) {
        case 0: x = -x; break;
        case 1: x = fabs(x); break;
        case 2: x = x * p; break;
        case 3: x = x + p; break;
        case 4: x = tanh(x); break;
        case 5: x = 1.0 / (1.0 + exp(-x)); break;
        case 6: x = x > 0 ? x : 0; break;
        case 7: x = exp(x); break;
        case 8: x = x / (1.0 + exp(-x)); break;
        case 9: x = 0.5 * x * (1.0 + erf(x / sqrt(2.0))); break;
        }
        e.s.v[i] = x;
    }
    switch (which) {
    case 0: s = dt_neg(a->x, &e.x); break;
    case 1: s = dt_abs(a->x, &e.x); break;
    case 2: s = dt_scale(a->x, p, &e.x); break;
    case 3: s = dt_shift(a->x, p, &e.x); break;
    case 4: s = dt_tanh(a->x, &e.x); break;
    case 5: s = dt_sigmoid(a->x, &e.x); break;
    case 6: s = dt_relu(a->x, &e.x); break;
    case 7: s = dt_exp(a->x, &e.x); break;
    case 8: s = dt_silu(a->x, &e.x); break;
    case 9: s = dt_gelu(a->x, &e.x); break;
    }
    dtt_ctx("%s op %d %s", c->what, c->ops + 1, names[which]);
    CHECK(s == DT_OK, "%s returned %s: %s", names[which], dt_status_string(s), dt_last_error());
    if (s == DT_OK) verify(c, &e, names[which]);
    push(c, e);
}

static void op_binary(chain *c)
{
    ent *a = pick(c, 0, 4), b, e;
    int which = dtt_randint(c->r, 5), k, bnd;
    int64_t sh[DT_MAX_DIMS];
    dt_status s = DT_OK;
    static const char *const names[] = { "add", "sub", "mul", "maximum", "minimum" };
    if (!a) return;
    /* b: a's shape, a suffix of it, with some dims 1 (or a's with b's missing) */
    bnd = a->s.nd - dtt_randint(c->r, a->s.nd + 1);
    for (k = 0; k < bnd; k++) sh[k] = dtt_randint(c->r, 3) ? a->s.sh[a->s.nd - bnd + k] : 1;
    b = fresh(c, bnd, sh, 1);
    if (!b.x) { st_free(&b.s); return; }
    if (dtt_randint(c->r, 2)) { /* b op a as well */
        ent *t = a;
        (void)t;
    }
    if (!st_binary(&a->s, &b.s, which, &e.s)) {
        CHECK(0, "test bug: shapes do not broadcast");
        ent_free(&b);
        return;
    }
    e.x = NULL;
    switch (which) {
    case 0: s = dt_add(a->x, b.x, &e.x); break;
    case 1: s = dt_sub(a->x, b.x, &e.x); break;
    case 2: s = dt_mul(a->x, b.x, &e.x); break;
    case 3: s = dt_maximum(a->x, b.x, &e.x); break;
    case 4: s = dt_minimum(a->x, b.x, &e.x); break;
    }
    dtt_ctx("%s op %d %s", c->what, c->ops + 1, names[which]);
    CHECK(s == DT_OK, "%s returned %s: %s", names[which], dt_status_string(s), dt_last_error());
    if (s == DT_OK) verify(c, &e, names[which]);
    ent_free(&b);
    push(c, e);
}

static void op_reduce(chain *c)
{
    ent *a = pick(c, 1, 4), e;
    int which = dtt_randint(c->r, 4), dim, keep = dtt_randint(c->r, 2), all = dtt_randint(c->r, 5) == 0;
    dt_status s = DT_OK;
    static const char *const names[] = { "sum", "mean", "max", "min" };
    int dims[1];
    if (!a) return;
    dim = dtt_randint(c->r, a->s.nd);
    if (which >= 2 && st_n(&a->s) == 0) which = 0; /* max of nothing */
    dims[0] = dtt_randint(c->r, 2) ? dim : dim - a->s.nd;
    e.s = st_reduce(&a->s, all ? (1u << a->s.nd) - 1u : 1u << dim, which, keep);
    e.x = NULL;
    switch (which) {
    case 0: s = dt_sum(a->x, all ? 0 : 1, all ? NULL : dims, keep, &e.x); break;
    case 1: s = dt_mean(a->x, all ? 0 : 1, all ? NULL : dims, keep, &e.x); break;
    case 2: s = dt_max(a->x, all ? 0 : 1, all ? NULL : dims, keep, &e.x); break;
    case 3: s = dt_min(a->x, all ? 0 : 1, all ? NULL : dims, keep, &e.x); break;
    }
    dtt_ctx("%s op %d %s", c->what, c->ops + 1, names[which]);
    CHECK(s == DT_OK, "%s returned %s: %s", names[which], dt_status_string(s), dt_last_error());
    if (s == DT_OK) verify(c, &e, names[which]);
    push(c, e);
}

static void op_matmul(chain *c)
{
    ent *a = pick(c, 1, 3), w, bias, e;
    int lin = dtt_randint(c->r, 2), hasb = dtt_randint(c->r, 2), ond, k;
    int64_t K, N = 1 + dtt_randint(c->r, 6), sh[2], osh[DT_MAX_DIMS];
    dt_status s;
    if (!a) return;
    K = a->s.sh[a->s.nd - 1];
    if (lin) { sh[0] = N; sh[1] = K; }
    else { sh[0] = K; sh[1] = N; }
    w = fresh(c, dtt_randint(c->r, 4) == 0 && !lin ? 1 : 2, sh, 1);
    bias = fresh(c, 1, &N, 1);
    if (!w.x || !bias.x) {
        ent_free(&w);
        ent_free(&bias);
        return;
    }
    memset(&e, 0, sizeof e);
    if (lin) {
        st wt;
        int perm[2] = { 1, 0 };
        int64_t i, n;
        wt = st_permute(&w.s, perm);
        dtt_ref_matmul(a->s.v, a->s.nd, a->s.sh, wt.v, 2, wt.sh, NULL, &ond, osh);
        e.s = st_make(ond, osh);
        dtt_ref_matmul(a->s.v, a->s.nd, a->s.sh, wt.v, 2, wt.sh, e.s.v, &ond, osh);
        st_free(&wt);
        n = st_n(&e.s);
        if (hasb)
            for (i = 0; i < n; i++) e.s.v[i] += bias.s.v[i % N];
        s = dt_linear(a->x, w.x, hasb ? bias.x : NULL, &e.x);
    } else {
        dtt_ref_matmul(a->s.v, a->s.nd, a->s.sh, w.s.v, w.s.nd, w.s.sh, NULL, &ond, osh);
        e.s = st_make(ond, osh);
        dtt_ref_matmul(a->s.v, a->s.nd, a->s.sh, w.s.v, w.s.nd, w.s.sh, e.s.v, &ond, osh);
        s = dt_matmul(a->x, w.x, &e.x);
    }
    (void)k;
    dtt_ctx("%s op %d %s", c->what, c->ops + 1, lin ? "linear" : "matmul");
    CHECK(s == DT_OK, "%s returned %s: %s", lin ? "linear" : "matmul", dt_status_string(s), dt_last_error());
    if (s == DT_OK) verify(c, &e, lin ? "linear" : "matmul");
    ent_free(&w);
    ent_free(&bias);
    push(c, e);
}

static void op_norm(chain *c)
{
    ent *a = pick(c, 1, 4), w, b, e;
    int which = dtt_randint(c->r, 4), dim, usew = dtt_randint(c->r, 3) != 0, useb = dtt_randint(c->r, 2);
    int64_t n;
    dt_status s = DT_OK;
    static const char *const names[] = { "softmax", "log_softmax", "layer_norm", "rms_norm" };
    if (!a) return;
    n = a->s.sh[a->s.nd - 1];
    dim = dtt_randint(c->r, a->s.nd);
    w = fresh(c, 1, &n, 0);
    b = fresh(c, 1, &n, 0);
    if (!w.x || !b.x) {
        ent_free(&w);
        ent_free(&b);
        return;
    }
    e.x = NULL;
    switch (which) {
    case 0: case 1:
        e.s = st_softmax(&a->s, dim, which);
        s = which ? dt_log_softmax(a->x, dtt_randint(c->r, 2) ? dim : dim - a->s.nd, &e.x)
                  : dt_softmax(a->x, dim, &e.x);
        break;
    case 2:
        e.s = st_norm(&a->s, usew ? w.s.v : NULL, useb ? b.s.v : NULL, 1e-5, 0);
        s = dt_layer_norm(a->x, usew ? w.x : NULL, useb ? b.x : NULL, 1e-5, &e.x);
        break;
    case 3:
        e.s = st_norm(&a->s, usew ? w.s.v : NULL, NULL, 1e-5, 1);
        s = dt_rms_norm(a->x, usew ? w.x : NULL, 1e-5, &e.x);
        break;
    }
    dtt_ctx("%s op %d %s", c->what, c->ops + 1, names[which]);
    CHECK(s == DT_OK, "%s returned %s: %s", names[which], dt_status_string(s), dt_last_error());
    if (s == DT_OK) verify(c, &e, names[which]);
    ent_free(&w);
    ent_free(&b);
    push(c, e);
}

static void op_view(chain *c)
{
    ent *a = pick(c, 1, 4), e, b;
    int which = dtt_randint(c->r, 7), d0, d1, k;
    dt_status s = DT_OK;
    static const char *const names[] = { "transpose", "permute", "reshape", "unsqueeze", "squeeze", "narrow", "cat" };
    if (!a) return;
    memset(&e, 0, sizeof e);
    d0 = dtt_randint(c->r, a->s.nd);
    d1 = dtt_randint(c->r, a->s.nd);
    switch (which) {
    case 0: {
        int perm[DT_MAX_DIMS];
        for (k = 0; k < a->s.nd; k++) perm[k] = k;
        perm[d0] = d1;
        perm[d1] = d0;
        e.s = st_permute(&a->s, perm);
        s = dt_transpose(a->x, d0, d1 - (dtt_randint(c->r, 2) ? a->s.nd : 0), &e.x);
        break;
    }
    case 1: {
        int perm[DT_MAX_DIMS];
        for (k = 0; k < a->s.nd; k++) perm[k] = k;
        for (k = a->s.nd - 1; k > 0; k--) { /* Fisher-Yates */
            int j = dtt_randint(c->r, k + 1), t = perm[k];
            perm[k] = perm[j];
            perm[j] = t;
        }
        e.s = st_permute(&a->s, perm);
        s = dt_permute(a->x, perm, &e.x);
        break;
    }
    case 2: { /* merge two adjacent dims, or split one dim in two (with a -1) */
        int64_t sh[DT_MAX_DIMS];
        int nd = 0;
        if (a->s.nd >= 2 && dtt_randint(c->r, 2)) {
            int at = dtt_randint(c->r, a->s.nd - 1);
            for (k = 0; k < a->s.nd; k++) {
                if (k == at + 1) sh[nd - 1] *= a->s.sh[k];
                else sh[nd++] = a->s.sh[k];
            }
        } else {
            int64_t f = a->s.sh[d0] % 2 == 0 ? 2 : a->s.sh[d0] % 3 == 0 ? 3 : 1;
            for (k = 0; k < a->s.nd; k++) {
                if (k == d0) {
                    sh[nd++] = f;
                    sh[nd++] = a->s.sh[k] / f;
                } else sh[nd++] = a->s.sh[k];
            }
        }
        e.s = st_copy(&a->s);
        e.s.nd = nd;
        for (k = 0; k < nd; k++) e.s.sh[k] = sh[k];
        if (st_n(&e.s) > 0 && dtt_randint(c->r, 2)) sh[dtt_randint(c->r, nd)] = -1;
        s = dt_reshape(a->x, nd, sh, &e.x);
        break;
    }
    case 3: {
        int at = dtt_randint(c->r, a->s.nd + 1);
        e.s = st_copy(&a->s);
        for (k = a->s.nd; k > at; k--) e.s.sh[k] = e.s.sh[k - 1];
        e.s.sh[at] = 1;
        e.s.nd++;
        s = dt_unsqueeze(a->x, at, &e.x);
        break;
    }
    case 4:
        e.s = st_copy(&a->s);
        if (a->s.sh[d0] == 1) {
            for (k = d0; k < a->s.nd - 1; k++) e.s.sh[k] = e.s.sh[k + 1];
            e.s.nd--;
        }
        s = dt_squeeze(a->x, d0, &e.x);
        break;
    case 5: {
        int64_t len = dtt_randint(c->r, (int)a->s.sh[d0] + 1), start = dtt_randint(c->r, (int)(a->s.sh[d0] - len) + 1);
        e.s = st_narrow(&a->s, d0, start, len);
        s = dt_narrow(a->x, d0, start, len, &e.x);
        break;
    }
    case 6: {
        int64_t sh[DT_MAX_DIMS];
        const dt_tensor *xs[2];
        for (k = 0; k < a->s.nd; k++) sh[k] = a->s.sh[k];
        sh[d0] = dtt_randint(c->r, 5);
        b = fresh(c, a->s.nd, sh, 1);
        if (!b.x) { st_free(&b.s); return; }
        xs[0] = a->x;
        xs[1] = b.x;
        e.s = st_cat(&a->s, &b.s, d0);
        s = dt_cat(2, xs, d0, &e.x);
        ent_free(&b);
        break;
    }
    }
    dtt_ctx("%s op %d %s", c->what, c->ops + 1, names[which]);
    CHECK(s == DT_OK, "%s returned %s: %s", names[which], dt_status_string(s), dt_last_error());
    if (s == DT_OK) verify(c, &e, names[which]);
    push(c, e);
}

static void op_embed_xent(chain *c)
{
    ent *a = pick(c, 2, 2), e;
    int xent = dtt_randint(c->r, 3) == 0;
    int64_t V = a ? a->s.sh[0] : 0, D = a ? a->s.sh[1] : 0, ni, i, d, ish[2];
    dt_placement pl[DT_MAX_MESH_DIMS];
    double *idx;
    dt_tensor *ti;
    dt_status s;
    int ind = 1 + dtt_randint(c->r, 2), k;
    if (!a || V == 0) return;
    memset(&e, 0, sizeof e);
    if (xent) { /* logits a [N, C], target [N] in 0..C-1 */
        ind = 1;
        ish[0] = V;
        if (D == 0) return;
    } else
        for (k = 0; k < ind; k++) ish[k] = 1 + dtt_randint(c->r, 6);
    ni = dtt_numel(ind, ish);
    idx = (double *)dtt_malloc((size_t)(ni + 1) * sizeof(double));
    for (i = 0; i < ni; i++) idx[i] = (double)dtt_randint(c->r, (int)(xent ? D : V));
    random_pl(c, ind, pl, 0);
    ti = make_idx(c->m, dtt_randint(c->r, 2) ? DT_I32 : DT_I64, ind, ish, pl, idx);
    if (!ti) {
        free(idx);
        return;
    }
    if (xent) {
        e.s = st_make(0, ish);
        e.s.v[0] = xent_ref(a->s.v, idx, V, D);
        s = dt_cross_entropy(a->x, ti, &e.x);
    } else {
        int64_t osh[DT_MAX_DIMS];
        for (k = 0; k < ind; k++) osh[k] = ish[k];
        osh[ind] = D;
        e.s = st_make(ind + 1, osh);
        for (i = 0; i < ni; i++)
            for (d = 0; d < D; d++) e.s.v[i * D + d] = a->s.v[(int64_t)idx[i] * D + d];
        s = dt_embedding(a->x, ti, &e.x);
    }
    dtt_ctx("%s op %d %s", c->what, c->ops + 1, xent ? "cross_entropy" : "embedding");
    CHECK(s == DT_OK, "%s returned %s: %s", xent ? "cross_entropy" : "embedding", dt_status_string(s), dt_last_error());
    if (s == DT_OK) verify(c, &e, xent ? "cross_entropy" : "embedding");
    dt_tensor_destroy(ti);
    free(idx);
    push(c, e);
}

/* axpy in place (y keeps its spec), a cast round trip, a redistribution */
static void op_misc(chain *c)
{
    ent *a = pick(c, 0, 4), e;
    int which = dtt_randint(c->r, 3);
    dt_status s = DT_OK;
    if (!a) return;
    memset(&e, 0, sizeof e);
    if (which == 0) {
        ent x = fresh(c, a->s.nd, a->s.sh, 1);
        const dt_tensor_desc *d0 = dt_tensor_get_desc(a->x);
        dt_placement before[DT_MAX_MESH_DIMS];
        int64_t i, n = st_n(&a->s);
        if (!x.x) { st_free(&x.s); return; }
        memcpy(before, d0->placements, sizeof before);
        for (i = 0; i < n; i++) a->s.v[i] += -1.5 * x.s.v[i];
        dtt_ctx("%s op %d axpy", c->what, c->ops + 1);
        s = dt_axpy(-1.5, x.x, a->x);
        CHECK(s == DT_OK, "axpy returned %s: %s", dt_status_string(s), dt_last_error());
        {
            const dt_tensor_desc *d1 = dt_tensor_get_desc(a->x);
            int k;
            for (k = 0; k < c->m->nd; k++) CHECK(same_pl(d1->placements[k], before[k]), "axpy changed y's placement %d", k);
        }
        if (s == DT_OK) verify(c, a, "axpy");
        ent_free(&x);
        return;
    }
    if (which == 1) { /* to the other float type and back */
        dt_tensor *mid = NULL;
        dt_dtype other = c->t == DT_F64 ? DT_F32 : DT_F64;
        int64_t i, n = st_n(&a->s);
        e.s = st_copy(&a->s);
        if (c->t == DT_F64)
            for (i = 0; i < n; i++) e.s.v[i] = (double)(float)e.s.v[i];
        dtt_ctx("%s op %d cast", c->what, c->ops + 1);
        s = dt_cast(a->x, other, &mid);
        CHECK(s == DT_OK, "cast returned %s: %s", dt_status_string(s), dt_last_error());
        if (mid) {
            s = dt_cast(mid, c->t, &e.x);
            CHECK(s == DT_OK, "cast back returned %s: %s", dt_status_string(s), dt_last_error());
            if (s == DT_OK) verify(c, &e, "cast");
        }
        dt_tensor_destroy(mid);
        push(c, e);
        return;
    }
    { /* redistribute to random placements (Shard -> Partial is refused: keep those) */
        dt_placement pl[DT_MAX_MESH_DIMS];
        const dt_tensor_desc *d = dt_tensor_get_desc(a->x);
        int k;
        random_pl(c, a->s.nd, pl, 1);
        for (k = 0; k < c->m->nd; k++)
            if (d->placements[k].kind == DT_SHARD && pl[k].kind == DT_PARTIAL) pl[k] = dt_replicate();
        e.s = st_copy(&a->s);
        dtt_ctx("%s op %d redistribute", c->what, c->ops + 1);
        s = dt_tensor_redistribute(a->x, pl, &e.x);
        CHECK(s == DT_OK, "redistribute returned %s: %s", dt_status_string(s), dt_last_error());
        if (s == DT_OK) verify(c, &e, "redistribute");
        push(c, e);
    }
}

static void run_chain(const dtt_mesh *m, dtt_rng *r, dt_dtype t, int steps, const char *label)
{
    chain c;
    int s, i;
    memset(&c, 0, sizeof c);
    c.m = m;
    c.r = r;
    c.t = t;
    c.salt = dtt_next(r) % 100000;
    c.resync = t != DT_F64;
    snprintf(c.what, sizeof c.what, "%s mesh %s %s", label, m->name, dtt_dtname(t));
    for (s = 0; s < steps; s++) {
        int fam = dtt_randint(r, 9);
        switch (fam) {
        case 0: case 1: op_unary(&c); break;
        case 2: op_binary(&c); break;
        case 3: op_reduce(&c); break;
        case 4: op_matmul(&c); break;
        case 5: op_norm(&c); break;
        case 6: op_view(&c); break;
        case 7: op_embed_xent(&c); break;
        case 8: op_misc(&c); break;
        }
        /* keep magnitudes moderate: tanh what grew */
        for (i = 0; i < c.n; i++)
            if (st_maxabs(&c.pool[i].s) > 30) {
                ent e;
                int64_t j, n = st_n(&c.pool[i].s);
                e.s = st_copy(&c.pool[i].s);
                e.x = NULL;
                for (j = 0; j < n; j++) e.s.v[j] = tanh(e.s.v[j]);
                dtt_ctx("%s op %d tanh (bound)", c.what, c.ops + 1);
                CHECK_OK(dt_tanh(c.pool[i].x, &e.x));
                if (e.x) verify(&c, &e, "tanh (bound)");
                ent_free(&c.pool[i]);
                c.pool[i] = e;
                if (!e.x) c.pool[i] = c.pool[--c.n];
            }
    }
    for (i = 0; i < c.n; i++) ent_free(&c.pool[i]);
    g_chain_ops += c.ops;
}

static void test_chains(void)
{
    int nchain = dtt_quick ? 6 : 40, i;
    double t0 = now();
    dtt_rng r;
    char label[64];
    r.s = g_seed;
    for (i = 0; i < nchain; i++) {
        int nd = 1 + dtt_randint(&r, 3), fac[256 * DT_MAX_MESH_DIMS], nf, f;
        dtt_mesh m;
        dt_dtype t = dtt_randint(&r, 3) ? DT_F64 : DT_F32;
        nf = dtt_factorizations(dtt_np, nd, fac, 256);
        f = dtt_randint(&r, nf);
        if (!dtt_mesh_open(&m, g_comm, nd, &fac[f * DT_MAX_MESH_DIMS])) continue;
        snprintf(label, sizeof label, "chain %d seed %llu", i, (unsigned long long)g_seed);
        run_chain(&m, &r, t, dtt_quick ? 10 : 14, label);
        dtt_mesh_close(&m);
    }
    section("chains", t0);
    if (dtt_rank == 0 && getenv("DT_TEST_VERBOSE")) fprintf(stderr, "model: %d chains, %ld ops checked\n", nchain, g_chain_ops);
}

/* ================================================================ named placements */

static dt_tensor *full_tensor(const dtt_mesh *m, dt_dtype t, int nd, const int64_t *sh, const dt_placement *pl,
                              uint64_t salt, double **vals)
{
    int64_t n = dtt_numel(nd, sh), i;
    double *v = (double *)dtt_malloc((size_t)(n + 1) * sizeof(double));
    dt_tensor *x;
    for (i = 0; i < n; i++) v[i] = dval((uint64_t)i, salt);
    x = dtt_from_full(m, t, nd, sh, pl, v, 0.125);
    if (vals) *vals = v;
    else free(v);
    return x;
}

/* x[B,T,in] @ w[out,in]^T + b */
static void linear_ref(const double *x, int64_t rows, int64_t in, const double *w, int64_t out, const double *b, double *y)
{
    int64_t r, o, i;
    for (r = 0; r < rows; r++)
        for (o = 0; o < out; o++) {
            double s = b ? b[o] : 0.0;
            for (i = 0; i < in; i++) s += x[r * in + i] * w[o * in + i];
            y[r * out + o] = s;
        }
}

/* colwise then rowwise (Megatron MLP): on the 1-D mesh, and on a 2-D [dp, tp]
   mesh with x sharded over dp; also embedding row-sharded -> Partial(SUM) */
static void test_named(void)
{
    double t0 = now();
    int w;
    for (w = 0; w < 2; w++) {
        dtt_mesh m;
        int tp, dp, bias;
        if (w == 0 ? !open_1d(&m) : !open_2d(&m, 0)) continue;
        tp = m.nd - 1; /* the tensor-parallel mesh dim: the last */
        dp = m.nd == 2 ? 0 : -1;
        if (m.shape[tp] < 2) {
            dtt_mesh_close(&m);
            continue;
        }
        for (bias = 0; bias <= 1; bias++) {
            int64_t B = 2 * (dp >= 0 ? m.shape[dp] : 1) + 1, T = 3, H = 2 * m.shape[tp] + 1, F = 3 * m.shape[tp] - 1;
            int64_t xs[3], w1s[2], w2s[2], rows = B * T;
            dt_placement xp[DT_MAX_MESH_DIMS], w1p[DT_MAX_MESH_DIMS], w2p[DT_MAX_MESH_DIMS], b1p[DT_MAX_MESH_DIMS],
                b2p[DT_MAX_MESH_DIMS];
            double *xv, *w1v, *w2v, *b1v, *b2v, *h, *y;
            dt_tensor *x, *w1, *w2, *b1, *b2, *hx = NULL, *yx = NULL;
            const dt_tensor_desc *d;
            char s1[64];
            dtt_ctx("named: mlp mesh %s bias %d", m.name, bias);
            xs[0] = B; xs[1] = T; xs[2] = H;
            w1s[0] = F; w1s[1] = H;
            w2s[0] = H; w2s[1] = F;
            memset(xp, 0, sizeof xp);
            memset(w1p, 0, sizeof w1p);
            memset(w2p, 0, sizeof w2p);
            memset(b1p, 0, sizeof b1p);
            memset(b2p, 0, sizeof b2p);
            if (dp >= 0) xp[dp] = dt_shard(0);
            w1p[tp] = dt_shard(0); /* colwise */
            b1p[tp] = dt_shard(0);
            w2p[tp] = dt_shard(1); /* rowwise */
            x = full_tensor(&m, DT_F64, 3, xs, xp, 31, &xv);
            w1 = full_tensor(&m, DT_F64, 2, w1s, w1p, 32, &w1v);
            w2 = full_tensor(&m, DT_F64, 2, w2s, w2p, 33, &w2v);
            b1 = full_tensor(&m, DT_F64, 1, &F, b1p, 34, &b1v);
            b2 = full_tensor(&m, DT_F64, 1, &H, b2p, 35, &b2v);
            h = (double *)dtt_malloc((size_t)(rows * F) * sizeof(double));
            y = (double *)dtt_malloc((size_t)(rows * H) * sizeof(double));
            linear_ref(xv, rows, H, w1v, F, bias ? b1v : NULL, h);
            linear_ref(h, rows, F, w2v, H, bias ? b2v : NULL, y);
            if (x && w1 && w2 && b1 && b2) {
                CHECK_OK(dt_linear(x, w1, bias ? b1 : NULL, &hx));
                if (hx) {
                    d = dt_tensor_get_desc(hx);
                    CHECK(same_pl(d->placements[tp], dt_shard(2)), "colwise linear: tp placement %s, want S2",
                          dtt_pl_str(&d->placements[tp], 1, s1, sizeof s1));
                    if (dp >= 0)
                        CHECK(same_pl(d->placements[dp], dt_shard(0)), "colwise linear: dp placement %s, want S0",
                              dtt_pl_str(&d->placements[dp], 1, s1, sizeof s1));
                    check_values(hx, h, rows * F, 1e-12, 1e-12, "colwise");
                    CHECK_OK(dt_linear(hx, w2, bias ? b2 : NULL, &yx));
                }
                if (yx) {
                    d = dt_tensor_get_desc(yx);
                    CHECK(same_pl(d->placements[tp], dt_partial(DT_SUM)), "rowwise linear: tp placement %s, want Psum",
                          dtt_pl_str(&d->placements[tp], 1, s1, sizeof s1));
                    if (dp >= 0)
                        CHECK(same_pl(d->placements[dp], dt_shard(0)), "rowwise linear: dp placement %s, want S0",
                              dtt_pl_str(&d->placements[dp], 1, s1, sizeof s1));
                    check_values(yx, y, rows * H, 1e-11, 1e-12, "rowwise (bias added once)");
                }
            }
            dt_tensor_destroy(hx);
            dt_tensor_destroy(yx);
            dt_tensor_destroy(x);
            dt_tensor_destroy(w1);
            dt_tensor_destroy(w2);
            dt_tensor_destroy(b1);
            dt_tensor_destroy(b2);
            free(xv); free(w1v); free(w2v); free(b1v); free(b2v); free(h); free(y);
        }
        { /* embedding: row-sharded table on tp, idx replicated -> Partial(SUM); idx S0 on dp */
            int64_t V = 64 * m.shape[tp] + 3, D = 8, ish[2] = { 3, 2 }; /* a vocabulary much larger than the batch */
            dt_placement tpl[DT_MAX_MESH_DIMS], ipl[DT_MAX_MESH_DIMS];
            memset(tpl, 0, sizeof tpl);
            memset(ipl, 0, sizeof ipl);
            tpl[tp] = dt_shard(0);
            if (dp >= 0) ipl[dp] = dt_shard(0);
            embed_case(&m, DT_F32, DT_I64, V, D, 2, ish, tpl, ipl, 1);
        }
        dtt_mesh_close(&m);
    }
    section("named", t0);
}

/* ================================================================ strategy cache */

static void test_cache(void)
{
    double t0 = now();
    dtt_mesh m;
    int i, pass, nshape = dtt_quick ? 300 : 330, cnt;
    int64_t K = 3, N = 2;
    dt_placement ap[DT_MAX_MESH_DIMS], bp[DT_MAX_MESH_DIMS];
    double *bv;
    dt_tensor *b;
    if (!open_1d(&m)) return;
    dtt_ctx("cache mesh %s", m.name);
    CHECK(dt_mesh_op_cache_count(m.mesh) == 0, "a new mesh has %d cache entries", dt_mesh_op_cache_count(m.mesh));
    memset(ap, 0, sizeof ap);
    memset(bp, 0, sizeof bp);
    ap[0] = dt_shard(0);
    b = full_tensor(&m, DT_F64, 2, sh2(K, N), bp, 41, &bv);
    /* pass 0: 300+ distinct shapes [M,K] S0 x [K,N] R -> S0, every result checked
       locally (no communication); pass 1: the first 40 again, long evicted */
    for (pass = 0; pass < 2 && b; pass++) {
        for (i = 0; i < (pass ? 40 : nshape); i++) {
            int64_t M = 1 + i, r, j, l, ls[2], lo[2];
            double *av;
            dt_tensor *a = full_tensor(&m, DT_F64, 2, sh2(M, K), ap, 42, &av), *o = NULL;
            if (a) {
                dt_status st = dt_mm(a, b, &o);
                if (st != DT_OK) CHECK(0, "pass %d shape %d: dt_mm returned %s: %s", pass, i, dt_status_string(st), dt_last_error());
            }
            if (o) {
                const double *ov = (const double *)dt_tensor_data(o);
                const dt_tensor_desc *d = dt_tensor_get_desc(o);
                int bad = dtt_check_own_layout(&m, o, "cached mm");
                dt_tensor_local_shape(o, ls);
                dt_tensor_local_offset(o, lo);
                if (d->placements[0].kind == DT_PARTIAL) {
                    CHECK(0, "pass %d shape %d: (S0, R) mm gave a Partial result", pass, i);
                    bad = 1;
                }
                for (r = 0; r < ls[0] && !bad; r++)
                    for (j = 0; j < ls[1] && !bad; j++) {
                        double s = 0;
                        for (l = 0; l < K; l++) s += av[(lo[0] + r) * K + l] * bv[l * N + lo[1] + j];
                        if (fabs(ov[r * ls[1] + j] - s) > 1e-12) {
                            CHECK(0, "pass %d shape %d: local (%lld,%lld) = %g want %g", pass, i, (long long)r,
                                  (long long)j, ov[r * ls[1] + j], s);
                            bad = 1;
                        }
                    }
                if (pass == 0 && i == 0) CHECK(dt_mesh_op_cache_count(m.mesh) >= 1, "no cache entry after an op");
            }
            dt_tensor_destroy(o);
            dt_tensor_destroy(a);
            free(av);
        }
        cnt = dt_mesh_op_cache_count(m.mesh);
        CHECK(cnt >= 1 && cnt <= DT_OP_CACHE, "after %d distinct shapes the cache holds %d entries (max %d)", nshape, cnt,
              DT_OP_CACHE);
    }
    /* the cache is per mesh: a second mesh starts empty */
    {
        dtt_mesh m2;
        if (open_1d(&m2)) {
            CHECK(dt_mesh_op_cache_count(m2.mesh) == 0, "a second mesh has %d cache entries", dt_mesh_op_cache_count(m2.mesh));
            dtt_mesh_close(&m2);
        }
    }
    dt_tensor_destroy(b);
    free(bv);
    dtt_mesh_close(&m);
    section("cache", t0);
}

/* ================================================================ explain */

static void test_explain(void)
{
    double t0 = now();
    dtt_mesh m;
    FILE *f = tmpfile();
    dt_tensor *a, *b, *w, *bias, *o1 = NULL, *o2 = NULL, *o3 = NULL, *o4 = NULL, *ti, *o5 = NULL, *o6 = NULL, *o7 = NULL, *t2;
    dt_placement pr[DT_MAX_MESH_DIMS], ps[DT_MAX_MESH_DIMS];
    double idx[4] = { 0, 2, 1, 2 };
    int64_t four = 4;
    char line[1024];
    static const char *const want[] = { "mm", "linear", "add", "embedding", "cross_entropy", "addmm" };
    int n = 0;
    long size_before;
    CHECK(f != NULL, "tmpfile failed");
    if (!f || !open_1d(&m)) {
        if (f) fclose(f);
        return;
    }
    dtt_ctx("explain");
    memset(pr, 0, sizeof pr);
    memset(ps, 0, sizeof ps);
    ps[0] = dt_shard(0);
    a = full_tensor(&m, DT_F32, 2, sh2(5, 3), ps, 51, NULL);
    b = full_tensor(&m, DT_F32, 2, sh2(3, 4), pr, 52, NULL);
    w = full_tensor(&m, DT_F32, 2, sh2(2, 4), pr, 53, NULL);
    bias = full_tensor(&m, DT_F32, 1, sh1(2), ps, 54, NULL);
    ti = make_idx(&m, DT_I64, 1, &four, pr, idx);
    t2 = make_idx(&m, DT_I32, 1, sh1(2), pr, idx + 1);
    CHECK_OK(dt_explain(m.mesh, f));
    if (a && b && w && ti && bias) { /* one line each, also for ops built from others (bias, beta*c) */
        CHECK_OK(dt_mm(a, b, &o1));
        if (o1) CHECK_OK(dt_linear(o1, w, bias, &o2));
        if (o2) CHECK_OK(dt_add(o2, o2, &o3));
        CHECK_OK(dt_embedding(b, ti, &o5));
        if (t2) CHECK_OK(dt_cross_entropy(w, t2, &o6)); /* w as logits [2, C=4] */
        if (o1) CHECK_OK(dt_addmm(o1, a, b, 0.5, 2.0, &o7));
    }
    fflush(f);
    size_before = ftell(f);
    CHECK_OK(dt_explain(m.mesh, NULL));
    if (o1) CHECK_OK(dt_mm(a, b, &o4)); /* not printed */
    fflush(f);
    CHECK(ftell(f) == size_before, "dt_explain(NULL) must stop printing (%ld -> %ld bytes)", size_before, ftell(f));
    rewind(f);
    while (fgets(line, sizeof line, f)) {
        CHECK(strchr(line, '\n') != NULL, "line %d longer than %d or unterminated", n, (int)sizeof line);
        if (n < NELEM(want)) CHECK(strstr(line, want[n]) != NULL, "line %d \"%s\" should name %s", n, line, want[n]);
        n++;
    }
    CHECK(n == NELEM(want), "%d lines for %d ops", n, NELEM(want));
    fclose(f);
    dt_tensor_destroy(o1); dt_tensor_destroy(o2); dt_tensor_destroy(o3); dt_tensor_destroy(o4); dt_tensor_destroy(o5);
    dt_tensor_destroy(o6); dt_tensor_destroy(o7); dt_tensor_destroy(bias); dt_tensor_destroy(t2);
    dt_tensor_destroy(a); dt_tensor_destroy(b); dt_tensor_destroy(w); dt_tensor_destroy(ti);
    CHECK_ST(dt_explain(NULL, stderr), DT_ERR_ARG);
    dtt_mesh_close(&m);
    section("explain", t0);
}

/* ================================================================ *out reuse */

static void test_reuse(void)
{
    double t0 = now();
    int w;
    for (w = 0; w < 2; w++) {
        dtt_mesh m;
        int step, k, kind;
        if (w == 0 ? !open_1d(&m) : !open_2d(&m, 0)) continue;
        for (kind = 0; kind < 4; kind++) {
            /* 0: mm (S1 x S0 -> Partial); 1: linear colwise; 2: embedding row-sharded; 3: cross_entropy class-sharded */
            int64_t M = 7, K = 2 * dtt_np + 1, N = 5, V = 9, ish[1] = { 6 };
            dt_placement ap[DT_MAX_MESH_DIMS], bp[DT_MAX_MESH_DIMS];
            dt_tensor *a = NULL, *b = NULL, *out = NULL, *out0 = NULL;
            void *p0 = NULL;
            double *av = NULL, *bv = NULL, *ref = NULL;
            int64_t on = 0;
            memset(ap, 0, sizeof ap);
            memset(bp, 0, sizeof bp);
            for (step = 0; step < 4; step++) {
                int64_t i, j, l;
                dt_status st;
                dtt_ctx("reuse mesh %s kind %d step %d", m.name, kind, step);
                for (k = 0; k < m.nd; k++) {
                    ap[k] = kind == 0 ? dt_shard(1) : kind == 1 ? dt_replicate() : kind == 2 ? dt_shard(0) : dt_shard(1);
                    bp[k] = kind == 0 ? dt_shard(0) : kind == 1 ? dt_shard(0) : dt_replicate();
                }
                if (m.nd == 2) { /* batch/data parallel on mesh dim 0 */
                    ap[0] = kind == 0 ? dt_shard(0) : kind == 1 ? dt_shard(0) : dt_replicate();
                    bp[0] = kind == 2 ? dt_shard(0) : dt_replicate();
                    if (kind == 3) { ap[0] = dt_shard(0); bp[0] = dt_shard(0); }
                }
                dt_tensor_destroy(a);
                dt_tensor_destroy(b);
                free(av);
                free(bv);
                free(ref);
                if (kind == 0 || kind == 1) {
                    int64_t as[2], bs[2];
                    as[0] = M; as[1] = K;
                    if (kind == 0) { bs[0] = K; bs[1] = N; } else { bs[0] = N; bs[1] = K; }
                    a = full_tensor(&m, DT_F64, 2, as, ap, 60 + (uint64_t)step, &av);
                    b = full_tensor(&m, DT_F64, 2, bs, bp, 70 + (uint64_t)step, &bv);
                    on = M * N;
                    ref = (double *)dtt_malloc((size_t)on * sizeof(double));
                    for (i = 0; i < M; i++)
                        for (j = 0; j < N; j++) {
                            double s = 0;
                            for (l = 0; l < K; l++) s += av[i * K + l] * (kind == 0 ? bv[l * N + j] : bv[j * K + l]);
                            ref[i * N + j] = s;
                        }
                    st = kind == 0 ? dt_mm(a, b, &out) : dt_linear(a, b, NULL, &out);
                } else if (kind == 2) {
                    int64_t ts[2];
                    ts[0] = V; ts[1] = N;
                    a = full_tensor(&m, DT_F64, 2, ts, ap, 80 + (uint64_t)step, &av);
                    bv = (double *)dtt_malloc(6 * sizeof(double));
                    for (i = 0; i < 6; i++) bv[i] = (double)((i * 4 + step) % V);
                    b = make_idx(&m, DT_I32, 1, ish, bp, bv);
                    on = 6 * N;
                    ref = (double *)dtt_malloc((size_t)on * sizeof(double));
                    for (i = 0; i < 6; i++)
                        for (j = 0; j < N; j++) ref[i * N + j] = av[(int64_t)bv[i] * N + j];
                    st = dt_embedding(a, b, &out);
                } else {
                    int64_t ls[2];
                    ls[0] = 6; ls[1] = K;
                    a = full_tensor(&m, DT_F64, 2, ls, ap, 90 + (uint64_t)step, &av);
                    bv = (double *)dtt_malloc(6 * sizeof(double));
                    for (i = 0; i < 6; i++) bv[i] = (double)((i * 3 + step) % K);
                    b = make_idx(&m, DT_I64, 1, ish, bp, bv);
                    on = 1;
                    ref = (double *)dtt_malloc(sizeof(double));
                    ref[0] = xent_ref(av, bv, 6, K);
                    st = dt_cross_entropy(a, b, &out);
                }
                CHECK(st == DT_OK, "returned %s: %s", dt_status_string(st), dt_last_error());
                if (!out) break;
                if (step == 0) {
                    out0 = out;
                    p0 = dt_tensor_data(out);
                } else {
                    CHECK(out == out0, "*out must stay the same tensor");
                    CHECK(dt_tensor_data(out) == p0, "the buffer must be reused: %p then %p", p0, dt_tensor_data(out));
                }
                check_values(out, ref, on, 1e-12, 1e-12, "reused out");
            }
            dt_tensor_destroy(out);
            dt_tensor_destroy(a);
            dt_tensor_destroy(b);
            free(av);
            free(bv);
            free(ref);
        }
        dtt_mesh_close(&m);
    }
    section("reuse", t0);
}

/* ================================================================ bad input */

/* the call failed with `want`, named fn, and wrote nothing: *out unchanged
   (NULL stays NULL; an existing tensor keeps its data) */
#define BAD(call, want, fn) \
    do { dt_clear_error(); CHECK_ST(call, want); CHECK_ERRMSG(fn); } while (0)

static void test_badinput(void)
{
    double t0 = now();
    dtt_mesh m, m2;
    dt_placement pr[DT_MAX_MESH_DIMS], ps[DT_MAX_MESH_DIMS];
    dt_tensor *a34, *b45, *b54, *c35, *a234, *b345, *b2x45, *a34d, *w54, *bias5, *bias4, *v4, *v5, *o2, *ti, *tib, *tf,
        *lg, *tg, *tg7, *lgi, *out;
    dt_tensor *sentinel;
    double idx[6] = { 0, 1, 2, 3, 4, 2 }, idx7[7] = { 0, 1, 2, 3, 4, 0, 1 }, zeros30[30];
    int64_t six = 6, seven = 7;
    memset(zeros30, 0, sizeof zeros30);
    if (!open_1d(&m)) return;
    if (!open_1d(&m2)) {
        dtt_mesh_close(&m);
        return;
    }
    sentinel = (dt_tensor *)&m; /* never dereferenced */
    memset(pr, 0, sizeof pr);
    memset(ps, 0, sizeof ps);
    ps[0] = dt_shard(0);
    dtt_ctx("badinput");
    a34 = full_tensor(&m, DT_F32, 2, sh2(3, 4), ps, 1, NULL);
    b45 = full_tensor(&m, DT_F32, 2, sh2(4, 5), pr, 2, NULL);
    b54 = full_tensor(&m, DT_F32, 2, sh2(5, 4), pr, 3, NULL);
    c35 = full_tensor(&m, DT_F32, 2, sh2(3, 5), pr, 4, NULL);
    a234 = full_tensor(&m, DT_F32, 3, sh3(2, 3, 4), ps, 5, NULL);
    b345 = full_tensor(&m, DT_F32, 3, sh3(3, 4, 5), pr, 6, NULL);
    b2x45 = full_tensor(&m2, DT_F32, 2, sh2(4, 5), pr, 7, NULL); /* another mesh */
    a34d = full_tensor(&m, DT_F64, 2, sh2(3, 4), pr, 8, NULL);
    w54 = full_tensor(&m, DT_F32, 2, sh2(5, 4), ps, 9, NULL);
    bias5 = full_tensor(&m, DT_F32, 1, sh1(5), pr, 10, NULL);
    bias4 = full_tensor(&m, DT_F32, 1, sh1(4), pr, 11, NULL);
    v4 = full_tensor(&m, DT_F32, 1, sh1(4), ps, 12, NULL);
    v5 = full_tensor(&m, DT_F32, 1, sh1(5), ps, 13, NULL);
    o2 = full_tensor(&m, DT_F32, 2, sh2(3, 5), pr, 14, NULL);
    ti = make_idx(&m, DT_I64, 1, &six, pr, idx);
    idx[3] = 7; /* >= V (V = 5 below) */
    tib = make_idx(&m, DT_I64, 1, &six, pr, idx);
    tf = full_tensor(&m, DT_F32, 1, &six, pr, 15, NULL);
    lg = full_tensor(&m, DT_F32, 2, sh2(6, 5), pr, 16, NULL);
    idx[3] = 3;
    tg = make_idx(&m, DT_I32, 1, &six, pr, idx);
    tg7 = make_idx(&m, DT_I32, 1, &seven, pr, idx7);
    lgi = make_idx(&m, DT_I32, 2, sh2(6, 5), pr, zeros30);
    if (!(a34 && b45 && b54 && c35 && a234 && b345 && b2x45 && a34d && w54 && bias5 && bias4 && v4 && v5 && o2 && ti &&
          tib && tf && lg && tg && tg7 && lgi))
        goto done;

    /* shapes */
    out = NULL;
    BAD(dt_mm(a34, b54, &out), DT_ERR_SHAPE, "dt_mm"); /* inner 4 vs 5 */
    CHECK(out == NULL, "out written");
    BAD(dt_matmul(a34, b54, &out), DT_ERR_SHAPE, "dt_matmul");
    BAD(dt_matmul(a234, b345, &out), DT_ERR_SHAPE, "dt_matmul"); /* batch 2 vs 3 */
    BAD(dt_bmm(a234, b345, &out), DT_ERR_SHAPE, "dt_bmm");
    BAD(dt_mm(a234, b45, &out), DT_ERR_SHAPE, "dt_mm");          /* mm is 2-D only */
    BAD(dt_bmm(a34, b45, &out), DT_ERR_SHAPE, "dt_bmm");         /* bmm is 3-D only */
    BAD(dt_dot(v4, v5, &out), DT_ERR_SHAPE, "dt_dot");
    BAD(dt_dot(a34, b45, &out), DT_ERR_SHAPE, "dt_dot");
    BAD(dt_matmul(v4, v5, &out), DT_ERR_SHAPE, "dt_matmul");
    BAD(dt_linear(a34, b45, NULL, &out), DT_ERR_SHAPE, "dt_linear"); /* w [4,5]: in 5 != 4 */
    BAD(dt_linear(a34, w54, bias4, &out), DT_ERR_SHAPE, "dt_linear");
    BAD(dt_addmm(b45, a34, b45, 1, 1, &out), DT_ERR_SHAPE, "dt_addmm"); /* c [4,5] for [3,5] */
    BAD(dt_addmm(c35, a34, b54, 1, 1, &out), DT_ERR_SHAPE, "dt_addmm");
    BAD(dt_cross_entropy(lg, tg7, &out), DT_ERR_SHAPE, "dt_cross_entropy");
    BAD(dt_cross_entropy(a234, tg, &out), DT_ERR_SHAPE, "dt_cross_entropy");
    BAD(dt_embedding(a234, ti, &out), DT_ERR_SHAPE, "dt_embedding");
    CHECK(out == NULL, "out written");
    /* meshes */
    BAD(dt_mm(a34, b2x45, &out), DT_ERR_MESH, "dt_mm");
    BAD(dt_matmul(a34, b2x45, &out), DT_ERR_MESH, "dt_matmul");
    BAD(dt_linear(b2x45, b54, NULL, &out), DT_ERR_MESH, "dt_linear");
    BAD(dt_addmm(c35, a34, b2x45, 1, 1, &out), DT_ERR_MESH, "dt_addmm");
    CHECK(out == NULL, "out written");
    /* dtypes */
    BAD(dt_mm(a34d, b45, &out), DT_ERR_DTYPE, "dt_mm");
    BAD(dt_matmul(a34d, b45, &out), DT_ERR_DTYPE, "dt_matmul");
    BAD(dt_linear(a34d, w54, NULL, &out), DT_ERR_DTYPE, "dt_linear");
    BAD(dt_embedding(b54, tf, &out), DT_ERR_DTYPE, "dt_embedding"); /* float indices */
    BAD(dt_cross_entropy(lg, tf, &out), DT_ERR_DTYPE, "dt_cross_entropy");
    BAD(dt_cross_entropy(lgi, tg, &out), DT_ERR_DTYPE, "dt_cross_entropy"); /* integer logits */
    CHECK(out == NULL, "out written");
    /* out-of-range indices: replicated, and seen by one rank only */
    BAD(dt_embedding(b54, tib, &out), DT_ERR_ARG, "dt_embedding");
    {
        dt_tensor *one_bad;
        double id2[6] = { 0, 1, 2, 3, 4, 4 };
        id2[5] = -1; /* in the last rank's shard of S0 (the last non-empty part) */
        one_bad = make_idx(&m, DT_I32, 1, &six, ps, id2);
        if (one_bad) BAD(dt_embedding(b54, one_bad, &out), DT_ERR_ARG, "dt_embedding");
        dt_tensor_destroy(one_bad);
        id2[5] = 5;
        one_bad = make_idx(&m, DT_I64, 1, &six, ps, id2);
        if (one_bad) BAD(dt_cross_entropy(lg, one_bad, &out), DT_ERR_ARG, "dt_cross_entropy");
        dt_tensor_destroy(one_bad);
    }
    CHECK(out == NULL, "out written");
    /* NULLs */
    BAD(dt_mm(NULL, b45, &out), DT_ERR_ARG, "dt_mm");
    BAD(dt_mm(a34, NULL, &out), DT_ERR_ARG, "dt_mm");
    BAD(dt_mm(a34, b45, NULL), DT_ERR_ARG, "dt_mm");
    BAD(dt_bmm(NULL, b345, &out), DT_ERR_ARG, "dt_bmm");
    BAD(dt_matmul(a34, NULL, &out), DT_ERR_ARG, "dt_matmul");
    BAD(dt_matmul(a34, b45, NULL), DT_ERR_ARG, "dt_matmul");
    BAD(dt_addmm(NULL, a34, b45, 1, 1, &out), DT_ERR_ARG, "dt_addmm");
    BAD(dt_addmm(c35, a34, NULL, 1, 1, &out), DT_ERR_ARG, "dt_addmm");
    BAD(dt_linear(NULL, w54, NULL, &out), DT_ERR_ARG, "dt_linear");
    BAD(dt_linear(a34, NULL, NULL, &out), DT_ERR_ARG, "dt_linear");
    BAD(dt_linear(a34, w54, NULL, NULL), DT_ERR_ARG, "dt_linear");
    BAD(dt_dot(NULL, v4, &out), DT_ERR_ARG, "dt_dot");
    BAD(dt_embedding(NULL, ti, &out), DT_ERR_ARG, "dt_embedding");
    BAD(dt_embedding(b54, NULL, &out), DT_ERR_ARG, "dt_embedding");
    BAD(dt_cross_entropy(NULL, tg, &out), DT_ERR_ARG, "dt_cross_entropy");
    BAD(dt_cross_entropy(lg, NULL, &out), DT_ERR_ARG, "dt_cross_entropy");
    BAD(dt_cross_entropy(lg, tg, NULL), DT_ERR_ARG, "dt_cross_entropy");
    CHECK(out == NULL, "out written");
    /* a sentinel *out that is not a tensor is not touched by calls that fail on their inputs */
    out = sentinel;
    BAD(dt_mm(a34, b54, &out), DT_ERR_SHAPE, "dt_mm");
    BAD(dt_embedding(b54, tib, &out), DT_ERR_ARG, "dt_embedding");
    CHECK(out == sentinel, "*out changed on a failed call");

    /* wrong *out: dtype, shape, placements, mesh; its data untouched */
    {
        dt_tensor *good = NULL, *bad = NULL;
        const dt_tensor_desc *gd;
        CHECK_OK(dt_mm(a34, b45, &good)); /* [3,5]; S0 x R -> S0 */
        gd = good ? dt_tensor_get_desc(good) : NULL;
        if (gd) {
            int variant;
            for (variant = 0; variant < 5; variant++) {
                dt_tensor_desc d = *gd;
                dt_status want = DT_ERR_DTYPE;
                dt_mesh *mm = m.mesh;
                size_t nb, i;
                unsigned char *snap;
                d.local_shape = NULL;
                if (variant == 0) d.dtype = DT_F64;
                else if (variant == 1) { d.shape[1] = 6; want = DT_ERR_SHAPE; }
                else if (variant == 2) { d.ndim = 1; want = DT_ERR_SHAPE; }
                else if (variant == 3) {
                    d.placements[0] = gd->placements[0].kind == DT_REPLICATE ? dt_shard(1) : dt_replicate();
                    want = DT_ERR_PLACEMENT;
                } else { mm = m2.mesh; want = DT_ERR_MESH; }
                dtt_ctx("badinput: wrong *out variant %d", variant);
                bad = NULL;
                CHECK_OK(dt_tensor_empty(mm, &d, &bad));
                if (!bad) continue;
                nb = dt_tensor_local_numel(bad) * dt_dtype_size(d.dtype);
                if (nb) memset(dt_tensor_data(bad), 0x5A, nb); /* (an empty shard has no buffer) */
                snap = (unsigned char *)dtt_malloc(nb);
                if (nb) memcpy(snap, dt_tensor_data(bad), nb);
                {
                    dt_tensor *keep = bad;
                    void *data = dt_tensor_data(bad);
                    BAD(dt_mm(a34, b45, &bad), want, "dt_mm");
                    CHECK(bad == keep && dt_tensor_data(bad) == data, "*out replaced");
                    if (variant == 0 || variant == 3) BAD(dt_matmul(a34, b45, &bad), want, "dt_matmul");
                    CHECK(bad == keep, "*out replaced");
                    for (i = 0; i < nb; i++)
                        if (((unsigned char *)dt_tensor_data(bad))[i] != snap[i]) {
                            CHECK(0, "*out's data written at byte %zu", i);
                            break;
                        }
                }
                free(snap);
                dt_tensor_destroy(bad);
            }
            /* wrong *out for linear and embedding too (placements) */
            {
                dt_tensor *eo = NULL, *wrong = NULL;
                CHECK_OK(dt_embedding(b54, ti, &eo));
                if (eo) {
                    dt_tensor_desc d = *dt_tensor_get_desc(eo);
                    d.local_shape = NULL;
                    d.dtype = DT_F64;
                    dtt_ctx("badinput: embedding wrong *out dtype");
                    CHECK_OK(dt_tensor_empty(m.mesh, &d, &wrong));
                    if (wrong) {
                        dt_tensor *keep = wrong;
                        BAD(dt_embedding(b54, ti, &wrong), DT_ERR_DTYPE, "dt_embedding");
                        CHECK(wrong == keep, "*out replaced");
                    }
                    dt_tensor_destroy(wrong);
                }
                dt_tensor_destroy(eo);
            }
        }
        /* *out aliasing an input (non-pointwise ops refuse it): square mm */
        {
            dt_tensor *sq = NULL, *sqb = NULL, *alias;
            size_t nb;
            unsigned char *snap;
            dtt_ctx("badinput: aliasing *out");
            sq = full_tensor(&m, DT_F64, 2, sh2(4, 4), pr, 20, NULL);
            sqb = full_tensor(&m, DT_F64, 2, sh2(4, 4), pr, 21, NULL);
            if (sq && sqb) {
                dt_status st;
                alias = sq;
                nb = dt_tensor_local_numel(sq) * 8;
                snap = (unsigned char *)dtt_malloc(nb);
                memcpy(snap, dt_tensor_data(sq), nb);
                st = dt_mm(sq, sqb, &alias);
                CHECK(st != DT_OK, "dt_mm with *out == a must fail");
                if (st != DT_OK) CHECK_ERRMSG("dt_mm");
                CHECK(alias == sq && memcmp(snap, dt_tensor_data(sq), nb) == 0, "the aliased input changed");
                free(snap);
            }
            dt_tensor_destroy(sq);
            dt_tensor_destroy(sqb);
        }
        dt_tensor_destroy(good);
    }
done:
    dt_tensor_destroy(a34); dt_tensor_destroy(b45); dt_tensor_destroy(b54); dt_tensor_destroy(c35);
    dt_tensor_destroy(a234); dt_tensor_destroy(b345); dt_tensor_destroy(b2x45); dt_tensor_destroy(a34d);
    dt_tensor_destroy(w54); dt_tensor_destroy(bias5); dt_tensor_destroy(bias4); dt_tensor_destroy(v4);
    dt_tensor_destroy(v5); dt_tensor_destroy(o2); dt_tensor_destroy(ti); dt_tensor_destroy(tib); dt_tensor_destroy(tf);
    dt_tensor_destroy(lg); dt_tensor_destroy(tg); dt_tensor_destroy(tg7); dt_tensor_destroy(lgi);
    dtt_mesh_close(&m2);
    dtt_mesh_close(&m);
    section("badinput", t0);
}

/* ================================================================ ranks outside the mesh */

/* a mesh over comm ranks 1..np-1 (rank 0 outside): the ops run on the
   members with right values; rank 0 takes part in nothing, gets DT_OK and
   empty tensors, and dt_tensor_gather leaves its buffer alone */
static void test_outside(void)
{
    double t0 = now();
    dt_mesh_desc md;
    dt_mesh *mesh = NULL;
    int ranks[64], i, inside = dtt_rank != 0, kind;
    if (dtt_np < 2 || dtt_np > 64) return;
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np - 1;
    for (i = 1; i < dtt_np; i++) ranks[i - 1] = i;
    md.ranks = ranks;
    dtt_ctx("outside: mesh of ranks 1..%d", dtt_np - 1);
    CHECK_OK(dt_mesh_create(g_comm, &md, &mesh));
    if (!mesh) return;
    for (kind = 0; kind < 4; kind++) {
        /* 0: mm S0 x R; 1: linear rowwise (Partial); 2: embedding row-sharded; 3: cross_entropy class-sharded */
        int64_t M = 5, K = 2 * dtt_np + 1, N = 4, n = 0, j, l;
        dt_tensor_desc da, db;
        dt_tensor *a = NULL, *b = NULL, *out = NULL;
        double *av, *bv, *ref, *got;
        void *ab, *bb;
        dt_status st = DT_OK;
        int64_t ish = 6;
        memset(&da, 0, sizeof da);
        memset(&db, 0, sizeof db);
        da.ndim = 2;
        da.dtype = DT_F64;
        db.dtype = DT_F64;
        av = (double *)dtt_malloc(64 * 64 * sizeof(double));
        bv = (double *)dtt_malloc(64 * 64 * sizeof(double));
        ref = (double *)dtt_malloc(64 * 64 * sizeof(double));
        got = (double *)dtt_malloc(64 * 64 * sizeof(double));
        if (kind == 0 || kind == 1) {
            da.shape[0] = M; da.shape[1] = K;
            db.ndim = 2;
            db.shape[0] = kind == 0 ? K : N;
            db.shape[1] = kind == 0 ? N : K;
            da.placements[0] = kind == 0 ? dt_shard(0) : dt_shard(1);
            db.placements[0] = kind == 0 ? dt_replicate() : dt_shard(1);
        } else if (kind == 2) {
            da.shape[0] = K; da.shape[1] = N; /* table [V=K, D=N] */
            da.placements[0] = dt_shard(0);
            db.dtype = DT_I64;
            db.ndim = 1;
            db.shape[0] = ish;
        } else {
            da.shape[0] = ish; da.shape[1] = K; /* logits [6, C=K] */
            da.placements[0] = dt_shard(1);
            db.dtype = DT_I64;
            db.ndim = 1;
            db.shape[0] = ish;
        }
        for (j = 0; j < da.shape[0] * da.shape[1]; j++) av[j] = dval((uint64_t)j, 100 + (uint64_t)kind);
        for (j = 0; j < dtt_numel(db.ndim, db.shape); j++)
            bv[j] = kind >= 2 ? (double)((j * 5 + 1) % K) : dval((uint64_t)j, 200 + (uint64_t)kind);
        ab = dtt_malloc((size_t)(da.shape[0] * da.shape[1]) * 8);
        bb = dtt_malloc((size_t)dtt_numel(db.ndim, db.shape) * 8);
        for (j = 0; j < da.shape[0] * da.shape[1]; j++) dtt_store_d(DT_F64, ab, (size_t)j, av[j]);
        for (j = 0; j < dtt_numel(db.ndim, db.shape); j++) {
            if (db.dtype == DT_I64) {
                int64_t v = (int64_t)bv[j];
                memcpy((unsigned char *)bb + 8 * j, &v, 8);
            } else dtt_store_d(DT_F64, bb, (size_t)j, bv[j]);
        }
        dtt_ctx("outside: kind %d", kind);
        CHECK_OK(dt_tensor_distribute(mesh, &da, ab, DT_SRC_ALL, &a));
        CHECK_OK(dt_tensor_distribute(mesh, &db, bb, DT_SRC_ALL, &b));
        if (a && b) {
            if (kind == 0) st = dt_mm(a, b, &out);
            else if (kind == 1) st = dt_linear(a, b, NULL, &out);
            else if (kind == 2) st = dt_embedding(a, b, &out);
            else st = dt_cross_entropy(a, b, &out);
            CHECK(st == DT_OK, "returned %s: %s", dt_status_string(st), dt_last_error());
        }
        if (kind <= 1) {
            n = M * N;
            for (j = 0; j < M; j++)
                for (l = 0; l < N; l++) {
                    double sum = 0;
                    int64_t q;
                    for (q = 0; q < K; q++) sum += av[j * K + q] * (kind == 0 ? bv[q * N + l] : bv[l * K + q]);
                    ref[j * N + l] = sum;
                }
        } else if (kind == 2) {
            n = ish * N;
            for (j = 0; j < ish; j++)
                for (l = 0; l < N; l++) ref[j * N + l] = av[(int64_t)bv[j] * N + l];
        } else {
            n = 1;
            ref[0] = xent_ref(av, bv, ish, K);
        }
        if (out) {
            if (inside) check_values(out, ref, n, 1e-12, 1e-12, "member");
            else {
                dt_status gs;
                CHECK(dt_tensor_local_numel(out) == 0, "outside rank holds %zu elements", dt_tensor_local_numel(out));
                unsigned char *raw = (unsigned char *)got; /* n doubles of room: the result is F64 */
                memset(raw, 0xA5, (size_t)n * 8);
                gs = dt_tensor_gather(out, raw);
                CHECK(gs == DT_OK, "gather outside: %s", dt_status_string(gs));
                for (j = 0; j < n * 8; j++)
                    if (raw[j] != 0xA5) {
                        CHECK(0, "gather wrote the outside rank's buffer (byte %lld)", (long long)j);
                        break;
                    }
            }
        } else if (st == DT_OK && inside) CHECK(0, "no result");
        dt_tensor_destroy(out);
        dt_tensor_destroy(a);
        dt_tensor_destroy(b);
        free(ab); free(bb); free(av); free(bv); free(ref); free(got);
    }
    dt_mesh_destroy(mesh);
    section("outside", t0);
}

int main(int argc, char **argv)
{
    dtt_init(&argc, &argv, "ops_model");
    g_seed = dtt_seed(argc, argv, g_seed);
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    if (g_comm) {
        test_embedding();
        test_cross_entropy();
        test_named();
        test_cache();
        test_explain();
        test_reuse();
        test_badinput();
        test_chains();
        test_outside(); /* last: a crash there hides nothing else */
        dt_comm_destroy(g_comm);
    }
    return dtt_finish();
}
