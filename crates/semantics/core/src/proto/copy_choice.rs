//! How a rendezvous between ranks of one node moves its data: pulled by the receiver with
//! cross-memory attach (one copy; the sender need not be running) or streamed through the
//! ring (two copies, made by sender and receiver at once).
//!
//! Which is faster depends on the machine and its load, so the receiver measures. On one
//! machine of the project's kind the ring moved 1 MiB in 22 us against 75 us for a pull;
//! on another the ring took 77 us and a pull 56; and a sender that is descheduled stalls
//! the ring but not a pull. Per message size (powers of two) the receiver keeps the time
//! per byte of the last [`SAMPLES`] transfers each way and takes the way whose best recent
//! transfer was faster: a best, not a mean, because a way's first transfers in a row are
//! slow (the first eight pulls of 1 MiB here took 300 down to 70 us, then 55-60), and a
//! transfer that waited for a descheduled process says little about the way. So each way
//! is tried in runs of [`BURST`], at the start and then every [`EXPLORE_EVERY`]th message
//! for the way not taken, which notices a change (other load on the node). Sans-IO: the
//! caller times the transfers.

use std::time::Duration;

/// The two ways.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Copy {
    Pull,
    Ring,
}

/// Transfers a way is tried for in a row.
pub const BURST: u32 = 8;
/// Every this many messages of a size, the way not taken is tried again.
pub const EXPLORE_EVERY: u32 = 128;
/// Transfers each way remembered per size.
pub const SAMPLES: usize = 4;

/// The last transfers one way, in nanoseconds per byte (a ring of [`SAMPLES`]).
#[derive(Clone, Copy, Default)]
struct Recent {
    times: [f64; SAMPLES],
    count: usize,
}

impl Recent {
    fn add(&mut self, per_byte: f64) {
        self.times[self.count % SAMPLES] = per_byte;
        self.count += 1;
    }

    /// The best of the transfers remembered (None before any).
    fn best(&self) -> Option<f64> {
        let n = self.count.min(SAMPLES);
        self.times[..n].iter().copied().reduce(f64::min)
    }
}

#[derive(Clone, Copy, Default)]
struct Bucket {
    pull: Recent,
    ring: Recent,
    /// Messages of this size chosen for.
    chosen: u32,
    /// A way being tried, and how many more transfers it is tried for.
    burst: Option<(Copy, u32)>,
}

impl Bucket {
    /// Tries `way` for a run of [`BURST`] transfers, this one included.
    fn burst(&mut self, way: Copy) -> Copy {
        self.burst = Some((way, BURST - 1));
        way
    }
}

pub struct CopyChoice {
    /// None: measure; Some(n): pull every message of at least n bytes, never a smaller one
    /// (`CROSSMPI_SHM_CMA_MIN`; `u64::MAX` once a pull failed).
    fixed: Option<u64>,
    buckets: [Bucket; 64],
}

impl CopyChoice {
    /// `cma_min` 0 measures; any other value pulls exactly the messages of at least that
    /// many bytes.
    pub fn new(cma_min: u64) -> CopyChoice {
        CopyChoice {
            fixed: (cma_min != 0).then_some(cma_min),
            buckets: [Bucket::default(); 64],
        }
    }

    /// Whether a sender offers a rendezvous message of `len` bytes (contiguous, to a
    /// peer on this node) for pulling.
    pub fn offers(&self, len: u64) -> bool {
        self.fixed.is_none_or(|min| len >= min)
    }

    /// The way a receiver takes for an offered message of `len` bytes.
    pub fn choose(&mut self, len: u64) -> Copy {
        if self.fixed.is_some() {
            return Copy::Pull;
        }
        let b = &mut self.buckets[len.max(1).ilog2() as usize];
        b.chosen = b.chosen.wrapping_add(1);
        if let Some((way, left)) = b.burst {
            b.burst = (left > 1).then_some((way, left - 1));
            return way;
        }
        let (best, other) = match (b.pull.best(), b.ring.best()) {
            (None, _) => return b.burst(Copy::Pull),
            (_, None) => return b.burst(Copy::Ring),
            (Some(pull), Some(ring)) if pull <= ring => (Copy::Pull, Copy::Ring),
            _ => (Copy::Ring, Copy::Pull),
        };
        if b.chosen.is_multiple_of(EXPLORE_EVERY) {
            b.burst(other)
        } else {
            best
        }
    }

    /// A transfer of `len` bytes took `elapsed` by `way`.
    pub fn record(&mut self, way: Copy, len: u64, elapsed: Duration) {
        let b = &mut self.buckets[len.max(1).ilog2() as usize];
        let per_byte = elapsed.as_nanos() as f64 / len.max(1) as f64;
        match way {
            Copy::Pull => b.pull.add(per_byte),
            Copy::Ring => b.ring.add(per_byte),
        }
    }

    /// A pull failed (the kernel refused cross-memory attach): never offer or pull again.
    pub fn pull_failed(&mut self) {
        self.fixed = Some(u64::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    /// Chooses for one message of `len` bytes and records the time its way took.
    fn transfer(c: &mut CopyChoice, len: u64, pull: u64, ring: u64) -> Copy {
        let way = c.choose(len);
        c.record(way, len, us(if way == Copy::Pull { pull } else { ring }));
        way
    }

    #[test]
    fn both_ways_are_tried_in_runs_then_the_faster_is_kept_and_the_other_retried_now_and_then() {
        let mut c = CopyChoice::new(0);
        assert!(c.offers(40_000), "measuring: every rendezvous is offered");
        // Pulls start slow (fresh pages), as measured here; the ring keeps its pace.
        let pulls = [300, 320, 120, 118, 84, 73, 116, 71];
        for p in pulls {
            assert_eq!(transfer(&mut c, MIB, p, 80), Copy::Pull);
        }
        for _ in 0..BURST {
            assert_eq!(transfer(&mut c, MIB, 60, 80), Copy::Ring);
        }
        let ways: Vec<Copy> = (0..EXPLORE_EVERY)
            .map(|_| transfer(&mut c, MIB, 56, 80))
            .collect();
        let rings = ways.iter().filter(|&&w| w == Copy::Ring).count();
        assert_eq!(rings as u32, BURST, "one run of the slower way: {ways:?}");
        assert_eq!(
            c.choose(2 * MIB),
            Copy::Pull,
            "other sizes are measured apart"
        );
    }

    #[test]
    fn a_way_that_becomes_slower_loses_its_place() {
        let mut c = CopyChoice::new(0);
        for _ in 0..2 * BURST {
            transfer(&mut c, MIB, 75, 22);
        }
        assert_eq!(c.choose(MIB), Copy::Ring);
        // The sender gets descheduled: one slow transfer does not count, a run of them does.
        c.record(Copy::Ring, MIB, us(3000));
        assert_eq!(c.choose(MIB), Copy::Ring);
        for _ in 0..SAMPLES {
            c.record(Copy::Ring, MIB, us(3000));
        }
        assert_eq!(c.choose(MIB), Copy::Pull);
    }

    #[test]
    fn a_fixed_threshold_pulls_exactly_the_messages_above_it_and_a_failure_stops_pulls() {
        let mut c = CopyChoice::new(256 * 1024);
        assert!(!c.offers(64 * 1024));
        assert!(c.offers(256 * 1024));
        assert_eq!(c.choose(MIB), Copy::Pull);
        c.pull_failed();
        assert!(!c.offers(MIB), "no pulls after the kernel refused one");
        let mut m = CopyChoice::new(0);
        m.pull_failed();
        assert!(!m.offers(64 * MIB));
    }
}
