//! Collective calls: the argument work shared by the blocking, nonblocking and large-count
//! (`_c`) forms of every collective. The exported functions themselves, one line each,
//! are in `coll_exports.rs`.
//!
//! Each function here checks its arguments (naming the function, the argument and the
//! value), turns buffers into typed `UserBuf`s (per block for the v/w forms), resolves
//! the operator, and starts the core collective blocking or as a request.

use crate::comm::resolve;
use crate::consts::HANDLE_CONSTANTS;
use crate::error::{call, Scope};
use crate::handle::{self, Kind};
use crate::op;
use crate::p2p::{buffer, dense_buffer, dense_len};
use crate::types;
use crate::util::{count, out, slice};
use crossmpi_core::coll::{self, sched::Mode, Flow, ROOT};
use crossmpi_core::comm::CommId;
use crossmpi_core::datatype::op::Op;
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::reduce::ReduceOp;
use crossmpi_core::request::{ReqId, PROC_NULL};
use crossmpi_core::runtime::{self, Runtime};
use crossmpi_core::userbuf::{self, UserBuf};
use std::borrow::Cow;
use std::os::raw::{c_int, c_void};
use std::sync::OnceLock;

/// The operator an `MPI_Op` handle names. Predefined operators come from a table built
/// once (`op::resolve` searches the handle names, too slow for an 8-byte allreduce), and
/// are lent from it: a copy was written field by field and read back whole, and that read
/// waited for the writes (a store-forwarding stall, an eighth of the C layer's share of a
/// 2-member 8-byte allreduce).
fn reduce_op(function: &str, h: usize) -> MpiResult<Cow<'static, ReduceOp>> {
    static PREDEFINED: OnceLock<Vec<(usize, ReduceOp)>> = OnceLock::new();
    let table = PREDEFINED.get_or_init(|| {
        Op::ALL
            .iter()
            .filter_map(|o| {
                HANDLE_CONSTANTS
                    .iter()
                    .find(|(name, _)| *name == o.mpi_name())
                    .map(|&(_, v)| (v, ReduceOp::Builtin(*o)))
            })
            .collect()
    });
    match table.iter().find(|(v, _)| *v == h) {
        Some((_, o)) => Ok(Cow::Borrowed(o)),
        None => op::resolve(function, h).map(Cow::Owned),
    }
}

/// `MPI_IN_PLACE` (MPI-5.0 ABI: `(void *)0x1`).
const IN_PLACE: usize = 1;

/// An array argument: `int[]` of the classic functions, `MPI_Count[]`/`MPI_Aint[]` of
/// the large-count ones.
#[derive(Clone, Copy)]
pub enum Arr {
    Int(*const c_int),
    Wide(*const i64),
}

impl Arr {
    fn read(self, function: &str, arg: &str, n: usize) -> MpiResult<Vec<i64>> {
        Ok(match self {
            Arr::Int(p) => slice(function, arg, p, n)?
                .iter()
                .map(|&x| x as i64)
                .collect(),
            Arr::Wide(p) => slice(function, arg, p, n)?.to_vec(),
        })
    }
}

/// The communicator of a collective call: (id, own rank, own size, remote size).
struct Target {
    id: CommId,
    rank: usize,
    size: usize,
    remote: Option<usize>,
}

impl Target {
    fn of(function: &str, comm: usize) -> MpiResult<Target> {
        runtime::with(function, |rt| {
            let id = resolve(rt, function, comm)?;
            let c = rt.comm(function, id)?;
            Ok(Target {
                id,
                rank: c.rank,
                size: c.size(),
                remote: c.remote.as_ref().map(|g| g.size()),
            })
        })
    }

    /// Members data goes to or comes from: the remote group of an intercommunicator.
    fn peers(&self) -> usize {
        self.remote.unwrap_or(self.size)
    }

    /// Whether this process is the root of a rooted collective.
    fn is_root(&self, root: c_int) -> bool {
        match self.remote {
            Some(_) => root == ROOT,
            None => root >= 0 && root as usize == self.rank,
        }
    }

    /// Whether this process takes no part (`MPI_PROC_NULL` on an intercommunicator).
    fn idle(&self, root: c_int) -> bool {
        self.remote.is_some() && root == PROC_NULL
    }
}

