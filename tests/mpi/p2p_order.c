// ranks: 2 4
/* Non-overtaking order per (source, tag, communicator): every rank but 0 sends a
 * stream of messages of mixed sizes (eager and rendezvous interleaved) to rank 0 on
 * two duplicated communicators, all started at once; rank 0 receives with specific
 * and wildcard sources and tags, before and after the messages arrive, and each
 * stream must come out in send order. */
#include "common.h"

#define NMSG 24
static const int sizes[] = {8, 70000, 0, 1 << 20, 100, 4096, 300000, 1};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define MAXN (1 << 20)

static int msg_size(int i) { return sizes[i % NSIZES]; }

/* Message i carries its index in the first 4 bytes (when it has room) and a
 * pattern seeded by (source, comm, i). */
static void fill_msg(char *buf, int n, int src, int c, int i) {
  t_fill(buf, (size_t)n, (unsigned)(src * 10000 + c * 1000 + i));
}

static void check_msg(const char *buf, const MPI_Status *st, int src, int c, int i, int tag) {
  int n = msg_size(i);
  CHECK_STATUS(*st, src, tag, n);
  long bad = t_verify(buf, (size_t)n, (unsigned)(src * 10000 + c * 1000 + i));
  CHECK(bad < 0, "comm %d from %d: message %d (%d bytes) has wrong data at byte %ld: overtaken?", c, src, i, n, bad);
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "p2p_order");
  MPI_Comm comm[2];
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm[0]));
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm[1]));
  int tag = 5;

  for (int phase = 0; phase < 2; phase++) { /* 0: receives posted late, 1: early */
    if (t_rank != 0) {
      char *bufs[2][NMSG];
      MPI_Request reqs[2 * NMSG];
      if (phase == 1) MPI_OK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 9, t_ctl, MPI_STATUS_IGNORE));
      for (int i = 0; i < NMSG; i++)
        for (int c = 0; c < 2; c++) {
          bufs[c][i] = t_alloc((size_t)msg_size(i));
          fill_msg(bufs[c][i], msg_size(i), t_rank, c, i);
          MPI_OK(MPI_Isend(bufs[c][i], msg_size(i), MPI_BYTE, 0, tag, comm[c], &reqs[2 * i + c]));
        }
      if (phase == 0) MPI_OK(MPI_Send(NULL, 0, MPI_BYTE, 0, 8, t_ctl));
      MPI_OK(MPI_Waitall(2 * NMSG, reqs, MPI_STATUSES_IGNORE));
      for (int i = 0; i < NMSG; i++)
        for (int c = 0; c < 2; c++) free(bufs[c][i]);
    } else {
      int nsrc = t_size - 1;
      char *buf = t_alloc(MAXN);
      if (phase == 0) {
        /* all sends started: comm 1 drained first, by specific source, then comm 0 by
         * MPI_ANY_SOURCE + MPI_ANY_TAG; per-source order must hold in both */
        for (int r = 1; r < t_size; r++) MPI_OK(MPI_Recv(NULL, 0, MPI_BYTE, r, 8, t_ctl, MPI_STATUS_IGNORE));
        for (int r = 1; r < t_size; r++)
          for (int i = 0; i < NMSG; i++) {
            MPI_Status st;
            MPI_OK(MPI_Recv(buf, MAXN, MPI_BYTE, r, tag, comm[1], &st));
            check_msg(buf, &st, r, 1, i, tag);
          }
        int *next = calloc((size_t)t_size, sizeof *next);
        for (int k = 0; k < nsrc * NMSG; k++) {
          MPI_Status st;
          MPI_OK(MPI_Recv(buf, MAXN, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm[0], &st));
          CHECK(st.MPI_SOURCE >= 1 && st.MPI_SOURCE < t_size, "bad source %d", st.MPI_SOURCE);
          check_msg(buf, &st, st.MPI_SOURCE, 0, next[st.MPI_SOURCE]++, tag);
        }
        free(next);
      } else {
        /* every receive posted before any send starts, alternating comms */
        char *rb[2][NMSG];
        MPI_Request reqs[2 * NMSG];
        MPI_Status sts[2 * NMSG];
        for (int r = 1; r < t_size; r++) {
          for (int i = 0; i < NMSG; i++)
            for (int c = 0; c < 2; c++) {
              rb[c][i] = t_alloc(MAXN);
              MPI_OK(MPI_Irecv(rb[c][i], MAXN, MPI_BYTE, r, c ? MPI_ANY_TAG : tag, comm[c], &reqs[2 * i + c]));
            }
          MPI_OK(MPI_Send(NULL, 0, MPI_BYTE, r, 9, t_ctl));
          MPI_OK(MPI_Waitall(2 * NMSG, reqs, sts));
          for (int i = 0; i < NMSG; i++)
            for (int c = 0; c < 2; c++) {
              check_msg(rb[c][i], &sts[2 * i + c], r, c, i, tag);
              free(rb[c][i]);
            }
        }
      }
      free(buf);
    }
    t_barrier();
  }
  MPI_OK(MPI_Comm_free(&comm[0]));
  MPI_OK(MPI_Comm_free(&comm[1]));
  t_finish();
  return 0;
}
