//! Errors of file operations: the MPI-5.0 ABI error class (file classes included) and a
//! message naming the function, the argument or file, the value and the OS error.

use crossmpi_core::datatype::{ErrorKind, TypeError};
use crossmpi_core::error::{ErrorClass, MpiError};
use std::fmt;
use std::io;

/// The error classes of the I/O chapter (values of the MPI-5.0 ABI's `mpi.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileClass {
    Access = 20,
    Amode = 21,
    DupDatarep = 27,
    FileExists = 28,
    FileInUse = 29,
    File = 30,
    Io = 35,
    NotSame = 40,
    NoSpace = 41,
    NoSuchFile = 42,
    Quota = 44,
    ReadOnly = 45,
    UnsupportedDatarep = 54,
    UnsupportedOperation = 55,
}

impl FileClass {
    /// The file class numbered `code` in the ABI.
    pub fn from_code(code: i32) -> Option<FileClass> {
        use FileClass::*;
        [
            Access,
            Amode,
            DupDatarep,
            FileExists,
            FileInUse,
            File,
            Io,
            NotSame,
            NoSpace,
            NoSuchFile,
            Quota,
            ReadOnly,
            UnsupportedDatarep,
            UnsupportedOperation,
        ]
        .into_iter()
        .find(|c| *c as i32 == code)
    }

    /// The standard's description, and the class's name (so that the message names the
    /// exact class even where a code carries a nearer core class).
    fn describe(self) -> &'static str {
        match self {
            FileClass::Access => "permission denied (MPI_ERR_ACCESS)",
            FileClass::Amode => "invalid access mode (MPI_ERR_AMODE)",
            FileClass::DupDatarep => "data representation already registered (MPI_ERR_DUP_DATAREP)",
            FileClass::FileExists => "file exists (MPI_ERR_FILE_EXISTS)",
            FileClass::FileInUse => "file in use (MPI_ERR_FILE_IN_USE)",
            FileClass::File => "invalid file handle (MPI_ERR_FILE)",
            FileClass::Io => "I/O error (MPI_ERR_IO)",
            FileClass::NotSame => {
                "arguments differ between processes of a collective call (MPI_ERR_NOT_SAME)"
            }
            FileClass::NoSpace => "no space left on the device (MPI_ERR_NO_SPACE)",
            FileClass::NoSuchFile => "no such file (MPI_ERR_NO_SUCH_FILE)",
            FileClass::Quota => "quota exceeded (MPI_ERR_QUOTA)",
            FileClass::ReadOnly => "read-only file or file system (MPI_ERR_READ_ONLY)",
            FileClass::UnsupportedDatarep => {
                "unsupported data representation (MPI_ERR_UNSUPPORTED_DATAREP)"
            }
            FileClass::UnsupportedOperation => {
                "unsupported operation (MPI_ERR_UNSUPPORTED_OPERATION)"
            }
        }
    }
}

/// The class of an I/O error: one of the core's classes or a file class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Core(ErrorClass),
    File(FileClass),
}

impl Class {
    /// The class number of the MPI-5.0 ABI.
    pub fn code(self) -> i32 {
        match self {
            Class::Core(c) => c.code(),
            Class::File(c) => c as i32,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Class::Core(c) => c.describe(),
            Class::File(c) => c.describe(),
        }
    }
}

/// An error raised by a file operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoError {
    pub class: Class,
    pub message: String,
    /// An error code the application's own function returned (a data conversion
    /// function), which the call returns as it is.
    pub code: Option<i32>,
}

pub type IoResult<T> = Result<T, IoError>;

impl IoError {
    /// `FUNCTION: class description: argument NAME = VALUE (detail)`, as core errors read.
    pub fn arg(
        class: Class,
        function: &str,
        argument: &str,
        value: impl fmt::Display,
        detail: impl fmt::Display,
    ) -> IoError {
        let detail = detail.to_string();
        let tail = if detail.is_empty() {
            String::new()
        } else {
            format!(" ({detail})")
        };
        IoError {
            class,
            message: format!(
                "{function}: {}: argument {argument} = {value}{tail}",
                class.describe()
            ),
            code: None,
        }
    }

    pub fn file(
        class: FileClass,
        function: &str,
        argument: &str,
        value: impl fmt::Display,
        detail: impl fmt::Display,
    ) -> IoError {
        IoError::arg(Class::File(class), function, argument, value, detail)
    }

    pub fn core(
        class: ErrorClass,
        function: &str,
        argument: &str,
        value: impl fmt::Display,
        detail: impl fmt::Display,
    ) -> IoError {
        IoError::arg(Class::Core(class), function, argument, value, detail)
    }

    /// A failed system call on `path`: the class follows the OS error, and the message
    /// names the call and the OS error.
    pub fn os(function: &str, what: &str, path: &str, e: &io::Error) -> IoError {
        let class = match e.raw_os_error() {
            Some(libc::ENOENT) | Some(libc::ENOTDIR) => FileClass::NoSuchFile,
            Some(libc::EEXIST) => FileClass::FileExists,
            Some(libc::EACCES) | Some(libc::EPERM) => FileClass::Access,
            Some(libc::EROFS) => FileClass::ReadOnly,
            Some(libc::ENOSPC) | Some(libc::EFBIG) => FileClass::NoSpace,
            Some(libc::EDQUOT) => FileClass::Quota,
            Some(libc::ETXTBSY) | Some(libc::EBUSY) => FileClass::FileInUse,
            _ => FileClass::Io,
        };
        IoError::file(class, function, "filename", path, format!("{what}: {e}"))
    }

    /// A user function of `kind` failed with the application's error `code` (of class
    /// `class`), which the call returns.
    pub fn user_code(class: Class, function: &str, kind: &str, code: i32) -> IoError {
        IoError {
            code: Some(code),
            ..IoError::arg(
                class,
                function,
                kind,
                code,
                "the application's function returned this error code",
            )
        }
    }

    /// The core class nearest to this error's class, for layers that only know the
    /// core's classes.
    pub fn nearest_core_class(&self) -> ErrorClass {
        match self.class {
            Class::Core(c) => c,
            // The same class number.
            Class::File(FileClass::UnsupportedOperation) => ErrorClass::Unsupported,
            Class::File(_) => ErrorClass::Other,
        }
    }
}

impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<MpiError> for IoError {
    fn from(e: MpiError) -> IoError {
        IoError {
            class: Class::Core(e.class),
            message: e.message,
            code: None,
        }
    }
}

/// A datatype engine error reported under the MPI call the application made.
pub fn type_error(function: &str, e: TypeError) -> IoError {
    let class = match e.kind {
        ErrorKind::Argument => ErrorClass::Arg,
        ErrorKind::Overflow => ErrorClass::Count,
        ErrorKind::Truncate => ErrorClass::Truncate,
        ErrorKind::Conversion => ErrorClass::Conversion,
    };
    IoError::core(class, function, e.argument, e.value, e.reason)
}
