/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  own
*/
/* test_io.c -- .npy checkpoints: dt_tensor_save_npy / dt_tensor_load_npy.

   - round trips: closed-form values (dtt_val of the global index, exact in
     every dtype) saved from one mesh / placement and loaded on another mesh
     shape / placement, every element of every rank's box compared; uneven
     and empty shards, 0-d, 1-element and empty tensors, every dtype numpy
     has (BF16 is refused with DT_ERR_UNSUPPORTED and writes nothing);
   - the file is exactly header + numel * itemsize bytes, the header a
     multiple of 64; replicated saves on dt_comm_mpi move no tensor bytes
     between ranks (dt_comm_stats: 0 calls, MPI-IO only);
   - Partial(SUM / MAX) saves write the global value; Partial loads follow
     Replicate -> Partial (SUM: coordinate 0 holds the value, zeros elsewhere);
   - *out reuse: the right spec is refilled, a wrong one refused untouched;
   - the non-MPI route (a custom backend with only sendrecv, and dt_comm_self):
     gather to mesh rank 0 + stdio, rank 0 reads + scatter;
   - independent reference: files written here byte by byte (other key order,
     double quotes, no padding, format 2.0) load correctly; the parser on
     its own (dt__npy_parse_header);
   - malformed files (bad magic, bad version, truncated, trailing bytes,
     fortran_order True, big-endian / unsupported descr, garbage dict, missing
     key, > DT_MAX_DIMS dims, overflowing shape) give DT_ERR_IO on every rank
     with *out untouched; a missing file DT_ERR_IO; NULL arguments DT_ERR_ARG;
   - crash safety: after a successful save no "<path>.tmp.*" is left; a save
     into a missing directory fails with no file; a save whose final rename
     fails (the target is a directory) fails, removes its temporary and
     leaves the target as it was;
   - names with ':' (ROMIO's file-system prefix syntax) save and load under
     MPICH and Open MPI and land under exactly that name, also in a
     directory with a ':' and through dt_comm_self;
   - RNG state files (dt_rng_save_state / dt_rng_load_state): save, draw,
     load, draw again gives bit-identical numbers; the exact text, which
     Python's json reads; hand-written variants load; malformed, truncated,
     overflowing, missing and unwritable files give DT_ERR_IO naming the file
     with the state unchanged, and leave no temporary;
   - numpy (optional): when `python3 -c 'import numpy'` works, rank 0 runs
     tests/npy_check.py on saved files, which numpy.load-s them and compares
     with the same closed form. Skipped (and said so) otherwise. */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>
#include <sys/types.h>
#include <dirent.h>
#include <unistd.h>
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

static dt_comm *g_comm = NULL;
static char g_dir[256];
static int g_numpy = 0;
static const char *g_python = "python3"; /* the interpreter that imports numpy */

static const dt_dtype k_types[] = { DT_F32, DT_F64, DT_F16, DT_I32, DT_I64, DT_U8 };
#define NTYPES ((int)(sizeof k_types / sizeof k_types[0]))

static void path_of(char *buf, size_t cap, const char *name) { snprintf(buf, cap, "%s/%s", g_dir, name); }

static long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* entries of g_dir whose name contains ".tmp." */
static int count_tmp(void)
{
    DIR *d = opendir(g_dir);
    struct dirent *e;
    int n = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".tmp.")) n++;
    closedir(d);
    return n;
}

static void barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }

/* a tensor with dtt_val at every global index, placed as pl on m */
static dt_tensor *make(dt_mesh *m, int nd, dt_dtype t, int ndim, const int64_t *shape, const dt_placement *pl)
{
    dt_tensor_desc d;
    dt_tensor *x = NULL;
    int64_t n = dtt_numel(ndim, shape), lo[DT_MAX_DIMS];
    void *full = dtt_malloc((size_t)n * dtt_size(t));
    int k;
    memset(&d, 0, sizeof d);
    memset(lo, 0, sizeof lo);
    d.dtype = t;
    d.ndim = ndim;
    for (k = 0; k < ndim; k++) d.shape[k] = shape[k];
    for (k = 0; k < nd; k++) d.placements[k] = pl[k];
    dtt_fill_box(t, ndim, shape, shape, lo, full);
    CHECK_OK(dt_tensor_distribute(m, &d, full, DT_SRC_ALL, &x));
    free(full);
    return x;
}

/* x (on a mesh of nd dims, placements pl) holds dtt_val everywhere it should:
   its box, and for Partial(SUM) zeros off coordinate 0 */
static void check_loaded(const dt_tensor *x, int nd, const dt_placement *pl, const char *what)
{
    const dt_tensor_desc *d = dt_tensor_get_desc(x);
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS];
    int coord[DT_MAX_MESH_DIMS], k, zero = 0;
    size_t i, n;
    if (!x) return;
    dt_tensor_local_shape(x, ls);
    dt_tensor_local_offset(x, lo);
    n = dt_tensor_local_numel(x);
    if (!dt_mesh_coordinate(dt_tensor_mesh(x), coord)) return;
    for (k = 0; k < nd; k++)
        if (pl[k].kind == DT_PARTIAL && pl[k].reduce == DT_SUM && coord[k] != 0) zero = 1;
    if (zero) {
        for (i = 0; i < n; i++)
            if (dtt_load_d(d->dtype, dt_tensor_data(x), i) != 0) {
                CHECK(0, "%s: Partial(SUM) off coordinate 0: local elem %zu is not 0", what, i);
                break;
            }
    } else {
        dtt_check_box(d->dtype, d->ndim, d->shape, ls, lo, dt_tensor_data(x), what);
    }
}

