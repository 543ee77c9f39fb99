/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  own
*/
/* test_shm.c -- single-copy exchanges through MPI-3 shared windows
   (dt_comm_set_shm, DTENSOR_SHM; >>shm, and >>redistribute's shm part).

   With the shared path forced on (DTENSOR_SHM_MIN=0: every shard in the
   arena) and off, on the 1-D mesh and every 2-D mesh of the ranks, for 2-D
   and 3-D F64 / I32 tensors with primes and sizes smaller than the mesh
   (uneven and empty shards): every transition kind (S->R allgather, S(i)->
   S(j) all-to-all, whole-mesh box exchanges, two-step plans, R->S slices)
   from a tensor the library allocated (in the arena) and from a borrowed
   one (dt_tensor_from_local: the MPI path), each local element checked
   against the closed form v(g) of its global row-major index. The shared
   path must be taken (a private counter) exactly where it applies. Then:
   tensors destroyed in different orders on different ranks and the arena
   reused; dt_tensor_redistribute_reduce adding through the shared path
   (every element then twice its closed form); many tensors in a small arena (full: a rank's shard falls back
   to malloc, every rank then takes the MPI path, values still right); a
   mesh destroyed before its tensors; storage from dt_mesh_shm_alloc
   wrapped by the program (shared path on: in the arena, moved the shared
   way; off: plain memory); the default, auto: the arena made at the first
   large redistribution, what lives in it then and how it moves; bad modes
   of dt_comm_set_shm. */
#define _POSIX_C_SOURCE 200112L
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

static double v_of(int64_t g) { return 0.5 * (double)g + 3.0; }

static int64_t gindex(int nd, const int64_t *shape, const int64_t *off, const int64_t *ls, size_t i)
{
    int64_t g = 0;
    int d;
    size_t rest = i;
    int64_t idx[DT_MAX_DIMS];
    for (d = nd - 1; d >= 0; d--) { idx[d] = ls[d] ? (int64_t)(rest % (size_t)ls[d]) : 0; rest = ls[d] ? rest / (size_t)ls[d] : 0; }
    for (d = 0; d < nd; d++) g = g * shape[d] + off[d] + idx[d];
    return g;
}

static void fill(dt_tensor *t, dt_dtype ty, int nd, const int64_t *shape)
{
    int64_t off[DT_MAX_DIMS], ls[DT_MAX_DIMS];
    size_t i, n = dt_tensor_local_numel(t);
    void *p = dt_tensor_data(t);
    dt_tensor_local_offset(t, off);
    dt_tensor_local_shape(t, ls);
    for (i = 0; i < n; i++) {
        int64_t g = gindex(nd, shape, off, ls, i);
        if (ty == DT_F64) ((double *)p)[i] = v_of(g);
        else ((int32_t *)p)[i] = (int32_t)(g * 7 + 1);
    }
}

/* every element k times its closed form (k = 2: after one redistribution added into it) */
static int check_k(const dt_tensor *t, dt_dtype ty, int nd, const int64_t *shape, int k)
{
    int64_t off[DT_MAX_DIMS], ls[DT_MAX_DIMS];
    size_t i, n = dt_tensor_local_numel(t);
    const void *p = dt_tensor_data(t);
    int bad = 0;
    dt_tensor_local_offset(t, off);
    dt_tensor_local_shape(t, ls);
    for (i = 0; i < n; i++) {
        int64_t g = gindex(nd, shape, off, ls, i);
        if (ty == DT_F64 ? ((const double *)p)[i] != k * v_of(g) : ((const int32_t *)p)[i] != (int32_t)(k * (g * 7 + 1)))
            bad++;
    }
    return bad;
}

static int check(const dt_tensor *t, dt_dtype ty, int nd, const int64_t *shape) { return check_k(t, ty, nd, shape, 1); }

