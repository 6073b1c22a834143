//! Group handles and the `MPI_Group_*` calls, plus `MPI_Comm_group` and
//! `MPI_Comm_remote_group`. Groups are immutable, so a handle holds a shared `Group`.

use crate::comm::with_comm;
use crate::consts::*;
use crate::error::{call, Scope};
use crate::handle::{self, Kind};
use crate::util::{out, slice, slice_mut};
use crossmpi_core::comm::Group;
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::group::{self, Similarity};
use crossmpi_core::runtime;
use crossmpi_core::slab::Slab;
use std::os::raw::c_int;
use std::sync::{Arc, Mutex};

static GROUPS: Mutex<Slab<Arc<Group>>> = Mutex::new(Slab::new_const());

fn groups() -> std::sync::MutexGuard<'static, Slab<Arc<Group>>> {
    GROUPS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A new group handle (`MPI_GROUP_EMPTY` for an empty group, which needs no freeing
/// bookkeeping of ours).
pub fn new_handle(g: Arc<Group>) -> usize {
    if g.size() == 0 {
        return MPI_GROUP_EMPTY;
    }
    handle::encode(Kind::Group, groups().insert(g).index)
}

/// The group a handle names; `arg` is the argument's name for errors.
pub fn lookup(function: &str, arg: &str, h: usize) -> MpiResult<Arc<Group>> {
    if h == MPI_GROUP_EMPTY {
        return Ok(Group::new(Vec::new()));
    }
    let bad = |why: &str| MpiError::arg(ErrorClass::Group, function, arg, handle::describe(h), why);
    if h == MPI_GROUP_NULL {
        return Err(bad("MPI_GROUP_NULL is not a group"));
    }
    let slot = handle::decode(Kind::Group, h).ok_or_else(|| bad("not a group handle"))?;
    groups()
        .by_index(slot)
        .map(|(_, g)| g.clone())
        .ok_or_else(|| bad("freed or never created"))
}

/// The standard's constant for a comparison result.
pub fn similarity_code(s: Similarity) -> c_int {
    match s {
        Similarity::Ident => MPI_IDENT,
        Similarity::Congruent => MPI_CONGRUENT,
        Similarity::Similar => MPI_SIMILAR,
        Similarity::Unequal => MPI_UNEQUAL,
    }
}

/// This process's rank in `g`, or `MPI_UNDEFINED`.
fn my_rank(function: &str, g: &Group) -> MpiResult<c_int> {
    let me = runtime::with(function, |rt| Ok(rt.rank))?;
    Ok(g.rank_of(me).map_or(MPI_UNDEFINED, |r| r as c_int))
}

/// Runs a binary group operation and stores the new handle.
fn binary(
    function: &str,
    g1: usize,
    g2: usize,
    newgroup: *mut usize,
    op: fn(&Group, &Group) -> Arc<Group>,
) -> c_int {
    call(Scope::Process, || {
        let a = lookup(function, "group1", g1)?;
        let b = lookup(function, "group2", g2)?;
        out(function, "newgroup", newgroup, new_handle(op(&a, &b)))
    })
}

/// Reads `n` ranks of an incl/excl call.
fn ranks_arg<'a>(function: &str, n: c_int, ranks: *const c_int) -> MpiResult<&'a [c_int]> {
    let n = crate::util::count(function, "n", n as i64)?;
    slice(function, "ranks", ranks, n as usize)
}

fn ranges_arg(
    function: &str,
    g: &Group,
    n: c_int,
    ranges: *const [c_int; 3],
) -> MpiResult<Vec<c_int>> {
    let n = crate::util::count(function, "n", n as i64)?;
    group::expand_ranges(function, g, slice(function, "ranges", ranges, n as usize)?)
}

export! {
    fn MPI_Comm_group / PMPI_Comm_group(comm: usize, group: *mut usize) -> c_int {
        let f = "MPI_Comm_group";
        call(Scope::Comm(comm), || {
            let g = with_comm(f, comm, |rt, id| Ok(rt.comm(f, id)?.group.clone()))?;
            out(f, "group", group, new_handle(g))
        })
    }

    fn MPI_Comm_remote_group / PMPI_Comm_remote_group(comm: usize, group: *mut usize) -> c_int {
        let f = "MPI_Comm_remote_group";
        call(Scope::Comm(comm), || {
            let g = with_comm(f, comm, |rt, id| {
                rt.comm(f, id)?.remote.clone().ok_or_else(|| {
                    MpiError::arg(ErrorClass::Comm, f, "comm", handle::describe(comm), "not an intercommunicator")
                })
            })?;
            out(f, "group", group, new_handle(g))
        })
    }

    fn MPI_Group_size / PMPI_Group_size(group: usize, size: *mut c_int) -> c_int {
        let f = "MPI_Group_size";
        call(Scope::Process, || out(f, "size", size, lookup(f, "group", group)?.size() as c_int))
    }

    fn MPI_Group_rank / PMPI_Group_rank(group: usize, rank: *mut c_int) -> c_int {
        let f = "MPI_Group_rank";
        call(Scope::Process, || {
            let g = lookup(f, "group", group)?;
            out(f, "rank", rank, my_rank(f, &g)?)
        })
    }

    fn MPI_Group_free / PMPI_Group_free(group: *mut usize) -> c_int {
        let f = "MPI_Group_free";
        call(Scope::Process, || {
            if group.is_null() {
                return Err(MpiError::arg(ErrorClass::Arg, f, "group", "NULL", "a pointer to a group is required"));
            }
            // SAFETY: non-null MPI_Group* argument (C ABI contract).
            let h = unsafe { *group };
            lookup(f, "group", h)?;
            // MPI_GROUP_EMPTY may be freed (it is what Comm_group of nothing returns);
            // it stays valid, being predefined.
            if let Some(slot) = handle::decode(Kind::Group, h) {
                let mut t = groups();
                if let Some((id, _)) = t.by_index(slot) {
                    t.remove(id);
                }
            }
            out(f, "group", group, MPI_GROUP_NULL)
        })
    }

    fn MPI_Group_incl / PMPI_Group_incl(group: usize, n: c_int, ranks: *const c_int, newgroup: *mut usize) -> c_int {
        let f = "MPI_Group_incl";
        call(Scope::Process, || {
            let g = lookup(f, "group", group)?;
            let new = group::incl(f, &g, ranks_arg(f, n, ranks)?)?;
            out(f, "newgroup", newgroup, new_handle(new))
        })
    }

    fn MPI_Group_excl / PMPI_Group_excl(group: usize, n: c_int, ranks: *const c_int, newgroup: *mut usize) -> c_int {
        let f = "MPI_Group_excl";
        call(Scope::Process, || {
            let g = lookup(f, "group", group)?;
            let new = group::excl(f, &g, ranks_arg(f, n, ranks)?)?;
            out(f, "newgroup", newgroup, new_handle(new))
        })
    }

    fn MPI_Group_range_incl / PMPI_Group_range_incl(group: usize, n: c_int, ranges: *const [c_int; 3], newgroup: *mut usize) -> c_int {
        let f = "MPI_Group_range_incl";
        call(Scope::Process, || {
            let g = lookup(f, "group", group)?;
            let new = group::incl(f, &g, &ranges_arg(f, &g, n, ranges)?)?;
            out(f, "newgroup", newgroup, new_handle(new))
        })
    }

    fn MPI_Group_range_excl / PMPI_Group_range_excl(group: usize, n: c_int, ranges: *const [c_int; 3], newgroup: *mut usize) -> c_int {
        let f = "MPI_Group_range_excl";
        call(Scope::Process, || {
            let g = lookup(f, "group", group)?;
            let new = group::excl(f, &g, &ranges_arg(f, &g, n, ranges)?)?;
            out(f, "newgroup", newgroup, new_handle(new))
        })
    }

    fn MPI_Group_union / PMPI_Group_union(group1: usize, group2: usize, newgroup: *mut usize) -> c_int {
        binary("MPI_Group_union", group1, group2, newgroup, group::union)
    }

    fn MPI_Group_intersection / PMPI_Group_intersection(group1: usize, group2: usize, newgroup: *mut usize) -> c_int {
        binary("MPI_Group_intersection", group1, group2, newgroup, group::intersection)
    }

    fn MPI_Group_difference / PMPI_Group_difference(group1: usize, group2: usize, newgroup: *mut usize) -> c_int {
        binary("MPI_Group_difference", group1, group2, newgroup, group::difference)
    }

    fn MPI_Group_compare / PMPI_Group_compare(group1: usize, group2: usize, result: *mut c_int) -> c_int {
        let f = "MPI_Group_compare";
        call(Scope::Process, || {
            let a = lookup(f, "group1", group1)?;
            let b = lookup(f, "group2", group2)?;
            out(f, "result", result, similarity_code(group::compare(&a, &b)))
        })
    }

    fn MPI_Group_translate_ranks / PMPI_Group_translate_ranks(group1: usize, n: c_int, ranks1: *const c_int, group2: usize, ranks2: *mut c_int) -> c_int {
        let f = "MPI_Group_translate_ranks";
        call(Scope::Process, || {
            let a = lookup(f, "group1", group1)?;
            let b = lookup(f, "group2", group2)?;
            let n = crate::util::count(f, "n", n as i64)? as usize;
            let r = group::translate(f, &a, slice(f, "ranks1", ranks1, n)?, &b, MPI_PROC_NULL)?;
            slice_mut(f, "ranks2", ranks2, n)?.copy_from_slice(&r);
            Ok(())
        })
    }
}
