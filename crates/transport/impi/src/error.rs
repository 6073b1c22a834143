//! The one error type of the crate: every decoder and state machine returns it instead of
//! panicking, and its text names the function or field, the offending value and the rule.

use std::fmt;

/// Why bytes or an operation were rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// Fewer bytes than the structure needs (`what`: the structure being read).
    Truncated {
        what: &'static str,
        need: usize,
        got: usize,
    },
    /// A command word that is none of AUTH, IMPI, COLL, DONE, FINI.
    UnknownCommand(u32),
    /// A COLL label that is not in the IMPI label table.
    UnknownLabel(u32),
    /// A packet type outside 0..=7.
    UnknownPacketType(u32),
    /// A length above the configured bound (checked before any allocation).
    TooLong {
        what: &'static str,
        len: u64,
        max: u64,
    },
    /// A length that disagrees with what the field or label requires.
    BadLength {
        what: &'static str,
        len: u64,
        expected: String,
    },
    /// A number outside its allowed range (`what`: the field, `allowed`: the range).
    OutOfRange {
        what: &'static str,
        value: i64,
        allowed: String,
    },
    /// A well-formed value that breaks a protocol rule.
    Invalid { what: &'static str, reason: String },
    /// A message that is valid but not allowed in the current protocol state.
    Unexpected { state: &'static str, got: String },
    /// The peer closed the connection.
    Closed { state: &'static str },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Truncated { what, need, got } => {
                write!(f, "{what}: truncated: needs {need} bytes, got {got}")
            }
            Error::UnknownCommand(c) => write!(
                f,
                "IMPI command header: unknown command 0x{c:08x} ({})",
                printable(*c)
            ),
            Error::UnknownLabel(l) => write!(f, "IMPI COLL: unknown label 0x{l:04x}"),
            Error::UnknownPacketType(t) => {
                write!(
                    f,
                    "IMPI packet header: pk_type {t} is not a known packet type (0..=7)"
                )
            }
            Error::TooLong { what, len, max } => write!(
                f,
                "{what}: length {len} exceeds the bound {max} (CROSSMPI_IMPI_MAX_MSG)"
            ),
            Error::BadLength {
                what,
                len,
                expected,
            } => write!(f, "{what}: length {len} is wrong, expected {expected}"),
            Error::OutOfRange {
                what,
                value,
                allowed,
            } => write!(f, "{what}: value {value} is out of range ({allowed})"),
            Error::Invalid { what, reason } => write!(f, "{what}: {reason}"),
            Error::Unexpected { state, got } => {
                write!(f, "unexpected {got} while {state}")
            }
            Error::Closed { state } => write!(f, "connection closed by the peer while {state}"),
        }
    }
}

impl std::error::Error for Error {}

/// A command word shown as its four ASCII letters when it is printable.
fn printable(word: u32) -> String {
    let bytes = word.to_be_bytes();
    if bytes.iter().all(|b| b.is_ascii_graphic()) {
        format!("'{}'", String::from_utf8_lossy(&bytes))
    } else {
        "not ASCII".to_string()
    }
}

/// Result with the crate's error.
pub type Result<T> = std::result::Result<T, Error>;
