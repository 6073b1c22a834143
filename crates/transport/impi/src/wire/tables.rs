//! What one client contributes under every label (`ClientInfo`), and the global tables
//! decoded from the server's replies (`GlobalTables`), with the way back: a client's
//! contribution per label, and a reply re-encoded from (possibly rewritten) tables, as a
//! relay needs.

use super::addr::HostAddr;
use super::be_u32;
use super::label::Label;
use super::startup::CollReply;
use crate::error::{Error, Result};
use std::collections::BTreeMap;

/// `IMPI_Version`; the default is 0.0, the version every client must list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
}

/// One host of a client (the H_ labels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostInfo {
    pub addr: HostAddr,
    /// Listening port (an `Int4` on the wire, as LAM/MPI sends it).
    pub port: u32,
    pub nprocs: u32,
    pub ackmark: u32,
    pub hiwater: u32,
}

/// One process of a client (the P_ labels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProcInfo {
    pub id: HostAddr,
    pub pid: i64,
}

/// Everything one client submits. Its hosts and procs counts are the lengths of `hosts`
/// and `procs`; procs are listed host by host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientInfo {
    pub versions: Vec<Version>,
    /// Largest number of data bytes per packet this client accepts (IMPI_C_DATALEN).
    pub datalen: u32,
    pub tag_ub: i32,
    /// -1 for the default.
    pub coll_xsize: i32,
    /// -1 for the default.
    pub coll_maxlinear: i32,
    pub hosts: Vec<HostInfo>,
    pub procs: Vec<ProcInfo>,
}

/// `IMPI_MINIMUM_TAG_UB`.
pub const MIN_TAG_UB: i32 = 32767;
/// The version major ("CXMP") a crossmpi client lists after IMPI 0.0.
pub const CROSSMPI_MAJOR: u32 = 0x4358_4d50;
/// The version major ("CXRS") the relays of a cluster with two or more trunks add to
/// its list: each can take over the processes of another that dies (docs/impi-relay.md,
/// "Surviving a relay's death").
pub const SURVIVAL_MAJOR: u32 = 0x4358_5253;
/// `IMPI_COLL_XSIZE_DEFAULT`, used where a client sends -1.
pub const COLL_XSIZE_DEFAULT: u32 = 1024;
/// `IMPI_COLL_MAXLINEAR_DEFAULT`, used where a client sends -1.
pub const COLL_MAXLINEAR_DEFAULT: u32 = 4;

fn invalid(what: &'static str, reason: String) -> Error {
    Error::Invalid { what, reason }
}

/// LAM/MPI's default `IMPI_H_ACKMARK` ("this is a guess").
pub const LAM_ACKMARK: u32 = 10;
/// LAM/MPI's default `IMPI_H_HIWATER`.
pub const LAM_HIWATER: u32 = 20;

impl ClientInfo {
    /// Whether this client's IMPI_C_VERSION lists a version of major `major`.
    pub fn lists(&self, major: u32) -> bool {
        self.versions.iter().any(|v| v.major == major)
    }

    /// A client with one host, as LAM/MPI runs, whose processes have the host's address
    /// as P_IPV6 and the given pids; version 0.0, the largest tag bound, default
    /// collective sizes and LAM/MPI's flow-control marks.
    pub fn one_host(addr: HostAddr, port: u32, pids: &[i64], datalen: u32) -> ClientInfo {
        ClientInfo {
            versions: vec![Version::default()],
            datalen,
            tag_ub: i32::MAX,
            coll_xsize: -1,
            coll_maxlinear: -1,
            hosts: vec![HostInfo {
                addr,
                port,
                nprocs: pids.len() as u32,
                ackmark: LAM_ACKMARK,
                hiwater: LAM_HIWATER,
            }],
            procs: pids.iter().map(|&pid| ProcInfo { id: addr, pid }).collect(),
        }
    }

