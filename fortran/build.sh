#!/usr/bin/env bash
# Builds and installs crossmpi's Fortran bindings into PREFIX, where the C library is
# already installed (scripts/install.sh calls this after installing it):
#   PREFIX/lib/libmpifort.so     the mpi_*_ procedures (generated wrappers, the predefined
#                                callbacks of support.f90, and mpi1_removed.f90)
#   PREFIX/include/mpif.h        constants for `include 'mpif.h'`
#   PREFIX/lib/fortran/mpi.mod, mpi_f08.mod   the `mpi` and `mpi_f08` modules
#   PREFIX/bin/mpifort, mpif90, mpif77 -> crossmpi
# The wrappers are generated from mpi.h for exactly the functions the installed
# libmpi_abi.so.1 exports (by crossmpi-fortran-gen, which this script builds).
# Environment: FC (default gfortran), CARGO_TARGET_DIR (where the generator is built).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
prefix=$(cd "${1:?usage: fortran/build.sh PREFIX}" && pwd)
fc=${FC:-gfortran}
target=${CARGO_TARGET_DIR:-$root/target}
gen="$target/release/crossmpi-fortran-gen"
if ! command -v "$fc" >/dev/null; then
  echo "fortran/build.sh: no Fortran compiler '$fc'; Fortran bindings not installed" >&2
  exit 0
fi
# cargo rebuilds the generator only when its sources changed.
(cd "$root" && cargo build --release -q -p crossmpi-fortran-gen)
work="$target/fortran"
rm -rf "$work" && mkdir -p "$work"
nm -D --defined-only "$prefix/lib/libmpi_abi.so.1" | awk '$2 == "T" { print $3 }' > "$work/symbols.txt"
"$gen" "$root/crates/abi/include/mpi.h" "$work/symbols.txt" "$work"
# -frecursive keeps every local of a wrapper on the stack, so wrappers are reentrant
# under MPI_THREAD_MULTIPLE.
flags=(-O2 -fPIC -frecursive -J "$work" -I "$here")
for src in "$here/support.f90" "$here/sizeof.f90" "$work/wrappers.f90" "$work/mpi.f90" \
  "$work/mpi_f08.f90" "$here/mpi1_removed.f90"; do
  "$fc" "${flags[@]}" -c "$src" -o "$work/$(basename "$src" .f90).o"
done
# The predefined attribute callbacks take the object handle as an opaque INTEGER, so the
# datatype and window names are aliases of the communicator ones; the MPI-1 null ones
# touch no value, so they are aliases too. MPI_CONVERSION_FN_NULL_C is recognised by
# address like MPI_CONVERSION_FN_NULL. The MPI-1 MPI_ERRHANDLER_CREATE/GET/SET take the
# arguments of their MPI-2 communicator successors (fortran/mpi1_removed.f90 has the
# other removed calls).
aliases=(-Wl,--defsym=mpi_null_copy_fn_=mpi_comm_null_copy_fn_
  -Wl,--defsym=mpi_null_delete_fn_=mpi_comm_null_delete_fn_
  -Wl,--defsym=mpi_conversion_fn_null_c_=mpi_conversion_fn_null_
  -Wl,--defsym=mpi_errhandler_create_=mpi_comm_create_errhandler_
  -Wl,--defsym=mpi_errhandler_get_=mpi_comm_get_errhandler_
  -Wl,--defsym=mpi_errhandler_set_=mpi_comm_set_errhandler_)
for role in null_copy_fn dup_fn null_delete_fn; do
  for kind in type win; do aliases+=("-Wl,--defsym=mpi_${kind}_${role}_=mpi_comm_${role}_"); done
done
# f08_aliases.ld (generated) names the wrappers also by mpi_f08's specific names.
"$fc" -shared -o "$work/libmpifort.so" "$work"/*.o "${aliases[@]}" "$work/f08_aliases.ld" \
  -L"$prefix/lib" -lmpi -Wl,-rpath,"$prefix/lib"
mkdir -p "$prefix/lib/fortran" "$prefix/include" "$prefix/bin"
install -m 755 "$work/libmpifort.so" "$prefix/lib/libmpifort.so"
install -m 644 "$work/mpif.h" "$prefix/include/mpif.h"
install -m 644 "$work/mpi.mod" "$work/mpi_f08.mod" "$work/crossmpi_sizeof.mod" "$prefix/lib/fortran/"
install -m 644 "$work/skipped.txt" "$prefix/lib/fortran/skipped.txt"
for name in mpifort mpif90 mpif77; do
  ln -sf crossmpi "$prefix/bin/$name"
done
echo "installed Fortran bindings into $prefix"
