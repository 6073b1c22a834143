//! Intercommunicators: creation over a peer communicator, context agreement across both
//! groups, and merging into an intracommunicator.
//!
//! Point-to-point needs nothing more: a sender's envelope carries its rank in its local
//! group, which is the receiver's remote rank. Each side's leader is its rank 0 once the
//! intercommunicator exists (`Comm::remote_leader`); creation uses the leaders the
//! application names.

use crate::coll::{allgather_bytes, bcast_bytes};
use crate::comm::UNDEFINED;
use crate::comm::{CommId, Group};
use crate::comm_ops::{
    agree_with, allgather_among, allmax_among, among, bcast_among, check_intra, color_key, install,
    internal_tag, max_of, sendrecv_world, with_color,
};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::header::Envelope;
use crate::runtime;
use std::sync::Arc;

/// How a leader reaches the other leader: a context, its own rank as the envelope's
/// source, and the other leader's world rank and rank on that context.
struct Link {
    context: u64,
    tag: i32,
    my_rank: i32,
    their_world: u32,
    their_rank: i32,
}

impl Link {
    /// Sends `out` to the other leader and receives the same number of bytes back.
    fn swap(&self, function: &str, out: &[u8], into: &mut [u8]) -> MpiResult<()> {
        let env = Envelope {
            context: self.context,
            src: self.my_rank,
            tag: self.tag,
        };
        sendrecv_world(
            function,
            env,
            Some(self.their_world),
            out,
            Some(self.their_rank),
            into,
        )
    }

    fn swap_u64(&self, function: &str, v: u64) -> MpiResult<u64> {
        let mut theirs = [0u8; 8];
        self.swap(function, &v.to_le_bytes(), &mut theirs)?;
        Ok(u64::from_le_bytes(theirs))
    }
}

/// Swaps `value` between the two sides while building an intercommunicator: the leader
/// of `local` swaps over `link`, then broadcasts the other side's value locally.
fn swap_during_create(
    function: &str,
    local: CommId,
    leader: usize,
    link: Option<&Link>,
    value: u64,
) -> MpiResult<u64> {
    let mut theirs = match link {
        Some(l) => l.swap_u64(function, value)?,
        None => 0,
    }
    .to_le_bytes();
    bcast_bytes(function, local, leader, &mut theirs)?;
    Ok(u64::from_le_bytes(theirs))
}

/// `MPI_Intercomm_create`: `local` is this side's intracommunicator, `local_leader` its
/// leader's rank there; the leaders reach each other through `peer` (significant at the
/// leaders only) with `tag`.
pub fn create(
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
    let link = if my_rank == local_leader {
        Some(peer_link(function, peer, remote_leader, tag)?)
    } else {
        None
    };
    // The leaders swap their groups (length first), then share them locally, as process
    // keys: the processes may belong to different jobs (spawned, connected), whose
    // process indices differ from process to process.
    let mine: Vec<u8> = runtime::with(function, |rt| {
        Ok(group
            .members
            .iter()
            .flat_map(|&w| rt.dynamic.key_of(w).to_le_bytes())
            .collect())
    })?;
    let remote_len = swap_during_create(
        function,
        local,
        local_leader,
        link.as_ref(),
        mine.len() as u64,
    )?;
    let mut remote_bytes = vec![0u8; remote_len as usize];
    if let Some(l) = &link {
        l.swap(function, &mine, &mut remote_bytes)?;
    }
    bcast_bytes(function, local, local_leader, &mut remote_bytes)?;
    let remote = runtime::with(function, |rt| {
        remote_bytes
            .chunks_exact(8)
            .map(|c| {
                let key = u64::from_le_bytes(c.try_into().expect("8 bytes"));
                rt.dynamic.index_of_key(key).ok_or_else(|| {
                    MpiError::arg(
                        ErrorClass::Comm,
                        function,
                        "peer_comm",
                        format!("remote process key {key:#x}"),
                        "a process of the remote group is not connected to this one",
                    )
                })
            })
            .collect::<MpiResult<Vec<u32>>>()
    })
    .map(Group::new)?;
    // The salt: the larger of the two local communicators' contexts, the same on both
    // sides and different for creations racing in one process.
    let here = runtime::with(function, |rt| Ok(rt.comm(function, local)?.context))?;
    let there = swap_during_create(function, local, local_leader, link.as_ref(), here)?;
    let context = agree_with(function, here.max(there), &|v| {
        let local_max = max_of(&allgather_bytes(function, local, &v.to_le_bytes())?);
        let theirs = swap_during_create(function, local, local_leader, link.as_ref(), local_max)?;
        Ok(local_max.max(theirs))
    })?;
    Ok(runtime::with(function, |rt| {
        install(rt, function, local, context, group, Some(remote))
    })?
    .expect("a member of the local communicator is in the local group"))
}

