// ranks: 1 2 3 4 5 7 8
/* User-defined operators in every reducing collective. The non-commutative one
 * multiplies 2x2 matrices modulo a prime: the result is the product in rank order
 * (M_0 * M_1 * ... * M_{n-1}) and only that order gives it, so any algorithm combining
 * in another order fails. A commutative user operator (sum) runs through the large
 * vector paths too. Both operators call MPI themselves (as Open MPI and MPICH allow),
 * in blocking and nonblocking collectives. */
#include "common.h"

/* What the operators' own MPI calls found wrong, checked after each collective. */
static int op_calls, op_bad;

static void op_asks_mpi(MPI_Datatype type, int type_size) {
  int size = -1, rank = -1, bytes = -1, flag = 0, level = -1;
  op_calls++;
  if (MPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS || size != t_size) op_bad++;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS || rank != t_rank) op_bad++;
  if (MPI_Type_size(type, &bytes) != MPI_SUCCESS || bytes != type_size) op_bad++;
  if (MPI_Initialized(&flag) != MPI_SUCCESS || !flag) op_bad++;
  if (MPI_Query_thread(&level) != MPI_SUCCESS || level < MPI_THREAD_SINGLE) op_bad++;
}

#define P 1000003u
typedef struct { unsigned a, b, c, d; } mat;

static mat mul(mat x, mat y) {
  mat r;
  r.a = (unsigned)(((unsigned long)x.a * y.a + (unsigned long)x.b * y.c) % P);
  r.b = (unsigned)(((unsigned long)x.a * y.b + (unsigned long)x.b * y.d) % P);
  r.c = (unsigned)(((unsigned long)x.c * y.a + (unsigned long)x.d * y.c) % P);
  r.d = (unsigned)(((unsigned long)x.c * y.b + (unsigned long)x.d * y.d) % P);
  return r;
}

/* MPI: inout = in op inout, with `in` the lower ranks' part. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *type) {
  op_asks_mpi(*type, (int)sizeof(mat));
  mat *x = in, *y = inout;
  for (int i = 0; i < *len; i++) y[i] = mul(x[i], y[i]);
}

static void usum(void *in, void *inout, int *len, MPI_Datatype *type) {
  op_asks_mpi(*type, (int)sizeof(int));
  int *x = in, *y = inout;
  for (int i = 0; i < *len; i++) y[i] += x[i];
}

/* Element i of rank r's contribution. */
static mat m_of(int r, int i) {
  mat m = {(unsigned)(r + 2 + i), 1u, (unsigned)(3 * r + 1), (unsigned)(i % 5)};
  return m;
}

/* Product of ranks lo..hi-1 for element i. */
static mat prod(int lo, int hi, int i) {
  mat acc = {1, 0, 0, 1};
  for (int r = lo; r < hi; r++) acc = mul(acc, m_of(r, i));
  return acc;
}

static int same(mat x, mat y) { return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d; }

