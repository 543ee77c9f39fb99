/* tests/summa_cases.h -- included by test_ops_matmul.c (one build: no
   extra compile per CI configuration), which defines the counting
   DT_MALLOC (sm_mem_now, sm_mem_peak) before dtensor.h.

   dt_matmul streamed over the mesh (SUMMA, >>ops): the
   contracted dim k in panels instead of gathered operands.

   values: on the 1-D mesh and every 2-D mesh of the ranks (1 x n, n x 1,
   2 x 2, 2 x 3, 3 x 2, 2 x 4, 4 x 2), a and b placed [S(0), S(1)] (the
   2-D case), [S(m), R] x [S(k), ...] (a 1-D case: b split along k) and
   with a Partial a, in every split rule (torch.chunk, balanced, explicit
   sizes, block-cyclic with src), from the library's storage, from a padded
   leading dim and from a ghosted array (dt_tensor_from_local), for
   dt_mm, dt_bmm, dt_addmm, dt_linear in F64, F32, C128 and BF16, with
   uneven shapes and shapes smaller than the mesh (empty shards); each
   result gathered and compared with a serial product in double of the
   closed-form inputs, under budgets from one panel of width 1 to the
   default, streaming forced, and the streamed path must have run (a
   private counter of panels multiplied).
   bytes moved: dt_comm_stats' received bytes of one call equal SUMMA's
   (the panels a rank does not hold, along its rows), the bound.
   memory: a counting DT_MALLOC (every byte the library allocates, host):
   during the second of two calls (the first warms the strategy cache) the
   peak above the bytes held before stays within the budget plus the
   result's shard, and after it the library holds nothing but the result.
   overlap: a backend that wraps MPI with its own start/wait records the
   panel counter at each start and wait: every panel but the first was
   started before the previous panel's GEMM and waited for after it; with
   one buffer, every panel but those where two arriving panels meet.
   panels: whole multiples of 256 (BLIS's KC) where the budget allows,
   single-buffered where two do not fit; values, GEMM pieces forced; each
   rank starts k at its own part.
   choice: auto mode gathers small products and streams large ones.
   2.5D (sm_test_layers): meshes with a dim where a, b and the result are
   Replicate, layers forced: values as above; received bytes equal the
   spec's; dt_comm_stats' matmul counters; memory; the auto choice.
   bad input: a budget under one panel of width 1 -> DT_ERR_NOMEM on every
   rank, naming the budget and the minimum, *out untouched; different
   budgets under DTENSOR_CHECK -> DT_ERR_MISMATCH; NULL mesh and negative
   budget -> DT_ERR_ARG. */

/* the closed forms: small dyadic values, exact in every dtype used */
static double sm_a_of(int64_t b, int64_t i, int64_t k) { return (double)((b * 3 + i * 7 + k * 3) % 11 - 5) * 0.25; }
static double sm_b_of(int64_t b, int64_t k, int64_t j) { return (double)((b * 5 + k * 5 + j * 2) % 13 - 6) * 0.125; }
static double sm_ai_of(int64_t b, int64_t i, int64_t k) { return (double)((b + i * 3 + k * 5) % 7 - 3) * 0.5; }
static double sm_bi_of(int64_t b, int64_t k, int64_t j) { return (double)((b + k * 2 + j * 3) % 5 - 2) * 0.25; }

static void sm_store(dt_dtype t, void *p, size_t i, double re, double im) {
    if (t == DT_C128) { ((double *)p)[2 * i] = re; ((double *)p)[2 * i + 1] = im; }
    else dtt_store_d(t, p, i, re);
}

/* a full operand [nb?, r, c] from f (and fi: the imaginary part) */
static void *sm_full_of(dt_dtype t, int64_t nb, int64_t r, int64_t c, double (*f)(int64_t, int64_t, int64_t),
                     double (*fi)(int64_t, int64_t, int64_t)) {
    size_t es = dtt_size(t), n = (size_t)(nb * r * c), i = 0;
    char *p = (char *)malloc(n * es + 1);
    int64_t x, y, z;
    for (x = 0; x < nb; x++)
        for (y = 0; y < r; y++)
            for (z = 0; z < c; z++, i++) sm_store(t, p, i, f(x, y, z), fi(x, y, z));
    return p;
}

/* storage kinds a shard can be sm_wrapped in */
enum { sm_ST_OWN, sm_ST_PADDED, sm_ST_GHOSTED };
static int sm_arena = 0; /* 1: the program's storage from dt_mesh_shm_alloc (sm_test_shared) */

typedef struct sm_wrapped {
    dt_tensor *t;
    void *buf; /* the program's array (sm_ST_PADDED, sm_ST_GHOSTED) */
    int arena; /* 1: buf from dt_mesh_shm_alloc */
} sm_wrapped;

/* the operand distributed in `pl`, held as `kind` storage (2-D only for the wraps) */
static int sm_make_operand(dt_mesh *m, dt_dtype t, int nd, const int64_t *shape, const dt_placement *pl, const void *full,
                        int kind, sm_wrapped *w) {
    dt_tensor_desc d = dtt_desc(t, nd, shape, dt_mesh_ndim(m), pl);
    dt_tensor *own = NULL;
    int64_t ls[DT_MAX_DIMS], st[2], gh[2] = {1, 2};
    size_t es = dtt_size(t);
    int64_t r, c, ld, rows;
    char *base;
    w->t = NULL;
    w->buf = NULL;
    w->arena = 0;
    if (dt_tensor_distribute(m, &d, full, DT_SRC_ALL, &own) != DT_OK) return 1;
    if (kind == sm_ST_OWN || nd != 2) { w->t = own; return 0; }
    dt_tensor_local_shape(own, ls);
    ld = ls[1] + (kind == sm_ST_GHOSTED ? 2 * gh[1] : 3);
    rows = ls[0] + (kind == sm_ST_GHOSTED ? 2 * gh[0] : 0);
    w->arena = sm_arena && (kind == sm_ST_PADDED || dtt_rank != 0); /* (ghosted: malloc'd on rank 0) */
    if (w->arena) {
        if (dt_mesh_shm_alloc(m, (size_t)(rows * ld) * es + 1, &w->buf) != DT_OK) return 1;
    } else w->buf = malloc((size_t)(rows * ld) * es + 1);
    memset(w->buf, 0x7f, (size_t)(rows * ld) * es + 1); /* poison: padding must never be read */
    base = (char *)w->buf + (kind == sm_ST_GHOSTED ? (size_t)(gh[0] * ld + gh[1]) * es : 0);
    for (r = 0; r < ls[0]; r++)
        for (c = 0; c < ls[1]; c++)
            memcpy(base + (size_t)(r * ld + c) * es, (char *)dt_tensor_data(own) + (size_t)(r * ls[1] + c) * es, es);
    st[0] = ld;
    st[1] = 1;
    d.local_shape = ls;
    d.local_alloc = w->buf;
    d.local_alloc_bytes = (int64_t)((size_t)(rows * ld) * es + 1);
    if (kind == sm_ST_GHOSTED) d.local_ghost = gh;
    else d.local_strides = st;
    dt_tensor_destroy(own);
    if (dt_tensor_from_local(m, &d, kind == sm_ST_GHOSTED ? w->buf : base, DT_BORROW, &w->t) == DT_OK) return 0;
    fprintf(stderr, "%s\n", dt_last_error());
    return 1;
}

