//! `MPI_Gather(v)`: linear (the root posts a receive per member at once).

pub mod linear;
