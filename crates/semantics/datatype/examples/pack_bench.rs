//! Pack/unpack throughput of the datatype engine, printed in GB/s of packed data.
//! Run: cargo run --release -p crossmpi-datatype --example pack_bench
//! Cases: contiguous, vectors with 8 B / 64 B / 1 KiB blocks, an irregular indexed type,
//! and the 8 B vector packed in 64 KiB fragments (the pipelined large-message path).

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

fn bench(name: &str, t: &Datatype, count: u64) {
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
    for block in [8u64, 64, 1024] {
        // Blocks of `block` bytes, every other block skipped.
        let t =
            Datatype::vector(PACKED / block, block / 8, 2 * (block / 8) as i64, &double).unwrap();
        bench(&format!("vector, {block} B blocks"), &t, 1);
    }
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
}