static void sm_unwrap(sm_wrapped *w) {
    dt_tensor_destroy(w->t);
    if (w->arena) dt_mesh_shm_free(NULL, w->buf);
    else free(w->buf);
    w->t = NULL;
    w->buf = NULL;
}

/* the result sm_gathered to every rank (Replicate everywhere) */
static void *sm_gathered(const dt_tensor *o, dt_mesh *m, int nd) {
    dt_placement rep[DT_MAX_MESH_DIMS];
    dt_tensor *g = NULL;
    void *p = NULL;
    int i;
    (void)nd;
    for (i = 0; i < DT_MAX_MESH_DIMS; i++) rep[i] = i < dt_mesh_ndim(m) ? dt_replicate() : dt_replicate();
    if (dt_tensor_redistribute(o, rep, &g) != DT_OK) return NULL;
    p = malloc(dt_tensor_local_numel(g) * dtt_size(dt_tensor_get_desc(g)->dtype) + 1);
    memcpy(p, dt_tensor_data(g), dt_tensor_local_numel(g) * dtt_size(dt_tensor_get_desc(g)->dtype));
    dt_tensor_destroy(g);
    return p;
}

/* the ops under test */
enum { sm_OP_MM, sm_OP_BMM, sm_OP_ADDMM, sm_OP_LINEAR, sm_OP_COUNT };
static const char *sm_op_name[sm_OP_COUNT] = {"dt_mm", "dt_bmm", "dt_addmm", "dt_linear"};

typedef struct sm_mcase {
    int op;
    dt_dtype t;
    int64_t nb, M, K, N;
    dt_placement pa[3], pb[3]; /* per mesh dim (1-D sm_meshes use [0]) */
    int kind;                  /* a's storage */
} sm_mcase;

/* the serial reference of element (x, i, j) */
static void sm_ref_at(const sm_mcase *cs, int64_t x, int64_t i, int64_t j, double *re, double *im) {
    int64_t k;
    double sr = 0, si = 0;
    int cx = cs->t == DT_C128;
    for (k = 0; k < cs->K; k++) {
        double ar = sm_a_of(x, i, k), ai = cx ? sm_ai_of(x, i, k) : 0;
        double br = cs->op == sm_OP_LINEAR ? sm_b_of(0, j, k) : sm_b_of(x, k, j);
        double bi = cx ? (cs->op == sm_OP_LINEAR ? sm_bi_of(0, j, k) : sm_bi_of(x, k, j)) : 0;
        sr += ar * br - ai * bi;
        si += ar * bi + ai * br;
    }
    if (cs->op == sm_OP_ADDMM) { sr = 2.0 * sr + 0.5 * (double)((i + j) % 3); si *= 2.0; } /* beta 0.5, alpha 2 */
    if (cs->op == sm_OP_LINEAR) sr += (double)(j % 4) * 0.25;
    *re = sr;
    *im = si;
}

static double sm_tol_of(dt_dtype t, double v, int64_t K) {
    if (t == DT_F64 || t == DT_C128) return 1e-12 * (1 + fabs(v));
    if (t == DT_F32) return 1e-5 * (1 + fabs(v)) * (double)K;
    return 0.02 * (1 + fabs(v)) * (double)K; /* BF16: rounded once per panel */
}

static long sm_run_case(dt_mesh *m, const sm_mcase *cs, int64_t budget) {
    int mnd = dt_mesh_ndim(m), i, bat = cs->op == sm_OP_BMM;
    int64_t as[3], bs[3];
    int nda = bat ? 3 : 2;
    dt_placement pa[DT_MAX_MESH_DIMS], pb[DT_MAX_MESH_DIMS], pr[DT_MAX_MESH_DIMS];
    void *fa, *fb, *fc = NULL, *res;
    sm_wrapped wa, wb;
    dt_tensor *o = NULL, *e = NULL;
    dt_status st;
    long before = dt__summa_gemms;
    int64_t x, r, c, nbad = 0;
    char pas[64], pbs[64];
    memset(pa, 0, sizeof pa);
    memset(pb, 0, sizeof pb);
    memset(pr, 0, sizeof pr);
    for (i = 0; i < mnd; i++) { pa[i] = cs->pa[i]; pb[i] = cs->pb[i]; pr[i] = dt_replicate(); }
    if (bat) {
        as[0] = bs[0] = cs->nb;
        as[1] = cs->M; as[2] = cs->K;
        bs[1] = cs->K; bs[2] = cs->N;
    } else {
        as[0] = cs->M; as[1] = cs->K;
        if (cs->op == sm_OP_LINEAR) { bs[0] = cs->N; bs[1] = cs->K; }
        else { bs[0] = cs->K; bs[1] = cs->N; }
    }
    dtt_ctx("%s %s mesh %dd a %s b %s (%lld,%lld,%lld,%lld) storage %d budget %lld", sm_op_name[cs->op],
            dtt_dtname(cs->t), mnd, dtt_pl_str(pa, mnd, pas, sizeof pas), dtt_pl_str(pb, mnd, pbs, sizeof pbs),
            (long long)cs->nb, (long long)cs->M, (long long)cs->K, (long long)cs->N, cs->kind, (long long)budget);
    fa = sm_full_of(cs->t, bat ? cs->nb : 1, cs->M, cs->K, sm_a_of, sm_ai_of);
    fb = cs->op == sm_OP_LINEAR ? sm_full_of(cs->t, 1, cs->N, cs->K, sm_b_of, sm_bi_of)
                             : sm_full_of(cs->t, bat ? cs->nb : 1, cs->K, cs->N, sm_b_of, sm_bi_of);
    CHECK(!sm_make_operand(m, cs->t, nda, as, pa, fa, cs->kind, &wa), "a not made");
    CHECK(!sm_make_operand(m, cs->t, nda, bs, pb, fb, sm_ST_OWN, &wb), "b not made");
    CHECK_OK(dt_mesh_set_matmul_budget(m, budget));
    if (cs->op == sm_OP_ADDMM || cs->op == sm_OP_LINEAR) { /* c [M, N] (addmm) or the bias [N] (linear) */
        int ne = cs->op == sm_OP_ADDMM ? 2 : 1;
        int64_t es[2], n = 0;
        size_t k;
        dt_tensor_desc d;
        es[0] = ne == 2 ? cs->M : cs->N;
        es[1] = cs->N;
        fc = malloc((size_t)(es[0] * (ne == 2 ? es[1] : 1)) * dtt_size(cs->t) + 1);
        for (k = 0; k < (size_t)(es[0] * (ne == 2 ? es[1] : 1)); k++, n++)
            sm_store(cs->t, fc, k, ne == 2 ? (double)((n / cs->N + n % cs->N) % 3) : (double)(n % 4) * 0.25, 0);
        d = dtt_desc(cs->t, ne, es, mnd, pr);
        CHECK_OK(dt_tensor_distribute(m, &d, fc, DT_SRC_ALL, &e));
    }
    switch (cs->op) {
    case sm_OP_MM: st = dt_mm(wa.t, wb.t, &o); break;
    case sm_OP_BMM: st = dt_bmm(wa.t, wb.t, &o); break;
    case sm_OP_ADDMM: st = dt_addmm(e, wa.t, wb.t, 0.5, 2.0, &o); break;
    default: st = dt_linear(wa.t, wb.t, e, &o); break;
    }
    CHECK(st == DT_OK, "%s: %s", dt_status_string(st), dt_last_error());
    if (st == DT_OK && (res = sm_gathered(o, m, bat ? 3 : 2)) != NULL) {
        size_t k = 0;
        for (x = 0; x < (bat ? cs->nb : 1); x++)
            for (r = 0; r < cs->M; r++)
                for (c = 0; c < cs->N; c++, k++) {
                    double re, im, gre, gim = 0;
                    sm_ref_at(cs, x, r, c, &re, &im);
                    if (cs->t == DT_C128) { gre = ((double *)res)[2 * k]; gim = ((double *)res)[2 * k + 1]; }
                    else gre = dtt_load_d(cs->t, res, k);
                    if (fabs(gre - re) > sm_tol_of(cs->t, re, cs->K) || fabs(gim - im) > sm_tol_of(cs->t, im, cs->K)) {
                        if (nbad++ < 3)
                            CHECK(0, "element (%lld,%lld,%lld): got %g%+gi, want %g%+gi", (long long)x, (long long)r,
                                  (long long)c, gre, gim, re, im);
                    }
                }
        free(res);
    }
    dt_tensor_destroy(o);
    dt_tensor_destroy(e);
    sm_unwrap(&wa);
    sm_unwrap(&wb);
    free(fa);
    free(fb);
    free(fc);
    CHECK_OK(dt_mesh_set_matmul_budget(m, 0));
    return dt__summa_gemms - before;
}

