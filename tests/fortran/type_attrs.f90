! ranks: 1
! requires: MPI_Type_create_keyval MPI_Type_set_attr MPI_Type_get_attr MPI_Type_delete_attr MPI_Type_dup MPI_Type_free_keyval
! Datatype attributes from `use mpi`: a keyval with Fortran copy and delete procedures
! (the library calls them through C when MPI_Type_dup copies and MPI_Type_free deletes),
! the predefined MPI_TYPE_DUP_FN, MPI_TYPE_NULL_COPY_FN and MPI_TYPE_NULL_DELETE_FN.
module type_callbacks
  use mpi
  implicit none
  integer :: copies = 0, deletes = 0, seen_type = MPI_DATATYPE_NULL
  integer(kind=MPI_ADDRESS_KIND) :: last_deleted = 0
contains
  subroutine copy_doubled(oldtype, keyval, extra_state, value_in, value_out, flag, ierror)
    integer :: oldtype, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, value_in, value_out
    logical :: flag
    copies = copies + 1
    seen_type = oldtype
    value_out = 2 * value_in + extra_state
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine

  subroutine count_delete(datatype, keyval, value, extra_state, ierror)
    integer :: datatype, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: value, extra_state
    deletes = deletes + 1
    last_deleted = value
    ierror = MPI_SUCCESS
  end subroutine
end module

program type_attrs
  use mpi
  use checks
  use type_callbacks
  implicit none
  integer :: ierr, doubling, dropped, kept, pair, copy
  integer(kind=MPI_ADDRESS_KIND) :: value
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Type_contiguous(2, MPI_INTEGER, pair, ierr)
  call MPI_Type_create_keyval(copy_doubled, count_delete, doubling, 5_MPI_ADDRESS_KIND, ierr)
  call check_success(ierr, 'MPI_Type_create_keyval')
  call MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, dropped, &
                              0_MPI_ADDRESS_KIND, ierr)
  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, kept, &
                              0_MPI_ADDRESS_KIND, ierr)
  call MPI_Type_set_attr(pair, doubling, 2_MPI_ADDRESS_KIND**33, ierr)
  call check_success(ierr, 'MPI_Type_set_attr')
  call MPI_Type_set_attr(pair, dropped, 1_MPI_ADDRESS_KIND, ierr)
  call MPI_Type_set_attr(pair, kept, -3_MPI_ADDRESS_KIND, ierr)

  call MPI_Type_dup(pair, copy, ierr)
  call check_success(ierr, 'MPI_Type_dup')
  call check(copies == 1 .and. seen_type == pair, 'copy procedure called with the old type')
  call MPI_Type_get_attr(copy, doubling, value, flag, ierr)
  call check(flag .and. value == 2_MPI_ADDRESS_KIND**34 + 5, 'copied value')
  call MPI_Type_get_attr(copy, dropped, value, flag, ierr)
  call check(.not. flag, 'MPI_TYPE_NULL_COPY_FN drops the attribute')
  call MPI_Type_get_attr(copy, kept, value, flag, ierr)
  call check(flag .and. value == -3, 'MPI_TYPE_DUP_FN keeps the value')

  call MPI_Type_free(copy, ierr)
  call check(deletes == 1 .and. last_deleted == 2_MPI_ADDRESS_KIND**34 + 5, &
             'delete procedure called when the copy is freed')
  call MPI_Type_delete_attr(pair, doubling, ierr)
  call check(deletes == 2 .and. last_deleted == 2_MPI_ADDRESS_KIND**33, 'MPI_Type_delete_attr')
  call MPI_Type_free_keyval(doubling, ierr)
  call check(doubling == MPI_KEYVAL_INVALID, 'free_keyval sets MPI_KEYVAL_INVALID')
  call MPI_Type_free_keyval(dropped, ierr)
  call MPI_Type_free_keyval(kept, ierr)
  call MPI_Type_free(pair, ierr)
  call passed('type_attrs')
  call MPI_Finalize(ierr)
end program
