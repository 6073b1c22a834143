//! Target datatypes as byte runs: the origin describes where `count` elements of the
//! target datatype lie as (offset, length) runs in packed order, relative to the first
//! byte they touch, and the target gathers and scatters along them. So any target
//! datatype works without the target rebuilding it.

use crate::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_datatype::Datatype;

/// Largest span a non-contiguous target datatype may cover: computing its runs takes
/// a few passes over a buffer of the span's size.
pub const MAX_SPAN: u64 = 1 << 24;

/// A byte run: offset from the first byte of the span, and length.
pub type Run = (u64, u64);

/// The target layout of `count` elements of `t`: (offset of the first byte touched
/// from the element origin, span length, runs in packed order). Contiguous data gives
/// no runs (one run over the whole span, without allocating).
pub fn runs(function: &str, t: &Datatype, count: u64) -> MpiResult<(i64, u64, Vec<Run>)> {
    let packed = t.size().saturating_mul(count);
    if packed == 0 {
        return Ok((0, 0, Vec::new()));
    }
    let (lo, hi) = t.span(count);
    let span = (hi - lo) as u64;
    if t.is_contiguous() {
        return Ok((lo, span, Vec::new()));
    }
    if span > MAX_SPAN {
        return Err(MpiError::arg(
            ErrorClass::Type,
            function,
            "target_datatype",
            format!("{count} elements spanning {span} bytes"),
            format!("non-contiguous target datatypes may span at most {MAX_SPAN} bytes"),
        ));
    }
    // Pack an image whose byte i holds byte `plane` of i: three planes give every
    // packed byte's source offset (spans are below 2^24).
    let mut source = vec![0u32; packed as usize];
    let mut out = vec![0u8; packed as usize];
    for plane in 0..3 {
        let image: Vec<u8> = (0..span).map(|i| (i >> (8 * plane)) as u8).collect();
        t.pack_at(&image, -lo as isize, count, 0, &mut out);
        for (s, &b) in source.iter_mut().zip(&out) {
            *s |= (b as u32) << (8 * plane);
        }
    }
    let mut runs: Vec<Run> = Vec::new();
    for &s in &source {
        match runs.last_mut() {
            Some((o, l)) if *o + *l == s as u64 => *l += 1,
            _ => runs.push((s as u64, 1)),
        }
    }
    Ok((lo, span, runs))
}

/// Copies the bytes the runs name out of `mem`, in packed order.
pub fn gather(mem: &[u8], runs: &[Run]) -> Vec<u8> {
    let mut out = Vec::with_capacity(runs.iter().map(|r| r.1 as usize).sum());
    for &(o, l) in runs {
        out.extend_from_slice(&mem[o as usize..(o + l) as usize]);
    }
    out
}

/// Stores packed `data` into the bytes the runs name.
pub fn scatter(mem: &mut [u8], runs: &[Run], data: &[u8]) {
    let mut at = 0;
    for &(o, l) in runs {
        let l = l as usize;
        mem[o as usize..o as usize + l].copy_from_slice(&data[at..at + l]);
        at += l;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossmpi_datatype::Basic;

    #[test]
    fn a_vector_becomes_its_blocks_in_order() {
        let int = Datatype::basic(
            Basic::ALL
                .iter()
                .copied()
                .find(|b| b.mpi_name() == "MPI_INT")
                .unwrap(),
        );
        let c = Datatype::contiguous(5, &int).unwrap();
        assert_eq!(
            runs("test", &c, 2).unwrap(),
            (0, 40, vec![]),
            "dense: no runs"
        );
        let v = Datatype::vector(3, 2, 4, &int).unwrap();
        let (lo, span, r) = runs("test", &v, 1).unwrap();
        assert_eq!((lo, span), (0, 40));
        assert_eq!(r, vec![(0, 8), (16, 8), (32, 8)]);
        let mem: Vec<u8> = (0..40).collect();
        let packed = gather(&mem, &r);
        assert_eq!(packed.len(), 24);
        assert_eq!(&packed[8..12], &[16, 17, 18, 19]);
        let mut back = vec![0u8; 40];
        scatter(&mut back, &r, &packed);
        assert_eq!(&back[16..24], &mem[16..24]);
        assert_eq!(&back[8..16], &[0; 8]);
    }

    #[test]
    fn reversed_blocks_keep_packed_order() {
        let byte = Datatype::basic(
            Basic::ALL
                .iter()
                .copied()
                .find(|b| b.mpi_name() == "MPI_BYTE")
                .unwrap(),
        );
        let t = Datatype::hindexed(&[2, 2], &[10, 0], &byte).unwrap();
        let (_, span, r) = runs("test", &t, 1).unwrap();
        assert_eq!(span, 12);
        assert_eq!(r, vec![(10, 2), (0, 2)]);
    }
}
