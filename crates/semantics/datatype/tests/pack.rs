//! Pack and unpack against the naive byte map, whole and from every stream offset.

mod common;

use common::{byte_map, check_pack, check_windows, Rng};
use crossmpi_datatype::{Basic, Datatype};

fn int() -> Datatype {
    Datatype::basic(Basic::Int)
}

fn check(t: &Datatype, counts: &[u64]) {
    let map = byte_map(t);
    for &count in counts {
        check_pack(t, &map, count);
    }
}

#[test]
fn predefined_types_including_padded_pairs() {
    for &b in Basic::ALL {
        check(&Datatype::basic(b), &[0, 1, 3]);
    }
}

#[test]
fn regular_types() {
    let d = Datatype::basic(Basic::Double);
    check(&Datatype::contiguous(5, &int()).unwrap(), &[1, 2]);
    check(&Datatype::vector(4, 2, 3, &int()).unwrap(), &[1, 2]);
    check(&Datatype::vector(3, 1, -2, &d).unwrap(), &[1, 3]);
    check(&Datatype::hvector(3, 2, 20, &int()).unwrap(), &[1, 2]);
    check(&Datatype::vector(3, 2, 2, &int()).unwrap(), &[2]); // stride == blocklen: dense
    let inner = Datatype::vector(2, 1, 3, &d).unwrap();
    check(&Datatype::hvector(3, 2, 100, &inner).unwrap(), &[1, 2]);
}

#[test]
fn irregular_types() {
    let short = Datatype::basic(Basic::Short);
    let indexed = Datatype::indexed(&[2, 0, 1, 3], &[5, 1, 0, -4], &int()).unwrap();
    check(&indexed, &[1, 2]);
    check(
        &Datatype::hindexed(&[1, 2], &[-7, 3], &short).unwrap(),
        &[1, 3],
    );
    check(
        &Datatype::indexed_block(2, &[4, 0, 9], &short).unwrap(),
        &[1, 2],
    );
    check(
        &Datatype::hindexed_block(1, &[8, 1, 5], &int()).unwrap(),
        &[2],
    );
    let types = [
        Datatype::basic(Basic::Char),
        Datatype::basic(Basic::Double),
        indexed.clone(),
    ];
    let st = Datatype::structure(&[3, 1, 2], &[0, 8, 40], &types).unwrap();
    check(&st, &[1, 2]);
    check(&Datatype::vector(3, 2, 5, &st).unwrap(), &[1]);
    check(&Datatype::resized(&st, -16, 200).unwrap(), &[1, 2]);
    check(
        &Datatype::indexed(&[1, 2], &[3, 0], &Datatype::basic(Basic::ShortInt)).unwrap(),
        &[2],
    );
    check(&st.dup(), &[2]);
}

/// A random type of depth at most `depth` over small predefined types.
fn random_type(rng: &mut Rng, depth: u32) -> Datatype {
    const LEAVES: [Basic; 5] = [
        Basic::Char,
        Basic::Short,
        Basic::Int,
        Basic::Double,
        Basic::ShortInt,
    ];
    if depth == 0 || rng.below(4) == 0 {
        return Datatype::basic(LEAVES[rng.below(5) as usize]);
    }
    let old = random_type(rng, depth - 1);
    let n = 1 + rng.below(4) as usize;
    let signed = |rng: &mut Rng, m: u64| rng.below(2 * m) as i64 - m as i64;
    match rng.below(6) {
        0 => Datatype::contiguous(rng.below(4), &old).unwrap(),
        1 => Datatype::vector(1 + rng.below(3), rng.below(3), signed(rng, 4), &old).unwrap(),
        2 => {
            let bls: Vec<u64> = (0..n).map(|_| rng.below(3)).collect();
            let ds: Vec<i64> = (0..n).map(|_| signed(rng, 6)).collect();
            Datatype::indexed(&bls, &ds, &old).unwrap()
        }
        3 => {
            let bls: Vec<u64> = (0..n).map(|_| rng.below(3)).collect();
            let ds: Vec<i64> = (0..n).map(|_| signed(rng, 40)).collect();
            Datatype::hindexed(&bls, &ds, &old).unwrap()
        }
        4 => {
            let bls: Vec<u64> = (0..n).map(|_| rng.below(3)).collect();
            let ds: Vec<i64> = (0..n).map(|_| signed(rng, 40)).collect();
            let ts: Vec<Datatype> = (0..n).map(|_| random_type(rng, depth - 1)).collect();
            Datatype::structure(&bls, &ds, &ts).unwrap()
        }
        _ => Datatype::resized(&old, signed(rng, 8), signed(rng, 8) + 24).unwrap(),
    }
}

