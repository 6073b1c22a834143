//! `MPI_Bcast`: binomial tree (small data, few members), scatter then ring allgather
//! (large data), hierarchical over nodes and sites, IMPI's.

pub mod binomial;
pub mod impi;
pub mod scatter_allgather;
pub mod two_level;
