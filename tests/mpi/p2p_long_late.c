// ranks: 2
/* Long messages (beyond every eager limit, so a rendezvous or, between crossmpi
 * clusters, data sent ahead of the match: docs/impi.md) whose receive comes late or
 * takes them in unusual ways: a wildcard receive posted after the data arrived; a
 * receive too small for the message, posted late and posted early (MPI_ERR_TRUNCATE,
 * the first bytes delivered); a matched probe and MPI_Mrecv of a message that waited;
 * and many messages both ways at once, their receives posted after every send, more
 * than a sender may send ahead of its receiver. Rank 0 and rank 1 exchange. */
#include "common.h"

#define BIG (300 * 1024)
#define FLOOD 24

int main(int argc, char **argv) {
  t_init(&argc, &argv, "p2p_long_late");
  int rank = t_rank, peer = 1 - rank;
  unsigned char *s = t_alloc(BIG), *r = t_alloc(BIG);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_Status st;

  /* A wildcard receive posted after the whole message arrived. */
  if (rank == 0) {
    t_fill(s, BIG, 1);
    MPI_OK(MPI_Send(s, BIG, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
  } else {
    t_sleep_ms(200);
    MPI_OK(MPI_Recv(r, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECK_STATUS(st, 0, 1, BIG);
    CHECK_PATTERN(r, BIG, 1, "late wildcard receive");
  }

  /* Too small a receive, posted late and posted before the message. */
  for (int early = 0; early < 2; early++) {
    int tag = 2 + early;
    MPI_Request q = MPI_REQUEST_NULL;
    if (rank == 1 && early) MPI_OK(MPI_Irecv(r, BIG / 3, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &q));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
      t_fill(s, BIG, tag);
      MPI_OK(MPI_Send(s, BIG, MPI_BYTE, 1, tag, MPI_COMM_WORLD));
    } else {
      int err, cls;
      if (early) {
        err = MPI_Wait(&q, &st);
      } else {
        t_sleep_ms(100);
        err = MPI_Recv(r, BIG / 3, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st);
      }
      MPI_OK(MPI_Error_class(err, &cls));
      CHECK(cls == MPI_ERR_TRUNCATE, "receive posted %s: error class %d, expected MPI_ERR_TRUNCATE",
            early ? "early" : "late", cls);
      CHECK_PATTERN(r, BIG / 3, tag, "the part of a truncated message that fits");
    }
  }

  /* A matched probe of a message that waited, then MPI_Mrecv. */
  if (rank == 0) {
    t_fill(s, BIG, 4);
    MPI_OK(MPI_Send(s, BIG, MPI_BYTE, 1, 4, MPI_COMM_WORLD));
  } else {
    t_sleep_ms(100);
    MPI_Message m;
    MPI_OK(MPI_Mprobe(0, 4, MPI_COMM_WORLD, &m, &st));
    CHECK_STATUS(st, 0, 4, BIG);
    memset(r, 0, BIG);
    MPI_OK(MPI_Mrecv(r, BIG, MPI_BYTE, &m, &st));
    CHECK_PATTERN(r, BIG, 4, "matched probe then MPI_Mrecv");
  }

  /* Both ways at once, receives posted after every send: 7 MiB each way. */
  unsigned char *out = t_alloc((size_t)BIG * FLOOD), *in = t_alloc((size_t)BIG * FLOOD);
  MPI_Request q[2 * FLOOD];
  for (int i = 0; i < FLOOD; i++) {
    t_fill(out + (size_t)i * BIG, BIG, 10 + i + rank);
    MPI_OK(MPI_Isend(out + (size_t)i * BIG, BIG, MPI_BYTE, peer, 100 + i, MPI_COMM_WORLD, &q[i]));
  }
  t_sleep_ms(50);
  for (int i = 0; i < FLOOD; i++)
    MPI_OK(MPI_Irecv(in + (size_t)i * BIG, BIG, MPI_BYTE, peer, 100 + i, MPI_COMM_WORLD, &q[FLOOD + i]));
  MPI_OK(MPI_Waitall(2 * FLOOD, q, MPI_STATUSES_IGNORE));
  for (int i = 0; i < FLOOD; i++)
    CHECK_PATTERN(in + (size_t)i * BIG, BIG, 10 + i + peer, "message %d of the two-way flood", i);

  free(out);
  free(in);
  free(s);
  free(r);
  t_finish();
  return 0;
}