/* the mesh shapes of the ranks: 1-D, and every p x q */
static int sm_meshes(int np, int shapes[][2]) {
    int n = 0, p;
    shapes[n][0] = np; shapes[n++][1] = 0;
    for (p = 1; p <= np; p++)
        if (np % p == 0) { shapes[n][0] = p; shapes[n++][1] = np / p; }
    return n;
}

static dt_placement sm_split_rule(int rule, int dim, int parts, int64_t n) {
    static int64_t sizes[DT_MAX_MESH_DIMS][16];
    static int which = 0;
    int64_t *s = sizes[which++ % DT_MAX_MESH_DIMS], left = n;
    int c;
    switch (rule) {
    case 0: return dt_shard(dim);
    case 1: return dt_shard_balanced(dim);
    case 2: /* explicit, uneven: the first coordinate gets the most */
        for (c = parts - 1; c >= 1; c--) { s[c] = left / (c + 2); left -= s[c]; }
        s[0] = left;
        return dt_shard_sizes(dim, s);
    default: return dt_shard_cyclic_src(dim, 2, parts > 1 ? 1 : 0);
    }
}

/* every split rule, op and storage kind of a on one mesh; the products
   streamed (GEMMs). Under sm_arena, each case's products read in place
   (dt__summa_in_place) are those it streamed, unless a moves along k and
   rank 0's storage is outside the arena (ghosted, malloc'd there only):
   then none, on every rank. */
static long sm_sweep_mesh(dt_mesh *m, int mnd, const int *msh, int *n) {
    static const dt_dtype types[] = {DT_F64, DT_F32, DT_C128, DT_BF16};
    long streamed = 0;
    int rule, op, kind;
    for (rule = 0; rule < 4; rule++)
        for (op = 0; op < sm_OP_COUNT; op++)
            for (kind = 0; kind < 3; kind++) {
                sm_mcase cs;
                int small = ((*n)++ % 3) == 1;
                int64_t budget;
                long calls = dt__summa_calls, inplace = dt__summa_in_place, want;
                memset(&cs, 0, sizeof cs);
                cs.op = op;
                cs.t = types[(rule + op + kind) % 4];
                cs.kind = op == sm_OP_BMM ? sm_ST_OWN : kind;
                cs.nb = 2;
                cs.M = small ? 3 : 19;
                cs.K = small ? 2 : 23;
                cs.N = small ? 5 : 13;
                if (mnd == 2) { /* the 2-D case: [S(m), S(k)] x [S(k), S(n)] */
                    int ka = op == sm_OP_BMM ? 2 : 1, kb = op == sm_OP_BMM ? 1 : op == sm_OP_LINEAR ? 1 : 0;
                    int nb = op == sm_OP_BMM ? 2 : op == sm_OP_LINEAR ? 0 : 1;
                    cs.pa[0] = sm_split_rule(rule, ka - 1, msh[0], cs.M);
                    cs.pa[1] = sm_split_rule(rule, ka, msh[1], cs.K);
                    cs.pb[0] = sm_split_rule(rule, kb, msh[0], cs.K);
                    cs.pb[1] = sm_split_rule(rule, nb, msh[1], cs.N);
                    if (kind == 2 && op == sm_OP_MM) cs.pa[0] = dt_partial(DT_SUM); /* a Partial a: its parts multiply */
                } else { /* 1-D: a's rows split, b split along k */
                    int kb = op == sm_OP_BMM ? 1 : op == sm_OP_LINEAR ? 1 : 0;
                    cs.pa[0] = sm_split_rule(rule, op == sm_OP_BMM ? 1 : 0, msh[0], cs.M);
                    cs.pb[0] = sm_split_rule(rule, kb, msh[0], cs.K);
                }
                if (cs.pa[0].kind == DT_PARTIAL && cs.kind != sm_ST_OWN) cs.kind = sm_ST_OWN;
                /* budgets: one panel of width 1 double-buffered (tight), and the default */
                budget = small || (*n % 2) ? 0 : (int64_t)(2 * 8 * dtt_size(cs.t) * (size_t)(cs.M + cs.N) * 2);
                streamed += sm_run_case(m, &cs, budget);
                if (!sm_arena) continue;
                want = dtt_np < 2 || (cs.kind == sm_ST_GHOSTED && mnd == 2 && msh[1] > 1) ? 0 : dt__summa_calls - calls;
                CHECK(dt__summa_in_place - inplace == want, "%ld of %ld streamed products read in place, want %ld",
                      dt__summa_in_place - inplace, dt__summa_calls - calls, want);
            }
    return streamed;
}

static void sm_test_values(void) {
    int shapes[16][2], ns = sm_meshes(dtt_np, shapes), si;
    long streamed = 0;
    int n = 0;
    for (si = 0; si < ns; si++) {
        dtt_mesh mm;
        int mnd = shapes[si][1] ? 2 : 1, msh[2];
        msh[0] = shapes[si][0];
        msh[1] = shapes[si][1];
        if (!dtt_mesh_open(&mm, g_comm, mnd, msh)) continue;
        streamed += sm_sweep_mesh(mm.mesh, mnd, msh, &n);
        dtt_mesh_close(&mm);
    }
    CHECK(streamed > 0, "the streamed path never ran");
}

/* The bytes a rank receives in an n x n F64 product of [S(0), S(1)] (2-D)
   or [S(0)] (1-D) operands: SUMMA's, the panels it does not hold (a's
   along its row of mesh dim 1, b's along mesh dim 0), and not one more */
