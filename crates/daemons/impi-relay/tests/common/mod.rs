//! What the loopback tests and the hop-latency benchmark share: the real IMPI server and
//! relays on 127.0.0.1, and simulated clusters (the client state machine of
//! crossmpi-impi as the agent) that run the startup and the host dance.

use crossmpi_impi::startup::client::{Client, ClientAuth, ClientConfig};
use crossmpi_impi::startup::server::ServerAuth;
use crossmpi_impi::wire::addr::HostAddr;
use crossmpi_impi::wire::handshake::HostHandshake;
use crossmpi_impi::wire::packet::{PacketRepr, PacketType, Proc, HEADER_LEN};
use crossmpi_impi::wire::tables::{ClientInfo, GlobalTables, HostInfo, ProcInfo, Version};
use crossmpi_impi::wire::Limits;
use crossmpi_impi_relay::io;
use crossmpi_impi_relay::options::Options;
use crossmpi_impi_relay::router::RouterConfig;
use crossmpi_impi_relay::trunk::TrunkMode;
use crossmpi_impi_server::options::Options as ServerOptions;
use crossmpi_impi_server::serve;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::Duration;

pub const LO: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
pub const TIMEOUT: Duration = Duration::from_secs(60);

pub fn start_server(n: u32) -> (SocketAddr, JoinHandle<Result<(), String>>) {
    start_keyed_server(n, None)
}

/// An IMPI server; with `key`, clients must authenticate with it (`-auth key`).
pub fn start_keyed_server(
    n: u32,
    key: Option<u64>,
) -> (SocketAddr, JoinHandle<Result<(), String>>) {
    let opts = ServerOptions {
        nclients: n,
        port: 0,
        auth: key.map_or(ServerAuth::None, ServerAuth::Key),
        host: Some(LO),
        timeout: TIMEOUT,
        verbose: false,
        limits: Limits::default(),
    };
    let l = serve::bind(&opts).unwrap();
    let addr = serve::advertised(&l).unwrap();
    (addr, std::thread::spawn(move || serve::serve(l, &opts)))
}

fn relay_options(rank: u32, server: SocketAddr, send_buffer: usize) -> Options {
    Options {
        rank,
        server: server.to_string(),
        ntrunks: 1,
        trunk: 0,
        trunk_mode: TrunkMode::Destination,
        join: None,
        trunk_timeout: Duration::from_secs(20),
        net: Some(LO),
        port: 0,
        global_addr: None,
        verbose: std::env::var_os("RELAY_TEST_VERBOSE").is_some(),
        encrypt: false,
        key: None,
        survive: crossmpi_impi_relay::survive::DEFAULT_SURVIVE,
        splice: std::env::var("CROSSMPI_RELAY_SPLICE")
            .map_or(crossmpi_impi_relay::options::DEFAULT_SPLICE, |v| v == "1"),
        connect_timeout: Duration::from_secs(10),
        spin: Duration::from_micros(
            std::env::var("CROSSMPI_RELAY_SPIN_US")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(crossmpi_impi_relay::options::DEFAULT_SPIN_US),
        ),
        congestion: crossmpi_tcp::Congestion::default(),
        router: RouterConfig {
            send_buffer,
            ..RouterConfig::default()
        },
        limits: Limits::default(),
    }
}

pub fn start_relay(
    rank: u32,
    server: SocketAddr,
    send_buffer: usize,
) -> (SocketAddr, JoinHandle<Result<(), String>>) {
    let (addr, mut threads) = start_trunks(rank, server, 1, TrunkMode::Destination, send_buffer);
    (addr, threads.remove(0))
}

/// The `ntrunks` relays of client `rank`: trunk 0 (whose agent address is returned)
/// and trunks 1.. joining it.
pub fn start_trunks(
    rank: u32,
    server: SocketAddr,
    ntrunks: u32,
    trunk_mode: TrunkMode,
    send_buffer: usize,
) -> (SocketAddr, Vec<JoinHandle<Result<(), String>>>) {
    start_encrypted_trunks(rank, server, ntrunks, trunk_mode, send_buffer, None, None)
}

