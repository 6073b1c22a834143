// ranks: 1 2
// expect: within=30
/* Port errors return MPI_ERR_PORT with a message naming the function and the port:
 * a malformed port name, a port nobody listens on, a closed port, closing a port twice,
 * an impostor that sends garbage or hangs up, and an accept nobody connects to (CROSSMPI_PORT_TIMEOUT=1 bounds its wait). */
#include "common.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

/* Connects to the loopback address of a crossmpi port name, sends `junk` and hangs up:
 * an impostor instead of another job's root. */
static void impostor(const char *port, const char *junk) {
  const char *colon = strrchr(port, ':');
  CHECK(colon != NULL, "port name %s", port);
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(colon + 1)),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  CHECK(s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0, "connect to %s", port);
  CHECK(write(s, junk, strlen(junk)) == (ssize_t)strlen(junk), "write");
  close(s);
}

static int class_of(int rc) {
  int c = rc;
  MPI_Error_class(rc, &c);
  return c;
}

static void expect_port_error(int rc, const char *function, const char *what) {
  CHECK(class_of(rc) == MPI_ERR_PORT, "%s: class %d, expected MPI_ERR_PORT", what, class_of(rc));
  char msg[MPI_MAX_ERROR_STRING];
  int len;
  MPI_OK(MPI_Error_string(rc, msg, &len));
  CHECK_CROSSMPI(strstr(msg, function) != NULL && strstr(msg, "port_name") != NULL,
                 "%s: message %s", what, msg);
}

int main(int argc, char **argv) {
  setenv("CROSSMPI_PORT_TIMEOUT", "1", 1);
  t_init(&argc, &argv, "dyn_port_errors");
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_Comm inter = MPI_COMM_WORLD;
  char port[MPI_MAX_PORT_NAME];

  int rc = MPI_Comm_connect("no such port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
  expect_port_error(rc, "MPI_Comm_connect", "malformed name");
  CHECK(inter == MPI_COMM_NULL, "a communicator after a failed connect");

  /* a port that was opened and closed: nobody accepts there any more */
  MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
  MPI_OK(MPI_Close_port(port));
  rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
  expect_port_error(rc, "MPI_Comm_connect", "closed port");
  rc = MPI_Close_port(port);
  expect_port_error(rc, "MPI_Close_port", "closing twice");
  rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
  expect_port_error(rc, "MPI_Comm_accept", "accept on a closed port");

  /* the whole communicator learns that its root failed */
  rc = MPI_Comm_connect("crossmpi:tcp:127.0.0.1:1", MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
  CHECK(class_of(rc) == MPI_ERR_PORT, "connect to port 1: class %d", class_of(rc));

  /* the other "root" sends garbage, or hangs up at once (crossmpi's port names only) */
  if (!t_peer()) {
    MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
    impostor(port, "GET / HTTP/1.0\r\n\r\n");
    rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
    expect_port_error(rc, "MPI_Comm_accept", "garbage from the other root");
    impostor(port, "");
    rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
    expect_port_error(rc, "MPI_Comm_accept", "the other root hung up");
    MPI_OK(MPI_Close_port(port));
  }

  /* nobody connects: the accept gives up after CROSSMPI_PORT_TIMEOUT */
  if (t_rank == 0) MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
  double t0 = MPI_Wtime();
  rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
  CHECK(class_of(rc) == MPI_ERR_PORT, "accept without connector: class %d", class_of(rc));
  CHECK_CROSSMPI(MPI_Wtime() - t0 < 10, "accept took %.1f s", MPI_Wtime() - t0);
  if (t_rank == 0) MPI_OK(MPI_Close_port(port));
  t_finish();
  return 0;
}
