#!/usr/bin/env bash
# The Fortran test programs (tests/fortran: mpif.h, `use mpi` and `use mpi_f08`) against crossmpi
# installed in PREFIX ($1), in shared-memory mode and in forced-TCP mode.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../fortran/run.sh" "${1:?usage: fortran.sh PREFIX}" shm tcp
