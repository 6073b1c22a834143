/* 3-D FFT with slab decomposition: the global transposes are MPI_Alltoall.
 *
 * An N^3 complex array is split in z-slabs over the ranks. A forward transform does
 * the x and y FFTs locally, transposes the array to x-slabs with one MPI_Alltoall and
 * does the z FFTs; the inverse goes back the same way. Checks: (1) a plane wave
 * exp(2 pi i (kx x + ky y + kz z) / N) transforms to N^3 at (kx, ky, kz) and 0
 * elsewhere; (2) forward then inverse gives back a pseudo-random array to 1e-12;
 * (3) Parseval: the transform's energy is N^3 times the input's. The FFT is an
 * iterative radix-2 one; N must be a power of two divisible by the rank count.
 */
// ranks: 1 2 4 8
#include "kernel.h"

enum { N = 64, REPEAT = 8 };
static const double PI = 3.14159265358979323846;

typedef struct { double re, im; } Cplx;

/* In-place FFT of n points spaced `stride` apart; sign -1 forward, +1 inverse
 * (unnormalised). */
static void fft1(Cplx *a, int n, int stride, int sign) {
  for (int i = 1, j = 0; i < n; i++) {
    int bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      Cplx t = a[(size_t)i * stride];
      a[(size_t)i * stride] = a[(size_t)j * stride];
      a[(size_t)j * stride] = t;
    }
  }
  for (int len = 2; len <= n; len <<= 1) {
    double ang = sign * 2.0 * PI / len;
    for (int i = 0; i < n; i += len)
      for (int k = 0; k < len / 2; k++) {
        double wr = cos(ang * k), wi = sin(ang * k);
        Cplx *u = &a[(size_t)(i + k) * stride], *v = &a[(size_t)(i + k + len / 2) * stride];
        double tr = v->re * wr - v->im * wi, ti = v->re * wi + v->im * wr;
        v->re = u->re - tr;
        v->im = u->im - ti;
        u->re += tr;
        u->im += ti;
      }
  }
}

static int nl; /* slab thickness N / size */
static Cplx *sendbuf, *recvbuf;

/* Slab layouts: z-slab zs[zl][y][x], x-slab xs[xl][y][z]. */
#define ZS(a, zl, y, x) (a)[((size_t)(zl) * N + (y)) * N + (x)]
#define XS(a, xl, y, z) (a)[((size_t)(xl) * N + (y)) * N + (z)]

/* The global transpose between the two slab layouts, both [slow][y][fast] with the
 * slow index local (nl planes) and the fast one global (N): z-slab -> x-slab and
 * x-slab -> z-slab are the same operation. The block for rank r holds my nl slow
 * planes restricted to r's fast range; what arrives from rank s becomes fast
 * positions s*nl.. of my new slow planes. */
static void transpose(const Cplx *src, Cplx *dst) {
  size_t block = (size_t)nl * N * nl;
  for (int r = 0; r < t_size; r++)
    for (int slow = 0; slow < nl; slow++)
      for (int y = 0; y < N; y++)
        memcpy(&sendbuf[r * block + ((size_t)slow * N + y) * nl], &ZS(src, slow, y, r * nl),
               nl * sizeof(Cplx));
  int count = 2 * nl * N * nl;
  MPI_OK(MPI_Alltoall(sendbuf, count, MPI_DOUBLE, recvbuf, count, MPI_DOUBLE, MPI_COMM_WORLD));
  for (int s = 0; s < t_size; s++)
    for (int slow = 0; slow < nl; slow++)
      for (int y = 0; y < N; y++)
        for (int fast = 0; fast < nl; fast++)
          XS(dst, fast, y, s * nl + slow) = recvbuf[s * block + ((size_t)slow * N + y) * nl + fast];
}

static void fft_xy(Cplx *zs, int sign) {
  for (int zl = 0; zl < nl; zl++) {
    for (int y = 0; y < N; y++) fft1(&ZS(zs, zl, y, 0), N, 1, sign);
    for (int x = 0; x < N; x++) fft1(&ZS(zs, zl, 0, x), N, N, sign);
  }
}

static void forward(Cplx *zs, Cplx *xs) {
  fft_xy(zs, -1);
  transpose(zs, xs);
  for (int xl = 0; xl < nl; xl++)
    for (int y = 0; y < N; y++) fft1(&XS(xs, xl, y, 0), N, 1, -1);
}

