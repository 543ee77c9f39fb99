/* tests/lint/walk.c -- the functions one dt_matmul call enters, in order.

   Built by tests/lint/walk.sh with -finstrument-functions: every function
   entry calls __cyg_profile_func_enter, which records its address while
   `rec` is set. The case is the MAP's (dtensor.h, "ONE OP, AS IT RUNS"): a
   and b row-sharded on a 1-d mesh of every rank, F64, the first call (a
   strategy-cache miss), *out NULL, DTENSOR_CHECK off. Rank 0 prints
   "depth address" per entry; walk.py maps them to names and sections. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"
#include <stdio.h>
#include <stdlib.h>
static int rec;
static void *seq[100000];
static int depth[100000], nseq, dep;
void __cyg_profile_func_enter(void *fn, void *site) __attribute__((no_instrument_function));
void __cyg_profile_func_exit(void *fn, void *site) __attribute__((no_instrument_function));
void __cyg_profile_func_enter(void *fn, void *site) { (void)site; if (rec && nseq < 100000) { depth[nseq] = dep; seq[nseq++] = fn; } dep++; }
void __cyg_profile_func_exit(void *fn, void *site) { (void)fn; (void)site; dep--; }
int main(int argc, char **argv) {
    dt_comm *comm; dt_mesh *mesh; dt_tensor *a, *b, *c = NULL;
    int r, i, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    dt_comm_mpi(MPI_COMM_WORLD, &comm);
    dt_mesh_desc md = {0}; md.ndim = 1; md.shape[0] = n;
    dt_mesh_create(comm, &md, &mesh);
    dt_tensor_desc da = {0}; da.dtype = DT_F64; da.ndim = 2; da.shape[0] = 8; da.shape[1] = 6; da.placements[0] = dt_shard(0);
    dt_tensor_desc db = da; db.shape[0] = 6; db.shape[1] = 4;
    dt_tensor_zeros(mesh, &da, &a); dt_tensor_zeros(mesh, &db, &b);
    rec = 1;
    if (dt_matmul(a, b, &c)) return 1;
    rec = 0;
    if (r == 0) for (i = 0; i < nseq; i++) printf("%d %p\n", depth[i], seq[i]);
    dt_tensor_destroy(c); dt_tensor_destroy(a); dt_tensor_destroy(b); dt_mesh_destroy(mesh); dt_comm_destroy(comm);
    MPI_Finalize();
    return 0;
}