/* rank 0: the file has header (multiple of 64) + numel * size bytes */
static void check_file(const char *path, dt_dtype t, int ndim, const int64_t *shape)
{
    long sz, want;
    unsigned char pre[10];
    FILE *f;
    if (dtt_rank != 0) return;
    sz = file_size(path);
    f = fopen(path, "rb");
    CHECK(f != NULL, "saved file %s missing", path);
    if (!f) return;
    CHECK(fread(pre, 1, 10, f) == 10, "short file");
    fclose(f);
    want = (long)(pre[8] | pre[9] << 8) + 10;
    CHECK(want % 64 == 0, "header+preamble %ld bytes is not a multiple of 64", want);
    want += (long)(dtt_numel(ndim, shape) * (int64_t)dtt_size(t));
    CHECK(sz == want, "%s is %ld bytes, want %ld", path, sz, want);
}

static void run_numpy(const char *path, dt_dtype t)
{
    char cmd[1024];
    int rc;
    if (!g_numpy || dtt_rank != 0) return;
    snprintf(cmd, sizeof cmd, "%s tests/npy_check.py '%s' %s", g_python, path, dtt_dtname(t));
    rc = system(cmd);
    CHECK(rc == 0, "numpy check failed (%d): %s", rc, cmd);
}

/* ---------------------------------------------------------------- round trips */

static void round_trip(const dtt_mesh *a, const dt_placement *pa, const dtt_mesh *b, const dt_placement *pb,
                       dt_dtype t, int ndim, const int64_t *shape, int numpy)
{
    char path[512], s1[64], s2[64], s3[64];
    dt_tensor *x, *y = NULL;
    dt_comm_stats st;
    int k, plain = 1;
    path_of(path, sizeof path, "rt.npy");
    dtt_ctx("save %s on %s %s, load on %s %s, %s", dtt_shape_str(ndim, shape, s1, sizeof s1), a->name,
            dtt_pl_str(pa, a->nd, s2, sizeof s2), b->name, dtt_pl_str(pb, b->nd, s3, sizeof s3), dtt_dtname(t));
    x = make(a->mesh, a->nd, t, ndim, shape, pa);
    if (!x) return;
    for (k = 0; k < a->nd; k++) plain &= pa[k].kind != DT_PARTIAL;
    dt_comm_reset_stats(g_comm);
    CHECK_OK(dt_tensor_save_npy(x, path));
    dt_comm_get_stats(g_comm, &st);
    if (plain) /* MPI-IO: no tensor bytes between ranks (control traffic is not counted) */
        CHECK(st.calls == 0 && st.bytes_sent == 0 && st.bytes_recv == 0,
              "save of a non-Partial tensor moved data: calls %llu sent %llu", (unsigned long long)st.calls,
              (unsigned long long)st.bytes_sent);
    barrier();
    check_file(path, t, ndim, shape);
    if (dtt_rank == 0) CHECK(count_tmp() == 0, "a .tmp. file is left after a successful save");
    if (numpy) run_numpy(path, t);
    CHECK_OK(dt_tensor_load_npy(b->mesh, path, pb, &y));
    if (y) {
        const dt_tensor_desc *d = dt_tensor_get_desc(y);
        CHECK(d->dtype == t && d->ndim == ndim && memcmp(d->shape, shape, (size_t)ndim * sizeof(int64_t)) == 0,
              "loaded desc differs");
        check_loaded(y, b->nd, pb, "loaded");
    }
    dt_tensor_destroy(y);
    dt_tensor_destroy(x);
    barrier();
}

/* names with ':' (ISO timestamps): ROMIO (MPICH) would read "ckpt_2024-01-01T10"
   as a file-system driver; the file must land under exactly its name, on
   the MPI-IO route, the dt_comm_self route and in a directory with a ':' */
static void test_colon_paths(void)
{
    static const int64_t shape[2] = { 13, 3 };
    static const char *const names[2] = { "ckpt_2024-01-01T10:00:00.npy", "dir:x/ckpt:1.npy" };
    dt_placement s0[1], s1[1];
    dtt_mesh m;
    int one[1], k;
    char path[512], dir[512];
    one[0] = dtt_np;
    s0[0] = dt_shard(0);
    s1[0] = dt_shard(1);
    path_of(dir, sizeof dir, "dir:x");
    if (dtt_rank == 0) CHECK(mkdir(dir, 0755) == 0, "cannot make %s", dir);
    barrier();
    if (dtt_mesh_open(&m, g_comm, 1, one)) {
        for (k = 0; k < 2; k++) {
            dt_tensor *x, *y = NULL;
            path_of(path, sizeof path, names[k]);
            dtt_ctx("colon path %s", names[k]);
            x = make(m.mesh, 1, DT_F64, 2, shape, s0);
            CHECK_OK(dt_tensor_save_npy(x, path));
            barrier();
            check_file(path, DT_F64, 2, shape);
            CHECK_OK(dt_tensor_load_npy(m.mesh, path, s1, &y));
            if (y) check_loaded(y, 1, s1, "loaded from a name with ':'");
            dt_tensor_destroy(y);
            dt_tensor_destroy(x);
            barrier();
            if (dtt_rank == 0) CHECK(remove(path) == 0, "%s is not where it was saved", path);
        }
        dtt_mesh_close(&m);
    }
    if (dtt_rank == 0) { /* one rank on dt_comm_self: the stdio route */
        dt_comm *self = NULL;
        dt_mesh *ms = NULL;
        dt_mesh_desc md;
        memset(&md, 0, sizeof md);
        md.ndim = 1;
        md.shape[0] = 1;
        CHECK_OK(dt_comm_self(&self));
        if (self) CHECK_OK(dt_mesh_create(self, &md, &ms));
        if (ms) {
            dt_tensor *x, *y = NULL;
            path_of(path, sizeof path, names[1]);
            x = make(ms, 1, DT_F64, 2, shape, s0);
            CHECK_OK(dt_tensor_save_npy(x, path));
            check_file(path, DT_F64, 2, shape);
            CHECK_OK(dt_tensor_load_npy(ms, path, s1, &y));
            if (y) check_loaded(y, 1, s1, "loaded from a name with ':' (self)");
            dt_tensor_destroy(y);
            dt_tensor_destroy(x);
            CHECK(remove(path) == 0, "%s is not where it was saved (self)", path);
        }
        dt_mesh_destroy(ms);
        dt_comm_destroy(self);
        CHECK(rmdir(dir) == 0, "%s not empty", dir);
    }
    barrier();
}

