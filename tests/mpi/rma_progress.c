// ranks: 2 4
/* Passive-target progress while the target computes: with
 * CROSSMPI_RMA_PROGRESS_THREAD=1 (set by the program itself), rank 0 locks rank 1's
 * window, puts a value and unlocks while rank 1 spins on its own memory without
 * calling MPI; rank 1 must see the value arrive before it calls MPI again. Uses
 * MPI_Win_create so the put travels as a message (not a shared-memory copy). */
#include "common.h"

int main(int argc, char **argv) {
  setenv("CROSSMPI_RMA_PROGRESS_THREAD", "1", 1);
  t_init(&argc, &argv, "rma_progress");
  volatile int *mem = calloc(4, sizeof(int));
  MPI_Win win;
  MPI_OK(MPI_Win_create((void *)mem, 4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  MPI_Barrier(MPI_COMM_WORLD);
  if (t_rank == 0) {
    int v = 31337;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
    MPI_OK(MPI_Put(&v, 1, MPI_INT, 1, 2, 1, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(1, win));
  } else if (t_rank == 1) {
    double start = MPI_Wtime(); /* MPI_Wtime only reads the clock */
    while (mem[2] != 31337 && MPI_Wtime() - start < 10.0) {
    }
    CHECK_CROSSMPI(mem[2] == 31337, "the put did not arrive while rank 1 computed for %.1f s", MPI_Wtime() - start);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (t_rank == 1) CHECK(mem[2] == 31337, "the put arrived by the barrier: %d", mem[2]);
  MPI_OK(MPI_Win_free(&win));
  free((void *)mem);
  t_finish();
  return 0;
}
