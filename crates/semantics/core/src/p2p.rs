//! Point-to-point operations as the MPI API sees them: argument checks against the
//! communicator, `MPI_PROC_NULL`, persistent requests, probes, buffered sends, and
//! waiting. The protocol work is in [`crate::proto`].

use crate::comm::CommId;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::header::Envelope;
use crate::matching::Unexpected;
use crate::proto::Route;
use crate::request::{
    Persistent, ReqId, ReqKind, Request, SendMode, Status, ANY_SOURCE, ANY_TAG, PROC_NULL,
};
use crate::runtime::{self, Runtime};
use crate::userbuf::UserBuf;
use std::cell::Cell;

/// Largest tag (`MPI_TAG_UB`); at least the 32767 the standard and IMPI require.
pub const TAG_UB: i32 = i32::MAX;

/// Checks a tag argument (`wildcard_ok`: a receive, which may name `MPI_ANY_TAG`).
pub fn check_tag(function: &str, tag: i32, wildcard_ok: bool) -> MpiResult<()> {
    if (0..=TAG_UB).contains(&tag) || (wildcard_ok && tag == ANY_TAG) {
        Ok(())
    } else {
        Err(MpiError::arg(
            ErrorClass::Tag,
            function,
            "tag",
            tag,
            format!(
                "valid tags are 0..{TAG_UB}{}",
                if wildcard_ok { " or MPI_ANY_TAG" } else { "" }
            ),
        ))
    }
}

/// Checks a peer rank: Some(world rank), or None for `MPI_PROC_NULL`/`MPI_ANY_SOURCE`.
fn check_peer(
    rt: &Runtime,
    function: &str,
    arg: &str,
    comm: CommId,
    rank: i32,
    any_ok: bool,
) -> MpiResult<Option<u32>> {
    let c = rt.comm(function, comm)?;
    let n = c.peer_group().size();
    if rank == PROC_NULL || (any_ok && rank == ANY_SOURCE) {
        return Ok(None);
    }
    if rank < 0 || rank as usize >= n {
        return Err(MpiError::arg(
            ErrorClass::Rank,
            function,
            arg,
            rank,
            format!(
                "communicator size {n}; valid ranks are 0..{} or MPI_PROC_NULL{}",
                n as i64 - 1,
                if any_ok { " or MPI_ANY_SOURCE" } else { "" }
            ),
        ));
    }
    Ok(Some(c.peer_group().world_rank(rank as usize)))
}

