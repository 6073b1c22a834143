//! Shared-memory transport between ranks of one node (same host, same network
//! namespace): per-pair single-producer/single-consumer rings of fixed-size cells
//! in a file under /dev/shm, a doorbell for sleeping receivers, and the
//! cross-memory-attach (`process_vm_readv`) single-copy path.
//!
//! Owns: moving frames between processes. Must not touch: MPI matching or datatypes.
