//! Fixtures of the unit tests.

use crate::rewrite::{InsideLabels, InwardContext, RelayPlace};
use crate::secure::ENCRYPT_MAJOR;
use crate::survive::SURVIVE_MAJOR;
use crate::trunk::{TrunkAddrs, TrunkMode};
use crossmpi_impi::wire::addr::HostAddr;
use crossmpi_impi::wire::label::Label;
use crossmpi_impi::wire::tables::{ClientInfo, GlobalTables, Version};
use std::collections::BTreeMap;
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

/// A client whose hosts (10.0.0.h, one per entry) hold the given process counts,
/// pids 100, 101, ... on each; host h has marks `marks` + h.
pub fn cluster(procs_per_host: &[u32], marks: (u32, u32)) -> ClientInfo {
    let pids: Vec<Vec<i64>> = procs_per_host
        .iter()
        .map(|&n| (100..100 + i64::from(n)).collect())
        .collect();
    let hosts: Vec<(HostAddr, u32, &[i64])> = pids
        .iter()
        .enumerate()
        .map(|(h, p)| (ip(10, 0, 0, h as u8 + 1), 5000 + h as u32, &p[..]))
        .collect();
    let mut info = client(&hosts, marks);
    for (h, host) in info.hosts.iter_mut().enumerate() {
        host.ackmark += h as u32;
        host.hiwater += h as u32;
    }
    info
}

/// Both views through the relays at `p` (client 0 inside, `other` client 1 outside
/// as its own relays would show it, unrenamed), with the virtual hosts' ports.
pub fn views(
    p: &RelayPlace,
    inside: &ClientInfo,
    other: &ClientInfo,
    ports: Vec<Vec<u16>>,
) -> (GlobalTables, GlobalTables) {
    let mut labels = InsideLabels::default();
    let mut replies = BTreeMap::new();
    for label in Label::LAM_ORDER {
        let mut reply = labels
            .outward(p, label, &inside.contribution(label))
            .unwrap();
        reply.extend(other.contribution(label));
        replies.insert(label, reply);
    }
    let decode = |data: &dyn Fn(Label) -> Vec<u8>| {
        let replies = Label::LAM_ORDER
            .iter()
            .map(|&label| {
                let r = crossmpi_impi::wire::startup::CollReply {
                    label,
                    client_mask: 3,
                    data: data(label),
                };
                (label, r)
            })
            .collect();
        GlobalTables::decode(2, &replies).unwrap()
    };
    let out = decode(&|l| replies[&l].clone());
    let mut ctx = InwardContext::new(p.clone(), 2);
    for label in Label::LAM_ORDER {
        ctx.learn(label, &replies[&label]).unwrap();
    }
    assert_eq!(
        ctx.inward(&labels, Label::HPort, &replies[&Label::HPort])
            .unwrap(),
        None,
        "H_PORT waits for the private ports"
    );
    ctx.ports = Some(ports);
    let inv = decode(&|l| ctx.inward(&labels, l, &replies[&l]).unwrap().unwrap());
    // The cluster sees itself unchanged, but for the marks its relays add.
    let mut own = inv.clients[0].clone();
    let k = p.trunks.len() as u32;
    let marks: Vec<Version> = [
        (p.encrypt, ENCRYPT_MAJOR, crate::secure::VERSION),
        (p.survive && k >= 2, SURVIVE_MAJOR, k),
    ]
    .into_iter()
    .filter_map(|(on, major, minor)| on.then_some(Version { major, minor }))
    .collect();
    assert_eq!(own.versions, [inside.versions.clone(), marks].concat());
    own.versions.clone_from(&inside.versions);
    assert_eq!(own, *inside, "the cluster sees itself unchanged");
    assert_eq!(
        inv.flow_marks(),
        out.flow_marks(),
        "flow control stays end to end"
    );
    assert_eq!(inv.max_data_len(), out.max_data_len());
    (out, inv)
}

/// Client 0 through `k` relays in destination mode: relay t at 192.0.2.(10+t), global
/// port 7000+t, private address 10.0.0.(250+t).
pub fn trunk_place(k: u8) -> RelayPlace {
    RelayPlace {
        me: 0,
        trunks: (0..k)
            .map(|t| TrunkAddrs {
                global: ip(192, 0, 2, 10 + t),
                global_port: 7000 + u32::from(t),
                private: ip(10, 0, 0, 250 + t),
            })
            .collect(),
        mode: TrunkMode::Destination,
        encrypt: false,
        survive: true,
    }
}

/// Both views of a survivable job: client 0 (hosts of 2, 1, 2 processes) through `k`
/// relays in destination mode (marked survivable by them), client 1 (2 hosts of 2)
/// outside, its hosts relays (marked); both crossmpi.
pub fn survivable_views(k: u8) -> (GlobalTables, GlobalTables) {
    let crossmpi = Version {
        major: crate::rewrite::CROSSMPI_MAJOR,
        minor: 1,
    };
    let mut inside = cluster(&[2, 1, 2], (8, 16));
    inside.versions.push(crossmpi);
    let mut other = cluster(&[2, 2], (4, 32));
    other.versions.extend([
        crossmpi,
        Version {
            major: SURVIVE_MAJOR,
            minor: 2,
        },
    ]);
    let ports = (0..u16::from(k)).map(|t| vec![0, 6000 + t]).collect();
    views(&trunk_place(k), &inside, &other, ports)
}
