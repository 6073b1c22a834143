//! The IMPI route: ranks of other IMPI clients (clusters), reached over one TCP
//! connection per pair of IMPI hosts carrying 128-byte-header IMPI packets.
//!
//! crossmpi makes every process its own IMPI host (GridMPI's mapping): a rank talks to a
//! rank of another cluster directly, with no forwarding daemon in between. A peer host
//! may hold many processes (LAM/MPI's daemon, or a relay presenting a whole cluster): its
//! connection then carries the packets of all of them, told apart by `pk_src`/`pk_dest`.
//! The frames of `proto.rs` are translated to packets and back in [`translate`].

mod outq;
mod queue_size;
pub mod startup;
pub mod translate;

use crate::header::{Frame, Head};
use crate::proto::{Delivery, Payload, Sink, State};
use crate::request::ReqKind;
use crossmpi_impi::wire::packet::{PacketHeader, PacketRepr, HEADER_LEN};
use outq::OutQueue;
use queue_size::QueueSize;
use std::io::{ErrorKind, IoSliceMut, Read};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};
use translate::{Arrival, Translator};

/// How much a connection holds ahead of the wire (`CROSSMPI_IMPI_WRITE_AHEAD`,
/// `CROSSMPI_IMPI_UNSENT`; docs/tunables.md). A reply to a peer's long message (the
/// SYNCACK its data waits for) is built before our own queued frames to that peer, but
/// once built it goes after every packet built before it, in our queue and in the
/// kernel's: both are kept to a short time at the connection's rate, so that it does
/// not wait behind megabytes of bulk data on a slow link (docs/impi-relay.md, "Trunking
/// bandwidth") while a fast one is not starved ([`queue_size`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sending {
    /// Queued bytes to one host beyond which no more packets are built until the socket
    /// takes some.
    pub write_ahead: usize,
    /// Bytes the kernel may hold unsent on each host connection (`TCP_NOTSENT_LOWAT`).
    pub unsent: u32,
    /// How long a reply may wait behind both at a connection's measured rate: they grow
    /// above the two minimums on a fast connection (`CROSSMPI_IMPI_QUEUE_US`;
    /// [`queue_size`]).
    pub queue_budget: Duration,
    /// The TCP congestion control of each host connection
    /// (`CROSSMPI_IMPI_TCP_CONGESTION`; why cubic: `crossmpi_tcp::Congestion`).
    pub congestion: crossmpi_tcp::Congestion,
}

impl Default for Sending {
    fn default() -> Sending {
        Sending {
            write_ahead: 256 << 10,
            unsent: 128 << 10,
            queue_budget: Duration::from_millis(2),
            congestion: crossmpi_tcp::Congestion::default(),
        }
    }
}

/// Bytes a connection reads ahead into its own buffer: several small packets per read,
/// while the payload of a larger packet mostly goes straight to its destination.
const READ_AHEAD: usize = 16 * 1024;

/// A packet whose payload is still arriving, read straight into where it goes.
struct RxPayload {
    from: u32,
    sink: Sink,
    delivery: Delivery,
    got: usize,
    len: usize,
}

/// One connection to an IMPI host of another client.
pub struct HostLink {
    pub host: u32,
    pub addr: SocketAddr,
    sock: TcpStream,
    rbuf: Vec<u8>,
    rlen: usize,
    /// Where reads into `rbuf` stop: [`READ_AHEAD`], or the end of a packet wanted whole
    /// (then `rbuf` grows to hold it, but once it is handled reads stop at
    /// [`READ_AHEAD`] again, so later payloads go straight to their destinations).
    read_end: usize,
    rx: Option<RxPayload>,
    out: OutQueue,
    /// What it queues ahead of a reply, sized from its rate.
    queue: QueueSize,
    /// The last PROTOACK was queued onto an empty queue since the last write: alone, it
    /// may wait for the next packet to this host (see [`ImpiRoute::poll`]).
    lone_ack: bool,
    sent_fini: bool,
    got_fini: bool,
    /// Lost, and its processes taken over by another relay of their cluster.
    dead: bool,
}

