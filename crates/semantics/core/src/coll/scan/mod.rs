//! `MPI_Scan` and `MPI_Exscan`: recursive doubling.

pub mod recursive_doubling;