/// `comm` as the light path of communicators on one node takes it: resolved
/// under that call's lock, so the call takes the lock once. A call the light path does
/// not serve (it returns false, having done nothing) goes on to the general path.
/// Predefined dense types enter it as bytes over the user's memory: no typed buffers,
/// whose building is a sizeable part of such a call.
fn light(f: &str, comm: usize) -> impl coll::light::Which + '_ {
    move |rt: &Runtime| resolve(rt, f, comm)
}

/// Blocks of `count` elements of a predefined dense type back to back from `base`, one
/// per member, as bytes.
fn dense_blocks(
    base: *const c_void,
    count: i64,
    dtype: usize,
) -> Option<coll::light::Blocks<'static>> {
    let len = dense_len(base, count, dtype)?;
    Some(coll::light::Blocks::Dense {
        base: base as usize,
        len,
    })
}

fn in_place(p: *const c_void) -> bool {
    p as usize == IN_PLACE
}

fn no_in_place(function: &str, arg: &str, p: *const c_void) -> MpiResult<()> {
    if in_place(p) {
        return Err(MpiError::arg(
            ErrorClass::Buffer,
            function,
            arg,
            "MPI_IN_PLACE",
            "not allowed here",
        ));
    }
    Ok(())
}

/// `count` elements of `dtype` at `base + disp` bytes.
fn block(base: *const c_void, disp: i64, n: i64, dtype: &UserBuf) -> UserBuf {
    UserBuf::new(
        (base as i64 + disp) as usize,
        n.max(0) as u64,
        dtype.dtype.clone(),
    )
}

/// `n` equal blocks of `count` elements, back to back (in extents) from `base`.
fn equal_blocks(
    function: &str,
    base: *const c_void,
    n: usize,
    cnt: i64,
    dtype: usize,
) -> MpiResult<Vec<UserBuf>> {
    let proto = buffer(function, base, cnt, dtype)?;
    let stride = proto.dtype.extent() * cnt;
    Ok((0..n)
        .map(|i| block(base, i as i64 * stride, cnt, &proto))
        .collect())
}

/// Blocks at element displacements (`displs` in extents of `dtype`).
fn v_blocks(
    function: &str,
    base: *const c_void,
    counts: &[i64],
    displs: &[i64],
    dtype: usize,
) -> MpiResult<Vec<UserBuf>> {
    let proto = buffer(function, base, 0, dtype)?;
    let ext = proto.dtype.extent();
    counts
        .iter()
        .zip(displs)
        .map(|(&c, &d)| {
            count(function, "counts", c)?;
            Ok(block(base, d * ext, c, &proto))
        })
        .collect()
}

/// Blocks at byte displacements, each with its own datatype (the w forms).
fn w_blocks(
    function: &str,
    base: *const c_void,
    counts: &[i64],
    displs: &[i64],
    dtypes: &[usize],
) -> MpiResult<Vec<UserBuf>> {
    counts
        .iter()
        .zip(displs)
        .zip(dtypes)
        .map(|((&c, &d), &t)| {
            count(function, "counts", c)?;
            let dt = types::committed(function, "datatypes", t)?;
            Ok(UserBuf::new((base as i64 + d) as usize, c as u64, dt))
        })
        .collect()
}

/// Runs a collective's body and stores the request of the nonblocking forms.
fn finish(
    function: &'static str,
    comm: usize,
    request: *mut usize,
    body: impl FnOnce() -> MpiResult<Option<ReqId>>,
) -> c_int {
    call(Scope::Comm(comm), || match body()? {
        Some(req) => out(
            function,
            "request",
            request,
            handle::encode(Kind::Request, req.index),
        ),
        None => Ok(()),
    })
}

pub fn barrier(f: &'static str, mode: Mode, comm: usize, request: *mut usize) -> c_int {
    finish(f, comm, request, || {
        if mode == Mode::Blocking && coll::light::barrier(f, light(f, comm))? {
            return Ok(None);
        }
        let t = Target::of(f, comm)?;
        coll::barrier_call(f, t.id, mode)
    })
}

pub fn bcast(
    f: &'static str,
    mode: Mode,
    buf: *mut c_void,
    n: i64,
    dtype: usize,
    root: c_int,
    comm: usize,
    request: *mut usize,
) -> c_int {
    finish(f, comm, request, || {
        no_in_place(f, "buffer", buf)?;
        if let (Mode::Blocking, Some(len)) = (mode, dense_len(buf, n, dtype)) {
            let data = userbuf::bytes(buf as usize, len);
            if coll::light::bcast(f, light(f, comm), &data, root)? {
                return Ok(None);
            }
        }
        let t = Target::of(f, comm)?;
        // MPI_PROC_NULL on an intercommunicator: the buffer is not used.
        let n = if t.idle(root) { 0 } else { n };
        coll::bcast(f, t.id, mode, buffer(f, buf, n, dtype)?, root)
    })
}

