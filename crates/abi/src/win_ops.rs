//! One-sided data movement (`MPI_Put`, `MPI_Get`, the accumulates, their `MPI_R*` and
//! `_c` forms) and synchronisation (fence, locks, flushes, post-start-complete-wait).

use crate::consts::*;
use crate::p2p::{buffer, request_handle};
use crate::util::{count, out};
use crate::win::{call, resolve, with_direct};
use crate::{group, op, types};
use crossmpi_core::error::MpiResult;
use crossmpi_core::rma::{self, wire::Kind, Access};
use crossmpi_datatype::op::Op;
use std::os::raw::{c_int, c_void};

/// The arguments every data-moving call shares.
struct Call {
    f: &'static str,
    win: usize,
    kind: Kind,
    origin: Option<(*const c_void, i64, usize)>,
    compare: *const c_void,
    result: Option<(*mut c_void, i64, usize)>,
    target: c_int,
    disp: isize,
    target_count: i64,
    target_type: usize,
    op: usize,
    request: *mut usize,
}

/// The direct path: a call on dense predefined types to a member of this node done by
/// `rma::Direct::contiguous` after table lookups and the checks the standard requires,
/// without datatype or buffer objects. False when the general path must do it (or
/// report what is wrong with it).
fn direct(c: &Call) -> bool {
    if !c.request.is_null() || c.target_count <= 0 {
        return false;
    }
    let Some(basic) = types::predefined_dense(c.target_type) else {
        return false;
    };
    let bytes = c.target_count as u64 * basic.size();
    let accumulates = matches!(
        c.kind,
        Kind::Accumulate | Kind::GetAccumulate | Kind::CompareAndSwap
    );
    let op = match c.kind {
        Kind::Accumulate | Kind::GetAccumulate => op::predefined(c.op),
        _ => Some(Op::Replace),
    };
    let Some(op) = op else {
        return false;
    };
    // A buffer of `bytes` dense bytes (of the target's type, for accumulates), not NULL.
    let dense = |b: Option<(*const c_void, i64, usize)>| {
        let (p, n, t) = b?;
        let b = types::predefined_dense(t)?;
        let same = if accumulates { b == basic } else { true };
        (same && !p.is_null() && n >= 0 && n as u64 * b.size() == bytes).then_some(p as usize)
    };
    let origin = match c.kind {
        Kind::Get => 0,
        _ if op == Op::NoOp => 0,
        _ => match dense(c.origin) {
            Some(p) => p,
            None => return false,
        },
    };
    let compare = match c.kind {
        Kind::CompareAndSwap => match dense(c.origin.map(|(_, n, t)| (c.compare, n, t))) {
            Some(p) => p,
            None => return false,
        },
        _ => 0,
    };
    let result = match c.kind {
        Kind::Put | Kind::Accumulate => 0,
        _ => match dense(c.result.map(|(p, n, t)| (p as *const c_void, n, t))) {
            Some(p) => p,
            None => return false,
        },
    };
    let access = rma::Contiguous {
        kind: c.kind,
        target: c.target,
        disp: c.disp,
        bytes,
        basic,
        op,
        origin,
        compare,
        result,
    };
    with_direct(c.win, |d| d.contiguous(&access)) == Some(true)
}

