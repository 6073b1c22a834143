! ranks: 2
! with: attr_lang.c
! requires: MPI_Comm_create_keyval MPI_Type_create_keyval MPI_Win_create_keyval MPI_Win_create MPI_Keyval_create MPI_Attr_put MPI_Attr_get MPI_Comm_f2c MPI_Type_f2c MPI_Win_f2c
! Attribute values across languages (MPI-4.0 section 19.3.7): C sets and gets addresses,
! Fortran integers. A value set from Fortran (MPI_*_SET_ATTR, MPI_ATTR_PUT) reads in C
! as a pointer to the integer (an MPI_Aint, an int for MPI_ATTR_PUT); an address set
! from C reads in Fortran as that integer, cut to an INTEGER by MPI_ATTR_GET. For
! communicators, datatypes and windows, values above 2**32: keyvals of Fortran
! procedures (which see and give integers) and of C callbacks (which see pointers)
! through MPI_COMM_DUP, MPI_TYPE_DUP, replacement, deletion and frees; MPI_COMM_DUP_FN;
! the MPI-1 MPI_KEYVAL_CREATE; MPI_TAG_UB and the window attributes (MPI_WIN_BASE an
! address, MPI_WIN_SIZE and MPI_WIN_DISP_UNIT integers); a value set through mpi_f08.
! Two ranks: Open MPI 4.1's default one-sided component refuses MPI_Win_create to one.
module attr_lang_c
  use, intrinsic :: iso_c_binding, only: c_int, c_intptr_t
  implicit none
  ! Values above 2**32: one Fortran sets, one C sets as an address.
  integer(c_intptr_t), parameter :: big = 2_c_intptr_t**40 + 5
  integer(c_intptr_t), parameter :: c_value = 2_c_intptr_t**40 + 123

  ! attr_lang.c: C's MPI_*_get_attr (the pointer found, as an integer) and
  ! MPI_*_set_attr (with an address) on Fortran handles, what C reads at an address, the
  ! address of a C variable, and keyvals of C callbacks that read the MPI_Aint their
  ! value points at (with what they read last). Interface blocks, not PROCEDURE(...)
  ! declarations, which gfortran 12 calls with VALUE arguments by reference.
  interface
    integer(c_intptr_t) function c_comm_get(handle, keyval, flag) bind(C)
      import
      integer(c_int), value :: handle, keyval
      integer(c_int) :: flag
    end function
    integer(c_intptr_t) function c_attr_get(handle, keyval, flag) bind(C)
      import
      integer(c_int), value :: handle, keyval
      integer(c_int) :: flag
    end function
    integer(c_intptr_t) function c_type_get(handle, keyval, flag) bind(C)
      import
      integer(c_int), value :: handle, keyval
      integer(c_int) :: flag
    end function
    integer(c_intptr_t) function c_win_get(handle, keyval, flag) bind(C)
      import
      integer(c_int), value :: handle, keyval
      integer(c_int) :: flag
    end function
    integer(c_int) function c_comm_set(handle, keyval, value) bind(C)
      import
      integer(c_int), value :: handle, keyval
      integer(c_intptr_t), value :: value
    end function
    integer(c_int) function c_type_set(handle, keyval, value) bind(C)
      import
      integer(c_int), value :: handle, keyval
      integer(c_intptr_t), value :: value
    end function
    integer(c_int) function c_win_set(handle, keyval, value) bind(C)
      import
      integer(c_int), value :: handle, keyval
      integer(c_intptr_t), value :: value
    end function
    integer(c_intptr_t) function aint_at(address) bind(C)
      import
      integer(c_intptr_t), value :: address
    end function
    integer(c_int) function int_at(address) bind(C)
      import
      integer(c_intptr_t), value :: address
    end function
    integer(c_intptr_t) function c_variable_address() bind(C)
      import
    end function
    integer(c_intptr_t) function c_copy_saw() bind(C)
      import
    end function
    integer(c_intptr_t) function c_delete_saw() bind(C)
      import
    end function
    integer(c_int) function c_comm_keyval() bind(C)
      import
    end function
    integer(c_int) function c_type_keyval() bind(C)
      import
    end function
    integer(c_int) function c_win_keyval() bind(C)
      import
    end function
  end interface
end module

! Keyval procedures written in Fortran: each notes the value it was given.
module attr_lang_callbacks
  use mpi
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: copy_saw = 0, delete_saw = 0
  integer :: copy_saw_int = 0, delete_saw_int = 0
