//! Requests the ABI layer composes from the core's: `MPI_Isendrecv(_replace)` (one
//! request over a send and a receive) and generalized requests (`MPI_Grequest_start`,
//! completed by the user).
//!
//! Both are a core request that stays incomplete until [`settle`] (called by every
//! Wait/Test/Request_get_status path before it looks at a request) finds it finished:
//! a compound when all its parts are done, a generalized request once the user called
//! `MPI_Grequest_complete` and its `query_fn` has filled the status. [`release`] runs when
//! the request is freed (its `free_fn`, the parts' buffers).
//!
//! The generalized-request callbacks run inside the completing call with the library's
//! lock held: they may use the `MPI_Status_set_*` functions (as the standard's examples
//! do) but not communicate.

use crate::consts::*;
use crate::error::{call, Scope};
use crate::handle::{self, Kind, MpiStatus};
use crate::p2p::{request, start_recv, start_replace, start_send};
use crate::util::out;
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::request::{ReqId, ReqKind, Request, SendMode, Status};
use crossmpi_core::runtime::{self, Runtime};
use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

type QueryFn = extern "C" fn(*mut c_void, *mut MpiStatus) -> c_int;
type FreeFn = extern "C" fn(*mut c_void) -> c_int;
type CancelFn = extern "C" fn(*mut c_void, c_int) -> c_int;

/// A request over several core requests: done when all are (and `sealed`: no part is
/// still to come); its status is `status_of`'s.
struct Compound {
    parts: Vec<ReqId>,
    sealed: bool,
    /// The parts belong to someone else (buffered sends, which the attached buffer's
    /// reaper releases): a part that is gone counts as done, and none is removed here.
    borrowed: bool,
    status_of: Option<ReqId>,
    /// Memory a part reads from until it completes (the send copy of `_replace`).
    owned: Option<Vec<u8>>,
}

struct Generalized {
    query: Option<QueryFn>,
    free: Option<FreeFn>,
    cancel: Option<CancelFn>,
    extra_state: usize,
    /// `query_fn` has run (it runs once, when the request is first found complete).
    queried: bool,
}

enum Composed {
    Compound(Compound),
    Generalized(Generalized),
}

/// By the slot of the core request the handle names.
static COMPOSED: Mutex<Option<HashMap<u32, Composed>>> = Mutex::new(None);

/// Copies read by the parts of compounds freed while they ran (`MPI_Request_free` on an
/// `MPI_Isendrecv_replace`): kept until those parts, which the core drops when they
/// finish, are gone.
static ORPHANED: Mutex<Vec<(Vec<ReqId>, Vec<u8>)>> = Mutex::new(Vec::new());

/// How many entries `COMPOSED` and `ORPHANED` hold, stored by their guards when dropped.
/// `settle` and `release` run for every request a Wait, Test or free looks at; with both
/// empty (a program that composes no request) they return without taking the two locks,
/// which cost a third of a small message's time in a stream of `MPI_Isend`s.
static COMPOSED_LEN: AtomicUsize = AtomicUsize::new(0);
static ORPHANED_LEN: AtomicUsize = AtomicUsize::new(0);

trait Entries {
    fn entries(&self) -> usize;
}

impl Entries for Option<HashMap<u32, Composed>> {
    fn entries(&self) -> usize {
        self.as_ref().map_or(0, HashMap::len)
    }
}

impl Entries for Vec<(Vec<ReqId>, Vec<u8>)> {
    fn entries(&self) -> usize {
        self.len()
    }
}

/// A lock on one of the two tables that publishes its size when released.
struct Counted<T: Entries + 'static> {
    guard: MutexGuard<'static, T>,
    len: &'static AtomicUsize,
}

impl<T: Entries> Deref for Counted<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T: Entries> DerefMut for Counted<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

impl<T: Entries> Drop for Counted<T> {
    fn drop(&mut self) {
        self.len.store(self.guard.entries(), Ordering::Release);
    }
}

fn table() -> Counted<Option<HashMap<u32, Composed>>> {
    Counted {
        guard: COMPOSED.lock().unwrap_or_else(|p| p.into_inner()),
        len: &COMPOSED_LEN,
    }
}