/// The leader's link to the remote leader through the peer communicator.
fn peer_link(
    function: &str,
    peer: Option<CommId>,
    remote_leader: i32,
    tag: i32,
) -> MpiResult<Link> {
    let peer = peer.ok_or_else(|| {
        MpiError::arg(
            ErrorClass::Comm,
            function,
            "peer_comm",
            "MPI_COMM_NULL",
            "the local leader needs a peer communicator",
        )
    })?;
    runtime::with(function, |rt| {
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
        Ok(Link {
            context: p.context,
            tag,
            my_rank: p.rank as i32,
            their_world: p.peer_group().world_rank(remote_leader as usize),
            their_rank: remote_leader,
        })
    })
}

/// Both sides of an existing intercommunicator, for exchanges on its collective
/// context: members reach their leader (rank 0) with `allmax_among`, the leaders each
/// other with a `Link`.
struct Sides {
    context: u64,
    rank: usize,
    local: Arc<Group>,
    remote: Arc<Group>,
    leaders: Link,
}

impl Sides {
    fn of(function: &str, comm: CommId, tag: i32) -> MpiResult<Sides> {
        runtime::with(function, |rt| {
            let c = rt.comm(function, comm)?;
            let remote = c.remote.as_ref().ok_or_else(|| {
                MpiError::arg(
                    ErrorClass::Comm,
                    function,
                    "intercomm",
                    "an intracommunicator",
                    "an intercommunicator is required",
                )
            })?;
            Ok(Sides {
                context: c.coll_context(),
                rank: c.rank,
                local: c.group.clone(),
                remote: remote.clone(),
                leaders: Link {
                    context: c.coll_context(),
                    tag: tag - 1,
                    my_rank: 0,
                    their_world: remote.world_rank(0),
                    their_rank: 0,
                },
            })
        })
    }

    /// Largest `value` on this side, known to every member of it.
    fn local_max(&self, function: &str, tag: i32, value: u64) -> MpiResult<u64> {
        allmax_among(function, self.context, tag, &self.local, self.rank, value)
    }

    /// Every member's `mine` (all of one length), in rank order, known to every member
    /// of this side.
    fn gather(&self, function: &str, tag: i32, mine: &[u8]) -> MpiResult<Vec<u8>> {
        allgather_among(function, self.context, tag, &self.local, self.rank, mine)
    }

    /// The other side's `at_leader` (significant at the leader only), `len` bytes known
    /// to every member, to every member of this side.
    fn swap_bytes(
        &self,
        function: &str,
        tag: i32,
        at_leader: &[u8],
        len: usize,
    ) -> MpiResult<Vec<u8>> {
        let mut theirs = vec![0u8; len];
        if self.rank == 0 {
            self.leaders.swap(function, at_leader, &mut theirs)?;
        }
        let env = among(self.context, tag, &self.local, self.rank);
        bcast_among(function, env, &self.local, self.rank, &mut theirs)?;
        Ok(theirs)
    }

    /// The other side's value of `at_leader` (significant at the leader only), known to
    /// every member of this side.
    fn swap(&self, function: &str, tag: i32, at_leader: u64) -> MpiResult<u64> {
        let theirs = self.swap_bytes(function, tag, &at_leader.to_le_bytes(), 8)?;
        Ok(u64::from_le_bytes(theirs.try_into().expect("8 bytes")))
    }
}

