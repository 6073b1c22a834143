//! The relay's I/O: one thread, one `poll` loop over every socket, nonblocking
//! throughout. The startup dialogue ([`StartupRelay`]) and the data phase ([`Router`])
//! are sans-IO; this file only moves bytes between them and the sockets, and opens and
//! closes sockets when they say so. The few exchanges between the trunks of a cluster
//! ([`TrunkMsg`]) are short and blocking: trunk 0 gathers the others before it talks
//! to the server, and a joined trunk has nothing else to do until it has the tables.

use crate::options::Options;
use crate::rewrite::RelayPlace;
use crate::router::{describe, ConnId, Router, RouterConfig, RouterEvent};
use crate::secure::{agreed_encryption, JobKey, Role, SecureChannel, RANDOM_LEN};
use crate::splice::Pipe;
use crate::startup::{StartupEvent, StartupRelay, AUTH_MSG_LEN};
use crate::topology::{Acceptor, Link, Topology};
use crate::trunk::{TrunkAddrs, TrunkMsg, HEADER_LEN};
use crossmpi_impi::wire::addr::HostAddr;
use crossmpi_impi::wire::startup::ClientMessage;
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// Connections to the agent's port that may wait for their AUTH at once; a stray beyond
/// this is closed unread.
const MAX_CANDIDATES: usize = 16;

/// Bytes read from a startup socket at once.
const STARTUP_READ: usize = 64 << 10;

enum Kind {
    /// A connection to the agent's port that has not sent AUTH yet.
    Candidate(Vec<u8>),
    Agent,
    Server,
    Data(ConnId),
    /// Closed this round; forgotten before the next poll.
    Closed,
}

/// A socket with what remains to be written to it (startup sockets), and the record
/// layer of an encrypted host connection.
struct Peer {
    kind: Kind,
    sock: TcpStream,
    out: Vec<u8>,
    secure: Option<Box<SecureChannel>>,
    /// The pipe packet data is spliced through towards this connection.
    pipe: Option<Pipe>,
    /// The far end, as known when the connection was made (a reset connection no
    /// longer tells it, and the log must name it then).
    addr: Option<SocketAddr>,
}

impl Peer {
    fn new(kind: Kind, sock: TcpStream, secure: Option<Box<SecureChannel>>) -> Peer {
        Peer {
            kind,
            addr: sock.peer_addr().ok(),
            sock,
            out: Vec::new(),
            secure,
            pipe: None,
        }
    }
}

struct Listeners {
    /// The agent's port (trunk 0 only).
    agent: Option<TcpListener>,
    global: TcpListener,
    /// One per client: the virtual host's port (None for the relay's own client).
    private: Vec<Option<TcpListener>>,
}

/// The relay's state between polls.
struct Relay {
    opts: Options,
    inside_ip: IpAddr,
    /// The startup dialogue: trunk 0 only, the others receive the tables from it.
    startup: Option<StartupRelay>,
    /// Trunk 0's connections to trunks 1..K, until they have the tables.
    members: Vec<TcpStream>,
    router: Option<Router>,
    /// Set when the outside connections are encrypted (known once the tables are).
    job_key: Option<JobKey>,
    listeners: Listeners,
    peers: Vec<Peer>,
}

fn log(opts: &Options, msg: impl FnOnce() -> String) {
    if opts.verbose {
        eprintln!("impi-relay: {}", msg());
    }
}

/// This host's first non-loopback IPv4 address (loopback when it has none).
fn host_address() -> IpAddr {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    std::net::ToSocketAddrs::to_socket_addrs(&(host.trim(), 0))
        .into_iter()
        .flatten()
        .map(|a| a.ip())
        .find(|ip| ip.is_ipv4() && !ip.is_loopback())
        .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST))
}

/// Opens the agent's port. Returns it and the `address:port` to print.
pub fn bind(opts: &Options) -> std::io::Result<(TcpListener, SocketAddr)> {
    let bind_ip = opts.net.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    let listener = TcpListener::bind((bind_ip, opts.port))?;
    let shown = opts.net.unwrap_or_else(host_address);
    Ok((
        listener.try_clone()?,
        SocketAddr::new(shown, listener.local_addr()?.port()),
    ))
}

/// Connects within the connect timeout, retrying while the peer is not listening yet.
fn connect(addr: SocketAddr, timeout: Duration) -> Result<TcpStream, String> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match TcpStream::connect_timeout(&addr, left.max(Duration::from_millis(10))) {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() >= deadline => {
                return Err(format!("cannot connect to {addr} within {timeout:?}: {e}"))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

fn nonblocking(sock: &TcpStream) -> Result<(), String> {
    sock.set_nonblocking(true)
        .and_then(|_| sock.set_nodelay(true))
        .map_err(|e| e.to_string())
}

/// A connection that carries packets between hosts: nonblocking, and with the congestion
/// control chosen for them.
fn data_socket(sock: &TcpStream, opts: &Options) -> Result<(), String> {
    nonblocking(sock)?;
    opts.congestion
        .apply(sock, crossmpi_tcp::IMPI_CONGESTION_VAR)
        .map_err(|e| format!("impi-relay: {e}"))
}

fn resolve(addr: &str, what: &str) -> Result<SocketAddr, String> {
    std::net::ToSocketAddrs::to_socket_addrs(addr)
        .map_err(|e| format!("impi-relay: {what} address {addr:?}: {e}"))?
        .next()
        .ok_or_else(|| format!("impi-relay: {what} address {addr:?} resolves to nothing"))
}

/// The record layer of a new host connection: only on the outside (the relays of other
/// clusters), and only when the job is encrypted.
fn secure_channel(
    key: Option<JobKey>,
    outside: bool,
    role: Role,
) -> Result<Option<Box<SecureChannel>>, String> {
    let Some(key) = key.filter(|_| outside) else {
        return Ok(None);
    };
    let mut random = [0u8; RANDOM_LEN];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut random))
        .map_err(|e| format!("no random bytes from /dev/urandom: {e}"))?;
    Ok(Some(Box::new(SecureChannel::new(key, role, random))))
}

