//! Attaching to a persistent TAP device inside a named network namespace. This is the
//! only place with `unsafe`: the setns/ioctl/read/write FFI.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

// From <linux/if_tun.h>; the libc crate does not export all of them on every target.
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
const TUNSETVNETHDRSZ: libc::c_ulong = 0x4004_54d8;
const IFF_TAP: libc::c_short = 0x0002;
const IFF_NO_PI: libc::c_short = 0x1000;
const IFF_VNET_HDR: libc::c_short = 0x4000;
const TUN_F_CSUM: libc::c_uint = 0x01;
const TUN_F_TSO4: libc::c_uint = 0x02;
const TUN_F_TSO6: libc::c_uint = 0x04;

/// Size of `struct virtio_net_hdr` that precedes each frame in vnet mode.
pub const VNET_HDR_LEN: usize = 10;

#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// An open TAP queue in nonblocking mode.
pub struct Tap {
    fd: OwnedFd,
}

/// Moves this thread into the network namespace `/run/netns/NAME`.
fn enter_netns(name: &str) -> io::Result<()> {
    let path = format!("/run/netns/{name}");
    let ns = File::open(&path)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot open {path}: {e}")))?;
    // SAFETY: `ns` is an open namespace file descriptor for the duration of the call.
    let rc = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc != 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("setns({path}): {e}")));
    }
    Ok(())
}

fn ioctl_ptr<T>(fd: &OwnedFd, request: libc::c_ulong, arg: *const T, what: &str) -> io::Result<()> {
    // SAFETY: `fd` is open and `arg` points to a live value of the type the kernel
    // expects for `request` (checked at each call site).
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), request, arg) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{what}: {e}")));
    }
    Ok(())
}

impl Tap {
    /// Enters namespace `netns` and attaches to the persistent TAP `ifname` there. The
    /// file descriptor stays bound to that device whatever namespace the thread
    /// moves to afterwards. Offloads are always set, because a persistent TAP keeps
    /// the previous user's flags and stale TSO flags on a plain attach stall TCP.
    pub fn open(netns: &str, ifname: &str, vnet: bool) -> io::Result<Tap> {
        enter_netns(netns)?;
        let name = CString::new(ifname)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface name has NUL"))?;
        let bytes = name.as_bytes_with_nul();
        if bytes.len() > libc::IFNAMSIZ {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("interface name {ifname:?} is longer than 15 bytes"),
            ));
        }
        let dev = CString::new("/dev/net/tun").expect("static path");
        // SAFETY: `dev` is a valid NUL-terminated path.
        let raw = unsafe {
            libc::open(
                dev.as_ptr(),
                libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if raw < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("open /dev/net/tun: {e}")));
        }
        // SAFETY: `raw` is a freshly opened descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: IFF_TAP | IFF_NO_PI,
            _pad: [0; 22],
        };
        if vnet {
            req.flags |= IFF_VNET_HDR;
        }
        for (dst, src) in req.name.iter_mut().zip(bytes) {
            *dst = *src as libc::c_char;
        }
        ioctl_ptr(&fd, TUNSETIFF, &req, &format!("TUNSETIFF {netns}:{ifname}"))?;
        let offload: libc::c_uint = if vnet {
            TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6
        } else {
            0
        };
        if vnet {
            let size = VNET_HDR_LEN as libc::c_int;
            ioctl_ptr(&fd, TUNSETVNETHDRSZ, &size, "TUNSETVNETHDRSZ")?;
        }
        // TUNSETOFFLOAD takes its argument by value, not by pointer.
        // SAFETY: `fd` is an open TAP descriptor; the argument is a plain integer.
        let rc = unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETOFFLOAD, offload as libc::c_ulong) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("TUNSETOFFLOAD: {e}")));
        }
        Ok(Tap { fd })
    }

    pub fn raw_fd(&self) -> libc::c_int {
        self.fd.as_raw_fd()
    }

    /// Reads one frame into `buf` (resized to the frame). `Ok(false)` when none is
    /// waiting.
    pub fn read_frame(&self, buf: &mut Vec<u8>) -> io::Result<bool> {
        buf.clear();
        let cap = buf.capacity();
        // SAFETY: the pointer and capacity describe `buf`'s allocation, and the length
        // is set to what the kernel wrote, which is at most `cap`.
        let n = unsafe {
            let n = libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), cap);
            if n >= 0 {
                buf.set_len(n as usize);
            }
            n
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(false),
                _ => Err(e),
            };
        }
        Ok(true)
    }

    pub fn write_frame(&self, frame: &[u8]) -> io::Result<()> {
        // SAFETY: `frame` is a valid slice for the duration of the call.
        let n = unsafe { libc::write(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Waits for input on a set of TAPs.
pub struct Poller {
    fds: Vec<libc::pollfd>,
}

impl Poller {
    pub fn new(fds: impl IntoIterator<Item = libc::c_int>) -> Self {
        let fds = fds
            .into_iter()
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        Self { fds }
    }

    /// Waits until a TAP is readable or `timeout_ns` has passed (`None`: forever).
    /// A TAP that fails (its namespace was deleted) is an error naming its index.
    pub fn wait(&mut self, timeout_ns: Option<u64>) -> Result<(), (usize, io::Error)> {
        let ts = timeout_ns.map(|ns| libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        });
        let ts_ptr = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `fds` is a live array of `fds.len()` pollfds and `ts_ptr` is null or
        // points at `ts`, which outlives the call.
        let rc = unsafe {
            libc::ppoll(
                self.fds.as_mut_ptr(),
                self.fds.len() as libc::nfds_t,
                ts_ptr,
                std::ptr::null(),
            )
        };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                self.fds.iter_mut().for_each(|p| p.revents = 0);
                return Ok(());
            }
            return Err((0, e));
        }
        let bad = libc::POLLERR | libc::POLLHUP | libc::POLLNVAL;
        if let Some(i) = self.fds.iter().position(|p| p.revents & bad != 0) {
            return Err((
                i,
                io::Error::new(io::ErrorKind::BrokenPipe, "TAP device went away"),
            ));
        }
        Ok(())
    }

    /// Whether TAP `index` was readable at the last wait.
    pub fn readable(&self, index: usize) -> bool {
        self.fds[index].revents & libc::POLLIN != 0
    }

    pub fn any_readable(&self) -> bool {
        self.fds.iter().any(|p| p.revents & libc::POLLIN != 0)
    }
}

/// Asks for precise timer wake-ups (the default slack of 50 µs would blur delays).
pub fn set_precise_timers() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and touches no memory.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}
