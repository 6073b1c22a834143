//! The MPI tool information interface (MPI_T), minimal but complete for what crossmpi
//! has to show:
//! - control variables: the library's `CROSSMPI_*` tunables (docs/tunables.md), read-only
//!   (they are read once at `MPI_Init`), with the value in effect;
//! - performance variables: per-peer traffic counters (messages and bytes sent and
//!   received), bound to a communicator: element `i` is the traffic with its rank `i`;
//! - two categories grouping them; no enumerations, no events.
//!
//! MPI_T calls return their error codes directly (no error handlers, per the standard).

use crate::consts::*;
use crate::util::out;
use crossmpi_core::config::{Config, TransportChoice};
use crossmpi_core::proto::Counters;
use crossmpi_core::runtime;
use crossmpi_core::slab::Slab;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

pub(crate) type TResult<T> = Result<T, c_int>;

pub(crate) fn tcall(body: impl FnOnce() -> TResult<()>) -> c_int {
    match body() {
        Ok(()) => MPI_SUCCESS,
        Err(code) => code,
    }
}

/// `MPI_T_init_thread` calls not yet matched by `MPI_T_finalize`.
static INITS: AtomicI32 = AtomicI32::new(0);

pub(crate) fn initialized() -> TResult<()> {
    if INITS.load(Ordering::Acquire) > 0 {
        Ok(())
    } else {
        Err(MPI_T_ERR_NOT_INITIALIZED)
    }
}

pub(crate) fn put<T>(p: *mut T, v: T) {
    // MPI_T lets callers pass NULL for outputs they do not want.
    let _ = out("MPI_T", "output", p, v);
}

/// Stores a string the MPI_T way: `len` holds the buffer size on input and the length
/// written (terminator included) on output; NULL or 0 means "length only".
fn put_string(buf: *mut c_char, len: *mut c_int, s: &str) {
    if len.is_null() {
        return;
    }
    // SAFETY: non-null int* argument (C ABI contract of MPI_T string outputs).
    let room = unsafe { *len };
    if buf.is_null() || room <= 0 {
        put(len, s.len() as c_int + 1);
        return;
    }
    let _ = crate::util::out_string("MPI_T", "name", buf, std::ptr::null_mut(), s, room as usize);
    put(len, (s.len() + 1).min(room as usize) as c_int);
}

pub(crate) fn in_name(name: *const c_char) -> TResult<String> {
    if name.is_null() {
        return Err(MPI_T_ERR_INVALID_NAME);
    }
    // SAFETY: a NUL-terminated C string argument.
    Ok(unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned())
}

// ---------------------------------------------------------------- control variables

struct Cvar {
    name: &'static str,
    desc: &'static str,
    value: fn(&Config) -> CvarValue,
}

enum CvarValue {
    Number(u64),
    Text(&'static str),
}

/// Longest text value of a string cvar (its count).
const TEXT_LEN: usize = 16;

const CVARS: &[Cvar] = &[
    Cvar {
        name: "CROSSMPI_TRANSPORT",
        desc: "auto: shared memory inside a node, TCP between nodes; tcp: TCP everywhere",
        value: |c| {
            CvarValue::Text(match c.transport {
                TransportChoice::Auto => "auto",
                TransportChoice::Tcp => "tcp",
            })
        },
    },
    Cvar {
        name: "CROSSMPI_SHM_CELLS",
        desc: "cells per shared-memory ring",
        value: |c| CvarValue::Number(c.shm_cells as u64),
    },
    Cvar {
        name: "CROSSMPI_SHM_CELL_BYTES",
        desc: "bytes per shared-memory cell (largest eager message through shared memory)",
        value: |c| CvarValue::Number(c.shm_cell_bytes as u64),
    },
    Cvar {
        name: "CROSSMPI_SHM_CMA_MIN",
        desc: "smallest message pulled with cross-memory attach (0: automatic)",
        value: |c| CvarValue::Number(c.shm_cma_min),
    },
    Cvar {
        name: "CROSSMPI_TCP_EAGER",
        desc: "largest message sent eagerly over TCP",
        value: |c| CvarValue::Number(c.tcp_eager),
    },
    Cvar {
        name: "CROSSMPI_TCP_WRITE_CHUNK",
        desc: "most bytes handed to the kernel per TCP write",
        value: |c| CvarValue::Number(c.tcp_write_chunk as u64),
    },
    Cvar {
        name: "CROSSMPI_EAGER_CREDIT",
        desc: "eager bytes a sender may have outstanding at one receiver",
        value: |c| CvarValue::Number(c.eager_credit),
    },
    Cvar {
        name: "CROSSMPI_SPIN_US",
        desc: "microseconds a waiting call polls before sleeping (0: automatic)",
        value: |c| CvarValue::Number(c.spin_us),
    },
    Cvar {
        name: "CROSSMPI_TCP_PORT",
        desc: "TCP port each rank listens on (0: any)",
        value: |c| CvarValue::Number(c.tcp_port as u64),
    },
    Cvar {
        name: "CROSSMPI_CONNECT_TIMEOUT",
        desc: "seconds to establish TCP connections to peers",
        value: |c| CvarValue::Number(c.connect_timeout_s),
    },
];

fn cvar(index: c_int) -> TResult<&'static Cvar> {
    usize::try_from(index)
        .ok()
        .and_then(|i| CVARS.get(i))
        .ok_or(MPI_T_ERR_INVALID_INDEX)
}

