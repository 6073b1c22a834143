/* Benchmarks across clusters, with iteration counts set by time instead of by count:
 * over a WAN of 10 ms one-way delay the fixed counts of bench/p2p and bench/coll
 * (20000 round trips at 0 B) would take minutes per size. For every cell the program
 * checks the data once, runs a few calibration calls (which also warm up: TCP windows
 * open), and rank 0 then fixes how many timed calls fit in BUDGET seconds (at least
 * MIN_TIMED) and tells the others.
 *
 *   wanbench BUDGET latency               half round trip (us) between ranks 0 and 1
 *   wanbench BUDGET bandwidth             MB/s from rank 0 to 1, windows of 64 sends
 *   wanbench BUDGET coll BYTES...         us per call (mean over ranks) of barrier,
 *                                         bcast, reduce, allreduce, allgather, alltoall,
 *                                         gather, scatter
 * Sizes of latency/bandwidth: 0 (latency only), 1, 4, 16, ... 4 MiB. Collective bytes:
 * bcast/reduce/allreduce the whole vector (reductions: float sums), allgather/gather/
 * scatter per rank, alltoall per pair of ranks. Prints "RESULT <bench> <bytes> <value>"
 * on rank 0, as bench/p2p does. */
#include "../p2p/bench.h"

#define WINDOW 64
#define MIN_TIMED 3
#define MAX_TIMED 200000
#define CALIBRATE 3
#define WARMUP_CELLS 3

static int rank, size;
static double budget;

/* The number of timed calls: what fits in the budget after `calls` calls took `secs`
 * on rank 0, the same on every rank. */
static int timed_calls(double secs, int calls) {
  int n = 0;
  if (rank == 0) {
    double per = secs / calls;
    double fit = per > 0 ? budget / per : MAX_TIMED;
    n = fit < MIN_TIMED ? MIN_TIMED : fit > MAX_TIMED ? MAX_TIMED : (int)fit;
  }
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return n;
}

/* ---- point to point: ranks 0 and 1 -------------------------------------------- */

