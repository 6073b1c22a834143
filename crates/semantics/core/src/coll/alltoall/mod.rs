//! `MPI_Alltoall(v/w)`: linear (every exchange posted at once: small blocks), pairwise
//! (n-1 rounds of one exchange: large blocks, bounded memory traffic per round), one
//! aggregated message per pair of sites (equal blocks across sites).

pub mod linear;
pub mod pairwise;
pub mod sites;
