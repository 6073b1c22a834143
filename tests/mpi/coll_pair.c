// ranks: 2 4
// args: same mixed
/* Collectives on communicators of two members (crossmpi's light path for small blocking
 * collectives there, coll/pair.rs): every collective of the path at sizes below and
 * above the shared-memory eager limit, in place, with a strided datatype, with a
 * non-commutative operator; long runs of back-to-back broadcasts (the root runs ahead
 * until the ring fills); a wildcard user receive posted on the communicator all along
 * (it must never match collective traffic); nonblocking collectives in flight around
 * blocking ones. "mixed": rank 0 asks for MPI_THREAD_MULTIPLE (which keeps the general
 * schedule engine) while its partner does not, so both paths must agree on the wire. */
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

static int me; /* rank in the pair */

static void check_sizes(MPI_Comm pair) {
  const int counts[] = {0, 1, 2, 250, 9000, 20000}; /* ints: up to 80 KB, past the eager limit */
  for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
    int n = counts[k];
    int *a = malloc(2 * (n + 1) * sizeof(int)), *b = malloc(2 * (n + 1) * sizeof(int));
    /* bcast from each root */
    for (int root = 0; root < 2; root++) {
      for (int i = 0; i < n; i++) a[i] = me == root ? i * 3 + root : -1;
      MPI_OK(MPI_Bcast(a, n, MPI_INT, root, pair));
      for (int i = 0; i < n; i++) CHECK(a[i] == i * 3 + root, "bcast n=%d root=%d [%d]=%d", n, root, i, a[i]);
    }
    /* allreduce, separate buffers and in place */
    for (int i = 0; i < n; i++) a[i] = i + 100 * me;
    MPI_OK(MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, pair));
    for (int i = 0; i < n; i++) CHECK(b[i] == 2 * i + 100, "allreduce n=%d [%d]=%d", n, i, b[i]);
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_INT, MPI_MAX, pair));
    for (int i = 0; i < n; i++) CHECK(a[i] == i + 100, "allreduce in place n=%d [%d]=%d", n, i, a[i]);
    /* alltoall */
    for (int p = 0; p < 2; p++)
      for (int i = 0; i < n; i++) a[p * n + i] = 1000 * me + 10 * p + i;
    MPI_OK(MPI_Alltoall(a, n, MPI_INT, b, n, MPI_INT, pair));
    for (int p = 0; p < 2; p++)
      for (int i = 0; i < n; i++)
        CHECK(b[p * n + i] == 1000 * p + 10 * me + i, "alltoall n=%d from %d [%d]=%d", n, p, i, b[p * n + i]);
    MPI_OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, n, MPI_INT, pair));
    for (int p = 0; p < 2; p++)
      for (int i = 0; i < n; i++)
        CHECK(a[p * n + i] == 1000 * p + 10 * me + i, "alltoall in place n=%d [%d]=%d", n, i, a[p * n + i]);
    /* allgather, separate and in place */
    for (int i = 0; i < n; i++) a[i] = 7 * me + i;
    MPI_OK(MPI_Allgather(a, n, MPI_INT, b, n, MPI_INT, pair));
    for (int p = 0; p < 2; p++)
      for (int i = 0; i < n; i++) CHECK(b[p * n + i] == 7 * p + i, "allgather n=%d [%d]=%d", n, i, b[p * n + i]);
    for (int i = 0; i < n; i++) b[me * n + i] = 5 * me + i, b[(1 - me) * n + i] = -1;
    MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, n, MPI_INT, pair));
    for (int p = 0; p < 2; p++)
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
  int a[8], b[16];
  for (int i = 0; i < 8; i++) a[i] = i % 2 ? -5 : 10 * me + i;
  for (int i = 0; i < 16; i++) b[i] = -9;
  MPI_OK(MPI_Allgather(a, 1, every_other, b, 1, every_other, pair));
  for (int p = 0; p < 2; p++)
    for (int i = 0; i < 8; i++)
      CHECK(b[p * 8 + i] == (i % 2 ? -9 : 10 * p + i), "strided allgather [%d][%d]=%d", p, i, b[p * 8 + i]);
  for (int i = 0; i < 8; i++) a[i] = i % 2 ? -5 : (me == 1 ? 3 * i : -1);
  MPI_OK(MPI_Bcast(a, 1, every_other, 1, pair));
  for (int i = 0; i < 8; i++) CHECK(a[i] == (i % 2 ? -5 : 3 * i), "strided bcast [%d]=%d", i, a[i]);
  MPI_OK(MPI_Type_free(&every_other));

  MPI_Datatype mt;
  MPI_OK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mt));
  MPI_OK(MPI_Type_commit(&mt));
  MPI_Op op;
  MPI_OK(MPI_Op_create(matmul, 0, &op));
  mat m[2] = {{1, 2, 3, 4}, {5, 6, 7, 8}}, want, got;
  want = m[1];
  matmul(&m[0], &want, &(int){1}, NULL); /* m0 * m1 */
  MPI_OK(MPI_Allreduce(&m[me], &got, 1, mt, op, pair));
  CHECK(!memcmp(&got, &want, sizeof got), "non-commutative allreduce out of rank order");
  MPI_OK(MPI_Op_free(&op));
  MPI_OK(MPI_Type_free(&mt));
}

