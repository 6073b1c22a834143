! Conjugate gradient on a 2-D process grid (Fortran version of tests/kernels/c/cg.c).
!
! Solves A u = b for the 5-point Laplacian on an N x N grid (zero Dirichlet boundary)
! with b = A u* for a known pseudo-random u*: CG must reach |b - A u| <= 1e-10 |b| and
! |u - u*| <= 1e-6. Row and column communicators come from MPI_Comm_split; halos go to
! east/west over the row communicator and north/south over the column one with
! MPI_Sendrecv; dot products are MPI_Allreduce over the row then the column
! communicator.
! ranks: 1 2 4 8
include 'kernel_common.inc'

module cg_grid
  use kernel_common
  implicit none
  integer, parameter :: n = 200, max_iter = 4000
  integer :: row_comm, col_comm, north, south, west, east, r0, r1, c0, c1, nr, nc
  real(dp), allocatable :: sendbuf(:), recvbuf(:)
contains
  subroutine halo(v)
    real(dp), intent(inout) :: v(0:, 0:)
    integer :: ierr
    ! east/west: columns are contiguous in Fortran
    call MPI_Sendrecv(v(1, 1), nr, MPI_DOUBLE_PRECISION, west, 1, v(1, nc + 1), nr, &
                      MPI_DOUBLE_PRECISION, east, 1, row_comm, MPI_STATUS_IGNORE, ierr)
    call k_mpi(ierr, 'MPI_Sendrecv west')
    call MPI_Sendrecv(v(1, nc), nr, MPI_DOUBLE_PRECISION, east, 2, v(1, 0), nr, &
                      MPI_DOUBLE_PRECISION, west, 2, row_comm, MPI_STATUS_IGNORE, ierr)
    call k_mpi(ierr, 'MPI_Sendrecv east')
    ! north/south: rows are strided, packed by hand
    sendbuf(1:nc) = v(1, 1:nc)
    call MPI_Sendrecv(sendbuf, nc, MPI_DOUBLE_PRECISION, north, 3, recvbuf, nc, &
                      MPI_DOUBLE_PRECISION, south, 3, col_comm, MPI_STATUS_IGNORE, ierr)
    call k_mpi(ierr, 'MPI_Sendrecv north')
    if (south /= MPI_PROC_NULL) v(nr + 1, 1:nc) = recvbuf(1:nc)
    sendbuf(1:nc) = v(nr, 1:nc)
    call MPI_Sendrecv(sendbuf, nc, MPI_DOUBLE_PRECISION, south, 4, recvbuf, nc, &
                      MPI_DOUBLE_PRECISION, north, 4, col_comm, MPI_STATUS_IGNORE, ierr)
    call k_mpi(ierr, 'MPI_Sendrecv south')
    if (north /= MPI_PROC_NULL) v(0, 1:nc) = recvbuf(1:nc)
  end subroutine

  subroutine matvec(v, y)
    real(dp), intent(inout) :: v(0:, 0:)
    real(dp), intent(out) :: y(0:, 0:)
    integer :: i, j
    call halo(v)
    do j = 1, nc
      do i = 1, nr
        y(i, j) = 4 * v(i, j) - v(i - 1, j) - v(i + 1, j) - v(i, j - 1) - v(i, j + 1)
      end do
    end do
  end subroutine

  real(dp) function dot(a, b)
    real(dp), intent(in) :: a(0:, 0:), b(0:, 0:)
    real(dp) :: local, in_row
    integer :: ierr
    local = sum(a(1:nr, 1:nc) * b(1:nr, 1:nc))
    call MPI_Allreduce(local, in_row, 1, MPI_DOUBLE_PRECISION, MPI_SUM, row_comm, ierr)
    call k_mpi(ierr, 'MPI_Allreduce row')
    call MPI_Allreduce(in_row, dot, 1, MPI_DOUBLE_PRECISION, MPI_SUM, col_comm, ierr)
    call k_mpi(ierr, 'MPI_Allreduce column')
  end function
end module cg_grid

