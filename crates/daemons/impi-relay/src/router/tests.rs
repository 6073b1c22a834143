//! The router without sockets: client 0 outside is one host of two processes (as
//! LAM/MPI runs); the relay's client 1 has two inside hosts of one process each.
//! Outside, the relay is host 1 and dials host 0; inside, the virtual host of client 0
//! is host 0 and both inside hosts connect to its private port.

use super::*;
use crate::rewrite::{synthetic_addr, Renamed};
use crate::testing::{client, ip as addr};
use crossmpi_impi::wire::tables::GlobalTables;

struct Net {
    r: Router,
    outside: ConnId,
    inside: [ConnId; 2],
    /// Process identities in world order: outside view, inside view.
    out_ids: Vec<Proc>,
    in_ids: Vec<Proc>,
}

/// The relay passing packets on cut-through (what most tests here look at).
fn net(send_buffer: usize) -> Net {
    relay_net(send_buffer, true)
}

fn relay_net(send_buffer: usize, cut_through: bool) -> Net {
    let lam = addr(192, 0, 2, 1);
    let marks = (4, 8);
    let c0 = client(&[(lam, 5000, &[1, 2])], marks);
    let mut relay = client(&[(addr(198, 51, 100, 1), 6000, &[50, 50])], marks);
    relay.procs[0].id = synthetic_addr(Renamed::Outward, 1, 0);
    relay.procs[1].id = synthetic_addr(Renamed::Outward, 1, 1);
    let mut virt = client(&[(addr(10, 0, 0, 254), 7000, &[1, 2])], marks);
    virt.procs = c0.procs.clone();
    let mine = client(
        &[
            (addr(10, 0, 0, 1), 5001, &[50]),
            (addr(10, 0, 0, 2), 5002, &[50]),
        ],
        marks,
    );
    let outside = GlobalTables {
        clients: vec![c0, relay],
    };
    let inside = GlobalTables {
        clients: vec![virt, mine],
    };
    let topo = Topology::new(1, crate::trunk::Trunking::SINGLE, &inside, &outside).unwrap();
    assert_eq!(topo.dials().len(), 1, "only outside host 0 is dialed");
    let dial = topo.dials()[0];
    assert_eq!(
        (dial.link, dial.port, dial.handshake),
        (Link::Outside { host: 0 }, 5000, 1)
    );
    let mut r = Router::new(
        topo,
        RouterConfig {
            send_buffer,
            read_ahead: 4096,
            max_handshakes: 2,
            cut_through,
        },
    );
    let o = r.dialed(&dial);
    assert_eq!(take(&mut r, o), [0, 0, 0, 1], "the relay announces host 1");
    let mut inside_conns = [0; 2];
    for (k, conn) in inside_conns.iter_mut().enumerate() {
        *conn = r.accept(Acceptor::Private { client: 0 }).unwrap();
        feed(&mut r, *conn, &(k as u32 + 1).to_be_bytes());
        assert_eq!(
            r.link(*conn),
            Some(Link::Inside {
                host: k as u32 + 1,
                client: 0
            })
        );
    }
    Net {
        r,
        outside: o,
        inside: inside_conns,
        out_ids: crate::topology::proc_ids(&outside),
        in_ids: crate::topology::proc_ids(&inside),
    }
}

/// Delivers `data` to `conn` through `read_buf` as far as it is taken; returns how much.
fn feed(r: &mut Router, conn: ConnId, mut data: &[u8]) -> usize {
    let mut taken = 0;
    while !data.is_empty() {
        let Some(buf) = r.read_buf(conn) else { break };
        let n = buf.len().min(data.len());
        buf[..n].copy_from_slice(&data[..n]);
        r.on_read(conn, n);
        data = &data[n..];
        taken += n;
    }
    taken
}

/// Everything queued to `conn`, as written.
fn take(r: &mut Router, conn: ConnId) -> Vec<u8> {
    let out = r.write_buf(conn).to_vec();
    r.on_written(conn, out.len());
    out
}

fn data_packet(src: Proc, dest: Proc, len: u32) -> PacketRepr {
    let mut p = PacketRepr::control(PacketType::Data, src, dest);
    p.data_len = len;
    p.msglen = len.into();
    p.tag = 42;
    p.cid = 9;
    p.srqid = 77;
    p.seqnum = 5;
    p
}

