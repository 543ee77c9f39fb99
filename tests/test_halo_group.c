/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
   env:   DTENSOR_SHM=0 | DTENSOR_SHM=0 DTENSOR_HALO_TYPES=1 | DTENSOR_HALO_TYPES=1
*/
/* test_halo_group.c -- grouped halo exchanges (dt_halo_group_*) against the
   closed form, and against the members' own exchanges.

   Groups of fields of one mesh with different dtypes (F64, F32, I32),
   shapes and centrings (cells [nx, ny], x-faces [nx+1, ny], y-faces
   [nx, ny+1]) and halos (widths, per-side widths, CONSTANT / PERIODIC /
   NONE boundaries, corners on and off), some of them ghosted arrays
   wrapped in place (dt_tensor_from_local with local_ghost), on 1-D and 2-D
   meshes (every factorisation of the rank count), uneven and empty shards.
   Each member's value at global index g is f(g) + 1000 k (k: the member);
   after a grouped exchange -- whole, or split with every interior
   overwritten between _begin and _end -- every cell of every ghosted block
   is f at its (wrapped) global index, the fill, or the untouched sentinel,
   as test_halo.c checks a single tensor. Messages: the group moves the
   bytes of the members' own exchanges in one backend call (dt_comm_stats),
   and over a counting backend (start/wait over MPI) sends one message per
   neighbour where the members one by one send one each. Bad input: NULL
   and empty lists, a tensor without a halo, the same tensor twice, tensors
   of two meshes, an exchange in flight, ranks that disagree, a member's
   halo replaced or the member destroyed: an error on every rank, no ghost
   cell written. Fewer layers per call (dt_halo_group_exchange_layers):
   each member's ghosts up to that depth (its own halo's, where narrower)
   are f, those past it keep the sentinel; the bytes of the members' own
   layered exchanges in one call, one message per peer; widths past every
   member's halo, negative or different on one rank are refused on every
   rank with nothing written. Over dt_comm_mpi on one node a group's
   exchanges go through the mesh's shared arena (DTENSOR_SHM=auto, the
   default; the counting backend and DTENSOR_SHM=0 runs: the messages),
   so both ways meet every check above. --quick: fewer cases. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include "dt_test.h"

static double fval(int nd, const int64_t *g)
{
    double v = 0;
    int d;
    for (d = 0; d < nd; d++) v = v * 100 + (double)(g[d] + 1);
    return v;
}

static const double SENTINEL = -7.0;
enum { C = DT_BOUNDARY_CONSTANT, P = DT_BOUNDARY_PERIODIC, N = DT_BOUNDARY_NONE };
#define MAXM 16

/* one member of a group: its spec, then what was made of it */
typedef struct member {
    dt_dtype t;
    int64_t shape[DT_MAX_DIMS];
    dt_halo_desc hd;
    int ghosted;                     /* a wrapped ghosted array (room = the halo's widths) */
    double add;                      /* added to f */
    dt_tensor *x;
    void *arr;                       /* ghosted: the caller's array */
} member;

static dt_halo_desc hdesc(int64_t w0, int64_t w1, int b0, int b1, int corners, double fill)
{
    dt_halo_desc h;
    memset(&h, 0, sizeof h);
    h.width[0] = w0; h.width[1] = w1;
    h.boundary[0] = (uint8_t)b0; h.boundary[1] = (uint8_t)b1;
    h.corners = corners;
    h.fill = fill;
    return h;
}

static dt_halo_desc hsided(int64_t lo0, int64_t hi0, int64_t lo1, int64_t hi1, int b0, int b1, int corners,
                           double fill)
{
    dt_halo_desc h = hdesc(0, 0, b0, b1, corners, fill);
    h.width_lo[0] = lo0; h.width_hi[0] = hi0;
    h.width_lo[1] = lo1; h.width_hi[1] = hi1;
    return h;
}

