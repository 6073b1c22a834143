/* Shared helpers for crossmpi's C MPI test programs.
 *
 * Every program calls t_init() first and t_finish() last. A failed check prints
 * "FAIL <test> rank <r>: <file>:<line>: <what> ..." and aborts the whole job with
 * exit status 1, so the runner sees the failure whichever rank found it.
 * Control traffic (t_barrier) runs on a private duplicate of MPI_COMM_WORLD so that
 * it can never be matched by a wildcard receive of the test itself, and so that the
 * point-to-point tests do not depend on the collectives.
 */
#ifndef CROSSMPI_TEST_COMMON_H
#define CROSSMPI_TEST_COMMON_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *t_name = "?";
static int t_rank = -1;
static int t_size = 0;
static MPI_Comm t_ctl; /* private control communicator */

/* Peer mode: the runner sets CROSSMPI_TEST_PEER=1 when it validates the programs
 * against another MPI; only checks of crossmpi-specific promises (message text,
 * memory bound of flow control, MPI 5.0) are then reported instead of failing. */
static inline int t_peer(void) {
  const char *v = getenv("CROSSMPI_TEST_PEER");
  return v != NULL && strcmp(v, "1") == 0;
}

static inline void t_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "FAIL %s rank %d: %s:%d: ", t_name, t_rank, file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1); /* only reached if MPI_Abort itself returns */
}

/* CHECK(cond, "expected %d, got %d", a, b) */
#define CHECK(cond, ...)                                                        \
  do {                                                                          \
    if (!(cond)) t_fail(__FILE__, __LINE__, "check `" #cond "` failed: " __VA_ARGS__); \
  } while (0)

/* A check of a crossmpi-specific promise: fails under crossmpi, only reported in
 * peer mode. */
#define CHECK_CROSSMPI(cond, ...)                                                    \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      if (t_peer()) {                                                                \
        fprintf(stderr, "peer: %s rank %d: crossmpi-specific check `%s` fails here "   \
                "(expected with a peer MPI)\n", t_name, t_rank, #cond);              \
      } else {                                                                       \
        t_fail(__FILE__, __LINE__, "check `" #cond "` failed: " __VA_ARGS__);        \
      }                                                                              \
    }                                                                                \
  } while (0)

/* Every MPI call of a test must succeed: MPI_OK(MPI_Send(...)). */
#define MPI_OK(call)                                                              \
  do {                                                                            \
    int t_rc_ = (call);                                                           \
    if (t_rc_ != MPI_SUCCESS) {                                                   \
      char t_msg_[MPI_MAX_ERROR_STRING];                                          \
      int t_len_ = 0;                                                             \
      t_msg_[0] = '\0';                                                           \
      MPI_Error_string(t_rc_, t_msg_, &t_len_);                                   \
      t_fail(__FILE__, __LINE__, "%s returned %d (%s)", #call, t_rc_, t_msg_);    \
    }                                                                             \
  } while (0)

static inline void t_barrier(void) {
  int token = 0;
  if (t_rank == 0) {
    for (int r = 1; r < t_size; r++)
      MPI_OK(MPI_Recv(&token, 1, MPI_INT, r, 0, t_ctl, MPI_STATUS_IGNORE));
    for (int r = 1; r < t_size; r++) MPI_OK(MPI_Send(&token, 1, MPI_INT, r, 0, t_ctl));
  } else {
    MPI_OK(MPI_Send(&token, 1, MPI_INT, 0, 0, t_ctl));
    MPI_OK(MPI_Recv(&token, 1, MPI_INT, 0, 0, t_ctl, MPI_STATUS_IGNORE));
  }
}

static inline void t_setup(const char *name) {
  t_name = name;
  MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &t_rank));
  MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &t_size));
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &t_ctl));
}

static inline void t_init(int *argc, char ***argv, const char *name) {
  t_name = name;
  if (MPI_Init(argc, argv) != MPI_SUCCESS) {
    fprintf(stderr, "FAIL %s: MPI_Init failed\n", name);
    exit(1);
  }
  t_setup(name);
}

/* All ranks reach this point without a failed check: rank 0 reports success. */
static inline void t_finish(void) {
  t_barrier();
  MPI_OK(MPI_Comm_free(&t_ctl));
  if (t_rank == 0) {
    printf("OK %s\n", t_name);
    fflush(stdout);
  }
  MPI_OK(MPI_Finalize());
}

/* Deterministic contents: byte i of a message tagged with `seed`. */
static inline unsigned char t_byte(size_t i, unsigned seed) {
  return (unsigned char)((i * 131u + seed * 7919u + (i >> 8)) & 0xff);
}

static inline void t_fill(void *buf, size_t n, unsigned seed) {
  unsigned char *p = buf;
  for (size_t i = 0; i < n; i++) p[i] = t_byte(i, seed);
}

/* Returns the index of the first wrong byte, or -1 when all n bytes match. */
static inline long t_verify(const void *buf, size_t n, unsigned seed) {
  const unsigned char *p = buf;
  for (size_t i = 0; i < n; i++)
    if (p[i] != t_byte(i, seed)) return (long)i;
  return -1;
}

#define CHECK_PATTERN(buf, n, seed, ...)                                           \
  do {                                                                             \
    long t_bad_ = t_verify((buf), (n), (seed));                                    \
    if (t_bad_ >= 0)                                                               \
      t_fail(__FILE__, __LINE__, "data mismatch at byte %ld of %zu (seed %u): %s",  \
             t_bad_, (size_t)(n), (unsigned)(seed), __VA_ARGS__);                  \
  } while (0)

static inline void *t_alloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (p == NULL) t_fail(__FILE__, __LINE__, "malloc(%zu) failed", n);
  return p;
}

static inline void t_sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static inline int t_count(const MPI_Status *st, MPI_Datatype type) {
  int n = -12345;
  MPI_OK(MPI_Get_count(st, type, &n));
  return n;
}

/* The status of a receive of n bytes from src with tag. */
#define CHECK_STATUS(st, src, tag, nbytes)                                                 \
  do {                                                                                     \
    CHECK((st).MPI_SOURCE == (src), "status source expected %d, got %d", (int)(src), (st).MPI_SOURCE); \
    CHECK((st).MPI_TAG == (tag), "status tag expected %d, got %d", (int)(tag), (st).MPI_TAG); \
    int t_n_ = t_count(&(st), MPI_BYTE);                                                   \
    CHECK(t_n_ == (int)(nbytes), "count expected %d, got %d", (int)(nbytes), t_n_);        \
  } while (0)

#endif
