//! Reductions on x87 `long double` and binary128 through the C shim (see build.rs):
//! Rust has neither float type.

use super::Op;
use crate::basic::{Num, Shape};
use std::cmp::Ordering;
use std::ffi::c_int;

type Kernel = unsafe extern "C" fn(op: c_int, input: *const u8, inout: *mut u8, n: usize);

extern "C" {
    fn crossmpi_long_double_op(op: c_int, input: *const u8, inout: *mut u8, n: usize);
    fn crossmpi_float128_op(op: c_int, input: *const u8, inout: *mut u8, n: usize);
    fn crossmpi_long_double_complex_op(op: c_int, input: *const u8, inout: *mut u8, n: usize);
    fn crossmpi_float128_complex_op(op: c_int, input: *const u8, inout: *mut u8, n: usize);
    fn crossmpi_long_double_cmp(a: *const u8, b: *const u8) -> c_int;
}

/// SUM, PROD, MIN, MAX on `long double`, binary128 and their complex forms; the caller
/// has checked that the op is defined and that both slices hold whole elements.
pub(super) fn apply(op: Op, shape: Shape, input: &[u8], inout: &mut [u8]) {
    let code = match op {
        Op::Sum => 0,
        Op::Prod => 1,
        Op::Min => 2,
        Op::Max => 3,
        _ => return,
    };
    let (kernel, elem): (Kernel, usize) = match shape {
        Shape::Scalar(Num::X87) => (crossmpi_long_double_op, 16),
        Shape::Scalar(_) => (crossmpi_float128_op, 16),
        Shape::Complex(Num::X87) => (crossmpi_long_double_complex_op, 32),
        _ => (crossmpi_float128_complex_op, 32),
    };
    let n = input.len().min(inout.len()) / elem;
    // SAFETY: both slices hold at least `n * elem` bytes; the kernel reads `input` and
    // reads and writes `inout` within that range only, with unaligned-safe memcpy.
    unsafe { kernel(code, input.as_ptr(), inout.as_mut_ptr(), n) }
}

/// Compares two `long double` values (16 bytes each); None if either is a NaN.
pub(super) fn compare(a: &[u8], b: &[u8]) -> Option<Ordering> {
    assert!(
        a.len() >= 16 && b.len() >= 16,
        "long double values are 16 bytes"
    );
    // SAFETY: both slices hold the 16 bytes the shim reads.
    match unsafe { crossmpi_long_double_cmp(a.as_ptr(), b.as_ptr()) } {
        -1 => Some(Ordering::Less),
        0 => Some(Ordering::Equal),
        1 => Some(Ordering::Greater),
        _ => None,
    }
}
