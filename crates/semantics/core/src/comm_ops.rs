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

use crate::coll::{allgather_bytes, Members};
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

pub(crate) fn claimed() -> std::sync::MutexGuard<'static, BTreeSet<u64>> {
    CLAIMED.lock().unwrap_or_else(|p| p.into_inner())
}

/// This process's proposal: the lowest id above every retired (below `next`) and
/// claimed one.
pub(crate) fn propose(next: u64, claimed: &BTreeSet<u64>) -> u64 {
    next.max(claimed.last().map_or(0, |&c| c + 2))
}

/// Claims `candidate` if it is neither retired nor claimed.
pub(crate) fn claim(next: u64, claimed: &mut BTreeSet<u64>, candidate: u64) -> bool {
    candidate >= next && claimed.insert(candidate)
}

/// Ends a round: drops this round's claim (a successful candidate becomes retired like
/// every id below it; a failed one too, so the next round proposes above it).
pub(crate) fn settle(
    next: &mut u64,
    claimed: &mut BTreeSet<u64>,
    candidate: u64,
    claimed_it: bool,
) {
    if claimed_it {
        claimed.remove(&candidate);
    }
    *next = (*next).max(candidate + 2);
}

/// How far past the agreed proposal a retry round of the creation with `salt` looks.
/// Two creations racing in the same processes may refuse each other round after round
/// if they keep picking the same candidate; a spread that differs between creations
/// (their salts differ: parents are distinct communicators) breaks the tie, each round
/// with probability 7/8. The first round uses no spread, so ids stay dense.
pub(crate) fn spread(salt: u64, round: u64) -> u64 {
    if round == 0 {
        return 0;
    }
    // splitmix64 finaliser: any change of salt or round changes every output bit.
    let mut z = salt ^ round.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    2 * ((z ^ (z >> 31)) % 8)
}

/// Agrees on a context id with the processes `allmax` reaches (`allmax` returns the
/// largest value every participant passed). `salt` is the same in every participant
/// and differs between creations that may run at once in one process.
pub(crate) fn agree_with(
    function: &str,
    salt: u64,
    allmax: &dyn Fn(u64) -> MpiResult<u64>,
) -> MpiResult<u64> {
    for round in 0.. {
        let mine = runtime::with(function, |rt| Ok(propose(rt.next_context, &claimed())))?;
        let candidate = allmax(mine)? + spread(salt, round);
        let ok = runtime::with(function, |rt| {
            Ok(claim(rt.next_context, &mut claimed(), candidate))
        })?;
        // The largest "refusal" is 0 exactly when every participant claimed it.
        let refused = allmax(u64::from(!ok))?;
        runtime::with(function, |rt| {
            settle(&mut rt.next_context, &mut claimed(), candidate, ok);
            Ok(())
        })?;
        if refused == 0 {
            return Ok(candidate);
        }
    }
    unreachable!("rounds are unbounded")
}

pub(crate) fn max_of(all: &[u8]) -> u64 {
    all.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8-byte chunk")))
        .max()
        .unwrap_or(0)
}

/// Agreement among all members of `parent`, over its collective context.
fn agree_context(function: &str, parent: CommId) -> MpiResult<u64> {
    let salt = runtime::with(function, |rt| Ok(rt.comm(function, parent)?.context))?;
    agree_with(function, salt, &|v| {
        Ok(max_of(&allgather_bytes(
            function,
            parent,
            &v.to_le_bytes(),
        )?))
    })
}

/// `per_world[w]` for every member of `group`, in group order.
fn per_member(per_world: &[u32], group: &Group) -> Arc<Vec<u32>> {
    Arc::new(
        group
            .members
            .iter()
            .map(|&w| per_world[w as usize])
            .collect(),
    )
}

/// Inserts the communicator `group` forms with `context` (inheriting `parent`'s error
/// handler); `None` when this process is not in `group`.
pub(crate) fn install(
    rt: &mut Runtime,
    function: &str,
    parent: CommId,
    context: u64,
    group: Arc<Group>,
    remote: Option<Arc<Group>>,
) -> MpiResult<Option<CommId>> {
    let Some(rank) = group.rank_of(rt.rank) else {
        return Ok(None);
    };
    let p = rt.comm(function, parent)?;
    let errhandler = p.errhandler;
    let nodes = per_member(&rt.node_of, &group);
    let sites = per_member(&rt.site_of, &group);
    Ok(Some(rt.comms.insert(Comm {
        context,
        group,
        rank,
        remote,
        name: String::new(),
        errhandler,
        attributes: BTreeMap::new(),
        nodes,
        sites,
        coll_seq: 0,
        topology: None,
        hints: BTreeMap::new(),
        local_team: Default::default(),
    })))
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
        Some(_) => crate::intercomm::agree(function, comm)?,
    };
    let new = runtime::with(function, |rt| {
        install(rt, function, comm, context, group, remote)
    })?
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
/// then by rank in the parent; color `MPI_UNDEFINED` gets none. An intercommunicator
/// splits into intercommunicators ([`crate::intercomm::split`]).
pub fn split(function: &str, comm: CommId, color: i32, key: i32) -> MpiResult<Option<CommId>> {
    if is_inter(function, comm)? {
        return crate::intercomm::split(function, comm, color, key);
    }
    let m = Members::of(function, comm)?;
    let all = allgather_bytes(function, comm, &color_key(color, key))?;
    let context = agree_context(function, comm)?;
    if color == UNDEFINED {
        return Ok(None);
    }
    let group = with_color(&all, color, &m.group);
    runtime::with(function, |rt| {
        install(rt, function, comm, context, group, None)
    })
}

