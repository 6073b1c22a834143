// ranks: 1 2 3 4 6 8
/* Neighbourhood collectives on a periodic 1-D ring (at 1 and 2 ranks both neighbours
 * are the same process: the -1 slot must hold what the -1 neighbour sent to its +1
 * neighbour), on a 2-D non-periodic grid (MPI_PROC_NULL neighbours at the edges), and
 * on a distributed graph with irregular degrees; blocking and nonblocking, v and w. */
#include "common.h"

static int val(int from, int to, int i) { return from * 10000 + to * 100 + i; }

static void ring(void) {
  MPI_Comm c;
  int dims[1] = {t_size}, periods[1] = {1};
  MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c));
  int me, left, right;
  MPI_OK(MPI_Comm_rank(c, &me));
  MPI_OK(MPI_Cart_shift(c, 0, 1, &left, &right));
  int mine[2] = {me * 7, me * 7 + 1}, got[4] = {-1, -1, -1, -1};
  MPI_OK(MPI_Neighbor_allgather(mine, 2, MPI_INT, got, 2, MPI_INT, c));
  CHECK(got[0] == left * 7 && got[1] == left * 7 + 1, "ring allgather from left %d: %d", left, got[0]);
  CHECK(got[2] == right * 7 && got[3] == right * 7 + 1, "ring allgather from right %d: %d", right, got[2]);
  /* alltoall: block 0 goes to the -1 neighbour, block 1 to the +1 neighbour */
  int s[2] = {val(me, 0, 0), val(me, 1, 0)}, r[2] = {-1, -1};
  MPI_OK(MPI_Neighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, c));
  CHECK(r[0] == val(left, 1, 0), "ring alltoall -1 slot %d want %d", r[0], val(left, 1, 0));
  CHECK(r[1] == val(right, 0, 0), "ring alltoall +1 slot %d want %d", r[1], val(right, 0, 0));
  MPI_Request rq;
  r[0] = r[1] = -1;
  MPI_OK(MPI_Ineighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, c, &rq));
  MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  /* Open MPI 4.1's nonblocking form mixes the two slots up when both neighbours are the
   * same process (the MPI-4 rule); crossmpi keeps them apart. */
  CHECK_CROSSMPI(r[0] == val(left, 1, 0) && r[1] == val(right, 0, 0), "ring ialltoall");
  MPI_OK(MPI_Comm_free(&c));
}

static void grid(void) {
  int dims[2] = {0, 0}, periods[2] = {0, 0};
  MPI_OK(MPI_Dims_create(t_size, 2, dims));
  MPI_Comm c;
  MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));
  int me, nb[4];
  MPI_OK(MPI_Comm_rank(c, &me));
  MPI_OK(MPI_Cart_shift(c, 0, 1, &nb[0], &nb[1]));
  MPI_OK(MPI_Cart_shift(c, 1, 1, &nb[2], &nb[3]));
  /* alltoallv: 1 + slot elements to each neighbour, -9 stays where PROC_NULL is */
  int sc[4], sd[4], rc[4], rd[4], s[16], r[16];
  for (int j = 0; j < 4; j++) {
    sc[j] = rc[j] = 1 + j / 2;
    sd[j] = rd[j] = j * 4;
    for (int i = 0; i < sc[j]; i++) s[sd[j] + i] = val(me, j, i);
  }
  for (int i = 0; i < 16; i++) r[i] = -9;
  MPI_OK(MPI_Neighbor_alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, c));
  for (int j = 0; j < 4; j++)
    for (int i = 0; i < rc[j]; i++) {
      int want = nb[j] == MPI_PROC_NULL ? -9 : val(nb[j], j ^ 1, i);
      CHECK(r[rd[j] + i] == want, "grid alltoallv slot %d [%d] = %d want %d", j, i, r[rd[j] + i], want);
    }
  /* alltoallw with byte displacements */
  MPI_Aint sdb[4], rdb[4];
  MPI_Datatype ty[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT};
  for (int j = 0; j < 4; j++) {
    sdb[j] = sd[j] * (MPI_Aint)sizeof(int);
    rdb[j] = rd[j] * (MPI_Aint)sizeof(int);
  }
  for (int i = 0; i < 16; i++) r[i] = -9;
  MPI_OK(MPI_Neighbor_alltoallw(s, sc, sdb, ty, r, rc, rdb, ty, c));
  for (int j = 0; j < 4; j++)
    for (int i = 0; i < rc[j]; i++) {
      int want = nb[j] == MPI_PROC_NULL ? -9 : val(nb[j], j ^ 1, i);
      CHECK(r[rd[j] + i] == want, "grid alltoallw slot %d [%d]", j, i);
    }
  MPI_OK(MPI_Comm_free(&c));
}

static void graph(void) {
  /* rank r sends to r+1 .. r+(r%3) (mod n); sources are the inverse */
  int n = t_size, me = t_rank;
  int dst[3], nd = 0, src[8], ns = 0;
  for (int k = 1; k <= me % 3; k++) dst[nd++] = (me + k) % n;
  for (int r = 0; r < n; r++)
    for (int k = 1; k <= r % 3; k++)
      if ((r + k) % n == me) src[ns++] = r;
  MPI_Comm c;
  MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, ns, src, MPI_UNWEIGHTED, nd, dst, MPI_UNWEIGHTED,
                                        MPI_INFO_NULL, 0, &c));
  int mine = me * 3 + 1, got[8], counts[8], displs[8];
  for (int i = 0; i < ns; i++) {
    got[i] = -1;
    counts[i] = 1;
    displs[i] = ns - 1 - i;
  }
  MPI_Request rq;
  MPI_OK(MPI_Ineighbor_allgatherv(&mine, 1, MPI_INT, got, counts, displs, MPI_INT, c, &rq));
  MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  for (int i = 0; i < ns; i++) CHECK(got[ns - 1 - i] == src[i] * 3 + 1, "graph allgatherv from %d", src[i]);
  MPI_OK(MPI_Comm_free(&c));
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "coll_neighbor");
  ring();
  grid();
  graph();
  t_finish();
  return 0;
}
