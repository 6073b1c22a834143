//! `MPI_Bcast`: binomial tree (small data, few members), scatter then ring allgather
//! (large data), two-level over nodes.

pub mod binomial;
pub mod scatter_allgather;
pub mod two_level;
