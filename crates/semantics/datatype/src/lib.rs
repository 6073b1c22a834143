//! MPI datatypes: the type engine (constructors, committed layouts), packing and
//! unpacking between user buffers and contiguous byte streams, the `external32`
//! representation, and the predefined reduction operators.
//!
//! Owns: layout computation and byte movement. Must not touch: communicators,
//! transports, handles (the ABI layer maps handles to the types defined here).
//!
//! A [`Datatype`] compiles its layout when it is built: contiguous bytes merge into
//! blocks, regular repetitions stay loops, irregular lists keep per-entry stream
//! offsets. Packing then costs one copy per contiguous run (a fixed-size move for short
//! ones, one loop for regularly strided ones), and a pack starting at any stream offset
//! (a fragment of a large message) seeks by arithmetic or binary search. Buffers are byte slices with an `origin` index (the MPI buffer address), so
//! negative displacements stay in bounds of safe code.

mod array;
mod basic;
mod datatype;
mod envelope;
mod error;
mod external32;
mod fragment;
mod layout;
pub mod op;
mod pack;
mod rebuild;
mod signature;

pub use basic::Basic;
pub use datatype::Datatype;
pub use envelope::{Combiner, Contents, Distribution, Envelope, Marker, Order, DFLT_DARG, F90};
pub use error::{ErrorKind, TypeError};
