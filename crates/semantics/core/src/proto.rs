//! Point-to-point protocols over frames, independent of the transport: eager messages,
//! rendezvous (request to send, clear to send, data, or a pull by cross-memory attach),
//! synchronous-mode acknowledgements, remote cancel, and eager credits.
//!
//! Transports call [`State::begin_frame`] when a frame head arrives, move the payload
//! into the [`Sink`] it returns, then call [`State::end_frame`]. Frames to send are queued
//! per peer ([`Peer::queue`]) and written by the transports, which report each finished
//! frame with [`State::frame_written`].

use crate::header::{Envelope, Frame, Head};
use crate::matching::{Held, Matching, Posted, Unexpected};
use crate::request::{
    RecvOp, RecvState, ReqId, ReqKind, Request, SendMode, SendOp, SendState, Status,
};
use crate::slab::{Id, Slab};
use crate::userbuf::UserBuf;
use awaiting::Awaiting;
use copy_choice::{Copy, CopyChoice, Traffic};
use std::collections::{HashMap, VecDeque};
use std::time::Instant;

mod awaiting;
pub mod copy_choice;

/// Credit an eager message costs: its bytes plus a fixed charge, so floods of empty
/// messages are bounded too.
pub fn credit_cost(len: u64) -> u64 {
    len + 64
}

/// A split rendezvous at its receiver: the receiver pulls the bytes before `half`, the
/// sender writes the rest into the receiver.
struct Split {
    req: ReqId,
    from: u32,
    msg: u64,
    /// The message in the sender.
    addr: u64,
    half: u64,
    len: u64,
    /// The first half is pulled. It is pulled once the request for the second half is
    /// written ([`State::run_pulls`]), so that both halves are copied at once.
    pulled: bool,
}

/// How a peer is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// This process.
    Local,
    /// Shared memory, as local rank `local` of the node.
    Shm {
        local: usize,
    },
    Tcp,
    /// IMPI packets, to a rank of another IMPI client (cluster).
    Impi,
}

/// Where a queued frame's payload comes from.
pub enum Payload {
    None,
    Owned(Vec<u8>),
    /// Bytes [offset, offset + len) of the packed data of send request `req`.
    Send {
        req: ReqId,
        offset: u64,
        len: u64,
    },
}

