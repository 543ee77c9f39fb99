! tests/test_fortran.f90 -- the Fortran module's bindings (dtensor.f90), at any
! rank count (tests/test_fortran.sh builds and runs it under both MPIs):
!  - the struct sizes and DT_MAX_DIMS agree with the C build (dt_init), and a
!    mismatch is DT_ERR_ARG with a message naming the struct;
!  - a comm from an integer handle and from type(MPI_Comm);
!  - column-major arrays distributed along each Fortran dim and gathered
!    back, checked element by element against a closed form, the local
!    shard through a Fortran array pointer, local shape and offset;
!  - redistribute, dt_sum / dt_max over a Fortran dim, dt_matmul against
!    matmul(), dt_add, the RNG's range, dt_tensor_from_local with local_shape;
!  - wrong shapes and dims: the right status and a message as a Fortran string;
!  - messages in Fortran order: shapes reversed, Shard dims 1..ndim, a(i)
!    for elements, desc%member;
!  - with --expect-mismatch (linked with a C build of DT_MAX_DIMS = 16):
!    dt_init and dt_comm_mpi refuse with DT_ERR_ARG and a message.
!  - a complex(c_double_complex) array as DT_C128 through dt_tensor_local,
!    its shards' sums added over the mesh by dt_mesh_allreduce;
!  - the error hook: a Fortran handler (c_funloc) called once for a failing
!    call, with its name and status.
!  - the typed wraps: each of the six kinds at ranks 1-4 distributed and
!    gathered element for element, a borrowed wrap aliasing the array; a
!    mislabelled array (dtype left unset), a strided section, a short
!    `full` and one rank's mislabel refused on every rank;
!  - the rest of the API against Fortran's intrinsics or a serial loop: the
!    views (transpose, permute, reshape, squeeze/unsqueeze, narrow, cat,
!    stack, split), softmax, norm2, argmax, cast, unary and binary ops,
!    mm/addmm/bmm, get_desc, local strides and indices, mesh names, slice
!    and flatten, shm_alloc, redistribute_reduce, the matmul budget, RNG
!    state, comm stats, a stencil callback (5-point, zero boundaries) and
!    conv1d/2d/3d (per-dim padding and dilation), the ScaLAPACK desc and
!    its inverse, the unary family, log_softmax, layer/rms norm, dropout
!    (its U8 mask through c_loc), dot, linear, embedding, cross-entropy,
!    layout indices, the RNG state through a file, and the mesh's odds
!    and ends (shm mode, op cache, trim, checks).
!  - the tensor-parallel layers (dtensor_layers.h; this test links the
!    layers' object): colwise and rowwise dt_tp_linear (F64 with bias, F32
!    with zero init filled from Fortran, sequence parallel with seq_dim 0
!    and 3 on a [tp, dp] mesh, tp named, data parallel over dp,
!    accumulated gradients) and relu / GELU dt_tp_mlp: forward, backward
!    (with and without dx), sgd and zero_grad against matmul() on the
!    weights gathered as w(in, out), on shards uneven or empty (7 and 5
!    over 3 and 4 ranks); their placements as Fortran dims; refusals
!    (null handles, features, batch dims, *y, seq_dim, tp_dim, dropout, a
!    feature dim sharded on dp, backward before forward, the descs' size
!    check) with the message in Fortran order and the error hook once.
! Prints "PASS test_fortran np=N" on rank 0; exits 1 on any failure.
program test_fortran
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use dtensor
  implicit none
  integer, parameter :: NX = 7, NY = 5
  integer :: rank, nranks, nfail = 0, ncheck = 0
  integer :: handled = 0, handled_st = 0, stencil_calls = 0
  character(len=:), allocatable :: handled_call
  type(c_ptr) :: comm = c_null_ptr, comm2 = c_null_ptr, mesh = c_null_ptr
  type(dt_mesh_desc) :: md

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)

  if (command_argument_count() > 0) then   ! --expect-mismatch: linked with a C build of another DT_MAX_DIMS
    call test_linked_mismatch()
    call MPI_Finalize()
    if (nfail /= 0) stop 1
    stop
  end if
  call check(dt_init() == DT_OK, "dt_init: the module's structs match the C build")
  call test_size_mismatch()

  ! comms from both kinds of handle
  call ok(dt_comm_mpi(MPI_COMM_WORLD, comm), "dt_comm_mpi(type(MPI_Comm))")
  call ok(dt_comm_mpi(MPI_COMM_WORLD%MPI_VAL, comm2), "dt_comm_mpi(integer)")
  call check(dt_comm_size(comm) == nranks .and. dt_comm_size(comm2) == nranks, "comm sizes")
  call check(dt_comm_rank(comm) == rank .and. dt_comm_rank(comm2) == rank, "comm ranks")
  call dt_comm_destroy(comm2)

  md%ndim = 1
  md%shape(1) = nranks
  call ok(dt_mesh_create(comm, md, mesh), "dt_mesh_create")
  call check(dt_mesh_size(mesh) == nranks .and. dt_mesh_rank(mesh) == rank, "mesh size and rank")

  call test_roundtrip(1)
  call test_roundtrip(2)
  call test_ops()
  call test_from_local()
  call test_complex_and_allreduce()
  call test_errors()
  call test_typed_roundtrips()
  call test_typed_errors()
  call test_views()
  call test_mesh_extras()
  call test_stencil()
  call test_conv()
  call test_scalapack()
  call test_more_ops()
  call test_messages_in_fortran_order()
  call test_redistribute_begin_end()
  call test_layers()

  call dt_mesh_destroy(mesh)
  call dt_comm_destroy(comm)
  call MPI_Allreduce(MPI_IN_PLACE, nfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (nfail == 0) then
      print '(a,i0,a,i0,a)', "PASS test_fortran np=", nranks, " (", ncheck, " checks)"
    else
      print '(a,i0,a,i0,a)', "FAIL test_fortran np=", nranks, " (", nfail, " failures)"
    end if
  end if
  call MPI_Finalize()
  if (nfail /= 0) stop 1

contains

  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    ncheck = ncheck + 1
    if (.not. cond) then
      nfail = nfail + 1
      print '(a,i0,2a)', "[", rank, "] FAIL: ", what
    end if
  end subroutine check

  subroutine ok(st, what)
    integer(c_int), intent(in) :: st
    character(len=*), intent(in) :: what
    if (st /= DT_OK) print '(a,i0,4a)', "[", rank, "] ", what, ": ", dt_last_error()
    call check(st == DT_OK, what)
  end subroutine ok

  ! the closed form every array below holds
  pure real(c_double) function f(i, j)
    integer(c_int64_t), intent(in) :: i, j
    f = 100.0_c_double * i + j
  end function f

  ! the C library built with DT_MAX_DIMS = 16 (tests/test_fortran.sh): dt_init
  ! and dt_comm_mpi refuse with a message, nothing crashes
  subroutine test_linked_mismatch()
    character(len=:), allocatable :: msg
    call check(dt_init() == DT_ERR_ARG, "dt_init against a DT_MAX_DIMS = 16 build: DT_ERR_ARG")
    msg = dt_last_error()
    call check(index(msg, "DT_MAX_DIMS = 16") > 0, "its message: " // msg)
    call check(dt_comm_mpi(MPI_COMM_WORLD, comm) == DT_ERR_ARG .and. .not. c_associated(comm), &
               "dt_comm_mpi against it: DT_ERR_ARG, no comm")
    if (rank == 0 .and. nfail == 0) print '(a,i0,3a)', "PASS test_fortran --expect-mismatch np=", nranks, &
         " (", msg, ")"
  end subroutine test_linked_mismatch

  subroutine test_size_mismatch()
    integer(c_int64_t) :: s(6)
    type(dt_tensor_desc) :: td
    type(dt_placement) :: p
    type(dt_mesh_desc) :: m
    type(dt_halo_desc) :: h
    character(len=:), allocatable :: msg
    s = [int(c_sizeof(p), c_int64_t), int(c_sizeof(m), c_int64_t), int(c_sizeof(td), c_int64_t) + 8, &
         int(c_sizeof(h), c_int64_t), 8_c_int64_t, 4_c_int64_t]
    call check(dt_f_check_sizes(s, 6_c_int) == DT_ERR_ARG, "a dt_tensor_desc size mismatch is DT_ERR_ARG")
    msg = dt_last_error()
    call check(index(msg, "dt_tensor_desc") > 0 .and. index(msg, "DT_MAX_DIMS") > 0, &
               "the mismatch message names the struct: " // msg)
    s(3) = s(3) - 8
    s(5) = 16
    call check(dt_f_check_sizes(s, 6_c_int) == DT_ERR_ARG, "a DT_MAX_DIMS mismatch is DT_ERR_ARG")
    call dt_clear_error()
  end subroutine test_size_mismatch

  ! A(NX, NY) = f(i, j), distributed from rank 0 sharded along Fortran dim
  ! `dim`, each shard checked in place, gathered back, and redistributed
  subroutine test_roundtrip(dim)
    integer, intent(in) :: dim
    real(c_double), target :: full(NX, NY), back(NX, NY)
    real(c_double), pointer :: a(:, :)
    type(dt_tensor_desc) :: td
    type(dt_placement) :: rep(DT_MAX_MESH_DIMS)
    type(c_ptr) :: t = c_null_ptr, r = c_null_ptr
    integer(c_int64_t) :: i, j, ls(2), off(2), gs(DT_MAX_DIMS)
    integer(c_int) :: st, nd
    logical :: good
    character(len=16) :: tag
    write (tag, '(a,i0,a)') "S(", dim, ")"
    do j = 1, NY
      do i = 1, NX
        full(i, j) = merge(f(i, j), -1.0_c_double, rank == 0)  ! only rank 0's data is sent
      end do
    end do
    td%dtype = DT_F64
    td%ndim = 2
    td%shape(1:2) = [int(NX, c_int64_t), int(NY, c_int64_t)]
    td%placements(1) = dt_shard(int(dim, c_int))
    call ok(dt_tensor_distribute(mesh, td, c_loc(full), 0_c_int, t), "distribute " // trim(tag))
    call ok(dt_tensor_shape(t, nd, gs), "dt_tensor_shape")
    call check(nd == 2 .and. gs(1) == NX .and. gs(2) == NY, "global shape in Fortran order " // trim(tag))
    call ok(dt_tensor_local_shape(t, ls, off), "dt_tensor_local_shape")
    call dt_tensor_local(t, a, st)
    call ok(st, "dt_tensor_local " // trim(tag))
    good = st == DT_OK
    if (good .and. all(ls > 0)) good = associated(a)   ! an empty part may have no data pointer
    if (good .and. all(ls > 0)) good = size(a, 1) == ls(1) .and. size(a, 2) == ls(2)
    if (dim == 1) good = good .and. ls(2) == NY .and. off(2) == 0
    if (dim == 2) good = good .and. ls(1) == NX .and. off(1) == 0
    call check(good, "local shape and offset along the sharded Fortran dim " // trim(tag))
    if (good .and. all(ls > 0)) then
      do j = 1, ls(2)
        do i = 1, ls(1)
          if (a(i, j) /= f(off(1) + i, off(2) + j)) good = .false.
        end do
      end do
    end if
    call check(good, "each shard holds its part of the column-major array " // trim(tag))
    back = 0
    call ok(dt_tensor_gather(t, c_loc(back)), "gather " // trim(tag))
    call check(all(back == reshape([((f(i, j), i = 1, NX), j = 1, NY)], [NX, NY])), &
               "gathered == the closed form " // trim(tag))
    call ok(dt_tensor_redistribute(t, rep, r), "redistribute to Replicate " // trim(tag))
    call dt_tensor_local(r, a, st)
    good = st == DT_OK
    if (good) good = all(shape(a) == [NX, NY])
    if (good) good = all(a == back)
    call check(good, "replicated copy == the closed form " // trim(tag))
    call dt_tensor_destroy(r)
    call dt_tensor_destroy(t)
    r = c_null_ptr
    t = c_null_ptr
  end subroutine test_roundtrip

  ! dt_matmul as Fortran's matmul, dt_sum over a Fortran dim, dt_add, RNG
  subroutine test_ops()
    integer, parameter :: M = 6, K = 4, N = 3
    real(c_double), target :: a(M, K), b(K, N), c(M, N), s(K), u(M, K)
    type(dt_tensor_desc) :: ta, tb
    type(c_ptr) :: xa = c_null_ptr, xb = c_null_ptr, xc = c_null_ptr, xs = c_null_ptr, xu = c_null_ptr
    integer :: i, j
    integer(c_int) :: dims(1)
    do j = 1, K
      do i = 1, M
        a(i, j) = i - 2.0_c_double * j
      end do
    end do
    do j = 1, N
      do i = 1, K
        b(i, j) = 0.5_c_double * i + j
      end do
    end do
    ta%dtype = DT_F64
    ta%ndim = 2
    ta%shape(1:2) = [M, K]
    ta%placements(1) = dt_shard(1)          ! rows of a
    tb%dtype = DT_F64
    tb%ndim = 2
    tb%shape(1:2) = [K, N]                   ! b replicated
    call ok(dt_tensor_distribute(mesh, ta, c_loc(a), DT_SRC_ALL, xa), "distribute a")
    call ok(dt_tensor_distribute(mesh, tb, c_loc(b), DT_SRC_ALL, xb), "distribute b")
    call ok(dt_matmul(xa, xb, xc), "dt_matmul")
    c = 0
    call ok(dt_tensor_gather(xc, c_loc(c)), "gather c")
    call check(all(abs(c - matmul(a, b)) < 1e-12_c_double), "dt_matmul(a, b) == matmul(a, b)")
    dims(1) = 1
    call ok(dt_sum(xa, 1_c_int, dims, 0_c_int, xs), "dt_sum over Fortran dim 1")
    s = 0
    call ok(dt_tensor_gather(xs, c_loc(s)), "gather the sum")
    call check(all(abs(s - sum(a, dim=1)) < 1e-12_c_double), "dt_sum(a, dim 1) == sum(a, dim=1)")
    call dt_tensor_destroy(xs)
    xs = c_null_ptr
    dims(1) = 2
    call ok(dt_max(xa, 1_c_int, dims, 0_c_int, xu), "dt_max over Fortran dim 2")
    c(:, 1) = 0
    call ok(dt_tensor_gather(xu, c_loc(c)), "gather the max")     ! M values into c's first column
    call check(all(c(:, 1) == maxval(a, dim=2)), "dt_max(a, dim 2) == maxval(a, dim=2)")
    call ok(dt_add(xa, xa, xs), "dt_add")
    u = 0
    call ok(dt_tensor_gather(xs, c_loc(u)), "gather a + a")
    call check(all(u == 2 * a), "dt_add(a, a) == 2 a")
    call ok(dt_manual_seed(mesh, 1234_c_int64_t), "dt_manual_seed")
    call ok(dt_uniform(xa, 2.0_c_double, 3.0_c_double), "dt_uniform (C's dt_uniform_)")
    call ok(dt_tensor_gather(xa, c_loc(u)), "gather the random fill")
    call check(all(u >= 2 .and. u < 3) .and. minval(u) /= maxval(u), "dt_uniform's values in [2, 3)")
    call dt_tensor_destroy(xa)
    call dt_tensor_destroy(xb)
    call dt_tensor_destroy(xc)
    call dt_tensor_destroy(xs)
    if (c_associated(xu)) call dt_tensor_destroy(xu)
  end subroutine test_ops

  ! a complex(c_double_complex) array distributed as DT_C128 (sharded over
  ! Fortran dim 2), read through dt_tensor_local, and summed over the mesh
  ! with dt_mesh_allreduce: the closed form z(i, j) = i + (2j - 1) i
  subroutine test_complex_and_allreduce()
    complex(c_double_complex), target :: z(NX, NY)
    complex(c_double_complex), pointer :: p(:, :)
    real(c_double), target :: part(2)
    integer(c_int64_t) :: ls(DT_MAX_DIMS), off(DT_MAX_DIMS)
    type(dt_tensor_desc) :: td
    type(c_ptr) :: t = c_null_ptr
    integer(c_int) :: st, zero(1) = 0
    integer :: i, j
    do j = 1, NY
      do i = 1, NX
        z(i, j) = cmplx(i, 2 * j - 1, c_double_complex)
      end do
    end do
    td%dtype = DT_C128
    td%ndim = 2
    td%shape(1:2) = [NX, NY]
    td%placements(1) = dt_shard(2)
    call ok(dt_tensor_distribute(mesh, td, c_loc(z), DT_SRC_ALL, t), "distribute a complex(8) array")
    call dt_tensor_local(t, p, st)
    call ok(dt_tensor_local_shape(t, ls, off), "local shape")
    call check(st == DT_OK, "dt_tensor_local of a DT_C128 shard: " // dt_status_string(st))
    part = 0
    if (associated(p)) then
      call check(size(p, 1) == ls(1) .and. size(p, 2) == ls(2), "the pointer has the local shape")
      do j = 1, size(p, 2)
        do i = 1, size(p, 1)
          call check(p(i, j) == z(i, off(2) + j), "local element = z(i, offset + j)")
          part(1) = part(1) + real(p(i, j), c_double)
          part(2) = part(2) + aimag(p(i, j))
        end do
      end do
    else
      call check(ls(1) * ls(2) == 0, "no pointer only for an empty shard")   ! (5 columns over 4+ ranks)
    end if
    call ok(dt_mesh_allreduce(mesh, 0_c_int, zero, c_loc(part), 2_c_size_t, DT_F64, DT_REDUCE_SUM), &
            "dt_mesh_allreduce")
    call check(part(1) == real(sum(z), c_double) .and. part(2) == aimag(sum(z)), &
               "dt_mesh_allreduce: the shards' sums add up to sum(z)")
    call dt_tensor_destroy(t)
  end subroutine test_complex_and_allreduce

  ! each rank's own column block of a balanced split, wrapped with local_shape
  subroutine test_from_local()
    integer(c_int64_t), target :: ls(2)
    real(c_double), allocatable, target :: mine(:, :)
    real(c_double), target :: back(NX, NY)
    type(dt_tensor_desc) :: td
    type(c_ptr) :: t = c_null_ptr
    integer(c_int64_t) :: i, j, lo, n
    n = NY / nranks + merge(1, 0, rank < mod(NY, nranks))
    lo = rank * (NY / nranks) + min(rank, mod(NY, nranks))
    allocate(mine(NX, n))
    do j = 1, n
      do i = 1, NX
        mine(i, j) = f(i, lo + j)
      end do
    end do
    ls = [int(NX, c_int64_t), n]
    td%dtype = DT_F64
    td%ndim = 2
    td%shape(1:2) = [NX, NY]
    td%placements(1) = dt_shard_balanced(2)
    td%local_shape = c_loc(ls)
    call ok(dt_tensor_from_local(mesh, td, c_loc(mine), DT_FLAG_BORROW, t), "from_local (balanced, local_shape)")
    back = 0
    call ok(dt_tensor_gather(t, c_loc(back)), "gather the wrapped blocks")
    call check(all(back == reshape([((f(i, j), i = 1, NX), j = 1, NY)], [NX, NY])), &
               "wrapped column blocks gathered == the closed form")
    call dt_tensor_destroy(t)
  end subroutine test_from_local

  ! A refusal reports what the caller wrote, in Fortran's order and syntax:
  ! the shapes as given, Shard dims 1..ndim, desc%member, width(i).
  subroutine test_messages_in_fortran_order()
    integer(c_int64_t), target :: ls(2)
    real(c_double), allocatable, target :: mine(:, :)
    type(dt_tensor_desc) :: td
    type(dt_halo_desc) :: hd
    type(c_ptr) :: t = c_null_ptr
    integer(c_int64_t) :: lo, n
    integer(c_int) :: st
    character(len=:), allocatable :: msg
    character(len=64) :: want_ls, want_rule
    type(dt_mesh_desc) :: md2
    type(c_ptr) :: m2 = c_null_ptr
    n = NY / nranks + merge(1, 0, rank < mod(NY, nranks))
    lo = rank * (NY / nranks) + min(rank, mod(NY, nranks))
    allocate(mine(NX, max(n, 1_c_int64_t)))
    mine = 0
    ls = [n, int(NX, c_int64_t)]             ! swapped: the classic slip
    td%dtype = DT_F64
    td%ndim = 2
    td%shape(1:2) = [NX, NY]
    td%placements(1) = dt_shard_balanced(2)
    td%local_shape = c_loc(ls)
    st = dt_tensor_from_local(mesh, td, c_loc(mine), DT_FLAG_BORROW, t)
    msg = dt_last_error()
    write(want_ls, '(a,i0,a,i0,a)') "desc%local_shape = [", n, ", ", NX, "]"
    write(want_rule, '(a,i0,a,i0,a)') "the shape [", NX, ", ", n, "]"
    call check(st == DT_ERR_SHAPE .and. .not. c_associated(t), "a swapped local_shape: DT_ERR_SHAPE")
    call check(index(msg, trim(want_ls)) > 0 .and. index(msg, "[S(2,balanced)]") > 0 .and. &
               index(msg, trim(want_rule)) > 0 .and. index(msg, "DT_FLAG_INFER_SIZES") > 0, &
               "its message in Fortran order and names (DT_FLAG_INFER_SIZES, " // trim(want_ls) // ", " // &
               trim(want_rule) // ", S(2,balanced)): " // msg)
    td%local_shape = c_null_ptr
    td%placements(1) = dt_shard(2)
    call ok(dt_tensor_empty(mesh, td, t), "empty 7 x 5")
    hd%width(2) = -1                         ! Fortran dim 2
    st = dt_tensor_set_halo(t, hd)
    msg = dt_last_error()
    call check(st == DT_ERR_ARG .and. index(msg, "desc%width(2) = -1 is negative") > 0, &
               "a negative width(2): DT_ERR_ARG naming width(2): " // msg)
    call dt_tensor_destroy(t)
    ! a mesh desc: its arrays 1-based too
    md2%ndim = 2
    md2%shape(1:2) = [nranks, 0]
    st = dt_mesh_create(comm, md2, m2)
    msg = dt_last_error()
    call check(st == DT_ERR_MESH .and. .not. c_associated(m2) .and. index(msg, "desc%shape(2) = 0") > 0, &
               "a mesh shape(2) = 0: DT_ERR_MESH naming desc%shape(2): " // msg)
  end subroutine test_messages_in_fortran_order

  ! dt_tensor_redistribute_begin / _end: columns -> rows in flight while the
  ! source is overwritten (begin packed it), then the values; end twice refused
  subroutine test_redistribute_begin_end()
    real(c_double), target :: a(NX, NY), back(NX, NY)
    type(dt_tensor_desc) :: td
    type(dt_placement) :: rows(DT_MAX_MESH_DIMS)
    type(c_ptr) :: x = c_null_ptr, y = c_null_ptr
    real(c_double), pointer :: p(:, :)
    integer(c_int) :: st, done
    integer :: i, j
    do j = 1, NY
      do i = 1, NX
        a(i, j) = f(int(i, c_int64_t), int(j, c_int64_t))
      end do
    end do
    td%dtype = DT_F64
    td%ndim = 2
    td%shape(1:2) = [NX, NY]
    td%placements(1) = dt_shard(2)
    call ok(dt_tensor_distribute(mesh, td, c_loc(a), DT_SRC_ALL, x), "distribute by columns")
    rows(1) = dt_shard(1)
    call ok(dt_tensor_redistribute_begin(x, rows, y), "redistribute_begin to rows")
    call ok(dt_tensor_redistribute_test(y, done), "redistribute_test")
    call dt_tensor_local(x, p, st)
    if (st == DT_OK) p = -1                  ! begin has what it sends
    call ok(dt_tensor_redistribute_end(y), "redistribute_end")
    back = 0
    call ok(dt_tensor_gather(y, c_loc(back)), "gather the rows")
    call check(all(back == a), "begin/end: the rows gathered == the closed form")
    st = dt_tensor_redistribute_end(y)
    call check(st == DT_ERR_ARG, "end twice: DT_ERR_ARG")
    call dt_tensor_destroy(y)
    call dt_tensor_destroy(x)
  end subroutine test_redistribute_begin_end

  ! wrong shapes and dims: their status, and the message as a Fortran string
  subroutine test_errors()
    real(c_double), target :: a(4, 3)
    type(dt_tensor_desc) :: td
    type(c_ptr) :: x = c_null_ptr, y = c_null_ptr
    real(c_double), pointer :: p1(:)
    integer(c_int) :: st
    character(len=:), allocatable :: msg
    a = 1
    td%dtype = DT_F64
    td%ndim = 2
    td%shape(1:2) = [4, 3]
    td%placements(1) = dt_shard(3)           ! a rank-2 tensor has Fortran dims 1..2
    call dt_set_error_handler(c_funloc(on_error), c_null_ptr)
    st = dt_tensor_distribute(mesh, td, c_loc(a), DT_SRC_ALL, x)
    call dt_set_error_handler(c_null_funptr, c_null_ptr)
    call check(handled == 1 .and. handled_call == "dt_tensor_distribute" .and. handled_st == DT_ERR_PLACEMENT, &
               "the error hook: called once, with dt_tensor_distribute and DT_ERR_PLACEMENT; got: " // handled_call)
    ! a main program's variables are never freed: the ASan build's leak check would report it
    if (allocated(handled_call)) deallocate(handled_call)
    msg = dt_last_error()
    call check(st == DT_ERR_PLACEMENT .and. .not. c_associated(x), "Shard(3) of a rank-2 array: DT_ERR_PLACEMENT")
    call check(index(msg, "Shard(3)") > 0 .and. index(msg, "1..2") > 0, "its message: " // msg)
    call check(dt_status_string(st) /= "", "dt_status_string")
    td%placements(1) = dt_shard(0)           ! C's first dim, not a Fortran dim
    call check(dt_tensor_distribute(mesh, td, c_loc(a), DT_SRC_ALL, x) == DT_ERR_PLACEMENT, &
               "Shard(0): DT_ERR_PLACEMENT")
    td%placements(1) = dt_replicate()
    call ok(dt_tensor_distribute(mesh, td, c_loc(a), DT_SRC_ALL, x), "distribute a(4, 3)")
    st = dt_matmul(x, x, y)                  ! (4 x 3) x (4 x 3): inner dims differ
    msg = dt_last_error()
    call check(st == DT_ERR_SHAPE .and. .not. c_associated(y), "matmul of 4x3 by 4x3: DT_ERR_SHAPE")
    call check(len(msg) > 0, "its message: " // msg)
    call dt_tensor_local(x, p1, st)          ! a rank-2 tensor through a rank-1 pointer
    call check(st == DT_ERR_SHAPE .and. .not. associated(p1), "dt_tensor_local with the wrong rank: DT_ERR_SHAPE")
    call check(index(dt_last_error(), "rank 2") > 0, "its message: " // dt_last_error())
    call check(len(dt_version()) >= 5, "dt_version: " // dt_version())
    call dt_tensor_destroy(x)
  end subroutine test_errors

  ! ---- the typed wraps ----

  ! each kind at some rank 1-4 distributed sharded along its last Fortran dim
  ! and gathered back, element for element; a borrowed wrap aliases the
  ! array itself (no temporary)
  subroutine test_typed_roundtrips()
    real(c_float), target :: r4(5), r4b(5)
    real(c_double), target :: r8(3, 4), r8b(3, 4)
    integer(c_int32_t), target :: i4(2, 3, 4), i4b(2, 3, 4)
    integer(c_int64_t), target :: i8(3, 2), i8b(3, 2)
    complex(c_float_complex), target :: c8(2, 2, 2, 3), c8b(2, 2, 2, 3)
    complex(c_double_complex), target :: c16(4, 3), c16b(4, 3)
    real(c_double), allocatable, target :: mine(:, :)
    integer(c_int64_t), target :: ls(2)
    type(dt_tensor_desc) :: td
    type(c_ptr) :: t
    integer :: i, j, k, l
    integer(c_int64_t) :: n, lo
    r4 = [(real(i, c_float) * 0.5_c_float, i = 1, 5)]
    r8 = reshape([(real(i, c_double) * 1.25_c_double, i = 1, 12)], [3, 4])
    i4 = reshape([(int(i * 7 - 30, c_int32_t), i = 1, 24)], [2, 3, 4])
    i8 = reshape([(int(i, c_int64_t) * 3000000000_c_int64_t, i = 1, 6)], [3, 2])
    do l = 1, 3
      do k = 1, 2
        do j = 1, 2
          do i = 1, 2
            c8(i, j, k, l) = cmplx(i + 2 * j, k - 3 * l, c_float_complex)
          end do
        end do
      end do
    end do
    c16 = reshape([(cmplx(i, -2 * i, c_double_complex), i = 1, 12)], [4, 3])

    call typed_desc(DT_F32, [5_c_int64_t], td)
    t = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, r4, 0_c_int, t), "typed distribute real(4) rank 1")
    r4b = 0
    call ok(dt_tensor_gather(t, r4b), "typed gather real(4) rank 1")
    call check(all(r4b == r4), "real(4) rank 1 round trip")
    call dt_tensor_destroy(t)

    call typed_desc(DT_F64, [3_c_int64_t, 4_c_int64_t], td)
    t = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, r8, DT_SRC_ALL, t), "typed distribute real(8) rank 2")
    r8b = 0
    call ok(dt_tensor_gather(t, r8b), "typed gather real(8) rank 2")
    call check(all(r8b == r8), "real(8) rank 2 round trip")
    call dt_tensor_destroy(t)

    call typed_desc(DT_I32, [2_c_int64_t, 3_c_int64_t, 4_c_int64_t], td)
    t = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, i4, 0_c_int, t), "typed distribute integer(4) rank 3")
    i4b = 0
    call ok(dt_tensor_gather(t, i4b), "typed gather integer(4) rank 3")
    call check(all(i4b == i4), "integer(4) rank 3 round trip")
    call dt_tensor_destroy(t)

    call typed_desc(DT_I64, [3_c_int64_t, 2_c_int64_t], td)
    t = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, i8, 0_c_int, t), "typed distribute integer(8) rank 2")
    i8b = 0
    call ok(dt_tensor_gather(t, i8b), "typed gather integer(8) rank 2")
    call check(all(i8b == i8), "integer(8) rank 2 round trip (values past 2**31)")
    call dt_tensor_destroy(t)

    call typed_desc(DT_C64, [2_c_int64_t, 2_c_int64_t, 2_c_int64_t, 3_c_int64_t], td)
    t = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, c8, 0_c_int, t), "typed distribute complex(4) rank 4")
    c8b = 0
    call ok(dt_tensor_gather(t, c8b), "typed gather complex(4) rank 4")
    call check(all(c8b == c8), "complex(4) rank 4 round trip")
    call dt_tensor_destroy(t)

    call typed_desc(DT_C128, [4_c_int64_t, 3_c_int64_t], td)
    t = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, c16, 0_c_int, t), "typed distribute complex(8) rank 2")
    c16b = 0
    call ok(dt_tensor_gather(t, c16b), "typed gather complex(8) rank 2")
    call check(all(c16b == c16), "complex(8) rank 2 round trip")
    call dt_tensor_destroy(t)

    ! a borrowed wrap of each rank's own balanced column block: the tensor's
    ! data is the array itself, and a write through the library shows in it
    n = NY / nranks + merge(1, 0, rank < mod(NY, nranks))
    lo = rank * (NY / nranks) + min(rank, mod(NY, nranks))
    allocate(mine(NX, n))
    do j = 1, int(n)
      do i = 1, NX
        mine(i, j) = f(int(i, c_int64_t), lo + j)
      end do
    end do
    ls = [int(NX, c_int64_t), n]
    call typed_desc(DT_F64, [int(NX, c_int64_t), int(NY, c_int64_t)], td)
    td%placements(1) = dt_shard_balanced(2)
    td%local_shape = c_loc(ls)
    t = c_null_ptr
    call ok(dt_tensor_from_local(mesh, td, mine, DT_FLAG_BORROW, t), "typed from_local real(8) (borrow)")
    if (n > 0) call check(c_associated(dt_tensor_data(t), c_loc(mine)), "the borrowed tensor's data is the array")
    call ok(dt_tensor_zero_local(t), "dt_tensor_zero_local")
    call check(all(mine == 0), "zeroed through the tensor: the array itself (no copy)")
    call dt_tensor_destroy(t)
  end subroutine test_typed_roundtrips

  subroutine typed_desc(dtype, shape, td)
    integer(c_int), intent(in) :: dtype
    integer(c_int64_t), intent(in) :: shape(:)
    type(dt_tensor_desc), intent(out) :: td
    td%dtype = dtype
    td%ndim = size(shape)
    td%shape(1:size(shape)) = shape
    td%placements(1) = dt_shard(-1)     ! the last Fortran dim
  end subroutine typed_desc

  ! mislabelled arrays, sections, short arrays: refused on every rank with
  ! the call, the desc's dtype and the array's kind named
  subroutine test_typed_errors()
    real(c_double), target :: u(6, 4), small(2)
    real(c_float), target :: s4(6, 4)
    integer(c_int32_t), target :: i4(6, 4)
    type(dt_tensor_desc) :: td
    type(c_ptr) :: t
    integer(c_int) :: st
    character(len=:), allocatable :: msg
    u = 1
    s4 = 1
    t = c_null_ptr
    td%ndim = 2                             ! dtype left unset: DT_F32 (0)
    td%shape(1:2) = [6, 4]
    st = dt_tensor_from_local(mesh, td, u, DT_FLAG_COPY, t)
    msg = dt_last_error()
    call check(st == DT_ERR_DTYPE .and. .not. c_associated(t), "real(8) with dtype left unset: DT_ERR_DTYPE")
    call check(index(msg, "dt_tensor_from_local") > 0 .and. index(msg, "DT_F32") > 0 .and. &
               index(msg, "real(c_double)") > 0 .and. index(msg, "set desc%dtype = DT_F64") > 0 .and. &
               index(msg, "unset") > 0, "its message names the call, both dtypes and the fix: " // msg)
    st = dt_tensor_distribute(mesh, td, u, 0_c_int, t)
    call check(st == DT_ERR_DTYPE .and. .not. c_associated(t), "typed distribute, real(8) as DT_F32: DT_ERR_DTYPE")
    td%dtype = DT_F64
    st = dt_tensor_distribute(mesh, td, i4, DT_SRC_ALL, t)
    msg = dt_last_error()
    call check(st == DT_ERR_DTYPE .and. index(msg, "integer(c_int32_t)") > 0 .and. index(msg, "DT_I32") > 0, &
               "integer(4) as DT_F64: DT_ERR_DTYPE: " // msg)
    ! a strided section would be copied in and out around the call: refused
    st = dt_tensor_from_local(mesh, td, u(1:6:2, :), DT_FLAG_BORROW, t)
    msg = dt_last_error()
    call check(st == DT_ERR_ARG .and. .not. c_associated(t), "a section u(1:6:2, :): DT_ERR_ARG")
    call check(index(msg, "non-contiguous") > 0, "its message: " // msg)
    call ok(dt_tensor_distribute(mesh, td, u, DT_SRC_ALL, t), "typed distribute u")
    st = dt_tensor_gather(t, s4)
    msg = dt_last_error()
    call check(st == DT_ERR_DTYPE .and. index(msg, "DT_F64") > 0 .and. index(msg, "real(c_float)") > 0, &
               "gather of DT_F64 into real(4): DT_ERR_DTYPE: " // msg)
    st = dt_tensor_gather(t, small)
    msg = dt_last_error()
    call check(st == DT_ERR_SHAPE .and. index(msg, "2 elements") > 0 .and. index(msg, "24") > 0, &
               "gather into 2 elements of a 24-element tensor: DT_ERR_SHAPE: " // msg)
    ! one rank mislabels, the others do not: every rank fails, none waits
    if (nranks > 1) then
      call dt_tensor_destroy(t)
      t = c_null_ptr
      if (rank == 0) then
        st = dt_tensor_from_local(mesh, td, s4, DT_FLAG_COPY, t)
      else
        st = dt_tensor_from_local(mesh, td, u, DT_FLAG_COPY, t)
      end if
      call check(st /= DT_OK .and. .not. c_associated(t), "rank 0's mislabel fails every rank")
      msg = dt_last_error()
      ! (with DTENSOR_CHECK=1 the rank that refused reports DT_ERR_MISMATCH too, its reason inside)
      if (rank == 0) then
        call check((st == DT_ERR_DTYPE .or. (dt_get_checks() == 1 .and. st == DT_ERR_MISMATCH)) .and. &
                   index(msg, "real(c_float)") > 0, "rank 0: DT_ERR_DTYPE naming its array: " // msg)
      else
        call check(st == DT_ERR_MISMATCH .and. index(msg, "rank 0") > 0, "the others: DT_ERR_MISMATCH naming rank 0: " // msg)
      end if
    end if
    if (c_associated(t)) call dt_tensor_destroy(t)
    call dt_clear_error()
  end subroutine test_typed_errors

  ! ---- the views, dim-taking ops and matmul family, in Fortran order ----
  subroutine test_views()
    integer, parameter :: M = 6, K = 4, N = 3
    real(c_double), target :: a(M, K), b(K, N), c(M, N), at(K, M), r(K, M), g(M, K)
    real(c_double), target :: p3(2, 3, 4), q3(4, 2, 3), u3(M, 1, K), cat2(M, 2 * K), st3(M, K, 2)
    real(c_double), target :: s1(2, K), s2(4, K), sm(M, K), nr(M), nar(M, 2)
    real(c_double), target :: ba(2, 3, 2), bb(3, 4, 2), bc(2, 4, 2), bref(2, 4, 2)
    complex(c_double_complex), target :: z(M, K)
    integer(c_int64_t), target :: am(K), strides(DT_MAX_DIMS), idx(M), gs(DT_MAX_DIMS), ls(DT_MAX_DIMS), off(DT_MAX_DIMS)
    type(dt_tensor_desc) :: td, back
    type(c_ptr) :: x, y, w, bt, tb, pieces(2), xs(2)
    integer :: i, j, l
    integer(c_int) :: nd, st
    character(len=:), allocatable :: msg
    do j = 1, K
      do i = 1, M
        a(i, j) = 10.0_c_double * i - j * j + 0.25_c_double * modulo(i * j, 3)
      end do
    end do
    do j = 1, N
      do i = 1, K
        b(i, j) = 0.5_c_double * i - j
      end do
    end do
    x = c_null_ptr
    td%dtype = DT_F64
    td%ndim = 2
    td%shape(1:2) = [M, K]
    td%placements(1) = dt_shard(1)
    call ok(dt_tensor_distribute(mesh, td, a, DT_SRC_ALL, x), "distribute a (rows)")

    call ok(dt_tensor_get_desc(x, back), "dt_tensor_get_desc")
    call check(back%dtype == DT_F64 .and. back%ndim == 2 .and. back%shape(1) == M .and. back%shape(2) == K .and. &
               (nranks == 1 .or. back%placements(1)%dim == 1), "get_desc: Fortran shape and Shard dim")
    call check(dt_tensor_local_strides(x, strides) == 2, "dt_tensor_local_strides: ndim")
    call ok(dt_tensor_local_shape(x, ls, off), "local shape")
    call check(strides(1) == 1 .and. (ls(1) == 0 .or. strides(2) == ls(1)), "local strides in Fortran order")
    call ok(dt_tensor_local_indices(x, 1_c_int, idx), "dt_tensor_local_indices")
    call check(all(idx(1:ls(1)) == [(off(1) + i - 1, i = 1, int(ls(1)))]), "local indices along Fortran dim 1")

    y = c_null_ptr
    call ok(dt_transpose(x, 1_c_int, 2_c_int, y), "dt_transpose")
    call ok(dt_tensor_gather(y, at), "gather the transpose")
    call check(all(at == transpose(a)), "dt_transpose == transpose(a)")
    call dt_tensor_destroy(y)

    y = c_null_ptr
    call ok(dt_reshape(x, 2_c_int, [int(K, c_int64_t), -1_c_int64_t], y), "dt_reshape to [K, -1]")
    call ok(dt_tensor_gather(y, r), "gather the reshape")
    call check(all(r == reshape(a, [K, M])), "dt_reshape == reshape(a, [K, M])")
    call dt_tensor_destroy(y)

    y = c_null_ptr
    call ok(dt_unsqueeze(x, 2_c_int, y), "dt_unsqueeze at Fortran dim 2")
    call ok(dt_tensor_shape(y, nd, gs), "its shape")
    call check(nd == 3 .and. all(gs(1:3) == [int(M, c_int64_t), 1_c_int64_t, int(K, c_int64_t)]), &
               "unsqueeze(a, 2) has shape [M, 1, K]")
    call ok(dt_tensor_gather(y, u3), "gather the unsqueezed")
    call check(all(u3(:, 1, :) == a), "unsqueezed values")
    w = c_null_ptr
    call ok(dt_squeeze(y, 2_c_int, w), "dt_squeeze Fortran dim 2")
    call ok(dt_tensor_shape(w, nd, gs), "its shape")
    call check(nd == 2 .and. gs(1) == M .and. gs(2) == K, "squeeze(unsqueeze(a, 2), 2) has shape [M, K]")
    call dt_tensor_destroy(w)
    call dt_tensor_destroy(y)

    y = c_null_ptr
    call ok(dt_narrow(x, 2_c_int, 2_c_int64_t, 2_c_int64_t, y), "dt_narrow(dim 2, start 2, length 2)")
    call ok(dt_tensor_gather(y, nar), "gather the narrowed")
    call check(all(nar == a(:, 2:3)), "dt_narrow == a(:, 2:3)")
    call dt_tensor_destroy(y)
    y = c_null_ptr
    st = dt_narrow(x, 2_c_int, 0_c_int64_t, 1_c_int64_t, y)    ! (the message read after the call, not in its expression)
    msg = dt_last_error()
    call check(st == DT_ERR_ARG .and. index(msg, "1-based") > 0, "dt_narrow start 0: DT_ERR_ARG (1-based): " // msg)

    xs = [x, x]
    y = c_null_ptr
    call ok(dt_cat(xs, 2_c_int, y), "dt_cat along Fortran dim 2")
    call ok(dt_tensor_gather(y, cat2), "gather the cat")
    call check(all(cat2(:, 1:K) == a) .and. all(cat2(:, K + 1:) == a), "dt_cat == [a, a] along dim 2")
    call dt_tensor_destroy(y)
    y = c_null_ptr
    call ok(dt_stack(xs, 3_c_int, y), "dt_stack as Fortran dim 3")
    call ok(dt_tensor_gather(y, st3), "gather the stack")
    call check(all(st3(:, :, 1) == a) .and. all(st3(:, :, 2) == a), "dt_stack(.., 3)(:, :, i) == a")
    call dt_tensor_destroy(y)

    pieces = c_null_ptr
    call ok(dt_split(x, 1_c_int, [2_c_int64_t, 4_c_int64_t], pieces), "dt_split along Fortran dim 1")
    call ok(dt_tensor_gather(pieces(1), s1), "gather piece 1")
    call ok(dt_tensor_gather(pieces(2), s2), "gather piece 2")
    call check(all(s1 == a(1:2, :)) .and. all(s2 == a(3:6, :)), "dt_split pieces == a(1:2, :), a(3:6, :)")
    call dt_tensor_destroy(pieces(1))
    call dt_tensor_destroy(pieces(2))

    y = c_null_ptr
    call ok(dt_softmax(x, 1_c_int, y), "dt_softmax over Fortran dim 1")
    call ok(dt_tensor_gather(y, sm), "gather the softmax")
    do j = 1, K
      g(:, j) = exp(a(:, j) - maxval(a(:, j))) / sum(exp(a(:, j) - maxval(a(:, j))))
    end do
    call check(all(abs(sm - g) < 1e-12_c_double), "dt_softmax == exp(a) / sum(exp(a), dim=1)")
    call dt_tensor_destroy(y)

    y = c_null_ptr
    call ok(dt_norm2(x, 1_c_int, [2_c_int], 0_c_int, y), "dt_norm2 over Fortran dim 2")
    call ok(dt_tensor_gather(y, nr), "gather the norms")
    call check(all(abs(nr - sqrt(sum(a**2, dim=2))) < 1e-12_c_double), "dt_norm2 == norm2(a, dim=2)")
    call dt_tensor_destroy(y)
    y = c_null_ptr
    call ok(dt_argmax(x, 1_c_int, [1_c_int], 0_c_int, y), "dt_argmax over Fortran dim 1")
    call ok(dt_tensor_gather(y, am), "gather the argmax")
    call check(all(am == maxloc(a, dim=1) - 1), "dt_argmax == maxloc(a, dim=1) - 1")
    call dt_tensor_destroy(y)

    y = c_null_ptr
    call ok(dt_cast(x, DT_C128, y), "dt_cast to DT_C128")
    call ok(dt_tensor_gather(y, z), "gather the cast into complex(8)")
    call check(all(z == cmplx(a, 0, c_double_complex)), "dt_cast(a, c128) == cmplx(a)")
    call dt_tensor_destroy(y)

    ! the unary and binary families against Fortran's intrinsics
    y = c_null_ptr
    call ok(dt_abs(x, y), "dt_abs")
    w = c_null_ptr
    call ok(dt_sqrt(y, w), "dt_sqrt")
    call ok(dt_tensor_gather(w, g), "gather sqrt(abs(a))")
    call check(all(abs(g - sqrt(abs(a))) < 1e-12_c_double), "dt_sqrt(dt_abs(a)) == sqrt(abs(a))")
    call dt_tensor_destroy(w)
    w = c_null_ptr
    call ok(dt_maximum(x, y, w), "dt_maximum")
    call ok(dt_tensor_gather(w, g), "gather max(a, abs(a))")
    call check(all(g == max(a, abs(a))), "dt_maximum(a, abs(a)) == max(a, abs(a))")
    call dt_tensor_destroy(w)
    w = c_null_ptr
    call ok(dt_shift(x, 1.5_c_double, w), "dt_shift")
    bt = c_null_ptr
    call ok(dt_div(x, w, bt), "dt_div")
    call ok(dt_tensor_gather(bt, g), "gather a / (a + 1.5)")
    call check(all(abs(g - a / (a + 1.5_c_double)) < 1e-12_c_double), "dt_div(a, dt_shift(a, 1.5)) == a / (a + 1.5)")
    call dt_tensor_destroy(bt)
    call dt_tensor_destroy(w)
    call dt_tensor_destroy(y)

    ! Fortran's matmul: dt_mm, dt_addmm, dt_bmm (batch last)
    td%shape(1:2) = [K, N]
    td%placements(1) = dt_replicate()
    tb = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, b, DT_SRC_ALL, tb), "distribute b")
    y = c_null_ptr
    call ok(dt_mm(x, tb, y), "dt_mm")
    call ok(dt_tensor_gather(y, c), "gather mm")
    call check(all(abs(c - matmul(a, b)) < 1e-12_c_double), "dt_mm(a, b) == matmul(a, b)")
    w = c_null_ptr
    call ok(dt_addmm(y, x, tb, 0.5_c_double, 2.0_c_double, w), "dt_addmm")
    call ok(dt_tensor_gather(w, c), "gather addmm")
    call check(all(abs(c - 2.5_c_double * matmul(a, b)) < 1e-11_c_double), &
               "dt_addmm(c, a, b, 0.5, 2) == 0.5 c + 2 matmul(a, b)")
    call dt_tensor_destroy(w)
    call dt_tensor_destroy(y)
    call dt_tensor_destroy(tb)
    do l = 1, 2
      do j = 1, 3
        do i = 1, 2
          ba(i, j, l) = i + 2 * j - 3 * l
        end do
      end do
      do j = 1, 4
        do i = 1, 3
          bb(i, j, l) = i * j + l
        end do
      end do
      bref(:, :, l) = matmul(ba(:, :, l), bb(:, :, l))
    end do
    td%ndim = 3
    td%shape(1:3) = [2, 3, 2]
    td%placements(1) = dt_shard(3)
    y = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, ba, DT_SRC_ALL, y), "distribute the batch a")
    td%shape(1:3) = [3, 4, 2]
    tb = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, bb, DT_SRC_ALL, tb), "distribute the batch b")
    w = c_null_ptr
    call ok(dt_bmm(y, tb, w), "dt_bmm")
    call ok(dt_tensor_gather(w, bc), "gather bmm")
    call check(all(abs(bc - bref) < 1e-12_c_double), "dt_bmm == matmul per batch (last dim)")
    call dt_tensor_destroy(w)
    call dt_tensor_destroy(tb)
    call dt_tensor_destroy(y)

    ! permute: result dim i is p3's dim perm(i)
    do l = 1, 4
      do j = 1, 3
        do i = 1, 2
          p3(i, j, l) = 100 * i + 10 * j + l
        end do
      end do
    end do
    td%shape(1:3) = [2, 3, 4]
    td%placements(1) = dt_shard(2)
    y = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, p3, DT_SRC_ALL, y), "distribute p3")
    w = c_null_ptr
    call ok(dt_permute(y, [3_c_int, 1_c_int, 2_c_int], w), "dt_permute [3, 1, 2]")
    call ok(dt_tensor_gather(w, q3), "gather the permute")
    call check(all(q3 == reshape(p3, [4, 2, 3], order=[2, 3, 1])), "dt_permute(p, [3, 1, 2])(l, i, j) == p(i, j, l)")
    call dt_tensor_destroy(w)
    call dt_tensor_destroy(y)
    y = c_null_ptr
    ! a forwarded op's refusal speaks Fortran too: shapes as the program declared them
    td%ndim = 2
    td%shape(1:2) = [M, N]
    td%placements(1) = dt_replicate()
    tb = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, c, DT_SRC_ALL, tb), "distribute c(M, N)")
    y = c_null_ptr
    st = dt_add(x, tb, y)
    msg = dt_last_error()
    call check(st == DT_ERR_SHAPE .and. index(msg, "[6, 4]") > 0 .and. index(msg, "[6, 3]") > 0, &
               "dt_add of a(6, 4) and c(6, 3): DT_ERR_SHAPE with Fortran-order shapes: " // msg)
    call dt_tensor_destroy(tb)
    y = c_null_ptr
    st = dt_transpose(x, 1_c_int, 3_c_int, y)
    msg = dt_last_error()
    call check(st == DT_ERR_ARG .and. index(msg, "d1 = 3") > 0, &
               "dt_transpose(x, 1, 3) of a rank-2 tensor: DT_ERR_ARG naming d1: " // msg)
    call dt_tensor_destroy(x)
    call dt_clear_error()
  end subroutine test_views

  ! ---- meshes: names, slice, flatten; shared-memory storage; the matmul
  ! budget; redistribute_reduce; RNG state; comm stats ----
  subroutine test_mesh_extras()
    character(kind=c_char), target :: ndp(3) = ['d', 'p', c_null_char], ntp(3) = ['t', 'p', c_null_char]
    type(dt_mesh_desc) :: d2
    type(c_ptr) :: m2, sl, fl, shm, t, o, r
    real(c_double), pointer :: buf(:, :)
    real(c_double), target :: a(5, 4), acc(5, 4), back(5, 4)
    type(dt_tensor_desc) :: td
    type(dt_placement) :: rep(DT_MAX_MESH_DIMS)
    type(dt_comm_stats) :: stats
    integer(c_int64_t) :: seed, offset, seed2, offset2
    integer :: i, j
    integer(c_int) :: st
    character(len=:), allocatable :: msg
    d2%ndim = 2
    d2%shape(1:2) = [nranks, 1]
    d2%names(1) = c_loc(ndp)
    d2%names(2) = c_loc(ntp)
    m2 = c_null_ptr
    call ok(dt_mesh_create(comm, d2, m2), "a named 2-D mesh")
    call check(dt_mesh_dim_name(m2, 0_c_int) == "dp" .and. dt_mesh_dim_name(m2, 1_c_int) == "tp", &
               "dt_mesh_dim_name: dp, tp")
    call check(dt_mesh_dim_index(m2, "tp") == 1 .and. dt_mesh_dim_index(m2, "xx") == -1, "dt_mesh_dim_index")
    sl = c_null_ptr
    call ok(dt_mesh_slice(m2, ["dp"], sl), "dt_mesh_slice dp")
    call check(dt_mesh_ndim(sl) == 1 .and. dt_mesh_size(sl) == nranks .and. dt_mesh_dim_name(sl, 0_c_int) == "dp", &
               "the dp slice: 1-D over every rank")
    call dt_mesh_destroy(sl)
    fl = c_null_ptr
    call ok(dt_mesh_flatten(m2, ["dp", "tp"], "all", fl), "dt_mesh_flatten dp, tp")
    call check(dt_mesh_ndim(fl) == 1 .and. dt_mesh_dim_size(fl, 0_c_int) == nranks .and. &
               dt_mesh_dim_name(fl, 0_c_int) == "all", "flattened: one dim 'all' of every rank")
    call dt_mesh_destroy(fl)
    sl = c_null_ptr
    st = dt_mesh_slice(m2, ["zz"], sl)
    msg = dt_last_error()
    call check(st /= DT_OK .and. index(msg, '"zz"') > 0, "slicing an unknown dim names it: " // msg)
    call dt_mesh_destroy(m2)

    do j = 1, 4
      do i = 1, 5
        a(i, j) = i - 3 * j
      end do
    end do
    ! storage from the mesh's shared arena (or malloc), wrapped and gathered
    shm = c_null_ptr
    call ok(dt_mesh_shm_alloc(mesh, int(8 * 5 * 4, c_size_t), shm), "dt_mesh_shm_alloc")
    call c_f_pointer(shm, buf, [5, 4])
    buf = a
    td%dtype = DT_F64
    td%ndim = 2
    td%shape(1:2) = [5, 4]
    t = c_null_ptr
    call ok(dt_tensor_from_local(mesh, td, buf, DT_FLAG_BORROW, t), "wrap the shared block (replicated)")
    back = 0
    call ok(dt_tensor_gather(t, back), "gather it")
    call check(all(back == a), "the shared block's values")
    call dt_tensor_destroy(t)
    call dt_mesh_shm_free(mesh, shm)

    ! redistribute_reduce: acc += a (sharded to replicated), then max
    td%placements(1) = dt_shard(2)
    t = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, a, DT_SRC_ALL, t), "distribute a S(2)")
    acc = 0.5_c_double
    td%placements(1) = dt_replicate()
    o = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, acc, DT_SRC_ALL, o), "distribute the accumulator")
    rep = dt_replicate()
    call ok(dt_tensor_redistribute_reduce(t, rep, DT_REDUCE_SUM, o), "dt_tensor_redistribute_reduce SUM")
    call ok(dt_tensor_gather(o, back), "gather the sum")
    call check(all(back == a + 0.5_c_double), "out = out + a")
    call ok(dt_tensor_redistribute_reduce(t, rep, DT_REDUCE_MIN, o), "dt_tensor_redistribute_reduce MIN")
    call ok(dt_tensor_gather(o, back), "gather the min")
    call check(all(back == a), "out = min(out, a)")
    call check(dt_tensor_redistribute_reduce(t, rep, DT_REDUCE_AVG, o) == DT_ERR_ARG, &
               "redistribute_reduce with AVG: DT_ERR_ARG")

    ! the matmul budget
    call ok(dt_mesh_set_matmul_budget(mesh, 1048576_c_int64_t), "dt_mesh_set_matmul_budget 1 MiB")
    st = dt_mesh_set_matmul_budget(mesh, -1_c_int64_t)
    msg = dt_last_error()
    call check(st == DT_ERR_ARG .and. index(msg, "-1") > 0, "a negative budget: DT_ERR_ARG: " // msg)
    r = c_null_ptr
    call ok(dt_transpose(t, 1_c_int, 2_c_int, r), "a^T")
    call ok(dt_mesh_set_matmul_budget(mesh, 0_c_int64_t), "the default budget again")
    call dt_tensor_destroy(r)

    ! RNG state round trip: the same state gives the same numbers
    call ok(dt_rng_get_state(mesh, seed, offset), "dt_rng_get_state")
    r = c_null_ptr
    call ok(dt_tensor_rand(mesh, td, r), "dt_tensor_rand")
    call ok(dt_tensor_gather(r, back), "gather rand")
    call check(all(back >= 0 .and. back < 1), "dt_tensor_rand in [0, 1)")
    acc = back
    call ok(dt_rng_get_state(mesh, seed2, offset2), "state after")
    call check(seed2 == seed .and. offset2 /= offset, "the offset moved")
    call ok(dt_rng_set_state(mesh, seed, offset), "dt_rng_set_state back")
    call ok(dt_uniform(r, 0.0_c_double, 1.0_c_double), "dt_uniform from the same state")
    call ok(dt_tensor_gather(r, back), "gather")
    call check(all(back == acc), "the same state draws the same numbers")
    call dt_tensor_destroy(r)

    call dt_comm_reset_stats(comm)
    r = c_null_ptr
    call ok(dt_tensor_redistribute(t, rep, r), "a redistribution")
    call dt_comm_get_stats(comm, stats)
    call check(nranks == 1 .or. (stats%calls > 0 .and. stats%bytes_recv > 0), "dt_comm_get_stats counts it")
    call dt_tensor_destroy(r)
    call dt_tensor_destroy(o)
    call dt_tensor_destroy(t)
    call dt_clear_error()
  end subroutine test_mesh_extras

  ! ---- the stencil: a 5-point Laplacian with zero boundaries, sharded
  ! along Fortran dim 2, against the serial loop ----
  subroutine test_stencil()
    real(c_double), target :: u(NX, NY), lap(NX, NY), ref(NX, NY), pad(0:NX + 1, 0:NY + 1)
    type(dt_tensor_desc) :: td
    type(dt_halo_desc) :: h
    type(c_ptr) :: t, o
    integer :: i, j
    do j = 1, NY
      do i = 1, NX
        u(i, j) = f(int(i, c_int64_t), int(j, c_int64_t)) + 0.5_c_double * i * j
      end do
    end do
    pad = 0
    pad(1:NX, 1:NY) = u
    do j = 1, NY
      do i = 1, NX
        ref(i, j) = pad(i - 1, j) + pad(i + 1, j) + pad(i, j - 1) + 2 * pad(i, j + 1) - 5 * pad(i, j)
      end do
    end do
    td%dtype = DT_F64
    td%ndim = 2
    td%shape(1:2) = [NX, NY]
    td%placements(1) = dt_shard(2)
    t = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, u, DT_SRC_ALL, t), "distribute u")
    h%width(1:2) = 1
    h%boundary(1:2) = int(DT_BOUNDARY_CONSTANT, c_int8_t)
    call ok(dt_tensor_set_halo(t, h), "halo of width 1")
    o = c_null_ptr
    stencil_calls = 0
    call ok(dt_stencil_apply(t, c_funloc(laplacian), c_null_ptr, o), "dt_stencil_apply")
    call ok(dt_tensor_gather(o, lap), "gather the stencil")
    call check(all(lap == ref), "dt_stencil_apply == the serial 5-point stencil (Fortran order)")
    call check(stencil_calls > 0 .or. (stencil_calls == 0 .and. dt_tensor_local_numel(t) == 0), &
               "the callback ran where there are cells, and saw a sound block")
    call dt_tensor_destroy(o)
    call dt_tensor_destroy(t)
  end subroutine test_stencil

  ! the callback: a weighted 5-point stencil (the j + 1 neighbour counts
  ! twice, so a reversed dim would show)
  subroutine laplacian(b, user) bind(C)
    type(dt_stencil_block), intent(in) :: b
    type(c_ptr), value :: user
    real(c_double), pointer :: pin(:), pout(:)
    integer(c_int64_t) :: i, j, c, s1, s2, nin, nout
    integer(c_int64_t), pointer :: gshape(:)
    stencil_calls = stencil_calls + 1
    if (b%dtype /= DT_F64 .or. b%ndim /= 2 .or. c_associated(user)) then
      stencil_calls = -1000
      return
    end if
    call c_f_pointer(b%global_shape, gshape, [2])
    if (gshape(1) /= NX .or. gshape(2) /= NY) stencil_calls = -1000
    s1 = b%in_stride(1)
    s2 = b%in_stride(2)
    nin = (b%local_shape(1) + 2 * b%width(1) - 1) * s1 + (b%local_shape(2) + 2 * b%width(2) - 1) * s2 + 1
    nout = (b%local_shape(1) - 1) * b%out_stride(1) + (b%local_shape(2) - 1) * b%out_stride(2) + 1
    call c_f_pointer(b%in, pin, [nin])
    call c_f_pointer(b%out, pout, [nout])
    do j = b%lo(2), b%lo(2) + b%ext(2) - 1
      do i = b%lo(1), b%lo(1) + b%ext(1) - 1
        c = 1 + (i + b%width(1)) * s1 + (j + b%width(2)) * s2
        pout(1 + i * b%out_stride(1) + j * b%out_stride(2)) = pin(c - s1) + pin(c + s1) + pin(c - s2) + &
             2 * pin(c + s2) - 5 * pin(c)
      end do
    end do
  end subroutine laplacian

  ! ---- convolution in Fortran order against the direct sum: conv1d
  ! sharded along its spatial dim, conv2d with a padding and a dilation
  ! that differ per dim (a reversed desc would show) ----
  subroutine test_conv()
    integer, parameter :: L = 8, CI = 2, CO = 3, NB = 2, KW = 3
    real(c_double), target :: x(L, CI, NB), w(KW, CI, CO), bias(CO), y(L, CO, NB), ref(L, CO, NB)
    real(c_double), target :: x2(5, 6, 1, 1), w2(3, 2, 1, 1), y2(5, 4, 1, 1), ref2(5, 4, 1, 1)
    type(dt_tensor_desc) :: td
    type(dt_conv_desc) :: cd
    type(c_ptr) :: tx, tw, tbias, to
    integer :: i, ci_, co_, n, k, p, q, ii, jj
    do n = 1, NB
      do ci_ = 1, CI
        do i = 1, L
          x(i, ci_, n) = i * 0.5_c_double - ci_ + 3 * n
        end do
      end do
    end do
    do co_ = 1, CO
      do ci_ = 1, CI
        do k = 1, KW
          w(k, ci_, co_) = k - 2 * ci_ + co_ * 0.25_c_double
        end do
      end do
      bias(co_) = 10 * co_
    end do
    ref = 0
    do n = 1, NB
      do co_ = 1, CO
        do i = 1, L                      ! padding 1: input index i + k - 2
          ref(i, co_, n) = bias(co_)
          do ci_ = 1, CI
            do k = 1, KW
              if (i + k - 2 >= 1 .and. i + k - 2 <= L) ref(i, co_, n) = ref(i, co_, n) + w(k, ci_, co_) * x(i + k - 2, ci_, n)
            end do
          end do
        end do
      end do
    end do
    td%dtype = DT_F64
    td%ndim = 3
    td%shape(1:3) = [L, CI, NB]
    td%placements(1) = dt_shard(1)
    tx = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, x, DT_SRC_ALL, tx), "distribute x(L, C_in, N) along L")
    td%shape(1:3) = [KW, CI, CO]
    td%placements(1) = dt_replicate()
    tw = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, w, DT_SRC_ALL, tw), "distribute w")
    td%ndim = 1
    td%shape(1) = CO
    tbias = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, bias, DT_SRC_ALL, tbias), "distribute bias")
    cd%padding(1) = 1
    to = c_null_ptr
    call ok(dt_conv1d(tx, tw, tbias, cd, to), "dt_conv1d")
    call ok(dt_tensor_gather(to, y), "gather conv1d")
    call check(all(abs(y - ref) < 1e-11_c_double), "dt_conv1d == the direct sum")
    call dt_tensor_destroy(to)
    call dt_tensor_destroy(tbias)
    call dt_tensor_destroy(tw)
    call dt_tensor_destroy(tx)

    do jj = 1, 6
      do ii = 1, 5
        x2(ii, jj, 1, 1) = ii * ii - 2 * jj
      end do
    end do
    do q = 1, 2
      do p = 1, 3
        w2(p, q, 1, 1) = p + 10 * q
      end do
    end do
    ref2 = 0                             ! dim 1: padding 1, dilation 1; dim 2: padding 0, dilation 2
    do jj = 1, 4
      do ii = 1, 5
        do q = 1, 2
          do p = 1, 3
            if (ii + p - 2 >= 1 .and. ii + p - 2 <= 5) &
                 ref2(ii, jj, 1, 1) = ref2(ii, jj, 1, 1) + w2(p, q, 1, 1) * x2(ii + p - 2, jj + 2 * (q - 1), 1, 1)
          end do
        end do
      end do
    end do
    td%ndim = 4
    td%shape(1:4) = [5, 6, 1, 1]
    td%placements(1) = dt_shard(2)
    tx = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, x2, DT_SRC_ALL, tx), "distribute x2")
    td%shape(1:4) = [3, 2, 1, 1]
    td%placements(1) = dt_replicate()
    tw = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, w2, DT_SRC_ALL, tw), "distribute w2")
    cd%padding = [1, 0, 0]
    cd%dilation = [1, 2, 0]
    to = c_null_ptr
    call ok(dt_conv2d(tx, tw, c_null_ptr, cd, to), "dt_conv2d, padding [1, 0], dilation [1, 2]")
    call ok(dt_tensor_gather(to, y2), "gather conv2d")
    call check(all(abs(y2 - ref2) < 1e-11_c_double), "dt_conv2d == the direct sum (per-dim padding/dilation)")
    call dt_tensor_destroy(to)
    call dt_tensor_destroy(tw)
    call dt_tensor_destroy(tx)
  end subroutine test_conv

  ! ---- ScaLAPACK interop: a(7, 5) block-cyclic on a P x 1 mesh is
  ! ScaLAPACK's A(7, 5) on a P x 1 grid "R"; the inverse gives back the
  ! Fortran desc, under which the local part wraps and gathers to a ----
  subroutine test_scalapack()
    integer, parameter :: M = 7, N = 5
    real(c_double), target :: a(M, N), back(M, N)
    real(c_double), pointer :: loc(:, :)
    integer(c_int64_t), target :: ls(2), strides(2)
    integer(c_int64_t) :: myls(DT_MAX_DIMS), off(DT_MAX_DIMS)
    integer(c_int) :: desc(9), st
    type(dt_scalapack_grid) :: grid
    type(dt_mesh_desc) :: d2
    type(dt_tensor_desc) :: td, fd
    type(c_ptr) :: m2, t, w
    integer :: i, j
    do j = 1, N
      do i = 1, M
        a(i, j) = 10 * i + j
      end do
    end do
    d2%ndim = 2
    d2%shape(1:2) = [nranks, 1]
    m2 = c_null_ptr
    call ok(dt_mesh_create(comm, d2, m2), "a P x 1 mesh")
    td%dtype = DT_F64
    td%ndim = 2
    td%shape(1:2) = [M, N]
    td%placements(1) = dt_shard_cyclic(1_c_int, 2_c_int64_t)
    td%placements(2) = dt_shard_cyclic(2_c_int, 2_c_int64_t)
    t = c_null_ptr
    call ok(dt_tensor_distribute(m2, td, a, DT_SRC_ALL, t), "distribute a block-cyclic")
    call ok(dt_tensor_scalapack_desc(t, 0_c_int, desc, grid), "dt_tensor_scalapack_desc")
    call ok(dt_tensor_local_shape(t, myls, off), "its local shape")
    call check(all(desc(1:8) == [1, 0, M, N, 2, 2, 0, 0]) .and. desc(9) == max(1_c_int64_t, myls(1)), &
               "desc = [1, ictxt, M, N, mb, nb, 0, 0, LLD]: Fortran's a(M, N) itself")
    call check(grid%nprow == nranks .and. grid%npcol == 1 .and. grid%order(1) == "R" .and. &
               grid%myrow == rank .and. grid%mycol == 0, "the grid: P x 1, order R, my row = my rank")
    call ok(dt_tensor_desc_from_scalapack(desc, grid, DT_F64, fd, ls, strides), "dt_tensor_desc_from_scalapack")
    call check(fd%dtype == DT_F64 .and. fd%ndim == 2 .and. all(fd%shape(1:2) == [M, N]) .and. &
               fd%placements(1)%dim == 1 .and. fd%placements(2)%dim == 2 .and. fd%placements(1)%block == 2, &
               "the inverse: shape [M, N] and Shard dims in Fortran order")
    call check(all(ls == myls(1:2)), "its local_shape is this rank's, in Fortran order")
    call dt_tensor_local(t, loc, st)
    call ok(st, "the local part")
    if (associated(loc)) then
      w = c_null_ptr
      call ok(dt_tensor_from_local(m2, fd, loc, DT_FLAG_BORROW, w), "wrap the local part under the inverse's desc")
      back = 0
      call ok(dt_tensor_gather(w, back), "gather the wrap")
      call check(all(back == a), "the wrap gathers to a")
      call dt_tensor_destroy(w)
    end if
    call dt_tensor_destroy(t)
    call dt_mesh_destroy(m2)
  end subroutine test_scalapack

  ! ---- the rest of the ops, each against Fortran's own arithmetic ----
  subroutine test_more_ops()
    integer, parameter :: M = 6, K = 4, IN = 4, NOUT = 3, D = 3, V = 5, NC = 4, NB = 3
    real(c_double), target :: a(M, K), g(M, K), e(M, K), v6(M), s0
    real(c_double), target :: xl(IN, M), wl(IN, NOUT), bl(NOUT), yl(NOUT, M), ref(NOUT, M)
    real(c_double), target :: table(D, V), emb(D, 4), logits(NC, NB), loss, ln(M, K), mu, var
    real(c_double), target :: x3(3, 3, 3, 1, 1), w3(2, 2, 2, 1, 1), y3(2, 2, 2, 1, 1), r3(2, 2, 2, 1, 1)
    integer(c_int64_t), target :: idx(4), tgt(NB), li(DT_MAX_DIMS), ls(DT_MAX_DIMS), off(DT_MAX_DIMS)
    integer(c_int8_t), target :: mask(M, K)
    type(dt_tensor_desc) :: td
    type(dt_conv_desc) :: cd
    type(c_ptr) :: x, y, z, w, bt, mk
    integer :: i, j, p, q, l, ii, jj, kk
    integer(c_int) :: coord(1), on, st
    character(len=:), allocatable :: msg
    character(len=64) :: path
    do j = 1, K
      do i = 1, M
        a(i, j) = 0.3_c_double * i - 0.45_c_double * j
      end do
    end do
    td%dtype = DT_F64
    td%ndim = 2
    td%shape(1:2) = [M, K]
    td%placements(1) = dt_shard(1)
    x = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, a, DT_SRC_ALL, x), "distribute a")
    call check(c_associated(dt_tensor_mesh(x), mesh), "dt_tensor_mesh is the mesh")
    call check(dt_dtype_size(DT_C128) == 16 .and. dt_dtype_size(DT_I32) == 4, "dt_dtype_size")

    call unary(x, "dt_neg", 1, g)
    call close_to(g, -a, "dt_neg == -a")
    call unary(x, "dt_exp", 2, g)
    call close_to(g, exp(a), "dt_exp == exp(a)")
    call unary(x, "dt_sin", 3, g)
    call close_to(g, sin(a), "dt_sin == sin(a)")
    call unary(x, "dt_cos", 4, g)
    call close_to(g, cos(a), "dt_cos == cos(a)")
    call unary(x, "dt_tanh", 5, g)
    call close_to(g, tanh(a), "dt_tanh == tanh(a)")
    call unary(x, "dt_sigmoid", 6, g)
    call close_to(g, 1 / (1 + exp(-a)), "dt_sigmoid == 1 / (1 + exp(-a))")
    call unary(x, "dt_relu", 7, g)
    call close_to(g, max(a, 0.0_c_double), "dt_relu == max(a, 0)")
    call unary(x, "dt_gelu", 8, g)
    call close_to(g, a / 2 * (1 + erf(a / sqrt(2.0_c_double))), "dt_gelu == a/2 (1 + erf(a/sqrt 2))")
    call unary(x, "dt_silu", 9, g)
    call close_to(g, a / (1 + exp(-a)), "dt_silu == a sigmoid(a)")
    call unary(x, "dt_pow", 10, g)
    call close_to(g, a**2, "dt_pow(a, 2) == a**2")
    call unary(x, "dt_fill", 11, g)
    call close_to(g, a * 0 + 3, "dt_fill(a, 3) == 3")
    call unary(x, "dt_log(dt_exp)", 12, g)
    call close_to(g, a, "dt_log(dt_exp(a)) == a")
    call unary(x, "dt_rsqrt(dt_exp)", 13, g)
    call close_to(g, 1 / sqrt(exp(a)), "dt_rsqrt(dt_exp(a)) == 1 / sqrt(exp(a))")
    call unary(x, "dt_minimum", 14, g)
    call close_to(g, min(a, -a), "dt_minimum(a, -a) == min(a, -a)")
    call unary(x, "dt_log_softmax", 15, g)
    do j = 1, K
      e(:, j) = a(:, j) - log(sum(exp(a(:, j))))
    end do
    call close_to(g, e, "dt_log_softmax over dim 1 == a - log(sum(exp(a), dim=1))")
    call unary(x, "dt_layer_norm", 16, g)
    do j = 1, K
      mu = sum(a(:, j)) / M
      var = sum((a(:, j) - mu)**2) / M
      ln(:, j) = (a(:, j) - mu) / sqrt(var + 1e-5_c_double)
    end do
    call close_to(g, ln, "dt_layer_norm over dim 1 (no w, b) == (a - mean) / sqrt(var + eps)")
    call unary(x, "dt_rms_norm", 17, g)
    do j = 1, K
      ln(:, j) = a(:, j) / sqrt(sum(a(:, j)**2) / M + 1e-5_c_double)
    end do
    call close_to(g, ln, "dt_rms_norm over dim 1 == a / sqrt(mean(a**2) + eps)")

    ! dropout: out = a * mask / (1 - p), the mask a U8 tensor (through c_loc)
    y = c_null_ptr
    mk = c_null_ptr
    call ok(dt_dropout(x, 0.5_c_double, y, mk), "dt_dropout p = 0.5 with a mask")
    call ok(dt_tensor_gather(y, g), "gather dropout")
    call ok(dt_tensor_gather(mk, c_loc(mask)), "gather the U8 mask (c_loc form)")
    call check(all(g == a * mask * 2) .and. all(mask == 0 .or. mask == 1) .and. any(mask == 0) .and. any(mask == 1), &
               "dropout == a * mask / (1 - p)")
    call dt_tensor_destroy(mk)
    call dt_tensor_destroy(y)
    y = c_null_ptr
    call ok(dt_dropout(x, 0.0_c_double, y), "dt_dropout p = 0, no mask")
    call ok(dt_tensor_gather(y, g), "gather")
    call check(all(g == a), "dropout p = 0 == a")
    call dt_tensor_destroy(y)

    ! dot of a 1-D tensor with itself -> 0-d (gathered through c_loc of a scalar)
    v6 = a(:, 1)
    td%ndim = 1
    td%shape(1) = M
    y = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, v6, DT_SRC_ALL, y), "distribute v")
    z = c_null_ptr
    call ok(dt_dot(y, y, z), "dt_dot")
    s0 = 0
    call ok(dt_tensor_gather(z, c_loc(s0)), "gather the 0-d dot")
    call check(abs(s0 - dot_product(v6, v6)) < 1e-12_c_double, "dt_dot(v, v) == dot_product(v, v)")
    call dt_tensor_destroy(z)
    call dt_tensor_destroy(y)

    ! linear: x(in, n), w(in, out), bias(out) -> matmul(transpose(w), x) + bias
    do j = 1, M
      do i = 1, IN
        xl(i, j) = i - 0.5_c_double * j
      end do
    end do
    do j = 1, NOUT
      do i = 1, IN
        wl(i, j) = 0.25_c_double * i * j - 1
      end do
      bl(j) = 100 * j
    end do
    do j = 1, M
      ref(:, j) = matmul(transpose(wl), xl(:, j)) + bl
    end do
    td%ndim = 2
    td%shape(1:2) = [IN, M]
    td%placements(1) = dt_shard(2)
    y = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, xl, DT_SRC_ALL, y), "distribute x(in, n)")
    td%shape(1:2) = [IN, NOUT]
    td%placements(1) = dt_replicate()
    w = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, wl, DT_SRC_ALL, w), "distribute w(in, out)")
    td%ndim = 1
    td%shape(1) = NOUT
    bt = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, bl, DT_SRC_ALL, bt), "distribute bias")
    z = c_null_ptr
    call ok(dt_linear(y, w, bt, z), "dt_linear")
    call ok(dt_tensor_gather(z, yl), "gather linear")
    call check(all(abs(yl - ref) < 1e-11_c_double), "dt_linear == matmul(transpose(w), x) + bias")
    call dt_tensor_destroy(z)
    call dt_tensor_destroy(bt)
    call dt_tensor_destroy(w)
    call dt_tensor_destroy(y)

    ! embedding: table(D, V), 0-based idx -> table(:, idx + 1)
    do j = 1, V
      do i = 1, D
        table(i, j) = 10 * j + i
      end do
    end do
    idx = [4, 0, 2, 2]
    td%ndim = 2
    td%shape(1:2) = [D, V]
    td%placements(1) = dt_shard(2)
    w = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, table, DT_SRC_ALL, w), "distribute the table (row-sharded)")
    td%dtype = DT_I64
    td%ndim = 1
    td%shape(1) = 4
    td%placements(1) = dt_replicate()
    y = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, idx, DT_SRC_ALL, y), "distribute the indices")
    z = c_null_ptr
    call ok(dt_embedding(w, y, z), "dt_embedding")
    call ok(dt_tensor_gather(z, emb), "gather embedding")
    call check(all(emb == table(:, idx + 1)), "dt_embedding == table(:, idx + 1)")
    call dt_tensor_destroy(z)
    call dt_tensor_destroy(y)
    call dt_tensor_destroy(w)

    ! cross-entropy: logits(C, N), 0-based targets(N)
    do j = 1, NB
      do i = 1, NC
        logits(i, j) = 0.5_c_double * i * j - i
      end do
    end do
    tgt = [1, 3, 0]
    s0 = 0
    do j = 1, NB
      s0 = s0 - (logits(tgt(j) + 1, j) - log(sum(exp(logits(:, j)))))
    end do
    s0 = s0 / NB
    td%dtype = DT_F64
    td%ndim = 2
    td%shape(1:2) = [NC, NB]
    td%placements(1) = dt_shard(1)       ! class-sharded
    w = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, logits, DT_SRC_ALL, w), "distribute the logits")
    td%dtype = DT_I64
    td%ndim = 1
    td%shape(1) = NB
    td%placements(1) = dt_replicate()
    y = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, tgt, DT_SRC_ALL, y), "distribute the targets")
    z = c_null_ptr
    call ok(dt_cross_entropy(w, y, z), "dt_cross_entropy")
    loss = 0
    call ok(dt_tensor_gather(z, c_loc(loss)), "gather the loss")
    call check(abs(loss - s0) < 1e-12_c_double, "dt_cross_entropy == mean(-log_softmax(logits)(target))")
    call dt_tensor_destroy(z)
    call dt_tensor_destroy(y)
    call dt_tensor_destroy(w)

    ! conv3d, no padding, sharded along the first spatial dim
    do kk = 1, 3
      do jj = 1, 3
        do ii = 1, 3
          x3(ii, jj, kk, 1, 1) = ii + 3 * jj - kk * kk
        end do
      end do
    end do
    do l = 1, 2
      do q = 1, 2
        do p = 1, 2
          w3(p, q, l, 1, 1) = p - 2 * q + 4 * l
        end do
      end do
    end do
    r3 = 0
    do kk = 1, 2
      do jj = 1, 2
        do ii = 1, 2
          do l = 1, 2
            do q = 1, 2
              do p = 1, 2
                r3(ii, jj, kk, 1, 1) = r3(ii, jj, kk, 1, 1) + w3(p, q, l, 1, 1) * x3(ii + p - 1, jj + q - 1, kk + l - 1, 1, 1)
              end do
            end do
          end do
        end do
      end do
    end do
    td%dtype = DT_F64
    td%ndim = 5
    td%shape(1:5) = [3, 3, 3, 1, 1]
    td%placements(1) = dt_shard(1)
    y = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, c_loc(x3), DT_SRC_ALL, y), "distribute x3 (rank 5: the c_loc form)")
    td%shape(1:5) = [2, 2, 2, 1, 1]
    td%placements(1) = dt_replicate()
    w = c_null_ptr
    call ok(dt_tensor_distribute(mesh, td, c_loc(w3), DT_SRC_ALL, w), "distribute w3")
    cd%padding = 0
    cd%dilation = 0
    z = c_null_ptr
    call ok(dt_conv3d(y, w, c_null_ptr, cd, z), "dt_conv3d")
    call ok(dt_tensor_gather(z, c_loc(y3)), "gather conv3d")
    call check(all(abs(y3 - r3) < 1e-11_c_double), "dt_conv3d == the direct sum")
    call dt_tensor_destroy(z)
    call dt_tensor_destroy(w)
    call dt_tensor_destroy(y)

    ! dt_layout_indices at this rank's coordinate == its offset onward
    td%ndim = 2
    td%shape(1:2) = [M, K]
    td%placements(1) = dt_shard(1)
    call check(dt_mesh_coordinate(mesh, coord) == 1, "mesh coordinate")
    call ok(dt_layout(mesh, td, coord, ls, off), "dt_layout")
    call ok(dt_layout_indices(mesh, td, coord, 1_c_int, li), "dt_layout_indices")
    call check(all(li(1:ls(1)) == [(off(1) + i - 1, i = 1, int(ls(1)))]), "dt_layout_indices along Fortran dim 1")

    ! the RNG state through a file: the same numbers again
    if (rank == 0) write (path, '(a,i0,a)') "/tmp/dt_test_fortran_rng_", int(mod(epoch_ms(), 1000000000_8)), ".json"
    call MPI_Bcast(path, len(path), MPI_CHARACTER, 0, MPI_COMM_WORLD)
    call ok(dt_rng_save_state(mesh, trim(path)), "dt_rng_save_state")
    y = c_null_ptr
    call ok(dt_tensor_randn(mesh, td, y), "dt_tensor_randn")
    call ok(dt_tensor_gather(y, g), "gather randn")
    call ok(dt_rng_load_state(mesh, trim(path)), "dt_rng_load_state")
    z = c_null_ptr
    call ok(dt_tensor_randn(mesh, td, z), "dt_tensor_randn again")
    call ok(dt_tensor_gather(z, e), "gather")
    call check(all(g == e) .and. minval(g) < 0 .and. maxval(g) > 0, "the loaded state draws the same normals")
    if (rank == 0) then
      open (newunit=i, file=trim(path), status="old")
      close (i, status="delete")
    end if
    call dt_tensor_destroy(z)
    call dt_tensor_destroy(y)
    st = dt_rng_load_state(mesh, "/nonexistent/dt_rng.json")
    msg = dt_last_error()
    call check(st == DT_ERR_IO .and. index(msg, "/nonexistent/dt_rng.json") > 0, "a missing state file: DT_ERR_IO: " // msg)

    ! odds and ends of the mesh and comm
    call ok(dt_comm_set_shm(comm, 0_c_int), "dt_comm_set_shm off")
    call check(dt_comm_set_shm(comm, 5_c_int) == DT_ERR_ARG, "dt_comm_set_shm(5): DT_ERR_ARG")
    call ok(dt_comm_set_shm(comm, -1_c_int), "dt_comm_set_shm back to the environment")
    call check(dt_mesh_op_cache_count(mesh) > 0, "dt_mesh_op_cache_count: the ops above are cached")
    call ok(dt_mesh_trim(mesh), "dt_mesh_trim")
    on = dt_get_checks()
    call dt_set_checks(1_c_int)
    call check(dt_get_checks() == 1, "dt_get_checks after dt_set_checks(1)")
    call dt_set_checks(on)
    call dt_tensor_destroy(x)
    call dt_clear_error()
  end subroutine test_more_ops

  ! test_more_ops' unary op number `which` of x (or of x's exp / negation), gathered into g
  subroutine unary(x, name, which, g)
    type(c_ptr), intent(in) :: x
    character(len=*), intent(in) :: name
    integer, intent(in) :: which
    real(c_double), intent(out), target :: g(:, :)
    type(c_ptr) :: r, tmp
    integer(c_int) :: s
    r = c_null_ptr
    tmp = c_null_ptr
    select case (which)
    case (1); s = dt_neg(x, r)
    case (2); s = dt_exp(x, r)
    case (3); s = dt_sin(x, r)
    case (4); s = dt_cos(x, r)
    case (5); s = dt_tanh(x, r)
    case (6); s = dt_sigmoid(x, r)
    case (7); s = dt_relu(x, r)
    case (8); s = dt_gelu(x, r)
    case (9); s = dt_silu(x, r)
    case (10); s = dt_pow(x, 2.0_c_double, r)
    case (11); s = dt_fill(x, 3.0_c_double, r)
    case (12)
      s = dt_exp(x, tmp)
      if (s == DT_OK) s = dt_log(tmp, r)
    case (13)
      s = dt_exp(x, tmp)
      if (s == DT_OK) s = dt_rsqrt(tmp, r)
    case (14)
      s = dt_neg(x, tmp)
      if (s == DT_OK) s = dt_minimum(x, tmp, r)
    case (15); s = dt_log_softmax(x, 1_c_int, r)
    case (16); s = dt_layer_norm(x, c_null_ptr, c_null_ptr, 1e-5_c_double, r)
    case default; s = dt_rms_norm(x, c_null_ptr, 1e-5_c_double, r)
    end select
    call ok(s, name)
    g = huge(1.0_c_double)
    if (s == DT_OK) call ok(dt_tensor_gather(r, g), "gather " // name)
    if (c_associated(r)) call dt_tensor_destroy(r)
    if (c_associated(tmp)) call dt_tensor_destroy(tmp)
  end subroutine unary

  subroutine close_to(g, want, what)
    real(c_double), intent(in) :: g(:, :), want(:, :)
    character(len=*), intent(in) :: what
    call check(all(abs(g - want) <= 1e-12_c_double * max(1.0_c_double, abs(want))), what)
  end subroutine close_to

  ! ---- dtensor_layers.h: the tensor-parallel layers through the module ----
  ! Every result against a serial reference computed here with matmul() on
  ! the global arrays (inputs from a closed form, the weights read back with
  ! dt_tensor_gather); 7 inputs, 5 outputs / hidden units: shards of 3, 3, 1
  ! and 2, 2, 1 at 3 ranks, an empty one at 4.
  subroutine test_layers()
    character(kind=c_char), target :: ntp(3) = ['t', 'p', c_null_char], ndp(3) = ['d', 'p', c_null_char]
    type(dt_mesh_desc) :: d2
    type(c_ptr) :: m2
    integer :: ndp_size
    call test_tp_linear(DT_TP_COLWISE)
    call test_tp_linear(DT_TP_ROWWISE)
    call test_tp_linear_f32()
    call test_tp_mlp()
    ! a [tp, dp] mesh: tp named (not the last dim), dp = 2 where the ranks split evenly
    ndp_size = merge(2, 1, mod(nranks, 2) == 0)
    d2%ndim = 2
    d2%shape(1:2) = [nranks / ndp_size, ndp_size]
    d2%names(1) = c_loc(ntp)
    d2%names(2) = c_loc(ndp)
    m2 = c_null_ptr
    call ok(dt_mesh_create(comm, d2, m2), "layers: a [tp, dp] mesh")
    call test_tp_sequence_parallel(m2, c_loc(ntp))
    call test_tp_mlp_gelu(m2, c_loc(ntp))
    call test_tp_errors(m2, c_loc(ntp))
    call dt_mesh_destroy(m2)
  end subroutine test_layers

  ! element k (0-based) of input `salt`: a closed form in [-1, 1]
  pure real(c_double) function cv(k, salt)
    integer, intent(in) :: k, salt
    cv = sin(0.7_c_double * k + 1.3_c_double * salt + 0.1_c_double) * &
         (0.5_c_double + 0.5_c_double * cos(0.11_c_double * k * (salt + 1)))
  end function cv

  ! n closed-form values of input `salt`
  pure function cvs(n, salt) result(v)
    integer, intent(in) :: n, salt
    real(c_double) :: v(n)
    integer :: k
    v = [(cv(k, salt), k = 0, n - 1)]
  end function cvs

  ! |got - want| <= tol * max(1, max|want|), elementwise (arrays flattened with [a])
  subroutine near(got, want, tol, what)
    real(c_double), intent(in) :: got(:), want(:)
    real(c_double), intent(in) :: tol
    character(len=*), intent(in) :: what
    real(c_double) :: scale
    scale = max(1.0_c_double, maxval(abs(want)))
    call check(size(got) == size(want), what // " (sizes)")
    if (size(got) == size(want)) then
      if (any(abs(got - want) > tol * scale)) print '(a,i0,2a,es10.2)', "[", rank, "] ", what, &
           maxval(abs(got - want))
      call check(all(abs(got - want) <= tol * scale), what)
    end if
  end subroutine near

  ! a desc of a Fortran-order tensor: dtype, shape, the placements of mesh dims 0 (and 1)
  function tp_desc(dtype, sh, p0, p1) result(td)
    integer(c_int), intent(in) :: dtype
    integer, intent(in) :: sh(:)
    type(dt_placement), intent(in) :: p0
    type(dt_placement), intent(in), optional :: p1
    type(dt_tensor_desc) :: td
    td%dtype = dtype
    td%ndim = size(sh)
    td%shape(1:size(sh)) = sh
    td%placements(1) = p0
    if (present(p1)) td%placements(2) = p1
  end function tp_desc

  ! p is Shard(dim) (dim > 0), or Replicate (dim = 0)
  logical function is_pl(p, dim)
    type(dt_placement), intent(in) :: p
    integer, intent(in) :: dim
    if (dim == 0) then
      is_pl = p%kind == DT_KIND_REPLICATE
    else
      is_pl = p%kind == DT_KIND_SHARD .and. p%dim == dim
    end if
  end function is_pl

  ! t's Fortran shape is sh and its placement on mesh dim 0 is Shard(dim0) / Replicate (0)
  subroutine spec_is(t, sh, dim0, what)
    type(c_ptr), intent(in) :: t
    integer, intent(in) :: sh(:), dim0
    character(len=*), intent(in) :: what
    type(dt_tensor_desc) :: td
    call ok(dt_tensor_get_desc(t, td), what // ": get_desc")
    call check(td%ndim == size(sh) .and. all(td%shape(1:size(sh)) == sh) .and. is_pl(td%placements(1), dim0), what)
  end subroutine spec_is

  ! colwise or rowwise, F64, bias, x(7, 3) in the layer's input placement:
  ! forward, backward (dx, dW, db), sgd, zero_grad and a backward without dx
  subroutine test_tp_linear(style)
    integer(c_int), intent(in) :: style
    integer, parameter :: NI = 7, NO = 5, NB = 3
    real(c_double) :: x(NI, NB), dy(NO, NB), w(NI, NO), b(NO), y(NO, NB), dx(NI, NB), gw(NI, NO), gb(NO)
    real(c_double) :: w2(NI, NO), b2(NO), bound
    type(dt_tp_linear_desc) :: ld
    type(dt_placement) :: pin, pout
    type(c_ptr) :: l, xt, dyt, yt, dxt
    character(len=16) :: name
    integer :: fdim
    name = merge("tp colwise", "tp rowwise", style == DT_TP_COLWISE)
    fdim = merge(2, 1, style == DT_TP_COLWISE)   ! W's Shard dim: the outputs (colwise), the inputs
    l = c_null_ptr; xt = c_null_ptr; dyt = c_null_ptr; yt = c_null_ptr; dxt = c_null_ptr
    ld%style = style
    ld%in_features = NI
    ld%out_features = NO
    ld%dtype = DT_F64
    call ok(dt_tp_linear_create(mesh, ld, l), trim(name) // ": create")
    pin = dt_tp_linear_input_placement(l)
    pout = dt_tp_linear_output_placement(l)
    if (style == DT_TP_COLWISE) then
      call check(is_pl(pin, 0) .and. is_pl(pout, 1), "colwise: x Replicate, y Shard(1) (the features)")
    else
      call check(is_pl(pin, 1) .and. is_pl(pout, 0), "rowwise: x Shard(1) (the features), y Replicate")
    end if
    call spec_is(dt_tp_linear_weight(l), [NI, NO], fdim, trim(name) // ": w(in, out), Shard on tp")
    call spec_is(dt_tp_linear_bias(l), [NO], merge(1, 0, style == DT_TP_COLWISE), trim(name) // ": b(out)")
    call spec_is(dt_tp_linear_grad_weight(l), [NI, NO], fdim, trim(name) // ": grad w: w's spec")
    w = huge(1.0_c_double)
    b = huge(1.0_c_double)
    call ok(dt_tensor_gather(dt_tp_linear_weight(l), w), trim(name) // ": gather w")
    call ok(dt_tensor_gather(dt_tp_linear_bias(l), b), trim(name) // ": gather b")
    bound = 1 / sqrt(real(NI, c_double))
    call check(all(abs(w) <= bound) .and. all(abs(b) <= bound) .and. 2 * count(w /= 0) > NI * NO, &
               trim(name) // ": nn.Linear's init, |w|, |b| <= 1/sqrt(in)")
    x = reshape(cvs(NI * NB, 1), [NI, NB])
    dy = reshape(cvs(NO * NB, 2), [NO, NB])
    call ok(dt_tensor_distribute(mesh, tp_desc(DT_F64, [NI, NB], pin), x, DT_SRC_ALL, xt), trim(name) // ": x")
    call ok(dt_tp_linear_forward(l, xt, yt), trim(name) // ": forward")
    call spec_is(yt, [NO, NB], merge(1, 0, style == DT_TP_COLWISE), trim(name) // ": y(out, batch), the output placement")
    y = huge(1.0_c_double)
    call ok(dt_tensor_gather(yt, y), trim(name) // ": gather y")
    call near([y], [matmul(transpose(w), x) + spread(b, 2, NB)], 1e-12_c_double, &
              trim(name) // ": y == matmul(transpose(w), x) + b")
    call ok(dt_tensor_distribute(mesh, tp_desc(DT_F64, [NO, NB], dt_replicate()), dy, DT_SRC_ALL, dyt), &
            trim(name) // ": dy")
    call ok(dt_tp_linear_backward(l, xt, dyt, dxt), trim(name) // ": backward")
    call spec_is(dxt, [NI, NB], merge(0, 1, style == DT_TP_COLWISE), trim(name) // ": dx has x's spec")
    dx = huge(1.0_c_double)
    gw = huge(1.0_c_double)
    gb = huge(1.0_c_double)
    call ok(dt_tensor_gather(dxt, dx), trim(name) // ": gather dx")
    call ok(dt_tensor_gather(dt_tp_linear_grad_weight(l), gw), trim(name) // ": gather dW")
    call ok(dt_tensor_gather(dt_tp_linear_grad_bias(l), gb), trim(name) // ": gather db")
    call near([dx], [matmul(w, dy)], 1e-12_c_double, trim(name) // ": dx == matmul(w, dy)")
    call near([gw], [matmul(x, transpose(dy))], 1e-12_c_double, trim(name) // ": dW == matmul(x, transpose(dy))")
    call near(gb, sum(dy, 2), 1e-12_c_double, trim(name) // ": db == sum(dy, 2)")
    call ok(dt_tp_linear_sgd(l, 0.5_c_double), trim(name) // ": sgd")
    call ok(dt_tensor_gather(dt_tp_linear_weight(l), w2), trim(name) // ": gather w after sgd")
    call ok(dt_tensor_gather(dt_tp_linear_bias(l), b2), trim(name) // ": gather b after sgd")
    call near([w2], [w - 0.5_c_double * matmul(x, transpose(dy))], 1e-12_c_double, trim(name) // ": sgd: w - lr dW")
    call near(b2, b - 0.5_c_double * sum(dy, 2), 1e-12_c_double, trim(name) // ": sgd: b - lr db")
    call ok(dt_tp_linear_zero_grad(l), trim(name) // ": zero_grad")
    call ok(dt_tensor_gather(dt_tp_linear_grad_weight(l), gw), trim(name) // ": gather dW after zero_grad")
    call check(all(gw == 0), trim(name) // ": zero_grad zeroes dW")
    call ok(dt_tp_linear_backward(l, xt, dyt), trim(name) // ": backward without dx")
    call ok(dt_tensor_gather(dt_tp_linear_grad_weight(l), gw), trim(name) // ": gather dW (no dx)")
    call near([gw], [matmul(x, transpose(dy))], 1e-12_c_double, trim(name) // ": dW again (no dx)")
    call dt_tensor_destroy(dxt)
    call dt_tensor_destroy(dyt)
    call dt_tensor_destroy(yt)
    call dt_tensor_destroy(xt)
    call dt_tp_linear_destroy(l)
  end subroutine test_tp_linear

  ! F32, DT_TP_INIT_ZEROS: the weights zero; filled from Fortran (a tensor of
  ! w's spec redistributed into it), the forward against matmul in real(4)
  subroutine test_tp_linear_f32()
    integer, parameter :: NI = 7, NO = 5, NB = 4
    real(c_float) :: x(NI, NB), w(NI, NO), b(NO), y(NO, NB)
    type(dt_tp_linear_desc) :: ld
    type(dt_tensor_desc) :: wd, bd
    type(c_ptr) :: l, xt, yt, tmp, wt, bt
    l = c_null_ptr; xt = c_null_ptr; yt = c_null_ptr; tmp = c_null_ptr
    ld%in_features = NI                  ! style and dtype left at their defaults: colwise, F32
    ld%out_features = NO
    ld%init = DT_TP_INIT_ZEROS
    call ok(dt_tp_linear_create(mesh, ld, l), "f32 colwise: create")
    w = 1
    b = 1
    call ok(dt_tensor_gather(dt_tp_linear_weight(l), w), "f32: gather w")
    call ok(dt_tensor_gather(dt_tp_linear_bias(l), b), "f32: gather b")
    call check(all(w == 0) .and. all(b == 0), "DT_TP_INIT_ZEROS: w and b zero")
    w = reshape(real(cvs(NI * NO, 3), c_float), [NI, NO])
    b = real(cvs(NO, 4), c_float)
    call ok(dt_tensor_get_desc(dt_tp_linear_weight(l), wd), "f32: w's desc")
    call ok(dt_tensor_get_desc(dt_tp_linear_bias(l), bd), "f32: b's desc")
    call check(wd%dtype == DT_F32, "f32: w is DT_F32")
    call ok(dt_tensor_distribute(mesh, wd, w, DT_SRC_ALL, tmp), "f32: a tensor of w's spec")
    wt = dt_tp_linear_weight(l)
    call ok(dt_tensor_redistribute(tmp, wd%placements, wt), "f32: into the layer's w")
    call check(c_associated(wt, dt_tp_linear_weight(l)), "f32: the layer's w filled in place")
    call dt_tensor_destroy(tmp)
    tmp = c_null_ptr
    call ok(dt_tensor_distribute(mesh, bd, b, DT_SRC_ALL, tmp), "f32: a tensor of b's spec")
    bt = dt_tp_linear_bias(l)
    call ok(dt_tensor_redistribute(tmp, bd%placements, bt), "f32: into the layer's b")
    call dt_tensor_destroy(tmp)
    x = reshape(real(cvs(NI * NB, 5), c_float), [NI, NB])
    call ok(dt_tensor_distribute(mesh, tp_desc(DT_F32, [NI, NB], dt_replicate()), x, DT_SRC_ALL, xt), "f32: x")
    call ok(dt_tp_linear_forward(l, xt, yt), "f32: forward")
    y = huge(1.0_c_float)
    call ok(dt_tensor_gather(yt, y), "f32: gather y")
    call near(real([y], c_double), real([matmul(transpose(w), x) + spread(b, 2, NB)], c_double), 1e-5_c_double, &
              "f32: y == matmul(transpose(w), x) + b (real(4))")
    call dt_tensor_destroy(yt)
    call dt_tensor_destroy(xt)
    call dt_tp_linear_destroy(l)
  end subroutine test_tp_linear_f32

  ! the serial MLP: y = w2' act(w1' x + b1) + b2, and from dy the gradients and dx
  subroutine mlp_ref(act, x, w1, b1, w2, b2, dy, y, dx, gw1, gb1, gw2, gb2)
    integer(c_int), intent(in) :: act
    real(c_double), intent(in) :: x(:, :), w1(:, :), b1(:), w2(:, :), b2(:), dy(:, :)
    real(c_double), intent(out) :: y(:, :), dx(:, :), gw1(:, :), gb1(:), gw2(:, :), gb2(:)
    real(c_double), allocatable :: h(:, :), a(:, :), da(:, :), g(:, :)
    real(c_double), parameter :: PI = 3.14159265358979323846_c_double
    h = matmul(transpose(w1), x) + spread(b1, 2, size(x, 2))
    if (act == DT_TP_GELU) then
      a = h / 2 * (1 + erf(h / sqrt(2.0_c_double)))
      da = erfc(-h / sqrt(2.0_c_double)) / 2 + h * exp(-h * h / 2) / sqrt(2 * PI)
    else
      a = max(h, 0.0_c_double)
      da = merge(1.0_c_double, 0.0_c_double, h > 0)
    end if
    y = matmul(transpose(w2), a) + spread(b2, 2, size(x, 2))
    gw2 = matmul(a, transpose(dy))
    gb2 = sum(dy, 2)
    g = matmul(w2, dy) * da
    gw1 = matmul(x, transpose(g))
    gb1 = sum(g, 2)
    dx = matmul(w1, g)
  end subroutine mlp_ref

  ! relu MLP, F64, bias, out_features 0 (= in), x(7, 3) Replicate: forward,
  ! backward, sgd, zero_grad, a backward without dx
  subroutine test_tp_mlp()
    integer, parameter :: NI = 7, NH = 5, NB = 3
    real(c_double) :: x(NI, NB), dy(NI, NB), w1(NI, NH), b1(NH), w2(NH, NI), b2(NI)
    real(c_double) :: y(NI, NB), dx(NI, NB), gw1(NI, NH), gb1(NH), gw2(NH, NI), gb2(NI)
    real(c_double) :: ry(NI, NB), rdx(NI, NB), rgw1(NI, NH), rgb1(NH), rgw2(NH, NI), rgb2(NI)
    type(dt_tp_mlp_desc) :: md2
    type(c_ptr) :: mlp, fc1, fc2, xt, dyt, yt, dxt
    mlp = c_null_ptr; xt = c_null_ptr; dyt = c_null_ptr; yt = c_null_ptr; dxt = c_null_ptr
    md2%in_features = NI
    md2%hidden_features = NH
    md2%dtype = DT_F64
    md2%dropout = 0.5_c_double          ! not training below: no dropout
    call ok(dt_tp_mlp_create(mesh, md2, mlp), "mlp: create")
    fc1 = dt_tp_mlp_fc1(mlp)
    fc2 = dt_tp_mlp_fc2(mlp)
    call spec_is(dt_tp_linear_weight(fc1), [NI, NH], 2, "mlp: fc1 colwise w1(in, hidden) Shard(2)")
    call spec_is(dt_tp_linear_weight(fc2), [NH, NI], 1, "mlp: fc2 rowwise w2(hidden, out = in) Shard(1)")
    call ok(dt_tensor_gather(dt_tp_linear_weight(fc1), w1), "mlp: gather w1")
    call ok(dt_tensor_gather(dt_tp_linear_bias(fc1), b1), "mlp: gather b1")
    call ok(dt_tensor_gather(dt_tp_linear_weight(fc2), w2), "mlp: gather w2")
    call ok(dt_tensor_gather(dt_tp_linear_bias(fc2), b2), "mlp: gather b2")
    x = reshape(cvs(NI * NB, 6), [NI, NB])
    dy = reshape(cvs(NI * NB, 7), [NI, NB])
    call mlp_ref(DT_TP_RELU, x, w1, b1, w2, b2, dy, ry, rdx, rgw1, rgb1, rgw2, rgb2)
    call ok(dt_tensor_distribute(mesh, tp_desc(DT_F64, [NI, NB], dt_replicate()), x, DT_SRC_ALL, xt), "mlp: x")
    call ok(dt_tensor_distribute(mesh, tp_desc(DT_F64, [NI, NB], dt_replicate()), dy, DT_SRC_ALL, dyt), "mlp: dy")
    call ok(dt_tp_mlp_forward(mlp, xt, 0_c_int, yt), "mlp: forward")
    call ok(dt_tensor_gather(yt, y), "mlp: gather y")
    call near([y], [ry], 1e-12_c_double, "mlp: y == w2' relu(w1' x + b1) + b2")
    call ok(dt_tp_mlp_backward(mlp, xt, dyt, dxt), "mlp: backward")
    call ok(dt_tensor_gather(dxt, dx), "mlp: gather dx")
    call ok(dt_tensor_gather(dt_tp_linear_grad_weight(fc1), gw1), "mlp: gather dW1")
    call ok(dt_tensor_gather(dt_tp_linear_grad_bias(fc1), gb1), "mlp: gather db1")
    call ok(dt_tensor_gather(dt_tp_linear_grad_weight(fc2), gw2), "mlp: gather dW2")
    call ok(dt_tensor_gather(dt_tp_linear_grad_bias(fc2), gb2), "mlp: gather db2")
    call near([dx], [rdx], 1e-12_c_double, "mlp: dx")
    call near([gw1], [rgw1], 1e-12_c_double, "mlp: dW1")
    call near(gb1, rgb1, 1e-12_c_double, "mlp: db1")
    call near([gw2], [rgw2], 1e-12_c_double, "mlp: dW2")
    call near(gb2, rgb2, 1e-12_c_double, "mlp: db2")
    call ok(dt_tp_mlp_sgd(mlp, 0.25_c_double), "mlp: sgd")
    call ok(dt_tensor_gather(dt_tp_linear_weight(fc1), gw1), "mlp: gather w1 after sgd")
    call ok(dt_tensor_gather(dt_tp_linear_bias(fc2), gb2), "mlp: gather b2 after sgd")
    call near([gw1], [w1 - 0.25_c_double * rgw1], 1e-12_c_double, "mlp: sgd: w1 - lr dW1")
    call near(gb2, b2 - 0.25_c_double * rgb2, 1e-12_c_double, "mlp: sgd: b2 - lr db2")
    call ok(dt_tp_mlp_zero_grad(mlp), "mlp: zero_grad")
    call ok(dt_tensor_gather(dt_tp_linear_grad_weight(fc2), gw2), "mlp: gather dW2 after zero_grad")
    call check(all(gw2 == 0), "mlp: zero_grad zeroes dW2")
    call ok(dt_tp_mlp_backward(mlp, xt, dyt), "mlp: backward without dx")
    call ok(dt_tensor_gather(dt_tp_linear_grad_weight(fc2), gw2), "mlp: gather dW2 (no dx)")
    call near([gw2], [rgw2], 1e-12_c_double, "mlp: dW2 again (no dx; it does not depend on w2)")
    call dt_tensor_destroy(dxt)
    call dt_tensor_destroy(yt)
    call dt_tensor_destroy(dyt)
    call dt_tensor_destroy(xt)
    call dt_tp_mlp_destroy(mlp)
  end subroutine test_tp_mlp

  ! On the [tp, dp] mesh, tp named: a rowwise layer with sequence
  ! parallelism (seq_dim 0: Fortran dim 2), no bias, accumulated gradients,
  ! x(7, 5, 2) Shard(3) on dp (data parallel: dW summed over dp); and a
  ! colwise one with seq_dim 3, x(7, 2, 5) Shard(3) on tp
  subroutine test_tp_sequence_parallel(m2, tpname)
    type(c_ptr), intent(in) :: m2, tpname
    integer, parameter :: NI = 7, NO = 5, NS = 5, NB = 2
    real(c_double) :: x(NI, NS, NB), dy(NO, NS, NB), w(NI, NO), y(NO, NS, NB), dx(NI, NS, NB), gw(NI, NO)
    real(c_double) :: x2(NI, NS * NB), dy2(NO, NS * NB)
    real(c_double) :: xc(NI, NB, NS), wc(NI, NO), yc(NO, NB, NS)
    type(dt_tp_linear_desc) :: ld
    type(dt_tensor_desc) :: td
    type(c_ptr) :: l, xt, dyt, yt, dxt
    l = c_null_ptr; xt = c_null_ptr; dyt = c_null_ptr; yt = c_null_ptr; dxt = c_null_ptr
    ld%style = DT_TP_ROWWISE
    ld%in_features = NI
    ld%out_features = NO
    ld%dtype = DT_F64
    ld%no_bias = 1
    ld%tp_dim = tpname
    ld%sequence_parallel = 1
    ld%accumulate_grads = 1
    call ok(dt_tp_linear_create(m2, ld, l), "sp rowwise: create")
    call check(.not. c_associated(dt_tp_linear_bias(l)) .and. .not. c_associated(dt_tp_linear_grad_bias(l)), &
               "no_bias: no b, no db")
    call check(is_pl(dt_tp_linear_input_placement(l), 1) .and. is_pl(dt_tp_linear_output_placement(l), 2), &
               "sp rowwise: x Shard(1), y Shard(2) (seq_dim 0 is Fortran dim 2)")
    call ok(dt_tensor_get_desc(dt_tp_linear_weight(l), td), "sp rowwise: w's desc")
    call check(is_pl(td%placements(1), 1) .and. is_pl(td%placements(2), 0), &
               "tp_dim ""tp"" (mesh dim 0): w Shard(1) there, Replicate on dp")
    call ok(dt_tensor_gather(dt_tp_linear_weight(l), w), "sp rowwise: gather w")
    x = reshape(cvs(NI * NS * NB, 8), [NI, NS, NB])
    dy = reshape(cvs(NO * NS * NB, 9), [NO, NS, NB])
    x2 = reshape(x, [NI, NS * NB])
    dy2 = reshape(dy, [NO, NS * NB])
    call ok(dt_tensor_distribute(m2, tp_desc(DT_F64, [NI, NS, NB], dt_shard(1), dt_shard(3)), x, DT_SRC_ALL, xt), &
            "sp rowwise: x")
    call ok(dt_tp_linear_forward(l, xt, yt), "sp rowwise: forward")
    call ok(dt_tensor_get_desc(yt, td), "sp rowwise: y's desc")
    call check(td%ndim == 3 .and. all(td%shape(1:3) == [NO, NS, NB]) .and. is_pl(td%placements(1), 2) .and. &
               is_pl(td%placements(2), 3), "sp rowwise: y(5, 5, 2) Shard(2) on tp (a reduce-scatter), x's Shard(3) on dp")
    call ok(dt_tensor_gather(yt, y), "sp rowwise: gather y")
    call near([y], [matmul(transpose(w), x2)], 1e-12_c_double, "sp rowwise: y == matmul(transpose(w), x)")
    call ok(dt_tensor_distribute(m2, td, dy, DT_SRC_ALL, dyt), "sp rowwise: dy with y's spec")
    call ok(dt_tp_linear_backward(l, xt, dyt, dxt), "sp rowwise: backward")
    call ok(dt_tp_linear_backward(l, xt, dyt, dxt), "sp rowwise: backward again (dx reused)")
    call ok(dt_tensor_gather(dxt, dx), "sp rowwise: gather dx")
    call ok(dt_tensor_gather(dt_tp_linear_grad_weight(l), gw), "sp rowwise: gather dW")
    call near([dx], [matmul(w, dy2)], 1e-12_c_double, "sp rowwise: dx == matmul(w, dy)")
    call near([gw], [2 * matmul(x2, transpose(dy2))], 1e-12_c_double, &
              "sp rowwise: accumulate_grads: dW == twice matmul(x, transpose(dy)), summed over dp")
    call dt_tensor_destroy(dxt)
    call dt_tensor_destroy(dyt)
    call dt_tensor_destroy(yt)
    call dt_tensor_destroy(xt)
    call dt_tp_linear_destroy(l)

    l = c_null_ptr; xt = c_null_ptr; yt = c_null_ptr; dxt = c_null_ptr
    ld = dt_tp_linear_desc()
    ld%in_features = NI
    ld%out_features = NO
    ld%dtype = DT_F64
    ld%no_bias = 1
    ld%tp_dim = tpname
    ld%sequence_parallel = 1
    ld%seq_dim = 3
    call ok(dt_tp_linear_create(m2, ld, l), "sp colwise seq_dim 3: create")
    call check(is_pl(dt_tp_linear_input_placement(l), 3) .and. is_pl(dt_tp_linear_output_placement(l), 1), &
               "sp colwise: x Shard(3) (seq_dim 3), y Shard(1)")
    call ok(dt_tensor_gather(dt_tp_linear_weight(l), wc), "sp colwise: gather w")
    xc = reshape(cvs(NI * NB * NS, 10), [NI, NB, NS])
    call ok(dt_tensor_distribute(m2, tp_desc(DT_F64, [NI, NB, NS], dt_shard(3)), xc, DT_SRC_ALL, xt), "sp colwise: x")
    call ok(dt_tp_linear_forward(l, xt, yt), "sp colwise: forward (an allgather of x)")
    call spec_is(yt, [NO, NB, NS], 1, "sp colwise: y(5, 2, 5) Shard(1)")
    call ok(dt_tensor_gather(yt, yc), "sp colwise: gather y")
    call near([yc], [matmul(transpose(wc), reshape(xc, [NI, NB * NS]))], 1e-12_c_double, &
              "sp colwise: y == matmul(transpose(w), x)")
    call dt_tensor_destroy(yt)
    call dt_tensor_destroy(xt)
    call dt_tp_linear_destroy(l)
  end subroutine test_tp_sequence_parallel

  ! GELU, out_features 3, no bias, sequence parallel: x(7, 5, 2) Shard(2) on
  ! tp of the [tp, dp] mesh, y(3, 5, 2) Shard(2); y, dx and both dW
  subroutine test_tp_mlp_gelu(m2, tpname)
    type(c_ptr), intent(in) :: m2, tpname
    integer, parameter :: NI = 7, NH = 5, NO = 3, NS = 5, NB = 2, M = NS * NB
    real(c_double) :: x(NI, NS, NB), dy(NO, NS, NB), w1(NI, NH), w2(NH, NO), zh(NH), zo(NO)
    real(c_double) :: y(NO, NS, NB), dx(NI, NS, NB), gw1(NI, NH), gw2(NH, NO)
    real(c_double) :: ry(NO, M), rdx(NI, M), rgw1(NI, NH), rgb1(NH), rgw2(NH, NO), rgb2(NO)
    type(dt_tp_mlp_desc) :: md2
    type(c_ptr) :: mlp, xt, dyt, yt, dxt
    mlp = c_null_ptr; xt = c_null_ptr; dyt = c_null_ptr; yt = c_null_ptr; dxt = c_null_ptr
    md2%in_features = NI
    md2%hidden_features = NH
    md2%out_features = NO
    md2%dtype = DT_F64
    md2%activation = DT_TP_GELU
    md2%no_bias = 1
    md2%tp_dim = tpname
    md2%sequence_parallel = 1
    call ok(dt_tp_mlp_create(m2, md2, mlp), "gelu mlp: create")
    call check(.not. c_associated(dt_tp_linear_bias(dt_tp_mlp_fc1(mlp))) .and. &
               .not. c_associated(dt_tp_linear_bias(dt_tp_mlp_fc2(mlp))), "gelu mlp: no_bias")
    call ok(dt_tensor_gather(dt_tp_linear_weight(dt_tp_mlp_fc1(mlp)), w1), "gelu mlp: gather w1")
    call ok(dt_tensor_gather(dt_tp_linear_weight(dt_tp_mlp_fc2(mlp)), w2), "gelu mlp: gather w2(hidden, 3)")
    x = reshape(cvs(NI * M, 11), [NI, NS, NB])
    dy = reshape(cvs(NO * M, 12), [NO, NS, NB])
    zh = 0
    zo = 0
    call mlp_ref(DT_TP_GELU, reshape(x, [NI, M]), w1, zh, w2, zo, reshape(dy, [NO, M]), ry, rdx, rgw1, rgb1, rgw2, rgb2)
    call ok(dt_tensor_distribute(m2, tp_desc(DT_F64, [NI, NS, NB], dt_shard(2)), x, DT_SRC_ALL, xt), "gelu mlp: x")
    call ok(dt_tensor_distribute(m2, tp_desc(DT_F64, [NO, NS, NB], dt_shard(2)), dy, DT_SRC_ALL, dyt), "gelu mlp: dy")
    call ok(dt_tp_mlp_forward(mlp, xt, 1_c_int, yt), "gelu mlp: forward (training, dropout 0)")
    call spec_is(yt, [NO, NS, NB], 2, "gelu mlp: y(3, 5, 2) Shard(2)")
    call ok(dt_tensor_gather(yt, y), "gelu mlp: gather y")
    call near([y], [ry], 1e-12_c_double, "gelu mlp: y == w2' gelu(w1' x)")
    call ok(dt_tp_mlp_backward(mlp, xt, dyt, dxt), "gelu mlp: backward")
    call spec_is(dxt, [NI, NS, NB], 2, "gelu mlp: dx Shard(2), x's spec")
    call ok(dt_tensor_gather(dxt, dx), "gelu mlp: gather dx")
    call ok(dt_tensor_gather(dt_tp_linear_grad_weight(dt_tp_mlp_fc1(mlp)), gw1), "gelu mlp: gather dW1")
    call ok(dt_tensor_gather(dt_tp_linear_grad_weight(dt_tp_mlp_fc2(mlp)), gw2), "gelu mlp: gather dW2")
    call near([dx], [rdx], 1e-12_c_double, "gelu mlp: dx")
    call near([gw1], [rgw1], 1e-12_c_double, "gelu mlp: dW1 (through gelu')")
    call near([gw2], [rgw2], 1e-12_c_double, "gelu mlp: dW2")
    call dt_tensor_destroy(dxt)
    call dt_tensor_destroy(yt)
    call dt_tensor_destroy(dyt)
    call dt_tensor_destroy(xt)
    call dt_tp_mlp_destroy(mlp)
  end subroutine test_tp_mlp_gelu

  ! refusals: the status, nothing made, the message naming the call, in
  ! Fortran order (shapes as given, Shard dims 1..ndim, desc%seq_dim)
  subroutine test_tp_errors(m2, tpname)
    type(c_ptr), intent(in) :: m2, tpname
    character(kind=c_char), target :: nope(5) = ['n', 'o', 'p', 'e', c_null_char]
    real(c_double) :: x(7, 3), xw(8, 3), dyw(5, 4), x3(7, 5, 2)
    integer(c_int64_t) :: s(8)
    type(dt_tp_linear_desc) :: ld, bad
    type(dt_tp_mlp_desc) :: md2
    type(dt_tensor_desc) :: td
    type(dt_placement) :: p
    type(dt_mesh_desc) :: mdesc
    type(dt_halo_desc) :: hd
    type(c_ptr) :: l, l2, mlp, xt, xwt, dywt, yt, x3t
    integer(c_int) :: st
    character(len=:), allocatable :: msg
    l = c_null_ptr; l2 = c_null_ptr; mlp = c_null_ptr; xt = c_null_ptr; xwt = c_null_ptr; dywt = c_null_ptr
    yt = c_null_ptr; x3t = c_null_ptr
    x = 1
    xw = 1
    dyw = 1
    x3 = 1
    ld%in_features = 7
    ld%out_features = 5
    ld%dtype = DT_F64
    call ok(dt_tp_linear_create(mesh, ld, l), "errors: a colwise layer")
    call ok(dt_tensor_distribute(mesh, tp_desc(DT_F64, [7, 3], dt_replicate()), x, DT_SRC_ALL, xt), "errors: x")
    call ok(dt_tensor_distribute(mesh, tp_desc(DT_F64, [8, 3], dt_replicate()), xw, DT_SRC_ALL, xwt), "errors: x(8, 3)")
    call ok(dt_tensor_distribute(mesh, tp_desc(DT_F64, [5, 4], dt_replicate()), dyw, DT_SRC_ALL, dywt), &
            "errors: dy(5, 4)")

    ! a null layer; its accessors give null
    st = dt_tp_linear_forward(c_null_ptr, xt, yt)
    msg = dt_last_error()
    call check(st == DT_ERR_ARG .and. .not. c_associated(yt) .and. index(msg, "dt_tp_linear_forward") == 1 .and. &
               index(msg, "NULL") > 0, "forward of a null layer: DT_ERR_ARG, naming the call: " // msg)
    call check(.not. c_associated(dt_tp_linear_weight(c_null_ptr)) .and. .not. c_associated(dt_tp_mlp_fc1(c_null_ptr)), &
               "the accessors of a null layer: null")
    call check(dt_tp_linear_sgd(c_null_ptr, 0.1_c_double) == DT_ERR_ARG .and. dt_tp_mlp_zero_grad(c_null_ptr) == DT_ERR_ARG, &
               "sgd / zero_grad of null: DT_ERR_ARG")
    call check(dt_tp_linear_backward(l, c_null_ptr, xt) == DT_ERR_ARG, "backward of a null x: DT_ERR_ARG")
    ! the features: x(8, 3) for a layer of 7 inputs, the error hook called once
    handled = 0
    call dt_set_error_handler(c_funloc(on_error), c_null_ptr)
    st = dt_tp_linear_forward(l, xwt, yt)
    call dt_set_error_handler(c_null_funptr, c_null_ptr)
    msg = dt_last_error()
    call check(st == DT_ERR_SHAPE .and. .not. c_associated(yt) .and. index(msg, "x has shape [8, 3]") > 0 .and. &
               index(msg, "[7, ...]") > 0, "x(8, 3) into 7 features: DT_ERR_SHAPE in Fortran order: " // msg)
    call check(handled == 1 .and. handled_call == "dt_tp_linear_forward" .and. handled_st == DT_ERR_SHAPE, &
               "the error hook: once, dt_tp_linear_forward, DT_ERR_SHAPE; got: " // handled_call)
    if (allocated(handled_call)) deallocate(handled_call)
    ! dy's batch dims are not x's
    st = dt_tp_linear_backward(l, xt, dywt, yt)
    msg = dt_last_error()
    call check(st == DT_ERR_SHAPE .and. .not. c_associated(yt) .and. index(msg, "dy has shape [5, 4], x has [7, 3]") > 0, &
               "dy(5, 4) for x(7, 3): DT_ERR_SHAPE in Fortran order: " // msg)
    ! a *y of the wrong spec
    call ok(dt_tensor_distribute(mesh, tp_desc(DT_F64, [5, 4], dt_shard(1)), dyw, DT_SRC_ALL, yt), "errors: a wrong y")
    st = dt_tp_linear_forward(l, xt, yt)
    msg = dt_last_error()
    call check(st == DT_ERR_SHAPE .and. index(msg, "*y has shape [5, 4], the result has [5, 3]") > 0, &
               "a *y of shape (5, 4): DT_ERR_SHAPE: " // msg)
    call dt_tensor_destroy(yt)
    yt = c_null_ptr
    ! bad descs
    bad = ld
    bad%in_features = 0
    st = dt_tp_linear_create(mesh, bad, l2)
    msg = dt_last_error()
    call check(st == DT_ERR_ARG .and. .not. c_associated(l2) .and. index(msg, "in_features = 0") > 0, &
               "in_features 0: DT_ERR_ARG: " // msg)
    bad = ld
    bad%seq_dim = -1
    st = dt_tp_linear_create(mesh, bad, l2)
    msg = dt_last_error()
    call check(st == DT_ERR_ARG .and. .not. c_associated(l2) .and. index(msg, "desc%seq_dim = -1") > 0, &
               "seq_dim -1: DT_ERR_ARG (a Fortran dim, not from the end): " // msg)
    bad = ld
    bad%tp_dim = c_loc(nope)
    st = dt_tp_linear_create(m2, bad, l2)
    msg = dt_last_error()
    call check(st == DT_ERR_MESH .and. .not. c_associated(l2) .and. index(msg, '"nope"') > 0 .and. &
               index(msg, '"tp"') > 0, "tp_dim ""nope"": DT_ERR_MESH naming the mesh's dims: " // msg)
    md2%in_features = 7
    md2%hidden_features = 5
    md2%dtype = DT_F64
    md2%dropout = 1.5_c_double
    st = dt_tp_mlp_create(mesh, md2, mlp)
    msg = dt_last_error()
    call check(st == DT_ERR_ARG .and. .not. c_associated(mlp) .and. index(msg, "dropout = 1.5") > 0, &
               "mlp dropout 1.5: DT_ERR_ARG: " // msg)
    ! sequence parallel with seq_dim 1, the features; then a feature dim sharded on dp
    bad = ld
    bad%tp_dim = tpname
    bad%sequence_parallel = 1
    bad%seq_dim = 1
    call ok(dt_tp_linear_create(m2, bad, l2), "errors: an sp layer with seq_dim 1")
    call ok(dt_tensor_distribute(m2, tp_desc(DT_F64, [7, 5, 2], dt_replicate(), dt_shard(1)), x3, DT_SRC_ALL, x3t), &
            "errors: x(7, 5, 2) Shard(1) on dp")
    st = dt_tp_linear_forward(l2, x3t, yt)
    msg = dt_last_error()
    call check(st == DT_ERR_SHAPE .and. .not. c_associated(yt) .and. index(msg, "seq_dim 1 is not a batch dim") > 0 .and. &
               index(msg, "[7, 5, 2]") > 0, "seq_dim 1 (the features): DT_ERR_SHAPE, Fortran's dim: " // msg)
    call dt_tp_linear_destroy(l2)
    l2 = c_null_ptr
    bad%sequence_parallel = 0
    bad%seq_dim = 0
    call ok(dt_tp_linear_create(m2, bad, l2), "errors: a layer on [tp, dp]")
    st = dt_tp_linear_forward(l2, x3t, yt)
    msg = dt_last_error()
    call check(st == DT_ERR_PLACEMENT .and. .not. c_associated(yt) .and. index(msg, "x is [R, S(1)]") > 0, &
               "the feature dim Shard(1) on dp: DT_ERR_PLACEMENT, Fortran's Shard dim: " // msg)
    call dt_tp_linear_destroy(l2)
    l2 = c_null_ptr
    ! an MLP's backward before its forward
    md2%dropout = 0
    call ok(dt_tp_mlp_create(mesh, md2, mlp), "errors: an MLP")
    st = dt_tp_mlp_backward(mlp, xt, xt)
    msg = dt_last_error()
    call check(st == DT_ERR_ARG .and. index(msg, "dt_tp_mlp_backward") == 1 .and. index(msg, "no forward") > 0, &
               "mlp backward before forward: DT_ERR_ARG: " // msg)
    call dt_tp_mlp_destroy(mlp)
    mlp = c_null_ptr
    ! the start-up check told other desc sizes: the create calls refuse
    s = [int(c_sizeof(p), c_int64_t), int(c_sizeof(mdesc), c_int64_t), int(c_sizeof(td), c_int64_t), &
         int(c_sizeof(hd), c_int64_t), int(DT_MAX_DIMS, c_int64_t), int(DT_MAX_MESH_DIMS, c_int64_t), &
         int(c_sizeof(ld), c_int64_t) + 8, int(c_sizeof(md2), c_int64_t) + 8]
    call ok(dt_f_check_sizes(s, 8_c_int), "errors: dt_f_check_sizes with other layer desc sizes (dtensor.h's own match)")
    st = dt_tp_linear_create(mesh, ld, l2)
    msg = dt_last_error()
    call check(st == DT_ERR_ARG .and. .not. c_associated(l2) .and. index(msg, "sizeof dt_tp_linear_desc") > 0, &
               "a dt_tp_linear_desc size mismatch: DT_ERR_ARG naming it: " // msg)
    st = dt_tp_mlp_create(mesh, md2, mlp)
    msg = dt_last_error()
    call check(st == DT_ERR_ARG .and. .not. c_associated(mlp) .and. index(msg, "sizeof dt_tp_mlp_desc") > 0, &
               "a dt_tp_mlp_desc size mismatch: DT_ERR_ARG naming it: " // msg)
    call ok(dt_init(), "errors: dt_init again (the module's own sizes)")
    call ok(dt_tp_linear_create(mesh, ld, l2), "errors: create after dt_init")
    call dt_tp_linear_destroy(l2)
    call dt_tensor_destroy(x3t)
    call dt_tensor_destroy(dywt)
    call dt_tensor_destroy(xwt)
    call dt_tensor_destroy(xt)
    call dt_tp_linear_destroy(l)
    call dt_clear_error()
  end subroutine test_tp_errors

  ! milliseconds of the wall clock: a file name no other run uses at once
  integer(8) function epoch_ms()
    integer :: v(8)
    call date_and_time(values=v)
    epoch_ms = ((int(v(3), 8) * 24 + v(5)) * 60 + v(6)) * 60000_8 + v(7) * 1000_8 + v(8)
  end function epoch_ms

  ! the error hook's handler: counts and keeps the call's name and status
  subroutine on_error(st, call, msg, user) bind(C)
    integer(c_int), value :: st
    type(c_ptr), value :: call, msg, user
    handled = handled + 1
    handled_st = st
    handled_call = dt_f_string(call)
    if (len(dt_f_string(msg)) == 0 .or. c_associated(user)) handled = -100
  end subroutine on_error
end program test_fortran
