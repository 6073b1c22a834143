//! Throughput of the predefined reduction kernels (`op::apply`), printed in GB/s of the
//! inout buffer combined, for buffer sizes from one element to 1 MiB.
//! Run: cargo run --release -p crossmpi-datatype --example op_bench
//! Cases: SUM on f64, f32 and i32; MAX on f64; MINLOC on MPI_DOUBLE_INT; SUM on f64 at
//! an odd address (packed data inside a message need not be aligned).

mod common;

use common::best_secs;
use crossmpi_datatype::op::{self, Op};
use crossmpi_datatype::Basic;
use std::hint::black_box;

/// Timings per figure, of which the best is shown.
const REPS: u32 = 7;
/// Bytes combined per timing, so small buffers are repeated many times.
const WORK: usize = 64 << 20;
const SIZES: [usize; 4] = [8, 1 << 10, 64 << 10, 1 << 20];

/// Bytes of `basic` values that stay finite and small under repeated SUM/PROD.
fn values(basic: Basic, len: usize) -> Vec<u8> {
    let size = basic.size() as usize;
    (0..len / size)
        .flat_map(|i| {
            let mut e = vec![0u8; size];
            e[0] = (i % 3) as u8;
            e
        })
        .collect()
}

fn bench(op: Op, basic: Basic, misalign: usize) {
    let mut line = format!(
        "{:<10} {:<22}",
        op.mpi_name(),
        format!(
            "{}{}",
            basic.mpi_name(),
            if misalign > 0 { " (odd address)" } else { "" }
        )
    );
    for size in SIZES {
        // Whole elements, at least one (a pair of 12 bytes in the 8-byte case).
        let elem = basic.size() as usize;
        let len = (size - size % elem).max(elem);
        let input = values(basic, len);
        let mut store = vec![0u8; len + misalign];
        store[misalign..].copy_from_slice(&values(basic, len));
        let inout = &mut store[misalign..];
        let reps = (WORK / len.max(1)).max(1);
        let secs = best_secs(REPS, || {
            for _ in 0..reps {
                op::apply(op, basic, black_box(&input), black_box(&mut *inout)).unwrap();
            }
        });
        let label = match size {
            s if s >= 1 << 20 => format!("{} MiB", s >> 20),
            s if s >= 1 << 10 => format!("{} KiB", s >> 10),
            s => format!("{s} B"),
        };
        line += &format!(
            "  {label:>7} {:>6.2} GB/s",
            (reps * len) as f64 / secs / 1e9
        );
    }
    println!("{line}");
}

fn main() {
    println!(
        "GB/s of inout combined, best of {REPS} runs of {} MiB each",
        WORK >> 20
    );
    bench(Op::Sum, Basic::Double, 0);
    bench(Op::Sum, Basic::Float, 0);
    bench(Op::Sum, Basic::Int, 0);
    bench(Op::Sum, Basic::Double, 1);
    bench(Op::Max, Basic::Double, 0);
    bench(Op::Prod, Basic::Long, 0);
    bench(Op::MinLoc, Basic::DoubleInt, 0);
    bench(Op::MaxLoc, Basic::TwoInt, 0);
}
