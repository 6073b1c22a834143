//! The schedule engine every collective runs on.
//!
//! An algorithm does not communicate: it *builds* a schedule, a list of steps (sends,
//! receives, local reductions and copies) cut by `wait` points. Executing a schedule
//! posts every communication step up to the next wait point, runs the local steps as it
//! reaches them, and moves past a wait point once all posted operations completed.
//! Blocking collectives execute their schedule inside one `wait_for` loop (one lock per
//! round); nonblocking ones hand it to the runtime, whose progress engine advances it
//! (see [`Active`]), so they overlap with the application's computation.
//!
//! Data lives in *regions*: dense application memory (contiguous user buffers) or
//! temporaries the schedule owns. Non-contiguous user data is packed into a temporary
//! when the schedule is built and unpacked by final steps.
//!
//! Each collective call takes its own tag on the communicator's collective context from
//! `Comm::coll_seq`, so concurrent nonblocking collectives (and blocking ones after them)
//! never match each other's messages. On an intercommunicator, messages inside one group
//! carry a tag bit of their own, since local and remote ranks share the numbers.

use crate::comm::{Comm, CommId, Group};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::header::Envelope;
use crate::p2p::DirectArrival;
use crate::proto::Route;
use crate::reduce::ReduceOp;
use crate::request::{ReqId, ReqKind, Request, SendMode, Status};
use crate::runtime::{self, Runtime};
use crate::userbuf::{self, UserBuf};
use crossmpi_datatype::Datatype;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Tags below this value are left to the internal fixed-tag users of the context.
const TAG_BASE: i32 = 16;
/// Sequence numbers wrap within this many tags (a collective call far older than this
/// many later calls on the same communicator cannot still be running).
const TAG_SPAN: u64 = 1 << 24;
/// Sub-tags occupy the bits above the sequence number.
const SUBTAGS: i32 = 16;
/// Set on messages between members of the same group of an intercommunicator.
pub(crate) const TAG_LOCAL_GROUP: i32 = 1 << 29;

/// A member of the communicator a schedule talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// A rank of the own group.
    Local(usize),
    /// A rank of the remote group of an intercommunicator.
    Remote(usize),
}

/// A byte range of a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub region: usize,
    pub offset: usize,
    pub len: usize,
}

impl Span {
    /// `len` bytes starting `offset` bytes into this span.
    pub fn sub(self, offset: usize, len: usize) -> Span {
        debug_assert!(offset + len <= self.len);
        Span {
            region: self.region,
            offset: self.offset + offset,
            len,
        }
    }

    /// Block `i` of `n`-byte blocks.
    pub fn block(self, i: usize, n: usize) -> Span {
        self.sub(i * n, n)
    }
}

enum Step {
    Send {
        to: Peer,
        data: Span,
        subtag: i32,
    },
    Recv {
        from: Peer,
        data: Span,
        subtag: i32,
    },
    /// `inout = input op inout`, elementwise over packed elements of the reduction type.
    Reduce {
        input: Span,
        inout: Span,
    },
    Copy {
        from: Span,
        to: Span,
    },
    /// Stores packed bytes into an application buffer (index into `outputs`).
    Unpack {
        from: Span,
        to: usize,
    },
    Wait,
}

impl Step {
    /// Whether the step is local work (no message).
    fn is_local(&self) -> bool {
        matches!(
            self,
            Step::Reduce { .. } | Step::Copy { .. } | Step::Unpack { .. }
        )
    }
}

/// Where a schedule stands after an `advance`.
pub enum Advance {
    Running,
    Done(MpiResult<()>),
}