/// The own data of a rooted gather, scatter or reduce (`sendbuf` / `recvbuf`): `None`
/// where the process has none (the root's group of an intercommunicator) or passes
/// `MPI_IN_PLACE` (allowed at the root of an intracommunicator only).
fn rooted_own(
    f: &str,
    t: &Target,
    root: c_int,
    arg: &str,
    p: *const c_void,
    n: i64,
    dtype: usize,
) -> MpiResult<Option<UserBuf>> {
    let is_root = t.is_root(root);
    if t.idle(root) || (t.remote.is_some() && is_root) {
        return Ok(None);
    }
    if in_place(p) {
        if !is_root || t.remote.is_some() {
            return Err(MpiError::arg(
                ErrorClass::Buffer,
                f,
                arg,
                "MPI_IN_PLACE",
                "allowed at the root only",
            ));
        }
        return Ok(None);
    }
    buffer(f, p, n, dtype).map(Some)
}

/// Gather (`Flow::ToRoot`) or scatter: `own` is this process's buffer (`sendbuf` of a
/// gather, `recvbuf` of a scatter), `blocks` builds the root's per-member buffers.
#[allow(clippy::too_many_arguments)]
fn rooted_any(
    f: &'static str,
    mode: Mode,
    flow: Flow,
    own: *const c_void,
    own_count: i64,
    own_type: usize,
    blocks: impl FnOnce(&Target) -> MpiResult<Vec<UserBuf>>,
    root: c_int,
    comm: usize,
) -> MpiResult<Option<ReqId>> {
    let t = Target::of(f, comm)?;
    let arg = if flow == Flow::ToRoot {
        "sendbuf"
    } else {
        "recvbuf"
    };
    let mine = rooted_own(f, &t, root, arg, own, own_count, own_type)?;
    let per_member = if t.is_root(root) {
        blocks(&t)?
    } else {
        Vec::new()
    };
    coll::rooted(f, t.id, mode, per_member, mine, root, flow)
}

pub fn gather(
    f: &'static str,
    mode: Mode,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: usize,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: usize,
    root: c_int,
    comm: usize,
    request: *mut usize,
) -> c_int {
    finish(f, comm, request, || {
        rooted_any(
            f,
            mode,
            Flow::ToRoot,
            sendbuf,
            sendcount,
            sendtype,
            |t| equal_blocks(f, recvbuf, t.peers(), recvcount, recvtype),
            root,
            comm,
        )
    })
}

pub fn gatherv(
    f: &'static str,
    mode: Mode,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: usize,
    recvbuf: *mut c_void,
    recvcounts: Arr,
    displs: Arr,
    recvtype: usize,
    root: c_int,
    comm: usize,
    request: *mut usize,
) -> c_int {
    finish(f, comm, request, || {
        rooted_any(
            f,
            mode,
            Flow::ToRoot,
            sendbuf,
            sendcount,
            sendtype,
            |t| {
                let c = recvcounts.read(f, "recvcounts", t.peers())?;
                let d = displs.read(f, "displs", t.peers())?;
                v_blocks(f, recvbuf, &c, &d, recvtype)
            },
            root,
            comm,
        )
    })
}

pub fn scatter(
    f: &'static str,
    mode: Mode,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: usize,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: usize,
    root: c_int,
    comm: usize,
    request: *mut usize,
) -> c_int {
    finish(f, comm, request, || {
        rooted_any(
            f,
            mode,
            Flow::FromRoot,
            recvbuf,
            recvcount,
            recvtype,
            |t| equal_blocks(f, sendbuf, t.peers(), sendcount, sendtype),
            root,
            comm,
        )
    })
}

pub fn scatterv(
    f: &'static str,
    mode: Mode,
    sendbuf: *const c_void,
    sendcounts: Arr,
    displs: Arr,
    sendtype: usize,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: usize,
    root: c_int,
    comm: usize,
    request: *mut usize,
) -> c_int {
    finish(f, comm, request, || {
        rooted_any(
            f,
            mode,
            Flow::FromRoot,
            recvbuf,
            recvcount,
            recvtype,
            |t| {
                let c = sendcounts.read(f, "sendcounts", t.peers())?;
                let d = displs.read(f, "displs", t.peers())?;
                v_blocks(f, sendbuf, &c, &d, sendtype)
            },
            root,
            comm,
        )
    })
}

