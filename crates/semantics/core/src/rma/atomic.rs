//! Accumulates applied element by element with atomic instructions, for window memory
//! that several processes of a node update at once (segment windows). Origins on the
//! node apply their accumulates to the segment themselves, and the target applies those
//! that arrive as messages in the same way, so concurrent accumulates to one element
//! never lose an update, whichever way each came.
//!
//! MPI requires accumulates to be atomic per element only between calls with the same
//! predefined type and the same operator or `MPI_REPLACE`/`MPI_NO_OP`. Whether an
//! element is updated atomically depends only on its type and address (elements of 1,
//! 2, 4 or 8 bytes at aligned addresses, any operator the standard defines on them), so
//! two calls that MPI requires to be atomic with respect to each other are either both
//! atomic instructions or both applied by the target, one request after the other.

use crossmpi_datatype::op::{self, Op};
use crossmpi_datatype::Basic;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// Whether `len` bytes of `basic` elements at `addr` are updated with atomic
/// instructions: elements of 1, 2, 4 or 8 bytes, naturally aligned.
pub(super) fn eligible(basic: Basic, addr: usize, len: usize) -> bool {
    let s = basic.size() as usize;
    matches!(s, 1 | 2 | 4 | 8) && addr.is_multiple_of(s) && len.is_multiple_of(s)
}

/// What an atomic accumulate does to each element.
#[derive(Clone, Copy)]
pub(super) enum Update<'a> {
    /// `element = origin (op) element`, `origin` holding packed elements (none for
    /// `MPI_NO_OP`).
    Op(Op, &'a [u8]),
    /// Compare-and-swap of one element: `origin` replaces it if it equals `compare`.
    Swap { origin: &'a [u8], compare: &'a [u8] },
}

/// One element's read-modify-write: `update` turns the current bytes into the new ones,
/// retried until no other process changed the element in between; `old` receives the
/// bytes it replaced. An unchanged element is not written (a plain atomic read).
macro_rules! rmw {
    ($name:ident, $atomic:ty, $int:ty) => {
        /// # Safety
        /// `at` is mapped, writable memory aligned for the integer type.
        unsafe fn $name(at: usize, update: impl Fn(&mut [u8]), old: &mut [u8]) {
            // SAFETY: the caller's contract; other processes access the element only
            // through atomic instructions of the same width (see the module comment).
            let a = unsafe { <$atomic>::from_ptr(at as *mut $int) };
            let mut now = a.load(Ordering::Acquire);
            loop {
                let mut bytes = now.to_ne_bytes();
                update(&mut bytes);
                let new = <$int>::from_ne_bytes(bytes);
                if new == now {
                    break;
                }
                match a.compare_exchange_weak(now, new, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => break,
                    Err(seen) => now = seen,
                }
            }
            old.copy_from_slice(&now.to_ne_bytes());
        }
    };
}

rmw!(rmw8, AtomicU8, u8);
rmw!(rmw16, AtomicU16, u16);
rmw!(rmw32, AtomicU32, u32);
rmw!(rmw64, AtomicU64, u64);