/// A collective's schedule, built by an algorithm and executed by the engine.
pub struct Sched<'f> {
    pub function: &'f str,
    context: u64,
    tag: i32,
    /// This process's rank in its own group.
    pub rank: usize,
    pub group: Arc<Group>,
    pub remote: Option<Arc<Group>>,
    /// Node of each member of the own group.
    pub nodes: Arc<Vec<u32>>,
    /// Site (cluster) of each member of the own group.
    pub sites: Arc<Vec<u32>>,
    /// This process's node has more ranks than processors (the same in every member on
    /// it: [`crate::bootstrap::Boot::node_crowded`]).
    pub node_crowded: bool,
    /// This process's node's ranks are bound to processors (alike in every member on
    /// it: [`crate::bootstrap::Boot::node_bound`]).
    pub node_bound: bool,
    /// How the collectives treat several sites.
    pub wan: super::select::Wan,
    /// Process topology of the communicator (neighbourhood collectives).
    pub topology: Option<Arc<crate::topo::Topology>>,
    /// Boxed: a blocking call builds its schedule in place and hands the vectors on to
    /// the next call, so moving them must cost a pointer, not the vectors' headers.
    b: Box<Buffers>,
    /// The operator and the element type of `Reduce` steps.
    reduction: Option<(ReduceOp, Datatype)>,
    next: usize,
    finished: bool,
    /// Set once the user operator of the last `Reduce` step has run ([`Deferred`]): the
    /// steps after it wait for it.
    ///
    /// [`Deferred`]: crate::reduce::Deferred
    user_reduction: Option<Arc<AtomicBool>>,
    /// Receives from peers on this node are taken straight from their rings
    /// ([`Direct`]): set for blocking calls of processes below `MPI_THREAD_MULTIPLE`.
    direct: bool,
}

/// A receive taken straight from a local peer's ring by polling its head cell (and the
/// unexpected queue when that grew), as a blocking receive does: no request to post,
/// match and reap. Only a blocking call's schedule, which polls until it completes,
/// receives this way; a nonblocking one posts its receives, so a message that arrives
/// while the application computes lands in place. Receives beyond the eager limit stay
/// posted too: their rendezvous then answers from the progress engine at once.
struct Direct {
    local: usize,
    from: u32,
    key: (u64, i32, i32),
    buf: UserBuf,
    /// The matching engine's arrival count when the unexpected queue was last searched.
    searched: Option<u64>,
}

/// The vectors of a schedule, kept between blocking calls so a small collective does
/// not allocate them again.
#[derive(Default)]
pub struct Buffers {
    regions: Vec<(usize, usize)>,
    temps: Vec<Vec<u8>>,
    /// Temporaries of earlier calls, for the next ones: a fresh large vector costs a
    /// zeroing pass (or fresh pages) per call, a tenth of a 2-rank allreduce of 1 MiB.
    /// A temporary's bytes are always written before they are read.
    pool: Vec<Vec<u8>>,
    outputs: Vec<UserBuf>,
    finals: Vec<Step>,
    steps: Vec<Step>,
    posted: Vec<ReqId>,
    direct: Vec<Direct>,
}

impl Buffers {
    fn clear(&mut self) {
        self.regions.clear();
        self.pool.append(&mut self.temps);
        self.pool.truncate(POOLED_TEMPS);
        self.outputs.clear();
        self.finals.clear();
        self.steps.clear();
        self.posted.clear();
        self.direct.clear();
    }
}

/// Temporaries kept between calls ([`Buffers::pool`]): enough for the schedules of small
/// communicators; a reduction over more members allocates the rest.
const POOLED_TEMPS: usize = 16;

#[cfg(test)]
mod sim;

