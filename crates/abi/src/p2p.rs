//! Point-to-point calls: every send mode, receives, persistent requests, probes, the
//! Wait/Test family, cancel, counts, and the buffered-mode buffer.

use crate::comm::{resolve, with_comm};
use crate::consts::*;
use crate::error::{call, Scope};
use crate::handle::{self, store_status, Kind, MpiStatus};
use crate::mpi4_requests::{answer_queries, then_free, CancelCall};
use crate::types;
use crate::util::{count, out, slice, slice_mut};
use crossmpi_core::comm::CommId;
use crossmpi_core::datatype::Basic;
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::matching::Unexpected;
use crossmpi_core::p2p;
use crossmpi_core::request::{Persistent, ReqId, SendMode, Status, PROC_NULL};
use crossmpi_core::runtime::{self, Runtime};
use crossmpi_core::slab::Slab;
use crossmpi_core::userbuf::{self, UserBuf};
use std::os::raw::{c_int, c_void};
use std::sync::Mutex;

/// Messages taken by `MPI_Mprobe`/`MPI_Improbe`, until `MPI_Mrecv` receives them.
static MESSAGES: Mutex<Slab<Unexpected>> = Mutex::new(Slab::new_const());

/// The type and count of `n` elements of a predefined type whose elements lie dense, by
/// table lookup; None for other types, a bad count, or a null buffer with data (those
/// take [`buffer`], which checks them and names the error).
fn dense_parts(buf: *const c_void, n: i64, datatype: usize) -> Option<(Basic, u64)> {
    let basic = types::predefined_dense(datatype)?;
    let count = u64::try_from(n).ok()?;
    let len = count.checked_mul(basic.size())?;
    usize::try_from(len).ok()?;
    (!buf.is_null() || len == 0).then_some((basic, count))
}

/// Bytes of `n` elements of a predefined dense type (see [`dense_parts`]).
pub(crate) fn dense_len(buf: *const c_void, n: i64, datatype: usize) -> Option<usize> {
    dense_parts(buf, n, datatype).map(|(basic, count)| (basic.size() * count) as usize)
}

/// `n` elements of a predefined dense type as a typed buffer, built without the general
/// path's checks and layout computation (see [`dense_parts`]).
pub(crate) fn dense_buffer(buf: *const c_void, n: i64, datatype: usize) -> Option<UserBuf> {
    let (basic, count) = dense_parts(buf, n, datatype)?;
    Some(userbuf::dense(buf as usize, count, basic))
}

/// A typed buffer argument, checked: count, datatype, and no NULL address for data that
/// would lie near address 0 (NULL is also `MPI_BOTTOM`, legal with absolute addresses).
pub fn buffer(function: &str, buf: *const c_void, n: i64, datatype: usize) -> MpiResult<UserBuf> {
    let n = count(function, "count", n)?;
    let t = types::committed(function, "datatype", datatype)?;
    let b = UserBuf::new(buf as usize, n, t);
    not_null(function, buf, b.bytes(), b.first_address())?;
    Ok(b)
}

/// Checks a buffer argument as [`buffer`] does, for a call that moves no data (a peer
/// is `MPI_PROC_NULL`): without building it, which costs a reference to a built type.
pub fn check_buffer(function: &str, buf: *const c_void, n: i64, datatype: usize) -> MpiResult<()> {
    let n = count(function, "count", n)?;
    types::with_committed(function, "datatype", datatype, |t| {
        let (lo, _) = userbuf::data_span(n, t);
        not_null(function, buf, t.size() * n, (buf as i64 + lo) as usize)
    })
}

fn not_null(function: &str, buf: *const c_void, bytes: u64, first_address: usize) -> MpiResult<()> {
    if buf.is_null() && bytes > 0 && first_address < 4096 {
        return Err(MpiError::arg(
            ErrorClass::Buffer,
            function,
            "buf",
            "NULL",
            format!("{bytes} bytes of data need a buffer"),
        ));
    }
    Ok(())
}

/// The request a handle names.
pub fn request(rt: &Runtime, function: &str, arg: &str, h: usize) -> MpiResult<ReqId> {
    let slot = handle::decode(Kind::Request, h).ok_or_else(|| {
        MpiError::arg(
            ErrorClass::Request,
            function,
            arg,
            handle::describe(h),
            "not a request handle",
        )
    })?;
    rt.st
        .requests
        .by_index(slot)
        .map(|(id, _)| id)
        .ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Request,
                function,
                arg,
                handle::describe(h),
                "freed or already completed",
            )
        })
}

pub(crate) fn request_handle(id: ReqId) -> usize {
    handle::encode(Kind::Request, id.index)
}

/// The error a completed request's status carries, as its completion call reports it: a
/// truncated receive, or another operation's error code (a failed nonblocking collective's
/// class, a generalized request's `query_fn` code), which the call returns itself.
pub(crate) fn status_error(function: &str, s: &Status, capacity: u64) -> MpiResult<()> {
    match s.error {
        0 => Ok(()),
        e if e == ErrorClass::Truncate.code() => Err(MpiError::context(
            ErrorClass::Truncate,
            function,
            format!(
                "the message from rank {} (tag {}) is longer than the receive buffer ({capacity} bytes)",
                s.source, s.tag
            ),
        )),
        code => Err(crate::error::callback_failed(
            function,
            "the request's operation",
            code,
        )),
    }
}

pub(crate) fn start_send(
    function: &str,
    buf: *const c_void,
    n: i64,
    datatype: usize,
    dest: c_int,
    tag: c_int,
    comm: usize,
    mode: SendMode,
) -> MpiResult<ReqId> {
    let b = buffer(function, buf, n, datatype)?;
    with_comm(function, comm, |rt, id| {
        crate::mpi4_buffers::for_send(rt, id, mode, |rt| {
            rt.isend(function, id, b, dest, tag, mode)
        })
    })
}

