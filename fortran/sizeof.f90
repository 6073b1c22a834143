! MPI_SIZEOF (deprecated since MPI-4.0, still in the standard): the bytes of one element
! of any intrinsic numeric, logical or character type, scalar or array of any rank, for the `mpi`
! and `mpi_f08` modules, which re-export this generic (mpif.h cannot declare a generic).
! Not generated from mpi.h: it is Fortran-only. The kinds are those gfortran has on
! x86-64; `ierror` is optional, as mpi_f08 allows and `use mpi` callers always pass it.
module crossmpi_sizeof_kinds
  implicit none
  private
  public :: MPI_SIZEOF
  interface MPI_SIZEOF
    module procedure &
      crossmpi_sizeof_i1, &
      crossmpi_sizeof_i2, &
      crossmpi_sizeof_i4, &
      crossmpi_sizeof_i8, &
      crossmpi_sizeof_i16, &
      crossmpi_sizeof_r4, &
      crossmpi_sizeof_r8, &
      crossmpi_sizeof_r10, &
      crossmpi_sizeof_r16, &
      crossmpi_sizeof_c4, &
      crossmpi_sizeof_c8, &
      crossmpi_sizeof_c10, &
      crossmpi_sizeof_c16, &
      crossmpi_sizeof_l1, &
      crossmpi_sizeof_l2, &
      crossmpi_sizeof_l4, &
      crossmpi_sizeof_l8, crossmpi_sizeof_ch
  end interface
contains
  subroutine crossmpi_sizeof_i1(x, size, ierror)
    integer(kind=1), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    if (present(ierror)) ierror = 0
  end subroutine
  subroutine crossmpi_sizeof_i2(x, size, ierror)
    integer(kind=2), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    if (present(ierror)) ierror = 0
  end subroutine
  subroutine crossmpi_sizeof_i4(x, size, ierror)
    integer(kind=4), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    if (present(ierror)) ierror = 0
  end subroutine
  subroutine crossmpi_sizeof_i8(x, size, ierror)
    integer(kind=8), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    if (present(ierror)) ierror = 0
  end subroutine
  subroutine crossmpi_sizeof_i16(x, size, ierror)
    integer(kind=16), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    if (present(ierror)) ierror = 0
  end subroutine
  subroutine crossmpi_sizeof_r4(x, size, ierror)
    real(kind=4), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    if (present(ierror)) ierror = 0
  end subroutine
  subroutine crossmpi_sizeof_r8(x, size, ierror)
    real(kind=8), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    if (present(ierror)) ierror = 0
  end subroutine
  subroutine crossmpi_sizeof_r10(x, size, ierror)
    real(kind=10), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    if (present(ierror)) ierror = 0
  end subroutine
  subroutine crossmpi_sizeof_r16(x, size, ierror)
    real(kind=16), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    if (present(ierror)) ierror = 0
  end subroutine
  subroutine crossmpi_sizeof_c4(x, size, ierror)
    complex(kind=4), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    if (present(ierror)) ierror = 0
  end subroutine
  subroutine crossmpi_sizeof_c8(x, size, ierror)
    complex(kind=8), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    if (present(ierror)) ierror = 0
  end subroutine
  subroutine crossmpi_sizeof_c10(x, size, ierror)
    complex(kind=10), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    if (present(ierror)) ierror = 0
  end subroutine
  subroutine crossmpi_sizeof_c16(x, size, ierror)
    complex(kind=16), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    if (present(ierror)) ierror = 0
  end subroutine
  subroutine crossmpi_sizeof_l1(x, size, ierror)
    logical(kind=1), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    if (present(ierror)) ierror = 0
  end subroutine
  subroutine crossmpi_sizeof_l2(x, size, ierror)
    logical(kind=2), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    if (present(ierror)) ierror = 0
  end subroutine
  subroutine crossmpi_sizeof_l4(x, size, ierror)
    logical(kind=4), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    if (present(ierror)) ierror = 0
  end subroutine
  subroutine crossmpi_sizeof_l8(x, size, ierror)
    logical(kind=8), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    if (present(ierror)) ierror = 0
  end subroutine
  ! Not numeric, but Open MPI and MPICH accept it too: the bytes of one string.
  subroutine crossmpi_sizeof_ch(x, size, ierror)
    character(len=*), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    if (present(ierror)) ierror = 0
  end subroutine
end module crossmpi_sizeof_kinds

! The generic under both names the standard gives it: PMPI_SIZEOF is MPI_SIZEOF renamed,
! so the specific procedures are listed once.
module crossmpi_sizeof
  use crossmpi_sizeof_kinds, only: MPI_SIZEOF, PMPI_SIZEOF => MPI_SIZEOF
  implicit none
  private
  public :: MPI_SIZEOF, PMPI_SIZEOF
end module crossmpi_sizeof