/* member a's tensor (2-D), values f + a->add, its halo set, every ghost cell the sentinel */
static int member_make(const dtt_mesh *m, const dt_placement *pl, member *a)
{
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], wl[DT_MAX_DIMS], wh[DT_MAX_DIMS], gs[DT_MAX_DIMS], g[DT_MAX_DIMS];
    int64_t n, i;
    int k, nd = 2;
    dt_tensor_desc d = dtt_desc(a->t, nd, a->shape, m->nd, pl);
    void *gb;
    a->x = NULL;
    a->arr = NULL;
    dtt_ref_layout(m->nd, m->shape, m->coord, nd, a->shape, pl, ls, lo);
    dtt_side_widths(&a->hd, nd, wl, wh);
    if (a->ghosted) {
        int64_t r[DT_MAX_DIMS];
        for (k = 0; k < nd; k++) { r[k] = wl[k]; gs[k] = ls[k] + 2 * wl[k]; }
        n = dtt_numel(nd, gs);
        a->arr = dtt_malloc((size_t)(n ? n : 1) * dtt_size(a->t));
        for (i = 0; i < n; i++) {
            int64_t rest = i;
            int out = 0;
            for (k = nd - 1; k >= 0; k--) { g[k] = lo[k] - r[k] + rest % gs[k]; rest /= gs[k]; }
            for (k = 0; k < nd; k++) out |= g[k] < lo[k] || g[k] >= lo[k] + ls[k];
            dtt_store_d(a->t, a->arr, (size_t)i, out ? SENTINEL : fval(nd, g) + a->add);
        }
        d.local_shape = ls;
        d.local_ghost = r;
        d.local_alloc = a->arr;
        d.local_alloc_bytes = (int64_t)((size_t)n * dtt_size(a->t));
        CHECK_OK(dt_tensor_from_local(m->mesh, &d, a->arr, DT_BORROW, &a->x));
    } else {
        void *buf;
        n = dtt_numel(nd, ls);
        buf = dtt_malloc((size_t)(n ? n : 1) * dtt_size(a->t));
        for (i = 0; i < n; i++) {
            int64_t rest = i;
            for (k = nd - 1; k >= 0; k--) { g[k] = lo[k] + rest % ls[k]; rest /= ls[k]; }
            dtt_store_d(a->t, buf, (size_t)i, fval(nd, g) + a->add);
        }
        CHECK_OK(dt_tensor_from_local(m->mesh, &d, buf, DT_COPY, &a->x));
        free(buf);
    }
    if (!a->x) return 0;
    CHECK_OK(dt_tensor_set_halo(a->x, &a->hd));
    gb = dt_tensor_ghosted_data(a->x, gs);
    n = gb ? dtt_numel(nd, gs) : 0;
    if (!a->ghosted)
        for (i = 0; i < n; i++) dtt_store_d(a->t, gb, (size_t)i, SENTINEL);
    return 1;
}

static void member_free(member *a)
{
    dt_tensor_destroy(a->x);
    free(a->arr);
    a->x = NULL;
    a->arr = NULL;
}

/* over every ghost cell of a member: poison (back to the sentinel) or count those that differ from it */
static long member_ghosts(member *a, int poison)
{
    int64_t gs[DT_MAX_DIMS], ls[DT_MAX_DIMS], wl[DT_MAX_DIMS], wh[DT_MAX_DIMS], n, i, rest;
    void *gb = dt_tensor_ghosted_data(a->x, gs);
    long w = 0;
    int k, out;
    if (!gb) return 0;
    dt_tensor_local_shape(a->x, ls);
    dtt_side_widths(&a->hd, 2, wl, wh);
    n = dtt_numel(2, gs);
    for (i = 0; i < n; i++) {
        rest = i;
        out = 0;
        for (k = 1; k >= 0; k--) {
            int64_t u = rest % gs[k];
            rest /= gs[k];
            out |= u < wl[k] || u >= wl[k] + ls[k];
        }
        if (out && poison) dtt_store_d(a->t, gb, (size_t)i, SENTINEL);
        else w += out && dtt_load_d(a->t, gb, (size_t)i) != SENTINEL;
    }
    return w;
}

static void member_poison(member *a) { (void)member_ghosts(a, 1); }

/* the ghost cells that differ from the sentinel (nothing written?) */
static long member_written(member *a) { return member_ghosts(a, 0); }

/* every cell of the member's ghosted block: f (+ add) at the wrapped index, the fill, or the sentinel */
/* scribbled: the interior was overwritten after _begin (a ghosted array's interior is its own: -1);
   lay: the layers exchanged along each dim (NULL: all), past which a ghost keeps the sentinel */
static void member_check_x(const dtt_mesh *m, const dt_placement *pl, member *a, int k, int scribbled,
                           const int64_t *lay)
{
    int64_t ls[DT_MAX_DIMS], lo[DT_MAX_DIMS], gsh[DT_MAX_DIMS], gn, i, u[DT_MAX_DIMS], w[DT_MAX_DIMS];
    int64_t wl[DT_MAX_DIMS], wh[DT_MAX_DIMS];
    const int64_t *shape = a->shape;
    const void *gb;
    int d, nd = 2, bad = 0;
    dtt_ref_layout(m->nd, m->shape, m->coord, nd, shape, pl, ls, lo);
    dtt_side_widths(&a->hd, nd, wl, wh);
    gb = dt_tensor_ghosted_data(a->x, gsh);
    CHECK(gb != NULL || dtt_numel(nd, ls) == 0, "member %d: no ghosted block", k);
    if (!gb) return;
    gn = 1;
    for (d = 0; d < nd; d++) {
        CHECK(gsh[d] == ls[d] + wl[d] + wh[d], "member %d: ghosted shape[%d] = %lld, want %lld", k, d,
              (long long)gsh[d], (long long)(ls[d] + wl[d] + wh[d]));
        gn *= gsh[d];
    }
    for (i = 0; i < gn; i++) {
        int64_t r = i;
        int outside = 0, cfill = 0, none = 0, past = 0;
        double want, got;
        for (d = nd - 1; d >= 0; d--) { u[d] = lo[d] - wl[d] + r % gsh[d]; r /= gsh[d]; }
        for (d = 0; d < nd; d++) {
            w[d] = u[d];
            if (u[d] < lo[d] || u[d] >= lo[d] + ls[d]) outside++;
            if (lay) past |= lo[d] - u[d] > lay[d] || u[d] - (lo[d] + ls[d] - 1) > lay[d];
            if (u[d] < 0 || u[d] >= shape[d]) {
                if (a->hd.boundary[d] == P) w[d] = (u[d] + shape[d]) % shape[d];
                else if (a->hd.boundary[d] == C) cfill = 1;
                else none = 1;
            }
        }
        if (outside > 1 && !a->hd.corners) continue; /* corners undefined for a star stencil */
        want = !outside && scribbled && a->ghosted ? -1.0
               : past || none                      ? SENTINEL
               : cfill                             ? a->hd.fill
                                                   : fval(nd, w) + a->add;
        got = dtt_load_d(a->t, gb, (size_t)i);
        if (got != want && bad++ < 5) {
            char c[96];
            dtt_shape_str(nd, u, c, sizeof c);
            dtt_fail(__FILE__, __LINE__, "ghost value", "member %d (%s): cell %s: got %g want %g", k,
                     dtt_dtname(a->t), c, got, want);
        }
    }
}

