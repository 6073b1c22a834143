// ranks: 1 2 4
/* MPI_Sendrecv and MPI_Sendrecv_replace: a ring shift in both directions for sizes
 * from 0 B to 4 MiB (both halves large at once must not deadlock), a non-periodic
 * shift with MPI_PROC_NULL at the ends, wildcard source/tag on the receive half. */
#include "common.h"

static const int sizes[] = {0, 1, 8, 1000, 65536, 1 << 20, 4 << 20};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define MAXN (4 << 20)

int main(int argc, char **argv) {
  t_init(&argc, &argv, "sendrecv");
  int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
  char *sbuf = t_alloc(MAXN), *rbuf = t_alloc(MAXN);
  MPI_Status st;

  for (int i = 0; i < NSIZES; i++) {
    int n = sizes[i];
    for (int dir = 0; dir < 2; dir++) {
      int dest = dir ? left : right, src = dir ? right : left;
      t_fill(sbuf, (size_t)n, (unsigned)(t_rank * 100 + i * 2 + dir));
      memset(rbuf, 0, (size_t)n);
      MPI_OK(MPI_Sendrecv(sbuf, n, MPI_BYTE, dest, i, rbuf, MAXN, MPI_BYTE, dir ? MPI_ANY_SOURCE : src,
                          dir ? MPI_ANY_TAG : i, MPI_COMM_WORLD, &st));
      CHECK_STATUS(st, src, i, n);
      CHECK_PATTERN(rbuf, (size_t)n, (unsigned)(src * 100 + i * 2 + dir), "MPI_Sendrecv");
      CHECK_PATTERN(sbuf, (size_t)n, (unsigned)(t_rank * 100 + i * 2 + dir), "MPI_Sendrecv send buffer changed");

      t_fill(sbuf, (size_t)n, (unsigned)(t_rank * 100 + 50 + i * 2 + dir));
      MPI_OK(MPI_Sendrecv_replace(sbuf, n, MPI_BYTE, dest, 100 + i, src, 100 + i, MPI_COMM_WORLD, &st));
      CHECK_STATUS(st, src, 100 + i, n);
      CHECK_PATTERN(sbuf, (size_t)n, (unsigned)(src * 100 + 50 + i * 2 + dir), "MPI_Sendrecv_replace");
    }
  }

  /* non-periodic shift right: rank 0 receives nothing, the last rank sends nothing */
  int out = t_rank + 500, in = -1;
  int dest = t_rank + 1 < t_size ? t_rank + 1 : MPI_PROC_NULL, src = t_rank > 0 ? t_rank - 1 : MPI_PROC_NULL;
  MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, dest, 7, &in, 1, MPI_INT, src, 7, MPI_COMM_WORLD, &st));
  if (src == MPI_PROC_NULL) {
    CHECK(in == -1 && st.MPI_SOURCE == MPI_PROC_NULL, "shift from MPI_PROC_NULL: value %d source %d", in,
          st.MPI_SOURCE);
  } else {
    CHECK(in == src + 500 && st.MPI_SOURCE == src, "shift: value %d source %d, expected %d from %d", in,
          st.MPI_SOURCE, src + 500, src);
  }
  int v = t_rank + 900;
  MPI_OK(MPI_Sendrecv_replace(&v, 1, MPI_INT, dest, 8, src, 8, MPI_COMM_WORLD, &st));
  CHECK(v == (src == MPI_PROC_NULL ? t_rank + 900 : src + 900), "shift with MPI_Sendrecv_replace: value %d", v);
  free(sbuf);
  free(rbuf);
  t_finish();
  return 0;
}
