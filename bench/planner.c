/* bench/planner.c -- the planner at scale, by simulation: one process plays
   one rank of a mesh of 64 .. 65,536 ranks (1-D to 4-D) through a backend
   that counts instead of moving data, and reports what the library would
   send and receive, against the lower bound, and what the planning and
   the rest of the library cost per call as the mesh grows.

       make bench-planner                        (build/bench_planner, all sizes)
       ./build/bench_planner [--quick] [--csv FILE] [--max-ranks N] [--callgrind]

   --quick        meshes up to 4096 ranks (< 20 s)
   --max-ranks N  meshes up to N ranks (a power of 4 from 64; default 65536)
   --dims 1234    which mesh ranks to run (default all: 1-D to 4-D)
   --csv FILE     append raw rows (no header): family,case,size,side,value,unit
                    planner,<case>,<ranks>,ours,<bytes received a rank>,B
                    planner,<case>,<ranks>,peer,<lower bound>,B
                    planner-time,<case> [plan],<ranks>,ours,<us per plan>,us
                    planner-time,<case> [call],<ranks>,ours,<us per call>,us
                    planner-time,<N>d mesh_create,<ranks>,ours,<us>,us
                    planner-time,<N>d <op> [plan] / [call] / [cached],<ranks>,ours,<us>,us
                  <case> is e.g. "1d S(0)->S(1)" or "2d [S(0);S(1)]->[R;S(0)]"; the
                  mesh shape is left out of it so that one case is one line across
                  sizes (the shape follows from the size: see "Meshes").
   --callgrind    run under valgrind --tool=callgrind: every timed loop of the
                  middle simulated rank is one dump named
                  "planner <case>|<ranks>|<what>|<iters>" (CALLGRIND_ZERO_STATS
                  before, CALLGRIND_DUMP_STATS_AT after), read by
                  bench/planner_callgrind.sh (`make bench-planner-callgrind`)

   THE COUNTING BACKEND (dt_comm_custom, no data moves between processes).
   The process is rank r of N. Every callback counts messages and bytes,
   then writes what keeps the library's control logic sane when one process
   plays one rank: the simulated peers "mirror" this rank (hold the same as
   it does):
     allgatherv   every block gets my contribution (truncated/zero-filled to
                  its count): the (status, hash) agreement of dt_mesh_create
                  then sees N equal, valid entries
     alltoallv    block j gets what I send to j (truncated/zero-filled)
     sendrecv     the receive gets my send (truncated/zero-filled)
     allreduce    MAX/MIN: my value (all agree); SUM: p x my value
     reduce_scatter  my block of the input, SUM: times p
     broadcast    nothing to write (the root's buffer is everyone's)
     split        provided: a callback cannot know the other ranks' colours,
                  but the bench knows the mesh it simulates. Before each
                  dt_mesh_create it queues the sizes of the communicators the
                  library will split off (the mesh comm, then one per mesh dim,
                  dt__mesh_build_comms' order); a split takes the next size and
                  its key as the new rank (the mesh's splits key by exactly that).
                  Without `split` the library would emulate sub-communicators
                  as groups over sendrecv, whose (colour, key) allgather the
                  mirror would answer with N copies of this rank's colour, and
                  whose collectives would reach the backend only as sendrecv
                  rings and pairwise exchanges: neither sane nor the counts a
                  real backend sees.
   Bytes counted: what this rank sends and receives under a bandwidth-optimal
   algorithm for each collective on p ranks (own block excluded):
     allgatherv     sent = recv = sum(counts) - own       (ring)      msgs p-1
     alltoallv      sent = sum of send counts to others,
                    recv = sum of receive counts from others (direct) msgs = non-empty peers
     allreduce B    sent = recv = 2(p-1)/p * B             (RS + AG ring) msgs 2(p-1)
     reduce_scatter sent = recv = sum(counts) - own        ((p-1)/p * B when even) msgs p-1
     broadcast B    sent = recv = B (root: recv 0)         (pipelined)
     sendrecv       the bytes given
   "ours" is the bytes RECEIVED by a rank, max over the simulated ranks:
   DESIGN.md's lower bound is stated on received bytes; for every collective
   but alltoallv it equals the bytes sent (the table shows both).

   THE LOWER BOUND, computed here from the global shape and the placements
   alone (torch.chunk boxes nested in mesh-dim order, re-implemented here,
   not the library's layout code):
     no Partial:  |D| - |D n S| elements of this rank's destination box D
                  that its source box S does not already hold;
     Partial:     the bandwidth-optimal reduce-scatter of the source block
                  over the k ranks of the reduced Partial mesh dims,
                  (k-1)/k * |S|, plus the move of the rest: |D| minus the
                  largest reduced piece it could already hold,
                  min(|S|/k, |D n S|). (P->R: 2(k-1)/k*B, the allreduce
                  bound; P->S: (k-1)/k*B, the reduce-scatter bound. For mixed
                  cases this is the cost of the best reduce-scatter-then-move
                  two-phase scheme, a reference rather than a proof.)

   TIMES (CLOCK_MONOTONIC). The machine may be shared, and a process may get
   a fraction of a core: a sample is a batch of calls (>= ~200 us) and is
   kept only if the thread's CPU-time clock advanced >= 95% of the wall time
   (it was not descheduled); each time is the median of 15 kept samples:
     plan   dt__plan_build_shaped (the step list from the placements and the global shape: every
            rank builds the same plan without talking), median of batches
     call   dt_tensor_redistribute into a reused output, minus the time
            spent inside the backend's callbacks: planning, listing the
            pieces that move, the count arrays, packing/unpacking, local
            copies. An alltoallv over p ranks takes count and displacement
            arrays of p entries, so a call is inherently O(ranks involved);
            the plan is O(mesh dims).
     involved  the size of the largest communicator a step of the plan uses
            (whole mesh for a box exchange, one mesh dim for allgather /
            all-to-all / reductions, 1 for local steps)
     exp    scaling exponent from the previous size: ln(call2/call1) /
            ln(involved2/involved1) ("-" when the ranks involved did not change;
            "d": data-bound, the bytes a rank receives grew more than 1.25x
            faster than the ranks involved, so the data drives the time, not
            the rank count)
     mesh   dt_comm_custom + dt_mesh_create minus the backend's time, median of
            5 runs (the (status, hash) agreement is an allgather of N entries;
            the splits are the backend's)
   Each time is the max over the simulated ranks of the median.

   MESHES: N = 64, 256, 1024, 4096, 16384, 65536 ranks; 1-D (N), 2-D, 3-D
   and 4-D with the factorisation of N = 2^e as square as possible, larger
   dims first (64: 8x8, 4x4x4, 4x4x2x2; 65536: 256x256, 64x32x32, 16^4).
   Simulated ranks: 0, a middle rank (coordinate i at (i+1)/(ndim+1) of mesh
   dim i: N/2 on 1-D, (5, 10) on 16x16) and N-1. Tensors are F32 with global
   dims a small multiple of the mesh dims (b = the largest mesh dim: (2b,
   2b, ...); 1-D: N or 2N), so the box exchanges move a few KiB a rank and
   data movement does not hide the planning (a gather to Replicate holds
   what a real rank would: up to 8 MiB at 65,536 ranks); one uneven case per
   mesh rank has dims that do not divide (torch.chunk: some shards are
   smaller or empty).

   OPS on the 2-D..4-D meshes ((2b, 2b) F32 operands; mesh dims past the
   second Replicate): the strategy dt_matmul / dt_linear / dt_add / dt_sum
   choose. plan = the uncached choice (the family's shape inference and dt__choose,
   what the first call of an op on a mesh runs; later calls find it in the
   mesh's DT_OP_CACHE table), cached = dt__propagate with the entry present,
   call = the whole op (propagation, input moves, local kernel) minus the
   backend's time. The chosen strategy is printed; every simulated rank must
   choose the same (checked).

   Exit status 1 if a call fails, if a transition without Partial does not
   receive exactly its lower bound (the library's own dt_comm_stats is
   checked too), or if the simulated ranks choose different op strategies. */
