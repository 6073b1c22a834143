// ranks: 1 2 4
/* MPI_ANY_SOURCE and MPI_ANY_TAG receives (status names the real source and tag,
 * every sender is matched exactly once), MPI_PROC_NULL as destination and source
 * (completes at once; a receive from it has source MPI_PROC_NULL, tag MPI_ANY_TAG
 * and count 0), and MPI_STATUS_IGNORE. */
#include "common.h"

#define PER_SENDER 5

static void check_proc_null_status(const MPI_Status *st, const char *what) {
  CHECK(st->MPI_SOURCE == MPI_PROC_NULL, "%s: source %d, expected MPI_PROC_NULL", what, st->MPI_SOURCE);
  CHECK(st->MPI_TAG == MPI_ANY_TAG, "%s: tag %d, expected MPI_ANY_TAG", what, st->MPI_TAG);
  CHECK(t_count(st, MPI_INT) == 0, "%s: count %d, expected 0", what, t_count(st, MPI_INT));
}

static void proc_null(void) {
  int v[4] = {1, 2, 3, 4};
  MPI_Status st;
  MPI_Request req;
  MPI_OK(MPI_Send(v, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
  MPI_OK(MPI_Ssend(v, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
  MPI_OK(MPI_Recv(v, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
  check_proc_null_status(&st, "MPI_Recv from MPI_PROC_NULL");
  CHECK(v[0] == 1 && v[3] == 4, "MPI_Recv from MPI_PROC_NULL modified the buffer");
  MPI_OK(MPI_Irecv(v, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &req));
  MPI_OK(MPI_Wait(&req, &st));
  check_proc_null_status(&st, "MPI_Irecv from MPI_PROC_NULL");
  MPI_OK(MPI_Isend(v, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req));
  int flag = 0;
  MPI_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
  CHECK(flag && req == MPI_REQUEST_NULL, "MPI_Isend to MPI_PROC_NULL not complete at the first MPI_Test");
  /* a shift with MPI_PROC_NULL at both ends */
  int out = 5, in = -1;
  MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, MPI_PROC_NULL, 2, &in, 1, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &st));
  check_proc_null_status(&st, "MPI_Sendrecv from MPI_PROC_NULL");
  CHECK(in == -1, "MPI_Sendrecv from MPI_PROC_NULL wrote %d", in);
  /* the same with a built type, and a non-periodic shift of strided data, in which the
   * end ranks have MPI_PROC_NULL on one side (as a halo exchange at a domain's faces) */
  MPI_Datatype every_other;
  MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &every_other));
  MPI_OK(MPI_Type_commit(&every_other));
  int w[4] = {100 * t_rank, 1, 100 * t_rank + 2, 3}, r[4] = {-1, -1, -1, -1};
  MPI_OK(MPI_Sendrecv(w, 1, every_other, MPI_PROC_NULL, 3, r, 1, every_other, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st));
  check_proc_null_status(&st, "MPI_Sendrecv of a vector from MPI_PROC_NULL");
  CHECK(r[0] == -1 && r[2] == -1, "MPI_Sendrecv of a vector from MPI_PROC_NULL wrote %d %d", r[0], r[2]);
  int right = t_rank + 1 < t_size ? t_rank + 1 : MPI_PROC_NULL, left = t_rank > 0 ? t_rank - 1 : MPI_PROC_NULL;
  MPI_OK(MPI_Sendrecv(w, 1, every_other, right, 4, r, 1, every_other, left, 4, MPI_COMM_WORLD, &st));
  if (left == MPI_PROC_NULL) {
    check_proc_null_status(&st, "shift of a vector, first rank");
    CHECK(r[0] == -1 && r[2] == -1, "shift of a vector: the first rank received %d %d", r[0], r[2]);
  } else {
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 4 && t_count(&st, MPI_INT) == 2,
          "shift of a vector: status source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, t_count(&st, MPI_INT));
    CHECK(r[0] == 100 * left && r[2] == 100 * left + 2 && r[1] == -1 && r[3] == -1,
          "shift of a vector: received %d %d %d %d from rank %d", r[0], r[1], r[2], r[3], left);
  }
  MPI_OK(MPI_Type_free(&every_other));
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "p2p_wildcards");
  proc_null();

  /* every rank sends PER_SENDER messages with distinct tags to rank 0, including
   * rank 0 itself (nonblocking) */
  MPI_Request sreq[PER_SENDER];
  int payload[PER_SENDER][2];
  for (int i = 0; i < PER_SENDER; i++) {
    payload[i][0] = t_rank;
    payload[i][1] = i;
    MPI_OK(MPI_Isend(payload[i], 2, MPI_INT, 0, 1000 + t_rank * 10 + i, MPI_COMM_WORLD, &sreq[i]));
  }
  if (t_rank == 0) {
    int *seen = calloc((size_t)t_size * PER_SENDER, sizeof *seen);
    int *next = calloc((size_t)t_size, sizeof *next);
    for (int k = 0; k < t_size * PER_SENDER; k++) {
      int got[2] = {-1, -1};
      MPI_Status st;
      MPI_OK(MPI_Recv(got, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
      CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < t_size, "status source %d out of range", st.MPI_SOURCE);
      CHECK(got[0] == st.MPI_SOURCE, "message from rank %d reported source %d", got[0], st.MPI_SOURCE);
      CHECK(st.MPI_TAG == 1000 + got[0] * 10 + got[1], "message %d of rank %d reported tag %d", got[1], got[0],
            st.MPI_TAG);
      CHECK(got[1] == next[got[0]], "from rank %d: message %d arrived when %d was due (order)", got[0], got[1],
            next[got[0]]);
      CHECK(!seen[got[0] * PER_SENDER + got[1]], "message %d of rank %d received twice", got[1], got[0]);
      seen[got[0] * PER_SENDER + got[1]] = 1;
      next[got[0]]++;
      CHECK(t_count(&st, MPI_INT) == 2, "count %d, expected 2", t_count(&st, MPI_INT));
    }
    free(seen);
    free(next);
  }
  MPI_OK(MPI_Waitall(PER_SENDER, sreq, MPI_STATUSES_IGNORE));
  t_barrier();

  /* MPI_ANY_TAG with a fixed source, and MPI_ANY_SOURCE with a fixed tag */
  int peer = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
  int vals[2] = {t_rank * 3, t_rank * 3 + 1}, in = -1;
  MPI_Request r[2];
  MPI_Status st;
  MPI_OK(MPI_Isend(&vals[0], 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &r[0]));
  MPI_OK(MPI_Isend(&vals[1], 1, MPI_INT, peer, 8, MPI_COMM_WORLD, &r[1]));
  MPI_OK(MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, &st));
  CHECK(in == from * 3 + 1 && st.MPI_SOURCE == from && st.MPI_TAG == 8,
        "ANY_SOURCE tag 8: got value %d source %d tag %d, expected %d from %d", in, st.MPI_SOURCE, st.MPI_TAG,
        from * 3 + 1, from);
  MPI_OK(MPI_Recv(&in, 1, MPI_INT, from, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
  CHECK(in == from * 3 && st.MPI_SOURCE == from && st.MPI_TAG == 7,
        "ANY_TAG from %d: got value %d source %d tag %d", from, in, st.MPI_SOURCE, st.MPI_TAG);
  MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));

  /* MPI_STATUS_IGNORE on a wildcard receive */
  MPI_OK(MPI_Isend(&vals[0], 1, MPI_INT, peer, 9, MPI_COMM_WORLD, &r[0]));
  in = -1;
  MPI_OK(MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK(in == from * 3, "wildcard receive with MPI_STATUS_IGNORE got %d, expected %d", in, from * 3);
  MPI_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
  t_finish();
  return 0;
}
