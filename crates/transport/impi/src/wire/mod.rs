//! IMPI wire formats, one file per format, each in two levels (as smoltcp does): a view
//! over bytes that checks only what it needs to stay in bounds and never panics, and a
//! typed representation parsed from it with full validation and emitted back.

pub mod addr;
pub mod cmd;
pub mod handshake;
pub mod label;
pub mod packet;
pub mod startup;
pub mod tables;

use crate::error::{Error, Result};

/// "All integral values are in two's complement big-endian format" (IMPI draft §1.4).
/// These helpers read fields at fixed offsets of a buffer already checked long enough;
/// they return an error instead of panicking when a caller got that wrong.
pub(crate) fn be_u32(buf: &[u8], at: usize) -> Result<u32> {
    field::<4>(buf, at).map(u32::from_be_bytes)
}

pub(crate) fn be_u64(buf: &[u8], at: usize) -> Result<u64> {
    field::<8>(buf, at).map(u64::from_be_bytes)
}

pub(crate) fn field<const N: usize>(buf: &[u8], at: usize) -> Result<[u8; N]> {
    buf.get(at..at.saturating_add(N))
        .and_then(|s| <[u8; N]>::try_from(s).ok())
        .ok_or(Error::Truncated {
            what: "IMPI field",
            need: at.saturating_add(N),
            got: buf.len(),
        })
}

/// Bounds that protect a decoder from hostile lengths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest payload of one startup message, in either direction.
    pub max_msg: u32,
}

impl Limits {
    /// Default of `CROSSMPI_IMPI_MAX_MSG`: 16 MiB holds the largest legal reply with room
    /// to spare (32 clients × 4096 procs × 16-byte P_IPV6 is 2 MiB) while keeping a
    /// hostile length from making the server allocate gigabytes.
    pub const DEFAULT_MAX_MSG: u32 = 16 << 20;

    /// Limits from `CROSSMPI_IMPI_MAX_MSG` (bytes), or the default when it is unset.
    pub fn from_env() -> Result<Limits> {
        Limits::from_var(std::env::var("CROSSMPI_IMPI_MAX_MSG").ok().as_deref())
    }

    /// Limits from the value of `CROSSMPI_IMPI_MAX_MSG`, if set.
    pub fn from_var(value: Option<&str>) -> Result<Limits> {
        let Some(v) = value else {
            return Ok(Limits::default());
        };
        match v.trim().parse::<u32>() {
            Ok(n) if (8..=i32::MAX as u32).contains(&n) => Ok(Limits { max_msg: n }),
            _ => Err(Error::Invalid {
                what: "CROSSMPI_IMPI_MAX_MSG",
                reason: format!("'{v}' is not a byte count in 8..=2147483647"),
            }),
        }
    }
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_msg: Limits::DEFAULT_MAX_MSG,
        }
    }
}
