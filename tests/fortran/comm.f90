! ranks: 1 2 4
! Communicators from Fortran: split and dup (handles written back), names as blank-padded
! CHARACTER arguments, the MPI_TAG_UB attribute, error handlers (MPI_ERRORS_RETURN and a
! Fortran handler procedure).
module handler_state
  implicit none
  integer :: calls = 0, last_code = 0, last_comm = 0
end module

subroutine record_error(comm, code)
  use handler_state
  implicit none
  integer :: comm, code
  calls = calls + 1
  last_code = code
  last_comm = comm
end subroutine

program comm
  use mpi
  use checks
  use handler_state
  implicit none
  external :: record_error
  integer :: ierr, rank, nprocs, half, hrank, hsize, dup, resultlen, errclass, handler
  integer :: sum_in, sum_out
  integer(kind=MPI_ADDRESS_KIND) :: tag_ub
  logical :: flag
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=MPI_MAX_ERROR_STRING) :: message
  character(len=4) :: short

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  ! Split by parity, key = -rank so ranks come out reversed.
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, half, ierr)
  call check_success(ierr, 'MPI_Comm_split')
  call check(half /= MPI_COMM_NULL .and. half /= MPI_COMM_WORLD, 'new handle')
  call MPI_Comm_size(half, hsize, ierr)
  call MPI_Comm_rank(half, hrank, ierr)
  call check(hsize == (nprocs + 1 - mod(rank, 2)) / 2, 'split size')
  call check(hrank == hsize - 1 - rank / 2, 'split rank ordered by key')
  ! A message inside the new communicator.
  sum_in = rank
  call MPI_Sendrecv(sum_in, 1, MPI_INTEGER, mod(hrank + 1, hsize), 0, sum_out, 1, MPI_INTEGER, &
                    mod(hrank + hsize - 1, hsize), 0, half, MPI_STATUS_IGNORE, ierr)
  call check_success(ierr, 'MPI_Sendrecv on the split communicator')
  call check(mod(sum_out, 2) == mod(rank, 2), 'message stayed within the parity class')

  call MPI_Comm_dup(half, dup, ierr)
  call check(dup /= half, 'dup gives a new handle')
  call MPI_Comm_set_name(dup, 'parity copy   ', ierr)
  call check_success(ierr, 'MPI_Comm_set_name')
  name = repeat('x', len(name))
  call MPI_Comm_get_name(dup, name, resultlen, ierr)
  call check(name == 'parity copy', 'name without trailing blanks, blank-padded')
  call check(resultlen == 11, 'name length')
  call MPI_Comm_get_name(MPI_COMM_WORLD, short, resultlen, ierr)
  call check(short == 'MPI_', 'name truncated to the CHARACTER length')
  call check(resultlen == 14, 'world name length')
  call MPI_Comm_free(dup, ierr)
  call check(dup == MPI_COMM_NULL, 'free sets MPI_COMM_NULL')
  call MPI_Comm_free(half, ierr)

  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, tag_ub, flag, ierr)
  call check(flag, 'MPI_TAG_UB is set')
  call check(tag_ub >= 32767, 'MPI_TAG_UB value (not an address)')

  ! Errors return to the caller as codes.
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Send(sum_in, 1, MPI_INTEGER, nprocs, 0, MPI_COMM_WORLD, ierr)
  call check(ierr /= MPI_SUCCESS, 'send to an invalid rank fails')
  call MPI_Error_class(ierr, errclass, ierr)
  call check(errclass == MPI_ERR_RANK, 'error class MPI_ERR_RANK')
  message = ''
  call MPI_Error_string(errclass, message, resultlen, ierr)
  call check(resultlen > 0 .and. len_trim(message) == resultlen, 'error string')

  ! A Fortran error handler procedure receives the communicator and the code.
  call MPI_Comm_create_errhandler(record_error, handler, ierr)
  call check_success(ierr, 'MPI_Comm_create_errhandler')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler, ierr)
  call MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER, ierr)
  call check(calls == 1 .and. last_code == MPI_ERR_OTHER, 'handler called with the code')
  call check(last_comm == MPI_COMM_WORLD, 'handler got MPI_COMM_WORLD')
  call MPI_Send(sum_in, 1, MPI_INTEGER, -7, 0, MPI_COMM_WORLD, ierr)
  call check(calls == 2, 'handler called for a failing send')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
  call MPI_Errhandler_free(handler, ierr)
  call check(handler == MPI_ERRHANDLER_NULL, 'free sets MPI_ERRHANDLER_NULL')

  call passed('comm')
  call MPI_Finalize(ierr)
end program
