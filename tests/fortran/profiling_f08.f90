! ranks: 2
! The profiling interface of mpi_f08: the program interposes the specific procedures
! MPI_Barrier_f08 and MPI_Send_f08 (what a call of the generic MPI_Barrier or MPI_Send
! reaches) and forwards to the PMPI_Barrier and PMPI_Send generics; the PMPI_ names of
! the functions (PMPI_Wtime, PMPI_Aint_add...) and of MPI_Pcontrol.
module f08_counters
  implicit none
  integer :: barriers = 0, sends = 0
end module

subroutine MPI_Barrier_f08(comm, ierror)
  use mpi_f08, only: MPI_Comm, PMPI_Barrier
  use f08_counters
  implicit none
  type(MPI_Comm), intent(in) :: comm
  integer, optional, intent(out) :: ierror
  barriers = barriers + 1
  call PMPI_Barrier(comm, ierror)
end subroutine

subroutine MPI_Send_f08(buf, count, datatype, dest, tag, comm, ierror)
  use mpi_f08, only: MPI_Comm, MPI_Datatype, PMPI_Send
  use f08_counters
  implicit none
  integer, intent(in) :: buf, count, dest, tag
  type(MPI_Datatype), intent(in) :: datatype
  type(MPI_Comm), intent(in) :: comm
  integer, optional, intent(out) :: ierror
  sends = sends + 1
  call PMPI_Send(buf, count, datatype, dest, tag, comm, ierror)
end subroutine

program profiling_f08
  use mpi_f08
  use checks
  use f08_counters
  implicit none
  integer :: ierr, rank, value
  double precision :: t0
  integer(kind=MPI_ADDRESS_KIND) :: base

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Barrier(MPI_COMM_WORLD)
  call check(barriers == 1, 'interposed MPI_Barrier_f08 called (ierror omitted)')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call check(barriers == 2 .and. ierr == MPI_SUCCESS, 'interposed MPI_Barrier_f08 with ierror')
  if (rank == 0) then
    value = 23
    call MPI_Send(value, 1, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, ierr)
    call check_success(ierr, 'PMPI_Send')
    call check(sends == 1, 'interposed MPI_Send_f08 called')
  else
    call MPI_Recv(value, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call check(value == 23, 'message sent through PMPI_Send')
  end if
  t0 = PMPI_Wtime()
  call check(t0 >= 0 .and. MPI_Wtime() >= t0 .and. PMPI_Wtick() > 0, 'PMPI_Wtime, PMPI_Wtick')
  base = 2_MPI_ADDRESS_KIND**40
  call check(PMPI_Aint_add(base, 8_MPI_ADDRESS_KIND) == base + 8, 'PMPI_Aint_add')
  call check(PMPI_Aint_diff(base, base - 3) == 3, 'PMPI_Aint_diff')
  call PMPI_Pcontrol(0)
  call passed('profiling_f08')
  call MPI_Finalize()
end program
