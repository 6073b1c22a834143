//! Flow control per process pair ("virtual channel"), as IMPI and LAM/MPI define it: the
//! receiver sends a PROTOACK every `ackmark` counted packets from a source, each PROTOACK
//! lowers the sender's count of unacknowledged packets by `ackmark`, and the sender stops
//! while that count is at `hiwater`. PROTOACK and FINI packets do not count.
//!
//! A sender may also bound the data bytes it has unacknowledged (a sender may always send
//! less than the marks allow): a count of packets bounds a stream of small messages and
//! one of large packets alike, so a window wide enough for the first over a long WAN
//! would let the second pile up far more in the receiver than it needs.

use crate::error::{Error, Result};
use crate::wire::packet::{PacketType, Proc};
use crate::wire::tables::GlobalTables;
use std::collections::{HashMap, VecDeque};

/// The two marks, with 1 <= ackmark <= hiwater.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowParams {
    pub ackmark: u32,
    pub hiwater: u32,
}

impl FlowParams {
    pub fn new(ackmark: u32, hiwater: u32) -> Result<FlowParams> {
        if ackmark == 0 || ackmark > hiwater {
            return Err(Error::Invalid {
                what: "FlowParams::new",
                reason: format!(
                    "ackmark {ackmark}, hiwater {hiwater}: needs 1 <= ackmark <= hiwater"
                ),
            });
        }
        Ok(FlowParams { ackmark, hiwater })
    }

    /// The global minima of all hosts' marks (LAM/MPI, "per IMPI 0.0 errata").
    pub fn from_tables(tables: &GlobalTables) -> Result<FlowParams> {
        let (ack, hi) = tables.flow_marks();
        FlowParams::new(ack, hi)
    }
}

/// The sending half of one channel.
#[derive(Debug, Clone)]
pub struct SendWindow {
    params: FlowParams,
    /// The data bytes of each unacknowledged counted packet, oldest first (as many as
    /// IMPI's count of them), their sum, and the most the sum may reach.
    unacked: VecDeque<u64>,
    unacked_bytes: u64,
    byte_limit: u64,
}

impl SendWindow {
    pub fn new(params: FlowParams) -> SendWindow {
        SendWindow {
            params,
            unacked: VecDeque::new(),
            unacked_bytes: 0,
            byte_limit: u64::MAX,
        }
    }

    /// Bounds the data bytes unacknowledged at `limit`, which must admit `ackmark` of the
    /// largest packets: the receiver acknowledges only every `ackmark` packets, so a
    /// smaller limit could stop the sender for good.
    pub fn with_byte_limit(self, limit: u64) -> SendWindow {
        SendWindow {
            byte_limit: limit,
            ..self
        }
    }

    /// True when a packet of type `ty` carrying `bytes` of data may be sent now.
    pub fn can_send(&self, ty: PacketType, bytes: u64) -> bool {
        !ty.counts_for_flow_control()
            || (self.unacked.len() < self.params.hiwater as usize
                && self.unacked_bytes.saturating_add(bytes) <= self.byte_limit)
    }

    /// Records a sent packet of `bytes` of data; an error when the window was closed for
    /// it.
    pub fn on_sent(&mut self, ty: PacketType, bytes: u64) -> Result<()> {
        if !self.can_send(ty, bytes) {
            return Err(Error::Invalid {
                what: "SendWindow::on_sent",
                reason: format!(
                    "{ty:?} of {bytes} bytes sent with {} packets ({} bytes) unacknowledged",
                    self.unacked.len(),
                    self.unacked_bytes
                ),
            });
        }
        if ty.counts_for_flow_control() {
            self.unacked.push_back(bytes);
            self.unacked_bytes += bytes;
        }
        Ok(())
    }

    /// A PROTOACK arrived: `ackmark` packets are acknowledged.
    pub fn on_protoack(&mut self) -> Result<()> {
        let acked = self.params.ackmark as usize;
        if acked > self.unacked.len() {
            return Err(Error::Invalid {
                what: "IMPI PROTOACK",
                reason: format!(
                    "acknowledges {acked} packets but only {} are unacknowledged",
                    self.unacked.len()
                ),
            });
        }
        self.forget_oldest(acked);
        Ok(())
    }

    fn forget_oldest(&mut self, n: usize) {
        self.unacked_bytes -= self.unacked.drain(..n).sum::<u64>();
    }

    /// A cumulative acknowledgement (crossmpi between its own ends when the job survives
    /// a relay's death): of `sent` counted packets, the receiver has `acked`.
    pub fn acknowledge_to(&mut self, sent: u64, acked: u64) -> Result<()> {
        let unacked = sent
            .checked_sub(acked)
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n <= self.unacked.len())
            .ok_or_else(|| Error::Invalid {
                what: "IMPI PROTOACK",
                reason: format!(
                    "acknowledges {acked} packets of {sent} sent, {} of them unacknowledged",
                    self.unacked.len()
                ),
            })?;
        self.forget_oldest(self.unacked.len() - unacked);
        Ok(())
    }

    pub fn unacked(&self) -> u32 {
        self.unacked.len() as u32
    }
}

