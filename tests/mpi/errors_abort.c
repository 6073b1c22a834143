// ranks: 2
// expect: exit=nonzero within=10
// expect-crossmpi: output~"MPI_Send" output~"dest" output~"7"
/* MPI_ERRORS_ABORT (MPI 4.0) set on a duplicate of MPI_COMM_WORLD: rank 1's send to an
 * invalid rank on it must abort the job with a non-zero status and a message naming
 * the call. An MPI older than 4.0 skips (exit 77). */
#include "fatal.h"

int main(int argc, char **argv) {
  t_init(&argc, &argv, "errors_abort");
#ifndef MPI_ERRORS_ABORT
  if (t_rank == 0) printf("SKIP errors_abort: MPI_ERRORS_ABORT is not defined (MPI %d.%d)\n", MPI_VERSION, MPI_SUBVERSION);
  MPI_Finalize();
  return 77;
#else
  MPI_Comm d;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
  MPI_OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_ABORT));
  return invalid_send_ends_job(d, "MPI_ERRORS_ABORT");
#endif
}