/// As [`start_trunks`]; with `key`, every relay has it as IMPI_AUTH_KEY and trunk 0
/// has -encrypt; `splice` overrides CROSSMPI_RELAY_SPLICE.
pub fn start_encrypted_trunks(
    rank: u32,
    server: SocketAddr,
    ntrunks: u32,
    trunk_mode: TrunkMode,
    send_buffer: usize,
    key: Option<u64>,
    splice: Option<bool>,
) -> (SocketAddr, Vec<JoinHandle<Result<(), String>>>) {
    let relay_options = |rank, server, send_buffer| {
        let o = relay_options(rank, server, send_buffer);
        Options {
            key,
            splice: splice.unwrap_or(o.splice),
            ..o
        }
    };
    let opts = Options {
        ntrunks,
        trunk_mode,
        encrypt: key.is_some(),
        ..relay_options(rank, server, send_buffer)
    };
    let (l, shown) = io::bind(&opts).unwrap();
    assert_eq!(shown.ip(), LO, "the address -net names is printed");
    let mut threads = vec![std::thread::spawn(move || io::run(l, shown.ip(), &opts))];
    for trunk in 1..ntrunks {
        let opts = Options {
            rank: 0,
            server: String::new(),
            ntrunks: 0,
            trunk,
            join: Some(shown.to_string()),
            ..relay_options(rank, server, send_buffer)
        };
        threads.push(std::thread::spawn(move || io::run_member(&opts)));
    }
    (shown, threads)
}

/// A simulated cluster: `nhosts` hosts of one process each, pids 100, 101, ...
pub struct Cluster {
    pub rank: u32,
    pub listeners: Vec<TcpListener>,
    pub lockstep: bool,
    /// The pid of the first host's process (the others follow); the same in every
    /// cluster unless changed, so identities collide and relays must rename them.
    pub first_pid: i64,
    /// The key the agent authenticates with (IMPI_AUTH_KEY), if any.
    pub key: Option<u64>,
    /// Version entries appended to the cluster's list (e.g. an encrypting relay's mark).
    pub marks: Vec<Version>,
}

impl Cluster {
    pub fn new(rank: u32, nhosts: usize, lockstep: bool) -> Cluster {
        Cluster {
            rank,
            listeners: (0..nhosts)
                .map(|_| TcpListener::bind((LO, 0)).unwrap())
                .collect(),
            lockstep,
            first_pid: 100,
            key: None,
            marks: Vec::new(),
        }
    }

    pub fn info(&self) -> ClientInfo {
        let addr = HostAddr::from_ip(LO);
        ClientInfo {
            // crossmpi's version entry: the relays' source mode asks for crossmpi inside
            // (the simulated hosts then send as crossmpi does, see `sends`).
            versions: [
                Version::default(),
                Version {
                    major: 0x4358_4d50,
                    minor: 17,
                },
            ]
            .into_iter()
            .chain(self.marks.iter().copied())
            .collect(),
            datalen: 4 << 20,
            tag_ub: i32::MAX,
            coll_xsize: -1,
            coll_maxlinear: -1,
            hosts: self
                .listeners
                .iter()
                .enumerate()
                .map(|(h, l)| HostInfo {
                    addr,
                    port: u32::from(l.local_addr().unwrap().port()),
                    nprocs: 1,
                    ackmark: 10 + h as u32,
                    hiwater: 20,
                })
                .collect(),
            procs: (0..self.listeners.len())
                .map(|h| ProcInfo {
                    id: addr,
                    pid: self.first_pid + h as i64,
                })
                .collect(),
        }
    }
}

pub fn fini() -> [u8; HEADER_LEN] {
    PacketRepr::control(PacketType::Fini, Proc::FINI, Proc::FINI).emit()
}

/// The startup through `addr` (the server or a relay); returns the tables and the
/// agent's connection and state machine.
pub fn startup(c: &Cluster, addr: SocketAddr) -> Result<(GlobalTables, Client, TcpStream), String> {
    let mut client = Client::new(ClientConfig {
        rank: c.rank,
        auth: ClientAuth {
            allow_none: true,
            key: c.key,
        },
        info: c.info(),
        pipeline: !c.lockstep,
        limits: Limits::default(),
    })
    .map_err(|e| e.to_string())?;
    let mut s = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut buf = vec![0u8; 1 << 16];
    while !client.is_ready() {
        s.write_all(&client.take_output())
            .map_err(|e| e.to_string())?;
        let n = s.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err(client.handle_close().to_string());
        }
        client.handle_input(&buf[..n]).map_err(|e| e.to_string())?;
    }
    Ok((client.tables().cloned().unwrap(), client, s))
}

