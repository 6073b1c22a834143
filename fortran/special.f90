! Routines whose Fortran signature differs from the C prototype, so
! crossmpi-fortran-gen does not generate them (docs/fortran.md lists why).

! MPI_Init and MPI_Init_thread: Fortran has no argc/argv; C accepts NULL for both.
! ierror is optional for mpi_f08 callers, as in the generated wrappers.
subroutine crossmpi_f_init(ierror) bind(C, name="mpi_init_")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int), optional :: ierror
  integer(c_int) :: ierr_c
  interface
    integer(c_int) function c_init(argc, argv) bind(C, name="MPI_Init")
      import
      type(c_ptr), value :: argc, argv
    end function
  end interface
  ierr_c = c_init(c_null_ptr, c_null_ptr)
  if (present(ierror)) ierror = ierr_c
end subroutine

subroutine crossmpi_f_init_thread(required, provided, ierror) bind(C, name="mpi_init_thread_")
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_int) :: required, provided
  integer(c_int), optional :: ierror
  integer(c_int) :: ierr_c
  interface
    integer(c_int) function c_init_thread(argc, argv, required, provided) &
        bind(C, name="MPI_Init_thread")
      import
      type(c_ptr), value :: argc, argv
      integer(c_int), value :: required
      integer(c_int) :: provided
    end function
  end interface
  ierr_c = c_init_thread(c_null_ptr, c_null_ptr, required, provided)
  if (present(ierror)) ierror = ierr_c
end subroutine

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
! object handle is only passed through.
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
