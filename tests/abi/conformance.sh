#!/usr/bin/env bash
# ABI conformance of crossmpi's mpi.h against the MPICH 5.0.2 wheel's mpi_abi.h (a second,
# independent implementation of the MPI 5.0 standard ABI):
#   1. our header compiles cleanly as C99 (-Wall -Wextra -pedantic), as C++11, and with
#      clang when it is installed;
#   2. every constant and predefined handle our header defines has the same value under both
#      headers, and MPI_Status, MPI_Aint, MPI_Count, MPI_Offset and the handle types have
#      the same sizes, offsets and signedness (one probe program compiled twice, outputs
#      diffed); the two headers define the same set of standard names;
#   3. every function our header declares (MPI_ and PMPI_) has exactly the wheel's signature:
#      the wheel's function is assigned to a pointer typed from our prototype, and any
#      difference is an incompatible-pointer-types error.
# Usage: tests/abi/conformance.sh   (needs gcc, g++, pip or a cached wheel in build/)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ours=$root/crates/abi/include
source "$here/wheel.sh"
wheel=$(abi_wheel_dir)
theirs=$wheel/include
work=$root/build/abi-conformance
rm -rf "$work" && mkdir -p "$work"
status=0
fail() { echo "conformance: FAIL: $*"; status=1; }

# --- 1. the header compiles cleanly in the languages and modes programs use --------------
# The program calls MPI_Send so that, compiled as C++, its object file shows whether the
# extern "C" guard kept the symbol name unmangled.
printf '%s\n' '#include <mpi.h>' \
  'int main(void) { int x = 0; return MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD); }' \
  >"$work/hygiene.c"
cp "$work/hygiene.c" "$work/hygiene.cpp"
gcc -std=c99 -Wall -Wextra -pedantic -Werror -I"$ours" -fsyntax-only "$work/hygiene.c" ||
  fail "mpi.h does not compile cleanly with gcc -std=c99 -Wall -Wextra -pedantic"
if g++ -std=c++11 -Wall -Wextra -pedantic -Werror -I"$ours" -c -o "$work/hygiene.o" \
  "$work/hygiene.cpp"; then
  nm "$work/hygiene.o" | grep -q -E ' U MPI_Send$' ||
    fail "C++ code refers to MPI_Send by a mangled name: the extern \"C\" guard does not work"
else
  fail "mpi.h does not compile cleanly with g++ -std=c++11"
fi
# Debian installs clang under versioned names (clang-14) unless the `clang` package is added.
clang=$(compgen -c clang | grep -E '^clang(-[0-9]+)?$' | sort | head -n 1 || true)
if [ -n "$clang" ]; then
  "$clang" -std=c99 -Wall -Wextra -pedantic -Werror -I"$ours" -fsyntax-only "$work/hygiene.c" ||
    fail "mpi.h does not compile cleanly with $clang -std=c99"
  "$clang" -x c++ -std=c++11 -Wall -Wextra -pedantic -Werror -I"$ours" -fsyntax-only \
    "$work/hygiene.cpp" || fail "mpi.h does not compile cleanly with $clang -x c++ -std=c++11"
  echo "conformance: mpi.h compiles cleanly with gcc, g++ and $clang"
else
  echo "conformance: clang not installed, clang check skipped"
fi

# --- 2. constants, handles, layouts --------------------------------------------------------
# Names of object-like macros with a value, and of enum members, in a header. Only the
# standard's names count: crossmpi's identification macros and MPICH's MPIX_ extensions
# have no counterpart in the other header, and a macro the header #undefs again (MPICH's
# type-width hooks) is not a constant programs can see.
constant_names() {
  local undefined
  undefined=$(sed -n -E 's/^#undef[[:space:]]+([A-Za-z0-9_]+).*/\1/p' "$1" | sort -u)
  sed -n -E \
    -e 's/^#define[[:space:]]+(P?MPIX?_[A-Za-z0-9_]+)[[:space:]]+[^[:space:]].*/\1/p' \
    -e 's/^[[:space:]]+(MPIX?_[A-Za-z0-9_]+)[[:space:]]*=.*/\1/p' "$1" |
    grep -v -E '^MPIX_' | sort -u | comm -23 - <(echo "$undefined")
}
constant_names "$ours/mpi.h" >"$work/names.ours"
constant_names "$theirs/mpi_abi.h" >"$work/names.theirs"
only_ours=$(comm -23 "$work/names.ours" "$work/names.theirs" | tr '\n' ' ')
only_theirs=$(comm -13 "$work/names.ours" "$work/names.theirs" | tr '\n' ' ')
[ -z "$only_ours" ] || fail "constants only in our header: $only_ours"
[ -z "$only_theirs" ] || fail "constants only in the wheel's header: $only_theirs"

