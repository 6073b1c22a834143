//! Wire formats of the TCP transport (sans-IO): the hello that opens a connection and the
//! prefix of every frame. Decoders validate and never panic.

use std::fmt;

/// "cmpi" in ASCII: marks a crossmpi TCP connection.
pub const HELLO_MAGIC: u32 = 0x636d_7069;
pub const HELLO_VERSION: u16 = 1;
pub const HELLO_LEN: usize = 16;
pub const PREFIX_LEN: usize = 16;

#[derive(Debug, PartialEq, Eq)]
pub enum WireError {
    Truncated { need: usize, have: usize },
    BadMagic(u32),
    BadVersion(u16),
    HeadTooLong { len: u32, max: u32 },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Truncated { need, have } => {
                write!(f, "truncated: need {need} bytes, have {have}")
            }
            WireError::BadMagic(m) => write!(f, "not a crossmpi connection (magic {m:#010x})"),
            WireError::BadVersion(v) => write!(f, "unsupported protocol version {v}"),
            WireError::HeadTooLong { len, max } => {
                write!(f, "frame head of {len} bytes exceeds {max}")
            }
        }
    }
}

impl std::error::Error for WireError {}

/// First bytes on every connection: who is sending, for which job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hello {
    pub job: u64,
    pub rank: u32,
}

impl Hello {
    pub fn encode(&self) -> [u8; HELLO_LEN] {
        let mut b = [0u8; HELLO_LEN];
        b[0..4].copy_from_slice(&HELLO_MAGIC.to_be_bytes());
        b[4..6].copy_from_slice(&HELLO_VERSION.to_be_bytes());
        b[8..12].copy_from_slice(&self.rank.to_be_bytes());
        b[12..16].copy_from_slice(&(self.job as u32 ^ (self.job >> 32) as u32).to_be_bytes());
        b
    }

    /// Decodes a hello; `job` is compared by the caller through [`Hello::job_tag`].
    pub fn decode(b: &[u8]) -> Result<(u32, u32), WireError> {
        if b.len() < HELLO_LEN {
            return Err(WireError::Truncated {
                need: HELLO_LEN,
                have: b.len(),
            });
        }
        let magic = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        if magic != HELLO_MAGIC {
            return Err(WireError::BadMagic(magic));
        }
        let version = u16::from_be_bytes([b[4], b[5]]);
        if version != HELLO_VERSION {
            return Err(WireError::BadVersion(version));
        }
        let rank = u32::from_be_bytes([b[8], b[9], b[10], b[11]]);
        let tag = u32::from_be_bytes([b[12], b[13], b[14], b[15]]);
        Ok((rank, tag))
    }

    /// The 32-bit tag of a job id carried in a hello.
    pub fn job_tag(job: u64) -> u32 {
        job as u32 ^ (job >> 32) as u32
    }
}

/// Precedes every frame: the head length and the payload length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefix {
    pub head_len: u32,
    pub payload_len: u64,
}

impl Prefix {
    pub fn encode(&self) -> [u8; PREFIX_LEN] {
        let mut b = [0u8; PREFIX_LEN];
        b[0..4].copy_from_slice(&self.head_len.to_le_bytes());
        b[8..16].copy_from_slice(&self.payload_len.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8], max_head: u32) -> Result<Prefix, WireError> {
        if b.len() < PREFIX_LEN {
            return Err(WireError::Truncated {
                need: PREFIX_LEN,
                have: b.len(),
            });
        }
        let head_len = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        if head_len > max_head {
            return Err(WireError::HeadTooLong {
                len: head_len,
                max: max_head,
            });
        }
        let mut p = [0u8; 8];
        p.copy_from_slice(&b[8..16]);
        Ok(Prefix {
            head_len,
            payload_len: u64::from_le_bytes(p),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_round_trips_and_rejects_strangers() {
        let h = Hello {
            job: 0x1234_5678_9abc_def0,
            rank: 7,
        };
        let (rank, tag) = Hello::decode(&h.encode()).unwrap();
        assert_eq!((rank, tag), (7, Hello::job_tag(h.job)));
        let mut bad = h.encode();
        bad[0] = b'G';
        assert!(matches!(Hello::decode(&bad), Err(WireError::BadMagic(_))));
        bad = h.encode();
        bad[5] = 9;
        assert_eq!(Hello::decode(&bad), Err(WireError::BadVersion(9)));
        assert!(matches!(
            Hello::decode(&h.encode()[..5]),
            Err(WireError::Truncated { .. })
        ));
    }

    #[test]
    fn prefix_round_trips_and_bounds_the_head() {
        let p = Prefix {
            head_len: 48,
            payload_len: 1 << 40,
        };
        assert_eq!(Prefix::decode(&p.encode(), 64), Ok(p));
        assert_eq!(
            Prefix::decode(&p.encode(), 32),
            Err(WireError::HeadTooLong { len: 48, max: 32 })
        );
        assert!(Prefix::decode(&[0; 3], 64).is_err());
    }
}
