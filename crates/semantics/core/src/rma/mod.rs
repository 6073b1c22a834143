//! One-sided communication (MPI windows) as active messages over the point-to-point
//! protocols: a window is a private duplicate of its communicator plus every member's
//! (base, size, displacement unit). Each operation is one request message to the target
//! ([`wire`]), answered by one reply (the data of a get, or an empty acknowledgement once
//! a put or accumulate is applied) for which the origin posted a receive beforehand, so
//! an operation is complete exactly when its reply has arrived. The target applies
//! requests from the progress engine ([`progress`], called by `Runtime::progress`), so
//! passive-target operations advance whenever the target is inside any MPI call (and,
//! with [`progress_thread`], while it computes).
//! docs/rma.md describes the design and its limits.

mod atomic;
mod direct;
mod layout;
mod progress_thread;
mod results;
mod shared;
mod sync;
mod target;
pub mod wire;

use crate::comm::{CommId, Group};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::reduce::ReduceOp;
use crate::request::{ReqId, ReqKind, Request, SendMode, PROC_NULL};
use crate::runtime::{self, Runtime};
use crate::slab::{Id, Slab};
use crate::userbuf::{self, UserBuf};
use crossmpi_datatype::op::Op;
use crossmpi_datatype::Datatype;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use wire::{Head, Kind};

pub use direct::{direct_view, try_direct, Contiguous, Direct};
pub use shared::{allocate, allocate_shared, shared_query};
pub use sync::*;

/// Whether this process runs the one-sided progress thread (`CROSSMPI_RMA_PROGRESS_THREAD`).
pub(crate) fn progress_thread_requested() -> bool {
    progress_thread::requested()
}

pub type WinId = Id;

/// Tags on a window's private context: requests to the target, the synchronisation
/// messages of post-start-complete-wait, and from `FIRST_REPLY` the replies, each
/// operation its own.
const TAG_REQ: i32 = 0;
const TAG_POST: i32 = 1;
const TAG_COMPLETE: i32 = 2;
const TAG_DATA: i32 = 3;
const FIRST_REPLY: i32 = 16;

/// How a window's memory came to be (`MPI_WIN_CREATE_FLAVOR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    Create,
    Allocate,
    Dynamic,
    Shared,
}

/// This process's window memory as its target sees it.
pub(crate) enum Memory {
    Fixed {
        base: usize,
        size: usize,
    },
    /// Attached regions (address, size); targets address them absolutely.
    Dynamic {
        regions: Vec<(usize, usize)>,
    },
}

/// A member's window as origins see it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Remote {
    pub base: u64,
    pub size: u64,
    pub disp_unit: u64,
}

/// An operation started here whose reply (or request send) has not finished.
struct Pending {
    target: i32,
    send: ReqId,
    /// The data message of a streamed put.
    data: Option<ReqId>,
    reply: Option<ReqId>,
    _msg: Vec<u8>,
    /// The request of an `MPI_R*` call, completed with the operation.
    user: Option<ReqId>,
    fetch: Option<Fetch>,
}

/// The result buffer of an outstanding fetching operation ([`results`]).
struct Fetch {
    key: results::Key,
    /// The reply's staging bytes and the user's result buffer, when at the start the
    /// result overlapped an outstanding operation's.
    staged: Option<(Vec<u8>, UserBuf)>,
}

pub struct Window {
    pub comm: CommId,
    context: u64,
    pub rank: usize,
    pub group: Arc<Group>,
    pub flavor: Flavor,
    pub remote: Vec<Remote>,
    memory: Memory,
    pending: VecDeque<Pending>,
    /// Progress calls since `pending` was last searched whole ([`sweep`]).
    pending_calls: usize,
    /// Result buffers of the outstanding fetching operations.
    results: results::Results,
    /// Operations started since this origin last ran progress ([`start`]).
    since_progress: u64,
    next_reply: i32,
    incoming: VecDeque<target::Incoming>,
    landing: Vec<target::Landing>,
    replies: VecDeque<(ReqId, Vec<u8>)>,
    replies_calls: usize,
    lock: target::LockState,
    epoch: sync::Epoch,
    /// The node-wide segment of a window made by `MPI_Win_allocate(_shared)`.
    shared: Option<Arc<shared::Segment>>,
    /// The members whose window memory this process maps (segment windows).
    direct: Option<Arc<Direct>>,
}

/// Publishes how many operations are outstanding to the direct view.
fn note_pending(w: &Window) {
    if let Some(d) = &w.direct {
        d.outstanding.store(w.pending.len(), Ordering::Release);
    }
}

