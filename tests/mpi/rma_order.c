// ranks: 1 2 4
/* Fetching one-sided operations into one result buffer land in the order they were
 * started. Each rank owns the window part of rank + 1 (mod size) alone, so every
 * fetched value is known.
 *  - flood: R get-accumulates (MPI_SUM of 1) per element of FLOOD elements in one
 *    fence epoch, all R of an element fetching into the same result slot. Far more
 *    operations than the eager credit covers, so without order some replies go by
 *    rendezvous and land after later ones: the slot must hold the last fetched value,
 *    the window the full sum.
 *  - mixed: a get-accumulate of the whole window part into a large buffer (a reply
 *    too long to be eager), then a fetch-and-op of element 0 into its first slot: the
 *    short reply of the second must be what stays there.
 *  - requests: the same with MPI_Rget_accumulate, waited for in reverse order.
 * MPI_Win_create windows, so even ranks of one node exchange messages. */
#include "common.h"

enum { M = 65536, FLOOD = 16384, R = 8 };

int main(int argc, char **argv) {
  t_init(&argc, &argv, "rma_order");
  int target = (t_rank + 1) % t_size;
  int *mem = malloc(M * sizeof(int));
  int *result = calloc(M, sizeof(int));
  int *big = calloc(M, sizeof(int));
  int one = 1, *ones = malloc(M * sizeof(int));
  for (int j = 0; j < M; j++) {
    mem[j] = 100;
    ones[j] = 1;
  }
  MPI_Win win;
  MPI_OK(MPI_Win_create(mem, M * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));

  /* flood */
  MPI_OK(MPI_Win_fence(0, win));
  for (int j = 0; j < FLOOD; j++)
    for (int i = 0; i < R; i++)
      MPI_OK(MPI_Get_accumulate(&one, 1, MPI_INT, &result[j], 1, MPI_INT, target, j, 1,
                                MPI_INT, MPI_SUM, win));
  MPI_OK(MPI_Win_fence(0, win));
  for (int j = 0; j < M; j++) {
    if (j >= FLOOD) {
      mem[j] = 100 + R; /* level with the flooded elements (before any origin reads it) */
      continue;
    }
    CHECK(result[j] == 100 + R - 1, "flood: slot %d holds %d, the last fetch saw %d", j,
          result[j], 100 + R - 1);
    CHECK(mem[j] == 100 + R, "flood: window element %d is %d, expected %d", j, mem[j], 100 + R);
  }
  /* The origin of this window part must not start the next epoch before the check. */
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

  /* mixed: long reply, then a short one into its first slot */
  int first;
  for (int round = 0; round < 4; round++) {
    int base = 100 + R + 2 * round;
    MPI_OK(MPI_Get_accumulate(ones, M, MPI_INT, big, M, MPI_INT, target, 0, M, MPI_INT,
                              MPI_SUM, win));
    MPI_OK(MPI_Fetch_and_op(&one, &big[0], MPI_INT, target, 0, MPI_SUM, win));
    MPI_OK(MPI_Fetch_and_op(&one, &first, MPI_INT, target, 1, MPI_NO_OP, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(big[0] == base + 1, "mixed round %d: slot 0 holds %d, the later fetch saw %d", round,
          big[0], base + 1);
    CHECK(big[1] == base && big[M - 1] == base,
          "mixed round %d: slots 1 and %d hold %d and %d, expected %d", round, M - 1, big[1],
          big[M - 1], base);
    CHECK(first == base + 1, "mixed round %d: element 1 read %d, expected %d", round, first,
          base + 1);
    /* Element 0 had one more added; bring it level with the rest. */
    if (round == 3) break;
    MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, target, 1, 1, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Accumulate(ones, M - 2, MPI_INT, target, 2, M - 2, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(0, win));
  }
  MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

  /* requests: even ones fetch element 5 into buf[3], odd ones elements 2..5 into
   * buf[0..4); every one adds 1 to what it reads. */
  MPI_Request reqs[64];
  int before[4], buf[4];
  MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
  MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_INT, before, 4, MPI_INT, target, 2, 4, MPI_INT,
                            MPI_NO_OP, win));
  MPI_OK(MPI_Win_flush(target, win));
  for (int i = 0; i < 64; i++) {
    int odd = i % 2;
    MPI_OK(MPI_Rget_accumulate(ones, odd ? 4 : 1, MPI_INT, odd ? buf : &buf[3], odd ? 4 : 1,
                               MPI_INT, target, odd ? 2 : 5, odd ? 4 : 1, MPI_INT, MPI_SUM,
                               win, &reqs[i]));
  }
  for (int i = 63; i >= 0; i--) MPI_OK(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE));
  MPI_OK(MPI_Win_unlock(target, win));
  for (int k = 0; k < 3; k++)
    CHECK(buf[k] == before[k] + 31, "requests: slot %d holds %d, the last fetch saw %d", k,
          buf[k], before[k] + 31);
  CHECK(buf[3] == before[3] + 63, "requests: slot 3 holds %d, the last fetch saw %d", buf[3],
        before[3] + 63);
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

  MPI_OK(MPI_Win_free(&win));
  free(mem);
  free(result);
  free(big);
  free(ones);
  t_finish();
  return 0;
}
