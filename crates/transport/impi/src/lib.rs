//! The IMPI (Interoperable MPI) wire protocol as a sans-IO library.
