/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_badinput.c -- every public function with bad arguments.

   Each failing call must return the exact dt_status, leave a message in
   dt_last_error() that names the function, and leave its outputs untouched:
   *out is pre-filled with a sentinel pointer (never dereferenced) and caller
   buffers with a pattern, both checked after the call. Collective calls get
   the same bad arguments on every rank (or are checked for agreement:
   ranks passing different arguments all get DT_ERR_MISMATCH, no hang).
   Issue 17: bad split rules in every call that takes a placement (sizes
   not adding up, negative, NULL, not fitting a nested part; block <= 0;
   rule on a dim >= ndim; split > 3; split fields on Replicate, Partial or
   past the mesh), the index accessors' arguments, and from_local's
   DT_INFER_SIZES contract (test_from_local_contract). */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

static dt_comm *g_comm = NULL;
static dt_mesh *g_mesh = NULL;  /* 1-D over all ranks, dim "x" */
static dt_mesh *g_mesh2 = NULL; /* 2-D np x 1, dims "a", "b" */
static char g_sentinel_obj[16];
#define SENTINEL ((void *)g_sentinel_obj)

/* a failing call: status, message naming fn */
#define EXPECT(call, want, fn) \
    do { dt_clear_error(); CHECK_ST(call, want); CHECK_ERRMSG(fn); } while (0)

static int pattern_ok(const unsigned char *p, size_t n, unsigned char v)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i] != v) return 0;
    return 1;
}

/* ------------------------------------------------------------ basics */

static void test_basics(void)
{
    int i;
    dt_placement p;
    dtt_ctx("basics");
    for (i = 0; i < DT_NUM_DTYPES; i++) {
        CHECK(dt_dtype_size((dt_dtype)i) == dtt_size((dt_dtype)i), "dt_dtype_size(%d) = %zu", i, dt_dtype_size((dt_dtype)i));
        CHECK(strcmp(dt_dtype_name((dt_dtype)i), dtt_dtname((dt_dtype)i)) == 0, "dt_dtype_name(%d) = %s", i,
              dt_dtype_name((dt_dtype)i));
    }
    CHECK(dt_dtype_size((dt_dtype)99) == 0 && dt_dtype_size((dt_dtype)-1) == 0, "size of an unknown dtype");
    CHECK(strcmp(dt_dtype_name((dt_dtype)99), "?") == 0 && strcmp(dt_dtype_name((dt_dtype)-3), "?") == 0, "name of an unknown dtype");
    for (i = -2; i < 20; i++) {
        const char *s = dt_status_string((dt_status)i);
        CHECK(s != NULL && s[0] != 0, "dt_status_string(%d)", i);
    }
    CHECK(strcmp(dt_status_string(DT_OK), dt_status_string(DT_ERR_ARG)) != 0, "status strings differ");
    p = dt_replicate();
    CHECK(p.kind == DT_REPLICATE && p.dim == 0 && p.reduce == 0, "dt_replicate is the zero placement");
    p = dt_shard(-2);
    CHECK(p.kind == DT_SHARD && p.dim == -2, "dt_shard(-2)");
    p = dt_partial(DT_MIN);
    CHECK(p.kind == DT_PARTIAL && p.reduce == DT_MIN, "dt_partial(DT_MIN)");
    dt_clear_error();
    CHECK(dt_last_error() != NULL && dt_last_error()[0] == 0, "dt_clear_error leaves \"\"");
}

/* ------------------------------------------------------------ comms */

static dt_status dummy_sendrecv(void *user, const void *sb, size_t sn, int dest, void *rb, size_t rn, int src, int tag)
{
    (void)user; (void)sb; (void)sn; (void)dest; (void)rb; (void)rn; (void)src; (void)tag;
    return DT_ERR_COMM;
}

static void test_comm_args(void)
{
    dt_comm *c;
    dt_comm_desc d;
    dt_comm_stats s;
    dtt_ctx("comm arguments");
    EXPECT(dt_comm_mpi(MPI_COMM_WORLD, NULL), DT_ERR_ARG, "dt_comm_mpi");
    c = (dt_comm *)SENTINEL;
    EXPECT(dt_comm_mpi(MPI_COMM_NULL, &c), DT_ERR_ARG, "dt_comm_mpi");
    CHECK(c == (dt_comm *)SENTINEL, "*out changed");
    EXPECT(dt_comm_self(NULL), DT_ERR_ARG, "dt_comm_self");
    EXPECT(dt_comm_custom(NULL, &c), DT_ERR_ARG, "dt_comm_custom");
    CHECK(c == (dt_comm *)SENTINEL, "*out changed");
    memset(&d, 0, sizeof d);
    d.size = 2;
    d.rank = 0;
    d.sendrecv = dummy_sendrecv;
    EXPECT(dt_comm_custom(&d, NULL), DT_ERR_ARG, "dt_comm_custom");
    d.size = 0;
    EXPECT(dt_comm_custom(&d, &c), DT_ERR_ARG, "dt_comm_custom");
    d.size = -3;
    EXPECT(dt_comm_custom(&d, &c), DT_ERR_ARG, "dt_comm_custom");
    d.size = 2;
    d.rank = 2;
    EXPECT(dt_comm_custom(&d, &c), DT_ERR_ARG, "dt_comm_custom");
    d.rank = -1;
    EXPECT(dt_comm_custom(&d, &c), DT_ERR_ARG, "dt_comm_custom");
    d.rank = 1;
    d.sendrecv = NULL;
    EXPECT(dt_comm_custom(&d, &c), DT_ERR_ARG, "dt_comm_custom");
    CHECK(c == (dt_comm *)SENTINEL, "*out changed");
    /* one rank: sendrecv may be NULL */
    d.size = 1;
    d.rank = 0;
    c = NULL;
    CHECK_OK(dt_comm_custom(&d, &c));
    dt_comm_destroy(c);
    EXPECT(dt_comm_barrier(NULL), DT_ERR_ARG, "dt_comm_barrier");
    /* void / int functions with NULL: no crash, documented answers */
    dt_comm_destroy(NULL);
    dt_comm_reset_stats(NULL);
    memset(&s, 0x11, sizeof s);
    dt_comm_get_stats(NULL, &s);
    CHECK(s.calls == 0 && s.bytes_sent == 0 && s.bytes_recv == 0, "stats of a NULL comm");
    dt_comm_get_stats(g_comm, NULL);
    CHECK(dt_comm_rank(NULL) == -1, "dt_comm_rank(NULL) = %d", dt_comm_rank(NULL));
    CHECK(dt_comm_size(NULL) == 0, "dt_comm_size(NULL) = %d", dt_comm_size(NULL));
}

/* ------------------------------------------------------------ meshes */

