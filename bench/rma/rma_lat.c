/* One-sided latency and bandwidth between ranks 0 and 1 (rank 1 is the passive
 * target, waiting in a barrier): put+flush, get+flush, accumulate+flush and
 * fetch_and_op+flush latency for 8 bytes, put bandwidth for 1 MiB. Prints "kind bytes median_us MB/s" lines. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

enum { REPS = 2000, BIG = 1 << 20, BIGREPS = 50 };

static double median(double *v, int n) {
  qsort(v, n, sizeof *v, cmp);
  return v[n / 2];
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  char *mem;
  MPI_Win win;
  MPI_Win_allocate(BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  char *buf = calloc(BIG, 1);
  static double t[REPS];
  const char *names[] = {"put", "get", "acc", "fop"};
  long one = 1, old;
  MPI_Win_lock_all(0, win);
  if (me == 0) {
    for (int k = 0; k < 4; k++) {
      for (int i = 0; i < REPS; i++) {
        double s = MPI_Wtime();
        if (k == 0) MPI_Put(buf, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
        if (k == 1) MPI_Get(buf, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
        if (k == 2) MPI_Accumulate(buf, 1, MPI_LONG, 1, 0, 1, MPI_LONG, MPI_SUM, win);
        if (k == 3) MPI_Fetch_and_op(&one, &old, MPI_LONG, 1, 0, MPI_SUM, win);
        MPI_Win_flush(1, win);
        t[i] = MPI_Wtime() - s;
      }
      printf("%s 8 %.2f -\n", names[k], median(t, REPS) * 1e6);
    }
    for (int i = 0; i < BIGREPS; i++) {
      double s = MPI_Wtime();
      MPI_Put(buf, BIG, MPI_BYTE, 1, 0, BIG, MPI_BYTE, win);
      MPI_Win_flush(1, win);
      t[i] = MPI_Wtime() - s;
    }
    double m = median(t, BIGREPS);
    printf("put %d %.2f %.0f\n", BIG, m * 1e6, BIG / m / 1e6);
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  free(buf);
  MPI_Finalize();
  return 0;
}
