! swe_cgrid.f90 -- a staggered grid in Fortran through `use dtensor`: the
! linearised shallow-water equations on an Arakawa C grid with solid walls,
! the program's own ghosted arrays, three fields of three shapes exchanged
! together, the ghost depth chosen per exchange, and the result compared bit
! for bit with a serial run.
!
!     make build/mpich/swe_cgrid_f && mpiexec.mpich -n 4 ./build/mpich/swe_cgrid_f
!     ./swe_cgrid_f [--nx NX] [--ny NY] [--steps S]
!
! Why shallow water: it is the smallest system with a scalar and a vector
! field that a C grid staggers (the acoustic equations are the same system
! under other names), and with walls its discrete mass is conserved (in
! exact arithmetic: the fluxes telescope), which the program prints as a
! physics check.
!
!     dh/dt = -(du/dx + dv/dy),  du/dt = -dh/dx,  dv/dt = -dh/dy    (g = H = 1)
!
! on the unit square, NX x NY cells (default 160 x 120), a Gaussian bump of
! h at rest. The C grid: h at the cell centres, h(NX, NY); u on the x-faces,
! u(NX+1, NY) (face i is the west face of cell i); v on the y-faces,
! v(NX, NY+1). The walls are the edge faces: u = 0 on faces 1 and NX+1,
! v = 0 on faces 1 and NY+1, never updated. The scheme is forward-backward:
!     u -= cx (h(i) - h(i-1)),  v -= cy (h(j) - h(j-1)),  then with the new u, v
!     h -= cx (u(i+1) - u(i)) + cy (v(j+1) - v(j))     (cx = c dt/dx, cy = c dt/dy)
! A step needs one ghost layer of h and none of u, v: a part holds both
! faces of each of its cells. Two steps need two layers of h and one of u
! and v: steps go in pairs, the first one computed one layer into the
! ghosts, so the second needs no exchange -- half the messages (a "wide halo": fewer, larger exchanges).
!
! The library's part, on a near-square P0 x P1 mesh of all ranks:
!  - the layout: h is [dt_shard_balanced(1), dt_shard_balanced(2)] (dt_layout
!    gives the lx x ly cells and their offset); u is [dt_shard_points(1),
!    dt_shard_balanced(2)]: a dim of NX+1 points bounding NX cells, split as
!    the cells, so the parts line up cell for cell and each holds lx + 1
!    x-faces, the last one shared with the next part; v likewise along y;
!  - the wraps: h(-1:lx+2, -1:ly+2), u(-1:lx+3, -1:ly+2), v(-1:lx+2, -1:ly+3)
!    are this program's arrays, two ghost layers around each part
!    (local_ghost = [2, 2]), wrapped in place (dt_tensor_from_local,
!    DT_FLAG_BORROW: no copy); halos of width 2 for h and 1 for u and v, with
!    corners, DT_BOUNDARY_NONE: nothing outside the walls is ever read;
!  - a pair of steps: dt_halo_group_exchange of h, u and v together (one
!    message per neighbour: h's two layers, u's and v's one);
!  - a single step (the last one of an odd count): h alone, one layer of its
!    width-2 halo, dt_halo_exchange_layers(h, [1, 1]);
!  - dt_tensor_gather of the three fields, each point once, from its owner.
! Shared faces: a face on a part boundary is held by both parts; both
! COMPUTE it, from the same operands in the same order, so the copies agree
! without a message (the alternative: compute the owned faces only and call
! dt_tensor_sync_shared after each update). At the end the program calls
! dt_tensor_sync_shared on u and v and checks that it changed nothing.
! Rank 0 runs the same step routine on the whole grid (no library, no
! ghosts read); every value is the same operands in the same order at any
! rank count, so the gathered fields must equal it bitwise: "PASS", else
! "FAIL" and exit status 1.
program swe_cgrid_f
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use dtensor
  implicit none

  integer :: wrank, wsize, i, p0, p1, left
  integer(c_int64_t) :: nx = 160, ny = 120, lx, ly, ox, oy, npair
  integer :: steps = 201
  character(len=64) :: arg
  real(c_double) :: cx, cy, dt, mass0
  type(c_ptr) :: comm = c_null_ptr, mesh = c_null_ptr, grp = c_null_ptr
  type(c_ptr) :: tf(3)                  ! h, u, v as tensors (the group's members)
  type(dt_mesh_desc) :: md
  type(dt_tensor_desc) :: cells
  integer(c_int) :: coord(DT_MAX_MESH_DIMS)
  integer(c_int64_t) :: ls(2), off(2), one(2) = [1, 1]
  real(c_double), allocatable, target :: h(:, :), u(:, :), v(:, :), uc(:, :), vc(:, :)
  real(c_double), allocatable, target :: hf(:, :), uf(:, :), vf(:, :), hs(:, :), us(:, :), vs(:, :)
  logical :: synced, same
  double precision :: t0, t

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
    case default
      if (wrank == 0) print '(a)', "usage: swe_cgrid_f [--nx N] [--ny N] [--steps S]"
      call MPI_Finalize()
      stop 2
    end select
    i = i + 1
  end do
  if (nx < 1 .or. ny < 1 .or. steps < 0) error stop "swe_cgrid_f: bad sizes or steps"
  dt = 0.7_c_double / sqrt(real(nx * nx + ny * ny, c_double))   ! c dt sqrt(1/dx^2 + 1/dy^2) = 0.7 < 1
  cx = dt * nx
  cy = dt * ny

  call chk(dt_comm_mpi(MPI_COMM_WORLD, comm), "dt_comm_mpi")
  p1 = 1                                ! a 2-D mesh of all ranks, P0 >= P1
  do i = 1, wsize
    if (i * i > wsize) exit
    if (mod(wsize, i) == 0) p1 = i
  end do
  p0 = wsize / p1
  md%ndim = 2
  md%shape(1:2) = [p0, p1]
  call chk(dt_mesh_create(comm, md, mesh), "dt_mesh_create")

  ! this rank's cells: lx x ly from (ox, oy) on; its faces line up with them
  cells%dtype = DT_F64
  cells%ndim = 2
  cells%shape(1:2) = [nx, ny]
  cells%placements(1) = dt_shard_balanced(1)     ! mesh dim 0 splits x (Fortran dim 1)
  cells%placements(2) = dt_shard_balanced(2)     ! mesh dim 1 splits y
  if (dt_mesh_coordinate(mesh, coord) == 0) error stop "swe_cgrid_f: not in the mesh"
  call chk(dt_layout(mesh, cells, coord, ls, off), "dt_layout")
  lx = ls(1); ly = ls(2); ox = off(1); oy = off(2)
  allocate(h(-1:lx + 2, -1:ly + 2), u(-1:lx + 3, -1:ly + 2), v(-1:lx + 2, -1:ly + 3))
  call initial(h, u, v, ox, oy, lx, ly)

  call wrap(h, [nx, ny], dt_shard_balanced(1), dt_shard_balanced(2), [lx, ly], 2_c_int64_t, tf(1))
  call wrap(u, [nx + 1, ny], dt_shard_points(1), dt_shard_balanced(2), [lx + 1, ly], 1_c_int64_t, tf(2))
  call wrap(v, [nx, ny + 1], dt_shard_balanced(1), dt_shard_points(2), [lx, ly + 1], 1_c_int64_t, tf(3))
  call chk(dt_halo_group_create(tf, 3_c_int, grp), "dt_halo_group_create")

  t0 = MPI_Wtime()
  left = steps
  npair = 0
  do while (left >= 2)
    call chk(dt_halo_group_exchange(grp), "dt_halo_group_exchange")   ! h: 2 layers, u, v: 1
    call fb_step(h, u, v, ox, oy, lx, ly, 1_c_int64_t)   ! the part and one ghost layer around it
    call fb_step(h, u, v, ox, oy, lx, ly, 0_c_int64_t)   ! the part, from the layer just computed
    left = left - 2
    npair = npair + 1
  end do
  if (left == 1) then
    call chk(dt_halo_exchange_layers(tf(1), one), "dt_halo_exchange_layers")   ! h: 1 layer of its 2
    call fb_step(h, u, v, ox, oy, lx, ly, 0_c_int64_t)
  end if
  t = MPI_Wtime() - t0
  call MPI_Allreduce(MPI_IN_PLACE, t, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)

  ! the shared faces were computed by both parts: syncing them changes nothing
  uc = u
  vc = v
  call chk(dt_tensor_sync_shared(tf(2)), "dt_tensor_sync_shared (u)")
  call chk(dt_tensor_sync_shared(tf(3)), "dt_tensor_sync_shared (v)")
  synced = all(u == uc) .and. all(v == vc)
  call MPI_Allreduce(MPI_IN_PLACE, synced, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD)

  allocate(hf(nx, ny), uf(nx + 1, ny), vf(nx, ny + 1))
  call chk(dt_tensor_gather(tf(1), hf), "dt_tensor_gather (h)")
  call chk(dt_tensor_gather(tf(2), uf), "dt_tensor_gather (u)")
  call chk(dt_tensor_gather(tf(3), vf), "dt_tensor_gather (v)")

  same = .true.
  if (wrank == 0) then                  ! the serial run: the whole grid, the same routine
    allocate(hs(-1:nx + 2, -1:ny + 2), us(-1:nx + 3, -1:ny + 2), vs(-1:nx + 2, -1:ny + 3))
    call initial(hs, us, vs, 0_c_int64_t, 0_c_int64_t, nx, ny)
    mass0 = sum(hs(1:nx, 1:ny))
    do i = 1, steps
      call fb_step(hs, us, vs, 0_c_int64_t, 0_c_int64_t, nx, ny, 0_c_int64_t)
    end do
    same = all(hf == hs(1:nx, 1:ny)) .and. all(uf == us(1:nx + 1, 1:ny)) .and. all(vf == vs(1:nx, 1:ny + 1))
    print '(a,i0,a,i0,a,i0,a,f0.3,a,f0.3,a)', "swe_cgrid_f: ", nx, " x ", ny, " cells, shallow water on a C grid, walls, ", &
         steps, " steps (c dt/dx = ", cx, ", c dt/dy = ", cy, ")"
    print '(a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a)', "  mesh ", p0, " x ", p1, ": h (", nx, ", ", ny, &
         ") [S(1), S(2)], u (", nx + 1, ", ", ny, ") [S(1, points), S(2)], v (", nx, ", ", ny + 1, &
         ") [S(1), S(2, points)], ghosts [2, 2]"
    print '(a,i0,a,i0,a,f0.4,a)', "  ", npair, " step pairs (group h, u, v: depth 2, 1, 1), ", steps - 2 * npair, &
         " single (h alone: depth 1 of 2): ", 1e3 * t / max(steps, 1), " ms/step"
    print '(a,es24.16,a,es10.3,a,es10.3)', "  checksum sum(h) ", sum(hf), "  max|u| + max|v| ", &
         maxval(abs(uf)) + maxval(abs(vf)), "  mass drift ", abs(sum(hf) - mass0) / mass0
    print '(2a)', "  shared faces equal their owners' (dt_tensor_sync_shared changed nothing): ", merge("yes", "no ", synced)
    print '(2a)', "  identical to the serial run (h, u, v): ", merge("yes", "no ", same)
    same = same .and. synced
    print '(2a)', merge("PASS", "FAIL", same), " swe_cgrid_f"
  end if
  call MPI_Bcast(same, 1, MPI_LOGICAL, 0, MPI_COMM_WORLD)
  call dt_halo_group_destroy(grp)
  do i = 1, 3
    call dt_tensor_destroy(tf(i))
  end do
  call dt_mesh_destroy(mesh)
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

  ! wrap one of our arrays in place: global shape gs, placements (p1, p2),
  ! ls points held (a dim of points: the cells + 1), two ghost layers of room,
  ! a halo of `width` layers with corners
  subroutine wrap(a, gs, p1, p2, ls, width, t)
    real(c_double), intent(inout), target :: a(:, :)
    integer(c_int64_t), intent(in) :: gs(2), ls(2), width
    type(dt_placement), intent(in) :: p1, p2
    type(c_ptr), intent(out) :: t
    integer(c_int64_t), target :: lsh(2), ghost(2)
    type(dt_tensor_desc) :: td
    type(dt_halo_desc) :: hd
    td%dtype = DT_F64
    td%ndim = 2
    td%shape(1:2) = gs
    td%placements(1) = p1
    td%placements(2) = p2
    lsh = ls
    ghost = 2
    td%local_shape = c_loc(lsh)
    td%local_ghost = c_loc(ghost)
    t = c_null_ptr
    call chk(dt_tensor_from_local(mesh, td, a, DT_FLAG_BORROW, t), "dt_tensor_from_local")
    hd%width(1:2) = width
    hd%boundary(1:2) = int(DT_BOUNDARY_NONE, c_int8_t)  ! the walls are ours
    hd%corners = 1                                      ! the step one layer out reads them
    call chk(dt_tensor_set_halo(t, hd), "dt_tensor_set_halo")
  end subroutine wrap

  ! a bump of h at rest; u = v = 0 (the walls stay so)
  subroutine initial(h, u, v, ox, oy, lx, ly)
    real(c_double), intent(out) :: h(-1:, -1:), u(-1:, -1:), v(-1:, -1:)
    integer(c_int64_t), intent(in) :: ox, oy, lx, ly
    integer(c_int64_t) :: i, j
    real(c_double) :: x, y
    h = 0
    u = 0
    v = 0
    do j = 1, ly
      do i = 1, lx
        x = (ox + i - 0.5_c_double) / nx
        y = (oy + j - 0.5_c_double) / ny
        h(i, j) = 0.1_c_double * exp(-((x - 0.35_c_double)**2 + (y - 0.6_c_double)**2) / 0.01_c_double)
      end do
    end do
  end subroutine initial

  ! One forward-backward step of a part's cells and faces in local indices
  ! ((ox, oy): its first cell's global offset), e layers into the ghosts
  ! (e = 0: the part itself), clamped to the domain: the wall faces are
  ! never written and nothing outside the walls is read. e = 1 reads h two
  ! layers deep (u at face 0 needs h(-1)) and u, v one, corners included;
  ! e = 0 reads h one layer deep and no ghost of u or v. The serial run
  ! calls it with the whole grid, (0, 0, nx, ny, 0).
  subroutine fb_step(h, u, v, ox, oy, lx, ly, e)
    real(c_double), intent(inout) :: h(-1:, -1:), u(-1:, -1:), v(-1:, -1:)
    integer(c_int64_t), intent(in) :: ox, oy, lx, ly, e
    integer(c_int64_t) :: i, j
    do j = max(1 - e, 1 - oy), min(ly + e, ny - oy)              ! u on x-faces 2 .. nx
      do i = max(1 - e, 2 - ox), min(lx + 1 + e, nx - ox)
        u(i, j) = u(i, j) - cx * (h(i, j) - h(i - 1, j))
      end do
    end do
    do j = max(1 - e, 2 - oy), min(ly + 1 + e, ny - oy)          ! v on y-faces 2 .. ny
      do i = max(1 - e, 1 - ox), min(lx + e, nx - ox)
        v(i, j) = v(i, j) - cy * (h(i, j) - h(i, j - 1))
      end do
    end do
    do j = max(1 - e, 1 - oy), min(ly + e, ny - oy)              ! h on cells, from the new u, v
      do i = max(1 - e, 1 - ox), min(lx + e, nx - ox)
        h(i, j) = h(i, j) - (cx * (u(i + 1, j) - u(i, j)) + cy * (v(i, j + 1) - v(i, j)))
      end do
    end do
  end subroutine fb_step
end program swe_cgrid_f
