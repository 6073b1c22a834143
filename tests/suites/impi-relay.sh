#!/usr/bin/env bash
# C MPI test programs (tests/mpi) as two-cluster IMPI jobs through IMPI relays on
# loopback: PC-GC (client 1 joins through a relay, client 0 directly) and PC-PC (both
# through relays), with one relay per private cluster and, where both clusters have at
# least 2 ranks, with 2 relays (trunks) per private cluster in destination mode (x2)
# and in source mode (x2s), with packet data spliced (CROSSMPI_RELAY_SPLICE=1; x1p),
# and PC-PC with encryption between the relays (-encrypt, keyed from IMPI_AUTH_KEY;
# x1e, x2e). Every party must exit 0 and the program must
# print "OK <name>"; encrypting relays must say that they encrypt.
# Then relay death: a loop of collectives (crates/daemons/impi-relay/tests/c) through
# relays, one relay SIGKILLed mid-job. A relay that cannot be survived (the only one
# of its cluster, encrypted or not, or trunk 0, which holds the agent's and the
# server's connections; or trunk 1 with CROSSMPI_RELAY_SURVIVE=0): every other party
# must exit non-zero within 10 s, both clusters naming a closed connection, and no
# rank may be left running. Trunk 1 of 2 (PC-GC and PC-PC, destination and source
# mode, encrypted): the job survives and finishes, every other party exiting 0.
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
# joining it), adds their pids to `pids` (and as relay_pids[RANK.k]) and sets
# `relay_addr` to trunk 0's address.
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
  relay_pids[$rank.0]=$!
  relay_addr=$(first_line "$w/relay$rank.out")
  for k in $(seq 1 $((trunks - 1))); do
    CROSSMPI_RELAY_SPLICE=$splice "$prefix/bin/impi-relay" -trunk "$k" -join "$relay_addr" -net 127.0.0.1 "${verbose[@]}" \
      >"$w/relay$rank.$k.out" 2>"$w/relay$rank.$k.err" &
    pids+=($!)
    relay_pids[$rank.$k]=$!
  done
}

# start_job PROGRAM N0 N1 MODE TRUNKS [ARG...]: MODE pcgc or pcpc, TRUNKS relays per
# private cluster. Starts the IMPI server (pid in `server`), the relays and one mpirun
# per cluster (pids in `pids`, the mpiruns also in `mpiruns`), all writing into $w;
# the program gets the ARGs.
start_job() {
  local prog=$1 n0=$2 n1=$3 mode=$4 trunks=$5 relay_addr auth=()
  shift 5
  # Encrypting relays take the job's key; the server and the clients use it as usual.
  unset IMPI_AUTH_KEY
  if [ "${trunks%e}" != "$trunks" ]; then
    export IMPI_AUTH_KEY=$RANDOM$RANDOM
    auth=(-auth key)
  fi
  "$prefix/bin/impi-server" -server 2 -host 127.0.0.1 --timeout 60 "${auth[@]}" >"$w/server.out" 2>"$w/server.err" &
  server=$!
  local addr; addr=$(first_line "$w/server.out")
  local a0=$addr a1
  relays 1 "$addr" "$trunks"
  a1=$relay_addr
  if [ "$mode" = pcpc ]; then
    relays 0 "$addr" "$trunks"
    a0=$relay_addr
  fi
  CROSSMPI_IMPI_ADDR=127.0.0.1 timeout 120 "$prefix/bin/mpirun" --oversubscribe -client 0 "$a0" \
    -n "$n0" "$prog" "$@" >"$w/c0.out" 2>&1 </dev/null &
  pids+=($!)
  mpiruns=($!)
  CROSSMPI_IMPI_ADDR=127.0.0.1 timeout 120 "$prefix/bin/mpirun" --oversubscribe -client 1 "$a1" \
    -n "$n1" "$prog" "$@" >"$w/c1.out" 2>&1 </dev/null &
  pids+=($!)
  mpiruns+=($!)
}

