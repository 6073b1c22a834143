! ranks: 1 2 4
! The mpi_f08 module: handle types compared with == and /=, TYPE(MPI_Status) components,
! ierror omitted or present, arrays of TYPE(MPI_Request), MPI_STATUSES_IGNORE, a
! datatype, a structure whose bounds the MPI-1 markers MPI_LB and MPI_UB set (as MPICH's
! f08/datatype/allctypesf08 names them), and a user op with the f08 MPI_User_function
! interface (TYPE(C_PTR) buffers).
module f08_ops
  use mpi_f08
  implicit none
contains
  subroutine int_sum_squares(invec, inoutvec, len, datatype)
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    if (datatype /= MPI_INTEGER) stop 3
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    b = a * a + b
  end subroutine
end module

program f08
  use mpi_f08
  use checks
  use f08_ops
  implicit none
  type(MPI_Comm) :: dup
  type(MPI_Status) :: status
  type(MPI_Request) :: requests(2)
  type(MPI_Datatype) :: pair, marked
  integer(kind=MPI_ADDRESS_KIND) :: lb, extent
  type(MPI_Op) :: op
  integer :: ierr, rank, nprocs, next, prev, count, sendval(4), recvval(4), a(3), b(3)
  double precision :: t0

  call MPI_Init()
  t0 = MPI_Wtime()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call check_success(ierr, 'MPI_Comm_size with ierror')
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)

  sendval = [rank, rank + 1, rank + 2, rank + 3]
  call MPI_Sendrecv(sendval, 4, MPI_INTEGER, next, 11, recvval, 4, MPI_INTEGER, prev, 11, &
                    MPI_COMM_WORLD, status)
  call check(status%MPI_SOURCE == prev .and. status%MPI_TAG == 11, 'status components')
  call MPI_Get_count(status, MPI_INTEGER, count)
  call check(count == 4, 'MPI_Get_count with TYPE(MPI_Status)')
  call check(all(recvval == [prev, prev + 1, prev + 2, prev + 3]), 'sendrecv data')

  call MPI_Irecv(recvval, 2, MPI_INTEGER, prev, 12, MPI_COMM_WORLD, requests(1))
  call MPI_Isend(sendval, 2, MPI_INTEGER, next, 12, MPI_COMM_WORLD, requests(2))
  call check(requests(1) /= MPI_REQUEST_NULL, 'active request differs from MPI_REQUEST_NULL')
  call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE)
  call check(all(requests == MPI_REQUEST_NULL), 'Waitall sets MPI_REQUEST_NULL')
  call check(recvval(2) == prev + 1, 'nonblocking data')

  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call check(dup /= MPI_COMM_WORLD .and. dup /= MPI_COMM_NULL, 'dup handle')
  call MPI_Comm_free(dup)
  call check(dup == MPI_COMM_NULL, 'free sets MPI_COMM_NULL')

  ! A contiguous pair of integers, sent as one element.
  call MPI_Type_contiguous(2, MPI_INTEGER, pair)
  call MPI_Type_commit(pair)
  call MPI_Sendrecv(sendval(3), 1, pair, next, 13, recvval, 1, pair, prev, 13, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call check(recvval(1) == prev + 2 .and. recvval(2) == prev + 3, 'derived type data')
  call MPI_Type_free(pair)
  call check(pair == MPI_DATATYPE_NULL, 'free sets MPI_DATATYPE_NULL')

  ! One integer at offset 4 of an element the markers bound to [-4, 12).
  call MPI_Type_create_struct(3, [1, 1, 1], [-4_MPI_ADDRESS_KIND, 4_MPI_ADDRESS_KIND, &
                              12_MPI_ADDRESS_KIND], [MPI_LB, MPI_INTEGER, MPI_UB], marked)
  call MPI_Type_get_extent(marked, lb, extent)
  call check(lb == -4 .and. extent == 16, 'MPI_LB and MPI_UB set the bounds')
  call check(MPI_LB /= MPI_UB .and. MPI_LB /= MPI_DATATYPE_NULL, 'markers are datatypes')
  call MPI_Type_free(marked)

  ! Errors return as codes when ierror is present.
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Send(sendval, 1, MPI_INTEGER, nprocs + 3, 0, MPI_COMM_WORLD, ierr)
  call check(ierr /= MPI_SUCCESS, 'invalid rank reported in ierror')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)

  call MPI_Op_create(int_sum_squares, .true., op)
  a = [1, 2, 3]
  b = [10, 20, 30]
  call MPI_Reduce_local(a, b, 3, MPI_INTEGER, op)
  call check(all(b == [11, 24, 39]), 'f08 user op')
  call MPI_Op_free(op)

  call check(MPI_Wtime() >= t0 .and. MPI_Wtick() > 0, 'MPI_Wtime and MPI_Wtick')
  call passed('f08')
  call MPI_Finalize()
end program
