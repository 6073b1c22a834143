//! The light path of small blocking collectives on a communicator whose members all
//! share a node.
//!
//! There every message of a small collective is one copy into a peer's shared-memory
//! ring, so the schedule engine's set-up (regions, steps, requests, one lock per round)
//! costs more than the messages themselves. Here the call takes its collective tag like
//! a schedule does, writes its messages straight into the peers' rings and takes theirs
//! straight from its own rings (or from the unexpected queue), all under one lock: a
//! broadcast's root writes to every member and returns, everyone else reads once, so
//! back-to-back broadcasts pipeline; all-to-all, allgather and allreduce send each
//! member's message to every other member in one round; a barrier runs the schedule's
//! dissemination rounds without the schedule (gathering at one member and answering had
//! measured slower than the schedule: 4 members 3.8 us against 2.3; the dissemination
//! here 2.5 against its 3.1, 8 members 8.8 against 11.0).
//!
//! Every member decides alike whether a call takes this path (the same communicator,
//! message size and settings), so no member runs a schedule against another's light
//! path; the one exception, all-to-all with unequal blocks, stays on the schedule above
//! two members (see [`alltoall`]).
//!
//! The communicator comes as a [`Which`]: the C layer passes its handle's resolution, so
//! that the call takes the runtime lock once in all (and resolves the handle only there).
//!
//! It serves messages within the shared-memory eager limit, at most [`MAX_MEMBERS`]
//! members, and collectives for which no algorithm is forced (`CROSSMPI_COLL_*`), at
//! every thread level: a member's thread level is its own, so it cannot take part in the
//! choice. That is safe with `MPI_THREAD_MULTIPLE` too, where the wait lets go of the
//! lock between polls: no receive of another thread can match the call's messages (the
//! collective context and the call's own tag), and the call's scratch memory is its own
//! while it runs (taken from the runtime, given back at the end).

use super::sched::{take_tag, truncated};
use super::select::forced;
use crate::comm::{Comm, CommId, LocalTeam};
use crate::error::MpiResult;
use crate::header::Envelope;
use crate::p2p::DirectArrival;
use crate::proto::Route;
use crate::reduce::ReduceOp;
use crate::request::{ReqId, SendMode};
use crate::runtime::{self, Runtime};
use crate::userbuf::{self, UserBuf};
use std::cell::Cell;

/// Most members a call serves. One round of all-to-all messages grows as n², while the
/// schedule's algorithms take log2 n rounds of n messages: with 4 and 8 members on 2
/// cores the one round measured faster (docs/architecture.md, "Collectives"). It also
/// bounds the per-member state, which lives on the stack.
const MAX_MEMBERS: usize = 8;

/// The communicator of a call, resolved under the call's lock: the id itself, or the
/// resolution of the caller's handle (whose error the call returns).
pub trait Which: FnOnce(&Runtime) -> MpiResult<CommId> {}
impl<F: FnOnce(&Runtime) -> MpiResult<CommId>> Which for F {}

/// A communicator already resolved.
pub fn known(comm: CommId) -> impl Which {
    move |_: &Runtime| Ok(comm)
}

/// One light-path call: the communicator's collective context, the call's tag, this
/// member's index, and every member's world rank and shared-memory index.
struct Call {
    context: u64,
    tag: i32,
    me: usize,
    n: usize,
    members: [(u32, usize); MAX_MEMBERS],
}

/// Where the receiving half from one member stands.
#[derive(Clone, Copy)]
enum Inbound {
    /// Not yet arrived: polled in the member's ring, and in the unexpected queue when
    /// that has grown since it was last searched (`searched`: the matching engine's
    /// arrival count then), which keeps each polling round to a look at one cell.
    Direct {
        searched: Option<u64>,
    },
    /// Arrived through the progress engine; its receive request completes it.
    Posted(ReqId),
    Done,
}

