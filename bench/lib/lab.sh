# Shared by the benchmarks that run in crossmpi lab (source it with $root, $prefix and
# $bench set, e.g. bench=impi): the output folders build/bench/$bench and its bin/, the
# load before the run, the peers' packages, the delay line and prefix crossmpi lab uses,
# and `build`.
out=$root/build/bench/$bench
bin=$out/bin
mkdir -p "$bin"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# The Open MPI peer (part (b) of bench/impi) and the plots come from Debian's packages:
# a fresh machine lacks them, and the peer's cells would all read "fail".
# shellcheck source=bench/lib/launch.sh
source "$root/bench/lib/launch.sh"

# Every emulated host, front-end and relay of the lab shares this machine's cores, but a
# rank counts only the ranks it can see as its machine's (those of its own namespace):
# with 20 us of polling before yielding, a rank held the core that a rank of another
# emulated host or a relay needed (a relay hop 35 us instead of 7, docs/impi-relay.md,
# "Measured"). So ranks yield from their first idle poll, as crossmpi does by itself
# when it sees more ranks than cores, and Open MPI gets its equivalent
# (mpi_yield_when_idle, bench/impi/gridjob.py).
export CROSSMPI_YIELD_US=${CROSSMPI_YIELD_US:-0}

# The delay line: the installed one, else the one crossmpi lab finds itself.
[ -x "$prefix/bin/crossmpi-tapdelay" ] && export CROSSMPI_TAPDELAY=$prefix/bin/crossmpi-tapdelay
export CROSSMPI_PREFIX=$prefix

# build LOG COMMAND...: runs a build step; a failure is reported and the benchmark goes
# on (its runs are then recorded as fail).
build() {
  local log=$1; shift
  "$@" >"$log" 2>&1 || echo "bench/$bench: $* failed (see $log); its runs are recorded as fail" >&2
}
