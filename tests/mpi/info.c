// ranks: 1
/* MPI_Info: create/set/get/get_valuelen/get_nkeys/get_nthkey (insertion order),
 * overwrite, delete (and deleting a missing key: MPI_ERR_INFO_NOKEY), dup (a deep
 * copy), free; MPI_INFO_ENV exists; Alloc_mem/Free_mem (small, large, empty); handle
 * conversions. */
#include "common.h"

#if MPI_VERSION >= 5
/* The MPI-5 ABI header does not declare the classic Fortran conversions, which
 * crossmpi exports for Fortran bindings and older codes. */
typedef int MPI_Fint;
MPI_Fint MPI_Comm_c2f(MPI_Comm comm);
MPI_Comm MPI_Comm_f2c(MPI_Fint comm);
MPI_Fint MPI_Group_c2f(MPI_Group group);
MPI_Group MPI_Group_f2c(MPI_Fint group);
MPI_Fint MPI_Type_c2f(MPI_Datatype datatype);
MPI_Datatype MPI_Type_f2c(MPI_Fint datatype);
#endif

int main(int argc, char **argv) {
  t_init(&argc, &argv, "info");
  MPI_Info info, copy;
  int nkeys, flag, len;
  char key[MPI_MAX_INFO_KEY], val[64];
  MPI_OK(MPI_Info_create(&info));
  MPI_OK(MPI_Info_get_nkeys(info, &nkeys));
  CHECK(nkeys == 0, "new info has %d keys", nkeys);
  MPI_OK(MPI_Info_set(info, "zeta", "1"));
  MPI_OK(MPI_Info_set(info, "alpha", "two"));
  MPI_OK(MPI_Info_set(info, "mid", "3"));
  MPI_OK(MPI_Info_set(info, "zeta", "one")); /* overwrite keeps the position */
  MPI_OK(MPI_Info_get_nkeys(info, &nkeys));
  CHECK(nkeys == 3, "nkeys %d", nkeys);
  const char *order[3] = {"zeta", "alpha", "mid"};
  for (int i = 0; i < 3; i++) {
    MPI_OK(MPI_Info_get_nthkey(info, i, key));
    /* the standard leaves the order to the implementation; crossmpi keeps insertion order */
    CHECK_CROSSMPI(strcmp(key, order[i]) == 0, "key %d is %s", i, key);
  }
  MPI_OK(MPI_Info_get_valuelen(info, "zeta", &len, &flag));
  CHECK(flag && len == 3, "valuelen %d %d", flag, len);
  MPI_OK(MPI_Info_get(info, "zeta", sizeof val - 1, val, &flag));
  CHECK(flag && strcmp(val, "one") == 0, "get zeta: %s", val);
  MPI_OK(MPI_Info_get(info, "alpha", 1, val, &flag));
  CHECK(flag && strcmp(val, "t") == 0, "truncated get: %s", val);
  MPI_OK(MPI_Info_get(info, "nothere", sizeof val - 1, val, &flag));
  CHECK(!flag, "missing key");

  MPI_OK(MPI_Info_dup(info, &copy));
  MPI_OK(MPI_Info_delete(info, "alpha"));
  MPI_OK(MPI_Info_get_nkeys(info, &nkeys));
  CHECK(nkeys == 2, "after delete %d", nkeys);
  MPI_OK(MPI_Info_get_nkeys(copy, &nkeys));
  CHECK(nkeys == 3, "dup is deep: %d", nkeys);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int rc = MPI_Info_delete(info, "alpha"), cls;
  CHECK(rc != MPI_SUCCESS, "deleting a missing key fails");
  MPI_OK(MPI_Error_class(rc, &cls));
  CHECK(cls == MPI_ERR_INFO_NOKEY, "class %d", cls);
  MPI_OK(MPI_Info_free(&info));
  MPI_OK(MPI_Info_free(&copy));
  CHECK(info == MPI_INFO_NULL && copy == MPI_INFO_NULL, "free resets");

  MPI_OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &nkeys));
  CHECK(nkeys >= 0, "MPI_INFO_ENV readable");

  double *mem;
  MPI_OK(MPI_Alloc_mem(1000 * sizeof(double), MPI_INFO_NULL, &mem));
  for (int i = 0; i < 1000; i++) mem[i] = i;
  CHECK(mem[999] == 999.0, "memory usable");
  MPI_OK(MPI_Free_mem(mem));
  /* a large block (crossmpi aligns it to huge pages for fast cross-memory reads), not a
   * multiple of them, and an empty one */
  size_t big = (5u << 20) + 3;
  unsigned char *large, *none;
  MPI_OK(MPI_Alloc_mem((MPI_Aint)big, MPI_INFO_NULL, &large));
  CHECK_CROSSMPI((uintptr_t)large % (2u << 20) == 0, "large Alloc_mem block at %p", (void *)large);
  for (size_t i = 0; i < big; i++) large[i] = (unsigned char)i;
  CHECK(large[big - 1] == (unsigned char)(big - 1) && large[1 << 21] == 0, "large block usable");
  MPI_OK(MPI_Free_mem(large));
  MPI_OK(MPI_Alloc_mem(0, MPI_INFO_NULL, &none));
  MPI_OK(MPI_Free_mem(none));

  MPI_Fint fc = MPI_Comm_c2f(MPI_COMM_WORLD);
  CHECK(MPI_Comm_f2c(fc) == MPI_COMM_WORLD, "comm c2f/f2c round trip");
  MPI_Group g;
  MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &g));
  CHECK(MPI_Group_f2c(MPI_Group_c2f(g)) == g, "group round trip");
  MPI_OK(MPI_Group_free(&g));
  CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE, "type round trip");
#if MPI_VERSION >= 5
  CHECK(MPI_Comm_fromint(MPI_Comm_toint(MPI_COMM_SELF)) == MPI_COMM_SELF, "comm toint/fromint");
  CHECK(MPI_Info_fromint(MPI_Info_toint(MPI_INFO_ENV)) == MPI_INFO_ENV, "info toint/fromint");
  CHECK(MPI_Comm_toint(MPI_COMM_WORLD) == MPI_Comm_c2f(MPI_COMM_WORLD), "toint equals c2f");
#endif
  t_finish();
  return 0;
}