impl Runtime {
    /// Starts a send (every mode); the request completes when the buffer may be reused
    /// (synchronous mode: when the receive has matched).
    pub fn isend(
        &mut self,
        function: &str,
        comm: CommId,
        buf: UserBuf,
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> MpiResult<ReqId> {
        check_tag(function, tag, false)?;
        let Some(dest_world) = check_peer(self, function, "dest", comm, dest, false)? else {
            return Ok(self.st.requests.insert(Request::done(Status::proc_null())));
        };
        let c = self.comm(function, comm)?;
        let env = Envelope {
            context: c.context,
            src: c.rank as i32,
            tag,
        };
        if mode == SendMode::Buffered {
            return self.bsend(function, buf, dest_world, env);
        }
        let req = self.st.start_send(buf, dest_world, env, mode);
        self.flush_peer(dest_world as usize);
        Ok(req)
    }

    /// A blocking send: goes out at once when it can (a small standard-mode message to a
    /// local peer with an idle ring needs no request), else starts the request to wait for.
    pub fn send(
        &mut self,
        function: &str,
        comm: CommId,
        buf: UserBuf,
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> MpiResult<Option<ReqId>> {
        if matches!(mode, SendMode::Standard | SendMode::Ready)
            && self.send_inline(function, comm, &buf, dest, tag)?
        {
            return Ok(None);
        }
        self.isend(function, comm, buf, dest, tag, mode).map(Some)
    }

    /// A blocking standard-mode send of `len` dense bytes at `addr` (a predefined type
    /// whose elements lie without gaps): true when it went out at once (or went to
    /// `MPI_PROC_NULL`); false when it needs [`Runtime::send`] with its datatype, since
    /// other routes may convert the data by type. Skips building the typed buffer, the
    /// bulk of a small send's cost.
    pub fn send_dense(
        &mut self,
        function: &str,
        comm: CommId,
        addr: usize,
        len: usize,
        dest: i32,
        tag: i32,
    ) -> MpiResult<bool> {
        self.send_inline(function, comm, &crate::userbuf::bytes(addr, len), dest, tag)
    }

    /// Writes a blocking send straight into a local peer's ring when the message is
    /// small, nothing is queued for that peer and a cell is free. True when it went (or
    /// `dest` is `MPI_PROC_NULL`).
    fn send_inline(
        &mut self,
        function: &str,
        comm: CommId,
        buf: &UserBuf,
        dest: i32,
        tag: i32,
    ) -> MpiResult<bool> {
        check_tag(function, tag, false)?;
        let Some(dest_world) = check_peer(self, function, "dest", comm, dest, false)? else {
            return Ok(true);
        };
        let Route::Shm { local } = self.st.peers[dest_world as usize].route else {
            return Ok(false);
        };
        let c = self.comms.get(comm).expect("checked by check_peer");
        let env = Envelope {
            context: c.context,
            src: c.rank as i32,
            tag,
        };
        Ok(self.write_inline(dest_world, local, env, buf))
    }

    /// Writes one eager message into local rank `local`'s ring (world rank `dest`) at
    /// once, without a request, when nothing is queued for that peer, the message is
    /// within the eager limit and the credit, and a cell is free; false (and nothing
    /// sent) otherwise.
    pub(crate) fn write_inline(
        &mut self,
        dest: u32,
        local: usize,
        env: Envelope,
        buf: &UserBuf,
    ) -> bool {
        let Some(shm) = self.shm.as_mut() else {
            return false;
        };
        let len = buf.bytes();
        let Some(head) = self.st.inline_eager(dest, env, len) else {
            return false;
        };
        let sent = shm.write_now(local, &head, buf);
        self.st.inline_done(dest, &head, len, sent);
        sent
    }

    /// One poll for a blocking receive of `key` (context, source, tag) from local rank
    /// `local` (world rank `from`) into `buf`, straight from that peer's ring: first the
    /// unexpected queue, where progress may have put the message — searched only when it
    /// has grown since `searched` (the matching engine's arrival count then), since a
    /// polling round is on the latency path — then the ring's head cell.
    pub(crate) fn poll_direct(
        &mut self,
        local: usize,
        from: u32,
        key: (u64, i32, i32),
        buf: &UserBuf,
        searched: &mut Option<u64>,
    ) -> Option<DirectArrival> {
        let (context, source, tag) = key;
        let arrivals = self.st.matching.arrivals();
        if *searched != Some(arrivals) {
            *searched = Some(arrivals);
            if let Some(u) = self.st.matching.take_unexpected(context, source, tag) {
                return Some(DirectArrival::Matched(self.receive_message(buf.clone(), u)));
            }
        }
        let (shm, st) = (self.shm.as_mut()?, &mut self.st);
        shm.take_head(local, |head, payload| {
            st.receive_inline(from, head, payload, key, buf)
        })
        .map(DirectArrival::Received)
    }

    /// Posts a receive.
    pub fn irecv(
        &mut self,
        function: &str,
        comm: CommId,
        buf: UserBuf,
        source: i32,
        tag: i32,
    ) -> MpiResult<ReqId> {
        check_tag(function, tag, true)?;
        if source == PROC_NULL {
            check_peer(self, function, "source", comm, source, true)?;
            return Ok(self.st.requests.insert(Request::done(Status::proc_null())));
        }
        check_peer(self, function, "source", comm, source, true)?;
        let context = self.comm(function, comm)?.context;
        let req = self.st.start_recv(buf, context, source, tag);
        self.flush();
        Ok(req)
    }

    /// Creates an inactive persistent request (`MPI_*_init`).
    pub fn persistent(&mut self, function: &str, recipe: Persistent) -> MpiResult<ReqId> {
        match &recipe {
            Persistent::Send {
                comm, dest, tag, ..
            } => {
                check_tag(function, *tag, false)?;
                check_peer(self, function, "dest", *comm, *dest, false)?;
            }
            Persistent::Recv {
                comm, source, tag, ..
            } => {
                check_tag(function, *tag, true)?;
                check_peer(self, function, "source", *comm, *source, true)?;
            }
            Persistent::External => {}
        }
        let mut r = Request::done(Status::default());
        r.persistent = Some(recipe);
        r.active = false;
        Ok(self.st.requests.insert(r))
    }

    /// Starts a persistent request (`MPI_Start`).
    pub fn start(&mut self, function: &str, req: ReqId) -> MpiResult<()> {
        let r = self.st.requests.get(req).ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Request,
                function,
                "request",
                req.index,
                "not a live request",
            )
        })?;
        let Some(recipe) = r.persistent.clone() else {
            return Err(MpiError::arg(
                ErrorClass::Request,
                function,
                "request",
                req.index,
                "not a persistent request",
            ));
        };
        if r.active {
            return Err(MpiError::arg(
                ErrorClass::Request,
                function,
                "request",
                req.index,
                "already active",
            ));
        }
        let child = match recipe {
            Persistent::Send {
                buf,
                comm,
                dest,
                tag,
                mode,
            } => self.isend(function, comm, buf, dest, tag, mode)?,
            Persistent::Recv {
                buf,
                comm,
                source,
                tag,
            } => self.irecv(function, comm, buf, source, tag)?,
            Persistent::External => {
                return Err(MpiError::arg(
                    ErrorClass::Request,
                    function,
                    "request",
                    req.index,
                    "started by the layer that created it, not by the core",
                ))
            }
        };
        self.activate(req, child);
        Ok(())
    }

    /// Marks the inactive persistent request `req` started, running `child` on its
    /// behalf (`start`, and the layer above for `Persistent::External` recipes).
    pub fn activate(&mut self, req: ReqId, child: ReqId) {
        if let Some(r) = self.st.requests.get_mut(req) {
            r.kind = ReqKind::Active(child);
            r.active = true;
            r.complete = false;
            r.status = Status::default();
        }
    }

    /// If `req` has finished, its status; a finished non-persistent request is released
    /// and a persistent one made inactive. `None` while it runs.
    pub fn take_if_done(&mut self, req: ReqId) -> Option<Status> {
        let r = self.st.requests.get(req)?;
        if let ReqKind::Active(child) = r.kind {
            if !self.st.is_done(child) {
                return None;
            }
            let status = self
                .st
                .requests
                .remove_with(child, |c| c.status)
                .unwrap_or_default();
            let r = self.st.requests.get_mut(req).unwrap();
            r.kind = ReqKind::Done;
            r.active = false;
            r.complete = true;
            r.status = status;
            return Some(status);
        }
        if r.persistent.is_some() {
            // Inactive persistent request: completes at once with an empty status.
            return Some(if r.active {
                r.status
            } else {
                Status::proc_null_empty()
            });
        }
        if !self.st.is_done(req) {
            return None;
        }
        self.st.requests.remove_with(req, |r| r.status)
    }

    /// Whether `req` has finished, without releasing it (`MPI_Request_get_status`).
    pub fn peek_done(&self, req: ReqId) -> Option<Status> {
        let r = self.st.requests.get(req)?;
        match r.kind {
            ReqKind::Active(child) => self
                .st
                .is_done(child)
                .then(|| self.st.requests.get(child).unwrap().status),
            _ if r.persistent.is_some() => Some(Status::proc_null_empty()),
            _ => self.st.is_done(req).then_some(r.status),
        }
    }

    pub fn check_request(&self, function: &str, req: ReqId) -> MpiResult<()> {
        self.st.requests.get(req).map(|_| ()).ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Request,
                function,
                "request",
                req.index,
                "freed or never created",
            )
        })
    }

    /// `MPI_Request_free`: the operation goes on; its request is released when it ends.
    pub fn request_free(&mut self, function: &str, req: ReqId) -> MpiResult<()> {
        self.check_request(function, req)?;
        let r = self.st.requests.get_mut(req).unwrap();
        if let ReqKind::Active(child) = r.kind {
            self.st.requests.discard(req);
            return self.request_free(function, child);
        }
        if r.persistent.is_some() || (r.complete && !r.cancelling) {
            self.st.requests.discard(req);
        } else {
            r.freed = true;
        }
        Ok(())
    }

    /// `MPI_Cancel`.
    pub fn cancel(&mut self, function: &str, req: ReqId) -> MpiResult<()> {
        self.check_request(function, req)?;
        let target = match self.st.requests.get(req).unwrap().kind {
            ReqKind::Active(child) => child,
            _ => req,
        };
        self.st.cancel(target);
        self.flush();
        Ok(())
    }

    /// `MPI_Iprobe`/`MPI_Improbe`: the envelope of a matching message, if one arrived.
    pub fn probe_unexpected(
        &mut self,
        function: &str,
        comm: CommId,
        source: i32,
        tag: i32,
        take: bool,
    ) -> MpiResult<Option<(Status, Option<Unexpected>)>> {
        check_tag(function, tag, true)?;
        check_peer(self, function, "source", comm, source, true)?;
        if source == PROC_NULL {
            return Ok(Some((Status::proc_null(), None)));
        }
        self.poll();
        let context = self.comm(function, comm)?.context;
        let status_of = |u: &Unexpected| Status {
            source: u.source,
            tag: u.tag,
            bytes: u.len,
            ..Status::default()
        };
        if take {
            Ok(self
                .st
                .matching
                .take_unexpected(context, source, tag)
                .map(|u| (status_of(&u), Some(u))))
        } else {
            Ok(self
                .st
                .matching
                .peek_unexpected(context, source, tag)
                .map(|u| (status_of(u), None)))
        }
    }

    /// `MPI_Mrecv`/`MPI_Imrecv`: receives a message taken by a matched probe.
    pub fn receive_message(&mut self, buf: UserBuf, message: Unexpected) -> ReqId {
        let req = self
            .st
            .requests
            .insert(Request::new(ReqKind::Recv(crate::request::RecvOp {
                buf,
                context: message.context,
                source: message.source,
                tag: message.tag,
                state: crate::request::RecvState::Posted,
                staged: None,
            })));
        self.st.match_unexpected(req, message);
        self.flush();
        req
    }

    // ---------------------------------------------------------------- buffered mode

    fn bsend(
        &mut self,
        function: &str,
        buf: UserBuf,
        dest: u32,
        env: Envelope,
    ) -> MpiResult<ReqId> {
        self.reap_bsends();
        let len = buf.bytes() as usize;
        let Some(attached) = self.bsend_buffer.as_mut() else {
            return Err(MpiError::context(
                ErrorClass::Buffer,
                function,
                "no buffer attached (MPI_Buffer_attach)",
            ));
        };
        let Some(offset) = attached.allocate(len) else {
            return Err(MpiError::context(
                ErrorClass::Buffer,
                function,
                format!(
                    "attached buffer too small: {len} bytes needed, {} of {} in use",
                    attached.in_use(),
                    attached.size
                ),
            ));
        };
        let copy = crate::userbuf::bytes(attached.addr + offset, len);
        if let Some(dst) = copy.dense_mut(0, len) {
            buf.pack_into(0, dst);
        }
        // Sent as what it is, so the protocol keeps its long messages matched before the
        // slot frees (`MPI_Buffer_flush` waits for the receivers); otherwise standard.
        let inner = self.st.start_send(copy, dest, env, SendMode::Buffered);
        self.bsend_buffer
            .as_mut()
            .unwrap()
            .pending
            .push((inner, offset));
        self.flush();
        Ok(self.st.requests.insert(Request::done(Status::default())))
    }

    /// Releases the attached-buffer space of buffered sends that finished.
    pub fn reap_bsends(&mut self) {
        let Some(b) = self.bsend_buffer.as_mut() else {
            return;
        };
        let st = &mut self.st;
        b.pending.retain(|&(req, offset)| {
            if st.is_done(req) {
                st.requests.discard(req);
                b.regions.retain(|&(o, _)| o != offset);
                false
            } else {
                true
            }
        });
    }
}

