#!/usr/bin/env bash
# Builds and runs crossmpi's application kernels (tests/kernels/c/*.c with mpicc,
# tests/kernels/fortran/*.f90 with mpifort), every kernel at each rank count its
# header lists ("// ranks: 1 2 4 8" or "! ranks: 1 2 4 8"), in each mode.
#
#   tests/kernels/run.sh PREFIX [shm] [tcp]          against crossmpi installed in PREFIX
#   tests/kernels/run.sh --peer openmpi [shm] [tcp]  validation against Debian's Open MPI
#
# Modes: shm (default transports), tcp (TCP only) and impi (each run split into 1-3
# clusters joined by an IMPI server on loopback, tests/mpi/impi-run.sh); default: shm tcp.
# KERNELS="cg fft3d" runs only those kernels (both languages); KERNEL_TIMEOUT (default
# 60 s) bounds every run. A run passes when it exits 0 and rank 0 printed
# "OK <kernel>"; each kernel checks its own numerical answer and aborts otherwise.
# Output: one line per run, then exactly "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

usage() { echo "usage: $0 PREFIX [shm|tcp ...] | $0 --peer openmpi [shm|tcp ...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
peer=""
if [ "$1" = --peer ]; then
  [ "${2:-}" = openmpi ] || usage
  peer=openmpi; shift 2
  mpicc=mpicc.openmpi; mpifort=mpifort.openmpi
  launch=(mpirun.openmpi --allow-run-as-root --oversubscribe)
  tcp_launch=(--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo)
  tcp_env=()
else
  prefix=$(cd "$1" 2>/dev/null && pwd) || { echo "$0: PREFIX '$1' does not exist" >&2; exit 2; }
  shift
  mpicc=$prefix/bin/mpicc; mpifort=$prefix/bin/mpifort
  launch=("$prefix/bin/mpirun" --oversubscribe)
  tcp_launch=()
  tcp_env=(CROSSMPI_TRANSPORT=tcp)
fi
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(shm tcp)
for m in "${modes[@]}"; do
  [ "$m" = shm ] || [ "$m" = tcp ] || { [ "$m" = impi ] && [ -z "$peer" ]; } || usage
done
timeout_s=${KERNEL_TIMEOUT:-60}
build=$root/build/tests/kernels/${peer:-crossmpi}
mkdir -p "$build"
passed=0; failed=0

report() { printf '%-4s %s%s\n' "$1" "$2" "${3:+: $3}"; }
fail() { # LABEL WHY LOG
  failed=$((failed + 1)); report FAIL "$1" "$2"
  grep -v '^\s*$' "$3" | tail -n 12 | sed 's/^/    | /'
}

run_kernel() { # LANG NAME BINARY RANKS MODE
  local lang=$1 name=$2 bin=$3 n=$4 mode=$5
  local label="$lang/$name n=$n $mode" out="$build/$lang-$name.n$n.$mode.out"
  local env=() extra=()
  [ "$mode" = tcp ] && env=("${tcp_env[@]}") && extra=("${tcp_launch[@]}")
  local run=("${launch[@]}")
  [ "$mode" = impi ] && run=("$root/tests/mpi/impi-run.sh" "$prefix")
  local t0=$EPOCHREALTIME rc
  env "${env[@]}" timeout -k 5 "$timeout_s" "${run[@]}" "${extra[@]}" -n "$n" "$bin" \
    >"$out" 2>&1 </dev/null
  rc=$?
  local elapsed
  elapsed=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.2f", b - a}')
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then fail "$label" "timed out after $timeout_s s (log $out)" "$out"
  elif [ "$rc" -ne 0 ]; then fail "$label" "exit status $rc ($elapsed s, log $out)" "$out"
  elif ! grep -qx "OK $name" "$out"; then fail "$label" "no 'OK $name' line ($elapsed s, log $out)" "$out"
  else passed=$((passed + 1)); report PASS "$label" "$elapsed s, $(grep -m1 '^TIME' "$out")"; fi
}

for src in "$here"/c/*.c "$here"/fortran/*.f90; do
  [ -e "$src" ] || continue
  name=$(basename "${src%.*}")
  if [ -n "${KERNELS:-}" ] && [[ " $KERNELS " != *" $name "* ]]; then continue; fi
  case $src in
    *.c) lang=c; compile=("$mpicc" -O2 -Wall -o "$build/c-$name" "$src" -lm)
         ranks=$(sed -n 's|^// ranks: *||p' "$src" | head -n 1) ;;
    *) lang=fortran; compile=("$mpifort" -O2 -Wall -J "$build" -o "$build/fortran-$name" "$src")
       ranks=$(sed -n 's|^! ranks: *||p' "$src" | head -n 1) ;;
  esac
  if [ -z "$ranks" ]; then failed=$((failed + 1)); report FAIL "$lang/$name" "no 'ranks:' header"; continue; fi
  log=$build/$lang-$name.build.log
  if ! "${compile[@]}" >"$log" 2>&1; then fail "$lang/$name build" "${compile[0]} failed (log $log)" "$log"; continue; fi
  for mode in "${modes[@]}"; do
    for n in $ranks; do run_kernel "$lang" "$name" "$build/$lang-$name" "$n" "$mode"; done
  done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
