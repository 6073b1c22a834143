//! The head of every frame the core sends through a transport (sans-IO): which protocol
//! step it is and the message envelope. Fixed 48 bytes, little-endian (frames never leave
//! a crossmpi job; IMPI has its own big-endian header). Decoding validates the kind and
//! never panics.

pub const HEAD_LEN: usize = 48;

/// Which message a frame belongs to, as matching sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    pub context: u64,
    /// Sender's rank in the communicator.
    pub src: i32,
    pub tag: i32,
}

/// The protocol step a frame carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A whole message; its payload follows. `sync`: the sender waits for `SyncAck`.
    Eager {
        env: Envelope,
        msg: u64,
        len: u64,
        sync: bool,
    },
    /// Request to send `len` bytes (rendezvous). `cma_addr` != 0: the data is dense at that
    /// address in the sender and may be pulled with cross-memory attach.
    Rts {
        env: Envelope,
        msg: u64,
        len: u64,
        cma_addr: u64,
    },
    /// Clear to send: the receiver matched message `msg` with its request `rreq`.
    Cts {
        msg: u64,
        rreq: u64,
    },
    /// A piece of a rendezvous message for request `rreq`, at byte `offset`.
    Data {
        rreq: u64,
        offset: u64,
    },
    /// The rest of long message `msg` after the piece its `Rts` carried, sent without
    /// waiting for the `Cts` (IMPI between crossmpi clients: `State::impi_early`); the
    /// receiving route holds it for the receive until the message is matched.
    Early {
        msg: u64,
    },
    /// The receiver pulled message `msg` itself (cross-memory attach): the send is done.
    Fin {
        msg: u64,
    },
    /// The receiver of message `msg` (its request `rreq`) pulls the bytes before `offset`
    /// itself and asks the sender to write the rest, by cross-memory attach, to `addr` in
    /// the receiver: both processes copy half at once.
    Push {
        msg: u64,
        rreq: u64,
        offset: u64,
        addr: u64,
    },
    /// The sender wrote the last `len` bytes of the message for request `rreq` (a `Push`).
    Pushed {
        rreq: u64,
        len: u64,
    },
    /// A synchronous-mode eager message `msg` was matched.
    SyncAck {
        msg: u64,
    },
    /// The sender withdraws message `msg` if it is still unmatched.
    CancelReq {
        msg: u64,
    },
    CancelReply {
        msg: u64,
        cancelled: bool,
    },
    /// Returns eager credit only (carried by `Head::credit`).
    Credit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    pub frame: Frame,
    /// Eager-credit bytes the sender of this frame returns to its receiver.
    pub credit: u32,
}

#[derive(Debug, PartialEq, Eq)]
pub enum HeadError {
    Short(usize),
    UnknownKind(u8),
}

impl std::fmt::Display for HeadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeadError::Short(n) => write!(f, "frame head of {n} bytes, expected {HEAD_LEN}"),
            HeadError::UnknownKind(k) => write!(f, "unknown frame kind {k}"),
        }
    }
}

const EAGER: u8 = 1;
const RTS: u8 = 2;
const CTS: u8 = 3;
const DATA: u8 = 4;
const FIN: u8 = 5;
const SYNC_ACK: u8 = 6;
const CANCEL_REQ: u8 = 7;
const CANCEL_REPLY: u8 = 8;
const CREDIT: u8 = 9;
const PUSH: u8 = 10;
const PUSHED: u8 = 11;
const EARLY: u8 = 12;

const FLAG_SYNC: u8 = 1;
const FLAG_CANCELLED: u8 = 2;

/// Field values laid out in the 48 bytes.
#[derive(Default)]
struct Fields {
    kind: u8,
    flags: u8,
    src: i32,
    tag: i32,
    credit: u32,
    context: u64,
    len: u64,
    msg: u64,
    aux: u64,
}

impl Head {
    pub fn new(frame: Frame) -> Head {
        Head { frame, credit: 0 }
    }

