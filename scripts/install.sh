#!/usr/bin/env bash
# Installs a release build into PREFIX (default: build/install): bin/ holds the
# multi-call `crossmpi` binary and its names (mpicc, mpicxx, mpirun, mpiexec,
# impi-server, impi-relay), lib/ the MPI library as libmpi_abi.so.1 with libmpi.so and
# libmpi_abi.so pointing at it, include/ mpi.h. Adding PREFIX/bin to PATH is all a
# user needs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-${PREFIX:-$root/build/install}}
target=${CARGO_TARGET_DIR:-$root/target}/release
mkdir -p "$prefix/bin" "$prefix/lib" "$prefix/include"
install -m 755 "$target/crossmpi" "$prefix/bin/crossmpi"
for name in mpicc mpicxx mpic++ mpirun mpiexec impi-server impi-relay; do
  ln -sf crossmpi "$prefix/bin/$name"
done
[ -x "$target/crossmpi-tapdelay" ] && install -m 755 "$target/crossmpi-tapdelay" "$prefix/bin/"
install -m 755 "$target/libmpi_abi.so" "$prefix/lib/libmpi_abi.so.1"
ln -sf libmpi_abi.so.1 "$prefix/lib/libmpi_abi.so"
ln -sf libmpi_abi.so.1 "$prefix/lib/libmpi.so"
install -m 644 "$root/crates/abi/include/mpi.h" "$root/crates/abi/include/mpi_compat.h" "$prefix/include/"
echo "installed crossmpi into $prefix"
# crossmpi lab: the Python package that `crossmpi lab` runs (with Debian's python3).
mkdir -p "$prefix/lib/crossmpi/python"
rm -rf "$prefix/lib/crossmpi/python/crossmpi_lab"
cp -r "$root/lab/crossmpi_lab" "$prefix/lib/crossmpi/python/"
find "$prefix/lib/crossmpi/python/crossmpi_lab" -name __pycache__ -prune -exec rm -rf {} +
# Fortran bindings: mpif.h, the mpi module and libmpifort.so, generated from mpi.h for
# the functions the installed library exports and compiled with gfortran, and the
# mpifort/mpif90/mpif77 names (docs/fortran.md).
"$root/fortran/build.sh" "$prefix"