static void test_round_trips(void)
{
    static const int64_t shapes[][3] = { { 11, 6, 1 }, { 0, 5, 1 }, { 3, 4, 5 }, { 1, 1, 1 }, { 7, 1, 1 }, { 1, 1, 1 } };
    static const int nds[] = { 2, 2, 3, 0, 1, 1 };
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, s, ti, rot = 0;
    dtt_mesh m1, m2;
    int one[1];
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m1, g_comm, 1, one)) return;
    nf = dtt_factorizations(dtt_np, 2, fac, 64);
    f = nf / 2; /* a middle factorisation: 2x2 at 4 ranks, 1x3 or 3x1 at 3 */
    if (!dtt_mesh_open(&m2, g_comm, 2, &fac[f * DT_MAX_MESH_DIMS])) { dtt_mesh_close(&m1); return; }
    for (s = 0; s < (int)(sizeof nds / sizeof nds[0]); s++) {
        int nd = nds[s];
        for (ti = 0; ti < NTYPES; ti++) {
            dt_placement pa[DT_MAX_MESH_DIMS], pb[DT_MAX_MESH_DIMS], pc[DT_MAX_MESH_DIMS];
            dt_dtype t = k_types[ti];
            memset(pa, 0, sizeof pa);
            memset(pb, 0, sizeof pb);
            memset(pc, 0, sizeof pc);
            rot++;
            /* [S0, S(last)] on 2-D -> [S(last)] (or R) on 1-D */
            if (nd > 0) { pa[0] = dt_shard(0); pa[1] = dt_shard(nd - 1); pb[0] = dt_shard(nd - 1); }
            round_trip(&m2, pa, &m1, pb, t, nd, shapes[s], (ti == 0 && s < 3) || s == 2 || s == 3);
            /* [S0] on 1-D -> [R, S0] (replicated writers / readers) and [S(last), S(last)] */
            memset(pa, 0, sizeof pa);
            memset(pb, 0, sizeof pb);
            if (nd > 0) {
                pa[0] = dt_shard(0);
                pb[1] = dt_shard(0);
                pc[0] = dt_shard(nd - 1);
                pc[1] = dt_shard(nd - 1);
            }
            round_trip(&m1, pa, &m2, rot % 2 ? pb : pc, t, nd, shapes[s], 0);
            /* replicated save on 2-D (one writer per element) -> Partial loads */
            memset(pa, 0, sizeof pa);
            memset(pb, 0, sizeof pb);
            pb[0] = t == DT_U8 ? dt_partial(DT_MAX) : dt_partial(DT_SUM);
            if (nd > 0) pb[1] = dt_shard(0);
            round_trip(&m2, pa, &m2, pb, t, nd, shapes[s], 0);
            /* Partial saves: the global value is written */
            memset(pa, 0, sizeof pa);
            memset(pb, 0, sizeof pb);
            pa[0] = t == DT_U8 ? dt_partial(DT_MAX) : dt_partial(DT_SUM);
            if (nd > 0) pa[1] = dt_shard(nd - 1);
            round_trip(&m2, pa, &m1, pb, t, nd, shapes[s], 0);
        }
    }
    dtt_mesh_close(&m2);
    dtt_mesh_close(&m1);
}

/* ---------------------------------------------------------------- non-MPI backend */

static void test_fallback(void)
{
    MPI_Comm dup;
    dt_comm *c, *self = NULL;
    dt_mesh *sm = NULL;
    dtt_mesh m, m1;
    int one[1], two[2], ti;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    c = dtt_p2p_comm(&dup);
    one[0] = dtt_np;
    two[0] = dtt_np >= 2 ? 2 : 1;
    two[1] = dtt_np / two[0];
    if (c && dtt_np % two[0] == 0 && dtt_mesh_open(&m, c, 2, two)) {
        if (dtt_mesh_open(&m1, g_comm, 1, one)) {
            for (ti = 0; ti < NTYPES; ti++) {
                static const int64_t sh[2] = { 5, 7 };
                dt_placement pa[DT_MAX_MESH_DIMS], pb[DT_MAX_MESH_DIMS];
                memset(pa, 0, sizeof pa);
                memset(pb, 0, sizeof pb);
                pa[0] = dt_shard(1);
                pa[1] = ti % 2 ? dt_shard(0) : dt_replicate();
                pb[0] = dt_shard(0);
                /* custom -> mpi, mpi -> custom, custom -> custom (Partial load) */
                round_trip(&m, pa, &m1, pb, k_types[ti], 2, sh, 0);
                round_trip(&m1, pb, &m, pa, k_types[ti], 2, sh, 0);
                pb[0] = dt_partial(k_types[ti] == DT_U8 ? DT_MIN : DT_SUM);
                pb[1] = dt_shard(1);
                round_trip(&m, pa, &m, pb, k_types[ti], 2, sh, 0);
            }
            dtt_mesh_close(&m1);
        }
        dtt_mesh_close(&m);
    }
    /* dt_comm_self: each rank saves its own file, loads it back */
    dtt_self_mesh(&self, &sm);
    if (sm) {
        char path[512], name[64];
        static const int64_t sh[2] = { 4, 3 };
        dt_placement pl[DT_MAX_MESH_DIMS];
        dt_tensor *x, *y = NULL;
        memset(pl, 0, sizeof pl);
        snprintf(name, sizeof name, "self%d.npy", dtt_rank);
        path_of(path, sizeof path, name);
        dtt_ctx("self mesh");
        x = make(sm, 1, DT_F64, 2, sh, pl);
        CHECK_OK(dt_tensor_save_npy(x, path));
        CHECK_OK(dt_tensor_load_npy(sm, path, pl, &y));
        check_loaded(y, 1, pl, "self");
        CHECK(file_size(path) == 128 + 12 * 8, "self file size %ld", file_size(path));
        remove(path);
        dt_tensor_destroy(y);
        dt_tensor_destroy(x);
        dt_mesh_destroy(sm);
    }
    dt_comm_destroy(self);
    dt_comm_destroy(c);
    MPI_Comm_free(&dup);
    barrier();
}

