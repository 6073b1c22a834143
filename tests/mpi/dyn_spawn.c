// ranks: 1 2
// impi: skip a multi-cluster (IMPI) job cannot spawn (MPI_ERR_SPAWN)
/* MPI_Comm_spawn and MPI_Comm_spawn_multiple: the program spawns itself (a child
 * knows its role from argv[1]). Spawns of 1 and 3 children with argv; the parents and
 * children talk point to point and through collectives over the intercommunicator,
 * merge it (both orders) and disconnect. The children see their parent with
 * MPI_Comm_get_parent, their own MPI_COMM_WORLD, MPI_APPNUM (the command's index) and
 * MPI_UNIVERSE_SIZE; the parents have no parent. spawn_multiple starts two commands
 * with different argv; a child spawns a grandchild (nested spawn); errors: a missing
 * program, maxprocs 0, a NULL command and a missing wdir fail with MPI_ERR_SPAWN at every
 * parent, the message names the function and the argument, and the root's
 * array_of_errcodes says MPI_ERR_SPAWN for each process it asked for (crossmpi only:
 * Open MPI 4.1 ends the job instead). With arguments "host HOSTS" only the
 * spawn of 3 is done, with info "host" = HOSTS (tests/suites/dynamic.sh runs it so,
 * with a launch agent). */
#include "common.h"

static int class_of(int rc) {
  int c = -1;
  MPI_Error_class(rc, &c);
  return c;
}

/* What parents and children do together over `inter`; `nchildren` children,
 * `nparents` parents. Children send their world rank + 100 * tag to parent
 * rank (crank % nparents); parents bcast and reduce. */
