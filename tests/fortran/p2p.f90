! ranks: 2 3 4 8
! Point-to-point through `use mpi`: buffers of several types in one program unit (the
! module's interfaces accept any type), nonblocking operations with arrays of requests
! and statuses, 1-based indices from MPI_Waitany/Waitsome, logical flags, probes.
program p2p
  use mpi
  use checks
  implicit none
  integer :: ierr, rank, nprocs, i, peer, index, outcount, count
  integer :: requests(4), indices(4), statuses(MPI_STATUS_SIZE, 4), status(MPI_STATUS_SIZE)
  integer :: ivals(8), irecv(8)
  real :: rvals(3), rrecv(3)
  character(len=6) :: word, wrecv
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  ! Pairs (0,1), (2,3); a last odd rank talks to itself.
  peer = ieor(rank, 1)
  if (peer >= nprocs) peer = rank
  ivals = [(rank * 10 + i, i = 1, 8)]
  rvals = [1.5, 2.5, real(rank)]
  word = 'rank' // achar(iachar('0') + rank)

  call MPI_Irecv(irecv, 8, MPI_INTEGER, peer, 1, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_Irecv(rrecv, 3, MPI_REAL, peer, 2, MPI_COMM_WORLD, requests(2), ierr)
  call MPI_Isend(ivals, 8, MPI_INTEGER, peer, 1, MPI_COMM_WORLD, requests(3), ierr)
  call MPI_Isend(rvals, 3, MPI_REAL, peer, 2, MPI_COMM_WORLD, requests(4), ierr)
  call check_success(ierr, 'MPI_Isend')
  call MPI_Waitall(4, requests, statuses, ierr)
  call check_success(ierr, 'MPI_Waitall')
  do i = 1, 4
    call check(requests(i) == MPI_REQUEST_NULL, 'Waitall sets MPI_REQUEST_NULL')
  end do
  call check(statuses(MPI_SOURCE, 1) == peer .and. statuses(MPI_TAG, 1) == 1, 'status 1')
  call check(statuses(MPI_SOURCE, 2) == peer .and. statuses(MPI_TAG, 2) == 2, 'status 2')
  call MPI_Get_count(statuses(:, 2), MPI_REAL, count, ierr)
  call check(count == 3, 'count of reals')
  call check(all(irecv == [(peer * 10 + i, i = 1, 8)]), 'integer data')
  call check(all(rrecv == [1.5, 2.5, real(peer)]), 'real data')

  ! Waitany reports a 1-based index; MPI_STATUSES_IGNORE with Waitall.
  call MPI_Irecv(wrecv, 6, MPI_CHARACTER, peer, 3, MPI_COMM_WORLD, requests(1), ierr)
  requests(2) = MPI_REQUEST_NULL
  call MPI_Send(word, 6, MPI_CHARACTER, peer, 3, MPI_COMM_WORLD, ierr)
  call MPI_Waitany(2, requests, index, status, ierr)
  call check_success(ierr, 'MPI_Waitany')
  call check(index == 1, 'Waitany index is 1-based')
  call check(status(MPI_TAG) == 3, 'Waitany status tag')
  call check(wrecv == 'rank' // achar(iachar('0') + peer), 'character data')
  call MPI_Waitany(2, requests, index, status, ierr)
  call check(index == MPI_UNDEFINED, 'Waitany on null requests gives MPI_UNDEFINED')

  call MPI_Irecv(irecv, 8, MPI_INTEGER, peer, 4, MPI_COMM_WORLD, requests(2), ierr)
  requests(1) = MPI_REQUEST_NULL
  call MPI_Ssend(ivals, 8, MPI_INTEGER, peer, 4, MPI_COMM_WORLD, ierr)
  outcount = 0
  do while (outcount == 0)
    call MPI_Waitsome(2, requests, outcount, indices, MPI_STATUSES_IGNORE, ierr)
  end do
  call check(outcount == 1 .and. indices(1) == 2, 'Waitsome index is 1-based')

  ! Probe, then Iprobe's LOGICAL flag and Test's.
  call MPI_Send(ivals, 5, MPI_INTEGER, peer, 5, MPI_COMM_WORLD, ierr)
  call MPI_Probe(peer, 5, MPI_COMM_WORLD, status, ierr)
  call MPI_Get_count(status, MPI_INTEGER, count, ierr)
  call check(count == 5, 'probe count')
  call MPI_Iprobe(peer, 5, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE, ierr)
  call check(flag, 'Iprobe finds the probed message')
  call MPI_Recv(irecv, 8, MPI_INTEGER, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_Iprobe(peer, 5, MPI_COMM_WORLD, flag, status, ierr)
  call check(.not. flag, 'Iprobe: no message left')
  call MPI_Irecv(irecv, 8, MPI_INTEGER, peer, 6, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_Test(requests(1), flag, status, ierr)
  call check(.not. flag, 'Test before the send')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Send(ivals, 8, MPI_INTEGER, peer, 6, MPI_COMM_WORLD, ierr)
  call MPI_Wait(requests(1), status, ierr)
  call check(requests(1) == MPI_REQUEST_NULL, 'Wait frees the request')

  call passed('p2p')
  call MPI_Finalize(ierr)
end program
