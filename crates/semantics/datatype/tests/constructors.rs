//! Sizes, bounds, envelopes and contents of every constructor, argument checks, and
//! subarray/darray against element-by-element references.

mod common;

use common::{check_pack, Rng};
use crossmpi_datatype::{
    Basic, Combiner, Datatype, Distribution, ErrorKind, Marker, Order, DFLT_DARG, F90,
};

fn b(basic: Basic) -> Datatype {
    Datatype::basic(basic)
}

/// (size, lb, extent, true_lb, true_extent)
fn bounds(t: &Datatype) -> (u64, i64, i64, i64, i64) {
    assert_eq!(t.ub(), t.lb() + t.extent());
    (t.size(), t.lb(), t.extent(), t.true_lb(), t.true_extent())
}

#[test]
fn every_predefined_type_is_one_shared_value_and_built_types_are_new() {
    for &basic in Basic::ALL {
        let t = b(basic);
        assert_eq!(
            t.basic_kind(),
            Some(basic),
            "{basic:?} maps to its own entry"
        );
        assert!(t.same(&b(basic)) && t.same(&t.clone()));
        assert!(!t.dup().same(&t), "a dup of {basic:?} is a type of its own");
    }
    let c = Datatype::contiguous(2, &b(Basic::Int)).unwrap();
    assert!(c.same(&c.clone()));
    assert!(!c.same(&Datatype::contiguous(2, &b(Basic::Int)).unwrap()));
}

#[test]
fn predefined_sizes_and_pair_padding() {
    assert_eq!(bounds(&b(Basic::Int)), (4, 0, 4, 0, 4));
    assert_eq!(bounds(&b(Basic::LongDouble)), (16, 0, 16, 0, 16));
    assert_eq!(bounds(&b(Basic::DoubleInt)), (12, 0, 16, 0, 12));
    assert_eq!(bounds(&b(Basic::ShortInt)), (6, 0, 8, 0, 8));
    assert_eq!(bounds(&b(Basic::LongInt)), (12, 0, 16, 0, 12));
    assert_eq!(bounds(&b(Basic::LongDoubleInt)), (20, 0, 32, 0, 20));
    assert_eq!(bounds(&b(Basic::TwoInt)), (8, 0, 8, 0, 8));
    assert_eq!(bounds(&b(Basic::CLongDoubleComplex)), (32, 0, 32, 0, 32));
    assert_eq!(bounds(&b(Basic::Complex32)), (32, 0, 32, 0, 32));
    assert_eq!(bounds(&b(Basic::Wchar)), (4, 0, 4, 0, 4));
    assert_eq!(b(Basic::LongLong).basic_kind(), Some(Basic::LongLong));
    assert_eq!(
        Basic::TwoDoublePrecision.mpi_name(),
        "MPI_2DOUBLE_PRECISION"
    );
    assert_eq!(Basic::Long.external32_size(), 4);
    let env = b(Basic::Float).envelope();
    assert_eq!(env.combiner, Combiner::Named);
    assert_eq!(
        (
            env.num_integers,
            env.num_addresses,
            env.num_large_counts,
            env.num_datatypes
        ),
        (0, 0, 0, 0)
    );
}

#[test]
fn contiguous_vector_hvector() {
    let int = b(Basic::Int);
    let c = Datatype::contiguous(3, &int).unwrap();
    assert_eq!(bounds(&c), (12, 0, 12, 0, 12));
    assert_eq!(c.envelope().combiner, Combiner::Contiguous);
    assert_eq!(c.contents().integers, vec![3]);
    let v = Datatype::vector(3, 2, 4, &int).unwrap();
    assert_eq!(bounds(&v), (24, 0, 40, 0, 40));
    assert_eq!(v.contents().integers, vec![3, 2, 4]);
    let neg = Datatype::vector(3, 1, -2, &b(Basic::Double)).unwrap();
    assert_eq!(bounds(&neg), (24, -32, 40, -32, 40));
    let h = Datatype::hvector(2, 3, 100, &int).unwrap();
    assert_eq!(bounds(&h), (24, 0, 112, 0, 112));
    let (env, con) = (h.envelope(), h.contents());
    assert_eq!(
        (
            env.combiner,
            env.num_integers,
            env.num_addresses,
            env.num_datatypes
        ),
        (Combiner::Hvector, 2, 1, 1)
    );
    assert_eq!((con.integers, con.addresses), (vec![2, 3], vec![100]));
    assert_eq!(con.datatypes[0].basic_kind(), Some(Basic::Int));
    let empty = Datatype::contiguous(0, &int).unwrap();
    assert_eq!(bounds(&empty), (0, 0, 0, 0, 0));
    assert_eq!(empty.span(5), (0, 0));
}

