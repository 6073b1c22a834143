// ranks: 1 2 4
/* The Wait/Test family on arrays that mix active requests and MPI_REQUEST_NULL:
 * Wait, Waitall, Waitany, Waitsome, Test, Testall, Testany, Testsome; an incomplete
 * receive tests false; all-null arrays give MPI_UNDEFINED (index/outcount) and empty
 * statuses; MPI_STATUSES_IGNORE. Each rank receives from the previous rank in a
 * ring (itself with 1 rank). */
#include "common.h"

#define N 6 /* entries 1, 3, 4 active, 0, 2, 5 MPI_REQUEST_NULL */
static const int active[3] = {1, 3, 4};
static int to, from;
static int rvals[N], svals[3];
static MPI_Request sreq[3];

static int tag_of(int idx) { return idx == 1 ? 1 : idx == 3 ? 2 : 3; }

static void check_empty(const MPI_Status *st, const char *what) {
  CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG,
        "%s: status source %d tag %d, expected the empty status", what, st->MPI_SOURCE, st->MPI_TAG);
  CHECK(t_count(st, MPI_INT) == 0, "%s: empty status count %d", what, t_count(st, MPI_INT));
}

/* Posts the receives and starts the matching sends of one round. */
static void post(MPI_Request reqs[N], int round) {
  for (int i = 0; i < N; i++) reqs[i] = MPI_REQUEST_NULL;
  for (int k = 0; k < 3; k++) {
    rvals[active[k]] = -1;
    MPI_OK(MPI_Irecv(&rvals[active[k]], 1, MPI_INT, from, tag_of(active[k]), MPI_COMM_WORLD, &reqs[active[k]]));
  }
  for (int k = 0; k < 3; k++) {
    svals[k] = round * 1000 + t_rank * 10 + k + 1;
    MPI_OK(MPI_Isend(&svals[k], 1, MPI_INT, to, k + 1, MPI_COMM_WORLD, &sreq[k]));
  }
}

/* Checks the value and status of completed entry idx and ends the round's sends. */
static void check_done(int idx, const MPI_Status *st, int round) {
  CHECK(idx == 1 || idx == 3 || idx == 4, "completed index %d is a MPI_REQUEST_NULL entry", idx);
  int tag = tag_of(idx);
  CHECK(rvals[idx] == round * 1000 + from * 10 + tag, "entry %d: got %d, expected %d", idx, rvals[idx],
        round * 1000 + from * 10 + tag);
  if (st != NULL) CHECK_STATUS(*st, from, tag, (int)sizeof(int));
}

static void all_null(MPI_Request reqs[N], int expect_null_handles) {
  for (int i = 0; i < N; i++)
    if (expect_null_handles) CHECK(reqs[i] == MPI_REQUEST_NULL, "entry %d not set to MPI_REQUEST_NULL", i);
}

/* Calls MPI_Waitsome or MPI_Testsome (same signature) on a freshly posted round until
 * it answers MPI_UNDEFINED; every active entry must complete exactly once. A Wait
 * variant completes at least one request per call; a Test variant may complete none. */
