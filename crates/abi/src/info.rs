//! `MPI_Info` objects: ordered (key, value) lists, and `MPI_INFO_ENV`.

use crate::consts::*;
use crate::error::{call, Scope};
use crate::handle::{self, Kind};
use crate::util::{in_string, out, out_string};
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::slab::Slab;
use std::os::raw::{c_char, c_int};
use std::sync::Mutex;

/// Keys in the order they were first set (`MPI_Info_get_nthkey` follows it).
pub type Pairs = Vec<(String, String)>;

static INFOS: Mutex<Slab<Pairs>> = Mutex::new(Slab::new_const());

fn infos() -> std::sync::MutexGuard<'static, Slab<Pairs>> {
    INFOS.lock().unwrap_or_else(|p| p.into_inner())
}

/// `MPI_INFO_ENV`: how this process was started, as far as crossmpi knows it.
fn env_pairs() -> Pairs {
    let mut p = Vec::new();
    let args: Vec<String> = std::env::args().collect();
    if let Some(cmd) = args.first() {
        p.push(("command".to_string(), cmd.clone()));
        p.push(("argv".to_string(), args[1..].join(" ")));
    }
    if let Ok(n) = std::env::var("PMI_SIZE") {
        p.push(("maxprocs".to_string(), n));
    }
    if let Ok(d) = std::env::current_dir() {
        p.push(("wdir".to_string(), d.display().to_string()));
    }
    if let Ok(h) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        p.push(("host".to_string(), h.trim().to_string()));
    }
    p.push((
        "thread_level".to_string(),
        "MPI_THREAD_MULTIPLE".to_string(),
    ));
    p
}

fn bad(function: &str, arg: &str, h: usize, why: &str) -> MpiError {
    MpiError::arg(ErrorClass::Info, function, arg, handle::describe(h), why)
}

/// The pairs an info handle holds (`MPI_INFO_NULL` only where `null_ok`).
pub fn read(function: &str, arg: &str, h: usize, null_ok: bool) -> MpiResult<Pairs> {
    if h == MPI_INFO_NULL && null_ok {
        return Ok(Vec::new());
    }
    if h == MPI_INFO_ENV {
        return Ok(env_pairs());
    }
    if h == MPI_INFO_NULL {
        return Err(bad(
            function,
            arg,
            h,
            "MPI_INFO_NULL is not an info object here",
        ));
    }
    let slot =
        handle::decode(Kind::Info, h).ok_or_else(|| bad(function, arg, h, "not an info handle"))?;
    infos()
        .by_index(slot)
        .map(|(_, p)| p.clone())
        .ok_or_else(|| bad(function, arg, h, "freed or never created"))
}

