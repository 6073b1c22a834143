//! The two views of the startup tables and the label-by-label rewriting between them.
//!
//! Outside, the relay's cluster (client `me`) is ONE host at the relay's global address,
//! holding all of the cluster's processes. Inside, every other client is ONE host at the
//! relay's private address (one listening port per client), holding that client's
//! processes; the cluster's own hosts are shown unchanged. Labels are rewritten one at a
//! time as they pass, so a lock-step client (LAM/MPI) works as well as a pipelined one.
//!
//! Process identities (`P_IPV6`, `P_PID`) must be unique in the whole job, but private
//! clusters may use the same addresses. Outward, every address of the cluster's
//! processes becomes a synthetic one naming the client and the address's index (pids are
//! kept), so identities stay unique and processes that shared an address still share
//! one. Inward, an outside address equal to one of the cluster's own is renamed the same
//! way. The mapping is a deterministic function of the tables, so every relay of a
//! cluster computes the same one.

use crate::secure::ENCRYPT_MAJOR;
use crate::survive::SURVIVE_MAJOR;
use crate::trunk::{block_sizes, TrunkAddrs, TrunkMode, SOURCE_TRUNK_MAJOR};
use crossmpi_impi::wire::addr::HostAddr;
use crossmpi_impi::wire::label::Label;
use crossmpi_impi::{Error, Result};
use std::collections::BTreeMap;

/// The major version crossmpi lists in IMPI_C_VERSION ("CXMP"; crossmpi-core's
/// `CROSSMPI_VERSION`).
pub use crossmpi_impi::wire::tables::CROSSMPI_MAJOR;

/// Byte 5 of a synthetic address: which rule made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Renamed {
    /// A cluster's own process address, shown outside by its relay.
    Outward = 0,
    /// An outside address that collided with an address of the relay's cluster.
    Inward = 1,
}

/// `fd43:584d:50RR:00CC::IIII:IIII`: a unique-local IPv6 address (prefix `fd` + "CXMP")
/// naming the rule R, the client C and the index I of the renamed address.
pub fn synthetic_addr(rule: Renamed, client: u32, index: u32) -> HostAddr {
    let mut b = [0u8; 16];
    b[..5].copy_from_slice(&[0xfd, b'C', b'X', b'M', b'P']);
    b[5] = rule as u8;
    b[6..8].copy_from_slice(&(client as u16).to_be_bytes());
    b[12..].copy_from_slice(&index.to_be_bytes());
    HostAddr(b)
}

/// Where the relays of a cluster stand: its client rank and, for every trunk, the two
/// addresses (trunk k is the cluster's host k outside and every other client's virtual
/// host k inside).
#[derive(Debug, Clone)]
pub struct RelayPlace {
    pub me: u32,
    pub trunks: Vec<TrunkAddrs>,
    pub mode: TrunkMode,
    /// The cluster's relays encrypt: its IMPI_C_VERSION goes out marked
    /// ([`crate::secure::ENCRYPT_MAJOR`]).
    pub encrypt: bool,
    /// With 2 or more trunks, the cluster's IMPI_C_VERSION goes out marked survivable
    /// ([`crate::survive::SURVIVE_MAJOR`]; `CROSSMPI_RELAY_SURVIVE`).
    pub survive: bool,
}

impl RelayPlace {
    fn ntrunks(&self) -> u32 {
        self.trunks.len() as u32
    }
}

fn be32s(data: &[u8]) -> Vec<u32> {
    data.chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn words(vals: impl IntoIterator<Item = u32>) -> Vec<u8> {
    vals.into_iter().flat_map(u32::to_be_bytes).collect()
}

fn invalid(what: &'static str, reason: String) -> Error {
    Error::Invalid { what, reason }
}

/// Splits a reply into one chunk per client of `counts[c]` elements of `elem` bytes.
fn split<'a>(label: Label, data: &'a [u8], counts: &[u32], elem: usize) -> Result<Vec<&'a [u8]>> {
    let total: u64 = counts.iter().map(|&c| u64::from(c)).sum::<u64>() * elem as u64;
    if total != data.len() as u64 {
        return Err(Error::BadLength {
            what: label.name(),
            len: data.len() as u64,
            expected: format!("{total} bytes ({counts:?} elements of {elem} bytes)"),
        });
    }
    let mut rest = data;
    Ok(counts
        .iter()
        .map(|&c| {
            let (chunk, tail) = rest.split_at(c as usize * elem);
            rest = tail;
            chunk
        })
        .collect())
}

