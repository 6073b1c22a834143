//! Joining a multi-cluster job at `MPI_Init` (`mpirun -client RANK SERVER:PORT`).
//!
//! 1. Every rank opens its IMPI listening socket (it is an IMPI host of its own) and
//!    publishes address, port and pid through its cluster's PMI.
//! 2. The cluster's agent, PMI rank 0, runs the client side of the IMPI startup with the
//!    server on behalf of all of them (authentication, rank, every label, DONE), then
//!    publishes the global tables through PMI. It keeps the server connection until
//!    `MPI_Finalize` sends FINI; if the server closes it earlier (another cluster failed,
//!    or a client never joined) the agent ends its cluster's job with that reason.
//! 3. Every rank connects to the hosts of other clients: to lower-ranked hosts by
//!    connecting and sending its 4-byte host index, from higher-ranked ones by accepting
//!    (IMPI's "higher ranked host connects, lower ranked host accepts").

use super::HostLink;
use crossmpi_impi::startup::client::{Client, ClientAuth, ClientConfig};
use crossmpi_impi::wire::addr::HostAddr;
use crossmpi_impi::wire::handshake::HostHandshake;
use crossmpi_impi::wire::label::Label;
use crossmpi_impi::wire::startup::CollReply;
use crossmpi_impi::wire::tables::{ClientInfo, GlobalTables, HostInfo, ProcInfo, Version};
use crossmpi_impi::wire::Limits;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The version crossmpi lists after IMPI 0.0: a client that lists it is crossmpi, so
/// when every client does, crossmpi's own (WAN-aware) collective algorithms may be used.
/// Its minor number names the client's native data representation, so crossmpi clients
/// of one representation may skip the external32 conversion. Other implementations pick
/// the highest version both sides list, 0.0.
pub const CROSSMPI_VERSION: Version = Version {
    major: crossmpi_impi::wire::tables::CROSSMPI_MAJOR,
    minor: native_representation(),
};

/// Byte order and pointer width: 1 + 2 * (pointer bytes) + (1 if big-endian). Type sizes
/// of the C basic types follow from these on the platforms crossmpi runs on (LP64 or
/// ILP32 Unix).
const fn native_representation() -> u32 {
    1 + 2 * std::mem::size_of::<usize>() as u32 + cfg!(target_endian = "big") as u32
}

/// The version entry (major "CXTS", minor K) an IMPI relay in source-trunking mode
/// (`impi-relay -trunk-mode source`, docs/impi-relay.md) adds, in the tables it shows
/// its cluster, to every other client: that client is K virtual hosts, one per relay,
/// and each rank must reach all of its processes through the relay of its own trunk.
pub const SOURCE_TRUNK_MAJOR: u32 = 0x4358_5453;

/// The host through which world rank `me` sends to world rank `to` of another client,
/// `holder` being the host that holds `to`: `holder`, unless `to`'s client carries the
/// source-trunking mark with K = its host count; then that client's host k, k being
/// the relay `me` belongs to (the relay's partition: index i of n ranks is on trunk
/// i * K / n).
pub fn host_towards(tables: &GlobalTables, me: u32, to: u32, holder: u32) -> u32 {
    let client_of = |w: u32| {
        (0..tables.clients.len())
            .rfind(|&c| tables.first_rank(c) <= w)
            .unwrap_or(0)
    };
    let (mine, theirs) = (client_of(me), client_of(to));
    let k = tables.clients[theirs].hosts.len() as u64;
    let marked = tables.clients[theirs]
        .versions
        .iter()
        .any(|v| v.major == SOURCE_TRUNK_MAJOR && u64::from(v.minor) == k);
    let n = tables.clients[mine].procs.len() as u64;
    if !marked || n == 0 {
        return holder;
    }
    let index = u64::from(me - tables.first_rank(mine));
    tables.first_host(theirs) + (index * k / n) as u32
}

// The version entry (major "CXRS", minor K) that the relays of a cluster with K >= 2
// trunks add to their own client's list, outside and inside.
use crossmpi_impi::wire::tables::SURVIVAL_MAJOR;

