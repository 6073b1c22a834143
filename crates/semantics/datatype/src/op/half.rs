//! IEEE binary16 (MPI_REAL2, MPI_COMPLEX4), which stable Rust lacks: values are computed
//! in `f32` (exact for one sum or product of two halves) and rounded back once.

/// binary16 bits to f32 (exact).
pub(super) fn to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let frac = (h & 0x3ff) as u32;
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal half: normalise into an f32 exponent.
            let shift = frac.leading_zeros() - 21;
            sign | ((127 - 15 - shift + 1) << 23) | (((frac << shift) & 0x3ff) << 13)
        }
        (0x1f, _) => sign | 0x7f80_0000 | (frac << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

/// f32 to binary16 bits, rounding to nearest-even.
pub(super) fn from_f32(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let frac = bits & 0x7f_ffff;
    if exp == 0xff {
        let nan = if frac != 0 {
            0x200 | (frac >> 13) as u16
        } else {
            0
        };
        return sign | 0x7c00 | nan;
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    // The value's significand with its implicit bit, and how many low bits to drop.
    let (mant, drop) = if e <= 0 {
        if e < -10 {
            return sign; // below half the smallest subnormal
        }
        (frac | 0x80_0000, (14 - e) as u32)
    } else {
        (frac, 13)
    };
    let kept = mant >> drop;
    let rest = mant & ((1 << drop) - 1);
    let half = 1 << (drop - 1);
    let rounded = kept + u32::from(rest > half || (rest == half && kept & 1 == 1));
    let base = if e <= 0 { 0 } else { (e as u32) << 10 };
    // A carry out of the fraction correctly bumps the exponent (up to infinity).
    sign | (base + rounded) as u16
}