impl HostLink {
    pub fn new(host: u32, addr: SocketAddr, sock: TcpStream) -> std::io::Result<HostLink> {
        sock.set_nonblocking(true)?;
        sock.set_nodelay(true)?;
        Ok(HostLink {
            host,
            addr,
            sock,
            rbuf: vec![0; READ_AHEAD],
            rlen: 0,
            read_end: READ_AHEAD,
            rx: None,
            out: OutQueue::default(),
            queue: QueueSize::new(0, 0, Duration::ZERO),
            lone_ack: false,
            sent_fini: false,
            got_fini: false,
            dead: false,
        })
    }

    fn queue_packet(&mut self, p: &PacketRepr) {
        self.out.push_bytes(&p.emit());
    }

    /// Queues a PROTOACK, noting whether it went onto an empty queue.
    fn queue_ack(&mut self, p: &PacketRepr) {
        self.lone_ack = self.out.pending() == 0;
        self.queue_packet(p);
    }

    /// True when all the queue holds is one PROTOACK that may wait for company.
    fn holds_one_waiting_ack(&self) -> bool {
        self.lone_ack && self.out.pending() == HEADER_LEN
    }

    fn pending(&self) -> usize {
        self.out.pending()
    }

    /// Writes what the socket takes.
    fn write_out(&mut self, st: &mut State) -> Result<(), String> {
        self.lone_ack = false;
        self.out
            .write(&mut self.sock, st)
            .map_err(|e| connection_failure("send", &e))
    }

    /// Resizes what it queues ahead of a reply from its rate, when a measurement is due.
    fn resize_queues(&mut self) {
        let now = Instant::now();
        if !self.queue.due(now) {
            return;
        }
        let resized = crossmpi_tcp::bytes_acked(&self.sock)
            .map(|acked| self.queue.observe(now, acked))
            .and_then(|unsent| match unsent {
                Some(bytes) => crossmpi_tcp::limit_unsent(&self.sock, bytes),
                None => Ok(()),
            });
        if resized.is_err() {
            // A kernel that cannot say or set it: the minimums stay.
            self.queue = QueueSize::new(self.queue.write_ahead, self.queue.unsent, Duration::ZERO);
        }
    }

    /// True when it still has to write, or to exchange FINI.
    fn busy(&self) -> bool {
        !self.dead && (!self.sent_fini || !self.got_fini || !self.out.is_empty())
    }

    fn describe(&self) -> String {
        format!("IMPI host {} at {}", self.host, self.addr)
    }
}

const CLOSED_BEFORE_FINI: &str = "closed its connection before FINI: a rank of its cluster \
                                  ended or failed (see that cluster's output)";

/// Words a failed read or write on a host connection. A reset or broken pipe is the far
/// end going away without a FIN (a killed process or relay leaves unread data behind),
/// so it reads as the close it is, with the system's words after it.
fn connection_failure(action: &str, e: &std::io::Error) -> String {
    match e.kind() {
        ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted | ErrorKind::BrokenPipe => {
            format!("{CLOSED_BEFORE_FINI} ({action}: {e})")
        }
        _ => format!("{action} failed: {e}"),
    }
}

pub struct ImpiRoute {
    links: Vec<HostLink>,
    /// Per link, when the job survives a relay's death and the link's host is a relay:
    /// the client whose relays may take over from each other.
    relay_of: Vec<Option<u32>>,
    /// Index into `links` of every world rank reached through IMPI.
    link_of: Vec<Option<usize>>,
    pub tr: Translator,
    /// Bytes of the front frame already sent, per world rank.
    done: Vec<u64>,
    /// When the job survives a relay's death: how often streams are checked for packets
    /// no end has confirmed for a whole period (`CROSSMPI_IMPI_RESEND_MS`), and when next.
    stall_period: Duration,
    next_stall_check: Instant,
    epoll: crate::progress::Epoll,
}

