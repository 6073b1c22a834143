/* Pipelined wavefront sweep (the pattern of an LU/SSOR lower-triangular sweep).
 *
 * NK independent planes of NI x NJ points, each swept by the recurrence
 *   a[i][j] = 0.45 (a[i-1][j] + a[i][j-1]) + 0.1 a_prev[i][j] + s[i][j]
 * (a = 0 outside the plane, a_prev = the previous sweep's value). The (i, j) plane is
 * split in blocks over a rows x cols process grid; every plane is a wavefront: a rank
 * blocks in MPI_Recv for the row from its north neighbour and the column from its
 * west neighbour, computes its block, and sends its last row south and its last
 * column east, then goes on with the next plane, so the planes pipeline. SWEEPS
 * sweeps are timed; then every value is compared with a serial sweep of the whole
 * grid done by each rank (to 1e-12).
 */
// ranks: 1 2 4 8
#include "kernel.h"

enum { NK = 32, NI = 240, NJ = 240, SWEEPS = 6 };

static double source(int k, int i, int j) { return 0.5 * k_unit(((uint64_t)k * NI + i) * NJ + j); }

/* One sweep of plane block rows [i0,i1) x cols [j0,j1); `a` has a halo row 0 and
 * column 0 (the north/west boundary values), row stride w. */
static void sweep_block(double *a, const double *prev, int k, int i0, int i1, int j0, int j1, int w) {
  for (int i = 1; i <= i1 - i0; i++)
    for (int j = 1; j <= j1 - j0; j++)
      a[i * w + j] = 0.45 * (a[(i - 1) * w + j] + a[i * w + j - 1]) + 0.1 * prev[i * w + j] +
                     source(k, i0 + i - 1, j0 + j - 1);
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "wavefront");
  int prow, pcol;
  k_grid2(t_size, &prow, &pcol);
  int my_row = t_rank / pcol, my_col = t_rank % pcol;
  int north = my_row > 0 ? t_rank - pcol : MPI_PROC_NULL;
  int south = my_row < prow - 1 ? t_rank + pcol : MPI_PROC_NULL;
  int west = my_col > 0 ? t_rank - 1 : MPI_PROC_NULL;
  int east = my_col < pcol - 1 ? t_rank + 1 : MPI_PROC_NULL;
  int i0, i1, j0, j1;
  k_block(NI, prow, my_row, &i0, &i1);
  k_block(NJ, pcol, my_col, &j0, &j1);
  int ni = i1 - i0, nj = j1 - j0, w = nj + 1;
  size_t plane = (size_t)(ni + 1) * w;
  /* per plane: current and previous sweep, with a halo row 0 and column 0 */
  double *cur = calloc(NK * plane, sizeof(double)), *prev = calloc(NK * plane, sizeof(double));
  double *column = malloc(sizeof(double) * (ni + 1));
  CHECK(cur && prev && column, "out of memory");

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int s = 0; s < SWEEPS; s++) {
    double *t = prev; prev = cur; cur = t;
    for (int k = 0; k < NK; k++) {
      double *a = cur + k * plane;
      /* north: my halo row 0; west: my halo column 0 (zeros at the plane's edge) */
      MPI_OK(MPI_Recv(&a[1], nj, MPI_DOUBLE, north, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      if (west != MPI_PROC_NULL) {
        MPI_OK(MPI_Recv(column, ni, MPI_DOUBLE, west, NK + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 1; i <= ni; i++) a[i * w] = column[i - 1];
      }
      sweep_block(a, prev + k * plane, k, i0, i1, j0, j1, w);
      MPI_OK(MPI_Send(&a[ni * w + 1], nj, MPI_DOUBLE, south, k, MPI_COMM_WORLD));
      if (east != MPI_PROC_NULL) {
        for (int i = 1; i <= ni; i++) column[i - 1] = a[i * w + nj];
        MPI_OK(MPI_Send(column, ni, MPI_DOUBLE, east, NK + k, MPI_COMM_WORLD));
      }
    }
  }
  double elapsed = MPI_Wtime() - t0;

  /* serial reference over the whole grid, one plane at a time */
  int sw = NJ + 1;
  size_t splane = (size_t)(NI + 1) * sw;
  double *ref = calloc(splane, sizeof(double)), *ref_prev = calloc(splane, sizeof(double));
  CHECK(ref && ref_prev, "out of memory");
  double worst = 0.0;
  for (int k = 0; k < NK; k++) {
    memset(ref, 0, splane * sizeof(double));
    for (int s = 0; s < SWEEPS; s++) {
      memcpy(ref_prev, ref, splane * sizeof(double));
      sweep_block(ref, ref_prev, k, 0, NI, 0, NJ, sw);
    }
    const double *a = cur + k * plane;
    for (int i = 1; i <= ni; i++)
      for (int j = 1; j <= nj; j++)
        worst = fmax(worst, fabs(a[i * w + j] - ref[(i0 + i) * sw + j0 + j]));
  }
  double all_worst;
  MPI_OK(MPI_Allreduce(&worst, &all_worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  CHECK(all_worst <= 1e-12, "max difference from the serial sweep %g", all_worst);
  if (t_rank == 0)
    printf("wavefront: %d planes of %dx%d, grid %dx%d, %d sweeps, max difference %.1e\n", NK, NI,
           NJ, prow, pcol, SWEEPS, all_worst);
  free(cur); free(prev); free(column); free(ref); free(ref_prev);
  k_finish(elapsed);
  return 0;
}
