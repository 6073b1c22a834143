// ranks: 2 3
/* MPI_T: cvar enumeration (names, read of a value), pvar enumeration, a session with
 * handles on the per-peer traffic counters bound to MPI_COMM_WORLD: counts follow the
 * messages sent while started, stop freezes them, reset clears them; categories.
 * The crossmpi variable names are checked under crossmpi only. */
#include "common.h"

static int find_pvar(const char *want) {
  int num;
  MPI_OK(MPI_T_pvar_get_num(&num));
  for (int i = 0; i < num; i++) {
    char name[256], desc[256];
    int nl = sizeof name, dl = sizeof desc, verb, cls, bind, ro, cont, atomic;
    MPI_Datatype dt;
    MPI_T_enum et;
    MPI_OK(MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &et, desc, &dl, &bind, &ro, &cont, &atomic));
    if (strcmp(name, want) == 0) {
      CHECK(cls == MPI_T_PVAR_CLASS_COUNTER && bind == MPI_T_BIND_MPI_COMM && dt == MPI_UNSIGNED_LONG_LONG,
            "pvar %s: class %d bind %d", want, cls, bind);
      return i;
    }
  }
  return -1;
}

int main(int argc, char **argv) {
  int provided;
  MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  t_init(&argc, &argv, "mpit");
  int ncvar, npvar, ncat;
  MPI_OK(MPI_T_cvar_get_num(&ncvar));
  MPI_OK(MPI_T_pvar_get_num(&npvar));
  MPI_OK(MPI_T_category_get_num(&ncat));
  CHECK(ncvar >= 0 && npvar >= 0 && ncat >= 0, "counts");
  for (int i = 0; i < ncvar; i++) {
    char name[256];
    int nl = sizeof name, verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum et;
    int rc = MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &et, NULL, NULL, &bind, &scope);
    if (rc == MPI_T_ERR_INVALID_INDEX && t_peer()) continue; /* Open MPI has holes */
    MPI_OK(rc);
    CHECK(nl == (int)strlen(name) + 1, "name length %d for %s", nl, name);
    int idx;
    MPI_OK(MPI_T_cvar_get_index(name, &idx));
    CHECK(idx == i, "cvar index of %s: %d", name, idx);
  }
  if (!t_peer()) {
    int idx, count;
    MPI_OK(MPI_T_cvar_get_index("CROSSMPI_TCP_EAGER", &idx));
    MPI_T_cvar_handle ch;
    MPI_OK(MPI_T_cvar_handle_alloc(idx, NULL, &ch, &count));
    unsigned long long eager = 0;
    MPI_OK(MPI_T_cvar_read(ch, &eager));
    const char *env = getenv("CROSSMPI_TCP_EAGER");
    CHECK(eager == (env ? strtoull(env, NULL, 10) : 65536ULL), "CROSSMPI_TCP_EAGER = %llu", eager);
    MPI_OK(MPI_T_cvar_handle_free(&ch));

    int sent = find_pvar("crossmpi_peer_msgs_sent");
    int bytes = find_pvar("crossmpi_peer_bytes_recv");
    CHECK(sent >= 0 && bytes >= 0, "traffic pvars exist");
    MPI_T_pvar_session s;
    MPI_T_pvar_handle hs, hb;
    MPI_OK(MPI_T_pvar_session_create(&s));
    MPI_Comm world = MPI_COMM_WORLD;
    int n1, n2;
    MPI_OK(MPI_T_pvar_handle_alloc(s, sent, &world, &hs, &n1));
    MPI_OK(MPI_T_pvar_handle_alloc(s, bytes, &world, &hb, &n2));
    CHECK(n1 == t_size && n2 == t_size, "count = world size: %d %d", n1, n2);
    unsigned long long v[64], b[64];
    MPI_OK(MPI_T_pvar_read(s, hs, v));
    for (int i = 0; i < t_size; i++) CHECK(v[i] == 0, "not started: 0");
    MPI_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    /* Messages are counted when they arrive, so everybody starts before anybody sends;
     * the control barrier itself adds at most 2 messages of 4 bytes per peer. */
    t_barrier();
    /* rank r sends r+1 messages of 100 bytes to its right neighbour */
    int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
    char buf[100] = {0};
    for (int k = 0; k <= t_rank; k++) MPI_OK(MPI_Send(buf, 100, MPI_CHAR, right, 9, MPI_COMM_WORLD));
    for (int k = 0; k <= left; k++) MPI_OK(MPI_Recv(buf, 100, MPI_CHAR, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    MPI_OK(MPI_T_pvar_read(s, hs, v));
    MPI_OK(MPI_T_pvar_read(s, hb, b));
    unsigned long long want = (unsigned long long)t_rank + 1;
    CHECK(v[right] >= want && v[right] <= want + 2, "msgs sent to right: %llu, expected %llu", v[right], want);
    want = 100ULL * (left + 1);
    /* + control bytes, + the 1-byte message below if it arrives before our stop */
    CHECK(b[left] >= want && b[left] <= want + 9, "bytes from left: %llu, expected %llu", b[left], want);
    for (int i = 0; i < t_size; i++)
      if (i != right) CHECK(v[i] <= 2, "only control messages to %d: %llu", i, v[i]);
    /* stopped: more traffic is not counted */
    unsigned long long before = v[right];
    MPI_OK(MPI_Send(buf, 1, MPI_CHAR, right, 9, MPI_COMM_WORLD));
    MPI_OK(MPI_Recv(buf, 1, MPI_CHAR, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_T_pvar_read(s, hs, v));
    CHECK(v[right] == before, "stopped: %llu", v[right]);
    MPI_OK(MPI_T_pvar_reset(s, hs));
    MPI_OK(MPI_T_pvar_read(s, hs, v));
    CHECK(v[right] == 0, "reset: %llu", v[right]);
    MPI_OK(MPI_T_pvar_handle_free(s, &hs));
    MPI_OK(MPI_T_pvar_handle_free(s, &hb));
    MPI_OK(MPI_T_pvar_session_free(&s));
    CHECK(ncat >= 1, "a category");
    int cidx, nc, np, nsub;
    MPI_OK(MPI_T_category_get_index("crossmpi_traffic", &cidx));
    MPI_OK(MPI_T_category_get_info(cidx, NULL, NULL, NULL, NULL, &nc, &np, &nsub));
    CHECK(np == 4 && nc == 0, "traffic category: %d pvars", np);
#if MPI_VERSION >= 4
    int nev = -1;
    MPI_OK(MPI_T_event_get_num(&nev));
    CHECK(nev == 0, "no events: %d", nev);
#endif
  }
  t_barrier();
  MPI_OK(MPI_Comm_free(&t_ctl));
  if (t_rank == 0) printf("OK mpit\n");
  /* MPI_T_finalize first: Open MPI 4.1 crashes when it comes after MPI_Finalize */
  MPI_OK(MPI_T_finalize());
  MPI_OK(MPI_Finalize());
  return 0;
}
