//! Small conversions shared by the exported functions.

use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use std::os::raw::{c_char, c_int};

/// Refuses a NULL output argument `arg` (for a call that writes it later, or only on
/// some paths).
pub fn required<T>(function: &str, arg: &str, ptr: *mut T) -> MpiResult<()> {
    if ptr.is_null() {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            arg,
            "NULL",
            "an output argument is required",
        ));
    }
    Ok(())
}

/// Writes `value` through an output pointer, failing on NULL.
pub fn out<T>(function: &str, arg: &str, ptr: *mut T, value: T) -> MpiResult<()> {
    required(function, arg, ptr)?;
    // SAFETY: non-null output pointers of MPI functions point to storage of the argument's
    // type owned by the caller (C ABI contract).
    unsafe { ptr.write(value) };
    Ok(())
}

/// Copies `s` into a caller buffer of `max` bytes (NUL-terminated) and stores its length.
pub fn out_string(
    function: &str,
    arg: &str,
    buf: *mut c_char,
    len: *mut c_int,
    s: &str,
    max: usize,
) -> MpiResult<()> {
    if buf.is_null() {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            arg,
            "NULL",
            "a string buffer is required",
        ));
    }
    let bytes = &s.as_bytes()[..s.len().min(max - 1)];
    // SAFETY: the standard sizes such buffers at `max` bytes (MPI_MAX_* constants); we
    // write at most max-1 bytes plus the terminator.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf as *mut u8, bytes.len());
        *buf.add(bytes.len()) = 0;
    }
    if !len.is_null() {
        out(function, "resultlen", len, bytes.len() as c_int)?;
    }
    Ok(())
}

/// Reads a NUL-terminated C string argument.
pub fn in_string(function: &str, arg: &str, s: *const c_char) -> MpiResult<String> {
    if s.is_null() {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            arg,
            "NULL",
            "a string is required",
        ));
    }
    // SAFETY: string arguments of MPI functions are NUL-terminated C strings.
    Ok(unsafe { std::ffi::CStr::from_ptr(s) }
        .to_string_lossy()
        .into_owned())
}

/// A non-negative count argument.
pub fn count(function: &str, arg: &str, n: i64) -> MpiResult<u64> {
    if n < 0 {
        return Err(MpiError::arg(
            ErrorClass::Count,
            function,
            arg,
            n,
            "counts cannot be negative",
        ));
    }
    Ok(n as u64)
}

/// Reads an array argument of `n` elements.
pub fn slice<'a, T>(function: &str, arg: &str, p: *const T, n: usize) -> MpiResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            arg,
            "NULL",
            format!("an array of {n} elements is required"),
        ));
    }
    // SAFETY: array arguments of MPI functions hold as many elements as their count says.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// An array argument the function writes.
pub fn slice_mut<'a, T>(function: &str, arg: &str, p: *mut T, n: usize) -> MpiResult<&'a mut [T]> {
    if n == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            arg,
            "NULL",
            format!("an array of {n} elements is required"),
        ));
    }
    // SAFETY: as in `slice`, and the caller owns the array for the duration of the call.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}
