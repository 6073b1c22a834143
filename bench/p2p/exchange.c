/* Exchanges among all ranks (run with 4): "ring" (every rank sends to its right
 * neighbour and receives from its left one, MPI_Sendrecv), "pairwise" (an
 * all-to-all by n-1 MPI_Sendrecv steps, step k with ranks r+k and r-k) and "testloop"
 * (ranks 2i and 2i+1 ping-pong with MPI_Isend/MPI_Irecv, each completed by calling
 * MPI_Test until it succeeds, as codes that poll for progress do; one exchange is a
 * round trip; with more ranks than cores it measures whether polling lets the peer
 * run), for a few sizes. The value is the slowest rank's mean time per exchange in microseconds.
 * Each size's data is checked once before timing. */
#include "bench.h"

static int rank, nranks;

static void ring(unsigned char *s, unsigned char *r, long n) {
  MPI_Sendrecv(s, (int)n, MPI_BYTE, (rank + 1) % nranks, 0, r, (int)n, MPI_BYTE, (rank + nranks - 1) % nranks, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void pairwise(unsigned char *s, unsigned char *r, long n) {
  for (int k = 1; k < nranks; k++)
    MPI_Sendrecv(s, (int)n, MPI_BYTE, (rank + k) % nranks, k, r, (int)n, MPI_BYTE, (rank + nranks - k) % nranks, k,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void wait_by_testing(MPI_Request *req) {
  int done = 0;
  while (!done) MPI_Test(req, &done, MPI_STATUS_IGNORE);
}

static void testloop(unsigned char *s, unsigned char *r, long n) {
  int peer = rank ^ 1;
  MPI_Request req;
  for (int turn = 0; turn < 2; turn++) {
    if ((turn + rank) % 2 == 0) {
      MPI_Isend(s, (int)n, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &req);
    } else {
      MPI_Irecv(r, (int)n, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &req);
    }
    wait_by_testing(&req);
  }
}

/* The slowest rank's value, gathered by point-to-point so only p2p is measured. */
static double slowest(double v) {
  if (rank != 0) {
    MPI_Send(&v, 1, MPI_DOUBLE, 0, 99, MPI_COMM_WORLD);
    return v;
  }
  for (int r = 1; r < nranks; r++) {
    double o;
    MPI_Recv(&o, 1, MPI_DOUBLE, r, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (o > v) v = o;
  }
  return v;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (nranks < 2 || nranks % 2) die("exchange needs an even number of ranks", nranks);
  static const long sizes[] = {8, 1024, 65536, 1 << 20};
  unsigned char *s = bench_alloc(1 << 20), *r = bench_alloc(1 << 20);
  static void (*const ops[])(unsigned char *, unsigned char *, long) = {ring, pairwise, testloop};
  static const char *const names[] = {"ring", "pairwise", "testloop"};
  for (int kind = 0; kind < 3; kind++) {
    void (*op)(unsigned char *, unsigned char *, long) = ops[kind];
    const char *name = names[kind];
    for (int i = 0; i < 4; i++) {
      long n = sizes[i];
      /* data check: ring carries the left neighbour's pattern */
      fill(s, (size_t)n, rank);
      ring(s, r, n);
      verify(r, (size_t)n, (rank + nranks - 1) % nranks, name);
      int iters = iterations(n, 2000, 20), warmup = iters / 10 + 2;
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = 0;
      for (int it = 0; it < warmup + iters; it++) {
        if (it == warmup) t0 = MPI_Wtime();
        op(s, r, n);
      }
      double us = slowest((MPI_Wtime() - t0) * 1e6 / iters);
      if (rank == 0) result(name, n, us);
    }
  }
  free(s);
  free(r);
  MPI_Finalize();
  return 0;
}