{
  cat <<'EOF'
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <mpi.h>
/* Every constant is printed as an integer: handles and pointer constants through intptr_t. */
#define VALUE(name) printf("%s=%lld\n", #name, (long long)(intptr_t)(name))
#define SIZE(type) printf("sizeof(%s)=%zu\n", #type, sizeof(type))
#define OFFSET(field) printf("offsetof(MPI_Status, %s)=%zu\n", #field, offsetof(MPI_Status, field))
#define SIGNED(type) printf("signed(%s)=%d\n", #type, (type)-1 < (type)0)
int main(void) {
EOF
  comm -12 "$work/names.ours" "$work/names.theirs" | sed 's/.*/    VALUE(&);/'
  for type in MPI_Status MPI_Aint MPI_Count MPI_Offset MPI_Comm MPI_Datatype MPI_Errhandler \
    MPI_File MPI_Group MPI_Info MPI_Message MPI_Op MPI_Request MPI_Session MPI_Win \
    MPI_T_enum MPI_T_cvar_handle MPI_T_pvar_handle MPI_T_pvar_session \
    MPI_T_event_registration MPI_T_event_instance MPI_T_cb_safety MPI_T_source_order; do
    echo "    SIZE($type);"
  done
  for field in MPI_SOURCE MPI_TAG MPI_ERROR MPI_internal; do echo "    OFFSET($field);"; done
  echo "    SIZE(((MPI_Status *)0)->MPI_internal);"
  for type in MPI_Aint MPI_Count MPI_Offset; do echo "    SIGNED($type);"; done
  echo "    return 0;"
  echo "}"
} >"$work/probe.c"
gcc -I"$ours" -o "$work/probe.ours" "$work/probe.c"
gcc -DMPI_ABI -I"$theirs" -o "$work/probe.theirs" "$work/probe.c"
"$work/probe.ours" >"$work/values.ours"
"$work/probe.theirs" >"$work/values.theirs"
if diff "$work/values.theirs" "$work/values.ours" >"$work/values.diff"; then
  echo "conformance: $(wc -l <"$work/values.ours") values, sizes and offsets agree with the wheel"
else
  fail "values differ (< wheel, > ours):"
  cat "$work/values.diff"
fi

# --- 3. prototypes -------------------------------------------------------------------------
# Each one-line prototype `RET NAME(ARGS);` becomes a pointer type and an assignment of the
# wheel's function of the same name to it.
prototype_re='^([A-Za-z_][A-Za-z0-9_]*) (P?MPI_[A-Za-z0-9_]+)\((.*)\);$'
grep -E "$prototype_re" "$ours/mpi.h" >"$work/prototypes.ours"
{
  echo '#include <mpi.h>'
  sed -E "s/$prototype_re/typedef \\1 (*ours_\\2)(\\3);\\nours_\\2 check_\\2 = \\2;/" \
    "$work/prototypes.ours"
} >"$work/signatures.c"
if gcc -std=c11 -DMPI_ABI -I"$theirs" -c -o "$work/signatures.o" "$work/signatures.c" \
  -Werror=incompatible-pointer-types -Werror=implicit-function-declaration \
  2>"$work/signatures.log"; then
  echo "conformance: $(wc -l <"$work/prototypes.ours") prototypes (MPI_ and PMPI_) match the wheel's"
else
  fail "prototypes differ from the wheel's:"
  grep -E 'error' "$work/signatures.log" | head -n 40
fi
declared_functions() {
  grep -o -E '^[A-Za-z_][A-Za-z0-9_]* P?MPI_[A-Za-z0-9_]+\(' "$1" | sed -E 's/.* (.*)\(/\1/' | sort -u
}
missing=$(comm -13 <(declared_functions "$ours/mpi.h") <(declared_functions "$theirs/mpi_abi.h") | tr '\n' ' ')
[ -z "$missing" ] || fail "functions the wheel declares and we do not: $missing"

[ "$status" -eq 0 ] && echo "conformance: ok"
exit "$status"
