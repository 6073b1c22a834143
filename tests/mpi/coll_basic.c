// ranks: 1 2 3 4 5 8
/* Every blocking collective on MPI_COMM_WORLD (the barrier's ordering too), every root,
 * with MPI_IN_PLACE where the standard allows it, v-variants with irregular counts (some
 * zero), alltoallw with a datatype per peer, and non-contiguous (vector) buffers. Values
 * depend on rank and index so a block in the wrong place or from the wrong rank shows. */
#include "common.h"

static int val(int rank, int i) { return rank * 1000 + i; }

/* Irregular counts: rank r gets/contributes (r * 3 + 1) % 5 elements (some ranks 0). */
static int vcount(int r) { return (r * 3 + 1) % 5; }

static void bcast_all_roots(int n) {
  int buf[37];
  for (int root = 0; root < n; root++) {
    for (int i = 0; i < 37; i++) buf[i] = t_rank == root ? val(root, i) : -1;
    MPI_OK(MPI_Bcast(buf, 37, MPI_INT, root, MPI_COMM_WORLD));
    for (int i = 0; i < 37; i++) CHECK(buf[i] == val(root, i), "bcast root %d [%d] = %d", root, i, buf[i]);
  }
  /* non-contiguous: every other int of a 20-int array */
  MPI_Datatype every_other;
  MPI_OK(MPI_Type_vector(10, 1, 2, MPI_INT, &every_other));
  MPI_OK(MPI_Type_commit(&every_other));
  int strided[20];
  for (int i = 0; i < 20; i++) strided[i] = t_rank == n - 1 ? val(7, i) : -5;
  MPI_OK(MPI_Bcast(strided, 1, every_other, n - 1, MPI_COMM_WORLD));
  for (int i = 0; i < 20; i++) {
    int want = (i % 2 == 0 || t_rank == n - 1) ? val(7, i) : -5;
    CHECK(strided[i] == want, "strided bcast [%d] = %d, want %d", i, strided[i], want);
  }
  MPI_OK(MPI_Type_free(&every_other));
  /* large enough for scatter + allgather at 4+ ranks */
  int big = 300000;
  int *b = t_alloc(sizeof(int) * big);
  for (int i = 0; i < big; i++) b[i] = t_rank == 0 ? i * 7 : 0;
  MPI_OK(MPI_Bcast(b, big, MPI_INT, 0, MPI_COMM_WORLD));
  for (int i = 0; i < big; i++) CHECK(b[i] == i * 7, "large bcast [%d] = %d", i, b[i]);
  free(b);
}

