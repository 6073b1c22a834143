//! Collective calls: the argument work shared by the blocking, nonblocking and large-count
//! (`_c`) forms of every collective. The exported functions themselves, one line each,
//! are in `coll_exports.rs`.
//!
//! Each function here checks its arguments (naming the function, the argument and the
//! value), turns buffers into typed `UserBuf`s (per block for the v/w forms), resolves
//! the operator, and starts the core collective blocking or as a request.

use crate::comm::resolve;
use crate::error::{call, Scope};
use crate::handle::{self, Kind};
use crate::op;
use crate::p2p::buffer;
use crate::types;
use crate::util::{count, out, slice};
use crossmpi_core::coll::{self, sched::Mode, ROOT};
use crossmpi_core::comm::CommId;
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::request::{ReqId, PROC_NULL};
use crossmpi_core::runtime;
use crossmpi_core::userbuf::UserBuf;
use std::os::raw::{c_int, c_void};

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
        let t = Target::of(f, comm)?;
        no_in_place(f, "buffer", buf)?;
        coll::bcast(f, t.id, mode, buffer(f, buf, n, dtype)?, root)
    })
}

#[allow(clippy::too_many_arguments)]
fn gather_any(
    f: &'static str,
    mode: Mode,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: usize,
    blocks: impl FnOnce(&Target) -> MpiResult<Vec<UserBuf>>,
    root: c_int,
    comm: usize,
) -> MpiResult<Option<ReqId>> {
    let t = Target::of(f, comm)?;
    let is_root = t.is_root(root);
    let send = if t.idle(root) || (t.remote.is_some() && is_root) {
        None
    } else if in_place(sendbuf) {
        if !is_root || t.remote.is_some() {
            return Err(MpiError::arg(
                ErrorClass::Buffer,
                f,
                "sendbuf",
                "MPI_IN_PLACE",
                "allowed at the root only",
            ));
        }
        None
    } else {
        Some(buffer(f, sendbuf, sendcount, sendtype)?)
    };
    let recv = if is_root { blocks(&t)? } else { Vec::new() };
    coll::gather(f, t.id, mode, send, recv, root)
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
        gather_any(
            f,
            mode,
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
        gather_any(
            f,
            mode,
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

#[allow(clippy::too_many_arguments)]
fn scatter_any(
    f: &'static str,
    mode: Mode,
    blocks: impl FnOnce(&Target) -> MpiResult<Vec<UserBuf>>,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: usize,
    root: c_int,
    comm: usize,
) -> MpiResult<Option<ReqId>> {
    let t = Target::of(f, comm)?;
    let is_root = t.is_root(root);
    let recv = if t.idle(root) || (t.remote.is_some() && is_root) {
        None
    } else if in_place(recvbuf) {
        if !is_root || t.remote.is_some() {
            return Err(MpiError::arg(
                ErrorClass::Buffer,
                f,
                "recvbuf",
                "MPI_IN_PLACE",
                "allowed at the root only",
            ));
        }
        None
    } else {
        Some(buffer(f, recvbuf, recvcount, recvtype)?)
    };
    let send = if is_root { blocks(&t)? } else { Vec::new() };
    coll::scatter(f, t.id, mode, send, recv, root)
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
        scatter_any(
            f,
            mode,
            |t| equal_blocks(f, sendbuf, t.peers(), sendcount, sendtype),
            recvbuf,
            recvcount,
            recvtype,
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
        scatter_any(
            f,
            mode,
            |t| {
                let c = sendcounts.read(f, "sendcounts", t.peers())?;
                let d = displs.read(f, "displs", t.peers())?;
                v_blocks(f, sendbuf, &c, &d, sendtype)
            },
            recvbuf,
            recvcount,
            recvtype,
            root,
            comm,
        )
    })
}

/// The send side of allgather(v): `None` for `MPI_IN_PLACE` (intracommunicators only).
fn allgather_send(
    f: &str,
    t: &Target,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: usize,
) -> MpiResult<Option<UserBuf>> {
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
    buffer(f, sendbuf, sendcount, sendtype).map(Some)
}

pub fn allgather(
    f: &'static str,
    mode: Mode,
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
        let t = Target::of(f, comm)?;
        let send = allgather_send(f, &t, sendbuf, sendcount, sendtype)?;
        let blocks = equal_blocks(f, recvbuf, t.peers(), recvcount, recvtype)?;
        let proto = &blocks[0];
        let whole =
            (t.remote.is_none() && proto.dtype.extent() == proto.dtype.size() as i64).then(|| {
                UserBuf::new(
                    recvbuf as usize,
                    recvcount as u64 * t.size as u64,
                    proto.dtype.clone(),
                )
            });
        coll::allgather(f, t.id, mode, send, blocks, whole)
    })
}