static void test_mesh_args(void)
{
    dt_mesh_desc md;
    dt_mesh *m;
    const char *names[2] = { "x", "y" };
    char longname[200];
    int coord[DT_MAX_MESH_DIMS], k;
    int *ranks = (int *)dtt_malloc(sizeof(int) * (size_t)dtt_np);
    dtt_ctx("mesh arguments");
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    m = (dt_mesh *)SENTINEL;
    EXPECT(dt_mesh_create(NULL, &md, &m), DT_ERR_ARG, "dt_mesh_create");
    EXPECT(dt_mesh_create(g_comm, NULL, &m), DT_ERR_ARG, "dt_mesh_create");
    EXPECT(dt_mesh_create(g_comm, &md, NULL), DT_ERR_ARG, "dt_mesh_create");
    md.ndim = 0;
    EXPECT(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH, "dt_mesh_create");
    md.ndim = -1;
    EXPECT(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH, "dt_mesh_create");
    md.ndim = DT_MAX_MESH_DIMS + 1;
    EXPECT(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH, "dt_mesh_create");
    md.ndim = 1;
    md.shape[0] = dtt_np + 2; /* product != ranks */
    EXPECT(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH, "dt_mesh_create");
    md.shape[0] = -dtt_np;
    EXPECT(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH, "dt_mesh_create");
    md.ndim = 2;
    md.shape[0] = dtt_np;
    md.shape[1] = 1;
    md.names[0] = "x";
    md.names[1] = "x";
    EXPECT(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH, "dt_mesh_create");
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    md.names[1] = longname;
    EXPECT(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH, "dt_mesh_create");
    md.names[0] = md.names[1] = NULL;
    for (k = 0; k < dtt_np; k++) ranks[k] = k;
    ranks[0] = dtt_np; /* not a rank of the comm */
    md.ranks = ranks;
    EXPECT(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH, "dt_mesh_create");
    CHECK(m == (dt_mesh *)SENTINEL, "*out changed");
    /* ranks that disagree: every rank fails, nobody hangs */
    if (dtt_np > 1) {
        dt_status st;
        memset(&md, 0, sizeof md);
        md.ndim = 2;
        md.shape[0] = dtt_rank == 1 ? 1 : dtt_np;
        md.shape[1] = dtt_rank == 1 ? dtt_np : 1;
        dt_clear_error();
        st = dt_mesh_create(g_comm, &md, &m);
        CHECK(st == DT_ERR_MISMATCH, "rank 1 another mesh shape: %s", dt_status_string(st));
        if (st == DT_OK) { dt_mesh_destroy(m); m = (dt_mesh *)SENTINEL; }
        else CHECK_ERRMSG("dt_mesh_create");
        CHECK(m == (dt_mesh *)SENTINEL, "*out changed");
    }
    /* slice and flatten */
    m = (dt_mesh *)SENTINEL;
    EXPECT(dt_mesh_slice(NULL, 1, names, &m), DT_ERR_ARG, "dt_mesh_slice");
    EXPECT(dt_mesh_slice(g_mesh, 1, NULL, &m), DT_ERR_ARG, "dt_mesh_slice");
    EXPECT(dt_mesh_slice(g_mesh, 1, names, NULL), DT_ERR_ARG, "dt_mesh_slice");
    EXPECT(dt_mesh_slice(g_mesh, 0, names, &m), DT_ERR_MESH, "dt_mesh_slice");
    EXPECT(dt_mesh_slice(g_mesh, 2, names, &m), DT_ERR_MESH, "dt_mesh_slice");
    EXPECT(dt_mesh_slice(g_mesh, 1, names + 1, &m), DT_ERR_MESH, "dt_mesh_slice");
    EXPECT(dt_mesh_slice(g_mesh, -1, names, &m), DT_ERR_MESH, "dt_mesh_slice");
    EXPECT(dt_mesh_flatten(NULL, 1, names, "z", &m), DT_ERR_ARG, "dt_mesh_flatten");
    EXPECT(dt_mesh_flatten(g_mesh, 1, NULL, "z", &m), DT_ERR_ARG, "dt_mesh_flatten");
    EXPECT(dt_mesh_flatten(g_mesh, 1, names, "z", NULL), DT_ERR_ARG, "dt_mesh_flatten");
    EXPECT(dt_mesh_flatten(g_mesh, 0, names, "z", &m), DT_ERR_MESH, "dt_mesh_flatten");
    EXPECT(dt_mesh_flatten(g_mesh, 1, names + 1, "z", &m), DT_ERR_MESH, "dt_mesh_flatten");
    EXPECT(dt_mesh_flatten(g_mesh, 1, names, longname, &m), DT_ERR_MESH, "dt_mesh_flatten");
    CHECK(m == (dt_mesh *)SENTINEL, "*out changed");
    /* getters with NULL: documented answers, no crash */
    for (k = 0; k < DT_MAX_MESH_DIMS; k++) coord[k] = 77;
    CHECK(dt_mesh_coordinate(NULL, coord) == 0, "dt_mesh_coordinate(NULL)");
    CHECK(coord[0] == 77, "dt_mesh_coordinate(NULL) wrote coord");
    CHECK(dt_mesh_ndim(NULL) == 0, "dt_mesh_ndim(NULL)");
    CHECK(dt_mesh_dim_size(NULL, 0) == 0, "dt_mesh_dim_size(NULL)");
    CHECK(dt_mesh_size(NULL) == 0, "dt_mesh_size(NULL)");
    CHECK(dt_mesh_rank(NULL) == -1, "dt_mesh_rank(NULL)");
    CHECK(dt_mesh_dim_index(NULL, "x") == -1, "dt_mesh_dim_index(NULL)");
    CHECK(dt_mesh_dim_index(g_mesh, NULL) == -1, "dt_mesh_dim_index(m, NULL)");
    CHECK(dt_mesh_dim_name(NULL, 0) != NULL, "dt_mesh_dim_name(NULL) must not be NULL");
    CHECK(dt_mesh_dim_name(g_mesh, -1) != NULL && dt_mesh_dim_name(g_mesh, 9)[0] == 0, "dt_mesh_dim_name out of range");
    dt_mesh_destroy(NULL);
    free(ranks);
}

/* ------------------------------------------------------------ huge extents

   The largest shapes the size rule admits (u8, or a 0 beside dims whose
   product times the element size fits in int64) through the layout and the
   redistribution planner, whose chunk arithmetic (ceil(n/k), r*c + c) must
   not overflow: every part against a torch.chunk reference in uint64. */

/* torch.chunk part r of k of [lo0, lo0 + n), in uint64 (n < 2^63, so nothing wraps) */
static void ref_chunk(uint64_t lo0, uint64_t n, int k, int r, uint64_t *lo, uint64_t *len)
{
    uint64_t c = n / (uint64_t)k + (n % (uint64_t)k != 0), a = (uint64_t)r * c < n ? (uint64_t)r * c : n;
    *lo = lo0 + a;
    *len = n - a < c ? n - a : c;
}

/* the layout of u8 [INT64_MAX] with dim 0 split by every mesh dim of m (nested) */
static void check_huge_layout(dt_mesh *m, const char *what)
{
    dt_tensor_desc d;
    int nd = dt_mesh_ndim(m), k, r, coord[DT_MAX_MESH_DIMS] = { 0, 0, 0, 0 };
    int size = dt_mesh_size(m);
    uint64_t next = 0;
    memset(&d, 0, sizeof d);
    d.dtype = DT_U8;
    d.ndim = 1;
    d.shape[0] = INT64_MAX;
    for (k = 0; k < nd; k++) d.placements[k] = dt_shard(0);
    for (r = 0; r < size; r++) { /* row-major coordinates: the parts in index order */
        int64_t ls[DT_MAX_DIMS] = { -1 }, lo[DT_MAX_DIMS] = { -1 };
        uint64_t wlo = 0, wlen = (uint64_t)INT64_MAX;
        int rest = r;
        for (k = nd - 1; k >= 0; k--) { coord[k] = rest % dt_mesh_dim_size(m, k); rest /= dt_mesh_dim_size(m, k); }
        for (k = 0; k < nd; k++) ref_chunk(wlo, wlen, dt_mesh_dim_size(m, k), coord[k], &wlo, &wlen);
        dtt_ctx("huge layout %s, mesh rank %d", what, r);
        CHECK_OK(dt_layout(m, &d, coord, ls, lo));
        CHECK(ls[0] >= 0 && lo[0] >= 0 && (uint64_t)ls[0] == wlen && (uint64_t)lo[0] == wlo,
              "u8 [INT64_MAX]: part [%lld +%lld), want [%llu +%llu)", (long long)lo[0], (long long)ls[0],
              (unsigned long long)wlo, (unsigned long long)wlen);
        CHECK(wlo == next || wlen == 0, "parts not contiguous at %llu", (unsigned long long)wlo);
        if (wlen) next = wlo + wlen;
    }
    CHECK(next == (uint64_t)INT64_MAX, "the parts end at %llu, not INT64_MAX", (unsigned long long)next);
}

/* a zero-size u8 tensor with an INT64_MAX extent, redistributed between
   placements that split that extent: every rank's part as the reference */
static void check_huge_redistribute(dt_mesh *m, int big_dim, const dt_placement *from, const dt_placement *to,
                                    const char *what)
{
    dt_tensor_desc d;
    dt_tensor *x = NULL, *y = NULL;
    int nd = dt_mesh_ndim(m), coord[DT_MAX_MESH_DIMS] = { 0, 0, 0, 0 }, k;
    dtt_ctx("huge redistribute %s", what);
    memset(&d, 0, sizeof d);
    d.dtype = DT_U8;
    d.ndim = 2;
    d.shape[big_dim] = INT64_MAX;
    d.shape[1 - big_dim] = 0;
    memcpy(d.placements, from, (size_t)nd * sizeof *from);
    CHECK_OK(dt_tensor_zeros(m, &d, &x));
    if (x) CHECK_OK(dt_tensor_redistribute(x, to, &y));
    dt_mesh_coordinate(m, coord);
    if (y) {
        int64_t ls[2], lo[2];
        uint64_t wlo[2] = { 0, 0 }, wlen[2];
        wlen[big_dim] = (uint64_t)INT64_MAX;
        wlen[1 - big_dim] = 0;
        for (k = 0; k < nd; k++)
            if (to[k].kind == DT_SHARD) {
                int td = to[k].dim;
                ref_chunk(wlo[td], wlen[td], dt_mesh_dim_size(m, k), coord[k], &wlo[td], &wlen[td]);
            }
        dt_tensor_local_shape(y, ls);
        dt_tensor_local_offset(y, lo);
        for (k = 0; k < 2; k++)
            CHECK((uint64_t)ls[k] == wlen[k] && (uint64_t)lo[k] == wlo[k], "dim %d: part [%lld +%lld), want [%llu +%llu)",
                  k, (long long)lo[k], (long long)ls[k], (unsigned long long)wlo[k], (unsigned long long)wlen[k]);
    }
    dt_tensor_destroy(y);
    dt_tensor_destroy(x);
}

