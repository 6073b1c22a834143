! ranks: 1 2
! fflags: -fallow-argument-mismatch -std=legacy
! The MPI-1 calls MPI-3 removed, as old fixed-form mpif.h codes use them (and Open MPI
! 4.1 still links them): a struct type built from MPI_ADDRESS differences with
! MPI_TYPE_STRUCT and sent around a ring, MPI_TYPE_HVECTOR and MPI_TYPE_HINDEXED layouts
! checked through MPI_TYPE_EXTENT/LB/UB and a send, a struct whose extent MPI_LB and
! MPI_UB markers set (sent two at a time), and MPI_ERRHANDLER_CREATE/SET/GET
! with a handler that sees an error of the communicator it is set on; an extent that
! does not fit a default INTEGER is an MPI_ERR_ARG naming the call (crossmpi only: Open
! MPI 4.1 truncates it).
      subroutine catch(comm, code)
      implicit none
      integer comm, code, ncaught, lastcode
      common /caught/ ncaught, lastcode
      ncaught = ncaught + 1
      lastcode = code
      end

! A committed MPI_TYPE_STRUCT of three blocks, and its MPI_TYPE_EXTENT.
      subroutine struct3(blens, disps, types, newtype, ext)
      use checks
      implicit none
      include 'mpif.h'
      integer blens(3), disps(3), types(3), newtype, ext, ierr
      call mpi_type_struct(3, blens, disps, types, newtype, ierr)
      call check_success(ierr, 'MPI_TYPE_STRUCT')
      call mpi_type_commit(newtype, ierr)
      call mpi_type_extent(newtype, ext, ierr)
      call check_success(ierr, 'MPI_TYPE_EXTENT')
      end

      program mpi1rm
      use checks
      implicit none
      include 'mpif.h'
      integer ierr, rank, nprocs, next, prev, i
      integer a1, a2, a3, disps(3), blens(3), types(3)
      integer stype, htype, xtype, ext, lb, ub, eh, got, ncaught
      integer lastcode
      integer ival, ivalin
      double precision dval, dvalin, rows(4, 3), col(3), every(6)
      integer mtype
      character*4 cval, cvalin
      character*(MPI_MAX_ERROR_STRING) text
      integer(kind=MPI_ADDRESS_KIND) zero, big
      integer rtype, tlen, envlen
      character*1 peer
      common /rec/ ival, dval, cval
      common /recin/ ivalin, dvalin, cvalin
      common /caught/ ncaught, lastcode
      external catch

      call mpi_init(ierr)
      call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
      call mpi_comm_size(MPI_COMM_WORLD, nprocs, ierr)
      next = mod(rank + 1, nprocs)
      prev = mod(rank + nprocs - 1, nprocs)

! A struct from address differences, as MPI-1 codes build them.
      call mpi_address(ival, a1, ierr)
      call check_success(ierr, 'MPI_ADDRESS')
      call mpi_address(dval, a2, ierr)
      call mpi_address(cval, a3, ierr)
      disps = (/ 0, a2 - a1, a3 - a1 /)
      call check(disps(2) .eq. 8 .and. disps(3) .eq. 16,
     &           'MPI_ADDRESS differences in a common block')
      blens = (/ 1, 1, 4 /)
      types = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION, MPI_CHARACTER /)
      call struct3(blens, disps, types, stype, ext)
      call check(ext .eq. 24, 'MPI_TYPE_EXTENT of the struct')
      ival = 100 + rank
      dval = 0.5d0 + rank
      cval = 'abcd'
      call mpi_sendrecv(ival, 1, stype, next, 1, ivalin, 1, stype,
     &                  prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE,
     &                  ierr)
      call check(ivalin .eq. 100 + prev .and. dvalin .eq. 0.5d0 + prev
     &           .and. cvalin .eq. 'abcd',
     &           'struct sent around the ring')

