// ranks: 2 4
/* MPI_Cancel: a posted receive is always cancellable (MPI_Test_cancelled true, the
 * next message goes to the next receive); an unmatched send, eager or large,
 * standard or synchronous, is cancelled and never received; a send whose message was
 * already received cannot be cancelled. Ranks work in pairs (0-1, 2-3). */
#include "common.h"

#define BIG (1 << 20)

int main(int argc, char **argv) {
  t_init(&argc, &argv, "cancel");
  CHECK(t_size % 2 == 0, "needs an even number of ranks, got %d", t_size);
  int partner = t_rank ^ 1, even = (t_rank & 1) == 0;
  char *buf = t_alloc(BIG), *rbuf = t_alloc(BIG);
  MPI_Request req;
  MPI_Status st;
  int cancelled = -1, flag = 0, v = -1;

  /* a posted receive */
  MPI_OK(MPI_Irecv(&v, 1, MPI_INT, partner, 60, MPI_COMM_WORLD, &req));
  MPI_OK(MPI_Cancel(&req));
  MPI_OK(MPI_Wait(&req, &st));
  MPI_OK(MPI_Test_cancelled(&st, &cancelled));
  CHECK(cancelled, "a posted, unmatched receive was not cancelled");
  CHECK(req == MPI_REQUEST_NULL, "MPI_Wait on a cancelled receive did not free it");
  t_barrier();
  int out = 1000 + t_rank;
  MPI_OK(MPI_Send(&out, 1, MPI_INT, partner, 60, MPI_COMM_WORLD));
  MPI_OK(MPI_Recv(&v, 1, MPI_INT, partner, 60, MPI_COMM_WORLD, &st));
  CHECK(v == 1000 + partner, "after a cancelled receive, the next receive got %d, expected %d", v, 1000 + partner);
  MPI_OK(MPI_Test_cancelled(&st, &cancelled));
  CHECK(!cancelled, "MPI_Test_cancelled true for a completed receive");

  /* unmatched sends: standard and synchronous, eager and large */
  static const int sizes[2] = {8, BIG};
  for (int sync = 0; sync < 2; sync++)
    for (int s = 0; s < 2; s++) {
      int n = sizes[s], tag = 61 + sync * 2 + s;
      unsigned first = (unsigned)(10 + tag), second = (unsigned)(20 + tag);
      if (even) {
        t_fill(buf, (size_t)n, first);
        if (sync) MPI_OK(MPI_Issend(buf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &req));
        else MPI_OK(MPI_Isend(buf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Cancel(&req));
        if (t_peer()) { /* a peer that cannot cancel sends would block in MPI_Wait */
          flag = 0;
          double t0 = MPI_Wtime();
          while (!flag && MPI_Wtime() - t0 < 0.5) MPI_OK(MPI_Test(&req, &flag, &st));
        }
        if (req == MPI_REQUEST_NULL) {
          MPI_OK(MPI_Test_cancelled(&st, &cancelled));
        } else if (t_peer()) {
          cancelled = 0;
        } else { /* MPI_Wait on a send marked for cancellation must return */
          MPI_OK(MPI_Wait(&req, &st));
          MPI_OK(MPI_Test_cancelled(&st, &cancelled));
        }
        CHECK_CROSSMPI(cancelled, "%s send of %d bytes to a rank that has not posted was not cancelled",
                       sync ? "synchronous" : "standard", n);
        MPI_OK(MPI_Send(&cancelled, 1, MPI_INT, partner, 1, t_ctl));
        if (req != MPI_REQUEST_NULL) MPI_OK(MPI_Wait(&req, &st)); /* peer only: it was not cancelled */
        /* the next message only once the receiver has looked for the cancelled one */
        MPI_OK(MPI_Recv(&flag, 1, MPI_INT, partner, 5, t_ctl, MPI_STATUS_IGNORE));
        t_fill(buf, (size_t)n, second);
        MPI_OK(MPI_Send(buf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD));
      } else {
        MPI_OK(MPI_Recv(&cancelled, 1, MPI_INT, partner, 1, t_ctl, MPI_STATUS_IGNORE));
        if (cancelled) {
          double t0 = MPI_Wtime();
          while (MPI_Wtime() - t0 < 0.05) { /* the cancelled message must never show up */
            MPI_OK(MPI_Iprobe(partner, tag, MPI_COMM_WORLD, &flag, &st));
            CHECK(!flag, "a cancelled send of %d bytes is visible to MPI_Iprobe (%d bytes)", n, t_count(&st, MPI_BYTE));
          }
        } else {
          MPI_OK(MPI_Recv(rbuf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &st));
          CHECK_PATTERN(rbuf, (size_t)n, first, "uncancelled send");
        }
        MPI_OK(MPI_Send(&flag, 1, MPI_INT, partner, 5, t_ctl));
        MPI_OK(MPI_Recv(rbuf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &st));
        CHECK_STATUS(st, partner, tag, n);
        long bad = t_verify(rbuf, (size_t)n, second);
        CHECK(bad < 0, "%s: got the cancelled message (or wrong data at byte %ld) instead of the next one",
              cancelled ? "after a cancelled send" : "second send", bad);
      }
    }
  t_barrier();

  /* a send whose message was received cannot be cancelled */
  for (int s = 0; s < 2; s++) {
    int n = sizes[s], tag = 70 + s;
    if (even) {
      t_fill(buf, (size_t)n, 90);
      MPI_OK(MPI_Isend(buf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &req));
      MPI_OK(MPI_Recv(&v, 1, MPI_INT, partner, 2, t_ctl, MPI_STATUS_IGNORE)); /* received */
      MPI_OK(MPI_Cancel(&req));
      MPI_OK(MPI_Wait(&req, &st));
      MPI_OK(MPI_Test_cancelled(&st, &cancelled));
      CHECK(!cancelled, "a send of %d bytes was cancelled after its receive completed", n);
    } else {
      MPI_OK(MPI_Recv(rbuf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &st));
      CHECK_PATTERN(rbuf, (size_t)n, 90, "received send");
      MPI_OK(MPI_Send(&v, 1, MPI_INT, partner, 2, t_ctl));
    }
  }
  free(buf);
  free(rbuf);
  t_finish();
  return 0;
}
