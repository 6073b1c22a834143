// ranks: 1 2
/* MPI 4.1/5.0 environment calls: removing user error classes, codes and strings (a
 * class with a live code cannot go; removed values are no longer error codes),
 * MPI_Get_hw_resource_info, MPI_Abi_get_info (type sizes), MPI_Abi_get/set_fortran_info
 * and _booleans, MPI_Type_create_f90_integer/real/complex (the kind with the requested
 * precision and range; one predefined handle per request, its envelope naming the
 * request, refused by MPI_Type_free; matching the MPI_INTEGERn/REALn it is laid out
 * as), and the dynamic-process calls in processes that were not
 * spawned: no parent, MPI_Comm_disconnect frees, spawning a missing program, an unknown
 * name and a bad root fail with their classes. */
#include "common.h"

static int class_of(int rc) {
  int c = -1;
  MPI_OK(MPI_Error_class(rc, &c));
  return c;
}

static void info_value(MPI_Info info, const char *key, char *value) {
  int flag = 0, len = MPI_MAX_INFO_VAL;
  MPI_OK(MPI_Info_get_string(info, key, &len, value, &flag));
  CHECK(flag, "info key %s missing", key);
}

static void errors(void) {
  int cls, code, rc;
  MPI_OK(MPI_Add_error_class(&cls));
  MPI_OK(MPI_Add_error_code(cls, &code));
  MPI_OK(MPI_Add_error_string(code, "my code"));
  char s[MPI_MAX_ERROR_STRING];
  int len;
  MPI_OK(MPI_Error_string(code, s, &len));
  CHECK(strcmp(s, "my code") == 0, "string %s", s);
  rc = MPI_Remove_error_class(cls);
  CHECK(class_of(rc) == MPI_ERR_ARG, "removing a class with a live code: class %d", class_of(rc));
  MPI_OK(MPI_Remove_error_string(code));
  MPI_OK(MPI_Error_string(code, s, &len));
  CHECK(len == 0, "string after Remove_error_string: '%s'", s);
  MPI_OK(MPI_Remove_error_code(code));
  MPI_OK(MPI_Remove_error_class(cls));
  int c = 0;
  CHECK(MPI_Error_class(code, &c) != MPI_SUCCESS, "a removed code still has a class");
  rc = MPI_Remove_error_code(code);
  CHECK(class_of(rc) == MPI_ERR_ARG, "removing twice: class %d", class_of(rc));
  rc = MPI_Remove_error_class(MPI_ERR_TAG);
  CHECK(class_of(rc) == MPI_ERR_ARG, "removing a predefined class: class %d", class_of(rc));
  rc = MPI_Add_error_code(cls, &code);
  CHECK(class_of(rc) == MPI_ERR_ARG, "a code in a removed class: class %d", class_of(rc));
  /* adding and removing many times does not run out of values (MPICH's errhan/adderr
   * does 32 classes of 5 codes 10,000 times) */
  for (int round = 0; round < 2000; round++) {
    int classes[32], codes[32][5];
    for (int i = 0; i < 32; i++) {
      MPI_OK(MPI_Add_error_class(&classes[i]));
      for (int j = 0; j < 5; j++) MPI_OK(MPI_Add_error_code(classes[i], &codes[i][j]));
    }
    MPI_OK(MPI_Error_class(codes[31][4], &c));
    CHECK(c == classes[31], "round %d: class of a new code %d, expected %d", round, c, classes[31]);
    for (int i = 0; i < 32; i++) {
      for (int j = 0; j < 5; j++) MPI_OK(MPI_Remove_error_code(codes[i][j]));
      MPI_OK(MPI_Remove_error_class(classes[i]));
    }
  }
}

