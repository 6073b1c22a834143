//! User buffers: memory the application lends to an MPI call, possibly beyond its return
//! (nonblocking operations).
//!
//! This is the one place where the core touches application memory. A `UserBuf` records
//! an address and the byte range a datatype and count cover around it; the MPI standard
//! makes the application keep that memory valid and untouched (for receives) until the
//! operation completes, which is what makes materialising the slices sound.

use crossmpi_datatype::{Basic, Datatype};

/// `len` plain bytes at `addr` (internal buffers: collectives, buffered sends).
pub fn bytes(addr: usize, len: usize) -> UserBuf {
    dense(addr, len as u64, Basic::Byte)
}

/// `count` elements of predefined type `basic` at `addr`, for a type whose elements lie
/// dense (extent = size, no holes: the caller checks). The byte range is then the
/// length itself, which [`UserBuf::new`] would compute from the layout of any type;
/// the small calls of the light paths build several of these.
pub fn dense(addr: usize, count: u64, basic: Basic) -> UserBuf {
    let dtype = Datatype::basic(basic);
    let hi = dtype.size().saturating_mul(count).min(i64::MAX as u64) as i64;
    UserBuf {
        addr,
        count,
        dtype,
        lo: 0,
        hi,
    }
}

/// A typed buffer: `count` elements of `dtype` at address `addr`.
#[derive(Clone)]
pub struct UserBuf {
    pub addr: usize,
    pub count: u64,
    pub dtype: Datatype,
    /// Byte range [lo, hi) relative to `addr` that the elements touch.
    lo: i64,
    hi: i64,
}

/// The byte range, relative to the buffer's address, that `count` elements of `dtype`
/// occupy: (lowest, one past the highest); (0, 0) for no data.
pub fn data_span(count: u64, dtype: &Datatype) -> (i64, i64) {
    if count == 0 || dtype.size() == 0 {
        (0, 0)
    } else {
        dtype.span(count)
    }
}

impl UserBuf {
    pub fn new(addr: usize, count: u64, dtype: Datatype) -> UserBuf {
        let (lo, hi) = data_span(count, &dtype);
        UserBuf {
            addr,
            count,
            dtype,
            lo,
            hi,
        }
    }

    /// The lowest address the data touches.
    pub fn first_address(&self) -> usize {
        (self.addr as i64 + self.lo) as usize
    }

    /// The addresses the data touches, gaps between its elements included.
    pub fn address_range(&self) -> std::ops::Range<usize> {
        let first = self.first_address();
        first..first + (self.hi - self.lo) as usize
    }

    /// Bytes of data (the packed size).
    pub fn bytes(&self) -> u64 {
        self.dtype.size() * self.count
    }

    /// True when the data is one dense run starting at `addr`.
    pub fn is_contiguous(&self) -> bool {
        self.dtype.is_contiguous() && self.lo == 0
    }

    fn span_len(&self) -> usize {
        (self.hi - self.lo) as usize
    }

    /// The memory the buffer covers, for reading, and the index of `addr` in it.
    pub fn read(&self) -> (&[u8], usize) {
        if self.span_len() == 0 {
            return (&[], 0);
        }
        let start = (self.addr as i64 + self.lo) as usize;
        // SAFETY: the application guarantees (MPI standard, buffer rules) that the memory
        // described by addr/count/datatype is valid for the duration of the operation;
        // [lo, hi) is exactly the range the datatype touches.
        let s = unsafe { std::slice::from_raw_parts(start as *const u8, self.span_len()) };
        (s, (-self.lo) as usize)
    }

    /// The memory the buffer covers, for writing, and the index of `addr` in it.
    #[allow(clippy::mut_from_ref)]
    pub fn write(&self) -> (&mut [u8], usize) {
        if self.span_len() == 0 {
            return (&mut [], 0);
        }
        let start = (self.addr as i64 + self.lo) as usize;
        // SAFETY: as for `read`; a receive buffer belongs to the MPI operation until it
        // completes, and the runtime writes each receive buffer from one place at a time.
        let s = unsafe { std::slice::from_raw_parts_mut(start as *mut u8, self.span_len()) };
        (s, (-self.lo) as usize)
    }

    /// Copies packed bytes [offset, offset + out.len()) of the data into `out`.
    pub fn pack_into(&self, offset: u64, out: &mut [u8]) {
        if out.is_empty() {
            return;
        }
        let (mem, origin) = self.read();
        if self.is_contiguous() {
            let o = offset as usize;
            out.copy_from_slice(&mem[o..o + out.len()]);
        } else {
            self.dtype.pack(mem, origin, self.count, offset, out);
        }
    }

    /// Stores packed bytes `input` at stream position `offset`.
    pub fn unpack_from(&self, offset: u64, input: &[u8]) {
        if input.is_empty() {
            return;
        }
        let (mem, origin) = self.write();
        if self.is_contiguous() {
            let o = offset as usize;
            mem[o..o + input.len()].copy_from_slice(input);
        } else {
            self.dtype.unpack(input, mem, origin, self.count, offset);
        }
    }

    /// The contiguous destination bytes [offset, offset+len), when the buffer is dense.
    #[allow(clippy::mut_from_ref)]
    pub fn dense_mut(&self, offset: u64, len: usize) -> Option<&mut [u8]> {
        if !self.is_contiguous() {
            return None;
        }
        let (mem, _) = self.write();
        let o = offset as usize;
        Some(&mut mem[o..o + len])
    }

    /// The contiguous source bytes [offset, offset+len), when the buffer is dense.
    pub fn dense(&self, offset: u64, len: usize) -> Option<&[u8]> {
        if !self.is_contiguous() {
            return None;
        }
        let (mem, _) = self.read();
        let o = offset as usize;
        Some(&mem[o..o + len])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_buffer_covers_what_the_general_constructor_computes() {
        for len in [0usize, 1, 8, 4096] {
            let quick = bytes(0x1000, len);
            let general = UserBuf::new(0x1000, len as u64, Datatype::basic(Basic::Byte));
            assert_eq!(
                (quick.lo, quick.hi),
                (general.lo, general.hi),
                "{len} bytes"
            );
            assert_eq!(quick.bytes(), general.bytes());
            assert!(quick.is_contiguous());
        }
    }
}
