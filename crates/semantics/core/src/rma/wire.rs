//! The one-sided request message: a 40-byte head, the target layout's byte runs (none
//! for a contiguous target), then the operation's data, sent by the origin to the
//! target on the window's private context.
//!
//! Two levels as everywhere on the wire: [`Head::parse`] validates every field of a
//! received message (never panicking) and [`Head::encode`] writes a head.

use super::layout::Run;
use crossmpi_datatype::op::Op;
use crossmpi_datatype::Basic;

pub const HEAD_LEN: usize = 40;
const RUN_LEN: usize = 16;

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

/// A parsed head. `offset` is the first target byte the operation touches, as an offset
/// from the target's window base (an absolute address in a dynamic window); `span` the
/// bytes from there to the last one touched; `len` the data bytes (the sum of the
/// runs, or `span` for a contiguous target).
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
    pub span: u64,
    pub len: u64,
}

/// A parsed request: head, target runs (empty: one run over the span), data.
#[derive(Debug)]
pub struct Request<'a> {
    pub head: Head,
    pub runs: Vec<Run>,
    pub data: &'a [u8],
}

fn index_of<T: PartialEq>(all: &[T], v: &T) -> u8 {
    all.iter().position(|x| x == v).expect("listed in ALL") as u8
}

impl Head {
    /// The head and the runs of a non-contiguous target (`runs` of more than one).
    pub fn encode(&self, runs: &[Run]) -> Vec<u8> {
        let mut b = self
            .encode_head(if runs.len() > 1 { runs.len() as u32 } else { 0 })
            .to_vec();
        if runs.len() > 1 {
            for &(o, l) in runs {
                b.extend_from_slice(&o.to_le_bytes());
                b.extend_from_slice(&l.to_le_bytes());
            }
        }
        b
    }

    fn encode_head(&self, runs: u32) -> [u8; HEAD_LEN] {
        let mut b = [0u8; HEAD_LEN];
        b[0] = self.kind as u8;
        b[1] = index_of(Op::ALL, &self.op);
        b[2] = self.basic.map_or(0, |t| index_of(Basic::ALL, &t) + 1);
        b[3] = self.exclusive as u8;
        b[4..8].copy_from_slice(&self.reply_tag.to_le_bytes());
        b[8..16].copy_from_slice(&self.offset.to_le_bytes());
        b[16..24].copy_from_slice(&self.len.to_le_bytes());
        b[24..32].copy_from_slice(&self.span.to_le_bytes());
        b[32..36].copy_from_slice(&runs.to_le_bytes());
        b
    }

    /// Validates a received message: the head, the runs (inside the span, adding up to
    /// the length) and the length of the data after them.
    pub fn parse(msg: &[u8]) -> Result<Request<'_>, String> {
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
            span: word(24..32),
        };
        let nruns = u32::from_le_bytes(b[32..36].try_into().unwrap()) as usize;
        let rest = &msg[HEAD_LEN..];
        // Checked before allocating: the runs must be in the message.
        let run_bytes = nruns
            .checked_mul(RUN_LEN)
            .filter(|&n| n <= rest.len())
            .ok_or_else(|| format!("{nruns} runs do not fit in {} bytes", rest.len()))?;
        let runs: Vec<Run> = rest[..run_bytes]
            .chunks_exact(RUN_LEN)
            .map(|r| {
                let w = |i: usize| u64::from_le_bytes(r[i..i + 8].try_into().unwrap());
                (w(0), w(8))
            })
            .collect();
        let mut total = 0u64;
        for &(o, l) in &runs {
            if o.checked_add(l).is_none_or(|end| end > head.span) {
                return Err(format!(
                    "run [{o}, +{l}) outside the span of {} bytes",
                    head.span
                ));
            }
            total = total.saturating_add(l);
        }
        if runs.is_empty() && head.span != head.len || !runs.is_empty() && total != head.len {
            return Err(format!(
                "runs of {total} bytes over a span of {} do not make {} bytes",
                head.span, head.len
            ));
        }
        let data = &rest[run_bytes..];
        let expected = match kind {
            // MPI_NO_OP sends no origin data.
            Kind::Accumulate | Kind::GetAccumulate if head.op == Op::NoOp => 0,
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
        Ok(Request { head, runs, data })
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
            span: len,
            len,
        }
    }

    #[test]
    fn heads_round_trip_with_their_data() {
        let h = head(Kind::CompareAndSwap, 8);
        let mut msg = h.encode(&[(0, 8)]);
        msg.extend_from_slice(&[5; 16]);
        let r = Head::parse(&msg).unwrap();
        assert_eq!(r.head, h);
        assert!(r.runs.is_empty());
        assert_eq!(r.data, &[5; 16]);
        let strided = Head {
            span: 20,
            ..head(Kind::Put, 8)
        };
        let mut msg = strided.encode(&[(0, 4), (16, 4)]);
        msg.extend_from_slice(&[1; 8]);
        let r = Head::parse(&msg).unwrap();
        assert_eq!(r.runs, vec![(0, 4), (16, 4)]);
    }

    #[test]
    fn malformed_messages_are_rejected_not_panicking() {
        assert!(Head::parse(&[1; 10]).unwrap_err().contains("shorter"));
        let outside = Head {
            span: 10,
            ..head(Kind::Put, 8)
        };
        let mut msg = outside.encode(&[(0, 4), (8, 4)]);
        msg.extend_from_slice(&[0; 8]);
        assert!(Head::parse(&msg).unwrap_err().contains("outside the span"));
        let mut msg = head(Kind::Put, 8).encode(&[]);
        msg[32..36].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Head::parse(&msg).unwrap_err().contains("do not fit"));
        let mut msg = head(Kind::Put, 4).encode(&[]);
        assert!(Head::parse(&msg).unwrap_err().contains("4 expected"));
        msg[0] = 99;
        assert!(Head::parse(&msg).unwrap_err().contains("unknown operation"));
        let mut msg = head(Kind::Get, u64::MAX).encode(&[]);
        msg[1] = 200;
        assert!(Head::parse(&msg).unwrap_err().contains("operator"));
        let mut msg = head(Kind::Accumulate, 0).encode(&[]);
        msg[2] = 0;
        assert!(Head::parse(&msg).unwrap_err().contains("element type"));
        msg[2] = 255;
        assert!(Head::parse(&msg).unwrap_err().contains("element type 255"));
    }
}
