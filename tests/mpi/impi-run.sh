#!/usr/bin/env bash
# Runs one MPI program as a multi-cluster IMPI job on this machine: an IMPI server and
# one `mpirun -client` per cluster, all on loopback. N ranks are split into clusters:
# 1 -> 1; 2 -> 1+1; 3 -> 1+2; 4, 5 -> 2+2, 2+3; 6 and more -> three clusters.
# Output of every cluster goes to stdout. The exit status is the first cluster's
# non-zero status other than 1 (a cluster that ended because another failed exits 1; the
# failing cluster's own status, e.g. an MPI_Abort code, says more), else 1 if any
# cluster or the server failed, else 0.
#
#   tests/mpi/impi-run.sh PREFIX -n N PROGRAM [ARGS...]
set -uo pipefail
[ $# -ge 4 ] && [ "$2" = -n ] || { echo "usage: $0 PREFIX -n N PROGRAM [ARGS...]" >&2; exit 2; }
prefix=$1 n=$3; shift 3

split() { # N -> cluster sizes
  local n=$1
  if [ "$n" -le 1 ]; then echo 1
  elif [ "$n" -le 3 ]; then echo "1 $((n - 1))"
  elif [ "$n" -le 5 ]; then echo "2 $((n - 2))"
  else local k=$((n / 3)); echo "$k $k $((n - 2 * k))"; fi
}
read -r -a sizes <<<"$(split "$n")"
work=$(mktemp -d)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

"$prefix/bin/impi-server" -server "${#sizes[@]}" -host 127.0.0.1 --timeout 60 \
  >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 100); do [ -s "$work/server.out" ] && break; sleep 0.05; done
addr=$(head -n 1 "$work/server.out")
[ -n "$addr" ] || { echo "impi-run: the IMPI server did not start" >&2; cat "$work/server.err" >&2; exit 1; }

export CROSSMPI_IMPI_ADDR=127.0.0.1
pids=()
for i in "${!sizes[@]}"; do
  "$prefix/bin/mpirun" --oversubscribe -client "$i" "$addr" -n "${sizes[$i]}" "$@" \
    >"$work/c$i.out" 2>&1 </dev/null &
  pids+=($!)
done
status=0 failed=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}"; rc=$?
  [ "$rc" -eq 0 ] || failed=1
  if [ "$status" -eq 0 ] && [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then status=$rc; fi
done
wait "$server_pid" || failed=1
server_pid=""
for i in "${!sizes[@]}"; do cat "$work/c$i.out"; done
[ -s "$work/server.err" ] && cat "$work/server.err"
[ "$status" -ne 0 ] || status=$failed
exit "$status"
