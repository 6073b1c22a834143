//! `MPI_Reduce_scatter(_block)`: reduce to member 0, then scatter the blocks.

pub mod reduce_then_scatter;
