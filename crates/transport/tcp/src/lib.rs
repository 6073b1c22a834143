//! TCP transport between nodes: framing (a sans-IO codec) and nonblocking sockets
//! driven by the core's progress engine.
//!
//! Owns: connections and byte streams. Must not touch: MPI matching or datatypes.
