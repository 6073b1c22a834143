//! Every predefined operator on every type it is defined for, with expected values
//! computed here from an independent description of each type; undefined pairs rejected.

mod common;

use common::Rng;
use crossmpi_datatype::op::{apply, is_defined, Op};
use crossmpi_datatype::Basic;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Int(usize, bool),
    F16,
    F32,
    F64,
    X87,
    F128,
}

/// (kind of each scalar, scalars per element, is complex)
fn describe(b: Basic) -> (Kind, usize, bool) {
    use Basic::*;
    match b {
        Char | SignedChar | Int8 | Integer1 | Logical1 => (Kind::Int(1, true), 1, false),
        UnsignedChar | Byte | Uint8 | CBool | CxxBool | Packed | Character => {
            (Kind::Int(1, false), 1, false)
        }
        Short | Int16 | Integer2 | Logical2 => (Kind::Int(2, true), 1, false),
        UnsignedShort | Uint16 => (Kind::Int(2, false), 1, false),
        Int | Int32 | Integer | Integer4 | Logical | Logical4 => (Kind::Int(4, true), 1, false),
        Unsigned | Uint32 | Wchar => (Kind::Int(4, false), 1, false),
        Long | LongLong | Int64 | Aint | Offset | Count | Integer8 | Logical8 => {
            (Kind::Int(8, true), 1, false)
        }
        UnsignedLong | UnsignedLongLong | Uint64 => (Kind::Int(8, false), 1, false),
        Integer16 | Logical16 => (Kind::Int(16, true), 1, false),
        Real2 => (Kind::F16, 1, false),
        Float | Real | Real4 => (Kind::F32, 1, false),
        Double | DoublePrecision | Real8 => (Kind::F64, 1, false),
        LongDouble => (Kind::X87, 1, false),
        Real16 => (Kind::F128, 1, false),
        Complex4 => (Kind::F16, 2, true),
        CFloatComplex | CxxFloatComplex | Complex | Complex8 => (Kind::F32, 2, true),
        CDoubleComplex | CxxDoubleComplex | DoubleComplex | Complex16 => (Kind::F64, 2, true),
        CLongDoubleComplex | CxxLongDoubleComplex => (Kind::X87, 2, true),
        Complex32 => (Kind::F128, 2, true),
        // Pairs are handled by the MINLOC/MAXLOC test.
        FloatInt | DoubleInt | LongInt | TwoInt | ShortInt | LongDoubleInt | TwoReal
        | TwoDoublePrecision | TwoInteger => (Kind::Int(0, false), 0, false),
    }
}

/// The bytes of small integer `v` as a scalar of `kind`.
fn encode(kind: Kind, v: i64) -> Vec<u8> {
    let (neg, m) = (v < 0, v.unsigned_abs());
    let e = 63u64.saturating_sub(m.leading_zeros() as u64); // exponent of the leading bit
    match kind {
        Kind::Int(n, _) => (v as i128).to_le_bytes()[..n].to_vec(),
        Kind::F16 if m == 0 => vec![0, 0],
        Kind::F16 => {
            let bits = ((neg as u16) << 15)
                | (((15 + e) as u16) << 10)
                | ((((m << 10) >> e) & 0x3ff) as u16);
            bits.to_le_bytes().to_vec()
        }
        Kind::F32 => (v as f32).to_le_bytes().to_vec(),
        Kind::F64 => (v as f64).to_le_bytes().to_vec(),
        Kind::X87 if m == 0 => vec![0; 16],
        Kind::X87 => {
            let mut out = (m << (63 - e)).to_le_bytes().to_vec();
            out.extend((((neg as u16) << 15) | (16383 + e as u16)).to_le_bytes());
            out.extend([0; 6]);
            out
        }
        Kind::F128 if m == 0 => vec![0; 16],
        Kind::F128 => {
            let frac = ((m as u128) << (112 - e)) & ((1u128 << 112) - 1);
            let bits = ((neg as u128) << 127) | ((16383 + e as u128) << 112) | frac;
            bits.to_le_bytes().to_vec()
        }
    }
}

fn encode_all(kind: Kind, vals: &[i64]) -> Vec<u8> {
    vals.iter().flat_map(|&v| encode(kind, v)).collect()
}

fn run(op: Op, b: Basic, input: &[u8], inout: &[u8]) -> Vec<u8> {
    let mut io = inout.to_vec();
    apply(op, b, input, &mut io).unwrap_or_else(|e| panic!("{e}"));
    io
}

