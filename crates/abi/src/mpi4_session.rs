//! The Sessions model (MPI 4.0): `MPI_Session_init/finalize`, process sets, groups from
//! process sets, communicators from groups, and session error handlers.
//!
//! Sessions and the World model (`MPI_Init`) share one runtime: whichever starts first
//! initialises it, and it ends when the last user leaves (the last session finalized
//! after `MPI_Finalize`, or `MPI_Finalize` after the last session). crossmpi's runtime
//! starts once per process, so a session opened after everything was finalized fails
//! with `MPI_ERR_SESSION`.
//!
//! Process sets: `mpi://WORLD` (every process of the job, in every cluster) and
//! `mpi://SELF`. `MPI_Comm_create_from_group` agrees on a context id among the group's
//! members only, as `MPI_Comm_create_group` does over the runtime's world communicator,
//! with a tag derived from the string tag (distinct string tags used at the same time by
//! overlapping groups must not hash alike: the 30-bit FNV-1a hash makes that unlikely).
//!
//! Session handles are `SESSION_HANDLE | slot`: positive, int-sized, and outside both
//! the predefined range and the `handle` module's created-object range.

use crate::comm::handle as comm_handle;
use crate::consts::*;
use crate::error::{self, call, Scope};
use crate::group;
use crate::info;
use crate::util::{in_string, out, out_string, required};
use crossmpi_core::comm::{CommId, Group};
use crossmpi_core::comm_ops;
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::intercomm;
use crossmpi_core::runtime;
use crossmpi_core::slab::Slab;
use std::os::raw::{c_char, c_int};
use std::sync::{Arc, Mutex, MutexGuard};

const SESSION_HANDLE: usize = 0x1000_0000;
const PSETS: [&str; 2] = ["mpi://WORLD", "mpi://SELF"];

struct Session {
    errhandler: usize,
    info: info::Pairs,
}

/// Who uses the runtime: open sessions, and the World model between `MPI_Init` and
/// `MPI_Finalize`.
struct Users {
    sessions: Slab<Session>,
    world: bool,
    /// Group handles made by `MPI_Group_from_session_pset`, and their session's slot:
    /// communicators made from them use the session's buffered-send buffer.
    groups: Vec<(usize, u32)>,
}

static USERS: Mutex<Users> = Mutex::new(Users {
    sessions: Slab::new_const(),
    world: false,
    groups: Vec::new(),
});

fn users() -> MutexGuard<'static, Users> {
    USERS.lock().unwrap_or_else(|p| p.into_inner())
}

/// `MPI_Init` on a runtime sessions started: the World model joins it (its thread level).
/// `None` when no session runs, so `MPI_Init` starts the runtime itself.
pub fn world_joins(function: &str) -> Option<MpiResult<c_int>> {
    let mut u = users();
    if u.sessions.is_empty() {
        u.world = true;
        return None;
    }
    if u.world {
        return Some(Err(MpiError::context(
            ErrorClass::Other,
            function,
            "MPI is already initialized; it can be initialized only once",
        )));
    }
    u.world = true;
    Some(runtime::with(function, |rt| Ok(rt.thread_level)))
}

/// `MPI_Finalize`: whether the runtime must stay up for sessions still open.
pub fn world_leaves() -> bool {
    let mut u = users();
    u.world = false;
    !u.sessions.is_empty()
}

fn session_handle(slot: u32) -> usize {
    SESSION_HANDLE | slot as usize
}

fn bad_session(function: &str, h: usize, why: &str) -> MpiError {
    MpiError::arg(
        ErrorClass::Session,
        function,
        "session",
        crate::handle::describe(h),
        why,
    )
}

/// The slot of a live session.
fn session_slot(function: &str, h: usize) -> MpiResult<u32> {
    if h == MPI_SESSION_NULL {
        return Err(bad_session(
            function,
            h,
            "MPI_SESSION_NULL is not a session",
        ));
    }
    let slot = (h & !0x0fff_ffff == SESSION_HANDLE)
        .then_some((h & 0x0fff_ffff) as u32)
        .ok_or_else(|| bad_session(function, h, "not a session handle"))?;
    users()
        .sessions
        .by_index(slot)
        .map(|_| slot)
        .ok_or_else(|| bad_session(function, h, "finalized or never initialized"))
}

