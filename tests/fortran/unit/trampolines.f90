! The C side of the Fortran bindings without an MPI library: the trampolines of
! fortran/support.f90 called from C (c_caller.c) through mpi.h's callback types, as the
! C library calls what a generated wrapper hands it (keyval, generalized-request and
! datarep procedures), and the C string arrays a wrapper builds for MPI_Comm_spawn and
! MPI_Comm_spawn_multiple. tests/fortran/run.sh builds and runs it; it prints
! "OK trampolines" when every check holds.
module user_procedures
  use, intrinsic :: iso_c_binding
  implicit none
  integer(c_intptr_t) :: seen = 0
  integer :: seen_int = 0, seen_datatype = 0
  logical :: seen_complete = .false.
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) return
    write (*, '(2a)') 'FAIL ', what
    error stop 1
  end subroutine

  ! MPI-2 attribute procedures: INTEGER(MPI_ADDRESS_KIND) values and extra state.
  subroutine copy_wide(oldobj, keyval, extra_state, value_in, value_out, flag, ierror)
    integer :: oldobj, keyval, ierror
    integer(c_intptr_t) :: extra_state, value_in, value_out
    logical :: flag
    value_out = value_in + extra_state + keyval
    flag = oldobj == 257
    ierror = 0
  end subroutine

  subroutine delete_wide(obj, keyval, value, extra_state, ierror)
    integer :: obj, keyval, ierror
    integer(c_intptr_t) :: value, extra_state
    seen = value + extra_state + obj + keyval
    ierror = 11
  end subroutine

  ! MPI-1 attribute procedures: everything a default INTEGER.
  subroutine copy_int(oldobj, keyval, extra_state, value_in, value_out, flag, ierror)
    integer :: oldobj, keyval, extra_state, value_in, value_out, ierror
    logical :: flag
    value_out = value_in * extra_state + oldobj - oldobj
    flag = keyval == 8
    ierror = 0
  end subroutine

  subroutine delete_int(obj, keyval, value, extra_state, ierror)
    integer :: obj, keyval, value, extra_state, ierror
    seen_int = value - extra_state + keyval + obj - obj
    ierror = 0
  end subroutine

  subroutine query(extra_state, status, ierror)
    integer(c_intptr_t) :: extra_state
    integer :: status(8), ierror
    status(2) = int(extra_state - 2_c_intptr_t**35)
    ierror = 0
  end subroutine

  subroutine free_state(extra_state, ierror)
    integer(c_intptr_t) :: extra_state
    integer :: ierror
    seen = extra_state
    ierror = 0
  end subroutine

  subroutine cancel_state(extra_state, complete, ierror)
    integer(c_intptr_t) :: extra_state
    logical :: complete
    integer :: ierror
    seen_complete = complete
    seen = extra_state
    ierror = 3
  end subroutine

  ! Datarep conversion: filebuf gets count INTEGERs of userbuf from position on, negated
  ! and offset by the extra state.
  subroutine negate(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    integer :: userbuf(*), filebuf(*), datatype, count, ierror
    integer(c_int64_t) :: position
    integer(c_intptr_t) :: extra_state
    integer :: i
    do i = 1, count
      filebuf(i) = -userbuf(position + i) + int(extra_state)
    end do
    seen_datatype = datatype
    ierror = 0
  end subroutine

  ! The same with the INTEGER(MPI_COUNT_KIND) count of MPI_Register_datarep_c.
  subroutine negate_c(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    integer :: userbuf(*), filebuf(*), datatype, ierror
    integer(c_int64_t) :: count, position
    integer(c_intptr_t) :: extra_state
    call negate(userbuf, datatype, int(count), filebuf, position, extra_state, ierror)
  end subroutine

  subroutine extent_fn(datatype, extent, extra_state, ierror)
    integer :: datatype, ierror
    integer(c_intptr_t) :: extent, extra_state
    extent = datatype + extra_state
    ierror = 0
  end subroutine
end module

module c_caller
  use, intrinsic :: iso_c_binding
  implicit none
  interface
    integer(c_int) function call_copy(f, comm, keyval, extra, in, out, flag) bind(C)
      import
      type(c_funptr), value :: f
      integer(c_intptr_t), value :: comm, in
      integer(c_int), value :: keyval
      type(c_ptr), value :: extra
      integer(c_intptr_t) :: out
      integer(c_int) :: flag
    end function
    integer(c_int) function call_delete(f, comm, keyval, value, extra) bind(C)
      import
      type(c_funptr), value :: f
      integer(c_intptr_t), value :: comm, value
      integer(c_int), value :: keyval
      type(c_ptr), value :: extra
    end function
    integer(c_int) function call_query(f, extra, status) bind(C)
      import
      type(c_funptr), value :: f
      type(c_ptr), value :: extra
      integer(c_int) :: status(8)
    end function
    integer(c_int) function call_free(f, extra) bind(C)
      import
      type(c_funptr), value :: f
      type(c_ptr), value :: extra
    end function
    integer(c_int) function call_cancel(f, extra, complete) bind(C)
      import
      type(c_funptr), value :: f
      type(c_ptr), value :: extra
      integer(c_int), value :: complete
    end function
    integer(c_int) function call_conversion(f, userbuf, datatype, count, filebuf, position, &
        extra) bind(C)
      import
      type(c_funptr), value :: f
      type(c_ptr), value :: userbuf, filebuf, extra
      integer(c_intptr_t), value :: datatype
      integer(c_int), value :: count
      integer(c_int64_t), value :: position
    end function
    integer(c_int) function call_conversion_c(f, userbuf, datatype, count, filebuf, position, &
        extra) bind(C)
      import
      type(c_funptr), value :: f
      type(c_ptr), value :: userbuf, filebuf, extra
      integer(c_intptr_t), value :: datatype
      integer(c_int64_t), value :: count, position
    end function
    integer(c_int) function call_extent(f, datatype, extent, extra) bind(C)
      import
      type(c_funptr), value :: f
      integer(c_intptr_t), value :: datatype
      integer(c_intptr_t) :: extent
      type(c_ptr), value :: extra
    end function
    subroutine join_argv(argv, out, n) bind(C)
      import
      type(c_ptr), value :: argv
      character(kind=c_char) :: out(*)
      integer(c_size_t), value :: n
    end subroutine
    subroutine join_strings(count, strings, out, n) bind(C)
      import
      integer(c_int), value :: count
      type(c_ptr), value :: strings
      character(kind=c_char) :: out(*)
      integer(c_size_t), value :: n
    end subroutine
    subroutine join_argv_lists(count, lists, out, n) bind(C)
      import
      integer(c_int), value :: count
      type(c_ptr), value :: lists
      character(kind=c_char) :: out(*)
      integer(c_size_t), value :: n
    end subroutine
  end interface
contains
  ! The C string in buf as a Fortran string.
  function fortran_string(buf) result(s)
    character(kind=c_char), intent(in) :: buf(:)
    character(len=:), allocatable :: s
    integer :: i
    s = ''
    do i = 1, size(buf)
      if (buf(i) == c_null_char) exit
      s = s // buf(i)
    end do
  end function
end module

program trampolines
  use crossmpi_fortran_support
  use user_procedures
  use c_caller
  implicit none
  type(c_ptr) :: extra
  integer(c_intptr_t) :: out
  integer(c_int) :: flag, status(8), rc
  integer, target :: userbuf(6), filebuf(3)
  character(kind=c_char) :: joined(256)
  character(len=10), target :: argv(3)
  character(len=6), target :: commands(2)
  character(len=4), target :: argvs(2, 3)
  type(crossmpi_string_list), target :: list, list2, list3, list4, list5

  ! Keyval records and the copy/delete trampolines, MPI-2 (wide) then MPI-1 (narrow).
  extra = crossmpi_keyval_record(c_funloc(copy_wide), c_funloc(delete_wide), 1000_c_intptr_t, &
                                 .false.)
  out = 0
  rc = call_copy(c_funloc(crossmpi_copy_trampoline), 257_c_intptr_t, 7, extra, 2_c_intptr_t**40, &
      out, flag)
  call check(rc == 0, 'copy trampoline returns ierror')
  call check(out == 2_c_intptr_t**40 + 1007, 'copy procedure got value, extra state and keyval')
  call check(flag == 1, 'LOGICAL flag set by the procedure arrives as 1')
  rc = call_delete(c_funloc(crossmpi_delete_trampoline), 258_c_intptr_t, 7, -5_c_intptr_t, extra)
  call check(rc == 11, 'delete trampoline returns ierror')
  call check(seen == -5 + 1000 + 258 + 7, 'delete procedure got object, keyval, value, extra')

  extra = crossmpi_keyval_record(c_funloc(copy_int), c_funloc(delete_int), -3_c_intptr_t, .true.)
  rc = call_copy(c_funloc(crossmpi_copy_trampoline), 257_c_intptr_t, 8, extra, -4_c_intptr_t, &
      out, flag)
  call check(rc == 0, 'MPI-1 copy trampoline')
  call check(out == 12 .and. flag == 1, 'MPI-1 copy procedure with INTEGER values')
  rc = call_delete(c_funloc(crossmpi_delete_trampoline), 257_c_intptr_t, 8, 10_c_intptr_t, extra)
  call check(rc == 0, 'MPI-1 delete trampoline')
  call check(seen_int == 21, 'MPI-1 delete procedure with INTEGER value and extra state')

  ! Generalized request: query, cancel, then free (which releases the record).
  extra = crossmpi_grequest_record(c_funloc(query), c_funloc(free_state), &
                                   c_funloc(cancel_state), 2_c_intptr_t**35 + 44)
  status = 0
  rc = call_query(c_funloc(crossmpi_grequest_query_trampoline), extra, status)
  call check(rc == 0 .and. status(2) == 44, 'query procedure fills the C status')
  rc = call_cancel(c_funloc(crossmpi_grequest_cancel_trampoline), extra, 1)
  call check(rc == 3, 'cancel trampoline returns ierror')
  call check(seen_complete .and. seen == 2_c_intptr_t**35 + 44, 'cancel got complete and state')
  rc = call_cancel(c_funloc(crossmpi_grequest_cancel_trampoline), extra, 0)
  call check(rc == 3 .and. .not. seen_complete, 'complete = 0 arrives as .FALSE.')
  seen = 0
  rc = call_free(c_funloc(crossmpi_grequest_free_trampoline), extra)
  call check(rc == 0 .and. seen == 2_c_intptr_t**35 + 44, &
             'free procedure got the 64-bit extra state')

  ! Datarep conversions with int and MPI_Count counts, the extent, MPI_CONVERSION_FN_NULL.
  userbuf = [1, 2, 3, 4, 5, 6]
  filebuf = 0
  extra = crossmpi_datarep_record(c_funloc(negate), c_funloc(negate), c_funloc(extent_fn), &
                                  9_c_intptr_t)
  rc = call_conversion(crossmpi_conversion_callback(c_funloc(negate), &
      c_funloc(crossmpi_datarep_read_trampoline)), c_loc(userbuf), 300_c_intptr_t, 3, &
      c_loc(filebuf), 2_c_int64_t, extra)
  call check(rc == 0, 'read conversion trampoline')
  call check(all(filebuf == [6, 5, 4]) .and. seen_datatype == 300, &
             'read conversion got buffers, datatype, count, position, extra state')
  filebuf = 0
  rc = call_conversion(c_funloc(crossmpi_datarep_write_trampoline), c_loc(userbuf), &
      301_c_intptr_t, 2, c_loc(filebuf), 0_c_int64_t, extra)
  call check(rc == 0 .and. all(filebuf == [8, 7, 0]) .and. seen_datatype == 301, &
             'write conversion trampoline')
  extra = crossmpi_datarep_record(c_funloc(negate_c), c_funloc(negate_c), c_funloc(extent_fn), &
                                  0_c_intptr_t)
  filebuf = 0
  rc = call_conversion_c(c_funloc(crossmpi_datarep_read_c_trampoline), c_loc(userbuf), &
      302_c_intptr_t, 3_c_int64_t, c_loc(filebuf), 3_c_int64_t, extra)
  call check(rc == 0 .and. all(filebuf == [-4, -5, -6]), &
             'read conversion with an MPI_Count count')
  filebuf = 0
  rc = call_conversion_c(c_funloc(crossmpi_datarep_write_c_trampoline), c_loc(userbuf), &
      302_c_intptr_t, 1_c_int64_t, c_loc(filebuf), 5_c_int64_t, extra)
  call check(rc == 0 .and. all(filebuf == [-6, 0, 0]), 'write conversion with an MPI_Count count')
  out = 0
  rc = call_extent(c_funloc(crossmpi_datarep_extent_trampoline), 40_c_intptr_t, out, extra)
  call check(rc == 0 .and. out == 40, 'extent trampoline')
  call check(.not. c_associated(crossmpi_conversion_callback( &
               c_funloc(crossmpi_conversion_fn_null), &
             c_funloc(crossmpi_datarep_read_trampoline))), &
             'MPI_CONVERSION_FN_NULL gives C a NULL function')

  ! Strings for MPI_Comm_spawn(_multiple): blank-terminated argv, commands, ARRAY_OF_ARGV.
  argv = [character(len=10) :: 'ab', ' c d  ', '']
  call crossmpi_argv_in(c_loc(argv), 10_c_size_t, list)
  call join_argv(list%c, joined, size(joined, kind=c_size_t))
  call check(fortran_string(joined) == 'ab|c d|', 'argv: leading and trailing blanks dropped, blank ends it')
  call crossmpi_argv_in(transfer(loc(f_argv_null), c_null_ptr), 1_c_size_t, list2)
  call join_argv(list2%c, joined, size(joined, kind=c_size_t))
  call check(fortran_string(joined) == '(null)', 'MPI_ARGV_NULL gives NULL')
  commands = [character(len=6) :: 'x', 'yy  z']
  call crossmpi_strings_in(c_loc(commands), 6_c_size_t, 2, list3)
  call join_strings(2, list3%c, joined, size(joined, kind=c_size_t))
  call check(fortran_string(joined) == 'x|yy  z|', 'commands')
  argvs = ''
  argvs(1, 1:2) = [character(len=4) :: 'a', 'b']
  argvs(2, 1) = 'c'
  call crossmpi_argv_lists_in(c_loc(argvs), 4_c_size_t, 2, list4)
  call join_argv_lists(2, list4%c, joined, size(joined, kind=c_size_t))
  call check(fortran_string(joined) == 'a|b|;c|;', 'ARRAY_OF_ARGV rows, each blank-terminated')
  call crossmpi_argv_lists_in(transfer(loc(f_argvs_null), c_null_ptr), 1_c_size_t, 2, list5)
  call join_argv_lists(2, list5%c, joined, size(joined, kind=c_size_t))
  call check(fortran_string(joined) == '(null)', 'MPI_ARGVS_NULL gives NULL')
  write (*, '(a)') 'OK trampolines'
end program