static void round_trip(unsigned char *s, unsigned char *r, long n) {
  if (rank == 0) {
    MPI_Send(s, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
    MPI_Recv(r, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(r, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(s, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
  }
}

/* One window: rank 0 posts WINDOW sends of n bytes, rank 1 receives them and answers
 * with one small message, so the time covers delivery of all of them. */
static void window(unsigned char *buf, long n) {
  MPI_Request req[WINDOW];
  int ack = 0;
  for (int w = 0; w < WINDOW; w++) {
    if (rank == 0) MPI_Isend(buf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &req[w]);
    else MPI_Irecv(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &req[w]);
  }
  MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
  if (rank == 0) MPI_Recv(&ack, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  else MPI_Send(&ack, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
}

/* One size: checked once, calibrated, timed; half round trip (us) or MB/s. */
static double p2p_cell(int bandwidth, unsigned char *s, unsigned char *r, long n) {
  fill(s, (size_t)n, (int)n + rank);
  round_trip(s, r, n);
  verify(r, (size_t)n, (int)n + 1 - rank, "wanbench");
  double t0 = MPI_Wtime();
  for (int i = 0; i < CALIBRATE; i++) bandwidth ? window(s, n) : round_trip(s, r, n);
  int calls = timed_calls(MPI_Wtime() - t0, CALIBRATE);
  t0 = MPI_Wtime();
  for (int i = 0; i < calls; i++) bandwidth ? window(s, n) : round_trip(s, r, n);
  double secs = MPI_Wtime() - t0;
  return bandwidth ? (double)n * WINDOW * calls / secs / 1e6 : secs * 1e6 / calls / 2;
}

static void point_to_point(int bandwidth) {
  if (size != 2) die("latency and bandwidth need exactly 2 ranks", size);
  unsigned char *s = bench_alloc(MAX_SIZE), *r = bench_alloc(MAX_SIZE);
  long first = bandwidth ? 1 : 0;
  /* Not reported: the first second of a job measured 3-10x slower at 0 and 1 B (both
   * IMPI and TCP, every run), as start-up work elsewhere in the job settles. */
  for (int w = 0; w < WARMUP_CELLS; w++) p2p_cell(bandwidth, s, r, first);
  for (long n = first; n <= MAX_SIZE; n = n ? n * 4 : 1) {
    double value = p2p_cell(bandwidth, s, r, n);
    if (rank == 0) result(bandwidth ? "bandwidth" : "latency", n, value);
  }
  free(s);
  free(r);
}

/* ---- collectives ---------------------------------------------------------------- */

enum coll { BARRIER, BCAST, REDUCE, ALLREDUCE, ALLGATHER, ALLTOALL, GATHER, SCATTER, NCOLL };
static const char *names[NCOLL] = {"barrier", "bcast",    "reduce", "allreduce",
                                   "allgather", "alltoall", "gather", "scatter"};

static void call(enum coll c, long n, char *a, char *b) {
  int k = (int)n;
  switch (c) {
    case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
    case BCAST: MPI_Bcast(a, k, MPI_CHAR, 0, MPI_COMM_WORLD); break;
    case REDUCE: MPI_Reduce(a, b, k / 4, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD); break;
    case ALLREDUCE: MPI_Allreduce(a, b, k / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case ALLGATHER: MPI_Allgather(a, k, MPI_CHAR, b, k, MPI_CHAR, MPI_COMM_WORLD); break;
    case ALLTOALL: MPI_Alltoall(a, k, MPI_CHAR, b, k, MPI_CHAR, MPI_COMM_WORLD); break;
    case GATHER: MPI_Gather(a, k, MPI_CHAR, b, k, MPI_CHAR, 0, MPI_COMM_WORLD); break;
    case SCATTER: MPI_Scatter(a, k, MPI_CHAR, b, k, MPI_CHAR, 0, MPI_COMM_WORLD); break;
    default: break;
  }
}

/* The byte rank `from` contributes at position i of block `to` (bcast, gathers,
 * scatter and alltoall data), and the float every rank contributes (reductions). */
static char byte_of(int from, int to, long i) { return (char)(from * 31 + to * 7 + i); }
static float float_of(int from, long i) { return (float)(from + i % 100); }

/* Runs c once on known data and checks what arrived where the standard says. */
static void check(enum coll c, long n, char *a, char *b) {
  float *x = (float *)a, *y = (float *)b;
  long nf = n / 4;
  for (long p = 0; p < size; p++)
    for (long i = 0; i < n; i++) a[p * n + i] = byte_of(rank, c == ALLTOALL || c == SCATTER ? (int)p : 0, i);
  if (c == BCAST)
    for (long i = 0; i < n; i++) a[i] = rank == 0 ? byte_of(0, 0, i) : 0;
  if (c == REDUCE || c == ALLREDUCE)
    for (long i = 0; i < nf; i++) x[i] = float_of(rank, i);
  call(c, n, a, b);
  int bad = 0;
  for (long p = 0; p < size && !bad; p++)
    for (long i = 0; i < n && !bad; i++) {
      if (c == BCAST && p == 0) bad = a[i] != byte_of(0, 0, i);
      else if (c == ALLGATHER || (c == GATHER && rank == 0)) bad = b[p * n + i] != byte_of((int)p, 0, i);
      else if (c == ALLTOALL) bad = b[p * n + i] != byte_of((int)p, rank, i);
      else if (c == SCATTER && p == 0) bad = b[i] != byte_of(0, rank, i);
    }
  if ((c == REDUCE && rank == 0) || c == ALLREDUCE)
    for (long i = 0; i < nf && !bad; i++) bad = y[i] != (float)(size * (size - 1) / 2) + (float)size * (float)(i % 100);
  if (bad) die(names[c], n);
}

static void collectives(int argc, char **argv) {
  long max = 0;
  for (int i = 0; i < argc; i++) {
    long n = atol(argv[i]);
    if (n < 4 || n > MAX_SIZE || n % 4) die("collective sizes must be multiples of 4 from 4 B to 4 MiB", n);
    if (n > max) max = n;
  }
  char *a = bench_alloc((size_t)max * size), *b = bench_alloc((size_t)max * size);
  for (int c = BARRIER; c < NCOLL; c++) {
    for (int s = 0; s < (c == BARRIER ? 1 : argc); s++) {
      long n = c == BARRIER ? 0 : atol(argv[s]);
      check((enum coll)c, n, a, b);
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int i = 0; i < CALIBRATE; i++) call((enum coll)c, n, a, b);
      int calls = timed_calls(MPI_Wtime() - t0, CALIBRATE);
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
      for (int i = 0; i < calls; i++) call((enum coll)c, n, a, b);
      double per = (MPI_Wtime() - t0) / calls * 1e6, sum = 0;
      MPI_Reduce(&per, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      if (rank == 0) result(names[c], n, sum / size);
    }
  }
  free(a);
  free(b);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  budget = argc > 2 ? atof(argv[1]) : 0;
  if (budget <= 0 || budget > 60) die("usage: wanbench BUDGET_SECONDS latency|bandwidth|coll BYTES...", argc);
  if (strcmp(argv[2], "latency") == 0) point_to_point(0);
  else if (strcmp(argv[2], "bandwidth") == 0) point_to_point(1);
  else if (strcmp(argv[2], "coll") == 0 && argc > 3) collectives(argc - 3, argv + 3);
  else die("usage: wanbench BUDGET_SECONDS latency|bandwidth|coll BYTES...", argc);
  MPI_Finalize();
  return 0;
}
