//! The IMPI route against a peer host that holds two processes (LAM/MPI's one host per
//! cluster, or a relay): one connection carries both processes' packets, told apart by
//! `pk_src`/`pk_dest`, with flow control per process pair. The peer host is played by
//! hand over a loopback socket.

use super::*;
use crate::header::Envelope;
use crate::proto::{Peer, Route};
use crate::request::SendMode;
use crate::userbuf;
use crossmpi_impi::flow::FlowParams;
use crossmpi_impi::wire::addr::HostAddr;
use crossmpi_impi::wire::packet::PacketType;
use crossmpi_impi::wire::packet::Proc;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::time::{Duration, Instant};

const MAX: u32 = 1024;

fn proc_(host: u8, pid: i64) -> Proc {
    Proc {
        hostid: HostAddr::from_ip(IpAddr::V4(Ipv4Addr::new(10, 0, 0, host))),
        pid,
    }
}

/// The protocol state of world rank 0, which reaches world ranks 1 and 2 over IMPI.
fn three_ranks() -> State {
    let peers = vec![
        Peer::new(Route::Local, 1 << 20),
        Peer::new(Route::Impi, u64::MAX / 2),
        Peer::new(Route::Impi, u64::MAX / 2),
    ];
    let mut st = State::new(0, peers, 1 << 20);
    st.impi_eager = MAX as u64;
    st
}

/// World rank 0 is this process (its own host); world ranks 1 and 2 share the peer host.
fn setup() -> (ImpiRoute, State, TcpStream) {
    setup_with(FlowParams::new(2, 4).unwrap())
}

/// As [`setup`], with flow-control marks `flow`.
fn setup_with(flow: FlowParams) -> (ImpiRoute, State, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let peer = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (mine, addr) = listener.accept().unwrap();
    let procs = vec![proc_(1, 10), proc_(2, 20), proc_(2, 21)];
    let tr = Translator::new(0, procs, &[1, 2], MAX, flow, false);
    let link = HostLink::new(1, addr, mine).unwrap();
    let route = ImpiRoute::new(
        vec![link],
        vec![None, Some(0), Some(0)],
        vec![None],
        tr,
        Duration::from_secs(1),
        Sending::default(),
    )
    .unwrap();
    let st = three_ranks();
    peer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    (route, st, peer)
}

fn data(from: Proc, lsrank: i32, srqid: u64, bytes: &[u8]) -> Vec<u8> {
    let mut p = PacketRepr::control(PacketType::Data, from, proc_(1, 10));
    p.data_len = bytes.len() as u32;
    p.msglen = bytes.len() as u64;
    p.lsrank = lsrank;
    p.tag = 5;
    p.srqid = srqid;
    let mut v = p.emit().to_vec();
    v.extend_from_slice(bytes);
    v
}

fn read_packet(sock: &mut TcpStream) -> (PacketRepr, Vec<u8>) {
    let mut head = [0u8; HEADER_LEN];
    sock.read_exact(&mut head).unwrap();
    let p = PacketRepr::parse(&PacketHeader::new_checked(&head[..]).unwrap(), MAX).unwrap();
    let mut body = vec![0u8; p.data_len as usize];
    sock.read_exact(&mut body).unwrap();
    (p, body)
}

fn drive(route: &mut ImpiRoute, st: &mut State, until: impl Fn(&State) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !until(st) {
        assert!(Instant::now() < deadline, "no progress within 5 s");
        route.poll(st);
        for to in 1..3 {
            route.flush(st, to);
        }
    }
}

