! crossmpi_fortran_support: what the generated wrappers (wrappers.f90) share.
!
! The sentinels (MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE...) are variables in common
! blocks declared by mpif.h and the mpi module; a Fortran program passes one by
! reference, so a wrapper sees its address and crossmpi_address replaces it with the C
! value of the same sentinel. The block names must match SENTINELS in
! crates/tools/fortran-gen/src/constants.rs.
module crossmpi_fortran_support
  use, intrinsic :: iso_c_binding
  implicit none
  integer :: f_bottom, f_in_place, f_buffer_automatic
  integer :: f_status_ignore(8), f_statuses_ignore(8, 1)
  integer :: f_errcodes_ignore(1), f_unweighted(1), f_weights_empty(1)
  character :: f_argv_null(1), f_argvs_null(1)
  common /crossmpi_bottom/ f_bottom
  common /crossmpi_in_place/ f_in_place
  common /crossmpi_buffer_automatic/ f_buffer_automatic
  common /crossmpi_status_ignore/ f_status_ignore
  common /crossmpi_statuses_ignore/ f_statuses_ignore
  common /crossmpi_errcodes_ignore/ f_errcodes_ignore
  common /crossmpi_unweighted/ f_unweighted
  common /crossmpi_weights_empty/ f_weights_empty
  common /crossmpi_argv_null/ f_argv_null
  common /crossmpi_argvs_null/ f_argvs_null

  ! C values of the sentinels (mpi.h): MPI_BOTTOM, MPI_STATUS(ES)_IGNORE and
  ! MPI_ERRCODES_IGNORE are NULL.
  integer(c_intptr_t), parameter :: c_in_place = 1, c_buffer_automatic = 2
  integer(c_intptr_t), parameter :: c_unweighted = 10, c_weights_empty = 11

  integer, parameter :: mpi_undefined = -32766, err_in_status = 19
  ! C's MPI_COMM_DUP_FN (mpi.h), which copies an attribute as it is.
  integer(c_intptr_t), parameter :: c_dup_fn = 1

  ! What a keyval created from Fortran keeps as its C extra state: the Fortran copy and
  ! delete procedures and the program's extra state. C calls the trampolines below with
  ! arguments by value; they call the Fortran procedures with arguments by reference.
  ! narrow: an MPI-1 keyval (MPI_KEYVAL_CREATE), whose procedures take default INTEGER
  ! extra state and attribute values. A record lives as long as the program (keyvals are
  ! few; MPI_*_free_keyval does not hand the extra state back).
  type :: keyval_record
    type(c_funptr) :: copy_fn, delete_fn
    integer(c_intptr_t) :: extra_state
    logical :: narrow
  end type

  ! A generalized request's procedures and the program's extra_state variable (by
  ! address: the procedures get that variable itself, so what they store in it the
  ! program sees, as Open MPI and MPICH do, which MPICH's test greqf checks); freed by
  ! the free trampoline, the last call C makes for the request.
  type :: grequest_record
    type(c_funptr) :: query_fn, free_fn, cancel_fn
    type(c_ptr) :: extra_state
  end type

  ! A data representation's procedures (datareps live as long as the program).
  type :: datarep_record
    type(c_funptr) :: read_fn, write_fn, extent_fn
    integer(c_intptr_t) :: extra_state
  end type

  ! Strings for C built from Fortran CHARACTER arrays (argv and commands of
  ! MPI_COMM_SPAWN(_MULTIPLE)): c is what C gets (NULL for MPI_ARGV(S)_NULL), pointing at
  ! ptrs (argv and command strings, into chars) or lists (one argv per command, into
  ! ptrs). A wrapper declares one as a local TARGET, so it lives until C returns.
  type :: crossmpi_string_list
    character(kind=c_char), allocatable :: chars(:)
    type(c_ptr), allocatable :: ptrs(:), lists(:)
    type(c_ptr) :: c = c_null_ptr
  end type

  ! The Fortran callbacks, seen through interoperable interfaces with every argument by
  ! reference (a LOGICAL is 4 bytes like a C int, .TRUE. being 1). Choice buffers and
  ! statuses are declared as their address passed by value, which is the same thing.
  abstract interface
    subroutine fortran_copy_attr(oldobj, keyval, extra_state, value_in, value_out, flag, ierror) &
        bind(C)
      import
      integer(c_int) :: oldobj, keyval, flag, ierror
      integer(c_intptr_t) :: extra_state, value_in, value_out
    end subroutine
    subroutine fortran_delete_attr(obj, keyval, value, extra_state, ierror) bind(C)
      import
      integer(c_int) :: obj, keyval, ierror
      integer(c_intptr_t) :: value, extra_state
    end subroutine
    subroutine fortran_copy_attr_int(oldobj, keyval, extra_state, value_in, value_out, flag, &
        ierror) bind(C)
      import
      integer(c_int) :: oldobj, keyval, extra_state, value_in, value_out, flag, ierror
    end subroutine
    subroutine fortran_delete_attr_int(obj, keyval, value, extra_state, ierror) bind(C)
      import
      integer(c_int) :: obj, keyval, value, extra_state, ierror
    end subroutine
    subroutine fortran_grequest_query(extra_state, status, ierror) bind(C)
      import
      integer(c_intptr_t) :: extra_state
      type(c_ptr), value :: status
      integer(c_int) :: ierror
    end subroutine
    subroutine fortran_grequest_free(extra_state, ierror) bind(C)
      import
      integer(c_intptr_t) :: extra_state
      integer(c_int) :: ierror
    end subroutine
    subroutine fortran_grequest_cancel(extra_state, complete, ierror) bind(C)
      import
      integer(c_intptr_t) :: extra_state
      integer(c_int) :: complete, ierror
    end subroutine
    subroutine fortran_conversion(userbuf, datatype, count, filebuf, position, extra_state, &
        ierror) bind(C)
      import
      type(c_ptr), value :: userbuf, filebuf
      integer(c_int) :: datatype, count, ierror
      integer(c_int64_t) :: position
      integer(c_intptr_t) :: extra_state
    end subroutine
    subroutine fortran_conversion_c(userbuf, datatype, count, filebuf, position, extra_state, &
        ierror) bind(C)
      import
      type(c_ptr), value :: userbuf, filebuf
      integer(c_int) :: datatype, ierror
      integer(c_int64_t) :: count, position
      integer(c_intptr_t) :: extra_state
    end subroutine
    subroutine fortran_datarep_extent(datatype, extent, extra_state, ierror) bind(C)
      import
      integer(c_int) :: datatype, ierror
      integer(c_intptr_t) :: extent, extra_state
    end subroutine
  end interface

  ! The C functions the support routines call: most return one int about a communicator.
  abstract interface
    integer(c_int) function comm_query(comm, result) bind(C)
      import
      integer(c_intptr_t), value :: comm
      integer(c_int) :: result
    end function
  end interface
  procedure(comm_query), bind(C, name="MPI_Comm_test_inter") :: c_comm_test_inter
  procedure(comm_query), bind(C, name="MPI_Comm_size") :: c_comm_size
  procedure(comm_query), bind(C, name="MPI_Comm_remote_size") :: c_comm_remote_size
  procedure(comm_query), bind(C, name="MPI_Comm_rank") :: c_comm_rank
  procedure(comm_query), bind(C, name="MPI_Topo_test") :: c_topo_test
  procedure(comm_query), bind(C, name="MPI_Cartdim_get") :: c_cartdim_get
  interface
    integer(c_int) function c_graph_neighbors_count(comm, rank, n) &
        bind(C, name="MPI_Graph_neighbors_count")
      import
      integer(c_intptr_t), value :: comm
      integer(c_int), value :: rank
      integer(c_int) :: n
    end function
    integer(c_int) function c_dist_graph_neighbors_count(comm, indegree, outdegree, weighted) &
        bind(C, name="MPI_Dist_graph_neighbors_count")
      import
      integer(c_intptr_t), value :: comm
      integer(c_int) :: indegree, outdegree, weighted
    end function
  end interface

  ! Longest string a C function with a fixed maximum writes (MPI_MAX_LIBRARY_VERSION_STRING).
  integer(c_size_t), parameter :: longest_c_string = 8192

contains

  ! The address to give C for an argument the caller passed by reference.
  function crossmpi_address(p) result(q)
    type(c_ptr), value :: p
    type(c_ptr) :: q
    integer(c_intptr_t) :: a
    a = transfer(p, a)
    if (a == loc(f_bottom) .or. a == loc(f_status_ignore) .or. a == loc(f_statuses_ignore) &
        .or. a == loc(f_errcodes_ignore)) then
      a = 0
    else if (a == loc(f_in_place)) then
      a = c_in_place
    else if (a == loc(f_buffer_automatic)) then
      a = c_buffer_automatic
    else if (a == loc(f_unweighted)) then
      a = c_unweighted
    else if (a == loc(f_weights_empty)) then
      a = c_weights_empty
    end if
    q = transfer(a, q)
  end function

  ! The int at p, or 0 when p is NULL or the int is MPI_UNDEFINED.
  integer function crossmpi_int_at(p)
    type(c_ptr), value :: p
    integer(c_int), pointer :: v
    crossmpi_int_at = 0
    if (.not. c_associated(p)) return
    call c_f_pointer(p, v)
    if (v /= mpi_undefined) crossmpi_int_at = v
  end function

  ! Turns n request indices at p from C's 0-based to Fortran's 1-based numbering, when
  ! the call succeeded (or reported errors per status, with valid indices).
  subroutine crossmpi_one_based(ierror, p, n)
    integer(c_int), intent(in) :: ierror
    type(c_ptr), value :: p
    integer, intent(in) :: n
    integer(c_int), pointer :: v(:)
    if (ierror /= 0 .and. ierror /= err_in_status) return
    if (n <= 0 .or. .not. c_associated(p)) return
    call c_f_pointer(p, v, [n])
    where (v >= 0) v = v + 1
  end subroutine

  ! A NUL-terminated copy of a Fortran string without its trailing blanks.
  subroutine crossmpi_string_in(f, flen, s)
    character(kind=c_char), intent(in) :: f(*)
    integer(c_size_t), value :: flen
    character(kind=c_char), allocatable, intent(out) :: s(:)
    integer(c_size_t) :: n
    n = flen
    do while (n > 0)
      if (f(n) /= ' ') exit
      n = n - 1
    end do
    allocate(s(n + 1))
    s(1:n) = f(1:n)
    s(n + 1) = c_null_char
  end subroutine

  ! A string the standard strips both ends of in Fortran (info keys and values, a spawn
  ! command): leading blanks go too.
  subroutine crossmpi_stripped_string_in(f, flen, s)
    character(kind=c_char), intent(in) :: f(*)
    integer(c_size_t), value :: flen
    character(kind=c_char), allocatable, intent(out) :: s(:)
    integer(c_size_t) :: first
    first = 1
    do while (first <= flen)
      if (f(first) /= ' ') exit
      first = first + 1
    end do
    call crossmpi_string_in(f(first:flen), flen - first + 1, s)
  end subroutine

  ! Whether the C int a `flag` argument points to is set.
  logical function crossmpi_flag_set(p)
    type(c_ptr), value :: p
    integer(c_int), pointer :: v
    call c_f_pointer(p, v)
    crossmpi_flag_set = v /= 0
  end function

  ! A buffer for a C function to write a string into: as long as the Fortran argument
  ! and at least as long as any fixed MPI_MAX_* limit, plus the terminator.
  subroutine crossmpi_string_buffer(flen, s)
    integer(c_size_t), value :: flen
    character(kind=c_char), allocatable, intent(out) :: s(:)
    allocate(s(max(flen, longest_c_string) + 1))
    s(1) = c_null_char
  end subroutine

  ! The C value of an in/out string length that counts the terminating NUL in C only
  ! (MPI_INFO_GET_STRING's buflen, MPI_SESSION_GET_NTH_PSET's pset_len): room for n
  ! characters, at most the flen of the Fortran string (the buffer of
  ! crossmpi_string_buffer has room for that many), plus the NUL; n <= 0 (0 asks for the
  ! length alone) goes to C unchanged.
  integer(c_int) function crossmpi_c_length(n, flen)
    integer(c_int), intent(in) :: n
    integer(c_size_t), value :: flen
    crossmpi_c_length = n
    if (n > 0) crossmpi_c_length = int(min(int(n, c_size_t), flen), c_int) + 1
  end function

  ! Copies the C string s into the Fortran string f, blank-padded (truncated if longer).
  subroutine crossmpi_string_out(s, f, flen)
    character(kind=c_char), intent(in) :: s(:)
    character(kind=c_char), intent(inout) :: f(*)
    integer(c_size_t), value :: flen
    integer(c_size_t) :: i
    logical :: ended
    ended = .false.
    do i = 1, flen
      if (.not. ended) ended = s(i) == c_null_char
      if (ended) then
        f(i) = ' '
      else
        f(i) = s(i)
      end if
    end do
  end subroutine

  ! The C extra state of a keyval whose callbacks are the Fortran procedures given.
  type(c_ptr) function crossmpi_keyval_record(copy_fn, delete_fn, extra_state, narrow)
    type(c_funptr), value :: copy_fn, delete_fn
    integer(c_intptr_t), value :: extra_state
    logical, value :: narrow
    type(keyval_record), pointer :: record
    allocate(record)
    record = keyval_record(copy_fn, delete_fn, extra_state, narrow)
    crossmpi_keyval_record = c_loc(record)
  end function

  ! The predefined attribute procedures of the Fortran bindings, which programs pass to
  ! MPI_*_CREATE_KEYVAL and MPI_KEYVAL_CREATE (or call themselves). fortran/build.sh
  ! exports each communicator one also under the datatype and window names
  ! (MPI_TYPE_NULL_COPY_FN...), since the object handle is only passed through, and the
  ! null ones under the MPI-1 names (MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN), which touch
  ! no attribute value either. A keyval given MPI_COMM_DUP_FN or MPI_DUP_FN gets C's
  ! MPI_COMM_DUP_FN instead (crossmpi_copy_callback).
  subroutine crossmpi_f_null_copy_fn(oldobj, keyval, extra_state, value_in, value_out, flag, &
      ierror) bind(C, name="mpi_comm_null_copy_fn_")
    integer(c_int) :: oldobj, keyval, flag, ierror
    integer(c_intptr_t) :: extra_state, value_in, value_out
    flag = 0
    ierror = 0
  end subroutine

  subroutine crossmpi_f_dup_fn(oldobj, keyval, extra_state, value_in, value_out, flag, ierror) &
      bind(C, name="mpi_comm_dup_fn_")
    integer(c_int) :: oldobj, keyval, flag, ierror
    integer(c_intptr_t) :: extra_state, value_in, value_out
    value_out = value_in
    flag = 1
    ierror = 0
  end subroutine

  subroutine crossmpi_f_null_delete_fn(obj, keyval, value, extra_state, ierror) &
      bind(C, name="mpi_comm_null_delete_fn_")
    integer(c_int) :: obj, keyval, ierror
    integer(c_intptr_t) :: value, extra_state
    ierror = 0
  end subroutine

  ! MPI_DUP_FN of MPI-1 keyvals (MPI_KEYVAL_CREATE): attribute values are default INTEGERs.
  subroutine crossmpi_f_dup_fn_int(oldcomm, keyval, extra_state, value_in, value_out, flag, &
      ierror) bind(C, name="mpi_dup_fn_")
    integer(c_int) :: oldcomm, keyval, extra_state, value_in, value_out, flag, ierror
    value_out = value_in
    flag = 1
    ierror = 0
  end subroutine

  ! The copy callback to give C for the Fortran procedure fn: the trampoline, or for
  ! MPI_COMM_DUP_FN (and its datatype and window names) and MPI_DUP_FN, C's
  ! MPI_COMM_DUP_FN, with which the library copies the attribute as it is: an address
  ! stays an address, a Fortran integer gets storage of its own (through the trampoline
  ! the copy of an address would become an integer, and MPI_DUP_FN's INTEGER would cut
  ! a value set with MPI_COMM_SET_ATTR to 32 bits).
  type(c_funptr) function crossmpi_copy_callback(fn)
    type(c_funptr), value :: fn
    crossmpi_copy_callback = c_funloc(crossmpi_copy_trampoline)
    if (c_associated(fn, c_funloc(crossmpi_f_dup_fn)) .or. &
        c_associated(fn, c_funloc(crossmpi_f_dup_fn_int))) &
      crossmpi_copy_callback = transfer(c_dup_fn, c_null_funptr)
  end function

  ! C copy callback of every keyval created from Fortran (communicators, datatypes and
  ! windows alike: the object handle is only passed through).
  integer(c_int) function crossmpi_copy_trampoline(oldobj, keyval, extra, value_in, value_out, flag) &
      bind(C)
    integer(c_intptr_t), value :: oldobj
    integer(c_int), value :: keyval
    type(c_ptr), value :: extra
    integer(c_intptr_t), value :: value_in
    integer(c_intptr_t), intent(out) :: value_out
    integer(c_int), intent(out) :: flag
    type(keyval_record), pointer :: record
    procedure(fortran_copy_attr), pointer :: copy
    procedure(fortran_copy_attr_int), pointer :: copy_int
    integer(c_int) :: f_oldobj, f_keyval, f_flag, ierror, f_extra_int, f_in_int, f_out_int
    integer(c_intptr_t) :: f_in, f_out
    call c_f_pointer(extra, record)
    f_oldobj = int(oldobj, c_int)
    f_keyval = keyval
    f_flag = 0
    ierror = 0
    if (record%narrow) then
      call c_f_procpointer(record%copy_fn, copy_int)
      f_extra_int = int(record%extra_state, c_int)
      f_in_int = int(value_in, c_int)
      f_out_int = 0
      call copy_int(f_oldobj, f_keyval, f_extra_int, f_in_int, f_out_int, f_flag, ierror)
      f_out = f_out_int
    else
      call c_f_procpointer(record%copy_fn, copy)
      f_in = value_in
      f_out = 0
      call copy(f_oldobj, f_keyval, record%extra_state, f_in, f_out, f_flag, ierror)
    end if
    value_out = f_out
    flag = merge(1, 0, f_flag /= 0)
    crossmpi_copy_trampoline = ierror
  end function

  integer(c_int) function crossmpi_delete_trampoline(obj, keyval, value, extra) bind(C)
    integer(c_intptr_t), value :: obj
    integer(c_int), value :: keyval
    integer(c_intptr_t), value :: value
    type(c_ptr), value :: extra
    type(keyval_record), pointer :: record
    procedure(fortran_delete_attr), pointer :: delete
    procedure(fortran_delete_attr_int), pointer :: delete_int
    integer(c_int) :: f_obj, f_keyval, ierror, f_value_int, f_extra_int
    integer(c_intptr_t) :: f_value
    call c_f_pointer(extra, record)
    f_obj = int(obj, c_int)
    f_keyval = keyval
    ierror = 0
    if (record%narrow) then
      call c_f_procpointer(record%delete_fn, delete_int)
      f_value_int = int(value, c_int)
      f_extra_int = int(record%extra_state, c_int)
      call delete_int(f_obj, f_keyval, f_value_int, f_extra_int, ierror)
    else
      call c_f_procpointer(record%delete_fn, delete)
      f_value = value
      call delete(f_obj, f_keyval, f_value, record%extra_state, ierror)
    end if
    crossmpi_delete_trampoline = ierror
  end function

  ! The C extra state of a generalized request with Fortran procedures. `extra_state`
  ! is the program's variable (passed by reference), which must outlive the request.
  type(c_ptr) function crossmpi_grequest_record(query_fn, free_fn, cancel_fn, extra_state)
    type(c_funptr), value :: query_fn, free_fn, cancel_fn
    integer(c_intptr_t), target, intent(in) :: extra_state
    type(grequest_record), pointer :: record
    allocate(record)
    record = grequest_record(query_fn, free_fn, cancel_fn, c_loc(extra_state))
    crossmpi_grequest_record = c_loc(record)
  end function

  ! The record behind a generalized request's C extra state, and its program variable.
  subroutine grequest_parts(extra, record, extra_state)
    type(c_ptr), value :: extra
    type(grequest_record), pointer, intent(out) :: record
    integer(c_intptr_t), pointer, intent(out) :: extra_state
    call c_f_pointer(extra, record)
    call c_f_pointer(record%extra_state, extra_state)
  end subroutine

  integer(c_int) function crossmpi_grequest_query_trampoline(extra, status) bind(C)
    type(c_ptr), value :: extra, status
    type(grequest_record), pointer :: record
    integer(c_intptr_t), pointer :: extra_state
    procedure(fortran_grequest_query), pointer :: query
    integer(c_int) :: ierror
    call grequest_parts(extra, record, extra_state)
    call c_f_procpointer(record%query_fn, query)
    ierror = 0
    call query(extra_state, status, ierror)
    crossmpi_grequest_query_trampoline = ierror
  end function

  integer(c_int) function crossmpi_grequest_free_trampoline(extra) bind(C)
    type(c_ptr), value :: extra
    type(grequest_record), pointer :: record
    integer(c_intptr_t), pointer :: extra_state
    procedure(fortran_grequest_free), pointer :: free
    integer(c_int) :: ierror
    call grequest_parts(extra, record, extra_state)
    call c_f_procpointer(record%free_fn, free)
    ierror = 0
    call free(extra_state, ierror)
    deallocate(record)
    crossmpi_grequest_free_trampoline = ierror
  end function

  integer(c_int) function crossmpi_grequest_cancel_trampoline(extra, complete) bind(C)
    type(c_ptr), value :: extra
    integer(c_int), value :: complete
    type(grequest_record), pointer :: record
    integer(c_intptr_t), pointer :: extra_state
    procedure(fortran_grequest_cancel), pointer :: cancel
    integer(c_int) :: f_complete, ierror
    call grequest_parts(extra, record, extra_state)
    call c_f_procpointer(record%cancel_fn, cancel)
    f_complete = merge(1, 0, complete /= 0)
    ierror = 0
    call cancel(extra_state, f_complete, ierror)
    crossmpi_grequest_cancel_trampoline = ierror
  end function

  ! MPI_CONVERSION_FN_NULL (and MPI_CONVERSION_FN_NULL_C): never called; passing it
  ! gives C a NULL conversion function (crossmpi_conversion_callback).
  subroutine crossmpi_conversion_fn_null(userbuf, datatype, count, filebuf, position, &
      extra_state, ierror) bind(C, name="mpi_conversion_fn_null_")
    type(c_ptr), value :: userbuf, filebuf
    integer(c_int) :: datatype, count, ierror
    integer(c_int64_t) :: position
    integer(c_intptr_t) :: extra_state
    ierror = 0
  end subroutine

  ! The conversion function to give C for the Fortran procedure fn: the trampoline,
  ! or NULL for MPI_CONVERSION_FN_NULL.
  type(c_funptr) function crossmpi_conversion_callback(fn, trampoline)
    type(c_funptr), value :: fn, trampoline
    crossmpi_conversion_callback = trampoline
    if (c_associated(fn, c_funloc(crossmpi_conversion_fn_null))) &
      crossmpi_conversion_callback = c_null_funptr
  end function

  ! The C extra state of a data representation with Fortran procedures.
  type(c_ptr) function crossmpi_datarep_record(read_fn, write_fn, extent_fn, extra_state)
    type(c_funptr), value :: read_fn, write_fn, extent_fn
    integer(c_intptr_t), intent(in) :: extra_state
    type(datarep_record), pointer :: record
    allocate(record)
    record = datarep_record(read_fn, write_fn, extent_fn, extra_state)
    crossmpi_datarep_record = c_loc(record)
  end function

  ! Calls the read (reading) or write conversion procedure of the datarep whose record
  ! is extra with C's arguments; wide_count: the procedure was registered by
  ! MPI_Register_datarep_c and takes an INTEGER(MPI_COUNT_KIND) count.
  integer(c_int) function convert(extra, reading, wide_count, userbuf, datatype, count, &
      filebuf, position)
    type(c_ptr), intent(in) :: extra
    logical, intent(in) :: reading, wide_count
    type(c_ptr), value :: userbuf, filebuf
    integer(c_intptr_t), intent(in) :: datatype
    integer(c_int64_t), intent(in) :: count, position
    type(datarep_record), pointer :: record
    type(c_funptr) :: fn
    procedure(fortran_conversion), pointer :: narrow
    procedure(fortran_conversion_c), pointer :: wide
    integer(c_int) :: f_datatype, f_count, ierror
    integer(c_int64_t) :: f_count_c, f_position
    call c_f_pointer(extra, record)
    fn = record%write_fn
    if (reading) fn = record%read_fn
    f_datatype = int(datatype, c_int)
    f_position = position
    ierror = 0
    if (wide_count) then
      call c_f_procpointer(fn, wide)
      f_count_c = count
      call wide(userbuf, f_datatype, f_count_c, filebuf, f_position, record%extra_state, ierror)
    else
      call c_f_procpointer(fn, narrow)
      f_count = int(count, c_int)
      call narrow(userbuf, f_datatype, f_count, filebuf, f_position, record%extra_state, ierror)
    end if
    convert = ierror
  end function

  ! The C conversion callbacks: read and write, with an int count (MPI_Register_datarep)
  ! or an MPI_Count (MPI_Register_datarep_c).
  integer(c_int) function crossmpi_datarep_read_trampoline(userbuf, datatype, count, filebuf, &
      position, extra) bind(C)
    type(c_ptr), value :: userbuf, filebuf, extra
    integer(c_intptr_t), value :: datatype
    integer(c_int), value :: count
    integer(c_int64_t), value :: position
    crossmpi_datarep_read_trampoline = convert(extra, .true., .false., userbuf, datatype, &
      int(count, c_int64_t), filebuf, position)
  end function

  integer(c_int) function crossmpi_datarep_write_trampoline(userbuf, datatype, count, filebuf, &
      position, extra) bind(C)
    type(c_ptr), value :: userbuf, filebuf, extra
    integer(c_intptr_t), value :: datatype
    integer(c_int), value :: count
    integer(c_int64_t), value :: position
    crossmpi_datarep_write_trampoline = convert(extra, .false., .false., userbuf, datatype, &
      int(count, c_int64_t), filebuf, position)
  end function

  integer(c_int) function crossmpi_datarep_read_c_trampoline(userbuf, datatype, count, filebuf, &
      position, extra) bind(C)
    type(c_ptr), value :: userbuf, filebuf, extra
    integer(c_intptr_t), value :: datatype
    integer(c_int64_t), value :: count, position
    crossmpi_datarep_read_c_trampoline = convert(extra, .true., .true., userbuf, datatype, count, &
      filebuf, position)
  end function

  integer(c_int) function crossmpi_datarep_write_c_trampoline(userbuf, datatype, count, &
      filebuf, position, extra) bind(C)
    type(c_ptr), value :: userbuf, filebuf, extra
    integer(c_intptr_t), value :: datatype
    integer(c_int64_t), value :: count, position
    crossmpi_datarep_write_c_trampoline = convert(extra, .false., .true., userbuf, datatype, &
      count, filebuf, position)
  end function

  integer(c_int) function crossmpi_datarep_extent_trampoline(datatype, extent, extra) bind(C)
    integer(c_intptr_t), value :: datatype
    integer(c_intptr_t), intent(out) :: extent
    type(c_ptr), value :: extra
    type(datarep_record), pointer :: record
    procedure(fortran_datarep_extent), pointer :: fn
    integer(c_int) :: f_datatype, ierror
    integer(c_intptr_t) :: f_extent
    call c_f_pointer(extra, record)
    call c_f_procpointer(record%extent_fn, fn)
    f_datatype = int(datatype, c_int)
    f_extent = 0
    ierror = 0
    call fn(f_datatype, f_extent, record%extra_state, ierror)
    extent = f_extent
    crossmpi_datarep_extent_trampoline = ierror
  end function

  ! Number of characters of the Fortran string s(first:first+flen-1) without trailing
  ! blanks.
  integer(c_size_t) function trimmed_length(s, first, flen)
    character(kind=c_char), intent(in) :: s(:)
    integer(c_size_t), intent(in) :: first, flen
    trimmed_length = flen
    do while (trimmed_length > 0)
      if (s(first + trimmed_length - 1) /= ' ') exit
      trimmed_length = trimmed_length - 1
    end do
  end function

  ! Number of leading blanks of the Fortran string s(first:first+flen-1).
  integer(c_size_t) function leading_blanks(s, first, flen)
    character(kind=c_char), intent(in) :: s(:)
    integer(c_size_t), intent(in) :: first, flen
    leading_blanks = 0
    do while (leading_blanks < flen)
      if (s(first + leading_blanks) /= ' ') exit
      leading_blanks = leading_blanks + 1
    end do
  end function

  ! Fills list with C strings copied from the Fortran CHARACTER elements at p of length
  ! flen, without their leading and trailing blanks (the standard strips both from the
  ! spawn calls' commands and arguments in Fortran): elements(i) is an element index
  ! (0-based), or -1 for a NULL pointer (an argv terminator). list%ptrs(i) points at the
  ! string of elements(i).
  subroutine fill_strings(p, flen, elements, list)
    type(c_ptr), value :: p
    integer(c_size_t), value :: flen
    integer(c_size_t), intent(in) :: elements(:)
    type(crossmpi_string_list), target, intent(inout) :: list
    character(kind=c_char), pointer :: s(:)
    integer(c_size_t) :: i, n, total, at, first, lead
    call c_f_pointer(p, s, [flen * (maxval([elements, 0_c_size_t]) + 1)])
    total = 0
    do i = 1, size(elements)
      if (elements(i) >= 0) total = total + trimmed_length(s, elements(i) * flen + 1, flen) + 1
    end do
    allocate(list%chars(max(total, 1_c_size_t)), list%ptrs(max(size(elements), 1)))
    at = 1
    do i = 1, size(elements)
      list%ptrs(i) = c_null_ptr
      if (elements(i) < 0) cycle
      first = elements(i) * flen + 1
      n = trimmed_length(s, first, flen)
      lead = leading_blanks(s, first, n)
      first = first + lead
      n = n - lead
      list%chars(at:at + n - 1) = s(first:first + n - 1)
      list%chars(at + n) = c_null_char
      list%ptrs(i) = c_loc(list%chars(at))
      at = at + n + 1
    end do
  end subroutine

  ! Number of elements before the first blank one, from element `first` on, stepping by
  ! `stride` elements (a row of a column-major CHARACTER array).
  integer(c_size_t) function argv_length(p, flen, first, stride)
    type(c_ptr), value :: p
    integer(c_size_t), intent(in) :: flen, first, stride
    character(kind=c_char), pointer :: s(:)
    argv_length = 0
    if (flen == 0) return
    do
      call c_f_pointer(p, s, [flen * (first + stride * argv_length + 1)])
      if (trimmed_length(s, (first + stride * argv_length) * flen + 1, flen) == 0) return
      argv_length = argv_length + 1
    end do
  end function

  ! Whether the calling process is rank root of comm (where the spawn functions read
  ! their arguments significant only at the root).
  logical function crossmpi_is_root(root, comm)
    integer(c_int), intent(in) :: root, comm
    crossmpi_is_root = comm_query_result(c_comm_rank, comm) == root
  end function

  ! MPI_COMM_SPAWN's argv: elements up to the first blank one, NULL-terminated for C;
  ! MPI_ARGV_NULL gives NULL.
  subroutine crossmpi_argv_in(p, flen, list)
    type(c_ptr), value :: p
    integer(c_size_t), value :: flen
    type(crossmpi_string_list), target, intent(inout) :: list
    integer(c_size_t) :: n, i
    if (transfer(p, 0_c_intptr_t) == loc(f_argv_null)) return
    n = argv_length(p, flen, 0_c_size_t, 1_c_size_t)
    call fill_strings(p, flen, [(i, i = 0, n - 1), -1_c_size_t], list)
    list%c = c_loc(list%ptrs)
  end subroutine

  ! MPI_COMM_SPAWN_MULTIPLE's array_of_commands: count strings.
  subroutine crossmpi_strings_in(p, flen, count, list)
    type(c_ptr), value :: p
    integer(c_size_t), value :: flen
    integer(c_int), intent(in) :: count
    type(crossmpi_string_list), target, intent(inout) :: list
    integer(c_size_t) :: i
    call fill_strings(p, flen, [(i, i = 0, count - 1)], list)
    list%c = c_loc(list%ptrs)
  end subroutine

  ! MPI_COMM_SPAWN_MULTIPLE's ARRAY_OF_ARGV(count, *): row i is the argv of command i,
  ! ended by a blank element; MPI_ARGVS_NULL gives NULL.
  subroutine crossmpi_argv_lists_in(p, flen, count, list)
    type(c_ptr), value :: p
    integer(c_size_t), value :: flen
    integer(c_int), intent(in) :: count
    type(crossmpi_string_list), target, intent(inout) :: list
    integer(c_size_t) :: i, j, n, rows
    integer(c_size_t), allocatable :: elements(:), starts(:)
    if (transfer(p, 0_c_intptr_t) == loc(f_argvs_null) .or. count <= 0) return
    rows = count
    allocate(elements(0), starts(rows))
    do i = 0, rows - 1
      n = argv_length(p, flen, i, rows)
      starts(i + 1) = size(elements) + 1
      elements = [elements, (i + j * rows, j = 0, n - 1), -1_c_size_t]
    end do
    call fill_strings(p, flen, elements, list)
    allocate(list%lists(rows))
    do i = 1, rows
      list%lists(i) = c_loc(list%ptrs(starts(i)))
    end do
    list%c = c_loc(list%lists)
  end subroutine

  ! What the C function f says about a communicator (0 if it fails).
  integer function comm_query_result(f, comm)
    procedure(comm_query) :: f
    integer(c_int), intent(in) :: comm
    integer(c_int) :: result
    result = 0
    if (f(int(comm, c_intptr_t), result) /= 0) result = 0
    comm_query_result = result
  end function

  ! Number of datatypes MPI_Alltoallw reads per side: the size of the remote group of an
  ! intercommunicator, else of the group.
  integer function crossmpi_alltoallw_length(comm)
    integer(c_int), intent(in) :: comm
    if (comm_query_result(c_comm_test_inter, comm) /= 0) then
      crossmpi_alltoallw_length = max(comm_query_result(c_comm_remote_size, comm), 0)
    else
      crossmpi_alltoallw_length = max(comm_query_result(c_comm_size, comm), 0)
    end if
  end function

  ! Number of datatypes MPI_Neighbor_alltoallw reads on one side: the out-degree
  ! (outgoing) or in-degree of the communicator's topology (2 * ndims for a Cartesian
  ! one); 0 without a topology, where the C function reports the error.
  integer function crossmpi_neighbor_count(comm, outgoing)
    integer(c_int), intent(in) :: comm
    logical, intent(in) :: outgoing
    integer, parameter :: cart = 211, graph = 212, dist_graph = 213
    integer(c_intptr_t) :: c
    integer(c_int) :: n, indegree, outdegree, weighted
    c = int(comm, c_intptr_t)
    n = 0
    select case (comm_query_result(c_topo_test, comm))
    case (cart)
      n = 2 * comm_query_result(c_cartdim_get, comm)
    case (graph)
      if (c_graph_neighbors_count(c, comm_query_result(c_comm_rank, comm), n) /= 0) n = 0
    case (dist_graph)
      indegree = 0
      outdegree = 0
      if (c_dist_graph_neighbors_count(c, indegree, outdegree, weighted) == 0) &
        n = merge(outdegree, indegree, outgoing)
    end select
    crossmpi_neighbor_count = max(n, 0)
  end function
end module crossmpi_fortran_support