#[test]
fn indexed_family() {
    let int = b(Basic::Int);
    let i = Datatype::indexed(&[2, 1], &[4, 0], &int).unwrap();
    assert_eq!(bounds(&i), (12, 0, 24, 0, 24));
    assert_eq!(i.contents().integers, vec![2, 2, 1, 4, 0]);
    assert_eq!(i.envelope().num_integers, 5);
    let h = Datatype::hindexed(&[1, 1], &[-8, 16], &b(Basic::Double)).unwrap();
    assert_eq!(bounds(&h), (16, -8, 32, -8, 32));
    let c = h.contents();
    assert_eq!((c.integers, c.addresses), (vec![2, 1, 1], vec![-8, 16]));
    let ib = Datatype::indexed_block(2, &[1, 5], &b(Basic::Short)).unwrap();
    assert_eq!(bounds(&ib), (8, 2, 12, 2, 12));
    assert_eq!(ib.contents().integers, vec![2, 2, 1, 5]);
    let hb = Datatype::hindexed_block(1, &[12, 0], &int).unwrap();
    assert_eq!(bounds(&hb), (8, 0, 16, 0, 16));
    let c = hb.contents();
    assert_eq!((c.integers, c.addresses), (vec![2, 1], vec![12, 0]));
    // Zero-length blocks add nothing, not even bounds.
    let z = Datatype::indexed(&[0, 1], &[100, 1], &int).unwrap();
    assert_eq!(bounds(&z), (4, 4, 4, 4, 4));
}

#[test]
fn struct_extent_is_padded_to_the_most_aligned_member() {
    let (ch, d, int) = (b(Basic::Char), b(Basic::Double), b(Basic::Int));
    let cd = Datatype::structure(&[1, 1], &[0, 8], &[ch.clone(), d.clone()]).unwrap();
    assert_eq!(bounds(&cd), (9, 0, 16, 0, 16));
    let dc = Datatype::structure(&[1, 1], &[0, 8], &[d.clone(), ch.clone()]).unwrap();
    assert_eq!(bounds(&dc), (9, 0, 16, 0, 9));
    let ic = Datatype::structure(&[1, 1], &[0, 4], &[int.clone(), ch.clone()]).unwrap();
    assert_eq!(bounds(&ic), (5, 0, 8, 0, 5));
    let cc = Datatype::structure(&[2], &[0], std::slice::from_ref(&ch)).unwrap();
    assert_eq!(bounds(&cc), (2, 0, 2, 0, 2));
    // The pair types are exactly such structures.
    let di = Datatype::structure(&[1, 1], &[0, 8], &[d.clone(), int.clone()]).unwrap();
    assert_eq!(bounds(&di), bounds(&b(Basic::DoubleInt)));
    assert!(di.signature_matches_prefix(1, &b(Basic::DoubleInt), 1));
    // Explicit bounds (resized) switch the padding off and set lb/ub alone.
    let r = Datatype::resized(&int, 0, 6).unwrap();
    let rs = Datatype::structure(&[1, 1], &[0, 6], &[r, ch.clone()]).unwrap();
    assert_eq!(bounds(&rs), (5, 0, 6, 0, 7));
    let (env, c) = (dc.envelope(), dc.contents());
    assert_eq!(
        (env.num_integers, env.num_addresses, env.num_datatypes),
        (3, 2, 2)
    );
    assert_eq!((c.integers, c.addresses), (vec![2, 1, 1], vec![0, 8]));
    assert_eq!(c.datatypes[1].basic_kind(), Some(Basic::Char));
}