/// Sends one trunk message (blocking).
fn send_msg(sock: &mut TcpStream, msg: &TrunkMsg) -> Result<(), String> {
    let mut out = Vec::new();
    msg.emit(&mut out);
    sock.write_all(&out)
        .map_err(|e| format!("sending to a trunk: {e}"))
}

/// Reads one trunk message (blocking, for at most `timeout` when given).
fn recv_msg(
    sock: &mut TcpStream,
    opts: &Options,
    timeout: Option<Duration>,
) -> Result<TrunkMsg, String> {
    sock.set_read_timeout(timeout.map(|t| t.max(Duration::from_millis(1))))
        .map_err(|e| e.to_string())?;
    let mut header = [0u8; HEADER_LEN];
    let read = |sock: &mut TcpStream, buf: &mut [u8]| {
        sock.read_exact(buf).map_err(|e| match e.kind() {
            ErrorKind::WouldBlock | ErrorKind::TimedOut => format!(
                "no answer within {:?} (CROSSMPI_RELAY_TRUNK_TIMEOUT)",
                timeout.unwrap_or_default()
            ),
            ErrorKind::UnexpectedEof => "the connection closed".into(),
            _ => e.to_string(),
        })
    };
    read(sock, &mut header)?;
    let len = TrunkMsg::payload_len(&header, opts.limits.max_msg).map_err(|e| e.to_string())?;
    let mut body = vec![0u8; len];
    read(sock, &mut body)?;
    TrunkMsg::decode(&header, &body, opts.limits.max_msg).map_err(|e| e.to_string())
}

/// Binds one private listening port per client other than `me`; returns them with
/// their port numbers (0 for `me`).
fn bind_private_ports(
    opts: &Options,
    me: u32,
    nclients: u32,
) -> Result<(Vec<Option<TcpListener>>, Vec<u16>), String> {
    let bind_ip = opts.net.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    let mut listeners = Vec::new();
    let mut ports = Vec::new();
    for c in 0..nclients {
        if c == me {
            listeners.push(None);
            ports.push(0);
            continue;
        }
        let l = TcpListener::bind((bind_ip, 0))
            .map_err(|e| format!("cannot listen on the private address {bind_ip}: {e}"))?;
        l.set_nonblocking(true).map_err(|e| e.to_string())?;
        ports.push(l.local_addr().map_err(|e| e.to_string())?.port());
        listeners.push(Some(l));
    }
    Ok((listeners, ports))
}

/// Opens the global listening port at `--global-addr`, else at the address this host
/// uses towards the IMPI server.
fn bind_global(opts: &Options, server: SocketAddr) -> Result<(TcpListener, IpAddr), String> {
    let global_ip = match opts.global_addr {
        Some(ip) => ip,
        None => {
            // A connected UDP socket sends nothing; it only asks the kernel for the route.
            let any = if server.is_ipv4() {
                IpAddr::V4(Ipv4Addr::UNSPECIFIED)
            } else {
                IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED)
            };
            UdpSocket::bind((any, 0))
                .and_then(|u| u.connect(server).and_then(|_| u.local_addr()))
                .map_err(|e| format!("impi-relay: no route to the IMPI server {server}: {e}"))?
                .ip()
        }
    };
    let global = TcpListener::bind((global_ip, 0))
        .map_err(|e| format!("impi-relay: cannot listen on the global address {global_ip}: {e}"))?;
    global.set_nonblocking(true).map_err(|e| e.to_string())?;
    Ok((global, global_ip))
}

fn addrs_of(global: &TcpListener, inside_ip: IpAddr) -> Result<TrunkAddrs, String> {
    let g = global.local_addr().map_err(|e| e.to_string())?;
    Ok(TrunkAddrs {
        global: HostAddr::from_ip(g.ip()),
        global_port: u32::from(g.port()),
        private: HostAddr::from_ip(inside_ip),
    })
}

/// Connections to the agent's port while trunk 0 waits for the others: the joined
/// trunks (in trunk order, 1..K) and early connections that are not trunks, with the
/// bytes already read from them.
struct Gathered {
    members: Vec<(TcpStream, TrunkAddrs)>,
    early: Vec<(TcpStream, Vec<u8>)>,
}