impl Status {
    /// The empty status of an inactive persistent request.
    pub fn proc_null_empty() -> Status {
        Status {
            source: ANY_SOURCE,
            tag: ANY_TAG,
            ..Status::default()
        }
    }
}

/// The buffer attached with `MPI_Buffer_attach`, and the regions in use.
pub struct BsendBuffer {
    pub addr: usize,
    pub size: usize,
    /// (offset, length) of regions in use, by offset.
    regions: Vec<(usize, usize)>,
    /// Buffered sends in flight and their region.
    pending: Vec<(ReqId, usize)>,
}

/// Per-message bookkeeping charged against the attached buffer (`MPI_BSEND_OVERHEAD`).
pub const BSEND_OVERHEAD: usize = 512;

impl BsendBuffer {
    pub fn new(addr: usize, size: usize) -> BsendBuffer {
        BsendBuffer {
            addr,
            size,
            regions: Vec::new(),
            pending: Vec::new(),
        }
    }

    fn in_use(&self) -> usize {
        self.regions.iter().map(|r| r.1).sum()
    }

    /// First fit, charging the standard's per-message overhead.
    fn allocate(&mut self, len: usize) -> Option<usize> {
        let need = len + BSEND_OVERHEAD;
        let mut at = 0;
        let mut index = 0;
        for (i, &(o, l)) in self.regions.iter().enumerate() {
            if o - at >= need {
                break;
            }
            at = o + l;
            index = i + 1;
        }
        if at + need > self.size {
            return None;
        }
        self.regions.insert(index, (at, need));
        Some(at)
    }

