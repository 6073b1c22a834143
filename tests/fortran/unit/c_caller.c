/* Calls the trampolines of fortran/support.f90 through the C callback types of mpi.h,
 * as the C library calls what the Fortran wrappers give it, and reads the string
 * arrays the wrappers build for MPI_Comm_spawn(_multiple). No MPI function is called. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int call_copy(MPI_Comm_copy_attr_function *f, MPI_Comm comm, int keyval, void *extra,
              void *in, void **out, int *flag) {
  return f(comm, keyval, extra, in, out, flag);
}

int call_delete(MPI_Comm_delete_attr_function *f, MPI_Comm comm, int keyval, void *value,
                void *extra) {
  return f(comm, keyval, value, extra);
}

int call_query(MPI_Grequest_query_function *f, void *extra, MPI_Status *status) {
  return f(extra, status);
}

int call_free(MPI_Grequest_free_function *f, void *extra) { return f(extra); }

int call_cancel(MPI_Grequest_cancel_function *f, void *extra, int complete) {
  return f(extra, complete);
}

int call_conversion(MPI_Datarep_conversion_function *f, void *userbuf, MPI_Datatype type,
                    int count, void *filebuf, MPI_Offset position, void *extra) {
  return f(userbuf, type, count, filebuf, position, extra);
}

int call_conversion_c(MPI_Datarep_conversion_function_c *f, void *userbuf, MPI_Datatype type,
                      MPI_Count count, void *filebuf, MPI_Offset position, void *extra) {
  return f(userbuf, type, count, filebuf, position, extra);
}

int call_extent(MPI_Datarep_extent_function *f, MPI_Datatype type, MPI_Aint *extent,
                void *extra) {
  return f(type, extent, extra);
}

/* Appends s and a separator to out (of size n). */
static void append(char *out, size_t n, const char *s, const char *sep) {
  strncat(out, s, n - strlen(out) - 1);
  strncat(out, sep, n - strlen(out) - 1);
}

/* "a|b|" for the NULL-terminated argv {"a", "b", NULL}; "(null)" for NULL. */
void join_argv(char **argv, char *out, size_t n) {
  out[0] = '\0';
  if (argv == NULL) {
    append(out, n, "(null)", "");
    return;
  }
  for (; *argv != NULL; argv++) append(out, n, *argv, "|");
}

/* count strings, each followed by '|'. */
void join_strings(int count, char **strings, char *out, size_t n) {
  out[0] = '\0';
  for (int i = 0; i < count; i++) append(out, n, strings[i], "|");
}

/* count argv lists, each as join_argv gives it followed by ';'. */
void join_argv_lists(int count, char ***lists, char *out, size_t n) {
  char one[256];
  out[0] = '\0';
  if (lists == NULL) {
    append(out, n, "(null)", "");
    return;
  }
  for (int i = 0; i < count; i++) {
    join_argv(lists[i], one, sizeof one);
    append(out, n, one, ";");
  }
}