fn run(c: Call) -> c_int {
    if direct(&c) {
        progress_now_and_then();
        return MPI_SUCCESS;
    }
    let f = c.f;
    call(c.win, || {
        let op = match c.kind {
            Kind::Accumulate | Kind::GetAccumulate => {
                rma::accumulate_op(f, &op::resolve(f, c.op)?)?
            }
            _ => Op::Replace,
        };
        let origin = match c.origin {
            Some((p, n, t)) if op != Op::NoOp => Some(buffer(f, p, n, t)?),
            _ => None,
        };
        let compare = match (c.kind, c.origin) {
            (Kind::CompareAndSwap, Some((_, n, t))) => Some(buffer(f, c.compare, n, t)?),
            _ => None,
        };
        let result = c.result.map(|(p, n, t)| buffer(f, p, n, t)).transpose()?;
        let a = Access {
            kind: c.kind,
            origin,
            compare,
            result,
            target: c.target,
            disp: c.disp as i64,
            target_count: count(f, "target_count", c.target_count)?,
            target_type: types::committed(f, "target_datatype", c.target_type)?,
            op,
        };
        if c.request.is_null()
            && with_direct(c.win, |d| rma::try_direct(f, d, &a)).transpose()? == Some(true)
        {
            return Ok(());
        }
        let win = resolve(f, c.win)?;
        let req = rma::start(f, win, a, !c.request.is_null())?;
        match req {
            Some(r) => out(f, "request", c.request, request_handle(r)),
            None => Ok(()),
        }
    })
}

/// One data-moving call: `origin` is the origin buffer, or for a get the buffer the
/// data lands in; `target` the target count and datatype.
fn transfer(
    f: &'static str,
    kind: Kind,
    origin: (*const c_void, i64, usize),
    result: Option<(*mut c_void, i64, usize)>,
    target_rank: c_int,
    disp: isize,
    target: (i64, usize),
    op: usize,
    win: usize,
    request: *mut usize,
) -> c_int {
    let (origin, result) = match kind {
        Kind::Get => (None, Some((origin.0 as *mut c_void, origin.1, origin.2))),
        _ => (Some(origin), result),
    };
    run(Call {
        f,
        win,
        kind,
        origin,
        compare: std::ptr::null(),
        result,
        target: target_rank,
        disp,
        target_count: target.0,
        target_type: target.1,
        op,
        request,
    })
}

fn sync(f: &'static str, win: usize, body: impl FnOnce(rma::WinId) -> MpiResult<()>) -> c_int {
    call(win, || body(resolve(f, win)?))
}

const NO_REQUEST: *mut usize = std::ptr::null_mut();

/// The flushes: nothing to wait for when the direct view says no operation of this
/// process is outstanding (a valid rank is still required).
fn flush(f: &'static str, win: usize, rank: Option<c_int>) -> c_int {
    let idle = with_direct(win, |d| {
        let rank_ok =
            rank.is_none_or(|r| r == MPI_PROC_NULL || (0..d.size() as c_int).contains(&r));
        rank_ok && d.idle()
    });
    if idle == Some(true) {
        progress_now_and_then();
        return MPI_SUCCESS;
    }
    sync(f, win, |w| rma::flush(f, w, rank))
}

/// Direct calls and idle flushes skip the progress engine, so a process that does
/// nothing else would never serve the operations other processes send it as messages
/// (derived types, members of other nodes) nor answer their flushes: every
/// `DIRECT_CALLS_PER_POLL`-th such call of a thread polls the routes once. The
/// interval keeps the poll's cost (about 0.1 us) under 1 % of a direct call's.
fn progress_now_and_then() {
    const DIRECT_CALLS_PER_POLL: u32 = 1024;
    thread_local!(static DIRECT_CALLS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) });
    let due = DIRECT_CALLS.with(|n| {
        n.set(n.get().wrapping_add(1));
        n.get() % DIRECT_CALLS_PER_POLL == 0
    });
    if due {
        let _ = crossmpi_core::runtime::with("MPI_Win_flush", |rt| {
            rt.progress();
            Ok(())
        });
    }
}