/* ---------------------------------------------------------------- hand-made files */

static void write_file(const char *path, const void *bytes, size_t n)
{
    if (dtt_rank == 0) {
        FILE *f = fopen(path, "wb");
        CHECK(f != NULL, "cannot write %s", path);
        if (f) {
            CHECK(fwrite(bytes, 1, n, f) == n, "short write");
            fclose(f);
        }
    }
    barrier();
}

/* preamble (version major, header length) + header + data into buf; returns the length */
static size_t npy_bytes(unsigned char *buf, int major, const char *hdr, const void *data, size_t dbytes)
{
    size_t hl = strlen(hdr), pre = major == 1 ? 10 : 12;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    buf[8] = (unsigned char)(hl & 0xff);
    buf[9] = (unsigned char)(hl >> 8);
    if (pre == 12) { buf[10] = 0; buf[11] = 0; }
    memcpy(buf + pre, hdr, hl);
    if (dbytes) memcpy(buf + pre + hl, data, dbytes);
    return pre + hl + dbytes;
}

static void test_reference_files(void)
{
    static unsigned char buf[4096];
    char path[512];
    double v[6];
    int64_t sh[2] = { 2, 3 }, lo[2] = { 0, 0 };
    dt_placement pl[DT_MAX_MESH_DIMS];
    dtt_mesh m;
    int one[1], i;
    size_t n;
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    memset(pl, 0, sizeof pl);
    pl[0] = dt_shard(1);
    path_of(path, sizeof path, "ref.npy");
    dtt_fill_box(DT_F64, 2, sh, sh, lo, v);
    for (i = 0; i < 2; i++) {
        dt_tensor *y = NULL;
        /* keys in another order, double quotes, odd spacing, no padding; then format 2.0 */
        n = npy_bytes(buf, i ? 2 : 1, i ? "{'descr':'<f8','fortran_order':False,'shape':(2,3)}\n"
                                        : "{ \"shape\" : ( 2 , 3 , ) , \"descr\": \"<f8\", \"fortran_order\": False }",
                      v, sizeof v);
        write_file(path, buf, n);
        dtt_ctx("reference file %d", i);
        CHECK_OK(dt_tensor_load_npy(m.mesh, path, pl, &y));
        check_loaded(y, 1, pl, "reference");
        dt_tensor_destroy(y);
    }
    /* u8, 0-d i32 */
    {
        unsigned char u[5] = { 1, 2, 3, 250, 7 };
        int32_t s0 = -123456;
        dt_tensor *y = NULL;
        dt_placement rep[DT_MAX_MESH_DIMS];
        memset(rep, 0, sizeof rep);
        n = npy_bytes(buf, 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }      \n", u, 5);
        write_file(path, buf, n);
        CHECK_OK(dt_tensor_load_npy(m.mesh, path, rep, &y));
        if (y) {
            unsigned char got[5];
            CHECK_OK(dt_tensor_gather(y, got));
            CHECK(memcmp(got, u, 5) == 0, "u8 reference differs");
        }
        dt_tensor_destroy(y);
        y = NULL;
        n = npy_bytes(buf, 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (), }\n", &s0, 4);
        write_file(path, buf, n);
        CHECK_OK(dt_tensor_load_npy(m.mesh, path, rep, &y));
        if (y) {
            CHECK(dt_tensor_get_desc(y)->ndim == 0, "0-d expected");
            CHECK(*(int32_t *)dt_tensor_data(y) == s0, "0-d value %d", *(int32_t *)dt_tensor_data(y));
        }
        dt_tensor_destroy(y);
    }
    remove(path);
    dtt_mesh_close(&m);
    barrier();
}

/* ---------------------------------------------------------------- malformed files */

static void bad_file(const dtt_mesh *m, const char *what, const unsigned char *bytes, size_t n, const char *needle)
{
    char path[512];
    dt_tensor *y = NULL;
    dt_placement pl[DT_MAX_MESH_DIMS];
    memset(pl, 0, sizeof pl);
    path_of(path, sizeof path, "bad.npy");
    write_file(path, bytes, n);
    dtt_ctx("malformed: %s", what);
    CHECK_ST(dt_tensor_load_npy(m->mesh, path, pl, &y), DT_ERR_IO);
    CHECK(y == NULL, "*out was set");
    CHECK_ERRMSG("dt_tensor_load_npy");
    CHECK(strstr(dt_last_error(), needle) != NULL, "message \"%s\" should mention \"%s\"", dt_last_error(), needle);
    barrier();
}

