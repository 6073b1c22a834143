//! Partitioned communication (MPI 4.0): `MPI_Psend_init`, `MPI_Precv_init`, `MPI_Pready`
//! (`_range`, `_list`) and `MPI_Parrived`.
//!
//! Design: the whole buffer travels as one message, sent when the last partition of the
//! send side is marked ready. That keeps sender and receiver free to partition the
//! buffer differently (the standard only asks for the same total), needs no agreement on
//! a partition layout, and makes `MPI_Parrived` exact: a partition has arrived when the
//! message holding it has, so before that it reports 0 for every partition, and 1 for all
//! of them afterwards. The price is no early transfer of partitions marked ready first.
//!
//! The message goes on the communicator's collective context with a tag of its own
//! (`-1 - (tag & 0x1fff_ffff)`: negative, so no user receive and no collective schedule
//! can take it), and the requests are persistent: `MPI_Start` (through the persistent
//! recipes of `mpi4_persistent`) posts the receive, or arms the send side, whose request
//! completes when the send that the last `MPI_Pready` starts has.

use crate::comm::with_comm;
use crate::error::{call, Scope};
use crate::handle::{self, Kind};
use crate::p2p::{buffer, request};
use crate::util::{count, out, slice};
use crossmpi_core::error::{ErrorClass, MpiError};
use crossmpi_core::header::Envelope;
use crossmpi_core::request::{Persistent, ReqId, Request, SendMode, Status, PROC_NULL};
use crossmpi_core::runtime::{self, Runtime};
use crossmpi_core::userbuf::UserBuf;
use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::sync::{Arc, Mutex, MutexGuard};

enum Side {
    /// World rank of the receiver (None: `MPI_PROC_NULL`).
    Send { dest: Option<u32> },
    /// Rank of the sender in the communicator (or `MPI_PROC_NULL`).
    Recv { source: i32 },
}

struct Partitioned {
    side: Side,
    buf: UserBuf,
    partitions: usize,
    env: Envelope,
    ready: Vec<bool>,
    /// The request running this start (a compound for the send side, the receive).
    running: Option<ReqId>,
}

/// By the slot of the persistent request.
static PARTITIONED: Mutex<Option<HashMap<u32, Partitioned>>> = Mutex::new(None);

fn table() -> MutexGuard<'static, Option<HashMap<u32, Partitioned>>> {
    PARTITIONED.lock().unwrap_or_else(|p| p.into_inner())
}

fn partition_tag(tag: c_int) -> c_int {
    -1 - (tag & 0x1fff_ffff)
}

fn not_partitioned(function: &str, h: usize) -> MpiError {
    MpiError::arg(
        ErrorClass::Request,
        function,
        "request",
        handle::describe(h),
        "not a partitioned request (MPI_Psend_init / MPI_Precv_init make them)",
    )
}