static uint64_t sm_summa_recv(const dt_tensor *a, const dt_tensor *b, int mnd, const int *msh, int64_t n) {
    int64_t la[2], lb[2], want;
    dt_tensor_local_shape(a, la);
    dt_tensor_local_shape(b, lb);
    if (mnd == 2) want = (msh[1] > 1 ? la[0] * (n - la[1]) : 0) + (msh[0] > 1 ? (n - lb[0]) * lb[1] : 0);
    else want = msh[0] > 1 ? (n - lb[0]) * lb[1] : 0;
    return (uint64_t)want * 8;
}

/* ---- memory: peak and held bytes through the counting allocator ---- */
static void sm_test_memory(void) {
    int shapes[16][2], ns = sm_meshes(dtt_np, shapes), si;
    int64_t saved_piece = dt__summa_piece;
    dt__summa_piece = 16; /* (GEMM pieces between tests: 96 rows on 1 x q meshes) */
    for (si = 0; si < ns; si++) {
        dtt_mesh mm;
        int mnd = shapes[si][1] ? 2 : 1, msh[2], pass;
        int64_t n = 96, sh[2] = {96, 96};
        dt_placement pa[DT_MAX_MESH_DIMS], pb[DT_MAX_MESH_DIMS];
        dt_tensor *a = NULL, *b = NULL, *o = NULL;
        dt_tensor_desc da, db;
        dt_comm_stats s0, s1;
        msh[0] = shapes[si][0];
        msh[1] = shapes[si][1];
        if (!dtt_mesh_open(&mm, g_comm, mnd, msh)) continue;
        memset(pa, 0, sizeof pa);
        memset(pb, 0, sizeof pb);
        if (mnd == 2) { pa[0] = dt_shard(0); pa[1] = dt_shard(1); pb[0] = dt_shard(0); pb[1] = dt_shard(1); }
        else { pa[0] = dt_shard(0); pb[0] = dt_shard(0); }
        da = dtt_desc(DT_F64, 2, sh, mnd, pa);
        db = dtt_desc(DT_F64, 2, sh, mnd, pb);
        CHECK_OK(dt_tensor_zeros(mm.mesh, &da, &a));
        CHECK_OK(dt_tensor_zeros(mm.mesh, &db, &b));
        for (pass = 0; pass < 2 && a && b; pass++) {
            size_t base, held, peak, shard = (size_t)(n * n) * 8, budget, out_bytes;
            int64_t ls[2];
            /* the budget: a quarter of a + b + c on the largest rank (the default) */
            dtt_ctx("memory mesh %d x %d pass %d", msh[0], mnd == 2 ? msh[1] : 1, pass);
            dt_mesh_trim(mm.mesh);
            dt_comm_get_stats(g_comm, &s0);
            base = sm_mem_now;
            sm_mem_peak = sm_mem_now;
            CHECK_OK(dt_mm(a, b, &o));
            dt_comm_get_stats(g_comm, &s1);
            CHECK(s1.bytes_recv - s0.bytes_recv == sm_summa_recv(a, b, mnd, msh, n), "received %llu bytes, "
                  "SUMMA's are %llu", (unsigned long long)(s1.bytes_recv - s0.bytes_recv),
                  (unsigned long long)sm_summa_recv(a, b, mnd, msh, n));
            dt_tensor_local_shape(o, ls);
            out_bytes = (size_t)(ls[0] * ls[1]) * 8;
            peak = sm_mem_peak - base;
            held = sm_mem_now - base;
            /* the largest shards: ceil parts */
            {
                int p = mnd == 2 ? msh[0] : msh[0], q = mnd == 2 ? msh[1] : 1;
                size_t r = (size_t)((n + p - 1) / p), cc = (size_t)((n + q - 1) / q), sa = r * cc * 8;
                size_t sb = mnd == 2 ? sa : (size_t)((n + p - 1) / p * n) * 8, sc = mnd == 2 ? sa : r * (size_t)n * 8;
                budget = (sa + sb + sc) / 4;
                if (budget < ((size_t)64 << 10)) budget = (size_t)64 << 10;
            }
            (void)shard;
            if (pass == 1) {
                /* beyond the result: the panels (within the budget), O(ranks) bookkeeping, and the local
                   GEMM's own packing (the built-in loops' block buffer; BLIS packs outside DT_MALLOC) */
                size_t gemm_ws = (size_t)(DT__GEMM_KB + DT__GEMM_MB) * DT__GEMM_NB * sizeof(double);
                CHECK(peak <= out_bytes + budget + gemm_ws + 4096, "peak %zu bytes above the base, result %zu + "
                      "budget %zu + the GEMM's block buffer %zu", peak, out_bytes, budget, gemm_ws);
                CHECK(held <= out_bytes + 1024, "held after the call: %zu bytes, the result is %zu", held, out_bytes);
                if (dtt_np > 1 && mnd == 2 && msh[0] > 1 && msh[1] > 1)
                    CHECK(dt__summa_gemms > 0, "the 2-D product did not stream");
            }
            dt_tensor_destroy(o);
            o = NULL;
        }
        dt_tensor_destroy(a);
        dt_tensor_destroy(b);
        dtt_mesh_close(&mm);
    }
    dt__summa_piece = saved_piece;
}

/* ---- overlap: a backend over MPI with its own start/wait ---- */
typedef struct sm_rec_req {
    MPI_Request r[64];
    int n;
    long at_start;
} sm_rec_req;
static long sm_rec_overlapped = 0, sm_rec_total = 0;

static dt_status sm_rec_sendrecv(void *user, const void *sb, size_t sn, int dest, void *rb, size_t rn, int src, int tag) {
    MPI_Comm c = *(MPI_Comm *)user;
    MPI_Sendrecv(sb, dest < 0 ? 0 : (int)sn, MPI_BYTE, dest < 0 ? MPI_PROC_NULL : dest, tag, rb,
                 src < 0 ? 0 : (int)rn, MPI_BYTE, src < 0 ? MPI_PROC_NULL : src, tag, c, MPI_STATUS_IGNORE);
    return DT_OK;
}
static dt_status sm_rec_start(void *user, int n, const dt_message *msgs, void **request) {
    MPI_Comm c = *(MPI_Comm *)user;
    sm_rec_req *q = (sm_rec_req *)malloc(sizeof *q);
    int i;
    if (!q || n > 64) { free(q); return DT_ERR_COMM; }
    q->n = n;
    q->at_start = dt__summa_gemms;
    for (i = 0; i < n; i++) {
        if (msgs[i].send) MPI_Isend(msgs[i].buf, (int)msgs[i].bytes, MPI_BYTE, msgs[i].peer, 77, c, &q->r[i]);
        else MPI_Irecv(msgs[i].buf, (int)msgs[i].bytes, MPI_BYTE, msgs[i].peer, 77, c, &q->r[i]);
    }
    *request = q;
    return DT_OK;
}
static dt_status sm_rec_wait(void *user, void *request) {
    sm_rec_req *q = (sm_rec_req *)request;
    int i;
    (void)user;
    for (i = 0; i < q->n; i++) MPI_Wait(&q->r[i], MPI_STATUS_IGNORE);
    sm_rec_total++;
    if (dt__summa_gemms > q->at_start) sm_rec_overlapped++; /* a GEMM ran while it moved */
    free(q);
    return DT_OK;
}

