! The predefined callbacks of the Fortran binding (MPI_COMM_DUP_FN...): Fortran procedures
! of the library that programs pass to MPI_*_create_keyval and MPI_KEYVAL_CREATE
! (docs/fortran.md). MPI_CONVERSION_FN_NULL is in support.f90, which recognises it.

! fortran/build.sh exports each communicator one also under the datatype and window
! names (MPI_TYPE_NULL_COPY_FN...), since the object handle is only passed through, and
! the null ones under the MPI-1 names (MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN), which touch
! no attribute value either.
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