fn init(
    f: &'static str,
    send: bool,
    buf: *const c_void,
    partitions: c_int,
    n: i64,
    datatype: usize,
    peer: c_int,
    tag: c_int,
    comm: usize,
    info: usize,
    request: *mut usize,
) -> c_int {
    call(Scope::Comm(comm), || {
        crate::info::read(f, "info", info, true)?;
        if partitions < 1 {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                f,
                "partitions",
                partitions,
                "at least one partition is needed",
            ));
        }
        let n = count(f, "count", n)?;
        let total = n
            .checked_mul(partitions as u64)
            .filter(|&t| t <= i64::MAX as u64)
            .ok_or_else(|| {
                MpiError::arg(
                    ErrorClass::Count,
                    f,
                    "count",
                    n,
                    "partitions x count overflows MPI_Count",
                )
            })?;
        let b = buffer(f, buf, total as i64, datatype)?;
        if !(0..=crossmpi_core::p2p::TAG_UB).contains(&tag) {
            return Err(MpiError::arg(
                ErrorClass::Tag,
                f,
                "tag",
                tag,
                "partitioned operations take tags 0..MPI_TAG_UB, no wildcard",
            ));
        }
        crate::util::slice_mut(f, "request", request, 1)?;
        let (id, entry) = with_comm(f, comm, |rt, cid| {
            let c = rt.comm(f, cid)?;
            let size = c.peer_group().size() as c_int;
            if peer != PROC_NULL && !(0..size).contains(&peer) {
                let arg = if send { "dest" } else { "source" };
                return Err(MpiError::arg(
                    ErrorClass::Rank,
                    f,
                    arg,
                    peer,
                    format!("not a rank of the communicator (size {size}) or MPI_PROC_NULL"),
                ));
            }
            let side = match (send, peer) {
                (true, PROC_NULL) => Side::Send { dest: None },
                (true, p) => Side::Send {
                    dest: Some(c.peer_group().world_rank(p as usize)),
                },
                (false, p) => Side::Recv { source: p },
            };
            let env = Envelope {
                context: c.coll_context(),
                src: c.rank as i32,
                tag: partition_tag(tag),
            };
            let entry = Partitioned {
                side,
                buf: b,
                partitions: partitions as usize,
                env,
                ready: vec![false; partitions as usize],
                running: None,
            };
            Ok((rt.persistent(f, Persistent::External)?, entry))
        })?;
        table()
            .get_or_insert_with(HashMap::new)
            .insert(id.index, entry);
        crate::mpi4_persistent::register(id, Arc::new(move |child: *mut usize| start(id, child)));
        out(
            f,
            "request",
            request,
            handle::encode(Kind::Request, id.index),
        )
    })
}

/// `MPI_Start` of a partitioned request: posts the receive, or arms the send side.
fn start(id: ReqId, child: *mut usize) -> c_int {
    let f = "MPI_Start";
    call(Scope::Process, || {
        let running = runtime::with(f, |rt| {
            let mut guard = table();
            let p = guard
                .as_mut()
                .and_then(|t| t.get_mut(&id.index))
                .ok_or_else(|| not_partitioned(f, handle::encode(Kind::Request, id.index)))?;
            p.ready.iter_mut().for_each(|r| *r = false);
            let running = match p.side {
                Side::Recv { source: PROC_NULL } | Side::Send { dest: None } => {
                    rt.st.requests.insert(Request::done(Status::proc_null()))
                }
                Side::Recv { source } => {
                    let r = rt
                        .st
                        .start_recv(p.buf.clone(), p.env.context, source, p.env.tag);
                    rt.flush();
                    r
                }
                Side::Send { .. } => crate::mpi4_requests::pending_compound(rt),
            };
            p.running = Some(running);
            Ok(running)
        })?;
        out(
            f,
            "request",
            child,
            handle::encode(Kind::Request, running.index),
        )
    })
}

/// Marks partitions ready; the last one sends the buffer.
fn ready(f: &str, request: usize, parts: impl Iterator<Item = c_int>) -> c_int {
    call(Scope::Process, || {
        runtime::with(f, |rt| {
            let parent = self::request(rt, f, "request", request)?;
            let active = rt.st.requests.get(parent).is_some_and(|r| r.active);
            let mut guard = table();
            let p = guard
                .as_mut()
                .and_then(|t| t.get_mut(&parent.index))
                .ok_or_else(|| not_partitioned(f, request))?;
            let Side::Send { dest } = p.side else {
                return Err(MpiError::arg(
                    ErrorClass::Request,
                    f,
                    "request",
                    handle::describe(request),
                    "a receive side: MPI_Pready is for the send side",
                ));
            };
            if !active {
                return Err(MpiError::arg(
                    ErrorClass::Request,
                    f,
                    "request",
                    handle::describe(request),
                    "not started (MPI_Start it first)",
                ));
            }
            for i in parts {
                let slot = usize::try_from(i)
                    .ok()
                    .filter(|&i| i < p.partitions)
                    .ok_or_else(|| {
                        MpiError::arg(
                            ErrorClass::Arg,
                            f,
                            "partition",
                            i,
                            format!("partitions are numbered 0..{}", p.partitions),
                        )
                    })?;
                if std::mem::replace(&mut p.ready[slot], true) {
                    return Err(MpiError::arg(
                        ErrorClass::Arg,
                        f,
                        "partition",
                        i,
                        "already marked ready since MPI_Start",
                    ));
                }
            }
            if p.ready.iter().all(|&r| r) {
                send_all(rt, p, dest);
            }
            Ok(())
        })
    })
}