impl ImpiRoute {
    /// `relay_of`: per link, the client whose relays may take over from each other when
    /// the link's host is one of them in a job that survives a relay's death (else None).
    pub fn new(
        mut links: Vec<HostLink>,
        link_of: Vec<Option<usize>>,
        relay_of: Vec<Option<u32>>,
        tr: Translator,
        stall_period: Duration,
        sending: Sending,
    ) -> Result<ImpiRoute, String> {
        let epoll = crate::progress::Epoll::new().map_err(|e| e.to_string())?;
        for l in &links {
            epoll
                .add(std::os::fd::AsRawFd::as_raw_fd(&l.sock))
                .map_err(|e| e.to_string())?;
        }
        for l in &mut links {
            l.queue = QueueSize::new(sending.write_ahead, sending.unsent, sending.queue_budget);
            crossmpi_tcp::limit_unsent(&l.sock, sending.unsent).map_err(|e| e.to_string())?;
            sending
                .congestion
                .apply(&l.sock, crossmpi_tcp::IMPI_CONGESTION_VAR)?;
        }
        let n = link_of.len();
        Ok(ImpiRoute {
            links,
            relay_of,
            link_of,
            tr,
            done: vec![0; n],
            stall_period,
            next_stall_check: Instant::now() + stall_period,
            epoll,
        })
    }

    pub fn wait_fd(&self) -> i32 {
        self.epoll.fd()
    }

    pub fn clear_wakeups(&self) {
        self.epoll.drain();
    }

    /// Reads and handles every packet that arrived. True if anything did.
    ///
    /// A PROTOACK falling due in a poll that read packets waits (one per connection)
    /// until the next packet to that host, which carries it in the same write, or until
    /// a poll that reads nothing: written at once, it would go in a write (and, between
    /// hosts, a TCP segment) of its own just before the reply the program is about to
    /// send, delaying that reply by a system call and its trip through the network
    /// stack (about 0.4 us per exchange of small messages on loopback with the default
    /// ACKMARK of 16). The sender loses at most one ACKMARK of its window meanwhile,
    /// which `defer_acks` allows only when HIWATER is at least twice ACKMARK; a sender
    /// that fills its window sends nothing more, so the poll that reads nothing comes.
    pub fn poll(&mut self, st: &mut State) -> bool {
        let mut any = false;
        for i in 0..self.links.len() {
            if self.links[i].dead {
                continue;
            }
            match self.poll_link(i, st) {
                Ok(progress) => any |= progress,
                Err(reason) => self.lose(i, &reason, st),
            }
        }
        for to in std::mem::take(&mut self.tr.acks_due) {
            let ack = self.tr.protoack(to);
            if let Some(l) = self.link_of[to as usize] {
                self.links[l].queue_ack(&ack);
            }
        }
        for to in std::mem::take(&mut self.tr.answers_due) {
            let answer = self.tr.resume(to, translate::RESUME_ANSWER);
            self.queue_to(to, &answer);
        }
        for (to, count) in std::mem::take(&mut self.tr.resends_due) {
            self.resend(to, count);
        }
        self.ask_stalled();
        let hold_acks = any && self.tr.defer_acks;
        for i in 0..self.links.len() {
            let link = &self.links[i];
            let held = hold_acks && link.holds_one_waiting_ack();
            if !(link.dead || link.out.is_empty() || held) {
                if let Err(reason) = self.links[i].write_out(st) {
                    self.lose(i, &reason, st);
                }
            }
        }
        any
    }

    /// Once a period, asks the processes that confirmed none of our kept packets for a
    /// whole period for their count (a `PROBE`): their answer resends what a loss that
    /// no end saw took (when it shows nothing arrived since), and only confirms what
    /// merely waited for a slow receiver or behind bulk data.
    fn ask_stalled(&mut self) {
        let Some(log) = self.tr.resend.as_mut() else {
            return;
        };
        let now = Instant::now();
        if now < self.next_stall_check {
            return;
        }
        self.next_stall_check = now + self.stall_period;
        for to in log.stalled() {
            let ask = self.tr.resume(to, translate::PROBE);
            self.queue_to(to, &ask);
        }
    }

    fn queue_to(&mut self, to: u32, p: &PacketRepr) {
        if let Some(l) = self.link_of[to as usize] {
            self.links[l].queue_packet(p);
        }
    }

