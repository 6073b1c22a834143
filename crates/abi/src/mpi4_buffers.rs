//! Buffered-mode buffers of MPI 4.1: one per communicator (`MPI_Comm_attach_buffer`),
//! one per session (`MPI_Session_attach_buffer`, used by the communicators made from the
//! session's groups), the process's (`MPI_Buffer_attach`); `MPI_BUFFER_AUTOMATIC`; and
//! flushing (`MPI_*_flush_buffer`, `MPI_*_iflush_buffer`, `MPI_Buffer_flush/iflush`).
//!
//! The core sends buffered messages through `Runtime::bsend_buffer`; a buffered send on a
//! communicator with a buffer of its own (or its session's) runs with that buffer swapped
//! in for the call, so the core's allocation and reaping serve every buffer alike. The
//! same swap lets flush and detach reap a communicator's buffer.
//!
//! `MPI_BUFFER_AUTOMATIC` gets a region of `CROSSMPI_BUFFER_AUTOMATIC_BYTES` (default
//! 64 MiB: zero-filled allocations of that size are mapped lazily, so only the bytes
//! messages use cost memory, and 64 MiB holds far more pending buffered traffic than
//! eager limits let build up).

use crate::comm::resolve;
use crate::consts::*;
use crate::error::{call, Scope};
use crate::handle::{self, Kind};
use crate::util::{count, out};
use crossmpi_core::comm::CommId;
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::p2p::BsendBuffer;
use crossmpi_core::request::{Persistent, ReqId, SendMode};
use crossmpi_core::runtime::{self, Runtime};
use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::sync::{Mutex, MutexGuard, OnceLock};

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Owner {
    Process,
    Comm(u64),
    Session(u32),
}

struct Attached {
    buffer: Option<BsendBuffer>,
    /// The memory of an `MPI_BUFFER_AUTOMATIC` buffer.
    automatic: Option<Vec<u8>>,
}

struct Buffers {
    /// Buffers of communicators and sessions (the process's lives in the runtime).
    attached: HashMap<Owner, Attached>,
    /// The session each communicator made from a session's group belongs to.
    session_of: HashMap<u64, u32>,
    /// The memory behind an automatic process buffer.
    process_automatic: Option<Vec<u8>>,
}

static BUFFERS: Mutex<Option<Buffers>> = Mutex::new(None);

fn buffers() -> MutexGuard<'static, Option<Buffers>> {
    BUFFERS.lock().unwrap_or_else(|p| p.into_inner())
}

fn with_buffers<R>(f: impl FnOnce(&mut Buffers) -> R) -> R {
    f(buffers().get_or_insert_with(|| Buffers {
        attached: HashMap::new(),
        session_of: HashMap::new(),
        process_automatic: None,
    }))
}

fn automatic_bytes() -> usize {
    static BYTES: OnceLock<usize> = OnceLock::new();
    *BYTES.get_or_init(|| {
        std::env::var("CROSSMPI_BUFFER_AUTOMATIC_BYTES")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(64 << 20)
    })
}

/// The buffer a user attaches: (address, size, memory owned for `MPI_BUFFER_AUTOMATIC`).
fn region(
    function: &str,
    buffer: *mut c_void,
    size: i64,
) -> MpiResult<(usize, usize, Option<Vec<u8>>)> {
    if buffer as usize == MPI_BUFFER_AUTOMATIC {
        let mut memory = vec![0u8; automatic_bytes()];
        return Ok((memory.as_mut_ptr() as usize, memory.len(), Some(memory)));
    }
    let size = count(function, "size", size)? as usize;
    if buffer.is_null() && size > 0 {
        return Err(MpiError::arg(
            ErrorClass::Buffer,
            function,
            "buffer",
            "NULL",
            "a buffer (or MPI_BUFFER_AUTOMATIC) is required",
        ));
    }
    Ok((buffer as usize, size, None))
}

/// What detach reports: the attached address (`MPI_BUFFER_AUTOMATIC` for automatic).
fn reported(addr: usize, size: usize, automatic: bool) -> (usize, usize) {
    if automatic {
        (MPI_BUFFER_AUTOMATIC, 0)
    } else {
        (addr, size)
    }
}

/// The buffer a buffered send on `comm` uses, if not the process's.
fn owner_for(b: &Buffers, comm: CommId) -> Option<Owner> {
    let key = comm.to_u64();
    let own = Owner::Comm(key);
    if b.attached.contains_key(&own) {
        return Some(own);
    }
    let session = Owner::Session(*b.session_of.get(&key)?);
    b.attached.contains_key(&session).then_some(session)
}

/// Runs `f` with `owner`'s buffer as the runtime's buffered-send buffer.
fn swapped<R>(rt: &mut Runtime, owner: Owner, f: impl FnOnce(&mut Runtime) -> R) -> R {
    if owner == Owner::Process {
        return f(rt);
    }
    let mut theirs = with_buffers(|b| b.attached.get_mut(&owner).and_then(|a| a.buffer.take()));
    std::mem::swap(&mut rt.bsend_buffer, &mut theirs);
    let r = f(rt);
    std::mem::swap(&mut rt.bsend_buffer, &mut theirs);
    with_buffers(|b| {
        if let Some(a) = b.attached.get_mut(&owner) {
            a.buffer = theirs;
        }
    });
    r
}

