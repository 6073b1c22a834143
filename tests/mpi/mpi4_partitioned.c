// ranks: 2 3 4
/* Partitioned communication: ranks pair up (0-1, 2-3); the sender marks partitions
 * ready in a scrambled order with MPI_Pready, MPI_Pready_range and MPI_Pready_list over
 * several rounds (MPI_Start / MPI_Startall), sender and receiver partitioning the buffer
 * differently (8 x 1000 ints against 4 x 2000). MPI_Parrived reports nothing before the
 * sender's last MPI_Pready (the sender waits for a go-ahead after marking all but one)
 * and every partition after. A 64 KiB-partition round takes the rendezvous path. Errors:
 * Pready twice, a partition out of range, Pready on the receive side. An odd rank out
 * uses MPI_PROC_NULL. */
#include "common.h"

#define SP 8
#define RP 4
#define PER 1000

static int val(int round, int i) { return round * 100000 + i; }

int main(int argc, char **argv) {
  t_init(&argc, &argv, "mpi4_partitioned");
  int peer = t_rank ^ 1;
  if (peer >= t_size) peer = MPI_PROC_NULL;
  int sender = t_rank % 2 == 0;
  int *buf = t_alloc(sizeof(int) * SP * PER);
  MPI_Request req;
  if (sender)
    MPI_OK(MPI_Psend_init(buf, SP, PER, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
  else
    MPI_OK(MPI_Precv_init(buf, RP, SP * PER / RP, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &req));

  for (int round = 0; round < 4; round++) {
    int go = 0;
    if (sender) {
      for (int i = 0; i < SP * PER; i++) buf[i] = val(round, i);
      if (round % 2) MPI_OK(MPI_Startall(1, &req));
      else MPI_OK(MPI_Start(&req));
      /* all but partition 3, in three styles */
      MPI_OK(MPI_Pready(5, req));
      MPI_OK(MPI_Pready_range(0, 2, req));
      int list[] = {7, 4, 6};
      MPI_OK(MPI_Pready_list(3, list, req));
      if (round == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int cls = -1;
        MPI_Error_class(MPI_Pready(5, req), &cls);
        CHECK(cls == MPI_ERR_ARG, "Pready twice: class %d", cls);
        MPI_Error_class(MPI_Pready(SP, req), &cls);
        CHECK(cls == MPI_ERR_ARG, "Pready out of range: class %d", cls);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
      }
      if (peer != MPI_PROC_NULL) MPI_OK(MPI_Recv(&go, 1, MPI_INT, peer, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      MPI_OK(MPI_Pready(3, req));
      MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
      CHECK(req != MPI_REQUEST_NULL, "Wait freed the partitioned request");
    } else {
      memset(buf, 0, sizeof(int) * SP * PER);
      MPI_OK(MPI_Start(&req));
      int flag = 1;
      for (int p = 0; p < RP; p++) {
        MPI_OK(MPI_Parrived(req, p, &flag));
        CHECK(!flag, "round %d: partition %d arrived before the sender's last Pready", round, p);
      }
      if (round == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int cls = -1;
        MPI_Error_class(MPI_Pready(0, req), &cls);
        CHECK(cls == MPI_ERR_REQUEST, "Pready on a receive: class %d", cls);
        MPI_Error_class(MPI_Parrived(req, RP, &flag), &cls);
        CHECK(cls == MPI_ERR_ARG, "Parrived out of range: class %d", cls);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
      }
      MPI_OK(MPI_Send(&go, 1, MPI_INT, peer, 99, MPI_COMM_WORLD));
      for (int p = 0; p < RP; p++) {
        flag = 0;
        while (!flag) MPI_OK(MPI_Parrived(req, p, &flag));
      }
      MPI_Status st;
      MPI_OK(MPI_Wait(&req, &st));
      for (int i = 0; i < SP * PER; i++) CHECK(buf[i] == val(round, i), "round %d: element %d is %d", round, i, buf[i]);
    }
  }
  MPI_OK(MPI_Request_free(&req));

  /* large partitions: 4 x 64 KiB, rendezvous-sized */
  size_t big = 4 * 65536;
  char *b = t_alloc(big);
  if (sender) {
    t_fill(b, big, 42);
    MPI_OK(MPI_Psend_init(b, 4, 65536, MPI_BYTE, peer, 8, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    MPI_OK(MPI_Start(&req));
    for (int p = 3; p >= 0; p--) MPI_OK(MPI_Pready(p, req));
  } else {
    MPI_OK(MPI_Precv_init(b, 2, 2 * 65536, MPI_BYTE, peer, 8, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    MPI_OK(MPI_Start(&req));
  }
  MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  if (!sender && peer != MPI_PROC_NULL) CHECK_PATTERN(b, big, 42, "large partitioned message");
  MPI_OK(MPI_Request_free(&req));
  free(b);
  free(buf);
  t_finish();
  return 0;
}
