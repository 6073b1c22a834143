#!/usr/bin/env bash
# The cross-cluster benchmark (issue 6, item 6) in crossmpi lab: two global-address
# clusters joined by an unshaped WAN of 0, 2, 5 and 10 ms one-way delay
# (examples/lab/grid-impi-2.toml). Needs root (namespaces) and Open MPI 4.1 (Debian).
#
#   bench/impi/run.sh [PREFIX]           PREFIX: crossmpi's install (default build/install)
#
# (a) ping-pong latency and streaming bandwidth a1 <-> b1, 0 B .. 4 MiB: an IMPI job
#     (one rank per cluster) against crossmpi's own TCP over the same path (one mpirun);
# (b) barrier, bcast, reduce, allreduce, allgather, alltoall, gather, scatter on 2
#     clusters of 2 ranks: IMPI + WAN-aware collectives (CROSSMPI_COLL_WAN=magpie), IMPI
#     + the IMPI spec's (=impi), flat crossmpi (one mpirun) and Open MPI flat;
# (c) the C application kernels on 2+2 ranks in two clusters against 4 ranks in one, 0 ms.
# Programs: bench/impi/wanbench.c (time-budgeted iterations: a fixed count would take
# minutes per size at 10 ms) and tests/kernels/c. Prints a table with the issue's
# targets as met / NOT met (kept in impi-report.txt); raw and summary CSV, PNG plots and
# every run's log go to build/bench/impi/.
#
# | variable           | default                     | why                                        |
# | BENCH_REPEAT       | 3                           | runs per cell; the table shows medians      |
# | BENCH_KERNEL_REPEAT| 9                           | runs per kernel cell: a run takes 0.1-0.4 s |
# |                    |                             | and falls into a fast or a slow mode (how   |
# |                    |                             | the 2 cores schedule the 4 ranks), so 3     |
# |                    |                             | runs gave medians 0.2 apart between runs    |
# | BENCH_PARTS        | p2p coll kernels            | which of (a) (b) (c) to run                 |
# | BENCH_DELAYS       | 0 2 5 10                    | one-way delays (ms) of the p2p part         |
# | BENCH_COLL_DELAYS  | 0 10                        | one-way delays (ms) of the collectives      |
# | BENCH_COLL_LAYOUT  | 2+2                         | ranks per cluster of the collectives        |
# | BENCH_COLL_SIZES   | 8 65536 1048576             | collective sizes in bytes (multiples of 4)  |
# | BENCH_KERNEL_LAYOUT| 2+2                         | ranks per cluster of the kernels            |
# | BENCH_KERNELS      | cg fft3d isort mg wavefront | kernels to run                              |
# | BENCH_BUDGET       | 0.3                         | seconds of timed calls per cell and run     |
# | BENCH_TIMEOUT      | 300                         | seconds before a run is killed ("fail")     |
# | CROSSMPI_YIELD_US  | 0 (bench/lib/lab.sh)        | ranks yield from their first idle poll: the |
# |                    |                             | lab's hosts share 2 cores (Open MPI alike:  |
# |                    |                             | mpi_yield_when_idle)                        |
# About 25 minutes with the defaults on 2 cores. A failed build or run is recorded as
# "fail" and the script goes on.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
prefix=$(cd "${1:-$root/build/install}" 2>/dev/null && pwd) || { echo "$0: PREFIX '${1:-}' does not exist" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "bench/impi: needs root (crossmpi lab builds network namespaces)" >&2; exit 1; }
bench=impi
# shellcheck source=bench/lib/lab.sh
source "$root/bench/lib/lab.sh"
build "$bin/wanbench.log" "$prefix/bin/mpicc" -O2 -Wall -o "$bin/wanbench" "$root/bench/impi/wanbench.c"
build "$bin/wanbench-openmpi.log" mpicc.openmpi -O2 -Wall -o "$bin/wanbench-openmpi" "$root/bench/impi/wanbench.c"
for k in ${BENCH_KERNELS:-cg fft3d isort mg wavefront}; do
  build "$bin/kernel-$k.log" "$prefix/bin/mpicc" -O2 -o "$bin/kernel-$k" "$root/tests/kernels/c/$k.c" -lm
done

/usr/bin/python3 -B "$root/bench/impi/bench.py" "$prefix" "$bin" "$out/impi-raw.csv" || exit 1

# Other work on the machine makes the figures noisy: say how busy it was.
echo "load average (1, 5, 15 min) before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
/usr/bin/python3 -B "$root/bench/impi/report.py" "$out/impi-raw.csv" "$out" | tee "$out/impi-report.txt"