pub(crate) fn send(
    function: &str,
    buf: *const c_void,
    n: i64,
    datatype: usize,
    dest: c_int,
    tag: c_int,
    comm: usize,
    mode: SendMode,
) -> c_int {
    call(Scope::Comm(comm), || {
        send_blocking(function, buf, n, datatype, dest, tag, comm, mode)
    })
}

/// A blocking send (the body of `MPI_Send` and its modes).
#[allow(clippy::too_many_arguments)]
fn send_blocking(
    function: &str,
    buf: *const c_void,
    n: i64,
    datatype: usize,
    dest: c_int,
    tag: c_int,
    comm: usize,
    mode: SendMode,
) -> MpiResult<()> {
    if matches!(mode, SendMode::Standard | SendMode::Ready) {
        if let Some(len) = dense_len(buf, n, datatype) {
            if with_comm(function, comm, |rt, id| {
                rt.send_dense(function, id, buf as usize, len, dest, tag)
            })? {
                return Ok(());
            }
        }
    }
    let b = buffer(function, buf, n, datatype)?;
    match with_comm(function, comm, |rt, id| {
        crate::mpi4_buffers::for_send(rt, id, mode, |rt| rt.send(function, id, b, dest, tag, mode))
    })? {
        Some(req) => p2p::wait(function, req).map(|_| ()),
        None => Ok(()),
    }
}

pub(crate) fn isend(
    function: &str,
    buf: *const c_void,
    n: i64,
    datatype: usize,
    dest: c_int,
    tag: c_int,
    comm: usize,
    mode: SendMode,
    request: *mut usize,
) -> c_int {
    call(Scope::Comm(comm), || {
        let req = start_send(function, buf, n, datatype, dest, tag, comm, mode)?;
        out(function, "request", request, request_handle(req))
    })
}

pub(crate) fn start_recv(
    function: &str,
    buf: *mut c_void,
    n: i64,
    datatype: usize,
    source: c_int,
    tag: c_int,
    comm: usize,
) -> MpiResult<(ReqId, u64)> {
    let b = buffer(function, buf, n, datatype)?;
    let capacity = b.bytes();
    with_comm(function, comm, |rt, id| {
        rt.irecv(function, id, b, source, tag)
    })
    .map(|r| (r, capacity))
}

pub(crate) fn recv(
    function: &str,
    buf: *mut c_void,
    n: i64,
    datatype: usize,
    source: c_int,
    tag: c_int,
    comm: usize,
    status: *mut MpiStatus,
) -> c_int {
    call(Scope::Comm(comm), || {
        recv_blocking(function, buf, n, datatype, source, tag, comm, status)
    })
}

/// A blocking receive (the body of `MPI_Recv`).
#[allow(clippy::too_many_arguments)]
fn recv_blocking(
    function: &str,
    buf: *mut c_void,
    n: i64,
    datatype: usize,
    source: c_int,
    tag: c_int,
    comm: usize,
    status: *mut MpiStatus,
) -> MpiResult<()> {
    let b = buffer(function, buf, n, datatype)?;
    let capacity = b.bytes();
    let s = p2p::recv(function, |rt| resolve(rt, function, comm), b, source, tag)?;
    store_status(status, &s);
    status_error(function, &s, capacity)
}

pub(crate) fn persistent(
    function: &str,
    recipe: impl FnOnce(CommId) -> Persistent,
    comm: usize,
    request: *mut usize,
) -> c_int {
    call(Scope::Comm(comm), || {
        let req = with_comm(function, comm, |rt, id| rt.persistent(function, recipe(id)))?;
        out(function, "request", request, request_handle(req))
    })
}

pub(crate) fn send_init(
    function: &str,
    buf: *const c_void,
    n: i64,
    datatype: usize,
    dest: c_int,
    tag: c_int,
    comm: usize,
    mode: SendMode,
    request: *mut usize,
) -> c_int {
    match buffer(function, buf, n, datatype) {
        Ok(b) => persistent(
            function,
            |id| Persistent::Send {
                buf: b,
                comm: id,
                dest,
                tag,
                mode,
            },
            comm,
            request,
        ),
        Err(e) => crate::error::raise(Scope::Comm(comm), e),
    }
}

/// The request array of a multiple-completion call, `count` handles long.
fn request_array<'a>(
    function: &str,
    count_arg: &str,
    count: c_int,
    requests: *mut usize,
) -> MpiResult<&'a mut [usize]> {
    let n = crate::util::count(function, count_arg, count as i64)? as usize;
    slice_mut(function, "array_of_requests", requests, n)
}

/// Reads a request handle through a pointer (for calls that reset it to NULL).
pub(crate) fn read_handle(function: &str, p: *mut usize) -> MpiResult<usize> {
    if p.is_null() {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            "request",
            "NULL",
            "a pointer to a request is required",
        ));
    }
    // SAFETY: non-null MPI_Request* argument (C ABI contract).
    Ok(unsafe { *p })
}

/// Completes one request if done: its status, with the handle reset to NULL for a
/// non-persistent request. `None` while it runs.
pub(crate) fn try_complete(
    rt: &mut Runtime,
    function: &str,
    h: &mut usize,
) -> MpiResult<Option<Status>> {
    if *h == MPI_REQUEST_NULL {
        return Ok(Some(Status::proc_null_empty()));
    }
    let id = request(rt, function, "request", *h)?;
    crate::mpi4_requests::settle(rt, *h);
    let persistent = rt
        .st
        .requests
        .get(id)
        .is_some_and(|r| r.persistent.is_some());
    let done = rt.take_if_done(id);
    if done.is_some() && !persistent {
        crate::mpi4_requests::release(*h);
        *h = MPI_REQUEST_NULL;
    }
    Ok(done)
}

