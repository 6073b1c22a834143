#!/usr/bin/env bash
# One-sided latency/bandwidth, crossmpi against Open MPI 4.1 and MPICH 4.0, on shared
# memory and TCP (MPICH's ch4:ucx device: UCX_TLS=tcp,self keeps it off shared memory).
#   bench/rma/run.sh PREFIX      (crossmpi installed in PREFIX)
# Prints a table and writes bench/rma/results.csv (mpi,transport,kind,bytes,median_us,MBps).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix=$(cd "${1:?usage: $0 PREFIX}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$prefix/bin/mpicc" -O2 -o "$tmp/x" "$here/rma_lat.c"
mpicc.openmpi -O2 -o "$tmp/o" "$here/rma_lat.c"
mpicc.mpich -O2 -o "$tmp/m" "$here/rma_lat.c"
csv=$here/results.csv
echo "mpi,transport,kind,bytes,median_us,MBps" > "$csv"
run() { # mpi transport command...
  local mpi=$1 tr=$2; shift 2
  "$@" | while read -r kind bytes us mbps; do
    echo "$mpi,$tr,$kind,$bytes,$us,$mbps" >> "$csv"
  done
}
# Open MPI binds each of 2 ranks to a core by default; crossmpi's mpirun does not bind,
# so its ranks are bound here the same way (rank r on core r), else a busy machine may
# put both on one core and every message then waits for a context switch.
cat > "$tmp/bind" <<'SH'
#!/bin/sh
exec taskset -c "$PMI_RANK" "$@"
SH
chmod +x "$tmp/bind"
run crossmpi shm "$prefix/bin/mpirun" -n 2 "$tmp/bind" "$tmp/x"
CROSSMPI_TRANSPORT=tcp run crossmpi tcp "$prefix/bin/mpirun" -n 2 "$tmp/bind" "$tmp/x"
run openmpi shm mpirun.openmpi --allow-run-as-root --oversubscribe -n 2 "$tmp/o"
run openmpi tcp mpirun.openmpi --allow-run-as-root --oversubscribe --mca btl tcp,self --mca osc pt2pt -n 2 "$tmp/o"
run mpich shm mpiexec.mpich -n 2 -bind-to core "$tmp/m"
UCX_TLS=tcp,self run mpich tcp mpiexec.mpich -n 2 -bind-to core "$tmp/m"
column -t -s, "$csv"