#[test]
fn resized_and_dup() {
    let int = b(Basic::Int);
    let r = Datatype::resized(&int, -4, 16).unwrap();
    assert_eq!(bounds(&r), (4, -4, 16, 0, 4));
    assert_eq!(r.contents().addresses, vec![-4, 16]);
    assert_eq!(r.envelope().num_addresses, 2);
    let c = Datatype::contiguous(2, &r).unwrap();
    assert_eq!(bounds(&c), (8, -4, 32, 0, 20));
    assert_eq!(c.span(2), (0, 52));
    let d = c.dup();
    assert_eq!(bounds(&d), bounds(&c));
    assert_eq!(d.envelope().combiner, Combiner::Dup);
    assert_eq!(d.contents().datatypes.len(), 1);
    assert_eq!(d.basic_kind(), None);
    assert_eq!(b(Basic::Int).dup().uniform_basic(), Some(Basic::Int));
}

#[test]
fn fortran_90_types_are_laid_out_as_their_kind_and_report_the_request() {
    let undefined = -32766;
    let real = Datatype::f90(F90::Real { p: 6, r: undefined }, Basic::Real4);
    assert_eq!(bounds(&real), bounds(&b(Basic::Real4)));
    assert_eq!(
        real.uniform_basic(),
        Some(Basic::Real4),
        "reductions see a REAL*4"
    );
    assert_eq!(real.basic_kind(), None, "not the named type itself");
    let e = real.envelope();
    assert_eq!((e.combiner, e.num_integers), (Combiner::F90Real, 2));
    assert_eq!(e.num_addresses + e.num_datatypes, 0);
    assert_eq!(real.contents().integers, [6, i64::from(undefined)]);
    let int = Datatype::f90(F90::Integer { r: 9 }, Basic::Integer4);
    assert_eq!(int.envelope().combiner, Combiner::F90Integer);
    assert_eq!(int.contents().integers, [9]);
    assert_eq!(
        int.f90_kind(),
        Some((F90::Integer { r: 9 }, Basic::Integer4))
    );
    let complex = Datatype::f90(F90::Complex { p: 15, r: 0 }, Basic::Complex16);
    assert_eq!(complex.envelope().combiner, Combiner::F90Complex);
    assert_eq!(complex.size(), 16);
    let v = Datatype::vector(2, 1, 3, &complex).unwrap();
    check_pack(&v, &common::byte_map(&v), 2);
    assert_eq!(v.contents().datatypes[0].f90_kind(), complex.f90_kind());
}

#[test]
fn mpi1_markers_set_sticky_bounds_each_on_its_own() {
    let (lower, upper) = (
        Datatype::marker(Marker::Lower),
        Datatype::marker(Marker::Upper),
    );
    assert_eq!(bounds(&lower), (0, 0, 0, 0, 0));
    assert_eq!(upper.envelope().combiner, Combiner::Named);
    let (int, chr, dbl) = (b(Basic::Int), b(Basic::Char), b(Basic::Double));
    // One element each of three types at the given displacements.
    let three = |displs: [i64; 3], types: [&Datatype; 3]| {
        Datatype::structure(&[1, 1, 1], &displs, &types.map(Datatype::clone)).unwrap()
    };
    // Both markers: the bounds are theirs, the data's are the true ones.
    let t = three([-4, 0, 12], [&lower, &int, &upper]);
    assert_eq!(bounds(&t), (4, -4, 16, 0, 4));
    // An upper marker alone: no alignment padding.
    let u = three([0, 8, 20], [&dbl, &chr, &upper]);
    assert_eq!(bounds(&u), (9, 0, 20, 0, 9));
    // A lower marker alone: the upper bound is the data's, padded to the alignment.
    let l = three([4, 8, 12], [&lower, &int, &chr]);
    assert_eq!(bounds(&l), (5, 4, 12, 8, 5));
    // Sticky: a type holding `t` keeps t's markers over other data.
    let two = Datatype::contiguous(2, &t).unwrap();
    assert_eq!(bounds(&two), (8, -4, 32, 0, 20));
    let outer = Datatype::structure(&[1, 1], &[0, 100], &[t.clone(), chr]).unwrap();
    assert_eq!((outer.lb(), outer.ub()), (-4, 12));
    assert_eq!(outer.true_lb() + outer.true_extent(), 101);
    check_pack(&outer, &common::byte_map(&outer), 2);
}

