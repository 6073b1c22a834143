// ranks: 1 2
/* Generalized-request callbacks that call MPI, as Open MPI and MPICH allow: query_fn
 * asks MPI_Comm_rank and MPI_Type_size and communicates on its own duplicate of
 * MPI_COMM_SELF; free_fn frees the communicator the operation used; cancel_fn completes
 * the request. Each runs under MPI_Wait, MPI_Test, MPI_Waitall, MPI_Testany,
 * MPI_Request_get_status and MPI_Request_free. At MPI_THREAD_MULTIPLE (when provided),
 * a second thread completes a request while the main thread waits for it in MPI_Wait,
 * and a free_fn's error code comes back from the call that freed the request. */
#include "common.h"
#include <pthread.h>

typedef struct {
  MPI_Comm comm; /* the operation's communicator, freed by free_fn */
  MPI_Request self; /* for cancel_fn, which completes it */
  int queried, freed, free_code; /* free_code: what free_fn returns */
} op_t;

static int query_fn(void *extra, MPI_Status *st) {
  op_t *op = extra;
  int rank, dsize, echo = -1, value = 4321;
  MPI_OK(MPI_Comm_rank(op->comm, &rank));
  MPI_OK(MPI_Type_size(MPI_DOUBLE, &dsize));
  /* a round trip through MPI inside the callback */
  MPI_OK(MPI_Sendrecv(&value, 1, MPI_INT, 0, 9, &echo, 1, MPI_INT, 0, 9, op->comm, MPI_STATUS_IGNORE));
  CHECK(echo == value, "query_fn's self exchange gave %d", echo);
  op->queried++;
  MPI_OK(MPI_Status_set_elements(st, MPI_BYTE, dsize + rank));
  MPI_OK(MPI_Status_set_cancelled(st, 0));
  st->MPI_SOURCE = rank;
  st->MPI_TAG = 42;
  return MPI_SUCCESS;
}

static int free_fn(void *extra) {
  op_t *op = extra;
  op->freed++;
  MPI_OK(MPI_Comm_free(&op->comm));
  return op->free_code;
}

static int cancel_fn(void *extra, int complete) {
  op_t *op = extra;
  return complete ? MPI_SUCCESS : MPI_Grequest_complete(op->self);
}

static void start(op_t *op) {
  op->queried = op->freed = op->free_code = 0;
  MPI_OK(MPI_Comm_dup(MPI_COMM_SELF, &op->comm));
  MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, op, &op->self));
}

/* queries: how often query_fn should have run (once per MPI_Request_get_status after
 * completion, and once in the call that completed the request) */
static void check_done(op_t *op, MPI_Status *st, int queries, const char *how) {
  int count = -1;
  MPI_OK(MPI_Get_count(st, MPI_BYTE, &count));
  CHECK(count == 8 && st->MPI_SOURCE == 0 && st->MPI_TAG == 42, "%s: count %d source %d tag %d", how, count,
        st->MPI_SOURCE, st->MPI_TAG);
  CHECK(op->queried == queries && op->freed == 1 && op->comm == MPI_COMM_NULL, "%s: query_fn ran %d times, free_fn %d",
        how, op->queried, op->freed);
}

static void *complete_later(void *arg) {
  MPI_Request req = *(MPI_Request *)arg; /* a copy: MPI_Wait resets the main thread's */
  struct timespec pause = {0, 20 * 1000 * 1000};
  nanosleep(&pause, NULL); /* let the main thread get into MPI_Wait */
  MPI_OK(MPI_Grequest_complete(req));
  return NULL;
}

int main(int argc, char **argv) {
  int provided;
  t_name = "mpi4_grequest_callbacks";
  MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  t_setup(t_name);
  op_t op;
  MPI_Status st;
  int flag = 0, index = -1;

  /* MPI_Wait */
  start(&op);
  MPI_OK(MPI_Grequest_complete(op.self));
  MPI_OK(MPI_Wait(&op.self, &st));
  check_done(&op, &st, 1, "MPI_Wait");

  /* MPI_Test, after MPI_Request_get_status asked query_fn too */
  start(&op);
  MPI_OK(MPI_Request_get_status(op.self, &flag, &st));
  CHECK(!flag && op.queried == 0, "get_status before completion: flag %d queried %d", flag, op.queried);
  MPI_OK(MPI_Grequest_complete(op.self));
  MPI_OK(MPI_Request_get_status(op.self, &flag, &st));
  CHECK(flag && op.queried == 1 && op.freed == 0, "get_status after completion: flag %d queried %d freed %d", flag,
        op.queried, op.freed);
  MPI_OK(MPI_Test(&op.self, &flag, &st));
  CHECK(flag && op.self == MPI_REQUEST_NULL, "MPI_Test after completion: flag %d", flag);
  check_done(&op, &st, 2, "MPI_Test");

  /* MPI_Waitall over two, MPI_Testany */
  op_t two[2];
  MPI_Request reqs[2];
  MPI_Status sts[2];
  for (int i = 0; i < 2; i++) start(&two[i]);
  for (int i = 0; i < 2; i++) MPI_OK(MPI_Grequest_complete(two[i].self));
  reqs[0] = two[0].self;
  reqs[1] = two[1].self;
  MPI_OK(MPI_Waitall(2, reqs, sts));
  for (int i = 0; i < 2; i++) check_done(&two[i], &sts[i], 1, "MPI_Waitall");
  start(&op);
  MPI_OK(MPI_Grequest_complete(op.self));
  MPI_OK(MPI_Testany(1, &op.self, &index, &flag, &st));
  CHECK(flag && index == 0, "MPI_Testany: flag %d index %d", flag, index);
  check_done(&op, &st, 1, "MPI_Testany");

  /* cancel_fn completes the request; the status then comes from query_fn */
  start(&op);
  MPI_OK(MPI_Cancel(&op.self));
  MPI_OK(MPI_Wait(&op.self, &st));
  check_done(&op, &st, 1, "MPI_Cancel + MPI_Wait");

  /* MPI_Request_free of a completed request runs free_fn (and not query_fn) */
  start(&op);
  MPI_OK(MPI_Grequest_complete(op.self));
  MPI_OK(MPI_Request_free(&op.self));
  CHECK(op.freed == 1 && op.queried == 0 && op.comm == MPI_COMM_NULL, "MPI_Request_free: freed %d queried %d",
        op.freed, op.queried);

  /* a free_fn's error comes back from the call that freed the request */
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  int app_class, app_code;
  MPI_OK(MPI_Add_error_class(&app_class));
  MPI_OK(MPI_Add_error_code(app_class, &app_code));
  start(&op);
  op.free_code = app_code;
  MPI_OK(MPI_Grequest_complete(op.self));
  int rc = MPI_Wait(&op.self, &st);
  CHECK(op.freed == 1 && op.self == MPI_REQUEST_NULL, "failing free_fn: freed %d", op.freed);
  /* the standard's rule, which Open MPI 4.1 does not follow (its Wait returns success):
   * the call returns the free_fn's own code */
  CHECK_CROSSMPI(rc == app_code, "failing free_fn: Wait returned %d, not %d", rc, app_code);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));

  /* completed by another thread while this one waits */
  if (provided == MPI_THREAD_MULTIPLE) {
    start(&op);
    pthread_t t;
    MPI_Request later = op.self;
    CHECK(pthread_create(&t, NULL, complete_later, &later) == 0, "pthread_create failed");
    MPI_OK(MPI_Wait(&op.self, &st));
    pthread_join(t, NULL);
    check_done(&op, &st, 1, "completed by a thread during MPI_Wait");
  }
  t_finish();
  return 0;
}
