/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_distribute.c -- making tensors: distribute, from_local, zeros, empty.

   - dt_tensor_distribute from every mesh rank and from DT_SRC_ALL, on 1-D and
     2-D meshes, Shard/Replicate/Partial placements, all dtypes: values,
     layout, gather; stats: DT_SRC_ALL moves nothing (0 calls, 0 bytes), with a
     source rank every other rank receives exactly its shard's bytes and the
     source receives nothing; src_rank is the *mesh* rank (a mesh over the
     ranks in reverse order).
   - dt_tensor_from_local DT_COPY / DT_BORROW, dt_tensor_zeros, dt_tensor_empty.
   - DT_VERIFY: ranks disagreeing on the desc (shape, dtype, placements,
     ndim) or on local_shape get DT_ERR_MISMATCH on every rank, no hang.
   - ranks outside a mesh (desc.ranks a subset) get empty tensors, and the
     members' redistributions and gathers still work.
   --quick (or DT_TEST_QUICK=1): fewer source ranks and mesh shapes. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

static dt_comm *g_comm = NULL;

/* Partial(SUM) made from a full value: coordinate 0 keeps it, the others 0 */
static dtt_model rrule_model(int nd, const dt_placement *pl)
{
    dtt_model md;
    int k;
    md.ps = md.split = md.rsum = 0;
    for (k = 0; k < nd; k++)
        if (pl[k].kind == DT_PARTIAL && pl[k].reduce == DT_SUM) md.rsum |= 1u << k;
    return md;
}

static int has_avg(int nd, const dt_placement *pl)
{
    int k;
    for (k = 0; k < nd; k++)
        if (pl[k].kind == DT_PARTIAL && pl[k].reduce == DT_AVG) return 1;
    return 0;
}

/* distribute from src (a mesh rank or DT_SRC_ALL) on mesh m whose mesh rank is `mrank` */
static void distribute_case(const dtt_mesh *m, int mrank, dt_dtype t, int ndim, const int64_t *shape,
                            const dt_placement *pl, int src)
{
    dt_tensor_desc d;
    dt_tensor *x = NULL;
    int64_t n = dtt_numel(ndim, shape), ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], nloc;
    size_t es = dtt_size(t);
    unsigned char *full = (unsigned char *)dtt_malloc((size_t)n * es), *copy;
    dt_comm_stats st;
    dtt_model md = rrule_model(m->nd, pl);
    char s1[64], s2[64];
    int k, i, have = src == DT_SRC_ALL || src == mrank;
    dtt_ctx("distribute mesh %s %s %s %s src %d", m->name, dtt_dtname(t), dtt_shape_str(ndim, shape, s1, sizeof s1),
            dtt_pl_str(pl, m->nd, s2, sizeof s2), src);
    memset(lo, 0, sizeof lo);
    if (have) dtt_fill_box(t, ndim, shape, shape, lo, full);
    else memset(full, 0x5A, (size_t)n * es); /* garbage: must not be read */
    copy = (unsigned char *)dtt_malloc((size_t)n * es);
    memcpy(copy, full, (size_t)n * es);
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = ndim;
    for (i = 0; i < ndim; i++) d.shape[i] = shape[i];
    for (k = 0; k < m->nd; k++) d.placements[k] = pl[k];
    dt_comm_reset_stats(g_comm);
    CHECK_OK(dt_tensor_distribute(m->mesh, &d, full, src, &x));
    dt_comm_get_stats(g_comm, &st);
    CHECK(memcmp(copy, full, (size_t)n * es) == 0, "distribute changed the caller's full buffer");
    if (x) {
        dtt_check_tensor(m, x, t, ndim, shape, pl, &md, "distributed");
        dtt_ref_layout(m->nd, m->shape, m->coord, ndim, shape, pl, ls, lo);
        nloc = dtt_numel(ndim, ls);
        if (src == DT_SRC_ALL) {
            CHECK(st.calls == 0 && st.bytes_sent == 0 && st.bytes_recv == 0,
                  "DT_SRC_ALL must not communicate: calls %llu sent %llu recv %llu", (unsigned long long)st.calls,
                  (unsigned long long)st.bytes_sent, (unsigned long long)st.bytes_recv);
        } else if (mrank == src) {
            CHECK(st.bytes_recv == 0, "the source rank received %llu bytes", (unsigned long long)st.bytes_recv);
        } else if (dtt_partial_mask(m->nd, pl) == 0) {
            CHECK(st.bytes_recv == (uint64_t)(nloc * (int64_t)es), "bytes_recv %llu, the shard has %lld bytes",
                  (unsigned long long)st.bytes_recv, (long long)(nloc * (int64_t)es));
        } else {
            CHECK(st.bytes_recv <= (uint64_t)(nloc * (int64_t)es), "bytes_recv %llu > the shard's %lld bytes",
                  (unsigned long long)st.bytes_recv, (long long)(nloc * (int64_t)es));
        }
        dtt_check_gather(x, t, ndim, shape, "distributed");
    }
    dt_tensor_destroy(x);
    free(copy);
    free(full);
}

