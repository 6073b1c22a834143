// ranks: 1 2 4
/* MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv: a probe
 * reports source, tag and count (also of large messages) without receiving; a
 * matched probe removes the message from matching, so a later probe sees the next
 * one; MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC. Each rank sends to the next rank in
 * a ring (itself with 1 rank). */
#include "common.h"

#define BIG (1 << 20)

static void check_no_proc(MPI_Message msg, const MPI_Status *st, const char *what) {
  CHECK(msg == MPI_MESSAGE_NO_PROC, "%s: message handle is not MPI_MESSAGE_NO_PROC", what);
  CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG,
        "%s: status source %d tag %d, expected MPI_PROC_NULL/MPI_ANY_TAG", what, st->MPI_SOURCE, st->MPI_TAG);
}

static void proc_null(void) {
  MPI_Message msg = MPI_MESSAGE_NULL;
  MPI_Status st;
  int flag = 0, v = 42;
  MPI_Request req;
  MPI_OK(MPI_Probe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st));
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "MPI_Probe(MPI_PROC_NULL) source %d", st.MPI_SOURCE);
  MPI_OK(MPI_Iprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &flag, &st));
  CHECK(flag && st.MPI_SOURCE == MPI_PROC_NULL, "MPI_Iprobe(MPI_PROC_NULL): flag %d source %d", flag, st.MPI_SOURCE);
  MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &msg, &st));
  check_no_proc(msg, &st, "MPI_Mprobe(MPI_PROC_NULL)");
  MPI_OK(MPI_Mrecv(&v, 1, MPI_INT, &msg, &st));
  CHECK(msg == MPI_MESSAGE_NULL, "MPI_Mrecv of MPI_MESSAGE_NO_PROC did not set MPI_MESSAGE_NULL");
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL && t_count(&st, MPI_INT) == 0 && v == 42,
        "MPI_Mrecv of MPI_MESSAGE_NO_PROC: source %d count %d value %d", st.MPI_SOURCE, t_count(&st, MPI_INT), v);
  flag = 0;
  MPI_OK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
  CHECK(flag, "MPI_Improbe(MPI_PROC_NULL) returned flag 0");
  check_no_proc(msg, &st, "MPI_Improbe(MPI_PROC_NULL)");
  MPI_OK(MPI_Imrecv(&v, 1, MPI_INT, &msg, &req));
  CHECK(msg == MPI_MESSAGE_NULL, "MPI_Imrecv did not set MPI_MESSAGE_NULL");
  MPI_OK(MPI_Wait(&req, &st));
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL && t_count(&st, MPI_INT) == 0, "MPI_Imrecv of MPI_MESSAGE_NO_PROC: source %d",
        st.MPI_SOURCE);
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "probe");
  int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
  char *sbuf = t_alloc(BIG), *rbuf = t_alloc(BIG);
  MPI_Status st;
  int flag = 1;

  proc_null();
  MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
  CHECK(!flag, "MPI_Iprobe found a message (source %d tag %d) when none was sent", st.MPI_SOURCE, st.MPI_TAG);
  t_barrier();

  /* Probe and Iprobe report the envelope and size; the message stays receivable */
  static const int sizes[] = {0, 100, BIG};
  for (int i = 0; i < 3; i++) {
    MPI_Request req;
    t_fill(sbuf, (size_t)sizes[i], (unsigned)i);
    MPI_OK(MPI_Isend(sbuf, sizes[i], MPI_BYTE, to, 10 + i, MPI_COMM_WORLD, &req));
    if (i % 2 == 0) {
      MPI_OK(MPI_Probe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    } else {
      flag = 0;
      while (!flag) MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 10 + i, MPI_COMM_WORLD, &flag, &st));
    }
    CHECK_STATUS(st, from, 10 + i, sizes[i]);
    MPI_OK(MPI_Probe(st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st)); /* still there */
    MPI_OK(MPI_Recv(rbuf, BIG, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st));
    CHECK_STATUS(st, from, 10 + i, sizes[i]);
    CHECK_PATTERN(rbuf, (size_t)sizes[i], (unsigned)i, "received after probe");
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  }
  t_barrier();

  /* Mprobe takes the first of two same-tag messages out of matching */
  {
    MPI_Request req[2];
    char a[10], b[20];
    t_fill(sbuf, 10, 100);
    t_fill(sbuf + 10, 20, 101);
    MPI_OK(MPI_Isend(sbuf, 10, MPI_BYTE, to, 20, MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Isend(sbuf + 10, 20, MPI_BYTE, to, 20, MPI_COMM_WORLD, &req[1]));
    MPI_Message m;
    MPI_OK(MPI_Mprobe(from, 20, MPI_COMM_WORLD, &m, &st));
    CHECK(m != MPI_MESSAGE_NULL && m != MPI_MESSAGE_NO_PROC, "MPI_Mprobe returned no message handle");
    CHECK_STATUS(st, from, 20, 10);
    MPI_OK(MPI_Probe(from, 20, MPI_COMM_WORLD, &st));
    CHECK_STATUS(st, from, 20, 20); /* the matched first message is invisible */
    MPI_OK(MPI_Mrecv(a, 10, MPI_BYTE, &m, &st));
    CHECK(m == MPI_MESSAGE_NULL, "MPI_Mrecv did not set the message to MPI_MESSAGE_NULL");
    CHECK_STATUS(st, from, 20, 10);
    CHECK_PATTERN(a, 10, 100, "MPI_Mrecv");
    MPI_OK(MPI_Recv(b, 20, MPI_BYTE, from, 20, MPI_COMM_WORLD, &st));
    CHECK_PATTERN(b, 20, 101, "receive after MPI_Mrecv");
    MPI_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
  }
  t_barrier();

  /* Improbe + Imrecv of a large message, with wildcards */
  {
    MPI_Request sreq, rreq;
    MPI_Message m = MPI_MESSAGE_NULL;
    t_fill(sbuf, BIG, 200);
    MPI_OK(MPI_Isend(sbuf, BIG, MPI_BYTE, to, 30, MPI_COMM_WORLD, &sreq));
    flag = 0;
    while (!flag) MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st));
    CHECK_STATUS(st, from, 30, BIG);
    memset(rbuf, 0, BIG);
    MPI_OK(MPI_Imrecv(rbuf, BIG, MPI_BYTE, &m, &rreq));
    CHECK(m == MPI_MESSAGE_NULL, "MPI_Imrecv did not set the message to MPI_MESSAGE_NULL");
    MPI_OK(MPI_Wait(&rreq, &st));
    CHECK_STATUS(st, from, 30, BIG);
    CHECK_PATTERN(rbuf, BIG, 200, "MPI_Imrecv");
    MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
  }
  t_barrier();
  MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
  CHECK(!flag, "a message is left over after every one was received (source %d tag %d)", st.MPI_SOURCE, st.MPI_TAG);
  free(sbuf);
  free(rbuf);
  t_finish();
  return 0;
}