#define _POSIX_C_SOURCE 200809L
#define DTENSOR_NO_MPI
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <valgrind/callgrind.h>

static int failures, use_callgrind;

#define CHECK(call) do { dt_status s_ = (call); if (s_ != DT_OK) {                      \
    fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, dt_last_error()); \
    exit(1); } } while (0)

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void *xcalloc(size_t n) {
    void *p = calloc(n ? n : 1, 1);
    if (!p) { fprintf(stderr, "out of memory (%zu bytes)\n", n); exit(1); }
    return p;
}

/* ------------------------------------------------------------ the counting backend */

typedef struct sim_world {    /* one simulated rank: shared by its comm and the splits */
    uint64_t calls, msgs, sent, recv;
    double t_backend;         /* seconds spent inside the callbacks */
    int queue[DT_MAX_MESH_DIMS + 1], nq, iq; /* sizes of the comms the next splits make */
} sim_world;

typedef struct sim_comm {
    sim_world *w;
    int rank, size;
} sim_comm;

static void sim_count(sim_comm *c, uint64_t msgs, uint64_t sent, uint64_t recv) {
    c->w->calls++;
    c->w->msgs += msgs;
    c->w->sent += sent;
    c->w->recv += recv;
}

/* dst gets n bytes: the first `have` from src, zeros after */
static void sim_mirror(void *dst, size_t n, const void *src, size_t have) {
    size_t k = have < n ? have : n;
    if (!n || !dst) return;
    if (k && dst != src) memmove(dst, src, k);
    if (n > k) memset((char *)dst + k, 0, n - k);
}

/* SUM over p ranks that all hold x: p * x */
static void sim_times_p(void *buf, size_t count, dt_dtype t, dt_reduce op, int p) {
    size_t i;
    if (op != DT_SUM) return;
    for (i = 0; i < count; i++) switch (t) {
        case DT_F32: ((float *)buf)[i] *= (float)p; break;
        case DT_F64: ((double *)buf)[i] *= (double)p; break;
        case DT_I32: ((int32_t *)buf)[i] *= p; break;
        case DT_I64: ((int64_t *)buf)[i] *= p; break;
        case DT_U8: ((uint8_t *)buf)[i] = (uint8_t)(((uint8_t *)buf)[i] * p); break;
        default: break;
        }
}

static dt_status sim_sendrecv(void *user, const void *sb, size_t sn, int dest, void *rb, size_t rn, int src,
                              int tag) {
    sim_comm *c = (sim_comm *)user;
    double t0 = now();
    (void)tag;
    sim_count(c, (uint64_t)(dest >= 0) + (uint64_t)(src >= 0), dest >= 0 ? sn : 0, src >= 0 ? rn : 0);
    if (src >= 0) sim_mirror(rb, rn, sb, dest >= 0 ? sn : 0);
    c->w->t_backend += now() - t0;
    return DT_OK;
}

static dt_status sim_split(void *user, int color, int key, void **new_user, int *new_rank, int *new_size) {
    sim_comm *c = (sim_comm *)user, *n;
    *new_user = NULL;
    if (color < 0) return DT_OK;
    if (c->w->iq >= c->w->nq) {
        fprintf(stderr, "bench_planner: an unexpected split (the bench queues the mesh's comm sizes)\n");
        return DT_ERR_UNSUPPORTED;
    }
    n = (sim_comm *)xcalloc(sizeof *n);
    n->w = c->w;
    n->size = c->w->queue[c->w->iq++];
    n->rank = key;
    *new_user = n;
    *new_rank = n->rank;
    *new_size = n->size;
    return DT_OK;
}

static dt_status sim_allgatherv(void *user, const void *sb, size_t sn, void *rb, const size_t *rc,
                                const size_t *rd) {
    sim_comm *c = (sim_comm *)user;
    double t0 = now();
    uint64_t others = 0;
    int j;
    for (j = 0; j < c->size; j++) {
        if (j != c->rank) others += rc[j];
        if ((const char *)rb + rd[j] != (const char *)sb) sim_mirror((char *)rb + rd[j], rc[j], sb, sn);
    }
    sim_count(c, (uint64_t)(c->size - 1), others, others);
    c->w->t_backend += now() - t0;
    return DT_OK;
}

static dt_status sim_alltoallv(void *user, const void *sb, const size_t *sc, const size_t *sd, void *rb,
                               const size_t *rc, const size_t *rd) {
    sim_comm *c = (sim_comm *)user;
    double t0 = now();
    uint64_t sent = 0, recv = 0, msgs = 0;
    int j;
    for (j = 0; j < c->size; j++) {
        if (j != c->rank) { sent += sc[j]; recv += rc[j]; msgs += sc[j] > 0; }
        if (rc[j]) sim_mirror((char *)rb + rd[j], rc[j], (const char *)sb + sd[j], sc[j]);
    }
    sim_count(c, msgs, sent, recv);
    c->w->t_backend += now() - t0;
    return DT_OK;
}

