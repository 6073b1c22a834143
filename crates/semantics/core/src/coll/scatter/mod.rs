//! `MPI_Scatter(v)`: linear (the root posts a send per member at once).

pub mod linear;
