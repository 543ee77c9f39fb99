/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_mesh.c -- meshes: shapes 1-D to 4-D, names, coordinates, subsets of
   ranks, slices, flattening, dt_layout for every coordinate, and the mesh
   description errors (duplicate names, product mismatch).
   --quick (or DT_TEST_QUICK=1): fewer mesh shapes. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

static dt_comm *g_comm = NULL;
static const char *const g_names[DT_MAX_MESH_DIMS] = { "dp", "tp", "pp", "ep" };

/* an open mesh described by hand (subsets, slices, flattened meshes) */
static void describe(dtt_mesh *m, dt_mesh *mesh, int nd, const int *shape, const int *coord, const char *name)
{
    int k;
    memset(m, 0, sizeof *m);
    m->comm = g_comm;
    m->mesh = mesh;
    m->nd = nd;
    for (k = 0; k < nd; k++) {
        m->shape[k] = shape[k];
        m->coord[k] = coord ? coord[k] : -1;
    }
    snprintf(m->name, sizeof m->name, "%.63s", name);
}

/* dims, sizes, names, rank, coordinate of a mesh against the expected */
static void check_mesh(const dt_mesh *mesh, int nd, const int *shape, const char *const *names, int mrank,
                       const int *coord, const char *what)
{
    int k, c[DT_MAX_MESH_DIMS], size = 1, in;
    for (k = 0; k < nd; k++) size *= shape[k];
    CHECK(dt_mesh_ndim(mesh) == nd, "%s: ndim %d want %d", what, dt_mesh_ndim(mesh), nd);
    CHECK(dt_mesh_size(mesh) == size, "%s: size %d want %d", what, dt_mesh_size(mesh), size);
    CHECK(dt_mesh_rank(mesh) == mrank, "%s: rank %d want %d", what, dt_mesh_rank(mesh), mrank);
    for (k = 0; k < nd; k++) {
        const char *want = names && names[k] ? names[k] : "";
        CHECK(dt_mesh_dim_size(mesh, k) == shape[k], "%s: dim_size(%d) %d want %d", what, k, dt_mesh_dim_size(mesh, k),
              shape[k]);
        CHECK(dt_mesh_dim_name(mesh, k) && strcmp(dt_mesh_dim_name(mesh, k), want) == 0, "%s: dim_name(%d) \"%s\" want \"%s\"",
              what, k, dt_mesh_dim_name(mesh, k) ? dt_mesh_dim_name(mesh, k) : "(null)", want);
        if (want[0]) CHECK(dt_mesh_dim_index(mesh, want) == k, "%s: dim_index(\"%s\") %d want %d", what, want,
                           dt_mesh_dim_index(mesh, want), k);
    }
    CHECK(dt_mesh_dim_size(mesh, -1) == 0 && dt_mesh_dim_size(mesh, nd) == 0, "%s: dim_size out of range", what);
    CHECK(dt_mesh_dim_index(mesh, "no-such-dim") == -1, "%s: dim_index of an unknown name", what);
    CHECK(dt_mesh_dim_name(mesh, nd + 3) && dt_mesh_dim_name(mesh, nd + 3)[0] == 0, "%s: dim_name out of range", what);
    for (k = 0; k < DT_MAX_MESH_DIMS; k++) c[k] = -9;
    in = dt_mesh_coordinate(mesh, c);
    CHECK(in == (mrank >= 0), "%s: dt_mesh_coordinate returned %d", what, in);
    if (mrank >= 0 && coord)
        for (k = 0; k < nd; k++) CHECK(c[k] == coord[k], "%s: coord[%d] %d want %d", what, k, c[k], coord[k]);
    CHECK(dt_mesh_coordinate(mesh, NULL) == (mrank >= 0), "%s: dt_mesh_coordinate(m, NULL)", what);
}

