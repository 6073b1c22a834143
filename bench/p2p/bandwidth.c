/* Streaming bandwidth from rank 0 to rank 1, like osu_bw: a window of 64 nonblocking
 * sends (one send buffer, one receive buffer, as osu_bw does) then a short
 * acknowledgement, repeated; MB/s (10^6 bytes per second) for 1 B to 4 MiB. Each
 * size's data is checked once with distinct contents per window slot before timing. */
#include "bench.h"

#define WINDOW 64

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) die("bandwidth needs exactly 2 ranks", size);
  unsigned char *buf = bench_alloc(MAX_SIZE), *check = bench_alloc((size_t)WINDOW * 4096);
  MPI_Request req[WINDOW];
  int ack = 0;
  for (long n = 1; n <= MAX_SIZE; n *= 2) {
    /* data check: WINDOW messages, each distinct, at most 4 KiB apiece */
    long cn = n < 4096 ? n : 4096;
    for (int w = 0; w < WINDOW; w++) {
      if (rank == 0) {
        fill(check + w * cn, (size_t)cn, w);
        MPI_Isend(check + w * cn, (int)cn, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &req[w]);
      } else {
        MPI_Irecv(check + w * cn, (int)cn, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &req[w]);
      }
    }
    MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
    if (rank == 1)
      for (int w = 0; w < WINDOW; w++) verify(check + w * cn, (size_t)cn, w, "bandwidth");
    if (rank == 0) fill(buf, (size_t)n, 7);
    if (rank == 0) MPI_Send(buf, (int)n, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
    else {
      MPI_Recv(buf, (int)n, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      verify(buf, (size_t)n, 7, "bandwidth");
    }

    int loops = n <= 8192 ? 100 : 20, warmup = n <= 8192 ? 10 : 2;
    double t0 = 0;
    for (int l = 0; l < warmup + loops; l++) {
      if (l == warmup) t0 = MPI_Wtime();
      if (rank == 0) {
        for (int w = 0; w < WINDOW; w++) MPI_Isend(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &req[w]);
        MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
        MPI_Recv(&ack, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        for (int w = 0; w < WINDOW; w++) MPI_Irecv(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &req[w]);
        MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
        MPI_Send(&ack, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
      }
    }
    double secs = MPI_Wtime() - t0;
    if (rank == 0) result("bandwidth", n, (double)n * WINDOW * loops / secs / 1e6);
  }
  free(buf);
  free(check);
  MPI_Finalize();
  return 0;
}
