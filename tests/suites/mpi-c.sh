#!/usr/bin/env bash
# The C MPI test programs (tests/mpi) against crossmpi installed in PREFIX ($1), in
# shared-memory mode, in forced-TCP mode, and split into clusters joined by IMPI.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../mpi/run.sh" "${1:?usage: mpi-c.sh PREFIX}" shm tcp impi