/* src -> dst from an allocated and a borrowed source; on: the path is on */
static void pair(dt_mesh *m, int mnd, dt_dtype ty, int nd, const int64_t *shape, const dt_placement *src,
                 const dt_placement *dst, int on, int expect_shm)
{
    dt_tensor_desc d;
    dt_tensor *a = NULL, *b = NULL, *w = NULL, *b2 = NULL;
    char s1[96], s2[96], sh[64];
    int64_t ls[DT_MAX_DIMS];
    long before;
    void *buf;
    memset(&d, 0, sizeof d);
    d.dtype = ty;
    d.ndim = nd;
    memcpy(d.shape, shape, (size_t)nd * sizeof *shape);
    memcpy(d.placements, src, (size_t)mnd * sizeof *src);
    dtt_ctx("shm %s %s %s -> %s %s", on ? "on" : "off", dtt_shape_str(nd, shape, sh, sizeof sh),
            dtt_pl_str(src, mnd, s1, sizeof s1), dtt_pl_str(dst, mnd, s2, sizeof s2), ty == DT_F64 ? "f64" : "i32");
    CHECK_OK(dt_tensor_empty(m, &d, &a));
    if (!a) return;
    fill(a, ty, nd, shape);
    CHECK(!on || dtt_np == 1 || dt_tensor_local_numel(a) == 0 || a->shm != NULL, "allocated shard not in the arena");
    CHECK(on || a->shm == NULL, "arena storage with the path off");
    before = dt__shm_taken;
    CHECK_OK(dt_tensor_redistribute(a, dst, &b));
    if (b) CHECK(check(b, ty, nd, shape) == 0, "wrong values (allocated source)");
    if (expect_shm) CHECK(dt__shm_taken > before, "the shared path was not taken");
    if (!on) CHECK(dt__shm_taken == before, "the shared path was taken while off");
    /* again into the same *out (reuse) */
    if (b) {
        if (dt_tensor_data(b)) memset(dt_tensor_data(b), 0, dt_tensor_local_numel(b) * (ty == DT_F64 ? 8 : 4));
        CHECK_OK(dt_tensor_redistribute(a, dst, &b));
        CHECK(check(b, ty, nd, shape) == 0, "wrong values (reused out)");
        /* added into: the shared path's copies combine (dt_tensor_redistribute_reduce) */
        before = dt__shm_taken;
        CHECK_OK(dt_tensor_redistribute_reduce(a, dst, DT_SUM, b));
        CHECK(check_k(b, ty, nd, shape, 2) == 0, "wrong values (redistribute_reduce SUM into out)");
        if (expect_shm) CHECK(dt__shm_taken > before, "the shared path was not taken (redistribute_reduce)");
    }
    /* a borrowed source: the MPI path */
    dt_tensor_local_shape(a, ls);
    buf = dtt_malloc(dt_tensor_local_numel(a) * (ty == DT_F64 ? 8 : 4) + 8);
    memcpy(buf, dt_tensor_data(a) ? dt_tensor_data(a) : buf, dt_tensor_local_numel(a) * (ty == DT_F64 ? 8 : 4));
    d.local_shape = ls;
    CHECK_OK(dt_tensor_from_local(m, &d, buf, 0, &w));
    before = dt__shm_taken;
    if (w) CHECK_OK(dt_tensor_redistribute(w, dst, &b2));
    if (b2) CHECK(check(b2, ty, nd, shape) == 0, "wrong values (borrowed source)");
    /* (one step: a later step's source may be a buffer of the library's, or empty everywhere) */
    if (mnd == 1) CHECK(dt__shm_taken == before, "the shared path taken from borrowed storage");
    dt_tensor_destroy(b2);
    dt_tensor_destroy(w);
    free(buf);
    dt_tensor_destroy(b);
    dt_tensor_destroy(a);
}