static void test_distribute(void)
{
    static const int64_t shapes[][3] = { { 11, 6, 1 }, { 0, 5, 1 }, { 3, 4, 5 } };
    static const int nds[] = { 2, 2, 3 };
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, nd, p, src, s, rot = 0;
    for (nd = 1; nd <= 2; nd++) {
        for (f = 0, nf = dtt_factorizations(dtt_np, nd, fac, 64); f < nf; f++) {
            dtt_mesh m;
            int np = nd == 1 ? 6 : 8;
            if (dtt_quick && nd == 2 && f != nf / 2) continue;
            if (!dtt_mesh_open(&m, g_comm, nd, &fac[f * DT_MAX_MESH_DIMS])) continue;
            for (s = 0; s < NELEM(shapes); s++) {
                for (p = 0; p < np; p++) {
                    dt_placement pl[DT_MAX_MESH_DIMS];
                    memset(pl, 0, sizeof pl);
                    if (nd == 1) {
                        static const int o[6] = { 0, 1, 2, 3, 4, 5 };
                        pl[0] = o[p] == 0 ? dt_replicate() : o[p] == 1 ? dt_shard(0) : o[p] == 2 ? dt_shard(1)
                              : o[p] == 3 ? dt_partial(DT_SUM) : o[p] == 4 ? dt_partial(DT_MAX) : dt_shard(-1);
                    } else {
                        static const int o[8][2] = { { 1, 2 }, { 0, 1 }, { 2, 3 }, { 4, 0 }, { 1, 1 },
                                                     { 0, 0 }, { 3, 5 }, { 2, 1 } };
                        int k;
                        for (k = 0; k < 2; k++) {
                            int c = o[p][k];
                            pl[k] = c == 0 ? dt_replicate() : c == 1 ? dt_shard(0) : c == 2 ? dt_shard(1)
                                  : c == 3 ? dt_partial(DT_SUM) : c == 4 ? dt_partial(DT_AVG) : dt_partial(DT_MIN);
                        }
                    }
                    for (src = DT_SRC_ALL; src < dtt_np; src++) {
                        dt_dtype t = (dt_dtype)(rot++ % DTT_NUM_REAL_DTYPES);
                        /* integer Partial(AVG) sums overflow the dtype (see test_redistribute's
                           avg_overflow); here AVG runs on floats, where n*v is exact */
                        if (!dtt_is_float(t) && has_avg(m.nd, pl)) t = DT_F32;
                        if (dtt_quick && src >= 0 && src != (p + s) % dtt_np && src != dtt_np - 1) continue;
                        distribute_case(&m, dtt_rank, t, nds[s], shapes[s], pl, src);
                    }
                }
            }
            dtt_mesh_close(&m);
        }
    }
    /* every dtype, every source, Shard(0) on a 1-D mesh */
    {
        dtt_mesh m;
        int one[1], ti;
        int64_t sh[1] = { 29 };
        one[0] = dtt_np;
        if (dtt_mesh_open(&m, g_comm, 1, one)) {
            for (ti = 0; ti < DTT_NUM_REAL_DTYPES; ti++)
                for (src = DT_SRC_ALL; src < dtt_np; src++) {
                    dt_placement pl[DT_MAX_MESH_DIMS];
                    memset(pl, 0, sizeof pl);
                    pl[0] = dt_shard(0);
                    distribute_case(&m, dtt_rank, (dt_dtype)ti, 1, sh, pl, src);
                }
            dtt_mesh_close(&m);
        }
    }
}

