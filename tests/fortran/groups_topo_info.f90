! ranks: 1 2 4
! requires: MPI_Info_get_nthkey MPI_Info_get_valuelen MPI_Group_translate_ranks MPI_Cart_sub MPI_Dims_create
! Groups (rank arrays, MPI_UNDEFINED), Cartesian topologies (LOGICAL arrays in and out),
! info objects (CHARACTER keys and values in and out, blanks stripped on both sides, an
! absent key leaving the value alone) and MPI_Query_thread.
program groups_topo_info
  use mpi
  use checks
  implicit none
  integer :: ierr, rank, nprocs, i, world_group, reversed, result, provided
  integer :: dims(2), coords(2), cart, row, cart_rank, src, dst, nkeys, valuelen
  integer, allocatable :: ranks(:), translated(:)
  logical :: periods(2), got_periods(2), flag
  integer :: info
  character(len=MPI_MAX_INFO_KEY) :: key
  character(len=16) :: value

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Query_thread(provided, ierr)
  call check(provided == MPI_THREAD_SINGLE, 'MPI_Init gives MPI_THREAD_SINGLE')

  ! The world group in reverse order.
  call MPI_Comm_group(MPI_COMM_WORLD, world_group, ierr)
  allocate(ranks(nprocs), translated(nprocs))
  ranks = [(nprocs - i, i = 1, nprocs)]
  call MPI_Group_incl(world_group, nprocs, ranks, reversed, ierr)
  call check_success(ierr, 'MPI_Group_incl')
  call MPI_Group_rank(reversed, i, ierr)
  call check(i == nprocs - 1 - rank, 'rank in the reversed group')
  ranks = [(i - 1, i = 1, nprocs)]
  call MPI_Group_translate_ranks(reversed, nprocs, ranks, world_group, translated, ierr)
  call check(all(translated == [(nprocs - i, i = 1, nprocs)]), 'translate_ranks')
  call MPI_Group_compare(reversed, world_group, result, ierr)
  if (nprocs > 1) call check(result == MPI_SIMILAR, 'reversed group is similar')
  call MPI_Group_free(reversed, ierr)
  call check(reversed == MPI_GROUP_NULL, 'free sets MPI_GROUP_NULL')
  call MPI_Group_free(world_group, ierr)

  ! A 2-D grid, periodic in the first dimension only.
  dims = 0
  call MPI_Dims_create(nprocs, 2, dims, ierr)
  call check(product(dims) == nprocs .and. dims(1) >= dims(2), 'Dims_create')
  periods = [.true., .false.]
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  call check_success(ierr, 'MPI_Cart_create')
  call MPI_Cart_get(cart, 2, dims, got_periods, coords, ierr)
  call check(got_periods(1) .and. .not. got_periods(2), 'periods come back as LOGICALs')
  call MPI_Cart_rank(cart, coords, cart_rank, ierr)
  call check(cart_rank == rank, 'Cart_rank of my coordinates')
  call MPI_Cart_shift(cart, 1, 1, src, dst, ierr)
  if (coords(2) == dims(2) - 1) call check(dst == MPI_PROC_NULL, 'no neighbour past the edge')
  call MPI_Cart_sub(cart, [.false., .true.], row, ierr)
  call MPI_Comm_size(row, i, ierr)
  call check(i == dims(2), 'Cart_sub keeps one dimension')
  call MPI_Comm_compare(cart, MPI_COMM_WORLD, result, ierr)
  call check(result == MPI_CONGRUENT, 'cart communicator is congruent to the world')
  call MPI_Comm_free(row, ierr)
  call MPI_Comm_free(cart, ierr)

  ! Info keys and values are blank-padded CHARACTERs.
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'colour  ', 'blue   ', ierr)
  call MPI_Info_set(info, 'size', '42', ierr)
  call MPI_Info_get_nkeys(info, nkeys, ierr)
  call check(nkeys == 2, 'two keys')
  call MPI_Info_get_nthkey(info, 0, key, ierr)
  call check(key == 'colour', 'first key without trailing blanks')
  call MPI_Info_get_valuelen(info, 'colour', valuelen, flag, ierr)
  call check(flag .and. valuelen == 4, 'value length')
  call MPI_Info_get(info, 'size', len(value), value, flag, ierr)
  call check(flag .and. value == '42', 'value blank-padded')
  value = 'untouched'
  call MPI_Info_get(info, 'shape', len(value), value, flag, ierr)
  call check(.not. flag, 'absent key')
  call check(value == 'untouched', 'an absent key leaves the value argument alone')
  ! leading blanks of keys and values are stripped too
  call MPI_Info_set(info, '  padded ', '  both sides  ', ierr)
  call MPI_Info_get(info, 'padded', len(value), value, flag, ierr)
  call check(flag .and. value == 'both sides', 'leading and trailing blanks stripped')
  call MPI_Info_free(info, ierr)
  call check(info == MPI_INFO_NULL, 'free sets MPI_INFO_NULL')

  call passed('groups_topo_info')
  call MPI_Finalize(ierr)
end program