static void gather_scatter(int n) {
  int k = 3;
  int *all = t_alloc(sizeof(int) * n * k);
  int mine[3];
  for (int root = 0; root < n; root++) {
    for (int i = 0; i < k; i++) mine[i] = val(t_rank, i);
    for (int i = 0; i < n * k; i++) all[i] = -1;
    MPI_OK(MPI_Gather(mine, k, MPI_INT, all, k, MPI_INT, root, MPI_COMM_WORLD));
    if (t_rank == root)
      for (int r = 0; r < n; r++)
        for (int i = 0; i < k; i++) CHECK(all[r * k + i] == val(r, i), "gather root %d from %d", root, r);
    /* in place at the root */
    if (t_rank == root) {
      for (int i = 0; i < n * k; i++) all[i] = -1;
      for (int i = 0; i < k; i++) all[root * k + i] = val(root, i);
      MPI_OK(MPI_Gather(MPI_IN_PLACE, k, MPI_INT, all, k, MPI_INT, root, MPI_COMM_WORLD));
      for (int r = 0; r < n; r++)
        for (int i = 0; i < k; i++) CHECK(all[r * k + i] == val(r, i), "gather in place root %d from %d", root, r);
    } else {
      MPI_OK(MPI_Gather(mine, k, MPI_INT, NULL, 0, MPI_INT, root, MPI_COMM_WORLD));
    }
    /* scatter */
    if (t_rank == root)
      for (int r = 0; r < n; r++)
        for (int i = 0; i < k; i++) all[r * k + i] = val(r + 50, i);
    for (int i = 0; i < k; i++) mine[i] = -1;
    MPI_OK(MPI_Scatter(all, k, MPI_INT, mine, k, MPI_INT, root, MPI_COMM_WORLD));
    for (int i = 0; i < k; i++) CHECK(mine[i] == val(t_rank + 50, i), "scatter root %d [%d] = %d", root, i, mine[i]);
    if (t_rank == root) {
      MPI_OK(MPI_Scatter(all, k, MPI_INT, MPI_IN_PLACE, k, MPI_INT, root, MPI_COMM_WORLD));
      for (int i = 0; i < k; i++) CHECK(all[root * k + i] == val(root + 50, i), "scatter in place kept root block");
    } else {
      for (int i = 0; i < k; i++) mine[i] = -1;
      MPI_OK(MPI_Scatter(NULL, 0, MPI_INT, mine, k, MPI_INT, root, MPI_COMM_WORLD));
      for (int i = 0; i < k; i++) CHECK(mine[i] == val(t_rank + 50, i), "scatter (root in place) [%d]", i);
    }
  }
  free(all);
  /* gatherv / scatterv with irregular counts, displacements in reverse order with gaps */
  int *counts = t_alloc(sizeof(int) * n), *displs = t_alloc(sizeof(int) * n);
  int total = 0;
  for (int r = n - 1; r >= 0; r--) {
    counts[r] = vcount(r);
    displs[r] = total;
    total += counts[r] + 2;
  }
  int *v = t_alloc(sizeof(int) * (total + 1));
  int mv[5];
  for (int root = 0; root < n; root++) {
    for (int i = 0; i < vcount(t_rank); i++) mv[i] = val(t_rank, i);
    for (int i = 0; i < total; i++) v[i] = -7;
    MPI_OK(MPI_Gatherv(mv, vcount(t_rank), MPI_INT, v, counts, displs, MPI_INT, root, MPI_COMM_WORLD));
    if (t_rank == root)
      for (int r = 0; r < n; r++) {
        for (int i = 0; i < counts[r]; i++) CHECK(v[displs[r] + i] == val(r, i), "gatherv root %d from %d [%d]", root, r, i);
        CHECK(v[displs[r] + counts[r]] == -7, "gatherv wrote into a gap");
      }
    if (t_rank == root)
      for (int r = 0; r < n; r++)
        for (int i = 0; i < counts[r]; i++) v[displs[r] + i] = val(r + 9, i);
    for (int i = 0; i < 5; i++) mv[i] = -3;
    MPI_OK(MPI_Scatterv(v, counts, displs, MPI_INT, mv, vcount(t_rank), MPI_INT, root, MPI_COMM_WORLD));
    for (int i = 0; i < vcount(t_rank); i++) CHECK(mv[i] == val(t_rank + 9, i), "scatterv root %d [%d]", root, i);
    CHECK(vcount(t_rank) == 5 || mv[vcount(t_rank)] == -3, "scatterv wrote past its count");
  }
  free(v);
  free(counts);
  free(displs);
}

static void allgathers(int n) {
  for (int k = 1; k <= 2000; k *= 40) {
    int *all = t_alloc(sizeof(int) * n * k), *mine = t_alloc(sizeof(int) * k);
    for (int i = 0; i < k; i++) mine[i] = val(t_rank, i);
    MPI_OK(MPI_Allgather(mine, k, MPI_INT, all, k, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < n; r++)
      for (int i = 0; i < k; i++) CHECK(all[r * k + i] == val(r, i), "allgather k %d from %d [%d]", k, r, i);
    for (int i = 0; i < n * k; i++) all[i] = i / k == t_rank ? val(t_rank + 3, i % k) : -1;
    MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, k, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < n; r++)
      for (int i = 0; i < k; i++) CHECK(all[r * k + i] == val(r + 3, i), "allgather in place k %d from %d", k, r);
    free(all);
    free(mine);
  }
  int *counts = t_alloc(sizeof(int) * n), *displs = t_alloc(sizeof(int) * n);
  int total = 0;
  for (int r = 0; r < n; r++) {
    counts[r] = vcount(r);
    displs[r] = total + 1;
    total += counts[r] + 1;
  }
  int *v = t_alloc(sizeof(int) * (total + 1)), mv[5];
  for (int i = 0; i < vcount(t_rank); i++) mv[i] = val(t_rank, i);
  MPI_OK(MPI_Allgatherv(mv, vcount(t_rank), MPI_INT, v, counts, displs, MPI_INT, MPI_COMM_WORLD));
  for (int r = 0; r < n; r++)
    for (int i = 0; i < counts[r]; i++) CHECK(v[displs[r] + i] == val(r, i), "allgatherv from %d [%d]", r, i);
  for (int i = 0; i < counts[t_rank]; i++) v[displs[t_rank] + i] = val(t_rank + 4, i);
  MPI_OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, counts, displs, MPI_INT, MPI_COMM_WORLD));
  for (int r = 0; r < n; r++)
    for (int i = 0; i < counts[r]; i++)
      CHECK(v[displs[r] + i] == val(r + 4, i), "allgatherv in place from %d [%d]", r, i);
  free(v);
  free(counts);
  free(displs);
}

