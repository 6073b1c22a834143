//! The relay's I/O: one thread, one `poll` loop over every socket, nonblocking
//! throughout. The startup dialogue ([`StartupRelay`]) and the data phase ([`Router`])
//! are sans-IO; this file only moves bytes between them and the sockets, and opens and
//! closes sockets when they say so.

use crate::options::Options;
use crate::rewrite::RelayPlace;
use crate::router::{describe, ConnId, Router, RouterEvent};
use crate::startup::{StartupEvent, StartupRelay, AUTH_MSG_LEN};
use crate::topology::{Acceptor, Topology};
use crossmpi_impi::wire::addr::HostAddr;
use crossmpi_impi::wire::startup::ClientMessage;
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
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

/// A startup socket with what remains to be written to it.
struct Peer {
    kind: Kind,
    sock: TcpStream,
    out: Vec<u8>,
}

struct Listeners {
    agent: TcpListener,
    global: TcpListener,
    /// One per client: the virtual host's port (None for the relay's own client).
    private: Vec<Option<TcpListener>>,
}

/// The relay's state between polls.
struct Relay {
    opts: Options,
    inside_ip: IpAddr,
    startup: StartupRelay,
    router: Option<Router>,
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

/// Runs the relay on the agent's listening socket until the job ends. Ok when every
/// connection finished and the agent's FINI went to the server.
pub fn run(agent: TcpListener, inside_ip: IpAddr, opts: &Options) -> Result<(), String> {
    let server_addr = std::net::ToSocketAddrs::to_socket_addrs(opts.server.as_str())
        .map_err(|e| format!("impi-relay: IMPI server address {:?}: {e}", opts.server))?
        .next()
        .ok_or_else(|| {
            format!(
                "impi-relay: IMPI server address {:?} resolves to nothing",
                opts.server
            )
        })?;
    let server = connect(server_addr, opts.connect_timeout)
        .map_err(|e| format!("impi-relay: IMPI server: {e}"))?;
    let global_ip = match opts.global_addr {
        Some(ip) => ip,
        None => server.local_addr().map_err(|e| e.to_string())?.ip(),
    };
    let global = TcpListener::bind((global_ip, 0))
        .map_err(|e| format!("impi-relay: cannot listen on the global address {global_ip}: {e}"))?;
    let global_port = global.local_addr().map_err(|e| e.to_string())?.port();
    log(opts, || {
        format!("connected to the IMPI server {server_addr}; outside hosts reach this relay at {global_ip}:{global_port}")
    });
    nonblocking(&server)?;
    for l in [&agent, &global] {
        l.set_nonblocking(true).map_err(|e| e.to_string())?;
    }
    let place = RelayPlace {
        me: opts.rank,
        global: HostAddr::from_ip(global_ip),
        global_port: u32::from(global_port),
        private: HostAddr::from_ip(inside_ip),
    };
    let mut relay = Relay {
        opts: opts.clone(),
        inside_ip,
        startup: StartupRelay::new(place, opts.limits),
        router: None,
        listeners: Listeners {
            agent,
            global,
            private: Vec::new(),
        },
        peers: vec![Peer {
            kind: Kind::Server,
            sock: server,
            out: Vec::new(),
        }],
    };
    let result = relay.serve();
    for p in &relay.peers {
        let _ = p.sock.shutdown(Shutdown::Both);
    }
    result.map_err(|e| format!("impi-relay: {e}"))
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
        loop {
            if self.startup.is_finished() && self.router.as_ref().is_some_and(Router::is_done) {
                let server = self.peers.iter().find(|p| matches!(p.kind, Kind::Server));
                if server.is_none_or(|p| p.out.is_empty()) {
                    log(&self.opts, || {
                        "every connection finished; FINI sent to the server".into()
                    });
                    return Ok(());
                }
            }
            let (mut fds, slots) = self.poll_set();
            // SAFETY: `fds` is a valid, initialised array of `fds.len()` pollfd records
            // that lives across the call.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 1000) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == ErrorKind::Interrupted {
                    continue;
                }
                return Err(format!("poll: {e}"));
            }
            for (fd, slot) in fds.iter().zip(slots) {
                if fd.revents != 0 {
                    self.on_ready(slot, fd.revents)?;
                }
            }
            self.flush_all()?;
            self.drop_closed();
        }
    }

    fn poll_set(&mut self) -> (Vec<libc::pollfd>, Vec<Slot>) {
        let mut fds = Vec::new();
        let mut slots = Vec::new();
        let mut add = |fd: i32, events: i16, slot: Slot| {
            fds.push(libc::pollfd {
                fd,
                events,
                revents: 0,
            });
            slots.push(slot);
        };
        if !self.startup.has_agent() {
            add(
                self.listeners.agent.as_raw_fd(),
                libc::POLLIN,
                Slot::AgentListener,
            );
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
            let (read, write) = match p.kind {
                Kind::Data(conn) => {
                    let r = self.router.as_mut().expect("data peers have a router");
                    (r.read_buf(conn).is_some(), !r.write_buf(conn).is_empty())
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
        (fds, slots)
    }

    fn on_ready(&mut self, slot: Slot, revents: i16) -> Result<(), String> {
        match slot {
            Slot::AgentListener => {
                while let Ok((sock, from)) = self.listeners.agent.accept() {
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
                    self.peers.push(Peer {
                        kind: Kind::Candidate(Vec::new()),
                        sock,
                        out: Vec::new(),
                    });
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
            let router = self
                .router
                .as_mut()
                .expect("data listeners are polled with a router");
            match router.accept(at) {
                Some(conn) if nonblocking(&sock).is_ok() => {
                    log(&self.opts, || {
                        format!(
                            "accepted {from} on the {} port (connection {conn})",
                            if global { "global" } else { "private" }
                        )
                    });
                    self.peers.push(Peer {
                        kind: Kind::Data(conn),
                        sock,
                        out: Vec::new(),
                    });
                }
                Some(conn) => router.on_close(conn, Some("could not be set up".into())),
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
                if got.len() < AUTH_MSG_LEN {
                    return Ok(());
                }
                let bytes = std::mem::take(got);
                match ClientMessage::decode(&bytes, 4) {
                    Ok(Some((ClientMessage::Auth { .. }, _))) if !self.startup.has_agent() => {
                        log(&self.opts, || "the inside agent authenticates".into());
                        self.peers[i].kind = Kind::Agent;
                        self.startup
                            .handle_inside(&bytes)
                            .map_err(|e| format!("inside agent: {e}"))?;
                        self.after_startup_input()?;
                    }
                    other => {
                        let why = match other {
                            Err(e) => e.to_string(),
                            _ => "not an AUTH message, or an agent is already connected".into(),
                        };
                        eprintln!("impi-relay: refused a connection to the agent's port: {why}");
                        self.peers[i].kind = Kind::Closed;
                    }
                }
            }
            Kind::Agent | Kind::Server => {
                let agent = matches!(p.kind, Kind::Agent);
                if n == 0 {
                    let early = if agent {
                        self.startup.inside_closed()
                    } else {
                        self.startup.server_closed()
                    };
                    self.peers[i].kind = Kind::Closed;
                    return early.map_or(Ok(()), Err);
                }
                let handled = if agent {
                    self.startup
                        .handle_inside(data)
                        .map_err(|e| format!("inside agent: {e}"))
                } else {
                    self.startup
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

    /// Queues what the startup dialogue produced and acts on its events.
    fn after_startup_input(&mut self) -> Result<(), String> {
        let to_inside = self.startup.take_to_inside();
        let to_server = self.startup.take_to_server();
        for p in self.peers.iter_mut() {
            match p.kind {
                Kind::Agent => p.out.extend_from_slice(&to_inside),
                Kind::Server => p.out.extend_from_slice(&to_server),
                _ => {}
            }
        }
        while let Some(ev) = self.startup.poll_event() {
            match ev {
                StartupEvent::Joined { nclients } => {
                    log(&self.opts, || format!("{nclients} clients joined"));
                    self.open_private_ports(nclients)?;
                }
                StartupEvent::Ready { inside, outside } => {
                    let topo = Topology::new(self.opts.rank, &inside, &outside)
                        .map_err(|e| e.to_string())?;
                    log(&self.opts, || {
                        format!(
                            "startup complete: {} host connections to make",
                            topo.links().len()
                        )
                    });
                    self.router = Some(Router::new(topo, self.opts.router));
                    self.flush_all()?;
                    self.dial_all()?;
                }
                StartupEvent::InsideFinished => {
                    log(&self.opts, || "the inside agent sent FINI".into())
                }
            }
        }
        // Events may have produced more output (private ports release replies).
        let to_inside = self.startup.take_to_inside();
        if let Some(p) = self
            .peers
            .iter_mut()
            .find(|p| matches!(p.kind, Kind::Agent))
        {
            p.out.extend_from_slice(&to_inside);
        }
        Ok(())
    }

    fn open_private_ports(&mut self, nclients: u32) -> Result<(), String> {
        let mut ports = Vec::new();
        let bind_ip = self.opts.net.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
        for c in 0..nclients {
            if c == self.opts.rank {
                self.listeners.private.push(None);
                ports.push(0);
                continue;
            }
            let l = TcpListener::bind((bind_ip, 0))
                .map_err(|e| format!("cannot listen on the private address {bind_ip}: {e}"))?;
            l.set_nonblocking(true).map_err(|e| e.to_string())?;
            ports.push(l.local_addr().map_err(|e| e.to_string())?.port());
            self.listeners.private.push(Some(l));
        }
        log(&self.opts, || {
            format!("virtual hosts at {} ports {ports:?}", self.inside_ip)
        });
        self.startup
            .set_private_ports(ports)
            .map_err(|e| e.to_string())
    }

    /// Opens the connections the relay makes (to lower-ranked hosts on each side).
    fn dial_all(&mut self) -> Result<(), String> {
        let router = self.router.as_mut().expect("dialing follows startup");
        let dials = router.topology().dials().to_vec();
        for dial in dials {
            let addr = SocketAddr::new(dial.addr.to_ip(), dial.port);
            let sock = connect(addr, self.opts.connect_timeout)
                .map_err(|e| format!("{}: {e}", describe(dial.link)))?;
            nonblocking(&sock)?;
            let router = self.router.as_mut().expect("dialing follows startup");
            let conn = router.dialed(&dial);
            log(&self.opts, || {
                format!(
                    "connected to {} at {addr} (connection {conn})",
                    describe(dial.link)
                )
            });
            self.peers.push(Peer {
                kind: Kind::Data(conn),
                sock,
                out: Vec::new(),
            });
        }
        Ok(())
    }

    /// Reads a data connection while the router takes bytes.
    fn read_data(&mut self, i: usize, conn: ConnId) {
        let router = self.router.as_mut().expect("data peers have a router");
        let sock = &mut self.peers[i].sock;
        while let Some(buf) = router.read_buf(conn) {
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

    /// Writes what every socket takes now, and acts on the router's events.
    fn flush_all(&mut self) -> Result<(), String> {
        for p in self.peers.iter_mut() {
            match p.kind {
                Kind::Data(conn) => {
                    let router = self.router.as_mut().expect("data peers have a router");
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
                                p.sock
                                    .peer_addr()
                                    .map(|a| a.to_string())
                                    .unwrap_or_else(|_| "?".into())
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

    /// Forgets sockets marked closed.
    fn drop_closed(&mut self) {
        self.peers.retain(|p| !matches!(p.kind, Kind::Closed));
    }
}