static void exercise(MPI_Comm inter, int parent_side, int nparents, int nchildren) {
  int flag, lrank, lsize, rsize;
  MPI_OK(MPI_Comm_test_inter(inter, &flag));
  CHECK(flag, "spawn gave an intracommunicator");
  MPI_OK(MPI_Comm_rank(inter, &lrank));
  MPI_OK(MPI_Comm_size(inter, &lsize));
  MPI_OK(MPI_Comm_remote_size(inter, &rsize));
  CHECK(lsize == (parent_side ? nparents : nchildren), "local size %d", lsize);
  CHECK(rsize == (parent_side ? nchildren : nparents), "remote size %d", rsize);

  /* Point to point both ways. */
  if (parent_side) {
    for (int c = 0; c < nchildren; c++) {
      if (c % nparents != lrank) continue;
      int v;
      MPI_Status st;
      MPI_OK(MPI_Recv(&v, 1, MPI_INT, c, 5, inter, &st));
      CHECK(v == 1000 + c && st.MPI_SOURCE == c, "got %d from child %d", v, st.MPI_SOURCE);
      v = 2000 + c;
      MPI_OK(MPI_Send(&v, 1, MPI_INT, c, 6, inter));
    }
  } else {
    int v = 1000 + lrank;
    MPI_OK(MPI_Send(&v, 1, MPI_INT, lrank % nparents, 5, inter));
    MPI_OK(MPI_Recv(&v, 1, MPI_INT, lrank % nparents, 6, inter, MPI_STATUS_IGNORE));
    CHECK(v == 2000 + lrank, "child %d got %d back", lrank, v);
  }

  /* Collectives: a bcast from parent 0 to the children, an allreduce both ways. */
  int b = 77;
  if (parent_side) MPI_OK(MPI_Bcast(&b, 1, MPI_INT, lrank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
  else {
    b = 0;
    MPI_OK(MPI_Bcast(&b, 1, MPI_INT, 0, inter));
    CHECK(b == 77, "bcast from the parents gave %d", b);
  }
  int mine = parent_side ? 1 : 10, sum = 0;
  MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
  int want = parent_side ? 10 * nchildren : nparents;
  CHECK(sum == want, "allreduce over the intercommunicator: %d, expected %d", sum, want);

  /* Merge: parents first when they ask for low, then children first. */
  for (int order = 0; order < 2; order++) {
    MPI_Comm merged;
    int high = order == 0 ? !parent_side : parent_side;
    MPI_OK(MPI_Intercomm_merge(inter, high, &merged));
    int mrank, msize;
    MPI_OK(MPI_Comm_rank(merged, &mrank));
    MPI_OK(MPI_Comm_size(merged, &msize));
    CHECK(msize == nparents + nchildren, "merged size %d", msize);
    int low_size = high ? (parent_side ? nchildren : nparents) : 0;
    CHECK(mrank == low_size + lrank, "merged rank %d (order %d)", mrank, order);
    int total = 0, one = 1;
    MPI_OK(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, merged));
    CHECK(total == msize, "allreduce over the merged communicator: %d", total);
    MPI_OK(MPI_Comm_free(&merged));
  }
}

/* A spawned process: argv[1] says what it was spawned as. */
/* Parents and children (high = 1) merge, split the merged communicator by parity of
 * rank (each half holds processes of both jobs, whose process tables differ), join the
 * halves with MPI_Intercomm_create through the merged communicator and exchange with
 * the remote process of the same rank: the groups travel between the leaders as
 * processes both jobs know, not as one process's indices. */
static void mixed_halves(MPI_Comm inter, int high) {
  MPI_Comm merged, half, across;
  int m, n;
  MPI_OK(MPI_Intercomm_merge(inter, high, &merged));
  MPI_OK(MPI_Comm_rank(merged, &m));
  MPI_OK(MPI_Comm_size(merged, &n));
  MPI_OK(MPI_Comm_split(merged, m % 2, m, &half));
  MPI_OK(MPI_Intercomm_create(half, 0, merged, (m + 1) % 2, 77, &across));
  int r, rsize, got = -1;
  MPI_OK(MPI_Comm_rank(across, &r));
  MPI_OK(MPI_Comm_remote_size(across, &rsize));
  CHECK(rsize == (m % 2 ? (n + 1) / 2 : n / 2), "mixed halves: remote size %d", rsize);
  if (r < rsize) {
    MPI_OK(MPI_Sendrecv(&m, 1, MPI_INT, r, 5, &got, 1, MPI_INT, r, 5, across, MPI_STATUS_IGNORE));
    /* the remote process of rank r has merged rank 2r + (the other parity) */
    CHECK(got == 2 * r + (m + 1) % 2, "mixed halves: merged %d got %d from remote %d", m, got, r);
  }
  MPI_OK(MPI_Comm_free(&across));
  MPI_OK(MPI_Comm_free(&half));
  MPI_OK(MPI_Comm_free(&merged));
}

static int child(int argc, char **argv, MPI_Comm parent) {
  t_name = "dyn_spawn child";
  int rank, size, rsize, flag, *appnum, *universe;
  MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  t_rank = rank;
  MPI_OK(MPI_Comm_remote_size(parent, &rsize));
  char name[MPI_MAX_OBJECT_NAME];
  int name_len = 0;
  MPI_OK(MPI_Comm_get_name(parent, name, &name_len));
  CHECK(strcmp(name, "MPI_COMM_PARENT") == 0, "the parent's default name is \"%s\"", name);
  MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
  CHECK(flag, "a spawned process has MPI_APPNUM");
  MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag));
  CHECK(!flag || *universe >= 1, "MPI_UNIVERSE_SIZE %d", *universe); /* unknown under Hydra */
  const char *role = argc > 1 ? argv[1] : "";
  if (strcmp(role, "child") == 0) {
    /* argv: child N "two words" */
    CHECK(argc == 4 && atoi(argv[2]) == size && strcmp(argv[3], "two words") == 0,
          "child argv: argc %d", argc);
    CHECK(*appnum == 0, "appnum %d", *appnum);
    exercise(parent, 0, rsize, size);
  } else if (strcmp(role, "multi") == 0) {
    /* spawn_multiple: command 0 has argv (multi a), 1 child; command 1 (multi b x), 2. */
    int want_app = rank == 0 ? 0 : 1;
    CHECK(*appnum == want_app, "appnum %d at rank %d", *appnum, rank);
    CHECK(size == 3, "spawn_multiple world size %d", size);
    if (want_app == 0) CHECK(argc == 3 && strcmp(argv[2], "a") == 0, "command 0 argv");
    else CHECK(argc == 4 && strcmp(argv[2], "b") == 0 && strcmp(argv[3], "x") == 0, "command 1 argv");
    int v = 100 * *appnum + rank;
    MPI_OK(MPI_Send(&v, 1, MPI_INT, 0, 9, parent));
  } else if (strcmp(role, "nest") == 0) {
    /* Spawns a grandchild from a spawned job, checks it, tells the parents. */
    MPI_Comm grand;
    char *gargv[] = {"grandchild", NULL};
    int err = -1;
    MPI_OK(MPI_Comm_spawn(argv[0], gargv, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &grand, &err));
    CHECK(err == MPI_SUCCESS, "grandchild errcode %d", err);
    int v = 0;
    if (rank == 0) MPI_OK(MPI_Recv(&v, 1, MPI_INT, 0, 3, grand, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(v == 4242, "grandchild said %d", v);
    MPI_OK(MPI_Comm_disconnect(&grand));
    v += rank;
    MPI_OK(MPI_Send(&v, 1, MPI_INT, 0, 4, parent));
  } else if (strcmp(role, "mix") == 0) {
    mixed_halves(parent, 1);
  } else if (strcmp(role, "grandchild") == 0) {
    int v = 4242;
    MPI_OK(MPI_Send(&v, 1, MPI_INT, 0, 3, parent));
  } else {
    CHECK(0, "unknown role '%s'", role);
  }
  MPI_OK(MPI_Comm_disconnect(&parent));
  CHECK(parent == MPI_COMM_NULL, "disconnect left the parent handle");
  MPI_OK(MPI_Comm_get_parent(&parent));
  CHECK(parent == MPI_COMM_NULL, "MPI_Comm_get_parent after disconnecting the parent");
  MPI_OK(MPI_Finalize());
  return 0;
}

/* Spawns n children (on `host` when not NULL: an info "host" value). */
static void spawn_children(const char *self, int n, const char *host) {
  char nbuf[16];
  snprintf(nbuf, sizeof nbuf, "%d", n);
  char *cargv[] = {"child", nbuf, "two words", NULL};
  int errcodes[3] = {-1, -1, -1};
  MPI_Comm inter;
  MPI_Info info = MPI_INFO_NULL;
  if (host) {
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "host", host));
  }
  MPI_OK(MPI_Comm_spawn(self, cargv, n, info, 0, MPI_COMM_WORLD, &inter, errcodes));
  if (host) MPI_OK(MPI_Info_free(&info));
  for (int i = 0; i < n; i++) CHECK(errcodes[i] == MPI_SUCCESS, "errcode[%d] = %d", i, errcodes[i]);
  exercise(inter, 1, t_size, n);
  MPI_OK(MPI_Comm_disconnect(&inter));
}

