//! The PMI-1 ("simple PMI") wire protocol: how ranks bootstrap with their launcher.
//!
//! This crate owns the protocol and nothing about processes:
//! - [`wire`]: the line codec (`cmd=NAME key=value ...\n`), a never-panicking view
//!   ([`wire::Fields`]) and the validated [`Command`];
//! - [`server`]: the launcher's side for its first job and the jobs spawned from it (KVS,
//!   barrier, abort, spawn requests, the name service), sans-IO;
//! - [`spawn`]: the multi-line `mcmd=spawn` request;
//! - [`client_machine`]: a rank's side, sans-IO;
//! - [`Client`]: the blocking client the MPI library uses, over the socket the launcher
//!   provides (`PMI_FD`, or `PMI_PORT` + `PMI_ID`).
//!
//! The spellings are those MPICH's Hydra serves (checked against `mpiexec.mpich` 4.0),
//! so crossmpi ranks start under Hydra and crossmpi's `mpirun` serves the same lines.

mod client;
pub mod client_machine;
mod error;
pub mod server;
pub mod spawn;
pub mod wire;

pub use client::Client;
pub use error::Error;
pub use wire::Command;
