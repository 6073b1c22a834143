! Shared by every Fortran test program: a failed check prints what failed and aborts
! the job, so the runner sees a non-zero exit and the message.
module checks
  implicit none
contains
  subroutine check(ok, what)
    include 'mpif.h'
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: rank, ierr
    if (ok) return
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    write (*, '(a,i0,2a)') 'FAIL rank ', rank, ': ', what
    flush (6)
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end subroutine

  ! ierr must be MPI_SUCCESS.
  subroutine check_success(ierr, what)
    include 'mpif.h'
    integer, intent(in) :: ierr
    character(len=*), intent(in) :: what
    character(len=16) :: code
    write (code, '(i0)') ierr
    call check(ierr == MPI_SUCCESS, what//' returned '//trim(code))
  end subroutine

  ! Rank 0 prints the line the runner looks for, once every rank got there.
  subroutine passed(name)
    include 'mpif.h'
    character(len=*), intent(in) :: name
    integer :: rank, ierr
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    if (rank == 0) write (*, '(2a)') 'OK ', name
  end subroutine
end module checks
