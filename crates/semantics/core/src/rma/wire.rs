//! The one-sided request message: a 32-byte head followed by the operation's data,
//! sent by the origin to the target on the window's private context.
//!
//! Two levels as everywhere on the wire: [`Head::parse`] validates every field of a
//! received message (never panicking) and [`Head::encode`] writes a head.

use crossmpi_datatype::op::Op;
use crossmpi_datatype::Basic;

pub const HEAD_LEN: usize = 32;

/// What the origin asks the target to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Put = 1,
    Get = 2,
    Accumulate = 3,
    GetAccumulate = 4,
    CompareAndSwap = 5,
    Lock = 6,
    Unlock = 7,
    /// A put whose data follows as a message of its own (tag `TAG_DATA`), which the
    /// target receives straight into the window memory.
    PutStream = 8,
}

impl Kind {
    const ALL: [Kind; 8] = [
        Kind::Put,
        Kind::Get,
        Kind::Accumulate,
        Kind::GetAccumulate,
        Kind::CompareAndSwap,
        Kind::Lock,
        Kind::Unlock,
        Kind::PutStream,
    ];
}

/// A parsed head. `offset` is a byte offset from the target's window base (an absolute
/// address in a dynamic window), `len` the target bytes the operation covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    pub kind: Kind,
    pub op: Op,
    /// The element type of accumulates (needed to apply `op`).
    pub basic: Option<Basic>,
    pub exclusive: bool,
    /// The tag the target replies with (the origin has a receive posted for it).
    pub reply_tag: i32,
    pub offset: u64,
    pub len: u64,
}

fn index_of<T: PartialEq>(all: &[T], v: &T) -> u8 {
    all.iter().position(|x| x == v).expect("listed in ALL") as u8
}

impl Head {
    pub fn encode(&self) -> [u8; HEAD_LEN] {
        let mut b = [0u8; HEAD_LEN];
        b[0] = self.kind as u8;
        b[1] = index_of(Op::ALL, &self.op);
        b[2] = self.basic.map_or(0, |t| index_of(Basic::ALL, &t) + 1);
        b[3] = self.exclusive as u8;
        b[4..8].copy_from_slice(&self.reply_tag.to_le_bytes());
        b[8..16].copy_from_slice(&self.offset.to_le_bytes());
        b[16..24].copy_from_slice(&self.len.to_le_bytes());
        b
    }

    /// Validates a received message: the head and the length of the data after it.
    pub fn parse(msg: &[u8]) -> Result<(Head, &[u8]), String> {
        let b = msg
            .get(..HEAD_LEN)
            .ok_or_else(|| format!("message of {} bytes is shorter than a head", msg.len()))?;
        let kind = *Kind::ALL
            .iter()
            .find(|k| **k as u8 == b[0])
            .ok_or_else(|| format!("unknown operation {}", b[0]))?;
        let op = *Op::ALL
            .get(b[1] as usize)
            .ok_or_else(|| format!("unknown reduction operator {}", b[1]))?;
        let basic = match b[2] {
            0 => None,
            i => Some(
                *Basic::ALL
                    .get(i as usize - 1)
                    .ok_or_else(|| format!("unknown element type {i}"))?,
            ),
        };
        let word = |r: std::ops::Range<usize>| u64::from_le_bytes(b[r].try_into().unwrap());
        let head = Head {
            kind,
            op,
            basic,
            exclusive: b[3] != 0,
            reply_tag: i32::from_le_bytes(b[4..8].try_into().unwrap()),
            offset: word(8..16),
            len: word(16..24),
        };
        let data = &msg[HEAD_LEN..];
        let expected = match kind {
            Kind::Put | Kind::Accumulate | Kind::GetAccumulate => head.len,
            Kind::CompareAndSwap => head.len.saturating_mul(2),
            Kind::Get | Kind::Lock | Kind::Unlock | Kind::PutStream => 0,
        };
        if data.len() as u64 != expected {
            return Err(format!(
                "{kind:?} of {} bytes carries {} bytes of data, {expected} expected",
                head.len,
                data.len()
            ));
        }
        if matches!(
            kind,
            Kind::Accumulate | Kind::GetAccumulate | Kind::CompareAndSwap
        ) && basic.is_none()
        {
            return Err(format!("{kind:?} without an element type"));
        }
        Ok((head, data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(kind: Kind, len: u64) -> Head {
        Head {
            kind,
            op: Op::Sum,
            basic: Some(Basic::ALL[3]),
            exclusive: true,
            reply_tag: 77,
            offset: 1 << 40,
            len,
        }
    }

    #[test]
    fn heads_round_trip_with_their_data() {
        let h = head(Kind::CompareAndSwap, 8);
        let mut msg = h.encode().to_vec();
        msg.extend_from_slice(&[5; 16]);
        let (back, data) = Head::parse(&msg).unwrap();
        assert_eq!(back, h);
        assert_eq!(data, &[5; 16]);
    }

    #[test]
    fn malformed_messages_are_rejected_not_panicking() {
        assert!(Head::parse(&[1; 10]).unwrap_err().contains("shorter"));
        let mut msg = head(Kind::Put, 4).encode().to_vec();
        assert!(Head::parse(&msg).unwrap_err().contains("4 expected"));
        msg[0] = 99;
        assert!(Head::parse(&msg).unwrap_err().contains("unknown operation"));
        let mut msg = head(Kind::Get, u64::MAX).encode().to_vec();
        msg[1] = 200;
        assert!(Head::parse(&msg).unwrap_err().contains("operator"));
        let mut msg = head(Kind::Accumulate, 0).encode().to_vec();
        msg[2] = 0;
        assert!(Head::parse(&msg).unwrap_err().contains("element type"));
        msg[2] = 255;
        assert!(Head::parse(&msg).unwrap_err().contains("element type 255"));
    }
}