    /// Checks the rules the IMPI documents state for one client's values.
    pub fn validate(&self) -> Result<()> {
        let v = &self.versions;
        if v.first() != Some(&Version { major: 0, minor: 0 }) || v.windows(2).any(|w| w[0] >= w[1])
        {
            return Err(invalid(
                "IMPI_C_VERSION",
                format!("{v:?} must be strictly ascending and start with 0.0"),
            ));
        }
        if self.datalen == 0 {
            return Err(invalid("IMPI_C_DATALEN", "must be at least 1".into()));
        }
        if self.tag_ub < MIN_TAG_UB {
            return Err(Error::OutOfRange {
                what: "IMPI_C_TAGUB",
                value: self.tag_ub.into(),
                allowed: format!("{MIN_TAG_UB}..=2147483647"),
            });
        }
        for (what, v) in [
            ("IMPI_C_COLL_XSIZE", self.coll_xsize),
            ("IMPI_C_COLL_MAXLINEAR", self.coll_maxlinear),
        ] {
            if v < -1 {
                return Err(Error::OutOfRange {
                    what,
                    value: v.into(),
                    allowed: "-1 (default) or >= 0".into(),
                });
            }
        }
        if self.hosts.is_empty() {
            return Err(invalid(
                "IMPI_C_NHOSTS",
                "a client has at least one host".into(),
            ));
        }
        for h in &self.hosts {
            if h.nprocs == 0 || h.ackmark == 0 || h.ackmark > h.hiwater {
                return Err(invalid(
                    "IMPI host",
                    format!("{h:?}: needs nprocs >= 1 and 1 <= ackmark <= hiwater"),
                ));
            }
            if h.port == 0 || h.port > u32::from(u16::MAX) {
                return Err(Error::OutOfRange {
                    what: "IMPI_H_PORT",
                    value: h.port.into(),
                    allowed: "1..=65535".into(),
                });
            }
        }
        let sum: u64 = self.hosts.iter().map(|h| u64::from(h.nprocs)).sum();
        if sum != self.procs.len() as u64 {
            return Err(invalid(
                "IMPI_H_NPROCS",
                format!(
                    "hosts hold {sum} procs in all but the client lists {}",
                    self.procs.len()
                ),
            ));
        }
        Ok(())
    }

    /// This client's payload under `label` (P_PID in LAM/MPI's 8-byte form).
    pub fn contribution(&self, label: Label) -> Vec<u8> {
        let words = |vals: &mut dyn Iterator<Item = u32>| -> Vec<u8> {
            vals.flat_map(u32::to_be_bytes).collect()
        };
        match label {
            Label::CVersion => self
                .versions
                .iter()
                .flat_map(|v| [v.major.to_be_bytes(), v.minor.to_be_bytes()])
                .flatten()
                .collect(),
            Label::CNhosts => words(&mut std::iter::once(self.hosts.len() as u32)),
            Label::CNprocs => words(&mut std::iter::once(self.procs.len() as u32)),
            Label::CDatalen => words(&mut std::iter::once(self.datalen)),
            Label::CTagub => words(&mut std::iter::once(self.tag_ub as u32)),
            Label::CCollXsize => words(&mut std::iter::once(self.coll_xsize as u32)),
            Label::CCollMaxlinear => words(&mut std::iter::once(self.coll_maxlinear as u32)),
            Label::HIpv6 => self.hosts.iter().flat_map(|h| h.addr.0).collect(),
            Label::HPort => words(&mut self.hosts.iter().map(|h| h.port)),
            Label::HNprocs => words(&mut self.hosts.iter().map(|h| h.nprocs)),
            Label::HAckmark => words(&mut self.hosts.iter().map(|h| h.ackmark)),
            Label::HHiwater => words(&mut self.hosts.iter().map(|h| h.hiwater)),
            Label::PIpv6 => self.procs.iter().flat_map(|p| p.id.0).collect(),
            Label::PPid => self
                .procs
                .iter()
                .flat_map(|p| p.pid.to_be_bytes())
                .collect(),
        }
    }
}

/// The global tables every client holds after startup: clients in rank order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobalTables {
    pub clients: Vec<ClientInfo>,
}

/// One label's reply split into client chunks.
fn split<'a>(label: Label, data: &'a [u8], counts: &[u64], elem: usize) -> Result<Vec<&'a [u8]>> {
    let total: u64 = counts.iter().sum::<u64>().saturating_mul(elem as u64);
    if total != data.len() as u64 {
        return Err(Error::BadLength {
            what: label.name(),
            len: data.len() as u64,
            expected: format!("{total} bytes ({counts:?} elements of {elem} bytes)"),
        });
    }
    let mut rest = data;
    let mut out = Vec::with_capacity(counts.len());
    for &c in counts {
        let (chunk, tail) = rest.split_at(c as usize * elem);
        out.push(chunk);
        rest = tail;
    }
    Ok(out)
}

