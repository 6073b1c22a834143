//! How a rendezvous between ranks of one node moves its data: pulled by the receiver with
//! cross-memory attach (one copy; the sender need not be running), split (the receiver
//! pulls the first half while the sender writes the second half into the receiver, so
//! both processes copy at once, one copy each), or streamed through the ring (two copies,
//! made by sender and receiver at once).
//!
//! Which is faster depends on the machine and its load, so the receiver measures. On one
//! machine of the project's kind the ring moved 1 MiB in 22 us against 75 us for a pull;
//! on another the ring took 77 us and a pull 56; a split needs both processes running, a
//! pull only the receiver, and a sender that is descheduled stalls the ring. Per message
//! size (powers of two) the receiver keeps the time per byte of the last [`SAMPLES`]
//! transfers each way and takes the way whose best recent transfer was fastest: a best,
//! not a mean, because a way's first transfers in a row are slow (the first pulls of 1 MiB
//! here took 300 down to 70 us, then 55-60), and a transfer that waited for a
//! descheduled process says little about the way. So the first way tried for a size is
//! tried in a run of [`BURST`] (those slow first transfers are the fresh buffer's, any way
//! would see them), each other way in runs of [`TRY`], at the start and then every
//! [`EXPLORE_EVERY`]th message for one way not taken, which notices a change (other load
//! on the node). Sans-IO: the caller times the transfers.
//!
//! Exchanges, where the receiver's own long message to the sender waits too (both
//! processes send and receive at once: all-to-all, allgather, pairwise halo swaps), are
//! measured apart from one-way transfers, between pulling and the ring only: a split
//! would have the sender, busy with its own receive, write into us. Their times are not
//! comparable with one-way ones (a ring transfer's time then covers both directions) and
//! depend on the way the peer takes; both members of an exchange see the same sequence
//! of messages, so their choices, tries included, run in step (2 ranks, all-to-all of 1
//! MiB blocks, on a machine where a one-way pull took 96 us and the ring 48: 110 us a
//! call when exchanges always pulled, 62-70 when both sides stream through the rings).

use std::time::Duration;

/// The ways.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Copy {
    Pull,
    Split,
    Ring,
}

const WAYS: [Copy; 3] = [Copy::Pull, Copy::Split, Copy::Ring];

/// Transfers the first way tried for a size is tried for in a row: the receiver's buffer
/// is fresh then, and its first transfers are slow whatever the way. Four, so that the
/// whole exploration (4 + [`TRY`] + [`TRY`]) fits in the first eight messages of a size,
/// the untimed warm-up of an osu-style benchmark and the start-up of a program: with
/// eight, the tries of the slower ways fell in the timed part (bench/p2p/pingpong.c, 1
/// MiB: 37-44 us, median 42, against 34-45, median 35, with four). The pull's first
/// estimate is then higher (best of four fresh transfers 74-81 us here, of eight 66-73),
/// which matters only between ways within about 10 %; exploring every
/// [`EXPLORE_EVERY`]th message corrects it.
pub const BURST: u32 = 4;
/// Transfers any other way is tried for in a row, at the start and when exploring: the
/// pages are warm by then, and every transfer on a slower way is time lost (a program
/// moving a size some twenty times spent most of them exploring in runs of [`BURST`]).
pub const TRY: u32 = 2;
/// Every this many messages of a size, a way not taken is tried again.
pub const EXPLORE_EVERY: u32 = 128;
/// Transfers each way remembered per size.
pub const SAMPLES: usize = 4;
/// Messages shorter than this are not split: the request to the sender and its answer
/// cost more than half a copy saves.
pub const SPLIT_MIN: u64 = 128 * 1024;

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
    /// By way, in the order of [`WAYS`].
    recent: [Recent; 3],
    /// Messages of this size chosen for.
    chosen: u32,
    /// A way being tried, and how many more transfers it is tried for.
    burst: Option<(Copy, u32)>,
    /// The way tried last when exploring, so exploring takes the others in turn.
    explored: usize,
}

impl Bucket {
    /// Tries `way` for a run of `run` transfers, this one included.
    fn burst(&mut self, way: Copy, run: u32) -> Copy {
        self.burst = (run > 1).then_some((way, run - 1));
        way
    }
}

fn index(way: Copy) -> usize {
    WAYS.iter().position(|&w| w == way).expect("a way")
}

/// How the message being received travels relative to the receiver's own traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Traffic {
    /// Nothing of ours to the sender waits for it.
    OneWay,
    /// Our own long message to the sender waits for it too.
    Exchange,
}

pub struct CopyChoice {
    /// None: measure; Some(n): pull every message of at least n bytes, never a smaller one
    /// (`CROSSMPI_SHM_CMA_MIN`; `u64::MAX` once a pull failed).
    fixed: Option<u64>,
    /// A pull has worked in this process (splitting needs cross-memory attach, whose
    /// failure only a plain pull can fall back from).
    pulled: bool,
    /// Per [`Traffic`], per size (log2 bytes).
    buckets: [[Bucket; 64]; 2],
}