/// The client whose relays may take over from each other when `host` is one of them, as
/// client `mine` sees it: every host of a marked client is one of its relays (seen from
/// outside), and when `mine` is marked every host of another client is one of its own
/// relays (seen from inside, a virtual host).
pub fn relay_client(tables: &GlobalTables, mine: usize, host: u32) -> Option<u32> {
    let client = (0..tables.clients.len()).rfind(|&c| tables.first_host(c) <= host)?;
    let marked = |c: usize| tables.clients[c].lists(SURVIVAL_MAJOR);
    (client != mine && (marked(client) || marked(mine))).then_some(client as u32)
}

/// Whether user data must cross in external32: unless every client is crossmpi with
/// this client's representation, or `CROSSMPI_IMPI_EXTERNAL32=always` asks for it.
pub fn external32_needed(tables: &GlobalTables, setting: &str) -> bool {
    setting == "always"
        || !tables
            .clients
            .iter()
            .all(|c| c.versions.contains(&CROSSMPI_VERSION))
}

/// The job's identity, the same in every cluster: a hash of the pids of all its
/// processes in world order (each cluster has its own PMI key space, so that cannot name
/// an IMPI job; a relay shows each cluster other hosts, but the same processes). It
/// makes the processes of other clusters known to dynamic processes (`dynamic`), so
/// accept/connect inside one IMPI job keeps their IMPI route.
pub fn job_identity(tables: &GlobalTables) -> u64 {
    let mut text = format!("impi/{}", tables.clients.len());
    for c in &tables.clients {
        text.push('/');
        for p in &c.procs {
            text.push_str(&format!("{},", p.pid));
        }
    }
    crate::bootstrap::fnv1a(text.as_bytes())
}

/// Where this cluster joins: `CROSSMPI_IMPI_CLIENT` and `CROSSMPI_IMPI_SERVER`, which
/// `mpirun -client RANK ADDR:PORT` sets.
#[derive(Clone, Debug)]
pub struct JoinConfig {
    pub client: u32,
    pub server: String,
    /// Data bytes per packet this client accepts (`CROSSMPI_IMPI_DATALEN`).
    pub datalen: u32,
    /// Flow-control marks this client's hosts declare (`CROSSMPI_IMPI_ACKMARK`,
    /// `CROSSMPI_IMPI_HIWATER`).
    pub ackmark: u32,
    pub hiwater: u32,
    /// Data bytes this client's processes leave unacknowledged per process pair at most
    /// (`CROSSMPI_IMPI_WINDOW`).
    pub window_bytes: u32,
    /// How long to wait for the server and for every host connection.
    pub timeout: Duration,
    /// In a job that survives a relay's death, how long a stream may go without any of
    /// its kept packets confirmed before its receiver is asked for its count
    /// (`CROSSMPI_IMPI_RESEND_MS`).
    pub resend_period: Duration,
    /// How much each host connection holds ahead of the wire (`CROSSMPI_IMPI_WRITE_AHEAD`,
    /// `CROSSMPI_IMPI_UNSENT`), and its congestion control (`CROSSMPI_IMPI_TCP_CONGESTION`).
    pub sending: super::Sending,
}

