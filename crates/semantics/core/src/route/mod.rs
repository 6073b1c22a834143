//! Routes: how frames reach each peer. The shared-memory and TCP routes move the frames
//! queued in [`crate::proto::Peer::queue`] and feed arriving frames to the protocol
//! state; the local route (a process sending to itself) needs no transport. The IMPI
//! route translates frames to IMPI packets for ranks of other clusters.

pub mod impi;
pub mod shm;
pub mod tcp;