fn int4s(chunk: &[u8]) -> Vec<u32> {
    chunk
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// A decoder over the set of replies, label by label.
struct Replies<'a> {
    nclients: u32,
    replies: &'a BTreeMap<Label, CollReply>,
}

impl Replies<'_> {
    fn data(&self, label: Label) -> Result<&[u8]> {
        let r = self.replies.get(&label).ok_or_else(|| {
            invalid(
                "GlobalTables::decode",
                format!("no reply for label {label}"),
            )
        })?;
        let full = full_mask(self.nclients);
        if r.client_mask != full {
            return Err(invalid(
                "GlobalTables::decode",
                format!(
                    "reply to {label} has client_mask 0x{:x}, expected 0x{full:x} (every client)",
                    r.client_mask
                ),
            ));
        }
        Ok(&r.data)
    }

    /// One Int4 per client.
    fn per_client(&self, label: Label) -> Result<Vec<u32>> {
        let counts = vec![1; self.nclients as usize];
        let data = self.data(label)?;
        split(label, data, &counts, 4)?;
        Ok(int4s(data))
    }

    /// Per-client element counts that must be at least 1.
    fn counts(&self, label: Label) -> Result<Vec<u64>> {
        let vals = self.per_client(label)?;
        vals.iter()
            .map(|&v| {
                if (v as i32) < 1 {
                    Err(Error::OutOfRange {
                        what: label.name(),
                        value: (v as i32).into(),
                        allowed: "1..=2147483647".into(),
                    })
                } else {
                    Ok(u64::from(v))
                }
            })
            .collect()
    }

    /// Per-client chunks of a host or proc label, in the first element size that fits.
    fn chunks(&self, label: Label, counts: &[u64]) -> Result<(Vec<&[u8]>, usize)> {
        let data = self.data(label)?;
        let mut last = None;
        for &elem in label.element_sizes() {
            match split(label, data, counts, elem) {
                Ok(chunks) => return Ok((chunks, elem)),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or(Error::UnknownLabel(label.raw())))
    }

    fn versions(&self) -> Result<Vec<Vec<Version>>> {
        let data = self.data(Label::CVersion)?;
        if data.len() % 8 != 0 {
            return Err(Error::BadLength {
                what: Label::CVersion.name(),
                len: data.len() as u64,
                expected: "a multiple of 8 bytes".into(),
            });
        }
        // Every client's list starts with 0.0, which is how the concatenation splits.
        let mut lists: Vec<Vec<Version>> = Vec::new();
        for pair in data.chunks_exact(8) {
            let v = Version {
                major: be_u32(pair, 0)?,
                minor: be_u32(pair, 4)?,
            };
            match lists.last_mut() {
                Some(list) if v != Version::default() => list.push(v),
                _ => lists.push(vec![v]),
            }
        }
        if lists.len() != self.nclients as usize {
            return Err(invalid(
                Label::CVersion.name(),
                format!(
                    "reply holds {} version lists (each starting with 0.0), expected {}",
                    lists.len(),
                    self.nclients
                ),
            ));
        }
        Ok(lists)
    }
}

/// The client mask with every one of `nclients` bits set.
pub fn full_mask(nclients: u32) -> u32 {
    if nclients >= 32 {
        u32::MAX
    } else {
        (1u32 << nclients) - 1
    }
}

impl GlobalTables {
    /// True when every client lists crossmpi's version (of any representation).
    pub fn all_crossmpi(&self) -> bool {
        self.clients.iter().all(|c| c.lists(CROSSMPI_MAJOR))
    }

    /// True when the job survives a relay's death: every client is crossmpi (so both
    /// ends number, keep and resend packets) and some cluster's relays carry the
    /// survival mark.
    pub fn survivable(&self) -> bool {
        self.all_crossmpi() && self.clients.iter().any(|c| c.lists(SURVIVAL_MAJOR))
    }

