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
//! The generalized-request callbacks may call MPI (as Open MPI and MPICH allow: a
//! `free_fn` that frees the communicator its operation used, a `cancel_fn` that completes
//! the request), so none runs while the runtime is held. A call that may complete one
//! runs the `query_fn`s that are due before it takes the runtime ([`answer_queries`]);
//! one completed while the call waits (by another thread, or by a callback) has its
//! `query_fn` queued to the runtime's deferred user code. A `free_fn` is queued by the
//! thread whose call released the request and run by that call on its way out
//! ([`then_free`]), which returns its error; `MPI_Cancel` calls `cancel_fn` after
//! leaving the runtime.

use crate::consts::*;
use crate::error::{self, call, Scope};
use crate::handle::{self, Kind, MpiStatus};
use crate::p2p::{request, start_recv, start_replace, start_send};
use crate::util::{out, required};
use crossmpi_core::comm::CommId;
use crossmpi_core::comm_idup::Idup;
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::request::{ReqId, ReqKind, Request, SendMode, Status};
use crossmpi_core::runtime::{self, Runtime};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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
    stage: Stage,
    /// Tells this request from a later one in the same slot: a queued `query_fn` runs
    /// only if its request is still there.
    serial: u64,
}

/// Where a generalized request is on its way to the Wait or Test that completes it,
/// whose `query_fn` call comes between `Completed` and `Answered`.
#[derive(Clone, Copy)]
enum Stage {
    /// Its user has not called `MPI_Grequest_complete` yet.
    Running,
    /// Completed by its user; `query_fn` is due.
    Completed,
    /// `query_fn` runs, or is queued to.
    Querying,
    /// `query_fn`'s status, for the core request to finish with.
    Answered(Status),
    /// The core request finished with that status.
    Finished,
}

static NEXT_SERIAL: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// `free_fn`s of generalized requests this thread's call released, with their
    /// `extra_state`: run by [`then_free`] once the call let the runtime go.
    static FREES: RefCell<Vec<(FreeFn, usize)>> = const { RefCell::new(Vec::new()) };
}

/// How many `free_fn`s wait in some thread's [`FREES`]: while none do (nearly always), a
/// call's way out costs one load.
static FREES_QUEUED: AtomicUsize = AtomicUsize::new(0);

enum Composed {
    Compound(Compound),
    Generalized(Generalized),
    Idup(Box<IdupEntry>),
}

/// An `MPI_Comm_idup` in progress ([`start_idup`]); the progress engine drives its
/// agreement (`rt.idups`).
struct IdupEntry {
    parent: CommId,
    /// Where the new handle goes (the caller's `MPI_Comm *`).
    newcomm: usize,
    stage: IdupStage,
}

enum IdupStage {
    Agreeing,
    /// The members agreed; the attribute copy (user callbacks) is queued to run outside
    /// the runtime.
    Copying,
    /// Copied: the status to finish with.
    Copied(Status),
    Finished,
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
        Composed::Generalized(g) => match g.stage {
            Stage::Completed => {
                // Completed while this call waited: its query_fn runs once the runtime
                // is let go, and a later round finishes the request.
                g.stage = Stage::Querying;
                let (slot, serial) = (id.index, g.serial);
                rt.defer(Box::new(move || answer(slot, Some(serial))));
            }
            Stage::Answered(status) => {
                g.stage = Stage::Finished;
                finish(rt, id, status);
            }
            Stage::Running | Stage::Querying | Stage::Finished => {}
        },
        Composed::Idup(e) => match e.stage {
            IdupStage::Agreeing => match rt.idups.outcome(id) {
                None => {}
                Some(Ok(new)) => {
                    e.stage = IdupStage::Copying;
                    let (slot, parent, newcomm) = (id.index, e.parent, e.newcomm);
                    rt.defer(Box::new(move || adopt_idup(slot, parent, new, newcomm)));
                }
                Some(Err(err)) => {
                    e.stage = IdupStage::Finished;
                    finish(rt, id, failed(&err));
                }
            },
            IdupStage::Copied(status) => {
                e.stage = IdupStage::Finished;
                finish(rt, id, status);
            }
            IdupStage::Copying | IdupStage::Finished => {}
        },
    }
}

/// A request over the nonblocking duplication `agreement` of `parent`, which writes the
/// new handle to `*newcomm` when it completes.
pub fn start_idup(rt: &mut Runtime, agreement: Idup, parent: CommId, newcomm: *mut usize) -> usize {
    let id = pending_request(rt);
    rt.idups.launch(id, agreement);
    let entry = IdupEntry {
        parent,
        newcomm: newcomm as usize,
        stage: IdupStage::Agreeing,
    };
    register(id.index, Composed::Idup(Box::new(entry)));
    handle::encode(Kind::Request, id.index)
}

