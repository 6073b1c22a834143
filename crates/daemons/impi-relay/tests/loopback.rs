//! Whole jobs through relays on 127.0.0.1: the real IMPI server, relays, and simulated
//! clusters (the client state machine of crossmpi-impi as the agent, one thread per host
//! connection) that run the host dance on the tables they got and send every remote
//! process a DATA packet whose fields and data the receiver checks.
//!
//! Every cluster uses 127.0.0.1 and the same pids, so process identities collide and the
//! relays must rename them consistently in the tables and in every packet.

mod common;

use common::{
    dance, fini, start_encrypted_trunks, start_keyed_server, start_relay, start_server,
    start_trunks, startup, Cluster, TIMEOUT,
};
use crossmpi_impi::wire::packet::{PacketHeader, PacketRepr, PacketType, Proc, HEADER_LEN};
use crossmpi_impi::wire::tables::GlobalTables;
use crossmpi_impi::wire::tables::Version;
use crossmpi_impi_relay::secure::{JobKey, Role, SecureChannel, ENCRYPT_MAJOR, VERSION};
use crossmpi_impi_relay::survive::SURVIVE_MAJOR;
use crossmpi_impi_relay::topology::proc_ids;
use crossmpi_impi_relay::trunk::{trunk_of, TrunkMode, SOURCE_TRUNK_MAJOR};
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

const CID: u64 = 7;

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