#[test]
fn headers_go_on_at_once_and_data_as_it_arrives_without_interleaving() {
    let mut n = net(1 << 20);
    let (o, a, b) = (n.outside, n.inside[0], n.inside[1]);
    let p = data_packet(n.in_ids[2], n.in_ids[0], 1000);
    let body: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
    let mut first = p.emit().to_vec();
    first.extend_from_slice(&body[..10]);
    assert_eq!(feed(&mut n.r, a, &first), first.len());
    let out = take(&mut n.r, o);
    assert_eq!(
        out.len(),
        HEADER_LEN + 10,
        "header and the first bytes, before the rest"
    );
    let got = PacketRepr::parse(
        &PacketHeader::new_checked(&out[..HEADER_LEN]).unwrap(),
        4096,
    )
    .unwrap();
    let mut want = p;
    want.src = n.out_ids[2];
    want.dest = n.out_ids[0];
    assert_eq!(got, want, "only pk_src and pk_dest change");
    // Host 2's packet to the same outside host waits for host 1's to end.
    let q = data_packet(n.in_ids[3], n.in_ids[1], 0);
    assert_eq!(feed(&mut n.r, b, &q.emit()), HEADER_LEN);
    assert!(
        n.r.read_buf(b).is_none(),
        "held while the destination is busy"
    );
    assert!(take(&mut n.r, o).is_empty());
    assert_eq!(feed(&mut n.r, a, &body[10..]), 990);
    let out = take(&mut n.r, o);
    assert_eq!(&out[..990], &body[10..]);
    let got = PacketRepr::parse(&PacketHeader::new_checked(&out[990..]).unwrap(), 4096).unwrap();
    assert_eq!((got.src, got.dest), (n.out_ids[3], n.out_ids[1]));
    assert!(n.r.read_buf(b).is_some(), "host 2 is read again");
}

#[test]
fn a_full_destination_stops_reading_its_source() {
    let mut n = net(300);
    let (o, a) = (n.outside, n.inside[0]);
    let p = data_packet(n.in_ids[2], n.in_ids[0], 4000);
    let mut bytes = p.emit().to_vec();
    bytes.extend((0..4000u32).map(|i| (i * 7) as u8));
    let mut sent = 0;
    let mut received = Vec::new();
    while sent < bytes.len() {
        let n_in = feed(&mut n.r, a, &bytes[sent..]);
        assert!(
            n.r.write_buf(o).len() <= 300 + HEADER_LEN,
            "bounded by the send buffer"
        );
        if n_in == 0 {
            assert!(
                n.r.read_buf(a).is_none(),
                "not read while the destination is full"
            );
        }
        sent += n_in;
        received.extend(take(&mut n.r, o));
    }
    received.extend(take(&mut n.r, o));
    assert_eq!(
        &received[HEADER_LEN..],
        &bytes[HEADER_LEN..],
        "every data byte, in order"
    );
}

#[test]
fn by_default_packets_go_on_whole_so_a_destination_never_waits_for_one_arriving() {
    let mut n = relay_net(1 << 20, false);
    let (o, a, b) = (n.outside, n.inside[0], n.inside[1]);
    let slow = data_packet(n.in_ids[2], n.in_ids[0], 1000);
    let body: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
    let mut bytes = slow.emit().to_vec();
    bytes.extend_from_slice(&body[..10]);
    assert_eq!(feed(&mut n.r, a, &bytes), bytes.len());
    assert!(take(&mut n.r, o).is_empty(), "not whole yet");
    assert!(n.r.read_buf(a).is_some(), "read on meanwhile");
    // Host 2's packet, longer than the read-ahead, goes on as soon as it is whole,
    // ahead of host 1's, which is still arriving.
    let fast = data_packet(n.in_ids[3], n.in_ids[1], 4000);
    let mut fast_bytes = fast.emit().to_vec();
    fast_bytes.extend(pattern_bytes(4000));
    assert_eq!(feed(&mut n.r, b, &fast_bytes), fast_bytes.len());
    let out = take(&mut n.r, o);
    assert_eq!(out.len(), fast_bytes.len(), "host 2's packet, whole");
    assert_eq!(header_of(&out).dest, n.out_ids[1]);
    assert_eq!(&out[HEADER_LEN..], &fast_bytes[HEADER_LEN..]);
    assert_eq!(feed(&mut n.r, a, &body[10..]), 990);
    let out = take(&mut n.r, o);
    assert_eq!(out.len(), HEADER_LEN + 1000, "then host 1's, whole");
    assert_eq!(header_of(&out).dest, n.out_ids[0]);
    assert_eq!(&out[HEADER_LEN..], &body[..]);
}

