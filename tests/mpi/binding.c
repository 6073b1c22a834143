// ranks: 1 2 3 4 8
// impi: skip every cluster binds its own ranks; the clusters share this machine's processors
/* Binding (CROSSMPI_BIND=auto, the default): when a node holds more ranks than
 * processors, every rank is bound to one processor, the node's ranks in equal blocks
 * of consecutive ranks, in order (local rank i of n on processor i * p / n of the p it
 * could run on); otherwise no rank is bound. crossmpi only: other MPIs bind by their
 * own rules. Assumes the job was started with every online processor allowed. */
#define _GNU_SOURCE
#include <sched.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char **argv) {
  t_init(&argc, &argv, "binding");
  if (t_peer()) {
    t_finish();
    return 0;
  }
  MPI_Comm node;
  MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int local = 0, locals = 0;
  MPI_OK(MPI_Comm_rank(node, &local));
  MPI_OK(MPI_Comm_size(node, &locals));
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t set;
  CPU_ZERO(&set);
  CHECK(sched_getaffinity(0, sizeof set, &set) == 0, "sched_getaffinity failed");
  int allowed = CPU_COUNT(&set), first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
    if (CPU_ISSET(c, &set)) first = c;
  if (locals > online) {
    int expected = (int)((long)local * online / locals);
    CHECK(allowed == 1 && first == expected,
          "local rank %d of %d on %ld processors: allowed %d processors from %d, expected only %d", local,
          locals, online, allowed, first, expected);
  } else {
    CHECK(allowed == online, "local rank %d of %d on %ld processors: bound to %d of them", local, locals,
          online, allowed);
  }
  MPI_OK(MPI_Comm_free(&node));
  t_finish();
  return 0;
}
