//! The light path of small blocking collectives on a communicator of two members that
//! share a node.
//!
//! With two members every collective is one message each way (or one message, for a
//! broadcast), so the schedule engine's set-up (regions, steps, requests, one lock per
//! round) costs more than the exchange itself. Here the call takes its collective tag
//! like a schedule does, writes its message straight into the peer's shared-memory ring
//! and takes the peer's message straight from its own ring (or from the unexpected
//! queue), all under one lock. A broadcast's root returns once its message is written,
//! so back-to-back broadcasts pipeline.
//!
//! The communicator comes as a [`Which`]: the C layer passes its handle's resolution, so
//! that the call takes the runtime lock once in all (and resolves the handle only there).
//!
//! It serves single-threaded processes only (`MPI_THREAD_MULTIPLE` keeps the schedule
//! engine, whose posted receives other threads see), messages within the shared-memory
//! eager limit, and collectives for which no algorithm is forced (`CROSSMPI_COLL_*`).

use super::sched::{take_tag, truncated};
use super::select::forced;
use crate::comm::CommId;
use crate::error::MpiResult;
use crate::header::Envelope;
use crate::p2p::DirectArrival;
use crate::proto::Route;
use crate::reduce::ReduceOp;
use crate::request::{ReqId, SendMode};
use crate::runtime::{self, Runtime, THREAD_MULTIPLE};
use crate::userbuf::{self, UserBuf};

/// The communicator of a call, resolved under the call's lock: the id itself, or the
/// resolution of the caller's handle (whose error the call returns).
pub trait Which: FnOnce(&Runtime) -> MpiResult<CommId> {}
impl<F: FnOnce(&Runtime) -> MpiResult<CommId>> Which for F {}

/// A communicator already resolved.
pub fn known(comm: CommId) -> impl Which {
    move |_: &Runtime| Ok(comm)
}

/// One light-path call: the pair, its tag, and this member's rank in it.
struct Pair {
    context: u64,
    tag: i32,
    me: usize,
    peer_world: u32,
    local: usize,
}

/// Where the receiving half of a call stands.
enum Inbound {
    /// Not yet arrived: polled in the peer's ring, and in the unexpected queue when that
    /// has grown since it was last searched (`searched`: the matching engine's arrival
    /// count then), which keeps each polling round to a look at one cell.
    Direct {
        searched: Option<u64>,
    },
    /// Arrived through the progress engine; its receive request completes it.
    Posted(ReqId),
    Done,
}

impl Pair {
    /// Takes the call's tag when the light path serves a call on `comm` moving at most
    /// `bytes` bytes each way of collective `coll` (its `CROSSMPI_COLL_` name).
    fn open(rt: &mut Runtime, comm: CommId, coll: &str, bytes: u64) -> Option<Pair> {
        if rt.thread_level == THREAD_MULTIPLE || bytes > rt.st.shm_eager || forced(coll).is_some() {
            return None;
        }
        let c = rt.comms.get(comm)?;
        if c.remote.is_some() || c.group.size() != 2 {
            return None;
        }
        let me = c.rank;
        let peer_world = c.group.world_rank(1 - me);
        let Route::Shm { local } = rt.st.peers[peer_world as usize].route else {
            return None;
        };
        let c = rt.comms.get_mut(comm)?;
        Some(Pair {
            context: c.coll_context(),
            tag: take_tag(c),
            me,
            peer_world,
            local,
        })
    }

    fn peer(&self) -> usize {
        1 - self.me
    }

    /// Sends `buf` to the peer: written at once when the ring and the credit allow (no
    /// request), else started as a request the caller waits for.
    fn send(&self, rt: &mut Runtime, buf: &UserBuf) -> Option<ReqId> {
        let env = Envelope {
            context: self.context,
            src: self.me as i32,
            tag: self.tag,
        };
        if rt.write_inline(self.peer_world, self.local, env, buf) {
            return None;
        }
        let req = rt
            .st
            .start_send(buf.clone(), self.peer_world, env, SendMode::Standard);
        rt.flush();
        Some(req)
    }