# report RC WHAT [DETAIL]: one result line (with the tail of the job's output in $w if
# RC is not 0); removes $w and returns RC.
report() {
  if [ "$1" -eq 0 ]; then
    echo "ok   $2${3:-}"
  else
    echo "FAIL $2"
    tail -n 5 "$w"/*.out "$w"/*.err | sed 's/^/    /'
  fi
  rm -rf "$w"
  return "$1"
}

# one_job PROGRAM N0 N1 MODE TRUNKS: the job must succeed. Prints one result line;
# status 0 if ok.
one_job() {
  local prog=$1 n0=$2 n1=$3 mode=$4 trunks=$5 w pids=() mpiruns=() server rc=0 name
  relay_pids=()
  name=$(basename "$prog")
  w=$(mktemp -d)
  start_job "$@"
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  wait "$server" || rc=1
  grep -q "^OK $name" "$w/c0.out" "$w/c1.out" || rc=1
  if [ "${trunks%e}" != "$trunks" ]; then
    for e in "$w"/relay*.err; do
      grep -q "connections to the other clients are encrypted" "$e" || { echo "    $e: not encrypted"; rc=1; }
    done
  fi
  report "$rc" "$name $n0+$n1 $mode x$trunks"
}

# kill_mid_job PROGRAM N0 N1 MODE TRUNKS VICTIM SECONDS [COUNT [OP]]: starts the
# collective loop PROGRAM (SECONDS at most, COUNT longs per round, OP allreduce or
# alltoall) as start_job does, waits until rank 0 has finished a round,
# then kills relay VICTIM (RANK.k: client RANK's trunk k) with SIGKILL; sets the
# caller's `dead` (its pid), `t0` (the time of the kill, ns) and `rc` (1 if the job did
# not start). The relay is stopped (SIGSTOP) for KILL_STOPPED_S first, so the packets
# sent to it pile up unread in its sockets and die with it: without that, a relay on
# loopback that keeps up often dies holding nothing, and nothing needs resending.
KILL_STOPPED_S=0.3
kill_mid_job() {
  local victim=$6
  start_job "$1" "$2" "$3" "$4" "$5" "$7" "${8:-1}" "${@:9}"
  for _ in $(seq 600); do grep -q RUNNING "$w/c0.out" && break; sleep 0.1; done
  grep -q RUNNING "$w/c0.out" || { echo "    the job did not start"; rc=1; }
  dead=${relay_pids[$victim]}
  kill -STOP "$dead"
  sleep "$KILL_STOPPED_S"
  kill -KILL "$dead"
  t0=$(date +%s%N)
  { wait "$dead"; } 2>/dev/null # (without bash's "Killed" notice)
}

# kill_job N0 N1 MODE TRUNKS VICTIM: the collective loop runs (60 s at most) until
# rank 0 has finished a round, then relay VICTIM (RANK.k: client RANK's trunk k) is
# killed with SIGKILL. Every other party must then exit, non-zero, within
# KILL_DEADLINE seconds, each cluster's output naming a connection that closed, and no
# rank may be left running: the job must end, not hang.
KILL_DEADLINE=10
kill_job() {
  local n0=$1 n1=$2 mode=$3 trunks=$4 victim=$5 w pids=() mpiruns=() server rc=0 p t0 left
  relay_pids=()
  local prog="$build/collective_loop" dead
  w=$(mktemp -d)
  kill_mid_job "$prog" "$n0" "$n1" "$mode" "$trunks" "$victim" 60
  local others=("$server")
  for p in "${pids[@]}"; do [ "$p" != "$dead" ] && others+=("$p"); done
  while :; do
    left=()
    for p in "${others[@]}"; do kill -0 "$p" 2>/dev/null && left+=("$p"); done
    [ ${#left[@]} -eq 0 ] && break
    [ $(( ($(date +%s%N) - t0) / 1000000000 )) -ge "$KILL_DEADLINE" ] && break
    sleep 0.05
  done
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  if [ ${#left[@]} -gt 0 ]; then
    echo "    still running ${KILL_DEADLINE} s after the kill: ${left[*]}"
    rc=1
    kill -KILL "${left[@]}" 2>/dev/null
  fi
  for p in "${others[@]}"; do
    wait "$p" && { echo "    pid $p exited 0"; rc=1; }
  done
  for c in "$w/c0.out" "$w/c1.out"; do
    grep -q "closed its connection" "$c" || { echo "    $c names no closed connection"; rc=1; }
    grep -q "^mpirun: .*ending the job" "$c" || { echo "    $c: mpirun did not end its cluster"; rc=1; }
  done
  if pgrep -f "$prog" >/dev/null; then
    echo "    ranks left running: $(pgrep -f "$prog" | tr '\n' ' ')"
    rc=1
  fi
  report "$rc" "relay death: $n0+$n1 $mode x$trunks, killed relay $victim" ": every party ended in $ms ms"
}

# survive_job N0 N1 MODE TRUNKS VICTIM [COUNT [alltoall]]: as kill_job, but VICTIM is a
# trunk of a cluster with 2 or more relays (trunk 0, which holds the cluster's
# connection to the IMPI server, included), and both ends are crossmpi: the job
# survives (docs/impi-relay.md, "Surviving a relay's death"). The loop runs
# SURVIVE_SECONDS, COUNT longs per round (a large count keeps long packets streaming
# through the relays when one dies; with alltoall every pair of ranks crosses, not
# only the clusters' masters), and checks every round's result; every party but the
# killed relay must exit 0, the loop must print OK, and the ranks must say which relay
# took over.
SURVIVE_SECONDS=4
survive_job() {
  local n0=$1 n1=$2 mode=$3 trunks=$4 victim=$5 count=${6:-1} op=${7:-allreduce} w pids=() mpiruns=() server rc=0 p t0
  relay_pids=()
  local prog="$build/collective_loop" dead
  w=$(mktemp -d)
  kill_mid_job "$prog" "$n0" "$n1" "$mode" "$trunks" "$victim" "$SURVIVE_SECONDS" "$count" "$op"
  for p in "${pids[@]}"; do
    [ "$p" = "$dead" ] && continue
    wait "$p" || { echo "    pid $p exited non-zero"; rc=1; }
  done
  wait "$server" || { echo "    the IMPI server exited non-zero"; rc=1; }
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  grep -q "^OK collective_loop" "$w/c0.out" || { echo "    no OK from the loop"; rc=1; }
  # The ranks of the cluster that lost the relay see its connections close.
  grep -qs "(another relay of that cluster) takes over" "$w/c${victim%%.*}.out" ||
    { echo "    the ranks of client ${victim%%.*} named no relay taking over"; rc=1; }
  report "$rc" "relay death survived: $n0+$n1 $mode x$trunks, killed relay $victim, $op of $count longs per round" ": the job finished $ms ms after the kill"
}

declare -A relay_pids=()
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
# Relay death (SIGKILL mid-job): the deaths that end the job, then those it survives.
"$prefix/bin/mpicc" -O1 -o "$build/collective_loop" "$root/crates/daemons/impi-relay/tests/c/collective_loop.c" ||
  failed=$((failed + 1))
for kill in "2 2 pcgc 1 1.0" "2 2 pcpc 1 0.0" "2 2 pcpc 1e 1.0"; do
  # shellcheck disable=SC2086
  if kill_job $kill 2>/dev/null; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
if CROSSMPI_RELAY_SURVIVE=0 kill_job 2 2 pcpc 2 0.1 2>/dev/null; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
for kill in "2 2 pcgc 2 1.1" "2 2 pcpc 2 0.1" "2 2 pcpc 2 1.1" "2 2 pcgc 2s 1.1" "2 2 pcpc 2s 0.1" "2 2 pcpc 2e 0.1" \
  "2 2 pcgc 2 1.1 262144" "2 2 pcpc 2 0.1 262144" "2 2 pcpc 2e 1.1 262144" "2 2 pcgc 2 1.1 32768 alltoall" \
  "2 2 pcpc 2 0.1 32768 alltoall" "2 2 pcpc 2s 1.1 32768 alltoall" "2 2 pcgc 2 1.0 32768 alltoall" \
  "2 2 pcpc 2 0.0 32768 alltoall" "2 2 pcpc 2s 1.0 32768 alltoall"; do
  # shellcheck disable=SC2086
  if survive_job $kill 2>/dev/null; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