/// One connection of a host: sends its packets then FINI, and reads until FINI.
/// Returns the (source, destination) world ranks of the packets it received.
fn converse(
    mut sock: TcpStream,
    tables: &GlobalTables,
    me: u32,
    sends: Vec<(u32, u32)>,
    extra: usize,
) -> Result<Vec<(u32, u32)>, String> {
    let procs = proc_ids(tables);
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
/// Every packet carries `extra` more data bytes (long packets stream through relays).
fn run_cluster(c: Cluster, addr: SocketAddr, extra: usize) -> Result<(), String> {
    let (tables, mut client, mut agent) = startup(&c, addr)?;
    let my = c.rank as usize;
    let first_rank = tables.first_rank(my);
    // World ranks per global host.
    let mut ranks_of_host = Vec::new();
    let mut w = 0u32;
    for (_, h) in tables.hosts() {
        ranks_of_host.push(w..w + h.nprocs);
        w += h.nprocs;
    }
    let conns = dance(&c, &tables)?;
    let mut threads = Vec::new();
    let client_of_host: Vec<usize> = tables.hosts().map(|(c, _)| c).collect();
    for (k, h, s) in conns {
        let me = first_rank + k as u32;
        // As crossmpi sends: to the host holding the destination, unless the relays in
        // source mode marked its client; then all of the client's processes through
        // the host of this process's own trunk.
        let peer = &tables.clients[client_of_host[h as usize]];
        let marked = peer.versions.iter().find(|v| v.major == SOURCE_TRUNK_MAJOR);
        let sends = match marked {
            None => ranks_of_host[h as usize].clone().map(|d| (me, d)).collect(),
            Some(v) => {
                let first = tables.first_host(client_of_host[h as usize]);
                let own = first + trunk_of(c.listeners.len() as u32, v.minor, k as u32);
                let ranks = ranks_of_host[first as usize].start
                    ..ranks_of_host[first as usize + peer.hosts.len() - 1].end;
                let on_own = h == own;
                ranks.filter(|_| on_own).map(|d| (me, d)).collect()
            }
        };
        let t = tables.clone();
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

/// One job: clients with the given host counts, each reached directly (0) or through
/// its own relays (that many trunks, in destination mode). Every party must succeed.
fn job(clusters: &[(usize, u32)], extra: usize, send_buffer: usize) {
    job_in(TrunkMode::Destination, clusters, extra, send_buffer)
}

fn job_in(mode: TrunkMode, clusters: &[(usize, u32)], extra: usize, send_buffer: usize) {
    job_keyed(mode, None, clusters, extra, send_buffer)
}

/// As [`job_in`]; with `key`, every relay encrypts with it.
fn job_keyed(
    mode: TrunkMode,
    key: Option<u64>,
    clusters: &[(usize, u32)],
    extra: usize,
    send_buffer: usize,
) {
    job_with(mode, key, None, clusters, extra, send_buffer)
}

/// As [`job_keyed`]; `splice` overrides CROSSMPI_RELAY_SPLICE.
fn job_with(
    mode: TrunkMode,
    key: Option<u64>,
    splice: Option<bool>,
    clusters: &[(usize, u32)],
    extra: usize,
    send_buffer: usize,
) {
    let (server, server_thread) = start_keyed_server(clusters.len() as u32, key);
    let mut relays = Vec::new();
    let mut threads = Vec::new();
    for (rank, &(nhosts, trunks)) in clusters.iter().enumerate() {
        let rank = rank as u32;
        let addr = if trunks > 0 {
            let (addr, t) =
                start_encrypted_trunks(rank, server, trunks, mode, send_buffer, key, splice);
            relays.extend(t);
            addr
        } else {
            server
        };
        let mut c = Cluster::new(rank, nhosts, rank % 2 == 1);
        c.key = key;
        threads.push(std::thread::spawn(move || run_cluster(c, addr, extra)));
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
    job(&[(2, 0), (3, 1)], 0, 256 << 10);
}

#[test]
fn private_cluster_ranked_first_and_lockstep_agent() {
    job(&[(3, 1), (2, 0)], 0, 256 << 10);
}

#[test]
fn two_private_clusters_and_a_global_one_between() {
    job(&[(2, 1), (1, 0), (2, 1)], 0, 256 << 10);
}

#[test]
fn long_packets_stream_through_small_buffers() {
    // 1 MiB packets through 4 KiB relay buffers: forwarded as they arrive.
    job(&[(2, 1), (2, 1)], 1 << 20, 4096);
}

#[test]
fn two_trunks_private_with_global() {
    job(&[(2, 0), (3, 2)], 0, 256 << 10);
    job(&[(3, 2), (2, 0)], 0, 256 << 10);
}

#[test]
fn four_trunks_private_with_global() {
    job(&[(4, 0), (5, 4)], 0, 256 << 10);
}

#[test]
fn private_clusters_with_different_trunk_counts() {
    // 2 and 4 trunks, and 2 and 3 with a global cluster between.
    job(&[(4, 2), (5, 4)], 0, 256 << 10);
    job(&[(3, 2), (3, 0), (4, 3)], 0, 256 << 10);
}

#[test]
fn source_mode_trunks() {
    job_in(TrunkMode::Source, &[(2, 0), (3, 2)], 0, 256 << 10);
    job_in(TrunkMode::Source, &[(4, 2), (5, 4)], 0, 256 << 10);
    job_in(TrunkMode::Source, &[(3, 2), (4, 2)], 1 << 20, 4096);
}

#[test]
fn long_packets_through_trunks_and_small_buffers() {
    job(&[(3, 2), (4, 2)], 1 << 20, 4096);
}

#[test]
fn spliced_packet_data() {
    // Packet data moved with splice(2): long packets through small buffers (spliced
    // and copied in turn), through 1 and 2 relays and with trunks, short packets too.
    let splice = |clusters: &[(usize, u32)], extra, buffer| {
        job_with(
            TrunkMode::Destination,
            None,
            Some(true),
            clusters,
            extra,
            buffer,
        )
    };
    splice(&[(2, 1), (2, 1)], 1 << 20, 4096);
    splice(&[(2, 0), (3, 1)], 1 << 20, 256 << 10);
    splice(&[(3, 2), (4, 2)], 1 << 18, 8192);
    splice(&[(2, 1), (1, 0), (2, 1)], 0, 256 << 10);
}

#[test]
fn encrypted_private_clusters() {
    let key = Some(0x0123_4567_89ab_cdef);
    job_keyed(TrunkMode::Destination, key, &[(2, 1), (3, 1)], 0, 256 << 10);
    // 1 MiB packets through 4 KiB buffers, records of 16 KiB; and with trunks.
    job_keyed(
        TrunkMode::Destination,
        key,
        &[(2, 1), (2, 1)],
        1 << 20,
        4096,
    );
    job_keyed(TrunkMode::Destination, key, &[(3, 2), (4, 2)], 0, 256 << 10);
    job_keyed(TrunkMode::Source, key, &[(3, 2), (4, 2)], 1 << 16, 4096);
}

/// A job whose relays disagree on encryption: both sides' relays end with `why`.
fn encryption_mismatch(encrypting: &[(usize, u32, bool)], why: &[&str]) {
    let (server, server_thread) = start_keyed_server(encrypting.len() as u32, Some(7));
    let mut relays = Vec::new();
    let mut clients = Vec::new();
    for (rank, &(nhosts, trunks, encrypt)) in encrypting.iter().enumerate() {
        let rank = rank as u32;
        let addr = if trunks > 0 {
            let key = encrypt.then_some(7);
            let (addr, t) = start_encrypted_trunks(
                rank,
                server,
                trunks,
                TrunkMode::Destination,
                1 << 16,
                key,
                None,
            );
            relays.push(t);
            addr
        } else {
            server
        };
        let mut c = Cluster::new(rank, nhosts, false);
        c.key = Some(7);
        clients.push(std::thread::spawn(move || run_cluster(c, addr, 0)));
    }
    for (t, want) in relays.into_iter().zip(why) {
        for trunk in t {
            let e = trunk.join().unwrap().unwrap_err();
            assert!(e.contains(want), "{e}");
        }
    }
    for c in clients {
        assert!(c.join().unwrap().is_err(), "no cluster finishes");
    }
    let _ = server_thread.join().unwrap();
}

#[test]
fn relays_that_disagree_on_encryption_end_with_the_reason() {
    encryption_mismatch(
        &[(2, 1, true), (2, 1, false)],
        &[
            "client 1 does not encrypt",
            "client 0's relay encrypts (-encrypt)",
        ],
    );
    // The inside clusters never get their last tables: every relay stops first.
    encryption_mismatch(
        &[(2, 1, false), (3, 2, true)],
        &[
            "client 1's relay encrypts (-encrypt)",
            "client 0 does not encrypt",
        ],
    );
}

#[test]
fn a_trunk_beyond_the_count_is_refused_and_the_job_goes_on() {
    let (server, server_thread) = start_server(2);
    let (relay_addr, relays) = start_trunks(1, server, 2, TrunkMode::Destination, 1 << 16);
    let mut stray = TcpStream::connect(relay_addr).unwrap();
    let mut join = Vec::new();
    crossmpi_impi_relay::trunk::TrunkMsg::Join { trunk: 5 }.emit(&mut join);
    stray.write_all(&join).unwrap();
    stray.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut b = [0u8; 1];
    assert_eq!(stray.read(&mut b).unwrap_or(0), 0, "trunk 5 of 2 is closed");
    let a = std::thread::spawn(move || run_cluster(Cluster::new(0, 2, false), server, 0));
    let c = std::thread::spawn(move || run_cluster(Cluster::new(1, 3, false), relay_addr, 0));
    a.join().unwrap().unwrap();
    c.join().unwrap().unwrap();
    for t in relays {
        t.join().unwrap().unwrap();
    }
    server_thread.join().unwrap().unwrap();
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
    let a = std::thread::spawn(move || run_cluster(Cluster::new(0, 1, false), server, 0));
    let c = std::thread::spawn(move || run_cluster(Cluster::new(1, 2, false), relay_addr, 0));
    a.join().unwrap().unwrap();
    c.join().unwrap().unwrap();
    relay.join().unwrap().unwrap();
    server_thread.join().unwrap().unwrap();
}

#[test]
fn a_malformed_packet_ends_the_relay_and_the_job() {
    let (server, server_thread) = start_server(2);
    let (relay_addr, relay) = start_relay(1, server, 1 << 16);
    // Client 0 is driven by hand: it sends a packet of unknown type to the relay.
    let gc = Cluster::new(0, 1, false);
    let inside = std::thread::spawn(move || run_cluster(Cluster::new(1, 1, false), relay_addr, 0));
    let (tables, _client, _agent) = startup(&gc, server).unwrap();
    let (mut s, _) = gc.listeners[0].accept().unwrap();
    let mut b = [0u8; 4];
    s.read_exact(&mut b).unwrap();
    assert_eq!(u32::from_be_bytes(b), 1, "the relay is host 1 outside");
    let procs = proc_ids(&tables);
    let mut bad = packet(procs[0], procs[1], 0, 1, 0).emit();
    bad[3] = 9;
    s.write_all(&bad).unwrap();
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    // The relay drops the connection: what it forwarded before, then the end of the
    // stream (a read timeout would fail here).
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).unwrap();
    // The job cannot finish: the relay ends at once, naming the packet, and closes its
    // inside connections and the server's, so the inside cluster and the server end
    // although client 0's agent is still connected.
    let e = relay.join().unwrap().unwrap_err();
    assert!(
        e.contains("outside IMPI host 0: ")
            && e.contains("pk_type 9")
            && e.contains("cannot finish"),
        "{e}"
    );
    closed_not_timed_out(inside.join().unwrap(), "the inside cluster");
    assert!(
        server_thread.join().unwrap().is_err(),
        "the server sees client 1 leave"
    );
}

/// A party that failed because a connection closed, not because it waited until
/// [`TIMEOUT`] (a hang).
fn closed_not_timed_out(r: Result<(), String>, who: &str) {
    let e = r.expect_err(who);
    assert!(
        !e.contains("timed out") && !e.contains("temporarily unavailable"),
        "{who} waited instead of seeing the connection close: {e}"
    );
}

#[test]
fn a_connection_lost_between_private_clusters_ends_every_party() {
    // PC-PC: client 0 (2 hosts) behind one relay, client 1 (2 hosts) behind 2 trunks.
    // Client 0's hosts take one packet, then their connections to relay 0 close
    // mid-job (as when the cluster's nodes die). Relay 0 ends, closing everything it
    // holds; client 1's relays lose their connections to relay 0 and end too, closing
    // their inside connections, so client 1's hosts, which wait for client 0's
    // packets, see their connections close instead of waiting forever. Trunk 1 has no
    // connection to the IMPI server: only the lost connection can tell it.
    let (server, server_thread) = start_server(2);
    let (a0, relay0) = start_relay(0, server, 1 << 16);
    let (a1, relays1) = start_trunks(1, server, 2, TrunkMode::Destination, 1 << 16);
    let started = std::time::Instant::now();
    let inside1 = std::thread::spawn(move || run_cluster(Cluster::new(1, 2, false), a1, 0));
    let c0 = Cluster::new(0, 2, false);
    let (tables, _client, _agent) = startup(&c0, a0).unwrap();
    let mut conns = dance(&c0, &tables).unwrap();
    assert_eq!(conns.len(), 2, "one virtual host for client 1, 2 hosts");
    let (_, _, mut s) = conns.remove(0);
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut h = [0u8; HEADER_LEN];
    s.read_exact(&mut h).unwrap();
    drop((s, conns));
    let e0 = relay0.join().unwrap().unwrap_err();
    assert!(
        e0.contains("inside IMPI host")
            && e0.contains("before FINI")
            && e0.contains("cannot finish"),
        "{e0}"
    );
    // Relay 0 closes its sockets with bytes still unread in some of them, so the
    // kernel may send a reset instead of an orderly close: a trunk then sees its
    // read fail rather than the connection end. Either way it names the outside
    // host it lost and that the loss came before FINI.
    let lost = |e: &str| {
        e.contains("outside IMPI host 0 closed its connection before FINI")
            || (e.contains("outside IMPI host 0: read failed (") && e.contains("(before FINI)"))
    };
    let mut trunks = relays1.into_iter().map(|t| t.join().unwrap().unwrap_err());
    let e1 = trunks.next().unwrap();
    // Trunk 0 may hear first from the server, which ends the job as relay 0 leaves.
    assert!(
        lost(&e1) || e1.contains("IMPI server closed the connection"),
        "{e1}"
    );
    let e1 = trunks.next().unwrap();
    assert!(
        lost(&e1),
        "trunk 1 names its lost connection to relay 0: {e1}"
    );
    closed_not_timed_out(inside1.join().unwrap(), "client 1");
    assert!(server_thread.join().unwrap().is_err(), "the job failed");
    let took = started.elapsed();
    eprintln!("every party ended {took:?} after the start");
    assert!(
        took < TIMEOUT / 2,
        "no party waited for a timeout: {took:?}"
    );
}

#[test]
fn a_tampered_record_ends_the_encrypting_relay_and_the_job() {
    // Client 1 is behind an encrypting relay; client 0 poses as an encrypting relay
    // (its tables carry the mark, its host speaks the record layer) and sends a record
    // with one bit flipped. The relay drops that connection, and since the job cannot
    // finish it ends, closing its inside connections: client 1's hosts see them close
    // instead of waiting for client 0's packets.
    let key = 0x5eed_u64;
    let (server, server_thread) = start_keyed_server(2, Some(key));
    let (relay_addr, mut relay) = start_encrypted_trunks(
        1,
        server,
        1,
        TrunkMode::Destination,
        1 << 16,
        Some(key),
        None,
    );
    let mut inside = Cluster::new(1, 2, false);
    inside.key = Some(key);
    let inside = std::thread::spawn(move || run_cluster(inside, relay_addr, 0));
    let mut fake = Cluster::new(0, 1, false);
    fake.key = Some(key);
    fake.marks.push(Version {
        major: ENCRYPT_MAJOR,
        minor: VERSION,
    });
    let (_tables, _client, _agent) = startup(&fake, server).unwrap();
    // The relay's outside host (host 1) connects to host 0.
    let (mut s, _) = fake.listeners[0].accept().unwrap();
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut channel = SecureChannel::new(JobKey::from_impi_key(key), Role::Acceptor, [7; 16]);
    s.write_all(channel.pending_out()).unwrap();
    let n = channel.pending_out().len();
    channel.on_written(n);
    while !channel.is_open() {
        let space = channel.read_space().unwrap();
        let n = s.read(space).unwrap();
        assert!(n > 0, "the relay sends its hello");
        channel.on_read(n).unwrap();
    }
    // Our first record (empty, proving the key) goes out intact; the next is altered.
    let first = channel.pending_out().to_vec();
    s.write_all(&first).unwrap();
    channel.on_written(first.len());
    assert_eq!(channel.seal(&0u32.to_be_bytes()), 4);
    let mut record = channel.pending_out().to_vec();
    *record.last_mut().unwrap() ^= 1;
    s.write_all(&record).unwrap();
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest); // the end of the stream (or a reset), not a timeout
    let e = relay.remove(0).join().unwrap().unwrap_err();
    assert!(
        e.contains("outside IMPI host 0: record 1 does not authenticate")
            && e.contains("cannot finish"),
        "the relay names the connection and the record: {e}"
    );
    closed_not_timed_out(inside.join().unwrap(), "client 1");
    assert!(server_thread.join().unwrap().is_err(), "the job failed");
}

/// Writes packet `p` (with `data`) on `s`.
fn send(s: &mut TcpStream, p: &PacketRepr, data: &[u8]) {
    s.write_all(&p.emit()).unwrap();
    s.write_all(data).unwrap();
}

/// Reads the next packet on `s`.
fn recv(s: &mut TcpStream) -> (PacketRepr, Vec<u8>) {
    let mut h = [0u8; HEADER_LEN];
    s.read_exact(&mut h).unwrap();
    let p = PacketRepr::parse(&PacketHeader::new_checked(&h[..]).unwrap(), 8 << 20).unwrap();
    let mut data = vec![0u8; p.data_len as usize];
    s.read_exact(&mut data).unwrap();
    (p, data)
}

/// A PROTOACK of the survival protocol: `count` -1 asks for a resend (RESUME), -2
/// answers one; `reserved` carries the receive count.
fn protoack(src: Proc, dest: Proc, count: i64, reserved: u64) -> PacketRepr {
    let mut p = PacketRepr::control(PacketType::ProtoAck, src, dest);
    (p.count, p.reserved) = (count, reserved);
    p
}

#[test]
fn a_dead_relay_host_is_survived_and_its_processes_reached_through_another() {
    // Client 0 poses as a cluster behind 2 relays marked survivable (its 2 hosts, one
    // process each, are "relays"); client 1 (2 hosts) is behind one real relay, which
    // is outside host 2 and dials both. Both are crossmpi: the job is survivable.
    // After a first exchange, client 0's host 1 closes its connection before FINI, as
    // a relay that dies. The real relay goes on: what client 1 sends to process 1 then
    // reaches host 0, the survival PROTOACKs pass untouched both ways, and the job
    // ends cleanly with every party succeeding.
    let (server, server_thread) = start_server(2);
    let (relay_addr, relay) = start_relay(1, server, 1 << 16);
    let c1 = Cluster::new(1, 2, false);
    let inside = std::thread::spawn(move || {
        let (tables, client, agent) = startup(&c1, relay_addr).unwrap();
        let conns = dance(&c1, &tables).unwrap();
        (tables, client, agent, conns)
    });
    let mut c0 = Cluster::new(0, 2, false);
    c0.marks.push(Version {
        major: SURVIVE_MAJOR,
        minor: 2,
    });
    let (out_tables, mut client0, mut agent0) = startup(&c0, server).unwrap();
    let conns0 = dance(&c0, &out_tables).unwrap();
    let order: Vec<(usize, u32)> = conns0.iter().map(|(k, peer, _)| (*k, *peer)).collect();
    assert_eq!(
        order,
        [(0, 2), (1, 2)],
        "the relay (outside host 2) dials both"
    );
    let mut hosts0: Vec<TcpStream> = conns0.into_iter().map(|(_, _, s)| s).collect();
    let (in_tables, mut client1, mut agent1, conns1) = inside.join().unwrap();
    let mut hosts1: Vec<TcpStream> = conns1.into_iter().map(|(_, _, s)| s).collect();
    for s in hosts0.iter().chain(&hosts1) {
        s.set_read_timeout(Some(TIMEOUT)).unwrap();
    }
    let (outs, ins) = (proc_ids(&out_tables), proc_ids(&in_tables));
    let data = |s: usize, d: usize, index: u64| {
        let body = payload(s as u32, d as u32, 0);
        let mut p = packet(ins[s], ins[d], s as u32, d as u32, body.len());
        p.reserved = index;
        (p, body)
    };
    // First exchange: packet 1 of every pair, each way, through the relay.
    for (k, h) in hosts1.iter_mut().enumerate() {
        for d in 0..2 {
            let (p, body) = data(2 + k, d, 1);
            send(h, &p, &body);
        }
    }
    for (k, h) in hosts0.iter_mut().enumerate() {
        for d in 2..4 {
            let (mut p, body) = data(k, d, 1);
            (p.src, p.dest) = (outs[k], outs[d]);
            send(h, &p, &body);
        }
        for s in 2..4 {
            let (p, body) = recv(h);
            assert_eq!(
                (p.src, p.dest, p.reserved, body.len()),
                (outs[s], outs[k], 1, payload(s as u32, k as u32, 0).len())
            );
        }
    }
    for (k, h) in hosts1.iter_mut().enumerate() {
        for s in 0..2 {
            let (p, _) = recv(h);
            assert_eq!((p.src, p.dest, p.reserved), (ins[s], ins[2 + k], 1));
        }
    }
    // Host 1's relay dies. Host 0 now carries process 1's traffic: RESUME (count 1
    // received) and its packet 2 to each of client 1's processes.
    drop(hosts0.remove(1));
    let h0 = &mut hosts0[0];
    for d in 2..4 {
        send(h0, &protoack(outs[1], outs[d], -1, 1), &[]);
        let (mut p, body) = data(1, d, 2);
        (p.src, p.dest) = (outs[1], outs[d]);
        send(h0, &p, &body);
    }
    // Client 1 answers the RESUME and sends packet 2 to process 1: both reach host 0.
    for (k, h) in hosts1.iter_mut().enumerate() {
        let (p, _) = recv(h);
        assert_eq!((p.ty, p.count, p.reserved), (PacketType::ProtoAck, -1, 1));
        assert_eq!((p.src, p.dest), (ins[1], ins[2 + k]));
        let (p, _) = recv(h);
        assert_eq!((p.ty, p.src, p.reserved), (PacketType::Data, ins[1], 2));
        send(h, &protoack(ins[2 + k], ins[1], -2, 2), &[]);
        let (p, body) = data(2 + k, 1, 2);
        send(h, &p, &body);
        h.write_all(&fini()).unwrap();
    }
    // The two sources interleave; each one's packets stay in order.
    let mut by_source = [Vec::new(), Vec::new()];
    for _ in 0..4 {
        let (p, body) = recv(h0);
        let s = outs.iter().position(|q| *q == p.src).unwrap();
        assert_eq!(p.dest, outs[1]);
        by_source[s - 2].push((p.ty, p.count, p.reserved, body));
    }
    for (k, got) in by_source.into_iter().enumerate() {
        let body = payload(2 + k as u32, 1, 0);
        let want = vec![
            (PacketType::ProtoAck, -2, 2, Vec::new()),
            (PacketType::Data, 0, 2, body),
        ];
        assert_eq!(got, want, "from process {}", 2 + k);
    }
    // FINI: the dead host counts as done; every party ends cleanly.
    assert_eq!(recv(h0).0.ty, PacketType::Fini, "the relay's FINI");
    h0.write_all(&fini()).unwrap();
    for h in hosts1.iter_mut() {
        assert_eq!(recv(h).0.ty, PacketType::Fini);
    }
    for (client, agent) in [(&mut client0, &mut agent0), (&mut client1, &mut agent1)] {
        client.finish().unwrap();
        agent.write_all(&client.take_output()).unwrap();
    }
    relay.join().unwrap().unwrap();
    server_thread.join().unwrap().unwrap();
}
