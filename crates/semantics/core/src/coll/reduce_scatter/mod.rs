//! `MPI_Reduce_scatter(_block)`: reduce to member 0, then scatter the blocks (flat, or
//! across sites with one crossing per remote site in each half).

pub mod reduce_then_scatter;
pub mod two_level;
