/* Shared helpers of crossmpi's C application kernels (tests/kernels/c).
 *
 * A kernel calls k_init() first and k_finish() last. A failed check prints
 * "FAIL <kernel> rank <r>: <file>:<line>: <what>" and aborts the whole job, so the
 * runner sees the failure whichever rank found it. k_finish() prints the slowest
 * rank's timed-section duration as "TIME <seconds>" (read by bench/kernels/run.sh)
 * and "OK <kernel>" (read by tests/kernels/run.sh).
 */
#ifndef CROSSMPI_KERNEL_H
#define CROSSMPI_KERNEL_H

#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *k_name = "?";
static int k_rank = -1;
static int k_size = 0;

static inline void k_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "FAIL %s rank %d: %s:%d: ", k_name, k_rank, file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1); /* only reached if MPI_Abort itself returns */
}

/* K_CHECK(cond, "expected %d, got %d", a, b) */
#define K_CHECK(cond, ...)                                                      \
  do {                                                                          \
    if (!(cond)) k_fail(__FILE__, __LINE__, "check `" #cond "` failed: " __VA_ARGS__); \
  } while (0)

/* Aborts unless an MPI call returned MPI_SUCCESS. */
#define K_MPI(call)                                                             \
  do {                                                                          \
    int k_rc_ = (call);                                                         \
    if (k_rc_ != MPI_SUCCESS) k_fail(__FILE__, __LINE__, "%s returned %d", #call, k_rc_); \
  } while (0)

static inline void k_init(int *argc, char ***argv, const char *name) {
  k_name = name;
  K_MPI(MPI_Init(argc, argv));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  K_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &k_rank));
  K_MPI(MPI_Comm_size(MPI_COMM_WORLD, &k_size));
}

/* Reports the timed section (the slowest rank's) and success, then finalizes. */
static inline void k_finish(double seconds) {
  double slowest = 0.0;
  K_MPI(MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
  if (k_rank == 0) {
    printf("TIME %.6f\n", slowest);
    printf("OK %s\n", k_name);
    fflush(stdout);
  }
  K_MPI(MPI_Finalize());
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
