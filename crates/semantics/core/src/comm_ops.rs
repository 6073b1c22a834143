//! Creating and freeing communicators.
//!
//! A new communicator needs a context id no member is using. Every process hands out
//! context ids in increasing order (`Runtime::next_context`, two per communicator); the
//! members agree on the largest of their next free ids, so the result is free in each of
//! them, and ids are 64-bit, so they never wrap. Creation is serialised inside a process
//! (`CREATE`), so two threads creating communicators at once cannot pick the same id.

use crate::coll::{allgather_bytes, Members};
use crate::comm::{Comm, CommId, Group, UNDEFINED};
use crate::error::MpiResult;
use crate::runtime;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

static CREATE: Mutex<()> = Mutex::new(());

fn agree_context(function: &str, parent: CommId) -> MpiResult<u64> {
    let mine = runtime::with(function, |rt| Ok(rt.next_context))?;
    let all = allgather_bytes(function, parent, &mine.to_le_bytes())?;
    let context = all
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .max()
        .unwrap_or(mine);
    runtime::with(function, |rt| {
        rt.next_context = rt.next_context.max(context + 2);
        Ok(())
    })?;
    Ok(context)
}

fn install(
    function: &str,
    parent: CommId,
    context: u64,
    group: Arc<Group>,
) -> MpiResult<Option<CommId>> {
    runtime::with(function, |rt| {
        let me = rt.rank;
        let Some(rank) = group.rank_of(me) else {
            return Ok(None);
        };
        let p = rt.comm(function, parent)?;
        let nodes = Arc::new(
            group
                .members
                .iter()
                .map(|&w| rt.node_of[w as usize])
                .collect(),
        );
        let errhandler = p.errhandler;
        Ok(Some(rt.comms.insert(Comm {
            context,
            group,
            rank,
            remote: None,
            name: String::new(),
            errhandler,
            attributes: BTreeMap::new(),
            nodes,
            coll_seq: 0,
            topology: None,
            hints: BTreeMap::new(),
        })))
    })
}

/// `MPI_Comm_dup` (attributes are copied by the caller, which runs the callbacks).
pub fn dup(function: &str, comm: CommId) -> MpiResult<CommId> {
    let _serial = CREATE.lock().unwrap_or_else(|p| p.into_inner());
    let m = Members::of(function, comm)?;
    let context = agree_context(function, comm)?;
    Ok(install(function, comm, context, m.group)?
        .expect("a member of the parent is a member of its duplicate"))
}

/// `MPI_Comm_split`: members with the same color form a communicator, ordered by key
/// then by rank in the parent; color `MPI_UNDEFINED` gets none.
pub fn split(function: &str, comm: CommId, color: i32, key: i32) -> MpiResult<Option<CommId>> {
    let _serial = CREATE.lock().unwrap_or_else(|p| p.into_inner());
    let m = Members::of(function, comm)?;
    let mut mine = [0u8; 8];
    mine[..4].copy_from_slice(&color.to_le_bytes());
    mine[4..].copy_from_slice(&key.to_le_bytes());
    let all = allgather_bytes(function, comm, &mine)?;
    let context = agree_context(function, comm)?;
    if color == UNDEFINED {
        return Ok(None);
    }
    let mut chosen: Vec<(i32, usize)> = all
        .chunks_exact(8)
        .enumerate()
        .filter(|(_, c)| i32::from_le_bytes(c[..4].try_into().unwrap()) == color)
        .map(|(r, c)| (i32::from_le_bytes(c[4..].try_into().unwrap()), r))
        .collect();
    chosen.sort();
    let group = Group::new(chosen.iter().map(|&(_, r)| m.group.world_rank(r)).collect());
    install(function, comm, context, group)
}

/// `MPI_Comm_free`.
pub fn free(function: &str, comm: CommId) -> MpiResult<()> {
    runtime::with(function, |rt| {
        rt.comm(function, comm)?;
        rt.comms.remove(comm);
        Ok(())
    })
}
