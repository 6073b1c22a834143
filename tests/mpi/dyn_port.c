// ranks: 2 3 4
/* Ports: two groups become one intercommunicator with MPI_Open_port,
 * MPI_Comm_accept and MPI_Comm_connect, which then carries point-to-point messages
 * and collectives, merges (both orders) and disconnects.
 * Without arguments MPI_COMM_WORLD splits in two halves that connect to each other.
 * With "accept FILE" or "connect FILE" the whole job is one side and the port name
 * goes through FILE (tests/suites/dynamic.sh runs two mpiruns that way). */
#include "common.h"
#include <unistd.h>

/* Everything the two groups do over their intercommunicator; `acceptor` says which
 * side this process is on. */
static void exercise(MPI_Comm inter, int acceptor) {
  int flag, lrank, lsize, rsize;
  MPI_OK(MPI_Comm_test_inter(inter, &flag));
  CHECK(flag, "accept/connect made an intracommunicator");
  MPI_OK(MPI_Comm_rank(inter, &lrank));
  MPI_OK(MPI_Comm_size(inter, &lsize));
  MPI_OK(MPI_Comm_remote_size(inter, &rsize));

  /* Point to point: every process sends to remote rank lrank % rsize and receives from
   * every remote process that sends to it. */
  int out = (acceptor ? 1000 : 2000) + lrank, in;
  MPI_Request req;
  MPI_OK(MPI_Isend(&out, 1, MPI_INT, lrank % rsize, 7, inter, &req));
  for (int r = 0; r < rsize; r++) {
    if (r % lsize != lrank) continue;
    MPI_Status st;
    MPI_OK(MPI_Recv(&in, 1, MPI_INT, r, 7, inter, &st));
    CHECK(in == (acceptor ? 2000 : 1000) + r && st.MPI_SOURCE == r, "got %d from %d", in, st.MPI_SOURCE);
  }
  MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));

  /* A large message (rendezvous) from remote rank 0 to remote rank 0. */
  size_t n = 1 << 20;
  char *big = t_alloc(n);
  if (lrank == 0) {
    if (acceptor) {
      t_fill(big, n, 5);
      MPI_OK(MPI_Send(big, (int)n, MPI_CHAR, 0, 8, inter));
    } else {
      MPI_OK(MPI_Recv(big, (int)n, MPI_CHAR, 0, 8, inter, MPI_STATUS_IGNORE));
      CHECK_PATTERN(big, n, 5, "1 MiB across the intercommunicator");
    }
  }
  free(big);

  /* Collectives: a bcast from the accepting side's rank 0, an allreduce, a barrier. */
  int v = acceptor ? 0 : -1;
  if (acceptor) {
    v = 4242;
    MPI_OK(MPI_Bcast(&v, 1, MPI_INT, lrank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
  } else {
    MPI_OK(MPI_Bcast(&v, 1, MPI_INT, 0, inter));
    CHECK(v == 4242, "bcast across: %d", v);
  }
  int sum = 0, mine = lrank + 1;
  MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
  CHECK(sum == rsize * (rsize + 1) / 2, "allreduce gives the remote group's sum: %d", sum);
  MPI_OK(MPI_Barrier(inter));

  /* Merge: the accepting side low, then both "low" (an order both sides agree on). */
  for (int k = 0; k < 2; k++) {
    MPI_Comm merged;
    int high = k == 0 ? !acceptor : 0;
    MPI_OK(MPI_Intercomm_merge(inter, high, &merged));
    int mrank, msize;
    MPI_OK(MPI_Comm_rank(merged, &mrank));
    MPI_OK(MPI_Comm_size(merged, &msize));
    CHECK(msize == lsize + rsize, "merged size %d", msize);
    if (k == 0)
      CHECK(mrank == (acceptor ? lrank : rsize + lrank), "merged rank %d", mrank);
    /* every process sees the same order: the sides are contiguous and in rank order */
    int *all = malloc(sizeof(int) * msize), tagged = (acceptor ? 0 : 1000) + lrank;
    MPI_OK(MPI_Allgather(&tagged, 1, MPI_INT, all, 1, MPI_INT, merged));
    CHECK(all[mrank] == tagged, "allgather slot %d holds %d", mrank, all[mrank]);
    for (int i = 1; i < msize; i++)
      CHECK(all[i] / 1000 != all[i - 1] / 1000 || all[i] == all[i - 1] + 1, "merged order at %d", i);
    int total = 0;
    MPI_OK(MPI_Allreduce(&tagged, &total, 1, MPI_INT, MPI_SUM, merged));
    int expect = 0;
    for (int i = 0; i < msize; i++) expect += all[i];
    CHECK(total == expect, "merged allreduce %d, expected %d", total, expect);
    free(all);
    MPI_OK(MPI_Comm_free(&merged));
  }

  /* A message still in flight when the sender disconnects arrives. */
  if (lrank == 0) {
    int last = acceptor ? 77 : 0;
    if (acceptor)
      MPI_OK(MPI_Send(&last, 1, MPI_INT, 0, 9, inter));
    else {
      MPI_OK(MPI_Recv(&last, 1, MPI_INT, 0, 9, inter, MPI_STATUS_IGNORE));
      CHECK(last == 77, "last message %d", last);
    }
  }
  MPI_OK(MPI_Comm_disconnect(&inter));
  CHECK(inter == MPI_COMM_NULL, "disconnect left the handle");
}

static void write_file(const char *path, const char *text) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  CHECK(f != NULL, "cannot write %s", tmp);
  fputs(text, f);
  fclose(f);
  CHECK(rename(tmp, path) == 0, "rename to %s", path);
}

