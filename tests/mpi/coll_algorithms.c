// ranks: 3 4 7 8
// args: dissemination,binomial,binomial,recursive_doubling,ring,linear two_level,scatter_allgather,two_level,rabenseifner,recursive_doubling,pairwise two_level,two_level,two_level,two_level,two_level,linear
/* Every selectable algorithm end to end: the argument names the algorithm forced for
 * barrier, bcast, reduce, allreduce, allgather and alltoall (CROSSMPI_COLL_<NAME>, set
 * before MPI_Init); each collective then runs on small and large data, every root, and
 * is checked. Algorithms that cannot run on a call (two-level on one node, recursive
 * doubling on a member count that is not a power of two) fall back to the default one,
 * which is checked just the same. Other MPIs ignore the variables. */
#include "common.h"

static const char *names[] = {"BARRIER", "BCAST", "REDUCE", "ALLREDUCE", "ALLGATHER", "ALLTOALL"};

static void force(const char *list) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  char *save = NULL;
  int i = 0;
  for (char *tok = strtok_r(buf, ",", &save); tok && i < 6; tok = strtok_r(NULL, ",", &save), i++) {
    char var[64];
    snprintf(var, sizeof var, "CROSSMPI_COLL_%s", names[i]);
    setenv(var, tok, 1);
  }
}

int main(int argc, char **argv) {
  if (argc > 1) force(argv[1]);
  t_init(&argc, &argv, "coll_algorithms");
  int n = t_size, me = t_rank;
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  /* 9000 ints: a broadcast in 16 KiB segments on a node with more ranks than cores */
  int sizes[] = {1, 5, 9000, 70000};
  for (int z = 0; z < 4; z++) {
    int k = sizes[z];
    int *a = t_alloc(sizeof(int) * k * n), *b = t_alloc(sizeof(int) * k * n);
    for (int root = 0; root < n; root++) {
      for (int i = 0; i < k; i++) a[i] = me == root ? i * 3 + root : -1;
      MPI_OK(MPI_Bcast(a, k, MPI_INT, root, MPI_COMM_WORLD));
      for (int i = 0; i < k; i++) CHECK(a[i] == i * 3 + root, "bcast k %d root %d [%d] = %d", k, root, i, a[i]);
      for (int i = 0; i < k; i++) a[i] = me + i;
      MPI_OK(MPI_Reduce(a, b, k, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
      if (me == root)
        for (int i = 0; i < k; i++) CHECK(b[i] == n * (n - 1) / 2 + n * i, "reduce k %d root %d [%d]", k, root, i);
    }
    for (int i = 0; i < k; i++) a[i] = me * 2 + i;
    MPI_OK(MPI_Allreduce(a, b, k, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < k; i++) CHECK(b[i] == n * (n - 1) + n * i, "allreduce k %d [%d] = %d", k, i, b[i]);
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, a, k, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    for (int i = 0; i < k; i++) CHECK(a[i] == (n - 1) * 2 + i, "allreduce in place k %d [%d]", k, i);
    for (int i = 0; i < k; i++) a[i] = me * 100 + i;
    MPI_OK(MPI_Allgather(a, k, MPI_INT, b, k, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < n; r++)
      for (int i = 0; i < k; i++) CHECK(b[r * k + i] == r * 100 + i, "allgather k %d from %d [%d]", k, r, i);
    for (int r = 0; r < n; r++)
      for (int i = 0; i < k; i++) a[r * k + i] = me * 1000 + r * 10 + i % 10;
    MPI_OK(MPI_Alltoall(a, k, MPI_INT, b, k, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < n; r++)
      for (int i = 0; i < k; i++) CHECK(b[r * k + i] == r * 1000 + me * 10 + i % 10, "alltoall k %d from %d", k, r);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    free(a);
    free(b);
  }
  t_finish();
  return 0;
}
