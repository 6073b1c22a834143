//! Creating and freeing communicators.
//!
//! A new communicator needs a context id no member is using. Every process hands out
//! context ids in increasing order (`Runtime::next_context`, two per communicator) and
//! never reuses one, so ids of freed communicators (whose messages may still be in
//! flight) stay retired; ids are 64-bit, so they never wrap.
//!
//! Agreement runs in rounds, and no lock is held across the communication, so threads
//! of one process may create communicators from different parents at once
//! (`MPI_THREAD_MULTIPLE`) without deadlocking each other across processes:
//! 1. every member proposes its lowest id that is neither retired nor claimed by a
//!    creation in progress in this process; the largest proposal is the candidate;
//! 2. every member claims the candidate if it is still free locally (another thread may
//!    have claimed or committed it meanwhile);
//! 3. if every member could claim it, it is the new id; otherwise the claims are dropped,
//!    every member retires ids up to the candidate, and a new round starts above it.
//!
//! Rounds only fail when two creations of one process race, and each failed round
//! raises the proposals, so agreement terminates.

use crate::coll::{allgather_bytes, bcast_bytes, Members};
use crate::comm::{Comm, CommId, Group, UNDEFINED};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::header::Envelope;
use crate::request::{ReqId, SendMode};
use crate::runtime::{self, Runtime};
use crate::userbuf;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

/// Context ids claimed by creations in progress in this process.
static CLAIMED: Mutex<BTreeSet<u64>> = Mutex::new(BTreeSet::new());

fn claimed() -> std::sync::MutexGuard<'static, BTreeSet<u64>> {
    CLAIMED.lock().unwrap_or_else(|p| p.into_inner())
}

/// This process's proposal: the lowest id above every retired and claimed one.
fn propose(rt: &Runtime) -> u64 {
    let above_claims = claimed().last().map_or(0, |&c| c + 2);
    rt.next_context.max(above_claims)
}

/// Claims `candidate` if it is neither retired nor claimed.
fn claim(rt: &Runtime, candidate: u64) -> bool {
    candidate >= rt.next_context && claimed().insert(candidate)
}

/// Agrees on a context id with the processes `allmax` reaches (`allmax` returns the
/// largest value every participant passed).
fn agree_with(function: &str, allmax: &dyn Fn(u64) -> MpiResult<u64>) -> MpiResult<u64> {
    loop {
        let mine = runtime::with(function, |rt| Ok(propose(rt)))?;
        let candidate = allmax(mine)?;
        let ok = runtime::with(function, |rt| Ok(claim(rt, candidate)))?;
        // The largest "refusal" is 0 exactly when every participant claimed it.
        let refused = allmax(u64::from(!ok))?;
        runtime::with(function, |rt| {
            if ok {
                claimed().remove(&candidate);
            }
            rt.next_context = rt.next_context.max(candidate + 2);
            Ok(())
        })?;
        if refused == 0 {
            return Ok(candidate);
        }
    }
}

fn max_of(all: &[u8]) -> u64 {
    all.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8-byte chunk")))
        .max()
        .unwrap_or(0)
}

/// Agreement among all members of `parent`, over its collective context.
fn agree_context(function: &str, parent: CommId) -> MpiResult<u64> {
    agree_with(function, &|v| {
        Ok(max_of(&allgather_bytes(
            function,
            parent,
            &v.to_le_bytes(),
        )?))
    })
}

fn nodes_of(rt: &Runtime, group: &Group) -> Arc<Vec<u32>> {
    Arc::new(
        group
            .members
            .iter()
            .map(|&w| rt.node_of[w as usize])
            .collect(),
    )
}