static void member_check(const dtt_mesh *m, const dt_placement *pl, member *a, int k)
{
    member_check_x(m, pl, a, k, 0, NULL);
}

/* the layers a group's call of width w exchanges of member a: w[d], up to its wider side */
static void member_layers(const member *a, const int64_t *w, int64_t *lay)
{
    int64_t wl[DT_MAX_DIMS], wh[DT_MAX_DIMS];
    int d;
    dtt_side_widths(&a->hd, 2, wl, wh);
    for (d = 0; d < 2; d++) {
        int64_t most = wl[d] > wh[d] ? wl[d] : wh[d];
        lay[d] = w[d] < most ? w[d] : most;
    }
}

/* overwrite the member's interior (split phase: the ghosts must hold the values at _begin) */
static void member_scribble(member *a)
{
    size_t n = dt_tensor_local_numel(a->x), i;
    int64_t ls[DT_MAX_DIMS], st[DT_MAX_DIMS];
    char *p = (char *)dt_tensor_data(a->x);
    dt_tensor_local_shape(a->x, ls);
    dt_tensor_local_strides(a->x, st);
    for (i = 0; i < n; i++) {
        int64_t r = (int64_t)i, off = 0;
        int d;
        for (d = 1; d >= 0; d--) { off += (r % ls[d]) * st[d]; r /= ls[d]; }
        dtt_store_d(a->t, p, (size_t)off, -1.0);
    }
}

/* a counting backend: start/wait over MPI Isend/Irecv; counts the messages posted */
typedef struct cnt_comm { MPI_Comm c; long sends, recvs, dup_peer; } cnt_comm;
typedef struct cnt_req { int n; MPI_Request *rq; } cnt_req;

static dt_status cnt_start(void *user, int n, const dt_message *msgs, void **request)
{
    cnt_comm *cc = (cnt_comm *)user;
    cnt_req *r = (cnt_req *)malloc(sizeof *r);
    int i, j;
    if (!r) return DT_ERR_NOMEM;
    r->rq = (MPI_Request *)malloc((size_t)(n ? n : 1) * sizeof(MPI_Request));
    if (!r->rq) { free(r); return DT_ERR_NOMEM; }
    r->n = n;
    for (i = 0; i < n; i++) {
        for (j = 0; j < i; j++) cc->dup_peer += msgs[j].send == msgs[i].send && msgs[j].peer == msgs[i].peer;
        if (msgs[i].send) {
            cc->sends++;
            MPI_Isend(msgs[i].buf, (int)msgs[i].bytes, MPI_BYTE, msgs[i].peer, msgs[i].tag, cc->c, &r->rq[i]);
        } else {
            cc->recvs++;
            MPI_Irecv(msgs[i].buf, (int)msgs[i].bytes, MPI_BYTE, msgs[i].peer, msgs[i].tag, cc->c, &r->rq[i]);
        }
    }
    *request = r;
    return DT_OK;
}

static dt_status cnt_wait(void *user, void *request)
{
    cnt_req *r = (cnt_req *)request;
    int i;
    (void)user;
    for (i = 0; i < r->n; i++) MPI_Wait(&r->rq[i], MPI_STATUS_IGNORE);
    free(r->rq);
    free(r);
    return DT_OK;
}

static long group_cases = 0;

/* MPI_Isend counted (the profiling interface): on one node a group's exchange posts none */
static long isends = 0;
#ifdef __cplusplus
extern "C"
#endif
int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *rq)
{
    isends++;
    return PMPI_Isend(buf, count, type, dest, tag, comm, rq);
}