static void check_streams(MPI_Comm pair) {
  /* back to back: the root runs ahead, the ring fills, later calls take the queue */
  for (int root = 0; root < 2; root++) {
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
    CHECK(sum == 2 * i + 1, "allreduce %d of a stream: %d", i, sum);
  }
}

static void check_isolation(MPI_Comm pair) {
  /* a wildcard user receive stays posted through all collectives */
  int got = -1, one = 42;
  MPI_Request user;
  MPI_OK(MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, pair, &user));
  /* nonblocking collectives in flight around blocking ones on the same communicator */
  int x = me + 1, sum = 0, y[2] = {0, 0};
  MPI_Request nb[2];
  MPI_OK(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, pair, &nb[0]));
  MPI_OK(MPI_Ibarrier(pair, &nb[1]));
  check_sizes(pair);
  MPI_OK(MPI_Allgather(&x, 1, MPI_INT, y, 1, MPI_INT, pair));
  CHECK(y[0] == 1 && y[1] == 2, "allgather between nonblocking collectives: %d %d", y[0], y[1]);
  MPI_OK(MPI_Waitall(2, nb, MPI_STATUSES_IGNORE));
  CHECK(sum == 3, "iallreduce: %d", sum);
  int flag;
  MPI_OK(MPI_Test(&user, &flag, MPI_STATUS_IGNORE));
  CHECK(!flag, "the wildcard user receive matched collective traffic (got %d)", got);
  MPI_OK(MPI_Barrier(pair)); /* both tested before either sends */
  MPI_Status st;
  MPI_OK(MPI_Send(&one, 1, MPI_INT, 1 - me, 5 + me, pair));
  MPI_OK(MPI_Wait(&user, &st));
  CHECK(got == 42 && st.MPI_TAG == 6 - me, "user message: %d tag %d", got, st.MPI_TAG);
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
    fprintf(stderr, "FAIL coll_pair: MPI_Init_thread failed\n");
    return 1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  t_setup("coll_pair");
  if (multiple) CHECK(provided == MPI_THREAD_MULTIPLE || t_peer(), "provided %d", provided);
  MPI_Comm pair;
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, wrank / 2, wrank, &pair));
  MPI_OK(MPI_Comm_rank(pair, &me));
  int n;
  MPI_OK(MPI_Comm_size(pair, &n));
  CHECK(n == 2, "pair of size %d", n);
  check_isolation(pair);
  check_strided_and_user_op(pair);
  check_streams(pair);
  MPI_OK(MPI_Comm_free(&pair));
  t_finish();
  return 0;
}
