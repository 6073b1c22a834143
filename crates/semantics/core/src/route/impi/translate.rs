//! crossmpi's frames to IMPI packets and back (sans-IO): the point-to-point protocols of
//! `proto.rs` carried in IMPI's forms, so the matching engine stays one for every route.
//!
//! | crossmpi frame | IMPI packet(s) |
//! |---|---|
//! | `Eager` (standard / synchronous) | one `DATA` / `DATASYNC` with the whole message |
//! | `Rts` (long message) | `DATASYNC` carrying the first `max_data` bytes, `pk_msglen` = total |
//! | `Cts` (receiver matched it) | `SYNCACK` echoing `srqid`, with `drqid` = the receive |
//! | `Data` (rest of a long message) | `DATA` packets of at most `max_data` bytes for `drqid` |
//! | `Early` (rest of a long message, sent before the `SYNCACK`) | `DATA` packets with `drqid` = [`EARLY`], `srqid` = the message |
//! | `SyncAck` | `SYNCACK` with `drqid` 0 |
//! | `CancelReq` / `CancelReply` | `CANCEL` / `CANCELYES` or `CANCELNO` |
//! | `Credit` | nothing: IMPI's ackmark/hiwater counters replace eager credit |
//!
//! A long message's first piece arrives before its receive is known, so it waits here
//! until the receiver's `Cts` leaves, and is then handed to the receive as its first
//! `Data`. A `SYNCACK` answers a long message when its `srqid` is a long send in flight,
//! else a synchronous eager one. Continuation packets carry no offset: the receiver
//! counts them in order (one TCP connection per host pair keeps them ordered).
//!
//! `Early` is crossmpi's own, used only when every client is crossmpi: a long message
//! within the sender's allowance (`State::impi_early`) does not wait the round trip to
//! the `SYNCACK` (on a WAN, or behind bulk data through relays, that wait left the path
//! idle). Until the receive is matched its packets are kept with the first piece; the
//! receiver still answers with a `SYNCACK`, which gives the sender its allowance back.

pub mod resend;

use crate::header::{Envelope, Frame, Head};
use crossmpi_impi::flow::{FlowParams, RecvCounter, SendWindow};
use crossmpi_impi::wire::packet::{PacketRepr, PacketType, Proc};
use resend::{Accept, ResendLog};
use std::collections::{HashMap, HashSet};

/// What an arriving packet means for the protocol state.
#[derive(Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Hand this frame, with the packet's data, to the protocol state.
    Frame { from: u32, head: Head },
    /// Flow-control or shutdown traffic, handled here.
    Nothing,
    /// The peer host sent FINI: it sends nothing more on this connection.
    Fini,
    /// A numbered packet already handled, or ahead of one lost with a relay: its data is
    /// read and dropped.
    Dropped,
}

/// `pk_count` of a PROTOACK that asks its receiver to resend (a path of the sender's
/// was lost): everything after the carried count, and to answer with its own count.
pub const RESUME: i64 = -1;
/// `pk_count` of the answer to a `RESUME` or a `PROBE`: resend everything after the
/// carried count (after a `PROBE`, only when that count shows that nothing arrived).
pub const RESUME_ANSWER: i64 = -2;
/// `pk_count` of a PROTOACK that asks its receiver only for its count, sent to a process
/// that confirmed none of our kept packets for a whole period. Unlike `RESUME`, its
/// receiver resends nothing of its own: its own streams have their own checks, and a
/// stream that is merely slow (its confirmations queued behind bulk data) would send
/// everything in flight a second time.
pub const PROBE: i64 = -3;

/// One packet to write: its header and the range of the frame's payload it carries.
#[derive(Debug, PartialEq, Eq)]
pub struct Outbound {
    pub packet: PacketRepr,
    pub offset: u64,
    pub len: u64,
}

/// `pk_drqid` of a `DATA` packet that continues a long message before its receive is
/// known (`Frame::Early`); no request id of ours takes this value.
pub const EARLY: u64 = u64::MAX;

/// A long message arriving in continuation packets.
struct LongIn {
    next: u64,
    msglen: u64,
    /// The sender's id for it, under which early packets come.
    msg: u64,
}

