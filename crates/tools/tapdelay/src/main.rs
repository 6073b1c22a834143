//! `crossmpi-tapdelay`: crossmpi lab's user-space delay line. It joins two network
//! namespaces, attaches to a persistent TAP in each, and forwards frames between
//! them after a fixed one-way delay, with optional loss and rate cap. This kernel has
//! no netem, so this is how the lab emulates a long-distance link.
//!
//! The schedule is the sans-IO [`queue::DelayQueue`]; this file is only the I/O loop.

mod args;
mod queue;
mod rng;
mod tap;

use std::time::Instant;

use queue::DelayQueue;
use tap::Tap;

/// Frames read per TAP per wake-up: enough to amortise the wake-up, few enough that
/// due frames of the other direction are not held back.
const READ_BATCH: usize = 64;

/// One direction: frames read from `from` are queued and written to `to`.
struct Direction {
    queue: DelayQueue<Vec<u8>>,
    spare: Vec<Vec<u8>>,
    allocated: usize,
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.iter().any(|a| a == "-h" || a == "--help") {
        println!("{}", args::USAGE);
        return;
    }
    let queue_mb = std::env::var("CROSSMPI_TAPDELAY_QUEUE_MB").ok();
    let spin_us = std::env::var("CROSSMPI_TAPDELAY_SPIN_US").ok();
    let env = args::Tunables {
        queue_mb: queue_mb.as_deref(),
        spin_us: spin_us.as_deref(),
    };
    let opts = match args::parse(&argv, &env) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&opts) {
        eprintln!(
            "crossmpi-tapdelay {}:{} <-> {}:{}: {e}",
            opts.a.0, opts.a.1, opts.b.0, opts.b.1
        );
        std::process::exit(1);
    }
}

fn run(opts: &args::Options) -> std::io::Result<()> {
    let taps = [
        Tap::open(&opts.a.0, &opts.a.1, opts.vnet)?,
        Tap::open(&opts.b.0, &opts.b.1, opts.vnet)?,
    ];
    tap::set_precise_timers();
    let buf_len = args::frame_buffer_len(opts.vnet);
    // Different seeds per direction so both directions do not lose the same frames.
    let mut dirs = [0u64, 1].map(|d| Direction {
        queue: DelayQueue::new(opts.link.clone(), opts.seed.wrapping_mul(2).wrapping_add(d)),
        spare: Vec::new(),
        allocated: 0,
    });
    let start = Instant::now();
    let now_ns = || start.elapsed().as_nanos() as u64;
    let mut scratch = Vec::with_capacity(buf_len);
    let result = pump(&taps, &mut dirs, &mut scratch, opts, now_ns);
    for (d, dir) in dirs.iter().enumerate() {
        let s = dir.queue.stats();
        let (from, to) = if d == 0 {
            (&opts.a, &opts.b)
        } else {
            (&opts.b, &opts.a)
        };
        eprintln!(
            "crossmpi-tapdelay {}:{} -> {}:{}: forwarded {}, lost {}, overflow {}",
            from.0, from.1, to.0, to.1, s.forwarded, s.lost, s.overflow
        );
    }
    result
}

/// Moves frames until a TAP fails (typically: its namespace was deleted).
fn pump(
    taps: &[Tap; 2],
    dirs: &mut [Direction; 2],
    scratch: &mut Vec<u8>,
    opts: &args::Options,
    now_ns: impl Fn() -> u64,
) -> std::io::Result<()> {
    let (max_frames, buf_len) = (opts.link.max_frames, args::frame_buffer_len(opts.vnet));
    loop {
        let now = now_ns();
        for (d, dir) in dirs.iter_mut().enumerate() {
            while let Some(frame) = dir.queue.pop_due(now) {
                // A failed write loses one frame, as a real link would; the TAP itself
                // disappearing is noticed by the poll below.
                let _ = taps[1 - d].write_frame(&frame);
                dir.spare.push(frame);
            }
        }
        let timeout = dirs
            .iter()
            .filter_map(|d| d.queue.next_due())
            .min()
            .map(|due| {
                // Sleep until `spin_ns` before the frame is due, then poll without
                // sleeping: a timer wake-up is late by tens of microseconds.
                due.saturating_sub(now_ns()).saturating_sub(opts.spin_ns)
            });
        let readable = tap::wait_readable([taps[0].raw_fd(), taps[1].raw_fd()], timeout)?;
        for (d, dir) in dirs.iter_mut().enumerate() {
            if !readable[d] {
                continue;
            }
            for _ in 0..READ_BATCH {
                let mut buf = match dir.spare.pop() {
                    Some(b) => b,
                    None if dir.allocated < max_frames => {
                        dir.allocated += 1;
                        Vec::with_capacity(buf_len)
                    }
                    // Memory bound reached: read the frame to drop it.
                    None => std::mem::take(scratch),
                };
                buf.reserve(buf_len);
                if !taps[d].read_frame(&mut buf)? {
                    recycle(dir, scratch, buf, buf_len);
                    break;
                }
                if let Err((_, back)) = dir.queue.push(now_ns(), buf) {
                    recycle(dir, scratch, back, buf_len);
                }
            }
        }
    }
}

/// Returns a buffer to the pool it came from (the drop scratch or the spares).
fn recycle(dir: &mut Direction, scratch: &mut Vec<u8>, buf: Vec<u8>, buf_len: usize) {
    if scratch.capacity() < buf_len {
        *scratch = buf;
    } else {
        dir.spare.push(buf);
    }
}