/* src_rank is the mesh rank: a mesh over the ranks in reverse order */
static void test_distribute_reversed(void)
{
    int *ranks = (int *)dtt_malloc(sizeof(int) * (size_t)dtt_np), i, nf, f;
    int fac[64 * DT_MAX_MESH_DIMS];
    for (i = 0; i < dtt_np; i++) ranks[i] = dtt_np - 1 - i;
    for (f = 0, nf = dtt_factorizations(dtt_np, 2, fac, 64); f < nf; f++) {
        dt_mesh_desc md;
        dtt_mesh m;
        int mrank = dtt_np - 1 - dtt_rank, src, k;
        int64_t sh[2] = { 9, 7 };
        memset(&md, 0, sizeof md);
        memset(&m, 0, sizeof m);
        md.ndim = 2;
        md.shape[0] = fac[f * DT_MAX_MESH_DIMS];
        md.shape[1] = fac[f * DT_MAX_MESH_DIMS + 1];
        md.ranks = ranks;
        dtt_ctx("reversed mesh %dx%d", md.shape[0], md.shape[1]);
        CHECK_OK(dt_mesh_create(g_comm, &md, &m.mesh));
        if (!m.mesh) continue;
        m.comm = g_comm;
        m.nd = 2;
        m.shape[0] = md.shape[0];
        m.shape[1] = md.shape[1];
        snprintf(m.name, sizeof m.name, "rev%dx%d", md.shape[0], md.shape[1]);
        dtt_unravel(2, m.shape, mrank, m.coord);
        CHECK(dt_mesh_rank(m.mesh) == mrank, "mesh rank %d want %d", dt_mesh_rank(m.mesh), mrank);
        for (src = DT_SRC_ALL; src < dtt_np; src++) {
            dt_placement pl[DT_MAX_MESH_DIMS];
            memset(pl, 0, sizeof pl);
            pl[0] = dt_shard(1);
            pl[1] = dt_shard(0);
            distribute_case(&m, mrank, DT_I32, 2, sh, pl, src);
            for (k = 0; k < DT_MAX_MESH_DIMS; k++) pl[k] = dt_replicate();
            pl[1] = dt_partial(DT_SUM);
            distribute_case(&m, mrank, DT_F32, 2, sh, pl, src);
        }
        dt_mesh_destroy(m.mesh);
        if (dtt_quick) break;
    }
    free(ranks);
}

/* ------------------------------------------------------------ from_local, zeros, empty */

