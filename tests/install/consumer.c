/* tests/install/consumer.c -- a program built against an installed dtensor.h
   (tests/install/run.sh, make test-install): through pkg-config, through
   CMake's find_package(dtensor) and through add_subdirectory/FetchContent of
   the repository. A 1-D mesh over every rank, an F64 vector of 3*ranks+1
   elements Shard(0) from mesh rank 0, redistributed to Replicate; every rank
   checks every element, and rank 0 prints "PASS consumer (<how>) ...". The
   implementation is in dtensor_impl.c, the other file, as a program's would be. */
#include <stdio.h>
#include <string.h>
#include "dtensor.h"

#ifndef CONSUMER_HOW
#define CONSUMER_HOW "?"
#endif

int main(int argc, char **argv) {
    dt_comm *comm = NULL;
    dt_mesh *mesh = NULL;
    dt_tensor *a = NULL, *b = NULL;
    dt_tensor_desc td;
    dt_mesh_desc md;
    dt_placement rep[1];
    double full[3 * 64 + 1];
    const double *mine;
    int rank, nranks, ok = 1, all_ok = 0;
    int64_t i, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks > 64) { if (rank == 0) printf("FAIL: at most 64 ranks\n"); MPI_Finalize(); return 1; }
    n = 3 * (int64_t)nranks + 1;
    for (i = 0; i < n; i++) full[i] = (double)(i + 1);
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = nranks;
    memset(&td, 0, sizeof td);
    td.dtype = DT_F64;
    td.ndim = 1;
    td.shape[0] = n;
    td.placements[0] = dt_shard(0);
    rep[0] = dt_replicate();
    if (dt_comm_mpi(MPI_COMM_WORLD, &comm) || dt_mesh_create(comm, &md, &mesh) ||
        dt_tensor_distribute(mesh, &td, full, 0, &a) || dt_tensor_redistribute(a, rep, &b)) {
        printf("FAIL consumer (%s) rank %d: %s\n", CONSUMER_HOW, rank, dt_last_error());
        ok = 0;
    } else {
        mine = (const double *)dt_tensor_data(b);
        ok = dt_tensor_local_numel(b) == (size_t)n;
        for (i = 0; ok && i < n; i++) ok = mine[i] == (double)(i + 1);
        ok = ok && strcmp(dt_version(), DTENSOR_VERSION_STRING) == 0;
    }
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s consumer (%s): dtensor %s, %d ranks, S(0) -> R of %lld elements\n", all_ok ? "PASS" : "FAIL",
               CONSUMER_HOW, dt_version(), nranks, (long long)n);
    dt_tensor_destroy(b);
    dt_tensor_destroy(a);
    dt_mesh_destroy(mesh);
    dt_comm_destroy(comm);
    MPI_Finalize();
    return !all_ok;
}
