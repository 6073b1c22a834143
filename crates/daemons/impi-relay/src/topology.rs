//! Who is where in the two views of the job, once startup is complete: every process's
//! identity inside and outside, the host connections the relay has on each side and
//! who opens each (IMPI's rule: the higher-ranked host connects).
//!
//! With K trunks, relay k is its cluster's host k outside and every other client's
//! virtual host k inside ([`crate::trunk`]); it has the connections of those hosts only.
//! Packets from outside take the relay standing for their destination's host, as plain
//! IMPI routing sends them. From inside, in destination mode likewise (the relay whose
//! virtual host holds the destination); in source mode, the relay of the sending
//! process (crossmpi inside sends through it), so both directions of a pair of
//! processes take the same relay.
//!
//! In a survivable job ([`crate::survive`]) the checks are relaxed to what survival
//! needs (a packet may come through any trunk of this cluster, since the ends re-map
//! the hosts of a dead relay), and the outside hosts of a marked client that die are
//! taken over by the next live host of their client.

use crate::survive;
use crate::trunk::{trunk_of, TrunkMode, Trunking};
use crossmpi_impi::wire::addr::HostAddr;
use crossmpi_impi::wire::handshake::HostHandshake;
use crossmpi_impi::wire::packet::Proc;
use crossmpi_impi::wire::tables::GlobalTables;
use crossmpi_impi::{Error, Result};
use std::collections::HashMap;

/// One host connection of the relay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Link {
    /// With outside host `host` (its global host rank in the outside view).
    Outside { host: u32 },
    /// Between inside host `host` (its rank in the inside view) and the virtual host
    /// that stands for `client`.
    Inside { host: u32, client: u32 },
}

/// Where an accepted connection arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acceptor {
    /// The global port: outside hosts ranked above the relay.
    Global,
    /// The private port of `client`'s virtual host: inside hosts ranked above it.
    Private { client: u32 },
}

/// A connection the relay opens: to `addr:port`, announcing `handshake`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dial {
    pub link: Link,
    pub addr: HostAddr,
    pub port: u16,
    pub handshake: u32,
}

/// Processes and hosts of both views.
#[derive(Debug, Clone)]
pub struct Topology {
    pub me: u32,
    /// This relay's trunk index, the cluster's trunk count and mode.
    pub trunk: u32,
    pub ntrunks: u32,
    mode: TrunkMode,
    /// World ranks of the relay's own client.
    own_ranks: std::ops::Range<u32>,
    client_of: Vec<u32>,
    inside_id: Vec<Proc>,
    outside_id: Vec<Proc>,
    by_inside: HashMap<Proc, u32>,
    by_outside: HashMap<Proc, u32>,
    /// Host rank of every process in each view.
    inside_host: Vec<u32>,
    outside_host: Vec<u32>,
    /// Client of every outside host, and every client's outside hosts.
    outside_host_client: Vec<u32>,
    client_hosts: Vec<std::ops::Range<u32>>,
    /// Every client lists crossmpi and one lists the survival mark.
    survivable: bool,
    /// Clients that list the survival mark (their hosts are relays).
    relay_client: Vec<bool>,
    /// Outside hosts whose connection died and whose processes another host holds.
    dead: Vec<bool>,
    /// The relay's host rank outside; the inside rank of each client's virtual host
    /// that this relay stands for.
    relay_host: u32,
    virtual_host: Vec<u32>,
    inside_hosts: std::ops::Range<u32>,
    nhosts_outside: u32,
    nhosts_inside: u32,
    /// The largest data length of a packet (global minimum of IMPI_C_DATALEN).
    pub max_data: u32,
    dials: Vec<Dial>,
}

fn host_of_procs(t: &GlobalTables) -> Vec<u32> {
    t.hosts()
        .enumerate()
        .flat_map(|(h, (_, info))| std::iter::repeat_n(h as u32, info.nprocs as usize))
        .collect()
}

/// The wire identity (`pk_src`/`pk_dest`) of every process, in MPI_COMM_WORLD order.
pub fn proc_ids(t: &GlobalTables) -> Vec<Proc> {
    t.procs()
        .map(|p| Proc {
            hostid: p.id,
            pid: p.pid,
        })
        .collect()
}