#[test]
fn two_processes_behind_one_host_connection() {
    let (mut route, mut st, mut peer) = setup();
    let mut got1 = [0u8; 4];
    let mut got2 = [0u8; 4];
    let r1 = st.start_recv(userbuf::bytes(got1.as_mut_ptr() as usize, 4), 0, 1, 5);
    let r2 = st.start_recv(userbuf::bytes(got2.as_mut_ptr() as usize, 4), 0, 2, 5);
    // Process 2's message first, then two of process 1's (the second one unexpected).
    let mut wire = data(proc_(2, 21), 2, 0, b"from");
    wire.extend(data(proc_(2, 20), 1, 0, b"one!"));
    wire.extend(data(proc_(2, 20), 1, 0, b"more"));
    peer.write_all(&wire).unwrap();
    drive(&mut route, &mut st, |st| st.is_done(r1) && st.is_done(r2));
    assert_eq!((&got1, &got2), (b"one!", b"from"));
    assert_eq!(st.requests.get(r1).unwrap().status.source, 1);
    // Two counted packets from process 1 (ackmark 2) earn it a PROTOACK, and only it.
    let (ack, _) = read_packet(&mut peer);
    assert_eq!(
        (ack.ty, ack.dest, ack.src),
        (PacketType::ProtoAck, proc_(2, 20), proc_(1, 10))
    );
}

/// Polls until a poll reads something from the peer host.
fn poll_until_read(route: &mut ImpiRoute, st: &mut State) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !route.poll(st) {
        assert!(Instant::now() < deadline, "nothing read within 5 s");
    }
}

/// True when a whole packet header waits on `peer` (without taking it).
fn packet_waiting(peer: &mut TcpStream) -> bool {
    peer.set_nonblocking(true).unwrap();
    let mut head = [0u8; HEADER_LEN];
    let ready = peer.peek(&mut head).is_ok_and(|n| n == HEADER_LEN);
    peer.set_nonblocking(false).unwrap();
    ready
}

#[test]
fn a_protoack_waits_for_the_reply_or_for_an_idle_poll() {
    let (mut route, mut st, mut peer) = setup();
    // Two counted packets from process 1 (ackmark 2, hiwater 4) earn it a PROTOACK...
    let mut wire = data(proc_(2, 20), 1, 0, b"one!");
    wire.extend(data(proc_(2, 20), 1, 0, b"two!"));
    peer.write_all(&wire).unwrap();
    poll_until_read(&mut route, &mut st);
    // ...which the poll that read them keeps back: a reply is likely to follow.
    std::thread::sleep(Duration::from_millis(20));
    assert!(!packet_waiting(&mut peer), "the PROTOACK went alone");
    // The reply carries it: both leave in one write, the PROTOACK first.
    let msg = *b"back";
    let env = Envelope {
        context: 0,
        src: 0,
        tag: 5,
    };
    st.start_send(
        userbuf::bytes(msg.as_ptr() as usize, 4),
        1,
        env,
        SendMode::Standard,
    );
    route.flush(&mut st, 1);
    let (ack, _) = read_packet(&mut peer);
    assert_eq!((ack.ty, ack.dest), (PacketType::ProtoAck, proc_(2, 20)));
    let (reply, body) = read_packet(&mut peer);
    assert_eq!((reply.ty, body.as_slice()), (PacketType::Data, &msg[..]));
    // Without a reply, the first poll that reads nothing writes it.
    let mut wire = data(proc_(2, 20), 1, 0, b"3rd!");
    wire.extend(data(proc_(2, 20), 1, 0, b"4th!"));
    peer.write_all(&wire).unwrap();
    poll_until_read(&mut route, &mut st);
    while route.poll(&mut st) {}
    let (ack, _) = read_packet(&mut peer);
    assert_eq!((ack.ty, ack.dest), (PacketType::ProtoAck, proc_(2, 20)));
}

#[test]
fn protoacks_go_at_once_when_the_window_is_tight() {
    // hiwater 3 < 2 * ackmark: a held PROTOACK would leave the sender one packet of room.
    let (mut route, mut st, mut peer) = setup_with(FlowParams::new(2, 3).unwrap());
    let mut wire = data(proc_(2, 20), 1, 0, b"one!");
    wire.extend(data(proc_(2, 20), 1, 0, b"two!"));
    peer.write_all(&wire).unwrap();
    poll_until_read(&mut route, &mut st);
    let (ack, _) = read_packet(&mut peer);
    assert_eq!((ack.ty, ack.dest), (PacketType::ProtoAck, proc_(2, 20)));
}

