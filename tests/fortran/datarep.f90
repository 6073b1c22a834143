! ranks: 1 2
! requires: MPI_Register_datarep MPI_File_open MPI_File_set_view MPI_File_write_at MPI_File_read_at MPI_File_write_at_all MPI_File_read_at_all MPI_File_close MPI_File_delete
! A user data representation written in Fortran: MPI_REGISTER_DATAREP with read and
! write conversion procedures (buffers, datatype, count, position and extra state by
! reference) and an extent procedure, called by the library through C; and one with
! MPI_CONVERSION_FN_NULL, which stores the data as it is. Writes independent and
! collective; a conversion procedure's error code comes back in ierror. crossmpi must
! convert; a peer library that does not (Open MPI 4.1 and MPICH 4.0 do not) must say so
! with MPI_ERR_CONVERSION or MPI_ERR_UNSUPPORTED_OPERATION in ierror.
module datarep_procs
  use mpi
  implicit none
  integer :: reads = 0, writes = 0, extents = 0
contains
  ! The file holds each INTEGER negated and offset by the extra state.
  subroutine write_negated(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    integer :: userbuf(*), filebuf(*), datatype, count, ierror
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: i
    writes = writes + 1
    ierror = MPI_SUCCESS
    if (datatype /= MPI_INTEGER) then
      ierror = MPI_ERR_TYPE
      return
    end if
    do i = 1, count
      filebuf(i) = -userbuf(position + i) + int(extra_state)
    end do
  end subroutine

  subroutine read_negated(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    integer :: userbuf(*), filebuf(*), datatype, count, ierror
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: i
    reads = reads + 1
    ierror = MPI_SUCCESS
    do i = 1, count
      userbuf(position + i) = -(filebuf(i) - int(extra_state))
    end do
  end subroutine

  subroutine file_extent(datatype, extent, extra_state, ierror)
    integer :: datatype, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state
    extents = extents + 1
    extent = 4
    ierror = MPI_SUCCESS
  end subroutine
end module

program datarep
  use mpi
  use checks
  use datarep_procs
  implicit none
  integer :: ierr, rank, nranks, fh, i, values(3), back(3), plain(3), errclass, envlen
  integer(kind=MPI_OFFSET_KIND) :: at
  character(len=64) :: path
  character(len=8) :: peer
  real :: reals(3)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_environment_variable('CROSSMPI_TEST_PEER', peer, envlen)
  call MPI_Register_datarep('negated', read_negated, write_negated, file_extent, &
                            1000_MPI_ADDRESS_KIND, ierr)
  if (ierr /= MPI_SUCCESS) then
    call check(peer == '1', 'MPI_Register_datarep with Fortran conversions succeeds')
    call MPI_Error_class(ierr, errclass, i)
    call check(errclass == MPI_ERR_CONVERSION .or. errclass == MPI_ERR_UNSUPPORTED_OPERATION, &
               'MPI_Register_datarep fails with a conversion or unsupported-operation class')
    if (rank == 0) write (*, '(a)') 'datarep: the library does not support user conversions'
    call passed('datarep')
    call MPI_Finalize(ierr)
    stop
  end if
  call MPI_Register_datarep('as_is', MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, &
                            file_extent, 0_MPI_ADDRESS_KIND, ierr)
  call check_success(ierr, 'MPI_Register_datarep with MPI_CONVERSION_FN_NULL')

  path = 'crossmpi_datarep_test.dat'
  call MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, &
                     fh, ierr)
  call check_success(ierr, 'MPI_File_open')
  at = 3 * rank
  values = [(10 * rank + i, i = 1, 3)]
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'negated', &
                         MPI_INFO_NULL, ierr)
  call check_success(ierr, 'MPI_File_set_view with the Fortran datarep')
  call MPI_File_write_at(fh, at, values, 3, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check_success(ierr, 'MPI_File_write_at')
  call check(writes >= 1 .and. extents >= 1, 'write conversion and extent procedures called')
  call MPI_File_read_at(fh, at, back, 3, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check(reads >= 1 .and. all(back == values), 'read conversion undoes the write one')
  ! The same collectively, after every rank's first three.
  at = 3 * nranks + 3 * rank
  i = writes
  call MPI_File_write_at_all(fh, at, values, 3, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check_success(ierr, 'MPI_File_write_at_all')
  call check(writes > i, 'the collective write converts')
  back = 0
  call MPI_File_read_at_all(fh, at, back, 3, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check(all(back == values), 'the collective read converts back')
  ! write_negated refuses other types: its code is the call's.
  reals = 1.0
  call MPI_File_write_at(fh, at, reals, 3, MPI_REAL, MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_ERR_TYPE, 'the conversion procedure''s error code is returned')
  at = 3 * rank

  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', &
                         MPI_INFO_NULL, ierr)
  call MPI_File_read_at(fh, at, plain, 3, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check(all(plain == 1000 - values), 'the file holds the converted integers')

  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'as_is', &
                         MPI_INFO_NULL, ierr)
  call check_success(ierr, 'MPI_File_set_view with MPI_CONVERSION_FN_NULL')
  i = reads
  call MPI_File_read_at(fh, at, plain, 3, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check(all(plain == 1000 - values) .and. reads == i, 'MPI_CONVERSION_FN_NULL converts nothing')
  call MPI_File_close(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) call MPI_File_delete(path, MPI_INFO_NULL, ierr)
  call passed('datarep')
  call MPI_Finalize(ierr)
end program