/// The host dance of a cluster on the tables it got: every host connects to the
/// lower-ranked hosts of other clients (sending its rank), then accepts the higher ones.
/// Returns (own host index, peer's global host rank, connection).
pub fn dance(c: &Cluster, tables: &GlobalTables) -> Result<Vec<(usize, u32, TcpStream)>, String> {
    let my = c.rank as usize;
    let first_host = tables.first_host(my);
    let remote_hosts: Vec<(u32, SocketAddr)> = tables
        .hosts()
        .enumerate()
        .filter(|(_, (client, _))| *client != my)
        .map(|(h, (_, i))| (h as u32, SocketAddr::new(i.addr.to_ip(), i.port as u16)))
        .collect();
    let mut conns = Vec::new();
    for (k, _) in c.listeners.iter().enumerate() {
        let me = first_host + k as u32;
        for &(h, a) in remote_hosts.iter().filter(|(h, _)| *h < me) {
            let mut s = TcpStream::connect(a).map_err(|e| e.to_string())?;
            s.write_all(&HostHandshake { host_rank: me }.emit())
                .unwrap();
            conns.push((k, h, s));
        }
    }
    for (k, l) in c.listeners.iter().enumerate() {
        let me = first_host + k as u32;
        for _ in remote_hosts.iter().filter(|(h, _)| *h > me) {
            let (mut s, _) = l.accept().map_err(|e| e.to_string())?;
            let mut b = [0u8; 4];
            s.read_exact(&mut b).map_err(|e| e.to_string())?;
            let hs = HostHandshake::decode(&b, tables.nhosts(), me)
                .map_err(|e| e.to_string())?
                .unwrap();
            conns.push((k, hs.host_rank, s));
        }
    }
    Ok(conns)
}

/// A job of two clients of one host each, for the benchmarks: client c's `host` runs
/// in a thread against the IMPI server (which asks for `key` if given) or, when
/// `relayed[c]`, against the relays `start(c, server)` starts. Returns each client's result once every party finished
/// (panicking, naming the client, if one failed).
#[allow(dead_code)] // the benchmarks in examples/ use it, the tests do not
pub fn two_client_job<T: Send + 'static>(
    relayed: [bool; 2],
    key: Option<u64>,
    start: impl Fn(u32, SocketAddr) -> (SocketAddr, Vec<JoinHandle<Result<(), String>>>),
    host: impl Fn(u32, SocketAddr) -> JoinHandle<Result<T, String>>,
) -> Vec<T> {
    let (server, server_thread) = start_keyed_server(2, key);
    let mut relays = Vec::new();
    let mut hosts = Vec::new();
    for (rank, &r) in relayed.iter().enumerate() {
        let rank = rank as u32;
        let addr = if r {
            let (a, t) = start(rank, server);
            relays.extend(t);
            a
        } else {
            server
        };
        hosts.push(host(rank, addr));
    }
    let results = hosts
        .into_iter()
        .enumerate()
        .map(|(rank, h)| {
            h.join()
                .unwrap()
                .unwrap_or_else(|e| panic!("client {rank}: {e}"))
        })
        .collect();
    for r in relays {
        r.join().unwrap().unwrap();
    }
    server_thread.join().unwrap().unwrap();
    results
}

/// The end of a benchmark host's conversation on `sock`: FINI out, packets read until
/// the peer's FINI, then the agent's FINI to the server.
#[allow(dead_code)] // the benchmarks in examples/ use it, the tests do not
pub fn end_host(
    sock: &mut TcpStream,
    client: &mut Client,
    agent: &mut TcpStream,
) -> Result<(), String> {
    let mut header = [0u8; HEADER_LEN];
    sock.write_all(&fini()).map_err(|e| e.to_string())?;
    loop {
        sock.read_exact(&mut header).map_err(|e| e.to_string())?;
        if header[..4] == fini()[..4] {
            break;
        }
    }
    client.finish().map_err(|e| e.to_string())?;
    agent
        .write_all(&client.take_output())
        .map_err(|e| e.to_string())
}
