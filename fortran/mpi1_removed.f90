! The MPI-1 calls MPI-3 removed, for old mpif.h programs: MPI_ADDRESS, MPI_TYPE_HINDEXED,
! MPI_TYPE_HVECTOR, MPI_TYPE_STRUCT, MPI_TYPE_EXTENT, MPI_TYPE_LB, MPI_TYPE_UB and
! MPI_ERRHANDLER_CREATE/GET/SET. Open MPI 4.1's Fortran library keeps them, and Fortran 77
! codes still call them, so a program that builds with Open MPI builds here too
! (docs/fortran.md). Each is its MPI-2 successor with default-INTEGER addresses and
! extents; the C library, whose mpi.h is the MPI-5.0 ABI, has none of them.
! MPI_ERRHANDLER_CREATE/GET/SET take what MPI_COMM_CREATE/GET/SET_ERRHANDLER take, so
! fortran/build.sh makes them aliases of those wrappers.

module crossmpi_mpi1_removed
  use, intrinsic :: iso_c_binding
  implicit none
  private
  public :: type_extent, type_lb, type_ub

contains

  ! MPI_TYPE_EXTENT, MPI_TYPE_LB and MPI_TYPE_UB: one value of MPI_TYPE_GET_EXTENT.
  subroutine type_extent(datatype, extent, ierror) bind(C, name="mpi_type_extent_")
    integer(c_int) :: datatype, extent, ierror
    call bound(datatype, 'MPI_TYPE_EXTENT', extent, ierror)
  end subroutine

  subroutine type_lb(datatype, displacement, ierror) bind(C, name="mpi_type_lb_")
    integer(c_int) :: datatype, displacement, ierror
    call bound(datatype, 'MPI_TYPE_LB', displacement, ierror)
  end subroutine

  subroutine type_ub(datatype, displacement, ierror) bind(C, name="mpi_type_ub_")
    integer(c_int) :: datatype, displacement, ierror
    call bound(datatype, 'MPI_TYPE_UB', displacement, ierror)
  end subroutine

  ! What MPI-1 call `name` (MPI_TYPE_EXTENT, MPI_TYPE_LB or MPI_TYPE_UB) returns for
  ! `datatype`, as a default INTEGER.
  subroutine bound(datatype, name, out, ierror)
    integer, intent(in) :: datatype
    character(len=*), intent(in) :: name
    integer, intent(out) :: out, ierror
    integer(c_intptr_t) :: lb, extent, value
    call MPI_Type_get_extent(datatype, lb, extent, ierror)
    if (ierror /= 0) return
    select case (name)
    case ('MPI_TYPE_LB')
      value = lb
    case ('MPI_TYPE_UB')
      value = lb + extent
    case default
      value = extent
    end select
    if (name == 'MPI_TYPE_EXTENT') then
      call narrow(value, out, name, 'extent', ierror)
    else
      call narrow(value, out, name, 'displacement', ierror)
    end if
  end subroutine

  ! `value` as a default INTEGER for argument `arg` of call `name`; when it does not fit,
  ! the error handler of MPI_COMM_SELF gets an MPI_ERR_ARG code whose string says so.
  subroutine narrow(value, out, name, arg, ierror)
    use mpi, only: MPI_COMM_SELF, MPI_SUCCESS
    integer(c_intptr_t), intent(in) :: value
    integer, intent(out) :: out, ierror
    character(len=*), intent(in) :: name, arg
    interface
      function too_wide(function, arg, value) bind(C, name='crossmpi_fortran_too_wide')
        import :: c_char, c_int, c_int64_t
        character(kind=c_char), intent(in) :: function(*), arg(*)
        integer(c_int64_t), value :: value
        integer(c_int) :: too_wide
      end function
    end interface
    integer :: ignored
    if (value >= -huge(0) - 1_c_intptr_t .and. value <= huge(0)) then
      out = int(value)
      ierror = MPI_SUCCESS
      return
    end if
    ierror = too_wide(name // c_null_char, arg // c_null_char, int(value, c_int64_t))
    call MPI_Comm_call_errhandler(MPI_COMM_SELF, ierror, ignored)
  end subroutine

end module

! MPI_ADDRESS: the low 32 bits of the address, as Open MPI 4.1 returns it. Differences of
! addresses less than 2 GiB apart (the displacements old codes compute) are right;
! absolute addresses (for MPI_BOTTOM) need MPI_GET_ADDRESS.
subroutine crossmpi_f_address(location, address, ierror) bind(C, name="mpi_address_")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int8_t) :: location
  integer(c_int) :: address, ierror
  integer(c_intptr_t) :: full, low
  call MPI_Get_address(location, full, ierror)
  low = iand(full, int(z'FFFFFFFF', c_intptr_t))
  if (low > huge(0_c_int)) low = low - 2_c_intptr_t**32
  address = int(low, c_int)
end subroutine

subroutine crossmpi_f_type_hindexed(count, blocklengths, displacements, oldtype, newtype, &
    ierror) bind(C, name="mpi_type_hindexed_")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int) :: count, blocklengths(*), displacements(*), oldtype, newtype, ierror
  integer(c_intptr_t) :: wide(max(count, 0))
  wide = displacements(1:max(count, 0))
  call MPI_Type_create_hindexed(count, blocklengths, wide, oldtype, newtype, ierror)
end subroutine

subroutine crossmpi_f_type_hvector(count, blocklength, stride, oldtype, newtype, ierror) &
    bind(C, name="mpi_type_hvector_")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int) :: count, blocklength, stride, oldtype, newtype, ierror
  call MPI_Type_create_hvector(count, blocklength, int(stride, c_intptr_t), oldtype, newtype, &
    ierror)
end subroutine

subroutine crossmpi_f_type_struct(count, blocklengths, displacements, types, newtype, ierror) &
    bind(C, name="mpi_type_struct_")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int) :: count, blocklengths(*), displacements(*), types(*), newtype, ierror
  integer(c_intptr_t) :: wide(max(count, 0))
  wide = displacements(1:max(count, 0))
  call MPI_Type_create_struct(count, blocklengths, wide, types, newtype, ierror)
end subroutine
