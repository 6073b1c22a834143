//! What one host connection still has to write: packet headers and small payloads as
//! bytes, large payloads as references into the send request's own buffer (written from
//! there with `writev`, no copy), whole packets shared with the resend log (when the job
//! survives a relay's death), and markers that report a frame fully written to the
//! protocol state only once its last byte is on the wire, so the request (and its
//! buffer) lives until then.

use crate::proto::State;
use crate::request::{ReqId, ReqKind};
use std::collections::VecDeque;
use std::io::{ErrorKind, IoSlice, Write};
use std::sync::Arc;

/// Payloads at least this long are written from the send buffer instead of copied.
pub const BY_REFERENCE: u64 = 16 * 1024;

enum Segment {
    Bytes {
        data: Vec<u8>,
        pos: usize,
    },
    /// A packet whose bytes the resend log keeps too.
    Shared {
        data: Arc<Vec<u8>>,
        pos: usize,
    },
    /// Bytes [offset + pos, offset + len) of send request `req`'s dense buffer.
    Send {
        req: ReqId,
        offset: u64,
        len: u64,
        pos: u64,
    },
    /// Every byte before this is written: tell the protocol state frame of `req` left.
    Written(ReqId),
}

#[derive(Default)]
pub struct OutQueue {
    segs: VecDeque<Segment>,
    pending: usize,
}

/// Segments gathered into one `writev`.
const IOV: usize = 16;

impl OutQueue {
    pub fn pending(&self) -> usize {
        self.pending
    }

    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    pub fn push_bytes(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.pending += bytes.len();
        if let Some(Segment::Bytes { data, .. }) = self.segs.back_mut() {
            data.extend_from_slice(bytes);
            return;
        }
        self.segs.push_back(Segment::Bytes {
            data: bytes.to_vec(),
            pos: 0,
        });
    }

    pub fn push_shared(&mut self, data: Arc<Vec<u8>>) {
        self.pending += data.len();
        self.segs.push_back(Segment::Shared { data, pos: 0 });
    }

    pub fn push_send(&mut self, req: ReqId, offset: u64, len: u64) {
        self.pending += len as usize;
        self.segs.push_back(Segment::Send {
            req,
            offset,
            len,
            pos: 0,
        });
    }

    pub fn push_written(&mut self, req: ReqId) {
        self.segs.push_back(Segment::Written(req));
    }

    /// Drops everything queued (its connection is lost), reporting the frames in it
    /// as written: their packets are kept elsewhere for a resend.
    pub fn abandon(&mut self, st: &mut State) {
        for seg in self.segs.drain(..) {
            if let Segment::Written(req) = seg {
                st.frame_written(req);
            }
        }
        self.pending = 0;
    }

    /// Writes what the socket takes, reporting finished frames to `st`.
    pub fn write(&mut self, sock: &mut impl Write, st: &mut State) -> std::io::Result<()> {
        loop {
            while let Some(Segment::Written(req)) = self.segs.front() {
                let req = *req;
                self.segs.pop_front();
                st.frame_written(req);
            }
            if self.segs.is_empty() {
                return Ok(());
            }
            let n = {
                let mut iov: Vec<IoSlice> = Vec::with_capacity(IOV);
                for seg in self.segs.iter().take(IOV) {
                    match seg {
                        Segment::Bytes { data, pos } => iov.push(IoSlice::new(&data[*pos..])),
                        Segment::Shared { data, pos } => iov.push(IoSlice::new(&data[*pos..])),
                        Segment::Send {
                            req,
                            offset,
                            len,
                            pos,
                        } => iov.push(IoSlice::new(send_bytes(st, *req, offset + pos, len - pos))),
                        Segment::Written(_) => break,
                    }
                }
                match sock.write_vectored(&iov) {
                    Ok(0) => return Err(ErrorKind::WriteZero.into()),
                    Ok(n) => n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            };
            self.advance(n);
        }
    }

    fn advance(&mut self, mut n: usize) {
        self.pending -= n;
        while n > 0 {
            let Some(seg) = self.segs.front_mut() else {
                return;
            };
            let left = match seg {
                Segment::Bytes { data, pos } => consume(data, pos, &mut n),
                Segment::Shared { data, pos } => consume(data, pos, &mut n),
                Segment::Send { len, pos, .. } => {
                    let k = n.min((*len - *pos) as usize);
                    *pos += k as u64;
                    n -= k;
                    (*len - *pos) as usize
                }
                Segment::Written(_) => return,
            };
            if left == 0 {
                self.segs.pop_front();
            }
        }
    }
}

/// Takes up to `n` written bytes off `data` from `pos`; returns what is left of it.
fn consume(data: &[u8], pos: &mut usize, n: &mut usize) -> usize {
    let k = (*n).min(data.len() - *pos);
    *pos += k;
    *n -= k;
    data.len() - *pos
}

/// The dense bytes of a send request's buffer (empty if the request is gone, which the
/// `Written` marker after them rules out).
fn send_bytes(st: &State, req: ReqId, offset: u64, len: u64) -> &[u8] {
    match st.requests.get(req).map(|r| &r.kind) {
        Some(ReqKind::Send(s)) => s.buf.dense(offset, len as usize).unwrap_or(&[]),
        _ => &[],
    }
}
