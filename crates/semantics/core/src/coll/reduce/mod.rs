//! `MPI_Reduce`: binomial tree (rank-ordered for non-commutative operators), two-level
//! over nodes for commutative ones.

pub mod binomial;
pub mod two_level;
