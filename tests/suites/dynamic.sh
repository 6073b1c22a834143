#!/usr/bin/env bash
# Dynamic processes between independently started jobs: two mpiruns on this machine
# connect through a port (tests/mpi/dyn_port.c accept/connect) or a socket
# (tests/mpi/dyn_join.c listen/connect), with the default transports and with
# CROSSMPI_TRANSPORT=tcp; and one mpirun spawning children on another host name
# (127.0.0.2) through a launch agent. The single-job cases are in tests/mpi (run.sh).
set -uo pipefail
prefix=$(cd "${1:?usage: dynamic.sh PREFIX}" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
build="$root/build/tests/dynamic"; mkdir -p "$build"
for t in dyn_port dyn_join dyn_spawn; do
  "$prefix/bin/mpicc" -O1 -I"$root/tests/mpi" "$root/tests/mpi/$t.c" -o "$build/$t" || exit 1
done
passed=0; failed=0
# Runs two jobs at once, the first with NP1 processes in ROLE1, the second NP2 in ROLE2.
pair() { # LABEL MODE PROG ROLE1 NP1 ROLE2 NP2
  local label=$1 mode=$2 prog=$3 work out1 out2 rc1 rc2
  work=$(mktemp -d "$build/run.XXXXXX")
  CROSSMPI_TRANSPORT=$mode timeout 90 "$prefix/bin/mpirun" -np "$5" "$build/$prog" "$4" "$work/rendezvous" \
    >"$work/1.out" 2>&1 &
  local first=$!
  CROSSMPI_TRANSPORT=$mode timeout 90 "$prefix/bin/mpirun" -np "$7" "$build/$prog" "$6" "$work/rendezvous" \
    >"$work/2.out" 2>&1
  rc2=$?
  wait "$first"; rc1=$?
  if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ "$(grep -c "^OK $prog" "$work/1.out" "$work/2.out" | awk -F: '{s+=$2} END {print s}')" = 2 ]; then
    echo "PASS $label"; passed=$((passed + 1)); rm -rf "$work"
  else
    echo "FAIL $label (exit $rc1 and $rc2):"
    sed 's/^/    1| /' "$work/1.out"; sed 's/^/    2| /' "$work/2.out"
    failed=$((failed + 1))
  fi
}
for mode in auto tcp; do
  for sizes in "1 1" "2 3" "3 2"; do
    set -- $sizes
    pair "ports accept n=$1 connect n=$2 $mode" "$mode" dyn_port accept "$1" connect "$2"
  done
  pair "join $mode" "$mode" dyn_join listen 1 connect 2
done
# Spawning onto "another host" (127.0.0.2) through a launch agent that, like ssh would
# there, runs the command here; the children reach mpirun's PMI over TCP.
agent="$build/agent.sh"
printf '#!/bin/sh\nshift\nexec "$@"\n' >"$agent"; chmod +x "$agent"
for mode in auto tcp; do
  for np in 1 2; do
    out="$build/spawn-host.$mode.$np.out"
    if CROSSMPI_TRANSPORT=$mode timeout 90 "$prefix/bin/mpirun" --launch-agent "$agent" -np "$np" \
         "$build/dyn_spawn" host 127.0.0.2:2 >"$out" 2>&1 && grep -q "^OK dyn_spawn" "$out"; then
      echo "PASS spawn on host 127.0.0.2 n=$np $mode"; passed=$((passed + 1))
    else
      echo "FAIL spawn on host 127.0.0.2 n=$np $mode:"; sed 's/^/    | /' "$out"; failed=$((failed + 1))
    fi
  done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
