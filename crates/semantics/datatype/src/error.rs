//! The error every fallible datatype function returns.

use std::fmt;

/// What went wrong, so the MPI layer can choose the error class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// An argument is invalid (MPI_ERR_ARG, MPI_ERR_DIMS, ...).
    Argument,
    /// A size, extent or displacement does not fit in 64 bits (MPI_ERR_COUNT / MPI_ERR_TYPE).
    Overflow,
    /// A value cannot be represented in `external32` (MPI_ERR_CONVERSION).
    Conversion,
    /// A buffer is too short for the data (MPI_ERR_TRUNCATE).
    Truncate,
}

/// A rejected call: names the function, the argument and the offending value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeError {
    pub kind: ErrorKind,
    pub function: &'static str,
    pub argument: &'static str,
    pub value: String,
    pub reason: String,
}

impl TypeError {
    pub(crate) fn new(
        kind: ErrorKind,
        function: &'static str,
        argument: &'static str,
        value: impl fmt::Display,
        reason: impl Into<String>,
    ) -> TypeError {
        TypeError {
            kind,
            function,
            argument,
            value: value.to_string(),
            reason: reason.into(),
        }
    }

    pub(crate) fn overflow(
        function: &'static str,
        argument: &'static str,
        value: impl fmt::Display,
    ) -> TypeError {
        TypeError::new(
            ErrorKind::Overflow,
            function,
            argument,
            value,
            "the resulting size, extent or bounds do not fit in 64 bits",
        )
    }
}

impl fmt::Display for TypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} = {}: {}",
            self.function, self.argument, self.value, self.reason
        )
    }
}

impl std::error::Error for TypeError {}
