/* Ping-pong latency between ranks 0 and 1: half the round-trip time in microseconds
 * for 0 B and powers of two from 1 B to 4 MiB, after a warm-up. Each size's data is
 * checked once (both directions) before it is timed. */
#include "bench.h"

/* Rank 0 sends n bytes and receives n back; rank 1 receives then sends. */
static void round_trip(int rank, unsigned char *sbuf, unsigned char *rbuf, long n, int tag) {
  int peer = 1 - rank;
  if (rank == 0) {
    MPI_Send(sbuf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
    MPI_Recv(rbuf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(rbuf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(sbuf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) die("pingpong needs exactly 2 ranks", size);
  unsigned char *sbuf = bench_alloc(MAX_SIZE), *rbuf = bench_alloc(MAX_SIZE);
  int peer = 1 - rank;
  for (long n = 0; n <= MAX_SIZE; n = n ? n * 2 : 1) {
    /* data check, outside the timed loop */
    fill(sbuf, (size_t)n, (int)n + rank);
    round_trip(rank, sbuf, rbuf, n, 1);
    verify(rbuf, (size_t)n, (int)n + peer, "pingpong");

    int iters = iterations(n, 20000, 50), warmup = iters / 10 + 2;
    double t0 = 0;
    for (int i = 0; i < warmup + iters; i++) {
      if (i == warmup) t0 = MPI_Wtime();
      round_trip(rank, sbuf, rbuf, n, 0);
    }
    double us = (MPI_Wtime() - t0) * 1e6 / iters / 2;
    if (rank == 0) result("latency", n, us);
  }
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}