/// Inserts the communicator `group` forms with `context` (inheriting `parent`'s error
/// handler); `None` when this process is not in `group`.
fn install(
    function: &str,
    parent: CommId,
    context: u64,
    group: Arc<Group>,
    remote: Option<Arc<Group>>,
) -> MpiResult<Option<CommId>> {
    runtime::with(function, |rt| {
        let me = rt.rank;
        let Some(rank) = group.rank_of(me) else {
            return Ok(None);
        };
        let p = rt.comm(function, parent)?;
        let errhandler = p.errhandler;
        let nodes = nodes_of(rt, &group);
        Ok(Some(rt.comms.insert(Comm {
            context,
            group,
            rank,
            remote,
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

/// `MPI_Comm_dup` (attributes are copied by the caller, which runs the callbacks). The
/// duplicate keeps the topology and, for an intercommunicator, the remote group.
pub fn dup(function: &str, comm: CommId) -> MpiResult<CommId> {
    let (remote, topology, hints) = runtime::with(function, |rt| {
        let c = rt.comm(function, comm)?;
        Ok((c.remote.clone(), c.topology.clone(), c.hints.clone()))
    })?;
    let group = Members::of(function, comm)?.group;
    let context = match &remote {
        None => agree_context(function, comm)?,
        Some(_) => agree_inter(function, comm)?,
    };
    let new = install(function, comm, context, group, remote)?
        .expect("a member of the parent is a member of its duplicate");
    runtime::with(function, |rt| {
        let c = rt.comm_mut(function, new)?;
        c.topology = topology;
        c.hints = hints;
        Ok(())
    })?;
    Ok(new)
}

/// `MPI_Comm_split`: members with the same color form a communicator, ordered by key
/// then by rank in the parent; color `MPI_UNDEFINED` gets none.
pub fn split(function: &str, comm: CommId, color: i32, key: i32) -> MpiResult<Option<CommId>> {
    check_intra(function, comm)?;
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
        .filter(|(_, c)| i32::from_le_bytes(c[..4].try_into().expect("4 bytes")) == color)
        .map(|(r, c)| (i32::from_le_bytes(c[4..].try_into().expect("4 bytes")), r))
        .collect();
    chosen.sort();
    let group = Group::new(chosen.iter().map(|&(_, r)| m.group.world_rank(r)).collect());
    install(function, comm, context, group, None)
}

/// `MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)`: one communicator per node.
pub fn split_shared(function: &str, comm: CommId, key: i32) -> MpiResult<Option<CommId>> {
    let node = runtime::with(function, |rt| {
        let c = rt.comm(function, comm)?;
        Ok(c.nodes[c.rank])
    })?;
    split(function, comm, node as i32, key)
}

fn check_intra(function: &str, comm: CommId) -> MpiResult<()> {
    runtime::with(function, |rt| {
        if rt.comm(function, comm)?.is_inter() {
            return Err(MpiError::arg(
                ErrorClass::Comm,
                function,
                "comm",
                "an intercommunicator",
                "an intracommunicator is required",
            ));
        }
        Ok(())
    })
}

/// `MPI_Comm_create`: collective over all of `comm`; processes may pass different
/// (disjoint) groups, each a subgroup of `comm`. Returns `None` outside the group.
pub fn create(function: &str, comm: CommId, group: Arc<Group>) -> MpiResult<Option<CommId>> {
    check_intra(function, comm)?;
    check_subgroup(function, comm, &group)?;
    let context = agree_context(function, comm)?;
    install(function, comm, context, group, None)
}

fn check_subgroup(function: &str, comm: CommId, group: &Group) -> MpiResult<()> {
    runtime::with(function, |rt| {
        let c = rt.comm(function, comm)?;
        match group
            .members
            .iter()
            .find(|&&w| c.group.rank_of(w).is_none())
        {
            Some(w) => Err(MpiError::arg(
                ErrorClass::Group,
                function,
                "group",
                format!("a group with world rank {w}"),
                "not a subgroup of the communicator's group",
            )),
            None => Ok(()),
        }
    })
}

/// Internal tags for the group-restricted exchanges below, on the parent's collective
/// context: far below the tags collectives use, one per user tag.
fn internal_tag(user_tag: i32) -> i32 {
    i32::MIN / 2 - (user_tag & 0x3fff_ffff) / 2
}

/// Sends `out` to world rank `to` and receives `into` from world rank `from` on
/// `context` with `tag`, and waits for both.
fn sendrecv_world(
    function: &str,
    env: Envelope,
    to: Option<u32>,
    out: &[u8],
    from: Option<i32>,
    into: &mut [u8],
) -> MpiResult<()> {
    let reqs: Vec<ReqId> = runtime::with(function, |rt| {
        let mut reqs = Vec::new();
        if let Some(to) = to {
            let buf = userbuf::bytes(out.as_ptr() as usize, out.len());
            reqs.push(rt.st.start_send(buf, to, env, SendMode::Standard));
        }
        if let Some(from) = from {
            let buf = userbuf::bytes(into.as_mut_ptr() as usize, into.len());
            reqs.push(rt.st.start_recv(buf, env.context, from, env.tag));
        }
        rt.flush();
        Ok(reqs)
    })?;
    runtime::wait_for(function, |rt| {
        reqs.iter().all(|&r| rt.st.is_done(r)).then(|| {
            for &r in &reqs {
                rt.st.requests.remove(r);
            }
        })
    })
}

/// Largest `value` among the members of `group` (this process is rank `rank`): a
/// gather to rank 0 and a reply, each on `context` with `tag`.
fn allmax_among(
    function: &str,
    context: u64,
    tag: i32,
    group: &Group,
    rank: usize,
    value: u64,
) -> MpiResult<u64> {
    let env = Envelope {
        context,
        src: rank as i32,
        tag,
    };
    if rank != 0 {
        let mut reply = [0u8; 8];
        sendrecv_world(
            function,
            env,
            Some(group.members[0]),
            &value.to_le_bytes(),
            None,
            &mut [],
        )?;
        sendrecv_world(function, env, None, &[], Some(0), &mut reply)?;
        return Ok(u64::from_le_bytes(reply));
    }
    let mut max = value;
    for r in 1..group.size() {
        let mut v = [0u8; 8];
        sendrecv_world(function, env, None, &[], Some(r as i32), &mut v)?;
        max = max.max(u64::from_le_bytes(v));
    }
    for r in 1..group.size() {
        sendrecv_world(
            function,
            env,
            Some(group.members[r]),
            &max.to_le_bytes(),
            None,
            &mut [],
        )?;
    }
    Ok(max)
}

/// `MPI_Comm_create_group`: collective only over the members of `group`.
pub fn create_group(
    function: &str,
    comm: CommId,
    group: Arc<Group>,
    tag: i32,
) -> MpiResult<Option<CommId>> {
    check_intra(function, comm)?;
    check_subgroup(function, comm, &group)?;
    let (context, me) = runtime::with(function, |rt| {
        Ok((rt.comm(function, comm)?.coll_context(), rt.rank))
    })?;
    let Some(rank) = group.rank_of(me) else {
        return Err(MpiError::arg(
            ErrorClass::Group,
            function,
            "group",
            "a group",
            "the calling process must be a member",
        ));
    };
    let tag = internal_tag(tag);
    let new = agree_with(function, &|v| {
        allmax_among(function, context, tag, &group, rank, v)
    })?;
    install(function, comm, new, group, None)
}

/// `MPI_Comm_free`.
pub fn free(function: &str, comm: CommId) -> MpiResult<()> {
    runtime::with(function, |rt| {
        rt.comm(function, comm)?;
        rt.comms.remove(comm);
        Ok(())
    })
}

/// What an intercommunicator's two leaders use to talk: the peer communicator's
/// point-to-point context, the user's tag, and the remote leader's world rank.
struct Bridge {
    context: u64,
    tag: i32,
    my_rank_in_peer: i32,
    remote_leader_world: u32,
    remote_leader_in_peer: i32,
}

/// Largest value over both groups of an intercommunicator being built: local maximum,
/// leaders swap theirs, the leader broadcasts the larger.
fn allmax_inter(
    function: &str,
    local: CommId,
    leader: usize,
    bridge: Option<&Bridge>,
    value: u64,
) -> MpiResult<u64> {
    let local_max = max_of(&allgather_bytes(function, local, &value.to_le_bytes())?);
    let mut result = local_max.to_le_bytes();
    if let Some(b) = bridge {
        let env = Envelope {
            context: b.context,
            src: b.my_rank_in_peer,
            tag: b.tag,
        };
        let mut theirs = [0u8; 8];
        sendrecv_world(
            function,
            env,
            Some(b.remote_leader_world),
            &local_max.to_le_bytes(),
            Some(b.remote_leader_in_peer),
            &mut theirs,
        )?;
        result = local_max.max(u64::from_le_bytes(theirs)).to_le_bytes();
    }
    bcast_bytes(function, local, leader, &mut result)?;
    Ok(u64::from_le_bytes(result))
}

/// `MPI_Intercomm_create`: `local` is this side's intracommunicator, `local_leader` its
/// leader's rank there; the leaders reach each other through `peer` (significant at the
/// leaders only) with `tag`.
pub fn intercomm_create(
    function: &str,
    local: CommId,
    local_leader: usize,
    peer: Option<CommId>,
    remote_leader: i32,
    tag: i32,
) -> MpiResult<CommId> {
    check_intra(function, local)?;
    let (my_rank, group) = runtime::with(function, |rt| {
        let c = rt.comm(function, local)?;
        Ok((c.rank, c.group.clone()))
    })?;
    if local_leader >= group.size() {
        return Err(MpiError::arg(
            ErrorClass::Rank,
            function,
            "local_leader",
            local_leader,
            format!(
                "not a rank of the {}-process local communicator",
                group.size()
            ),
        ));
    }
    let bridge = if my_rank == local_leader {
        let peer = peer.ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Comm,
                function,
                "peer_comm",
                "MPI_COMM_NULL",
                "the local leader needs a peer communicator",
            )
        })?;
        Some(runtime::with(function, |rt| {
            let p = rt.comm(function, peer)?;
            if remote_leader < 0 || remote_leader as usize >= p.peer_group().size() {
                return Err(MpiError::arg(
                    ErrorClass::Rank,
                    function,
                    "remote_leader",
                    remote_leader,
                    format!("not a rank of the {}-process peer communicator", p.size()),
                ));
            }
            Ok(Bridge {
                context: p.context,
                tag,
                my_rank_in_peer: p.rank as i32,
                remote_leader_world: p.peer_group().world_rank(remote_leader as usize),
                remote_leader_in_peer: remote_leader,
            })
        })?)
    } else {
        None
    };
    // The leaders swap their groups (length first), then share them locally.
    let mine: Vec<u8> = group.members.iter().flat_map(|w| w.to_le_bytes()).collect();
    let remote_len = exchange_len(function, local, local_leader, bridge.as_ref(), mine.len())?;
    let mut remote_bytes = vec![0u8; remote_len];
    if let Some(b) = &bridge {
        let env = Envelope {
            context: b.context,
            src: b.my_rank_in_peer,
            tag: b.tag,
        };
        sendrecv_world(
            function,
            env,
            Some(b.remote_leader_world),
            &mine,
            Some(b.remote_leader_in_peer),
            &mut remote_bytes,
        )?;
    }
    bcast_bytes(function, local, local_leader, &mut remote_bytes)?;
    let remote = Group::new(
        remote_bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect(),
    );
    let context = agree_with(function, &|v| {
        allmax_inter(function, local, local_leader, bridge.as_ref(), v)
    })?;
    Ok(install(function, local, context, group, Some(remote))?
        .expect("a member of the local communicator is in the local group"))
}

/// The leaders swap the byte length of their groups and share the remote one locally.
fn exchange_len(
    function: &str,
    local: CommId,
    leader: usize,
    bridge: Option<&Bridge>,
    len: usize,
) -> MpiResult<usize> {
    let mut theirs = [0u8; 8];
    if let Some(b) = bridge {
        let env = Envelope {
            context: b.context,
            src: b.my_rank_in_peer,
            tag: b.tag,
        };
        sendrecv_world(
            function,
            env,
            Some(b.remote_leader_world),
            &(len as u64).to_le_bytes(),
            Some(b.remote_leader_in_peer),
            &mut theirs,
        )?;
    }
    bcast_bytes(function, local, leader, &mut theirs)?;
    Ok(u64::from_le_bytes(theirs) as usize)
}

/// Context agreement over both groups of an existing intercommunicator (for dup):
/// its own collective context carries the exchanges, leaders are rank 0 of each side.
fn agree_inter(function: &str, comm: CommId) -> MpiResult<u64> {
    let (context, rank, local, remote) = runtime::with(function, |rt| {
        let c = rt.comm(function, comm)?;
        Ok((
            c.coll_context(),
            c.rank,
            c.group.clone(),
            c.peer_group().clone(),
        ))
    })?;
    let tag = internal_tag(0);
    agree_with(function, &|v| {
        // Local maximum at rank 0, leaders swap, each leader answers its side.
        let local_max = allmax_among(function, context, tag, &local, rank, v)?;
        let mut result = local_max.to_le_bytes();
        if rank == 0 {
            let env = Envelope {
                context,
                src: 0,
                tag: tag - 1,
            };
            let mut theirs = [0u8; 8];
            sendrecv_world(
                function,
                env,
                Some(remote.members[0]),
                &local_max.to_le_bytes(),
                Some(0),
                &mut theirs,
            )?;
            result = local_max.max(u64::from_le_bytes(theirs)).to_le_bytes();
        }
        // allmax_among again spreads the leader's (largest) answer to its side.
        let v = if rank == 0 {
            u64::from_le_bytes(result)
        } else {
            0
        };
        allmax_among(function, context, tag, &local, rank, v)
    })
}

/// `MPI_Intercomm_merge`: one intracommunicator of both groups, the `high = false`
/// side first (ties broken by the group holding world rank order's smaller leader).
pub fn intercomm_merge(function: &str, comm: CommId, high: bool) -> MpiResult<CommId> {
    let (local, remote) = runtime::with(function, |rt| {
        let c = rt.comm(function, comm)?;
        match &c.remote {
            Some(r) => Ok((c.group.clone(), r.clone())),
            None => Err(MpiError::arg(
                ErrorClass::Comm,
                function,
                "intercomm",
                "an intracommunicator",
                "an intercommunicator is required",
            )),
        }
    })?;
    // Both sides learn the other's `high` through the context agreement's channel: the
    // intercommunicator's own collective context, leader to leader.
    let theirs_high = swap_flag(function, comm, high)?;
    let local_first = if high == theirs_high {
        local.members[0] < remote.members[0]
    } else {
        !high
    };
    let mut members = Vec::with_capacity(local.size() + remote.size());
    let (a, b) = if local_first {
        (&local, &remote)
    } else {
        (&remote, &local)
    };
    members.extend(&a.members);
    members.extend(&b.members);
    let context = agree_inter(function, comm)?;
    Ok(install(function, comm, context, Group::new(members), None)?
        .expect("every member of an intercommunicator is in its merge"))
}

/// Swaps a flag with the other side of an intercommunicator (leaders swap, then each
/// leader's side learns the answer).
fn swap_flag(function: &str, comm: CommId, flag: bool) -> MpiResult<bool> {
    let (context, rank, local, remote) = runtime::with(function, |rt| {
        let c = rt.comm(function, comm)?;
        Ok((
            c.coll_context(),
            c.rank,
            c.group.clone(),
            c.peer_group().clone(),
        ))
    })?;
    let tag = internal_tag(1);
    let mut theirs = [0u8; 8];
    if rank == 0 {
        let env = Envelope {
            context,
            src: 0,
            tag: tag - 1,
        };
        sendrecv_world(
            function,
            env,
            Some(remote.members[0]),
            &u64::from(flag).to_le_bytes(),
            Some(0),
            &mut theirs,
        )?;
    }
    let v = if rank == 0 {
        u64::from_le_bytes(theirs)
    } else {
        0
    };
    Ok(allmax_among(function, context, tag, &local, rank, v)? != 0)
}
