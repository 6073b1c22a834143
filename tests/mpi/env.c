// ranks: 1 2 4
/* The environment: MPI_Initialized/MPI_Finalized before, during and after,
 * MPI_Get_version (callable before MPI_Init; 5.0 for crossmpi), library version,
 * processor name, MPI_Wtime/MPI_Wtick, MPI_COMM_SELF, and the
 * communicator management the other tests rely on: MPI_Comm_dup (same group, separate
 * matching), MPI_Comm_split (color, key order, MPI_UNDEFINED) and MPI_Comm_free. */
#include "common.h"
#include <ctype.h>

static int contains_ci(const char *hay, const char *needle) {
  for (; *hay; hay++) {
    size_t i = 0;
    while (needle[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
    if (!needle[i]) return 1;
  }
  return 0;
}

static void versions(void) {
  int v = -1, sv = -1, len = -1;
  MPI_OK(MPI_Get_version(&v, &sv));
  CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION, "MPI_Get_version %d.%d, header says %d.%d", v, sv, MPI_VERSION,
        MPI_SUBVERSION);
  CHECK_CROSSMPI(v == 5 && sv == 0, "MPI_Get_version %d.%d, expected 5.0", v, sv);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  memset(lib, 'x', sizeof lib);
  MPI_OK(MPI_Get_library_version(lib, &len));
  CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING, "library version length %d", len);
  CHECK(memchr(lib, '\0', sizeof lib) != NULL && strlen(lib) > 0, "library version is not a C string");
  /* the standard: len characters, the null stored at lib[len]; Open MPI 4.1 counts the null */
  CHECK_CROSSMPI((int)strlen(lib) == len, "library version length %d, strlen %zu", len, strlen(lib));
  CHECK_CROSSMPI(contains_ci(lib, "crossmpi"), "library version '%s' does not name crossmpi", lib);
}

static void clocks(void) {
  double tick = MPI_Wtick();
  CHECK(tick > 0 && tick <= 0.01, "MPI_Wtick %g", tick);
  double prev = MPI_Wtime();
  for (int i = 0; i < 100000; i++) {
    double now = MPI_Wtime();
    CHECK(now >= prev, "MPI_Wtime went back from %.9f to %.9f", prev, now);
    prev = now;
  }
  double t0 = MPI_Wtime();
  t_sleep_ms(100);
  double dt = MPI_Wtime() - t0;
  CHECK(dt >= 0.099 && dt < 2.0, "100 ms sleep measured as %.6f s", dt);
}

static void comm_self(void) {
  int size = -1, rank = -1, v = t_rank, in = -1;
  MPI_OK(MPI_Comm_size(MPI_COMM_SELF, &size));
  MPI_OK(MPI_Comm_rank(MPI_COMM_SELF, &rank));
  CHECK(size == 1 && rank == 0, "MPI_COMM_SELF size %d rank %d", size, rank);
  MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, 0, 1, &in, 1, MPI_INT, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE));
  CHECK(in == t_rank, "send to self on MPI_COMM_SELF got %d", in);
}

