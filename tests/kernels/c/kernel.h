/* Shared helpers of crossmpi's C application kernels (tests/kernels/c), on top of the
 * C tests' tests/mpi/common.h: t_init(), CHECK(cond, fmt, ...) and MPI_OK(call) (a
 * failed check aborts the whole job with "FAIL <kernel> rank <r>: ..."), t_rank,
 * t_size. A kernel ends with k_finish(seconds), which prints the slowest rank's
 * timed-section duration as "TIME <seconds>" (read by bench/kernels/run.sh) and then,
 * through t_finish(), "OK <kernel>" (read by tests/kernels/run.sh).
 */
#ifndef CROSSMPI_KERNEL_H
#define CROSSMPI_KERNEL_H

#include <math.h>

#include "../../mpi/common.h"

/* Reports the timed section (the slowest rank's) and success, then finalizes. */
static inline void k_finish(double seconds) {
  double slowest = 0.0;
  MPI_OK(MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
  if (t_rank == 0) {
    printf("TIME %.6f\n", slowest);
    fflush(stdout);
  }
  t_finish();
}

/* Splits p ranks into a rows x cols process grid, rows <= cols, as square as p allows. */
static inline void k_grid2(int p, int *rows, int *cols) {
  int r = 1;
  for (int d = 1; d * d <= p; d++)
    if (p % d == 0) r = d;
  *rows = r;
  *cols = p / r;
}

/* The half-open range [*lo, *hi) of n items that part `part` of `parts` owns. */
static inline void k_block(int n, int parts, int part, int *lo, int *hi) {
  *lo = (int)((long)n * part / parts);
  *hi = (int)((long)n * (part + 1) / parts);
}

/* A deterministic 64-bit mix (splitmix64 finalizer): the same value for the same
 * input on every rank and every rank count. */
static inline uint64_t k_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* A value in [-1, 1) derived from an integer. */
static inline double k_unit(uint64_t x) {
  return (double)(k_mix(x) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

#endif