impl JoinConfig {
    /// `None` when this is not an IMPI job.
    pub fn from_env(timeout: Duration) -> Result<Option<JoinConfig>, String> {
        let Ok(server) = std::env::var("CROSSMPI_IMPI_SERVER") else {
            return Ok(None);
        };
        let client = std::env::var("CROSSMPI_IMPI_CLIENT")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .ok_or("CROSSMPI_IMPI_SERVER is set but CROSSMPI_IMPI_CLIENT is not a client rank")?;
        let num = |name: &str, default: u32| -> Result<u32, String> {
            match std::env::var(name) {
                Err(_) => Ok(default),
                Ok(v) => v
                    .trim()
                    .parse()
                    .ok()
                    .filter(|&n: &u32| n > 0)
                    .ok_or(format!("{name}={v:?} is not a positive whole number")),
            }
        };
        let sending = super::Sending::default();
        Ok(Some(JoinConfig {
            client,
            server,
            datalen: num("CROSSMPI_IMPI_DATALEN", 64 * 1024)?,
            ackmark: num("CROSSMPI_IMPI_ACKMARK", 16)?,
            hiwater: num("CROSSMPI_IMPI_HIWATER", 4096)?,
            window_bytes: num("CROSSMPI_IMPI_WINDOW", 32 << 20)?,
            timeout,
            resend_period: Duration::from_millis(num("CROSSMPI_IMPI_RESEND_MS", 1000)?.into()),
            sending: super::Sending {
                write_ahead: num("CROSSMPI_IMPI_WRITE_AHEAD", sending.write_ahead as u32)? as usize,
                unsent: num("CROSSMPI_IMPI_UNSENT", sending.unsent)?,
                queue_budget: match std::env::var("CROSSMPI_IMPI_QUEUE_US") {
                    Err(_) => sending.queue_budget,
                    // 0 is allowed here: the minimums, never measured.
                    Ok(v) => Duration::from_micros(v.trim().parse().map_err(|_| {
                        format!(
                            "CROSSMPI_IMPI_QUEUE_US={v:?} is not a whole number of microseconds"
                        )
                    })?),
                },
                congestion: crossmpi_tcp::Congestion::from_var(
                    crossmpi_tcp::IMPI_CONGESTION_VAR,
                    std::env::var(crossmpi_tcp::IMPI_CONGESTION_VAR)
                        .ok()
                        .as_deref(),
                )?,
            },
        }))
    }
}

/// What a rank publishes about its IMPI host.
pub struct HostCard {
    pub addr: IpAddr,
    pub port: u16,
    pub pid: u32,
}

impl HostCard {
    pub fn encode(&self) -> String {
        format!("{}|{}|{}", self.addr, self.port, self.pid)
    }

    pub fn decode(s: &str) -> Option<HostCard> {
        let mut it = s.split('|');
        Some(HostCard {
            addr: it.next()?.parse().ok()?,
            port: it.next()?.parse().ok()?,
            pid: it.next()?.parse().ok()?,
        })
    }
}

/// The address other clusters reach this rank at: `IMPI_HOST_NAME` (LAM/MPI's override)
/// or `CROSSMPI_IMPI_ADDR` when set, else the first of `candidates`.
pub fn advertised_address(candidates: &[IpAddr]) -> Result<IpAddr, String> {
    for name in ["CROSSMPI_IMPI_ADDR", "IMPI_HOST_NAME"] {
        if let Ok(v) = std::env::var(name) {
            return v
                .trim()
                .parse()
                .map_err(|_| format!("{name}={v:?} is not an IP address"));
        }
    }
    candidates
        .first()
        .copied()
        .ok_or_else(|| "no network interface to publish for IMPI (set CROSSMPI_IMPI_ADDR)".into())
}

/// This cluster's contribution: one host per rank, one process per host.
pub fn client_info(cfg: &JoinConfig, cards: &[HostCard]) -> ClientInfo {
    ClientInfo {
        versions: vec![Version::default(), CROSSMPI_VERSION],
        datalen: cfg.datalen,
        tag_ub: i32::MAX,
        coll_xsize: -1,
        coll_maxlinear: -1,
        hosts: cards
            .iter()
            .map(|c| HostInfo {
                addr: HostAddr::from_ip(c.addr),
                port: c.port as u32,
                nprocs: 1,
                ackmark: cfg.ackmark,
                hiwater: cfg.hiwater.max(cfg.ackmark),
            })
            .collect(),
        procs: cards
            .iter()
            .map(|c| ProcInfo {
                id: HostAddr::from_ip(c.addr),
                pid: c.pid as i64,
            })
            .collect(),
    }
}

/// The agent's connection to the IMPI server after startup.
pub struct ServerLink {
    client: Client,
    sock: TcpStream,
    finishing: Arc<AtomicBool>,
    /// The connection closed early and the job went on (see `watch_server`).
    lost: Arc<AtomicBool>,
}

