//! MPI error classes and the error values the runtime returns.
//!
//! The numeric classes are those of the MPI-5.0 standard ABI (the ABI crate checks them
//! against mpi.h). Every error carries a message naming the MPI function, the argument
//! and the offending value, which `MPI_Error_string` later returns.

use std::fmt;

/// The standard error classes crossmpi raises (values of the MPI-5.0 ABI).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ErrorClass {
    Buffer = 1,
    Count = 2,
    Type = 3,
    Tag = 4,
    Comm = 5,
    Rank = 6,
    Request = 7,
    Root = 8,
    Group = 9,
    Op = 10,
    Topology = 11,
    Dims = 12,
    Arg = 13,
    Unknown = 14,
    Truncate = 15,
    Other = 16,
    Intern = 17,
    Conversion = 25,
    Pending = 18,
    InStatus = 19,
    Info = 34,
    InfoKey = 31,
    InfoNokey = 32,
    InfoValue = 33,
    Keyval = 36,
    Name = 38,
    NoMem = 39,
    Port = 43,
    Service = 51,
    Spawn = 53,
    Unsupported = 55,
    ProcAborted = 58,
    Session = 60,
    Errhandler = 61,
    // One-sided communication (crossmpi-core's rma module).
    Assert = 22,
    Base = 24,
    Disp = 26,
    LockType = 37,
    RmaAttach = 46,
    RmaRange = 48,
    RmaShared = 49,
    RmaSync = 50,
    Size = 52,
    Win = 56,
    RmaFlavor = 57,
}

impl ErrorClass {
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The standard's short description of the class.
    pub fn describe(self) -> &'static str {
        match self {
            ErrorClass::Buffer => "invalid buffer pointer",
            ErrorClass::Count => "invalid count argument",
            ErrorClass::Type => "invalid datatype",
            ErrorClass::Tag => "invalid tag",
            ErrorClass::Comm => "invalid communicator",
            ErrorClass::Rank => "invalid rank",
            ErrorClass::Request => "invalid request",
            ErrorClass::Root => "invalid root",
            ErrorClass::Group => "invalid group",
            ErrorClass::Op => "invalid operation",
            ErrorClass::Topology => "invalid topology",
            ErrorClass::Dims => "invalid dimension argument",
            ErrorClass::Arg => "invalid argument",
            ErrorClass::Unknown => "unknown error",
            ErrorClass::Truncate => "message truncated",
            ErrorClass::Other => "other error",
            ErrorClass::Intern => "internal error",
            ErrorClass::Conversion => "value not representable in the data representation",
            ErrorClass::Pending => "pending request",
            ErrorClass::InStatus => "error code in status",
            ErrorClass::Info => "invalid info object",
            ErrorClass::InfoKey => "invalid info key",
            ErrorClass::InfoNokey => "info key not defined",
            ErrorClass::InfoValue => "invalid info value",
            ErrorClass::Keyval => "invalid attribute key",
            ErrorClass::Name => "invalid service name",
            ErrorClass::NoMem => "out of memory",
            ErrorClass::Port => "invalid port name",
            ErrorClass::Service => "invalid service name (not published)",
            ErrorClass::Spawn => "cannot spawn processes",
            ErrorClass::Unsupported => "unsupported operation",
            ErrorClass::ProcAborted => "a peer process aborted",
            ErrorClass::Session => "invalid session",
            ErrorClass::Errhandler => "invalid error handler",
            ErrorClass::Assert => "invalid assert argument",
            ErrorClass::Base => "invalid base argument",
            ErrorClass::Disp => "invalid displacement argument",
            ErrorClass::LockType => "invalid lock type",
            ErrorClass::RmaAttach => "memory cannot be attached",
            ErrorClass::RmaRange => "target memory outside the window",
            ErrorClass::RmaShared => "memory cannot be shared",
            ErrorClass::RmaSync => "wrong synchronization of one-sided calls",
            ErrorClass::Size => "invalid size argument",
            ErrorClass::Win => "invalid window",
            ErrorClass::RmaFlavor => "wrong window flavor",
        }
    }
}

/// An error raised by an MPI call: its class and a message for `MPI_Error_string`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MpiError {
    pub class: ErrorClass,
    pub message: String,
    /// The code the call returns instead of a new code of `class`: an application
    /// callback's own error code, which the standard has the call pass on.
    pub code: Option<i32>,
}

impl MpiError {
    pub fn new(class: ErrorClass, message: impl Into<String>) -> MpiError {
        MpiError {
            class,
            message: message.into(),
            code: None,
        }
    }

    /// The same error, returned as the application's code `code`.
    pub fn returning(self, code: i32) -> MpiError {
        MpiError {
            code: Some(code),
            ..self
        }
    }

    /// `FUNCTION: class description: argument NAME = VALUE (detail)`.
    pub fn arg(
        class: ErrorClass,
        function: &str,
        argument: &str,
        value: impl fmt::Display,
        detail: impl fmt::Display,
    ) -> MpiError {
        let detail = detail.to_string();
        let tail = if detail.is_empty() {
            String::new()
        } else {
            format!(" ({detail})")
        };
        MpiError::new(
            class,
            format!(
                "{function}: {}: argument {argument} = {value}{tail}",
                class.describe()
            ),
        )
    }

    /// Prefixes the message with the MPI function when an internal step failed.
    pub fn context(class: ErrorClass, function: &str, what: impl fmt::Display) -> MpiError {
        MpiError::new(class, format!("{function}: {}: {what}", class.describe()))
    }
}

impl fmt::Display for MpiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for MpiError {}

pub type MpiResult<T> = Result<T, MpiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_errors_name_function_argument_and_value() {
        let e = MpiError::arg(
            ErrorClass::Rank,
            "MPI_Send",
            "dest",
            7,
            "communicator size 4",
        );
        assert_eq!(e.class.code(), 6);
        assert_eq!(
            e.message,
            "MPI_Send: invalid rank: argument dest = 7 (communicator size 4)"
        );
        let e = MpiError::arg(ErrorClass::Tag, "MPI_Recv", "tag", -5, "");
        assert_eq!(e.message, "MPI_Recv: invalid tag: argument tag = -5");
    }
}
