/* C side of tests/fortran/c2f.f90: takes Fortran handles (MPI_Fint) and converts them. */
#include <mpi.h>

int helper_size(MPI_Fint comm) {
    int size = -1;
    MPI_Comm_size(MPI_Comm_f2c(comm), &size);
    return size;
}

int helper_type_size(MPI_Fint datatype) {
    int size = -1;
    MPI_Type_size(MPI_Type_f2c(datatype), &size);
    return size;
}

MPI_Fint helper_world(void) { return MPI_Comm_c2f(MPI_COMM_WORLD); }

MPI_Fint helper_dup(MPI_Fint comm) {
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_Comm_f2c(comm), &dup);
    return MPI_Comm_c2f(dup);
}
