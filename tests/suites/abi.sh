#!/usr/bin/env bash
# The MPI 5.0 standard ABI suite (issue 2), run by scripts/test.sh after the install:
# header conformance with the MPICH 5.0.2 wheel, the installed library's exports and links,
# and a binary built with MPICH's mpicc_abi running under crossmpi's mpirun. Every part runs
# even when an earlier one fails; the suite fails if any part does.
# Usage: tests/suites/abi.sh PREFIX
set -uo pipefail
[ $# -eq 1 ] || { echo "usage: $0 PREFIX" >&2; exit 2; }
prefix=$1
abi=$(cd "$(dirname "$0")/../abi" && pwd)
failed=()
bash "$abi/conformance.sh" || failed+=(conformance)
bash "$abi/exports.sh" "$prefix" || failed+=(exports)
bash "$abi/acceptance.sh" "$prefix" || failed+=(acceptance)
[ ${#failed[@]} -eq 0 ] || { echo "abi suite: failed: ${failed[*]}"; exit 1; }
echo "abi suite: ok"
