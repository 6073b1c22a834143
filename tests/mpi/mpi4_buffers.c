// ranks: 2 4
/* MPI 4.1 buffered-mode buffers: a communicator's own buffer serves its Bsends (the
 * process has none attached, so a Bsend anywhere else fails with MPI_ERR_BUFFER), and
 * Bsend_init on it too; MPI_Comm_flush_buffer and MPI_Comm_iflush_buffer complete only
 * once the buffered messages are received; MPI_BUFFER_AUTOMATIC for the process buffer
 * (detach reports MPI_BUFFER_AUTOMATIC); MPI_Buffer_flush/iflush; a session's buffer
 * serves communicators made from its process set's group. Receivers post late, so the
 * buffered messages (128 KiB, beyond eager) are really pending during the flushes. */
#include "common.h"

#define N (128 * 1024)

static void exchange_late(MPI_Comm comm, int tag, char *out, char *in, int flush_kind, MPI_Session s) {
  int rank, size;
  MPI_OK(MPI_Comm_rank(comm, &rank));
  MPI_OK(MPI_Comm_size(comm, &size));
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  t_fill(out, N, (unsigned)(rank + tag));
  MPI_OK(MPI_Bsend(out, N, MPI_BYTE, right, tag, comm));
  memset(out, 0, N); /* buffered: the send no longer needs it */
  MPI_Request fl = MPI_REQUEST_NULL;
  int flag = 1;
  if (flush_kind == 1) MPI_OK(MPI_Comm_iflush_buffer(comm, &fl));
  if (flush_kind == 2) MPI_OK(MPI_Buffer_iflush(&fl));
  if (flush_kind == 3) MPI_OK(MPI_Session_iflush_buffer(s, &fl));
  if (fl != MPI_REQUEST_NULL) {
    t_sleep_ms(20);
    MPI_OK(MPI_Test(&fl, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "iflush (kind %d) complete before anyone received", flush_kind);
  }
  MPI_OK(MPI_Barrier(comm)); /* every Bsend is out before anyone receives */
  MPI_OK(MPI_Recv(in, N, MPI_BYTE, left, tag, comm, MPI_STATUS_IGNORE));
  CHECK_PATTERN(in, N, (unsigned)(left + tag), "buffered message on tag %d", tag);
  if (fl != MPI_REQUEST_NULL) MPI_OK(MPI_Wait(&fl, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "mpi4_buffers");
  char *out = t_alloc(N), *in = t_alloc(N);
  int size = N + MPI_BSEND_OVERHEAD;
  char *cb = t_alloc((size_t)size);
  MPI_Comm c;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  MPI_OK(MPI_Comm_attach_buffer(c, cb, size));

  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
  int cls = -1;
  MPI_Error_class(MPI_Bsend(out, 1, MPI_BYTE, 0, 1, MPI_COMM_WORLD), &cls);
  CHECK(cls == MPI_ERR_BUFFER, "Bsend on MPI_COMM_WORLD without a buffer: class %d", cls);
  MPI_Error_class(MPI_Comm_attach_buffer(c, cb, size), &cls);
  CHECK(cls == MPI_ERR_BUFFER, "second attach: class %d", cls);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  MPI_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL));

  exchange_late(c, 1, out, in, 1, MPI_SESSION_NULL);
  exchange_late(c, 2, out, in, 0, MPI_SESSION_NULL);
  MPI_OK(MPI_Comm_flush_buffer(c));

  /* persistent buffered send on the communicator */
  int rank = t_rank, right = (rank + 1) % t_size, left = (rank + t_size - 1) % t_size;
  MPI_Request r;
  MPI_OK(MPI_Bsend_init(out, 16, MPI_BYTE, right, 5, c, &r));
  for (int k = 0; k < 3; k++) {
    memset(out, 'a' + k, 16);
    MPI_OK(MPI_Start(&r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Recv(in, 16, MPI_BYTE, left, 5, c, MPI_STATUS_IGNORE));
    CHECK(in[0] == 'a' + k && in[15] == 'a' + k, "persistent bsend round %d", k);
  }
  MPI_OK(MPI_Request_free(&r));

  void *addr;
  int got;
  MPI_OK(MPI_Comm_detach_buffer(c, &addr, &got));
  CHECK(addr == cb && got == size, "Comm_detach_buffer returned %p/%d", addr, got);

  /* automatic process buffer */
  MPI_OK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
  exchange_late(MPI_COMM_WORLD, 3, out, in, 2, MPI_SESSION_NULL);
  exchange_late(MPI_COMM_WORLD, 4, out, in, 0, MPI_SESSION_NULL);
  MPI_OK(MPI_Buffer_flush());
  MPI_Count gotc;
  MPI_OK(MPI_Buffer_detach_c(&addr, &gotc));
  CHECK(addr == MPI_BUFFER_AUTOMATIC, "automatic detach returned %p", addr);

  /* a session's buffer */
  MPI_Session s;
  MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &s));
  MPI_Group g;
  MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
  MPI_Comm sc;
  MPI_OK(MPI_Comm_create_from_group(g, "buffers", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &sc));
  MPI_OK(MPI_Session_attach_buffer_c(s, cb, size));
  exchange_late(sc, 6, out, in, 3, s);
  MPI_OK(MPI_Session_flush_buffer(s));
  MPI_Count sz;
  MPI_OK(MPI_Session_detach_buffer_c(s, &addr, &sz));
  CHECK(addr == cb && sz == size, "Session_detach_buffer_c returned %p/%lld", addr, (long long)sz);
  MPI_OK(MPI_Comm_free(&sc));
  MPI_OK(MPI_Group_free(&g));
  MPI_OK(MPI_Session_finalize(&s));
  MPI_OK(MPI_Comm_free(&c));
  free(cb);
  free(out);
  free(in);
  t_finish();
  return 0;
}
