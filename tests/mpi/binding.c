// ranks: 1 2 3 4 8
// impi: skip every cluster binds its own ranks; the clusters share this machine's processors
/* Binding (CROSSMPI_BIND=auto, the default): when a node holds at least as many ranks
 * as processors, every rank is bound to one processor, the node's ranks in equal blocks
 * of consecutive ranks, in order (local rank i of n on processor i * p / n of the p it
 * could run on, which the test takes from its launcher's mask); otherwise no rank is
 * bound. crossmpi only: other MPIs bind by their own rules. */
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
  /* The processors the rank could run on before it bound itself: its launcher's (the
   * parent process, mpirun), so a cpuset or taskset around the job is respected. */
  cpu_set_t before, now;
  CPU_ZERO(&before);
  CPU_ZERO(&now);
  CHECK(sched_getaffinity(getppid(), sizeof before, &before) == 0, "sched_getaffinity of the launcher failed");
  CHECK(sched_getaffinity(0, sizeof now, &now) == 0, "sched_getaffinity failed");
  int cpus[CPU_SETSIZE], ncpus = 0;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &before)) cpus[ncpus++] = c;
  int allowed = CPU_COUNT(&now), first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
    if (CPU_ISSET(c, &now)) first = c;
  if (locals >= ncpus) {
    int expected = cpus[(long)local * ncpus / locals];
    CHECK(allowed == 1 && first == expected,
          "local rank %d of %d on %d processors: allowed %d processors from %d, expected only %d", local,
          locals, ncpus, allowed, first, expected);
  } else {
    CHECK(CPU_EQUAL(&now, &before), "local rank %d of %d on %d processors: bound to %d of them", local, locals,
          ncpus, allowed);
  }
  MPI_OK(MPI_Comm_free(&node));
  t_finish();
  return 0;
}
