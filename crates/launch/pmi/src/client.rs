//! The blocking PMI-1 client the MPI library bootstraps with: a socket from the
//! launcher's environment around a [`ClientMachine`].

use crate::client_machine::{ClientMachine, Reply};
use crate::error::Error;
use crate::spawn::SpawnSegment;
use crate::wire::{is_token, one_word, Command};
use std::io::{Read, Write};
use std::net::{IpAddr, TcpStream};
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// The connection to the launcher.
#[derive(Debug)]
enum Stream {
    /// PMI_FD: a socket inherited from the launcher.
    Inherited(UnixStream),
    /// PMI_PORT: a TCP connection to the launcher.
    Tcp(TcpStream),
}

impl Stream {
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Stream::Inherited(s) => s.write_all(bytes),
            Stream::Tcp(s) => s.write_all(bytes),
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Inherited(s) => s.read(buf),
            Stream::Tcp(s) => s.read(buf),
        }
    }

    fn set_read_timeout(&self, timeout: Option<Duration>) -> std::io::Result<()> {
        match self {
            Stream::Inherited(s) => s.set_read_timeout(timeout),
            Stream::Tcp(s) => s.set_read_timeout(timeout),
        }
    }
}

/// A rank's PMI-1 session with its launcher.
#[derive(Debug)]
pub struct Client {
    stream: Stream,
    machine: ClientMachine,
    rank: usize,
    size: usize,
    appnum: i32,
    universe_size: Option<usize>,
    kvsname: String,
    max_key_len: usize,
    max_value_len: usize,
}

fn env_number(name: &'static str) -> Result<Option<usize>, Error> {
    match std::env::var(name) {
        Err(_) => Ok(None),
        Ok(v) => v.trim().parse().map(Some).map_err(|_| {
            Error::new(
                name,
                format!("environment variable {name}={v:?} is not a number"),
            )
        }),
    }
}

/// Takes ownership of the socket the launcher left open as descriptor `fd`.
fn adopt_fd(fd: RawFd) -> Result<UnixStream, Error> {
    // SAFETY: fstat only writes into the zeroed stat buffer we own; it fails cleanly
    // (EBADF) if `fd` is not open.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if fd < 0 || unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(Error::new(
            "PMI_FD",
            format!("PMI_FD={fd} is not an open descriptor"),
        ));
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        return Err(Error::new("PMI_FD", format!("PMI_FD={fd} is not a socket")));
    }
    // SAFETY: the launcher handed this descriptor to this process for PMI alone (that is
    // what PMI_FD means); it is open and a socket (checked above), and it is adopted
    // once, at bootstrap, so nothing else owns it. FD_CLOEXEC keeps it out of programs
    // the rank itself starts.
    unsafe {
        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        Ok(UnixStream::from_raw_fd(fd))
    }
}

impl Client {
    /// Connects using the launcher's environment: PMI_FD (an inherited connected socket),
    /// or PMI_PORT=host:port (+ PMI_ID) — and PMI_RANK/PMI_SIZE as the launcher sets them.
    /// Ok(None) when no launcher environment is present (the program runs as a singleton).
    pub fn from_env() -> Result<Option<Client>, Error> {
        let (stream, mut identity) = if let Some(fd) = env_number("PMI_FD")? {
            (Stream::Inherited(adopt_fd(fd as RawFd)?), None)
        } else if let Ok(port) = std::env::var("PMI_PORT") {
            let tcp = TcpStream::connect(port.as_str()).map_err(|e| {
                Error::new(
                    "PMI_PORT",
                    format!("cannot connect to PMI_PORT={port}: {e}"),
                )
            })?;
            let _ = tcp.set_nodelay(true);
            (Stream::Tcp(tcp), None)
        } else {
            return Ok(None);
        };
        let mut client = Client {
            stream,
            machine: ClientMachine::default(),
            rank: 0,
            size: 1,
            appnum: 0,
            universe_size: None,
            kvsname: String::new(),
            max_key_len: 0,
            max_value_len: 0,
        };
        if let (Stream::Tcp(_), Some(id)) = (&client.stream, env_number("PMI_ID")?) {
            if let Reply::Identified { size, rank } = client.call(Command::InitAck { pmiid: id })? {
                identity = Some((rank, size));
            }
        }
        let (rank, size) = match identity {
            Some(rs) => rs,
            None => {
                let missing = |v| Error::new(v, format!("the launcher did not set {v}"));
                let rank = env_number("PMI_RANK")?.ok_or_else(|| missing("PMI_RANK"))?;
                let size = env_number("PMI_SIZE")?.ok_or_else(|| missing("PMI_SIZE"))?;
                if rank >= size {
                    return Err(Error::new(
                        "PMI_RANK",
                        format!("PMI_RANK={rank} is not below PMI_SIZE={size}"),
                    ));
                }
                (rank, size)
            }
        };
        client.rank = rank;
        client.size = size;
        client.bootstrap()?;
        Ok(Some(client))
    }

