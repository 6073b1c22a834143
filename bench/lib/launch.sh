# Shared by the benchmark scripts (source it with PREFIX in $prefix): how each MPI compiles
# and launches, so every benchmark runs the peers the same way.

# The peers come from Debian's packages; a fresh machine lacks Open MPI, so sourcing this
# file installs what is missing (as `make test` installs what the tests need).
need_peers() {
  local need=() p
  for p in openmpi-bin libopenmpi-dev mpich libmpich-dev python3-matplotlib; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
  done
  [ "${#need[@]}" -eq 0 ] && return
  echo "bench: installing ${need[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null 2>&1 ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; } ||
    echo "bench: could not install ${need[*]}; those peers will show as fail" >&2
}
need_peers

# The C compiler wrapper of MPI $1.
mpicc_of() {
  case $1 in
    crossmpi) echo "$prefix/bin/mpicc" ;;
    openmpi) echo mpicc.openmpi ;;
    mpich) echo mpicc.mpich ;;
  esac
}

# The command running $3 ranks of MPI $1 in mode $2 (shm or tcp), one word per line.
launch_words() {
  case $1 in
    crossmpi)
      [ "$2" = tcp ] && printf '%s\n' env CROSSMPI_TRANSPORT=tcp
      printf '%s\n' "$prefix/bin/mpirun" --oversubscribe -n "$3" ;;
    openmpi)
      printf '%s\n' mpirun.openmpi --allow-run-as-root --oversubscribe -n "$3"
      [ "$2" = tcp ] && printf '%s\n' --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo ;;
    mpich)
      # MPIR_CVAR_NOLOCAL alone keeps UCX's shared-memory transports; UCX_TLS removes them
      [ "$2" = tcp ] && printf '%s\n' env MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self UCX_NET_DEVICES=lo
      printf '%s\n' /usr/bin/mpiexec.mpich -n "$3" ;;
  esac
}
