// ranks: 2 3 4
/* Non-contiguous point-to-point in a ring (each rank sends to the next, receives from
 * the previous): derived types on either side with matching signatures (3 vectors
 * received as contiguous ints and back), a 4 MiB strided column both ways (the large
 * message paths of every transport), a struct of absolute addresses sent from and
 * received into MPI_BOTTOM, and MPI_Get_count/MPI_Get_elements for a message that
 * ends inside an element of the receive type. */
#include "common.h"
#include <stddef.h>

static int to, from;

/* Receives from the previous rank while sending to the next one. */
static void ring(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, int tag, MPI_Status *st) {
  MPI_Request req;
  MPI_OK(MPI_Irecv(rbuf, rcount, rtype, from, tag, MPI_COMM_WORLD, &req));
  MPI_OK(MPI_Send(sbuf, scount, stype, to, tag, MPI_COMM_WORLD));
  MPI_OK(MPI_Wait(&req, st));
}

/* Value of element i sent by rank r. */
static int ival(int r, int i) { return r * 100000 + i; }
static double dval(int r, long i) { return r * 1e7 + (double)i * 0.5; }

static void small_vectors(void) {
  /* 4 ints with stride 3: 3 of them cover 12 ints of a 30-int array (last element's
   * extent ends at 10 ints, the next starts there) */
  MPI_Datatype vec;
  MPI_OK(MPI_Type_vector(4, 1, 3, MPI_INT, &vec));
  MPI_OK(MPI_Type_commit(&vec));
  int src[40], dense[12];
  for (int i = 0; i < 40; i++) src[i] = ival(t_rank, i);
  MPI_Status st;
  ring(src, 3, vec, dense, 12, MPI_INT, 1, &st);
  CHECK(t_count(&st, MPI_INT) == 12, "received %d ints", t_count(&st, MPI_INT));
  for (int k = 0; k < 12; k++) {
    int at = (k / 4) * 10 + (k % 4) * 3;
    CHECK(dense[k] == ival(from, at), "vector -> ints: int %d is %d, expected %d", k, dense[k],
          ival(from, at));
  }
  /* and back: contiguous ints into 3 vectors; the holes stay as they were */
  int back[40];
  for (int i = 0; i < 40; i++) back[i] = -1;
  int out[12];
  for (int k = 0; k < 12; k++) out[k] = ival(t_rank, k);
  ring(out, 12, MPI_INT, back, 3, vec, 2, &st);
  CHECK(t_count(&st, vec) == 3, "received %d vectors", t_count(&st, vec));
  for (int i = 0; i < 40; i++) {
    int in_vec = i < 30 && (i % 10) % 3 == 0 && (i % 10) < 10 && (i % 10) / 3 < 4;
    int want = in_vec ? ival(from, (i / 10) * 4 + (i % 10) / 3) : -1;
    CHECK(back[i] == want, "ints -> vector: int %d is %d, expected %d", i, back[i], want);
  }
  MPI_OK(MPI_Type_free(&vec));
}

static void large_column(void) {
  /* column 0 of an N x 2 matrix of doubles: N doubles = 4 MiB */
  const long n = 4L * 1024 * 1024 / 8;
  MPI_Datatype col;
  MPI_OK(MPI_Type_vector((int)n, 1, 2, MPI_DOUBLE, &col));
  MPI_OK(MPI_Type_commit(&col));
  double *m = t_alloc(sizeof(double) * 2 * n), *dense = t_alloc(sizeof(double) * n);
  for (long i = 0; i < n; i++) {
    m[2 * i] = dval(t_rank, i);
    m[2 * i + 1] = -1.0;
  }
  MPI_Status st;
  ring(m, 1, col, dense, (int)n, MPI_DOUBLE, 3, &st);
  CHECK(t_count(&st, MPI_DOUBLE) == n, "received %d doubles", t_count(&st, MPI_DOUBLE));
  for (long i = 0; i < n; i++)
    if (dense[i] != dval(from, i))
      CHECK(0, "column -> dense: double %ld is %g, expected %g", i, dense[i], dval(from, i));
  /* and back into the column; the other column is untouched */
  for (long i = 0; i < n; i++) dense[i] = dval(t_rank, i) + 0.25;
  for (long i = 0; i < 2 * n; i++) m[i] = -2.0;
  ring(dense, (int)n, MPI_DOUBLE, m, 1, col, 4, &st);
  for (long i = 0; i < n; i++) {
    if (m[2 * i] != dval(from, i) + 0.25)
      CHECK(0, "dense -> column: row %ld is %g, expected %g", i, m[2 * i], dval(from, i) + 0.25);
    if (m[2 * i + 1] != -2.0) CHECK(0, "dense -> column: the hole at row %ld was written", i);
  }
  free(m);
  free(dense);
  MPI_OK(MPI_Type_free(&col));
}