/* One buffer: a 1-D mesh, a [S(0)], b [S(0)] split along k into parts of
   700 (panels 256, 256, 188), a budget of 384 columns of b: one panel of
   DT__MM_KALIGN fits, two do not. The next panel still moves during this
   one's GEMM unless both take the buffer (both arrive from another rank):
   of this rank's 3 np exchanges, exactly those overlap a GEMM. (The
   recording backend is not the library's MPI: k in one order on every
   rank, sends waited for at their panel.) */
static void sm_test_overlap_one_buffer(dt_comm *comm) {
    dtt_mesh mm;
    int msh[1], j, np = dtt_np, want = 0;
    int64_t sa[2], sb[2];
    dt_placement pl[DT_MAX_MESH_DIMS];
    dt_tensor *a = NULL, *b = NULL, *o = NULL;
    dt_tensor_desc d;
    msh[0] = np;
    if (np < 2 || !dtt_mesh_open(&mm, comm, 1, msh)) return;
    sa[0] = 8 * np; sa[1] = 700 * np;
    sb[0] = 700 * np; sb[1] = 8;
    memset(pl, 0, sizeof pl);
    pl[0] = dt_shard(0);
    d = dtt_desc(DT_F64, 2, sa, 1, pl);
    CHECK_OK(dt_tensor_zeros(mm.mesh, &d, &a));
    d = dtt_desc(DT_F64, 2, sb, 1, pl);
    CHECK_OK(dt_tensor_zeros(mm.mesh, &d, &b));
    CHECK_OK(dt_mesh_set_matmul_budget(mm.mesh, 384 * 8 * 8));
    for (j = 1; j < 3 * np; j++) /* panel j arrives (takes the buffer) unless it is this rank's */
        if (j / 3 == dtt_rank || (j - 1) / 3 == dtt_rank) want++;
    sm_rec_overlapped = sm_rec_total = 0;
    dtt_ctx("overlap, one buffer, 1-D mesh of %d", np);
    CHECK_OK(dt_mm(a, b, &o));
    CHECK(sm_rec_total == 3 * np && sm_rec_overlapped == want, "%ld of %ld exchanges overlapped a GEMM, want %d of %d",
          sm_rec_overlapped, sm_rec_total, want, 3 * np);
    dt_tensor_destroy(o);
    dt_tensor_destroy(a);
    dt_tensor_destroy(b);
    dtt_mesh_close(&mm);
}

static void sm_test_overlap(void) {
    static MPI_Comm wc;
    dt_comm_desc cd;
    dt_comm *comm = NULL;
    dtt_mesh mm;
    int msh[2], p = 1;
    int64_t n = 64, sh[2] = {64, 64}, w = 4;
    dt_placement pl[DT_MAX_MESH_DIMS];
    dt_tensor *a = NULL, *b = NULL, *o = NULL;
    dt_tensor_desc d;
    long panels, before;
    /* the squarest 2-D mesh */
    while ((p + 1) * (p + 1) <= dtt_np) p++;
    while (dtt_np % p) p--;
    msh[0] = p;
    msh[1] = dtt_np / p;
    MPI_Comm_dup(MPI_COMM_WORLD, &wc);
    memset(&cd, 0, sizeof cd);
    cd.name = "recording";
    cd.rank = dtt_rank;
    cd.size = dtt_np;
    cd.user = &wc;
    cd.sendrecv = sm_rec_sendrecv;
    cd.start = sm_rec_start;
    cd.wait = sm_rec_wait;
    CHECK_OK(dt_comm_custom(&cd, &comm));
    if (!comm || !dtt_mesh_open(&mm, comm, 2, msh)) { MPI_Comm_free(&wc); return; }
    memset(pl, 0, sizeof pl);
    pl[0] = dt_shard(0);
    pl[1] = dt_shard(1);
    d = dtt_desc(DT_F64, 2, sh, 2, pl);
    CHECK_OK(dt_tensor_zeros(mm.mesh, &d, &a));
    CHECK_OK(dt_tensor_zeros(mm.mesh, &d, &b));
    /* panels of width w: budget = 2 buffers x w x (rows of a + cols of b) x 8, of those that move */
    CHECK_OK(dt_mesh_set_matmul_budget(mm.mesh, 2 * w * ((msh[1] > 1 ? (n + msh[0] - 1) / msh[0] : 0) +
                                                          (msh[0] > 1 ? (n + msh[1] - 1) / msh[1] : 0)) * 8));
    sm_rec_overlapped = sm_rec_total = 0;
    before = dt__summa_gemms;
    dtt_ctx("overlap mesh %d x %d", msh[0], msh[1]);
    CHECK_OK(dt_mm(a, b, &o));
    panels = dt__summa_gemms - before;
    if (dtt_np > 1) {
        CHECK(panels >= n / w, "%ld panels, want at least %lld", panels, (long long)(n / w));
        /* every exchange but the first panel's (one or two of them) overlapped a GEMM */
        CHECK(sm_rec_total >= panels && sm_rec_overlapped >= sm_rec_total - 2, "%ld of %ld exchanges overlapped a GEMM "
              "(%ld panels)", sm_rec_overlapped, sm_rec_total, panels);
    }
    dt_tensor_destroy(o);
    dt_tensor_destroy(a);
    dt_tensor_destroy(b);
    dtt_mesh_close(&mm);
    sm_test_overlap_one_buffer(comm);
    dt_comm_destroy(comm);
    MPI_Comm_free(&wc);
}

/* ---- panels: whole multiples of DT__MM_KALIGN ----
   A 1-D mesh, a [S(0)] (40 rows a rank), b [S(0)] split along k into parts
   of 700. Under a budget of two panels of 384 columns the panels are 256
   wide, three a part (256, 256, 188: the fewest passes of the GEMM, not two
   of 350); under one of 384 (two of 256 do not fit, one does) as well,
   single-buffered (not four of 175). Values against the serial product;
   the GEMM in pieces of 16 rows between tests of the next panel. */
static void sm_test_panels(void) {
    dtt_mesh mm;
    int msh[1], pass;
    int64_t saved = dt__summa_piece;
    msh[0] = dtt_np;
    if (dtt_np < 2 || !dtt_mesh_open(&mm, g_comm, 1, msh)) return;
    dt__summa_piece = 16;
    for (pass = 0; pass < 2; pass++) {
        sm_mcase cs;
        long panels;
        memset(&cs, 0, sizeof cs);
        cs.op = sm_OP_MM;
        cs.t = DT_F64;
        cs.nb = 1;
        cs.M = 40 * dtt_np;
        cs.K = 700 * dtt_np;
        cs.N = 8;
        cs.pa[0] = dt_shard(0);
        cs.pb[0] = dt_shard(0);
        cs.kind = sm_ST_OWN;
        panels = sm_run_case(mm.mesh, &cs, (pass ? 1 : 2) * 384 * cs.N * 8);
        CHECK(panels == 3 * dtt_np, "budget of %d panels of 384: %ld panels, want %d (256, 256, 188 a part)",
              pass ? 1 : 2, panels, 3 * dtt_np);
        /* over the library's MPI, each rank starts at its own part (dt__summa_rotate) */
        CHECK(dt__summa_first == 700 * dtt_rank, "k started at %lld, want this rank's part at %lld",
              (long long)dt__summa_first, (long long)(700 * dtt_rank));
    }
    dt__summa_piece = saved;
    dtt_mesh_close(&mm);
}