    pub fn is_idle(&self) -> bool {
        self.pending.is_empty()
    }

    /// The buffered sends still using the buffer (the reaper releases them when done).
    pub fn pending_sends(&self) -> Vec<ReqId> {
        self.pending.iter().map(|&(req, _)| req).collect()
    }
}

/// What [`Runtime::poll_direct`] found.
pub(crate) enum DirectArrival {
    /// The message was in the unexpected queue: this receive request now completes it.
    Matched(ReqId),
    /// The message was taken from the ring into the buffer.
    Received(Status),
}

/// How a blocking receive proceeds.
enum Plan {
    Done(Status),
    Wait(ReqId),
    /// Take the message straight from local rank `local`'s ring (world rank `from`).
    Direct {
        local: usize,
        from: u32,
        context: u64,
        /// The matching engine's arrival count when its unexpected queue was last
        /// searched (None: not yet).
        searched: Option<u64>,
    },
}

/// `MPI_Recv`. When no receive posted earlier could claim the message and the source is
/// a local peer, a small eager message is copied straight from the sender's ring into
/// the buffer, without a request; anything else takes the posted-receive path. The whole
/// call, communicator lookup included, takes the runtime lock once while it polls.
pub fn recv(
    function: &str,
    comm: impl FnOnce(&Runtime) -> MpiResult<CommId>,
    buf: UserBuf,
    source: i32,
    tag: i32,
) -> MpiResult<Status> {
    let status = recv_after(function, comm, buf, source, tag, |_, _| Ok(true))?;
    Ok(status.expect("a receive without a step before it always runs"))
}

