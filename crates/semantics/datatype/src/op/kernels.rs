//! Element loops of the reductions, generic over the element type. Each loop applies one
//! closure chosen before the loop, over unaligned little-endian (native) elements, and
//! MINLOC/MAXLOC have one loop per pair type: no dispatch per element.

use super::{extended, half, Op};
use crate::basic::Num;
use std::cmp::Ordering;
use std::ops::{Add, BitAnd, BitOr, BitXor, Mul, Sub};

/// A fixed-size value read from and written to packed bytes.
trait Elem: Copy {
    const SIZE: usize;
    fn load(b: &[u8]) -> Self;
    fn store(self, b: &mut [u8]);
}

/// Elements per step of `each`: a step is loaded into arrays, combined and stored, which
/// the compiler turns into vector instructions on unaligned data (packed buffers inside
/// a message have no alignment). Element by element, the loads and stores through byte
/// slices stay scalar. 16 elements (64 bytes of f32, 128 of f64) make a body of several
/// vectors; the remainder takes the element loop.
const LANES: usize = 16;

/// `inout[i] = f(input[i], inout[i])` over whole elements.
fn each<T: Elem>(input: &[u8], inout: &mut [u8], f: impl Fn(T, T) -> T) {
    let step = T::SIZE * LANES;
    let mut a_steps = input.chunks_exact(step);
    let mut b_steps = inout.chunks_exact_mut(step);
    for (a, b) in (&mut a_steps).zip(&mut b_steps) {
        let x: [T; LANES] = std::array::from_fn(|i| T::load(&a[i * T::SIZE..]));
        let y: [T; LANES] = std::array::from_fn(|i| T::load(&b[i * T::SIZE..]));
        for (i, (x, y)) in x.into_iter().zip(y).enumerate() {
            f(x, y).store(&mut b[i * T::SIZE..]);
        }
    }
    let tails = a_steps.remainder().chunks_exact(T::SIZE);
    for (a, b) in tails.zip(b_steps.into_remainder().chunks_exact_mut(T::SIZE)) {
        f(T::load(a), T::load(b)).store(b);
    }
}

trait Int:
    Elem + Ord + Default + BitAnd<Output = Self> + BitOr<Output = Self> + BitXor<Output = Self>
{
    fn wrapping_add(self, other: Self) -> Self;
    fn wrapping_mul(self, other: Self) -> Self;
    fn from_bool(b: bool) -> Self;
}

/// The float types computed natively, and binary16 computed in f32.
trait Real: Elem + PartialOrd + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> {}

macro_rules! elem_impls {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn load(b: &[u8]) -> Self {
                let mut raw = [0u8; std::mem::size_of::<$t>()];
                raw.copy_from_slice(&b[..Self::SIZE]);
                <$t>::from_ne_bytes(raw)
            }
            fn store(self, b: &mut [u8]) {
                b[..Self::SIZE].copy_from_slice(&self.to_ne_bytes());
            }
        }
    )*};
}
elem_impls!(i8, i16, i32, i64, i128, u8, u16, u32, u64, f32, f64);

macro_rules! int_impls {
    ($($t:ty),*) => {$(
        impl Int for $t {
            fn wrapping_add(self, other: Self) -> Self { <$t>::wrapping_add(self, other) }
            fn wrapping_mul(self, other: Self) -> Self { <$t>::wrapping_mul(self, other) }
            fn from_bool(b: bool) -> Self { b as $t }
        }
    )*};
}
int_impls!(i8, i16, i32, i64, i128, u8, u16, u32, u64);

impl Real for f32 {}
impl Real for f64 {}

/// A binary16 value held as f32 while computing; stored rounded to nearest-even.
#[derive(Clone, Copy, PartialEq, PartialOrd)]
struct Half(f32);

impl Elem for Half {
    const SIZE: usize = 2;
    fn load(b: &[u8]) -> Self {
        Half(half::to_f32(u16::load(b)))
    }
    fn store(self, b: &mut [u8]) {
        half::from_f32(self.0).store(b)
    }
}

impl Add for Half {
    type Output = Half;
    fn add(self, o: Half) -> Half {
        Half(self.0 + o.0)
    }
}
impl Sub for Half {
    type Output = Half;
    fn sub(self, o: Half) -> Half {
        Half(self.0 - o.0)
    }
}
impl Mul for Half {
    type Output = Half;
    fn mul(self, o: Half) -> Half {
        Half(self.0 * o.0)
    }
}
impl Real for Half {}

fn int<T: Int>(op: Op, input: &[u8], inout: &mut [u8]) {
    let zero = T::default();
    match op {
        Op::Sum => each::<T>(input, inout, T::wrapping_add),
        Op::Prod => each::<T>(input, inout, T::wrapping_mul),
        Op::Min => each::<T>(input, inout, Ord::min),
        Op::Max => each::<T>(input, inout, Ord::max),
        Op::Band => each::<T>(input, inout, |a, b| a & b),
        Op::Bor => each::<T>(input, inout, |a, b| a | b),
        Op::Bxor => each::<T>(input, inout, |a, b| a ^ b),
        Op::Land => each::<T>(input, inout, |a, b| T::from_bool(a != zero && b != zero)),
        Op::Lor => each::<T>(input, inout, |a, b| T::from_bool(a != zero || b != zero)),
        Op::Lxor => each::<T>(input, inout, |a, b| {
            T::from_bool((a != zero) != (b != zero))
        }),
        // Dispatched elsewhere by `apply`.
        Op::MinLoc | Op::MaxLoc | Op::Replace | Op::NoOp => {}
    }
}