static void alltoalls(int n) {
  for (int k = 1; k <= 20000; k *= 100) {
    int *s = t_alloc(sizeof(int) * n * k), *r = t_alloc(sizeof(int) * n * k);
    for (int d = 0; d < n; d++)
      for (int i = 0; i < k; i++) s[d * k + i] = val(t_rank * 16 + d, i);
    MPI_OK(MPI_Alltoall(s, k, MPI_INT, r, k, MPI_INT, MPI_COMM_WORLD));
    for (int src = 0; src < n; src++)
      for (int i = 0; i < k; i++) CHECK(r[src * k + i] == val(src * 16 + t_rank, i), "alltoall k %d from %d", k, src);
    MPI_OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s, k, MPI_INT, MPI_COMM_WORLD));
    for (int src = 0; src < n; src++)
      for (int i = 0; i < k; i++) CHECK(s[src * k + i] == val(src * 16 + t_rank, i), "alltoall in place k %d from %d", k, src);
    free(s);
    free(r);
  }
  /* alltoallv: rank a sends (a + b) % 4 elements to rank b */
  int *sc = t_alloc(sizeof(int) * n), *sd = t_alloc(sizeof(int) * n);
  int *rc = t_alloc(sizeof(int) * n), *rd = t_alloc(sizeof(int) * n);
  int st = 0, rt = 0;
  for (int p = 0; p < n; p++) {
    sc[p] = (t_rank + p) % 4;
    sd[p] = st;
    st += sc[p];
    rc[p] = (t_rank + p) % 4;
    rd[p] = rt + 1;
    rt += rc[p] + 1;
  }
  int *s = t_alloc(sizeof(int) * (st + 1)), *r = t_alloc(sizeof(int) * (rt + 1));
  for (int p = 0; p < n; p++)
    for (int i = 0; i < sc[p]; i++) s[sd[p] + i] = val(t_rank * 16 + p, i);
  MPI_OK(MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD));
  for (int p = 0; p < n; p++)
    for (int i = 0; i < rc[p]; i++) CHECK(r[rd[p] + i] == val(p * 16 + t_rank, i), "alltoallv from %d [%d]", p, i);
  /* alltoallw: the same exchange with byte displacements and a datatype per peer */
  MPI_Datatype *types = t_alloc(sizeof(MPI_Datatype) * n);
  int *sdb = t_alloc(sizeof(int) * n), *rdb = t_alloc(sizeof(int) * n);
  for (int p = 0; p < n; p++) {
    types[p] = MPI_INT;
    sdb[p] = sd[p] * (int)sizeof(int);
    rdb[p] = rd[p] * (int)sizeof(int);
  }
  for (int i = 0; i < rt; i++) r[i] = -1;
  MPI_OK(MPI_Alltoallw(s, sc, sdb, types, r, rc, rdb, types, MPI_COMM_WORLD));
  for (int p = 0; p < n; p++)
    for (int i = 0; i < rc[p]; i++) CHECK(r[rd[p] + i] == val(p * 16 + t_rank, i), "alltoallw from %d [%d]", p, i);
  free(types);
  free(sdb);
  free(rdb);
  free(s);
  free(r);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
}

