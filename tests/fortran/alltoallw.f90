! ranks: 2 3 4
! requires: MPI_Alltoallw MPI_Neighbor_alltoallw MPI_Cart_create MPI_Cart_shift
! Arrays of datatype handles whose length is not an argument: MPI_Alltoallw (one per
! process) and MPI_Neighbor_alltoallw (one per neighbour of a periodic ring). Not run
! with 1 rank: Open MPI 4.1's Fortran MPI_Neighbor_alltoallw converts as many datatypes
! as the communicator has ranks, not as the ring has neighbours (2), and fails there.
program alltoallw
  use mpi
  use checks
  implicit none
  integer :: ierr, rank, nprocs, i, ring, left, right
  integer, allocatable :: sendbuf(:), recvbuf(:), counts(:), displs(:), types(:)
  integer :: nsend(2), nrecv(2), ntypes(2)
  integer(kind=MPI_ADDRESS_KIND) :: ndispls(2)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  allocate(sendbuf(nprocs), recvbuf(nprocs), counts(nprocs), displs(nprocs), types(nprocs))
  sendbuf = [(100 * rank + i, i = 1, nprocs)]
  recvbuf = -1
  counts = 1
  displs = [(4 * (i - 1), i = 1, nprocs)]
  types = MPI_INTEGER
  call MPI_Alltoallw(sendbuf, counts, displs, types, recvbuf, counts, displs, types, &
                     MPI_COMM_WORLD, ierr)
  call check_success(ierr, 'MPI_Alltoallw')
  call check(all(recvbuf == [(100 * (i - 1) + rank + 1, i = 1, nprocs)]), 'alltoallw data')

  call MPI_Cart_create(MPI_COMM_WORLD, 1, [nprocs], [.true.], .false., ring, ierr)
  call MPI_Cart_shift(ring, 0, 1, left, right, ierr)
  nsend = [10 * rank + 1, 10 * rank + 2]
  nrecv = -1
  ndispls = [0_MPI_ADDRESS_KIND, 4_MPI_ADDRESS_KIND]
  ntypes = MPI_INTEGER
  call MPI_Neighbor_alltoallw(nsend, [1, 1], ndispls, ntypes, nrecv, [1, 1], ndispls, ntypes, &
                              ring, ierr)
  call check_success(ierr, 'MPI_Neighbor_alltoallw')
  call check(nrecv(1) == 10 * left + 2 .and. nrecv(2) == 10 * right + 1, 'neighbour data')
  call MPI_Comm_free(ring, ierr)
  call passed('alltoallw')
  call MPI_Finalize(ierr)
end program