/// The configuration in effect: the runtime's once MPI is initialized, else what
/// `MPI_Init` would read now.
fn config() -> Config {
    runtime::with("MPI_T_cvar_read", |rt| Ok(rt.cfg.clone())).unwrap_or_else(|_| Config::from_env())
}

// ------------------------------------------------------------- performance variables

struct Pvar {
    name: &'static str,
    desc: &'static str,
    read: fn(&Counters) -> u64,
}

const PVARS: &[Pvar] = &[
    Pvar {
        name: "crossmpi_peer_msgs_sent",
        desc: "messages sent to each rank of the bound communicator",
        read: |c| c.msgs_sent,
    },
    Pvar {
        name: "crossmpi_peer_bytes_sent",
        desc: "payload bytes sent to each rank of the bound communicator",
        read: |c| c.bytes_sent,
    },
    Pvar {
        name: "crossmpi_peer_msgs_recv",
        desc: "messages received from each rank of the bound communicator",
        read: |c| c.msgs_recv,
    },
    Pvar {
        name: "crossmpi_peer_bytes_recv",
        desc: "payload bytes received from each rank of the bound communicator",
        read: |c| c.bytes_recv,
    },
];

fn pvar(index: c_int) -> TResult<&'static Pvar> {
    usize::try_from(index)
        .ok()
        .and_then(|i| PVARS.get(i))
        .ok_or(MPI_T_ERR_INVALID_INDEX)
}

/// A pvar handle: the counter, the world ranks of the bound communicator, what was
/// counted in earlier started periods, and the counters when the current one began.
struct PvarHandle {
    session: u32,
    read: fn(&Counters) -> u64,
    peers: Vec<u32>,
    accumulated: Vec<u64>,
    started_at: Option<Vec<u64>>,
}

impl PvarHandle {
    fn now(&self) -> TResult<Vec<u64>> {
        runtime::with("MPI_T_pvar_read", |rt| {
            Ok(self
                .peers
                .iter()
                .map(|&w| (self.read)(&rt.st.peers[w as usize].counters))
                .collect())
        })
        .map_err(|_| MPI_T_ERR_INVALID)
    }

    fn value(&self) -> TResult<Vec<u64>> {
        let mut v = self.accumulated.clone();
        if let Some(base) = &self.started_at {
            for ((x, n), b) in v.iter_mut().zip(self.now()?).zip(base) {
                *x += n - b;
            }
        }
        Ok(v)
    }
}

struct Sessions {
    sessions: Slab<()>,
    handles: Slab<PvarHandle>,
}

static SESSIONS: Mutex<Sessions> = Mutex::new(Sessions {
    sessions: Slab::new_const(),
    handles: Slab::new_const(),
});

fn sessions() -> std::sync::MutexGuard<'static, Sessions> {
    SESSIONS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Session and handle values: slot + 2, so they never equal NULL (0) or
/// `MPI_T_PVAR_ALL_HANDLES` (1).
fn encode(slot: u32) -> usize {
    slot as usize + 2
}

fn session_slot(s: &Sessions, h: usize) -> TResult<u32> {
    let slot = h.checked_sub(2).ok_or(MPI_T_ERR_INVALID_SESSION)? as u32;
    s.sessions
        .by_index(slot)
        .map(|_| slot)
        .ok_or(MPI_T_ERR_INVALID_SESSION)
}

