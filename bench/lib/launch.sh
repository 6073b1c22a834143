# Shared by the benchmark scripts (source it with PREFIX in $prefix): how each MPI compiles
# and launches, so every benchmark runs the peers the same way.

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
