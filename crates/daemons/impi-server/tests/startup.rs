//! The IMPI server over real TCP on 127.0.0.1, with simulated clients: the client state
//! machine of crossmpi-impi, and a raw client that replays LAM/MPI's exact byte sequence.

use crossmpi_impi::startup::client::{Client, ClientAuth, ClientConfig};
use crossmpi_impi::startup::server::ServerAuth;
use crossmpi_impi::wire::addr::HostAddr;
use crossmpi_impi::wire::label::Label;
use crossmpi_impi::wire::startup::{AuthReply, ClientMessage, CollReply, ServerMessage};
use crossmpi_impi::wire::tables::{ClientInfo, GlobalTables, HostInfo, ProcInfo, Version};
use crossmpi_impi::wire::Limits;
use crossmpi_impi_server::options::Options;
use crossmpi_impi_server::serve;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::thread::JoinHandle;
use std::time::Duration;

const IO_TIMEOUT: Duration = Duration::from_secs(30);

fn options(n: u32, auth: ServerAuth, timeout: Duration) -> Options {
    Options {
        nclients: n,
        port: 0,
        auth,
        host: Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        timeout,
        verbose: false,
        limits: Limits::default(),
    }
}

fn start_server(opts: Options) -> (SocketAddr, JoinHandle<Result<(), String>>) {
    let listener = serve::bind(&opts).unwrap();
    let addr = serve::advertised(&listener).unwrap();
    (
        addr,
        std::thread::spawn(move || serve::serve(listener, &opts)),
    )
}

/// Client `c` with hosts holding the given process counts; addresses 10.c.h.1.
fn info(c: u8, procs_per_host: &[u32]) -> ClientInfo {
    let hosts: Vec<HostInfo> = procs_per_host
        .iter()
        .enumerate()
        .map(|(h, &n)| HostInfo {
            addr: HostAddr::from_ip(IpAddr::V4(Ipv4Addr::new(10, c, h as u8, 1))),
            port: 20000 + h as u32,
            nprocs: n,
            ackmark: 10,
            hiwater: 20,
        })
        .collect();
    let procs = hosts
        .iter()
        .flat_map(|h| {
            (0..h.nprocs).map(move |p| ProcInfo {
                id: h.addr,
                pid: 1000 + i64::from(p),
            })
        })
        .collect();
    ClientInfo {
        versions: vec![Version::default()],
        datalen: 8192 + u32::from(c),
        tag_ub: i32::MAX - i32::from(c),
        coll_xsize: -1,
        coll_maxlinear: -1,
        hosts,
        procs,
    }
}

fn config(rank: u32, info: ClientInfo) -> ClientConfig {
    ClientConfig {
        rank,
        auth: ClientAuth {
            allow_none: true,
            key: None,
        },
        info,
        pipeline: rank % 2 == 1,
        limits: Limits::default(),
    }
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    s
}

/// Runs a client through startup, then sends FINI; returns its tables or its error.
fn run_client(addr: SocketAddr, cfg: ClientConfig) -> Result<GlobalTables, String> {
    let mut s = connect(addr);
    let mut c = Client::new(cfg).map_err(|e| e.to_string())?;
    let mut buf = [0u8; 4096];
    while !c.is_ready() {
        let out = c.take_output();
        s.write_all(&out).map_err(|e| e.to_string())?;
        let n = s.read(&mut buf).unwrap_or(0);
        if n == 0 {
            return Err(c.handle_close().to_string());
        }
        c.handle_input(&buf[..n]).map_err(|e| e.to_string())?;
    }
    let tables = c.tables().cloned().ok_or("no tables")?;
    c.finish().map_err(|e| e.to_string())?;
    s.write_all(&c.take_output()).map_err(|e| e.to_string())?;
    Ok(tables)
}

fn spawn_client(addr: SocketAddr, cfg: ClientConfig) -> JoinHandle<Result<GlobalTables, String>> {
    std::thread::spawn(move || run_client(addr, cfg))
}

/// Reads exactly one server message.
fn read_message(s: &mut TcpStream) -> ServerMessage {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        if let Some((m, used)) = ServerMessage::decode(&buf, 1 << 20).unwrap() {
            assert_eq!(used, buf.len());
            return m;
        }
        s.read_exact(&mut byte).unwrap();
        buf.push(byte[0]);
    }
}

