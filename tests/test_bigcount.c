/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  own
*/
/* test_bigcount.c -- the MPI backend's paths for messages past an int count.

   A real 2 GiB message per rank does not fit a test run, so this test lowers
   the limits (DT__COUNT_MAX: the largest count or displacement one
   MPI call takes, DT__MPI_PIECE: the piece size of long point-to-point
   messages, DT__RING_MIN: the block size from which reduce_scatter goes
   round the backend's ring, DT__RING_PIECE: the ring's piece) to a few
   hundred bytes or less. Then every collective past the limit is
   declined by the backend and done by the library over sendrecv, each
   sendrecv is cut into pieces, and allreduce/broadcast run in chunks --
   the same code paths a >2 GiB tensor takes. Values, layouts and the byte
   lower bound are checked as in test_redistribute. */
#define DT__COUNT_MAX ((size_t)300)
#define DT__MPI_PIECE ((size_t)200)
#define DT__RING_MIN ((size_t)64)
#define DT__RING_PIECE ((size_t)40)
#define DTENSOR_IMPLEMENTATION
#include "dt_test.h"

static void run_set(dtt_mesh *m)
{
    static const int64_t sh2[2] = { 37, 29 }, sh3[3] = { 9, 7, 11 };
    dt_placement a[DT_MAX_MESH_DIMS], b[DT_MAX_MESH_DIMS];
    int k;
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    if (m->nd == 1) {
        dt_placement s0 = dt_shard(0), s1 = dt_shard(1), r = dt_replicate(), p = dt_partial(DT_SUM);
        const dt_placement pairs[][2] = { { s0, r }, { s0, s1 }, { s1, s0 }, { p, r }, { p, s0 }, { p, s1 }, { r, s1 } };
        for (k = 0; k < (int)(sizeof pairs / sizeof pairs[0]); k++) {
            a[0] = pairs[k][0];
            b[0] = pairs[k][1];
            dtt_run_pair(m, k % 2 ? DT_F64 : DT_I32, 2, sh2, a, b, DTT_BYTES, NULL);
        }
        a[0] = dt_partial(DT_SUM); /* half precision: reduced in f32 through the same paths */
        b[0] = dt_shard(0);
        dtt_run_pair(m, DT_F16, 2, sh2, a, b, DTT_BYTES, NULL);
        b[0] = dt_replicate();
        dtt_run_pair(m, DT_U8, 2, sh2, a, b, DTT_BYTES, NULL);
    } else {
        a[0] = dt_shard(0); a[1] = dt_shard(1);
        b[0] = dt_shard(1); b[1] = dt_shard(0);
        dtt_run_pair(m, DT_F32, 3, sh3, a, b, DTT_BYTES, NULL); /* the general exchange */
        b[0] = dt_replicate(); b[1] = dt_replicate();
        dtt_run_pair(m, DT_F64, 3, sh3, a, b, DTT_BYTES, NULL);
        a[1] = dt_partial(DT_SUM);
        b[0] = dt_shard(2); b[1] = dt_shard(0);
        dtt_run_pair(m, DT_I64, 3, sh3, a, b, DTT_BYTES, NULL);
    }
}

/* distribute from a source rank: a broadcast (all Replicate) and an alltoallv */
static void run_distribute(dtt_mesh *m)
{
    int64_t n = 41 * 23, g;
    double *full = (double *)dtt_malloc((size_t)n * sizeof(double));
    dt_tensor_desc d;
    int k, src;
    for (g = 0; g < n; g++) full[g] = (double)dtt_val(DT_F64, g) * dtt_scale(DT_F64);
    memset(&d, 0, sizeof d);
    d.dtype = DT_F64;
    d.ndim = 2;
    d.shape[0] = 41;
    d.shape[1] = 23;
    for (k = 0; k < 2; k++) {
        for (src = 0; src < dt_mesh_size(m->mesh); src++) {
            dt_tensor *t = NULL;
            d.placements[0] = k ? dt_shard(1) : dt_replicate();
            dtt_ctx("distribute mesh %s %s from %d", m->name, k ? "S(1)" : "R", src);
            CHECK_OK(dt_tensor_distribute(m->mesh, &d, full, src, &t));
            if (t) {
                int64_t ls[2], lo[2];
                dt_tensor_local_shape(t, ls);
                dt_tensor_local_offset(t, lo);
                dtt_check_box(DT_F64, 2, d.shape, ls, lo, dt_tensor_data(t), "distributed");
            }
            dt_tensor_destroy(t);
        }
    }
    free(full);
}

int main(int argc, char **argv)
{
    dt_comm *c = NULL;
    int fac[64 * DT_MAX_MESH_DIMS], nd, nf, f;
    dtt_init(&argc, &argv, "bigcount");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &c));
    for (nd = 1; c && nd <= 2; nd++) {
        nf = dtt_factorizations(dtt_np, nd, fac, 64);
        for (f = 0; f < nf && f < 3; f++) {
            dtt_mesh m;
            if (!dtt_mesh_open(&m, c, nd, &fac[f * DT_MAX_MESH_DIMS])) continue;
            run_set(&m);
            if (nd == 1) run_distribute(&m);
            dtt_mesh_close(&m);
        }
    }
    dt_comm_destroy(c);
    return dtt_finish();
}
