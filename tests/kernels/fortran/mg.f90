! Multigrid V-cycles with halo exchanges through derived datatypes (Fortran version
! of tests/kernels/c/mg.c).
!
! Solves -laplace(u) = 3 pi^2 sin(pi x) sin(pi y) sin(pi z) on the unit cube (u = 0 on
! its faces), N^3 cells split in blocks over a 3-D process grid. V-cycle: weighted
! Jacobi, residual, restriction (mean of 8 cells), recursion, trilinear prolongation,
! Jacobi; the coarsest level is smoothed many times. Halos of one cell: x planes as
! MPI_Type_create_subarray (MPI_ORDER_FORTRAN), y planes as MPI_Type_vector, z planes
! as MPI_Type_contiguous, dimension after dimension so edges and corners arrive too.
! Checks: residual down by 1e-9 within max_cycles, each cycle at least 3-fold, and the
! solution within the discretisation error (3e-3) of the analytic one.
! ranks: 1 2 4 8
include 'kernel_common.inc'

module mg_levels
  use kernel_common
  implicit none
  integer, parameter :: n = 32, max_levels = 10, max_cycles = 20, pre = 2, post = 2
  integer, parameter :: coarse_sweeps = 60
  real(dp), parameter :: omega = 6.0_dp / 7.0_dp ! damps high frequencies in 3-D
  type level
    integer :: nx, ny, nz
    real(dp) :: h
    real(dp), allocatable :: u(:, :, :), f(:, :, :), r(:, :, :)
    integer :: x_send_lo, x_send_hi, x_recv_lo, x_recv_hi, y_plane, z_plane
  end type
  type(level), target :: lv(max_levels)
  integer :: levels, dims(3), coords(3), lo_nb(3), hi_nb(3) ! dimension order x, y, z
