//! Pack/unpack throughput of the datatype engine, printed in GB/s of packed data.
//! Run: cargo run --release -p crossmpi-datatype --example pack_bench [NAME_PART]
//! (only the cases whose name contains NAME_PART, e.g. to profile one of them).
//! Cases: contiguous; vector(N,1,2,double), vector(N,4,8,double) and vectors with 64 B /
//! 1 KiB blocks; a matrix column; an irregular indexed type; a struct {int; double; char}
//! counted N times; each also packed in 64 KiB fragments (the pipelined large-message
//! path), and a small vector(64,1,2,double) packed whole many times (per-call cost).

use crossmpi_datatype::{Basic, Datatype};
use std::hint::black_box;
use std::time::Instant;

/// Packed bytes per case: large enough to leave the caches.
const PACKED: u64 = 32 << 20;
const FRAGMENT: usize = 64 << 10;

fn best_secs(reps: u32, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Whether the case is selected by the command line.
fn selected(name: &str) -> bool {
    name.contains(&std::env::args().nth(1).unwrap_or_default())
}

fn bench(name: &str, t: &Datatype, count: u64) {
    if !selected(name) {
        return;
    }
    let (lo, hi) = t.span(count);
    assert!(lo >= 0);
    let mut buf = vec![1u8; hi as usize];
    let mut packed = vec![0u8; t.packed_size(count) as usize];
    let gb = packed.len() as f64 / 1e9;
    let pack = best_secs(5, || t.pack(black_box(&buf), 0, count, 0, &mut packed));
    let unpack = best_secs(5, || t.unpack(black_box(&packed), &mut buf, 0, count, 0));
    let fragmented = best_secs(5, || {
        for (i, chunk) in packed.chunks_mut(FRAGMENT).enumerate() {
            t.pack(black_box(&buf), 0, count, (i * FRAGMENT) as u64, chunk);
        }
    });
    println!(
        "{name:<28} pack {:>6.2} GB/s   unpack {:>6.2} GB/s   pack in 64 KiB fragments {:>6.2} GB/s",
        gb / pack,
        gb / unpack,
        gb / fragmented
    );
}

fn main() {
    let byte = Datatype::basic(Basic::Byte);
    let double = Datatype::basic(Basic::Double);
    let int = Datatype::basic(Basic::Int);
    println!("{} MiB packed per case, best of 5", PACKED >> 20);
    bench(
        "contiguous",
        &Datatype::contiguous(PACKED, &byte).unwrap(),
        1,
    );
    for (blocklen, stride) in [(1u64, 2i64), (4, 8), (8, 16), (128, 256)] {
        let t = Datatype::vector(PACKED / 8 / blocklen, blocklen, stride, &double).unwrap();
        bench(&format!("vector(N,{blocklen},{stride},double)"), &t, 1);
    }
    // Column 0 of a row-major matrix of 512 Ki rows of 16 doubles: 8 B of every 128 B
    // (4 MiB packed from a 64 MiB matrix).
    let column = Datatype::vector(1 << 19, 1, 16, &double).unwrap();
    bench("column of 512Ki x 16 doubles", &column, 1);
    // Irregular: block lengths 1..=16 ints and gaps 0..=15 ints from a fixed sequence.
    let mut state = 12345u64;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let (mut bls, mut displs, mut at, mut total) = (vec![], vec![], 0i64, 0u64);
    while total * 4 < PACKED {
        let bl = 1 + next(16);
        at += next(16) as i64 + 1; // at least one int of gap keeps blocks apart
        bls.push(bl);
        displs.push(at);
        at += bl as i64;
        total += bl;
    }
    let avg = 4.0 * total as f64 / bls.len() as f64;
    let t = Datatype::indexed(&bls, &displs, &int).unwrap();
    bench(&format!("indexed, avg {avg:.0} B blocks"), &t, 1);
    // struct { int a; double b; char c; }: runs of 4 and 9 bytes per 24-byte element.
    let char_ = Datatype::basic(Basic::Char);
    let st = Datatype::structure(&[1, 1, 1], &[0, 8, 16], &[int, double.clone(), char_]).unwrap();
    bench("struct {int;double;char}", &st, PACKED / st.size());
    small(&Datatype::vector(64, 1, 2, &double).unwrap());
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
    let secs = best_secs(5, || {
        for _ in 0..reps {
            t.pack(black_box(&buf), 0, 1, 0, &mut packed);
        }
    });
    println!(
        "vector(64,1,2,double) whole    pack {:>6.2} GB/s   {:.0} ns per call",
        (reps * packed.len()) as f64 / secs / 1e9,
        secs / reps as f64 * 1e9
    );
}
