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
//! Both estimates are running medians, so the typical frame spends exactly the
//! configured delay on the link instead of the delay plus 10-30 µs per crossing. A
//! median, not a mean: under load the latencies are skewed (mostly a few µs, now
//! and then a stall of 100 µs), and a mean pulled up by the stalls would send the
//! typical frame early. Samples are also capped (a stall of milliseconds is a
//! preemption, not the typical latency).

/// How far one sample moves a running median: fine enough that the estimate sits
/// within a µs of the true median, coarse enough to follow a change of load (say
/// from 20 to 60 µs) within a few dozen frames. The start-up calibration gives the
/// wake-up estimate its first value.
const STEP_NS: u64 = 1_000;

/// A running median of nanosecond samples ("frugal streaming": each sample moves
/// the estimate one step towards itself, so it settles where as many samples fall
/// above as below, and one outlier moves it by one step only).
#[derive(Clone, Copy, Debug, Default)]
struct RunningMedian {
    estimate: u64,
}

impl RunningMedian {
    fn add(&mut self, sample: u64) {
        if sample > self.estimate {
            self.estimate += STEP_NS.min(sample - self.estimate);
        } else {
            self.estimate -= STEP_NS.min(self.estimate - sample);
        }
    }

    fn get(self) -> u64 {
        self.estimate
    }
}

/// The delay line's own latencies.
#[derive(Clone, Debug)]
pub struct Lateness {
    wake: RunningMedian,
    release: RunningMedian,
    cap_ns: u64,
}

impl Lateness {
    /// `cap_ns` bounds every sample (the loop polls through that much time before a
    /// frame is due, so a wake-up later than that is a stall, not the norm).
    pub fn new(cap_ns: u64) -> Self {
        Self {
            wake: RunningMedian::default(),
            release: RunningMedian::default(),
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
    fn typical_wake_up_is_learnt_and_backdates_arrivals() {
        let mut l = Lateness::new(100_000);
        assert_eq!(l.backdate(1_000_000), 0);
        // Nine wake-ups in ten take 20 µs, one takes 90 µs: the median is 20 µs
        // (the mean, 27 µs, would send the typical frame 7 µs early).
        for i in 0..400u64 {
            let wanted = i * 1_000_000;
            let late = if i % 10 == 3 { 90_000 } else { 20_000 };
            l.timer_woke(wanted, wanted + late);
        }
        assert!((19_000..=21_000).contains(&l.wake_ns()), "{}", l.wake_ns());
        let w = l.wake_ns();
        // Woken after a long sleep: the frame came one wake-up before we ran.
        assert_eq!(l.backdate(1_000_000), w);
        // The wait began only 10 µs ago: the frame cannot be older than that.
        assert_eq!(l.backdate(10_000), 10_000);
        // A wait that found input at once (no sleep): the frame is stamped now.
        assert_eq!(l.backdate(0), 0);
    }

    #[test]
    fn one_stall_moves_the_estimate_by_one_step() {
        let mut l = Lateness::new(100_000);
        for i in 0..200u64 {
            l.timer_woke(i * 1000, i * 1000 + 20_000);
        }
        assert_eq!(l.wake_ns(), 20_000);
        l.timer_woke(0, 50_000_000);
        assert_eq!(l.wake_ns(), 20_000 + STEP_NS);
        // An early wake-up (clock granularity) counts as zero, never wraps.
        l.timer_woke(5_000, 4_000);
        assert_eq!(l.wake_ns(), 20_000);
        // A change of load is followed.
        for i in 0..100u64 {
            l.timer_woke(i * 1000, i * 1000 + 60_000);
        }
        assert_eq!(l.wake_ns(), 60_000);
    }

    #[test]
    fn release_lead_cancels_a_steady_lateness() {
        // The loop releases a frame 8.5 µs after the moment it aims for. Aiming
        // `lead` early makes the frames leave at their due time, within a step.
        let mut l = Lateness::new(100_000);
        let mut errors = Vec::new();
        for i in 0..400u64 {
            let due = 1_000_000 + i * 1_000_000;
            let target = due - l.lead();
            let sent = target + 8_500;
            l.released(target, sent);
            errors.push(sent as i64 - due as i64);
        }
        assert!((8_000..=9_000).contains(&l.lead()), "{}", l.lead());
        assert!(
            errors[300..].iter().all(|e| e.abs() <= STEP_NS as i64),
            "{errors:?}"
        );
    }
}
