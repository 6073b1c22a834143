// ranks: 1 3 4 8
/* Graph and distributed graph topologies: Graph_create (a ring), Graphdims_get,
 * Graph_get, Graph_neighbors(_count), Graph_map, Topo_test; Dist_graph_create_adjacent
 * (weighted) and Dist_graph_create (each rank names one edge, rank r -> r+1 and
 * r -> r+2, and with no edge at all), Dist_graph_neighbors(_count); messages along the
 * edges. */
#include "common.h"

int main(int argc, char **argv) {
  t_init(&argc, &argv, "topo_graph");
  int n = t_size, status;
  int index[64], edges[128];
  for (int i = 0; i < n; i++) {
    index[i] = 2 * (i + 1);
    edges[2 * i] = (i + n - 1) % n;
    edges[2 * i + 1] = (i + 1) % n;
  }
  MPI_Comm g;
  MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
  MPI_OK(MPI_Topo_test(g, &status));
  CHECK(status == MPI_GRAPH, "topo_test graph %d", status);
  int nn, ne, cnt, nb[2];
  MPI_OK(MPI_Graphdims_get(g, &nn, &ne));
  CHECK(nn == n && ne == 2 * n, "graphdims %d %d", nn, ne);
  int gi[64], ge[128];
  MPI_OK(MPI_Graph_get(g, n, 2 * n, gi, ge));
  for (int i = 0; i < n; i++) CHECK(gi[i] == index[i], "graph_get index %d", i);
  for (int i = 0; i < 2 * n; i++) CHECK(ge[i] == edges[i], "graph_get edge %d", i);
  MPI_OK(MPI_Graph_neighbors_count(g, t_rank, &cnt));
  CHECK(cnt == 2, "neighbors count %d", cnt);
  MPI_OK(MPI_Graph_neighbors(g, t_rank, 2, nb));
  CHECK(nb[0] == (t_rank + n - 1) % n && nb[1] == (t_rank + 1) % n, "neighbors %d %d", nb[0], nb[1]);
  int got = -1;
  MPI_OK(MPI_Sendrecv(&t_rank, 1, MPI_INT, nb[1], 0, &got, 1, MPI_INT, nb[0], 0, g, MPI_STATUS_IGNORE));
  CHECK(got == nb[0], "graph ring got %d", got);
  int newrank;
  MPI_OK(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &newrank));
  CHECK(newrank >= 0 && newrank < n, "graph_map %d", newrank);
  MPI_OK(MPI_Comm_free(&g));

  /* adjacent: in from r-1, out to r+1, weights = peer rank + 10 */
  int src = (t_rank + n - 1) % n, dst = (t_rank + 1) % n;
  int sw = src + 10, dw = dst + 10;
  MPI_Comm dg;
  MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, &sw, 1, &dst, &dw, MPI_INFO_NULL, 0, &dg));
  MPI_OK(MPI_Topo_test(dg, &status));
  CHECK(status == MPI_DIST_GRAPH, "topo_test dist graph %d", status);
  int indeg, outdeg, weighted;
  MPI_OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
  CHECK(indeg == 1 && outdeg == 1 && weighted, "adjacent counts %d %d %d", indeg, outdeg, weighted);
  int s1, w1, d1, w2;
  MPI_OK(MPI_Dist_graph_neighbors(dg, 1, &s1, &w1, 1, &d1, &w2));
  CHECK(s1 == src && w1 == sw && d1 == dst && w2 == dw, "adjacent neighbours %d %d %d %d", s1, w1, d1, w2);
  MPI_OK(MPI_Comm_free(&dg));

  /* general: rank r names the edges r -> r+1 and r -> r+2 (mod n) */
  int sources[1] = {t_rank}, degrees[1] = {2}, dests[2] = {(t_rank + 1) % n, (t_rank + 2) % n};
  MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, sources, degrees, dests, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
  MPI_OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
  CHECK(indeg == 2 && outdeg == 2 && !weighted, "general counts %d %d %d", indeg, outdeg, weighted);
  int ins[2], outs[2];
  MPI_OK(MPI_Dist_graph_neighbors(dg, 2, ins, MPI_UNWEIGHTED, 2, outs, MPI_UNWEIGHTED));
  int a = (t_rank + n - 1) % n, b = (t_rank + n - 2) % n;
  CHECK((ins[0] == a && ins[1] == b) || (ins[0] == b && ins[1] == a), "in-neighbours %d %d", ins[0], ins[1]);
  CHECK((outs[0] == dests[0] && outs[1] == dests[1]) || (outs[0] == dests[1] && outs[1] == dests[0]),
        "out-neighbours %d %d", outs[0], outs[1]);
  /* send along every out-edge, receive along every in-edge */
  MPI_Request rq[4];
  int vals[2];
  for (int i = 0; i < 2; i++) MPI_OK(MPI_Irecv(&vals[i], 1, MPI_INT, ins[i], 3, dg, &rq[i]));
  for (int i = 0; i < 2; i++) MPI_OK(MPI_Isend(&t_rank, 1, MPI_INT, outs[i], 3, dg, &rq[2 + i]));
  MPI_OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
  for (int i = 0; i < 2; i++) CHECK(vals[i] == ins[i], "edge message %d from %d", vals[i], ins[i]);
  MPI_OK(MPI_Comm_free(&dg));

  /* a graph nobody gives an edge to (every rank passes n = 0): no neighbours */
  MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 0, sources, degrees, dests, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
  MPI_OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
  CHECK(indeg == 0 && outdeg == 0 && !weighted, "empty graph counts %d %d %d", indeg, outdeg, weighted);
  MPI_OK(MPI_Comm_free(&dg));
  t_finish();
  return 0;
}
