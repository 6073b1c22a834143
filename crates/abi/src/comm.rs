//! Communicator handles and the communicator calls: size, rank, dup (plain, with info,
//! nonblocking), split (by color, by node), create (from a group, collectively or by the
//! group only), compare, free, names, info hints, predefined attributes, error handlers
//! and intercommunicators.

use crate::attr;
use crate::comm_create::dup_with_attrs;
use crate::consts::*;
use crate::error::{self, call, Scope};
use crate::handle::{self, Kind};
use crate::util::{in_string, out, out_string};
use crossmpi_core::comm::CommId;
use crossmpi_core::comm_ops;
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::runtime::{self, Runtime};
use std::os::raw::{c_char, c_int};
use std::sync::atomic::{AtomicI32, Ordering};

/// The communicator a handle names.
pub fn resolve(rt: &Runtime, function: &str, h: usize) -> MpiResult<CommId> {
    let bad =
        |why: &str| MpiError::arg(ErrorClass::Comm, function, "comm", handle::describe(h), why);
    if h == MPI_COMM_WORLD {
        return Ok(rt.world);
    }
    if h == MPI_COMM_SELF {
        return Ok(rt.self_comm);
    }
    if h == MPI_COMM_NULL {
        return Err(bad("MPI_COMM_NULL is not a communicator"));
    }
    let slot = handle::decode(Kind::Comm, h).ok_or_else(|| bad("not a communicator handle"))?;
    rt.comms
        .by_index(slot)
        .map(|(id, _)| id)
        .ok_or_else(|| bad("freed or never created"))
}

/// The handle of a communicator.
pub fn handle_of(rt: &Runtime, id: CommId) -> usize {
    if id == rt.world {
        MPI_COMM_WORLD
    } else if id == rt.self_comm {
        MPI_COMM_SELF
    } else {
        handle::encode(Kind::Comm, id.index)
    }
}

/// The communicator a handle names, outside a runtime closure.
pub fn id_of(function: &str, h: usize) -> MpiResult<CommId> {
    runtime::with(function, |rt| resolve(rt, function, h))
}

/// The handle of a new communicator, or `MPI_COMM_NULL` for none.
pub fn handle(function: &str, id: Option<CommId>) -> MpiResult<usize> {
    match id {
        Some(id) => runtime::with(function, |rt| Ok(handle_of(rt, id))),
        None => Ok(MPI_COMM_NULL),
    }
}

/// Runs `f` with the communicator a handle names.
pub fn with_comm<R>(
    function: &str,
    h: usize,
    f: impl FnOnce(&mut Runtime, CommId) -> MpiResult<R>,
) -> MpiResult<R> {
    runtime::with(function, |rt| {
        let id = resolve(rt, function, h)?;
        f(rt, id)
    })
}

/// Storage for predefined attribute values: `MPI_Comm_get_attr` returns pointers to them.
static TAG_UB: AtomicI32 = AtomicI32::new(crossmpi_core::p2p::TAG_UB);
static HOST: AtomicI32 = AtomicI32::new(MPI_PROC_NULL);
static IO: AtomicI32 = AtomicI32::new(MPI_ANY_SOURCE);
static WTIME_IS_GLOBAL: AtomicI32 = AtomicI32::new(0);
static UNIVERSE_SIZE: AtomicI32 = AtomicI32::new(0);
static APPNUM: AtomicI32 = AtomicI32::new(0);
static LASTUSEDCODE: AtomicI32 = AtomicI32::new(0);
static CLIENT_SIZE: AtomicI32 = AtomicI32::new(1);
static CLIENT_COLOR: AtomicI32 = AtomicI32::new(0);
static HOST_SIZE: AtomicI32 = AtomicI32::new(1);
static HOST_COLOR: AtomicI32 = AtomicI32::new(0);

/// The IMPI draft's client and host attributes (declared in mpi_compat.h; not part of
/// the MPI-5.0 ABI, so their values lie outside its ranges).
pub const MPI_CLIENT_SIZE: c_int = 520;
pub const MPI_CLIENT_COLOR: c_int = 521;
pub const MPI_HOST_SIZE: c_int = 522;
pub const MPI_HOST_COLOR: c_int = 523;

/// How many distinct values `of_member` has over the members, and the index of
/// `mine` among them in ascending order: an IMPI size/color pair.
fn size_and_color(of_member: impl Iterator<Item = u32>, mine: u32) -> (i32, i32) {
    let mut distinct: Vec<u32> = of_member.collect();
    distinct.sort_unstable();
    distinct.dedup();
    let color = distinct.iter().position(|&v| v == mine).unwrap_or(0);
    (distinct.len() as i32, color as i32)
}