/// Starts a standard send of `msg` (which must outlive it) to world rank 2 (process 21
/// of the peer host) and lets the route take it.
fn send_to_rank_2(route: &mut ImpiRoute, st: &mut State, msg: &[u8]) -> crate::request::ReqId {
    let env = Envelope {
        context: 0,
        src: 0,
        tag: 9,
    };
    let req = st.start_send(
        userbuf::bytes(msg.as_ptr() as usize, msg.len()),
        2,
        env,
        SendMode::Standard,
    );
    route.flush(st, 2);
    req
}

#[test]
fn a_reply_to_the_peer_goes_before_our_queued_long_data() {
    // Marks that neither stop our data nor make us acknowledge within this exchange.
    let (mut route, mut st, mut peer) = setup_with(FlowParams::new(16, 64).unwrap());
    // Our long message to process 2 of the peer host: its first piece, then its answer.
    let msg: Vec<u8> = (0..4 * MAX).map(|i| i as u8).collect();
    let req = send_to_rank_2(&mut route, &mut st, &msg);
    let (first, _) = read_packet(&mut peer);
    assert_eq!(first.ty, PacketType::DataSync);
    let mut ack = PacketRepr::control(PacketType::SyncAck, proc_(2, 21), proc_(1, 10));
    ack.srqid = first.srqid;
    ack.drqid = 77;
    peer.write_all(&ack.emit()).unwrap();
    poll_until_read(&mut route, &mut st);
    // Before our data is built, that process starts a long message to us, which a
    // posted receive matches: the answer (a SYNCACK) queues behind our data frame.
    let mut got = vec![0u8; 2 * MAX as usize];
    let recv = st.start_recv(
        userbuf::bytes(got.as_mut_ptr() as usize, got.len()),
        0,
        2,
        5,
    );
    let theirs: Vec<u8> = (0..2 * MAX).map(|i| (i * 7) as u8).collect();
    let mut p = PacketRepr::control(PacketType::DataSync, proc_(2, 21), proc_(1, 10));
    p.data_len = MAX;
    p.msglen = theirs.len() as u64;
    p.lsrank = 2;
    p.tag = 5;
    p.srqid = 5;
    let mut wire = p.emit().to_vec();
    wire.extend_from_slice(&theirs[..MAX as usize]);
    peer.write_all(&wire).unwrap();
    poll_until_read(&mut route, &mut st);
    route.flush(&mut st, 2);
    // The SYNCACK leaves first, then our data, whole and in order.
    let (reply, _) = read_packet(&mut peer);
    assert_eq!(
        (reply.ty, reply.srqid, reply.dest),
        (PacketType::SyncAck, 5, proc_(2, 21))
    );
    let mut rest = Vec::new();
    while rest.len() < msg.len() - MAX as usize {
        let (p, body) = read_packet(&mut peer);
        assert_eq!((p.ty, p.drqid), (PacketType::Data, 77));
        rest.extend(body);
    }
    assert_eq!(rest, msg[MAX as usize..]);
    drive(&mut route, &mut st, |st| st.is_done(req));
    // Their data, sent on the reply, completes the receive.
    let mut p = PacketRepr::control(PacketType::Data, proc_(2, 21), proc_(1, 10));
    p.drqid = reply.drqid;
    p.msglen = theirs.len() as u64;
    p.data_len = MAX;
    let mut wire = p.emit().to_vec();
    wire.extend_from_slice(&theirs[MAX as usize..]);
    peer.write_all(&wire).unwrap();
    drive(&mut route, &mut st, |st| st.is_done(recv));
    assert_eq!(got, theirs);
}

