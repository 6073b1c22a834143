/* Bucket sort of integer keys with MPI_Alltoallv.
 *
 * TOTAL keys in [0, MAX_KEY), key i = hash(i) so the key set is the same for every
 * rank count; rank r generates keys [r TOTAL / p, (r+1) TOTAL / p). Each rank sends
 * every key to the rank owning its value range (rank b owns [b MAX_KEY / p,
 * (b+1) MAX_KEY / p)): counts go with MPI_Alltoall, keys with MPI_Alltoallv, then a
 * local counting sort. Checks: every rank's keys are sorted and inside its range, the
 * last key of rank r is <= the first of rank r+1 (MPI_Sendrecv), and the global
 * count, sum and sum of hashes of the keys are those of the generated keys.
 */
// ranks: 1 2 4 8
#include "kernel.h"

enum { TOTAL = 1 << 21, MAX_KEY = 1 << 19, REPEAT = 10 };

static int owner(uint32_t key) { return (int)((uint64_t)key * t_size / MAX_KEY); }

int main(int argc, char **argv) {
  t_init(&argc, &argv, "isort");
  int lo, hi;
  k_block(TOTAL, t_size, t_rank, &lo, &hi);
  int mine = hi - lo;
  int key_lo, key_hi;
  k_block(MAX_KEY, t_size, t_rank, &key_lo, &key_hi);
  uint32_t *keys = malloc(sizeof(uint32_t) * mine), *outgoing = malloc(sizeof(uint32_t) * mine);
  int *send_counts = calloc(t_size, sizeof(int)), *recv_counts = calloc(t_size, sizeof(int));
  int *send_displs = calloc(t_size, sizeof(int)), *recv_displs = calloc(t_size, sizeof(int));
  int *fill = calloc(t_size, sizeof(int));
  int *histogram = calloc(key_hi - key_lo + 1, sizeof(int));
  CHECK(keys && outgoing && send_counts && recv_counts && send_displs && recv_displs && fill &&
          histogram, "out of memory");
  /* checksums of the generated keys: count, sum, sum of hashes */
  uint64_t made[3] = {(uint64_t)mine, 0, 0};
  for (int i = 0; i < mine; i++) {
    keys[i] = (uint32_t)(k_mix((uint64_t)(lo + i)) % MAX_KEY);
    made[1] += keys[i];
    made[2] += k_mix(keys[i] ^ 0x5bd1e995u);
  }
  uint32_t *sorted = NULL;
  int received = 0;

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int rep = 0; rep < REPEAT; rep++) {
    memset(send_counts, 0, sizeof(int) * t_size);
    for (int i = 0; i < mine; i++) send_counts[owner(keys[i])]++;
    MPI_OK(MPI_Alltoall(send_counts, 1, MPI_INT, recv_counts, 1, MPI_INT, MPI_COMM_WORLD));
    received = 0;
    for (int r = 0; r < t_size; r++) {
      send_displs[r] = r ? send_displs[r - 1] + send_counts[r - 1] : 0;
      recv_displs[r] = received;
      received += recv_counts[r];
      fill[r] = send_displs[r];
    }
    for (int i = 0; i < mine; i++) outgoing[fill[owner(keys[i])]++] = keys[i];
    free(sorted);
    sorted = malloc(sizeof(uint32_t) * (received + 1));
    CHECK(sorted, "out of memory for %d keys", received);
    MPI_OK(MPI_Alltoallv(outgoing, send_counts, send_displs, MPI_UINT32_T, sorted, recv_counts,
                        recv_displs, MPI_UINT32_T, MPI_COMM_WORLD));
    /* counting sort of my range */
    memset(histogram, 0, sizeof(int) * (key_hi - key_lo));
    for (int i = 0; i < received; i++) {
      CHECK(sorted[i] >= (uint32_t)key_lo && sorted[i] < (uint32_t)key_hi,
              "received key %u outside my range [%d, %d)", sorted[i], key_lo, key_hi);
      histogram[sorted[i] - key_lo]++;
    }
    for (int k = 0, at = 0; k < key_hi - key_lo; k++)
      for (int c = 0; c < histogram[k]; c++) sorted[at++] = (uint32_t)(key_lo + k);
  }
  double elapsed = MPI_Wtime() - t0;

  uint64_t got[3] = {(uint64_t)received, 0, 0};
  for (int i = 0; i < received; i++) {
    if (i > 0) CHECK(sorted[i - 1] <= sorted[i], "keys %d and %d out of order", i - 1, i);
    got[1] += sorted[i];
    got[2] += k_mix(sorted[i] ^ 0x5bd1e995u);
  }
  /* boundary between neighbours: my first key against my left neighbour's last */
  int left = t_rank > 0 ? t_rank - 1 : MPI_PROC_NULL;
  int right = t_rank < t_size - 1 ? t_rank + 1 : MPI_PROC_NULL;
  int64_t my_last = received ? (int64_t)sorted[received - 1] : -1, left_last = -1;
  MPI_OK(MPI_Sendrecv(&my_last, 1, MPI_INT64_T, right, 7, &left_last, 1, MPI_INT64_T, left, 7,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  if (received) CHECK(left_last <= (int64_t)sorted[0], "left neighbour's last key %lld > my first %u",
                        (long long)left_last, sorted[0]);
  uint64_t all_made[3], all_got[3];
  MPI_OK(MPI_Allreduce(made, all_made, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD));
  MPI_OK(MPI_Allreduce(got, all_got, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD));
  CHECK(all_made[0] == TOTAL, "generated %llu keys, expected %d", (unsigned long long)all_made[0], TOTAL);
  CHECK(all_got[0] == all_made[0], "sorted %llu keys, generated %llu",
          (unsigned long long)all_got[0], (unsigned long long)all_made[0]);
  CHECK(all_got[1] == all_made[1], "key sum %llu after sorting, %llu before",
          (unsigned long long)all_got[1], (unsigned long long)all_made[1]);
  CHECK(all_got[2] == all_made[2], "key hash sum %llx after sorting, %llx before",
          (unsigned long long)all_got[2], (unsigned long long)all_made[2]);
  if (t_rank == 0)
    printf("isort: %d keys < %d over %d ranks, %d sorts, checksum %llx\n", TOTAL, MAX_KEY, t_size,
           REPEAT, (unsigned long long)all_got[2]);
  free(keys); free(outgoing); free(sorted); free(histogram); free(fill);
  free(send_counts); free(recv_counts); free(send_displs); free(recv_displs);
  k_finish(elapsed);
  return 0;
}
