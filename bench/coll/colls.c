/* Collective latency, OSU style: for each collective and message size, a warm-up, then
 * a timed loop of back-to-back calls; the figure is the per-call time averaged over the
 * loop and over the ranks (us). Sizes 8 B .. 1 MiB: bcast and allreduce (float sum)
 * move that many bytes, alltoall and allgather that many per rank pair / per rank.
 * Each collective's result is checked once per size outside the timed loop.
 * Prints "RESULT <collective> <bytes> <us>" lines on rank 0 (barrier: bytes 0). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static void die(const char *what, long bytes) {
  fprintf(stderr, "bench: rank %d: %s (size %ld)\n", rank, what, bytes);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

static int iterations(long bytes) {
  long budget = 1L << 25; /* bytes moved per rank and size, roughly */
  long n = bytes > 0 ? budget / (bytes * (size > 2 ? size : 2)) : 20000;
  if (n > 20000) n = 20000;
  if (n < 20) n = 20;
  return (int)n;
}

enum coll { BARRIER, BCAST, ALLREDUCE, ALLTOALL, ALLGATHER };
static const char *names[] = {"barrier", "bcast", "allreduce", "alltoall", "allgather"};

static void run(enum coll c, long bytes, char *a, char *b) {
  switch (c) {
    case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
    case BCAST: MPI_Bcast(a, (int)bytes, MPI_CHAR, 0, MPI_COMM_WORLD); break;
    case ALLREDUCE: MPI_Allreduce(a, b, (int)(bytes / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case ALLTOALL: MPI_Alltoall(a, (int)bytes, MPI_CHAR, b, (int)bytes, MPI_CHAR, MPI_COMM_WORLD); break;
    case ALLGATHER: MPI_Allgather(a, (int)bytes, MPI_CHAR, b, (int)bytes, MPI_CHAR, MPI_COMM_WORLD); break;
  }
}

static void check(enum coll c, long bytes, char *a, char *b) {
  if (c == BCAST) {
    for (long i = 0; i < bytes; i++) a[i] = rank == 0 ? (char)(i * 7) : 0;
    run(c, bytes, a, b);
    for (long i = 0; i < bytes; i++)
      if (a[i] != (char)(i * 7)) die("bcast delivered wrong data", bytes);
  } else if (c == ALLREDUCE) {
    float *x = (float *)a, *y = (float *)b;
    for (long i = 0; i < bytes / 4; i++) x[i] = (float)(rank + i % 100);
    run(c, bytes, a, b);
    for (long i = 0; i < bytes / 4; i++)
      if (y[i] != (float)(size * (size - 1) / 2 + size * (i % 100))) die("allreduce result wrong", bytes);
  } else if (c == ALLTOALL || c == ALLGATHER) {
    for (long p = 0; p < size; p++)
      for (long i = 0; i < bytes; i++) a[p * bytes + i] = (char)(rank * 31 + (c == ALLTOALL ? p : 0) * 7 + i);
    run(c, bytes, a, b);
    for (long p = 0; p < size; p++)
      for (long i = 0; i < bytes; i++)
        if (b[p * bytes + i] != (char)(p * 31 + (c == ALLTOALL ? rank : 0) * 7 + i)) die("received data wrong", bytes);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long max = 1L << 20;
  char *a = malloc(max * size), *b = malloc(max * size);
  if (!a || !b) die("out of memory", max * size);
  memset(a, 1, max * size);
  memset(b, 1, max * size);
  long sizes[] = {8, 64, 1024, 8192, 65536, 1L << 20};
  for (int c = BARRIER; c <= ALLGATHER; c++) {
    for (int s = 0; s < 6; s++) {
      long bytes = c == BARRIER ? 0 : sizes[s];
      if (c != BARRIER) check(c, bytes, a, b);
      int iters = iterations(bytes);
      for (int i = 0; i < iters / 10 + 2; i++) run(c, bytes, a, b);
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int i = 0; i < iters; i++) run(c, bytes, a, b);
      double per = (MPI_Wtime() - t0) / iters * 1e6, sum = 0;
      MPI_Reduce(&per, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      if (rank == 0) {
        printf("RESULT %s %ld %.4f\n", names[c], bytes, sum / size);
        fflush(stdout);
      }
      if (c == BARRIER) break;
    }
  }
  free(a);
  free(b);
  MPI_Finalize();
  return 0;
}