/// A member's entry in a split: its color, then its key.
pub(crate) fn color_key(color: i32, key: i32) -> [u8; 8] {
    let mut entry = [0u8; 8];
    entry[..4].copy_from_slice(&color.to_le_bytes());
    entry[4..].copy_from_slice(&key.to_le_bytes());
    entry
}

/// The members of `group` whose [`color_key`] entry in `entries` (by rank) has `color`,
/// ordered by key, then by rank.
pub(crate) fn with_color(entries: &[u8], color: i32, group: &Group) -> Arc<Group> {
    let word = |c: &[u8]| i32::from_le_bytes(c.try_into().expect("4 bytes"));
    let mut chosen: Vec<(i32, usize)> = entries
        .chunks_exact(8)
        .enumerate()
        .filter(|(_, e)| word(&e[..4]) == color)
        .map(|(rank, e)| (word(&e[4..]), rank))
        .collect();
    chosen.sort();
    Group::new(chosen.iter().map(|&(_, r)| group.world_rank(r)).collect())
}

/// `MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)`: one communicator per node.
pub fn split_shared(function: &str, comm: CommId, key: i32) -> MpiResult<Option<CommId>> {
    split_by(function, comm, key, |c| c.nodes[c.rank])
}

/// `MPI_Comm_split_type(MPIX_COMM_TYPE_CLUSTER)`: one communicator per site (IMPI client).
pub fn split_site(function: &str, comm: CommId, key: i32) -> MpiResult<Option<CommId>> {
    split_by(function, comm, key, |c| c.sites[c.rank])
}

/// Splits by the color `color_of` gives the caller (intracommunicators only, as
/// `MPI_Comm_split_type` is defined).
fn split_by(
    function: &str,
    comm: CommId,
    key: i32,
    color_of: impl FnOnce(&Comm) -> u32,
) -> MpiResult<Option<CommId>> {
    check_intra(function, comm)?;
    let color = runtime::with(function, |rt| Ok(color_of(rt.comm(function, comm)?)))?;
    split(function, comm, color as i32, key)
}

fn is_inter(function: &str, comm: CommId) -> MpiResult<bool> {
    runtime::with(function, |rt| Ok(rt.comm(function, comm)?.is_inter()))
}

pub(crate) fn check_intra(function: &str, comm: CommId) -> MpiResult<()> {
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
/// (disjoint) groups, each a subgroup of `comm`. Returns `None` outside the group. On an
/// intercommunicator the group is the new local group ([`crate::intercomm::create_subset`]).
pub fn create(function: &str, comm: CommId, group: Arc<Group>) -> MpiResult<Option<CommId>> {
    check_subgroup(function, comm, &group)?;
    if is_inter(function, comm)? {
        return crate::intercomm::create_subset(function, comm, group);
    }
    let context = agree_context(function, comm)?;
    runtime::with(function, |rt| {
        install(rt, function, comm, context, group, None)
    })
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
/// context: far below the tags collectives use, a distinct even one for each user tag
/// below 2^29 (creations that run at once must use distinct tags; halving, as this
/// did before, gave tags 2k and 2k+1 the same one). The odd tag under each is its
/// intercommunicator leaders' link.
pub(crate) fn internal_tag(user_tag: i32) -> i32 {
    i32::MIN / 2 - 2 * (user_tag & 0x1fff_ffff)
}

/// Sends `out` to world rank `to` and receives `into` from world rank `from` on
/// `context` with `tag`, and waits for both.
pub(crate) fn sendrecv_world(
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
                rt.st.requests.discard(r);
            }
        })
    })
}

/// The envelope with which rank `rank` of `group` talks to the group's other members on
/// `context` with `tag`. It names the sender by its process index, not its rank in
/// `group`: successive creations on one parent with different groups share the context
/// and tag, and a member that is not in the next group goes on to the one after, whose
/// messages a rank in the group would have mistaken for its own group's (MPICH's
/// comm/comm_group_rand hung so).
pub(crate) fn among(context: u64, tag: i32, group: &Group, rank: usize) -> Envelope {
    Envelope {
        context,
        src: group.members[rank] as i32,
        tag,
    }
}

/// Every member's `mine` (all of one length), in `group` order, at rank 0 of `group`;
/// empty at the others.
fn gather_at_first(
    function: &str,
    env: Envelope,
    group: &Group,
    rank: usize,
    mine: &[u8],
) -> MpiResult<Vec<u8>> {
    if rank != 0 {
        sendrecv_world(function, env, Some(group.members[0]), mine, None, &mut [])?;
        return Ok(Vec::new());
    }
    let mut all = vec![0u8; mine.len() * group.size()];
    all[..mine.len()].copy_from_slice(mine);
    for (&member, into) in group.members[1..]
        .iter()
        .zip(all.chunks_exact_mut(mine.len().max(1)).skip(1))
    {
        sendrecv_world(function, env, None, &[], Some(member as i32), into)?;
    }
    Ok(all)
}

