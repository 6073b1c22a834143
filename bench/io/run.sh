#!/usr/bin/env bash
# Collective write throughput, crossmpi side by side with Open MPI 4.1 and MPICH 4.0
# (Debian packages): bench/io/collwrite.c built with each MPI's mpicc, 4 ranks writing
# a file in /tmp through interleaved views with one MPI_File_write_all each: 64 KiB
# blocks of a 256 MiB file, and a strided small-block pattern (1 KiB blocks of a 64 MiB
# file). Every MPI runs in turn for each repeat so all see the same machine load.
# Prints a table of median MiB/s with crossmpi/peer ratios and the target (at least
# Open MPI's throughput) as met / NOT met; writes build/bench/io-raw.csv and
# build/bench/io-summary.csv.
#
#   bench/io/run.sh [PREFIX]          PREFIX: crossmpi's install (default build/install)
#
# | variable      | default                | why                                          |
# | BENCH_REPEAT  | 5                      | runs per cell; the table shows medians        |
# | BENCH_RANKS   | 4                      | ranks writing                                 |
# | BENCH_MPIS    | crossmpi openmpi mpich | MPIs to run                                   |
# | BENCH_DIR     | /tmp                   | where the file is written                     |
# | BENCH_TIMEOUT | 300                    | seconds before a run is killed ("fail")       |
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
prefix=${1:-$root/build/install}
repeat=${BENCH_REPEAT:-5}
ranks=${BENCH_RANKS:-4}
read -r -a mpis <<<"${BENCH_MPIS:-crossmpi openmpi mpich}"
dir=${BENCH_DIR:-/tmp}
timeout_s=${BENCH_TIMEOUT:-300}
out="$root/build/bench"
mkdir -p "$out/bin"
raw="$out/io-raw.csv"
summary="$out/io-summary.csv"
echo "mpi,pattern,total_bytes,block_bytes,repeat,mib_per_s" >"$raw"
. "$root/bench/lib/launch.sh"

# pattern name, file bytes, block bytes
patterns=("interleaved-64k 268435456 65536" "strided-1k 67108864 1024")

declare -A built
for mpi in "${mpis[@]}"; do
  mkdir -p "$out/bin/$mpi"
  built[$mpi]=1
  if ! "$(mpicc_of "$mpi")" -O2 -Wall -o "$out/bin/$mpi/collwrite" "$root/bench/io/collwrite.c" \
    >"$out/bin/$mpi/collwrite.build.log" 2>&1; then
    echo "bench: building collwrite with $mpi failed (see $out/bin/$mpi/collwrite.build.log)" >&2
    built[$mpi]=0
  fi
done

for ((rep = 1; rep <= repeat; rep++)); do
  for p in "${patterns[@]}"; do
    read -r name total block <<<"$p"
    for mpi in "${mpis[@]}"; do
      echo "bench: repeat $rep/$repeat $name $mpi" >&2
      value=fail
      if [ "${built[$mpi]}" = 1 ]; then
        mapfile -t launch < <(launch_words "$mpi" shm "$ranks")
        file="$dir/crossmpi-bench-io-$$-$mpi"
        line=$(timeout "$timeout_s" "${launch[@]}" "$out/bin/$mpi/collwrite" "$file" "$total" "$block" 2>"$out/io-$mpi.err" |
          grep '^collwrite ')
        [ -n "$line" ] && value=$(echo "$line" | awk '{print $3}')
        rm -f "$file"
      fi
      echo "$mpi,$name,$total,$block,$rep,$value" >>"$raw"
    done
  done
done

python3 - "$raw" "$summary" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cells = {}
for r in rows:
    cells.setdefault((r["pattern"], r["mpi"]), []).append(r["mib_per_s"])
def median(vals):
    nums = [float(v) for v in vals if v != "fail"]
    return statistics.median(nums) if nums else None
patterns = list(dict.fromkeys(r["pattern"] for r in rows))
mpis = list(dict.fromkeys(r["mpi"] for r in rows))
with open(sys.argv[2], "w") as f:
    f.write("pattern,mpi,median_mib_per_s,runs\n")
    for p in patterns:
        for m in mpis:
            v = median(cells.get((p, m), []))
            f.write(f"{p},{m},{'' if v is None else f'{v:.1f}'},{len(cells.get((p, m), []))}\n")
print(f"{'pattern':<18}" + "".join(f"{m:>12}" for m in mpis) + f"{'x/openmpi':>11}{'x/mpich':>9}  target")
for p in patterns:
    meds = {m: median(cells.get((p, m), [])) for m in mpis}
    def show(v): return f"{v:>12.1f}" if v is not None else f"{'fail':>12}"
    def ratio(peer):
        a, b = meds.get("crossmpi"), meds.get(peer)
        return f"{a / b:.2f}" if a and b else "-"
    c, o = meds.get("crossmpi"), meds.get("openmpi")
    target = "met" if c and o and c >= o else "NOT met"
    print(f"{p:<18}" + "".join(show(meds[m]) for m in mpis) + f"{ratio('openmpi'):>11}{ratio('mpich'):>9}  {target}")
print("MiB/s, medians; target: crossmpi at least Open MPI's collective write throughput")
PY
echo "raw: $raw  summary: $summary"
