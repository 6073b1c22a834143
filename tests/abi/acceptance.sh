#!/usr/bin/env bash
# Acceptance test of issue 2: a program built with another implementation's ABI compiler
# wrapper (MPICH 5.0.2's mpicc_abi, from its PyPI wheel) runs unmodified under crossmpi's
# mpirun with crossmpi's libmpi_abi.so.1.
#   1. build tests/abi/abi_hello.c with the wheel's mpicc_abi (against MPICH's mpi_abi.h);
#   2. check with readelf that the binary needs libmpi_abi.so.1 (the ABI soname);
#   3. run it with PREFIX/bin/mpirun -n 4 (which puts PREFIX/lib first on the ranks'
#      LD_LIBRARY_PATH), and require a zero exit, "ok" from all four ranks, and a library
#      version string starting with LIBRARY (default "crossmpi"): proof that the library
#      loaded was crossmpi's and not the wheel's (the binary's RUNPATH names the wheel).
# Usage: tests/abi/acceptance.sh PREFIX [LIBRARY]
# LIBRARY exists to validate this script against another implementation: with PREFIX/bin/mpirun
# wrapping that implementation's launcher, LIBRARY is the start of its version string.
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 PREFIX [LIBRARY]" >&2; exit 2; }
prefix=$(cd "$1" && pwd)
library=${2:-crossmpi}
ranks=4
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$here/wheel.sh"
wheel=$(abi_wheel_dir)
work=$root/build/abi-acceptance
rm -rf "$work" && mkdir -p "$work"

# 1. Build with the wheel's wrapper. MPICH_CC picks the C compiler the wrapper runs.
MPICH_CC=${CC:-gcc} "$wheel/bin/mpicc_abi" -o "$work/abi_hello" "$here/abi_hello.c"

# 2. The binary must ask for the ABI library by its soname.
needed=$(readelf -d "$work/abi_hello" | sed -n -E 's/.*\(NEEDED\).*\[(.*)\].*/\1/p')
grep -qx 'libmpi_abi.so.1' <<<"$needed" || {
  echo "acceptance: FAIL: abi_hello does not need libmpi_abi.so.1 (needs: $(echo $needed))"
  exit 1
}

# 3. Run it under the launcher of PREFIX.
set +e
timeout 120 "$prefix/bin/mpirun" -n "$ranks" "$work/abi_hello" >"$work/out" 2>"$work/err"
code=$?
set -e
cat "$work/out"
status=0
fail() { echo "acceptance: FAIL: $*"; status=1; }
[ "$code" -eq 0 ] || { fail "mpirun exited with $code; its stderr:"; cat "$work/err"; }
oks=$(grep -c -E "^abi_hello: rank [0-9]+ of $ranks ok$" "$work/out" || true)
[ "$oks" -eq "$ranks" ] || fail "$oks of $ranks ranks reported ok"
loaded=$(sed -n 's/^abi_hello: library: //p' "$work/out")
case "$loaded" in
  "$library"*) ;;
  *) fail "the library loaded reports '${loaded:-nothing}', expected it to start with '$library'" ;;
esac
[ "$status" -eq 0 ] && echo "acceptance: ok (mpicc_abi binary ran on $ranks ranks with: $loaded)"
exit "$status"
