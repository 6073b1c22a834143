//! external32: byte-exact known vectors, conversions that must fail, round trips.

use crossmpi_datatype::{Basic, Datatype, ErrorKind};

fn ext(t: &Datatype, buf: &[u8], count: u64) -> Vec<u8> {
    let mut out = vec![0u8; t.external32_size(count) as usize];
    t.pack_external32(buf, 0, count, &mut out).unwrap();
    out
}

fn ext_basic(b: Basic, native: &[u8]) -> Vec<u8> {
    ext(&Datatype::basic(b), native, 1)
}

/// x87 extended bytes from its 64-bit significand and sign/exponent word.
fn x87(mant: u64, sign_exp: u16) -> Vec<u8> {
    let mut v = mant.to_le_bytes().to_vec();
    v.extend(sign_exp.to_le_bytes());
    v.extend([0u8; 6]);
    v
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn integers_are_big_endian_with_standard_sizes() {
    assert_eq!(ext_basic(Basic::Int, &1i32.to_ne_bytes()), hex("00000001"));
    assert_eq!(
        ext_basic(Basic::Int, &(-2i32).to_ne_bytes()),
        hex("fffffffe")
    );
    assert_eq!(
        ext_basic(Basic::Short, &0x1234i16.to_ne_bytes()),
        hex("1234")
    );
    assert_eq!(ext_basic(Basic::Long, &1i64.to_ne_bytes()), hex("00000001"));
    assert_eq!(
        ext_basic(Basic::Long, &(-1i64).to_ne_bytes()),
        hex("ffffffff")
    );
    assert_eq!(
        ext_basic(Basic::UnsignedLong, &0xffff_ffffu64.to_ne_bytes()),
        hex("ffffffff")
    );
    assert_eq!(
        ext_basic(Basic::LongLong, &0x0102_0304_0506_0708i64.to_ne_bytes()),
        hex("0102030405060708")
    );
    assert_eq!(
        ext_basic(Basic::Aint, &(-8i64).to_ne_bytes()),
        hex("fffffffffffffff8")
    );
    assert_eq!(ext_basic(Basic::Wchar, &0x41u32.to_ne_bytes()), hex("0041"));
    assert_eq!(
        ext_basic(Basic::Logical, &1i32.to_ne_bytes()),
        hex("00000001")
    );
    assert_eq!(ext_basic(Basic::CBool, &[1]), hex("01"));
    assert_eq!(
        ext_basic(Basic::Integer16, &(-1i128).to_ne_bytes()),
        vec![0xff; 16]
    );
    assert_eq!(
        ext_basic(Basic::Uint16, &0xabcdu16.to_ne_bytes()),
        hex("abcd")
    );
}

#[test]
fn floats_are_big_endian_ieee() {
    assert_eq!(
        ext_basic(Basic::Float, &1.0f32.to_ne_bytes()),
        hex("3f800000")
    );
    assert_eq!(
        ext_basic(Basic::Double, &(-2.5f64).to_ne_bytes()),
        hex("c004000000000000")
    );
    assert_eq!(
        ext_basic(Basic::Real2, &0x3c00u16.to_ne_bytes()),
        hex("3c00")
    );
    let mut c = 1.0f32.to_ne_bytes().to_vec();
    c.extend((-1.0f32).to_ne_bytes());
    assert_eq!(
        ext_basic(Basic::CFloatComplex, &c),
        hex("3f800000 bf800000")
    );
}

#[test]
fn long_double_becomes_binary128() {
    let one = x87(1 << 63, 0x3fff);
    assert_eq!(
        ext_basic(Basic::LongDouble, &one),
        hex("3fff0000000000000000000000000000")
    );
    // -2.5 = -1.25 * 2^1
    let m = x87(0xa000_0000_0000_0000, 0xc000);
    assert_eq!(
        ext_basic(Basic::LongDouble, &m),
        hex("c0004000000000000000000000000000")
    );
    assert_eq!(ext_basic(Basic::LongDouble, &x87(0, 0)), vec![0; 16]);
    assert_eq!(
        ext_basic(Basic::LongDouble, &x87(0, 0x8000)),
        hex("80000000000000000000000000000000")
    );
    assert_eq!(
        ext_basic(Basic::LongDouble, &x87(1 << 63, 0x7fff)),
        hex("7fff0000000000000000000000000000")
    );
    assert_eq!(
        ext_basic(Basic::LongDouble, &x87(0xc000_0000_0000_0000, 0x7fff)),
        hex("7fff8000000000000000000000000000")
    );
    // The smallest x87 denormal, 2^-16445, is a binary128 denormal too.
    assert_eq!(
        ext_basic(Basic::LongDouble, &x87(1, 0)),
        hex("00000000000000000002000000000000")
    );
    // Every bit of the significand survives: quad has more.
    let fine = x87(0xffff_ffff_ffff_ffff, 0x3fff);
    let q = ext_basic(Basic::LongDouble, &fine);
    assert_eq!(q, hex("3fff fffffffffffffffe 000000000000"));
    let mut back = vec![0u8; 16];
    Datatype::basic(Basic::LongDouble)
        .unpack_external32(&q, &mut back, 0, 1)
        .unwrap();
    assert_eq!(back, fine);
}

fn from_quad(q: &str) -> Vec<u8> {
    let mut back = vec![0u8; 16];
    Datatype::basic(Basic::LongDouble)
        .unpack_external32(&hex(q), &mut back, 0, 1)
        .unwrap();
    back
}

#[test]
fn binary128_rounds_to_nearest_even_into_x87() {
    // 1 + 2^-64: a tie between 1 and 1 + 2^-63, to even: 1.
    assert_eq!(
        from_quad("3fff 0000000000000001 0000 00000000"),
        x87(1 << 63, 0x3fff)
    );
    // 1 + 3 * 2^-64: a tie, to even: 1 + 2^-62.
    assert_eq!(
        from_quad("3fff 0000000000000003 0000 00000000"),
        x87((1 << 63) | 2, 0x3fff)
    );
    // Just above the tie rounds up.
    assert_eq!(
        from_quad("3fff 0000000000000001 0000 00000001"),
        x87((1 << 63) | 1, 0x3fff)
    );
    // The largest binary128 rounds up past the largest x87: infinity.
    assert_eq!(
        from_quad("7ffe ffffffffffffffff ffff ffffffff"),
        x87(1 << 63, 0x7fff)
    );
    // A NaN whose payload is only in the dropped bits stays a NaN.
    let nan = from_quad("7fff 0000000000000000 0000 00000001");
    assert_eq!(&nan[8..10], &[0xff, 0x7f]);
    assert_ne!(u64::from_le_bytes(nan[..8].try_into().unwrap()), 1 << 63);
}

#[test]
fn values_that_do_not_fit_are_conversion_errors() {
    let long = Datatype::basic(Basic::Long);
    let values = [1i64, 1 << 40];
    let buf: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let mut out = [0u8; 8];
    let e = long.pack_external32(&buf, 0, 2, &mut out).unwrap_err();
    assert_eq!(
        (e.kind, e.function, e.argument),
        (ErrorKind::Conversion, "MPI_Pack_external", "inbuf")
    );
    assert_eq!(e.value, (1i64 << 40).to_string());
    assert!(e.reason.contains("element 1 (MPI_LONG)"), "{}", e.reason);
    let e = Datatype::basic(Basic::UnsignedLong)
        .pack_external32(&(1u64 << 32).to_ne_bytes(), 0, 1, &mut out)
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conversion);
    let e = Datatype::basic(Basic::Wchar)
        .pack_external32(&0x1f600u32.to_ne_bytes(), 0, 1, &mut out)
        .unwrap_err();
    assert_eq!(e.value, "128512");
    let e = long.pack_external32(&buf, 0, 2, &mut out[..7]).unwrap_err();
    assert_eq!((e.kind, e.argument), (ErrorKind::Truncate, "outsize"));
}