impl ServerLink {
    /// Sends FINI: every process of this cluster has finished.
    pub fn fini(mut self) -> Result<(), String> {
        self.finishing.store(true, Ordering::SeqCst);
        if self.lost.load(Ordering::SeqCst) {
            return Ok(());
        }
        self.client.finish().map_err(|e| e.to_string())?;
        self.sock
            .write_all(&self.client.take_output())
            .map_err(|e| format!("sending FINI to the IMPI server: {e}"))
    }
}

/// Runs the client startup with the server; returns the global tables and the link.
pub fn join_server(
    cfg: &JoinConfig,
    info: ClientInfo,
) -> Result<(GlobalTables, ServerLink), String> {
    let mut auth = ClientAuth::from_env().map_err(|e| e.to_string())?;
    if auth.mask() == 0 {
        // LAM/MPI insists on one of the variables; crossmpi offers NONE by default.
        auth.allow_none = true;
    }
    let mut client = Client::new(ClientConfig {
        rank: cfg.client,
        auth,
        info,
        pipeline: true,
        limits: Limits::from_env().map_err(|e| e.to_string())?,
    })
    .map_err(|e| e.to_string())?;
    let server = cfg.server.as_str();
    let addrs: Vec<SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(server)
        .map_err(|e| format!("IMPI server address {server:?}: {e}"))?
        .collect();
    let deadline = Instant::now() + cfg.timeout;
    let mut sock = loop {
        match addrs
            .iter()
            .find_map(|a| TcpStream::connect_timeout(a, Duration::from_secs(2)).ok())
        {
            Some(s) => break s,
            None if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(200)),
            None => {
                return Err(format!(
                    "cannot reach the IMPI server at {server} within {:?}",
                    cfg.timeout
                ))
            }
        }
    };
    sock.set_read_timeout(Some(Duration::from_millis(500)))
        .map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; 64 * 1024];
    while !client.is_ready() {
        let out = client.take_output();
        if !out.is_empty() {
            sock.write_all(&out)
                .map_err(|e| format!("writing to the IMPI server {server}: {e}"))?;
        }
        match sock.read(&mut buf) {
            Ok(0) => return Err(format!("IMPI server {server}: {}", client.handle_close())),
            Ok(n) => client
                .handle_input(&buf[..n])
                .map_err(|e| format!("IMPI server {server}: {e}"))?,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if Instant::now() > deadline {
                    return Err(format!(
                        "the IMPI server {server} did not complete startup within {:?} \
                         (a client has not joined?)",
                        cfg.timeout
                    ));
                }
            }
            Err(e) => return Err(format!("reading from the IMPI server {server}: {e}")),
        }
    }
    let tables = client
        .tables()
        .cloned()
        .ok_or("startup ended without tables")?;
    let finishing = Arc::new(AtomicBool::new(false));
    let lost = Arc::new(AtomicBool::new(false));
    // Behind relays that survive a trunk's death, the connection is trunk 0's.
    let may_lose = tables.survivable() && tables.clients[cfg.client as usize].lists(SURVIVAL_MAJOR);
    let watch = ServerWatch {
        server: server.to_string(),
        finishing: finishing.clone(),
        lost: may_lose.then(|| lost.clone()),
    };
    watch_server(&sock, watch)?;
    Ok((
        tables,
        ServerLink {
            client,
            sock,
            finishing,
            lost,
        },
    ))
}

/// What `watch_server` watches for.
struct ServerWatch {
    server: String,
    finishing: Arc<AtomicBool>,
    /// Set when this cluster is behind relays that survive a trunk's death: the
    /// connection is then trunk 0's, whose death the job survives (the IMPI server lets
    /// this client go), so an early close is recorded here instead of ending the job. A
    /// failure elsewhere still reaches this cluster through the host connections.
    lost: Option<Arc<AtomicBool>>,
}

