/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_inflight.c -- exchanges of different kinds in flight together.

   Two redistributions begun (dt_tensor_redistribute_begin: their messages
   posted in _begin) and a halo exchange begun (dt_halo_exchange_begin),
   all outstanding at once, with a streamed matmul (its panels started
   messages too) run while they are. The halo's _begin and _end take no
   collective (DTENSOR_CHECK off), so ranks may order them differently
   against the redistributions: even ranks begin the halo first and end it
   last, odd ranks the other way round. Each kind's messages carry their
   own tag (dt_message.tag), so no receive can take another exchange's
   message; with one tag for all, an odd rank's first receive from an even
   neighbour would take that neighbour's halo face. Every result is checked
   against a closed-form global function of the index, at every rank count
   (uneven and empty shards). */
#define _POSIX_C_SOURCE 200112L /* setenv */
#define DTENSOR_IMPLEMENTATION
#include "dt_test.h"

static double fval(int64_t g) { return (double)(g % 997) * 0.25 - 3.0; }

/* [n0, n1] of fval, placed [p0, p1] on the 2-D mesh m */
static dt_tensor *make_full(dt_mesh *m, int64_t n0, int64_t n1, dt_placement p0, dt_placement p1)
{
    dt_tensor_desc d;
    dt_tensor *t = NULL;
    double *full = (double *)dtt_malloc((size_t)(n0 * n1) * sizeof(double));
    int64_t g;
    for (g = 0; g < n0 * n1; g++) full[g] = fval(g);
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = 2;
    d.shape[0] = n0;
    d.shape[1] = n1;
    d.placements[0] = p0;
    d.placements[1] = p1;
    CHECK_OK(dt_tensor_distribute(m, &d, full, DT_SRC_ALL, &t));
    free(full);
    return t;
}

static void check_full(const dt_tensor *t, int64_t n, const char *what)
{
    double *full = (double *)dtt_malloc((size_t)n * sizeof(double) + 8);
    int64_t g;
    if (t && dt_tensor_gather(t, full) == DT_OK) {
        for (g = 0; g < n; g++)
            if (full[g] != fval(g)) {
                CHECK(0, "%s: element %lld = %g want %g", what, (long long)g, full[g], fval(g));
                break;
            }
    } else {
        CHECK(0, "%s: no tensor, or its gather failed: %s", what, dt_last_error());
    }
    free(full);
}

/* every ghost and interior cell of h (periodic, width 1, corners) */
static void check_halo(const dt_tensor *h, int64_t n0, int64_t n1)
{
    int64_t gs[2], lo[2], i, j;
    const double *gd = (const double *)dt_tensor_ghosted_data(h, gs);
    dt_tensor_local_offset(h, lo);
    for (i = 0; gd && i < gs[0]; i++)
        for (j = 0; j < gs[1]; j++) {
            int64_t g0 = ((lo[0] + i - 1) % n0 + n0) % n0, g1 = ((lo[1] + j - 1) % n1 + n1) % n1;
            if (gd[i * gs[1] + j] != fval(g0 * n1 + g1)) {
                CHECK(0, "halo: ghosted (%lld, %lld) = %g want %g", (long long)i, (long long)j, gd[i * gs[1] + j],
                      fval(g0 * n1 + g1));
                return;
            }
        }
}

/* c = a @ b checked against the product of the closed forms */
static void check_matmul(const dt_tensor *c, int64_t m, int64_t k, int64_t n)
{
    double *full = (double *)dtt_malloc((size_t)(m * n) * sizeof(double));
    int64_t i, j, l;
    if (c && dt_tensor_gather(c, full) == DT_OK) {
        for (i = 0; i < m; i++)
            for (j = 0; j < n; j++) {
                double want = 0;
                for (l = 0; l < k; l++) want += fval(i * k + l) * fval(l * n + j);
                if (full[i * n + j] != want) {
                    CHECK(0, "matmul (%lld, %lld) = %g want %g", (long long)i, (long long)j, full[i * n + j], want);
                    free(full);
                    return;
                }
            }
    } else {
        CHECK(0, "matmul: no result, or its gather failed: %s", dt_last_error());
    }
    free(full);
}

