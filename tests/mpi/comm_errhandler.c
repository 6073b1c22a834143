// ranks: 1 2
/* MPI_Comm_call_errhandler hands the caller's own error code to the communicator's
 * handler (a user code from MPI_Add_error_code, and a predefined class), and returns
 * MPI_SUCCESS; a duplicate inherits the handler. */
#include "common.h"

static int seen_code = -1, calls;
static MPI_Comm seen_comm;

static void handler(MPI_Comm *comm, int *code, ...) {
  seen_comm = *comm;
  seen_code = *code;
  calls++;
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "comm_errhandler");
  MPI_Errhandler eh;
  MPI_OK(MPI_Comm_create_errhandler(handler, &eh));
  MPI_Comm c;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  MPI_OK(MPI_Comm_set_errhandler(c, eh));
  int cls, code;
  MPI_OK(MPI_Add_error_class(&cls));
  MPI_OK(MPI_Add_error_code(cls, &code));
  MPI_OK(MPI_Comm_call_errhandler(c, code));
  CHECK(calls == 1 && seen_code == code && seen_comm == c, "user code: calls %d code %d (wanted %d)", calls,
        seen_code, code);
  MPI_OK(MPI_Comm_call_errhandler(c, MPI_ERR_TAG));
  CHECK(calls == 2 && seen_code == MPI_ERR_TAG, "class: code %d", seen_code);
  MPI_Comm d;
  MPI_OK(MPI_Comm_dup(c, &d));
  MPI_OK(MPI_Comm_call_errhandler(d, code));
  CHECK(calls == 3 && seen_comm == d, "dup inherits the handler: calls %d", calls);
  MPI_OK(MPI_Comm_free(&d));
  MPI_OK(MPI_Comm_free(&c));
  MPI_OK(MPI_Errhandler_free(&eh));
  t_finish();
  return 0;
}
