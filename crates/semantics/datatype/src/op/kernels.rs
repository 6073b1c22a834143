//! Element loops of the reductions, generic over the element type. Each loop applies one
//! closure chosen before the loop, over unaligned little-endian (native) elements.

use super::{extended, half, Op};
use crate::basic::Num;
use crate::external32::read_le;
use std::cmp::Ordering;
use std::ops::{Add, BitAnd, BitOr, BitXor, Mul, Sub};

/// A fixed-size value read from and written to packed bytes.
trait Elem: Copy {
    const SIZE: usize;
    fn load(b: &[u8]) -> Self;
    fn store(self, b: &mut [u8]);
}

/// `inout[i] = f(input[i], inout[i])` over whole elements.
fn each<T: Elem>(input: &[u8], inout: &mut [u8], f: impl Fn(T, T) -> T) {
    for (a, b) in input
        .chunks_exact(T::SIZE)
        .zip(inout.chunks_exact_mut(T::SIZE))
    {
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

/// SUM and PROD on complex numbers stored as (re, im) pairs of `T`.
fn complex_of<T: Real>(op: Op, input: &[u8], inout: &mut [u8]) {
    let n = T::SIZE;
    for (x, y) in input.chunks_exact(2 * n).zip(inout.chunks_exact_mut(2 * n)) {
        let (a, b) = (T::load(x), T::load(&x[n..]));
        let (c, d) = (T::load(y), T::load(&y[n..]));
        let (re, im) = match op {
            Op::Sum => (a + c, b + d),
            _ => (a * c - b * d, a * d + b * c),
        };
        re.store(y);
        im.store(&mut y[n..]);
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

fn compare(num: Num, a: &[u8], b: &[u8]) -> Option<Ordering> {
    match num {
        Num::F16 => Half::load(a).partial_cmp(&Half::load(b)),
        Num::F32 => f32::load(a).partial_cmp(&f32::load(b)),
        Num::F64 => f64::load(a).partial_cmp(&f64::load(b)),
        Num::X87 => extended::compare(a, b),
        Num::I8 | Num::I16 | Num::I32 | Num::I64 | Num::I128 => {
            Some(read_le(a, true).cmp(&read_le(b, true)))
        }
        Num::U8 | Num::U16 | Num::U32 | Num::U64 => Some(read_le(a, false).cmp(&read_le(b, false))),
        // No predefined pair holds a binary128.
        Num::F128 => None,
    }
}

/// MINLOC (`min`) or MAXLOC over (value, index) pairs: the better value wins, and on a
/// tie the lower index.
pub(super) fn locate(min: bool, value: Num, index: Num, input: &[u8], inout: &mut [u8]) {
    let (vs, is) = (value.size(), index.size());
    for (a, b) in input
        .chunks_exact(vs + is)
        .zip(inout.chunks_exact_mut(vs + is))
    {
        let better = if min {
            Ordering::Less
        } else {
            Ordering::Greater
        };
        match compare(value, &a[..vs], &b[..vs]) {
            Some(Ordering::Equal) => keep_lower(index, &a[vs..], &mut b[vs..]),
            Some(order) if order == better => b.copy_from_slice(a),
            _ => {}
        }
    }
}

/// On a tie of values, the lower index wins.
fn keep_lower(index: Num, input: &[u8], inout: &mut [u8]) {
    if compare(index, input, inout) == Some(Ordering::Less) {
        inout.copy_from_slice(input);
    }
}
