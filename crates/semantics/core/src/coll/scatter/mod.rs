//! `MPI_Scatter(v)`: linear (the root posts a send per member at once), one message per
//! remote site (equal blocks, communicators spanning sites).

pub mod linear;
pub mod sites;
