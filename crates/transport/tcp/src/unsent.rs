//! A bound on what the kernel holds unsent on a socket, and what the peer acknowledged.

use crate::sockopt;
use std::io;
use std::net::TcpStream;

/// Makes the kernel take no more than about `bytes` not yet sent on `sock`
/// (`TCP_NOTSENT_LOWAT`): writes stop and the socket stops reporting itself writable
/// once that much waits, so a sender that keeps its own queue in order of urgency can
/// still put a small packet before its bulk data instead of behind megabytes already
/// handed to the kernel. The bytes in flight (the congestion window) are not limited.
pub fn limit_unsent(sock: &TcpStream, bytes: u32) -> io::Result<()> {
    let value = bytes as libc::c_int;
    sockopt::set(sock, libc::TCP_NOTSENT_LOWAT, &value.to_ne_bytes())
}

/// Where `tcpi_bytes_acked` lies in Linux's `struct tcp_info` (8 one-byte fields, 24
/// 32-bit ones, then `tcpi_pacing_rate` and `tcpi_max_pacing_rate`; since Linux 4.1).
const BYTES_ACKED_AT: usize = 120;

/// The bytes the peer has acknowledged on `sock` (`TCP_INFO`'s `tcpi_bytes_acked`, which
/// counts the handshake's SYN too): its growth over time is the rate the connection
/// really delivers.
pub fn bytes_acked(sock: &TcpStream) -> io::Result<u64> {
    let mut info = [0u8; 256];
    let len = sockopt::get(sock, libc::TCP_INFO, &mut info)?;
    let field = info[..len]
        .get(BYTES_ACKED_AT..BYTES_ACKED_AT + 8)
        .ok_or_else(|| {
            io::Error::other(format!(
                "TCP_INFO: the kernel's tcp_info has {len} bytes, without tcpi_bytes_acked"
            ))
        })?;
    Ok(u64::from_ne_bytes(field.try_into().expect("8 bytes")))
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
        let mut value = [0u8; 4];
        let len = sockopt::get(&s, libc::TCP_NOTSENT_LOWAT, &mut value).unwrap();
        assert_eq!((len, libc::c_int::from_ne_bytes(value)), (4, 128 << 10));
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
