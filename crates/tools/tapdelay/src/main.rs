//! `crossmpi-tapdelay`: crossmpi lab's user-space delay line. It joins pairs of network
//! namespaces, attaches to a persistent TAP in each, and forwards frames between
//! them after a fixed one-way delay, with optional loss and rate cap. This kernel has
//! no netem, so this is how the lab emulates a long-distance link.
//!
//! One process serves every link it is given: a frame that crosses two delay lines
//! (out of one cluster's uplink into the WAN core and on into another's) is written to
//! the second TAP by the kernel while the process is still running, and read at once,
//! instead of waiting for a second process to wake up (tens of µs in a VM, per
//! crossing).
//!
//! The schedule is the sans-IO [`queue::DelayQueue`], the correction for the
//! process's own latency the sans-IO [`lateness::Lateness`], and frames coming back
//! from the WAN core are recognised by the sans-IO [`recent::RecentWrites`]; this
//! file is only the I/O loop.

mod args;
mod lateness;
mod queue;
mod recent;
mod rng;
mod tap;

use std::time::Instant;

use lateness::Lateness;
use queue::DelayQueue;
use recent::RecentWrites;
use tap::{Poller, Tap};

/// Frames read per TAP per wake-up at most: enough to amortise the wake-up, few
/// enough to come back to the timeout soon.
const READ_BATCH: usize = 64;

/// Timed sleeps at start-up that give the wake-up latency estimate its first value,
/// so the first frames are already stamped right.
const CALIBRATION_SLEEPS: u32 = 32;
const CALIBRATION_SLEEP_NS: u64 = 200_000;

/// One direction of a link: frames read from one TAP are queued for the other.
struct Direction {
    queue: DelayQueue<Vec<u8>>,
    spare: Vec<Vec<u8>>,
    allocated: usize,
    max_frames: usize,
    buf_len: usize,
    /// Bytes before the frame proper (the virtio-net header, which the kernel may
    /// rewrite between a write and a read).
    header_len: usize,
}

/// One emulated link: its two TAPs, and the direction away from each.
struct Link {
    taps: [Tap; 2],
    dirs: [Direction; 2],
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
        eprintln!("crossmpi-tapdelay: {e}");
        std::process::exit(1);
    }
}

fn endpoint_name(spec: &args::LinkSpec, side: usize) -> String {
    let (ns, tap) = if side == 0 { &spec.a } else { &spec.b };
    format!("{ns}:{tap}")
}

fn open_link(spec: &args::LinkSpec) -> std::io::Result<Link> {
    let open = |(ns, ifname): &(String, String)| {
        Tap::open(ns, ifname, spec.vnet)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{ns}:{ifname}: {e}")))
    };
    let buf_len = args::frame_buffer_len(spec.vnet);
    // Different seeds per direction so both directions do not lose the same frames.
    let dir = |d: u64| Direction {
        queue: DelayQueue::new(spec.link.clone(), spec.seed.wrapping_mul(2).wrapping_add(d)),
        spare: Vec::new(),
        allocated: 0,
        max_frames: spec.link.max_frames,
        buf_len,
        header_len: spec.link.header_bytes,
    };
    Ok(Link {
        taps: [open(&spec.a)?, open(&spec.b)?],
        dirs: [dir(0), dir(1)],
    })
}

/// The process's sense of time: its clock, its own latencies, and the frames it has
/// just written (which may come back through the WAN core).
struct Timing {
    start: Instant,
    lateness: Lateness,
    recent: RecentWrites,
}

impl Timing {
    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }
}

fn run(opts: &args::Options) -> std::io::Result<()> {
    let mut links = opts
        .links
        .iter()
        .map(open_link)
        .collect::<std::io::Result<Vec<_>>>()?;
    tap::set_precise_timers();
    let mut poller = Poller::new(links.iter().flat_map(|l| l.taps.iter().map(Tap::raw_fd)));
    let mut timing = Timing {
        start: Instant::now(),
        lateness: Lateness::new(opts.spin_ns),
        recent: RecentWrites::new(),
    };
    calibrate(&mut poller, &mut timing);
    let mut scratch = Vec::new();
    let result = pump(
        &mut links,
        &mut poller,
        &mut timing,
        &mut scratch,
        opts.spin_ns,
    );
    for (link, spec) in links.iter().zip(&opts.links) {
        for (d, dir) in link.dirs.iter().enumerate() {
            let s = dir.queue.stats();
            eprintln!(
                "crossmpi-tapdelay {} -> {}: forwarded {}, lost {}, overflow {}",
                endpoint_name(spec, d),
                endpoint_name(spec, 1 - d),
                s.forwarded,
                s.lost,
                s.overflow
            );
        }
    }
    eprintln!(
        "crossmpi-tapdelay: wake-up latency {} ns, release lead {} ns",
        timing.lateness.wake_ns(),
        timing.lateness.lead()
    );
    result.map_err(|(index, e)| {
        let spec = &opts.links[index / 2];
        std::io::Error::new(e.kind(), format!("{}: {e}", endpoint_name(spec, index % 2)))
    })
}

