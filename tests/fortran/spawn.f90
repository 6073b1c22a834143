! ranks: 1 2
! requires: MPI_Comm_spawn MPI_Comm_spawn_multiple MPI_Comm_get_parent MPI_Comm_disconnect
! Dynamic processes from Fortran: MPI_COMM_SPAWN with a CHARACTER argv ended by a blank
! element (leading and trailing blanks dropped, from the command too, as the standard
! says for Fortran), MPI_COMM_SPAWN_MULTIPLE with ARRAY_OF_ARGV(COUNT, *) and
! MPI_ERRCODES_IGNORE, and MPI_ARGV_NULL. The program spawns itself; a child knows
! its role from its first argument and tells the parents whether its arguments arrived.
! Every spawn must succeed (crossmpi's mpirun and Open MPI's both spawn).
module spawn_child
  use mpi
  use checks
  implicit none
contains
  ! A spawned process: reports to the parents' rank 0 whether its arguments are the
  ! ones it was given.
  subroutine child(parent, role)
    integer, intent(inout) :: parent
    character(len=*), intent(in) :: role
    integer :: ierr, rank, ok, nargs
    character(len=32) :: arg
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    nargs = command_argument_count()
    ok = 0
    call get_command_argument(2, arg)
    select case (role)
    case ('child')
      if (nargs == 2 .and. arg == 'two words') ok = 1
    case ('multi')
      if (nargs == 2 .and. arg == merge('a', 'b', rank == 0)) ok = 1
    case ('bare')
      if (nargs == 0) ok = 1
    end select
    call MPI_Send(ok, 1, MPI_INTEGER, 0, rank, parent, ierr)
    call MPI_Comm_disconnect(parent, ierr)
  end subroutine
end module

program spawn
  use mpi
  use checks
  use spawn_child
  implicit none
  integer :: ierr, rank, parent, intercomm, errcodes(2)
  character(len=512) :: self
  character(len=12) :: argv(3)
  character(len=16) :: role

  call MPI_Init(ierr)
  call MPI_Comm_get_parent(parent, ierr)
  if (parent /= MPI_COMM_NULL) then
    role = ''
    if (command_argument_count() > 0) call get_command_argument(1, role)
    if (role == '') role = 'bare'
    call child(parent, role)
    call MPI_Finalize(ierr)
    stop
  end if
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call get_command_argument(0, self)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)

  argv = [character(len=12) :: 'child', '  two words ', '']
  errcodes = -1
  intercomm = MPI_COMM_NULL
  call MPI_Comm_spawn('  ' // trim(self), argv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, intercomm, &
                      errcodes, ierr)
  call check_success(ierr, 'MPI_Comm_spawn')
  call check(intercomm /= MPI_COMM_NULL, 'an intercommunicator')
  call check(all(errcodes == MPI_SUCCESS), 'every child started')
  call collect(intercomm, 2, 'MPI_Comm_spawn children got argv')

  call spawn_two_commands(trim(self))

  call MPI_Comm_spawn(self, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, intercomm, &
                      MPI_ERRCODES_IGNORE, ierr)
  call check_success(ierr, 'MPI_Comm_spawn with MPI_ARGV_NULL')
  call collect(intercomm, 1, 'MPI_ARGV_NULL gives no arguments')
  call passed('spawn')
  call MPI_Finalize(ierr)

contains
  ! Rank 0 receives one verdict from each of n children; then all disconnect.
  subroutine collect(intercomm, n, what)
    integer, intent(inout) :: intercomm
    integer, intent(in) :: n
    character(len=*), intent(in) :: what
    integer :: i, ok, total, ierr
    total = 0
    if (rank == 0) then
      do i = 0, n - 1
        call MPI_Recv(ok, 1, MPI_INTEGER, i, i, intercomm, MPI_STATUS_IGNORE, ierr)
        total = total + ok
      end do
      call check(total == n, what)
    end if
    call MPI_Comm_disconnect(intercomm, ierr)
  end subroutine

  ! MPI_Comm_spawn_multiple with the program twice, argv rows ('multi', ' a') and
  ! ('multi', 'b') in a CHARACTER array as long as the command.
  subroutine spawn_two_commands(self)
    character(len=*), intent(in) :: self
    character(len=len(self)) :: commands(2), argvs(2, 3)
    integer :: ierr, intercomm
    commands = self
    argvs = ''
    argvs(:, 1) = 'multi'
    argvs(1, 2) = ' a'
    argvs(2, 2) = 'b'
    call MPI_Comm_spawn_multiple(2, commands, argvs, [1, 1], [MPI_INFO_NULL, MPI_INFO_NULL], 0, &
                                 MPI_COMM_WORLD, intercomm, MPI_ERRCODES_IGNORE, ierr)
    call check_success(ierr, 'MPI_Comm_spawn_multiple')
    call collect(intercomm, 2, 'MPI_Comm_spawn_multiple children got their argv rows')
  end subroutine
end program
