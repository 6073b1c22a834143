// ranks: 2 4 8
/* Context ids stay collision-free under many dup/split/free cycles: each cycle creates
 * communicators while messages are in flight on older ones (sent before the creation,
 * received after it, with the same tag on every communicator), checks every message
 * arrives on the communicator it was sent on, and frees them in a different order.
 * Creation alternates dup, split (one color, two colors) and create_group. Then three
 * threads create and use communicators at once (MPI_THREAD_MULTIPLE), each on its own
 * parent. */
#include "common.h"
#include <pthread.h>

#define CYCLES 1500
#define LIVE 4

static void post(MPI_Comm c, int value, MPI_Request *sr, MPI_Request *rr, int *in) {
  int r, n;
  MPI_OK(MPI_Comm_rank(c, &r));
  MPI_OK(MPI_Comm_size(c, &n));
  MPI_OK(MPI_Irecv(in, 1, MPI_INT, (r + n - 1) % n, 0, c, rr));
  MPI_OK(MPI_Isend(&value, 1, MPI_INT, (r + 1) % n, 0, c, sr));
}

static void cycles(MPI_Comm parent, int count, int seed) {
  MPI_Comm live[LIVE];
  int values[LIVE], in[LIVE];
  MPI_Request sr[LIVE], rr[LIVE];
  for (int i = 0; i < LIVE; i++) live[i] = MPI_COMM_NULL;
  for (int cyc = 0; cyc < count; cyc++) {
    int slot = cyc % LIVE;
    if (live[slot] != MPI_COMM_NULL) {
      /* complete the traffic posted LIVE cycles ago, after newer communicators exist */
      MPI_OK(MPI_Wait(&rr[slot], MPI_STATUS_IGNORE));
      MPI_OK(MPI_Wait(&sr[slot], MPI_STATUS_IGNORE));
      CHECK(in[slot] == values[slot], "cycle %d: message crossed communicators: %d != %d", cyc, in[slot],
            values[slot]);
      MPI_OK(MPI_Comm_free(&live[slot]));
    }
    int r;
    MPI_OK(MPI_Comm_rank(parent, &r));
    if (cyc % 4 == 0)
      MPI_OK(MPI_Comm_dup(parent, &live[slot]));
    else if (cyc % 4 == 1)
      MPI_OK(MPI_Comm_split(parent, 0, -r, &live[slot]));
    else if (cyc % 4 == 2)
      MPI_OK(MPI_Comm_split(parent, r % 2, r, &live[slot]));
    else {
      MPI_Group g;
      MPI_OK(MPI_Comm_group(parent, &g));
      MPI_OK(MPI_Comm_create_group(parent, g, cyc, &live[slot]));
      MPI_OK(MPI_Group_free(&g));
    }
    /* every rank in a communicator sends the same value, so the receiver knows it */
    values[slot] = seed * 1000000 + cyc;
    post(live[slot], values[slot], &sr[slot], &rr[slot], &in[slot]);
  }
  for (int i = 0; i < LIVE; i++) {
    int slot = (count + i) % LIVE;
    if (live[slot] == MPI_COMM_NULL) continue;
    MPI_OK(MPI_Wait(&rr[slot], MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&sr[slot], MPI_STATUS_IGNORE));
    CHECK(in[slot] == values[slot], "drain: %d != %d", in[slot], values[slot]);
    MPI_OK(MPI_Comm_free(&live[slot]));
  }
}

struct job { MPI_Comm parent; int seed; };

static void *thread_main(void *arg) {
  struct job *j = arg;
  cycles(j->parent, CYCLES / 5, j->seed);
  return NULL;
}

int main(int argc, char **argv) {
  int provided;
  t_name = "comm_stress";
  MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  t_setup("comm_stress");
  cycles(MPI_COMM_WORLD, CYCLES, 1);

  if (provided == MPI_THREAD_MULTIPLE) {
    enum { THREADS = 3 };
    MPI_Comm parents[THREADS];
    struct job jobs[THREADS];
    pthread_t tids[THREADS];
    for (int i = 0; i < THREADS; i++) {
      MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &parents[i]));
      jobs[i] = (struct job){parents[i], 2 + i};
    }
    for (int i = 0; i < THREADS; i++) pthread_create(&tids[i], NULL, thread_main, &jobs[i]);
    for (int i = 0; i < THREADS; i++) pthread_join(tids[i], NULL);
    for (int i = 0; i < THREADS; i++) MPI_OK(MPI_Comm_free(&parents[i]));
  } else {
    CHECK_CROSSMPI(0, "MPI_THREAD_MULTIPLE provided");
  }
  t_finish();
  return 0;
}
