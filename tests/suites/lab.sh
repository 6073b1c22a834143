#!/usr/bin/env bash
# The crossmpi lab suite (issue 4), run by scripts/test.sh after the install: topology
# files, reachability of each example topology (NAT and firewall included), fidelity
# of rate, delay and loss (the measured table is printed at the end), teardown on
# every exit path, the launch-agent contract of `crossmpi lab exec`, and an 8-rank MPI
# job over two emulated clusters. Needs root. Takes about 2 minutes on 2 cores.
# Usage: tests/suites/lab.sh PREFIX
set -uo pipefail
[ $# -eq 1 ] || { echo "usage: $0 PREFIX" >&2; exit 2; }
prefix=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "lab suite: needs root (network namespaces)" >&2; exit 1; }

need=()
for p in iproute2 nftables iperf3 iputils-ping openvswitch-switch graphviz python3-pytest python3-venv procps util-linux; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ "${#need[@]}" -gt 0 ]; then
  echo "lab suite: installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; } ||
    { echo "lab suite: cannot install ${need[*]}" >&2; exit 1; }
fi

# The delay line: the installed one, else build it.
if [ -x "$prefix/bin/crossmpi-tapdelay" ]; then
  export CROSSMPI_TAPDELAY=$prefix/bin/crossmpi-tapdelay
else
  cargo=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
  (cd "$root" && "$cargo" build --release -q -p crossmpi-tapdelay) || exit 1
  export CROSSMPI_TAPDELAY=${CARGO_TARGET_DIR:-$root/target}/release/crossmpi-tapdelay
fi
[ -d "$prefix/lib/crossmpi/python/crossmpi_lab" ] ||
  echo "lab suite: warning: $prefix/lib/crossmpi/python/crossmpi_lab is missing (scripts/install.sh copies it)" >&2

# os-ken (PyPI) for the OpenFlow controller test, in a venv kept between runs.
venv=${CROSSMPI_LAB_OSKEN_VENV:-/var/tmp/crossmpi-osken-venv}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import os_ken" 2>/dev/null; then
  { /usr/bin/python3 -m venv "$venv" && "$venv/bin/pip" install -q os-ken; } >/dev/null 2>&1 ||
    echo "lab suite: warning: cannot install os-ken from PyPI into $venv; the controller test is skipped" >&2
fi
"$venv/bin/python" -c "import os_ken" 2>/dev/null && export CROSSMPI_LAB_OSKEN_PYTHON=$venv/bin/python

export CROSSMPI_PREFIX=$prefix
cd "$root/lab" || exit 1
timeout 900 /usr/bin/python3 -B -m pytest -q -p no:cacheprovider tests
