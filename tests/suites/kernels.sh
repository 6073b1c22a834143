#!/usr/bin/env bash
# The application kernels (tests/kernels: CG, 3-D FFT, bucket sort, multigrid,
# wavefront; C and Fortran) against crossmpi installed in PREFIX ($1), in
# shared-memory mode, in forced-TCP mode, and split into clusters joined by IMPI.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../kernels/run.sh" "${1:?usage: kernels.sh PREFIX}" shm tcp impi
