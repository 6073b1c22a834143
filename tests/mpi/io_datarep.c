// ranks: 1 2 4
/* User-defined data representations (MPI_Register_datarep and _c): a representation
 * storing ints as 8-byte big-endian in the file (file extent 8, native 4) written and
 * read through interleaved byte views and an int view (its filetype's displacements
 * scaled to the file's sizes), independent and collective, with the file's bytes
 * checked exactly through "native"; one storing ints byte-swapped registered with
 * MPI_Count callbacks, under an int view; one without conversion functions (native
 * bytes); and an external32 view of longs (4 bytes in the file). Errors: a name taken,
 * an unknown name in MPI_File_set_view and a conversion function's own error code
 * returned to the caller. Open MPI 4.1 and MPICH 4.0 do not convert user representations,
 * so in peer mode the program is skipped (exit 77) when registration fails. */
#include "io_common.h"
#include <stdint.h>

#define WIDE "crossmpi-wide-be"
#define SWAP "crossmpi-swap-c"
#define PLAIN "crossmpi-plain"

/* SWAP's functions take MPI_Count counts (MPI_Register_datarep_c) where the MPI has
 * them (peer MPIs of MPI 3.1 register it with int counts). */
#if MPI_VERSION >= 4
typedef MPI_Count swap_count;
#define REGISTER_SWAP MPI_Register_datarep_c
#else
typedef int swap_count;
#define REGISTER_SWAP MPI_Register_datarep
#endif

static int extent_calls = 0, write_calls = 0, read_calls = 0;

/* Ints take 8 bytes in WIDE files; other types their native size. */
static int wide_extent(MPI_Datatype t, MPI_Aint *extent, void *extra) {
  CHECK(extra == &extent_calls, "extra_state %p passed back", extra);
  extent_calls++;
  if (t == MPI_INT) {
    *extent = 8;
    return MPI_SUCCESS;
  }
  int size;
  MPI_OK(MPI_Type_size(t, &size));
  *extent = size;
  return MPI_SUCCESS;
}

/* Converts ints only: another datatype is the conversion error the caller must see. */
static int wide_write(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position, void *extra) {
  (void)extra;
  if (t != MPI_INT) return MPI_ERR_CONVERSION;
  write_calls++;
  const int *in = (const int *)userbuf + position;
  unsigned char *out = filebuf;
  for (int i = 0; i < count; i++) {
    uint64_t v = (uint64_t)(int64_t)in[i];
    for (int b = 0; b < 8; b++) out[8 * i + b] = (unsigned char)(v >> (56 - 8 * b));
  }
  return MPI_SUCCESS;
}

static int wide_read(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position, void *extra) {
  (void)extra;
  if (t != MPI_INT) return MPI_ERR_CONVERSION;
  read_calls++;
  int *out = (int *)userbuf + position;
  const unsigned char *in = filebuf;
  for (int i = 0; i < count; i++) {
    uint64_t v = 0;
    for (int b = 0; b < 8; b++) v = v << 8 | in[8 * i + b];
    out[i] = (int)(int64_t)v;
  }
  return MPI_SUCCESS;
}

static int native_extent(MPI_Datatype t, MPI_Aint *extent, void *extra) {
  (void)extra;
  int size;
  MPI_OK(MPI_Type_size(t, &size));
  *extent = size;
  return MPI_SUCCESS;
}

/* Reverses the bytes of each int (its own inverse: reading and writing alike). */
static int swap_ints(void *userbuf, MPI_Datatype t, swap_count count, void *filebuf, MPI_Offset position,
                     void *extra) {
  int reading = extra != NULL;
  if (t != MPI_INT) return MPI_ERR_CONVERSION;
  unsigned char *mem = (unsigned char *)((int *)userbuf + position), *file = filebuf;
  for (swap_count i = 0; i < count; i++)
    for (int b = 0; b < 4; b++) {
      if (reading)
        mem[4 * i + b] = file[4 * i + 3 - b];
      else
        file[4 * i + 3 - b] = mem[4 * i + b];
    }
  return MPI_SUCCESS;
}

static int swap_write(void *u, MPI_Datatype t, swap_count c, void *f, MPI_Offset p, void *extra) {
  (void)extra;
  return swap_ints(u, t, c, f, p, NULL);
}

static int swap_read(void *u, MPI_Datatype t, swap_count c, void *f, MPI_Offset p, void *extra) {
  (void)extra;
  return swap_ints(u, t, c, f, p, (void *)1);
}