    pub fn encode(&self) -> [u8; HEAD_LEN] {
        let mut f = Fields {
            credit: self.credit,
            ..Fields::default()
        };
        let with_env = |f: &mut Fields, env: &Envelope| {
            f.context = env.context;
            f.src = env.src;
            f.tag = env.tag;
        };
        match self.frame {
            Frame::Eager {
                env,
                msg,
                len,
                sync,
            } => {
                f.kind = EAGER;
                with_env(&mut f, &env);
                f.msg = msg;
                f.len = len;
                f.flags = if sync { FLAG_SYNC } else { 0 };
            }
            Frame::Rts {
                env,
                msg,
                len,
                cma_addr,
            } => {
                f.kind = RTS;
                with_env(&mut f, &env);
                f.msg = msg;
                f.len = len;
                f.aux = cma_addr;
            }
            Frame::Cts { msg, rreq } => {
                f.kind = CTS;
                f.msg = msg;
                f.aux = rreq;
            }
            Frame::Data { rreq, offset } => {
                f.kind = DATA;
                f.aux = rreq;
                f.len = offset;
            }
            Frame::Early { msg } => {
                f.kind = EARLY;
                f.msg = msg;
            }
            Frame::Fin { msg } => {
                f.kind = FIN;
                f.msg = msg;
            }
            Frame::Push {
                msg,
                rreq,
                offset,
                addr,
            } => {
                f.kind = PUSH;
                f.msg = msg;
                f.aux = rreq;
                f.len = offset;
                f.context = addr;
            }
            Frame::Pushed { rreq, len } => {
                f.kind = PUSHED;
                f.aux = rreq;
                f.len = len;
            }
            Frame::SyncAck { msg } => {
                f.kind = SYNC_ACK;
                f.msg = msg;
            }
            Frame::CancelReq { msg } => {
                f.kind = CANCEL_REQ;
                f.msg = msg;
            }
            Frame::CancelReply { msg, cancelled } => {
                f.kind = CANCEL_REPLY;
                f.msg = msg;
                f.flags = if cancelled { FLAG_CANCELLED } else { 0 };
            }
            Frame::Credit => f.kind = CREDIT,
        }
        let mut b = [0u8; HEAD_LEN];
        b[0] = f.kind;
        b[1] = f.flags;
        b[4..8].copy_from_slice(&f.src.to_le_bytes());
        b[8..12].copy_from_slice(&f.tag.to_le_bytes());
        b[12..16].copy_from_slice(&f.credit.to_le_bytes());
        b[16..24].copy_from_slice(&f.context.to_le_bytes());
        b[24..32].copy_from_slice(&f.len.to_le_bytes());
        b[32..40].copy_from_slice(&f.msg.to_le_bytes());
        b[40..48].copy_from_slice(&f.aux.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Result<Head, HeadError> {
        if b.len() < HEAD_LEN {
            return Err(HeadError::Short(b.len()));
        }
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let u64_at = |o: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[o..o + 8]);
            u64::from_le_bytes(x)
        };
        let flags = b[1];
        let env = Envelope {
            src: u32_at(4) as i32,
            tag: u32_at(8) as i32,
            context: u64_at(16),
        };
        let (len, msg, aux) = (u64_at(24), u64_at(32), u64_at(40));
        let frame = match b[0] {
            EAGER => Frame::Eager {
                env,
                msg,
                len,
                sync: flags & FLAG_SYNC != 0,
            },
            RTS => Frame::Rts {
                env,
                msg,
                len,
                cma_addr: aux,
            },
            CTS => Frame::Cts { msg, rreq: aux },
            DATA => Frame::Data {
                rreq: aux,
                offset: len,
            },
            EARLY => Frame::Early { msg },
            FIN => Frame::Fin { msg },
            PUSH => Frame::Push {
                msg,
                rreq: aux,
                offset: len,
                addr: env.context,
            },
            PUSHED => Frame::Pushed { rreq: aux, len },
            SYNC_ACK => Frame::SyncAck { msg },
            CANCEL_REQ => Frame::CancelReq { msg },
            CANCEL_REPLY => Frame::CancelReply {
                msg,
                cancelled: flags & FLAG_CANCELLED != 0,
            },
            CREDIT => Frame::Credit,
            k => return Err(HeadError::UnknownKind(k)),
        };
        Ok(Head {
            frame,
            credit: u32_at(12),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_frame_round_trips() {
        let env = Envelope {
            context: 0xdead_beef_0000_0002,
            src: 3,
            tag: -2,
        };
        let frames = [
            Frame::Eager {
                env,
                msg: 9,
                len: 100,
                sync: true,
            },
            Frame::Eager {
                env,
                msg: 10,
                len: 0,
                sync: false,
            },
            Frame::Rts {
                env,
                msg: 11,
                len: 1 << 33,
                cma_addr: 0x7fff_0000,
            },
            Frame::Cts { msg: 11, rreq: 77 },
            Frame::Data {
                rreq: 77,
                offset: 65536,
            },
            Frame::Early { msg: 11 },
            Frame::Fin { msg: 11 },
            Frame::Push {
                msg: 11,
                rreq: 77,
                offset: 1 << 19,
                addr: 0x7ffe_1234_0000,
            },
            Frame::Pushed {
                rreq: 77,
                len: 1 << 19,
            },
            Frame::SyncAck { msg: 9 },
            Frame::CancelReq { msg: 10 },
            Frame::CancelReply {
                msg: 10,
                cancelled: true,
            },
            Frame::Credit,
        ];
        for (i, frame) in frames.into_iter().enumerate() {
            let head = Head {
                frame,
                credit: i as u32 * 1000,
            };
            assert_eq!(Head::decode(&head.encode()), Ok(head));
        }
    }

    #[test]
    fn malformed_heads_are_errors() {
        assert_eq!(Head::decode(&[1; 10]), Err(HeadError::Short(10)));
        let mut b = Head::new(Frame::Credit).encode();
        b[0] = 200;
        assert_eq!(Head::decode(&b), Err(HeadError::UnknownKind(200)));
    }
}
