// ranks: 2 4
/* Every send mode (standard, synchronous, buffered, ready), blocking and
 * nonblocking, for sizes from 0 B to 4 MiB (eager and rendezvous paths of every
 * transport), between the ranks of each pair (0-1, 2-3) in both directions and
 * to self. Contents, status and count are checked for every message; buffered sends
 * must complete before the receive is posted, synchronous sends must not. */
#include "common.h"

enum mode { STANDARD, SYNC, BUFFERED, READY, NMODES };
static const char *mode_name[NMODES] = {"standard", "synchronous", "buffered", "ready"};
static const int sizes[] = {0, 1, 8, 100, 1024, 4096, 12000, 65536, 65537, 262144, 1 << 20, 4 << 20};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define MAX_SIZE (4 << 20)

static void start_send(enum mode m, const void *buf, int n, int dest, int tag, MPI_Request *req) {
  switch (m) {
  case STANDARD: MPI_OK(MPI_Isend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, req)); break;
  case SYNC: MPI_OK(MPI_Issend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, req)); break;
  case BUFFERED: MPI_OK(MPI_Ibsend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, req)); break;
  default: MPI_OK(MPI_Irsend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, req)); break;
  }
}

static void blocking_send(enum mode m, const void *buf, int n, int dest, int tag) {
  switch (m) {
  case STANDARD: MPI_OK(MPI_Send(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD)); break;
  case SYNC: MPI_OK(MPI_Ssend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD)); break;
  case BUFFERED: MPI_OK(MPI_Bsend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD)); break;
  default: MPI_OK(MPI_Rsend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD)); break;
  }
}

/* One message from `from` to `to` (both may be this rank's pair members). */
static void exchange(enum mode m, int blocking, int n, unsigned seed, int from, char *sbuf, char *rbuf) {
  int tag = 10 + (int)m;
  int token = 0;
  if (t_rank == from) {
    t_fill(sbuf, n, seed);
    if (m == READY) /* the matching receive is posted before the ready send starts */
      MPI_OK(MPI_Recv(&token, 1, MPI_INT, from ^ 1, 1, t_ctl, MPI_STATUS_IGNORE));
    int to = from ^ 1;
    if (blocking) {
      blocking_send(m, sbuf, n, to, tag);
    } else {
      MPI_Request req;
      start_send(m, sbuf, n, to, tag, &req);
      MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
      CHECK(req == MPI_REQUEST_NULL, "%s send request not freed by MPI_Wait", mode_name[m]);
    }
    if (m == BUFFERED) { /* completed locally: the receiver posts only after this token */
      MPI_OK(MPI_Send(&token, 1, MPI_INT, to, 2, t_ctl));
      /* delivered: its space in the attached buffer is free for the next message */
      MPI_OK(MPI_Recv(&token, 1, MPI_INT, to, 4, t_ctl, MPI_STATUS_IGNORE));
    }
  } else {
    MPI_Status st;
    memset(rbuf, 0xee, (size_t)n + 1);
    if (m == BUFFERED) MPI_OK(MPI_Recv(&token, 1, MPI_INT, from, 2, t_ctl, MPI_STATUS_IGNORE));
    if (blocking && m != READY) {
      MPI_OK(MPI_Recv(rbuf, MAX_SIZE, MPI_BYTE, from, tag, MPI_COMM_WORLD, &st));
    } else {
      MPI_Request req;
      MPI_OK(MPI_Irecv(rbuf, MAX_SIZE, MPI_BYTE, from, tag, MPI_COMM_WORLD, &req));
      if (m == READY) MPI_OK(MPI_Send(&token, 1, MPI_INT, from, 1, t_ctl));
      MPI_OK(MPI_Wait(&req, &st));
      CHECK(req == MPI_REQUEST_NULL, "receive request not freed by MPI_Wait");
    }
    if (m == BUFFERED) MPI_OK(MPI_Send(&token, 1, MPI_INT, from, 4, t_ctl));
    CHECK_STATUS(st, from, tag, n);
    CHECK_PATTERN(rbuf, (size_t)n, seed, mode_name[m]);
    CHECK((unsigned char)rbuf[n] == 0xee, "%s receive of %d bytes wrote past the message", mode_name[m], n);
  }
}

