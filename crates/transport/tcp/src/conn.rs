//! Nonblocking connections driven by the core's progress engine.

use crate::wire::{Hello, Prefix, WireError, HELLO_LEN, PREFIX_LEN};
use std::io::{self, IoSlice, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

/// Bytes read from the socket in one go when no payload destination is waiting; small
/// frames arriving back to back are then parsed out of one read.
const READ_CHUNK: usize = 64 * 1024;

pub struct Listener {
    inner: TcpListener,
}

impl Listener {
    /// Listens on every interface, on `port` (0: any free port).
    pub fn bind(port: u16) -> io::Result<Listener> {
        let inner = TcpListener::bind(("0.0.0.0", port))?;
        inner.set_nonblocking(true)?;
        Ok(Listener { inner })
    }

    pub fn port(&self) -> u16 {
        self.inner.local_addr().map(|a| a.port()).unwrap_or(0)
    }

    pub fn fd(&self) -> RawFd {
        self.inner.as_raw_fd()
    }

    /// Accepts one pending connection, if any; it must say hello before carrying frames.
    pub fn accept(&self) -> io::Result<Option<Connection>> {
        match self.inner.accept() {
            Ok((stream, _)) => Ok(Some(Connection::new(stream, RxState::Hello)?)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RxState {
    Hello,
    Prefix,
    Payload { remaining: u64 },
}

/// What [`Connection::poll`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Incoming {
    /// Nothing complete yet.
    Nothing,
    /// The peer introduced itself: its rank and its job tag.
    Hello { rank: u32, job_tag: u32 },
    /// A frame head arrived (see [`Connection::head`]); its payload follows.
    Frame { payload_len: u64 },
    /// The peer closed the connection cleanly between frames.
    Closed,
}

pub struct Connection {
    stream: TcpStream,
    rx: RxState,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    head: Vec<u8>,
    max_head: u32,
}

impl Connection {
    fn new(stream: TcpStream, rx: RxState) -> io::Result<Connection> {
        stream.set_nodelay(true)?;
        stream.set_nonblocking(true)?;
        Ok(Connection {
            stream,
            rx,
            buf: vec![0; READ_CHUNK],
            start: 0,
            end: 0,
            head: Vec::new(),
            max_head: 4096,
        })
    }

    /// Asks for `congestion` on this connection (`var` names the setting in an error).
    pub fn set_congestion(&self, congestion: crate::Congestion, var: &str) -> Result<(), String> {
        congestion.apply(&self.stream, var)
    }

    /// Connects to the first address that answers within `timeout` and says hello.
    pub fn connect(
        addrs: &[SocketAddr],
        hello: Hello,
        timeout: Duration,
    ) -> io::Result<Connection> {
        let mut last = io::Error::new(io::ErrorKind::NotFound, "no address to connect to");
        for addr in addrs {
            match TcpStream::connect_timeout(addr, timeout) {
                Ok(mut stream) => {
                    stream.write_all(&hello.encode())?;
                    return Connection::new(stream, RxState::Prefix);
                }
                Err(e) => last = io::Error::new(e.kind(), format!("connect to {addr}: {e}")),
            }
        }
        Err(last)
    }

    pub fn fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }

    fn buffered(&self) -> usize {
        self.end - self.start
    }

    /// Reads once from the socket into the buffer. Ok(false): would block; EOF is Ok(true)
    /// with nothing added and reported by the caller through `eof`.
    fn fill(&mut self) -> io::Result<(bool, bool)> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        match self.stream.read(&mut self.buf[self.end..]) {
            Ok(0) => Ok((true, true)),
            Ok(n) => {
                self.end += n;
                Ok((true, false))
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok((false, false)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok((true, false)),
            Err(e) => Err(e),
        }
    }

    fn malformed(e: WireError) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, e)
    }

    /// Advances the receive side. After `Frame`, the head is in [`Connection::head`] and
    /// the payload must be consumed with [`Connection::read_payload`] before polling again.
    pub fn poll(&mut self) -> io::Result<Incoming> {
        loop {
            match self.rx {
                RxState::Payload { remaining } if remaining > 0 => {
                    return Err(io::Error::other("frame payload not consumed"))
                }
                RxState::Payload { .. } => self.rx = RxState::Prefix,
                RxState::Hello if self.buffered() >= HELLO_LEN => {
                    let (rank, job_tag) =
                        Hello::decode(&self.buf[self.start..self.end]).map_err(Self::malformed)?;
                    self.start += HELLO_LEN;
                    self.rx = RxState::Prefix;
                    return Ok(Incoming::Hello { rank, job_tag });
                }
                RxState::Prefix if self.buffered() >= PREFIX_LEN => {
                    let prefix = Prefix::decode(&self.buf[self.start..self.end], self.max_head)
                        .map_err(Self::malformed)?;
                    let need = PREFIX_LEN + prefix.head_len as usize;
                    if self.buffered() >= need {
                        self.head.clear();
                        self.head.extend_from_slice(
                            &self.buf[self.start + PREFIX_LEN..self.start + need],
                        );
                        self.start += need;
                        self.rx = RxState::Payload {
                            remaining: prefix.payload_len,
                        };
                        return Ok(Incoming::Frame {
                            payload_len: prefix.payload_len,
                        });
                    }
                    let (progressed, eof) = self.fill()?;
                    if eof {
                        return Err(io::ErrorKind::UnexpectedEof.into());
                    }
                    if !progressed {
                        return Ok(Incoming::Nothing);
                    }
                }
                _ => {
                    let (progressed, eof) = self.fill()?;
                    if eof {
                        return if self.buffered() == 0 {
                            Ok(Incoming::Closed)
                        } else {
                            Err(io::ErrorKind::UnexpectedEof.into())
                        };
                    }
                    if !progressed {
                        return Ok(Incoming::Nothing);
                    }
                }
            }
        }
    }

    /// The head of the frame reported by the last `Frame`.
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// Payload bytes of the current frame not yet read.
    pub fn payload_remaining(&self) -> u64 {
        match self.rx {
            RxState::Payload { remaining } => remaining,
            _ => 0,
        }
    }

    /// Reads up to `dst.len()` bytes (at most the payload remaining) of the current
    /// frame's payload, straight from the socket when the buffer is empty. Returns how many
    /// bytes were written; fewer than asked means the socket would block.
    pub fn read_payload(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        let remaining = self.payload_remaining();
        let want = dst.len().min(remaining as usize);
        let mut got = 0;
        let from_buf = want.min(self.buffered());
        dst[..from_buf].copy_from_slice(&self.buf[self.start..self.start + from_buf]);
        self.start += from_buf;
        got += from_buf;
        while got < want {
            match self.stream.read(&mut dst[got..want]) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.rx = RxState::Payload {
            remaining: remaining - got as u64,
        };
        Ok(got)
    }

    /// Writes as much of `frame` (its head, then its payload) from byte `from` on as the
    /// socket takes without blocking, at most `chunk` bytes per system call: on loopback
    /// one `writev` of a whole 4 MiB message moves about 4.5 GB/s and 1 MiB calls 5.5
    /// (`CROSSMPI_TCP_WRITE_CHUNK`, docs/tunables.md). Returns the bytes written.
    pub fn write(&mut self, frame: [&[u8]; 2], from: usize, chunk: usize) -> io::Result<usize> {
        let total = frame[0].len() + frame[1].len();
        let mut at = from;
        while at < total {
            // A remainder under half a chunk goes with the chunk before it rather than
            // alone (a 1 MiB message and its header in one call, not two).
            let rest = total - at;
            let len = if rest <= chunk + chunk / 2 {
                rest
            } else {
                chunk.max(1)
            };
            match self.stream.write_vectored(&window(frame, at, len)) {
                Ok(n) if n < len => return Ok(at + n - from),
                Ok(n) => at += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(at - from)
    }
}

/// The slices covering bytes [`skip`, `skip + len`) of `frame`'s two parts (an empty
/// slice where a part contributes nothing).
fn window<'a>(frame: [&'a [u8]; 2], skip: usize, len: usize) -> [IoSlice<'a>; 2] {
    let part = |p: &'a [u8], start: usize| {
        let at = |x: usize| x.saturating_sub(start).min(p.len());
        IoSlice::new(&p[at(skip)..at(skip + len)])
    };
    [part(frame[0], 0), part(frame[1], frame[0].len())]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (Connection, Connection) {
        let l = Listener::bind(0).unwrap();
        let addr: SocketAddr = format!("127.0.0.1:{}", l.port()).parse().unwrap();
        let out = Connection::connect(&[addr], Hello { job: 42, rank: 3 }, Duration::from_secs(5))
            .unwrap();
        let mut inc = loop {
            if let Some(c) = l.accept().unwrap() {
                break c;
            }
        };
        let hello = loop {
            match inc.poll().unwrap() {
                Incoming::Nothing => continue,
                other => break other,
            }
        };
        assert_eq!(
            hello,
            Incoming::Hello {
                rank: 3,
                job_tag: Hello::job_tag(42)
            }
        );
        (out, inc)
    }

    fn send_frame(c: &mut Connection, head: &[u8], payload: &[u8]) {
        let prefix = Prefix {
            head_len: head.len() as u32,
            payload_len: payload.len() as u64,
        }
        .encode();
        let mut head_part = prefix.to_vec();
        head_part.extend_from_slice(head);
        let total = head_part.len() + payload.len();
        let mut at = 0;
        while at < total {
            // Small system calls, so a frame crosses many of them and the part boundary.
            at += c.write([&head_part, payload], at, 1000).unwrap();
        }
    }

    #[test]
    fn a_window_spans_parts_and_stops_at_its_length() {
        let frame: [&[u8]; 2] = [b"abcde", b"fghij"];
        let bytes = |w: [IoSlice; 2]| [w[0].to_vec(), w[1].to_vec()];
        assert_eq!(bytes(window(frame, 3, 4)), [b"de".to_vec(), b"fg".to_vec()]);
        assert_eq!(bytes(window(frame, 5, 10)), [vec![], b"fghij".to_vec()]);
        assert_eq!(bytes(window(frame, 0, 2)), [b"ab".to_vec(), vec![]]);
        assert_eq!(bytes(window(frame, 10, 4)), [vec![], vec![]]);
    }

    fn next_frame(c: &mut Connection) -> u64 {
        loop {
            match c.poll().unwrap() {
                Incoming::Frame { payload_len } => return payload_len,
                Incoming::Nothing => continue,
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    #[test]
    fn frames_small_and_large_arrive_intact_and_in_order() {
        let (mut out, mut inc) = pair();
        let big: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7) as u8).collect();
        let writer = std::thread::spawn(move || {
            send_frame(&mut out, b"one", b"tiny");
            send_frame(&mut out, b"two", &big);
            send_frame(&mut out, b"three", b"");
            out
        });
        assert_eq!(next_frame(&mut inc), 4);
        assert_eq!(inc.head(), b"one");
        let mut dst = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            got += inc.read_payload(&mut dst[got..]).unwrap();
        }
        assert_eq!(&dst, b"tiny");
        assert_eq!(next_frame(&mut inc), 3_000_000);
        assert_eq!(inc.head(), b"two");
        let mut big_dst = vec![0u8; 3_000_000];
        let mut got = 0;
        while got < big_dst.len() {
            got += inc.read_payload(&mut big_dst[got..]).unwrap();
        }
        assert!(big_dst
            .iter()
            .enumerate()
            .all(|(i, &b)| b == (i as u32 * 7) as u8));
        assert_eq!(next_frame(&mut inc), 0);
        assert_eq!(inc.head(), b"three");
        drop(writer.join().unwrap());
        loop {
            match inc.poll().unwrap() {
                Incoming::Closed => break,
                Incoming::Nothing => continue,
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    #[test]
    fn a_stranger_is_refused_with_a_reason() {
        let l = Listener::bind(0).unwrap();
        let mut s = TcpStream::connect(("127.0.0.1", l.port())).unwrap();
        s.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
        let mut inc = loop {
            if let Some(c) = l.accept().unwrap() {
                break c;
            }
        };
        let err = loop {
            match inc.poll() {
                Ok(Incoming::Nothing) => continue,
                Ok(other) => panic!("accepted a stranger: {other:?}"),
                Err(e) => break e,
            }
        };
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(
            err.to_string().contains("not a crossmpi connection"),
            "{err}"
        );
    }

    #[test]
    fn polling_before_the_payload_is_consumed_is_an_error() {
        let (mut out, mut inc) = pair();
        send_frame(&mut out, b"h", b"payload");
        assert_eq!(next_frame(&mut inc), 7);
        assert!(inc.poll().is_err());
    }
}