/* does a group on this run's MPI meshes go the shared way (all ranks on one node, DTENSOR_SHM not 0)? */
static int shared_way(void)
{
    const char *e = getenv("DTENSOR_SHM");
    return dtt_np > 1 && !(e && (!strcmp(e, "0") || !strcmp(e, "off")));
}

/* The members made, grouped, exchanged whole and split (checked), then
   the traffic compared with the members' own exchanges: the same bytes,
   one backend call; over the counting backend (cc), one message per peer. */
static void group_case(const dtt_mesh *m, const dt_placement *pl, member *ms, int n, cnt_comm *cc)
{
    dt_tensor *ts[MAXM];
    dt_halo_group *g = NULL;
    dt_comm_stats a, b;
    int k, split, ok = 1;
    char p[96];
    dtt_pl_str(pl, m->nd, p, sizeof p);
    dtt_ctx("mesh %s, %s, %d members, first %s [%lld, %lld]", m->name, p, n, dtt_dtname(ms[0].t),
            (long long)ms[0].shape[0], (long long)ms[0].shape[1]);
    for (k = 0; k < n; k++) {
        ms[k].add = 1000.0 * k;
        ok &= member_make(m, pl, &ms[k]);
        ts[k] = ms[k].x;
    }
    if (!ok) goto done;
    CHECK_OK(dt_halo_group_create(ts, n, &g));
    if (!g) goto done;
    for (split = 0; split < 3; split++) {
        for (k = 0; k < n; k++) member_poison(&ms[k]);
        if (split == 1) {
            CHECK_OK(dt_halo_group_exchange_begin(g));
            for (k = 0; k < n; k++) member_scribble(&ms[k]);
            CHECK_OK(dt_halo_group_exchange_end(g));
            for (k = 0; k < n; k++) member_check_x(m, pl, &ms[k], k, 1, NULL);
            /* (the interiors are -1 now: rebuild them for the next round) */
            for (k = 0; k < n; k++) {
                dt_tensor *old = ms[k].x;
                void *arr = ms[k].arr;
                ms[k].x = NULL;
                ms[k].arr = NULL;
                ok &= member_make(m, pl, &ms[k]);
                ts[k] = ms[k].x;
                dt_tensor_destroy(old);
                free(arr);
            }
            /* the group lost its members' halos: refused on every rank, then made again */
            CHECK_ST(dt_halo_group_exchange(g), DT_ERR_ARG);
            CHECK(strstr(dt_last_error(), "create it again") != NULL, "message: %s", dt_last_error());
            dt_halo_group_destroy(g);
            g = NULL;
            if (!ok) goto done;
            CHECK_OK(dt_halo_group_create(ts, n, &g));
            if (!g) goto done;
        } else {
            CHECK_OK(dt_halo_group_exchange(g));
            for (k = 0; k < n; k++) member_check(m, pl, &ms[k], k);
        }
    }
    /* fewer layers per call: each member's exchange of that many (up to its halo's), nothing past them
       written; the members' own layered exchanges' bytes in one backend call, one message per peer */
    for (split = 0; split < 5; split++) {
        static const int64_t ws[5][2] = {{1, 1}, {0, 2}, {2, 0}, {1, 0}, {1, 1}};
        int64_t lay[MAXM][2], w[2] = {0, 0}, most[2];
        for (k = 0; k < n; k++) { /* (the request within the widest member's halo) */
            member_layers(&ms[k], ws[split], most);
            w[0] = most[0] > w[0] ? most[0] : w[0];
            w[1] = most[1] > w[1] ? most[1] : w[1];
        }
        for (k = 0; k < n; k++) {
            member_poison(&ms[k]);
            member_layers(&ms[k], w, lay[k]);
        }
        if (split == 4) { /* split phase, a width planned before */
            CHECK_OK(dt_halo_group_exchange_layers_begin(g, w));
            CHECK_OK(dt_halo_group_exchange_end(g));
        } else {
            CHECK_OK(dt_halo_group_exchange_layers(g, w));
        }
        for (k = 0; k < n; k++) member_check_x(m, pl, &ms[k], k, 0, lay[k]);
        if (split == 3) {
            dt_comm_reset_stats(m->comm);
            if (cc) cc->sends = cc->recvs = cc->dup_peer = 0;
            CHECK_OK(dt_halo_group_exchange_layers(g, w));
            dt_comm_get_stats(m->comm, &a);
            CHECK(!cc || cc->dup_peer == 0, "group layers: %ld messages to a peer already sent to", cc->dup_peer);
            dt_comm_reset_stats(m->comm);
            for (k = 0; k < n; k++) CHECK_OK(dt_halo_exchange_layers(ms[k].x, lay[k]));
            dt_comm_get_stats(m->comm, &b);
            CHECK(a.bytes_sent == b.bytes_sent && a.bytes_recv == b.bytes_recv,
                  "group layers moved %llu/%llu bytes, its members %llu/%llu", (unsigned long long)a.bytes_sent,
                  (unsigned long long)a.bytes_recv, (unsigned long long)b.bytes_sent,
                  (unsigned long long)b.bytes_recv);
            CHECK(a.calls == (a.bytes_sent || a.bytes_recv ? 1u : 0u), "group layers: %llu backend calls",
                  (unsigned long long)a.calls);
        }
    }
    /* the traffic: the members' bytes in one call */
    dt_comm_reset_stats(m->comm);
    CHECK_OK(dt_halo_group_exchange(g));
    dt_comm_get_stats(m->comm, &a);
    dt_comm_reset_stats(m->comm);
    for (k = 0; k < n; k++) CHECK_OK(dt_halo_exchange(ms[k].x));
    dt_comm_get_stats(m->comm, &b);
    CHECK(a.bytes_sent == b.bytes_sent && a.bytes_recv == b.bytes_recv,
          "group moved %llu/%llu bytes, its members %llu/%llu", (unsigned long long)a.bytes_sent,
          (unsigned long long)a.bytes_recv, (unsigned long long)b.bytes_sent, (unsigned long long)b.bytes_recv);
    CHECK(a.calls == (a.bytes_sent || a.bytes_recv ? 1u : 0u), "group: %llu backend calls",
          (unsigned long long)a.calls);
    if (!cc) { /* the shared way posts no message; the messages' way one per peer with bytes for it */
        isends = 0;
        CHECK_OK(dt_halo_group_exchange(g));
        CHECK(shared_way() ? isends == 0 : (isends > 0) == (a.bytes_sent > 0),
              "group: %ld MPI_Isend (%llu bytes sent; shared way %s)", isends, (unsigned long long)a.bytes_sent,
              shared_way() ? "on" : "off");
    }
    if (cc) { /* one message per peer and direction */
        long s0, r0, s1, r1;
        cc->sends = cc->recvs = cc->dup_peer = 0;
        CHECK_OK(dt_halo_group_exchange(g));
        s0 = cc->sends; r0 = cc->recvs;
        CHECK(cc->dup_peer == 0, "group: %ld messages to a peer already sent to", cc->dup_peer);
        cc->sends = cc->recvs = 0;
        for (k = 0; k < n; k++) CHECK_OK(dt_halo_exchange(ms[k].x));
        s1 = cc->sends; r1 = cc->recvs;
        CHECK(s0 <= s1 && r0 <= r1, "group: %ld/%ld messages, members %ld/%ld", s0, r0, s1, r1);
        CHECK(!s0 || n == 1 || s0 < s1, "group: %ld messages, members one by one %ld", s0, s1);
        for (k = 0; k < n; k++) member_check(m, pl, &ms[k], k);
    }
    group_cases++;
done:
    dt_halo_group_destroy(g);
    for (k = 0; k < n; k++) member_free(&ms[k]);
}

