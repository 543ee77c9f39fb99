/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_halo_types.c -- halo faces moved as MPI derived datatypes
   (DTENSOR_HALO_TYPES, read by dt_tensor_set_halo) against packing.

   Every dtype (complex, half and 1-byte included) through 3-D halos with
   widths 1 to 3 (wider than some shards), PERIODIC / CONSTANT / NONE
   boundaries, corners on and off, on a 1-D mesh sharding the innermost
   dim (strided faces: the "column" faces the datatypes are for) or the
   outermost (contiguous faces), and on every 2-D mesh sharding dims 1 and
   2; uneven and empty shards at 3+ ranks. Each case runs with the
   datatypes on every rank (DTENSOR_HALO_TYPES=1: every strided face a
   datatype), with the choice mixed across ranks (rank % 3: 1, 0 = packing,
   16 = datatypes from 16 bytes: a datatype send meets a packed receive and
   v.v.), and with the build's default. Storage: the caller's ghosted array
   (in place) with ghost room equal to or one wider than the halo (the
   halo's cells strided inside a padded array), exchanged whole and
   split-phase (the interior overwritten between _begin and _end: the
   ghosts hold the values at _begin), and a contiguous tensor's own ghosted
   block (dt_tensor_ghosted_data). Values are byte patterns of the global
   index (every byte of every element distinct per index), so the check is
   bytewise for every dtype: interior = the pattern, ghost cells = the
   pattern at the (periodically wrapped) neighbour index, zero bytes past a
   CONSTANT edge (fill 0), untouched (poison) past a NONE edge and in room
   beyond the halo; star corners may stay untouched. */
#define _POSIX_C_SOURCE 200112L /* setenv */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

enum { C = DT_BOUNDARY_CONSTANT, P = DT_BOUNDARY_PERIODIC, N = DT_BOUNDARY_NONE };
static const unsigned char POISON = 0xEE;
static long ncases = 0;

/* byte b of the element at global index u */
static unsigned char pat(const int64_t *shape, const int64_t *u, size_t b, int salt)
{
    int64_t l = (u[0] * shape[1] + u[1]) * shape[2] + u[2];
    return (unsigned char)(l * 131 + (int64_t)b * 17 + 5 + salt * 59);
}

typedef struct gcase {
    dt_dtype t;
    size_t es;
    int64_t shape[3], ls[3], lo[3], room[3];
    dt_halo_desc hd;
} gcase;

/* the global index of cell i of an array of ls + 2 room; *out: dims outside the interior */
static void cell(const gcase *c, int64_t i, int64_t *u, int *out)
{
    int k;
    *out = 0;
    for (k = 2; k >= 0; k--) {
        int64_t gs = c->ls[k] + 2 * c->room[k];
        u[k] = c->lo[k] - c->room[k] + i % gs;
        i /= gs;
    }
    for (k = 0; k < 3; k++) *out += u[k] < c->lo[k] || u[k] >= c->lo[k] + c->ls[k];
}

static int64_t cells(const gcase *c)
{
    return (c->ls[0] + 2 * c->room[0]) * (c->ls[1] + 2 * c->room[1]) * (c->ls[2] + 2 * c->room[2]);
}

/* every cell of the array a (ghost room c->room); untouched: the byte an untouched ghost holds */
static void check_array(const gcase *c, const unsigned char *a, unsigned char untouched, int salt)
{
    int64_t i, n = cells(c), u[3], w[3];
    int bad = 0, out, k;
    size_t b;
    for (i = 0; i < n; i++) {
        int inhalo = 1, cfill = 0, none = 0, star = 0;
        unsigned char want[16];
        const unsigned char *got = a + (size_t)i * c->es;
        cell(c, i, u, &out);
        for (k = 0; k < 3; k++) {
            w[k] = u[k];
            if (u[k] < c->lo[k] - c->hd.width[k] || u[k] >= c->lo[k] + c->ls[k] + c->hd.width[k]) inhalo = 0;
            if (u[k] < 0 || u[k] >= c->shape[k]) {
                if (c->hd.boundary[k] == P) w[k] = (u[k] + c->shape[k]) % c->shape[k];
                else if (c->hd.boundary[k] == C) cfill = 1;
                else none = 1;
            }
        }
        for (b = 0; b < c->es; b++) {
            if (!out) want[b] = pat(c->shape, u, b, salt);
            else if (!inhalo) want[b] = untouched;
            else if (cfill) want[b] = 0;
            else if (none) want[b] = untouched;
            else want[b] = pat(c->shape, w, b, 0);
        }
        if (out > 1 && inhalo && !c->hd.corners) { /* star: a corner may stay untouched */
            star = 1;
            for (b = 0; b < c->es; b++) star &= got[b] == untouched;
        }
        if (!star && memcmp(got, want, c->es) && bad++ < 3)
            dtt_fail(__FILE__, __LINE__, "cell", "%s cell (%lld, %lld, %lld) (%s): byte 0 got %u want %u",
                     dtt_dtname(c->t), (long long)u[0], (long long)u[1], (long long)u[2],
                     !out ? "interior" : inhalo ? "halo" : "room", got[0], want[0]);
    }
}

static void fill_array(const gcase *c, unsigned char *a, int salt)
{
    int64_t i, n = cells(c), u[3];
    int out;
    size_t b;
    for (i = 0; i < n; i++) {
        cell(c, i, u, &out);
        for (b = 0; b < c->es; b++) a[(size_t)i * c->es + b] = out ? POISON : pat(c->shape, u, b, salt);
    }
}

/* the caller's ghosted array, exchanged in place: whole, then split-phase */
static void in_place(const dtt_mesh *m, gcase *c, const dt_placement *pl, int pad)
{
    dt_tensor_desc d = dtt_desc(c->t, 3, c->shape, m->nd, pl);
    dt_tensor *x = NULL;
    unsigned char *a;
    int64_t i, n, u[3];
    int k, out;
    size_t b;
    for (k = 0; k < 3; k++) c->room[k] = c->hd.width[k] + pad;
    n = cells(c);
    a = (unsigned char *)dtt_malloc((size_t)(n ? n : 1) * c->es);
    fill_array(c, a, 0);
    d.local_shape = c->ls;
    d.local_ghost = c->room;
    d.local_alloc = a;
    d.local_alloc_bytes = (int64_t)((size_t)(n ? n : 1) * c->es);
    CHECK_OK(dt_tensor_from_local(m->mesh, &d, a, DT_BORROW, &x));
    if (!x) { free(a); return; }
    CHECK_OK(dt_tensor_set_halo(x, &c->hd));
    CHECK_OK(dt_halo_exchange(x));
    check_array(c, a, POISON, 0);
    fill_array(c, a, 0);
    CHECK_OK(dt_halo_exchange_begin(x));
    for (i = 0; i < n; i++) { /* the interior may change after _begin */
        cell(c, i, u, &out);
        if (!out)
            for (b = 0; b < c->es; b++) a[(size_t)i * c->es + b] = pat(c->shape, u, b, 1);
    }
    CHECK_OK(dt_halo_exchange_end(x));
    check_array(c, a, POISON, 1);
    dt_tensor_destroy(x);
    free(a);
    ncases++;
}

/* a contiguous tensor: its own ghosted block */
static void copied(const dtt_mesh *m, gcase *c, const dt_placement *pl)
{
    dt_tensor_desc d = dtt_desc(c->t, 3, c->shape, m->nd, pl);
    dt_tensor *x = NULL;
    unsigned char *a;
    const unsigned char *g;
    int64_t n = c->ls[0] * c->ls[1] * c->ls[2], gsh[3], i, u[3];
    int k, out;
    size_t b;
    for (k = 0; k < 3; k++) c->room[k] = 0;
    a = (unsigned char *)dtt_malloc((size_t)(n ? n : 1) * c->es);
    for (i = 0; i < n; i++) {
        cell(c, i, u, &out);
        for (b = 0; b < c->es; b++) a[(size_t)i * c->es + b] = pat(c->shape, u, b, 0);
    }
    d.local_shape = c->ls;
    CHECK_OK(dt_tensor_from_local(m->mesh, &d, a, DT_COPY, &x));
    free(a);
    if (!x) return;
    CHECK_OK(dt_tensor_set_halo(x, &c->hd));
    CHECK_OK(dt_halo_exchange(x));
    g = (const unsigned char *)dt_tensor_ghosted_data(x, gsh);
    for (k = 0; k < 3; k++) c->room[k] = c->hd.width[k];
    if (g || cells(c) == 0) {
        if (g) check_array(c, g, 0, 0); /* the block starts zeroed */
    } else
        CHECK(0, "no ghosted block");
    dt_tensor_destroy(x);
    ncases++;
}

static dt_halo_desc hdesc(int64_t w0, int64_t w1, int64_t w2, int b0, int b1, int b2, int corners)
{
    dt_halo_desc h;
    memset(&h, 0, sizeof h);
    h.width[0] = w0; h.width[1] = w1; h.width[2] = w2;
    h.boundary[0] = b0; h.boundary[1] = b1; h.boundary[2] = b2;
    h.corners = corners;
    return h;
}

static const char *mode_name[3] = {"types everywhere", "mixed per rank", "default"};

static void set_mode(int mode)
{
    static const char *mixed[3] = {"1", "0", "16"};
    if (mode == 0) setenv("DTENSOR_HALO_TYPES", "1", 1);
    else if (mode == 1) setenv("DTENSOR_HALO_TYPES", mixed[dtt_rank % 3], 1);
    else unsetenv("DTENSOR_HALO_TYPES");
}

static void mesh_cases(const dtt_mesh *m, const dt_placement *pl)
{
    static const dt_dtype all[] = {DT_F32, DT_F64, DT_F16, DT_BF16, DT_I32, DT_I64, DT_U8, DT_C64, DT_C128};
    static const dt_dtype few[] = {DT_U8, DT_F16, DT_F64, DT_C128};
    dt_halo_desc hs[3];
    int nt = dtt_quick ? 4 : 9, ti, hi, mode;
    hs[0] = hdesc(1, 1, 1, P, P, P, 1);
    hs[1] = hdesc(1, 2, 3, C, P, N, 0);
    hs[2] = hdesc(2, 1, 2, N, C, P, 1);
    for (ti = 0; ti < nt; ti++)
        for (hi = 0; hi < 3; hi++)
            for (mode = 0; mode < 3; mode++) {
                gcase c;
                dt_tensor *e = NULL;
                dt_tensor_desc d;
                char p[96];
                memset(&c, 0, sizeof c);
                c.t = (dtt_quick ? few : all)[ti];
                c.es = dtt_size(c.t);
                c.shape[0] = 5; c.shape[1] = 7; c.shape[2] = 11;
                c.hd = hs[hi];
                d = dtt_desc(c.t, 3, c.shape, m->nd, pl);
                CHECK_OK(dt_tensor_empty(m->mesh, &d, &e));
                if (!e) continue;
                dt_tensor_local_shape(e, c.ls);
                dt_tensor_local_offset(e, c.lo);
                dt_tensor_destroy(e);
                dtt_pl_str(pl, m->nd, p, sizeof p);
                dtt_ctx("mesh %s %s, %s, halo %d, %s", m->name, p, dtt_dtname(c.t), hi, mode_name[mode]);
                set_mode(mode);
                in_place(m, &c, pl, 0);
                in_place(m, &c, pl, 1);
                copied(m, &c, pl);
                unsetenv("DTENSOR_HALO_TYPES");
            }
}

int main(int argc, char **argv)
{
    dt_comm *comm = NULL;
    dtt_mesh m;
    dt_placement pl[DT_MAX_MESH_DIMS];
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, one[1];
    dtt_init(&argc, &argv, "halo_types");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    if (comm) {
        memset(pl, 0, sizeof pl);
        one[0] = dtt_np;
        if (dtt_mesh_open(&m, comm, 1, one)) {
            pl[0] = dt_shard(2); /* strided faces */
            mesh_cases(&m, pl);
            pl[0] = dt_shard(0); /* contiguous faces */
            mesh_cases(&m, pl);
            dtt_mesh_close(&m);
        }
        nf = dtt_factorizations(dtt_np, 2, fac, 64);
        for (f = 0; f < nf; f++) {
            if (!dtt_mesh_open(&m, comm, 2, &fac[f * DT_MAX_MESH_DIMS])) continue;
            pl[0] = dt_shard(1);
            pl[1] = dt_shard(2);
            mesh_cases(&m, pl);
            dtt_mesh_close(&m);
        }
        dt_comm_destroy(comm);
    }
    if (dtt_rank == 0 && getenv("DT_TEST_VERBOSE")) fprintf(stderr, "test_halo_types: %ld cases\n", ncases);
    return dtt_finish();
}
