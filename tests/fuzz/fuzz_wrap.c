/* tests/fuzz/fuzz_wrap.c -- libFuzzer target: wrapping the program's own
   storage (issue 37: the calls 0.5 added, with numbers a hostile or
   careless caller gives).

   Mode 1, dt_tensor_desc_from_scalapack: a descriptor and a BLACS grid
   from a table of edge values (0, 1, -1, -2, INT_MAX and its neighbours,
   INT_MIN, small numbers). It must return a status, never overflow
   (UBSan), and leave *out untouched when it refuses; what it accepts must
   be NUMROC, computed here in int64 from the descriptor (the sources
   included), a shape whose bytes fit in int64, and a local_alloc_bytes of
   LLD x LOCc x 8 exactly where LLD pads. An accepted descriptor whose
   local array is small is then wrapped (dt_tensor_from_local, DT_BORROW)
   on a simulated rank of the grid's mesh when it has at most 64 ranks:
   the wrap must succeed, with that local shape.

   Mode 2, dt_tensor_from_local's storage fields: a 1-D or 2-D simulated
   mesh, a small global shape, placements, and local_shape, local_ghost,
   local_strides, local_alloc / local_alloc_bytes each right, perturbed or
   wild (negative, INT64_MAX, offsets before or past the buffer), over a
   real buffer of known size. It must return a status, never crash or
   overflow; a wrap it accepts must lie inside the allocation it was told
   and so inside the real buffer: every element it addresses (shape and
   strides read back through the accessors) is read here, under ASan. */
#define _GNU_SOURCE
#ifndef DTENSOR_NO_MPI
#define DTENSOR_NO_MPI
#endif
#define DTENSOR_IMPLEMENTATION
#include "../../dtensor.h"
#include "fuzz_sim.h"
#include <limits.h>

static int fz_int(fz *f) {
    static const int edge[] = { 0, 1, 2, 3, -1, -2, INT_MAX, INT_MAX - 1, INT_MAX - 2, INT_MAX / 2 + 1, INT_MIN,
                                INT_MIN + 1, 7, 64, 1000, 46341 };
    unsigned k = fz_u8(f);
    if (k < 128) return (int)(k % 13);
    if (k < 192) return (int)fz_u16(f) - 32768 / 4;
    return edge[k % (sizeof edge / sizeof edge[0])];
}

static int64_t fz_i64(fz *f) {
    static const int64_t edge[] = { 0, 1, -1, 2, INT64_MAX, INT64_MAX - 1, INT64_MIN, INT64_MAX / 8 + 1,
                                    (int64_t)1 << 32, (int64_t)1 << 62, 3, 5 };
    unsigned k = fz_u8(f);
    if (k < 160) return (int64_t)(k % 9);
    return edge[k % (sizeof edge / sizeof edge[0])];
}

/* NUMROC in int64: the count process iproc of nprocs holds of n in blocks
   of nb dealt from process isrc */
static int64_t numroc(int64_t n, int64_t nb, int64_t iproc, int64_t isrc, int64_t nprocs) {
    int64_t mydist = ((iproc - isrc) % nprocs + nprocs) % nprocs, nblocks = n / nb;
    int64_t num = nblocks / nprocs * nb, extra = nblocks % nprocs;
    if (mydist < extra) num += nb;
    else if (mydist == extra) num += n % nb;
    return num;
}