static WINDOWS: Mutex<Slab<Window>> = Mutex::new(Slab::new_const());
/// How many windows exist (so progress skips the registry when there are none).
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// The window registry. Taken only while the runtime lock is held (inside
/// `runtime::with`/`wait_for`), never the other way round.
fn windows() -> MutexGuard<'static, Slab<Window>> {
    WINDOWS.lock().unwrap_or_else(|p| p.into_inner())
}

fn bad_window(function: &str, win: WinId) -> MpiError {
    MpiError::arg(
        ErrorClass::Win,
        function,
        "win",
        win.index,
        "freed or never created",
    )
}

/// Runs `f` on a window (runtime lock held).
fn with_win<R>(
    function: &str,
    win: WinId,
    f: impl FnOnce(&mut Runtime, &mut Window) -> MpiResult<R>,
) -> MpiResult<R> {
    runtime::with(function, |rt| {
        let mut all = windows();
        let w = all.get_mut(win).ok_or_else(|| bad_window(function, win))?;
        f(rt, w)
    })
}

/// The window a slot index names (for the ABI's handles).
pub fn by_index(index: u32) -> Option<WinId> {
    windows().by_index(index).map(|(id, _)| id)
}

/// What the ABI reports about a window: (flavor, this rank's memory, group).
pub fn describe(function: &str, win: WinId) -> MpiResult<(Flavor, Remote, Arc<Group>, CommId)> {
    with_win(function, win, |_, w| {
        Ok((w.flavor, w.remote[w.rank], w.group.clone(), w.comm))
    })
}

/// Serves every window's incoming requests; called by `Runtime::progress`.
pub fn progress(rt: &mut Runtime) -> bool {
    // Every wait loop of the library polls here: without windows, one atomic load.
    if LIVE.load(Ordering::Acquire) == 0 {
        return false;
    }
    let mut all = windows();
    let mut any = false;
    let ids: Vec<WinId> = all.iter().map(|(id, _)| id).collect();
    for id in ids {
        if let Some(w) = all.get_mut(id) {
            any |= target::service(rt, w);
            any |= reap(rt, w);
        }
    }
    any
}

/// Removes the entries of `list` that `finished` says are done (it releases them when it
/// says so; its flag tells whether every entry before this one is gone). A pass over
/// every entry on every progress call made a stream of thousands of outstanding
/// operations quadratic (MPICH's rma/manyget, 100,000 gets of 128 KiB:
/// 22 s, against 4.5 for Open MPI): so the finished entries at the front go at once
/// (operations to one process finish in order), and a pass over all of them, for those
/// that finished out of order (to several processes), runs once per `len / 16` calls,
/// which keeps the cost per call constant. `calls` counts the calls since the last pass.
fn sweep<T>(
    list: &mut VecDeque<T>,
    calls: &mut usize,
    mut finished: impl FnMut(&T, bool) -> bool,
) -> bool {
    let before = list.len();
    while list.front().is_some_and(|x| finished(x, true)) {
        list.pop_front();
    }
    *calls += 1;
    if *calls * 16 >= list.len() {
        *calls = 0;
        list.retain(|x| !finished(x, false));
    }
    list.len() != before
}

/// Releases finished operations; true if any finished.
fn reap(rt: &mut Runtime, w: &mut Window) -> bool {
    let results = &mut w.results;
    let any = sweep(&mut w.pending, &mut w.pending_calls, |p, first| {
        let staged = p.fetch.as_ref().and_then(|f| f.staged.as_ref());
        let done = rt.st.is_done(p.send)
            && p.reply.is_none_or(|r| rt.st.is_done(r))
            && p.data.is_none_or(|r| rt.st.is_done(r))
            // A staged result is copied out after every earlier operation's.
            && (first || staged.is_none());
        if done {
            if let Some((bytes, user)) = staged {
                user.unpack_from(0, bytes);
            }
            if let Some(f) = &p.fetch {
                results.remove(f.key);
            }
            for r in [Some(p.send), p.reply, p.data].into_iter().flatten() {
                rt.st.requests.discard(r);
            }
            if let Some(r) = p.user.and_then(|u| rt.st.requests.get_mut(u)) {
                r.complete = true;
            }
        }
        done
    });
    note_pending(w);
    any
}

fn check_disp_unit(function: &str, disp_unit: i64) -> MpiResult<u64> {
    u64::try_from(disp_unit)
        .ok()
        .filter(|&u| u > 0)
        .ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Disp,
                function,
                "disp_unit",
                disp_unit,
                "must be positive",
            )
        })
}