contains
  ! The copy holds value + 1.
  subroutine copy_plus_one(oldobj, keyval, extra_state, value_in, value_out, flag, ierror)
    integer :: oldobj, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, value_in, value_out
    logical :: flag
    copy_saw = value_in
    value_out = value_in + 1
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine

  subroutine note_delete(obj, keyval, value, extra_state, ierror)
    integer :: obj, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: value, extra_state
    delete_saw = value
    ierror = MPI_SUCCESS
  end subroutine

  ! MPI_KEYVAL_CREATE's procedures: INTEGER values.
  subroutine copy_plus_one_int(oldcomm, keyval, extra_state, value_in, value_out, flag, ierror)
    integer :: oldcomm, keyval, extra_state, value_in, value_out, ierror
    logical :: flag
    copy_saw_int = value_in
    value_out = value_in + 1
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine

  subroutine note_delete_int(comm, keyval, value, extra_state, ierror)
    integer :: comm, keyval, value, extra_state, ierror
    delete_saw_int = value
    ierror = MPI_SUCCESS
  end subroutine
end module

! The value C finds for an attribute set through mpi_f08 (MPICH's f08/attr/fandcattrf08).
module attr_lang_f08
  implicit none
contains
  integer(kind=8) function f08_value_seen_from_c()
    use mpi_f08
    use attr_lang_c
    integer :: keyval, flag_c
    call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, keyval, &
                                0_MPI_ADDRESS_KIND)
    call MPI_Comm_set_attr(MPI_COMM_SELF, keyval, big)
    f08_value_seen_from_c = aint_at(c_comm_get(MPI_COMM_SELF%MPI_VAL, keyval, flag_c))
    call MPI_Comm_delete_attr(MPI_COMM_SELF, keyval)
    call MPI_Comm_free_keyval(keyval)
  end function
end module

program attr_lang
  use mpi
  use checks
  use attr_lang_c
  use attr_lang_callbacks
  use attr_lang_f08
  implicit none
  integer :: ierr
  character(len=8) :: peer_env
  logical :: peer

  call MPI_Init(ierr)
  call get_environment_variable('CROSSMPI_TEST_PEER', peer_env)
  peer = peer_env == '1'
  call comm_values()
  call comm_fortran_callbacks()
  call comm_dup_fn()
  call comm_c_callbacks()
  call type_attributes()
  call win_attributes()
  call tag_ub()
  call check(f08_value_seen_from_c() == big, 'a value set through mpi_f08 reads in C')
  call passed('attr_lang')
  call MPI_Finalize(ierr)

