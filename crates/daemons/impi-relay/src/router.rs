//! The data phase, sans-IO: host connections on both sides, packets routed by
//! `pk_dest`, `pk_src`/`pk_dest` rewritten, forwarded whole (store-and-forward) or,
//! with [`RouterConfig::cut_through`], as they arrive.
//!
//! A packet's header is parsed, checked and rewritten in place as soon as its 128 bytes
//! are in. By default the source is then read until the packet is whole, and only then
//! queued on its destination connection, which takes it at memory speed. Cut-through
//! (needed to splice, see [`RouterConfig::cut_through`]), the header is queued at once
//! and the data follows as it arrives, once the source's read-ahead is drained read
//! straight into the destination's send buffer. Cut-through holds a destination to the
//! pace at which one source's packet trickles in while the packets of its other sources,
//! arriving in parallel over the same network, wait: the case of every trunk in
//! destination mode, where several hosts send through one relay to one host, and what
//! kept 4 trunks far from 4 times one trunk's bandwidth (docs/impi-relay.md, "Trunking
//! bandwidth"). A destination carries one packet at a time:
//! other sources with a packet for it wait (read until it is whole, then not read), and
//! take turns in arrival order. Each destination's send buffer is bounded; a source
//! whose destination is full is not read until it drains. A source never waits on
//! anything but its current packet's destination, so one slow connection stalls only
//! the traffic that goes to it.
//!
//! FINI is aggregated per direction ([`Topology::fini_sources`]). A connection that
//! closes or breaks the protocol before FINI is dropped with the reason: the rest of
//! the packet it was streaming is cut off, so the connection that packet was going to
//! is dropped too, and packets still coming for it are discarded. Its processes'
//! messages are lost, so the job cannot finish: the first such reason is kept
//! ([`Router::broken`]) and the I/O layer ends the relay with it, closing every
//! connection so that every party learns at once. A connection refused at its
//! handshake is just closed (the job goes on). The one loss that does not end the job:
//! in a survivable job, a relay host of another client that dies while another of its
//! hosts lives ([`Topology::lose_host`]); its processes move to that host, and the
//! crossmpi ends resend what was lost with it.

use crate::topology::{Acceptor, Dial, Link, Topology};
use crossmpi_impi::wire::handshake::{HostHandshake, HANDSHAKE_LEN};
use crossmpi_impi::wire::packet::{PacketHeader, PacketRepr, PacketType, Proc, HEADER_LEN};
use std::collections::{HashMap, HashSet, VecDeque};

pub type ConnId = usize;

/// Memory bounds of the data phase.
#[derive(Debug, Clone, Copy)]
pub struct RouterConfig {
    /// Bytes queued towards one connection beyond which its sources are not read.
    pub send_buffer: usize,
    /// Bytes read ahead from one connection (headers and small packets in one read).
    pub read_ahead: usize,
    /// Accepted connections that may wait for their handshake at once; more are refused.
    pub max_handshakes: usize,
    /// Pass packet data on as it arrives instead of once the packet is whole (see the
    /// module's comment); splicing needs it. Packets from a relay host of a survivable
    /// job are always passed on whole ([`Topology::whole_packets_from`]).
    pub cut_through: bool,
}

impl Default for RouterConfig {
    fn default() -> RouterConfig {
        RouterConfig {
            send_buffer: 256 << 10,
            read_ahead: 64 << 10,
            max_handshakes: 64,
            cut_through: false,
        }
    }
}

/// What the I/O layer must do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouterEvent {
    /// Close this connection: it is finished (FINI both ways, everything written) when
    /// `reason` is None, else refused or dropped for that reason.
    Close {
        conn: ConnId,
        reason: Option<String>,
    },
}