static void test_huge_extents(void)
{
    dt_placement s0[DT_MAX_MESH_DIMS], s1[DT_MAX_MESH_DIMS], rep[DT_MAX_MESH_DIMS], s00[DT_MAX_MESH_DIMS];
    dt_placement s0p[DT_MAX_MESH_DIMS], s01[DT_MAX_MESH_DIMS], pp[DT_MAX_MESH_DIMS];
    dt_mesh *m22 = NULL;
    memset(s0p, 0, sizeof s0p);
    memset(s01, 0, sizeof s01);
    memset(pp, 0, sizeof pp);
    s0p[0] = dt_shard(0);
    s0p[1] = dt_partial(DT_SUM);
    s01[0] = dt_shard(0);
    s01[1] = dt_shard(1);
    pp[0] = dt_partial(DT_SUM);
    pp[1] = dt_partial(DT_SUM);
    memset(s0, 0, sizeof s0);
    memset(s1, 0, sizeof s1);
    memset(rep, 0, sizeof rep);
    memset(s00, 0, sizeof s00);
    s0[0] = dt_shard(0);
    s1[0] = dt_shard(1);
    s00[0] = dt_shard(0);
    s00[1] = dt_shard(0);
    check_huge_layout(g_mesh, "1-D mesh");
    check_huge_layout(g_mesh2, "[np, 1] mesh");
    {
        const struct { dt_mesh *m; int big_dim; const dt_placement *from, *to; const char *what; } cs[] = {
            { g_mesh, 0, s0, rep, "[INT64_MAX, 0] S(0) -> R" },
            { g_mesh, 0, rep, s0, "[INT64_MAX, 0] R -> S(0)" },
            { g_mesh, 0, s0, s1, "[INT64_MAX, 0] S(0) -> S(1)" },
            { g_mesh, 1, s1, s0, "[0, INT64_MAX] S(1) -> S(0)" },
            { g_mesh2, 0, s00, rep, "[INT64_MAX, 0] S(0),S(0) -> R,R on [np, 1]" },
            { g_mesh, 0, pp, s0, "[INT64_MAX, 0] P(sum) -> S(0)" },
            { g_mesh2, 0, s0p, s01, "[INT64_MAX, 0] S(0),P(sum) -> S(0),S(1) on [np, 1]" },
        };
        int i;
        for (i = 0; i < NELEM(cs); i++) check_huge_redistribute(cs[i].m, cs[i].big_dim, cs[i].from, cs[i].to, cs[i].what);
    }
    if (dtt_np % 2 == 0 && dtt_np > 2) { /* two real splits of one dim: [2, np/2] */
        dt_mesh_desc md;
        memset(&md, 0, sizeof md);
        md.ndim = 2;
        md.shape[0] = 2;
        md.shape[1] = dtt_np / 2;
        CHECK_OK(dt_mesh_create(g_comm, &md, &m22));
        if (m22) {
            const struct { const dt_placement *from, *to; const char *what; } cs[] = {
                { s00, rep, "[INT64_MAX, 0] S(0),S(0) -> R,R on [2, np/2]" },
                { rep, s00, "[INT64_MAX, 0] R,R -> S(0),S(0) on [2, np/2]" },
                { s0, s00, "[INT64_MAX, 0] S(0),R -> S(0),S(0) on [2, np/2]" },
                /* reductions: the planner sizes the blocks a reduce-scatter would leave */
                { s0p, s00, "[INT64_MAX, 0] S(0),P(sum) -> S(0),S(0) on [2, np/2]" },
                { s0p, s01, "[INT64_MAX, 0] S(0),P(sum) -> S(0),S(1) on [2, np/2]" },
                { s0p, rep, "[INT64_MAX, 0] S(0),P(sum) -> R,R on [2, np/2]" },
                { pp, s01, "[INT64_MAX, 0] P(sum),P(sum) -> S(0),S(1) on [2, np/2]" },
            };
            int i;
            check_huge_layout(m22, "[2, np/2] mesh");
            for (i = 0; i < NELEM(cs); i++) check_huge_redistribute(m22, 0, cs[i].from, cs[i].to, cs[i].what);
        }
        dt_mesh_destroy(m22);
    }
    if (dtt_np % 4 == 0) { /* a reduction with another after it: the planner's reduce-scatter into a sharded dim */
        dt_mesh_desc md;
        dt_placement spp[DT_MAX_MESH_DIMS], srr[DT_MAX_MESH_DIMS];
        memset(&md, 0, sizeof md);
        memset(spp, 0, sizeof spp);
        memset(srr, 0, sizeof srr);
        md.ndim = 3;
        md.shape[0] = 2;
        md.shape[1] = 2;
        md.shape[2] = dtt_np / 4;
        spp[0] = srr[0] = dt_shard(0);
        spp[1] = spp[2] = dt_partial(DT_SUM);
        CHECK_OK(dt_mesh_create(g_comm, &md, &m22));
        if (m22) check_huge_redistribute(m22, 0, spp, srr, "[INT64_MAX, 0] S(0),P(sum),P(sum) -> S(0),R,R on [2, 2, np/4]");
        dt_mesh_destroy(m22);
    }
}

/* ------------------------------------------------------------ tensor descs */

typedef struct badcase { dt_tensor_desc d; dt_status want; const char *what; dt_mesh *m; } badcase;

/* sizes arrays for the split-rule cases (np entries used; the cases point at them) */
static int64_t g_sz_short[64], g_sz_neg[64], g_sz_long[64], g_sz_two[64], g_sz_alt[64], g_sz_one[1];

static dt_placement with_split(dt_placement p, int split, int64_t block, const int64_t *sizes)
{
    p.split = (uint8_t)split;
    p.block = block;
    p.sizes = sizes;
    return p;
}

static int bad_descs(badcase *b)
{
    int n = 0, k;
    dt_tensor_desc good;
    /* [2 np, 3] split over np: sizes of 2 each fit; these do not */
    for (k = 0; k < dtt_np; k++) {
        g_sz_short[k] = 1;                  /* sum np, not 2 np */
        g_sz_long[k] = 2;
        g_sz_neg[k] = 2;
        g_sz_two[k] = g_sz_alt[k] = 2; /* two valid arrays (at 2+ ranks, different ones) */
    }
    if (dtt_np > 1) g_sz_alt[0] = 3, g_sz_alt[1] = 1;
    g_sz_long[0] = 3;
    g_sz_neg[0] = -1;                        /* a negative size (the sum still 2 np at 2+ ranks) */
    if (dtt_np > 1) g_sz_neg[dtt_np - 1] += 3;
    g_sz_one[0] = 3;
    memset(&good, 0, sizeof good);
    good.dtype = DT_F32;
    good.ndim = 2;
    good.shape[0] = 2 * dtt_np;
    good.shape[1] = 3;
    good.placements[0] = dt_shard(0);
#define ADD(stmt, st, w) do { b[n].d = good; b[n].m = g_mesh; { dt_tensor_desc *d = &b[n].d; stmt; } b[n].want = st; b[n].what = w; n++; } while (0)
    ADD(d->ndim = -1, DT_ERR_SHAPE, "ndim -1");
    ADD(d->ndim = DT_MAX_DIMS + 1, DT_ERR_SHAPE, "ndim DT_MAX_DIMS+1");
    ADD(d->ndim = 1000000, DT_ERR_SHAPE, "ndim 1000000");
    ADD(d->shape[1] = -3, DT_ERR_SHAPE, "negative size");
    ADD((d->shape[0] = (int64_t)1 << 40, d->shape[1] = (int64_t)1 << 40), DT_ERR_SHAPE, "bytes overflow size_t (2^40 x 2^40)");
    ADD((d->shape[0] = INT64_MAX, d->placements[0] = dt_replicate()), DT_ERR_SHAPE, "INT64_MAX elements");
    ADD((d->ndim = 3, d->shape[0] = (int64_t)1 << 22, d->shape[1] = (int64_t)1 << 22, d->shape[2] = (int64_t)1 << 19),
        DT_ERR_SHAPE, "2^63 bytes");
    ADD((d->dtype = DT_F64, d->shape[0] = 0, d->shape[1] = (int64_t)1 << 62), DT_ERR_SHAPE,
        "f64 [0, 2^62]: no elements, but 2^62 x 8 bytes of extents");
    ADD((d->dtype = DT_U8, d->ndim = 3, d->shape[0] = 0, d->shape[1] = (int64_t)1 << 32, d->shape[2] = (int64_t)1 << 32),
        DT_ERR_SHAPE, "u8 [0, 2^32, 2^32]: no elements, but 2^64 of extents");
    ADD(d->dtype = (dt_dtype)99, DT_ERR_DTYPE, "dtype 99");
    ADD(d->dtype = (dt_dtype)-1, DT_ERR_DTYPE, "dtype -1");
    ADD(d->placements[0] = dt_shard(2), DT_ERR_PLACEMENT, "Shard(2) of a 2-D tensor");
    ADD(d->placements[0] = dt_shard(-3), DT_ERR_PLACEMENT, "Shard(-3) of a 2-D tensor");
    ADD((d->ndim = 0, d->placements[0] = dt_shard(0)), DT_ERR_PLACEMENT, "Shard(0) of a scalar");
    ADD(d->placements[1] = dt_shard(1), DT_ERR_PLACEMENT, "placements[1] on a 1-D mesh");
    ADD(d->placements[DT_MAX_MESH_DIMS - 1] = dt_partial(DT_SUM), DT_ERR_PLACEMENT, "placements[last] on a 1-D mesh");
    ADD(d->placements[2].reduce = 1, DT_ERR_PLACEMENT, "a stray reduce field past the mesh");
    ADD(d->placements[0].kind = 7, DT_ERR_PLACEMENT, "placement kind 7");
    ADD(d->placements[0] = dt_partial((dt_reduce)9), DT_ERR_PLACEMENT, "Partial reduce 9");
    ADD(d->device = 3, DT_ERR_DEVICE, "device 3");
    /* the split rules: every rank passes the same bad placement */
    ADD(d->placements[0] = dt_shard_sizes(0, g_sz_short), DT_ERR_PLACEMENT, "sizes adding up to np, not the extent 2 np");
    ADD(d->placements[0] = dt_shard_sizes(0, g_sz_long), DT_ERR_PLACEMENT, "sizes adding up to 2 np + 1");
    ADD(d->placements[0] = dt_shard_sizes(0, g_sz_neg), DT_ERR_PLACEMENT, "a negative size");
    ADD(d->placements[0] = dt_shard_sizes(0, NULL), DT_ERR_PLACEMENT, "sizes NULL");
    ADD(d->placements[0] = dt_shard_cyclic(0, 0), DT_ERR_PLACEMENT, "cyclic block 0");
    ADD(d->placements[0] = dt_shard_cyclic(1, -4), DT_ERR_PLACEMENT, "cyclic block -4");
    ADD(d->placements[0] = dt_shard_cyclic(0, INT64_MIN), DT_ERR_PLACEMENT, "cyclic block INT64_MIN");
    ADD(d->placements[0] = dt_shard_balanced(2), DT_ERR_PLACEMENT, "balanced Shard(2) of a 2-D tensor");
    ADD(d->placements[0] = dt_shard_balanced(-3), DT_ERR_PLACEMENT, "balanced Shard(-3) of a 2-D tensor");
    ADD(d->placements[0] = dt_shard_sizes(2, g_sz_short), DT_ERR_PLACEMENT, "sizes Shard(2) of a 2-D tensor");
    ADD(d->placements[0] = dt_shard_cyclic(5, 1), DT_ERR_PLACEMENT, "cyclic Shard(5) of a 2-D tensor");
    ADD((d->ndim = 0, d->placements[0] = dt_shard_cyclic(0, 1)), DT_ERR_PLACEMENT, "cyclic Shard(0) of a scalar");
    ADD(d->placements[0] = with_split(dt_shard(0), DT_SPLIT_POINTS + 1, 0, NULL), DT_ERR_PLACEMENT, "split 5");
    ADD(d->placements[0] = with_split(dt_shard(0), 255, 2, g_sz_short), DT_ERR_PLACEMENT, "split 255");
    ADD(d->placements[0] = with_split(dt_replicate(), DT_SPLIT_BALANCED, 0, NULL), DT_ERR_PLACEMENT,
        "a stray split field on Replicate");
    ADD(d->placements[0] = with_split(dt_replicate(), 0, 2, NULL), DT_ERR_PLACEMENT, "a stray block field on Replicate");
    ADD(d->placements[0] = with_split(dt_replicate(), 0, 0, g_sz_short), DT_ERR_PLACEMENT,
        "a stray sizes field on Replicate");
    ADD(d->placements[0] = with_split(dt_partial(DT_SUM), DT_SPLIT_CYCLIC, 2, NULL), DT_ERR_PLACEMENT,
        "a stray split field on Partial");
    ADD(d->placements[0] = with_split(dt_partial(DT_MAX), 0, 0, g_sz_short), DT_ERR_PLACEMENT,
        "a stray sizes field on Partial");
    ADD(d->placements[2].split = DT_SPLIT_SIZES, DT_ERR_PLACEMENT, "a stray split field past the mesh");
    ADD(d->placements[1].block = 3, DT_ERR_PLACEMENT, "a stray block field past the mesh");
    ADD(d->placements[DT_MAX_MESH_DIMS - 1].sizes = g_sz_short, DT_ERR_PLACEMENT, "a stray sizes field past the mesh");
    if (dtt_np > 1) { /* on the np x 1 mesh: a later sizes rule must fit every part the earlier dim leaves */
        ADD((b[n].m = g_mesh2, d->shape[0] = 2 * dtt_np + 1, d->placements[1] = dt_shard_sizes(0, g_sz_one)),
            DT_ERR_PLACEMENT, "np x 1 mesh, [2 np + 1, 3] S(0), sizes(0, {3}): parts 3 and less");
        ADD((b[n].m = g_mesh2, d->shape[0] = 2 * dtt_np + 1, d->placements[0] = dt_shard_cyclic(0, 1),
             d->placements[1] = dt_shard_sizes(0, g_sz_one)),
            DT_ERR_PLACEMENT, "np x 1 mesh, [2 np + 1, 3] cyclic(0, 1), sizes(0, {3}): parts of 3 and 2");
    }
#undef ADD
    return n;
}

