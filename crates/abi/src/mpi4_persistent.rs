//! Persistent collectives (`MPI_<Coll>_init`, MPI 4.0): an inactive persistent request
//! whose `MPI_Start` runs the matching nonblocking collective (the same argument checks,
//! algorithms and schedule), which the request then tracks as `ReqKind::Active` like a
//! persistent point-to-point request. Every process starts its persistent collectives in
//! the same order, so each start takes the next collective tag as a nonblocking call would.
//!
//! The comm and info are checked by the `_init` call; the buffers, counts, datatypes and
//! ops are checked at each `MPI_Start` (they are read then, as the standard allows: the
//! arguments of a persistent operation must not change until it is freed).

use crate::coll::{self, Arr, Over};
use crate::comm::with_comm;
use crate::consts::*;
use crate::error::{call, Scope};
use crate::handle::{self, Kind};
use crate::util::out;
use crossmpi_core::coll::sched::Mode;
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::request::{Persistent, ReqId};
use crossmpi_core::runtime;
use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::sync::{Arc, Mutex, MutexGuard};

/// Starts the nonblocking collective once, storing its request through the pointer.
pub type Recipe = Arc<dyn Fn(*mut usize) -> c_int + Send + Sync>;

/// The recipes of persistent collectives, by the slot of their request.
static RECIPES: Mutex<Option<HashMap<u32, Recipe>>> = Mutex::new(None);

fn recipes() -> MutexGuard<'static, Option<HashMap<u32, Recipe>>> {
    RECIPES.lock().unwrap_or_else(|p| p.into_inner())
}

fn init(
    f: &'static str,
    comm: usize,
    info: usize,
    request: *mut usize,
    local: LocalArgs,
    recipe: Recipe,
) -> c_int {
    call(Scope::Comm(comm), || {
        local.check(f)?;
        crate::info::read(f, "info", info, true)?;
        crate::util::slice_mut(f, "request", request, 1)?;
        let id = with_comm(f, comm, |rt, _| rt.persistent(f, Persistent::External))?;
        register(id, recipe);
        out(
            f,
            "request",
            request,
            handle::encode(Kind::Request, id.index),
        )
    })
}

/// The arguments every process passes with the same meaning (`count`, `datatype`, `op`),
/// checked by the `_init` call; the others (buffers, and the counts and types of rooted
/// and vector collectives, which the standard lets be meaningless on some processes) are
/// checked where they matter, by the collective at each start.
#[derive(Default)]
struct LocalArgs {
    count: Option<i64>,
    datatype: Option<usize>,
    op: Option<usize>,
    /// `root` is `MPI_PROC_NULL` (an intercommunicator's idle group): nothing counts.
    idle: bool,
}

impl LocalArgs {
    fn check(&self, f: &str) -> MpiResult<()> {
        if self.idle {
            return Ok(());
        }
        if let Some(n) = self.count {
            crate::util::count(f, "count", n)?;
        }
        if let Some(t) = self.datatype {
            crate::types::committed(f, "datatype", t)?;
        }
        if let Some(op) = self.op {
            crate::op::resolve(f, op)?;
        }
        Ok(())
    }
}

/// Makes `MPI_Start` on the `Persistent::External` request `id` run `recipe`.
pub fn register(id: ReqId, recipe: Recipe) {
    recipes()
        .get_or_insert_with(HashMap::new)
        .insert(id.index, recipe);
}

/// Forgets the recipe of a freed request (no-op for other requests).
pub fn forget(h: usize) {
    if let Some(slot) = handle::decode(Kind::Request, h) {
        if let Some(t) = recipes().as_mut() {
            t.remove(&slot);
        }
    }
}