fn orphaned() -> Counted<Vec<(Vec<ReqId>, Vec<u8>)>> {
    Counted {
        guard: ORPHANED.lock().unwrap_or_else(|p| p.into_inner()),
        len: &ORPHANED_LEN,
    }
}

/// True when no request is composed or orphaned: nothing for `settle`/`release` to do.
fn nothing_composed() -> bool {
    COMPOSED_LEN.load(Ordering::Acquire) == 0 && ORPHANED_LEN.load(Ordering::Acquire) == 0
}

fn register(slot: u32, c: Composed) {
    table().get_or_insert_with(HashMap::new).insert(slot, c);
}

fn new_compound(rt: &mut Runtime, c: Compound) -> ReqId {
    let id = pending_request(rt);
    register(id.index, Composed::Compound(c));
    id
}

/// A core request that completes only when this module says so.
fn pending_request(rt: &mut Runtime) -> ReqId {
    rt.st.requests.insert(Request::new(ReqKind::Done))
}

fn finish(rt: &mut Runtime, id: ReqId, status: Status) {
    if let Some(r) = rt.st.requests.get_mut(id) {
        r.complete = true;
        r.status = status;
    }
}

/// Completes the core request behind `h` (or, for a started persistent request, the
/// one running on its behalf) if it is a composed request that finished.
pub fn settle(rt: &mut Runtime, h: usize) {
    if nothing_composed() {
        return;
    }
    orphaned().retain(|(parts, _)| parts.iter().any(|&p| rt.st.requests.get(p).is_some()));
    let Some(slot) = handle::decode(Kind::Request, h) else {
        return;
    };
    let Some((mut id, r)) = rt.st.requests.by_index(slot) else {
        return;
    };
    if let ReqKind::Active(child) = r.kind {
        id = child;
    }
    let mut guard = table();
    let Some(t) = guard.as_mut() else {
        return;
    };
    let Some(entry) = t.get_mut(&id.index) else {
        return;
    };
    match entry {
        Composed::Compound(c) => {
            let gone = |p: ReqId| c.borrowed && rt.st.requests.get(p).is_none();
            if !c.sealed || !c.parts.iter().all(|&p| rt.st.is_done(p) || gone(p)) {
                return;
            }
            let mut status = Status::default();
            let mut error = 0;
            for &p in &c.parts {
                let part = if c.borrowed {
                    rt.st.requests.get(p).map(|r| r.status)
                } else {
                    rt.st.requests.remove_with(p, |r| r.status)
                };
                if let Some(part) = part {
                    if Some(p) == c.status_of {
                        status = part;
                    }
                    if error == 0 {
                        error = part.error;
                    }
                }
            }
            status.error = error;
            // Done with: the parts are released, and the slot may be reused.
            t.remove(&id.index);
            finish(rt, id, status);
        }
        Composed::Generalized(g) => {
            let complete = rt.st.requests.get(id).is_some_and(|r| r.complete);
            if !complete || g.queried {
                return;
            }
            g.queried = true;
            let mut s = MpiStatus::from_core(&rt.st.requests.get(id).unwrap().status);
            if let Some(query) = g.query {
                let rc = query(g.extra_state as *mut c_void, &mut s);
                if rc != 0 {
                    s.error = rc;
                }
            }
            let status = Status {
                source: s.source,
                tag: s.tag,
                error: s.error,
                bytes: s.bytes(),
                cancelled: s.cancelled(),
            };
            finish(rt, id, status);
        }
    }
}

/// Forgets a composed request whose handle was freed: runs a generalized request's
/// `free_fn`. Returns its error code (0 on success).
pub fn release(h: usize) -> c_int {
    if nothing_composed() {
        return 0;
    }
    let Some(slot) = handle::decode(Kind::Request, h) else {
        return 0;
    };
    let entry = table().as_mut().and_then(|t| t.remove(&slot));
    match entry {
        Some(Composed::Generalized(Generalized {
            free: Some(free),
            extra_state,
            ..
        })) => free(extra_state as *mut c_void),
        _ => 0,
    }
}

