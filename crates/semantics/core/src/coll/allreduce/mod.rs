//! `MPI_Allreduce`: recursive doubling (small data or non-commutative operators),
//! Rabenseifner's reduce-scatter + allgather (large data, commutative), hierarchical
//! over nodes and sites (one exchange between site leaders), IMPI's reduce + bcast.

pub mod exchange;
pub mod impi;
pub mod rabenseifner;
pub mod recursive_doubling;
pub mod two_level;
