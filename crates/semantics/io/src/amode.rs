//! Access modes of `MPI_File_open` (the MPI-5.0 ABI's `MPI_MODE_*` values) and their
//! rules.

use crate::error::{FileClass, IoError, IoResult};

pub const APPEND: i32 = 1;
pub const CREATE: i32 = 2;
pub const DELETE_ON_CLOSE: i32 = 4;
pub const EXCL: i32 = 8;
pub const RDONLY: i32 = 16;
pub const RDWR: i32 = 32;
pub const SEQUENTIAL: i32 = 64;
pub const UNIQUE_OPEN: i32 = 128;
pub const WRONLY: i32 = 256;

const ALL: i32 =
    APPEND | CREATE | DELETE_ON_CLOSE | EXCL | RDONLY | RDWR | SEQUENTIAL | UNIQUE_OPEN | WRONLY;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Amode(pub i32);

impl Amode {
    /// Checks the standard's rules: exactly one of RDONLY, RDWR and WRONLY; no CREATE or
    /// EXCL with RDONLY; no SEQUENTIAL with RDWR; no unknown bits.
    pub fn parse(function: &str, amode: i32) -> IoResult<Amode> {
        let bad = |why: &str| IoError::file(FileClass::Amode, function, "amode", amode, why);
        if amode & !ALL != 0 {
            return Err(bad("has bits that are no MPI_MODE_* value"));
        }
        let access = [RDONLY, RDWR, WRONLY]
            .iter()
            .filter(|&&m| amode & m != 0)
            .count();
        if access != 1 {
            return Err(bad(
                "exactly one of MPI_MODE_RDONLY, MPI_MODE_RDWR and MPI_MODE_WRONLY is required",
            ));
        }
        if amode & RDONLY != 0 && amode & (CREATE | EXCL) != 0 {
            return Err(bad(
                "MPI_MODE_CREATE and MPI_MODE_EXCL are not allowed with MPI_MODE_RDONLY",
            ));
        }
        if amode & RDWR != 0 && amode & SEQUENTIAL != 0 {
            return Err(bad("MPI_MODE_SEQUENTIAL is not allowed with MPI_MODE_RDWR"));
        }
        Ok(Amode(amode))
    }

    pub fn has(self, bit: i32) -> bool {
        self.0 & bit != 0
    }

    pub fn readable(self) -> bool {
        !self.has(WRONLY)
    }

    pub fn writable(self) -> bool {
        !self.has(RDONLY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standard_rules() {
        assert!(Amode::parse("f", RDWR | CREATE).is_ok());
        assert!(Amode::parse("f", WRONLY | SEQUENTIAL | APPEND).is_ok());
        for bad in [
            0,
            RDONLY | RDWR,
            RDONLY | CREATE,
            RDONLY | EXCL,
            RDWR | SEQUENTIAL,
            1 << 12,
        ] {
            let e = Amode::parse("MPI_File_open", bad).unwrap_err();
            assert_eq!(e.class.code(), 21, "{bad}");
            assert!(e.message.contains("MPI_File_open") && e.message.contains("amode"));
        }
        assert!(!Amode(WRONLY).readable() && Amode(WRONLY).writable());
    }
}
