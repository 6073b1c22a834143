//! `MPI_Barrier`: dissemination, hierarchical on communicators spanning several nodes or
//! sites, IMPI's.

pub mod dissemination;
pub mod impi;
pub mod two_level;