/* A synchronous send must not complete before its receive is posted. */
static void sync_waits_for_receiver(int n, char *sbuf, char *rbuf) {
  int partner = t_rank ^ 1, token = 0;
  if ((t_rank & 1) == 0) {
    MPI_Request req;
    int done = 0;
    t_fill(sbuf, n, 77);
    MPI_OK(MPI_Issend(sbuf, n, MPI_BYTE, partner, 30, MPI_COMM_WORLD, &req));
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < 0.05) {
      MPI_OK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
      CHECK(!done, "MPI_Issend of %d bytes completed before the receive was posted", n);
    }
    MPI_OK(MPI_Send(&token, 1, MPI_INT, partner, 3, t_ctl));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  } else {
    MPI_Status st;
    MPI_OK(MPI_Recv(&token, 1, MPI_INT, partner, 3, t_ctl, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Recv(rbuf, n, MPI_BYTE, partner, 30, MPI_COMM_WORLD, &st));
    CHECK_STATUS(st, partner, 30, n);
    CHECK_PATTERN(rbuf, (size_t)n, 77, "synchronous send after delay");
  }
}

/* Nonblocking sends of every mode to this rank itself. */
static void self_sends(char *sbuf, char *rbuf) {
  for (int m = 0; m < NMODES; m++)
    for (int i = 0; i < NSIZES; i++) {
      int n = sizes[i];
      unsigned seed = 500u + (unsigned)(m * NSIZES + i);
      MPI_Request req[2];
      MPI_Status st[2];
      t_fill(sbuf, n, seed);
      memset(rbuf, 0, (size_t)n);
      MPI_OK(MPI_Irecv(rbuf, n, MPI_BYTE, t_rank, 40, MPI_COMM_WORLD, &req[0]));
      start_send((enum mode)m, sbuf, n, t_rank, 40, &req[1]);
      MPI_OK(MPI_Waitall(2, req, st));
      CHECK_STATUS(st[0], t_rank, 40, n);
      CHECK_PATTERN(rbuf, (size_t)n, seed, mode_name[m]);
    }
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "p2p_modes");
  CHECK(t_size % 2 == 0, "needs an even number of ranks, got %d", t_size);
  char *sbuf = t_alloc(MAX_SIZE), *rbuf = t_alloc(MAX_SIZE + 1);
  /* room for two messages: a buffered message may still occupy the buffer while
   * the next one is started (the first is freed once it is delivered) */
  int bsize = 2 * (MAX_SIZE + MPI_BSEND_OVERHEAD);
  char *bbuf = t_alloc((size_t)bsize);
  MPI_OK(MPI_Buffer_attach(bbuf, bsize));

  for (int dir = 0; dir < 2; dir++) {
    int from = (t_rank & ~1) + dir; /* the lower rank of the pair sends first */
    for (int m = 0; m < NMODES; m++)
      for (int blocking = 1; blocking >= 0; blocking--)
        for (int i = 0; i < NSIZES; i++)
          exchange((enum mode)m, blocking, sizes[i], (unsigned)(dir * 1000 + m * 100 + blocking * 50 + i),
                   from, sbuf, rbuf);
  }
  sync_waits_for_receiver(8, sbuf, rbuf);
  sync_waits_for_receiver(1 << 20, sbuf, rbuf);
  self_sends(sbuf, rbuf);

  void *addr = NULL;
  int got = 0;
  MPI_OK(MPI_Buffer_detach(&addr, &got));
  CHECK(addr == bbuf, "MPI_Buffer_detach returned %p, attached %p", addr, (void *)bbuf);
  CHECK(got == bsize, "MPI_Buffer_detach returned size %d, attached %d", got, bsize);
  free(bbuf);
  free(sbuf);
  free(rbuf);
  t_finish();
  return 0;
}
