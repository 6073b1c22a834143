/* crossmpi: declarations beyond the MPI-5.0 ABI header, for source compatibility with
 * programs written for earlier MPI versions: MPI_Fint and the C/Fortran handle
 * conversions. crossmpi's Fortran handles are the C handle values, so each conversion is
 * the identity; the library exports these functions (with PMPI twins). Included by mpi.h. */
#ifndef CROSSMPI_MPI_COMPAT_H
#define CROSSMPI_MPI_COMPAT_H

/* Multi-cluster jobs (IMPI). Attribute keys of every communicator, from the IMPI draft:
 * how many IMPI clients (clusters) and hosts its processes span, and which of them the
 * caller belongs to (0..SIZE-1, usable as a color for MPI_Comm_split). And a split type
 * for MPI_Comm_split_type: the processes of the caller's cluster. */
#define MPI_CLIENT_SIZE 520
#define MPI_CLIENT_COLOR 521
#define MPI_HOST_SIZE 522
#define MPI_HOST_COLOR 523
#define MPIX_COMM_TYPE_CLUSTER 230

typedef int MPI_Fint;
MPI_Fint MPI_Comm_c2f(MPI_Comm handle);
MPI_Comm MPI_Comm_f2c(MPI_Fint handle);
MPI_Fint PMPI_Comm_c2f(MPI_Comm handle);
MPI_Comm PMPI_Comm_f2c(MPI_Fint handle);
MPI_Fint MPI_Errhandler_c2f(MPI_Errhandler handle);
MPI_Errhandler MPI_Errhandler_f2c(MPI_Fint handle);
MPI_Fint PMPI_Errhandler_c2f(MPI_Errhandler handle);
MPI_Errhandler PMPI_Errhandler_f2c(MPI_Fint handle);
MPI_Fint MPI_File_c2f(MPI_File handle);
MPI_File MPI_File_f2c(MPI_Fint handle);
MPI_Fint PMPI_File_c2f(MPI_File handle);
MPI_File PMPI_File_f2c(MPI_Fint handle);
MPI_Fint MPI_Group_c2f(MPI_Group handle);
MPI_Group MPI_Group_f2c(MPI_Fint handle);
MPI_Fint PMPI_Group_c2f(MPI_Group handle);
MPI_Group PMPI_Group_f2c(MPI_Fint handle);
MPI_Fint MPI_Info_c2f(MPI_Info handle);
MPI_Info MPI_Info_f2c(MPI_Fint handle);
MPI_Fint PMPI_Info_c2f(MPI_Info handle);
MPI_Info PMPI_Info_f2c(MPI_Fint handle);
MPI_Fint MPI_Message_c2f(MPI_Message handle);
MPI_Message MPI_Message_f2c(MPI_Fint handle);
MPI_Fint PMPI_Message_c2f(MPI_Message handle);
MPI_Message PMPI_Message_f2c(MPI_Fint handle);
MPI_Fint MPI_Op_c2f(MPI_Op handle);
MPI_Op MPI_Op_f2c(MPI_Fint handle);
MPI_Fint PMPI_Op_c2f(MPI_Op handle);
MPI_Op PMPI_Op_f2c(MPI_Fint handle);
MPI_Fint MPI_Request_c2f(MPI_Request handle);
MPI_Request MPI_Request_f2c(MPI_Fint handle);
MPI_Fint PMPI_Request_c2f(MPI_Request handle);
MPI_Request PMPI_Request_f2c(MPI_Fint handle);
MPI_Fint MPI_Session_c2f(MPI_Session handle);
MPI_Session MPI_Session_f2c(MPI_Fint handle);
MPI_Fint PMPI_Session_c2f(MPI_Session handle);
MPI_Session PMPI_Session_f2c(MPI_Fint handle);
MPI_Fint MPI_Type_c2f(MPI_Datatype handle);
MPI_Datatype MPI_Type_f2c(MPI_Fint handle);
MPI_Fint PMPI_Type_c2f(MPI_Datatype handle);
MPI_Datatype PMPI_Type_f2c(MPI_Fint handle);
MPI_Fint MPI_Win_c2f(MPI_Win handle);
MPI_Win MPI_Win_f2c(MPI_Fint handle);
MPI_Fint PMPI_Win_c2f(MPI_Win handle);
MPI_Win PMPI_Win_f2c(MPI_Fint handle);

#endif /* CROSSMPI_MPI_COMPAT_H */
