! Routines whose Fortran signature differs from the C prototype, so
! crossmpi-fortran-gen does not generate them (docs/fortran.md lists why).

! Functions returning a value rather than an error code.
real(c_double) function crossmpi_f_wtime() bind(C, name="mpi_wtime_")
  use, intrinsic :: iso_c_binding
  implicit none
  interface
    real(c_double) function c_wtime() bind(C, name="MPI_Wtime")
      import
    end function
  end interface
  crossmpi_f_wtime = c_wtime()
end function

real(c_double) function crossmpi_f_wtick() bind(C, name="mpi_wtick_")
  use, intrinsic :: iso_c_binding
  implicit none
  interface
    real(c_double) function c_wtick() bind(C, name="MPI_Wtick")
      import
    end function
  end interface
  crossmpi_f_wtick = c_wtick()
end function

! Address arithmetic: on crossmpi's platforms addresses are plain integers, which is all
! the C functions assume too.
integer(c_intptr_t) function crossmpi_f_aint_add(base, disp) bind(C, name="mpi_aint_add_")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_intptr_t) :: base, disp
  crossmpi_f_aint_add = base + disp
end function

integer(c_intptr_t) function crossmpi_f_aint_diff(addr1, addr2) bind(C, name="mpi_aint_diff_")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_intptr_t) :: addr1, addr2
  crossmpi_f_aint_diff = addr1 - addr2
end function

! MPI_Pcontrol is variadic in C; Fortran passes only the level. Calling the variadic C
! function with one int argument is what a C caller writing MPI_Pcontrol(level) does.
! The Fortran binding has no ierror argument.
subroutine crossmpi_f_pcontrol(level) bind(C, name="mpi_pcontrol_")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int) :: level, ierror
  interface
    integer(c_int) function c_pcontrol(level) bind(C, name="MPI_Pcontrol")
      import
      integer(c_int), value :: level
    end function
  end interface
  ierror = c_pcontrol(level)
  if (ierror /= 0) return
end subroutine

! The predefined attribute callbacks of the Fortran binding. fortran/build.sh exports
! each also under the datatype and window names (MPI_TYPE_NULL_COPY_FN...), since the
! object handle is only passed through, and the null ones under the MPI-1 names
! (MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN), which touch no attribute value either.
subroutine crossmpi_f_null_copy_fn(oldobj, keyval, extra_state, value_in, value_out, flag, ierror) &
    bind(C, name="mpi_comm_null_copy_fn_")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int) :: oldobj, keyval, flag, ierror
  integer(c_intptr_t) :: extra_state, value_in, value_out
  flag = 0
  ierror = 0
end subroutine

subroutine crossmpi_f_dup_fn(oldobj, keyval, extra_state, value_in, value_out, flag, ierror) &
    bind(C, name="mpi_comm_dup_fn_")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int) :: oldobj, keyval, flag, ierror
  integer(c_intptr_t) :: extra_state, value_in, value_out
  value_out = value_in
  flag = 1
  ierror = 0
end subroutine

subroutine crossmpi_f_null_delete_fn(obj, keyval, value, extra_state, ierror) &
    bind(C, name="mpi_comm_null_delete_fn_")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int) :: obj, keyval, ierror
  integer(c_intptr_t) :: value, extra_state
  ierror = 0
end subroutine

! MPI_DUP_FN of MPI-1 keyvals (MPI_KEYVAL_CREATE): attribute values are default INTEGERs.
subroutine crossmpi_f_dup_fn_int(oldcomm, keyval, extra_state, value_in, value_out, flag, ierror) &
    bind(C, name="mpi_dup_fn_")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int) :: oldcomm, keyval, extra_state, value_in, value_out, flag, ierror
  value_out = value_in
  flag = 1
  ierror = 0
end subroutine