static void test_from_local(void)
{
    dtt_mesh m;
    int one[1], ti;
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    for (ti = 0; ti < DTT_NUM_REAL_DTYPES; ti++) {
        dt_dtype t = (dt_dtype)ti;
        dt_tensor_desc d;
        dt_tensor *a = NULL, *b = NULL;
        int64_t sh[2] = { 13, 3 }, ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], n;
        size_t es = dtt_size(t);
        unsigned char *buf, *keep;
        dtt_model md = { 0, 0, 0 };
        dt_placement pl[DT_MAX_MESH_DIMS];
        memset(pl, 0, sizeof pl);
        pl[0] = dt_shard(0);
        memset(&d, 0, sizeof d);
        d.dtype = t;
        d.ndim = 2;
        d.shape[0] = sh[0];
        d.shape[1] = sh[1];
        d.placements[0] = pl[0];
        dtt_ctx("from_local %s", dtt_dtname(t));
        dtt_ref_layout(1, m.shape, m.coord, 2, sh, pl, ls, lo);
        n = dtt_numel(2, ls);
        buf = (unsigned char *)dtt_malloc((size_t)n * es);
        keep = (unsigned char *)dtt_malloc((size_t)n * es);
        dtt_fill_box(t, 2, sh, ls, lo, buf);
        memcpy(keep, buf, (size_t)n * es);
        /* DT_BORROW: the tensor is the caller's buffer */
        CHECK_OK(dt_tensor_from_local(m.mesh, &d, buf, DT_BORROW, &a));
        if (a) {
            dtt_check_tensor(&m, a, t, 2, sh, pl, &md, "borrow");
            CHECK(n == 0 || dt_tensor_data(a) == buf, "DT_BORROW: data %p, buffer %p", dt_tensor_data(a), (void *)buf);
            if (n > 0) {
                memset(buf, 0, es); /* visible through the tensor */
                CHECK(dtt_load_d(t, dt_tensor_data(a), 0) == 0, "DT_BORROW: a write to the buffer is not seen");
                memcpy(buf, keep, es);
            }
            dt_tensor_destroy(a); /* must not free buf */
            a = NULL;
        }
        CHECK(memcmp(buf, keep, (size_t)n * es) == 0, "destroying a borrowed tensor changed the buffer");
        /* DT_COPY: later writes to the buffer are not seen; the default flags are DT_BORROW */
        CHECK_OK(dt_tensor_from_local(m.mesh, &d, buf, DT_COPY, &a));
        if (a) {
            CHECK(n == 0 || dt_tensor_data(a) != buf, "DT_COPY: data is the caller's buffer");
            memset(buf, 0x77, (size_t)n * es);
            dtt_check_tensor(&m, a, t, 2, sh, pl, &md, "copy (buffer overwritten after the call)");
            CHECK_OK(dt_tensor_from_local(m.mesh, &d, buf, 0, &b));
            CHECK(n == 0 || (b && dt_tensor_data(b) == buf), "flags 0 must borrow");
            dt_tensor_destroy(b);
            b = NULL;
            /* and with local_shape given */
            memcpy(buf, keep, (size_t)n * es);
            d.local_shape = ls;
            CHECK_OK(dt_tensor_from_local(m.mesh, &d, buf, DT_COPY | DT_VERIFY, &b));
            if (b) dtt_check_tensor(&m, b, t, 2, sh, pl, &md, "copy+verify with local_shape");
            d.local_shape = NULL;
            dt_tensor_destroy(b);
        }
        dt_tensor_destroy(a);
        free(buf);
        free(keep);
    }
    dtt_mesh_close(&m);
}

