//! Message protocols over packets: how a receiver classifies a data packet, and the
//! long-message (rendezvous) states of sender and receiver.
//!
//! A message of at most the negotiated data length goes in one packet (DATASYNC for
//! synchronous sends, else DATA) with `pk_len == pk_msglen`. A longer one sends a first
//! DATASYNC with `max_data` bytes and the full `pk_msglen`; once the receiver matches it,
//! it answers SYNCACK echoing `pk_srqid` and naming its `pk_drqid`; the sender then sends
//! the rest as DATA packets carrying that `pk_drqid`.

use crate::error::{Error, Result};
use crate::wire::packet::{PacketRepr, PacketType};

/// What a received data packet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataKind {
    /// A whole message; `sync` (DATASYNC) needs a SYNCACK once matched.
    Eager { sync: bool },
    /// The first packet of a long message.
    LongFirst,
    /// A later packet of a long message (`pk_len != pk_msglen`).
    Continuation,
}

/// Classifies a DATA or DATASYNC packet; an error for any other type.
pub fn classify(p: &PacketRepr) -> Result<DataKind> {
    let whole = u64::from(p.data_len) == p.msglen;
    match (p.ty, whole) {
        (PacketType::Data, true) => Ok(DataKind::Eager { sync: false }),
        (PacketType::DataSync, true) => Ok(DataKind::Eager { sync: true }),
        (PacketType::DataSync, false) => Ok(DataKind::LongFirst),
        (PacketType::Data, false) => Ok(DataKind::Continuation),
        (ty, _) => Err(Error::Invalid {
            what: "rendezvous::classify",
            reason: format!("{ty:?} carries no message data"),
        }),
    }
}

/// The SYNCACK answering a matched DATASYNC: src and dest swapped, `pk_srqid` echoed.
pub fn syncack(first: &PacketRepr, drqid: u64) -> PacketRepr {
    let mut a = PacketRepr::control(PacketType::SyncAck, first.dest, first.src);
    a.srqid = first.srqid;
    a.drqid = drqid;
    a.cid = first.cid;
    a.tag = first.tag;
    a.lsrank = first.lsrank;
    a
}

/// One packet a long-message sender emits: `len` bytes at `offset` of the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    pub ty: PacketType,
    pub offset: u64,
    pub len: u32,
    pub drqid: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SendState {
    AwaitSyncAck,
    Streaming { drqid: u64 },
    Complete,
}

/// The sender of one long message.
#[derive(Debug, Clone)]
pub struct LongSend {
    msglen: u64,
    max_data: u32,
    srqid: u64,
    sent: u64,
    state: SendState,
}

impl LongSend {
    /// Starts a long message and returns its first chunk (DATASYNC, `max_data` bytes).
    pub fn start(msglen: u64, max_data: u32, srqid: u64) -> Result<(LongSend, Chunk)> {
        if max_data == 0 || msglen <= u64::from(max_data) {
            return Err(Error::Invalid {
                what: "LongSend::start",
                reason: format!(
                    "msglen {msglen} with max_data {max_data}: a long message exceeds max_data >= 1"
                ),
            });
        }
        let first = Chunk {
            ty: PacketType::DataSync,
            offset: 0,
            len: max_data,
            drqid: 0,
        };
        let s = LongSend {
            msglen,
            max_data,
            srqid,
            sent: u64::from(max_data),
            state: SendState::AwaitSyncAck,
        };
        Ok((s, first))
    }

    /// The receiver matched the message.
    pub fn on_syncack(&mut self, ack: &PacketRepr) -> Result<()> {
        if ack.ty != PacketType::SyncAck || ack.srqid != self.srqid {
            return Err(Error::Invalid {
                what: "LongSend::on_syncack",
                reason: format!(
                    "{:?} with srqid {} does not answer srqid {}",
                    ack.ty, ack.srqid, self.srqid
                ),
            });
        }
        if self.state != SendState::AwaitSyncAck {
            return Err(Error::Unexpected {
                state: "a long message is already acknowledged",
                got: "a second SYNCACK".into(),
            });
        }
        self.state = SendState::Streaming { drqid: ack.drqid };
        Ok(())
    }

    /// The next DATA chunk, once SYNCACK arrived; None while waiting or when done.
    pub fn next_chunk(&mut self) -> Option<Chunk> {
        let SendState::Streaming { drqid } = self.state else {
            return None;
        };
        let len = (self.msglen - self.sent).min(u64::from(self.max_data)) as u32;
        let c = Chunk {
            ty: PacketType::Data,
            offset: self.sent,
            len,
            drqid,
        };
        self.sent += u64::from(len);
        if self.sent == self.msglen {
            self.state = SendState::Complete;
        }
        Some(c)
    }

    pub fn is_complete(&self) -> bool {
        self.state == SendState::Complete
    }
}

/// The receiver of one long message.
#[derive(Debug, Clone)]
pub struct LongRecv {
    first: PacketRepr,
    received: u64,
    drqid: Option<u64>,
}