impl Payload {
    pub fn len(&self) -> u64 {
        match self {
            Payload::None => 0,
            Payload::Owned(v) => v.len() as u64,
            Payload::Send { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

pub struct Outgoing {
    pub head: Head,
    pub payload: Payload,
    /// The send request whose protocol advances once this frame is fully written.
    pub on_written: Option<ReqId>,
}

/// Messages and bytes exchanged with one peer (exported through MPI_T for the monitor).
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    pub msgs_sent: u64,
    pub bytes_sent: u64,
    pub msgs_recv: u64,
    pub bytes_recv: u64,
}

pub struct Peer {
    pub route: Route,
    pub queue: VecDeque<Outgoing>,
    /// Eager bytes we may still send to this peer before it returns credit.
    pub send_credit: u64,
    /// Credit we owe this peer for eager data we consumed.
    pub credit_owed: u64,
    pub counters: Counters,
}

impl Peer {
    pub fn new(route: Route, credit: u64) -> Peer {
        Peer {
            route,
            queue: VecDeque::new(),
            send_credit: credit,
            credit_owed: 0,
            counters: Counters::default(),
        }
    }
}

/// Where an arriving payload goes.
pub enum Sink {
    None,
    /// Collect the bytes, then [`State::end_frame`] places them.
    Buffer(Vec<u8>),
    /// Write straight into a dense receive buffer.
    Direct {
        req: ReqId,
        offset: u64,
    },
    /// Drop the bytes (data beyond a truncated receive buffer).
    Discard,
}

/// What to do with a frame once its payload has arrived.
pub enum Delivery {
    Nothing,
    Matched {
        req: ReqId,
        msg: u64,
        sync: bool,
        len: u64,
    },
    Unexpected {
        env: Envelope,
        msg: u64,
        len: u64,
        sync: bool,
    },
    Data {
        req: ReqId,
        offset: u64,
        len: u64,
    },
}

/// The protocol state of one process: peers, requests and the matching engine.
pub struct State {
    pub me: u32,
    pub peers: Vec<Peer>,
    pub requests: Slab<Request>,
    pub matching: Matching,
    /// Sends waiting for a reply about their message.
    pending: Awaiting,
    /// Sends whose cancellation is being asked, by message id.
    cancels: HashMap<u64, ReqId>,
    /// Receives that matched an eager message still arriving: (sender, message id) ->
    /// the receive that gets its data.
    claimed: HashMap<(u32, u64), ReqId>,
    next_msg: u64,
    /// Process id of each world rank reachable by shared memory (0 otherwise).
    pub pids: Vec<u32>,
    pub eager_credit: u64,
    /// Largest eager message per route kind.
    pub shm_eager: u64,
    pub tcp_eager: u64,
    /// IMPI's short-message limit: the negotiated data bytes per packet.
    pub impi_eager: u64,
    /// User data to and from IMPI peers travels in external32.
    pub impi_external32: bool,
    /// Bytes of long messages a rank may send to one IMPI peer ahead of the receiver's
    /// `Cts` (`CROSSMPI_IMPI_EARLY`; 0 unless every client is crossmpi): a long message
    /// within it follows its `Rts` at once (`Frame::Early`) instead of waiting a round
    /// trip. The receiver holds what arrives before its receive is posted, so this bounds
    /// that memory per sender.
    pub impi_early: u64,
    /// Long messages sent early and not yet matched (no `Cts` back): message, its
    /// destination and length, counted against `impi_early`.
    early: HashMap<u64, (u32, u64)>,
    /// How rendezvous messages between ranks of this node move: pulled or split with
    /// cross-memory attach, or streamed through the ring.
    pub copy: CopyChoice,
    /// Rendezvous receives that could have been pulled, moving by another way (streamed
    /// or split): the request, the way, its length and traffic, and when it asked for the
    /// data (their times feed `copy`).
    timed: HashMap<ReqId, (Copy, u64, Traffic, Instant)>,
    /// When the last timed receive finished, streamed and split: several of one way in
    /// flight at once (a window of receives) are served one after another, so each counts
    /// from the later of its start and the previous one's end.
    timed_done: [Option<Instant>; 2],
    /// Split rendezvous this receiver takes part in, until they complete.
    splits: Vec<Split>,
    /// Requests that completed and were freed by the user (`MPI_Request_free`).
    pub orphaned: Vec<ReqId>,
}

fn truncate_class() -> i32 {
    crate::error::ErrorClass::Truncate.code()
}

impl State {
    pub fn new(me: u32, peers: Vec<Peer>, eager_credit: u64) -> State {
        State {
            me,
            peers,
            requests: Slab::default(),
            matching: Matching::default(),
            pending: Awaiting::default(),
            cancels: HashMap::new(),
            claimed: HashMap::new(),
            next_msg: 1,
            pids: Vec::new(),
            eager_credit,
            shm_eager: 0,
            tcp_eager: 0,
            impi_eager: 0,
            impi_external32: false,
            impi_early: 0,
            early: HashMap::new(),
            copy: CopyChoice::new(u64::MAX, false),
            timed: HashMap::new(),
            timed_done: [None; 2],
            splits: Vec::new(),
            orphaned: Vec::new(),
        }
    }

    fn queue(&mut self, to: u32, mut out: Outgoing) {
        let peer = &mut self.peers[to as usize];
        let owed = peer.credit_owed.min(u32::MAX as u64);
        peer.credit_owed -= owed;
        out.head.credit = owed as u32;
        peer.queue.push_back(out);
    }

    fn queue_control(&mut self, to: u32, frame: Frame) {
        self.queue(
            to,
            Outgoing {
                head: Head::new(frame),
                payload: Payload::None,
                on_written: None,
            },
        );
    }

    /// Records that eager data from `from` was consumed; returns credit when enough owed.
    fn consumed(&mut self, from: u32, len: u64) {
        let peer = &mut self.peers[from as usize];
        peer.credit_owed += credit_cost(len);
        // IMPI peers are paced by IMPI's own per-pair counters, not by credit.
        if peer.credit_owed >= self.eager_credit / 4
            && !matches!(peer.route, Route::Local | Route::Impi)
        {
            self.queue_control(from, Frame::Credit);
        }
    }

    fn complete(&mut self, req: ReqId) {
        if let Some(r) = self.requests.get_mut(req) {
            if let ReqKind::Recv(op) = &mut r.kind {
                if let Some(s) = op.staged.take() {
                    r.status.bytes = crate::external::unstage_recv(&s, r.status.bytes);
                    op.buf = s.user;
                }
            }
            r.complete = true;
            if r.freed && !r.cancelling {
                self.orphaned.push(req);
            }
        }
    }

    fn eager_limit(&self, route: Route) -> u64 {
        match route {
            Route::Local => u64::MAX,
            Route::Shm { .. } => self.shm_eager,
            Route::Tcp => self.tcp_eager,
            Route::Impi => self.impi_eager,
        }
    }

    // ---------------------------------------------------------------- sending

    /// Starts a send to world rank `dest` with envelope `env`; returns its request.
    pub fn start_send(&mut self, buf: UserBuf, dest: u32, env: Envelope, mode: SendMode) -> ReqId {
        let route = self.peers[dest as usize].route;
        let convert = route == Route::Impi && self.impi_external32;
        let (buf, staged) = if convert && crate::external::needs_conversion(&buf.dtype) {
            match crate::external::stage_send(&buf) {
                Ok(s) => (s.view(), Some(s)),
                Err(e) => crate::fatal(&format!(
                    "a message to rank {dest} (another cluster) cannot be converted to \
                     external32 (MPI_ERR_CONVERSION): {e}"
                )),
            }
        } else {
            (buf, None)
        };
        let len = buf.bytes();
        let msg = self.next_msg;
        self.next_msg += 1;
        let req = self.requests.insert(Request::new(ReqKind::Send(SendOp {
            buf,
            dest,
            env,
            mode,
            msg,
            state: SendState::Queued,
            bsend_slot: None,
            staged,
        })));
        {
            let c = &mut self.peers[dest as usize].counters;
            c.msgs_sent += 1;
            c.bytes_sent += len;
        }
        if route == Route::Local {
            self.send_to_self(req, env, len, mode == SendMode::Synchronous);
            return req;
        }
        let sync = mode == SendMode::Synchronous;
        let cost = credit_cost(len);
        let eager = len <= self.eager_limit(route) && self.peers[dest as usize].send_credit >= cost;
        let frame = if eager {
            self.peers[dest as usize].send_credit -= cost;
            Frame::Eager {
                env,
                msg,
                len,
                sync,
            }
        } else {
            let dense = match &self.requests.get(req).unwrap().kind {
                ReqKind::Send(s) => s.buf.is_contiguous(),
                _ => false,
            };
            let cma_addr = match route {
                Route::Shm { .. } if dense && self.copy.offers(len) => {
                    match &self.requests.get(req).unwrap().kind {
                        ReqKind::Send(s) => s.buf.addr as u64,
                        _ => 0,
                    }
                }
                _ => 0,
            };
            Frame::Rts {
                env,
                msg,
                len,
                cma_addr,
            }
        };
        // Synchronous sends complete on the match, and a buffered long message keeps its
        // slot until matched (so `MPI_Buffer_flush` waits for the receivers): both keep
        // the rendezvous.
        let early_mode = matches!(mode, SendMode::Standard | SendMode::Ready);
        if !eager && early_mode && route == Route::Impi && self.early_room(dest, len) {
            self.send_early(req, dest, msg, len, frame);
            return req;
        }
        if sync || !eager {
            self.pending.insert(msg, req, dest);
        }
        let payload = if eager {
            Payload::Send {
                req,
                offset: 0,
                len,
            }
        } else {
            Payload::None
        };
        self.queue(
            dest,
            Outgoing {
                head: Head::new(frame),
                payload,
                on_written: Some(req),
            },
        );
        req
    }

    /// Whether a long message of `len` bytes to IMPI peer `dest` fits in what may be
    /// sent to it ahead of its receives (`impi_early`).
    pub(crate) fn early_room(&self, dest: u32, len: u64) -> bool {
        let unmatched: u64 = self
            .early
            .values()
            .filter(|(to, _)| *to == dest)
            .map(|(_, n)| n)
            .sum();
        unmatched + len <= self.impi_early
    }

    /// Sends long message `msg` (its `Rts` frame) to `dest` with its data right behind,
    /// not waiting for the `Cts`; the send completes when the data is written. The `Cts`
    /// that comes back when the receiver matches it only returns the room.
    fn send_early(&mut self, req: ReqId, dest: u32, msg: u64, len: u64, rts: Frame) {
        self.early.insert(msg, (dest, len));
        if let Some(s) = self.requests.get_mut(req).and_then(Request::send_op_mut) {
            s.state = SendState::Streaming;
        }
        let whole = || Payload::Send {
            req,
            offset: 0,
            len,
        };
        // The Rts carries the first piece from the payload, so it needs no request; the
        // Early frame's writing completes the send.
        self.queue(
            dest,
            Outgoing {
                head: Head::new(rts),
                payload: whole(),
                on_written: None,
            },
        );
        self.queue(
            dest,
            Outgoing {
                head: Head::new(Frame::Early { msg }),
                payload: whole(),
                on_written: Some(req),
            },
        );
    }

    /// The head of an eager frame for a message that can leave at once, without a request:
    /// a blocking standard-mode send to a peer with nothing queued, within the eager
    /// limit and the credit. Takes the credit owed to the peer into the head; the caller
    /// reports the outcome with [`State::inline_done`].
    pub fn inline_eager(&mut self, dest: u32, env: Envelope, len: u64) -> Option<Head> {
        let peer = &self.peers[dest as usize];
        if peer.route == Route::Local
            || !peer.queue.is_empty()
            || len > self.eager_limit(peer.route)
            || peer.send_credit < credit_cost(len)
        {
            return None;
        }
        let msg = self.next_msg;
        self.next_msg += 1;
        let peer = &mut self.peers[dest as usize];
        let owed = peer.credit_owed.min(u32::MAX as u64);
        peer.credit_owed -= owed;
        Some(Head {
            frame: Frame::Eager {
                env,
                msg,
                len,
                sync: false,
            },
            credit: owed as u32,
        })
    }

    /// Settles an inline send: charges credit and counts it if `sent`, else gives back the
    /// credit the head carried (the message then takes the request path).
    pub fn inline_done(&mut self, dest: u32, head: &Head, len: u64, sent: bool) {
        let peer = &mut self.peers[dest as usize];
        if sent {
            peer.send_credit -= credit_cost(len);
            peer.counters.msgs_sent += 1;
            peer.counters.bytes_sent += len;
        } else {
            peer.credit_owed += head.credit as u64;
        }
    }

    fn send_to_self(&mut self, req: ReqId, env: Envelope, len: u64, sync: bool) {
        let data = {
            let ReqKind::Send(s) = &self.requests.get(req).unwrap().kind else {
                unreachable!()
            };
            let mut data = vec![0u8; len as usize];
            s.buf.pack_into(0, &mut data);
            data
        };
        let msg = self.next_msg - 1;
        if let Some(rreq) = self.matching.take_posted(env.context, env.src, env.tag) {
            self.deliver_whole(rreq, env, &data);
            self.finish_send(req);
        } else {
            let held = Held::Local {
                data,
                send: sync.then_some(req),
            };
            self.matching
                .add_unexpected(Unexpected::new(env, len, self.me, msg, held));
            if !sync {
                self.finish_send(req);
            }
        }
    }

    fn finish_send(&mut self, req: ReqId) {
        if let Some(s) = self.requests.get_mut(req).and_then(Request::send_op_mut) {
            s.state = SendState::Done;
        }
        self.complete(req);
    }

    /// A transport finished writing a frame that carried `on_written`.
    pub fn frame_written(&mut self, req: ReqId) {
        let Some(s) = self.requests.get_mut(req).and_then(Request::send_op_mut) else {
            return;
        };
        match s.state {
            SendState::Queued => {
                if self.pending.contains(s.msg) {
                    s.state = SendState::AwaitReceiver;
                } else {
                    self.finish_send(req);
                }
            }
            SendState::Streaming => self.finish_send(req),
            _ => {}
        }
    }

    // ---------------------------------------------------------------- receiving

    /// Posts a receive, matching an unexpected message first if one is there.
    pub fn start_recv(&mut self, buf: UserBuf, context: u64, source: i32, tag: i32) -> ReqId {
        let req = self.requests.insert(Request::new(ReqKind::Recv(RecvOp {
            buf,
            context,
            source,
            tag,
            state: RecvState::Posted,
            staged: None,
        })));
        match self.matching.take_unexpected(context, source, tag) {
            Some(u) => self.match_unexpected(req, u),
            None => self.matching.post(Posted {
                req,
                context,
                source,
                tag,
            }),
        }
        req
    }

    /// Receives an unexpected message into request `req` (also used by `MPI_Mrecv`).
    pub fn match_unexpected(&mut self, req: ReqId, u: Unexpected) {
        self.stage_if_remote(req, u.from);
        let env = Envelope {
            context: u.context,
            src: u.source,
            tag: u.tag,
        };
        match u.held {
            Held::Eager { data, sync } => {
                self.deliver_whole(req, env, &data);
                self.consumed(u.from, u.len);
                if sync {
                    self.queue_control(u.from, Frame::SyncAck { msg: u.msg });
                }
            }
            Held::Local { data, send } => {
                self.deliver_whole(req, env, &data);
                if let Some(s) = send {
                    self.finish_send(s);
                }
            }
            Held::Rts { cma_addr } => {
                self.start_rendezvous(req, u.from, env, u.msg, u.len, cma_addr)
            }
            Held::Arriving { .. } => {
                self.set_matched_status(req, env, u.len);
                self.claimed.insert((u.from, u.msg), req);
            }
        }
    }

    /// A receive matched a message from world rank `from`: if that is a rank of another
    /// cluster, its data arrives in external32 and lands in a staging buffer.
    fn stage_if_remote(&mut self, req: ReqId, from: u32) {
        if self.peers[from as usize].route != Route::Impi || !self.impi_external32 {
            return;
        }
        if let Some(r) = self.requests.get_mut(req).and_then(Request::recv_op_mut) {
            if r.staged.is_none() && crate::external::needs_conversion(&r.buf.dtype) {
                let s = crate::external::stage_recv(&r.buf);
                r.buf = s.view();
                r.staged = Some(s);
            }
        }
    }

    fn recv_capacity(&self, req: ReqId) -> u64 {
        match &self.requests.get(req).map(|r| &r.kind) {
            Some(ReqKind::Recv(r)) => r.buf.bytes(),
            _ => 0,
        }
    }

    fn set_matched_status(&mut self, req: ReqId, env: Envelope, len: u64) {
        let cap = self.recv_capacity(req);
        if let Some(r) = self.requests.get_mut(req) {
            r.status.source = env.src;
            r.status.tag = env.tag;
            r.status.bytes = len.min(cap);
            if len > cap {
                r.status.error = truncate_class();
            }
        }
    }

    /// Places a whole message into a matched receive and completes it.
    fn deliver_whole(&mut self, req: ReqId, env: Envelope, data: &[u8]) {
        self.set_matched_status(req, env, data.len() as u64);
        let cap = self.recv_capacity(req) as usize;
        if let Some(r) = self.requests.get_mut(req).and_then(Request::recv_op_mut) {
            r.buf.unpack_from(0, &data[..data.len().min(cap)]);
            r.state = RecvState::Done;
        }
        self.complete(req);
    }

    fn start_rendezvous(
        &mut self,
        req: ReqId,
        from: u32,
        env: Envelope,
        msg: u64,
        len: u64,
        cma_addr: u64,
    ) {
        self.set_matched_status(req, env, len);
        if let Some(r) = self.requests.get_mut(req).and_then(Request::recv_op_mut) {
            r.state = RecvState::Receiving { len, received: 0 };
        }
        if cma_addr != 0 && len <= self.recv_capacity(req) {
            let target = self.recv_dense_addr(req, len);
            let traffic = if self.sending_long_to(from) {
                Traffic::Exchange
            } else {
                Traffic::OneWay
            };
            let way = self.copy.choose(len, target.is_some(), traffic);
            match way {
                Copy::Pull => {
                    let started = Instant::now();
                    if self.pull(req, from, cma_addr, 0, len).is_ok() {
                        self.copy
                            .record(Copy::Pull, len, traffic, started.elapsed());
                        self.add_received(req, len);
                        self.queue_control(from, Frame::Fin { msg });
                        return;
                    }
                    self.copy.pull_failed();
                }
                Copy::Split => {
                    let half = (len / 2) & !4095;
                    let addr = target.expect("a split needs a contiguous receive buffer");
                    self.queue_control(
                        from,
                        Frame::Push {
                            msg,
                            rreq: req.to_u64(),
                            offset: half,
                            addr: addr + half,
                        },
                    );
                    self.timed
                        .insert(req, (Copy::Split, len, traffic, Instant::now()));
                    self.splits.push(Split {
                        req,
                        from,
                        msg,
                        addr: cma_addr,
                        half,
                        len,
                        pulled: false,
                    });
                    return;
                }
                Copy::Ring => {
                    self.timed
                        .insert(req, (Copy::Ring, len, traffic, Instant::now()));
                }
            }
        }
        self.queue_control(
            from,
            Frame::Cts {
                msg,
                rreq: req.to_u64(),
            },
        );
    }

    /// Whether a message of ours to `peer` waits for its reply: a rendezvous (a long
    /// message), or a synchronous send's acknowledgement.
    fn sending_long_to(&self, peer: u32) -> bool {
        self.pending.any_to(peer)
    }

    /// Whether split rendezvous wait for this receiver's pull ([`State::run_pulls`]).
    pub fn has_pulls(&self) -> bool {
        self.splits.iter().any(|s| !s.pulled)
    }

    /// Pulls the first halves of split rendezvous. Call once the frames asking the
    /// senders for the second halves are written, so both halves are copied at once.
    pub fn run_pulls(&mut self) {
        let waiting: Vec<(ReqId, u32, u64, u64)> = self
            .splits
            .iter_mut()
            .filter(|s| !s.pulled)
            .map(|s| {
                s.pulled = true;
                (s.req, s.from, s.addr, s.half)
            })
            .collect();
        for (req, from, addr, half) in waiting {
            self.pull_or_fail(req, from, addr, 0, half);
            self.add_received(req, half);
        }
    }

    /// The sender of a split rendezvous wrote the second half (`len` > 0), or could not
    /// (0: the kernel refused it), in which case this receiver pulls it too.
    fn pushed(&mut self, req: ReqId, len: u64) {
        if len > 0 {
            self.add_received(req, len);
            return;
        }
        if let Some(s) = self.splits.iter().find(|s| s.req == req) {
            let (from, addr, half, rest) = (s.from, s.addr, s.half, s.len - s.half);
            self.pull_or_fail(req, from, addr, half, rest);
            self.add_received(req, rest);
        }
    }

    /// A pull that must work: splitting starts only once a pull worked in this process,
    /// so a failure is the system's (the sender gone), and the bytes have no other way.
    fn pull_or_fail(&mut self, req: ReqId, from: u32, addr: u64, offset: u64, len: u64) {
        if let Err(e) = self.pull(req, from, addr, offset, len) {
            crate::fatal(&format!(
                "cross-memory attach from world rank {from} failed after it had worked: {e}"
            ));
        }
    }

    /// `n` more bytes of the rendezvous message for receive `req` are in place; the
    /// receive completes with the last of them (and a timed one tells its way's time).
    fn add_received(&mut self, req: ReqId, n: u64) {
        let Some(r) = self.requests.get_mut(req).and_then(Request::recv_op_mut) else {
            return;
        };
        let RecvState::Receiving { len, received } = r.state else {
            return;
        };
        let received = received + n;
        if received < len {
            r.state = RecvState::Receiving { len, received };
            return;
        }
        r.state = RecvState::Done;
        self.complete(req);
        if let Some((way, len, traffic, started)) = self.timed.remove(&req) {
            let now = Instant::now();
            let done = &mut self.timed_done[usize::from(way == Copy::Ring)];
            let from = done.map_or(started, |d| d.max(started));
            *done = Some(now);
            self.copy.record(way, len, traffic, now - from);
        }
        // A split sender waits until this receiver read its last byte from it.
        if let Some(i) = self.splits.iter().position(|s| s.req == req) {
            let s = self.splits.swap_remove(i);
            self.queue_control(s.from, Frame::Fin { msg: s.msg });
        }
    }

    /// The address of receive `req`'s buffer when its first `len` bytes lie contiguous
    /// (another process can then write into it).
    fn recv_dense_addr(&mut self, req: ReqId, len: u64) -> Option<u64> {
        let r = self.requests.get_mut(req).and_then(Request::recv_op_mut)?;
        r.buf
            .dense_mut(0, len as usize)
            .map(|d| d.as_mut_ptr() as u64)
    }

    /// Copies `len` bytes of a rendezvous message, from byte `offset` on, straight out of
    /// the sender (cross-memory attach; `addr`: the message in the sender).
    fn pull(
        &mut self,
        req: ReqId,
        from: u32,
        addr: u64,
        offset: u64,
        len: u64,
    ) -> std::io::Result<()> {
        let no = |what: &str| Err(std::io::Error::other(what.to_string()));
        let Some(pid) = self.peer_pid(from) else {
            return no("the peer's process id is unknown");
        };
        let Some(r) = self.requests.get(req).and_then(Request::recv_op) else {
            return no("not a receive");
        };
        let src = (addr + offset) as usize;
        match r.buf.dense_mut(offset, len as usize) {
            Some(dst) => crossmpi_shm::cma::read_remote(pid, src, dst),
            None => {
                let mut tmp = vec![0u8; len as usize];
                crossmpi_shm::cma::read_remote(pid, src, &mut tmp)?;
                r.buf.unpack_from(offset, &tmp);
                Ok(())
            }
        }
    }

    /// Process ids of local peers, set by the shared-memory route.
    pub fn peer_pid(&self, w: u32) -> Option<u32> {
        self.pids.get(w as usize).copied().filter(|&p| p != 0)
    }

    /// A frame head arrived from world rank `from`; says where its payload goes.
    pub fn begin_frame(&mut self, from: u32, head: &Head, payload_len: u64) -> (Sink, Delivery) {
        if head.credit > 0 {
            self.peers[from as usize].send_credit += head.credit as u64;
        }
        match head.frame {
            Frame::Eager {
                env,
                msg,
                len,
                sync,
            } => {
                self.count_received(from, len);
                match self.matching.take_posted(env.context, env.src, env.tag) {
                    Some(req) => {
                        self.stage_if_remote(req, from);
                        self.set_matched_status(req, env, len);
                        let dense = len <= self.recv_capacity(req)
                            && matches!(self.requests.get(req).map(|r| &r.kind), Some(ReqKind::Recv(r)) if r.buf.is_contiguous());
                        let sink = if dense {
                            Sink::Direct { req, offset: 0 }
                        } else {
                            Sink::Buffer(Vec::with_capacity(payload_len as usize))
                        };
                        (
                            sink,
                            Delivery::Matched {
                                req,
                                msg,
                                sync,
                                len,
                            },
                        )
                    }
                    None => {
                        self.matching.add_unexpected(Unexpected::new(
                            env,
                            len,
                            from,
                            msg,
                            Held::Arriving { sync },
                        ));
                        (
                            Sink::Buffer(Vec::with_capacity(payload_len as usize)),
                            Delivery::Unexpected {
                                env,
                                msg,
                                len,
                                sync,
                            },
                        )
                    }
                }
            }
            Frame::Rts {
                env,
                msg,
                len,
                cma_addr,
            } => {
                self.count_received(from, len);
                match self.matching.take_posted(env.context, env.src, env.tag) {
                    Some(req) => {
                        self.stage_if_remote(req, from);
                        self.start_rendezvous(req, from, env, msg, len, cma_addr)
                    }
                    None => self.matching.add_unexpected(Unexpected::new(
                        env,
                        len,
                        from,
                        msg,
                        Held::Rts { cma_addr },
                    )),
                }
                (Sink::None, Delivery::Nothing)
            }
            Frame::Data { rreq, offset } => {
                let req = Id::from_u64(rreq);
                let cap = self.recv_capacity(req);
                let fits = offset + payload_len <= cap;
                let dense = fits
                    && matches!(self.requests.get(req).map(|r| &r.kind), Some(ReqKind::Recv(r)) if r.buf.is_contiguous());
                let sink = if dense {
                    Sink::Direct { req, offset }
                } else if offset >= cap || self.requests.get(req).is_none() {
                    Sink::Discard
                } else {
                    Sink::Buffer(Vec::with_capacity(payload_len as usize))
                };
                (
                    sink,
                    Delivery::Data {
                        req,
                        offset,
                        len: payload_len,
                    },
                )
            }
            Frame::Cts { msg, rreq } => {
                if let Some(req) = self.pending.remove(msg) {
                    self.stream(req, rreq);
                } else {
                    self.early.remove(&msg);
                }
                (Sink::None, Delivery::Nothing)
            }
            // Only a route's own form: an IMPI route turns the packets into `Data`.
            Frame::Early { .. } => (Sink::Discard, Delivery::Nothing),
            Frame::Push {
                msg,
                rreq,
                offset,
                addr,
            } => {
                if let Some(req) = self.pending.get(msg) {
                    self.push(req, from, rreq, offset, addr);
                }
                (Sink::None, Delivery::Nothing)
            }
            Frame::Pushed { rreq, len } => {
                self.pushed(Id::from_u64(rreq), len);
                (Sink::None, Delivery::Nothing)
            }
            Frame::Fin { msg } | Frame::SyncAck { msg } => {
                if let Some(req) = self.pending.remove(msg) {
                    self.finish_send(req);
                }
                (Sink::None, Delivery::Nothing)
            }
            Frame::CancelReq { msg } => {
                let cancelled = match self.matching.withdraw(from, msg) {
                    Some(u) => {
                        if let Held::Eager { .. } | Held::Arriving { .. } = u.held {
                            self.consumed(from, u.len);
                        }
                        true
                    }
                    None => false,
                };
                self.queue_control(from, Frame::CancelReply { msg, cancelled });
                (Sink::None, Delivery::Nothing)
            }
            Frame::CancelReply { msg, cancelled } => {
                self.cancel_answered(msg, cancelled);
                (Sink::None, Delivery::Nothing)
            }
            Frame::Credit => (Sink::None, Delivery::Nothing),
        }
    }

    /// The payload of the frame begun by `begin_frame` has been placed in `sink`.
    pub fn end_frame(&mut self, from: u32, sink: Sink, delivery: Delivery) {
        match delivery {
            Delivery::Nothing => {}
            Delivery::Matched {
                req,
                msg,
                sync,
                len,
            } => {
                if let Sink::Buffer(data) = sink {
                    let cap = self.recv_capacity(req) as usize;
                    if let Some(r) = self.requests.get(req).and_then(Request::recv_op) {
                        r.buf.unpack_from(0, &data[..data.len().min(cap)]);
                    }
                }
                if let Some(r) = self.requests.get_mut(req).and_then(Request::recv_op_mut) {
                    r.state = RecvState::Done;
                }
                self.complete(req);
                self.consumed(from, len);
                if sync {
                    self.queue_control(from, Frame::SyncAck { msg });
                }
            }
            Delivery::Unexpected {
                env,
                msg,
                len,
                sync,
            } => {
                let Sink::Buffer(data) = sink else {
                    unreachable!("unexpected eager data is always buffered")
                };
                if let Some(req) = self.claimed.remove(&(from, msg)) {
                    self.deliver_whole(req, env, &data);
                    self.consumed(from, len);
                    if sync {
                        self.queue_control(from, Frame::SyncAck { msg });
                    }
                } else if let Some(u) = self.matching.find_mut(from, msg) {
                    u.held = Held::Eager { data, sync };
                }
            }
            Delivery::Data { req, offset, len } => {
                let cap = self.recv_capacity(req);
                let Some(r) = self.requests.get_mut(req).and_then(Request::recv_op_mut) else {
                    return;
                };
                if let Sink::Buffer(data) = sink {
                    let keep = (cap.saturating_sub(offset) as usize).min(data.len());
                    r.buf.unpack_from(offset, &data[..keep]);
                }
                self.add_received(req, len);
            }
        }
    }

    fn count_received(&mut self, from: u32, len: u64) {
        let c = &mut self.peers[from as usize].counters;
        c.msgs_recv += 1;
        c.bytes_recv += len;
    }

    /// A blocking receive's fast path: takes the frame `head`/`payload` from `from` if it is
    /// the eager message the receive waits for (`context`, `source`, `tag` — tag may be
    /// `MPI_ANY_TAG`) and fits `buf`. None leaves the frame to the normal path.
    pub fn receive_inline(
        &mut self,
        from: u32,
        head: &Head,
        payload: &[u8],
        (context, source, tag): (u64, i32, i32),
        buf: &UserBuf,
    ) -> Option<Status> {
        let Frame::Eager {
            env,
            len,
            sync: false,
            ..
        } = head.frame
        else {
            return None;
        };
        let matched = env.context == context
            && env.src == source
            && (tag == crate::request::ANY_TAG || env.tag == tag);
        if !matched || len > buf.bytes() {
            return None;
        }
        if head.credit > 0 {
            self.peers[from as usize].send_credit += head.credit as u64;
        }
        self.count_received(from, len);
        buf.unpack_from(0, payload);
        self.consumed(from, len);
        Some(Status {
            source: env.src,
            tag: env.tag,
            bytes: len,
            ..Status::default()
        })
    }

    /// Convenience for transports that hold the whole payload (shared memory).
    pub fn on_frame(&mut self, from: u32, head: &Head, payload: &[u8]) {
        let (sink, delivery) = self.begin_frame(from, head, payload.len() as u64);
        let sink = match sink {
            Sink::Buffer(mut v) => {
                v.extend_from_slice(payload);
                Sink::Buffer(v)
            }
            Sink::Direct { req, offset } => {
                if let Some(r) = self.requests.get(req).and_then(Request::recv_op) {
                    if let Some(dst) = r.buf.dense_mut(offset, payload.len()) {
                        dst.copy_from_slice(payload);
                    }
                }
                sink
            }
            other => other,
        };
        self.end_frame(from, sink, delivery);
    }

    /// Writes the bytes of send `req` from `offset` on into the receiver at `addr` (the
    /// second half of a split rendezvous), then says how many it wrote (0 when the kernel
    /// refused: the receiver then pulls them). The send completes on the receiver's `Fin`.
    fn push(&mut self, req: ReqId, to: u32, rreq: u64, offset: u64, addr: u64) {
        let send = self.requests.get(req).and_then(Request::send_op);
        let written = match (self.peer_pid(to), send) {
            (Some(pid), Some(s)) => {
                let len = s.buf.bytes().saturating_sub(offset);
                s.buf
                    .dense(offset, len as usize)
                    .filter(|src| crossmpi_shm::cma::write_remote(pid, addr as usize, src).is_ok())
                    .map(|_| len)
            }
            _ => None,
        };
        let len = written.unwrap_or(0);
        self.queue_control(to, Frame::Pushed { rreq, len });
    }

    fn stream(&mut self, req: ReqId, rreq: u64) {
        let Some(s) = self.requests.get_mut(req).and_then(Request::send_op_mut) else {
            return;
        };
        s.state = SendState::Streaming;
        let (dest, len) = (s.dest, s.buf.bytes());
        self.queue(
            dest,
            Outgoing {
                head: Head::new(Frame::Data { rreq, offset: 0 }),
                payload: Payload::Send {
                    req,
                    offset: 0,
                    len,
                },
                on_written: Some(req),
            },
        );
    }

    // ---------------------------------------------------------------- cancel

    /// Cancels a request: a posted receive is withdrawn at once; a send is withdrawn from
    /// the receiver's unexpected messages if it is still there (the answer arrives later).
    pub fn cancel(&mut self, req: ReqId) {
        let me = self.me;
        let Some(r) = self.requests.get_mut(req) else {
            return;
        };
        match &r.kind {
            ReqKind::Recv(op) if op.state == RecvState::Posted && self.matching.unpost(req) => {
                r.status.cancelled = true;
                self.complete(req);
            }
            // A long message sent early streams at once but is still withdrawable until
            // it is matched: its data is ahead of the cancel request on the connection,
            // so an answer comes only once the send's last byte is written.
            ReqKind::Send(op)
                if !r.cancelling
                    && (op.state != SendState::Streaming || self.early.contains_key(&op.msg)) =>
            {
                let (dest, msg) = (op.dest, op.msg);
                if dest == me {
                    if self.matching.withdraw(me, msg).is_some() {
                        r.status.cancelled = true;
                        self.finish_send(req);
                    }
                    return;
                }
                r.cancelling = true;
                self.cancels.insert(msg, req);
                self.queue_control(dest, Frame::CancelReq { msg });
            }
            _ => {}
        }
    }

    fn cancel_answered(&mut self, msg: u64, cancelled: bool) {
        let Some(req) = self.cancels.remove(&msg) else {
            return;
        };
        let Some(r) = self.requests.get_mut(req) else {
            return;
        };
        r.cancelling = false;
        if cancelled {
            r.status.cancelled = true;
            // The receiver dropped the message: no acknowledgement or CTS will come.
            self.pending.remove(msg);
            self.early.remove(&msg);
            self.finish_send(req);
        } else if r.complete && r.freed {
            self.orphaned.push(req);
        }
    }

    /// True when `req` may be reported complete (no cancel answer outstanding).
    pub fn is_done(&self, req: ReqId) -> bool {
        self.requests
            .get(req)
            .is_some_and(|r| r.complete && !r.cancelling)
    }
}

#[cfg(test)]
mod tests;