static int value(int rank, int i) { return (i % 2 ? -1 : 1) * ((rank + 1) * 1000 + i); }

static void registration(void) {
  int rc = MPI_Register_datarep(WIDE, wide_read, wide_write, wide_extent, &extent_calls);
  /* Open MPI 4.1 and MPICH 4.0 refuse conversion functions (MPI_ERR_CONVERSION): the
   * program is skipped with them. */
  if (rc != MPI_SUCCESS && t_peer()) {
    if (t_rank == 0) printf("SKIP io_datarep: the peer MPI refuses conversion functions (code %d)\n", rc);
    MPI_Finalize();
    exit(77);
  }
  MPI_OK(rc);
  IO_EXPECT(MPI_Register_datarep(WIDE, wide_read, wide_write, wide_extent, NULL), MPI_ERR_DUP_DATAREP,
            "MPI_Register_datarep", "datarep");
  IO_EXPECT(MPI_Register_datarep("native", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, native_extent, NULL),
            MPI_ERR_DUP_DATAREP, "MPI_Register_datarep", "datarep");
  MPI_OK(REGISTER_SWAP(SWAP, swap_read, swap_write, native_extent, NULL));
  IO_EXPECT(REGISTER_SWAP(SWAP, swap_read, swap_write, native_extent, NULL), MPI_ERR_DUP_DATAREP,
            "MPI_Register_datarep", "datarep");
  MPI_OK(MPI_Register_datarep(PLAIN, MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, native_extent, NULL));
}

/* A filetype giving this rank the rank-th of every t_size blocks of `n` elements of
 * `t`. */
static MPI_Datatype interleaved(int n, MPI_Datatype t) {
  MPI_Datatype block, filetype;
  MPI_Aint lb, extent;
  MPI_OK(MPI_Type_get_extent(t, &lb, &extent));
  MPI_Aint at = n * extent * t_rank;
  MPI_OK(MPI_Type_create_hindexed_block(1, n, &at, t, &block));
  MPI_OK(MPI_Type_create_resized(block, 0, n * extent * t_size, &filetype));
  MPI_OK(MPI_Type_commit(&filetype));
  MPI_OK(MPI_Type_free(&block));
  return filetype;
}

/* Opens a new file named after `what` (its name into `path`, 128 bytes) for all. */
static MPI_File open_new(const char *what, char *path) {
  MPI_File fh;
  io_name(path, 128, what);
  MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  return fh;
}

/* The `n` bytes of the file once every rank's writes are in (free them). */
static unsigned char *file_bytes(MPI_File fh, const char *path, long n) {
  MPI_OK(MPI_File_sync(fh));
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  unsigned char *bytes = malloc((size_t)n);
  io_slurp(path, bytes, n);
  return bytes;
}