static void test_tensor_descs(void)
{
    badcase b[64];
    int n = bad_descs(b), i;
    size_t bufn = 4096;
    unsigned char *buf = (unsigned char *)dtt_malloc(bufn);
    for (i = 0; i < n; i++) {
        dt_tensor *t = (dt_tensor *)SENTINEL;
        int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS];
        int coord[DT_MAX_MESH_DIMS] = { 0, 0, 0, 0 };
        dtt_ctx("bad desc: %s", b[i].what);
        dt_mesh *m = b[i].m;
        EXPECT(dt_tensor_empty(m, &b[i].d, &t), b[i].want, "dt_tensor_empty");
        EXPECT(dt_tensor_zeros(m, &b[i].d, &t), b[i].want, "dt_tensor_zeros");
        memset(buf, 0xC3, bufn);
        EXPECT(dt_tensor_from_local(m, &b[i].d, buf, DT_COPY, &t), b[i].want, "dt_tensor_from_local");
        EXPECT(dt_tensor_from_local(m, &b[i].d, buf, DT_BORROW, &t), b[i].want, "dt_tensor_from_local");
        EXPECT(dt_tensor_from_local(m, &b[i].d, buf, DT_COPY | DT_VERIFY, &t), DT_ERR_MISMATCH, "dt_tensor_from_local");
        CHECK(pattern_ok(buf, bufn, 0xC3), "from_local touched the buffer");
        EXPECT(dt_tensor_distribute(m, &b[i].d, buf, DT_SRC_ALL, &t), b[i].want, "dt_tensor_distribute");
        EXPECT(dt_tensor_distribute(m, &b[i].d, buf, 0, &t), b[i].want, "dt_tensor_distribute");
        CHECK(pattern_ok(buf, bufn, 0xC3), "distribute touched the buffer");
        CHECK(t == (dt_tensor *)SENTINEL, "*out changed");
        memset(ls, 0xC3, sizeof ls);
        memset(lo, 0xC3, sizeof lo);
        EXPECT(dt_layout(m, &b[i].d, coord, ls, lo), b[i].want, "dt_layout");
        CHECK(pattern_ok((const unsigned char *)ls, sizeof ls, 0xC3) && pattern_ok((const unsigned char *)lo, sizeof lo, 0xC3),
              "dt_layout wrote its outputs");
    }
    free(buf);
}

/* ------------------------------------------------------------ tensor functions */

