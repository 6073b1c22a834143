//! `MPI_Scan` and `MPI_Exscan`: recursive doubling, or across sites (one message per
//! ordered pair of sites) when every site is a run of consecutive ranks.

pub mod recursive_doubling;
pub mod sites;
