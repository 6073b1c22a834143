// ranks: 2 4
// expect: exit=7 within=2
// expect-crossmpi: output~"rank 1"
/* MPI_Abort: rank 1 calls MPI_Abort(MPI_COMM_WORLD, 7) while every other rank is
 * blocked receiving from it; the job must exit with status 7 within 2 s and say
 * which rank aborted (Open MPI 4.1 sometimes loses its own message, so that check
 * applies to crossmpi only). */
#include "common.h"

int main(int argc, char **argv) {
  t_init(&argc, &argv, "abort");
  int v = 0;
  t_barrier();
  if (t_rank == 1) {
    MPI_Abort(MPI_COMM_WORLD, 7);
    fprintf(stderr, "abort: MPI_Abort returned\n");
    return 0;
  }
  MPI_OK(MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Finalize());
  return 0;
}