static void read_file(const char *path, char *buf, size_t n) {
  for (int i = 0; i < 3000; i++) {
    FILE *f = fopen(path, "r");
    if (f != NULL) {
      size_t got = fread(buf, 1, n - 1, f);
      fclose(f);
      buf[got] = '\0';
      if (got > 0) return;
    }
    t_sleep_ms(10);
  }
  CHECK(0, "no port name appeared in %s", path);
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "dyn_port");
  char port[MPI_MAX_PORT_NAME] = "";
  MPI_Comm inter;
  if (argc == 3) {
    /* two jobs: this job is one side */
    int acceptor = strcmp(argv[1], "accept") == 0;
    if (acceptor) {
      if (t_rank == 0) {
        MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
        write_file(argv[2], port);
      }
      MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
      if (t_rank == 0) MPI_OK(MPI_Close_port(port));
    } else {
      if (t_rank == 0) read_file(argv[2], port, sizeof port);
      MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
    }
    exercise(inter, acceptor);
    /* a second connection between the same processes reuses their connections */
    if (acceptor) {
      if (t_rank == 0) {
        MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
        char again[4200];
        snprintf(again, sizeof again, "%s.2", argv[2]);
        write_file(again, port);
      }
      MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
      if (t_rank == 0) MPI_OK(MPI_Close_port(port));
    } else {
      char again[4200];
      snprintf(again, sizeof again, "%s.2", argv[2]);
      if (t_rank == 0) read_file(again, port, sizeof port);
      MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
    }
    exercise(inter, acceptor);
  } else {
    /* one job: the halves of MPI_COMM_WORLD connect */
    int acceptor = t_rank < t_size / 2 || t_size == 1;
    MPI_Comm half;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, acceptor, t_rank, &half));
    if (t_rank == 0) MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
    MPI_OK(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD));
    CHECK(strncmp(port, "crossmpi:tcp:", 13) == 0 || t_peer(), "port name %s", port);
    if (acceptor)
      MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter));
    else
      MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter));
    exercise(inter, acceptor);
    if (t_rank == 0) MPI_OK(MPI_Close_port(port));
    MPI_OK(MPI_Comm_free(&half));
  }
  t_finish();
  return 0;
}