static member mem(dt_dtype t, int64_t n0, int64_t n1, dt_halo_desc hd, int ghosted)
{
    member a;
    memset(&a, 0, sizeof a);
    a.t = t;
    a.shape[0] = n0;
    a.shape[1] = n1;
    a.hd = hd;
    a.ghosted = ghosted;
    return a;
}

/* a staggered set: cells, x-faces, y-faces of [nx, ny], mixed dtypes and halos */
static void group_cases_on(const dtt_mesh *m, const dt_placement *pl, cnt_comm *cc)
{
    member ms[MAXM];
    int64_t nx = 13, ny = 7;
    int n;
    n = 0;
    ms[n++] = mem(DT_F64, nx, ny, hdesc(2, 2, P, P, 1, 0.0), 0);
    ms[n++] = mem(DT_F32, nx + 1, ny, hsided(2, 3, 1, 1, C, P, 1, 2.5), 0);
    ms[n++] = mem(DT_I32, nx, ny + 1, hdesc(1, 2, P, C, 0, -3.0), 0);
    ms[n++] = mem(DT_F64, nx, ny, hdesc(1, 1, N, P, 1, 0.0), 1);
    ms[n++] = mem(DT_F32, nx + 1, ny + 1, hdesc(2, 1, C, C, 1, 4.0), 1);
    group_case(m, pl, ms, n, cc);
    /* one member; then small shards (empty ones at 6 and 8 ranks), wider halos than shards */
    n = 0;
    ms[n++] = mem(DT_F32, nx, ny, hdesc(2, 1, P, C, 1, 1.0), 0);
    group_case(m, pl, ms, n, cc);
    if (dtt_quick && cc) return;
    n = 0;
    ms[n++] = mem(DT_F64, 3, 5, hdesc(2, 2, P, N, 1, 0.0), 0);
    ms[n++] = mem(DT_I32, 4, 5, hsided(3, 1, 0, 2, P, C, 0, 7.0), 0);
    ms[n++] = mem(DT_F32, 3, 6, hdesc(1, 1, C, P, 1, -1.0), 1);
    group_case(m, pl, ms, n, cc);
}