/// The table slot of a live session (for the buffers attached to it).
pub fn slot_of(function: &str, h: usize) -> MpiResult<u32> {
    session_slot(function, h)
}

fn with_session<R>(function: &str, h: usize, f: impl FnOnce(&mut Session) -> R) -> MpiResult<R> {
    let slot = session_slot(function, h)?;
    let mut u = users();
    let (id, _) = u.sessions.by_index(slot).expect("checked live");
    Ok(f(u.sessions.get_mut(id).expect("checked live")))
}

/// Runs a session call; errors go to the session's error handler (to `MPI_COMM_SELF`'s
/// rule when the handle names no session).
pub(crate) fn session_call(session: usize, body: impl FnOnce() -> MpiResult<()>) -> c_int {
    match body() {
        Ok(()) => MPI_SUCCESS,
        Err(e) => {
            let code = error::register(&e);
            match with_session("", session, |s| s.errhandler) {
                Ok(handler) => error::invoke(handler, session, &e, code),
                Err(_) => error::dispatch(Scope::Process, &e, code),
            }
        }
    }
}

/// The info keys of a session's thread level: the standard's (MPI-4.0 section 11.3.1),
/// and MPICH's, which programs written for MPICH set (its test suite among them).
/// A requested level is read from the first present; both report the provided one.
const THREAD_KEYS: [&str; 2] = ["mpi_thread_support_level", "thread_level"];

fn thread_level(function: &str, pairs: &info::Pairs) -> MpiResult<c_int> {
    let requested = THREAD_KEYS
        .iter()
        .find_map(|key| pairs.iter().find(|(k, _)| k == key));
    let Some((key, v)) = requested else {
        return Ok(MPI_THREAD_SINGLE);
    };
    let levels = [
        ("MPI_THREAD_SINGLE", MPI_THREAD_SINGLE),
        ("MPI_THREAD_FUNNELED", MPI_THREAD_FUNNELED),
        ("MPI_THREAD_SERIALIZED", MPI_THREAD_SERIALIZED),
        ("MPI_THREAD_MULTIPLE", MPI_THREAD_MULTIPLE),
    ];
    levels
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(v.trim()))
        .map(|&(_, l)| l)
        .ok_or_else(|| {
            MpiError::arg(
                ErrorClass::InfoValue,
                function,
                "info",
                format!("{key}={v}"),
                "not one of MPI_THREAD_SINGLE, _FUNNELED, _SERIALIZED, _MULTIPLE",
            )
        })
}

fn level_name(level: c_int) -> &'static str {
    match level {
        l if l == MPI_THREAD_MULTIPLE => "MPI_THREAD_MULTIPLE",
        l if l == MPI_THREAD_SERIALIZED => "MPI_THREAD_SERIALIZED",
        l if l == MPI_THREAD_FUNNELED => "MPI_THREAD_FUNNELED",
        _ => "MPI_THREAD_SINGLE",
    }
}

fn pset_group(function: &str, name: &str) -> MpiResult<Arc<Group>> {
    runtime::with(function, |rt| {
        let comm = match name {
            n if n.eq_ignore_ascii_case(PSETS[0]) => rt.world,
            n if n.eq_ignore_ascii_case(PSETS[1]) => rt.self_comm,
            _ => {
                return Err(MpiError::arg(
                    ErrorClass::Arg,
                    function,
                    "pset_name",
                    name,
                    "not a process set (mpi://WORLD and mpi://SELF exist)",
                ))
            }
        };
        Ok(rt.comm(function, comm)?.group.clone())
    })
}

