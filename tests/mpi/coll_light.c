// ranks: 2 4 8
// args: same mixed
/* Collectives on communicators of one node's members (crossmpi's light path for small
 * blocking collectives, coll/light.rs), on pairs, on the whole world (up to 8 members)
 * and on communicators of one member: every collective of the path at sizes below and
 * above the shared-memory eager limit, in place, with a strided datatype, with a
 * non-commutative operator (rank order); long runs of back-to-back broadcasts (the root runs ahead until the rings
 * fill); a wildcard user receive posted on the communicator all along (it must never
 * match collective traffic); nonblocking collectives in flight around blocking ones.
 * "mixed": rank 0 runs at MPI_THREAD_MULTIPLE, where its wait lets go of the lock
 * between polls, while the others do not: every member must still take the same path. */
#include "common.h"

#define P 1000003u
typedef struct { unsigned a, b, c, d; } mat;

/* inout = in * inout (2x2 matrices mod P): only rank order gives the right product. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  mat *x = in, *y = inout;
  for (int i = 0; i < *len; i++) {
    mat r;
    r.a = (unsigned)(((unsigned long)x[i].a * y[i].a + (unsigned long)x[i].b * y[i].c) % P);
    r.b = (unsigned)(((unsigned long)x[i].a * y[i].b + (unsigned long)x[i].b * y[i].d) % P);
    r.c = (unsigned)(((unsigned long)x[i].c * y[i].a + (unsigned long)x[i].d * y[i].c) % P);
    r.d = (unsigned)(((unsigned long)x[i].c * y[i].b + (unsigned long)x[i].d * y[i].d) % P);
    y[i] = r;
  }
}

static int me, size; /* rank and size of the communicator under test */

static void check_sizes(MPI_Comm pair) {
  const int counts[] = {0, 1, 2, 250, 9000, 20000}; /* ints: up to 80 KB, past the eager limit */
  for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
    int n = counts[k];
    int *a = malloc(size * (n + 1) * sizeof(int)), *b = malloc(size * (n + 1) * sizeof(int));
    /* bcast from each root */
    for (int root = 0; root < size; root++) {
      for (int i = 0; i < n; i++) a[i] = me == root ? i * 3 + root : -1;
      MPI_OK(MPI_Bcast(a, n, MPI_INT, root, pair));
      for (int i = 0; i < n; i++) CHECK(a[i] == i * 3 + root, "bcast n=%d root=%d [%d]=%d", n, root, i, a[i]);
    }
    /* allreduce, separate buffers and in place */
    for (int i = 0; i < n; i++) a[i] = i + 100 * me;
    MPI_OK(MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, pair));
    for (int i = 0; i < n; i++)
      CHECK(b[i] == size * i + 100 * size * (size - 1) / 2, "allreduce n=%d [%d]=%d", n, i, b[i]);
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_INT, MPI_MAX, pair));
    for (int i = 0; i < n; i++) CHECK(a[i] == i + 100 * (size - 1), "allreduce in place n=%d [%d]=%d", n, i, a[i]);
    /* alltoall */
    for (int p = 0; p < size; p++)
      for (int i = 0; i < n; i++) a[p * n + i] = 1000 * me + 10 * p + i;
    MPI_OK(MPI_Alltoall(a, n, MPI_INT, b, n, MPI_INT, pair));
    for (int p = 0; p < size; p++)
      for (int i = 0; i < n; i++)
        CHECK(b[p * n + i] == 1000 * p + 10 * me + i, "alltoall n=%d from %d [%d]=%d", n, p, i, b[p * n + i]);
    MPI_OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, n, MPI_INT, pair));
    for (int p = 0; p < size; p++)
      for (int i = 0; i < n; i++)
        CHECK(a[p * n + i] == 1000 * p + 10 * me + i, "alltoall in place n=%d [%d]=%d", n, i, a[p * n + i]);
    /* allgather, separate and in place */
    for (int i = 0; i < n; i++) a[i] = 7 * me + i;
    MPI_OK(MPI_Allgather(a, n, MPI_INT, b, n, MPI_INT, pair));
    for (int p = 0; p < size; p++)
      for (int i = 0; i < n; i++) CHECK(b[p * n + i] == 7 * p + i, "allgather n=%d [%d]=%d", n, i, b[p * n + i]);
    for (int p = 0; p < size; p++)
      for (int i = 0; i < n; i++) b[p * n + i] = p == me ? 5 * me + i : -1;
    MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, n, MPI_INT, pair));
    for (int p = 0; p < size; p++)
      for (int i = 0; i < n; i++) CHECK(b[p * n + i] == 5 * p + i, "allgather in place n=%d [%d]=%d", n, i, b[p * n + i]);
    MPI_OK(MPI_Barrier(pair));
    free(a);
    free(b);
  }
}