    /// One attempt to receive the peer's message into `buf`.
    fn poll_recv(
        &self,
        rt: &mut Runtime,
        function: &str,
        buf: &UserBuf,
        inbound: &mut Inbound,
    ) -> MpiResult<()> {
        let source = self.peer() as i32;
        if let Inbound::Direct { searched } = inbound {
            let key = (self.context, source, self.tag);
            match rt.poll_direct(self.local, self.peer_world, key, buf, searched) {
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

/// Where the peer's message goes.
enum Into<'a> {
    Nothing,
    Buf(&'a UserBuf),
    /// The first `bytes` bytes of the call's scratch memory.
    Temp,
}

/// Runs one light-path call when it applies (else `Ok(false)`, and nothing happened):
/// `route` picks, by this member's rank, what goes to the peer and where the peer's
/// message goes; `finish` then runs with the rank and two scratch blocks of `bytes`
/// bytes, each 16-byte aligned (user operators get typed pointers): the first holds the
/// peer's message when [`Into::Temp`]. All of it takes the runtime lock once; the
/// scratch memory is kept for the next call.
fn exchange<'a>(
    function: &str,
    comm: impl Which,
    coll: &str,
    bytes: u64,
    route: impl FnOnce(usize) -> (Option<&'a UserBuf>, Into<'a>),
    finish: impl FnOnce(usize, &mut [u8], &mut [u8]) -> MpiResult<()>,
) -> MpiResult<bool> {
    let len = bytes as usize;
    let second = len.next_multiple_of(16);
    let mut comm = Some(comm);
    let mut route = Some(route);
    let mut finish = Some(finish);
    let mut pair: Option<Pair> = None;
    let mut sending: Option<ReqId> = None;
    let mut into = Into::Nothing;
    let mut temp_buf: Option<UserBuf> = None;
    let mut inbound = Inbound::Done;
    // The receive polls the peer's ring every round; full progress (which the fallback
    // request paths need) runs every 32 rounds, as for a blocking receive.
    runtime::wait_for_polling(function, 32, |rt| {
        if let Some(route) = route.take() {
            let id = match comm.take().expect("resolved once")(rt) {
                Ok(id) => id,
                Err(e) => return Some(Err(e)),
            };
            pair = Pair::open(rt, id, coll, bytes);
            let Some(p) = pair.as_ref() else {
                return Some(Ok(false));
            };
            let out;
            (out, into) = route(p.me);
            if let Some(b) = out {
                sending = p.send(rt, b);
            }
            let scratch = &mut rt.colls.pair_scratch;
            if scratch.len() < second + len + 15 {
                scratch.resize(second + len + 15, 0);
            }
            if let Into::Temp = into {
                temp_buf = Some(over(&mut aligned(scratch)[..len]));
            }
            if !matches!(into, Into::Nothing) {
                inbound = Inbound::Direct { searched: None };
            }
        }
        let p = pair.as_ref()?;
        let target = match into {
            Into::Nothing => None,
            Into::Buf(b) => Some(b),
            Into::Temp => temp_buf.as_ref(),
        };
        if let Some(b) = target {
            if let Err(e) = p.poll_recv(rt, function, b, &mut inbound) {
                return Some(Err(e));
            }
        }
        if let Some(req) = sending {
            rt.take_if_done(req)?;
            sending = None;
        }
        if !matches!(inbound, Inbound::Done) {
            return None;
        }
        let finish = finish.take().expect("finished once");
        let (first, rest) = aligned(&mut rt.colls.pair_scratch).split_at_mut(second);
        Some(finish(p.me, &mut first[..len], &mut rest[..len]).map(|_| true))
    })?
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

/// The size of the largest of `bufs`: the message size the light path's limit applies to.
fn largest<'a>(bufs: impl Iterator<Item = &'a UserBuf>) -> u64 {
    bufs.map(|b| b.bytes()).max().unwrap_or(0)
}

/// A byte buffer over `v` (a temporary a message goes from or into).
fn over(v: &mut [u8]) -> UserBuf {
    userbuf::bytes(v.as_mut_ptr() as usize, v.len())
}

/// `MPI_Barrier`: an empty message each way.
pub fn barrier(function: &str, comm: impl Which) -> MpiResult<bool> {
    let none = over(&mut []);
    exchange(
        function,
        comm,
        "BARRIER",
        0,
        |_| (Some(&none), Into::Buf(&none)),
        |_, _, _| Ok(()),
    )
}

/// `MPI_Bcast` from `root` (an invalid root takes the general path, which reports it).
pub fn bcast(function: &str, comm: impl Which, buf: &UserBuf, root: i32) -> MpiResult<bool> {
    if !(0..2).contains(&root) {
        return Ok(false);
    }
    exchange(
        function,
        comm,
        "BCAST",
        buf.bytes(),
        |me| {
            if me == root as usize {
                (Some(buf), Into::Nothing)
            } else {
                (None, Into::Buf(buf))
            }
        },
        |_, _, _| Ok(()),
    )
}

/// `MPI_Allreduce` (`send` `None`: in place): both members reduce the two
/// contributions in rank order, so non-commutative operators get the same result.
pub fn allreduce(
    function: &str,
    comm: impl Which,
    send: Option<&UserBuf>,
    recv: &UserBuf,
    op: &ReduceOp,
) -> MpiResult<bool> {
    op.check(function, &recv.dtype)?;
    let mine = send.unwrap_or(recv);
    exchange(
        function,
        comm,
        "ALLREDUCE",
        recv.bytes(),
        |_| (Some(mine), Into::Temp),
        |me, theirs, ours| {
            mine.pack_into(0, ours);
            let count = recv.count;
            let (first, second) = if me == 0 {
                (&ours[..], theirs)
            } else {
                (&theirs[..], ours)
            };
            op.apply(function, first, second, count, &recv.dtype)?;
            recv.unpack_from(0, second);
            Ok(())
        },
    )
}

/// `MPI_Alltoall(v/w)` with separate send blocks (in place takes the general path: the
/// block going out is the one coming in).
pub fn alltoall(
    function: &str,
    comm: impl Which,
    send: &[UserBuf],
    recv: &[UserBuf],
) -> MpiResult<bool> {
    if recv.len() != 2 || send.len() != 2 {
        return Ok(false);
    }
    let bytes = largest(send.iter().chain(recv));
    exchange(
        function,
        comm,
        "ALLTOALL",
        bytes,
        |me| (Some(&send[1 - me]), Into::Buf(&recv[1 - me])),
        |me, _, _| {
            let mut scratch = Vec::new();
            recv[me].unpack_from(0, packed(&send[me], &mut scratch));
            Ok(())
        },
    )
}

/// `MPI_Allgather(v)` (`send` `None`: in place, this member's block is in `blocks`).
pub fn allgather(
    function: &str,
    comm: impl Which,
    send: Option<&UserBuf>,
    blocks: &[UserBuf],
) -> MpiResult<bool> {
    if blocks.len() != 2 {
        return Ok(false);
    }
    let bytes = largest(blocks.iter().chain(send));
    exchange(
        function,
        comm,
        "ALLGATHER",
        bytes,
        |me| {
            (
                Some(send.unwrap_or(&blocks[me])),
                Into::Buf(&blocks[1 - me]),
            )
        },
        |me, _, _| {
            if let Some(s) = send {
                let mut scratch = Vec::new();
                blocks[me].unpack_from(0, packed(s, &mut scratch));
            }
            Ok(())
        },
    )
}