#[test]
fn pairs_and_derived_types() {
    let mut di = 1.5f64.to_ne_bytes().to_vec();
    di.extend(7i32.to_ne_bytes());
    di.extend([0xee; 4]); // padding
    assert_eq!(
        ext_basic(Basic::DoubleInt, &di),
        hex("3ff8000000000000 00000007")
    );
    let mut li = 5i64.to_ne_bytes().to_vec();
    li.extend(6i32.to_ne_bytes());
    assert_eq!(ext_basic(Basic::LongInt, &li), hex("00000005 00000006"));
    let long = Datatype::basic(Basic::Long);
    let v = Datatype::vector(2, 1, 2, &long).unwrap();
    let buf: Vec<u8> = [10i64, 11, 12]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    assert_eq!(ext(&v, &buf, 1), hex("0000000a 0000000c"));
    let st =
        Datatype::structure(&[1, 2], &[0, 8], &[Datatype::basic(Basic::Double), long]).unwrap();
    assert_eq!(st.external32_size(3), 3 * 16);
}

#[test]
fn round_trip_of_a_mixed_structure() {
    let types = [
        Datatype::basic(Basic::Char),
        Datatype::basic(Basic::LongDouble),
        Datatype::basic(Basic::Long),
        Datatype::basic(Basic::ShortInt),
        Datatype::basic(Basic::CDoubleComplex),
    ];
    let st = Datatype::structure(&[3, 1, 2, 1, 1], &[0, 16, 32, 48, 64], &types).unwrap();
    let count: u64 = 5;
    let len = (st.extent() * count as i64) as usize;
    let mut buf = vec![0u8; len];
    let mut rng = 12345u64;
    // Random bytes except where values must fit: longs get small values, long doubles
    // get valid normal numbers.
    for (i, byte) in buf.iter_mut().enumerate() {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *byte = (rng >> 33) as u8 ^ i as u8;
    }
    for e in 0..count as usize {
        let base = e * st.extent() as usize;
        buf[base + 32..base + 48].copy_from_slice(
            &[
                (-7i64 - e as i64).to_ne_bytes(),
                (e as i64 * 1000).to_ne_bytes(),
            ]
            .concat(),
        );
        buf[base + 16..base + 32].copy_from_slice(&x87(0x8000_0000_1234_5678 ^ e as u64, 0x4001));
    }
    let mut packed = vec![0u8; st.external32_size(count) as usize];
    st.pack_external32(&buf, 0, count, &mut packed).unwrap();
    let mut back = vec![0u8; len];
    st.unpack_external32(&packed, &mut back, 0, count).unwrap();
    let mut want_native = vec![0u8; st.packed_size(count) as usize];
    let mut got_native = want_native.clone();
    st.pack(&buf, 0, count, 0, &mut want_native);
    st.pack(&back, 0, count, 0, &mut got_native);
    assert_eq!(got_native, want_native);
}