/// Ends this cluster's job when the server closes the connection before this client
/// sent FINI: the server does so when another client failed or left early.
fn watch_server(sock: &TcpStream, watch: ServerWatch) -> Result<(), String> {
    let ServerWatch {
        server,
        finishing,
        lost,
    } = watch;
    let mut reader = sock.try_clone().map_err(|e| e.to_string())?;
    reader.set_read_timeout(None).map_err(|e| e.to_string())?;
    std::thread::Builder::new()
        .name("impi-server-watch".into())
        .spawn(move || {
            let mut b = [0u8; 256];
            loop {
                match reader.read(&mut b) {
                    Ok(n) if n > 0 => continue,
                    _ if finishing.load(Ordering::SeqCst) => return,
                    _ if lost.is_some() => {
                        crate::notice(&format!(
                            "the connection to the IMPI server through {server} (this \
                             cluster's relay trunk 0) closed; this cluster's relays survive a \
                             trunk's death, so the job goes on without it"
                        ));
                        if let Some(lost) = &lost {
                            lost.store(true, Ordering::SeqCst);
                        }
                        return;
                    }
                    _ => crate::fatal(&format!(
                        "the IMPI server {server} closed its connection before this cluster \
                         finished: another cluster failed or ended early (see its output and \
                         the server's)"
                    )),
                }
            }
        })
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The tables as text for PMI: the client count, then each label's reply data in hex.
pub fn tables_to_text(t: &GlobalTables) -> String {
    let mut s = t.clients.len().to_string();
    for label in Label::LAM_ORDER {
        s.push('/');
        for b in t.reply(label).data {
            s.push_str(&format!("{b:02x}"));
        }
    }
    s
}

pub fn tables_from_text(s: &str) -> Result<GlobalTables, String> {
    let mut parts = s.split('/');
    let n: u32 = parts
        .next()
        .and_then(|p| p.parse().ok())
        .ok_or("IMPI tables: no client count")?;
    let mut replies = BTreeMap::new();
    for label in Label::LAM_ORDER {
        let hex = parts.next().ok_or("IMPI tables: a label is missing")?;
        let data = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16))
            .collect::<Result<Vec<u8>, _>>()
            .map_err(|e| format!("IMPI tables: {e}"))?;
        replies.insert(
            label,
            CollReply {
                label,
                client_mask: crossmpi_impi::wire::tables::full_mask(n),
                data,
            },
        );
    }
    GlobalTables::decode(n, &replies).map_err(|e| e.to_string())
}

/// Connects this rank (global host `me`) with every host of the other clients.
pub fn connect_hosts(
    listener: &TcpListener,
    tables: &GlobalTables,
    my_client: usize,
    me: u32,
    timeout: Duration,
) -> Result<Vec<HostLink>, String> {
    let hosts: Vec<(u32, SocketAddr)> = tables
        .hosts()
        .enumerate()
        .filter(|(_, (c, _))| *c != my_client)
        .map(|(h, (_, info))| {
            (
                h as u32,
                SocketAddr::new(info.addr.to_ip(), info.port as u16),
            )
        })
        .collect();
    let mut links = Vec::with_capacity(hosts.len());
    for &(h, addr) in hosts.iter().filter(|(h, _)| *h < me) {
        let mut sock = TcpStream::connect_timeout(&addr, timeout)
            .map_err(|e| format!("cannot connect to IMPI host {h} at {addr}: {e}"))?;
        sock.write_all(&HostHandshake { host_rank: me }.emit())
            .map_err(|e| format!("IMPI host {h} at {addr}: {e}"))?;
        links.push(HostLink::new(h, addr, sock).map_err(|e| e.to_string())?);
    }
    let higher = hosts.iter().filter(|(h, _)| *h > me).count();
    listener.set_nonblocking(false).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + timeout;
    let nhosts = tables.nhosts();
    let mut accepted = 0;
    while accepted < higher {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!(
                "{} of {higher} higher-ranked IMPI hosts did not connect within {timeout:?}",
                higher - accepted
            ));
        }
        let (mut sock, from) = accept_within(listener, left)?;
        sock.set_read_timeout(Some(left.max(Duration::from_millis(10))))
            .map_err(|e| e.to_string())?;
        let mut b = [0u8; 4];
        let host = match sock.read_exact(&mut b) {
            Ok(()) => HostHandshake::decode(&b, nhosts, me).ok().flatten(),
            Err(_) => None,
        };
        let known = host.and_then(|hs| hosts.iter().find(|(h, _)| *h == hs.host_rank && *h > me));
        match known {
            Some(&(h, addr)) if !links.iter().any(|l: &HostLink| l.host == h) => {
                sock.set_read_timeout(None).map_err(|e| e.to_string())?;
                links.push(HostLink::new(h, addr, sock).map_err(|e| e.to_string())?);
                accepted += 1;
            }
            _ => crate::say!(
                "crossmpi: IMPI host {me}: refused a connection from {from} (handshake {b:02x?} \
                 names no higher-ranked host of another client that is not yet connected)"
            ),
        }
    }
    links.sort_by_key(|l| l.host);
    Ok(links)
}