typedef int some_fn(int, MPI_Request[], int *, int[], MPI_Status[]);
static void drain_some(some_fn *fn, const char *name, int waits, MPI_Request reqs[N], int round) {
  MPI_Status sts[N];
  int outcount = 0, indices[N], seen = 0;
  post(reqs, round);
  for (;;) {
    MPI_OK(fn(N, reqs, &outcount, indices, waits ? sts : MPI_STATUSES_IGNORE));
    if (outcount == MPI_UNDEFINED) break;
    CHECK(outcount >= (waits ? 1 : 0) && outcount <= 3, "%s outcount %d", name, outcount);
    for (int k = 0; k < outcount; k++) {
      CHECK(!(seen & (1 << indices[k])), "%s returned index %d twice", name, indices[k]);
      seen |= 1 << indices[k];
      check_done(indices[k], waits ? &sts[k] : NULL, round);
    }
  }
  CHECK(seen == ((1 << 1) | (1 << 3) | (1 << 4)), "%s completed set 0x%x", name, seen);
  MPI_OK(MPI_Waitall(3, sreq, MPI_STATUSES_IGNORE));
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "waittest");
  to = (t_rank + 1) % t_size;
  from = (t_rank + t_size - 1) % t_size;
  MPI_Request reqs[N], r;
  MPI_Status sts[N], st;
  int flag = 1, idx = 0, outcount = 0, indices[N], round = 0;

  /* an unmatched receive tests false with every Test variant */
  int v = -1, go = 0;
  MPI_Request ctl;
  MPI_OK(MPI_Irecv(&v, 1, MPI_INT, from, 50, MPI_COMM_WORLD, &r));
  MPI_OK(MPI_Test(&r, &flag, &st));
  CHECK(!flag, "MPI_Test: pending receive reported complete");
  MPI_OK(MPI_Testall(1, &r, &flag, MPI_STATUSES_IGNORE));
  CHECK(!flag, "MPI_Testall: pending receive reported complete");
  MPI_OK(MPI_Testany(1, &r, &idx, &flag, &st));
  CHECK(!flag && idx == MPI_UNDEFINED, "MPI_Testany on pending: flag %d index %d", flag, idx);
  MPI_OK(MPI_Testsome(1, &r, &outcount, indices, sts));
  CHECK(outcount == 0, "MPI_Testsome on pending: outcount %d", outcount);
  CHECK(r != MPI_REQUEST_NULL, "a pending request became MPI_REQUEST_NULL");
  MPI_OK(MPI_Isend(&go, 1, MPI_INT, from, 51, t_ctl, &ctl)); /* "you may send now" */
  MPI_OK(MPI_Recv(&go, 1, MPI_INT, to, 51, t_ctl, MPI_STATUS_IGNORE));
  int val = 777;
  MPI_OK(MPI_Send(&val, 1, MPI_INT, to, 50, MPI_COMM_WORLD));
  MPI_OK(MPI_Wait(&r, &st));
  CHECK(v == 777 && r == MPI_REQUEST_NULL, "MPI_Wait: value %d", v);
  CHECK_STATUS(st, from, 50, (int)sizeof(int));
  MPI_OK(MPI_Wait(&ctl, MPI_STATUS_IGNORE));

  /* single-request calls on MPI_REQUEST_NULL */
  r = MPI_REQUEST_NULL;
  MPI_OK(MPI_Wait(&r, &st));
  check_empty(&st, "MPI_Wait(MPI_REQUEST_NULL)");
  flag = 0;
  MPI_OK(MPI_Test(&r, &flag, &st));
  CHECK(flag, "MPI_Test(MPI_REQUEST_NULL) flag 0");
  check_empty(&st, "MPI_Test(MPI_REQUEST_NULL)");

  /* Waitall with statuses: null entries get empty statuses */
  post(reqs, ++round);
  MPI_OK(MPI_Waitall(N, reqs, sts));
  all_null(reqs, 1);
  for (int i = 0; i < N; i++)
    if (i == 1 || i == 3 || i == 4) check_done(i, &sts[i], round);
    else check_empty(&sts[i], "MPI_Waitall null entry");
  MPI_OK(MPI_Waitall(3, sreq, MPI_STATUSES_IGNORE));

  /* Waitall with MPI_STATUSES_IGNORE, then on an all-null array */
  post(reqs, ++round);
  MPI_OK(MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE));
  all_null(reqs, 1);
  for (int k = 0; k < 3; k++) check_done(active[k], NULL, round);
  MPI_OK(MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE));
  MPI_OK(MPI_Waitall(3, sreq, MPI_STATUSES_IGNORE));

  /* Waitany until MPI_UNDEFINED */
  post(reqs, ++round);
  int seen = 0;
  for (;;) {
    MPI_OK(MPI_Waitany(N, reqs, &idx, &st));
    if (idx == MPI_UNDEFINED) break;
    CHECK(idx >= 0 && idx < N && reqs[idx] == MPI_REQUEST_NULL, "MPI_Waitany index %d", idx);
    CHECK(!(seen & (1 << idx)), "MPI_Waitany returned index %d twice", idx);
    seen |= 1 << idx;
    check_done(idx, &st, round);
  }
  CHECK(seen == ((1 << 1) | (1 << 3) | (1 << 4)), "MPI_Waitany completed set 0x%x", seen);
  check_empty(&st, "MPI_Waitany on all-null");
  MPI_OK(MPI_Waitall(3, sreq, MPI_STATUSES_IGNORE));

  /* Waitsome until MPI_UNDEFINED */
  drain_some(MPI_Waitsome, "MPI_Waitsome", 1, reqs, ++round);

  /* Testall (ignoring statuses) until true */
  post(reqs, ++round);
  flag = 0;
  while (!flag) MPI_OK(MPI_Testall(N, reqs, &flag, MPI_STATUSES_IGNORE));
  all_null(reqs, 1);
  for (int k = 0; k < 3; k++) check_done(active[k], NULL, round);
  MPI_OK(MPI_Testall(N, reqs, &flag, sts));
  CHECK(flag, "MPI_Testall on all-null flag 0");
  MPI_OK(MPI_Waitall(3, sreq, MPI_STATUSES_IGNORE));

  /* Testany until the all-null answer: flag true with MPI_UNDEFINED */
  post(reqs, ++round);
  seen = 0;
  for (;;) {
    flag = 0;
    MPI_OK(MPI_Testany(N, reqs, &idx, &flag, &st));
    if (!flag) {
      CHECK(idx == MPI_UNDEFINED, "MPI_Testany with flag 0 gave index %d", idx);
      continue;
    }
    if (idx == MPI_UNDEFINED) break;
    CHECK(!(seen & (1 << idx)), "MPI_Testany returned index %d twice", idx);
    seen |= 1 << idx;
    check_done(idx, &st, round);
  }
  CHECK(seen == ((1 << 1) | (1 << 3) | (1 << 4)), "MPI_Testany completed set 0x%x", seen);
  check_empty(&st, "MPI_Testany on all-null");
  MPI_OK(MPI_Waitall(3, sreq, MPI_STATUSES_IGNORE));

  /* Testsome (ignoring statuses) until MPI_UNDEFINED */
  drain_some(MPI_Testsome, "MPI_Testsome", 0, reqs, ++round);

  t_finish();
  return 0;
}
