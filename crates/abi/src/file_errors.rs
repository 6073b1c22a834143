//! Error handling of file calls. Errors of a call on a file go to the file's error
//! handler; errors of `MPI_File_open`/`MPI_File_delete` (and on invalid handles) go to
//! the handler of `MPI_FILE_NULL`, which is `MPI_ERRORS_RETURN` unless the application
//! sets another, as the standard says.
//!
//! The core's error classes do not include the file classes yet, so a code carries the
//! nearest core class (`MPI_ERR_OTHER` for most file classes) while its message names the
//! file class, the function, the argument and the OS error.

use crate::consts::*;
use crate::error::{self, CommErrhandlerFn};
use crossmpi_core::error::MpiError;
use crossmpi_io::IoError;
use std::os::raw::c_int;
use std::sync::Mutex;

/// `MPI_File_create_errhandler` handlers: (handle, function).
static FILE_HANDLERS: Mutex<Vec<(usize, CommErrhandlerFn)>> = Mutex::new(Vec::new());
/// The handler of `MPI_FILE_NULL`: the default of files opened later.
static DEFAULT: Mutex<usize> = Mutex::new(MPI_ERRORS_RETURN);

pub fn create_handler(f: CommErrhandlerFn) -> usize {
    let h = error::create_handler(f);
    FILE_HANDLERS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((h, f));
    h
}

pub fn default_handler() -> usize {
    *DEFAULT.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn set_default_handler(h: usize) {
    *DEFAULT.lock().unwrap_or_else(|p| p.into_inner()) = h;
}

/// The core error an I/O error is registered as (see the module comment).
pub fn to_mpi(e: &IoError) -> MpiError {
    MpiError::new(e.nearest_core_class(), e.message.clone())
}

/// Hands `code` to `handler`, naming file handle `fh`; returns the code.
pub fn dispatch(handler: usize, fh: usize, e: &MpiError, mut code: c_int) -> c_int {
    match handler {
        h if h == MPI_ERRORS_RETURN => code,
        h if h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_ABORT => error::fatal(e),
        h => {
            let f = FILE_HANDLERS
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .find(|(v, _)| *v == h)
                .map(|(_, f)| *f);
            if let Some(f) = f {
                let mut fh = fh;
                // SAFETY: a handler registered through MPI_File_create_errhandler, called
                // with the standard's arguments: pointers to the file handle and the code.
                unsafe { f(&mut fh, &mut code) };
            }
            code
        }
    }
}

/// Registers an I/O error and hands it to `handler` (an application's own code as it
/// is).
pub fn raise(handler: usize, fh: usize, e: &IoError) -> c_int {
    let m = to_mpi(e);
    let code = e.code.unwrap_or_else(|| error::register(&m));
    dispatch(handler, fh, &m, code)
}