/// A send of `mode` on `comm`: a buffered one uses the communicator's (or its
/// session's) buffer when one is attached.
pub fn for_send<R>(
    rt: &mut Runtime,
    comm: CommId,
    mode: SendMode,
    f: impl FnOnce(&mut Runtime) -> R,
) -> R {
    let owner = (mode == SendMode::Buffered)
        .then(|| with_buffers(|b| owner_for(b, comm)))
        .flatten();
    match owner {
        Some(o) => swapped(rt, o, f),
        None => f(rt),
    }
}

/// Records that `comm` was made from `session`'s groups.
pub fn comm_of_session(comm: CommId, session: u32) {
    with_buffers(|b| b.session_of.insert(comm.to_u64(), session));
}

fn attach(f: &str, owner: Owner, buffer: *mut c_void, size: i64) -> MpiResult<()> {
    let (addr, size, automatic) = region(f, buffer, size)?;
    if owner == Owner::Process {
        return runtime::with(f, |rt| {
            if rt.bsend_buffer.is_some() {
                return Err(MpiError::context(
                    ErrorClass::Buffer,
                    f,
                    "a buffer is already attached (detach it first)",
                ));
            }
            rt.bsend_buffer = Some(BsendBuffer::new(addr, size));
            with_buffers(|b| b.process_automatic = automatic);
            Ok(())
        });
    }
    with_buffers(|b| {
        if b.attached.contains_key(&owner) {
            return Err(MpiError::context(
                ErrorClass::Buffer,
                f,
                "a buffer is already attached (detach it first)",
            ));
        }
        b.attached.insert(
            owner,
            Attached {
                buffer: Some(BsendBuffer::new(addr, size)),
                automatic,
            },
        );
        Ok(())
    })
}

/// Waits until the buffered sends using `owner`'s buffer are done.
fn flush(f: &str, owner: Owner) -> MpiResult<()> {
    runtime::wait_for(f, |rt| {
        swapped(rt, owner, |rt| {
            rt.reap_bsends();
            rt.bsend_buffer
                .as_ref()
                .is_none_or(|b| b.is_idle())
                .then_some(())
        })
    })
}

/// A request that completes when the buffered sends now using `owner`'s buffer are done.
fn iflush(f: &str, owner: Owner, request: *mut usize) -> MpiResult<()> {
    let id = runtime::with(f, |rt| {
        let pending = swapped(rt, owner, |rt| {
            rt.bsend_buffer
                .as_ref()
                .map(|b| b.pending_sends())
                .unwrap_or_default()
        });
        Ok(crate::mpi4_requests::watch(rt, pending))
    })?;
    out(
        f,
        "request",
        request,
        handle::encode(Kind::Request, id.index),
    )
}

/// `MPI_Buffer_attach(_c)`.
pub fn attach_process(f: &str, buffer: *mut c_void, size: i64) -> MpiResult<()> {
    attach(f, Owner::Process, buffer, size)
}

/// `MPI_Buffer_detach(_c)`: (address, size) to report.
pub fn detach_process(f: &str) -> MpiResult<(usize, usize)> {
    detach(f, Owner::Process)
}

/// `MPI_Start` of a persistent buffered send uses its communicator's buffer.
pub fn for_start<R>(rt: &mut Runtime, req: ReqId, f: impl FnOnce(&mut Runtime) -> R) -> R {
    let recipe = rt.st.requests.get(req).and_then(|r| match r.persistent {
        Some(Persistent::Send { comm, mode, .. }) => Some((comm, mode)),
        _ => None,
    });
    match recipe {
        Some((comm, mode)) => for_send(rt, comm, mode, f),
        None => f(rt),
    }
}

fn detach(f: &str, owner: Owner) -> MpiResult<(usize, usize)> {
    flush(f, owner)?;
    if owner == Owner::Process {
        let (addr, size) = crate::p2p::buffer_detach(f)?;
        let automatic = with_buffers(|b| b.process_automatic.take()).is_some();
        return Ok(reported(addr, size, automatic));
    }
    let a = with_buffers(|b| b.attached.remove(&owner))
        .ok_or_else(|| MpiError::context(ErrorClass::Buffer, f, "no buffer is attached"))?;
    let (addr, size) = a.buffer.map(|b| (b.addr, b.size)).unwrap_or((0, 0));
    Ok(reported(addr, size, a.automatic.is_some()))
}

fn comm_owner(f: &str, comm: usize) -> MpiResult<Owner> {
    runtime::with(f, |rt| resolve(rt, f, comm)).map(|id| Owner::Comm(id.to_u64()))
}

