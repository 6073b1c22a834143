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

/// How long to poll before sleeping, and whether to yield between polls.
#[derive(Clone, Copy, Debug)]
pub struct WaitPolicy {
    pub spin: Duration,
    pub yield_between_polls: bool,
}

impl WaitPolicy {
    /// `spin_us` = 0 picks the default: 1 ms of polling when every local rank has a
    /// processor; 50 us, yielding each round, when the node is oversubscribed.
    pub fn new(spin_us: u64, local_ranks: usize, cpus: usize) -> WaitPolicy {
        let oversubscribed = local_ranks > cpus;
        let spin = match spin_us {
            0 if oversubscribed => Duration::from_micros(50),
            0 => Duration::from_millis(1),
            us => Duration::from_micros(us),
        };
        WaitPolicy {
            spin,
            yield_between_polls: oversubscribed,
        }
    }
}

/// Tracks one wait: when polling should give way to sleeping.
pub struct Waiter {
    started: Option<Instant>,
    polls: u32,
    policy: WaitPolicy,
}

impl Waiter {
    pub fn new(policy: WaitPolicy) -> Waiter {
        Waiter {
            started: None,
            polls: 0,
            policy,
        }
    }

    /// Called after a poll found nothing to do; true when it is time to sleep.
    pub fn idle(&mut self) -> bool {
        self.polls += 1;
        if self.policy.yield_between_polls {
            std::thread::yield_now();
        }
        // Reading the clock every poll would cost more than the poll itself.
        if !self.polls.is_multiple_of(64) {
            return false;
        }
        let now = Instant::now();
        let started = *self.started.get_or_insert(now);
        now.duration_since(started) >= self.policy.spin
    }

    /// Called when a poll made progress: the peer is active, keep polling.
    pub fn busy(&mut self) {
        self.started = None;
        self.polls = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oversubscribed_nodes_poll_briefly_and_yield() {
        let p = WaitPolicy::new(0, 4, 2);
        assert!(p.yield_between_polls);
        assert_eq!(p.spin, Duration::from_micros(50));
        let p = WaitPolicy::new(0, 2, 2);
        assert!(!p.yield_between_polls);
        assert_eq!(WaitPolicy::new(7, 2, 2).spin, Duration::from_micros(7));
    }

    #[test]
    fn a_waiter_sleeps_only_after_the_spin_time() {
        let mut w = Waiter::new(WaitPolicy::new(2000, 1, 2));
        let start = Instant::now();
        while !w.idle() {}
        assert!(start.elapsed() >= Duration::from_micros(2000));
        w.busy();
        assert!(!w.idle());
    }
}
