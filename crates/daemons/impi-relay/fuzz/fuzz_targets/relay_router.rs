//! The data-phase router fed arbitrary bytes on every kind of connection: accepted ones
//! (handshake first) on the global and a private port, and one the relay dialed. The
//! first byte of every chunk picks the connection and whether it is a read, a write
//! (the socket took that many bytes) or a close. Whatever arrives, the router must not
//! panic and its send buffers must stay within their bound. Every input drives the
//! relay of a plain job and that of a survivable one.
#![no_main]

use crossmpi_impi::wire::addr::HostAddr;
use crossmpi_impi::wire::tables::{ClientInfo, GlobalTables, Version};
use crossmpi_impi_relay::router::{Router, RouterConfig};
use crossmpi_impi_relay::topology::{Acceptor, Topology};
use libfuzzer_sys::fuzz_target;

const BUFFER: usize = 512;

/// Client 0 outside: one host of two processes. Client 1 (the relay's): two hosts of
/// one process inside, one host outside.
fn topology() -> Topology {
    let lam = ClientInfo::one_host(HostAddr([1; 16]), 5000, &[1, 2], 1024);
    let mut virtual_host = ClientInfo::one_host(HostAddr([5; 16]), 7000, &[1, 2], 1024);
    virtual_host.procs = lam.procs.clone();
    let relay = ClientInfo::one_host(HostAddr([2; 16]), 6000, &[7, 8], 1024);
    let mut mine = ClientInfo::one_host(HostAddr([3; 16]), 5001, &[7], 1024);
    let second = ClientInfo::one_host(HostAddr([4; 16]), 5002, &[8], 1024);
    mine.hosts.extend(second.hosts);
    mine.procs.extend(second.procs);
    let inside = GlobalTables {
        clients: vec![virtual_host, mine],
    };
    let outside = GlobalTables {
        clients: vec![lam, relay],
    };
    Topology::new(
        1,
        crossmpi_impi_relay::trunk::Trunking::SINGLE,
        &inside,
        &outside,
    )
    .expect("a consistent pair of views")
}

/// The same relay in a survivable job (crossmpi/impi-relay/src/survive.rs): client 0
/// outside is two relay hosts (marked) of one process each, both dialed, so the
/// router's survival (a relay host lost, its share taken over, its packets passed on
/// only once whole) is driven too.
fn survivable_topology() -> Topology {
    let crossmpi = Version {
        major: 0x4358_4d50,
        minor: 1,
    };
    let marked = Version {
        major: crossmpi_impi_relay::survive::SURVIVE_MAJOR,
        minor: 2,
    };
    let mut lam = ClientInfo::one_host(HostAddr([1; 16]), 5000, &[1], 1024);
    let other = ClientInfo::one_host(HostAddr([6; 16]), 5003, &[2], 1024);
    lam.hosts.extend(other.hosts);
    lam.procs.extend(other.procs);
    lam.versions.extend([crossmpi, marked]);
    let mut virtual_host = ClientInfo::one_host(HostAddr([5; 16]), 7000, &[1, 2], 1024);
    virtual_host.procs = lam.procs.clone();
    virtual_host.versions = lam.versions.clone();
    let mut relay = ClientInfo::one_host(HostAddr([2; 16]), 6000, &[7, 8], 1024);
    relay.versions.push(crossmpi);
    let mut mine = ClientInfo::one_host(HostAddr([3; 16]), 5001, &[7], 1024);
    let second = ClientInfo::one_host(HostAddr([4; 16]), 5002, &[8], 1024);
    mine.hosts.extend(second.hosts);
    mine.procs.extend(second.procs);
    mine.versions = relay.versions.clone();
    let inside = GlobalTables {
        clients: vec![virtual_host, mine],
    };
    let outside = GlobalTables {
        clients: vec![lam, relay],
    };
    let topo = Topology::new(
        1,
        crossmpi_impi_relay::trunk::Trunking::SINGLE,
        &inside,
        &outside,
    )
    .expect("a consistent pair of views");
    assert!(topo.survivable());
    topo
}

/// Drives a router on `topo` with `data`; `bound`: what a send buffer may hold.
fn drive(topo: Topology, data: &[u8], bound: usize) {
    let dials = topo.dials().to_vec();
    let mut r = Router::new(
        topo,
        RouterConfig {
            send_buffer: BUFFER,
            read_ahead: 256,
            max_handshakes: 4,
            // Both ways of passing packets on, picked by the input.
            cut_through: data.len() % 2 == 0,
        },
    );
    // The control byte picks one of 4 connections: the dialed ones, the two inside
    // hosts, and (with one dial) one accepted at the global port.
    let mut conns: Vec<_> = dials.iter().map(|d| r.dialed(d)).collect();
    if conns.len() < 2 {
        conns.extend(r.accept(Acceptor::Global));
    }
    conns.extend(r.accept(Acceptor::Private { client: 0 }));
    conns.extend(r.accept(Acceptor::Private { client: 0 }));
    assert_eq!(conns.len(), 4);
    let mut rest = data;
    while let Some((&ctl, tail)) = rest.split_first() {
        let conn = conns[usize::from(ctl & 3) % conns.len()];
        let len = usize::from(ctl >> 3).min(tail.len());
        let (chunk, tail) = tail.split_at(len);
        rest = tail;
        match (ctl >> 2) & 1 {
            0 if len == 0 => r.on_close(conn, None),
            0 => {
                let mut at = 0;
                while at < chunk.len() {
                    let Some(buf) = r.read_buf(conn) else { break };
                    let n = buf.len().min(chunk.len() - at);
                    buf[..n].copy_from_slice(&chunk[at..at + n]);
                    r.on_read(conn, n);
                    at += n;
                }
            }
            _ => {
                let n = r.write_buf(conn).len().min(len * 16);
                r.on_written(conn, n);
            }
        }
        for &c in &conns {
            assert!(r.write_buf(c).len() <= bound, "send buffer over its bound");
        }
        while r.poll_event().is_some() {}
    }
}

fuzz_target!(|data: &[u8]| {
    // A header and a handshake beyond the bound at most; in the survivable job also
    // the rest of a whole packet whose relay host died while it streamed out.
    drive(topology(), data, BUFFER + 128 + 4);
    drive(survivable_topology(), data, BUFFER + 128 + 4 + 1024);
});
