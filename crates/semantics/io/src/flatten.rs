//! The typemap of a datatype as a list of contiguous byte runs in stream order: what a
//! file view needs to map the data stream onto file offsets, and what two-phase I/O
//! exchanges. The datatype engine keeps its compiled layout private, so the runs are
//! derived from the public description of a type: small types (spans up to
//! `PROBE_SPAN`, which covers the predefined types with their padding) are probed by
//! packing a buffer that holds each byte's own address; larger ones are taken apart
//! through `contents()` down to probed pieces.

use crate::error::{IoError, IoResult};
use crossmpi_core::datatype::{Combiner, Contents, Datatype, Distribution, Order, DFLT_DARG};
use crossmpi_core::error::ErrorClass;

/// Types spanning at most this many bytes are probed whole (two passes of packing).
const PROBE_SPAN: i64 = 1 << 16;
/// A filetype with more runs than this is refused before its list is built (16 bytes
/// per run: 1 GiB of list).
const MAX_RUNS: u64 = 1 << 26;

/// One contiguous run: (byte displacement, length).
pub type Run = (i64, u64);

/// Appends runs, merging a run that continues the previous one.
#[derive(Default)]
struct Runs {
    runs: Vec<Run>,
}

impl Runs {
    fn push(&mut self, disp: i64, len: u64) {
        if len == 0 {
            return;
        }
        if let Some(last) = self.runs.last_mut() {
            if last.0 + last.1 as i64 == disp {
                last.1 += len;
                return;
            }
        }
        self.runs.push((disp, len));
    }

    fn extend_shifted(&mut self, runs: &[Run], delta: i64) {
        for &(d, l) in runs {
            self.push(d + delta, l);
        }
    }
}

/// The runs of one element of `t`, in stream order.
pub fn runs(function: &str, t: &Datatype) -> IoResult<Vec<Run>> {
    let mut out = Runs::default();
    walk(function, t, 0, &mut out)?;
    Ok(out.runs)
}

fn too_many(function: &str, t: &Datatype) -> IoError {
    IoError::core(
        ErrorClass::NoMem,
        function,
        "filetype",
        format!("{t:?}"),
        format!("more than {MAX_RUNS} contiguous pieces"),
    )
}

/// `count` copies of `child`'s runs, copy k at `base + disp_of(k)`. The limit applies
/// to the runs after adjacent ones merge: a vector of 2^29 adjacent 4-byte blocks is one
/// run (MPICH's io/bigtype was refused before).
fn repeat(
    function: &str,
    t: &Datatype,
    child: &[Run],
    count: u64,
    out: &mut Runs,
    disp_of: impl Fn(u64) -> i64,
) -> IoResult<()> {
    // Copies that cannot merge are counted up front, so that a list too long is refused
    // before it is built; one run whose first two copies touch may merge all along.
    let may_merge = child.len() == 1 && count > 1 && disp_of(1) - disp_of(0) == child[0].1 as i64;
    if !may_merge
        && (count as u128) * (child.len() as u128) + out.runs.len() as u128 > MAX_RUNS as u128
    {
        return Err(too_many(function, t));
    }
    for k in 0..count {
        out.extend_shifted(child, disp_of(k));
        if out.runs.len() as u64 > MAX_RUNS {
            return Err(too_many(function, t));
        }
    }
    Ok(())
}

/// Reads a constructor's arguments in the standard's order: counts and addresses come
/// from the large-count array when the type was made by a `_c` constructor.
struct Args {
    c: Contents,
    large: bool,
    int_at: usize,
    addr_at: usize,
    large_at: usize,
}

impl Args {
    fn new(t: &Datatype) -> Args {
        let env = t.envelope();
        Args {
            c: t.contents(),
            large: env.num_large_counts > 0,
            int_at: 0,
            addr_at: 0,
            large_at: 0,
        }
    }
    fn int(&mut self) -> i64 {
        self.int_at += 1;
        self.c.integers.get(self.int_at - 1).copied().unwrap_or(0)
    }
    fn ints(&mut self, n: usize) -> Vec<i64> {
        (0..n).map(|_| self.int()).collect()
    }
    fn large_next(&mut self) -> i64 {
        self.large_at += 1;
        self.c
            .large_counts
            .get(self.large_at - 1)
            .copied()
            .unwrap_or(0)
    }
    fn count(&mut self) -> i64 {
        if self.large {
            self.large_next()
        } else {
            self.int()
        }
    }
    fn counts(&mut self, n: usize) -> Vec<i64> {
        (0..n).map(|_| self.count()).collect()
    }
    fn addr(&mut self) -> i64 {
        if self.large {
            self.large_next()
        } else {
            self.addr_at += 1;
            self.c.addresses.get(self.addr_at - 1).copied().unwrap_or(0)
        }
    }
    fn addrs(&mut self, n: usize) -> Vec<i64> {
        (0..n).map(|_| self.addr()).collect()
    }
    fn datatype(&self, i: usize) -> Datatype {
        self.c.datatypes[i].clone()
    }
}

