// ranks: 1 2 4 6 7 8
/* Cartesian topologies: Dims_create, Cart_create (extra ranks get MPI_COMM_NULL),
 * Topo_test, Cartdim_get, Cart_get, Cart_coords/Cart_rank (periodic wrap), Cart_shift
 * (MPI_PROC_NULL at open ends), a halo exchange along the shift, Cart_sub, Cart_map. */
#include "common.h"

int main(int argc, char **argv) {
  t_init(&argc, &argv, "topo_cart");
  int n = t_size;
  int d2[2] = {0, 0};
  MPI_OK(MPI_Dims_create(n, 2, d2));
  CHECK(d2[0] * d2[1] == n && d2[0] >= d2[1], "dims %dx%d", d2[0], d2[1]);
  int d3[3] = {0, 0, 0};
  MPI_OK(MPI_Dims_create(12, 3, d3));
  CHECK(d3[0] == 3 && d3[1] == 2 && d3[2] == 2, "12 in 3 dims: %d %d %d", d3[0], d3[1], d3[2]);
  int dfix[2] = {0, 2};
  MPI_OK(MPI_Dims_create(8, 2, dfix));
  CHECK(dfix[0] == 4 && dfix[1] == 2, "fixed dim: %d %d", dfix[0], dfix[1]);

  /* a grid of n-1 ranks (when n > 2) leaves the last rank out */
  int m = n > 2 ? n - 1 : n;
  int dims[2] = {0, 0}, periods[2] = {1, 0};
  MPI_OK(MPI_Dims_create(m, 2, dims));
  MPI_Comm cart;
  MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
  int newrank;
  MPI_OK(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &newrank));
  CHECK(newrank == (t_rank < m ? t_rank : MPI_UNDEFINED) || t_peer(), "cart_map %d", newrank);
  if (t_rank >= m) {
    CHECK(cart == MPI_COMM_NULL, "rank outside the grid gets MPI_COMM_NULL");
    t_finish();
    return 0;
  }
  int status, nd, rank;
  MPI_OK(MPI_Topo_test(cart, &status));
  CHECK(status == MPI_CART, "topo_test %d", status);
  MPI_OK(MPI_Topo_test(MPI_COMM_WORLD, &status));
  CHECK(status == MPI_UNDEFINED, "world has no topology");
  MPI_OK(MPI_Cartdim_get(cart, &nd));
  CHECK(nd == 2, "cartdim %d", nd);
  MPI_OK(MPI_Comm_rank(cart, &rank));
  int gd[2], gp[2], gc[2], c[2];
  MPI_OK(MPI_Cart_get(cart, 2, gd, gp, gc));
  CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0, "cart_get");
  MPI_OK(MPI_Cart_coords(cart, rank, 2, c));
  CHECK(c[0] == gc[0] && c[1] == gc[1], "coords agree");
  CHECK(c[0] == rank / dims[1] && c[1] == rank % dims[1], "row-major coords (%d,%d) of %d", c[0], c[1], rank);
  int r2, wrap[2] = {c[0] + dims[0], c[1]};
  MPI_OK(MPI_Cart_rank(cart, wrap, &r2));
  CHECK(r2 == rank, "periodic wrap: %d", r2);

  /* shifts and a halo exchange in both dimensions */
  for (int dim = 0; dim < 2; dim++) {
    int src, dst;
    MPI_OK(MPI_Cart_shift(cart, dim, 1, &src, &dst));
    if (dim == 1) {
      CHECK((c[1] == 0) == (src == MPI_PROC_NULL), "open low end");
      CHECK((c[1] == dims[1] - 1) == (dst == MPI_PROC_NULL), "open high end");
    } else {
      CHECK(src != MPI_PROC_NULL && dst != MPI_PROC_NULL, "periodic dim has both");
    }
    int got = -5;
    MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, dst, dim, &got, 1, MPI_INT, src, dim, cart, MPI_STATUS_IGNORE));
    CHECK(got == (src == MPI_PROC_NULL ? -5 : src), "halo dim %d got %d from %d", dim, got, src);
  }

  /* Cart_sub keeping dimension 1: rows */
  int keep[2] = {0, 1}, rsize, rrank;
  MPI_Comm row;
  MPI_OK(MPI_Cart_sub(cart, keep, &row));
  MPI_OK(MPI_Comm_size(row, &rsize));
  MPI_OK(MPI_Comm_rank(row, &rrank));
  CHECK(rsize == dims[1] && rrank == c[1], "row %d/%d", rrank, rsize);
  MPI_OK(MPI_Cartdim_get(row, &nd));
  CHECK(nd == 1, "sub cartdim %d", nd);
  MPI_OK(MPI_Comm_free(&row));
  MPI_OK(MPI_Comm_free(&cart));
  t_finish();
  return 0;
}