#[test]
fn fini_goes_out_once_every_source_of_the_direction_sent_it() {
    let mut n = net(1 << 16);
    let (o, a, b) = (n.outside, n.inside[0], n.inside[1]);
    let fini = PacketRepr::control(PacketType::Fini, Proc::FINI, Proc::FINI).emit();
    feed(&mut n.r, a, &fini);
    assert!(
        take(&mut n.r, o).is_empty(),
        "host 2 still talks to client 0"
    );
    feed(&mut n.r, b, &fini);
    assert_eq!(
        take(&mut n.r, o),
        fini,
        "both inside hosts are done towards client 0"
    );
    // A packet from outside still reaches its inside host after the inside's FINI.
    let p = data_packet(n.out_ids[1], n.out_ids[3], 3);
    let mut bytes = p.emit().to_vec();
    bytes.extend_from_slice(b"xyz");
    feed(&mut n.r, o, &bytes);
    let got = take(&mut n.r, b);
    let h = PacketRepr::parse(
        &PacketHeader::new_checked(&got[..HEADER_LEN]).unwrap(),
        4096,
    )
    .unwrap();
    assert_eq!(
        (h.src, h.dest, &got[HEADER_LEN..]),
        (n.in_ids[1], n.in_ids[3], &b"xyz"[..])
    );
    assert!(!n.r.is_done());
    feed(&mut n.r, o, &fini);
    assert_eq!(take(&mut n.r, a), fini);
    assert_eq!(take(&mut n.r, b), fini);
    let mut closed = Vec::new();
    while let Some(ev) = n.r.poll_event() {
        closed.push(ev);
    }
    assert_eq!(closed.len(), 3, "{closed:?}");
    assert!(closed
        .iter()
        .all(|e| matches!(e, RouterEvent::Close { reason: None, .. })));
    assert!(n.r.is_done());
}

/// The reason of the next event, which must drop `conn`.
fn dropped(r: &mut Router, conn: ConnId) -> String {
    match r.poll_event() {
        Some(RouterEvent::Close {
            conn: c,
            reason: Some(reason),
        }) if c == conn => reason,
        other => panic!("expected connection {conn} dropped, got {other:?}"),
    }
}

#[test]
fn a_broken_connection_is_dropped_alone_and_its_packets_discarded() {
    let mut n = net(1 << 16);
    let (o, a, b) = (n.outside, n.inside[0], n.inside[1]);
    // Inside host 1 claims to send for host 2's process.
    feed(
        &mut n.r,
        a,
        &data_packet(n.in_ids[3], n.in_ids[0], 0).emit(),
    );
    let why = dropped(&mut n.r, a);
    assert!(
        why.contains("inside IMPI host 1") && why.contains("pk_src"),
        "{why}"
    );
    assert_eq!(n.r.broken(), Some(why.as_str()), "the job cannot finish");
    assert!(n.r.poll_event().is_none());
    // Host 2 goes on: a packet reaches outside host 0.
    feed(
        &mut n.r,
        b,
        &data_packet(n.in_ids[3], n.in_ids[0], 0).emit(),
    );
    assert_eq!(take(&mut n.r, o).len(), HEADER_LEN);
    // Host 2 streams a packet to outside host 0, which then breaks the protocol.
    let mut long = data_packet(n.in_ids[3], n.in_ids[1], 100).emit().to_vec();
    long.extend([7u8; 100]);
    feed(&mut n.r, b, &long[..HEADER_LEN + 10]);
    let mut bad = data_packet(n.out_ids[0], n.out_ids[3], 0).emit();
    bad[3] = 9;
    feed(&mut n.r, o, &bad);
    let why = dropped(&mut n.r, o);
    assert!(
        why.contains("outside IMPI host 0") && why.contains("pk_type 9"),
        "{why}"
    );
    let first = n.r.broken().unwrap();
    assert!(
        first.contains("inside IMPI host 1"),
        "the first reason stays: {first}"
    );
    // The rest of host 2's packet, and its next one for host 0, are discarded.
    let mut rest = long[HEADER_LEN + 10..].to_vec();
    rest.extend(data_packet(n.in_ids[3], n.in_ids[0], 5).emit());
    rest.extend([1u8; 5]);
    assert_eq!(feed(&mut n.r, b, &rest), rest.len(), "host 2 is still read");
    assert!(n.r.poll_event().is_none(), "host 2 is not dropped");
    assert!(n.r.read_buf(b).is_some());
}

