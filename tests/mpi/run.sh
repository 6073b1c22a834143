#!/usr/bin/env bash
# Builds and runs crossmpi's C MPI test programs (tests/mpi/*.c).
#
#   tests/mpi/run.sh PREFIX [MODE...]          against crossmpi installed in PREFIX
#   tests/mpi/run.sh --peer openmpi [MODE...]  validation against Debian's Open MPI
#
# MODE is shm (default environment), tcp (TCP only) or impi (every run split into 1-3
# clusters joined by an IMPI server on loopback: tests/mpi/impi-run.sh); default: shm tcp.
# MPI_TESTS="probe cancel" runs only those programs; MPI_TEST_TIMEOUT (default 120 s)
# bounds every run.
#
# Each program declares how to run it in header comments:
#   // ranks: 1 2 4                        the rank counts to run it with
#   // args: A B                           run once per argument (default: no argument)
#   // expect: exit=7 within=2 output~"rank 1"
#                                          exit=N | exit=nonzero (default exit=0 and an
#                                          "OK <name>" line), within=SECONDS for the whole
#                                          job, output~"REGEX" (extended regex over stdout
#                                          and stderr, repeatable)
#   // expect-crossmpi: output~"dest"      further expectations on crossmpi only
#   // impi: skip REASON                   not run in impi mode (REASON says why)
#   // lab: skip REASON                    not run across the lab's hosts (its ranks must
#                                          share one host; lab/tests/test_impi_grid.py),
#                                          run here in every mode
# A program exits 77 when the MPI lacks a feature of a newer standard; that counts as
# skipped in peer mode only (crossmpi implements MPI 5.0, so there it is a failure).
# Output: one line per run, then exactly "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

