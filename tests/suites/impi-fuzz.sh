#!/usr/bin/env bash
# The IMPI fuzzers (crossmpi-impi's and the relay's, crates/daemons/impi-relay/fuzz):
# each cargo-fuzz target runs for ${CROSSMPI_FUZZ_SECONDS:-60}
# seconds on the stable toolchain (`-s none`: coverage-guided libFuzzer without a
# sanitizer, which would need nightly; Rust's own bounds and overflow checks stay on).
# The corpus each run grows is kept in FUZZ_DIR/corpus/TARGET (not committed) and starts
# from the committed seeds in FUZZ_DIR/seeds/TARGET.
# Installs cargo-fuzz from crates.io when missing. Exits non-zero on any crash, leak,
# timeout or out-of-memory; libFuzzer leaves the input in fuzz/artifacts/TARGET.
# $1 (the install prefix) is not used.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
secs=${CROSSMPI_FUZZ_SECONDS:-60}
export PATH="$HOME/.cargo/bin:$PATH"
# rust-toolchain overrides elsewhere must not switch this to a nightly that may be absent.
toolchain=+stable
command -v rustup >/dev/null 2>&1 || toolchain=

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "impi-fuzz: installing cargo-fuzz from crates.io"
  cargo install cargo-fuzz --locked --quiet
fi
# A short link step needs a C++ compiler for libFuzzer (build-essential, see scripts/deps.sh).
command -v c++ >/dev/null 2>&1 || { echo "impi-fuzz: no C++ compiler (install build-essential)"; exit 1; }

status=0
for fuzz in "$root/crates/transport/impi/fuzz" "$root/crates/daemons/impi-relay/fuzz"; do
cd "$fuzz"
targets=$(cargo $toolchain fuzz list)
[ -n "$targets" ] || { echo "impi-fuzz: cargo fuzz list found no targets in $fuzz"; exit 1; }
for target in $targets; do
  mkdir -p "corpus/$target"
  echo "impi-fuzz: $target for $secs s"
  log=$(mktemp)
  # -rss_limit_mb bounds memory: a decoder that allocated from an unchecked length dies here.
  if cargo $toolchain fuzz run -s none "$target" "corpus/$target" "seeds/$target" -- \
      -max_total_time="$secs" -rss_limit_mb=1024 -max_len=65536 -timeout=10 \
      -print_final_stats=1 >"$log" 2>&1; then
    runs=$(grep -m1 '^stat::number_of_executed_units' "$log" | awk '{print $2}')
    rate=$(grep -m1 '^stat::average_exec_per_sec' "$log" | awk '{print $2}')
    files=$(find "corpus/$target" -type f | wc -l)
    echo "impi-fuzz: $target ok: ${runs:-?} runs in $secs s (${rate:-?} exec/s), corpus $files files"
  else
    echo "impi-fuzz: $target FAILED; last lines:"
    tail -n 40 "$log"
    status=1
  fi
  rm -f "$log"
done
done
exit $status