#[test]
fn handshakes_that_name_no_expected_host_are_refused() {
    let mut n = net(1 << 16);
    let c = n.r.accept(Acceptor::Private { client: 0 }).unwrap();
    feed(&mut n.r, c, &1u32.to_be_bytes());
    assert!(
        matches!(n.r.poll_event(), Some(RouterEvent::Close { reason: Some(r), .. }) if r.contains("connected already"))
    );
    let g = n.r.accept(Acceptor::Global).unwrap();
    feed(&mut n.r, g, &0u32.to_be_bytes());
    assert!(
        matches!(
            n.r.poll_event(),
            Some(RouterEvent::Close {
                reason: Some(_),
                ..
            })
        ),
        "host 0 is dialed, never accepted"
    );
    assert!(n.r.poll_event().is_none(), "the job goes on");
    assert_eq!(
        n.r.broken(),
        None,
        "a refused handshake does not end the job"
    );
    let _ = n.r.accept(Acceptor::Global).unwrap();
    let _ = n.r.accept(Acceptor::Global).unwrap();
    assert!(
        n.r.accept(Acceptor::Global).is_none(),
        "at most two handshakes wait at once"
    );
}

#[test]
fn spliced_data_stays_in_order_ahead_of_later_bytes_and_within_the_bound() {
    let mut n = net(300);
    let (o, a) = (n.outside, n.inside[0]);
    let long = pattern_bytes(4000);
    let short = pattern_bytes(10);
    let mut stream = data_packet(n.in_ids[2], n.in_ids[0], 4000).emit().to_vec();
    stream.extend_from_slice(&long);
    stream.extend_from_slice(&data_packet(n.in_ids[2], n.in_ids[0], 10).emit());
    stream.extend_from_slice(&short);
    // The I/O layer's view: the pipe towards `o` and what reached `o`'s socket.
    let (mut pipe, mut wire) = (Vec::new(), Vec::new());
    let (mut at, mut spliced, mut step) = (0, 0, 0);
    while at < stream.len() || !pipe.is_empty() || !n.r.write_buf(o).is_empty() {
        step += 1;
        let chunk = (stream.len() - at).min(100);
        if let Some((to, room)) = n.r.splice_route(a) {
            assert_eq!(to, o);
            let k = chunk.min(room);
            pipe.extend_from_slice(&stream[at..at + k]);
            n.r.on_spliced(a, k);
            (at, spliced) = (at + k, spliced + k);
        } else if let Some(buf) = n.r.read_buf(a) {
            let k = chunk.min(buf.len());
            buf[..k].copy_from_slice(&stream[at..at + k]);
            n.r.on_read(a, k);
            at += k;
        }
        assert_eq!(n.r.piped(o), pipe.len());
        assert!(
            pipe.len() + n.r.write_buf(o).len() <= 300 + HEADER_LEN,
            "bounded"
        );
        // A slow destination: it writes every third step, the pipe first.
        if step % 3 == 0 {
            if pipe.is_empty() {
                wire.extend(take(&mut n.r, o));
            } else {
                let k = pipe.len().min(150);
                wire.extend(pipe.drain(..k));
                n.r.on_pipe_written(o, k);
            }
        }
        assert!(step < 10_000, "no progress");
    }
    assert!(spliced > 0 && spliced < long.len(), "both paths were taken");
    assert_eq!(&wire[HEADER_LEN..HEADER_LEN + 4000], &long[..]);
    assert_eq!(&wire[2 * HEADER_LEN + 4000..], &short[..]);
    assert_eq!(wire.len(), stream.len());
}