/// Runs `f` on the handle `h` of `session`, or on all of them for `MPI_T_PVAR_ALL_HANDLES`.
fn with_handles(
    session: usize,
    h: usize,
    mut f: impl FnMut(&mut PvarHandle) -> TResult<()>,
) -> TResult<()> {
    initialized()?;
    let mut s = sessions();
    let sess = session_slot(&s, session)?;
    let ids: Vec<_> = if h == MPI_T_PVAR_ALL_HANDLES {
        s.handles
            .iter()
            .filter(|(_, p)| p.session == sess)
            .map(|(id, _)| id)
            .collect()
    } else {
        let slot = h.checked_sub(2).ok_or(MPI_T_ERR_INVALID_HANDLE)? as u32;
        match s.handles.by_index(slot) {
            Some((id, p)) if p.session == sess => vec![id],
            _ => return Err(MPI_T_ERR_INVALID_HANDLE),
        }
    };
    for id in ids {
        f(s.handles.get_mut(id).expect("listed above"))?;
    }
    Ok(())
}

fn write_u64s(buf: *mut c_void, v: &[u64]) -> TResult<()> {
    let dst = crate::util::slice_mut("MPI_T_pvar_read", "buf", buf as *mut u64, v.len())
        .map_err(|_| MPI_T_ERR_INVALID)?;
    dst.copy_from_slice(v);
    Ok(())
}

// ------------------------------------------------------------------------ categories

/// (name, description, cvars, pvars)
const CATEGORIES: &[(&str, &str, usize, usize)] = &[
    (
        "crossmpi_tunables",
        "the CROSSMPI_* tunables of the library",
        CVARS.len(),
        0,
    ),
    (
        "crossmpi_traffic",
        "per-peer traffic counters",
        0,
        PVARS.len(),
    ),
];

pub(crate) fn category(
    index: c_int,
) -> TResult<&'static (&'static str, &'static str, usize, usize)> {
    usize::try_from(index)
        .ok()
        .and_then(|i| CATEGORIES.get(i))
        .ok_or(MPI_T_ERR_INVALID_INDEX)
}

fn out_indices(len: c_int, indices: *mut c_int, n: usize) -> TResult<()> {
    let k = (len.max(0) as usize).min(n);
    let dst =
        crate::util::slice_mut("MPI_T", "indices", indices, k).map_err(|_| MPI_T_ERR_INVALID)?;
    for (i, d) in dst.iter_mut().enumerate() {
        *d = i as c_int;
    }
    Ok(())
}