/// Applies `update` to the `len` bytes of `basic` elements at `addr`, element by
/// element, writing their previous values to `fetched` (of `len` bytes) if given.
/// The operator must be one the standard defines on `basic` (checked by the origin).
///
/// # Safety
/// `[addr, addr + len)` is mapped, writable window memory and `eligible(basic, addr,
/// len)` holds.
pub(super) unsafe fn apply(
    basic: Basic,
    addr: usize,
    len: usize,
    update: Update,
    mut fetched: Option<&mut [u8]>,
) {
    let size = basic.size() as usize;
    let mut scratch = [0u8; 8];
    for i in 0..len / size {
        let at = addr + i * size;
        let range = i * size..(i + 1) * size;
        let old = match fetched.as_deref_mut() {
            Some(f) => &mut f[range.clone()],
            None => &mut scratch[..size],
        };
        let element = |cur: &mut [u8]| match update {
            Update::Op(Op::NoOp, _) => {}
            // Defined (the caller's contract) on equal one-element slices, so it
            // cannot fail.
            Update::Op(o, origin) => {
                let _ = op::apply(o, basic, &origin[range.clone()], cur);
            }
            Update::Swap { origin, compare } => {
                if cur == compare {
                    cur.copy_from_slice(origin);
                }
            }
        };
        // SAFETY: `at` lies in the caller's range and is aligned for `size` bytes
        // (`eligible`).
        unsafe {
            match size {
                1 => rmw8(at, element, old),
                2 => rmw16(at, element, old),
                4 => rmw32(at, element, old),
                _ => rmw64(at, element, old),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_aligned_small_elements_are_atomic() {
        assert!(eligible(Basic::Long, 64, 16));
        assert!(!eligible(Basic::Long, 4, 8));
        assert!(eligible(Basic::Int, 4, 8));
        assert!(eligible(Basic::Char, 3, 5));
        assert!(!eligible(Basic::LongDouble, 0, 16));
        assert!(!eligible(Basic::DoubleInt, 0, 12));
    }

    #[test]
    fn operators_fetch_the_old_values_and_store_the_new() {
        let mut mem = [10i64, -3];
        let origin: Vec<u8> = [5i64, 7].iter().flat_map(|v| v.to_ne_bytes()).collect();
        let mut old = [0u8; 16];
        let addr = mem.as_mut_ptr() as usize;
        // SAFETY: `mem` is 16 aligned, writable bytes of i64 elements.
        unsafe {
            apply(
                Basic::Long,
                addr,
                16,
                Update::Op(Op::Sum, &origin),
                Some(&mut old),
            )
        };
        assert_eq!(mem, [15, 4]);
        assert_eq!(old[..8], 10i64.to_ne_bytes());
        assert_eq!(old[8..], (-3i64).to_ne_bytes());
        // SAFETY: as above.
        unsafe { apply(Basic::Long, addr, 16, Update::Op(Op::NoOp, &origin), None) };
        assert_eq!(mem, [15, 4]);
        let mut d = [1.5f64];
        let two = 2.0f64.to_ne_bytes();
        // SAFETY: one aligned, writable f64.
        unsafe {
            apply(
                Basic::Double,
                d.as_mut_ptr() as usize,
                8,
                Update::Op(Op::Prod, &two),
                None,
            )
        };
        assert_eq!(d, [3.0]);
    }

    #[test]
    fn compare_and_swap_replaces_only_an_equal_element() {
        let mut mem = [7u32];
        let addr = mem.as_mut_ptr() as usize;
        let (nine, seven, five) = (9u32.to_ne_bytes(), 7u32.to_ne_bytes(), 5u32.to_ne_bytes());
        let mut old = [0u8; 4];
        let swap = |origin, compare| Update::Swap { origin, compare };
        // SAFETY: one aligned, writable u32.
        unsafe { apply(Basic::Uint32, addr, 4, swap(&nine, &five), Some(&mut old)) };
        assert_eq!((mem, old), ([7], seven));
        // SAFETY: as above.
        unsafe { apply(Basic::Uint32, addr, 4, swap(&nine, &seven), Some(&mut old)) };
        assert_eq!((mem, old), ([9], seven));
    }

    #[test]
    fn concurrent_sums_lose_no_update() {
        let cell = std::sync::Arc::new(AtomicU64::new(0));
        let addr = cell.as_ptr() as usize;
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let keep = cell.clone();
                std::thread::spawn(move || {
                    let one = 1u64.to_ne_bytes();
                    for _ in 0..10_000 {
                        // SAFETY: `keep` holds the aligned u64 alive.
                        unsafe { apply(Basic::Uint64, addr, 8, Update::Op(Op::Sum, &one), None) };
                    }
                    drop(keep);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(cell.load(Ordering::Relaxed), 40_000);
    }
}
