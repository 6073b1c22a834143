//! How late the delay line itself runs, learnt as it goes (sans-IO: the loop reports
//! what it measured, this says how to correct).
//!
//! A frame spends the configured delay on the emulated link only if the process sees
//! it arrive and lets it leave on time, and it does neither exactly:
//! - A frame that arrives while the process sleeps is read one wake-up later (20-60
//!   µs in a VM). That wake-up cannot be measured for the frame itself, but timer
//!   wake-ups have the same cost and are measured on every timed sleep, so such a
//!   frame is stamped that much earlier (never earlier than the sleep began).
//! - A due frame leaves at the next turn of the loop, and after the frames before it
//!   in the same turn. Its lateness is measured, and frames are released that much
//!   ahead of their due time.
//!
//! Both estimates are exponentially weighted means, so the delay added by the
//! process averages to zero instead of adding 10-30 µs per crossing. Samples are
//! capped (a stall of milliseconds is a preemption, not the typical latency, and
//! correcting every frame by it would send frames early).

/// Weight of a new sample: 1/16, which follows a change of load within a few dozen
/// frames and keeps one odd sample from moving the estimate by more than 1/16 of it.
const SHIFT: u32 = 4;

/// An exponentially weighted mean of nanosecond samples, kept in fixed point.
#[derive(Clone, Copy, Debug, Default)]
struct Mean {
    scaled: u64,
}

impl Mean {
    fn add(&mut self, sample: u64) {
        self.scaled = self.scaled - (self.scaled >> SHIFT) + sample;
    }

    fn get(self) -> u64 {
        self.scaled >> SHIFT
    }
}

/// The delay line's own latencies.
#[derive(Clone, Debug)]
pub struct Lateness {
    wake: Mean,
    release: Mean,
    cap_ns: u64,
}

impl Lateness {
    /// `cap_ns` bounds every sample (the loop polls through that much time before a
    /// frame is due, so a wake-up later than that is a stall, not the norm).
    pub fn new(cap_ns: u64) -> Self {
        Self {
            wake: Mean::default(),
            release: Mean::default(),
            cap_ns,
        }
    }

    /// A timed sleep asked to wake at `wanted_ns` woke at `woke_ns`.
    pub fn timer_woke(&mut self, wanted_ns: u64, woke_ns: u64) {
        self.wake
            .add(woke_ns.saturating_sub(wanted_ns).min(self.cap_ns));
    }

    /// How much earlier than read the frames found after a wait of `waited_ns`
    /// arrived: a frame that woke the process arrived about one wake-up latency
    /// before the process ran, and not before the wait began. A wait that found
    /// input at once (the process was busy, not asleep) backdates nothing.
    pub fn backdate(&self, waited_ns: u64) -> u64 {
        self.wake.get().min(waited_ns)
    }

    /// How far ahead of its due time a frame is released, so that on average it
    /// leaves when due.
    pub fn lead(&self) -> u64 {
        self.release.get()
    }

    /// A frame released at `sent_ns` was meant to leave at `target_ns` (its due time
    /// minus the [`lead`](Self::lead) then in force).
    pub fn released(&mut self, target_ns: u64, sent_ns: u64) {
        self.release
            .add(sent_ns.saturating_sub(target_ns).min(self.cap_ns));
    }

    pub fn wake_ns(&self) -> u64 {
        self.wake.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_wake_ups_are_learnt_and_backdate_arrivals() {
        let mut l = Lateness::new(100_000);
        assert_eq!(l.backdate(1_000_000), 0);
        for i in 0..200u64 {
            let wanted = i * 1_000_000;
            l.timer_woke(wanted, wanted + 30_000);
        }
        // The fixed-point mean converges to within its rounding of the sample.
        assert!((29_900..=30_000).contains(&l.wake_ns()), "{}", l.wake_ns());
        let w = l.wake_ns();
        // Woken after a long sleep: the frame came one wake-up before we ran.
        assert_eq!(l.backdate(1_000_000), w);
        // The wait began only 10 µs ago: the frame cannot be older than that.
        assert_eq!(l.backdate(10_000), 10_000);
        // A wait that found input at once (no sleep): the frame is stamped now.
        assert_eq!(l.backdate(0), 0);
    }

    #[test]
    fn one_stall_moves_the_estimate_by_at_most_a_sixteenth_of_the_cap() {
        let mut l = Lateness::new(100_000);
        for i in 0..200u64 {
            l.timer_woke(i * 1000, i * 1000 + 20_000);
        }
        let before = l.wake_ns();
        l.timer_woke(0, 50_000_000);
        let after = l.wake_ns();
        assert!(after > before && after - before <= (100_000 - before) / 16 + 1);
        // An early wake-up (clock granularity) counts as zero, never wraps.
        l.timer_woke(5_000, 4_000);
        assert!(l.wake_ns() < after);
    }

    #[test]
    fn release_lead_cancels_a_steady_lateness() {
        // The loop releases a frame 8 µs after the moment it aims for. Aiming `lead`
        // early makes the frames leave, on average, at their due time.
        let mut l = Lateness::new(100_000);
        let mut error = 0i64;
        for i in 0..400u64 {
            let due = 1_000_000 + i * 1_000_000;
            let target = due - l.lead();
            let sent = target + 8_000;
            l.released(target, sent);
            if i >= 300 {
                error += sent as i64 - due as i64;
            }
        }
        assert!((7_900..=8_000).contains(&l.lead()), "{}", l.lead());
        assert!((error / 100).abs() <= 100, "mean error {} ns", error / 100);
    }
}