/// IMPI_C_VERSION with the source-trunking mark (major "CXTS", minor K) appended to the
/// list of every client but `me` (each list starts with version 0.0).
fn mark_source_trunks(data: &[u8], me: u32, k: u32) -> Result<Vec<u8>> {
    if !data.len().is_multiple_of(8) || !data.starts_with(&[0; 8]) {
        return Err(invalid(
            "impi-relay (server reply)",
            format!(
                "IMPI_C_VERSION of {} bytes is not version lists",
                data.len()
            ),
        ));
    }
    let mut out = Vec::with_capacity(data.len() + 8 * 32);
    let mut client = 0u32;
    for (i, pair) in data.chunks_exact(8).enumerate() {
        if i > 0 && pair == [0; 8] {
            if client != me {
                out.extend(words([SOURCE_TRUNK_MAJOR, k]));
            }
            client += 1;
        }
        out.extend_from_slice(pair);
    }
    if client != me {
        out.extend(words([SOURCE_TRUNK_MAJOR, k]));
    }
    Ok(out)
}

/// The synthetic addresses of a list of 16-byte process addresses: one per distinct
/// address, numbered in order of first appearance.
fn rename_addresses(
    ids: &[u8],
    rule: Renamed,
    client: u32,
    keep: impl Fn(&[u8]) -> bool,
) -> Vec<u8> {
    let mut seen: Vec<&[u8]> = Vec::new();
    let mut out = Vec::with_capacity(ids.len());
    for id in ids.chunks_exact(16) {
        if keep(id) {
            out.extend_from_slice(id);
            continue;
        }
        let index = match seen.iter().position(|s| *s == id) {
            Some(i) => i,
            None => {
                seen.push(id);
                seen.len() - 1
            }
        };
        out.extend_from_slice(&synthetic_addr(rule, client, index as u32).0);
    }
    out
}

/// The inside cluster's contributions as its agent sent them, and the outward rewrite.
#[derive(Debug, Default, Clone)]
pub struct InsideLabels {
    sent: BTreeMap<Label, Vec<u8>>,
}

impl InsideLabels {
    pub fn get(&self, label: Label) -> Option<&[u8]> {
        self.sent.get(&label).map(Vec::as_slice)
    }

    fn count(&self, label: Label) -> Option<u32> {
        self.get(label).and_then(|d| be32s(d).first().copied())
    }