/// Collective: makes a window over `size` bytes at `base` on every member of `comm`.
pub fn create(
    function: &str,
    comm: CommId,
    base: usize,
    size: u64,
    disp_unit: i64,
    flavor: Flavor,
) -> MpiResult<WinId> {
    let disp_unit = check_disp_unit(function, disp_unit)?;
    let memory = match flavor {
        Flavor::Dynamic => Memory::Dynamic {
            regions: Vec::new(),
        },
        _ => Memory::Fixed {
            base,
            size: size as usize,
        },
    };
    install(
        function,
        comm,
        Remote {
            base: base as u64,
            size,
            disp_unit,
        },
        memory,
        flavor,
    )
}

fn install(
    function: &str,
    comm: CommId,
    mine: Remote,
    memory: Memory,
    flavor: Flavor,
) -> MpiResult<WinId> {
    let inter = runtime::with(function, |rt| Ok(rt.comm(function, comm)?.is_inter()))?;
    if inter {
        return Err(MpiError::arg(
            ErrorClass::Comm,
            function,
            "comm",
            comm.index,
            "windows need an intracommunicator",
        ));
    }
    progress_thread::start_once();
    let private = crate::comm_ops::dup(function, comm)?;
    let mut bytes = Vec::with_capacity(24);
    for v in [mine.base, mine.size, mine.disp_unit] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    let all = crate::coll::allgather_bytes(function, private, &bytes)?;
    let word = |b: &[u8], i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap());
    let remote = all
        .chunks_exact(24)
        .map(|b| Remote {
            base: word(b, 0),
            size: word(b, 1),
            disp_unit: word(b, 2),
        })
        .collect();
    runtime::with(function, |rt| {
        let c = rt.comm(function, private)?;
        let w = Window {
            comm: private,
            context: c.context,
            rank: c.rank,
            group: c.group.clone(),
            flavor,
            remote,
            memory,
            pending: VecDeque::new(),
            pending_calls: 0,
            results: Default::default(),
            since_progress: 0,
            next_reply: FIRST_REPLY,
            incoming: VecDeque::new(),
            landing: Vec::new(),
            replies: VecDeque::new(),
            replies_calls: 0,
            lock: Default::default(),
            epoch: Default::default(),
            shared: None,
            direct: None,
        };
        LIVE.fetch_add(1, Ordering::AcqRel);
        Ok(windows().insert(w))
    })
}

/// Collective: completes everything, then releases the window.
pub fn free(function: &str, win: WinId) -> MpiResult<()> {
    flush(function, win, None)?;
    let comm = with_win(function, win, |_, w| Ok(w.comm))?;
    crate::coll::barrier(function, comm)?;
    // Replies to the last requests of others may still be leaving.
    runtime::wait_for(function, |rt| {
        let mut all = windows();
        let w = all.get_mut(win)?;
        target::service(rt, w);
        (w.replies.is_empty() && w.landing.is_empty()).then_some(())
    })?;
    runtime::with(function, |_| {
        if windows().remove(win).is_some() {
            LIVE.fetch_sub(1, Ordering::AcqRel);
        }
        Ok(())
    })?;
    crate::comm_ops::free(function, comm)
}

/// `MPI_Win_attach`/`MPI_Win_detach` on a dynamic window.
pub fn attach(function: &str, win: WinId, base: usize, size: usize, attach: bool) -> MpiResult<()> {
    with_win(function, win, |_, w| {
        let Memory::Dynamic { regions } = &mut w.memory else {
            return Err(MpiError::arg(
                ErrorClass::Win,
                function,
                "win",
                win.index,
                "memory is attached only to windows made by MPI_Win_create_dynamic",
            ));
        };
        if attach {
            regions.push((base, size));
            return Ok(());
        }
        let i = regions.iter().position(|r| r.0 == base).ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Arg,
                function,
                "base",
                format!("{base:#x}"),
                "no memory is attached at this address",
            )
        })?;
        regions.remove(i);
        Ok(())
    })
}

/// One one-sided operation as the origin describes it.
pub struct Access {
    pub kind: Kind,
    /// Origin data (put, accumulates, the new value of compare-and-swap).
    pub origin: Option<UserBuf>,
    /// The value compare-and-swap compares with.
    pub compare: Option<UserBuf>,
    /// Where fetched data goes (get, get-accumulate, fetch-and-op, compare-and-swap).
    pub result: Option<UserBuf>,
    pub target: i32,
    pub disp: i64,
    pub target_count: u64,
    pub target_type: Datatype,
    pub op: Op,
}