static void test_malformed(void)
{
    static unsigned char buf[4096];
    static const double v[6] = { 1, 2, 3, 4, 5, 6 };
    dtt_mesh m;
    int one[1];
    size_t n;
    char path[512];
    dt_tensor *y = NULL;
    dt_placement pl[DT_MAX_MESH_DIMS];
    const char *ok = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }\n";
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    n = npy_bytes(buf, 1, ok, v, sizeof v);
    buf[1] = 'X';
    bad_file(&m, "bad magic", buf, n, "magic");
    n = npy_bytes(buf, 1, ok, v, sizeof v);
    buf[6] = 9;
    bad_file(&m, "version 9.0", buf, n, "version");
    bad_file(&m, "truncated data", buf, npy_bytes(buf, 1, ok, v, sizeof v) - 5, "bytes");
    n = npy_bytes(buf, 1, ok, v, sizeof v);
    buf[n] = 0;
    bad_file(&m, "trailing bytes", buf, n + 1, "bytes");
    bad_file(&m, "truncated header", buf, 30, "truncated");
    bad_file(&m, "5 bytes", buf, 5, "magic");
    bad_file(&m, "empty file", buf, 0, "magic");
    bad_file(&m, "fortran order",
             buf, npy_bytes(buf, 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }\n", v, sizeof v),
             "fortran_order");
    bad_file(&m, "big-endian", buf,
             npy_bytes(buf, 1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2, 3), }\n", v, sizeof v), "descr");
    bad_file(&m, "big-endian complex", buf, /* (little-endian '<c8'/'<c16' are read: tests/test_complex.c) */
             npy_bytes(buf, 1, "{'descr': '>c16', 'fortran_order': False, 'shape': (2, 3), }\n", v, sizeof v), "descr");
    bad_file(&m, "structured", buf,
             npy_bytes(buf, 1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2, 3), }\n", v,
                       sizeof v), "descr");
    bad_file(&m, "garbage dict", buf, npy_bytes(buf, 1, "{'descr' '<f8' garbage\n", v, sizeof v), "malformed");
    bad_file(&m, "not a dict", buf, npy_bytes(buf, 1, "hello\n", v, sizeof v), "dict");
    bad_file(&m, "unclosed", buf, npy_bytes(buf, 1, "{'descr': '<f8', 'fortran_order': False\n", v, sizeof v),
             "dict");
    bad_file(&m, "missing shape", buf, npy_bytes(buf, 1, "{'descr': '<f8', 'fortran_order': False}\n", v, sizeof v),
             "shape");
    bad_file(&m, "extra key", buf,
             npy_bytes(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (6,), 'x': 1}\n", v, sizeof v),
             "'x'");
    bad_file(&m, "duplicate key", buf,
             npy_bytes(buf, 1, "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (6,)}\n", v,
                       sizeof v), "twice");
    bad_file(&m, "shape not a tuple", buf,
             npy_bytes(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (6)}\n", v, sizeof v), "tuple");
    bad_file(&m, "negative dim", buf,
             npy_bytes(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (-6,)}\n", v, sizeof v),
             "shape[0]");
    bad_file(&m, "9 dims", buf,
             npy_bytes(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,6)}\n", v,
                       sizeof v), "DT_MAX_DIMS");
    bad_file(&m, "huge shape", buf,
             npy_bytes(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999, 99999999999)}\n", v,
                       sizeof v), "overflows");
    bad_file(&m, "empty but huge", buf, /* no data, but (0 counted as 1) 2^62 f64s overflow: the size rule */
             npy_bytes(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4611686018427387904)}\n", v,
                       0), "overflows");
    bad_file(&m, "int64 overflow", buf,
             npy_bytes(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,)}\n", v,
                       sizeof v), "overflows int64");
    bad_file(&m, "garbage after", buf,
             npy_bytes(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (6,)} x\n", v, sizeof v),
             "garbage");
    /* missing file */
    memset(pl, 0, sizeof pl);
    path_of(path, sizeof path, "no_such_file.npy");
    dtt_ctx("missing file");
    CHECK_ST(dt_tensor_load_npy(m.mesh, path, pl, &y), DT_ERR_IO);
    CHECK(y == NULL && strstr(dt_last_error(), "no_such_file") != NULL, "message %s", dt_last_error());
    path_of(path, sizeof path, "bad.npy");
    remove(path);
    dtt_mesh_close(&m);
    barrier();
}

/* the parser on its own: pure, any bytes */
static void test_parser(void)
{
    dt__npy_info info;
    static unsigned char buf[256];
    size_t n, k;
    dtt_ctx("parser");
    n = npy_bytes(buf, 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (3L, 4L), }\n", NULL, 0);
    CHECK_OK(dt__npy_parse_header((const char *)buf, n, &info));
    CHECK(info.dtype == DT_I64 && info.ndim == 2 && info.shape[0] == 3 && info.shape[1] == 4 &&
          info.data_offset == n && info.data_bytes == 96, "parsed fields wrong");
    for (k = 0; k < n; k++) /* every prefix: an error, never a crash */
        CHECK_ST(dt__npy_parse_header((const char *)buf, k, &info), DT_ERR_IO);
    CHECK_ST(dt__npy_parse_header(NULL, 0, &info), DT_ERR_ARG);
}

/* ---------------------------------------------------------------- arguments, *out, crash safety */