/// The end of an idup whose members agreed on `new`, run outside the runtime (copy
/// callbacks may call MPI): the attributes, the handle, then the status to finish with.
fn adopt_idup(slot: u32, parent: CommId, new: CommId, newcomm: usize) {
    let f = "MPI_Comm_idup";
    let status = match crate::comm_create::adopt(f, parent, new, newcomm as *mut usize) {
        Ok(()) => Status::default(),
        Err(e) => failed(&e),
    };
    if let Some(Composed::Idup(e)) = table().as_mut().and_then(|t| t.get_mut(&slot)) {
        e.stage = IdupStage::Copied(status);
    }
}

/// The status of a composed operation that failed with `e` (its class is what the
/// completing call reports).
fn failed(e: &MpiError) -> Status {
    Status {
        error: e.code.unwrap_or(e.class.code()),
        ..Status::default()
    }
}

/// Runs the `query_fn` of every generalized request among `hs` its user has completed:
/// called by Wait and Test before they take the runtime. (Waitany and Testany ask every
/// completed one; those they do not complete this time keep their status for the call
/// that does.)
pub fn answer_queries(hs: &[usize]) {
    if nothing_composed() {
        return;
    }
    for &h in hs {
        if let Some(slot) = handle::decode(Kind::Request, h) {
            answer(slot, None);
        }
    }
}

/// Runs the `query_fn` of the generalized request in `slot` if it is due (`queued`:
/// the serial of the request that queued it) and keeps the status it fills.
fn answer(slot: u32, queued: Option<u64>) {
    let (query, extra_state, serial) = {
        let mut guard = table();
        let Some(Composed::Generalized(g)) = guard.as_mut().and_then(|t| t.get_mut(&slot)) else {
            return;
        };
        let due = match queued {
            None => matches!(g.stage, Stage::Completed),
            Some(serial) => g.serial == serial && matches!(g.stage, Stage::Querying),
        };
        if !due {
            return;
        }
        g.stage = Stage::Querying;
        (g.query, g.extra_state, g.serial)
    };
    let status = run_query(query, extra_state);
    if let Some(Composed::Generalized(g)) = table().as_mut().and_then(|t| t.get_mut(&slot)) {
        if g.serial == serial {
            g.stage = Stage::Answered(status);
        }
    }
}

/// The status a generalized request's `query_fn` fills, with the code it returns as the
/// error (as Open MPI does): the Wait or Test that completes the request returns it.
fn run_query(query: Option<QueryFn>, extra_state: usize) -> Status {
    let mut s = MpiStatus::from_core(&Status::default());
    if let Some(query) = query {
        s.error = query(extra_state as *mut c_void, &mut s);
    }
    Status {
        source: s.source,
        tag: s.tag,
        error: s.error,
        bytes: s.bytes(),
        cancelled: s.cancelled(),
    }
}

/// `MPI_Request_get_status` on a generalized request (`None` for any other): whether
/// its user completed it, with the status its `query_fn` gives now. The standard calls
/// `query_fn` on every such call, and again in the Wait or Test that completes it, so
/// the request's stage does not change.
pub fn query_now(h: usize) -> Option<Option<Status>> {
    if nothing_composed() {
        return None;
    }
    let slot = handle::decode(Kind::Request, h)?;
    let (query, extra_state, complete) = match table().as_ref()?.get(&slot)? {
        Composed::Generalized(g) => (g.query, g.extra_state, !matches!(g.stage, Stage::Running)),
        Composed::Compound(_) | Composed::Idup(_) => return None,
    };
    Some(complete.then(|| run_query(query, extra_state)))
}

/// Forgets a composed request whose handle was freed; a generalized request's `free_fn`
/// is queued for [`then_free`].
pub fn release(h: usize) {
    if nothing_composed() {
        return;
    }
    let Some(slot) = handle::decode(Kind::Request, h) else {
        return;
    };
    let entry = table().as_mut().and_then(|t| t.remove(&slot));
    if let Some(Composed::Generalized(Generalized {
        free: Some(free),
        extra_state,
        ..
    })) = entry
    {
        FREES.with(|q| q.borrow_mut().push((free, extra_state)));
        FREES_QUEUED.fetch_add(1, Ordering::Release);
    }
}

/// Runs `body`, a call that may release generalized requests, then their `free_fn`s
/// (after `body` let the runtime go). A `free_fn`'s failure is the call's error unless
/// `body` failed first.
pub fn then_free<R>(f: &str, body: impl FnOnce() -> MpiResult<R>) -> MpiResult<R> {
    let r = body();
    if FREES_QUEUED.load(Ordering::Acquire) == 0 {
        return r;
    }
    let due = FREES.with(|q| std::mem::take(&mut *q.borrow_mut()));
    FREES_QUEUED.fetch_sub(due.len(), Ordering::Release);
    let mut failed = None;
    for (free, extra_state) in due {
        let code = free(extra_state as *mut c_void);
        if code != MPI_SUCCESS && failed.is_none() {
            failed = Some(error::callback_failed(
                f,
                "the generalized request's free_fn",
                code,
            ));
        }
    }
    match failed {
        Some(e) if r.is_ok() => Err(e),
        _ => r,
    }
}