fn walk(function: &str, t: &Datatype, base: i64, out: &mut Runs) -> IoResult<()> {
    if t.size() == 0 {
        return Ok(());
    }
    let (lo, hi) = t.span(1);
    if hi - lo <= PROBE_SPAN {
        return probe(t, base, out);
    }
    let env = t.envelope();
    let mut a = Args::new(t);
    let ext_of = |t: &Datatype| t.extent();
    // Each block of `bl` copies of `old` at byte displacement `d`.
    let blocks = |a: &Args, bls: &[i64], ds: &[i64], scale: i64, out: &mut Runs| {
        let old = a.datatype(0);
        let child = runs(function, &old)?;
        let e = ext_of(&old);
        for (&bl, &d) in bls.iter().zip(ds) {
            repeat(function, t, &child, bl.max(0) as u64, out, |k| {
                base + d * scale + k as i64 * e
            })?;
        }
        Ok::<(), IoError>(())
    };
    match env.combiner {
        Combiner::Named | Combiner::F90Real | Combiner::F90Complex | Combiner::F90Integer => {
            probe(t, base, out)
        }
        Combiner::Dup | Combiner::Resized => walk(function, &a.datatype(0), base, out),
        Combiner::Contiguous => {
            let n = a.count();
            let old = a.datatype(0);
            blocks(&a, &[n], &[0], ext_of(&old), out)
        }
        Combiner::Vector | Combiner::Hvector => {
            let (n, bl) = (a.count(), a.count());
            let old = a.datatype(0);
            let (stride, scale) = if env.combiner == Combiner::Vector {
                (a.count(), ext_of(&old))
            } else {
                (a.addr(), 1)
            };
            let ds: Vec<i64> = (0..n.max(0)).map(|i| i * stride).collect();
            blocks(&a, &vec![bl; ds.len()], &ds, scale, out)
        }
        Combiner::Indexed | Combiner::Hindexed => {
            let n = a.count().max(0) as usize;
            let bls = a.counts(n);
            let old = a.datatype(0);
            let (ds, scale) = if env.combiner == Combiner::Indexed {
                (a.counts(n), ext_of(&old))
            } else {
                (a.addrs(n), 1)
            };
            blocks(&a, &bls, &ds, scale, out)
        }
        Combiner::IndexedBlock | Combiner::HindexedBlock => {
            let n = a.count().max(0) as usize;
            let bl = a.count();
            let old = a.datatype(0);
            let (ds, scale) = if env.combiner == Combiner::IndexedBlock {
                (a.counts(n), ext_of(&old))
            } else {
                (a.addrs(n), 1)
            };
            blocks(&a, &vec![bl; n], &ds, scale, out)
        }
        Combiner::Struct => {
            let n = a.count().max(0) as usize;
            let bls = a.counts(n);
            let ds = a.addrs(n);
            for i in 0..n {
                let ti = a.datatype(i);
                let child = runs(function, &ti)?;
                let e = ext_of(&ti);
                repeat(function, t, &child, bls[i].max(0) as u64, out, |k| {
                    base + ds[i] + k as i64 * e
                })?;
            }
            Ok(())
        }
        Combiner::Subarray => {
            let n = a.int().max(0) as usize;
            let (sizes, subsizes, starts) = (a.counts(n), a.counts(n), a.counts(n));
            let order = a.int();
            let old = a.datatype(0);
            let mut stride = ext_of(&old);
            let mut disp = 0i64;
            let mut layers = Vec::with_capacity(n);
            for i in fastest_first(n, order) {
                layers.push((subsizes[i], stride));
                disp += starts[i] * stride;
                stride *= sizes[i];
            }
            nested(function, t, &old, &layers, base + disp, out)
        }
        Combiner::Darray => {
            let (_size, rank, n) = (a.int(), a.int(), a.int().max(0) as usize);
            let gsizes = a.counts(n);
            let distribs = a.ints(n);
            let dargs = a.ints(n);
            let psizes = a.ints(n);
            let order = a.int();
            let old = a.datatype(0);
            darray(
                function,
                t,
                &old,
                DarrayArgs {
                    rank,
                    gsizes,
                    distribs,
                    dargs,
                    psizes,
                    order,
                },
                base,
                out,
            )
        }
    }
}

/// Dimension indices from the fastest-varying to the slowest (ABI order codes).
fn fastest_first(n: usize, order: i64) -> Vec<usize> {
    if order == Order::C.abi_code() {
        (0..n).rev().collect()
    } else {
        (0..n).collect()
    }
}

