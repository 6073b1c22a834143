// ranks: 1 2 4
/* MPI-IO access modes and file properties: EXCL, APPEND, DELETE_ON_CLOSE, sizes and
 * preallocation, atomic mode under conflicting writes, the external32 representation
 * (big-endian bytes in the file, values round trip), and errors: their classes, the
 * default MPI_ERRORS_RETURN of files and a user file error handler. */
#include "io_common.h"

static int handler_calls = 0, handler_class = -1;

static void on_file_error(MPI_File *fh, int *code, ...) {
  (void)fh;
  handler_calls++;
  MPI_Error_class(*code, &handler_class);
}

static void errors(void) {
  char path[128], missing[140];
  io_name(path, sizeof path, "errors");
  snprintf(missing, sizeof missing, "%s-missing", path);
  MPI_File fh;
  IO_EXPECT(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh), MPI_ERR_AMODE,
            "MPI_File_open", "amode");
  IO_EXPECT(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), MPI_ERR_AMODE,
            "MPI_File_open", "amode");
  IO_EXPECT(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_NO_SUCH_FILE,
            "MPI_File_open", "filename");
  if (t_rank == 0)
    IO_EXPECT(MPI_File_delete(missing, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE, "MPI_File_delete", "filename");
  MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
  int x = 5;
  MPI_Status st;
  IO_EXPECT(MPI_File_read_at(fh, 0, &x, 1, MPI_INT, &st), MPI_ERR_ACCESS, "MPI_File_read_at", "fh");
  IO_EXPECT(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-rep", MPI_INFO_NULL), MPI_ERR_UNSUPPORTED_DATAREP,
            "MPI_File_set_view", "datarep");
  /* Open MPI 4.1 does not check offsets (the write fails in pwrite): crossmpi only. */
  if (!t_peer())
    IO_EXPECT(MPI_File_write_at(fh, -1, &x, 1, MPI_INT, &st), MPI_ERR_ARG, "MPI_File_write_at", "offset");
  /* A user handler sees the errors of this file. */
  MPI_Errhandler eh, got;
  MPI_OK(MPI_File_create_errhandler(on_file_error, &eh));
  MPI_OK(MPI_File_set_errhandler(fh, eh));
  MPI_OK(MPI_File_get_errhandler(fh, &got));
  CHECK(got == eh, "get_errhandler returned another handler");
  MPI_File_read_at(fh, 0, &x, 1, MPI_INT, &st);
  CHECK(handler_calls == 1, "the file's handler ran %d times", handler_calls);
  CHECK(handler_class == MPI_ERR_ACCESS || (!t_peer() && handler_class == MPI_ERR_OTHER), "handler saw class %d",
        handler_class);
  MPI_OK(MPI_File_close(&fh));
  MPI_OK(MPI_Errhandler_free(&eh));
  /* Files default to MPI_ERRORS_RETURN (the handler of MPI_FILE_NULL). */
  MPI_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
  CHECK(got == MPI_ERRORS_RETURN, "MPI_FILE_NULL's handler is not MPI_ERRORS_RETURN");
  IO_EXPECT(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
            MPI_ERR_FILE_EXISTS, "MPI_File_open", "filename");
  MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
  IO_EXPECT(MPI_File_write_at(fh, 0, &x, 1, MPI_INT, &st), MPI_ERR_READ_ONLY, "MPI_File_write_at", "fh");
  int amode = 0;
  MPI_OK(MPI_File_get_amode(fh, &amode));
  CHECK(amode == (MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE), "amode %d", amode);
  MPI_OK(MPI_File_close(&fh));
  CHECK(fh == MPI_FILE_NULL, "close did not reset the handle");
  CHECK(access(path, F_OK) != 0, "MPI_MODE_DELETE_ON_CLOSE left %s", path);
}