/// A client written as LAM/MPI's `client.c` does it, byte for byte: AUTH with mask 1
/// (IMPI_AUTH_NONE set), the bare reply, IMPI rank and size, then each label in LAM's
/// order with LAM's element sizes, waiting for each reply, then DONE; FINI at the end.
/// Returns every COLL reply.
fn lam_client(addr: SocketAddr, rank: u32, me: ClientInfo, nclients: u32) -> Vec<CollReply> {
    let mut s = connect(addr);
    let mut out = Vec::new();
    ClientMessage::Auth { mask: 1 }.emit(&mut out);
    s.write_all(&out).unwrap();
    let mut reply = [0u8; 8];
    s.read_exact(&mut reply).unwrap();
    assert_eq!(reply, [0, 0, 0, 0, 0, 0, 0, 0], "bare AUTH_NONE reply");
    assert!(AuthReply::decode(&reply).unwrap().is_some());
    out.clear();
    ClientMessage::Rank(rank).emit(&mut out);
    s.write_all(&out).unwrap();
    assert_eq!(read_message(&mut s), ServerMessage::Size(nclients));
    let mut replies = Vec::new();
    for label in Label::LAM_ORDER {
        out.clear();
        let payload = me.contribution(label);
        let elems = match label {
            Label::CVersion => 1,
            l if l.raw() & 0xf000 == 0x1000 => 1,
            l if l.raw() & 0xf000 == 0x2000 => me.hosts.len(),
            _ => me.procs.len(),
        };
        assert_eq!(
            payload.len(),
            elems * label.element_sizes()[0],
            "LAM's size for {label}"
        );
        ClientMessage::Coll { label, payload }.emit(&mut out);
        s.write_all(&out).unwrap();
        match read_message(&mut s) {
            ServerMessage::Coll(r) => {
                assert_eq!(r.label, label, "the reply answers the label just sent");
                replies.push(r);
            }
            other => panic!("expected COLL {label}, got {other:?}"),
        }
    }
    out.clear();
    ClientMessage::Done.emit(&mut out);
    s.write_all(&out).unwrap();
    assert_eq!(read_message(&mut s), ServerMessage::Done { payload_len: 0 });
    out.clear();
    ClientMessage::Fini.emit(&mut out);
    s.write_all(&out).unwrap();
    replies
}

/// Varied sizes: client c has 1 + c % 3 hosts with 1 + (c + h) % 4 procs each.
fn varied(c: u32) -> ClientInfo {
    let sizes: Vec<u32> = (0..1 + c % 3).map(|h| 1 + (c + h) % 4).collect();
    info(c as u8, &sizes)
}

#[test]
fn full_startup_with_2_3_and_32_clients() {
    for n in [2u32, 3, 32] {
        let (addr, server) = start_server(options(n, ServerAuth::None, IO_TIMEOUT));
        // Ranks connect in a shuffled order.
        let clients: Vec<_> = (0..n)
            .map(|i| (i * 7 + 3) % n)
            .map(|r| (r, spawn_client(addr, config(r, varied(r)))))
            .collect();
        let expected = GlobalTables {
            clients: (0..n).map(varied).collect(),
        };
        for (r, c) in clients {
            let t = c
                .join()
                .unwrap()
                .unwrap_or_else(|e| panic!("client {r}: {e}"));
            assert_eq!(t, expected, "client {r} of {n}");
        }
        server.join().unwrap().unwrap();
        assert_eq!(expected.nhosts(), (0..n).map(|c| 1 + c % 3).sum::<u32>());
    }
}

#[test]
fn worked_example_and_lam_lock_step_client() {
    let (addr, server) = start_server(options(3, ServerAuth::None, IO_TIMEOUT));
    let others: Vec<_> = [(1u32, vec![1, 2]), (2, vec![3, 1])]
        .into_iter()
        .map(|(r, sizes)| spawn_client(addr, config(r, info(r as u8, &sizes))))
        .collect();
    let lam = lam_client(addr, 0, info(0, &[1, 1, 1]), 3);
    let nhosts = &lam[1];
    let mut bytes = Vec::new();
    ServerMessage::Coll(nhosts.clone()).emit(&mut bytes);
    let want: Vec<u8> = [0x434F_4C4Cu32, 20, 0x1100, 7, 3, 2, 2]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    assert_eq!(bytes, want, "COLL, len 20, label 0x1100, mask 0x7, 3, 2, 2");
    let mut replies = std::collections::BTreeMap::new();
    for r in lam {
        replies.insert(r.label, r);
    }
    let tables = GlobalTables::decode(3, &replies).unwrap();
    for c in others {
        assert_eq!(c.join().unwrap().unwrap(), tables);
    }
    assert_eq!(tables.nprocs(), 3 + 3 + 4);
    server.join().unwrap().unwrap();
}

#[test]
fn two_lam_clients_one_host_each() {
    let (addr, server) = start_server(options(2, ServerAuth::None, IO_TIMEOUT));
    let other = std::thread::spawn(move || lam_client(addr, 1, info(1, &[4]), 2));
    let mine = lam_client(addr, 0, info(0, &[2]), 2);
    assert_eq!(mine, other.join().unwrap(), "both get the same replies");
    assert_eq!(mine[13].data.len(), 6 * 8, "P_PID: 6 procs x 8 bytes");
    server.join().unwrap().unwrap();
}

