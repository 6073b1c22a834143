! ranks: 1 2 4
! fflags: -fallow-argument-mismatch -std=legacy
! A legacy program: fixed form, include 'mpif.h', no explicit interfaces, integer and
! double precision buffers passed to the same routines.
      program f77_basics
      use checks
      implicit none
      include 'mpif.h'
      integer ierr, rank, nprocs, next, prev, i, count, rlen
      integer status(MPI_STATUS_SIZE)
      integer ibuf(10), irecv(10)
      double precision dbuf(5), drecv(5), t0, t1
      logical flag
      character*(MPI_MAX_PROCESSOR_NAME) pname

      call MPI_INIT(ierr)
      call check_success(ierr, 'MPI_INIT')
      call MPI_INITIALIZED(flag, ierr)
      call check(flag, 'MPI_INITIALIZED gives .TRUE. after MPI_INIT')
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
      call check(rank .ge. 0 .and. rank .lt. nprocs, 'rank in range')
      t0 = MPI_WTIME()
      call check(MPI_WTICK() .gt. 0d0, 'MPI_WTICK positive')

      call MPI_GET_PROCESSOR_NAME(pname, rlen, ierr)
      call check(rlen .gt. 0 .and. rlen .le. len(pname), 'name len')
      call check(len_trim(pname) .eq. rlen, 'name blank-padded')

      next = mod(rank + 1, nprocs)
      prev = mod(rank + nprocs - 1, nprocs)
      do i = 1, 10
        ibuf(i) = 100 * rank + i
      end do
      do i = 1, 5
        dbuf(i) = rank + i / 4d0
      end do
      call MPI_SENDRECV(ibuf, 10, MPI_INTEGER, next, 7,
     &     irecv, 10, MPI_INTEGER, prev, 7, MPI_COMM_WORLD, status,
     &     ierr)
      call check_success(ierr, 'MPI_SENDRECV')
      call check(status(MPI_SOURCE) .eq. prev, 'status(MPI_SOURCE)')
      call check(status(MPI_TAG) .eq. 7, 'status(MPI_TAG)')
      call MPI_GET_COUNT(status, MPI_INTEGER, count, ierr)
      call check(count .eq. 10, 'MPI_GET_COUNT of integers')
      do i = 1, 10
        call check(irecv(i) .eq. 100 * prev + i, 'integer data')
      end do

      call MPI_SENDRECV(dbuf, 5, MPI_DOUBLE_PRECISION, next, 8,
     &     drecv, 5, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, MPI_ANY_TAG,
     &     MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call check_success(ierr, 'MPI_SENDRECV with MPI_STATUS_IGNORE')
      do i = 1, 5
        call check(drecv(i) .eq. prev + i / 4d0, 'double data')
      end do

      t1 = MPI_WTIME()
      call check(t1 .ge. t0, 'MPI_WTIME does not go back')
      call passed('f77_basics')
      call MPI_FINALIZE(ierr)
      call check(ierr .eq. MPI_SUCCESS, 'MPI_FINALIZE')
      end
