//! The IMPI route: ranks of other IMPI clients (clusters), reached over one TCP
//! connection per pair of IMPI hosts carrying 128-byte-header IMPI packets.
//!
//! crossmpi makes every process its own IMPI host (GridMPI's mapping): a rank talks to a
//! rank of another cluster directly, with no forwarding daemon in between. A peer host
//! may hold many processes (LAM/MPI's daemon, or a relay presenting a whole cluster): its
//! connection then carries the packets of all of them, told apart by `pk_src`/`pk_dest`.
//! The frames of `proto.rs` are translated to packets and back in [`translate`].

pub mod startup;
pub mod translate;

use crate::header::{Frame, Head};
use crate::proto::{Payload, State};
use crate::request::ReqKind;
use crossmpi_impi::wire::packet::{PacketHeader, PacketRepr, HEADER_LEN};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use translate::{Arrival, Translator};

/// Queued bytes to one host beyond which no more packets are translated until the socket
/// takes some: bounds the copy of a long message to what the connection can absorb.
const WRITE_HIGH_WATER: usize = 4 << 20;

/// One connection to an IMPI host of another client.
pub struct HostLink {
    pub host: u32,
    pub addr: SocketAddr,
    sock: TcpStream,
    rbuf: Vec<u8>,
    rlen: usize,
    wbuf: Vec<u8>,
    wpos: usize,
    sent_fini: bool,
    got_fini: bool,
}

impl HostLink {
    pub fn new(host: u32, addr: SocketAddr, sock: TcpStream) -> std::io::Result<HostLink> {
        sock.set_nonblocking(true)?;
        sock.set_nodelay(true)?;
        Ok(HostLink {
            host,
            addr,
            sock,
            rbuf: vec![0; 256 * 1024],
            rlen: 0,
            wbuf: Vec::new(),
            wpos: 0,
            sent_fini: false,
            got_fini: false,
        })
    }

    fn queue_packet(&mut self, p: &PacketRepr) {
        self.wbuf.extend_from_slice(&p.emit());
    }

    fn pending(&self) -> usize {
        self.wbuf.len() - self.wpos
    }

