#!/usr/bin/env bash
# C MPI test programs (tests/mpi) as two-cluster IMPI jobs through IMPI relays on
# loopback: PC-GC (client 1 joins through a relay, client 0 directly) and PC-PC (both
# through relays). Every party must exit 0 and the program must print "OK <name>".
# The lab test (lab/tests/test_impi_relay.py) runs the same through NAT and firewalls.
#
#   tests/suites/impi-relay.sh PREFIX
set -uo pipefail
[ $# -eq 1 ] || { echo "usage: $0 PREFIX" >&2; exit 2; }
prefix=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
build="$root/build/tests/impi-relay"
mkdir -p "$build"
# program and cluster sizes (client 0 + client 1)
runs=(
  "sendrecv 2 2" "p2p_modes 2 2" "p2p_order 2 2" "p2p_wildcards 1 3" "probe 2 2"
  "cancel 2 2" "waittest 2 2" "dtype_p2p 1 2" "coll_basic 2 3" "coll_nonblocking 3 3"
  "intercomm 2 3" "flood 1 1"
)

# Waits for the first line of a file (a daemon's address); prints it.
first_line() {
  for _ in $(seq 200); do [ -s "$1" ] && { head -n 1 "$1"; return; }; sleep 0.05; done
}

# one_job PROGRAM N0 N1 MODE: MODE pcgc or pcpc. Prints one result line; status 0 if ok.
one_job() {
  local prog=$1 n0=$2 n1=$3 mode=$4 w pids=() rc=0 name
  name=$(basename "$prog")
  w=$(mktemp -d)
  "$prefix/bin/impi-server" -server 2 -host 127.0.0.1 --timeout 60 >"$w/server.out" 2>"$w/server.err" &
  local server=$!
  local addr; addr=$(first_line "$w/server.out")
  local a0=$addr a1
  "$prefix/bin/impi-relay" -relay 1 "$addr" -net 127.0.0.1 >"$w/relay1.out" 2>"$w/relay1.err" &
  pids+=($!)
  a1=$(first_line "$w/relay1.out")
  if [ "$mode" = pcpc ]; then
    "$prefix/bin/impi-relay" -relay 0 "$addr" -net 127.0.0.1 >"$w/relay0.out" 2>"$w/relay0.err" &
    pids+=($!)
    a0=$(first_line "$w/relay0.out")
  fi
  CROSSMPI_IMPI_ADDR=127.0.0.1 timeout 120 "$prefix/bin/mpirun" --oversubscribe -client 0 "$a0" \
    -n "$n0" "$prog" >"$w/c0.out" 2>&1 </dev/null &
  pids+=($!)
  CROSSMPI_IMPI_ADDR=127.0.0.1 timeout 120 "$prefix/bin/mpirun" --oversubscribe -client 1 "$a1" \
    -n "$n1" "$prog" >"$w/c1.out" 2>&1 </dev/null &
  pids+=($!)
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  wait "$server" || rc=1
  grep -q "^OK $name" "$w/c0.out" "$w/c1.out" || rc=1
  if [ "$rc" -eq 0 ]; then
    echo "ok   $name $n0+$n1 $mode"
  else
    echo "FAIL $name $n0+$n1 $mode"
    tail -n 5 "$w"/*.out "$w"/*.err | sed 's/^/    /'
  fi
  rm -rf "$w"
  return "$rc"
}

passed=0 failed=0
for run in "${runs[@]}"; do
  read -r name n0 n1 <<<"$run"
  "$prefix/bin/mpicc" -O1 -o "$build/$name" "$root/tests/mpi/$name.c" || { failed=$((failed + 1)); continue; }
  for mode in pcgc pcpc; do
    if one_job "$build/$name" "$n0" "$n1" "$mode"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
