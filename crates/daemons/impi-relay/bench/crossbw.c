/* Inter-cluster all-to-all bandwidth: the ranks below N0 form one cluster, the others
 * the second; in every round each rank exchanges BYTES with every rank of the other
 * cluster (nonblocking, all pairs at once), and checks what it received. Traffic is
 * spread evenly over the ranks of both clusters, so through trunked relays it should
 * spread evenly over the trunks too. Every round's data is made before the timed
 * rounds and checked after them, so they time the communication only (making and
 * checking 8 MiB per rank and round took a tenth of a round through 4 trunks on 2
 * cores, and less of the longer rounds through one: it held the trunks' ratio down).
 *
 *   crossbw N0 BYTES ROUNDS
 *
 * Rank 0 prints "RESULT crossbw BYTES MB/s" (bytes crossing between the clusters, both
 * directions, per second of the timed rounds; one warm-up round first) and
 * "OK crossbw" when every rank received the right data. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char byte_of(int from, int to, int round, long i) {
  return (unsigned char)(from * 31 + to * 7 + round * 13 + i);
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n0 = argc > 3 ? atoi(argv[1]) : 0;
  long bytes = argc > 3 ? atol(argv[2]) : 0;
  int rounds = argc > 3 ? atoi(argv[3]) : 0;
  if (n0 <= 0 || n0 >= size || bytes <= 0 || bytes > (1L << 26) || rounds <= 0) {
    if (rank == 0) fprintf(stderr, "usage: crossbw N0 BYTES ROUNDS (0 < N0 < size, BYTES <= 64 MiB)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int first = rank < n0 ? n0 : 0, npeers = rank < n0 ? size - n0 : n0;
  size_t per_round = (size_t)bytes * npeers;
  unsigned char *out = malloc(per_round * (rounds + 1)), *in = malloc(per_round * (rounds + 1));
  MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * npeers);
  if (!out || !in || !req) MPI_Abort(MPI_COMM_WORLD, 3);
  long bad = 0;
  double t0 = 0;
  for (int r = 0; r <= rounds; r++)
    for (int p = 0; p < npeers; p++)
      for (long i = 0; i < bytes; i++) out[r * per_round + (size_t)p * bytes + i] = byte_of(rank, first + p, r, i);
  for (int r = 0; r <= rounds; r++) {
    if (r == 1) {
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
    }
    for (int p = 0; p < npeers; p++) {
      size_t at = r * per_round + (size_t)p * bytes;
      MPI_Irecv(in + at, (int)bytes, MPI_BYTE, first + p, r, MPI_COMM_WORLD, &req[2 * p]);
      MPI_Isend(out + at, (int)bytes, MPI_BYTE, first + p, r, MPI_COMM_WORLD, &req[2 * p + 1]);
    }
    MPI_Waitall(2 * npeers, req, MPI_STATUSES_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double secs = MPI_Wtime() - t0;
  for (int r = 0; r <= rounds; r++)
    for (int p = 0; p < npeers; p++)
      for (long i = 0; i < bytes; i++)
        bad += in[r * per_round + (size_t)p * bytes + i] != byte_of(first + p, rank, r, i);
  long total_bad = 0;
  MPI_Reduce(&bad, &total_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    double moved = 2.0 * n0 * (size - n0) * (double)bytes * rounds;
    printf("RESULT crossbw %ld %.1f\n", bytes, moved / secs / 1e6);
    if (total_bad == 0)
      printf("OK crossbw\n");
    else
      printf("crossbw: %ld bytes received wrong\n", total_bad);
  }
  free(out);
  free(in);
  free(req);
  MPI_Finalize();
  return total_bad != 0;
}