static void test_tensor_args(void)
{
    dt_tensor_desc d;
    dt_tensor *a = NULL, *t, *o;
    dt_placement pl[DT_MAX_MESH_DIMS];
    unsigned char *buf = (unsigned char *)dtt_malloc(4096), *full = (unsigned char *)dtt_malloc(4096);
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], wrong[DT_MAX_DIMS];
    int coord[DT_MAX_MESH_DIMS] = { 0, 0, 0, 0 }, k;
    memset(&d, 0, sizeof d);
    d.dtype = DT_F32;
    d.ndim = 2;
    d.shape[0] = 2 * dtt_np; /* two rows each */
    d.shape[1] = 3;
    d.placements[0] = dt_shard(0);
    dtt_ctx("tensor arguments");
    CHECK_OK(dt_tensor_zeros(g_mesh, &d, &a));
    t = (dt_tensor *)SENTINEL;
    /* creation */
    EXPECT(dt_tensor_empty(NULL, &d, &t), DT_ERR_ARG, "dt_tensor_empty");
    EXPECT(dt_tensor_empty(g_mesh, NULL, &t), DT_ERR_ARG, "dt_tensor_empty");
    EXPECT(dt_tensor_empty(g_mesh, &d, NULL), DT_ERR_ARG, "dt_tensor_empty");
    EXPECT(dt_tensor_zeros(NULL, &d, &t), DT_ERR_ARG, "dt_tensor_zeros");
    EXPECT(dt_tensor_zeros(g_mesh, NULL, &t), DT_ERR_ARG, "dt_tensor_zeros");
    EXPECT(dt_tensor_zeros(g_mesh, &d, NULL), DT_ERR_ARG, "dt_tensor_zeros");
    EXPECT(dt_tensor_from_local(NULL, &d, buf, 0, &t), DT_ERR_ARG, "dt_tensor_from_local");
    EXPECT(dt_tensor_from_local(g_mesh, NULL, buf, 0, &t), DT_ERR_ARG, "dt_tensor_from_local");
    EXPECT(dt_tensor_from_local(g_mesh, &d, buf, 0, NULL), DT_ERR_ARG, "dt_tensor_from_local");
    EXPECT(dt_tensor_from_local(g_mesh, &d, NULL, DT_COPY, &t), DT_ERR_ARG, "dt_tensor_from_local");
    memset(buf, 0xC3, 4096);
    EXPECT(dt_tensor_from_local(g_mesh, &d, buf, 8u, &t), DT_ERR_ARG, "dt_tensor_from_local");
    dtt_ref_layout(1, &dtt_np, &dtt_rank, 2, d.shape, d.placements, ls, lo);
    memcpy(wrong, ls, sizeof wrong);
    wrong[1] = 4;
    d.local_shape = wrong;
    EXPECT(dt_tensor_from_local(g_mesh, &d, buf, DT_COPY, &t), DT_ERR_SHAPE, "dt_tensor_from_local");
    d.local_shape = NULL;
    CHECK(pattern_ok(buf, 4096, 0xC3), "from_local touched the buffer");
    EXPECT(dt_tensor_distribute(NULL, &d, buf, 0, &t), DT_ERR_ARG, "dt_tensor_distribute");
    EXPECT(dt_tensor_distribute(g_mesh, NULL, buf, 0, &t), DT_ERR_ARG, "dt_tensor_distribute");
    EXPECT(dt_tensor_distribute(g_mesh, &d, buf, 0, NULL), DT_ERR_ARG, "dt_tensor_distribute");
    EXPECT(dt_tensor_distribute(g_mesh, &d, buf, dtt_np, &t), DT_ERR_ARG, "dt_tensor_distribute");
    EXPECT(dt_tensor_distribute(g_mesh, &d, buf, -2, &t), DT_ERR_ARG, "dt_tensor_distribute");
    EXPECT(dt_tensor_distribute(g_mesh, &d, buf, 1 << 30, &t), DT_ERR_ARG, "dt_tensor_distribute");
    EXPECT(dt_tensor_distribute(g_mesh, &d, NULL, DT_SRC_ALL, &t), DT_ERR_ARG, "dt_tensor_distribute");
    if (dtt_np == 1) EXPECT(dt_tensor_distribute(g_mesh, &d, NULL, 0, &t), DT_ERR_ARG, "dt_tensor_distribute");
    CHECK(pattern_ok(buf, 4096, 0xC3), "distribute touched the buffer");
    /* ranks naming different sources: all fail together */
    if (dtt_np > 1) {
        dt_status st;
        dt_clear_error();
        st = dt_tensor_distribute(g_mesh, &d, buf, dtt_rank == 0 ? 0 : 1, &t);
        CHECK(st == DT_ERR_MISMATCH, "ranks with different src_rank: %s", dt_status_string(st));
        if (st == DT_OK) dt_tensor_destroy(t), t = (dt_tensor *)SENTINEL;
        else CHECK_ERRMSG("dt_tensor_distribute");
    }
    CHECK(t == (dt_tensor *)SENTINEL, "*out changed");

    /* redistribute */
    memset(pl, 0, sizeof pl);
    EXPECT(dt_tensor_redistribute(NULL, pl, &t), DT_ERR_ARG, "dt_tensor_redistribute");
    EXPECT(dt_tensor_redistribute(a, NULL, &t), DT_ERR_ARG, "dt_tensor_redistribute");
    EXPECT(dt_tensor_redistribute(a, pl, NULL), DT_ERR_ARG, "dt_tensor_redistribute");
    if (a) {
        dt_tensor *x = NULL;
        pl[0] = dt_shard(2);
        EXPECT(dt_tensor_redistribute(a, pl, &x), DT_ERR_PLACEMENT, "dt_tensor_redistribute");
        pl[0] = dt_shard(-3);
        EXPECT(dt_tensor_redistribute(a, pl, &x), DT_ERR_PLACEMENT, "dt_tensor_redistribute");
        pl[0].kind = 9;
        EXPECT(dt_tensor_redistribute(a, pl, &x), DT_ERR_PLACEMENT, "dt_tensor_redistribute");
        pl[0] = dt_partial((dt_reduce)7);
        EXPECT(dt_tensor_redistribute(a, pl, &x), DT_ERR_PLACEMENT, "dt_tensor_redistribute");
        pl[0] = dt_partial(DT_SUM); /* Shard -> Partial */
        EXPECT(dt_tensor_redistribute(a, pl, &x), DT_ERR_PLACEMENT, "dt_tensor_redistribute");
        pl[0] = dt_partial(DT_AVG);
        EXPECT(dt_tensor_redistribute(a, pl, &x), DT_ERR_PLACEMENT, "dt_tensor_redistribute");
        /* the split rules */
        pl[0] = dt_shard_sizes(0, g_sz_short);
        EXPECT(dt_tensor_redistribute(a, pl, &x), DT_ERR_PLACEMENT, "dt_tensor_redistribute");
        pl[0] = dt_shard_sizes(1, g_sz_two); /* 2 np, never the 3 columns */
        EXPECT(dt_tensor_redistribute(a, pl, &x), DT_ERR_PLACEMENT, "dt_tensor_redistribute");
        pl[0] = dt_shard_sizes(0, g_sz_neg);
        EXPECT(dt_tensor_redistribute(a, pl, &x), DT_ERR_PLACEMENT, "dt_tensor_redistribute");
        pl[0] = dt_shard_sizes(0, NULL);
        EXPECT(dt_tensor_redistribute(a, pl, &x), DT_ERR_PLACEMENT, "dt_tensor_redistribute");
        pl[0] = dt_shard_cyclic(0, 0);
        EXPECT(dt_tensor_redistribute(a, pl, &x), DT_ERR_PLACEMENT, "dt_tensor_redistribute");
        pl[0] = dt_shard_cyclic(1, -1);
        EXPECT(dt_tensor_redistribute(a, pl, &x), DT_ERR_PLACEMENT, "dt_tensor_redistribute");
        pl[0] = dt_shard_balanced(2);
        EXPECT(dt_tensor_redistribute(a, pl, &x), DT_ERR_PLACEMENT, "dt_tensor_redistribute");
        pl[0] = with_split(dt_shard(0), DT_SPLIT_POINTS + 1, 0, NULL);
        EXPECT(dt_tensor_redistribute(a, pl, &x), DT_ERR_PLACEMENT, "dt_tensor_redistribute");
        pl[0] = with_split(dt_replicate(), DT_SPLIT_CYCLIC, 2, NULL);
        EXPECT(dt_tensor_redistribute(a, pl, &x), DT_ERR_PLACEMENT, "dt_tensor_redistribute");
        pl[0] = with_split(dt_partial(DT_SUM), 0, 0, g_sz_short);
        EXPECT(dt_tensor_redistribute(a, pl, &x), DT_ERR_PLACEMENT, "dt_tensor_redistribute");
        CHECK(x == NULL, "*out changed"); /* (redistribute reads one placement per mesh dim: none past it) */
        if (dtt_np > 1) { /* nested: a later sizes rule that does not fit every part of the earlier one */
            dt_tensor_desc e = d;
            dt_tensor *a2 = NULL;
            e.shape[0] = 2 * dtt_np + 1;
            e.placements[0] = dt_replicate();
            CHECK_OK(dt_tensor_zeros(g_mesh2, &e, &a2));
            memset(pl, 0, sizeof pl);
            pl[0] = dt_shard(0);
            pl[1] = dt_shard_sizes(0, g_sz_one);
            if (a2) EXPECT(dt_tensor_redistribute(a2, pl, &x), DT_ERR_PLACEMENT, "dt_tensor_redistribute");
            CHECK(x == NULL, "*out changed");
            dt_tensor_destroy(a2);
        }
        /* *out that does not have the target spec: refused, *out and its buffer untouched */
        memset(pl, 0, sizeof pl);
        {
            dt_tensor_desc e = d;
            dt_tensor *w = NULL;
            int j;
            for (j = 0; j < (dtt_np > 1 ? 6 : 5); j++) {
                dt_status want = DT_ERR_SHAPE;
                dt_mesh *mesh = g_mesh;
                e = d;
                e.placements[0] = dt_replicate();
                if (j == 0) e.shape[0] += 1;
                if (j == 1) { e.dtype = DT_I32; want = DT_ERR_DTYPE; }
                if (j == 2) { e.placements[0] = dt_shard(1); want = DT_ERR_PLACEMENT; }
                if (j == 3) { e.ndim = 3; e.shape[2] = 1; }
                if (j == 4) { mesh = g_mesh2; want = DT_ERR_MESH; }
                if (j == 5) { /* the target names other sizes than *out */
                    e.placements[0] = dt_shard_sizes(0, g_sz_alt);
                    want = DT_ERR_PLACEMENT;
                }
                dtt_ctx("redistribute into a wrong *out (case %d)", j);
                w = NULL;
                CHECK_OK(dt_tensor_zeros(mesh, &e, &w));
                if (!w) continue;
                o = w;
                if (dt_tensor_local_numel(w)) memset(dt_tensor_data(w), 0xC3, dt_tensor_local_numel(w) * dt_dtype_size(e.dtype));
                if (j == 5) pl[0] = dt_shard_sizes(0, g_sz_two);
                EXPECT(dt_tensor_redistribute(a, pl, &o), want, "dt_tensor_redistribute");
                memset(pl, 0, sizeof pl);
                CHECK(o == w, "*out changed");
                CHECK(pattern_ok((const unsigned char *)dt_tensor_data(w), dt_tensor_local_numel(w) * dt_dtype_size(e.dtype), 0xC3),
                      "the wrong *out's buffer was written");
                dt_tensor_destroy(w);
            }
        }
        dtt_ctx("tensor arguments");
        /* gather */
        memset(full, 0xC3, 4096);
        EXPECT(dt_tensor_gather(NULL, full), DT_ERR_ARG, "dt_tensor_gather");
        CHECK(pattern_ok(full, 4096, 0xC3), "gather(NULL) wrote into full");
        EXPECT(dt_tensor_gather(a, NULL), DT_ERR_ARG, "dt_tensor_gather");
        /* print */
        EXPECT(dt_tensor_print_sharding(NULL, stderr), DT_ERR_ARG, "dt_tensor_print_sharding");
        EXPECT(dt_tensor_print_sharding(a, NULL), DT_ERR_ARG, "dt_tensor_print_sharding");
    }
    /* dt_layout */
    memset(ls, 0xC3, sizeof ls);
    memset(lo, 0xC3, sizeof lo);
    EXPECT(dt_layout(NULL, &d, coord, ls, lo), DT_ERR_ARG, "dt_layout");
    EXPECT(dt_layout(g_mesh, NULL, coord, ls, lo), DT_ERR_ARG, "dt_layout");
    EXPECT(dt_layout(g_mesh, &d, NULL, ls, lo), DT_ERR_ARG, "dt_layout");
    coord[0] = dtt_np;
    EXPECT(dt_layout(g_mesh, &d, coord, ls, lo), DT_ERR_ARG, "dt_layout");
    coord[0] = -1;
    EXPECT(dt_layout(g_mesh, &d, coord, ls, lo), DT_ERR_ARG, "dt_layout");
    CHECK(pattern_ok((const unsigned char *)ls, sizeof ls, 0xC3) && pattern_ok((const unsigned char *)lo, sizeof lo, 0xC3),
          "dt_layout wrote its outputs");
    coord[0] = 0;
    CHECK_OK(dt_layout(g_mesh, &d, coord, NULL, NULL)); /* outputs are optional */
    /* the index accessors */
    memset(lo, 0xC3, sizeof lo);
    EXPECT(dt_layout_indices(NULL, &d, coord, 0, lo), DT_ERR_ARG, "dt_layout_indices");
    EXPECT(dt_layout_indices(g_mesh, NULL, coord, 0, lo), DT_ERR_ARG, "dt_layout_indices");
    EXPECT(dt_layout_indices(g_mesh, &d, NULL, 0, lo), DT_ERR_ARG, "dt_layout_indices");
    EXPECT(dt_layout_indices(g_mesh, &d, coord, 2, lo), DT_ERR_ARG, "dt_layout_indices");
    EXPECT(dt_layout_indices(g_mesh, &d, coord, -3, lo), DT_ERR_ARG, "dt_layout_indices");
    EXPECT(dt_layout_indices(g_mesh, &d, coord, 0, NULL), DT_ERR_ARG, "dt_layout_indices");
    coord[0] = dtt_np;
    EXPECT(dt_layout_indices(g_mesh, &d, coord, 0, lo), DT_ERR_ARG, "dt_layout_indices");
    coord[0] = 0;
    {
        dt_tensor_desc e = d;
        e.placements[0] = dt_shard_cyclic(0, 0);
        EXPECT(dt_layout_indices(g_mesh, &e, coord, 0, lo), DT_ERR_PLACEMENT, "dt_layout_indices");
    }
    EXPECT(dt_tensor_local_indices(NULL, 0, lo), DT_ERR_ARG, "dt_tensor_local_indices");
    if (a) {
        EXPECT(dt_tensor_local_indices(a, 2, lo), DT_ERR_ARG, "dt_tensor_local_indices");
        EXPECT(dt_tensor_local_indices(a, -3, lo), DT_ERR_ARG, "dt_tensor_local_indices");
        EXPECT(dt_tensor_local_indices(a, 0, NULL), DT_ERR_ARG, "dt_tensor_local_indices");
    }
    CHECK(pattern_ok((const unsigned char *)lo, sizeof lo, 0xC3), "the index accessors wrote on failure");
    /* getters with NULL */
    memset(ls, 0xC3, sizeof ls);
    dt_tensor_local_shape(NULL, ls);
    dt_tensor_local_offset(NULL, ls);
    CHECK(pattern_ok((const unsigned char *)ls, sizeof ls, 0xC3), "local_shape/offset(NULL) wrote");
    if (a) {
        dt_tensor_local_shape(a, NULL);
        dt_tensor_local_offset(a, NULL);
    }
    CHECK(dt_tensor_data(NULL) == NULL, "dt_tensor_data(NULL)");
    CHECK(dt_tensor_get_desc(NULL) == NULL, "dt_tensor_get_desc(NULL)");
    CHECK(dt_tensor_mesh(NULL) == NULL, "dt_tensor_mesh(NULL)");
    CHECK(dt_tensor_local_numel(NULL) == 0, "dt_tensor_local_numel(NULL)");
    dt_tensor_destroy(NULL);
    for (k = 0; k < DT_MAX_DIMS; k++) (void)ls[k];
    dt_tensor_destroy(a);
    free(full);
    free(buf);
}

