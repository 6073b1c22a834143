//! Synchronisation: fence, flush, passive-target locks and post-start-complete-wait.
//! Every wait runs the progress engine, so this process keeps serving its own windows'
//! requests while it waits.

use super::wire::{Head, Kind};
use super::{
    member, next_reply_tag, note_pending, reap, send_request, windows, with_win, Pending, WinId,
    Window,
};
use super::{TAG_COMPLETE, TAG_POST};
use crate::comm::Group;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::request::{ReqId, SendMode, PROC_NULL};
use crate::runtime::{self, Runtime};
use crate::userbuf;
use crossmpi_datatype::op::Op;

/// Post-start-complete-wait state of one window.
#[derive(Default)]
pub(super) struct Epoch {
    /// Targets of the access epoch `MPI_Win_start` opened.
    access: Option<Vec<i32>>,
    /// Receives of the origins' completion messages, from `MPI_Win_post`.
    exposure: Option<Vec<ReqId>>,
    /// Targets locked with `MPI_MODE_NOCHECK` (no lock taken, so none to release), and
    /// whether `MPI_Win_lock_all` was.
    unchecked: Vec<i32>,
    unchecked_all: bool,
}

fn check_rank(function: &str, w: &Window, rank: i32) -> MpiResult<()> {
    if rank != PROC_NULL {
        member(function, "rank", w.remote.len(), rank)?;
    }
    Ok(())
}

/// Waits until the operations this process started (to `target`, or to all) are done.
pub fn flush(function: &str, win: WinId, target: Option<i32>) -> MpiResult<()> {
    let outstanding = |rt: &mut Runtime, w: &mut Window| {
        reap(rt, w);
        w.pending
            .iter()
            .any(|p| target.is_none_or(|t| p.target == t))
    };
    // Most flushes find nothing outstanding (direct copies, or replies already in):
    // one lock round, no wait loop.
    let busy = with_win(function, win, |rt, w| {
        if let Some(t) = target {
            check_rank(function, w, t)?;
        }
        Ok(outstanding(rt, w))
    })?;
    if !busy {
        return Ok(());
    }
    runtime::wait_for(function, |rt| {
        let mut all = windows();
        // A window freed by another thread has nothing outstanding any more.
        let Some(w) = all.get_mut(win) else {
            return Some(());
        };
        (!outstanding(rt, w)).then_some(())
    })
}

/// `MPI_Win_fence`: completes every operation of the epoch everywhere.
pub fn fence(function: &str, win: WinId, assert: i32) -> MpiResult<()> {
    flush(function, win, None)?;
    // MPI_MODE_NOPRECEDE: no operation precedes this fence, so none needs completing
    // at the targets; the barrier still separates this epoch from the next.
    let _ = assert;
    let comm = with_win(function, win, |_, w| Ok(w.comm))?;
    crate::coll::barrier(function, comm)
}

/// Sends a lock request (or release) to each of `targets`, and waits for the grants of
/// those this process accesses by load and store or by direct copies ([`loads_from`]).
/// The others' grants are waited for by the next flush: the target holds the
/// operations that follow the request until it grants it, so the lock costs no round
/// trip of its own.
fn lock_request(
    function: &str,
    win: WinId,
    targets: &[i32],
    kind: Kind,
    exclusive: bool,
) -> MpiResult<()> {
    let awaited = with_win(function, win, |rt, w| {
        let mut replies = Vec::new();
        for &t in targets {
            check_rank(function, w, t)?;
            if t == PROC_NULL {
                continue;
            }
            let head = Head {
                kind,
                op: Op::NoOp,
                basic: None,
                exclusive,
                reply_tag: next_reply_tag(w),
                offset: 0,
                span: 0,
                len: 0,
            };
            let reply = (kind == Kind::Lock)
                .then(|| rt.irecv(function, w.comm, userbuf::bytes(0, 0), t, head.reply_tag))
                .transpose()?;
            let msg = head.encode(&[]);
            let send = send_request(rt, w, function, t, &msg)?;
            w.pending.push_back(Pending {
                target: t,
                send,
                data: None,
                reply,
                _msg: msg,
                user: None,
                fetch: None,
            });
            if reply.is_some() && loads_from(w, t) {
                replies.push(t);
            }
        }
        note_pending(w);
        Ok(replies)
    })?;
    for t in awaited {
        flush(function, win, Some(t))?;
    }
    Ok(())
}

