! ranks: 2
! requires: MPI_Win_create MPI_Win_free MPI_Win_create_keyval MPI_Win_set_attr MPI_Win_create_errhandler MPI_Win_set_errhandler MPI_Win_call_errhandler
! Window callbacks written in Fortran: a keyval whose delete procedure runs when the
! window is freed, MPI_WIN_DUP_FN/MPI_WIN_NULL_DELETE_FN, and an error handler procedure
! called (with the window and the code by reference) by MPI_Win_call_errhandler.
module win_callbacks_state
  use mpi
  implicit none
  integer :: deletes = 0, handled = 0, handled_code = 0, handled_win = MPI_WIN_NULL
  integer(kind=MPI_ADDRESS_KIND) :: last_deleted = 0, last_extra = 0
contains
  subroutine no_copy(oldwin, keyval, extra_state, value_in, value_out, flag, ierror)
    integer :: oldwin, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, value_in, value_out
    logical :: flag
    flag = .false.
    ierror = MPI_ERR_OTHER
  end subroutine

  subroutine note_delete(win, keyval, value, extra_state, ierror)
    integer :: win, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: value, extra_state
    deletes = deletes + 1
    last_deleted = value
    last_extra = extra_state
    ierror = MPI_SUCCESS
  end subroutine

  subroutine on_error(win, code)
    integer :: win, code
    handled = handled + 1
    handled_code = code
    handled_win = win
  end subroutine
end module

program win_callbacks
  use mpi
  use checks
  use win_callbacks_state
  implicit none
  integer :: ierr, win, keyval, kept, handler
  integer :: buf(4)

  call MPI_Init(ierr)
  call MPI_Win_create(buf, 16_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call check_success(ierr, 'MPI_Win_create')
  call MPI_Win_create_keyval(no_copy, note_delete, keyval, 77_MPI_ADDRESS_KIND, ierr)
  call check_success(ierr, 'MPI_Win_create_keyval')
  call MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, kept, 0_MPI_ADDRESS_KIND, ierr)
  call check_success(ierr, 'MPI_Win_create_keyval with predefined procedures')
  call MPI_Win_set_attr(win, keyval, 2_MPI_ADDRESS_KIND**35, ierr)
  call check_success(ierr, 'MPI_Win_set_attr')
  call MPI_Win_set_attr(win, kept, 1_MPI_ADDRESS_KIND, ierr)

  call MPI_Win_create_errhandler(on_error, handler, ierr)
  call check_success(ierr, 'MPI_Win_create_errhandler')
  call MPI_Win_set_errhandler(win, handler, ierr)
  call MPI_Win_call_errhandler(win, MPI_ERR_RANK, ierr)
  call check(handled == 1 .and. handled_code == MPI_ERR_RANK .and. handled_win == win, &
             'Fortran window error handler called with the window and the code')
  call MPI_Errhandler_free(handler, ierr)

  call MPI_Win_free(win, ierr)
  call check_success(ierr, 'MPI_Win_free')
  call check(deletes == 1 .and. last_deleted == 2_MPI_ADDRESS_KIND**35 .and. last_extra == 77, &
             'delete procedure called with value and extra state when the window is freed')
  call MPI_Win_free_keyval(keyval, ierr)
  call MPI_Win_free_keyval(kept, ierr)
  call passed('win_callbacks')
  call MPI_Finalize(ierr)
end program
