! ranks: 1 2
! requires: MPI_Info_create_env MPI_Info_get_string MPI_Session_get_nth_pset
! MPI_INFO_CREATE_ENV, whose Fortran binding has no argc/argv (C gets none): from
! `use mpi` and from `use mpi_f08` (ierror omitted), the "command" key names this
! program. The in/out lengths of MPI_INFO_GET_STRING and MPI_SESSION_GET_NTH_PSET, which
! count C's terminating NUL in C only: 0 asks for the length alone and leaves the string
! unchanged, a smaller length truncates, a larger one (than the string) is the string's.
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

  ! MPI_Info_get_string through mpi_f08 (ierror omitted).
  subroutine get_string_f08(key, buflen, value, found)
    use mpi_f08
    character(len=*), intent(in) :: key
    integer, intent(inout) :: buflen
    character(len=*), intent(inout) :: value
    logical, intent(out) :: found
    type(MPI_Info) :: info
    call MPI_Info_create(info)
    call MPI_Info_set(info, 'file', '123')
    call MPI_Info_get_string(info, key, buflen, value, found)
    call MPI_Info_free(info)
  end subroutine
end module

program info_env
  use mpi
  use checks
  use info_env_f08
  implicit none
  integer :: ierr, info, buflen, session, npsets, pset_len
  character(len=MPI_MAX_INFO_VAL) :: command, command_f
  character(len=64) :: value, pset_name
  character(len=2) :: short
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

  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'file', '123', ierr)
  buflen = 0
  value = 'Canary'
  call MPI_Info_get_string(info, 'file', buflen, value, flag, ierr)
  call check_success(ierr, 'MPI_Info_get_string')
  call check(flag .and. buflen == 3 .and. value == 'Canary', 'buflen 0: the length alone')
  buflen = 2
  call MPI_Info_get_string(info, 'file', buflen, value, flag, ierr)
  call check(flag .and. buflen == 3 .and. value == '12', 'buflen 2: "12", length 3')
  buflen = len(value)
  call MPI_Info_get_string(info, 'file', buflen, value, flag, ierr)
  call check(flag .and. buflen == 3 .and. value == '123', 'buflen 64: "123", length 3')
  buflen = 64
  call MPI_Info_get_string(info, 'file', buflen, short, flag, ierr)
  call check(flag .and. buflen == 3 .and. short == '12', 'buflen beyond the string truncates')
  buflen = 7
  value = 'Canary'
  call MPI_Info_get_string(info, 'nokey', buflen, value, flag, ierr)
  call check(.not. flag .and. buflen == 7 .and. value == 'Canary', 'a missing key changes nothing')
  call MPI_Info_free(info, ierr)
  buflen = 1
  call get_string_f08('file', buflen, value, flag)
  call check(flag .and. buflen == 3 .and. value == '1', 'buflen 1 from mpi_f08')

  call MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, session, ierr)
  call check_success(ierr, 'MPI_Session_init')
  call MPI_Session_get_num_psets(session, MPI_INFO_NULL, npsets, ierr)
  call check(npsets >= 1, 'a process set')
  pset_len = 0
  pset_name = 'Canary'
  call MPI_Session_get_nth_pset(session, MPI_INFO_NULL, 0, pset_len, pset_name, ierr)
  call check_success(ierr, 'MPI_Session_get_nth_pset')
  call check(pset_len > 0 .and. pset_name == 'Canary', 'pset_len 0: the length alone')
  buflen = pset_len
  pset_len = len(pset_name)
  call MPI_Session_get_nth_pset(session, MPI_INFO_NULL, 0, pset_len, pset_name, ierr)
  call check(pset_len == buflen .and. len_trim(pset_name) == buflen, &
             'pset_len 64: the whole name, its length: '//trim(pset_name))
  value = pset_name
  pset_len = 3
  call MPI_Session_get_nth_pset(session, MPI_INFO_NULL, 0, pset_len, pset_name, ierr)
  call check(pset_len == buflen .and. pset_name == value(1:3), 'pset_len 3 truncates')
  call MPI_Session_finalize(session, ierr)
  call passed('info_env')
  call MPI_Finalize(ierr)
end program