    /// Queues again, after whatever the link holds, the kept packets to `to` numbered
    /// above `count`: everything at or below `count` arrived, and anything queued ahead
    /// that the receiver finds early comes again in this resend.
    fn resend(&mut self, to: u32, count: u64) {
        let (Some(l), Some(log)) = (self.link_of[to as usize], self.tr.resend.as_ref()) else {
            return;
        };
        for bytes in log.kept_after(to, count) {
            self.links[l].out.push_shared(bytes.clone());
        }
    }

    /// Link `i` failed. When its host is a relay of a cluster with another live relay,
    /// and the job survives a relay's death, that relay takes its processes over and
    /// every remote process is asked to resend what may have been lost; otherwise the
    /// job ends.
    fn lose(&mut self, i: usize, reason: &str, st: &mut State) {
        let heir = self.relay_of[i].and_then(|client| {
            let host = self.links[i].host;
            let mut live: Vec<usize> = (0..self.links.len())
                .filter(|&j| j != i && !self.links[j].dead && self.relay_of[j] == Some(client))
                .collect();
            // The next relay after the lost one in host order, wrapping around.
            live.sort_by_key(|&j| (self.links[j].host < host, self.links[j].host));
            live.first().copied()
        });
        let Some(heir) = heir else {
            crate::fatal(&format!(
                "{}: {reason}; the connection is dropped and the job ends",
                self.links[i].describe()
            ));
        };
        crate::notice(&format!(
            "{}: {reason}; {} (another relay of that cluster) takes over its processes",
            self.links[i].describe(),
            self.links[heir].describe()
        ));
        let lost = &mut self.links[i];
        lost.dead = true;
        lost.rx = None;
        lost.rlen = 0;
        lost.read_end = READ_AHEAD;
        let _ = lost.sock.shutdown(std::net::Shutdown::Both);
        // Its packets are kept for resending; the frames they carried are done here.
        lost.out.abandon(st);
        for l in self.link_of.iter_mut().filter(|l| **l == Some(i)) {
            *l = Some(heir);
        }
        for to in 0..self.link_of.len() as u32 {
            if self.link_of[to as usize].is_some() {
                let ask = self.tr.resume(to, translate::RESUME);
                self.queue_to(to, &ask);
            }
        }
    }

