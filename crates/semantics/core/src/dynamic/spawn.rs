//! `MPI_Comm_spawn(_multiple)` and `MPI_Comm_get_parent`.
//!
//! The root opens a port and asks the launcher (PMI-1 `mcmd=spawn`) to start the
//! children as a new job whose key space holds the port's name under
//! `PARENT_ROOT_PORT_NAME` (the key MPICH's children read too). The parents then accept
//! on that port while the children, in `MPI_Init`, connect to it over their
//! `MPI_COMM_WORLD`: the intercommunicator between them is made by the port machinery
//! of `dynamic`, and is the children's parent communicator.

use super::{accept, bcast_outcome, close_port, connect, open_port};
use crate::comm::CommId;
use crate::comm_ops::check_intra;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::runtime;
use crossmpi_pmi::spawn::SpawnSegment;

/// The key of the children's key space that holds the parents' port.
const PARENT_PORT_KEY: &str = "PARENT_ROOT_PORT_NAME";

/// One command to start (significant at the root).
#[derive(Debug, Clone)]
pub struct SpawnCommand {
    pub command: String,
    pub args: Vec<String>,
    pub maxprocs: usize,
    /// Info keys and values passed to the launcher (it honours `host`, `wdir`, `path`).
    pub info: Vec<(String, String)>,
}

fn spawn_err(function: &str, why: impl std::fmt::Display) -> MpiError {
    MpiError::context(ErrorClass::Spawn, function, why.to_string())
}

/// Starts the commands `commands()` gives (called at `root` only: the arguments are
/// significant there alone, and a bad one fails every member) and returns the
/// intercommunicator to the children, whose remote group is all of them in command order.
pub fn spawn(
    function: &str,
    commands: impl FnOnce() -> MpiResult<Vec<SpawnCommand>>,
    comm: CommId,
    root: usize,
) -> MpiResult<CommId> {
    check_intra(function, comm)?;
    let rank = runtime::with(function, |rt| Ok(rt.comm(function, comm)?.rank))?;
    let mut port = String::new();
    let mut root_error = None;
    // The root broadcasts its outcome: nothing when the children are starting, else
    // its error's text, which the other members report.
    let at_root = (rank == root).then(|| {
        let started = commands().and_then(|cmds| {
            port = open_port(function)?;
            launch(function, &cmds, &port)
        });
        if let Err(e) = started {
            if !port.is_empty() {
                let _ = close_port(function, &port);
            }
            let why = e.to_string().into_bytes();
            root_error = Some(e);
            return Ok(why);
        }
        Ok(Vec::new())
    });
    let why = match bcast_outcome(function, comm, root, at_root)? {
        Ok(why) => why,
        Err(e) => e.into_bytes(),
    };
    if !why.is_empty() {
        return Err(root_error.unwrap_or_else(|| {
            spawn_err(
                function,
                format!(
                    "the root (rank {root}) could not spawn: {}",
                    String::from_utf8_lossy(&why)
                ),
            )
        }));
    }
    let inter = accept(function, &port, comm, root)
        .map_err(|e| spawn_err(function, format!("the children did not connect: {e}")));
    if rank == root {
        let _ = close_port(function, &port);
    }
    inter
}

/// The root's request to the launcher.
fn launch(function: &str, commands: &[SpawnCommand], port: &str) -> MpiResult<()> {
    let total = commands.len();
    let segments: Vec<SpawnSegment> = commands
        .iter()
        .enumerate()
        .map(|(i, c)| SpawnSegment {
            nprocs: c.maxprocs,
            command: c.command.clone(),
            total,
            number: i + 1,
            args: c.args.clone(),
            preput: vec![(PARENT_PORT_KEY.to_string(), port.to_string())],
            info: c.info.clone(),
        })
        .collect();
    runtime::with(function, |rt| {
        match rt.pmi.as_mut() {
        // The children would inherit the cluster's IMPI settings and try to join the
        // IMPI job as one more client, which the IMPI server refuses.
        Some(_) if rt.impi.is_some() => Err(spawn_err(
            function,
            "spawning is not supported in a multi-cluster (IMPI) job",
        )),
        None => Err(spawn_err(
            function,
            "this process was not started by a launcher (it runs as a singleton); start it with mpirun to spawn",
        )),
        Some(pmi) => pmi.spawn(&segments).map_err(|e| spawn_err(function, e)),
    }
    })
}

/// In `MPI_Init` of spawned processes: connects to the parents; remembers the
/// intercommunicator as the parent. Does nothing in processes that were not spawned.
pub fn connect_parent(function: &str) -> MpiResult<()> {
    let (port, world) = runtime::with(function, |rt| {
        let port = rt.pmi.as_mut().and_then(|p| p.get(PARENT_PORT_KEY).ok());
        Ok((port, rt.world))
    })?;
    let Some(port) = port else {
        return Ok(());
    };
    let parent = connect(function, &port, world, 0).map_err(|e| {
        spawn_err(
            function,
            format!("this process was spawned but cannot reach its parents: {e}"),
        )
    })?;
    runtime::with(function, |rt| {
        // Its default name, as the standard gives it (MPI_Comm_get_name).
        rt.comm_mut(function, parent)?.name = "MPI_COMM_PARENT".into();
        rt.dynamic.parent = Some(parent);
        Ok(())
    })
}

/// `MPI_Comm_get_parent`: the intercommunicator to the parents while it exists.
pub fn parent(function: &str) -> MpiResult<Option<CommId>> {
    runtime::with(function, |rt| {
        Ok(rt
            .dynamic
            .parent
            .filter(|&id| rt.comm(function, id).is_ok()))
    })
}
