! ranks: 1 2
! MPI_Type_create_f90_real/integer from Fortran, as programs use them with
! selected_real_kind: the type matches a REAL of that kind in an allreduce, its envelope
! says MPI_COMBINER_F90_REAL with the p and r asked for, asking again gives the same
! handle, another r another, and MPI_Type_free refuses it (a predefined type).
program f90_types
  use mpi
  use checks
  implicit none
  integer, parameter :: dp = selected_real_kind(15, 300)
  integer :: ierr, rank, nprocs, rtype, again, i9, i8, freed
  integer :: nints, nadds, ntypes, combiner, params(2), dummy(1)
  integer(kind=MPI_ADDRESS_KIND) :: adummy(1)
  real(dp) :: x, total

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)

  call MPI_Type_create_f90_real(15, 300, rtype, ierr)
  call check_success(ierr, 'MPI_Type_create_f90_real(15, 300)')
  x = rank + 0.25_dp
  call MPI_Allreduce(x, total, 1, rtype, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check_success(ierr, 'MPI_Allreduce over the f90 real type')
  call check(total == nprocs * (nprocs - 1) / 2 + 0.25_dp * nprocs, 'allreduce sum')
  call MPI_Type_get_envelope(rtype, nints, nadds, ntypes, combiner, ierr)
  call check(combiner == MPI_COMBINER_F90_REAL, 'real combiner')
  call check(nints == 2 .and. nadds == 0 .and. ntypes == 0, 'real envelope counts')
  call MPI_Type_get_contents(rtype, 2, 0, 0, params, adummy, dummy, ierr)
  call check(params(1) == 15 .and. params(2) == 300, 'real contents p, r')
  call MPI_Type_create_f90_real(15, 300, again, ierr)
  call check(again == rtype, 'the same request, the same handle')

  call MPI_Type_create_f90_integer(9, i9, ierr)
  call MPI_Type_create_f90_integer(8, i8, ierr)
  call check(i9 /= i8, 'integer r=8 and r=9 are distinct types')
  call MPI_Type_get_envelope(i9, nints, nadds, ntypes, combiner, ierr)
  call check(combiner == MPI_COMBINER_F90_INTEGER .and. nints == 1, 'integer envelope')
  freed = i9
  call MPI_Type_free(freed, ierr)
  call check(ierr /= MPI_SUCCESS .and. freed == i9, 'MPI_Type_free refuses a predefined type')

  call passed('f90_types')
  call MPI_Finalize(ierr)
end program
