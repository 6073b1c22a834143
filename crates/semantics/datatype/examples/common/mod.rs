//! Timing shared by the benchmark examples.

use std::time::Instant;

/// The shortest of `reps` timings of `f`, in seconds: the run least disturbed by other
/// work on the machine.
pub fn best_secs(reps: u32, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}
