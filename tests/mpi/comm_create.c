// ranks: 1 2 3 4 6 8
// impi: skip asserts that every rank shares one node (MPI_COMM_TYPE_SHARED spans no cluster boundary)
/* Communicator creation: Comm_create (one group, and disjoint groups), Comm_create_group
 * (called by the members only, also over changing subsets in a row), Comm_compare,
 * Comm_split_type(SHARED), Comm_dup_with_info and Comm_set_info/get_info, Comm_idup
 * (which returns before the other members call it; moves on while a member waits in a
 * receive; two at once, with attributes); each
 * new communicator carries p2p traffic. */
#include "common.h"

/* A ring exchange on comm proves it works and keeps messages apart. */
static void ring(MPI_Comm comm, int seed) {
  int r, n, got = -1;
  MPI_OK(MPI_Comm_rank(comm, &r));
  MPI_OK(MPI_Comm_size(comm, &n));
  int v = seed * 1000 + r;
  MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, (r + 1) % n, seed, &got, 1, MPI_INT, (r + n - 1) % n, seed, comm,
                      MPI_STATUS_IGNORE));
  CHECK(got == seed * 1000 + (r + n - 1) % n, "ring %d: got %d", seed, got);
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "comm_create");
  int n = t_size, res, size, rank;
  MPI_Group world, evens;
  MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  int ranges[1][3] = {{0, n - 1, 2}};
  MPI_OK(MPI_Group_range_incl(world, 1, ranges, &evens));

  /* Comm_create with the same group everywhere */
  MPI_Comm c;
  MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, evens, &c));
  if (t_rank % 2 == 0) {
    MPI_OK(MPI_Comm_size(c, &size));
    MPI_OK(MPI_Comm_rank(c, &rank));
    CHECK(size == (n + 1) / 2 && rank == t_rank / 2, "create: rank %d size %d", rank, size);
    ring(c, 1);
    MPI_OK(MPI_Comm_free(&c));
  } else {
    CHECK(c == MPI_COMM_NULL, "non-members get MPI_COMM_NULL");
  }

  /* Comm_create with disjoint groups: evens and odds each get theirs */
  MPI_Group mine;
  if (t_rank % 2 == 0) mine = evens;
  else MPI_OK(MPI_Group_difference(world, evens, &mine));
  MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, mine, &c));
  MPI_OK(MPI_Comm_rank(c, &rank));
  CHECK(rank == t_rank / 2, "disjoint create: rank %d", rank);
  ring(c, 2);
  MPI_OK(MPI_Comm_free(&c));

  /* Comm_create_group: only the members call, with a tag */
  MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, mine, 7, &c));
  MPI_OK(MPI_Comm_rank(c, &rank));
  MPI_OK(MPI_Comm_size(c, &size));
  CHECK(rank == t_rank / 2, "create_group: rank %d", rank);
  ring(c, 3);
  MPI_Comm c2;
  MPI_Group cg;
  MPI_OK(MPI_Comm_group(c, &cg));
  MPI_OK(MPI_Comm_create_group(c, cg, 9, &c2));
  MPI_OK(MPI_Group_free(&cg));
  ring(c2, 4);
  MPI_OK(MPI_Comm_compare(c, c2, &res));
  CHECK(res == MPI_CONGRUENT, "create_group twice: compare %d", res);
  MPI_OK(MPI_Comm_free(&c2));
  MPI_OK(MPI_Comm_free(&c));
  if (mine != evens) MPI_OK(MPI_Group_free(&mine));

  /* Comm_compare */
  MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res));
  CHECK(res == MPI_IDENT, "compare world world: %d", res);
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, c, &res));
  CHECK(res == MPI_CONGRUENT, "compare world dup: %d", res);
  MPI_OK(MPI_Comm_free(&c));
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, -t_rank, &c));
  MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, c, &res));
  CHECK(res == (n == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "compare world reversed: %d", res);
  MPI_OK(MPI_Comm_free(&c));
  MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &res));
  CHECK(res == (n == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "compare world self: %d", res);

  /* split_type SHARED: all ranks of one launcher host share a node */
  MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, t_rank, MPI_INFO_NULL, &c));
  MPI_OK(MPI_Comm_size(c, &size));
  CHECK(size == n, "split_type shared size %d (single host)", size);
  ring(c, 5);
  MPI_OK(MPI_Comm_free(&c));
  MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &c));
  CHECK(c == MPI_COMM_NULL, "split_type undefined");

  /* dup_with_info and set/get_info */
  MPI_Info info, used;
  MPI_OK(MPI_Info_create(&info));
  MPI_OK(MPI_Info_set(info, "crossmpi_test_hint", "yes"));
  MPI_OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
  MPI_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c));
  ring(c, 6);
  MPI_OK(MPI_Comm_get_info(c, &used));
  char val[64];
  int flag = 1;
  /* the hints in use: an unknown key is dropped (as MPICH does; Open MPI 4.1 reports
   * it), the standard's assertions (MPI-4) are reported with their value or default */
  MPI_OK(MPI_Info_get(used, "crossmpi_test_hint", (int)sizeof val - 1, val, &flag));
  CHECK_CROSSMPI(!flag, "an unknown hint is not reported");
  MPI_OK(MPI_Info_get(used, "mpi_assert_no_any_tag", (int)sizeof val - 1, val, &flag));
  CHECK_CROSSMPI(flag && strcmp(val, "true") == 0, "mpi_assert_no_any_tag reported as set");
  MPI_OK(MPI_Info_get(used, "mpi_assert_exact_length", (int)sizeof val - 1, val, &flag));
  CHECK_CROSSMPI(flag && strcmp(val, "false") == 0, "mpi_assert_exact_length reported at its default");
  MPI_OK(MPI_Info_free(&used));
  MPI_OK(MPI_Info_free(&info));
  /* set_info changes one assertion and leaves the rest */
  MPI_OK(MPI_Info_create(&info));
  MPI_OK(MPI_Info_set(info, "mpi_assert_exact_length", "true"));
  MPI_OK(MPI_Comm_set_info(c, info));
  MPI_OK(MPI_Comm_get_info(c, &used));
  MPI_OK(MPI_Info_get(used, "mpi_assert_exact_length", (int)sizeof val - 1, val, &flag));
  CHECK_CROSSMPI(flag && strcmp(val, "true") == 0, "mpi_assert_exact_length set by Comm_set_info");
  MPI_OK(MPI_Info_get(used, "mpi_assert_no_any_tag", (int)sizeof val - 1, val, &flag));
  CHECK_CROSSMPI(flag && strcmp(val, "true") == 0, "mpi_assert_no_any_tag kept by Comm_set_info");
  MPI_OK(MPI_Info_free(&used));
  MPI_OK(MPI_Info_free(&info));
  MPI_OK(MPI_Comm_free(&c));

  /* Comm_create_group over a different subset each time, always with tag 0: a rank
   * outside one subset goes straight on to the next creation, whose messages the
   * members of the current one must not take for theirs */
  for (int iter = 0; iter < 24; iter++) {
    unsigned bits = (unsigned)(iter * 2654435761u) >> 7;
    int in = (bits >> (t_rank % 16)) & 1 || t_rank == iter % t_size;
    int members[64], m = 0;
    for (int r = 0; r < t_size; r++)
      if ((bits >> (r % 16)) & 1 || r == iter % t_size) members[m++] = r;
    if (!in) continue;
    MPI_Group sub;
    MPI_Comm cs;
    int got = -1;
    MPI_OK(MPI_Group_incl(world, m, members, &sub));
    MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, sub, 0, &cs));
    MPI_OK(MPI_Comm_size(cs, &got));
    CHECK(got == m, "subset %d: size %d, expected %d", iter, got, m);
    MPI_OK(MPI_Comm_free(&cs));
    MPI_OK(MPI_Group_free(&sub));
  }

  /* idup */
  MPI_Request req;
  MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &c, &req));
  MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK(req == MPI_REQUEST_NULL, "idup request freed by wait");
  ring(c, 7);
  MPI_OK(MPI_Comm_free(&c));

  /* idup returns before the other members call it: ranks above 0 start theirs, then
   * synchronous-send to rank 0, which receives those before it starts its own */
  int token = 0;
  if (t_rank == 0) {
    for (int r = 1; r < t_size; r++) MPI_OK(MPI_Recv(&token, 1, MPI_INT, r, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &c, &req));
  } else {
    MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &c, &req));
    MPI_OK(MPI_Ssend(&t_rank, 1, MPI_INT, 0, 31, MPI_COMM_WORLD));
  }
  MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  ring(c, 8);

  /* an idup moves on while a member waits in another call: rank 0 (the agreement's
   * leader) receives from the last rank, which sends only once its idup completed */
  MPI_Comm waited;
  MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &waited, &req));
  if (t_rank == 0 && t_size > 1) {
    MPI_OK(MPI_Recv(&token, 1, MPI_INT, t_size - 1, 32, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  } else {
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (t_rank == t_size - 1 && t_size > 1) MPI_OK(MPI_Send(&t_rank, 1, MPI_INT, 0, 32, MPI_COMM_WORLD));
  }
  ring(waited, 11);
  MPI_OK(MPI_Comm_free(&waited));

  /* two at once, with attributes, and a collective on the parent before they complete */
  int kdup;
  void *got_attr;
  MPI_Comm d1, d2;
  MPI_Request two[2];
  MPI_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kdup, NULL));
  MPI_OK(MPI_Comm_set_attr(c, kdup, (void *)77));
  MPI_OK(MPI_Comm_idup(c, &d1, &two[0]));
  MPI_OK(MPI_Comm_idup(c, &d2, &two[1]));
  MPI_OK(MPI_Barrier(c));
  MPI_OK(MPI_Waitall(2, two, MPI_STATUSES_IGNORE));
  MPI_OK(MPI_Comm_compare(d1, d2, &res));
  CHECK(res == MPI_CONGRUENT, "two idups of one parent compare %d", res);
  MPI_OK(MPI_Comm_get_attr(d2, kdup, &got_attr, &flag));
  CHECK(flag && (intptr_t)got_attr == 77, "idup copied attribute: flag %d", flag);
  ring(d1, 9);
  ring(d2, 10);
  MPI_OK(MPI_Comm_free(&d1));
  MPI_OK(MPI_Comm_free(&d2));
  MPI_OK(MPI_Comm_free(&c));
  MPI_OK(MPI_Comm_free_keyval(&kdup));

  MPI_OK(MPI_Group_free(&evens));
  MPI_OK(MPI_Group_free(&world));
  t_finish();
  return 0;
}