static void abi(void) {
  MPI_Info info;
  char v[MPI_MAX_INFO_VAL + 1];
  MPI_OK(MPI_Abi_get_info(&info));
  info_value(info, "mpi_aint_size", v);
  CHECK(atoi(v) == (int)sizeof(MPI_Aint), "mpi_aint_size %s", v);
  info_value(info, "mpi_count_size", v);
  CHECK(atoi(v) == (int)sizeof(MPI_Count), "mpi_count_size %s", v);
  info_value(info, "mpi_offset_size", v);
  CHECK(atoi(v) == (int)sizeof(MPI_Offset), "mpi_offset_size %s", v);
  MPI_OK(MPI_Info_free(&info));

  MPI_OK(MPI_Abi_get_fortran_info(&info));
  int size;
  info_value(info, "mpi_integer_size", v);
  MPI_OK(MPI_Type_size(MPI_INTEGER, &size));
  CHECK(atoi(v) == size, "mpi_integer_size %s, MPI_Type_size %d", v, size);
  info_value(info, "mpi_integer8_supported", v);
  CHECK(strcmp(v, "true") == 0, "mpi_integer8_supported %s", v);
  MPI_OK(MPI_Abi_set_fortran_info(info)); /* our own sizes are accepted */
  MPI_OK(MPI_Info_free(&info));
  MPI_OK(MPI_Info_create(&info));
  MPI_OK(MPI_Info_set(info, "mpi_integer_size", "8"));
  int rc = MPI_Abi_set_fortran_info(info);
  CHECK(class_of(rc) == MPI_ERR_UNSUPPORTED_OPERATION, "8-byte INTEGER: class %d", class_of(rc));
  MPI_OK(MPI_Info_free(&info));

  int t = 7, f = 7, set = 1;
  MPI_OK(MPI_Abi_get_fortran_booleans(4, &t, &f, &set));
  CHECK(!set, "booleans set before anyone set them");
  int one = 1, zero = 0;
  MPI_OK(MPI_Abi_set_fortran_booleans(4, &one, &zero));
  MPI_OK(MPI_Abi_get_fortran_booleans(4, &t, &f, &set));
  CHECK(set && t == 1 && f == 0, "booleans: set %d true %d false %d", set, t, f);
  rc = MPI_Abi_get_fortran_booleans(3, &t, &f, &set);
  CHECK(class_of(rc) == MPI_ERR_ARG, "logical size 3: class %d", class_of(rc));

  MPI_OK(MPI_Get_hw_resource_info(&info));
  info_value(info, "mpi_hw_resource_type", v);
  MPI_OK(MPI_Info_free(&info));
}

