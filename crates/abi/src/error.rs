//! Error codes, error strings and error handlers.
//!
//! An error raised by a call gets a *dynamic code*: `DYNAMIC | slot << 16 | class`. The
//! slot holds the call's message (function, argument, value) for `MPI_Error_string`;
//! `MPI_Error_class` reads the class from the low bits. Slots are reused round-robin, so
//! a very old code still gives its class and the class's description.
//! The error is then handed to the error handler of the communicator the call concerns
//! (or, for calls on no communicator, of `MPI_COMM_SELF` if one was set on it, else of
//! `MPI_COMM_WORLD`: the MPI-4 and the MPI-3 rule agree then).

use crate::consts::*;
use crate::handle::{self, Kind};
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::runtime;
use crossmpi_core::slab::Slab;
use std::os::raw::c_int;
use std::sync::Mutex;

const DYNAMIC: i32 = 1 << 30;
const SLOTS: usize = 1 << 12;
/// User-defined classes start above every predefined code.
const FIRST_USER_CLASS: i32 = 0x4000;
/// User-defined codes.
const FIRST_USER_CODE: i32 = 0x1_0000;

struct Registry {
    messages: Vec<Option<(i32, String)>>,
    next: usize,
    /// User classes (value `FIRST_USER_CLASS + index`) and codes (`FIRST_USER_CODE +
    /// index`), with the class each code belongs to.
    user_classes: UserValues,
    user_codes: UserValues,
}

/// User-defined classes or codes: the live ones by index, and the indices
/// `MPI_Remove_error_class/code` freed, which the next additions reuse (MPICH's
/// errhan/adderr adds and removes 32 classes 10,000 times; without reuse the class
/// values would run into the codes').
struct UserValues {
    /// (class, string) of each live value (a class is its own class); None once removed.
    live: Vec<Option<(i32, Option<String>)>>,
    free: Vec<usize>,
}

impl UserValues {
    const fn new() -> UserValues {
        UserValues {
            live: Vec::new(),
            free: Vec::new(),
        }
    }

    /// The entry of `value` (of a range starting at `first`) while it is live.
    fn get(&self, first: i32, value: c_int) -> Option<&(i32, Option<String>)> {
        let index = usize::try_from(value.checked_sub(first)?).ok()?;
        self.live.get(index)?.as_ref()
    }

    fn get_mut(&mut self, first: i32, value: c_int) -> Option<&mut (i32, Option<String>)> {
        let index = usize::try_from(value.checked_sub(first)?).ok()?;
        self.live.get_mut(index)?.as_mut()
    }

    /// A new value below `limit`, with its class (`None`: the value itself); None when
    /// the range is used up.
    fn add(&mut self, first: i32, limit: i32, class: Option<i32>) -> Option<c_int> {
        let index = match self.free.pop() {
            Some(i) => i,
            None if first as i64 + (self.live.len() as i64) < limit as i64 => {
                self.live.push(None);
                self.live.len() - 1
            }
            None => return None,
        };
        let value = first + index as i32;
        self.live[index] = Some((class.unwrap_or(value), None));
        Some(value)
    }

    fn remove(&mut self, first: i32, value: c_int) {
        let index = (value - first) as usize;
        self.live[index] = None;
        self.free.push(index);
    }

    /// The largest value ever handed out, if any.
    fn last(&self, first: i32) -> Option<c_int> {
        (!self.live.is_empty()).then(|| first + self.live.len() as i32 - 1)
    }
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    messages: Vec::new(),
    next: 0,
    user_classes: UserValues::new(),
    user_codes: UserValues::new(),
});

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether `code` is a dynamic code (positive, with the DYNAMIC bit).
fn is_dynamic(code: c_int) -> bool {
    code > 0 && code & DYNAMIC != 0
}

