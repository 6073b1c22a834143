// ranks: 1 2 4
/* MPI-IO file pointers and completion forms: the individual pointer with seek and a
 * short read at the end of the file, the shared pointer (write_shared from every rank,
 * then ordered writes and reads in rank order), nonblocking accesses with their
 * statuses, and split collectives. */
#include "io_common.h"

static void individual_and_nonblocking(void) {
  char path[128];
  io_name(path, sizeof path, "individual");
  MPI_File fh;
  MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  /* Each rank sees its own 16-int region. */
  MPI_OK(MPI_File_set_view(fh, (MPI_Offset)t_rank * 16 * 4, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  int v[8], got[16];
  for (int i = 0; i < 8; i++) v[i] = t_rank * 100 + i;
  MPI_Status st;
  MPI_OK(MPI_File_write(fh, v, 4, MPI_INT, &st));
  MPI_OK(MPI_File_write(fh, v + 4, 4, MPI_INT, &st));
  MPI_Offset pos = -1;
  MPI_OK(MPI_File_get_position(fh, &pos));
  CHECK(pos == 8, "pointer at %lld after two writes", (long long)pos);
  MPI_OK(MPI_File_seek(fh, -6, MPI_SEEK_CUR));
  MPI_OK(MPI_File_read(fh, got, 3, MPI_INT, &st));
  CHECK(got[0] == v[2] && got[2] == v[4], "read after seek: %d %d", got[0], got[2]);
  MPI_Request rq[2];
  MPI_OK(MPI_File_iwrite_at(fh, 8, v, 8, MPI_INT, &rq[0]));
  MPI_OK(MPI_Wait(&rq[0], &st));
  CHECK(t_count(&st, MPI_INT) == 8, "iwrite_at status counts %d ints", t_count(&st, MPI_INT));
  MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
  memset(got, 0, sizeof got);
  MPI_OK(MPI_File_iread(fh, got, 8, MPI_INT, &rq[0]));
  MPI_OK(MPI_File_iread_at_all(fh, 8, got + 8, 8, MPI_INT, &rq[1]));
  MPI_Status sts[2];
  MPI_OK(MPI_Waitall(2, rq, sts));
  CHECK(memcmp(got, v, sizeof v) == 0 && memcmp(got + 8, v, sizeof v) == 0, "nonblocking reads differ");
  CHECK(t_count(&sts[1], MPI_INT) == 8, "iread_at_all counted %d ints", t_count(&sts[1], MPI_INT));
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  /* The last rank's region ends the file: a read beyond it is short. */
  if (t_rank == t_size - 1) {
    MPI_OK(MPI_File_read_at(fh, 12, got, 8, MPI_INT, &st));
    CHECK(t_count(&st, MPI_INT) == 4, "short read counted %d ints, expected 4", t_count(&st, MPI_INT));
    MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == 16, "MPI_SEEK_END put the pointer at %lld", (long long)pos);
  }
  MPI_OK(MPI_File_close(&fh));
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (t_rank == 0) MPI_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

static void shared_and_ordered(void) {
  char path[128];
  io_name(path, sizeof path, "shared");
  MPI_File fh;
  MPI_Status st;
  MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  /* Three records per rank through the shared pointer: no record lost or overwritten. */
  for (int k = 0; k < 3; k++) {
    int rec[2] = {t_rank, k};
    MPI_OK(MPI_File_write_shared(fh, rec, 2, MPI_INT, &st));
  }
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_Offset pos = -1;
  MPI_OK(MPI_File_get_position_shared(fh, &pos));
  CHECK(pos == 6 * t_size, "shared pointer at %lld, expected %d", (long long)pos, 6 * t_size);
  int *recs = malloc(sizeof(int) * 6 * t_size), seen[4][3];
  memset(seen, 0, sizeof seen);
  MPI_OK(MPI_File_read_at(fh, 0, recs, 6 * t_size, MPI_INT, &st));
  for (int i = 0; i < 3 * t_size; i++) {
    int r = recs[2 * i], k = recs[2 * i + 1];
    CHECK(r >= 0 && r < t_size && k >= 0 && k < 3, "record %d is (%d, %d)", i, r, k);
    seen[r][k]++;
  }
  for (int r = 0; r < t_size; r++)
    for (int k = 0; k < 3; k++) CHECK(seen[r][k] == 1, "record (%d, %d) appears %d times", r, k, seen[r][k]);
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  /* Ordered: rank r appends r + 1 copies of r, in rank order, after the records. */
  int mine[4];
  for (int i = 0; i <= t_rank; i++) mine[i] = t_rank;
  MPI_OK(MPI_File_write_ordered(fh, mine, t_rank + 1, MPI_INT, &st));
  MPI_OK(MPI_File_get_position_shared(fh, &pos));
  int n_ordered = t_size * (t_size + 1) / 2;
  CHECK(pos == 6 * t_size + n_ordered, "shared pointer at %lld after write_ordered", (long long)pos);
  MPI_OK(MPI_File_seek_shared(fh, 6 * t_size, MPI_SEEK_SET));
  int back[4] = {-1, -1, -1, -1};
  MPI_OK(MPI_File_read_ordered(fh, back, t_rank + 1, MPI_INT, &st));
  for (int i = 0; i <= t_rank; i++) CHECK(back[i] == t_rank, "read_ordered element %d is %d", i, back[i]);
  /* Split collectives on the individual pointer and at explicit offsets. */
  int one = 1000 + t_rank, got = -1;
  MPI_OK(MPI_File_write_at_all_begin(fh, 6 * t_size + n_ordered + t_rank, &one, 1, MPI_INT));
  MPI_OK(MPI_File_write_at_all_end(fh, &one, &st));
  CHECK(t_count(&st, MPI_INT) == 1, "write_at_all_end counted %d", t_count(&st, MPI_INT));
  MPI_OK(MPI_File_seek(fh, 6 * t_size + n_ordered + t_rank, MPI_SEEK_SET));
  MPI_OK(MPI_File_read_all_begin(fh, &got, 1, MPI_INT));
  MPI_OK(MPI_File_read_all_end(fh, &got, &st));
  CHECK(got == one, "split read_all got %d", got);
  free(recs);
  MPI_OK(MPI_File_close(&fh));
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (t_rank == 0) {
    int total = 6 * t_size + n_ordered + t_size, *all = malloc(sizeof(int) * total);
    io_slurp(path, all, (MPI_Offset)total * 4);
    int at = 6 * t_size;
    for (int r = 0; r < t_size; r++)
      for (int i = 0; i <= r; i++, at++) CHECK(all[at] == r, "ordered int %d is %d, expected %d", at, all[at], r);
    for (int r = 0; r < t_size; r++, at++) CHECK(all[at] == 1000 + r, "split write %d is %d", r, all[at]);
    free(all);
    MPI_OK(MPI_File_delete(path, MPI_INFO_NULL));
  }
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "io_pointers");
  individual_and_nonblocking();
  shared_and_ordered();
  t_finish();
  return 0;
}
