// ranks: 1 2
/* Attribute caching: keyvals with copy/delete callbacks (run on dup, set-over,
 * delete and free), MPI_COMM_DUP_FN / MPI_COMM_NULL_COPY_FN, freed keyvals keep their
 * attributes, the deprecated Keyval_create/Attr_* calls, predefined attributes, and
 * datatype attributes. A delete callback sees its attribute; one that fails leaves it
 * set and fails the call. A copy callback that fails fails the dup, whose output is
 * then the null handle. */
#include "common.h"

static int copies, deletes, last_deleted;
static int extra_seen;

static int copy_fn(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag) {
  (void)comm; (void)keyval;
  if (extra == &extra_seen) extra_seen++;
  copies++;
  *(void **)out = (void *)((intptr_t)in + 1); /* the copy holds value + 1 */
  *flag = 1;
  return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int keyval, void *val, void *extra) {
  (void)comm; (void)keyval; (void)extra;
  deletes++;
  last_deleted = (int)(intptr_t)val;
  return MPI_SUCCESS;
}

/* A delete callback that looks at its own attribute and fails while `refuse` is set,
 * with an error code of the application's own (`app_code`), which the call returns. */
static int refuse, seen_flag, app_code;
static void *seen_value;
static int checking_delete_fn(MPI_Comm comm, int keyval, void *val, void *extra) {
  (void)val; (void)extra;
  MPI_OK(MPI_Comm_get_attr(comm, keyval, &seen_value, &seen_flag));
  return refuse ? app_code : MPI_SUCCESS;
}

