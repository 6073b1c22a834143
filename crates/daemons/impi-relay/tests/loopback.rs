//! Whole jobs through relays on 127.0.0.1: the real IMPI server, relays, and simulated
//! clusters (the client state machine of crossmpi-impi as the agent, one thread per host
//! connection) that run the host dance on the tables they got and send every remote
//! process a DATA packet whose fields and data the receiver checks.
//!
//! Every cluster uses 127.0.0.1 and the same pids, so process identities collide and the
//! relays must rename them consistently in the tables and in every packet.

use crossmpi_impi::startup::client::{Client, ClientAuth, ClientConfig};
use crossmpi_impi::startup::server::ServerAuth;
use crossmpi_impi::wire::addr::HostAddr;
use crossmpi_impi::wire::handshake::HostHandshake;
use crossmpi_impi::wire::packet::{PacketHeader, PacketRepr, PacketType, Proc, HEADER_LEN};
use crossmpi_impi::wire::tables::{ClientInfo, GlobalTables, HostInfo, ProcInfo, Version};
use crossmpi_impi::wire::Limits;
use crossmpi_impi_relay::io;
use crossmpi_impi_relay::options::Options;
use crossmpi_impi_relay::router::RouterConfig;
use crossmpi_impi_server::options::Options as ServerOptions;
use crossmpi_impi_server::serve;
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::Duration;

const LO: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
const TIMEOUT: Duration = Duration::from_secs(60);
const CID: u64 = 7;

fn start_server(n: u32) -> (SocketAddr, JoinHandle<Result<(), String>>) {
    let opts = ServerOptions {
        nclients: n,
        port: 0,
        auth: ServerAuth::None,
        host: Some(LO),
        timeout: TIMEOUT,
        verbose: false,
        limits: Limits::default(),
    };
    let l = serve::bind(&opts).unwrap();
    let addr = serve::advertised(&l).unwrap();
    (addr, std::thread::spawn(move || serve::serve(l, &opts)))
}

fn start_relay(
    rank: u32,
    server: SocketAddr,
    send_buffer: usize,
) -> (SocketAddr, JoinHandle<Result<(), String>>) {
    let opts = Options {
        rank,
        server: server.to_string(),
        net: Some(LO),
        port: 0,
        global_addr: None,
        verbose: std::env::var_os("RELAY_TEST_VERBOSE").is_some(),
        connect_timeout: Duration::from_secs(10),
        router: RouterConfig {
            send_buffer,
            ..RouterConfig::default()
        },
        limits: Limits::default(),
    };
    let (l, shown) = io::bind(&opts).unwrap();
    assert_eq!(shown.ip(), LO, "the address -net names is printed");
    (
        shown,
        std::thread::spawn(move || io::run(l, shown.ip(), &opts)),
    )
}

/// A simulated cluster: `nhosts` hosts of one process each, pids 100, 101, ...
struct Cluster {
    rank: u32,
    listeners: Vec<TcpListener>,
    lockstep: bool,
    /// Extra data bytes in every packet (long packets stream through the relays).
    extra: usize,
}

impl Cluster {
    fn new(rank: u32, nhosts: usize, lockstep: bool, extra: usize) -> Cluster {
        Cluster {
            rank,
            listeners: (0..nhosts)
                .map(|_| TcpListener::bind((LO, 0)).unwrap())
                .collect(),
            lockstep,
            extra,
        }
    }

    fn info(&self) -> ClientInfo {
        let addr = HostAddr::from_ip(LO);
        ClientInfo {
            versions: vec![Version::default()],
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
                    pid: 100 + h as i64,
                })
                .collect(),
        }
    }
}

fn payload(s: u32, d: u32, extra: usize) -> Vec<u8> {
    let len = (s as usize * 7 + d as usize * 13) % 300 + extra;
    (0..len)
        .map(|i| (i as u32 ^ (s << 3) ^ (d << 5)) as u8)
        .collect()
}

fn packet(src: Proc, dest: Proc, s: u32, d: u32, len: usize) -> PacketRepr {
    PacketRepr {
        ty: PacketType::Data,
        data_len: len as u32,
        src,
        dest,
        srqid: u64::from(s) << 32 | u64::from(d),
        drqid: 0,
        msglen: len as u64,
        lsrank: s as i32,
        tag: (s * 100 + d) as i32,
        cid: CID,
        seqnum: u64::from(d) + 1000,
        count: 0,
        dtype: 0,
        reserved: 0,
    }
}