static void transitions(dt_comm *comm, int on)
{
    int f[16 * DT_MAX_MESH_DIMS], nf, k, np = dtt_np;
    static const int64_t shapes[][3] = {{13, 7, 0}, {5, 3, 0}, {2, 1, 0}, {6, 5, 4}};
    CHECK_OK(dt_comm_set_shm(comm, on));
    nf = dtt_factorizations(np, 2, f, 16);
    for (k = -1; k < nf; k++) {
        dt_mesh_desc md;
        dt_mesh *m = NULL;
        int mnd = k < 0 ? 1 : 2, s;
        memset(&md, 0, sizeof md);
        md.ndim = mnd;
        if (k < 0) md.shape[0] = np;
        else { md.shape[0] = f[k * DT_MAX_MESH_DIMS]; md.shape[1] = f[k * DT_MAX_MESH_DIMS + 1]; }
        CHECK_OK(dt_mesh_create(comm, &md, &m));
        if (!m) continue;
        for (s = 0; s < 4; s++) {
            int nd = shapes[s][2] ? 3 : 2;
            dt_dtype ty = s % 2 ? DT_I32 : DT_F64;
            dt_placement a[2], b[2];
            int p0 = mnd == 1 ? np : md.shape[0];
            if (dtt_quick && s == 3 && mnd == 2) continue;
            if (mnd == 1) {
                int big = on && np > 1;
                a[0] = dt_shard(0); b[0] = dt_replicate();
                pair(m, 1, ty, nd, shapes[s], a, b, on, big);                       /* allgather */
                a[0] = dt_shard(0); b[0] = dt_shard(1);
                pair(m, 1, ty, nd, shapes[s], a, b, on, big);                       /* all-to-all */
                a[0] = dt_shard(1); b[0] = dt_shard(0);
                pair(m, 1, ty, nd, shapes[s], a, b, on, big);
                a[0] = dt_shard(0); b[0] = dt_shard_balanced(0);
                pair(m, 1, ty, nd, shapes[s], a, b, on, big);                       /* box exchange */
                a[0] = dt_replicate(); b[0] = dt_shard(1);
                pair(m, 1, ty, nd, shapes[s], a, b, on, 0);                         /* slice: local */
            } else {
                (void)p0;
                a[0] = dt_shard(0); a[1] = dt_shard(1); b[0] = dt_replicate(); b[1] = dt_replicate();
                pair(m, 2, ty, nd, shapes[s], a, b, on, on && np > 1);              /* two gathers */
                a[0] = dt_shard(0); a[1] = dt_shard(1); b[0] = dt_shard(1); b[1] = dt_shard(0);
                pair(m, 2, ty, nd, shapes[s], a, b, on, on && np > 1);              /* exchange */
                a[0] = dt_shard(0); a[1] = dt_replicate(); b[0] = dt_shard(1); b[1] = dt_replicate();
                pair(m, 2, ty, nd, shapes[s], a, b, on, on && md.shape[0] > 1);     /* all-to-all, dim 0 */
                a[0] = dt_replicate(); a[1] = dt_shard(0); b[0] = dt_replicate(); b[1] = dt_replicate();
                pair(m, 2, ty, nd, shapes[s], a, b, on, on && md.shape[1] > 1);     /* allgather, dim 1 */
                a[0] = dt_shard(1); a[1] = dt_shard(0); b[0] = dt_shard(0); b[1] = dt_shard(0);
                pair(m, 2, ty, nd, shapes[s], a, b, on, 0);                         /* nested */
            }
        }
        dt_mesh_destroy(m);
    }
}

/* the 1-D mesh of every rank, the shared path `on` (1) or off (0) */
static dt_mesh *mesh_1d(dt_comm *comm, int on)
{
    dt_mesh_desc md;
    dt_mesh *m = NULL;
    CHECK_OK(dt_comm_set_shm(comm, on));
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    CHECK_OK(dt_mesh_create(comm, &md, &m));
    return m;
}

/* tensors freed in different orders on different ranks, then a chain */
static void orders(dt_comm *comm)
{
    dt_mesh *m = NULL;
    dt_tensor *t[24];
    dt_tensor_desc d;
    int i, n = 24;
    int64_t shape[2] = {37, 11};
    dt_placement r[1], s0[1], s1[1];
    r[0] = dt_replicate();
    s0[0] = dt_shard(0);
    s1[0] = dt_shard(1);
    dtt_ctx("orders");
    m = mesh_1d(comm, 1);
    if (!m) return;
    d = dtt_desc(DT_F64, 2, shape, 1, s0);
    for (i = 0; i < n; i++) {
        t[i] = NULL;
        CHECK_OK(dt_tensor_empty(m, &d, &t[i]));
        if (t[i]) fill(t[i], DT_F64, 2, shape);
    }
    for (i = 0; i < n; i++) { /* rank parity decides the order; every third kept */
        int j = dtt_rank % 2 ? n - 1 - i : (i * 7) % n;
        if (j % 3 && t[j]) { dt_tensor_destroy(t[j]); t[j] = NULL; }
    }
    for (i = 0; i < n; i += 3) {
        dt_tensor *a = NULL, *b = NULL, *c = NULL;
        if (!t[i]) continue;
        CHECK_OK(dt_tensor_redistribute(t[i], s1, &a));                     /* S(0) -> S(1) */
        if (a) CHECK_OK(dt_tensor_redistribute(a, r, &b));                   /* S(1) -> R   */
        if (b) CHECK_OK(dt_tensor_redistribute(b, s0, &c));                  /* R -> S(0)   */
        if (a) CHECK(check(a, DT_F64, 2, shape) == 0, "chain step 1");
        if (b) CHECK(check(b, DT_F64, 2, shape) == 0, "chain step 2");
        if (c) CHECK(check(c, DT_F64, 2, shape) == 0, "chain step 3");
        dt_tensor_destroy(dtt_rank % 2 ? a : c);
        dt_tensor_destroy(b);
        dt_tensor_destroy(dtt_rank % 2 ? c : a);
    }
    for (i = 0; i < n; i++) dt_tensor_destroy(t[i]);
    /* a tensor that outlives its mesh: the window stays, the block goes with the tensor */
    t[0] = NULL;
    CHECK_OK(dt_tensor_empty(m, &d, &t[0]));
    dt_mesh_destroy(m);
    dt_tensor_destroy(t[0]);
}

