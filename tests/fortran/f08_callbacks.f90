! ranks: 1 2
! requires: MPI_Comm_create_keyval MPI_Comm_create_errhandler MPI_Comm_call_errhandler MPI_Type_create_keyval
! Callbacks written for mpi_f08 (handles of TYPE(MPI_Comm)..., LOGICAL flags,
! INTEGER(MPI_ADDRESS_KIND) values), called by the library through C: a communicator
! keyval, a datatype keyval with MPI_TYPE_DUP_FN, and a communicator error handler;
! then the profiling names: PMPI_ calls through the module's PMPI_ generics. The
! procedures are checked against the module's abstract interfaces of the callback types.
module f08_callbacks_procs
  use mpi_f08
  implicit none
  integer :: copies = 0, deletes = 0, handled = 0, handled_code = 0
  type(MPI_Comm) :: copied_from, handled_comm
contains
  subroutine copy_with_offset(oldcomm, comm_keyval, extra_state, attribute_val_in, &
                              attribute_val_out, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: comm_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    copies = copies + 1
    copied_from = oldcomm
    attribute_val_out = attribute_val_in + extra_state
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine

  subroutine count_delete(comm, comm_keyval, attribute_val, extra_state, ierror)
    type(MPI_Comm) :: comm
    integer :: comm_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    deletes = deletes + 1
    ierror = MPI_SUCCESS
  end subroutine

  subroutine on_error(comm, error_code)
    type(MPI_Comm) :: comm
    integer :: error_code
    handled = handled + 1
    handled_code = error_code
    handled_comm = comm
  end subroutine
end module

program f08_callbacks
  use mpi_f08
  use checks
  use f08_callbacks_procs
  implicit none
  type(MPI_Comm) :: dup
  type(MPI_Datatype) :: pair, copy
  type(MPI_Errhandler) :: handler
  integer :: ierr, keyval, type_keyval, rank, rank_p, nprocs, total
  integer(kind=MPI_ADDRESS_KIND) :: value
  logical :: flag
  procedure(MPI_Comm_copy_attr_function), pointer :: copy_fn
  procedure(MPI_Comm_delete_attr_function), pointer :: delete_fn
  procedure(MPI_Comm_errhandler_function), pointer :: handler_fn

  copy_fn => copy_with_offset
  delete_fn => count_delete
  handler_fn => on_error
  call MPI_Init()
  call MPI_Comm_create_keyval(copy_fn, delete_fn, keyval, 10_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, 2_MPI_ADDRESS_KIND**36)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call check_success(ierr, 'MPI_Comm_dup')
  call check(copies == 1 .and. copied_from == MPI_COMM_WORLD, 'f08 copy procedure called')
  call MPI_Comm_get_attr(dup, keyval, value, flag)
  call check(flag .and. value == 2_MPI_ADDRESS_KIND**36 + 10, 'copied value')
  call MPI_Comm_free(dup)
  call check(deletes == 1, 'f08 delete procedure called')
  call MPI_Comm_free_keyval(keyval)

  call MPI_Type_contiguous(3, MPI_INTEGER, pair)
  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, type_keyval, &
                              0_MPI_ADDRESS_KIND)
  call MPI_Type_set_attr(pair, type_keyval, 99_MPI_ADDRESS_KIND)
  call MPI_Type_dup(pair, copy)
  call MPI_Type_get_attr(copy, type_keyval, value, flag)
  call check(flag .and. value == 99, 'MPI_TYPE_DUP_FN from mpi_f08')
  call MPI_Type_free(copy)
  call MPI_Type_free(pair)
  call MPI_Type_free_keyval(type_keyval)

  call MPI_Comm_create_errhandler(handler_fn, handler, ierr)
  call check_success(ierr, 'MPI_Comm_create_errhandler')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler)
  call MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_TAG)
  call check(handled == 1 .and. handled_code == MPI_ERR_TAG .and. &
             handled_comm == MPI_COMM_WORLD, 'f08 error handler called with comm and code')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)
  call MPI_Errhandler_free(handler)

  ! The PMPI_ generics reach the library without the MPI_ names.
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call PMPI_Comm_rank(MPI_COMM_WORLD, rank_p, ierr)
  call check_success(ierr, 'PMPI_Comm_rank')
  call PMPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call check(rank_p == rank, 'PMPI_Comm_rank gives the rank')
  call PMPI_Allreduce(1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check(total == nprocs, 'PMPI_Allreduce')
  call passed('f08_callbacks')
  call MPI_Finalize()
end program