contains
  ! Factors p into 3 dimensions, each prime factor going to the smallest dimension
  ! (x first on ties, as in the C version).
  subroutine grid3(p_in)
    integer, intent(in) :: p_in
    integer :: p, f, d, smallest
    dims = 1
    p = p_in
    f = 2
    do while (p > 1)
      if (mod(p, f) /= 0) then
        f = f + 1
        cycle
      end if
      smallest = 1
      do d = 2, 3
        if (dims(d) < dims(smallest)) smallest = d
      end do
      dims(smallest) = dims(smallest) * f
      p = p / f
    end do
  end subroutine

  subroutine make_types(L)
    type(level), intent(inout) :: L
    integer :: sizes(3), sub(3), starts(3), s, ierr, t(4)
    sizes = [L%nx + 2, L%ny + 2, L%nz + 2]
    sub = [1, L%ny + 2, L%nz + 2]
    do s = 1, 4
      starts = [merge(0, merge(1, merge(L%nx, L%nx + 1, s == 3), s == 2), s == 1), 0, 0]
      call MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_FORTRAN, &
                                    MPI_DOUBLE_PRECISION, t(s), ierr)
      call k_mpi(ierr, 'MPI_Type_create_subarray')
      call MPI_Type_commit(t(s), ierr)
    end do
    L%x_recv_lo = t(1); L%x_send_lo = t(2); L%x_send_hi = t(3); L%x_recv_hi = t(4)
    call MPI_Type_vector(L%nz + 2, L%nx + 2, (L%nx + 2) * (L%ny + 2), MPI_DOUBLE_PRECISION, &
                         L%y_plane, ierr)
    call k_mpi(ierr, 'MPI_Type_vector')
    call MPI_Type_commit(L%y_plane, ierr)
    call MPI_Type_contiguous((L%nx + 2) * (L%ny + 2), MPI_DOUBLE_PRECISION, L%z_plane, ierr)
    call k_mpi(ierr, 'MPI_Type_contiguous')
    call MPI_Type_commit(L%z_plane, ierr)
  end subroutine

  ! Refreshes v's halo: the neighbours' planes, and -v at the cube's faces.
  subroutine halo(l, v)
    integer, intent(in) :: l
    real(dp), intent(inout) :: v(0:, 0:, 0:)
    integer :: ierr, nx, ny, nz
    nx = lv(l)%nx; ny = lv(l)%ny; nz = lv(l)%nz
    call MPI_Sendrecv(v, 1, lv(l)%x_send_lo, lo_nb(1), 10, v, 1, lv(l)%x_recv_hi, hi_nb(1), 10, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call k_mpi(ierr, 'MPI_Sendrecv x low')
    call MPI_Sendrecv(v, 1, lv(l)%x_send_hi, hi_nb(1), 11, v, 1, lv(l)%x_recv_lo, lo_nb(1), 11, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call k_mpi(ierr, 'MPI_Sendrecv x high')
    if (coords(1) == 0) v(0, :, :) = -v(1, :, :)
    if (coords(1) == dims(1) - 1) v(nx + 1, :, :) = -v(nx, :, :)
    call MPI_Sendrecv(v(0, 1, 0), 1, lv(l)%y_plane, lo_nb(2), 12, v(0, ny + 1, 0), 1, &
                      lv(l)%y_plane, hi_nb(2), 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call k_mpi(ierr, 'MPI_Sendrecv y low')
    call MPI_Sendrecv(v(0, ny, 0), 1, lv(l)%y_plane, hi_nb(2), 13, v(0, 0, 0), 1, &
                      lv(l)%y_plane, lo_nb(2), 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call k_mpi(ierr, 'MPI_Sendrecv y high')
    if (coords(2) == 0) v(:, 0, :) = -v(:, 1, :)
    if (coords(2) == dims(2) - 1) v(:, ny + 1, :) = -v(:, ny, :)
    call MPI_Sendrecv(v(0, 0, 1), 1, lv(l)%z_plane, lo_nb(3), 14, v(0, 0, nz + 1), 1, &
                      lv(l)%z_plane, hi_nb(3), 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call k_mpi(ierr, 'MPI_Sendrecv z low')
    call MPI_Sendrecv(v(0, 0, nz), 1, lv(l)%z_plane, hi_nb(3), 15, v(0, 0, 0), 1, &
                      lv(l)%z_plane, lo_nb(3), 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call k_mpi(ierr, 'MPI_Sendrecv z high')
    if (coords(3) == 0) v(:, :, 0) = -v(:, :, 1)
    if (coords(3) == dims(3) - 1) v(:, :, nz + 1) = -v(:, :, nz)
  end subroutine

  ! r = f - A u
  subroutine residual(l)
    integer, intent(in) :: l
    type(level), pointer :: L_
    integer :: x, y, z
    L_ => lv(l)
    call halo(l, L_%u)
    do z = 1, L_%nz
      do y = 1, L_%ny
        do x = 1, L_%nx
          L_%r(x, y, z) = L_%f(x, y, z) - (6 * L_%u(x, y, z) - L_%u(x - 1, y, z) - L_%u(x + 1, y, z) &
                          - L_%u(x, y - 1, z) - L_%u(x, y + 1, z) - L_%u(x, y, z - 1) &
                          - L_%u(x, y, z + 1)) / L_%h**2
        end do
      end do
    end do
  end subroutine

  subroutine smooth(l, sweeps)
    integer, intent(in) :: l, sweeps
    integer :: s, nx, ny, nz
    nx = lv(l)%nx; ny = lv(l)%ny; nz = lv(l)%nz
    do s = 1, sweeps
      call residual(l)
      lv(l)%u(1:nx, 1:ny, 1:nz) = lv(l)%u(1:nx, 1:ny, 1:nz) + &
                                  omega * lv(l)%h**2 / 6 * lv(l)%r(1:nx, 1:ny, 1:nz)
    end do
  end subroutine

  recursive subroutine vcycle(l)
    integer, intent(in) :: l
    type(level), pointer :: F, C
    integer :: x, y, z, cx, cy, cz, ox, oy, oz, dx, dy, dz
    real(dp) :: s
    if (l == levels) then
      call smooth(l, coarse_sweeps)
      return
    end if
    F => lv(l)
    C => lv(l + 1)
    call smooth(l, pre)
    call residual(l)
    do z = 1, C%nz
      do y = 1, C%ny
        do x = 1, C%nx
          C%f(x, y, z) = sum(F%r(2 * x - 1:2 * x, 2 * y - 1:2 * y, 2 * z - 1:2 * z)) / 8
        end do
      end do
    end do
    C%u = 0
    call vcycle(l + 1)
    call halo(l + 1, C%u)
    ! trilinear: fine cell 2I-1 (resp. 2I) takes 3/4 of coarse I and 1/4 of I-1 (I+1)
    do z = 1, F%nz
      cz = (z + 1) / 2; oz = merge(-1, 1, mod(z, 2) == 1)
      do y = 1, F%ny
        cy = (y + 1) / 2; oy = merge(-1, 1, mod(y, 2) == 1)
        do x = 1, F%nx
          cx = (x + 1) / 2; ox = merge(-1, 1, mod(x, 2) == 1)
          s = 0
          do dz = 0, 1
            do dy = 0, 1
              do dx = 0, 1
                s = s + merge(0.25_dp, 0.75_dp, dz == 1) * merge(0.25_dp, 0.75_dp, dy == 1) * &
                    merge(0.25_dp, 0.75_dp, dx == 1) * C%u(cx + dx * ox, cy + dy * oy, cz + dz * oz)
              end do
            end do
          end do
          F%u(x, y, z) = F%u(x, y, z) + s
        end do
      end do
    end do
    call smooth(l, post)
  end subroutine

  real(dp) function norm2_r(l)
    integer, intent(in) :: l
    real(dp) :: local
    integer :: ierr
    local = sum(lv(l)%r(1:lv(l)%nx, 1:lv(l)%ny, 1:lv(l)%nz)**2)
    call MPI_Allreduce(local, norm2_r, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call k_mpi(ierr, 'MPI_Allreduce')
    norm2_r = sqrt(norm2_r)
  end function
end module mg_levels

program mg
  use mg_levels
  implicit none
  integer :: d, stride(3), nl(3), x, y, z, x0, y0, z0, cycles, ierr, l
  real(dp) :: h, r0, r, next, worst_factor, t0, elapsed, err, all_err
  character(len=160) :: msg

  call k_init('mg')
  call grid3(ksize)
  coords = [mod(krank, dims(1)), mod(krank / dims(1), dims(2)), krank / (dims(1) * dims(2))]
  stride = [1, dims(1), dims(1) * dims(2)]
  do d = 1, 3
    call k_check(mod(n, dims(d)) == 0, 'N not divisible by the process grid')
    lo_nb(d) = merge(krank - stride(d), MPI_PROC_NULL, coords(d) > 0)
    hi_nb(d) = merge(krank + stride(d), MPI_PROC_NULL, coords(d) < dims(d) - 1)
  end do
  nl = n / dims
  h = 1.0_dp / n
  levels = 0
  do while (levels < max_levels)
    levels = levels + 1
    lv(levels)%nx = nl(1); lv(levels)%ny = nl(2); lv(levels)%nz = nl(3); lv(levels)%h = h
    allocate (lv(levels)%u(0:nl(1) + 1, 0:nl(2) + 1, 0:nl(3) + 1), &
              lv(levels)%f(0:nl(1) + 1, 0:nl(2) + 1, 0:nl(3) + 1), &
              lv(levels)%r(0:nl(1) + 1, 0:nl(2) + 1, 0:nl(3) + 1))
    lv(levels)%u = 0; lv(levels)%f = 0; lv(levels)%r = 0
    call make_types(lv(levels))
    if (any(mod(nl, 2) /= 0)) exit
    nl = nl / 2
    h = 2 * h
  end do
  x0 = coords(1) * lv(1)%nx; y0 = coords(2) * lv(1)%ny; z0 = coords(3) * lv(1)%nz
  do z = 1, lv(1)%nz
    do y = 1, lv(1)%ny
      do x = 1, lv(1)%nx
        lv(1)%f(x, y, z) = 3 * pi**2 * exact(x, y, z)
      end do
    end do
  end do
  call residual(1)
  r0 = norm2_r(1)
  r = r0
  worst_factor = 0
  cycles = 0
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  t0 = MPI_Wtime()
  do while (cycles < max_cycles .and. r > 1.0d-9 * r0)
    call vcycle(1)
    call residual(1)
    next = norm2_r(1)
    worst_factor = max(worst_factor, next / r)
    r = next
    cycles = cycles + 1
  end do
  elapsed = MPI_Wtime() - t0
  write (msg, '(a,es10.3,a,i0,a,f6.3)') 'residual reduced to ', r / r0, ' in ', cycles, &
    ' V-cycles, worst factor ', worst_factor
  call k_check(r <= 1.0d-9 * r0 .and. worst_factor < 1.0_dp / 3, msg)
  err = 0
  do z = 1, lv(1)%nz
    do y = 1, lv(1)%ny
      do x = 1, lv(1)%nx
        err = max(err, abs(lv(1)%u(x, y, z) - exact(x, y, z)))
      end do
    end do
  end do
  all_err = k_global_max(err)
  write (msg, '(a,es10.3)') 'max |u - exact| above the discretisation error: ', all_err
  call k_check(all_err < 3.0d-3, msg)
  if (krank == 0) write (*, '(a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a,f5.3,a,es9.2)') 'mg: N=', n, &
    ' grid ', dims(1), 'x', dims(2), 'x', dims(3), ', ', levels, ' levels, ', cycles, &
    ' V-cycles, worst factor ', worst_factor, ', error ', all_err
  do l = 1, levels
    call MPI_Type_free(lv(l)%x_send_lo, ierr); call MPI_Type_free(lv(l)%x_send_hi, ierr)
    call MPI_Type_free(lv(l)%x_recv_lo, ierr); call MPI_Type_free(lv(l)%x_recv_hi, ierr)
    call MPI_Type_free(lv(l)%y_plane, ierr); call MPI_Type_free(lv(l)%z_plane, ierr)
  end do
  call k_finish(elapsed)
contains
  real(dp) function exact(x, y, z)
    integer, intent(in) :: x, y, z
    exact = sin(pi * (x0 + x - 0.5_dp) / n) * sin(pi * (y0 + y - 0.5_dp) / n) * &
            sin(pi * (z0 + z - 0.5_dp) / n)
  end function
end program mg
