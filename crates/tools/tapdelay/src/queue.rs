//! The sans-IO core of the delay line: one direction of an emulated link.
//!
//! Frames go in with their arrival time and come out when they are due. A frame is
//! due `delay` after it has been serialised onto the emulated link: with no rate cap
//! that is its arrival, with a rate cap it is when the link has finished sending all
//! earlier frames plus this one. Frames may be lost (a seeded PRNG, so runs are
//! reproducible) or tail-dropped when the backlog or the memory bound is exceeded.
//! Because the delay is constant and the link drains in order, due times never
//! decrease, so a FIFO is the whole schedule.

use std::collections::VecDeque;

use crate::rng::SplitMix64;

/// How one direction of the link behaves.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkConfig {
    /// One-way propagation delay in nanoseconds.
    pub delay_ns: u64,
    /// Probability in [0, 1] that a frame is lost.
    pub loss: f64,
    /// Link rate in bit/s; `None` means only the delay is emulated.
    pub rate_bps: Option<u64>,
    /// With a rate cap, a frame is tail-dropped when it would wait longer than this
    /// for the link (the emulated router's buffer, expressed as time).
    pub max_backlog_ns: u64,
    /// Bytes at the start of each frame that are not on the wire (the virtio-net
    /// header in vnet mode), excluded when metering the rate.
    pub header_bytes: usize,
    /// At most this many frames are held at once: the memory bound.
    pub max_frames: usize,
}

/// Why a frame was not queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drop {
    /// Lost on purpose (the configured loss rate).
    Lost,
    /// The emulated link's buffer (backlog) or the memory bound is full.
    Overflow,
}

/// Counters for reports and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub forwarded: u64,
    pub lost: u64,
    pub overflow: u64,
}

/// One direction of the link: a FIFO of frames with their due times.
pub struct DelayQueue<B> {
    config: LinkConfig,
    loss_threshold: u64,
    rng: SplitMix64,
    frames: VecDeque<(u64, B)>,
    /// When the emulated link finishes sending the last accepted frame.
    link_free_ns: u64,
    /// The latest arrival time offered: arrivals are estimates (see `lateness`), and
    /// one that comes out earlier than its predecessor's is taken as equal, so due
    /// times never decrease.
    last_arrival_ns: u64,
    stats: Stats,
}

impl<B: AsRef<[u8]>> DelayQueue<B> {
    pub fn new(config: LinkConfig, seed: u64) -> Self {
        let loss = config.loss.clamp(0.0, 1.0);
        // A frame is lost when a uniform 64-bit draw falls below this threshold.
        let loss_threshold = if loss >= 1.0 {
            u64::MAX
        } else {
            (loss * (u64::MAX as f64)) as u64
        };
        Self {
            config,
            loss_threshold,
            rng: SplitMix64::new(seed),
            frames: VecDeque::new(),
            link_free_ns: 0,
            last_arrival_ns: 0,
            stats: Stats::default(),
        }
    }

    /// Offers a frame that arrived at `now_ns`. On a drop the buffer is handed back
    /// so the caller can reuse it.
    pub fn push(&mut self, now_ns: u64, frame: B) -> Result<(), (Drop, B)> {
        let now_ns = now_ns.max(self.last_arrival_ns);
        self.last_arrival_ns = now_ns;
        if self.loss_threshold > 0 && self.rng.next_u64() < self.loss_threshold {
            self.stats.lost += 1;
            return Err((Drop::Lost, frame));
        }
        if self.frames.len() >= self.config.max_frames {
            self.stats.overflow += 1;
            return Err((Drop::Overflow, frame));
        }
        let sent_ns = match self.config.rate_bps {
            None => now_ns,
            Some(rate) => {
                let start = self.link_free_ns.max(now_ns);
                if start - now_ns > self.config.max_backlog_ns {
                    self.stats.overflow += 1;
                    return Err((Drop::Overflow, frame));
                }
                let wire = frame
                    .as_ref()
                    .len()
                    .saturating_sub(self.config.header_bytes) as u128;
                let serialise = (wire * 8 * 1_000_000_000 / u128::from(rate.max(1))) as u64;
                self.link_free_ns = start + serialise;
                self.link_free_ns
            }
        };
        self.frames
            .push_back((sent_ns + self.config.delay_ns, frame));
        Ok(())
    }

    /// When the next frame is due, if any.
    pub fn next_due(&self) -> Option<u64> {
        self.frames.front().map(|(due, _)| *due)
    }

    /// Takes the next frame, with its due time, if it is due at `now_ns`.
    pub fn pop_due(&mut self, now_ns: u64) -> Option<(u64, B)> {
        match self.frames.front() {
            Some((due, _)) if *due <= now_ns => {
                self.stats.forwarded += 1;
                self.frames.pop_front()
            }
            _ => None,
        }
    }

    pub fn stats(&self) -> Stats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> LinkConfig {
        LinkConfig {
            delay_ns: 5_000_000,
            loss: 0.0,
            rate_bps: None,
            max_backlog_ns: 20_000_000,
            header_bytes: 0,
            max_frames: 1_000_000,
        }
    }