/// The predefined attribute `keyval` of communicator `id`, if it is one: the cell holding
/// its value (C is given the cell's address). The client/host attributes depend on the
/// communicator, so their cells hold the value of the latest query (read it before
/// asking about another communicator).
pub fn predefined_attribute(rt: &Runtime, id: CommId, keyval: c_int) -> Option<&'static AtomicI32> {
    if (MPI_CLIENT_SIZE..=MPI_HOST_COLOR).contains(&keyval) {
        let c = rt.comms.get(id)?;
        let me = c.group.members[c.rank] as usize;
        let (per_world, size_cell, color_cell) = match keyval {
            MPI_CLIENT_SIZE | MPI_CLIENT_COLOR => (&rt.site_of, &CLIENT_SIZE, &CLIENT_COLOR),
            _ => (&rt.host_of, &HOST_SIZE, &HOST_COLOR),
        };
        let (size, color) = size_and_color(
            c.group.members.iter().map(|&w| per_world[w as usize]),
            per_world[me],
        );
        size_cell.store(size, Ordering::Relaxed);
        color_cell.store(color, Ordering::Relaxed);
        let cell = match keyval {
            MPI_CLIENT_SIZE | MPI_HOST_SIZE => size_cell,
            _ => color_cell,
        };
        return Some(cell);
    }
    let cell = match keyval {
        k if k == MPI_TAG_UB => {
            TAG_UB.store(rt.tag_ub, Ordering::Relaxed);
            &TAG_UB
        }
        k if k == MPI_HOST => &HOST,
        k if k == MPI_IO => &IO,
        k if k == MPI_WTIME_IS_GLOBAL => &WTIME_IS_GLOBAL,
        k if k == MPI_UNIVERSE_SIZE => {
            match rt.universe_size {
                Some(n) => UNIVERSE_SIZE.store(n as i32, Ordering::Relaxed),
                None => return None,
            }
            &UNIVERSE_SIZE
        }
        k if k == MPI_APPNUM => {
            APPNUM.store(rt.appnum, Ordering::Relaxed);
            &APPNUM
        }
        k if k == MPI_LASTUSEDCODE => {
            LASTUSEDCODE.store(error::last_used_code(), Ordering::Relaxed);
            &LASTUSEDCODE
        }
        _ => return None,
    };
    Some(cell)
}