#[test]
fn wrong_key_is_refused_and_the_right_client_still_joins() {
    let (addr, server) = start_server(options(1, ServerAuth::Key(777), IO_TIMEOUT));
    let mut cfg = config(0, info(0, &[1]));
    cfg.auth = ClientAuth {
        allow_none: false,
        key: Some(776),
    };
    let e = run_client(addr, cfg.clone()).unwrap_err();
    assert!(e.contains("the key is wrong"), "{e}");
    cfg.auth.key = Some(777);
    run_client(addr, cfg).unwrap();
    server.join().unwrap().unwrap();
}

fn expect_server_error(server: JoinHandle<Result<(), String>>, needles: &[&str]) {
    let e = server.join().unwrap().unwrap_err();
    for n in needles {
        assert!(e.contains(n), "server error '{e}' lacks '{n}'");
    }
}

#[test]
fn duplicate_rank_ends_the_job_with_clear_errors() {
    let (addr, server) = start_server(options(3, ServerAuth::None, IO_TIMEOUT));
    let mut first = join_raw(addr, 1, 3);
    let e = run_client(addr, config(1, info(2, &[1]))).unwrap_err();
    assert!(e.contains("rank 1 is already taken"), "{e}");
    expect_server_error(server, &["rank 1 is already registered"]);
    let mut buf = [0u8; 8];
    assert_eq!(
        first.read(&mut buf).unwrap_or(0),
        0,
        "the job ended for everyone"
    );
}

#[test]
fn rank_at_or_above_n_ends_the_job() {
    let (addr, server) = start_server(options(2, ServerAuth::None, IO_TIMEOUT));
    let e = run_client(addr, config(2, info(0, &[1]))).unwrap_err();
    assert!(e.contains("rank 2"), "{e}");
    expect_server_error(server, &["value 2 is out of range", "-server 2"]);
}

/// Registers rank `rank` by hand and returns the socket, after the size arrived.
fn join_raw(addr: SocketAddr, rank: u32, n: u32) -> TcpStream {
    let mut s = connect(addr);
    let mut out = Vec::new();
    ClientMessage::Auth { mask: 1 }.emit(&mut out);
    ClientMessage::Rank(rank).emit(&mut out);
    s.write_all(&out).unwrap();
    let mut reply = [0u8; 8];
    s.read_exact(&mut reply).unwrap();
    if n == 1 {
        assert_eq!(read_message(&mut s), ServerMessage::Size(1));
    }
    s
}

#[test]
fn truncated_message_then_vanishing_client_is_named() {
    let (addr, server) = start_server(options(1, ServerAuth::None, IO_TIMEOUT));
    let mut s = join_raw(addr, 0, 1);
    s.write_all(&[b'C', b'O', b'L', b'L', 0, 0]).unwrap();
    drop(s);
    expect_server_error(
        server,
        &["client 0", "closed its connection during startup"],
    );
}

#[test]
fn oversized_message_is_rejected_before_its_payload() {
    let mut opts = options(1, ServerAuth::None, IO_TIMEOUT);
    opts.limits = Limits { max_msg: 4096 };
    let (addr, server) = start_server(opts);
    let mut s = join_raw(addr, 0, 1);
    // Claims 1 GiB and sends none of it: the header alone must end the job.
    s.write_all(&[b'C', b'O', b'L', b'L', 0x40, 0, 0, 0])
        .unwrap();
    expect_server_error(
        server,
        &["client 0", "length 1073741824 exceeds the bound 4096"],
    );
}

#[test]
fn client_vanishing_mid_startup_ends_the_job() {
    let (addr, server) = start_server(options(2, ServerAuth::None, IO_TIMEOUT));
    let mut s = join_raw(addr, 1, 2);
    let c0 = spawn_client(addr, config(0, info(0, &[1])));
    // The size arrives once client 0 has registered too: both are in startup now.
    assert_eq!(read_message(&mut s), ServerMessage::Size(2));
    drop(s);
    expect_server_error(
        server,
        &["client 1", "closed its connection during startup"],
    );
    let e = c0.join().unwrap().unwrap_err();
    assert!(e.contains("another client failed"), "{e}");
}

#[test]
fn missing_client_times_out_with_its_rank() {
    let (addr, server) = start_server(options(3, ServerAuth::None, Duration::from_secs(2)));
    let mut s = join_raw(addr, 1, 3);
    expect_server_error(server, &["within 2 s", "clients 0, 2 have not registered"]);
    let mut buf = [0u8; 8];
    assert_eq!(s.read(&mut buf).unwrap_or(0), 0);
}

#[test]
fn garbage_from_a_stranger_does_not_end_the_job() {
    let (addr, server) = start_server(options(1, ServerAuth::None, IO_TIMEOUT));
    let mut stranger = connect(addr);
    stranger.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let mut buf = [0u8; 16];
    assert_eq!(
        stranger.read(&mut buf).unwrap_or(0),
        0,
        "closed without a reply"
    );
    run_client(addr, config(0, info(0, &[2, 2]))).unwrap();
    server.join().unwrap().unwrap();
}
