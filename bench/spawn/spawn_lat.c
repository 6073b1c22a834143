/* Time of MPI_Comm_spawn: one parent spawns N children (N = 1, 4) of this program and
 * waits for a barrier over the intercommunicator, so the figure covers starting the
 * processes, their MPI_Init and the connection to the parent. ITER spawns per N
 * (after one warm-up); prints "RESULT spawn N MEDIAN_MS". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ITER 7

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  if (parent != MPI_COMM_NULL) {
    MPI_Barrier(parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
  }
  int counts[] = {1, 4};
  for (int c = 0; c < 2; c++) {
    double t[ITER];
    for (int i = -1; i < ITER; i++) {
      MPI_Comm inter;
      double t0 = MPI_Wtime();
      if (MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, counts[c], MPI_INFO_NULL, 0, MPI_COMM_SELF,
                         &inter, MPI_ERRCODES_IGNORE) != MPI_SUCCESS) {
        fprintf(stderr, "spawn failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      MPI_Barrier(inter);
      if (i >= 0) t[i] = (MPI_Wtime() - t0) * 1e3;
      MPI_Comm_disconnect(&inter);
    }
    qsort(t, ITER, sizeof t[0], cmp);
    printf("RESULT spawn %d %.2f\n", counts[c], t[ITER / 2]);
    fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