/// Context agreement over both groups of an intercommunicator (for dup and merge).
pub fn agree(function: &str, comm: CommId) -> MpiResult<u64> {
    let tag = internal_tag(0);
    let sides = Sides::of(function, comm, tag)?;
    agree_with(function, sides.context, &|v| {
        let mine = sides.local_max(function, tag, v)?;
        Ok(mine.max(sides.swap(function, tag, mine)?))
    })
}

/// `MPI_Intercomm_merge`: one intracommunicator of both groups, the `high = false`
/// side first (equal `high`: the side whose leader has the lower process key first).
pub fn merge(function: &str, comm: CommId, high: bool) -> MpiResult<CommId> {
    let tag = internal_tag(1);
    let sides = Sides::of(function, comm, tag)?;
    let remote = runtime::with(function, |rt| {
        Ok(rt.comm(function, comm)?.peer_group().clone())
    })?;
    let theirs_high = sides.swap(function, tag, u64::from(high))? != 0;
    let local = &sides.local;
    // Keys, not indices: processes of another job have different indices on each side.
    let local_first = if high == theirs_high {
        runtime::with(function, |rt| {
            Ok(rt.dynamic.key_of(local.members[0]) < rt.dynamic.key_of(remote.members[0]))
        })?
    } else {
        !high
    };
    let (a, b) = if local_first {
        (local, &remote)
    } else {
        (&remote, local)
    };
    let members = a.members.iter().chain(&b.members).copied().collect();
    let context = agree(function, comm)?;
    let group = Group::new(members);
    Ok(runtime::with(function, |rt| {
        install(rt, function, comm, context, group, None)
    })?
    .expect("every member of an intercommunicator is in its merge"))
}

/// `MPI_Comm_split` on an intercommunicator (MPI-2.2): the members of this group with
/// one color form the new local group and those of the other group with that color the
/// remote one, each ordered by key, then by rank; `MPI_UNDEFINED`, or a color the other
/// group does not have, gets no communicator.
pub fn split(function: &str, comm: CommId, color: i32, key: i32) -> MpiResult<Option<CommId>> {
    let tag = internal_tag(2);
    let sides = Sides::of(function, comm, tag)?;
    let ours = sides.gather(function, tag, &color_key(color, key))?;
    let theirs = sides.swap_bytes(function, tag, &ours, 8 * sides.remote.size())?;
    let context = agree(function, comm)?;
    if color == UNDEFINED {
        return Ok(None);
    }
    let local = with_color(&ours, color, &sides.local);
    let remote = with_color(&theirs, color, &sides.remote);
    if remote.size() == 0 {
        return Ok(None);
    }
    runtime::with(function, |rt| {
        install(rt, function, comm, context, local, Some(remote))
    })
}

/// `MPI_Comm_create` on an intercommunicator (MPI-2.2): `group`, a subgroup of the local
/// group and the same in every member of this side, becomes the new local group, and the
/// other side's choice the remote group; the calling process outside `group`, or a side
/// choosing nobody, gets no communicator.
pub fn create_subset(function: &str, comm: CommId, group: Arc<Group>) -> MpiResult<Option<CommId>> {
    let tag = internal_tag(3);
    let sides = Sides::of(function, comm, tag)?;
    let remote = &sides.remote;
    // One byte per member of this side: whether it is in `group`.
    let ours: Vec<u8> = sides
        .local
        .members
        .iter()
        .map(|&w| u8::from(group.rank_of(w).is_some()))
        .collect();
    let theirs = sides.swap_bytes(function, tag, &ours, remote.size())?;
    let context = agree(function, comm)?;
    let chosen = Group::new(
        theirs
            .iter()
            .enumerate()
            .filter(|&(_, &inside)| inside != 0)
            .map(|(r, _)| remote.world_rank(r))
            .collect(),
    );
    if chosen.size() == 0 || group.size() == 0 {
        return Ok(None);
    }
    runtime::with(function, |rt| {
        install(rt, function, comm, context, group, Some(chosen))
    })
}
