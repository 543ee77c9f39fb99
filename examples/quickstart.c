/* quickstart.c -- the README's first program: distribute a 7x5 matrix over a
   2x2 mesh as [Shard(0), Shard(1)], redistribute it to [Replicate, Shard(0)],
   gather it back and check it.

       make demo                          (4 ranks, MPICH)
       mpicc -I. examples/quickstart.c -o quickstart -lm && mpiexec -n 4 ./quickstart

   At other rank counts the mesh is a x b with a*b = ranks, a <= b. */
#define DTENSOR_IMPLEMENTATION
#include "dtensor.h"

enum { ROWS = 7, COLS = 5, N = ROWS * COLS };

int main(int argc, char **argv) {
    int rank, nranks, dp = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int a = 1; a * a <= nranks; a++) if (nranks % a == 0) dp = a;   /* 4 ranks: 2x2 */

    /* --- the README's program starts here --- */
    dt_comm *comm;  dt_mesh *mesh;  dt_tensor *a, *b = NULL;
    DT_CHECK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    dt_mesh_desc md = {0};
    md.ndim = 2;  md.shape[0] = dp;  md.shape[1] = nranks / dp;
    md.names[0] = "dp";  md.names[1] = "tp";
    DT_CHECK(dt_mesh_create(comm, &md, &mesh));

    double full[N];                                      /* 1, 2, ..., 35 */
    for (int i = 0; i < N; i++) full[i] = i + 1;
    dt_tensor_desc td = {0};
    td.dtype = DT_F64;  td.ndim = 2;  td.shape[0] = ROWS;  td.shape[1] = COLS;
    td.placements[0] = dt_shard(0);                      /* rows split over dp */
    td.placements[1] = dt_shard(1);                      /* cols split over tp */
    DT_CHECK(dt_tensor_distribute(mesh, &td, full, 0, &a)); /* from mesh rank 0   */
    if (rank == 0) dt_tensor_print_sharding(a, stdout);

    dt_placement p[2] = { dt_replicate(), dt_shard(0) }; /* rows split over tp */
    DT_CHECK(dt_tensor_redistribute(a, p, &b));
    if (rank == 0) dt_tensor_print_sharding(b, stdout);

    double got[N], sum = 0;
    DT_CHECK(dt_tensor_gather(b, got));                     /* full matrix, every rank */
    for (int i = 0; i < N; i++) sum += got[i];
    /* --- end of the README's program --- */

    int ok = sum == N * (N + 1) / 2.0, all_ok;           /* closed form: 630 */
    for (int i = 0; i < N; i++) ok &= got[i] == i + 1;
    int64_t shape[2], off[2];                            /* my rows of b */
    dt_tensor_local_shape(b, shape);
    dt_tensor_local_offset(b, off);
    const double *mine = (const double *)dt_tensor_data(b);
    ok &= shape[1] == COLS && off[1] == 0;
    for (int64_t i = 0; i < shape[0] * shape[1]; i++) ok &= mine[i] == off[0] * COLS + i + 1;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0) printf("checksum %.0f (expected %d)\nquickstart: %s\n", sum, N * (N + 1) / 2,
                          all_ok ? "OK" : "FAILED");

    dt_tensor_destroy(b);  dt_tensor_destroy(a);
    dt_mesh_destroy(mesh);  dt_comm_destroy(comm);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