/// Measures a few timed sleeps before any frame flows.
fn calibrate(poller: &mut Poller, timing: &mut Timing) {
    for _ in 0..CALIBRATION_SLEEPS {
        let began = timing.now();
        if poller.wait(Some(CALIBRATION_SLEEP_NS)).is_err() || poller.any_readable() {
            return;
        }
        let woke = timing.now();
        timing
            .lateness
            .timer_woke(began + CALIBRATION_SLEEP_NS, woke);
    }
}

/// The frame proper, after the virtio-net header (which the kernel may rewrite
/// between a write and a read, so it is not part of a frame's identity).
fn wire_bytes(frame: &[u8], header_len: usize) -> &[u8] {
    frame.get(header_len..).unwrap_or(&[])
}

/// Writes every frame that is due (less the release lead) to its TAP.
fn release_due(links: &mut [Link], timing: &mut Timing) {
    for link in links.iter_mut() {
        for (d, dir) in link.dirs.iter_mut().enumerate() {
            loop {
                let lead = timing.lateness.lead();
                let now = timing.now();
                let Some((due, frame)) = dir.queue.pop_due(now + lead) else {
                    break;
                };
                timing.lateness.released(due.saturating_sub(lead), now);
                timing.recent.wrote(wire_bytes(&frame, dir.header_len), now);
                // A failed write loses one frame, as a real link would; the TAP itself
                // disappearing is noticed by the poll.
                let _ = link.taps[1 - d].write_frame(&frame);
                dir.spare.push(frame);
            }
        }
    }
}

/// Moves frames until a TAP fails (typically: its namespace was deleted); the error
/// carries the TAP's index (link * 2 + side).
fn pump(
    links: &mut [Link],
    poller: &mut Poller,
    timing: &mut Timing,
    scratch: &mut Vec<u8>,
    spin_ns: u64,
) -> Result<(), (usize, std::io::Error)> {
    loop {
        release_due(links, timing);
        let next_due = links
            .iter()
            .flat_map(|l| l.dirs.iter())
            .filter_map(|d| d.queue.next_due())
            .min();
        let began = timing.now();
        // Sleep until `spin_ns` before the next frame is due, then poll without
        // sleeping: a timer wake-up is late by tens of microseconds.
        let wake_at = next_due.map(|due| due.saturating_sub(timing.lateness.lead() + spin_ns));
        let timeout = wake_at.map(|at| at.saturating_sub(began));
        poller.wait(timeout)?;
        if !poller.any_readable() {
            if let (Some(at), Some(t)) = (wake_at, timeout) {
                if t > 0 {
                    let woke = timing.now();
                    timing.lateness.timer_woke(at, woke);
                }
            }
            continue;
        }
        let backdate = timing.lateness.backdate(timing.now().saturating_sub(began));
        let mut pending: Vec<bool> = (0..2 * links.len()).map(|i| poller.readable(i)).collect();
        // Round-robin, one frame per readable TAP per round, releasing due frames
        // between rounds: a busy TAP neither starves the others nor holds back frames
        // that are due.
        for _ in 0..READ_BATCH {
            let mut any = false;
            for (i, link) in links.iter_mut().enumerate() {
                for d in 0..2 {
                    if pending[2 * i + d] {
                        let got = read_frame(link, d, scratch, timing, backdate)
                            .map_err(|e| (2 * i + d, e))?;
                        pending[2 * i + d] = got;
                        any |= got;
                    }
                }
            }
            release_due(links, timing);
            if !any {
                break;
            }
        }
    }
}

/// Reads one frame from side `d` of `link` into its queue. It arrived when this
/// process wrote it, if it did (back from the WAN core), else `backdate` before now.
/// `Ok(false)` when none was waiting.
fn read_frame(
    link: &mut Link,
    d: usize,
    scratch: &mut Vec<u8>,
    timing: &Timing,
    backdate: u64,
) -> std::io::Result<bool> {
    let dir = &mut link.dirs[d];
    let mut buf = match dir.spare.pop() {
        Some(b) => b,
        None if dir.allocated < dir.max_frames => {
            dir.allocated += 1;
            Vec::with_capacity(dir.buf_len)
        }
        // Memory bound reached: read the frame to drop it.
        None => std::mem::take(scratch),
    };
    buf.reserve(dir.buf_len);
    if !link.taps[d].read_frame(&mut buf)? {
        recycle(dir, scratch, buf);
        return Ok(false);
    }
    let now = timing.now();
    let arrived = timing
        .recent
        .written_at(wire_bytes(&buf, dir.header_len), now)
        .unwrap_or(now.saturating_sub(backdate));
    if let Err((_, back)) = dir.queue.push(arrived, buf) {
        recycle(dir, scratch, back);
    }
    Ok(true)
}

/// Returns a buffer to the pool it came from (the drop scratch or the spares).
fn recycle(dir: &mut Direction, scratch: &mut Vec<u8>, buf: Vec<u8>) {
    if scratch.capacity() < dir.buf_len {
        *scratch = buf;
    } else {
        dir.spare.push(buf);
    }
}