/// FNV-1a of the string tag, folded to a non-negative tag.
fn tag_of(stringtag: &str) -> i32 {
    let h = stringtag.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ b as u32).wrapping_mul(0x0100_0193)
    });
    (h & 0x3fff_ffff) as i32
}

fn string_tag(function: &str, p: *const c_char) -> MpiResult<String> {
    let s = in_string(function, "stringtag", p)?;
    if s.len() >= MPI_MAX_STRINGTAG_LEN as usize {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            "stringtag",
            &s,
            format!("longer than MPI_MAX_STRINGTAG_LEN ({MPI_MAX_STRINGTAG_LEN})"),
        ));
    }
    Ok(s)
}

/// A communicator over `g` (the caller a member), made by `g`'s members only.
fn comm_over(function: &str, g: Arc<Group>, tag: i32) -> MpiResult<CommId> {
    let world = runtime::with(function, |rt| Ok(rt.world))?;
    comm_ops::create_group(function, world, g, tag)?.ok_or_else(|| {
        MpiError::context(
            ErrorClass::Group,
            function,
            "the calling process is not a member of the group",
        )
    })
}

fn set_errhandler(function: &str, id: CommId, errhandler: usize) -> MpiResult<()> {
    let v = error::check_handler(function, errhandler)?;
    runtime::with(function, |rt| {
        rt.comm_mut(function, id)?.errhandler = v;
        Ok(())
    })
}