/// True for entries Waitany/Waitsome ignore: NULL and inactive persistent requests.
pub(crate) fn is_inactive(rt: &Runtime, h: usize) -> bool {
    if h == MPI_REQUEST_NULL {
        return true;
    }
    handle::decode(Kind::Request, h)
        .and_then(|slot| rt.st.requests.by_index(slot))
        .is_some_and(|(_, r)| r.persistent.is_some() && !r.active)
}

fn check_error(function: &str, s: &Status) -> MpiResult<()> {
    status_error(function, s, s.bytes)
}

pub(crate) fn statuses<'a>(
    function: &str,
    p: *mut MpiStatus,
    n: usize,
) -> MpiResult<Option<&'a mut [MpiStatus]>> {
    if p.is_null() {
        Ok(None)
    } else {
        slice_mut(function, "array_of_statuses", p, n).map(Some)
    }
}

/// Stores the statuses of a completed Waitall/Testall and reports failed requests.
fn complete_all(
    function: &str,
    array_of_statuses: *mut MpiStatus,
    results: &[Option<Status>],
) -> MpiResult<()> {
    let mut sts = statuses(function, array_of_statuses, results.len())?;
    if let Some(sts) = sts.as_deref_mut() {
        for (out, s) in sts.iter_mut().zip(results) {
            store_status(out, s.as_ref().expect("every request completed"));
        }
    }
    in_status(function, results, sts)
}

/// Errors of a multiple completion: `MPI_ERR_IN_STATUS`, with each status's error set.
pub(crate) fn in_status(
    function: &str,
    results: &[Option<Status>],
    sts: Option<&mut [MpiStatus]>,
) -> MpiResult<()> {
    let failed: Vec<usize> = results
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_some_and(|s| s.error != 0))
        .map(|(i, _)| i)
        .collect();
    if failed.is_empty() {
        return Ok(());
    }
    if let Some(sts) = sts {
        for (i, s) in results.iter().enumerate() {
            sts[i].error = match s {
                Some(s) => s.error,
                None => MPI_ERR_PENDING,
            };
        }
    }
    Err(MpiError::context(
        ErrorClass::InStatus,
        function,
        format!("requests {failed:?} failed (see the statuses' MPI_ERROR fields)"),
    ))
}

