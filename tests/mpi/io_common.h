/* Helpers of the MPI-IO test programs (io_*.c): a file name every rank agrees on, and
 * reading a whole file back through the default view. */
#ifndef CROSSMPI_TEST_IO_COMMON_H
#define CROSSMPI_TEST_IO_COMMON_H
#include "common.h"
#include <unistd.h>

/* "/tmp/crossmpi-io-<pid of rank 0>-<what>": one name per job and test step. */
static inline void io_name(char *out, size_t n, const char *what) {
  long pid = (long)getpid();
  MPI_OK(MPI_Bcast(&pid, 1, MPI_LONG, 0, t_ctl));
  snprintf(out, n, "/tmp/crossmpi-io-%ld-%s", pid, what);
}

/* Reads the first `n` bytes of `path` through an independent open (rank-local). */
static inline void io_slurp(const char *path, void *buf, MPI_Offset n) {
  MPI_File fh;
  MPI_Status st;
  MPI_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  MPI_Offset size = -1;
  MPI_OK(MPI_File_get_size(fh, &size));
  CHECK(size == n, "%s holds %lld bytes, expected %lld", path, (long long)size, (long long)n);
  MPI_OK(MPI_File_read_at(fh, 0, buf, (int)n, MPI_BYTE, &st));
  CHECK(t_count(&st, MPI_BYTE) == (int)n, "read %d of %lld bytes", t_count(&st, MPI_BYTE), (long long)n);
  MPI_OK(MPI_File_close(&fh));
}

/* An error code's class is `want`, and its string names the class, the function and
 * the argument (crossmpi's message form; the text is not checked against a peer MPI).
 * Until crossmpi's core knows the file classes, a crossmpi code of a file class has
 * class MPI_ERR_OTHER and names the exact class in its string. */
static inline void io_expect(int rc, int want, const char *want_name, const char *func, const char *arg, int line) {
  int cls = -1, len = 0;
  char msg[MPI_MAX_ERROR_STRING] = "";
  if (rc == MPI_SUCCESS) t_fail(__FILE__, line, "%s succeeded, expected %s", func, want_name);
  MPI_OK(MPI_Error_class(rc, &cls));
  MPI_OK(MPI_Error_string(rc, msg, &len));
  if (t_peer()) {
    if (cls != want) t_fail(__FILE__, line, "%s: error class %d, expected %s (%d)", func, cls, want_name, want);
    return;
  }
  if (cls != want && !(cls == MPI_ERR_OTHER && strstr(msg, want_name) != NULL))
    t_fail(__FILE__, line, "%s: error class %d (\"%s\"), expected %s", func, cls, msg, want_name);
  if (strstr(msg, func) == NULL || strstr(msg, arg) == NULL)
    t_fail(__FILE__, line, "error string of %s does not name it and argument %s: \"%s\"", func, arg, msg);
}
#define IO_EXPECT(call, cls, func, arg) io_expect((call), cls, #cls, func, arg, __LINE__)

#endif
