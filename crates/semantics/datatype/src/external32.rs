//! The `external32` representation (MPI_Pack_external): big-endian, fixed sizes per
//! the standard's table (e.g. `long` and `wchar_t` shrink to 4 and 2 bytes, `long
//! double` becomes an IEEE binary128). IMPI carries user data between clusters this way.

use crate::basic::{Basic, Num, Shape};
use crate::datatype::Datatype;
use crate::error::{ErrorKind, TypeError};
use crate::signature::Sig;

/// Native bytes converted per step: bounds the scratch buffer whatever the message size.
const CHUNK: usize = 64 * 1024;

/// One scalar inside an element: how to read it, its native and its external32 bytes.
type Part = (Num, usize, usize);

/// The scalars of one element of `b`, in stream order.
fn parts(b: Basic) -> [Option<Part>; 2] {
    let size = b.size() as usize;
    let ext = b.external32_size() as usize;
    match (b.shape(), b.pair_members()) {
        (Shape::Pair(vn, in_), Some((v, i))) => [
            Some((vn, v.size() as usize, v.external32_size() as usize)),
            Some((in_, i.size() as usize, i.external32_size() as usize)),
        ],
        (Shape::Complex(n), _) => [Some((n, size / 2, ext / 2)), Some((n, size / 2, ext / 2))],
        (Shape::Scalar(n) | Shape::Pair(n, _), _) => [Some((n, size, ext)), None],
    }
}

fn is_signed(num: Num) -> bool {
    matches!(num, Num::I8 | Num::I16 | Num::I32 | Num::I64 | Num::I128)
}

fn is_integer(num: Num) -> bool {
    !matches!(num, Num::F16 | Num::F32 | Num::F64 | Num::F128 | Num::X87)
}

/// Reads a little-endian integer of `bytes.len()` bytes, sign- or zero-extended.
pub(crate) fn read_le(bytes: &[u8], signed: bool) -> i128 {
    let mut raw = [0u8; 16];
    raw[..bytes.len()].copy_from_slice(bytes);
    let v = u128::from_le_bytes(raw);
    let bits = 8 * bytes.len() as u32;
    if signed && bits < 128 {
        ((v << (128 - bits)) as i128) >> (128 - bits)
    } else {
        v as i128
    }
}

/// Whether `v` is representable in `bytes` bytes (signed or unsigned).
fn fits(v: i128, bytes: usize, signed: bool) -> bool {
    let bits = 8 * bytes as u32;
    match (signed, bits) {
        (_, 128) => true,
        (true, _) => v >= -(1i128 << (bits - 1)) && v < (1i128 << (bits - 1)),
        (false, _) => v >= 0 && v < (1i128 << bits),
    }
}

/// x87 80-bit extended (in 16 little-endian bytes) to IEEE binary128 bits.
pub(crate) fn x87_to_quad(native: &[u8]) -> u128 {
    let mant = u64::from_le_bytes(native[..8].try_into().unwrap_or([0; 8]));
    let sign_exp = u16::from_le_bytes([native[8], native[9]]) as u128;
    // Both formats have a 15-bit exponent with bias 16383. A zero exponent (denormal)
    // keeps the explicit integer bit, which lands on the quad exponent's low bit: exactly
    // right for pseudo-denormals, which equal the smallest normal.
    let frac = if sign_exp & 0x7fff == 0 {
        (mant as u128) << 49
    } else {
        ((mant & !(1 << 63)) as u128) << 49
    };
    (sign_exp << 112) | frac
}

/// IEEE binary128 bits to x87 80-bit extended (16 little-endian bytes, the last 6 zero),
/// rounding the fraction to nearest-even.
pub(crate) fn quad_to_x87(q: u128) -> [u8; 16] {
    let sign = (q >> 127) as u16;
    let mut exp = ((q >> 112) & 0x7fff) as u16;
    let frac = q & ((1u128 << 112) - 1);
    let mut mant = (frac >> 49) as u64;
    if exp == 0x7fff {
        mant |= 1 << 63;
        if frac != 0 && mant == 1 << 63 {
            mant |= 1 << 62; // a NaN whose payload was all in the dropped bits stays a NaN
        }
    } else {
        let rest = frac & ((1u128 << 49) - 1);
        let half = 1u128 << 48;
        if rest > half || (rest == half && mant & 1 == 1) {
            mant += 1;
        }
        if exp == 0 {
            if mant >> 63 == 1 {
                exp = 1; // rounded up to the smallest normal
            }
        } else if mant >> 63 == 1 {
            exp += 1; // the fraction carried past its 63 bits
            mant = 1 << 63;
        } else {
            mant |= 1 << 63;
        }
        if exp == 0x7fff {
            mant = 1 << 63;
        }
    }
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&mant.to_le_bytes());
    out[8..10].copy_from_slice(&((sign << 15) | exp).to_le_bytes());
    out
}

/// One scalar from native to external32; Err(value as text) if it does not fit.
fn encode(num: Num, native: &[u8], ext: &mut [u8]) -> Result<(), String> {
    if num == Num::X87 {
        ext.copy_from_slice(&x87_to_quad(native).to_be_bytes());
    } else if is_integer(num) {
        let v = read_le(native, is_signed(num));
        if !fits(v, ext.len(), is_signed(num)) {
            return Err(v.to_string());
        }
        let be = v.to_be_bytes();
        ext.copy_from_slice(&be[16 - ext.len()..]);
    } else {
        for (e, n) in ext.iter_mut().zip(native.iter().rev()) {
            *e = *n;
        }
    }
    Ok(())
}