pub fn allgatherv(
    f: &'static str,
    mode: Mode,
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
        let send = allgather_send(f, &t, sendbuf, sendcount, sendtype)?;
        let c = recvcounts.read(f, "recvcounts", t.peers())?;
        let d = displs.read(f, "displs", t.peers())?;
        let blocks = v_blocks(f, recvbuf, &c, &d, recvtype)?;
        coll::allgather(f, t.id, mode, send, blocks, None)
    })
}

/// The send blocks of an all-to-all: `None` for `MPI_IN_PLACE`.
fn alltoall_send(
    f: &str,
    t: &Target,
    sendbuf: *const c_void,
    blocks: impl FnOnce() -> MpiResult<Vec<UserBuf>>,
) -> MpiResult<Option<Vec<UserBuf>>> {
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
    blocks().map(Some)
}

pub fn alltoall(
    f: &'static str,
    mode: Mode,
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
        let t = Target::of(f, comm)?;
        let n = t.peers();
        let send = alltoall_send(f, &t, sendbuf, || {
            equal_blocks(f, sendbuf, n, sendcount, sendtype)
        })?;
        let recv = equal_blocks(f, recvbuf, n, recvcount, recvtype)?;
        coll::alltoall(f, t.id, mode, send, recv)
    })
}

pub fn alltoallv(
    f: &'static str,
    mode: Mode,
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
        let n = t.peers();
        let send = alltoall_send(f, &t, sendbuf, || {
            let c = sendcounts.read(f, "sendcounts", n)?;
            let d = sdispls.read(f, "sdispls", n)?;
            v_blocks(f, sendbuf, &c, &d, sendtype)
        })?;
        let c = recvcounts.read(f, "recvcounts", n)?;
        let d = rdispls.read(f, "rdispls", n)?;
        let recv = v_blocks(f, recvbuf, &c, &d, recvtype)?;
        coll::alltoall(f, t.id, mode, send, recv)
    })
}

pub fn alltoallw(
    f: &'static str,
    mode: Mode,
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
        let n = t.peers();
        let send = alltoall_send(f, &t, sendbuf, || {
            let c = sendcounts.read(f, "sendcounts", n)?;
            let d = sdispls.read(f, "sdispls", n)?;
            w_blocks(f, sendbuf, &c, &d, slice(f, "sendtypes", sendtypes, n)?)
        })?;
        let c = recvcounts.read(f, "recvcounts", n)?;
        let d = rdispls.read(f, "rdispls", n)?;
        let recv = w_blocks(f, recvbuf, &c, &d, slice(f, "recvtypes", recvtypes, n)?)?;
        coll::alltoall(f, t.id, mode, send, recv)
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
        let o = op::resolve(f, op)?;
        let is_root = t.is_root(root);
        let send = if in_place(sendbuf) {
            if !is_root || t.remote.is_some() {
                return Err(MpiError::arg(
                    ErrorClass::Buffer,
                    f,
                    "sendbuf",
                    "MPI_IN_PLACE",
                    "allowed at the root only",
                ));
            }
            None
        } else {
            Some(buffer(f, sendbuf, n, dtype)?)
        };
        let recv = if is_root {
            Some(buffer(f, recvbuf, n, dtype)?)
        } else {
            None
        };
        coll::reduce(f, t.id, mode, send, recv, o, root)
    })
}