static int type_refuse;
static int type_checking_delete_fn(MPI_Datatype t, int keyval, void *val, void *extra) {
  (void)val; (void)extra;
  MPI_OK(MPI_Type_get_attr(t, keyval, &seen_value, &seen_flag));
  return type_refuse ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* Copy callbacks for a failing duplication: one that copies, one that refuses. */
static int copied_deleted;
static int good_copy_fn(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag) {
  (void)comm; (void)keyval; (void)extra;
  *(void **)out = (void *)((intptr_t)in * 10);
  *flag = 1;
  return MPI_SUCCESS;
}
static int counting_delete_fn(MPI_Comm comm, int keyval, void *val, void *extra) {
  (void)comm; (void)keyval; (void)extra;
  if ((intptr_t)val == 310) copied_deleted++;
  return MPI_SUCCESS;
}
static int refusing_copy_fn(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag) {
  (void)comm; (void)keyval; (void)extra; (void)in; (void)out;
  *flag = 0;
  return MPI_ERR_OTHER;
}
static int refusing_type_copy_fn(MPI_Datatype t, int keyval, void *extra, void *in, void *out, int *flag) {
  (void)t; (void)keyval; (void)extra; (void)in; (void)out;
  *flag = 0;
  return MPI_ERR_OTHER;
}

static int type_deletes;
static int type_delete_fn(MPI_Datatype t, int keyval, void *val, void *extra) {
  (void)t; (void)keyval; (void)val; (void)extra;
  type_deletes++;
  return MPI_SUCCESS;
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "attr");
  int k1, k2, k3, flag;
  void *v;
  MPI_OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &k1, &extra_seen));
  MPI_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k2, NULL));
  MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &k3, NULL));

  MPI_Comm c, d;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  MPI_OK(MPI_Comm_get_attr(c, k1, &v, &flag));
  CHECK(!flag, "nothing set yet");
  MPI_OK(MPI_Comm_set_attr(c, k1, (void *)10));
  MPI_OK(MPI_Comm_set_attr(c, k2, (void *)20));
  MPI_OK(MPI_Comm_set_attr(c, k3, (void *)30));
  /* setting over an existing value deletes the old one */
  MPI_OK(MPI_Comm_set_attr(c, k3, (void *)31));
  CHECK(deletes == 1 && last_deleted == 30, "set over: deletes %d last %d", deletes, last_deleted);

  MPI_OK(MPI_Comm_dup(c, &d));
  CHECK(copies == 1 && extra_seen == 1, "copy callback ran once with extra state: %d %d", copies, extra_seen);
  MPI_OK(MPI_Comm_get_attr(d, k1, &v, &flag));
  CHECK(flag && (intptr_t)v == 11, "copied by callback: %d %ld", flag, (long)(intptr_t)v);
  MPI_OK(MPI_Comm_get_attr(d, k2, &v, &flag));
  CHECK(flag && (intptr_t)v == 20, "MPI_COMM_DUP_FN copies the value");
  MPI_OK(MPI_Comm_get_attr(d, k3, &v, &flag));
  CHECK(!flag, "MPI_COMM_NULL_COPY_FN does not copy");

  /* explicit delete runs the callback; deleting again is an error class KEYVAL */
  MPI_OK(MPI_Comm_delete_attr(d, k1));
  CHECK(deletes == 2 && last_deleted == 11, "delete: %d %d", deletes, last_deleted);
  MPI_OK(MPI_Comm_get_attr(d, k1, &v, &flag));
  CHECK(!flag, "deleted");

  /* freeing the keyval keeps attributes usable; free runs delete callbacks */
  MPI_OK(MPI_Comm_free_keyval(&k3));
  CHECK(k3 == MPI_KEYVAL_INVALID, "free_keyval resets the handle");
  MPI_OK(MPI_Comm_free(&d));
  CHECK(deletes == 2, "d had no k1/k3 attribute left: %d", deletes);
  MPI_OK(MPI_Comm_free(&c));
  CHECK(deletes == 4, "free of c deleted k1 and k3: %d", deletes);
  /* crossmpi deletes the most recently set first: k3 (set last, 31), then k1 (10) */
  CHECK_CROSSMPI(last_deleted == 10, "deletion order: last deleted %d", last_deleted);

  /* deprecated interface */
  int k4;
  MPI_OK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &k4, NULL));
  MPI_OK(MPI_Attr_put(MPI_COMM_WORLD, k4, (void *)77));
  MPI_OK(MPI_Attr_get(MPI_COMM_WORLD, k4, &v, &flag));
  CHECK(flag && (intptr_t)v == 77, "Attr_get");
  MPI_OK(MPI_Attr_delete(MPI_COMM_WORLD, k4));
  MPI_OK(MPI_Keyval_free(&k4));

  /* predefined attributes */
  int *p;
  MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag));
  CHECK(flag && *p >= 32767, "MPI_TAG_UB %d", flag ? *p : -1);
  MPI_OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag));
  CHECK(flag && *p >= 32767, "MPI_TAG_UB through Attr_get");
  MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &p, &flag));
  CHECK(!flag || *p == 0 || *p == 1, "MPI_WTIME_IS_GLOBAL");

  /* datatype attributes */
  int tk;
  MPI_Datatype t;
  MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
  MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_delete_fn, &tk, NULL));
  MPI_OK(MPI_Type_set_attr(t, tk, (void *)5));
  MPI_OK(MPI_Type_get_attr(t, tk, &v, &flag));
  CHECK(flag && (intptr_t)v == 5, "type attribute");
  MPI_OK(MPI_Type_delete_attr(t, tk));
  CHECK(type_deletes == 1, "type delete callback %d", type_deletes);
  MPI_OK(MPI_Type_get_attr(t, tk, &v, &flag));
  CHECK(!flag, "type attribute deleted");
  MPI_OK(MPI_Type_free_keyval(&tk));
  MPI_OK(MPI_Type_free(&t));

  /* A copy callback that fails fails the duplication: the new handle is NULL, and the
   * attributes already copied to the half-made duplicate are deleted (crossmpi runs
   * their delete callbacks; the standard leaves that open). */
  int kgood, kbad, rc;
  MPI_Comm f = MPI_COMM_WORLD, g = MPI_COMM_WORLD;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &f));
  MPI_OK(MPI_Comm_set_errhandler(f, MPI_ERRORS_RETURN));
  MPI_OK(MPI_Comm_create_keyval(good_copy_fn, counting_delete_fn, &kgood, NULL));
  MPI_OK(MPI_Comm_create_keyval(refusing_copy_fn, MPI_COMM_NULL_DELETE_FN, &kbad, NULL));
  MPI_OK(MPI_Comm_set_attr(f, kgood, (void *)31));
  MPI_OK(MPI_Comm_set_attr(f, kbad, (void *)32));
  rc = MPI_Comm_dup(f, &g);
  CHECK(rc != MPI_SUCCESS && g == MPI_COMM_NULL, "dup with a refusing copy callback: rc %d, newcomm %s", rc,
        g == MPI_COMM_NULL ? "MPI_COMM_NULL" : "not MPI_COMM_NULL");
  CHECK_CROSSMPI(copied_deleted == 1, "the copied attribute's delete callback ran %d times", copied_deleted);
  MPI_OK(MPI_Comm_delete_attr(f, kbad));
  MPI_OK(MPI_Comm_dup(f, &g)); /* without the refusing attribute it works */
  MPI_OK(MPI_Comm_free(&g));
  MPI_OK(MPI_Comm_free(&f));
  MPI_OK(MPI_Comm_free_keyval(&kgood));
  MPI_OK(MPI_Comm_free_keyval(&kbad));
  MPI_Datatype u = MPI_INT;
  MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
  MPI_OK(MPI_Type_create_keyval(refusing_type_copy_fn, MPI_TYPE_NULL_DELETE_FN, &tk, NULL));
  MPI_OK(MPI_Type_set_attr(t, tk, (void *)41));
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  rc = MPI_Type_dup(t, &u);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
  CHECK(rc != MPI_SUCCESS, "Type_dup with a refusing copy callback succeeded");
  /* Open MPI 4.1 writes 0 there, not MPI_DATATYPE_NULL */
  CHECK_CROSSMPI(u == MPI_DATATYPE_NULL, "Type_dup with a refusing copy callback left newtype set");
  MPI_OK(MPI_Type_free(&t));
  MPI_OK(MPI_Type_free_keyval(&tk));

  /* A delete callback sees its attribute still set; when it fails, the call fails and
   * the attribute stays (replacement keeps the old value), as in Open MPI and MPICH. */
  int kc, app_class;
  MPI_Comm e;
  MPI_OK(MPI_Add_error_class(&app_class));
  MPI_OK(MPI_Add_error_code(app_class, &app_code));
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &e));
  MPI_OK(MPI_Comm_set_errhandler(e, MPI_ERRORS_RETURN));
  MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, checking_delete_fn, &kc, NULL));
  MPI_OK(MPI_Comm_set_attr(e, kc, (void *)11));
  refuse = 1;
  rc = MPI_Comm_delete_attr(e, kc);
  CHECK(rc != MPI_SUCCESS && seen_flag && (intptr_t)seen_value == 11, "refused delete: rc %d, callback saw flag %d value %ld",
        rc, seen_flag, (long)(intptr_t)seen_value);
  /* the callback's own code, as MPICH returns it (Open MPI 4.1 returns MPI_ERR_OTHER) */
  CHECK_CROSSMPI(rc == app_code, "refused delete returned %d, not the callback's code %d", rc, app_code);
  MPI_OK(MPI_Comm_get_attr(e, kc, &v, &flag));
  CHECK(flag && (intptr_t)v == 11, "attribute gone after a refused delete: flag %d", flag);
  rc = MPI_Comm_set_attr(e, kc, (void *)12);
  MPI_OK(MPI_Comm_get_attr(e, kc, &v, &flag));
  CHECK(rc != MPI_SUCCESS && flag && (intptr_t)v == 11, "refused replacement: rc %d, value now %ld", rc,
        (long)(intptr_t)v);
  CHECK_CROSSMPI(rc == app_code, "refused replacement returned %d, not the callback's code %d", rc, app_code);
  refuse = 0;
  seen_flag = 0;
  MPI_OK(MPI_Comm_set_attr(e, kc, (void *)13));
  CHECK(seen_flag && (intptr_t)seen_value == 11, "replacement's callback saw flag %d value %ld", seen_flag,
        (long)(intptr_t)seen_value);
  MPI_OK(MPI_Comm_delete_attr(e, kc));
  MPI_OK(MPI_Comm_get_attr(e, kc, &v, &flag));
  CHECK(!flag, "attribute left after its delete succeeded");
  MPI_OK(MPI_Comm_set_attr(e, kc, (void *)14));
  seen_flag = 0;
  MPI_OK(MPI_Comm_free(&e));
  CHECK(seen_flag && (intptr_t)seen_value == 14, "MPI_Comm_free's delete callback saw flag %d value %ld", seen_flag,
        (long)(intptr_t)seen_value);
  MPI_OK(MPI_Comm_free_keyval(&kc));

  MPI_OK(MPI_Type_contiguous(3, MPI_INT, &t));
  MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_checking_delete_fn, &tk, NULL));
  MPI_OK(MPI_Type_set_attr(t, tk, (void *)21));
  type_refuse = 1;
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  rc = MPI_Type_delete_attr(t, tk);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
  MPI_OK(MPI_Type_get_attr(t, tk, &v, &flag));
  CHECK(rc != MPI_SUCCESS && flag && (intptr_t)v == 21 && (intptr_t)seen_value == 21,
        "refused type attribute delete: rc %d flag %d", rc, flag);
  type_refuse = 0;
  seen_flag = 0;
  MPI_OK(MPI_Type_free(&t));
  CHECK(seen_flag && (intptr_t)seen_value == 21, "MPI_Type_free's delete callback saw flag %d", seen_flag);
  MPI_OK(MPI_Type_free_keyval(&tk));

  MPI_OK(MPI_Comm_free_keyval(&k1));
  MPI_OK(MPI_Comm_free_keyval(&k2));
  t_finish();
  return 0;
}