/// Trunk 0: accepts the other K-1 trunks on the agent's port, telling each the client
/// rank and the server, and learning its addresses.
fn gather_trunks(agent: &TcpListener, opts: &Options) -> Result<Gathered, String> {
    let deadline = Instant::now() + opts.trunk_timeout;
    let mut members: Vec<Option<(TcpStream, TrunkAddrs)>> =
        (1..opts.ntrunks).map(|_| None).collect();
    let mut early = Vec::new();
    agent.set_nonblocking(true).map_err(|e| e.to_string())?;
    while members.iter().any(Option::is_none) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            let missing: Vec<usize> = (1..opts.ntrunks as usize)
                .filter(|&k| members[k - 1].is_none())
                .collect();
            return Err(format!(
                "impi-relay: trunks {missing:?} of {} did not join within {:?} \
                 (CROSSMPI_RELAY_TRUNK_TIMEOUT)",
                opts.ntrunks, opts.trunk_timeout
            ));
        }
        let (mut sock, from) = match agent.accept() {
            Ok(a) => a,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
            Err(e) => return Err(format!("impi-relay: accepting on the agent's port: {e}")),
        };
        let mut first = [0u8; HEADER_LEN];
        let got = sock
            .set_nonblocking(false)
            .and_then(|_| sock.set_read_timeout(Some(left)))
            .and_then(|_| sock.read_exact(&mut first));
        if got.is_err() {
            eprintln!("impi-relay: refused {from}: no 12-byte message within {left:?}");
            continue;
        }
        if !TrunkMsg::is_trunk(&first) {
            if early.len() < MAX_CANDIDATES {
                early.push((sock, first.to_vec()));
            }
            continue;
        }
        let joined = (|| {
            let len =
                TrunkMsg::payload_len(&first, opts.limits.max_msg).map_err(|e| e.to_string())?;
            let mut body = vec![0u8; len];
            sock.read_exact(&mut body).map_err(|e| e.to_string())?;
            let trunk = match TrunkMsg::decode(&first, &body, opts.limits.max_msg) {
                Ok(TrunkMsg::Join { trunk }) => trunk,
                other => return Err(format!("expected Join, got {other:?}")),
            };
            let slot = members
                .get_mut((trunk as usize).wrapping_sub(1))
                .filter(|m| m.is_none())
                .ok_or_else(|| {
                    format!(
                        "trunk {trunk} is not a free trunk index in 1..{}",
                        opts.ntrunks
                    )
                })?;
            send_msg(
                &mut sock,
                &TrunkMsg::Hello {
                    rank: opts.rank,
                    ntrunks: opts.ntrunks,
                    mode: opts.trunk_mode,
                    server: opts.server.clone(),
                },
            )?;
            match recv_msg(&mut sock, opts, Some(left))? {
                TrunkMsg::Place(addrs) => {
                    *slot = Some((sock, addrs));
                    Ok(trunk)
                }
                other => Err(format!("expected Place, got {other:?}")),
            }
        })();
        match joined {
            Ok(trunk) => log(opts, || format!("trunk {trunk} joined from {from}")),
            Err(e) => eprintln!("impi-relay: refused a trunk from {from}: {e}"),
        }
    }
    Ok(Gathered {
        members: members.into_iter().flatten().collect(),
        early,
    })
}

/// Runs trunk 0 (or the only relay) on the agent's listening socket until the job ends.
/// Ok when every connection finished and the agent's FINI went to the server.
pub fn run(agent: TcpListener, inside_ip: IpAddr, opts: &Options) -> Result<(), String> {
    let gathered = gather_trunks(&agent, opts)?;
    let server_addr = resolve(&opts.server, "IMPI server")?;
    let server = connect(server_addr, opts.connect_timeout)
        .map_err(|e| format!("impi-relay: IMPI server: {e}"))?;
    let (global, global_ip) = bind_global(opts, server_addr)?;
    let own = addrs_of(&global, inside_ip)?;
    log(opts, || {
        format!(
            "connected to the IMPI server {server_addr}; outside hosts reach this relay at \
             {global_ip}:{}",
            own.global_port
        )
    });
    nonblocking(&server)?;
    agent.set_nonblocking(true).map_err(|e| e.to_string())?;
    let mut trunks = vec![own];
    let mut members = Vec::new();
    for (sock, addrs) in gathered.members {
        trunks.push(addrs);
        members.push(sock);
    }
    let place = RelayPlace {
        me: opts.rank,
        trunks,
        mode: opts.trunk_mode,
        encrypt: opts.encrypt,
        survive: opts.survive,
    };
    let mut relay = Relay {
        opts: opts.clone(),
        inside_ip,
        startup: Some(
            StartupRelay::new(place, opts.limits).expecting_key(opts.key.filter(|_| opts.encrypt)),
        ),
        members,
        router: None,
        job_key: None,
        listeners: Listeners {
            agent: Some(agent),
            global,
            private: Vec::new(),
        },
        peers: vec![Peer::new(Kind::Server, server, None)],
    };
    let result = relay
        .admit_early(gathered.early)
        .and_then(|_| relay.serve());
    relay.close_all();
    result.map_err(|e| format!("impi-relay: {e}"))
}

