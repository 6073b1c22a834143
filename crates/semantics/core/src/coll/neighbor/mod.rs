//! Neighbourhood collectives (`MPI_Neighbor_allgather(v)`, `alltoall(v/w)`): one round
//! with a receive per source and a send per destination of the process topology.

pub mod linear;
