// ranks: 1 2 4
/* One-sided communication beyond the core subset: post-start-complete-wait (with
 * MPI_Win_test), shared-memory windows (direct loads of a neighbour's part through
 * MPI_Win_shared_query), dynamic windows (attach, absolute addresses, detach),
 * MPI_Rget_accumulate with MPI_NO_OP and MPI_REPLACE, lock contention (exclusive
 * locks serialise read-modify-write), MPI_MODE_NOCHECK locks, window names, groups and
 * info. */
#include "common.h"

#define N 16

static int deleted = 0;
static int count_delete(MPI_Win win, int keyval, void *value, void *extra) {
  (void)win; (void)keyval; (void)extra;
  deleted += *(int *)value;
  return MPI_SUCCESS;
}

/* `rounds` read-modify-writes of rank 0's slot 0, each under an exclusive lock. */
static void locked_increments(MPI_Win win, int rounds) {
  for (int r = 0; r < rounds; r++) {
    int x;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    MPI_OK(MPI_Get(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    MPI_OK(MPI_Win_flush(0, win));
    x += 1;
    MPI_OK(MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(0, win));
  }
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "rma_sync");
  int me = t_rank, n = t_size;
  int right = (me + 1) % n, left = (me + n - 1) % n;

  /* ---- PSCW ring: each rank exposes to its left neighbour and accesses the right. */
  int *mem;
  MPI_Win win;
  MPI_OK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  for (int i = 0; i < N; i++) mem[i] = -1;
  MPI_Group world, gl, gr;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &left, &gl);
  MPI_Group_incl(world, 1, &right, &gr);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int round = 0; round < 3; round++) {
    int v[N];
    for (int i = 0; i < N; i++) v[i] = round * 100 + me;
    MPI_OK(MPI_Win_post(gl, 0, win));
    MPI_OK(MPI_Win_start(gr, 0, win));
    MPI_OK(MPI_Put(v, N, MPI_INT, right, 0, N, MPI_INT, win));
    MPI_OK(MPI_Win_complete(win));
    if (round == 2) {
      int flag = 0;
      while (!flag) MPI_OK(MPI_Win_test(win, &flag));
    } else {
      MPI_OK(MPI_Win_wait(win));
    }
    for (int i = 0; i < N; i++) CHECK(mem[i] == round * 100 + left, "PSCW round %d: mem[%d] = %d", round, i, mem[i]);
  }
  int rc_class = -1;
  MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  MPI_Error_class(MPI_Win_complete(win), &rc_class);
  CHECK(rc_class == MPI_ERR_RMA_SYNC, "complete without start: class %d", rc_class);

  /* ---- exclusive locks serialise read-modify-write of rank 0's slot 0. */
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) mem[0] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  locked_increments(win, 10);
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) CHECK(mem[0] == 10 * n, "locked increments: %d, expected %d", mem[0], 10 * n);

  /* ---- MPI_MODE_NOCHECK: each rank alone writes its right neighbour's slot 2 and
   * slot 3 (no lock taken, none released); exclusive locks still work afterwards. */
  MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, MPI_MODE_NOCHECK, win));
  MPI_OK(MPI_Put(&me, 1, MPI_INT, right, 2, 1, MPI_INT, win));
  MPI_OK(MPI_Win_unlock(right, win));
  MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
  int tagged = 1000 + me;
  MPI_OK(MPI_Put(&tagged, 1, MPI_INT, right, 3, 1, MPI_INT, win));
  MPI_OK(MPI_Win_unlock_all(win));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(mem[2] == left && mem[3] == 1000 + left, "NOCHECK puts: slots 2, 3 hold %d, %d", mem[2], mem[3]);
  locked_increments(win, 5);
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) CHECK(mem[0] == 15 * n, "locked increments after NOCHECK: %d, expected %d", mem[0], 15 * n);

  /* ---- Rget_accumulate: NO_OP fetches, REPLACE swaps. */
  MPI_OK(MPI_Win_lock_all(0, win));
  int fetched = -5, repl = 7000 + me, old = -5;
  MPI_Request rq;
  MPI_OK(MPI_Rget_accumulate(NULL, 0, MPI_INT, &fetched, 1, MPI_INT, me, 1, 1, MPI_INT, MPI_NO_OP, win, &rq));
  MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  CHECK(fetched == mem[1], "no-op fetch %d, memory %d", fetched, mem[1]);
  MPI_OK(MPI_Rget_accumulate(&repl, 1, MPI_INT, &old, 1, MPI_INT, me, 1, 1, MPI_INT, MPI_REPLACE, win, &rq));
  MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  CHECK(old == fetched && mem[1] == repl, "replace: old %d, now %d", old, mem[1]);
  MPI_OK(MPI_Win_unlock_all(win));

  /* ---- names, group, info. */
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  MPI_OK(MPI_Win_set_name(win, "ring window"));
  MPI_OK(MPI_Win_get_name(win, name, &len));
  CHECK(strcmp(name, "ring window") == 0 && len == 11, "name '%s'", name);
  MPI_Group wg;
  int res;
  MPI_OK(MPI_Win_get_group(win, &wg));
  MPI_Group_compare(wg, world, &res);
  CHECK(res == MPI_IDENT, "window group compares %d with the world group", res);
  MPI_Group_free(&wg);
  MPI_Info info, used;
  MPI_Info_create(&info);
  MPI_Info_set(info, "no_locks", "false");
  MPI_Info_set(info, "accumulate_ops", "same_op");
  MPI_Info_set(info, "crossmpi_no_such_hint", "1");
  MPI_OK(MPI_Win_set_info(win, info));
  MPI_OK(MPI_Win_get_info(win, &used));
  char val[64];
  int flag;
  /* An MPI may drop hints it does not use; crossmpi reports the standard's window
   * hints (what the application set, else the default) and drops unknown keys. */
  MPI_Info_get(used, "no_locks", 63, val, &flag);
  CHECK_CROSSMPI(flag && strcmp(val, "false") == 0, "info no_locks");
  MPI_Info_get(used, "accumulate_ops", 63, val, &flag);
  CHECK_CROSSMPI(flag && strcmp(val, "same_op") == 0, "info accumulate_ops");
  MPI_Info_get(used, "accumulate_ordering", 63, val, &flag);
  CHECK_CROSSMPI(flag && strcmp(val, "rar,raw,war,waw") == 0, "info accumulate_ordering default");
  MPI_Info_get(used, "crossmpi_no_such_hint", 63, val, &flag);
  CHECK(!flag, "an unknown window hint was reported back");
  MPI_Info_free(&info);
  MPI_Info_free(&used);

  /* ---- user keyvals: delete callbacks on replacement, on delete and at free. */
  int key, one = 1, ten = 10, hundred = 100, *pv;
  MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &key, NULL));
  MPI_OK(MPI_Win_set_attr(win, key, &one));
  MPI_OK(MPI_Win_get_attr(win, key, &pv, &flag));
  CHECK(flag && pv == &one, "user attribute read back");
  MPI_OK(MPI_Win_set_attr(win, key, &ten));
  CHECK(deleted == 1, "replacing runs the delete callback once: %d", deleted);
  MPI_OK(MPI_Win_delete_attr(win, key));
  CHECK(deleted == 11, "deleting runs it: %d", deleted);
  MPI_OK(MPI_Win_get_attr(win, key, &pv, &flag));
  CHECK(!flag, "deleted attribute is gone");
  MPI_OK(MPI_Win_set_attr(win, key, &hundred));
  MPI_OK(MPI_Win_free(&win));
  CHECK(deleted == 111, "MPI_Win_free runs it: %d", deleted);
  MPI_OK(MPI_Win_free_keyval(&key));
  CHECK(key == MPI_KEYVAL_INVALID, "freed keyval reset");

  /* ---- shared window: every rank writes its part, reads its neighbour's directly. */
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int nme, nn;
  MPI_Comm_rank(node, &nme);
  MPI_Comm_size(node, &nn);
  long *part;
  MPI_Win sw;
  MPI_OK(MPI_Win_allocate_shared((nme + 1) * sizeof(long), sizeof(long), MPI_INFO_NULL, node, &part, &sw));
  MPI_OK(MPI_Win_lock_all(0, sw));
  for (int i = 0; i <= nme; i++) part[i] = nme * 10 + i;
  MPI_OK(MPI_Win_sync(sw));
  MPI_Barrier(node);
  MPI_OK(MPI_Win_sync(sw));
  int nr = (nme + 1) % nn;
  MPI_Aint qsize;
  int qunit;
  long *theirs;
  MPI_OK(MPI_Win_shared_query(sw, nr, &qsize, &qunit, &theirs));
  CHECK(qsize == (nr + 1) * (MPI_Aint)sizeof(long) && qunit == sizeof(long), "shared_query size %ld unit %d", (long)qsize, qunit);
  for (int i = 0; i <= nr; i++) CHECK(theirs[i] == nr * 10 + i, "shared load: %ld", theirs[i]);
  long through_get = -1;
  MPI_OK(MPI_Get(&through_get, 1, MPI_LONG, nr, nr, 1, MPI_LONG, sw));
  MPI_OK(MPI_Win_flush(nr, sw));
  CHECK(through_get == nr * 11, "get on a shared window: %ld", through_get);
  MPI_OK(MPI_Win_unlock_all(sw));
  MPI_OK(MPI_Win_free(&sw));

  /* noncontiguous parts, the odd members' empty: an empty part has no address */
  MPI_Info noncontig;
  MPI_OK(MPI_Info_create(&noncontig));
  MPI_OK(MPI_Info_set(noncontig, "alloc_shared_noncontig", "true"));
  MPI_OK(MPI_Win_allocate_shared(nme % 2 ? 0 : sizeof(long), sizeof(long), noncontig, node, &part, &sw));
  MPI_OK(MPI_Info_free(&noncontig));
  for (int r = 0; r < nn; r++) {
    MPI_OK(MPI_Win_shared_query(sw, r, &qsize, &qunit, &theirs));
    /* (Open MPI rounds a noncontiguous part up to a page) */
    CHECK(r % 2 ? qsize == 0 && theirs == NULL : qsize >= (MPI_Aint)sizeof(long) && theirs != NULL,
          "noncontig shared_query of %d: size %ld base %p", r, (long)qsize, (void *)theirs);
  }
  MPI_OK(MPI_Win_free(&sw));

  /* MPI-4.1: any flavor may be asked. A window of MPI_Win_allocate is mapped on the
   * node here, so a node member's part is there to load; one over memory the program
   * gave (MPI_Win_create) is not: size 0, NULL. Open MPI 4.1 (MPI-3.1) refuses both. */
  if (!t_peer()) {
    long *mine_alloc;
    MPI_OK(MPI_Win_allocate(2 * sizeof(long), sizeof(long), MPI_INFO_NULL, node, &mine_alloc, &sw));
    MPI_OK(MPI_Win_lock_all(0, sw));
    mine_alloc[1] = 700 + nme;
    MPI_OK(MPI_Win_sync(sw));
    MPI_Barrier(node);
    MPI_OK(MPI_Win_sync(sw));
    MPI_OK(MPI_Win_shared_query(sw, nr, &qsize, &qunit, &theirs));
    CHECK(qsize == 2 * (MPI_Aint)sizeof(long) && qunit == sizeof(long) && theirs && theirs[1] == 700 + nr,
          "shared_query of an allocated window: size %ld unit %d value %ld", (long)qsize, qunit,
          theirs ? theirs[1] : -1L);
    MPI_OK(MPI_Win_unlock_all(sw));
    MPI_OK(MPI_Win_free(&sw));
    long given[2];
    MPI_OK(MPI_Win_create(given, sizeof given, sizeof(long), MPI_INFO_NULL, node, &sw));
    MPI_OK(MPI_Win_shared_query(sw, nr, &qsize, &qunit, &theirs));
    CHECK(qsize == 0 && theirs == NULL, "shared_query of a created window: size %ld base %p", (long)qsize,
          (void *)theirs);
    MPI_OK(MPI_Win_free(&sw));
  }
  MPI_Comm_free(&node);

  /* ---- dynamic window: attach, publish the address, put to it, detach. */
  MPI_Win dw;
  MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dw));
  int *region = calloc(N, sizeof(int));
  MPI_OK(MPI_Win_attach(dw, region, N * sizeof(int)));
  MPI_Aint mine, theirs_addr;
  MPI_Get_address(region, &mine);
  MPI_Sendrecv(&mine, 1, MPI_AINT, left, 0, &theirs_addr, 1, MPI_AINT, right, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_OK(MPI_Win_fence(0, dw));
  int token = 4242 + me;
  MPI_OK(MPI_Put(&token, 1, MPI_INT, right, theirs_addr + 3 * sizeof(int), 1, MPI_INT, dw));
  MPI_OK(MPI_Win_fence(0, dw));
  CHECK(region[3] == 4242 + left, "dynamic put: %d", region[3]);
  MPI_OK(MPI_Win_detach(dw, region));
  MPI_OK(MPI_Win_set_errhandler(dw, MPI_ERRORS_RETURN));
  /* Erroneous; MPIs need not detect it (Open MPI's pt2pt does not). */
  MPI_Error_class(MPI_Win_detach(dw, region), &rc_class);
  CHECK_CROSSMPI(rc_class == MPI_ERR_ARG, "detaching twice: class %d", rc_class);
  MPI_OK(MPI_Win_free(&dw));
  free(region);
  MPI_Group_free(&gl);
  MPI_Group_free(&gr);
  MPI_Group_free(&world);
  t_finish();
  return 0;
}