/// Records the error's message and returns its code (an application's own code as it
/// is: its message is the application's).
pub fn register(e: &MpiError) -> c_int {
    if let Some(code) = e.code {
        return code;
    }
    let mut r = registry();
    if r.messages.is_empty() {
        r.messages.resize(SLOTS, None);
    }
    let slot = r.next;
    r.next = (r.next + 1) % SLOTS;
    let code = DYNAMIC | (slot as i32) << 16 | e.class.code();
    r.messages[slot] = Some((code, e.message.clone()));
    code
}

/// The error code for a value that does not fit the default `INTEGER` of a Fortran
/// binding (`fortran/mpi1_removed.f90`, whose MPI-1 calls narrow MPI-2 results): an
/// `MPI_ERR_ARG` code whose string names the call, the argument and the value. Made
/// like every other error's (under the registry's lock), so threads failing at once
/// each get their own, and no code is leaked.
#[no_mangle]
pub extern "C" fn crossmpi_fortran_too_wide(
    function: *const std::os::raw::c_char,
    arg: *const std::os::raw::c_char,
    value: i64,
) -> c_int {
    let text = |s: *const std::os::raw::c_char| {
        crate::util::in_string("crossmpi_fortran_too_wide", "function", s).unwrap_or_default()
    };
    register(&MpiError::arg(
        ErrorClass::Arg,
        &text(function),
        &text(arg),
        value,
        "does not fit a default INTEGER (use the MPI-2 call with INTEGER(MPI_ADDRESS_KIND))",
    ))
}

/// The error of `function` when the application's callback (`what`) returned `rc`:
/// the call returns `rc` itself, as MPICH does (Open MPI 4.1 returns `MPI_ERR_OTHER`),
/// so a code the application made with `MPI_Add_error_code` comes back unchanged. A value
/// that is no error code becomes a new code of class `MPI_ERR_OTHER`.
pub fn callback_failed(function: &str, what: impl std::fmt::Display, rc: c_int) -> MpiError {
    let e = MpiError::context(
        ErrorClass::Other,
        function,
        format!("{what} returned error {rc}"),
    );
    match class_of(rc) {
        Some(_) => e.returning(rc),
        None => e,
    }
}

/// `MPI_Error_class`: None for a value that is no error code.
pub fn class_of(code: c_int) -> Option<c_int> {
    if is_dynamic(code) {
        return Some(code & 0xffff);
    }
    if (0..=MPI_ERR_ABI).contains(&code)
        || (MPI_T_ERR_CANNOT_INIT..=MPI_T_ERR_PVAR_NO_ATOMIC).contains(&code)
    {
        return Some(code);
    }
    user_entry(&registry(), code).map(|c| c.0)
}

/// The live user class or code `code`.
fn user_entry(r: &Registry, code: c_int) -> Option<&(i32, Option<String>)> {
    if code >= FIRST_USER_CODE {
        r.user_codes.get(FIRST_USER_CODE, code)
    } else {
        r.user_classes.get(FIRST_USER_CLASS, code)
    }
}

/// `MPI_Error_string`.
pub fn string_of(code: c_int) -> Option<String> {
    if is_dynamic(code) {
        let r = registry();
        let slot = ((code >> 16) & 0x3fff) as usize;
        if let Some(Some((c, m))) = r.messages.get(slot) {
            if *c == code {
                return Some(m.clone());
            }
        }
        drop(r);
        return string_of(code & 0xffff);
    }
    if code == MPI_SUCCESS {
        return Some("MPI_SUCCESS: no error".into());
    }
    if let Some(name) = predefined_class_name(code) {
        return Some(name);
    }
    user_entry(&registry(), code).map(|c| c.1.clone().unwrap_or_default())
}