#[test]
fn large_count_constructors_report_large_counts() {
    let int = b(Basic::Int);
    let v = Datatype::vector(3, 2, 4, &int).unwrap().with_large_counts();
    let (env, c) = (v.envelope(), v.contents());
    assert_eq!((env.num_integers, env.num_large_counts), (0, 3));
    assert_eq!(c.large_counts, vec![3, 2, 4]);
    let h = Datatype::hindexed(&[1, 2], &[0, 64], &int)
        .unwrap()
        .with_large_counts();
    assert_eq!(h.contents().large_counts, vec![2, 1, 2, 0, 64]);
    assert_eq!(h.envelope().num_addresses, 0);
    let s = Datatype::subarray(&[4, 5], &[2, 3], &[1, 2], Order::C, &int)
        .unwrap()
        .with_large_counts();
    let c = s.contents();
    assert_eq!(
        (c.integers, c.large_counts),
        (vec![2, 0xC], vec![4, 5, 2, 3, 1, 2])
    );
}

#[test]
fn signatures_and_elements() {
    let (int, d) = (b(Basic::Int), b(Basic::Double));
    let v = Datatype::vector(3, 2, 4, &int).unwrap();
    assert_eq!(v.uniform_basic(), Some(Basic::Int));
    assert!(v.signature_matches_prefix(1, &int, 6));
    assert!(v.signature_matches_prefix(1, &int, 7));
    assert!(!v.signature_matches_prefix(1, &int, 5));
    assert!(!v.signature_matches_prefix(1, &d, 6));
    assert!(int.signature_matches_prefix(2, &b(Basic::TwoInt), 1));
    assert!(v.signature_matches_prefix(1, &b(Basic::Packed), 24));
    let st = Datatype::structure(&[1, 2], &[0, 8], &[d.clone(), int.clone()]).unwrap();
    assert_eq!(st.uniform_basic(), None);
    assert_eq!(st.elements_in(16), Some(3));
    assert_eq!(st.elements_in(12), Some(2));
    assert_eq!(st.elements_in(10), None);
    assert_eq!(st.elements_in(16 + 8), Some(4));
    assert_eq!(b(Basic::DoubleInt).elements_in(8), Some(1));
    assert_eq!(b(Basic::DoubleInt).elements_in(24), Some(4));
    assert_eq!(b(Basic::DoubleInt).elements_in(9), None);
    let ctg = Datatype::contiguous(4, &b(Basic::DoubleInt)).unwrap();
    assert_eq!(ctg.uniform_basic(), Some(Basic::DoubleInt));
}