static void spawn_two_commands(const char *self) {
  char *commands[2] = {(char *)self, (char *)self};
  char *argv0[] = {"multi", "a", NULL}, *argv1[] = {"multi", "b", "x", NULL};
  char **argvs[2] = {argv0, argv1};
  int maxprocs[2] = {1, 2};
  MPI_Info infos[2];
  MPI_OK(MPI_Info_create(&infos[0]));
  MPI_OK(MPI_Info_set(infos[0], "wdir", "/"));
  infos[1] = MPI_INFO_NULL;
  MPI_Comm inter;
  int errcodes[3];
  MPI_OK(MPI_Comm_spawn_multiple(2, commands, argvs, maxprocs, infos, t_size - 1, MPI_COMM_WORLD,
                                 &inter, errcodes));
  MPI_OK(MPI_Info_free(&infos[0]));
  int rsize;
  MPI_OK(MPI_Comm_remote_size(inter, &rsize));
  CHECK(rsize == 3, "spawn_multiple remote size %d", rsize);
  if (t_rank == 0)
    for (int c = 0; c < 3; c++) {
      int v;
      MPI_OK(MPI_Recv(&v, 1, MPI_INT, c, 9, inter, MPI_STATUS_IGNORE));
      CHECK(v == (c == 0 ? 0 : 100 + c), "child %d of spawn_multiple said %d", c, v);
    }
  MPI_OK(MPI_Comm_disconnect(&inter));
}