fn send_all(rt: &mut Runtime, p: &Partitioned, dest: Option<u32>) {
    let Some(compound) = p.running else {
        return;
    };
    let sent = match dest {
        Some(d) => {
            let r = rt
                .st
                .start_send(p.buf.clone(), d, p.env, SendMode::Standard);
            rt.flush();
            r
        }
        None => rt.st.requests.insert(Request::done(Status::proc_null())),
    };
    crate::mpi4_requests::add_part(compound, sent, true);
}

/// Forgets the partitioned state of a freed request (no-op for others).
pub fn forget(h: usize) {
    if let (Some(slot), Some(t)) = (handle::decode(Kind::Request, h), table().as_mut()) {
        t.remove(&slot);
    }
}

export! {
    fn MPI_Psend_init / PMPI_Psend_init(buf: *const c_void, partitions: c_int, count: i64, datatype: usize, dest: c_int, tag: c_int, comm: usize, info: usize, request: *mut usize) -> c_int {
        init("MPI_Psend_init", true, buf, partitions, count, datatype, dest, tag, comm, info, request)
    }
    fn MPI_Precv_init / PMPI_Precv_init(buf: *mut c_void, partitions: c_int, count: i64, datatype: usize, source: c_int, tag: c_int, comm: usize, info: usize, request: *mut usize) -> c_int {
        init("MPI_Precv_init", false, buf, partitions, count, datatype, source, tag, comm, info, request)
    }
    fn MPI_Pready / PMPI_Pready(partition: c_int, request: usize) -> c_int {
        ready("MPI_Pready", request, std::iter::once(partition))
    }
    fn MPI_Pready_range / PMPI_Pready_range(partition_low: c_int, partition_high: c_int, request: usize) -> c_int {
        let f = "MPI_Pready_range";
        if partition_low > partition_high {
            return call(Scope::Process, || Err(MpiError::arg(ErrorClass::Arg, f, "partition_high", partition_high, format!("below partition_low ({partition_low})"))));
        }
        ready(f, request, partition_low..=partition_high)
    }
    fn MPI_Pready_list / PMPI_Pready_list(length: c_int, array_of_partitions: *const c_int, request: usize) -> c_int {
        let f = "MPI_Pready_list";
        let parts = match count(f, "length", length as i64).and_then(|n| slice(f, "array_of_partitions", array_of_partitions, n as usize)) {
            Ok(p) => p,
            Err(e) => return crate::error::raise(Scope::Process, e),
        };
        ready(f, request, parts.iter().copied())
    }

    /// Exact per partition: 1 once the message carrying the partition (the whole buffer)
    /// has arrived, 0 before; 1 on a request that is not started.
    fn MPI_Parrived / PMPI_Parrived(request: usize, partition: c_int, flag: *mut c_int) -> c_int {
        let f = "MPI_Parrived";
        call(Scope::Process, || {
            let arrived = runtime::with(f, |rt| {
                rt.poll();
                let parent = self::request(rt, f, "request", request)?;
                let active = rt.st.requests.get(parent).is_some_and(|r| r.active);
                let guard = table();
                let p = guard.as_ref().and_then(|t| t.get(&parent.index)).ok_or_else(|| not_partitioned(f, request))?;
                if matches!(p.side, Side::Send { .. }) {
                    return Err(MpiError::arg(ErrorClass::Request, f, "request", handle::describe(request), "a send side: MPI_Parrived is for the receive side"));
                }
                if usize::try_from(partition).ok().filter(|&i| i < p.partitions).is_none() {
                    return Err(MpiError::arg(ErrorClass::Arg, f, "partition", partition, format!("partitions are numbered 0..{}", p.partitions)));
                }
                Ok(!active || p.running.is_none_or(|r| rt.st.is_done(r)))
            })?;
            out(f, "flag", flag, arrived as c_int)
        })
    }
}
