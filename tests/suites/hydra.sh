#!/usr/bin/env bash
# An existing launcher starts crossmpi programs: Debian's MPICH Hydra (mpiexec.mpich)
# runs crossmpi's example ring with 1-4 ranks, over shared memory and TCP, through the
# PMI-1 wire protocol; and an MPI_Abort under Hydra ends the job with the abort code.
set -uo pipefail
prefix=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
hydra=/usr/bin/mpiexec.mpich
if [ ! -x "$hydra" ]; then
  echo "hydra: $hydra missing (scripts/deps.sh installs the mpich package)"; exit 1
fi
build="$root/build/tests/hydra"; mkdir -p "$build"
"$prefix/bin/mpicc" -O2 "$root/examples/ring.c" -o "$build/ring" || exit 1
cat > "$build/abort.c" <<'C'
#include <mpi.h>
int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) MPI_Abort(MPI_COMM_WORLD, 9);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
C
"$prefix/bin/mpicc" "$build/abort.c" -o "$build/abort" || exit 1
passed=0; failed=0
for mode in auto tcp; do
  for n in 1 2 4; do
    out=$(CROSSMPI_TRANSPORT=$mode timeout 60 "$hydra" -n "$n" "$build/ring" 2>&1)
    if [ $? -eq 0 ] && grep -q "ring of $n ranks: token = $((n * (n - 1) / 2)) (expected .*) OK" <<<"$out"; then
      echo "PASS hydra ring n=$n $mode"; passed=$((passed + 1))
    else
      echo "FAIL hydra ring n=$n $mode:"; sed 's/^/    | /' <<<"$out"; failed=$((failed + 1))
    fi
  done
done
start=$SECONDS
out=$(timeout 30 "$hydra" -n 4 "$build/abort" 2>&1); status=$?
if [ $status -eq 9 ] && grep -q "rank 1 called MPI_Abort" <<<"$out" && [ $((SECONDS - start)) -le 10 ]; then
  echo "PASS hydra abort: exit 9 after $((SECONDS - start)) s"; passed=$((passed + 1))
else
  echo "FAIL hydra abort: exit $status after $((SECONDS - start)) s:"; sed 's/^/    | /' <<<"$out"; failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
