// ranks: 1 2 4
/* Argument checking with MPI_ERRORS_RETURN: every invalid argument returns the right
 * error class, and the error string names the function, the argument and the value
 * (crossmpi's form: "MPI_Send: invalid rank: argument dest = 7 ..."; only the classes
 * are checked against a peer MPI). Error handlers are per communicator and inherited by
 * duplicates; errors without a communicator (MPI_COMM_NULL) are raised on
 * MPI_COMM_SELF's handler, as MPI 4.0 specifies for the World Model (Open MPI 4.1 still
 * uses MPI_COMM_WORLD's, so in peer mode both return). The process keeps working. */
#include "errcheck.h"
#include <limits.h>

static void p2p_arguments(void) {
  int buf[4] = {0}, tag_ub = 0, flag = 0, *ub = NULL;
  char val[32];
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Status st;
  EXPECT(MPI_Send(buf, 1, MPI_INT, BAD_RANK, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "MPI_Send", "dest", "7");
  /* -9 is none of MPI_PROC_NULL, MPI_ANY_SOURCE, MPI_ROOT in any implementation */
  CHECK(MPI_PROC_NULL != -9 && MPI_ANY_SOURCE != -9 && MPI_ROOT != -9, "-9 is a special rank here");
  EXPECT(MPI_Send(buf, 1, MPI_INT, -9, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "MPI_Send", "dest", "-9");
  EXPECT(MPI_Send(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "MPI_Send", "dest", NULL);
  EXPECT(MPI_Send(buf, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), MPI_ERR_TAG, "MPI_Send", "tag", "-5");
  EXPECT(MPI_Send(buf, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG, "MPI_Send", "tag", NULL);
  MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
  CHECK(flag && ub != NULL && *ub >= 32767, "MPI_TAG_UB attribute: flag %d value %d", flag, ub ? *ub : -1);
  tag_ub = *ub;
  if (tag_ub < INT_MAX) {
    snprintf(val, sizeof val, "%d", tag_ub + 1);
    EXPECT(MPI_Send(buf, 1, MPI_INT, 0, tag_ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG, "MPI_Send", "tag", val);
  }
  EXPECT(MPI_Send(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Send", "count", "-1");
  EXPECT(MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Send", "datatype",
         "MPI_DATATYPE_NULL|0x0");
  EXPECT(MPI_Send(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "MPI_Send", "buf", "NULL|0x0|(nil)");
  EXPECT(MPI_Ssend(buf, 1, MPI_INT, BAD_RANK, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "MPI_Ssend", "dest", "7");
  EXPECT(MPI_Isend(buf, -3, MPI_INT, 0, 0, MPI_COMM_WORLD, &req), MPI_ERR_COUNT, "MPI_Isend", "count", "-3");
  EXPECT(MPI_Irecv(buf, 1, MPI_INT, BAD_RANK, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK, "MPI_Irecv", "source", "7");
  EXPECT(MPI_Recv(buf, 1, MPI_INT, BAD_RANK, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK, "MPI_Recv", "source", "7");
  EXPECT(MPI_Recv(buf, 1, MPI_INT, 0, -3, MPI_COMM_WORLD, &st), MPI_ERR_TAG, "MPI_Recv", "tag", "-3");
  EXPECT(MPI_Recv(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT, "MPI_Recv", "count", "-1");
  EXPECT(MPI_Recv(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, &st), MPI_ERR_TYPE, "MPI_Recv", "datatype",
         "MPI_DATATYPE_NULL|0x0");
  EXPECT(MPI_Sendrecv(buf, 1, MPI_INT, BAD_RANK, 0, buf + 1, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK,
         "MPI_Sendrecv", "dest", "7");
  /* an invalid receive half sends nothing, also on the light path (a small send to a
   * local peer goes straight into its ring): the right neighbour finds no message */
  int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
  EXPECT(MPI_Sendrecv(buf, 1, MPI_INT, right, 11, buf + 1, 1, MPI_INT, BAD_RANK, 0, MPI_COMM_WORLD, &st),
         MPI_ERR_RANK, "MPI_Sendrecv", "source", "7");
  EXPECT(MPI_Sendrecv(buf, 1, MPI_INT, right, 11, buf + 1, 1, MPI_INT, left, -3, MPI_COMM_WORLD, &st), MPI_ERR_TAG,
         "MPI_Sendrecv", "tag", "-3");
  EXPECT(MPI_Sendrecv(buf, 1, MPI_INT, right, 11, buf + 1, -1, MPI_INT, left, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT,
         "MPI_Sendrecv", "count", "-1");
  /* with MPI_PROC_NULL on a side and a built type (not the light path), the null side's
   * arguments are checked too, and an invalid receive half sends nothing */
  MPI_Datatype pair;
  MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &pair));
  MPI_OK(MPI_Type_commit(&pair));
  EXPECT(MPI_Sendrecv(buf, 1, pair, MPI_PROC_NULL, -5, buf + 1, 1, pair, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st),
         MPI_ERR_TAG, "MPI_Sendrecv", "tag", "-5");
  EXPECT(MPI_Sendrecv(buf, 1, pair, MPI_PROC_NULL, 0, buf, 1, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st),
         MPI_ERR_TYPE, "MPI_Sendrecv", "datatype", "MPI_DATATYPE_NULL|0x0");
  EXPECT(MPI_Sendrecv(buf, 1, pair, right, 12, buf + 1, 1, pair, MPI_PROC_NULL, -3, MPI_COMM_WORLD, &st),
         MPI_ERR_TAG, "MPI_Sendrecv", "tag", "-3");
  EXPECT(MPI_Sendrecv(buf, 1, pair, right, 12, buf + 1, -2, pair, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st),
         MPI_ERR_COUNT, "MPI_Sendrecv", "count", "-2");
  MPI_OK(MPI_Type_free(&pair));
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (!t_peer()) {
    MPI_OK(MPI_Iprobe(left, 11, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "MPI_Sendrecv with an invalid receive half sent its message");
    MPI_OK(MPI_Iprobe(left, 12, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "MPI_Sendrecv with an invalid receive half from MPI_PROC_NULL sent its message");
  }
  EXPECT(MPI_Probe(BAD_RANK, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK, "MPI_Probe", "source", "7");
  EXPECT(MPI_Get_count(&st, MPI_DATATYPE_NULL, &flag), MPI_ERR_TYPE, "MPI_Get_count", "datatype",
         "MPI_DATATYPE_NULL|0x0");
  CHECK(req == MPI_REQUEST_NULL, "a failed nonblocking call left a request handle");
}

/* An invalid request handle cannot be made portably: Open MPI dereferences it. */
static void request_arguments(void) {
  if (t_peer()) return;
  int v = 1;
  MPI_Request req, stale;
  MPI_OK(MPI_Isend(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req));
  stale = req;
  MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  EXPECT(MPI_Wait(&stale, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "MPI_Wait", "request", NULL);
  EXPECT(MPI_Request_free(&stale), MPI_ERR_REQUEST, "MPI_Request_free", "request", NULL);
  MPI_Request wrong_kind = (MPI_Request)MPI_COMM_WORLD;
  int flag = 0;
  EXPECT(MPI_Test(&wrong_kind, &flag, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "MPI_Test", "request", NULL);
}

static void null_communicator(void) {
  int v = 0, size = -1;
  MPI_Comm c;
  /* raised on MPI_COMM_SELF: make MPI_COMM_WORLD's handler fatal meanwhile, so a wrong
   * choice of handler ends the test (not in peer mode, see above) */
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  if (!t_peer()) MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  EXPECT(MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_Send", "comm", "MPI_COMM_NULL|0x0");
  EXPECT(MPI_Comm_size(MPI_COMM_NULL, &size), MPI_ERR_COMM, "MPI_Comm_size", "comm", "MPI_COMM_NULL|0x0");
  EXPECT(MPI_Comm_rank(MPI_COMM_NULL, &size), MPI_ERR_COMM, "MPI_Comm_rank", "comm", "MPI_COMM_NULL|0x0");
  EXPECT(MPI_Comm_dup(MPI_COMM_NULL, &c), MPI_ERR_COMM, "MPI_Comm_dup", "comm", "MPI_COMM_NULL|0x0");
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
}

static void handlers(void) {
  MPI_Errhandler eh;
  MPI_Comm d, d2;
  int v = 0;
  MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
  CHECK(eh == MPI_ERRORS_RETURN, "MPI_Comm_get_errhandler after setting MPI_ERRORS_RETURN gave another handler");
  MPI_OK(MPI_Errhandler_free(&eh));
  CHECK(eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not set MPI_ERRHANDLER_NULL");
  /* a duplicate inherits MPI_ERRORS_RETURN; handlers are per communicator */
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
  EXPECT(MPI_Send(&v, 1, MPI_INT, BAD_RANK, 0, d), MPI_ERR_RANK, "MPI_Send", "dest", "7");
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d2));
  MPI_OK(MPI_Comm_set_errhandler(d2, MPI_ERRORS_RETURN));
  EXPECT(MPI_Send(&v, 1, MPI_INT, 0, -1, d2), MPI_ERR_TAG, "MPI_Send", "tag", "-1");
  EXPECT(MPI_Send(&v, 1, MPI_INT, 0, -1, d), MPI_ERR_TAG, "MPI_Send", "tag", "-1");
  MPI_OK(MPI_Comm_free(&d));
  MPI_OK(MPI_Comm_free(&d2));
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
}

static void classes_and_strings(void) {
  static const int classes[] = {MPI_SUCCESS,   MPI_ERR_BUFFER,  MPI_ERR_COUNT, MPI_ERR_TYPE,    MPI_ERR_TAG,
                                MPI_ERR_COMM,  MPI_ERR_RANK,    MPI_ERR_REQUEST, MPI_ERR_ROOT, MPI_ERR_GROUP,
                                MPI_ERR_OP,    MPI_ERR_TOPOLOGY, MPI_ERR_DIMS, MPI_ERR_ARG,     MPI_ERR_UNKNOWN,
                                MPI_ERR_TRUNCATE, MPI_ERR_OTHER, MPI_ERR_INTERN, MPI_ERR_IN_STATUS, MPI_ERR_PENDING};
  int n = (int)(sizeof classes / sizeof classes[0]);
  for (int i = 0; i < n; i++) {
    int c = -1, len = -1;
    char msg[MPI_MAX_ERROR_STRING];
    MPI_OK(MPI_Error_class(classes[i], &c));
    CHECK(c == classes[i], "MPI_Error_class(%d) = %d", classes[i], c);
    MPI_OK(MPI_Error_string(classes[i], msg, &len));
    CHECK(len > 0 && len < MPI_MAX_ERROR_STRING, "MPI_Error_string(%d) length %d", classes[i], len);
    for (int j = 0; j < i; j++) CHECK(classes[j] != classes[i], "error classes %d and %d are equal", i, j);
  }
  CHECK(MPI_SUCCESS == 0, "MPI_SUCCESS is %d", MPI_SUCCESS);
  CHECK(MPI_ERR_LASTCODE >= MPI_ERR_PENDING, "MPI_ERR_LASTCODE %d below the classes", MPI_ERR_LASTCODE);
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "errors");
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  classes_and_strings();
  p2p_arguments();
  request_arguments();
  null_communicator();
  handlers();
  /* the process still communicates correctly after all of this */
  int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size, in = -1;
  MPI_OK(MPI_Sendrecv(&t_rank, 1, MPI_INT, right, 3, &in, 1, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK(in == left, "ring after the errors got %d, expected %d", in, left);
  t_finish();
  return 0;
}