static void test_zeros_empty(void)
{
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, nd, ti, p;
    static const int64_t shapes[][3] = { { 7, 5, 3 }, { 0, 4, 2 }, { 1, 1, 1 }, { 16, 2, 9 } };
    for (nd = 1; nd <= 3; nd++) {
        for (f = 0, nf = dtt_factorizations(dtt_np, nd, fac, 64); f < nf; f++) {
            dtt_mesh m;
            if (f > 3) break;
            if (!dtt_mesh_open(&m, g_comm, nd, &fac[f * DT_MAX_MESH_DIMS])) continue;
            for (ti = 0; ti < DTT_NUM_REAL_DTYPES; ti++) {
                for (p = 0; p < NELEM(shapes); p++) {
                    dt_tensor_desc d;
                    dt_tensor *z = NULL, *e = NULL;
                    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], n, i;
                    int k;
                    dt_dtype t = (dt_dtype)ti;
                    memset(&d, 0, sizeof d);
                    d.dtype = t;
                    d.ndim = 3;
                    for (k = 0; k < 3; k++) d.shape[k] = shapes[p][k];
                    for (k = 0; k < nd; k++)
                        d.placements[k] = (k + p + ti) % 4 == 3 ? dt_replicate() : dt_shard((k + p + ti) % 4);
                    if (p == 2 && nd == 1) d.placements[0] = dt_partial(DT_MAX);
                    dtt_ctx("zeros/empty mesh %s %s shape %d", m.name, dtt_dtname(t), p);
                    dtt_ref_layout(m.nd, m.shape, m.coord, 3, d.shape, d.placements, ls, lo);
                    n = dtt_numel(3, ls);
                    CHECK_OK(dt_tensor_zeros(m.mesh, &d, &z));
                    CHECK_OK(dt_tensor_empty(m.mesh, &d, &e));
                    if (z) {
                        const unsigned char *zd = (const unsigned char *)dt_tensor_data(z);
                        int64_t gls[DT_MAX_DIMS], glo[DT_MAX_DIMS];
                        dt_tensor_local_shape(z, gls);
                        dt_tensor_local_offset(z, glo);
                        for (k = 0; k < 3; k++) {
                            CHECK(gls[k] == ls[k], "zeros local_shape[%d] %lld want %lld", k, (long long)gls[k], (long long)ls[k]);
                            if (n) CHECK(glo[k] == lo[k], "zeros local_offset[%d] %lld want %lld", k, (long long)glo[k], (long long)lo[k]);
                        }
                        CHECK(dt_tensor_local_numel(z) == (size_t)n, "zeros numel");
                        CHECK(n == 0 || zd != NULL, "zeros: no data");
                        for (i = 0; zd && i < n * (int64_t)dtt_size(t); i++)
                            if (zd[i]) { CHECK(zd[i] == 0, "zeros: byte %lld is %d", (long long)i, zd[i]); break; }
                    }
                    if (e) {
                        int64_t gls[DT_MAX_DIMS];
                        dt_tensor_local_shape(e, gls);
                        for (k = 0; k < 3; k++) CHECK(gls[k] == ls[k], "empty local_shape[%d]", k);
                        CHECK(dt_tensor_local_numel(e) == (size_t)n, "empty numel");
                        CHECK(n == 0 || dt_tensor_data(e) != NULL, "empty: no data");
                        if (n) memset(dt_tensor_data(e), 0xEE, (size_t)n * dtt_size(t)); /* writable */
                        CHECK(dt_tensor_get_desc(e) && dt_tensor_get_desc(e)->local_shape == NULL,
                              "desc->local_shape should be NULL in a tensor's desc");
                    }
                    dt_tensor_destroy(z);
                    dt_tensor_destroy(e);
                }
            }
            dtt_mesh_close(&m);
        }
    }
}

/* ------------------------------------------------------------ DT_VERIFY */

/* every rank calls from_local with DT_VERIFY; rank `odd` (if in range) passes
   `bad` instead of `good`; expect `want` on every rank */
