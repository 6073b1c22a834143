#!/usr/bin/env bash
# MPI_Comm_spawn time (1 and 4 children, see spawn_lat.c), crossmpi against Open MPI 4.1
# and MPICH 4.0 (Debian packages), default transports, interleaved: each of
# BENCH_REPEAT rounds (default 5) runs every MPI once. Prints the medians over rounds
# (of each run's median over 7 spawns) and crossmpi/peer ratios (< 1: crossmpi faster).
#   bench/spawn/run.sh [PREFIX]      PREFIX: crossmpi's install (default build/install)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
prefix=$(cd "${1:-$root/build/install}" && pwd)
repeat=${BENCH_REPEAT:-5}  # BENCH_TIMEOUT (default 120 s) bounds each run
mpis=(crossmpi openmpi mpich)
out="$root/build/bench/spawn"; mkdir -p "$out"
. "$root/bench/lib/launch.sh"
for m in "${mpis[@]}"; do
  "$(mpicc_of "$m")" -O2 -o "$out/spawn_lat.$m" "$root/bench/spawn/spawn_lat.c" || exit 1
done
raw="$out/raw.csv"; echo "mpi,children,repeat,ms" >"$raw"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r < repeat; r++)); do
  for m in "${mpis[@]}"; do
    mapfile -t launch < <(launch_words "$m" shm 1)
    timeout "${BENCH_TIMEOUT:-120}" "${launch[@]}" "$out/spawn_lat.$m" 2>"$out/$m.err" </dev/null |
      awk -v m="$m" -v r="$r" '$1 == "RESULT" { print m "," $3 "," r "," $4 }' >>"$raw"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$raw" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
med = {}
for n in sorted({r["children"] for r in rows}, key=int):
    for m in ("crossmpi", "openmpi", "mpich"):
        v = [float(r["ms"]) for r in rows if r["mpi"] == m and r["children"] == n]
        med[m, n] = statistics.median(v) if v else None
print(f"{'children':>8} {'crossmpi ms':>12} {'openmpi ms':>11} {'mpich ms':>9} {'x/ompi':>7} {'x/mpich':>8}")
for n in sorted({r["children"] for r in rows}, key=int):
    x, o, p = med["crossmpi", n], med["openmpi", n], med["mpich", n]
    f = lambda v: f"{v:.1f}" if v is not None else "fail"
    ratio = lambda a, b: f"{a / b:.2f}" if a and b else "-"
    print(f"{n:>8} {f(x):>12} {f(o):>11} {f(p):>9} {ratio(x, o):>7} {ratio(x, p):>8}")
PY
