//! Fixtures of the unit tests.

use crossmpi_impi::wire::addr::HostAddr;
use crossmpi_impi::wire::tables::ClientInfo;
use std::net::{IpAddr, Ipv4Addr};

pub fn ip(a: u8, b: u8, c: u8, d: u8) -> HostAddr {
    HostAddr::from_ip(IpAddr::V4(Ipv4Addr::new(a, b, c, d)))
}

/// A client whose hosts are (address, port, pids), each process named by its host's
/// address, with the marks `(ackmark, hiwater)` on every host.
pub fn client(hosts: &[(HostAddr, u32, &[i64])], marks: (u32, u32)) -> ClientInfo {
    let mut parts = hosts
        .iter()
        .map(|&(addr, port, pids)| ClientInfo::one_host(addr, port, pids, 4096));
    let mut info = parts.next().expect("a client has a host");
    for more in parts {
        info.hosts.extend(more.hosts);
        info.procs.extend(more.procs);
    }
    for h in &mut info.hosts {
        (h.ackmark, h.hiwater) = marks;
    }
    info
}
