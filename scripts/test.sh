#!/usr/bin/env bash
# The whole test suite: style and lints, Rust unit and integration tests, the C/Fortran
# MPI test programs (shared memory and TCP-only), the IMPI fuzzers (bounded time), and
# crossmpi lab's fidelity tests. Called by `make test` after the install step.
# Each suite runs even if an earlier one failed; the last line counts the suites.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-$root/build/install}
export PATH="$prefix/bin:$HOME/.cargo/bin:$PATH"
cd "$root"
passed=0; failed=0; failed_names=()
suite() {
  local name=$1; shift
  echo "=== suite $name: $*"
  local t0=$SECONDS
  if "$@"; then passed=$((passed+1)); echo "=== suite $name: ok ($((SECONDS-t0)) s)"
  else failed=$((failed+1)); failed_names+=("$name"); echo "=== suite $name: FAILED ($((SECONDS-t0)) s)"; fi
}
suite fmt cargo fmt --all -- --check
suite clippy cargo clippy --release --workspace --all-targets -q -- -D warnings
suite rust cargo test --release --workspace -q
for s in tests/suites/*.sh; do
  [ -e "$s" ] || continue
  suite "$(basename "$s" .sh)" bash "$s" "$prefix"
done
[ "$failed" -eq 0 ] || echo "failed suites: ${failed_names[*]}"
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
