//! splice(2) for packet data (`CROSSMPI_RELAY_SPLICE`): the bytes go from the source
//! socket into a pipe and from the pipe to the destination socket inside the kernel,
//! never through the relay's memory. The only FFI of the data path; the router decides
//! when (its `splice_route`), this only moves bytes.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A nonblocking pipe towards one destination connection.
#[derive(Debug)]
pub struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
}

impl Pipe {
    /// A pipe of (at least) `size` bytes when the kernel allows it, else the default.
    pub fn new(size: usize) -> io::Result<Pipe> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: F_SETPIPE_SZ on an open pipe descriptor takes an int and touches no
        // memory; failure (a size above /proc/sys/fs/pipe-max-size) leaves the default.
        unsafe { libc::fcntl(write.as_raw_fd(), libc::F_SETPIPE_SZ, size as libc::c_int) };
        Ok(Pipe { read, write })
    }

    /// Moves up to `n` bytes from socket `from` into the pipe; Ok(0) is the end of
    /// `from`'s stream.
    pub fn fill(&self, from: RawFd, n: usize) -> io::Result<usize> {
        splice(from, self.write.as_raw_fd(), n)
    }

    /// Moves up to `n` bytes from the pipe to socket `to`.
    pub fn drain(&self, to: RawFd, n: usize) -> io::Result<usize> {
        splice(self.read.as_raw_fd(), to, n)
    }
}

fn splice(from: RawFd, to: RawFd, n: usize) -> io::Result<usize> {
    let flags = libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK;
    // SAFETY: both descriptors are open (owned by the caller's socket and this pipe for
    // the call's duration); null offsets mean "the current position", as pipes and
    // sockets need; splice touches no memory of this process.
    let moved = unsafe {
        libc::splice(
            from,
            std::ptr::null_mut(),
            to,
            std::ptr::null_mut(),
            n,
            flags,
        )
    };
    if moved < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(moved as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn bytes_go_from_socket_to_socket_in_order() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut src = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (from, _) = l.accept().unwrap();
        let to = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut sink, _) = l.accept().unwrap();
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let writer = {
            let data = data.clone();
            std::thread::spawn(move || src.write_all(&data))
        };
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            sink.read_to_end(&mut got).map(|_| got)
        });
        let pipe = Pipe::new(1 << 16).unwrap();
        let (mut moved, mut queued) = (0, 0);
        while moved < data.len() {
            match pipe.fill(from.as_raw_fd(), 40_000) {
                Ok(n) => queued += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("{e}"),
            }
            match pipe.drain(to.as_raw_fd(), queued) {
                Ok(n) => {
                    queued -= n;
                    moved += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("{e}"),
            }
        }
        writer.join().unwrap().unwrap();
        drop(to);
        assert_eq!(reader.join().unwrap().unwrap(), data);
        assert!(
            pipe.fill(-1, 1).is_err(),
            "a bad descriptor is an error, not a crash"
        );
    }
}