impl CopyChoice {
    /// `cma_min` 0 measures, unless the node is `oversubscribed` (more ranks than
    /// processors): then every offered message is pulled, since a split and the ring need
    /// both processes running at once, which a descheduled one holds up, and merely trying
    /// them cost that much (4 ranks on 2 cores, 1 MiB: a ring transfer 750-1400 us, a
    /// split 200-240, a pull 100; the first calls of a 4-rank all-to-all of 1 MiB blocks
    /// 1350-2100 us against 1130-1190 pulling only). Streaming everything instead (no
    /// offers) was measured again later, 4 and 8 ranks on 2 cores: collectives whose
    /// buffers stay in the cache took 0.5-0.8 of the time (kernel copies ran at about 7
    /// GB/s, copies through the rings at 20), but the bucket sort's cold 128 KiB blocks
    /// 1.04-1.11 and conjugate gradients 1.01, and neither wall nor processor time per
    /// transfer picked the ring where it won (concurrent transfers share both clocks).
    /// Any other value pulls exactly the messages of at least that many bytes.
    pub fn new(cma_min: u64, oversubscribed: bool) -> CopyChoice {
        let cma_min = match cma_min {
            0 if oversubscribed => 1,
            n => n,
        };
        CopyChoice {
            fixed: (cma_min != 0).then_some(cma_min),
            pulled: false,
            buckets: [[Bucket::default(); 64]; 2],
        }
    }

    /// Whether a sender offers a rendezvous message of `len` bytes (contiguous, to a
    /// peer on this node) for cross-memory attach.
    pub fn offers(&self, len: u64) -> bool {
        self.fixed.is_none_or(|min| len >= min)
    }

    /// The way a receiver takes for an offered message of `len` bytes; `split_possible`:
    /// its buffer is contiguous, so the sender can write into it.
    pub fn choose(&mut self, len: u64, split_possible: bool, traffic: Traffic) -> Copy {
        if self.fixed.is_some() {
            return Copy::Pull;
        }
        let may_split =
            traffic == Traffic::OneWay && self.pulled && split_possible && len >= SPLIT_MIN;
        let usable = |w: &Copy| *w != Copy::Split || may_split;
        let ways = || WAYS.into_iter().filter(usable);
        let b = self.bucket(len, traffic);
        b.chosen = b.chosen.wrapping_add(1);
        if let Some((way, left)) = b.burst {
            b.burst = (left > 1).then_some((way, left - 1));
            if usable(&way) {
                return way;
            }
        }
        if let Some(untried) = ways().find(|&w| b.recent[index(w)].best().is_none()) {
            let first = b.recent.iter().all(|r| r.best().is_none());
            return b.burst(untried, if first { BURST } else { TRY });
        }
        let best = ways()
            .min_by(|&x, &y| {
                let (tx, ty) = (b.recent[index(x)].best(), b.recent[index(y)].best());
                tx.partial_cmp(&ty).expect("times are numbers")
            })
            .expect("pulling and streaming are always usable");
        if !b.chosen.is_multiple_of(EXPLORE_EVERY) {
            return best;
        }
        let others = ways().filter(|&w| w != best).count();
        b.explored = (b.explored + 1) % others;
        let next = ways()
            .filter(|&w| w != best)
            .nth(b.explored)
            .expect("counted above");
        b.burst(next, TRY)
    }

    /// A transfer of `len` bytes took `elapsed` by `way`.
    pub fn record(&mut self, way: Copy, len: u64, traffic: Traffic, elapsed: Duration) {
        if way == Copy::Pull {
            self.pulled = true;
        }
        let b = self.bucket(len, traffic);
        b.recent[index(way)].add(elapsed.as_nanos() as f64 / len.max(1) as f64);
    }

    fn bucket(&mut self, len: u64, traffic: Traffic) -> &mut Bucket {
        &mut self.buckets[usize::from(traffic == Traffic::Exchange)][len.max(1).ilog2() as usize]
    }