    fn poll_link(&mut self, i: usize, st: &mut State) -> Result<bool, String> {
        let max_data = self.tr.max_data as u32;
        let mut any = false;
        // A whole header was read behind a payload: parse it before reading on.
        let mut header_waiting = false;
        loop {
            let link = &mut self.links[i];
            if link.got_fini {
                return Ok(any);
            }
            if let Some(rx) = link.rx.as_mut() {
                // The bytes behind the payload come in the same call: behind a long
                // payload only the next packet's header (most likely a long one's too,
                // whose payload then also goes straight to its destination), else as
                // much as the buffer takes.
                let long = rx.len - rx.got >= READ_AHEAD;
                let end = if long { HEADER_LEN } else { link.read_end };
                let tail = &mut link.rbuf[link.rlen..end.max(link.rlen)];
                let (n, behind) = read_into_sink(&mut link.sock, rx, st, tail)?;
                any |= n + behind > 0;
                link.rlen += behind;
                if rx.got < rx.len {
                    return Ok(any);
                }
                let rx = link.rx.take().expect("checked above");
                st.end_frame(rx.from, rx.sink, rx.delivery);
                header_waiting = link.rlen >= HEADER_LEN;
                continue;
            }
            if !std::mem::take(&mut header_waiting) {
                let n = match link.sock.read(&mut link.rbuf[link.rlen..link.read_end]) {
                    Ok(0) => return Err(CLOSED_BEFORE_FINI.into()),
                    Ok(n) => n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(any),
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => return Err(connection_failure("read", &e)),
                };
                any = true;
                link.rlen += n;
            }
            let mut at = 0;
            while link.rlen - at >= HEADER_LEN {
                let view = PacketHeader::new_checked(&link.rbuf[at..at + HEADER_LEN])
                    .map_err(|e| e.to_string())?;
                let p = PacketRepr::parse(&view, max_data)
                    .map_err(|e| format!("malformed packet: {e}"))?;
                let len = p.data_len as usize;
                let have = (link.rlen - at - HEADER_LEN).min(len);
                let data = &link.rbuf[at + HEADER_LEN..at + HEADER_LEN + have];
                if have == len {
                    match self.tr.arrive(&p, data)? {
                        Arrival::Frame { from, head } => {
                            st.on_frame(from, &head, data);
                            if let Frame::Rts { msg, .. } = head.frame {
                                claim_if_matched(&mut self.tr, st, from, msg);
                            }
                        }
                        Arrival::Nothing | Arrival::Dropped => {}
                        Arrival::Fini => link.got_fini = true,
                    }
                    at += HEADER_LEN + len;
                    // (A packet wanted whole ends the buffer: nothing follows it.)
                    link.read_end = READ_AHEAD;
                    continue;
                }
                if self.tr.wants_whole(&p) || self.tr.resend.is_some() {
                    // A long message's first piece (and what comes early behind it)
                    // waits whole for its receive; so does every packet when packets
                    // may come again after a relay's death
                    // (only a whole packet is counted as arrived, so a resend restarts
                    // one cut off with its connection).
                    if link.rbuf.len() < HEADER_LEN + len {
                        link.rbuf.resize(HEADER_LEN + len, 0);
                    }
                    // Moved to the buffer's start below.
                    link.read_end = READ_AHEAD.max(HEADER_LEN + len);
                    break;
                }
                // The payload is still arriving: its destination is known now (the
                // frame is matched here), so the rest is read straight into it.
                let Arrival::Frame { from, head } = self.tr.arrive(&p, data)? else {
                    return Err(format!("{:?} packet with data", p.ty));
                };
                let (sink, delivery) = st.begin_frame(from, &head, len as u64);
                let mut rx = RxPayload {
                    from,
                    sink: sized(sink, len),
                    delivery,
                    got: 0,
                    len,
                };
                place(&mut rx, st, data);
                link.rx = Some(rx);
                at = link.rlen;
            }
            link.rbuf.copy_within(at..link.rlen, 0);
            link.rlen -= at;
            if link.rx.is_some() {
                continue;
            }
        }
    }

    /// Translates and writes the frames queued for world rank `to`.
    pub fn flush(&mut self, st: &mut State, to: u32) {
        let Some(l) = self.link_of[to as usize] else {
            return;
        };
        self.links[l].resize_queues();
        // Built up to the write-ahead and written, again while the socket takes all of it:
        // the write-ahead bounds what a reply queued later waits behind in this process,
        // not what one poll may send (256 KiB per poll left the lab's link idle whenever
        // the sender waited for its turn on the processor: bench/impi/FINDINGS.md 8).
        loop {
            let more = self.build_packets(st, to, l);
            if let Err(reason) = self.links[l].write_out(st) {
                self.lose(l, &reason, st);
                return;
            }
            if !more || self.links[l].pending() > 0 {
                return;
            }
        }
    }