/* storage the program keeps and wraps itself, from dt_mesh_shm_alloc: with
   the path on it is in the arena and its wraps move the shared way; off, it
   is plain memory and they move by MPI; the values right either way */
static void user_alloc(dt_comm *comm, int on)
{
    dt_mesh *m = NULL;
    dt_tensor_desc d;
    dt_tensor *w = NULL, *o = NULL;
    int64_t shape[2] = {37, 11}, ls[2];
    dt_placement s0[1], s1[1];
    void *buf = NULL, *nul = (void *)&d;
    long before;
    size_t bytes;
    s0[0] = dt_shard(0);
    s1[0] = dt_shard(1);
    dtt_ctx("dt_mesh_shm_alloc, path %s", on ? "on" : "off");
    m = mesh_1d(comm, on);
    if (!m) return;
    d = dtt_desc(DT_F64, 2, shape, 1, s0);
    CHECK_OK(dt_tensor_empty(m, &d, &o)); /* (only for this rank's shard shape) */
    if (!o) { dt_mesh_destroy(m); return; }
    dt_tensor_local_shape(o, ls);
    dt_tensor_destroy(o);
    o = NULL;
    bytes = (size_t)(ls[0] * ls[1]) * sizeof(double);
    CHECK_OK(dt_mesh_shm_alloc(m, bytes + 8, &buf));
    CHECK(buf != NULL, "dt_mesh_shm_alloc gave NULL for %zu bytes", bytes + 8);
    if (buf) {
        CHECK(!on || dtt_np == 1 || dt__shm_owns(m->shm, buf), "path on: the block is not in the arena");
        CHECK(on || !dt__shm_owns(m->shm, buf), "path off: the block is in an arena");
        d.local_shape = ls;
        CHECK_OK(dt_tensor_from_local(m, &d, buf, DT_BORROW, &w));
        if (w) {
            fill(w, DT_F64, 2, shape);
            before = dt__shm_taken;
            CHECK_OK(dt_tensor_redistribute(w, s1, &o));
            if (o) CHECK(check(o, DT_F64, 2, shape) == 0, "wrong values (a wrap of dt_mesh_shm_alloc storage)");
            if (on && dtt_np > 1) CHECK(dt__shm_taken > before, "a wrap of arena storage did not take the shared path");
            if (!on) CHECK(dt__shm_taken == before, "the shared path taken while off");
        }
        dt_tensor_destroy(o);
        dt_tensor_destroy(w);
        dt_mesh_shm_free(m, buf);
    }
    CHECK_OK(dt_mesh_shm_alloc(m, 0, &buf));
    CHECK(buf == NULL, "0 bytes: *ptr not NULL");
    dt_mesh_shm_free(m, NULL);
    CHECK_ST(dt_mesh_shm_alloc(NULL, 8, &nul), DT_ERR_ARG);
    CHECK(nul == NULL, "m NULL: *ptr not set to NULL");
    CHECK_ERRMSG("dt_mesh_shm_alloc");
    CHECK_ST(dt_mesh_shm_alloc(m, 8, NULL), DT_ERR_ARG);
    CHECK_ERRMSG("dt_mesh_shm_alloc");
    dt_mesh_destroy(m);
}