export! {
    fn MPI_Send / PMPI_Send(buf: *const c_void, count: c_int, datatype: usize, dest: c_int, tag: c_int, comm: usize) -> c_int {
        send("MPI_Send", buf, count as i64, datatype, dest, tag, comm, SendMode::Standard)
    }
    fn MPI_Ssend / PMPI_Ssend(buf: *const c_void, count: c_int, datatype: usize, dest: c_int, tag: c_int, comm: usize) -> c_int {
        send("MPI_Ssend", buf, count as i64, datatype, dest, tag, comm, SendMode::Synchronous)
    }
    fn MPI_Rsend / PMPI_Rsend(buf: *const c_void, count: c_int, datatype: usize, dest: c_int, tag: c_int, comm: usize) -> c_int {
        send("MPI_Rsend", buf, count as i64, datatype, dest, tag, comm, SendMode::Ready)
    }
    fn MPI_Bsend / PMPI_Bsend(buf: *const c_void, count: c_int, datatype: usize, dest: c_int, tag: c_int, comm: usize) -> c_int {
        send("MPI_Bsend", buf, count as i64, datatype, dest, tag, comm, SendMode::Buffered)
    }
    fn MPI_Send_c / PMPI_Send_c(buf: *const c_void, count: i64, datatype: usize, dest: c_int, tag: c_int, comm: usize) -> c_int {
        send("MPI_Send_c", buf, count, datatype, dest, tag, comm, SendMode::Standard)
    }
    fn MPI_Isend / PMPI_Isend(buf: *const c_void, count: c_int, datatype: usize, dest: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        isend("MPI_Isend", buf, count as i64, datatype, dest, tag, comm, SendMode::Standard, request)
    }
    fn MPI_Issend / PMPI_Issend(buf: *const c_void, count: c_int, datatype: usize, dest: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        isend("MPI_Issend", buf, count as i64, datatype, dest, tag, comm, SendMode::Synchronous, request)
    }
    fn MPI_Irsend / PMPI_Irsend(buf: *const c_void, count: c_int, datatype: usize, dest: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        isend("MPI_Irsend", buf, count as i64, datatype, dest, tag, comm, SendMode::Ready, request)
    }
    fn MPI_Ibsend / PMPI_Ibsend(buf: *const c_void, count: c_int, datatype: usize, dest: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        isend("MPI_Ibsend", buf, count as i64, datatype, dest, tag, comm, SendMode::Buffered, request)
    }
    fn MPI_Isend_c / PMPI_Isend_c(buf: *const c_void, count: i64, datatype: usize, dest: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        isend("MPI_Isend_c", buf, count, datatype, dest, tag, comm, SendMode::Standard, request)
    }

    fn MPI_Recv / PMPI_Recv(buf: *mut c_void, count: c_int, datatype: usize, source: c_int, tag: c_int, comm: usize, status: *mut MpiStatus) -> c_int {
        recv("MPI_Recv", buf, count as i64, datatype, source, tag, comm, status)
    }
    fn MPI_Recv_c / PMPI_Recv_c(buf: *mut c_void, count: i64, datatype: usize, source: c_int, tag: c_int, comm: usize, status: *mut MpiStatus) -> c_int {
        recv("MPI_Recv_c", buf, count, datatype, source, tag, comm, status)
    }
    fn MPI_Irecv / PMPI_Irecv(buf: *mut c_void, count: c_int, datatype: usize, source: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        irecv("MPI_Irecv", buf, count as i64, datatype, source, tag, comm, request)
    }

    fn MPI_Send_init / PMPI_Send_init(buf: *const c_void, count: c_int, datatype: usize, dest: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        send_init("MPI_Send_init", buf, count as i64, datatype, dest, tag, comm, SendMode::Standard, request)
    }
    fn MPI_Ssend_init / PMPI_Ssend_init(buf: *const c_void, count: c_int, datatype: usize, dest: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        send_init("MPI_Ssend_init", buf, count as i64, datatype, dest, tag, comm, SendMode::Synchronous, request)
    }
    fn MPI_Rsend_init / PMPI_Rsend_init(buf: *const c_void, count: c_int, datatype: usize, dest: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        send_init("MPI_Rsend_init", buf, count as i64, datatype, dest, tag, comm, SendMode::Ready, request)
    }
    fn MPI_Bsend_init / PMPI_Bsend_init(buf: *const c_void, count: c_int, datatype: usize, dest: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        send_init("MPI_Bsend_init", buf, count as i64, datatype, dest, tag, comm, SendMode::Buffered, request)
    }
    fn MPI_Recv_init / PMPI_Recv_init(buf: *mut c_void, count: c_int, datatype: usize, source: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        recv_init("MPI_Recv_init", buf, count as i64, datatype, source, tag, comm, request)
    }

    fn MPI_Start / PMPI_Start(request: *mut usize) -> c_int {
        let f = "MPI_Start";
        // Persistent collectives and partitioned requests start outside the core.
        if let Some(rc) = read_handle(f, request).ok().and_then(|h| crate::mpi4_persistent::start(f, h)) {
            return rc;
        }
        call(Scope::Process, || {
            let h = read_handle(f, request)?;
            runtime::with(f, |rt| {
                let id = self::request(rt, f, "request", h)?;
                crate::mpi4_buffers::for_start(rt, id, |rt| rt.start(f, id))
            })
        })
    }

    fn MPI_Startall / PMPI_Startall(count: c_int, array_of_requests: *mut usize) -> c_int {
        let f = "MPI_Startall";
        let mut hs: &[usize] = &[];
        let rc = call(Scope::Process, || {
            let n = crate::util::count(f, "count", count as i64)? as usize;
            hs = slice(f, "array_of_requests", array_of_requests, n)?;
            Ok(())
        });
        // In order, one at a time: a persistent collective starts outside the core.
        for &h in hs.iter().take_while(|_| rc == MPI_SUCCESS) {
            let rc = crate::mpi4_persistent::start(f, h).unwrap_or_else(|| {
                call(Scope::Process, || {
                    runtime::with(f, |rt| {
                        let id = request(rt, f, "array_of_requests", h)?;
                        crate::mpi4_buffers::for_start(rt, id, |rt| rt.start(f, id))
                    })
                })
            });
            if rc != MPI_SUCCESS {
                return rc;
            }
        }
        rc
    }

    fn MPI_Sendrecv / PMPI_Sendrecv(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, source: c_int, recvtag: c_int, comm: usize, status: *mut MpiStatus) -> c_int {
        sendrecv("MPI_Sendrecv", sendbuf, sendcount as i64, sendtype, dest, sendtag, recvbuf, recvcount as i64, recvtype, source, recvtag, comm, status)
    }

    fn MPI_Sendrecv_replace / PMPI_Sendrecv_replace(buf: *mut c_void, count: c_int, datatype: usize, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: usize, status: *mut MpiStatus) -> c_int {
        sendrecv_replace("MPI_Sendrecv_replace", buf, count as i64, datatype, dest, sendtag, source, recvtag, comm, status)
    }

    fn MPI_Wait / PMPI_Wait(request: *mut usize, status: *mut MpiStatus) -> c_int {
        let f = "MPI_Wait";
        call(Scope::Process, || then_free(f, || {
            let mut h = read_handle(f, request)?;
            answer_queries(&[h]);
            let s = runtime::wait_for(f, |rt| try_complete(rt, f, &mut h).transpose())??;
            out(f, "request", request, h)?;
            store_status(status, &s);
            check_error(f, &s)
        }))
    }

    fn MPI_Test / PMPI_Test(request: *mut usize, flag: *mut c_int, status: *mut MpiStatus) -> c_int {
        let f = "MPI_Test";
        call(Scope::Process, || then_free(f, || {
            let mut h = read_handle(f, request)?;
            answer_queries(&[h]);
            let done = runtime::with(f, |rt| {
                rt.poll();
                try_complete(rt, f, &mut h)
            })?;
            out(f, "request", request, h)?;
            out(f, "flag", flag, done.is_some() as c_int)?;
            match done {
                Some(s) => {
                    store_status(status, &s);
                    check_error(f, &s)
                }
                None => Ok(()),
            }
        }))
    }

    fn MPI_Waitall / PMPI_Waitall(count: c_int, array_of_requests: *mut usize, array_of_statuses: *mut MpiStatus) -> c_int {
        let f = "MPI_Waitall";
        call(Scope::Process, || then_free(f, || {
            let hs = request_array(f, "count", count, array_of_requests)?;
            answer_queries(hs);
            let n = hs.len();
            let mut results: Vec<Option<Status>> = vec![None; n];
            runtime::wait_for(f, |rt| {
                for i in 0..n {
                    if results[i].is_none() {
                        match try_complete(rt, f, &mut hs[i]) {
                            Ok(s) => results[i] = s,
                            Err(e) => return Some(Err(e)),
                        }
                    }
                }
                results.iter().all(Option::is_some).then_some(Ok(()))
            })??;
            complete_all(f, array_of_statuses, &results)
        }))
    }

    fn MPI_Testall / PMPI_Testall(count: c_int, array_of_requests: *mut usize, flag: *mut c_int, array_of_statuses: *mut MpiStatus) -> c_int {
        let f = "MPI_Testall";
        call(Scope::Process, || then_free(f, || {
            let hs = request_array(f, "count", count, array_of_requests)?;
            answer_queries(hs);
            let n = hs.len();
            let results = runtime::with(f, |rt| {
                rt.poll();
                // Either every request completes (and is released) or none does.
                for &h in hs.iter() {
                    if h != MPI_REQUEST_NULL {
                        let id = request(rt, f, "array_of_requests", h)?;
                        crate::mpi4_requests::settle(rt, h);
                        if rt.peek_done(id).is_none() {
                            return Ok(None);
                        }
                    }
                }
                let mut results = Vec::with_capacity(n);
                for h in hs.iter_mut() {
                    results.push(try_complete(rt, f, h)?);
                }
                Ok(Some(results))
            })?;
            out(f, "flag", flag, results.is_some() as c_int)?;
            let Some(results) = results else {
                return Ok(());
            };
            complete_all(f, array_of_statuses, &results)
        }))
    }

    fn MPI_Waitany / PMPI_Waitany(count: c_int, array_of_requests: *mut usize, index: *mut c_int, status: *mut MpiStatus) -> c_int {
        let f = "MPI_Waitany";
        call(Scope::Process, || then_free(f, || {
            let hs = request_array(f, "count", count, array_of_requests)?;
            answer_queries(hs);
            let found = runtime::wait_for(f, |rt| {
                if hs.iter().all(|&h| is_inactive(rt, h)) {
                    return Some(Ok(None));
                }
                for (i, h) in hs.iter_mut().enumerate() {
                    if is_inactive(rt, *h) {
                        continue;
                    }
                    match try_complete(rt, f, h) {
                        Ok(Some(s)) => return Some(Ok(Some((i, s)))),
                        Ok(None) => {}
                        Err(e) => return Some(Err(e)),
                    }
                }
                None
            })??;
            match found {
                Some((i, s)) => {
                    out(f, "index", index, i as c_int)?;
                    store_status(status, &s);
                    check_error(f, &s)
                }
                None => {
                    out(f, "index", index, MPI_UNDEFINED)?;
                    store_status(status, &Status::proc_null_empty());
                    Ok(())
                }
            }
        }))
    }

    fn MPI_Testany / PMPI_Testany(count: c_int, array_of_requests: *mut usize, index: *mut c_int, flag: *mut c_int, status: *mut MpiStatus) -> c_int {
        let f = "MPI_Testany";
        call(Scope::Process, || then_free(f, || {
            let hs = request_array(f, "count", count, array_of_requests)?;
            answer_queries(hs);
            let found = runtime::with(f, |rt| {
                rt.poll();
                if hs.iter().all(|&h| is_inactive(rt, h)) {
                    return Ok(Some(None));
                }
                for (i, h) in hs.iter_mut().enumerate() {
                    if !is_inactive(rt, *h) {
                        if let Some(s) = try_complete(rt, f, h)? {
                            return Ok(Some(Some((i, s))));
                        }
                    }
                }
                Ok(None)
            })?;
            match found {
                None => {
                    out(f, "flag", flag, 0)?;
                    out(f, "index", index, MPI_UNDEFINED)
                }
                Some(None) => {
                    out(f, "flag", flag, 1)?;
                    out(f, "index", index, MPI_UNDEFINED)?;
                    store_status(status, &Status::proc_null_empty());
                    Ok(())
                }
                Some(Some((i, s))) => {
                    out(f, "flag", flag, 1)?;
                    out(f, "index", index, i as c_int)?;
                    store_status(status, &s);
                    check_error(f, &s)
                }
            }
        }))
    }

    fn MPI_Waitsome / PMPI_Waitsome(incount: c_int, array_of_requests: *mut usize, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut MpiStatus) -> c_int {
        some("MPI_Waitsome", true, incount, array_of_requests, outcount, array_of_indices, array_of_statuses)
    }

    fn MPI_Testsome / PMPI_Testsome(incount: c_int, array_of_requests: *mut usize, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut MpiStatus) -> c_int {
        some("MPI_Testsome", false, incount, array_of_requests, outcount, array_of_indices, array_of_statuses)
    }

    fn MPI_Request_get_status / PMPI_Request_get_status(request: usize, flag: *mut c_int, status: *mut MpiStatus) -> c_int {
        let f = "MPI_Request_get_status";
        call(Scope::Process, || {
            let done = if request == MPI_REQUEST_NULL {
                Some(Status::proc_null_empty())
            } else if let Some(generalized) = crate::mpi4_requests::query_now(request) {
                generalized
            } else {
                runtime::with(f, |rt| {
                    rt.poll();
                    let id = self::request(rt, f, "request", request)?;
                    crate::mpi4_requests::settle(rt, request);
                    Ok(rt.peek_done(id))
                })?
            };
            out(f, "flag", flag, done.is_some() as c_int)?;
            if let Some(s) = done {
                store_status(status, &s);
            }
            Ok(())
        })
    }

    fn MPI_Request_free / PMPI_Request_free(request: *mut usize) -> c_int {
        let f = "MPI_Request_free";
        call(Scope::Process, || then_free(f, || {
            let h = read_handle(f, request)?;
            runtime::with(f, |rt| {
                if crate::mpi4_requests::is_composed(h) {
                    return crate::mpi4_requests::free(rt, f, h);
                }
                let id = self::request(rt, f, "request", h)?;
                crate::mpi4_persistent::forget(h);
                crate::mpi4_partitioned::forget(h);
                rt.request_free(f, id).map(|_| ())
            })?;
            out(f, "request", request, MPI_REQUEST_NULL)
        }))
    }

    fn MPI_Cancel / PMPI_Cancel(request: *mut usize) -> c_int {
        let f = "MPI_Cancel";
        call(Scope::Process, || {
            let h = read_handle(f, request)?;
            let generalized = runtime::with(f, |rt| {
                let id = self::request(rt, f, "request", h)?;
                match crate::mpi4_requests::cancel(h) {
                    Some(call) => Ok(Some(call)),
                    None => rt.cancel(f, id).map(|_| None),
                }
            })?;
            match generalized.map(CancelCall::run) {
                None | Some(MPI_SUCCESS) => Ok(()),
                Some(code) => Err(crate::error::callback_failed(f, "the generalized request's cancel_fn", code)),
            }
        })
    }

    fn MPI_Test_cancelled / PMPI_Test_cancelled(status: *const MpiStatus, flag: *mut c_int) -> c_int {
        let f = "MPI_Test_cancelled";
        call(Scope::Process, || {
            let s = slice(f, "status", status, 1)?;
            out(f, "flag", flag, s[0].cancelled() as c_int)
        })
    }

    fn MPI_Get_count / PMPI_Get_count(status: *const MpiStatus, datatype: usize, count: *mut c_int) -> c_int {
        let f = "MPI_Get_count";
        call(Scope::Process, || out(f, "count", count, as_int(received_count(f, status, datatype)?)))
    }

    fn MPI_Get_elements / PMPI_Get_elements(status: *const MpiStatus, datatype: usize, count: *mut c_int) -> c_int {
        let f = "MPI_Get_elements";
        call(Scope::Process, || out(f, "count", count, as_int(received_elements(f, status, datatype)?)))
    }

    fn MPI_Get_elements_x / PMPI_Get_elements_x(status: *const MpiStatus, datatype: usize, count: *mut i64) -> c_int {
        let f = "MPI_Get_elements_x";
        call(Scope::Process, || out(f, "count", count, as_count(received_elements(f, status, datatype)?)))
    }

    fn MPI_Iprobe / PMPI_Iprobe(source: c_int, tag: c_int, comm: usize, flag: *mut c_int, status: *mut MpiStatus) -> c_int {
        let f = "MPI_Iprobe";
        call(Scope::Comm(comm), || {
            let found = with_comm(f, comm, |rt, id| rt.probe_unexpected(f, id, source, tag, false))?;
            out(f, "flag", flag, found.is_some() as c_int)?;
            if let Some((s, _)) = found {
                store_status(status, &s);
            }
            Ok(())
        })
    }

    fn MPI_Probe / PMPI_Probe(source: c_int, tag: c_int, comm: usize, status: *mut MpiStatus) -> c_int {
        let f = "MPI_Probe";
        call(Scope::Comm(comm), || {
            let id = runtime::with(f, |rt| resolve(rt, f, comm))?;
            let (s, _) = runtime::wait_for(f, |rt| rt.probe_unexpected(f, id, source, tag, false).transpose())??;
            store_status(status, &s);
            Ok(())
        })
    }

    fn MPI_Improbe / PMPI_Improbe(source: c_int, tag: c_int, comm: usize, flag: *mut c_int, message: *mut usize, status: *mut MpiStatus) -> c_int {
        let f = "MPI_Improbe";
        call(Scope::Comm(comm), || {
            let found = with_comm(f, comm, |rt, id| rt.probe_unexpected(f, id, source, tag, true))?;
            out(f, "flag", flag, found.is_some() as c_int)?;
            if let Some((s, m)) = found {
                out(f, "message", message, message_handle(m))?;
                store_status(status, &s);
            }
            Ok(())
        })
    }

    fn MPI_Mprobe / PMPI_Mprobe(source: c_int, tag: c_int, comm: usize, message: *mut usize, status: *mut MpiStatus) -> c_int {
        let f = "MPI_Mprobe";
        call(Scope::Comm(comm), || {
            let id = runtime::with(f, |rt| resolve(rt, f, comm))?;
            let (s, m) = runtime::wait_for(f, |rt| rt.probe_unexpected(f, id, source, tag, true).transpose())??;
            out(f, "message", message, message_handle(m))?;
            store_status(status, &s);
            Ok(())
        })
    }

    fn MPI_Mrecv / PMPI_Mrecv(buf: *mut c_void, count: c_int, datatype: usize, message: *mut usize, status: *mut MpiStatus) -> c_int {
        mrecv("MPI_Mrecv", buf, count as i64, datatype, message, status)
    }

    fn MPI_Imrecv / PMPI_Imrecv(buf: *mut c_void, count: c_int, datatype: usize, message: *mut usize, request: *mut usize) -> c_int {
        imrecv("MPI_Imrecv", buf, count as i64, datatype, message, request)
    }

    fn MPI_Buffer_attach / PMPI_Buffer_attach(buffer: *mut c_void, size: c_int) -> c_int {
        buffer_attach("MPI_Buffer_attach", buffer, size as i64)
    }

    fn MPI_Buffer_detach / PMPI_Buffer_detach(buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
        let f = "MPI_Buffer_detach";
        call(Scope::Process, || {
            let (addr, len) = crate::mpi4_buffers::detach_process(f)?;
            out(f, "buffer_addr", buffer_addr as *mut usize, addr)?;
            out(f, "size", size, len.min(c_int::MAX as usize) as c_int)
        })
    }
}