static void check_strided_and_user_op(MPI_Comm pair) {
  /* every other int of 8 (extent 8 ints): a non-contiguous type on both sides */
  MPI_Datatype vec, every_other;
  MPI_OK(MPI_Type_vector(4, 1, 2, MPI_INT, &vec));
  MPI_OK(MPI_Type_create_resized(vec, 0, 8 * sizeof(int), &every_other));
  MPI_OK(MPI_Type_free(&vec));
  MPI_OK(MPI_Type_commit(&every_other));
  int a[8], b[8 * 8];
  for (int i = 0; i < 8; i++) a[i] = i % 2 ? -5 : 10 * me + i;
  for (int i = 0; i < 8 * size; i++) b[i] = -9;
  MPI_OK(MPI_Allgather(a, 1, every_other, b, 1, every_other, pair));
  for (int p = 0; p < size; p++)
    for (int i = 0; i < 8; i++)
      CHECK(b[p * 8 + i] == (i % 2 ? -9 : 10 * p + i), "strided allgather [%d][%d]=%d", p, i, b[p * 8 + i]);
  for (int i = 0; i < 8; i++) a[i] = i % 2 ? -5 : (me == size - 1 ? 3 * i : -1);
  MPI_OK(MPI_Bcast(a, 1, every_other, size - 1, pair));
  for (int i = 0; i < 8; i++) CHECK(a[i] == (i % 2 ? -5 : 3 * i), "strided bcast [%d]=%d", i, a[i]);
  MPI_OK(MPI_Type_free(&every_other));

  MPI_Datatype mt;
  MPI_OK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mt));
  MPI_OK(MPI_Type_commit(&mt));
  MPI_Op op;
  MPI_OK(MPI_Op_create(matmul, 0, &op));
  mat m[8], want, got;
  for (int p = 0; p < size; p++) m[p] = (mat){p + 1, 2 * p + 3, 5 * p + 1, p + 7};
  want = m[size - 1];
  for (int p = size - 2; p >= 0; p--) matmul(&m[p], &want, &(int){1}, NULL); /* m0 * ... * mn-1 */
  MPI_OK(MPI_Allreduce(&m[me], &got, 1, mt, op, pair));
  CHECK(!memcmp(&got, &want, sizeof got), "non-commutative allreduce out of rank order");
  MPI_OK(MPI_Op_free(&op));
  MPI_OK(MPI_Type_free(&mt));
}

static void check_streams(MPI_Comm pair) {
  /* back to back: the root runs ahead, the ring fills, later calls take the queue */
  for (int root = 0; root < size; root++) {
    for (int i = 0; i < 3000; i++) {
      long v = me == root ? i * 11L + root : -1;
      MPI_OK(MPI_Bcast(&v, 1, MPI_LONG, root, pair));
      CHECK(v == i * 11L + root, "bcast %d of a stream from %d: %ld", i, root, v);
    }
  }
  static char big[30000];
  for (int i = 0; i < 200; i++) {
    if (me == 0) memset(big, i & 0xff, sizeof big);
    MPI_OK(MPI_Bcast(big, sizeof big, MPI_CHAR, 0, pair));
    CHECK(big[0] == (char)(i & 0xff) && big[sizeof big - 1] == (char)(i & 0xff), "large bcast %d", i);
  }
  for (int i = 0; i < 2000; i++) {
    int x = i + me, sum;
    MPI_OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, pair));
    CHECK(sum == size * i + size * (size - 1) / 2, "allreduce %d of a stream: %d", i, sum);
  }
}

