// ranks: 2 4
/* MPI_Request_free: an active send request freed at once still delivers its message
 * (eager and large); a freed active receive still takes part in matching in posting
 * order; an inactive persistent request is freed; the handle becomes
 * MPI_REQUEST_NULL. Ranks work in pairs (0-1, 2-3). */
#include "common.h"

#define BIG (1 << 20)

int main(int argc, char **argv) {
  t_init(&argc, &argv, "request_free");
  CHECK(t_size % 2 == 0, "needs an even number of ranks, got %d", t_size);
  int partner = t_rank ^ 1, even = (t_rank & 1) == 0, token = 0;
  char *buf = t_alloc(BIG), *rbuf = t_alloc(BIG);
  MPI_Request req;
  MPI_Status st;

  /* freed active sends */
  static const int sizes[] = {0, 8, 65536, BIG};
  for (int s = 0; s < 4; s++) {
    int n = sizes[s];
    if (even) {
      t_fill(buf, (size_t)n, (unsigned)s);
      MPI_OK(MPI_Isend(buf, n, MPI_BYTE, partner, 10 + s, MPI_COMM_WORLD, &req));
      MPI_OK(MPI_Request_free(&req));
      CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free left the handle set");
      /* the buffer may be reused only once the receiver says it has the message */
      MPI_OK(MPI_Recv(&token, 1, MPI_INT, partner, 1, t_ctl, MPI_STATUS_IGNORE));
    } else {
      MPI_OK(MPI_Recv(rbuf, BIG, MPI_BYTE, partner, 10 + s, MPI_COMM_WORLD, &st));
      CHECK_STATUS(st, partner, 10 + s, n);
      CHECK_PATTERN(rbuf, (size_t)n, (unsigned)s, "message of a freed send request");
      MPI_OK(MPI_Send(&token, 1, MPI_INT, partner, 1, t_ctl));
    }
  }

  /* a freed receive keeps its place in matching: the first message goes to it,
   * the second to the receive posted after it */
  int first = -1, second = -1;
  if (even) {
    int a = 111, b = 222;
    MPI_OK(MPI_Recv(&token, 1, MPI_INT, partner, 2, t_ctl, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Send(&a, 1, MPI_INT, partner, 20, MPI_COMM_WORLD));
    MPI_OK(MPI_Send(&b, 1, MPI_INT, partner, 20, MPI_COMM_WORLD));
  } else {
    MPI_OK(MPI_Irecv(&first, 1, MPI_INT, partner, 20, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free left the receive handle set");
    MPI_OK(MPI_Send(&token, 1, MPI_INT, partner, 2, t_ctl));
    MPI_OK(MPI_Recv(&second, 1, MPI_INT, partner, 20, MPI_COMM_WORLD, &st));
    CHECK(second == 222, "the receive posted after a freed one got %d, expected 222", second);
  }

  /* inactive persistent requests, and one freed after completing a round */
  MPI_Request p;
  MPI_OK(MPI_Send_init(buf, 4, MPI_BYTE, partner, 30, MPI_COMM_WORLD, &p));
  MPI_OK(MPI_Request_free(&p));
  CHECK(p == MPI_REQUEST_NULL, "freeing an inactive persistent request left the handle set");
  if (even) {
    t_fill(buf, 64, 40);
    MPI_OK(MPI_Send_init(buf, 64, MPI_BYTE, partner, 31, MPI_COMM_WORLD, &p));
  } else {
    MPI_OK(MPI_Recv_init(rbuf, 64, MPI_BYTE, partner, 31, MPI_COMM_WORLD, &p));
  }
  MPI_OK(MPI_Start(&p));
  MPI_OK(MPI_Wait(&p, &st));
  if (!even) CHECK_PATTERN(rbuf, 64, 40, "persistent receive");
  MPI_OK(MPI_Request_free(&p));
  CHECK(p == MPI_REQUEST_NULL, "freeing a completed persistent request left the handle set");

  free(buf);
  free(rbuf);
  t_finish();
  return 0;
}
