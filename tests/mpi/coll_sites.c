// ranks: 4 8
// args: 2 2i 3i 8 2,impi 3i,impi 8,impi 2,flat
/* Collectives on communicators spanning several sites (clusters). The argument names
 * the layout: S sites, blocked (rank r at site r*S/n) or with "i" interleaved (r % S),
 * and after a comma the CROSSMPI_COLL_WAN choice (default auto: the WAN-aware
 * algorithms). The program sets CROSSMPI_SITE_OF before MPI_Init (in an IMPI job the
 * sites are the clusters instead; the layout is read back through MPI_CLIENT_COLOR).
 *
 * Every collective, blocking and nonblocking, runs on MPI_COMM_WORLD, a duplicate and
 * split communicators (whose sites interleave differently), on small and large data,
 * with a commutative and a non-commutative operator, and is checked. Then, on two
 * sites, the per-peer MPI_T counters show how often each collective crosses between
 * the sites: summed over the ranks of a site, per call, barrier, allreduce, allgather
 * and alltoall send one message to the other site, bcast one from the root's site,
 * reduce one to the root's site (IMPI's algorithms: barrier, bcast, reduce, allreduce
 * alike). Other MPIs ignore the variables; the counters are crossmpi's. */
#include "common.h"

#define ITER 10

static int n, me;
static int nb; /* nonblocking forms */
static int *site_of; /* of every world rank */