impl LongRecv {
    /// Starts from the first packet (a DATASYNC shorter than its message).
    pub fn on_first(first: &PacketRepr) -> Result<LongRecv> {
        if classify(first)? != DataKind::LongFirst || first.data_len == 0 {
            return Err(Error::Invalid {
                what: "LongRecv::on_first",
                reason: format!(
                    "{:?} with {} of {} bytes is not the first packet of a long message",
                    first.ty, first.data_len, first.msglen
                ),
            });
        }
        Ok(LongRecv {
            first: *first,
            received: u64::from(first.data_len),
            drqid: None,
        })
    }

    /// The message was matched by a receive with request id `drqid`: the SYNCACK to send.
    pub fn matched(&mut self, drqid: u64) -> PacketRepr {
        self.drqid = Some(drqid);
        syncack(&self.first, drqid)
    }

    /// A continuation packet; returns the offset its data goes to.
    pub fn on_data(&mut self, p: &PacketRepr) -> Result<u64> {
        let bad = |reason: String| Error::Invalid {
            what: "LongRecv::on_data",
            reason,
        };
        if self.drqid.is_none() {
            return Err(bad(
                "DATA before this message was matched (no SYNCACK sent)".into(),
            ));
        }
        if classify(p)? != DataKind::Continuation
            || Some(p.drqid) != self.drqid
            || p.src != self.first.src
            || p.msglen != self.first.msglen
        {
            return Err(bad(format!(
                "{:?} drqid {} msglen {} does not continue drqid {:?} msglen {}",
                p.ty, p.drqid, p.msglen, self.drqid, self.first.msglen
            )));
        }
        let remaining = self.first.msglen - self.received;
        if p.data_len == 0 || u64::from(p.data_len) > remaining {
            return Err(bad(format!(
                "{} data bytes with {remaining} remaining",
                p.data_len
            )));
        }
        let offset = self.received;
        self.received += u64::from(p.data_len);
        Ok(offset)
    }

    pub fn is_complete(&self) -> bool {
        self.received == self.first.msglen
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::addr::HostAddr;
    use crate::wire::packet::Proc;

    fn proc_(pid: i64) -> Proc {
        Proc {
            hostid: HostAddr::default(),
            pid,
        }
    }

    fn packet(c: &Chunk, msglen: u64, srqid: u64) -> PacketRepr {
        let mut p = PacketRepr::control(c.ty, proc_(1), proc_(2));
        p.data_len = c.len;
        p.msglen = msglen;
        p.srqid = srqid;
        p.drqid = c.drqid;
        p
    }

    #[test]
    fn classify_by_length_and_type() {
        let mut p = packet(
            &Chunk {
                ty: PacketType::Data,
                offset: 0,
                len: 10,
                drqid: 0,
            },
            10,
            0,
        );
        assert_eq!(classify(&p), Ok(DataKind::Eager { sync: false }));
        p.ty = PacketType::DataSync;
        assert_eq!(classify(&p), Ok(DataKind::Eager { sync: true }));
        p.msglen = 100;
        assert_eq!(classify(&p), Ok(DataKind::LongFirst));
        p.ty = PacketType::Data;
        assert_eq!(classify(&p), Ok(DataKind::Continuation));
        p.ty = PacketType::Cancel;
        assert!(classify(&p).is_err());
    }

    #[test]
    fn long_message_end_to_end() {
        let msglen = 2500;
        let (mut tx, first) = LongSend::start(msglen, 1000, 77).unwrap();
        assert_eq!(tx.next_chunk(), None, "nothing before SYNCACK");
        let p1 = packet(&first, msglen, 77);
        let mut rx = LongRecv::on_first(&p1).unwrap();
        let early = packet(
            &Chunk {
                ty: PacketType::Data,
                offset: 1000,
                len: 1000,
                drqid: 5,
            },
            msglen,
            77,
        );
        assert!(rx.on_data(&early).is_err(), "DATA before the match");
        let ack = rx.matched(5);
        assert_eq!((ack.ty, ack.srqid, ack.drqid), (PacketType::SyncAck, 77, 5));
        assert_eq!((ack.src, ack.dest), (proc_(2), proc_(1)));
        let mut wrong = ack;
        wrong.srqid = 78;
        assert!(tx.on_syncack(&wrong).is_err());
        tx.on_syncack(&ack).unwrap();
        assert!(tx.on_syncack(&ack).is_err());
        let mut offsets = Vec::new();
        while let Some(c) = tx.next_chunk() {
            offsets.push(rx.on_data(&packet(&c, msglen, 77)).unwrap());
        }
        assert_eq!(offsets, vec![1000, 2000]);
        assert!(tx.is_complete() && rx.is_complete());
        let extra = packet(
            &Chunk {
                ty: PacketType::Data,
                offset: 2500,
                len: 1,
                drqid: 5,
            },
            msglen,
            77,
        );
        assert!(rx.on_data(&extra).is_err(), "past the end");
    }

    #[test]
    fn start_rejects_short_messages() {
        assert!(LongSend::start(1000, 1000, 1).is_err());
        assert!(LongSend::start(10, 0, 1).is_err());
        let short = packet(
            &Chunk {
                ty: PacketType::DataSync,
                offset: 0,
                len: 10,
                drqid: 0,
            },
            10,
            1,
        );
        assert!(LongRecv::on_first(&short).is_err());
    }
}
