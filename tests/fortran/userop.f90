! ranks: 1
! A user-defined reduction written in Fortran: the library calls the Fortran function with
! (invec, inoutvec, len, datatype) by reference. MPI_Reduce_local applies it locally.
subroutine complex_mul(invec, inoutvec, len, datatype)
  use mpi
  implicit none
  integer :: len, datatype
  double complex :: invec(len), inoutvec(len)
  integer :: i
  if (datatype /= MPI_DOUBLE_COMPLEX) stop 3
  do i = 1, len
    inoutvec(i) = invec(i) * inoutvec(i)
  end do
end subroutine

program userop
  use mpi
  use checks
  implicit none
  external :: complex_mul
  integer :: ierr, op
  logical :: commute
  double complex :: a(3), b(3)

  call MPI_Init(ierr)
  call MPI_Op_create(complex_mul, .false., op, ierr)
  call check_success(ierr, 'MPI_Op_create')
  call MPI_Op_commutative(op, commute, ierr)
  call check(.not. commute, 'MPI_Op_commutative gives .FALSE.')
  a = [(1d0, 1d0), (0d0, 2d0), (3d0, 0d0)]
  b = [(1d0, -1d0), (0d0, 2d0), (0.5d0, 0d0)]
  call MPI_Reduce_local(a, b, 3, MPI_DOUBLE_COMPLEX, op, ierr)
  call check_success(ierr, 'MPI_Reduce_local')
  call check(b(1) == (2d0, 0d0) .and. b(2) == (-4d0, 0d0) .and. b(3) == (1.5d0, 0d0), &
             'products computed by the Fortran function')
  call MPI_Reduce_local(a, b, 2, MPI_DOUBLE_COMPLEX, MPI_SUM, ierr)
  call check(b(1) == (3d0, 1d0) .and. b(3) == (1.5d0, 0d0), 'MPI_SUM on two elements')
  call MPI_Op_free(op, ierr)
  call check(op == MPI_OP_NULL, 'free sets MPI_OP_NULL')
  call passed('userop')
  call MPI_Finalize(ierr)
end program
