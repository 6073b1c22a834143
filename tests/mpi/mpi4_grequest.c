// ranks: 1 2
/* Generalized requests: MPI_Grequest_start and MPI_Grequest_complete. A request stays
 * incomplete (Test says no, Waitany skips nothing) until the user completes it; Wait and
 * Test then call query_fn, whose status (source, tag, elements, cancelled) they return,
 * and free_fn exactly once (Request_get_status calls query_fn too); MPI_Cancel calls cancel_fn with the completion flag;
 * Request_get_status does not free it; Waitall mixes it with a receive. A query_fn that
 * returns an error code makes the Wait that completes the request return that code
 * (Waitall: MPI_ERR_IN_STATUS with the code in that request's status), as Open MPI does. */
#include "common.h"

typedef struct {
  int queried, freed, cancelled_with;
  int tag;
} state_t;

static int query_fn(void *extra, MPI_Status *st) {
  state_t *s = extra;
  s->queried++;
  MPI_Status_set_source(st, 3);
  MPI_Status_set_tag(st, s->tag);
  MPI_Status_set_error(st, MPI_SUCCESS);
  MPI_Status_set_elements(st, MPI_INT, 5);
  MPI_Status_set_cancelled(st, s->cancelled_with >= 0);
  return MPI_SUCCESS;
}

/* The code failing_query returns (a user error code, so that only its return can carry
 * it). */
static int query_error;

static int failing_query(void *extra, MPI_Status *st) {
  query_fn(extra, st);
  return query_error;
}

static int free_fn(void *extra) {
  ((state_t *)extra)->freed++;
  return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete) {
  ((state_t *)extra)->cancelled_with = complete;
  return MPI_SUCCESS;
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "mpi4_grequest");
  state_t s = {0, 0, -1, 77};
  MPI_Request req;
  MPI_Status st;
  int flag = 1, count = -1;

  MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &req));
  MPI_OK(MPI_Test(&req, &flag, &st));
  CHECK(!flag && req != MPI_REQUEST_NULL, "incomplete generalized request tested complete");
  MPI_OK(MPI_Request_get_status(req, &flag, &st));
  CHECK(!flag, "Request_get_status says complete");
  MPI_OK(MPI_Grequest_complete(req));
  MPI_OK(MPI_Request_get_status(req, &flag, &st));
  CHECK(flag && req != MPI_REQUEST_NULL && s.freed == 0, "Request_get_status after complete: flag %d freed %d", flag,
        s.freed);
  MPI_OK(MPI_Wait(&req, &st));
  CHECK(req == MPI_REQUEST_NULL, "Wait did not free the request");
  /* query_fn ran for Request_get_status and again for the Wait that completed it */
  CHECK(s.queried == 2 && s.freed == 1, "query_fn ran %d times, free_fn %d times", s.queried, s.freed);
  MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
  CHECK(st.MPI_SOURCE == 3 && st.MPI_TAG == 77 && count == 5, "status source %d tag %d count %d", st.MPI_SOURCE,
        st.MPI_TAG, count);
  MPI_OK(MPI_Test_cancelled(&st, &flag));
  CHECK(!flag, "not cancelled, yet the status says cancelled");

  /* cancel before completion: cancel_fn sees complete=0, the status says cancelled */
  state_t c = {0, 0, -1, 78};
  MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &req));
  MPI_OK(MPI_Cancel(&req));
  CHECK(c.cancelled_with == 0, "cancel_fn got complete=%d", c.cancelled_with);
  MPI_OK(MPI_Grequest_complete(req));
  flag = 0;
  while (!flag) MPI_OK(MPI_Test(&req, &flag, &st));
  MPI_OK(MPI_Test_cancelled(&st, &flag));
  CHECK(flag && c.freed == 1 && st.MPI_TAG == 78, "cancelled %d freed %d tag %d", flag, c.freed, st.MPI_TAG);

  /* Waitall over a generalized request and a self receive */
  state_t w = {0, 0, -1, 79};
  MPI_Request two[2];
  int in = -1, out = 1234;
  MPI_OK(MPI_Grequest_start(query_fn, free_fn, NULL, &w, &two[0]));
  MPI_OK(MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_SELF, &two[1]));
  MPI_OK(MPI_Send(&out, 1, MPI_INT, 0, 5, MPI_COMM_SELF));
  MPI_OK(MPI_Grequest_complete(two[0]));
  MPI_Status sts[2];
  MPI_OK(MPI_Waitall(2, two, sts));
  CHECK(in == 1234 && sts[0].MPI_TAG == 79 && sts[1].MPI_TAG == 5 && w.freed == 1, "Waitall: in %d tags %d %d freed %d",
        in, sts[0].MPI_TAG, sts[1].MPI_TAG, w.freed);

  /* freed before completion: free_fn runs when the user completes it */
  state_t f = {0, 0, -1, 80};
  MPI_OK(MPI_Grequest_start(query_fn, free_fn, NULL, &f, &req));
  MPI_Request keep = req;
  MPI_OK(MPI_Request_free(&req));
  CHECK(req == MPI_REQUEST_NULL && f.freed == 0, "Request_free: freed %d", f.freed);
  MPI_OK(MPI_Grequest_complete(keep));
  CHECK(f.freed == 1, "free_fn after complete of a freed request: %d", f.freed);

  /* completing twice, or something else, is an error */
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  int cls = -1;
  MPI_Error_class(MPI_Grequest_complete(keep), &cls);
  CHECK(cls == MPI_ERR_REQUEST, "completing a freed generalized request: class %d", cls);

  /* a failing query_fn: its code is the completion's error */
  int query_class;
  MPI_OK(MPI_Add_error_class(&query_class));
  MPI_OK(MPI_Add_error_code(query_class, &query_error));
  state_t e = {0, 0, -1, 81};
  MPI_OK(MPI_Grequest_start(failing_query, free_fn, NULL, &e, &req));
  MPI_OK(MPI_Grequest_complete(req));
  int rc = MPI_Wait(&req, &st);
  CHECK(rc == query_error && req == MPI_REQUEST_NULL && e.freed == 1, "Wait after a failing query_fn: rc %d (want %d) freed %d",
        rc, query_error, e.freed);
  state_t e2 = {0, 0, -1, 82};
  MPI_OK(MPI_Grequest_start(failing_query, free_fn, NULL, &e2, &two[0]));
  MPI_OK(MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 6, MPI_COMM_SELF, &two[1]));
  MPI_OK(MPI_Send(&out, 1, MPI_INT, 0, 6, MPI_COMM_SELF));
  MPI_OK(MPI_Grequest_complete(two[0]));
  MPI_Error_class(MPI_Waitall(2, two, sts), &cls);
  CHECK(cls == MPI_ERR_IN_STATUS && sts[0].MPI_ERROR == query_error && sts[1].MPI_ERROR == MPI_SUCCESS,
        "Waitall with a failing query_fn: class %d, errors %d %d (want %d)", cls, sts[0].MPI_ERROR,
        sts[1].MPI_ERROR, query_error);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  t_finish();
  return 0;
}
