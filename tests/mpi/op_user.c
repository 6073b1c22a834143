// ranks: 1
/* Reduction operators through MPI_Reduce_local: predefined operators on several types
 * (including MINLOC on a pair type and logical ops), user operators commutative and not,
 * a user operator on a non-contiguous derived type (it must see the datatype's memory
 * layout and handle, and the holes of inoutbuf stay untouched), MPI_Op_commutative,
 * MPI_Op_free, and the errors for undefined combinations and freeing MPI_SUM. */
#include "common.h"

static MPI_Datatype vtype; /* ints at byte 0 and 8 of a 12-byte element */
static int seen_len, seen_type_ok;

/* 2x2 integer matrices, row-major: inout = in x inout (not commutative). */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  int *a = in, *b = inout;
  for (int k = 0; k < *len; k++, a += 4, b += 4) {
    int r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    memcpy(b, r, sizeof r);
  }
}

/* Commutative: the larger absolute value. */
static void absmax(void *in, void *inout, int *len, MPI_Datatype *type) {
  CHECK(*type == MPI_INT, "absmax got a datatype that is not MPI_INT");
  int *a = in, *b = inout;
  for (int k = 0; k < *len; k++) {
    int x = abs(a[k]), y = abs(b[k]);
    b[k] = x > y ? x : y;
  }
}

/* On vtype: first int summed, second multiplied; elements are 12 bytes apart. */
static void on_vector(void *in, void *inout, int *len, MPI_Datatype *type) {
  seen_len = *len;
  seen_type_ok = (*type == vtype);
  char *a = in, *b = inout;
  for (int k = 0; k < *len; k++) {
    int *x = (int *)(a + 12 * k), *y = (int *)(b + 12 * k);
    y[0] += x[0];
    y[2] *= x[2];
  }
}

#if MPI_VERSION >= 4
static void sum_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *type) {
  CHECK(*type == MPI_DOUBLE, "sum_c got a datatype that is not MPI_DOUBLE");
  double *a = in, *b = inout;
  for (MPI_Count k = 0; k < *len; k++) b[k] += a[k];
}
#endif

