! ranks: 1 2
! requires: MPI_Info_create_env
! MPI_INFO_CREATE_ENV, whose Fortran binding has no argc/argv (C gets none): from
! `use mpi` and from `use mpi_f08` (ierror omitted), the "command" key names this
! program.
module info_env_f08
  implicit none
contains
  ! The value of "command" in a new environment info object, made through mpi_f08.
  subroutine command_f08(command, found)
    use mpi_f08
    character(len=*), intent(out) :: command
    logical, intent(out) :: found
    type(MPI_Info) :: info
    call MPI_Info_create_env(info)
    call MPI_Info_get(info, 'command', len(command), command, found)
    call MPI_Info_free(info)
  end subroutine
end module

program info_env
  use mpi
  use checks
  use info_env_f08
  implicit none
  integer :: ierr, info
  character(len=MPI_MAX_INFO_VAL) :: command, command_f
  logical :: flag, flag_f

  call MPI_Init(ierr)
  call MPI_Info_create_env(info, ierr)
  call check_success(ierr, 'MPI_Info_create_env')
  call check(info /= MPI_INFO_NULL, 'an info object')
  call MPI_Info_get(info, 'command', len(command), command, flag, ierr)
  call check(flag, 'the "command" key is set')
  call check(index(command, 'info_env') > 0, 'command names the program: '//trim(command))
  call MPI_Info_free(info, ierr)
  call command_f08(command_f, flag_f)
  call check(flag_f .and. command_f == command, 'same from mpi_f08')
  call passed('info_env')
  call MPI_Finalize(ierr)
end program
