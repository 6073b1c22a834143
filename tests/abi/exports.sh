#!/usr/bin/env bash
# What the installed library exports, against what crossmpi's mpi.h declares.
#   - fails if PREFIX/lib/libmpi_abi.so.1 is missing, does not carry the soname
#     libmpi_abi.so.1, or if libmpi.so / libmpi_abi.so do not lead to it;
#   - fails if PREFIX/include/mpi.h is not the header of this source tree;
#   - fails if an exported MPI_X has no exported PMPI_X twin (profiling tools interpose on
#     MPI_X and forward to PMPI_X, so a missing twin breaks them);
#   - prints the coverage, "N of M declared MPI_ functions exported", and the missing names:
#     the library grows function by function, so a gap is reported, not failed.
# Usage: tests/abi/exports.sh PREFIX
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 PREFIX" >&2; exit 2; }
prefix=$1
here=$(cd "$(dirname "$0")" && pwd)
header=$here/../../crates/abi/include/mpi.h
lib=$prefix/lib/libmpi_abi.so.1
status=0
fail() { echo "exports: FAIL: $*"; status=1; }

[ -f "$lib" ] || { echo "exports: FAIL: $lib does not exist"; exit 1; }
soname=$(readelf -d "$lib" | sed -n -E 's/.*\(SONAME\).*\[(.*)\].*/\1/p')
[ "$soname" = libmpi_abi.so.1 ] || fail "$lib has soname '${soname:-none}', expected libmpi_abi.so.1"
for link in libmpi.so libmpi_abi.so; do
  if [ ! -L "$prefix/lib/$link" ]; then
    fail "$prefix/lib/$link is not a symbolic link"
  elif [ "$(readlink -f "$prefix/lib/$link")" != "$(readlink -f "$lib")" ]; then
    fail "$prefix/lib/$link points at $(readlink "$prefix/lib/$link"), not at libmpi_abi.so.1"
  fi
done
cmp -s "$header" "$prefix/include/mpi.h" ||
  fail "$prefix/include/mpi.h is missing or differs from crates/abi/include/mpi.h"

declared=$(grep -o -E '^[A-Za-z_][A-Za-z0-9_]* MPI_[A-Za-z0-9_]+\(' "$header" |
  sed -E 's/.* (.*)\(/\1/' | sort -u)
# Defined dynamic symbols that are code: T (text), W (weak), i (indirect function).
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TWi]$/ { print $3 }' | sed 's/@.*//' |
  grep -E '^P?MPI_' | sort -u || true)
exported_mpi=$(grep -E '^MPI_' <<<"$exported" || true)
exported_pmpi=$(grep -E '^PMPI_' <<<"$exported" | sed 's/^P//' || true)

no_twin=$(comm -23 <(echo "$exported_mpi") <(echo "$exported_pmpi") | grep . || true)
[ -z "$no_twin" ] || fail "exported without a PMPI_ twin: $(echo $no_twin)"

total=$(grep -c . <<<"$declared")
covered=$(comm -12 <(echo "$declared") <(echo "$exported_mpi") | grep -c . || true)
missing=$(comm -23 <(echo "$declared") <(echo "$exported_mpi") | grep . || true)
undeclared=$(comm -13 <(echo "$declared") <(echo "$exported_mpi") | grep . || true)
echo "exports: $covered of $total declared MPI_ functions exported"
[ -z "$missing" ] || echo "exports: not yet exported ($((total - covered))): $(echo $missing)"
[ -z "$undeclared" ] || echo "exports: exported but not declared in mpi.h: $(echo $undeclared)"
[ "$status" -eq 0 ] && echo "exports: ok"
exit "$status"
