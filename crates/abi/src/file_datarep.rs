//! `MPI_Register_datarep(_c)`: the application's conversion and extent functions behind
//! crossmpi-io's `Conversions`, called with the standard's arguments (handles, the user
//! buffer's address, data item counts and positions).

use crate::consts::*;
use crate::error;
use crate::types;
use crate::util::in_string;
use crossmpi_core::datatype::Basic;
use crossmpi_core::error::ErrorClass;
use crossmpi_core::userbuf::UserBuf;
use crossmpi_io::{Class, Conversions, Datarep, FileClass, IoError, IoResult};
use std::os::raw::{c_char, c_int, c_void};

/// `MPI_Datarep_extent_function`.
pub type ExtentFn = unsafe extern "C" fn(usize, *mut isize, *mut c_void) -> c_int;
/// `MPI_Datarep_conversion_function`.
pub type ConversionFn =
    unsafe extern "C" fn(*mut c_void, usize, c_int, *mut c_void, i64, *mut c_void) -> c_int;
/// `MPI_Datarep_conversion_function_c`.
pub type ConversionFnC =
    unsafe extern "C" fn(*mut c_void, usize, i64, *mut c_void, i64, *mut c_void) -> c_int;

/// A conversion function of either registration call.
#[derive(Clone, Copy)]
pub enum Conversion {
    Int(ConversionFn),
    Large(ConversionFnC),
}

/// The functions and `extra_state` an application registered.
struct Registered {
    read: Option<Conversion>,
    write: Option<Conversion>,
    extent: ExtentFn,
    /// `extra_state`, passed back as given.
    extra: usize,
    /// Registered with `MPI_Register_datarep_c` (counts are `MPI_Count`).
    large: bool,
}

/// The error a user function's code `rc` becomes: the call returns `rc` itself.
fn failed(function: &str, kind: &str, rc: c_int) -> IoError {
    let class = error::class_of(rc)
        .and_then(FileClass::from_code)
        .map_or(Class::Core(ErrorClass::Other), Class::File);
    IoError::user_code(class, function, kind, rc)
}

impl Registered {
    fn convert(
        &self,
        function: &str,
        kind: &str,
        f: Conversion,
        buf: &UserBuf,
        count: u64,
        file: *mut c_void,
        position: u64,
    ) -> IoResult<()> {
        let dtype = types::handle_for(&buf.dtype);
        let (user, extra) = (buf.addr as *mut c_void, self.extra as *mut c_void);
        let rc = match f {
            // SAFETY: the application's conversion function, called as the standard
            // says: its user buffer, a handle of its datatype, a count within the
            // function's range (`max_items`), a file buffer holding `count` items in the
            // file representation, and its extra_state.
            Conversion::Int(c) => unsafe {
                c(
                    user,
                    dtype.value(),
                    count as c_int,
                    file,
                    position as i64,
                    extra,
                )
            },
            // SAFETY: as above, with an MPI_Count count.
            Conversion::Large(c) => unsafe {
                c(
                    user,
                    dtype.value(),
                    count as i64,
                    file,
                    position as i64,
                    extra,
                )
            },
        };
        if rc != MPI_SUCCESS {
            return Err(failed(function, kind, rc));
        }
        Ok(())
    }
}

impl Conversions for Registered {
    fn file_extent(&self, function: &str, b: Basic) -> IoResult<u64> {
        let h = types::predefined_handle(b).ok_or_else(|| {
            IoError::file(
                FileClass::UnsupportedDatarep,
                function,
                "datatype",
                b.mpi_name(),
                "a basic type without a predefined handle to ask dtype_file_extent_fn about",
            )
        })?;
        let mut extent: isize = -1;
        // SAFETY: the application's dtype_file_extent_fn, called with a predefined
        // datatype handle, a pointer to a local and its extra_state.
        let rc = unsafe { (self.extent)(h, &mut extent, self.extra as *mut c_void) };
        if rc != MPI_SUCCESS {
            return Err(failed(function, "dtype_file_extent_fn", rc));
        }
        u64::try_from(extent).map_err(|_| {
            IoError::core(
                ErrorClass::Arg,
                function,
                "dtype_file_extent_fn",
                extent,
                format!("returned a negative file extent for {}", b.mpi_name()),
            )
        })
    }

    fn writes(&self) -> bool {
        self.write.is_some()
    }

    fn reads(&self) -> bool {
        self.read.is_some()
    }

    fn max_items(&self) -> u64 {
        if self.large {
            i64::MAX as u64
        } else {
            c_int::MAX as u64
        }
    }

    fn write(
        &self,
        function: &str,
        buf: &UserBuf,
        count: u64,
        file: &mut [u8],
        position: u64,
    ) -> IoResult<()> {
        let Some(f) = self.write else { return Ok(()) };
        let file = file.as_mut_ptr() as *mut c_void;
        self.convert(
            function,
            "write_conversion_fn",
            f,
            buf,
            count,
            file,
            position,
        )
    }

    fn read(
        &self,
        function: &str,
        buf: &UserBuf,
        count: u64,
        file: &[u8],
        position: u64,
    ) -> IoResult<()> {
        let Some(f) = self.read else { return Ok(()) };
        // The standard's signature takes a non-const filebuf; a read function only
        // reads it.
        let file = file.as_ptr() as *mut c_void;
        self.convert(
            function,
            "read_conversion_fn",
            f,
            buf,
            count,
            file,
            position,
        )
    }
}

/// The functions given to `MPI_Register_datarep(_c)`.
pub struct Functions {
    pub read: Option<Conversion>,
    pub write: Option<Conversion>,
    pub extent: Option<ExtentFn>,
    pub extra: *mut c_void,
    /// The `_c` call: counts are `MPI_Count`.
    pub large: bool,
}

/// `MPI_Register_datarep(_c)`.
pub fn register(function: &str, datarep: *const c_char, given: Functions) -> IoResult<()> {
    let name = in_string(function, "datarep", datarep)?;
    if name.is_empty() || name.len() >= MPI_MAX_DATAREP_STRING as usize {
        return Err(IoError::core(
            ErrorClass::Arg,
            function,
            "datarep",
            format!("\"{name}\""),
            format!(
                "a name of 1 to {} characters",
                MPI_MAX_DATAREP_STRING as usize - 1
            ),
        ));
    }
    let extent = given.extent.ok_or_else(|| {
        IoError::core(
            ErrorClass::Arg,
            function,
            "dtype_file_extent_fn",
            "NULL",
            "a representation needs its file extents",
        )
    })?;
    let functions = Registered {
        read: given.read,
        write: given.write,
        extent,
        extra: given.extra as usize,
        large: given.large,
    };
    Datarep::register(function, &name, Box::new(functions))
}
