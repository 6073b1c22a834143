// ranks: 1 2 3 4
/* Persistent collectives (MPI 4.0): every MPI_<Coll>_init family member is created once
 * and started several rounds with new buffer contents (MPI_Start and MPI_Startall),
 * results checked each round; blocking collectives interleave with the persistent
 * ones; an inactive persistent collective tests complete with an empty status; starting
 * an active one is an error; MPI_Request_free releases them. count, datatype and op are
 * checked by the _init call. */
#include "common.h"

#define ROUNDS 4
#define M 3 /* elements per block */

static int val(int rank, int round, int i) { return rank * 1000 + round * 100 + i; }

int main(int argc, char **argv) {
  t_init(&argc, &argv, "mpi4_persistent_coll");
  int n = t_size, me = t_rank;
  int *sb = t_alloc(sizeof(int) * M * n), *rb = t_alloc(sizeof(int) * M * n);
  int *cnt = t_alloc(sizeof(int) * n), *dsp = t_alloc(sizeof(int) * n);
  MPI_Count *ccnt = t_alloc(sizeof(MPI_Count) * n);
  MPI_Aint *cdsp = t_alloc(sizeof(MPI_Aint) * n);
  for (int i = 0; i < n; i++) {
    cnt[i] = M;
    dsp[i] = i * M;
    ccnt[i] = M;
    cdsp[i] = i * M;
  }
  int bc[M], red[M], sum[M], scan[M], ex[M], rs[M];
  enum { BARRIER, BCAST, ALLREDUCE, REDUCE, ALLGATHER, ALLTOALL, ALLTOALLV_C, GATHERV, SCATTER, SCAN, EXSCAN, RSB, NREQ };
  MPI_Request r[NREQ];
  int root = n - 1;
  MPI_Comm c = MPI_COMM_WORLD;
  MPI_Info info = MPI_INFO_NULL;
  MPI_OK(MPI_Barrier_init(c, info, &r[BARRIER]));
  MPI_OK(MPI_Bcast_init(bc, M, MPI_INT, root, c, info, &r[BCAST]));
  MPI_OK(MPI_Allreduce_init(sb, sum, M, MPI_INT, MPI_SUM, c, info, &r[ALLREDUCE]));
  MPI_OK(MPI_Reduce_init_c(sb, red, M, MPI_INT, MPI_MAX, 0, c, info, &r[REDUCE]));
  MPI_OK(MPI_Allgather_init(sb, M, MPI_INT, rb, M, MPI_INT, c, info, &r[ALLGATHER]));
  int *a2a = t_alloc(sizeof(int) * M * n), *a2av = t_alloc(sizeof(int) * M * n), *gv = t_alloc(sizeof(int) * M * n);
  int sc[M];
  MPI_OK(MPI_Alltoall_init(sb, M, MPI_INT, a2a, M, MPI_INT, c, info, &r[ALLTOALL]));
  MPI_OK(MPI_Alltoallv_init_c(sb, ccnt, cdsp, MPI_INT, a2av, ccnt, cdsp, MPI_INT, c, info, &r[ALLTOALLV_C]));
  MPI_OK(MPI_Gatherv_init(sb, M, MPI_INT, gv, cnt, dsp, MPI_INT, root, c, info, &r[GATHERV]));
  MPI_OK(MPI_Scatter_init(sb, M, MPI_INT, sc, M, MPI_INT, 0, c, info, &r[SCATTER]));
  MPI_OK(MPI_Scan_init(sb, scan, M, MPI_INT, MPI_SUM, c, info, &r[SCAN]));
  MPI_OK(MPI_Exscan_init(sb, ex, M, MPI_INT, MPI_SUM, c, info, &r[EXSCAN]));
  MPI_OK(MPI_Reduce_scatter_block_init(sb, rs, M, MPI_INT, MPI_SUM, c, info, &r[RSB]));

  /* arguments every process passes are checked by the _init call */
  {
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Request bad = MPI_REQUEST_NULL;
    int cls = -1;
    MPI_Error_class(MPI_Allreduce_init(sb, sum, M, MPI_DATATYPE_NULL, MPI_SUM, c, info, &bad), &cls);
    CHECK(cls == MPI_ERR_TYPE, "Allreduce_init with MPI_DATATYPE_NULL: class %d", cls);
    MPI_Error_class(MPI_Allreduce_init(sb, sum, -1, MPI_INT, MPI_SUM, c, info, &bad), &cls);
    CHECK(cls == MPI_ERR_COUNT, "Allreduce_init with count -1: class %d", cls);
    MPI_Error_class(MPI_Reduce_init(sb, red, M, MPI_INT, MPI_OP_NULL, 0, c, info, &bad), &cls);
    CHECK(cls == MPI_ERR_OP, "Reduce_init with MPI_OP_NULL: class %d", cls);
    MPI_Error_class(MPI_Barrier_init(MPI_COMM_NULL, info, &bad), &cls);
    CHECK(cls == MPI_ERR_COMM, "Barrier_init on MPI_COMM_NULL: class %d", cls);
    CHECK(bad == MPI_REQUEST_NULL, "a failed _init returned a request");
    MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL);
  }

  /* inactive: completes at once with an empty status and stays allocated */
  MPI_Status st;
  int flag = 0;
  MPI_Request before = r[ALLREDUCE];
  MPI_OK(MPI_Test(&r[ALLREDUCE], &flag, &st));
  CHECK(flag && r[ALLREDUCE] == before && st.MPI_SOURCE == MPI_ANY_SOURCE, "inactive persistent collective");

  for (int round = 0; round < ROUNDS; round++) {
    for (int i = 0; i < M * n; i++) sb[i] = val(me, round, i);
    if (me == root)
      for (int i = 0; i < M; i++) bc[i] = val(root, round, i) + 7;
    if (round % 2 == 0) {
      MPI_OK(MPI_Startall(NREQ, r));
    } else {
      for (int k = NREQ - 1; k >= 0; k--) MPI_OK(MPI_Start(&r[k])); /* same order on every rank */
    }
    if (round == 1) {
      MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
      int cls = -1;
      MPI_Error_class(MPI_Start(&r[BARRIER]), &cls);
      CHECK(cls == MPI_ERR_REQUEST, "starting an active persistent collective: class %d", cls);
      MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL);
    }
    /* a blocking collective between start and completion */
    int one = 1, total = 0;
    MPI_OK(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, c));
    CHECK(total == n, "blocking allreduce inside: %d", total);
    MPI_OK(MPI_Waitall(NREQ, r, MPI_STATUSES_IGNORE));
    for (int k = 0; k < NREQ; k++) CHECK(r[k] != MPI_REQUEST_NULL, "Waitall freed persistent request %d", k);

    for (int i = 0; i < M; i++) {
      CHECK(bc[i] == val(root, round, i) + 7, "bcast round %d [%d] = %d", round, i, bc[i]);
      int s = 0, mx = 0, sc_ = 0, ex_ = 0, rsb = 0;
      for (int p = 0; p < n; p++) {
        s += val(p, round, i);
        mx = val(p, round, i) > mx ? val(p, round, i) : mx;
        if (p <= me) sc_ += val(p, round, i);
        if (p < me) ex_ += val(p, round, i);
        rsb += val(p, round, me * M + i);
      }
      CHECK(sum[i] == s, "allreduce round %d [%d] = %d, expected %d", round, i, sum[i], s);
      if (me == 0) CHECK(red[i] == mx, "reduce max round %d [%d] = %d", round, i, red[i]);
      CHECK(scan[i] == sc_, "scan round %d [%d] = %d, expected %d", round, i, scan[i], sc_);
      if (me > 0) CHECK(ex[i] == ex_, "exscan round %d [%d] = %d, expected %d", round, i, ex[i], ex_);
      CHECK(rs[i] == rsb, "reduce_scatter_block round %d [%d] = %d, expected %d", round, i, rs[i], rsb);
      CHECK(sc[i] == val(0, round, me * M + i), "scatter round %d [%d] = %d", round, i, sc[i]);
    }
    for (int p = 0; p < n; p++)
      for (int i = 0; i < M; i++) {
        CHECK(rb[p * M + i] == val(p, round, i), "allgather round %d block %d [%d] = %d", round, p, i, rb[p * M + i]);
        CHECK(a2a[p * M + i] == val(p, round, me * M + i), "alltoall round %d block %d", round, p);
        CHECK(a2av[p * M + i] == val(p, round, me * M + i), "alltoallv_c round %d block %d", round, p);
        if (me == root) CHECK(gv[p * M + i] == val(p, round, i), "gatherv round %d block %d", round, p);
      }
  }
  for (int k = 0; k < NREQ; k++) {
    MPI_OK(MPI_Request_free(&r[k]));
    CHECK(r[k] == MPI_REQUEST_NULL, "Request_free did not reset handle %d", k);
  }

  /* neighbourhood: a periodic ring */
  MPI_Comm ring;
  int dims[1] = {n}, periods[1] = {1};
  MPI_OK(MPI_Cart_create(c, 1, dims, periods, 0, &ring));
  int mine = me, nb[2] = {-1, -1};
  MPI_Request q;
  MPI_OK(MPI_Neighbor_allgather_init(&mine, 1, MPI_INT, nb, 1, MPI_INT, ring, info, &q));
  for (int round = 0; round < 3; round++) {
    mine = me * 10 + round;
    MPI_OK(MPI_Start(&q));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    int left = (me + n - 1) % n, right = (me + 1) % n;
    CHECK(nb[0] == left * 10 + round && nb[1] == right * 10 + round, "neighbor_allgather round %d: %d %d", round, nb[0],
          nb[1]);
  }
  MPI_OK(MPI_Request_free(&q));
  MPI_OK(MPI_Comm_free(&ring));
  t_finish();
  return 0;
}
