! ranks: 1
! MPI_SIZEOF from `use mpi` (with ierror, and as PMPI_SIZEOF) and `use mpi_f08`
! (without): the bytes of one element of scalars and arrays of intrinsic numeric types
! and kinds (what the standard covers, and Open MPI too).
module sizeof_f08
  implicit none
contains
  ! The sizes mpi_f08 gives for a double array and an integer(8) scalar.
  subroutine sizes_f08(d, i8)
    use mpi_f08
    integer, intent(out) :: d, i8
    real(8) :: a(2, 3)
    integer(8) :: k
    a = 0
    k = 0
    call MPI_Sizeof(a, d)
    call MPI_Sizeof(k, i8)
  end subroutine
end module

program sizeof
  use mpi
  use checks
  use sizeof_f08
  implicit none
  integer :: ierr, s, d, i8
  integer(1) :: b(4)
  integer(2) :: h
  real(4) :: r(2, 2, 2)
  complex(8) :: z

  call MPI_Init(ierr)
  b = 0; h = 0; r = 0; z = 0
  call MPI_Sizeof(b, s, ierr)
  call check(ierr == MPI_SUCCESS .and. s == 1, 'integer(1) array')
  call MPI_Sizeof(h, s, ierr)
  call check(s == 2, 'integer(2) scalar')
  call MPI_Sizeof(r, s, ierr)
  call check(s == 4, 'real(4) rank-3 array')
  call MPI_Sizeof(z, s, ierr)
  call check(s == 16, 'complex(8)')
  call PMPI_Sizeof(z, s, ierr)
  call check(ierr == MPI_SUCCESS .and. s == 16, 'PMPI_SIZEOF, the same generic')
  call sizes_f08(d, i8)
  call check(d == 8 .and. i8 == 8, 'from mpi_f08')
  call passed('sizeof')
  call MPI_Finalize(ierr)
end program
