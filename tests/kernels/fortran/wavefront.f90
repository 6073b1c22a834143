! Pipelined wavefront sweep (Fortran version of tests/kernels/c/wavefront.c).
!
! NK independent planes of NI x NJ points swept by
!   a(i,j) = 0.45 (a(i-1,j) + a(i,j-1)) + 0.1 a_prev(i,j) + s(i,j)
! (0 outside the plane, a_prev = the previous sweep). The plane is split in blocks
! over a rows x cols process grid: per plane, a rank blocks in MPI_Recv for its north
! row and west column, computes, and sends its last row south and last column east,
! so successive planes pipeline. After the timed sweeps every value is compared with
! a serial sweep of the whole grid (to 1e-12).
! ranks: 1 2 4 8
include 'kernel_common.inc'

module wavefront_sweep
  use kernel_common
  implicit none
  integer, parameter :: nk = 24, ni = 200, nj = 200, sweeps = 6
contains
  real(dp) function source(k, i, j)
    integer, intent(in) :: k, i, j ! 1-based global indices
    source = 0.5_dp * k_unit((int(k - 1, i8) * ni + (i - 1)) * nj + (j - 1))
  end function

  ! Sweeps block rows i0..i0+size(a,1)-2, cols j0..; a(0,:) and a(:,0) hold the
  ! north/west boundary values.
  subroutine sweep_block(a, prev, k, i0, j0)
    real(dp), intent(inout) :: a(0:, 0:)
    real(dp), intent(in) :: prev(0:, 0:)
    integer, intent(in) :: k, i0, j0
    integer :: i, j
    do j = 1, ubound(a, 2)
      do i = 1, ubound(a, 1)
        a(i, j) = 0.45_dp * (a(i - 1, j) + a(i, j - 1)) + 0.1_dp * prev(i, j) + &
                  source(k, i0 + i - 1, j0 + j - 1)
      end do
    end do
  end subroutine
end module wavefront_sweep

program wavefront
  use wavefront_sweep
  implicit none
  integer :: prow, pcol, my_row, my_col, north, south, west, east, i0, i1, j0, j1, mi, mj
  integer :: s, k, ierr, cur, old
  real(dp), allocatable :: a(:, :, :, :), row(:), ref(:, :), ref_prev(:, :)
  real(dp) :: t0, elapsed, worst, all_worst
  character(len=160) :: msg

  call k_init('wavefront')
  call k_grid2(ksize, prow, pcol)
  my_row = krank / pcol
  my_col = mod(krank, pcol)
  north = merge(krank - pcol, MPI_PROC_NULL, my_row > 0)
  south = merge(krank + pcol, MPI_PROC_NULL, my_row < prow - 1)
  west = merge(krank - 1, MPI_PROC_NULL, my_col > 0)
  east = merge(krank + 1, MPI_PROC_NULL, my_col < pcol - 1)
  call k_block(ni, prow, my_row, i0, i1)
  call k_block(nj, pcol, my_col, j0, j1)
  mi = i1 - i0 + 1
  mj = j1 - j0 + 1
  ! a(:, :, k, 1 or 2): the current and the previous sweep of plane k, with halos
  allocate (a(0:mi, 0:mj, nk, 2), row(mj))
  a = 0
  cur = 1

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  t0 = MPI_Wtime()
  do s = 1, sweeps
    old = cur
    cur = 3 - cur
    do k = 1, nk
      ! west column: contiguous in Fortran; north row: strided, via a buffer
      call MPI_Recv(row, mj, MPI_DOUBLE_PRECISION, north, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call k_mpi(ierr, 'MPI_Recv north')
      if (north /= MPI_PROC_NULL) a(0, 1:mj, k, cur) = row
      call MPI_Recv(a(1, 0, k, cur), mi, MPI_DOUBLE_PRECISION, west, nk + k, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
      call k_mpi(ierr, 'MPI_Recv west')
      call sweep_block(a(:, :, k, cur), a(:, :, k, old), k, i0, j0)
      row = a(mi, 1:mj, k, cur)
      call MPI_Send(row, mj, MPI_DOUBLE_PRECISION, south, k, MPI_COMM_WORLD, ierr)
      call k_mpi(ierr, 'MPI_Send south')
      call MPI_Send(a(1, mj, k, cur), mi, MPI_DOUBLE_PRECISION, east, nk + k, MPI_COMM_WORLD, ierr)
      call k_mpi(ierr, 'MPI_Send east')
    end do
  end do
  elapsed = MPI_Wtime() - t0

  allocate (ref(0:ni, 0:nj), ref_prev(0:ni, 0:nj))
  worst = 0
  do k = 1, nk
    ref = 0
    do s = 1, sweeps
      ref_prev = ref
      call sweep_block(ref, ref_prev, k, 1, 1)
    end do
    worst = max(worst, maxval(abs(a(1:mi, 1:mj, k, cur) - ref(i0:i1, j0:j1))))
  end do
  all_worst = k_global_max(worst)
  write (msg, '(a,es10.3)') 'max difference from the serial sweep ', all_worst
  call k_check(all_worst <= 1.0d-12, msg)
  if (krank == 0) write (*, '(a,i0,a,i0,a,i0,a,i0,a,i0,a,es8.1)') 'wavefront: ', nk, ' planes of ', &
    ni, 'x', nj, ', grid ', prow, 'x', pcol, ', max difference ', all_worst
  call k_finish(elapsed)
end program wavefront
