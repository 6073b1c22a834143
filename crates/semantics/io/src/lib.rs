//! MPI-IO: files opened by a group of processes, views that place each process's data
//! stream in the file through derived datatypes, independent and collective accesses
//! (two-phase aggregation), the individual and shared file pointers, atomic mode, and
//! the `native`, `external32` and user-registered data representations.
//!
//! Owns: file semantics on top of the OS file API and the core's collectives. Must not
//! touch: handles and C pointers (the ABI layer maps `MPI_File` handles to [`File`]).
//! Nonblocking accesses are run to completion by the ABI layer when they start (MPI
//! allows an operation to complete at once); split collectives likewise do their work in
//! `_begin`.

pub mod amode;
pub mod collective;
pub mod datarep;
pub mod error;
pub mod file;
pub mod flatten;
mod os;
pub mod shared;
pub mod team;
pub mod view;

pub use datarep::{Conversions, Datarep};
pub use error::{Class, FileClass, IoError, IoResult};
pub use file::{At, File, Whence};