/// A byte queue with a bound: data in `bytes[head..tail]`, grown on demand.
#[derive(Debug, Default)]
struct Buf {
    bytes: Vec<u8>,
    head: usize,
    tail: usize,
    bound: usize,
    /// Bytes queued ahead of the data outside the buffer: spliced into the I/O layer's
    /// pipe towards this connection, still to be written. They count against the bound.
    piped: usize,
}

impl Buf {
    fn new(bound: usize) -> Buf {
        Buf {
            bound,
            ..Buf::default()
        }
    }

    fn len(&self) -> usize {
        self.tail - self.head
    }

    fn room(&self) -> usize {
        self.bound.saturating_sub(self.len() + self.piped)
    }

    /// Nothing is left to write, in the buffer or the pipe.
    fn is_drained(&self) -> bool {
        self.len() == 0 && self.piped == 0
    }

    fn data(&self) -> &[u8] {
        &self.bytes[self.head..self.tail]
    }

    fn data_mut(&mut self) -> &mut [u8] {
        &mut self.bytes[self.head..self.tail]
    }

    fn consume(&mut self, n: usize) {
        self.head += n.min(self.len());
        if self.head == self.tail {
            self.head = 0;
            self.tail = 0;
        }
    }

    /// `want` writable bytes after the data (moving the data to the front or growing).
    fn spare(&mut self, want: usize) -> &mut [u8] {
        if self.bytes.len() - self.tail < want && self.head > 0 {
            self.bytes.copy_within(self.head..self.tail, 0);
            self.tail -= self.head;
            self.head = 0;
        }
        if self.bytes.len() - self.tail < want {
            self.bytes.resize(self.tail + want, 0);
        }
        &mut self.bytes[self.tail..self.tail + want]
    }

    fn commit(&mut self, n: usize) {
        self.tail += n;
    }

    fn push(&mut self, data: &[u8]) {
        self.spare(data.len()).copy_from_slice(data);
        self.commit(data.len());
    }
}

/// Where a connection's incoming stream is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rx {
    /// Accepted: the 4-byte host rank comes first.
    Handshake(Acceptor),
    Header,
    /// A parsed and rewritten header waiting for its destination to take it.
    Held {
        to: Link,
        data: u32,
    },
    /// `left` data bytes of the current packet still go to connection `to`.
    Payload {
        to: ConnId,
        left: u32,
    },
    /// `left` data bytes of a packet whose destination was dropped are skipped.
    Discard {
        left: u32,
    },
    /// The peer sent FINI: nothing may follow.
    Fini,
}

#[derive(Debug)]
struct Conn {
    link: Option<Link>,
    rx: Rx,
    inb: Buf,
    out: Buf,
    /// The source whose packet is streaming into this connection.
    owner: Option<ConnId>,
    /// Sources waiting for this connection to take their packet.
    waiters: Vec<ConnId>,
    sent_fini: bool,
    /// Its packets are passed on only once whole (see [`Router::set_link`]).
    whole: bool,
}

pub fn describe(link: Link) -> String {
    match link {
        Link::Outside { host } => format!("outside IMPI host {host}"),
        Link::Inside { host, client } => {
            format!("inside IMPI host {host} (on the virtual host of client {client})")
        }
    }
}

pub struct Router {
    topo: Topology,
    cfg: RouterConfig,
    conns: Vec<Option<Conn>>,
    by_link: HashMap<Link, ConnId>,
    fini_got: HashSet<Link>,
    finished: HashSet<Link>,
    /// Sources holding a packet for a link that is not connected yet.
    awaiting_link: Vec<ConnId>,
    ready: VecDeque<ConnId>,
    events: VecDeque<RouterEvent>,
    handshakes: usize,
    nlinks: usize,
    /// Links dropped for a reason: packets for them are discarded.
    dropped: HashSet<Link>,
    /// Something FINI-related changed: look for FINIs due and finished connections.
    fini_dirty: bool,
    /// Why the first established connection was dropped: the job cannot finish.
    broken: Option<String>,
}

