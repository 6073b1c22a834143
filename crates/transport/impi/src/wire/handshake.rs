//! The host-to-host connection handshake ("Shall We Dance?" in LAM/MPI's `dance.c`).
//!
//! After DONE every pair of hosts gets one TCP connection: the higher-ranked host
//! connects, the lower-ranked one accepts, and the connecting side sends its global host
//! rank as a 4-byte big-endian `IMPI_Uint4`. There is no reply; packets follow.

use super::be_u32;
use crate::error::{Error, Result};
use std::ops::Range;

/// Length of the handshake.
pub const HANDSHAKE_LEN: usize = 4;

/// The handshake sent by a connecting host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostHandshake {
    /// Global host rank of the connecting host.
    pub host_rank: u32,
}

impl HostHandshake {
    pub fn emit(&self) -> [u8; HANDSHAKE_LEN] {
        self.host_rank.to_be_bytes()
    }

    /// Decodes the handshake an accepting host (`acceptor` of `nhosts`) received: the
    /// rank must exist and be higher than the acceptor's, since only higher ranks connect.
    /// Returns None while fewer than 4 bytes have arrived.
    pub fn decode(buf: &[u8], nhosts: u32, acceptor: u32) -> Result<Option<HostHandshake>> {
        if buf.len() < HANDSHAKE_LEN {
            return Ok(None);
        }
        let rank = be_u32(buf, 0)?;
        if rank >= nhosts || rank <= acceptor {
            return Err(Error::OutOfRange {
                what: "IMPI host handshake (connecting host rank)",
                value: rank.into(),
                allowed: format!("{}..{nhosts}", u64::from(acceptor) + 1),
            });
        }
        Ok(Some(HostHandshake { host_rank: rank }))
    }
}

/// Which connections host `me` of `nhosts` makes: it connects to every lower rank, then
/// accepts one connection from every higher rank. Connects complete into the peers'
/// listen backlogs, so this order cannot deadlock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DancePlan {
    pub connect_to: Range<u32>,
    pub accept_from: Range<u32>,
}

impl DancePlan {
    pub fn new(me: u32, nhosts: u32) -> Result<DancePlan> {
        if me >= nhosts {
            return Err(Error::OutOfRange {
                what: "DancePlan::new me",
                value: me.into(),
                allowed: format!("0..{nhosts}"),
            });
        }
        Ok(DancePlan {
            connect_to: 0..me,
            accept_from: me + 1..nhosts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_roundtrip_and_range() {
        let b = HostHandshake { host_rank: 5 }.emit();
        assert_eq!(b, [0, 0, 0, 5]);
        assert_eq!(HostHandshake::decode(&b[..3], 6, 2).unwrap(), None);
        assert_eq!(
            HostHandshake::decode(&b, 6, 2).unwrap(),
            Some(HostHandshake { host_rank: 5 })
        );
        assert!(HostHandshake::decode(&b, 5, 2).is_err(), "rank >= nhosts");
        assert!(HostHandshake::decode(&b, 9, 5).is_err(), "not higher");
    }

    #[test]
    fn every_pair_once() {
        let n = 5;
        let mut pairs = Vec::new();
        for me in 0..n {
            let p = DancePlan::new(me, n).unwrap();
            for peer in p.connect_to {
                pairs.push((peer, me));
            }
            assert_eq!(p.accept_from.len() as u32, n - me - 1);
        }
        pairs.sort();
        pairs.dedup();
        assert_eq!(pairs.len() as u32, n * (n - 1) / 2);
        assert!(DancePlan::new(5, 5).is_err());
    }
}
