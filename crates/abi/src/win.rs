//! Window handles and the window calls that are not data movement: creation (every
//! flavor), free, attach/detach, shared-memory queries, names, groups, info, the
//! predefined attributes and error handlers. Data movement and synchronisation are in
//! `win_ops.rs`; the work is in crossmpi-core's `rma` module.

use crate::consts::*;
use crate::error::{self, CommErrhandlerFn, Scope};
use crate::handle::{self, Kind};
use crate::util::{in_string, out, out_string};
use crate::{comm, group, info};
use crossmpi_core::comm::AttributeValue;
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::rma::{self, Direct, Flavor, WinId};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::sync::{Mutex, RwLock};

/// The values `MPI_Win_get_attr` points to; boxed so their addresses stay put.
pub(crate) struct Attrs {
    pub base: usize,
    pub size: isize,
    pub disp_unit: c_int,
    pub flavor: c_int,
    pub model: c_int,
}

/// The window hints of the standard with their defaults: what `MPI_Win_get_info`
/// reports, a value the application set in place of the default. crossmpi's one-sided
/// operations keep the strongest semantics (locks, ordered accumulates, any op) whatever
/// these assert, so every setting holds; other keys are ignored and not reported, as
/// the standard has `MPI_Win_get_info` return the hints in use (Open MPI and MPICH drop
/// them too).
const WIN_HINTS: [(&str, &str); 7] = [
    ("no_locks", "false"),
    ("accumulate_ordering", "rar,raw,war,waw"),
    ("accumulate_ops", "same_op_no_op"),
    ("same_size", "false"),
    ("same_disp_unit", "false"),
    ("alloc_shared_noncontig", "false"),
    ("mpi_accumulate_granularity", "0"),
];

/// What the ABI keeps beside a core window, keyed by its slot.
pub(crate) struct Entry {
    errhandler: usize,
    name: String,
    /// The hints in effect ([`WIN_HINTS`]).
    info: info::Pairs,
    pub attrs: Box<Attrs>,
    /// Attributes set with `MPI_Win_set_attr`: keyval -> value.
    pub user_attrs: BTreeMap<c_int, AttributeValue>,
}

/// The direct views of live windows by handle slot (see `with_direct`), apart from
/// `ENTRIES`; `GENERATION` counts its changes.
static DIRECT: RwLock<Vec<Option<Arc<Direct>>>> = RwLock::new(Vec::new());
static GENERATION: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread's copy of `DIRECT` and the generation it was taken at, so the fast
    /// path reads the table with one plain atomic load instead of a shared lock (two
    /// read-modify-writes, most of the cost of a small put). A view kept here after
    /// its window was freed stays harmless: it holds the segment mapping alive.
    static DIRECT_COPY: RefCell<(u64, Vec<Option<Arc<Direct>>>)> =
        const { RefCell::new((0, Vec::new())) };
}

fn set_direct(slot: u32, view: Option<Arc<Direct>>) {
    let mut all = DIRECT.write().unwrap_or_else(|p| p.into_inner());
    let i = slot as usize;
    if all.len() <= i {
        all.resize(i + 1, None);
    }
    all[i] = view;
    GENERATION.fetch_add(1, Ordering::Release);
}

static ENTRIES: Mutex<BTreeMap<u32, Entry>> = Mutex::new(BTreeMap::new());

fn entries() -> std::sync::MutexGuard<'static, BTreeMap<u32, Entry>> {
    ENTRIES.lock().unwrap_or_else(|p| p.into_inner())
}

/// The window a handle names.
pub fn resolve(function: &str, h: usize) -> MpiResult<WinId> {
    let bad = |why: &str| MpiError::arg(ErrorClass::Win, function, "win", handle::describe(h), why);
    if h == MPI_WIN_NULL {
        return Err(bad("MPI_WIN_NULL is not a window"));
    }
    let slot = handle::decode(Kind::Win, h).ok_or_else(|| bad("not a window handle"))?;
    rma::by_index(slot).ok_or_else(|| bad("freed or never created"))
}

/// Runs a window call and hands its error to the window's error handler (the
/// default, `MPI_ERRORS_ARE_FATAL`, when the handle names no window).
pub fn call(win: usize, body: impl FnOnce() -> MpiResult<()>) -> c_int {
    match body() {
        Ok(()) => MPI_SUCCESS,
        Err(e) => {
            let code = error::register(&e);
            let handler = handle::decode(Kind::Win, win)
                .and_then(|slot| entries().get(&slot).map(|e| e.errhandler))
                .unwrap_or(MPI_ERRORS_ARE_FATAL);
            error::invoke(handler, win, &e, code)
        }
    }
}

