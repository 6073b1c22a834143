// ranks: 1 2 4
/* One-sided communication, the core subset: windows made by MPI_Win_create and
 * MPI_Win_allocate; put, get, accumulate, get_accumulate, fetch_and_op and
 * compare_and_swap under fence; passive target with exclusive and shared locks,
 * lock_all and flush; request-based Rput/Rget; a derived origin datatype; the
 * predefined window attributes; an out-of-range access reported to the window's
 * error handler. Every value read back is checked. */
#include "common.h"

#define N 64

int main(int argc, char **argv) {
  t_init(&argc, &argv, "rma_basic");
  int me = t_rank, n = t_size;
  int right = (me + 1) % n, left = (me + n - 1) % n;

  /* ---- MPI_Win_create + fence: put to the right neighbour, get from the left. */
  int *mem = calloc(N, sizeof(int));
  MPI_Win win;
  MPI_OK(MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  int src[N];
  for (int i = 0; i < N; i++) src[i] = me * 1000 + i;
  MPI_OK(MPI_Win_fence(0, win));
  MPI_OK(MPI_Put(src, N, MPI_INT, right, 0, N, MPI_INT, win));
  MPI_OK(MPI_Win_fence(0, win));
  for (int i = 0; i < N; i++) CHECK(mem[i] == left * 1000 + i, "put: mem[%d] = %d, expected %d", i, mem[i], left * 1000 + i);
  int got[N];
  MPI_OK(MPI_Get(got, N / 2, MPI_INT, left, N / 2, N / 2, MPI_INT, win));
  MPI_OK(MPI_Win_fence(0, win));
  /* left's memory holds what left's left put there. */
  int ll = (left + n - 1) % n;
  for (int i = 0; i < N / 2; i++) CHECK(got[i] == ll * 1000 + N / 2 + i, "get: got[%d] = %d", i, got[i]);

  /* ---- accumulate: everyone adds (rank+1) to every element of rank 0. */
  for (int i = 0; i < N; i++) src[i] = me + 1;
  MPI_OK(MPI_Win_fence(0, win));
  if (me == 0) for (int i = 0; i < N; i++) mem[i] = 0;
  MPI_OK(MPI_Win_fence(0, win));
  MPI_OK(MPI_Accumulate(src, N, MPI_INT, 0, 0, N, MPI_INT, MPI_SUM, win));
  MPI_OK(MPI_Win_fence(0, win));
  if (me == 0)
    for (int i = 0; i < N; i++) CHECK(mem[i] == n * (n + 1) / 2, "accumulate: mem[%d] = %d, expected %d", i, mem[i], n * (n + 1) / 2);
  MPI_OK(MPI_Win_free(&win));
  CHECK(win == MPI_WIN_NULL, "MPI_Win_free sets the handle to MPI_WIN_NULL");

  /* ---- MPI_Win_allocate + locks: a counter at rank 0 incremented by fetch_and_op. */
  long *cnt;
  MPI_Win cw;
  MPI_OK(MPI_Win_allocate(4 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &cnt, &cw));
  CHECK(cnt != NULL, "allocate gives memory");
  MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, cw));
  for (int i = 0; i < 4; i++) cnt[i] = 0;
  MPI_OK(MPI_Win_unlock(me, cw));
  MPI_Barrier(MPI_COMM_WORLD);
  enum { ROUNDS = 20 };
  long one = 1, seen[ROUNDS];
  for (int r = 0; r < ROUNDS; r++) {
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, cw));
    MPI_OK(MPI_Fetch_and_op(&one, &seen[r], MPI_LONG, 0, 0, MPI_SUM, cw));
    MPI_OK(MPI_Win_unlock(0, cw));
  }
  for (int r = 1; r < ROUNDS; r++) CHECK(seen[r] > seen[r - 1], "fetch_and_op values grow: %ld then %ld", seen[r - 1], seen[r]);
  /* compare_and_swap: exactly one rank wins slot 1. */
  long zero = 0, mine = me + 1, old = -1;
  MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, cw));
  MPI_OK(MPI_Compare_and_swap(&mine, &zero, &old, MPI_LONG, 0, 1, cw));
  MPI_OK(MPI_Win_unlock(0, cw));
  int won = old == 0, winners = 0;
  MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(winners == 1, "compare_and_swap: %d winners", winners);
  if (me == 0) {
    CHECK(cnt[0] == (long)n * ROUNDS, "counter = %ld, expected %ld", cnt[0], (long)n * ROUNDS);
    CHECK(cnt[1] >= 1 && cnt[1] <= n, "swapped value %ld", cnt[1]);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* ---- lock_all + get_accumulate + flush + request-based operations. */
  MPI_OK(MPI_Win_lock_all(0, cw));
  long add = 10, before = -1, back = -1;
  MPI_OK(MPI_Get_accumulate(&add, 1, MPI_LONG, &before, 1, MPI_LONG, right, 2, 1, MPI_LONG, MPI_SUM, cw));
  MPI_OK(MPI_Win_flush(right, cw));
  CHECK(before >= 0 && before % 10 == 0, "get_accumulate fetched %ld", before);
  MPI_Request rq[2];
  long val = 1000 + me;
  MPI_OK(MPI_Rput(&val, 1, MPI_LONG, me, 3, 1, MPI_LONG, cw, &rq[0]));
  MPI_OK(MPI_Waitall(1, rq, MPI_STATUSES_IGNORE));
  MPI_OK(MPI_Rget(&back, 1, MPI_LONG, me, 3, 1, MPI_LONG, cw, &rq[1]));
  MPI_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
  CHECK(back == 1000 + me, "rput then rget on self: %ld", back);
  MPI_OK(MPI_Win_flush_all(cw));
  MPI_OK(MPI_Win_unlock_all(cw));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(cnt[2] == 10, "rank %d slot 2 got one get_accumulate of 10: %ld", me, cnt[2]);

  /* ---- predefined attributes. */
  void *base;
  MPI_Aint *size;
  int *unit, *flavor, *model, flag;
  MPI_OK(MPI_Win_get_attr(cw, MPI_WIN_BASE, &base, &flag));
  CHECK(flag && base == cnt, "MPI_WIN_BASE");
  MPI_OK(MPI_Win_get_attr(cw, MPI_WIN_SIZE, &size, &flag));
  CHECK(flag && *size == 4 * (MPI_Aint)sizeof(long), "MPI_WIN_SIZE %ld", (long)*size);
  MPI_OK(MPI_Win_get_attr(cw, MPI_WIN_DISP_UNIT, &unit, &flag));
  CHECK(flag && *unit == sizeof(long), "MPI_WIN_DISP_UNIT");
  MPI_OK(MPI_Win_get_attr(cw, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
  CHECK(flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE, "MPI_WIN_CREATE_FLAVOR");
  MPI_OK(MPI_Win_get_attr(cw, MPI_WIN_MODEL, &model, &flag));
  CHECK(flag && *model == MPI_WIN_UNIFIED, "MPI_WIN_MODEL");

  /* ---- errors go to the window's handler. An access past the window end is
   * erroneous; MPIs need not detect it (Open MPI does not), so only crossmpi is
   * asked. */
  MPI_OK(MPI_Win_set_errhandler(cw, MPI_ERRORS_RETURN));
  if (!t_peer()) {
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, cw));
    int rc = MPI_Put(&val, 1, MPI_LONG, 0, 4, 1, MPI_LONG, cw);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_RANGE, "put past the window end: class %d", cls);
    MPI_OK(MPI_Win_unlock(0, cw));
  }
  MPI_OK(MPI_Win_free(&cw));

  /* ---- a strided origin datatype into a contiguous target. */
  int *tm;
  MPI_Win tw;
  MPI_OK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &tm, &tw));
  MPI_Datatype every2;
  MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every2);
  MPI_Type_commit(&every2);
  int big[N];
  for (int i = 0; i < N; i++) big[i] = me * 100 + i;
  MPI_OK(MPI_Win_fence(0, tw));
  MPI_OK(MPI_Put(big, 1, every2, right, 0, N / 2, MPI_INT, tw));
  MPI_OK(MPI_Win_fence(0, tw));
  for (int i = 0; i < N / 2; i++) CHECK(tm[i] == left * 100 + 2 * i, "vector put: tm[%d] = %d", i, tm[i]);
  /* ---- strided target datatypes (the origin is contiguous): put, get and
   * accumulate, on memory of MPI_Win_allocate and of MPI_Win_create. */
  int *user = calloc(N, sizeof(int));
  MPI_Win uw;
  MPI_OK(MPI_Win_create(user, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &uw));
  MPI_Win both[2] = {tw, uw};
  int *memof[2] = {tm, user};
  for (int k = 0; k < 2; k++) {
    MPI_Win ww = both[k];
    int *m = memof[k];
    int mineN[N / 2], back[N / 2];
    for (int i = 0; i < N / 2; i++) mineN[i] = me * 100 + i;
    MPI_OK(MPI_Win_fence(0, ww));
    for (int i = 0; i < N; i++) m[i] = -1;
    MPI_OK(MPI_Win_fence(0, ww));
    /* every second int of right's window, starting at int 1 */
    MPI_OK(MPI_Put(mineN, N / 2, MPI_INT, right, 1, 1, every2, ww));
    MPI_OK(MPI_Win_fence(0, ww));
    for (int i = 0; i < N; i++) {
      int want = (i % 2 == 1 && i / 2 < N / 2) ? left * 100 + i / 2 : -1;
      CHECK(m[i] == want, "window %d: strided put: m[%d] = %d, expected %d", k, i, m[i], want);
    }
    MPI_OK(MPI_Get(back, N / 2, MPI_INT, left, 1, 1, every2, ww));
    MPI_OK(MPI_Win_fence(0, ww));
    for (int i = 0; i < N / 2; i++) CHECK(back[i] == ll * 100 + i, "window %d: strided get: %d", k, back[i]);
    MPI_OK(MPI_Accumulate(mineN, N / 2, MPI_INT, right, 1, 1, every2, MPI_SUM, ww));
    MPI_OK(MPI_Win_fence(0, ww));
    for (int i = 0; i < N / 2; i++) CHECK(m[2 * i + 1] == 2 * (left * 100 + i), "window %d: strided accumulate: %d", k, m[2 * i + 1]);
    CHECK(m[0] == -1 && m[2] == -1, "window %d: the gaps stay untouched", k);
  }
  MPI_OK(MPI_Win_free(&uw));
  free(user);
  MPI_Type_free(&every2);
  MPI_OK(MPI_Win_free(&tw));
  /* ---- large transfers (data streamed straight into the target window) on a
   * window of user memory, under fence and under a lock. */
  enum { BIGN = 200 * 1024 };
  char *bm = calloc(2 * BIGN, 1), *out = malloc(BIGN), *in = malloc(BIGN);
  MPI_Win bw;
  MPI_OK(MPI_Win_create(bm, 2 * BIGN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &bw));
  t_fill(out, BIGN, 77 + me);
  MPI_OK(MPI_Win_fence(0, bw));
  MPI_OK(MPI_Put(out, BIGN, MPI_BYTE, right, 5, BIGN, MPI_BYTE, bw));
  MPI_OK(MPI_Win_fence(0, bw));
  CHECK(t_verify(bm + 5, BIGN, 77 + left) < 0, "large put under fence");
  MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, left, 0, bw));
  MPI_OK(MPI_Get(in, BIGN, MPI_BYTE, left, 5, BIGN, MPI_BYTE, bw));
  MPI_OK(MPI_Win_unlock(left, bw));
  CHECK(t_verify(in, BIGN, 77 + ll) < 0, "large get under a lock");
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, bw));
  MPI_OK(MPI_Put(out, BIGN, MPI_BYTE, right, BIGN, BIGN, MPI_BYTE, bw));
  MPI_OK(MPI_Win_unlock(right, bw));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(t_verify(bm + BIGN, BIGN, 77 + left) < 0, "large put under a lock");
  MPI_OK(MPI_Win_free(&bw));
  free(bm);
  free(out);
  free(in);
  free(mem);
  t_finish();
  return 0;
}