static void group_sweep(dt_comm *comm, cnt_comm *cc)
{
    int fac[64 * DT_MAX_MESH_DIMS], nf, f, one[1];
    dt_placement pl[DT_MAX_MESH_DIMS];
    dtt_mesh m;
    memset(pl, 0, sizeof pl);
    one[0] = dtt_np;
    if (dtt_mesh_open(&m, comm, 1, one)) {
        pl[0] = dt_shard(0);
        group_cases_on(&m, pl, cc);
        if (!dtt_quick) {
            pl[0] = dt_shard(1);
            group_cases_on(&m, pl, cc);
        }
        dtt_mesh_close(&m);
    }
    nf = dtt_factorizations(dtt_np, 2, fac, 64);
    for (f = 0; f < nf; f++) {
        if (dtt_quick && f != nf / 2) continue;
        if (!dtt_mesh_open(&m, comm, 2, &fac[f * DT_MAX_MESH_DIMS])) continue;
        pl[0] = dt_shard(0); pl[1] = dt_shard(1);
        group_cases_on(&m, pl, cc);
        if (!dtt_quick && !cc) {
            pl[0] = dt_replicate(); pl[1] = dt_shard(0); /* replica groups */
            group_cases_on(&m, pl, cc);
        }
        dtt_mesh_close(&m);
    }
}

/* A 1-D mesh of every rank in reverse order (desc->ranks): the group's peers are named in the comm's ranks
   and its shared way finds their blocks by the mesh's */
static void reversed_case(dt_comm *comm)
{
    dtt_mesh m;
    dt_mesh_desc md;
    dt_placement pl[DT_MAX_MESH_DIMS];
    member ms[MAXM];
    int ranks[256], k, n = 0;
    if (dtt_np < 2 || dtt_np > 256) return;
    memset(&m, 0, sizeof m);
    memset(&md, 0, sizeof md);
    memset(pl, 0, sizeof pl);
    md.ndim = 1;
    md.shape[0] = dtt_np;
    for (k = 0; k < dtt_np; k++) ranks[k] = dtt_np - 1 - k;
    md.ranks = ranks;
    m.nd = 1;
    m.comm = comm;
    m.shape[0] = dtt_np;
    m.coord[0] = dtt_np - 1 - dtt_rank;
    snprintf(m.name, sizeof m.name, "[%d] reversed", dtt_np);
    CHECK_OK(dt_mesh_create(comm, &md, &m.mesh));
    if (!m.mesh) return;
    pl[0] = dt_shard(0);
    ms[n++] = mem(DT_F64, 11, 5, hdesc(2, 1, P, C, 1, 3.0), 0);
    ms[n++] = mem(DT_F32, 12, 5, hdesc(1, 2, P, P, 1, 0.0), 1);
    ms[n++] = mem(DT_I32, 11, 6, hsided(1, 2, 1, 0, P, P, 1, 0.0), 0);
    group_case(&m, pl, ms, n, NULL);
    dtt_mesh_close(&m);
}

/* ---------------------------------------------------------------- bad input */

