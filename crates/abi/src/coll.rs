//! Collective calls.

use crate::comm::with_comm;
use crate::error::{call, Scope};
use crossmpi_core::coll;
use std::os::raw::c_int;

export! {
    fn MPI_Barrier / PMPI_Barrier(comm: usize) -> c_int {
        let f = "MPI_Barrier";
        call(Scope::Comm(comm), || {
            let id = with_comm(f, comm, |_, id| Ok(id))?;
            coll::barrier(f, id)
        })
    }
}