/// Every member's world rank and shared-memory index (this member's own: 0) when every
/// other member is reached through shared memory and belongs to this member's site
/// (members of other sites, even on this node, take the site-aware algorithms).
fn local_team(rt: &Runtime, c: &Comm) -> Option<LocalTeam> {
    let site = c.sites[c.rank];
    (0..c.group.size())
        .map(|i| {
            if i == c.rank {
                return Some((0, 0));
            }
            let world = c.group.world_rank(i);
            match rt.st.peers[world as usize].route {
                Route::Shm { local } if c.sites[i] == site => Some((world, local)),
                _ => None,
            }
        })
        .collect()
}

impl Call {
    /// Takes the call's tag when the light path serves a call on `comm` moving at most
    /// `bytes` bytes between any two members, of collective `coll` (its
    /// `CROSSMPI_COLL_` name), with `n_ok` accepting the member count: fills `self` in
    /// place and returns true, else returns false. In place rather than returned: a
    /// returned call (its member table is 128 bytes) was copied on the way with loads
    /// wider than the stores that wrote it, and such a load waits until every older
    /// store has reached the cache, the previous call's write into a peer's ring among
    /// them (a cross-core transfer; perf put a quarter of a 2-member broadcast there).
    fn open(
        &mut self,
        rt: &mut Runtime,
        comm: CommId,
        coll: &str,
        bytes: u64,
        n_ok: impl FnOnce(usize) -> bool,
    ) -> bool {
        if bytes > rt.st.shm_eager || forced(coll).is_some() {
            return false;
        }
        let Some(c) = rt.comms.get(comm) else {
            return false;
        };
        let n = c.group.size();
        // One member too: a schedule's set-up for a collective with nobody to talk to
        // cost 180 ns an allreduce (Open MPI 9); a solver's dot product over a process
        // row of one member makes one every iteration.
        if c.remote.is_some() || !(1..=MAX_MEMBERS).contains(&n) || !n_ok(n) {
            return false;
        }
        let me = c.rank;
        let Some(team) = c.local_team.get_or_init(|| local_team(rt, c)).as_deref() else {
            return false;
        };
        self.members[..n].copy_from_slice(team);
        let Some(c) = rt.comms.get_mut(comm) else {
            return false;
        };
        self.context = c.coll_context();
        self.tag = take_tag(c);
        self.me = me;
        self.n = n;
        true
    }

    /// The other members, starting after this one (so that not everyone writes to
    /// member 0 first).
    fn others(&self) -> impl Iterator<Item = usize> + '_ {
        (self.me + 1..self.n).chain(0..self.me)
    }

    /// Sends `buf` to member `peer`: written at once when the ring and the credit allow
    /// (no request), else started as a request the caller waits for. Inlined: called, it
    /// returned the request through memory written in 4-byte parts and read back in 8,
    /// and that read waited for the write into the peer's ring just before it to reach
    /// the cache (a cross-core transfer; a seventh of the light path's own time in a
    /// 2-member 8-byte allreduce).
    #[inline(always)]
    fn send(&self, rt: &mut Runtime, peer: usize, buf: &UserBuf) -> Option<ReqId> {
        let (world, local) = self.members[peer];
        let env = Envelope {
            context: self.context,
            src: self.me as i32,
            tag: self.tag,
        };
        if rt.write_inline(world, local, env, buf) {
            return None;
        }
        let req = rt
            .st
            .start_send(buf.clone(), world, env, SendMode::Standard);
        rt.flush();
        Some(req)
    }

    /// Whether every send [`Call::send`] left as a request has gone. Pushes what is queued
    /// to those members first: a message waiting for room in a ring then goes as soon as
    /// the receiver frees some, not at the next full progress (up to 32 polls later, while
    /// every later call's message to that member queues behind it).
    fn sends_done(&self, rt: &mut Runtime, sending: &mut [Option<ReqId>; MAX_MEMBERS]) -> bool {
        for (j, req) in sending.iter_mut().enumerate().take(self.n) {
            if let Some(r) = *req {
                rt.flush_peer(self.members[j].0 as usize);
                if rt.take_if_done(r).is_none() {
                    return false;
                }
                *req = None;
            }
        }
        true
    }

    /// One attempt to receive member `peer`'s message into `buf`.
    fn poll_recv(
        &self,
        rt: &mut Runtime,
        function: &str,
        peer: usize,
        buf: &UserBuf,
        inbound: &mut Inbound,
    ) -> MpiResult<()> {
        let (world, local) = self.members[peer];
        if let Inbound::Direct { searched } = inbound {
            let key = (self.context, peer as i32, self.tag);
            match rt.poll_direct(local, world, key, buf, searched) {
                Some(DirectArrival::Matched(req)) => *inbound = Inbound::Posted(req),
                Some(DirectArrival::Received(_)) => *inbound = Inbound::Done,
                None => {}
            }
        }
        if let Inbound::Posted(req) = *inbound {
            if let Some(status) = rt.take_if_done(req) {
                *inbound = Inbound::Done;
                if status.error != 0 {
                    return Err(truncated(function, status.source));
                }
            }
        }
        Ok(())
    }
}

