//! TCP transport between nodes.
//!
//! A connection carries *frames*: a 16-byte prefix ([`wire::Prefix`]: head length and
//! payload length), an opaque head (the core's message header) and the payload. Payloads
//! are read straight into their destination (the matched receive buffer) rather than
//! through an intermediate buffer, so a large message costs the kernel's copies only.
//! Connections start with a [`wire::Hello`] naming the job and the sender's rank; a
//! connection whose hello is malformed or from another job is dropped with a reason.
//!
//! Each rank *sends* only on connections it opened and *receives* on connections it
//! accepted, so every direction of a pair is one ordered stream and two ranks that
//! connect to each other at once need no tie-break.
//!
//! Owns: connections and byte streams. Must not touch: MPI matching or datatypes.

mod congestion;
mod conn;
mod sockopt;
mod unsent;
pub mod wire;

pub use congestion::{
    AlgorithmName, Congestion, DEFAULT_CONGESTION, IMPI_CONGESTION_VAR, TCP_CONGESTION_VAR,
};
pub use conn::{Connection, Incoming, Listener};
pub use unsent::{bytes_acked, limit_unsent};
