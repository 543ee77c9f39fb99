! heat2d.f90 -- examples/heat2d.c in Fortran 2008 through `use dtensor`:
! the explicit heat equation on a 2-D mesh, the code's own ghosted arrays,
! halo exchange by the library, a checkpoint, a restart on another rank
! count, and the final field compared bit for bit with a serial run.
!
!     make build/mpich/heat2d_f && mpiexec.mpich -n 4 ./build/mpich/heat2d_f
!     mpicc -c -x c -DDTENSOR_IMPLEMENTATION dtensor.h -o dtensor_impl.o
!     mpif90 dtensor.f90 examples/heat2d.f90 dtensor_impl.o -lblis -lm -o heat2d_f
!
!     ./heat2d_f [--nx NX] [--ny NY] [--steps S] [--at K] [--ckpt PATH] [--keep]
!
! The field u(NX, NY) (default 256 x 192, F64) is split over a near-square
! P0 x P1 mesh of all ranks with placements [Shard(1), Shard(2)] (Fortran
! dims: mesh dim 0 splits x, mesh dim 1 splits y). Each rank OWNS two
! arrays u(0:lx+1, 0:ly+1) with one ghost cell on every side (allocated
! here, not by the library) and updates them with its own loop:
!     v(i,j) = u(i,j) + r * (((u(i-1,j) + u(i+1,j)) + (u(i,j-1) + u(i,j+1))) - 4 u(i,j)),  r = 0.2
! periodic along x (dim 1), u = 0 just outside y (dim 2). The library gives
!  - the layout: dt_layout, this rank's lx x ly block and its offset;
!  - the exchange: each array wrapped once in place (dt_tensor_from_local,
!    DT_FLAG_BORROW, local_ghost = [1, 1], the array itself: its kind is
!    checked against the desc's dtype, and no copy is made of it) with
!    a halo of width 1; dt_halo_exchange_begin, the inner cells, _end, the
!    rim: the ghost cells are written in the array itself;
!  - the checkpoint: dt_tensor_save_npy of the ghosted tensor at step K
!    (the interior only);
!  - the restart: a 1-D mesh of ranks 1 .. n-1 (rank 0 outside it, with
!    empty arrays; one rank: itself) with [Shard(2)], whose own ghosted
!    arrays are filled by dt_tensor_load_npy in place, runs steps K .. S;
!  - dt_tensor_gather of both final fields.
! Rank 0 also runs the serial loop on the whole field. Every cell's value
! is the same five operands in the same order wherever the shard edges
! are, so the uninterrupted run, the restarted run and the serial run must
! be bitwise identical: "identical: yes", else exit status 1.
program heat2d_f
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use dtensor
  implicit none
  real(c_double), parameter :: R = 0.2_c_double, PI = 3.14159265358979323846_c_double

  ! a rank's field: two ghosted arrays, each wrapped as a tensor with a halo
  type :: field
    real(c_double), pointer :: a(:, :) => null(), b(:, :) => null()
    type(c_ptr) :: ta = c_null_ptr, tb = c_null_ptr
    integer(c_int64_t) :: lx = 0, ly = 0, off(2) = 0
  end type field

  integer :: wrank, wsize, i, nr, p0, p1
  integer(c_int64_t) :: nx = 256, ny = 192
  integer :: steps = 100, at = 60
  logical :: keep = .false., same
  character(len=512) :: ckpt = "", arg
  integer(c_int64_t) :: stamp
  type(c_ptr) :: comm = c_null_ptr, m2 = c_null_ptr, m1 = c_null_ptr
  type(dt_mesh_desc) :: md
  type(dt_placement) :: pl2(DT_MAX_MESH_DIMS), pl1(DT_MAX_MESH_DIMS)
  integer(c_int), allocatable, target :: ranks(:)
  real(c_double), allocatable, target :: full_a(:, :), full_b(:, :), serial(:, :)
  type(field) :: f
  double precision :: t0, t_a, t_b

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, wrank)
  call MPI_Comm_size(MPI_COMM_WORLD, wsize)
  i = 1
  do while (i <= command_argument_count())
    call get_command_argument(i, arg)
    select case (arg)
    case ("--nx"); nx = int_arg(i + 1); i = i + 1
    case ("--ny"); ny = int_arg(i + 1); i = i + 1
    case ("--steps"); steps = int(int_arg(i + 1)); i = i + 1
    case ("--at"); at = int(int_arg(i + 1)); i = i + 1
    case ("--ckpt"); call get_command_argument(i + 1, ckpt); i = i + 1
    case ("--keep"); keep = .true.
    case default
      if (wrank == 0) print '(a)', "usage: heat2d_f [--nx N] [--ny N] [--steps S] [--at K] [--ckpt PATH] [--keep]"
      call MPI_Finalize()
      stop 2
    end select
    i = i + 1
  end do
  if (nx < 1 .or. ny < 1 .or. at < 0 .or. at > steps) error stop "heat2d_f: bad sizes or steps"
  if (len_trim(ckpt) == 0) then    ! one path for every rank: rank 0's clock
    call system_clock(stamp)
    call MPI_Bcast(stamp, 1, MPI_INTEGER8, 0, MPI_COMM_WORLD)
    write (ckpt, '(a,i0,a)') "/tmp/heat2d_f-", stamp, ".npy"
  end if

  call chk(dt_comm_mpi(MPI_COMM_WORLD, comm), "dt_comm_mpi")
  ! a 2-D mesh of all ranks, P0 >= P1
  p1 = 1
  do i = 1, wsize
    if (i * i > wsize) exit
    if (mod(wsize, i) == 0) p1 = i
  end do
  p0 = wsize / p1
  md%ndim = 2
  md%shape(1:2) = [p0, p1]
  call chk(dt_mesh_create(comm, md, m2), "dt_mesh_create (2-D)")
  pl2(1) = dt_shard(1)     ! mesh dim 0 splits x (Fortran dim 1)
  pl2(2) = dt_shard(2)     ! mesh dim 1 splits y (Fortran dim 2)

  allocate(full_a(nx, ny), full_b(nx, ny))

  ! (a) uninterrupted on the 2-D mesh, saving at step `at` as it passes
  call field_make(f, m2, pl2)
  call field_initial(f)
  t0 = MPI_Wtime()
  call run_steps(f, at)
  call chk(dt_tensor_save_npy(f%ta, trim(ckpt)), "dt_tensor_save_npy")   ! ghosted: the interior is saved
  call run_steps(f, steps - at)
  t_a = MPI_Wtime() - t0
  call chk(dt_tensor_gather(f%ta, full_a), "dt_tensor_gather (a)")
  call field_free(f)

  ! (b) a restart on a 1-D mesh of ranks 1 .. n-1, [Shard(2)]: y slabs
  nr = max(wsize - 1, 1)
  allocate(ranks(nr))
  ranks = [(merge(i, 0, wsize > 1), i = 1, nr)]
  md = dt_mesh_desc()
  md%ndim = 1
  md%shape(1) = nr
  md%ranks = c_loc(ranks)
  call chk(dt_mesh_create(comm, md, m1), "dt_mesh_create (1-D)")
  pl1(1) = dt_shard(2)
  call field_make(f, m1, pl1)           ! rank 0 outside m1 (n > 1): empty arrays
  call chk(dt_tensor_load_npy(m1, trim(ckpt), 2_c_int, pl1, f%ta), "dt_tensor_load_npy")  ! into our own array
  t0 = MPI_Wtime()
  call run_steps(f, steps - at)
  t_b = MPI_Wtime() - t0
  call chk(dt_tensor_gather(f%ta, full_b), "dt_tensor_gather (b)")   ! on m1's ranks
  if (wsize > 1) then                   ! m1's first rank (world rank 1) -> world rank 0
    if (wrank == 1) call MPI_Send(full_b, int(nx * ny), MPI_DOUBLE_PRECISION, 0, 7, MPI_COMM_WORLD)
    if (wrank == 0) call MPI_Recv(full_b, int(nx * ny), MPI_DOUBLE_PRECISION, 1, 7, MPI_COMM_WORLD, &
                                  MPI_STATUS_IGNORE)
  end if
  call field_free(f)

  ! (c) both against the serial run, bit for bit (times: the slowest rank's)
  call MPI_Allreduce(MPI_IN_PLACE, t_a, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
  call MPI_Allreduce(MPI_IN_PLACE, t_b, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
  same = .true.
  if (wrank == 0) then
    allocate(serial(0:nx + 1, 0:ny + 1))
    call serial_run(serial)
    same = all(full_a == serial(1:nx, 1:ny)) .and. all(full_b == serial(1:nx, 1:ny))
    print '(a,i0,a,i0,a,f0.1,a,i0,a)', "heat2d_f: ", nx, " x ", ny, " F64, r = ", R, &
         ", periodic in x (dim 1), u = 0 outside y (dim 2), ", steps, " steps"
    print '(a,i0,a,i0,a,i0,a,f0.3,a,i0,2a)', "  (a) mesh ", p0, " x ", p1, " [Shard(1), Shard(2)], steps 0 .. ", &
         steps, ": ", 1e3 * t_a / max(steps, 1), " ms/step; saved step ", at, " to ", trim(ckpt)
    print '(a,i0,a,i0,a,i0,a,f0.3,a)', "  (b) restart on a 1-D mesh of ", nr, " rank(s) [Shard(2)], steps ", at, &
         " .. ", steps, ": ", 1e3 * t_b / max(steps - at, 1), " ms/step"
    print '(a,es24.16,a,es24.16)', "  sum ", sum(full_a), "  max ", maxval(full_a)
    print '(a,a)', "  identical (a) = (b) = serial: ", merge("yes", "no ", same)
    if (.not. keep) then
      open (newunit=i, file=trim(ckpt), status="old")
      close (i, status="delete")
    end if
  end if
  call MPI_Bcast(same, 1, MPI_LOGICAL, 0, MPI_COMM_WORLD)
  call dt_mesh_destroy(m1)
  call dt_mesh_destroy(m2)
  call dt_comm_destroy(comm)
  call MPI_Finalize()
  if (.not. same) stop 1

contains

  subroutine chk(st, what)
    integer(c_int), intent(in) :: st
    character(len=*), intent(in) :: what
    if (st == DT_OK) return
    print '(a,i0,5a)', "[", wrank, "] ", what, " failed: ", dt_status_string(st), ": " // dt_last_error()
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine chk

  integer(c_int64_t) function int_arg(k)
    integer, intent(in) :: k
    character(len=64) :: s
    call get_command_argument(k, s)
    read (s, *) int_arg
  end function int_arg

  pure real(c_double) function u0(i, j)
    integer(c_int64_t), intent(in) :: i, j       ! 1-based global cell
    real(c_double) :: x, y, g
    x = (i - 0.5_c_double) / nx
    y = (j - 0.5_c_double) / ny
    g = exp(-((x - 0.3_c_double)**2 + (y - 0.6_c_double)**2) / 0.005_c_double)
    u0 = 10 * g + sin(2 * PI * x) * sin(PI * y)
  end function u0

  ! the 5-point update of cells [i0, i1] x [j0, j1] (interior indices), the
  ! one loop every run uses (serial, inner cells, rim)
  subroutine heat(u, v, i0, i1, j0, j1)
    real(c_double), intent(in) :: u(0:, 0:)
    real(c_double), intent(inout) :: v(0:, 0:)
    integer(c_int64_t), intent(in) :: i0, i1, j0, j1
    integer(c_int64_t) :: i, j
    do j = j0, j1
      do i = i0, i1
        v(i, j) = u(i, j) + R * (((u(i - 1, j) + u(i + 1, j)) + (u(i, j - 1) + u(i, j + 1))) - 4 * u(i, j))
      end do
    end do
  end subroutine heat

  ! the arrays for [nx, ny] with placements pl on mesh m: shape and offset
  ! from dt_layout (0 x 0 outside m), wrapped in place with their halos
  subroutine field_make(f, m, pl)
    type(field), intent(out) :: f
    type(c_ptr), intent(in) :: m
    type(dt_placement), intent(in) :: pl(DT_MAX_MESH_DIMS)
    integer(c_int64_t), target, save :: ghost(2) = [1, 1]
    type(dt_tensor_desc) :: td
    type(dt_halo_desc) :: h
    integer(c_int) :: coord(DT_MAX_MESH_DIMS)
    integer(c_int64_t), target :: ls(2)
    td%dtype = DT_F64
    td%ndim = 2
    td%shape(1:2) = [nx, ny]
    td%placements = pl
    ls = 0
    if (dt_mesh_coordinate(m, coord) /= 0) call chk(dt_layout(m, td, coord, ls, f%off), "dt_layout")
    f%lx = ls(1)
    f%ly = ls(2)
    allocate(f%a(0:f%lx + 1, 0:f%ly + 1), f%b(0:f%lx + 1, 0:f%ly + 1))
    f%a = 0
    f%b = 0
    td%local_ghost = c_loc(ghost)         ! `local` is the array's start
    td%local_shape = c_loc(ls)            ! the interior, checked against the rule
    td%local_alloc_bytes = 8 * size(f%a, kind=c_int64_t)   ! each array: where it lies
    td%local_alloc = c_loc(f%a)
    h%width(1:2) = 1
    h%boundary(1) = int(DT_BOUNDARY_PERIODIC, c_int8_t)   ! x wraps around
    h%boundary(2) = int(DT_BOUNDARY_CONSTANT, c_int8_t)   ! y: u = 0 outside
    call chk(dt_tensor_from_local(m, td, f%a, DT_FLAG_BORROW, f%ta), "dt_tensor_from_local (a)")
    td%local_alloc = c_loc(f%b)
    call chk(dt_tensor_from_local(m, td, f%b, DT_FLAG_BORROW, f%tb), "dt_tensor_from_local (b)")
    call chk(dt_tensor_set_halo(f%ta, h), "dt_tensor_set_halo (a)")
    call chk(dt_tensor_set_halo(f%tb, h), "dt_tensor_set_halo (b)")
  end subroutine field_make

  subroutine field_free(f)
    type(field), intent(inout) :: f
    call dt_tensor_destroy(f%ta)
    call dt_tensor_destroy(f%tb)
    deallocate(f%a, f%b)
  end subroutine field_free

  subroutine field_initial(f)
    type(field), intent(inout) :: f
    integer(c_int64_t) :: i, j
    do j = 1, f%ly
      do i = 1, f%lx
        f%a(i, j) = u0(f%off(1) + i, f%off(2) + j)
      end do
    end do
  end subroutine field_initial

  ! one step: ghosts by the library, the update by our loop, split phase
  ! (inner cells while the messages fly, the rim after), then a swap
  subroutine step(f)
    type(field), intent(inout) :: f
    real(c_double), pointer :: p(:, :)
    type(c_ptr) :: t
    integer(c_int64_t) :: lx, ly
    lx = f%lx
    ly = f%ly
    call chk(dt_halo_exchange_begin(f%ta), "dt_halo_exchange_begin")
    call heat(f%a, f%b, 2_c_int64_t, lx - 1, 2_c_int64_t, ly - 1)
    call chk(dt_halo_exchange_end(f%ta), "dt_halo_exchange_end")
    if (ly > 0) call heat(f%a, f%b, 1_c_int64_t, lx, 1_c_int64_t, 1_c_int64_t)       ! the rim
    if (ly > 1) call heat(f%a, f%b, 1_c_int64_t, lx, ly, ly)
    if (ly > 2 .and. lx > 0) call heat(f%a, f%b, 1_c_int64_t, 1_c_int64_t, 2_c_int64_t, ly - 1)
    if (ly > 2 .and. lx > 1) call heat(f%a, f%b, lx, lx, 2_c_int64_t, ly - 1)
    p => f%a
    f%a => f%b
    f%b => p
    t = f%ta
    f%ta = f%tb
    f%tb = t
  end subroutine step

  subroutine run_steps(f, n)
    type(field), intent(inout) :: f
    integer, intent(in) :: n
    integer :: s
    do s = 1, n
      call step(f)
    end do
  end subroutine run_steps

  ! the same update on the whole field, ghosts by hand
  subroutine serial_run(u)
    real(c_double), intent(inout) :: u(0:, 0:)
    real(c_double), allocatable :: v(:, :)
    integer(c_int64_t) :: i, j
    integer :: s
    u = 0
    do j = 1, ny
      do i = 1, nx
        u(i, j) = u0(i, j)
      end do
    end do
    allocate(v(0:nx + 1, 0:ny + 1))
    v = 0
    do s = 1, steps
      u(0, 1:ny) = u(nx, 1:ny)       ! periodic in x
      u(nx + 1, 1:ny) = u(1, 1:ny)
      u(1:nx, 0) = 0                 ! u = 0 outside y
      u(1:nx, ny + 1) = 0
      call heat(u, v, 1_c_int64_t, nx, 1_c_int64_t, ny)
      u(1:nx, 1:ny) = v(1:nx, 1:ny)
    end do
  end subroutine serial_run
end program heat2d_f