/* a small arena: some shards fall back to malloc, the MPI path keeps the values */
static void full(dt_comm *comm)
{
    dt_mesh *m = NULL;
    dt_tensor *t[40];
    dt_tensor_desc d;
    int i, n = 40, inarena = 0;
    int64_t shape[2] = {64, 33};
    dt_placement s0[1], s1[1];
    s0[0] = dt_shard(0);
    s1[0] = dt_shard(1);
    dtt_ctx("full arena");
    setenv("DTENSOR_SHM_ARENA", dtt_rank % 2 ? "20000" : "60000", 1); /* different per rank */
    m = mesh_1d(comm, 1);
    setenv("DTENSOR_SHM_ARENA", "268435456", 1);
    if (!m) return;
    d = dtt_desc(DT_F64, 2, shape, 1, s0);
    for (i = 0; i < n; i++) {
        dt_tensor *o = NULL;
        t[i] = NULL;
        CHECK_OK(dt_tensor_empty(m, &d, &t[i]));
        if (!t[i]) continue;
        inarena += t[i]->shm != NULL;
        fill(t[i], DT_F64, 2, shape);
        CHECK_OK(dt_tensor_redistribute(t[i], s1, &o));
        if (o) CHECK(check(o, DT_F64, 2, shape) == 0, "values with a full arena (tensor %d)", i);
        dt_tensor_destroy(o);
    }
    CHECK(dtt_np == 1 || (inarena > 0 && inarena < n), "the arena held %d of %d tensors", inarena, n);
    for (i = 0; i < n; i++) dt_tensor_destroy(t[i]);
    dt_mesh_destroy(m);
}

/* an F64 tensor of `shape` in S(0), filled with the closed form */
static dt_tensor *filled(dt_mesh *m, const int64_t *shape)
{
    dt_placement s0[1];
    dt_tensor_desc d;
    dt_tensor *t = NULL;
    s0[0] = dt_shard(0);
    d = dtt_desc(DT_F64, 2, shape, 1, s0);
    CHECK_OK(dt_tensor_empty(m, &d, &t));
    if (t) fill(t, DT_F64, 2, shape);
    return t;
}

/* DTENSOR_SHM=auto, the default: no arena at dt_mesh_create, none for a
   small redistribution; the first one averaging DTENSOR_SHM_AUTO_MIN bytes
   a rank makes it (its own source, older, moves by MPI; its result, and
   what follows, lives in it, and moves the shared way); the accumulating
   call makes it too; DTENSOR_SHM and dt_comm_set_shm pick the mode */
