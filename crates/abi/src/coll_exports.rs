//! The exported collective functions: blocking, nonblocking (`MPI_I*`) and large-count
//! (`_c`) forms, each a call into `coll.rs` with its name and mode.

use crate::coll::{self, Arr, Over};
use crossmpi_core::coll::sched::Mode;
use std::os::raw::{c_int, c_void};
use std::ptr::null_mut;

export! {
    fn MPI_Barrier / PMPI_Barrier(comm: usize) -> c_int {
        coll::barrier("MPI_Barrier", Mode::Blocking, comm, null_mut())
    }
    fn MPI_Ibarrier / PMPI_Ibarrier(comm: usize, request: *mut usize) -> c_int {
        coll::barrier("MPI_Ibarrier", Mode::Nonblocking, comm, request)
    }
    fn MPI_Bcast / PMPI_Bcast(buffer: *mut c_void, count: c_int, datatype: usize, root: c_int, comm: usize) -> c_int {
        coll::bcast("MPI_Bcast", Mode::Blocking, buffer, count as i64, datatype, root, comm, null_mut())
    }
    fn MPI_Bcast_c / PMPI_Bcast_c(buffer: *mut c_void, count: i64, datatype: usize, root: c_int, comm: usize) -> c_int {
        coll::bcast("MPI_Bcast_c", Mode::Blocking, buffer, count, datatype, root, comm, null_mut())
    }
    fn MPI_Ibcast / PMPI_Ibcast(buffer: *mut c_void, count: c_int, datatype: usize, root: c_int, comm: usize, request: *mut usize) -> c_int {
        coll::bcast("MPI_Ibcast", Mode::Nonblocking, buffer, count as i64, datatype, root, comm, request)
    }
    fn MPI_Ibcast_c / PMPI_Ibcast_c(buffer: *mut c_void, count: i64, datatype: usize, root: c_int, comm: usize, request: *mut usize) -> c_int {
        coll::bcast("MPI_Ibcast_c", Mode::Nonblocking, buffer, count, datatype, root, comm, request)
    }
    fn MPI_Gather / PMPI_Gather(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, root: c_int, comm: usize) -> c_int {
        coll::gather("MPI_Gather", Mode::Blocking, sendbuf, sendcount as i64, sendtype, recvbuf, recvcount as i64, recvtype, root, comm, null_mut())
    }
    fn MPI_Gather_c / PMPI_Gather_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, root: c_int, comm: usize) -> c_int {
        coll::gather("MPI_Gather_c", Mode::Blocking, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, null_mut())
    }
    fn MPI_Igather / PMPI_Igather(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, root: c_int, comm: usize, request: *mut usize) -> c_int {
        coll::gather("MPI_Igather", Mode::Nonblocking, sendbuf, sendcount as i64, sendtype, recvbuf, recvcount as i64, recvtype, root, comm, request)
    }
    fn MPI_Igather_c / PMPI_Igather_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, root: c_int, comm: usize, request: *mut usize) -> c_int {
        coll::gather("MPI_Igather_c", Mode::Nonblocking, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request)
    }
    fn MPI_Gatherv / PMPI_Gatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: usize, root: c_int, comm: usize) -> c_int {
        coll::gatherv("MPI_Gatherv", Mode::Blocking, sendbuf, sendcount as i64, sendtype, recvbuf, Arr::Int(recvcounts), Arr::Int(displs), recvtype, root, comm, null_mut())
    }
    fn MPI_Gatherv_c / PMPI_Gatherv_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const i64, recvtype: usize, root: c_int, comm: usize) -> c_int {
        coll::gatherv("MPI_Gatherv_c", Mode::Blocking, sendbuf, sendcount, sendtype, recvbuf, Arr::Wide(recvcounts), Arr::Wide(displs), recvtype, root, comm, null_mut())
    }
    fn MPI_Igatherv / PMPI_Igatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: usize, root: c_int, comm: usize, request: *mut usize) -> c_int {
        coll::gatherv("MPI_Igatherv", Mode::Nonblocking, sendbuf, sendcount as i64, sendtype, recvbuf, Arr::Int(recvcounts), Arr::Int(displs), recvtype, root, comm, request)
    }
    fn MPI_Igatherv_c / PMPI_Igatherv_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const i64, recvtype: usize, root: c_int, comm: usize, request: *mut usize) -> c_int {
        coll::gatherv("MPI_Igatherv_c", Mode::Nonblocking, sendbuf, sendcount, sendtype, recvbuf, Arr::Wide(recvcounts), Arr::Wide(displs), recvtype, root, comm, request)
    }
    fn MPI_Scatter / PMPI_Scatter(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, root: c_int, comm: usize) -> c_int {
        coll::scatter("MPI_Scatter", Mode::Blocking, sendbuf, sendcount as i64, sendtype, recvbuf, recvcount as i64, recvtype, root, comm, null_mut())
    }
    fn MPI_Scatter_c / PMPI_Scatter_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, root: c_int, comm: usize) -> c_int {
        coll::scatter("MPI_Scatter_c", Mode::Blocking, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, null_mut())
    }
    fn MPI_Iscatter / PMPI_Iscatter(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, root: c_int, comm: usize, request: *mut usize) -> c_int {
        coll::scatter("MPI_Iscatter", Mode::Nonblocking, sendbuf, sendcount as i64, sendtype, recvbuf, recvcount as i64, recvtype, root, comm, request)
    }
    fn MPI_Iscatter_c / PMPI_Iscatter_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, root: c_int, comm: usize, request: *mut usize) -> c_int {
        coll::scatter("MPI_Iscatter_c", Mode::Nonblocking, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request)
    }
    fn MPI_Scatterv / PMPI_Scatterv(sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, root: c_int, comm: usize) -> c_int {
        coll::scatterv("MPI_Scatterv", Mode::Blocking, sendbuf, Arr::Int(sendcounts), Arr::Int(displs), sendtype, recvbuf, recvcount as i64, recvtype, root, comm, null_mut())
    }
    fn MPI_Scatterv_c / PMPI_Scatterv_c(sendbuf: *const c_void, sendcounts: *const i64, displs: *const i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, root: c_int, comm: usize) -> c_int {
        coll::scatterv("MPI_Scatterv_c", Mode::Blocking, sendbuf, Arr::Wide(sendcounts), Arr::Wide(displs), sendtype, recvbuf, recvcount, recvtype, root, comm, null_mut())
    }
    fn MPI_Iscatterv / PMPI_Iscatterv(sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, root: c_int, comm: usize, request: *mut usize) -> c_int {
        coll::scatterv("MPI_Iscatterv", Mode::Nonblocking, sendbuf, Arr::Int(sendcounts), Arr::Int(displs), sendtype, recvbuf, recvcount as i64, recvtype, root, comm, request)
    }
    fn MPI_Iscatterv_c / PMPI_Iscatterv_c(sendbuf: *const c_void, sendcounts: *const i64, displs: *const i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, root: c_int, comm: usize, request: *mut usize) -> c_int {
        coll::scatterv("MPI_Iscatterv_c", Mode::Nonblocking, sendbuf, Arr::Wide(sendcounts), Arr::Wide(displs), sendtype, recvbuf, recvcount, recvtype, root, comm, request)
    }
    fn MPI_Allgather / PMPI_Allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, comm: usize) -> c_int {
        coll::allgather("MPI_Allgather", Mode::Blocking, Over::Comm, sendbuf, sendcount as i64, sendtype, recvbuf, recvcount as i64, recvtype, comm, null_mut())
    }
    fn MPI_Allgather_c / PMPI_Allgather_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, comm: usize) -> c_int {
        coll::allgather("MPI_Allgather_c", Mode::Blocking, Over::Comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, null_mut())
    }
    fn MPI_Iallgather / PMPI_Iallgather(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, comm: usize, request: *mut usize) -> c_int {
        coll::allgather("MPI_Iallgather", Mode::Nonblocking, Over::Comm, sendbuf, sendcount as i64, sendtype, recvbuf, recvcount as i64, recvtype, comm, request)
    }
    fn MPI_Iallgather_c / PMPI_Iallgather_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, comm: usize, request: *mut usize) -> c_int {
        coll::allgather("MPI_Iallgather_c", Mode::Nonblocking, Over::Comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request)
    }
    fn MPI_Allgatherv / PMPI_Allgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: usize, comm: usize) -> c_int {
        coll::allgatherv("MPI_Allgatherv", Mode::Blocking, Over::Comm, sendbuf, sendcount as i64, sendtype, recvbuf, Arr::Int(recvcounts), Arr::Int(displs), recvtype, comm, null_mut())
    }
    fn MPI_Allgatherv_c / PMPI_Allgatherv_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const i64, recvtype: usize, comm: usize) -> c_int {
        coll::allgatherv("MPI_Allgatherv_c", Mode::Blocking, Over::Comm, sendbuf, sendcount, sendtype, recvbuf, Arr::Wide(recvcounts), Arr::Wide(displs), recvtype, comm, null_mut())
    }
    fn MPI_Iallgatherv / PMPI_Iallgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: usize, comm: usize, request: *mut usize) -> c_int {
        coll::allgatherv("MPI_Iallgatherv", Mode::Nonblocking, Over::Comm, sendbuf, sendcount as i64, sendtype, recvbuf, Arr::Int(recvcounts), Arr::Int(displs), recvtype, comm, request)
    }
    fn MPI_Iallgatherv_c / PMPI_Iallgatherv_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const i64, recvtype: usize, comm: usize, request: *mut usize) -> c_int {
        coll::allgatherv("MPI_Iallgatherv_c", Mode::Nonblocking, Over::Comm, sendbuf, sendcount, sendtype, recvbuf, Arr::Wide(recvcounts), Arr::Wide(displs), recvtype, comm, request)
    }
    fn MPI_Alltoall / PMPI_Alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, comm: usize) -> c_int {
        coll::alltoall("MPI_Alltoall", Mode::Blocking, Over::Comm, sendbuf, sendcount as i64, sendtype, recvbuf, recvcount as i64, recvtype, comm, null_mut())
    }
    fn MPI_Alltoall_c / PMPI_Alltoall_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, comm: usize) -> c_int {
        coll::alltoall("MPI_Alltoall_c", Mode::Blocking, Over::Comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, null_mut())
    }
    fn MPI_Ialltoall / PMPI_Ialltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, comm: usize, request: *mut usize) -> c_int {
        coll::alltoall("MPI_Ialltoall", Mode::Nonblocking, Over::Comm, sendbuf, sendcount as i64, sendtype, recvbuf, recvcount as i64, recvtype, comm, request)
    }
    fn MPI_Ialltoall_c / PMPI_Ialltoall_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, comm: usize, request: *mut usize) -> c_int {
        coll::alltoall("MPI_Ialltoall_c", Mode::Nonblocking, Over::Comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request)
    }
    fn MPI_Alltoallv / PMPI_Alltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: usize, comm: usize) -> c_int {
        coll::alltoallv("MPI_Alltoallv", Mode::Blocking, Over::Comm, sendbuf, Arr::Int(sendcounts), Arr::Int(sdispls), sendtype, recvbuf, Arr::Int(recvcounts), Arr::Int(rdispls), recvtype, comm, null_mut())
    }
    fn MPI_Alltoallv_c / PMPI_Alltoallv_c(sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const i64, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const i64, recvtype: usize, comm: usize) -> c_int {
        coll::alltoallv("MPI_Alltoallv_c", Mode::Blocking, Over::Comm, sendbuf, Arr::Wide(sendcounts), Arr::Wide(sdispls), sendtype, recvbuf, Arr::Wide(recvcounts), Arr::Wide(rdispls), recvtype, comm, null_mut())
    }
    fn MPI_Ialltoallv / PMPI_Ialltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: usize, comm: usize, request: *mut usize) -> c_int {
        coll::alltoallv("MPI_Ialltoallv", Mode::Nonblocking, Over::Comm, sendbuf, Arr::Int(sendcounts), Arr::Int(sdispls), sendtype, recvbuf, Arr::Int(recvcounts), Arr::Int(rdispls), recvtype, comm, request)
    }
    fn MPI_Ialltoallv_c / PMPI_Ialltoallv_c(sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const i64, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const i64, recvtype: usize, comm: usize, request: *mut usize) -> c_int {
        coll::alltoallv("MPI_Ialltoallv_c", Mode::Nonblocking, Over::Comm, sendbuf, Arr::Wide(sendcounts), Arr::Wide(sdispls), sendtype, recvbuf, Arr::Wide(recvcounts), Arr::Wide(rdispls), recvtype, comm, request)
    }
    fn MPI_Alltoallw / PMPI_Alltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const usize, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const usize, comm: usize) -> c_int {
        coll::alltoallw("MPI_Alltoallw", Mode::Blocking, Over::Comm, sendbuf, Arr::Int(sendcounts), Arr::Int(sdispls), sendtypes, recvbuf, Arr::Int(recvcounts), Arr::Int(rdispls), recvtypes, comm, null_mut())
    }
    fn MPI_Alltoallw_c / PMPI_Alltoallw_c(sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const i64, sendtypes: *const usize, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const i64, recvtypes: *const usize, comm: usize) -> c_int {
        coll::alltoallw("MPI_Alltoallw_c", Mode::Blocking, Over::Comm, sendbuf, Arr::Wide(sendcounts), Arr::Wide(sdispls), sendtypes, recvbuf, Arr::Wide(recvcounts), Arr::Wide(rdispls), recvtypes, comm, null_mut())
    }
    fn MPI_Ialltoallw / PMPI_Ialltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const usize, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const usize, comm: usize, request: *mut usize) -> c_int {
        coll::alltoallw("MPI_Ialltoallw", Mode::Nonblocking, Over::Comm, sendbuf, Arr::Int(sendcounts), Arr::Int(sdispls), sendtypes, recvbuf, Arr::Int(recvcounts), Arr::Int(rdispls), recvtypes, comm, request)
    }
    fn MPI_Ialltoallw_c / PMPI_Ialltoallw_c(sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const i64, sendtypes: *const usize, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const i64, recvtypes: *const usize, comm: usize, request: *mut usize) -> c_int {
        coll::alltoallw("MPI_Ialltoallw_c", Mode::Nonblocking, Over::Comm, sendbuf, Arr::Wide(sendcounts), Arr::Wide(sdispls), sendtypes, recvbuf, Arr::Wide(recvcounts), Arr::Wide(rdispls), recvtypes, comm, request)
    }
    fn MPI_Reduce / PMPI_Reduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: usize, op: usize, root: c_int, comm: usize) -> c_int {
        coll::reduce("MPI_Reduce", Mode::Blocking, sendbuf, recvbuf, count as i64, datatype, op, root, comm, null_mut())
    }
    fn MPI_Reduce_c / PMPI_Reduce_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: usize, op: usize, root: c_int, comm: usize) -> c_int {
        coll::reduce("MPI_Reduce_c", Mode::Blocking, sendbuf, recvbuf, count, datatype, op, root, comm, null_mut())
    }
    fn MPI_Ireduce / PMPI_Ireduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: usize, op: usize, root: c_int, comm: usize, request: *mut usize) -> c_int {
        coll::reduce("MPI_Ireduce", Mode::Nonblocking, sendbuf, recvbuf, count as i64, datatype, op, root, comm, request)
    }
    fn MPI_Ireduce_c / PMPI_Ireduce_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: usize, op: usize, root: c_int, comm: usize, request: *mut usize) -> c_int {
        coll::reduce("MPI_Ireduce_c", Mode::Nonblocking, sendbuf, recvbuf, count, datatype, op, root, comm, request)
    }
    fn MPI_Allreduce / PMPI_Allreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: usize, op: usize, comm: usize) -> c_int {
        coll::allreduce("MPI_Allreduce", Mode::Blocking, sendbuf, recvbuf, count as i64, datatype, op, comm, null_mut())
    }
    fn MPI_Allreduce_c / PMPI_Allreduce_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: usize, op: usize, comm: usize) -> c_int {
        coll::allreduce("MPI_Allreduce_c", Mode::Blocking, sendbuf, recvbuf, count, datatype, op, comm, null_mut())
    }
    fn MPI_Iallreduce / PMPI_Iallreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: usize, op: usize, comm: usize, request: *mut usize) -> c_int {
        coll::allreduce("MPI_Iallreduce", Mode::Nonblocking, sendbuf, recvbuf, count as i64, datatype, op, comm, request)
    }
    fn MPI_Iallreduce_c / PMPI_Iallreduce_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: usize, op: usize, comm: usize, request: *mut usize) -> c_int {
        coll::allreduce("MPI_Iallreduce_c", Mode::Nonblocking, sendbuf, recvbuf, count, datatype, op, comm, request)
    }
    fn MPI_Reduce_scatter / PMPI_Reduce_scatter(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: usize, op: usize, comm: usize) -> c_int {
        coll::reduce_scatter("MPI_Reduce_scatter", Mode::Blocking, sendbuf, recvbuf, Arr::Int(recvcounts), datatype, op, comm, null_mut())
    }
    fn MPI_Reduce_scatter_c / PMPI_Reduce_scatter_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const i64, datatype: usize, op: usize, comm: usize) -> c_int {
        coll::reduce_scatter("MPI_Reduce_scatter_c", Mode::Blocking, sendbuf, recvbuf, Arr::Wide(recvcounts), datatype, op, comm, null_mut())
    }
    fn MPI_Ireduce_scatter / PMPI_Ireduce_scatter(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: usize, op: usize, comm: usize, request: *mut usize) -> c_int {
        coll::reduce_scatter("MPI_Ireduce_scatter", Mode::Nonblocking, sendbuf, recvbuf, Arr::Int(recvcounts), datatype, op, comm, request)
    }
    fn MPI_Ireduce_scatter_c / PMPI_Ireduce_scatter_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const i64, datatype: usize, op: usize, comm: usize, request: *mut usize) -> c_int {
        coll::reduce_scatter("MPI_Ireduce_scatter_c", Mode::Nonblocking, sendbuf, recvbuf, Arr::Wide(recvcounts), datatype, op, comm, request)
    }
    fn MPI_Reduce_scatter_block / PMPI_Reduce_scatter_block(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: usize, op: usize, comm: usize) -> c_int {
        coll::reduce_scatter_block("MPI_Reduce_scatter_block", Mode::Blocking, sendbuf, recvbuf, recvcount as i64, datatype, op, comm, null_mut())
    }
    fn MPI_Reduce_scatter_block_c / PMPI_Reduce_scatter_block_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: i64, datatype: usize, op: usize, comm: usize) -> c_int {
        coll::reduce_scatter_block("MPI_Reduce_scatter_block_c", Mode::Blocking, sendbuf, recvbuf, recvcount, datatype, op, comm, null_mut())
    }
    fn MPI_Ireduce_scatter_block / PMPI_Ireduce_scatter_block(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: usize, op: usize, comm: usize, request: *mut usize) -> c_int {
        coll::reduce_scatter_block("MPI_Ireduce_scatter_block", Mode::Nonblocking, sendbuf, recvbuf, recvcount as i64, datatype, op, comm, request)
    }
    fn MPI_Ireduce_scatter_block_c / PMPI_Ireduce_scatter_block_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: i64, datatype: usize, op: usize, comm: usize, request: *mut usize) -> c_int {
        coll::reduce_scatter_block("MPI_Ireduce_scatter_block_c", Mode::Nonblocking, sendbuf, recvbuf, recvcount, datatype, op, comm, request)
    }
    fn MPI_Scan / PMPI_Scan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: usize, op: usize, comm: usize) -> c_int {
        coll::scan("MPI_Scan", Mode::Blocking, false, sendbuf, recvbuf, count as i64, datatype, op, comm, null_mut())
    }
    fn MPI_Scan_c / PMPI_Scan_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: usize, op: usize, comm: usize) -> c_int {
        coll::scan("MPI_Scan_c", Mode::Blocking, false, sendbuf, recvbuf, count, datatype, op, comm, null_mut())
    }
    fn MPI_Iscan / PMPI_Iscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: usize, op: usize, comm: usize, request: *mut usize) -> c_int {
        coll::scan("MPI_Iscan", Mode::Nonblocking, false, sendbuf, recvbuf, count as i64, datatype, op, comm, request)
    }
    fn MPI_Iscan_c / PMPI_Iscan_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: usize, op: usize, comm: usize, request: *mut usize) -> c_int {
        coll::scan("MPI_Iscan_c", Mode::Nonblocking, false, sendbuf, recvbuf, count, datatype, op, comm, request)
    }
    fn MPI_Exscan / PMPI_Exscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: usize, op: usize, comm: usize) -> c_int {
        coll::scan("MPI_Exscan", Mode::Blocking, true, sendbuf, recvbuf, count as i64, datatype, op, comm, null_mut())
    }
    fn MPI_Exscan_c / PMPI_Exscan_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: usize, op: usize, comm: usize) -> c_int {
        coll::scan("MPI_Exscan_c", Mode::Blocking, true, sendbuf, recvbuf, count, datatype, op, comm, null_mut())
    }
    fn MPI_Iexscan / PMPI_Iexscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: usize, op: usize, comm: usize, request: *mut usize) -> c_int {
        coll::scan("MPI_Iexscan", Mode::Nonblocking, true, sendbuf, recvbuf, count as i64, datatype, op, comm, request)
    }
    fn MPI_Iexscan_c / PMPI_Iexscan_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: usize, op: usize, comm: usize, request: *mut usize) -> c_int {
        coll::scan("MPI_Iexscan_c", Mode::Nonblocking, true, sendbuf, recvbuf, count, datatype, op, comm, request)
    }
    fn MPI_Neighbor_allgather / PMPI_Neighbor_allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, comm: usize) -> c_int {
        coll::allgather("MPI_Neighbor_allgather", Mode::Blocking, Over::Neighbors, sendbuf, sendcount as i64, sendtype, recvbuf, recvcount as i64, recvtype, comm, null_mut())
    }
    fn MPI_Neighbor_allgather_c / PMPI_Neighbor_allgather_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, comm: usize) -> c_int {
        coll::allgather("MPI_Neighbor_allgather_c", Mode::Blocking, Over::Neighbors, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, null_mut())
    }
    fn MPI_Ineighbor_allgather / PMPI_Ineighbor_allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, comm: usize, request: *mut usize) -> c_int {
        coll::allgather("MPI_Ineighbor_allgather", Mode::Nonblocking, Over::Neighbors, sendbuf, sendcount as i64, sendtype, recvbuf, recvcount as i64, recvtype, comm, request)
    }
    fn MPI_Ineighbor_allgather_c / PMPI_Ineighbor_allgather_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, comm: usize, request: *mut usize) -> c_int {
        coll::allgather("MPI_Ineighbor_allgather_c", Mode::Nonblocking, Over::Neighbors, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request)
    }
    fn MPI_Neighbor_allgatherv / PMPI_Neighbor_allgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: usize, comm: usize) -> c_int {
        coll::allgatherv("MPI_Neighbor_allgatherv", Mode::Blocking, Over::Neighbors, sendbuf, sendcount as i64, sendtype, recvbuf, Arr::Int(recvcounts), Arr::Int(displs), recvtype, comm, null_mut())
    }
    fn MPI_Neighbor_allgatherv_c / PMPI_Neighbor_allgatherv_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const i64, recvtype: usize, comm: usize) -> c_int {
        coll::allgatherv("MPI_Neighbor_allgatherv_c", Mode::Blocking, Over::Neighbors, sendbuf, sendcount, sendtype, recvbuf, Arr::Wide(recvcounts), Arr::Wide(displs), recvtype, comm, null_mut())
    }
    fn MPI_Ineighbor_allgatherv / PMPI_Ineighbor_allgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: usize, comm: usize, request: *mut usize) -> c_int {
        coll::allgatherv("MPI_Ineighbor_allgatherv", Mode::Nonblocking, Over::Neighbors, sendbuf, sendcount as i64, sendtype, recvbuf, Arr::Int(recvcounts), Arr::Int(displs), recvtype, comm, request)
    }
    fn MPI_Ineighbor_allgatherv_c / PMPI_Ineighbor_allgatherv_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const i64, recvtype: usize, comm: usize, request: *mut usize) -> c_int {
        coll::allgatherv("MPI_Ineighbor_allgatherv_c", Mode::Nonblocking, Over::Neighbors, sendbuf, sendcount, sendtype, recvbuf, Arr::Wide(recvcounts), Arr::Wide(displs), recvtype, comm, request)
    }
    fn MPI_Neighbor_alltoall / PMPI_Neighbor_alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, comm: usize) -> c_int {
        coll::alltoall("MPI_Neighbor_alltoall", Mode::Blocking, Over::Neighbors, sendbuf, sendcount as i64, sendtype, recvbuf, recvcount as i64, recvtype, comm, null_mut())
    }
    fn MPI_Neighbor_alltoall_c / PMPI_Neighbor_alltoall_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, comm: usize) -> c_int {
        coll::alltoall("MPI_Neighbor_alltoall_c", Mode::Blocking, Over::Neighbors, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, null_mut())
    }
    fn MPI_Ineighbor_alltoall / PMPI_Ineighbor_alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: usize, recvbuf: *mut c_void, recvcount: c_int, recvtype: usize, comm: usize, request: *mut usize) -> c_int {
        coll::alltoall("MPI_Ineighbor_alltoall", Mode::Nonblocking, Over::Neighbors, sendbuf, sendcount as i64, sendtype, recvbuf, recvcount as i64, recvtype, comm, request)
    }
    fn MPI_Ineighbor_alltoall_c / PMPI_Ineighbor_alltoall_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, comm: usize, request: *mut usize) -> c_int {
        coll::alltoall("MPI_Ineighbor_alltoall_c", Mode::Nonblocking, Over::Neighbors, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request)
    }
    fn MPI_Neighbor_alltoallv / PMPI_Neighbor_alltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: usize, comm: usize) -> c_int {
        coll::alltoallv("MPI_Neighbor_alltoallv", Mode::Blocking, Over::Neighbors, sendbuf, Arr::Int(sendcounts), Arr::Int(sdispls), sendtype, recvbuf, Arr::Int(recvcounts), Arr::Int(rdispls), recvtype, comm, null_mut())
    }
    fn MPI_Neighbor_alltoallv_c / PMPI_Neighbor_alltoallv_c(sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const i64, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const i64, recvtype: usize, comm: usize) -> c_int {
        coll::alltoallv("MPI_Neighbor_alltoallv_c", Mode::Blocking, Over::Neighbors, sendbuf, Arr::Wide(sendcounts), Arr::Wide(sdispls), sendtype, recvbuf, Arr::Wide(recvcounts), Arr::Wide(rdispls), recvtype, comm, null_mut())
    }
    fn MPI_Ineighbor_alltoallv / PMPI_Ineighbor_alltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: usize, comm: usize, request: *mut usize) -> c_int {
        coll::alltoallv("MPI_Ineighbor_alltoallv", Mode::Nonblocking, Over::Neighbors, sendbuf, Arr::Int(sendcounts), Arr::Int(sdispls), sendtype, recvbuf, Arr::Int(recvcounts), Arr::Int(rdispls), recvtype, comm, request)
    }
    fn MPI_Ineighbor_alltoallv_c / PMPI_Ineighbor_alltoallv_c(sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const i64, sendtype: usize, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const i64, recvtype: usize, comm: usize, request: *mut usize) -> c_int {
        coll::alltoallv("MPI_Ineighbor_alltoallv_c", Mode::Nonblocking, Over::Neighbors, sendbuf, Arr::Wide(sendcounts), Arr::Wide(sdispls), sendtype, recvbuf, Arr::Wide(recvcounts), Arr::Wide(rdispls), recvtype, comm, request)
    }
    fn MPI_Neighbor_alltoallw / PMPI_Neighbor_alltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const i64, sendtypes: *const usize, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const i64, recvtypes: *const usize, comm: usize) -> c_int {
        coll::alltoallw("MPI_Neighbor_alltoallw", Mode::Blocking, Over::Neighbors, sendbuf, Arr::Int(sendcounts), Arr::Wide(sdispls), sendtypes, recvbuf, Arr::Int(recvcounts), Arr::Wide(rdispls), recvtypes, comm, null_mut())
    }
    fn MPI_Neighbor_alltoallw_c / PMPI_Neighbor_alltoallw_c(sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const i64, sendtypes: *const usize, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const i64, recvtypes: *const usize, comm: usize) -> c_int {
        coll::alltoallw("MPI_Neighbor_alltoallw_c", Mode::Blocking, Over::Neighbors, sendbuf, Arr::Wide(sendcounts), Arr::Wide(sdispls), sendtypes, recvbuf, Arr::Wide(recvcounts), Arr::Wide(rdispls), recvtypes, comm, null_mut())
    }
    fn MPI_Ineighbor_alltoallw / PMPI_Ineighbor_alltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const i64, sendtypes: *const usize, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const i64, recvtypes: *const usize, comm: usize, request: *mut usize) -> c_int {
        coll::alltoallw("MPI_Ineighbor_alltoallw", Mode::Nonblocking, Over::Neighbors, sendbuf, Arr::Int(sendcounts), Arr::Wide(sdispls), sendtypes, recvbuf, Arr::Int(recvcounts), Arr::Wide(rdispls), recvtypes, comm, request)
    }
    fn MPI_Ineighbor_alltoallw_c / PMPI_Ineighbor_alltoallw_c(sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const i64, sendtypes: *const usize, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const i64, recvtypes: *const usize, comm: usize, request: *mut usize) -> c_int {
        coll::alltoallw("MPI_Ineighbor_alltoallw_c", Mode::Nonblocking, Over::Neighbors, sendbuf, Arr::Wide(sendcounts), Arr::Wide(sdispls), sendtypes, recvbuf, Arr::Wide(recvcounts), Arr::Wide(rdispls), recvtypes, comm, request)
    }
}