/* ------------------------------------------------------------ from_local's contract

   DT_INFER_SIZES: every rank's desc->local_shape is the truth; a tensor dim
   split by one mesh dim becomes dt_shard_sizes of the gathered sizes,
   whatever rule the desc names there. Good: a PETSc-style balanced split,
   sizes with zeros, a 2-D mesh (both dims inferred; a replicated mesh dim),
   with DT_BORROW (zero copies: the tensor wraps the caller's pointer),
   DT_COPY and DT_VERIFY; the desc says DT_SPLIT_SIZES with the gathered
   sizes (its own copy); shape, offset and the gathered values follow the
   closed form v(i, j) = 100 i + j. Bad: local_shape NULL (DT_ERR_ARG), a
   dim split by two mesh dims (DT_ERR_PLACEMENT), an unsplit dim other than
   the extent, sizes not adding up, a negative entry, replicas that
   disagree: every rank fails with one status, nothing hangs. */
static double flv(int64_t i, int64_t j) { return (double)(100 * i + j); }

/* rank part r of n over k by the PETSc rule, and its offset */
static int64_t petsc_part(int64_t n, int k, int r) { return n / k + (r < n % k); }
static int64_t petsc_off(int64_t n, int k, int r)
{
    int64_t o = 0;
    int c;
    for (c = 0; c < r; c++) o += petsc_part(n, k, c);
    return o;
}

/* every rank: the same status (the ranks compare theirs); want DT_OK: any error */
static void expect_all(dt_status st, dt_status want, const char *fn, const char *what)
{
    int me = (int)st, all[64], r, same = 1;
    MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (r = 1; r < dtt_np; r++) same &= all[r] == all[0];
    CHECK(same, "%s: the ranks returned different statuses (rank 0 %s, rank %d %s)", what,
          dt_status_string((dt_status)all[0]), dtt_np - 1, dt_status_string((dt_status)all[dtt_np - 1]));
    if (want != DT_OK) CHECK(st == want, "%s: returned %s, want %s: %s", what, dt_status_string(st), dt_status_string(want), dt_last_error());
    else CHECK(st != DT_OK, "%s: returned DT_OK", what);
    if (st != DT_OK) CHECK_ERRMSG(fn);
}

/* from_local with DT_INFER_SIZES of rows[r] x cols[r] parts on a 1-D or 2-D mesh, checked */
static void infer_good(dt_mesh *m, int mnd, const int *ms, const dt_placement *named, int64_t rows_n, int64_t cols_n,
                       const int64_t *rows, const int64_t *cols, unsigned flags, const char *what)
{
    dt_tensor_desc d;
    dt_tensor *t = NULL;
    const dt_tensor_desc *g;
    int coord[DT_MAX_MESH_DIMS], i, k, dimsplit[2] = { -1, -1 };
    int64_t ls[2], lo[2], off[2] = { 0, 0 }, n[2], i0, j0, bad = 0;
    double *buf, *full;
    dtt_ctx("from_local DT_INFER_SIZES: %s", what);
    dt_mesh_coordinate(m, coord);
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = 2;
    d.shape[0] = rows_n;
    d.shape[1] = cols_n;
    for (i = 0; i < mnd; i++) {
        d.placements[i] = named[i];
        if (named[i].kind == DT_SHARD) dimsplit[named[i].dim] = i;
    }
    /* this rank's part and offset, from the caller's own arrays */
    for (k = 0; k < 2; k++) {
        const int64_t *sz = k == 0 ? rows : cols;
        n[k] = d.shape[k];
        if (dimsplit[k] >= 0) {
            int c = coord[dimsplit[k]];
            n[k] = sz[c];
            for (i = 0; i < c; i++) off[k] += sz[i];
        }
    }
    buf = (double *)dtt_malloc((size_t)(n[0] * n[1] + 1) * sizeof(double));
    full = (double *)dtt_malloc((size_t)(rows_n * cols_n + 1) * sizeof(double));
    for (i0 = 0; i0 < n[0]; i0++)
        for (j0 = 0; j0 < n[1]; j0++) buf[i0 * n[1] + j0] = flv(off[0] + i0, off[1] + j0);
    d.local_shape = n;
    CHECK_OK(dt_tensor_from_local(m, &d, buf, DT_INFER_SIZES | flags, &t));
    if (t) {
        g = dt_tensor_get_desc(t);
        if (flags & DT_COPY) CHECK(dt_tensor_data(t) != buf, "DT_COPY: the tensor wraps the caller's buffer");
        else if (n[0] && n[1]) CHECK(dt_tensor_data(t) == buf, "DT_BORROW: dt_tensor_data %p, the caller's buffer %p",
                                    dt_tensor_data(t), (void *)buf);
        for (k = 0; k < 2; k++) {
            const int64_t *sz = k == 0 ? rows : cols;
            const dt_placement *p;
            if (dimsplit[k] < 0) continue;
            p = &g->placements[dimsplit[k]];
            CHECK(p->kind == DT_SHARD && p->dim == k && p->split == DT_SPLIT_SIZES && p->sizes != NULL,
                  "desc placements[%d]: kind %d dim %d split %d sizes %p, want Shard(%d) DT_SPLIT_SIZES", dimsplit[k],
                  p->kind, p->dim, p->split, (const void *)p->sizes, k);
            CHECK(p->sizes != sz, "the desc points at the caller's sizes, not its own copy");
            if (p->sizes)
                for (i = 0; i < ms[dimsplit[k]]; i++)
                    CHECK(p->sizes[i] == sz[i], "desc sizes[%d] = %lld, gathered %lld", i, (long long)p->sizes[i],
                          (long long)sz[i]);
        }
        dt_tensor_local_shape(t, ls);
        dt_tensor_local_offset(t, lo);
        CHECK(ls[0] == n[0] && ls[1] == n[1], "local shape [%lld, %lld], want [%lld, %lld]", (long long)ls[0],
              (long long)ls[1], (long long)n[0], (long long)n[1]);
        if (n[0] && n[1])
            CHECK(lo[0] == off[0] && lo[1] == off[1], "local offset [%lld, %lld], want [%lld, %lld]", (long long)lo[0],
                  (long long)lo[1], (long long)off[0], (long long)off[1]);
        CHECK_OK(dt_tensor_gather(t, full));
        for (i0 = 0; i0 < rows_n; i0++)
            for (j0 = 0; j0 < cols_n; j0++) bad += full[i0 * cols_n + j0] != flv(i0, j0);
        CHECK(bad == 0, "gathered: %lld wrong values", (long long)bad);
        dt_tensor_destroy(t);
    }
    free(full);
    free(buf);
}