/* dt_layout for every coordinate of the mesh against the reference */
static void check_layouts(const dt_mesh *mesh, int nd, const int *shape, dtt_rng *rng)
{
    int size = 1, k, r, t;
    for (k = 0; k < nd; k++) size *= shape[k];
    for (t = 0; t < (dtt_quick ? 2 : 6); t++) {
        dt_tensor_desc d;
        int ndim = 1 + dtt_randint(rng, 3), dim;
        memset(&d, 0, sizeof d);
        d.dtype = DT_F32;
        d.ndim = ndim;
        for (dim = 0; dim < ndim; dim++) d.shape[dim] = dtt_randint(rng, 5) == 0 ? 0 : 1 + dtt_randint(rng, 17);
        for (k = 0; k < nd; k++) {
            int x = dtt_randint(rng, 5);
            d.placements[k] = x == 0 ? dt_replicate() : x == 1 ? dt_partial(DT_SUM) : dt_shard(dtt_randint(rng, ndim));
        }
        for (r = 0; r < size; r++) {
            int c[DT_MAX_MESH_DIMS];
            int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], gls[DT_MAX_DIMS], glo[DT_MAX_DIMS];
            char s1[64], s2[64];
            dtt_unravel(nd, shape, r, c);
            dtt_ref_layout(nd, shape, c, ndim, d.shape, d.placements, ls, lo);
            dtt_ctx("dt_layout %s %s at mesh rank %d", dtt_shape_str(ndim, d.shape, s1, sizeof s1),
                    dtt_pl_str(d.placements, nd, s2, sizeof s2), r);
            CHECK_OK(dt_layout(mesh, &d, c, gls, glo));
            for (dim = 0; dim < ndim; dim++) {
                CHECK(gls[dim] == ls[dim], "local_shape[%d] %lld want %lld", dim, (long long)gls[dim], (long long)ls[dim]);
                /* empty parts sit at the end of their parent: min(r*c, N) */
                CHECK(glo[dim] == lo[dim], "local_offset[%d] %lld want %lld", dim, (long long)glo[dim], (long long)lo[dim]);
            }
        }
    }
}

static void test_shapes(void)
{
    int fac[256 * DT_MAX_MESH_DIMS], nf, f, nd;
    dtt_rng rng;
    rng.s = 99;
    for (nd = 1; nd <= 4; nd++) {
        nf = dtt_factorizations(dtt_np, nd, fac, 256);
        for (f = 0; f < nf && f < (dtt_quick ? 3 : 24); f++) {
            dt_mesh_desc md;
            dt_mesh *mesh = NULL;
            int *shape = &fac[f * DT_MAX_MESH_DIMS], coord[DT_MAX_MESH_DIMS], k, named = (f + nd) % 2;
            char nm[32];
            memset(&md, 0, sizeof md);
            md.ndim = nd;
            for (k = 0; k < nd; k++) {
                md.shape[k] = shape[k];
                if (named) md.names[k] = g_names[k];
            }
            dtt_ctx("mesh %s %s", dtt_ishape_str(nd, shape, nm, sizeof nm), named ? "named" : "unnamed");
            CHECK_OK(dt_mesh_create(g_comm, &md, &mesh));
            if (!mesh) continue;
            dtt_unravel(nd, shape, dtt_rank, coord);
            check_mesh(mesh, nd, shape, named ? g_names : NULL, dtt_rank, coord, nm);
            check_layouts(mesh, nd, shape, &rng);
            /* the table prints (pure, one rank) */
            if (dtt_rank == 0) {
                FILE *tf = tmpfile();
                if (tf) {
                    dt_tensor_desc d;
                    dt_tensor *x = NULL;
                    memset(&d, 0, sizeof d);
                    d.dtype = DT_F64;
                    d.ndim = 2;
                    d.shape[0] = 5;
                    d.shape[1] = 3;
                    d.placements[0] = dt_shard(0);
                    CHECK_OK(dt_tensor_empty(mesh, &d, &x));
                    if (x) {
                        CHECK_OK(dt_tensor_print_sharding(x, tf));
                        CHECK(ftell(tf) > 0, "dt_tensor_print_sharding wrote nothing");
                    }
                    dt_tensor_destroy(x);
                    fclose(tf);
                }
            }
            dt_mesh_destroy(mesh);
        }
    }
}

/* ------------------------------------------------------------ subsets of ranks */

