//! `MPI_Allgather(v)`: ring (any size, any block sizes), recursive doubling (equal
//! blocks, power-of-two member counts), hierarchical over nodes and sites.

pub mod recursive_doubling;
pub mod ring;
pub mod two_level;
