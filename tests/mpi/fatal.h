/* The scenario of the fatal-handler tests (errors_fatal.c, errors_abort.c). */
#ifndef CROSSMPI_TEST_FATAL_H
#define CROSSMPI_TEST_FATAL_H
#include "common.h"

/* Rank 1 sends to the invalid rank 7 on comm, whose handler must end the job, while
 * rank 0 is blocked in a receive. If the call returns instead, rank 1 unblocks rank 0,
 * both finish normally, and the job's zero status fails the runner's expectation.
 * The message check is crossmpi-only: Open MPI 4.1 sometimes loses its own message
 * ("ORTE_ERROR_LOG ... show_help.c") when the job aborts. */
static inline int invalid_send_ends_job(MPI_Comm comm, const char *handler) {
  int v = 0;
  if (t_rank == 1) {
    int rc = MPI_Send(&v, 1, MPI_INT, 7, 0, comm);
    fprintf(stderr, "%s: MPI_Send to rank 7 returned %d under %s\n", t_name, rc, handler);
    MPI_OK(MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
  } else {
    MPI_OK(MPI_Recv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  }
  MPI_OK(MPI_Finalize());
  return 0;
}

#endif
