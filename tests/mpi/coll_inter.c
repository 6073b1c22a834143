// ranks: 2 3 4 5 8
/* Collectives over an intercommunicator (MPI-2 semantics). The world splits into a low
 * group (world ranks 0..n/2-1) and a high group; data always flows to the other group.
 * Rooted calls are done once with the root in each group, with MPI_ROOT at the root,
 * MPI_PROC_NULL at its group's other members and the root's rank in the other group;
 * buffers a process does not use are passed as NULL. Reduce-scatter delivers the other
 * group's reduction, scattered by each group's own counts. */
#include "common.h"

static int val(int group, int rank, int i) { return group * 100000 + rank * 100 + i; }

int main(int argc, char **argv) {
  t_init(&argc, &argv, "coll_inter");
  int n = t_size, half = n / 2;
  int low = t_rank < half;
  MPI_Comm local, inter;
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, low, t_rank, &local));
  MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 42, &inter));
  int me, lsize, rsize;
  MPI_OK(MPI_Comm_rank(inter, &me));
  MPI_OK(MPI_Comm_size(inter, &lsize));
  MPI_OK(MPI_Comm_remote_size(inter, &rsize));
  int g = low ? 0 : 1, other = 1 - g;
  enum { K = 3 };

  MPI_OK(MPI_Barrier(inter));

  for (int root_group = 0; root_group < 2; root_group++) {
    int rooted_size = root_group == 0 ? half : n - half;
    int root = rooted_size - 1; /* last rank of the root group */
    int in_root_group = g == root_group;
    int arg = in_root_group ? (me == root ? MPI_ROOT : MPI_PROC_NULL) : root;
    int is_root = in_root_group && me == root;

    /* bcast */
    int b[K];
    for (int i = 0; i < K; i++) b[i] = is_root ? val(g, me, i) : -1;
    MPI_OK(MPI_Bcast(arg == MPI_PROC_NULL ? NULL : b, K, MPI_INT, arg, inter)); /* unused there */
    if (!in_root_group)
      for (int i = 0; i < K; i++) CHECK(b[i] == val(root_group, root, i), "inter bcast [%d] = %d", i, b[i]);

    /* gather / scatter */
    int mine[K], *all = t_alloc(sizeof(int) * K * (rsize + 1));
    for (int i = 0; i < K; i++) mine[i] = val(g, me, i);
    MPI_OK(MPI_Gather(in_root_group ? NULL : mine, K, MPI_INT, is_root ? all : NULL, K, MPI_INT, arg, inter));
    if (is_root)
      for (int r = 0; r < rsize; r++)
        for (int i = 0; i < K; i++) CHECK(all[r * K + i] == val(other, r, i), "inter gather from %d", r);
    if (is_root)
      for (int r = 0; r < rsize; r++)
        for (int i = 0; i < K; i++) all[r * K + i] = val(7, r, i);
    for (int i = 0; i < K; i++) mine[i] = -1;
    MPI_OK(MPI_Scatter(is_root ? all : NULL, K, MPI_INT, in_root_group ? NULL : mine, K, MPI_INT, arg, inter));
    if (!in_root_group)
      for (int i = 0; i < K; i++) CHECK(mine[i] == val(7, me, i), "inter scatter [%d]", i);

    /* reduce: the root gets the sum over the other group */
    for (int i = 0; i < K; i++) mine[i] = val(g, me, i);
    int red[K];
    MPI_OK(MPI_Reduce(in_root_group ? NULL : mine, is_root ? red : NULL, K, MPI_INT, MPI_SUM, arg, inter));
    if (is_root)
      for (int i = 0; i < K; i++) {
        int want = 0;
        for (int r = 0; r < rsize; r++) want += val(other, r, i);
        CHECK(red[i] == want, "inter reduce [%d] = %d want %d", i, red[i], want);
      }
    free(all);
  }

  /* allreduce, allgather, alltoall: each side gets the other side's data */
  int mine[K], ar[K];
  for (int i = 0; i < K; i++) mine[i] = val(g, me, i);
  MPI_OK(MPI_Allreduce(mine, ar, K, MPI_INT, MPI_SUM, inter));
  for (int i = 0; i < K; i++) {
    int want = 0;
    for (int r = 0; r < rsize; r++) want += val(other, r, i);
    CHECK(ar[i] == want, "inter allreduce [%d] = %d want %d", i, ar[i], want);
  }
  int *ag = t_alloc(sizeof(int) * K * rsize);
  MPI_OK(MPI_Allgather(mine, K, MPI_INT, ag, K, MPI_INT, inter));
  for (int r = 0; r < rsize; r++)
    for (int i = 0; i < K; i++) CHECK(ag[r * K + i] == val(other, r, i), "inter allgather from %d", r);
  int *s = t_alloc(sizeof(int) * K * rsize), *rv = t_alloc(sizeof(int) * K * rsize);
  for (int r = 0; r < rsize; r++)
    for (int i = 0; i < K; i++) s[r * K + i] = val(g, me * 10 + r, i);
  MPI_OK(MPI_Alltoall(s, K, MPI_INT, rv, K, MPI_INT, inter));
  for (int r = 0; r < rsize; r++)
    for (int i = 0; i < K; i++) CHECK(rv[r * K + i] == val(other, r * 10 + me, i), "inter alltoall from %d", r);
  /* nonblocking over the intercommunicator */
  MPI_Request rq;
  MPI_OK(MPI_Iallreduce(mine, ar, K, MPI_INT, MPI_MAX, inter, &rq));
  MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  for (int i = 0; i < K; i++) CHECK(ar[i] == val(other, rsize - 1, i), "inter iallreduce max [%d]", i);
  MPI_OK(MPI_Ibarrier(inter, &rq));
  MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));

  /* reduce_scatter(_block): each side gets the other side's sum of vectors of
   * lsize * rsize elements (the same count on both sides), scattered by its own counts:
   * blocks of rsize each, or 2 rsize to rank 0, none to the last rank, rsize to the
   * others (blocking and nonblocking) */
  int count = lsize * rsize;
  int *vec = t_alloc(sizeof(int) * count), *got = t_alloc(sizeof(int) * count);
  int *counts = t_alloc(sizeof(int) * lsize);
  for (int j = 0; j < count; j++) vec[j] = val(g, me, j);
  for (int variant = 0; variant < 4; variant++) {
    int uneven = variant >= 2, first = 0;
    for (int r = 0; r < lsize; r++) {
      counts[r] = rsize;
      if (uneven && lsize > 1) counts[r] = r == 0 ? 2 * rsize : r == lsize - 1 ? 0 : rsize;
      if (r < me) first += counts[r];
    }
    for (int j = 0; j < count; j++) got[j] = -1;
    if (variant == 0) {
      MPI_OK(MPI_Reduce_scatter_block(vec, got, rsize, MPI_INT, MPI_SUM, inter));
    } else if (variant == 1) {
      MPI_OK(MPI_Ireduce_scatter_block(vec, got, rsize, MPI_INT, MPI_SUM, inter, &rq));
      MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else if (variant == 2) {
      MPI_OK(MPI_Reduce_scatter(vec, got, counts, MPI_INT, MPI_SUM, inter));
    } else {
      MPI_OK(MPI_Ireduce_scatter(vec, got, counts, MPI_INT, MPI_SUM, inter, &rq));
      MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
    for (int i = 0; i < counts[me]; i++) {
      int want = 0;
      for (int r = 0; r < rsize; r++) want += val(other, r, first + i);
      CHECK(got[i] == want, "inter reduce_scatter variant %d [%d] = %d want %d", variant, i, got[i], want);
    }
    CHECK(counts[me] == count || got[counts[me]] == -1, "inter reduce_scatter variant %d wrote past its block",
          variant);
  }
  free(vec);
  free(got);
  free(counts);
  free(ag);
  free(s);
  free(rv);
  MPI_OK(MPI_Comm_free(&inter));
  MPI_OK(MPI_Comm_free(&local));
  t_finish();
  return 0;
}
