// ranks: 2
// expect: exit=nonzero within=10
// expect-crossmpi: output~"MPI_Send" output~"dest" output~"7"
/* The default error handler, MPI_ERRORS_ARE_FATAL: rank 1's send to an invalid rank
 * must end the whole job with a non-zero status and a message naming the call. */
#include "fatal.h"

int main(int argc, char **argv) {
  t_init(&argc, &argv, "errors_fatal");
  return invalid_send_ends_job(MPI_COMM_WORLD, "MPI_ERRORS_ARE_FATAL");
}
