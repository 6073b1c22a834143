//! A reference for the tests: the byte map of a datatype (for every byte of the packed
//! stream, its offset from the buffer address), computed naively from the constructor
//! arguments that `contents()` reports, element by element as the standard defines.

#![allow(dead_code)] // each test binary uses its own subset

use crossmpi_datatype::{Combiner, Datatype};

/// Memory offset of every packed byte, in stream order.
pub fn byte_map(t: &Datatype) -> Vec<i64> {
    let env = t.envelope();
    if env.combiner == Combiner::Named && t.size() == 0 {
        return vec![]; // the MPI-1 markers MPI_LB and MPI_UB
    }
    // Named types and the Fortran 90 ones laid out as a named type.
    if let Some(b) = t.basic_kind().or(t.f90_kind().map(|(_, b)| b)) {
        return match b.pair_members() {
            Some((v, i)) => {
                let off = v.size().next_multiple_of(i.alignment()) as i64;
                (0..v.size() as i64)
                    .chain(off..off + i.size() as i64)
                    .collect()
            }
            None => (0..b.size() as i64).collect(),
        };
    }
    let c = t.contents();
    let ints = &c.integers;
    let addrs = &c.addresses;
    let old = c.datatypes.first().expect("derived types have an old type");
    let old_map = byte_map(old);
    let ext = old.extent();
    let mut map = Vec::new();
    let mut place = |m: &[i64], at: i64| map.extend(m.iter().map(|x| x + at));
    match env.combiner {
        Combiner::Dup | Combiner::Resized => place(&old_map, 0),
        Combiner::Contiguous => (0..ints[0]).for_each(|k| place(&old_map, k * ext)),
        Combiner::Vector | Combiner::Hvector => {
            let stride = if env.combiner == Combiner::Vector {
                ints[2] * ext
            } else {
                addrs[0]
            };
            for i in 0..ints[0] {
                for j in 0..ints[1] {
                    place(&old_map, i * stride + j * ext);
                }
            }
        }
        Combiner::Indexed | Combiner::Hindexed => {
            let n = ints[0] as usize;
            for i in 0..n {
                let d = if env.combiner == Combiner::Indexed {
                    ints[1 + n + i] * ext
                } else {
                    addrs[i]
                };
                for j in 0..ints[1 + i] {
                    place(&old_map, d + j * ext);
                }
            }
        }
        Combiner::IndexedBlock | Combiner::HindexedBlock => {
            for i in 0..ints[0] as usize {
                let d = if env.combiner == Combiner::IndexedBlock {
                    ints[2 + i] * ext
                } else {
                    addrs[i]
                };
                for j in 0..ints[1] {
                    place(&old_map, d + j * ext);
                }
            }
        }
        Combiner::Struct => {
            for (i, ty) in c.datatypes.iter().enumerate() {
                let m = byte_map(ty);
                for j in 0..ints[1 + i] {
                    place(&m, addrs[i] + j * ty.extent());
                }
            }
        }
        Combiner::Subarray | Combiner::Darray => panic!("byte_map: use the array references"),
        Combiner::Named | Combiner::F90Real | Combiner::F90Complex | Combiner::F90Integer => {
            unreachable!("returned above")
        }
    }
    map
}

/// The byte map of `count` elements.
pub fn byte_map_n(t: &Datatype, map: &[i64], count: u64) -> Vec<i64> {
    (0..count as i64)
        .flat_map(|k| map.iter().map(move |x| x + k * t.extent()))
        .collect()
}

/// A small deterministic generator (xorshift) for property-style loops.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Checks pack and unpack of `count` elements of `t` against `map`, whole and at every
/// split point of the stream.
pub fn check_pack(t: &Datatype, map: &[i64], count: u64) {
    let full = byte_map_n(t, map, count);
    assert_eq!(
        full.len() as u64,
        t.packed_size(count),
        "packed size of {t:?}"
    );
    let (lo, hi) = t.span(count);
    if !full.is_empty() {
        assert_eq!(lo, *full.iter().min().unwrap(), "span low of {t:?}");
        assert_eq!(hi, *full.iter().max().unwrap() + 1, "span high of {t:?}");
    }
    let origin = (-lo).max(0) as usize + 3;
    let len = (origin as i64 + hi + 3) as usize;
    let buf: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
    let expect: Vec<u8> = full
        .iter()
        .map(|&d| buf[(origin as i64 + d) as usize])
        .collect();
    let mut out = vec![0u8; full.len()];
    t.pack(&buf, origin, count, 0, &mut out);
    assert_eq!(out, expect, "full pack of {t:?}");
    for split in 0..=full.len() {
        let mut a = vec![0u8; split];
        let mut b = vec![0u8; full.len() - split];
        t.pack(&buf, origin, count, 0, &mut a);
        t.pack(&buf, origin, count, split as u64, &mut b);
        a.extend(b);
        assert_eq!(a, expect, "pack of {t:?} split at {split}");
        // Unpack the tail into a zeroed buffer: exactly the mapped bytes change.
        let mut back = vec![0u8; len];
        t.unpack(&expect[split..], &mut back, origin, count, split as u64);
        let mut want = vec![0u8; len];
        for (k, &d) in full.iter().enumerate().skip(split) {
            want[(origin as i64 + d) as usize] = expect[k];
        }
        assert_eq!(back, want, "unpack of {t:?} from {split}");
    }
}

/// Checks pack and unpack of every window `[a, b)` of the stream of `count` elements of
/// `t`, with the buffer address `shift` bytes past an allocation's start (0..8 covers
/// every alignment of 8-byte loads), against `map`.
pub fn check_windows(t: &Datatype, map: &[i64], count: u64, shift: usize) {
    let full = byte_map_n(t, map, count);
    let (lo, hi) = t.span(count);
    let origin = (-lo).max(0) as usize + shift;
    let len = (origin as i64 + hi.max(0)) as usize + 5;
    let buf: Vec<u8> = (0..len).map(|i| (i * 13 + 7) as u8).collect();
    let expect: Vec<u8> = full
        .iter()
        .map(|&d| buf[(origin as i64 + d) as usize])
        .collect();
    for a in 0..=full.len() {
        for b in a..=full.len() {
            let mut out = vec![0u8; b - a];
            t.pack(&buf, origin, count, a as u64, &mut out);
            assert_eq!(
                out,
                expect[a..b],
                "pack of {t:?} x {count}, window {a}..{b}"
            );
            let mut back = vec![0u8; len];
            t.unpack(&out, &mut back, origin, count, a as u64);
            let mut want = vec![0u8; len];
            for (k, &d) in full.iter().enumerate().take(b).skip(a) {
                want[(origin as i64 + d) as usize] = expect[k];
            }
            assert_eq!(back, want, "unpack of {t:?} x {count}, window {a}..{b}");
        }
    }
}
