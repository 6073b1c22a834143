/* Bulk traffic through the relays until rank 0's clock says stop: rounds of
 * MPI_Alltoall of BYTES (argv[2], default 256 KiB) per pair of ranks, every byte
 * checked, for SECONDS (argv[1], default 10). Rank 0 prints "RUNNING" once the first
 * round completed, and "OK exchange_loop R rounds" at the end. Used by the lab test that
 * kills one of several trunked relays mid-job (lab/tests/test_impi_relay.py): the
 * relay dies holding packets in flight, and the job must still finish with every byte
 * right. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char pattern(int from, int to, long round, long i) {
  return (unsigned char)(from * 31 + to * 7 + round * 13 + i);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double limit = argc > 1 ? atof(argv[1]) : 10.0;
  long bytes = argc > 2 ? atol(argv[2]) : 256 * 1024;
  unsigned char *out = malloc((size_t)size * bytes), *in = malloc((size_t)size * bytes);
  if (!out || !in) MPI_Abort(MPI_COMM_WORLD, 2);
  double start = MPI_Wtime();
  long rounds = 0, stop = 0;
  while (!stop) {
    for (int to = 0; to < size; to++)
      for (long i = 0; i < bytes; i++) out[to * bytes + i] = pattern(rank, to, rounds, i);
    MPI_Alltoall(out, (int)bytes, MPI_BYTE, in, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
    for (int from = 0; from < size; from++)
      for (long i = 0; i < bytes; i++)
        if (in[from * bytes + i] != pattern(from, rank, rounds, i)) {
          fprintf(stderr, "exchange_loop rank %d: round %ld: byte %ld from rank %d is wrong\n", rank, rounds, i,
                  from);
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
    /* Rank 0 alone decides when to stop (clocks differ). */
    long mine = rank == 0 && MPI_Wtime() - start >= limit;
    MPI_Allreduce(&mine, &stop, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rounds++ == 0 && rank == 0) {
      printf("RUNNING\n");
      fflush(stdout);
    }
  }
  if (rank == 0) printf("OK exchange_loop %ld rounds\n", rounds);
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