impl Router {
    pub fn new(topo: Topology, cfg: RouterConfig) -> Router {
        let nlinks = topo.links().len();
        Router {
            topo,
            cfg,
            conns: Vec::new(),
            by_link: HashMap::new(),
            fini_got: HashSet::new(),
            finished: HashSet::new(),
            awaiting_link: Vec::new(),
            ready: VecDeque::new(),
            events: VecDeque::new(),
            handshakes: 0,
            nlinks,
            dropped: HashSet::new(),
            fini_dirty: false,
            broken: None,
        }
    }

    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    pub fn poll_event(&mut self) -> Option<RouterEvent> {
        self.events.pop_front()
    }

    /// True when every link has exchanged FINI both ways and written everything.
    pub fn is_done(&self) -> bool {
        self.finished.len() == self.nlinks
    }

    /// Why the job cannot finish any more: the reason the first established connection
    /// was dropped (it closed or broke the protocol before FINI), if one was.
    pub fn broken(&self) -> Option<&str> {
        self.broken.as_deref()
    }

    /// The link of a connection, once known.
    pub fn link(&self, conn: ConnId) -> Option<Link> {
        self.conns.get(conn)?.as_ref()?.link
    }

    fn add(&mut self, conn: Conn) -> ConnId {
        self.conns.push(Some(conn));
        self.conns.len() - 1
    }

    fn conn(&self, rx: Rx) -> Conn {
        Conn {
            link: None,
            rx,
            inb: Buf::new(self.cfg.read_ahead),
            out: Buf::new(self.cfg.send_buffer),
            owner: None,
            waiters: Vec::new(),
            sent_fini: false,
            whole: false,
        }
    }

    /// A connection accepted at `at`; None when too many are waiting for their
    /// handshake already (close it).
    pub fn accept(&mut self, at: Acceptor) -> Option<ConnId> {
        if self.handshakes >= self.cfg.max_handshakes {
            return None;
        }
        self.handshakes += 1;
        let c = self.conn(Rx::Handshake(at));
        Some(self.add(c))
    }

    /// `c` is on `link`: when its packets are passed on only once whole (not
    /// [`RouterConfig::cut_through`], or [`Topology::whole_packets_from`]), its
    /// read-ahead takes a whole packet.
    fn set_link(&self, c: &mut Conn, link: Link) {
        c.link = Some(link);
        c.whole = !self.cfg.cut_through || self.topo.whole_packets_from(link);
        if c.whole {
            c.inb.bound = c.inb.bound.max(HEADER_LEN + self.topo.max_data as usize);
        }
    }

    /// A connection the relay opened as `dial` says; its handshake is queued.
    pub fn dialed(&mut self, dial: &Dial) -> ConnId {
        let mut c = self.conn(Rx::Header);
        self.set_link(&mut c, dial.link);
        c.out.push(
            &HostHandshake {
                host_rank: dial.handshake,
            }
            .emit(),
        );
        let id = self.add(c);
        self.register(dial.link, id);
        self.settle();
        id
    }

    fn register(&mut self, link: Link, conn: ConnId) {
        self.by_link.insert(link, conn);
        self.ready.extend(self.awaiting_link.drain(..));
        self.fini_dirty = true;
    }

    /// Where to read into for `conn` now; None when it must not be read.
    pub fn read_buf(&mut self, conn: ConnId) -> Option<&mut [u8]> {
        let c = self.conns.get(conn)?.as_ref()?;
        match c.rx {
            // A packet passed on only once whole: read until it is.
            Rx::Held { data, .. } if Self::incomplete(c, data) => {
                let c = self.conns.get_mut(conn)?.as_mut()?;
                let room = c.inb.room();
                (room > 0).then(|| c.inb.spare(room))
            }
            Rx::Held { .. } => None,
            Rx::Payload { to, left } if c.inb.len() == 0 => {
                let dest = self.conns.get_mut(to)?.as_mut()?;
                let room = dest.out.room().min(left as usize);
                if room == 0 {
                    if !dest.waiters.contains(&conn) {
                        dest.waiters.push(conn);
                    }
                    return None;
                }
                Some(dest.out.spare(room))
            }
            Rx::Payload { .. } => None,
            _ => {
                let c = self.conns.get_mut(conn)?.as_mut()?;
                let room = c.inb.room();
                (room > 0).then(|| c.inb.spare(room))
            }
        }
    }

