/* Conjugate gradient on a 2-D process grid.
 *
 * Solves A u = b for the 5-point Laplacian A on an N x N grid (zero Dirichlet
 * boundary), with b = A u* for a known pseudo-random u*, so the answer is known
 * exactly: CG must reach ||b - A u|| <= 1e-10 ||b|| and |u - u*| <= 1e-6 everywhere.
 * The grid is split in blocks over a rows x cols process grid; row and column
 * communicators come from MPI_Comm_split: halos go to the east/west neighbours over
 * the row communicator and to the north/south ones over the column communicator with
 * MPI_Sendrecv, and every dot product is an MPI_Allreduce over the row communicator
 * followed by one over the column communicator.
 */
// ranks: 1 2 4 8
#include "kernel.h"

enum { N = 256, MAX_ITER = 4000 };

typedef struct {
  MPI_Comm row, col;   /* my process row (east/west), my process column (north/south) */
  int north, south;    /* ranks in col, MPI_PROC_NULL at the edge */
  int west, east;      /* ranks in row */
  int r0, r1, c0, c1;  /* my block of global rows and columns */
  int nr, nc;          /* its size */
  double *sendbuf, *recvbuf;
} Grid;

#define AT(g, v, i, j) (v)[(size_t)(i) * ((g)->nc + 2) + (j)] /* i, j in 0..n+1 */