#[test]
fn a_long_send_to_a_process_of_a_shared_host() {
    let (mut route, mut st, mut peer) = setup();
    let msg: Vec<u8> = (0..3000u32).map(|i| i as u8).collect();
    let req = send_to_rank_2(&mut route, &mut st, &msg);
    let (first, piece) = read_packet(&mut peer);
    assert_eq!(
        (first.ty, first.dest, first.msglen),
        (PacketType::DataSync, proc_(2, 21), 3000)
    );
    assert_eq!(piece, msg[..MAX as usize]);
    // The receiving process matches it and answers with its request id 77.
    let mut ack = PacketRepr::control(PacketType::SyncAck, proc_(2, 21), proc_(1, 10));
    ack.srqid = first.srqid;
    ack.drqid = 77;
    peer.write_all(&ack.emit()).unwrap();
    let mut rest = Vec::new();
    while rest.len() < 3000 - MAX as usize {
        drive(&mut route, &mut st, |_| true);
        route.poll(&mut st);
        route.flush(&mut st, 2);
        peer.set_nonblocking(true).unwrap();
        let mut head = [0u8; HEADER_LEN];
        let ready = peer
            .peek(&mut head)
            .map(|n| n == HEADER_LEN)
            .unwrap_or(false);
        peer.set_nonblocking(false).unwrap();
        if ready {
            let (p, body) = read_packet(&mut peer);
            assert_eq!(
                (p.ty, p.drqid, p.dest),
                (PacketType::Data, 77, proc_(2, 21))
            );
            rest.extend(body);
        }
    }
    assert_eq!(rest, msg[MAX as usize..]);
    drive(&mut route, &mut st, |st| st.is_done(req));
}

#[test]
fn a_reset_connection_reads_as_a_close() {
    use std::io::{Error, ErrorKind};
    for kind in [ErrorKind::ConnectionReset, ErrorKind::BrokenPipe] {
        let said = super::connection_failure("read", &Error::from(kind));
        assert!(said.starts_with(super::CLOSED_BEFORE_FINI), "{said}");
        assert!(said.contains("(read: "), "{said}");
    }
    let said = super::connection_failure("send", &Error::from(ErrorKind::PermissionDenied));
    assert!(said.starts_with("send failed: "), "{said}");
}

/// Polls `route` until a whole packet header waits on `far`.
fn poll_until_readable(route: &mut ImpiRoute, st: &mut State, far: &mut TcpStream) {
    let deadline = Instant::now() + Duration::from_secs(5);
    far.set_nonblocking(true).unwrap();
    let mut head = [0u8; HEADER_LEN];
    while !far.peek(&mut head).is_ok_and(|n| n == HEADER_LEN) {
        assert!(Instant::now() < deadline, "nothing arrived within 5 s");
        route.poll(st);
    }
    far.set_nonblocking(false).unwrap();
}

/// World rank 0 reaches world ranks 1 and 2 (another cluster) through two relays, hosts
/// 1 and 2, that may take over from each other: rank 1 through relay 1, rank 2 through
/// relay 2; streams with nothing confirmed for `stall_period` are asked for their count.
/// Returns the route, the state and the far ends of both relays' connections.
fn two_relays(stall_period: Duration) -> (ImpiRoute, State, TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut links = Vec::new();
    let mut far = Vec::new();
    for host in 1..3 {
        let peer = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mine, addr) = listener.accept().unwrap();
        peer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        links.push(HostLink::new(host, addr, mine).unwrap());
        far.push(peer);
    }
    let procs = vec![proc_(1, 10), proc_(2, 20), proc_(3, 30)];
    let tr = Translator::new(0, procs, &[1, 2], MAX, FlowParams::new(2, 4).unwrap(), true);
    let route = ImpiRoute::new(
        links,
        vec![None, Some(0), Some(1)],
        vec![Some(1); 2],
        tr,
        stall_period,
        Sending::default(),
    )
    .unwrap();
    let st = three_ranks();
    let second = far.pop().unwrap();
    (route, st, far.pop().unwrap(), second)
}