static dt_status sim_allreduce(void *user, const void *sb, void *rb, size_t count, dt_dtype t, dt_reduce op) {
    sim_comm *c = (sim_comm *)user;
    double t0 = now();
    uint64_t bytes = (uint64_t)count * dt_dtype_size(t), p = (uint64_t)c->size;
    sim_count(c, 2 * (p - 1), 2 * (p - 1) * bytes / p, 2 * (p - 1) * bytes / p);
    sim_mirror(rb, (size_t)bytes, sb, (size_t)bytes);
    sim_times_p(rb, count, t, op, c->size);
    c->w->t_backend += now() - t0;
    return DT_OK;
}

static dt_status sim_reduce_scatter(void *user, const void *sb, void *rb, const size_t *counts, dt_dtype t,
                                    dt_reduce op) {
    sim_comm *c = (sim_comm *)user;
    double t0 = now();
    size_t es = dt_dtype_size(t), off = 0, total = 0;
    int j;
    for (j = 0; j < c->size; j++) {
        if (j < c->rank) off += counts[j];
        total += counts[j];
    }
    sim_count(c, (uint64_t)(c->size - 1), (total - counts[c->rank]) * es, (total - counts[c->rank]) * es);
    sim_mirror(rb, counts[c->rank] * es, (const char *)sb + off * es, counts[c->rank] * es);
    sim_times_p(rb, counts[c->rank], t, op, c->size);
    c->w->t_backend += now() - t0;
    return DT_OK;
}

static dt_status sim_broadcast(void *user, void *buf, size_t bytes, int root) {
    sim_comm *c = (sim_comm *)user;
    (void)buf;
    sim_count(c, 1, bytes, c->rank == root ? 0 : bytes);
    return DT_OK;
}

static dt_status sim_barrier(void *user) {
    sim_comm *c = (sim_comm *)user;
    int d, k = 0;
    for (d = 1; d < c->size; d *= 2) k++;
    sim_count(c, (uint64_t)k, 0, 0);
    return DT_OK;
}

static void sim_destroy(void *user) { free(user); }

static void sim_reset(sim_world *w) { w->calls = w->msgs = w->sent = w->recv = 0; w->t_backend = 0; }

/* rank r of n, and a mesh of `shape` on it (the splits queued first) */
static void sim_mesh(sim_world *w, int r, int n, int ndim, const int *shape, dt_comm **comm, dt_mesh **mesh) {
    dt_comm_desc d;
    dt_mesh_desc md;
    sim_comm *c = (sim_comm *)xcalloc(sizeof *c);
    int i;
    memset(w, 0, sizeof *w);
    c->w = w;
    c->rank = r;
    c->size = n;
    memset(&d, 0, sizeof d);
    d.name = "sim";
    d.rank = r;
    d.size = n;
    d.user = c;
    d.sendrecv = sim_sendrecv;
    d.split = sim_split;
    d.allgatherv = sim_allgatherv;
    d.alltoallv = sim_alltoallv;
    d.allreduce = sim_allreduce;
    d.reduce_scatter = sim_reduce_scatter;
    d.broadcast = sim_broadcast;
    d.barrier = sim_barrier;
    d.destroy = sim_destroy;
    CHECK(dt_comm_custom(&d, comm));
    memset(&md, 0, sizeof md);
    md.ndim = ndim;
    w->nq = 0;
    w->iq = 0;
    w->queue[w->nq++] = n;
    for (i = 0; i < ndim; i++) { md.shape[i] = shape[i]; w->queue[w->nq++] = shape[i]; }
    CHECK(dt_mesh_create(*comm, &md, mesh));
    if (w->iq != w->nq) { fprintf(stderr, "bench_planner: %d splits, %d expected\n", w->iq, w->nq); exit(1); }
}

/* ------------------------------------------------------------ the lower bound */

/* torch.chunk: part r of n split k ways, nested in mesh-dim order */
static void lb_box(int nd, const int64_t *g, int mnd, const int *ms, const int *coord, const dt_placement *pl,
                   int64_t *lo, int64_t *ext) {
    int d, i;
    for (d = 0; d < nd; d++) { lo[d] = 0; ext[d] = g[d]; }
    for (i = 0; i < mnd; i++)
        if (pl[i].kind == DT_SHARD) {
            int64_t n = ext[pl[i].dim], c = (n + ms[i] - 1) / ms[i], a = c * coord[i], b = a + c;
            if (a > n) a = n;
            if (b > n) b = n;
            lo[pl[i].dim] += a;
            ext[pl[i].dim] = b - a;
        }
}

static int64_t lb_numel(int nd, const int64_t *ext) {
    int64_t n = 1;
    int d;
    for (d = 0; d < nd; d++) n *= ext[d];
    return n;
}

static int64_t lb_overlap(int nd, const int64_t *alo, const int64_t *aext, const int64_t *blo, const int64_t *bext) {
    int64_t n = 1;
    int d;
    for (d = 0; d < nd; d++) {
        int64_t lo = alo[d] > blo[d] ? alo[d] : blo[d];
        int64_t ha = alo[d] + aext[d], hb = blo[d] + bext[d], hi = ha < hb ? ha : hb;
        n *= hi > lo ? hi - lo : 0;
    }
    return n;
}

/* the bound in bytes for the rank at `coord` (see the top of the file) */
static double lower_bound(int nd, const int64_t *g, int mnd, const int *ms, const int *coord, const dt_placement *src,
                          const dt_placement *dst, size_t es) {
    int64_t slo[DT_MAX_DIMS], sext[DT_MAX_DIMS], dlo[DT_MAX_DIMS], dext[DT_MAX_DIMS], S, D, SD;
    double k = 1, piece;
    int i;
    lb_box(nd, g, mnd, ms, coord, src, slo, sext);
    lb_box(nd, g, mnd, ms, coord, dst, dlo, dext);
    S = lb_numel(nd, sext);
    D = lb_numel(nd, dext);
    SD = lb_overlap(nd, slo, sext, dlo, dext);
    for (i = 0; i < mnd; i++)
        if (src[i].kind == DT_PARTIAL && !(dst[i].kind == DT_PARTIAL && dst[i].reduce == src[i].reduce)) k *= ms[i];
    if (k == 1) return (double)(D - SD) * (double)es;
    piece = (double)S / k;
    return ((k - 1) / k * (double)S + (double)D - (piece < (double)SD ? piece : (double)SD)) * (double)es;
}

