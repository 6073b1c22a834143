//! User data crossing clusters travels in MPI's "external32" representation (IMPI
//! requires it), so clusters of different byte order or type sizes interoperate.
//!
//! A send to an IMPI peer is converted whole when it starts, into a staging buffer the
//! protocols then send as plain bytes. A receive matched with a message from an IMPI peer
//! gets a staging buffer the protocols fill (directly, like any dense buffer), and is
//! converted into the user's buffer when it completes. Data of one-byte types
//! (`MPI_BYTE`, `MPI_CHAR`, ...) is the same in both forms and is never staged.

use crate::userbuf::{self, UserBuf};
use crossmpi_datatype::Datatype;

/// True when the data of `dtype` must be converted to cross clusters.
pub fn needs_conversion(dtype: &Datatype) -> bool {
    match dtype.uniform_basic() {
        Some(b) => !(b.size() == 1 && b.external32_size() == 1),
        None => dtype.size() > 0,
    }
}

/// A staging buffer standing in for a user buffer.
pub struct Staged {
    /// The user's buffer.
    pub user: UserBuf,
    /// The external32 bytes; the request's buffer points into them, so they are never
    /// resized while it exists.
    pub bytes: Vec<u8>,
}

impl Staged {
    /// A buffer over the staged bytes.
    pub fn view(&self) -> UserBuf {
        userbuf::bytes(self.bytes.as_ptr() as usize, self.bytes.len())
    }
}

/// Converts a send buffer whole; an error names the element that does not fit.
pub fn stage_send(user: &UserBuf) -> Result<Staged, String> {
    let mut bytes = vec![0u8; user.dtype.external32_size(user.count) as usize];
    let (mem, origin) = user.read();
    user.dtype
        .pack_external32(mem, origin, user.count, &mut bytes)
        .map_err(|e| e.to_string())?;
    Ok(Staged {
        user: user.clone(),
        bytes,
    })
}

/// A staging buffer for a receive into `user` (its capacity in external32 bytes).
pub fn stage_recv(user: &UserBuf) -> Staged {
    Staged {
        user: user.clone(),
        bytes: vec![0u8; user.dtype.external32_size(user.count) as usize],
    }
}

/// Converts the `received` external32 bytes of a staged receive into the user's buffer;
/// returns the native byte count for the status (partial elements included, as MPI's
/// element counts need).
pub fn unstage_recv(s: &Staged, received: u64) -> u64 {
    let (mem, origin) = s.user.write();
    let input = &s.bytes[..(received as usize).min(s.bytes.len())];
    s.user
        .dtype
        .unpack_external32_prefix(input, mem, origin, s.user.count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossmpi_datatype::Basic;

    #[test]
    fn doubles_cross_big_endian_and_come_back() {
        let src = [1.5f64, -2.25, 1e300];
        let dt = Datatype::basic(Basic::Double);
        assert!(needs_conversion(&dt));
        assert!(!needs_conversion(&Datatype::basic(Basic::Byte)));
        let send = UserBuf::new(src.as_ptr() as usize, 3, dt.clone());
        let staged = stage_send(&send).unwrap();
        assert_eq!(&staged.bytes[..8], &1.5f64.to_be_bytes());
        let mut dst = [0f64; 3];
        let recv = stage_recv(&UserBuf::new(dst.as_mut_ptr() as usize, 3, dt));
        let mut r = recv;
        r.bytes.copy_from_slice(&staged.bytes);
        assert_eq!(unstage_recv(&r, 24), 24);
        assert_eq!(dst, src);
    }

    #[test]
    fn a_long_travels_in_four_bytes_and_a_short_message_fills_part() {
        let src: [i64; 2] = [7, -9];
        let dt = Datatype::basic(Basic::Long);
        let staged = stage_send(&UserBuf::new(src.as_ptr() as usize, 2, dt.clone())).unwrap();
        assert_eq!(staged.bytes, vec![0, 0, 0, 7, 0xff, 0xff, 0xff, 0xf7]);
        let mut dst = [0i64; 4];
        let mut r = stage_recv(&UserBuf::new(dst.as_mut_ptr() as usize, 4, dt));
        assert_eq!(r.bytes.len(), 16);
        r.bytes[..8].copy_from_slice(&staged.bytes);
        assert_eq!(unstage_recv(&r, 8), 16);
        assert_eq!(dst, [7, -9, 0, 0]);
        // A value beyond 32 bits cannot travel as an external32 long.
        let big = [1i64 << 40];
        let err = stage_send(&UserBuf::new(
            big.as_ptr() as usize,
            1,
            Datatype::basic(Basic::Long),
        ));
        assert!(err.is_err());
    }
}