impl<'f> Sched<'f> {
    /// An empty schedule for one collective call on `comm`; takes the call's tag.
    pub fn new(rt: &mut Runtime, function: &'f str, comm: CommId) -> MpiResult<Sched<'f>> {
        let wan = super::select::wan(&rt.impi_coll);
        let (node_crowded, node_bound) = (rt.node_crowded, rt.node_bound);
        let c = rt.comm_mut(function, comm)?;
        Ok(Sched {
            function,
            context: c.coll_context(),
            tag: take_tag(c),
            rank: c.rank,
            group: c.group.clone(),
            remote: c.remote.clone(),
            nodes: c.nodes.clone(),
            sites: c.sites.clone(),
            node_crowded,
            node_bound,
            wan,
            topology: c.topology.clone(),
            b: rt.colls.spare.take().unwrap_or_default(),
            reduction: None,
            next: 0,
            finished: false,
            user_reduction: None,
            direct: false,
        })
    }

    pub fn size(&self) -> usize {
        self.group.size()
    }

    pub fn is_inter(&self) -> bool {
        self.remote.is_some()
    }

    pub fn remote_size(&self) -> usize {
        self.remote.as_ref().map_or(0, |g| g.size())
    }

    // ------------------------------------------------------------ regions

    /// A temporary of `len` bytes owned by the schedule (its bytes are unspecified).
    pub fn temp(&mut self, len: usize) -> Span {
        let pool = &mut self.b.pool;
        let mut v = match pool.iter().position(|v| v.len() >= len) {
            Some(i) => pool.swap_remove(i),
            None => pool.pop().unwrap_or_default(),
        };
        if v.len() < len {
            v.resize(len, 0);
        }
        let addr = v.as_ptr() as usize;
        self.b.temps.push(v);
        self.region(addr, len)
    }

    /// Dense memory of the application (or of the caller) at `addr`.
    pub fn region(&mut self, addr: usize, len: usize) -> Span {
        self.b.regions.push((addr, len));
        Span {
            region: self.b.regions.len() - 1,
            offset: 0,
            len,
        }
    }

    /// An application buffer the collective reads: its packed bytes.
    pub fn input(&mut self, buf: &UserBuf) -> Span {
        let len = buf.bytes() as usize;
        if buf.is_contiguous() {
            return self.region(buf.addr, len);
        }
        let t = self.temp(len);
        let (addr, _) = self.b.regions[t.region];
        buf.pack_into(0, userbuf::bytes(addr, len).write().0);
        t
    }

    /// An application buffer the collective writes: bytes written to the span reach the
    /// buffer (at once when it is dense, else by a final unpack step).
    pub fn output(&mut self, buf: &UserBuf) -> Span {
        let len = buf.bytes() as usize;
        if buf.is_contiguous() {
            return self.region(buf.addr, len);
        }
        let t = self.temp(len);
        self.b.outputs.push(buf.clone());
        self.b.finals.push(Step::Unpack {
            from: t,
            to: self.b.outputs.len() - 1,
        });
        t
    }

    /// An application buffer read and written (`MPI_IN_PLACE`).
    pub fn inout(&mut self, buf: &UserBuf) -> Span {
        if buf.is_contiguous() {
            return self.output(buf);
        }
        let t = self.input(buf);
        self.b.outputs.push(buf.clone());
        self.b.finals.push(Step::Unpack {
            from: t,
            to: self.b.outputs.len() - 1,
        });
        t
    }

    fn slice(&self, s: Span) -> UserBuf {
        let (addr, len) = self.b.regions[s.region];
        debug_assert!(s.offset + s.len <= len);
        userbuf::bytes(addr + s.offset, s.len)
    }

    // ------------------------------------------------------------ steps

    pub fn set_reduction(&mut self, op: ReduceOp, dtype: Datatype) {
        self.reduction = Some((op, dtype));
    }

    pub fn send(&mut self, to: Peer, data: Span) {
        self.send_tagged(to, data, 0);
    }

    pub fn recv(&mut self, from: Peer, data: Span) {
        self.recv_tagged(from, data, 0);
    }

    /// A send whose receiver tells it apart from others of the same pair by `subtag`.
    pub fn send_tagged(&mut self, to: Peer, data: Span, subtag: i32) {
        self.b.steps.push(Step::Send { to, data, subtag });
    }

    pub fn recv_tagged(&mut self, from: Peer, data: Span, subtag: i32) {
        self.b.steps.push(Step::Recv { from, data, subtag });
    }

    /// `inout = input op inout` (the input comes first in the operator's order).
    pub fn reduce(&mut self, input: Span, inout: Span) {
        if input.len > 0 {
            self.b.steps.push(Step::Reduce { input, inout });
        }
    }

    pub fn copy(&mut self, from: Span, to: Span) {
        if from != to && from.len > 0 {
            self.b.steps.push(Step::Copy { from, to });
        }
    }

    /// Ends a round: later steps run once everything posted so far completed.
    pub fn wait(&mut self) {
        if !matches!(self.b.steps.last(), None | Some(Step::Wait)) {
            self.b.steps.push(Step::Wait);
        }
    }

    /// Appends the final unpack steps; called once the algorithm is built.
    fn seal(&mut self) {
        if !self.b.finals.is_empty() {
            self.wait();
            let finals = std::mem::take(&mut self.b.finals);
            self.b.steps.extend(finals);
        }
    }

    // ------------------------------------------------------------ execution

    fn world_of(&self, p: Peer) -> (u32, i32) {
        match p {
            Peer::Local(r) => (
                self.group.world_rank(r),
                if self.remote.is_some() {
                    TAG_LOCAL_GROUP
                } else {
                    0
                },
            ),
            Peer::Remote(r) => (
                self.remote
                    .as_ref()
                    .expect("remote peer on an intercommunicator")
                    .world_rank(r),
                0,
            ),
        }
    }

    fn rank_of(p: Peer) -> usize {
        match p {
            Peer::Local(r) | Peer::Remote(r) => r,
        }
    }

    /// Runs steps until the next wait point or the end; false when a wait must hold.
    pub fn advance(&mut self, rt: &mut Runtime) -> Advance {
        if self.finished {
            return Advance::Done(Ok(()));
        }
        loop {
            if let Some(done) = &self.user_reduction {
                if !done.load(Ordering::Acquire) {
                    return Advance::Running;
                }
                self.user_reduction = None;
            }
            if !self.b.direct.is_empty() {
                self.poll_direct(rt);
                if !self.b.direct.is_empty() {
                    return Advance::Running;
                }
            }
            if !self.b.posted.is_empty() {
                if !self.b.posted.iter().all(|&r| rt.st.is_done(r)) {
                    return Advance::Running;
                }
                let mut failure = None;
                for r in self.b.posted.drain(..) {
                    if let Some(status) = rt.st.requests.remove_with(r, |q| q.status) {
                        if status.error != 0 && failure.is_none() {
                            failure = Some(status);
                        }
                    }
                }
                if let Some(st) = failure {
                    self.finished = true;
                    return Advance::Done(Err(truncated(self.function, st.source)));
                }
            }
            let mut sent = false;
            while self.next < self.b.steps.len() {
                let i = self.next;
                self.next += 1;
                // Sends queued so far go out before local work (a copy, a reduction), so
                // their receivers start while this member computes.
                if sent && self.b.steps[i].is_local() {
                    rt.flush();
                    sent = false;
                }
                if let Some(done) = self.defer_user_reduction(rt, i) {
                    self.user_reduction = Some(done);
                    return Advance::Running;
                }
                if let Err(e) = self.run_step(rt, i, &mut sent) {
                    self.finished = true;
                    return Advance::Done(Err(e));
                }
                if matches!(self.b.steps[i], Step::Wait) {
                    break;
                }
            }
            if sent {
                rt.flush();
            }
            if self.b.posted.is_empty()
                && self.b.direct.is_empty()
                && self.next >= self.b.steps.len()
            {
                self.finished = true;
                return Advance::Done(Ok(()));
            }
        }
    }

    fn run_step(&mut self, rt: &mut Runtime, i: usize, sent: &mut bool) -> MpiResult<()> {
        match self.b.steps[i] {
            Step::Send { to, data, subtag } => {
                let (w, bit) = self.world_of(to);
                let env = Envelope {
                    context: self.context,
                    src: self.rank as i32,
                    tag: self.tag | bit | subtag_bits(subtag),
                };
                let buf = self.slice(data);
                // A small message to a peer on this node goes straight into its ring
                // when it can (nothing queued before it, a free cell): no request to
                // create, queue, flush and reap, the bulk of a small collective's cost.
                if let Route::Shm { local } = rt.st.peers[w as usize].route {
                    if rt.write_inline(w, local, env, &buf) {
                        return Ok(());
                    }
                }
                let req = rt.st.start_send(buf, w, env, SendMode::Standard);
                self.b.posted.push(req);
                *sent = true;
            }
            Step::Recv { from, data, subtag } => {
                let (w, bit) = self.world_of(from);
                let key = (
                    self.context,
                    Self::rank_of(from) as i32,
                    self.tag | bit | subtag_bits(subtag),
                );
                let buf = self.slice(data);
                match rt.st.peers[w as usize].route {
                    Route::Shm { local } if self.direct && buf.bytes() <= rt.st.shm_eager => {
                        self.b.direct.push(Direct {
                            local,
                            from: w,
                            key,
                            buf,
                            searched: None,
                        })
                    }
                    _ => {
                        let req = rt.st.start_recv(buf, key.0, key.1, key.2);
                        self.b.posted.push(req);
                    }
                }
            }
            _ => self.run_local(i)?,
        }
        Ok(())
    }
}

impl Sched<'_> {
    /// One poll of every direct receive of the round: those that arrived leave the list
    /// (a message found in the unexpected queue becomes a posted request).
    fn poll_direct(&mut self, rt: &mut Runtime) {
        let posted = &mut self.b.posted;
        self.b.direct.retain_mut(|d| {
            match rt.poll_direct(d.local, d.from, d.key, &d.buf, &mut d.searched) {
                Some(DirectArrival::Matched(req)) => posted.push(req),
                Some(DirectArrival::Received(_)) => {}
                None => return true,
            }
            false
        });
    }