fn mismatch(reason: String) -> Error {
    Error::Invalid {
        what: "impi-relay tables",
        reason,
    }
}

impl Topology {
    /// Checks that the two views describe the same job as the relays of client `me`
    /// show it (`ntrunks` relays, this one being `trunk`), and derives the connections.
    pub fn new(
        me: u32,
        trunking: Trunking,
        inside: &GlobalTables,
        outside: &GlobalTables,
    ) -> Result<Topology> {
        let Trunking {
            trunk,
            ntrunks,
            mode,
        } = trunking;
        let n = outside.clients.len();
        if inside.clients.len() != n || me as usize >= n || trunk >= ntrunks {
            return Err(mismatch(format!(
                "client {me} of {n} / {}, trunk {trunk} of {ntrunks}",
                inside.clients.len()
            )));
        }
        for (c, (i, o)) in inside.clients.iter().zip(&outside.clients).enumerate() {
            if i.procs.len() != o.procs.len() {
                return Err(mismatch(format!("client {c} has different process counts")));
            }
            let hosts = if c == me as usize {
                o.hosts.len()
            } else {
                i.hosts.len()
            };
            if hosts != ntrunks as usize {
                return Err(mismatch(format!(
                    "client {c} is not {ntrunks} hosts where the relays show it"
                )));
            }
        }
        let client_of: Vec<u32> = outside
            .clients
            .iter()
            .enumerate()
            .flat_map(|(c, info)| std::iter::repeat_n(c as u32, info.procs.len()))
            .collect();
        let inside_id = proc_ids(inside);
        let outside_id = proc_ids(outside);
        let index = |ids: &[Proc]| {
            ids.iter()
                .enumerate()
                .map(|(w, p)| (*p, w as u32))
                .collect()
        };
        let relay_host = outside.first_host(me as usize) + trunk;
        let first_inside = inside.first_host(me as usize);
        let inside_hosts =
            first_inside..first_inside + inside.clients[me as usize].hosts.len() as u32;
        let virtual_host = (0..n)
            .map(|c| inside.first_host(c) + trunk)
            .collect::<Vec<_>>();
        let outside_host_client = outside.hosts().map(|(c, _)| c as u32).collect();
        let client_hosts = (0..n)
            .map(|c| {
                let first = outside.first_host(c);
                first..first + outside.clients[c].hosts.len() as u32
            })
            .collect();
        let first_rank = outside.first_rank(me as usize);
        let own_ranks = first_rank..first_rank + outside.clients[me as usize].procs.len() as u32;
        let mut t = Topology {
            me,
            trunk,
            ntrunks,
            mode,
            own_ranks,
            by_inside: index(&inside_id),
            by_outside: index(&outside_id),
            client_of,
            inside_id,
            outside_id,
            inside_host: host_of_procs(inside),
            outside_host: host_of_procs(outside),
            outside_host_client,
            client_hosts,
            survivable: outside.survivable(),
            relay_client: outside
                .clients
                .iter()
                .map(|c| c.lists(survive::SURVIVE_MAJOR))
                .collect(),
            dead: vec![false; outside.nhosts() as usize],
            relay_host,
            virtual_host,
            inside_hosts,
            nhosts_outside: outside.nhosts(),
            nhosts_inside: inside.nhosts(),
            max_data: outside.max_data_len(),
            dials: Vec::new(),
        };
        t.dials = t.plan_dials(inside, outside);
        Ok(t)
    }

    fn plan_dials(&self, inside: &GlobalTables, outside: &GlobalTables) -> Vec<Dial> {
        let mut dials = Vec::new();
        for (h, (c, info)) in outside.hosts().enumerate() {
            if c as u32 != self.me && (h as u32) < self.relay_host {
                dials.push(Dial {
                    link: Link::Outside { host: h as u32 },
                    addr: info.addr,
                    port: info.port as u16,
                    handshake: self.relay_host,
                });
            }
        }
        let mine = &inside.clients[self.me as usize].hosts;
        for c in self.remote_clients() {
            let v = self.virtual_host[c as usize];
            for (k, info) in mine.iter().enumerate() {
                let host = self.inside_hosts.start + k as u32;
                if v > host {
                    dials.push(Dial {
                        link: Link::Inside { host, client: c },
                        addr: info.addr,
                        port: info.port as u16,
                        handshake: v,
                    });
                }
            }
        }
        dials
    }

