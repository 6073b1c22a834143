// ranks: 2 4
// expect: exit=nonzero within=2 output~"rank 1"
/* A rank that dies without MPI_Finalize or MPI_Abort (SIGKILL) while every other rank
 * is blocked receiving from it: the job must end within about 2 s with a non-zero
 * status and a message naming rank 1. */
#include "common.h"
#include <signal.h>

int main(int argc, char **argv) {
  t_init(&argc, &argv, "rank_dies");
  int v = 0;
  t_barrier();
  if (t_rank == 1) raise(SIGKILL);
  MPI_OK(MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Finalize());
  return 0;
}