/// The received bytes of a status and the datatype to count them in.
fn received(
    function: &str,
    status: *const MpiStatus,
    datatype: usize,
) -> MpiResult<(u64, crossmpi_core::datatype::Datatype)> {
    let s = slice(function, "status", status, 1)?;
    Ok((s[0].bytes(), types::lookup(function, "datatype", datatype)?))
}

/// Whole elements of `datatype` a status received (`MPI_Get_count`); None if not whole.
pub fn received_count(
    function: &str,
    status: *const MpiStatus,
    datatype: usize,
) -> MpiResult<Option<u64>> {
    let (bytes, t) = received(function, status, datatype)?;
    Ok(match t.size() {
        0 if bytes == 0 => Some(0),
        size if size > 0 && bytes % size == 0 => Some(bytes / size),
        _ => None,
    })
}

/// Basic elements a status received (`MPI_Get_elements`); None if one is partial.
pub fn received_elements(
    function: &str,
    status: *const MpiStatus,
    datatype: usize,
) -> MpiResult<Option<u64>> {
    let (bytes, t) = received(function, status, datatype)?;
    Ok(t.elements_in(bytes))
}

/// A count for an `int` result: `MPI_UNDEFINED` when absent or too large.
fn as_int(n: Option<u64>) -> c_int {
    n.filter(|&n| n <= c_int::MAX as u64)
        .map_or(MPI_UNDEFINED, |n| n as c_int)
}