fn size_arg(function: &str, size: isize) -> MpiResult<u64> {
    u64::try_from(size).map_err(|_| {
        MpiError::arg(
            ErrorClass::Size,
            function,
            "size",
            size,
            "window sizes cannot be negative",
        )
    })
}

fn flavor_code(f: Flavor) -> c_int {
    match f {
        Flavor::Create => MPI_WIN_FLAVOR_CREATE,
        Flavor::Allocate => MPI_WIN_FLAVOR_ALLOCATE,
        Flavor::Dynamic => MPI_WIN_FLAVOR_DYNAMIC,
        Flavor::Shared => MPI_WIN_FLAVOR_SHARED,
    }
}

/// Records a new window and writes its handle to `out_win`.
fn register(function: &str, win: WinId, info_h: usize, out_win: *mut usize) -> MpiResult<()> {
    let (flavor, mine, _, _) = rma::describe(function, win)?;
    let entry = Entry {
        errhandler: MPI_ERRORS_ARE_FATAL,
        name: String::new(),
        info: {
            let mut hints = info::defaults(&WIN_HINTS);
            info::apply_known(&mut hints, info::read(function, "info", info_h, true)?);
            hints
        },
        attrs: Box::new(Attrs {
            base: if flavor == Flavor::Dynamic {
                0
            } else {
                mine.base as usize
            },
            size: if flavor == Flavor::Dynamic {
                0
            } else {
                mine.size as isize
            },
            disp_unit: mine.disp_unit as c_int,
            flavor: flavor_code(flavor),
            model: MPI_WIN_UNIFIED,
        }),
        user_attrs: BTreeMap::new(),
    };
    set_direct(win.index, rma::direct_view(function, win)?);
    entries().insert(win.index, entry);
    out(
        function,
        "win",
        out_win,
        handle::encode(Kind::Win, win.index),
    )
}

fn create(
    f: &str,
    base: *mut c_void,
    size: isize,
    disp_unit: i64,
    info_h: usize,
    comm_h: usize,
    win: *mut usize,
) -> c_int {
    error::call(Scope::Comm(comm_h), || {
        let size = size_arg(f, size)?;
        let comm = comm::id_of(f, comm_h)?;
        let w = rma::create(f, comm, base as usize, size, disp_unit, Flavor::Create)?;
        register(f, w, info_h, win)
    })
}

/// `MPI_Win_allocate` and `MPI_Win_allocate_shared` (`shared`).
fn allocate(
    f: &str,
    size: isize,
    disp_unit: i64,
    info_h: usize,
    comm_h: usize,
    baseptr: *mut c_void,
    win: *mut usize,
    shared: bool,
) -> c_int {
    error::call(Scope::Comm(comm_h), || {
        let bytes = size_arg(f, size)?;
        let comm = comm::id_of(f, comm_h)?;
        let (w, base) = if shared {
            rma::allocate_shared(f, comm, bytes, disp_unit)?
        } else {
            rma::allocate(f, comm, bytes, disp_unit)?
        };
        register(f, w, info_h, win)?;
        out(f, "baseptr", baseptr as *mut usize, base)
    })
}

fn shared_query(
    f: &str,
    win: usize,
    rank: c_int,
    size: *mut isize,
    disp_unit: impl FnOnce(u64) -> MpiResult<()>,
    baseptr: *mut c_void,
) -> c_int {
    call(win, || {
        let (s, unit, base) = rma::shared_query(f, resolve(f, win)?, rank)?;
        // Noncontiguous parts stand alone: an empty one has no address.
        let noncontig = with_entry(f, win, |e| {
            Ok(e.info
                .iter()
                .any(|(k, v)| k == "alloc_shared_noncontig" && v == "true"))
        })?;
        let base = if s == 0 && noncontig { 0 } else { base };
        out(f, "size", size, s as isize)?;
        disp_unit(unit)?;
        out(f, "baseptr", baseptr as *mut usize, base)
    })
}