static void close_and_delete(MPI_File *fh, const char *path, MPI_Datatype *filetype) {
  MPI_OK(MPI_File_close(fh));
  MPI_OK(MPI_Type_free(filetype));
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (t_rank == 0) MPI_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

/* The file byte where rank r's stream byte s lies: 16-byte blocks, interleaved. */
static long wide_offset(int r, long s) { return (s / 16 * t_size + r) * 16 + s % 16; }

/* An int etype in WIDE: the filetype (a subarray, which scales) gives rank r the r-th of
 * every t_size ints, 8 bytes each in the file, after the 64 bytes per rank before. */
static void wide_int_view(MPI_File fh, const char *path) {
  MPI_Datatype ft;
  int sizes[1] = {t_size}, sub[1] = {1}, starts[1] = {t_rank};
  MPI_OK(MPI_Type_create_subarray(1, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &ft));
  MPI_OK(MPI_Type_commit(&ft));
  MPI_Offset disp = 64L * t_size, where;
  MPI_OK(MPI_File_set_view(fh, disp, MPI_INT, ft, WIDE, MPI_INFO_NULL));
  MPI_Aint ext = 0;
  MPI_OK(MPI_File_get_type_extent(fh, ft, &ext));
  CHECK(ext == 8L * t_size, "the filetype's file extent is %ld", (long)ext);
  MPI_OK(MPI_File_get_byte_offset(fh, 1, &where));
  CHECK(where == disp + 8L * (t_size + t_rank), "etype 1 lies at byte %lld", (long long)where);
  int out[4], in[4];
  for (int i = 0; i < 4; i++) out[i] = value(t_rank, 10 + i);
  MPI_Status st;
  MPI_OK(MPI_File_write_at_all(fh, 0, out, 3, MPI_INT, &st));
  MPI_OK(MPI_File_write_at(fh, 3, out + 3, 1, MPI_INT, &st));
  unsigned char *bytes = file_bytes(fh, path, 96L * t_size);
  for (int r = 0; r < t_size; r++)
    for (int i = 0; i < 4; i++) {
      const unsigned char *p = bytes + disp + 8L * (i * t_size + r);
      uint64_t want = (uint64_t)(int64_t)value(r, 10 + i);
      for (int b = 0; b < 8; b++)
        CHECK(p[b] == (unsigned char)(want >> (56 - 8 * b)), "int view: rank %d int %d byte %d is %d", r, i, b, p[b]);
    }
  free(bytes);
  memset(in, 0, sizeof in);
  MPI_OK(MPI_File_read_at_all(fh, 0, in, 4, MPI_INT, &st));
  for (int i = 0; i < 4; i++) CHECK(in[i] == out[i], "int view: int %d read back as %d", i, in[i]);
  MPI_OK(MPI_Type_free(&ft));
}

static void wide(void) {
  char path[128];
  MPI_File fh = open_new("wide", path);
  MPI_Datatype filetype = interleaved(16, MPI_BYTE);
  MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, filetype, WIDE, MPI_INFO_NULL));
  char rep[MPI_MAX_DATAREP_STRING];
  MPI_Offset disp;
  MPI_Datatype et, ft;
  MPI_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
  CHECK(strcmp(rep, WIDE) == 0, "view reports %s", rep);
  MPI_Aint ext = 0;
  MPI_OK(MPI_File_get_type_extent(fh, MPI_INT, &ext));
  CHECK(ext == 8, "MPI_INT has file extent %ld in %s", (long)ext, WIDE);
  CHECK(extent_calls > 0, "dtype_file_extent_fn was called");

  /* Ints 0-3 independently (32 file bytes: two blocks), 4-7 collectively after them. */
  int out[8], in[8];
  for (int i = 0; i < 8; i++) out[i] = value(t_rank, i);
  MPI_Status st;
  MPI_OK(MPI_File_write_at(fh, 0, out, 4, MPI_INT, &st));
  CHECK(t_count(&st, MPI_INT) == 4, "wrote %d ints", t_count(&st, MPI_INT));
  MPI_OK(MPI_File_write_at_all(fh, 32, out + 4, 4, MPI_INT, &st));
  CHECK(write_calls >= 2, "write_conversion_fn called %d times", write_calls);

  /* The file's bytes, through native. */
  unsigned char *bytes = file_bytes(fh, path, 64L * t_size);
  for (int r = 0; r < t_size; r++)
    for (int i = 0; i < 8; i++) {
      const unsigned char *p = bytes + wide_offset(r, 8L * i);
      int64_t want = value(r, i);
      for (int b = 0; b < 8; b++)
        CHECK(p[b] == (unsigned char)((uint64_t)want >> (56 - 8 * b)), "rank %d int %d byte %d is %d", r, i, b, p[b]);
    }
  free(bytes);

  /* Back through the representation: independent, then collective. */
  memset(in, 0, sizeof in);
  MPI_OK(MPI_File_read_at(fh, 0, in, 8, MPI_INT, &st));
  CHECK(t_count(&st, MPI_INT) == 8, "read %d ints", t_count(&st, MPI_INT));
  for (int i = 0; i < 8; i++) CHECK(in[i] == out[i], "int %d read back as %d, wrote %d", i, in[i], out[i]);
  memset(in, 0, sizeof in);
  MPI_OK(MPI_File_read_at_all(fh, 0, in, 8, MPI_INT, &st));
  for (int i = 0; i < 8; i++) CHECK(in[i] == out[i], "int %d read back collectively as %d", i, in[i]);
  CHECK(read_calls >= 2, "read_conversion_fn called %d times", read_calls);
  /* Reading past the end: whole ints only. */
  MPI_OK(MPI_File_read_at(fh, 48, in, 4, MPI_INT, &st));
  CHECK(t_count(&st, MPI_INT) == 2, "read %d ints at the end", t_count(&st, MPI_INT));

  /* The conversion function's own error code comes back, independent and collective. */
  MPI_Datatype two;
  MPI_OK(MPI_Type_contiguous(2, MPI_INT, &two));
  MPI_OK(MPI_Type_commit(&two));
  int rc = MPI_File_write_at(fh, 0, out, 1, two, &st);
  CHECK(rc == MPI_ERR_CONVERSION, "write with a type the function refuses returned %d", rc);
  rc = MPI_File_write_at_all(fh, 0, out, 1, two, &st);
  CHECK(rc == MPI_ERR_CONVERSION, "collective write it refuses returned %d", rc);
  rc = MPI_File_read_at(fh, 0, in, 1, two, &st);
  CHECK(rc == MPI_ERR_CONVERSION, "read with a type the function refuses returned %d", rc);
  MPI_OK(MPI_Type_free(&two));

  wide_int_view(fh, path);
  IO_EXPECT(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "crossmpi-unregistered", MPI_INFO_NULL),
            MPI_ERR_UNSUPPORTED_DATAREP, "MPI_File_set_view", "datarep");
  close_and_delete(&fh, path, &filetype);
}

