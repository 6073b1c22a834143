! ranks: 2
! The Fortran profiling interface: the program interposes MPI_BARRIER and MPI_SEND and
! forwards to PMPI_BARRIER and PMPI_SEND; the profiling names of routines that are
! functions or have no ierror (PMPI_WTIME, PMPI_WTICK, PMPI_PCONTROL).
module counters
  implicit none
  integer :: barriers = 0, sends = 0
end module

subroutine MPI_BARRIER(comm, ierror)
  use counters
  implicit none
  integer :: comm, ierror
  barriers = barriers + 1
  call PMPI_BARRIER(comm, ierror)
end subroutine

subroutine MPI_SEND(buf, count, datatype, dest, tag, comm, ierror)
  use counters
  implicit none
  integer :: buf, count, datatype, dest, tag, comm, ierror
  sends = sends + 1
  call PMPI_SEND(buf, count, datatype, dest, tag, comm, ierror)
end subroutine

program profiling
  use counters
  use checks
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, value
  double precision :: t0
  integer :: spins

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call check(barriers == 1, 'interposed MPI_BARRIER called')
  if (rank == 0) then
    value = 17
    call MPI_SEND(value, 1, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, ierr)
    call check_success(ierr, 'PMPI_SEND')
    call check(sends == 1, 'interposed MPI_SEND called')
  else
    call MPI_RECV(value, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(value == 17, 'message sent through PMPI_SEND')
  end if
  t0 = PMPI_WTIME()
  spins = 0
  do while (PMPI_WTIME() <= t0 .and. spins < 100000000)
    spins = spins + 1
  end do
  call check(PMPI_WTIME() > t0 .and. MPI_WTIME() >= t0, 'PMPI_WTIME advances')
  call check(PMPI_WTICK() > 0, 'PMPI_WTICK')
  call PMPI_PCONTROL(1)
  call passed('profiling')
  call MPI_FINALIZE(ierr)
end program
