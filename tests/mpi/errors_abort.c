// ranks: 2
// expect: exit=nonzero within=10 output~"MPI_Send"
// expect-crossmpi: output~"dest" output~"7"
/* MPI_ERRORS_ABORT (MPI 4.0) set on a duplicate of MPI_COMM_WORLD: rank 1's invalid
 * send on it must abort the job (non-zero status, a message naming the call) while
 * rank 0 is blocked. If the call returns instead, both ranks finish normally and the
 * zero status fails the runner's expectation. An MPI older than 4.0 skips (exit 77). */
#include "common.h"

int main(int argc, char **argv) {
  t_init(&argc, &argv, "errors_abort");
#ifndef MPI_ERRORS_ABORT
  if (t_rank == 0) printf("SKIP errors_abort: MPI_ERRORS_ABORT is not defined (MPI %d.%d)\n", MPI_VERSION, MPI_SUBVERSION);
  MPI_Finalize();
  return 77;
#else
  MPI_Comm d;
  int v = 0;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
  MPI_OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_ABORT));
  if (t_rank == 1) {
    int rc = MPI_Send(&v, 1, MPI_INT, 7, 0, d);
    fprintf(stderr, "errors_abort: MPI_Send to rank 7 returned %d under MPI_ERRORS_ABORT\n", rc);
    MPI_OK(MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
  } else {
    MPI_OK(MPI_Recv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  }
  MPI_OK(MPI_Finalize());
  return 0;
#endif
}