pub struct Translator {
    me: u32,
    /// The IMPI identity of every world rank.
    procs: Vec<Proc>,
    world_of: HashMap<Proc, u32>,
    pub max_data: u64,
    seqnum: u64,
    windows: HashMap<u32, SendWindow>,
    counters: HashMap<u32, RecvCounter>,
    /// Long sends of ours awaiting their SYNCACK: (destination, srqid).
    long_sent: HashSet<(u32, u64)>,
    /// First pieces of long messages whose receive is not yet known, with the message
    /// length: (source, srqid).
    first_pieces: HashMap<(u32, u64), (Vec<u8>, u64)>,
    /// Long messages being received: (source, drqid).
    long_in: HashMap<(u32, u64), LongIn>,
    /// Every client is crossmpi, so `DATA` packets for [`EARLY`] are understood.
    pub accept_early: bool,
    /// Receives of long messages whose later packets may come early: (source, srqid) to
    /// drqid.
    early_in: HashMap<(u32, u64), u64>,
    /// World ranks owed a PROTOACK.
    pub acks_due: Vec<u32>,
    /// A PROTOACK may wait a little (`ImpiRoute::poll`): HIWATER is at least twice
    /// ACKMARK, so a sender keeps a window's worth of room while one is held back.
    pub defer_acks: bool,
    /// Numbering and copies of packets, when the job survives a relay's death.
    pub resend: Option<ResendLog>,
    /// Resends asked for: (world rank, its count of our packets).
    pub resends_due: Vec<(u32, u64)>,
    /// World ranks owed an answer to their `RESUME`.
    pub answers_due: Vec<u32>,
}

impl Translator {
    /// `procs`: the IMPI process identity of every world rank; `remote`: the world ranks
    /// reached through IMPI; `survivable`: the job survives a relay's death (packets are
    /// numbered and kept, see `resend`).
    pub fn new(
        me: u32,
        procs: Vec<Proc>,
        remote: &[u32],
        max_data: u32,
        flow: FlowParams,
        survivable: bool,
    ) -> Translator {
        let world_of = procs
            .iter()
            .enumerate()
            .map(|(w, p)| (*p, w as u32))
            .collect();
        Translator {
            me,
            procs,
            world_of,
            max_data: max_data.max(1) as u64,
            seqnum: 0,
            windows: remote.iter().map(|&w| (w, SendWindow::new(flow))).collect(),
            counters: remote
                .iter()
                .map(|&w| (w, RecvCounter::new(flow)))
                .collect(),
            long_sent: HashSet::new(),
            first_pieces: HashMap::new(),
            long_in: HashMap::new(),
            accept_early: false,
            early_in: HashMap::new(),
            acks_due: Vec::new(),
            defer_acks: flow.hiwater >= 2 * flow.ackmark,
            resend: survivable.then(ResendLog::default),
            resends_due: Vec::new(),
            answers_due: Vec::new(),
        }
    }

    /// Bounds the data each pair has unacknowledged at `bytes` (`CROSSMPI_IMPI_WINDOW`),
    /// but never below `ackmark` full packets, which the receiver must see before it
    /// acknowledges any.
    pub fn limit_window(&mut self, bytes: u64, flow: FlowParams) {
        let bytes = bytes.max(u64::from(flow.ackmark) * self.max_data);
        for w in self.windows.values_mut() {
            *w = w.clone().with_byte_limit(bytes);
        }
    }

    pub fn proc_of(&self, world: u32) -> Proc {
        self.procs[world as usize]
    }

    fn packet(&mut self, ty: PacketType, to: u32) -> PacketRepr {
        self.seqnum += 1;
        let mut p = PacketRepr::control(ty, self.procs[self.me as usize], self.procs[to as usize]);
        p.seqnum = self.seqnum;
        p
    }

    fn data_packet(&mut self, ty: PacketType, to: u32, env: &Envelope, msglen: u64) -> PacketRepr {
        let mut p = self.packet(ty, to);
        p.msglen = msglen;
        p.lsrank = env.src;
        p.tag = env.tag;
        p.cid = env.context;
        p
    }

