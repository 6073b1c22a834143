/* Multigrid V-cycles with halo exchanges through derived datatypes.
 *
 * Solves -laplace(u) = 3 pi^2 sin(pi x) sin(pi y) sin(pi z) on the unit cube, u = 0 on
 * its faces, on an N^3 cell-centred grid split in blocks over a 3-D process grid. A
 * V-cycle: weighted-Jacobi smoothing, residual, restriction (mean of 8 cells) to a
 * grid twice as coarse, recursion, trilinear prolongation of the correction,
 * smoothing; the coarsest level (when a block can no longer be halved) is smoothed
 * many times. Every smoothing step and the prolongation refresh a halo of one cell:
 * x faces travel as MPI_Type_create_subarray types, y faces as MPI_Type_vector, z
 * faces as MPI_Type_contiguous, one dimension after the other so that edges and
 * corners arrive too. Checks: the residual drops by 1e-9 within MAX_CYCLES cycles,
 * every cycle reduces it at least 3-fold, and the solution is within the
 * discretisation error (3e-3) of sin(pi x) sin(pi y) sin(pi z).
 */
// ranks: 1 2 4 8
#include "kernel.h"

enum { N = 64, MAX_LEVELS = 10, MAX_CYCLES = 20, PRE = 2, POST = 2, COARSE_SWEEPS = 60 };
static const double PI = 3.14159265358979323846;
static const double OMEGA = 6.0 / 7.0; /* Jacobi weight damping high frequencies in 3-D */

typedef struct {
  int nz, ny, nx; /* local cells */
  double h;       /* cell width */
  double *u, *f, *r;
  MPI_Datatype x_send_lo, x_send_hi, x_recv_lo, x_recv_hi; /* subarrays: one x plane */
  MPI_Datatype y_plane;                                    /* vector: one y plane */
  MPI_Datatype z_plane;                                    /* contiguous: one z plane */
} Level;

static int dims[3], coords[3];  /* process grid and my place in it, order z, y, x */
static int lo_nb[3], hi_nb[3];  /* neighbour ranks per dimension, MPI_PROC_NULL at faces */
static Level lv[MAX_LEVELS];
static int levels;

#define IDX(L, z, y, x) ((((size_t)(z)) * ((L)->ny + 2) + (y)) * ((L)->nx + 2) + (x))

/* Factors p into 3 dimensions, spreading prime factors over the smallest dimension. */
static void grid3(int p) {
  dims[0] = dims[1] = dims[2] = 1;
  for (int f = 2; p > 1;) {
    if (p % f) { f++; continue; }
    int smallest = 2;
    for (int d = 1; d >= 0; d--) if (dims[d] < dims[smallest]) smallest = d;
    dims[smallest] *= f;
    p /= f;
  }
}

static void make_types(Level *L) {
  int sizes[3] = {L->nz + 2, L->ny + 2, L->nx + 2}, sub[3] = {L->nz + 2, L->ny + 2, 1};
  int starts[3] = {0, 0, 0};
  MPI_Datatype *x_types[4] = {&L->x_recv_lo, &L->x_send_lo, &L->x_send_hi, &L->x_recv_hi};
  for (int s = 0; s < 4; s++) {
    starts[2] = s == 0 ? 0 : s == 1 ? 1 : s == 2 ? L->nx : L->nx + 1;
    MPI_OK(MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, MPI_DOUBLE, x_types[s]));
    MPI_OK(MPI_Type_commit(x_types[s]));
  }
  MPI_OK(MPI_Type_vector(L->nz + 2, L->nx + 2, (L->ny + 2) * (L->nx + 2), MPI_DOUBLE, &L->y_plane));
  MPI_OK(MPI_Type_commit(&L->y_plane));
  MPI_OK(MPI_Type_contiguous((L->ny + 2) * (L->nx + 2), MPI_DOUBLE, &L->z_plane));
  MPI_OK(MPI_Type_commit(&L->z_plane));
}

/* Refreshes v's halo: neighbours' planes, and the mirror (-v) at the cube's faces so
 * that the face value is 0. */