static void wrap_scalapack(int desc[9], const dt_scalapack_grid *g, const int64_t *ls, const int64_t *lst,
                           const dt_tensor_desc *d) {
    int n = g->nprow * g->npcol, r, mine;
    sim_world w;
    dt_comm *comm = NULL;
    dt_mesh *mesh = NULL;
    dt_mesh_desc md;
    dt_tensor_desc wd = *d;
    dt_tensor *t = NULL;
    int64_t got[2];
    size_t elems = (size_t)(lst[0] > ls[1] ? lst[0] : ls[1]) * (size_t)(ls[0] ? ls[0] : 1);
    double *buf;
    dt_status st;
    (void)desc;
    if (g->myrow < 0 || elems > (1u << 16)) return;
    /* the mesh rank of (myrow, mycol): "R" row-major over {nprow, npcol}, "C" over {npcol, nprow} */
    r = (g->order[0] == 'C' || g->order[0] == 'c') ? g->mycol * g->nprow + g->myrow : g->myrow * g->npcol + g->mycol;
    memset(&md, 0, sizeof md);
    md.ndim = 2;
    md.shape[0] = (g->order[0] == 'C' || g->order[0] == 'c') ? g->npcol : g->nprow;
    md.shape[1] = (g->order[0] == 'C' || g->order[0] == 'c') ? g->nprow : g->npcol;
    if (sim_comm_make(&w, r, n, &comm)) return;
    sim_cur = &w;
    if (sim_mesh_make(&w, comm, &md, &mesh)) { dt_comm_destroy(comm); return; }
    buf = (double *)malloc((elems ? elems : 1) * sizeof *buf);
    mine = 1;
    if (buf) {
        if (wd.local_strides) wd.local_alloc = buf;
        st = dt_tensor_from_local(mesh, &wd, buf, DT_BORROW, &t);
        FZ_ASSERT(st == DT_OK, "from_local of an accepted ScaLAPACK desc {%d %d %d %d %d %d %d} grid %dx%d%c at (%d, "
                  "%d): %s", desc[2], desc[3], desc[4], desc[5], desc[6], desc[7], desc[8], g->nprow, g->npcol,
                  g->order[0], g->myrow, g->mycol, dt_last_error());
        dt_tensor_local_shape(t, got);
        FZ_ASSERT(got[0] == ls[0] && got[1] == ls[1], "local shape {%lld, %lld}, the desc said {%lld, %lld}",
                  (long long)got[0], (long long)got[1], (long long)ls[0], (long long)ls[1]);
        dt_tensor_destroy(t);
    }
    (void)mine;
    free(buf);
    dt_mesh_destroy(mesh);
    dt_comm_destroy(comm);
}

static void check_scalapack(fz *f) {
    int desc[9], k;
    dt_scalapack_grid g;
    dt_tensor_desc d, keep;
    int64_t ls[2] = { -5, -5 }, lst[2] = { -5, -5 };
    dt_status st;
    for (k = 0; k < 9; k++) desc[k] = fz_int(f);
    if (fz_u8(f) < 200) desc[0] = 1;
    memset(&g, 0, sizeof g);
    g.nprow = fz_int(f), g.npcol = fz_int(f);
    g.order[0] = "RCrcX"[fz_below(f, 5)];
    if (fz_u8(f) < 250) {
        if (g.nprow > 0 && g.npcol > 0) g.myrow = fz_below(f, g.nprow < 65535 ? g.nprow : 65535),
                                        g.mycol = fz_below(f, g.npcol < 65535 ? g.npcol : 65535);
        if (fz_u8(f) < 30) g.myrow = g.mycol = -1;
        if (g.nprow > 0 && fz_u8(f) < 20) g.myrow = g.nprow - 1;
    } else {
        g.myrow = fz_int(f), g.mycol = fz_int(f);
    }
    if (fz_u8(f) < 128 && g.nprow > 0 && desc[6] >= 0) desc[6] %= g.nprow;
    if (fz_u8(f) < 128 && g.npcol > 0 && desc[7] >= 0) desc[7] %= g.npcol;
    if (fz_u8(f) < 160 && g.myrow >= 0 && desc[4] > 0 && desc[2] >= 0 && g.nprow > 0 && desc[6] >= 0 &&
        desc[6] < g.nprow) { /* a right LLD now and then */
        int64_t locr = numroc(desc[2], desc[4], g.myrow, desc[6], g.nprow);
        int64_t lld = (locr > 1 ? locr : 1) + (fz_u8(f) < 200 ? 0 : fz_below(f, 4));
        desc[8] = lld > INT_MAX ? INT_MAX : (int)lld;
    }
    memset(&d, 0x5c, sizeof d);
    keep = d;
    st = dt_tensor_desc_from_scalapack(desc, &g, DT_F64, &d, ls, lst);
    if (st) {
        FZ_ASSERT(!memcmp(&d, &keep, sizeof d), "refused (%s) but *out changed", dt_status_string(st));
        FZ_ASSERT(strstr(dt_last_error(), "dt_tensor_desc_from_scalapack") != NULL, "message: %s", dt_last_error());
        return;
    }
    /* accepted: everything it promised */
    FZ_ASSERT(desc[0] == 1 && desc[2] >= 0 && desc[3] >= 0 && desc[4] > 0 && desc[5] > 0, "accepted a bad desc");
    FZ_ASSERT(g.nprow > 0 && g.npcol > 0 && desc[6] >= 0 && desc[6] < g.nprow && desc[7] >= 0 && desc[7] < g.npcol,
              "accepted a bad grid or source");
    FZ_ASSERT((g.myrow == -1 && g.mycol == -1) || (g.myrow >= 0 && g.myrow < g.nprow && g.mycol >= 0 &&
                                                  g.mycol < g.npcol), "accepted the position (%d, %d)", g.myrow,
              g.mycol);
    FZ_ASSERT(d.ndim == 2 && d.shape[0] == desc[3] && d.shape[1] == desc[2], "shape");
    FZ_ASSERT(d.shape[0] <= 1 || d.shape[1] <= 1 || d.shape[0] <= INT64_MAX / 8 / d.shape[1] ||
              (d.shape[0] == 0 || d.shape[1] == 0), "a shape of %lld x %lld f64 accepted", (long long)d.shape[0],
              (long long)d.shape[1]);
    if (g.myrow >= 0) {
        int64_t locr = numroc(desc[2], desc[4], g.myrow, desc[6], g.nprow);
        int64_t locc = numroc(desc[3], desc[5], g.mycol, desc[7], g.npcol);
        FZ_ASSERT(ls[0] == locc && ls[1] == locr, "local shape {%lld, %lld}, NUMROC gives {%lld, %lld}",
                  (long long)ls[0], (long long)ls[1], (long long)locc, (long long)locr);
        FZ_ASSERT(desc[8] >= 1 && desc[8] >= locr, "LLD %d accepted for LOCr %lld", desc[8], (long long)locr);
        if (d.local_strides) {
            FZ_ASSERT(locc > 0 && desc[8] > locr && (int64_t)desc[8] <= INT64_MAX / 8 / locc &&
                      d.local_alloc_bytes == (int64_t)desc[8] * locc * 8, "local_alloc_bytes %lld for LLD %d x LOCc %lld",
                      (long long)d.local_alloc_bytes, desc[8], (long long)locc);
        }
    } else {
        FZ_ASSERT(ls[0] == 0 && ls[1] == 0, "outside the grid: local shape {%lld, %lld}", (long long)ls[0],
                  (long long)ls[1]);
    }
    if (g.nprow <= 64 && g.npcol <= 64 && g.nprow * g.npcol <= 64) wrap_scalapack(desc, &g, ls, lst, &d);
}