/* ------------------------------------------------------------ meshes and cases */

#define NSIM 3
#define MAXCASES 8

static void mesh_shape(int n, int ndim, int *shape) {
    int e = 0, i;
    while ((1 << e) < n) e++;
    for (i = 0; i < ndim; i++) shape[i] = 1 << (e / ndim + (i < e % ndim));
}

typedef struct tcase {
    const char *src, *dst;  /* placements, "S0 S1", "R", "P" per mesh dim */
    int mult[4], add[4];    /* tensor dim k = mult[k] * base + add[k]      */
    int ndim;               /* tensor rank                                 */
    const char *tag;        /* "", " uneven"                               */
} tcase;

/* per mesh rank 1..4; base = the largest mesh dim (1-D: N) */
static const tcase cases[4][MAXCASES] = {
    {{"S0", "R", {2, 0}, {0, 8}, 2, ""},
     {"S0", "S1", {1, 1}, {0, 0}, 2, ""},
     {"P", "R", {0, 0}, {16, 16}, 2, ""},
     {"P", "S0", {1, 0}, {0, 4}, 2, ""},
     {"R", "S0", {2, 0}, {0, 8}, 2, ""},
     {"S0", "S1", {1, 1}, {3, -1}, 2, " uneven"},
     {NULL, NULL, {0}, {0}, 0, NULL}},
    {{"S0 S1", "R S0", {2, 2}, {0, 0}, 2, ""},
     {"S0 R", "S1 R", {2, 2}, {0, 0}, 2, ""},
     {"P S0", "S0 R", {2, 2}, {0, 0}, 2, ""},
     {"S0 S1", "S1 S0", {2, 2}, {0, 0}, 2, ""},
     {"P P", "R R", {0, 0}, {16, 16}, 2, ""},
     {"S0 S1", "R S0", {2, 2}, {3, -1}, 2, " uneven"},
     {NULL, NULL, {0}, {0}, 0, NULL}},
    {{"S0 S1 S2", "R S0 S1", {2, 2, 2}, {0, 0, 0}, 3, ""},
     {"S0 R R", "S1 R R", {2, 2, 2}, {0, 0, 0}, 3, ""},
     {"P S0 S1", "S0 S1 R", {2, 2, 2}, {0, 0, 0}, 3, ""},
     {"S0 S1 S2", "S2 S1 S0", {2, 2, 2}, {0, 0, 0}, 3, ""},
     {"S0 S1 S2", "R R R", {2, 2, 2}, {0, 0, 0}, 3, ""},
     {"S0 S1 S2", "R S0 S1", {2, 2, 2}, {3, -1, 1}, 3, " uneven"},
     {NULL, NULL, {0}, {0}, 0, NULL}},
    {{"S0 S1 S2 S3", "R S0 S1 S2", {2, 2, 2, 2}, {0, 0, 0, 0}, 4, ""},
     {"S0 R R R", "S1 R R R", {2, 2, 2, 2}, {0, 0, 0, 0}, 4, ""},
     {"P S0 S1 S2", "S0 S1 S2 R", {2, 2, 2, 2}, {0, 0, 0, 0}, 4, ""},
     {"S0 S1 S2 S3", "S3 S2 S1 S0", {2, 2, 2, 2}, {0, 0, 0, 0}, 4, ""},
     {"S0 S1 S2 S3", "R S0 S1 S2", {2, 2, 2, 2}, {3, -1, 1, 0}, 4, " uneven"},
     {NULL, NULL, {0}, {0}, 0, NULL}}};

static void parse_pl(const char *s, int mnd, dt_placement *pl) {
    int i = 0;
    memset(pl, 0, DT_MAX_MESH_DIMS * sizeof *pl);
    while (*s && i < mnd) {
        while (*s == ' ') s++;
        if (*s == 'S') { pl[i++] = dt_shard(s[1] - '0'); s += 2; }
        else if (*s == 'P') { pl[i++] = dt_partial(DT_SUM); s++; }
        else if (*s == 'R') { pl[i++] = dt_replicate(); s++; }
        else s++;
    }
}

/* "S(0)->S(1)" (1-D) or "[S(0);S(1)]->[R;S(0)]"; sep ";" for the csv, ", " for the table */
static void pl_str(const dt_placement *pl, int mnd, const char *sep, char *buf, size_t cap) {
    size_t len = 0;
    int i;
    buf[0] = 0;
    if (mnd > 1) len += (size_t)snprintf(buf + len, cap - len, "[");
    for (i = 0; i < mnd && len < cap; i++) {
        char one[24];
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? sep : "", dt__placement_str(pl[i], -1, one, sizeof one));
    }
    if (mnd > 1 && len < cap) snprintf(buf + len, cap - len, "]");
}

static void case_name(const tcase *tc, int mnd, const char *sep, char *buf, size_t cap) {
    dt_placement s[DT_MAX_MESH_DIMS], d[DT_MAX_MESH_DIMS];
    char a[64], b[64], *p;
    parse_pl(tc->src, mnd, s);
    parse_pl(tc->dst, mnd, d);
    pl_str(s, mnd, sep, a, sizeof a);
    pl_str(d, mnd, sep, b, sizeof b);
    snprintf(buf, cap, "%dd %s->%s%s", mnd, a, b, tc->tag);
    for (p = buf; *p; p++) if (!strncmp(p, "P(sum)", 6)) { memmove(p + 1, p + 6, strlen(p + 6) + 1); }
}

/* a rank off the diagonal: coordinate i is (i+1)/(ndim+1) of the way along
   mesh dim i (N/3 would be (5, 5) on 16x16) */
static int middle_rank(int ndim, const int *shape) {
    int i, r = 0;
    for (i = 0; i < ndim; i++) r = r * shape[i] + shape[i] * (i + 1) / (ndim + 1);
    return r;
}

/* ------------------------------------------------------------ results */

typedef struct result {
    double ours, sent, lb, msgs;    /* max over the simulated ranks */
    double plan_us, call_us;        /* max over the simulated ranks of the medians */
    int involved, exact, steps;
    char plan[96];
} result;

typedef struct op_result {
    double plan_us, cached_us, call_us, recv;
    char strategy[256];
    int agree;
} op_result;

#define NSIZES 6
#define NOPS 4
static const int sizes[NSIZES] = {64, 256, 1024, 4096, 16384, 65536};
static result res[4][NSIZES][MAXCASES];
static op_result ores[4][NSIZES][NOPS];
static double mesh_us[4][NSIZES];
static FILE *csv;

