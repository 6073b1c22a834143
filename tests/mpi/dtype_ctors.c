// ranks: 1
/* Every datatype constructor: size, lower bound, extent, true bounds, envelope and
 * contents (with new handles for derived components, freed here), dup, resized,
 * subarray, darray, names, match_size, value_index, Aint arithmetic, and the errors for
 * freeing a predefined type and communicating with an uncommitted one. */
#include "common.h"
#include <stddef.h>

typedef struct {
  MPI_Aint size, lb, extent, true_lb, true_extent;
} bounds_t;

static void check_bounds(MPI_Datatype t, const char *what, bounds_t want) {
  int size;
  MPI_Aint lb, extent, tlb, text;
  MPI_Count csize, clb, cext, ctlb, ctext;
  MPI_OK(MPI_Type_size(t, &size));
  MPI_OK(MPI_Type_get_extent(t, &lb, &extent));
  MPI_OK(MPI_Type_get_true_extent(t, &tlb, &text));
  CHECK(size == want.size, "%s: size %d, expected %ld", what, size, (long)want.size);
  CHECK(lb == want.lb && extent == want.extent, "%s: lb %ld extent %ld, expected %ld %ld", what,
        (long)lb, (long)extent, (long)want.lb, (long)want.extent);
  CHECK(tlb == want.true_lb && text == want.true_extent,
        "%s: true lb %ld true extent %ld, expected %ld %ld", what, (long)tlb, (long)text,
        (long)want.true_lb, (long)want.true_extent);
  MPI_OK(MPI_Type_size_x(t, &csize));
  MPI_OK(MPI_Type_get_extent_x(t, &clb, &cext));
  MPI_OK(MPI_Type_get_true_extent_x(t, &ctlb, &ctext));
  CHECK(csize == size && clb == lb && cext == extent && ctlb == tlb && ctext == text,
        "%s: _x queries disagree", what);
}

/* Checks the envelope and contents; `types` are compared by handle (predefined) or by
 * size (derived: a new handle, which is freed). */