static void sizes_and_append(void) {
  char path[128];
  io_name(path, sizeof path, "sizes");
  MPI_File fh;
  MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  MPI_Offset size = -1;
  MPI_OK(MPI_File_preallocate(fh, 4096));
  MPI_OK(MPI_File_get_size(fh, &size));
  CHECK(size == 4096, "size %lld after preallocate", (long long)size);
  MPI_OK(MPI_File_set_size(fh, 100));
  MPI_OK(MPI_File_get_size(fh, &size));
  CHECK(size == 100, "size %lld after set_size", (long long)size);
  MPI_Group g;
  int gsize = 0;
  MPI_OK(MPI_File_get_group(fh, &g));
  MPI_OK(MPI_Group_size(g, &gsize));
  CHECK(gsize == t_size, "file group of %d", gsize);
  MPI_OK(MPI_Group_free(&g));
  MPI_OK(MPI_File_close(&fh));
  /* APPEND: both pointers start at the end of the file. */
  MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
  MPI_Offset pos = -1;
  MPI_OK(MPI_File_get_position(fh, &pos));
  CHECK(pos == 100, "append pointer at %lld", (long long)pos);
  char c = (char)('a' + t_rank);
  MPI_Status st;
  MPI_OK(MPI_File_write_ordered(fh, &c, 1, MPI_CHAR, &st));
  MPI_OK(MPI_File_close(&fh));
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  char all[104];
  io_slurp(path, all, 100 + t_size);
  for (int r = 0; r < t_size; r++) CHECK(all[100 + r] == 'a' + r, "appended byte %d is %d", r, all[100 + r]);
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (t_rank == 0) MPI_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

/* Every rank writes a block of its own value over the same range, many times, in
 * atomic mode: every read sees one writer's whole block. */
static void atomic(void) {
  char path[128];
  io_name(path, sizeof path, "atomic");
  enum { N = 4096 };
  MPI_File fh;
  MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  MPI_OK(MPI_File_set_atomicity(fh, 1));
  int flag = 0;
  MPI_OK(MPI_File_get_atomicity(fh, &flag));
  CHECK(flag == 1, "atomicity flag %d", flag);
  int *mine = malloc(N * sizeof(int)), *seen = malloc(N * sizeof(int));
  for (int i = 0; i < N; i++) mine[i] = t_rank + 1;
  MPI_Status st;
  for (int round = 0; round < 20; round++) {
    MPI_OK(MPI_File_write_at(fh, 0, mine, N, MPI_INT, &st));
    MPI_OK(MPI_File_read_at(fh, 0, seen, N, MPI_INT, &st));
    /* Open MPI 4.1's ompio mixes blocks here despite atomic mode: crossmpi-specific. */
    int mixed = 0;
    while (mixed < N && seen[mixed] == seen[0]) mixed++;
    CHECK_CROSSMPI(mixed == N, "round %d: int %d is %d, int 0 is %d", round, mixed, seen[mixed % N], seen[0]);
    CHECK(seen[0] >= 1 && seen[0] <= t_size, "block of %d", seen[0]);
  }
  /* Collective accesses in atomic mode (each process locks around its own system
   * calls, never across the collective's exchange). */
  MPI_OK(MPI_File_write_at_all(fh, 0, mine, N, MPI_INT, &st));
  MPI_OK(MPI_File_read_at_all(fh, 0, seen, N, MPI_INT, &st));
  CHECK(t_count(&st, MPI_INT) == N, "read_at_all counted %d ints", t_count(&st, MPI_INT));
  CHECK(seen[0] >= 1 && seen[0] <= t_size, "collective block of %d", seen[0]);
  free(mine);
  free(seen);
  MPI_OK(MPI_File_close(&fh));
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (t_rank == 0) MPI_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

static void external32(void) {
  char path[128];
  io_name(path, sizeof path, "external32");
  MPI_File fh;
  MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
  char rep[MPI_MAX_DATAREP_STRING];
  MPI_Offset disp;
  MPI_Datatype et, ft;
  MPI_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
  CHECK(strcmp(rep, "external32") == 0 && et == MPI_BYTE, "view reports %s", rep);
  /* Rank r writes an int and a double at 12 r: 4 + 8 bytes in external32. */
  struct { int i; double d; } v = {0x01020304 + t_rank, 1.5 + t_rank};
  MPI_Datatype pair;
  int bl[2] = {1, 1};
  MPI_Aint dis[2] = {0, 8};
  MPI_Datatype tys[2] = {MPI_INT, MPI_DOUBLE};
  MPI_OK(MPI_Type_create_struct(2, bl, dis, tys, &pair));
  MPI_OK(MPI_Type_commit(&pair));
  MPI_Status st;
  MPI_OK(MPI_File_write_at_all(fh, 12 * t_rank, &v, 1, pair, &st));
  struct { int i; double d; } back = {0, 0};
  MPI_OK(MPI_File_read_at_all(fh, 12 * t_rank, &back, 1, pair, &st));
  CHECK(back.i == v.i && back.d == v.d, "round trip gave %d %g", back.i, back.d);
  MPI_Aint ext = 0;
  MPI_OK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
  /* The standard's external32 MPI_LONG is 4 bytes (Open MPI 4.1 says 8). */
  CHECK_CROSSMPI(ext == 4, "MPI_LONG has file extent %ld in external32", (long)ext);
  MPI_OK(MPI_File_close(&fh));
  MPI_OK(MPI_Type_free(&pair));
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  unsigned char bytes[48];
  io_slurp(path, bytes, 12 * t_size);
  for (int r = 0; r < t_size; r++) {
    unsigned char *p = bytes + 12 * r;
    CHECK(p[0] == 1 && p[1] == 2 && p[2] == 3 && p[3] == 4 + r, "int of rank %d is not big-endian", r);
    double d = 1.5 + r;
    unsigned char be[8], raw[8];
    memcpy(raw, &d, 8);
    for (int k = 0; k < 8; k++) be[k] = raw[7 - k];
    CHECK(memcmp(p + 4, be, 8) == 0, "double of rank %d is not big-endian", r);
  }
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (t_rank == 0) MPI_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "io_modes");
  errors();
  sizes_and_append();
  atomic();
  external32();
  t_finish();
  return 0;
}