/// A count for an `MPI_Count` result: `MPI_UNDEFINED` when absent.
pub fn as_count(n: Option<u64>) -> i64 {
    n.map_or(MPI_UNDEFINED as i64, |n| n as i64)
}

fn message_handle(m: Option<Unexpected>) -> usize {
    match m {
        None => MPI_MESSAGE_NO_PROC,
        Some(u) => {
            let id = MESSAGES.lock().unwrap_or_else(|p| p.into_inner()).insert(u);
            handle::encode(Kind::Message, id.index)
        }
    }
}

/// Starts receiving a matched-probe message; None for `MPI_MESSAGE_NO_PROC`.
pub(crate) fn matched_receive(
    function: &str,
    buf: *mut c_void,
    n: i64,
    datatype: usize,
    message: *mut usize,
) -> MpiResult<Option<(ReqId, u64)>> {
    if message.is_null() {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            "message",
            "NULL",
            "a pointer to a message is required",
        ));
    }
    // SAFETY: non-null MPI_Message* argument (C ABI contract).
    let h = unsafe { *message };
    let b = buffer(function, buf, n, datatype)?;
    out(function, "message", message, MPI_MESSAGE_NULL)?;
    if h == MPI_MESSAGE_NO_PROC {
        return Ok(None);
    }
    let bad = || {
        MpiError::arg(
            ErrorClass::Request,
            function,
            "message",
            handle::describe(h),
            "not a message from MPI_Mprobe/MPI_Improbe",
        )
    };
    let slot = handle::decode(Kind::Message, h).ok_or_else(bad)?;
    let u = {
        let mut table = MESSAGES.lock().unwrap_or_else(|p| p.into_inner());
        let (id, _) = table.by_index(slot).ok_or_else(bad)?;
        table.remove(id).unwrap()
    };
    let capacity = b.bytes();
    runtime::with(function, |rt| {
        Ok(Some((rt.receive_message(b, u), capacity)))
    })
}