/// Where a member's message goes.
enum Into {
    Buf(UserBuf),
    /// That member's slot of the call's scratch memory.
    Slot,
}

/// The call's scratch memory holds one slot per member, each 16-byte aligned (user
/// operators get typed pointers): the bytes of member `i`'s `len`-byte message.
fn slot(i: usize, len: usize) -> std::ops::Range<usize> {
    let start = i * len.next_multiple_of(16);
    start..start + len
}

/// What a collective does in a light-path call, where every member sends to every other
/// and receives from every other: the message this member sends to each member (given
/// both indices), and where each member's message goes.
struct Plan<O, I> {
    out: O,
    into: I,
    /// `finish` runs the user's code (an operator, which may call MPI), so it runs once
    /// the call has let the runtime go: a call made while another holds it cannot go in.
    user_code: bool,
}

/// Runs one light-path call when it applies (else `Ok(false)`, and nothing happened).
/// `n_ok` accepts the member count; `finish` runs once every message has arrived and
/// gone (after the call, when it runs user code: [`Plan::user_code`]), with this
/// member's index, the member count and the slots ([`slot`]); the scratch memory is kept
/// for the next call.
fn run<O, I>(
    function: &str,
    comm: impl Which,
    coll: &str,
    bytes: u64,
    n_ok: impl FnOnce(usize) -> bool,
    plan: Plan<O, I>,
    finish: impl FnOnce(usize, usize, &mut [u8]) -> MpiResult<()>,
) -> MpiResult<bool>
where
    O: Fn(usize, usize) -> UserBuf,
    I: Fn(usize) -> Into,
{
    let len = bytes as usize;
    let mut finish = Some(finish);
    let mut sending: [Option<ReqId>; MAX_MEMBERS] = [None; MAX_MEMBERS];
    let mut targets: [Option<UserBuf>; MAX_MEMBERS] = Default::default();
    let mut inbound = [Inbound::Done; MAX_MEMBERS];
    // The members whose message has not arrived yet: a step polls only those.
    let mut pending = [0usize; MAX_MEMBERS];
    let mut npending = 0;
    let mut scratch = Vec::new();
    // This member's index and the member count, for a `finish` run after the call.
    let mut members = (0, 0);
    let taken = drive(function, comm, coll, bytes, n_ok, |rt, c, first| {
        if first {
            scratch = std::mem::take(&mut rt.colls.light_scratch);
            let need = slot(c.n, len).start + 15;
            if scratch.len() < need {
                scratch.resize(need, 0);
            }
            let base = aligned(&mut scratch).as_mut_ptr() as usize;
            for j in c.others() {
                targets[j] = Some(match (plan.into)(j) {
                    Into::Buf(b) => b,
                    Into::Slot => userbuf::bytes(base + slot(j, len).start, len),
                });
                inbound[j] = Inbound::Direct { searched: None };
                pending[npending] = j;
                npending += 1;
            }
            for j in c.others() {
                sending[j] = c.send(rt, j, &(plan.out)(c.me, j));
            }
        }
        let sent = c.sends_done(rt, &mut sending);
        let mut k = 0;
        while k < npending {
            let j = pending[k];
            let buf = targets[j].as_ref().expect("a pending member has a target");
            c.poll_recv(rt, function, j, buf, &mut inbound[j])?;
            if matches!(inbound[j], Inbound::Done) {
                npending -= 1;
                pending[k] = pending[npending];
            } else {
                k += 1;
            }
        }
        if npending > 0 || !sent {
            return Ok(false);
        }
        if plan.user_code {
            members = (c.me, c.n);
            return Ok(true);
        }
        let finish = finish.take().expect("finished once");
        let done = finish(c.me, c.n, aligned(&mut scratch));
        rt.colls.light_scratch = std::mem::take(&mut scratch);
        done.map(|_| true)
    })?;
    if !taken || !plan.user_code {
        return Ok(taken);
    }
    let finish = finish.take().expect("finished once");
    let done = finish(members.0, members.1, aligned(&mut scratch));
    runtime::with(function, |rt| {
        rt.colls.light_scratch = std::mem::take(&mut scratch);
        Ok(())
    })?;
    done.map(|_| true)
}

