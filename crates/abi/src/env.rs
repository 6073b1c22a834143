//! Environment: initialisation, finalisation, abort, clocks, versions.

use crate::consts::*;
use crate::error::{self, call, Scope};
use crate::util::{out, out_string};
use crossmpi_core::error::{ErrorClass, MpiError};
use crossmpi_core::runtime;
use std::os::raw::{c_char, c_int};
use std::sync::OnceLock;
use std::time::Instant;

pub const LIBRARY_VERSION: &str = concat!(
    "crossmpi ",
    env!("CARGO_PKG_VERSION"),
    " (MPI 5.0 standard ABI; shared memory and TCP transports)"
);

/// The thread that called `MPI_Init*` (for `MPI_Is_thread_main`).
static MAIN_THREAD: OnceLock<std::thread::ThreadId> = OnceLock::new();

fn init(function: &'static str, required: c_int) -> Result<c_int, c_int> {
    // Sessions may have started the runtime already: the World model then joins it.
    let started = crate::mpi4_session::world_joins(function)
        .unwrap_or_else(|| runtime::init(function, required));
    match started {
        Ok(provided) => {
            let _ = MAIN_THREAD.set(std::thread::current().id());
            Ok(provided)
        }
        Err(e) => Err(error::raise(Scope::Process, e)),
    }
}

fn epoch() -> &'static Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now)
}

export! {
    fn MPI_Init / PMPI_Init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> c_int {
        init("MPI_Init", MPI_THREAD_SINGLE).map(|_| MPI_SUCCESS).unwrap_or_else(|code| code)
    }

    fn MPI_Init_thread / PMPI_Init_thread(_argc: *mut c_int, _argv: *mut *mut *mut c_char, required: c_int, provided: *mut c_int) -> c_int {
        match init("MPI_Init_thread", required) {
            Ok(p) => call(Scope::Process, || out("MPI_Init_thread", "provided", provided, p)),
            Err(code) => code,
        }
    }

    fn MPI_Finalize / PMPI_Finalize() -> c_int {
        call(Scope::Process, || {
            crate::attr::finalize_self("MPI_Finalize")?;
            if crate::mpi4_session::world_leaves() {
                return Ok(()); // the last session to finalize ends the runtime
            }
            runtime::finalize("MPI_Finalize")
        })
    }

    fn MPI_Initialized / PMPI_Initialized(flag: *mut c_int) -> c_int {
        call(Scope::Process, || out("MPI_Initialized", "flag", flag, runtime::is_initialized() as c_int))
    }

    fn MPI_Finalized / PMPI_Finalized(flag: *mut c_int) -> c_int {
        call(Scope::Process, || out("MPI_Finalized", "flag", flag, runtime::is_finalized() as c_int))
    }

    fn MPI_Query_thread / PMPI_Query_thread(provided: *mut c_int) -> c_int {
        call(Scope::Process, || {
            let level = runtime::with("MPI_Query_thread", |rt| Ok(rt.thread_level))?;
            out("MPI_Query_thread", "provided", provided, level)
        })
    }

    fn MPI_Is_thread_main / PMPI_Is_thread_main(flag: *mut c_int) -> c_int {
        call(Scope::Process, || {
            let main = MAIN_THREAD.get() == Some(&std::thread::current().id());
            out("MPI_Is_thread_main", "flag", flag, main as c_int)
        })
    }

    fn MPI_Abort / PMPI_Abort(comm: usize, errorcode: c_int) -> c_int {
        let rank = runtime::with("MPI_Abort", |rt| Ok(rt.rank.to_string())).unwrap_or_else(|_| "?".into());
        runtime::abort(
            errorcode,
            &format!(
                "crossmpi: rank {rank} called MPI_Abort({}, {errorcode}): ending the job",
                crate::handle::describe(comm)
            ),
        )
    }

    fn MPI_Wtime / PMPI_Wtime() -> f64 {
        epoch().elapsed().as_secs_f64()
    }

    fn MPI_Wtick / PMPI_Wtick() -> f64 {
        1e-9
    }

    fn MPI_Get_processor_name / PMPI_Get_processor_name(name: *mut c_char, resultlen: *mut c_int) -> c_int {
        call(Scope::Process, || {
            let host = crossmpi_core::bootstrap::hostname();
            out_string("MPI_Get_processor_name", "name", name, resultlen, &host, MPI_MAX_PROCESSOR_NAME as usize)
        })
    }

    fn MPI_Get_version / PMPI_Get_version(version: *mut c_int, subversion: *mut c_int) -> c_int {
        call(Scope::Process, || {
            out("MPI_Get_version", "version", version, MPI_VERSION)?;
            out("MPI_Get_version", "subversion", subversion, MPI_SUBVERSION)
        })
    }

    fn MPI_Get_library_version / PMPI_Get_library_version(version: *mut c_char, resultlen: *mut c_int) -> c_int {
        call(Scope::Process, || {
            out_string("MPI_Get_library_version", "version", version, resultlen, LIBRARY_VERSION, MPI_MAX_LIBRARY_VERSION_STRING as usize)
        })
    }

    fn MPI_Error_string / PMPI_Error_string(errorcode: c_int, string: *mut c_char, resultlen: *mut c_int) -> c_int {
        call(Scope::Process, || {
            let s = error::string_of(errorcode).ok_or_else(|| {
                MpiError::arg(ErrorClass::Arg, "MPI_Error_string", "errorcode", errorcode, "not an error code")
            })?;
            out_string("MPI_Error_string", "string", string, resultlen, &s, MPI_MAX_ERROR_STRING as usize)
        })
    }

    fn MPI_Error_class / PMPI_Error_class(errorcode: c_int, errorclass: *mut c_int) -> c_int {
        call(Scope::Process, || {
            let c = error::class_of(errorcode).ok_or_else(|| {
                MpiError::arg(ErrorClass::Arg, "MPI_Error_class", "errorcode", errorcode, "not an error code")
            })?;
            out("MPI_Error_class", "errorclass", errorclass, c)
        })
    }

    fn MPI_Add_error_class / PMPI_Add_error_class(errorclass: *mut c_int) -> c_int {
        call(Scope::Process, || out("MPI_Add_error_class", "errorclass", errorclass, error::add_class("MPI_Add_error_class")?))
    }

    fn MPI_Add_error_code / PMPI_Add_error_code(errorclass: c_int, errorcode: *mut c_int) -> c_int {
        call(Scope::Process, || {
            let code = error::add_code("MPI_Add_error_code", errorclass)?;
            out("MPI_Add_error_code", "errorcode", errorcode, code)
        })
    }

    fn MPI_Add_error_string / PMPI_Add_error_string(errorcode: c_int, string: *const c_char) -> c_int {
        call(Scope::Process, || {
            let s = crate::util::in_string("MPI_Add_error_string", "string", string)?;
            error::add_string("MPI_Add_error_string", errorcode, s)
        })
    }

    fn MPI_Abi_get_version / PMPI_Abi_get_version(abi_major: *mut c_int, abi_minor: *mut c_int) -> c_int {
        call(Scope::Process, || {
            out("MPI_Abi_get_version", "abi_major", abi_major, MPI_ABI_VERSION)?;
            out("MPI_Abi_get_version", "abi_minor", abi_minor, MPI_ABI_SUBVERSION)
        })
    }

    /// Profiling hook: crossmpi has no built-in profiling levels, so this only returns.
    /// (Declared variadic in C; on x86-64 a callee that ignores the variadic part is
    /// called correctly by variadic callers.)
    fn MPI_Pcontrol / PMPI_Pcontrol(_level: c_int) -> c_int {
        MPI_SUCCESS
    }
}
