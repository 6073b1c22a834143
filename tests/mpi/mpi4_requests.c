// ranks: 1 2 4
/* MPI 4.x request calls: MPI_Isendrecv and MPI_Isendrecv_replace (ring shifts, small and
 * rendezvous-sized, completed by Wait, Test and Waitall; PROC_NULL ends), the status
 * accessors MPI_Status_get/set_source/tag/error, and MPI_Request_get_status_all/any/some,
 * which report completion without freeing the requests. An Isendrecv_replace freed
 * while it runs still delivers its data. */
#include "common.h"

#define BIG (1 << 20)

static void isendrecv(void) {
  int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
  static const int sizes[] = {1, 1000, BIG};
  char *s = t_alloc(BIG), *r = t_alloc(BIG);
  for (int i = 0; i < 3; i++) {
    int n = sizes[i];
    t_fill(s, (size_t)n, (unsigned)(t_rank * 10 + i));
    memset(r, 0, (size_t)n);
    MPI_Request req;
    MPI_Status st;
    MPI_OK(MPI_Isendrecv(s, n, MPI_BYTE, right, i, r, n, MPI_BYTE, MPI_ANY_SOURCE, i, MPI_COMM_WORLD, &req));
    if (i == 1) {
      int flag = 0;
      while (!flag) MPI_OK(MPI_Test(&req, &flag, &st));
    } else {
      MPI_OK(MPI_Wait(&req, &st));
    }
    CHECK(req == MPI_REQUEST_NULL, "request not reset");
    CHECK_STATUS(st, left, i, n);
    CHECK_PATTERN(r, (size_t)n, (unsigned)(left * 10 + i), "Isendrecv size %d", n);

    /* replace: the buffer is sent, then overwritten by what arrives */
    t_fill(s, (size_t)n, (unsigned)(t_rank * 10 + 5 + i));
    MPI_Request two[2];
    int x = t_rank, y = -1;
    MPI_OK(MPI_Isendrecv_replace(s, n, MPI_BYTE, right, 20 + i, left, 20 + i, MPI_COMM_WORLD, &two[0]));
    MPI_OK(MPI_Isendrecv_c(&x, 1, MPI_INT, left, 30 + i, &y, 1, MPI_INT, right, 30 + i, MPI_COMM_WORLD, &two[1]));
    MPI_Status sts[2];
    MPI_OK(MPI_Waitall(2, two, sts));
    CHECK_STATUS(sts[0], left, 20 + i, n);
    CHECK_PATTERN(s, (size_t)n, (unsigned)(left * 10 + 5 + i), "Isendrecv_replace size %d", n);
    CHECK(y == right, "Isendrecv_c got %d from the right neighbour %d", y, right);
  }
  /* replace_c, and PROC_NULL on both sides completes at once with a PROC_NULL status */
  int v = t_rank;
  MPI_Request req;
  MPI_Status st;
  MPI_OK(MPI_Isendrecv_replace_c(&v, 1, MPI_INT, right, 40, left, 40, MPI_COMM_WORLD, &req));
  MPI_OK(MPI_Wait(&req, &st));
  CHECK(v == left, "Isendrecv_replace_c got %d", v);
  MPI_OK(MPI_Isendrecv(s, 1, MPI_BYTE, MPI_PROC_NULL, 0, r, 1, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req));
  MPI_OK(MPI_Wait(&req, &st));
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL source: %d", st.MPI_SOURCE);
  free(s);
  free(r);
  t_barrier();
}

