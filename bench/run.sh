#!/usr/bin/env bash
# Point-to-point benchmark, crossmpi side by side with Open MPI 4.1 and MPICH 4.0
# (Debian packages): builds bench/p2p/{pingpong,bandwidth,exchange}.c with each MPI's
# mpicc, runs every program with every MPI in shared-memory mode and then in TCP-only
# mode, interleaved, BENCH_REPEAT times (default 5), and prints one table of medians
# with crossmpi/peer ratios. Raw and summary CSV and a PNG plot go to build/bench/.
#
#   bench/run.sh [PREFIX]            PREFIX: crossmpi's install (default build/install)
#   BENCH_REPEAT=5 BENCH_MODES="shm tcp" BENCH_MPIS="crossmpi openmpi mpich" BENCH_TIMEOUT=300
#
# A crossmpi build or run that fails is recorded as "fail" and the script goes on.
# MPICH runs only the 2-rank programs: oversubscribed (4 ranks on 2 cores) its
# busy-polling ch4:ucx device is 10-100x slower, which would measure nothing useful.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-$root/build/install}
repeat=${BENCH_REPEAT:-5}
read -r -a modes <<<"${BENCH_MODES:-shm tcp}"
read -r -a mpis <<<"${BENCH_MPIS:-crossmpi openmpi mpich}"
timeout_s=${BENCH_TIMEOUT:-300}
out="$root/build/bench"
mkdir -p "$out/bin"
raw="$out/p2p-raw.csv"
echo "mpi,mode,bench,bytes,repeat,value" >"$raw"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

. "$root/bench/lib/launch.sh"

# bench program -> (rank count, the RESULT names it prints)
ranks_of() { [ "$1" = exchange ] && echo 4 || echo 2; }
results_of() {
  case $1 in pingpong) echo latency ;; bandwidth) echo bandwidth ;; exchange) echo "ring pairwise testloop" ;; esac
}
sizes_of() {
  case $1 in
    latency) echo 0; for ((s = 1; s <= 4194304; s *= 2)); do echo $s; done ;;
    bandwidth) for ((s = 1; s <= 4194304; s *= 2)); do echo $s; done ;;
    ring | pairwise | testloop) echo 8 1024 65536 1048576 | tr ' ' '\n' ;;
  esac
}
programs=(pingpong bandwidth exchange)

declare -A built
for mpi in "${mpis[@]}"; do
  mkdir -p "$out/bin/$mpi"
  built[$mpi]=1
  for p in "${programs[@]}"; do
    # -Wno-stringop-overflow: MPICH's header makes GCC 12 warn on MPI_STATUSES_IGNORE
    if ! "$(mpicc_of "$mpi")" -O2 -Wall -Wno-stringop-overflow -o "$out/bin/$mpi/$p" "$root/bench/p2p/$p.c" \
      >"$out/bin/$mpi/$p.build.log" 2>&1; then
      echo "bench: building $p with $mpi failed (see $out/bin/$mpi/$p.build.log)" >&2
      built[$mpi]=0
    fi
  done
done

# Records "fail" for every value a failed run should have produced.
record_fail() { # MPI MODE PROGRAM REPEAT
  local r s
  for r in $(results_of "$3"); do
    for s in $(sizes_of "$r"); do echo "$1,$2,$r,$s,$4,fail" >>"$raw"; done
  done
}

for ((rep = 1; rep <= repeat; rep++)); do
  for mode in "${modes[@]}"; do
    for p in "${programs[@]}"; do
      for mpi in "${mpis[@]}"; do
        n=$(ranks_of "$p")
        [ "$mpi" = mpich ] && [ "$n" -gt 2 ] && continue
        echo "bench: repeat $rep/$repeat $mode $p $mpi" >&2
        if [ "${built[$mpi]}" != 1 ]; then record_fail "$mpi" "$mode" "$p" "$rep"; continue; fi
        mapfile -t cmd < <(launch_words "$mpi" "$mode" "$n")
        log="$out/bin/$mpi/$p.$mode.$rep.log"
        if timeout -k 5 "$timeout_s" "${cmd[@]}" "$out/bin/$mpi/$p" >"$log" 2>&1 </dev/null; then
          awk -v m="$mpi" -v mode="$mode" -v r="$rep" '$1 == "RESULT" { print m "," mode "," $2 "," $3 "," r "," $4 }' \
            "$log" >>"$raw"
        else
          echo "bench: $mpi $mode $p failed (see $log)" >&2
          record_fail "$mpi" "$mode" "$p" "$rep"
        fi
      done
    done
  done
done

# Other work on the machine makes the figures noisy: say how busy it was.
echo "load average (1, 5, 15 min) before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
/usr/bin/python3 "$root/bench/lib/report.py" "$raw" "$out"