    /// Decodes the replies of all 14 labels for `nclients` clients and validates them.
    pub fn decode(nclients: u32, replies: &BTreeMap<Label, CollReply>) -> Result<GlobalTables> {
        if nclients == 0 || nclients > super::startup::MAX_CLIENTS {
            return Err(Error::OutOfRange {
                what: "GlobalTables::decode nclients",
                value: nclients.into(),
                allowed: "1..=32".into(),
            });
        }
        let r = Replies { nclients, replies };
        let versions = r.versions()?;
        let nhosts = r.counts(Label::CNhosts)?;
        let nprocs = r.counts(Label::CNprocs)?;
        let datalen = r.per_client(Label::CDatalen)?;
        let tag_ub = r.per_client(Label::CTagub)?;
        let xsize = r.per_client(Label::CCollXsize)?;
        let maxlinear = r.per_client(Label::CCollMaxlinear)?;
        let mut host_cols = Vec::new();
        for label in [
            Label::HIpv6,
            Label::HPort,
            Label::HNprocs,
            Label::HAckmark,
            Label::HHiwater,
        ] {
            host_cols.push(r.chunks(label, &nhosts)?.0);
        }
        let (p_ipv6, _) = r.chunks(Label::PIpv6, &nprocs)?;
        let (p_pid, pid_len) = r.chunks(Label::PPid, &nprocs)?;
        let mut clients = Vec::with_capacity(nclients as usize);
        for c in 0..nclients as usize {
            let addrs = host_cols[0][c].chunks_exact(16);
            let ports = int4s(host_cols[1][c]);
            let hn = int4s(host_cols[2][c]);
            let ack = int4s(host_cols[3][c]);
            let hiw = int4s(host_cols[4][c]);
            let hosts = addrs
                .enumerate()
                .map(|(i, a)| HostInfo {
                    addr: HostAddr(a.try_into().unwrap_or([0; 16])),
                    port: ports[i],
                    nprocs: hn[i],
                    ackmark: ack[i],
                    hiwater: hiw[i],
                })
                .collect();
            let pids = p_pid[c].chunks_exact(pid_len).map(|b| match b.len() {
                4 => i64::from(be_u32(b, 0).unwrap_or(0) as i32),
                _ => i64::from_be_bytes(b.try_into().unwrap_or([0; 8])),
            });
            let procs = p_ipv6[c]
                .chunks_exact(16)
                .zip(pids)
                .map(|(id, pid)| ProcInfo {
                    id: HostAddr(id.try_into().unwrap_or([0; 16])),
                    pid,
                })
                .collect();
            clients.push(ClientInfo {
                versions: versions[c].clone(),
                datalen: datalen[c],
                tag_ub: tag_ub[c] as i32,
                coll_xsize: xsize[c] as i32,
                coll_maxlinear: maxlinear[c] as i32,
                hosts,
                procs,
            });
        }
        let tables = GlobalTables { clients };
        tables.validate()?;
        Ok(tables)
    }

    /// Checks every client and the rules across clients: process identities are unique,
    /// and all clients agree on the collective crossover values.
    pub fn validate(&self) -> Result<()> {
        for (i, c) in self.clients.iter().enumerate() {
            c.validate()
                .map_err(|e| invalid("GlobalTables::validate", format!("client {i}: {e}")))?;
        }
        let mut seen = std::collections::BTreeSet::new();
        for p in self.clients.iter().flat_map(|c| &c.procs) {
            if !seen.insert(p) {
                return Err(invalid(
                    "IMPI_P_PID",
                    format!("process {p:?} appears twice: (P_IPV6, P_PID) must be unique"),
                ));
            }
        }
        self.coll_xsize()?;
        self.coll_maxlinear()?;
        Ok(())
    }

    /// The server's reply to `label` built from these tables (all clients contributed).
    pub fn reply(&self, label: Label) -> CollReply {
        CollReply {
            label,
            client_mask: full_mask(self.clients.len() as u32),
            data: self
                .clients
                .iter()
                .flat_map(|c| c.contribution(label))
                .collect(),
        }
    }

    pub fn nhosts(&self) -> u32 {
        self.clients.iter().map(|c| c.hosts.len() as u32).sum()
    }

    pub fn nprocs(&self) -> u32 {
        self.clients.iter().map(|c| c.procs.len() as u32).sum()
    }