/* ------------------------------------------------------------ timing helpers */

/* What one timed call runs. The machine is shared (the process may get a
   fraction of a core), so a sample is a batch of k calls (>= ~200 us) timed
   by CLOCK_MONOTONIC and kept only if this thread ran for nearly all of it
   (its CPU-time clock advanced >= 95% of the wall time); the backend's
   callbacks are timed inside (CLOCK_MONOTONIC, cheap) and subtracted. The
   result is the median of the kept samples, per call. */
enum { B_PLAN, B_REDIST, B_OP_PLAN, B_OP_CACHED, B_OP_CALL };
static dt_status op_run(int op, dt_tensor *const *in, dt_tensor **out);
/* a copy of a call made ready, its result pointers at its own arrays (as dt__call_init leaves them) */
static void call_copy(dt__call *c, const dt__call *c0) {
    *c = *c0;
    c->res = &c->out;
    c->pub = &c->out_public;
    c->want = c->want_own;
}

typedef struct body {
    int kind, mnd, op;
    const dt_placement *src, *dst;
    dt_tensor *t, **o, **in;
    const dt__call *c0;
    dt_status (*infer)(dt__call *);
} body;

static volatile int sink;

static void body_run(const body *b) {
    dt__plan plan;
    dt__call c;
    switch (b->kind) {
    case B_PLAN:
        dt__plan_build_shaped(b->mnd, b->t->mesh->shape, b->t->desc.ndim, b->t->desc.shape, b->src, b->dst, &plan);
        sink += plan.n;
        break;
    case B_REDIST: CHECK(dt_tensor_redistribute(b->t, b->dst, b->o)); break;
    case B_OP_PLAN: call_copy(&c, b->c0); CHECK(b->infer(&c)); dt__choose(&c); sink += c.out.ndim; break;
    case B_OP_CACHED: call_copy(&c, b->c0); CHECK(dt__propagate(&c, b->infer)); sink += c.cached; break;
    default: CHECK(op_run(b->op, b->in, b->o)); break;
    }
}

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* median us per call of body, minus the backend's time (w may be NULL); under
   --callgrind: `iters` calls, one dump named "planner name|n|what|iters" */
static double time_body(const body *b, sim_world *w, const char *name, int n, const char *what, int iters) {
    enum { KEEP = 15, TRIES = 120 };
    double v[TRIES], all[TRIES], t0, c0, b0, wall, first;
    int k, i, kept = 0, tries = 0;
    if (use_callgrind) {
        char s[200];
        CALLGRIND_ZERO_STATS;
        for (i = 0; i < iters; i++) body_run(b);
        snprintf(s, sizeof s, "planner %s|%d|%s|%d", name, n, what, iters);
        CALLGRIND_DUMP_STATS_AT(s);
        return 0;
    }
    t0 = now();
    body_run(b);
    first = now() - t0;
    k = first > 0 ? (int)(2e-4 / first) : 1000;
    if (k < 1) k = 1;
    if (k > 5000) k = 5000;
    while (kept < KEEP && tries < TRIES) {
        b0 = w ? w->t_backend : 0;
        c0 = cpu_now();
        t0 = now();
        for (i = 0; i < k; i++) body_run(b);
        wall = now() - t0;
        all[tries] = (wall - (w ? w->t_backend - b0 : 0)) / k * 1e6;
        if (cpu_now() - c0 >= 0.95 * wall) v[kept++] = all[tries];
        tries++;
    }
    return kept >= 3 ? median(v, kept) : median(all, tries);
}

/* ------------------------------------------------------------ one redistribution */

static void plan_desc(const dt_mesh *m, const dt__plan *p, char *buf, size_t cap, int *involved) {
    static const char *const kinds[] = {"slice", "allgather", "all-to-all", "exchange", "allreduce",
                                        "reduce-scatter", "to-partial"};
    size_t len = 0;
    int k;
    *involved = 1;
    buf[0] = 0;
    for (k = 0; k < p->n && len < cap; k++) {
        const dt__step *s = &p->s[k];
        int g = s->kind == DT__SLICE || s->kind == DT__TO_PARTIAL ? 1 : s->mdim < 0 ? m->size : m->shape[s->mdim];
        if (g > *involved) *involved = g;
        if (s->mdim < 0) len += (size_t)snprintf(buf + len, cap - len, "%s%s", k ? "+" : "", kinds[s->kind]);
        else len += (size_t)snprintf(buf + len, cap - len, "%s%s@%d", k ? "+" : "", kinds[s->kind], s->mdim);
    }
    if (!p->n) snprintf(buf, cap, "none");
}

static void run_case(sim_world *w, dt_comm *comm, dt_mesh *m, const tcase *tc, int si, int sim, result *r,
                     const char *name) {
    int mnd = m->ndim, base = 0, i, coord[DT_MAX_MESH_DIMS];
    dt_tensor_desc d;
    dt_placement dst[DT_MAX_MESH_DIMS];
    dt_tensor *t = NULL, *o = NULL;
    dt_comm_stats cs;
    dt__plan plan;
    double lb;
    uint64_t recv;
    int partial = 0;
    for (i = 0; i < mnd; i++) if (m->shape[i] > base) base = m->shape[i];
    memset(&d, 0, sizeof d);
    d.dtype = DT_F32;
    d.ndim = tc->ndim;
    for (i = 0; i < tc->ndim; i++) d.shape[i] = (int64_t)tc->mult[i] * base + tc->add[i];
    parse_pl(tc->src, mnd, d.placements);
    parse_pl(tc->dst, mnd, dst);
    for (i = 0; i < mnd; i++) partial |= d.placements[i].kind == DT_PARTIAL;
    CHECK(dt_tensor_zeros(m, &d, &t));
    CHECK(dt_tensor_redistribute(t, dst, &o)); /* warm-up: the output and the scratch buffers */
    /* one counted call */
    sim_reset(w);
    dt_comm_reset_stats(comm);
    CHECK(dt_tensor_redistribute(t, dst, &o));
    dt_comm_get_stats(comm, &cs);
    dt_mesh_coordinate(m, coord);
    lb = lower_bound(d.ndim, d.shape, mnd, m->shape, coord, d.placements, dst, 4);
    recv = w->recv;
    if (!partial && ((double)recv != lb || (double)cs.bytes_recv != lb)) {
        fprintf(stderr, "FAIL %s at %d ranks, rank %d: received %llu (library stats %llu), lower bound %.0f\n", name,
                m->size, m->rank, (unsigned long long)recv, (unsigned long long)cs.bytes_recv, lb);
        failures++;
        r->exact = 0;
    }
    if ((double)recv > r->ours) r->ours = (double)recv;
    if ((double)w->sent > r->sent) r->sent = (double)w->sent;
    if ((double)w->msgs > r->msgs) r->msgs = (double)w->msgs;
    if (lb > r->lb) r->lb = lb;
    dt__plan_build_shaped(mnd, m->shape, d.ndim, d.shape, d.placements, dst, &plan);
    plan_desc(m, &plan, r->plan, sizeof r->plan, &r->involved);
    r->steps = plan.n;
    /* timing: every simulated rank (callgrind: the middle one only) */
    if (!use_callgrind || sim == 1) {
        body bd;
        double us;
        memset(&bd, 0, sizeof bd);
        bd.kind = B_PLAN;
        bd.mnd = mnd;
        bd.src = d.placements;
        bd.dst = dst;
        bd.t = t;
        us = time_body(&bd, NULL, name, m->size, "plan", 2000);
        if (us > r->plan_us) r->plan_us = us;
        bd.kind = B_REDIST;
        bd.t = t;
        bd.o = &o;
        us = time_body(&bd, w, name, m->size, "call", 3);
        if (us > r->call_us) r->call_us = us;
    }
    (void)si;
    dt_tensor_destroy(o);
    dt_tensor_destroy(t);
}

