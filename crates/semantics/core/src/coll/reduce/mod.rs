//! `MPI_Reduce`: binomial tree (rank-ordered for non-commutative operators),
//! hierarchical over nodes and sites, linear (one round, rank-ordered fold), IMPI's.

pub mod binomial;
pub mod impi;
pub mod linear;
pub mod two_level;