int main(int argc, char **argv) {
  t_init(&argc, &argv, "op_user");

  /* predefined operators */
  {
    int a[4] = {1, -2, 3, 7}, b[4] = {10, 20, -30, 7};
    MPI_OK(MPI_Reduce_local(a, b, 4, MPI_INT, MPI_SUM));
    CHECK(b[0] == 11 && b[1] == 18 && b[2] == -27 && b[3] == 14, "SUM int");
    MPI_OK(MPI_Reduce_local(a, b, 4, MPI_INT, MPI_MIN));
    CHECK(b[0] == 1 && b[1] == -2 && b[2] == -27 && b[3] == 7, "MIN int");
    double d[3] = {1.5, -2.0, 4.0}, e[3] = {0.5, -1.0, 8.0};
    MPI_OK(MPI_Reduce_local(d, e, 3, MPI_DOUBLE, MPI_MAX));
    CHECK(e[0] == 1.5 && e[1] == -1.0 && e[2] == 8.0, "MAX double");
    MPI_OK(MPI_Reduce_local(d, e, 3, MPI_DOUBLE, MPI_PROD));
    CHECK(e[0] == 2.25 && e[1] == 2.0 && e[2] == 32.0, "PROD double");
    unsigned u[2] = {0xf0f0u, 0x1u}, v[2] = {0xff00u, 0x3u};
    MPI_OK(MPI_Reduce_local(u, v, 2, MPI_UNSIGNED, MPI_BXOR));
    CHECK(v[0] == 0x0ff0u && v[1] == 0x2u, "BXOR unsigned");
    int l[3] = {0, 5, 0}, m[3] = {0, 0, -1};
    MPI_OK(MPI_Reduce_local(l, m, 3, MPI_INT, MPI_LOR));
    CHECK(m[0] == 0 && m[1] != 0 && m[2] != 0, "LOR int");
    struct { double v; int i; } p[2] = {{1.0, 3}, {5.0, 1}}, q[2] = {{1.0, 2}, {4.0, 0}};
    MPI_OK(MPI_Reduce_local(p, q, 2, MPI_DOUBLE_INT, MPI_MINLOC));
    CHECK(q[0].v == 1.0 && q[0].i == 2 && q[1].v == 4.0 && q[1].i == 0, "MINLOC double_int");
    MPI_OK(MPI_Reduce_local(p, q, 2, MPI_DOUBLE_INT, MPI_MAXLOC));
    CHECK(q[0].v == 1.0 && q[0].i == 2 && q[1].v == 5.0 && q[1].i == 1, "MAXLOC double_int");
    int commute = -1;
    MPI_OK(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK(commute == 1, "MPI_SUM is commutative");
  }

  /* a non-commutative user operator: the order of the operands matters */
  {
    MPI_Op op;
    MPI_OK(MPI_Op_create(matmul, 0, &op));
    int commute = -1;
    MPI_OK(MPI_Op_commutative(op, &commute));
    CHECK(commute == 0, "matmul registered as not commutative, reported %d", commute);
    MPI_Datatype mat;
    MPI_OK(MPI_Type_contiguous(4, MPI_INT, &mat));
    MPI_OK(MPI_Type_commit(&mat));
    int a[8] = {1, 2, 3, 4, 0, 1, 1, 0}, b[8] = {5, 6, 7, 8, 2, 0, 0, 3};
    MPI_OK(MPI_Reduce_local(a, b, 2, mat, op));
    int want[8] = {19, 22, 43, 50, 0, 3, 2, 0};
    for (int k = 0; k < 8; k++) CHECK(b[k] == want[k], "matmul: int %d is %d, expected %d", k, b[k], want[k]);
    MPI_OK(MPI_Type_free(&mat));
    MPI_OK(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL, "MPI_Op_free must set MPI_OP_NULL");
  }

  /* a commutative user operator that checks its datatype */
  {
    MPI_Op op;
    MPI_OK(MPI_Op_create(absmax, 1, &op));
    int commute = -1;
    MPI_OK(MPI_Op_commutative(op, &commute));
    CHECK(commute == 1, "absmax registered as commutative, reported %d", commute);
    int a[3] = {-9, 2, 0}, b[3] = {4, -5, 0};
    MPI_OK(MPI_Reduce_local(a, b, 3, MPI_INT, op));
    CHECK(b[0] == 9 && b[1] == 5 && b[2] == 0, "absmax: %d %d %d", b[0], b[1], b[2]);
    MPI_OK(MPI_Op_free(&op));
  }

  /* a user operator on a non-contiguous type */
  {
    MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vtype));
    MPI_Datatype t;
    MPI_OK(MPI_Type_create_resized(vtype, 0, 12, &t));
    MPI_OK(MPI_Type_free(&vtype));
    vtype = t;
    MPI_OK(MPI_Type_commit(&vtype));
    MPI_Op op;
    MPI_OK(MPI_Op_create(on_vector, 0, &op));
    int a[9] = {1, -1, 2, 3, -1, 4, 5, -1, 6};
    int b[9] = {10, 77, 10, 20, 88, 20, 30, 99, 30};
    MPI_OK(MPI_Reduce_local(a, b, 3, vtype, op));
    int want[9] = {11, 77, 20, 23, 88, 80, 35, 99, 180};
    for (int k = 0; k < 9; k++) CHECK(b[k] == want[k], "vector op: int %d is %d, expected %d", k, b[k], want[k]);
    CHECK(seen_type_ok, "the user function did not get the derived datatype's handle");
    CHECK(seen_len == 3, "the user function got len %d, expected 3", seen_len);
    MPI_OK(MPI_Op_free(&op));
    MPI_OK(MPI_Type_free(&vtype));
  }

#if MPI_VERSION >= 4
  {
    MPI_Op op;
    MPI_OK(MPI_Op_create_c(sum_c, 1, &op));
    double a[2] = {1.0, 2.0}, b[2] = {0.25, 0.5};
    MPI_OK(MPI_Reduce_local_c(a, b, 2, MPI_DOUBLE, op));
    CHECK(b[0] == 1.25 && b[1] == 2.5, "sum_c");
    MPI_OK(MPI_Op_free(&op));
  }
#endif

  /* errors */
  {
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int cls, a[2] = {1, 2}, b[2] = {3, 4};
    int rc = MPI_Reduce_local(a, b, 1, MPI_2INT, MPI_SUM);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_OP, "SUM on MPI_2INT: rc %d class %d", rc, cls);
    CHECK(b[0] == 3 && b[1] == 4, "a refused reduction changed inoutbuf");
    MPI_Op sum = MPI_SUM;
    rc = MPI_Op_free(&sum);
    CHECK(rc != MPI_SUCCESS, "freeing MPI_SUM succeeded");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  }

  t_finish();
  return 0;
}