/// The hints `known` as (key, default) pairs, each at its default.
pub fn defaults(known: &[(&str, &str)]) -> Pairs {
    known
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The hints in effect once `given` applies to `hints`: a key `hints` has takes the given
/// value, other keys are ignored (the standard's `MPI_*_get_info` report the hints in
/// use, and Open MPI and MPICH drop unknown keys too).
pub fn apply_known(hints: &mut Pairs, given: impl IntoIterator<Item = (String, String)>) {
    for (k, v) in given {
        if let Some(h) = hints.iter_mut().find(|(key, _)| *key == k) {
            h.1 = v;
        }
    }
}

/// A new info handle holding `pairs`.
pub fn create(pairs: Pairs) -> usize {
    handle::encode(Kind::Info, infos().insert(pairs).index)
}

fn with_mut<R>(
    function: &str,
    h: usize,
    f: impl FnOnce(&mut Pairs) -> MpiResult<R>,
) -> MpiResult<R> {
    if h == MPI_INFO_ENV {
        return Err(bad(function, "info", h, "MPI_INFO_ENV cannot be modified"));
    }
    let slot = handle::decode(Kind::Info, h)
        .ok_or_else(|| bad(function, "info", h, "not an info handle"))?;
    let mut t = infos();
    let id = t.by_index(slot).map(|(id, _)| id);
    let p = id
        .and_then(|id| t.get_mut(id))
        .ok_or_else(|| bad(function, "info", h, "freed or never created"))?;
    f(p)
}

fn key_arg(function: &str, key: *const c_char) -> MpiResult<String> {
    let k = in_string(function, "key", key)?;
    if k.is_empty() || k.len() >= MPI_MAX_INFO_KEY as usize {
        return Err(MpiError::arg(
            ErrorClass::InfoKey,
            function,
            "key",
            format!("{k:?}"),
            format!("keys have 1 to {} characters", MPI_MAX_INFO_KEY - 1),
        ));
    }
    Ok(k)
}

fn lookup_value(function: &str, info: usize, key: *const c_char) -> MpiResult<Option<String>> {
    let k = key_arg(function, key)?;
    Ok(read(function, "info", info, false)?
        .into_iter()
        .find(|(x, _)| *x == k)
        .map(|(_, v)| v))
}

export! {
    fn MPI_Info_create / PMPI_Info_create(info: *mut usize) -> c_int {
        call(Scope::Process, || out("MPI_Info_create", "info", info, create(Vec::new())))
    }

    fn MPI_Info_create_env / PMPI_Info_create_env(argc: c_int, argv: *mut *mut c_char, info: *mut usize) -> c_int {
        let _ = (argc, argv);
        call(Scope::Process, || out("MPI_Info_create_env", "info", info, create(env_pairs())))
    }

    fn MPI_Info_set / PMPI_Info_set(info: usize, key: *const c_char, value: *const c_char) -> c_int {
        let f = "MPI_Info_set";
        call(Scope::Process, || {
            let k = key_arg(f, key)?;
            let v = in_string(f, "value", value)?;
            if v.len() >= MPI_MAX_INFO_VAL as usize {
                return Err(MpiError::arg(ErrorClass::InfoValue, f, "value", v.len(), format!("values have at most {} characters", MPI_MAX_INFO_VAL - 1)));
            }
            with_mut(f, info, |p| {
                match p.iter_mut().find(|(x, _)| *x == k) {
                    Some(slot) => slot.1 = v,
                    None => p.push((k, v)),
                }
                Ok(())
            })
        })
    }

    fn MPI_Info_delete / PMPI_Info_delete(info: usize, key: *const c_char) -> c_int {
        let f = "MPI_Info_delete";
        call(Scope::Process, || {
            let k = key_arg(f, key)?;
            with_mut(f, info, |p| {
                let at = p.iter().position(|(x, _)| *x == k).ok_or_else(|| {
                    MpiError::arg(ErrorClass::InfoNokey, f, "key", format!("{k:?}"), "not set in this info object")
                })?;
                p.remove(at);
                Ok(())
            })
        })
    }

    fn MPI_Info_get / PMPI_Info_get(info: usize, key: *const c_char, valuelen: c_int, value: *mut c_char, flag: *mut c_int) -> c_int {
        let f = "MPI_Info_get";
        call(Scope::Process, || {
            let v = lookup_value(f, info, key)?;
            out(f, "flag", flag, v.is_some() as c_int)?;
            match v {
                // valuelen excludes the terminator (MPI-1 convention of this call).
                Some(v) => out_string(f, "value", value, std::ptr::null_mut(), &v, valuelen.max(0) as usize + 1),
                None => Ok(()),
            }
        })
    }

    fn MPI_Info_get_valuelen / PMPI_Info_get_valuelen(info: usize, key: *const c_char, valuelen: *mut c_int, flag: *mut c_int) -> c_int {
        let f = "MPI_Info_get_valuelen";
        call(Scope::Process, || {
            let v = lookup_value(f, info, key)?;
            out(f, "flag", flag, v.is_some() as c_int)?;
            match v {
                Some(v) => out(f, "valuelen", valuelen, v.len() as c_int),
                None => Ok(()),
            }
        })
    }

    fn MPI_Info_get_string / PMPI_Info_get_string(info: usize, key: *const c_char, buflen: *mut c_int, value: *mut c_char, flag: *mut c_int) -> c_int {
        let f = "MPI_Info_get_string";
        call(Scope::Process, || {
            let v = lookup_value(f, info, key)?;
            out(f, "flag", flag, v.is_some() as c_int)?;
            let Some(v) = v else { return Ok(()) };
            if buflen.is_null() {
                return Err(MpiError::arg(ErrorClass::Arg, f, "buflen", "NULL", "a pointer to the buffer length is required"));
            }
            // SAFETY: non-null int* argument (C ABI contract).
            let room = unsafe { *buflen };
            if room > 0 {
                out_string(f, "value", value, std::ptr::null_mut(), &v, room as usize)?;
            }
            // The length the full value needs, terminator included (MPI-4 rule).
            out(f, "buflen", buflen, v.len() as c_int + 1)
        })
    }

    fn MPI_Info_get_nkeys / PMPI_Info_get_nkeys(info: usize, nkeys: *mut c_int) -> c_int {
        let f = "MPI_Info_get_nkeys";
        call(Scope::Process, || out(f, "nkeys", nkeys, read(f, "info", info, false)?.len() as c_int))
    }

    fn MPI_Info_get_nthkey / PMPI_Info_get_nthkey(info: usize, n: c_int, key: *mut c_char) -> c_int {
        let f = "MPI_Info_get_nthkey";
        call(Scope::Process, || {
            let p = read(f, "info", info, false)?;
            let (k, _) = usize::try_from(n).ok().and_then(|i| p.get(i)).ok_or_else(|| {
                MpiError::arg(ErrorClass::Arg, f, "n", n, format!("the info object has {} keys", p.len()))
            })?;
            out_string(f, "key", key, std::ptr::null_mut(), k, MPI_MAX_INFO_KEY as usize)
        })
    }

    fn MPI_Info_dup / PMPI_Info_dup(info: usize, newinfo: *mut usize) -> c_int {
        let f = "MPI_Info_dup";
        call(Scope::Process, || out(f, "newinfo", newinfo, create(read(f, "info", info, false)?)))
    }

    fn MPI_Info_free / PMPI_Info_free(info: *mut usize) -> c_int {
        let f = "MPI_Info_free";
        call(Scope::Process, || {
            if info.is_null() {
                return Err(MpiError::arg(ErrorClass::Arg, f, "info", "NULL", "a pointer to an info object is required"));
            }
            // SAFETY: non-null MPI_Info* argument (C ABI contract).
            let h = unsafe { *info };
            read(f, "info", h, false)?;
            if let Some(slot) = handle::decode(Kind::Info, h) {
                let mut t = infos();
                if let Some((id, _)) = t.by_index(slot) {
                    t.remove(id);
                }
            }
            out(f, "info", info, MPI_INFO_NULL)
        })
    }
}