static void test_args_and_safety(void)
{
    char path[512], sub[512], tgt[512];
    dtt_mesh m;
    int one[1];
    int64_t sh[2] = { 6, 5 };
    dt_placement pl[DT_MAX_MESH_DIMS], pr[DT_MAX_MESH_DIMS];
    dt_tensor *x, *y = NULL, *bf = NULL, *keep;
    dt_tensor_desc d;
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    memset(pl, 0, sizeof pl);
    memset(pr, 0, sizeof pr);
    pl[0] = dt_shard(0);
    path_of(path, sizeof path, "args.npy");
    x = make(m.mesh, 1, DT_I32, 2, sh, pl);
    dtt_ctx("arguments");
    CHECK_ST(dt_tensor_save_npy(NULL, path), DT_ERR_ARG);
    CHECK_ERRMSG("dt_tensor_save_npy");
    CHECK_ST(dt_tensor_save_npy(x, NULL), DT_ERR_ARG);
    CHECK_ST(dt_tensor_save_npy(x, ""), DT_ERR_ARG);
    CHECK_OK(dt_tensor_save_npy(x, path));
    CHECK_ST(dt_tensor_load_npy(NULL, path, pl, &y), DT_ERR_ARG);
    CHECK_ST(dt_tensor_load_npy(m.mesh, NULL, pl, &y), DT_ERR_ARG);
    CHECK_ST(dt_tensor_load_npy(m.mesh, path, NULL, &y), DT_ERR_ARG);
    CHECK_ST(dt_tensor_load_npy(m.mesh, path, pl, NULL), DT_ERR_ARG);
    CHECK(y == NULL, "*out set on error");
    pr[0] = dt_shard(2); /* the file has 2 dims */
    CHECK_ST(dt_tensor_load_npy(m.mesh, path, pr, &y), DT_ERR_PLACEMENT);
    pr[0] = dt_replicate();
    /* *out reuse: the right spec is refilled, a wrong one refused and untouched */
    dtt_ctx("*out reuse");
    memset(&d, 0, sizeof d);
    d.dtype = DT_I32;
    d.ndim = 2;
    d.shape[0] = 6;
    d.shape[1] = 5;
    d.placements[0] = dt_shard(0);
    CHECK_OK(dt_tensor_zeros(m.mesh, &d, &y));
    keep = y;
    CHECK_OK(dt_tensor_load_npy(m.mesh, path, pl, &y));
    CHECK(y == keep, "*out replaced");
    check_loaded(y, 1, pl, "reused");
    dt_tensor_destroy(y);
    d.placements[0] = dt_replicate();
    y = NULL;
    CHECK_OK(dt_tensor_zeros(m.mesh, &d, &y));
    keep = y;
    CHECK_ST(dt_tensor_load_npy(m.mesh, path, pl, &y), DT_ERR_PLACEMENT);
    CHECK(y == keep && dt_tensor_data(y) && ((int32_t *)dt_tensor_data(y))[0] == 0, "wrong *out touched");
    dt_tensor_destroy(y);
    y = NULL;
    /* BF16: refused, nothing written, the existing target unchanged */
    dtt_ctx("bf16");
    d.dtype = DT_BF16;
    CHECK_OK(dt_tensor_zeros(m.mesh, &d, &bf));
    CHECK_ST(dt_tensor_save_npy(bf, path), DT_ERR_UNSUPPORTED);
    CHECK_ERRMSG("dt_tensor_save_npy");
    CHECK_OK(dt_tensor_load_npy(m.mesh, path, pl, &y));
    check_loaded(y, 1, pl, "after refused bf16 save");
    dt_tensor_destroy(y);
    y = NULL;
    dt_tensor_destroy(bf);
    /* a missing directory: DT_ERR_IO, no file anywhere */
    dtt_ctx("missing directory");
    path_of(sub, sizeof sub, "no_such_dir/x.npy");
    CHECK_ST(dt_tensor_save_npy(x, sub), DT_ERR_IO);
    CHECK_ERRMSG("dt_tensor_save_npy");
    barrier();
    if (dtt_rank == 0) CHECK(count_tmp() == 0, "tmp left after failed save");
    /* the final rename fails (the target is a directory): DT_ERR_IO on all
       ranks, the temporary removed, the directory as it was */
    dtt_ctx("rename fails");
    path_of(tgt, sizeof tgt, "target_dir.npy");
    if (dtt_rank == 0) CHECK(mkdir(tgt, 0755) == 0, "mkdir %s", tgt);
    barrier();
    CHECK_ST(dt_tensor_save_npy(x, tgt), DT_ERR_IO);
    CHECK(strstr(dt_last_error(), "renam") != NULL, "message %s", dt_last_error());
    barrier();
    if (dtt_rank == 0) {
        struct stat sb;
        CHECK(count_tmp() == 0, "tmp left after a failed rename");
        CHECK(stat(tgt, &sb) == 0 && S_ISDIR(sb.st_mode), "target directory changed");
        rmdir(tgt);
    }
    /* overwrite an existing file: atomically replaced, new contents */
    dtt_ctx("overwrite");
    {
        dt_tensor *z;
        int64_t sh2[1] = { 9 };
        z = make(m.mesh, 1, DT_F32, 1, sh2, pl);
        CHECK_OK(dt_tensor_save_npy(z, path));
        CHECK_OK(dt_tensor_load_npy(m.mesh, path, pr, &y));
        CHECK(y && dt_tensor_get_desc(y)->dtype == DT_F32 && dt_tensor_get_desc(y)->shape[0] == 9, "not replaced");
        check_loaded(y, 1, pr, "overwritten");
        dt_tensor_destroy(y);
        dt_tensor_destroy(z);
    }
    barrier();
    if (dtt_rank == 0) remove(path);
    dt_tensor_destroy(x);
    dtt_mesh_close(&m);
    barrier();
}

/* ---------------------------------------------------------------- RNG state files */