    /// Hands a `Reduce` step with a user operator to the runtime, to run once it is let go
    /// (the operator may call MPI: [`crate::reduce::Deferred`]); the flag it will set.
    fn defer_user_reduction(&self, rt: &mut Runtime, i: usize) -> Option<Arc<AtomicBool>> {
        let Step::Reduce { input, inout } = self.b.steps[i] else {
            return None;
        };
        let (op, dtype) = self.reduction.as_ref().filter(|(op, _)| op.is_user())?;
        let count = Self::elements(dtype, inout);
        let (call, done) = op.defer(self.slice(input), self.slice(inout), count, dtype)?;
        rt.defer(Box::new(move || call.run()));
        Some(done)
    }

    /// Elements of `dtype` in a span of packed data.
    fn elements(dtype: &Datatype, s: Span) -> u64 {
        (s.len / dtype.size().max(1) as usize) as u64
    }

    /// Runs a local step (reduce, copy, unpack; nothing for the others).
    fn run_local(&mut self, i: usize) -> MpiResult<()> {
        match self.b.steps[i] {
            Step::Reduce { input, inout } => {
                let (op, dtype) = self
                    .reduction
                    .as_ref()
                    .expect("reduce step in a schedule without a reduction");
                let a = self.slice(input);
                let b = self.slice(inout);
                let count = Self::elements(dtype, inout);
                op.apply(self.function, a.read().0, b.write().0, count, dtype)?;
            }
            Step::Copy { from, to } => {
                let a = self.slice(from);
                let b = self.slice(to);
                b.write().0.copy_from_slice(a.read().0);
            }
            Step::Unpack { from, to } => {
                let a = self.slice(from);
                self.b.outputs[to].unpack_from(0, a.read().0);
            }
            _ => {}
        }
        Ok(())
    }
}