/* ------------------------------------------------------------ ops */

static const char *const op_names[NOPS] = {"dt_matmul", "dt_linear", "dt_add", "dt_sum"};
static const char *const op_args[NOPS] = {"a[S(0);S(1)] b[S(0);S(1)]", "x[S(0);R] w[R;S(0)] bias[R;S(0)]",
                                          "a[S(0);S(1)] b[S(1);S(0)]", "x[S(0);S(1)] dim 0"};

static dt_tensor *op_tensor(dt_mesh *m, int ndim, int64_t n, const char *pl) {
    dt_tensor_desc d;
    dt_tensor *t = NULL;
    memset(&d, 0, sizeof d);
    d.dtype = DT_F32;
    d.ndim = ndim;
    d.shape[0] = d.shape[1] = n;
    parse_pl(pl, m->ndim, d.placements);
    CHECK(dt_tensor_zeros(m, &d, &t));
    return t;
}

/* the dt__call the public op builds, and its shape inference */
static void op_call(int op, dt_tensor *const *in, dt__call *c, dt_status (**infer)(dt__call *)) {
    static const int dim0 = 0;
    switch (op) {
    case 0:
        dt__call_init(c, DT__OP_MATMUL, "dt_matmul");
        CHECK(dt__call_in(c, in[0], "a", 0)); CHECK(dt__call_in(c, in[1], "b", 0)); CHECK(dt__call_check(c));
        dt__call_arg(c, 0);
        *infer = dt__infer_matmul;
        break;
    case 1:
        dt__call_init(c, DT__OP_LINEAR, "dt_linear");
        CHECK(dt__call_in(c, in[0], "x", 0)); CHECK(dt__call_in(c, in[1], "w", 0));
        CHECK(dt__call_in(c, in[2], "bias", 1)); CHECK(dt__call_check(c));
        dt__call_arg(c, 1);
        *infer = dt__infer_matmul;
        break;
    case 2:
        dt__call_init(c, DT__OP_ADD, "dt_add");
        CHECK(dt__call_in(c, in[0], "a", 0)); CHECK(dt__call_in(c, in[1], "b", 0)); CHECK(dt__call_check(c));
        *infer = dt__infer_binary;
        break;
    default:
        CHECK(dt__reduce_call(DT__OP_SUM, "dt_sum", in[0], 1, &dim0, 0, c));
        *infer = dt__infer_reduce;
        break;
    }
}

static dt_status op_run(int op, dt_tensor *const *in, dt_tensor **out) {
    static const int dim0 = 0;
    switch (op) {
    case 0: return dt_matmul(in[0], in[1], out);
    case 1: return dt_linear(in[0], in[1], in[2], out);
    case 2: return dt_add(in[0], in[1], out);
    default: return dt_sum(in[0], 1, &dim0, 0, out);
    }
}

static void run_op(sim_world *w, dt_mesh *m, int op, int sim, op_result *r) {
    dt_tensor *in[3] = {NULL, NULL, NULL}, *out = NULL;
    int64_t n = 0;
    int i;
    dt__call c0, c;
    dt_status (*infer)(dt__call *) = NULL;
    char s[256], a[96], name[96];
    size_t len = 0;
    for (i = 0; i < m->ndim; i++) if (2 * m->shape[i] > n) n = 2 * m->shape[i];
    switch (op) {
    case 0: in[0] = op_tensor(m, 2, n, "S0 S1"); in[1] = op_tensor(m, 2, n, "S0 S1"); break;
    case 1: in[0] = op_tensor(m, 2, n, "S0 R"); in[1] = op_tensor(m, 2, n, "R S0"); in[2] = op_tensor(m, 1, n, "R S0"); break;
    case 2: in[0] = op_tensor(m, 2, n, "S0 S1"); in[1] = op_tensor(m, 2, n, "S1 S0"); break;
    default: in[0] = op_tensor(m, 2, n, "S0 S1"); break;
    }
    snprintf(name, sizeof name, "%dd %s", m->ndim, op_names[op]);
    /* the uncached choice */
    op_call(op, in, &c0, &infer);
    call_copy(&c, &c0);
    CHECK(infer(&c));
    dt__choose(&c);
    for (i = 0; i < c.nin; i++) {
        if (!c.in[i].d) continue;
        pl_str(c.want[i], m->ndim, ",", a, sizeof a);
        len += (size_t)snprintf(s + len, sizeof s - len, "%s%s", len ? " " : "", a);
    }
    pl_str(c.out.placements, m->ndim, ",", a, sizeof a);
    snprintf(s + len, sizeof s - len, " -> %s", a);
    if (sim == 0) { snprintf(r->strategy, sizeof r->strategy, "%s", s); r->agree = 1; }
    else if (strcmp(s, r->strategy)) {
        fprintf(stderr, "FAIL %s at %d ranks: rank %d chooses %s, rank 0 %s\n", name, m->size, m->rank, s, r->strategy);
        r->agree = 0;
        failures++;
    }
    CHECK(op_run(op, in, &out)); /* first call: chooses, caches, allocates */
    sim_reset(w);
    CHECK(op_run(op, in, &out));
    if ((double)w->recv > r->recv) r->recv = (double)w->recv;
    if (!use_callgrind || sim == 1) {
        body bd;
        double us;
        memset(&bd, 0, sizeof bd);
        bd.c0 = &c0;
        bd.infer = infer;
        bd.op = op;
        bd.in = in;
        bd.o = &out;
        bd.kind = B_OP_PLAN;
        us = time_body(&bd, NULL, name, m->size, "plan", 500);
        if (us > r->plan_us) r->plan_us = us;
        bd.kind = B_OP_CACHED;
        us = time_body(&bd, NULL, name, m->size, "cached", 500);
        if (us > r->cached_us) r->cached_us = us;
        bd.kind = B_OP_CALL;
        us = time_body(&bd, w, name, m->size, "call", 3);
        if (us > r->call_us) r->call_us = us;
    }
    dt_tensor_destroy(out);
    for (i = 0; i < 3; i++) dt_tensor_destroy(in[i]);
}