/// Runs `f` on the direct view of a live window handle (the fast path of puts, gets
/// and flushes to members of this node); None when there is none or the handle is not
/// a live window (the normal path then reports it).
pub fn with_direct<R>(win: usize, f: impl FnOnce(&Direct) -> R) -> Option<R> {
    let slot = handle::decode(Kind::Win, win)?;
    DIRECT_COPY
        .try_with(|copy| {
            let mut copy = copy.try_borrow_mut().ok()?;
            // Taken before the table is read: a change made in between only makes the
            // next call read it again.
            let now = GENERATION.load(Ordering::Acquire);
            if copy.0 != now {
                copy.1 = DIRECT.read().unwrap_or_else(|p| p.into_inner()).clone();
                copy.0 = now;
            }
            copy.1.get(slot as usize)?.as_deref().map(f)
        })
        .ok()
        .flatten()
}

pub(crate) fn with_entry<R>(
    function: &str,
    win: usize,
    f: impl FnOnce(&mut Entry) -> MpiResult<R>,
) -> MpiResult<R> {
    let id = resolve(function, win)?;
    let mut all = entries();
    let e = all.get_mut(&id.index).ok_or_else(|| {
        MpiError::arg(
            ErrorClass::Win,
            function,
            "win",
            handle::describe(win),
            "not registered",
        )
    })?;
    f(e)
}

