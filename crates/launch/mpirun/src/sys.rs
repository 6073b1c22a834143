//! The few operating-system calls std does not offer, each a thin safe wrapper: poll,
//! signalling a process group, a self-pipe for signals, and keeping a descriptor open
//! across exec. Every `unsafe` block of the launcher is here.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// Waits until one of `fds` is ready for what its `events` ask or `timeout` passes;
/// fills each `revents`. EINTR counts as "nothing ready".
pub fn poll(fds: &mut [libc::pollfd], timeout: Duration) -> io::Result<usize> {
    let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    // SAFETY: `fds` is a valid, exclusively borrowed slice of pollfd of the given length.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(0)
        } else {
            Err(e)
        };
    }
    Ok(n as usize)
}

/// Sends `signal` to every process of the group `pgid` (a rank and what it started).
pub fn signal_group(pgid: i32, signal: libc::c_int) {
    if pgid > 1 {
        // SAFETY: kill has no memory effects; a negative pid addresses the group.
        unsafe { libc::kill(-pgid, signal) };
    }
}

/// Clears FD_CLOEXEC on `fd`. Only called between fork and exec (Command::pre_exec),
/// where fcntl is async-signal-safe.
pub fn keep_across_exec(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on an integer descriptor touches no memory of ours.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The write end of the current [`SignalPipe`], for the handler (-1: none).
static SIGNAL_PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(signal: libc::c_int) {
    let fd = SIGNAL_PIPE_WRITE.load(Ordering::Relaxed);
    if fd >= 0 {
        let byte = signal as u8;
        // SAFETY: write is async-signal-safe; the buffer is a local byte. A full pipe
        // loses the byte, which is fine: one pending byte already wakes the loop.
        unsafe { libc::write(fd, (&byte as *const u8).cast(), 1) };
    }
}

/// Turns the given signals into bytes readable from a pipe (the self-pipe trick), so the
/// launcher's poll loop sees Ctrl-C and child exits as ordinary input. Dropping it
/// restores the previous handlers.
pub struct SignalPipe {
    read: OwnedFd,
    _write: OwnedFd,
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

impl SignalPipe {
    pub fn install(signals: &[libc::c_int]) -> io::Result<SignalPipe> {
        let mut fds = [0 as RawFd; 2];
        // SAFETY: pipe2 writes two descriptors into the array we own.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        SIGNAL_PIPE_WRITE.store(write.as_raw_fd(), Ordering::Relaxed);
        let mut previous = Vec::new();
        for &signal in signals {
            // SAFETY: sigaction structs are plain data; zeroed is a valid empty mask/flags.
            // The handler only does an async-signal-safe write.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, &action, &mut old) == 0 {
                    previous.push((signal, old));
                }
            }
        }
        Ok(SignalPipe {
            read,
            _write: write,
            previous,
        })
    }

    pub fn fd(&self) -> RawFd {
        self.read.as_raw_fd()
    }

    /// The signals received since the last call, in order.
    pub fn take(&self) -> Vec<libc::c_int> {
        let mut buf = [0u8; 64];
        let mut got = Vec::new();
        loop {
            // SAFETY: reads into a local buffer of the stated length; the pipe is nonblocking.
            let n =
                unsafe { libc::read(self.read.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                return got;
            }
            got.extend(buf[..n as usize].iter().map(|&b| b as libc::c_int));
        }
    }
}

impl Drop for SignalPipe {
    fn drop(&mut self) {
        for (signal, old) in &self.previous {
            // SAFETY: restores an action previously returned by sigaction.
            unsafe { libc::sigaction(*signal, old, std::ptr::null_mut()) };
        }
        SIGNAL_PIPE_WRITE.store(-1, Ordering::Relaxed);
    }
}

/// The conventional name of a signal number, for messages.
pub fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        _ => return format!("signal {signal}"),
    };
    format!("{name} ({signal})")
}

/// Whether reading mpirun's stdin is safe: it is not a terminal, or mpirun is in the
/// terminal's foreground job (a background job reading its terminal would be stopped
/// by SIGTTIN, and the whole job with it).
pub fn stdin_readable_without_stopping() -> bool {
    // SAFETY: isatty, tcgetpgrp and getpgrp take integers and touch no memory of ours.
    unsafe { libc::isatty(0) == 0 || libc::tcgetpgrp(0) == libc::getpgrp() }
}