    /// Records the inside agent's contribution to `label` and returns what the relay
    /// submits outside in its place.
    pub fn outward(&mut self, place: &RelayPlace, label: Label, data: &[u8]) -> Result<Vec<u8>> {
        if self.sent.contains_key(&label) {
            return Err(invalid(
                "impi-relay (inside agent)",
                format!("label {label} submitted twice"),
            ));
        }
        let count_for = |extent_label: Label| {
            self.count(extent_label).ok_or_else(|| {
                invalid(
                    "impi-relay (inside agent)",
                    format!("label {label} arrived before {}", extent_label.name()),
                )
            })
        };
        let count = match label {
            Label::HIpv6 | Label::HPort | Label::HNprocs | Label::HAckmark | Label::HHiwater => {
                Some(count_for(Label::CNhosts)?)
            }
            Label::PIpv6 | Label::PPid => Some(count_for(Label::CNprocs)?),
            _ => None,
        };
        label.check_contribution(data.len(), count)?;
        if matches!(label, Label::CNhosts | Label::CNprocs) && be32s(data)[0] as i32 <= 0 {
            return Err(Error::OutOfRange {
                what: label.name(),
                value: (be32s(data)[0] as i32).into(),
                allowed: "1..=2147483647".into(),
            });
        }
        let k = place.ntrunks();
        let crossmpi = |v: &[u32]| v.chunks(2).any(|p| p[0] == CROSSMPI_MAJOR);
        if label == Label::CVersion && place.mode == TrunkMode::Source && !crossmpi(&be32s(data)) {
            return Err(invalid(
                "impi-relay (inside agent)",
                "source trunking (-trunk-mode source) needs crossmpi inside, but the agent's \
                 IMPI_C_VERSION lists no crossmpi version"
                    .into(),
            ));
        }
        if label == Label::CNprocs && be32s(data)[0] < k {
            return Err(invalid(
                "impi-relay (inside agent)",
                format!(
                    "IMPI_C_NPROCS is {}: a cluster needs at least one process per trunk ({k})",
                    be32s(data)[0]
                ),
            ));
        }
        let out = match label {
            Label::CNhosts => words([k]),
            Label::HIpv6 => place.trunks.iter().flat_map(|t| t.global.0).collect(),
            Label::HPort => words(place.trunks.iter().map(|t| t.global_port)),
            Label::HNprocs => {
                let n = be32s(data).iter().map(|&n| u64::from(n)).sum::<u64>() as u32;
                words(block_sizes(n, k))
            }
            Label::HAckmark | Label::HHiwater => words(std::iter::repeat_n(
                be32s(data).into_iter().min().unwrap_or(1),
                k as usize,
            )),
            Label::PIpv6 => rename_addresses(data, Renamed::Outward, place.me, |_| false),
            Label::CVersion => {
                // The server hands these marks to every client, and back to this one:
                // the inside view's own entry carries them too.
                let mut marked = data.to_vec();
                if place.encrypt {
                    marked.extend(words([ENCRYPT_MAJOR, crate::secure::VERSION]));
                }
                if place.survive && k >= 2 {
                    marked.extend(words([SURVIVE_MAJOR, k]));
                }
                marked
            }
            _ => data.to_vec(),
        };
        self.sent.insert(label, data.to_vec());
        Ok(out)
    }
}

/// What the inward rewrite of the server's replies needs, gathered as replies arrive.
#[derive(Debug, Clone)]
pub struct InwardContext {
    pub place: RelayPlace,
    pub nclients: u32,
    /// Hosts and processes per client, from the outside replies.
    pub nhosts: Option<Vec<u32>>,
    pub nprocs: Option<Vec<u32>>,
    /// The private listening port of every client's virtual host, per trunk
    /// (`ports[trunk][client]`; the relay's own client's entry unused).
    pub ports: Option<Vec<Vec<u16>>>,
}

impl InwardContext {
    pub fn new(place: RelayPlace, nclients: u32) -> InwardContext {
        InwardContext {
            place,
            nclients,
            nhosts: None,
            nprocs: None,
            ports: None,
        }
    }

    /// Notes what a reply tells about the outside tables (process and host counts).
    pub fn learn(&mut self, label: Label, data: &[u8]) -> Result<()> {
        if !matches!(label, Label::CNhosts | Label::CNprocs) {
            return Ok(());
        }
        let n = self.nclients as usize;
        if data.len() != 4 * n {
            return Err(Error::BadLength {
                what: label.name(),
                len: data.len() as u64,
                expected: format!("{} bytes ({n} clients)", 4 * n),
            });
        }
        let vals = be32s(data);
        if let Some(&bad) = vals.iter().find(|&&v| v == 0 || v as i32 <= 0) {
            return Err(Error::OutOfRange {
                what: label.name(),
                value: (bad as i32).into(),
                allowed: "1..=2147483647".into(),
            });
        }
        let me = self.place.me as usize;
        let k = self.place.ntrunks();
        if label == Label::CNhosts && vals[me] != k {
            return Err(invalid(
                "impi-relay (server reply)",
                format!(
                    "IMPI_C_NHOSTS of this relay's client {me} is {}, not its {k} trunks",
                    vals[me]
                ),
            ));
        }
        if label == Label::CNprocs {
            if let Some((c, n)) = vals.iter().enumerate().find(|(_, &n)| n < k) {
                return Err(invalid(
                    "impi-relay (server reply)",
                    format!(
                        "client {c} has {n} processes, fewer than this cluster's {k} trunks \
                         (each relay shows it as one host of at least one process)"
                    ),
                ));
            }
        }
        match label {
            Label::CNhosts => self.nhosts = Some(vals),
            _ => self.nprocs = Some(vals),
        }
        Ok(())
    }

