#!/usr/bin/env bash
# Builds and runs crossmpi's Fortran test programs (tests/fortran/*.f90 and *.f).
#
#   tests/fortran/run.sh PREFIX [shm] [tcp]          against crossmpi installed in PREFIX
#   tests/fortran/run.sh --peer openmpi [shm] [tcp]  the same programs with Open MPI
#
# Default modes: shm tcp (tcp = CROSSMPI_TRANSPORT=tcp, or Open MPI's tcp btl).
# FORTRAN_TESTS="p2p comm" runs only those; FORTRAN_TEST_TIMEOUT (default 120 s) bounds
# each run. Header comments of a program (lines starting with "! name:"):
#   ranks: 1 2 4          rank counts to run it with (required)
#   fflags: -std=legacy   extra compiler flags
#   with: helper.c        C sources linked in (built with the matching mpicc)
#   requires: MPI_X ...   C functions the program needs; while the library under test
#                         does not export one (or crossmpi's mpi.h does not declare it),
#                         the program is reported as SKIP (against crossmpi, it is then
#                         still compiled against the bindings of all of mpi.h)
# Against crossmpi, the run starts by generating the bindings for every function mpi.h
# declares (not only those the library exports yet) and compiling them, so a function
# added to the C library later gets Fortran bindings that compile, and by calling the
# callback trampolines and string conversions of fortran/support.f90 from C
# (tests/fortran/unit), which the wrappers of functions not exported yet rely on.
# With --peer, programs run with CROSSMPI_TEST_PEER=1 (as tests/mpi/run.sh does), so
# they can accept what a peer leaves out and still require it of crossmpi.
# checks.f90 (module `checks`) is compiled into every program. A program passes when it
# exits 0 and prints "OK NAME". Output: one line per run (PASS, FAIL or SKIP), then
# "N passed, N failed, N skipped"; the exit status is 0 when nothing failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
usage() { echo "usage: $0 PREFIX [shm|tcp ...] | $0 --peer openmpi [shm|tcp ...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
if [ "$1" = --peer ]; then
  [ "${2:-}" = openmpi ] || usage
  shift 2
  peer=openmpi fc=mpif90.openmpi cc=mpicc.openmpi
  export CROSSMPI_TEST_PEER=1
  launch=(mpirun.openmpi --allow-run-as-root --oversubscribe)
  build="$root/build/tests/fortran/openmpi"
  exported=$(nm -D --defined-only "$(mpicc.openmpi --showme:libdirs)/libmpi.so" 2>/dev/null | awk '{print $3}')
else
  prefix=$(cd "$1" 2>/dev/null && pwd) || { echo "$0: PREFIX '$1' does not exist" >&2; exit 2; }
  shift
  peer="" fc="$prefix/bin/mpifort" cc="$prefix/bin/mpicc"
  launch=("$prefix/bin/mpirun" --oversubscribe)
  build="$root/build/tests/fortran/crossmpi"
  exported=$(nm -D --defined-only "$prefix/lib/libmpi_abi.so.1" 2>/dev/null | awk '{print $3}')
fi
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(shm tcp)
for m in "${modes[@]}"; do [ "$m" = shm ] || [ "$m" = tcp ] || usage; done
timeout_s=${FORTRAN_TEST_TIMEOUT:-120}
rm -rf "$build" && mkdir -p "$build"
passed=0 failed=0 skipped=0

field() { sed -n "s|^! $2: *||p" "$1" | head -n 1; }
fail() { failed=$((failed + 1)); printf 'FAIL %s: %s\n' "$1" "$2"; [ -f "${3:-}" ] && tail -n 12 "$3" | sed 's/^/    | /'; }

if [ -z "$peer" ]; then
  full="$build/full-header" gen="${CARGO_TARGET_DIR:-$root/target}/release/crossmpi-fortran-gen"
  mkdir -p "$full"
  sed -n 's/^[a-zA-Z_ ]*[ *]\(P\{0,1\}MPI_[A-Za-z0-9_]*\)(.*/\1/p' "$root/crates/abi/include/mpi.h" >"$full/symbols.txt"
  if (cd "$root" && cargo build --release -q -p crossmpi-fortran-gen) >"$full/log" 2>&1 &&
     "$gen" "$root/crates/abi/include/mpi.h" "$full/symbols.txt" "$full" >>"$full/log" 2>&1 &&
     (cd "$full" && for f in "$root/fortran/support.f90" "$root/fortran/sizeof.f90" wrappers.f90 mpi.f90 mpi_f08.f90; do
        gfortran -fsyntax-only -I "$root/fortran" "$f" || exit 1; done) >>"$full/log" 2>&1; then
    passed=$((passed + 1)); printf 'PASS bindings for all of mpi.h compile (%s)\n' "$(grep -o '[0-9]* wrappers' "$full/log")"
  else
    fail "bindings for all of mpi.h" "generation or gfortran failed" "$full/log"
  fi
  # The trampolines and string arrays of fortran/support.f90, called from C the way the
  # C library calls them (tests/fortran/unit), also for functions crossmpi lacks yet.
  unit="$build/unit"
  mkdir -p "$unit"
  if (cd "$unit" && gfortran -frecursive -c "$root/fortran/support.f90" &&
      cc -c -I "$root/crates/abi/include" "$here/unit/c_caller.c" &&
      gfortran -o trampolines "$here/unit/trampolines.f90" support.o c_caller.o \
        -L"$prefix/lib" -lmpi -Wl,-rpath,"$prefix/lib" && ./trampolines) >"$unit/log" 2>&1 &&
     grep -qx "OK trampolines" "$unit/log"; then
    passed=$((passed + 1)); printf 'PASS trampolines called from C\n'
  else
    fail "trampolines called from C" "build or checks failed" "$unit/log"
  fi
fi

# The checks module first, so every program can `use checks`.
if ! (cd "$build" && "$fc" -c "$here/checks.f90" -o checks.o) >"$build/checks.log" 2>&1; then
  fail "checks.f90 build" "$fc failed" "$build/checks.log"
  echo "$passed passed, $failed failed, $skipped skipped"; exit 1
fi

for src in "$here"/*.f90 "$here"/*.f; do
  name=$(basename "${src%.*}")
  [ "$name" = checks ] && continue
  if [ -n "${FORTRAN_TESTS:-}" ] && [[ " $FORTRAN_TESTS " != *" $name "* ]]; then continue; fi
  ranks=$(field "$src" ranks)
  [ -n "$ranks" ] || { fail "$name" "no '! ranks:' header"; continue; }
  missing=""
  for sym in $(field "$src" requires); do
    grep -qx "$sym" <<<"$exported" || missing="$missing $sym"
    [ -n "$peer" ] || grep -qw "$sym" "$prefix/include/mpi.h" "$prefix/include/mpi_compat.h" || missing="$missing $sym"
  done
  if [ -n "$missing" ]; then
    skipped=$((skipped + 1)); printf 'SKIP %s: the library or its headers lack%s\n' "$name" "$missing"
    # It must still compile against the bindings of all of mpi.h.
    if [ -z "$peer" ] && [ -f "$full/mpi.mod" ]; then
      mkdir -p "$full/programs"
      # shellcheck disable=SC2046 # fflags are words
      if (cd "$build" && gfortran -fsyntax-only $(field "$src" fflags) -I "$full" -J "$full/programs" \
            "$src") >"$build/$name.syntax.log" 2>&1; then
        passed=$((passed + 1)); printf 'PASS %s compiles against the bindings of all of mpi.h\n' "$name"
      else
        fail "$name against all of mpi.h" "gfortran -fsyntax-only failed" "$build/$name.syntax.log"
      fi
    fi
    continue
  fi
  log="$build/$name.build.log" objs=()
  for helper in $(field "$src" with); do
    obj="$build/$name.$(basename "$helper" .c).o"
    "$cc" -c "$here/$helper" -o "$obj" >>"$log" 2>&1 || { fail "$name build" "$cc $helper failed" "$log"; continue 2; }
    objs+=("$obj")
  done
  # shellcheck disable=SC2046 # fflags are words
  if ! (cd "$build" && "$fc" $(field "$src" fflags) -o "$name" "$src" checks.o "${objs[@]}") >>"$log" 2>&1; then
    fail "$name build" "$fc failed" "$log"; continue
  fi
  for mode in "${modes[@]}"; do
    env=() extra=()
    if [ "$mode" = tcp ]; then
      if [ -n "$peer" ]; then extra=(--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo)
      else env=(CROSSMPI_TRANSPORT=tcp); fi
    fi
    for n in $ranks; do
      out="$build/$name.n$n.$mode.out"
      env "${env[@]}" timeout -k 5 "$timeout_s" "${launch[@]}" "${extra[@]}" -n "$n" "$build/$name" >"$out" 2>&1 </dev/null
      rc=$?
      if [ "$rc" -eq 0 ] && grep -qx "OK $name" "$out"; then
        passed=$((passed + 1)); printf 'PASS %s n=%s %s\n' "$name" "$n" "$mode"
      else
        fail "$name n=$n $mode" "exit $rc$([ "$rc" -eq 124 ] && echo ", timed out after $timeout_s s"), log $out" "$out"
      fi
    done
  done
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