/* the gathered F64 values of a fresh dt_tensor_rand [n] sharded on m */
static void draw(dt_mesh *m, int64_t n, double *full)
{
    dt_tensor_desc d;
    dt_tensor *x = NULL;
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = 1;
    d.shape[0] = n;
    d.placements[0] = dt_shard(0);
    CHECK_OK(dt_tensor_rand(m, &d, &x));
    CHECK_OK(dt_tensor_gather(x, full));
    dt_tensor_destroy(x);
}

static void bad_state(dt_mesh *m, const char *what, const char *text, size_t n, const char *needle)
{
    char path[512];
    uint64_t s0, o0, s1, o1;
    path_of(path, sizeof path, "bad_rng.json");
    write_file(path, text, n);
    dtt_ctx("rng state malformed: %s", what);
    CHECK_OK(dt_rng_get_state(m, &s0, &o0));
    CHECK_ST(dt_rng_load_state(m, path), DT_ERR_IO);
    CHECK_ERRMSG("dt_rng_load_state");
    CHECK(strstr(dt_last_error(), "bad_rng.json") != NULL, "message \"%s\" should name the file", dt_last_error());
    CHECK(strstr(dt_last_error(), needle) != NULL, "message \"%s\" should mention \"%s\"", dt_last_error(), needle);
    CHECK_OK(dt_rng_get_state(m, &s1, &o1));
    CHECK(s0 == s1 && o0 == o1, "state changed by a failed load");
    barrier();
    if (dtt_rank == 0) remove(path);
}

static void good_state(dt_mesh *m, const char *text, uint64_t seed, uint64_t offset)
{
    char path[512];
    uint64_t s, o;
    path_of(path, sizeof path, "ok_rng.json");
    write_file(path, text, strlen(text));
    dtt_ctx("rng state file %s", text);
    CHECK_OK(dt_rng_load_state(m, path));
    CHECK_OK(dt_rng_get_state(m, &s, &o));
    CHECK(s == seed && o == offset, "loaded %llu %llu", (unsigned long long)s, (unsigned long long)o);
    barrier();
    if (dtt_rank == 0) remove(path);
}