    /// The reply the inside agent receives for `label`, or None while something it
    /// depends on is not yet known (counts from other replies, the private ports).
    pub fn inward(
        &self,
        inside: &InsideLabels,
        label: Label,
        data: &[u8],
    ) -> Result<Option<Vec<u8>>> {
        let me = self.place.me as usize;
        let Some(own) = inside.get(label) else {
            return Err(invalid(
                "impi-relay (server reply)",
                format!("a reply to {label}, which this relay's client has not submitted"),
            ));
        };
        let per_host = matches!(
            label,
            Label::HIpv6 | Label::HPort | Label::HNprocs | Label::HAckmark | Label::HHiwater
        );
        let per_proc = matches!(label, Label::PIpv6 | Label::PPid);
        let ones = vec![1u32; self.nclients as usize];
        let counts = if per_host {
            match &self.nhosts {
                Some(c) => c.clone(),
                None => return Ok(None),
            }
        } else if per_proc {
            match &self.nprocs {
                Some(c) => c.clone(),
                None => return Ok(None),
            }
        } else {
            ones
        };
        if label == Label::HPort && self.ports.is_none() {
            return Ok(None);
        }
        if label == Label::HNprocs && self.nprocs.is_none() {
            return Ok(None);
        }
        if label == Label::CVersion {
            // Version lists have no count; they pass as they are, but for the mark that
            // tells crossmpi inside to send through its own relay.
            return Ok(Some(match self.place.mode {
                TrunkMode::Destination => data.to_vec(),
                TrunkMode::Source => mark_source_trunks(data, me as u32, self.place.ntrunks())?,
            }));
        }
        let elem = match label {
            Label::PPid => {
                let total: u64 = counts.iter().map(|&c| u64::from(c)).sum();
                if total > 0 && data.len() as u64 == 4 * total {
                    4
                } else {
                    8
                }
            }
            other => other.element_sizes()[0],
        };
        let chunks = split(label, data, &counts, elem)?;
        let inside_ids = inside.get(Label::PIpv6).unwrap_or(&[]);
        let mut out = Vec::with_capacity(data.len());
        for (c, chunk) in chunks.iter().enumerate() {
            if c == me {
                if label == Label::PPid && own.len() != chunk.len() {
                    return Err(invalid(
                        "impi-relay (server reply)",
                        "IMPI_P_PID widths differ between clients (4 and 8 bytes)".into(),
                    ));
                }
                out.extend_from_slice(own);
                continue;
            }
            let nprocs = self.nprocs.as_ref().map(|p| p[c]).unwrap_or(0);
            let k = self.place.ntrunks();
            match label {
                Label::HIpv6 => out.extend(self.place.trunks.iter().flat_map(|t| t.private.0)),
                Label::HPort => out.extend(self.ports.iter().flatten().flat_map(|per_client| {
                    u32::from(per_client.get(c).copied().unwrap_or(0)).to_be_bytes()
                })),
                Label::HNprocs => out.extend(words(block_sizes(nprocs, k))),
                Label::HAckmark | Label::HHiwater => out.extend(words(std::iter::repeat_n(
                    be32s(chunk).into_iter().min().unwrap_or(1),
                    k as usize,
                ))),
                Label::CNhosts => out.extend_from_slice(&k.to_be_bytes()),
                Label::PIpv6 => out.extend_from_slice(&rename_addresses(
                    chunk,
                    Renamed::Inward,
                    c as u32,
                    |id| !inside_ids.chunks_exact(16).any(|own| own == id),
                )),
                _ => out.extend_from_slice(chunk),
            }
        }
        Ok(Some(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{cluster, ip, trunk_place, views};
    use crossmpi_impi::wire::tables::ClientInfo;

    fn place(me: u32) -> RelayPlace {
        RelayPlace {
            me,
            trunks: vec![TrunkAddrs {
                global: ip(192, 0, 2, 9),
                global_port: 7777,
                private: ip(10, 0, 0, 254),
            }],
            mode: TrunkMode::Destination,
            encrypt: false,
            survive: true,
        }
    }

    /// Two private clusters with the same addresses and pids, one relay.
    #[test]
    fn both_views_are_consistent_tables() {
        let inside = cluster(&[2, 1], (8, 16));
        let other = cluster(&[1, 1, 1], (4, 32));
        let p = place(0);
        let (out, inv) = views(&p, &inside, &other, vec![vec![0, 6001]]);
        // The outside view: the cluster is one host, its processes renamed.
        assert_eq!(out.clients[0].hosts.len(), 1);
        let h = out.clients[0].hosts[0];
        assert_eq!(
            (h.addr, h.port, h.nprocs, h.ackmark, h.hiwater),
            (p.trunks[0].global, 7777, 3, 8, 16)
        );
        assert_eq!(
            out.clients[0].procs[0].id,
            synthetic_addr(Renamed::Outward, 0, 0)
        );
        assert_eq!(
            out.clients[0].procs[1].id, out.clients[0].procs[0].id,
            "same node stays one"
        );
        assert_eq!(
            out.clients[0].procs[2].id,
            synthetic_addr(Renamed::Outward, 0, 1)
        );
        assert_eq!(out.clients[0].procs[2].pid, 100);
        assert_eq!(out.clients[1], other);

        // The inside view: the other client is one host at the private address.
        let v = inv.clients[1].hosts[0];
        assert_eq!(inv.clients[1].hosts.len(), 1);
        assert_eq!(
            (v.addr, v.port, v.nprocs, v.ackmark, v.hiwater),
            (p.trunks[0].private, 6001, 3, 4, 32)
        );
        // The other client's 10.0.0.1 and .2 collide with the cluster's: renamed; .3 kept.
        let ids: Vec<HostAddr> = inv.clients[1].procs.iter().map(|p| p.id).collect();
        let want = vec![
            synthetic_addr(Renamed::Inward, 1, 0),
            synthetic_addr(Renamed::Inward, 1, 1),
            ip(10, 0, 0, 3),
        ];
        assert_eq!(ids, want);
    }

    /// Three trunks: outside the cluster is three hosts (one per relay) holding balanced
    /// blocks of its processes; inside the other client is three virtual hosts, each at
    /// its relay's private address and port.
    #[test]
    fn trunked_views_partition_both_sides() {
        let inside = cluster(&[3, 2, 2], (8, 16));
        let other = cluster(&[2, 2], (4, 32));
        let p = trunk_place(3);
        let ports = (0..3).map(|k| vec![0, 6000 + k]).collect();
        let (out, inv) = views(&p, &inside, &other, ports);
        let hosts = |c: &ClientInfo| -> Vec<_> {
            c.hosts
                .iter()
                .map(|h| (h.addr, h.port, h.nprocs, h.ackmark, h.hiwater))
                .collect()
        };
        let want: Vec<_> = (0..3u8)
            .map(|k| {
                let t = &p.trunks[k as usize];
                (t.global, t.global_port, [3, 2, 2][k as usize], 8, 16)
            })
            .collect();
        assert_eq!(hosts(&out.clients[0]), want);
        assert_eq!(out.clients[0].procs.len(), 7);
        assert_eq!(out.clients[1], other);
        let virt = hosts(&inv.clients[1]);
        let want: Vec<_> = (0..3u8)
            .map(|k| {
                let t = &p.trunks[k as usize];
                (t.private, 6000 + u32::from(k), [2, 1, 1][k as usize], 4, 32)
            })
            .collect();
        assert_eq!(virt, want);
        assert_eq!(inv.clients[1].procs.len(), 4);
    }

    #[test]
    fn source_mode_marks_the_other_clients_and_needs_crossmpi_inside() {
        let mut p = place(1);
        p.trunks.push(p.trunks[0]);
        p.mode = TrunkMode::Source;
        let mut labels = InsideLabels::default();
        let e = labels
            .outward(&p, Label::CVersion, &words([0, 0]))
            .unwrap_err();
        assert!(e.to_string().contains("needs crossmpi inside"), "{e}");
        let ours = words([0, 0, CROSSMPI_MAJOR, 17]);
        let sent = labels.outward(&p, Label::CVersion, &ours).unwrap();
        // Two trunks: the cluster goes out marked survivable.
        assert_eq!(sent, [ours.clone(), words([SURVIVE_MAJOR, 2])].concat());
        p.survive = false;
        let mut unmarked = InsideLabels::default();
        assert_eq!(unmarked.outward(&p, Label::CVersion, &ours).unwrap(), ours);
        p.survive = true;
        let ctx = InwardContext::new(p, 3);
        // Client 0 lists 0.0 and 1.2; client 1 (the relays' own) is left as it sent.
        let reply = [words([0, 0, 1, 2]), ours.clone(), words([0, 0])].concat();
        let marked = ctx
            .inward(&labels, Label::CVersion, &reply)
            .unwrap()
            .unwrap();
        let want = [
            words([0, 0, 1, 2, SOURCE_TRUNK_MAJOR, 2]),
            ours,
            words([0, 0, SOURCE_TRUNK_MAJOR, 2]),
        ]
        .concat();
        assert_eq!(marked, want);
        assert!(mark_source_trunks(&words([1, 2]), 0, 2).is_err());
    }

    #[test]
    fn too_few_processes_for_the_trunks_are_refused() {
        let mut p = place(0);
        p.trunks.push(p.trunks[0]);
        let mut labels = InsideLabels::default();
        let e = labels.outward(&p, Label::CNprocs, &words([1])).unwrap_err();
        assert!(
            e.to_string().contains("at least one process per trunk (2)"),
            "{e}"
        );
        let mut ctx = InwardContext::new(p, 2);
        let e = ctx.learn(Label::CNprocs, &words([4, 1])).unwrap_err();
        assert!(e.to_string().contains("client 1 has 1 processes"), "{e}");
        let e = ctx.learn(Label::CNhosts, &words([1, 1])).unwrap_err();
        assert!(e.to_string().contains("not its 2 trunks"), "{e}");
    }

    #[test]
    fn inside_protocol_errors_are_named() {
        let mut labels = InsideLabels::default();
        let c = cluster(&[1], (1, 2));
        let e = labels
            .outward(&place(0), Label::HIpv6, &c.contribution(Label::HIpv6))
            .unwrap_err();
        assert!(e.to_string().contains("before IMPI_C_NHOSTS"), "{e}");
        labels
            .outward(&place(0), Label::CNhosts, &words([2]))
            .unwrap();
        let e = labels
            .outward(&place(0), Label::HPort, &words([1]))
            .unwrap_err();
        assert!(e.to_string().contains("IMPI_H_PORT"), "{e}");
        let e = labels
            .outward(&place(0), Label::CNhosts, &words([2]))
            .unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
        let mut fresh = InsideLabels::default();
        assert!(fresh
            .outward(&place(0), Label::CNprocs, &words([0]))
            .is_err());
    }

    #[test]
    fn server_replies_that_break_the_view_are_rejected() {
        let mut ctx = InwardContext::new(place(1), 2);
        assert!(
            ctx.learn(Label::CNhosts, &words([1, 2])).is_err(),
            "relay's client has 2 hosts"
        );
        assert!(
            ctx.learn(Label::CNprocs, &words([1])).is_err(),
            "one count for two clients"
        );
        assert!(ctx.learn(Label::CNprocs, &words([1, 0])).is_err());
        let labels = InsideLabels::default();
        assert!(
            ctx.inward(&labels, Label::CDatalen, &words([1, 2]))
                .is_err(),
            "not submitted"
        );
    }
}