static void verify_case(const dtt_mesh *m, const dt_tensor_desc *good, const dt_tensor_desc *bad, int odd,
                        dt_status want, const char *what)
{
    const dt_tensor_desc *d = dtt_rank == odd ? bad : good;
    unsigned char *buf = (unsigned char *)dtt_malloc(4096 * 8);
    dt_tensor *x = NULL, *sentinel = (dt_tensor *)(void *)&buf;
    dt_status st;
    int all_want, mine;
    memset(buf, 0x3C, 4096 * 8);
    dtt_ctx("DT_VERIFY %s (odd rank %d)", what, odd);
    x = want == DT_OK ? NULL : sentinel;
    st = dt_tensor_from_local(m->mesh, d, buf, DT_VERIFY | DT_COPY, &x);
    CHECK(st == want, "%s: rank %d got %s want %s: %s", what, dtt_rank, dt_status_string(st), dt_status_string(want),
          dt_last_error());
    if (want != DT_OK) {
        CHECK(x == sentinel, "%s: *out changed on failure", what);
        if (st != DT_OK) CHECK_ERRMSG("dt_tensor_from_local");
    } else {
        dt_tensor_destroy(x);
    }
    /* every rank agrees (and nobody hung) */
    mine = st == want;
#ifndef DTENSOR_NO_MPI
    MPI_Allreduce(&mine, &all_want, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
#else
    all_want = mine;
#endif
    CHECK(all_want, "%s: some rank did not get %s", what, dt_status_string(want));
    free(buf);
}

static void test_verify(void)
{
    dtt_mesh m;
    int one[1], odd = dtt_np > 1 ? 1 : 0, last = dtt_np - 1, i;
    dt_tensor_desc good, bad;
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], wrong[DT_MAX_DIMS];
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    memset(&good, 0, sizeof good);
    good.dtype = DT_F32;
    good.ndim = 2;
    good.shape[0] = 10;
    good.shape[1] = 3;
    good.placements[0] = dt_shard(0);
    for (i = 0; i < DT_MAX_DIMS; i++) ls[i] = 1; /* the "another ndim" case reads ls[2] */
    dtt_ref_layout(1, m.shape, m.coord, 2, good.shape, good.placements, ls, lo);
    /* without local_shape DT_VERIFY checks the buffer only where the
       placements cannot be misread: 10 over 3 or 4 is a torch.chunk split
       unlike the balanced one, which it refuses */
    verify_case(&m, &good, &good, -1, 10 % dtt_np == 0 || 10 % dtt_np == dtt_np - 1 ? DT_OK : DT_ERR_MISMATCH,
                "all agree");
    good.local_shape = ls;
    verify_case(&m, &good, &good, -1, DT_OK, "all agree, local_shape given");
    if (dtt_np > 1) {
        bad = good;
        bad.shape[0] = 11;
        verify_case(&m, &good, &bad, odd, DT_ERR_MISMATCH, "rank 1 another shape");
        bad = good;
        bad.dtype = DT_I32;
        verify_case(&m, &good, &bad, odd, DT_ERR_MISMATCH, "rank 1 another dtype");
        bad = good;
        bad.placements[0] = dt_shard(1);
        verify_case(&m, &good, &bad, odd, DT_ERR_MISMATCH, "rank 1 another placement");
        bad = good;
        bad.placements[0] = dt_replicate();
        verify_case(&m, &good, &bad, last, DT_ERR_MISMATCH, "last rank Replicate");
        bad = good;
        bad.ndim = 3;
        bad.shape[2] = 1;
        verify_case(&m, &good, &bad, odd, DT_ERR_MISMATCH, "rank 1 another ndim");
        bad = good;
        bad.ndim = -1; /* invalid on that rank alone: still a collective answer */
        verify_case(&m, &good, &bad, odd, DT_ERR_MISMATCH, "rank 1 invalid ndim");
        bad = good;
        bad.dtype = (dt_dtype)42;
        verify_case(&m, &good, &bad, last, DT_ERR_MISMATCH, "last rank unknown dtype");
    }
    /* a local_shape that does not match the placements, on one rank / all ranks */
    memcpy(wrong, ls, sizeof wrong);
    wrong[0] += 1;
    bad = good;
    bad.local_shape = wrong;
    good.local_shape = ls;
    verify_case(&m, &good, &bad, last, DT_ERR_MISMATCH, "last rank wrong local_shape");
    verify_case(&m, &bad, &bad, -1, DT_ERR_MISMATCH, "all ranks wrong local_shape");
    /* without DT_VERIFY from_local is collective too: DT_ERR_SHAPE on the bad
       rank, DT_ERR_MISMATCH with the bad rank's reason on the others (no hang) */
    {
        dt_tensor *x = NULL;
        float buf[64];
        dt_status st = dt_tensor_from_local(m.mesh, dtt_rank == last ? &bad : &good, buf, DT_COPY, &x);
        dtt_ctx("local_shape without DT_VERIFY");
        CHECK(x == NULL, "*out set on failure");
        CHECK_ERRMSG("dt_tensor_from_local");
        if (dtt_rank == last) {
            CHECK(st == DT_ERR_SHAPE, "wrong local_shape without DT_VERIFY: %s", dt_status_string(st));
        } else {
            CHECK(st == DT_ERR_MISMATCH, "good local_shape, another rank's bad: %s %s", dt_status_string(st),
                  dt_last_error());
            CHECK(strstr(dt_last_error(), "local_shape") != NULL, "the bad rank's reason is in the message: %s",
                  dt_last_error());
        }
        dt_tensor_destroy(x);
    }
    dtt_mesh_close(&m);
}

