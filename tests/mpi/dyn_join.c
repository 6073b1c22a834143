// ranks: 2
// lab: skip its ranks meet over a loopback socket, so they must share one host
/* MPI_Comm_join: two processes connected by a socket of their own become an
 * intercommunicator of one process on each side, which carries messages and
 * collectives and merges. Without arguments ranks 0 and 1 of one job join; with
 * "listen FILE" or "connect FILE" rank 0 of each of two jobs does (the listener writes
 * its TCP port into FILE; tests/suites/dynamic.sh runs that). */
#include "common.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static int listen_any(int *port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  CHECK(s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 && listen(s, 1) == 0, "listen");
  CHECK(getsockname(s, (struct sockaddr *)&a, &len) == 0, "getsockname");
  *port = ntohs(a.sin_port);
  return s;
}

static int connect_to(int port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  CHECK(s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0, "connect to port %d", port);
  return s;
}

static void exercise(MPI_Comm inter, int low) {
  int rsize, out = low ? 11 : 22, in = 0, sum = 0;
  MPI_OK(MPI_Comm_remote_size(inter, &rsize));
  CHECK(rsize == 1, "remote size %d", rsize);
  MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, 0, 3, &in, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE));
  CHECK(in == (low ? 22 : 11), "got %d", in);
  MPI_OK(MPI_Allreduce(&out, &sum, 1, MPI_INT, MPI_SUM, inter));
  CHECK(sum == in, "allreduce %d", sum);
  MPI_Comm merged;
  int mrank;
  MPI_OK(MPI_Intercomm_merge(inter, !low, &merged));
  MPI_OK(MPI_Comm_rank(merged, &mrank));
  CHECK(mrank == (low ? 0 : 1), "merged rank %d", mrank);
  MPI_OK(MPI_Allreduce(&out, &sum, 1, MPI_INT, MPI_SUM, merged));
  CHECK(sum == 33, "merged allreduce %d", sum);
  MPI_OK(MPI_Comm_free(&merged));
  MPI_OK(MPI_Comm_disconnect(&inter));
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "dyn_join");
  MPI_Comm inter;
  int port = 0, fd = -1;
  if (argc == 3) {
    int listener = strcmp(argv[1], "listen") == 0;
    if (t_rank == 0) {
      if (listener) {
        int l = listen_any(&port);
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
        FILE *f = fopen(tmp, "w");
        CHECK(f != NULL, "write %s", tmp);
        fprintf(f, "%d\n", port);
        fclose(f);
        CHECK(rename(tmp, argv[2]) == 0, "rename");
        fd = accept(l, NULL, NULL);
        close(l);
      } else {
        for (int i = 0; i < 3000 && port == 0; i++) {
          FILE *f = fopen(argv[2], "r");
          if (f != NULL) {
            if (fscanf(f, "%d", &port) != 1) port = 0;
            fclose(f);
          }
          if (port == 0) t_sleep_ms(10);
        }
        fd = connect_to(port);
      }
      CHECK(fd >= 0, "socket");
      MPI_OK(MPI_Comm_join(fd, &inter));
      exercise(inter, listener);
      close(fd);
    }
  } else {
    if (t_rank == 0) {
      int l = listen_any(&port);
      MPI_OK(MPI_Send(&port, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
      fd = accept(l, NULL, NULL);
      close(l);
    } else {
      MPI_OK(MPI_Recv(&port, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      fd = connect_to(port);
    }
    CHECK(fd >= 0, "socket");
    MPI_OK(MPI_Comm_join(fd, &inter));
    exercise(inter, t_rank == 0);
    close(fd);
  }
  t_finish();
  return 0;
}
