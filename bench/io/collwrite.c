/* Collective write throughput: every rank writes its share of a file through a view of
 * interleaved blocks (rank r owns blocks r, r + size, ...) with one MPI_File_write_all,
 * the access pattern two-phase I/O aggregates.
 *
 *   collwrite FILE TOTAL_BYTES BLOCK_BYTES
 *
 * Prints "collwrite BLOCK MiB/s" (rank 0): TOTAL / (time from a barrier before the
 * write_all to a barrier after it). The page cache absorbs the data (no MPI_File_sync):
 * the figure is the MPI library's aggregation and write path, not the disk. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 4) {
    if (rank == 0) fprintf(stderr, "usage: collwrite FILE TOTAL_BYTES BLOCK_BYTES\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  long long total = atoll(argv[2]), block = atoll(argv[3]);
  long long mine = total / size / block * block;
  char *buf = malloc(mine);
  for (long long i = 0; i < mine; i++) buf[i] = (char)(rank + i);
  MPI_Datatype contig, filetype;
  MPI_Type_contiguous((int)block, MPI_BYTE, &contig);
  MPI_Type_create_resized(contig, 0, (MPI_Aint)(block * size), &filetype);
  MPI_Type_commit(&filetype);
  MPI_File fh;
  MPI_File_delete(argv[1], MPI_INFO_NULL); /* a fresh file each run; missing is fine */
  MPI_Barrier(MPI_COMM_WORLD);
  if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
    fprintf(stderr, "collwrite: cannot open %s\n", argv[1]);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_File_set_view(fh, (MPI_Offset)rank * block, MPI_BYTE, filetype, "native", MPI_INFO_NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  MPI_Status st;
  int rc = MPI_File_write_all(fh, buf, (int)mine, MPI_BYTE, &st);
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime() - t0;
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "collwrite: write_all failed\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_File_close(&fh);
  if (rank == 0) {
    /* Check the layout once: block b of the file belongs to rank b % size. */
    FILE *f = fopen(argv[1], "rb");
    long long nblocks = mine / block * size, bad = 0;
    char *b = malloc(block);
    for (long long k = 0; f && k < nblocks; k += nblocks / 17 + 1) {
      fseek(f, k * block, SEEK_SET);
      if (fread(b, 1, block, f) != (size_t)block) { bad++; continue; }
      int r = (int)(k % size);
      long long at = (k / size) * block;
      for (long long i = 0; i < block; i++)
        if (b[i] != (char)(r + at + i)) { bad++; break; }
    }
    if (f) fclose(f);
    free(b);
    if (bad || !f) {
      fprintf(stderr, "collwrite: the file's contents are wrong (%lld bad blocks)\n", bad);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    printf("collwrite %lld %.1f\n", block, (double)(mine * size) / t / (1 << 20));
    MPI_File_delete(argv[1], MPI_INFO_NULL);
  }
  free(buf);
  MPI_Type_free(&contig);
  MPI_Type_free(&filetype);
  MPI_Finalize();
  return 0;
}