/// The send data of a collective where `MPI_IN_PLACE` is allowed on intracommunicators
/// only: `None` for it, else what `make` builds.
fn send_or_in_place<T>(
    f: &str,
    t: &Target,
    sendbuf: *const c_void,
    make: impl FnOnce() -> MpiResult<T>,
) -> MpiResult<Option<T>> {
    if in_place(sendbuf) {
        if t.remote.is_some() {
            return Err(MpiError::arg(
                ErrorClass::Buffer,
                f,
                "sendbuf",
                "MPI_IN_PLACE",
                "not allowed on an intercommunicator",
            ));
        }
        return Ok(None);
    }
    make().map(Some)
}

/// What an allgather or all-to-all runs over: the communicator's members, or the
/// neighbours of its process topology (the `MPI_Neighbor_*` calls).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Over {
    Comm,
    Neighbors,
}

/// How many members data comes from and goes to.
fn fan(f: &str, t: &Target, over: Over) -> MpiResult<(usize, usize)> {
    match over {
        Over::Comm => Ok((t.peers(), t.peers())),
        Over::Neighbors => coll::neighbor_counts(f, t.id),
    }
}

/// The send data: `MPI_IN_PLACE` (`None`) is allowed on intracommunicators, never for
/// neighbourhood collectives.
fn send_side<T>(
    f: &str,
    t: &Target,
    over: Over,
    sendbuf: *const c_void,
    make: impl FnOnce() -> MpiResult<T>,
) -> MpiResult<Option<T>> {
    if over == Over::Neighbors {
        no_in_place(f, "sendbuf", sendbuf)?;
    }
    send_or_in_place(f, t, sendbuf, make)
}

/// Starts an all-to-all style exchange of per-member blocks.
fn exchange(
    f: &'static str,
    t: &Target,
    mode: Mode,
    over: Over,
    send: Option<Vec<UserBuf>>,
    recv: Vec<UserBuf>,
) -> MpiResult<Option<ReqId>> {
    match (over, send) {
        (Over::Neighbors, Some(send)) => coll::neighbor_exchange(f, t.id, mode, send, recv),
        (_, send) => coll::alltoall(f, t.id, mode, send, recv),
    }
}

/// Starts an allgather of this member's `mine` (`None`: in place) into `blocks`.
fn gather_all(
    f: &'static str,
    t: &Target,
    mode: Mode,
    over: Over,
    mine: Option<UserBuf>,
    blocks: Vec<UserBuf>,
    whole: Option<UserBuf>,
) -> MpiResult<Option<ReqId>> {
    match (over, mine) {
        (Over::Neighbors, Some(m)) => {
            let (_, nd) = fan(f, t, over)?;
            coll::neighbor_exchange(f, t.id, mode, vec![m; nd], blocks)
        }
        (_, mine) => coll::allgather(f, t.id, mode, mine, blocks, whole),
    }
}

pub fn allgather(
    f: &'static str,
    mode: Mode,
    over: Over,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: usize,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: usize,
    comm: usize,
    request: *mut usize,
) -> c_int {
    finish(f, comm, request, || {
        if mode == Mode::Blocking && over == Over::Comm && !in_place(sendbuf) {
            if let (Some(len), Some(blocks)) = (
                dense_len(sendbuf, sendcount, sendtype),
                dense_blocks(recvbuf, recvcount, recvtype),
            ) {
                let mine = userbuf::bytes(sendbuf as usize, len);
                if coll::light::allgather(f, light(f, comm), Some(&mine), &blocks)? {
                    return Ok(None);
                }
            }
        }
        let t = Target::of(f, comm)?;
        let (ns, _) = fan(f, &t, over)?;
        let send = send_side(f, &t, over, sendbuf, || {
            buffer(f, sendbuf, sendcount, sendtype)
        })?;
        let blocks = equal_blocks(f, recvbuf, ns, recvcount, recvtype)?;
        // Equal dense blocks back to back: recursive doubling can move runs of them.
        let whole = blocks.first().and_then(|proto| {
            let dense = proto.dtype.extent() == proto.dtype.size() as i64;
            (over == Over::Comm && t.remote.is_none() && dense).then(|| {
                UserBuf::new(
                    recvbuf as usize,
                    recvcount as u64 * t.size as u64,
                    proto.dtype.clone(),
                )
            })
        });
        gather_all(f, &t, mode, over, send, blocks, whole)
    })
}

