/* tests/abi/user.c -- a file of the program that uses the API; tests/abi/run.sh
   links it against tests/abi/impl.c built with the default options. With the
   same options it links and prints PASS; built with -DDT_MAX_DIMS=12,
   -DDT_MAX_MESH_DIMS=6 or -DDTENSOR_NO_MPI it must not link. */
#include <stdio.h>
#include <string.h>
#include "dtensor.h"

int main(int argc, char **argv) {
    dt_comm *comm = NULL;
    dt_mesh *mesh = NULL;
    dt_tensor *t = NULL;
    dt_tensor_desc td;
    dt_mesh_desc md;
    int ok;
#ifdef DTENSOR_NO_MPI
    (void)argc; (void)argv;
    if (dt_comm_self(&comm)) return 1;
#else
    MPI_Init(&argc, &argv);
    if (dt_comm_mpi(MPI_COMM_WORLD, &comm)) { printf("FAIL %s\n", dt_last_error()); return 1; }
#endif
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = dt_comm_size(comm);
    memset(&td, 0, sizeof td);
    td.dtype = DT_F64;
    td.ndim = 2;
    td.shape[0] = 4 * md.shape[0];
    td.shape[1] = 3;
    td.placements[0] = dt_shard(0);
    ok = dt_mesh_create(comm, &md, &mesh) == DT_OK && dt_tensor_zeros(mesh, &td, &t) == DT_OK &&
         strcmp(dt_version(), DTENSOR_VERSION_STRING) == 0;
    printf("%s dtensor %s: %s\n", ok ? "PASS" : "FAIL", dt_version(), ok ? "linked, same options" : dt_last_error());
    dt_tensor_destroy(t);
    dt_mesh_destroy(mesh);
    dt_comm_destroy(comm);
#ifndef DTENSOR_NO_MPI
    MPI_Finalize();
#endif
    return !ok;
}
