//! MPI datatypes: the type engine (constructors, committed layouts), packing and
//! unpacking between user buffers and contiguous byte streams, the `external32`
//! representation, and the predefined reduction operators.
//!
//! Owns: layout computation and byte movement. Must not touch: communicators,
//! transports, handles (the ABI layer maps handles to the types defined here).