pub fn allgatherv(
    f: &'static str,
    mode: Mode,
    over: Over,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: usize,
    recvbuf: *mut c_void,
    recvcounts: Arr,
    displs: Arr,
    recvtype: usize,
    comm: usize,
    request: *mut usize,
) -> c_int {
    finish(f, comm, request, || {
        let t = Target::of(f, comm)?;
        let (ns, _) = fan(f, &t, over)?;
        let send = send_side(f, &t, over, sendbuf, || {
            buffer(f, sendbuf, sendcount, sendtype)
        })?;
        let c = recvcounts.read(f, "recvcounts", ns)?;
        let d = displs.read(f, "displs", ns)?;
        let blocks = v_blocks(f, recvbuf, &c, &d, recvtype)?;
        gather_all(f, &t, mode, over, send, blocks, None)
    })
}

pub fn alltoall(
    f: &'static str,
    mode: Mode,
    over: Over,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: usize,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: usize,
    comm: usize,
    request: *mut usize,
) -> c_int {
    finish(f, comm, request, || {
        if mode == Mode::Blocking && over == Over::Comm && !in_place(sendbuf) {
            if let (Some(send), Some(recv)) = (
                dense_blocks(sendbuf, sendcount, sendtype),
                dense_blocks(recvbuf, recvcount, recvtype),
            ) {
                if coll::light::alltoall(f, light(f, comm), &send, &recv, true)? {
                    return Ok(None);
                }
            }
        }
        let t = Target::of(f, comm)?;
        let (ns, nd) = fan(f, &t, over)?;
        let send = send_side(f, &t, over, sendbuf, || {
            equal_blocks(f, sendbuf, nd, sendcount, sendtype)
        })?;
        let recv = equal_blocks(f, recvbuf, ns, recvcount, recvtype)?;
        exchange(f, &t, mode, over, send, recv)
    })
}

pub fn alltoallv(
    f: &'static str,
    mode: Mode,
    over: Over,
    sendbuf: *const c_void,
    sendcounts: Arr,
    sdispls: Arr,
    sendtype: usize,
    recvbuf: *mut c_void,
    recvcounts: Arr,
    rdispls: Arr,
    recvtype: usize,
    comm: usize,
    request: *mut usize,
) -> c_int {
    finish(f, comm, request, || {
        let t = Target::of(f, comm)?;
        let (ns, nd) = fan(f, &t, over)?;
        let send = send_side(f, &t, over, sendbuf, || {
            let c = sendcounts.read(f, "sendcounts", nd)?;
            let d = sdispls.read(f, "sdispls", nd)?;
            v_blocks(f, sendbuf, &c, &d, sendtype)
        })?;
        let c = recvcounts.read(f, "recvcounts", ns)?;
        let d = rdispls.read(f, "rdispls", ns)?;
        let recv = v_blocks(f, recvbuf, &c, &d, recvtype)?;
        exchange(f, &t, mode, over, send, recv)
    })
}

pub fn alltoallw(
    f: &'static str,
    mode: Mode,
    over: Over,
    sendbuf: *const c_void,
    sendcounts: Arr,
    sdispls: Arr,
    sendtypes: *const usize,
    recvbuf: *mut c_void,
    recvcounts: Arr,
    rdispls: Arr,
    recvtypes: *const usize,
    comm: usize,
    request: *mut usize,
) -> c_int {
    finish(f, comm, request, || {
        let t = Target::of(f, comm)?;
        let (ns, nd) = fan(f, &t, over)?;
        let send = send_side(f, &t, over, sendbuf, || {
            let c = sendcounts.read(f, "sendcounts", nd)?;
            let d = sdispls.read(f, "sdispls", nd)?;
            w_blocks(f, sendbuf, &c, &d, slice(f, "sendtypes", sendtypes, nd)?)
        })?;
        let c = recvcounts.read(f, "recvcounts", ns)?;
        let d = rdispls.read(f, "rdispls", ns)?;
        let recv = w_blocks(f, recvbuf, &c, &d, slice(f, "recvtypes", recvtypes, ns)?)?;
        exchange(f, &t, mode, over, send, recv)
    })
}