const A: [i64; 5] = [3, 0, 0, 7, 2];
const B: [i64; 5] = [5, 3, 0, 0, 2];

/// `a (op) b` on integers held exactly; wrapping where the type would wrap.
fn combine(op: Op, a: i128, b: i128) -> i128 {
    match op {
        Op::Sum => a.wrapping_add(b),
        Op::Prod => a.wrapping_mul(b),
        Op::Min => a.min(b),
        Op::Max => a.max(b),
        Op::Band => a & b,
        Op::Bor => a | b,
        Op::Bxor => a ^ b,
        Op::Land => (a != 0 && b != 0) as i128,
        Op::Lor => (a != 0 || b != 0) as i128,
        Op::Lxor => ((a != 0) != (b != 0)) as i128,
        _ => unreachable!("not an elementwise op"),
    }
}

fn expected(op: Op) -> [i64; 5] {
    std::array::from_fn(|i| combine(op, A[i] as i128, B[i] as i128) as i64)
}

/// Every elementwise operator on every real or integer scalar type it is defined on.
fn elementwise_cases() -> Vec<(Basic, Kind, Op)> {
    let mut cases = Vec::new();
    for &b in Basic::ALL {
        let (kind, parts, complex) = describe(b);
        if parts != 1 || complex {
            continue;
        }
        for &op in Op::ALL {
            if !matches!(op, Op::MinLoc | Op::MaxLoc | Op::Replace | Op::NoOp) && is_defined(op, b)
            {
                cases.push((b, kind, op));
            }
        }
    }
    cases
}

#[test]
fn every_op_on_every_scalar_type() {
    let cases = elementwise_cases();
    for &(b, kind, op) in &cases {
        let got = run(op, b, &encode_all(kind, &A), &encode_all(kind, &B));
        assert_eq!(
            got,
            encode_all(kind, &expected(op)),
            "{} on {}",
            op.mpi_name(),
            b.mpi_name()
        );
    }
    // 32 integer types x 7 ops (arithmetic, min/max, bitwise) + 14 C integers x 3
    // logical ops + 8 logical types x 3 + 6 reals x 4 (every float kind).
    assert!(cases.len() >= 200, "only {} combinations", cases.len());
}

#[test]
fn integer_arithmetic_wraps_and_signedness_matters() {
    let io = run(Op::Sum, Basic::Int8, &[100], &[100]);
    assert_eq!(io, vec![200u8]); // -56 as two's complement
    assert_eq!(run(Op::Max, Basic::Int8, &[0xff], &[1]), vec![1]); // -1 < 1
    assert_eq!(run(Op::Max, Basic::Uint8, &[0xff], &[1]), vec![0xff]);
    let big = run(
        Op::Prod,
        Basic::Integer16,
        &(1i128 << 100).to_le_bytes(),
        &3i128.to_le_bytes(),
    );
    assert_eq!(big, (3i128 << 100).to_le_bytes().to_vec());
}

#[test]
fn complex_sum_and_product() {
    // (1 + 2i)(3 + 4i) = -5 + 10i ; (3 + 0i)(2 + 5i) = 6 + 15i
    let (a, b) = ([1, 2, 3, 0], [3, 4, 2, 5]);
    for &basic in Basic::ALL {
        let (kind, _, complex) = describe(basic);
        if !complex {
            continue;
        }
        let sum = run(Op::Sum, basic, &encode_all(kind, &a), &encode_all(kind, &b));
        assert_eq!(
            sum,
            encode_all(kind, &[4, 6, 5, 5]),
            "sum on {}",
            basic.mpi_name()
        );
        let prod = run(
            Op::Prod,
            basic,
            &encode_all(kind, &a),
            &encode_all(kind, &b),
        );
        assert_eq!(
            prod,
            encode_all(kind, &[-5, 10, 6, 15]),
            "prod on {}",
            basic.mpi_name()
        );
        assert!(!is_defined(Op::Min, basic) && !is_defined(Op::Band, basic));
    }
}

