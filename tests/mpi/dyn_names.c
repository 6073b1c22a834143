// ranks: 2 4
// impi: skip names are scoped to one mpirun, and each IMPI cluster has its own; the test also spawns
/* The name service: the lower half of MPI_COMM_WORLD opens a port and publishes it
 * under a service name, the upper half looks the name up and connects; the halves
 * exchange messages over the intercommunicator, then the name is unpublished and can
 * no longer be found. A spawned child looks up a name its parent published (names are
 * visible to every process of the mpirun, spawned ones included) and connects to it.
 * Errors: looking up an unknown name (MPI_ERR_NAME), unpublishing one (MPI_ERR_SERVICE)
 * and publishing a name twice (MPI_ERR_NAME) (the last two crossmpi only: Open MPI 4.1
 * accepts both), each message naming the service. */
#include "common.h"

static int class_of(int rc) {
  int c = -1;
  MPI_Error_class(rc, &c);
  return c;
}

static void expect_error(int rc, int class, const char *what, const char *service) {
  CHECK(class_of(rc) == class, "%s: class %d, expected %d", what, class_of(rc), class);
  char msg[MPI_MAX_ERROR_STRING];
  int len;
  MPI_OK(MPI_Error_string(rc, msg, &len));
  CHECK_CROSSMPI(strstr(msg, service) != NULL, "%s: message lacks %s: %s", what, service, msg);
}

/* A spawned child: finds its parent's port by name and connects to it. */
static int child(MPI_Comm parent, const char *service) {
  t_name = "dyn_names child";
  char port[MPI_MAX_PORT_NAME];
  MPI_Comm inter;
  MPI_OK(MPI_Lookup_name(service, MPI_INFO_NULL, port));
  MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
  int v = 31;
  MPI_OK(MPI_Send(&v, 1, MPI_INT, 0, 1, inter));
  MPI_OK(MPI_Comm_disconnect(&inter));
  MPI_OK(MPI_Comm_disconnect(&parent));
  MPI_OK(MPI_Finalize());
  return 0;
}

int main(int argc, char **argv) {
  MPI_OK(MPI_Init(&argc, &argv));
  MPI_Comm parent;
  MPI_OK(MPI_Comm_get_parent(&parent));
  if (parent != MPI_COMM_NULL) return child(parent, argc > 1 ? argv[1] : "");
  t_setup("dyn_names");
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  int server = t_rank < t_size / 2;
  MPI_Comm half, inter;
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, server, t_rank, &half));
  char port[MPI_MAX_PORT_NAME] = "";
  const char *service = "dyn-names-ocean";

  if (server && t_rank == 0) {
    MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
    MPI_OK(MPI_Publish_name(service, MPI_INFO_NULL, port));
    /* What publishing a name twice does is the implementation's choice (Open MPI 4.1
     * accepts it); crossmpi refuses. */
    if (!t_peer()) {
      int rc = MPI_Publish_name(service, MPI_INFO_NULL, port);
      expect_error(rc, MPI_ERR_NAME, "publishing twice", service);
    }
  }
  t_barrier(); /* published before anyone looks */
  if (server) {
    MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter));
  } else {
    char found[MPI_MAX_PORT_NAME] = "";
    MPI_OK(MPI_Lookup_name(service, MPI_INFO_NULL, found));
    MPI_OK(MPI_Comm_connect(found, MPI_INFO_NULL, 0, half, &inter));
  }
  int lrank, rsize;
  MPI_OK(MPI_Comm_rank(inter, &lrank));
  MPI_OK(MPI_Comm_remote_size(inter, &rsize));
  int out = (server ? 100 : 200) + lrank, in = -1;
  MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, lrank % rsize, 2, &in, 1, MPI_INT, MPI_ANY_SOURCE, 2,
                      inter, MPI_STATUS_IGNORE));
  CHECK(in / 100 == (server ? 2 : 1), "got %d over the intercommunicator", in);
  MPI_OK(MPI_Comm_disconnect(&inter));
  t_barrier();
  if (server && t_rank == 0) {
    MPI_OK(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
    MPI_OK(MPI_Close_port(port));
  }
  t_barrier();
  char found[MPI_MAX_PORT_NAME];
  int rc = MPI_Lookup_name(service, MPI_INFO_NULL, found);
  expect_error(rc, MPI_ERR_NAME, "looking up an unpublished name", service);
  /* MPI makes this an MPI_ERR_SERVICE error; Open MPI 4.1 returns success. */
  if (!t_peer()) {
    rc = MPI_Unpublish_name("dyn-names-never", MPI_INFO_NULL, "x");
    expect_error(rc, MPI_ERR_SERVICE, "unpublishing an unknown name", "dyn-names-never");
  }
  t_barrier();

  /* Every process spawns a child that finds the name its parent published. */
  char cport[MPI_MAX_PORT_NAME], cservice[64];
  snprintf(cservice, sizeof cservice, "dyn-names-child-of-%d", t_rank);
  MPI_OK(MPI_Open_port(MPI_INFO_NULL, cport));
  MPI_OK(MPI_Publish_name(cservice, MPI_INFO_NULL, cport));
  char *cargv[] = {cservice, NULL};
  MPI_Comm children, from_child;
  MPI_OK(MPI_Comm_spawn(argv[0], cargv, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &children,
                        MPI_ERRCODES_IGNORE));
  MPI_OK(MPI_Comm_accept(cport, MPI_INFO_NULL, 0, MPI_COMM_SELF, &from_child));
  MPI_OK(MPI_Unpublish_name(cservice, MPI_INFO_NULL, cport));
  MPI_OK(MPI_Close_port(cport));
  int v = 0;
  MPI_OK(MPI_Recv(&v, 1, MPI_INT, 0, 1, from_child, MPI_STATUS_IGNORE));
  CHECK(v == 31, "the child sent %d", v);
  MPI_OK(MPI_Comm_disconnect(&from_child));
  MPI_OK(MPI_Comm_disconnect(&children));
  MPI_OK(MPI_Comm_free(&half));
  t_finish();
  return 0;
}