/// Checks an accumulate's operator: predefined only (the standard's rule for one-sided).
pub fn accumulate_op(function: &str, op: &ReduceOp) -> MpiResult<Op> {
    match op {
        ReduceOp::Builtin(o) => Ok(*o),
        _ => Err(MpiError::arg(
            ErrorClass::Op,
            function,
            "op",
            "user-defined",
            "one-sided accumulates take predefined operators only",
        )),
    }
}

/// Starts an operation; with `request` it also returns a request completed with it.
pub fn start(function: &str, win: WinId, a: Access, request: bool) -> MpiResult<Option<ReqId>> {
    runtime::with(function, |rt| {
        let (user, poll) = {
            let mut all = windows();
            let w = all.get_mut(win).ok_or_else(|| bad_window(function, win))?;
            let user = issue(function, rt, w, a, request)?;
            w.since_progress += 1;
            let poll = w.since_progress >= progress_every() && !w.pending.is_empty();
            if poll {
                w.since_progress = 0;
            }
            (user, poll)
        };
        // An origin issuing a stream of operations without another MPI call takes in,
        // now and then, what its targets sent back: eager credit (else the stream turns
        // to rendezvous once it has used it up, a round trip per request) and replies
        // (else the outstanding operations pile up). The window registry is let go
        // first: progress serves the windows too.
        if poll {
            rt.progress();
        }
        Ok(user)
    })
}

/// How many operations an origin starts between two polls of the progress engine
/// (`CROSSMPI_RMA_PROGRESS_EVERY`, see [`start`]).
fn progress_every() -> u64 {
    static EVERY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *EVERY.get_or_init(|| progress_thread::env_u64("CROSSMPI_RMA_PROGRESS_EVERY", 16).max(1))
}

/// Starts operation `a` on window `w` (the runtime and the window registry held).
fn issue(
    function: &str,
    rt: &mut Runtime,
    w: &mut Window,
    a: Access,
    request: bool,
) -> MpiResult<Option<ReqId>> {
    let user = request.then(|| rt.st.requests.insert(Request::new(ReqKind::Coll)));
    if a.target == PROC_NULL {
        if let Some(u) = user {
            rt.st.requests.get_mut(u).expect("just inserted").complete = true;
        }
        return Ok(user);
    }
    let (head, runs) = describe_access(function, w, &a)?;
    let result_range = a.result.as_ref().map(UserBuf::address_range);
    let result_busy = result_range.as_ref().is_some_and(|r| w.results.overlaps(r));
    let base = w.direct.as_ref().and_then(|d| d.bases[a.target as usize]);
    if let Some(base) = base {
        let idle = w.pending.is_empty();
        if direct::copy_direct(base, &head, &runs, &a, idle, !result_busy) {
            if let Some(u) = user {
                rt.st.requests.get_mut(u).expect("just inserted").complete = true;
            }
            return Ok(user);
        }
    }
    let mut head = head;
    if head.kind == Kind::Put && head.len > inline_max() && runs.len() <= 1 {
        head.kind = Kind::PutStream;
    }
    let mut msg = head.encode(&runs);
    let data = match head.kind {
        Kind::Get | Kind::PutStream => [&None, &None],
        _ => [&a.origin, &a.compare],
    };
    for b in data.into_iter().flatten() {
        let at = msg.len();
        msg.resize(at + b.bytes() as usize, 0);
        b.pack_into(0, &mut msg[at..]);
    }
    // A result overlapping an outstanding one's lands in staging bytes, copied out
    // in order by `reap`.
    let staged = a
        .result
        .clone()
        .filter(|_| result_busy)
        .map(|user| (vec![0u8; user.bytes() as usize], user));
    let reply = match (&staged, a.result) {
        (Some((bytes, _)), _) => userbuf::bytes(bytes.as_ptr() as usize, bytes.len()),
        (None, Some(r)) => r,
        (None, None) => userbuf::bytes(0, 0),
    };
    let reply = Some(rt.irecv(function, w.comm, reply, a.target, head.reply_tag)?);
    let send = send_request(rt, w, function, a.target, &msg)?;
    let data = match (head.kind, a.origin) {
        (Kind::PutStream, Some(origin)) => Some(rt.isend(
            function,
            w.comm,
            origin,
            a.target,
            TAG_DATA,
            SendMode::Standard,
        )?),
        _ => None,
    };
    let fetch = result_range
        .and_then(|r| w.results.insert(r))
        .map(|key| Fetch { key, staged });
    w.pending.push_back(Pending {
        target: a.target,
        send,
        data,
        reply,
        _msg: msg,
        user,
        fetch,
    });
    note_pending(w);
    Ok(user)
}