#[test]
fn floating_min_max_with_negatives_and_half_rounding() {
    let x = encode_all(Kind::X87, &[-3, 4]);
    let y = encode_all(Kind::X87, &[-5, 9]);
    assert_eq!(
        run(Op::Min, Basic::LongDouble, &x, &y),
        encode_all(Kind::X87, &[-5, 4])
    );
    assert_eq!(
        run(Op::Max, Basic::LongDouble, &x, &y),
        encode_all(Kind::X87, &[-3, 9])
    );
    assert_eq!(
        run(Op::Sum, Basic::LongDouble, &x, &y),
        encode_all(Kind::X87, &[-8, 13])
    );
    let q = encode_all(Kind::F128, &[-3, 4]);
    let r = encode_all(Kind::F128, &[7, -2]);
    assert_eq!(
        run(Op::Prod, Basic::Real16, &q, &r),
        encode_all(Kind::F128, &[-21, -8])
    );
    // binary16: 2049 is not representable; 2048 + 1 rounds to even (2048).
    let h = encode(Kind::F16, 2048);
    let one = encode(Kind::F16, 1);
    assert_eq!(run(Op::Sum, Basic::Real2, &h, &one), h);
    assert_eq!(
        run(Op::Sum, Basic::Real2, &h, &encode(Kind::F16, 3)),
        encode(Kind::F16, 2052)
    );
    // binary16 subnormals: 2^-24 + 2^-24 = 2^-23.
    assert_eq!(run(Op::Sum, Basic::Real2, &[1, 0], &[1, 0]), vec![2, 0]);
}

fn pair(b: Basic, value: i64, index: i64) -> Vec<u8> {
    let (v, i) = b.pair_members().unwrap();
    let kind = |m: Basic| match m {
        Basic::Float | Basic::Real => Kind::F32,
        Basic::Double | Basic::DoublePrecision => Kind::F64,
        Basic::LongDouble => Kind::X87,
        other => Kind::Int(other.size() as usize, true),
    };
    [encode(kind(v), value), encode(kind(i), index)].concat()
}

fn pairs(b: Basic, list: &[(i64, i64)]) -> Vec<u8> {
    list.iter().flat_map(|&(v, i)| pair(b, v, i)).collect()
}

#[test]
fn minloc_maxloc_on_every_pair_type_with_the_lower_index_winning_ties() {
    let a = [(3, 1), (5, 4), (-2, 9), (1, 3)];
    let b = [(3, 0), (4, 2), (-2, 10), (1, 3)];
    let mut seen = 0;
    for &basic in Basic::ALL {
        if basic.pair_members().is_none() {
            assert!(!is_defined(Op::MinLoc, basic) && !is_defined(Op::MaxLoc, basic));
            continue;
        }
        seen += 1;
        let min = run(Op::MinLoc, basic, &pairs(basic, &a), &pairs(basic, &b));
        assert_eq!(
            min,
            pairs(basic, &[(3, 0), (4, 2), (-2, 9), (1, 3)]),
            "MINLOC on {}",
            basic.mpi_name()
        );
        let max = run(Op::MaxLoc, basic, &pairs(basic, &a), &pairs(basic, &b));
        assert_eq!(
            max,
            pairs(basic, &[(3, 0), (5, 4), (-2, 9), (1, 3)]),
            "MAXLOC on {}",
            basic.mpi_name()
        );
        for op in [Op::Sum, Op::Min, Op::Max, Op::Prod, Op::Band, Op::Land] {
            assert!(
                !is_defined(op, basic),
                "{} on {}",
                op.mpi_name(),
                basic.mpi_name()
            );
        }
    }
    assert_eq!(seen, 9);
}

#[test]
fn replace_and_no_op_on_every_type() {
    for &b in Basic::ALL {
        let n = 3 * b.size() as usize;
        let input: Vec<u8> = (0..n as u8).collect();
        let inout = vec![0xaa; n];
        assert_eq!(run(Op::Replace, b, &input, &inout), input);
        assert_eq!(run(Op::NoOp, b, &input, &inout), inout);
    }
}