static void bottom(void) {
  /* two unrelated variables, described by absolute addresses */
  int x[5];
  double y[3];
  for (int i = 0; i < 5; i++) x[i] = ival(t_rank, i);
  for (int i = 0; i < 3; i++) y[i] = dval(t_rank, i);
  MPI_Aint ax, ay;
  MPI_OK(MPI_Get_address(x, &ax));
  MPI_OK(MPI_Get_address(y, &ay));
  MPI_Datatype abs_send;
  MPI_OK(MPI_Type_create_struct(2, (int[]){5, 3}, (MPI_Aint[]){ax, ay},
                                (MPI_Datatype[]){MPI_INT, MPI_DOUBLE}, &abs_send));
  MPI_OK(MPI_Type_commit(&abs_send));
  /* receive into other variables, also through MPI_BOTTOM */
  int rx[5] = {0};
  double ry[3] = {0};
  MPI_Aint arx, ary;
  MPI_OK(MPI_Get_address(rx, &arx));
  MPI_OK(MPI_Get_address(ry, &ary));
  MPI_Datatype abs_recv;
  MPI_OK(MPI_Type_create_struct(2, (int[]){5, 3}, (MPI_Aint[]){arx, ary},
                                (MPI_Datatype[]){MPI_INT, MPI_DOUBLE}, &abs_recv));
  MPI_OK(MPI_Type_commit(&abs_recv));
  MPI_Status st;
  ring(MPI_BOTTOM, 1, abs_send, MPI_BOTTOM, 1, abs_recv, 5, &st);
  for (int i = 0; i < 5; i++) CHECK(rx[i] == ival(from, i), "MPI_BOTTOM int %d is %d", i, rx[i]);
  for (int i = 0; i < 3; i++) CHECK(ry[i] == dval(from, i), "MPI_BOTTOM double %d is %g", i, ry[i]);
  MPI_OK(MPI_Type_free(&abs_send));
  MPI_OK(MPI_Type_free(&abs_recv));
}

static void partial_elements(void) {
  /* sent: int, double, int; received as {int, double} pairs: 1.5 pairs, 3 elements */
  struct ids { int i; double d; int j; } s = {ival(t_rank, 1), dval(t_rank, 2), ival(t_rank, 3)};
  MPI_Datatype three, pair;
  MPI_OK(MPI_Type_create_struct(3, (int[]){1, 1, 1},
                                (MPI_Aint[]){offsetof(struct ids, i), offsetof(struct ids, d),
                                             offsetof(struct ids, j)},
                                (MPI_Datatype[]){MPI_INT, MPI_DOUBLE, MPI_INT}, &three));
  MPI_OK(MPI_Type_commit(&three));
  struct id { int i; double d; } r[2] = {{0, 0}, {0, 0}};
  MPI_OK(MPI_Type_create_struct(2, (int[]){1, 1},
                                (MPI_Aint[]){offsetof(struct id, i), offsetof(struct id, d)},
                                (MPI_Datatype[]){MPI_INT, MPI_DOUBLE}, &pair));
  MPI_OK(MPI_Type_commit(&pair));
  MPI_Status st;
  ring(&s, 1, three, r, 2, pair, 6, &st);
  CHECK(r[0].i == ival(from, 1) && r[0].d == dval(from, 2) && r[1].i == ival(from, 3),
        "pairs received %d %g %d", r[0].i, r[0].d, r[1].i);
  int count = 0, elements = 0;
  MPI_OK(MPI_Get_count(&st, pair, &count));
  MPI_OK(MPI_Get_elements(&st, pair, &elements));
  CHECK(count == MPI_UNDEFINED, "Get_count of 1.5 pairs is %d, expected MPI_UNDEFINED", count);
  CHECK(elements == 3, "Get_elements of int,double,int is %d, expected 3", elements);
#if MPI_VERSION >= 4
  MPI_Count c_elements = 0;
  MPI_OK(MPI_Get_elements_c(&st, pair, &c_elements));
  CHECK(c_elements == 3, "Get_elements_c is %lld", (long long)c_elements);
#endif
  MPI_OK(MPI_Type_free(&three));
  MPI_OK(MPI_Type_free(&pair));
}

/* Receives posted only after the messages arrived (unexpected eager data, rendezvous
 * requests waiting for their receive): a strided send of 40 ints and of 1 MiB. */
static void late_receives(void) {
  const int n = 1024 * 1024 / 4;
  MPI_Datatype every_other;
  MPI_OK(MPI_Type_vector(n, 1, 2, MPI_INT, &every_other));
  MPI_OK(MPI_Type_commit(&every_other));
  int *src = t_alloc(sizeof(int) * 2 * n), *dst = t_alloc(sizeof(int) * n);
  for (int i = 0; i < 2 * n; i++) src[i] = ival(t_rank, i);
  MPI_Datatype small;
  MPI_OK(MPI_Type_vector(40, 1, 2, MPI_INT, &small));
  MPI_OK(MPI_Type_commit(&small));
  MPI_Request reqs[2];
  MPI_OK(MPI_Isend(src, 1, small, to, 7, MPI_COMM_WORLD, &reqs[0]));
  MPI_OK(MPI_Isend(src, 1, every_other, to, 8, MPI_COMM_WORLD, &reqs[1]));
  t_barrier();
  t_sleep_ms(20);
  MPI_OK(MPI_Recv(dst, 40, MPI_INT, from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  for (int k = 0; k < 40; k++)
    CHECK(dst[k] == ival(from, 2 * k), "late small: int %d is %d", k, dst[k]);
  MPI_OK(MPI_Recv(dst, n, MPI_INT, from, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  for (int k = 0; k < n; k++)
    if (dst[k] != ival(from, 2 * k)) CHECK(0, "late large: int %d is %d", k, dst[k]);
  MPI_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
  free(src);
  free(dst);
  MPI_OK(MPI_Type_free(&small));
  MPI_OK(MPI_Type_free(&every_other));
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "dtype_p2p");
  to = (t_rank + 1) % t_size;
  from = (t_rank + t_size - 1) % t_size;
  small_vectors();
  large_column();
  late_receives();
  bottom();
  partial_elements();
  t_finish();
  return 0;
}