fn send_request(
    rt: &mut Runtime,
    w: &Window,
    function: &str,
    target: i32,
    msg: &[u8],
) -> MpiResult<ReqId> {
    let buf = userbuf::bytes(msg.as_ptr() as usize, msg.len());
    rt.isend(function, w.comm, buf, target, TAG_REQ, SendMode::Standard)
}

/// Puts of more bytes than this send their data as a message of its own, received by
/// the target straight into the window (no copy through a staging buffer); smaller ones
/// travel inside the request, one message instead of two.
fn inline_max() -> u64 {
    static MAX: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| progress_thread::env_u64("CROSSMPI_RMA_INLINE", 16384))
}

fn next_reply_tag(w: &mut Window) -> i32 {
    let tag = w.next_reply;
    w.next_reply = if tag >= (1 << 30) {
        FIRST_REPLY
    } else {
        tag + 1
    };
    tag
}

/// A member rank of a window of `n` members (`MPI_PROC_NULL` is the caller's affair).
fn member(function: &str, arg: &str, n: usize, rank: i32) -> MpiResult<usize> {
    usize::try_from(rank)
        .ok()
        .filter(|&r| r < n)
        .ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Rank,
                function,
                arg,
                rank,
                format!(
                    "window group size {n}; valid ranks are 0..{} or MPI_PROC_NULL",
                    n as i64 - 1
                ),
            )
        })
}

/// Checks an access against the target's window and builds its head.
fn describe_access(
    function: &str,
    w: &mut Window,
    a: &Access,
) -> MpiResult<(Head, Vec<layout::Run>)> {
    let (mut head, runs) = geometry(function, &w.remote, w.flavor, a)?;
    head.reply_tag = next_reply_tag(w);
    Ok((head, runs))
}

/// Checks an access against the target's window (`remote` of every member) and works
/// out its head (reply tag 0) and target runs.
fn geometry(
    function: &str,
    remote: &[Remote],
    flavor: Flavor,
    a: &Access,
) -> MpiResult<(Head, Vec<layout::Run>)> {
    let target = member(function, "target_rank", remote.len(), a.target)?;
    let t = &a.target_type;
    let (lo, span, runs) = layout::runs(function, t, a.target_count)?;
    let len = t.size() * a.target_count;
    for (arg, b) in [("origin_count", &a.origin), ("result_count", &a.result)] {
        if let Some(b) = b {
            if a.kind != Kind::CompareAndSwap && b.bytes() != len && a.op != Op::NoOp {
                return Err(MpiError::arg(
                    ErrorClass::Size,
                    function,
                    arg,
                    b.bytes(),
                    format!("the target side covers {len} bytes; the type signatures must match"),
                ));
            }
        }
    }
    let r = remote[target];
    let (offset, limit) = if flavor == Flavor::Dynamic {
        (a.disp as i128 + lo as i128, u64::MAX as i128)
    } else {
        (
            a.disp as i128 * r.disp_unit as i128 + lo as i128,
            r.size as i128,
        )
    };
    if offset < 0 || offset + span as i128 > limit {
        return Err(MpiError::arg(
            ErrorClass::RmaRange,
            function,
            "target_disp",
            a.disp,
            format!(
                "bytes [{offset}, {}) lie outside rank {target}'s window of {} bytes",
                offset + span as i128,
                r.size
            ),
        ));
    }
    let basic = match a.kind {
        Kind::Accumulate | Kind::GetAccumulate | Kind::CompareAndSwap => {
            Some(t.uniform_basic().ok_or_else(|| {
                MpiError::arg(
                    ErrorClass::Type,
                    function,
                    "target_datatype",
                    "derived",
                    "accumulates need a datatype made of one predefined type",
                )
            })?)
        }
        _ => None,
    };
    if let Some(b) = basic.filter(|&b| !crossmpi_datatype::op::is_defined(a.op, b)) {
        return Err(MpiError::arg(
            ErrorClass::Op,
            function,
            "op",
            a.op.mpi_name(),
            format!("the standard does not define it on {}", b.mpi_name()),
        ));
    }
    let head = Head {
        kind: a.kind,
        op: a.op,
        basic,
        exclusive: false,
        reply_tag: 0,
        offset: offset as u64,
        span,
        len,
    };
    Ok((head, runs))
}