/// Starts a standard send of `msg` (which must outlive it) to world rank 1 and lets the
/// route take it.
fn send_to_rank_1(route: &mut ImpiRoute, st: &mut State, msg: &[u8; 4]) -> crate::request::ReqId {
    let env = Envelope {
        context: 0,
        src: 0,
        tag: 9,
    };
    let req = st.start_send(
        userbuf::bytes(msg.as_ptr() as usize, 4),
        1,
        env,
        SendMode::Standard,
    );
    route.flush(st, 1);
    req
}

#[test]
fn a_lost_relay_is_taken_over_and_nothing_is_lost() {
    let (mut route, mut st, relay1, mut relay2) = two_relays(Duration::from_secs(60));
    let msg = *b"kept";
    let req = send_to_rank_1(&mut route, &mut st, &msg);
    // The packet went to relay 1, which dies with it unread.
    drop(relay1);
    drive(&mut route, &mut st, |st| st.is_done(req));
    poll_until_readable(&mut route, &mut st, &mut relay2);
    // Relay 2 now carries rank 1's traffic: both remote ranks are asked to resend after
    // what arrived from them (nothing).
    let mut asks = Vec::new();
    for _ in 0..2 {
        let (ask, _) = read_packet(&mut relay2);
        assert_eq!(
            (ask.ty, ask.count, ask.reserved),
            (PacketType::ProtoAck, -1, 0)
        );
        asks.push(ask.dest);
    }
    asks.sort();
    assert_eq!(asks, vec![proc_(2, 20), proc_(3, 30)]);
    // Rank 1 answers that it has none of ours: the kept packet comes again, numbered 1.
    let mut answer = PacketRepr::control(PacketType::ProtoAck, proc_(2, 20), proc_(1, 10));
    answer.count = -2;
    relay2.write_all(&answer.emit()).unwrap();
    poll_until_readable(&mut route, &mut st, &mut relay2);
    let (again, body) = read_packet(&mut relay2);
    assert_eq!(
        (again.ty, again.dest, again.reserved),
        (PacketType::Data, proc_(2, 20), 1)
    );
    assert_eq!(body, b"kept");
    // Rank 1's packets arrive through relay 2 now; one it sent again is a duplicate.
    let mut got = [0u8; 4];
    let r = st.start_recv(userbuf::bytes(got.as_mut_ptr() as usize, 4), 0, 1, 5);
    let mut wire = Vec::new();
    for (number, bytes) in [(1, b"one!"), (1, b"dup!"), (2, b"two!")] {
        let mut p = data(proc_(2, 20), 1, 0, bytes);
        p[120..128].copy_from_slice(&(number as u64).to_be_bytes());
        wire.extend(p);
    }
    relay2.write_all(&wire).unwrap();
    drive(&mut route, &mut st, |st| st.is_done(r));
    assert_eq!(&got, b"one!");
    let mut got = [0u8; 4];
    let r = st.start_recv(userbuf::bytes(got.as_mut_ptr() as usize, 4), 0, 1, 5);
    drive(&mut route, &mut st, |st| st.is_done(r));
    assert_eq!(&got, b"two!");
    // The lost link needs no FINI.
    route.send_fini();
    let mut fini = PacketRepr::control(PacketType::Fini, Proc::FINI, Proc::FINI);
    fini.count = 0;
    relay2.write_all(&fini.emit()).unwrap();
    drive(&mut route, &mut st, |_| true);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !route.finished() {
        assert!(Instant::now() < deadline, "not finished within 5 s");
        route.poll(&mut st);
    }
}

