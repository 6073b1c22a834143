//! `MPI_Barrier`: dissemination, or two-level on communicators spanning several nodes.

pub mod dissemination;
pub mod two_level;