/// The receiving half of one channel.
#[derive(Debug, Clone)]
pub struct RecvCounter {
    params: FlowParams,
    since_ack: u32,
}

impl RecvCounter {
    pub fn new(params: FlowParams) -> RecvCounter {
        RecvCounter {
            params,
            since_ack: 0,
        }
    }

    /// Records a received packet; true when a PROTOACK must be sent back now.
    pub fn on_received(&mut self, ty: PacketType) -> bool {
        if !ty.counts_for_flow_control() {
            return false;
        }
        self.since_ack += 1;
        if self.since_ack == self.params.ackmark {
            self.since_ack = 0;
            return true;
        }
        false
    }
}

/// Both halves of the channel between a local and a remote process.
#[derive(Debug, Clone)]
pub struct Channel {
    pub send: SendWindow,
    pub recv: RecvCounter,
}

/// Every channel of a host, keyed by (local proc, remote proc).
#[derive(Debug, Clone)]
pub struct FlowTable {
    params: FlowParams,
    channels: HashMap<(Proc, Proc), Channel>,
}

impl FlowTable {
    pub fn new(params: FlowParams) -> FlowTable {
        FlowTable {
            params,
            channels: HashMap::new(),
        }
    }

    /// The channel between `local` and `remote`, created on first use.
    pub fn channel(&mut self, local: Proc, remote: Proc) -> &mut Channel {
        let p = self.params;
        self.channels
            .entry((local, remote))
            .or_insert_with(|| Channel {
                send: SendWindow::new(p),
                recv: RecvCounter::new(p),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::addr::HostAddr;

    #[test]
    fn params_are_checked() {
        assert!(FlowParams::new(0, 5).is_err());
        assert!(FlowParams::new(6, 5).is_err());
        assert!(FlowParams::new(5, 5).is_ok());
    }

    #[test]
    fn sender_stops_at_hiwater_and_resumes_on_protoack() {
        let p = FlowParams::new(10, 20).unwrap();
        let mut s = SendWindow::new(p);
        let mut r = RecvCounter::new(p);
        let mut acks = 0;
        for i in 0..20 {
            assert!(s.can_send(PacketType::Data, 8), "packet {i}");
            s.on_sent(PacketType::Data, 8).unwrap();
            if r.on_received(PacketType::Data) {
                acks += 1;
            }
        }
        assert!(!s.can_send(PacketType::Data, 8));
        assert!(s.on_sent(PacketType::SyncAck, 0).is_err(), "SYNCACK counts");
        assert!(s.can_send(PacketType::ProtoAck, 0) && s.can_send(PacketType::Fini, 0));
        assert_eq!(acks, 2, "one PROTOACK per ackmark packets");
        s.on_protoack().unwrap();
        assert_eq!(s.unacked(), 10);
        assert!(s.can_send(PacketType::Data, 8));
        s.on_protoack().unwrap();
        assert!(s.on_protoack().is_err(), "more acks than packets");
        assert!(!r.on_received(PacketType::ProtoAck));
        assert!(!r.on_received(PacketType::Fini));
    }

    #[test]
    fn channels_are_per_process_pair() {
        let mut t = FlowTable::new(FlowParams::new(1, 1).unwrap());
        let a = Proc {
            hostid: HostAddr::default(),
            pid: 1,
        };
        let b = Proc {
            hostid: HostAddr::default(),
            pid: 2,
        };
        let c = Proc {
            hostid: HostAddr::default(),
            pid: 3,
        };
        t.channel(a, b).send.on_sent(PacketType::Data, 0).unwrap();
        assert!(!t.channel(a, b).send.can_send(PacketType::Data, 0));
        assert!(t.channel(a, c).send.can_send(PacketType::Data, 0));
        assert!(t.channel(b, a).send.can_send(PacketType::Data, 0));
    }

    #[test]
    fn a_byte_limit_stops_large_packets_long_before_hiwater() {
        let p = FlowParams::new(2, 100).unwrap();
        let mut s = SendWindow::new(p).with_byte_limit(100);
        assert!(!s.can_send(PacketType::Data, 101));
        s.on_sent(PacketType::DataSync, 100).unwrap();
        assert!(!s.can_send(PacketType::Data, 1), "100 bytes wait");
        assert!(
            s.can_send(PacketType::SyncAck, 0),
            "a packet without data does not wait"
        );
        s.on_sent(PacketType::SyncAck, 0).unwrap();
        s.on_protoack().unwrap();
        assert_eq!(s.unacked(), 0);
        for i in 0..12 {
            assert_eq!(s.can_send(PacketType::Data, 10), i < 10, "packet {i}");
            if i < 10 {
                s.on_sent(PacketType::Data, 10).unwrap();
            }
        }
        assert!(s.on_sent(PacketType::Data, 10).is_err());
        s.acknowledge_to(10, 4).unwrap();
        assert_eq!(s.unacked(), 6);
        assert!(s.can_send(PacketType::Data, 40) && !s.can_send(PacketType::Data, 41));
        assert!(
            s.acknowledge_to(10, 2).is_err(),
            "more unacknowledged than before"
        );
    }
}
