//! Handles: the integer values `MPI_Comm`, `MPI_Request`, ... carry across the C ABI.
//!
//! Predefined handles have the standard's small values (all below 0x400). Handles
//! crossmpi creates are `USER | kind << 24 | slot`: never equal to a predefined value,
//! positive when read as a Fortran `INTEGER` (so Fortran conversion is the identity), and
//! decoded to a table slot in O(1).

use crate::consts;
use std::os::raw::c_int;

const USER: usize = 1 << 30;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Comm = 1,
    Group = 2,
    Datatype = 3,
    Op = 4,
    Request = 5,
    Info = 6,
    Errhandler = 7,
    Message = 8,
    File = 10,
    Win = 11,
}

pub fn encode(kind: Kind, slot: u32) -> usize {
    debug_assert!(slot < 1 << 24);
    USER | (kind as usize) << 24 | slot as usize
}

/// The slot of a handle crossmpi created of `kind`, if `handle` is one.
pub fn decode(kind: Kind, handle: usize) -> Option<u32> {
    (handle & !(USER | 0x3fff_ffff) == 0
        && handle & USER != 0
        && (handle >> 24) & 0x3f == kind as usize)
        .then_some((handle & 0xff_ffff) as u32)
}

/// How a handle is shown in error messages: the predefined name if it has one.
pub fn describe(handle: usize) -> String {
    if handle == 0 {
        return "NULL".into();
    }
    consts::HANDLE_CONSTANTS
        .iter()
        .find(|(name, value)| {
            *value == handle && name.starts_with("MPI_") && !name.ends_with("_IGNORE")
        })
        .map(|(name, _)| name.to_string())
        .unwrap_or_else(|| format!("{handle:#x}"))
}

/// `MPI_Status` of the MPI-5.0 ABI: three public fields and five words of ours
/// (received bytes in words 0-1, the cancelled flag in word 2).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MpiStatus {
    pub source: c_int,
    pub tag: c_int,
    pub error: c_int,
    pub internal: [c_int; 5],
}

impl MpiStatus {
    pub fn from_core(s: &crossmpi_core::request::Status) -> MpiStatus {
        MpiStatus {
            source: s.source,
            tag: s.tag,
            error: s.error,
            internal: [
                s.bytes as u32 as c_int,
                (s.bytes >> 32) as u32 as c_int,
                s.cancelled as c_int,
                0,
                0,
            ],
        }
    }

    pub fn bytes(&self) -> u64 {
        self.internal[0] as u32 as u64 | (self.internal[1] as u32 as u64) << 32
    }

    pub fn cancelled(&self) -> bool {
        self.internal[2] != 0
    }
}

/// Writes a status unless the caller passed `MPI_STATUS_IGNORE`. The `MPI_ERROR` field is
/// left as it was: only the multiple-completion calls set it.
pub fn store_status(out: *mut MpiStatus, s: &crossmpi_core::request::Status) {
    if out.is_null() {
        return;
    }
    // SAFETY: a non-null status pointer points to an MPI_Status the caller owns (C ABI
    // contract of every function taking MPI_Status*).
    let out = unsafe { &mut *out };
    let error = out.error;
    *out = MpiStatus::from_core(s);
    out.error = error;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_handles_never_collide_with_predefined_ones() {
        let h = encode(Kind::Request, 5);
        assert_eq!(decode(Kind::Request, h), Some(5));
        assert_eq!(decode(Kind::Comm, h), None);
        assert_eq!(decode(Kind::Comm, consts::MPI_COMM_WORLD), None);
        assert!(h > 0x3ff && (h as i64) < i32::MAX as i64);
        assert_eq!(describe(consts::MPI_COMM_WORLD), "MPI_COMM_WORLD");
        assert_eq!(describe(0x12345), "0x12345");
    }

    #[test]
    fn status_keeps_the_byte_count_and_the_error_field() {
        let s = crossmpi_core::request::Status {
            source: 3,
            tag: 9,
            error: 15,
            bytes: 1 << 33,
            cancelled: true,
        };
        let mut out = MpiStatus {
            error: 77,
            ..MpiStatus::default()
        };
        store_status(&mut out, &s);
        assert_eq!(
            (out.source, out.tag, out.error, out.bytes(), out.cancelled()),
            (3, 9, 77, 1 << 33, true)
        );
        assert_eq!(std::mem::size_of::<MpiStatus>(), 32);
    }
}