    /// `n` bytes were read into the buffer [`Router::read_buf`] gave.
    pub fn on_read(&mut self, conn: ConnId, n: usize) {
        self.moved(conn, n, false);
    }

    /// Where the I/O layer may splice `conn`'s bytes: when it streams a packet's data
    /// with nothing read ahead and nothing queued towards its destination (buffer and
    /// pipe empty), up to the returned count may go from its socket to the
    /// destination's through the pipe (then [`Router::on_spliced`]). None: read through
    /// [`Router::read_buf`]; bytes copied there while the pipe drains stay behind it.
    pub fn splice_route(&self, conn: ConnId) -> Option<(ConnId, usize)> {
        let c = self.conns.get(conn)?.as_ref()?;
        let Rx::Payload { to, left } = c.rx else {
            return None;
        };
        let dest = self.conns.get(to)?.as_ref()?;
        let room = dest.out.room().min(left as usize);
        (c.inb.len() == 0 && dest.out.is_drained() && room > 0).then_some((to, room))
    }

    /// `n` bytes of `conn`'s packet data went into the pipe towards its destination.
    pub fn on_spliced(&mut self, conn: ConnId, n: usize) {
        self.moved(conn, n, true);
    }

    /// Bytes in the pipe towards `conn`: they go before [`Router::write_buf`].
    pub fn piped(&self, conn: ConnId) -> usize {
        self.conns
            .get(conn)
            .and_then(Option::as_ref)
            .map_or(0, |c| c.out.piped)
    }

    /// `n` bytes were read: into the read buffer, or (`piped`) into the pipe towards
    /// the destination of the packet data `conn` streams.
    fn moved(&mut self, conn: ConnId, n: usize, piped: bool) {
        let Some(c) = self.conns.get_mut(conn).and_then(Option::as_mut) else {
            return;
        };
        match c.rx {
            Rx::Payload { to, left } if c.inb.len() == 0 => {
                let left = left - n as u32;
                c.rx = if left == 0 {
                    Rx::Header
                } else {
                    Rx::Payload { to, left }
                };
                if let Some(dest) = self.conns.get_mut(to).and_then(Option::as_mut) {
                    if piped {
                        dest.out.piped += n;
                    } else {
                        dest.out.commit(n);
                    }
                }
                if left == 0 {
                    self.release(to);
                }
            }
            _ => c.inb.commit(n),
        }
        self.ready.push_back(conn);
        self.settle();
    }

    /// Bytes waiting to be written to `conn`.
    pub fn write_buf(&self, conn: ConnId) -> &[u8] {
        match self.conns.get(conn).and_then(Option::as_ref) {
            Some(c) => c.out.data(),
            None => &[],
        }
    }

    /// `n` bytes of [`Router::write_buf`] were written.
    pub fn on_written(&mut self, conn: ConnId, n: usize) {
        self.drained(conn, n, false);
    }

    /// `n` bytes of the pipe towards `conn` were written.
    pub fn on_pipe_written(&mut self, conn: ConnId, n: usize) {
        self.drained(conn, n, true);
    }

    fn drained(&mut self, conn: ConnId, n: usize, piped: bool) {
        let Some(c) = self.conns.get_mut(conn).and_then(Option::as_mut) else {
            return;
        };
        if piped {
            c.out.piped -= n.min(c.out.piped);
        } else {
            c.out.consume(n);
        }
        self.fini_dirty |= c.sent_fini;
        let waiters = std::mem::take(&mut c.waiters);
        self.ready.extend(waiters);
        self.settle();
    }