/// Runs trunk k > 0: joins trunk 0, takes the tables from it, then relays its share of
/// the host connections until the job ends.
pub fn run_member(opts: &Options) -> Result<(), String> {
    let join = opts.join.as_deref().expect("a joining trunk has -join");
    let inside_ip = opts.net.unwrap_or_else(host_address);
    let mut lead = connect(resolve(join, "trunk 0")?, opts.connect_timeout)
        .map_err(|e| format!("impi-relay: trunk 0: {e}"))?;
    let fail = |e: String| format!("impi-relay: trunk 0 at {join}: {e}");
    send_msg(&mut lead, &TrunkMsg::Join { trunk: opts.trunk }).map_err(fail)?;
    let (rank, ntrunks, mode, server) = match recv_msg(&mut lead, opts, Some(opts.trunk_timeout)) {
        Ok(TrunkMsg::Hello {
            rank,
            ntrunks,
            mode,
            server,
        }) if opts.trunk < ntrunks => (rank, ntrunks, mode, server),
        Ok(TrunkMsg::Hello { ntrunks, .. }) => {
            return Err(fail(format!(
                "this relay is trunk {}, but the cluster has {ntrunks} trunks",
                opts.trunk
            )))
        }
        Ok(other) => return Err(fail(format!("expected Hello, got {other:?}"))),
        Err(e) => return Err(fail(e)),
    };
    let opts = Options {
        rank,
        ntrunks,
        trunk_mode: mode,
        server: server.clone(),
        ..opts.clone()
    };
    let (global, global_ip) = bind_global(&opts, resolve(&server, "IMPI server")?)?;
    let own = addrs_of(&global, inside_ip)?;
    send_msg(&mut lead, &TrunkMsg::Place(own)).map_err(fail)?;
    log(&opts, || {
        format!(
            "trunk {} of {ntrunks} for client {rank}: outside hosts reach it at {global_ip}:{}",
            opts.trunk, own.global_port
        )
    });
    // The startup takes as long as the cluster's agent and the other clients need.
    let nclients = match recv_msg(&mut lead, &opts, None).map_err(fail)? {
        TrunkMsg::Size { nclients } if rank < nclients => nclients,
        other => return Err(fail(format!("expected Size, got {other:?}"))),
    };
    let (private, ports) = bind_private_ports(&opts, rank, nclients)?;
    log(&opts, || {
        format!("virtual hosts at {inside_ip} ports {ports:?}")
    });
    send_msg(&mut lead, &TrunkMsg::Ports(ports)).map_err(fail)?;
    let (inside, outside) = match recv_msg(&mut lead, &opts, None).map_err(fail)? {
        TrunkMsg::Tables { inside, outside } => (inside, outside),
        other => return Err(fail(format!("expected Tables, got {other:?}"))),
    };
    drop(lead);
    let mut relay = Relay {
        opts: opts.clone(),
        inside_ip,
        startup: None,
        members: Vec::new(),
        router: None,
        job_key: None,
        listeners: Listeners {
            agent: None,
            global,
            private,
        },
        peers: Vec::new(),
    };
    let result = relay
        .start_router(&inside, &outside)
        .and_then(|_| relay.serve());
    relay.close_all();
    result.map_err(|e| format!("impi-relay: {e}"))
}

