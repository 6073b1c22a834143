// ranks: 2
/* Flow control of unexpected messages: rank 1 sends 100 000 eager 1 KiB messages to
 * rank 0, which sleeps 2 s before receiving any. The sender must still complete, every
 * message must arrive intact and in order, and rank 0's peak resident memory must grow
 * by less than 64 MiB (crossmpi bounds unexpected data per peer; Open MPI buffers the
 * whole 100 MB, so that one check only reports in peer mode). */
#include "common.h"
#include <stdint.h>
#include <sys/resource.h>

#define NMSG 100000
#define SIZE 1024
#define RSS_BOUND_KIB (64L * 1024)

static long peak_rss_kib(void) {
  struct rusage ru;
  CHECK(getrusage(RUSAGE_SELF, &ru) == 0, "getrusage failed");
  return ru.ru_maxrss;
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "flood");
  CHECK(t_size == 2, "needs 2 ranks, got %d", t_size);
  unsigned char buf[SIZE];
  if (t_rank == 1) {
    double t0 = MPI_Wtime();
    for (uint64_t i = 0; i < NMSG; i++) {
      t_fill(buf + sizeof i, SIZE - sizeof i, (unsigned)i);
      memcpy(buf, &i, sizeof i);
      MPI_OK(MPI_Send(buf, SIZE, MPI_BYTE, 0, 3, MPI_COMM_WORLD));
    }
    double elapsed = MPI_Wtime() - t0;
    MPI_OK(MPI_Send(&elapsed, 1, MPI_DOUBLE, 0, 4, t_ctl));
  } else {
    long before = peak_rss_kib();
    t_sleep_ms(2000);
    for (uint64_t i = 0; i < NMSG; i++) {
      MPI_Status st;
      uint64_t seq;
      MPI_OK(MPI_Recv(buf, SIZE, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &st));
      CHECK(t_count(&st, MPI_BYTE) == SIZE, "message %llu: count %d", (unsigned long long)i, t_count(&st, MPI_BYTE));
      memcpy(&seq, buf, sizeof seq);
      CHECK(seq == i, "message %llu arrived when %llu was due (order)", (unsigned long long)seq,
            (unsigned long long)i);
      long bad = t_verify(buf + sizeof seq, SIZE - sizeof seq, (unsigned)i);
      CHECK(bad < 0, "message %llu: wrong data at byte %ld", (unsigned long long)i, bad + (long)sizeof seq);
    }
    double send_time;
    MPI_OK(MPI_Recv(&send_time, 1, MPI_DOUBLE, 1, 4, t_ctl, MPI_STATUS_IGNORE));
    long grown = peak_rss_kib() - before;
    fprintf(stderr, "flood: sender took %.2f s, receiver's peak RSS grew by %.1f MiB\n", send_time, grown / 1024.0);
    CHECK_CROSSMPI(grown < RSS_BOUND_KIB, "receiver's peak RSS grew by %ld KiB, bound %ld KiB", grown,
                   RSS_BOUND_KIB);
  }
  t_finish();
  return 0;
}