#[test]
fn undefined_combinations_and_bad_lengths_are_rejected() {
    let rejected = [
        (Op::Sum, Basic::TwoInt),
        (Op::Band, Basic::Float),
        (Op::Band, Basic::Logical),
        (Op::Min, Basic::CDoubleComplex),
        (Op::Land, Basic::Double),
        (Op::Land, Basic::Integer),
        (Op::MinLoc, Basic::Int),
        (Op::Max, Basic::Wchar),
        (Op::Sum, Basic::Character),
        (Op::Sum, Basic::Packed),
        (Op::Sum, Basic::Byte),
        (Op::Lor, Basic::Byte),
        (Op::Sum, Basic::CBool),
    ];
    for (op, b) in rejected {
        assert!(!is_defined(op, b));
        let n = b.size() as usize;
        let mut inout = vec![1u8; n];
        let e = apply(op, b, &vec![1u8; n], &mut inout).unwrap_err();
        assert_eq!((e.op, e.basic), (op, b));
        assert!(e
            .to_string()
            .starts_with(&format!("{} on {}", op.mpi_name(), b.mpi_name())));
        assert_eq!(inout, vec![1u8; n], "a rejected op leaves inout alone");
    }
    for (op, b) in [
        (Op::Band, Basic::Byte),
        (Op::Sum, Basic::Aint),
        (Op::Land, Basic::CxxBool),
        (Op::Bxor, Basic::Integer8),
        (Op::Sum, Basic::Char),
        (Op::Bor, Basic::Char),
        (Op::Lor, Basic::Aint),
        (Op::Lxor, Basic::Offset),
    ] {
        assert!(is_defined(op, b));
    }
    let mut inout = [0u8; 8];
    let e = apply(Op::Sum, Basic::Int, &[0u8; 4], &mut inout).unwrap_err();
    assert!(e.reason.contains("not the same whole number"), "{e}");
    let e = apply(Op::Sum, Basic::Int, &[0u8; 6], &mut inout[..6]).unwrap_err();
    assert!(e.reason.contains("4-byte"), "{e}");
}

/// An integer of `bytes` bytes read as the type reads it.
fn decode_int(bytes: &[u8], signed: bool) -> i128 {
    let mut raw = [0u8; 16];
    raw[..bytes.len()].copy_from_slice(bytes);
    let bits = 128 - 8 * bytes.len() as u32;
    let v = i128::from_le_bytes(raw) << bits;
    if signed {
        v >> bits
    } else {
        ((v as u128) >> bits) as i128
    }
}

/// Places `bytes` at `offset` of a fresh buffer, so the data starts at an odd address.
fn at_offset(bytes: &[u8], offset: usize) -> Vec<u8> {
    [vec![0xee; offset], bytes.to_vec()].concat()
}

#[test]
fn long_unaligned_buffers_match_the_element_by_element_reference() {
    // Lengths around the kernels' 16-element steps: empty, tail only, one step, a step
    // and a tail, several steps; data at offsets 0, 1 and 3 from an allocation.
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut checked = 0;
    for (b, kind, op) in elementwise_cases() {
        let size = b.size() as usize;
        for (n, offsets) in [
            (0, (0, 0)),
            (1, (1, 3)),
            (15, (0, 1)),
            (16, (3, 1)),
            (17, (1, 0)),
            (33, (0, 0)),
            (100, (3, 3)),
        ] {
            let (input, inout, want) = match kind {
                Kind::Int(_, signed) => {
                    let input: Vec<u8> = (0..n * size).map(|_| rng.next() as u8).collect();
                    let inout: Vec<u8> = (0..n * size).map(|_| rng.next() as u8).collect();
                    let want: Vec<u8> = input
                        .chunks(size)
                        .zip(inout.chunks(size))
                        .flat_map(|(x, y)| {
                            let v = combine(op, decode_int(x, signed), decode_int(y, signed));
                            v.to_le_bytes()[..size].to_vec()
                        })
                        .collect();
                    (input, inout, want)
                }
                // Small nonzero integers: exact in every float format, sums and
                // products too, and no product is a negative zero.
                _ => {
                    let mut draw = || -> Vec<i64> {
                        (0..n)
                            .map(|_| [-1, 1][rng.below(2) as usize] * (1 + rng.below(30) as i64))
                            .collect()
                    };
                    let (xs, ys) = (draw(), draw());
                    let want: Vec<i64> = xs
                        .iter()
                        .zip(&ys)
                        .map(|(&x, &y)| combine(op, x as i128, y as i128) as i64)
                        .collect();
                    (
                        encode_all(kind, &xs),
                        encode_all(kind, &ys),
                        encode_all(kind, &want),
                    )
                }
            };
            let input = at_offset(&input, offsets.0);
            let mut inout = at_offset(&inout, offsets.1);
            apply(op, b, &input[offsets.0..], &mut inout[offsets.1..]).unwrap();
            assert_eq!(
                inout,
                at_offset(&want, offsets.1),
                "{} on {n} x {} at offsets {offsets:?}",
                op.mpi_name(),
                b.mpi_name()
            );
            checked += 1;
        }
    }
    assert!(checked >= 1400, "only {checked} cases");
}