    /// The clients other than the relay's.
    pub fn remote_clients(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.virtual_host.len() as u32).filter(move |&c| c != self.me)
    }

    /// The connections the relay opens.
    pub fn dials(&self) -> &[Dial] {
        &self.dials
    }

    /// Every connection of the relay: its inside hosts with every other client, and
    /// every outside host of another client.
    pub fn links(&self) -> Vec<Link> {
        let mut links: Vec<Link> = (0..self.nhosts_outside)
            .filter(|&h| self.outside_host_client[h as usize] != self.me)
            .map(|host| Link::Outside { host })
            .collect();
        for client in self.remote_clients() {
            links.extend(
                self.inside_hosts
                    .clone()
                    .map(|host| Link::Inside { host, client }),
            );
        }
        links
    }

    /// The client at the far end of a link.
    pub fn peer_client(&self, link: Link) -> u32 {
        match link {
            Link::Outside { host } => self.outside_host_client[host as usize],
            Link::Inside { client, .. } => client,
        }
    }

    /// The link a connecting host's 4-byte handshake names, for the port it came to.
    pub fn accept(&self, at: Acceptor, buf: &[u8]) -> Result<Option<Link>> {
        match at {
            Acceptor::Global => {
                let Some(hs) = HostHandshake::decode(buf, self.nhosts_outside, self.relay_host)?
                else {
                    return Ok(None);
                };
                if self.outside_host_client[hs.host_rank as usize] == self.me {
                    return Err(Error::OutOfRange {
                        what: "IMPI host handshake at the global port (a host of this relay's own client)",
                        value: hs.host_rank.into(),
                        allowed: "hosts of other clients".into(),
                    });
                }
                Ok(Some(Link::Outside { host: hs.host_rank }))
            }
            Acceptor::Private { client } => {
                let v = self.virtual_host[client as usize];
                let Some(hs) = HostHandshake::decode(buf, self.nhosts_inside, v)? else {
                    return Ok(None);
                };
                if !self.inside_hosts.contains(&hs.host_rank) {
                    return Err(Error::OutOfRange {
                        what: "IMPI host handshake at a private port (inside host rank)",
                        value: hs.host_rank.into(),
                        allowed: format!("{:?}", self.inside_hosts),
                    });
                }
                Ok(Some(Link::Inside {
                    host: hs.host_rank,
                    client,
                }))
            }
        }
    }

    /// Whether the job survives a relay's death (every client is crossmpi and one
    /// lists the survival mark).
    pub fn survivable(&self) -> bool {
        self.survivable
    }

    /// The live outside host holding outside host `host`'s processes: `host` itself,
    /// or once it died, the next live host of its client in host order (cyclic).
    pub fn holder(&self, host: u32) -> u32 {
        let hosts = &self.client_hosts[self.outside_host_client[host as usize] as usize];
        let n = hosts.len() as u32;
        (0..n)
            .map(|i| hosts.start + (host - hosts.start + i) % n)
            .find(|&h| !self.dead[h as usize])
            .unwrap_or(host)
    }

    /// Whether packets from `link` are passed on only once whole: in a survivable job,
    /// those from a relay host, which may die in the middle of one. Cut-through, the
    /// rest of that packet would be missing in the stream of the inside connection it
    /// was going to, and that connection would have to be dropped, ending the job.
    pub fn whole_packets_from(&self, link: Link) -> bool {
        match link {
            Link::Outside { host } => {
                self.survivable
                    && self.relay_client[self.outside_host_client[host as usize] as usize]
            }
            Link::Inside { .. } => false,
        }
    }

    /// `link` with an outside host that died replaced by the host holding its
    /// processes.
    pub fn live(&self, link: Link) -> Link {
        match link {
            Link::Outside { host } => Link::Outside {
                host: self.holder(host),
            },
            inside => inside,
        }
    }

    /// Outside host `host`'s connection died before its FINI. In a survivable job,
    /// when the host is a relay of a marked client and another host of that client
    /// lives, the loss is survived: the host is marked dead and the host now holding
    /// its processes is returned. None: the loss is fatal.
    pub fn lose_host(&mut self, host: u32) -> Option<u32> {
        let client = self.outside_host_client[host as usize];
        if !self.survivable || !self.relay_client[client as usize] || self.dead[host as usize] {
            return None;
        }
        self.dead[host as usize] = true;
        let heir = self.holder(host);
        if heir == host {
            self.dead[host as usize] = false;
            return None;
        }
        Some(heir)
    }

    /// Where a packet from `from` goes, with its source and destination as the far side
    /// knows them. The source must live on the sending inside host; from outside, only
    /// in the sending host's client, since a trunked client's relays send each packet
    /// through the relay of its destination, whichever of that client's hosts holds its
    /// source. The packet must also belong to this relay: from outside, its destination
    /// is on the cluster's host this relay stands for; from inside, its destination is
    /// on this relay's virtual host (destination mode) or its source on this relay's
    /// trunk (source mode). In a survivable job that last rule is relaxed to "the
    /// destination is a process of another client" (from inside) or "of this cluster"
    /// (from outside): once a relay dies, the ends send its share through the others.
    /// An outside destination goes to the live host holding it.
    pub fn route(&self, from: Link, src: &Proc, dest: &Proc) -> Result<(Link, Proc, Proc)> {
        let bad = |reason: String| Error::Invalid {
            what: "IMPI packet (pk_src/pk_dest)",
            reason,
        };
        match from {
            Link::Inside { host, client } => {
                let s = *self
                    .by_inside
                    .get(src)
                    .ok_or_else(|| bad(format!("unknown source {src:?}")))?;
                let d = *self
                    .by_inside
                    .get(dest)
                    .ok_or_else(|| bad(format!("unknown destination {dest:?}")))?;
                let this_trunk = match self.mode {
                    _ if self.survivable => self.client_of[d as usize] != self.me,
                    TrunkMode::Destination => {
                        self.client_of[d as usize] == client
                            && self.inside_host[d as usize] == self.virtual_host[client as usize]
                    }
                    TrunkMode::Source => {
                        let n = self.own_ranks.len() as u32;
                        self.client_of[d as usize] == client
                            && trunk_of(n, self.ntrunks, s - self.own_ranks.start) == self.trunk
                    }
                };
                if self.inside_host[s as usize] != host || !this_trunk {
                    return Err(bad(format!(
                        "world rank {s} -> {d} does not travel from inside host {host} to client \
                         {client}'s virtual host {} ({:?} trunking{})",
                        self.virtual_host[client as usize],
                        self.mode,
                        if self.survivable {
                            ", survivable job"
                        } else {
                            ""
                        }
                    )));
                }
                let to = Link::Outside {
                    host: self.holder(self.outside_host[d as usize]),
                };
                Ok((to, self.outside_id[s as usize], self.outside_id[d as usize]))
            }
            Link::Outside { host } => {
                let s = *self
                    .by_outside
                    .get(src)
                    .ok_or_else(|| bad(format!("unknown source {src:?}")))?;
                let d = *self
                    .by_outside
                    .get(dest)
                    .ok_or_else(|| bad(format!("unknown destination {dest:?}")))?;
                let this_relay = if self.survivable {
                    self.own_ranks.contains(&d)
                } else {
                    self.outside_host[d as usize] == self.relay_host
                };
                if self.client_of[s as usize] != self.outside_host_client[host as usize]
                    || !this_relay
                {
                    return Err(bad(format!(
                        "world rank {s} -> {d} does not travel from outside host {host} to \
                         outside host {} (client {}, trunk {}{})",
                        self.relay_host,
                        self.me,
                        self.trunk,
                        if self.survivable {
                            ", survivable job"
                        } else {
                            ""
                        }
                    )));
                }
                let to = Link::Inside {
                    host: self.inside_host[d as usize],
                    client: self.client_of[s as usize],
                };
                Ok((to, self.inside_id[s as usize], self.inside_id[d as usize]))
            }
        }
    }

    /// The links whose FINI, once all have arrived, lets FINI go out on `to`: every
    /// inside host towards client c before FINI to c's hosts, and every host of client c
    /// before FINI to the inside hosts on c's virtual host.
    pub fn fini_sources(&self, to: Link) -> Vec<Link> {
        match to {
            Link::Outside { host } => {
                let client = self.outside_host_client[host as usize];
                self.inside_hosts
                    .clone()
                    .map(|h| Link::Inside { host: h, client })
                    .collect()
            }
            Link::Inside { client, .. } => (0..self.nhosts_outside)
                .filter(|&h| self.outside_host_client[h as usize] == client)
                .map(|host| Link::Outside { host })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{cluster, trunk_place, views};

    fn trunking(trunk: u32, ntrunks: u32, mode: TrunkMode) -> Trunking {
        Trunking {
            trunk,
            ntrunks,
            mode,
        }
    }
    use std::collections::BTreeSet;

    const K: u32 = 3;

    /// Client 0 (hosts of 2, 1, 2 processes) through 3 relays; client 1 (2 hosts of 2)
    /// outside. Returns both views and the topology of every trunk.
    fn trunked() -> (GlobalTables, GlobalTables, Vec<Topology>) {
        let p = trunk_place(K as u8);
        let ports = (0..K as u16).map(|k| vec![0, 6000 + k]).collect();
        let (out, inv) = views(
            &p,
            &cluster(&[2, 1, 2], (8, 16)),
            &cluster(&[2, 2], (4, 32)),
            ports,
        );
        let topos = (0..K)
            .map(|t| Topology::new(0, trunking(t, K, TrunkMode::Destination), &inv, &out).unwrap())
            .collect();
        (inv, out, topos)
    }

    /// The trunks that accept a packet from world rank `s` to `d` arriving on `from`
    /// (`ids`: the identities that side knows), with where each sends it.
    fn routes(
        topos: &[Topology],
        from: Link,
        ids: &[Proc],
        s: u32,
        d: u32,
    ) -> Vec<(u32, (Link, Proc, Proc))> {
        topos
            .iter()
            .enumerate()
            .filter_map(|(t, topo)| {
                let r = topo.route(from, &ids[s as usize], &ids[d as usize]);
                r.ok().map(|r| (t as u32, r))
            })
            .collect()
    }

    /// Every packet from an inside process to an outside one is taken by exactly the
    /// trunks `want(s, d)`, from the sender's inside host to the destination's outside
    /// host, renamed.
    fn inside_out_takes(
        inv: &GlobalTables,
        out: &GlobalTables,
        topos: &[Topology],
        want: impl Fn(u32, u32) -> Vec<u32>,
    ) {
        let (in_ids, out_ids) = (proc_ids(inv), proc_ids(out));
        let (in_host, out_host) = (host_of_procs(inv), host_of_procs(out));
        for s in 0..5u32 {
            for d in 5..9u32 {
                let from = Link::Inside {
                    host: in_host[s as usize],
                    client: 1,
                };
                let to = Link::Outside {
                    host: out_host[d as usize],
                };
                let expected: Vec<_> = want(s, d)
                    .into_iter()
                    .map(|t| (t, (to, out_ids[s as usize], out_ids[d as usize])))
                    .collect();
                assert_eq!(routes(topos, from, &in_ids, s, d), expected, "{s} -> {d}");
            }
        }
    }

    #[test]
    fn the_trunks_share_every_connection_exactly_once() {
        let (_, _, topos) = trunked();
        let mut outside = BTreeSet::new();
        let mut inside = BTreeSet::new();
        for (t, topo) in topos.iter().enumerate() {
            for link in topo.links() {
                let fresh = match link {
                    Link::Outside { host } => outside.insert((t as u32, host)),
                    Link::Inside { host, client } => inside.insert((host, client, t as u32)),
                };
                assert!(fresh, "{link:?} twice");
            }
            // Outside, relay t is host t; inside, virtual host 3 + t: it dials the
            // inside hosts (ranked lower) and is dialed by client 1's hosts 3 and 4.
            for d in topo.dials() {
                assert_eq!(d.handshake, 3 + t as u32);
                assert!(matches!(d.link, Link::Inside { host, client: 1 } if host < 3));
            }
            assert_eq!(topo.dials().len(), 3);
        }
        let want_out: BTreeSet<_> = (0..K).flat_map(|t| (3..5).map(move |h| (t, h))).collect();
        let want_in: BTreeSet<_> = (0..3)
            .flat_map(|h| (0..K).map(move |t| (h, 1, t)))
            .collect();
        assert_eq!((outside, inside), (want_out, want_in));
    }

    #[test]
    fn each_packet_takes_the_trunk_of_its_destination() {
        let (inv, out, topos) = trunked();
        let (in_ids, out_ids) = (proc_ids(&inv), proc_ids(&out));
        let in_host = host_of_procs(&inv);
        // Inside to outside: from the sender's inside host to the virtual host holding
        // the destination, which only that trunk accepts.
        inside_out_takes(&inv, &out, &topos, |_, d| vec![trunk_of(4, K, d - 5)]);
        // Outside to inside: from any host of client 1 (its own relays may be trunked
        // too) to the relay holding the destination outside.
        for s in 5..9u32 {
            for d in 0..5u32 {
                for h in 3..5 {
                    let from = Link::Outside { host: h };
                    let routes = routes(&topos, from, &out_ids, s, d);
                    let to = Link::Inside {
                        host: in_host[d as usize],
                        client: 1,
                    };
                    let want = (
                        trunk_of(5, K, d),
                        (to, in_ids[s as usize], in_ids[d as usize]),
                    );
                    assert_eq!(routes, [want], "{s} -> {d} from host {h}");
                }
            }
        }
    }

    #[test]
    fn in_source_mode_inside_packets_take_the_relay_of_their_source() {
        let (inv, out, _) = trunked();
        let topos: Vec<Topology> = (0..K)
            .map(|t| Topology::new(0, trunking(t, K, TrunkMode::Source), &inv, &out).unwrap())
            .collect();
        inside_out_takes(&inv, &out, &topos, |s, _| vec![trunk_of(5, K, s)]);
        let out_ids = proc_ids(&out);
        let out_host = host_of_procs(&out);
        for s in 0..5u32 {
            // Replies come back through the same relay: the one holding s outside.
            assert_eq!(out_host[s as usize], trunk_of(5, K, s));
        }
        // From outside, as before: the relay holding the destination.
        let from = Link::Outside { host: 3 };
        for d in 0..5u32 {
            let takers: Vec<u32> = routes(&topos, from, &out_ids, 5, d)
                .iter()
                .map(|r| r.0)
                .collect();
            assert_eq!(takers, [trunk_of(5, K, d)]);
        }
    }

    #[test]
    fn what_trunking_does_not_need_is_still_refused() {
        let (inv, out, topos) = trunked();
        let (in_ids, out_ids) = (proc_ids(&inv), proc_ids(&out));
        // An inside host sending for a process of another inside host.
        let spoof = Link::Inside { host: 0, client: 1 };
        for topo in &topos {
            let e = topo.route(spoof, &in_ids[2], &in_ids[5]).unwrap_err();
            assert!(e.to_string().contains("world rank 2 -> 5"), "{e}");
        }
        // An outside host sending as a process of the relays' own cluster.
        let e = topos[0]
            .route(Link::Outside { host: 3 }, &out_ids[1], &out_ids[0])
            .unwrap_err();
        assert!(e.to_string().contains("world rank 1 -> 0"), "{e}");
        // Trunk 1's outside host connecting to trunk 0 as if it were another client's.
        let e = topos[0]
            .accept(Acceptor::Global, &1u32.to_be_bytes())
            .unwrap_err();
        assert!(e.to_string().contains("own client"), "{e}");
        assert_eq!(
            topos[0]
                .accept(Acceptor::Global, &3u32.to_be_bytes())
                .unwrap(),
            Some(Link::Outside { host: 3 })
        );
        // Views that do not show the cluster as K hosts.
        let e = Topology::new(0, trunking(0, 2, TrunkMode::Destination), &inv, &out).unwrap_err();
        assert!(e.to_string().contains("not 2 hosts"), "{e}");
    }

    /// [`trunked`] in a survivable job ([`crate::testing::survivable_views`]).
    fn survivable() -> (GlobalTables, GlobalTables, Vec<Topology>) {
        let (out, inv) = crate::testing::survivable_views(K as u8);
        let topos: Vec<Topology> = (0..K)
            .map(|t| Topology::new(0, trunking(t, K, TrunkMode::Destination), &inv, &out).unwrap())
            .collect();
        assert!(topos.iter().all(Topology::survivable));
        (inv, out, topos)
    }

    #[test]
    fn a_survivable_job_lets_packets_through_any_trunk() {
        let (inv, out, topos) = survivable();
        let (in_ids, out_ids) = (proc_ids(&inv), proc_ids(&out));
        let in_host = host_of_procs(&inv);
        // From the sender's inside host through any virtual host of client 1.
        inside_out_takes(&inv, &out, &topos, |_, _| (0..K).collect());
        // From either host of client 1 to any process of the cluster.
        for s in 5..9u32 {
            for d in 0..5u32 {
                let to = Link::Inside {
                    host: in_host[d as usize],
                    client: 1,
                };
                for h in 3..5 {
                    let from = Link::Outside { host: h };
                    let want: Vec<_> = (0..K)
                        .map(|t| (t, (to, in_ids[s as usize], in_ids[d as usize])))
                        .collect();
                    assert_eq!(routes(&topos, from, &out_ids, s, d), want);
                }
            }
        }
        // Still refused: a source that is not on the sending host, a destination in
        // the cluster itself (from inside) or outside it (from outside), a source of
        // another client than the sending host's.
        let t = &topos[1];
        let from = Link::Inside { host: 0, client: 1 };
        assert!(t.route(from, &in_ids[2], &in_ids[5]).is_err());
        assert!(t.route(from, &in_ids[0], &in_ids[3]).is_err());
        let from = Link::Outside { host: 3 };
        assert!(t.route(from, &out_ids[5], &out_ids[7]).is_err());
        let e = t.route(from, &out_ids[1], &out_ids[0]).unwrap_err();
        assert!(e.to_string().contains("survivable job"), "{e}");
    }

    #[test]
    fn a_dead_relay_hosts_processes_go_to_the_next_live_host() {
        let (inv, out, mut topos) = survivable();
        let (in_ids, out_ids) = (proc_ids(&inv), proc_ids(&out));
        let t = &mut topos[0];
        let from = Link::Inside { host: 0, client: 1 };
        let to = |t: &Topology, d: usize| t.route(from, &in_ids[0], &in_ids[d]).unwrap().0;
        assert_eq!(to(t, 5), Link::Outside { host: 3 });
        assert_eq!(
            t.lose_host(3),
            Some(4),
            "host 4 takes over host 3's processes"
        );
        let four = Link::Outside { host: 4 };
        assert_eq!((to(t, 5), to(t, 6), to(t, 7)), (four, four, four));
        assert_eq!(t.live(Link::Outside { host: 3 }), Link::Outside { host: 4 });
        assert_eq!(t.live(from), from);
        // Packets from the live host for the cluster still pass.
        assert!(t
            .route(Link::Outside { host: 4 }, &out_ids[5], &out_ids[0])
            .is_ok());
        // The last live host of a client: its loss is fatal.
        assert_eq!(t.lose_host(4), None);
        assert_eq!(to(t, 8), Link::Outside { host: 4 });
        // Not survivable: the same loss is fatal.
        let (_, _, mut plain) = trunked();
        assert!(!plain[0].survivable());
        assert_eq!(plain[0].lose_host(3), None);
    }
}