/* Inverse, normalised by 1/N^3. */
static void inverse(Cplx *xs, Cplx *zs) {
  for (int xl = 0; xl < nl; xl++)
    for (int y = 0; y < N; y++) fft1(&XS(xs, xl, y, 0), N, 1, +1);
  transpose(xs, zs);
  fft_xy(zs, +1);
  double scale = 1.0 / ((double)N * N * N);
  for (size_t i = 0; i < (size_t)nl * N * N; i++) {
    zs[i].re *= scale;
    zs[i].im *= scale;
  }
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "fft3d");
  CHECK(N % t_size == 0, "N=%d is not divisible by %d ranks", N, t_size);
  nl = N / t_size;
  size_t local = (size_t)nl * N * N;
  Cplx *zs = malloc(local * sizeof(Cplx)), *xs = malloc(local * sizeof(Cplx));
  Cplx *orig = malloc(local * sizeof(Cplx));
  sendbuf = malloc(local * sizeof(Cplx));
  recvbuf = malloc(local * sizeof(Cplx));
  CHECK(zs && xs && orig && sendbuf && recvbuf, "out of memory");
  int z0 = t_rank * nl, x0 = t_rank * nl;

  /* (1) a plane wave */
  const int kx = 3, ky = N - 5, kz = N / 2 + 1;
  for (int zl = 0; zl < nl; zl++)
    for (int y = 0; y < N; y++)
      for (int x = 0; x < N; x++) {
        double ph = 2.0 * PI * ((double)kx * x + (double)ky * y + (double)kz * (z0 + zl)) / N;
        ZS(zs, zl, y, x) = (Cplx){cos(ph), sin(ph)};
      }
  forward(zs, xs);
  double worst = 0.0;
  for (int xl = 0; xl < nl; xl++)
    for (int y = 0; y < N; y++)
      for (int z = 0; z < N; z++) {
        int peak = x0 + xl == kx && y == ky && z == kz;
        double want = peak ? (double)N * N * N : 0.0;
        Cplx v = XS(xs, xl, y, z);
        worst = fmax(worst, fmax(fabs(v.re - want), fabs(v.im)));
      }
  double all_worst;
  MPI_OK(MPI_Allreduce(&worst, &all_worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  CHECK(all_worst < 1e-6, "plane wave (%d,%d,%d): max deviation from the delta %g", kx, ky, kz,
          all_worst);
  double plane_error = all_worst;

  /* (2) and (3) on pseudo-random data, timed */
  double energy_in = 0.0;
  for (int zl = 0; zl < nl; zl++)
    for (int y = 0; y < N; y++)
      for (int x = 0; x < N; x++) {
        uint64_t idx = (((uint64_t)(z0 + zl) * N + y) * N + x) * 2;
        Cplx v = {k_unit(idx), k_unit(idx + 1)};
        ZS(orig, zl, y, x) = v;
        energy_in += v.re * v.re + v.im * v.im;
      }
  memcpy(zs, orig, local * sizeof(Cplx));
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  double energy_out = 0.0;
  for (int rep = 0; rep < REPEAT; rep++) {
    forward(zs, xs);
    if (rep == 0)
      for (size_t i = 0; i < local; i++) energy_out += xs[i].re * xs[i].re + xs[i].im * xs[i].im;
    inverse(xs, zs);
  }
  double elapsed = MPI_Wtime() - t0;
  worst = 0.0;
  for (size_t i = 0; i < local; i++)
    worst = fmax(worst, fmax(fabs(zs[i].re - orig[i].re), fabs(zs[i].im - orig[i].im)));
  MPI_OK(MPI_Allreduce(&worst, &all_worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  CHECK(all_worst < 1e-12, "%d forward+inverse round trips: max deviation %g", REPEAT, all_worst);
  double e[2] = {energy_in, energy_out}, all_e[2];
  MPI_OK(MPI_Allreduce(e, all_e, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  double ratio = all_e[1] / (all_e[0] * N * N * N);
  CHECK(fabs(ratio - 1.0) < 1e-10, "Parseval: output energy / (N^3 input energy) = %.15f", ratio);
  if (t_rank == 0)
    printf("fft3d: N=%d, %d slabs, plane wave error %.2e, round trip error %.2e\n", N, t_size,
           plane_error, all_worst);
  free(zs); free(xs); free(orig); free(sendbuf); free(recvbuf);
  k_finish(elapsed);
  return 0;
}
