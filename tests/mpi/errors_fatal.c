// ranks: 2
// expect: exit=nonzero within=10 output~"MPI_Send"
// expect-crossmpi: output~"dest" output~"7"
/* The default error handler, MPI_ERRORS_ARE_FATAL: rank 1 sends to an invalid rank;
 * the whole job must end with a non-zero status and a message naming the call, while
 * rank 0 is blocked in a receive. If the call returns instead, both ranks finish
 * normally and the job's zero status fails the runner's expectation. */
#include "common.h"

int main(int argc, char **argv) {
  t_init(&argc, &argv, "errors_fatal");
  int v = 0;
  if (t_rank == 1) {
    int rc = MPI_Send(&v, 1, MPI_INT, 7, 0, MPI_COMM_WORLD);
    fprintf(stderr, "errors_fatal: MPI_Send to rank 7 returned %d under MPI_ERRORS_ARE_FATAL\n", rc);
    MPI_OK(MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
  } else {
    MPI_OK(MPI_Recv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  }
  MPI_OK(MPI_Finalize());
  return 0;
}
