/* Shared helpers of the point-to-point benchmark programs (pingpong, bandwidth,
 * exchange): result lines, iteration counts, and the data check made once per size
 * outside the timed loops. Every program prints "RESULT <bench> <bytes> <value>"
 * lines on rank 0, which bench/run.sh collects. */
#ifndef CROSSMPI_BENCH_H
#define CROSSMPI_BENCH_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZE (4 << 20)

static inline void die(const char *what, long size) {
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "bench: rank %d: %s (size %ld)\n", rank, what, size);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

static inline void *bench_alloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (p == NULL) die("out of memory", (long)n);
  memset(p, 0, n ? n : 1); /* touch every page before timing */
  return p;
}

static inline unsigned char pattern(size_t i, int seed) { return (unsigned char)((i * 31u + (unsigned)seed * 17u) & 0xff); }

static inline void fill(unsigned char *buf, size_t n, int seed) {
  for (size_t i = 0; i < n; i++) buf[i] = pattern(i, seed);
}

static inline void verify(const unsigned char *buf, size_t n, int seed, const char *bench) {
  for (size_t i = 0; i < n; i++)
    if (buf[i] != pattern(i, seed)) {
      char what[160];
      snprintf(what, sizeof what, "%s: received data wrong at byte %zu", bench, i);
      die(what, (long)n);
    }
}

/* Iterations for a message size: many for small messages, fewer for large ones,
 * so that every size takes a comparable, short time. */
static inline int iterations(long size, int small_iters, int min_iters) {
  if (size <= 1024) return small_iters;
  long n = (long)small_iters * 1024 / size;
  return n < min_iters ? min_iters : (int)n;
}

static inline void result(const char *bench, long size, double value) {
  printf("RESULT %s %ld %.4f\n", bench, size, value);
  fflush(stdout);
}

#endif