fn pattern_bytes(n: u32) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 256) as u8).collect()
}

#[test]
fn a_connection_closing_before_fini_means_the_job_cannot_finish() {
    let mut n = net(1 << 16);
    assert_eq!(n.r.broken(), None);
    // The relay of the other client died: its connection closes mid-job.
    n.r.on_close(n.outside, None);
    let why = dropped(&mut n.r, n.outside);
    assert!(
        why.contains("outside IMPI host 0 closed its connection before FINI"),
        "{why}"
    );
    assert_eq!(n.r.broken(), Some(why.as_str()));
    assert!(!n.r.is_done());
}

/// Trunk 0 of client 0's three relays in a survivable job
/// ([`crate::testing::survivable_views`]): it dials inside hosts 0, 1, 2 and is dialed
/// by client 1's two relay hosts, outside hosts 3 and 4. Returns the router, the
/// connections (inside hosts 0..3, then outside hosts 3, 4) and both views' identities.
fn survivable_net(send_buffer: usize) -> (Router, Vec<ConnId>, Vec<Proc>, Vec<Proc>) {
    let (out, inv) = crate::testing::survivable_views(3);
    let trunking = crate::trunk::Trunking {
        trunk: 0,
        ntrunks: 3,
        mode: crate::trunk::TrunkMode::Destination,
    };
    let topo = Topology::new(0, trunking, &inv, &out).unwrap();
    let dials = topo.dials().to_vec();
    let mut r = Router::new(
        topo,
        RouterConfig {
            send_buffer,
            read_ahead: 1024,
            max_handshakes: 4,
            cut_through: true,
        },
    );
    let mut conns: Vec<ConnId> = dials.iter().map(|d| r.dialed(d)).collect();
    for &c in &conns {
        take(&mut r, c);
    }
    for host in [3u32, 4] {
        let c = r.accept(Acceptor::Global).unwrap();
        feed(&mut r, c, &host.to_be_bytes());
        assert_eq!(r.link(c), Some(Link::Outside { host }));
        conns.push(c);
    }
    let ids = (
        crate::topology::proc_ids(&inv),
        crate::topology::proc_ids(&out),
    );
    (r, conns, ids.0, ids.1)
}

fn header_of(bytes: &[u8]) -> PacketRepr {
    PacketRepr::parse(
        &PacketHeader::new_checked(&bytes[..HEADER_LEN]).unwrap(),
        4096,
    )
    .unwrap()
}