! Row 2 of a 4x3 matrix: hvector with a byte stride; the same with hindexed.
      do i = 1, 3
        rows(1, i) = 0
        rows(2, i) = 10 * rank + i
        rows(3, i) = 0
        rows(4, i) = 0
      end do
      call mpi_type_hvector(3, 1, 32, MPI_DOUBLE_PRECISION, htype,
     &                      ierr)
      call check_success(ierr, 'MPI_TYPE_HVECTOR')
      call mpi_type_commit(htype, ierr)
      call mpi_type_lb(htype, lb, ierr)
      call mpi_type_ub(htype, ub, ierr)
      call check(lb .eq. 0 .and. ub .eq. 72,
     &           'MPI_TYPE_LB/UB of hvector')
      call mpi_sendrecv(rows(2, 1), 1, htype, next, 2, col, 3,
     &                  MPI_DOUBLE_PRECISION, prev, 2, MPI_COMM_WORLD,
     &                  MPI_STATUS_IGNORE, ierr)
      call check(col(1) .eq. 10 * prev + 1 .and. col(3) .eq. 10 * prev
     &           + 3, 'hvector row received')
      disps(1) = 64
      disps(2) = 0
      blens(1) = 1
      blens(2) = 1
      call mpi_type_hindexed(2, blens, disps, MPI_DOUBLE_PRECISION,
     &                       xtype, ierr)
      call check_success(ierr, 'MPI_TYPE_HINDEXED')
      call mpi_type_commit(xtype, ierr)
      call mpi_sendrecv(rows(2, 1), 1, xtype, next, 3, col, 2,
     &                  MPI_DOUBLE_PRECISION, prev, 3, MPI_COMM_WORLD,
     &                  MPI_STATUS_IGNORE, ierr)
      call check(col(1) .eq. 10 * prev + 3 .and. col(2) .eq. 10 * prev
     &           + 1, 'hindexed blocks in their order')

! MPI_LB/MPI_UB markers: one double of every 3, at offset 8 of each 24-byte element.
      blens = (/ 1, 1, 1 /)
      disps = (/ 0, 8, 24 /)
      types = (/ MPI_LB, MPI_DOUBLE_PRECISION, MPI_UB /)
      call struct3(blens, disps, types, mtype, ext)
      call mpi_type_lb(mtype, lb, ierr)
      call check(ext .eq. 24 .and. lb .eq. 0, 'extent set by markers')
      do i = 1, 6
        every(i) = 100 * rank + i
      end do
      call mpi_sendrecv(every, 2, mtype, next, 4, col, 2,
     &                  MPI_DOUBLE_PRECISION, prev, 4, MPI_COMM_WORLD,
     &                  MPI_STATUS_IGNORE, ierr)
      call check(col(1) .eq. 100 * prev + 2 .and. col(2) .eq. 100 * prev
     &           + 5, 'every third double through the markers')
      call mpi_type_free(mtype, ierr)

! An error handler from MPI_ERRHANDLER_CREATE on a duplicate.
      ncaught = 0
      call mpi_comm_dup(MPI_COMM_WORLD, i, ierr)
      call mpi_errhandler_create(catch, eh, ierr)
      call check_success(ierr, 'MPI_ERRHANDLER_CREATE')
      call mpi_errhandler_set(i, eh, ierr)
      call mpi_errhandler_get(i, got, ierr)
      call check(got .eq. eh, 'MPI_ERRHANDLER_GET returns the handler')
      call mpi_send(ival, 1, MPI_INTEGER, nprocs, 0, i, ierr)
      call check(ncaught .eq. 1, 'the handler saw the bad rank')
      call mpi_error_class(lastcode, got, ierr)
      call check(got .eq. MPI_ERR_RANK, 'the handler got MPI_ERR_RANK')
      call mpi_errhandler_free(eh, ierr)
      call mpi_comm_free(i, ierr)

! An extent beyond a default INTEGER.
      zero = 0
      big = 2_MPI_ADDRESS_KIND**33
      call mpi_type_create_resized(MPI_INTEGER, zero, big, rtype, ierr)
      call mpi_comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN,
     &                             ierr)
      call mpi_type_extent(rtype, ext, ierr)
      call get_environment_variable('CROSSMPI_TEST_PEER', peer, envlen)
      if (peer .ne. '1') then
        call mpi_error_class(ierr, got, i)
        call check(got .eq. MPI_ERR_ARG, 'MPI_TYPE_EXTENT of 2**33')
        call mpi_error_string(ierr, text, tlen, i)
        call check(index(text(1:tlen), 'MPI_TYPE_EXTENT') .gt. 0,
     &             'the error names MPI_TYPE_EXTENT')
      end if
      call mpi_type_free(rtype, ierr)

      call mpi_type_free(stype, ierr)
      call mpi_type_free(htype, ierr)
      call mpi_type_free(xtype, ierr)
      call passed('mpi1_removed')
      call mpi_finalize(ierr)
      end