/// A member's packed data: borrowed when dense, else packed into `scratch`.
fn packed<'a>(buf: &'a UserBuf, scratch: &'a mut Vec<u8>) -> &'a [u8] {
    if let Some(d) = buf.dense(0, buf.bytes() as usize) {
        return d;
    }
    scratch.resize(buf.bytes() as usize, 0);
    buf.pack_into(0, scratch);
    scratch
}

/// The 16-byte aligned part of `v`, at least `len` bytes once `v` holds `len + 15`.
fn aligned(v: &mut [u8]) -> &mut [u8] {
    let pad = v.as_ptr().align_offset(16).min(v.len());
    &mut v[pad..]
}

/// One block per member: listed, or equal dense blocks back to back (what the C layer
/// passes for predefined types, before it knows the member count).
pub enum Blocks<'a> {
    Each(&'a [UserBuf]),
    Dense { base: usize, len: usize },
}

impl Blocks<'_> {
    fn get(&self, i: usize) -> UserBuf {
        match self {
            Blocks::Each(v) => v[i].clone(),
            Blocks::Dense { base, len } => userbuf::bytes(base + i * len, *len),
        }
    }

    /// Whether there is a block for each of `n` members.
    fn fits(&self, n: usize) -> bool {
        match self {
            Blocks::Each(v) => v.len() == n,
            Blocks::Dense { .. } => true,
        }
    }

    /// The size of the largest block: the message size the light path's limit applies to.
    fn largest(&self) -> u64 {
        match self {
            Blocks::Each(v) => v.iter().map(|b| b.bytes()).max().unwrap_or(0),
            Blocks::Dense { len, .. } => *len as u64,
        }
    }
}

/// `MPI_Barrier`: dissemination, in rounds of distance 1, 2, 4, ...: an empty message to
/// the member that far ahead, then the one from the member that far behind, until the
/// distance reaches the member count. Each round's message comes from another member
/// (distances below 8 differ modulo the count), so the call's one tag tells them apart.
pub fn barrier(function: &str, comm: impl Which) -> MpiResult<bool> {
    let empty = userbuf::bytes(0, 0);
    let mut sending: [Option<ReqId>; MAX_MEMBERS] = [None; MAX_MEMBERS];
    let mut inbound = Inbound::Direct { searched: None };
    // The distance of the current round.
    let mut distance = 1;
    drive(
        function,
        comm,
        "BARRIER",
        0,
        |_| true,
        |rt, c, first| {
            if first && c.n > 1 {
                let to = (c.me + 1) % c.n;
                sending[to] = c.send(rt, to, &empty);
            }
            while distance < c.n {
                let from = (c.me + c.n - distance) % c.n;
                c.poll_recv(rt, function, from, &empty, &mut inbound)?;
                if !matches!(inbound, Inbound::Done) {
                    return Ok(false);
                }
                inbound = Inbound::Direct { searched: None };
                distance *= 2;
                if distance < c.n {
                    let to = (c.me + distance) % c.n;
                    sending[to] = c.send(rt, to, &empty);
                }
            }
            Ok(c.sends_done(rt, &mut sending))
        },
    )
}