fn some(
    function: &str,
    block: bool,
    incount: c_int,
    array_of_requests: *mut usize,
    outcount: *mut c_int,
    array_of_indices: *mut c_int,
    array_of_statuses: *mut MpiStatus,
) -> c_int {
    call(Scope::Process, || {
        then_free(function, || {
            let hs = request_array(function, "incount", incount, array_of_requests)?;
            answer_queries(hs);
            let n = hs.len();
            let collect =
                |rt: &mut Runtime, hs: &mut [usize]| -> MpiResult<Option<Vec<(usize, Status)>>> {
                    if hs.iter().all(|&h| is_inactive(rt, h)) {
                        return Ok(Some(Vec::new()));
                    }
                    let mut done = Vec::new();
                    for (i, h) in hs.iter_mut().enumerate() {
                        if !is_inactive(rt, *h) {
                            if let Some(s) = try_complete(rt, function, h)? {
                                done.push((i, s));
                            }
                        }
                    }
                    Ok((!done.is_empty()).then_some(done))
                };
            let done = if block {
                runtime::wait_for(function, |rt| collect(rt, hs).transpose())??
            } else {
                runtime::with(function, |rt| {
                    rt.poll();
                    Ok(collect(rt, hs)?.unwrap_or_default())
                })?
            };
            let all_inactive = done.is_empty()
                && runtime::with(function, |rt| Ok(hs.iter().all(|&h| is_inactive(rt, h))))?;
            if all_inactive && (block || n == 0 || hs.iter().all(|&h| h == MPI_REQUEST_NULL)) {
                return out(function, "outcount", outcount, MPI_UNDEFINED);
            }
            out(function, "outcount", outcount, done.len() as c_int)?;
            let idx = slice_mut(function, "array_of_indices", array_of_indices, done.len())?;
            let mut sts = statuses(function, array_of_statuses, done.len())?;
            for (k, (i, s)) in done.iter().enumerate() {
                idx[k] = *i as c_int;
                if let Some(sts) = sts.as_deref_mut() {
                    store_status(&mut sts[k], s);
                }
            }
            let results: Vec<Option<Status>> = done.iter().map(|(_, s)| Some(*s)).collect();
            in_status(function, &results, sts)
        })
    })
}

pub(crate) fn irecv(
    f: &str,
    buf: *mut c_void,
    count: i64,
    datatype: usize,
    source: c_int,
    tag: c_int,
    comm: usize,
    request: *mut usize,
) -> c_int {
    call(Scope::Comm(comm), || {
        let (req, _) = start_recv(f, buf, count, datatype, source, tag, comm)?;
        out(f, "request", request, request_handle(req))
    })
}

pub(crate) fn recv_init(
    f: &str,
    buf: *mut c_void,
    count: i64,
    datatype: usize,
    source: c_int,
    tag: c_int,
    comm: usize,
    request: *mut usize,
) -> c_int {
    match buffer(f, buf, count, datatype) {
        Ok(b) => persistent(
            f,
            |id| Persistent::Recv {
                buf: b,
                comm: id,
                source,
                tag,
            },
            comm,
            request,
        ),
        Err(e) => crate::error::raise(Scope::Comm(comm), e),
    }
}