fn predefined_class_name(code: c_int) -> Option<String> {
    let class = [
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
        ErrorClass::Topology,
        ErrorClass::Dims,
        ErrorClass::Arg,
        ErrorClass::Unknown,
        ErrorClass::Truncate,
        ErrorClass::Other,
        ErrorClass::Intern,
        ErrorClass::Conversion,
        ErrorClass::Pending,
        ErrorClass::InStatus,
        ErrorClass::Info,
        ErrorClass::InfoKey,
        ErrorClass::InfoNokey,
        ErrorClass::InfoValue,
        ErrorClass::Keyval,
        ErrorClass::NoMem,
        ErrorClass::Unsupported,
        ErrorClass::ProcAborted,
        ErrorClass::Errhandler,
        ErrorClass::Name,
        ErrorClass::Port,
        ErrorClass::Service,
        ErrorClass::Spawn,
        ErrorClass::Session,
        ErrorClass::Assert,
        ErrorClass::Base,
        ErrorClass::Disp,
        ErrorClass::LockType,
        ErrorClass::RmaAttach,
        ErrorClass::RmaRange,
        ErrorClass::RmaShared,
        ErrorClass::RmaSync,
        ErrorClass::Size,
        ErrorClass::Win,
        ErrorClass::RmaFlavor,
    ]
    .into_iter()
    .find(|c| c.code() == code);
    match class {
        Some(c) => Some(c.describe().to_string()),
        None if (0..=MPI_ERR_ABI).contains(&code)
            || (MPI_T_ERR_CANNOT_INIT..=MPI_T_ERR_PVAR_NO_ATOMIC).contains(&code) =>
        {
            Some(format!("MPI error class {code}"))
        }
        None => None,
    }
}

/// `MPI_Add_error_class`.
pub fn add_class(function: &str) -> MpiResult<c_int> {
    registry()
        .user_classes
        .add(FIRST_USER_CLASS, FIRST_USER_CODE, None)
        .ok_or_else(|| {
            let live = FIRST_USER_CODE - FIRST_USER_CLASS;
            MpiError::context(
                ErrorClass::Other,
                function,
                format!("all {live} user error classes exist (remove one first)"),
            )
        })
}

/// `MPI_Add_error_code`.
pub fn add_code(function: &str, class: c_int) -> MpiResult<c_int> {
    if class_of(class) != Some(class) || is_dynamic(class) {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            "errorclass",
            class,
            "not an error class",
        ));
    }
    registry()
        .user_codes
        .add(FIRST_USER_CODE, DYNAMIC, Some(class))
        .ok_or_else(|| {
            MpiError::context(
                ErrorClass::Other,
                function,
                "every user error code value is taken (remove some first)",
            )
        })
}

/// `MPI_Add_error_string`: only for user classes and codes.
pub fn add_string(function: &str, code: c_int, text: String) -> MpiResult<()> {
    set_string(function, code, Some(text))
}

/// Sets or (with `None`) removes the string of a live user class or code.
fn set_string(function: &str, code: c_int, text: Option<String>) -> MpiResult<()> {
    let mut r = registry();
    let entry = if code >= FIRST_USER_CODE {
        r.user_codes.get_mut(FIRST_USER_CODE, code)
    } else {
        r.user_classes.get_mut(FIRST_USER_CLASS, code)
    };
    match entry {
        Some(c) => {
            c.1 = text;
            Ok(())
        }
        None => Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            "errorcode",
            code,
            "not a user-defined error class or code (or one since removed)",
        )),
    }
}

/// `MPI_Remove_error_string`.
pub fn remove_string(function: &str, code: c_int) -> MpiResult<()> {
    set_string(function, code, None)
}

/// `MPI_Remove_error_code`: only a live user code.
pub fn remove_code(function: &str, code: c_int) -> MpiResult<()> {
    let mut r = registry();
    if code < FIRST_USER_CODE || r.user_codes.get(FIRST_USER_CODE, code).is_none() {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            "errorcode",
            code,
            "not a user-defined error code (MPI_Add_error_code makes them)",
        ));
    }
    r.user_codes.remove(FIRST_USER_CODE, code);
    Ok(())
}

