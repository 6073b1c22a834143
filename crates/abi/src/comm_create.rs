//! Making communicators beyond dup and split: dup with info, nonblocking dup, create
//! from groups, split by node, compare, info hints, and intercommunicators.

use crate::attr;
use crate::comm::{handle, id_of, resolve, with_comm};
use crate::consts::*;
use crate::error::{call, Scope};
use crate::group::{self, similarity_code};
use crate::info;
use crate::util::{out, required};
use crossmpi_core::comm::CommId;
use crossmpi_core::comm_idup::Idup;
use crossmpi_core::comm_ops;
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::group::Similarity;
use crossmpi_core::runtime;
use std::collections::BTreeMap;
use std::os::raw::c_int;

/// The communicator hints of the standard (MPI-4.0 section 7.4.4) with their defaults:
/// what `MPI_Comm_get_info` reports, a value the application set in place of the
/// default; other keys are kept but not reported. crossmpi exploits none of these
/// assertions, so whatever they assert holds.
const COMM_HINTS: [(&str, &str); 4] = [
    ("mpi_assert_no_any_tag", "false"),
    ("mpi_assert_no_any_source", "false"),
    ("mpi_assert_exact_length", "false"),
    ("mpi_assert_allow_overtaking", "false"),
];

/// Duplicates `comm` with its attributes (through the copy callbacks) into `*newcomm`;
/// `hints` replace the parent's info hints when given.
pub fn dup_with_attrs(
    function: &str,
    comm: usize,
    hints: Option<info::Pairs>,
    newcomm: *mut usize,
) -> MpiResult<()> {
    let id = id_of(function, comm)?;
    let new = comm_ops::dup(function, id)?;
    if let Some(h) = hints {
        runtime::with(function, |rt| {
            rt.comm_mut(function, new)?.hints = h.into_iter().collect();
            Ok(())
        })?;
    }
    adopt(function, id, new, newcomm)
}

/// Ends a duplication once the members agreed on `new`: it gets `parent`'s attributes
/// through the copy callbacks, and its handle goes to `*newcomm`. A copy callback that
/// fails fails the duplication, and `*newcomm` is then `MPI_COMM_NULL` (as in MPICH and
/// Open MPI): the attributes copied so far are deleted (their delete callbacks run) and
/// the new communicator is freed.
pub fn adopt(function: &str, id: CommId, new: CommId, newcomm: *mut usize) -> MpiResult<()> {
    if let Err(e) = attr::copy_comm_attrs(function, id, new) {
        // The copy's failure is what the caller must learn; a delete callback failing
        // while the half-made duplicate is torn down cannot change that.
        let _ = attr::delete_comm_attrs(function, new);
        comm_ops::free(function, new)?;
        out(function, "newcomm", newcomm, MPI_COMM_NULL)?;
        return Err(e);
    }
    out(function, "newcomm", newcomm, handle(function, Some(new))?)
}

/// `MPI_Comm_idup(_with_info)`: returns at once with a request the agreement moves on
/// in (`crossmpi_core::comm_idup`); `*newcomm` is written when it completes.
fn idup(
    function: &'static str,
    comm: usize,
    hints: Option<info::Pairs>,
    newcomm: *mut usize,
    request: *mut usize,
) -> MpiResult<()> {
    required(function, "newcomm", newcomm)?;
    let id = id_of(function, comm)?;
    let agreement = Idup::start(function, id, hints.map(|h| h.into_iter().collect()))?;
    let h = runtime::with(function, |rt| {
        Ok(crate::mpi4_requests::start_idup(rt, agreement, id, newcomm))
    })?;
    out(function, "request", request, h)
}

/// `MPI_Comm_compare`: the same object, the same group in the same order, the same
/// members, or different.
fn compare(function: &str, a: usize, b: usize) -> MpiResult<c_int> {
    runtime::with(function, |rt| {
        let ia = resolve(rt, function, a)?;
        let ib = resolve(rt, function, b)?;
        if ia == ib {
            return Ok(MPI_IDENT);
        }
        let (ca, cb) = (rt.comm(function, ia)?, rt.comm(function, ib)?);
        let local = crossmpi_core::group::compare(&ca.group, &cb.group);
        let remote = match (&ca.remote, &cb.remote) {
            (None, None) => Similarity::Ident,
            (Some(x), Some(y)) => crossmpi_core::group::compare(x, y),
            _ => return Ok(MPI_UNEQUAL),
        };
        Ok(match (local, remote) {
            (Similarity::Ident, Similarity::Ident) => MPI_CONGRUENT,
            (Similarity::Unequal, _) | (_, Similarity::Unequal) => MPI_UNEQUAL,
            _ => similarity_code(Similarity::Similar),
        })
    })
}

/// Split type of the processes of one cluster (declared in mpi_compat.h).
pub const MPIX_COMM_TYPE_CLUSTER: c_int = 230;

