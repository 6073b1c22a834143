// ranks: 2 3 4 5 8
/* Intercommunicators: world split into a low half and a high half, joined by
 * Intercomm_create (leaders: local rank 0 of each half, world ranks 0 and n/2);
 * remote size/group, test_inter, point-to-point both ways (source = remote rank),
 * dup of the intercommunicator, Intercomm_merge in both orders, Comm_idup of an
 * intercommunicator that returns before the other members call it, and Comm_split and
 * Comm_create of an intercommunicator (MPI-2.2), which make intercommunicators. */
#include "common.h"

/* The world rank of rank r of the low (low = 1) or high half. */
static int world_of(int low, int half, int r) { return low ? r : half + r; }

/* Checks that `c` is the intercommunicator whose local group is the world ranks
 * want_local[0..nl) in order and whose remote group is want_remote[0..nr), by sizes,
 * rank, an allreduce of world ranks and a message from each remote member. */
static void check_inter(MPI_Comm c, const char *what, const int *want_local, int nl,
                        const int *want_remote, int nr) {
  int flag, size, rsize, rank;
  MPI_OK(MPI_Comm_test_inter(c, &flag));
  MPI_OK(MPI_Comm_size(c, &size));
  MPI_OK(MPI_Comm_remote_size(c, &rsize));
  MPI_OK(MPI_Comm_rank(c, &rank));
  CHECK(flag && size == nl && rsize == nr, "%s: inter %d, sizes %d/%d, expected %d/%d", what, flag, size,
        rsize, nl, nr);
  CHECK(want_local[rank] == t_rank, "%s: rank %d is world %d, expected world %d", what, rank, t_rank,
        want_local[rank]);
  int sum = -1, want = 0;
  for (int r = 0; r < nr; r++) want += want_remote[r];
  MPI_OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, c));
  CHECK(sum == want, "%s: allreduce of the remote world ranks %d, expected %d", what, sum, want);
  /* every member sends its world rank to remote rank (rank % nr); each receives from
   * the remote ranks that target it, by source */
  MPI_Request rq;
  MPI_OK(MPI_Isend(&t_rank, 1, MPI_INT, rank % nr, 9, c, &rq));
  for (int r = 0; r < nr; r++) {
    if (r % nl != rank) continue;
    int got = -1;
    MPI_OK(MPI_Recv(&got, 1, MPI_INT, r, 9, c, MPI_STATUS_IGNORE));
    CHECK(got == want_remote[r], "%s: remote rank %d is world %d, expected %d", what, r, got, want_remote[r]);
  }
  MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
}

/* Comm_split of an intercommunicator: color = local rank % 2 (the low half also gives
 * MPI_UNDEFINED to its rank 2), key = minus the local rank (reverse order); a color
 * found on one side only gets MPI_COMM_NULL. Comm_create: the low half keeps its even
 * ranks, the high half all but rank 0 (nobody when that leaves none: then every
 * process gets MPI_COMM_NULL). */
