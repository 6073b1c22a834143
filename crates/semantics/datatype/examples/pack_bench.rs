//! Pack/unpack throughput of the datatype engine, printed in GB/s of packed data.
//! Run: cargo run --release -p crossmpi-datatype --example pack_bench [NAME_PART]
//! (only the cases whose name contains NAME_PART, e.g. to profile one of them).
//!
//! Each case is measured twice: 128 KiB packed, repeated (the data stays in the caches,
//! so the figure is the engine's own cost per byte), and 32 MiB packed (bounded by
//! memory bandwidth), the latter also in 64 KiB fragments (the pipelined large-message
//! path). Cases: contiguous; vector(N,1,2,double), vector(N,4,8,double) and vectors with
//! 64 B / 1 KiB blocks; a matrix column; an irregular indexed type; a struct
//! {int; double; char} counted N times. Last, a small vector(64,1,2,double) packed whole
//! many times (the per-call cost).

mod common;

use common::best_secs;
use crossmpi_datatype::{Basic, Datatype};
use std::hint::black_box;

/// Timings per figure, of which the best is shown: on a shared machine most runs are
/// slowed by other work.
const REPS: u32 = 25;
const IN_CACHE: u64 = 128 << 10;
const IN_MEMORY: u64 = 32 << 20;
const FRAGMENT: usize = 64 << 10;
/// Bytes packed per timing of the in-cache size.
const CACHE_WORK: u64 = 8 << 20;

/// Whether the case is selected by the command line.
fn selected(name: &str) -> bool {
    name.contains(&std::env::args().nth(1).unwrap_or_default())
}

/// Seconds to pack and to unpack `count` elements of `t` whole, `reps` times per timing.
fn pack_unpack(t: &Datatype, count: u64, reps: u64) -> (f64, f64) {
    let (lo, hi) = t.span(count);
    assert!(lo >= 0);
    let mut buf = vec![1u8; hi as usize];
    let mut packed = vec![0u8; t.packed_size(count) as usize];
    let pack = best_secs(REPS, || {
        for _ in 0..reps {
            t.pack(black_box(&buf), 0, count, 0, &mut packed);
        }
    });
    let unpack = best_secs(REPS, || {
        for _ in 0..reps {
            t.unpack(black_box(&packed), &mut buf, 0, count, 0);
        }
    });
    (pack, unpack)
}

fn fragmented(t: &Datatype, count: u64) -> f64 {
    let (_, hi) = t.span(count);
    let buf = vec![1u8; hi as usize];
    let mut packed = vec![0u8; t.packed_size(count) as usize];
    best_secs(REPS, || {
        for (i, chunk) in packed.chunks_mut(FRAGMENT).enumerate() {
            t.pack(black_box(&buf), 0, count, (i * FRAGMENT) as u64, chunk);
        }
    })
}

/// `make(packed bytes)` builds the case's type and count for about that many bytes.
fn bench(name: &str, make: impl Fn(u64) -> (Datatype, u64)) {
    if !selected(name) {
        return;
    }
    let (t, count) = make(IN_CACHE);
    let size = t.packed_size(count);
    let reps = CACHE_WORK / size;
    let (pack, unpack) = pack_unpack(&t, count, reps);
    let gb = (reps * size) as f64 / 1e9;
    let mut line = format!("{name:<26} {:>6.2} {:>6.2}", gb / pack, gb / unpack);
    let (t, count) = make(IN_MEMORY);
    let (pack, unpack) = pack_unpack(&t, count, 1);
    let gb = t.packed_size(count) as f64 / 1e9;
    line += &format!(
        "    {:>6.2} {:>6.2} {:>6.2}",
        gb / pack,
        gb / unpack,
        gb / fragmented(&t, count)
    );
    println!("{line}");
}

/// An irregular indexed type of about `packed` bytes: block lengths 1..=16 ints and gaps
/// 1..=16 ints from a fixed sequence.
fn irregular(packed: u64) -> (Datatype, u64) {
    let mut state = 12345u64;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let (mut bls, mut displs, mut at, mut total) = (vec![], vec![], 0i64, 0u64);
    while total * 4 < packed {
        let bl = 1 + next(16);
        at += next(16) as i64 + 1; // at least one int of gap keeps blocks apart
        bls.push(bl);
        displs.push(at);
        at += bl as i64;
        total += bl;
    }
    let int = Datatype::basic(Basic::Int);
    (Datatype::indexed(&bls, &displs, &int).unwrap(), 1)
}

/// Packs a 512-byte vector whole, again and again: what a small message pays per call.
fn small(t: &Datatype) {
    if !selected("vector(64,1,2,double) whole") {
        return;
    }
    let (_, hi) = t.span(1);
    let buf = vec![1u8; hi as usize];
    let mut packed = vec![0u8; t.packed_size(1) as usize];
    let reps = 100_000;
    let secs = best_secs(REPS, || {
        for _ in 0..reps {
            t.pack(black_box(&buf), 0, 1, 0, &mut packed);
        }
    });
    println!(
        "vector(64,1,2,double) packed whole: {:.0} ns per call ({:.2} GB/s)",
        secs / reps as f64 * 1e9,
        (reps * packed.len()) as f64 / secs / 1e9
    );
}

fn main() {
    let byte = Datatype::basic(Basic::Byte);
    let double = Datatype::basic(Basic::Double);
    println!(
        "GB/s of packed data, best of {REPS}    in cache ({} KiB)    from memory ({} MiB)",
        IN_CACHE >> 10,
        IN_MEMORY >> 20
    );
    println!(
        "{:<26} {:>6} {:>6}    {:>6} {:>6} {:>6}",
        "case", "pack", "unpack", "pack", "unpack", "64KiB-fragments"
    );
    bench("contiguous", |n| {
        (Datatype::contiguous(n, &byte).unwrap(), 1)
    });
    for (blocklen, stride) in [(1u64, 2i64), (4, 8), (8, 16), (128, 256)] {
        bench(&format!("vector(N,{blocklen},{stride},double)"), |n| {
            (
                Datatype::vector(n / 8 / blocklen, blocklen, stride, &double).unwrap(),
                1,
            )
        });
    }
    // Column 0 of a row-major matrix with rows of 16 doubles: 8 B of every 128 B.
    bench("column of N x 16 doubles", |n| {
        (Datatype::vector(n / 8, 1, 16, &double).unwrap(), 1)
    });
    bench("indexed, avg 34 B blocks", irregular);
    // struct { int a; double b; char c; }: runs of 4 and 9 bytes per 24-byte element.
    let int = Datatype::basic(Basic::Int);
    let char_ = Datatype::basic(Basic::Char);
    let st = Datatype::structure(&[1, 1, 1], &[0, 8, 16], &[int, double.clone(), char_]).unwrap();
    bench("struct {int;double;char}", |n| (st.clone(), n / st.size()));
    small(&Datatype::vector(64, 1, 2, &double).unwrap());
}
