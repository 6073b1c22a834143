! Bucket sort of integer keys with MPI_Alltoallv (Fortran version of
! tests/kernels/c/isort.c).
!
! TOTAL keys in [0, MAX_KEY), key i = hash(i), so the key set is the same for every
! rank count. Each rank sends every key to the rank owning its value range: counts
! with MPI_Alltoall, keys with MPI_Alltoallv, then a local counting sort. Checks: each
! rank's keys are sorted and in its range, rank r's last key <= rank r+1's first
! (MPI_Sendrecv), and the global count, sum and sum of hashes of the keys are those
! of the generated keys.
! ranks: 1 2 4 8
include 'kernel_common.inc'

program isort
  use kernel_common
  implicit none
  integer, parameter :: total = 2**20, max_key = 2**18, repeat = 10
  integer :: lo, hi, mine, key_lo, key_hi, i, r, k, c, at, rep, received, ierr, left, right
  integer, allocatable :: keys(:), outgoing(:), sorted(:), histogram(:)
  integer, allocatable :: send_counts(:), recv_counts(:), send_displs(:), recv_displs(:), fill(:)
  integer(i8) :: made(3), got(3), all_made(3), all_got(3), my_last, left_last
  real(dp) :: t0, elapsed
  character(len=160) :: msg

  call k_init('isort')
  call k_block(total, ksize, krank, lo, hi)
  mine = hi - lo + 1
  call k_block(max_key, ksize, krank, key_lo, key_hi)
  key_lo = key_lo - 1  ! my key range is key_lo .. key_hi-1 (0-based keys)
  key_hi = key_hi - 1
  allocate (keys(mine), outgoing(mine), histogram(key_lo:key_hi), sorted(1))
  allocate (send_counts(0:ksize - 1), recv_counts(0:ksize - 1), send_displs(0:ksize - 1), &
            recv_displs(0:ksize - 1), fill(0:ksize - 1))
  made = [int(mine, i8), 0_i8, 0_i8]
  do i = 1, mine
    keys(i) = int(mod(k_hash(int(lo + i - 2, i8)), int(max_key, i8)))
    made(2) = made(2) + keys(i)
    made(3) = made(3) + k_hash(int(keys(i), i8) + 77777_i8)
  end do

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  t0 = MPI_Wtime()
  do rep = 1, repeat
    send_counts = 0
    do i = 1, mine
      r = owner(keys(i))
      send_counts(r) = send_counts(r) + 1
    end do
    call MPI_Alltoall(send_counts, 1, MPI_INTEGER, recv_counts, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call k_mpi(ierr, 'MPI_Alltoall')
    received = 0
    do r = 0, ksize - 1
      send_displs(r) = 0
      if (r > 0) send_displs(r) = send_displs(r - 1) + send_counts(r - 1)
      recv_displs(r) = received
      received = received + recv_counts(r)
      fill(r) = send_displs(r)
    end do
    do i = 1, mine
      r = owner(keys(i))
      fill(r) = fill(r) + 1
      outgoing(fill(r)) = keys(i)
    end do
    deallocate (sorted)
    allocate (sorted(max(received, 1)))
    call MPI_Alltoallv(outgoing, send_counts, send_displs, MPI_INTEGER, sorted, recv_counts, &
                       recv_displs, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call k_mpi(ierr, 'MPI_Alltoallv')
    histogram = 0
    do i = 1, received
      if (sorted(i) < key_lo .or. sorted(i) > key_hi) then
        write (msg, '(a,i0,a,i0,a,i0)') 'received key ', sorted(i), ' outside my range ', key_lo, '..', key_hi
        call k_fail(msg)
      end if
      histogram(sorted(i)) = histogram(sorted(i)) + 1
    end do
    at = 0
    do k = key_lo, key_hi
      do c = 1, histogram(k)
        at = at + 1
        sorted(at) = k
      end do
    end do
  end do
  elapsed = MPI_Wtime() - t0

  got = [int(received, i8), 0_i8, 0_i8]
  do i = 1, received
    if (i > 1) call k_check(sorted(i - 1) <= sorted(i), 'keys out of order')
    got(2) = got(2) + sorted(i)
    got(3) = got(3) + k_hash(int(sorted(i), i8) + 77777_i8)
  end do
  left = merge(krank - 1, MPI_PROC_NULL, krank > 0)
  right = merge(krank + 1, MPI_PROC_NULL, krank < ksize - 1)
  my_last = -1
  if (received > 0) my_last = sorted(received)
  left_last = -1
  call MPI_Sendrecv(my_last, 1, MPI_INTEGER8, right, 7, left_last, 1, MPI_INTEGER8, left, 7, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call k_mpi(ierr, 'MPI_Sendrecv')
  if (received > 0) call k_check(left_last <= sorted(1), "left neighbour's last key > my first")
  call MPI_Allreduce(made, all_made, 3, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(got, all_got, 3, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  write (msg, '(a,3i20,a,3i20)') 'count/sum/hash sum generated ', all_made, ' sorted ', all_got
  call k_check(all_made(1) == total .and. all(all_got == all_made), msg)
  if (krank == 0) write (*, '(a,i0,a,i0,a,i0,a,i0)') 'isort: ', total, ' keys < ', max_key, &
    ' over ', ksize, ' ranks, hash sum ', all_got(3)
  call k_finish(elapsed)
contains
  integer function owner(key)
    integer, intent(in) :: key
    owner = int(int(key, i8) * ksize / max_key)
  end function
end program isort