static void subset_case(const int *ranks, int count, int nd, const int *shape, const char *what)
{
    dt_mesh_desc md;
    dt_mesh *mesh = NULL;
    int i, mrank = -1, coord[DT_MAX_MESH_DIMS] = { 0, 0, 0, 0 }, k;
    for (i = 0; i < count; i++)
        if (ranks[i] == dtt_rank) mrank = i;
    memset(&md, 0, sizeof md);
    md.ndim = nd;
    for (k = 0; k < nd; k++) md.shape[k] = shape[k];
    md.ranks = ranks;
    dtt_ctx("subset %s", what);
    CHECK_OK(dt_mesh_create(g_comm, &md, &mesh));
    if (!mesh) return;
    if (mrank >= 0) dtt_unravel(nd, shape, mrank, coord);
    check_mesh(mesh, nd, shape, NULL, mrank, mrank >= 0 ? coord : NULL, what);
    if (mrank >= 0) {
        /* redistributions among the members only */
        dtt_mesh m;
        dt_placement a[DT_MAX_MESH_DIMS], b[DT_MAX_MESH_DIMS];
        int64_t sh[2] = { 13, 4 };
        describe(&m, mesh, nd, shape, coord, what);
        memset(a, 0, sizeof a);
        memset(b, 0, sizeof b);
        a[0] = dt_shard(0);
        b[nd - 1] = dt_shard(1);
        dtt_run_pair(&m, DT_F32, 2, sh, a, b, DTT_BYTES, NULL);
        dtt_run_pair(&m, DT_I64, 2, sh, b, a, DTT_BYTES, NULL);
        memset(b, 0, sizeof b);
        dtt_run_pair(&m, DT_F64, 2, sh, a, b, DTT_BYTES, NULL);
        a[0] = dt_partial(DT_SUM);
        dtt_run_pair(&m, DT_F16, 2, sh, a, b, DTT_BYTES, NULL);
    }
    dt_mesh_destroy(mesh);
}

static void test_subsets(void)
{
    int *r = (int *)dtt_malloc(sizeof(int) * (size_t)dtt_np), n = 0, i, shape[2];
    for (i = 0; i < dtt_np; i += 2) r[n++] = i;
    shape[0] = n;
    subset_case(r, n, 1, shape, "even ranks");
    for (i = 0; i < dtt_np; i++) r[i] = dtt_np - 1 - i;
    shape[0] = dtt_np;
    subset_case(r, dtt_np, 1, shape, "all ranks reversed");
    if (dtt_np % 2 == 0) {
        shape[0] = 2;
        shape[1] = dtt_np / 2;
        subset_case(r, dtt_np, 2, shape, "2 x n/2 reversed");
    }
    if (dtt_np >= 3) {
        /* odd ranks, descending, as a 1 x k mesh */
        n = 0;
        for (i = dtt_np - 1; i >= 0; i--)
            if (i % 2) r[n++] = i;
        shape[0] = 1;
        shape[1] = n;
        subset_case(r, n, 2, shape, "odd ranks descending, 1 x k");
    }
    free(r);
}

/* ------------------------------------------------------------ slices */