static void reductions(int n) {
  int counts[] = {1, 7, 100000};
  for (int c = 0; c < 3; c++) {
    int k = counts[c];
    int *in = t_alloc(sizeof(int) * k), *out = t_alloc(sizeof(int) * k);
    for (int i = 0; i < k; i++) in[i] = val(t_rank, i % 1000);
    long base_sum = 0;
    for (int r = 0; r < n; r++) base_sum += r * 1000;
    for (int root = 0; root < n; root++) {
      for (int i = 0; i < k; i++) out[i] = -1;
      MPI_OK(MPI_Reduce(in, out, k, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
      if (t_rank == root)
        for (int i = 0; i < k; i++) CHECK(out[i] == base_sum + n * (i % 1000), "reduce k %d root %d [%d] = %d", k, root, i, out[i]);
      if (t_rank == root) {
        for (int i = 0; i < k; i++) out[i] = in[i];
        MPI_OK(MPI_Reduce(MPI_IN_PLACE, out, k, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD));
        for (int i = 0; i < k; i++) CHECK(out[i] == val(n - 1, i % 1000), "reduce in place max k %d", k);
      } else {
        MPI_OK(MPI_Reduce(in, NULL, k, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD));
      }
    }
    MPI_OK(MPI_Allreduce(in, out, k, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < k; i++) CHECK(out[i] == base_sum + n * (i % 1000), "allreduce k %d [%d] = %d", k, i, out[i]);
    for (int i = 0; i < k; i++) out[i] = in[i];
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, out, k, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    for (int i = 0; i < k; i++) CHECK(out[i] == val(0, i % 1000), "allreduce in place min k %d", k);
    /* scan and exscan */
    MPI_OK(MPI_Scan(in, out, k, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < k; i++) {
      long want = 0;
      for (int r = 0; r <= t_rank; r++) want += val(r, i % 1000);
      CHECK(out[i] == want, "scan k %d [%d] = %d want %ld", k, i, out[i], want);
    }
    for (int i = 0; i < k; i++) out[i] = -9;
    MPI_OK(MPI_Exscan(in, out, k, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (t_rank > 0)
      for (int i = 0; i < k; i++) {
        long want = 0;
        for (int r = 0; r < t_rank; r++) want += val(r, i % 1000);
        CHECK(out[i] == want, "exscan k %d [%d] = %d want %ld", k, i, out[i], want);
      }
    for (int i = 0; i < k; i++) out[i] = in[i];
    MPI_OK(MPI_Scan(MPI_IN_PLACE, out, k, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    for (int i = 0; i < k; i++) CHECK(out[i] == val(t_rank, i % 1000), "scan in place max");
    for (int i = 0; i < k; i++) out[i] = in[i];
    MPI_OK(MPI_Exscan(MPI_IN_PLACE, out, k, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (t_rank > 0)
      for (int i = 0; i < k; i++) {
        long want = 0;
        for (int r = 0; r < t_rank; r++) want += val(r, i % 1000);
        CHECK(out[i] == want, "exscan in place [%d]", i);
      }
    free(in);
    free(out);
  }
  /* double sums and MAXLOC on pairs */
  double d = t_rank + 0.5, dsum = 0;
  MPI_OK(MPI_Allreduce(&d, &dsum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  CHECK(dsum == n * (n - 1) / 2.0 + 0.5 * n, "double sum %f", dsum);
  struct { double v; int i; } p = {(double)((t_rank * 5) % n), t_rank}, q;
  MPI_OK(MPI_Allreduce(&p, &q, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
  double best = -1;
  int at = -1;
  for (int r = 0; r < n; r++)
    if ((r * 5) % n > best) best = (r * 5) % n, at = r;
  CHECK(q.v == best && q.i == at, "maxloc (%f,%d) want (%f,%d)", q.v, q.i, best, at);
}

static void reduce_scatters(int n) {
  int *counts = t_alloc(sizeof(int) * n);
  int total = 0;
  for (int r = 0; r < n; r++) total += (counts[r] = vcount(r));
  int *in = t_alloc(sizeof(int) * (total + 1)), *out = t_alloc(sizeof(int) * (total + 1));
  for (int i = 0; i < total; i++) in[i] = val(t_rank, i);
  long rsum = 0;
  for (int r = 0; r < n; r++) rsum += r * 1000;
  int off = 0;
  for (int r = 0; r < t_rank; r++) off += counts[r];
  MPI_OK(MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  for (int i = 0; i < counts[t_rank]; i++) CHECK(out[i] == rsum + n * (off + i), "reduce_scatter [%d] = %d", i, out[i]);
  for (int i = 0; i < total; i++) out[i] = in[i];
  MPI_OK(MPI_Reduce_scatter(MPI_IN_PLACE, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  for (int i = 0; i < counts[t_rank]; i++) CHECK(out[i] == rsum + n * (off + i), "reduce_scatter in place [%d]", i);
  int k = 3;
  int *bin = t_alloc(sizeof(int) * n * k), bout[3];
  for (int i = 0; i < n * k; i++) bin[i] = val(t_rank, i);
  MPI_OK(MPI_Reduce_scatter_block(bin, bout, k, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  for (int i = 0; i < k; i++) CHECK(bout[i] == rsum + n * (t_rank * k + i), "reduce_scatter_block [%d]", i);
  MPI_OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, bin, k, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  for (int i = 0; i < k; i++) CHECK(bin[i] == rsum + n * (t_rank * k + i), "reduce_scatter_block in place [%d]", i);
  free(bin);
  free(in);
  free(out);
  free(counts);
}

/* Nobody leaves a barrier before everyone has entered it: with each rank in turn
 * entering late, every exit time is at or after every entry time (CLOCK_MONOTONIC is
 * one clock for every process of the machine the tests run on). */
static void barrier_order(int n) {
  for (int late = 0; late < n; late++) {
    struct timespec ts;
    if (t_rank == late) t_sleep_ms(2);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double times[2] = {ts.tv_sec + ts.tv_nsec * 1e-9, 0};
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    clock_gettime(CLOCK_MONOTONIC, &ts);
    times[1] = ts.tv_sec + ts.tv_nsec * 1e-9;
    double *all = t_alloc(2 * n * sizeof(double));
    MPI_OK(MPI_Allgather(times, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        CHECK(all[2 * i + 1] >= all[2 * j], "rank %d left the barrier before rank %d entered (late rank %d)", i, j, late);
    free(all);
  }
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "coll_basic");
  int n = t_size;
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  barrier_order(n);
  bcast_all_roots(n);
  gather_scatter(n);
  allgathers(n);
  alltoalls(n);
  reductions(n);
  reduce_scatters(n);
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  t_finish();
  return 0;
}