/// `MPI_Sendrecv` of a small message to a local peer: the send is written straight into
/// the peer's ring, then the receive proceeds as [`recv`], all under one lock. None when
/// the send cannot go at once (another route, a large message, a full ring): nothing was
/// sent, and the caller takes the general path. The receive's source and tag are checked
/// before anything is sent, so an erroneous call sends nothing.
#[allow(clippy::too_many_arguments)]
pub fn sendrecv_inline(
    function: &str,
    comm: impl FnOnce(&Runtime) -> MpiResult<CommId>,
    send: &UserBuf,
    dest: i32,
    sendtag: i32,
    buf: UserBuf,
    source: i32,
    tag: i32,
) -> MpiResult<Option<Status>> {
    recv_after(function, comm, buf, source, tag, |rt, comm| {
        check_tag(function, tag, true)?;
        check_peer(rt, function, "source", comm, source, true)?;
        rt.send_inline(function, comm, send, dest, sendtag)
    })
}

/// A blocking receive that first runs `before` on the resolved communicator, under the
/// same lock: when it returns false, nothing is received and the result is None.
fn recv_after(
    function: &str,
    comm: impl FnOnce(&Runtime) -> MpiResult<CommId>,
    buf: UserBuf,
    source: i32,
    tag: i32,
    before: impl FnOnce(&mut Runtime, CommId) -> MpiResult<bool>,
) -> MpiResult<Option<Status>> {
    let mut start = Some((comm, before));
    let mut plan: Option<Plan> = None;
    // A direct plan polls its sender's ring in every round, so full progress need run
    // only every few rounds. Any other plan is completed by progress alone, which then
    // runs every round: a waiting rank yields the processor each round when ranks
    // outnumber processors, and 32 yields to busy neighbours left a message from the
    // network unread for tens of microseconds (docs/impi-relay.md, "Measured").
    let progress_every = Cell::new(1);
    let outcome = runtime::wait_for_polling(function, &progress_every, |rt| {
        let current = match &mut plan {
            Some(p) => p,
            None => {
                let (comm, before) = start.take().expect("planned once");
                let planned = comm(rt).and_then(|id| {
                    if !before(rt, id)? {
                        return Ok(None);
                    }
                    plan_recv(rt, function, id, &buf, source, tag).map(Some)
                });
                match planned {
                    Ok(Some(p)) => {
                        if matches!(p, Plan::Direct { .. }) {
                            progress_every.set(runtime::SELF_POLLED_PROGRESS_EVERY);
                        }
                        plan.insert(p)
                    }
                    Ok(None) => return Some(Ok(None)),
                    Err(e) => return Some(Err(e)),
                }
            }
        };
        if let Plan::Direct {
            local,
            from,
            context,
            searched,
        } = current
        {
            match rt.poll_direct(*local, *from, (*context, source, tag), &buf, searched)? {
                DirectArrival::Received(status) => return Some(Ok(Some(status))),
                DirectArrival::Matched(req) => {
                    *current = Plan::Wait(req);
                    progress_every.set(1);
                }
            }
        }
        match *current {
            Plan::Done(status) => Some(Ok(Some(status))),
            Plan::Wait(req) => rt.take_if_done(req).map(|s| Ok(Some(s))),
            Plan::Direct { .. } => unreachable!("a direct plan returns or waits above"),
        }
    })?;
    outcome
}