static void f90(void) {
  MPI_Datatype t;
  int size;
  MPI_OK(MPI_Type_create_f90_integer(9, &t));
  MPI_OK(MPI_Type_size(t, &size));
  CHECK(size == 4, "integer r=9: %d bytes", size);
  MPI_OK(MPI_Type_create_f90_integer(10, &t));
  MPI_OK(MPI_Type_size(t, &size));
  CHECK(size == 8, "integer r=10: %d bytes", size);
  MPI_OK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t));
  MPI_OK(MPI_Type_size(t, &size));
  CHECK(size == 4, "real p=6: %d bytes", size);
  MPI_OK(MPI_Type_create_f90_real(MPI_UNDEFINED, 300, &t));
  MPI_OK(MPI_Type_size(t, &size));
  CHECK(size == 8, "real r=300: %d bytes", size);
  MPI_OK(MPI_Type_create_f90_complex(15, 0, &t));
  MPI_OK(MPI_Type_size(t, &size));
  CHECK(size == 16, "complex p=15: %d bytes", size);
  /* usable for communication as it is */
  double d = t_rank + 0.5, sum = 0;
  MPI_OK(MPI_Type_create_f90_real(15, 0, &t));
  MPI_OK(MPI_Allreduce(&d, &sum, 1, t, MPI_SUM, MPI_COMM_WORLD));
  CHECK(sum == t_size * (t_size - 1) / 2.0 + 0.5 * t_size, "allreduce over REAL*8: %g", sum);
  int rc = MPI_Type_create_f90_integer(50, &t);
  CHECK(class_of(rc) == MPI_ERR_ARG, "integer r=50: class %d", class_of(rc));

  /* the envelope tells the request: r for integers, p and r for reals and complexes */
  MPI_Datatype i9, i8, again;
  int ni, na, nd, combiner, params[2] = {-1, -1};
  MPI_Aint no_addr[1];
  MPI_Datatype no_type[1];
  MPI_OK(MPI_Type_create_f90_integer(9, &i9));
  MPI_OK(MPI_Type_get_envelope(i9, &ni, &na, &nd, &combiner));
  CHECK(combiner == MPI_COMBINER_F90_INTEGER && ni == 1 && na == 0 && nd == 0,
        "integer r=9: combiner %d, %d/%d/%d arguments", combiner, ni, na, nd);
  MPI_OK(MPI_Type_get_contents(i9, 1, 0, 0, params, no_addr, no_type));
  CHECK(params[0] == 9, "integer r=9: contents say r=%d", params[0]);
  MPI_OK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t));
  MPI_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner));
  CHECK(combiner == MPI_COMBINER_F90_REAL && ni == 2, "real p=6: combiner %d, %d integers",
        combiner, ni);
  MPI_OK(MPI_Type_get_contents(t, 2, 0, 0, params, no_addr, no_type));
  CHECK(params[0] == 6 && params[1] == MPI_UNDEFINED, "real p=6: contents %d %d", params[0],
        params[1]);
  MPI_OK(MPI_Type_create_f90_complex(15, 0, &t));
  MPI_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner));
  CHECK(combiner == MPI_COMBINER_F90_COMPLEX, "complex p=15: combiner %d", combiner);
  /* one handle per request: the same again, another for another r of the same kind */
  MPI_OK(MPI_Type_create_f90_integer(8, &i8));
  CHECK(i8 != i9, "integer r=8 and r=9 share a handle");
  for (int i = 0; i < 1000; i++) MPI_OK(MPI_Type_create_f90_integer(9, &again));
  CHECK(again == i9, "integer r=9 asked again: another handle");
  /* a duplicate's contents give the predefined handle back, not a copy to free */
  MPI_Datatype dup, inner;
  MPI_OK(MPI_Type_dup(i9, &dup));
  MPI_OK(MPI_Type_get_contents(dup, 0, 0, 1, params, no_addr, &inner));
  CHECK(inner == i9, "contents of a duplicate of integer r=9: another handle");
  MPI_OK(MPI_Type_free(&dup));
  /* predefined: never freed */
  MPI_Datatype freed = i9;
  rc = MPI_Type_free(&freed);
  CHECK(class_of(rc) == MPI_ERR_TYPE && freed == i9, "MPI_Type_free on integer r=9: class %d",
        class_of(rc));
  /* its data matches the basic type it is laid out as */
  int32_t out[3] = {t_rank, 7, -1}, in[3] = {0, 0, 0};
  MPI_OK(MPI_Sendrecv(out, 3, i9, t_rank, 0, in, 3, MPI_INTEGER4, t_rank, 0, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE));
  CHECK(in[0] == t_rank && in[1] == 7 && in[2] == -1, "integer r=9 to MPI_INTEGER4: %d %d %d",
        in[0], in[1], in[2]);
}

static void dynamic(void) {
  MPI_Comm parent = MPI_COMM_WORLD, dup, inter = MPI_COMM_WORLD;
  MPI_OK(MPI_Comm_get_parent(&parent));
  CHECK(parent == MPI_COMM_NULL, "a parent in a job started by mpirun");
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  MPI_OK(MPI_Comm_disconnect(&dup));
  CHECK(dup == MPI_COMM_NULL, "Comm_disconnect left the handle");
  int errs[2];
  int rc = MPI_Comm_spawn("./no-such-program-here", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
  CHECK(class_of(rc) == MPI_ERR_SPAWN && inter == MPI_COMM_NULL, "spawn: class %d", class_of(rc));
  char msg[MPI_MAX_ERROR_STRING];
  int len;
  MPI_OK(MPI_Error_string(rc, msg, &len));
  CHECK_CROSSMPI(strstr(msg, "MPI_Comm_spawn") != NULL, "spawn message: %s", msg);
  char port[MPI_MAX_PORT_NAME];
  MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
  MPI_OK(MPI_Close_port(port));
  rc = MPI_Lookup_name("nothing", MPI_INFO_NULL, port);
  CHECK(class_of(rc) == MPI_ERR_NAME, "lookup: class %d", class_of(rc));
  rc = MPI_Comm_spawn("true", MPI_ARGV_NULL, 2, MPI_INFO_NULL, t_size, MPI_COMM_WORLD, &inter, errs);
  CHECK(class_of(rc) == MPI_ERR_ROOT, "spawn with a bad root: class %d", class_of(rc));
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "mpi4_env");
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  errors();
  abi();
  f90();
  dynamic();
  t_finish();
  return 0;
}