static void halo(Level *L, double *v) {
  /* x: subarray types over the whole array */
  MPI_OK(MPI_Sendrecv(v, 1, L->x_send_lo, lo_nb[2], 10, v, 1, L->x_recv_hi, hi_nb[2], 10,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Sendrecv(v, 1, L->x_send_hi, hi_nb[2], 11, v, 1, L->x_recv_lo, lo_nb[2], 11,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  for (int z = 0; z < L->nz + 2; z++)
    for (int y = 0; y < L->ny + 2; y++) {
      if (coords[2] == 0) v[IDX(L, z, y, 0)] = -v[IDX(L, z, y, 1)];
      if (coords[2] == dims[2] - 1) v[IDX(L, z, y, L->nx + 1)] = -v[IDX(L, z, y, L->nx)];
    }
  /* y: one vector type placed at the plane */
  MPI_OK(MPI_Sendrecv(&v[IDX(L, 0, 1, 0)], 1, L->y_plane, lo_nb[1], 12, &v[IDX(L, 0, L->ny + 1, 0)],
                     1, L->y_plane, hi_nb[1], 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Sendrecv(&v[IDX(L, 0, L->ny, 0)], 1, L->y_plane, hi_nb[1], 13, &v[IDX(L, 0, 0, 0)], 1,
                     L->y_plane, lo_nb[1], 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  for (int z = 0; z < L->nz + 2; z++)
    for (int x = 0; x < L->nx + 2; x++) {
      if (coords[1] == 0) v[IDX(L, z, 0, x)] = -v[IDX(L, z, 1, x)];
      if (coords[1] == dims[1] - 1) v[IDX(L, z, L->ny + 1, x)] = -v[IDX(L, z, L->ny, x)];
    }
  /* z: contiguous planes */
  MPI_OK(MPI_Sendrecv(&v[IDX(L, 1, 0, 0)], 1, L->z_plane, lo_nb[0], 14, &v[IDX(L, L->nz + 1, 0, 0)],
                     1, L->z_plane, hi_nb[0], 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Sendrecv(&v[IDX(L, L->nz, 0, 0)], 1, L->z_plane, hi_nb[0], 15, &v[IDX(L, 0, 0, 0)], 1,
                     L->z_plane, lo_nb[0], 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  for (int y = 0; y < L->ny + 2; y++)
    for (int x = 0; x < L->nx + 2; x++) {
      if (coords[0] == 0) v[IDX(L, 0, y, x)] = -v[IDX(L, 1, y, x)];
      if (coords[0] == dims[0] - 1) v[IDX(L, L->nz + 1, y, x)] = -v[IDX(L, L->nz, y, x)];
    }
}

static double apply_a(const Level *L, const double *v, int z, int y, int x) {
  size_t c = IDX(L, z, y, x), sy = L->nx + 2, sz = (size_t)(L->ny + 2) * sy;
  return (6.0 * v[c] - v[c - 1] - v[c + 1] - v[c - sy] - v[c + sy] - v[c - sz] - v[c + sz]) /
         (L->h * L->h);
}

/* r = f - A u */
static void residual(Level *L) {
  halo(L, L->u);
  for (int z = 1; z <= L->nz; z++)
    for (int y = 1; y <= L->ny; y++)
      for (int x = 1; x <= L->nx; x++)
        L->r[IDX(L, z, y, x)] = L->f[IDX(L, z, y, x)] - apply_a(L, L->u, z, y, x);
}

static void smooth(Level *L, int sweeps) {
  for (int s = 0; s < sweeps; s++) {
    residual(L);
    double step = OMEGA * L->h * L->h / 6.0;
    for (int z = 1; z <= L->nz; z++)
      for (int y = 1; y <= L->ny; y++)
        for (int x = 1; x <= L->nx; x++) L->u[IDX(L, z, y, x)] += step * L->r[IDX(L, z, y, x)];
  }
}

static void vcycle(int l) {
  Level *L = &lv[l];
  if (l == levels - 1) { smooth(L, COARSE_SWEEPS); return; }
  Level *C = &lv[l + 1];
  smooth(L, PRE);
  residual(L);
  for (int z = 1; z <= C->nz; z++)
    for (int y = 1; y <= C->ny; y++)
      for (int x = 1; x <= C->nx; x++) {
        double sum = 0.0;
        for (int c = 0; c < 8; c++)
          sum += L->r[IDX(L, 2 * z - 1 + (c >> 2), 2 * y - 1 + ((c >> 1) & 1), 2 * x - 1 + (c & 1))];
        C->f[IDX(C, z, y, x)] = sum / 8.0;
      }
  memset(C->u, 0, sizeof(double) * (size_t)(C->nz + 2) * (C->ny + 2) * (C->nx + 2));
  vcycle(l + 1);
  halo(C, C->u);
  /* trilinear: fine cell 2I-1 (resp. 2I) takes 3/4 of coarse I and 1/4 of I-1 (resp. I+1) */
  for (int z = 1; z <= L->nz; z++)
    for (int y = 1; y <= L->ny; y++)
      for (int x = 1; x <= L->nx; x++) {
        int cz = (z + 1) / 2, cy = (y + 1) / 2, cx = (x + 1) / 2;
        int oz = z & 1 ? -1 : 1, oy = y & 1 ? -1 : 1, ox = x & 1 ? -1 : 1;
        double sum = 0.0;
        for (int c = 0; c < 8; c++) {
          int dz = c >> 2, dy = (c >> 1) & 1, dx = c & 1;
          double w = (dz ? 0.25 : 0.75) * (dy ? 0.25 : 0.75) * (dx ? 0.25 : 0.75);
          sum += w * C->u[IDX(C, cz + dz * oz, cy + dy * oy, cx + dx * ox)];
        }
        L->u[IDX(L, z, y, x)] += sum;
      }
  smooth(L, POST);
}

static double norm2(Level *L, const double *v) {
  double local = 0.0, all = 0.0;
  for (int z = 1; z <= L->nz; z++)
    for (int y = 1; y <= L->ny; y++)
      for (int x = 1; x <= L->nx; x++) local += v[IDX(L, z, y, x)] * v[IDX(L, z, y, x)];
  MPI_OK(MPI_Allreduce(&local, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  return sqrt(all);
}

int main(int argc, char **argv) {
  t_init(&argc, &argv, "mg");
  grid3(t_size);
  coords[0] = t_rank / (dims[1] * dims[2]);
  coords[1] = t_rank / dims[2] % dims[1];
  coords[2] = t_rank % dims[2];
  int stride[3] = {dims[1] * dims[2], dims[2], 1};
  for (int d = 0; d < 3; d++) {
    CHECK(N % dims[d] == 0, "N=%d not divisible by %d ranks in dimension %d", N, dims[d], d);
    lo_nb[d] = coords[d] > 0 ? t_rank - stride[d] : MPI_PROC_NULL;
    hi_nb[d] = coords[d] < dims[d] - 1 ? t_rank + stride[d] : MPI_PROC_NULL;
  }
  int n[3] = {N / dims[0], N / dims[1], N / dims[2]};
  double h = 1.0 / N;
  for (levels = 0; levels < MAX_LEVELS; levels++) {
    Level *L = &lv[levels];
    L->nz = n[0]; L->ny = n[1]; L->nx = n[2]; L->h = h;
    size_t cells = (size_t)(n[0] + 2) * (n[1] + 2) * (n[2] + 2);
    L->u = calloc(cells, sizeof(double));
    L->f = calloc(cells, sizeof(double));
    L->r = calloc(cells, sizeof(double));
    CHECK(L->u && L->f && L->r, "out of memory");
    make_types(L);
    if (n[0] % 2 || n[1] % 2 || n[2] % 2) { levels++; break; }
    n[0] /= 2; n[1] /= 2; n[2] /= 2; h *= 2;
  }
  Level *F = &lv[0];
  int z0 = coords[0] * F->nz, y0 = coords[1] * F->ny, x0 = coords[2] * F->nx;
  for (int z = 1; z <= F->nz; z++)
    for (int y = 1; y <= F->ny; y++)
      for (int x = 1; x <= F->nx; x++)
        F->f[IDX(F, z, y, x)] = 3.0 * PI * PI * sin(PI * (x0 + x - 0.5) / N) *
                                sin(PI * (y0 + y - 0.5) / N) * sin(PI * (z0 + z - 0.5) / N);
  residual(F);
  double r0 = norm2(F, F->r), r = r0, worst_factor = 0.0;
  int cycles = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  while (cycles < MAX_CYCLES && r > 1e-9 * r0) {
    vcycle(0);
    residual(F);
    double next = norm2(F, F->r);
    worst_factor = fmax(worst_factor, next / r);
    r = next;
    cycles++;
  }
  double elapsed = MPI_Wtime() - t0;
  CHECK(r <= 1e-9 * r0, "residual reduced only to %g of the initial one in %d V-cycles", r / r0, cycles);
  CHECK(worst_factor < 1.0 / 3.0, "a V-cycle reduced the residual only by a factor %g", worst_factor);
  double err = 0.0, all_err;
  for (int z = 1; z <= F->nz; z++)
    for (int y = 1; y <= F->ny; y++)
      for (int x = 1; x <= F->nx; x++) {
        double exact = sin(PI * (x0 + x - 0.5) / N) * sin(PI * (y0 + y - 0.5) / N) *
                       sin(PI * (z0 + z - 0.5) / N);
        err = fmax(err, fabs(F->u[IDX(F, z, y, x)] - exact));
      }
  MPI_OK(MPI_Allreduce(&err, &all_err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  CHECK(all_err < 3e-3, "max |u - exact| = %g, above the discretisation error", all_err);
  if (t_rank == 0)
    printf("mg: N=%d grid %dx%dx%d, %d levels, %d V-cycles, worst factor %.3f, error %.2e\n", N,
           dims[0], dims[1], dims[2], levels, cycles, worst_factor, all_err);
  for (int l = 0; l < levels; l++) {
    Level *L = &lv[l];
    MPI_Type_free(&L->x_send_lo); MPI_Type_free(&L->x_send_hi);
    MPI_Type_free(&L->x_recv_lo); MPI_Type_free(&L->x_recv_hi);
    MPI_Type_free(&L->y_plane); MPI_Type_free(&L->z_plane);
    free(L->u); free(L->f); free(L->r);
  }
  k_finish(elapsed);
  return 0;
}