static void test_slices(void)
{
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, nd;
    for (nd = 2; nd <= 3; nd++) {
        nf = dtt_factorizations(dtt_np, nd, fac, 64);
        for (f = 0; f < nf && f < (dtt_quick ? 2 : 8); f++) {
            dt_mesh_desc md;
            dt_mesh *mesh = NULL;
            int *shape = &fac[f * DT_MAX_MESH_DIMS], coord[DT_MAX_MESH_DIMS], k, sel;
            char nm[32];
            memset(&md, 0, sizeof md);
            md.ndim = nd;
            for (k = 0; k < nd; k++) {
                md.shape[k] = shape[k];
                md.names[k] = g_names[k];
            }
            dtt_ishape_str(nd, shape, nm, sizeof nm);
            dtt_ctx("slice of %s", nm);
            CHECK_OK(dt_mesh_create(g_comm, &md, &mesh));
            if (!mesh) continue;
            dtt_unravel(nd, shape, dtt_rank, coord);
            /* every ordered selection of 1..nd dims, e.g. {tp}, {dp}, {tp, dp} */
            for (sel = 0; sel < (nd == 2 ? 4 : 5); sel++) {
                static const int sels2[4][3] = { { 1, 1, -1 }, { 1, 0, -1 }, { 2, 1, 0 }, { 2, 0, 1 } };
                static const int sels3[5][4] = { { 2, 0, 2, -1 }, { 1, 1, -1, -1 }, { 2, 2, 1, -1 }, { 3, 2, 0, 1 }, { 2, 1, 2, -1 } };
                const int *s = nd == 2 ? sels2[sel] : sels3[sel];
                int n = s[0], sshape[DT_MAX_MESH_DIMS], scoord[DT_MAX_MESH_DIMS], i, srank = 0;
                const char *names[DT_MAX_MESH_DIMS];
                dt_mesh *sub = NULL;
                char what[64];
                for (i = 0; i < n; i++) {
                    names[i] = g_names[s[1 + i]];
                    sshape[i] = shape[s[1 + i]];
                    scoord[i] = coord[s[1 + i]];
                    srank = srank * sshape[i] + scoord[i];
                }
                snprintf(what, sizeof what, "%s sliced to %s%s%s", nm, names[0], n > 1 ? "," : "", n > 1 ? names[1] : "");
                dtt_ctx("%s", what);
                CHECK_OK(dt_mesh_slice(mesh, n, names, &sub));
                if (!sub) continue;
                check_mesh(sub, n, sshape, names, srank, scoord, what);
                {
                    dtt_mesh m;
                    dt_placement a[DT_MAX_MESH_DIMS], b[DT_MAX_MESH_DIMS];
                    int64_t sh[2] = { 11, 6 };
                    describe(&m, sub, n, sshape, scoord, what);
                    memset(a, 0, sizeof a);
                    memset(b, 0, sizeof b);
                    a[0] = dt_shard(0);
                    dtt_run_pair(&m, DT_F32, 2, sh, a, b, DTT_BYTES, NULL); /* stats through the root comm */
                    b[n - 1] = dt_shard(1);
                    dtt_run_pair(&m, DT_I32, 2, sh, a, b, DTT_BYTES, NULL);
                    a[0] = dt_partial(DT_SUM);
                    dtt_run_pair(&m, DT_BF16, 2, sh, a, b, DTT_BYTES, NULL);
                }
                dt_mesh_destroy(sub);
            }
            {
                const char *bad[2];
                dt_mesh *sub = NULL, *sentinel = (dt_mesh *)(void *)&md;
                bad[0] = "nope";
                dtt_ctx("slice errors of %s", nm);
                sub = sentinel;
                CHECK_ST(dt_mesh_slice(mesh, 1, bad, &sub), DT_ERR_MESH);
                CHECK(sub == sentinel, "*out changed");
                CHECK_ERRMSG("dt_mesh_slice");
                bad[0] = g_names[0];
                bad[1] = g_names[0];
                CHECK_ST(dt_mesh_slice(mesh, 2, bad, &sub), DT_ERR_MESH);
                CHECK_ST(dt_mesh_slice(mesh, 0, bad, &sub), DT_ERR_MESH);
                CHECK(sub == sentinel, "*out changed");
            }
            dt_mesh_destroy(mesh);
        }
    }
}

/* ------------------------------------------------------------ flatten */