static void test_from_local_contract(void)
{
    int64_t rows[64], cols[64], ls[2], nrow = 0, n;
    int r, ms[2];
    dt_placement pl[DT_MAX_MESH_DIMS];
    dt_tensor_desc d;
    dt_tensor *t;
    double buf[256];
    dt_status st;
    dt_mesh *m22 = NULL, *m1n = NULL;
    dt_mesh_desc md;

    memset(pl, 0, sizeof pl);
    ms[0] = dtt_np;
    /* PETSc's PETSC_DECIDE: n/k + (r < n%k), the desc naming torch.chunk (or another rule) */
    n = 3 * dtt_np + 2;
    for (r = 0; r < dtt_np; r++) rows[r] = petsc_part(n, dtt_np, r);
    CHECK(petsc_off(n, dtt_np, dtt_np - 1) + rows[dtt_np - 1] == n, "petsc parts");
    pl[0] = dt_shard(0);
    infer_good(g_mesh, 1, ms, pl, n, 3, rows, NULL, DT_BORROW, "PETSc balanced rows, named Shard(0), DT_BORROW");
    infer_good(g_mesh, 1, ms, pl, n, 3, rows, NULL, DT_COPY, "PETSc balanced rows, DT_COPY");
    infer_good(g_mesh, 1, ms, pl, n, 3, rows, NULL, DT_VERIFY, "PETSc balanced rows, DT_VERIFY");
    pl[0] = dt_shard_cyclic(0, 2);
    infer_good(g_mesh, 1, ms, pl, n, 3, rows, NULL, DT_BORROW, "PETSc balanced rows, named cyclic(0, 2)");
    /* sizes with zeros (and an empty tensor at one rank) */
    for (r = 0; r < dtt_np; r++) nrow += rows[r] = (r * 7 + 3) % 4 == 3 ? 0 : (r * 7 + 3) % 4;
    pl[0] = dt_shard_balanced(0);
    infer_good(g_mesh, 1, ms, pl, nrow, 2, rows, NULL, DT_BORROW, "sizes with zeros, named balanced");
    pl[0] = dt_shard(1);
    for (r = 0; r < dtt_np; r++) cols[r] = r == dtt_np - 1 ? 0 : 1;
    infer_good(g_mesh, 1, ms, pl, 4, dtt_np - 1, NULL, cols, DT_BORROW, "columns, the last part empty");
    /* 2-D meshes: [2, np/2] (both tensor dims inferred, then one mesh dim replicated), [1, np] */
    memset(&md, 0, sizeof md);
    md.ndim = 2;
    if (dtt_np % 2 == 0) {
        md.shape[0] = 2;
        md.shape[1] = dtt_np / 2;
        CHECK_OK(dt_mesh_create(g_comm, &md, &m22));
    }
    md.shape[0] = 1;
    md.shape[1] = dtt_np;
    CHECK_OK(dt_mesh_create(g_comm, &md, &m1n));
    if (m22) {
        int ms22[2] = { 2, dtt_np / 2 };
        rows[0] = 3;
        rows[1] = 0;
        for (r = 0; r < dtt_np / 2; r++) cols[r] = (r + 1) % 3; /* 1, 2, 0, 1 */
        nrow = 0;
        for (r = 0; r < dtt_np / 2; r++) nrow += cols[r];
        memset(pl, 0, sizeof pl);
        pl[0] = dt_shard(0);
        pl[1] = dt_shard_balanced(1);
        infer_good(m22, 2, ms22, pl, 3, nrow, rows, cols, DT_BORROW, "[2, np/2] mesh, S(0), S(1) inferred");
        pl[0] = dt_replicate();
        infer_good(m22, 2, ms22, pl, 3, nrow, NULL, cols, DT_VERIFY, "[2, np/2] mesh, R, S(1) inferred");
    }

    /* Without local_shape a buffer's size is read from the placements. DT_VERIFY
       refuses that where it cannot be checked: a torch.chunk split whose parts
       differ from the balanced rule's (np + 1 rows over np >= 3 ranks: 2, 2, ..., 0
       against 2, 1, 1, ...); every rank fails, the message asking for local_shape.
       local_shape, DT_INFER_SIZES or a named balanced rule are accepted, and so is
       DT_BORROW / DT_COPY without DT_VERIFY (the caller's word). */
    {
        dt_tensor_desc e;
        double *lb = (double *)dtt_malloc(sizeof(double) * 3 * (size_t)(dtt_np + 2));
        int64_t cls[2], bls[2];
        memset(&e, 0, sizeof e);
        e.dtype = DT_F64;
        e.ndim = 2;
        e.shape[0] = dtt_np + 1;
        e.shape[1] = 3;
        e.placements[0] = dt_shard(0);
        CHECK_OK(dt_layout(g_mesh, &e, &dtt_rank, cls, NULL));
        bls[0] = petsc_part(e.shape[0], dtt_np, dtt_rank);
        bls[1] = 3;
        dtt_ctx("from_local: DT_VERIFY without local_shape, [np + 1, 3] S(0)");
        t = NULL;
        st = dt_tensor_from_local(g_mesh, &e, lb, DT_COPY | DT_VERIFY, &t);
        if (dtt_np >= 3) {
            expect_all(st, DT_OK, "dt_tensor_from_local", "DT_VERIFY without local_shape, chunk != balanced");
            CHECK(strstr(dt_last_error(), "local_shape") != NULL, "the message should ask for local_shape: %s",
                  dt_last_error());
            CHECK(t == NULL, "*out set");
        } else {
            CHECK(st == DT_OK, "np %d (chunk == balanced): %s", dtt_np, dt_last_error());
        }
        dt_tensor_destroy(t);
        t = NULL;
        CHECK_OK(dt_tensor_from_local(g_mesh, &e, lb, DT_BORROW, &t)); /* no DT_VERIFY: the caller's word */
        dt_tensor_destroy(t);
        t = NULL;
        e.local_shape = cls;
        CHECK_OK(dt_tensor_from_local(g_mesh, &e, lb, DT_BORROW | DT_VERIFY, &t));
        dt_tensor_destroy(t);
        t = NULL;
        e.local_shape = bls;
        CHECK_OK(dt_tensor_from_local(g_mesh, &e, lb, DT_BORROW | DT_VERIFY | DT_INFER_SIZES, &t));
        if (t) CHECK(dt_tensor_get_desc(t)->placements[0].split == DT_SPLIT_SIZES, "inferred: split %d",
                     dt_tensor_get_desc(t)->placements[0].split);
        dt_tensor_destroy(t);
        t = NULL;
        e.local_shape = NULL;
        e.placements[0] = dt_shard_balanced(0);
        CHECK_OK(dt_tensor_from_local(g_mesh, &e, lb, DT_BORROW | DT_VERIFY, &t));
        dt_tensor_destroy(t);
        free(lb);
    }

    /* bad: every rank */
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = 2;
    d.shape[0] = 2 * dtt_np;
    d.shape[1] = 3;
    d.placements[0] = dt_shard(0);
    memset(buf, 0xC3, sizeof buf);
    t = (dt_tensor *)SENTINEL;
    dtt_ctx("from_local DT_INFER_SIZES, bad");
    EXPECT(dt_tensor_from_local(g_mesh, &d, buf, DT_INFER_SIZES, &t), DT_ERR_ARG, "dt_tensor_from_local");
    EXPECT(dt_tensor_from_local(g_mesh, &d, buf, DT_INFER_SIZES | DT_COPY | DT_VERIFY, &t), DT_ERR_ARG,
           "dt_tensor_from_local");
    ls[0] = 2;
    ls[1] = 3;
    d.local_shape = ls;
    d.placements[1] = dt_shard(0); /* on the np x 1 mesh: dim 0 split by both mesh dims */
    EXPECT(dt_tensor_from_local(g_mesh2, &d, buf, DT_INFER_SIZES, &t), DT_ERR_PLACEMENT, "dt_tensor_from_local");
    d.placements[1] = dt_shard_balanced(0);
    EXPECT(dt_tensor_from_local(g_mesh2, &d, buf, DT_INFER_SIZES | DT_COPY, &t), DT_ERR_PLACEMENT, "dt_tensor_from_local");
    d.placements[1] = dt_replicate();
    ls[1] = 4; /* the unsplit dim is 3 */
    st = dt_tensor_from_local(g_mesh, &d, buf, DT_INFER_SIZES, &t);
    expect_all(st, DT_ERR_SHAPE, "dt_tensor_from_local", "DT_INFER_SIZES, unsplit dim 4 of 3");
    ls[1] = 3;
    ls[0] = 3; /* 3 np rows of 2 np */
    st = dt_tensor_from_local(g_mesh, &d, buf, DT_INFER_SIZES, &t);
    expect_all(st, DT_ERR_SHAPE, "dt_tensor_from_local", "DT_INFER_SIZES, sizes adding up to 3 np of 2 np");
    st = dt_tensor_from_local(g_mesh, &d, buf, DT_INFER_SIZES | DT_VERIFY, &t);
    expect_all(st, DT_OK, "dt_tensor_from_local", "DT_INFER_SIZES | DT_VERIFY, sizes adding up to 3 np of 2 np");
    ls[0] = dtt_rank == 0 ? 2 * dtt_np + 1 : -1; /* the sum is right, an entry negative */
    if (dtt_np == 1) ls[0] = -1;
    st = dt_tensor_from_local(g_mesh, &d, buf, DT_INFER_SIZES, &t);
    expect_all(st, DT_OK, "dt_tensor_from_local", "DT_INFER_SIZES, a negative entry");
    if (m1n) { /* [1, np], S(0) then R: every rank holds the one part; the last rank claims one row less */
        ls[0] = 2 * dtt_np - (dtt_rank == dtt_np - 1);
        st = dt_tensor_from_local(m1n, &d, buf, DT_INFER_SIZES | DT_COPY, &t);
        expect_all(st, DT_OK, "dt_tensor_from_local", "DT_INFER_SIZES, replicas disagree");
    }
    CHECK(t == (dt_tensor *)SENTINEL, "*out changed");
    CHECK(pattern_ok((const unsigned char *)buf, sizeof buf, 0xC3), "from_local touched the buffer");
    d.local_shape = NULL;
    dt_mesh_destroy(m1n);
    dt_mesh_destroy(m22);
    dtt_ctx("");
}

