! ranks: 1
! requires: MPI_Grequest_start MPI_Grequest_complete MPI_Status_set_elements MPI_Cancel
! Generalized requests with Fortran query, free and cancel procedures (extra state of
! KIND=MPI_ADDRESS_KIND, an INTEGER status array, a LOGICAL complete flag), which the
! library calls through C when the request is waited for, freed and cancelled. The
! procedures get the program's extra_state variable itself: what free stores in it the
! program sees, as with Open MPI and MPICH.
module grequest_procs
  use mpi
  implicit none
  integer :: queries = 0, frees = 0, cancels = 0
  integer(kind=MPI_ADDRESS_KIND) :: freed_state = 0, cancelled_state = 0
  logical :: cancel_complete = .true.
contains
  subroutine query_state(extra_state, status, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: status(MPI_STATUS_SIZE), ierror
    queries = queries + 1
    call MPI_Status_set_elements(status, MPI_INTEGER, int(extra_state), ierror)
    call MPI_Status_set_cancelled(status, .false., ierror)
    status(MPI_SOURCE) = 0
    status(MPI_TAG) = 44
    ierror = MPI_SUCCESS
  end subroutine

  subroutine free_state(extra_state, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: ierror
    frees = frees + 1
    freed_state = extra_state
    extra_state = -extra_state
    ierror = MPI_SUCCESS
  end subroutine

  subroutine cancel_state(extra_state, complete, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    logical :: complete
    integer :: ierror
    cancels = cancels + 1
    cancelled_state = extra_state
    cancel_complete = complete
    ierror = MPI_SUCCESS
  end subroutine
end module

program grequest
  use mpi
  use checks
  use grequest_procs
  implicit none
  integer :: ierr, request, count, status(MPI_STATUS_SIZE)
  integer(kind=MPI_ADDRESS_KIND) :: state
  logical :: flag

  call MPI_Init(ierr)
  state = 5
  call MPI_Grequest_start(query_state, free_state, cancel_state, state, request, ierr)
  call check_success(ierr, 'MPI_Grequest_start')
  call check(request /= MPI_REQUEST_NULL, 'a request')
  call MPI_Test(request, flag, status, ierr)
  call check(.not. flag, 'not complete before MPI_Grequest_complete')
  call MPI_Grequest_complete(request, ierr)
  call check_success(ierr, 'MPI_Grequest_complete')
  call MPI_Wait(request, status, ierr)
  call check_success(ierr, 'MPI_Wait')
  call check(queries >= 1, 'query procedure called')
  call check(status(MPI_TAG) == 44, 'status filled by the query procedure')
  call MPI_Get_count(status, MPI_INTEGER, count, ierr)
  call check(count == 5, 'element count set from the extra state')
  call check(frees == 1 .and. freed_state == 5, 'free procedure called with the extra state')
  call check(state == -5, 'the free procedure changed the program''s extra_state variable')
  call check(request == MPI_REQUEST_NULL, 'request freed by MPI_Wait')

  ! A 64-bit extra state, and a cancel before completion.
  state = 2_MPI_ADDRESS_KIND**40
  call MPI_Grequest_start(query_state, free_state, cancel_state, state, request, ierr)
  call MPI_Cancel(request, ierr)
  call check_success(ierr, 'MPI_Cancel')
  call check(cancels == 1 .and. cancelled_state == 2_MPI_ADDRESS_KIND**40, &
             'cancel procedure called with the extra state')
  call check(.not. cancel_complete, 'complete is .FALSE. before MPI_Grequest_complete')
  call MPI_Grequest_complete(request, ierr)
  call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
  call check(frees == 2 .and. freed_state == 2_MPI_ADDRESS_KIND**40, 'second request freed')
  call passed('grequest')
  call MPI_Finalize(ierr)
end program