export! {
    fn MPI_Comm_dup_with_info / PMPI_Comm_dup_with_info(comm: usize, info: usize, newcomm: *mut usize) -> c_int {
        let f = "MPI_Comm_dup_with_info";
        call(Scope::Comm(comm), || {
            let hints = info::read(f, "info", info, true)?;
            dup_with_attrs(f, comm, Some(hints), newcomm)
        })
    }

    fn MPI_Comm_idup / PMPI_Comm_idup(comm: usize, newcomm: *mut usize, request: *mut usize) -> c_int {
        let f = "MPI_Comm_idup";
        call(Scope::Comm(comm), || idup(f, comm, None, newcomm, request))
    }

    fn MPI_Comm_idup_with_info / PMPI_Comm_idup_with_info(comm: usize, info: usize, newcomm: *mut usize, request: *mut usize) -> c_int {
        let f = "MPI_Comm_idup_with_info";
        call(Scope::Comm(comm), || {
            let hints = info::read(f, "info", info, true)?;
            idup(f, comm, Some(hints), newcomm, request)
        })
    }

    fn MPI_Comm_create / PMPI_Comm_create(comm: usize, group: usize, newcomm: *mut usize) -> c_int {
        let f = "MPI_Comm_create";
        call(Scope::Comm(comm), || {
            let g = group::lookup(f, "group", group)?;
            let new = comm_ops::create(f, id_of(f, comm)?, g)?;
            out(f, "newcomm", newcomm, handle(f, new)?)
        })
    }

    fn MPI_Comm_create_group / PMPI_Comm_create_group(comm: usize, group: usize, tag: c_int, newcomm: *mut usize) -> c_int {
        let f = "MPI_Comm_create_group";
        call(Scope::Comm(comm), || {
            if tag < 0 {
                return Err(MpiError::arg(ErrorClass::Tag, f, "tag", tag, "tags are non-negative"));
            }
            let g = group::lookup(f, "group", group)?;
            let new = comm_ops::create_group(f, id_of(f, comm)?, g, tag)?;
            out(f, "newcomm", newcomm, handle(f, new)?)
        })
    }

    /// `MPI_COMM_TYPE_SHARED`, `MPI_COMM_TYPE_HW_GUIDED` and `MPI_COMM_TYPE_HW_UNGUIDED`
    /// all give the node's processes: the node is the only hardware level crossmpi
    /// knows, and it is the level shared memory spans. `MPI_COMM_TYPE_RESOURCE_GUIDED`
    /// (MPI 4.1) likewise. `MPIX_COMM_TYPE_CLUSTER` (crossmpi) gives the processes of the
    /// caller's cluster: its IMPI client, or its site in a flat job (`CROSSMPI_SITE_OF`).
    fn MPI_Comm_split_type / PMPI_Comm_split_type(comm: usize, split_type: c_int, key: c_int, info: usize, newcomm: *mut usize) -> c_int {
        let f = "MPI_Comm_split_type";
        call(Scope::Comm(comm), || {
            info::read(f, "info", info, true)?;
            let id = id_of(f, comm)?;
            let new = match split_type {
                t if t == MPI_UNDEFINED => comm_ops::split(f, id, MPI_UNDEFINED, key)?,
                t if t == MPI_COMM_TYPE_SHARED
                    || t == MPI_COMM_TYPE_HW_GUIDED
                    || t == MPI_COMM_TYPE_HW_UNGUIDED
                    || t == MPI_COMM_TYPE_RESOURCE_GUIDED => comm_ops::split_shared(f, id, key)?,
                t if t == MPIX_COMM_TYPE_CLUSTER => comm_ops::split_site(f, id, key)?,
                t => return Err(MpiError::arg(ErrorClass::Arg, f, "split_type", t, "not MPI_COMM_TYPE_SHARED, _HW_GUIDED, _HW_UNGUIDED, _RESOURCE_GUIDED, MPIX_COMM_TYPE_CLUSTER or MPI_UNDEFINED")),
            };
            out(f, "newcomm", newcomm, handle(f, new)?)
        })
    }

    fn MPI_Comm_compare / PMPI_Comm_compare(comm1: usize, comm2: usize, result: *mut c_int) -> c_int {
        let f = "MPI_Comm_compare";
        call(Scope::Comm(comm1), || out(f, "result", result, compare(f, comm1, comm2)?))
    }

    fn MPI_Comm_set_info / PMPI_Comm_set_info(comm: usize, info: usize) -> c_int {
        let f = "MPI_Comm_set_info";
        call(Scope::Comm(comm), || {
            let pairs = info::read(f, "info", info, true)?;
            with_comm(f, comm, |rt, id| {
                let hints: &mut BTreeMap<String, String> = &mut rt.comm_mut(f, id)?.hints;
                hints.extend(pairs);
                Ok(())
            })
        })
    }

    fn MPI_Comm_get_info / PMPI_Comm_get_info(comm: usize, info_used: *mut usize) -> c_int {
        let f = "MPI_Comm_get_info";
        call(Scope::Comm(comm), || {
            let set = with_comm(f, comm, |rt, id| Ok(rt.comm(f, id)?.hints.clone()))?;
            let mut hints = info::defaults(&COMM_HINTS);
            info::apply_known(&mut hints, set);
            out(f, "info_used", info_used, info::create(hints))
        })
    }

    fn MPI_Intercomm_create / PMPI_Intercomm_create(local_comm: usize, local_leader: c_int, peer_comm: usize, remote_leader: c_int, tag: c_int, newintercomm: *mut usize) -> c_int {
        let f = "MPI_Intercomm_create";
        call(Scope::Comm(local_comm), || {
            let local = id_of(f, local_comm)?;
            if local_leader < 0 {
                return Err(MpiError::arg(ErrorClass::Rank, f, "local_leader", local_leader, "ranks are non-negative"));
            }
            // The peer communicator matters at the leaders only; others may pass anything.
            let peer = id_of(f, peer_comm).ok();
            let new = crossmpi_core::intercomm::create(f, local, local_leader as usize, peer, remote_leader, tag)?;
            out(f, "newintercomm", newintercomm, handle(f, Some(new))?)
        })
    }

    fn MPI_Intercomm_merge / PMPI_Intercomm_merge(intercomm: usize, high: c_int, newintracomm: *mut usize) -> c_int {
        let f = "MPI_Intercomm_merge";
        call(Scope::Comm(intercomm), || {
            let new = crossmpi_core::intercomm::merge(f, id_of(f, intercomm)?, high != 0)?;
            out(f, "newintracomm", newintracomm, handle(f, Some(new))?)
        })
    }
}