    fn bootstrap(&mut self) -> Result<(), Error> {
        if let Command::ResponseToInit { rc, version, .. } = self.call_line(Command::Init {
            version: 1,
            subversion: 1,
        })? {
            if rc != 0 {
                return Err(Error::new(
                    "init",
                    format!("launcher refused PMI version 1 (rc={rc}, offers {version})"),
                ));
            }
        }
        if let Command::Maxes {
            keylen_max,
            vallen_max,
            ..
        } = self.call_line(Command::GetMaxes)?
        {
            self.max_key_len = keylen_max;
            self.max_value_len = vallen_max;
        }
        if let Command::Appnum { appnum } = self.call_line(Command::GetAppnum)? {
            self.appnum = appnum;
        }
        if let Command::MyKvsname { kvsname } = self.call_line(Command::GetMyKvsname)? {
            self.kvsname = kvsname;
        }
        if let Command::UniverseSize { size } = self.call_line(Command::GetUniverseSize)? {
            self.universe_size = usize::try_from(size).ok().filter(|&s| s > 0);
        }
        Ok(())
    }

    /// Sends one request and blocks until its whole reply has arrived.
    fn call(&mut self, request: Command) -> Result<Reply, Error> {
        let mut out = Vec::new();
        self.machine.start(&request, &mut out)?;
        self.send_and_wait(request.name(), out)
            .map(|r| r.unwrap_or(Reply::Line(request)))
    }

    /// Writes `out` and, when the machine waits for a reply, blocks until it is whole.
    fn send_and_wait(&mut self, name: &'static str, out: Vec<u8>) -> Result<Option<Reply>, Error> {
        self.stream
            .write_all(&out)
            .map_err(|e| Error::new(name, format!("cannot write to the launcher: {e}")))?;
        let mut buf = [0u8; 4096];
        while self.machine.is_waiting() {
            if let Some(reply) = self.machine.poll_reply()? {
                return Ok(Some(reply));
            }
            match self.stream.read(&mut buf) {
                Ok(0) => {
                    return Err(Error::new(
                        name,
                        "the launcher closed the PMI connection".into(),
                    ))
                }
                Ok(n) => self.machine.receive(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(Error::new(
                        name,
                        format!("cannot read from the launcher: {e}"),
                    ))
                }
            }
        }
        Ok(None)
    }

    fn call_line(&mut self, request: Command) -> Result<Command, Error> {
        match self.call(request)? {
            Reply::Line(c) => Ok(c),
            Reply::Identified { .. } => {
                Err(Error::new("initack", "unexpected identification".into()))
            }
        }
    }

    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn size(&self) -> usize {
        self.size
    }

    pub fn appnum(&self) -> i32 {
        self.appnum
    }

    pub fn universe_size(&self) -> Option<usize> {
        self.universe_size
    }

    pub fn kvsname(&self) -> &str {
        &self.kvsname
    }

    /// The longest value `put` accepts (the launcher's `vallen_max`).
    pub fn max_value_len(&self) -> usize {
        self.max_value_len
    }

    /// The longest key `put` and `get` accept (the launcher's `keylen_max`).
    pub fn max_key_len(&self) -> usize {
        self.max_key_len
    }

    fn check_key(&self, command: &'static str, key: &str) -> Result<(), Error> {
        if !is_token(key) || key.contains('=') || key.len() > self.max_key_len {
            return Err(Error::new(
                command,
                format!(
                    "key {key:?} must be 1 to {} bytes without spaces, newlines, NUL or '='",
                    self.max_key_len
                ),
            ));
        }
        Ok(())
    }

    /// Publishes `key=value` in the job's key-value space (visible to all after `fence`).
    pub fn put(&mut self, key: &str, value: &str) -> Result<(), Error> {
        self.check_key("put", key)?;
        if !is_token(value) || value.len() > self.max_value_len {
            return Err(Error::new(
                "put",
                format!(
                    "value for key {key:?} ({} bytes) must be 1 to {} bytes without spaces, newlines or NUL",
                    value.len(),
                    self.max_value_len
                ),
            ));
        }
        let request = Command::Put {
            kvsname: self.kvsname.clone(),
            key: key.into(),
            value: value.into(),
        };
        match self.call_line(request)? {
            Command::PutResult { rc: 0, .. } => Ok(()),
            Command::PutResult { rc, msg } => Err(Error::new(
                "put",
                format!("launcher refused key {key:?}: rc={rc} {msg}"),
            )),
            other => Err(Error::new(
                "put",
                format!("unexpected reply cmd={}", other.name()),
            )),
        }
    }