/// `MPI_Start` of a persistent collective: `None` if `h` is not one, else the return
/// code (errors of the collective's checks went through its error handler already).
pub fn start(f: &str, h: usize) -> Option<c_int> {
    let slot = handle::decode(Kind::Request, h)?;
    let recipe = recipes().as_ref()?.get(&slot)?.clone();
    let inactive = call(Scope::Process, || {
        runtime::with(f, |rt| match rt.st.requests.by_index(slot) {
            Some((_, r)) if !r.active => Ok(()),
            Some(_) => Err(MpiError::arg(
                ErrorClass::Request,
                f,
                "request",
                handle::describe(h),
                "already active (complete it before starting it again)",
            )),
            None => Err(MpiError::arg(
                ErrorClass::Request,
                f,
                "request",
                handle::describe(h),
                "freed",
            )),
        })
    });
    if inactive != MPI_SUCCESS {
        return Some(inactive);
    }
    let mut child = MPI_REQUEST_NULL;
    let rc = recipe(&mut child);
    if rc != MPI_SUCCESS {
        return Some(rc);
    }
    Some(call(Scope::Process, || {
        runtime::with(f, |rt| {
            let parent = crate::p2p::request(rt, f, "request", h)?;
            let child = crate::p2p::request(rt, f, "request", child)?;
            rt.activate(parent, child);
            Ok(())
        })
    }))
}

/// The arguments of the recipes are plain values: pointers travel as addresses.
macro_rules! recipe {
    ($f:literal, $comm:ident, $info:ident, $request:ident, [$($p:ident),*], $local:expr, |$req:ident| $start:expr) => {{
        $(let $p = $p as usize;)*
        init($f, $comm, $info, $request, $local, Arc::new(move |$req: *mut usize| {
            $(let $p = $p as _;)*
            $start
        }))
    }};
}