static void split_and_create(MPI_Comm inter, int low, int half, int n) {
  int lrank, lsize, rsize;
  MPI_OK(MPI_Comm_rank(inter, &lrank));
  MPI_OK(MPI_Comm_size(inter, &lsize));
  MPI_OK(MPI_Comm_remote_size(inter, &rsize));
  int *loc = t_alloc(sizeof(int) * n), *rem = t_alloc(sizeof(int) * n);
  int color_of_low2 = MPI_UNDEFINED;
  for (int round = 0; round < 2; round++) {
    int undefined = round == 1 && low && lrank == 2;
    int color = undefined ? color_of_low2 : lrank % 2;
    MPI_Comm sub;
    MPI_OK(MPI_Comm_split(inter, color, -lrank, &sub));
    /* who has my color on each side, by descending local rank */
    int nl = 0, nr = 0;
    for (int r = lsize - 1; r >= 0; r--)
      if (r % 2 == color && !(round == 1 && low && r == 2)) loc[nl++] = world_of(low, half, r);
    for (int r = (low ? n - half : half) - 1; r >= 0; r--)
      if (r % 2 == color && !(round == 1 && !low && r == 2)) rem[nr++] = world_of(!low, half, r);
    if (undefined || nr == 0) {
      CHECK(sub == MPI_COMM_NULL, "split round %d: color %d should give MPI_COMM_NULL", round, color);
    } else {
      CHECK(sub != MPI_COMM_NULL, "split round %d: color %d gave MPI_COMM_NULL", round, color);
      check_inter(sub, "split", loc, nl, rem, nr);
      MPI_OK(MPI_Comm_free(&sub));
    }
  }

  MPI_Group local_group, chosen;
  MPI_OK(MPI_Comm_group(inter, &local_group));
  int *ranks = t_alloc(sizeof(int) * n), nchosen = 0;
  for (int r = 0; r < lsize; r++)
    if (low ? r % 2 == 0 : r > 0) ranks[nchosen++] = r;
  MPI_OK(MPI_Group_incl(local_group, nchosen, ranks, &chosen));
  MPI_Comm sub;
  MPI_OK(MPI_Comm_create(inter, chosen, &sub));
  int nl = 0, nr = 0;
  for (int r = 0; r < lsize; r++)
    if (low ? r % 2 == 0 : r > 0) loc[nl++] = world_of(low, half, r);
  for (int r = 0; r < rsize; r++)
    if (!low ? r % 2 == 0 : r > 0) rem[nr++] = world_of(!low, half, r);
  int in_mine = low ? lrank % 2 == 0 : lrank > 0;
  if (!in_mine || nl == 0 || nr == 0) {
    CHECK(sub == MPI_COMM_NULL, "create: expected MPI_COMM_NULL (in %d, sides %d/%d)", in_mine, nl, nr);
  } else {
    CHECK(sub != MPI_COMM_NULL, "create: got MPI_COMM_NULL");
    check_inter(sub, "create", loc, nl, rem, nr);
    MPI_OK(MPI_Comm_free(&sub));
  }
  MPI_OK(MPI_Group_free(&chosen));
  MPI_OK(MPI_Group_free(&local_group));
  free(ranks);
  free(loc);
  free(rem);
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "intercomm");
  int n = t_size, half = n / 2;
  int low = t_rank < half;
  MPI_Comm local, inter, inter2, merged;
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, low, t_rank, &local));
  int lrank, lsize;
  MPI_OK(MPI_Comm_rank(local, &lrank));
  MPI_OK(MPI_Comm_size(local, &lsize));
  int remote_leader = low ? half : 0;
  MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, 42, &inter));

  int flag, rsize, size, rank;
  MPI_OK(MPI_Comm_test_inter(inter, &flag));
  CHECK(flag, "test_inter");
  MPI_OK(MPI_Comm_remote_size(inter, &rsize));
  CHECK(rsize == (low ? n - half : half), "remote size %d", rsize);
  MPI_OK(MPI_Comm_size(inter, &size));
  MPI_OK(MPI_Comm_rank(inter, &rank));
  CHECK(size == lsize && rank == lrank, "local size/rank %d/%d", size, rank);
  MPI_Group rg, wg;
  MPI_OK(MPI_Comm_remote_group(inter, &rg));
  MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
  int zero = 0, w;
  MPI_OK(MPI_Group_translate_ranks(rg, 1, &zero, wg, &w));
  CHECK(w == remote_leader, "remote rank 0 is world %d", w);
  MPI_OK(MPI_Group_free(&rg));
  MPI_OK(MPI_Group_free(&wg));

  /* p2p: every process sends to remote rank (lrank % rsize), and each process
   * receives from every remote rank that targets it. */
  for (int round = 0; round < 2; round++) {
    MPI_Comm c = round ? inter2 : inter;
    int dest = lrank % rsize, v = 100 * round + t_rank;
    MPI_Request rq;
    MPI_OK(MPI_Isend(&v, 1, MPI_INT, dest, 5, c, &rq));
    for (int r = 0; r < rsize; r++) {
      if (r % lsize != lrank) continue;
      int got;
      MPI_Status st;
      MPI_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 5, c, &st));
      int src_world = low ? half + st.MPI_SOURCE : st.MPI_SOURCE;
      CHECK(got == 100 * round + src_world, "round %d: got %d from remote %d", round, got, st.MPI_SOURCE);
    }
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    if (round == 0) {
      MPI_OK(MPI_Comm_dup(inter, &inter2));
      MPI_OK(MPI_Comm_test_inter(inter2, &flag));
      CHECK(flag, "dup of an intercommunicator is one");
    }
  }

  /* merge: low side asks high=0, so it comes first */
  MPI_OK(MPI_Intercomm_merge(inter, !low, &merged));
  MPI_OK(MPI_Comm_rank(merged, &rank));
  MPI_OK(MPI_Comm_size(merged, &size));
  CHECK(size == n && rank == t_rank, "merge low first: rank %d size %d", rank, size);
  int right = (rank + 1) % n, left = (rank + n - 1) % n, got = -1;
  MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, right, 1, &got, 1, MPI_INT, left, 1, merged, MPI_STATUS_IGNORE));
  CHECK(got == left, "merged ring got %d", got);
  MPI_OK(MPI_Comm_free(&merged));
  /* the other order: high side first */
  MPI_OK(MPI_Intercomm_merge(inter2, low, &merged));
  MPI_OK(MPI_Comm_rank(merged, &rank));
  int expect = low ? (n - half) + t_rank : t_rank - half;
  CHECK(rank == expect, "merge high first: rank %d, expected %d", rank, expect);
  MPI_OK(MPI_Comm_free(&merged));

  /* leaders other than local rank 0, reached through a duplicate of world */
  MPI_Comm peer, inter3;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &peer));
  MPI_OK(MPI_Intercomm_create(local, lsize - 1, peer, low ? n - 1 : half - 1, 43, &inter3));
  MPI_OK(MPI_Comm_remote_size(inter3, &rsize));
  CHECK(rsize == (low ? n - half : half), "remote size via other leaders %d", rsize);
  int token = t_rank, back = -1;
  int partner = lrank % rsize;
  MPI_Request rq2;
  MPI_OK(MPI_Isend(&token, 1, MPI_INT, partner, 6, inter3, &rq2));
  for (int r = 0; r < rsize; r++) {
    if (r % lsize != lrank) continue;
    MPI_Status st;
    MPI_OK(MPI_Recv(&back, 1, MPI_INT, r, 6, inter3, &st));
    CHECK(back == (low ? half + r : r), "inter3: got %d from remote %d", back, r);
  }
  MPI_OK(MPI_Wait(&rq2, MPI_STATUS_IGNORE));

  /* Comm_idup of an intercommunicator returns before the others call it: every member
   * but each side's rank 0 starts its idup, then synchronous-sends to the other side's
   * rank 0, which receives those first */
  MPI_Comm inter4;
  MPI_Request rq3;
  if (lrank == 0) {
    for (int r = 1; r < rsize; r++) MPI_OK(MPI_Recv(&back, 1, MPI_INT, r, 7, inter3, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Comm_idup(inter3, &inter4, &rq3));
  } else {
    MPI_OK(MPI_Comm_idup(inter3, &inter4, &rq3));
    MPI_OK(MPI_Ssend(&token, 1, MPI_INT, 0, 7, inter3));
  }
  MPI_OK(MPI_Wait(&rq3, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Comm_test_inter(inter4, &flag));
  MPI_OK(MPI_Comm_remote_size(inter4, &rsize));
  CHECK(flag && rsize == (low ? n - half : half), "idup of an intercommunicator: inter %d remote size %d", flag, rsize);
  int sum = -1;
  MPI_OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, inter4));
  int remote_sum = low ? (n - 1) * n / 2 - (half - 1) * half / 2 : (half - 1) * half / 2;
  CHECK(sum == remote_sum, "allreduce over the idup: %d, expected %d", sum, remote_sum);
  MPI_OK(MPI_Comm_free(&inter4));
  MPI_OK(MPI_Comm_free(&inter3));
  MPI_OK(MPI_Comm_free(&peer));

  split_and_create(inter, low, half, n);

  MPI_OK(MPI_Comm_free(&inter2));
  MPI_OK(MPI_Comm_free(&inter));
  MPI_OK(MPI_Comm_free(&local));
  t_finish();
  return 0;
}