pub(crate) fn sendrecv(
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
    status: *mut MpiStatus,
) -> c_int {
    call(Scope::Comm(comm), || {
        // With MPI_PROC_NULL on a side there is no order to keep between the halves
        // (posting the receive first is what keeps two exchanging ranks from
        // deadlocking): the null side's arguments are checked, and the other side runs
        // as its blocking call. No requests and no reference to a built type, on a path
        // the halo exchanges at a domain's faces take many times.
        if dest == PROC_NULL || source == PROC_NULL {
            if dest == PROC_NULL {
                check_buffer(f, sendbuf, sendcount, sendtype)?;
                p2p::check_tag(f, sendtag, false)?;
            }
            if source == PROC_NULL {
                check_buffer(f, recvbuf, recvcount, recvtype)?;
                p2p::check_tag(f, recvtag, true)?;
                store_status(status, &Status::proc_null());
            }
            return match (dest == PROC_NULL, source == PROC_NULL) {
                (false, _) => send_blocking(
                    f,
                    sendbuf,
                    sendcount,
                    sendtype,
                    dest,
                    sendtag,
                    comm,
                    SendMode::Standard,
                ),
                (true, false) => recv_blocking(
                    f, recvbuf, recvcount, recvtype, source, recvtag, comm, status,
                ),
                (true, true) => with_comm(f, comm, |_, _| Ok(())),
            };
        }
        // Light path: a small dense send that goes straight into a local peer's ring, then
        // the blocking receive, under one lock (the receive's arguments are checked first,
        // so an erroneous call sends nothing).
        if let Some(len) = dense_len(sendbuf, sendcount, sendtype) {
            let r = buffer(f, recvbuf, recvcount, recvtype)?;
            let capacity = r.bytes();
            let send = userbuf::bytes(sendbuf as usize, len);
            let resolved = |rt: &Runtime| resolve(rt, f, comm);
            let done = p2p::sendrecv_inline(f, resolved, &send, dest, sendtag, r, source, recvtag)?;
            if let Some(st) = done {
                store_status(status, &st);
                return status_error(f, &st, capacity);
            }
        }
        let (r, capacity) = start_recv(f, recvbuf, recvcount, recvtype, source, recvtag, comm)?;
        let send = start_send(
            f,
            sendbuf,
            sendcount,
            sendtype,
            dest,
            sendtag,
            comm,
            SendMode::Standard,
        );
        p2p::wait(f, send?)?;
        let st = p2p::wait(f, r)?;
        store_status(status, &st);
        status_error(f, &st, capacity)
    })
}

pub(crate) fn sendrecv_replace(
    f: &str,
    buf: *mut c_void,
    count: i64,
    datatype: usize,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: usize,
    status: *mut MpiStatus,
) -> c_int {
    call(Scope::Comm(comm), || {
        let (s, r, capacity, _copy) = start_replace(
            f, buf, count, datatype, dest, sendtag, source, recvtag, comm,
        )?;
        p2p::wait(f, s)?;
        let st = p2p::wait(f, r)?;
        store_status(status, &st);
        status_error(f, &st, capacity)
    })
}

/// Starts the two halves of a send-receive in place: (send, receive, capacity, the
/// copy the send reads, which must live until the send completes). The send goes from
/// a copy of the memory the data spans, with the same datatype, so a conversion on the
/// way (to another cluster) still sees types.
pub(crate) fn start_replace(
    f: &str,
    buf: *mut c_void,
    count: i64,
    datatype: usize,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: usize,
) -> MpiResult<(ReqId, ReqId, u64, Vec<u8>)> {
    let b = buffer(f, buf, count, datatype)?;
    let (mem, origin) = b.read();
    let span = mem.to_vec();
    let copy = crossmpi_core::userbuf::UserBuf::new(
        span.as_ptr() as usize + origin,
        b.count,
        b.dtype.clone(),
    );
    let capacity = b.bytes();
    let r = with_comm(f, comm, |rt, id| rt.irecv(f, id, b, source, recvtag))?;
    let s = with_comm(f, comm, |rt, id| {
        rt.isend(f, id, copy, dest, sendtag, SendMode::Standard)
    })?;
    Ok((s, r, capacity, span))
}

pub(crate) fn mrecv(
    f: &str,
    buf: *mut c_void,
    count: i64,
    datatype: usize,
    message: *mut usize,
    status: *mut MpiStatus,
) -> c_int {
    call(Scope::Process, || {
        let (req, capacity) = match matched_receive(f, buf, count, datatype, message)? {
            Some(r) => r,
            None => {
                store_status(status, &Status::proc_null());
                return Ok(());
            }
        };
        let s = p2p::wait(f, req)?;
        store_status(status, &s);
        status_error(f, &s, capacity)
    })
}

pub(crate) fn imrecv(
    f: &str,
    buf: *mut c_void,
    count: i64,
    datatype: usize,
    message: *mut usize,
    request: *mut usize,
) -> c_int {
    call(Scope::Process, || {
        let req = match matched_receive(f, buf, count, datatype, message)? {
            Some((r, _)) => r,
            None => runtime::with(f, |rt| {
                Ok(rt
                    .st
                    .requests
                    .insert(crossmpi_core::request::Request::done(Status::proc_null())))
            })?,
        };
        out(f, "request", request, request_handle(req))
    })
}

pub(crate) fn buffer_attach(f: &str, buffer: *mut c_void, size: i64) -> c_int {
    call(Scope::Process, || {
        crate::mpi4_buffers::attach_process(f, buffer, size)
    })
}

/// Waits until the buffered sends using the attached buffer finish and detaches it:
/// its address and size, (0, 0) when none was attached.
pub(crate) fn buffer_detach(f: &str) -> MpiResult<(usize, usize)> {
    runtime::wait_for(f, |rt| {
        rt.reap_bsends();
        rt.bsend_buffer
            .as_ref()
            .is_none_or(|b| b.is_idle())
            .then_some(())
    })?;
    let b = runtime::with(f, |rt| Ok(rt.bsend_buffer.take()))?;
    Ok(b.map(|b| (b.addr, b.size)).unwrap_or((0, 0)))
}