static void test_flatten(void)
{
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, nd;
    for (nd = 2; nd <= 3; nd++) {
        nf = dtt_factorizations(dtt_np, nd, fac, 64);
        for (f = 0; f < nf && f < (dtt_quick ? 2 : 8); f++) {
            dt_mesh_desc md;
            dt_mesh *mesh = NULL, *flat = NULL;
            int *shape = &fac[f * DT_MAX_MESH_DIMS], coord[DT_MAX_MESH_DIMS], k;
            const char *names3[3] = { "a", "b", "c" };
            char nm[32];
            memset(&md, 0, sizeof md);
            md.ndim = nd;
            for (k = 0; k < nd; k++) {
                md.shape[k] = shape[k];
                md.names[k] = names3[k];
            }
            dtt_ishape_str(nd, shape, nm, sizeof nm);
            dtt_ctx("flatten %s", nm);
            CHECK_OK(dt_mesh_create(g_comm, &md, &mesh));
            if (!mesh) continue;
            dtt_unravel(nd, shape, dtt_rank, coord);
            if (nd == 2) {
                /* a x b -> "ab" of a*b: coordinate c0*b + c1 */
                int fs[1], fc[1];
                const char *fnames[1] = { "ab" };
                fs[0] = shape[0] * shape[1];
                fc[0] = coord[0] * shape[1] + coord[1];
                CHECK_OK(dt_mesh_flatten(mesh, 2, names3, "ab", &flat));
                if (flat) {
                    dtt_mesh m;
                    dt_placement a[DT_MAX_MESH_DIMS], b[DT_MAX_MESH_DIMS];
                    int64_t sh[1] = { 23 };
                    check_mesh(flat, 1, fs, fnames, dtt_rank, fc, "flattened a,b");
                    describe(&m, flat, 1, fs, fc, "ab");
                    memset(a, 0, sizeof a);
                    memset(b, 0, sizeof b);
                    a[0] = dt_shard(0);
                    dtt_run_pair(&m, DT_F64, 1, sh, a, b, DTT_BYTES, NULL);
                    dtt_run_pair(&m, DT_F64, 1, sh, b, a, DTT_BYTES, NULL);
                    dt_mesh_destroy(flat);
                    flat = NULL;
                }
                /* the wrong order */
                {
                    const char *rev[2] = { "b", "a" };
                    dt_mesh *sentinel = (dt_mesh *)(void *)&md;
                    flat = sentinel;
                    CHECK_ST(dt_mesh_flatten(mesh, 2, rev, "ba", &flat), DT_ERR_MESH);
                    CHECK(flat == sentinel, "*out changed");
                    CHECK_ERRMSG("dt_mesh_flatten");
                    flat = NULL;
                }
            } else {
                /* a x b x c -> a x "bc" */
                int fs[2], fc[2];
                const char *fnames[2] = { "a", "bc" };
                fs[0] = shape[0];
                fs[1] = shape[1] * shape[2];
                fc[0] = coord[0];
                fc[1] = coord[1] * shape[2] + coord[2];
                CHECK_OK(dt_mesh_flatten(mesh, 2, names3 + 1, "bc", &flat));
                if (flat) {
                    dtt_mesh m;
                    dt_placement a[DT_MAX_MESH_DIMS], b[DT_MAX_MESH_DIMS];
                    int64_t sh[2] = { 9, 10 };
                    check_mesh(flat, 2, fs, fnames, dtt_rank, fc, "flattened b,c");
                    describe(&m, flat, 2, fs, fc, "a x bc");
                    memset(a, 0, sizeof a);
                    memset(b, 0, sizeof b);
                    a[0] = dt_shard(0);
                    a[1] = dt_shard(1);
                    b[0] = dt_shard(1);
                    b[1] = dt_shard(0);
                    dtt_run_pair(&m, DT_I32, 2, sh, a, b, DTT_BYTES, NULL);
                    dt_mesh_destroy(flat);
                    flat = NULL;
                }
                /* not adjacent: a, c */
                {
                    const char *ac[2] = { "a", "c" };
                    CHECK_ST(dt_mesh_flatten(mesh, 2, ac, "ac", &flat), DT_ERR_MESH);
                    CHECK(flat == NULL, "*out changed");
                }
                /* all three -> one */
                {
                    int fs1[1], fc1[1];
                    const char *n1[1] = { "abc" };
                    fs1[0] = dtt_np;
                    fc1[0] = dtt_rank;
                    CHECK_OK(dt_mesh_flatten(mesh, 3, names3, "abc", &flat));
                    if (flat) check_mesh(flat, 1, fs1, n1, dtt_rank, fc1, "flattened a,b,c");
                    dt_mesh_destroy(flat);
                    flat = NULL;
                }
            }
            dt_mesh_destroy(mesh);
        }
    }
}

/* ------------------------------------------------------------ description errors */

