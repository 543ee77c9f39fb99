/* tp_mlp.c -- train a tensor-parallel MLP block on a dp x tp mesh.

   A transformer-style MLP block (fc1 colwise -> GELU -> dropout -> fc2
   rowwise, see dtensor_layers.h) learns a synthetic regression task,
   y = sin(x A), with plain SGD on a 2-D mesh:

       dp (data parallel):   the batch is split (Shard(0)); the weight
                             gradients are summed over dp (an allreduce each)
       tp (tensor parallel): fc1's output features and fc2's input features
                             are split; y is reduced (an allreduce) forward,
                             dx would be backward

   Everything random (the teacher A, the weights, each batch, the dropout
   masks) comes from the mesh's sharding-invariant RNG, so every mesh shape
   and rank count computes the same numbers: the printed losses agree across
   1, 2, 4, 8 ranks. Not bit for bit in general: the sums over the hidden
   features (fc2's Partial over tp) and over the batch (the dp reduction of
   the gradients and of the loss) are added in a different order on each mesh
   shape, so F64 results differ in the last bits (~1e-15 relative per step);
   printed with 10 decimals they are identical.

       make examples MPI=openmpi
       mpiexec -n 4 build/openmpi/tp_mlp          # 2 x 2 mesh
       mpiexec -n 8 build/openmpi/tp_mlp --tp 4   # 2 x 4 mesh

   Options: --tp N (default 2 if the rank count is even, else 1), --steps N
   (default 20). */
#define DTENSOR_IMPLEMENTATION
#include "dtensor_layers.h" /* includes dtensor.h */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D_IN 16   /* features in and out */
#define D_HID 64  /* hidden features, split over tp */
#define BATCH 64  /* rows per step, split over dp */
#define LR 0.2

/* stop on the first error (an example; a library never does this) */
#define CK(call)                                                                         \
    do {                                                                                 \
        dt_status st_ = (call);                                                          \
        if (st_ != DT_OK) {                                                              \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, dt_status_string(st_), \
                    dt_last_error());                                                    \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                \
        }                                                                                \
    } while (0)

/* the value of a tensor that may be Partial (a loss, a sum): Replicate it, read it */
static double scalar(const dt_tensor *t)
{
    dt_placement rep[DT_MAX_MESH_DIMS];
    dt_tensor *r = NULL;
    double v;
    memset(rep, 0, sizeof rep);
    CK(dt_tensor_redistribute(t, rep, &r));
    v = *(const double *)dt_tensor_data(r);
    dt_tensor_destroy(r);
    return v;
}

/* sum of squares of a weight tensor (a checksum that sees every element) */
static double sumsq(const dt_tensor *w)
{
    dt_tensor *sq = NULL, *s = NULL;
    double v;
    CK(dt_mul(w, w, &sq));
    CK(dt_sum(sq, 0, NULL, 0, &s)); /* over every dim: Partial(SUM) where w is sharded */
    v = scalar(s);
    dt_tensor_destroy(sq);
    dt_tensor_destroy(s);
    return v;
}