#[test]
fn random_nested_types_at_every_offset() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut checked = 0;
    for _ in 0..300 {
        let t = random_type(&mut rng, 3);
        let count = rng.below(3);
        if t.packed_size(count) <= 600 {
            check_pack(&t, &byte_map(&t), count);
            checked += 1;
        }
    }
    assert!(
        checked > 200,
        "only {checked} random types were small enough"
    );
}

#[test]
fn contiguous_types_are_recognised() {
    assert!(int().is_contiguous());
    assert!(Datatype::contiguous(10, &int()).unwrap().is_contiguous());
    assert!(Datatype::vector(4, 3, 3, &int()).unwrap().is_contiguous());
    let two = Datatype::structure(&[1, 1], &[0, 4], &[int(), int()]).unwrap();
    assert!(two.is_contiguous());
    assert!(!Datatype::vector(4, 2, 3, &int()).unwrap().is_contiguous());
    assert!(!Datatype::basic(Basic::DoubleInt).is_contiguous()); // 4 bytes of padding
    assert!(!Datatype::resized(&int(), 0, 8).unwrap().is_contiguous());
}

#[test]
fn large_vector_partial_pack_seeks_without_scanning() {
    // 10^6 blocks: the middle fragment must come out right (and quickly).
    let t = Datatype::vector(1_000_000, 1, 2, &int()).unwrap();
    let buf: Vec<u8> = (0..8_000_000u32)
        .map(|i| (i / 8) as u8 ^ (i % 8) as u8)
        .collect();
    let mut out = [0u8; 12];
    let offset = 2_000_002u64;
    t.pack(&buf, 0, 1, offset, &mut out);
    // Stream byte s is byte s % 4 of int s / 4, which sits at 8 * (s / 4).
    let expect: Vec<u8> = (offset..offset + 12)
        .map(|s| buf[(8 * (s / 4) + s % 4) as usize])
        .collect();
    assert_eq!(out.to_vec(), expect);
}

#[test]
#[should_panic(expected = "does not hold the span")]
fn short_buffer_is_a_caller_bug_with_a_clear_message() {
    let t = Datatype::vector(2, 1, 4, &int()).unwrap();
    let mut out = [0u8; 8];
    t.pack(&[0u8; 16], 0, 1, 0, &mut out);
}

#[test]
fn absolute_displacements_with_an_origin_before_the_buffer() {
    // As with MPI_BOTTOM: displacements are addresses 1000 and 1012; the slice starts
    // at address 1000, so the base address lies 1000 bytes before it.
    let t = Datatype::hindexed(&[1, 1], &[1000, 1012], &int()).unwrap();
    assert_eq!(t.span(1), (1000, 1016));
    let buf: Vec<u8> = (0..16).collect();
    let mut out = [0u8; 8];
    t.pack_at(&buf, -1000, 1, 0, &mut out);
    assert_eq!(out, [0, 1, 2, 3, 12, 13, 14, 15]);
    let mut back = [0u8; 16];
    t.unpack_at(&out[2..], &mut back, -1000, 1, 2);
    assert_eq!(back, [0, 0, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 12, 13, 14, 15]);
}

#[test]
fn long_block_lists_nest_instead_of_multiplying() {
    // 64 x 64 irregular blocks: still packs right, through nested lists.
    let inner_bls: Vec<u64> = (0..64).map(|i| 1 + i % 3).collect();
    let inner_ds: Vec<i64> = (0..64).map(|i| 4 * i).collect();
    let inner = Datatype::indexed(&inner_bls, &inner_ds, &Datatype::basic(Basic::Char)).unwrap();
    let outer_ds: Vec<i64> = (0..64).map(|i| 300 * i + (i % 5)).collect();
    let outer = Datatype::hindexed_block(1, &outer_ds, &inner).unwrap();
    let map = byte_map(&outer);
    check_pack(&outer, &map, 1);
}