    /// The peer closed `conn` (or reading or writing it failed: `error`).
    pub fn on_close(&mut self, conn: ConnId, error: Option<String>) {
        let Some(c) = self.conns.get_mut(conn).and_then(Option::take) else {
            return;
        };
        match c.link {
            None => {
                self.handshakes -= 1;
                let reason = error.unwrap_or_else(|| "closed its connection".into());
                self.events.push_back(RouterEvent::Close {
                    conn,
                    reason: Some(format!("{reason} before its handshake")),
                });
            }
            Some(link) if c.rx == Rx::Fini && c.owner.is_none() && c.out.is_drained() => {
                // It sent FINI and left with nothing owed to it but our FINI.
                self.by_link.remove(&link);
                self.finished.insert(link);
                self.events
                    .push_back(RouterEvent::Close { conn, reason: None });
                self.settle();
            }
            Some(link) => {
                let why = match error {
                    None => format!(
                        "{} closed its connection before FINI: a process of its cluster, \
                         or a relay between, ended or failed",
                        describe(link)
                    ),
                    Some(e) => format!("{}: {e} (before FINI)", describe(link)),
                };
                let heir = match link {
                    Link::Outside { host } => self.topo.lose_host(host),
                    Link::Inside { .. } => None,
                };
                match heir {
                    Some(heir) => self.survive(conn, c, link, heir, why),
                    None => self.drop_link(conn, c, link, why),
                }
                self.settle();
            }
        }
    }

    /// Drops connection `conn` (already taken out of its slot as `c`) for `reason`: the
    /// job cannot finish.
    fn drop_link(&mut self, conn: ConnId, c: Conn, link: Link, reason: String) {
        self.by_link.remove(&link);
        self.dropped.insert(link);
        if self.broken.is_none() {
            self.broken = Some(reason.clone());
        }
        self.events.push_back(RouterEvent::Close {
            conn,
            reason: Some(reason),
        });
        self.cut(conn, c, link);
    }

    /// Drops connection `conn` to a relay host that died (`c`, taken out of its slot)
    /// while outside host `heir` of its client lives: the job goes on. `heir` now holds
    /// its processes ([`Topology::lose_host`]), what was queued for it is forgotten and
    /// what was streaming into it discarded (the ends resend what was lost), and it
    /// counts as having exchanged FINI both ways. A packet it was streaming is in
    /// whole ([`Topology::whole_packets_from`]): its rest goes on, beyond the bound.
    fn survive(&mut self, conn: ConnId, mut c: Conn, link: Link, heir: u32, reason: String) {
        if let Rx::Payload { to, left } = c.rx {
            if let Some(rest) = c.inb.data().get(..left as usize) {
                if let Some(dest) = self.conns.get_mut(to).and_then(Option::as_mut) {
                    dest.out.push(rest);
                }
                c.rx = Rx::Header;
                self.release(to);
            }
        }
        self.by_link.remove(&link);
        self.finished.insert(link);
        self.fini_got.insert(link);
        self.fini_dirty = true;
        self.events.push_back(RouterEvent::Close {
            conn,
            reason: Some(format!(
                "{reason}; the job goes on (survivable job): {} takes over its processes",
                describe(Link::Outside { host: heir })
            )),
        });
        self.cut(conn, c, link);
    }