/// `MPI_Bcast` from `root` (an invalid root takes the general path, which reports it).
///
/// Not a [`run`] plan: a member other than the root waits for one message, so the
/// per-member bookkeeping, scratch memory and finishing step of [`run`] would be a large
/// part of the call's cost (at 2 members, 8 bytes: 0.17 us a call through [`run`], 0.13
/// with this loop and [`drive`]).
pub fn bcast(function: &str, comm: impl Which, buf: &UserBuf, root: i32) -> MpiResult<bool> {
    let root_index = root as usize;
    let in_range = |n: usize| (0..n as i32).contains(&root);
    let mut sending: [Option<ReqId>; MAX_MEMBERS] = [None; MAX_MEMBERS];
    let mut inbound = Inbound::Direct { searched: None };
    drive(
        function,
        comm,
        "BCAST",
        buf.bytes(),
        in_range,
        |rt, c, first| {
            if c.me != root_index {
                c.poll_recv(rt, function, root_index, buf, &mut inbound)?;
                let done = matches!(inbound, Inbound::Done);
                // The message was there at the first look: the root runs ahead (a
                // stream), so the next one is likely written already and the cell it
                // lies in can come over writable (`expect_from`). A member that had to
                // wait has the root at most one message ahead, about to write that very
                // cell; asking for it then takes it away from the root (2 ranks, 8 B
                // stream: 50.8 ns asking always, 47.3 asking only here; Open MPI 50.2).
                if done && first {
                    if let Some(shm) = rt.shm.as_ref() {
                        shm.expect_from(c.members[root_index].1);
                    }
                }
                return Ok(done);
            }
            if first {
                for j in c.others() {
                    sending[j] = c.send(rt, j, buf);
                }
                if let Some(shm) = rt.shm.as_ref() {
                    for j in c.others() {
                        shm.expect_to(c.members[j].1);
                    }
                }
            }
            Ok(c.sends_done(rt, &mut sending))
        },
    )
}

/// Runs a light-path call made of steps, each told whether it is the first (which starts
/// the call's sends) and returning whether the call is done: opens the call (else
/// `Ok(false)`, and nothing happened) and takes the first step under the same lock,
/// without the wait's set-up (a root's writes mostly go at once, and a member's message
/// is often there already); then steps once per poll until done.
fn drive(
    function: &str,
    comm: impl Which,
    coll: &str,
    bytes: u64,
    n_ok: impl FnOnce(usize) -> bool,
    mut step: impl FnMut(&mut Runtime, &Call, bool) -> MpiResult<bool>,
) -> MpiResult<bool> {
    let mut c = Call {
        context: 0,
        tag: 0,
        me: 0,
        n: 0,
        members: [(0, 0); MAX_MEMBERS],
    };
    let first = runtime::with(function, |rt| {
        let id = comm(rt)?;
        if !c.open(rt, id, coll, bytes, n_ok) {
            return Ok(None);
        }
        step(rt, &c, true).map(Some)
    })?;
    let Some(done) = first else {
        return Ok(false);
    };
    if !done {
        let every = Cell::new(runtime::SELF_POLLED_PROGRESS_EVERY);
        runtime::wait_for_polling(function, &every, |rt| match step(rt, &c, false) {
            Ok(false) => None,
            r => Some(r),
        })??;
    }
    Ok(true)
}

