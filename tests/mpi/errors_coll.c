// ranks: 1 2 4
/* Argument checking of collective calls with MPI_ERRORS_RETURN: an invalid root, count
 * or datatype returns the right class and names function, argument and value. Every
 * rank makes the same invalid call, so no rank waits for another. */
#include "errcheck.h"

int main(int argc, char **argv) {
  t_init(&argc, &argv, "errors_coll");
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int buf[4] = {0};
  EXPECT(MPI_Bcast(buf, 1, MPI_INT, BAD_RANK, MPI_COMM_WORLD), MPI_ERR_ROOT, "MPI_Bcast", "root", "7");
  EXPECT(MPI_Bcast(buf, 1, MPI_INT, -9, MPI_COMM_WORLD), MPI_ERR_ROOT, "MPI_Bcast", "root", "-9");
  EXPECT(MPI_Bcast(buf, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Bcast", "count", "-1");
  EXPECT(MPI_Bcast(buf, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Bcast", "datatype",
         "MPI_DATATYPE_NULL|0x0");
  /* a valid broadcast still works afterwards */
  int v = t_rank == 0 ? 4242 : -1;
  MPI_OK(MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD));
  CHECK(v == 4242, "MPI_Bcast after the errors delivered %d", v);
  t_finish();
  return 0;
}