/// Every member's `mine` (all of one length), in `group` order, known to every member of
/// `group` (this process is rank `rank`): a gather to rank 0 and its broadcast, each on
/// `context` with `tag` (see [`among`]).
pub(crate) fn allgather_among(
    function: &str,
    context: u64,
    tag: i32,
    group: &Group,
    rank: usize,
    mine: &[u8],
) -> MpiResult<Vec<u8>> {
    let env = among(context, tag, group, rank);
    let mut all = gather_at_first(function, env, group, rank, mine)?;
    all.resize(mine.len() * group.size(), 0);
    bcast_among(function, env, group, rank, &mut all)?;
    Ok(all)
}

/// Rank 0's `data` to every member of `group` (the others know its length), with the
/// envelope `env` names this process in.
pub(crate) fn bcast_among(
    function: &str,
    env: Envelope,
    group: &Group,
    rank: usize,
    data: &mut [u8],
) -> MpiResult<()> {
    if rank != 0 {
        return sendrecv_world(
            function,
            env,
            None,
            &[],
            Some(group.members[0] as i32),
            data,
        );
    }
    for &member in &group.members[1..] {
        sendrecv_world(function, env, Some(member), data, None, &mut [])?;
    }
    Ok(())
}

/// Largest `value` among the members of `group`: a gather to rank 0 and a broadcast of
/// the largest (see [`among`]).
pub(crate) fn allmax_among(
    function: &str,
    context: u64,
    tag: i32,
    group: &Group,
    rank: usize,
    value: u64,
) -> MpiResult<u64> {
    let env = among(context, tag, group, rank);
    let all = gather_at_first(function, env, group, rank, &value.to_le_bytes())?;
    let mut max = max_of(&all).to_le_bytes();
    bcast_among(function, env, group, rank, &mut max)?;
    Ok(u64::from_le_bytes(max))
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
    let new = agree_with(function, context ^ tag as u64, &|v| {
        allmax_among(function, context, tag, &group, rank, v)
    })?;
    runtime::with(function, |rt| install(rt, function, comm, new, group, None))
}

/// `MPI_Comm_free`.
pub fn free(function: &str, comm: CommId) -> MpiResult<()> {
    runtime::with(function, |rt| {
        rt.comm(function, comm)?;
        rt.comms.remove(comm);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One process's context-id state.
    #[derive(Default)]
    struct Process {
        next: u64,
        claimed: BTreeSet<u64>,
    }

    /// Two creations, A and B, run at once over the same two processes, with every
    /// step of each round interleaved in the order `order` gives (the worst case:
    /// each process serves the creations in the opposite order). Returns their ids.
    fn race(order: [[usize; 2]; 2]) -> (u64, u64) {
        let mut p = [Process::default(), Process::default()];
        let mut done: [Option<u64>; 2] = [None, None];
        let salt = [4u64, 6];
        for round in 0..100 {
            let live: Vec<usize> = (0..2).filter(|&c| done[c].is_none()).collect();
            if live.is_empty() {
                break;
            }
            let mut candidate = [0u64; 2];
            for &c in &live {
                candidate[c] = p.iter().map(|q| propose(q.next, &q.claimed)).max().unwrap()
                    + spread(salt[c], round);
            }
            let mut ok = [[false; 2]; 2];
            for (i, q) in p.iter_mut().enumerate() {
                for &c in &order[i] {
                    if live.contains(&c) {
                        ok[c][i] = claim(q.next, &mut q.claimed, candidate[c]);
                    }
                }
            }
            for &c in &live {
                for (i, q) in p.iter_mut().enumerate() {
                    settle(&mut q.next, &mut q.claimed, candidate[c], ok[c][i]);
                }
                if ok[c].iter().all(|&x| x) {
                    done[c] = Some(candidate[c]);
                }
            }
        }
        (done[0].expect("A agreed"), done[1].expect("B agreed"))
    }

    #[test]
    fn concurrent_creations_get_distinct_ids() {
        for order in [[[0, 1], [1, 0]], [[0, 1], [0, 1]], [[1, 0], [0, 1]]] {
            let (a, b) = race(order);
            assert_ne!(a, b, "order {order:?}");
        }
    }

    #[test]
    fn retired_and_claimed_ids_are_never_proposed_or_claimed() {
        let mut claimed = BTreeSet::from([10]);
        assert_eq!(propose(4, &claimed), 12);
        assert!(!claim(4, &mut claimed, 10), "claimed by another creation");
        assert!(
            !claim(14, &mut claimed, 12),
            "below the next free id: retired"
        );
        assert!(claim(4, &mut claimed, 12));
        let mut next = 4;
        settle(&mut next, &mut claimed, 12, true);
        assert_eq!((next, claimed.contains(&12)), (14, false));
    }
}