    #[test]
    fn frame_comes_out_exactly_after_the_delay() {
        let mut q = DelayQueue::new(config(), 1);
        q.push(1_000, vec![0u8; 100]).unwrap();
        assert_eq!(q.next_due(), Some(5_001_000));
        assert!(q.pop_due(5_000_999).is_none());
        assert_eq!(
            q.pop_due(5_001_000).map(|(due, f)| (due, f.len())),
            Some((5_001_000, 100))
        );
        assert_eq!(q.next_due(), None);
        assert_eq!(q.stats().forwarded, 1);
    }

    #[test]
    fn frames_keep_their_order_and_spacing() {
        let mut q = DelayQueue::new(config(), 1);
        for (i, t) in [0u64, 10, 2_000, 2_001].iter().enumerate() {
            q.push(*t, vec![i as u8]).unwrap();
        }
        let mut out = Vec::new();
        let mut now = 0;
        while q.next_due().is_some() {
            now = q.next_due().unwrap();
            while let Some((due, f)) = q.pop_due(now) {
                assert_eq!(due, now);
                out.push((now, f[0]));
            }
        }
        assert_eq!(now, 5_002_001);
        let expected = [
            (5_000_000, 0),
            (5_000_010, 1),
            (5_002_000, 2),
            (5_002_001, 3),
        ];
        assert_eq!(out, expected);
    }

    #[test]
    fn an_arrival_estimated_before_its_predecessor_keeps_the_order() {
        let mut q = DelayQueue::new(config(), 1);
        q.push(2_000, vec![1]).unwrap();
        q.push(1_500, vec![2]).unwrap();
        assert_eq!(q.pop_due(5_002_000), Some((5_002_000, vec![1])));
        assert_eq!(q.pop_due(5_002_000), Some((5_002_000, vec![2])));
    }

    #[test]
    fn rate_cap_serialises_back_to_back_frames() {
        // 1250 bytes at 10 Mbit/s take 1 ms on the wire.
        let cfg = LinkConfig {
            rate_bps: Some(10_000_000),
            delay_ns: 0,
            ..config()
        };
        let mut q = DelayQueue::new(cfg, 1);
        q.push(0, vec![0u8; 1250]).unwrap();
        q.push(0, vec![0u8; 1250]).unwrap();
        q.push(5_000_000, vec![0u8; 1250]).unwrap();
        let dues: Vec<u64> = std::iter::from_fn(|| {
            let due = q.next_due()?;
            q.pop_due(due);
            Some(due)
        })
        .collect();
        assert_eq!(dues, vec![1_000_000, 2_000_000, 6_000_000]);
    }

    #[test]
    fn rate_cap_ignores_the_vnet_header() {
        let cfg = LinkConfig {
            rate_bps: Some(8_000_000),
            delay_ns: 0,
            header_bytes: 10,
            ..config()
        };
        let mut q = DelayQueue::new(cfg, 1);
        q.push(0, vec![0u8; 1010]).unwrap();
        assert_eq!(q.next_due(), Some(1_000_000));
    }

    #[test]
    fn backlog_beyond_the_limit_is_tail_dropped() {
        // Each 1250-byte frame takes 1 ms; the buffer holds 3 ms of backlog.
        let cfg = LinkConfig {
            rate_bps: Some(10_000_000),
            max_backlog_ns: 3_000_000,
            ..config()
        };
        let mut q = DelayQueue::new(cfg, 1);
        let verdicts: Vec<bool> = (0..6).map(|_| q.push(0, vec![0u8; 1250]).is_ok()).collect();
        assert_eq!(verdicts, vec![true, true, true, true, false, false]);
        assert_eq!(q.stats().overflow, 2);
        // Once the link has drained, frames are accepted again.
        assert!(q.push(4_000_000, vec![0u8; 1250]).is_ok());
    }

    #[test]
    fn memory_bound_limits_held_frames() {
        let cfg = LinkConfig {
            max_frames: 2,
            ..config()
        };
        let mut q = DelayQueue::new(cfg, 1);
        assert!(q.push(0, vec![1]).is_ok());
        assert!(q.push(0, vec![2]).is_ok());
        let (why, back) = q.push(0, vec![3]).unwrap_err();
        assert_eq!((why, back), (Drop::Overflow, vec![3]));
        q.pop_due(u64::MAX);
        assert!(q.push(0, vec![4]).is_ok());
    }

    #[test]
    fn loss_rate_matches_configuration_and_is_reproducible() {
        let cfg = LinkConfig {
            loss: 0.1,
            ..config()
        };
        let run = |seed| {
            let mut q = DelayQueue::new(cfg.clone(), seed);
            let lost: Vec<bool> = (0..100_000).map(|_| q.push(0, [0u8; 1]).is_err()).collect();
            while q.pop_due(u64::MAX).is_some() {}
            lost
        };
        let a = run(7);
        let lost = a.iter().filter(|l| **l).count();
        assert!((9_500..10_500).contains(&lost), "lost {lost} of 100000");
        assert_eq!(a, run(7));
        assert_ne!(a, run(8));
    }

    #[test]
    fn no_loss_and_full_loss_are_exact() {
        let mut none = DelayQueue::new(config(), 3);
        assert!((0..10_000).all(|_| none.push(0, [0u8]).is_ok()));
        let mut all = DelayQueue::new(
            LinkConfig {
                loss: 1.0,
                ..config()
            },
            3,
        );
        assert!((0..10_000).all(|_| all.push(0, [0u8]) == Err((Drop::Lost, [0u8]))));
    }
}
