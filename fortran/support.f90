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
  common /crossmpi_bottom/ f_bottom
  common /crossmpi_in_place/ f_in_place
  common /crossmpi_buffer_automatic/ f_buffer_automatic
  common /crossmpi_status_ignore/ f_status_ignore
  common /crossmpi_statuses_ignore/ f_statuses_ignore
  common /crossmpi_errcodes_ignore/ f_errcodes_ignore
  common /crossmpi_unweighted/ f_unweighted
  common /crossmpi_weights_empty/ f_weights_empty

  ! C values of the sentinels (mpi.h): MPI_BOTTOM, MPI_STATUS(ES)_IGNORE and
  ! MPI_ERRCODES_IGNORE are NULL.
  integer(c_intptr_t), parameter :: c_in_place = 1, c_buffer_automatic = 2
  integer(c_intptr_t), parameter :: c_unweighted = 10, c_weights_empty = 11

  ! Predefined attribute keys whose C value is a pointer to an int (to an MPI_Aint for
  ! MPI_WIN_SIZE) while Fortran receives the value itself.
  integer, parameter :: first_comm_key = 501, last_comm_key = 507
  integer, parameter :: win_base_key = 601, win_size_key = 603, last_win_key = 605
  integer, parameter :: mpi_undefined = -32766, err_in_status = 19

  ! What a keyval created from Fortran keeps as its C extra state: the Fortran copy and
  ! delete procedures and the program's extra state. C calls the trampolines below with
  ! arguments by value; they call the Fortran procedures with arguments by reference.
  ! A record lives as long as the program (keyvals are few; MPI_*_free_keyval does not
  ! hand the extra state back).
  type :: keyval_record
    type(c_funptr) :: copy_fn, delete_fn
    integer(c_intptr_t) :: extra_state
  end type

  ! The Fortran callbacks, seen through interoperable interfaces with every argument by
  ! reference (the flag is a LOGICAL, 4 bytes like a C int).
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

  ! A buffer for a C function to write a string into: as long as the Fortran argument
  ! and at least as long as any fixed MPI_MAX_* limit, plus the terminator.
  subroutine crossmpi_string_buffer(flen, s)
    integer(c_size_t), value :: flen
    character(kind=c_char), allocatable, intent(out) :: s(:)
    allocate(s(max(flen, longest_c_string) + 1))
    s(1) = c_null_char
  end subroutine

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

  ! The value a Fortran caller gets for an attribute that C returned as v: predefined
  ! keys point at their value, user keys hold it.
  integer(c_intptr_t) function crossmpi_attr_value(keyval, v)
    integer(c_int), intent(in) :: keyval
    integer(c_intptr_t), intent(in) :: v
    integer(c_int), pointer :: i
    integer(c_intptr_t), pointer :: a
    crossmpi_attr_value = v
    if (v == 0) return
    if ((keyval >= first_comm_key .and. keyval <= last_comm_key) .or. &
        (keyval > win_base_key .and. keyval <= last_win_key .and. keyval /= win_size_key)) then
      call c_f_pointer(transfer(v, c_null_ptr), i)
      crossmpi_attr_value = i
    else if (keyval == win_size_key) then
      call c_f_pointer(transfer(v, c_null_ptr), a)
      crossmpi_attr_value = a
    end if
  end function

  ! The C extra state of a keyval whose callbacks are the Fortran procedures given.
  type(c_ptr) function crossmpi_keyval_record(copy_fn, delete_fn, extra_state)
    type(c_funptr), value :: copy_fn, delete_fn
    integer(c_intptr_t), intent(in) :: extra_state
    type(keyval_record), pointer :: record
    allocate(record)
    record = keyval_record(copy_fn, delete_fn, extra_state)
    crossmpi_keyval_record = c_loc(record)
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
    integer(c_int) :: f_oldobj, f_keyval, f_flag, ierror
    integer(c_intptr_t) :: f_in, f_out
    call c_f_pointer(extra, record)
    call c_f_procpointer(record%copy_fn, copy)
    f_oldobj = int(oldobj, c_int)
    f_keyval = keyval
    f_in = value_in
    f_out = 0
    f_flag = 0
    ierror = 0
    call copy(f_oldobj, f_keyval, record%extra_state, f_in, f_out, f_flag, ierror)
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
    integer(c_int) :: f_obj, f_keyval, ierror
    integer(c_intptr_t) :: f_value
    call c_f_pointer(extra, record)
    call c_f_procpointer(record%delete_fn, delete)
    f_obj = int(obj, c_int)
    f_keyval = keyval
    f_value = value
    ierror = 0
    call delete(f_obj, f_keyval, f_value, record%extra_state, ierror)
    crossmpi_delete_trampoline = ierror
  end function

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
