//! Requests: the state of every operation that can be waited for.

use crate::header::Envelope;
use crate::slab::Id;
use crate::userbuf::UserBuf;

pub type ReqId = Id;

/// `MPI_ANY_SOURCE`, `MPI_ANY_TAG`, `MPI_PROC_NULL` (MPI-5.0 ABI values).
pub const ANY_SOURCE: i32 = -1;
pub const ANY_TAG: i32 = -2;
pub const PROC_NULL: i32 = -3;

/// What `MPI_Status` reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Status {
    pub source: i32,
    pub tag: i32,
    /// Error class of the operation (0 = success).
    pub error: i32,
    /// Bytes received (packed size).
    pub bytes: u64,
    pub cancelled: bool,
}

impl Status {
    /// The status of an operation on `MPI_PROC_NULL`.
    pub fn proc_null() -> Status {
        Status {
            source: PROC_NULL,
            tag: ANY_TAG,
            ..Status::default()
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendMode {
    Standard,
    Synchronous,
    Ready,
    Buffered,
}

/// Where a send stands in its protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendState {
    /// Its first frame waits in the peer's queue.
    Queued,
    /// First frame written; waiting for the receiver to match it (`SyncAck` for a
    /// synchronous eager message, `Cts` or `Fin` for a rendezvous).
    AwaitReceiver,
    /// Data frames for the receiver's request are being written.
    Streaming,
    Done,
}

pub struct SendOp {
    pub buf: UserBuf,
    pub dest: u32,
    pub env: Envelope,
    pub mode: SendMode,
    pub msg: u64,
    pub state: SendState,
    /// Offset into the attached buffer holding this buffered send's copy.
    pub bsend_slot: Option<usize>,
    /// The external32 copy sent instead of `buf` to a rank of another cluster.
    pub staged: Option<crate::external::Staged>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecvState {
    Posted,
    /// Matched a rendezvous message of `len` bytes; `received` so far.
    Receiving {
        len: u64,
        received: u64,
    },
    Done,
}

pub struct RecvOp {
    pub buf: UserBuf,
    pub context: u64,
    pub source: i32,
    pub tag: i32,
    pub state: RecvState,
    /// Where a message from another cluster lands (external32) before conversion.
    pub staged: Option<crate::external::Staged>,
}

/// A persistent request's recipe, restarted by `MPI_Start`.
#[derive(Clone)]
pub enum Persistent {
    Send {
        buf: UserBuf,
        comm: crate::comm::CommId,
        dest: i32,
        tag: i32,
        mode: SendMode,
    },
    Recv {
        buf: UserBuf,
        comm: crate::comm::CommId,
        source: i32,
        tag: i32,
    },
    /// An operation the layer above starts itself (persistent collectives, partitioned
    /// communication), handing the running request to `Runtime::activate`.
    External,
}

pub enum ReqKind {
    Send(SendOp),
    Recv(RecvOp),
    /// Completed at creation (operations on `MPI_PROC_NULL`, self-sends, inactive
    /// persistent requests).
    Done,
    /// A started persistent request: the operation running on its behalf.
    Active(ReqId),
    /// A nonblocking collective: its schedule runs in the runtime's `colls`, which
    /// completes the request.
    Coll,
}

pub struct Request {
    pub kind: ReqKind,
    pub complete: bool,
    pub status: Status,
    /// Some for persistent requests; `active` tells whether it has been started.
    pub persistent: Option<Persistent>,
    pub active: bool,
    /// `MPI_Request_free` was called while the operation ran: drop it on completion.
    pub freed: bool,
    /// A remote cancel is in flight.
    pub cancelling: bool,
}

impl Request {
    /// The receive this request is, if it is one.
    pub fn recv_op(&self) -> Option<&RecvOp> {
        match &self.kind {
            ReqKind::Recv(r) => Some(r),
            _ => None,
        }
    }

    pub fn recv_op_mut(&mut self) -> Option<&mut RecvOp> {
        match &mut self.kind {
            ReqKind::Recv(r) => Some(r),
            _ => None,
        }
    }

    /// The send this request is, if it is one.
    pub fn send_op(&self) -> Option<&SendOp> {
        match &self.kind {
            ReqKind::Send(s) => Some(s),
            _ => None,
        }
    }

    pub fn send_op_mut(&mut self) -> Option<&mut SendOp> {
        match &mut self.kind {
            ReqKind::Send(s) => Some(s),
            _ => None,
        }
    }

    pub fn new(kind: ReqKind) -> Request {
        Request {
            kind,
            complete: false,
            status: Status::default(),
            persistent: None,
            active: true,
            freed: false,
            cancelling: false,
        }
    }

    pub fn done(status: Status) -> Request {
        Request {
            complete: true,
            status,
            ..Request::new(ReqKind::Done)
        }
    }
}