/// `MPI_Remove_error_class`: only a live user class none of whose codes is live.
pub fn remove_class(function: &str, class: c_int) -> MpiResult<()> {
    let mut r = registry();
    if !(FIRST_USER_CLASS..FIRST_USER_CODE).contains(&class)
        || r.user_classes.get(FIRST_USER_CLASS, class).is_none()
    {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            "errorclass",
            class,
            "not a user-defined error class (MPI_Add_error_class makes them)",
        ));
    }
    let live = r
        .user_codes
        .live
        .iter()
        .position(|c| c.as_ref().is_some_and(|c| c.0 == class))
        .map(|i| FIRST_USER_CODE + i as i32);
    if let Some(code) = live {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            "errorclass",
            class,
            format!("error code {code} of this class still exists (remove it first)"),
        ));
    }
    r.user_classes.remove(FIRST_USER_CLASS, class);
    Ok(())
}

/// `MPI_LASTUSEDCODE`.
pub fn last_used_code() -> c_int {
    let r = registry();
    r.user_codes
        .last(FIRST_USER_CODE)
        .or_else(|| r.user_classes.last(FIRST_USER_CLASS))
        .unwrap_or(MPI_ERR_LASTCODE)
}

// -------------------------------------------------------------------- error handlers

/// `MPI_Comm_errhandler_function`: called with the communicator and the code.
pub type CommErrhandlerFn = unsafe extern "C" fn(*mut usize, *mut c_int, ...);

static USER_HANDLERS: Mutex<Slab<CommErrhandlerFn>> = Mutex::new(Slab::new_const());

pub fn create_handler(f: CommErrhandlerFn) -> usize {
    let id = USER_HANDLERS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(f);
    handle::encode(Kind::Errhandler, id.index)
}

/// `MPI_Errhandler_free`. Handlers stay registered: communicators that use a freed
/// handler keep using it, as the standard requires, and handlers are a few bytes each.
pub fn free_handler(function: &str, h: usize) -> MpiResult<()> {
    check_handler(function, h).map(|_| ())
}

fn is_predefined_handler(h: usize) -> bool {
    h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN || h == MPI_ERRORS_ABORT
}

fn bad_handler(function: &str, h: usize) -> MpiError {
    MpiError::arg(
        ErrorClass::Errhandler,
        function,
        "errhandler",
        handle::describe(h),
        "not an error handler",
    )
}

/// Checks an error handler handle for `MPI_Comm_set_errhandler`.
pub fn check_handler(function: &str, h: usize) -> MpiResult<u32> {
    if is_predefined_handler(h) {
        return Ok(h as u32);
    }
    let slot = handle::decode(Kind::Errhandler, h).ok_or_else(|| bad_handler(function, h))?;
    let t = USER_HANDLERS.lock().unwrap_or_else(|p| p.into_inner());
    t.by_index(slot)
        .map(|_| h as u32)
        .ok_or_else(|| bad_handler(function, h))
}

/// What a communicator's stored handler value means (0: never set = the default).
pub fn stored_handler(v: u32) -> usize {
    if v == 0 {
        MPI_ERRORS_ARE_FATAL
    } else {
        v as usize
    }
}

/// The objects an error can be raised on.
#[derive(Clone, Copy)]
pub enum Scope {
    /// A communicator handle (possibly invalid: then the default rule applies).
    Comm(usize),
    /// No object: `MPI_COMM_SELF`'s handler if set, else `MPI_COMM_WORLD`'s.
    Process,
}

fn handler_for(scope: Scope) -> (usize, usize) {
    let lookup = |h: usize| -> Option<u32> {
        runtime::with("", |rt| {
            let id = crate::comm::resolve(rt, "", h)?;
            Ok(rt.comm("", id)?.errhandler)
        })
        .ok()
    };
    if let Scope::Comm(h) = scope {
        if let Some(v) = lookup(h) {
            return (stored_handler(v), h);
        }
    }
    match lookup(MPI_COMM_SELF) {
        Some(v) if v != 0 => (stored_handler(v), MPI_COMM_SELF),
        _ => (
            stored_handler(lookup(MPI_COMM_WORLD).unwrap_or(0)),
            MPI_COMM_WORLD,
        ),
    }
}