/// Elements of `old` at `base + sum_i k_i * stride_i` for `k_i < count_i`, the first
/// layer varying fastest.
fn nested(
    function: &str,
    t: &Datatype,
    old: &Datatype,
    layers: &[(i64, i64)],
    base: i64,
    out: &mut Runs,
) -> IoResult<()> {
    let child = runs(function, old)?;
    let total: u128 = layers.iter().map(|l| l.0.max(0) as u128).product();
    if total * child.len() as u128 + out.runs.len() as u128 > MAX_RUNS as u128 {
        return Err(too_many(function, t));
    }
    let mut index = vec![0i64; layers.len()];
    if layers.iter().any(|l| l.0 <= 0) {
        return Ok(());
    }
    loop {
        let at: i64 = base + index.iter().zip(layers).map(|(k, l)| k * l.1).sum::<i64>();
        out.extend_shifted(&child, at);
        let mut d = 0;
        loop {
            if d == layers.len() {
                return Ok(());
            }
            index[d] += 1;
            if index[d] < layers[d].0 {
                break;
            }
            index[d] = 0;
            d += 1;
        }
    }
}

struct DarrayArgs {
    rank: i64,
    gsizes: Vec<i64>,
    distribs: Vec<i64>,
    dargs: Vec<i64>,
    psizes: Vec<i64>,
    order: i64,
}

/// The indices process `coord` owns of a dimension of `g` indices dealt in blocks of
/// `b` over `p` processes: (start, length) ranges in increasing order.
fn owned(g: i64, b: i64, p: i64, coord: i64) -> Vec<(i64, i64)> {
    let mut v = Vec::new();
    let mut start = coord * b;
    while start < g {
        v.push((start, b.min(g - start)));
        start += p * b;
    }
    v
}

/// A darray's elements: per dimension the owned index ranges (the engine validated the
/// arguments when it built the type), combined fastest dimension first.
fn darray(
    function: &str,
    t: &Datatype,
    old: &Datatype,
    d: DarrayArgs,
    base: i64,
    out: &mut Runs,
) -> IoResult<()> {
    let n = d.gsizes.len();
    let mut coords = vec![0i64; n];
    let mut rest = d.rank;
    for i in (0..n).rev() {
        coords[i] = rest % d.psizes[i].max(1);
        rest /= d.psizes[i].max(1);
    }
    let block = |i: usize| -> i64 {
        let (g, p, darg) = (d.gsizes[i], d.psizes[i].max(1), d.dargs[i]);
        let given = (darg != DFLT_DARG).then_some(darg);
        match d.distribs[i] {
            x if x == Distribution::Block.abi_code() => given.unwrap_or((g + p - 1) / p),
            x if x == Distribution::Cyclic.abi_code() => given.unwrap_or(1),
            _ => g,
        }
    };
    // Element offsets (in units of old extents) of each dimension's owned indices,
    // fastest dimension first; then the product in that order.
    let mut stride = 1i64;
    let mut dims: Vec<Vec<i64>> = Vec::with_capacity(n);
    for i in fastest_first(n, d.order) {
        let p = if d.distribs[i] == Distribution::None.abi_code() {
            1
        } else {
            d.psizes[i]
        };
        let ranges = owned(d.gsizes[i], block(i), p, coords[i]);
        dims.push(
            ranges
                .iter()
                .flat_map(|&(s, l)| (s..s + l).map(|x| x * stride))
                .collect(),
        );
        stride *= d.gsizes[i];
    }
    let child = runs(function, old)?;
    let e = old.extent();
    let total: u128 = dims.iter().map(|v| v.len() as u128).product();
    if total * child.len() as u128 + out.runs.len() as u128 > MAX_RUNS as u128 {
        return Err(too_many(function, t));
    }
    if dims.iter().any(|v| v.is_empty()) {
        return Ok(());
    }
    let mut index = vec![0usize; n];
    loop {
        let at: i64 = dims.iter().zip(&index).map(|(v, &k)| v[k]).sum();
        out.extend_shifted(&child, base + at * e);
        let mut k = 0;
        loop {
            if k == n {
                return Ok(());
            }
            index[k] += 1;
            if index[k] < dims[k].len() {
                break;
            }
            index[k] = 0;
            k += 1;
        }
    }
}

