// ranks: 1 2 4
/* Atomicity of accumulates under contention: every rank hammers elements of rank 0's
 * window at once (MPI_Win_allocate, so members of a node update the shared segment
 * with atomic instructions, and members elsewhere send messages the target applies).
 * Sums of MPI_LONG, MPI_INT, MPI_DOUBLE and of an unaligned MPI_INT (applied by the
 * target), also issued back to back, must be exact; fetch_and_op must hand out every ticket exactly once;
 * compare_and_swap must give mutual exclusion; the request-based and derived-type
 * paths must mix with the others; MPI_NO_OP fetches read the result; an operator the
 * standard does not define on the type is refused with MPI_ERR_OP. */
#include "common.h"

enum { N = 2000, K = 200, M = 5000 };
enum { SUM_LONG = 0, SUM_INT = 8, SUM_DOUBLE = 16, SUM_UNALIGNED = 25, TICKET = 32, LOCK = 40, COUNTER = 48, HAMMER = 56, DONE = 64 };

int main(int argc, char **argv) {
  t_init(&argc, &argv, "rma_atomic");
  char *mem;
  MPI_Win win;
  MPI_OK(MPI_Win_allocate(72, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  memset(mem, 0, 72);
  MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  MPI_Datatype one_long;
  MPI_OK(MPI_Type_contiguous(1, MPI_LONG, &one_long));
  MPI_OK(MPI_Type_commit(&one_long));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_OK(MPI_Win_lock_all(0, win));

  long lone = 1, *tickets = malloc(N * sizeof(long));
  int ione = 1;
  double done = 1.0;
  for (int i = 0; i < N; i++) {
    MPI_Request r;
    if (i % 4 == 0) {
      MPI_OK(MPI_Raccumulate(&lone, 1, MPI_LONG, 0, SUM_LONG, 1, MPI_LONG, MPI_SUM, win, &r));
      MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else if (i % 4 == 1) {
      MPI_OK(MPI_Accumulate(&lone, 1, one_long, 0, SUM_LONG, 1, MPI_LONG, MPI_SUM, win));
    } else {
      MPI_OK(MPI_Accumulate(&lone, 1, MPI_LONG, 0, SUM_LONG, 1, MPI_LONG, MPI_SUM, win));
    }
    MPI_OK(MPI_Accumulate(&ione, 1, MPI_INT, 0, SUM_INT, 1, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Accumulate(&done, 1, MPI_DOUBLE, 0, SUM_DOUBLE, 1, MPI_DOUBLE, MPI_SUM, win));
    MPI_OK(MPI_Accumulate(&ione, 1, MPI_INT, 0, SUM_UNALIGNED, 1, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Fetch_and_op(&lone, &tickets[i], MPI_LONG, 0, TICKET, MPI_SUM, win));
    MPI_OK(MPI_Win_flush(0, win));
  }

  /* Back-to-back accumulates and fetch-and-ops to one element, no flush in between,
   * M of them at least and on until every rank has done M: ranks that update rank 0's
   * memory directly keep racing with the messages of the others (in impi runs) and
   * with rank 0 applying them. */
  long ops = 0, finished = 0;
  while (finished < t_size) {
    long old;
    if (ops % 2) {
      MPI_OK(MPI_Accumulate(&lone, 1, MPI_LONG, 0, HAMMER, 1, MPI_LONG, MPI_SUM, win));
    } else {
      MPI_OK(MPI_Fetch_and_op(&lone, &old, MPI_LONG, 0, HAMMER, MPI_SUM, win));
    }
    ops++;
    if (ops == M) MPI_OK(MPI_Accumulate(&lone, 1, MPI_LONG, 0, DONE, 1, MPI_LONG, MPI_SUM, win));
    if (ops >= M && ops % 64 == 0) {
      MPI_OK(MPI_Fetch_and_op(NULL, &finished, MPI_LONG, 0, DONE, MPI_NO_OP, win));
      MPI_OK(MPI_Win_flush(0, win));
    }
  }
  MPI_OK(MPI_Win_flush(0, win));
  long all_ops;
  MPI_OK(MPI_Allreduce(&ops, &all_ops, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));

  /* A spin lock made of compare_and_swap guards a read-modify-write by put and get. */
  for (int i = 0; i < K; i++) {
    int mine = t_rank + 1, zero = 0, seen;
    do {
      MPI_OK(MPI_Compare_and_swap(&mine, &zero, &seen, MPI_INT, 0, LOCK, win));
      MPI_OK(MPI_Win_flush(0, win));
    } while (seen != 0);
    long c;
    MPI_OK(MPI_Get(&c, 1, MPI_LONG, 0, COUNTER, 1, MPI_LONG, win));
    MPI_OK(MPI_Win_flush(0, win));
    c++;
    MPI_OK(MPI_Put(&c, 1, MPI_LONG, 0, COUNTER, 1, MPI_LONG, win));
    MPI_OK(MPI_Win_flush(0, win));
    MPI_OK(MPI_Compare_and_swap(&zero, &mine, &seen, MPI_INT, 0, LOCK, win));
    MPI_OK(MPI_Win_flush(0, win));
    CHECK(seen == mine, "rank %d released a lock held by %d", t_rank, seen - 1);
  }

  float fone = 1;
  int rc = MPI_Accumulate(&fone, 1, MPI_FLOAT, 0, SUM_INT, 1, MPI_FLOAT, MPI_BAND, win);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_OP, "MPI_BAND on MPI_FLOAT gave error class %d, not MPI_ERR_OP", cls);
  MPI_OK(MPI_Win_unlock_all(win));
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_OK(MPI_Win_lock_all(0, win));
  long total, counter, hammered;
  MPI_OK(MPI_Fetch_and_op(NULL, &total, MPI_LONG, 0, SUM_LONG, MPI_NO_OP, win));
  MPI_OK(MPI_Fetch_and_op(NULL, &hammered, MPI_LONG, 0, HAMMER, MPI_NO_OP, win));
  MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_LONG, &counter, 1, MPI_LONG, 0, COUNTER, 1, MPI_LONG, MPI_NO_OP, win));
  MPI_OK(MPI_Win_unlock_all(win));
  long expect = (long)N * t_size;
  CHECK(total == expect, "the MPI_LONG sum read by MPI_NO_OP is %ld, expected %ld", total, expect);
  CHECK(hammered == all_ops, "back-to-back sums gave %ld, expected %ld", hammered, all_ops);
  CHECK(counter == (long)K * t_size, "the lock-guarded counter is %ld, expected %ld", counter, (long)K * t_size);
  if (t_rank == 0) {
    int i32, u32;
    double d;
    memcpy(&i32, mem + SUM_INT, 4);
    memcpy(&u32, mem + SUM_UNALIGNED, 4);
    memcpy(&d, mem + SUM_DOUBLE, 8);
    CHECK(i32 == expect, "the MPI_INT sum is %d, expected %ld", i32, expect);
    CHECK(u32 == expect, "the unaligned MPI_INT sum is %d, expected %ld", u32, expect);
    CHECK(d == (double)expect, "the MPI_DOUBLE sum is %g, expected %ld", d, expect);
  }

  /* Every ticket 0 .. N*size-1 was handed out exactly once. */
  long *all = t_rank == 0 ? malloc(sizeof(long) * N * t_size) : NULL;
  MPI_OK(MPI_Gather(tickets, N, MPI_LONG, all, N, MPI_LONG, 0, MPI_COMM_WORLD));
  if (t_rank == 0) {
    char *seen = calloc(N * t_size, 1);
    for (long i = 0; i < expect; i++) {
      CHECK(all[i] >= 0 && all[i] < expect && !seen[all[i]], "ticket %ld handed out twice or out of range", all[i]);
      if (all[i] >= 0 && all[i] < expect) seen[all[i]] = 1;
    }
    free(seen);
    free(all);
  }
  free(tickets);
  MPI_OK(MPI_Type_free(&one_long));
  MPI_OK(MPI_Win_free(&win));
  t_finish();
  return 0;
}