    /// The next packet of `frame` to `to`, whose payload is `payload_len` bytes of which
    /// `done` are already sent (for `Data` frames: counted from the first byte after the
    /// piece the `DATASYNC` carried). `None` when the frame is finished, or when the flow
    /// control window to `to` is closed (`blocked` then says so).
    pub fn next_packet(
        &mut self,
        to: u32,
        frame: &Frame,
        payload_len: u64,
        done: u64,
        blocked: &mut bool,
    ) -> Option<Outbound> {
        *blocked = false;
        let control = |ty| -> Option<(PacketType, u64)> { Some((ty, 0)) };
        let (ty, _) = match frame {
            Frame::Eager { sync, .. } if done == 0 => control(if *sync {
                PacketType::DataSync
            } else {
                PacketType::Data
            }),
            Frame::Rts { .. } if done == 0 => control(PacketType::DataSync),
            Frame::Data { .. } | Frame::Early { .. } if self.max_data + done < payload_len => {
                control(PacketType::Data)
            }
            Frame::Cts { .. } | Frame::SyncAck { .. } if done == 0 => control(PacketType::SyncAck),
            Frame::CancelReq { .. } if done == 0 => control(PacketType::Cancel),
            Frame::CancelReply { cancelled, .. } if done == 0 => control(if *cancelled {
                PacketType::CancelYes
            } else {
                PacketType::CancelNo
            }),
            _ => None,
        }?;
        // What the packet may carry at most: its exact length is known only once built.
        let most = match ty {
            PacketType::Data | PacketType::DataSync => self.max_data,
            _ => 0,
        };
        if let Some(w) = self.windows.get(&to) {
            if !w.can_send(ty, most) {
                *blocked = true;
                return None;
            }
        }
        let mut out = match *frame {
            Frame::Eager { env, msg, len, .. } => {
                let mut p = self.data_packet(ty, to, &env, len);
                p.srqid = msg;
                p.data_len = len as u32;
                Outbound {
                    packet: p,
                    offset: 0,
                    len,
                }
            }
            Frame::Rts { env, msg, len, .. } => {
                let first = len.min(self.max_data);
                let mut p = self.data_packet(ty, to, &env, len);
                p.srqid = msg;
                p.data_len = first as u32;
                self.long_sent.insert((to, msg));
                Outbound {
                    packet: p,
                    offset: 0,
                    len: first,
                }
            }
            Frame::Data { .. } | Frame::Early { .. } => {
                let offset = self.max_data + done;
                let len = (payload_len - offset).min(self.max_data);
                let mut p = self.packet(ty, to);
                (p.srqid, p.drqid) = match *frame {
                    Frame::Early { msg } => (msg, EARLY),
                    Frame::Data { rreq, .. } => (0, rreq),
                    _ => unreachable!("matched above"),
                };
                p.msglen = payload_len;
                p.data_len = len as u32;
                Outbound {
                    packet: p,
                    offset,
                    len,
                }
            }
            Frame::Cts { msg, rreq } => {
                let mut p = self.packet(ty, to);
                p.srqid = msg;
                p.drqid = rreq;
                Outbound {
                    packet: p,
                    offset: 0,
                    len: 0,
                }
            }
            Frame::SyncAck { msg } | Frame::CancelReq { msg } | Frame::CancelReply { msg, .. } => {
                if let Frame::CancelReply {
                    cancelled: true, ..
                } = frame
                {
                    // The withdrawn message's first piece will never be asked for.
                    self.first_pieces.remove(&(to, msg));
                }
                let mut p = self.packet(ty, to);
                p.srqid = msg;
                Outbound {
                    packet: p,
                    offset: 0,
                    len: 0,
                }
            }
            // Cross-memory attach exists only between ranks of one node.
            Frame::Fin { .. } | Frame::Push { .. } | Frame::Pushed { .. } | Frame::Credit => {
                return None
            }
        };
        if let Some(log) = self.resend.as_mut() {
            out.packet.reserved = log.number(to);
        }
        if let Some(w) = self.windows.get_mut(&to) {
            // `can_send` was checked above, so this cannot fail.
            let _ = w.on_sent(ty, out.len);
        }
        Some(out)
    }

    /// Bytes of a `Data` frame's payload that travel in `Data` packets (the rest went in
    /// the `DATASYNC`).
    pub fn streamed_len(&self, payload_len: u64) -> u64 {
        payload_len.saturating_sub(self.max_data)
    }

