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

    /// Calls `copy(buffer index, stream index, length)` for each contiguous run holding
    /// stream bytes `[offset, offset + len)`, in stream order.
    #[allow(clippy::too_many_arguments)] // pack and unpack pass their arguments through
    fn for_each_run(
        &self,
        function: &str,
        buf_len: usize,
        origin: isize,
        count: u64,
        offset: u64,
        len: usize,
        mut copy: impl FnMut(usize, usize, usize),
    ) {
        self.check_bounds(function, buf_len, origin, count, offset, len);
        if len == 0 {
            return;
        }
        let mut done = 0;
        self.layout_of(count)
            .walk(origin as i64, offset, &mut |at, run| {
                let n = (run as usize).min(len - done);
                copy(at as usize, done, n);
                done += n;
                done < len
            });
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
        let len = out.len();
        self.for_each_run(
            "Datatype::pack",
            buf.len(),
            origin,
            count,
            offset,
            len,
            |at, done, n| copy_run(&mut out[done..done + n], &buf[at..at + n]),
        );
    }

    /// The inverse of `pack`: writes stream bytes `[offset, offset + input.len())` into `buf`.
    pub fn unpack(&self, input: &[u8], buf: &mut [u8], origin: usize, count: u64, offset: u64) {
        self.unpack_at(input, buf, origin as isize, count, offset)
    }

    /// As `unpack`, with an origin that may lie before the buffer (see `pack_at`).
    pub fn unpack_at(&self, input: &[u8], buf: &mut [u8], origin: isize, count: u64, offset: u64) {
        let buf_len = buf.len();
        self.for_each_run(
            "Datatype::unpack",
            buf_len,
            origin,
            count,
            offset,
            input.len(),
            |at, done, n| copy_run(&mut buf[at..at + n], &input[done..done + n]),
        );
    }
}

/// Copies one run. Runs of the common element sizes are copied as fixed-size values
/// (a register move) instead of through a memcpy call, which for 8-byte blocks costs
/// more than the copy itself.
#[inline(always)]
fn copy_run(dst: &mut [u8], src: &[u8]) {
    fn fixed<const N: usize>(dst: &mut [u8], src: &[u8]) {
        let value: [u8; N] = src.try_into().unwrap_or([0; N]);
        dst.copy_from_slice(&value);
    }
    match src.len() {
        4 => fixed::<4>(dst, src),
        8 => fixed::<8>(dst, src),
        16 => fixed::<16>(dst, src),
        _ => dst.copy_from_slice(src),
    }
}