#[test]
fn bad_arguments_are_named() {
    let int = b(Basic::Int);
    let e = Datatype::indexed(&[1, 2], &[0], &int).unwrap_err();
    assert_eq!(
        (e.function, e.argument, e.kind),
        (
            "MPI_Type_indexed",
            "array_of_displacements",
            ErrorKind::Argument
        )
    );
    assert!(e
        .to_string()
        .starts_with("MPI_Type_indexed: array_of_displacements = an array of 1 entries"));
    let e = Datatype::structure(&[1], &[0], &[]).unwrap_err();
    assert_eq!(e.argument, "array_of_types");
    let e = Datatype::contiguous(u64::MAX, &int).unwrap_err();
    assert_eq!(
        (e.function, e.argument, e.kind),
        ("MPI_Type_contiguous", "count", ErrorKind::Overflow)
    );
    let e = Datatype::vector(2, 1, i64::MAX / 2, &int).unwrap_err();
    assert_eq!(
        (e.argument, e.value.as_str()),
        ("stride", "4611686018427387903")
    );
    let e = Datatype::hvector(3, 1, i64::MAX / 2, &int).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Overflow);
    let e = Datatype::resized(&int, i64::MAX, 10).unwrap_err();
    assert_eq!(e.function, "MPI_Type_create_resized");
    let e = Datatype::subarray(&[4, 4], &[2, 5], &[0, 0], Order::C, &int).unwrap_err();
    assert_eq!(e.argument, "array_of_subsizes");
    let e = Datatype::subarray(&[4, 4], &[2, 2], &[0, 3], Order::C, &int).unwrap_err();
    assert_eq!(e.argument, "array_of_starts");
    let e = Datatype::subarray(&[], &[], &[], Order::C, &int).unwrap_err();
    assert_eq!(e.argument, "ndims");
    let blk = [Distribution::Block, Distribution::Block];
    let e = Datatype::darray(
        4,
        0,
        &[8, 8],
        &blk,
        &[DFLT_DARG; 2],
        &[3, 1],
        Order::C,
        &int,
    )
    .unwrap_err();
    assert_eq!(e.argument, "array_of_psizes");
    let e = Datatype::darray(
        4,
        4,
        &[8, 8],
        &blk,
        &[DFLT_DARG; 2],
        &[2, 2],
        Order::C,
        &int,
    )
    .unwrap_err();
    assert_eq!(e.argument, "rank");
    let e = Datatype::darray(
        4,
        0,
        &[8, 8],
        &blk,
        &[3, DFLT_DARG],
        &[2, 2],
        Order::C,
        &int,
    )
    .unwrap_err();
    assert_eq!((e.argument, e.value.as_str()), ("array_of_dargs", "3"));
    let none = [Distribution::None, Distribution::Block];
    let e = Datatype::darray(
        4,
        0,
        &[8, 8],
        &none,
        &[DFLT_DARG; 2],
        &[2, 2],
        Order::C,
        &int,
    )
    .unwrap_err();
    assert_eq!(e.argument, "array_of_psizes");
}

/// Linear element indices of an n-d array in memory order for `order`.
fn memory_order(dims: &[u64], order: Order) -> Vec<Vec<u64>> {
    let n = dims.len();
    let total: u64 = dims.iter().product();
    (0..total)
        .map(|mut lin| {
            let mut idx = vec![0; n];
            let fastest_first: Vec<usize> = match order {
                Order::C => (0..n).rev().collect(),
                Order::Fortran => (0..n).collect(),
            };
            for &i in &fastest_first {
                idx[i] = lin % dims[i];
                lin /= dims[i];
            }
            idx
        })
        .collect()
}

fn linear(idx: &[u64], dims: &[u64], order: Order) -> i64 {
    let mut lin = 0;
    let slowest_first: Vec<usize> = match order {
        Order::C => (0..dims.len()).collect(),
        Order::Fortran => (0..dims.len()).rev().collect(),
    };
    for &i in &slowest_first {
        lin = lin * dims[i] + idx[i];
    }
    lin as i64
}