/* COLL(Allreduce, Iallreduce, args...): the blocking or the nonblocking form. */
#define COLL(B, I, ...)                                              \
  do {                                                               \
    if (nb) {                                                        \
      MPI_Request r_;                                                \
      MPI_OK(MPI_##I(__VA_ARGS__, &r_));                             \
      MPI_OK(MPI_Wait(&r_, MPI_STATUS_IGNORE));                      \
    } else {                                                         \
      MPI_OK(MPI_##B(__VA_ARGS__));                                  \
    }                                                                \
  } while (0)

/* ------------------------------------------------------------ the layout */

static int layout_site(int r, int world, int sites, int interleaved) {
  if (sites > world) sites = world;
  return interleaved ? r % sites : r * sites / world;
}

static int world_size_from_env(void) {
  const char *vars[] = {"PMI_SIZE", "OMPI_COMM_WORLD_SIZE"};
  for (unsigned i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    if (v) return atoi(v);
  }
  return 0;
}

/* Parses "S[i][,WAN]" and sets the variables; returns 0 on a malformed argument. */
static int configure(const char *arg, int *sites, int *interleaved, char *wan, size_t wl) {
  char *end;
  *sites = (int)strtol(arg, &end, 10);
  *interleaved = *end == 'i';
  if (*interleaved) end++;
  snprintf(wan, wl, "auto");
  if (*end == ',') snprintf(wan, wl, "%s", end + 1);
  else if (*end != '\0') return 0;
  if (*sites < 1) return 0;
  setenv("CROSSMPI_COLL_WAN", wan, 1);
  int world = world_size_from_env();
  if (world > 0 && world <= 4096) {
    char *list = malloc((size_t)world * 6 + 1);
    size_t at = 0;
    for (int r = 0; r < world; r++)
      at += (size_t)sprintf(list + at, "%s%d", r ? "," : "", layout_site(r, world, *sites, *interleaved));
    setenv("CROSSMPI_SITE_OF", list, 1);
    free(list);
  }
  return 1;
}

/* ------------------------------------------------------------ a non-commutative operator */

/* Affine maps x -> a x + b on unsigned ints composed in rank order: (f then g) =
 * (f.a g.a, f.b g.a + g.b). Only rank order gives the expected pair. */
typedef struct { unsigned a, b; } affine;

static affine compose(affine f, affine g) {
  affine r = {f.a * g.a, f.b * g.a + g.b};
  return r;
}

static void affine_op(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  affine *x = in, *y = inout;
  for (int i = 0; i < *len; i++) y[i] = compose(x[i], y[i]);
}

static affine member_map(int r, int i) {
  affine f = {(unsigned)(r + 2 + i), (unsigned)(100 * r + 1 + i)};
  return f;
}

/* Composition of members lo..hi-1 (in the communicator's order), element i. */
static affine composed(int lo, int hi, int i) {
  affine acc = member_map(lo, i);
  for (int r = lo + 1; r < hi; r++) acc = compose(acc, member_map(r, i));
  return acc;
}

static MPI_Datatype pair_t;
static MPI_Op affine_mpi;

/* ------------------------------------------------------------ correctness */

static int val(int r, int i) { return r * 100000 + i; }

static void check_comm(MPI_Comm c, const char *label, int count) {
  int cn, cr;
  MPI_OK(MPI_Comm_size(c, &cn));
  MPI_OK(MPI_Comm_rank(c, &cr));
  int *a = t_alloc(sizeof(int) * (size_t)count * cn), *b = t_alloc(sizeof(int) * (size_t)count * cn);
  int *mine = t_alloc(sizeof(int) * (size_t)count);
  for (int i = 0; i < count; i++) mine[i] = val(cr, i);

  COLL(Barrier, Ibarrier, c);

  for (int root = 0; root < cn; root++) {
    for (int i = 0; i < count; i++) a[i] = cr == root ? val(root + 7, i) : -1;
    COLL(Bcast, Ibcast, a, count, MPI_INT, root, c);
    for (int i = 0; i < count; i++) CHECK(a[i] == val(root + 7, i), "%s bcast root %d [%d] = %d", label, root, i, a[i]);

    COLL(Reduce, Ireduce, mine, a, count, MPI_INT, MPI_SUM, root, c);
    if (cr == root)
      for (int i = 0; i < count; i++) {
        long want = 0;
        for (int r = 0; r < cn; r++) want += val(r, i);
        CHECK(a[i] == (int)want, "%s reduce root %d [%d] = %d, expected %ld", label, root, i, a[i], want);
      }

    affine *pm = t_alloc(sizeof(affine) * (size_t)count), *pr = t_alloc(sizeof(affine) * (size_t)count);
    for (int i = 0; i < count; i++) pm[i] = member_map(cr, i);
    COLL(Reduce, Ireduce, pm, pr, count, pair_t, affine_mpi, root, c);
    if (cr == root)
      for (int i = 0; i < count; i++) {
        affine w = composed(0, cn, i);
        CHECK(pr[i].a == w.a && pr[i].b == w.b, "%s ordered reduce root %d [%d]", label, root, i);
      }
    free(pm);
    free(pr);

    /* gather / scatter */
    COLL(Gather, Igather, mine, count, MPI_INT, b, count, MPI_INT, root, c);
    if (cr == root)
      for (int r = 0; r < cn; r++)
        for (int i = 0; i < count; i++) CHECK(b[r * count + i] == val(r, i), "%s gather root %d", label, root);
    for (int k = 0; k < cn * count; k++) b[k] = cr == root ? val(k / count + 50, k % count) : -1;
    COLL(Scatter, Iscatter, b, count, MPI_INT, a, count, MPI_INT, root, c);
    for (int i = 0; i < count; i++) CHECK(a[i] == val(cr + 50, i), "%s scatter root %d", label, root);
  }

  COLL(Allreduce, Iallreduce, mine, a, count, MPI_INT, MPI_SUM, c);
  for (int i = 0; i < count; i++) {
    long want = 0;
    for (int r = 0; r < cn; r++) want += val(r, i);
    CHECK(a[i] == (int)want, "%s allreduce [%d] = %d, expected %ld", label, i, a[i], want);
  }
  memcpy(a, mine, sizeof(int) * (size_t)count);
  COLL(Allreduce, Iallreduce, MPI_IN_PLACE, a, count, MPI_INT, MPI_MAX, c);
  for (int i = 0; i < count; i++) CHECK(a[i] == val(cn - 1, i), "%s allreduce in place [%d]", label, i);
  {
    affine *pm = t_alloc(sizeof(affine) * (size_t)count), *pr = t_alloc(sizeof(affine) * (size_t)count);
    for (int i = 0; i < count; i++) pm[i] = member_map(cr, i);
    COLL(Allreduce, Iallreduce, pm, pr, count, pair_t, affine_mpi, c);
    for (int i = 0; i < count; i++) {
      affine w = composed(0, cn, i);
      CHECK(pr[i].a == w.a && pr[i].b == w.b, "%s ordered allreduce [%d]", label, i);
    }
    COLL(Scan, Iscan, pm, pr, count, pair_t, affine_mpi, c);
    for (int i = 0; i < count; i++) {
      affine w = composed(0, cr + 1, i);
      CHECK(pr[i].a == w.a && pr[i].b == w.b, "%s ordered scan [%d]", label, i);
    }
    COLL(Exscan, Iexscan, pm, pr, count, pair_t, affine_mpi, c);
    if (cr > 0)
      for (int i = 0; i < count; i++) {
        affine w = composed(0, cr, i);
        CHECK(pr[i].a == w.a && pr[i].b == w.b, "%s ordered exscan [%d]", label, i);
      }
    free(pm);
    free(pr);
  }

  COLL(Allgather, Iallgather, mine, count, MPI_INT, b, count, MPI_INT, c);
  for (int r = 0; r < cn; r++)
    for (int i = 0; i < count; i++) CHECK(b[r * count + i] == val(r, i), "%s allgather [%d][%d]", label, r, i);

  /* allgatherv: member r contributes r % 3 * count / 2 ints, placed with gaps */
  int *counts = t_alloc(sizeof(int) * cn), *displs = t_alloc(sizeof(int) * cn);
  for (int r = 0, at = 0; r < cn; r++) {
    counts[r] = r % 3 * count / 2;
    displs[r] = at + 1;
    at += counts[r] + 1;
  }
  int total = displs[cn - 1] + counts[cn - 1];
  int *v = t_alloc(sizeof(int) * (size_t)(total + 1));
  for (int k = 0; k <= total; k++) v[k] = -5;
  COLL(Allgatherv, Iallgatherv, mine, counts[cr], MPI_INT, v, counts, displs, MPI_INT, c);
  for (int r = 0; r < cn; r++) {
    CHECK(v[displs[r] - 1] == -5, "%s allgatherv gap before %d", label, r);
    for (int i = 0; i < counts[r]; i++) CHECK(v[displs[r] + i] == val(r, i), "%s allgatherv [%d][%d]", label, r, i);
  }

  /* alltoall: block for j from i = val(i * 64 + j, k) */
  for (int j = 0; j < cn; j++)
    for (int i = 0; i < count; i++) a[j * count + i] = val(cr * 64 + j, i);
  COLL(Alltoall, Ialltoall, a, count, MPI_INT, b, count, MPI_INT, c);
  for (int j = 0; j < cn; j++)
    for (int i = 0; i < count; i++)
      CHECK(b[j * count + i] == val(j * 64 + cr, i), "%s alltoall from %d [%d] = %d", label, j, i, b[j * count + i]);
  memcpy(b, a, sizeof(int) * (size_t)count * cn);
  COLL(Alltoall, Ialltoall, MPI_IN_PLACE, 0, MPI_INT, b, count, MPI_INT, c);
  for (int j = 0; j < cn; j++)
    for (int i = 0; i < count; i++) CHECK(b[j * count + i] == val(j * 64 + cr, i), "%s alltoall in place", label);

  /* alltoallv: from i to j, (i + j) % 3 * count / 2 ints */
  int *sc = t_alloc(sizeof(int) * cn), *sd = t_alloc(sizeof(int) * cn), *rc = t_alloc(sizeof(int) * cn),
      *rd = t_alloc(sizeof(int) * cn);
  for (int j = 0, so = 0, ro = 0; j < cn; j++) {
    sc[j] = rc[j] = (cr + j) % 3 * count / 2;
    sd[j] = so;
    rd[j] = ro;
    so += sc[j];
    ro += rc[j];
  }
  for (int j = 0; j < cn; j++)
    for (int i = 0; i < sc[j]; i++) a[sd[j] + i] = val(cr * 64 + j, i);
  COLL(Alltoallv, Ialltoallv, a, sc, sd, MPI_INT, b, rc, rd, MPI_INT, c);
  for (int j = 0; j < cn; j++)
    for (int i = 0; i < rc[j]; i++) CHECK(b[rd[j] + i] == val(j * 64 + cr, i), "%s alltoallv from %d", label, j);

  /* reduce_scatter_block and scan with a sum */
  for (int k = 0; k < cn * count; k++) a[k] = val(cr, k);
  COLL(Reduce_scatter_block, Ireduce_scatter_block, a, b, count, MPI_INT, MPI_SUM, c);
  for (int i = 0; i < count; i++) {
    long want = 0;
    for (int r = 0; r < cn; r++) want += val(r, cr * count + i);
    CHECK(b[i] == (int)want, "%s reduce_scatter_block [%d]", label, i);
  }
  COLL(Scan, Iscan, mine, a, count, MPI_INT, MPI_SUM, c);
  for (int i = 0; i < count; i++) {
    long want = 0;
    for (int r = 0; r <= cr; r++) want += val(r, i);
    CHECK(a[i] == (int)want, "%s scan [%d]", label, i);
  }
  free(a); free(b); free(mine); free(counts); free(displs); free(v); free(sc); free(sd); free(rc); free(rd);
}

/* ------------------------------------------------------------ crossings (MPI_T) */

static MPI_T_pvar_session session;
static MPI_T_pvar_handle sent_h;
static unsigned long long *before, *after;
static MPI_Comm site_comm;

static int find_pvar(const char *want) {
  int num;
  MPI_OK(MPI_T_pvar_get_num(&num));
  for (int i = 0; i < num; i++) {
    char name[128], desc[256];
    int nl = sizeof name, dl = sizeof desc, verb, cls, bind, ro, cont, atomic;
    MPI_Datatype dt;
    MPI_T_enum et;
    MPI_OK(MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &et, desc, &dl, &bind, &ro, &cont, &atomic));
    if (strcmp(name, want) == 0) return i;
  }
  return -1;
}

/* Messages this rank sent to ranks of another site since `before`. */
static long crossing_sends(void) {
  MPI_OK(MPI_T_pvar_read(session, sent_h, after));
  long k = 0;
  for (int r = 0; r < n; r++)
    if (site_of[r] != site_of[me]) k += (long)(after[r] - before[r]);
  return k;
}

static void mark(void) { MPI_OK(MPI_T_pvar_read(session, sent_h, before)); }

/* Checks that ITER calls sent `want_site0` / `want_site1` messages between the sites,
 * summed over each site's ranks. */
static void expect_crossings(const char *what, long want_site0, long want_site1) {
  long mine = crossing_sends(), site_total = 0;
  MPI_OK(MPI_Allreduce(&mine, &site_total, 1, MPI_LONG, MPI_SUM, site_comm));
  long want = site_of[me] == site_of[0] ? want_site0 : want_site1;
  CHECK_CROSSMPI(site_total == want * ITER, "%s: the site of rank %d sent %ld messages to the other site in %d calls, expected %ld",
                 what, me, site_total, ITER, want * ITER);
}

static void check_crossings(int wan_aware) {
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, site_of[me], me, &site_comm));
  int provided;
  MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  int idx = find_pvar("crossmpi_peer_msgs_sent");
  CHECK(idx >= 0, "crossmpi_peer_msgs_sent exists");
  MPI_OK(MPI_T_pvar_session_create(&session));
  MPI_Comm world = MPI_COMM_WORLD;
  int count;
  MPI_OK(MPI_T_pvar_handle_alloc(session, idx, &world, &sent_h, &count));
  CHECK(count == n, "one counter per rank: %d", count);
  MPI_OK(MPI_T_pvar_start(session, sent_h));
  before = t_alloc(sizeof *before * n);
  after = t_alloc(sizeof *after * n);
  int x[4] = {me, 1, 2, 3}, y[4 * 64], z[4 * 64];

  mark();
  for (int k = 0; k < ITER; k++) MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  expect_crossings("barrier", 1, 1);
  mark();
  for (int k = 0; k < ITER; k++) MPI_OK(MPI_Bcast(x, 4, MPI_INT, 0, MPI_COMM_WORLD));
  expect_crossings("bcast from rank 0", 1, 0);
  mark();
  for (int k = 0; k < ITER; k++) MPI_OK(MPI_Reduce(x, y, 4, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
  expect_crossings("reduce to rank 0", 0, 1);
  mark();
  for (int k = 0; k < ITER; k++) MPI_OK(MPI_Allreduce(x, y, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  expect_crossings("allreduce", 1, 1);
  mark();
  for (int k = 0; k < ITER; k++) {
    MPI_Request r;
    MPI_OK(MPI_Iallreduce(x, y, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  }
  expect_crossings("iallreduce", 1, 1);
  if (wan_aware) {
    mark();
    for (int k = 0; k < ITER; k++) MPI_OK(MPI_Allgather(x, 4, MPI_INT, y, 4, MPI_INT, MPI_COMM_WORLD));
    expect_crossings("allgather", 1, 1);
    for (int k = 0; k < 4 * n; k++) z[k] = k;
    mark();
    for (int k = 0; k < ITER; k++) MPI_OK(MPI_Alltoall(z, 4, MPI_INT, y, 4, MPI_INT, MPI_COMM_WORLD));
    expect_crossings("alltoall", 1, 1);
    mark();
    for (int k = 0; k < ITER; k++) MPI_OK(MPI_Gather(x, 4, MPI_INT, y, 4, MPI_INT, 0, MPI_COMM_WORLD));
    expect_crossings("gather to rank 0", 0, 1);
    mark();
    for (int k = 0; k < ITER; k++) MPI_OK(MPI_Scatter(z, 4, MPI_INT, y, 4, MPI_INT, 0, MPI_COMM_WORLD));
    expect_crossings("scatter from rank 0", 1, 0);
    mark();
    for (int k = 0; k < ITER; k++) MPI_OK(MPI_Reduce_scatter_block(z, y, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    expect_crossings("reduce_scatter_block", 1, 1);
    int changes = 0;
    for (int r = 1; r < n; r++) changes += site_of[r] != site_of[r - 1];
    if (changes == 1) { /* the sites are runs of ranks: scan goes one way */
      mark();
      for (int k = 0; k < ITER; k++) MPI_OK(MPI_Scan(x, y, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
      expect_crossings("scan", 1, 0);
    }
  }
  MPI_OK(MPI_T_pvar_stop(session, sent_h));
  MPI_OK(MPI_T_pvar_handle_free(session, &sent_h));
  MPI_OK(MPI_T_pvar_session_free(&session));
  MPI_OK(MPI_T_finalize());
  MPI_OK(MPI_Comm_free(&site_comm));
  free(before);
  free(after);
}

int main(int argc, char **argv) {
  int sites = 2, interleaved = 0;
  char wan[32];
  if (argc > 1 && !configure(argv[1], &sites, &interleaved, wan, sizeof wan)) {
    fprintf(stderr, "usage: coll_sites S[i][,auto|magpie|impi|flat]\n");
    return 2;
  }
  if (argc <= 1) configure("2", &sites, &interleaved, wan, sizeof wan);
  t_init(&argc, &argv, "coll_sites");
  n = t_size;
  me = t_rank;

  /* The sites as the library sees them (the clusters in an IMPI job). */
  int my_site = layout_site(me, n, sites, interleaved);
#ifdef MPI_CLIENT_COLOR
  {
    int *color, flag = 0;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_CLIENT_COLOR, &color, &flag));
    CHECK(flag, "MPI_CLIENT_COLOR is set");
    /* In an IMPI job (mpirun -client sets CROSSMPI_IMPI_CLIENT) the clusters are the sites. */
    if (getenv("CROSSMPI_IMPI_CLIENT") == NULL)
      CHECK(*color == my_site, "CROSSMPI_SITE_OF took effect: site %d, expected %d", *color, my_site);
    my_site = *color;
  }
#endif
  site_of = t_alloc(sizeof(int) * n);
  MPI_OK(MPI_Allgather(&my_site, 1, MPI_INT, site_of, 1, MPI_INT, MPI_COMM_WORLD));

  MPI_OK(MPI_Type_contiguous(2, MPI_UNSIGNED, &pair_t));
  MPI_OK(MPI_Type_commit(&pair_t));
  MPI_OK(MPI_Op_create(affine_op, 0, &affine_mpi));

  MPI_Comm dup, halves, reversed;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &halves));
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, n - me, &reversed));
  struct { MPI_Comm c; const char *name; } comms[] = {
      {MPI_COMM_WORLD, "world"}, {dup, "dup"}, {halves, "split even/odd"}, {reversed, "split reversed"}};
  int counts[] = {3, 20000};
  for (nb = 0; nb < 2; nb++)
    for (unsigned k = 0; k < sizeof comms / sizeof comms[0]; k++)
      for (unsigned s = 0; s < sizeof counts / sizeof counts[0]; s++) {
        char label[96];
        snprintf(label, sizeof label, "%s%s count %d", nb ? "nonblocking " : "", comms[k].name, counts[s]);
        check_comm(comms[k].c, label, counts[s]);
      }

  /* Several nonblocking collectives in flight at once on one communicator. */
  {
    int v1 = me, v2 = me == 0 ? 42 : 0, s1 = 0, g[64];
    MPI_Request rq[3];
    MPI_OK(MPI_Iallreduce(&v1, &s1, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]));
    MPI_OK(MPI_Ibcast(&v2, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq[1]));
    MPI_OK(MPI_Iallgather(&v1, 1, MPI_INT, g, 1, MPI_INT, MPI_COMM_WORLD, &rq[2]));
    MPI_OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
    CHECK(s1 == n * (n - 1) / 2 && v2 == 42, "concurrent: %d %d", s1, v2);
    for (int r = 0; r < n; r++) CHECK(g[r] == r, "concurrent allgather [%d]", r);
  }

  int distinct = 0;
  for (int r = 0; r < n; r++) {
    int first = 1;
    for (int q = 0; q < r; q++) first &= site_of[q] != site_of[r];
    distinct += first;
  }
  if (distinct == 2 && !t_peer() && strcmp(wan, "flat") != 0)
    check_crossings(strcmp(wan, "impi") != 0);

  MPI_OK(MPI_Comm_free(&dup));
  MPI_OK(MPI_Comm_free(&halves));
  MPI_OK(MPI_Comm_free(&reversed));
  MPI_OK(MPI_Op_free(&affine_mpi));
  MPI_OK(MPI_Type_free(&pair_t));
  free(site_of);
  t_finish();
  return 0;
}