    /// Waits until every rank has called `fence` (PMI barrier); puts made before it are
    /// then visible to every rank's `get`.
    pub fn fence(&mut self) -> Result<(), Error> {
        self.call_line(Command::BarrierIn).map(drop)
    }

    /// The value another rank (or this one) put under `key`.
    pub fn get(&mut self, key: &str) -> Result<String, Error> {
        self.check_key("get", key)?;
        let request = Command::Get {
            kvsname: self.kvsname.clone(),
            key: key.into(),
        };
        match self.call_line(request)? {
            Command::GetResult { rc: 0, value, .. } => Ok(value),
            Command::GetResult { rc, msg, .. } => Err(Error::new(
                "get",
                format!("key {key:?} not available: rc={rc} {msg}"),
            )),
            other => Err(Error::new(
                "get",
                format!("unexpected reply cmd={}", other.name()),
            )),
        }
    }

    /// Asks the launcher to start the processes of `segments` (one per command, numbered
    /// 1..=n of n) as a new job; returns once the launcher says it started them.
    pub fn spawn(&mut self, segments: &[SpawnSegment]) -> Result<(), Error> {
        let mut reply = None;
        for s in segments {
            let mut out = Vec::new();
            self.machine.start_spawn(s, &mut out)?;
            reply = self.send_and_wait("spawn", out)?;
        }
        match reply {
            Some(Reply::Line(Command::SpawnResult { rc: 0, .. })) => Ok(()),
            Some(Reply::Line(Command::SpawnResult { rc, msg })) => Err(Error::new(
                "spawn",
                format!("the launcher did not start the processes (rc={rc}): {msg}"),
            )),
            _ => Err(Error::new(
                "spawn",
                "the launcher did not answer the spawn request".into(),
            )),
        }
    }

    /// Publishes `port` under `service` in the launcher's name service.
    pub fn publish_name(&mut self, service: &str, port: &str) -> Result<(), Error> {
        self.name_call(Command::PublishName {
            service: service.into(),
            port: port.into(),
        })
        .map(drop)
    }

    /// Removes `service` from the launcher's name service.
    pub fn unpublish_name(&mut self, service: &str) -> Result<(), Error> {
        self.name_call(Command::UnpublishName {
            service: service.into(),
        })
        .map(drop)
    }

    /// The port published under `service`.
    pub fn lookup_name(&mut self, service: &str) -> Result<String, Error> {
        self.name_call(Command::LookupName {
            service: service.into(),
        })?
        .ok_or_else(|| Error::new("lookup_name", "the launcher sent no port".into()))
    }

    /// One name-service request; the port of a successful lookup.
    fn name_call(&mut self, request: Command) -> Result<Option<String>, Error> {
        let name = request.name();
        match self.call_line(request)? {
            Command::PublishResult { rc: 0, .. } | Command::UnpublishResult { rc: 0, .. } => {
                Ok(None)
            }
            Command::LookupResult { rc: 0, port, .. } => Ok(port),
            Command::PublishResult { rc, msg }
            | Command::UnpublishResult { rc, msg }
            | Command::LookupResult { rc, msg, .. } => {
                Err(Error::new(name, format!("rc={rc} {msg}")))
            }
            other => Err(Error::new(
                name,
                format!("unexpected reply cmd={}", other.name()),
            )),
        }
    }

    /// Tells the launcher to end the whole job with exit status `code`, then keeps the
    /// connection open until the launcher closes it or `linger` passes. The message
    /// travels as one word (spaces become `_`, at most 256 bytes); the launcher prints it.
    ///
    /// Why linger: a launcher may still be writing to this connection when the abort
    /// arrives, and Hydra's proxy treats a write to a rank that has already gone as its
    /// own failure — it dies, and the job ends with SIGPIPE (141) instead of `code`.
    /// Waiting for the launcher to act first makes the abort code the job's status.
    pub fn abort(&mut self, code: i32, message: &str, linger: Duration) -> Result<(), Error> {
        let word = one_word(message);
        let message = (!word.is_empty()).then_some(word);
        self.call(Command::Abort { code, message })?;
        let deadline = Instant::now() + linger;
        let mut sink = [0u8; 4096];
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            if left.is_zero() || self.stream.set_read_timeout(Some(left)).is_err() {
                break;
            }
            match self.stream.read(&mut sink) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        Ok(())
    }

    /// Ends the PMI session (after the last `fence`).
    pub fn finalize(&mut self) -> Result<(), Error> {
        self.call_line(Command::Finalize).map(drop)
    }

    /// The local address of the PMI connection when it is TCP (PMI_PORT mode): the library
    /// publishes its own TCP listening address on the interface that reaches the launcher.
    pub fn local_ip(&self) -> Option<IpAddr> {
        match &self.stream {
            Stream::Tcp(s) => s.local_addr().ok().map(|a| a.ip()),
            Stream::Inherited(_) => None,
        }
    }
}