/* ---- auto: small products gather, large ones stream ---- */
static void sm_test_choice(void) {
    int saved = dt__mm_mode_state, k;
    dtt_mesh mm;
    int msh[1];
    msh[0] = dtt_np;
    dt__mm_mode_state = 0;
    if (dtt_np > 1 && dtt_mesh_open(&mm, g_comm, 1, msh)) {
        for (k = 0; k < 2; k++) {
            int64_t n = k ? 512 : 16, sh[2];
            dt_placement pl[DT_MAX_MESH_DIMS];
            dt_tensor *a = NULL, *b = NULL, *o = NULL;
            dt_tensor_desc d;
            long before = dt__summa_gemms;
            sh[0] = sh[1] = n;
            memset(pl, 0, sizeof pl);
            pl[0] = dt_shard(0);
            d = dtt_desc(DT_F64, 2, sh, 1, pl);
            dtt_ctx("auto n %lld", (long long)n);
            CHECK_OK(dt_tensor_zeros(mm.mesh, &d, &a));
            CHECK_OK(dt_tensor_zeros(mm.mesh, &d, &b));
            CHECK_OK(dt_mm(a, b, &o)); /* b row-split: its k is sm_gathered or streamed */
            if (k) CHECK(dt__summa_gemms > before, "n = 512 (2 MiB of b) sm_gathered");
            else CHECK(dt__summa_gemms == before, "n = 16 streamed");
            dt_tensor_destroy(o);
            dt_tensor_destroy(a);
            dt_tensor_destroy(b);
        }
        dtt_mesh_close(&mm);
    }
    dt__mm_mode_state = saved;
}

/* ---- bad input ---- */
static void sm_test_bad(void) {
    dtt_mesh mm;
    int msh[1];
    int64_t sh[2] = {40, 40};
    dt_placement pl[DT_MAX_MESH_DIMS];
    dt_tensor *a = NULL, *b = NULL, *o = NULL, *keep;
    dt_tensor_desc d;
    dt_status st;
    size_t i, nl;
    msh[0] = dtt_np;
    CHECK_ST(dt_mesh_set_matmul_budget(NULL, 0), DT_ERR_ARG);
    CHECK_ERRMSG("dt_mesh_set_matmul_budget");
    if (!dtt_mesh_open(&mm, g_comm, 1, msh)) return;
    CHECK_ST(dt_mesh_set_matmul_budget(mm.mesh, -5), DT_ERR_ARG);
    CHECK(strstr(dt_last_error(), "-5") != NULL, "message: %s", dt_last_error());
    memset(pl, 0, sizeof pl);
    pl[0] = dt_shard(0);
    d = dtt_desc(DT_F64, 2, sh, 1, pl);
    CHECK_OK(dt_tensor_zeros(mm.mesh, &d, &a));
    CHECK_OK(dt_tensor_zeros(mm.mesh, &d, &b));
    CHECK_OK(dt_mm(a, b, &o));
    keep = o;
    nl = dt_tensor_local_numel(o);
    for (i = 0; i < nl; i++) ((double *)dt_tensor_data(o))[i] = 42.0;
    /* too small for a panel of width 1: refused on every rank, *out untouched */
    CHECK_OK(dt_mesh_set_matmul_budget(mm.mesh, 8));
    st = dt_mm(a, b, &o);
    if (dtt_np > 1) {
        CHECK(st == DT_ERR_NOMEM, "a budget of 8 bytes: %s", dt_status_string(st));
        CHECK(strstr(dt_last_error(), "budget of 8 bytes") && strstr(dt_last_error(), "width 1"), "message: %s",
              dt_last_error());
    }
    CHECK(o == keep, "*out replaced");
    for (i = 0; i < nl && dtt_np > 1; i++) /* (one rank: nothing moves, no panel buffer, it runs) */
        if (((double *)dt_tensor_data(o))[i] != 42.0) { CHECK(0, "*out written at %zu", i); break; }
    /* ranks that disagree on the budget: a mismatch under DTENSOR_CHECK */
    if (dtt_np > 1) {
        int was = dt_get_checks();
        dt_set_checks(1);
        CHECK_OK(dt_mesh_set_matmul_budget(mm.mesh, dtt_rank == dtt_np - 1 ? 1 << 20 : 1 << 21));
        st = dt_mm(a, b, &o);
        CHECK(st == DT_ERR_MISMATCH, "different budgets: %s (%s)", dt_status_string(st), dt_last_error());
        CHECK(strstr(dt_last_error(), "matmul budget") != NULL, "message: %s", dt_last_error());
        dt_set_checks(was);
    }
    CHECK_OK(dt_mesh_set_matmul_budget(mm.mesh, 0));
    dt_tensor_destroy(o);
    dt_tensor_destroy(a);
    dt_tensor_destroy(b);
    dtt_mesh_close(&mm);
}

/* ---- 2.5D: a mesh dim where a, b and the result are Replicate splits k ----
   Meshes [P, Q, c] and [c, P, Q] (c >= 2 layers, P x Q any factoring of the
   rest, 1 x 1 included), a [S(m), S(k), R] and b [S(k), S(n), R] in every
   split rule, and the 1-D gather [p, c] (b split along k); values against
   the serial product with layers forced; that the layers ran; bytes and
   memory below; the auto choice. */

/* the parts of k under torch.chunk over n: part j starts at j * ceil(k / n) */
static int64_t sm_chunk_owner(int64_t k, int64_t K, int n) { return k / ((K + n - 1) / n); }

/* What one rank receives in a layered [P, Q, c] product of [S(0), S(1), R]
   operands (torch.chunk), by the spec: k is cut where an owner changes, each
   such segment into c near-equal sub-ranges, layer l taking the l-th; the
   rank receives the sub-ranges of a it does not own (its rows x their
   length) and of b (their length x its columns); then the sum over the
   layers, counted as an allreduce ((c - 1) x its result block). */
static uint64_t sm_layered_recv(int64_t M, int64_t K, int64_t N, int P, int Q, int c, int p, int q, int l) {
    int64_t rows = M / P, cols = N / Q, lo = 0, hi, got = 0;
    while (lo < K) {
        int64_t ea = (sm_chunk_owner(lo, K, Q) + 1) * ((K + Q - 1) / Q), eb = (sm_chunk_owner(lo, K, P) + 1) * ((K + P - 1) / P);
        int64_t len, s0, s1;
        hi = ea < eb ? ea : eb;
        if (hi > K) hi = K;
        len = hi - lo;
        s0 = lo + len * l / c;
        s1 = lo + len * (l + 1) / c;
        if (Q > 1 && sm_chunk_owner(lo, K, Q) != q) got += rows * (s1 - s0);
        if (P > 1 && sm_chunk_owner(lo, K, P) != p) got += (s1 - s0) * cols;
        lo = hi;
    }
    return (uint64_t)(got + (int64_t)(c - 1) * rows * cols) * 8;
}