#[test]
fn a_dead_relay_host_is_taken_over_and_the_job_goes_on() {
    let (mut r, c, in_ids, out_ids) = survivable_net(1 << 16);
    let (h0, h1, h2, o3, o4) = (c[0], c[1], c[2], c[3], c[4]);
    // Inside host 0 streams a packet to process 5 (on outside host 3); inside host 2
    // holds one for process 6 (host 3 too) behind it.
    let mut long = data_packet(in_ids[0], in_ids[5], 100).emit().to_vec();
    long.extend([7u8; 100]);
    feed(&mut r, h0, &long[..HEADER_LEN + 10]);
    feed(&mut r, h2, &data_packet(in_ids[4], in_ids[6], 0).emit());
    assert_eq!(take(&mut r, o3).len(), HEADER_LEN + 10);
    // Host 3's relay dies: host 4 takes over, the job goes on.
    r.on_close(o3, None);
    let why = dropped(&mut r, o3);
    assert!(
        why.contains("outside IMPI host 3 closed its connection before FINI")
            && why.contains("outside IMPI host 4 takes over"),
        "{why}"
    );
    assert_eq!(r.broken(), None);
    // The held packet goes to host 4; the rest of the cut one is discarded.
    let got = take(&mut r, o4);
    assert_eq!(header_of(&got).dest, out_ids[6]);
    assert_eq!(got.len(), HEADER_LEN);
    assert_eq!(feed(&mut r, h0, &long[HEADER_LEN + 10..]), 90);
    assert!(
        take(&mut r, o4).is_empty(),
        "the cut packet's rest is dropped"
    );
    // Later packets for host 3's processes go to host 4, from any inside host, and
    // RESUME-like PROTOACKs (negative count, index in pk_reserved) pass untouched.
    let mut ack = PacketRepr::control(PacketType::ProtoAck, in_ids[2], in_ids[5]);
    ack.count = -1;
    ack.reserved = 41;
    feed(&mut r, h1, &ack.emit());
    let got = header_of(&take(&mut r, o4));
    assert_eq!(
        (got.ty, got.count, got.reserved),
        (PacketType::ProtoAck, -1, 41)
    );
    assert_eq!((got.src, got.dest), (out_ids[2], out_ids[5]));
    // Host 4 may send for client 1's processes to any process of the cluster, even
    // one this relay does not stand for outside (process 4 is trunk 2's).
    let mut p = data_packet(out_ids[5], out_ids[4], 3).emit().to_vec();
    p.extend_from_slice(b"abc");
    feed(&mut r, o4, &p);
    let got = take(&mut r, h2);
    assert_eq!(header_of(&got).dest, in_ids[4]);
    assert_eq!(&got[HEADER_LEN..], b"abc");
    // FINI: host 3 counts as done both ways.
    let fini = PacketRepr::control(PacketType::Fini, Proc::FINI, Proc::FINI).emit();
    for &h in &[h0, h1, h2] {
        feed(&mut r, h, &fini);
    }
    assert_eq!(take(&mut r, o4), fini);
    feed(&mut r, o4, &fini);
    for &h in &[h0, h1, h2] {
        assert_eq!(take(&mut r, h), fini);
    }
    while r.poll_event().is_some() {}
    assert!(r.is_done());
    assert_eq!(r.broken(), None);
}

#[test]
fn a_packet_cut_by_a_relay_hosts_death_is_not_but_its_last_host_or_an_inside_host_is() {
    // Host 3 dies, then host 4, the last of client 1: the job cannot finish.
    let (mut r, c, _, _) = survivable_net(1 << 16);
    r.on_close(c[3], Some("read failed (reset)".into()));
    dropped(&mut r, c[3]);
    assert_eq!(r.broken(), None);
    r.on_close(c[4], None);
    let why = dropped(&mut r, c[4]);
    assert_eq!(r.broken(), Some(why.as_str()));
    // A relay host dying in the middle of a packet: its packets go on only once whole
    // (here 4000 data bytes, beyond the read-ahead of 1024), so nothing of it reached
    // the inside host, whose stream stays whole; the job goes on.
    let (mut r, c, _, out_ids) = survivable_net(1 << 16);
    let mut p = data_packet(out_ids[5], out_ids[0], 4000).emit().to_vec();
    p.extend(pattern_bytes(4000));
    assert_eq!(feed(&mut r, c[3], &p[..3000]), 3000);
    assert!(take(&mut r, c[0]).is_empty(), "held until whole");
    r.on_close(c[3], None);
    dropped(&mut r, c[3]);
    assert_eq!((r.poll_event(), r.broken()), (None, None));
    // Once whole, it streams to the inside host as fast as that one takes it; when the
    // relay host dies meanwhile, the rest still goes.
    let (mut r, c, in_ids, _) = survivable_net(300);
    assert_eq!(feed(&mut r, c[3], &p), p.len(), "read whole");
    let mut got = take(&mut r, c[0]);
    assert!(got.len() < p.len(), "bounded by the destination's buffer");
    r.on_close(c[3], None);
    dropped(&mut r, c[3]);
    assert_eq!(r.broken(), None);
    got.extend(take(&mut r, c[0]));
    assert_eq!(header_of(&got).src, in_ids[5]);
    assert_eq!(&got[HEADER_LEN..], &p[HEADER_LEN..]);
    // An inside host's loss stays fatal.
    let (mut r, c, _, _) = survivable_net(1 << 16);
    r.on_close(c[1], None);
    let why = dropped(&mut r, c[1]);
    assert_eq!(r.broken(), Some(why.as_str()));
}