static void check_isolation(MPI_Comm pair) {
  /* a wildcard user receive stays posted through all collectives */
  int got = -1, one = 42;
  MPI_Request user;
  MPI_OK(MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, pair, &user));
  /* nonblocking collectives in flight around blocking ones on the same communicator */
  int x = me + 1, sum = 0, y[8] = {0};
  MPI_Request nb[2];
  MPI_OK(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, pair, &nb[0]));
  MPI_OK(MPI_Ibarrier(pair, &nb[1]));
  check_sizes(pair);
  MPI_OK(MPI_Allgather(&x, 1, MPI_INT, y, 1, MPI_INT, pair));
  for (int p = 0; p < size; p++) CHECK(y[p] == p + 1, "allgather between nonblocking collectives: [%d]=%d", p, y[p]);
  MPI_OK(MPI_Waitall(2, nb, MPI_STATUSES_IGNORE));
  CHECK(sum == size * (size + 1) / 2, "iallreduce: %d", sum);
  int flag;
  MPI_OK(MPI_Test(&user, &flag, MPI_STATUS_IGNORE));
  CHECK(!flag, "the wildcard user receive matched collective traffic (got %d)", got);
  MPI_OK(MPI_Barrier(pair)); /* everyone tested before anyone sends */
  MPI_Status st;
  int to = (me + 1) % size, from = (me + size - 1) % size;
  MPI_OK(MPI_Send(&one, 1, MPI_INT, to, 5 + me, pair));
  MPI_OK(MPI_Wait(&user, &st));
  CHECK(got == 42 && st.MPI_TAG == 5 + from && st.MPI_SOURCE == from, "user message: %d tag %d", got, st.MPI_TAG);
}

/* The world rank before MPI_Init, from the launcher's environment (-1: unknown). */
static int launcher_rank(void) {
  const char *names[] = {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"};
  for (int i = 0; i < 3; i++)
    if (getenv(names[i])) return atoi(getenv(names[i]));
  return -1;
}

int main(int argc, char **argv) {
  int wrank, provided;
  int mixed = argc > 1 && !strcmp(argv[1], "mixed");
  int multiple = mixed && launcher_rank() == 0;
  if (MPI_Init_thread(&argc, &argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "FAIL coll_light: MPI_Init_thread failed\n");
    return 1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  t_setup("coll_light");
  if (multiple) CHECK(provided == MPI_THREAD_MULTIPLE || t_peer(), "provided %d", provided);
  MPI_Comm pair, world, alone;
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, wrank / 2, wrank, &pair));
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &world));
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, wrank, 0, &alone));
  MPI_Comm comms[3] = {pair, world, alone};
  const int sizes[3] = {2, 0, 1}; /* 0: the world's, up to 8 */
  for (int c = 0; c < 3; c++) {
    MPI_OK(MPI_Comm_rank(comms[c], &me));
    MPI_OK(MPI_Comm_size(comms[c], &size));
    CHECK(size <= 8 && (sizes[c] == 0 || size == sizes[c]), "communicator %d of size %d", c, size);
    check_isolation(comms[c]);
    check_strided_and_user_op(comms[c]);
    check_streams(comms[c]);
  }
  MPI_OK(MPI_Comm_free(&pair));
  MPI_OK(MPI_Comm_free(&world));
  MPI_OK(MPI_Comm_free(&alone));
  t_finish();
  return 0;
}
