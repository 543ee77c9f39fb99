/* tests/fortran_offsets.c -- the C side of test_fortran's layout check
   (linked into build/<mpi>/test_fortran; mk/test.mk).

   dt_test_layout("dt_placement", "sizeof") is sizeof(dt_placement), and
   dt_test_layout("dt_placement", "block") is offsetof(dt_placement, block),
   as this C compiler lays out dtensor.h's and dtensor_layers.h's structs;
   -1 for a name not in the table. test_fortran.f90's test_layout compares
   them with the sizes and offsets gfortran gives the bind(C) types of
   dtensor.f90 (c_sizeof; c_loc(v%field) - c_loc(v)), field by field: the
   start-up check (dt_init) compares sizes only, which a reordering of two
   fields of one size, or a field moved into padding, leaves the same.

   The table's rows are written by tests/lint/gen_f90.py from the bind(C)
   types it reads in dtensor.f90 (make lint checks they are its output); the
   values are the compiler's. A Fortran field that has no C field of its
   name stops this file compiling. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "dtensor.h"
#include "dtensor_layers.h"

typedef struct dt_test_row {
    const char *type, *field;
    size_t value;
} dt_test_row;

#define DT_SIZE(T) { #T, "sizeof", sizeof(T) }
#define DT_OFFSET(T, F) { #T, #F, offsetof(T, F) }

static const dt_test_row dt_test_rows[] = {
    /* >>generated: layout (gen_f90.py: do not edit; python3 tests/lint/gen_f90.py) */
    DT_SIZE(dt_placement),
    DT_OFFSET(dt_placement, kind),
    DT_OFFSET(dt_placement, dim),
    DT_OFFSET(dt_placement, reduce),
    DT_OFFSET(dt_placement, split),
    DT_OFFSET(dt_placement, src),
    DT_OFFSET(dt_placement, block),
    DT_OFFSET(dt_placement, sizes),
    DT_SIZE(dt_mesh_desc),
    DT_OFFSET(dt_mesh_desc, ndim),
    DT_OFFSET(dt_mesh_desc, shape),
    DT_OFFSET(dt_mesh_desc, names),
    DT_OFFSET(dt_mesh_desc, ranks),
    DT_SIZE(dt_tensor_desc),
    DT_OFFSET(dt_tensor_desc, dtype),
    DT_OFFSET(dt_tensor_desc, ndim),
    DT_OFFSET(dt_tensor_desc, shape),
    DT_OFFSET(dt_tensor_desc, placements),
    DT_OFFSET(dt_tensor_desc, device),
    DT_OFFSET(dt_tensor_desc, local_shape),
    DT_OFFSET(dt_tensor_desc, local_ghost),
    DT_OFFSET(dt_tensor_desc, local_strides),
    DT_OFFSET(dt_tensor_desc, local_alloc),
    DT_OFFSET(dt_tensor_desc, local_alloc_bytes),
    DT_OFFSET(dt_tensor_desc, local_ghost_lo),
    DT_OFFSET(dt_tensor_desc, local_ghost_hi),
    DT_SIZE(dt_halo_desc),
    DT_OFFSET(dt_halo_desc, width),
    DT_OFFSET(dt_halo_desc, boundary),
    DT_OFFSET(dt_halo_desc, fill),
    DT_OFFSET(dt_halo_desc, corners),
    DT_OFFSET(dt_halo_desc, width_lo),
    DT_OFFSET(dt_halo_desc, width_hi),
    DT_SIZE(dt_conv_desc),
    DT_OFFSET(dt_conv_desc, padding),
    DT_OFFSET(dt_conv_desc, dilation),
    DT_SIZE(dt_stencil_block),
    DT_OFFSET(dt_stencil_block, dtype),
    DT_OFFSET(dt_stencil_block, ndim),
    DT_OFFSET(dt_stencil_block, in),
    DT_OFFSET(dt_stencil_block, out),
    DT_OFFSET(dt_stencil_block, in_stride),
    DT_OFFSET(dt_stencil_block, out_stride),
    DT_OFFSET(dt_stencil_block, width),
    DT_OFFSET(dt_stencil_block, lo),
    DT_OFFSET(dt_stencil_block, ext),
    DT_OFFSET(dt_stencil_block, local_shape),
    DT_OFFSET(dt_stencil_block, offset),
    DT_OFFSET(dt_stencil_block, global_shape),
    DT_OFFSET(dt_stencil_block, width_hi),
    DT_SIZE(dt_comm_stats),
    DT_OFFSET(dt_comm_stats, calls),
    DT_OFFSET(dt_comm_stats, bytes_sent),
    DT_OFFSET(dt_comm_stats, bytes_recv),
    DT_OFFSET(dt_comm_stats, matmul_bytes_recv),
    DT_OFFSET(dt_comm_stats, matmul_bound),
    DT_SIZE(dt_scalapack_grid),
    DT_OFFSET(dt_scalapack_grid, nprow),
    DT_OFFSET(dt_scalapack_grid, npcol),
    DT_OFFSET(dt_scalapack_grid, order),
    DT_OFFSET(dt_scalapack_grid, myrow),
    DT_OFFSET(dt_scalapack_grid, mycol),
    DT_SIZE(dt_tp_linear_desc),
    DT_OFFSET(dt_tp_linear_desc, style),
    DT_OFFSET(dt_tp_linear_desc, in_features),
    DT_OFFSET(dt_tp_linear_desc, out_features),
    DT_OFFSET(dt_tp_linear_desc, dtype),
    DT_OFFSET(dt_tp_linear_desc, no_bias),
    DT_OFFSET(dt_tp_linear_desc, tp_dim),
    DT_OFFSET(dt_tp_linear_desc, sequence_parallel),
    DT_OFFSET(dt_tp_linear_desc, seq_dim),
    DT_OFFSET(dt_tp_linear_desc, accumulate_grads),
    DT_OFFSET(dt_tp_linear_desc, init),
    DT_OFFSET(dt_tp_linear_desc, device),
    DT_SIZE(dt_tp_mlp_desc),
    DT_OFFSET(dt_tp_mlp_desc, in_features),
    DT_OFFSET(dt_tp_mlp_desc, hidden_features),
    DT_OFFSET(dt_tp_mlp_desc, out_features),
    DT_OFFSET(dt_tp_mlp_desc, dtype),
    DT_OFFSET(dt_tp_mlp_desc, activation),
    DT_OFFSET(dt_tp_mlp_desc, dropout),
    DT_OFFSET(dt_tp_mlp_desc, no_bias),
    DT_OFFSET(dt_tp_mlp_desc, tp_dim),
    DT_OFFSET(dt_tp_mlp_desc, sequence_parallel),
    DT_OFFSET(dt_tp_mlp_desc, seq_dim),
    DT_OFFSET(dt_tp_mlp_desc, accumulate_grads),
    DT_OFFSET(dt_tp_mlp_desc, init),
    /* <<generated: layout */
};

int64_t dt_test_layout(const char *type, const char *field);

int64_t dt_test_layout(const char *type, const char *field) {
    size_t i;
    for (i = 0; i < sizeof dt_test_rows / sizeof dt_test_rows[0]; i++)
        if (strcmp(dt_test_rows[i].type, type) == 0 && strcmp(dt_test_rows[i].field, field) == 0)
            return (int64_t)dt_test_rows[i].value;
    return -1;
}
