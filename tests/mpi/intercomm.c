// ranks: 2 3 4 5 8
/* Intercommunicators: world split into a low half and a high half, joined by
 * Intercomm_create (leaders: local rank 0 of each half, world ranks 0 and n/2);
 * remote size/group, test_inter, point-to-point both ways (source = remote rank),
 * dup of the intercommunicator, Intercomm_merge in both orders, and Comm_idup of an
 * intercommunicator that returns before the other members call it. */
#include "common.h"

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

  MPI_OK(MPI_Comm_free(&inter2));
  MPI_OK(MPI_Comm_free(&inter));
  MPI_OK(MPI_Comm_free(&local));
  t_finish();
  return 0;
}