int main(int argc, char **argv) {
  t_init(&argc, &argv, "coll_userop");
  int n = t_size;
  MPI_Datatype mt;
  MPI_OK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mt));
  MPI_OK(MPI_Type_commit(&mt));
  MPI_Op nc, cs;
  MPI_OK(MPI_Op_create(matmul, 0, &nc));
  MPI_OK(MPI_Op_create(usum, 1, &cs));
  int commute = -1;
  MPI_OK(MPI_Op_commutative(nc, &commute));
  CHECK(commute == 0, "matmul is not commutative");

  int counts[] = {1, 3, 5000};
  for (int c = 0; c < 3; c++) {
    int k = counts[c];
    mat *in = t_alloc(sizeof(mat) * k), *out = t_alloc(sizeof(mat) * k);
    for (int i = 0; i < k; i++) in[i] = m_of(t_rank, i);
    for (int root = 0; root < n; root++) {
      MPI_OK(MPI_Reduce(in, out, k, mt, nc, root, MPI_COMM_WORLD));
      if (t_rank == root)
        for (int i = 0; i < k; i++) CHECK(same(out[i], prod(0, n, i)), "reduce k %d root %d [%d] out of order", k, root, i);
      if (t_rank == root) {
        memcpy(out, in, sizeof(mat) * k);
        MPI_OK(MPI_Reduce(MPI_IN_PLACE, out, k, mt, nc, root, MPI_COMM_WORLD));
        for (int i = 0; i < k; i++) CHECK(same(out[i], prod(0, n, i)), "reduce in place k %d root %d", k, root);
      } else {
        MPI_OK(MPI_Reduce(in, NULL, k, mt, nc, root, MPI_COMM_WORLD));
      }
    }
    MPI_OK(MPI_Allreduce(in, out, k, mt, nc, MPI_COMM_WORLD));
    for (int i = 0; i < k; i++) CHECK(same(out[i], prod(0, n, i)), "allreduce k %d [%d]", k, i);
    memcpy(out, in, sizeof(mat) * k);
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, out, k, mt, nc, MPI_COMM_WORLD));
    for (int i = 0; i < k; i++) CHECK(same(out[i], prod(0, n, i)), "allreduce in place k %d [%d]", k, i);
    MPI_OK(MPI_Scan(in, out, k, mt, nc, MPI_COMM_WORLD));
    for (int i = 0; i < k; i++) CHECK(same(out[i], prod(0, t_rank + 1, i)), "scan k %d [%d]", k, i);
    MPI_OK(MPI_Exscan(in, out, k, mt, nc, MPI_COMM_WORLD));
    if (t_rank > 0)
      for (int i = 0; i < k; i++) CHECK(same(out[i], prod(0, t_rank, i)), "exscan k %d [%d]", k, i);
    free(in);
    free(out);
  }
  /* reduce_scatter_block: block r of the product goes to rank r */
  int k = 2;
  mat *in = t_alloc(sizeof(mat) * n * k), out[2];
  for (int i = 0; i < n * k; i++) in[i] = m_of(t_rank, i);
  MPI_OK(MPI_Reduce_scatter_block(in, out, k, mt, nc, MPI_COMM_WORLD));
  for (int i = 0; i < k; i++) CHECK(same(out[i], prod(0, n, t_rank * k + i)), "reduce_scatter_block [%d]", i);
  free(in);

  /* commutative user operator over small and large vectors */
  int big = 70000;
  int *x = t_alloc(sizeof(int) * big), *y = t_alloc(sizeof(int) * big);
  for (int i = 0; i < big; i++) x[i] = t_rank + i;
  MPI_OK(MPI_Allreduce(x, y, big, MPI_INT, cs, MPI_COMM_WORLD));
  for (int i = 0; i < big; i++) CHECK(y[i] == n * (n - 1) / 2 + n * i, "user sum [%d] = %d", i, y[i]);
  MPI_OK(MPI_Reduce(x, y, 5, MPI_INT, cs, n - 1, MPI_COMM_WORLD));
  if (t_rank == n - 1)
    for (int i = 0; i < 5; i++) CHECK(y[i] == n * (n - 1) / 2 + n * i, "user sum reduce [%d]", i);

  /* nonblocking, completed by MPI_Test (the operator runs between tests) and MPI_Wait */
  MPI_Request req;
  MPI_OK(MPI_Iallreduce(x, y, 1000, MPI_INT, cs, MPI_COMM_WORLD, &req));
  for (int done = 0; !done;) MPI_OK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
  for (int i = 0; i < 1000; i++) CHECK(y[i] == n * (n - 1) / 2 + n * i, "iallreduce user sum [%d]", i);
  mat mine = m_of(t_rank, 0), got;
  MPI_OK(MPI_Iscan(&mine, &got, 1, mt, nc, MPI_COMM_WORLD, &req));
  MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK(same(got, prod(0, t_rank + 1, 0)), "iscan out of order");
  CHECK(op_bad == 0, "%d of the operators' %d MPI call rounds went wrong", op_bad, op_calls);
  CHECK(n == 1 || op_calls > 0, "no operator ran");
  free(x);
  free(y);

  /* predefined operators on other types */
  long long ll = (long long)t_rank << 33, llmax = 0;
  MPI_OK(MPI_Allreduce(&ll, &llmax, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD));
  CHECK(llmax == (long long)(n - 1) << 33, "long long max");
  unsigned char bits = (unsigned char)(1u << (t_rank % 8)), bor = 0;
  MPI_OK(MPI_Allreduce(&bits, &bor, 1, MPI_UNSIGNED_CHAR, MPI_BOR, MPI_COMM_WORLD));
  CHECK(bor == (unsigned char)((1u << (n < 8 ? n : 8)) - 1), "bor = %u", bor);
  int land = 0, one = t_rank + 1;
  MPI_OK(MPI_Allreduce(&one, &land, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
  CHECK(land == 1, "land");
  float fp = 2.0f, fprod = 0;
  MPI_OK(MPI_Allreduce(&fp, &fprod, 1, MPI_FLOAT, MPI_PROD, MPI_COMM_WORLD));
  CHECK(fprod == (float)(1 << n), "float prod %f", fprod);
  struct { int v; int i; } mi = {t_rank % 3, t_rank}, mo;
  MPI_OK(MPI_Allreduce(&mi, &mo, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD));
  CHECK(mo.v == 0 && mo.i == 0, "minloc (%d,%d)", mo.v, mo.i);

  MPI_OK(MPI_Op_free(&nc));
  MPI_OK(MPI_Op_free(&cs));
  MPI_OK(MPI_Type_free(&mt));
  t_finish();
  return 0;
}