/* SWAP under an interleaved int view (rank r owns every size-th int); PLAIN writes
 * native bytes after it. */
static void swapped(void) {
  char path[128];
  MPI_File fh = open_new("swap", path);
  MPI_Datatype filetype = interleaved(1, MPI_INT);
  MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, filetype, SWAP, MPI_INFO_NULL));
  int out[6], in[6];
  for (int i = 0; i < 6; i++) out[i] = value(t_rank, i);
  MPI_Status st;
  MPI_OK(MPI_File_write_all(fh, out, 3, MPI_INT, &st));
  MPI_OK(MPI_File_write(fh, out + 3, 3, MPI_INT, &st));
  /* Two more ints each, in native bytes, after the 6 of every rank. */
  MPI_OK(MPI_File_set_view(fh, 24L * t_size, MPI_INT, filetype, PLAIN, MPI_INFO_NULL));
  MPI_OK(MPI_File_write_at_all(fh, 0, out, 2, MPI_INT, &st));
  unsigned char *bytes = file_bytes(fh, path, 32L * t_size);
  for (int r = 0; r < t_size; r++)
    for (int i = 0; i < 8; i++) {
      int want = value(r, i < 6 ? i : i - 6), got;
      unsigned char *p = bytes + 4L * (i * t_size + r), w[4];
      memcpy(w, &want, 4);
      if (i < 6)
        for (int b = 0; b < 4; b++) CHECK(p[b] == w[3 - b], "rank %d int %d byte %d swapped", r, i, b);
      memcpy(&got, p, 4);
      if (i >= 6) CHECK(got == want, "rank %d native int %d is %d, want %d", r, i, got, want);
    }
  free(bytes);
  MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, filetype, SWAP, MPI_INFO_NULL));
  memset(in, 0, sizeof in);
  MPI_OK(MPI_File_read_all(fh, in, 6, MPI_INT, &st));
  for (int i = 0; i < 6; i++) CHECK(in[i] == out[i], "int %d read back as %d", i, in[i]);
  close_and_delete(&fh, path, &filetype);
}

/* external32 views of a type of another size in the file (MPI_LONG: 8 bytes native, 4
 * in external32): a vector of every other long places 4-byte longs 8 bytes apart, tiles
 * every 12 bytes. */
static void external32_longs(void) {
  char path[128];
  MPI_File fh = open_new("longs", path);
  MPI_Datatype ft;
  MPI_OK(MPI_Type_vector(2, 1, 2, MPI_LONG, &ft));
  MPI_OK(MPI_Type_commit(&ft));
  MPI_OK(MPI_File_set_view(fh, 24L * t_rank, MPI_LONG, ft, "external32", MPI_INFO_NULL));
  long out[4], in[4];
  for (int i = 0; i < 4; i++) out[i] = (t_rank + 1) * 100 + i;
  MPI_Status st;
  MPI_OK(MPI_File_write_all(fh, out, 4, MPI_LONG, &st));
  unsigned char *bytes = file_bytes(fh, path, 24L * t_size);
  static const int at[4] = {0, 8, 12, 20};
  for (int r = 0; r < t_size; r++)
    for (int i = 0; i < 4; i++) {
      const unsigned char *p = bytes + 24L * r + at[i];
      long want = (r + 1) * 100 + i;
      for (int b = 0; b < 4; b++)
        CHECK(p[b] == (unsigned char)(want >> (24 - 8 * b)), "rank %d long %d byte %d is %d", r, i, b, p[b]);
    }
  free(bytes);
  MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
  MPI_OK(MPI_File_read(fh, in, 4, MPI_LONG, &st));
  for (int i = 0; i < 4; i++) CHECK(in[i] == out[i], "long %d read back as %ld", i, in[i]);
  close_and_delete(&fh, path, &ft);
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "io_datarep");
  registration();
  wide();
  swapped();
  external32_longs();
  t_finish();
  return 0;
}