export! {
    fn MPI_Win_create / PMPI_Win_create(base: *mut c_void, size: isize, disp_unit: c_int, info: usize, comm: usize, win: *mut usize) -> c_int {
        create("MPI_Win_create", base, size, disp_unit as i64, info, comm, win)
    }

    fn MPI_Win_create_c / PMPI_Win_create_c(base: *mut c_void, size: isize, disp_unit: isize, info: usize, comm: usize, win: *mut usize) -> c_int {
        create("MPI_Win_create_c", base, size, disp_unit as i64, info, comm, win)
    }

    fn MPI_Win_allocate / PMPI_Win_allocate(size: isize, disp_unit: c_int, info: usize, comm: usize, baseptr: *mut c_void, win: *mut usize) -> c_int {
        allocate("MPI_Win_allocate", size, disp_unit as i64, info, comm, baseptr, win, false)
    }

    fn MPI_Win_allocate_c / PMPI_Win_allocate_c(size: isize, disp_unit: isize, info: usize, comm: usize, baseptr: *mut c_void, win: *mut usize) -> c_int {
        allocate("MPI_Win_allocate_c", size, disp_unit as i64, info, comm, baseptr, win, false)
    }

    fn MPI_Win_allocate_shared / PMPI_Win_allocate_shared(size: isize, disp_unit: c_int, info: usize, comm: usize, baseptr: *mut c_void, win: *mut usize) -> c_int {
        allocate("MPI_Win_allocate_shared", size, disp_unit as i64, info, comm, baseptr, win, true)
    }

    fn MPI_Win_allocate_shared_c / PMPI_Win_allocate_shared_c(size: isize, disp_unit: isize, info: usize, comm: usize, baseptr: *mut c_void, win: *mut usize) -> c_int {
        allocate("MPI_Win_allocate_shared_c", size, disp_unit as i64, info, comm, baseptr, win, true)
    }

    fn MPI_Win_shared_query / PMPI_Win_shared_query(win: usize, rank: c_int, size: *mut isize, disp_unit: *mut c_int, baseptr: *mut c_void) -> c_int {
        let f = "MPI_Win_shared_query";
        shared_query(f, win, rank, size, |u| out(f, "disp_unit", disp_unit, u as c_int), baseptr)
    }

    fn MPI_Win_shared_query_c / PMPI_Win_shared_query_c(win: usize, rank: c_int, size: *mut isize, disp_unit: *mut isize, baseptr: *mut c_void) -> c_int {
        let f = "MPI_Win_shared_query_c";
        shared_query(f, win, rank, size, |u| out(f, "disp_unit", disp_unit, u as isize), baseptr)
    }

    fn MPI_Win_create_dynamic / PMPI_Win_create_dynamic(info: usize, comm: usize, win: *mut usize) -> c_int {
        let f = "MPI_Win_create_dynamic";
        error::call(Scope::Comm(comm), || {
            let c = comm::id_of(f, comm)?;
            let w = rma::create(f, c, 0, 0, 1, Flavor::Dynamic)?;
            register(f, w, info, win)
        })
    }

    fn MPI_Win_attach / PMPI_Win_attach(win: usize, base: *mut c_void, size: isize) -> c_int {
        let f = "MPI_Win_attach";
        call(win, || {
            let size = size_arg(f, size)?;
            rma::attach(f, resolve(f, win)?, base as usize, size as usize, true)
        })
    }

    fn MPI_Win_detach / PMPI_Win_detach(win: usize, base: *const c_void) -> c_int {
        let f = "MPI_Win_detach";
        call(win, || rma::attach(f, resolve(f, win)?, base as usize, 0, false))
    }

    fn MPI_Win_free / PMPI_Win_free(win: *mut usize) -> c_int {
        let f = "MPI_Win_free";
        let h = if win.is_null() { MPI_WIN_NULL } else {
            // SAFETY: a non-null MPI_Win* points to the caller's handle (C ABI contract).
            unsafe { *win }
        };
        call(h, || {
            let id = resolve(f, h)?;
            crate::win_attr::delete_all(f, h)?;
            rma::free(f, id)?;
            set_direct(id.index, None);
            entries().remove(&id.index);
            out(f, "win", win, MPI_WIN_NULL)
        })
    }

    fn MPI_Win_get_group / PMPI_Win_get_group(win: usize, group: *mut usize) -> c_int {
        let f = "MPI_Win_get_group";
        call(win, || {
            let (_, _, g, _) = rma::describe(f, resolve(f, win)?)?;
            out(f, "group", group, group::new_handle(g))
        })
    }

    fn MPI_Win_set_name / PMPI_Win_set_name(win: usize, win_name: *const c_char) -> c_int {
        let f = "MPI_Win_set_name";
        call(win, || {
            let name = in_string(f, "win_name", win_name)?;
            with_entry(f, win, |e| {
                e.name = name.chars().take(MPI_MAX_OBJECT_NAME as usize - 1).collect();
                Ok(())
            })
        })
    }

    fn MPI_Win_get_name / PMPI_Win_get_name(win: usize, win_name: *mut c_char, resultlen: *mut c_int) -> c_int {
        let f = "MPI_Win_get_name";
        call(win, || {
            let name = with_entry(f, win, |e| Ok(e.name.clone()))?;
            out_string(f, "win_name", win_name, resultlen, &name, MPI_MAX_OBJECT_NAME as usize)
        })
    }

    fn MPI_Win_set_info / PMPI_Win_set_info(win: usize, info_h: usize) -> c_int {
        let f = "MPI_Win_set_info";
        call(win, || {
            let pairs = info::read(f, "info", info_h, true)?;
            with_entry(f, win, |e| {
                info::apply_known(&mut e.info, pairs);
                Ok(())
            })
        })
    }

    fn MPI_Win_get_info / PMPI_Win_get_info(win: usize, info_used: *mut usize) -> c_int {
        let f = "MPI_Win_get_info";
        call(win, || {
            let pairs = with_entry(f, win, |e| Ok(e.info.clone()))?;
            out(f, "info_used", info_used, info::create(pairs))
        })
    }

    fn MPI_Win_create_errhandler / PMPI_Win_create_errhandler(win_errhandler_fn: Option<CommErrhandlerFn>, errhandler: *mut usize) -> c_int {
        let f = "MPI_Win_create_errhandler";
        error::call(Scope::Process, || {
            let func = win_errhandler_fn.ok_or_else(|| {
                MpiError::arg(ErrorClass::Arg, f, "win_errhandler_fn", "NULL", "a function is required")
            })?;
            out(f, "errhandler", errhandler, error::create_handler(func))
        })
    }

    fn MPI_Win_set_errhandler / PMPI_Win_set_errhandler(win: usize, errhandler: usize) -> c_int {
        let f = "MPI_Win_set_errhandler";
        call(win, || {
            error::check_handler(f, errhandler)?;
            with_entry(f, win, |e| {
                e.errhandler = errhandler;
                Ok(())
            })
        })
    }

    fn MPI_Win_get_errhandler / PMPI_Win_get_errhandler(win: usize, errhandler: *mut usize) -> c_int {
        let f = "MPI_Win_get_errhandler";
        call(win, || {
            let h = with_entry(f, win, |e| Ok(e.errhandler))?;
            out(f, "errhandler", errhandler, h)
        })
    }

    fn MPI_Win_call_errhandler / PMPI_Win_call_errhandler(win: usize, errorcode: c_int) -> c_int {
        let f = "MPI_Win_call_errhandler";
        let h = match with_entry(f, win, |e| Ok(e.errhandler)) {
            Ok(h) => h,
            Err(e) => return error::raise(Scope::Process, e),
        };
        let e = MpiError::new(ErrorClass::Other, format!("{f}: error code {errorcode} raised by the application"));
        error::invoke(h, win, &e, errorcode);
        MPI_SUCCESS
    }
}