/// Each data-moving call in its `int`-count and `MPI_Count` (`_c`) forms; `request`
/// marks the `MPI_R*` calls, which return a request.
macro_rules! transfers {
    ($( $shape:ident $kind:ident $mpi:ident / $pmpi:ident, $mpic:ident / $pmpic:ident $(, $req:ident)?; )*) => {$(
        transfers!(@one $shape $kind $mpi / $pmpi, c_int $(, $req)?);
        transfers!(@one $shape $kind $mpic / $pmpic, i64 $(, $req)?);
    )*};
    (@request) => { NO_REQUEST };
    (@request $req:ident) => { $req };
    (@one move $kind:ident $mpi:ident / $pmpi:ident, $n:ty $(, $req:ident)?) => { export! {
        fn $mpi / $pmpi(origin_addr: *mut c_void, origin_count: $n, origin_datatype: usize, target_rank: c_int, target_disp: isize, target_count: $n, target_datatype: usize, win: usize $(, $req: *mut usize)?) -> c_int {
            transfer(stringify!($mpi), Kind::$kind, (origin_addr, origin_count as i64, origin_datatype), None, target_rank, target_disp, (target_count as i64, target_datatype), MPI_REPLACE, win, transfers!(@request $($req)?))
        }
    }};
    (@one acc $kind:ident $mpi:ident / $pmpi:ident, $n:ty $(, $req:ident)?) => { export! {
        fn $mpi / $pmpi(origin_addr: *const c_void, origin_count: $n, origin_datatype: usize, target_rank: c_int, target_disp: isize, target_count: $n, target_datatype: usize, op: usize, win: usize $(, $req: *mut usize)?) -> c_int {
            transfer(stringify!($mpi), Kind::$kind, (origin_addr, origin_count as i64, origin_datatype), None, target_rank, target_disp, (target_count as i64, target_datatype), op, win, transfers!(@request $($req)?))
        }
    }};
    (@one get_acc $kind:ident $mpi:ident / $pmpi:ident, $n:ty $(, $req:ident)?) => { export! {
        fn $mpi / $pmpi(origin_addr: *const c_void, origin_count: $n, origin_datatype: usize, result_addr: *mut c_void, result_count: $n, result_datatype: usize, target_rank: c_int, target_disp: isize, target_count: $n, target_datatype: usize, op: usize, win: usize $(, $req: *mut usize)?) -> c_int {
            transfer(stringify!($mpi), Kind::$kind, (origin_addr, origin_count as i64, origin_datatype), Some((result_addr, result_count as i64, result_datatype)), target_rank, target_disp, (target_count as i64, target_datatype), op, win, transfers!(@request $($req)?))
        }
    }};
}

transfers! {
    move Put MPI_Put / PMPI_Put, MPI_Put_c / PMPI_Put_c;
    move Put MPI_Rput / PMPI_Rput, MPI_Rput_c / PMPI_Rput_c, request;
    move Get MPI_Get / PMPI_Get, MPI_Get_c / PMPI_Get_c;
    move Get MPI_Rget / PMPI_Rget, MPI_Rget_c / PMPI_Rget_c, request;
    acc Accumulate MPI_Accumulate / PMPI_Accumulate, MPI_Accumulate_c / PMPI_Accumulate_c;
    acc Accumulate MPI_Raccumulate / PMPI_Raccumulate, MPI_Raccumulate_c / PMPI_Raccumulate_c, request;
    get_acc GetAccumulate MPI_Get_accumulate / PMPI_Get_accumulate, MPI_Get_accumulate_c / PMPI_Get_accumulate_c;
    get_acc GetAccumulate MPI_Rget_accumulate / PMPI_Rget_accumulate, MPI_Rget_accumulate_c / PMPI_Rget_accumulate_c, request;
}