static void test_mesh_errors(void)
{
    dt_mesh_desc md;
    dt_mesh *sentinel = (dt_mesh *)(void *)&md, *m = sentinel;
    int *ranks = (int *)dtt_malloc(sizeof(int) * (size_t)(dtt_np + 1)), i;
    memset(&md, 0, sizeof md);
    dtt_ctx("mesh errors");
    md.ndim = 2;
    md.shape[0] = 1;
    md.shape[1] = dtt_np;
    md.names[0] = "x";
    md.names[1] = "x";
    CHECK_ST(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH);
    CHECK(m == sentinel, "*out changed");
    CHECK_ERRMSG("dt_mesh_create");
    md.names[1] = "y";
    md.shape[1] = dtt_np + 1; /* product mismatch */
    CHECK_ST(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH);
    md.shape[1] = dtt_np;
    md.shape[0] = 2;
    CHECK_ST(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH);
    md.shape[0] = 0;
    CHECK_ST(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH);
    md.shape[0] = -1;
    md.shape[1] = -dtt_np;
    CHECK_ST(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH);
    /* ranks: too many for the comm, a duplicate, out of range */
    md.shape[0] = 1;
    md.shape[1] = dtt_np + 1;
    for (i = 0; i <= dtt_np; i++) ranks[i] = i % dtt_np;
    md.ranks = ranks;
    CHECK_ST(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH);
    md.shape[1] = dtt_np;
    for (i = 0; i < dtt_np; i++) ranks[i] = i;
    ranks[dtt_np - 1] = dtt_np; /* not a rank of the comm */
    CHECK_ST(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH);
    if (dtt_np > 1) {
        ranks[dtt_np - 1] = 0; /* duplicate */
        CHECK_ST(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH);
    }
    ranks[dtt_np - 1] = -1;
    CHECK_ST(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH);
    md.ranks = NULL;
    md.ndim = 0;
    CHECK_ST(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH);
    md.ndim = DT_MAX_MESH_DIMS + 1;
    CHECK_ST(dt_mesh_create(g_comm, &md, &m), DT_ERR_MESH);
    CHECK(m == sentinel, "*out changed");
    /* a name reused across dims in flatten's result */
    {
        dt_mesh *mesh = NULL, *f = NULL;
        const char *ab[2] = { "a", "b" };
        memset(&md, 0, sizeof md);
        md.ndim = 3;
        md.shape[0] = dtt_np;
        md.shape[1] = 1;
        md.shape[2] = 1;
        md.names[0] = "c";
        md.names[1] = "a";
        md.names[2] = "b";
        CHECK_OK(dt_mesh_create(g_comm, &md, &mesh));
        if (mesh) {
            CHECK_ST(dt_mesh_flatten(mesh, 2, ab, "c", &f), DT_ERR_MESH);
            CHECK(f == NULL, "*out changed");
            dt_mesh_destroy(mesh);
        }
    }
    free(ranks);
}

/* the comm helpers */
static void test_comm(void)
{
    dt_comm_stats s;
    dtt_ctx("comm");
    CHECK(dt_comm_rank(g_comm) == dtt_rank, "dt_comm_rank %d", dt_comm_rank(g_comm));
    CHECK(dt_comm_size(g_comm) == dtt_np, "dt_comm_size %d", dt_comm_size(g_comm));
    dt_comm_reset_stats(g_comm);
    CHECK_OK(dt_comm_barrier(g_comm));
    dt_comm_get_stats(g_comm, &s);
    CHECK(s.bytes_sent == 0 && s.bytes_recv == 0, "a barrier moves no payload");
    CHECK(s.calls == (dtt_np > 1 ? 1u : 0u), "barrier calls %llu", (unsigned long long)s.calls);
    dt_comm_reset_stats(g_comm);
    dt_comm_get_stats(g_comm, &s);
    CHECK(s.calls == 0 && s.bytes_sent == 0 && s.bytes_recv == 0, "reset");
    /* a second comm from the same MPI comm is independent */
    {
        dt_comm *c2 = NULL;
        dt_comm_stats s2;
        CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &c2));
        if (c2) {
            CHECK_OK(dt_comm_barrier(c2));
            dt_comm_get_stats(g_comm, &s2);
            CHECK(s2.calls == 0, "another comm's traffic counted here");
            dt_comm_destroy(c2);
        }
    }
}

int main(int argc, char **argv)
{
    dtt_init(&argc, &argv, "mesh");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    if (g_comm) {
        test_comm();
        test_shapes();
        test_subsets();
        test_slices();
        test_flatten();
        test_mesh_errors();
        dt_comm_destroy(g_comm);
    }
    return dtt_finish();
}
