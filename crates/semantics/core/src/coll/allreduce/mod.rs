//! `MPI_Allreduce`: recursive doubling (small data or non-commutative operators),
//! Rabenseifner's reduce-scatter + allgather (large data, commutative), two-level over
//! nodes.

pub mod rabenseifner;
pub mod recursive_doubling;
pub mod two_level;
