//! How much one IMPI host connection queues ahead of a reply: packets built in the
//! process (the write-ahead) and bytes the kernel holds unsent (`TCP_NOTSENT_LOWAT`),
//! sized from the rate the connection delivers. A reply (the `SYNCACK` a peer's long
//! message waits for) goes behind both, so they are kept to `CROSSMPI_IMPI_QUEUE_US`
//! of the measured rate, never below the configured minimums: on a 100 Mbit/s
//! front-end the minimums (256 KiB, 128 KiB) are already 20 and 10 ms. A fast link
//! needs far more: in the lab (a1 <-> b1, both ranks sharing two cores with the routers)
//! 4 MiB messages streamed at 4242-4459 MB/s with the minimums and at 5010-5280 with a
//! 1-4 MiB write-ahead and 16 MiB unsent, crossmpi's TCP route at 5206-5715
//! (bench/impi/FINDINGS.md 8). Sans-IO: the caller reads the acknowledged byte count.

use std::time::{Duration, Instant};

/// The longest the rate is measured over, and the shortest: a measurement needs a few
/// round trips' worth of acknowledgements.
pub const PERIOD: Duration = Duration::from_millis(2);
/// The largest write-ahead and unsent limit the rate may call for (the lab's best).
pub const MAX_WRITE_AHEAD: usize = 4 << 20;
pub const MAX_UNSENT: u32 = 16 << 20;

#[derive(Clone, Debug)]
pub struct QueueSize {
    min_write_ahead: usize,
    min_unsent: u32,
    budget: Duration,
    /// The last measurement: when, and the acknowledged count then.
    last: Option<(Instant, u64)>,
    pub write_ahead: usize,
    pub unsent: u32,
}

impl QueueSize {
    /// Starts at the minimums; `budget`: how long a reply may wait behind the queues at
    /// the measured rate (zero keeps the minimums).
    pub fn new(min_write_ahead: usize, min_unsent: u32, budget: Duration) -> QueueSize {
        QueueSize {
            min_write_ahead,
            min_unsent,
            budget,
            last: None,
            write_ahead: min_write_ahead,
            unsent: min_unsent,
        }
    }

    /// Whether a measurement is due at `now` (cheap: the caller then reads the count).
    pub fn due(&self, now: Instant) -> bool {
        !self.budget.is_zero() && self.last.is_none_or(|(t, _)| now - t >= PERIOD)
    }

    /// Takes the connection's acknowledged byte count at `now` and resizes; returns the
    /// new unsent limit when it moved by more than a quarter (worth a system call).
    pub fn observe(&mut self, now: Instant, acked: u64) -> Option<u32> {
        let (then, before) = self.last.replace((now, acked))?;
        let rate = acked.saturating_sub(before) as f64 / (now - then).as_secs_f64();
        let budget = (rate * self.budget.as_secs_f64()) as u64;
        self.write_ahead = (budget as usize).clamp(self.min_write_ahead, MAX_WRITE_AHEAD);
        let unsent = budget.clamp(self.min_unsent.into(), MAX_UNSENT.into()) as u32;
        let moved = unsent.abs_diff(self.unsent) > self.unsent / 4;
        moved.then(|| {
            self.unsent = unsent;
            unsent
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_fast_connection_queues_its_budget_a_slow_one_the_minimums() {
        let t0 = Instant::now();
        let mut q = QueueSize::new(256 << 10, 128 << 10, 2 * MS);
        assert!(q.due(t0));
        assert_eq!(
            q.observe(t0, 1),
            None,
            "the first count only starts the clock"
        );
        assert!(!q.due(t0 + MS));
        assert!(q.due(t0 + 2 * MS));
        // 5 GB/s: 2 ms of it is 10 MB, within both maximums for the unsent part.
        assert_eq!(q.observe(t0 + 2 * MS, 1 + 10_000_000), Some(10_000_000));
        assert_eq!(q.write_ahead, MAX_WRITE_AHEAD);
        // A little slower: not worth a system call.
        assert_eq!(q.observe(t0 + 4 * MS, 1 + 19_000_000), None);
        assert_eq!(q.unsent, 10_000_000);
        // 100 Mbit/s (12.5 MB/s): 25 KB, below the minimums.
        assert_eq!(q.observe(t0 + 6 * MS, 1 + 19_025_000), Some(128 << 10));
        assert_eq!(q.write_ahead, 256 << 10);
        // Idle (nothing acknowledged): the minimums stay.
        assert_eq!(q.observe(t0 + 20 * MS, 1 + 19_025_000), None);
        // 50 GB/s would be 100 MB: capped.
        assert_eq!(q.observe(t0 + 22 * MS, 1 + 119_025_000), Some(MAX_UNSENT));
    }

    #[test]
    fn a_zero_budget_never_measures() {
        let q = QueueSize::new(256 << 10, 128 << 10, Duration::ZERO);
        assert!(!q.due(Instant::now()));
        assert_eq!((q.write_ahead, q.unsent), (256 << 10, 128 << 10));
    }
}
