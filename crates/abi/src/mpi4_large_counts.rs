//! The large-count (`_c`, `MPI_Count`) forms of point-to-point, persistent requests and
//! the attached buffer: the same code as the `int` forms (p2p.rs), which carry counts as
//! 64-bit values throughout, so nothing is truncated.

use crate::error::{call, Scope};
use crate::handle::MpiStatus;
use crate::p2p::{
    buffer_attach, imrecv, irecv, isend, mrecv, recv_init, send, send_init, sendrecv,
    sendrecv_replace,
};
use crate::util::out;
use crossmpi_core::request::SendMode;
use std::os::raw::{c_int, c_void};

export! {
    fn MPI_Ssend_c / PMPI_Ssend_c(buf: *const c_void, count: i64, datatype: usize, dest: c_int, tag: c_int, comm: usize) -> c_int {
        send("MPI_Ssend_c", buf, count, datatype, dest, tag, comm, SendMode::Synchronous)
    }
    fn MPI_Rsend_c / PMPI_Rsend_c(buf: *const c_void, count: i64, datatype: usize, dest: c_int, tag: c_int, comm: usize) -> c_int {
        send("MPI_Rsend_c", buf, count, datatype, dest, tag, comm, SendMode::Ready)
    }
    fn MPI_Bsend_c / PMPI_Bsend_c(buf: *const c_void, count: i64, datatype: usize, dest: c_int, tag: c_int, comm: usize) -> c_int {
        send("MPI_Bsend_c", buf, count, datatype, dest, tag, comm, SendMode::Buffered)
    }
    fn MPI_Issend_c / PMPI_Issend_c(buf: *const c_void, count: i64, datatype: usize, dest: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        isend("MPI_Issend_c", buf, count, datatype, dest, tag, comm, SendMode::Synchronous, request)
    }
    fn MPI_Irsend_c / PMPI_Irsend_c(buf: *const c_void, count: i64, datatype: usize, dest: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        isend("MPI_Irsend_c", buf, count, datatype, dest, tag, comm, SendMode::Ready, request)
    }
    fn MPI_Ibsend_c / PMPI_Ibsend_c(buf: *const c_void, count: i64, datatype: usize, dest: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        isend("MPI_Ibsend_c", buf, count, datatype, dest, tag, comm, SendMode::Buffered, request)
    }
    fn MPI_Irecv_c / PMPI_Irecv_c(buf: *mut c_void, count: i64, datatype: usize, source: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        irecv("MPI_Irecv_c", buf, count, datatype, source, tag, comm, request)
    }
    fn MPI_Mrecv_c / PMPI_Mrecv_c(buf: *mut c_void, count: i64, datatype: usize, message: *mut usize, status: *mut MpiStatus) -> c_int {
        mrecv("MPI_Mrecv_c", buf, count, datatype, message, status)
    }
    fn MPI_Imrecv_c / PMPI_Imrecv_c(buf: *mut c_void, count: i64, datatype: usize, message: *mut usize, request: *mut usize) -> c_int {
        imrecv("MPI_Imrecv_c", buf, count, datatype, message, request)
    }
    fn MPI_Send_init_c / PMPI_Send_init_c(buf: *const c_void, count: i64, datatype: usize, dest: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        send_init("MPI_Send_init_c", buf, count, datatype, dest, tag, comm, SendMode::Standard, request)
    }
    fn MPI_Ssend_init_c / PMPI_Ssend_init_c(buf: *const c_void, count: i64, datatype: usize, dest: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        send_init("MPI_Ssend_init_c", buf, count, datatype, dest, tag, comm, SendMode::Synchronous, request)
    }
    fn MPI_Rsend_init_c / PMPI_Rsend_init_c(buf: *const c_void, count: i64, datatype: usize, dest: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        send_init("MPI_Rsend_init_c", buf, count, datatype, dest, tag, comm, SendMode::Ready, request)
    }
    fn MPI_Bsend_init_c / PMPI_Bsend_init_c(buf: *const c_void, count: i64, datatype: usize, dest: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        send_init("MPI_Bsend_init_c", buf, count, datatype, dest, tag, comm, SendMode::Buffered, request)
    }
    fn MPI_Recv_init_c / PMPI_Recv_init_c(buf: *mut c_void, count: i64, datatype: usize, source: c_int, tag: c_int, comm: usize, request: *mut usize) -> c_int {
        recv_init("MPI_Recv_init_c", buf, count, datatype, source, tag, comm, request)
    }
    fn MPI_Sendrecv_c / PMPI_Sendrecv_c(sendbuf: *const c_void, sendcount: i64, sendtype: usize, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: i64, recvtype: usize, source: c_int, recvtag: c_int, comm: usize, status: *mut MpiStatus) -> c_int {
        sendrecv("MPI_Sendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status)
    }
    fn MPI_Sendrecv_replace_c / PMPI_Sendrecv_replace_c(buf: *mut c_void, count: i64, datatype: usize, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: usize, status: *mut MpiStatus) -> c_int {
        sendrecv_replace("MPI_Sendrecv_replace_c", buf, count, datatype, dest, sendtag, source, recvtag, comm, status)
    }
    fn MPI_Buffer_attach_c / PMPI_Buffer_attach_c(buffer: *mut c_void, size: i64) -> c_int {
        buffer_attach("MPI_Buffer_attach_c", buffer, size)
    }
    fn MPI_Buffer_detach_c / PMPI_Buffer_detach_c(buffer_addr: *mut c_void, size: *mut i64) -> c_int {
        let f = "MPI_Buffer_detach_c";
        call(Scope::Process, || {
            let (addr, len) = crate::mpi4_buffers::detach_process(f)?;
            out(f, "buffer_addr", buffer_addr as *mut usize, addr)?;
            out(f, "size", size, len as i64)
        })
    }
}
