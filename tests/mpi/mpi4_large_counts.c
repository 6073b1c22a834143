// ranks: 2 3
/* Large-count (_c) point-to-point: every send mode, nonblocking and persistent forms,
 * Sendrecv(_replace)_c, Mrecv_c/Imrecv_c and the attached buffer's _c calls move data
 * like their int twins. MPI_Count arguments are not truncated to int: a receive posted
 * with count 2^32+5 takes a 10-byte message (truncation to 5 would fail with
 * MPI_ERR_TRUNCATE), and MPI_Status_set_elements_c with 2^33 elements reads back through
 * MPI_Get_elements_c / MPI_Get_count_c while the int MPI_Get_count says MPI_UNDEFINED.
 * With CROSSMPI_TEST_BIG=1 ranks 0 and 1 also exchange one message of 2^31+8 bytes
 * (MPI_Send_c / MPI_Recv_c, 2 x 2 GiB of memory), checked end to end. */
#include "common.h"

#define N 5000

static void ring(int mode) {
  int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
  int *s = t_alloc(N * sizeof(int)), *r = t_alloc(N * sizeof(int));
  for (int i = 0; i < N; i++) s[i] = t_rank * 100000 + mode * 10000 + i;
  MPI_Request req;
  MPI_Status st;
  MPI_Count n = N;
  MPI_OK(MPI_Irecv_c(r, n, MPI_INT, left, mode, MPI_COMM_WORLD, &req));
  t_barrier(); /* the receive is posted: ready mode is legal */
  switch (mode) {
  case 0: MPI_OK(MPI_Ssend_c(s, n, MPI_INT, right, mode, MPI_COMM_WORLD)); break;
  case 1: MPI_OK(MPI_Rsend_c(s, n, MPI_INT, right, mode, MPI_COMM_WORLD)); break;
  case 2: MPI_OK(MPI_Bsend_c(s, n, MPI_INT, right, mode, MPI_COMM_WORLD)); break;
  default: {
    MPI_Request sr;
    if (mode == 3) MPI_OK(MPI_Issend_c(s, n, MPI_INT, right, mode, MPI_COMM_WORLD, &sr));
    else if (mode == 4) MPI_OK(MPI_Irsend_c(s, n, MPI_INT, right, mode, MPI_COMM_WORLD, &sr));
    else MPI_OK(MPI_Ibsend_c(s, n, MPI_INT, right, mode, MPI_COMM_WORLD, &sr));
    MPI_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
  }
  }
  MPI_OK(MPI_Wait(&req, &st));
  MPI_Count got = -1;
  MPI_OK(MPI_Get_count_c(&st, MPI_INT, &got));
  CHECK(got == N, "mode %d: count %lld", mode, (long long)got);
  for (int i = 0; i < N; i++)
    CHECK(r[i] == left * 100000 + mode * 10000 + i, "mode %d: element %d is %d", mode, i, r[i]);
  free(s);
  free(r);
  t_barrier();
}

static void persistent(void) {
  int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
  long long sv = 0, rv = -1;
  MPI_Request reqs[2];
  for (int kind = 0; kind < 4; kind++) {
    MPI_OK(MPI_Recv_init_c(&rv, 1, MPI_LONG_LONG, left, 40 + kind, MPI_COMM_WORLD, &reqs[0]));
    switch (kind) {
    case 0: MPI_OK(MPI_Send_init_c(&sv, 1, MPI_LONG_LONG, right, 40, MPI_COMM_WORLD, &reqs[1])); break;
    case 1: MPI_OK(MPI_Ssend_init_c(&sv, 1, MPI_LONG_LONG, right, 41, MPI_COMM_WORLD, &reqs[1])); break;
    case 2: MPI_OK(MPI_Bsend_init_c(&sv, 1, MPI_LONG_LONG, right, 42, MPI_COMM_WORLD, &reqs[1])); break;
    default: MPI_OK(MPI_Rsend_init_c(&sv, 1, MPI_LONG_LONG, right, 43, MPI_COMM_WORLD, &reqs[1])); break;
    }
    for (int round = 0; round < 3; round++) {
      sv = t_rank * 1000 + kind * 10 + round;
      MPI_OK(MPI_Start(&reqs[0]));
      t_barrier(); /* every receive is posted before a ready send starts */
      MPI_OK(MPI_Start(&reqs[1]));
      MPI_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
      CHECK(rv == left * 1000 + kind * 10 + round, "persistent kind %d round %d: got %lld", kind, round, rv);
      t_barrier();
    }
    MPI_OK(MPI_Request_free(&reqs[0]));
    MPI_OK(MPI_Request_free(&reqs[1]));
  }
}

static void sendrecv_and_matched(void) {
  int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
  int s = t_rank, r = -1;
  MPI_Status st;
  MPI_OK(MPI_Sendrecv_c(&s, 1, MPI_INT, right, 50, &r, 1, MPI_INT, left, 50, MPI_COMM_WORLD, &st));
  CHECK(r == left && st.MPI_SOURCE == left, "Sendrecv_c got %d from %d", r, st.MPI_SOURCE);
  int x = t_rank;
  MPI_OK(MPI_Sendrecv_replace_c(&x, 1, MPI_INT, right, 51, left, 51, MPI_COMM_WORLD, &st));
  CHECK(x == left, "Sendrecv_replace_c got %d", x);

  /* Mprobe + Mrecv_c, Improbe + Imrecv_c */
  MPI_OK(MPI_Send_c(&s, 1, MPI_INT, right, 52, MPI_COMM_WORLD));
  MPI_OK(MPI_Send_c(&s, 1, MPI_INT, right, 53, MPI_COMM_WORLD));
  MPI_Message m;
  MPI_OK(MPI_Mprobe(left, 52, MPI_COMM_WORLD, &m, &st));
  r = -1;
  MPI_OK(MPI_Mrecv_c(&r, 1, MPI_INT, &m, &st));
  CHECK(r == left && m == MPI_MESSAGE_NULL, "Mrecv_c got %d", r);
  int flag = 0;
  while (!flag) MPI_OK(MPI_Improbe(left, 53, MPI_COMM_WORLD, &flag, &m, &st));
  MPI_Request req;
  r = -1;
  MPI_OK(MPI_Imrecv_c(&r, 1, MPI_INT, &m, &req));
  MPI_OK(MPI_Wait(&req, &st));
  CHECK(r == left, "Imrecv_c got %d", r);
  t_barrier();
}