/* a successful call after a failure: the message stays until cleared or replaced,
   and success-only runs leave "" */
static void test_error_state(void)
{
    dt_tensor *t = NULL;
    dt_tensor_desc d;
    dtt_ctx("error state");
    dt_clear_error();
    memset(&d, 0, sizeof d);
    d.dtype = DT_F32;
    d.ndim = 1;
    d.shape[0] = 4;
    CHECK_OK(dt_tensor_zeros(g_mesh, &d, &t));
    CHECK(dt_last_error()[0] == 0, "a successful call left an error message: %s", dt_last_error());
    dt_tensor_destroy(t);
    d.shape[0] = -4;
    t = NULL;
    CHECK_ST(dt_tensor_zeros(g_mesh, &d, &t), DT_ERR_SHAPE);
    CHECK(strstr(dt_last_error(), "-4") != NULL, "the message should give the value: %s", dt_last_error());
    CHECK(strstr(dt_last_error(), "shape") != NULL, "the message should name the argument: %s", dt_last_error());
}

/* ------------------------------------------------------------ the calls 0.5 added (issue 37) */

/* dt_tensor_redistribute_reduce, dt_mesh_allreduce, dt_mesh_shm_alloc,
   dt_tensor_desc_from_scalapack: each bad argument, the exact status, the
   call named, out's and values' bytes unchanged (every rank alike: the
   one-rank-only cases are test_check's, the outside-the-mesh and overflow
   cases test_hardening's) */
static void test_calls_05(void)
{
    int64_t shape[2] = { 5, 3 }, other[2] = { 5, 4 };
    dt_placement s0[1], rep[1], part[1];
    dt_tensor_desc d;
    dt_tensor *t = NULL, *o = NULL, *o2 = NULL, *c = NULL, *co = NULL;
    unsigned char snap[4096];
    size_t ob;
    double v[2] = { 1.5, -2 };
    void *p = SENTINEL;
    dtt_ctx("the calls 0.5 added");
    s0[0] = dt_shard(0), rep[0] = dt_replicate(), part[0] = dt_partial(DT_SUM);
    d = dtt_desc(DT_F64, 2, shape, 1, s0);
    CHECK_OK(dt_tensor_zeros(g_mesh, &d, &t));
    d.placements[0] = rep[0];
    CHECK_OK(dt_tensor_zeros(g_mesh, &d, &o));
    memset(dt_tensor_data(o), 0x3c, dt_tensor_local_numel(o) * 8);
    ob = dt_tensor_local_numel(o) * 8;
    memcpy(snap, dt_tensor_data(o), ob);
    d.shape[1] = other[1];
    CHECK_OK(dt_tensor_zeros(g_mesh, &d, &o2));
    d = dtt_desc(DT_C128, 2, shape, 1, s0);
    CHECK_OK(dt_tensor_zeros(g_mesh, &d, &c));
    d.placements[0] = rep[0];
    CHECK_OK(dt_tensor_zeros(g_mesh, &d, &co));
    EXPECT(dt_tensor_redistribute_reduce(NULL, rep, DT_SUM, o), DT_ERR_ARG, "dt_tensor_redistribute_reduce");
    EXPECT(dt_tensor_redistribute_reduce(t, NULL, DT_SUM, o), DT_ERR_ARG, "dt_tensor_redistribute_reduce");
    EXPECT(dt_tensor_redistribute_reduce(t, rep, DT_SUM, NULL), DT_ERR_ARG, "dt_tensor_redistribute_reduce");
    EXPECT(dt_tensor_redistribute_reduce(t, rep, DT_AVG, o), DT_ERR_ARG, "dt_tensor_redistribute_reduce");
    EXPECT(dt_tensor_redistribute_reduce(t, rep, (dt_reduce)9, o), DT_ERR_ARG, "dt_tensor_redistribute_reduce");
    EXPECT(dt_tensor_redistribute_reduce(t, part, DT_SUM, o), DT_ERR_PLACEMENT, "dt_tensor_redistribute_reduce");
    EXPECT(dt_tensor_redistribute_reduce(t, rep, DT_SUM, o2), DT_ERR_SHAPE, "dt_tensor_redistribute_reduce");
    EXPECT(dt_tensor_redistribute_reduce(t, rep, DT_SUM, co), DT_ERR_DTYPE, "dt_tensor_redistribute_reduce");
    EXPECT(dt_tensor_redistribute_reduce(c, rep, DT_MAX, co), DT_ERR_DTYPE, "dt_tensor_redistribute_reduce");
    CHECK(!memcmp(snap, dt_tensor_data(o), ob), "redistribute_reduce: out's bytes changed by a refusal");
    EXPECT(dt_mesh_allreduce(NULL, 0, NULL, v, 2, DT_F64, DT_SUM), DT_ERR_ARG, "dt_mesh_allreduce");
    EXPECT(dt_mesh_allreduce(g_mesh, 0, NULL, v, 1, DT_C128, DT_MAX), DT_ERR_DTYPE, "dt_mesh_allreduce");
    EXPECT(dt_mesh_allreduce(g_mesh, 0, NULL, v, 1, DT_C64, DT_MIN), DT_ERR_DTYPE, "dt_mesh_allreduce");
    EXPECT(dt_mesh_allreduce(g_mesh, 0, NULL, v, (size_t)-1, DT_F64, DT_SUM), DT_ERR_ARG, "dt_mesh_allreduce");
    EXPECT(dt_mesh_allreduce(g_mesh, 0, NULL, v, (size_t)-1 / 4 + 1, DT_I32, DT_SUM), DT_ERR_ARG, "dt_mesh_allreduce");
    CHECK(v[0] == 1.5 && v[1] == -2, "dt_mesh_allreduce: values changed by a refusal");
    EXPECT(dt_mesh_shm_alloc(NULL, 8, &p), DT_ERR_ARG, "dt_mesh_shm_alloc");
    EXPECT(dt_mesh_shm_alloc(g_mesh, 8, NULL), DT_ERR_ARG, "dt_mesh_shm_alloc");
    dt_mesh_shm_free(NULL, NULL); /* no-ops */
    dt_mesh_shm_free(g_mesh, NULL);
    {
        int desc[9] = { 1, 0, 4, 4, 2, 2, 0, 0, 4 };
        dt_scalapack_grid g;
        dt_tensor_desc out;
        memset(&g, 0, sizeof g);
        g.nprow = g.npcol = 1, g.order[0] = 'R';
        EXPECT(dt_tensor_desc_from_scalapack(NULL, &g, DT_F64, &out, NULL, NULL), DT_ERR_ARG,
               "dt_tensor_desc_from_scalapack");
        EXPECT(dt_tensor_desc_from_scalapack(desc, NULL, DT_F64, &out, NULL, NULL), DT_ERR_ARG,
               "dt_tensor_desc_from_scalapack");
        EXPECT(dt_tensor_desc_from_scalapack(desc, &g, DT_F64, NULL, NULL, NULL), DT_ERR_ARG,
               "dt_tensor_desc_from_scalapack");
        g.myrow = -2, g.mycol = -2;
        EXPECT(dt_tensor_desc_from_scalapack(desc, &g, DT_F64, &out, NULL, NULL), DT_ERR_ARG,
               "dt_tensor_desc_from_scalapack");
    }
    dt_tensor_destroy(t);
    dt_tensor_destroy(o);
    dt_tensor_destroy(o2);
    dt_tensor_destroy(c);
    dt_tensor_destroy(co);
}

int main(int argc, char **argv)
{
    int fresh;
    dtt_init(&argc, &argv, "badinput");
    fresh = dt_last_error() != NULL && dt_last_error()[0] == 0;
    CHECK(fresh, "dt_last_error() is not \"\" before any call");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    if (g_comm) {
        dt_mesh_desc md;
        memset(&md, 0, sizeof md);
        md.ndim = 1;
        md.shape[0] = dtt_np;
        md.names[0] = "x";
        CHECK_OK(dt_mesh_create(g_comm, &md, &g_mesh));
        md.ndim = 2;
        md.shape[1] = 1;
        md.names[0] = "a";
        md.names[1] = "b";
        CHECK_OK(dt_mesh_create(g_comm, &md, &g_mesh2));
        CHECK(dt_last_error()[0] == 0, "success-only calls left a message: %s", dt_last_error());
        test_basics();
        test_comm_args();
        if (g_mesh && g_mesh2) {
            test_mesh_args();
            test_tensor_descs();
            test_tensor_args();
            test_from_local_contract();
            test_huge_extents();
            test_error_state();
            test_calls_05();
        }
        dt_mesh_destroy(g_mesh2);
        dt_mesh_destroy(g_mesh);
        dt_comm_destroy(g_comm);
    }
    return dtt_finish();
}
