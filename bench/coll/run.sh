#!/usr/bin/env bash
# Collective latency, crossmpi side by side with Open MPI 4.1 and MPICH 4.0 (Debian
# packages): builds bench/coll/colls.c with each MPI's mpicc and runs it at 2, 4 and 8
# ranks (barrier; bcast, allreduce, alltoall, allgather at 8 B .. 1 MiB), every MPI in
# turn for each repeat so all see the same machine load. Prints a table of medians with
# crossmpi/peer ratios and the issue's targets as met / NOT met; writes coll-raw.csv,
# coll-summary.csv and coll.png into build/bench/.
#
#   bench/coll/run.sh [PREFIX]        PREFIX: crossmpi's install (default build/install)
#
# | variable      | default                | why                                          |
# | BENCH_REPEAT  | 5                      | runs per cell; the table shows medians        |
# | BENCH_RANKS   | 2 4 8                  | rank counts                                   |
# | BENCH_MODES   | shm                    | shm (default transports) and/or tcp           |
# | BENCH_MPIS    | crossmpi openmpi mpich | MPIs to run                                   |
# | BENCH_TIMEOUT | 300                    | seconds before a run is killed ("fail")       |
# MPICH runs at 2 ranks only: oversubscribed, its busy-polling ch4:ucx device is
# 10-100x slower and would measure nothing useful. A failed build or run is recorded
# as "fail" and the script goes on.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
prefix=${1:-$root/build/install}
repeat=${BENCH_REPEAT:-5}
read -r -a rank_counts <<<"${BENCH_RANKS:-2 4 8}"
read -r -a modes <<<"${BENCH_MODES:-shm}"
read -r -a mpis <<<"${BENCH_MPIS:-crossmpi openmpi mpich}"
timeout_s=${BENCH_TIMEOUT:-300}
out="$root/build/bench"
mkdir -p "$out/bin"
raw="$out/coll-raw.csv"
echo "mpi,mode,ranks,coll,bytes,repeat,value" >"$raw"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

. "$root/bench/lib/launch.sh"

declare -A built
for mpi in "${mpis[@]}"; do
  mkdir -p "$out/bin/$mpi"
  built[$mpi]=1
  if ! "$(mpicc_of "$mpi")" -O2 -Wall -o "$out/bin/$mpi/colls" "$root/bench/coll/colls.c" \
    >"$out/bin/$mpi/colls.build.log" 2>&1; then
    echo "bench: building colls with $mpi failed (see $out/bin/$mpi/colls.build.log)" >&2
    built[$mpi]=0
  fi
done

record_fail() { # MPI MODE RANKS REPEAT
  echo "$1,$2,$3,barrier,0,$4,fail" >>"$raw"
  for c in bcast allreduce alltoall allgather; do
    for s in 8 64 1024 8192 65536 1048576; do echo "$1,$2,$3,$c,$s,$4,fail" >>"$raw"; done
  done
}

for ((rep = 1; rep <= repeat; rep++)); do
  for mode in "${modes[@]}"; do
    for n in "${rank_counts[@]}"; do
      for mpi in "${mpis[@]}"; do
        [ "$mpi" = mpich ] && [ "$n" -gt 2 ] && continue
        echo "bench: repeat $rep/$repeat $mode n=$n $mpi" >&2
        if [ "${built[$mpi]}" != 1 ]; then record_fail "$mpi" "$mode" "$n" "$rep"; continue; fi
        mapfile -t cmd < <(launch_words "$mpi" "$mode" "$n")
        log="$out/bin/$mpi/colls.$mode.n$n.$rep.log"
        if timeout -k 5 "$timeout_s" "${cmd[@]}" "$out/bin/$mpi/colls" >"$log" 2>&1 </dev/null; then
          awk -v m="$mpi" -v mode="$mode" -v n="$n" -v r="$rep" \
            '$1 == "RESULT" { print m "," mode "," n "," $2 "," $3 "," r "," $4 }' "$log" >>"$raw"
        else
          echo "bench: $mpi $mode n=$n failed (see $log)" >&2
          record_fail "$mpi" "$mode" "$n" "$rep"
        fi
      done
    done
  done
done

echo "load average (1, 5, 15 min) before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
/usr/bin/python3 "$root/bench/coll/report.py" "$raw" "$out"