static void status_accessors(void) {
  MPI_Status st;
  MPI_OK(MPI_Status_set_source(&st, 17));
  MPI_OK(MPI_Status_set_tag(&st, 4242));
  MPI_OK(MPI_Status_set_error(&st, MPI_ERR_TAG));
  int v = -1;
  MPI_OK(MPI_Status_get_source(&st, &v));
  CHECK(v == 17 && st.MPI_SOURCE == 17, "source %d", v);
  MPI_OK(MPI_Status_get_tag(&st, &v));
  CHECK(v == 4242 && st.MPI_TAG == 4242, "tag %d", v);
  MPI_OK(MPI_Status_get_error(&st, &v));
  CHECK(v == MPI_ERR_TAG && st.MPI_ERROR == MPI_ERR_TAG, "error %d", v);
  MPI_OK(MPI_Status_set_cancelled(&st, 1));
  MPI_OK(MPI_Test_cancelled(&st, &v));
  CHECK(v == 1, "cancelled flag %d", v);
  MPI_OK(MPI_Status_set_cancelled(&st, 0));
  MPI_OK(MPI_Test_cancelled(&st, &v));
  CHECK(v == 0, "cancelled flag %d after clearing", v);
  /* a NULL status is an error of class MPI_ERR_ARG */
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int rc = MPI_Status_get_tag(NULL, &v), cls = -1;
  MPI_OK(MPI_Error_class(rc, &cls));
  CHECK(cls == MPI_ERR_ARG, "Status_get_tag(NULL): class %d", cls);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void get_status(void) {
  int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
  int in[2] = {-1, -1}, out = t_rank;
  MPI_Request reqs[3];
  reqs[2] = MPI_REQUEST_NULL;
  MPI_OK(MPI_Irecv(&in[0], 1, MPI_INT, left, 90, MPI_COMM_WORLD, &reqs[0]));
  MPI_OK(MPI_Irecv(&in[1], 1, MPI_INT, left, 91, MPI_COMM_WORLD, &reqs[1]));
  int flag = 1, index = -2, outcount = -2, idx[3];
  MPI_Status st, sts[3];
  /* nothing sent yet: nothing is complete */
  t_barrier();
  MPI_OK(MPI_Request_get_status_all(3, reqs, &flag, sts));
  CHECK(!flag, "get_status_all reports completion before any send");
  MPI_OK(MPI_Request_get_status_any(3, reqs, &index, &flag, &st));
  CHECK(!flag && index == MPI_UNDEFINED, "get_status_any: flag %d index %d", flag, index);
  MPI_OK(MPI_Request_get_status_some(3, reqs, &outcount, idx, sts));
  CHECK(outcount == 0, "get_status_some: outcount %d", outcount);
  t_barrier();

  MPI_OK(MPI_Send(&out, 1, MPI_INT, right, 91, MPI_COMM_WORLD));
  do MPI_OK(MPI_Request_get_status_any(3, reqs, &index, &flag, &st)); while (!flag);
  CHECK(index == 1 && st.MPI_SOURCE == left && st.MPI_TAG == 91, "get_status_any: index %d source %d tag %d", index,
        st.MPI_SOURCE, st.MPI_TAG);
  CHECK(reqs[1] != MPI_REQUEST_NULL, "get_status_any freed the request");
  MPI_OK(MPI_Request_get_status_some(3, reqs, &outcount, idx, sts));
  CHECK(outcount == 1 && idx[0] == 1, "get_status_some: outcount %d idx %d", outcount, idx[0]);
  MPI_OK(MPI_Request_get_status_all(3, reqs, &flag, sts));
  CHECK(!flag, "get_status_all with one receive open");
  t_barrier(); /* nobody sends tag 90 before every rank checked the above */

  MPI_OK(MPI_Send(&out, 1, MPI_INT, right, 90, MPI_COMM_WORLD));
  do MPI_OK(MPI_Request_get_status_all(3, reqs, &flag, sts)); while (!flag);
  CHECK(sts[0].MPI_TAG == 90 && sts[1].MPI_TAG == 91 && sts[0].MPI_SOURCE == left, "statuses: tags %d %d", sts[0].MPI_TAG,
        sts[1].MPI_TAG);
  CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL, "get_status_all freed requests");
  MPI_OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
  CHECK(in[0] == left && in[1] == left, "received %d %d", in[0], in[1]);

  /* only NULL requests: any says flag with MPI_UNDEFINED, some says MPI_UNDEFINED */
  MPI_OK(MPI_Request_get_status_any(3, reqs, &index, &flag, &st));
  CHECK(flag && index == MPI_UNDEFINED, "all NULL: flag %d index %d", flag, index);
  MPI_OK(MPI_Request_get_status_some(3, reqs, &outcount, idx, sts));
  CHECK(outcount == MPI_UNDEFINED, "all NULL: outcount %d", outcount);
  MPI_OK(MPI_Request_get_status_all(3, reqs, &flag, sts));
  CHECK(flag, "all NULL: get_status_all flag %d", flag);
  t_barrier();
}

/* MPI_Request_free on a running Isendrecv_replace: the send goes on from the library's
 * copy although the user overwrites the buffer at once. */
static void freed_while_running(void) {
  int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
  char *s = t_alloc(BIG), *r = t_alloc(BIG);
  t_fill(s, BIG, (unsigned)(t_rank + 900));
  MPI_Request req;
  MPI_OK(MPI_Isendrecv_replace(s, BIG, MPI_BYTE, right, 95, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req));
  MPI_OK(MPI_Request_free(&req));
  CHECK(req == MPI_REQUEST_NULL, "Request_free did not reset the handle");
  memset(s, 0, BIG);
  MPI_OK(MPI_Recv(r, BIG, MPI_BYTE, left, 95, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK_PATTERN(r, BIG, (unsigned)(left + 900), "data of a freed Isendrecv_replace");
  t_barrier();
  free(s);
  free(r);
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "mpi4_requests");
  isendrecv();
  freed_while_running();
  status_accessors();
  get_status();
  t_finish();
  return 0;
}
