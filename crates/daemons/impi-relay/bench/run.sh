#!/usr/bin/env bash
# The relay benchmark (issue 7, item 8): the relay paper's experiments scaled to this
# machine in crossmpi lab. Front-end NICs are slower than the WAN and the WAN slower
# than all compute hosts together (100 Mbit/s front-ends, a 400 Mbit/s WAN, hosts
# unshaped). Needs root (network namespaces). Not a test: it asserts nothing.
#
#   crates/daemons/impi-relay/bench/run.sh [PREFIX]   PREFIX: crossmpi's install (default build/install)
#
# (a) latency: 0-byte (and up to 4 MiB) half round trip GC-GC (no relay), PC-GC (one
#     relay), PC-PC (two), one rank per cluster, examples/lab/grid-relay.toml unshaped;
#     the added latency per relay hop; and (a') the floor under it: one hop through the
#     private cluster's front-end forwarded by the kernel (its NAT), by plain_forwarder
#     (examples/plain_forwarder.rs: copies bytes, nothing else) and by impi-relay;
# (b) bandwidth vs message size through 0, 1 and 2 relays on the same grid, once with
#     every WAN uplink shaped to BENCH_BW_MBIT (front-ends unshaped, so the direct and
#     the relayed paths cross the same bottleneck) and once unshaped (CPU-bound);
# (c) trunks: inter-cluster all-to-all bandwidth (crossbw.c, 4+4 ranks) and the IS-like
#     (tests/kernels/c/isort.c, Alltoallv) and FT-like (fft3d.c, Alltoall) kernels,
#     PC-GC through 1, 2, 4 trunked relays and GC-GC, private cluster p behind 4
#     front-ends at BENCH_FE_MBIT, WAN BENCH_TRUNK_WAN_MBIT, 0 ms;
# (d) delays: the kernels PC-GC through BENCH_SWEEP_TRUNKS trunks vs GC-GC at WAN
#     one-way delays BENCH_DELAYS (relative performance = GC-GC time / relayed time).
# Programs: bench/impi/wanbench.c (time-budgeted), crossbw.c, tests/kernels/c. Driver:
# relaybench.py (jobs: relayjob.py, trunkbench.py, bench/impi/gridjob.py); report:
# relayreport.py. Prints a table with the issue's targets as met / NOT met (kept in
# relay-report.txt); raw and summary CSV, PNG plots and the logs of failed runs go to
# build/bench/relay/.
#
# | variable           | default                        | why                                             |
# | BENCH_REPEAT       | 5                              | runs per cell; the tables show medians          |
# | BENCH_PARTS        | latency bandwidth trunks delays | which of (a) (b) (c) (d) to run                 |
# | BENCH_BUDGET       | 0.3                            | seconds of timed calls per wanbench size        |
# | BENCH_BW_MBIT      | 1000                           | shaped WAN of (b); at 400 a 4 MiB cell takes 40 s |
# | BENCH_FE_MBIT      | 100                            | front-end NICs of (c) (d): the bottleneck       |
# | BENCH_WAN_MBIT     | 400                            | WAN of (d): four front-ends fill it, so four    |
# |                    |                                | trunks can match GC-GC                          |
# | BENCH_TRUNK_WAN_MBIT | 1000                         | WAN of (c): faster than the four front-ends     |
# |                    |                                | together, which the scaling target needs (at    |
# |                    |                                | 400 four trunks are capped by the WAN as well)  |
# | BENCH_DELAYS       | 0 2 5 10                       | one-way WAN delays (ms) of (d)                  |
# | BENCH_SWEEP_TRUNKS | 4                              | trunks of the relayed cluster in (d)            |
# | BENCH_KERNELS      | isort fft3d                    | kernels of (c) and (d)                          |
# | BENCH_TIMEOUT      | 300                            | seconds before a run is killed ("fail")         |
# | CROSSMPI_YIELD_US  | 0 (bench/lib/lab.sh)           | ranks yield from their first idle poll: the     |
# |                    |                                | lab's relays share the ranks' 2 cores (a        |
# |                    |                                | front-end has its own; 35 us per hop otherwise) |
# About 15 minutes with the defaults on 2 cores (load average 4-6). A failed build or
# run is recorded as "fail" and the script goes on.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
prefix=$(cd "${1:-$root/build/install}" 2>/dev/null && pwd) || { echo "$0: PREFIX '${1:-}' does not exist" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "bench/relay: needs root (crossmpi lab builds network namespaces)" >&2; exit 1; }
bench=relay
# shellcheck source=bench/lib/lab.sh
source "$root/bench/lib/lab.sh"
started=$(date +%s)
build "$bin/wanbench.log" "$prefix/bin/mpicc" -O2 -Wall -o "$bin/wanbench" "$root/bench/impi/wanbench.c"
build "$bin/crossbw.log" "$prefix/bin/mpicc" -O2 -Wall -o "$bin/crossbw" "$here/crossbw.c"
# The floor of a user-space hop in (a): a forwarder that only copies bytes.
build "$bin/plain_forwarder.log" bash -c 'cargo build --release --quiet --manifest-path "$1/Cargo.toml" \
  -p crossmpi-impi-relay --example plain_forwarder && cp "$1/target/release/examples/plain_forwarder" "$2/"' \
  build-forwarder "$root" "$bin"
for k in ${BENCH_KERNELS:-isort fft3d}; do
  build "$bin/kernel-$k.log" "$prefix/bin/mpicc" -O2 -o "$bin/kernel-$k" "$root/tests/kernels/c/$k.c" -lm
done

/usr/bin/python3 -B "$here/relaybench.py" "$prefix" "$bin" "$out/relay-raw.csv" || exit 1

# Other work on the machine makes the figures noisy: say how busy it was.
{
  echo "load average (1, 5, 15 min) before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores;" \
    "run took $(( ($(date +%s) - started) / 60 )) min $(( ($(date +%s) - started) % 60 )) s"
  /usr/bin/python3 -B "$here/relayreport.py" "$out/relay-raw.csv" "$out"
} | tee "$out/relay-report.txt"