/// Takes the tag of the next collective call on `c` (every call takes one, on every
/// member, in call order).
pub(crate) fn take_tag(c: &mut Comm) -> i32 {
    let seq = c.coll_seq;
    c.coll_seq += 1;
    TAG_BASE + (seq % (TAG_SPAN - TAG_BASE as u64)) as i32
}

/// The error of a collective whose message from `source` did not fit.
pub(super) fn truncated(function: &str, source: i32) -> MpiError {
    MpiError::context(
        ErrorClass::Truncate,
        function,
        format!(
            "a message of the collective from rank {source} did not fit (the ranks passed different amounts of data)"
        ),
    )
}

/// Sub-tags keep apart messages one pair exchanges within a call when their order alone
/// would not (the two directions of a periodic dimension of length 2, for example).
fn subtag_bits(subtag: i32) -> i32 {
    (subtag.rem_euclid(SUBTAGS)) << 24
}

/// Whether a collective waits for its result or returns a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Blocking,
    Nonblocking,
}

/// Builds a schedule with `build` and runs it: to completion (blocking, `None`) or as a
/// request the progress engine advances (nonblocking, `Some`).
pub fn start(
    function: &'static str,
    comm: CommId,
    mode: Mode,
    build: impl FnOnce(&mut Sched<'static>) -> MpiResult<()>,
) -> MpiResult<Option<ReqId>> {
    match mode {
        Mode::Blocking => run(function, comm, build).map(|_| None),
        Mode::Nonblocking => runtime::with(function, |rt| {
            let mut s = Sched::new(rt, function, comm)?;
            if let Err(e) = build(&mut s) {
                give_back_tag(rt, comm);
                return Err(e);
            }
            s.seal();
            let req = rt.st.requests.insert(Request::new(ReqKind::Coll));
            match s.advance(rt) {
                Advance::Running => rt.colls.running.push((req, s)),
                Advance::Done(r) => complete(&mut rt.st.requests, req, r),
            }
            Ok(Some(req))
        }),
    }
}

/// Returns the tag of a call that failed its argument checks before communicating, so
/// an error raised on some ranks only does not shift later calls' tags apart.
fn give_back_tag(rt: &mut Runtime, comm: CommId) {
    if let Some(c) = rt.comms.get_mut(comm) {
        c.coll_seq -= 1;
    }
}

/// Builds and runs a schedule to completion, taking the runtime lock once per round.
pub fn run<'f>(
    function: &'f str,
    comm: CommId,
    build: impl FnOnce(&mut Sched<'f>) -> MpiResult<()>,
) -> MpiResult<()> {
    let mut sched: Option<Sched<'f>> = None;
    let mut build = Some(build);
    runtime::wait_for(function, |rt| {
        if sched.is_none() {
            let direct = rt.thread_level != runtime::THREAD_MULTIPLE;
            let s = match Sched::new(rt, function, comm) {
                Ok(s) => sched.insert(s),
                Err(e) => return Some(Err(e)),
            };
            s.direct = direct;
            if let Err(e) = (build.take().expect("built once"))(s) {
                give_back_tag(rt, comm);
                return Some(Err(e));
            }
            s.seal();
        }
        let s = sched.as_mut().expect("schedule built");
        match s.advance(rt) {
            Advance::Running => None,
            Advance::Done(r) => {
                let mut b = std::mem::take(&mut s.b);
                b.clear();
                rt.colls.spare = Some(b);
                Some(r)
            }
        }
    })?
}

/// The nonblocking collectives in progress, advanced by `Runtime::progress`.
#[derive(Default)]
pub struct Active {
    running: Vec<(ReqId, Sched<'static>)>,
    /// Vectors of the last finished blocking schedule, for the next one.
    spare: Option<Box<Buffers>>,
    /// Scratch memory of the light path ([`super::light`]), kept between
    /// calls so a small reduction does not allocate.
    pub(super) light_scratch: Vec<u8>,
}

impl Active {
    pub fn is_empty(&self) -> bool {
        self.running.is_empty()
    }
}

fn complete(requests: &mut crate::slab::Slab<Request>, req: ReqId, r: MpiResult<()>) {
    let Some(q) = requests.get_mut(req) else {
        return;
    };
    q.complete = true;
    q.status = Status {
        error: r.map_or_else(|e| e.class.code(), |_| 0),
        ..Status::default()
    };
    if q.freed {
        requests.discard(req);
    }
}

/// Advances every running nonblocking collective; true if one of them completed.
pub fn progress(rt: &mut Runtime) -> bool {
    if rt.colls.is_empty() {
        return false;
    }
    let mut running = std::mem::take(&mut rt.colls.running);
    let before = running.len();
    running.retain_mut(|(req, s)| match s.advance(rt) {
        Advance::Running => true,
        Advance::Done(r) => {
            complete(&mut rt.st.requests, *req, r);
            false
        }
    });
    let done = running.len() < before;
    running.append(&mut rt.colls.running);
    rt.colls.running = running;
    done
}
