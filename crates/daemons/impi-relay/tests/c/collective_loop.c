/* A job that keeps every rank talking until it is ended from outside: rounds of
 * MPI_Allreduce over MPI_COMM_WORLD (so every rank needs every other cluster's ranks)
 * for at most SECONDS (argv[1], default 60), of COUNT longs each (argv[2], default 1;
 * a large count makes every round stream long packets through the relays). With
 * "alltoall" (argv[3]) each round is instead an MPI_Alltoall of COUNT longs per pair of
 * ranks, so every pair's traffic crosses the relays (the WAN-aware allreduce sends
 * only between the clusters' masters), plus a one-long allreduce that decides when to
 * stop. Rank 0
 * prints "RUNNING" once the first round completed, so a test knows the job is past
 * startup before it kills a relay; every rank then waits in a collective that crosses
 * the relays. Every element of every round's sum is checked. Used by the relay-death
 * tests (tests/suites/impi-relay.sh, lab/tests/test_impi_relay.py): a job that loses a
 * relay must end on its own, long before SECONDS, or, when it survives the loss,
 * finish with the right sums. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What rank `from` sends rank `to` as element i of round r's all-to-all block. */
static long block_value(int from, int to, long r, long i) { return from * 7919L + to * 31L + r + i; }

/* One round's all-to-all of `count` longs per pair; every element checked. */
static void exchange(int rank, int size, long count, long round, long *out, long *in) {
  for (int to = 0; to < size; to++)
    for (long i = 0; i < count; i++) out[to * count + i] = block_value(rank, to, round, i);
  MPI_Alltoall(out, (int)count, MPI_LONG, in, (int)count, MPI_LONG, MPI_COMM_WORLD);
  for (int from = 0; from < size; from++)
    for (long i = 0; i < count; i++)
      if (in[from * count + i] != block_value(from, rank, round, i)) {
        fprintf(stderr, "collective_loop rank %d: round %ld: element %ld from rank %d is %ld, expected %ld\n", rank,
                round, i, from, in[from * count + i], block_value(from, rank, round, i));
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double limit = argc > 1 ? atof(argv[1]) : 60.0;
  long count = argc > 2 ? atol(argv[2]) : 1;
  if (count < 1) count = 1;
  int alltoall = argc > 3 && strcmp(argv[3], "alltoall") == 0;
  /* Longs per round in the allreduce besides the stop flag, and per pair in the
   * all-to-all. */
  long reduced = alltoall ? 0 : count, block = alltoall ? count : 0;
  long *out = malloc((size_t)size * block * sizeof(long) + 1), *in = malloc((size_t)size * block * sizeof(long) + 1);
  /* Element 0: rank 0 alone decides when to stop (clocks differ), through the same
   * reduction; elements 1..reduced: rank + round + element. */
  long *mine = malloc((reduced + 1) * sizeof(long)), *sum = malloc((reduced + 1) * sizeof(long));
  double start = MPI_Wtime();
  long rounds = 0, stop = 0;
  while (!stop) {
    mine[0] = rank == 0 && MPI_Wtime() - start >= limit;
    for (long i = 1; i <= reduced; i++) mine[i] = rank + rounds + i;
    MPI_Allreduce(mine, sum, (int)reduced + 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    for (long i = 1; i <= reduced; i++) {
      long want = (long)size * (size - 1) / 2 + (long)size * (rounds + i);
      if (sum[i] != want) {
        fprintf(stderr, "collective_loop rank %d: round %ld element %ld: sum %ld, expected %ld\n", rank, rounds, i,
                sum[i], want);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
    if (alltoall) exchange(rank, size, block, rounds, out, in);
    stop = sum[0];
    if (rounds++ == 0 && rank == 0) {
      printf("RUNNING\n");
      fflush(stdout);
    }
  }
  if (rank == 0) printf("OK collective_loop %ld rounds\n", rounds);
  free(mine);
  free(sum);
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