/// Whether this process reaches `target`'s window memory other than by requests to
/// it: its own (load and store after `MPI_Win_lock` returns, which the standard allows)
/// or mapped (direct copies, `direct.rs`). A lock on such a target is granted before
/// `MPI_Win_lock` returns.
fn loads_from(w: &Window, target: i32) -> bool {
    target == w.rank as i32
        || w.direct
            .as_ref()
            .is_some_and(|d| d.bases[target as usize].is_some())
}

fn lock_type(function: &str, lock_type: i32) -> MpiResult<bool> {
    match lock_type {
        LOCK_EXCLUSIVE => Ok(true),
        LOCK_SHARED => Ok(false),
        v => Err(MpiError::arg(
            ErrorClass::LockType,
            function,
            "lock_type",
            v,
            "use MPI_LOCK_EXCLUSIVE or MPI_LOCK_SHARED",
        )),
    }
}

/// `MPI_LOCK_EXCLUSIVE` and `MPI_LOCK_SHARED` (MPI-5.0 ABI values).
pub const LOCK_EXCLUSIVE: i32 = 301;
pub const LOCK_SHARED: i32 = 302;

/// `MPI_Win_lock`: returns once the target granted the lock. With `nocheck`
/// (`MPI_MODE_NOCHECK`: the program guarantees no conflicting lock is held or asked for
/// during the epoch) no lock is taken, which saves a round trip on lock and a message on
/// unlock.
pub fn lock(function: &str, win: WinId, lock: i32, target: i32, nocheck: bool) -> MpiResult<()> {
    let exclusive = lock_type(function, lock)?;
    if nocheck {
        return with_win(function, win, |_, w| {
            check_rank(function, w, target)?;
            w.epoch.unchecked.push(target);
            Ok(())
        });
    }
    lock_request(function, win, &[target], Kind::Lock, exclusive)
}

/// `MPI_Win_unlock`: completes the operations to `target`, then releases its lock.
pub fn unlock(function: &str, win: WinId, target: i32) -> MpiResult<()> {
    flush(function, win, Some(target))?;
    let unchecked = with_win(function, win, |_, w| {
        let i = w.epoch.unchecked.iter().position(|&t| t == target);
        Ok(i.map(|i| w.epoch.unchecked.swap_remove(i)).is_some())
    })?;
    if unchecked {
        return Ok(());
    }
    lock_request(function, win, &[target], Kind::Unlock, false)
}

fn everyone(function: &str, win: WinId) -> MpiResult<Vec<i32>> {
    with_win(function, win, |_, w| {
        Ok((0..w.remote.len() as i32).collect())
    })
}

/// `MPI_Win_lock_all`: a shared lock on every member (none with `nocheck`, as for
/// [`lock`]).
pub fn lock_all(function: &str, win: WinId, nocheck: bool) -> MpiResult<()> {
    if nocheck {
        return with_win(function, win, |_, w| {
            w.epoch.unchecked_all = true;
            Ok(())
        });
    }
    let all = everyone(function, win)?;
    lock_request(function, win, &all, Kind::Lock, false)
}

/// `MPI_Win_unlock_all`.
pub fn unlock_all(function: &str, win: WinId) -> MpiResult<()> {
    flush(function, win, None)?;
    let unchecked = with_win(function, win, |_, w| {
        Ok(std::mem::take(&mut w.epoch.unchecked_all))
    })?;
    if unchecked {
        return Ok(());
    }
    let all = everyone(function, win)?;
    lock_request(function, win, &all, Kind::Unlock, false)
}

/// The window ranks of the members of `group` (which must all belong to the window).
fn ranks_of(function: &str, w: &Window, group: &Group) -> MpiResult<Vec<i32>> {
    group
        .members
        .iter()
        .map(|&world| {
            w.group.rank_of(world).map(|r| r as i32).ok_or_else(|| {
                MpiError::arg(
                    ErrorClass::Group,
                    function,
                    "group",
                    format!("world rank {world}"),
                    "every member must belong to the window's group",
                )
            })
        })
        .collect()
}

fn sync_error(function: &str, why: &str) -> MpiError {
    MpiError::context(ErrorClass::RmaSync, function, why)
}