/// Ends the job for an error under `MPI_ERRORS_ARE_FATAL`/`MPI_ERRORS_ABORT`.
pub fn fatal(e: &MpiError) -> ! {
    // Before MPI_Init completes the launcher's rank is all there is to name.
    let rank = runtime::with("", |rt| Ok(rt.rank.to_string())).unwrap_or_else(|_| {
        std::env::var("PMI_RANK").map_or("?".into(), |r| format!("{r} (launcher rank)"))
    });
    runtime::abort(
        e.class.code(),
        &format!("crossmpi: rank {rank}: MPI_ERRORS_ARE_FATAL: {}", e.message),
    )
}

/// Hands an error to the handler of its scope; returns the code the call returns.
pub fn raise(scope: Scope, e: MpiError) -> c_int {
    let code = register(&e);
    dispatch(scope, &e, code)
}

/// Hands `code` (already registered, or the application's own code for
/// `MPI_Comm_call_errhandler`) to the handler of its scope; returns the code.
pub fn dispatch(scope: Scope, e: &MpiError, code: c_int) -> c_int {
    let (handler, comm) = handler_for(scope);
    invoke(handler, comm, e, code)
}

/// Runs error handler `handler` for an error raised on the object `object` (a
/// communicator or a session handle); returns the code the call returns.
pub fn invoke(handler: usize, object: usize, e: &MpiError, mut code: c_int) -> c_int {
    match handler {
        h if h == MPI_ERRORS_RETURN => code,
        h if h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_ABORT => fatal(e),
        h => {
            let f = handle::decode(Kind::Errhandler, h).and_then(|slot| {
                USER_HANDLERS
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .by_index(slot)
                    .map(|(_, f)| *f)
            });
            if let Some(f) = f {
                let mut object = object;
                // SAFETY: a user error handler registered through MPI_*_create_errhandler,
                // called with the standard's arguments: pointers to the handle and the code.
                unsafe { f(&mut object, &mut code) };
            }
            code
        }
    }
}

/// Runs the body of an MPI call and turns its error into a return code.
pub fn call(scope: Scope, body: impl FnOnce() -> MpiResult<()>) -> c_int {
    match body() {
        Ok(()) => MPI_SUCCESS,
        Err(e) => raise(scope, e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_codes_keep_class_and_message() {
        let e = MpiError::arg(ErrorClass::Rank, "MPI_Send", "dest", 9, "size 2");
        let code = register(&e);
        assert_eq!(class_of(code), Some(MPI_ERR_RANK));
        assert_eq!(string_of(code).unwrap(), e.message);
        assert_eq!(class_of(MPI_ERR_TAG), Some(MPI_ERR_TAG));
        assert_eq!(string_of(MPI_ERR_TAG).unwrap(), "invalid tag");
        assert_eq!(class_of(-7), None);
    }

    #[test]
    fn user_classes_and_codes() {
        let class = add_class("MPI_Add_error_class").unwrap();
        assert!(class > MPI_ERR_LASTCODE);
        let code = add_code("MPI_Add_error_code", class).unwrap();
        assert_eq!(class_of(code), Some(class));
        add_string("MPI_Add_error_string", code, "disk on fire".into()).unwrap();
        assert_eq!(string_of(code).unwrap(), "disk on fire");
        assert!(add_code("MPI_Add_error_code", 123456).is_err());
        assert!(last_used_code() >= code);
    }

    #[test]
    fn a_callbacks_error_code_is_what_the_call_returns() {
        let class = add_class("MPI_Add_error_class").unwrap();
        let code = add_code("MPI_Add_error_code", class).unwrap();
        let e = callback_failed("MPI_Comm_delete_attr", "the delete callback", code);
        assert_eq!(register(&e), code);
        assert!(
            e.message.contains(&format!("returned error {code}")),
            "{}",
            e.message
        );
        let e = callback_failed("MPI_Wait", "free_fn", MPI_ERR_OTHER);
        assert_eq!(register(&e), MPI_ERR_OTHER);
        let e = callback_failed("MPI_Wait", "free_fn", -7);
        let made = register(&e);
        assert_ne!(made, -7, "no error code: a new one is made");
        assert_eq!(class_of(made), Some(MPI_ERR_OTHER));
    }
}
