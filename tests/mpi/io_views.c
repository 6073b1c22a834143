// ranks: 1 2 4
/* MPI-IO views with derived datatypes: collective and independent writes through an
 * interleaved (resized contiguous) filetype, a 2-D subarray and a cyclic darray, a
 * strided memory type, checked against the bytes in the file; collective reads back. */
#include "io_common.h"

#define BLOCK 5   /* ints per block of the interleaved view */
#define NBLOCKS 7 /* blocks per rank */
#define ROWS 6
#define COLS 8    /* global array ROWS x COLS, split by columns (COLS % 4 == 0) */

/* Rank r owns blocks r, r+size, ... of BLOCK ints each. */
static void interleaved(void) {
  char path[128];
  io_name(path, sizeof path, "interleaved");
  MPI_File fh;
  MPI_Datatype contig, filetype;
  MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  MPI_OK(MPI_Type_contiguous(BLOCK, MPI_INT, &contig));
  MPI_OK(MPI_Type_create_resized(contig, 0, (MPI_Aint)BLOCK * t_size * sizeof(int), &filetype));
  MPI_OK(MPI_Type_commit(&filetype));
  MPI_OK(MPI_File_set_view(fh, (MPI_Offset)t_rank * BLOCK * sizeof(int), MPI_INT, filetype, "native", MPI_INFO_NULL));
  int mine[NBLOCKS * BLOCK];
  for (int i = 0; i < NBLOCKS * BLOCK; i++) mine[i] = t_rank * 1000 + i;
  MPI_Status st;
  MPI_OK(MPI_File_write_all(fh, mine, NBLOCKS * BLOCK, MPI_INT, &st));
  CHECK(t_count(&st, MPI_INT) == NBLOCKS * BLOCK, "write_all wrote %d ints", t_count(&st, MPI_INT));
  MPI_Offset pos = -1;
  MPI_OK(MPI_File_get_position(fh, &pos));
  CHECK(pos == NBLOCKS * BLOCK, "individual pointer at %lld etypes", (long long)pos);
  MPI_Offset byte = -1;
  MPI_OK(MPI_File_get_byte_offset(fh, BLOCK + 1, &byte));
  CHECK(byte == (MPI_Offset)((t_size + t_rank) * BLOCK + 1) * 4, "byte offset %lld", (long long)byte);
  MPI_OK(MPI_File_sync(fh));
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_OK(MPI_File_sync(fh));
  int total = NBLOCKS * BLOCK * t_size, *all = malloc(sizeof(int) * total);
  io_slurp(path, all, (MPI_Offset)total * sizeof(int));
  for (int i = 0; i < total; i++) {
    int b = i / BLOCK, owner = b % t_size, k = b / t_size;
    CHECK(all[i] == owner * 1000 + k * BLOCK + i % BLOCK, "int %d of the file is %d", i, all[i]);
  }
  int back[NBLOCKS * BLOCK];
  memset(back, 0, sizeof back);
  MPI_OK(MPI_File_read_at_all(fh, 0, back, NBLOCKS * BLOCK, MPI_INT, &st));
  CHECK(memcmp(back, mine, sizeof mine) == 0, "read_at_all through the view differs");
  free(all);
  MPI_OK(MPI_File_close(&fh));
  MPI_OK(MPI_Type_free(&contig));
  MPI_OK(MPI_Type_free(&filetype));
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (t_rank == 0) MPI_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

/* A ROWS x COLS int array; rank r writes its column block independently from a
 * strided memory layout (every other int of its buffer). */
static void subarray(void) {
  char path[128];
  io_name(path, sizeof path, "subarray");
  int cols = COLS / (t_size == 1 ? 1 : t_size), c0 = t_rank * cols;
  int sizes[2] = {ROWS, COLS}, sub[2] = {ROWS, cols}, starts[2] = {0, c0};
  MPI_Datatype filetype, memtype;
  MPI_OK(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &filetype));
  MPI_OK(MPI_Type_commit(&filetype));
  MPI_OK(MPI_Type_vector(ROWS * cols, 1, 2, MPI_INT, &memtype));
  MPI_OK(MPI_Type_commit(&memtype));
  MPI_File fh;
  MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
  MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, filetype, "native", MPI_INFO_NULL));
  int *strided = calloc(2 * ROWS * cols, sizeof(int));
  for (int i = 0; i < ROWS; i++)
    for (int j = 0; j < cols; j++) strided[2 * (i * cols + j)] = i * COLS + c0 + j;
  MPI_Status st;
  MPI_OK(MPI_File_write_at(fh, 0, strided, 1, memtype, &st));
  CHECK(t_count(&st, memtype) == 1, "write_at of one strided element");
  MPI_OK(MPI_File_close(&fh));
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  int all[ROWS * COLS];
  io_slurp(path, all, sizeof all);
  for (int i = 0; i < ROWS * COLS; i++) CHECK(all[i] == i, "element %d of the array is %d", i, all[i]);
  /* Read back collectively through a cyclic darray view (2 columns per block). */
  MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  int gs[2] = {ROWS, COLS}, dist[2] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_CYCLIC};
  int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {1, t_size};
  MPI_Datatype darray;
  MPI_OK(MPI_Type_create_darray(t_size, t_rank, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &darray));
  MPI_OK(MPI_Type_commit(&darray));
  int dsize = 0;
  MPI_OK(MPI_Type_size(darray, &dsize));
  MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, darray, "native", MPI_INFO_NULL));
  int n = dsize / 4, *got = malloc(sizeof(int) * n), k = 0;
  MPI_OK(MPI_File_read_all(fh, got, n, MPI_INT, &st));
  CHECK(t_count(&st, MPI_INT) == n, "read_all read %d of %d ints", t_count(&st, MPI_INT), n);
  for (int i = 0; i < ROWS; i++)
    for (int j = 0; j < COLS; j++)
      if ((j / 2) % t_size == t_rank) {
        CHECK(got[k] == i * COLS + j, "darray element %d is %d, expected %d", k, got[k], i * COLS + j);
        k++;
      }
  CHECK(k == n, "darray holds %d elements, expected %d", n, k);
  free(got);
  free(strided);
  MPI_OK(MPI_File_close(&fh));
  MPI_OK(MPI_Type_free(&filetype));
  MPI_OK(MPI_Type_free(&memtype));
  MPI_OK(MPI_Type_free(&darray));
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (t_rank == 0) MPI_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "io_views");
  interleaved();
  subarray();
  t_finish();
  return 0;
}
