! ranks: 1 2
! fflags: -fallow-argument-mismatch -std=legacy
! requires: MPI_Keyval_create MPI_Keyval_free MPI_Attr_put MPI_Attr_get MPI_Attr_delete
! MPI-1 attribute caching from fixed-form mpif.h code: MPI_KEYVAL_CREATE with Fortran
! copy and delete subroutines whose extra state and attribute values are default
! INTEGERs, the predefined MPI_DUP_FN, MPI_NULL_COPY_FN and MPI_NULL_DELETE_FN, and
! MPI_KEYVAL_FREE.
      subroutine add_extra(oldcomm, keyval, extra, valin, valout,
     &                     flag, ierr)
      implicit none
      include 'mpif.h'
      integer oldcomm, keyval, extra, valin, valout, ierr
      integer ncopy, ndel, lastdel
      common /counts/ ncopy, ndel, lastdel
      logical flag
      ncopy = ncopy + 1
      valout = valin + extra
      flag = .true.
      ierr = MPI_SUCCESS
      end

      subroutine note_delete(comm, keyval, val, extra, ierr)
      implicit none
      include 'mpif.h'
      integer comm, keyval, val, extra, ierr
      integer ncopy, ndel, lastdel
      common /counts/ ncopy, ndel, lastdel
      ndel = ndel + 1
      lastdel = val + extra
      ierr = MPI_SUCCESS
      end

      program keyval_mpi1
      use checks
      implicit none
      include 'mpif.h'
      external add_extra, note_delete
      integer ierr, counting, dropped, kept, dup, val
      integer ncopy, ndel, lastdel
      common /counts/ ncopy, ndel, lastdel
      logical flag

      ncopy = 0
      ndel = 0
      lastdel = 0
      call MPI_INIT(ierr)
      call MPI_KEYVAL_CREATE(add_extra, note_delete, counting, 100,
     &                       ierr)
      call check_success(ierr, 'MPI_KEYVAL_CREATE')
      call MPI_KEYVAL_CREATE(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN,
     &                       dropped, 0, ierr)
      call check_success(ierr, 'MPI_KEYVAL_CREATE with null fns')
      call MPI_KEYVAL_CREATE(MPI_DUP_FN, MPI_NULL_DELETE_FN, kept, 0,
     &                       ierr)

! A negative value checks that the 4-byte INTEGER survives C's pointer-sized value.
      call MPI_ATTR_PUT(MPI_COMM_WORLD, counting, -7, ierr)
      call check_success(ierr, 'MPI_ATTR_PUT')
      call MPI_ATTR_PUT(MPI_COMM_WORLD, dropped, 5, ierr)
      call MPI_ATTR_PUT(MPI_COMM_WORLD, kept, 123456789, ierr)
      val = 0
      call MPI_ATTR_GET(MPI_COMM_WORLD, counting, val, flag, ierr)
      call check(flag .and. val .eq. -7, 'MPI_ATTR_GET value')

      call MPI_COMM_DUP(MPI_COMM_WORLD, dup, ierr)
      call check(ncopy .eq. 1, 'Fortran copy subroutine called once')
      call MPI_ATTR_GET(dup, counting, val, flag, ierr)
      call check(flag .and. val .eq. 93, 'copy added the extra state')
      call MPI_ATTR_GET(dup, dropped, val, flag, ierr)
      call check(.not. flag, 'MPI_NULL_COPY_FN drops the attribute')
      val = 0
      call MPI_ATTR_GET(dup, kept, val, flag, ierr)
      call check(flag .and. val .eq. 123456789,
     &           'MPI_DUP_FN copies the INTEGER value')

      call MPI_COMM_FREE(dup, ierr)
      call check(ndel .eq. 1 .and. lastdel .eq. 193,
     &           'Fortran delete subroutine called on free')
      call MPI_ATTR_DELETE(MPI_COMM_WORLD, counting, ierr)
      call check_success(ierr, 'MPI_ATTR_DELETE')
      call check(ndel .eq. 2 .and. lastdel .eq. 93,
     &           'delete subroutine called by MPI_ATTR_DELETE')
      call MPI_ATTR_GET(MPI_COMM_WORLD, counting, val, flag, ierr)
      call check(.not. flag, 'attribute gone')
      call MPI_KEYVAL_FREE(counting, ierr)
      call check_success(ierr, 'MPI_KEYVAL_FREE')
      call check(counting .eq. MPI_KEYVAL_INVALID,
     &           'MPI_KEYVAL_FREE sets MPI_KEYVAL_INVALID')
      call MPI_KEYVAL_FREE(dropped, ierr)
      call MPI_KEYVAL_FREE(kept, ierr)
      call passed('keyval_mpi1')
      call MPI_FINALIZE(ierr)
      end