    /// The receive `rreq` of world rank `from`'s long message `msg` was matched (its
    /// `Cts` is leaving): its first piece, to deliver as the receive's first `Data`.
    /// The first piece is followed by whatever arrived early for it.
    pub fn matched_long(&mut self, from: u32, msg: u64, rreq: u64) -> Vec<u8> {
        let (piece, msglen) = self.first_pieces.remove(&(from, msg)).unwrap_or_default();
        let next = piece.len() as u64;
        if next < msglen {
            self.long_in
                .insert((from, rreq), LongIn { next, msglen, msg });
            if self.accept_early {
                self.early_in.insert((from, msg), rreq);
            }
        }
        piece
    }

    /// Whether `p`'s data must be read whole before [`Translator::arrive`]: a long
    /// message's first piece, and an early packet whose receive is not matched yet (kept
    /// with the first piece until it is).
    pub fn wants_whole(&self, p: &PacketRepr) -> bool {
        match p.ty {
            PacketType::DataSync => u64::from(p.data_len) < p.msglen,
            PacketType::Data if self.accept_early && p.drqid == EARLY => {
                let from = self.world_of.get(&p.src);
                !from.is_some_and(|&f| self.early_in.contains_key(&(f, p.srqid)))
            }
            _ => false,
        }
    }

    /// A PROTOACK to `to`, which never waits for the window; when packets are numbered
    /// it carries how many of `to`'s arrived in order.
    pub fn protoack(&mut self, to: u32) -> PacketRepr {
        let mut p = self.packet(PacketType::ProtoAck, to);
        if let Some(log) = self.resend.as_ref() {
            p.reserved = log.received(to);
        }
        p
    }

    /// A PROTOACK asking `to` to resend after our count (`RESUME`), asking only for its
    /// count (`PROBE`), or answering either (`RESUME_ANSWER`).
    pub fn resume(&mut self, to: u32, kind: i64) -> PacketRepr {
        if let Some(log) = self.resend.as_mut() {
            match kind {
                PROBE => log.probing(to),
                RESUME => log.resuming(to),
                _ => {}
            }
        }
        let mut p = self.protoack(to);
        p.count = kind;
        p
    }

    /// A FINI packet for a host connection (LAM/MPI's form: both ends `Proc::FINI`).
    pub fn fini() -> PacketRepr {
        PacketRepr::control(PacketType::Fini, Proc::FINI, Proc::FINI)
    }

    /// Interprets a packet that arrived from a host; `data` is its payload as far as it
    /// has arrived (all of it for a long message's first piece). An error names the
    /// protocol rule the packet breaks.
    pub fn arrive(&mut self, p: &PacketRepr, data: &[u8]) -> Result<Arrival, String> {
        if p.ty == PacketType::Fini {
            return Ok(Arrival::Fini);
        }
        let from = *self
            .world_of
            .get(&p.src)
            .ok_or_else(|| format!("{:?} packet from an unknown process {:?}", p.ty, p.src))?;
        if p.dest != self.procs[self.me as usize] {
            return Err(format!(
                "{:?} packet for another process {:?}",
                p.ty, p.dest
            ));
        }
        let counter = self
            .counters
            .get_mut(&from)
            .ok_or_else(|| format!("{:?} packet from world rank {from}, not an IMPI peer", p.ty))?;
        if let Some(log) = self.resend.as_mut() {
            if p.ty.counts_for_flow_control() && log.accept(from, p.reserved)? != Accept::Next {
                return Ok(Arrival::Dropped);
            }
        }
        if counter.on_received(p.ty) {
            self.acks_due.push(from);
        }
        let env = Envelope {
            context: p.cid,
            src: p.lsrank,
            tag: p.tag,
        };
        // The packet's data length, which `data` may hold only the start of (the rest is
        // then read straight into the frame's destination).
        let len = u64::from(p.data_len);
        let frame = match p.ty {
            PacketType::ProtoAck => {
                self.on_protoack(from, p)?;
                return Ok(Arrival::Nothing);
            }
            PacketType::Data | PacketType::DataSync if len == p.msglen => Frame::Eager {
                env,
                msg: p.srqid,
                len,
                sync: p.ty == PacketType::DataSync,
            },
            PacketType::DataSync => {
                self.first_pieces
                    .insert((from, p.srqid), (data.to_vec(), p.msglen));
                Frame::Rts {
                    env,
                    msg: p.srqid,
                    len: p.msglen,
                    cma_addr: 0,
                }
            }
            PacketType::Data if self.accept_early && p.drqid == EARLY => {
                match self.early_in.get(&(from, p.srqid)) {
                    Some(&rreq) => self.continue_long(from, rreq, p, len)?,
                    None => {
                        self.hold_early(from, p, data)?;
                        return Ok(Arrival::Nothing);
                    }
                }
            }
            PacketType::Data => self.continue_long(from, p.drqid, p, len)?,
            PacketType::SyncAck => {
                if self.long_sent.remove(&(from, p.srqid)) {
                    Frame::Cts {
                        msg: p.srqid,
                        rreq: p.drqid,
                    }
                } else {
                    Frame::SyncAck { msg: p.srqid }
                }
            }
            PacketType::Cancel => Frame::CancelReq { msg: p.srqid },
            PacketType::CancelYes | PacketType::CancelNo => {
                let cancelled = p.ty == PacketType::CancelYes;
                if cancelled {
                    self.long_sent.remove(&(from, p.srqid));
                }
                Frame::CancelReply {
                    msg: p.srqid,
                    cancelled,
                }
            }
            PacketType::Fini => return Ok(Arrival::Fini),
        };
        Ok(Arrival::Frame {
            from,
            head: Head::new(frame),
        })
    }