fn fini() -> [u8; HEADER_LEN] {
    PacketRepr::control(PacketType::Fini, Proc::FINI, Proc::FINI).emit()
}

/// The startup through `addr` (the server or a relay); returns the tables and the
/// agent's connection and state machine.
fn startup(c: &Cluster, addr: SocketAddr) -> Result<(GlobalTables, Client, TcpStream), String> {
    let mut client = Client::new(ClientConfig {
        rank: c.rank,
        auth: ClientAuth {
            allow_none: true,
            key: None,
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

/// One connection of a host: sends its packets then FINI, and reads until FINI.
/// Returns the (source, destination) world ranks of the packets it received.
fn converse(
    mut sock: TcpStream,
    tables: &GlobalTables,
    me: u32,
    sends: Vec<(u32, u32)>,
    extra: usize,
) -> Result<Vec<(u32, u32)>, String> {
    let procs: Vec<Proc> = tables
        .procs()
        .map(|p| Proc {
            hostid: p.id,
            pid: p.pid,
        })
        .collect();
    let mut w = sock.try_clone().unwrap();
    let out: Vec<(PacketRepr, Vec<u8>)> = sends
        .iter()
        .map(|&(s, d)| {
            let data = payload(s, d, extra);
            (
                packet(procs[s as usize], procs[d as usize], s, d, data.len()),
                data,
            )
        })
        .collect();
    let writer = std::thread::spawn(move || -> std::io::Result<()> {
        for (p, data) in out {
            w.write_all(&p.emit())?;
            w.write_all(&data)?;
        }
        w.write_all(&fini())
    });
    sock.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut got = Vec::new();
    loop {
        let mut h = [0u8; HEADER_LEN];
        sock.read_exact(&mut h)
            .map_err(|e| format!("host {me}: reading a header: {e}"))?;
        let p = PacketRepr::parse(&PacketHeader::new_checked(&h[..]).unwrap(), 8 << 20)
            .map_err(|e| e.to_string())?;
        if p.ty == PacketType::Fini {
            break;
        }
        let mut data = vec![0u8; p.data_len as usize];
        sock.read_exact(&mut data).map_err(|e| e.to_string())?;
        let s = procs
            .iter()
            .position(|q| *q == p.src)
            .ok_or(format!("host {me}: unknown pk_src {:?}", p.src))? as u32;
        let d = procs
            .iter()
            .position(|q| *q == p.dest)
            .ok_or("unknown pk_dest")? as u32;
        let want = packet(procs[s as usize], procs[d as usize], s, d, data.len());
        if d != me || p != want || data != payload(s, d, extra) {
            return Err(format!("host {me}: packet {s}->{d} arrived altered: {p:?}"));
        }
        got.push((s, d));
    }
    writer.join().unwrap().map_err(|e| e.to_string())?;
    Ok(got)
}

/// Runs a cluster through startup, the host dance, the traffic and FINI.
fn run_cluster(c: Cluster, addr: SocketAddr) -> Result<(), String> {
    let (tables, mut client, mut agent) = startup(&c, addr)?;
    let my = c.rank as usize;
    let first_host = tables.first_host(my);
    let first_rank = tables.first_rank(my);
    let remote_hosts: Vec<(u32, SocketAddr)> = tables
        .hosts()
        .enumerate()
        .filter(|(_, (client, _))| *client != my)
        .map(|(h, (_, i))| (h as u32, SocketAddr::new(i.addr.to_ip(), i.port as u16)))
        .collect();
    // World ranks per global host.
    let mut ranks_of_host = Vec::new();
    let mut w = 0u32;
    for (_, h) in tables.hosts() {
        ranks_of_host.push(w..w + h.nprocs);
        w += h.nprocs;
    }
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
    let mut threads = Vec::new();
    for (k, h, s) in conns {
        let me = first_rank + k as u32;
        let sends = ranks_of_host[h as usize].clone().map(|d| (me, d)).collect();
        let t = tables.clone();
        let extra = c.extra;
        threads.push(std::thread::spawn(move || {
            converse(s, &t, me, sends, extra)
        }));
    }
    let mut got = BTreeSet::new();
    for t in threads {
        for pair in t.join().unwrap()? {
            if !got.insert(pair) {
                return Err(format!("{pair:?} arrived twice"));
            }
        }
    }
    let mine = first_rank..first_rank + c.listeners.len() as u32;
    let want: BTreeSet<(u32, u32)> = (0..tables.nprocs())
        .filter(|s| !mine.contains(s))
        .flat_map(|s| mine.clone().map(move |d| (s, d)))
        .collect();
    if got != want {
        return Err(format!("client {my}: received {got:?}, expected {want:?}"));
    }
    client.finish().unwrap();
    agent
        .write_all(&client.take_output())
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// One job: clients with the given host counts, each reached directly or through a
/// relay of its own. Returns every party's outcome.
fn job(clusters: &[(usize, bool)], extra: usize, send_buffer: usize) {
    let (server, server_thread) = start_server(clusters.len() as u32);
    let mut relays = Vec::new();
    let mut threads = Vec::new();
    for (rank, &(nhosts, relayed)) in clusters.iter().enumerate() {
        let rank = rank as u32;
        let addr = if relayed {
            let (addr, t) = start_relay(rank, server, send_buffer);
            relays.push(t);
            addr
        } else {
            server
        };
        let c = Cluster::new(rank, nhosts, rank % 2 == 1, extra);
        threads.push(std::thread::spawn(move || run_cluster(c, addr)));
    }
    for (i, t) in threads.into_iter().enumerate() {
        t.join()
            .unwrap()
            .unwrap_or_else(|e| panic!("client {i}: {e}"));
    }
    for t in relays {
        t.join().unwrap().unwrap();
    }
    server_thread.join().unwrap().unwrap();
}

#[test]
fn private_cluster_with_a_global_one() {
    job(&[(2, false), (3, true)], 0, 256 << 10);
}

#[test]
fn private_cluster_ranked_first_and_lockstep_agent() {
    job(&[(3, true), (2, false)], 0, 256 << 10);
}

#[test]
fn two_private_clusters_and_a_global_one_between() {
    job(&[(2, true), (1, false), (2, true)], 0, 256 << 10);
}

#[test]
fn long_packets_stream_through_small_buffers() {
    // 1 MiB packets through 4 KiB relay buffers: forwarded as they arrive.
    job(&[(2, true), (2, true)], 1 << 20, 4096);
}

#[test]
fn a_stray_connection_is_refused_and_the_job_goes_on() {
    let (server, server_thread) = start_server(2);
    let (relay_addr, relay) = start_relay(1, server, 1 << 16);
    // Garbage to the agent's port: dropped, the real agent still gets in.
    let mut stray = TcpStream::connect(relay_addr).unwrap();
    stray.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let mut b = [0u8; 1];
    stray.set_read_timeout(Some(TIMEOUT)).unwrap();
    assert_eq!(stray.read(&mut b).unwrap_or(0), 0, "the stray is closed");
    let a = std::thread::spawn(move || run_cluster(Cluster::new(0, 1, false, 0), server));
    let c = std::thread::spawn(move || run_cluster(Cluster::new(1, 2, false, 0), relay_addr));
    a.join().unwrap().unwrap();
    c.join().unwrap().unwrap();
    relay.join().unwrap().unwrap();
    server_thread.join().unwrap().unwrap();
}

#[test]
fn a_malformed_packet_ends_the_job_with_the_reason() {
    let (server, server_thread) = start_server(2);
    let (relay_addr, relay) = start_relay(1, server, 1 << 16);
    // Client 0 is driven by hand: it sends a packet of unknown type to the relay.
    let gc = Cluster::new(0, 1, false, 0);
    let inside = std::thread::spawn(move || run_cluster(Cluster::new(1, 1, false, 0), relay_addr));
    let (tables, _client, _agent) = startup(&gc, server).unwrap();
    let (mut s, _) = gc.listeners[0].accept().unwrap();
    let mut b = [0u8; 4];
    s.read_exact(&mut b).unwrap();
    assert_eq!(u32::from_be_bytes(b), 1, "the relay is host 1 outside");
    let procs: Vec<Proc> = tables
        .procs()
        .map(|p| Proc {
            hostid: p.id,
            pid: p.pid,
        })
        .collect();
    let mut bad = packet(procs[0], procs[1], 0, 1, 0).emit();
    bad[3] = 9;
    s.write_all(&bad).unwrap();
    let e = relay.join().unwrap().unwrap_err();
    assert!(
        e.contains("outside IMPI host 0") && e.contains("pk_type 9"),
        "{e}"
    );
    assert!(
        inside.join().unwrap().is_err(),
        "the inside cluster sees the relay go"
    );
    drop(s);
    assert!(
        server_thread.join().unwrap().is_err(),
        "the server sees client 1 leave"
    );
}