static void bad_input(dt_comm *comm)
{
    dtt_mesh m, m2;
    dt_placement pl[DT_MAX_MESH_DIMS];
    member ms[4], other;
    dt_tensor *ts[4], *bare = NULL;
    dt_halo_group *g = NULL, *const poison = (dt_halo_group *)&g;
    int k, ok = 1;
    if (!dtt_open_1d_2d(&m, &m2, comm)) return;
    dtt_ctx("bad input");
    memset(pl, 0, sizeof pl);
    pl[0] = dt_shard(0);
    ms[0] = mem(DT_F64, 9, 5, hdesc(1, 1, P, P, 1, 0.0), 0);
    ms[1] = mem(DT_F32, 10, 5, hdesc(2, 0, C, 0, 0, 1.0), 0);
    ms[2] = mem(DT_I32, 9, 6, hdesc(1, 1, P, C, 1, 0.0), 1);
    for (k = 0; k < 3; k++) { ms[k].add = 1000.0 * k; ok &= member_make(&m, pl, &ms[k]); ts[k] = ms[k].x; }
    other = mem(DT_F64, 9, 5, hdesc(1, 1, P, P, 1, 0.0), 0);
    {
        dt_placement p2[DT_MAX_MESH_DIMS];
        memset(p2, 0, sizeof p2);
        p2[1] = dt_shard(0);
        ok &= member_make(&m2, p2, &other);
    }
    if (ok) {
        dt_tensor_desc d = *dt_tensor_get_desc(ts[0]);
        CHECK_OK(dt_tensor_zeros(m.mesh, &d, &bare));
    }
    if (!ok || !bare) goto done;
#define REFUSED(call, want)                                                          \
    do {                                                                             \
        g = poison;                                                                  \
        CHECK_ST(call, want);                                                        \
        CHECK(g == poison, "out written");                                           \
        for (k = 0; k < 3; k++) CHECK(member_written(&ms[k]) == 0, "ghosts written"); \
    } while (0)
    REFUSED(dt_halo_group_create(NULL, 3, &g), DT_ERR_ARG);
    CHECK(strstr(dt_last_error(), "dt_halo_group_create") != NULL, "message: %s", dt_last_error());
    REFUSED(dt_halo_group_create(ts, 0, &g), DT_ERR_ARG);
    REFUSED(dt_halo_group_create(ts, -1, &g), DT_ERR_ARG);
    CHECK_ST(dt_halo_group_create(ts, 3, NULL), DT_ERR_ARG);
    {
        dt_tensor *t2[4];
        t2[0] = ts[0]; t2[1] = NULL; t2[2] = ts[2];
        REFUSED(dt_halo_group_create(t2, 3, &g), DT_ERR_ARG);
        CHECK(strstr(dt_last_error(), "ts[1] is NULL") != NULL, "message: %s", dt_last_error());
        t2[0] = ts[0]; t2[1] = ts[1]; t2[2] = ts[0]; /* the same tensor twice */
        REFUSED(dt_halo_group_create(t2, 3, &g), DT_ERR_ARG);
        CHECK(strstr(dt_last_error(), "same tensor") != NULL, "message: %s", dt_last_error());
        t2[1] = bare; /* no halo */
        t2[2] = ts[2];
        REFUSED(dt_halo_group_create(t2, 3, &g), DT_ERR_ARG);
        CHECK(strstr(dt_last_error(), "no halo") != NULL, "message: %s", dt_last_error());
        t2[1] = other.x; /* another mesh */
        REFUSED(dt_halo_group_create(t2, 3, &g), DT_ERR_ARG);
        CHECK(strstr(dt_last_error(), "another mesh") != NULL, "message: %s", dt_last_error());
        if (dtt_np > 1) { /* ranks that pass different members: all fail */
            t2[0] = ts[0]; t2[1] = ts[dtt_rank == 1 ? 2 : 1]; t2[2] = ts[dtt_rank == 1 ? 1 : 2];
            REFUSED(dt_halo_group_create(t2, 3, &g), DT_ERR_MISMATCH);
            REFUSED(dt_halo_group_create(ts, dtt_rank == 1 ? 2 : 3, &g), DT_ERR_MISMATCH);
        }
        /* an exchange in flight on a member */
        CHECK_OK(dt_halo_exchange_begin(ts[1])); /* (which writes ts[1]'s fills and wraps itself) */
        g = poison;
        CHECK_ST(dt_halo_group_create(ts, 3, &g), DT_ERR_ARG);
        CHECK(g == poison, "out written");
        CHECK(strstr(dt_last_error(), "in flight") != NULL, "message: %s", dt_last_error());
        CHECK_OK(dt_halo_exchange_end(ts[1]));
        for (k = 0; k < 3; k++) member_poison(&ms[k]);
    }
    CHECK_ST(dt_halo_group_exchange(NULL), DT_ERR_ARG);
    CHECK_ST(dt_halo_group_exchange_begin(NULL), DT_ERR_ARG);
    CHECK_ST(dt_halo_group_exchange_end(NULL), DT_ERR_ARG);
    dt_halo_group_destroy(NULL);
    g = NULL;
    CHECK_OK(dt_halo_group_create(ts, 3, &g));
    if (!g) goto done;
    CHECK_ST(dt_halo_group_exchange_end(g), DT_ERR_ARG); /* none begun */
    /* in flight: the group once, the members' own exchanges and halos refused */
    CHECK_OK(dt_halo_group_exchange_begin(g));
    CHECK_ST(dt_halo_group_exchange_begin(g), DT_ERR_ARG);
    CHECK_ST(dt_halo_exchange(ts[0]), DT_ERR_ARG);
    CHECK_ST(dt_halo_exchange_begin(ts[2]), DT_ERR_ARG);
    CHECK_ST(dt_halo_exchange_end(ts[1]), DT_ERR_ARG);
    CHECK_ST(dt_tensor_set_halo(ts[1], &ms[1].hd), DT_ERR_ARG);
    {
        dt_halo_group *g2 = poison;
        CHECK_ST(dt_halo_group_create(ts, 1, &g2), DT_ERR_ARG);
        CHECK(g2 == poison, "out written");
    }
    CHECK_OK(dt_halo_group_exchange_end(g));
    for (k = 0; k < 3; k++) member_check(&m, pl, &ms[k], k);
    CHECK_ST(dt_halo_group_exchange_end(g), DT_ERR_ARG);
    /* per-call widths past every member's halo, negative, or different on one rank: refused, nothing written */
    for (k = 0; k < 3; k++) member_poison(&ms[k]);
    {
        static const int64_t wide0[2] = {3, 0}, wide1[2] = {0, 2}, neg[2] = {-1, 1}, w10[2] = {1, 0}, w01[2] = {0, 1};
        CHECK_ST(dt_halo_group_exchange_layers(g, wide0), DT_ERR_ARG);
        CHECK(strstr(dt_last_error(), "width[0] = 3") != NULL && strstr(dt_last_error(), "width 2") != NULL,
              "message: %s", dt_last_error());
        CHECK_ST(dt_halo_group_exchange_layers_begin(g, wide1), DT_ERR_ARG);
        CHECK(strstr(dt_last_error(), "width[1] = 2") != NULL, "message: %s", dt_last_error());
        CHECK_ST(dt_halo_group_exchange_layers(g, neg), DT_ERR_ARG);
        if (dtt_np > 1) CHECK_ST(dt_halo_group_exchange_layers(g, dtt_rank == 1 ? w10 : w01), DT_ERR_MISMATCH);
        for (k = 0; k < 3; k++) CHECK(member_written(&ms[k]) == 0, "ghosts written");
        CHECK_OK(dt_halo_group_exchange_layers_begin(g, w10)); /* in flight: another refused */
        CHECK_ST(dt_halo_group_exchange_layers_begin(g, w01), DT_ERR_ARG);
        CHECK_ST(dt_halo_group_exchange(g), DT_ERR_ARG);
        CHECK_OK(dt_halo_group_exchange_end(g));
        for (k = 0; k < 3; k++) {
            int64_t lay[2];
            member_layers(&ms[k], w10, lay);
            member_check_x(&m, pl, &ms[k], k, 0, lay);
        }
    }
    /* a member's halo replaced: refused on every rank, nothing written */
    for (k = 0; k < 3; k++) member_poison(&ms[k]);
    CHECK_OK(dt_tensor_set_halo(ts[1], &ms[1].hd));
    member_poison(&ms[1]);
    CHECK_ST(dt_halo_group_exchange(g), DT_ERR_ARG);
    CHECK_ST(dt_halo_group_exchange_begin(g), DT_ERR_ARG);
    for (k = 0; k < 3; k++) CHECK(member_written(&ms[k]) == 0, "ghosts written");
    dt_halo_group_destroy(g);
    /* a member destroyed while the group's exchange is in flight: it completes (no hang), the group is refused
       after, and destroyed after its member */
    g = NULL;
    CHECK_OK(dt_halo_group_create(ts, 3, &g));
    if (g) {
        CHECK_OK(dt_halo_group_exchange_begin(g));
        member_free(&ms[0]);
        CHECK_ST(dt_halo_group_exchange(g), DT_ERR_ARG);
        for (k = 1; k < 3; k++) member_check(&m, pl, &ms[k], k);
        dt_halo_group_destroy(g);
    }
    /* destroyed in flight (an exchange of fewer layers), the group itself: completes */
    g = NULL;
    CHECK_OK(dt_halo_group_create(ts + 1, 2, &g));
    if (g) {
        static const int64_t w10[2] = {1, 0};
        for (k = 1; k < 3; k++) member_poison(&ms[k]);
        CHECK_OK(dt_halo_group_exchange_layers_begin(g, w10));
        dt_halo_group_destroy(g);
        for (k = 1; k < 3; k++) {
            int64_t lay[2];
            member_layers(&ms[k], w10, lay);
            member_check_x(&m, pl, &ms[k], k, 0, lay);
        }
        CHECK_OK(dt_halo_exchange(ts[1])); /* the members' own exchanges meet their peers' */
    }
#undef REFUSED
done:
    dt_tensor_destroy(bare);
    for (k = 0; k < 3; k++) member_free(&ms[k]);
    member_free(&other);
    dtt_mesh_close(&m2);
    dtt_mesh_close(&m);
}