static void sm_test_layers(void) {
    static const dt_dtype types[] = {DT_F64, DT_C128, DT_BF16, DT_F32};
    int c, first, n = 0;
    long layered = dt__summa_layered, streamed = 0;
    int saved = dt__mm_layers_state;
    dt__mm_layers_state = 1;
    for (c = 2; c <= dtt_np; c++) {
        int P;
        if (dtt_np % c) continue;
        for (P = 1; P <= dtt_np / c; P++)
            for (first = 0; first < 2; first++) {
                int Q = dtt_np / c / P, msh[3], gp, gq, gl, rule, op;
                dtt_mesh mm;
                if (dtt_np / c % P) continue;
                gl = first ? 0 : 2; /* the layer dim first or last */
                gp = first ? 1 : 0;
                gq = first ? 2 : 1;
                msh[gl] = c; msh[gp] = P; msh[gq] = Q;
                if (!dtt_mesh_open(&mm, g_comm, 3, msh)) continue;
                for (rule = 0; rule < 4; rule++)
                    for (op = 0; op < sm_OP_COUNT; op++) {
                        sm_mcase cs;
                        int ka = op == sm_OP_BMM ? 2 : 1, kb = op == sm_OP_BMM ? 1 : op == sm_OP_LINEAR ? 1 : 0;
                        int nb = op == sm_OP_BMM ? 2 : op == sm_OP_LINEAR ? 0 : 1;
                        memset(&cs, 0, sizeof cs);
                        cs.op = op;
                        cs.t = types[(rule + op + n++) % 4];
                        cs.kind = op == sm_OP_BMM ? sm_ST_OWN : (rule + op) % 3;
                        cs.nb = 2;
                        cs.M = 17;
                        cs.K = 29;
                        cs.N = 11;
                        cs.pa[gp] = sm_split_rule(rule, ka - 1, P, cs.M);
                        cs.pa[gq] = sm_split_rule(rule, ka, Q, cs.K);
                        cs.pb[gp] = sm_split_rule(rule, kb, P, cs.K);
                        cs.pb[gq] = sm_split_rule(rule, nb, Q, cs.N);
                        cs.pa[gl] = cs.pb[gl] = dt_replicate();
                        streamed += sm_run_case(mm.mesh, &cs, (rule & 1) ? 0 : 4096);
                    }
                dtt_mesh_close(&mm);
            }
    }
    if (dtt_np > 1) {
        CHECK(streamed > 0, "the layered cases did not stream");
        CHECK(dt__summa_layered > layered, "no product ran in layers");
    }
    /* bytes: a [P, Q, c] product of 96 x 96 F64 in torch.chunk, every rank's received bytes by the spec,
       dt_comm_stats' matmul counters, and the lower bound under what was received (shards even) */
    for (c = 2; c <= dtt_np; c++) {
        int P, Q, msh[3];
        if (dtt_np % c) continue;
        for (P = 1; P * P <= dtt_np / c; P++) {
            dtt_mesh mm;
            int64_t sh[2] = {96, 96};
            dt_placement pa[DT_MAX_MESH_DIMS], pb[DT_MAX_MESH_DIMS];
            dt_tensor *a = NULL, *b = NULL, *o = NULL;
            dt_tensor_desc da, db;
            dt_comm_stats s0, s1;
            size_t base;
            uint64_t want;
            if (dtt_np / c % P) continue;
            Q = dtt_np / c / P;
            msh[0] = P; msh[1] = Q; msh[2] = c;
            if (!dtt_mesh_open(&mm, g_comm, 3, msh)) continue;
            memset(pa, 0, sizeof pa);
            memset(pb, 0, sizeof pb);
            pa[0] = pb[0] = dt_shard(0);
            pa[1] = pb[1] = dt_shard(1);
            pa[2] = pb[2] = dt_replicate();
            da = dtt_desc(DT_F64, 2, sh, 3, pa);
            db = dtt_desc(DT_F64, 2, sh, 3, pb);
            CHECK_OK(dt_tensor_zeros(mm.mesh, &da, &a));
            CHECK_OK(dt_tensor_zeros(mm.mesh, &db, &b));
            dtt_ctx("layers bytes mesh %d x %d x %d", P, Q, c);
            CHECK_OK(dt_mm(a, b, &o)); /* (warms the strategy cache) */
            dt_tensor_destroy(o);
            o = NULL;
            dt_mesh_trim(mm.mesh);
            base = sm_mem_now;
            sm_mem_peak = sm_mem_now;
            dt_comm_get_stats(g_comm, &s0);
            CHECK_OK(dt_mm(a, b, &o));
            dt_comm_get_stats(g_comm, &s1);
            want = sm_layered_recv(96, 96, 96, P, Q, c, mm.coord[0], mm.coord[1], mm.coord[2]);
            CHECK(s1.bytes_recv - s0.bytes_recv == want, "received %llu bytes, the spec says %llu",
                  (unsigned long long)(s1.bytes_recv - s0.bytes_recv), (unsigned long long)want);
            CHECK(s1.matmul_bytes_recv - s0.matmul_bytes_recv == want, "matmul_bytes_recv %llu, want %llu",
                  (unsigned long long)(s1.matmul_bytes_recv - s0.matmul_bytes_recv), (unsigned long long)want);
            { /* the bound: 3 F^(2/3) elements less the 3 shards held, F = 96^3 / p (closed form here) */
                double f = 96.0 * 96.0 * 96.0 / dtt_np, held = 3.0 * (96 / P) * (96 / Q);
                double bound = 3.0 * pow(f, 2.0 / 3.0) - held;
                uint64_t got = s1.matmul_bound - s0.matmul_bound, wb = bound > 0 ? (uint64_t)(bound * 8) : 0;
                CHECK(got + 8 >= wb && got <= wb + 8, "matmul_bound %llu, want %llu", (unsigned long long)got,
                      (unsigned long long)wb);
                CHECK(got <= s1.matmul_bytes_recv - s0.matmul_bytes_recv, "the bound %llu over the bytes received "
                      "%llu", (unsigned long long)got, (unsigned long long)(s1.matmul_bytes_recv - s0.matmul_bytes_recv));
            }
            { /* memory: the result, the panels' budget, the GEMM's block buffer; held: the result */
                int64_t ls[2];
                size_t blk = (size_t)((96 / P) * (96 / Q)) * 8, budget = 3 * blk / 4;
                size_t gemm_ws = (size_t)(DT__GEMM_KB + DT__GEMM_MB) * DT__GEMM_NB * sizeof(double);
                if (budget < ((size_t)64 << 10)) budget = (size_t)64 << 10;
                dt_tensor_local_shape(o, ls);
                CHECK(sm_mem_peak - base <= (size_t)(ls[0] * ls[1]) * 8 + budget + gemm_ws + 4096, "peak %zu bytes",
                      sm_mem_peak - base);
                CHECK(sm_mem_now - base <= (size_t)(ls[0] * ls[1]) * 8 + 1024, "held %zu bytes", sm_mem_now - base);
            }
            dt_tensor_destroy(o);
            dt_tensor_destroy(a);
            dt_tensor_destroy(b);
            dtt_mesh_close(&mm);
        }
    }
    /* auto: [p, 2] with b [k, 64] split along k over p, a [64, k], in bytes over the 2p ranks: the panels
       R = 2 (p - 1) k 64 x 8, flops F = 4 x 64 x 64 k, the result blocks C = 2 x 64 x 64 x 8; layers when
       R + F / 16 >= 2 C (>>ops' dt__summa_layers): at k = 64, 65536 p >= 131072; not at k = 4, 4096 p */
    dt__mm_layers_state = 0;
    if (dtt_np % 2 == 0 && dtt_np >= 4) {
        dtt_mesh mm;
        int msh[2], k;
        msh[0] = dtt_np / 2;
        msh[1] = 2;
        if (dtt_mesh_open(&mm, g_comm, 2, msh))
            for (k = 0; k < 2; k++) {
                int64_t sa[2], sb[2];
                dt_placement pl[DT_MAX_MESH_DIMS];
                dt_tensor *a = NULL, *b = NULL, *o = NULL;
                dt_tensor_desc da, db;
                long before = dt__summa_layered;
                sa[0] = sb[1] = 64;
                sa[1] = sb[0] = k ? 64 : 4;
                memset(pl, 0, sizeof pl);
                pl[0] = dt_shard(0);
                pl[1] = dt_replicate();
                da = dtt_desc(DT_F64, 2, sa, 2, pl);
                db = dtt_desc(DT_F64, 2, sb, 2, pl);
                dtt_ctx("layers auto mesh %d x 2, k = %lld", msh[0], (long long)sa[1]);
                CHECK_OK(dt_tensor_zeros(mm.mesh, &da, &a));
                CHECK_OK(dt_tensor_zeros(mm.mesh, &db, &b));
                CHECK_OK(dt_mm(a, b, &o));
                if (k) CHECK(dt__summa_layered > before, "not layered");
                else CHECK(dt__summa_layered == before, "layered");
                dt_tensor_destroy(o);
                dt_tensor_destroy(a);
                dt_tensor_destroy(b);
            }
        if (mm.mesh) dtt_mesh_close(&mm);
    }
    dt__mm_layers_state = saved;
}

