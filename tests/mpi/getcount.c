// ranks: 1 2 4
/* MPI_Get_count and MPI_Get_elements: counts in the receive datatype, MPI_UNDEFINED
 * when the received bytes are not a whole number of that type (Get_count) or of its
 * basic elements (Get_elements), element counts of a pair type (MPI_2INT) received
 * partly, zero-length messages. Each rank sends to the next rank in a ring. */
#include "common.h"

static int to, from;

/* Sends n bytes (pattern seeded with n) to the next rank and receives the previous
 * rank's into buf as `cap` elements of `type`. */
static void roundtrip(void *buf, int n, MPI_Datatype type, int cap, MPI_Status *st) {
  unsigned char out[64];
  MPI_Request req;
  t_fill(out, (size_t)n, (unsigned)n);
  MPI_OK(MPI_Isend(out, n, MPI_BYTE, to, n, MPI_COMM_WORLD, &req));
  MPI_OK(MPI_Recv(buf, cap, type, from, n, MPI_COMM_WORLD, st));
  MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK_PATTERN(buf, (size_t)n, (unsigned)n, "received bytes");
}

static void expect_counts(const MPI_Status *st, MPI_Datatype type, const char *tname, int count, int elements) {
  int c = -7, e = -7;
  MPI_OK(MPI_Get_count(st, type, &c));
  MPI_OK(MPI_Get_elements(st, type, &e));
  CHECK(c == count, "MPI_Get_count(%s) = %d, expected %d", tname, c, count);
  if (type == MPI_2INT) /* the standard defines MPI_2INT as a pair of MPI_INT (elements); Open MPI
                         * counts the pair as one element, MPICH gives MPI_UNDEFINED for a partial pair */
    CHECK_CROSSMPI(e == elements, "MPI_Get_elements(%s) = %d, expected %d", tname, e, elements);
  else
    CHECK(e == elements, "MPI_Get_elements(%s) = %d, expected %d", tname, e, elements);
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "getcount");
  to = (t_rank + 1) % t_size;
  from = (t_rank + t_size - 1) % t_size;
  int ints[16];
  double dbl[8];
  MPI_Status st;

  roundtrip(ints, 40, MPI_INT, 16, &st); /* 10 ints */
  expect_counts(&st, MPI_INT, "MPI_INT", 10, 10);
  expect_counts(&st, MPI_BYTE, "MPI_BYTE", 40, 40);
  expect_counts(&st, MPI_SHORT, "MPI_SHORT", 20, 20);
  expect_counts(&st, MPI_DOUBLE, "MPI_DOUBLE", 5, 5);
  expect_counts(&st, MPI_2INT, "MPI_2INT", 5, 10);

  roundtrip(ints, 7, MPI_BYTE, 64, &st); /* not a whole number of ints */
  expect_counts(&st, MPI_INT, "MPI_INT", MPI_UNDEFINED, MPI_UNDEFINED);
  expect_counts(&st, MPI_BYTE, "MPI_BYTE", 7, 7);

  roundtrip(ints, 12, MPI_2INT, 8, &st); /* one and a half MPI_2INT: 3 ints */
  expect_counts(&st, MPI_2INT, "MPI_2INT", MPI_UNDEFINED, 3);
  expect_counts(&st, MPI_INT, "MPI_INT", 3, 3);

  roundtrip(dbl, 12, MPI_BYTE, 64, &st); /* 1.5 doubles */
  expect_counts(&st, MPI_DOUBLE, "MPI_DOUBLE", MPI_UNDEFINED, MPI_UNDEFINED);

  roundtrip(ints, 0, MPI_INT, 16, &st);
  expect_counts(&st, MPI_INT, "MPI_INT", 0, 0);
  expect_counts(&st, MPI_2INT, "MPI_2INT", 0, 0);

  MPI_OK(MPI_Recv(ints, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
  expect_counts(&st, MPI_INT, "MPI_INT (from MPI_PROC_NULL)", 0, 0);
  t_finish();
  return 0;
}
