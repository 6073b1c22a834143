//! The collective operations file calls need from the processes that opened a file:
//! the core's collectives on a private duplicate of the file's communicator, or (in
//! unit tests) threads.

use crate::error::IoResult;
use crossmpi_core::coll::{self, sched::Mode};
use crossmpi_core::comm::CommId;
use crossmpi_core::error::MpiError;
use crossmpi_core::runtime;
use crossmpi_core::userbuf;

pub trait Team: Send {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// The node of every member (members with equal values share a node).
    fn nodes(&self) -> Vec<u32>;
    fn barrier(&self, function: &'static str) -> IoResult<()>;
    /// Every member's `mine` (all of one length), in rank order.
    fn allgather(&self, function: &'static str, mine: &[u8]) -> IoResult<Vec<u8>>;
    fn bcast(&self, function: &'static str, root: usize, data: &mut [u8]) -> IoResult<()>;
    /// `send[i]` goes to member i, whose block for us lands in `recv[i]` (the lengths
    /// agree, as for MPI_Alltoallv).
    fn alltoallv(
        &self,
        function: &'static str,
        send: &[&[u8]],
        recv: &mut [&mut [u8]],
    ) -> IoResult<()>;
}

/// The processes of a communicator (the file's duplicate of the user's).
pub struct CommTeam {
    pub comm: CommId,
    rank: usize,
    nodes: Vec<u32>,
}

impl CommTeam {
    pub fn new(function: &str, comm: CommId) -> IoResult<CommTeam> {
        let (rank, nodes) = runtime::with(function, |rt| {
            let c = rt.comm(function, comm)?;
            Ok((c.rank, c.nodes.to_vec()))
        })?;
        Ok(CommTeam { comm, rank, nodes })
    }
}

impl Team for CommTeam {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.nodes.len()
    }
    fn nodes(&self) -> Vec<u32> {
        self.nodes.clone()
    }
    fn barrier(&self, function: &'static str) -> IoResult<()> {
        Ok(coll::barrier(function, self.comm)?)
    }
    fn allgather(&self, function: &'static str, mine: &[u8]) -> IoResult<Vec<u8>> {
        Ok(coll::allgather_bytes(function, self.comm, mine)?)
    }
    fn bcast(&self, function: &'static str, root: usize, data: &mut [u8]) -> IoResult<()> {
        Ok(coll::bcast_bytes(function, self.comm, root, data)?)
    }
    fn alltoallv(
        &self,
        function: &'static str,
        send: &[&[u8]],
        recv: &mut [&mut [u8]],
    ) -> IoResult<()> {
        let send = send
            .iter()
            .map(|s| userbuf::bytes(s.as_ptr() as usize, s.len()))
            .collect();
        let recv = recv
            .iter_mut()
            .map(|r| userbuf::bytes(r.as_mut_ptr() as usize, r.len()))
            .collect();
        // The name tells the core the blocks differ in size (an alltoallv); errors are
        // reported under the file call.
        coll::alltoall("MPI_Alltoallv", self.comm, Mode::Blocking, Some(send), recv)
            .map(|_| ())
            .map_err(|e| MpiError::new(e.class, format!("{function}: {}", e.message)).into())
    }
}