    /// Global rank of the first host of `client`.
    pub fn first_host(&self, client: usize) -> u32 {
        self.clients[..client.min(self.clients.len())]
            .iter()
            .map(|c| c.hosts.len() as u32)
            .sum()
    }

    /// MPI_COMM_WORLD rank of the first process of `client`.
    pub fn first_rank(&self, client: usize) -> u32 {
        self.clients[..client.min(self.clients.len())]
            .iter()
            .map(|c| c.procs.len() as u32)
            .sum()
    }

    /// Every host in global host order, with its client.
    pub fn hosts(&self) -> impl Iterator<Item = (usize, &HostInfo)> {
        self.clients
            .iter()
            .enumerate()
            .flat_map(|(i, c)| c.hosts.iter().map(move |h| (i, h)))
    }

    /// Every process in MPI_COMM_WORLD order.
    pub fn procs(&self) -> impl Iterator<Item = &ProcInfo> {
        self.clients.iter().flat_map(|c| &c.procs)
    }

    /// The largest data length every client accepts (global minimum of IMPI_C_DATALEN).
    pub fn max_data_len(&self) -> u32 {
        self.clients.iter().map(|c| c.datalen).min().unwrap_or(1)
    }

    /// MPI_TAG_UB: the global minimum of IMPI_C_TAGUB.
    pub fn tag_ub(&self) -> i32 {
        self.clients
            .iter()
            .map(|c| c.tag_ub)
            .min()
            .unwrap_or(MIN_TAG_UB)
    }

    /// (ackmark, hiwater): the global minima over all hosts, as LAM/MPI uses them
    /// "per IMPI 0.0 errata".
    pub fn flow_marks(&self) -> (u32, u32) {
        let ack = self.hosts().map(|(_, h)| h.ackmark).min().unwrap_or(1);
        let hi = self.hosts().map(|(_, h)| h.hiwater).min().unwrap_or(1);
        (ack, hi.max(ack))
    }

    pub fn coll_xsize(&self) -> Result<u32> {
        self.agreed("IMPI_C_COLL_XSIZE", COLL_XSIZE_DEFAULT, |c| c.coll_xsize)
    }

    pub fn coll_maxlinear(&self) -> Result<u32> {
        self.agreed("IMPI_C_COLL_MAXLINEAR", COLL_MAXLINEAR_DEFAULT, |c| {
            c.coll_maxlinear
        })
    }

    /// A value all clients must agree on, -1 standing for `default`.
    fn agreed(&self, what: &'static str, default: u32, get: fn(&ClientInfo) -> i32) -> Result<u32> {
        let vals: Vec<u32> = self
            .clients
            .iter()
            .map(|c| u32::try_from(get(c)).unwrap_or(default))
            .collect();
        match vals.first() {
            Some(&v) if vals.iter().all(|&x| x == v) => Ok(v),
            None => Ok(default),
            _ => Err(invalid(
                what,
                format!(
                    "clients disagree: {vals:?} (-1 counts as {default}); all must send the same"
                ),
            )),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    /// A client with `hosts` hosts of the given process counts, addresses 10.c.h.1.
    pub(crate) fn client(c: u8, procs_per_host: &[u32]) -> ClientInfo {
        let hosts: Vec<HostInfo> = procs_per_host
            .iter()
            .enumerate()
            .map(|(h, &n)| HostInfo {
                addr: HostAddr::from_ip(IpAddr::V4(Ipv4Addr::new(10, c, h as u8, 1))),
                port: 7000 + h as u32,
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
                    pid: 100 + i64::from(p),
                })
            })
            .collect();
        ClientInfo {
            versions: vec![Version::default()],
            datalen: 16384,
            tag_ub: i32::MAX,
            coll_xsize: -1,
            coll_maxlinear: -1,
            hosts,
            procs,
        }
    }

    fn replies(t: &GlobalTables) -> BTreeMap<Label, CollReply> {
        Label::LAM_ORDER
            .into_iter()
            .map(|l| (l, t.reply(l)))
            .collect()
    }

