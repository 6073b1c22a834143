/* Checking error codes returned under MPI_ERRORS_RETURN (errors*.c). */
#ifndef CROSSMPI_TEST_ERRCHECK_H
#define CROSSMPI_TEST_ERRCHECK_H
#include "common.h"

#define BAD_RANK 7 /* larger than every rank count the runner uses */

/* Checks an error code: its class, and that its string contains the function name,
 * the argument name and one of the accepted value spellings ("|"-separated). */
static void expect_error(int rc, int want_class, const char *cls, const char *func, const char *arg,
                         const char *values, int line) {
  int got_class = -1, len = 0;
  char msg[MPI_MAX_ERROR_STRING];
  if (rc == MPI_SUCCESS) t_fail(__FILE__, line, "%s with an invalid %s returned MPI_SUCCESS", func, arg);
  MPI_OK(MPI_Error_class(rc, &got_class));
  if (got_class != want_class)
    t_fail(__FILE__, line, "%s with an invalid %s: error class %d, expected %s (%d)", func, arg, got_class, cls,
           want_class);
  msg[0] = '\0';
  MPI_OK(MPI_Error_string(rc, msg, &len));
  CHECK(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(msg) == len, "%s: error string length %d", func, len);
  int has_value = values == NULL;
  char copy[128];
  snprintf(copy, sizeof copy, "%s", values ? values : "");
  for (char *v = strtok(copy, "|"); v != NULL && !has_value; v = strtok(NULL, "|")) has_value = strstr(msg, v) != NULL;
  if (t_peer()) return; /* message text is crossmpi's own */
  if (strstr(msg, func) == NULL || strstr(msg, arg) == NULL || !has_value)
    t_fail(__FILE__, line, "error string of %s (%s) does not name function %s, argument %s and value %s: \"%s\"",
           func, cls, func, arg, values ? values : "-", msg);
}

#define EXPECT(call, cls, func, arg, values) expect_error((call), cls, #cls, func, arg, values, __LINE__)

#endif