program cg
  use cg_grid
  implicit none
  integer :: prow, pcol, my_row, my_col, ierr, i, j, iter, rsize, csize, rrank, crank
  real(dp), allocatable :: exact(:, :), u(:, :), r(:, :), p(:, :), q(:, :), b(:, :)
  real(dp) :: rr, bb, rr_next, alpha, beta, t0, elapsed, err(2), all_err(2)
  character(len=160) :: msg

  call k_init('cg')
  call k_grid2(ksize, prow, pcol)
  my_row = krank / pcol
  my_col = mod(krank, pcol)
  call MPI_Comm_split(MPI_COMM_WORLD, my_row, my_col, row_comm, ierr)
  call k_mpi(ierr, 'MPI_Comm_split row')
  call MPI_Comm_split(MPI_COMM_WORLD, my_col, my_row, col_comm, ierr)
  call k_mpi(ierr, 'MPI_Comm_split column')
  call MPI_Comm_size(row_comm, rsize, ierr)
  call MPI_Comm_size(col_comm, csize, ierr)
  call MPI_Comm_rank(row_comm, rrank, ierr)
  call MPI_Comm_rank(col_comm, crank, ierr)
  write (msg, '(a,4i4)') 'row/column communicator rank/size wrong:', rrank, rsize, crank, csize
  call k_check(rsize == pcol .and. csize == prow .and. rrank == my_col .and. crank == my_row, msg)
  west = merge(my_col - 1, MPI_PROC_NULL, my_col > 0)
  east = merge(my_col + 1, MPI_PROC_NULL, my_col < pcol - 1)
  north = merge(my_row - 1, MPI_PROC_NULL, my_row > 0)
  south = merge(my_row + 1, MPI_PROC_NULL, my_row < prow - 1)
  call k_block(n, prow, my_row, r0, r1)
  call k_block(n, pcol, my_col, c0, c1)
  nr = r1 - r0 + 1
  nc = c1 - c0 + 1
  allocate (exact(0:nr + 1, 0:nc + 1), u(0:nr + 1, 0:nc + 1), r(0:nr + 1, 0:nc + 1), &
            p(0:nr + 1, 0:nc + 1), q(0:nr + 1, 0:nc + 1), b(0:nr + 1, 0:nc + 1), &
            sendbuf(nc), recvbuf(nc))
  exact = 0; u = 0; r = 0; p = 0; q = 0; b = 0
  do j = 1, nc
    do i = 1, nr
      exact(i, j) = k_unit(int(r0 + i - 2, i8) * n + (c0 + j - 2))
    end do
  end do
  call matvec(exact, b)

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  t0 = MPI_Wtime()
  r = b
  p = b
  rr = dot(r, r)
  bb = rr
  iter = 0
  do while (iter < max_iter .and. rr > 1.0d-20 * bb)
    call matvec(p, q)
    alpha = rr / dot(p, q)
    u(1:nr, 1:nc) = u(1:nr, 1:nc) + alpha * p(1:nr, 1:nc)
    r(1:nr, 1:nc) = r(1:nr, 1:nc) - alpha * q(1:nr, 1:nc)
    rr_next = dot(r, r)
    beta = rr_next / rr
    rr = rr_next
    p(1:nr, 1:nc) = r(1:nr, 1:nc) + beta * p(1:nr, 1:nc)
    iter = iter + 1
  end do
  elapsed = MPI_Wtime() - t0

  write (msg, '(a,i0,a,es10.3)') 'no convergence in ', iter, ' iterations: |r|/|b| = ', sqrt(rr / bb)
  call k_check(rr <= 1.0d-20 * bb, msg)
  call matvec(u, q)
  err(1) = maxval(abs(u(1:nr, 1:nc) - exact(1:nr, 1:nc)))
  err(2) = sum((b(1:nr, 1:nc) - q(1:nr, 1:nc))**2)
  all_err(1) = k_global_max(err(1))
  call MPI_Allreduce(err(2), all_err(2), 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  write (msg, '(a,es10.3,a,es10.3)') 'max |u - u*| = ', all_err(1), ', true |r|/|b| = ', &
    sqrt(all_err(2) / bb)
  call k_check(all_err(1) <= 1.0d-6 .and. sqrt(all_err(2) / bb) <= 1.0d-9, msg)
  if (krank == 0) write (*, '(a,i0,a,i0,a,i0,a,i0,a,a)') 'cg: N=', n, ' grid ', prow, 'x', pcol, &
    ', ', iter, ' iterations, ', trim(msg)
  call MPI_Comm_free(row_comm, ierr)
  call MPI_Comm_free(col_comm, ierr)
  call k_finish(elapsed)
end program cg