static void run(dt_mesh *m, int me, int round)
{
    int np = dt_mesh_size(m), halo_first = (me + round) % 2 == 0;
    int64_t h0 = 3 * np + 2, h1 = 6, a0 = 29, a1 = 3 * np + 1, b0 = 2 * np + 5, b1 = 11;
    dt_placement s0 = dt_shard(0), s1 = dt_shard(1);
    dt_tensor *h = make_full(m, h0, h1, s0, s1);
    dt_tensor *a = make_full(m, a0, a1, s0, s1), *b = make_full(m, b0, b1, s1, s0);
    dt_tensor *ma = make_full(m, 9, 7, s0, s1), *mb = make_full(m, 7, 5, s0, s1);
    dt_tensor *ra = NULL, *rb = NULL, *mc = NULL;
    dt_placement sa[DT_MAX_MESH_DIMS], sb[DT_MAX_MESH_DIMS];
    dt_halo_desc hd;
    memset(sa, 0, sizeof sa);
    memset(sb, 0, sizeof sb);
    sa[0] = s1; /* whole-mesh piece exchanges: on the halo's communicator (the mesh's) */
    sa[1] = s0;
    sb[0] = s0;
    sb[1] = s1;
    memset(&hd, 0, sizeof hd);
    hd.width[0] = hd.width[1] = 1;
    hd.boundary[0] = hd.boundary[1] = DT_BOUNDARY_PERIODIC;
    hd.corners = 1;
    dtt_ctx("round %d, %s", round, halo_first ? "halo first" : "halo last");
    if (!h || !a || !b || !ma || !mb) goto done;
    CHECK_OK(dt_tensor_set_halo(h, &hd));
    if (halo_first) CHECK_OK(dt_halo_exchange_begin(h));
    CHECK_OK(dt_tensor_redistribute_begin(a, sa, &ra));
    CHECK_OK(dt_tensor_redistribute_begin(b, sb, &rb));
    if (!halo_first) CHECK_OK(dt_halo_exchange_begin(h));
    CHECK_OK(dt_matmul(ma, mb, &mc)); /* panels (streamed) while all three are in flight */
    if (!halo_first) CHECK_OK(dt_halo_exchange_end(h));
    if (ra) CHECK_OK(dt_tensor_redistribute_end(ra));
    if (rb) CHECK_OK(dt_tensor_redistribute_end(rb));
    if (halo_first) CHECK_OK(dt_halo_exchange_end(h));
    check_halo(h, h0, h1);
    check_full(ra, a0 * a1, "a [S(0), S(1)] -> [S(1), S(0)]");
    check_full(rb, b0 * b1, "b [S(1), S(0)] -> [S(0), S(1)]");
    check_matmul(mc, 9, 7, 5);
done:
    dt_tensor_destroy(mc);
    dt_tensor_destroy(rb);
    dt_tensor_destroy(ra);
    dt_tensor_destroy(mb);
    dt_tensor_destroy(ma);
    dt_tensor_destroy(b);
    dt_tensor_destroy(a);
    dt_tensor_destroy(h);
}

int main(int argc, char **argv)
{
    dt_comm *c = NULL;
    dt_mesh *m = NULL;
    dt_mesh_desc md;
    int round;
    dtt_init(&argc, &argv, "inflight");
    setenv("DTENSOR_SHM", "0", 1);         /* messages, not the shared arena */
    unsetenv("DTENSOR_CHECK");             /* the halo calls take no collective */
    setenv("DTENSOR_MATMUL", "stream", 1); /* the matmul's panels as started messages */
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &c));
    memset(&md, 0, sizeof md);
    md.ndim = 2; /* p x q, p the largest factor of the ranks up to their square root's double */
    for (md.shape[0] = dtt_np; md.shape[0] > 1 && (dtt_np % md.shape[0] || md.shape[0] * md.shape[0] > 2 * dtt_np);)
        md.shape[0]--;
    md.shape[1] = dtt_np / md.shape[0];
    if (c) CHECK_OK(dt_mesh_create(c, &md, &m));
    for (round = 0; m && round < 2; round++) run(m, dtt_rank, round);
    dt_mesh_destroy(m);
    dt_comm_destroy(c);
    return dtt_finish();
}