contains
  ! Set and read on one keyval without callbacks.
  subroutine comm_values()
    integer :: plain, flag_c, small
    integer(kind=MPI_ADDRESS_KIND) :: value, p
    logical :: flag
    call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, plain, &
                                0_MPI_ADDRESS_KIND, ierr)
    call MPI_Comm_set_attr(MPI_COMM_WORLD, plain, big, ierr)
    call check_success(ierr, 'MPI_Comm_set_attr')
    p = c_comm_get(MPI_COMM_WORLD, plain, flag_c)
    call check(flag_c /= 0 .and. p /= big .and. p /= 0, 'C gets a pointer for a Fortran value')
    call check(aint_at(p) == big, 'C reads the Fortran value at the pointer')
    call check(c_comm_get(MPI_COMM_WORLD, plain, flag_c) == p, 'the pointer stays while set')
    call check(c_attr_get(MPI_COMM_WORLD, plain, flag_c) == p, 'MPI_Attr_get from C: the same')
    call MPI_Comm_get_attr(MPI_COMM_WORLD, plain, value, flag, ierr)
    call check(flag .and. value == big, 'Fortran gets its value back')
    call MPI_Attr_get(MPI_COMM_WORLD, plain, small, flag, ierr)
    call check(flag .and. small == 5, 'MPI_ATTR_GET cuts the value to an INTEGER')

    call check(c_comm_set(MPI_COMM_WORLD, plain, c_value) == MPI_SUCCESS, 'C sets an address')
    call MPI_Comm_get_attr(MPI_COMM_WORLD, plain, value, flag, ierr)
    call check(flag .and. value == c_value, 'Fortran gets the address C set as an integer')
    call MPI_Attr_get(MPI_COMM_WORLD, plain, small, flag, ierr)
    call check(flag .and. small == 123, 'MPI_ATTR_GET cuts the address to an INTEGER')
    call check(c_comm_get(MPI_COMM_WORLD, plain, flag_c) == c_value, 'C gets its address back')

    call MPI_Attr_put(MPI_COMM_WORLD, plain, -7, ierr)
    call check_success(ierr, 'MPI_Attr_put')
    p = c_attr_get(MPI_COMM_WORLD, plain, flag_c)
    call check(flag_c /= 0 .and. int_at(p) == -7, 'MPI_Attr_get from C: a pointer to the INTEGER')
    call check(int_at(c_comm_get(MPI_COMM_WORLD, plain, flag_c)) == -7, &
               'MPI_Comm_get_attr from C: a pointer to the INTEGER')
    call MPI_Comm_get_attr(MPI_COMM_WORLD, plain, value, flag, ierr)
    call check(flag .and. value == -7, 'MPI_COMM_GET_ATTR sign-extends an MPI_ATTR_PUT value')
    call MPI_Attr_get(MPI_COMM_WORLD, plain, small, flag, ierr)
    call check(flag .and. small == -7, 'MPI_ATTR_GET gets it back')
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, plain, ierr)
    call MPI_Comm_free_keyval(plain, ierr)
  end subroutine

  ! Fortran copy and delete procedures see and give integers, also for an address C set.
  subroutine comm_fortran_callbacks()
    integer :: fkey, fkey1, dup, flag_c
    integer(kind=MPI_ADDRESS_KIND) :: value
    logical :: flag
    call MPI_Comm_create_keyval(copy_plus_one, note_delete, fkey, 0_MPI_ADDRESS_KIND, ierr)
    call MPI_Comm_set_attr(MPI_COMM_WORLD, fkey, big, ierr)
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call check(copy_saw == big, 'a Fortran copy procedure sees the integer')
    call check(aint_at(c_comm_get(dup, fkey, flag_c)) == big + 1, &
               'C reads what a Fortran copy procedure gave through a pointer')
    call MPI_Comm_get_attr(dup, fkey, value, flag, ierr)
    call check(flag .and. value == big + 1, 'Fortran reads the copy')
    call MPI_Comm_free(dup, ierr)
    call check(delete_saw == big + 1, 'a Fortran delete procedure sees the integer (free)')

    call check(c_comm_set(MPI_COMM_WORLD, fkey, c_value) == MPI_SUCCESS, 'C replaces the value')
    call check(delete_saw == big, 'a Fortran delete procedure sees the integer (replaced)')
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call check(copy_saw == c_value, 'a Fortran copy procedure sees an address as an integer')
    call check(aint_at(c_comm_get(dup, fkey, flag_c)) == c_value + 1, &
               'what a Fortran copy procedure gives is an integer')
    call MPI_Comm_free(dup, ierr)
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, fkey, ierr)
    call check(delete_saw == c_value, 'a Fortran delete procedure sees an address as an integer')
    call MPI_Comm_free_keyval(fkey, ierr)

    call MPI_Keyval_create(copy_plus_one_int, note_delete_int, fkey1, 0, ierr)
    call check_success(ierr, 'MPI_Keyval_create')
    call MPI_Attr_put(MPI_COMM_WORLD, fkey1, -7, ierr)
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call check(copy_saw_int == -7, 'an MPI-1 copy procedure sees the INTEGER')
    call check(int_at(c_attr_get(dup, fkey1, flag_c)) == -6, &
               'C reads what an MPI-1 copy procedure gave as an int')
    call MPI_Comm_free(dup, ierr)
    call check(delete_saw_int == -6, 'an MPI-1 delete procedure sees the INTEGER (free)')
    call MPI_Attr_delete(MPI_COMM_WORLD, fkey1, ierr)
    call check(delete_saw_int == -7, 'an MPI-1 delete procedure sees the INTEGER (delete)')
    call MPI_Keyval_free(fkey1, ierr)
  end subroutine

  ! MPI_COMM_DUP_FN copies an integer into storage of its own.
  subroutine comm_dup_fn()
    integer :: dupkey, dup, flag_c
    integer(kind=MPI_ADDRESS_KIND) :: value, p
    logical :: flag
    call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, dupkey, &
                                0_MPI_ADDRESS_KIND, ierr)
    call MPI_Comm_set_attr(MPI_COMM_WORLD, dupkey, big, ierr)
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    p = c_comm_get(dup, dupkey, flag_c)
    call check(flag_c /= 0 .and. aint_at(p) == big, 'MPI_COMM_DUP_FN copies the integer')
    call check(p /= c_comm_get(MPI_COMM_WORLD, dupkey, flag_c), '... into storage of its own')
    call MPI_Comm_get_attr(dup, dupkey, value, flag, ierr)
    call check(flag .and. value == big, 'Fortran reads the copy of MPI_COMM_DUP_FN')
    call MPI_Comm_free(dup, ierr)
    ! crossmpi only: MPI_COMM_DUP_FN keeps an address (Open MPI 4.1 runs its Fortran
    ! procedure, whose integer result C then reads through a pointer).
    if (.not. peer) then
      call check(c_comm_set(MPI_COMM_WORLD, dupkey, c_value) == MPI_SUCCESS, 'C sets an address')
      call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
      call check(c_comm_get(dup, dupkey, flag_c) == c_value, 'MPI_COMM_DUP_FN keeps an address')
      call MPI_Comm_free(dup, ierr)
    end if
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, dupkey, ierr)
    call MPI_Comm_free_keyval(dupkey, ierr)
  end subroutine

  ! C copy and delete callbacks see pointers; the pointer a C copy callback gives is an
  ! address (here the original's storage, which C reads through it).
  subroutine comm_c_callbacks()
    integer :: ckey, dup, flag_c
    integer(kind=MPI_ADDRESS_KIND) :: value, p
    logical :: flag
    ckey = c_comm_keyval()
    call MPI_Comm_set_attr(MPI_COMM_WORLD, ckey, big, ierr)
    p = c_comm_get(MPI_COMM_WORLD, ckey, flag_c)
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call check(c_copy_saw() == big, 'a C copy callback reads the Fortran value at its pointer')
    call MPI_Comm_get_attr(dup, ckey, value, flag, ierr)
    call check(flag .and. value == p, 'Fortran reads the pointer a C copy callback gave')
    call check(c_comm_get(dup, ckey, flag_c) == p, 'C gets that pointer itself')
    call MPI_Comm_free(dup, ierr)
    call check(c_delete_saw() == big, 'a C delete callback reads the value at its pointer (free)')
    call MPI_Comm_set_attr(MPI_COMM_WORLD, ckey, big + 2, ierr)
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, ckey, ierr)
    call check(c_delete_saw() == big + 2, 'a C delete callback reads the value (delete)')
    call check(c_comm_set(MPI_COMM_WORLD, ckey, c_variable_address()) == MPI_SUCCESS, &
               'C sets the address of a C variable')
    call MPI_Comm_get_attr(MPI_COMM_WORLD, ckey, value, flag, ierr)
    call check(flag .and. value == c_variable_address(), 'Fortran gets that address')
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, ckey, ierr)
    call check(c_delete_saw() == 2_MPI_ADDRESS_KIND**40 + 17, 'C reads its variable at delete')
    call MPI_Comm_free_keyval(ckey, ierr)
  end subroutine

  subroutine type_attributes()
    integer :: pair, dup, plain, fkey, ckey, flag_c
    integer(kind=MPI_ADDRESS_KIND) :: value
    logical :: flag
    call MPI_Type_contiguous(2, MPI_INTEGER, pair, ierr)
    call MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, plain, &
                                0_MPI_ADDRESS_KIND, ierr)
    call MPI_Type_set_attr(pair, plain, big, ierr)
    call check_success(ierr, 'MPI_Type_set_attr')
    call check(aint_at(c_type_get(pair, plain, flag_c)) == big, 'datatype: C reads a Fortran value')
    call MPI_Type_get_attr(pair, plain, value, flag, ierr)
    call check(flag .and. value == big, 'datatype: Fortran gets its value back')
    call check(c_type_set(pair, plain, c_value) == MPI_SUCCESS, 'datatype: C sets an address')
    call MPI_Type_get_attr(pair, plain, value, flag, ierr)
    call check(flag .and. value == c_value, 'datatype: Fortran gets the address as an integer')

    call MPI_Type_create_keyval(copy_plus_one, note_delete, fkey, 0_MPI_ADDRESS_KIND, ierr)
    call MPI_Type_set_attr(pair, fkey, big, ierr)
    call MPI_Type_dup(pair, dup, ierr)
    call check(copy_saw == big, 'datatype: a Fortran copy procedure sees the integer')
    call check(aint_at(c_type_get(dup, fkey, flag_c)) == big + 1, &
               'datatype: C reads what a Fortran copy procedure gave')
    call MPI_Type_free(dup, ierr)
    call check(delete_saw == big + 1, 'datatype: a Fortran delete procedure sees the integer')

    ckey = c_type_keyval()
    call MPI_Type_set_attr(pair, ckey, big + 3, ierr)
    call MPI_Type_free(pair, ierr)
    call check(c_delete_saw() == big + 3, 'datatype: a C delete callback reads the value')
    call check(delete_saw == big, 'datatype: the Fortran one sees its integer')
    call MPI_Type_free_keyval(plain, ierr)
    call MPI_Type_free_keyval(fkey, ierr)
    call MPI_Type_free_keyval(ckey, ierr)
  end subroutine

  subroutine win_attributes()
    integer :: win, plain, fkey, ckey, flag_c
    integer :: buf(4)
    integer(kind=MPI_ADDRESS_KIND) :: value, base
    logical :: flag
    call MPI_Win_create(buf, 16_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
    call check_success(ierr, 'MPI_Win_create')
    call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, plain, &
                               0_MPI_ADDRESS_KIND, ierr)
    call MPI_Win_set_attr(win, plain, big, ierr)
    call check_success(ierr, 'MPI_Win_set_attr')
    call check(aint_at(c_win_get(win, plain, flag_c)) == big, 'window: C reads a Fortran value')
    call MPI_Win_get_attr(win, plain, value, flag, ierr)
    call check(flag .and. value == big, 'window: Fortran gets its value back')
    call check(c_win_set(win, plain, c_value) == MPI_SUCCESS, 'window: C sets an address')
    call MPI_Win_get_attr(win, plain, value, flag, ierr)
    call check(flag .and. value == c_value, 'window: Fortran gets the address as an integer')

    call MPI_Get_address(buf, base, ierr)
    call MPI_Win_get_attr(win, MPI_WIN_BASE, value, flag, ierr)
    call check(flag .and. value == base, 'MPI_WIN_BASE: Fortran gets the address')
    call check(c_win_get(win, MPI_WIN_BASE, flag_c) == base, 'MPI_WIN_BASE: C gets the address')
    call MPI_Win_get_attr(win, MPI_WIN_SIZE, value, flag, ierr)
    call check(flag .and. value == 16, 'MPI_WIN_SIZE: Fortran gets the size')
    call check(aint_at(c_win_get(win, MPI_WIN_SIZE, flag_c)) == 16, &
               'MPI_WIN_SIZE: C gets a pointer to the size')
    call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, value, flag, ierr)
    call check(flag .and. value == 4, 'MPI_WIN_DISP_UNIT: Fortran gets the unit')
    call check(int_at(c_win_get(win, MPI_WIN_DISP_UNIT, flag_c)) == 4, &
               'MPI_WIN_DISP_UNIT: C gets a pointer to the unit')

    call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, note_delete, fkey, 0_MPI_ADDRESS_KIND, ierr)
    call MPI_Win_set_attr(win, fkey, big + 5, ierr)
    ckey = c_win_keyval()
    call MPI_Win_set_attr(win, ckey, big + 4, ierr)
    call MPI_Win_free(win, ierr)
    call check(c_delete_saw() == big + 4, 'window: a C delete callback reads the value')
    call check(delete_saw == big + 5, 'window: a Fortran delete procedure sees the integer')
    call MPI_Win_free_keyval(plain, ierr)
    call MPI_Win_free_keyval(fkey, ierr)
    call MPI_Win_free_keyval(ckey, ierr)
  end subroutine

  ! A predefined attribute behaves as if set by MPI_ATTR_PUT.
  subroutine tag_ub()
    integer :: flag_c, small
    integer(kind=MPI_ADDRESS_KIND) :: value
    logical :: flag
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, value, flag, ierr)
    call check(flag .and. value >= 32767, 'MPI_TAG_UB: Fortran gets the bound')
    call check(int_at(c_comm_get(MPI_COMM_WORLD, MPI_TAG_UB, flag_c)) == value, &
               'MPI_TAG_UB: C gets a pointer to the bound')
    call MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, small, flag, ierr)
    call check(flag .and. small == value, 'MPI_TAG_UB: MPI_ATTR_GET gets the bound')
  end subroutine
end program
