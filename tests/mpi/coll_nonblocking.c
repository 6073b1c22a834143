// ranks: 1 2 3 4 6 8
/* Nonblocking collectives: every one of them, several outstanding at once on one
 * communicator (completed in an order different from their start order), overlapped
 * with computation driven by MPI_Test, and a blocking collective started while
 * nonblocking ones are still in flight. Results are checked like the blocking ones. */
#include "common.h"

static int val(int rank, int i) { return rank * 1000 + i; }

/* Some computation between tests: a short busy loop. */
static volatile double sink;
static void compute(void) {
  double x = 0;
  for (int i = 0; i < 2000; i++) x += i * 0.5;
  sink = x;
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "coll_nonblocking");
  int n = t_size, me = t_rank;
  enum { K = 4, NREQ = 16 };
  MPI_Request rq[NREQ];
  int nr = 0;

  int bc[K], ga[64 * K], gmine[K], sc[K], ag[64 * K], a2s[64 * K], a2r[64 * K];
  int red[K], ared[K], sca[K], exs[K], rsb[K], big_in[64 * K];
  int *counts = t_alloc(sizeof(int) * n), *displs = t_alloc(sizeof(int) * n);
  int gv[64 * 8];
  for (int r = 0; r < n; r++) {
    counts[r] = r % 3;
    displs[r] = r * 3;
  }
  for (int i = 0; i < K; i++) {
    bc[i] = me == 0 ? val(99, i) : -1;
    gmine[i] = val(me, i);
  }
  for (int i = 0; i < n * K; i++) {
    a2s[i] = val(me * 16 + i / K, i % K);
    big_in[i] = val(me, i);
  }
  int root = n - 1;
  int scatter_src[64 * K];
  for (int i = 0; i < n * K; i++) scatter_src[i] = val(i / K + 40, i % K);

  MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &rq[nr++]));
  MPI_OK(MPI_Ibcast(bc, K, MPI_INT, 0, MPI_COMM_WORLD, &rq[nr++]));
  MPI_OK(MPI_Igather(gmine, K, MPI_INT, ga, K, MPI_INT, root, MPI_COMM_WORLD, &rq[nr++]));
  MPI_OK(MPI_Iscatter(scatter_src, K, MPI_INT, sc, K, MPI_INT, root, MPI_COMM_WORLD, &rq[nr++]));
  MPI_OK(MPI_Iallgather(gmine, K, MPI_INT, ag, K, MPI_INT, MPI_COMM_WORLD, &rq[nr++]));
  MPI_OK(MPI_Ialltoall(a2s, K, MPI_INT, a2r, K, MPI_INT, MPI_COMM_WORLD, &rq[nr++]));
  MPI_OK(MPI_Ireduce(gmine, red, K, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &rq[nr++]));
  MPI_OK(MPI_Iallreduce(gmine, ared, K, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq[nr++]));
  MPI_OK(MPI_Iscan(gmine, sca, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[nr++]));
  MPI_OK(MPI_Iexscan(gmine, exs, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[nr++]));
  MPI_OK(MPI_Ireduce_scatter_block(big_in, rsb, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[nr++]));
  int mine_v[2] = {val(me, 0), val(me, 1)};
  MPI_OK(MPI_Iallgatherv(mine_v, me % 3, MPI_INT, gv, counts, displs, MPI_INT, MPI_COMM_WORLD, &rq[nr++]));

  /* A blocking collective while all of those are in flight. */
  int x = me, xs = 0;
  MPI_OK(MPI_Allreduce(&x, &xs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK(xs == n * (n - 1) / 2, "blocking allreduce amid nonblocking ones: %d", xs);

  /* Complete them in reverse order, computing between tests. */
  for (int i = nr - 1; i >= 0; i--) {
    int done = 0;
    while (!done) {
      compute();
      MPI_OK(MPI_Test(&rq[i], &done, MPI_STATUS_IGNORE));
    }
    CHECK(rq[i] == MPI_REQUEST_NULL, "completed request %d not freed", i);
  }

  long rsum = 0;
  for (int r = 0; r < n; r++) rsum += r * 1000;
  for (int i = 0; i < K; i++) {
    CHECK(bc[i] == val(99, i), "ibcast [%d]", i);
    CHECK(sc[i] == val(me + 40, i), "iscatter [%d]", i);
    CHECK(red[i] == rsum + n * i || me != 0, "ireduce [%d] = %d", i, red[i]);
    CHECK(ared[i] == val(n - 1, i), "iallreduce [%d]", i);
    long s = 0;
    for (int r = 0; r <= me; r++) s += val(r, i);
    CHECK(sca[i] == s, "iscan [%d]", i);
    CHECK(me == 0 || exs[i] == s - val(me, i), "iexscan [%d]", i);
    CHECK(rsb[i] == rsum + n * (me * K + i), "ireduce_scatter_block [%d]", i);
  }
  for (int r = 0; r < n; r++)
    for (int i = 0; i < K; i++) {
      CHECK(me != root || ga[r * K + i] == val(r, i), "igather from %d", r);
      CHECK(ag[r * K + i] == val(r, i), "iallgather from %d", r);
      CHECK(a2r[r * K + i] == val(r * 16 + me, i), "ialltoall from %d", r);
    }
  for (int r = 0; r < n; r++)
    for (int i = 0; i < counts[r]; i++) CHECK(gv[displs[r] + i] == val(r, i), "iallgatherv from %d", r);

  /* Many outstanding on one communicator, waited with Waitall; then large ones. */
  enum { M = 12 };
  MPI_Request many[M];
  int v[M], s[M];
  for (int j = 0; j < M; j++) {
    v[j] = me * (j + 1);
    MPI_OK(MPI_Iallreduce(&v[j], &s[j], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &many[j]));
  }
  MPI_OK(MPI_Waitall(M, many, MPI_STATUSES_IGNORE));
  for (int j = 0; j < M; j++) CHECK(s[j] == (j + 1) * n * (n - 1) / 2, "iallreduce %d = %d", j, s[j]);

  int big = 200000;
  int *b1 = t_alloc(sizeof(int) * big), *b2 = t_alloc(sizeof(int) * big);
  for (int i = 0; i < big; i++) b1[i] = me == 0 ? i : -1;
  MPI_Request two[2];
  MPI_OK(MPI_Ibcast(b1, big, MPI_INT, 0, MPI_COMM_WORLD, &two[0]));
  int one = 1, tot = 0;
  MPI_OK(MPI_Iallreduce(&one, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &two[1]));
  int idx = -1;
  MPI_OK(MPI_Waitany(2, two, &idx, MPI_STATUS_IGNORE));
  CHECK(idx == 0 || idx == 1, "waitany index %d", idx);
  MPI_OK(MPI_Waitall(2, two, MPI_STATUSES_IGNORE));
  CHECK(tot == n, "small iallreduce behind a large ibcast: %d", tot);
  for (int i = 0; i < big; i++) CHECK(b1[i] == i, "large ibcast [%d] = %d", i, b1[i]);
  for (int i = 0; i < big; i++) b1[i] = i + me;
  MPI_OK(MPI_Iallreduce(b1, b2, big, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &two[0]));
  int done = 0, polls = 0;
  while (!done) {
    compute();
    polls++;
    MPI_OK(MPI_Test(&two[0], &done, MPI_STATUS_IGNORE));
  }
  for (int i = 0; i < big; i++) CHECK(b2[i] == n * i + n * (n - 1) / 2, "large iallreduce [%d]", i);
  free(b1);
  free(b2);
  free(counts);
  free(displs);
  t_finish();
  return 0;
}
