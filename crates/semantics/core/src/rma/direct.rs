//! Direct access inside a node: in a segment window (`MPI_Win_allocate(_shared)`) an
//! origin maps the memory of the members of its node, so its puts and gets to them are
//! copies and its accumulates are atomic instructions on the segment ([`atomic`]), with
//! no message and no target involvement. The ABI keeps the [`Direct`] view beside the
//! window handle and calls [`Direct::contiguous`] first, before building any datatype
//! or buffer object: for predefined types that lie dense in memory the whole call is
//! a table lookup, the argument checks, and the copy or atomic update.

use super::atomic::{self, Update};
use super::layout::{self, Run};
use super::shared::Segment;
use super::wire::{Head, Kind};
use super::{geometry, with_win, Access, Flavor, Remote, WinId};
use crate::error::MpiResult;
use crossmpi_datatype::op::{self, Op};
use crossmpi_datatype::Basic;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What an origin needs to reach the members of its node in a segment window, usable
/// without the runtime lock (the ABI keeps it beside the handle).
pub struct Direct {
    /// Per member, its window memory mapped in this process, if it is.
    pub(super) bases: Vec<Option<usize>>,
    pub(super) remote: Vec<Remote>,
    pub(super) flavor: Flavor,
    /// Operations of this process not yet complete (so a flush with none returns at
    /// once, and accumulates are applied here only when none of this process's
    /// message-borne ones could still be on its way); updated under the runtime lock,
    /// read without it.
    pub(super) outstanding: AtomicUsize,
    /// Keeps the mapping alive as long as the view is reachable, also after the
    /// window's own end.
    pub(super) _segment: Arc<Segment>,
}

/// A data-moving call whose origin (and result, compare) buffers and target hold
/// `bytes` dense bytes of predefined types, as the ABI hands it over before building
/// anything: addresses and the target element type.
pub struct Contiguous {
    pub kind: Kind,
    pub target: i32,
    pub disp: isize,
    pub bytes: u64,
    /// The target's element type (the operand type of accumulates).
    pub basic: Basic,
    pub op: Op,
    pub origin: usize,
    pub compare: usize,
    pub result: usize,
}

impl Direct {
    /// Whether `flush` on `target` (or all) has nothing to wait for.
    pub fn idle(&self) -> bool {
        self.outstanding.load(Ordering::Acquire) == 0
    }

    pub fn size(&self) -> usize {
        self.remote.len()
    }

    /// Does `c` if its target is mapped here and it lies inside the target's window:
    /// puts and gets as copies, accumulates as atomic updates when their elements allow
    /// it (`atomic::eligible`) and no earlier accumulate of this process may still be
    /// on its way as a message. False when it needs the general path, which also
    /// reports whatever is wrong with the arguments.
    pub fn contiguous(&self, c: &Contiguous) -> bool {
        let Some((t, base)) = usize::try_from(c.target)
            .ok()
            .and_then(|t| Some((t, self.bases.get(t).copied().flatten()?)))
        else {
            return false;
        };
        let r = self.remote[t];
        let offset = (c.disp as i64)
            .checked_mul(r.disp_unit as i64)
            .filter(|&o| o >= 0 && c.bytes > 0 && (o as u64).checked_add(c.bytes) <= Some(r.size));
        let Some(offset) = offset else {
            return false;
        };
        let at = base + offset as usize;
        let len = c.bytes as usize;
        match c.kind {
            // SAFETY: `at..at + len` lies in the target's part of the mapped segment
            // (checked above against its size); the origin and result buffers hold
            // `len` bytes by the MPI buffer rules (the ABI checked them non-null).
            // `copy` tolerates an origin buffer inside the window.
            Kind::Put => unsafe { std::ptr::copy(c.origin as *const u8, at as *mut u8, len) },
            // An outstanding get into the same result could land after this one: the
            // general path orders them.
            Kind::Get if !self.idle() => return false,
            // SAFETY: as for the put.
            Kind::Get => unsafe { std::ptr::copy(at as *const u8, c.result as *mut u8, len) },
            Kind::Accumulate | Kind::GetAccumulate | Kind::CompareAndSwap => {
                if !self.idle()
                    || !op::is_defined(c.op, c.basic)
                    || !atomic::eligible(c.basic, at, len)
                {
                    return false;
                }
                let bytes = |addr: usize| {
                    // SAFETY: the origin and compare buffers hold `len` bytes (MPI
                    // buffer rules; non-null, checked by the ABI).
                    (addr != 0)
                        .then(|| unsafe { std::slice::from_raw_parts(addr as *const u8, len) })
                };
                let Some(update) = update(c.kind, c.op, bytes(c.origin), bytes(c.compare)) else {
                    return false;
                };
                let fetched = match c.kind {
                    Kind::Accumulate => None,
                    // SAFETY: the result buffer holds `len` bytes (MPI buffer rules;
                    // non-null, checked by the ABI) and is the caller's to write.
                    _ if c.result != 0 => {
                        Some(unsafe { std::slice::from_raw_parts_mut(c.result as *mut u8, len) })
                    }
                    _ => return false,
                };
                // SAFETY: the range is window memory of the mapped segment (checked
                // above), eligible for atomic updates of `basic`.
                unsafe { atomic::apply(c.basic, at, len, update, fetched) };
            }
            Kind::Lock | Kind::Unlock | Kind::PutStream => return false,
        }
        true
    }
}