/* ------------------------------------------------------------ ranks outside a mesh */

static void outside_case(const int *ranks, int count, const char *what)
{
    dt_mesh_desc md;
    dt_mesh *mesh = NULL;
    int i, mrank = -1;
    for (i = 0; i < count; i++)
        if (ranks[i] == dtt_rank) mrank = i;
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = count;
    md.ranks = ranks;
    dtt_ctx("outside: %s", what);
    CHECK_OK(dt_mesh_create(g_comm, &md, &mesh));
    if (!mesh) return;
    CHECK(dt_mesh_rank(mesh) == mrank, "mesh rank %d want %d", dt_mesh_rank(mesh), mrank);
    CHECK(dt_mesh_size(mesh) == count, "mesh size %d want %d", dt_mesh_size(mesh), count);
    {
        int coord[DT_MAX_MESH_DIMS] = { -5, -5, -5, -5 };
        int in = dt_mesh_coordinate(mesh, coord);
        CHECK(in == (mrank >= 0), "dt_mesh_coordinate returned %d", in);
        if (mrank >= 0) CHECK(coord[0] == mrank, "coord %d want %d", coord[0], mrank);
    }
    {
        dtt_mesh m;
        dt_tensor_desc d;
        dt_tensor *a = NULL, *b = NULL, *z = NULL, *l = NULL;
        dt_placement rep[DT_MAX_MESH_DIMS];
        int64_t sh[2] = { 17, 3 };
        int64_t n = dtt_numel(2, sh), zero[DT_MAX_DIMS];
        unsigned char *full = (unsigned char *)dtt_malloc((size_t)n * 8);
        unsigned char *pattern = (unsigned char *)dtt_malloc((size_t)n * 8);
        dtt_model md = { 0, 0, 0 };
        dt_comm_stats st;
        memset(&m, 0, sizeof m);
        m.comm = g_comm;
        m.mesh = mesh;
        m.nd = 1;
        m.shape[0] = count;
        m.coord[0] = mrank;
        snprintf(m.name, sizeof m.name, "sub%d", count);
        memset(&d, 0, sizeof d);
        d.dtype = DT_F64;
        d.ndim = 2;
        d.shape[0] = sh[0];
        d.shape[1] = sh[1];
        d.placements[0] = dt_shard(0);
        memset(zero, 0, sizeof zero);
        if (mrank == 0) dtt_fill_box(DT_F64, 2, sh, sh, zero, full);
        else memset(full, 0x5A, (size_t)n * 8);
        dt_comm_reset_stats(g_comm);
        CHECK_OK(dt_tensor_distribute(mesh, &d, mrank >= 0 ? full : NULL, 0, &a));
        CHECK_OK(dt_tensor_zeros(mesh, &d, &z));
        memset(rep, 0, sizeof rep);
        if (a) CHECK_OK(dt_tensor_redistribute(a, rep, &b));
        dt_comm_get_stats(g_comm, &st);
        if (mrank < 0) {
            int64_t gls[DT_MAX_DIMS] = { -1, -1 };
            CHECK(a && dt_tensor_local_numel(a) == 0, "outside: distribute gave %zu elements", a ? dt_tensor_local_numel(a) : 0);
            CHECK(z && dt_tensor_local_numel(z) == 0, "outside: zeros gave elements");
            CHECK(b && dt_tensor_local_numel(b) == 0, "outside: redistribute gave elements");
            if (b) {
                dt_tensor_local_shape(b, gls);
                CHECK(gls[0] * gls[1] == 0, "outside: local shape %lldx%lld", (long long)gls[0], (long long)gls[1]);
            }
            CHECK(st.calls == 0 && st.bytes_recv == 0 && st.bytes_sent == 0, "outside: took part in communication");
            /* from_local with no buffer works outside */
            CHECK_OK(dt_tensor_from_local(mesh, &d, NULL, DT_BORROW, &l));
            CHECK(l && dt_tensor_local_numel(l) == 0, "outside: from_local gave elements");
            dt_tensor_destroy(l);
            /* gather leaves `full` untouched */
            memset(pattern, 0x6B, (size_t)n * 8);
            memcpy(full, pattern, (size_t)n * 8);
            if (a) CHECK_OK(dt_tensor_gather(a, full));
            CHECK(memcmp(full, pattern, (size_t)n * 8) == 0, "outside: gather wrote into full");
        } else {
            if (a) dtt_check_tensor(&m, a, DT_F64, 2, sh, d.placements, &md, "member: distributed");
            if (b) dtt_check_tensor(&m, b, DT_F64, 2, sh, rep, &md, "member: replicated");
            if (a) dtt_check_gather(a, DT_F64, 2, sh, "member: gather");
        }
        /* a redistribution with Partial and an exchange on the sub-mesh */
        if (a) {
            dt_tensor *c = NULL, *e = NULL;
            dt_placement p[DT_MAX_MESH_DIMS];
            memset(p, 0, sizeof p);
            p[0] = dt_shard(1);
            CHECK_OK(dt_tensor_redistribute(a, p, &c));
            if (c && mrank >= 0) dtt_check_tensor(&m, c, DT_F64, 2, sh, p, &md, "member: S0->S1");
            if (c && mrank < 0) CHECK(dt_tensor_local_numel(c) == 0, "outside: S0->S1 gave elements");
            p[0] = dt_partial(DT_SUM);
            CHECK_OK(dt_tensor_redistribute(b ? b : a, p, &e));
            if (e && mrank >= 0) {
                dtt_model mr = { 0, 0, 1u };
                dtt_check_tensor(&m, e, DT_F64, 2, sh, p, &mr, "member: R->Psum");
            }
            dt_tensor_destroy(e);
            dt_tensor_destroy(c);
        }
        dt_tensor_destroy(b);
        dt_tensor_destroy(z);
        dt_tensor_destroy(a);
        free(pattern);
        free(full);
    }
    dt_mesh_destroy(mesh);
}

static void test_outside(void)
{
    int *r = (int *)dtt_malloc(sizeof(int) * (size_t)dtt_np), n = 0, i;
    for (i = 0; i < dtt_np; i += 2) r[n++] = i;
    outside_case(r, n, "even ranks");
    n = 0;
    for (i = dtt_np - 1; i >= 0; i -= 2) r[n++] = i;
    outside_case(r, n, "every other rank from the last, descending");
    if (dtt_np > 2) {
        r[0] = 1;
        r[1] = dtt_np - 1;
        outside_case(r, 2, "ranks 1 and n-1");
    }
    free(r);
}

int main(int argc, char **argv)
{
    dtt_init(&argc, &argv, "distribute");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    if (g_comm) {
        test_distribute();
        test_distribute_reversed();
        test_from_local();
        test_zeros_empty();
        test_verify();
        test_outside();
        dt_comm_destroy(g_comm);
    }
    return dtt_finish();
}
