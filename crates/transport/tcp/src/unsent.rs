//! A bound on what the kernel holds unsent on a socket.

use std::io;
use std::net::TcpStream;
use std::os::fd::AsRawFd;

/// Makes the kernel take no more than about `bytes` not yet sent on `sock`
/// (`TCP_NOTSENT_LOWAT`): writes stop and the socket stops reporting itself writable
/// once that much waits, so a sender that keeps its own queue in order of urgency can
/// still put a small packet before its bulk data instead of behind megabytes already
/// handed to the kernel. The bytes in flight (the congestion window) are not limited.
pub fn limit_unsent(sock: &TcpStream, bytes: u32) -> io::Result<()> {
    let value = bytes as libc::c_int;
    // SAFETY: a valid socket descriptor, and a pointer to an int of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_NOTSENT_LOWAT,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn the_bound_is_set_on_a_connected_socket() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let s = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        limit_unsent(&s, 128 << 10).unwrap();
        let mut value: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: a valid socket descriptor, and an int and its length to fill.
        let rc = unsafe {
            libc::getsockopt(
                s.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_NOTSENT_LOWAT,
                (&mut value as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        assert_eq!((rc, value), (0, 128 << 10));
    }
}