    /// Writes what the socket takes; an error ends the job.
    fn write_out(&mut self) -> Result<(), String> {
        while self.wpos < self.wbuf.len() {
            match self.sock.write(&self.wbuf[self.wpos..]) {
                Ok(0) => return Err("connection closed while writing".into()),
                Ok(n) => self.wpos += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        if self.wpos == self.wbuf.len() {
            self.wbuf.clear();
            self.wpos = 0;
        } else if self.wpos > WRITE_HIGH_WATER {
            self.wbuf.drain(..self.wpos);
            self.wpos = 0;
        }
        Ok(())
    }

    fn describe(&self) -> String {
        format!("IMPI host {} at {}", self.host, self.addr)
    }
}

pub struct ImpiRoute {
    links: Vec<HostLink>,
    /// Index into `links` of every world rank reached through IMPI.
    link_of: Vec<Option<usize>>,
    pub tr: Translator,
    /// Bytes of the front frame already sent, per world rank.
    done: Vec<u64>,
    epoll: crate::progress::Epoll,
}

impl ImpiRoute {
    pub fn new(
        links: Vec<HostLink>,
        link_of: Vec<Option<usize>>,
        tr: Translator,
    ) -> Result<ImpiRoute, String> {
        let epoll = crate::progress::Epoll::new().map_err(|e| e.to_string())?;
        for l in &links {
            epoll
                .add(std::os::fd::AsRawFd::as_raw_fd(&l.sock))
                .map_err(|e| e.to_string())?;
        }
        let n = link_of.len();
        Ok(ImpiRoute {
            links,
            link_of,
            tr,
            done: vec![0; n],
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
    pub fn poll(&mut self, st: &mut State) -> bool {
        let mut any = false;
        for i in 0..self.links.len() {
            match self.poll_link(i, st) {
                Ok(progress) => any |= progress,
                Err(reason) => crate::fatal(&format!(
                    "{}: {reason}; the connection is dropped and the job ends",
                    self.links[i].describe()
                )),
            }
        }
        for to in std::mem::take(&mut self.tr.acks_due) {
            if let Some(l) = self.link_of[to as usize] {
                let ack = self.tr.protoack(to);
                self.links[l].queue_packet(&ack);
            }
        }
        for l in self.links.iter_mut() {
            if l.pending() > 0 {
                if let Err(e) = l.write_out() {
                    let what = l.describe();
                    crate::fatal(&format!("sending to {what} failed: {e}"));
                }
            }
        }
        any
    }

    fn poll_link(&mut self, i: usize, st: &mut State) -> Result<bool, String> {
        let max_data = self.tr.max_data as usize;
        let mut any = false;
        loop {
            let link = &mut self.links[i];
            if link.got_fini {
                return Ok(any);
            }
            if link.rbuf.len() < HEADER_LEN + max_data {
                link.rbuf.resize(HEADER_LEN + max_data, 0);
            }
            let n = match link.sock.read(&mut link.rbuf[link.rlen..]) {
                Ok(0) => {
                    return Err("closed its connection before FINI: a rank of its cluster \
                                ended or failed (see that cluster's output)"
                        .into())
                }
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(any),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("read failed: {e}")),
            };
            any = true;
            link.rlen += n;
            let mut at = 0;
            while link.rlen - at >= HEADER_LEN {
                let view = PacketHeader::new_checked(&link.rbuf[at..at + HEADER_LEN])
                    .map_err(|e| e.to_string())?;
                let p = PacketRepr::parse(&view, max_data as u32)
                    .map_err(|e| format!("malformed packet: {e}"))?;
                let need = HEADER_LEN + p.data_len as usize;
                if link.rlen - at < need {
                    break;
                }
                let data = &link.rbuf[at + HEADER_LEN..at + need];
                match self.tr.arrive(&p, data)? {
                    Arrival::Frame { from, head } => st.on_frame(from, &head, data),
                    Arrival::Nothing => {}
                    Arrival::Fini => link.got_fini = true,
                }
                at += need;
            }
            link.rbuf.copy_within(at..link.rlen, 0);
            link.rlen -= at;
        }
    }

    /// Translates and writes the frames queued for world rank `to`.
    pub fn flush(&mut self, st: &mut State, to: u32) {
        let Some(l) = self.link_of[to as usize] else {
            return;
        };
        let w = to as usize;
        while self.links[l].pending() < WRITE_HIGH_WATER {
            let Some(front) = st.peers[w].queue.front() else {
                break;
            };
            let frame = front.head.frame;
            let payload_len = match frame {
                Frame::Eager { len, .. } => len,
                _ => front.payload.len(),
            };
            let mut blocked = false;
            let next = self
                .tr
                .next_packet(to, &frame, payload_len, self.done[w], &mut blocked);
            if blocked {
                break;
            }
            if let Some(o) = next {
                let link = &mut self.links[l];
                link.queue_packet(&o.packet);
                append_payload(
                    st,
                    &front.payload,
                    front.on_written,
                    o.offset,
                    o.len,
                    &mut link.wbuf,
                );
                self.done[w] += o.len;
                let more = matches!(frame, Frame::Data { .. })
                    && self.done[w] < self.tr.streamed_len(payload_len);
                if more {
                    continue;
                }
            }
            self.done[w] = 0;
            let finished = st.peers[w].queue.pop_front().and_then(|f| f.on_written);
            if let Frame::Cts { msg, rreq } = frame {
                let piece = self.tr.matched_long(to, msg, rreq);
                if !piece.is_empty() {
                    st.on_frame(to, &Head::new(Frame::Data { rreq, offset: 0 }), &piece);
                }
            }
            if let Some(req) = finished {
                st.frame_written(req);
            }
        }
        let link = &mut self.links[l];
        if let Err(e) = link.write_out() {
            let what = link.describe();
            crate::fatal(&format!("sending to {what} failed: {e}"));
        }
    }

    /// Sends FINI on every connection (once), after everything queued.
    pub fn send_fini(&mut self) {
        for l in self.links.iter_mut().filter(|l| !l.sent_fini) {
            l.queue_packet(&Translator::fini());
            l.sent_fini = true;
        }
    }

    /// True once every connection has sent and received FINI and has nothing to write.
    pub fn finished(&self) -> bool {
        self.links
            .iter()
            .all(|l| l.sent_fini && l.got_fini && l.pending() == 0)
    }
}

/// Appends bytes [offset, offset + len) of a frame's data: the frame's own payload, or,
/// for a rendezvous request (which has none), the send request's data.
fn append_payload(
    st: &State,
    payload: &Payload,
    on_written: Option<crate::request::ReqId>,
    offset: u64,
    len: u64,
    out: &mut Vec<u8>,
) {
    if len == 0 {
        return;
    }
    let (req, base) = match payload {
        Payload::Owned(v) => {
            out.extend_from_slice(&v[offset as usize..(offset + len) as usize]);
            return;
        }
        Payload::Send { req, offset: o, .. } => (*req, *o),
        Payload::None => match on_written {
            Some(req) => (req, 0),
            None => return,
        },
    };
    if let Some(ReqKind::Send(s)) = st.requests.get(req).map(|r| &r.kind) {
        let at = out.len();
        out.resize(at + len as usize, 0);
        s.buf.pack_into(base + offset, &mut out[at..]);
    }
}
