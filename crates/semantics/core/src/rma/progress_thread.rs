//! The optional one-sided progress thread (`CROSSMPI_RMA_PROGRESS_THREAD=1`): without
//! it a target serves requests only while it is inside an MPI call; with it, a thread
//! runs the progress engine every `CROSSMPI_RMA_PROGRESS_US` microseconds while windows
//! exist, taking the runtime lock only while the application is outside MPI (or
//! sleeping in it), so passive-target operations complete while the target computes.

use super::windows;
use crate::runtime;
use std::sync::Once;
use std::time::Duration;

/// Poll interval: short enough that a passive-target operation waits at most a fraction
/// of a TCP round trip on a computing target, long enough that the thread takes under
/// 1% of a core when idle.
const DEFAULT_INTERVAL_US: u64 = 200;

/// A numeric `CROSSMPI_*` setting; a value that does not parse is reported and ignored.
pub(super) fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Err(_) => default,
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            crate::say!("crossmpi: ignoring {name}={v:?}: not a number; using {default}");
            default
        }),
    }
}

/// Whether the environment asks for the thread (read by `MPI_Init` too: the runtime then
/// takes its lock on every call, since this thread enters MPI beside the application's).
pub(super) fn requested() -> bool {
    env_u64("CROSSMPI_RMA_PROGRESS_THREAD", 0) != 0
}

/// Starts the thread on the first window creation, if the environment asks for it.
pub(super) fn start_once() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        if !requested() {
            return;
        }
        let interval =
            Duration::from_micros(env_u64("CROSSMPI_RMA_PROGRESS_US", DEFAULT_INTERVAL_US).max(1));
        let spawned = std::thread::Builder::new()
            .name("crossmpi-rma-progress".into())
            .spawn(move || loop {
                std::thread::sleep(interval);
                let alive = runtime::with("one-sided progress thread", |rt| {
                    let any_window = windows().iter().next().is_some();
                    if any_window {
                        rt.progress();
                    }
                    Ok(())
                });
                if alive.is_err() {
                    // MPI_Finalize ran: nothing left to serve.
                    break;
                }
            });
        if let Err(e) = spawned {
            crate::say!("crossmpi: CROSSMPI_RMA_PROGRESS_THREAD: cannot start the thread: {e}");
        }
    });
}
