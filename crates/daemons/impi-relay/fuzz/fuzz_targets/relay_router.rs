//! The data-phase router fed arbitrary bytes on every kind of connection: accepted ones
//! (handshake first) on the global and a private port, and one the relay dialed. The
//! first byte of every chunk picks the connection and whether it is a read, a write
//! (the socket took that many bytes) or a close. Whatever arrives, the router must not
//! panic and its send buffers must stay within their bound.
#![no_main]

use crossmpi_impi::wire::addr::HostAddr;
use crossmpi_impi::wire::tables::{ClientInfo, GlobalTables};
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
    ).expect("a consistent pair of views")
}

fuzz_target!(|data: &[u8]| {
    let topo = topology();
    let dial = topo.dials()[0];
    let mut r = Router::new(
        topo,
        RouterConfig {
            send_buffer: BUFFER,
            read_ahead: 256,
            max_handshakes: 4,
        },
    );
    let mut conns = vec![r.dialed(&dial)];
    conns.extend(r.accept(Acceptor::Global));
    conns.extend(r.accept(Acceptor::Private { client: 0 }));
    conns.extend(r.accept(Acceptor::Private { client: 0 }));
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
            assert!(
                r.write_buf(c).len() <= BUFFER + 128 + 4,
                "send buffer over its bound"
            );
        }
        while r.poll_event().is_some() {}
    }
});