    /// What a dropped connection leaves: its waiters move on, what was streaming into
    /// it is discarded, and the connection its own packet was streaming into is dropped
    /// too (its stream would be cut mid-packet).
    fn cut(&mut self, conn: ConnId, c: Conn, link: Link) {
        self.ready.extend(c.waiters);
        for (id, other) in self.conns.iter_mut().enumerate() {
            if let Some(o) = other.as_mut() {
                if let Rx::Payload { to, left } = o.rx {
                    if to == conn {
                        o.rx = Rx::Discard { left };
                        self.ready.push_back(id);
                    }
                }
            }
        }
        if let Rx::Payload { to, .. } = c.rx {
            if let Some(dest) = self.conns.get_mut(to).and_then(Option::take) {
                let dest_link = dest.link.expect("a destination has a link");
                let why = format!(
                    "{}: a packet to it was cut off ({})",
                    describe(dest_link),
                    describe(link)
                );
                self.drop_link(to, dest, dest_link, why);
            }
        }
    }

    /// Whether `c`, holding a header with `data` bytes to follow, must wait for more
    /// of them: its packets are passed on only once whole, and this one is not in yet.
    fn incomplete(c: &Conn, data: u32) -> bool {
        c.whole && c.inb.len() < HEADER_LEN + data as usize
    }

    /// Lets `to`'s next waiting source start its packet.
    fn release(&mut self, to: ConnId) {
        if let Some(dest) = self.conns.get_mut(to).and_then(Option::as_mut) {
            dest.owner = None;
            let waiters = std::mem::take(&mut dest.waiters);
            self.ready.extend(waiters);
        }
    }

    /// Runs every connection that may move, then sends the FINIs that became due and
    /// closes the connections that are finished.
    fn settle(&mut self) {
        while let Some(s) = self.ready.pop_front() {
            let Some(mut c) = self.conns.get_mut(s).and_then(Option::take) else {
                continue;
            };
            let result = self.advance(s, &mut c);
            match (result, c.link) {
                (Ok(()), _) => self.conns[s] = Some(c),
                (Err(reason), Some(link)) => {
                    let why = format!("{}: {reason}", describe(link));
                    self.drop_link(s, c, link, why);
                }
                (Err(reason), None) => {
                    self.handshakes -= 1;
                    self.events.push_back(RouterEvent::Close {
                        conn: s,
                        reason: Some(format!("refused: {reason}")),
                    });
                }
            }
        }
        if std::mem::take(&mut self.fini_dirty) {
            self.send_due_finis();
            self.close_finished();
        }
    }