int main(int argc, char **argv)
{
    int np, rank, tp = -1, steps = 20, i, step;
    dt_comm *comm;
    dt_mesh *mesh;
    dt_mesh_desc md;
    dt_tp_mlp_desc mlpd;
    dt_tp_mlp *mlp;
    dt_tensor_desc xd, ad;
    dt_tensor *A = NULL, *x = NULL, *xa = NULL, *t = NULL, *y = NULL, *diff = NULL, *sq = NULL, *loss = NULL,
              *dy = NULL;
    double csum;

    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--tp")) tp = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--steps")) steps = atoi(argv[i + 1]);
    }
    if (tp < 1) tp = np % 2 == 0 ? 2 : 1;
    if (np % tp) {
        if (rank == 0) fprintf(stderr, "tp_mlp: --tp %d does not divide %d ranks\n", tp, np);
        MPI_Finalize();
        return 1;
    }

    /* a 2-D mesh [dp, tp]; the layers find their tp dim by name */
    CK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    memset(&md, 0, sizeof md);
    md.ndim = 2;
    md.shape[0] = np / tp;
    md.shape[1] = tp;
    md.names[0] = "dp";
    md.names[1] = "tp";
    CK(dt_mesh_create(comm, &md, &mesh));
    CK(dt_manual_seed(mesh, 2024)); /* collective: every rank the same seed */

    /* the teacher A [D_IN, D_IN], replicated everywhere, ~N(0, 1/D_IN) */
    memset(&ad, 0, sizeof ad);
    ad.dtype = DT_F64;
    ad.ndim = 2;
    ad.shape[0] = D_IN;
    ad.shape[1] = D_IN;
    CK(dt_tensor_randn(mesh, &ad, &A));
    CK(dt_scale(A, 0.25, &A)); /* pointwise ops may work in place */

    /* the block: zero-initialised desc fields are the defaults (bias on,
       ReLU, no sequence parallelism, weights ~U(+-1/sqrt(in)) from the RNG) */
    memset(&mlpd, 0, sizeof mlpd);
    mlpd.in_features = D_IN;
    mlpd.hidden_features = D_HID;
    mlpd.dtype = DT_F64;
    mlpd.activation = DT_TP_GELU;
    mlpd.dropout = 0.1;
    mlpd.tp_dim = "tp";
    CK(dt_tp_mlp_create(mesh, &mlpd, &mlp));

    /* a batch x [BATCH, D_IN]: rows split over dp, and on tp the layout fc1
       takes (Replicate; Shard(seq) with sequence parallelism) */
    memset(&xd, 0, sizeof xd);
    xd.dtype = DT_F64;
    xd.ndim = 2;
    xd.shape[0] = BATCH;
    xd.shape[1] = D_IN;
    xd.placements[0] = dt_shard(0);
    xd.placements[1] = dt_tp_linear_input_placement(dt_tp_mlp_fc1(mlp));

    if (rank == 0)
        printf("tp_mlp: %d ranks, mesh dp=%d x tp=%d, MLP %d -> %d -> %d (GELU, dropout %.1f), batch %d, F64\n", np,
               np / tp, tp, D_IN, D_HID, D_IN, mlpd.dropout, BATCH);
    for (step = 0; step < steps; step++) {
        /* data: x ~ N(0, 1), target t = sin(x A). Every op below reuses its
           *out from the previous step: no allocation after step 0. */
        CK(dt_tensor_randn(mesh, &xd, &x));
        CK(dt_matmul(x, A, &xa));
        CK(dt_sin(xa, &t));
        /* forward (training: dropout on), the loss mean((y - t)^2) */
        CK(dt_tp_mlp_forward(mlp, x, 1, &y));
        CK(dt_sub(y, t, &diff));
        CK(dt_mul(diff, diff, &sq));
        CK(dt_mean(sq, 0, NULL, 0, &loss)); /* Partial over dp: read through scalar() */
        /* backward: dL/dy = 2 (y - t) / numel; dx not wanted (NULL) */
        CK(dt_scale(diff, 2.0 / (BATCH * D_IN), &dy));
        CK(dt_tp_mlp_backward(mlp, x, dy, NULL));
        CK(dt_tp_mlp_sgd(mlp, LR));
        {
            double l = scalar(loss);
            if (rank == 0) printf("step %2d  loss %.10f\n", step, l);
        }
    }
    csum = sumsq(dt_tp_linear_weight(dt_tp_mlp_fc1(mlp))) + sumsq(dt_tp_linear_bias(dt_tp_mlp_fc1(mlp))) +
           sumsq(dt_tp_linear_weight(dt_tp_mlp_fc2(mlp))) + sumsq(dt_tp_linear_bias(dt_tp_mlp_fc2(mlp)));
    if (rank == 0) printf("weights sum of squares %.10f\n", csum);

    dt_tensor_destroy(A); dt_tensor_destroy(x); dt_tensor_destroy(xa); dt_tensor_destroy(t);
    dt_tensor_destroy(y); dt_tensor_destroy(diff); dt_tensor_destroy(sq); dt_tensor_destroy(loss);
    dt_tensor_destroy(dy);
    dt_tp_mlp_destroy(mlp);
    dt_mesh_destroy(mesh);
    dt_comm_destroy(comm);
    MPI_Finalize();
    return 0;
}