export! {
    fn MPI_T_init_thread / PMPI_T_init_thread(required: c_int, provided: *mut c_int) -> c_int {
        INITS.fetch_add(1, Ordering::AcqRel);
        put(provided, required.clamp(0, MPI_THREAD_MULTIPLE));
        MPI_SUCCESS
    }

    fn MPI_T_finalize / PMPI_T_finalize() -> c_int {
        tcall(|| {
            initialized()?;
            INITS.fetch_sub(1, Ordering::AcqRel);
            Ok(())
        })
    }

    fn MPI_T_cvar_get_num / PMPI_T_cvar_get_num(num_cvar: *mut c_int) -> c_int {
        tcall(|| {
            initialized()?;
            put(num_cvar, CVARS.len() as c_int);
            Ok(())
        })
    }

    fn MPI_T_cvar_get_info / PMPI_T_cvar_get_info(cvar_index: c_int, name: *mut c_char, name_len: *mut c_int, verbosity: *mut c_int, datatype: *mut usize, enumtype: *mut usize, desc: *mut c_char, desc_len: *mut c_int, bind: *mut c_int, scope: *mut c_int) -> c_int {
        tcall(|| {
            initialized()?;
            let v = cvar(cvar_index)?;
            put_string(name, name_len, v.name);
            put(verbosity, MPI_T_VERBOSITY_TUNER_BASIC);
            let dt = match (v.value)(&config()) {
                CvarValue::Number(_) => MPI_UNSIGNED_LONG_LONG,
                CvarValue::Text(_) => MPI_CHAR,
            };
            put(datatype, dt);
            put(enumtype, MPI_T_ENUM_NULL);
            put_string(desc, desc_len, v.desc);
            put(bind, MPI_T_BIND_NO_OBJECT);
            // Read once at MPI_Init: the value cannot change afterwards.
            put(scope, MPI_T_SCOPE_READONLY);
            Ok(())
        })
    }

    fn MPI_T_cvar_get_index / PMPI_T_cvar_get_index(name: *const c_char, cvar_index: *mut c_int) -> c_int {
        tcall(|| {
            initialized()?;
            let n = in_name(name)?;
            let i = CVARS.iter().position(|v| v.name == n).ok_or(MPI_T_ERR_INVALID_NAME)?;
            put(cvar_index, i as c_int);
            Ok(())
        })
    }

    fn MPI_T_cvar_handle_alloc / PMPI_T_cvar_handle_alloc(cvar_index: c_int, obj_handle: *mut c_void, handle: *mut usize, count: *mut c_int) -> c_int {
        let _ = obj_handle;
        tcall(|| {
            initialized()?;
            let v = cvar(cvar_index)?;
            let n = match (v.value)(&config()) {
                CvarValue::Number(_) => 1,
                CvarValue::Text(_) => TEXT_LEN as c_int,
            };
            // A cvar handle is its index + 1 (never NULL): cvars need no per-handle state.
            put(handle, cvar_index as usize + 1);
            put(count, n);
            Ok(())
        })
    }

    fn MPI_T_cvar_handle_free / PMPI_T_cvar_handle_free(handle: *mut usize) -> c_int {
        tcall(|| {
            initialized()?;
            put(handle, MPI_T_CVAR_HANDLE_NULL);
            Ok(())
        })
    }

    fn MPI_T_cvar_read / PMPI_T_cvar_read(handle: usize, buf: *mut c_void) -> c_int {
        tcall(|| {
            initialized()?;
            let index = handle.checked_sub(1).ok_or(MPI_T_ERR_INVALID_HANDLE)?;
            let v = cvar(c_int::try_from(index).map_err(|_| MPI_T_ERR_INVALID_HANDLE)?)?;
            match (v.value)(&config()) {
                CvarValue::Number(x) => write_u64s(buf, &[x]),
                CvarValue::Text(s) => crate::util::out_string("MPI_T_cvar_read", "buf", buf as *mut c_char, std::ptr::null_mut(), s, TEXT_LEN)
                    .map_err(|_| MPI_T_ERR_INVALID),
            }
        })
    }

    fn MPI_T_cvar_write / PMPI_T_cvar_write(handle: usize, buf: *const c_void) -> c_int {
        let _ = (handle, buf);
        tcall(|| {
            initialized()?;
            Err(MPI_T_ERR_CVAR_SET_NEVER)
        })
    }

    fn MPI_T_pvar_get_num / PMPI_T_pvar_get_num(num_pvar: *mut c_int) -> c_int {
        tcall(|| {
            initialized()?;
            put(num_pvar, PVARS.len() as c_int);
            Ok(())
        })
    }

    fn MPI_T_pvar_get_info / PMPI_T_pvar_get_info(pvar_index: c_int, name: *mut c_char, name_len: *mut c_int, verbosity: *mut c_int, var_class: *mut c_int, datatype: *mut usize, enumtype: *mut usize, desc: *mut c_char, desc_len: *mut c_int, bind: *mut c_int, readonly: *mut c_int, continuous: *mut c_int, atomic: *mut c_int) -> c_int {
        tcall(|| {
            initialized()?;
            let v = pvar(pvar_index)?;
            put_string(name, name_len, v.name);
            put(verbosity, MPI_T_VERBOSITY_USER_BASIC);
            put(var_class, MPI_T_PVAR_CLASS_COUNTER);
            put(datatype, MPI_UNSIGNED_LONG_LONG);
            put(enumtype, MPI_T_ENUM_NULL);
            put_string(desc, desc_len, v.desc);
            put(bind, MPI_T_BIND_MPI_COMM);
            put(readonly, 1);
            put(continuous, 0);
            put(atomic, 0);
            Ok(())
        })
    }

    fn MPI_T_pvar_get_index / PMPI_T_pvar_get_index(name: *const c_char, var_class: c_int, pvar_index: *mut c_int) -> c_int {
        tcall(|| {
            initialized()?;
            let n = in_name(name)?;
            let i = PVARS
                .iter()
                .position(|v| v.name == n && var_class == MPI_T_PVAR_CLASS_COUNTER)
                .ok_or(MPI_T_ERR_INVALID_NAME)?;
            put(pvar_index, i as c_int);
            Ok(())
        })
    }

    fn MPI_T_pvar_session_create / PMPI_T_pvar_session_create(session: *mut usize) -> c_int {
        tcall(|| {
            initialized()?;
            let slot = sessions().sessions.insert(()).index;
            put(session, encode(slot));
            Ok(())
        })
    }

    fn MPI_T_pvar_session_free / PMPI_T_pvar_session_free(session: *mut usize) -> c_int {
        tcall(|| {
            initialized()?;
            if session.is_null() {
                return Err(MPI_T_ERR_INVALID_SESSION);
            }
            let mut s = sessions();
            // SAFETY: non-null MPI_T_pvar_session* argument (C ABI contract).
            let slot = session_slot(&s, unsafe { *session })?;
            let owned: Vec<_> = s.handles.iter().filter(|(_, p)| p.session == slot).map(|(id, _)| id).collect();
            for id in owned {
                s.handles.remove(id);
            }
            let id = s.sessions.by_index(slot).map(|(id, _)| id).ok_or(MPI_T_ERR_INVALID_SESSION)?;
            s.sessions.remove(id);
            put(session, MPI_T_PVAR_SESSION_NULL);
            Ok(())
        })
    }

    fn MPI_T_pvar_handle_alloc / PMPI_T_pvar_handle_alloc(session: usize, pvar_index: c_int, obj_handle: *mut c_void, handle: *mut usize, count: *mut c_int) -> c_int {
        tcall(|| {
            initialized()?;
            let v = pvar(pvar_index)?;
            if obj_handle.is_null() {
                return Err(MPI_T_ERR_INVALID);
            }
            // SAFETY: for a pvar bound to communicators, obj_handle points to an MPI_Comm.
            let comm = unsafe { *(obj_handle as *const usize) };
            let peers = crate::comm::with_comm("MPI_T_pvar_handle_alloc", comm, |rt, id| {
                Ok(rt.comm("MPI_T_pvar_handle_alloc", id)?.peer_group().members.clone())
            })
            .map_err(|_| MPI_T_ERR_INVALID)?;
            let n = peers.len();
            let mut s = sessions();
            let sess = session_slot(&s, session)?;
            let slot = s.handles.insert(PvarHandle {
                session: sess,
                read: v.read,
                peers,
                accumulated: vec![0; n],
                started_at: None,
            }).index;
            put(handle, encode(slot));
            put(count, n as c_int);
            Ok(())
        })
    }

    fn MPI_T_pvar_handle_free / PMPI_T_pvar_handle_free(session: usize, handle: *mut usize) -> c_int {
        tcall(|| {
            if handle.is_null() {
                return Err(MPI_T_ERR_INVALID_HANDLE);
            }
            // SAFETY: non-null MPI_T_pvar_handle* argument (C ABI contract).
            let h = unsafe { *handle };
            if h == MPI_T_PVAR_ALL_HANDLES {
                return Err(MPI_T_ERR_INVALID_HANDLE);
            }
            with_handles(session, h, |_| Ok(()))?;
            let mut s = sessions();
            let slot = (h - 2) as u32;
            if let Some((id, _)) = s.handles.by_index(slot) {
                s.handles.remove(id);
            }
            put(handle, MPI_T_PVAR_HANDLE_NULL);
            Ok(())
        })
    }

    fn MPI_T_pvar_start / PMPI_T_pvar_start(session: usize, handle: usize) -> c_int {
        tcall(|| with_handles(session, handle, |p| {
            if p.started_at.is_none() {
                p.started_at = Some(p.now()?);
            }
            Ok(())
        }))
    }

    fn MPI_T_pvar_stop / PMPI_T_pvar_stop(session: usize, handle: usize) -> c_int {
        tcall(|| with_handles(session, handle, |p| {
            p.accumulated = p.value()?;
            p.started_at = None;
            Ok(())
        }))
    }

    fn MPI_T_pvar_read / PMPI_T_pvar_read(session: usize, handle: usize, buf: *mut c_void) -> c_int {
        if handle == MPI_T_PVAR_ALL_HANDLES {
            return MPI_T_ERR_INVALID_HANDLE;
        }
        tcall(|| with_handles(session, handle, |p| write_u64s(buf, &p.value()?)))
    }

    fn MPI_T_pvar_reset / PMPI_T_pvar_reset(session: usize, handle: usize) -> c_int {
        tcall(|| with_handles(session, handle, reset))
    }

    fn MPI_T_pvar_readreset / PMPI_T_pvar_readreset(session: usize, handle: usize, buf: *mut c_void) -> c_int {
        if handle == MPI_T_PVAR_ALL_HANDLES {
            return MPI_T_ERR_INVALID_HANDLE;
        }
        tcall(|| with_handles(session, handle, |p| {
            write_u64s(buf, &p.value()?)?;
            reset(p)
        }))
    }

    fn MPI_T_pvar_write / PMPI_T_pvar_write(session: usize, handle: usize, buf: *const c_void) -> c_int {
        let _ = buf;
        tcall(|| {
            with_handles(session, handle, |_| Ok(()))?;
            Err(MPI_T_ERR_PVAR_NO_WRITE)
        })
    }

    fn MPI_T_category_get_num / PMPI_T_category_get_num(num_cat: *mut c_int) -> c_int {
        tcall(|| {
            initialized()?;
            put(num_cat, CATEGORIES.len() as c_int);
            Ok(())
        })
    }

    fn MPI_T_category_get_info / PMPI_T_category_get_info(cat_index: c_int, name: *mut c_char, name_len: *mut c_int, desc: *mut c_char, desc_len: *mut c_int, num_cvars: *mut c_int, num_pvars: *mut c_int, num_categories: *mut c_int) -> c_int {
        tcall(|| {
            initialized()?;
            let &(n, d, nc, np) = category(cat_index)?;
            put_string(name, name_len, n);
            put_string(desc, desc_len, d);
            put(num_cvars, nc as c_int);
            put(num_pvars, np as c_int);
            put(num_categories, 0);
            Ok(())
        })
    }

    fn MPI_T_category_get_index / PMPI_T_category_get_index(name: *const c_char, cat_index: *mut c_int) -> c_int {
        tcall(|| {
            initialized()?;
            let n = in_name(name)?;
            let i = CATEGORIES.iter().position(|c| c.0 == n).ok_or(MPI_T_ERR_INVALID_NAME)?;
            put(cat_index, i as c_int);
            Ok(())
        })
    }

    fn MPI_T_category_get_cvars / PMPI_T_category_get_cvars(cat_index: c_int, len: c_int, indices: *mut c_int) -> c_int {
        tcall(|| {
            initialized()?;
            out_indices(len, indices, category(cat_index)?.2)
        })
    }

    fn MPI_T_category_get_pvars / PMPI_T_category_get_pvars(cat_index: c_int, len: c_int, indices: *mut c_int) -> c_int {
        tcall(|| {
            initialized()?;
            out_indices(len, indices, category(cat_index)?.3)
        })
    }

    fn MPI_T_category_get_categories / PMPI_T_category_get_categories(cat_index: c_int, len: c_int, indices: *mut c_int) -> c_int {
        let _ = (len, indices);
        tcall(|| {
            initialized()?;
            category(cat_index).map(|_| ())
        })
    }

    fn MPI_T_category_changed / PMPI_T_category_changed(update_number: *mut c_int) -> c_int {
        tcall(|| {
            initialized()?;
            // The categories are fixed at build time.
            put(update_number, 0);
            Ok(())
        })
    }

    fn MPI_T_enum_get_info / PMPI_T_enum_get_info(enumtype: usize, num: *mut c_int, name: *mut c_char, name_len: *mut c_int) -> c_int {
        let _ = (enumtype, num, name, name_len);
        tcall(|| {
            initialized()?;
            // No variable of crossmpi uses an enumeration.
            Err(MPI_T_ERR_INVALID_HANDLE)
        })
    }

    fn MPI_T_enum_get_item / PMPI_T_enum_get_item(enumtype: usize, indx: c_int, value: *mut c_int, name: *mut c_char, name_len: *mut c_int) -> c_int {
        let _ = (enumtype, indx, value, name, name_len);
        tcall(|| {
            initialized()?;
            Err(MPI_T_ERR_INVALID_HANDLE)
        })
    }
}

fn reset(p: &mut PvarHandle) -> TResult<()> {
    p.accumulated.iter_mut().for_each(|x| *x = 0);
    if p.started_at.is_some() {
        p.started_at = Some(p.now()?);
    }
    Ok(())
}