usage() { echo "usage: $0 PREFIX [shm|tcp ...] | $0 --peer openmpi [shm|tcp ...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
peer=""
if [ "$1" = "--peer" ]; then
  [ "${2:-}" = openmpi ] || usage
  peer=openmpi; shift 2
  mpicc=mpicc.openmpi
  launch=(mpirun.openmpi --allow-run-as-root --oversubscribe -x CROSSMPI_TEST_PEER)
  export CROSSMPI_TEST_PEER=1
  build="$root/build/tests/mpi/openmpi"
else
  prefix=$(cd "$1" 2>/dev/null && pwd) || { echo "$0: PREFIX '$1' does not exist" >&2; exit 2; }
  shift
  mpicc="$prefix/bin/mpicc"
  launch=("$prefix/bin/mpirun" --oversubscribe)
  unset CROSSMPI_TEST_PEER
  build="$root/build/tests/mpi/crossmpi"
fi
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(shm tcp)
for m in "${modes[@]}"; do
  [ "$m" = shm ] || [ "$m" = tcp ] || { [ "$m" = impi ] && [ -z "$peer" ]; } || usage
done
timeout_s=${MPI_TEST_TIMEOUT:-120}
mkdir -p "$build"

passed=0; failed=0; skipped=0

report() { # STATUS LABEL [DETAIL]
  printf '%-4s %s%s\n' "$1" "$2" "${3:+: $3}"
}

# Prints the value of header field NAME of a source file (first occurrence).
field() { sed -n "s|^// $2: *||p" "$1" | head -n 1; }

# Checks one run's expectations; prints the reason of the first unmet one.
unmet() { # SPEC RC ELAPSED OUTFILE
  local spec=$1 rc=$2 elapsed=$3 out=$4 rest tok
  rest=$spec
  while [[ $rest =~ ^[[:space:]]*([a-z]+)(=|~)(\"[^\"]*\"|[^[:space:]]+)(.*)$ ]]; do
    local key=${BASH_REMATCH[1]} op=${BASH_REMATCH[2]} val=${BASH_REMATCH[3]}
    rest=${BASH_REMATCH[4]}
    val=${val#\"}; val=${val%\"}
    case "$key$op" in
      exit=) if [ "$val" = nonzero ]; then [ "$rc" -ne 0 ] || { echo "exit status 0, expected non-zero"; return; }
             else [ "$rc" -eq "$val" ] || { echo "exit status $rc, expected $val"; return; }; fi ;;
      within=) awk -v e="$elapsed" -v w="$val" 'BEGIN{exit !(e <= w)}' || { echo "took $elapsed s, expected at most $val s"; return; } ;;
      output~) grep -Eq -- "$val" "$out" || { echo "output lacks /$val/"; return; } ;;
      *) echo "bad expectation '$key$op$val' in header"; return ;;
    esac
  done
  [[ $rest =~ ^[[:space:]]*$ ]] || echo "cannot parse expectation '$rest'"
}

run_one() { # NAME BINARY RANKS MODE ARG SPEC
  local name=$1 bin=$2 n=$3 mode=$4 arg=$5 spec=$6
  local label="$name n=$n $mode${arg:+ $arg}" out="$build/$name.n$n.$mode${arg:+.$arg}.out"
  local extra=() env=()
  if [ "$mode" = tcp ]; then
    if [ -n "$peer" ]; then extra=(--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo)
    else env=(CROSSMPI_TRANSPORT=tcp); fi
  fi
  local run=("${launch[@]}")
  [ "$mode" = impi ] && run=("$here/impi-run.sh" "$prefix")
  local t0=$EPOCHREALTIME rc
  env "${env[@]}" timeout -k 5 "$timeout_s" "${run[@]}" "${extra[@]}" -n "$n" "$bin" ${arg:+"$arg"} >"$out" 2>&1 </dev/null
  rc=$?
  local elapsed
  elapsed=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.2f", b - a}')
  local why=""
  if [ "$rc" -eq 124 ] || awk -v e="$elapsed" -v t="$timeout_s" 'BEGIN{exit !(e >= t)}'; then
    why="timed out after $timeout_s s"
  elif [ "$rc" -eq 77 ] && grep -q "^SKIP" "$out"; then
    if [ -n "$peer" ]; then skipped=$((skipped+1)); report SKIP "$label" "$(grep -m1 '^SKIP' "$out")"; return; fi
    why="skipped a feature crossmpi must have: $(grep -m1 '^SKIP' "$out")"
  else why=$(unmet "$spec" "$rc" "$elapsed" "$out"); fi
  if [ -z "$why" ]; then
    passed=$((passed+1)); report PASS "$label" "$elapsed s"
  else
    failed=$((failed+1)); report FAIL "$label" "$why ($elapsed s, exit $rc, log $out)"
    grep -v '^\s*$' "$out" | tail -n 15 | sed 's/^/    | /'
  fi
}

for src in "$here"/*.c; do
  name=$(basename "$src" .c)
  if [ -n "${MPI_TESTS:-}" ] && [[ " $MPI_TESTS " != *" $name "* ]]; then continue; fi
  ranks=$(field "$src" ranks)
  if [ -z "$ranks" ]; then failed=$((failed+1)); report FAIL "$name" "no '// ranks:' header"; continue; fi
  spec=$(field "$src" expect)
  [ -n "$spec" ] || spec="exit=0 output~\"^OK $name\$\""
  [ -n "$peer" ] || spec="$spec $(field "$src" expect-crossmpi)"
  read -r -a args <<<"$(field "$src" args)"
  [ ${#args[@]} -gt 0 ] || args=("")
  if ! "$mpicc" -O2 -Wall -o "$build/$name" "$src" >"$build/$name.build.log" 2>&1; then
    failed=$((failed+1)); report FAIL "$name build" "$mpicc failed"
    tail -n 15 "$build/$name.build.log" | sed 's/^/    | /'
    continue
  fi
  for mode in "${modes[@]}"; do
    if [ "$mode" = impi ] && [ -n "$(field "$src" impi)" ]; then
      report SKIP "$name impi" "$(field "$src" impi)"; continue
    fi
    for n in $ranks; do
      for arg in "${args[@]}"; do run_one "$name" "$build/$name" "$n" "$mode" "$arg" "$spec"; done
    done
  done
done
[ "$skipped" -eq 0 ] || echo "($skipped skipped: features of a newer MPI standard than the peer's)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