    /// Moves source `s`'s bytes as far as its destinations allow.
    fn advance(&mut self, s: ConnId, c: &mut Conn) -> Result<(), String> {
        loop {
            match c.rx {
                Rx::Handshake(at) => {
                    let Some(link) = self
                        .topo
                        .accept(at, c.inb.data())
                        .map_err(|e| e.to_string())?
                    else {
                        return Ok(());
                    };
                    if self.by_link.contains_key(&link) || self.finished.contains(&link) {
                        return Err(format!("{} is connected already", describe(link)));
                    }
                    c.inb.consume(HANDSHAKE_LEN);
                    self.set_link(c, link);
                    c.rx = Rx::Header;
                    self.handshakes -= 1;
                    self.register(link, s);
                }
                Rx::Header => {
                    if c.inb.len() < HEADER_LEN {
                        return Ok(());
                    }
                    let from = c.link.expect("a header follows the handshake");
                    let hdr = &mut c.inb.data_mut()[..HEADER_LEN];
                    let view = PacketHeader::new_checked(&*hdr).map_err(|e| e.to_string())?;
                    let p = PacketRepr::parse(&view, self.topo.max_data)
                        .map_err(|e| format!("malformed packet: {e}"))?;
                    if p.ty == PacketType::Fini {
                        c.inb.consume(HEADER_LEN);
                        c.rx = Rx::Fini;
                        self.fini_got.insert(from);
                        self.fini_dirty = true;
                        continue;
                    }
                    let (to, src, dest) = self
                        .topo
                        .route(from, &p.src, &p.dest)
                        .map_err(|e| e.to_string())?;
                    let mut view = PacketHeader::new_checked(hdr).map_err(|e| e.to_string())?;
                    view.set_pk_src(src);
                    view.set_pk_dest(dest);
                    c.rx = Rx::Held {
                        to,
                        data: p.data_len,
                    };
                }
                Rx::Held { to, data } => {
                    // A relay host that died since: its processes' live host.
                    let to = self.topo.live(to);
                    if self.dropped.contains(&to) {
                        c.inb.consume(HEADER_LEN);
                        c.rx = if data > 0 {
                            Rx::Discard { left: data }
                        } else {
                            Rx::Header
                        };
                        continue;
                    }
                    if Self::incomplete(c, data) {
                        return Ok(());
                    }
                    let Some(&d) = self.by_link.get(&to) else {
                        self.awaiting_link.push(s);
                        return Ok(());
                    };
                    let dest = self.conns[d].as_mut().ok_or("its destination is gone")?;
                    if dest.owner.is_some() || dest.out.room() < HEADER_LEN {
                        if !dest.waiters.contains(&s) {
                            dest.waiters.push(s);
                        }
                        return Ok(());
                    }
                    dest.out.push(&c.inb.data()[..HEADER_LEN]);
                    c.inb.consume(HEADER_LEN);
                    c.rx = if data > 0 {
                        dest.owner = Some(s);
                        Rx::Payload { to: d, left: data }
                    } else {
                        Rx::Header
                    };
                }
                Rx::Payload { to, left } => {
                    if c.inb.len() == 0 {
                        return Ok(());
                    }
                    let dest = self.conns[to].as_mut().ok_or("its destination is gone")?;
                    let n = c.inb.len().min(left as usize).min(dest.out.room());
                    if n == 0 {
                        if !dest.waiters.contains(&s) {
                            dest.waiters.push(s);
                        }
                        return Ok(());
                    }
                    dest.out.push(&c.inb.data()[..n]);
                    c.inb.consume(n);
                    let left = left - n as u32;
                    if left == 0 {
                        c.rx = Rx::Header;
                        self.release(to);
                    } else {
                        c.rx = Rx::Payload { to, left };
                    }
                }
                Rx::Discard { left } => {
                    let n = c.inb.len().min(left as usize);
                    if n == 0 {
                        return Ok(());
                    }
                    c.inb.consume(n);
                    let left = left - n as u32;
                    c.rx = if left == 0 {
                        Rx::Header
                    } else {
                        Rx::Discard { left }
                    };
                }
                Rx::Fini => {
                    if c.inb.len() > 0 {
                        return Err(format!("{} bytes after FINI", c.inb.len()));
                    }
                    return Ok(());
                }
            }
        }
    }

    /// FINI to every connected link whose sources have all sent theirs.
    fn send_due_finis(&mut self) {
        let fini = PacketRepr::control(PacketType::Fini, Proc::FINI, Proc::FINI).emit();
        let links: Vec<(Link, ConnId)> = self.by_link.iter().map(|(&l, &c)| (l, c)).collect();
        for (link, id) in links {
            let due = self
                .topo
                .fini_sources(link)
                .iter()
                .all(|s| self.fini_got.contains(s));
            if let Some(c) = self.conns[id].as_mut() {
                if due && !c.sent_fini && c.owner.is_none() {
                    c.out.push(&fini);
                    c.sent_fini = true;
                }
            }
        }
    }

    fn close_finished(&mut self) {
        let done: Vec<(Link, ConnId)> = self
            .by_link
            .iter()
            .filter(|(_, &id)| {
                self.conns[id]
                    .as_ref()
                    .is_some_and(|c| c.sent_fini && c.rx == Rx::Fini && c.out.is_drained())
            })
            .map(|(&l, &c)| (l, c))
            .collect();
        for (link, id) in done {
            self.by_link.remove(&link);
            self.finished.insert(link);
            self.conns[id] = None;
            self.events.push_back(RouterEvent::Close {
                conn: id,
                reason: None,
            });
        }
    }
}

#[cfg(test)]
mod tests;