/* ------------------------------------------------------------ mode 2 */

#define BUF_ELEMS 4096

static void check_wrap(fz *f) {
    sim_world w;
    dt_comm *comm = NULL;
    dt_mesh *mesh = NULL;
    dt_mesh_desc md;
    dt_tensor_desc d;
    dt_tensor *t = NULL, *sentinel = (dt_tensor *)(void *)&w;
    int64_t ls[2], gh[2], str[2], s[2], e[2], gs[2];
    int np, r, nd = 1 + fz_below(f, 2), k, mnd = 1 + fz_below(f, 2);
    double *buf;
    char *alloc;
    int64_t off, bytes;
    dt_status st;
    memset(&md, 0, sizeof md);
    md.ndim = mnd;
    md.shape[0] = 1 + fz_below(f, 4);
    if (mnd == 2) md.shape[1] = 1 + fz_below(f, 3);
    np = md.shape[0] * (mnd == 2 ? md.shape[1] : 1);
    r = fz_below(f, np);
    if (sim_comm_make(&w, r, np, &comm)) return;
    sim_cur = &w;
    if (sim_mesh_make(&w, comm, &md, &mesh)) { dt_comm_destroy(comm); return; }
    memset(&d, 0, sizeof d);
    d.dtype = fz_u8(f) & 1 ? DT_F64 : DT_F32;
    d.ndim = nd;
    for (k = 0; k < nd; k++) d.shape[k] = fz_below(f, 12);
    for (k = 0; k < mnd; k++) {
        unsigned c = fz_u8(f) % 4;
        d.placements[k] = c == 0 ? dt_replicate() : c == 1 ? dt_shard(fz_below(f, nd)) :
                          c == 2 ? dt_shard_balanced(fz_below(f, nd)) : dt_shard_cyclic(fz_below(f, nd), 1 + fz_below(f, 3));
    }
    {   /* the right local shape, then perhaps perturbed */
        dt_tensor *probe = NULL;
        if (dt_tensor_empty(mesh, &d, &probe)) goto out;
        dt_tensor_local_shape(probe, ls);
        dt_tensor_destroy(probe);
    }
    for (k = 0; k < nd; k++) {
        gh[k] = fz_u8(f) < 200 ? fz_below(f, 3) : fz_i64(f);
        if (fz_u8(f) > 240) ls[k] = fz_i64(f);
    }
    e[nd - 1] = 1;
    for (k = nd - 1; k >= 0; k--) { /* row-major over the storage (ghosts in), perhaps padded, perhaps wild */
        int64_t ext = ls[k] >= 0 && ls[k] < 64 && gh[k] >= 0 && gh[k] < 8 ? ls[k] + 2 * gh[k] : 1;
        str[k] = k == nd - 1 ? 1 : (str[k + 1] > 0 && str[k + 1] < 4096 ? str[k + 1] : 1) * (e[k + 1] > 0 ? e[k + 1] : 1) +
                                   (fz_u8(f) < 200 ? 0 : fz_below(f, 3));
        e[k] = ext;
        if (fz_u8(f) > 235) str[k] = fz_i64(f);
    }
    if (fz_u8(f) < 128) d.local_shape = ls;
    if (fz_u8(f) < 100) d.local_ghost = gh;
    if (fz_u8(f) < 100) d.local_strides = str;
    buf = (double *)malloc(BUF_ELEMS * sizeof *buf);
    if (!buf) goto out;
    alloc = (char *)buf;
    off = fz_u8(f) < 200 ? 0 : (int64_t)fz_below(f, 64) * 8;
    bytes = fz_u8(f) < 200 ? BUF_ELEMS * (int64_t)sizeof *buf - off : fz_i64(f);
    if (bytes > BUF_ELEMS * (int64_t)sizeof *buf - off) bytes = BUF_ELEMS * (int64_t)sizeof *buf - off; /* the truth */
    if (fz_u8(f) < 200) { d.local_alloc = alloc; d.local_alloc_bytes = bytes + off; }
    else if (fz_u8(f) < 128) { d.local_alloc = alloc + off; d.local_alloc_bytes = bytes; }
    t = sentinel;
    st = dt_tensor_from_local(mesh, &d, alloc + off, DT_BORROW, &t);
    if (st) {
        FZ_ASSERT(t == sentinel, "refused (%s) but *out changed", dt_status_string(st));
        FZ_ASSERT(strstr(dt_last_error(), "dt_tensor_from_local") != NULL, "message: %s", dt_last_error());
    } else if ((d.local_alloc && d.local_alloc_bytes) || d.local_ghost || d.local_strides) {
        /* told its allocation (a contiguous wrap: both fields, else it is not checked): read all it addresses */
        const char *p = (const char *)dt_tensor_data(t);
        size_t es = dt_dtype_size(d.dtype);
        int64_t i, j, n0, n1;
        volatile char sink = 0;
        dt_tensor_local_shape(t, gs);
        dt_tensor_local_strides(t, s);
        n0 = gs[0], n1 = nd == 2 ? gs[1] : 1;
        if (nd == 1) s[1] = 0;
        for (k = 0; k < nd && n0 * n1 > 0; k++) /* the accepted strides address inside int64 bytes (not empty) */
            FZ_ASSERT(gs[k] <= 1 || (s[k] >= 0 && s[k] <= INT64_MAX / (int64_t)es / (gs[k] - 1)),
                      "accepted dim %d: extent %lld, stride %lld (local_strides %s, ghost %s, local_shape %s)", k,
                      (long long)gs[k], (long long)s[k], d.local_strides ? "given" : "NULL",
                      d.local_ghost ? "given" : "NULL", d.local_shape ? "given" : "NULL");
        for (i = 0; i < n0 && i < 256; i++)
            for (j = 0; j < n1 && j < 256; j++) {
                const char *q = p + (i * s[0] + j * s[1]) * (int64_t)es;
                FZ_ASSERT(q >= (const char *)d.local_alloc && q + es <= (const char *)d.local_alloc +
                          d.local_alloc_bytes, "element (%lld, %lld) outside the allocation told", (long long)i,
                          (long long)j);
                sink ^= *q;
            }
        (void)sink;
        dt_tensor_destroy(t);
    } else {
        dt_tensor_destroy(t);
    }
    free(buf);
out:
    dt_mesh_destroy(mesh);
    dt_comm_destroy(comm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f;
    f.p = data; f.n = size; f.i = 0;
    fz_quiet();
    if (size == 0) return 0;
    if (fz_u8(&f) < 128) check_scalapack(&f);
    else check_wrap(&f);
    return 0;
}
