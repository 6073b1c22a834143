//! The progress engine's waiting policy: poll every route for a while, then sleep until a
//! route has work.
//!
//! Polling keeps latency low when every rank has a core; sleeping keeps a waiting rank
//! from stealing the core its peer needs when ranks outnumber cores. While polling on an
//! oversubscribed node, each round also yields the processor.

use std::io;
use std::time::{Duration, Instant};

/// An epoll instance (edge-triggered: a socket reports each change once).
pub struct Epoll {
    fd: i32,
}

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: plain FFI call; the result is checked.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Epoll { fd })
    }

    pub fn fd(&self) -> i32 {
        self.fd
    }

    pub fn add(&self, fd: i32) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLET) as u32,
            u64: fd as u64,
        };
        // SAFETY: valid epoll descriptor and event structure.
        if unsafe { libc::epoll_ctl(self.fd, libc::EPOLL_CTL_ADD, fd, &mut ev) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Consumes pending readiness reports without waiting.
    pub fn drain(&self) {
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 64];
        // SAFETY: the buffer holds 64 events, as passed.
        while unsafe { libc::epoll_wait(self.fd, events.as_mut_ptr(), 64, 0) } == 64 {}
    }
}

impl Drop for Epoll {
    fn drop(&mut self) {
        // SAFETY: closing our own descriptor once.
        unsafe { libc::close(self.fd) };
    }
}

/// Sleeps until one of `fds` is readable or `timeout` passes.
pub fn sleep_on(fds: &[i32], timeout: Duration) {
    let mut pfds: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: pfds is a valid array of pfds.len() pollfd structures.
    unsafe {
        libc::poll(
            pfds.as_mut_ptr(),
            pfds.len() as libc::nfds_t,
            timeout.as_millis().min(i32::MAX as u128) as i32,
        )
    };
}

/// Number of processors this process may run on.
pub fn available_cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// How long to poll before sleeping, and when polling starts yielding the processor.
#[derive(Clone, Copy, Debug)]
pub struct WaitPolicy {
    pub spin: Duration,
    /// Polling yields the processor between polls once it has found nothing for this long:
    /// a peer that was descheduled (other load on the node) then gets our core back, while
    /// a message that is merely a few microseconds away is still caught without a syscall.
    pub yield_after: Duration,
}

impl WaitPolicy {
    /// `spin_us` = 0 picks the default: 2 ms of polling, yielding after 20 us, when every
    /// rank on this machine (`machine_ranks`, of every cluster) has a processor; 50 us of
    /// polling, yielding from the start, when ranks outnumber processors (the peer we
    /// wait for needs our core). `yield_us` overrides when yielding starts: processes
    /// this rank cannot count (an IMPI relay, ranks of clusters emulated in other network
    /// namespaces of this machine) may need the core too.
    pub fn new(
        spin_us: u64,
        yield_us: Option<u64>,
        machine_ranks: usize,
        cpus: usize,
    ) -> WaitPolicy {
        let oversubscribed = machine_ranks > cpus;
        let spin = match spin_us {
            0 if oversubscribed => Duration::from_micros(50),
            0 => Duration::from_millis(2),
            us => Duration::from_micros(us),
        };
        let yield_after = match yield_us {
            Some(us) => Duration::from_micros(us),
            None if oversubscribed => Duration::ZERO,
            None => Duration::from_micros(20),
        };
        WaitPolicy { spin, yield_after }
    }
}

/// Tracks one wait: when polling should yield, and when it should give way to sleeping.
pub struct Waiter {
    started: Option<Instant>,
    polls: u32,
    yielding: bool,
    policy: WaitPolicy,
}

impl Waiter {
    pub fn new(policy: WaitPolicy) -> Waiter {
        Waiter {
            started: None,
            polls: 0,
            yielding: policy.yield_after.is_zero(),
            policy,
        }
    }

    /// Called after a poll found nothing to do; true when it is time to sleep.
    pub fn idle(&mut self) -> bool {
        self.polls += 1;
        if self.yielding {
            std::thread::yield_now();
        }
        // Reading the clock every poll would cost more than the poll itself.
        if !self.yielding && !self.polls.is_multiple_of(64) {
            return false;
        }
        let now = Instant::now();
        let started = *self.started.get_or_insert(now);
        let idle = now.duration_since(started);
        self.yielding |= idle >= self.policy.yield_after;
        idle >= self.policy.spin
    }

    /// Called after a round that polled without running full progress: yields the
    /// processor once this wait yields at all.
    pub fn pause(&self) {
        if self.yielding {
            std::thread::yield_now();
        }
    }

    /// Called when a poll made progress: the peer is active, poll eagerly again.
    pub fn busy(&mut self) {
        self.started = None;
        self.polls = 0;
        self.yielding = self.policy.yield_after.is_zero();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oversubscribed_nodes_poll_briefly_and_yield_at_once() {
        let p = WaitPolicy::new(0, None, 4, 2);
        assert!(p.yield_after.is_zero());
        assert_eq!(p.spin, Duration::from_micros(50));
        let p = WaitPolicy::new(0, None, 2, 2);
        assert_eq!(p.yield_after, Duration::from_micros(20));
        assert_eq!(p.spin, Duration::from_millis(2));
        assert_eq!(
            WaitPolicy::new(7, None, 2, 2).spin,
            Duration::from_micros(7)
        );
        let told = WaitPolicy::new(0, Some(0), 2, 2);
        assert!(told.yield_after.is_zero());
        assert_eq!(told.spin, Duration::from_millis(2));
        assert_eq!(
            WaitPolicy::new(0, Some(5), 4, 2).yield_after,
            Duration::from_micros(5)
        );
    }

    #[test]
    fn a_waiter_starts_yielding_after_a_short_idle_time() {
        let mut w = Waiter::new(WaitPolicy::new(0, None, 2, 2));
        assert!(!w.yielding);
        let start = Instant::now();
        while !w.yielding {
            assert!(!w.idle());
        }
        assert!(start.elapsed() >= Duration::from_micros(20));
        w.busy();
        assert!(!w.yielding, "progress makes polling eager again");
    }

    #[test]
    fn a_waiter_sleeps_only_after_the_spin_time() {
        let mut w = Waiter::new(WaitPolicy::new(2000, None, 1, 2));
        let start = Instant::now();
        while !w.idle() {}
        assert!(start.elapsed() >= Duration::from_micros(2000));
        w.busy();
        assert!(!w.idle());
    }
}