/// A generalized request's `cancel_fn`, to call once `MPI_Cancel` let the runtime go.
pub struct CancelCall {
    cancel: Option<CancelFn>,
    extra_state: usize,
    complete: bool,
}

impl CancelCall {
    /// The `cancel_fn`'s error code (0 without one).
    pub fn run(self) -> c_int {
        self.cancel.map_or(0, |f| {
            f(self.extra_state as *mut c_void, self.complete as c_int)
        })
    }
}

/// `MPI_Cancel` on a generalized request: its `cancel_fn`, told whether its user
/// completed it. `None` for any other request.
pub fn cancel(h: usize) -> Option<CancelCall> {
    let slot = handle::decode(Kind::Request, h)?;
    let guard = table();
    let Some(Composed::Generalized(g)) = guard.as_ref()?.get(&slot) else {
        return None;
    };
    Some(CancelCall {
        cancel: g.cancel,
        extra_state: g.extra_state,
        complete: !matches!(g.stage, Stage::Running),
    })
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
            required(f, "request", request)?;
            let id = runtime::with(f, |rt| Ok(pending_request(rt)))?;
            register(id.index, Composed::Generalized(Generalized {
                query: query_fn,
                free: free_fn,
                cancel: cancel_fn,
                extra_state: extra_state as usize,
                stage: Stage::Running,
                serial: NEXT_SERIAL.fetch_add(1, Ordering::Relaxed),
            }));
            out(f, "request", request, handle::encode(Kind::Request, id.index))
        })
    }

    fn MPI_Grequest_complete / PMPI_Grequest_complete(request: usize) -> c_int {
        let f = "MPI_Grequest_complete";
        call(Scope::Process, || then_free(f, || {
            runtime::with(f, |rt| {
                let id = request_id(rt, f, request)?;
                let mut guard = table();
                let Some(Composed::Generalized(g)) = guard.as_mut().and_then(|t| t.get_mut(&id.index)) else {
                    return Err(MpiError::arg(ErrorClass::Request, f, "request", handle::describe(request), "not a generalized request (MPI_Grequest_start makes them)"));
                };
                if !matches!(g.stage, Stage::Running) {
                    return Err(MpiError::arg(ErrorClass::Request, f, "request", handle::describe(request), "already completed"));
                }
                g.stage = Stage::Completed;
                drop(guard);
                if rt.st.requests.get(id).unwrap().freed {
                    // MPI_Request_free came first: nobody will wait for it.
                    rt.st.requests.discard(id);
                    release(request);
                }
                Ok(())
            })
        }))
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
pub fn free(rt: &mut Runtime, f: &str, h: usize) -> MpiResult<()> {
    let id = request_id(rt, f, h)?;
    /// What freeing the entry does (decided under the table's lock, done after it).
    enum Freeing {
        /// A generalized request its user has not completed: `MPI_Grequest_complete`
        /// releases it.
        Later,
        /// A generalized request its user completed: released now (only Wait, Test and
        /// Request_get_status ask `query_fn`).
        Now,
        /// An idup still agreeing: its members wait for this process.
        Refused,
        /// A compound, or a finished idup.
        AsCompound,
    }
    let freeing = match table().as_ref().and_then(|t| t.get(&id.index)) {
        Some(Composed::Generalized(g)) if matches!(g.stage, Stage::Running) => Freeing::Later,
        Some(Composed::Generalized(_)) => Freeing::Now,
        Some(Composed::Idup(e)) if !matches!(e.stage, IdupStage::Finished) => Freeing::Refused,
        _ => Freeing::AsCompound,
    };
    match freeing {
        Freeing::Later => {
            rt.st.requests.get_mut(id).unwrap().freed = true;
            return Ok(());
        }
        Freeing::Now => {
            rt.st.requests.discard(id);
            release(h);
            return Ok(());
        }
        Freeing::Refused => {
            return Err(MpiError::arg(
                ErrorClass::Request,
                f,
                "request",
                handle::describe(h),
                "an MPI_Comm_idup in progress cannot be freed (its members wait for this process): wait for it",
            ));
        }
        Freeing::AsCompound => {}
    }
    settle(rt, h);
    if rt.st.requests.get(id).unwrap().complete {
        rt.st.requests.discard(id);
        release(h);
        return Ok(());
    }
    let running = table().as_mut().and_then(|t| t.remove(&id.index));
    let Some(Composed::Compound(c)) = running else {
        return Ok(());
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
    Ok(())
}
