//! MPI semantics: the runtime of one MPI process.
//!
//! Owns: bootstrap through PMI, groups and communicators (64-bit context ids), requests,
//! the matching engine, the point-to-point protocols, collectives, and the progress
//! engine that drives the transports. Must not touch: C handles and pointers (the ABI
//! crate converts them), the details of shared memory and sockets (the transport crates).
//! The one exception is [`userbuf`], where application memory lent to MPI is accessed.

pub mod binding;
pub mod bootstrap;
pub mod coll;
pub mod comm;
pub mod comm_idup;
pub mod comm_ops;
pub mod config;
pub mod dynamic;
pub mod error;
pub mod external;
pub mod group;
pub mod header;
pub mod intercomm;
pub mod matching;
pub mod p2p;
pub mod progress;
pub mod proto;
pub mod reduce;
pub mod request;
pub mod rma;
pub mod route;
pub mod runtime;
pub mod slab;
pub mod topo;
pub mod userbuf;

pub use crossmpi_datatype as datatype;

/// Ends this process after an unrecoverable transport failure; the launcher notices the
/// exit and ends the rest of the job.
pub fn fatal(message: &str) -> ! {
    notice(&format!("fatal: {message}"));
    std::process::exit(1);
}

/// Tells the user, on stderr and naming this rank, of something the job survived.
pub fn notice(message: &str) {
    let mut rank = std::env::var("PMI_RANK").unwrap_or_else(|_| "?".into());
    if let Ok(client) = std::env::var("CROSSMPI_IMPI_CLIENT") {
        rank = format!("{rank} of IMPI client {client}");
    }
    stderr_line(&format!("crossmpi: rank {rank}: {message}"));
}

/// Writes `line` and a newline to stderr in one write. `eprintln!` writes each
/// formatted piece on its own, so a process that ends (another thread's fatal error, a
/// signal from the launcher) between two pieces leaves half a line, which the next line
/// on the same stream, mpirun's or another rank's, then continues.
pub fn stderr_line(line: &str) {
    use std::io::Write;
    let mut whole = String::with_capacity(line.len() + 1);
    whole.push_str(line);
    whole.push('\n');
    let _ = std::io::stderr().write_all(whole.as_bytes());
}

/// `eprintln!` as one write (see [`stderr_line`]).
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::stderr_line(&format!($($arg)*))
    };
}