fn plan_recv(
    rt: &mut Runtime,
    function: &str,
    comm: CommId,
    buf: &UserBuf,
    source: i32,
    tag: i32,
) -> MpiResult<Plan> {
    check_tag(function, tag, true)?;
    let Some(from) = check_peer(rt, function, "source", comm, source, true)? else {
        if source == PROC_NULL {
            return Ok(Plan::Done(Status::proc_null()));
        }
        return rt
            .irecv(function, comm, buf.clone(), source, tag)
            .map(Plan::Wait);
    };
    let context = rt.comm(function, comm)?.context;
    match rt.st.peers[from as usize].route {
        Route::Shm { local }
            if rt.thread_level < runtime::THREAD_MULTIPLE
                && !rt.st.matching.has_posted_for(context, source) =>
        {
            Ok(Plan::Direct {
                local,
                from,
                context,
                searched: None,
            })
        }
        _ => rt
            .irecv(function, comm, buf.clone(), source, tag)
            .map(Plan::Wait),
    }
}

/// `MPI_Wait`.
pub fn wait(function: &str, req: ReqId) -> MpiResult<Status> {
    runtime::wait_for(function, |rt| match rt.check_request(function, req) {
        Ok(()) => rt.take_if_done(req).map(Ok),
        Err(e) => Some(Err(e)),
    })?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bsend_regions_are_first_fit_and_bounded() {
        let mut b = BsendBuffer::new(0, 3 * BSEND_OVERHEAD + 300);
        let a = b.allocate(100).unwrap();
        let c = b.allocate(100).unwrap();
        assert_eq!((a, c), (0, 100 + BSEND_OVERHEAD));
        assert!(
            b.allocate(200).is_none(),
            "only 100 bytes of payload room left"
        );
        b.regions.retain(|&(o, _)| o != a);
        assert_eq!(b.allocate(50), Some(0), "the freed first region is reused");
    }
}
