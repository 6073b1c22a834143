#!/usr/bin/env bash
# C MPI test programs (tests/mpi) as two-cluster IMPI jobs through IMPI relays on
# loopback: PC-GC (client 1 joins through a relay, client 0 directly) and PC-PC (both
# through relays), with one relay per private cluster and, where both clusters have at
# least 2 ranks, with 2 relays (trunks) per private cluster in destination mode (x2)
# and in source mode (x2s), with packet data spliced (CROSSMPI_RELAY_SPLICE=1; x1p),
# and PC-PC with encryption between the relays (-encrypt, keyed from IMPI_AUTH_KEY;
# x1e, x2e). Every party must exit 0 and the program must
# print "OK <name>"; encrypting relays must say that they encrypt.
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

# relays RANK SERVER TRUNKS: starts the relays of client RANK (trunk 0, then the others
# joining it), adds their pids to `pids` and sets `relay_addr` to trunk 0's address.
# TRUNKS is a count, with a trailing "s" for source mode, "p" for splice or "e" for
# encryption.
relays() {
  local rank=$1 server=$2 trunks=${3%[spe]} mode=destination k extra=() verbose=() splice=0
  [ "$3" = "${trunks}s" ] && mode=source
  [ "$3" = "${trunks}p" ] && splice=1
  # -v: each relay logs that it encrypts (the other trunks follow trunk 0).
  [ "$3" = "${trunks}e" ] && { extra=(-encrypt); verbose=(-v); }
  CROSSMPI_RELAY_SPLICE=$splice "$prefix/bin/impi-relay" -relay "$rank" "$server" -trunks "$trunks" -trunk-mode "$mode" -net 127.0.0.1 \
    "${extra[@]}" "${verbose[@]}" >"$w/relay$rank.out" 2>"$w/relay$rank.err" &
  pids+=($!)
  relay_addr=$(first_line "$w/relay$rank.out")
  for k in $(seq 1 $((trunks - 1))); do
    CROSSMPI_RELAY_SPLICE=$splice "$prefix/bin/impi-relay" -trunk "$k" -join "$relay_addr" -net 127.0.0.1 "${verbose[@]}" \
      >"$w/relay$rank.$k.out" 2>"$w/relay$rank.$k.err" &
    pids+=($!)
  done
}

# one_job PROGRAM N0 N1 MODE TRUNKS: MODE pcgc or pcpc, TRUNKS relays per private
# cluster. Prints one result line; status 0 if ok.
one_job() {
  local prog=$1 n0=$2 n1=$3 mode=$4 trunks=$5 w pids=() rc=0 name relay_addr auth=()
  name=$(basename "$prog")
  w=$(mktemp -d)
  # Encrypting relays take the job's key; the server and the clients use it as usual.
  unset IMPI_AUTH_KEY
  if [ "${trunks%e}" != "$trunks" ]; then
    export IMPI_AUTH_KEY=$RANDOM$RANDOM
    auth=(-auth key)
  fi
  "$prefix/bin/impi-server" -server 2 -host 127.0.0.1 --timeout 60 "${auth[@]}" >"$w/server.out" 2>"$w/server.err" &
  local server=$!
  local addr; addr=$(first_line "$w/server.out")
  local a0=$addr a1
  relays 1 "$addr" "$trunks"
  a1=$relay_addr
  if [ "$mode" = pcpc ]; then
    relays 0 "$addr" "$trunks"
    a0=$relay_addr
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
  if [ "${trunks%e}" != "$trunks" ]; then
    for e in "$w"/relay*.err; do
      grep -q "connections to the other clients are encrypted" "$e" || { echo "    $e: not encrypted"; rc=1; }
    done
  fi
  if [ "$rc" -eq 0 ]; then
    echo "ok   $name $n0+$n1 $mode x$trunks"
  else
    echo "FAIL $name $n0+$n1 $mode x$trunks"
    tail -n 5 "$w"/*.out "$w"/*.err | sed 's/^/    /'
  fi
  rm -rf "$w"
  return "$rc"
}

passed=0 failed=0
for run in "${runs[@]}"; do
  read -r name n0 n1 <<<"$run"
  "$prefix/bin/mpicc" -O1 -o "$build/$name" "$root/tests/mpi/$name.c" || { failed=$((failed + 1)); continue; }
  for trunks in 1 2 2s 1p 1e 2e; do
    k=${trunks%[spe]}
    # A cluster needs at least one rank per trunk of the other's relays.
    [ "$k" -gt 1 ] && { [ "$n0" -lt "$k" ] || [ "$n1" -lt "$k" ]; } && continue
    for mode in pcgc pcpc; do
      # Encrypting relays accept only encrypting relays as the other clients.
      [ "${trunks%e}" != "$trunks" ] && [ "$mode" = pcgc ] && continue
      if one_job "$build/$name" "$n0" "$n1" "$mode" "$trunks"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
    done
  done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