/* ------------------------------------------------------------ driver */

static double expo(double t1, double t2, double i1, double i2) {
    if (i1 <= 0 || i2 <= 0 || i1 == i2 || t1 <= 0 || t2 <= 0) return NAN;
    return log(t2 / t1) / log(i2 / i1);
}

static void fmt_bytes(double b, char *buf, size_t cap) {
    if (b >= 10 * 1048576.0) snprintf(buf, cap, "%.1fM", b / 1048576.0);
    else if (b >= 10 * 1024.0) snprintf(buf, cap, "%.1fK", b / 1024.0);
    else snprintf(buf, cap, "%.0f", b);
}

int main(int argc, char **argv) {
    int max_ranks = 65536, mnd, si, ci, sim, i;
    const char *csv_path = NULL, *dims = "1234";
    double t_start = now(), worst_exp = -1e9, range_exp = -1e9, plan_max = 0, op_plan_max = 0, op_cached_max = 0;
    char worst[200] = "", range[200] = "";
    int plan_max_at = 0;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) max_ranks = 4096;
        else if (!strcmp(argv[i], "--max-ranks") && i + 1 < argc) max_ranks = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
        else if (!strcmp(argv[i], "--callgrind")) use_callgrind = 1;
        else if (!strcmp(argv[i], "--dims") && i + 1 < argc) dims = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--quick] [--max-ranks N] [--dims 1234] [--csv FILE] [--callgrind]\n", argv[0]);
            return 2;
        }
    }
    if (csv_path && !(csv = fopen(csv_path, "a"))) { fprintf(stderr, "cannot open %s\n", csv_path); return 2; }
    printf("# dtensor.h %d.%d.%d planner at scale, simulated: one process plays ranks 0, a middle one, N-1 of N through a\n"
           "# counting dt_comm_custom backend. B = bytes received by a rank (max over the simulated ranks; sent in\n"
           "# parentheses where it differs), LB = lower bound, plan = dt__plan_build_shaped us, call =\n"
           "# dt_tensor_redistribute us minus the backend's callbacks, exp = d ln(call) / d ln(involved) (d: data-bound).\n",
           DTENSOR_VERSION_MAJOR, DTENSOR_VERSION_MINOR, DTENSOR_VERSION_PATCH);
    for (mnd = 1; mnd <= 4; mnd++) {
        int nsz = 0;
        if (!strchr(dims, '0' + mnd)) continue;
        for (si = 0; si < NSIZES && sizes[si] <= max_ranks; si++) {
            int n = sizes[si], shape[DT_MAX_MESH_DIMS];
            nsz++;
            mesh_shape(n, mnd, shape);
            for (sim = 0; sim < NSIM; sim++) {
                int r = sim == 0 ? 0 : sim == 1 ? middle_rank(mnd, shape) : n - 1;
                sim_world w;
                dt_comm *comm = NULL;
                dt_mesh *m = NULL;
                double mu[20], mesh;
                int k, kept = 0;
                for (k = 0; k < 20 && kept < 5; k++) { /* the comm and the mesh, minus the backend's time:
                                                          median of 5 runs this thread was not descheduled in */
                    double t0, c0, wall;
                    if (m) { dt_mesh_destroy(m); dt_comm_destroy(comm); }
                    c0 = cpu_now();
                    t0 = now();
                    sim_mesh(&w, r, n, mnd, shape, &comm, &m);
                    wall = now() - t0;
                    if (cpu_now() - c0 >= 0.9 * wall || k >= 15) mu[kept++] = (wall - w.t_backend) * 1e6;
                }
                mesh = median(mu, kept);
                if (mesh > mesh_us[mnd - 1][si]) mesh_us[mnd - 1][si] = mesh;
                for (ci = 0; cases[mnd - 1][ci].src; ci++) {
                    char name[160];
                    result *rr = &res[mnd - 1][si][ci];
                    if (sim == 0) { memset(rr, 0, sizeof *rr); rr->exact = 1; }
                    case_name(&cases[mnd - 1][ci], mnd, ";", name, sizeof name);
                    run_case(&w, comm, m, &cases[mnd - 1][ci], si, sim, rr, name);
                }
                if (mnd >= 2)
                    for (ci = 0; ci < NOPS; ci++) {
                        if (sim == 0) memset(&ores[mnd - 1][si][ci], 0, sizeof ores[0][0][0]);
                        run_op(&w, m, ci, sim, &ores[mnd - 1][si][ci]);
                    }
                dt_mesh_destroy(m);
                dt_comm_destroy(comm);
            }
        }
        /* the table of this mesh rank: case by case, size by size */
        printf("\n## %d-D meshes\n", mnd);
        printf("%-6s %-12s %9s\n", "ranks", "mesh", "mesh us");
        for (si = 0; si < nsz; si++) {
            int shape[DT_MAX_MESH_DIMS];
            char ms[48];
            size_t len = 0;
            mesh_shape(sizes[si], mnd, shape);
            for (i = 0; i < mnd; i++) len += (size_t)snprintf(ms + len, sizeof ms - len, "%s%d", i ? "x" : "", shape[i]);
            printf("%-6d %-12s %9.1f\n", sizes[si], ms, mesh_us[mnd - 1][si]);
            if (csv) fprintf(csv, "planner-time,%dd mesh_create,%d,ours,%.3f,us\n", mnd, sizes[si], mesh_us[mnd - 1][si]);
        }
        for (ci = 0; cases[mnd - 1][ci].src; ci++) {
            char name[160], cname[160];
            case_name(&cases[mnd - 1][ci], mnd, ", ", name, sizeof name);
            case_name(&cases[mnd - 1][ci], mnd, ";", cname, sizeof cname);
            printf("\n%s   (plan at %d ranks: %s)\n", name, sizes[nsz - 1], res[mnd - 1][nsz - 1][ci].plan);
            printf("  %-6s %6s %14s %9s %6s %7s %7s %9s %6s\n", "ranks", "inv", "B", "LB", "B/LB", "msgs", "plan us",
                   "call us", "exp");
            for (si = 0; si < nsz; si++) {
                result *r = &res[mnd - 1][si][ci];
                char b[24], s[24], bb[64], l[24], ratio[16], e[16];
                int databound;
                double x = si ? expo(res[mnd - 1][si - 1][ci].call_us, r->call_us, res[mnd - 1][si - 1][ci].involved,
                                     r->involved)
                              : NAN;
                fmt_bytes(r->ours, b, sizeof b);
                fmt_bytes(r->sent, s, sizeof s);
                fmt_bytes(r->lb, l, sizeof l);
                if (r->sent != r->ours) snprintf(bb, sizeof bb, "%s (%s)", b, s);
                else snprintf(bb, sizeof bb, "%s", b);
                if (r->lb > 0) snprintf(ratio, sizeof ratio, "%.3f", r->ours / r->lb);
                else snprintf(ratio, sizeof ratio, r->ours > 0 ? "inf" : "-");
                /* data-bound ("d"): the bytes a rank receives grew (1.25x) faster than the
                   ranks involved, so the data, not the rank count, drives the time */
                databound = si && r->ours > 1.25 * res[mnd - 1][si - 1][ci].ours * r->involved /
                                                (double)res[mnd - 1][si - 1][ci].involved;
                if (isnan(x)) snprintf(e, sizeof e, "-");
                else snprintf(e, sizeof e, "%.2f%s", x, databound ? "d" : "");
                printf("  %-6d %6d %14s %9s %6s %7.0f %7.3f %9.1f %6s%s\n", sizes[si], r->involved, bb, l, ratio, r->msgs,
                       r->plan_us, r->call_us, e, r->exact ? "" : "  NOT EXACT");
                if (!isnan(x) && !databound && r->call_us >= 5 && x > worst_exp) {
                    worst_exp = x;
                    snprintf(worst, sizeof worst, "%s at %d ranks", name, sizes[si]);
                }
                if (!plan_max_at || r->plan_us > plan_max) { plan_max = r->plan_us; plan_max_at = sizes[si]; }
                /* over the whole range from 1024 ranks (the cache sizes make single steps noisy) */
                if (si == nsz - 1 && nsz > 2 && sizes[si] > 1024) {
                    const result *r0 = &res[mnd - 1][2][ci];
                    double y = expo(r0->call_us, r->call_us, r0->involved, r->involved);
                    if (!isnan(y) && r0->call_us >= 1 && r->ours <= 1.25 * r0->ours * r->involved / (double)r0->involved &&
                        y > range_exp) {
                        range_exp = y;
                        snprintf(range, sizeof range, "%s", name);
                    }
                }
                if (csv) {
                    fprintf(csv, "planner,%s,%d,ours,%.0f,B\nplanner,%s,%d,peer,%.0f,B\n", cname, sizes[si], r->ours,
                            cname, sizes[si], r->lb);
                    fprintf(csv, "planner-time,%s [plan],%d,ours,%.4f,us\nplanner-time,%s [call],%d,ours,%.3f,us\n", cname,
                            sizes[si], r->plan_us, cname, sizes[si], r->call_us);
                }
            }
        }
        if (mnd >= 2) {
            printf("\nops on (2b, 2b) f32 operands (b = largest mesh dim; mesh dims past the 2nd Replicate)\n");
            for (ci = 0; ci < NOPS; ci++) {
                printf("\n%dd %s %s\n  chosen at %d ranks: %s\n", mnd, op_names[ci], op_args[ci], sizes[nsz - 1],
                       ores[mnd - 1][nsz - 1][ci].strategy);
                printf("  %-6s %12s %9s %9s %9s %6s\n", "ranks", "B recv", "plan us", "cached us", "call us", "exp");
                for (si = 0; si < nsz; si++) {
                    op_result *r = &ores[mnd - 1][si][ci];
                    char b[32], e[16];
                    double x = si ? expo(ores[mnd - 1][si - 1][ci].call_us, r->call_us, sizes[si - 1], sizes[si]) : NAN;
                    fmt_bytes(r->recv, b, sizeof b);
                    if (isnan(x)) snprintf(e, sizeof e, "-");
                    else snprintf(e, sizeof e, "%.2f", x);
                    if (r->plan_us > op_plan_max) op_plan_max = r->plan_us;
                    if (r->cached_us > op_cached_max) op_cached_max = r->cached_us;
                    printf("  %-6d %12s %9.3f %9.3f %9.1f %6s%s\n", sizes[si], b, r->plan_us, r->cached_us, r->call_us, e,
                           strcmp(r->strategy, ores[mnd - 1][nsz - 1][ci].strategy) ? "  (other strategy)" : "");
                    if (csv)
                        fprintf(csv,
                                "planner-time,%dd %s [plan],%d,ours,%.4f,us\nplanner-time,%dd %s [cached],%d,ours,%.4f,us\n"
                                "planner-time,%dd %s [call],%d,ours,%.3f,us\n",
                                mnd, op_names[ci], sizes[si], r->plan_us, mnd, op_names[ci], sizes[si], r->cached_us, mnd,
                                op_names[ci], sizes[si], r->call_us);
                }
            }
        }
        fflush(stdout);
    }
    if (!use_callgrind) {
        printf("\nsummary: a redistribution plan takes at most %.3f us (at %d ranks); an op's uncached strategy choice at\n"
               "most %.3f us, a cached one %.3f us\n", plan_max, plan_max_at, op_plan_max, op_cached_max);
        if (worst[0])
            printf("largest call-time exponent between successive sizes (calls of 5 us or more, not data-bound): %.2f\n"
                   "  (%s)\n", worst_exp, worst);
        if (range[0])
            printf("largest call-time exponent from 1024 ranks to the largest size (not data-bound): %.2f\n  (%s)\n",
                   range_exp, range);
    }
    printf("total %.1f s, %d failure(s)\n", now() - t_start, failures);
    if (csv) fclose(csv);
    return failures ? 1 : 0;
}