static void test_rng_state(void)
{
    enum { N = 37 };
    char path[512], sub[512], tgt[512];
    double a[N], b[N];
    uint64_t s, o, s2, o2;
    dtt_mesh m;
    int one[1];
    one[0] = dtt_np;
    if (!dtt_mesh_open(&m, g_comm, 1, one)) return;
    path_of(path, sizeof path, "rng.json");
    dtt_ctx("rng state round trip");
    CHECK_OK(dt_manual_seed(m.mesh, 987654321987ull));
    draw(m.mesh, N, a); /* move the offset off 0 */
    CHECK_OK(dt_rng_get_state(m.mesh, &s, &o));
    CHECK_OK(dt_rng_save_state(m.mesh, path));
    barrier();
    if (dtt_rank == 0) { /* the exact text, and no temporary left */
        char want[128], got[256];
        FILE *f = fopen(path, "rb");
        size_t k = 0;
        snprintf(want, sizeof want, "{\"generator\": \"philox4x32-10\", \"seed\": %llu, \"offset\": %llu}\n",
                 (unsigned long long)s, (unsigned long long)o);
        CHECK(f != NULL, "no %s", path);
        if (f) { k = fread(got, 1, sizeof got - 1, f); fclose(f); }
        got[k] = 0;
        CHECK(strcmp(got, want) == 0, "file is \"%s\", want \"%s\"", got, want);
        CHECK(count_tmp() == 0, "tmp left after rng save");
    }
    draw(m.mesh, N, a);
    draw(m.mesh, 5, b); /* further draws move the state on */
    CHECK_OK(dt_rng_load_state(m.mesh, path));
    CHECK_OK(dt_rng_get_state(m.mesh, &s2, &o2));
    CHECK(s2 == s && o2 == o, "state after load");
    draw(m.mesh, N, b);
    CHECK(memcmp(a, b, sizeof a) == 0, "draws after load differ from draws after save");
    /* Python's json reads it */
    if (g_numpy && dtt_rank == 0) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "%s -c 'import json,sys; d=json.load(open(sys.argv[1])); "
                 "sys.exit(0 if (d[\"seed\"], d[\"offset\"]) == (%llu, %llu) else 1)' %s", g_python,
                 (unsigned long long)s, (unsigned long long)o, path);
        CHECK(system(cmd) == 0, "python json.load of %s", path);
    }
    /* files written by hand: other key order, no spaces, extremes */
    good_state(m.mesh, "{\"offset\":5,\"seed\":7}", 7, 5);
    good_state(m.mesh, " {\n \"seed\" : 0 , \"offset\" : 18446744073709551615 ,\n \"generator\":\"philox4x32-10\" }\n\n",
               0, UINT64_MAX);
    /* malformed: DT_ERR_IO naming the file and the reason, state unchanged */
    CHECK_OK(dt_rng_load_state(m.mesh, path));
    {
        static char big[DT__RNG_FILE_MAX + 64];
        const char *tail = "{\"seed\": 1, \"offset\": 2}";
        memset(big, ' ', sizeof big);
        memcpy(big + sizeof big - strlen(tail), tail, strlen(tail));
        bad_state(m.mesh, "empty", "", 0, "empty");
        bad_state(m.mesh, "truncated", "{\"seed\": 1, \"offset\": 2", 23, "truncated");
        bad_state(m.mesh, "truncated number", "{\"seed\": 1, \"offset\": ", 22, "integer");
        bad_state(m.mesh, "no offset", "{\"seed\": 1}", 11, "no \"offset\"");
        bad_state(m.mesh, "no seed", "{\"offset\": 1}", 13, "no \"seed\"");
        bad_state(m.mesh, "overflow", "{\"seed\": 1, \"offset\": 18446744073709551616}", 43, "overflows");
        bad_state(m.mesh, "negative", "{\"seed\": -1, \"offset\": 0}", 25, "integer");
        bad_state(m.mesh, "float", "{\"seed\": 1.5, \"offset\": 0}", 26, "integer");
        bad_state(m.mesh, "leading zero", "{\"seed\": 01, \"offset\": 0}", 25, "leading zero");
        bad_state(m.mesh, "string value", "{\"seed\": \"1\", \"offset\": 0}", 26, "integer");
        bad_state(m.mesh, "unknown key", "{\"seed\": 1, \"offset\": 2, \"x\": 3}", 32, "\"x\"");
        bad_state(m.mesh, "repeated key", "{\"seed\": 1, \"seed\": 2, \"offset\": 2}", 35, "twice");
        bad_state(m.mesh, "other generator", "{\"generator\": \"mt19937\", \"seed\": 1, \"offset\": 2}", 48,
                  "generator");
        bad_state(m.mesh, "garbage after", "{\"seed\": 1, \"offset\": 2} x", 27, "garbage");
        bad_state(m.mesh, "trailing comma", "{\"seed\": 1, \"offset\": 2,}", 25, "trailing");
        bad_state(m.mesh, "single quotes", "{'seed': 1, 'offset': 2}", 24, "double-quoted");
        bad_state(m.mesh, "not an object", "[1, 2]", 6, "not a JSON object");
        bad_state(m.mesh, "npy file", "\x93NUMPY\x01\x00", 8, "not a JSON object");
        bad_state(m.mesh, "too long", big, sizeof big, "longer than");
    }
    dtt_ctx("rng state missing / unwritable");
    path_of(sub, sizeof sub, "no_such_dir/rng.json");
    CHECK_OK(dt_rng_get_state(m.mesh, &s, &o));
    CHECK_ST(dt_rng_load_state(m.mesh, sub), DT_ERR_IO);
    CHECK_ERRMSG("dt_rng_load_state");
    CHECK(strstr(dt_last_error(), "no_such_dir") != NULL, "message %s", dt_last_error());
    CHECK_ST(dt_rng_save_state(m.mesh, sub), DT_ERR_IO);
    CHECK_ERRMSG("dt_rng_save_state");
    CHECK_OK(dt_rng_get_state(m.mesh, &s2, &o2));
    CHECK(s == s2 && o == o2, "state changed by a failed load");
    path_of(tgt, sizeof tgt, "rng_dir.json");
    if (dtt_rank == 0) CHECK(mkdir(tgt, 0755) == 0, "mkdir %s", tgt);
    barrier();
    CHECK_ST(dt_rng_save_state(m.mesh, tgt), DT_ERR_IO);
    CHECK(strstr(dt_last_error(), "renam") != NULL, "message %s", dt_last_error());
    CHECK_ST(dt_rng_load_state(m.mesh, tgt), DT_ERR_IO); /* a directory */
    barrier();
    if (dtt_rank == 0) {
        CHECK(count_tmp() == 0, "tmp left after a failed rng save");
        rmdir(tgt);
    }
    CHECK_ST(dt_rng_save_state(NULL, path), DT_ERR_ARG);
    CHECK_ST(dt_rng_save_state(m.mesh, NULL), DT_ERR_ARG);
    CHECK_ST(dt_rng_save_state(m.mesh, ""), DT_ERR_ARG);
    CHECK_ST(dt_rng_load_state(NULL, path), DT_ERR_ARG);
    CHECK_ST(dt_rng_load_state(m.mesh, NULL), DT_ERR_ARG);
    barrier();
    if (dtt_rank == 0) remove(path);
    dtt_mesh_close(&m);
    barrier();
}

int main(int argc, char **argv)
{
    dtt_init(&argc, &argv, "io");
    {
        const char *base = getenv("DT_TEST_TMPDIR");
        unsigned long id = (unsigned long)getpid();
        MPI_Bcast(&id, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
        snprintf(g_dir, sizeof g_dir, "%s/dt_test_io.%lu", base && base[0] ? base : "/tmp", id);
        if (dtt_rank == 0) CHECK(mkdir(g_dir, 0755) == 0, "cannot make %s", g_dir);
        /* the first Python that has numpy: PATH's (maybe a pyenv one), then Debian's python3-numpy */
        if (dtt_rank == 0) {
            static const char *const pys[2] = { "python3", "/usr/bin/python3" };
            char probe[128];
            int k;
            for (k = 0; k < 2 && !g_numpy; k++) {
                snprintf(probe, sizeof probe, "%s -c 'import numpy' >/dev/null 2>&1", pys[k]);
                if (system(probe) == 0) { g_numpy = 1; g_python = pys[k]; }
            }
        }
        MPI_Bcast(&g_numpy, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (dtt_rank == 0 && !g_numpy) fprintf(stderr, "test_io: numpy not importable, numpy.load check skipped\n");
        barrier();
    }
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &g_comm));
    if (g_comm) {
        test_parser();
        test_round_trips();
        test_colon_paths();
        test_fallback();
        test_reference_files();
        test_malformed();
        test_args_and_safety();
        test_rng_state();
        dt_comm_destroy(g_comm);
    }
    barrier();
    if (dtt_rank == 0) {
        char p[512];
        path_of(p, sizeof p, "rt.npy");
        remove(p);
        CHECK(rmdir(g_dir) == 0, "%s not empty at the end", g_dir);
    }
    return dtt_finish();
}