static void spawn_mixed(const char *self) {
  char *margv[] = {"mix", NULL};
  MPI_Comm inter;
  MPI_OK(MPI_Comm_spawn(self, margv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE));
  mixed_halves(inter, 0);
  MPI_OK(MPI_Comm_disconnect(&inter));
}

static void spawn_nested(const char *self) {
  char *nargv[] = {"nest", NULL};
  MPI_Comm inter;
  MPI_OK(MPI_Comm_spawn(self, nargv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                        MPI_ERRCODES_IGNORE));
  if (t_rank == 0)
    for (int c = 0; c < 2; c++) {
      int v;
      MPI_OK(MPI_Recv(&v, 1, MPI_INT, c, 4, inter, MPI_STATUS_IGNORE));
      CHECK(v == 4242 + c, "nested child %d said %d", c, v);
    }
  MPI_OK(MPI_Comm_disconnect(&inter));
}

/* Fails with MPI_ERR_SPAWN at every parent; the root's message names `what`. */
static void expect_spawn_error(int rc, MPI_Comm inter, const char *what) {
  CHECK(class_of(rc) == MPI_ERR_SPAWN, "%s: class %d", what, class_of(rc));
  CHECK(inter == MPI_COMM_NULL, "%s: an intercommunicator from a failed spawn", what);
  char msg[MPI_MAX_ERROR_STRING];
  int len;
  MPI_OK(MPI_Error_string(rc, msg, &len));
  CHECK_CROSSMPI(strstr(msg, "MPI_Comm_spawn") != NULL, "%s: message %s", what, msg);
  if (t_rank == 0) CHECK_CROSSMPI(strstr(msg, what) != NULL, "message lacks %s: %s", what, msg);
}

static void spawn_errors(void) {
  MPI_Comm inter = MPI_COMM_NULL;
  int err[2] = {-1, -1};
  int rc = MPI_Comm_spawn("./no-such-program", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0,
                          MPI_COMM_WORLD, &inter, err);
  expect_spawn_error(rc, inter, "no-such-program");
  if (t_rank == 0)
    CHECK_CROSSMPI(class_of(err[0]) == MPI_ERR_SPAWN && class_of(err[1]) == MPI_ERR_SPAWN,
                   "errcodes of a refused spawn: %d %d", err[0], err[1]);
  rc = MPI_Comm_spawn("/bin/true", MPI_ARGV_NULL, t_rank == 0 ? 0 : 1, MPI_INFO_NULL, 0,
                      MPI_COMM_WORLD, &inter, err);
  expect_spawn_error(rc, inter, "maxprocs");
  rc = MPI_Comm_spawn(t_rank == 0 ? NULL : "/bin/true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0,
                      MPI_COMM_WORLD, &inter, err);
  expect_spawn_error(rc, inter, "command");
  MPI_Info info;
  MPI_OK(MPI_Info_create(&info));
  MPI_OK(MPI_Info_set(info, "wdir", "/no/such/directory"));
  rc = MPI_Comm_spawn("/bin/true", MPI_ARGV_NULL, 1, info, 0, MPI_COMM_WORLD, &inter, err);
  MPI_OK(MPI_Info_free(&info));
  expect_spawn_error(rc, inter, "wdir");
}

int main(int argc, char **argv) {
  MPI_OK(MPI_Init(&argc, &argv));
  MPI_Comm parent;
  MPI_OK(MPI_Comm_get_parent(&parent));
  if (parent != MPI_COMM_NULL) return child(argc, argv, parent);
  t_setup("dyn_spawn");
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  if (argc > 2 && strcmp(argv[1], "host") == 0) {
    /* tests/suites/dynamic.sh: children on another host, through the launch agent. */
    spawn_children(argv[0], 3, argv[2]);
    t_finish();
    return 0;
  }
  spawn_children(argv[0], 1, NULL);
  spawn_children(argv[0], 3, NULL);
  spawn_two_commands(argv[0]);
  spawn_nested(argv[0]);
  spawn_mixed(argv[0]);
  /* Open MPI 4.1 ends the whole job when a spawned program cannot be started. */
  if (!t_peer()) spawn_errors();
  t_finish();
  return 0;
}