fn session_owner(f: &str, session: usize) -> MpiResult<Owner> {
    crate::mpi4_session::slot_of(f, session).map(Owner::Session)
}

/// Detach with an `int` size: sizes beyond `INT_MAX` are reported as `INT_MAX`.
fn detach_int(
    f: &str,
    owner: MpiResult<Owner>,
    addr: *mut c_void,
    size: *mut c_int,
) -> MpiResult<()> {
    let (a, s) = detach(f, owner?)?;
    out(f, "buffer_addr", addr as *mut usize, a)?;
    out(f, "size", size, s.min(c_int::MAX as usize) as c_int)
}

fn detach_count(
    f: &str,
    owner: MpiResult<Owner>,
    addr: *mut c_void,
    size: *mut i64,
) -> MpiResult<()> {
    let (a, s) = detach(f, owner?)?;
    out(f, "buffer_addr", addr as *mut usize, a)?;
    out(f, "size", size, s as i64)
}

export! {
    fn MPI_Buffer_flush / PMPI_Buffer_flush() -> c_int {
        call(Scope::Process, || flush("MPI_Buffer_flush", Owner::Process))
    }
    fn MPI_Buffer_iflush / PMPI_Buffer_iflush(request: *mut usize) -> c_int {
        call(Scope::Process, || iflush("MPI_Buffer_iflush", Owner::Process, request))
    }

    fn MPI_Comm_attach_buffer / PMPI_Comm_attach_buffer(comm: usize, buffer: *mut c_void, size: c_int) -> c_int {
        let f = "MPI_Comm_attach_buffer";
        call(Scope::Comm(comm), || attach(f, comm_owner(f, comm)?, buffer, size as i64))
    }
    fn MPI_Comm_attach_buffer_c / PMPI_Comm_attach_buffer_c(comm: usize, buffer: *mut c_void, size: i64) -> c_int {
        let f = "MPI_Comm_attach_buffer_c";
        call(Scope::Comm(comm), || attach(f, comm_owner(f, comm)?, buffer, size))
    }
    fn MPI_Comm_detach_buffer / PMPI_Comm_detach_buffer(comm: usize, buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
        let f = "MPI_Comm_detach_buffer";
        call(Scope::Comm(comm), || detach_int(f, comm_owner(f, comm), buffer_addr, size))
    }
    fn MPI_Comm_detach_buffer_c / PMPI_Comm_detach_buffer_c(comm: usize, buffer_addr: *mut c_void, size: *mut i64) -> c_int {
        let f = "MPI_Comm_detach_buffer_c";
        call(Scope::Comm(comm), || detach_count(f, comm_owner(f, comm), buffer_addr, size))
    }
    fn MPI_Comm_flush_buffer / PMPI_Comm_flush_buffer(comm: usize) -> c_int {
        let f = "MPI_Comm_flush_buffer";
        call(Scope::Comm(comm), || flush(f, comm_owner(f, comm)?))
    }
    fn MPI_Comm_iflush_buffer / PMPI_Comm_iflush_buffer(comm: usize, request: *mut usize) -> c_int {
        let f = "MPI_Comm_iflush_buffer";
        call(Scope::Comm(comm), || iflush(f, comm_owner(f, comm)?, request))
    }

    fn MPI_Session_attach_buffer / PMPI_Session_attach_buffer(session: usize, buffer: *mut c_void, size: c_int) -> c_int {
        let f = "MPI_Session_attach_buffer";
        crate::mpi4_session::session_call(session, || attach(f, session_owner(f, session)?, buffer, size as i64))
    }
    fn MPI_Session_attach_buffer_c / PMPI_Session_attach_buffer_c(session: usize, buffer: *mut c_void, size: i64) -> c_int {
        let f = "MPI_Session_attach_buffer_c";
        crate::mpi4_session::session_call(session, || attach(f, session_owner(f, session)?, buffer, size))
    }
    fn MPI_Session_detach_buffer / PMPI_Session_detach_buffer(session: usize, buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
        let f = "MPI_Session_detach_buffer";
        crate::mpi4_session::session_call(session, || detach_int(f, session_owner(f, session), buffer_addr, size))
    }
    fn MPI_Session_detach_buffer_c / PMPI_Session_detach_buffer_c(session: usize, buffer_addr: *mut c_void, size: *mut i64) -> c_int {
        let f = "MPI_Session_detach_buffer_c";
        crate::mpi4_session::session_call(session, || detach_count(f, session_owner(f, session), buffer_addr, size))
    }
    fn MPI_Session_flush_buffer / PMPI_Session_flush_buffer(session: usize) -> c_int {
        let f = "MPI_Session_flush_buffer";
        crate::mpi4_session::session_call(session, || flush(f, session_owner(f, session)?))
    }
    fn MPI_Session_iflush_buffer / PMPI_Session_iflush_buffer(session: usize, request: *mut usize) -> c_int {
        let f = "MPI_Session_iflush_buffer";
        crate::mpi4_session::session_call(session, || iflush(f, session_owner(f, session)?, request))
    }
}
