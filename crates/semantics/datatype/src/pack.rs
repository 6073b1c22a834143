//! Moving data between a user buffer described by a datatype and a contiguous packed
//! stream, whole or any byte range of it (for pipelined fragments of large messages).
//! A contiguous type is one memcpy in all. Regularly strided blocks of 1, 2, 4, 8 or 16
//! bytes (a vector of one basic element per block, a matrix column) are moved by one
//! loop of fixed-size loads and stores; other short runs by at most two overlapping
//! fixed-size moves; only runs over 64 bytes call memcpy.

use crate::datatype::Datatype;
use crate::layout::RunSink;

impl Datatype {
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

    /// Moves the stream range of `transfer` for `count` elements at buffer index `origin`,
    /// from stream byte `offset`, after checking the bounds.
    fn transfer<const PACK: bool>(
        &self,
        function: &str,
        mut transfer: Transfer<PACK>,
        origin: isize,
        count: u64,
        offset: u64,
    ) {
        let (buf_len, stream_len) = transfer.lens();
        self.check_bounds(function, buf_len, origin, count, offset, stream_len);
        if stream_len > 0 {
            self.layout()
                .walk_repeated(count, self.extent(), origin as i64, offset, &mut transfer);
        }
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
        let gather = Transfer::<true>::new(buf, out);
        self.transfer("Datatype::pack", gather, origin, count, offset);
    }

    /// The inverse of `pack`: writes stream bytes `[offset, offset + input.len())` into `buf`.
    pub fn unpack(&self, input: &[u8], buf: &mut [u8], origin: usize, count: u64, offset: u64) {
        self.unpack_at(input, buf, origin as isize, count, offset)
    }

    /// As `unpack`, with an origin that may lie before the buffer (see `pack_at`).
    pub fn unpack_at(&self, input: &[u8], buf: &mut [u8], origin: isize, count: u64, offset: u64) {
        let scatter = Transfer::<false>::new(input, buf);
        self.transfer("Datatype::unpack", scatter, origin, count, offset);
    }
}

/// Moves bytes between the user buffer and a range of the packed stream: from buffer to
/// stream (gather) when `PACK`, from stream to buffer (scatter) otherwise. The direction
/// is a constant so that each copy loop is compiled for one direction.
struct Transfer<'a, const PACK: bool> {
    src: &'a [u8],
    dst: &'a mut [u8],
    stream_len: usize,
    /// Stream bytes moved so far: the stream index of the next one.
    done: usize,
}

impl<'a, const PACK: bool> Transfer<'a, PACK> {
    fn new(src: &'a [u8], dst: &'a mut [u8]) -> Self {
        let stream_len = if PACK { dst.len() } else { src.len() };
        Transfer {
            src,
            dst,
            stream_len,
            done: 0,
        }
    }

    /// (user buffer length, stream range length).
    fn lens(&self) -> (usize, usize) {
        if PACK {
            (self.src.len(), self.dst.len())
        } else {
            (self.dst.len(), self.src.len())
        }
    }

    /// (source index, destination index) of the next stream byte at buffer index `at`.
    #[inline(always)]
    fn ends(&self, at: i64) -> (usize, usize) {
        // `check_bounds` has placed every run inside the buffer, so `at` is an index.
        let at = at as usize;
        if PACK {
            (at, self.done)
        } else {
            (self.done, at)
        }
    }

    /// `count` runs of `N` bytes at `at + k * stride`: the stream side walked as chunks,
    /// one bounds check per run on the buffer side.
    fn strided_fixed<const N: usize>(&mut self, at: i64, stride: i64, count: u64) {
        let stream = self.done..self.done + count as usize * N;
        let mem = |k: usize| (at + k as i64 * stride) as usize;
        if PACK {
            for (k, out) in self.dst[stream.clone()].chunks_exact_mut(N).enumerate() {
                out.copy_from_slice(&self.src[mem(k)..mem(k) + N]);
            }
        } else {
            for (k, input) in self.src[stream.clone()].chunks_exact(N).enumerate() {
                self.dst[mem(k)..mem(k) + N].copy_from_slice(input);
            }
        }
        self.done = stream.end;
    }
}

impl<const PACK: bool> RunSink for Transfer<'_, PACK> {
    #[inline(always)]
    fn remaining(&self) -> u64 {
        (self.stream_len - self.done) as u64
    }

    #[inline(always)]
    fn run(&mut self, at: i64, len: u64) {
        let n = (len as usize).min(self.stream_len - self.done);
        let (s, d) = self.ends(at);
        copy_bytes(&mut self.dst[d..d + n], &self.src[s..s + n]);
        self.done += n;
    }

    /// Blocks of the sizes of basic types (a vector of one element per block, a matrix
    /// column) get a loop of fixed-size moves; other sizes a loop of `run`.
    fn strided(&mut self, at: i64, stride: i64, len: u64, count: u64) {
        match len {
            1 => self.strided_fixed::<1>(at, stride, count),
            2 => self.strided_fixed::<2>(at, stride, count),
            4 => self.strided_fixed::<4>(at, stride, count),
            8 => self.strided_fixed::<8>(at, stride, count),
            16 => self.strided_fixed::<16>(at, stride, count),
            _ => {
                for k in 0..count as i64 {
                    self.run(at + k * stride, len);
                }
            }
        }
    }
}

/// Copies a run of any length. Short runs, the usual pieces of derived types, take at
/// most two overlapping fixed-size moves instead of a call to memcpy, which for a few
/// bytes costs more than the copy itself.
#[inline(always)]
fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    #[inline(always)]
    fn ends<const N: usize>(dst: &mut [u8], src: &[u8]) {
        let n = src.len();
        dst[..N].copy_from_slice(&src[..N]);
        dst[n - N..].copy_from_slice(&src[n - N..]);
    }
    match src.len() {
        0 => {}
        1 => dst[0] = src[0],
        2..=3 => ends::<2>(dst, src),
        4..=7 => ends::<4>(dst, src),
        8..=15 => ends::<8>(dst, src),
        16..=31 => ends::<16>(dst, src),
        32..=64 => ends::<32>(dst, src),
        _ => dst.copy_from_slice(src),
    }
}
