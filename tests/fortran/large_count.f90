! ranks: 1 2
! requires: MPI_Op_create_c MPI_Reduce_local_c MPI_Allreduce_c MPI_Send_c MPI_Recv_c MPI_Get_count_c
! The large-count (_c) routines from mpi_f08, under their own names: counts of
! INTEGER(MPI_COUNT_KIND), and a user op of the MPI_User_function_c interface (its len
! an INTEGER(MPI_COUNT_KIND)) created with MPI_Op_create_c and called by the library.
module large_count_ops
  use mpi_f08
  implicit none
  integer(kind=MPI_COUNT_KIND) :: last_len = -1
contains
  subroutine max_abs(invec, inoutvec, len, datatype)
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    type(c_ptr), value :: invec, inoutvec
    integer(kind=MPI_COUNT_KIND) :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    last_len = len
    if (datatype /= MPI_INTEGER) stop 3
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    b = max(abs(a), abs(b))
  end subroutine
end module

program large_count
  use mpi_f08
  use checks
  use large_count_ops
  implicit none
  procedure(MPI_User_function_c), pointer :: fn
  type(MPI_Op) :: op
  type(MPI_Status) :: status
  integer :: rank, nprocs, ierr, a(3), b(3), total(3)
  integer(kind=MPI_COUNT_KIND) :: count

  fn => max_abs
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call MPI_Op_create_c(fn, .true., op, ierr)
  call check_success(ierr, 'MPI_Op_create_c')
  a = [-7, 2, 0]
  b = [3, -4, 1]
  call MPI_Reduce_local_c(a, b, 3_MPI_COUNT_KIND, MPI_INTEGER, op, ierr)
  call check_success(ierr, 'MPI_Reduce_local_c')
  call check(last_len == 3 .and. all(b == [7, 4, 1]), 'the _c op got an MPI_Count length')

  a = [rank + 1, -rank, -10 * rank]
  call MPI_Allreduce_c(a, total, 3_MPI_COUNT_KIND, MPI_INTEGER, op, MPI_COMM_WORLD)
  call check(all(total == [nprocs, nprocs - 1, 10 * (nprocs - 1)]), 'MPI_Allreduce_c with the op')
  call MPI_Op_free(op)

  if (nprocs > 1) then
    if (rank == 0) then
      call MPI_Send_c([5, 6, 7], 3_MPI_COUNT_KIND, MPI_INTEGER, 1, 9, MPI_COMM_WORLD)
    else if (rank == 1) then
      a = 0
      call MPI_Recv_c(a, 3_MPI_COUNT_KIND, MPI_INTEGER, 0, 9, MPI_COMM_WORLD, status)
      call MPI_Get_count_c(status, MPI_INTEGER, count)
      call check(count == 3 .and. all(a == [5, 6, 7]), 'MPI_Send_c/MPI_Recv_c, MPI_Get_count_c')
    end if
  end if
  call passed('large_count')
  call MPI_Finalize()
end program