    /// A pull failed (the kernel refused cross-memory attach): never offer or pull again.
    pub fn pull_failed(&mut self) {
        self.fixed = Some(u64::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Traffic::{Exchange, OneWay};

    const MIB: u64 = 1 << 20;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    /// Chooses for one message of `len` bytes and records the time its way took.
    fn transfer(c: &mut CopyChoice, len: u64, times: [u64; 3]) -> Copy {
        let way = c.choose(len, true, OneWay);
        c.record(way, len, OneWay, us(times[index(way)]));
        way
    }

    #[test]
    fn every_way_is_tried_in_runs_then_the_fastest_is_kept_and_the_others_retried_now_and_then() {
        let mut c = CopyChoice::new(0, false);
        assert!(c.offers(40_000), "measuring: every rendezvous is offered");
        // Pulls start slow (fresh pages), as measured here; the others keep their pace.
        for p in [300, 120, 84, 73] {
            assert_eq!(transfer(&mut c, MIB, [p, 40, 80]), Copy::Pull);
        }
        for _ in 0..TRY {
            assert_eq!(transfer(&mut c, MIB, [60, 40, 80]), Copy::Split);
        }
        for _ in 0..TRY {
            assert_eq!(transfer(&mut c, MIB, [60, 40, 80]), Copy::Ring);
        }
        let ways: Vec<Copy> = (0..2 * EXPLORE_EVERY)
            .map(|_| transfer(&mut c, MIB, [56, 40, 80]))
            .collect();
        let count = |w| ways.iter().filter(|&&x| x == w).count() as u32;
        assert_eq!(
            (count(Copy::Pull), count(Copy::Ring)),
            (TRY, TRY),
            "{ways:?}"
        );
        assert_eq!(
            c.choose(2 * MIB, true, OneWay),
            Copy::Pull,
            "other sizes are measured apart"
        );
    }

    #[test]
    fn small_messages_contiguous_buffers_and_working_pulls_are_needed_to_split() {
        let mut c = CopyChoice::new(0, false);
        for _ in 0..BURST {
            assert_eq!(transfer(&mut c, MIB, [50, 40, 80]), Copy::Pull);
        }
        assert_eq!(
            c.choose(MIB, false, OneWay),
            Copy::Ring,
            "a scattered buffer cannot be split"
        );
        assert_eq!(
            c.choose(MIB, true, OneWay),
            Copy::Ring,
            "the ring's run goes on"
        );
        let mut fresh = CopyChoice::new(0, false);
        for _ in 0..3 * BURST {
            assert_ne!(transfer(&mut fresh, 64 * 1024, [5, 4, 8]), Copy::Split);
        }
    }

    #[test]
    fn an_oversubscribed_node_pulls_every_offered_message() {
        let mut c = CopyChoice::new(0, true);
        assert!(c.offers(40_000));
        for _ in 0..3 * BURST {
            assert_eq!(transfer(&mut c, MIB, [100, 40, 20]), Copy::Pull);
        }
        let mut told = CopyChoice::new(256 * 1024, true);
        assert!(!told.offers(64 * 1024), "an explicit threshold holds");
        assert_eq!(told.choose(MIB, true, OneWay), Copy::Pull);
    }

    #[test]
    fn a_way_that_becomes_slower_loses_its_place() {
        let mut c = CopyChoice::new(0, false);
        for _ in 0..3 * BURST {
            transfer(&mut c, MIB, [75, 60, 22]);
        }
        assert_eq!(c.choose(MIB, true, OneWay), Copy::Ring);
        // The sender gets descheduled: one slow transfer does not count, a run of them does.
        c.record(Copy::Ring, MIB, OneWay, us(3000));
        assert_eq!(c.choose(MIB, true, OneWay), Copy::Ring);
        for _ in 0..SAMPLES {
            c.record(Copy::Ring, MIB, OneWay, us(3000));
        }
        assert_eq!(c.choose(MIB, true, OneWay), Copy::Split);
    }

    #[test]
    fn a_fixed_threshold_pulls_exactly_the_messages_above_it_and_a_failure_stops_pulls() {
        let mut c = CopyChoice::new(256 * 1024, false);
        assert!(!c.offers(64 * 1024));
        assert!(c.offers(256 * 1024));
        assert_eq!(c.choose(MIB, true, OneWay), Copy::Pull);
        c.pull_failed();
        assert!(!c.offers(MIB), "no pulls after the kernel refused one");
        let mut m = CopyChoice::new(0, false);
        m.pull_failed();
        assert!(!m.offers(64 * MIB));
    }

    #[test]
    fn exchanges_are_measured_apart_between_pulling_and_the_ring() {
        let mut c = CopyChoice::new(0, false);
        for _ in 0..3 * BURST {
            let way = c.choose(MIB, true, OneWay);
            c.record(way, MIB, OneWay, us([96, 40, 48][index(way)]));
        }
        assert_eq!(c.choose(MIB, true, OneWay), Copy::Split);
        // A ring transfer in an exchange covers both directions: slower than one-way
        // transfers were, faster than pulls in exchanges, and never a split.
        let ways: Vec<Copy> = (0..BURST + TRY + 8)
            .map(|_| {
                let way = c.choose(MIB, true, Exchange);
                c.record(way, MIB, Exchange, us([110, 1, 70][index(way)]));
                way
            })
            .collect();
        assert!(!ways.contains(&Copy::Split), "{ways:?}");
        assert_eq!(ways[..BURST as usize], [Copy::Pull; BURST as usize]);
        assert!(
            ways[BURST as usize..].iter().all(|&w| w == Copy::Ring),
            "{ways:?}"
        );
        assert_eq!(
            c.choose(MIB, true, OneWay),
            Copy::Split,
            "one-way choice unchanged"
        );
    }
}
