//! The I/O loop around the server state machine: one thread accepts, one thread per
//! connection reads, and the main thread owns the state machine, writes, and keeps the
//! startup deadline. No async runtime: a server of at most 32 clients needs none.
//! Writes block, bounded by a write timeout equal to `--timeout`: replies are small and a
//! client reads each before it sends again, so only a client that stops reading stalls
//! the others, and it is cut off (and named) when the timeout expires.

use crate::options::Options;
use crossmpi_impi::startup::server::{ConnId, Phase, Server, ServerConfig, ServerEvent};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::time::Instant;

/// Connections open at once beyond which new ones are closed unread: the legitimate
/// clients are at most 32, the rest are strays, and each costs a thread.
const MAX_OPEN_CONNECTIONS: usize = 256;

/// Size of one read; with [`QUEUED_READS`] it bounds what readers buffer ahead of the
/// state machine (16 MiB).
const READ_CHUNK: usize = 64 << 10;
const QUEUED_READS: usize = 256;

enum IoEvent {
    Accepted(TcpStream, SocketAddr),
    Data(ConnId, Vec<u8>),
    Closed(ConnId),
}

struct Peer {
    stream: TcpStream,
    addr: SocketAddr,
}

/// Binds the listening socket the options ask for.
pub fn bind(opts: &Options) -> std::io::Result<TcpListener> {
    let ip = opts.host.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    TcpListener::bind((ip, opts.port))
}

/// The `address:port` clients should use: the bound address, or when bound to all
/// addresses this host's first non-loopback address (loopback when it has none).
pub fn advertised(listener: &TcpListener) -> std::io::Result<SocketAddr> {
    let local = listener.local_addr()?;
    if !local.ip().is_unspecified() {
        return Ok(local);
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let ip = std::net::ToSocketAddrs::to_socket_addrs(&(host.trim(), 0))
        .into_iter()
        .flatten()
        .map(|a| a.ip())
        .find(|ip| ip.is_ipv4() && !ip.is_loopback())
        .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    Ok(SocketAddr::new(ip, local.port()))
}

/// Serves one job on `listener`. Ok when every client sent FINI, else the reason, which
/// names the client at fault.
pub fn serve(listener: TcpListener, opts: &Options) -> Result<(), String> {
    let mut server = Server::new(ServerConfig {
        nclients: opts.nclients,
        auth: opts.auth.clone(),
        limits: opts.limits,
    })
    .map_err(|e| e.to_string())?;
    let wake_addr = listener.local_addr().map_err(|e| e.to_string())?;
    let (tx, rx) = sync_channel(QUEUED_READS);
    let stop = Arc::new(AtomicBool::new(false));
    spawn_acceptor(listener, tx.clone(), stop.clone())?;
    let result = run(&mut server, opts, &tx, &rx);
    stop.store(true, Ordering::SeqCst);
    // Wake the acceptor from its blocking accept so its thread ends.
    let wake_ip = if wake_addr.ip().is_unspecified() {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        wake_addr.ip()
    };
    let _ = TcpStream::connect((wake_ip, wake_addr.port()));
    result
}

fn spawn_acceptor(
    listener: TcpListener,
    tx: SyncSender<IoEvent>,
    stop: Arc<AtomicBool>,
) -> Result<(), String> {
    std::thread::Builder::new()
        .name("impi-accept".into())
        .spawn(move || {
            for conn in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(stream) = conn else { continue };
                let Ok(addr) = stream.peer_addr() else {
                    continue;
                };
                if tx.send(IoEvent::Accepted(stream, addr)).is_err() {
                    return;
                }
            }
        })
        .map(drop)
        .map_err(|e| format!("impi-server: cannot start the accept thread: {e}"))
}

fn spawn_reader(
    conn: ConnId,
    mut stream: TcpStream,
    tx: SyncSender<IoEvent>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(format!("impi-conn-{conn}"))
        .spawn(move || {
            let mut buf = vec![0u8; READ_CHUNK];
            loop {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(IoEvent::Closed(conn));
                        return;
                    }
                    Ok(n) => {
                        if tx.send(IoEvent::Data(conn, buf[..n].to_vec())).is_err() {
                            return;
                        }
                    }
                }
            }
        })
        .map(drop)
}

fn log(opts: &Options, msg: impl FnOnce() -> String) {
    if opts.verbose {
        eprintln!("impi-server: {}", msg());
    }
}