/// Sends an empty message with `tag` to each of `ranks` and waits until they left.
fn notify(function: &str, win: WinId, ranks: &[i32], tag: i32) -> MpiResult<()> {
    let sends = with_win(function, win, |rt, w| {
        ranks
            .iter()
            .map(|&r| {
                rt.isend(
                    function,
                    w.comm,
                    userbuf::bytes(0, 0),
                    r,
                    tag,
                    SendMode::Standard,
                )
            })
            .collect::<MpiResult<Vec<_>>>()
    })?;
    wait_all(function, sends)
}

fn wait_all(function: &str, mut reqs: Vec<ReqId>) -> MpiResult<()> {
    runtime::wait_for(function, |rt| {
        reqs.retain(|&r| rt.take_if_done(r).is_none());
        reqs.is_empty().then_some(())
    })
}

/// The two sides of post-start-complete-wait.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    /// `MPI_Win_post`: receives the origins' completion messages.
    Exposure,
    /// `MPI_Win_start`: receives the targets' post messages.
    Access,
}

/// Opens one side of an epoch over the members of `group`: posts an empty receive
/// from each (of the message the other side sends) and records the epoch. Returns the
/// members' window ranks and the receives.
fn open_epoch(
    function: &str,
    win: WinId,
    group: &Group,
    side: Side,
) -> MpiResult<(Vec<i32>, Vec<ReqId>)> {
    with_win(function, win, |rt, w| {
        let (open, tag, why) = match side {
            Side::Exposure => (
                w.epoch.exposure.is_some(),
                TAG_COMPLETE,
                "an exposure epoch is already open (MPI_Win_post without MPI_Win_wait)",
            ),
            Side::Access => (
                w.epoch.access.is_some(),
                TAG_POST,
                "an access epoch is already open (MPI_Win_start without MPI_Win_complete)",
            ),
        };
        if open {
            return Err(sync_error(function, why));
        }
        let ranks = ranks_of(function, w, group)?;
        let recvs = ranks
            .iter()
            .map(|&r| rt.irecv(function, w.comm, userbuf::bytes(0, 0), r, tag))
            .collect::<MpiResult<Vec<_>>>()?;
        match side {
            Side::Exposure => w.epoch.exposure = Some(recvs.clone()),
            Side::Access => w.epoch.access = Some(ranks.clone()),
        }
        Ok((ranks, recvs))
    })
}

/// `MPI_Win_post`: exposes the window to the origins in `group`.
pub fn post(function: &str, win: WinId, group: &Group) -> MpiResult<()> {
    let (origins, _) = open_epoch(function, win, group, Side::Exposure)?;
    notify(function, win, &origins, TAG_POST)
}

/// `MPI_Win_start`: waits until every target in `group` posted.
pub fn start_access(function: &str, win: WinId, group: &Group) -> MpiResult<()> {
    let (_, posts) = open_epoch(function, win, group, Side::Access)?;
    wait_all(function, posts)
}

/// `MPI_Win_complete`: completes the epoch's operations and tells the targets.
pub fn complete(function: &str, win: WinId) -> MpiResult<()> {
    let targets = with_win(function, win, |_, w| {
        w.epoch.access.take().ok_or_else(|| {
            sync_error(
                function,
                "no access epoch is open (call MPI_Win_start first)",
            )
        })
    })?;
    flush(function, win, None)?;
    notify(function, win, &targets, TAG_COMPLETE)
}

/// `MPI_Win_wait` (`blocking`) or `MPI_Win_test`: whether every origin completed.
pub fn wait_exposure(function: &str, win: WinId, blocking: bool) -> MpiResult<bool> {
    let done = |rt: &mut Runtime| -> Option<MpiResult<bool>> {
        let mut all = windows();
        let w = match all.get_mut(win) {
            Some(w) => w,
            None => return Some(Err(super::bad_window(function, win))),
        };
        let Some(reqs) = w.epoch.exposure.as_mut() else {
            return Some(Err(sync_error(
                function,
                "no exposure epoch is open (call MPI_Win_post first)",
            )));
        };
        reqs.retain(|&r| rt.take_if_done(r).is_none());
        if reqs.is_empty() {
            w.epoch.exposure = None;
            return Some(Ok(true));
        }
        None
    };
    if blocking {
        runtime::wait_for(function, done)?
    } else {
        runtime::with(function, |rt| {
            rt.poll();
            done(rt).unwrap_or(Ok(false))
        })
    }
}
