# Sourced by the ABI tests: provides `abi_wheel_dir`, which prints the data directory of the
# MPICH 5.0.2 wheel (bin/mpicc_abi, include/mpi_abi.h, lib/libmpi_abi.so.1), fetching it with
# `pip download` into build/abi-wheel/ the first time. MPICH is our reference for the ABI:
# its header gives the values we compare with, its mpicc_abi builds the acceptance program.
abi_wheel_version=5.0.2

abi_wheel_dir() {
  local root cache data wheel
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  cache=$root/build/abi-wheel
  data=$cache/mpich-$abi_wheel_version/mpich-$abi_wheel_version.data/data
  if [ ! -f "$data/include/mpi_abi.h" ]; then
    mkdir -p "$cache"
    wheel=$(ls "$cache"/mpich-"$abi_wheel_version"-*.whl 2>/dev/null | head -n 1)
    if [ -z "$wheel" ]; then
      echo "abi tests: fetching the mpich $abi_wheel_version wheel into $cache" >&2
      pip download --quiet --no-deps --only-binary=:all: -d "$cache" "mpich==$abi_wheel_version" >&2 ||
        { echo "abi tests: pip download mpich==$abi_wheel_version failed" >&2; return 1; }
      wheel=$(ls "$cache"/mpich-"$abi_wheel_version"-*.whl | head -n 1)
    fi
    rm -rf "$cache/mpich-$abi_wheel_version"
    unzip -q -o "$wheel" -d "$cache/mpich-$abi_wheel_version" >&2 ||
      { echo "abi tests: cannot unzip $wheel" >&2; return 1; }
  fi
  # Unzipping drops the execute bits of bin/.
  chmod +x "$data"/bin/*
  echo "$data"
}
