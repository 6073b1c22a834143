// ranks: 1 2
// args: abort die
// expect: exit=nonzero within=5
// expect-crossmpi: output~"rank 1 of spawned job 1"
// impi: skip a multi-cluster (IMPI) job cannot spawn (MPI_ERR_SPAWN)
/* A spawned process that ends badly ends the whole job, parents included, as any rank
 * does: the parents spawn 2 children and block receiving from child 1, which calls
 * MPI_Abort ("abort") or kills itself with SIGKILL ("die"). The job must end within a
 * few seconds with a non-zero status, and crossmpi's mpirun names the child. */
#include "common.h"
#include <signal.h>
#include <unistd.h>

int main(int argc, char **argv) {
  MPI_OK(MPI_Init(&argc, &argv));
  MPI_Comm parent, inter;
  MPI_OK(MPI_Comm_get_parent(&parent));
  int v = 0;
  if (parent != MPI_COMM_NULL) {
    int rank;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    if (rank == 1) {
      if (strcmp(argv[1], "abort") == 0) MPI_Abort(MPI_COMM_WORLD, 7);
      else raise(SIGKILL);
    }
    MPI_OK(MPI_Recv(&v, 1, MPI_INT, 0, 0, parent, MPI_STATUS_IGNORE));
    return 1; /* never reached: nobody sends */
  }
  t_setup("dyn_spawn_dies");
  char *cargv[] = {argv[1], NULL};
  MPI_OK(MPI_Comm_spawn(argv[0], cargv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                        MPI_ERRCODES_IGNORE));
  MPI_OK(MPI_Recv(&v, 1, MPI_INT, 1, 0, inter, MPI_STATUS_IGNORE));
  fprintf(stderr, "FAIL dyn_spawn_dies: a receive from a dead child returned\n");
  return 1;
}