#[test]
fn long_minloc_maxloc_with_many_ties_match_the_reference() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for &b in Basic::ALL {
        if b.pair_members().is_none() {
            continue;
        }
        for (n, offsets) in [
            (0, (0, 0)),
            (1, (1, 0)),
            (7, (0, 3)),
            (16, (1, 1)),
            (100, (3, 0)),
        ] {
            // Values and indices from small ranges, so ties of both are frequent.
            let mut draw = || -> Vec<(i64, i64)> {
                (0..n)
                    .map(|_| (rng.below(7) as i64 - 3, rng.below(5) as i64))
                    .collect()
            };
            let (xs, ys) = (draw(), draw());
            for op in [Op::MinLoc, Op::MaxLoc] {
                let want: Vec<(i64, i64)> = xs
                    .iter()
                    .zip(&ys)
                    .map(|(&x, &y)| {
                        let better = if op == Op::MinLoc {
                            x.0 < y.0
                        } else {
                            x.0 > y.0
                        };
                        if better || (x.0 == y.0 && x.1 < y.1) {
                            x
                        } else {
                            y
                        }
                    })
                    .collect();
                let input = at_offset(&pairs(b, &xs), offsets.0);
                let mut inout = at_offset(&pairs(b, &ys), offsets.1);
                apply(op, b, &input[offsets.0..], &mut inout[offsets.1..]).unwrap();
                assert_eq!(
                    inout,
                    at_offset(&pairs(b, &want), offsets.1),
                    "{} on {n} x {}",
                    op.mpi_name(),
                    b.mpi_name()
                );
            }
        }
    }
}

#[test]
fn min_max_keep_inout_when_a_value_is_nan() {
    // The comparison is false for NaN, so inout stays: in the blocked part and the tail.
    for n in [3usize, 16, 19] {
        let input: Vec<u8> = (0..n).flat_map(|_| f64::NAN.to_ne_bytes()).collect();
        let inout: Vec<u8> = (0..n).flat_map(|i| (i as f64).to_ne_bytes()).collect();
        for op in [Op::Min, Op::Max] {
            assert_eq!(
                run(op, Basic::Double, &input, &inout),
                inout,
                "{} on {n}",
                op.mpi_name()
            );
        }
        let pairs_nan: Vec<u8> = (0..n)
            .flat_map(|_| [f32::NAN.to_ne_bytes(), 0i32.to_ne_bytes()].concat())
            .collect();
        let pairs_one: Vec<u8> = (0..n)
            .flat_map(|i| [1f32.to_ne_bytes(), (i as i32 + 1).to_ne_bytes()].concat())
            .collect();
        assert_eq!(
            run(Op::MinLoc, Basic::FloatInt, &pairs_nan, &pairs_one),
            pairs_one
        );
        assert_eq!(
            run(Op::MaxLoc, Basic::FloatInt, &pairs_nan, &pairs_one),
            pairs_one
        );
    }
}

#[test]
fn long_complex_sums_and_products_match_the_reference() {
    // 19 complex numbers: a full 16-scalar step of the blocked sum and a tail, at an odd
    // address; small nonzero integer parts keep every result exact and no part a
    // negative zero.
    let mut rng = Rng(0x51_7cc1_b727_220a);
    let mut draw = || -> Vec<i64> {
        (0..2 * 19)
            .map(|_| [-1, 1][rng.below(2) as usize] * (1 + rng.below(10) as i64))
            .collect()
    };
    let (xs, ys) = (draw(), draw());
    let sum: Vec<i64> = xs.iter().zip(&ys).map(|(x, y)| x + y).collect();
    let prod: Vec<i64> = xs
        .chunks(2)
        .zip(ys.chunks(2))
        .flat_map(|(x, y)| [x[0] * y[0] - x[1] * y[1], x[0] * y[1] + x[1] * y[0]])
        .collect();
    for &basic in Basic::ALL {
        let (kind, _, complex) = describe(basic);
        if !complex {
            continue;
        }
        for (op, want) in [(Op::Sum, &sum), (Op::Prod, &prod)] {
            let input = at_offset(&encode_all(kind, &xs), 1);
            let mut inout = at_offset(&encode_all(kind, &ys), 3);
            apply(op, basic, &input[1..], &mut inout[3..]).unwrap();
            // Products of parts up to 10 stay below 2^11: exact even in binary16.
            assert_eq!(
                inout,
                at_offset(&encode_all(kind, want), 3),
                "{} on {}",
                op.mpi_name(),
                basic.mpi_name()
            );
        }
    }
}
