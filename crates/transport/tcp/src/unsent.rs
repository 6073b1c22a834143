//! A bound on what the kernel holds unsent on a socket, and what the peer acknowledged.

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

/// Where `tcpi_bytes_acked` lies in Linux's `struct tcp_info` (8 one-byte fields, 24
/// 32-bit ones, then `tcpi_pacing_rate` and `tcpi_max_pacing_rate`; since Linux 4.1).
const BYTES_ACKED_AT: usize = 120;

/// The bytes the peer has acknowledged on `sock` (`TCP_INFO`'s `tcpi_bytes_acked`, which
/// counts the handshake's SYN too): its growth over time is the rate the connection
/// really delivers.
pub fn bytes_acked(sock: &TcpStream) -> io::Result<u64> {
    let mut info = [0u64; 32];
    let mut len = std::mem::size_of_val(&info) as libc::socklen_t;
    // SAFETY: a valid socket descriptor, and a buffer of the length passed, which the
    // kernel fills with at most that many bytes of its `struct tcp_info`.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            info.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    if (len as usize) < BYTES_ACKED_AT + 8 {
        return Err(io::Error::other(format!(
            "TCP_INFO: the kernel's tcp_info has {len} bytes, without tcpi_bytes_acked"
        )));
    }
    Ok(info[BYTES_ACKED_AT / 8])
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

    #[test]
    fn acknowledged_bytes_count_what_the_peer_received() {
        use std::io::{Read, Write};
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut s = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut r, _) = l.accept().unwrap();
        // (The count starts at 1: the handshake's SYN is acknowledged too.)
        let before = bytes_acked(&s).unwrap();
        assert!(before <= 1, "{before}");
        let data = vec![7u8; 300_000];
        s.write_all(&data).unwrap();
        let mut got = vec![0u8; data.len()];
        r.read_exact(&mut got).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        // The last acknowledgement may still be on its way.
        while bytes_acked(&s).unwrap() - before < data.len() as u64 {
            assert!(std::time::Instant::now() < deadline, "never acknowledged");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(bytes_acked(&s).unwrap() - before, data.len() as u64);
        assert!(bytes_acked(&r).unwrap() <= 1, "the reader sent nothing");
    }
}