fn accept_within(
    listener: &TcpListener,
    left: Duration,
) -> Result<(TcpStream, SocketAddr), String> {
    let mut pfd = libc::pollfd {
        fd: std::os::fd::AsRawFd::as_raw_fd(listener),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, as passed.
    let ready = unsafe { libc::poll(&mut pfd, 1, left.as_millis().min(i32::MAX as u128) as i32) };
    if ready <= 0 {
        return Err(format!("no IMPI host connected within {left:?}"));
    }
    listener.accept().map_err(|e| format!("accept: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> JoinConfig {
        JoinConfig {
            client: 0,
            server: "127.0.0.1:1".into(),
            datalen: 1000,
            ackmark: 4,
            hiwater: 8,
            window_bytes: 1 << 20,
            timeout: Duration::from_secs(1),
            resend_period: Duration::from_secs(1),
            sending: crate::route::impi::Sending::default(),
        }
    }

    #[test]
    fn tables_survive_the_trip_through_pmi_text() {
        let cards = [
            HostCard {
                addr: "10.0.0.1".parse().unwrap(),
                port: 5000,
                pid: 11,
            },
            HostCard {
                addr: "10.0.0.2".parse().unwrap(),
                port: 5001,
                pid: 12,
            },
        ];
        let a = client_info(&cfg(), &cards);
        let other = [HostCard {
            addr: "10.0.1.1".parse().unwrap(),
            port: 5000,
            pid: 11,
        }];
        let mut b = client_info(&cfg(), &other);
        b.datalen = 500;
        let t = GlobalTables {
            clients: vec![a, b],
        };
        let back = tables_from_text(&tables_to_text(&t)).unwrap();
        assert_eq!(back, t);
        assert_eq!(
            (back.nprocs(), back.nhosts(), back.max_data_len()),
            (3, 3, 500)
        );
        assert!(back.clients[1].versions.contains(&CROSSMPI_VERSION));
        assert!(back.all_crossmpi());
        assert!(!external32_needed(&back, "auto"));
        assert!(external32_needed(&back, "always"));
        let mut foreign = back.clone();
        foreign.clients[1].versions = vec![Version::default()];
        assert!(!foreign.all_crossmpi());
        assert!(external32_needed(&foreign, "auto"));
        let mut other_rep = back;
        other_rep.clients[1].versions[1].minor += 1;
        assert!(other_rep.all_crossmpi());
        assert!(external32_needed(&other_rep, "auto"));
        assert!(tables_from_text("2/zz").is_err());
        assert!(tables_from_text("x").is_err());
    }

    #[test]
    fn source_trunking_sends_through_the_own_relay() {
        let card = |h: u8| HostCard {
            addr: std::net::IpAddr::from([10, 0, 0, h]),
            port: 5000,
            pid: 11,
        };
        // Client 0: five ranks, one per host. Client 1: two virtual hosts (relays).
        let mine = client_info(&cfg(), &(1..=5).map(card).collect::<Vec<_>>());
        let mut relays = client_info(&cfg(), &[card(9), card(9), card(9)]);
        relays.hosts.truncate(2);
        relays.hosts[1].nprocs = 2;
        let mut t = GlobalTables {
            clients: vec![mine, relays],
        };
        // Unmarked: the host holding the destination.
        assert_eq!(host_towards(&t, 0, 7, 6), 6);
        t.clients[1].versions.push(Version {
            major: SOURCE_TRUNK_MAJOR,
            minor: 2,
        });
        // Ranks 0-2 on trunk 0 (host 5), 3-4 on trunk 1 (host 6), whatever the holder.
        let hosts: Vec<u32> = (0..5).map(|me| host_towards(&t, me, 5, 5)).collect();
        assert_eq!(hosts, [5, 5, 5, 6, 6]);
        assert_eq!(host_towards(&t, 1, 7, 6), 5);
        // The relay's ranks send to client 0 as usual; a mark whose K is not the host
        // count is ignored.
        assert_eq!(host_towards(&t, 6, 2, 2), 2);
        t.clients[1].versions.last_mut().unwrap().minor = 3;
        assert_eq!(host_towards(&t, 4, 5, 5), 5);
    }

    #[test]
    fn every_cluster_sees_the_same_job_identity() {
        let card = |h: u8, pid| HostCard {
            addr: std::net::IpAddr::from([10, 0, 0, h]),
            port: 5000,
            pid,
        };
        let t = GlobalTables {
            clients: vec![
                client_info(&cfg(), &[card(1, 11), card(2, 12)]),
                client_info(&cfg(), &[card(3, 11), card(4, 13)]),
            ],
        };
        let id = job_identity(&t);
        // A cluster behind a relay sees the other client's processes on other hosts.
        let mut through_relay = t.clone();
        through_relay.clients[1] = client_info(&cfg(), &[card(9, 11), card(9, 13)]);
        through_relay.clients[1].hosts.truncate(1);
        assert_eq!(job_identity(&through_relay), id);
        // Other processes, or the same ones split otherwise, are another job.
        let mut other = t.clone();
        other.clients[1].procs[1].pid = 14;
        assert_ne!(job_identity(&other), id);
        let mut split = t;
        let moved = split.clients[0].procs.pop().unwrap();
        split.clients[1].procs.insert(0, moved);
        assert_ne!(job_identity(&split), id);
    }

    #[test]
    fn host_cards_round_trip() {
        let c = HostCard {
            addr: "192.168.7.1".parse().unwrap(),
            port: 9,
            pid: 77,
        };
        let d = HostCard::decode(&c.encode()).unwrap();
        assert_eq!((d.addr, d.port, d.pid), (c.addr, c.port, c.pid));
        assert!(HostCard::decode("1.2.3.4|x|1").is_none());
    }

    #[test]
    fn hosts_of_two_clients_connect_each_pair_once() {
        // Two clients of one host each, on loopback: host 1 connects to host 0.
        let l0 = TcpListener::bind("127.0.0.1:0").unwrap();
        let l1 = TcpListener::bind("127.0.0.1:0").unwrap();
        let card = |l: &TcpListener, pid| HostCard {
            addr: "127.0.0.1".parse().unwrap(),
            port: l.local_addr().unwrap().port(),
            pid,
        };
        let t = GlobalTables {
            clients: vec![
                client_info(&cfg(), &[card(&l0, 1)]),
                client_info(&cfg(), &[card(&l1, 2)]),
            ],
        };
        let t1 = t.clone();
        let h1 = std::thread::spawn(move || connect_hosts(&l1, &t1, 1, 1, Duration::from_secs(5)));
        let links0 = connect_hosts(&l0, &t, 0, 0, Duration::from_secs(5)).unwrap();
        let links1 = h1.join().unwrap().unwrap();
        assert_eq!(links0.iter().map(|l| l.host).collect::<Vec<_>>(), vec![1]);
        assert_eq!(links1.iter().map(|l| l.host).collect::<Vec<_>>(), vec![0]);
    }
}
