//! Moving data between a user buffer described by a datatype and a contiguous packed
//! stream, whole or any byte range of it (for pipelined fragments of large messages).
//! Each contiguous run is one `copy_from_slice` (a memcpy); a contiguous type is one
//! copy in all.

use crate::datatype::Datatype;
use crate::layout::Node;

impl Datatype {
    /// The layout of `count` elements placed at the buffer address.
    fn layout_of(&self, count: u64) -> Node {
        self.layout().repeat(count, self.extent())
    }

    /// Panics (a caller bug, not bad user input: the MPI layer sizes `buf` from `span`)
    /// unless `buf` holds the span of `count` elements around `origin` and the stream
    /// range `[offset, offset + len)` lies within the packed size.
    fn check_bounds(
        &self,
        function: &str,
        buf_len: usize,
        origin: isize,
        count: u64,
        offset: u64,
        len: usize,
    ) {
        let (lo, hi) = self.span(count);
        let origin = origin as i128;
        assert!(
            len == 0 || (origin + lo as i128 >= 0 && origin + hi as i128 <= buf_len as i128),
            "{function}: buffer of {buf_len} bytes with origin {origin} does not hold the span [{lo}, {hi}) of {count} elements"
        );
        let end = offset as u128 + len as u128;
        assert!(
            end <= self.packed_size(count) as u128,
            "{function}: stream range [{offset}, {end}) exceeds the packed size {} of {count} elements",
            self.packed_size(count)
        );
    }

    /// Packs bytes `[offset, offset + out.len())` of the packed stream of `count`
    /// elements whose base address is index `origin` of `buf`.
    pub fn pack(&self, buf: &[u8], origin: usize, count: u64, offset: u64, out: &mut [u8]) {
        self.pack_at(buf, origin as isize, count, offset, out)
    }

    /// As `pack`, with an origin that may lie before the buffer: with MPI_BOTTOM and
    /// absolute displacements the base address (0) is far below the data, so the MPI
    /// layer passes the slice of addresses `[span.0, span.1)` and origin `-span.0`.
    pub fn pack_at(&self, buf: &[u8], origin: isize, count: u64, offset: u64, out: &mut [u8]) {
        self.check_bounds(
            "Datatype::pack",
            buf.len(),
            origin,
            count,
            offset,
            out.len(),
        );
        if out.is_empty() {
            return;
        }
        let mut done = 0;
        self.layout_of(count)
            .walk(origin as i64, offset, &mut |at, len| {
                let n = (len as usize).min(out.len() - done);
                let at = at as usize;
                out[done..done + n].copy_from_slice(&buf[at..at + n]);
                done += n;
                done < out.len()
            });
    }

    /// The inverse of `pack`: writes stream bytes `[offset, offset + input.len())` into `buf`.
    pub fn unpack(&self, input: &[u8], buf: &mut [u8], origin: usize, count: u64, offset: u64) {
        self.unpack_at(input, buf, origin as isize, count, offset)
    }

    /// As `unpack`, with an origin that may lie before the buffer (see `pack_at`).
    pub fn unpack_at(&self, input: &[u8], buf: &mut [u8], origin: isize, count: u64, offset: u64) {
        self.check_bounds(
            "Datatype::unpack",
            buf.len(),
            origin,
            count,
            offset,
            input.len(),
        );
        if input.is_empty() {
            return;
        }
        let mut done = 0;
        self.layout_of(count)
            .walk(origin as i64, offset, &mut |at, len| {
                let n = (len as usize).min(input.len() - done);
                let at = at as usize;
                buf[at..at + n].copy_from_slice(&input[done..done + n]);
                done += n;
                done < input.len()
            });
    }
}
