! ranks: 1 2
! requires: MPI_Comm_create_keyval MPI_Comm_set_attr MPI_Comm_delete_attr MPI_Comm_free_keyval
! Attribute caching from Fortran: keyvals with copy and delete procedures written in
! Fortran (called by the library through C), the predefined MPI_COMM_NULL_COPY_FN,
! MPI_COMM_DUP_FN and MPI_COMM_NULL_DELETE_FN, INTEGER(MPI_ADDRESS_KIND) values.
module attr_callbacks
  use mpi
  implicit none
  integer :: copies = 0, deletes = 0
  integer(kind=MPI_ADDRESS_KIND) :: last_deleted = 0
contains
  subroutine copy_plus_one(oldcomm, keyval, extra_state, value_in, value_out, flag, ierror)
    integer :: oldcomm, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, value_in, value_out
    logical :: flag
    copies = copies + 1
    value_out = value_in + extra_state
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine

  subroutine count_delete(comm, keyval, value, extra_state, ierror)
    integer :: comm, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: value, extra_state
    deletes = deletes + 1
    last_deleted = value
    ierror = MPI_SUCCESS
  end subroutine
end module

program attrs
  use mpi
  use checks
  use attr_callbacks
  implicit none
  integer :: ierr, counting, dropped, kept, dup
  integer(kind=MPI_ADDRESS_KIND) :: extra, value
  logical :: flag

  call MPI_Init(ierr)
  extra = 1000
  call MPI_Comm_create_keyval(copy_plus_one, count_delete, counting, extra, ierr)
  call check_success(ierr, 'MPI_Comm_create_keyval')
  extra = 0
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, dropped, extra, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kept, extra, ierr)

  value = 2_MPI_ADDRESS_KIND**40 + 7
  call MPI_Comm_set_attr(MPI_COMM_WORLD, counting, value, ierr)
  call check_success(ierr, 'MPI_Comm_set_attr')
  call MPI_Comm_set_attr(MPI_COMM_WORLD, dropped, 5_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kept, 6_MPI_ADDRESS_KIND, ierr)
  value = 0
  call MPI_Comm_get_attr(MPI_COMM_WORLD, counting, value, flag, ierr)
  call check(flag .and. value == 2_MPI_ADDRESS_KIND**40 + 7, 'get the 64-bit value back')

  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call check(copies == 1, 'Fortran copy procedure called once')
  call MPI_Comm_get_attr(dup, counting, value, flag, ierr)
  call check(flag .and. value == 2_MPI_ADDRESS_KIND**40 + 1007, 'copied value with extra state')
  call MPI_Comm_get_attr(dup, dropped, value, flag, ierr)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN drops the attribute')
  call MPI_Comm_get_attr(dup, kept, value, flag, ierr)
  call check(flag .and. value == 6, 'MPI_COMM_DUP_FN keeps the value')

  call MPI_Comm_free(dup, ierr)
  call check(deletes == 1 .and. last_deleted == 2_MPI_ADDRESS_KIND**40 + 1007, &
             'Fortran delete procedure called on free')
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, counting, ierr)
  call check(deletes == 2 .and. last_deleted == 2_MPI_ADDRESS_KIND**40 + 7, 'delete_attr')
  call MPI_Comm_get_attr(MPI_COMM_WORLD, counting, value, flag, ierr)
  call check(.not. flag, 'attribute gone')
  call MPI_Comm_free_keyval(counting, ierr)
  call check(counting == MPI_KEYVAL_INVALID, 'free_keyval sets MPI_KEYVAL_INVALID')
  call MPI_Comm_free_keyval(dropped, ierr)
  call MPI_Comm_free_keyval(kept, ierr)
  call passed('attrs')
  call MPI_Finalize(ierr)
end program