export! {
    fn MPI_Fetch_and_op / PMPI_Fetch_and_op(origin_addr: *const c_void, result_addr: *mut c_void, datatype: usize, target_rank: c_int, target_disp: isize, op: usize, win: usize) -> c_int {
        transfer("MPI_Fetch_and_op", Kind::GetAccumulate, (origin_addr, 1, datatype), Some((result_addr, 1, datatype)), target_rank, target_disp, (1, datatype), op, win, NO_REQUEST)
    }
    fn MPI_Compare_and_swap / PMPI_Compare_and_swap(origin_addr: *const c_void, compare_addr: *const c_void, result_addr: *mut c_void, datatype: usize, target_rank: c_int, target_disp: isize, win: usize) -> c_int {
        run(Call { f: "MPI_Compare_and_swap", win, kind: Kind::CompareAndSwap, origin: Some((origin_addr, 1, datatype)), compare: compare_addr,
            result: Some((result_addr, 1, datatype)), target: target_rank, disp: target_disp, target_count: 1, target_type: datatype, op: MPI_REPLACE, request: NO_REQUEST })
    }

    fn MPI_Win_fence / PMPI_Win_fence(assert: c_int, win: usize) -> c_int {
        let f = "MPI_Win_fence";
        sync(f, win, |w| rma::fence(f, w, assert))
    }
    fn MPI_Win_lock / PMPI_Win_lock(lock_type: c_int, rank: c_int, assert: c_int, win: usize) -> c_int {
        let f = "MPI_Win_lock";
        sync(f, win, |w| rma::lock(f, w, lock_type, rank, assert & MPI_MODE_NOCHECK != 0))
    }
    fn MPI_Win_unlock / PMPI_Win_unlock(rank: c_int, win: usize) -> c_int {
        let f = "MPI_Win_unlock";
        sync(f, win, |w| rma::unlock(f, w, rank))
    }
    fn MPI_Win_lock_all / PMPI_Win_lock_all(assert: c_int, win: usize) -> c_int {
        let f = "MPI_Win_lock_all";
        sync(f, win, |w| rma::lock_all(f, w, assert & MPI_MODE_NOCHECK != 0))
    }
    fn MPI_Win_unlock_all / PMPI_Win_unlock_all(win: usize) -> c_int {
        let f = "MPI_Win_unlock_all";
        sync(f, win, |w| rma::unlock_all(f, w))
    }
    fn MPI_Win_flush / PMPI_Win_flush(rank: c_int, win: usize) -> c_int {
        flush("MPI_Win_flush", win, Some(rank))
    }
    fn MPI_Win_flush_all / PMPI_Win_flush_all(win: usize) -> c_int {
        flush("MPI_Win_flush_all", win, None)
    }
    // Local completion is remote completion here: an operation's reply is its only
    // completion event, so the local flushes wait for the same thing.
    fn MPI_Win_flush_local / PMPI_Win_flush_local(rank: c_int, win: usize) -> c_int {
        flush("MPI_Win_flush_local", win, Some(rank))
    }
    fn MPI_Win_flush_local_all / PMPI_Win_flush_local_all(win: usize) -> c_int {
        flush("MPI_Win_flush_local_all", win, None)
    }
    // The unified memory model: public and private copies are the same memory, so
    // there is nothing to synchronise beyond the fence the compiler gets from the call.
    fn MPI_Win_sync / PMPI_Win_sync(win: usize) -> c_int {
        let f = "MPI_Win_sync";
        sync(f, win, |_| {
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            Ok(())
        })
    }
    fn MPI_Win_post / PMPI_Win_post(group: usize, assert: c_int, win: usize) -> c_int {
        let f = "MPI_Win_post";
        let _ = assert;
        sync(f, win, |w| rma::post(f, w, &*group::lookup(f, "group", group)?))
    }
    fn MPI_Win_start / PMPI_Win_start(group: usize, assert: c_int, win: usize) -> c_int {
        let f = "MPI_Win_start";
        let _ = assert;
        sync(f, win, |w| rma::start_access(f, w, &*group::lookup(f, "group", group)?))
    }
    fn MPI_Win_complete / PMPI_Win_complete(win: usize) -> c_int {
        let f = "MPI_Win_complete";
        sync(f, win, |w| rma::complete(f, w))
    }
    fn MPI_Win_wait / PMPI_Win_wait(win: usize) -> c_int {
        let f = "MPI_Win_wait";
        sync(f, win, |w| rma::wait_exposure(f, w, true).map(|_| ()))
    }
    fn MPI_Win_test / PMPI_Win_test(win: usize, flag: *mut c_int) -> c_int {
        let f = "MPI_Win_test";
        sync(f, win, |w| {
            let done = rma::wait_exposure(f, w, false)?;
            out(f, "flag", flag, done as c_int)
        })
    }
}