    /// A continuation packet of `len` bytes for long receive `rreq` from `from`: the
    /// `Data` frame placing it after the bytes that came before.
    fn continue_long(
        &mut self,
        from: u32,
        rreq: u64,
        p: &PacketRepr,
        len: u64,
    ) -> Result<Frame, String> {
        let key = (from, rreq);
        let long = self.long_in.get_mut(&key).ok_or_else(|| {
            format!(
                "DATA continuation for unknown request {rreq} ({len} of {} bytes)",
                p.msglen
            )
        })?;
        if long.next + len > long.msglen {
            return Err(format!(
                "DATA continuation overruns request {rreq}: {} + {len} > {}",
                long.next, long.msglen
            ));
        }
        let offset = long.next;
        long.next += len;
        if long.next == long.msglen {
            let msg = long.msg;
            self.long_in.remove(&key);
            self.early_in.remove(&(from, msg));
        }
        Ok(Frame::Data { rreq, offset })
    }

    /// An early packet of long message `p.srqid` from `from` whose receive is not matched
    /// yet: kept behind the message's first piece.
    fn hold_early(&mut self, from: u32, p: &PacketRepr, data: &[u8]) -> Result<(), String> {
        let (piece, msglen) = self.first_pieces.get_mut(&(from, p.srqid)).ok_or_else(|| {
            format!(
                "early DATA for message {} that has no first piece ({} bytes)",
                p.srqid, p.data_len
            )
        })?;
        if piece.len() + data.len() > *msglen as usize {
            return Err(format!(
                "early DATA overruns message {}: {} + {} > {msglen}",
                p.srqid,
                piece.len(),
                data.len()
            ));
        }
        piece.extend_from_slice(data);
        Ok(())
    }

    /// A PROTOACK from `from`: IMPI's (`ackmark` more packets arrived), or, when packets
    /// are numbered, the count that arrived in order, maybe asking for a resend.
    fn on_protoack(&mut self, from: u32, p: &PacketRepr) -> Result<(), String> {
        let Some(w) = self.windows.get_mut(&from) else {
            return Ok(());
        };
        let Some(log) = self.resend.as_mut() else {
            return w.on_protoack().map_err(|e| e.to_string());
        };
        let acked = log.confirmed(from, p.reserved)?;
        w.acknowledge_to(log.sent(from), acked)
            .map_err(|e| e.to_string())?;
        match p.count {
            RESUME => {
                self.resends_due.push((from, p.reserved));
                self.answers_due.push(from);
            }
            PROBE => self.answers_due.push(from),
            RESUME_ANSWER if log.answered(from, p.reserved) => {
                self.resends_due.push((from, p.reserved))
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