static void check_contents(MPI_Datatype t, const char *what, int combiner, int ni, const int *ints,
                           int na, const MPI_Aint *addrs, int nd, const MPI_Datatype *types) {
  int gi, ga, gd, gc;
  MPI_OK(MPI_Type_get_envelope(t, &gi, &ga, &gd, &gc));
  CHECK(gc == combiner, "%s: combiner %d, expected %d", what, gc, combiner);
  CHECK(gi == ni && ga == na && gd == nd, "%s: envelope %d/%d/%d, expected %d/%d/%d", what, gi,
        ga, gd, ni, na, nd);
  int gotints[32];
  MPI_Aint gotaddrs[32];
  MPI_Datatype gottypes[8];
  /* exact maxima: Open MPI 4.1 reads max_datatypes entries whatever the type holds */
  MPI_OK(MPI_Type_get_contents(t, gi, ga, gd, gotints, gotaddrs, gottypes));
  for (int i = 0; i < ni; i++)
    CHECK(gotints[i] == ints[i], "%s: integer %d is %d, expected %d", what, i, gotints[i], ints[i]);
  for (int i = 0; i < na; i++)
    CHECK(gotaddrs[i] == addrs[i], "%s: address %d is %ld, expected %ld", what, i,
          (long)gotaddrs[i], (long)addrs[i]);
  for (int i = 0; i < nd; i++) {
    int e_gi, e_ga, e_gd, e_gc;
    MPI_OK(MPI_Type_get_envelope(types[i], &e_gi, &e_ga, &e_gd, &e_gc));
    if (e_gc == MPI_COMBINER_NAMED) {
      CHECK(gottypes[i] == types[i], "%s: datatype %d is not the predefined handle", what, i);
    } else {
      int s1, s2;
      MPI_OK(MPI_Type_size(gottypes[i], &s1));
      MPI_OK(MPI_Type_size(types[i], &s2));
      CHECK(s1 == s2 && gottypes[i] != types[i], "%s: datatype %d: size %d (want %d), new handle",
            what, i, s1, s2);
      MPI_OK(MPI_Type_free(&gottypes[i]));
    }
  }
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "dtype_ctors");
  MPI_Datatype t, u;

  /* contiguous: 3 ints */
  MPI_OK(MPI_Type_contiguous(3, MPI_INT, &t));
  check_bounds(t, "contiguous", (bounds_t){12, 0, 12, 0, 12});
  check_contents(t, "contiguous", MPI_COMBINER_CONTIGUOUS, 1, (int[]){3}, 0, NULL, 1,
                 (MPI_Datatype[]){MPI_INT});

  /* vector: 3 blocks of 2 doubles, stride 4: extent (2*4+2)*8 = 80 */
  MPI_OK(MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &u));
  check_bounds(u, "vector", (bounds_t){48, 0, 80, 0, 80});
  check_contents(u, "vector", MPI_COMBINER_VECTOR, 3, (int[]){3, 2, 4}, 0, NULL, 1,
                 (MPI_Datatype[]){MPI_DOUBLE});
  MPI_OK(MPI_Type_free(&u));
  CHECK(u == MPI_DATATYPE_NULL, "MPI_Type_free must set the handle to MPI_DATATYPE_NULL");

  /* negative stride: blocks at 0, -3, -6 ints */
  MPI_OK(MPI_Type_vector(3, 1, -3, MPI_INT, &u));
  check_bounds(u, "vector stride -3", (bounds_t){12, -24, 28, -24, 28});
  MPI_OK(MPI_Type_free(&u));

  /* hvector of the contiguous type: 2 blocks of 1 at 100 bytes */
  MPI_OK(MPI_Type_create_hvector(2, 1, 100, t, &u));
  check_bounds(u, "hvector", (bounds_t){24, 0, 112, 0, 112});
  check_contents(u, "hvector", MPI_COMBINER_HVECTOR, 2, (int[]){2, 1}, 1, (MPI_Aint[]){100}, 1,
                 (MPI_Datatype[]){t});
  MPI_OK(MPI_Type_free(&u));

  /* indexed: blocks {2 at 5, 1 at 0} ints */
  MPI_OK(MPI_Type_indexed(2, (int[]){2, 1}, (int[]){5, 0}, MPI_INT, &u));
  check_bounds(u, "indexed", (bounds_t){12, 0, 28, 0, 28});
  check_contents(u, "indexed", MPI_COMBINER_INDEXED, 5, (int[]){2, 2, 1, 5, 0}, 0, NULL, 1,
                 (MPI_Datatype[]){MPI_INT});
  MPI_OK(MPI_Type_free(&u));

  /* hindexed: 1 short at 6, 3 shorts at 20 */
  MPI_OK(MPI_Type_create_hindexed(2, (int[]){1, 3}, (MPI_Aint[]){6, 20}, MPI_SHORT, &u));
  check_bounds(u, "hindexed", (bounds_t){8, 6, 20, 6, 20});
  check_contents(u, "hindexed", MPI_COMBINER_HINDEXED, 3, (int[]){2, 1, 3}, 2,
                 (MPI_Aint[]){6, 20}, 1, (MPI_Datatype[]){MPI_SHORT});
  MPI_OK(MPI_Type_free(&u));

  /* indexed_block: blocks of 2 floats at 1, 6 */
  MPI_OK(MPI_Type_create_indexed_block(2, 2, (int[]){1, 6}, MPI_FLOAT, &u));
  check_bounds(u, "indexed_block", (bounds_t){16, 4, 28, 4, 28});
  check_contents(u, "indexed_block", MPI_COMBINER_INDEXED_BLOCK, 4, (int[]){2, 2, 1, 6}, 0, NULL,
                 1, (MPI_Datatype[]){MPI_FLOAT});
  MPI_OK(MPI_Type_free(&u));

  /* hindexed_block: blocks of 1 char at 3, 10, 7 */
  MPI_OK(MPI_Type_create_hindexed_block(3, 1, (MPI_Aint[]){3, 10, 7}, MPI_CHAR, &u));
  check_bounds(u, "hindexed_block", (bounds_t){3, 3, 8, 3, 8});
  check_contents(u, "hindexed_block", MPI_COMBINER_HINDEXED_BLOCK, 2, (int[]){3, 1}, 3,
                 (MPI_Aint[]){3, 10, 7}, 1, (MPI_Datatype[]){MPI_CHAR});
  MPI_OK(MPI_Type_free(&u));

  /* struct {char c; double d[2]; int i;}: the extent is padded to the double alignment */
  struct s { char c; double d[2]; int i; };
  MPI_Aint disp[3] = {offsetof(struct s, c), offsetof(struct s, d), offsetof(struct s, i)};
  MPI_OK(MPI_Type_create_struct(3, (int[]){1, 2, 1}, disp,
                                (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE, MPI_INT}, &u));
  check_bounds(u, "struct", (bounds_t){21, 0, (MPI_Aint)sizeof(struct s), 0, 28});
  check_contents(u, "struct", MPI_COMBINER_STRUCT, 4, (int[]){3, 1, 2, 1}, 3, disp, 3,
                 (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE, MPI_INT});
  MPI_OK(MPI_Type_free(&u));

  /* struct with a derived member (new handle from get_contents) */
  MPI_OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 16},
                                (MPI_Datatype[]){t, MPI_INT}, &u));
  check_bounds(u, "struct of contiguous", (bounds_t){16, 0, 20, 0, 20});
  check_contents(u, "struct of contiguous", MPI_COMBINER_STRUCT, 3, (int[]){2, 1, 1}, 2,
                 (MPI_Aint[]){0, 16}, 2, (MPI_Datatype[]){t, MPI_INT});
  MPI_OK(MPI_Type_free(&u));

  /* resized: the contiguous type with lb -4 and extent 20 */
  MPI_OK(MPI_Type_create_resized(t, -4, 20, &u));
  check_bounds(u, "resized", (bounds_t){12, -4, 20, 0, 12});
  check_contents(u, "resized", MPI_COMBINER_RESIZED, 0, NULL, 2, (MPI_Aint[]){-4, 20}, 1,
                 (MPI_Datatype[]){t});
  MPI_OK(MPI_Type_free(&u));

  /* dup: same bounds, combiner DUP */
  MPI_OK(MPI_Type_dup(t, &u));
  check_bounds(u, "dup", (bounds_t){12, 0, 12, 0, 12});
  check_contents(u, "dup", MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, (MPI_Datatype[]){t});
  MPI_OK(MPI_Type_free(&u));

  /* subarray: the 2x3 block at (1,2) of a 4x6 int array, C order */
  MPI_OK(MPI_Type_create_subarray(2, (int[]){4, 6}, (int[]){2, 3}, (int[]){1, 2}, MPI_ORDER_C,
                                  MPI_INT, &u));
  check_bounds(u, "subarray C", (bounds_t){24, 0, 96, 32, 36});
  check_contents(u, "subarray C", MPI_COMBINER_SUBARRAY, 8,
                 (int[]){2, 4, 6, 2, 3, 1, 2, MPI_ORDER_C}, 0, NULL, 1,
                 (MPI_Datatype[]){MPI_INT});
  MPI_OK(MPI_Type_free(&u));
  /* Fortran order: first index fastest; block (1..2, 2..4) of 4x6: first element
   * at 1 + 2*4 = 9, last at 2 + 4*4 = 18 */
  MPI_OK(MPI_Type_create_subarray(2, (int[]){4, 6}, (int[]){2, 3}, (int[]){1, 2},
                                  MPI_ORDER_FORTRAN, MPI_INT, &u));
  check_bounds(u, "subarray Fortran", (bounds_t){24, 0, 96, 36, 40});
  MPI_OK(MPI_Type_free(&u));

  /* darray: 8x8 doubles, block x cyclic(2) over a 2x2 grid; rank 3 has rows 4..7 and
   * columns {2,3,6,7}: 16 doubles, extent of the whole array */
  MPI_OK(MPI_Type_create_darray(4, 3, 2, (int[]){8, 8},
                                (int[]){MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
                                (int[]){MPI_DISTRIBUTE_DFLT_DARG, 2}, (int[]){2, 2}, MPI_ORDER_C,
                                MPI_DOUBLE, &u));
  check_bounds(u, "darray", (bounds_t){128, 0, 512, (4 * 8 + 2) * 8, (3 * 8 + 5) * 8 + 8});
  {
    int gi, ga, gd, gc;
    MPI_OK(MPI_Type_get_envelope(u, &gi, &ga, &gd, &gc));
    CHECK(gc == MPI_COMBINER_DARRAY && gi == 4 * 2 + 4 && ga == 0 && gd == 1,
          "darray envelope %d/%d/%d combiner %d", gi, ga, gd, gc);
  }
  MPI_OK(MPI_Type_free(&u));

#if MPI_VERSION >= 4
  /* large-count constructor: envelope_c reports large counts */
  {
    MPI_Count ni, na, nl, nd;
    int comb;
    MPI_OK(MPI_Type_vector_c(3, 2, 5, MPI_INT, &u));
    check_bounds(u, "vector_c", (bounds_t){24, 0, 48, 0, 48});
    MPI_OK(MPI_Type_get_envelope_c(u, &ni, &na, &nl, &nd, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 0 && na == 0 && nl == 3 && nd == 1,
          "vector_c envelope %lld/%lld/%lld/%lld", (long long)ni, (long long)na, (long long)nl,
          (long long)nd);
    MPI_Count lc[3];
    MPI_Datatype dt[1];
    MPI_OK(MPI_Type_get_contents_c(u, 0, 0, 3, 1, NULL, NULL, lc, dt));
    CHECK(lc[0] == 3 && lc[1] == 2 && lc[2] == 5 && dt[0] == MPI_INT, "vector_c contents");
    MPI_OK(MPI_Type_free(&u));

    /* every other large-count constructor gives the bounds of its int form and reports
     * its counts and displacements as large counts */
    MPI_Datatype c[9];
    MPI_OK(MPI_Type_contiguous_c(3, MPI_INT, &c[0]));
    MPI_OK(MPI_Type_create_hvector_c(2, 1, 100, t, &c[1]));
    MPI_OK(MPI_Type_indexed_c(2, (MPI_Count[]){2, 1}, (MPI_Count[]){5, 0}, MPI_INT, &c[2]));
    MPI_OK(MPI_Type_create_hindexed_c(2, (MPI_Count[]){1, 3}, (MPI_Count[]){6, 20}, MPI_SHORT, &c[3]));
    MPI_OK(MPI_Type_create_indexed_block_c(2, 2, (MPI_Count[]){1, 6}, MPI_FLOAT, &c[4]));
    MPI_OK(MPI_Type_create_hindexed_block_c(3, 1, (MPI_Count[]){3, 10, 7}, MPI_CHAR, &c[5]));
    MPI_OK(MPI_Type_create_struct_c(2, (MPI_Count[]){1, 1}, (MPI_Count[]){0, 16},
                                    (MPI_Datatype[]){t, MPI_INT}, &c[6]));
    MPI_OK(MPI_Type_create_subarray_c(2, (MPI_Count[]){4, 6}, (MPI_Count[]){2, 3},
                                      (MPI_Count[]){1, 2}, MPI_ORDER_C, MPI_INT, &c[7]));
    MPI_OK(MPI_Type_create_resized_c(t, -4, 20, &c[8]));
    const bounds_t want[9] = {{12, 0, 12, 0, 12}, {24, 0, 112, 0, 112}, {12, 0, 28, 0, 28},
                              {8, 6, 20, 6, 20},  {16, 4, 28, 4, 28},   {3, 3, 8, 3, 8},
                              {16, 0, 20, 0, 20}, {24, 0, 96, 32, 36},  {12, -4, 20, 0, 12}};
    /* large counts: contiguous 1, hvector 3, indexed 1+2+2, hindexed 1+2+2, indexed_block
     * 2+2, hindexed_block 2+3, struct 1+2+2, subarray 6, resized 2 */
    const MPI_Count want_large[9] = {1, 3, 5, 5, 4, 5, 5, 6, 2};
    for (int k = 0; k < 9; k++) {
      char what[32];
      snprintf(what, sizeof what, "large-count constructor %d", k);
      check_bounds(c[k], what, want[k]);
      MPI_OK(MPI_Type_get_envelope_c(c[k], &ni, &na, &nl, &nd, &comb));
      CHECK(nl == want_large[k] && na == 0, "%s: %lld large counts, %lld addresses", what,
            (long long)nl, (long long)na);
      MPI_OK(MPI_Type_free(&c[k]));
    }
  }
#endif

  /* predefined: envelope NAMED, names, cannot be freed */
  {
    int gi, ga, gd, gc, len;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_OK(MPI_Type_get_envelope(MPI_DOUBLE_INT, &gi, &ga, &gd, &gc));
    CHECK(gc == MPI_COMBINER_NAMED && gi == 0 && ga == 0 && gd == 0, "MPI_DOUBLE_INT envelope");
    MPI_OK(MPI_Type_get_name(MPI_DOUBLE_INT, name, &len));
    CHECK(strcmp(name, "MPI_DOUBLE_INT") == 0 && len == 14, "name %s", name);
    MPI_OK(MPI_Type_set_name(t, "three ints"));
    MPI_OK(MPI_Type_get_name(t, name, &len));
    CHECK(strcmp(name, "three ints") == 0 && len == 10, "user name %s", name);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Datatype pre = MPI_INT;
    int rc = MPI_Type_free(&pre);
    int cls;
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_TYPE, "freeing MPI_INT: rc %d class %d", rc, cls);
    /* communicating with an uncommitted type */
    int buf[3] = {0};
    rc = MPI_Send(buf, 1, t, 0, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_TYPE, "send with an uncommitted type: class %d", cls);
    /* bad order */
    rc = MPI_Type_create_subarray(1, (int[]){4}, (int[]){2}, (int[]){0}, 7, MPI_INT, &u);
    CHECK(rc != MPI_SUCCESS, "order 7 accepted");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  }

  /* match_size, value_index, Aint arithmetic, Get_address */
  {
    MPI_Datatype m;
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m));
    int s;
    MPI_OK(MPI_Type_size(m, &s));
    CHECK(s == 8, "match_size REAL 8 gives size %d", s);
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &m));
    MPI_OK(MPI_Type_size(m, &s));
    CHECK(s == 4, "match_size INTEGER 4 gives size %d", s);
    double arr[10];
    MPI_Aint a0, a5;
    MPI_OK(MPI_Get_address(&arr[0], &a0));
    MPI_OK(MPI_Get_address(&arr[5], &a5));
    CHECK(MPI_Aint_diff(a5, a0) == 40, "Aint_diff %ld", (long)MPI_Aint_diff(a5, a0));
    CHECK(MPI_Aint_add(a0, 40) == a5, "Aint_add");
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    MPI_OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &m));
    CHECK(m == MPI_DOUBLE_INT, "value_index(double, int) is not MPI_DOUBLE_INT");
#endif
  }

  MPI_OK(MPI_Type_commit(&t));
  MPI_OK(MPI_Type_free(&t));
  t_finish();
  return 0;
}