/// Finds the address of every stream byte of a small type by packing a buffer whose
/// bytes hold their own index (low byte, then high byte).
fn probe(t: &Datatype, base: i64, out: &mut Runs) -> IoResult<()> {
    let (lo, hi) = t.span(1);
    let len = (hi - lo) as usize;
    let size = t.size() as usize;
    let mut addr = vec![0u64; size];
    let mut buf = vec![0u8; len];
    let mut packed = vec![0u8; size];
    for pass in 0..2 {
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (i >> (8 * pass)) as u8;
        }
        t.pack_at(&buf, -lo as isize, 1, 0, &mut packed);
        for (a, &p) in addr.iter_mut().zip(&packed) {
            *a |= (p as u64) << (8 * pass);
        }
    }
    for a in addr {
        out.push(base + lo + a as i64, 1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossmpi_core::datatype::Basic;

    /// Gathers the bytes of `runs` from a buffer: must equal what the engine packs.
    fn check(t: &Datatype) {
        let (lo, hi) = t.span(1);
        let buf: Vec<u8> = (0..(hi - lo)).map(|i| (i * 7 + 3) as u8).collect();
        let mut packed = vec![0u8; t.size() as usize];
        t.pack_at(&buf, -lo as isize, 1, 0, &mut packed);
        let mut gathered = Vec::new();
        let runs = runs("test", t).unwrap();
        for (d, l) in &runs {
            let at = (d - lo) as usize;
            gathered.extend_from_slice(&buf[at..at + *l as usize]);
        }
        assert_eq!(
            gathered,
            packed,
            "{t:?}: runs {:?}",
            &runs[..runs.len().min(8)]
        );
        for w in runs.windows(2) {
            assert_ne!(w[0].0 + w[0].1 as i64, w[1].0, "unmerged runs");
        }
    }

    fn int() -> Datatype {
        Datatype::basic(Basic::Int)
    }

    #[test]
    fn small_types_are_probed() {
        check(&Datatype::basic(Basic::ShortInt));
        check(&Datatype::vector(3, 2, 5, &int()).unwrap());
        let r = runs("t", &Datatype::vector(3, 2, 5, &int()).unwrap()).unwrap();
        assert_eq!(r, vec![(0, 8), (20, 8), (40, 8)]);
    }

    #[test]
    fn the_run_limit_counts_merged_runs() {
        // 2^27 adjacent 4-byte blocks (more than MAX_RUNS copies) are one run...
        let block = Datatype::contiguous(1, &int()).unwrap();
        let adjacent = Datatype::vector(1 << 27, 1, 1, &block).unwrap();
        assert_eq!(runs("t", &adjacent).unwrap(), vec![(0, 4 << 27)]);
        // ...while as many separate blocks are refused before any list is built.
        let apart = Datatype::vector(1 << 27, 1, 2, &block).unwrap();
        assert!(runs("t", &apart).is_err());
    }

    #[test]
    fn large_types_are_taken_apart() {
        let big = 100_000;
        check(&Datatype::vector(4, 1, big, &int()).unwrap());
        check(&Datatype::hvector(5, 3, 400_000, &Datatype::basic(Basic::DoubleInt)).unwrap());
        check(&Datatype::indexed(&[2, 1, 3], &[0, 50_000, 90_000], &int()).unwrap());
        check(&Datatype::hindexed_block(2, &[0, 300_000], &int()).unwrap());
        let s = Datatype::structure(
            &[1, 2],
            &[0, 200_000],
            &[int(), Datatype::basic(Basic::Double)],
        )
        .unwrap();
        check(&s);
        check(&Datatype::contiguous(3, &s).unwrap());
        check(&Datatype::resized(&s, 0, 400_000).unwrap().dup());
    }

    #[test]
    fn subarrays_and_darrays_match_the_engine() {
        for order in [Order::C, Order::Fortran] {
            let t = Datatype::subarray(&[300, 400], &[20, 30], &[5, 7], order, &int()).unwrap();
            check(&t);
            let r = runs("t", &t).unwrap();
            assert_eq!(r.len(), if order == Order::C { 20 } else { 30 });
        }
        for (dist, darg) in [
            (Distribution::Block, DFLT_DARG),
            (Distribution::Cyclic, 3),
            (Distribution::Cyclic, DFLT_DARG),
        ] {
            for rank in 0..6 {
                let t = Datatype::darray(
                    6,
                    rank,
                    &[200, 301],
                    &[Distribution::Block, dist],
                    &[DFLT_DARG, darg],
                    &[2, 3],
                    Order::C,
                    &int(),
                )
                .unwrap();
                check(&t);
            }
        }
        let t = Datatype::darray(
            4,
            3,
            &[1000, 90],
            &[Distribution::Cyclic, Distribution::None],
            &[2, DFLT_DARG],
            &[4, 1],
            Order::Fortran,
            &Datatype::basic(Basic::Double),
        )
        .unwrap();
        check(&t);
    }

    #[test]
    fn large_count_constructors_read_their_arguments() {
        let t = Datatype::vector(4, 2, 50_000, &int())
            .unwrap()
            .with_large_counts();
        check(&t);
    }
}
