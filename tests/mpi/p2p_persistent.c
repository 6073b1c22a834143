// ranks: 2 4
/* Persistent requests: Send_init, Ssend_init, Bsend_init, Rsend_init and Recv_init,
 * started many times with MPI_Start and MPI_Startall with new contents each time,
 * small and large. A completed persistent request stays allocated and inactive:
 * waiting on it again returns at once with an empty status; Request_free releases it. */
#include "common.h"

#define ROUNDS 20
#define NKINDS 4
static const int sizes[] = {0, 8, 4096, 300000};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static void init_send(int kind, void *buf, int n, int dest, int tag, MPI_Request *req) {
  switch (kind) {
  case 0: MPI_OK(MPI_Send_init(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, req)); break;
  case 1: MPI_OK(MPI_Ssend_init(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, req)); break;
  case 2: MPI_OK(MPI_Bsend_init(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, req)); break;
  default: MPI_OK(MPI_Rsend_init(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, req)); break;
  }
}

static void check_inactive_wait(MPI_Request *req) {
  MPI_Status st;
  MPI_Request before = *req;
  int flag = 0;
  MPI_OK(MPI_Wait(req, &st));
  CHECK(*req == before, "MPI_Wait on an inactive persistent request changed the handle");
  CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
        "inactive request status: source %d tag %d, expected MPI_ANY_SOURCE/MPI_ANY_TAG", st.MPI_SOURCE, st.MPI_TAG);
  CHECK(t_count(&st, MPI_BYTE) == 0, "inactive request status count %d, expected 0", t_count(&st, MPI_BYTE));
  MPI_OK(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
  CHECK(flag, "MPI_Test on an inactive persistent request returned flag 0");
  CHECK(*req == before, "MPI_Test on an inactive persistent request changed the handle");
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "p2p_persistent");
  CHECK(t_size % 2 == 0, "needs an even number of ranks, got %d", t_size);
  int partner = t_rank ^ 1, sender = (t_rank & 1) == 0, token = 0;
  int maxn = sizes[NSIZES - 1];
  char *buf = t_alloc((size_t)maxn);
  int bsize = 2 * (maxn + MPI_BSEND_OVERHEAD);
  char *bbuf = t_alloc((size_t)bsize);
  MPI_OK(MPI_Buffer_attach(bbuf, bsize));

  for (int kind = 0; kind < NKINDS; kind++)
    for (int s = 0; s < NSIZES; s++) {
      int n = sizes[s], tag = 100 + kind;
      MPI_Request req;
      if (sender) init_send(kind, buf, n, partner, tag, &req);
      else MPI_OK(MPI_Recv_init(buf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &req));
      CHECK(req != MPI_REQUEST_NULL, "persistent init returned MPI_REQUEST_NULL");
      for (int round = 0; round < ROUNDS; round++) {
        unsigned seed = (unsigned)(kind * 1000 + s * 100 + round);
        MPI_Status st;
        if (sender) {
          /* ready mode needs the receive started first; the others are checked
           * with the receive started after the send as well */
          MPI_OK(MPI_Recv(&token, 1, MPI_INT, partner, 1, t_ctl, MPI_STATUS_IGNORE));
          t_fill(buf, n, seed);
          MPI_OK(MPI_Start(&req));
          MPI_OK(MPI_Wait(&req, &st));
          CHECK(req != MPI_REQUEST_NULL, "MPI_Wait freed a persistent send request");
        } else {
          memset(buf, 0, (size_t)n);
          if (kind == 3 || round % 2 == 0) {
            MPI_OK(MPI_Start(&req));
            MPI_OK(MPI_Send(&token, 1, MPI_INT, partner, 1, t_ctl));
          } else {
            MPI_OK(MPI_Send(&token, 1, MPI_INT, partner, 1, t_ctl));
            MPI_OK(MPI_Start(&req));
          }
          MPI_OK(MPI_Wait(&req, &st));
          CHECK(req != MPI_REQUEST_NULL, "MPI_Wait freed a persistent receive request");
          CHECK_STATUS(st, partner, tag, n);
          if (kind == 2) /* Open MPI 4.1 sends the attached buffer's stale bytes for
                          * restarted persistent buffered sends above its eager size */
            CHECK_CROSSMPI(t_verify(buf, (size_t)n, seed) < 0, "persistent buffered send: wrong data at byte %ld",
                           t_verify(buf, (size_t)n, seed));
          else
            CHECK_PATTERN(buf, (size_t)n, seed, "persistent receive");
        }
      }
      check_inactive_wait(&req);
      MPI_OK(MPI_Request_free(&req));
      CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free did not set the handle to MPI_REQUEST_NULL");
    }

  /* MPI_Startall: each rank sends 3 messages to its partner and receives 3 */
  enum { K = 3 };
  static char sb[K][5000], rb[K][5000];
  MPI_Request reqs[2 * K];
  for (int i = 0; i < K; i++) {
    MPI_OK(MPI_Recv_init(rb[i], sizeof rb[i], MPI_BYTE, partner, 200 + i, MPI_COMM_WORLD, &reqs[i]));
    MPI_OK(MPI_Send_init(sb[i], (int)sizeof sb[i], MPI_BYTE, partner, 200 + i, MPI_COMM_WORLD, &reqs[K + i]));
  }
  for (int round = 0; round < ROUNDS; round++) {
    MPI_Status st[2 * K];
    for (int i = 0; i < K; i++) t_fill(sb[i], sizeof sb[i], (unsigned)(t_rank * 100 + round * K + i));
    MPI_OK(MPI_Startall(2 * K, reqs));
    MPI_OK(MPI_Waitall(2 * K, reqs, st));
    for (int i = 0; i < K; i++) {
      CHECK_STATUS(st[i], partner, 200 + i, (int)sizeof rb[i]);
      CHECK_PATTERN(rb[i], sizeof rb[i], (unsigned)(partner * 100 + round * K + i), "MPI_Startall receive");
    }
    for (int i = 0; i < 2 * K; i++) CHECK(reqs[i] != MPI_REQUEST_NULL, "MPI_Waitall freed persistent request %d", i);
  }
  for (int i = 0; i < 2 * K; i++) MPI_OK(MPI_Request_free(&reqs[i]));

  void *addr;
  int got;
  MPI_OK(MPI_Buffer_detach(&addr, &got));
  free(bbuf);
  free(buf);
  t_finish();
  return 0;
}
