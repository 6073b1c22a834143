/* A job that keeps every rank talking until it is ended from outside: rounds of
 * MPI_Allreduce over MPI_COMM_WORLD (so every rank needs every other cluster's ranks)
 * for at most SECONDS (argv[1], default 60). Rank 0 prints "RUNNING" once the first
 * round completed, so a test knows the job is past startup before it kills a relay;
 * every rank then waits in a collective that crosses the relays. Used by the relay-death
 * tests (tests/suites/impi-relay.sh, lab/tests/test_impi_relay.py): a job that loses a
 * relay must end on its own, long before SECONDS. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double limit = argc > 1 ? atof(argv[1]) : 60.0;
  double start = MPI_Wtime();
  long rounds = 0, stop = 0;
  while (!stop) {
    /* Rank 0 alone decides when to stop (clocks differ), through the same reduction. */
    long mine[2] = {rank + rounds, rank == 0 && MPI_Wtime() - start >= limit}, sum[2];
    MPI_Allreduce(mine, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    long want = (long)size * (size - 1) / 2 + (long)size * rounds;
    if (sum[0] != want) {
      fprintf(stderr, "collective_loop rank %d: round %ld: sum %ld, expected %ld\n", rank, rounds, sum[0], want);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    stop = sum[1];
    if (rounds++ == 0 && rank == 0) {
      printf("RUNNING\n");
      fflush(stdout);
    }
  }
  if (rank == 0) printf("OK collective_loop %ld rounds\n", rounds);
  MPI_Finalize();
  return 0;
}
