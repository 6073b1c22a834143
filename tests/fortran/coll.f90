! ranks: 1 2 3 4 8
! requires: MPI_Bcast MPI_Reduce MPI_Allreduce MPI_Gather
! Collectives from Fortran: bcast, reduce, allreduce with MPI_IN_PLACE (the sentinel is
! a variable whose address the library recognises), a user-defined op in a collective,
! gather and barrier.
subroutine int_max_abs(invec, inoutvec, len, datatype)
  implicit none
  integer :: len, datatype, invec(len), inoutvec(len), i
  do i = 1, len
    inoutvec(i) = max(abs(invec(i)), abs(inoutvec(i)))
  end do
end subroutine

program coll
  use mpi
  use checks
  implicit none
  external :: int_max_abs
  integer :: ierr, rank, nprocs, i, op
  integer :: ivals(4), isum(4), gathered(64)
  double precision :: dval(2)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  dval = 0
  if (rank == nprocs - 1) dval = [3.25d0, -1d0]
  call MPI_Bcast(dval, 2, MPI_DOUBLE_PRECISION, nprocs - 1, MPI_COMM_WORLD, ierr)
  call check_success(ierr, 'MPI_Bcast')
  call check(dval(1) == 3.25d0 .and. dval(2) == -1d0, 'bcast data')

  ivals = [(rank + i, i = 1, 4)]
  isum = -1
  call MPI_Reduce(ivals, isum, 4, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call check_success(ierr, 'MPI_Reduce')
  if (rank == 0) then
    do i = 1, 4
      call check(isum(i) == nprocs * i + nprocs * (nprocs - 1) / 2, 'reduce sum')
    end do
  end if

  ! In place: the input is taken from, and the result left in, the receive buffer.
  ivals = [(rank * i, i = 1, 4)]
  call MPI_Allreduce(MPI_IN_PLACE, ivals, 4, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check_success(ierr, 'MPI_Allreduce with MPI_IN_PLACE')
  call check(all(ivals == [((nprocs - 1) * i, i = 1, 4)]), 'in-place max')

  call MPI_Op_create(int_max_abs, .true., op, ierr)
  ivals = [-rank, rank, 0, -2 * rank]
  call MPI_Allreduce(ivals, isum, 4, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
  call check_success(ierr, 'MPI_Allreduce with a Fortran op')
  call check(all(isum == [nprocs - 1, nprocs - 1, 0, 2 * (nprocs - 1)]), 'user op result')
  call MPI_Op_free(op, ierr)

  call MPI_Gather(rank * 3, 1, MPI_INTEGER, gathered, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call check_success(ierr, 'MPI_Gather')
  if (rank == 0) call check(all(gathered(1:nprocs) == [(3 * i, i = 0, nprocs - 1)]), 'gather')

  call passed('coll')
  call MPI_Finalize(ierr)
end program