static void dup_and_free(void) {
  MPI_Comm d, dd;
  int size, rank, flag = 1, v = 5, in = -1;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
  MPI_OK(MPI_Comm_size(d, &size));
  MPI_OK(MPI_Comm_rank(d, &rank));
  CHECK(size == t_size && rank == t_rank, "dup: size %d rank %d", size, rank);
  MPI_OK(MPI_Comm_dup(d, &dd));
  /* a message on the duplicate is invisible to the original */
  MPI_Request req;
  MPI_OK(MPI_Isend(&v, 1, MPI_INT, t_rank, 1, dd, &req));
  MPI_OK(MPI_Iprobe(t_rank, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
  CHECK(!flag, "a message sent on a duplicate matched on MPI_COMM_WORLD");
  MPI_OK(MPI_Iprobe(t_rank, 1, d, &flag, MPI_STATUS_IGNORE));
  CHECK(!flag, "a message sent on a duplicate of a duplicate matched on the first duplicate");
  MPI_OK(MPI_Recv(&in, 1, MPI_INT, t_rank, 1, dd, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK(in == 5, "receive on the duplicate got %d", in);
  MPI_OK(MPI_Comm_free(&dd));
  CHECK(dd == MPI_COMM_NULL, "MPI_Comm_free did not set MPI_COMM_NULL");
  MPI_OK(MPI_Comm_free(&d));
  CHECK(d == MPI_COMM_NULL, "MPI_Comm_free did not set MPI_COMM_NULL");
}

static void split(void) {
  MPI_Comm s;
  int color = t_rank % 2, size, rank;
  /* key -rank reverses the order inside each color */
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color, -t_rank, &s));
  int members = (t_size - color + 1) / 2, higher = 0;
  for (int r = t_rank + 1; r < t_size; r++) higher += (r % 2 == color);
  MPI_OK(MPI_Comm_size(s, &size));
  MPI_OK(MPI_Comm_rank(s, &rank));
  CHECK(size == members && rank == higher, "split color %d: size %d rank %d, expected %d and %d", color, size, rank,
        members, higher);
  /* ring inside the new communicator carries world ranks */
  int right = (rank + 1) % size, left = (rank + size - 1) % size, in = -1;
  MPI_OK(MPI_Sendrecv(&t_rank, 1, MPI_INT, right, 2, &in, 1, MPI_INT, left, 2, s, MPI_STATUS_IGNORE));
  int expect_left = t_rank + 2 < t_size ? t_rank + 2 : color; /* left = next lower new rank = next higher world rank */
  if (size == 1) expect_left = t_rank;
  else if (rank == 0) expect_left = color; /* wraps around to the highest new rank = lowest world rank */
  CHECK(in == expect_left, "split ring: got world rank %d from the left, expected %d", in, expect_left);
  MPI_OK(MPI_Comm_free(&s));

  /* equal keys keep world order; MPI_UNDEFINED gives MPI_COMM_NULL */
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2 ? MPI_UNDEFINED : 0, 0, &s));
  if (t_rank % 2) {
    CHECK(s == MPI_COMM_NULL, "MPI_Comm_split with MPI_UNDEFINED did not return MPI_COMM_NULL");
  } else {
    MPI_OK(MPI_Comm_rank(s, &rank));
    MPI_OK(MPI_Comm_size(s, &size));
    CHECK(rank == t_rank / 2 && size == (t_size + 1) / 2, "split with equal keys: rank %d size %d", rank, size);
    MPI_OK(MPI_Comm_free(&s));
  }
}

int main(int argc, char **argv) {
  int flag = -1;
  t_name = "env";
  MPI_OK(MPI_Initialized(&flag));
  CHECK(flag == 0, "MPI_Initialized before MPI_Init: %d", flag);
  MPI_OK(MPI_Finalized(&flag));
  CHECK(flag == 0, "MPI_Finalized before MPI_Init: %d", flag);
  versions();
  t_init(&argc, &argv, "env");
  MPI_OK(MPI_Initialized(&flag));
  CHECK(flag == 1, "MPI_Initialized after MPI_Init: %d", flag);
  MPI_OK(MPI_Finalized(&flag));
  CHECK(flag == 0, "MPI_Finalized after MPI_Init: %d", flag);
  versions();

  char name[MPI_MAX_PROCESSOR_NAME];
  int len = -1;
  MPI_OK(MPI_Get_processor_name(name, &len));
  CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME && (int)strlen(name) == len, "processor name length %d", len);
  clocks();
  comm_self();
  dup_and_free();
  split();

  t_barrier();
  MPI_OK(MPI_Comm_free(&t_ctl));
  MPI_OK(MPI_Finalize());
  MPI_OK(MPI_Finalized(&flag));
  CHECK(flag == 1, "MPI_Finalized after MPI_Finalize: %d", flag);
  MPI_OK(MPI_Initialized(&flag));
  CHECK(flag == 1, "MPI_Initialized after MPI_Finalize: %d", flag);
  if (t_rank == 0) printf("OK env\n");
  return 0;
}