/// The byte map of the elements selected by `keep`, in memory order.
fn array_map(
    dims: &[u64],
    order: Order,
    old: &Datatype,
    keep: impl Fn(&[u64]) -> bool,
) -> Vec<i64> {
    let old_map = common::byte_map(old);
    memory_order(dims, order)
        .iter()
        .filter(|idx| keep(idx))
        .flat_map(|idx| {
            let at = linear(idx, dims, order) * old.extent();
            old_map.iter().map(move |x| x + at).collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn subarray_matches_the_element_reference() {
    let int = b(Basic::Int);
    let s = Datatype::subarray(&[4, 5], &[2, 3], &[1, 2], Order::C, &int).unwrap();
    assert_eq!(bounds(&s), (24, 0, 80, 28, 32));
    let c = s.contents();
    assert_eq!(c.integers, vec![2, 4, 5, 2, 3, 1, 2, 0xC]);
    let mut rng = Rng(77);
    for _ in 0..40 {
        let n = 1 + rng.below(3) as usize;
        let sizes: Vec<u64> = (0..n).map(|_| 1 + rng.below(5)).collect();
        let subsizes: Vec<u64> = sizes.iter().map(|&s| 1 + rng.below(s)).collect();
        let starts: Vec<u64> = sizes
            .iter()
            .zip(&subsizes)
            .map(|(&s, &ss)| rng.below(s - ss + 1))
            .collect();
        let order = if rng.below(2) == 0 {
            Order::C
        } else {
            Order::Fortran
        };
        let old = if rng.below(2) == 0 {
            b(Basic::Short)
        } else {
            b(Basic::ShortInt)
        };
        let t = Datatype::subarray(&sizes, &subsizes, &starts, order, &old).unwrap();
        let map = array_map(&sizes, order, &old, |idx| {
            idx.iter()
                .enumerate()
                .all(|(i, &x)| x >= starts[i] && x < starts[i] + subsizes[i])
        });
        assert_eq!(
            (t.lb(), t.extent()),
            (0, sizes.iter().product::<u64>() as i64 * old.extent())
        );
        check_pack(&t, &map, 1 + rng.below(2));
    }
}

#[test]
fn darray_matches_the_ownership_reference() {
    let mut rng = Rng(4242);
    let dists = [
        Distribution::Block,
        Distribution::Cyclic,
        Distribution::None,
    ];
    for _ in 0..60 {
        let n = 1 + rng.below(3) as usize;
        let gsizes: Vec<u64> = (0..n).map(|_| 1 + rng.below(9)).collect();
        let distribs: Vec<Distribution> = (0..n).map(|_| dists[rng.below(3) as usize]).collect();
        let psizes: Vec<u64> = distribs
            .iter()
            .map(|d| {
                if *d == Distribution::None {
                    1
                } else {
                    1 + rng.below(3)
                }
            })
            .collect();
        let dargs: Vec<i64> = (0..n)
            .map(|i| match distribs[i] {
                Distribution::Cyclic if rng.below(2) == 0 => 1 + rng.below(3) as i64,
                Distribution::Block if rng.below(2) == 0 => {
                    gsizes[i].div_ceil(psizes[i]) as i64 + rng.below(2) as i64
                }
                _ => DFLT_DARG,
            })
            .collect();
        let size: u64 = psizes.iter().product();
        let order = if rng.below(2) == 0 {
            Order::C
        } else {
            Order::Fortran
        };
        let old = b(Basic::Int);
        for rank in 0..size {
            let t = Datatype::darray(size, rank, &gsizes, &distribs, &dargs, &psizes, order, &old)
                .unwrap();
            let mut coords = vec![0; n];
            let mut rest = rank;
            for i in (0..n).rev() {
                coords[i] = rest % psizes[i];
                rest /= psizes[i];
            }
            let owner = |i: usize, x: u64| -> u64 {
                let darg = (dargs[i] != DFLT_DARG).then_some(dargs[i] as u64);
                match distribs[i] {
                    Distribution::None => 0,
                    Distribution::Block => x / darg.unwrap_or(gsizes[i].div_ceil(psizes[i])),
                    Distribution::Cyclic => (x / darg.unwrap_or(1)) % psizes[i],
                }
            };
            let map = array_map(&gsizes, order, &old, |idx| {
                idx.iter()
                    .enumerate()
                    .all(|(i, &x)| owner(i, x) == coords[i])
            });
            assert_eq!(
                (t.lb(), t.extent()),
                (0, 4 * gsizes.iter().product::<u64>() as i64)
            );
            check_pack(&t, &map, 1);
            assert_eq!(t.envelope().num_integers, 4 * n as u64 + 4);
        }
    }
}