fn real<T: Real>(op: Op, input: &[u8], inout: &mut [u8]) {
    match op {
        Op::Sum => each::<T>(input, inout, |a, b| a + b),
        Op::Prod => each::<T>(input, inout, |a, b| a * b),
        Op::Min => each::<T>(input, inout, |a, b| if a < b { a } else { b }),
        Op::Max => each::<T>(input, inout, |a, b| if a > b { a } else { b }),
        // Not defined on floating point types: rejected by `apply`.
        _ => {}
    }
}

/// SUM and PROD on complex numbers stored as (re, im) pairs of `T`. A complex sum is the
/// sum of both parts, so it takes the blocked loop of the reals.
fn complex_of<T: Real>(op: Op, input: &[u8], inout: &mut [u8]) {
    if op == Op::Sum {
        return each::<T>(input, inout, |a, b| a + b);
    }
    let n = T::SIZE;
    for (x, y) in input.chunks_exact(2 * n).zip(inout.chunks_exact_mut(2 * n)) {
        let (a, b) = (T::load(x), T::load(&x[n..]));
        let (c, d) = (T::load(y), T::load(&y[n..]));
        (a * c - b * d).store(y);
        (a * d + b * c).store(&mut y[n..]);
    }
}

/// Integer and native float scalars (x87 and binary128 go through `extended`).
pub(super) fn scalar(op: Op, num: Num, input: &[u8], inout: &mut [u8]) {
    match num {
        Num::I8 => int::<i8>(op, input, inout),
        Num::I16 => int::<i16>(op, input, inout),
        Num::I32 => int::<i32>(op, input, inout),
        Num::I64 => int::<i64>(op, input, inout),
        Num::I128 => int::<i128>(op, input, inout),
        Num::U8 => int::<u8>(op, input, inout),
        Num::U16 => int::<u16>(op, input, inout),
        Num::U32 => int::<u32>(op, input, inout),
        Num::U64 => int::<u64>(op, input, inout),
        Num::F16 => real::<Half>(op, input, inout),
        Num::F32 => real::<f32>(op, input, inout),
        Num::F64 => real::<f64>(op, input, inout),
        Num::X87 | Num::F128 => extended::apply(op, crate::basic::Shape::Scalar(num), input, inout),
    }
}

pub(super) fn complex(op: Op, num: Num, input: &[u8], inout: &mut [u8]) {
    match num {
        Num::F16 => complex_of::<Half>(op, input, inout),
        Num::F32 => complex_of::<f32>(op, input, inout),
        Num::F64 => complex_of::<f64>(op, input, inout),
        _ => extended::apply(op, crate::basic::Shape::Complex(num), input, inout),
    }
}

/// An x87 `long double` as stored (16 bytes), ordered through the C shim.
#[derive(Clone, Copy)]
struct LongDouble([u8; 16]);

impl Elem for LongDouble {
    const SIZE: usize = 16;
    fn load(b: &[u8]) -> Self {
        let mut raw = [0u8; 16];
        raw.copy_from_slice(&b[..16]);
        LongDouble(raw)
    }
    fn store(self, b: &mut [u8]) {
        b[..16].copy_from_slice(&self.0)
    }
}

impl PartialEq for LongDouble {
    fn eq(&self, other: &Self) -> bool {
        self.partial_cmp(other) == Some(Ordering::Equal)
    }
}

impl PartialOrd for LongDouble {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        extended::compare(&self.0, &other.0)
    }
}

/// MINLOC (`MIN`) or MAXLOC over packed (value, index) pairs: the better value wins,
/// and on a tie the lower index; an unordered value (NaN) leaves `inout` as it is.
fn locate_of<V: Elem + PartialOrd, I: Elem + PartialOrd, const MIN: bool>(
    input: &[u8],
    inout: &mut [u8],
) {
    let pair = V::SIZE + I::SIZE;
    for (a, b) in input.chunks_exact(pair).zip(inout.chunks_exact_mut(pair)) {
        let (va, vb) = (V::load(a), V::load(b));
        let better = if MIN { va < vb } else { va > vb };
        if better || (va == vb && I::load(&a[V::SIZE..]) < I::load(&b[V::SIZE..])) {
            b.copy_from_slice(a);
        }
    }
}

fn locate_by<V: Elem + PartialOrd, I: Elem + PartialOrd>(
    min: bool,
    input: &[u8],
    inout: &mut [u8],
) {
    if min {
        locate_of::<V, I, true>(input, inout)
    } else {
        locate_of::<V, I, false>(input, inout)
    }
}

/// MINLOC (`min`) or MAXLOC on the predefined pair of `value` and `index`.
pub(super) fn locate(min: bool, value: Num, index: Num, input: &[u8], inout: &mut [u8]) {
    match (value, index) {
        (Num::F32, Num::I32) => locate_by::<f32, i32>(min, input, inout),
        (Num::F64, Num::I32) => locate_by::<f64, i32>(min, input, inout),
        (Num::I64, Num::I32) => locate_by::<i64, i32>(min, input, inout),
        (Num::I32, Num::I32) => locate_by::<i32, i32>(min, input, inout),
        (Num::I16, Num::I32) => locate_by::<i16, i32>(min, input, inout),
        (Num::X87, Num::I32) => locate_by::<LongDouble, i32>(min, input, inout),
        (Num::F32, Num::F32) => locate_by::<f32, f32>(min, input, inout),
        (Num::F64, Num::F64) => locate_by::<f64, f64>(min, input, inout),
        // The list above is every pair of `Basic::pair_members`; a new pair type added
        // there without a line here is caught by the test of MINLOC on every pair.
        _ => {}
    }
}
