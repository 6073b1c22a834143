! ranks: 1 2 4
! requires: MPI_File_open MPI_File_set_view MPI_File_write_at_all MPI_File_read_all MPI_File_read_at MPI_File_get_size MPI_File_close MPI_File_delete
! MPI-IO from Fortran: an interleaved view of INTEGER blocks written collectively and
! read back, the file's bytes read again through the default view, the shared file
! pointer, sizes, and an error returned in ierror (files default to MPI_ERRORS_RETURN).
program io
  use mpi
  use checks
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  integer, parameter :: block = 4, nblocks = 3
  integer :: ierr, rank, nprocs, fh, contig, filetype, i, errclass, rlen
  integer :: mine(block * nblocks), back(block * nblocks), cnt
  integer, allocatable :: whole(:)
  integer :: status(MPI_STATUS_SIZE)
  integer(kind=MPI_OFFSET_KIND) :: fsize, disp
  integer(kind=MPI_ADDRESS_KIND) :: lb, extent
  character(len=64) :: path
  character(len=MPI_MAX_ERROR_STRING) :: msg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  i = getpid_of_root()
  write (path, '(a,i0)') '/tmp/crossmpi-io-fortran-', i

  call MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  call check_success(ierr, 'MPI_File_open')
  call MPI_Type_contiguous(block, MPI_INTEGER, contig, ierr)
  lb = 0
  extent = 4 * block * nprocs
  call MPI_Type_create_resized(contig, lb, extent, filetype, ierr)
  call MPI_Type_commit(filetype, ierr)
  disp = 4 * block * rank
  call MPI_File_set_view(fh, disp, MPI_INTEGER, filetype, 'native', MPI_INFO_NULL, ierr)
  call check_success(ierr, 'MPI_File_set_view')
  do i = 1, block * nblocks
    mine(i) = 1000 * rank + i
  end do
  disp = 0
  call MPI_File_write_at_all(fh, disp, mine, block * nblocks, MPI_INTEGER, status, ierr)
  call check_success(ierr, 'MPI_File_write_at_all')
  call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
  call check(cnt == block * nblocks, 'write_at_all status counts every INTEGER')
  call MPI_File_read_all(fh, back, block * nblocks, MPI_INTEGER, status, ierr)
  call check_success(ierr, 'MPI_File_read_all')
  call check(all(back == mine), 'read_all through the view returns what was written')
  call MPI_File_get_size(fh, fsize, ierr)
  call check(fsize == 4 * block * nblocks * nprocs, 'file size')
  call MPI_File_close(fh, ierr)
  call check_success(ierr, 'MPI_File_close')
  call check(fh == MPI_FILE_NULL, 'close resets the handle')

  ! Every INTEGER in its place: block b belongs to rank mod(b, nprocs).
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  allocate (whole(block * nblocks * nprocs))
  call MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
  disp = 0
  call MPI_File_read_at(fh, disp, whole, size(whole), MPI_INTEGER, status, ierr)
  call check_success(ierr, 'MPI_File_read_at')
  do i = 0, size(whole) - 1
    call check(whole(i + 1) == 1000 * mod(i / block, nprocs) + (i / (block * nprocs)) * block + mod(i, block) + 1, &
               'file contents')
  end do
  call MPI_File_close(fh, ierr)

  ! An error comes back in ierror, naming the function.
  call MPI_File_open(MPI_COMM_WORLD, trim(path)//'-missing', MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
  call check(ierr /= MPI_SUCCESS, 'opening a missing file fails')
  call MPI_Error_class(ierr, errclass, i)
  call check(errclass == MPI_ERR_NO_SUCH_FILE .or. errclass == MPI_ERR_OTHER, 'class of a missing file')
  call MPI_Error_string(ierr, msg, rlen, i)
  call check(rlen > 0, 'error string')

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_File_delete(path, MPI_INFO_NULL, ierr)
    call check_success(ierr, 'MPI_File_delete')
  end if
  call MPI_Type_free(contig, ierr)
  call MPI_Type_free(filetype, ierr)
  call passed('io')
  call MPI_Finalize(ierr)
contains
  ! A number every rank agrees on for the file name: rank 0's process id.
  integer function getpid_of_root()
    integer :: pid, e
    interface
      integer(c_int) function getpid() bind(c, name='getpid')
        import :: c_int
      end function
    end interface
    pid = getpid()
    call MPI_Bcast(pid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, e)
    getpid_of_root = pid
  end function
end program io
