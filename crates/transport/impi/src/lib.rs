//! The IMPI (Interoperable MPI) wire protocol as a sans-IO library: bytes in, typed
//! events out, no sockets, no clocks.
//!
//! - [`wire`]: every wire format, each as a view over bytes plus a validated
//!   representation: the startup command header and messages, COLL labels and the global
//!   tables decoded from the server's replies, the host handshake, the 128-byte packet
//!   header.
//! - [`startup`]: the client and server startup state machines.
//! - [`flow`]: per process pair flow-control counters (ackmark/hiwater).
//! - [`rendezvous`]: long-message sender and receiver states.
//!
//! Owned here: the protocol. Not here: sockets, threads, the MPI library (see
//! docs/architecture.md). docs/impi.md lists the choices made where the sources disagree.

pub mod error;
pub mod flow;
pub mod rendezvous;
pub mod startup;
pub mod wire;

pub use error::{Error, Result};