    /// Builds the packets of the frames queued for world rank `to` onto link `l` until
    /// the write-ahead is reached (then true: more may follow) or nothing more can go now.
    fn build_packets(&mut self, st: &mut State, to: u32, l: usize) -> bool {
        let w = to as usize;
        while self.links[l].pending() < self.links[l].queue.write_ahead {
            // A reply to the peer's own messages goes before our queued frames to it
            // (even between the packets of a long message's data): the peer's data, or
            // its synchronous send, waits for it. IMPI orders the packets of each
            // message, and a reply is a packet of none of ours; packets are numbered
            // (for resends) only as they are built, below.
            let at = st.peers[w]
                .queue
                .iter()
                .position(|f| matches!(f.head.frame, Frame::Cts { .. } | Frame::SyncAck { .. }))
                .unwrap_or(0);
            let Some(front) = st.peers[w].queue.get(at) else {
                return false;
            };
            let done = if at == 0 { self.done[w] } else { 0 };
            let frame = front.head.frame;
            let payload_len = match frame {
                Frame::Eager { len, .. } => len,
                _ => front.payload.len(),
            };
            let mut blocked = false;
            let next = self
                .tr
                .next_packet(to, &frame, payload_len, done, &mut blocked);
            if blocked {
                return false;
            }
            if let Some(o) = next {
                let link = &mut self.links[l];
                let source = PayloadSource::of(st, &front.payload, front.on_written);
                if let Some(log) = self.tr.resend.as_mut() {
                    // Kept whole for a resend: the send buffer may be gone by then.
                    let mut bytes = Vec::with_capacity(HEADER_LEN + o.len as usize);
                    bytes.extend_from_slice(&o.packet.emit());
                    source.append(o.offset, o.len, &mut bytes);
                    let bytes = std::sync::Arc::new(bytes);
                    link.out.push_shared(bytes.clone());
                    log.keep(to, o.packet.reserved, bytes);
                } else {
                    link.queue_packet(&o.packet);
                    source.queue(o.offset, o.len, &mut link.out);
                }
                if at == 0 {
                    self.done[w] += o.len;
                    let more = matches!(frame, Frame::Data { .. } | Frame::Early { .. })
                        && self.done[w] < self.tr.streamed_len(payload_len);
                    if more {
                        continue;
                    }
                }
            }
            if at == 0 {
                self.done[w] = 0;
            }
            let finished = st.peers[w].queue.remove(at).and_then(|f| f.on_written);
            if let Frame::Cts { msg, rreq } = frame {
                let piece = self.tr.matched_long(to, msg, rreq);
                if !piece.is_empty() {
                    st.on_frame(to, &Head::new(Frame::Data { rreq, offset: 0 }), &piece);
                }
            }
            if let Some(req) = finished {
                // Reported once its last byte is written: its buffer may be read until then.
                self.links[l].out.push_written(req);
            }
        }
        true
    }

    /// Sends FINI on every connection (once), after everything queued.
    pub fn send_fini(&mut self) {
        for l in self.links.iter_mut().filter(|l| !l.sent_fini && !l.dead) {
            l.queue_packet(&Translator::fini());
            l.sent_fini = true;
        }
    }

    /// True once every connection not lost has sent and received FINI and has nothing
    /// to write.
    pub fn finished(&self) -> bool {
        !self.links.iter().any(HostLink::busy)
    }
}

/// Long message `msg` from `from` just arrived: if a posted receive matched it (its `Cts`
/// is queued), the receive takes the first piece now rather than when the `Cts` leaves,
/// so the packets sent early behind it go straight to the receive instead of being
/// held and copied twice.
fn claim_if_matched(tr: &mut Translator, st: &mut State, from: u32, msg: u64) {
    if !tr.accept_early {
        return;
    }
    let cts = st.peers[from as usize]
        .queue
        .iter()
        .find_map(|f| match f.head.frame {
            Frame::Cts { msg: m, rreq } if m == msg => Some(rreq),
            _ => None,
        });
    if let Some(rreq) = cts {
        // When the Cts is built, `matched_long` finds nothing left to hand over.
        let piece = tr.matched_long(from, msg, rreq);
        if !piece.is_empty() {
            st.on_frame(from, &Head::new(Frame::Data { rreq, offset: 0 }), &piece);
        }
    }
}

/// A buffer sink sized for a payload of `len` bytes; a payload with nowhere to go is
/// read and dropped.
fn sized(sink: Sink, len: usize) -> Sink {
    match sink {
        Sink::Buffer(mut v) => {
            v.resize(len, 0);
            Sink::Buffer(v)
        }
        Sink::None if len > 0 => Sink::Discard,
        other => other,
    }
}

/// The destination of payload bytes [got, got + n) of `rx`, if it is memory.
fn destination<'a>(rx: &'a mut RxPayload, st: &'a State, n: usize) -> Option<&'a mut [u8]> {
    let at = rx.got;
    match &mut rx.sink {
        Sink::Buffer(v) => Some(&mut v[at..at + n]),
        Sink::Direct { req, offset } => match st.requests.get(*req).map(|r| &r.kind) {
            Some(ReqKind::Recv(r)) => r.buf.dense_mut(*offset + at as u64, n),
            _ => None,
        },
        Sink::Discard | Sink::None => None,
    }
}

