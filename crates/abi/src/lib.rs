//! The C ABI surface (MPI 5.0 standard ABI).
