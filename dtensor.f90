! dtensor.f90 -- the Fortran 2008 interface of dtensor.h: `use dtensor`.
!
! Every procedure here is an interface to a C function of dtensor.h's
! implementation (or dtensor_layers.h's: LAYERS below; bind(C, name=...):
! the C symbol it calls, no symbol of its own) or a wrapper of a few lines that converts an argument (a Fortran
! string, a communicator handle, an array pointer) and calls one; the logic,
! the column-major reversal included, is on the C side (dtensor.h, >>fortran).
!
! GENERATED PARTS. The typed specifics behind dt_tensor_from_local,
! dt_tensor_distribute, dt_tensor_gather and dt_tensor_local (96: four
! families x six kinds x ranks 1-4), the generic interfaces' `module
! procedure` lists naming them and their `private ::` statements are
! written by tests/lint/gen_f90.py from its table, between the
! `! >>generated` and `! <<generated` markers below: edit the generator's
! table or templates, then run `python3 tests/lint/gen_f90.py` (make lint
! runs it with --check: dtensor.f90 must be its output). The rest is
! written by hand.
!
! BUILD: compile the implementation once with the C compiler of your MPI,
! then this module with the same MPI's mpif90 (it uses mpi_f08 for
! type(MPI_Comm); .mod files are compiler-specific, so it ships as source):
!     mpicc -c -x c -DDTENSOR_IMPLEMENTATION dtensor.h -o dtensor_impl.o   (or link -ldtensor)
!     mpif90 dtensor.f90 yourcode.f90 dtensor_impl.o -lblis -lm
! (DT_MAX_DIMS / DT_MAX_MESH_DIMS below must be the C build's; the first
! dt_comm_mpi or dt_init call checks them and every struct's size.) The
! tensor-parallel layers need the layers' object as well: LAYERS below.
!
! NAMES. Functions keep their C names (dt_shard, dt_sum, dt_copy, ...).
! Fortran is case-insensitive, so the C enumerators that differ from a
! function only in case get their enum's name: the constants of dt_reduce
! are DT_REDUCE_SUM/AVG/MAX/MIN, of dt_placement_kind DT_KIND_REPLICATE/
! SHARD/PARTIAL, the dt_tensor_from_local flags DT_FLAG_BORROW/COPY/VERIFY/
! INFER_SIZES. Every other constant keeps its C name (it already carries
! its group: DT_ERR_*, DT_SPLIT_*, DT_BOUNDARY_*, the dtypes DT_F64, ...).
! The in-place random fills drop C's trailing underscore: dt_uniform calls
! C's dt_uniform_ (and so on).
!
! ORDER. Tensor dims are Fortran's: a desc's shape, local_shape,
! local_ghost and local_strides, a halo's width and boundary, local shapes
! and offsets are in Fortran order, and dt_shard(d) / a reduction's dims name
! Fortran dims 1..ndim (-1 is the last). An array a(n1, n2) described with
! shape [n1, n2] is the same memory as C's row-major [n2, n1], no copy;
! dt_matmul(a, b, c) is Fortran's c = matmul(a, b); broadcasting aligns
! shapes at the left; a saved .npy file is C-ordered, numpy.load gives the
! transpose. Mesh dims, mesh coordinates and ranks count from 0, as MPI's
! ranks do; placements(i) is mesh dim i-1. Offsets are the number of
! elements before local element 1 along each dim.
!
! Views and dim-taking ops follow the same rule: dt_transpose(x, 1, 2),
! dt_permute's perm(i) = the x dim that becomes dim i, dt_unsqueeze /
! dt_stack name the new dim's place in the result (1..ndim+1), dt_narrow's
! start is 1-based (x(start:start+length-1)), dt_reshape keeps column-major
! element order (Fortran's reshape), conv's x is x(S..., C_in, N) with
! padding(i) / dilation(i) for Fortran spatial dim i, a stencil callback
! gets its block in Fortran order. Indices the library computes stay
! 0-based (dt_argmax: maxloc - 1; embedding and cross-entropy indices).
!
! ARRAYS. dt_tensor_from_local, dt_tensor_distribute and dt_tensor_gather
! take a Fortran array of real(c_float/c_double), integer(c_int32_t/
! c_int64_t) or complex(c_float_complex/c_double_complex), rank 1-4; its
! kind must be desc%dtype (DT_ERR_DTYPE otherwise, on every rank: DT_F32 is
! 0, so a real(8) array with desc%dtype never set is refused, never read as
! floats). The dummies are assumed-shape `target` without `contiguous`: a
! `contiguous` dummy makes gfortran copy a strided section in and out
! around the call, which a DT_FLAG_BORROW tensor would then alias, so a
! section with a stride (u(1:n:2, :)) is refused at run time (DT_ERR_ARG)
! instead. The type(c_ptr) forms (c_loc; device memory, F16/BF16/U8) stay
! under the same names. dt_tensor_local gives an array pointer onto a
! contiguous shard for the same six kinds and ranks.
!
! NOT BOUND, because Fortran cannot have them or has no use for them:
!  - dt_set_last_error (a C variadic function) and dt_check_failed (the
!    end of C's DT_CHECK macro, which needs __FILE__ / __LINE__): check the
!    status in Fortran; dt_call_begin / dt_call_end, dt_mesh_agree and
!    dt_tensor_desc_hash, which exist for C code that extends the library
!    with calls of its own (C-order descs, the error hook's bookkeeping);
!  - dt_tensor_print_sharding and dt_explain (they take a C FILE *:
!    DTENSOR_LOG=ops prints the strategies to stderr instead);
!  - dt_comm_custom (a backend is a table of C callbacks over C buffers:
!    write it in C and pass the dt_comm handle it makes);
!  - dt_placements_str and dt_shape_str (C-order strings; write() them);
!  - the C forms the dt_f_* entry points replace (dt_comm_mpi of an
!    MPI_Comm, the row-major desc calls): their Fortran names bind those;
!    dt_tensor_local_offset is dt_tensor_local_shape's second array;
!    dt_f_call_begin / dt_f_call_end / dt_f_order and dt_f_module_size,
!    which exist for C code that gives the module entry points of its own
!    (dtensor_layers.h's dt_f_tp_*).
!
! LAYERS. dtensor_layers.h's tensor-parallel layers (dt_tp_linear_*,
! dt_tp_mlp_*, the descs dt_tp_linear_desc / dt_tp_mlp_desc and their
! DT_TP_* constants) are bound as interfaces only, so a program that calls
! none of them links as before, without the layers' object; one that calls
! them links it too:
!     mpicc -c -x c -DDTENSOR_LAYERS_IMPLEMENTATION dtensor_layers.h -o dtensor_layers.o
! (or -ldtensor, which holds both). In Fortran order: x(in, batch...) ->
! y(out, batch...), the weight w(in, out) (y = matmul(transpose(w), x) + b,
! as dt_linear), Shard dims Fortran's (colwise: w Shard(2), b and y
! Shard(1); rowwise: w and x Shard(1)), the descs' seq_dim a Fortran dim
! of x, 2..ndim (0: 2); tp_dim is c_loc of a NUL-terminated name, as a
! dt_mesh_desc's names. dt_tp_linear_backward / dt_tp_mlp_backward without
! the dx argument: dx not wanted. dt_init (dt_comm_mpi) passes the descs'
! sizes too; the create calls refuse a module whose descs differ.
!
! HANDLES are type(c_ptr) (c_null_ptr: none, e.g. an *out to be made; a
! destroyed handle must be reset to c_null_ptr before it is passed as an
! *out again, or the call reuses freed memory).
! Statuses are integer(c_int), DT_OK = 0; dt_last_error() is the message
! (read it in a statement after the call: in one expression with the call
! Fortran may evaluate it first).
module dtensor
  use, intrinsic :: iso_c_binding
  use mpi_f08, only: MPI_Comm
  implicit none
  private :: MPI_Comm
  ! the module procedures behind the generic names (the bind(C) interfaces
  ! stay public: a private one with a binding label draws a warning)
  private :: dt_f_sizes, dt_comm_mpi_int, dt_comm_mpi_f08
  private :: dt_f_contig, dt_f_names
  ! >>generated: private (gen_f90.py: do not edit; python3 tests/lint/gen_f90.py)
  private :: dt_local_f32_1, dt_local_f32_2, dt_local_f32_3, dt_local_f32_4, &
       dt_local_f64_1, dt_local_f64_2, dt_local_f64_3, dt_local_f64_4, &
       dt_local_i32_1, dt_local_i32_2, dt_local_i32_3, dt_local_i32_4, &
       dt_local_i64_1, dt_local_i64_2, dt_local_i64_3, dt_local_i64_4, &
       dt_local_c64_1, dt_local_c64_2, dt_local_c64_3, dt_local_c64_4, &
       dt_local_c128_1, dt_local_c128_2, dt_local_c128_3, dt_local_c128_4
  private :: dt_fl_f32_1, dt_fl_f32_2, dt_fl_f32_3, dt_fl_f32_4, &
       dt_fl_f64_1, dt_fl_f64_2, dt_fl_f64_3, dt_fl_f64_4, &
       dt_fl_i32_1, dt_fl_i32_2, dt_fl_i32_3, dt_fl_i32_4, &
       dt_fl_i64_1, dt_fl_i64_2, dt_fl_i64_3, dt_fl_i64_4, &
       dt_fl_c64_1, dt_fl_c64_2, dt_fl_c64_3, dt_fl_c64_4, &
       dt_fl_c128_1, dt_fl_c128_2, dt_fl_c128_3, dt_fl_c128_4
  private :: dt_dist_f32_1, dt_dist_f32_2, dt_dist_f32_3, dt_dist_f32_4, &
       dt_dist_f64_1, dt_dist_f64_2, dt_dist_f64_3, dt_dist_f64_4, &
       dt_dist_i32_1, dt_dist_i32_2, dt_dist_i32_3, dt_dist_i32_4, &
       dt_dist_i64_1, dt_dist_i64_2, dt_dist_i64_3, dt_dist_i64_4, &
       dt_dist_c64_1, dt_dist_c64_2, dt_dist_c64_3, dt_dist_c64_4, &
       dt_dist_c128_1, dt_dist_c128_2, dt_dist_c128_3, dt_dist_c128_4
  private :: dt_gath_f32_1, dt_gath_f32_2, dt_gath_f32_3, dt_gath_f32_4, &
       dt_gath_f64_1, dt_gath_f64_2, dt_gath_f64_3, dt_gath_f64_4, &
       dt_gath_i32_1, dt_gath_i32_2, dt_gath_i32_3, dt_gath_i32_4, &
       dt_gath_i64_1, dt_gath_i64_2, dt_gath_i64_3, dt_gath_i64_4, &
       dt_gath_c64_1, dt_gath_c64_2, dt_gath_c64_3, dt_gath_c64_4, &
       dt_gath_c128_1, dt_gath_c128_2, dt_gath_c128_3, dt_gath_c128_4
  ! <<generated: private

  ! must equal the C build's (checked by dt_init and dt_comm_mpi)
  integer, parameter :: DT_MAX_DIMS = 8, DT_MAX_MESH_DIMS = 4

  ! dt_status
  integer(c_int), parameter :: DT_OK = 0, DT_ERR_ARG = 1, DT_ERR_SHAPE = 2, DT_ERR_PLACEMENT = 3, &
       DT_ERR_MESH = 4, DT_ERR_DTYPE = 5, DT_ERR_NOMEM = 6, DT_ERR_COMM = 7, DT_ERR_UNSUPPORTED = 8, &
       DT_ERR_MISMATCH = 9, DT_ERR_IO = 10, DT_ERR_DEVICE = 11
  ! dt_dtype (DT_C64 = complex(c_float_complex), DT_C128 = complex(c_double_complex))
  integer(c_int), parameter :: DT_F32 = 0, DT_F64 = 1, DT_F16 = 2, DT_BF16 = 3, DT_I32 = 4, DT_I64 = 5, &
       DT_U8 = 6, DT_C64 = 7, DT_C128 = 8
  ! dt_reduce (C: DT_SUM, ...)
  integer(c_int), parameter :: DT_REDUCE_SUM = 0, DT_REDUCE_AVG = 1, DT_REDUCE_MAX = 2, DT_REDUCE_MIN = 3
  ! dt_placement_kind (C: DT_REPLICATE, ...)
  integer(c_int), parameter :: DT_KIND_REPLICATE = 0, DT_KIND_SHARD = 1, DT_KIND_PARTIAL = 2
  ! dt_split_rule
  integer(c_int), parameter :: DT_SPLIT_CHUNK = 0, DT_SPLIT_BALANCED = 1, DT_SPLIT_SIZES = 2, DT_SPLIT_CYCLIC = 3, &
                                DT_SPLIT_POINTS = 4
  ! dt_tensor_from_local flags (C: DT_BORROW, DT_COPY, ...)
  integer(c_int), parameter :: DT_FLAG_BORROW = 0, DT_FLAG_COPY = 1, DT_FLAG_VERIFY = 2, DT_FLAG_INFER_SIZES = 4
  ! dt_boundary
  integer(c_int), parameter :: DT_BOUNDARY_CONSTANT = 0, DT_BOUNDARY_PERIODIC = 1, DT_BOUNDARY_NONE = 2
  ! devices; dt_tensor_distribute's src_rank for "every rank passes the data"
  integer(c_int), parameter :: DT_HOST = 0, DT_CUDA = 1, DT_SRC_ALL = -1

  ! the C structs (dtensor.h >>types); their sizes are checked at start-up
  type, bind(C) :: dt_placement
    integer(c_int8_t) :: kind = 0    ! DT_KIND_*
    integer(c_int8_t) :: dim = 0     ! Shard: the Fortran dim, 1..ndim
    integer(c_int8_t) :: reduce = 0  ! Partial: DT_REDUCE_*
    integer(c_int8_t) :: split = 0   ! Shard: DT_SPLIT_*
    integer(c_int32_t) :: src = 0    ! DT_SPLIT_CYCLIC: mesh coordinate of block 0 (RSRC/CSRC)
    integer(c_int64_t) :: block = 0  ! DT_SPLIT_CYCLIC: elements per block
    type(c_ptr) :: sizes = c_null_ptr ! DT_SPLIT_SIZES: c_loc of integer(c_int64_t) sizes(mesh dim size)
  end type dt_placement

  type, bind(C) :: dt_mesh_desc
    integer(c_int) :: ndim = 0
    integer(c_int) :: shape(DT_MAX_MESH_DIMS) = 0
    type(c_ptr) :: names(DT_MAX_MESH_DIMS) = c_null_ptr  ! optional: c_loc of NUL-terminated character arrays
    type(c_ptr) :: ranks = c_null_ptr                    ! optional: c_loc of integer(c_int) ranks(:)
  end type dt_mesh_desc

  type, bind(C) :: dt_tensor_desc
    integer(c_int) :: dtype = DT_F32
    integer(c_int) :: ndim = 0
    integer(c_int64_t) :: shape(DT_MAX_DIMS) = 0            ! Fortran order
    type(dt_placement) :: placements(DT_MAX_MESH_DIMS)      ! one per mesh dim
    integer(c_int) :: device = DT_HOST
    type(c_ptr) :: local_shape = c_null_ptr    ! c_loc of integer(c_int64_t) (ndim), Fortran order
    type(c_ptr) :: local_ghost = c_null_ptr    ! likewise: ghost cells on each side of each dim
    type(c_ptr) :: local_strides = c_null_ptr  ! likewise: element strides of the storage (with
                                               ! local_ghost: of the whole ghosted array)
    type(c_ptr) :: local_alloc = c_null_ptr    ! with ghosts or strides: c_loc of the allocation
                                               ! `local` lies in (`local` may point inside it;
                                               ! c_loc's argument must be TARGET or POINTER)
    integer(c_int64_t) :: local_alloc_bytes = 0 ! and its size in bytes (8 * size(a) for real(8);
                                                ! c_sizeof takes no allocatable array)
    type(c_ptr) :: local_ghost_lo = c_null_ptr ! instead of local_ghost: ghost cells below each dim's interior
    type(c_ptr) :: local_ghost_hi = c_null_ptr ! and above it (c_loc of integer(c_int64_t)(ndim); null: none)
  end type dt_tensor_desc

  type, bind(C) :: dt_halo_desc
    integer(c_int64_t) :: width(DT_MAX_DIMS) = 0      ! Fortran order
    integer(c_int8_t) :: boundary(DT_MAX_DIMS) = 0    ! DT_BOUNDARY_*, Fortran order
    real(c_double) :: fill = 0
    integer(c_int) :: corners = 0
    integer(c_int64_t) :: width_lo(DT_MAX_DIMS) = 0   ! per side, instead of width: below the interior
    integer(c_int64_t) :: width_hi(DT_MAX_DIMS) = 0   ! and above it (Fortran order)
  end type dt_halo_desc

  ! dt_conv1d/2d/3d: per spatial dim in Fortran order (x(S..., C_in, N))
  type, bind(C) :: dt_conv_desc
    integer(c_int64_t) :: padding(3) = 0    ! zeros added on both sides
    integer(c_int64_t) :: dilation(3) = 0   ! spacing of kernel taps (0 means 1)
  end type dt_conv_desc

  ! what a dt_stencil_apply callback gets, in Fortran order (the C side
  ! reverses every per-dim array); cells and offsets are 0-based
  type, bind(C) :: dt_stencil_block
    integer(c_int) :: dtype, ndim
    type(c_ptr) :: in                            ! the ghosted input block
    type(c_ptr) :: out                           ! the output's interior
    integer(c_int64_t) :: in_stride(DT_MAX_DIMS), out_stride(DT_MAX_DIMS)   ! elements
    integer(c_int64_t) :: width(DT_MAX_DIMS)     ! the halo widths
    integer(c_int64_t) :: lo(DT_MAX_DIMS), ext(DT_MAX_DIMS)  ! the cells to compute
    integer(c_int64_t) :: local_shape(DT_MAX_DIMS)           ! the whole interior
    integer(c_int64_t) :: offset(DT_MAX_DIMS)    ! global index of interior cell 0
    type(c_ptr) :: global_shape                  ! c_f_pointer to integer(c_int64_t) (ndim)
    integer(c_int64_t) :: width_hi(DT_MAX_DIMS)  ! the halo widths above the interior (width: below)
  end type dt_stencil_block

  ! dt_comm_get_stats (C's uint64_t counters)
  type, bind(C) :: dt_comm_stats
    integer(c_int64_t) :: calls = 0, bytes_sent = 0, bytes_recv = 0
    integer(c_int64_t) :: matmul_bytes_recv = 0, matmul_bound = 0
  end type dt_comm_stats

  ! the BLACS grid of dt_tensor_scalapack_desc / dt_tensor_desc_from_scalapack
  type, bind(C) :: dt_scalapack_grid
    integer(c_int) :: nprow = 0, npcol = 0
    character(kind=c_char) :: order(2) = c_null_char   ! "R" or "C", as blacs_gridinit takes it
    integer(c_int) :: myrow = -1, mycol = -1
  end type dt_scalapack_grid

  ! ---- dtensor_layers.h: the tensor-parallel layers (their constants and
  ! descs; the procedures at the end of the interfaces below) ----
  ! dt_tp_style, dt_tp_init, dt_tp_activation
  integer(c_int), parameter :: DT_TP_COLWISE = 0, DT_TP_ROWWISE = 1
  integer(c_int), parameter :: DT_TP_INIT_UNIFORM = 0, DT_TP_INIT_ZEROS = 1
  integer(c_int), parameter :: DT_TP_RELU = 0, DT_TP_GELU = 1

  ! x(in_features, batch...) -> y(out_features, batch...); W is w(in, out)
  type, bind(C) :: dt_tp_linear_desc
    integer(c_int) :: style = DT_TP_COLWISE         ! or DT_TP_ROWWISE
    integer(c_int64_t) :: in_features = 0           ! x's first dim (required)
    integer(c_int64_t) :: out_features = 0          ! y's first dim (required)
    integer(c_int) :: dtype = DT_F32                ! DT_F32 or DT_F64
    integer(c_int) :: no_bias = 0                   ! 1: no bias
    type(c_ptr) :: tp_dim = c_null_ptr              ! c_loc of a NUL-terminated name; null: the last mesh dim
    integer(c_int) :: sequence_parallel = 0         ! 1: x (colwise) / y (rowwise) Shard(seq_dim) on tp
    integer(c_int) :: seq_dim = 0                   ! a Fortran dim of x, 2..ndim; 0: 2
    integer(c_int) :: accumulate_grads = 0          ! 1: backward adds to the gradients
    integer(c_int) :: init = DT_TP_INIT_UNIFORM     ! or DT_TP_INIT_ZEROS
    integer(c_int) :: device = DT_HOST
  end type dt_tp_linear_desc

  ! fc1 colwise w1(in, hidden), fc2 rowwise w2(hidden, out)
  type, bind(C) :: dt_tp_mlp_desc
    integer(c_int64_t) :: in_features = 0           ! required
    integer(c_int64_t) :: hidden_features = 0       ! required, split over tp
    integer(c_int64_t) :: out_features = 0          ! 0: in_features
    integer(c_int) :: dtype = DT_F32
    integer(c_int) :: activation = DT_TP_RELU       ! or DT_TP_GELU
    real(c_double) :: dropout = 0                   ! p in [0, 1) when training
    integer(c_int) :: no_bias = 0
    type(c_ptr) :: tp_dim = c_null_ptr
    integer(c_int) :: sequence_parallel = 0
    integer(c_int) :: seq_dim = 0                   ! as in dt_tp_linear_desc
    integer(c_int) :: accumulate_grads = 0
    integer(c_int) :: init = DT_TP_INIT_UNIFORM
  end type dt_tp_mlp_desc

  ! communicators from a Fortran handle: integer (mpif.h, use mpi) or type(MPI_Comm) (use mpi_f08)
  interface dt_comm_mpi
    module procedure dt_comm_mpi_int, dt_comm_mpi_f08
  end interface dt_comm_mpi

  ! a Fortran array pointer onto a contiguous local shard (c_f_pointer, the local shape)
  interface dt_tensor_local
    ! >>generated: dt_tensor_local (gen_f90.py: do not edit; python3 tests/lint/gen_f90.py)
    module procedure dt_local_f32_1, dt_local_f32_2, dt_local_f32_3, dt_local_f32_4, &
       dt_local_f64_1, dt_local_f64_2, dt_local_f64_3, dt_local_f64_4, &
       dt_local_i32_1, dt_local_i32_2, dt_local_i32_3, dt_local_i32_4, &
       dt_local_i64_1, dt_local_i64_2, dt_local_i64_3, dt_local_i64_4, &
       dt_local_c64_1, dt_local_c64_2, dt_local_c64_3, dt_local_c64_4, &
       dt_local_c128_1, dt_local_c128_2, dt_local_c128_3, dt_local_c128_4
    ! <<generated: dt_tensor_local
  end interface dt_tensor_local

  ! The typed wraps: an array of real(c_float / c_double), integer(c_int32_t /
  ! c_int64_t) or complex(c_float_complex / c_double_complex), rank 1-4, in
  ! place of c_loc(...): the array's kind must be the desc's dtype (else
  ! DT_ERR_DTYPE on every rank, naming both: DT_F32 is 0, so a real(8)
  ! array with desc%dtype left unset is refused, not read as floats), and a
  ! section with a stride (u(1:n:2, :)) is DT_ERR_ARG: the dummies are
  ! assumed-shape `target` without `contiguous`, so the compiler never makes
  ! a copy-in/copy-out temporary that a DT_FLAG_BORROW tensor would alias.
  ! dt_tensor_from_local's array is read by its own shape: its extents must
  ! hold local_shape + 2 * local_ghost (DT_ERR_ARG naming both shapes), and
  ! larger ones are padding, read at the array's strides (a(-1:n+3, -1:ny+2)
  ! with local_ghost = [2, 2]: columns of n + 5 elements).
  ! dt_tensor_distribute's and dt_tensor_gather's `full` must hold the
  ! global shape's elements (DT_ERR_SHAPE), where it is read or written.
  ! The type(c_ptr) forms (c_loc; device memory, other dtypes) remain, as
  ! the *_ptr specifics under the same names.
  interface dt_tensor_from_local
    ! >>generated: dt_tensor_from_local (gen_f90.py: do not edit; python3 tests/lint/gen_f90.py)
    module procedure dt_fl_f32_1, dt_fl_f32_2, dt_fl_f32_3, dt_fl_f32_4, &
       dt_fl_f64_1, dt_fl_f64_2, dt_fl_f64_3, dt_fl_f64_4, &
       dt_fl_i32_1, dt_fl_i32_2, dt_fl_i32_3, dt_fl_i32_4, &
       dt_fl_i64_1, dt_fl_i64_2, dt_fl_i64_3, dt_fl_i64_4, &
       dt_fl_c64_1, dt_fl_c64_2, dt_fl_c64_3, dt_fl_c64_4, &
       dt_fl_c128_1, dt_fl_c128_2, dt_fl_c128_3, dt_fl_c128_4
    ! <<generated: dt_tensor_from_local
    procedure dt_tensor_from_local_ptr
  end interface dt_tensor_from_local
  interface dt_tensor_distribute
    ! >>generated: dt_tensor_distribute (gen_f90.py: do not edit; python3 tests/lint/gen_f90.py)
    module procedure dt_dist_f32_1, dt_dist_f32_2, dt_dist_f32_3, dt_dist_f32_4, &
       dt_dist_f64_1, dt_dist_f64_2, dt_dist_f64_3, dt_dist_f64_4, &
       dt_dist_i32_1, dt_dist_i32_2, dt_dist_i32_3, dt_dist_i32_4, &
       dt_dist_i64_1, dt_dist_i64_2, dt_dist_i64_3, dt_dist_i64_4, &
       dt_dist_c64_1, dt_dist_c64_2, dt_dist_c64_3, dt_dist_c64_4, &
       dt_dist_c128_1, dt_dist_c128_2, dt_dist_c128_3, dt_dist_c128_4
    ! <<generated: dt_tensor_distribute
    procedure dt_tensor_distribute_ptr
  end interface dt_tensor_distribute
  interface dt_tensor_gather
    ! >>generated: dt_tensor_gather (gen_f90.py: do not edit; python3 tests/lint/gen_f90.py)
    module procedure dt_gath_f32_1, dt_gath_f32_2, dt_gath_f32_3, dt_gath_f32_4, &
       dt_gath_f64_1, dt_gath_f64_2, dt_gath_f64_3, dt_gath_f64_4, &
       dt_gath_i32_1, dt_gath_i32_2, dt_gath_i32_3, dt_gath_i32_4, &
       dt_gath_i64_1, dt_gath_i64_2, dt_gath_i64_3, dt_gath_i64_4, &
       dt_gath_c64_1, dt_gath_c64_2, dt_gath_c64_3, dt_gath_c64_4, &
       dt_gath_c128_1, dt_gath_c128_2, dt_gath_c128_3, dt_gath_c128_4
    ! <<generated: dt_tensor_gather
    procedure dt_tensor_gather_ptr
  end interface dt_tensor_gather

  ! dtensor_layers.h: dt_tp_linear_backward(l, x, dy, dx) / dt_tp_mlp_backward(mlp, x, dy, dx)
  ! with dx the input gradient (a handle; c_null_ptr: made), or (l, x, dy): dx not wanted
  ! (saves a matmul and its collective, e.g. for the first layer)
  interface dt_tp_linear_backward
    procedure dt_tp_linear_backward_dx, dt_tp_linear_backward_nodx
  end interface dt_tp_linear_backward
  interface dt_tp_mlp_backward
    procedure dt_tp_mlp_backward_dx, dt_tp_mlp_backward_nodx
  end interface dt_tp_mlp_backward

  interface
    ! ---- the dt_f_* entry points (dtensor.h, >>api "Fortran") ----
    integer(c_int) function dt_f_check_sizes(sizes, n) bind(C, name="dt_f_check_sizes")
      import :: c_int, c_int64_t
      integer(c_int64_t), intent(in) :: sizes(*)
      integer(c_int), value :: n
    end function
    integer(c_int) function dt_f_comm_mpi(comm, sizes, n, out) bind(C, name="dt_f_comm_mpi")
      import :: c_int, c_int64_t, c_ptr
      integer(c_int), value :: comm   ! MPI_Fint
      integer(c_int64_t), intent(in) :: sizes(*)
      integer(c_int), value :: n
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_tensor_empty(m, d, out) bind(C, name="dt_f_tensor_empty")
      import :: c_int, c_ptr, dt_tensor_desc
      type(c_ptr), value :: m
      type(dt_tensor_desc), intent(in) :: d
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_tensor_zeros(m, d, out) bind(C, name="dt_f_tensor_zeros")
      import :: c_int, c_ptr, dt_tensor_desc
      type(c_ptr), value :: m
      type(dt_tensor_desc), intent(in) :: d
      type(c_ptr), intent(inout) :: out
    end function
    ! local: c_loc of your array (its start; with local_ghost the ghosted array's start)
    integer(c_int) function dt_tensor_from_local_ptr(m, d, local, flags, out) bind(C, name="dt_f_tensor_from_local")
      import :: c_int, c_ptr, dt_tensor_desc
      type(c_ptr), value :: m
      type(dt_tensor_desc), intent(in) :: d
      type(c_ptr), value :: local
      integer(c_int), value :: flags
      type(c_ptr), intent(inout) :: out
    end function
    ! full: c_loc of the whole global array (Fortran order) on src_rank (or every rank: DT_SRC_ALL)
    integer(c_int) function dt_tensor_distribute_ptr(m, d, full, src_rank, out) bind(C, name="dt_f_tensor_distribute")
      import :: c_int, c_ptr, dt_tensor_desc
      type(c_ptr), value :: m
      type(dt_tensor_desc), intent(in) :: d
      type(c_ptr), value :: full
      integer(c_int), value :: src_rank
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_tensor_redistribute(t, placements, out) bind(C, name="dt_f_tensor_redistribute")
      import :: c_int, c_ptr, dt_placement, DT_MAX_MESH_DIMS
      type(c_ptr), value :: t
      type(dt_placement), intent(in) :: placements(DT_MAX_MESH_DIMS)
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_tensor_shape(t, ndim, shape) bind(C, name="dt_f_tensor_shape")
      import :: c_int, c_ptr, c_int64_t, DT_MAX_DIMS
      type(c_ptr), value :: t
      integer(c_int), intent(out) :: ndim
      integer(c_int64_t), intent(out) :: shape(DT_MAX_DIMS)
    end function
    ! local shape and offset (elements before local element 1), Fortran order; ndim entries each
    integer(c_int) function dt_tensor_local_shape(t, shape, offset) bind(C, name="dt_f_tensor_local_shape")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: t
      integer(c_int64_t), intent(out) :: shape(*), offset(*)
    end function
    integer(c_int) function dt_f_tensor_local(t, dtype, ndim, shape) bind(C, name="dt_f_tensor_local")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: t
      integer(c_int), value :: dtype, ndim
      integer(c_int64_t), intent(out) :: shape(*)
    end function
    ! coord: the mesh coordinate (0-based, dt_mesh_coordinate's)
    integer(c_int) function dt_layout(m, d, coord, local_shape, local_offset) bind(C, name="dt_f_layout")
      import :: c_int, c_ptr, c_int64_t, dt_tensor_desc
      type(c_ptr), value :: m
      type(dt_tensor_desc), intent(in) :: d
      integer(c_int), intent(in) :: coord(*)
      integer(c_int64_t), intent(out) :: local_shape(*), local_offset(*)
    end function
    integer(c_int) function dt_tensor_set_halo(t, h) bind(C, name="dt_f_tensor_set_halo")
      import :: c_int, c_ptr, dt_halo_desc
      type(c_ptr), value :: t
      type(dt_halo_desc), intent(in) :: h
    end function
    ! dims: Fortran dims to sum over (ndims = 0: all)
    integer(c_int) function dt_sum(x, ndims, dims, keepdim, out) bind(C, name="dt_f_sum")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      integer(c_int), value :: ndims
      integer(c_int), intent(in) :: dims(*)
      integer(c_int), value :: keepdim
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_mean(x, ndims, dims, keepdim, out) bind(C, name="dt_f_mean")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      integer(c_int), value :: ndims
      integer(c_int), intent(in) :: dims(*)
      integer(c_int), value :: keepdim
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_max(x, ndims, dims, keepdim, out) bind(C, name="dt_f_max")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      integer(c_int), value :: ndims
      integer(c_int), intent(in) :: dims(*)
      integer(c_int), value :: keepdim
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_min(x, ndims, dims, keepdim, out) bind(C, name="dt_f_min")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      integer(c_int), value :: ndims
      integer(c_int), intent(in) :: dims(*)
      integer(c_int), value :: keepdim
      type(c_ptr), intent(inout) :: out
    end function
    ! the library-owned ghosted block (c_null_ptr without a halo) and its shape, Fortran order
    type(c_ptr) function dt_tensor_ghosted_data(t, ghosted_shape) bind(C, name="dt_f_tensor_ghosted_data")
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: t
      integer(c_int64_t), intent(out) :: ghosted_shape(*)
    end function
    ! out = matmul(a, b) in Fortran's sense ([m, k] x [k, n] in Fortran order)
    integer(c_int) function dt_matmul(a, b, out) bind(C, name="dt_f_matmul")
      import :: c_int, c_ptr
      type(c_ptr), value :: a, b
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_f_tensor_load_npy(m, path, ndim, placements, out) bind(C, name="dt_f_tensor_load_npy")
      import :: c_int, c_ptr, c_char, dt_placement, DT_MAX_MESH_DIMS
      type(c_ptr), value :: m
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int), value :: ndim
      type(dt_placement), intent(in) :: placements(DT_MAX_MESH_DIMS)
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int64_t) function dt_f_strcpy(s, buf, cap) bind(C, name="dt_f_strcpy")
      import :: c_ptr, c_char, c_int64_t
      type(c_ptr), value :: s
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_int64_t), value :: cap
    end function

    ! ---- C functions with no dim or shape argument: called directly, or
    ! through their dt_f_* twin (every call that takes a tensor) so that
    ! their refusals report shapes and placements in Fortran order ----
    type(c_ptr) function dt_c_last_error() bind(C, name="dt_last_error")
      import :: c_ptr
    end function
    type(c_ptr) function dt_c_status_string(st) bind(C, name="dt_status_string")
      import :: c_ptr, c_int
      integer(c_int), value :: st
    end function
    type(c_ptr) function dt_c_version() bind(C, name="dt_version")
      import :: c_ptr
    end function
    type(c_ptr) function dt_c_dtype_name(t) bind(C, name="dt_dtype_name")
      import :: c_ptr, c_int
      integer(c_int), value :: t
    end function
    subroutine dt_clear_error() bind(C, name="dt_clear_error")
    end subroutine
    subroutine dt_set_checks(on) bind(C, name="dt_set_checks")
      import :: c_int
      integer(c_int), value :: on
    end subroutine
    ! the error hook: fn is c_funloc of a bind(C) subroutine
    !   subroutine my_handler(st, call, msg, user) bind(C)
    !     integer(c_int), value :: st; type(c_ptr), value :: call, msg, user
    ! (call and msg: C strings, dt_f_string turns them into Fortran ones),
    ! called on every rank where a call fails; c_funloc(dt_error_abort) is the
    ! stock one (prints, MPI_Abort); c_null_funptr removes it
    subroutine dt_set_error_handler(fn, user) bind(C, name="dt_set_error_handler")
      import :: c_funptr, c_ptr
      type(c_funptr), value :: fn
      type(c_ptr), value :: user
    end subroutine
    subroutine dt_error_abort(st, call, msg, user) bind(C, name="dt_error_abort")
      import :: c_int, c_ptr
      integer(c_int), value :: st
      type(c_ptr), value :: call, msg, user
    end subroutine
    ! placements (Shard: a Fortran dim)
    type(dt_placement) function dt_replicate() bind(C, name="dt_replicate")
      import :: dt_placement
    end function
    type(dt_placement) function dt_shard(dim) bind(C, name="dt_shard")
      import :: dt_placement, c_int
      integer(c_int), value :: dim
    end function
    type(dt_placement) function dt_shard_balanced(dim) bind(C, name="dt_shard_balanced")
      import :: dt_placement, c_int
      integer(c_int), value :: dim
    end function
    ! a dim of points (vertex- or face-centred): n-1 cells balanced, the edge point to the last part
    type(dt_placement) function dt_shard_points(dim) bind(C, name="dt_shard_points")
      import :: dt_placement, c_int
      integer(c_int), value :: dim
    end function
    ! sizes: c_loc of integer(c_int64_t) sizes(mesh dim size), copied by the call taking the placement
    type(dt_placement) function dt_shard_sizes(dim, sizes) bind(C, name="dt_shard_sizes")
      import :: dt_placement, c_int, c_ptr
      integer(c_int), value :: dim
      type(c_ptr), value :: sizes
    end function
    type(dt_placement) function dt_shard_cyclic(dim, block) bind(C, name="dt_shard_cyclic")
      import :: dt_placement, c_int, c_int64_t
      integer(c_int), value :: dim
      integer(c_int64_t), value :: block
    end function
    ! block-cyclic with block 0 on mesh coordinate src (ScaLAPACK's RSRC/CSRC), 0-based
    type(dt_placement) function dt_shard_cyclic_src(dim, block, src) bind(C, name="dt_shard_cyclic_src")
      import :: dt_placement, c_int, c_int64_t
      integer(c_int), value :: dim
      integer(c_int64_t), value :: block
      integer(c_int), value :: src
    end function
    type(dt_placement) function dt_partial(op) bind(C, name="dt_partial")
      import :: dt_placement, c_int
      integer(c_int), value :: op
    end function
    ! communicators and meshes
    integer(c_int) function dt_comm_self(out) bind(C, name="dt_comm_self")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: out
    end function
    subroutine dt_comm_destroy(c) bind(C, name="dt_comm_destroy")
      import :: c_ptr
      type(c_ptr), value :: c
    end subroutine
    integer(c_int) function dt_comm_rank(c) bind(C, name="dt_comm_rank")
      import :: c_int, c_ptr
      type(c_ptr), value :: c
    end function
    integer(c_int) function dt_comm_size(c) bind(C, name="dt_comm_size")
      import :: c_int, c_ptr
      type(c_ptr), value :: c
    end function
    integer(c_int) function dt_comm_barrier(c) bind(C, name="dt_comm_barrier")
      import :: c_int, c_ptr
      type(c_ptr), value :: c
    end function
    ! values(1:count) (c_loc) reduced in place over the mesh dims dims(1:ndims)
    ! (0-based; ndims = 0: the whole mesh), e.g. a residual norm:
    !   st = dt_mesh_allreduce(m, 0, [0], c_loc(r2), 1_c_size_t, DT_F64, DT_REDUCE_SUM)
    integer(c_int) function dt_mesh_allreduce(m, ndims, dims, values, count, dtype, op) &
        bind(C, name="dt_mesh_allreduce")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: m
      integer(c_int), value :: ndims
      integer(c_int), intent(in) :: dims(*)
      type(c_ptr), value :: values
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype, op
    end function
    integer(c_int) function dt_mesh_create(comm, d, out) bind(C, name="dt_f_mesh_create")
      import :: c_int, c_ptr, dt_mesh_desc
      type(c_ptr), value :: comm
      type(dt_mesh_desc), intent(in) :: d
      type(c_ptr), intent(inout) :: out
    end function
    subroutine dt_mesh_destroy(m) bind(C, name="dt_mesh_destroy")
      import :: c_ptr
      type(c_ptr), value :: m
    end subroutine
    ! 1 and coord(1:ndim) (0-based) on a rank in the mesh; 0 outside it
    integer(c_int) function dt_mesh_coordinate(m, coord) bind(C, name="dt_mesh_coordinate")
      import :: c_int, c_ptr
      type(c_ptr), value :: m
      integer(c_int), intent(out) :: coord(*)
    end function
    integer(c_int) function dt_mesh_rank(m) bind(C, name="dt_mesh_rank")
      import :: c_int, c_ptr
      type(c_ptr), value :: m
    end function
    integer(c_int) function dt_mesh_size(m) bind(C, name="dt_mesh_size")
      import :: c_int, c_ptr
      type(c_ptr), value :: m
    end function
    integer(c_int) function dt_mesh_ndim(m) bind(C, name="dt_mesh_ndim")
      import :: c_int, c_ptr
      type(c_ptr), value :: m
    end function
    integer(c_int) function dt_mesh_dim_size(m, dim) bind(C, name="dt_mesh_dim_size")
      import :: c_int, c_ptr
      type(c_ptr), value :: m
      integer(c_int), value :: dim
    end function
    ! tensors
    subroutine dt_tensor_destroy(t) bind(C, name="dt_tensor_destroy")
      import :: c_ptr
      type(c_ptr), value :: t
    end subroutine
    ! full: c_loc of an array of the global shape (Fortran order), on every mesh rank
    integer(c_int) function dt_tensor_gather_ptr(t, full) bind(C, name="dt_f_tensor_gather")
      import :: c_int, c_ptr
      type(c_ptr), value :: t, full
    end function
    type(c_ptr) function dt_tensor_data(t) bind(C, name="dt_tensor_data")
      import :: c_ptr
      type(c_ptr), value :: t
    end function
    integer(c_size_t) function dt_tensor_local_numel(t) bind(C, name="dt_tensor_local_numel")
      import :: c_size_t, c_ptr
      type(c_ptr), value :: t
    end function
    ! halos
    integer(c_int) function dt_halo_exchange(t) bind(C, name="dt_f_halo_exchange")
      import :: c_int, c_ptr
      type(c_ptr), value :: t
    end function
    ! dims of points (dt_shard_points): the copies of shared points take their owner's value; _sum: the
    ! owner first becomes the sum of its value and its copies'
    integer(c_int) function dt_tensor_sync_shared(t) bind(C, name="dt_f_tensor_sync_shared")
      import :: c_int, c_ptr
      type(c_ptr), value :: t
    end function
    integer(c_int) function dt_tensor_sum_shared(t) bind(C, name="dt_f_tensor_sum_shared")
      import :: c_int, c_ptr
      type(c_ptr), value :: t
    end function
    integer(c_int) function dt_halo_exchange_begin(t) bind(C, name="dt_f_halo_exchange_begin")
      import :: c_int, c_ptr
      type(c_ptr), value :: t
    end function
    integer(c_int) function dt_halo_exchange_end(t) bind(C, name="dt_f_halo_exchange_end")
      import :: c_int, c_ptr
      type(c_ptr), value :: t
    end function
    ! fewer ghost layers than the halo's: width(d) layers along dim d (0 .. the halo's width(d)), as a
    ! code that asks for depth 1 or 2 at each exchange; dt_halo_exchange_end ends the _begin form
    integer(c_int) function dt_halo_exchange_layers(t, width) bind(C, name="dt_f_halo_exchange_layers")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: t
      integer(c_int64_t), intent(in) :: width(*)
    end function
    integer(c_int) function dt_halo_exchange_layers_begin(t, width) bind(C, name="dt_f_halo_exchange_layers_begin")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: t
      integer(c_int64_t), intent(in) :: width(*)
    end function
    ! grouped exchanges: n tensors of one mesh (each with its halo) exchanged together, one message per
    ! neighbour rank; ts(1:n) their handles; the group is valid while their halos stay as they were
    integer(c_int) function dt_halo_group_create(ts, n, g) bind(C, name="dt_halo_group_create")
      import :: c_int, c_ptr
      type(c_ptr), intent(in) :: ts(*)
      integer(c_int), value :: n
      type(c_ptr), intent(inout) :: g
    end function
    integer(c_int) function dt_halo_group_exchange(g) bind(C, name="dt_halo_group_exchange")
      import :: c_int, c_ptr
      type(c_ptr), value :: g
    end function
    integer(c_int) function dt_halo_group_exchange_begin(g) bind(C, name="dt_halo_group_exchange_begin")
      import :: c_int, c_ptr
      type(c_ptr), value :: g
    end function
    integer(c_int) function dt_halo_group_exchange_end(g) bind(C, name="dt_halo_group_exchange_end")
      import :: c_int, c_ptr
      type(c_ptr), value :: g
    end function
    ! width(i) ghost layers along each member's dim i (a member of a narrower halo: all it has)
    integer(c_int) function dt_halo_group_exchange_layers(g, width) bind(C, name="dt_f_halo_group_exchange_layers")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: g
      integer(c_int64_t), intent(in) :: width(*)
    end function
    integer(c_int) function dt_halo_group_exchange_layers_begin(g, width) &
        bind(C, name="dt_f_halo_group_exchange_layers_begin")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: g
      integer(c_int64_t), intent(in) :: width(*)
    end function
    subroutine dt_halo_group_destroy(g) bind(C, name="dt_halo_group_destroy")
      import :: c_ptr
      type(c_ptr), value :: g
    end subroutine
    ! asynchronous redistribution: _begin starts it (the checks of the blocking call), _end completes
    ! it; in between t is not written and out is not touched; _test (done = 1: arrived) moves it on
    integer(c_int) function dt_tensor_redistribute_begin(t, placements, out) &
        bind(C, name="dt_f_tensor_redistribute_begin")
      import :: c_int, c_ptr, dt_placement, DT_MAX_MESH_DIMS
      type(c_ptr), value :: t
      type(dt_placement), intent(in) :: placements(DT_MAX_MESH_DIMS)
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_tensor_redistribute_reduce_begin(t, placements, op, out) &
        bind(C, name="dt_f_tensor_redistribute_reduce_begin")
      import :: c_int, c_ptr, dt_placement, DT_MAX_MESH_DIMS
      type(c_ptr), value :: t
      type(dt_placement), intent(in) :: placements(DT_MAX_MESH_DIMS)
      integer(c_int), value :: op
      type(c_ptr), value :: out
    end function
    integer(c_int) function dt_tensor_redistribute_end(out) bind(C, name="dt_f_tensor_redistribute_end")
      import :: c_int, c_ptr
      type(c_ptr), value :: out
    end function
    integer(c_int) function dt_tensor_redistribute_test(out, done) bind(C, name="dt_f_tensor_redistribute_test")
      import :: c_int, c_ptr
      type(c_ptr), value :: out
      integer(c_int), intent(out) :: done
    end function
    ! random numbers (C's dt_uniform_, ...: in place)
    integer(c_int) function dt_manual_seed(m, seed) bind(C, name="dt_manual_seed")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: m
      integer(c_int64_t), value :: seed
    end function
    integer(c_int) function dt_uniform(t, lo, hi) bind(C, name="dt_f_uniform_")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: t
      real(c_double), value :: lo, hi
    end function
    integer(c_int) function dt_normal(t, mean, std) bind(C, name="dt_f_normal_")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: t
      real(c_double), value :: mean, std
    end function
    integer(c_int) function dt_bernoulli(t, p) bind(C, name="dt_f_bernoulli_")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: t
      real(c_double), value :: p
    end function
    integer(c_int) function dt_randint(t, lo, hi) bind(C, name="dt_f_randint_")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: t
      integer(c_int64_t), value :: lo, hi
    end function
    ! ops (pointwise: no order involved)
    integer(c_int) function dt_add(a, b, out) bind(C, name="dt_f_add")
      import :: c_int, c_ptr
      type(c_ptr), value :: a, b
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_sub(a, b, out) bind(C, name="dt_f_sub")
      import :: c_int, c_ptr
      type(c_ptr), value :: a, b
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_mul(a, b, out) bind(C, name="dt_f_mul")
      import :: c_int, c_ptr
      type(c_ptr), value :: a, b
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_scale(x, a, out) bind(C, name="dt_f_scale")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: x
      real(c_double), value :: a
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_copy(x, out) bind(C, name="dt_f_copy")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_axpy(a, x, y) bind(C, name="dt_f_axpy")
      import :: c_int, c_ptr, c_double
      real(c_double), value :: a
      type(c_ptr), value :: x, y
    end function
    ! ---- the typed wraps' entry points (behind the generics above) ----
    ! extents: shape(local), rank of them (checked against the desc's storage)
    integer(c_int) function dt_f_tensor_from_local_shaped(m, d, local, array_dtype, contiguous, rank, extents, &
                                                          flags, out) bind(C, name="dt_f_tensor_from_local_shaped")
      import :: c_int, c_int64_t, c_ptr, dt_tensor_desc
      type(c_ptr), value :: m
      type(dt_tensor_desc), intent(in) :: d
      type(c_ptr), value :: local
      integer(c_int), value :: array_dtype, contiguous, rank
      integer(c_int64_t), intent(in) :: extents(*)
      integer(c_int), value :: flags
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_f_tensor_distribute_typed(m, d, full, array_dtype, contiguous, nelem, src_rank, out) &
        bind(C, name="dt_f_tensor_distribute_typed")
      import :: c_int, c_ptr, c_int64_t, dt_tensor_desc
      type(c_ptr), value :: m
      type(dt_tensor_desc), intent(in) :: d
      type(c_ptr), value :: full
      integer(c_int), value :: array_dtype, contiguous
      integer(c_int64_t), value :: nelem
      integer(c_int), value :: src_rank
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_f_tensor_gather_typed(t, full, array_dtype, contiguous, nelem) &
        bind(C, name="dt_f_tensor_gather_typed")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: t, full
      integer(c_int), value :: array_dtype, contiguous
      integer(c_int64_t), value :: nelem
    end function

    ! ---- views and dim-taking ops: Fortran dims (dtensor.h >>fortran) ----
    integer(c_int) function dt_transpose(x, d0, d1, out) bind(C, name="dt_f_transpose")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      integer(c_int), value :: d0, d1
      type(c_ptr), intent(inout) :: out
    end function
    ! perm(i): the dim of x that becomes the result's dim i (ndim entries)
    integer(c_int) function dt_permute(x, perm, out) bind(C, name="dt_f_permute")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      integer(c_int), intent(in) :: perm(*)
      type(c_ptr), intent(inout) :: out
    end function
    ! shape(1:ndim) in Fortran order, one entry may be -1; Fortran's
    ! reshape() of the same shape: column-major element order is kept
    integer(c_int) function dt_reshape(x, ndim, shape, out) bind(C, name="dt_f_reshape")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: x
      integer(c_int), value :: ndim
      integer(c_int64_t), intent(in) :: shape(*)
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_squeeze(x, dim, out) bind(C, name="dt_f_squeeze")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      integer(c_int), value :: dim
      type(c_ptr), intent(inout) :: out
    end function
    ! dim: the new size-1 dim's place in the result, 1..ndim+1
    integer(c_int) function dt_unsqueeze(x, dim, out) bind(C, name="dt_f_unsqueeze")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      integer(c_int), value :: dim
      type(c_ptr), intent(inout) :: out
    end function
    ! x(..., start:start+length-1, ...) along dim: start is 1-based
    integer(c_int) function dt_narrow(x, dim, start, length, out) bind(C, name="dt_f_narrow")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: x
      integer(c_int), value :: dim
      integer(c_int64_t), value :: start, length
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_f_cat(n, xs, dim, out) bind(C, name="dt_f_cat")
      import :: c_int, c_ptr
      integer(c_int), value :: n
      type(c_ptr), intent(in) :: xs(*)
      integer(c_int), value :: dim
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_f_stack(n, xs, dim, out) bind(C, name="dt_f_stack")
      import :: c_int, c_ptr
      integer(c_int), value :: n
      type(c_ptr), intent(in) :: xs(*)
      integer(c_int), value :: dim
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_f_split(x, dim, n, sizes, outs, nouts) bind(C, name="dt_f_split")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: x
      integer(c_int), value :: dim, n
      integer(c_int64_t), intent(in) :: sizes(*)
      type(c_ptr), intent(inout) :: outs(*)
      integer(c_int), value :: nouts
    end function
    ! t's dtype, shape, placements (Fortran dims) and device; the storage fields empty
    integer(c_int) function dt_tensor_get_desc(t, d) bind(C, name="dt_f_tensor_get_desc")
      import :: c_int, c_ptr, dt_tensor_desc
      type(c_ptr), value :: t
      type(dt_tensor_desc), intent(out) :: d
    end function
    integer(c_int) function dt_softmax(x, dim, out) bind(C, name="dt_f_softmax")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      integer(c_int), value :: dim
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_log_softmax(x, dim, out) bind(C, name="dt_f_log_softmax")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      integer(c_int), value :: dim
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_norm2(x, ndims, dims, keepdim, out) bind(C, name="dt_f_norm2")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      integer(c_int), value :: ndims
      integer(c_int), intent(in) :: dims(*)
      integer(c_int), value :: keepdim
      type(c_ptr), intent(inout) :: out
    end function
    ! DT_I64 indices, 0-based (maxloc - 1); over all dims the column-major
    ! linear index, 0-based
    integer(c_int) function dt_argmax(x, ndims, dims, keepdim, out) bind(C, name="dt_f_argmax")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      integer(c_int), value :: ndims
      integer(c_int), intent(in) :: dims(*)
      integer(c_int), value :: keepdim
      type(c_ptr), intent(inout) :: out
    end function
    ! matmul(a, b) of 2-D tensors; dt_bmm: a(m, k, nb) x b(k, n, nb), batch last
    integer(c_int) function dt_mm(a, b, out) bind(C, name="dt_f_mm")
      import :: c_int, c_ptr
      type(c_ptr), value :: a, b
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_bmm(a, b, out) bind(C, name="dt_f_bmm")
      import :: c_int, c_ptr
      type(c_ptr), value :: a, b
      type(c_ptr), intent(inout) :: out
    end function
    ! beta * c + alpha * matmul(a, b)
    integer(c_int) function dt_addmm(c, a, b, beta, alpha, out) bind(C, name="dt_f_addmm")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: c, a, b
      real(c_double), value :: beta, alpha
      type(c_ptr), intent(inout) :: out
    end function
    ! out = out (op) redistribute(t, placements), elementwise, op DT_REDUCE_SUM/MAX/MIN;
    ! out exists with t's mesh, shape and dtype and exactly `placements`
    integer(c_int) function dt_tensor_redistribute_reduce(t, placements, op, out) &
        bind(C, name="dt_f_tensor_redistribute_reduce")
      import :: c_int, c_ptr, dt_placement, DT_MAX_MESH_DIMS
      type(c_ptr), value :: t
      type(dt_placement), intent(in) :: placements(DT_MAX_MESH_DIMS)
      integer(c_int), value :: op
      type(c_ptr), value :: out
    end function
    integer(c_int) function dt_tensor_rand(m, d, out) bind(C, name="dt_f_tensor_rand")
      import :: c_int, c_ptr, dt_tensor_desc
      type(c_ptr), value :: m
      type(dt_tensor_desc), intent(in) :: d
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_tensor_randn(m, d, out) bind(C, name="dt_f_tensor_randn")
      import :: c_int, c_ptr, dt_tensor_desc
      type(c_ptr), value :: m
      type(dt_tensor_desc), intent(in) :: d
      type(c_ptr), intent(inout) :: out
    end function
    ! the storage's element strides, Fortran order; returns ndim
    integer(c_int) function dt_tensor_local_strides(t, strides) bind(C, name="dt_f_tensor_local_strides")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: t
      integer(c_int64_t), intent(out) :: strides(*)
    end function
    ! the 0-based global position of each local position along Fortran dim `dim`
    integer(c_int) function dt_tensor_local_indices(t, dim, global_index) bind(C, name="dt_f_tensor_local_indices")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: t
      integer(c_int), value :: dim
      integer(c_int64_t), intent(out) :: global_index(*)
    end function
    integer(c_int) function dt_layout_indices(m, d, coord, dim, global_index) bind(C, name="dt_f_layout_indices")
      import :: c_int, c_ptr, c_int64_t, dt_tensor_desc
      type(c_ptr), value :: m
      type(dt_tensor_desc), intent(in) :: d
      integer(c_int), intent(in) :: coord(*)
      integer(c_int), value :: dim
      integer(c_int64_t), intent(out) :: global_index(*)
    end function
    ! out = fn over x's ghosted block (x needs a halo), the exchange
    ! overlapped. fn is c_funloc of
    !   subroutine my_stencil(b, user) bind(C)
    !     type(dt_stencil_block), intent(in) :: b
    !     type(c_ptr), value :: user
    ! called (maybe several times, on the inner cells then the rim) to
    ! compute cells lo(d) <= i(d) < lo(d) + ext(d), 0-based interior
    ! coordinates in Fortran order: interior cell i is element
    ! sum((i(d) + width(d)) * in_stride(d)) of b%in (its neighbours are
    ! there too), and its result goes to element sum(i(d) * out_stride(d))
    ! of b%out (both 0-based: c_f_pointer them as 1-D arrays and add 1)
    integer(c_int) function dt_stencil_apply(x, fn, user, out) bind(C, name="dt_f_stencil_apply")
      import :: c_int, c_ptr, c_funptr
      type(c_ptr), value :: x
      type(c_funptr), value :: fn
      type(c_ptr), value :: user
      type(c_ptr), intent(inout) :: out
    end function
    ! PyTorch's convolution in Fortran order: x(S..., C_in, N), w(K..., C_in, C_out),
    ! bias(C_out) or c_null_ptr, out(O..., C_out, N); desc's padding(i) and
    ! dilation(i) for Fortran spatial dim i
    integer(c_int) function dt_conv1d(x, w, bias, desc, out) bind(C, name="dt_f_conv1d")
      import :: c_int, c_ptr, dt_conv_desc
      type(c_ptr), value :: x, w, bias
      type(dt_conv_desc), intent(in) :: desc
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_conv2d(x, w, bias, desc, out) bind(C, name="dt_f_conv2d")
      import :: c_int, c_ptr, dt_conv_desc
      type(c_ptr), value :: x, w, bias
      type(dt_conv_desc), intent(in) :: desc
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_conv3d(x, w, bias, desc, out) bind(C, name="dt_f_conv3d")
      import :: c_int, c_ptr, dt_conv_desc
      type(c_ptr), value :: x, w, bias
      type(dt_conv_desc), intent(in) :: desc
      type(c_ptr), intent(inout) :: out
    end function

    ! ---- no dim or shape argument (continued): dt_f_* twins for tensors ----
    ! ScaLAPACK, zero copies: a Fortran a(M, N) with placements
    ! [dt_shard_cyclic(1, mb), dt_shard_cyclic(2, nb)] on a P x Q mesh is
    ! ScaLAPACK's A(M, N) (desc = [1, ictxt, M, N, mb, nb, 0, 0, LLD]) on a
    ! P x Q BLACS grid of order "R"; the BLACS number of each process is its
    ! mesh rank. Learn the grid (ictxt 0), make the context, call again.
    integer(c_int) function dt_tensor_scalapack_desc(t, ictxt, desc, grid) bind(C, name="dt_f_tensor_scalapack_desc")
      import :: c_int, c_ptr, dt_scalapack_grid
      type(c_ptr), value :: t
      integer(c_int), value :: ictxt
      integer(c_int), intent(out) :: desc(9)
      type(dt_scalapack_grid), intent(out) :: grid
    end function
    ! the inverse: the desc (Fortran order) under which dt_tensor_from_local
    ! wraps an existing ScaLAPACK array's local part; local_shape(2) and
    ! local_strides(2) are filled and d points at them (set d%local_alloc to
    ! the array where d%local_alloc_bytes /= 0: LLD pads the columns)
    integer(c_int) function dt_tensor_desc_from_scalapack(desc, grid, dtype, d, local_shape, local_strides) &
        bind(C, name="dt_f_tensor_desc_from_scalapack")
      import :: c_int, c_int64_t, dt_scalapack_grid, dt_tensor_desc
      integer(c_int), intent(in) :: desc(9)
      type(dt_scalapack_grid), intent(in) :: grid
      integer(c_int), value :: dtype
      type(dt_tensor_desc), intent(out) :: d
      integer(c_int64_t), intent(out), target :: local_shape(2), local_strides(2)
    end function
    integer(c_int) function dt_cast(x, to, out) bind(C, name="dt_f_cast")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      integer(c_int), value :: to   ! DT_F64, DT_C128, ...
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_mesh_shm_alloc(m, bytes, ptr) bind(C, name="dt_mesh_shm_alloc")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: m
      integer(c_size_t), value :: bytes
      type(c_ptr), intent(out) :: ptr
    end function
    subroutine dt_mesh_shm_free(m, ptr) bind(C, name="dt_mesh_shm_free")
      import :: c_ptr
      type(c_ptr), value :: m, ptr
    end subroutine
    integer(c_int) function dt_mesh_set_matmul_budget(m, bytes) bind(C, name="dt_mesh_set_matmul_budget")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: m
      integer(c_int64_t), value :: bytes
    end function
    integer(c_int) function dt_mesh_trim(m) bind(C, name="dt_mesh_trim")
      import :: c_int, c_ptr
      type(c_ptr), value :: m
    end function
    integer(c_int) function dt_mesh_op_cache_count(m) bind(C, name="dt_mesh_op_cache_count")
      import :: c_int, c_ptr
      type(c_ptr), value :: m
    end function
    integer(c_int) function dt_comm_set_shm(c, mode) bind(C, name="dt_comm_set_shm")
      import :: c_int, c_ptr
      type(c_ptr), value :: c
      integer(c_int), value :: mode
    end function
    subroutine dt_comm_get_stats(c, s) bind(C, name="dt_comm_get_stats")
      import :: c_ptr, dt_comm_stats
      type(c_ptr), value :: c
      type(dt_comm_stats), intent(out) :: s
    end subroutine
    subroutine dt_comm_reset_stats(c) bind(C, name="dt_comm_reset_stats")
      import :: c_ptr
      type(c_ptr), value :: c
    end subroutine
    integer(c_int) function dt_get_checks() bind(C, name="dt_get_checks")
      import :: c_int
    end function
    integer(c_size_t) function dt_dtype_size(dtype) bind(C, name="dt_dtype_size")
      import :: c_size_t, c_int
      integer(c_int), value :: dtype
    end function
    type(c_ptr) function dt_tensor_mesh(t) bind(C, name="dt_tensor_mesh")
      import :: c_ptr
      type(c_ptr), value :: t
    end function
    integer(c_int) function dt_tensor_zero_local(t) bind(C, name="dt_f_tensor_zero_local")
      import :: c_int, c_ptr
      type(c_ptr), value :: t
    end function
    integer(c_int) function dt_rng_get_state(m, seed, offset) bind(C, name="dt_rng_get_state")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: m
      integer(c_int64_t), intent(out) :: seed, offset   ! C's uint64_t, bit for bit
    end function
    integer(c_int) function dt_rng_set_state(m, seed, offset) bind(C, name="dt_rng_set_state")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: m
      integer(c_int64_t), value :: seed, offset
    end function
    ! pointwise unary ops
    integer(c_int) function dt_neg(x, out) bind(C, name="dt_f_neg")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_abs(x, out) bind(C, name="dt_f_abs")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_exp(x, out) bind(C, name="dt_f_exp")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_log(x, out) bind(C, name="dt_f_log")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_sqrt(x, out) bind(C, name="dt_f_sqrt")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_rsqrt(x, out) bind(C, name="dt_f_rsqrt")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_sin(x, out) bind(C, name="dt_f_sin")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_cos(x, out) bind(C, name="dt_f_cos")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_tanh(x, out) bind(C, name="dt_f_tanh")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_sigmoid(x, out) bind(C, name="dt_f_sigmoid")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_relu(x, out) bind(C, name="dt_f_relu")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_gelu(x, out) bind(C, name="dt_f_gelu")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_silu(x, out) bind(C, name="dt_f_silu")
      import :: c_int, c_ptr
      type(c_ptr), value :: x
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_shift(x, a, out) bind(C, name="dt_f_shift")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: x
      real(c_double), value :: a
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_pow(x, p, out) bind(C, name="dt_f_pow")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: x
      real(c_double), value :: p
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_fill(x, value, out) bind(C, name="dt_f_fill")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: x
      real(c_double), value :: value
      type(c_ptr), intent(inout) :: out
    end function
    ! pointwise binary (broadcasting aligns shapes at the left in Fortran order)
    integer(c_int) function dt_div(a, b, out) bind(C, name="dt_f_div")
      import :: c_int, c_ptr
      type(c_ptr), value :: a, b
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_maximum(a, b, out) bind(C, name="dt_f_maximum")
      import :: c_int, c_ptr
      type(c_ptr), value :: a, b
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_minimum(a, b, out) bind(C, name="dt_f_minimum")
      import :: c_int, c_ptr
      type(c_ptr), value :: a, b
      type(c_ptr), intent(inout) :: out
    end function
    ! 1-D . 1-D -> 0-d (no conjugation)
    integer(c_int) function dt_dot(a, b, out) bind(C, name="dt_f_dot")
      import :: c_int, c_ptr
      type(c_ptr), value :: a, b
      type(c_ptr), intent(inout) :: out
    end function
    ! Fortran order: x(in, ...), w(in, out_features), bias(out_features) or
    ! c_null_ptr -> out(out_features, ...) = matmul(transpose(w), x) + bias
    integer(c_int) function dt_linear(x, w, bias, out) bind(C, name="dt_f_linear")
      import :: c_int, c_ptr
      type(c_ptr), value :: x, w, bias
      type(c_ptr), intent(inout) :: out
    end function
    ! over Fortran dim 1 (C's last); w, b: c_null_ptr for none
    integer(c_int) function dt_layer_norm(x, w, b, eps, out) bind(C, name="dt_f_layer_norm")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: x, w, b
      real(c_double), value :: eps
      type(c_ptr), intent(inout) :: out
    end function
    integer(c_int) function dt_rms_norm(x, w, eps, out) bind(C, name="dt_f_rms_norm")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: x, w
      real(c_double), value :: eps
      type(c_ptr), intent(inout) :: out
    end function
    ! table(D, V), 0-based integer indices idx(...) -> out(D, ...)
    integer(c_int) function dt_embedding(table, idx, out) bind(C, name="dt_f_embedding")
      import :: c_int, c_ptr
      type(c_ptr), value :: table, idx
      type(c_ptr), intent(inout) :: out
    end function
    ! logits(C, N), 0-based integer targets(N) -> 0-d mean loss
    integer(c_int) function dt_cross_entropy(logits, target, out) bind(C, name="dt_f_cross_entropy")
      import :: c_int, c_ptr
      type(c_ptr), value :: logits, target
      type(c_ptr), intent(inout) :: out
    end function

    ! ---- dtensor_layers.h: the tensor-parallel layers ----
    ! Interfaces only: a program that calls none of them links without the
    ! layers' object (dtensor.h's alone); one that does links it too
    ! (-DDTENSOR_LAYERS_IMPLEMENTATION -c dtensor_layers.h, or -ldtensor).
    ! Handles are type(c_ptr). In Fortran order: x(in, batch...), y(out,
    ! batch...), W w(in, out), b(out); colwise W Shard(2), b Shard(1), x
    ! Replicate, y Shard(1) on tp; rowwise W Shard(1), x Shard(1), y
    ! Replicate (Shard(seq_dim) with sequence parallelism). dx = matmul(w,
    ! dy), dW = matmul(x, transpose(dy)) over the batch.
    integer(c_int) function dt_tp_linear_create(m, desc, out) bind(C, name="dt_f_tp_linear_create")
      import :: c_int, c_ptr, dt_tp_linear_desc
      type(c_ptr), value :: m
      type(dt_tp_linear_desc), intent(in) :: desc
      type(c_ptr), intent(inout) :: out
    end function
    subroutine dt_tp_linear_destroy(l) bind(C, name="dt_tp_linear_destroy")
      import :: c_ptr
      type(c_ptr), value :: l
    end subroutine
    ! the layer's tensors (owned by it): w(in, out), b(out) (c_null_ptr with no_bias), their gradients
    type(c_ptr) function dt_tp_linear_weight(l) bind(C, name="dt_tp_linear_weight")
      import :: c_ptr
      type(c_ptr), value :: l
    end function
    type(c_ptr) function dt_tp_linear_bias(l) bind(C, name="dt_tp_linear_bias")
      import :: c_ptr
      type(c_ptr), value :: l
    end function
    type(c_ptr) function dt_tp_linear_grad_weight(l) bind(C, name="dt_tp_linear_grad_weight")
      import :: c_ptr
      type(c_ptr), value :: l
    end function
    type(c_ptr) function dt_tp_linear_grad_bias(l) bind(C, name="dt_tp_linear_grad_bias")
      import :: c_ptr
      type(c_ptr), value :: l
    end function
    ! the placement on tp the layer takes x in / gives y in (Shard: a Fortran dim)
    type(dt_placement) function dt_tp_linear_input_placement(l) bind(C, name="dt_f_tp_linear_input_placement")
      import :: c_ptr, dt_placement
      type(c_ptr), value :: l
    end function
    type(dt_placement) function dt_tp_linear_output_placement(l) bind(C, name="dt_f_tp_linear_output_placement")
      import :: c_ptr, dt_placement
      type(c_ptr), value :: l
    end function
    integer(c_int) function dt_tp_linear_forward(l, x, y) bind(C, name="dt_f_tp_linear_forward")
      import :: c_int, c_ptr
      type(c_ptr), value :: l, x
      type(c_ptr), intent(inout) :: y
    end function
    ! the specifics of the generic dt_tp_linear_backward (above)
    integer(c_int) function dt_tp_linear_backward_dx(l, x, dy, dx) bind(C, name="dt_f_tp_linear_backward")
      import :: c_int, c_ptr
      type(c_ptr), value :: l, x, dy
      type(c_ptr), intent(inout) :: dx
    end function
    integer(c_int) function dt_tp_linear_backward_nodx(l, x, dy) bind(C, name="dt_f_tp_linear_backward_nodx")
      import :: c_int, c_ptr
      type(c_ptr), value :: l, x, dy
    end function
    integer(c_int) function dt_tp_linear_zero_grad(l) bind(C, name="dt_f_tp_linear_zero_grad")
      import :: c_int, c_ptr
      type(c_ptr), value :: l
    end function
    integer(c_int) function dt_tp_linear_sgd(l, lr) bind(C, name="dt_f_tp_linear_sgd")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: l
      real(c_double), value :: lr
    end function
    integer(c_int) function dt_tp_mlp_create(m, desc, out) bind(C, name="dt_f_tp_mlp_create")
      import :: c_int, c_ptr, dt_tp_mlp_desc
      type(c_ptr), value :: m
      type(dt_tp_mlp_desc), intent(in) :: desc
      type(c_ptr), intent(inout) :: out
    end function
    subroutine dt_tp_mlp_destroy(mlp) bind(C, name="dt_tp_mlp_destroy")
      import :: c_ptr
      type(c_ptr), value :: mlp
    end subroutine
    ! its two layers (owned by the block)
    type(c_ptr) function dt_tp_mlp_fc1(mlp) bind(C, name="dt_tp_mlp_fc1")
      import :: c_ptr
      type(c_ptr), value :: mlp
    end function
    type(c_ptr) function dt_tp_mlp_fc2(mlp) bind(C, name="dt_tp_mlp_fc2")
      import :: c_ptr
      type(c_ptr), value :: mlp
    end function
    ! training /= 0: dropout (the mesh's RNG)
    integer(c_int) function dt_tp_mlp_forward(mlp, x, training, y) bind(C, name="dt_f_tp_mlp_forward")
      import :: c_int, c_ptr
      type(c_ptr), value :: mlp, x
      integer(c_int), value :: training
      type(c_ptr), intent(inout) :: y
    end function
    integer(c_int) function dt_tp_mlp_backward_dx(mlp, x, dy, dx) bind(C, name="dt_f_tp_mlp_backward")
      import :: c_int, c_ptr
      type(c_ptr), value :: mlp, x, dy
      type(c_ptr), intent(inout) :: dx
    end function
    integer(c_int) function dt_tp_mlp_backward_nodx(mlp, x, dy) bind(C, name="dt_f_tp_mlp_backward_nodx")
      import :: c_int, c_ptr
      type(c_ptr), value :: mlp, x, dy
    end function
    integer(c_int) function dt_tp_mlp_zero_grad(mlp) bind(C, name="dt_f_tp_mlp_zero_grad")
      import :: c_int, c_ptr
      type(c_ptr), value :: mlp
    end function
    integer(c_int) function dt_tp_mlp_sgd(mlp, lr) bind(C, name="dt_f_tp_mlp_sgd")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: mlp
      real(c_double), value :: lr
    end function
  end interface

contains

  ! what dt_f_check_sizes compares: this module's struct sizes and constants
  ! (the last two: dtensor_layers.h's descs, which dtensor.h keeps for the
  ! layers' own check: dt_tp_linear_create / dt_tp_mlp_create refuse a mismatch)
  function dt_f_sizes() result(s)
    integer(c_int64_t) :: s(8)
    type(dt_placement) :: p
    type(dt_mesh_desc) :: md
    type(dt_tensor_desc) :: td
    type(dt_halo_desc) :: hd
    type(dt_tp_linear_desc) :: ld
    type(dt_tp_mlp_desc) :: mlpd
    s = [int(c_sizeof(p), c_int64_t), int(c_sizeof(md), c_int64_t), int(c_sizeof(td), c_int64_t), &
         int(c_sizeof(hd), c_int64_t), int(DT_MAX_DIMS, c_int64_t), int(DT_MAX_MESH_DIMS, c_int64_t), &
         int(c_sizeof(ld), c_int64_t), int(c_sizeof(mlpd), c_int64_t)]
  end function dt_f_sizes

  ! checks this module against the C library (struct sizes, DT_MAX_DIMS,
  ! DT_MAX_MESH_DIMS): DT_OK, or DT_ERR_ARG and dt_last_error() saying which
  ! differs. dt_comm_mpi checks it too; call it before dt_comm_self.
  integer(c_int) function dt_init()
    dt_init = dt_f_check_sizes(dt_f_sizes(), 8_c_int)
  end function dt_init

  integer(c_int) function dt_comm_mpi_int(comm, out)
    integer, intent(in) :: comm
    type(c_ptr), intent(inout) :: out
    dt_comm_mpi_int = dt_f_comm_mpi(int(comm, c_int), dt_f_sizes(), 8_c_int, out)
  end function dt_comm_mpi_int

  integer(c_int) function dt_comm_mpi_f08(comm, out)
    type(MPI_Comm), intent(in) :: comm
    type(c_ptr), intent(inout) :: out
    dt_comm_mpi_f08 = dt_f_comm_mpi(int(comm%MPI_VAL, c_int), dt_f_sizes(), 8_c_int, out)
  end function dt_comm_mpi_f08

  ! a C string as a Fortran string
  function dt_f_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char) :: none(1)
    integer(c_int64_t) :: n
    n = dt_f_strcpy(p, none, 0_c_int64_t)
    allocate(character(len=n) :: s)
    if (n > 0) n = dt_f_strcpy(p, s, n)
  end function dt_f_string

  ! the message of this thread's last failing call ("" if none)
  function dt_last_error() result(s)
    character(len=:), allocatable :: s
    s = dt_f_string(dt_c_last_error())
  end function dt_last_error

  function dt_status_string(st) result(s)
    integer(c_int), intent(in) :: st
    character(len=:), allocatable :: s
    s = dt_f_string(dt_c_status_string(st))
  end function dt_status_string

  function dt_version() result(s)
    character(len=:), allocatable :: s
    s = dt_f_string(dt_c_version())
  end function dt_version

  function dt_dtype_name(dtype) result(s)
    integer(c_int), intent(in) :: dtype
    character(len=:), allocatable :: s
    s = dt_f_string(dt_c_dtype_name(dtype))
  end function dt_dtype_name

  integer(c_int) function dt_tensor_save_npy(t, path)
    type(c_ptr), intent(in) :: t
    character(len=*), intent(in) :: path
    interface
      integer(c_int) function c_save(t, path) bind(C, name="dt_f_tensor_save_npy")
        import :: c_int, c_ptr, c_char
        type(c_ptr), value :: t
        character(kind=c_char), intent(in) :: path(*)
      end function
    end interface
    dt_tensor_save_npy = c_save(t, trim(path) // c_null_char)
  end function dt_tensor_save_npy

  ! placements: Fortran dims; ndim: the file's rank
  integer(c_int) function dt_tensor_load_npy(m, path, ndim, placements, out)
    type(c_ptr), intent(in) :: m
    character(len=*), intent(in) :: path
    integer(c_int), intent(in) :: ndim
    type(dt_placement), intent(in) :: placements(DT_MAX_MESH_DIMS)
    type(c_ptr), intent(inout) :: out
    dt_tensor_load_npy = dt_f_tensor_load_npy(m, trim(path) // c_null_char, ndim, placements, out)
  end function dt_tensor_load_npy

  ! 1 / 0 for the C side's `contiguous`
  pure integer(c_int) function dt_f_contig(yes)
    logical, intent(in) :: yes
    dt_f_contig = merge(1_c_int, 0_c_int, yes)
  end function dt_f_contig

  ! names as NUL-terminated C strings in buf, p(i) pointing at the i-th
  ! (a const char *const * for the C side)
  subroutine dt_f_names(names, buf, p)
    character(len=*), intent(in) :: names(:)
    character(kind=c_char), intent(out), target :: buf(:)
    type(c_ptr), intent(out) :: p(:)
    integer :: i, j, k
    k = 1
    p = c_null_ptr
    do i = 1, size(names)
      p(i) = c_loc(buf(k))
      do j = 1, len_trim(names(i))
        buf(k) = names(i)(j:j)
        k = k + 1
      end do
      buf(k) = c_null_char
      k = k + 1
    end do
  end subroutine dt_f_names

  ! the sub-mesh of the named mesh dims (in the order given) holding this rank
  integer(c_int) function dt_mesh_slice(m, names, out)
    type(c_ptr), intent(in) :: m
    character(len=*), intent(in) :: names(:)
    type(c_ptr), intent(inout) :: out
    character(kind=c_char), target :: buf(size(names) * (len(names) + 1) + 1)
    type(c_ptr) :: p(size(names) + 1)
    interface
      integer(c_int) function c_slice(m, n, names, out) bind(C, name="dt_mesh_slice")
        import :: c_int, c_ptr
        type(c_ptr), value :: m
        integer(c_int), value :: n
        type(c_ptr), intent(in) :: names(*)
        type(c_ptr), intent(inout) :: out
      end function
    end interface
    call dt_f_names(names, buf, p)
    dt_mesh_slice = c_slice(m, size(names, kind=c_int), p, out)
  end function dt_mesh_slice

  ! the mesh with the named dims (adjacent, in mesh order) merged into one called `name`
  integer(c_int) function dt_mesh_flatten(m, names, name, out)
    type(c_ptr), intent(in) :: m
    character(len=*), intent(in) :: names(:), name
    type(c_ptr), intent(inout) :: out
    character(kind=c_char), target :: buf(size(names) * (len(names) + 1) + 1)
    type(c_ptr) :: p(size(names) + 1)
    interface
      integer(c_int) function c_flatten(m, n, names, name, out) bind(C, name="dt_mesh_flatten")
        import :: c_int, c_ptr, c_char
        type(c_ptr), value :: m
        integer(c_int), value :: n
        type(c_ptr), intent(in) :: names(*)
        character(kind=c_char), intent(in) :: name(*)
        type(c_ptr), intent(inout) :: out
      end function
    end interface
    call dt_f_names(names, buf, p)
    dt_mesh_flatten = c_flatten(m, size(names, kind=c_int), p, trim(name) // c_null_char, out)
  end function dt_mesh_flatten

  ! the mesh dim (0-based) called `name`; -1 if none
  integer(c_int) function dt_mesh_dim_index(m, name)
    type(c_ptr), intent(in) :: m
    character(len=*), intent(in) :: name
    interface
      integer(c_int) function c_index(m, name) bind(C, name="dt_mesh_dim_index")
        import :: c_int, c_ptr, c_char
        type(c_ptr), value :: m
        character(kind=c_char), intent(in) :: name(*)
      end function
    end interface
    dt_mesh_dim_index = c_index(m, trim(name) // c_null_char)
  end function dt_mesh_dim_index

  ! mesh dim `dim`'s name (0-based; "" if unnamed)
  function dt_mesh_dim_name(m, dim) result(s)
    type(c_ptr), intent(in) :: m
    integer(c_int), intent(in) :: dim
    character(len=:), allocatable :: s
    interface
      type(c_ptr) function c_name(m, dim) bind(C, name="dt_mesh_dim_name")
        import :: c_int, c_ptr
        type(c_ptr), value :: m
        integer(c_int), value :: dim
      end function
    end interface
    s = dt_f_string(c_name(m, dim))
  end function dt_mesh_dim_name

  integer(c_int) function dt_rng_save_state(m, path)
    type(c_ptr), intent(in) :: m
    character(len=*), intent(in) :: path
    interface
      integer(c_int) function c_save(m, path) bind(C, name="dt_rng_save_state")
        import :: c_int, c_ptr, c_char
        type(c_ptr), value :: m
        character(kind=c_char), intent(in) :: path(*)
      end function
    end interface
    dt_rng_save_state = c_save(m, trim(path) // c_null_char)
  end function dt_rng_save_state

  integer(c_int) function dt_rng_load_state(m, path)
    type(c_ptr), intent(in) :: m
    character(len=*), intent(in) :: path
    interface
      integer(c_int) function c_load(m, path) bind(C, name="dt_rng_load_state")
        import :: c_int, c_ptr, c_char
        type(c_ptr), value :: m
        character(kind=c_char), intent(in) :: path(*)
      end function
    end interface
    dt_rng_load_state = c_load(m, trim(path) // c_null_char)
  end function dt_rng_load_state

  ! xs(:): the tensors joined along Fortran dim `dim` (dt_stack: the new
  ! dim's place in the result, 1..ndim+1)
  integer(c_int) function dt_cat(xs, dim, out)
    type(c_ptr), intent(in) :: xs(:)
    integer(c_int), intent(in) :: dim
    type(c_ptr), intent(inout) :: out
    dt_cat = dt_f_cat(size(xs, kind=c_int), xs, dim, out)
  end function dt_cat

  integer(c_int) function dt_stack(xs, dim, out)
    type(c_ptr), intent(in) :: xs(:)
    integer(c_int), intent(in) :: dim
    type(c_ptr), intent(inout) :: out
    dt_stack = dt_f_stack(size(xs, kind=c_int), xs, dim, out)
  end function dt_stack

  ! size(sizes) pieces along Fortran dim `dim`, into outs(1:size(sizes))
  integer(c_int) function dt_split(x, dim, sizes, outs)
    type(c_ptr), intent(in) :: x
    integer(c_int), intent(in) :: dim
    integer(c_int64_t), intent(in) :: sizes(:)
    type(c_ptr), intent(inout) :: outs(:)
    dt_split = dt_f_split(x, dim, size(sizes, kind=c_int), sizes, outs, size(outs, kind=c_int))
  end function dt_split

  ! mask: a tensor handle for the kept-element mask (as out), or absent
  integer(c_int) function dt_dropout(x, p, out, mask)
    type(c_ptr), intent(in) :: x
    real(c_double), intent(in) :: p
    type(c_ptr), intent(inout) :: out
    type(c_ptr), intent(inout), optional, target :: mask
    interface
      integer(c_int) function c_dropout(x, p, out, mask) bind(C, name="dt_f_dropout")
        import :: c_int, c_ptr, c_double
        type(c_ptr), value :: x
        real(c_double), value :: p
        type(c_ptr), intent(inout) :: out
        type(c_ptr), value :: mask
      end function
    end interface
    if (present(mask)) then
      dt_dropout = c_dropout(x, p, out, c_loc(mask))
    else
      dt_dropout = c_dropout(x, p, out, c_null_ptr)
    end if
  end function dt_dropout

  ! ---- the typed specifics behind dt_tensor_from_local, dt_tensor_distribute,
  ! dt_tensor_gather and dt_tensor_local: one per kind and rank, identical
  ! but for the array's declaration and its dtype constant ----
  ! dt_tensor_local(t, a, st): a => t's contiguous local shard, shaped as
  ! the local shape (Fortran order); st /= DT_OK (a nullified) for another
  ! dtype or rank, or strided / ghosted storage (use your own array)
  ! >>generated: procedures (gen_f90.py: do not edit; python3 tests/lint/gen_f90.py)
  integer(c_int) function dt_fl_f32_1(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    real(c_float), target, intent(inout) :: local(:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_f32_1 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_F32, &
         dt_f_contig(is_contiguous(local)), 1_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_f32_1

  integer(c_int) function dt_fl_f32_2(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    real(c_float), target, intent(inout) :: local(:,:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_f32_2 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_F32, &
         dt_f_contig(is_contiguous(local)), 2_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_f32_2

  integer(c_int) function dt_fl_f32_3(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    real(c_float), target, intent(inout) :: local(:,:,:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_f32_3 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_F32, &
         dt_f_contig(is_contiguous(local)), 3_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_f32_3

  integer(c_int) function dt_fl_f32_4(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    real(c_float), target, intent(inout) :: local(:,:,:,:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_f32_4 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_F32, &
         dt_f_contig(is_contiguous(local)), 4_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_f32_4

  integer(c_int) function dt_fl_f64_1(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    real(c_double), target, intent(inout) :: local(:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_f64_1 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_F64, &
         dt_f_contig(is_contiguous(local)), 1_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_f64_1

  integer(c_int) function dt_fl_f64_2(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    real(c_double), target, intent(inout) :: local(:,:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_f64_2 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_F64, &
         dt_f_contig(is_contiguous(local)), 2_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_f64_2

  integer(c_int) function dt_fl_f64_3(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    real(c_double), target, intent(inout) :: local(:,:,:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_f64_3 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_F64, &
         dt_f_contig(is_contiguous(local)), 3_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_f64_3

  integer(c_int) function dt_fl_f64_4(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    real(c_double), target, intent(inout) :: local(:,:,:,:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_f64_4 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_F64, &
         dt_f_contig(is_contiguous(local)), 4_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_f64_4

  integer(c_int) function dt_fl_i32_1(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    integer(c_int32_t), target, intent(inout) :: local(:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_i32_1 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_I32, &
         dt_f_contig(is_contiguous(local)), 1_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_i32_1

  integer(c_int) function dt_fl_i32_2(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    integer(c_int32_t), target, intent(inout) :: local(:,:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_i32_2 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_I32, &
         dt_f_contig(is_contiguous(local)), 2_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_i32_2

  integer(c_int) function dt_fl_i32_3(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    integer(c_int32_t), target, intent(inout) :: local(:,:,:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_i32_3 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_I32, &
         dt_f_contig(is_contiguous(local)), 3_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_i32_3

  integer(c_int) function dt_fl_i32_4(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    integer(c_int32_t), target, intent(inout) :: local(:,:,:,:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_i32_4 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_I32, &
         dt_f_contig(is_contiguous(local)), 4_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_i32_4

  integer(c_int) function dt_fl_i64_1(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    integer(c_int64_t), target, intent(inout) :: local(:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_i64_1 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_I64, &
         dt_f_contig(is_contiguous(local)), 1_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_i64_1

  integer(c_int) function dt_fl_i64_2(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    integer(c_int64_t), target, intent(inout) :: local(:,:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_i64_2 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_I64, &
         dt_f_contig(is_contiguous(local)), 2_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_i64_2

  integer(c_int) function dt_fl_i64_3(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    integer(c_int64_t), target, intent(inout) :: local(:,:,:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_i64_3 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_I64, &
         dt_f_contig(is_contiguous(local)), 3_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_i64_3

  integer(c_int) function dt_fl_i64_4(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    integer(c_int64_t), target, intent(inout) :: local(:,:,:,:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_i64_4 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_I64, &
         dt_f_contig(is_contiguous(local)), 4_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_i64_4

  integer(c_int) function dt_fl_c64_1(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    complex(c_float_complex), target, intent(inout) :: local(:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_c64_1 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_C64, &
         dt_f_contig(is_contiguous(local)), 1_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_c64_1

  integer(c_int) function dt_fl_c64_2(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    complex(c_float_complex), target, intent(inout) :: local(:,:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_c64_2 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_C64, &
         dt_f_contig(is_contiguous(local)), 2_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_c64_2

  integer(c_int) function dt_fl_c64_3(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    complex(c_float_complex), target, intent(inout) :: local(:,:,:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_c64_3 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_C64, &
         dt_f_contig(is_contiguous(local)), 3_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_c64_3

  integer(c_int) function dt_fl_c64_4(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    complex(c_float_complex), target, intent(inout) :: local(:,:,:,:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_c64_4 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_C64, &
         dt_f_contig(is_contiguous(local)), 4_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_c64_4

  integer(c_int) function dt_fl_c128_1(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    complex(c_double_complex), target, intent(inout) :: local(:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_c128_1 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_C128, &
         dt_f_contig(is_contiguous(local)), 1_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_c128_1

  integer(c_int) function dt_fl_c128_2(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    complex(c_double_complex), target, intent(inout) :: local(:,:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_c128_2 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_C128, &
         dt_f_contig(is_contiguous(local)), 2_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_c128_2

  integer(c_int) function dt_fl_c128_3(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    complex(c_double_complex), target, intent(inout) :: local(:,:,:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_c128_3 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_C128, &
         dt_f_contig(is_contiguous(local)), 3_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_c128_3

  integer(c_int) function dt_fl_c128_4(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    complex(c_double_complex), target, intent(inout) :: local(:,:,:,:)
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    dt_fl_c128_4 = dt_f_tensor_from_local_shaped(m, d, c_loc(local), DT_C128, &
         dt_f_contig(is_contiguous(local)), 4_c_int, shape(local, kind=c_int64_t), flags, out)
  end function dt_fl_c128_4

  integer(c_int) function dt_dist_f32_1(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    real(c_float), target, intent(in) :: full(:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_f32_1 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_F32, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_f32_1

  integer(c_int) function dt_dist_f32_2(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    real(c_float), target, intent(in) :: full(:,:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_f32_2 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_F32, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_f32_2

  integer(c_int) function dt_dist_f32_3(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    real(c_float), target, intent(in) :: full(:,:,:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_f32_3 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_F32, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_f32_3

  integer(c_int) function dt_dist_f32_4(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    real(c_float), target, intent(in) :: full(:,:,:,:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_f32_4 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_F32, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_f32_4

  integer(c_int) function dt_dist_f64_1(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    real(c_double), target, intent(in) :: full(:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_f64_1 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_F64, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_f64_1

  integer(c_int) function dt_dist_f64_2(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    real(c_double), target, intent(in) :: full(:,:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_f64_2 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_F64, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_f64_2

  integer(c_int) function dt_dist_f64_3(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    real(c_double), target, intent(in) :: full(:,:,:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_f64_3 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_F64, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_f64_3

  integer(c_int) function dt_dist_f64_4(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    real(c_double), target, intent(in) :: full(:,:,:,:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_f64_4 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_F64, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_f64_4

  integer(c_int) function dt_dist_i32_1(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    integer(c_int32_t), target, intent(in) :: full(:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_i32_1 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_I32, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_i32_1

  integer(c_int) function dt_dist_i32_2(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    integer(c_int32_t), target, intent(in) :: full(:,:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_i32_2 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_I32, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_i32_2

  integer(c_int) function dt_dist_i32_3(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    integer(c_int32_t), target, intent(in) :: full(:,:,:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_i32_3 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_I32, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_i32_3

  integer(c_int) function dt_dist_i32_4(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    integer(c_int32_t), target, intent(in) :: full(:,:,:,:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_i32_4 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_I32, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_i32_4

  integer(c_int) function dt_dist_i64_1(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    integer(c_int64_t), target, intent(in) :: full(:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_i64_1 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_I64, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_i64_1

  integer(c_int) function dt_dist_i64_2(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    integer(c_int64_t), target, intent(in) :: full(:,:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_i64_2 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_I64, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_i64_2

  integer(c_int) function dt_dist_i64_3(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    integer(c_int64_t), target, intent(in) :: full(:,:,:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_i64_3 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_I64, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_i64_3

  integer(c_int) function dt_dist_i64_4(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    integer(c_int64_t), target, intent(in) :: full(:,:,:,:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_i64_4 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_I64, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_i64_4

  integer(c_int) function dt_dist_c64_1(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    complex(c_float_complex), target, intent(in) :: full(:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_c64_1 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_C64, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_c64_1

  integer(c_int) function dt_dist_c64_2(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    complex(c_float_complex), target, intent(in) :: full(:,:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_c64_2 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_C64, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_c64_2

  integer(c_int) function dt_dist_c64_3(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    complex(c_float_complex), target, intent(in) :: full(:,:,:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_c64_3 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_C64, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_c64_3

  integer(c_int) function dt_dist_c64_4(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    complex(c_float_complex), target, intent(in) :: full(:,:,:,:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_c64_4 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_C64, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_c64_4

  integer(c_int) function dt_dist_c128_1(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    complex(c_double_complex), target, intent(in) :: full(:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_c128_1 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_C128, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_c128_1

  integer(c_int) function dt_dist_c128_2(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    complex(c_double_complex), target, intent(in) :: full(:,:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_c128_2 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_C128, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_c128_2

  integer(c_int) function dt_dist_c128_3(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    complex(c_double_complex), target, intent(in) :: full(:,:,:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_c128_3 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_C128, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_c128_3

  integer(c_int) function dt_dist_c128_4(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    complex(c_double_complex), target, intent(in) :: full(:,:,:,:)
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    dt_dist_c128_4 = dt_f_tensor_distribute_typed(m, d, c_loc(full), DT_C128, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function dt_dist_c128_4

  integer(c_int) function dt_gath_f32_1(t, full)
    type(c_ptr), intent(in) :: t
    real(c_float), target, intent(inout) :: full(:)
    dt_gath_f32_1 = dt_f_tensor_gather_typed(t, c_loc(full), DT_F32, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_f32_1

  integer(c_int) function dt_gath_f32_2(t, full)
    type(c_ptr), intent(in) :: t
    real(c_float), target, intent(inout) :: full(:,:)
    dt_gath_f32_2 = dt_f_tensor_gather_typed(t, c_loc(full), DT_F32, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_f32_2

  integer(c_int) function dt_gath_f32_3(t, full)
    type(c_ptr), intent(in) :: t
    real(c_float), target, intent(inout) :: full(:,:,:)
    dt_gath_f32_3 = dt_f_tensor_gather_typed(t, c_loc(full), DT_F32, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_f32_3

  integer(c_int) function dt_gath_f32_4(t, full)
    type(c_ptr), intent(in) :: t
    real(c_float), target, intent(inout) :: full(:,:,:,:)
    dt_gath_f32_4 = dt_f_tensor_gather_typed(t, c_loc(full), DT_F32, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_f32_4

  integer(c_int) function dt_gath_f64_1(t, full)
    type(c_ptr), intent(in) :: t
    real(c_double), target, intent(inout) :: full(:)
    dt_gath_f64_1 = dt_f_tensor_gather_typed(t, c_loc(full), DT_F64, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_f64_1

  integer(c_int) function dt_gath_f64_2(t, full)
    type(c_ptr), intent(in) :: t
    real(c_double), target, intent(inout) :: full(:,:)
    dt_gath_f64_2 = dt_f_tensor_gather_typed(t, c_loc(full), DT_F64, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_f64_2

  integer(c_int) function dt_gath_f64_3(t, full)
    type(c_ptr), intent(in) :: t
    real(c_double), target, intent(inout) :: full(:,:,:)
    dt_gath_f64_3 = dt_f_tensor_gather_typed(t, c_loc(full), DT_F64, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_f64_3

  integer(c_int) function dt_gath_f64_4(t, full)
    type(c_ptr), intent(in) :: t
    real(c_double), target, intent(inout) :: full(:,:,:,:)
    dt_gath_f64_4 = dt_f_tensor_gather_typed(t, c_loc(full), DT_F64, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_f64_4

  integer(c_int) function dt_gath_i32_1(t, full)
    type(c_ptr), intent(in) :: t
    integer(c_int32_t), target, intent(inout) :: full(:)
    dt_gath_i32_1 = dt_f_tensor_gather_typed(t, c_loc(full), DT_I32, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_i32_1

  integer(c_int) function dt_gath_i32_2(t, full)
    type(c_ptr), intent(in) :: t
    integer(c_int32_t), target, intent(inout) :: full(:,:)
    dt_gath_i32_2 = dt_f_tensor_gather_typed(t, c_loc(full), DT_I32, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_i32_2

  integer(c_int) function dt_gath_i32_3(t, full)
    type(c_ptr), intent(in) :: t
    integer(c_int32_t), target, intent(inout) :: full(:,:,:)
    dt_gath_i32_3 = dt_f_tensor_gather_typed(t, c_loc(full), DT_I32, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_i32_3

  integer(c_int) function dt_gath_i32_4(t, full)
    type(c_ptr), intent(in) :: t
    integer(c_int32_t), target, intent(inout) :: full(:,:,:,:)
    dt_gath_i32_4 = dt_f_tensor_gather_typed(t, c_loc(full), DT_I32, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_i32_4

  integer(c_int) function dt_gath_i64_1(t, full)
    type(c_ptr), intent(in) :: t
    integer(c_int64_t), target, intent(inout) :: full(:)
    dt_gath_i64_1 = dt_f_tensor_gather_typed(t, c_loc(full), DT_I64, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_i64_1

  integer(c_int) function dt_gath_i64_2(t, full)
    type(c_ptr), intent(in) :: t
    integer(c_int64_t), target, intent(inout) :: full(:,:)
    dt_gath_i64_2 = dt_f_tensor_gather_typed(t, c_loc(full), DT_I64, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_i64_2

  integer(c_int) function dt_gath_i64_3(t, full)
    type(c_ptr), intent(in) :: t
    integer(c_int64_t), target, intent(inout) :: full(:,:,:)
    dt_gath_i64_3 = dt_f_tensor_gather_typed(t, c_loc(full), DT_I64, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_i64_3

  integer(c_int) function dt_gath_i64_4(t, full)
    type(c_ptr), intent(in) :: t
    integer(c_int64_t), target, intent(inout) :: full(:,:,:,:)
    dt_gath_i64_4 = dt_f_tensor_gather_typed(t, c_loc(full), DT_I64, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_i64_4

  integer(c_int) function dt_gath_c64_1(t, full)
    type(c_ptr), intent(in) :: t
    complex(c_float_complex), target, intent(inout) :: full(:)
    dt_gath_c64_1 = dt_f_tensor_gather_typed(t, c_loc(full), DT_C64, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_c64_1

  integer(c_int) function dt_gath_c64_2(t, full)
    type(c_ptr), intent(in) :: t
    complex(c_float_complex), target, intent(inout) :: full(:,:)
    dt_gath_c64_2 = dt_f_tensor_gather_typed(t, c_loc(full), DT_C64, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_c64_2

  integer(c_int) function dt_gath_c64_3(t, full)
    type(c_ptr), intent(in) :: t
    complex(c_float_complex), target, intent(inout) :: full(:,:,:)
    dt_gath_c64_3 = dt_f_tensor_gather_typed(t, c_loc(full), DT_C64, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_c64_3

  integer(c_int) function dt_gath_c64_4(t, full)
    type(c_ptr), intent(in) :: t
    complex(c_float_complex), target, intent(inout) :: full(:,:,:,:)
    dt_gath_c64_4 = dt_f_tensor_gather_typed(t, c_loc(full), DT_C64, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_c64_4

  integer(c_int) function dt_gath_c128_1(t, full)
    type(c_ptr), intent(in) :: t
    complex(c_double_complex), target, intent(inout) :: full(:)
    dt_gath_c128_1 = dt_f_tensor_gather_typed(t, c_loc(full), DT_C128, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_c128_1

  integer(c_int) function dt_gath_c128_2(t, full)
    type(c_ptr), intent(in) :: t
    complex(c_double_complex), target, intent(inout) :: full(:,:)
    dt_gath_c128_2 = dt_f_tensor_gather_typed(t, c_loc(full), DT_C128, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_c128_2

  integer(c_int) function dt_gath_c128_3(t, full)
    type(c_ptr), intent(in) :: t
    complex(c_double_complex), target, intent(inout) :: full(:,:,:)
    dt_gath_c128_3 = dt_f_tensor_gather_typed(t, c_loc(full), DT_C128, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_c128_3

  integer(c_int) function dt_gath_c128_4(t, full)
    type(c_ptr), intent(in) :: t
    complex(c_double_complex), target, intent(inout) :: full(:,:,:,:)
    dt_gath_c128_4 = dt_f_tensor_gather_typed(t, c_loc(full), DT_C128, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function dt_gath_c128_4

  subroutine dt_local_f32_1(t, a, st)
    type(c_ptr), intent(in) :: t
    real(c_float), pointer, intent(out) :: a(:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_F32, 1_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:1))
  end subroutine dt_local_f32_1

  subroutine dt_local_f32_2(t, a, st)
    type(c_ptr), intent(in) :: t
    real(c_float), pointer, intent(out) :: a(:,:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_F32, 2_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:2))
  end subroutine dt_local_f32_2

  subroutine dt_local_f32_3(t, a, st)
    type(c_ptr), intent(in) :: t
    real(c_float), pointer, intent(out) :: a(:,:,:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_F32, 3_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:3))
  end subroutine dt_local_f32_3

  subroutine dt_local_f32_4(t, a, st)
    type(c_ptr), intent(in) :: t
    real(c_float), pointer, intent(out) :: a(:,:,:,:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_F32, 4_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:4))
  end subroutine dt_local_f32_4

  subroutine dt_local_f64_1(t, a, st)
    type(c_ptr), intent(in) :: t
    real(c_double), pointer, intent(out) :: a(:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_F64, 1_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:1))
  end subroutine dt_local_f64_1

  subroutine dt_local_f64_2(t, a, st)
    type(c_ptr), intent(in) :: t
    real(c_double), pointer, intent(out) :: a(:,:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_F64, 2_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:2))
  end subroutine dt_local_f64_2

  subroutine dt_local_f64_3(t, a, st)
    type(c_ptr), intent(in) :: t
    real(c_double), pointer, intent(out) :: a(:,:,:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_F64, 3_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:3))
  end subroutine dt_local_f64_3

  subroutine dt_local_f64_4(t, a, st)
    type(c_ptr), intent(in) :: t
    real(c_double), pointer, intent(out) :: a(:,:,:,:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_F64, 4_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:4))
  end subroutine dt_local_f64_4

  subroutine dt_local_i32_1(t, a, st)
    type(c_ptr), intent(in) :: t
    integer(c_int32_t), pointer, intent(out) :: a(:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_I32, 1_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:1))
  end subroutine dt_local_i32_1

  subroutine dt_local_i32_2(t, a, st)
    type(c_ptr), intent(in) :: t
    integer(c_int32_t), pointer, intent(out) :: a(:,:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_I32, 2_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:2))
  end subroutine dt_local_i32_2

  subroutine dt_local_i32_3(t, a, st)
    type(c_ptr), intent(in) :: t
    integer(c_int32_t), pointer, intent(out) :: a(:,:,:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_I32, 3_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:3))
  end subroutine dt_local_i32_3

  subroutine dt_local_i32_4(t, a, st)
    type(c_ptr), intent(in) :: t
    integer(c_int32_t), pointer, intent(out) :: a(:,:,:,:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_I32, 4_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:4))
  end subroutine dt_local_i32_4

  subroutine dt_local_i64_1(t, a, st)
    type(c_ptr), intent(in) :: t
    integer(c_int64_t), pointer, intent(out) :: a(:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_I64, 1_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:1))
  end subroutine dt_local_i64_1

  subroutine dt_local_i64_2(t, a, st)
    type(c_ptr), intent(in) :: t
    integer(c_int64_t), pointer, intent(out) :: a(:,:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_I64, 2_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:2))
  end subroutine dt_local_i64_2

  subroutine dt_local_i64_3(t, a, st)
    type(c_ptr), intent(in) :: t
    integer(c_int64_t), pointer, intent(out) :: a(:,:,:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_I64, 3_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:3))
  end subroutine dt_local_i64_3

  subroutine dt_local_i64_4(t, a, st)
    type(c_ptr), intent(in) :: t
    integer(c_int64_t), pointer, intent(out) :: a(:,:,:,:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_I64, 4_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:4))
  end subroutine dt_local_i64_4

  subroutine dt_local_c64_1(t, a, st)
    type(c_ptr), intent(in) :: t
    complex(c_float_complex), pointer, intent(out) :: a(:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_C64, 1_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:1))
  end subroutine dt_local_c64_1

  subroutine dt_local_c64_2(t, a, st)
    type(c_ptr), intent(in) :: t
    complex(c_float_complex), pointer, intent(out) :: a(:,:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_C64, 2_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:2))
  end subroutine dt_local_c64_2

  subroutine dt_local_c64_3(t, a, st)
    type(c_ptr), intent(in) :: t
    complex(c_float_complex), pointer, intent(out) :: a(:,:,:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_C64, 3_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:3))
  end subroutine dt_local_c64_3

  subroutine dt_local_c64_4(t, a, st)
    type(c_ptr), intent(in) :: t
    complex(c_float_complex), pointer, intent(out) :: a(:,:,:,:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_C64, 4_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:4))
  end subroutine dt_local_c64_4

  subroutine dt_local_c128_1(t, a, st)
    type(c_ptr), intent(in) :: t
    complex(c_double_complex), pointer, intent(out) :: a(:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_C128, 1_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:1))
  end subroutine dt_local_c128_1

  subroutine dt_local_c128_2(t, a, st)
    type(c_ptr), intent(in) :: t
    complex(c_double_complex), pointer, intent(out) :: a(:,:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_C128, 2_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:2))
  end subroutine dt_local_c128_2

  subroutine dt_local_c128_3(t, a, st)
    type(c_ptr), intent(in) :: t
    complex(c_double_complex), pointer, intent(out) :: a(:,:,:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_C128, 3_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:3))
  end subroutine dt_local_c128_3

  subroutine dt_local_c128_4(t, a, st)
    type(c_ptr), intent(in) :: t
    complex(c_double_complex), pointer, intent(out) :: a(:,:,:,:)
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, DT_C128, 4_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:4))
  end subroutine dt_local_c128_4
  ! <<generated: procedures

end module dtensor