/// One scalar from external32 to native (never loses data: native is never smaller).
fn decode(num: Num, ext: &[u8], native: &mut [u8]) {
    if num == Num::X87 {
        let q = u128::from_be_bytes(ext.try_into().unwrap_or([0; 16]));
        native.copy_from_slice(&quad_to_x87(q));
    } else if is_integer(num) {
        let mut le: Vec<u8> = ext.iter().rev().copied().collect();
        let fill = if is_signed(num) && le.last().is_some_and(|b| b & 0x80 != 0) {
            0xff
        } else {
            0
        };
        le.resize(native.len(), fill);
        native.copy_from_slice(&le);
    } else {
        for (n, e) in native.iter_mut().zip(ext.iter().rev()) {
            *n = *e;
        }
    }
}

impl Sig {
    fn external32_size(&self) -> u64 {
        self.runs()
            .map(|(b, n)| b.external32_size().saturating_mul(n))
            .fold(0, u64::saturating_add)
    }
}

impl Datatype {
    /// Bytes of `count` elements in external32.
    pub fn external32_size(&self, count: u64) -> u64 {
        self.signature().external32_size().saturating_mul(count)
    }

    /// Visits `count` elements in chunks: `step(native stream offset, external32
    /// offset, basic type, first element index, elements)`.
    fn for_each_chunk(
        &self,
        count: u64,
        mut step: impl FnMut(u64, usize, Basic, u64, usize) -> Result<(), TypeError>,
    ) -> Result<(), TypeError> {
        let (mut native_at, mut ext_at, mut index) = (0u64, 0usize, 0u64);
        for (b, n) in self.signature().repeat(count).runs() {
            let per_chunk = (CHUNK / b.size() as usize).max(1) as u64;
            let mut left = n;
            while left > 0 {
                let k = left.min(per_chunk);
                step(native_at, ext_at, b, index, k as usize)?;
                native_at += k * b.size();
                ext_at += (k * b.external32_size()) as usize;
                index += k;
                left -= k;
            }
        }
        Ok(())
    }

    fn check_room(
        &self,
        function: &'static str,
        argument: &'static str,
        have: usize,
        count: u64,
    ) -> Result<(), TypeError> {
        let need = self.external32_size(count);
        if (have as u64) < need {
            return Err(TypeError::new(
                ErrorKind::Truncate,
                function,
                argument,
                have,
                format!("{count} elements need {need} bytes in external32"),
            ));
        }
        Ok(())
    }

    /// Packs `count` elements into `out` in external32 (MPI_Pack_external).
    pub fn pack_external32(
        &self,
        buf: &[u8],
        origin: usize,
        count: u64,
        out: &mut [u8],
    ) -> Result<(), TypeError> {
        const F: &str = "MPI_Pack_external";
        self.check_room(F, "outsize", out.len(), count)?;
        let mut native = vec![0u8; CHUNK.min(self.packed_size(count) as usize)];
        self.for_each_chunk(count, |native_at, ext_at, b, index, k| {
            let (size, ext) = (b.size() as usize, b.external32_size() as usize);
            let chunk = &mut native[..k * size];
            self.pack(buf, origin, count, native_at, chunk);
            let out = &mut out[ext_at..ext_at + k * ext];
            for (e, (from, to)) in chunk
                .chunks_exact(size)
                .zip(out.chunks_exact_mut(ext))
                .enumerate()
            {
                let (mut nat, mut xt) = (0, 0);
                for (num, ns, xs) in parts(b).into_iter().flatten() {
                    encode(num, &from[nat..nat + ns], &mut to[xt..xt + xs]).map_err(|value| {
                        TypeError::new(
                            ErrorKind::Conversion,
                            F,
                            "inbuf",
                            value,
                            format!(
                                "element {} ({}) does not fit its {xs}-byte external32 form",
                                index + e as u64,
                                b.mpi_name()
                            ),
                        )
                    })?;
                    nat += ns;
                    xt += xs;
                }
            }
            Ok(())
        })
    }

    /// Unpacks `count` elements from external32 `input` into `buf` (MPI_Unpack_external).
    pub fn unpack_external32(
        &self,
        input: &[u8],
        buf: &mut [u8],
        origin: usize,
        count: u64,
    ) -> Result<(), TypeError> {
        self.check_room("MPI_Unpack_external", "insize", input.len(), count)?;
        self.unpack_external32_prefix(input, buf, origin, count);
        Ok(())
    }

    /// Unpacks the basic elements `input` holds whole, a prefix of `count` elements in
    /// external32 (a receive of a shorter message); returns the native bytes written.
    pub fn unpack_external32_prefix(
        &self,
        input: &[u8],
        buf: &mut [u8],
        origin: usize,
        count: u64,
    ) -> u64 {
        let mut native = vec![0u8; CHUNK.min(self.packed_size(count) as usize)];
        let mut written = 0;
        // A step that finds its input exhausted ends the walk with this marker error.
        let exhausted = || TypeError::new(ErrorKind::Truncate, "", "", "", "");
        let _ = self.for_each_chunk(count, |native_at, ext_at, b, _, k| {
            let (size, ext) = (b.size() as usize, b.external32_size() as usize);
            let have = input.len().saturating_sub(ext_at) / ext.max(1);
            let n = k.min(have);
            let chunk = &mut native[..n * size];
            let input = &input[ext_at..ext_at + n * ext];
            for (from, to) in input.chunks_exact(ext).zip(chunk.chunks_exact_mut(size)) {
                let (mut nat, mut xt) = (0, 0);
                for (num, ns, xs) in parts(b).into_iter().flatten() {
                    decode(num, &from[xt..xt + xs], &mut to[nat..nat + ns]);
                    nat += ns;
                    xt += xs;
                }
            }
            self.unpack(chunk, buf, origin, count, native_at);
            written = native_at + (n * size) as u64;
            if n < k {
                return Err(exhausted());
            }
            Ok(())
        });
        written
    }
}
