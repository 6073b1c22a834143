! ranks: 2
! with: c2f_helper.c
! requires: MPI_Comm_f2c MPI_Comm_c2f MPI_Type_f2c
! Handles cross the language boundary: Fortran passes INTEGER handles to C, which
! converts them with MPI_Comm_f2c/MPI_Type_f2c, and C returns MPI_Comm_c2f values.
program c2f
  use mpi
  use checks
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function helper_size(comm) bind(C, name="helper_size")
      import
      integer(c_int), value :: comm
    end function
    integer(c_int) function helper_type_size(datatype) bind(C, name="helper_type_size")
      import
      integer(c_int), value :: datatype
    end function
    integer(c_int) function helper_world() bind(C, name="helper_world")
      import
    end function
    integer(c_int) function helper_dup(comm) bind(C, name="helper_dup")
      import
      integer(c_int), value :: comm
    end function
  end interface
  integer :: ierr, nprocs, dup, dsize, result

  call MPI_Init(ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call check(helper_size(MPI_COMM_WORLD) == nprocs, 'C sees the Fortran MPI_COMM_WORLD')
  call check(helper_world() == MPI_COMM_WORLD, 'MPI_Comm_c2f(MPI_COMM_WORLD)')
  call check(helper_type_size(MPI_DOUBLE_PRECISION) == 8, 'C sees MPI_DOUBLE_PRECISION')
  ! A communicator created in C, used and freed in Fortran.
  dup = helper_dup(MPI_COMM_WORLD)
  call MPI_Comm_size(dup, dsize, ierr)
  call check(dsize == nprocs, 'C-created communicator works in Fortran')
  call MPI_Comm_compare(dup, MPI_COMM_WORLD, result, ierr)
  call check(result == MPI_CONGRUENT, 'dup is congruent to MPI_COMM_WORLD')
  call MPI_Comm_free(dup, ierr)
  call passed('c2f')
  call MPI_Finalize(ierr)
end program