static void counts_not_truncated(void) {
  int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
  char s[10], r[16];
  memset(s, 'a' + t_rank, sizeof s);
  MPI_Status st;
  MPI_Request req;
  /* The receive claims 2^32+5 bytes of room; only 10 arrive, so the library must never
   * touch beyond them. Truncated to int, the count would be 5 and the receive fail. */
  MPI_OK(MPI_Irecv_c(r, ((MPI_Count)1 << 32) + 5, MPI_BYTE, left, 60, MPI_COMM_WORLD, &req));
  MPI_OK(MPI_Send_c(s, 10, MPI_BYTE, right, 60, MPI_COMM_WORLD));
  MPI_OK(MPI_Wait(&req, &st));
  MPI_Count c = 0;
  MPI_OK(MPI_Get_count_c(&st, MPI_BYTE, &c));
  CHECK(c == 10 && r[9] == 'a' + left, "count %lld byte %c", (long long)c, r[9]);

  MPI_Status fake;
  MPI_Count big = (MPI_Count)1 << 33;
  MPI_OK(MPI_Status_set_elements_c(&fake, MPI_INT, big));
  MPI_Count e = 0;
  MPI_OK(MPI_Get_elements_c(&fake, MPI_INT, &e));
  CHECK(e == big, "Get_elements_c after Status_set_elements_c(2^33): %lld", (long long)e);
  MPI_OK(MPI_Get_count_c(&fake, MPI_INT, &e));
  CHECK(e == big, "Get_count_c: %lld", (long long)e);
  int small = 0;
  MPI_OK(MPI_Get_count(&fake, MPI_INT, &small));
  CHECK(small == MPI_UNDEFINED, "int Get_count of 2^33 elements: %d, expected MPI_UNDEFINED", small);
  MPI_OK(MPI_Status_set_elements_x(&fake, MPI_SHORT, 3));
  MPI_OK(MPI_Get_elements_x(&fake, MPI_SHORT, &e));
  CHECK(e == 3, "Status_set_elements_x: %lld", (long long)e);
  MPI_OK(MPI_Status_set_elements(&fake, MPI_DOUBLE, 4));
  MPI_OK(MPI_Get_count(&fake, MPI_DOUBLE, &small));
  CHECK(small == 4, "Status_set_elements: %d", small);
  t_barrier();
}

static void buffer_calls(void) {
  MPI_Count size = 1 << 20;
  void *b = t_alloc((size_t)size);
  MPI_OK(MPI_Buffer_attach_c(b, size));
  ring(2);
  ring(5);
  persistent();
  void *addr = NULL;
  MPI_Count got = 0;
  MPI_OK(MPI_Buffer_detach_c(&addr, &got));
  CHECK(addr == b && got == size, "Buffer_detach_c returned %p/%lld, attached %p/%lld", addr, (long long)got, b, (long long)size);
  free(b);
}

static void big_message(void) {
  const char *v = getenv("CROSSMPI_TEST_BIG");
  int big = v != NULL && strcmp(v, "1") == 0;
  size_t n = ((size_t)1 << 31) + 8;
  unsigned char *buf = big && t_rank <= 1 ? malloc(n) : NULL;
  if (big && t_rank <= 1) {
    CHECK(buf != NULL, "cannot allocate %zu bytes", n);
    for (size_t i = 0; i < n; i++) buf[i] = t_rank == 0 ? (unsigned char)(i * 7 + (i >> 20)) : 0;
  }
  t_barrier(); /* the transfer alone is timed */
  if (!big || t_rank > 1) {
    t_barrier();
    return;
  }
  MPI_Status st;
  double t0 = MPI_Wtime();
  if (t_rank == 0) {
    MPI_OK(MPI_Send_c(buf, (MPI_Count)n, MPI_BYTE, 1, 70, MPI_COMM_WORLD));
  } else {
    MPI_OK(MPI_Recv_c(buf, (MPI_Count)n, MPI_BYTE, 0, 70, MPI_COMM_WORLD, &st));
    double dt = MPI_Wtime() - t0;
    MPI_Count c = 0;
    MPI_OK(MPI_Get_count_c(&st, MPI_BYTE, &c));
    CHECK((size_t)c == n, "big message count %lld", (long long)c);
    for (size_t i = 0; i < n; i++)
      CHECK(buf[i] == (unsigned char)(i * 7 + (i >> 20)), "big message byte %zu", i);
    printf("big message: %zu bytes received in %.2f s (%.2f GB/s)\n", n, dt, n / dt / 1e9);
  }
  free(buf);
  t_barrier();
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "mpi4_large_counts");
  for (int mode = 0; mode < 5; mode++)
    if (mode != 2) ring(mode);
  sendrecv_and_matched();
  counts_not_truncated();
  buffer_calls();
  big_message();
  t_finish();
  return 0;
}