/// Reads an encrypted connection: hands the router the opened plaintext as far as it
/// takes it, and reads the socket only when none is left waiting (so at most two
/// records are held). A record that fails ends the connection with the reason.
fn read_secure(
    router: &mut Router,
    conn: ConnId,
    sock: &mut TcpStream,
    secure: &mut SecureChannel,
) {
    loop {
        while !secure.plaintext().is_empty() {
            let Some(buf) = router.read_buf(conn) else {
                return;
            };
            let plain = secure.plaintext();
            let n = buf.len().min(plain.len());
            buf[..n].copy_from_slice(&plain[..n]);
            router.on_read(conn, n);
            if let Err(why) = secure.consume(n) {
                return router.on_close(conn, Some(why));
            }
        }
        if router.read_buf(conn).is_none() {
            return;
        }
        let space = secure
            .read_space()
            .expect("room once the plaintext is taken");
        match sock.read(space) {
            Ok(0) => return router.on_close(conn, secure.on_eof().err()),
            Ok(n) => {
                if let Err(why) = secure.on_read(n) {
                    return router.on_close(conn, Some(why));
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return router.on_close(conn, Some(format!("read failed ({e})"))),
        }
    }
}

/// Writes an encrypted connection: seals the router's queued bytes one record at a
/// time and tells the router they are written once the record's last byte is.
fn write_secure(
    router: &mut Router,
    conn: ConnId,
    sock: &mut TcpStream,
    secure: &mut SecureChannel,
) {
    loop {
        if secure.pending_out().is_empty() && secure.seal(router.write_buf(conn)) == 0 {
            return;
        }
        match sock.write(secure.pending_out()) {
            Ok(n) => {
                let done = secure.on_written(n);
                if done > 0 {
                    router.on_written(conn, done);
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return router.on_close(conn, Some(format!("write failed ({e})"))),
        }
    }
}

/// Bytes spliced into a pipe at once, and the pipe's size.
const PIPE_CHUNK: usize = 256 << 10;

/// What one splice step did.
enum Spliced {
    /// Bytes moved: try again.
    Moved,
    /// Nothing more now (the socket is empty, or the connection ended).
    Stop,
    /// Splicing does not apply now: read into the router's buffers.
    NotNow,
}

/// Writes what the pipe towards `conn` holds, as far as its socket takes it.
fn drain_pipe(router: &mut Router, conn: ConnId, sock: &TcpStream, pipe: &Pipe) {
    loop {
        let queued = router.piped(conn);
        if queued == 0 {
            return;
        }
        match pipe.drain(sock.as_raw_fd(), queued) {
            Ok(n) => router.on_pipe_written(conn, n),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return router.on_close(conn, Some(format!("write failed ({e})"))),
        }
    }
}

/// What one poll entry stands for.
#[derive(Clone, Copy)]
enum Slot {
    AgentListener,
    GlobalListener,
    PrivateListener(u32),
    Peer(usize),
}

impl Relay {
    fn serve(&mut self) -> Result<(), String> {
        // When poll last reported something: until `opts.spin` after it, poll without
        // sleeping (yielding in between), so the next packet of an exchange finds the
        // relay awake.
        let mut active = Instant::now();
        // The poll set, rebuilt every round into the same vectors (no allocation per round).
        let mut fds = Vec::new();
        let mut slots = Vec::new();
        loop {
            let startup_done = self.startup.as_ref().is_none_or(StartupRelay::is_finished);
            if startup_done && self.router.as_ref().is_some_and(Router::is_done) {
                let server = self.peers.iter().find(|p| matches!(p.kind, Kind::Server));
                if server.is_none_or(|p| p.out.is_empty()) {
                    log(&self.opts, || {
                        "every connection finished; FINI sent to the server".into()
                    });
                    return Ok(());
                }
            }
            let mut busy = false;
            self.poll_set(&mut busy, &mut fds, &mut slots);
            let spinning = active.elapsed() < self.opts.spin;
            let timeout = if busy || spinning { 0 } else { 1000 };
            // SAFETY: `fds` is a valid, initialised array of `fds.len()` pollfd records
            // that lives across the call.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == ErrorKind::Interrupted {
                    continue;
                }
                return Err(format!("poll: {e}"));
            }
            if n > 0 {
                active = Instant::now();
            } else if spinning && !busy {
                std::thread::yield_now();
            }
            for (fd, &slot) in fds.iter().zip(&slots) {
                if fd.revents != 0 {
                    self.on_ready(slot, fd.revents)?;
                }
            }
            if busy {
                self.deliver_opened();
            }
            self.flush_all()?;
            self.drop_closed();
            if let Some(why) = self.router.as_ref().and_then(Router::broken) {
                // Nothing can replace the lost packets: end the job now rather than
                // leave the parties still connected waiting for them.
                return Err(format!(
                    "{why}; the job cannot finish, so this relay closes every connection \
                     (inside and outside) and ends"
                ));
            }
        }
    }

    /// The poll set, into `fds` and `slots`; `busy` is set when some connection has work
    /// without waiting.
    fn poll_set(&mut self, busy: &mut bool, fds: &mut Vec<libc::pollfd>, slots: &mut Vec<Slot>) {
        fds.clear();
        slots.clear();
        let mut add = |fd: i32, events: i16, slot: Slot| {
            fds.push(libc::pollfd {
                fd,
                events,
                revents: 0,
            });
            slots.push(slot);
        };
        if let (Some(agent), Some(startup)) = (&self.listeners.agent, &self.startup) {
            if !startup.has_agent() {
                add(agent.as_raw_fd(), libc::POLLIN, Slot::AgentListener);
            }
        }
        if self.router.is_some() {
            add(
                self.listeners.global.as_raw_fd(),
                libc::POLLIN,
                Slot::GlobalListener,
            );
            for (c, l) in self.listeners.private.iter().enumerate() {
                if let Some(l) = l {
                    add(l.as_raw_fd(), libc::POLLIN, Slot::PrivateListener(c as u32));
                }
            }
        }
        for (i, p) in self.peers.iter().enumerate() {
            let (read, write) = match (&p.kind, &p.secure) {
                (&Kind::Data(conn), Some(secure)) => {
                    let r = self.router.as_mut().expect("data peers have a router");
                    let wants = r.read_buf(conn).is_some();
                    // Opened plaintext the router can take now: no sleeping in poll.
                    *busy |= wants && !secure.plaintext().is_empty();
                    (
                        wants && secure.plaintext().is_empty(),
                        !secure.pending_out().is_empty()
                            || (secure.is_open() && !r.write_buf(conn).is_empty()),
                    )
                }
                (&Kind::Data(conn), None) => {
                    let r = self.router.as_mut().expect("data peers have a router");
                    (
                        r.read_buf(conn).is_some(),
                        !r.write_buf(conn).is_empty() || r.piped(conn) > 0,
                    )
                }
                _ => (true, !p.out.is_empty()),
            };
            let events =
                if read { libc::POLLIN } else { 0 } | if write { libc::POLLOUT } else { 0 };
            // A connection waiting on another is left out: poll would report its
            // hang-up at once, every round, while nothing can be done about it yet.
            if events != 0 {
                add(p.sock.as_raw_fd(), events, Slot::Peer(i));
            }
        }
    }

    fn on_ready(&mut self, slot: Slot, revents: i16) -> Result<(), String> {
        match slot {
            Slot::AgentListener => {
                let agent = self
                    .listeners
                    .agent
                    .as_ref()
                    .expect("polled only on trunk 0");
                while let Ok((sock, from)) = agent.accept() {
                    let candidates = self
                        .peers
                        .iter()
                        .filter(|p| matches!(p.kind, Kind::Candidate(_)))
                        .count();
                    if candidates >= MAX_CANDIDATES {
                        eprintln!("impi-relay: refusing {from}: {MAX_CANDIDATES} connections already wait for AUTH");
                        continue;
                    }
                    log(&self.opts, || {
                        format!("connection from {from} to the agent's port")
                    });
                    nonblocking(&sock)?;
                    self.peers
                        .push(Peer::new(Kind::Candidate(Vec::new()), sock, None));
                }
                Ok(())
            }
            Slot::GlobalListener => {
                self.accept_data(Acceptor::Global, true);
                Ok(())
            }
            Slot::PrivateListener(client) => {
                self.accept_data(Acceptor::Private { client }, false);
                Ok(())
            }
            Slot::Peer(i) => self.on_peer(i, revents),
        }
    }

    fn accept_data(&mut self, at: Acceptor, global: bool) {
        loop {
            let l = match at {
                Acceptor::Global => &self.listeners.global,
                Acceptor::Private { client } => match self.listeners.private.get(client as usize) {
                    Some(Some(l)) => l,
                    _ => return,
                },
            };
            let Ok((sock, from)) = l.accept() else { return };
            let key = self.job_key;
            let router = self
                .router
                .as_mut()
                .expect("data listeners are polled with a router");
            match router.accept(at) {
                Some(conn) => {
                    let secure = data_socket(&sock, &self.opts)
                        .and_then(|_| secure_channel(key, global, Role::Acceptor));
                    match secure {
                        Ok(secure) => {
                            log(&self.opts, || {
                                format!(
                                    "accepted {from} on the {} port (connection {conn})",
                                    if global { "global" } else { "private" }
                                )
                            });
                            self.peers.push(Peer::new(Kind::Data(conn), sock, secure));
                        }
                        Err(e) => router.on_close(conn, Some(format!("could not be set up ({e})"))),
                    }
                }
                None => eprintln!(
                    "impi-relay: refusing {from}: too many connections wait for their handshake"
                ),
            }
        }
    }

    fn on_peer(&mut self, i: usize, revents: i16) -> Result<(), String> {
        if let Kind::Data(conn) = self.peers[i].kind {
            if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                self.read_data(i, conn);
            }
            return Ok(());
        }
        if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) == 0 {
            return Ok(());
        }
        let mut buf = vec![0u8; STARTUP_READ];
        let p = &mut self.peers[i];
        let n = match p.sock.read(&mut buf) {
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {
                return Ok(())
            }
            Err(_) => 0,
        };
        let data = &buf[..n];
        match &mut p.kind {
            Kind::Candidate(got) => {
                if n == 0 {
                    self.peers[i].kind = Kind::Closed;
                    return Ok(());
                }
                got.extend_from_slice(data);
                if got.len() >= AUTH_MSG_LEN {
                    self.admit(i)?;
                }
            }
            Kind::Agent | Kind::Server => {
                let agent = matches!(p.kind, Kind::Agent);
                if n == 0 {
                    let startup = self.startup.as_ref().expect("trunk 0 relays the startup");
                    let early = if agent {
                        startup.inside_closed()
                    } else {
                        startup.server_closed()
                    };
                    self.peers[i].kind = Kind::Closed;
                    return early.map_or(Ok(()), Err);
                }
                let startup = self.startup.as_mut().expect("trunk 0 relays the startup");
                let handled = if agent {
                    startup
                        .handle_inside(data)
                        .map_err(|e| format!("inside agent: {e}"))
                } else {
                    startup
                        .handle_server(data)
                        .map_err(|e| format!("IMPI server: {e}"))
                };
                handled?;
                self.after_startup_input()?;
            }
            Kind::Data(_) | Kind::Closed => {}
        }
        Ok(())
    }

    /// A connection to the agent's port sent its first 12 bytes: it becomes the agent
    /// if they are AUTH and there is none yet, else it is closed.
    fn admit(&mut self, i: usize) -> Result<(), String> {
        let Kind::Candidate(got) = &mut self.peers[i].kind else {
            return Ok(());
        };
        let bytes = std::mem::take(got);
        let startup = self.startup.as_mut().expect("trunk 0 relays the startup");
        match ClientMessage::decode(&bytes, 4) {
            Ok(Some((ClientMessage::Auth { .. }, _))) if !startup.has_agent() => {
                log(&self.opts, || "the inside agent authenticates".into());
                self.peers[i].kind = Kind::Agent;
                startup
                    .handle_inside(&bytes)
                    .map_err(|e| format!("inside agent: {e}"))?;
                self.after_startup_input()
            }
            other => {
                let why = match other {
                    Err(e) => e.to_string(),
                    _ => "not an AUTH message, or an agent is already connected".into(),
                };
                eprintln!("impi-relay: refused a connection to the agent's port: {why}");
                self.peers[i].kind = Kind::Closed;
                Ok(())
            }
        }
    }

    /// Takes the connections that reached the agent's port while trunk 0 waited for
    /// the other trunks.
    fn admit_early(&mut self, early: Vec<(TcpStream, Vec<u8>)>) -> Result<(), String> {
        for (sock, first) in early {
            nonblocking(&sock)?;
            self.peers
                .push(Peer::new(Kind::Candidate(first), sock, None));
            self.admit(self.peers.len() - 1)?;
        }
        self.flush_all()
    }

    /// Queues what the startup dialogue produced and acts on its events.
    fn after_startup_input(&mut self) -> Result<(), String> {
        let startup = self.startup.as_mut().expect("trunk 0 relays the startup");
        let to_inside = startup.take_to_inside();
        let to_server = startup.take_to_server();
        for p in self.peers.iter_mut() {
            match p.kind {
                Kind::Agent => p.out.extend_from_slice(&to_inside),
                Kind::Server => p.out.extend_from_slice(&to_server),
                _ => {}
            }
        }
        while let Some(ev) = self.startup.as_mut().and_then(StartupRelay::poll_event) {
            match ev {
                StartupEvent::Joined { nclients } => {
                    log(&self.opts, || format!("{nclients} clients joined"));
                    self.open_private_ports(nclients)?;
                }
                StartupEvent::Ready { inside, outside } => {
                    let tables = TrunkMsg::Tables { inside, outside };
                    for (k, sock) in std::mem::take(&mut self.members).iter_mut().enumerate() {
                        send_msg(sock, &tables).map_err(|e| format!("trunk {}: {e}", k + 1))?;
                    }
                    let TrunkMsg::Tables { inside, outside } = tables else {
                        unreachable!("built above")
                    };
                    self.start_router(&inside, &outside)?;
                }
                StartupEvent::InsideFinished => {
                    log(&self.opts, || "the inside agent sent FINI".into())
                }
            }
        }
        // Events may have produced more output (private ports release replies).
        let to_inside = self
            .startup
            .as_mut()
            .map(StartupRelay::take_to_inside)
            .unwrap_or_default();
        if let Some(p) = self
            .peers
            .iter_mut()
            .find(|p| matches!(p.kind, Kind::Agent))
        {
            p.out.extend_from_slice(&to_inside);
        }
        Ok(())
    }

    /// Derives this trunk's connections from the tables and starts making them.
    fn start_router(
        &mut self,
        inside: &crossmpi_impi::wire::tables::GlobalTables,
        outside: &crossmpi_impi::wire::tables::GlobalTables,
    ) -> Result<(), String> {
        let trunking = self.opts.trunking();
        let topo =
            Topology::new(self.opts.rank, trunking, inside, outside).map_err(|e| e.to_string())?;
        // Trunk 0 (the one with the startup dialogue) knows its own choice.
        let chosen = self.startup.is_some().then_some(self.opts.encrypt);
        if agreed_encryption(self.opts.rank, outside, chosen)? {
            let key = self.opts.key.ok_or(
                "the cluster's relays encrypt (trunk 0 has -encrypt): this one needs the \
                 job's key in IMPI_AUTH_KEY",
            )?;
            self.job_key = Some(JobKey::from_impi_key(key));
            log(&self.opts, || {
                "the connections to the other clients are encrypted".into()
            });
        }
        log(&self.opts, || {
            format!(
                "startup complete: {} host connections to make ({trunking:?})",
                topo.links().len(),
            )
        });
        // Splicing moves data as it arrives, so it needs cut-through forwarding.
        let cfg = RouterConfig {
            cut_through: self.opts.splice,
            ..self.opts.router
        };
        self.router = Some(Router::new(topo, cfg));
        self.flush_all()?;
        self.dial_all()
    }

    /// Trunk 0: opens its private ports and gathers every other trunk's.
    fn open_private_ports(&mut self, nclients: u32) -> Result<(), String> {
        let (private, ports) = bind_private_ports(&self.opts, self.opts.rank, nclients)?;
        self.listeners.private = private;
        log(&self.opts, || {
            format!("virtual hosts at {} ports {ports:?}", self.inside_ip)
        });
        let mut all = vec![ports];
        for (k, sock) in self.members.iter_mut().enumerate() {
            let trunk = k + 1;
            send_msg(sock, &TrunkMsg::Size { nclients })
                .and_then(|_| recv_msg(sock, &self.opts, Some(self.opts.trunk_timeout)))
                .and_then(|m| match m {
                    TrunkMsg::Ports(p) if p.len() == nclients as usize => {
                        all.push(p);
                        Ok(())
                    }
                    other => Err(format!("expected {nclients} ports, got {other:?}")),
                })
                .map_err(|e| format!("trunk {trunk}: {e}"))?;
        }
        self.startup
            .as_mut()
            .expect("trunk 0 relays the startup")
            .set_private_ports(all)
            .map_err(|e| e.to_string())
    }

    /// Shuts every socket down as the relay ends.
    fn close_all(&self) {
        for p in &self.peers {
            let _ = p.sock.shutdown(Shutdown::Both);
        }
    }

    /// Opens the connections the relay makes (to lower-ranked hosts on each side).
    fn dial_all(&mut self) -> Result<(), String> {
        let router = self.router.as_mut().expect("dialing follows startup");
        let dials = router.topology().dials().to_vec();
        for dial in dials {
            let addr = SocketAddr::new(dial.addr.to_ip(), dial.port);
            let sock = connect(addr, self.opts.connect_timeout)
                .map_err(|e| format!("{}: {e}", describe(dial.link)))?;
            data_socket(&sock, &self.opts)?;
            let router = self.router.as_mut().expect("dialing follows startup");
            let conn = router.dialed(&dial);
            log(&self.opts, || {
                format!(
                    "connected to {} at {addr} (connection {conn})",
                    describe(dial.link)
                )
            });
            let outside = matches!(dial.link, Link::Outside { .. });
            self.peers.push(Peer::new(
                Kind::Data(conn),
                sock,
                secure_channel(self.job_key, outside, Role::Dialer)?,
            ));
        }
        Ok(())
    }

    /// Reads a data connection while the router takes bytes.
    fn read_data(&mut self, i: usize, conn: ConnId) {
        let router = self.router.as_mut().expect("data peers have a router");
        let Peer { sock, secure, .. } = &mut self.peers[i];
        if let Some(secure) = secure {
            return read_secure(router, conn, sock, secure);
        }
        loop {
            if self.opts.splice {
                match self.splice_data(i, conn) {
                    Spliced::Moved => continue,
                    Spliced::Stop => return,
                    Spliced::NotNow => {}
                }
            }
            let router = self.router.as_mut().expect("data peers have a router");
            let sock = &mut self.peers[i].sock;
            let Some(buf) = router.read_buf(conn) else {
                return;
            };
            let want = buf.len();
            match sock.read(buf) {
                Ok(0) => {
                    router.on_close(conn, None);
                    return;
                }
                Ok(n) => {
                    router.on_read(conn, n);
                    if n < want {
                        return;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    router.on_close(conn, Some(format!("read failed ({e})")));
                    return;
                }
            }
        }
    }

    /// One splice of `conn`'s packet data into the pipe towards its destination, and
    /// as much of the pipe as the destination takes now.
    fn splice_data(&mut self, i: usize, conn: ConnId) -> Spliced {
        let router = self.router.as_mut().expect("data peers have a router");
        let Some((to, n)) = router.splice_route(conn) else {
            return Spliced::NotNow;
        };
        let Some(j) = self
            .peers
            .iter()
            .position(|p| matches!(p.kind, Kind::Data(c) if c == to))
        else {
            return Spliced::NotNow;
        };
        if self.peers[j].secure.is_some() {
            return Spliced::NotNow;
        }
        if self.peers[j].pipe.is_none() {
            match Pipe::new(PIPE_CHUNK) {
                Ok(p) => self.peers[j].pipe = Some(p),
                Err(e) => {
                    eprintln!("impi-relay: no pipe for splice ({e}); copying instead");
                    self.opts.splice = false;
                    return Spliced::NotNow;
                }
            }
        }
        let from = self.peers[i].sock.as_raw_fd();
        let dest = &self.peers[j];
        let pipe = dest.pipe.as_ref().expect("made above");
        match pipe.fill(from, n.min(PIPE_CHUNK)) {
            Ok(0) => {
                router.on_close(conn, None);
                return Spliced::Stop;
            }
            Ok(k) => router.on_spliced(conn, k),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Spliced::Stop,
            Err(e) if e.kind() == ErrorKind::Interrupted => return Spliced::Moved,
            Err(e) => {
                // Not a connection problem: this kernel or socket cannot splice.
                eprintln!("impi-relay: splice failed ({e}); copying instead");
                self.opts.splice = false;
                return Spliced::NotNow;
            }
        }
        drain_pipe(router, to, &dest.sock, pipe);
        Spliced::Moved
    }

    /// Writes what every socket takes now, and acts on the router's events.
    fn flush_all(&mut self) -> Result<(), String> {
        for p in self.peers.iter_mut() {
            match p.kind {
                Kind::Data(conn) => {
                    let router = self.router.as_mut().expect("data peers have a router");
                    if let Some(secure) = &mut p.secure {
                        write_secure(router, conn, &mut p.sock, secure);
                        continue;
                    }
                    if let Some(pipe) = &p.pipe {
                        drain_pipe(router, conn, &p.sock, pipe);
                        if router.piped(conn) > 0 {
                            continue;
                        }
                    }
                    loop {
                        let out = router.write_buf(conn);
                        if out.is_empty() {
                            break;
                        }
                        match p.sock.write(out) {
                            Ok(n) => router.on_written(conn, n),
                            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                            Err(e) if e.kind() == ErrorKind::Interrupted => {}
                            Err(e) => {
                                router.on_close(conn, Some(format!("write failed ({e})")));
                                break;
                            }
                        }
                    }
                }
                Kind::Agent | Kind::Server if !p.out.is_empty() => match p.sock.write(&p.out) {
                    Ok(n) => {
                        p.out.drain(..n);
                    }
                    Err(e)
                        if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
                    Err(e) => {
                        let who = if matches!(p.kind, Kind::Agent) {
                            "the inside agent"
                        } else {
                            "the IMPI server"
                        };
                        return Err(format!("writing to {who}: {e}"));
                    }
                },
                _ => {}
            }
        }
        self.router_events()
    }

    fn router_events(&mut self) -> Result<(), String> {
        let Some(router) = self.router.as_mut() else {
            return Ok(());
        };
        while let Some(ev) = router.poll_event() {
            match ev {
                RouterEvent::Close { conn, reason } => {
                    if let Some(p) = self
                        .peers
                        .iter_mut()
                        .find(|p| matches!(p.kind, Kind::Data(c) if c == conn))
                    {
                        match &reason {
                            Some(why) => eprintln!(
                                "impi-relay: dropping the connection from {}: {why}",
                                p.addr.map_or_else(|| "?".into(), |a| a.to_string())
                            ),
                            None => log(&self.opts, || format!("connection {conn} finished")),
                        }
                        let _ = p.sock.shutdown(Shutdown::Both);
                        p.kind = Kind::Closed;
                    }
                }
            }
        }
        Ok(())
    }

    /// Hands the router the plaintext encrypted connections opened while it had no room.
    fn deliver_opened(&mut self) {
        for i in 0..self.peers.len() {
            if let (&Kind::Data(conn), Some(secure)) = (&self.peers[i].kind, &self.peers[i].secure)
            {
                if !secure.plaintext().is_empty() {
                    self.read_data(i, conn);
                }
            }
        }
    }

    /// Forgets sockets marked closed.
    fn drop_closed(&mut self) {
        self.peers.retain(|p| !matches!(p.kind, Kind::Closed));
    }
}