/// Places payload bytes that were read ahead with the header.
fn place(rx: &mut RxPayload, st: &State, data: &[u8]) {
    if let Some(dst) = destination(rx, st, data.len()) {
        dst.copy_from_slice(data);
    }
    rx.got += data.len();
}

/// Reads the rest of a payload straight into its destination and, in the same call, what
/// follows it on the connection into `behind` (one system call per packet instead of
/// two). Returns the bytes read into each.
fn read_into_sink(
    sock: &mut TcpStream,
    rx: &mut RxPayload,
    st: &State,
    behind: &mut [u8],
) -> Result<(usize, usize), String> {
    let want = rx.len - rx.got;
    let mut scratch = Vec::new();
    let n = {
        let dst = match destination(rx, st, want) {
            Some(d) => d,
            None => {
                scratch.resize(want.min(1 << 20), 0);
                &mut scratch[..]
            }
        };
        // Bytes past the payload only once the payload fits whole.
        let behind = if dst.len() == want { behind } else { &mut [] };
        let mut iov = [IoSliceMut::new(dst), IoSliceMut::new(behind)];
        match sock.read_vectored(&mut iov) {
            Ok(0) => return Err("closed its connection inside a packet".into()),
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => 0,
            Err(e) => return Err(connection_failure("read", &e)),
        }
    };
    let payload = n.min(want);
    rx.got += payload;
    Ok((payload, n - payload))
}

/// Where a frame's data is: the frame's own payload, or, for a rendezvous request
/// (which has none), the send request's data.
enum PayloadSource<'a> {
    Bytes(&'a [u8]),
    Send {
        st: &'a State,
        req: crate::request::ReqId,
        base: u64,
    },
    Nothing,
}

impl<'a> PayloadSource<'a> {
    fn of(
        st: &'a State,
        payload: &'a Payload,
        on_written: Option<crate::request::ReqId>,
    ) -> PayloadSource<'a> {
        match payload {
            Payload::Owned(v) => PayloadSource::Bytes(v),
            Payload::Send { req, offset, .. } => PayloadSource::Send {
                st,
                req: *req,
                base: *offset,
            },
            Payload::None => match on_written {
                Some(req) => PayloadSource::Send { st, req, base: 0 },
                None => PayloadSource::Nothing,
            },
        }
    }

    fn send_buffer(st: &State, req: crate::request::ReqId) -> Option<&crate::request::SendOp> {
        match st.requests.get(req).map(|r| &r.kind) {
            Some(ReqKind::Send(s)) => Some(s),
            _ => None,
        }
    }

    /// Queues bytes [offset, offset + len): large dense ranges are written from the send
    /// buffer itself, the rest is copied (packed).
    fn queue(&self, offset: u64, len: u64, out: &mut OutQueue) {
        if len == 0 {
            return;
        }
        match *self {
            PayloadSource::Bytes(v) => out.push_bytes(&v[offset as usize..(offset + len) as usize]),
            PayloadSource::Send { st, req, base } => {
                let Some(s) = Self::send_buffer(st, req) else {
                    return;
                };
                if len >= outq::BY_REFERENCE && s.buf.is_contiguous() {
                    out.push_send(req, base + offset, len);
                } else {
                    let mut packed = vec![0u8; len as usize];
                    s.buf.pack_into(base + offset, &mut packed);
                    out.push_bytes(&packed);
                }
            }
            PayloadSource::Nothing => {}
        }
    }

    /// Appends a copy of bytes [offset, offset + len) to `into`.
    fn append(&self, offset: u64, len: u64, into: &mut Vec<u8>) {
        match *self {
            PayloadSource::Bytes(v) => {
                into.extend_from_slice(&v[offset as usize..(offset + len) as usize]);
            }
            PayloadSource::Send { st, req, base } => {
                if let Some(s) = Self::send_buffer(st, req) {
                    let at = into.len();
                    into.resize(at + len as usize, 0);
                    s.buf.pack_into(base + offset, &mut into[at..]);
                }
            }
            PayloadSource::Nothing => {}
        }
    }
}

#[cfg(test)]
mod tests;