fn run(
    server: &mut Server,
    opts: &Options,
    tx: &SyncSender<IoEvent>,
    rx: &Receiver<IoEvent>,
) -> Result<(), String> {
    let deadline = Instant::now() + opts.timeout;
    let mut peers: BTreeMap<ConnId, Peer> = BTreeMap::new();
    loop {
        let startup = matches!(server.phase(), Phase::Joining | Phase::Collecting);
        let event = if startup {
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(ev) => Some(ev),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err("impi-server: internal channel closed".into())
                }
            }
        } else {
            // After the DONE reply the MPI job runs for as long as it needs.
            Some(
                rx.recv()
                    .map_err(|_| "impi-server: internal channel closed".to_string())?,
            )
        };
        match event {
            None => server.fail(format!(
                "startup did not complete within {} s (--timeout): {}",
                opts.timeout.as_secs(),
                server.waiting_for()
            )),
            Some(IoEvent::Accepted(stream, addr)) => {
                if peers.len() >= MAX_OPEN_CONNECTIONS {
                    eprintln!("impi-server: refusing {addr}: {MAX_OPEN_CONNECTIONS} connections already open");
                    continue;
                }
                let conn = server.accept();
                log(opts, || format!("connection {conn} from {addr}"));
                let _ = stream.set_write_timeout(Some(opts.timeout));
                let _ = stream.set_nodelay(true);
                match stream
                    .try_clone()
                    .and_then(|r| spawn_reader(conn, r, tx.clone()))
                {
                    Ok(()) => {
                        peers.insert(conn, Peer { stream, addr });
                    }
                    Err(e) => {
                        eprintln!("impi-server: dropping {addr}: cannot start its reader: {e}");
                        server.handle_close(conn);
                    }
                }
            }
            Some(IoEvent::Data(conn, bytes)) => server.handle_input(conn, &bytes),
            Some(IoEvent::Closed(conn)) => {
                if peers.remove(&conn).is_some() {
                    log(opts, || format!("{} closed", server.describe(conn)));
                    server.handle_close(conn);
                }
            }
        }
        flush(server, &mut peers);
        if let Some(outcome) = report(server, opts, &peers) {
            for p in peers.values() {
                let _ = p.stream.shutdown(Shutdown::Both);
            }
            return outcome;
        }
        close_refused(server, &mut peers);
    }
}

/// Sends every pending output; a client whose socket fails is reported closed.
fn flush(server: &mut Server, peers: &mut BTreeMap<ConnId, Peer>) {
    let ids: Vec<ConnId> = peers.keys().copied().collect();
    for conn in ids {
        let out = server.take_output(conn);
        if out.is_empty() {
            continue;
        }
        let failed = peers
            .get_mut(&conn)
            .map(|p| p.stream.write_all(&out).is_err())
            .unwrap_or(false);
        if failed {
            if let Some(p) = peers.remove(&conn) {
                let _ = p.stream.shutdown(Shutdown::Both);
            }
            server.handle_close(conn);
        }
    }
}

fn close_refused(server: &mut Server, peers: &mut BTreeMap<ConnId, Peer>) {
    let refused: Vec<ConnId> = peers
        .keys()
        .copied()
        .filter(|&c| server.should_close(c))
        .collect();
    for conn in refused {
        if let Some(p) = peers.remove(&conn) {
            let _ = p.stream.shutdown(Shutdown::Both);
        }
        server.handle_close(conn);
    }
}

/// Logs the state machine's events; Some(outcome) when the job has ended.
fn report(
    server: &mut Server,
    opts: &Options,
    peers: &BTreeMap<ConnId, Peer>,
) -> Option<Result<(), String>> {
    let addr = |c: ConnId| {
        peers
            .get(&c)
            .map(|p| p.addr.to_string())
            .unwrap_or_else(|| "a closed socket".into())
    };
    while let Some(ev) = server.poll_event() {
        match ev {
            ServerEvent::Rejected { conn, reason } => {
                eprintln!(
                    "impi-server: refused connection {conn} from {}: {reason}",
                    addr(conn)
                )
            }
            ServerEvent::Authenticated { conn, method } => log(opts, || {
                format!("connection {conn} authenticated ({method:?})")
            }),
            ServerEvent::Registered { conn, rank } => log(opts, || {
                format!("client {rank} registered from {}", addr(conn))
            }),
            ServerEvent::AllJoined => log(opts, || format!("all {} clients joined", opts.nclients)),
            ServerEvent::LabelComplete { label, len } => log(opts, || {
                format!("replied {label} ({len} bytes) to all clients")
            }),
            ServerEvent::AllDone => log(opts, || "startup complete (DONE)".into()),
            ServerEvent::ClientFinished { rank } => {
                log(opts, || format!("client {rank} sent FINI"))
            }
            ServerEvent::ClientLeft { rank } => eprintln!(
                "impi-server: client {rank} closed its connection before sending FINI; its relays \
                 survive a trunk's death (its trunk 0 died), so the job goes on without it"
            ),
            ServerEvent::JobComplete => {
                log(opts, || "every client sent FINI".into());
                return Some(Ok(()));
            }
            ServerEvent::JobFailed { reason } => {
                return Some(Err(format!("impi-server: {reason}")))
            }
        }
    }
    None
}