/// `MPI_Allreduce` (`send` `None`: in place): every member reduces all contributions in
/// rank order (c0 op (c1 op (... op cn-1))), so non-commutative operators get the
/// standard's order and every member the same result.
pub fn allreduce(
    function: &str,
    comm: impl Which,
    send: Option<&UserBuf>,
    recv: &UserBuf,
    op: &ReduceOp,
) -> MpiResult<bool> {
    op.check(function, &recv.dtype)?;
    let mine = send.unwrap_or(recv);
    run(
        function,
        comm,
        "ALLREDUCE",
        recv.bytes(),
        |_| true,
        Plan {
            out: |_, _| mine.clone(),
            into: |_| Into::Slot,
            user_code: op.is_user(),
        },
        |me, n, slots| {
            let len = recv.bytes() as usize;
            // Dense separate buffers (what the C layer passes): the contributions
            // combine straight into the receive buffer, this member's read where it
            // lies, without packing it into its slot and unpacking the result.
            // Send and receive buffers that alias (which MPI forbids) are kept off it.
            let apart = mine.addr + len <= recv.addr || recv.addr + len <= mine.addr;
            let direct = || Some((mine.dense(0, len)?, recv.dense_mut(0, len)?));
            if let Some((own, acc)) = (send.is_some() && apart).then(direct).flatten() {
                let slots = &*slots;
                let part = |i: usize| if i == me { own } else { &slots[slot(i, len)] };
                acc.copy_from_slice(part(n - 1));
                for i in (0..n - 1).rev() {
                    op.apply(function, part(i), acc, recv.count, &recv.dtype)?;
                }
                return Ok(());
            }
            mine.pack_into(0, &mut slots[slot(me, len)]);
            // The accumulator is the last member's slot: c(n-1), then c(i) op it.
            let (lower, acc) = slots.split_at_mut(slot(n - 1, len).start);
            let acc = &mut acc[..len];
            for i in (0..n - 1).rev() {
                op.apply(function, &lower[slot(i, len)], acc, recv.count, &recv.dtype)?;
            }
            recv.unpack_from(0, acc);
            Ok(())
        },
    )
}

/// `MPI_Alltoall(v/w)` with separate send blocks (in place takes the general path: the
/// block going out is the one coming in). `equal`: the call's blocks are equal on every
/// member (`MPI_Alltoall`); with unequal ones the members' largest blocks, hence their
/// choice of path, may differ, which two members survive (one message each way either
/// way) and more may not.
pub fn alltoall(
    function: &str,
    comm: impl Which,
    send: &Blocks,
    recv: &Blocks,
    equal: bool,
) -> MpiResult<bool> {
    let bytes = send.largest().max(recv.largest());
    run(
        function,
        comm,
        "ALLTOALL",
        bytes,
        |n| send.fits(n) && recv.fits(n) && (equal || n == 2),
        Plan {
            out: |_, j| send.get(j),
            into: |j| Into::Buf(recv.get(j)),
            user_code: false,
        },
        |me, _, _| {
            let mut scratch = Vec::new();
            recv.get(me)
                .unpack_from(0, packed(&send.get(me), &mut scratch));
            Ok(())
        },
    )
}

/// `MPI_Allgather(v)` (`send` `None`: in place, this member's block is in `blocks`).
pub fn allgather(
    function: &str,
    comm: impl Which,
    send: Option<&UserBuf>,
    blocks: &Blocks,
) -> MpiResult<bool> {
    let bytes = blocks.largest().max(send.map_or(0, |s| s.bytes()));
    run(
        function,
        comm,
        "ALLGATHER",
        bytes,
        |n| blocks.fits(n),
        Plan {
            out: |me, _| send.cloned().unwrap_or_else(|| blocks.get(me)),
            into: |j| Into::Buf(blocks.get(j)),
            user_code: false,
        },
        |me, _, _| {
            if let Some(s) = send {
                let mut scratch = Vec::new();
                blocks.get(me).unpack_from(0, packed(s, &mut scratch));
            }
            Ok(())
        },
    )
}
