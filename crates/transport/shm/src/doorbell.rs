//! Doorbells: how a sender wakes a receiver that sleeps in `epoll_wait`.
//!
//! Each rank binds an abstract Unix datagram socket named after its job and rank. Abstract
//! names live in the network namespace, exactly the scope of a crossmpi node, so every
//! local peer can reach it and nothing else can. The receiver adds the socket to its
//! epoll set; a sender that found the receiver's `sleeping` flag set sends one byte.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};

/// The receiving end, bound to this rank's name.
pub struct Doorbell {
    socket: UnixDatagram,
}

impl Doorbell {
    pub fn bind(name: &str) -> io::Result<Doorbell> {
        let addr = SocketAddr::from_abstract_name(name.as_bytes())?;
        let socket = UnixDatagram::bind_addr(&addr)?;
        socket.set_nonblocking(true)?;
        Ok(Doorbell { socket })
    }

    pub fn fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }

    /// Consumes every pending ring.
    pub fn drain(&self) {
        let mut buf = [0u8; 64];
        while self.socket.recv(&mut buf).is_ok() {}
    }
}

/// The sending end: one unbound socket that can ring any local doorbell.
pub struct Ringer {
    socket: UnixDatagram,
}

impl Ringer {
    pub fn new() -> io::Result<Ringer> {
        let socket = UnixDatagram::unbound()?;
        socket.set_nonblocking(true)?;
        Ok(Ringer { socket })
    }

    /// Rings the doorbell `name`. A full doorbell queue already guarantees a wake-up, so
    /// `WouldBlock` counts as success.
    pub fn ring(&self, name: &str) -> io::Result<()> {
        let addr = SocketAddr::from_abstract_name(name.as_bytes())?;
        match self.socket.send_to_addr(&[1], &addr) {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ringing_makes_the_doorbell_readable() {
        let name = format!("crossmpi-test-bell-{}", std::process::id());
        let bell = Doorbell::bind(&name).unwrap();
        let ringer = Ringer::new().unwrap();
        ringer.ring(&name).unwrap();
        let mut pfd = libc::pollfd {
            fd: bell.fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: polling one valid descriptor with a valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, 1000) };
        assert_eq!(n, 1);
        bell.drain();
        // SAFETY: as above.
        let n = unsafe { libc::poll(&mut pfd, 1, 0) };
        assert_eq!(n, 0, "drained");
    }

    #[test]
    fn ringing_a_missing_doorbell_is_an_error() {
        let ringer = Ringer::new().unwrap();
        assert!(ringer.ring("crossmpi-test-no-such-bell").is_err());
    }
}
