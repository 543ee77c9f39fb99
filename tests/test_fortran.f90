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
! Prints "PASS test_fortran np=N" on rank 0; exits 1 on any failure.
program test_fortran
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use dtensor
  implicit none
  integer, parameter :: NX = 7, NY = 5
  integer :: rank, nranks, nfail = 0, ncheck = 0
  integer :: handled = 0, handled_st = 0
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
  call test_messages_in_fortran_order()
  call test_redistribute_begin_end()

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