static void halo(Grid *g, double *v) {
  int nc = g->nc, nr = g->nr;
  /* north/south: rows are contiguous */
  MPI_OK(MPI_Sendrecv(&AT(g, v, 1, 1), nc, MPI_DOUBLE, g->north, 1, &AT(g, v, nr + 1, 1), nc,
                     MPI_DOUBLE, g->south, 1, g->col, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Sendrecv(&AT(g, v, nr, 1), nc, MPI_DOUBLE, g->south, 2, &AT(g, v, 0, 1), nc,
                     MPI_DOUBLE, g->north, 2, g->col, MPI_STATUS_IGNORE));
  /* east/west: columns are strided, packed by hand */
  for (int dir = 0; dir < 2; dir++) {
    int to = dir == 0 ? g->west : g->east, from = dir == 0 ? g->east : g->west;
    int send_col = dir == 0 ? 1 : nc, recv_col = dir == 0 ? nc + 1 : 0;
    for (int i = 0; i < nr; i++) g->sendbuf[i] = AT(g, v, i + 1, send_col);
    MPI_OK(MPI_Sendrecv(g->sendbuf, nr, MPI_DOUBLE, to, 3 + dir, g->recvbuf, nr, MPI_DOUBLE, from,
                       3 + dir, g->row, MPI_STATUS_IGNORE));
    if (from != MPI_PROC_NULL)
      for (int i = 0; i < nr; i++) AT(g, v, i + 1, recv_col) = g->recvbuf[i];
  }
}

/* y = A v (v's halo is refreshed first) */
static void matvec(Grid *g, double *v, double *y) {
  halo(g, v);
  for (int i = 1; i <= g->nr; i++)
    for (int j = 1; j <= g->nc; j++)
      AT(g, y, i, j) = 4.0 * AT(g, v, i, j) - AT(g, v, i - 1, j) - AT(g, v, i + 1, j) -
                       AT(g, v, i, j - 1) - AT(g, v, i, j + 1);
}

static double dot(Grid *g, const double *a, const double *b) {
  double local = 0.0, in_row = 0.0, all = 0.0;
  for (int i = 1; i <= g->nr; i++)
    for (int j = 1; j <= g->nc; j++) local += AT(g, a, i, j) * AT(g, b, i, j);
  MPI_OK(MPI_Allreduce(&local, &in_row, 1, MPI_DOUBLE, MPI_SUM, g->row));
  MPI_OK(MPI_Allreduce(&in_row, &all, 1, MPI_DOUBLE, MPI_SUM, g->col));
  return all;
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "cg");
  int prow, pcol;
  k_grid2(t_size, &prow, &pcol);
  int my_row = t_rank / pcol, my_col = t_rank % pcol;
  Grid g;
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, my_row, my_col, &g.row));
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, my_col, my_row, &g.col));
  int rsize, csize, rrank, crank;
  MPI_Comm_size(g.row, &rsize);
  MPI_Comm_size(g.col, &csize);
  MPI_Comm_rank(g.row, &rrank);
  MPI_Comm_rank(g.col, &crank);
  CHECK(rsize == pcol && csize == prow && rrank == my_col && crank == my_row,
          "row comm %d/%d, column comm %d/%d for grid %dx%d position (%d,%d)", rrank, rsize,
          crank, csize, prow, pcol, my_row, my_col);
  g.west = my_col > 0 ? my_col - 1 : MPI_PROC_NULL;
  g.east = my_col < pcol - 1 ? my_col + 1 : MPI_PROC_NULL;
  g.north = my_row > 0 ? my_row - 1 : MPI_PROC_NULL;
  g.south = my_row < prow - 1 ? my_row + 1 : MPI_PROC_NULL;
  k_block(N, prow, my_row, &g.r0, &g.r1);
  k_block(N, pcol, my_col, &g.c0, &g.c1);
  g.nr = g.r1 - g.r0;
  g.nc = g.c1 - g.c0;
  size_t cells = (size_t)(g.nr + 2) * (g.nc + 2);
  double *exact = calloc(cells, sizeof(double)), *u = calloc(cells, sizeof(double));
  double *r = calloc(cells, sizeof(double)), *p = calloc(cells, sizeof(double));
  double *q = calloc(cells, sizeof(double)), *b = calloc(cells, sizeof(double));
  g.sendbuf = malloc(sizeof(double) * (g.nr + 1));
  g.recvbuf = malloc(sizeof(double) * (g.nr + 1));
  CHECK(exact && u && r && p && q && b && g.sendbuf && g.recvbuf, "out of memory");
  for (int i = 1; i <= g.nr; i++)
    for (int j = 1; j <= g.nc; j++)
      AT(&g, exact, i, j) = k_unit((uint64_t)(g.r0 + i - 1) * N + (g.c0 + j - 1));
  matvec(&g, exact, b);

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  /* u = 0, r = p = b */
  memcpy(r, b, cells * sizeof(double));
  memcpy(p, b, cells * sizeof(double));
  double rr = dot(&g, r, r), bb = rr;
  int iter = 0;
  while (iter < MAX_ITER && rr > 1e-20 * bb) {
    matvec(&g, p, q);
    double alpha = rr / dot(&g, p, q);
    for (int i = 1; i <= g.nr; i++)
      for (int j = 1; j <= g.nc; j++) {
        AT(&g, u, i, j) += alpha * AT(&g, p, i, j);
        AT(&g, r, i, j) -= alpha * AT(&g, q, i, j);
      }
    double rr_next = dot(&g, r, r);
    double beta = rr_next / rr;
    rr = rr_next;
    for (int i = 1; i <= g.nr; i++)
      for (int j = 1; j <= g.nc; j++) AT(&g, p, i, j) = AT(&g, r, i, j) + beta * AT(&g, p, i, j);
    iter++;
  }
  double elapsed = MPI_Wtime() - t0;

  CHECK(rr <= 1e-20 * bb, "no convergence in %d iterations: |r|/|b| = %g", iter, sqrt(rr / bb));
  /* the true residual, not the recurrence's */
  matvec(&g, u, q);
  double err = 0.0, res = 0.0, all_err = 0.0, all_res = 0.0;
  for (int i = 1; i <= g.nr; i++)
    for (int j = 1; j <= g.nc; j++) {
      err = fmax(err, fabs(AT(&g, u, i, j) - AT(&g, exact, i, j)));
      double d = AT(&g, b, i, j) - AT(&g, q, i, j);
      res += d * d;
    }
  MPI_OK(MPI_Allreduce(&err, &all_err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  MPI_OK(MPI_Allreduce(&res, &all_res, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  CHECK(sqrt(all_res / bb) <= 1e-9, "true residual %g after %d iterations", sqrt(all_res / bb), iter);
  CHECK(all_err <= 1e-6, "max |u - u*| = %g after %d iterations", all_err, iter);
  if (t_rank == 0)
    printf("cg: N=%d grid %dx%d, %d iterations, |r|/|b| = %.2e, max error %.2e\n", N, prow, pcol,
           iter, sqrt(all_res / bb), all_err);
  free(exact); free(u); free(r); free(p); free(q); free(b);
  free(g.sendbuf); free(g.recvbuf);
  MPI_Comm_free(&g.row);
  MPI_Comm_free(&g.col);
  k_finish(elapsed);
  return 0;
}