/// `MPI_Cancel` on a generalized request: its `cancel_fn`, told whether it completed.
/// `None` for any other request.
pub fn cancel(rt: &Runtime, h: usize) -> Option<c_int> {
    let slot = handle::decode(Kind::Request, h)?;
    let guard = table();
    let Some(Composed::Generalized(g)) = guard.as_ref()?.get(&slot) else {
        return None;
    };
    let complete = rt
        .st
        .requests
        .by_index(slot)
        .is_some_and(|(_, r)| r.complete);
    Some(
        g.cancel
            .map_or(0, |f| f(g.extra_state as *mut c_void, complete as c_int)),
    )
}

fn start_compound(
    f: &str,
    send: ReqId,
    recv: ReqId,
    owned: Option<Vec<u8>>,
    request: *mut usize,
) -> MpiResult<()> {
    let main = runtime::with(f, |rt| {
        Ok(new_compound(
            rt,
            Compound {
                parts: vec![send, recv],
                sealed: true,
                borrowed: false,
                status_of: Some(recv),
                owned,
            },
        ))
    })?;
    out(
        f,
        "request",
        request,
        handle::encode(Kind::Request, main.index),
    )
}

pub(crate) fn isendrecv(
    f: &str,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: usize,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: usize,
    source: c_int,
    recvtag: c_int,
    comm: usize,
    request: *mut usize,
) -> c_int {
    call(Scope::Comm(comm), || {
        let (r, _) = start_recv(f, recvbuf, recvcount, recvtype, source, recvtag, comm)?;
        let mode = SendMode::Standard;
        let s = start_send(f, sendbuf, sendcount, sendtype, dest, sendtag, comm, mode)?;
        start_compound(f, s, r, None, request)
    })
}

pub(crate) fn isendrecv_replace(
    f: &str,
    buf: *mut c_void,
    count: i64,
    datatype: usize,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: usize,
    request: *mut usize,
) -> c_int {
    call(Scope::Comm(comm), || {
        // The copy the send reads lives in the compound until the send is done.
        let (s, r, _, copy) = start_replace(
            f, buf, count, datatype, dest, sendtag, source, recvtag, comm,
        )?;
        start_compound(f, s, r, Some(copy), request)
    })
}

export! {
    fn MPI_Isendrecv / PMPI_Isendrecv(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, source: c_int, recvtag: c_int, comm: usize, request: *mut usize) -> c_int {
        isendrecv("MPI_Isendrecv", sendbuf, sendcount as i64, sendtype, dest, sendtag, recvbuf, recvcount as i64, recvtype, source, recvtag, comm, request)
    }
    fn MPI_Isendrecv_c / PMPI_Isendrecv_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, source: c_int, recvtag: c_int, comm: usize, request: *mut usize) -> c_int {
        isendrecv("MPI_Isendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, request)
    }
    fn MPI_Isendrecv_replace / PMPI_Isendrecv_replace(buf: *mut c_void, count: c_int, datatype: usize, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: usize, request: *mut usize) -> c_int {
        isendrecv_replace("MPI_Isendrecv_replace", buf, count as i64, datatype, dest, sendtag, source, recvtag, comm, request)
    }
    fn MPI_Isendrecv_replace_c / PMPI_Isendrecv_replace_c(buf: *mut c_void, count: i64, datatype: usize, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: usize, request: *mut usize) -> c_int {
        isendrecv_replace("MPI_Isendrecv_replace_c", buf, count, datatype, dest, sendtag, source, recvtag, comm, request)
    }

    fn MPI_Grequest_start / PMPI_Grequest_start(query_fn: Option<QueryFn>, free_fn: Option<FreeFn>, cancel_fn: Option<CancelFn>, extra_state: *mut c_void, request: *mut usize) -> c_int {
        let f = "MPI_Grequest_start";
        call(Scope::Process, || {
            if request.is_null() {
                return Err(MpiError::arg(ErrorClass::Arg, f, "request", "NULL", "an output argument is required"));
            }
            let id = runtime::with(f, |rt| Ok(pending_request(rt)))?;
            register(id.index, Composed::Generalized(Generalized {
                query: query_fn,
                free: free_fn,
                cancel: cancel_fn,
                extra_state: extra_state as usize,
                queried: false,
            }));
            out(f, "request", request, handle::encode(Kind::Request, id.index))
        })
    }

    fn MPI_Grequest_complete / PMPI_Grequest_complete(request: usize) -> c_int {
        let f = "MPI_Grequest_complete";
        call(Scope::Process, || {
            let slot = handle::decode(Kind::Request, request);
            let generalized = slot.is_some_and(|s| {
                matches!(table().as_ref().and_then(|t| t.get(&s)), Some(Composed::Generalized(_)))
            });
            if !generalized {
                return Err(MpiError::arg(ErrorClass::Request, f, "request", handle::describe(request), "not a generalized request (MPI_Grequest_start makes them)"));
            }
            runtime::with(f, |rt| {
                let id = request_id(rt, f, request)?;
                let r = rt.st.requests.get_mut(id).unwrap();
                if r.complete {
                    return Err(MpiError::arg(ErrorClass::Request, f, "request", handle::describe(request), "already completed"));
                }
                r.complete = true;
                if r.freed {
                    // MPI_Request_free came first: nobody will wait for it.
                    rt.st.requests.discard(id);
                    let _ = release(request);
                }
                Ok(())
            })
        })
    }
}