/// The window's direct view, if its memory is a node segment.
pub fn direct_view(function: &str, win: WinId) -> MpiResult<Option<Arc<Direct>>> {
    with_win(function, win, |_, w| Ok(w.direct.clone()))
}

/// An operation to a member this process maps, done without the runtime lock (general
/// datatypes; `Direct::contiguous` does the dense predefined ones). False when the
/// access needs the target.
pub fn try_direct(function: &str, d: &Direct, a: &Access) -> MpiResult<bool> {
    let Some(base) = usize::try_from(a.target)
        .ok()
        .and_then(|t| d.bases.get(t).copied().flatten())
    else {
        return Ok(false);
    };
    let (head, runs) = geometry(function, &d.remote, d.flavor, a)?;
    let idle = d.idle();
    Ok(copy_direct(base, &head, &runs, a, idle, idle))
}

/// An operation on memory this process maps: puts and gets by copying, accumulates to
/// a contiguous target with atomic instructions when `atomic::eligible` and `idle` (no
/// message-borne operation of this process outstanding, so accumulates stay ordered).
/// Gets copy only when `result_free`: no outstanding fetch writes their result buffer
/// ([`super::results`]). False when it must run at the target.
pub(super) fn copy_direct(
    base: usize,
    head: &Head,
    runs: &[Run],
    a: &Access,
    idle: bool,
    result_free: bool,
) -> bool {
    let at = base + head.offset as usize;
    let len = head.span as usize;
    if matches!(
        a.kind,
        Kind::Accumulate | Kind::GetAccumulate | Kind::CompareAndSwap
    ) {
        return idle && runs.len() <= 1 && accumulate(at, len, head, a);
    }
    let mem = crate::userbuf::bytes(at, len);
    let span = mem.dense_mut(0, len).expect("bytes are dense");
    let dense = runs.len() <= 1;
    match (head.kind, &a.origin, &a.result) {
        (Kind::Put, Some(origin), _) if dense => origin.pack_into(0, span),
        (Kind::Put, Some(origin), _) => {
            let mut packed = vec![0u8; head.len as usize];
            origin.pack_into(0, &mut packed);
            layout::scatter(span, runs, &packed);
        }
        (Kind::Get, ..) if !result_free => return false,
        (Kind::Get, _, Some(result)) if dense => result.unpack_from(0, span),
        (Kind::Get, _, Some(result)) => result.unpack_from(0, &layout::gather(span, runs)),
        _ => return false,
    }
    true
}

/// An accumulate of any origin and result datatypes to the contiguous target bytes
/// `[at, at + len)`, packed through staging buffers.
fn accumulate(at: usize, len: usize, head: &Head, a: &Access) -> bool {
    let Some(basic) = head.basic.filter(|&b| atomic::eligible(b, at, len)) else {
        return false;
    };
    let pack = |b: &Option<crate::userbuf::UserBuf>| {
        b.as_ref().map(|b| {
            let mut v = vec![0u8; len];
            b.pack_into(0, &mut v);
            v
        })
    };
    let (origin, compare) = (pack(&a.origin), pack(&a.compare));
    let Some(update) = update(a.kind, a.op, origin.as_deref(), compare.as_deref()) else {
        return false;
    };
    let mut fetched = match (a.kind, &a.result) {
        (Kind::Accumulate, _) => None,
        (_, Some(_)) => Some(vec![0u8; len]),
        _ => return false,
    };
    // SAFETY: `[at, at + len)` is window memory of the mapped segment (range checked by
    // `geometry`), eligible for atomic updates of `basic`.
    unsafe { atomic::apply(basic, at, len, update, fetched.as_deref_mut()) };
    if let (Some(f), Some(r)) = (fetched, &a.result) {
        r.unpack_from(0, &f);
    }
    true
}

/// The update an accumulate of `kind` makes to each element, given its origin (none
/// for `MPI_NO_OP`) and compare data; None when data it needs is missing.
fn update<'a>(
    kind: Kind,
    op: Op,
    origin: Option<&'a [u8]>,
    compare: Option<&'a [u8]>,
) -> Option<Update<'a>> {
    match (kind, origin, compare) {
        (Kind::CompareAndSwap, Some(origin), Some(compare)) => {
            Some(Update::Swap { origin, compare })
        }
        (Kind::CompareAndSwap, ..) => None,
        (_, _, _) if op == Op::NoOp => Some(Update::Op(Op::NoOp, &[])),
        (_, Some(origin), _) => Some(Update::Op(op, origin)),
        _ => None,
    }
}