/* ---- read in place: the operands in the node's shared arena ----
   Meshes made with the shared path on (dt_comm_set_shm; DTENSOR_SHM_MIN=0:
   every shard the library allocates is in the arena), the 1-D mesh and
   every p x q: sm_sweep_mesh's layouts, with a's program storage (padded,
   ghosted) from dt_mesh_shm_alloc, except rank 0's ghosted storage
   (malloc'd: every rank must take the messages' way). Then a 97 x 97
   product of [S(0), S(1)] (1-D: [S(0)]) read in place: the bytes counted
   as received are SUMMA's, and beyond the result nothing is allocated but
   the local GEMM's block buffer and bookkeeping (no panel). */
static void sm_restore_env(const char *name, const char *saved) {
    if (saved[0]) setenv(name, saved, 1);
    else unsetenv(name);
}

static void sm_test_shared(void) {
    int shapes[16][2], ns = sm_meshes(dtt_np, shapes), si, n = 0;
    char saved_min[64] = "", saved_arena[64] = "";
    if (getenv("DTENSOR_SHM_MIN")) snprintf(saved_min, sizeof saved_min, "%s", getenv("DTENSOR_SHM_MIN"));
    if (getenv("DTENSOR_SHM_ARENA")) snprintf(saved_arena, sizeof saved_arena, "%s", getenv("DTENSOR_SHM_ARENA"));
    setenv("DTENSOR_SHM_MIN", "0", 1);
    setenv("DTENSOR_SHM_ARENA", "4194304", 1);
    for (si = 0; si < ns; si++) {
        dtt_mesh mm;
        int mnd = shapes[si][1] ? 2 : 1, msh[2], opened;
        int64_t nn = 97, sh[2] = {97, 97}, ls[2];
        dt_placement pa[DT_MAX_MESH_DIMS];
        dt_tensor *a = NULL, *b = NULL, *o = NULL;
        dt_tensor_desc d;
        dt_comm_stats s0, s1;
        size_t base, gemm_ws = (size_t)(DT__GEMM_KB + DT__GEMM_MB) * DT__GEMM_NB * sizeof(double);
        long inplace;
        msh[0] = shapes[si][0];
        msh[1] = shapes[si][1];
        CHECK_OK(dt_comm_set_shm(g_comm, 1));
        opened = dtt_mesh_open(&mm, g_comm, mnd, msh);
        CHECK_OK(dt_comm_set_shm(g_comm, -1));
        if (!opened) continue;
        CHECK(dtt_np < 2 || mm.mesh->shm != NULL, "mesh %s: no shared arena", mm.name);
        sm_arena = 1;
        sm_sweep_mesh(mm.mesh, mnd, msh, &n);
        sm_arena = 0;
        memset(pa, 0, sizeof pa);
        pa[0] = dt_shard(0);
        if (mnd == 2) pa[1] = dt_shard(1);
        d = dtt_desc(DT_F64, 2, sh, mnd, pa);
        CHECK_OK(dt_tensor_zeros(mm.mesh, &d, &a));
        CHECK_OK(dt_tensor_zeros(mm.mesh, &d, &b));
        CHECK_OK(dt_mm(a, b, &o)); /* (the result allocated) */
        dtt_ctx("read in place: mesh %s, 97 x 97", mm.name);
        dt_mesh_trim(mm.mesh);
        inplace = dt__summa_in_place;
        dt_comm_get_stats(g_comm, &s0);
        base = sm_mem_now;
        sm_mem_peak = sm_mem_now;
        CHECK_OK(dt_mm(a, b, &o));
        dt_comm_get_stats(g_comm, &s1);
        dt_tensor_local_shape(o, ls);
        CHECK(dt__summa_in_place - inplace == (dtt_np > 1), "%ld products read in place, want %d",
              dt__summa_in_place - inplace, dtt_np > 1);
        CHECK(s1.bytes_recv - s0.bytes_recv == sm_summa_recv(a, b, mnd, msh, nn), "counted %llu bytes received, "
              "SUMMA's are %llu", (unsigned long long)(s1.bytes_recv - s0.bytes_recv),
              (unsigned long long)sm_summa_recv(a, b, mnd, msh, nn));
        CHECK(sm_mem_peak - base <= gemm_ws + 4096, "peak %zu bytes above the base: no panel buffer, want <= the "
              "GEMM's block buffer %zu + 4096", sm_mem_peak - base, gemm_ws);
        CHECK(sm_mem_now == base, "held after the call: %zu bytes", sm_mem_now - base);
        dt_tensor_destroy(o);
        dt_tensor_destroy(a);
        dt_tensor_destroy(b);
        dtt_mesh_close(&mm);
    }
    sm_restore_env("DTENSOR_SHM_MIN", saved_min);
    sm_restore_env("DTENSOR_SHM_ARENA", saved_arena);
}

/* the streamed matmul's tests, after the strategy sweeps (streaming forced for the values) */
static void test_summa(void) {
    int saved = dt__mm_mode_state;
    sm_test_bad();
    sm_test_choice();
    dt__mm_mode_state = 1;
    sm_test_values();
    sm_test_memory();
    sm_test_panels();
    sm_test_overlap();
    sm_test_layers();
    sm_test_shared();
    dt__mm_mode_state = saved;
}
