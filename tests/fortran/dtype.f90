! ranks: 1 2
! Derived datatypes from Fortran: a matrix row (strided in column-major order) as
! MPI_Type_vector, sizes and extents in MPI_ADDRESS_KIND, a struct built from absolute
! addresses and sent from MPI_BOTTOM, names.
program dtype
  use mpi
  use checks
  implicit none
  integer, parameter :: n = 5
  integer :: ierr, rank, nprocs, peer, row_type, pair_type, size, i, j, resultlen
  integer(kind=MPI_ADDRESS_KIND) :: lb, extent, addrs(2), displs(2)
  double precision :: a(n, n), b(n, n)
  integer, volatile :: tag_in, tag_out
  double precision, volatile :: val_in, val_out
  integer :: types(2), blocks(2)
  character(len=MPI_MAX_OBJECT_NAME) :: name

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  peer = mod(rank + 1, nprocs)
  do j = 1, n
    do i = 1, n
      a(i, j) = 100 * rank + 10 * i + j
    end do
  end do
  b = -1

  ! Row 2 of a column-major matrix: n blocks of 1, stride n.
  call MPI_Type_vector(n, 1, n, MPI_DOUBLE_PRECISION, row_type, ierr)
  call check_success(ierr, 'MPI_Type_vector')
  call MPI_Type_commit(row_type, ierr)
  call MPI_Type_size(row_type, size, ierr)
  call check(size == 8 * n, 'vector size')
  call MPI_Type_get_extent(row_type, lb, extent, ierr)
  call check(lb == 0 .and. extent == 8 * ((n - 1) * n + 1), 'vector extent')
  call MPI_Type_set_name(row_type, 'matrix row', ierr)
  call MPI_Type_get_name(row_type, name, resultlen, ierr)
  call check(name == 'matrix row' .and. resultlen == 10, 'type name')

  ! Send my row 2 into the peer's row 4.
  call MPI_Sendrecv(a(2, 1), 1, row_type, peer, 0, b(4, 1), 1, row_type, MPI_ANY_SOURCE, 0, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check_success(ierr, 'MPI_Sendrecv of a row')
  do j = 1, n
    call check(b(4, j) == 100 * mod(rank + nprocs - 1, nprocs) + 20 + j, 'row data')
    call check(b(3, j) == -1 .and. b(5, j) == -1, 'other rows untouched')
  end do
  call MPI_Type_free(row_type, ierr)
  call check(row_type == MPI_DATATYPE_NULL, 'free sets MPI_DATATYPE_NULL')

  ! A struct of absolute addresses, sent from and received into MPI_BOTTOM.
  tag_out = 42 + rank
  val_out = 0.5d0 + rank
  call MPI_Get_address(tag_out, addrs(1), ierr)
  call MPI_Get_address(val_out, addrs(2), ierr)
  call MPI_Get_address(tag_in, displs(1), ierr)
  call MPI_Get_address(val_in, displs(2), ierr)
  call check(MPI_Aint_diff(addrs(2), addrs(1)) == addrs(2) - addrs(1), 'MPI_Aint_diff')
  call check(MPI_Aint_add(addrs(1), 8_MPI_ADDRESS_KIND) == addrs(1) + 8, 'MPI_Aint_add')
  blocks = [1, 1]
  types = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  call MPI_Type_create_struct(2, blocks, addrs, types, pair_type, ierr)
  call check_success(ierr, 'MPI_Type_create_struct')
  call MPI_Type_commit(pair_type, ierr)
  call MPI_Type_create_struct(2, blocks, displs, types, row_type, ierr)
  call MPI_Type_commit(row_type, ierr)
  call MPI_Sendrecv(MPI_BOTTOM, 1, pair_type, peer, 1, MPI_BOTTOM, 1, row_type, MPI_ANY_SOURCE, 1, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check_success(ierr, 'MPI_Sendrecv from MPI_BOTTOM')
  call check(tag_in == 42 + mod(rank + nprocs - 1, nprocs), 'struct integer')
  call check(val_in == 0.5d0 + mod(rank + nprocs - 1, nprocs), 'struct double')
  call MPI_Type_free(pair_type, ierr)
  call MPI_Type_free(row_type, ierr)

  call passed('dtype')
  call MPI_Finalize(ierr)
end program