export! {
    fn MPI_Comm_size / PMPI_Comm_size(comm: usize, size: *mut c_int) -> c_int {
        let f = "MPI_Comm_size";
        call(Scope::Comm(comm), || {
            let n = with_comm(f, comm, |rt, id| Ok(rt.comm(f, id)?.size()))?;
            out(f, "size", size, n as c_int)
        })
    }

    fn MPI_Comm_rank / PMPI_Comm_rank(comm: usize, rank: *mut c_int) -> c_int {
        let f = "MPI_Comm_rank";
        call(Scope::Comm(comm), || {
            let r = with_comm(f, comm, |rt, id| Ok(rt.comm(f, id)?.rank))?;
            out(f, "rank", rank, r as c_int)
        })
    }

    fn MPI_Comm_remote_size / PMPI_Comm_remote_size(comm: usize, size: *mut c_int) -> c_int {
        let f = "MPI_Comm_remote_size";
        call(Scope::Comm(comm), || {
            let n = with_comm(f, comm, |rt, id| {
                let c = rt.comm(f, id)?;
                c.remote.as_ref().map(|g| g.size()).ok_or_else(|| {
                    MpiError::arg(ErrorClass::Comm, f, "comm", handle::describe(comm), "not an intercommunicator")
                })
            })?;
            out(f, "size", size, n as c_int)
        })
    }

    fn MPI_Comm_test_inter / PMPI_Comm_test_inter(comm: usize, flag: *mut c_int) -> c_int {
        let f = "MPI_Comm_test_inter";
        call(Scope::Comm(comm), || {
            let inter = with_comm(f, comm, |rt, id| Ok(rt.comm(f, id)?.is_inter()))?;
            out(f, "flag", flag, inter as c_int)
        })
    }

    fn MPI_Comm_dup / PMPI_Comm_dup(comm: usize, newcomm: *mut usize) -> c_int {
        let f = "MPI_Comm_dup";
        call(Scope::Comm(comm), || {
            dup_with_attrs(f, comm, None, newcomm)
        })
    }

    fn MPI_Comm_split / PMPI_Comm_split(comm: usize, color: c_int, key: c_int, newcomm: *mut usize) -> c_int {
        let f = "MPI_Comm_split";
        call(Scope::Comm(comm), || {
            if color < 0 && color != MPI_UNDEFINED {
                return Err(MpiError::arg(ErrorClass::Arg, f, "color", color, "colors are non-negative or MPI_UNDEFINED"));
            }
            let id = runtime::with(f, |rt| resolve(rt, f, comm))?;
            let new = comm_ops::split(f, id, color, key)?;
            let h = match new {
                Some(n) => runtime::with(f, |rt| Ok(handle_of(rt, n)))?,
                None => MPI_COMM_NULL,
            };
            out(f, "newcomm", newcomm, h)
        })
    }

    fn MPI_Comm_free / PMPI_Comm_free(comm: *mut usize) -> c_int {
        let f = "MPI_Comm_free";
        if comm.is_null() {
            return error::raise(Scope::Process, MpiError::arg(ErrorClass::Arg, f, "comm", "NULL", "a pointer to a communicator is required"));
        }
        // SAFETY: non-null MPI_Comm* argument (C ABI contract).
        let h = unsafe { *comm };
        call(Scope::Comm(h), || {
            if h == MPI_COMM_WORLD || h == MPI_COMM_SELF {
                return Err(MpiError::arg(ErrorClass::Comm, f, "comm", handle::describe(h), "predefined communicators cannot be freed"));
            }
            let id = runtime::with(f, |rt| resolve(rt, f, h))?;
            attr::delete_comm_attrs(f, id)?;
            comm_ops::free(f, id)?;
            out(f, "comm", comm, MPI_COMM_NULL)
        })
    }

    fn MPI_Comm_set_name / PMPI_Comm_set_name(comm: usize, comm_name: *const c_char) -> c_int {
        let f = "MPI_Comm_set_name";
        call(Scope::Comm(comm), || {
            let name = in_string(f, "comm_name", comm_name)?;
            with_comm(f, comm, |rt, id| {
                rt.comm_mut(f, id)?.name = name.chars().take(MPI_MAX_OBJECT_NAME as usize - 1).collect();
                Ok(())
            })
        })
    }

    fn MPI_Comm_get_name / PMPI_Comm_get_name(comm: usize, comm_name: *mut c_char, resultlen: *mut c_int) -> c_int {
        let f = "MPI_Comm_get_name";
        call(Scope::Comm(comm), || {
            let name = with_comm(f, comm, |rt, id| Ok(rt.comm(f, id)?.name.clone()))?;
            out_string(f, "comm_name", comm_name, resultlen, &name, MPI_MAX_OBJECT_NAME as usize)
        })
    }

    fn MPI_Comm_create_errhandler / PMPI_Comm_create_errhandler(function: Option<error::CommErrhandlerFn>, errhandler: *mut usize) -> c_int {
        let f = "MPI_Comm_create_errhandler";
        call(Scope::Process, || {
            let func = function.ok_or_else(|| MpiError::arg(ErrorClass::Arg, f, "comm_errhandler_fn", "NULL", "a function is required"))?;
            out(f, "errhandler", errhandler, error::create_handler(func))
        })
    }

    fn MPI_Comm_set_errhandler / PMPI_Comm_set_errhandler(comm: usize, errhandler: usize) -> c_int {
        let f = "MPI_Comm_set_errhandler";
        call(Scope::Comm(comm), || {
            let v = error::check_handler(f, errhandler)?;
            with_comm(f, comm, |rt, id| {
                rt.comm_mut(f, id)?.errhandler = v;
                Ok(())
            })
        })
    }

    fn MPI_Comm_get_errhandler / PMPI_Comm_get_errhandler(comm: usize, errhandler: *mut usize) -> c_int {
        let f = "MPI_Comm_get_errhandler";
        call(Scope::Comm(comm), || {
            let v = with_comm(f, comm, |rt, id| Ok(rt.comm(f, id)?.errhandler))?;
            out(f, "errhandler", errhandler, error::stored_handler(v))
        })
    }

    fn MPI_Errhandler_free / PMPI_Errhandler_free(errhandler: *mut usize) -> c_int {
        let f = "MPI_Errhandler_free";
        call(Scope::Process, || {
            if errhandler.is_null() {
                return Err(MpiError::arg(ErrorClass::Arg, f, "errhandler", "NULL", "a pointer to a handler is required"));
            }
            // SAFETY: non-null MPI_Errhandler* argument (C ABI contract).
            error::free_handler(f, unsafe { *errhandler })?;
            out(f, "errhandler", errhandler, MPI_ERRHANDLER_NULL)
        })
    }

    fn MPI_Comm_call_errhandler / PMPI_Comm_call_errhandler(comm: usize, errorcode: c_int) -> c_int {
        let f = "MPI_Comm_call_errhandler";
        let class = error::class_of(errorcode).unwrap_or(MPI_ERR_UNKNOWN);
        let message = error::string_of(errorcode).unwrap_or_default();
        let e = MpiError::new(class_from_code(class), format!("{f}: error code {errorcode}: {message}"));
        error::dispatch(Scope::Comm(comm), &e, errorcode);
        MPI_SUCCESS
    }
}

/// The core's class for a standard class number (user classes count as "other").
fn class_from_code(class: c_int) -> ErrorClass {
    [
        ErrorClass::Buffer,
        ErrorClass::Count,
        ErrorClass::Type,
        ErrorClass::Tag,
        ErrorClass::Comm,
        ErrorClass::Rank,
        ErrorClass::Request,
        ErrorClass::Root,
        ErrorClass::Group,
        ErrorClass::Op,
        ErrorClass::Arg,
        ErrorClass::Truncate,
        ErrorClass::Intern,
    ]
    .into_iter()
    .find(|c| c.code() == class)
    .unwrap_or(ErrorClass::Other)
}
