// ranks: 1 2 4 5 8
/* Group algebra: Comm_group, size/rank, incl/excl (and range variants), union,
 * intersection, difference, translate_ranks, compare, MPI_GROUP_EMPTY, free. */
#include "common.h"

static void check_members(MPI_Group g, MPI_Group world, int n, const int *expect, const char *what) {
  int size, got[64], idx[64];
  MPI_OK(MPI_Group_size(g, &size));
  CHECK(size == n, "%s: size expected %d, got %d", what, n, size);
  for (int i = 0; i < n; i++) idx[i] = i;
  MPI_OK(MPI_Group_translate_ranks(g, n, idx, world, got));
  for (int i = 0; i < n; i++)
    CHECK(got[i] == expect[i], "%s: member %d expected world rank %d, got %d", what, i, expect[i], got[i]);
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "group_ops");
  int n = t_size;
  MPI_Group world, g, h, u;
  MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  int size, rank, res;
  MPI_OK(MPI_Group_size(world, &size));
  MPI_OK(MPI_Group_rank(world, &rank));
  CHECK(size == n && rank == t_rank, "world group %d/%d", rank, size);

  /* incl in reverse order */
  int rev[64];
  for (int i = 0; i < n; i++) rev[i] = n - 1 - i;
  MPI_OK(MPI_Group_incl(world, n, rev, &g));
  check_members(g, world, n, rev, "incl reversed");
  MPI_OK(MPI_Group_rank(g, &rank));
  CHECK(rank == n - 1 - t_rank, "rank in reversed group %d", rank);
  MPI_OK(MPI_Group_compare(world, g, &res));
  CHECK(res == (n == 1 ? MPI_IDENT : MPI_SIMILAR), "compare reversed: %d", res);
  MPI_OK(MPI_Group_compare(world, world, &res));
  CHECK(res == MPI_IDENT, "compare self: %d", res);

  /* excl rank 0 */
  int zero = 0;
  MPI_OK(MPI_Group_excl(world, 1, &zero, &h));
  MPI_OK(MPI_Group_size(h, &size));
  CHECK(size == n - 1, "excl size %d", size);
  MPI_OK(MPI_Group_rank(h, &rank));
  CHECK(rank == (t_rank == 0 ? MPI_UNDEFINED : t_rank - 1), "excl rank %d", rank);

  /* union(h, g) = h's members then rank 0 */
  MPI_OK(MPI_Group_union(h, g, &u));
  int expect[64];
  for (int i = 1; i < n; i++) expect[i - 1] = i;
  expect[n - 1] = 0;
  check_members(u, world, n, expect, "union");
  MPI_OK(MPI_Group_free(&u));
  CHECK(u == MPI_GROUP_NULL, "free sets MPI_GROUP_NULL");

  /* intersection(g, h): g's order without 0 */
  MPI_OK(MPI_Group_intersection(g, h, &u));
  for (int i = 0; i < n - 1; i++) expect[i] = n - 1 - i;
  check_members(u, world, n - 1, expect, "intersection");
  MPI_OK(MPI_Group_free(&u));

  /* difference(world, h) = {0}; difference(h, world) = empty */
  MPI_OK(MPI_Group_difference(world, h, &u));
  check_members(u, world, 1, &zero, "difference");
  MPI_OK(MPI_Group_free(&u));
  MPI_OK(MPI_Group_difference(h, world, &u));
  MPI_OK(MPI_Group_size(u, &size));
  CHECK(size == 0, "empty difference size %d", size);
  MPI_OK(MPI_Group_compare(u, MPI_GROUP_EMPTY, &res));
  CHECK(res == MPI_IDENT, "empty difference vs MPI_GROUP_EMPTY: %d", res);
  MPI_OK(MPI_Group_rank(MPI_GROUP_EMPTY, &rank));
  CHECK(rank == MPI_UNDEFINED, "rank in empty group %d", rank);
  if (u != MPI_GROUP_EMPTY) MPI_OK(MPI_Group_free(&u));

  /* ranges: even ranks ascending, then odd ranks descending */
  int ranges[2][3] = {{0, n - 1, 2}, {n - 1 - ((n - 1) % 2 == 0), 1, -2}};
  int nr = n >= 2 ? 2 : 1;
  MPI_OK(MPI_Group_range_incl(world, nr, ranges, &u));
  int k = 0;
  for (int i = 0; i < n; i += 2) expect[k++] = i;
  if (n >= 2)
    for (int i = ranges[1][0]; i >= 1; i -= 2) expect[k++] = i;
  check_members(u, world, k, expect, "range_incl");
  MPI_OK(MPI_Group_free(&u));
  int evens[1][3] = {{0, n - 1, 2}};
  MPI_OK(MPI_Group_range_excl(world, 1, evens, &u));
  k = 0;
  for (int i = 1; i < n; i += 2) expect[k++] = i;
  check_members(u, world, k, expect, "range_excl");
  MPI_OK(MPI_Group_free(&u));

  /* translate with MPI_PROC_NULL and a rank missing from the target */
  int in[2] = {MPI_PROC_NULL, 0}, outr[2];
  MPI_OK(MPI_Group_translate_ranks(world, 1, &in[0], g, &outr[0]));
  MPI_OK(MPI_Group_translate_ranks(world, 1, &in[1], h, &outr[1]));
  CHECK(outr[0] == MPI_PROC_NULL && outr[1] == MPI_UNDEFINED, "translate %d %d", outr[0], outr[1]);

  MPI_OK(MPI_Group_free(&g));
  MPI_OK(MPI_Group_free(&h));
  MPI_OK(MPI_Group_free(&world));
  t_finish();
  return 0;
}
