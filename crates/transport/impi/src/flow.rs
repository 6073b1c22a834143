//! Flow control per process pair ("virtual channel"), as IMPI and LAM/MPI define it: the
//! receiver sends a PROTOACK every `ackmark` counted packets from a source, each PROTOACK
//! lowers the sender's count of unacknowledged packets by `ackmark`, and the sender stops
//! while that count is at `hiwater`. PROTOACK and FINI packets do not count.

use crate::error::{Error, Result};
use crate::wire::packet::{PacketType, Proc};
use crate::wire::tables::GlobalTables;
use std::collections::HashMap;

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
    unacked: u32,
}

impl SendWindow {
    pub fn new(params: FlowParams) -> SendWindow {
        SendWindow { params, unacked: 0 }
    }

    /// True when a packet of type `ty` may be sent now.
    pub fn can_send(&self, ty: PacketType) -> bool {
        !ty.counts_for_flow_control() || self.unacked < self.params.hiwater
    }

    /// Records a sent packet; an error when the window was closed for it.
    pub fn on_sent(&mut self, ty: PacketType) -> Result<()> {
        if !self.can_send(ty) {
            return Err(Error::Invalid {
                what: "SendWindow::on_sent",
                reason: format!(
                    "{ty:?} sent with {} packets unacknowledged (hiwater)",
                    self.unacked
                ),
            });
        }
        if ty.counts_for_flow_control() {
            self.unacked += 1;
        }
        Ok(())
    }

    /// A PROTOACK arrived: `ackmark` packets are acknowledged.
    pub fn on_protoack(&mut self) -> Result<()> {
        self.unacked = self
            .unacked
            .checked_sub(self.params.ackmark)
            .ok_or_else(|| Error::Invalid {
                what: "IMPI PROTOACK",
                reason: format!(
                    "acknowledges {} packets but only {} are unacknowledged",
                    self.params.ackmark, self.unacked
                ),
            })?;
        Ok(())
    }

    /// A cumulative acknowledgement (crossmpi between its own ends when the job survives
    /// a relay's death): of `sent` counted packets, the receiver has `acked`.
    pub fn acknowledge_to(&mut self, sent: u64, acked: u64) -> Result<()> {
        let unacked = sent
            .checked_sub(acked)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| Error::Invalid {
                what: "IMPI PROTOACK",
                reason: format!("acknowledges {acked} packets of {sent} sent"),
            })?;
        self.unacked = unacked;
        Ok(())
    }

    pub fn unacked(&self) -> u32 {
        self.unacked
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
            assert!(s.can_send(PacketType::Data), "packet {i}");
            s.on_sent(PacketType::Data).unwrap();
            if r.on_received(PacketType::Data) {
                acks += 1;
            }
        }
        assert!(!s.can_send(PacketType::Data));
        assert!(s.on_sent(PacketType::SyncAck).is_err(), "SYNCACK counts");
        assert!(s.can_send(PacketType::ProtoAck) && s.can_send(PacketType::Fini));
        assert_eq!(acks, 2, "one PROTOACK per ackmark packets");
        s.on_protoack().unwrap();
        assert_eq!(s.unacked(), 10);
        assert!(s.can_send(PacketType::Data));
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
        t.channel(a, b).send.on_sent(PacketType::Data).unwrap();
        assert!(!t.channel(a, b).send.can_send(PacketType::Data));
        assert!(t.channel(a, c).send.can_send(PacketType::Data));
        assert!(t.channel(b, a).send.can_send(PacketType::Data));
    }
}
