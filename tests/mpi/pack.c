// ranks: 1 2
/* MPI_Pack/MPI_Unpack round trips of non-contiguous data (several items in one buffer,
 * positions advancing), MPI_Pack_size, a packed buffer sent as MPI_PACKED and unpacked
 * by the receiver, and "external32" byte images: big-endian, fixed sizes. */
#include "common.h"
#include <stddef.h>

static void expect_bytes(const unsigned char *got, const unsigned char *want, int n,
                         const char *what) {
  for (int i = 0; i < n; i++)
    CHECK(got[i] == want[i], "%s: byte %d is %02x, expected %02x", what, i, got[i], want[i]);
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "pack");

  /* a column of a 4x5 int matrix and a struct with a hole */
  int m[4][5];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 5; j++) m[i][j] = 10 * i + j;
  MPI_Datatype column, column1, pair;
  MPI_OK(MPI_Type_vector(4, 1, 5, MPI_INT, &column));
  MPI_OK(MPI_Type_commit(&column));
  /* the same column with an extent of one int: consecutive elements are columns */
  MPI_OK(MPI_Type_create_resized(column, 0, sizeof(int), &column1));
  MPI_OK(MPI_Type_commit(&column1));
  struct rec { short s; double d; } recs[3] = {{1, 1.5}, {-2, 2.5}, {3, -3.5}};
  MPI_Aint disp[2] = {offsetof(struct rec, s), offsetof(struct rec, d)};
  MPI_OK(MPI_Type_create_struct(2, (int[]){1, 1}, disp, (MPI_Datatype[]){MPI_SHORT, MPI_DOUBLE},
                                &pair));
  MPI_OK(MPI_Type_commit(&pair));

  int size_col, size_pair;
  MPI_OK(MPI_Pack_size(2, column1, MPI_COMM_WORLD, &size_col));
  MPI_OK(MPI_Pack_size(3, pair, MPI_COMM_WORLD, &size_pair));
  CHECK(size_col >= 32 && size_pair >= 30, "Pack_size %d %d too small", size_col, size_pair);

  char buf[256];
  int pos = 0;
  /* columns 1 and 2 */
  MPI_OK(MPI_Pack(&m[0][1], 2, column1, buf, sizeof buf, &pos, MPI_COMM_WORLD));
  int after_cols = pos;
  MPI_OK(MPI_Pack(recs, 3, pair, buf, sizeof buf, &pos, MPI_COMM_WORLD));
  CHECK(after_cols <= size_col && pos - after_cols <= size_pair, "positions %d %d", after_cols, pos);

  /* unpack into contiguous ints and separate records */
  int cols[8];
  struct rec back[3];
  memset(back, 0, sizeof back);
  int upos = 0;
  MPI_OK(MPI_Unpack(buf, pos, &upos, cols, 8, MPI_INT, MPI_COMM_WORLD));
  for (int k = 0; k < 8; k++)
    CHECK(cols[k] == m[k % 4][1 + k / 4], "unpacked int %d is %d, expected %d", k, cols[k],
          m[k % 4][1 + k / 4]);
  MPI_OK(MPI_Unpack(buf, pos, &upos, back, 3, pair, MPI_COMM_WORLD));
  CHECK(upos == pos, "unpack position %d, expected %d", upos, pos);
  for (int k = 0; k < 3; k++)
    CHECK(back[k].s == recs[k].s && back[k].d == recs[k].d, "record %d: %d %g", k, back[k].s,
          back[k].d);

  /* unpack the ints into a column of another matrix */
  int z[4][5];
  memset(z, 0, sizeof z);
  upos = 0;
  MPI_OK(MPI_Unpack(buf, pos, &upos, &z[0][3], 1, column, MPI_COMM_WORLD));
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 5; j++)
      CHECK(z[i][j] == (j == 3 ? m[i][1] : 0), "z[%d][%d] = %d", i, j, z[i][j]);

  /* packed data travels as MPI_PACKED */
  if (t_size >= 2 && t_rank < 2) {
    if (t_rank == 0) {
      MPI_OK(MPI_Send(buf, pos, MPI_PACKED, 1, 5, MPI_COMM_WORLD));
    } else {
      char in[256];
      MPI_Status st;
      MPI_OK(MPI_Recv(in, sizeof in, MPI_PACKED, 0, 5, MPI_COMM_WORLD, &st));
      int n = t_count(&st, MPI_PACKED);
      CHECK(n == pos, "received %d packed bytes, expected %d", n, pos);
      int rpos = after_cols;
      memset(back, 0, sizeof back);
      MPI_OK(MPI_Unpack(in, n, &rpos, back, 3, pair, MPI_COMM_WORLD));
      for (int k = 0; k < 3; k++)
        CHECK(back[k].s == recs[k].s && back[k].d == recs[k].d, "received record %d", k);
    }
  }

  /* errors: no room, bad datarep */
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  pos = 0;
  int rc = MPI_Pack(&m[0][0], 1, column, buf, 8, &pos, MPI_COMM_WORLD);
  CHECK(rc != MPI_SUCCESS, "packing 16 bytes into 8 succeeded");
  MPI_Aint xpos = 0;
  int one = 1;
  rc = MPI_Pack_external("native", &one, 1, MPI_INT, buf, sizeof buf, &xpos);
  CHECK_CROSSMPI(rc != MPI_SUCCESS, "datarep \"native\" accepted by MPI_Pack_external");
  /* external32 has 4-byte longs: a larger value cannot be converted */
  long big = 1L << 40;
  xpos = 0;
  rc = MPI_Pack_external("external32", &big, 1, MPI_LONG, buf, sizeof buf, &xpos);
  CHECK_CROSSMPI(rc != MPI_SUCCESS, "MPI_LONG 2^40 packed into 4 external32 bytes");
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

  /* external32 images */
  {
    unsigned char x[64];
    MPI_Aint xs;
    xpos = 0;
    MPI_OK(MPI_Pack_external("external32", &one, 1, MPI_INT, x, sizeof x, &xpos));
    expect_bytes(x, (unsigned char[]){0, 0, 0, 1}, 4, "int 1");
    double d = 1.0;
    MPI_OK(MPI_Pack_external("external32", &d, 1, MPI_DOUBLE, x, sizeof x, &xpos));
    expect_bytes(x + 4, (unsigned char[]){0x3f, 0xf0, 0, 0, 0, 0, 0, 0}, 8, "double 1.0");
    short s = -2;
    MPI_OK(MPI_Pack_external("external32", &s, 1, MPI_SHORT, x, sizeof x, &xpos));
    expect_bytes(x + 12, (unsigned char[]){0xff, 0xfe}, 2, "short -2");
    long long l = 0x0102030405060708LL;
    MPI_OK(MPI_Pack_external("external32", &l, 1, MPI_LONG_LONG, x, sizeof x, &xpos));
    expect_bytes(x + 14, (unsigned char[]){1, 2, 3, 4, 5, 6, 7, 8}, 8, "long long");
    float f = -0.5f;
    MPI_OK(MPI_Pack_external("external32", &f, 1, MPI_FLOAT, x, sizeof x, &xpos));
    expect_bytes(x + 22, (unsigned char[]){0xbf, 0, 0, 0}, 4, "float -0.5");
    long small = -3; /* external32 longs are 4 bytes */
    MPI_OK(MPI_Pack_external("external32", &small, 1, MPI_LONG, x, sizeof x, &xpos));
    expect_bytes(x + 26, (unsigned char[]){0xff, 0xff, 0xff, 0xfd}, 4, "long -3");
    CHECK(xpos == 30, "external32 position %ld, expected 30", (long)xpos);
    MPI_OK(MPI_Pack_external_size("external32", 3, pair, &xs));
    CHECK(xs == 30, "external32 size of 3 {short,double} is %ld, expected 30", (long)xs);

    /* the column and the records, packed and unpacked in external32 */
    unsigned char e[128];
    xpos = 0;
    MPI_OK(MPI_Pack_external("external32", &m[0][2], 1, column, e, sizeof e, &xpos));
    expect_bytes(e, (unsigned char[]){0, 0, 0, 2, 0, 0, 0, 12, 0, 0, 0, 22, 0, 0, 0, 32}, 16,
                 "column 2 in external32");
    MPI_OK(MPI_Pack_external("external32", recs, 3, pair, e, sizeof e, &xpos));
    expect_bytes(e + 16, (unsigned char[]){0, 1, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0xff, 0xfe}, 12,
                 "records in external32");
    MPI_Aint rpos = 0;
    memset(z, 0, sizeof z);
    memset(back, 0, sizeof back);
    MPI_OK(MPI_Unpack_external("external32", e, xpos, &rpos, &z[0][0], 1, column));
    MPI_OK(MPI_Unpack_external("external32", e, xpos, &rpos, back, 3, pair));
    CHECK(rpos == xpos, "external32 unpack position %ld, expected %ld", (long)rpos, (long)xpos);
    for (int i = 0; i < 4; i++) CHECK(z[i][0] == m[i][2], "external32 column row %d", i);
    for (int k = 0; k < 3; k++)
      CHECK(back[k].s == recs[k].s && back[k].d == recs[k].d, "external32 record %d", k);
  }

  MPI_OK(MPI_Type_free(&column));
  MPI_OK(MPI_Type_free(&column1));
  MPI_OK(MPI_Type_free(&pair));
  t_finish();
  return 0;
}