#[test]
fn a_loss_nobody_saw_is_resent_after_a_period_without_confirmation() {
    // Relay 1 lives but swallows the packet (as a connection broken between two relays
    // would): no end loses a connection, so only the period without confirmation shows it.
    let (mut route, mut st, mut relay1, _relay2) = two_relays(Duration::from_millis(50));
    let msg = *b"lost";
    let req = send_to_rank_1(&mut route, &mut st, &msg);
    drive(&mut route, &mut st, |st| st.is_done(req));
    let (swallowed, _) = read_packet(&mut relay1);
    assert_eq!((swallowed.ty, swallowed.reserved), (PacketType::Data, 1));
    poll_until_readable(&mut route, &mut st, &mut relay1);
    let (ask, _) = read_packet(&mut relay1);
    assert_eq!(
        (ask.ty, ask.dest, ask.count, ask.reserved),
        (PacketType::ProtoAck, proc_(2, 20), -3, 0),
        "a probe: only the count is asked for"
    );
    // Rank 1 has none of ours: the packet comes again.
    let mut answer = PacketRepr::control(PacketType::ProtoAck, proc_(2, 20), proc_(1, 10));
    answer.count = -2;
    relay1.write_all(&answer.emit()).unwrap();
    poll_until_readable(&mut route, &mut st, &mut relay1);
    let (again, body) = read_packet(&mut relay1);
    assert_eq!((again.ty, again.reserved), (PacketType::Data, 1));
    assert_eq!(body, b"lost");
}

#[test]
fn a_long_message_within_the_early_room_streams_without_waiting_for_its_syncack() {
    let (mut route, mut st, mut peer) = setup_with(FlowParams::new(16, 64).unwrap());
    st.impi_early = 4 * MAX as u64;
    let first: Vec<u8> = (0..3 * MAX).map(|i| i as u8).collect();
    let early = send_to_rank_2(&mut route, &mut st, &first);
    drive(&mut route, &mut st, |st| st.is_done(early));
    // The first piece, then the rest as DATA packets for the message (drqid EARLY),
    // all before any SYNCACK came back.
    let mut seen = Vec::new();
    let mut bytes = Vec::new();
    for _ in 0..3 {
        let (p, body) = read_packet(&mut peer);
        seen.push((p.ty, p.data_len, p.drqid == translate::EARLY));
        bytes.extend(body);
    }
    assert_eq!(
        seen,
        vec![
            (PacketType::DataSync, MAX, false),
            (PacketType::Data, MAX, true),
            (PacketType::Data, MAX, true)
        ]
    );
    assert_eq!(bytes, first);
    // A second one would pass the room while the first is unmatched: a plain
    // rendezvous, whose send waits for the SYNCACK.
    let second: Vec<u8> = vec![7; 2 * MAX as usize];
    let waits = send_to_rank_2(&mut route, &mut st, &second);
    let (p, _) = read_packet(&mut peer);
    assert_eq!(p.ty, PacketType::DataSync);
    assert!(!packet_waiting(&mut peer) && !st.is_done(waits));
    // The receiver matches the first (its SYNCACK returns the room) and the second.
    for (srqid, drqid) in [(1, 70), (p.srqid, 71)] {
        let mut ack = PacketRepr::control(PacketType::SyncAck, proc_(2, 21), proc_(1, 10));
        ack.srqid = srqid;
        ack.drqid = drqid;
        peer.write_all(&ack.emit()).unwrap();
    }
    drive(&mut route, &mut st, |st| st.is_done(waits));
    let (rest, _) = read_packet(&mut peer);
    assert_eq!((rest.ty, rest.drqid), (PacketType::Data, 71));
    let third = vec![9u8; 3 * MAX as usize];
    let again = send_to_rank_2(&mut route, &mut st, &third);
    drive(&mut route, &mut st, |st| st.is_done(again));
    assert!(
        st.early_room(2, 1),
        "the room came back with the first SYNCACK"
    );
}