/// A request that completes once parts added later with [`add_part`] are done, after
/// the last one is added (`seal`).
pub fn pending_compound(rt: &mut Runtime) -> ReqId {
    let c = Compound {
        parts: Vec::new(),
        sealed: false,
        borrowed: false,
        status_of: None,
        owned: None,
    };
    new_compound(rt, c)
}

/// A request that completes when the requests `parts`, owned by someone else who
/// releases them when done, have all finished (`MPI_Buffer_iflush`).
pub fn watch(rt: &mut Runtime, parts: Vec<ReqId>) -> ReqId {
    let c = Compound {
        parts,
        sealed: true,
        borrowed: true,
        status_of: None,
        owned: None,
    };
    new_compound(rt, c)
}

/// Adds a part to a compound from [`pending_compound`]; `last` seals it.
pub fn add_part(compound: ReqId, part: ReqId, last: bool) {
    if let Some(Composed::Compound(c)) = table().as_mut().and_then(|t| t.get_mut(&compound.index)) {
        c.parts.push(part);
        c.sealed |= last;
    }
}

fn request_id(rt: &Runtime, f: &str, h: usize) -> MpiResult<ReqId> {
    request(rt, f, "request", h)
}

/// Whether `h` names a request of this module still waiting for its user or parts.
pub fn is_composed(h: usize) -> bool {
    handle::decode(Kind::Request, h)
        .is_some_and(|s| table().as_ref().is_some_and(|t| t.contains_key(&s)))
}

/// `MPI_Request_free` on a composed request: a finished one is released now, a running
/// one when it completes (a generalized one in `MPI_Grequest_complete`).
pub fn free(rt: &mut Runtime, f: &str, h: usize) -> MpiResult<c_int> {
    settle(rt, h);
    let id = request_id(rt, f, h)?;
    let r = rt.st.requests.get_mut(id).unwrap();
    if r.complete {
        rt.st.requests.discard(id);
        return Ok(release(h));
    }
    let running = table().as_mut().and_then(|t| match t.get(&id.index) {
        Some(Composed::Compound(_)) => t.remove(&id.index),
        _ => None,
    });
    let Some(Composed::Compound(c)) = running else {
        r.freed = true; // a generalized request: released by MPI_Grequest_complete
        return Ok(MPI_SUCCESS);
    };
    // A running compound: its parts go on and are dropped by the core when done.
    rt.st.requests.discard(id);
    if !c.borrowed {
        for &p in &c.parts {
            rt.request_free(f, p)?;
        }
    }
    if let Some(copy) = c.owned {
        orphaned().push((c.parts, copy));
    }
    Ok(MPI_SUCCESS)
}