static void lazy(dt_comm *comm)
{
    int64_t small[2] = {5, 3}, big[2] = {128, 65}; /* 66,560 bytes: >= 4096 a rank up to 16 ranks */
    dt_placement s0[1], s1[1];
    dt_mesh *m;
    dt_tensor *a, *b = NULL, *c = NULL, *x, *y = NULL;
    long before;
    int reduce, multi = dtt_np > 1;
    s0[0] = dt_shard(0);
    s1[0] = dt_shard(1);
    setenv("DTENSOR_SHM_AUTO_MIN", "4096", 1);
    setenv("DTENSOR_SHM_MIN", "1024", 1); /* the small tensor, under 1024 bytes a rank, never asks */
    for (reduce = 0; reduce < 2; reduce++) {
        dtt_ctx("shm auto, the first large call %s", reduce ? "dt_tensor_redistribute_reduce" : "dt_tensor_redistribute");
        m = mesh_1d(comm, 2);
        if (!m) return;
        CHECK(m->shm == NULL, "auto: an arena at dt_mesh_create");
        CHECK(multi ? m->shm_auto == 4096 : m->shm_auto == 0, "auto: %zu bytes a rank to make it", m->shm_auto);
        x = filled(m, small);
        before = dt__shm_taken;
        if (x) CHECK_OK(dt_tensor_redistribute(x, s1, &y));
        if (y) CHECK(check(y, DT_F64, 2, small) == 0, "wrong values (small)");
        CHECK(m->shm == NULL && dt__shm_taken == before, "auto: a small redistribution made the arena");
        a = filled(m, big);
        if (a && !reduce) CHECK_OK(dt_tensor_redistribute(a, s1, &b));
        if (a && reduce) {
            b = filled(m, big); /* S(0), then S(0) -> S(0) added into it: 2 v */
            if (b) CHECK_OK(dt_tensor_redistribute_reduce(a, s0, DT_SUM, b));
            if (b) CHECK(check_k(b, DT_F64, 2, big, 2) == 0, "wrong values (the first large call, reduce)");
        }
        if (b && !reduce) CHECK(check(b, DT_F64, 2, big) == 0, "wrong values (the first large call)");
        CHECK(m->shm_auto == 0, "auto: still pending after a large redistribution");
        CHECK(!multi || m->shm != NULL, "auto: no arena after a large redistribution");
        CHECK(!m->shm || !a || a->shm == NULL, "the older source is in the arena");
        if (b && !reduce) CHECK(!m->shm || b->shm != NULL, "the first large call's result is not in the arena");
        if (b && !reduce) { /* from the arena: the shared way */
            before = dt__shm_taken;
            CHECK_OK(dt_tensor_redistribute(b, s0, &c));
            if (c) CHECK(check(c, DT_F64, 2, big) == 0, "wrong values (from the arena)");
            CHECK(!m->shm || dt__shm_taken > before, "auto: a source in the arena did not take the shared path");
            before = dt__shm_taken; /* the older source again, into b: by MPI */
            memset(dt_tensor_data(b), 0, dt_tensor_local_numel(b) * sizeof(double));
            CHECK_OK(dt_tensor_redistribute(a, s1, &b));
            CHECK(check(b, DT_F64, 2, big) == 0, "wrong values (the older source again)");
            CHECK(dt__shm_taken == before, "the shared path taken from a source outside the arena");
            before = dt__shm_asked; /* a small tensor with the arena made: no allgather */
            if (x) CHECK_OK(dt_tensor_redistribute(x, s1, &y));
            if (y) CHECK(check(y, DT_F64, 2, small) == 0, "wrong values (small, the arena made)");
            CHECK(dt__shm_asked == before, "a tensor under n x DTENSOR_SHM_MIN asked for the shared path");
            before = dt__shm_asked;
            CHECK_OK(dt_tensor_redistribute(b, s0, &c));
            CHECK(!m->shm || dt__shm_asked > before, "a large tensor did not ask for the shared path");
        }
        dt_tensor_destroy(c);
        dt_tensor_destroy(b);
        dt_tensor_destroy(a);
        dt_tensor_destroy(y);
        dt_tensor_destroy(x);
        c = b = y = NULL;
        dt_mesh_destroy(m);
    }
    dtt_ctx("shm auto: the modes");
    unsetenv("DTENSOR_SHM"); /* the default */
    m = mesh_1d(comm, -1);
    if (m) CHECK(m->shm == NULL && m->shm_auto == (multi ? 4096u : 0u), "DTENSOR_SHM unset: not auto");
    dt_mesh_destroy(m);
    setenv("DTENSOR_SHM", "0", 1);
    m = mesh_1d(comm, -1);
    if (m) CHECK(m->shm == NULL && m->shm_auto == 0, "DTENSOR_SHM=0: an arena or one pending");
    dt_mesh_destroy(m);
    m = mesh_1d(comm, 2); /* dt_comm_set_shm overrides */
    if (m) CHECK(m->shm_auto == (multi ? 4096u : 0u), "dt_comm_set_shm(2) under DTENSOR_SHM=0: not auto");
    dt_mesh_destroy(m);
    setenv("DTENSOR_SHM", "1", 1);
    m = mesh_1d(comm, -1);
    if (m) CHECK(m->shm_auto == 0 && (!multi || m->shm != NULL), "DTENSOR_SHM=1: no arena at dt_mesh_create");
    dt_mesh_destroy(m);
    unsetenv("DTENSOR_SHM");
    unsetenv("DTENSOR_SHM_AUTO_MIN");
    setenv("DTENSOR_SHM_MIN", "0", 1);
}

int main(int argc, char **argv)
{
    dt_comm *comm = NULL;
    dtt_init(&argc, &argv, "shm");
    setenv("DTENSOR_SHM_MIN", "0", 1);
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    if (comm) {
        transitions(comm, 1);
        transitions(comm, 0);
        orders(comm);
        full(comm);
        user_alloc(comm, 1);
        user_alloc(comm, 0);
        lazy(comm);
        dtt_ctx("bad input");
        CHECK_ST(dt_comm_set_shm(comm, 3), DT_ERR_ARG);
        CHECK_ERRMSG("dt_comm_set_shm");
        CHECK(strstr(dt_last_error(), "mode = 3") != NULL, "message: %s", dt_last_error());
        CHECK_ST(dt_comm_set_shm(NULL, 1), DT_ERR_ARG);
        CHECK_ERRMSG("dt_comm_set_shm");
        dt_comm_destroy(comm);
    }
    return dtt_finish();
}
