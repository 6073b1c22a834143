// ranks: 1 2 3 4
/* The Sessions model without MPI_Init: MPI_Session_init, the process sets mpi://WORLD
 * and mpi://SELF (count, names through the two-step length query, info), groups from
 * them, MPI_Comm_create_from_group (communication and a collective on the result, two
 * string tags at once over overlapping groups), MPI_Intercomm_create_from_groups (even
 * against odd ranks), session error handlers (user handler called with the session and
 * the code; errors on a bad pset name reach it), MPI_Session_get_info, and a second
 * session living beside the first. The World model then joins the running library
 * (MPI_Init after Session_init) and everything ends with the last user. */
#include "common.h"

static int handler_calls = 0;
static MPI_Session handler_session = MPI_SESSION_NULL;
static int handler_code = 0;

static void on_error(MPI_Session *s, int *code, ...) {
  handler_calls++;
  handler_session = *s;
  handler_code = *code;
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  t_name = "mpi4_session";
  MPI_Session s;
  MPI_Info info;
  MPI_OK(MPI_Info_create(&info));
  MPI_OK(MPI_Info_set(info, "mpi_thread_support_level", "MPI_THREAD_MULTIPLE"));
  MPI_OK(MPI_Session_init(info, MPI_ERRORS_ARE_FATAL, &s));
  MPI_OK(MPI_Info_free(&info));

  int n = 0;
  MPI_OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
  CHECK(n >= 2, "%d process sets", n);
  int world_seen = 0, self_seen = 0;
  for (int i = 0; i < n; i++) {
    int len = 0;
    MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
    char *name = malloc((size_t)len);
    MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
    CHECK((int)strlen(name) == len - 1, "pset %d: name %s, length %d", i, name, len);
    world_seen |= strcmp(name, "mpi://WORLD") == 0;
    self_seen |= strcmp(name, "mpi://SELF") == 0;
    free(name);
  }
  CHECK(world_seen && self_seen, "psets: world %d self %d", world_seen, self_seen);

  MPI_Group wg, sg;
  MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &wg));
  MPI_OK(MPI_Group_from_session_pset(s, "mpi://SELF", &sg));
  int size, rank, ssize;
  MPI_OK(MPI_Group_size(wg, &size));
  MPI_OK(MPI_Group_rank(wg, &rank));
  MPI_OK(MPI_Group_size(sg, &ssize));
  CHECK(ssize == 1 && rank >= 0 && rank < size, "sizes %d %d rank %d", size, ssize, rank);
  t_rank = rank;
  t_size = size;
  MPI_OK(MPI_Session_get_pset_info(s, "mpi://WORLD", &info));
  char v[MPI_MAX_INFO_VAL + 1];
  int vlen = MPI_MAX_INFO_VAL, flag = 0;
  MPI_OK(MPI_Info_get_string(info, "mpi_size", &vlen, v, &flag));
  CHECK(flag && atoi(v) == size, "mpi_size %s", v);
  MPI_OK(MPI_Info_free(&info));

  MPI_Comm world;
  MPI_OK(MPI_Comm_create_from_group(wg, "org.crossmpi.test.world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &world));
  int crank, csize;
  MPI_OK(MPI_Comm_rank(world, &crank));
  MPI_OK(MPI_Comm_size(world, &csize));
  CHECK(crank == rank && csize == size, "comm rank %d size %d", crank, csize);
  int sum = 0;
  MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, world));
  CHECK(sum == size * (size - 1) / 2, "allreduce %d", sum);
  int token = rank, got = -1;
  MPI_OK(MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 3, &got, 1, MPI_INT, (rank + size - 1) % size, 3, world,
                      MPI_STATUS_IGNORE));
  CHECK(got == (rank + size - 1) % size, "ring got %d", got);
  MPI_Errhandler eh;
  MPI_OK(MPI_Comm_get_errhandler(world, &eh));
  CHECK(eh == MPI_ERRORS_RETURN, "errhandler of the new communicator");

  /* two string tags at once over overlapping groups: the even ranks, and all */
  int nevens = (size + 1) / 2, *evens = malloc(sizeof(int) * (size_t)nevens);
  for (int i = 0; i < nevens; i++) evens[i] = 2 * i;
  MPI_Group eg;
  MPI_OK(MPI_Group_incl(wg, nevens, evens, &eg));
  MPI_Comm even = MPI_COMM_NULL, all2;
  if (rank % 2 == 0) MPI_OK(MPI_Comm_create_from_group(eg, "evens", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &even));
  MPI_OK(MPI_Comm_create_from_group(wg, "all-again", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &all2));
  if (even != MPI_COMM_NULL) {
    int es = 0;
    MPI_OK(MPI_Comm_size(even, &es));
    CHECK(es == nevens, "evens size %d", es);
    MPI_OK(MPI_Barrier(even));
    MPI_OK(MPI_Comm_free(&even));
  }
  MPI_OK(MPI_Barrier(all2));
  MPI_OK(MPI_Comm_free(&all2));

  /* intercommunicator: even ranks against odd ranks */
  if (size >= 2) {
    int nodds = size / 2, *odds = malloc(sizeof(int) * (size_t)nodds);
    for (int i = 0; i < nodds; i++) odds[i] = 2 * i + 1;
    MPI_Group og;
    MPI_OK(MPI_Group_incl(wg, nodds, odds, &og));
    MPI_Comm inter;
    int mine_even = rank % 2 == 0;
    MPI_OK(MPI_Intercomm_create_from_groups(mine_even ? eg : og, 0, mine_even ? og : eg, 0, "evens-odds", MPI_INFO_NULL,
                                           MPI_ERRORS_ARE_FATAL, &inter));
    int remote = 0, is_inter = 0;
    MPI_OK(MPI_Comm_test_inter(inter, &is_inter));
    MPI_OK(MPI_Comm_remote_size(inter, &remote));
    CHECK(is_inter && remote == (mine_even ? nodds : nevens), "remote size %d", remote);
    int mine = rank, best = -1;
    MPI_OK(MPI_Allreduce(&mine, &best, 1, MPI_INT, MPI_MAX, inter));
    int expect = mine_even ? 2 * nodds - 1 : 2 * (nevens - 1);
    CHECK(best == expect, "intercomm allreduce: max of the other side %d, expected %d", best, expect);
    MPI_OK(MPI_Comm_free(&inter));
    MPI_OK(MPI_Group_free(&og));
    free(odds);
  }
  MPI_OK(MPI_Group_free(&eg));
  free(evens);

  /* session error handlers */
  MPI_Errhandler mine;
  MPI_OK(MPI_Session_create_errhandler(on_error, &mine));
  MPI_OK(MPI_Session_set_errhandler(s, mine));
  MPI_Errhandler back;
  MPI_OK(MPI_Session_get_errhandler(s, &back));
  CHECK(back == mine, "Session_get_errhandler");
  MPI_Group none;
  int rc = MPI_Group_from_session_pset(s, "mpi://NOWHERE", &none);
  CHECK(rc != MPI_SUCCESS && handler_calls == 1 && handler_session == s && handler_code == rc,
        "handler: calls %d code %d (returned %d)", handler_calls, handler_code, rc);
  MPI_OK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
  CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER, "Session_call_errhandler: calls %d", handler_calls);
  MPI_OK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
  MPI_OK(MPI_Errhandler_free(&mine));

  MPI_OK(MPI_Session_get_info(s, &info));
  vlen = MPI_MAX_INFO_VAL;
  MPI_OK(MPI_Info_get_string(info, "mpi_thread_support_level", &vlen, v, &flag));
  CHECK(flag && strcmp(v, "MPI_THREAD_MULTIPLE") == 0, "mpi_thread_support_level %s", v);
  /* MPICH's name for the key is reported too */
  vlen = MPI_MAX_INFO_VAL;
  MPI_OK(MPI_Info_get_string(info, "thread_level", &vlen, v, &flag));
  CHECK(flag && strcmp(v, "MPI_THREAD_MULTIPLE") == 0, "thread_level %s", v);
  MPI_OK(MPI_Info_free(&info));
  int provided = -1;
  MPI_OK(MPI_Query_thread(&provided));
  CHECK(provided == MPI_THREAD_MULTIPLE, "the session asked for MPI_THREAD_MULTIPLE; got %d", provided);

  /* a second session beside the first, then the World model joining */
  MPI_Session s2;
  MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
  MPI_OK(MPI_Session_get_num_psets(s2, MPI_INFO_NULL, &n));
  MPI_OK(MPI_Init(NULL, NULL));
  int wrank;
  MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
  CHECK(wrank == rank, "MPI_COMM_WORLD rank %d, pset rank %d", wrank, rank);
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_OK(MPI_Session_finalize(&s2));
  CHECK(s2 == MPI_SESSION_NULL, "Session_finalize left the handle");
  MPI_OK(MPI_Comm_free(&world));
  MPI_OK(MPI_Group_free(&wg));
  MPI_OK(MPI_Group_free(&sg));
  MPI_OK(MPI_Finalize()); /* the session still runs: the library stays up */
  MPI_OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
  if (rank == 0) printf("OK mpi4_session\n");
  MPI_OK(MPI_Session_finalize(&s));
  return 0;
}
