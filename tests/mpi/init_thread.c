// ranks: 2 4
// args: SINGLE FUNNELED SERIALIZED MULTIPLE
/* MPI_Init_thread at the level named by the argument; MPI_Query_thread and
 * MPI_Is_thread_main agree with it. Then 4 threads per rank exchange messages with the
 * partner rank (0-1, 2-3) on distinct tags, in the way the level allows: MULTIPLE
 * calls MPI from every thread at once (nonblocking, then blocking calls),
 * SERIALIZED from every thread under a lock,
 * FUNNELED and SINGLE only from the main thread. Every message's contents are checked. */
#include "common.h"
#include <pthread.h>

#define NTHREADS 4
#define ITERS 200

static int level, partner;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char sbufs[NTHREADS][2][65536]; /* per thread, per iteration parity */

static int msg_size(int it) { return it % 10 == 9 ? 65536 : 8 + it; }
static unsigned seed_of(int rank, int t, int it) { return (unsigned)(rank * 100000 + t * 1000 + it); }

/* In SERIALIZED mode every MPI call of a worker holds the lock. */
static void enter(void) { if (level == MPI_THREAD_SERIALIZED) pthread_mutex_lock(&lock); }
static void leave(void) { if (level == MPI_THREAD_SERIALIZED) pthread_mutex_unlock(&lock); }

/* One iteration of thread t's exchange, without blocking while holding the lock. */
static void exchange(int t, int it, char *rbuf) {
  int n = msg_size(it);
  char *sbuf = sbufs[t][it % 2];
  MPI_Request req[2];
  MPI_Status st[2];
  int done = 0;
  t_fill(sbuf, (size_t)n, seed_of(t_rank, t, it));
  enter();
  MPI_OK(MPI_Irecv(rbuf, 65536, MPI_BYTE, partner, t, MPI_COMM_WORLD, &req[0]));
  MPI_OK(MPI_Isend(sbuf, n, MPI_BYTE, partner, t, MPI_COMM_WORLD, &req[1]));
  leave();
  while (!done) {
    enter();
    MPI_OK(MPI_Testall(2, req, &done, st));
    leave();
  }
  CHECK_STATUS(st[0], partner, t, n);
  CHECK_PATTERN(rbuf, (size_t)n, seed_of(partner, t, it), "thread exchange");
}

/* MPI_THREAD_MULTIPLE: a thread blocked in MPI must not stop the other threads'
 * calls (which the partner's blocked thread waits for). */
static void blocking_exchange(int t, int it, char *rbuf) {
  int n = msg_size(it);
  char *sbuf = sbufs[t][0];
  MPI_Status st;
  t_fill(sbuf, (size_t)n, seed_of(t_rank, t, it) + 7u);
  MPI_OK(MPI_Sendrecv(sbuf, n, MPI_BYTE, partner, 100 + t, rbuf, 65536, MPI_BYTE, partner, 100 + t, MPI_COMM_WORLD,
                      &st));
  CHECK_STATUS(st, partner, 100 + t, n);
  CHECK_PATTERN(rbuf, (size_t)n, seed_of(partner, t, it) + 7u, "blocking thread exchange");
}

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg, is_main = 1;
  char *rbuf = t_alloc(65536);
  if (level >= MPI_THREAD_SERIALIZED) {
    enter();
    MPI_OK(MPI_Is_thread_main(&is_main));
    leave();
    CHECK(!is_main, "MPI_Is_thread_main true in thread %d", t);
    for (int it = 0; it < ITERS; it++) exchange(t, it, rbuf);
  }
  if (level == MPI_THREAD_MULTIPLE) /* blocking calls in every thread at once */
    for (int it = 0; it < ITERS; it++) blocking_exchange(t, it, rbuf);
  free(rbuf);
  return NULL;
}

static int parse_level(const char *s) {
  if (strcmp(s, "SINGLE") == 0) return MPI_THREAD_SINGLE;
  if (strcmp(s, "FUNNELED") == 0) return MPI_THREAD_FUNNELED;
  if (strcmp(s, "SERIALIZED") == 0) return MPI_THREAD_SERIALIZED;
  if (strcmp(s, "MULTIPLE") == 0) return MPI_THREAD_MULTIPLE;
  fprintf(stderr, "init_thread: unknown level '%s'\n", s);
  exit(2);
}

int main(int argc, char **argv) {
  int required = parse_level(argc > 1 ? argv[1] : "MULTIPLE"), provided = -1, q = -1, is_main = 0;
  t_name = "init_thread";
  CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
            MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
        "thread level constants are not ordered");
  if (MPI_Init_thread(&argc, &argv, required, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "FAIL init_thread: MPI_Init_thread failed\n");
    return 1;
  }
  t_setup("init_thread");
  CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED || provided == MPI_THREAD_SERIALIZED ||
            provided == MPI_THREAD_MULTIPLE,
        "provided level %d is not a thread level", provided);
  CHECK_CROSSMPI(provided >= required, "required %s, provided %d", argv[1], provided);
  MPI_OK(MPI_Query_thread(&q));
  CHECK(q == provided, "MPI_Query_thread %d, MPI_Init_thread provided %d", q, provided);
  MPI_OK(MPI_Is_thread_main(&is_main));
  CHECK(is_main, "MPI_Is_thread_main false in the thread that called MPI_Init_thread");
  CHECK(t_size % 2 == 0, "needs an even number of ranks, got %d", t_size);
  partner = t_rank ^ 1;
  level = provided < required ? provided : required;

  pthread_t th[NTHREADS];
  for (int t = 0; t < NTHREADS; t++)
    CHECK(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0, "pthread_create failed");
  for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);
  if (level <= MPI_THREAD_FUNNELED) { /* the main thread does every thread's share */
    char *rbuf = t_alloc(65536);
    for (int it = 0; it < ITERS; it++)
      for (int t = 0; t < NTHREADS; t++) exchange(t, it, rbuf);
    free(rbuf);
  }
  t_finish();
  return 0;
}