export! {
    fn MPI_Barrier_init / PMPI_Barrier_init(comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Barrier_init", comm, info, request, [], LocalArgs::default(), |req| coll::barrier("MPI_Barrier_init", Mode::Nonblocking, comm, req))
    }
    fn MPI_Bcast_init / PMPI_Bcast_init(buffer: *mut c_void, count: c_int, datatype: usize, root: c_int, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Bcast_init", comm, info, request, [buffer], LocalArgs { count: Some(count as i64), datatype: Some(datatype), idle: root == MPI_PROC_NULL, ..LocalArgs::default() }, |req| coll::bcast("MPI_Bcast_init", Mode::Nonblocking, buffer, count as i64, datatype, root, comm, req))
    }
    fn MPI_Bcast_init_c / PMPI_Bcast_init_c(buffer: *mut c_void, count: i64, datatype: usize, root: c_int, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Bcast_init_c", comm, info, request, [buffer], LocalArgs { count: Some(count), datatype: Some(datatype), idle: root == MPI_PROC_NULL, ..LocalArgs::default() }, |req| coll::bcast("MPI_Bcast_init_c", Mode::Nonblocking, buffer, count, datatype, root, comm, req))
    }
    fn MPI_Gather_init / PMPI_Gather_init(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, root: c_int, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Gather_init", comm, info, request, [sendbuf, recvbuf], LocalArgs::default(), |req| coll::gather("MPI_Gather_init", Mode::Nonblocking, sendbuf, sendcount as i64, sendtype, recvbuf, recvcount as i64, recvtype, root, comm, req))
    }
    fn MPI_Gather_init_c / PMPI_Gather_init_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, root: c_int, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Gather_init_c", comm, info, request, [sendbuf, recvbuf], LocalArgs::default(), |req| coll::gather("MPI_Gather_init_c", Mode::Nonblocking, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, req))
    }
    fn MPI_Gatherv_init / PMPI_Gatherv_init(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: usize, root: c_int, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Gatherv_init", comm, info, request, [sendbuf, recvbuf, recvcounts, displs], LocalArgs::default(), |req| coll::gatherv("MPI_Gatherv_init", Mode::Nonblocking, sendbuf, sendcount as i64, sendtype, recvbuf, Arr::Int(recvcounts), Arr::Int(displs), recvtype, root, comm, req))
    }
    fn MPI_Gatherv_init_c / PMPI_Gatherv_init_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const i64, recvtype: usize, root: c_int, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Gatherv_init_c", comm, info, request, [sendbuf, recvbuf, recvcounts, displs], LocalArgs::default(), |req| coll::gatherv("MPI_Gatherv_init_c", Mode::Nonblocking, sendbuf, sendcount, sendtype, recvbuf, Arr::Wide(recvcounts), Arr::Wide(displs), recvtype, root, comm, req))
    }
    fn MPI_Scatter_init / PMPI_Scatter_init(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, root: c_int, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Scatter_init", comm, info, request, [sendbuf, recvbuf], LocalArgs::default(), |req| coll::scatter("MPI_Scatter_init", Mode::Nonblocking, sendbuf, sendcount as i64, sendtype, recvbuf, recvcount as i64, recvtype, root, comm, req))
    }
    fn MPI_Scatter_init_c / PMPI_Scatter_init_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, root: c_int, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Scatter_init_c", comm, info, request, [sendbuf, recvbuf], LocalArgs::default(), |req| coll::scatter("MPI_Scatter_init_c", Mode::Nonblocking, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, req))
    }
    fn MPI_Scatterv_init / PMPI_Scatterv_init(sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, root: c_int, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Scatterv_init", comm, info, request, [sendbuf, sendcounts, displs, recvbuf], LocalArgs::default(), |req| coll::scatterv("MPI_Scatterv_init", Mode::Nonblocking, sendbuf, Arr::Int(sendcounts), Arr::Int(displs), sendtype, recvbuf, recvcount as i64, recvtype, root, comm, req))
    }
    fn MPI_Scatterv_init_c / PMPI_Scatterv_init_c(sendbuf: *const c_void, sendcounts: *const i64, displs: *const i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, root: c_int, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Scatterv_init_c", comm, info, request, [sendbuf, sendcounts, displs, recvbuf], LocalArgs::default(), |req| coll::scatterv("MPI_Scatterv_init_c", Mode::Nonblocking, sendbuf, Arr::Wide(sendcounts), Arr::Wide(displs), sendtype, recvbuf, recvcount, recvtype, root, comm, req))
    }
    fn MPI_Allgather_init / PMPI_Allgather_init(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Allgather_init", comm, info, request, [sendbuf, recvbuf], LocalArgs::default(), |req| coll::allgather("MPI_Allgather_init", Mode::Nonblocking, Over::Comm, sendbuf, sendcount as i64, sendtype, recvbuf, recvcount as i64, recvtype, comm, req))
    }
    fn MPI_Allgather_init_c / PMPI_Allgather_init_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Allgather_init_c", comm, info, request, [sendbuf, recvbuf], LocalArgs::default(), |req| coll::allgather("MPI_Allgather_init_c", Mode::Nonblocking, Over::Comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req))
    }
    fn MPI_Allgatherv_init / PMPI_Allgatherv_init(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Allgatherv_init", comm, info, request, [sendbuf, recvbuf, recvcounts, displs], LocalArgs::default(), |req| coll::allgatherv("MPI_Allgatherv_init", Mode::Nonblocking, Over::Comm, sendbuf, sendcount as i64, sendtype, recvbuf, Arr::Int(recvcounts), Arr::Int(displs), recvtype, comm, req))
    }
    fn MPI_Allgatherv_init_c / PMPI_Allgatherv_init_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const i64, recvtype: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Allgatherv_init_c", comm, info, request, [sendbuf, recvbuf, recvcounts, displs], LocalArgs::default(), |req| coll::allgatherv("MPI_Allgatherv_init_c", Mode::Nonblocking, Over::Comm, sendbuf, sendcount, sendtype, recvbuf, Arr::Wide(recvcounts), Arr::Wide(displs), recvtype, comm, req))
    }
    fn MPI_Alltoall_init / PMPI_Alltoall_init(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Alltoall_init", comm, info, request, [sendbuf, recvbuf], LocalArgs::default(), |req| coll::alltoall("MPI_Alltoall_init", Mode::Nonblocking, Over::Comm, sendbuf, sendcount as i64, sendtype, recvbuf, recvcount as i64, recvtype, comm, req))
    }
    fn MPI_Alltoall_init_c / PMPI_Alltoall_init_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Alltoall_init_c", comm, info, request, [sendbuf, recvbuf], LocalArgs::default(), |req| coll::alltoall("MPI_Alltoall_init_c", Mode::Nonblocking, Over::Comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req))
    }
    fn MPI_Alltoallv_init / PMPI_Alltoallv_init(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Alltoallv_init", comm, info, request, [sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls], LocalArgs::default(), |req| coll::alltoallv("MPI_Alltoallv_init", Mode::Nonblocking, Over::Comm, sendbuf, Arr::Int(sendcounts), Arr::Int(sdispls), sendtype, recvbuf, Arr::Int(recvcounts), Arr::Int(rdispls), recvtype, comm, req))
    }
    fn MPI_Alltoallv_init_c / PMPI_Alltoallv_init_c(sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const i64, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const i64, recvtype: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Alltoallv_init_c", comm, info, request, [sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls], LocalArgs::default(), |req| coll::alltoallv("MPI_Alltoallv_init_c", Mode::Nonblocking, Over::Comm, sendbuf, Arr::Wide(sendcounts), Arr::Wide(sdispls), sendtype, recvbuf, Arr::Wide(recvcounts), Arr::Wide(rdispls), recvtype, comm, req))
    }
    fn MPI_Alltoallw_init / PMPI_Alltoallw_init(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const usize, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Alltoallw_init", comm, info, request, [sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes], LocalArgs::default(), |req| coll::alltoallw("MPI_Alltoallw_init", Mode::Nonblocking, Over::Comm, sendbuf, Arr::Int(sendcounts), Arr::Int(sdispls), sendtypes, recvbuf, Arr::Int(recvcounts), Arr::Int(rdispls), recvtypes, comm, req))
    }
    fn MPI_Alltoallw_init_c / PMPI_Alltoallw_init_c(sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const i64, sendtypes: *const usize, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const i64, recvtypes: *const usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Alltoallw_init_c", comm, info, request, [sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes], LocalArgs::default(), |req| coll::alltoallw("MPI_Alltoallw_init_c", Mode::Nonblocking, Over::Comm, sendbuf, Arr::Wide(sendcounts), Arr::Wide(sdispls), sendtypes, recvbuf, Arr::Wide(recvcounts), Arr::Wide(rdispls), recvtypes, comm, req))
    }
    fn MPI_Reduce_init / PMPI_Reduce_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: usize, op: usize, root: c_int, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Reduce_init", comm, info, request, [sendbuf, recvbuf], LocalArgs { count: Some(count as i64), datatype: Some(datatype), op: Some(op), idle: root == MPI_PROC_NULL }, |req| coll::reduce("MPI_Reduce_init", Mode::Nonblocking, sendbuf, recvbuf, count as i64, datatype, op, root, comm, req))
    }
    fn MPI_Reduce_init_c / PMPI_Reduce_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: usize, op: usize, root: c_int, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Reduce_init_c", comm, info, request, [sendbuf, recvbuf], LocalArgs { count: Some(count), datatype: Some(datatype), op: Some(op), idle: root == MPI_PROC_NULL }, |req| coll::reduce("MPI_Reduce_init_c", Mode::Nonblocking, sendbuf, recvbuf, count, datatype, op, root, comm, req))
    }
    fn MPI_Allreduce_init / PMPI_Allreduce_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: usize, op: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Allreduce_init", comm, info, request, [sendbuf, recvbuf], LocalArgs { count: Some(count as i64), datatype: Some(datatype), op: Some(op), ..LocalArgs::default() }, |req| coll::allreduce("MPI_Allreduce_init", Mode::Nonblocking, sendbuf, recvbuf, count as i64, datatype, op, comm, req))
    }
    fn MPI_Allreduce_init_c / PMPI_Allreduce_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: usize, op: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Allreduce_init_c", comm, info, request, [sendbuf, recvbuf], LocalArgs { count: Some(count), datatype: Some(datatype), op: Some(op), ..LocalArgs::default() }, |req| coll::allreduce("MPI_Allreduce_init_c", Mode::Nonblocking, sendbuf, recvbuf, count, datatype, op, comm, req))
    }
    fn MPI_Reduce_scatter_init / PMPI_Reduce_scatter_init(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: usize, op: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Reduce_scatter_init", comm, info, request, [sendbuf, recvbuf, recvcounts], LocalArgs { datatype: Some(datatype), op: Some(op), ..LocalArgs::default() }, |req| coll::reduce_scatter("MPI_Reduce_scatter_init", Mode::Nonblocking, sendbuf, recvbuf, Arr::Int(recvcounts), datatype, op, comm, req))
    }
    fn MPI_Reduce_scatter_init_c / PMPI_Reduce_scatter_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const i64, datatype: usize, op: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Reduce_scatter_init_c", comm, info, request, [sendbuf, recvbuf, recvcounts], LocalArgs { datatype: Some(datatype), op: Some(op), ..LocalArgs::default() }, |req| coll::reduce_scatter("MPI_Reduce_scatter_init_c", Mode::Nonblocking, sendbuf, recvbuf, Arr::Wide(recvcounts), datatype, op, comm, req))
    }
    fn MPI_Reduce_scatter_block_init / PMPI_Reduce_scatter_block_init(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: usize, op: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Reduce_scatter_block_init", comm, info, request, [sendbuf, recvbuf], LocalArgs { datatype: Some(datatype), op: Some(op), ..LocalArgs::default() }, |req| coll::reduce_scatter_block("MPI_Reduce_scatter_block_init", Mode::Nonblocking, sendbuf, recvbuf, recvcount as i64, datatype, op, comm, req))
    }
    fn MPI_Reduce_scatter_block_init_c / PMPI_Reduce_scatter_block_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: i64, datatype: usize, op: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Reduce_scatter_block_init_c", comm, info, request, [sendbuf, recvbuf], LocalArgs { datatype: Some(datatype), op: Some(op), ..LocalArgs::default() }, |req| coll::reduce_scatter_block("MPI_Reduce_scatter_block_init_c", Mode::Nonblocking, sendbuf, recvbuf, recvcount, datatype, op, comm, req))
    }
    fn MPI_Scan_init / PMPI_Scan_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: usize, op: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Scan_init", comm, info, request, [sendbuf, recvbuf], LocalArgs { count: Some(count as i64), datatype: Some(datatype), op: Some(op), ..LocalArgs::default() }, |req| coll::scan("MPI_Scan_init", Mode::Nonblocking, false, sendbuf, recvbuf, count as i64, datatype, op, comm, req))
    }
    fn MPI_Scan_init_c / PMPI_Scan_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: usize, op: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Scan_init_c", comm, info, request, [sendbuf, recvbuf], LocalArgs { count: Some(count), datatype: Some(datatype), op: Some(op), ..LocalArgs::default() }, |req| coll::scan("MPI_Scan_init_c", Mode::Nonblocking, false, sendbuf, recvbuf, count, datatype, op, comm, req))
    }
    fn MPI_Exscan_init / PMPI_Exscan_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: usize, op: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Exscan_init", comm, info, request, [sendbuf, recvbuf], LocalArgs { count: Some(count as i64), datatype: Some(datatype), op: Some(op), ..LocalArgs::default() }, |req| coll::scan("MPI_Exscan_init", Mode::Nonblocking, true, sendbuf, recvbuf, count as i64, datatype, op, comm, req))
    }
    fn MPI_Exscan_init_c / PMPI_Exscan_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: usize, op: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Exscan_init_c", comm, info, request, [sendbuf, recvbuf], LocalArgs { count: Some(count), datatype: Some(datatype), op: Some(op), ..LocalArgs::default() }, |req| coll::scan("MPI_Exscan_init_c", Mode::Nonblocking, true, sendbuf, recvbuf, count, datatype, op, comm, req))
    }
    fn MPI_Neighbor_allgather_init / PMPI_Neighbor_allgather_init(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Neighbor_allgather_init", comm, info, request, [sendbuf, recvbuf], LocalArgs::default(), |req| coll::allgather("MPI_Neighbor_allgather_init", Mode::Nonblocking, Over::Neighbors, sendbuf, sendcount as i64, sendtype, recvbuf, recvcount as i64, recvtype, comm, req))
    }
    fn MPI_Neighbor_allgather_init_c / PMPI_Neighbor_allgather_init_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Neighbor_allgather_init_c", comm, info, request, [sendbuf, recvbuf], LocalArgs::default(), |req| coll::allgather("MPI_Neighbor_allgather_init_c", Mode::Nonblocking, Over::Neighbors, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req))
    }
    fn MPI_Neighbor_allgatherv_init / PMPI_Neighbor_allgatherv_init(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Neighbor_allgatherv_init", comm, info, request, [sendbuf, recvbuf, recvcounts, displs], LocalArgs::default(), |req| coll::allgatherv("MPI_Neighbor_allgatherv_init", Mode::Nonblocking, Over::Neighbors, sendbuf, sendcount as i64, sendtype, recvbuf, Arr::Int(recvcounts), Arr::Int(displs), recvtype, comm, req))
    }
    fn MPI_Neighbor_allgatherv_init_c / PMPI_Neighbor_allgatherv_init_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const i64, recvtype: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Neighbor_allgatherv_init_c", comm, info, request, [sendbuf, recvbuf, recvcounts, displs], LocalArgs::default(), |req| coll::allgatherv("MPI_Neighbor_allgatherv_init_c", Mode::Nonblocking, Over::Neighbors, sendbuf, sendcount, sendtype, recvbuf, Arr::Wide(recvcounts), Arr::Wide(displs), recvtype, comm, req))
    }
    fn MPI_Neighbor_alltoall_init / PMPI_Neighbor_alltoall_init(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Neighbor_alltoall_init", comm, info, request, [sendbuf, recvbuf], LocalArgs::default(), |req| coll::alltoall("MPI_Neighbor_alltoall_init", Mode::Nonblocking, Over::Neighbors, sendbuf, sendcount as i64, sendtype, recvbuf, recvcount as i64, recvtype, comm, req))
    }
    fn MPI_Neighbor_alltoall_init_c / PMPI_Neighbor_alltoall_init_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Neighbor_alltoall_init_c", comm, info, request, [sendbuf, recvbuf], LocalArgs::default(), |req| coll::alltoall("MPI_Neighbor_alltoall_init_c", Mode::Nonblocking, Over::Neighbors, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req))
    }
    fn MPI_Neighbor_alltoallv_init / PMPI_Neighbor_alltoallv_init(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Neighbor_alltoallv_init", comm, info, request, [sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls], LocalArgs::default(), |req| coll::alltoallv("MPI_Neighbor_alltoallv_init", Mode::Nonblocking, Over::Neighbors, sendbuf, Arr::Int(sendcounts), Arr::Int(sdispls), sendtype, recvbuf, Arr::Int(recvcounts), Arr::Int(rdispls), recvtype, comm, req))
    }
    fn MPI_Neighbor_alltoallv_init_c / PMPI_Neighbor_alltoallv_init_c(sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const i64, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const i64, recvtype: usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Neighbor_alltoallv_init_c", comm, info, request, [sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls], LocalArgs::default(), |req| coll::alltoallv("MPI_Neighbor_alltoallv_init_c", Mode::Nonblocking, Over::Neighbors, sendbuf, Arr::Wide(sendcounts), Arr::Wide(sdispls), sendtype, recvbuf, Arr::Wide(recvcounts), Arr::Wide(rdispls), recvtype, comm, req))
    }
    fn MPI_Neighbor_alltoallw_init / PMPI_Neighbor_alltoallw_init(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const i64, sendtypes: *const usize, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const i64, recvtypes: *const usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Neighbor_alltoallw_init", comm, info, request, [sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes], LocalArgs::default(), |req| coll::alltoallw("MPI_Neighbor_alltoallw_init", Mode::Nonblocking, Over::Neighbors, sendbuf, Arr::Int(sendcounts), Arr::Wide(sdispls), sendtypes, recvbuf, Arr::Int(recvcounts), Arr::Wide(rdispls), recvtypes, comm, req))
    }
    fn MPI_Neighbor_alltoallw_init_c / PMPI_Neighbor_alltoallw_init_c(sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const i64, sendtypes: *const usize, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const i64, recvtypes: *const usize, comm: usize, info: usize, request: *mut usize) -> c_int {
        recipe!("MPI_Neighbor_alltoallw_init_c", comm, info, request, [sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes], LocalArgs::default(), |req| coll::alltoallw("MPI_Neighbor_alltoallw_init_c", Mode::Nonblocking, Over::Neighbors, sendbuf, Arr::Wide(sendcounts), Arr::Wide(sdispls), sendtypes, recvbuf, Arr::Wide(recvcounts), Arr::Wide(rdispls), recvtypes, comm, req))
    }
}
