#!/usr/bin/env bash
# Application-kernel run times, crossmpi side by side with Open MPI 4.1 and MPICH 4.0
# (Debian packages): builds the C kernels of tests/kernels/c with each MPI's mpicc,
# runs each kernel at 2, 4 and 8 ranks with every MPI in turn (interleaved, so that
# all MPIs see the same machine load), BENCH_REPEAT times, and reads the timed
# section's duration from the kernel's "TIME <seconds>" line (the slowest rank's).
# Prints a table of medians with crossmpi/peer ratios and the issue's target
# ("kernels no slower than Open MPI at 2 and 4 ranks") as met / NOT met; writes
# kernels-raw.csv, kernels-summary.csv and kernels.png into build/bench/.
#
#   bench/kernels/run.sh [PREFIX]        PREFIX: crossmpi's install (default build/install)
#
# | variable        | default                  | why                                         |
# | BENCH_REPEAT    | 5                        | runs per cell; the table shows medians       |
# | BENCH_RANKS     | 2 4 8                    | rank counts                                  |
# | BENCH_MODES     | shm                      | shm (default transports) and/or tcp          |
# | BENCH_MPIS      | crossmpi openmpi mpich   | MPIs to run                                  |
# | BENCH_KERNELS   | cg fft3d isort mg wavefront | kernels to run                            |
# | BENCH_TIMEOUT   | 120                      | seconds before a run is killed ("fail")      |
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
read -r -a kernels <<<"${BENCH_KERNELS:-cg fft3d isort mg wavefront}"
timeout_s=${BENCH_TIMEOUT:-120}
out=$root/build/bench
bin=$out/kernels-bin
mkdir -p "$bin"
raw=$out/kernels-raw.csv
echo "mpi,mode,kernel,ranks,repeat,seconds" >"$raw"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

. "$root/bench/lib/launch.sh"

declare -A built
for mpi in "${mpis[@]}"; do
  cc=$(mpicc_of "$mpi")
  [ -n "$cc" ] || { echo "bench: unknown MPI '$mpi'" >&2; exit 2; }
  mkdir -p "$bin/$mpi"
  for k in "${kernels[@]}"; do
    if "$cc" -O2 -o "$bin/$mpi/$k" "$root/tests/kernels/c/$k.c" -lm >"$bin/$mpi/$k.build.log" 2>&1; then
      built[$mpi/$k]=1
    else
      echo "bench: building $k with $mpi failed (see $bin/$mpi/$k.build.log)" >&2
    fi
  done
done

for ((rep = 1; rep <= repeat; rep++)); do
  for mode in "${modes[@]}"; do
    for k in "${kernels[@]}"; do
      for n in "${rank_counts[@]}"; do
        for mpi in "${mpis[@]}"; do
          [ "$mpi" = mpich ] && [ "$n" -gt 2 ] && continue
          echo "bench: repeat $rep/$repeat $mode $k n=$n $mpi" >&2
          seconds=fail
          log=$bin/$mpi/$k.$mode.n$n.$rep.log
          if [ "${built[$mpi/$k]:-0}" = 1 ]; then
            mapfile -t cmd < <(launch_words "$mpi" "$mode" "$n")
            if timeout -k 5 "$timeout_s" "${cmd[@]}" "$bin/$mpi/$k" >"$log" 2>&1 </dev/null &&
              grep -qx "OK $k" "$log"; then
              seconds=$(awk '$1 == "TIME" { print $2; exit }' "$log")
              [ -n "$seconds" ] || seconds=fail
            else
              echo "bench: $mpi $mode $k n=$n failed (see $log)" >&2
            fi
          fi
          echo "$mpi,$mode,$k,$n,$rep,$seconds" >>"$raw"
        done
      done
    done
  done
done

# Other work on the machine makes the figures noisy: say how busy it was.
echo "load average (1, 5, 15 min) before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
/usr/bin/python3 "$root/bench/kernels/report.py" "$raw" "$out"