    #[test]
    fn a_job_is_survivable_when_all_are_crossmpi_and_one_is_marked() {
        let v = |major, minor| Version { major, minor };
        let mut t = GlobalTables {
            clients: vec![client(0, &[1]), client(1, &[1])],
        };
        let base = v(0, 0);
        let cx = v(CROSSMPI_MAJOR, 1);
        let rs = v(SURVIVAL_MAJOR, 2);
        let mut set = |a: Vec<Version>, b: Vec<Version>| {
            t.clients[0].versions = a;
            t.clients[1].versions = b;
            let marked = |c: usize| t.clients[c].lists(SURVIVAL_MAJOR);
            (t.survivable(), marked(0), marked(1))
        };
        assert_eq!(set(vec![base, cx, rs], vec![base, cx]), (true, true, false));
        assert_eq!(set(vec![base, cx], vec![base, cx, rs]), (true, false, true));
        // A client that is not crossmpi cannot resend: nothing survives.
        assert_eq!(set(vec![base, cx, rs], vec![base]), (false, true, false));
        // No trunked cluster marked: nothing to survive.
        assert_eq!(set(vec![base, cx], vec![base, cx]), (false, false, false));
    }

    #[test]
    fn one_host_client_is_valid() {
        let c = ClientInfo::one_host(HostAddr::default(), 5000, &[7, 8], 1024);
        c.validate().unwrap();
        assert_eq!(c.contribution(Label::CNhosts), 1u32.to_be_bytes());
        assert_eq!(c.contribution(Label::HNprocs), 2u32.to_be_bytes());
        assert!(ClientInfo::one_host(HostAddr::default(), 5000, &[], 1024)
            .validate()
            .is_err());
    }

    #[test]
    fn tables_roundtrip_through_replies() {
        let mut t = GlobalTables {
            clients: vec![
                client(0, &[3, 1, 2]),
                client(1, &[2, 2]),
                client(2, &[1, 1]),
            ],
        };
        t.clients[1].versions.push(Version { major: 1, minor: 0 });
        t.validate().unwrap();
        let got = GlobalTables::decode(3, &replies(&t)).unwrap();
        assert_eq!(got, t);
        assert_eq!(got.nhosts(), 7);
        assert_eq!(got.nprocs(), 12);
        assert_eq!(got.first_host(2), 5);
        assert_eq!(got.first_rank(1), 6);
        assert_eq!(got.coll_xsize().unwrap(), 1024);
        assert_eq!(got.flow_marks(), (10, 20));
    }

    #[test]
    fn four_byte_pids_decode_and_reencode_as_eight() {
        let t = GlobalTables {
            clients: vec![client(0, &[2]), client(1, &[1])],
        };
        let mut r = replies(&t);
        let short: Vec<u8> = t
            .procs()
            .flat_map(|p| (p.pid as i32).to_be_bytes())
            .collect();
        r.get_mut(&Label::PPid).unwrap().data = short;
        let got = GlobalTables::decode(2, &r).unwrap();
        assert_eq!(got, t, "draft 4-byte P_PID widens to the same values");
        assert_eq!(
            got.reply(Label::PPid).data.len(),
            3 * 8,
            "re-encoded LAM form"
        );
    }

    #[test]
    fn bad_replies_are_rejected() {
        let t = GlobalTables {
            clients: vec![client(0, &[2]), client(1, &[1, 1])],
        };
        let mut r = replies(&t);
        r.get_mut(&Label::HPort).unwrap().data.pop();
        let e = GlobalTables::decode(2, &r).unwrap_err();
        assert!(e.to_string().contains("IMPI_H_PORT"), "{e}");
        let mut r = replies(&t);
        r.get_mut(&Label::CNhosts).unwrap().client_mask = 1;
        assert!(GlobalTables::decode(2, &r).is_err());
        let mut r = replies(&t);
        r.remove(&Label::PPid);
        assert!(GlobalTables::decode(2, &r).is_err());
        let mut bad = t.clone();
        bad.clients[1].coll_maxlinear = 8;
        let e = GlobalTables::decode(2, &replies(&bad)).unwrap_err();
        assert!(e.to_string().contains("disagree"), "{e}");
        let mut dup = t.clone();
        dup.clients[1].procs[0] = dup.clients[0].procs[0];
        assert!(GlobalTables::decode(2, &replies(&dup)).is_err());
        assert!(
            GlobalTables::decode(3, &replies(&t)).is_err(),
            "wrong client count"
        );
    }
}