/// Send side of the allreduce-like calls: `None` for `MPI_IN_PLACE`.
fn reduce_send(
    f: &str,
    t: &Target,
    sendbuf: *const c_void,
    n: i64,
    dtype: usize,
) -> MpiResult<Option<UserBuf>> {
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
    buffer(f, sendbuf, n, dtype).map(Some)
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
        let t = Target::of(f, comm)?;
        let o = op::resolve(f, op)?;
        let send = reduce_send(f, &t, sendbuf, n, dtype)?;
        let recv = buffer(f, recvbuf, n, dtype)?;
        coll::allreduce(f, t.id, mode, send, recv, o)
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
        let o = op::resolve(f, op)?;
        let send = reduce_send(f, &t, sendbuf, n, dtype)?;
        let recv = buffer(f, recvbuf, n, dtype)?;
        coll::scan(f, t.id, mode, send, recv, o, exclusive)
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
    let o = op::resolve(f, op)?;
    for &c in &counts {
        count(f, "recvcounts", c)?;
    }
    let total: i64 = counts.iter().sum();
    let input = if in_place(sendbuf) {
        buffer(f, recvbuf, total, dtype)?
    } else {
        reduce_send(f, &t, sendbuf, total, dtype)?.expect("not in place")
    };
    let mine = buffer(f, recvbuf, counts[t.rank], dtype)?;
    let counts = counts.iter().map(|&c| c as u64).collect();
    coll::reduce_scatter(f, t.id, mode, input, mine, counts, o)
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

// ---------------------------------------------------------------- neighbourhood

pub fn neighbor_allgather(
    f: &'static str,
    mode: Mode,
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
        let t = Target::of(f, comm)?;
        let (ns, nd) = coll::neighbor_counts(f, t.id)?;
        no_in_place(f, "sendbuf", sendbuf)?;
        let mine = buffer(f, sendbuf, sendcount, sendtype)?;
        let recv = equal_blocks(f, recvbuf, ns, recvcount, recvtype)?;
        coll::neighbor_exchange(f, t.id, mode, vec![mine; nd], recv)
    })
}

pub fn neighbor_allgatherv(
    f: &'static str,
    mode: Mode,
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
        let (ns, nd) = coll::neighbor_counts(f, t.id)?;
        no_in_place(f, "sendbuf", sendbuf)?;
        let mine = buffer(f, sendbuf, sendcount, sendtype)?;
        let c = recvcounts.read(f, "recvcounts", ns)?;
        let d = displs.read(f, "displs", ns)?;
        let recv = v_blocks(f, recvbuf, &c, &d, recvtype)?;
        coll::neighbor_exchange(f, t.id, mode, vec![mine; nd], recv)
    })
}

pub fn neighbor_alltoall(
    f: &'static str,
    mode: Mode,
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
        let t = Target::of(f, comm)?;
        let (ns, nd) = coll::neighbor_counts(f, t.id)?;
        no_in_place(f, "sendbuf", sendbuf)?;
        let send = equal_blocks(f, sendbuf, nd, sendcount, sendtype)?;
        let recv = equal_blocks(f, recvbuf, ns, recvcount, recvtype)?;
        coll::neighbor_exchange(f, t.id, mode, send, recv)
    })
}

pub fn neighbor_alltoallv(
    f: &'static str,
    mode: Mode,
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
        let (ns, nd) = coll::neighbor_counts(f, t.id)?;
        no_in_place(f, "sendbuf", sendbuf)?;
        let (sc, sd) = (
            sendcounts.read(f, "sendcounts", nd)?,
            sdispls.read(f, "sdispls", nd)?,
        );
        let (rc, rd) = (
            recvcounts.read(f, "recvcounts", ns)?,
            rdispls.read(f, "rdispls", ns)?,
        );
        let send = v_blocks(f, sendbuf, &sc, &sd, sendtype)?;
        let recv = v_blocks(f, recvbuf, &rc, &rd, recvtype)?;
        coll::neighbor_exchange(f, t.id, mode, send, recv)
    })
}

pub fn neighbor_alltoallw(
    f: &'static str,
    mode: Mode,
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
        let (ns, nd) = coll::neighbor_counts(f, t.id)?;
        no_in_place(f, "sendbuf", sendbuf)?;
        let (sc, sd) = (
            sendcounts.read(f, "sendcounts", nd)?,
            sdispls.read(f, "sdispls", nd)?,
        );
        let (rc, rd) = (
            recvcounts.read(f, "recvcounts", ns)?,
            rdispls.read(f, "rdispls", ns)?,
        );
        let send = w_blocks(f, sendbuf, &sc, &sd, slice(f, "sendtypes", sendtypes, nd)?)?;
        let recv = w_blocks(f, recvbuf, &rc, &rd, slice(f, "recvtypes", recvtypes, ns)?)?;
        coll::neighbor_exchange(f, t.id, mode, send, recv)
    })
}