export! {
    fn MPI_Session_init / PMPI_Session_init(info: usize, errhandler: usize, session: *mut usize) -> c_int {
        let f = "MPI_Session_init";
        let body = || {
            error::check_handler(f, errhandler)?;
            let pairs = info::read(f, "info", info, true)?;
            let level = thread_level(f, &pairs)?;
            required(f, "session", session)?;
            let mut u = users();
            if runtime::is_finalized() {
                return Err(MpiError::context(ErrorClass::Session, f, "MPI was finalized in this process; crossmpi's runtime cannot start again"));
            }
            if !runtime::is_initialized() {
                runtime::init(f, level)?;
            }
            let provided = runtime::with(f, |rt| Ok(rt.thread_level))?;
            let mut kept: info::Pairs = pairs.into_iter().filter(|(k, _)| !THREAD_KEYS.contains(&k.as_str())).collect();
            kept.extend(THREAD_KEYS.map(|k| (k.into(), level_name(provided).into())));
            let id = u.sessions.insert(Session { errhandler, info: kept });
            drop(u);
            out(f, "session", session, session_handle(id.index))
        };
        match body() {
            Ok(()) => MPI_SUCCESS,
            Err(e) => {
                let code = error::register(&e);
                let handler = if error::check_handler(f, errhandler).is_ok() { errhandler } else { MPI_ERRORS_ARE_FATAL };
                error::invoke(handler, MPI_SESSION_NULL, &e, code)
            }
        }
    }

    fn MPI_Session_finalize / PMPI_Session_finalize(session: *mut usize) -> c_int {
        let f = "MPI_Session_finalize";
        let h = if session.is_null() { MPI_SESSION_NULL } else {
            // SAFETY: non-null MPI_Session* argument (C ABI contract).
            unsafe { *session }
        };
        session_call(h, || {
            let slot = session_slot(f, h)?;
            let last = {
                let mut u = users();
                let (id, _) = u.sessions.by_index(slot).expect("checked live");
                u.sessions.remove(id);
                u.sessions.is_empty() && !u.world
            };
            if last {
                runtime::finalize(f)?;
            }
            out(f, "session", session, MPI_SESSION_NULL)
        })
    }

    fn MPI_Session_get_num_psets / PMPI_Session_get_num_psets(session: usize, info: usize, npset_names: *mut c_int) -> c_int {
        let f = "MPI_Session_get_num_psets";
        session_call(session, || {
            session_slot(f, session)?;
            info::read(f, "info", info, true)?;
            out(f, "npset_names", npset_names, PSETS.len() as c_int)
        })
    }

    /// With `*pset_len` 0 only the length (with the terminating NUL) is returned, as
    /// the standard's two-step query expects.
    fn MPI_Session_get_nth_pset / PMPI_Session_get_nth_pset(session: usize, info: usize, n: c_int, pset_len: *mut c_int, pset_name: *mut c_char) -> c_int {
        let f = "MPI_Session_get_nth_pset";
        session_call(session, || {
            session_slot(f, session)?;
            info::read(f, "info", info, true)?;
            let name = usize::try_from(n).ok().and_then(|i| PSETS.get(i)).ok_or_else(|| {
                MpiError::arg(ErrorClass::Arg, f, "n", n, format!("process sets are numbered 0..{}", PSETS.len()))
            })?;
            let room = crate::util::slice(f, "pset_len", pset_len as *const c_int, 1)?[0];
            let need = name.len() as c_int + 1;
            if room > 0 {
                out_string(f, "pset_name", pset_name, std::ptr::null_mut(), name, room as usize)?;
            }
            out(f, "pset_len", pset_len, need)
        })
    }

    fn MPI_Session_get_pset_info / PMPI_Session_get_pset_info(session: usize, pset_name: *const c_char, info: *mut usize) -> c_int {
        let f = "MPI_Session_get_pset_info";
        session_call(session, || {
            session_slot(f, session)?;
            let name = in_string(f, "pset_name", pset_name)?;
            let g = pset_group(f, &name)?;
            out(f, "info", info, info::create(vec![("mpi_size".into(), g.size().to_string())]))
        })
    }

    fn MPI_Session_get_info / PMPI_Session_get_info(session: usize, info_used: *mut usize) -> c_int {
        let f = "MPI_Session_get_info";
        session_call(session, || {
            let pairs = with_session(f, session, |s| s.info.clone())?;
            out(f, "info_used", info_used, info::create(pairs))
        })
    }

    fn MPI_Group_from_session_pset / PMPI_Group_from_session_pset(session: usize, pset_name: *const c_char, newgroup: *mut usize) -> c_int {
        let f = "MPI_Group_from_session_pset";
        session_call(session, || {
            let slot = session_slot(f, session)?;
            let name = in_string(f, "pset_name", pset_name)?;
            let h = group::new_handle(pset_group(f, &name)?);
            let mut u = users();
            u.groups.retain(|&(g, _)| g != h);
            u.groups.push((h, slot));
            drop(u);
            out(f, "newgroup", newgroup, h)
        })
    }

    fn MPI_Comm_create_from_group / PMPI_Comm_create_from_group(group: usize, stringtag: *const c_char, info: usize, errhandler: usize, newcomm: *mut usize) -> c_int {
        let f = "MPI_Comm_create_from_group";
        call(Scope::Process, || {
            let g = group::lookup(f, "group", group)?;
            let tag = tag_of(&string_tag(f, stringtag)?);
            info::read(f, "info", info, true)?;
            error::check_handler(f, errhandler)?;
            let id = comm_over(f, g, tag)?;
            set_errhandler(f, id, errhandler)?;
            let session = users().groups.iter().find(|&&(g, _)| g == group).map(|&(_, s)| s);
            if let Some(s) = session {
                crate::mpi4_buffers::comm_of_session(id, s);
            }
            out(f, "newcomm", newcomm, comm_handle(f, Some(id))?)
        })
    }

    /// Both groups' members build a communicator over the union (ordered by world rank,
    /// so both sides name the same group), which carries the leaders' exchange of
    /// `MPI_Intercomm_create` privately; it is freed afterwards.
    fn MPI_Intercomm_create_from_groups / PMPI_Intercomm_create_from_groups(local_group: usize, local_leader: c_int, remote_group: usize, remote_leader: c_int, stringtag: *const c_char, info: usize, errhandler: usize, newintercomm: *mut usize) -> c_int {
        let f = "MPI_Intercomm_create_from_groups";
        call(Scope::Process, || {
            let local = group::lookup(f, "local_group", local_group)?;
            let remote = group::lookup(f, "remote_group", remote_group)?;
            let tag = tag_of(&string_tag(f, stringtag)?);
            info::read(f, "info", info, true)?;
            error::check_handler(f, errhandler)?;
            let leader = |g: &Group, r: c_int, arg: &str| {
                usize::try_from(r).ok().filter(|&r| r < g.size()).ok_or_else(|| {
                    MpiError::arg(ErrorClass::Rank, f, arg, r, format!("not a rank of the {}-process group", g.size()))
                })
            };
            let local_leader = leader(&local, local_leader, "local_leader")?;
            let remote_leader = remote.world_rank(leader(&remote, remote_leader, "remote_leader")?);
            if local.members.iter().any(|m| remote.rank_of(*m).is_some()) {
                return Err(MpiError::arg(ErrorClass::Group, f, "remote_group", "a group", "shares processes with local_group"));
            }
            let mut members: Vec<u32> = local.members.iter().chain(&remote.members).copied().collect();
            members.sort_unstable();
            let union = Group::new(members);
            let peer_leader = union.rank_of(remote_leader).expect("the remote leader is in the union") as c_int;
            let peer = comm_over(f, union, tag)?;
            let local_comm = comm_over(f, local, tag)?;
            let made = intercomm::create(f, local_comm, local_leader, Some(peer), peer_leader, tag);
            comm_ops::free(f, local_comm)?;
            comm_ops::free(f, peer)?;
            let id = made?;
            set_errhandler(f, id, errhandler)?;
            out(f, "newintercomm", newintercomm, comm_handle(f, Some(id))?)
        })
    }

    fn MPI_Session_create_errhandler / PMPI_Session_create_errhandler(session_errhandler_fn: Option<error::CommErrhandlerFn>, errhandler: *mut usize) -> c_int {
        let f = "MPI_Session_create_errhandler";
        call(Scope::Process, || {
            let func = session_errhandler_fn.ok_or_else(|| {
                MpiError::arg(ErrorClass::Arg, f, "session_errhandler_fn", "NULL", "a function is required")
            })?;
            out(f, "errhandler", errhandler, error::create_handler(func))
        })
    }

    fn MPI_Session_set_errhandler / PMPI_Session_set_errhandler(session: usize, errhandler: usize) -> c_int {
        let f = "MPI_Session_set_errhandler";
        session_call(session, || {
            error::check_handler(f, errhandler)?;
            with_session(f, session, |s| s.errhandler = errhandler)
        })
    }

    fn MPI_Session_get_errhandler / PMPI_Session_get_errhandler(session: usize, errhandler: *mut usize) -> c_int {
        let f = "MPI_Session_get_errhandler";
        session_call(session, || {
            let h = with_session(f, session, |s| s.errhandler)?;
            out(f, "errhandler", errhandler, h)
        })
    }

    fn MPI_Session_call_errhandler / PMPI_Session_call_errhandler(session: usize, errorcode: c_int) -> c_int {
        let f = "MPI_Session_call_errhandler";
        let handler = match with_session(f, session, |s| s.errhandler) {
            Ok(h) => h,
            Err(e) => return error::raise(Scope::Process, e),
        };
        let e = MpiError::context(ErrorClass::Other, f, format!("error code {errorcode} raised by the application"));
        error::invoke(handler, session, &e, errorcode);
        MPI_SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_tags_map_to_non_negative_tags() {
        assert_eq!(tag_of("abc"), tag_of("abc"));
        assert_ne!(tag_of("abc"), tag_of("abd"));
        assert!(["", "x", "a long string tag"]
            .iter()
            .all(|s| tag_of(s) >= 0));
    }

    #[test]
    fn session_handles_are_checked() {
        let e = session_slot("MPI_Session_get_info", MPI_SESSION_NULL).unwrap_err();
        assert_eq!(e.class, ErrorClass::Session);
        assert!(session_slot("t", crate::handle::encode(crate::handle::Kind::Comm, 3)).is_err());
        assert!(session_slot("t", SESSION_HANDLE | 77).is_err());
    }
}