#[test]
fn strided_blocks_of_every_small_size_in_every_window() {
    // Block sizes around the fixed-size copies (1, 2, 4, 8, 16 bytes) and the
    // overlapping short copies (up to 64 bytes), odd block counts, positive and negative
    // strides, every alignment of the buffer address.
    let byte = Datatype::basic(Basic::Byte);
    let mut cases = 0;
    for blocklen in [
        1u64, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 64, 65,
    ] {
        for (count, gap) in [(1u64, 1i64), (3, 3), (5, 8)] {
            let stride = blocklen as i64 + gap;
            for stride in [stride, -stride] {
                let t = Datatype::hvector(count, blocklen, stride, &byte).unwrap();
                let map = byte_map(&t);
                for shift in [0, 1, 3, 7] {
                    // Two elements when small: the top-level repetition of the vector.
                    let elements = if blocklen * count <= 48 { 2 } else { 1 };
                    check_windows(&t, &map, elements, shift);
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, 17 * 3 * 2 * 4);
}

#[test]
fn vectors_of_basic_types_in_every_window() {
    // vector(N, 1, 2, double), vector(N, 4, 8, double) and blocks of the other basic
    // sizes: the strided loops of fixed-size moves, cut at every stream offset.
    for (basic, blocklen, stride) in [
        (Basic::Double, 1, 2),
        (Basic::Double, 4, 8),
        (Basic::Double, 1, -3),
        (Basic::Char, 1, 3),
        (Basic::Short, 1, 2),
        (Basic::Int, 1, 5),
        (Basic::LongDouble, 1, 2),
        (Basic::DoubleComplex, 1, 2),
        (Basic::Int, 3, 4),
    ] {
        let t = Datatype::vector(7, blocklen, stride, &Datatype::basic(basic)).unwrap();
        let map = byte_map(&t);
        for shift in [0, 5] {
            check_windows(&t, &map, 1, shift);
            check_windows(&t, &map, 2, shift);
        }
    }
}

#[test]
fn repeated_structs_and_indexed_types_in_every_window() {
    // Elements made of several runs (4 and 9 bytes here; then 1, 3 and 2 ints):
    // the same runs at each element, the first element cut at any offset.
    let st = Datatype::structure(
        &[1, 1, 1],
        &[0, 8, 16],
        &[
            int(),
            Datatype::basic(Basic::Double),
            Datatype::basic(Basic::Char),
        ],
    )
    .unwrap();
    let indexed = Datatype::indexed(&[1, 3, 2], &[0, 2, 7], &int()).unwrap();
    for t in [&st, &indexed] {
        let map = byte_map(t);
        for count in [0, 1, 5] {
            for shift in [0, 1, 6] {
                check_windows(t, &map, count, shift);
            }
        }
    }
}

#[test]
fn elements_that_continue_a_loop_or_a_block_in_every_window() {
    // vector(3, 1, 2, int) resized to 24 bytes: each element continues the vector's
    // 8-byte step, so 4 elements are one loop of 12 blocks; an int counted 6 times is
    // one block.
    let v = Datatype::vector(3, 1, 2, &int()).unwrap();
    let continued = Datatype::resized(&v, 0, 24).unwrap();
    for (t, count) in [(&continued, 4), (&int(), 6), (&v, 3)] {
        let map = byte_map(t);
        for shift in [0, 3] {
            check_windows(t, &map, count, shift);
        }
    }
}

#[test]
fn zero_counts_and_empty_windows_move_nothing() {
    let t = Datatype::vector(3, 1, 2, &Datatype::basic(Basic::Double)).unwrap();
    let buf = [9u8; 40];
    let mut none: [u8; 0] = [];
    t.pack(&buf, 0, 0, 0, &mut none);
    // An empty window at the end of the stream, and in its middle.
    t.pack(&buf, 0, 1, 24, &mut none);
    t.pack(&buf, 0, 1, 11, &mut none);
    let mut back = [0u8; 40];
    t.unpack(&[], &mut back, 0, 1, 11);
    t.unpack(&[], &mut back, 0, 0, 0);
    assert_eq!(back, [0u8; 40]);
    // A type without data packs to nothing at any count.
    let empty = Datatype::contiguous(0, &int()).unwrap();
    empty.pack(&[], 0, 5, 0, &mut none);
    assert_eq!(empty.packed_size(5), 0);
}