/* ---------------------------------------------------------------- main */

static void counting_backend(void)
{
    static cnt_comm cc;
    dt_comm_desc cd;
    dt_comm *comm = NULL;
    int save = dtt_quick;
    MPI_Comm_dup(MPI_COMM_WORLD, &cc.c);
    memset(&cd, 0, sizeof cd);
    cd.name = "counting";
    cd.rank = dtt_rank;
    cd.size = dtt_np;
    cd.user = &cc.c; /* (the first field: dtt_mpi_sendrecv takes it as an MPI_Comm *) */
    cd.sendrecv = dtt_mpi_sendrecv;
    cd.start = cnt_start;
    cd.wait = cnt_wait;
    CHECK_OK(dt_comm_custom(&cd, &comm));
    if (comm) {
        dtt_quick = 1;
        group_sweep(comm, &cc);
        dtt_quick = save;
        dt_comm_destroy(comm);
    }
    MPI_Comm_free(&cc.c);
}

int main(int argc, char **argv)
{
    dt_comm *comm = NULL;
    dtt_init(&argc, &argv, "halo_group");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    if (comm) {
        group_sweep(comm, NULL);
        reversed_case(comm);
        bad_input(comm);
        dt_comm_destroy(comm);
    }
    counting_backend();
    if (dtt_rank == 0 && getenv("DT_TEST_VERBOSE")) fprintf(stderr, "test_halo_group: %ld group cases\n", group_cases);
    return dtt_finish();
}