pub fn reduce(
    f: &'static str,
    mode: Mode,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: i64,
    dtype: usize,
    op: usize,
    root: c_int,
    comm: usize,
    request: *mut usize,
) -> c_int {
    finish(f, comm, request, || {
        let t = Target::of(f, comm)?;
        let o = reduce_op(f, op)?;
        let is_root = t.is_root(root);
        let send = rooted_own(f, &t, root, "sendbuf", sendbuf, n, dtype)?;
        let recv = if is_root {
            Some(buffer(f, recvbuf, n, dtype)?)
        } else {
            None
        };
        coll::reduce(f, t.id, mode, send, recv, o.into_owned(), root)
    })
}

pub fn allreduce(
    f: &'static str,
    mode: Mode,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: i64,
    dtype: usize,
    op: usize,
    comm: usize,
    request: *mut usize,
) -> c_int {
    finish(f, comm, request, || {
        let o = reduce_op(f, op)?;
        // The buffers stay where they are built (borrowed, not moved into a pair): a moved
        // buffer was read back with loads wider than the stores that wrote it, which wait
        // for those stores (a sixth of the C layer's share of a 2-member 8-byte allreduce).
        let dense_recv = match mode {
            Mode::Blocking => dense_buffer(recvbuf, n, dtype),
            _ => None,
        };
        if let Some(recv) = &dense_recv {
            let own = !in_place(sendbuf);
            let dense_send = if own {
                dense_buffer(sendbuf, n, dtype)
            } else {
                None
            };
            if (!own || dense_send.is_some())
                && coll::light::allreduce(f, light(f, comm), dense_send.as_ref(), recv, &o)?
            {
                return Ok(None);
            }
        }
        let recv = buffer(f, recvbuf, n, dtype)?;
        let t = Target::of(f, comm)?;
        let send = send_or_in_place(f, &t, sendbuf, || buffer(f, sendbuf, n, dtype))?;
        coll::allreduce(f, t.id, mode, send, recv, o.into_owned())
    })
}

/// Scan and exscan (`exclusive`).
pub fn scan(
    f: &'static str,
    mode: Mode,
    exclusive: bool,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: i64,
    dtype: usize,
    op: usize,
    comm: usize,
    request: *mut usize,
) -> c_int {
    finish(f, comm, request, || {
        let t = Target::of(f, comm)?;
        let o = reduce_op(f, op)?;
        let send = send_or_in_place(f, &t, sendbuf, || buffer(f, sendbuf, n, dtype))?;
        let recv = buffer(f, recvbuf, n, dtype)?;
        coll::scan(f, t.id, mode, send, recv, o.into_owned(), exclusive)
    })
}

fn reduce_scatter_any(
    f: &'static str,
    mode: Mode,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: Vec<i64>,
    dtype: usize,
    op: usize,
    t: Target,
) -> MpiResult<Option<ReqId>> {
    let o = reduce_op(f, op)?;
    for &c in &counts {
        count(f, "recvcounts", c)?;
    }
    let total: i64 = counts.iter().sum();
    let input = match send_or_in_place(f, &t, sendbuf, || buffer(f, sendbuf, total, dtype))? {
        Some(send) => send,
        None => buffer(f, recvbuf, total, dtype)?,
    };
    let mine = buffer(f, recvbuf, counts[t.rank], dtype)?;
    let counts = counts.iter().map(|&c| c as u64).collect();
    coll::reduce_scatter(f, t.id, mode, input, mine, counts, o.into_owned())
}

pub fn reduce_scatter(
    f: &'static str,
    mode: Mode,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: Arr,
    dtype: usize,
    op: usize,
    comm: usize,
    request: *mut usize,
) -> c_int {
    finish(f, comm, request, || {
        let t = Target::of(f, comm)?;
        let counts = recvcounts.read(f, "recvcounts", t.size)?;
        reduce_scatter_any(f, mode, sendbuf, recvbuf, counts, dtype, op, t)
    })
}

pub fn reduce_scatter_block(
    f: &'static str,
    mode: Mode,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: i64,
    dtype: usize,
    op: usize,
    comm: usize,
    request: *mut usize,
) -> c_int {
    finish(f, comm, request, || {
        let t = Target::of(f, comm)?;
        let counts = vec![recvcount; t.size];
        reduce_scatter_any(f, mode, sendbuf, recvbuf, counts, dtype, op, t)
    })
}
