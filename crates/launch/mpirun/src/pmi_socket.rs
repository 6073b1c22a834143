//! The launcher's end of one PMI connection: an inherited socketpair (local ranks) or a
//! TCP connection (ranks on other hosts), read without blocking.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// How long a reply may wait for a rank to drain its socket before the connection is
/// given up: replies are a few bytes, so only a rank that stopped reading hits it.
const WRITE_PATIENCE: Duration = Duration::from_secs(2);

#[derive(Debug)]
pub enum PmiSocket {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl PmiSocket {
    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            PmiSocket::Unix(s) => s.set_nonblocking(on),
            PmiSocket::Tcp(s) => s.set_nonblocking(on),
        }
    }

    pub fn fd(&self) -> RawFd {
        match self {
            PmiSocket::Unix(s) => s.as_raw_fd(),
            PmiSocket::Tcp(s) => s.as_raw_fd(),
        }
    }

    /// Reads what is available now: `Ok(None)` at end of stream, an empty vector when
    /// nothing is pending.
    pub fn read_available(&mut self) -> io::Result<Option<Vec<u8>>> {
        let mut got = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            let r = match self {
                PmiSocket::Unix(s) => s.read(&mut buf),
                PmiSocket::Tcp(s) => s.read(&mut buf),
            };
            match r {
                Ok(0) if got.is_empty() => return Ok(None),
                Ok(0) => return Ok(Some(got)),
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Some(got)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Sends a reply, waiting at most [`WRITE_PATIENCE`] for room.
    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.set_nonblocking(false)?;
        let r = match self {
            PmiSocket::Unix(s) => s
                .set_write_timeout(Some(WRITE_PATIENCE))
                .and_then(|_| s.write_all(bytes)),
            PmiSocket::Tcp(s) => s
                .set_write_timeout(Some(WRITE_PATIENCE))
                .and_then(|_| s.write_all(bytes)),
        };
        self.set_nonblocking(true)?;
        r
    }
}
