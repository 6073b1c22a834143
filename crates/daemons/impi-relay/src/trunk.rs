//! Trunking: K relays for one cluster, each on its own front-end.
//!
//! **Partition.** A client's processes (in its own order) are split over K hosts in
//! contiguous, balanced blocks: process j of n is on host `j * K / n`, so block sizes
//! differ by at most one and every host's processes stay contiguous, as IMPI's tables
//! require. Outside, the trunked cluster is K hosts (host k = relay k); inside, every
//! other client is K virtual hosts (virtual host k = relay k). Every relay computes this
//! from the same tables, so all agree.
//!
//! **Joining.** Trunk 0 carries the startup dialogue with the agent and the IMPI
//! server. Trunk k > 0 connects to trunk 0's agent port and they exchange, sans-IO
//! messages framed here: `Join` (k→0), `Hello` (0→k: the client rank and the server,
//! so k finds its global address), `Place` (k→0: k's global address and port and its
//! private address, all gathered before trunk 0 talks to the server), `Size` (0→k: the
//! client count, once the server told it), `Ports` (k→0: k's private port for every
//! client's virtual host), `Tables` (0→k: both views once startup is done). Each frame
//! is `"CXTK"`, a type and a length (4 bytes each, big-endian), then the payload; the
//! 12-byte header tells a joining trunk from an agent's 12-byte AUTH.

use crossmpi_impi::wire::addr::HostAddr;
use crossmpi_impi::wire::label::Label;
use crossmpi_impi::wire::startup::{CollReply, ServerMessage};
use crossmpi_impi::wire::tables::GlobalTables;
use crossmpi_impi::{Error, Result};
use std::collections::BTreeMap;
use std::ops::Range;

/// The most relays one cluster may have.
pub const MAX_TRUNKS: u32 = 64;

/// Which relay a packet between the cluster and another client takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrunkMode {
    /// The relay standing for its destination's host, as plain IMPI routing sends it:
    /// works with any IMPI implementation inside and outside.
    #[default]
    Destination,
    /// The relay of the inside process, both ways: symmetric routes. Inside ranks must
    /// send through their own relay's virtual host, which crossmpi does when the tables
    /// mark the other clients ([`SOURCE_TRUNK_MAJOR`]); needs crossmpi inside.
    Source,
}

/// Which relay this is and how the cluster's relays share the traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trunking {
    pub trunk: u32,
    pub ntrunks: u32,
    pub mode: TrunkMode,
}

impl Trunking {
    /// The only relay of its cluster.
    pub const SINGLE: Trunking = Trunking {
        trunk: 0,
        ntrunks: 1,
        mode: TrunkMode::Destination,
    };
}

/// The version entry (major "CXTS", minor K) that, in source mode, the relays add to
/// every other client's IMPI_C_VERSION list in the tables shown inside: crossmpi's IMPI
/// route (crossmpi-core `route::impi::startup::host_towards`, same value) then sends
/// to all of that client's processes through the virtual host of its own trunk.
pub const SOURCE_TRUNK_MAJOR: u32 = 0x4358_5453;

/// The processes (indices within their client) that host `k` of `ntrunks` holds.
pub fn block(nprocs: u32, ntrunks: u32, k: u32) -> Range<u32> {
    let at = |k: u32| (u64::from(k) * u64::from(nprocs)).div_ceil(u64::from(ntrunks)) as u32;
    at(k)..at(k + 1)
}

/// The host (of `ntrunks`) holding process `index` of a client of `nprocs`.
pub fn trunk_of(nprocs: u32, ntrunks: u32, index: u32) -> u32 {
    (u64::from(index) * u64::from(ntrunks) / u64::from(nprocs)) as u32
}

/// The sizes of the K blocks of `nprocs` processes.
pub fn block_sizes(nprocs: u32, ntrunks: u32) -> Vec<u32> {
    (0..ntrunks)
        .map(|k| block(nprocs, ntrunks, k).len() as u32)
        .collect()
}

/// Where one relay of a trunk stands, as the others see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrunkAddrs {
    pub global: HostAddr,
    pub global_port: u32,
    pub private: HostAddr,
}

/// A message between the relays of one cluster.
#[derive(Debug, Clone, PartialEq)]
pub enum TrunkMsg {
    Join {
        trunk: u32,
    },
    Hello {
        rank: u32,
        ntrunks: u32,
        mode: TrunkMode,
        server: String,
    },
    Place(TrunkAddrs),
    Size {
        nclients: u32,
    },
    Ports(Vec<u16>),
    Tables {
        inside: GlobalTables,
        outside: GlobalTables,
    },
}

const MAGIC: &[u8; 4] = b"CXTK";
pub const HEADER_LEN: usize = 12;

fn bad(reason: String) -> Error {
    Error::Invalid {
        what: "impi-relay trunk message",
        reason,
    }
}

fn u32_at(buf: &[u8], at: usize) -> Result<u32> {
    buf.get(at..at + 4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| bad(format!("{} bytes, truncated at byte {at}", buf.len())))
}

fn addr_at(buf: &[u8], at: usize) -> Result<HostAddr> {
    let b = buf
        .get(at..at + 16)
        .ok_or_else(|| bad(format!("{} bytes, truncated at byte {at}", buf.len())))?;
    let mut a = [0u8; 16];
    a.copy_from_slice(b);
    Ok(HostAddr(a))
}

fn emit_tables(t: &GlobalTables, out: &mut Vec<u8>) {
    out.extend_from_slice(&(t.clients.len() as u32).to_be_bytes());
    for label in Label::LAM_ORDER {
        ServerMessage::Coll(t.reply(label)).emit(out);
    }
}

fn decode_tables(buf: &[u8], max_msg: u32) -> Result<(GlobalTables, usize)> {
    let nclients = u32_at(buf, 0)?;
    let mut at = 4;
    let mut replies: BTreeMap<Label, CollReply> = BTreeMap::new();
    for _ in Label::LAM_ORDER {
        match ServerMessage::decode(&buf[at..], max_msg)? {
            Some((ServerMessage::Coll(r), used)) => {
                at += used;
                replies.insert(r.label, r);
            }
            other => return Err(bad(format!("tables hold {other:?}, not a label's reply"))),
        }
    }
    Ok((GlobalTables::decode(nclients, &replies)?, at))
}

impl TrunkMsg {
    fn kind(&self) -> u32 {
        match self {
            TrunkMsg::Join { .. } => 1,
            TrunkMsg::Hello { .. } => 2,
            TrunkMsg::Place(_) => 3,
            TrunkMsg::Size { .. } => 4,
            TrunkMsg::Ports(_) => 5,
            TrunkMsg::Tables { .. } => 6,
        }
    }

    pub fn emit(&self, out: &mut Vec<u8>) {
        let mut body = Vec::new();
        match self {
            TrunkMsg::Join { trunk } => body.extend_from_slice(&trunk.to_be_bytes()),
            TrunkMsg::Hello {
                rank,
                ntrunks,
                mode,
                server,
            } => {
                body.extend_from_slice(&rank.to_be_bytes());
                body.extend_from_slice(&ntrunks.to_be_bytes());
                body.extend_from_slice(&u32::from(*mode == TrunkMode::Source).to_be_bytes());
                body.extend_from_slice(server.as_bytes());
            }
            TrunkMsg::Place(a) => {
                body.extend_from_slice(&a.global.0);
                body.extend_from_slice(&a.global_port.to_be_bytes());
                body.extend_from_slice(&a.private.0);
            }
            TrunkMsg::Size { nclients } => body.extend_from_slice(&nclients.to_be_bytes()),
            TrunkMsg::Ports(ports) => {
                body.extend(ports.iter().flat_map(|&p| u32::from(p).to_be_bytes()))
            }
            TrunkMsg::Tables { inside, outside } => {
                emit_tables(inside, &mut body);
                emit_tables(outside, &mut body);
            }
        }
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.kind().to_be_bytes());
        out.extend_from_slice(&(body.len() as u32).to_be_bytes());
        out.extend_from_slice(&body);
    }

    /// True when these first bytes of a connection start a trunk message (an agent's
    /// first message is AUTH).
    pub fn is_trunk(first: &[u8]) -> bool {
        first.starts_with(MAGIC)
    }

    /// The payload length announced by a 12-byte header, at most `max_msg`.
    pub fn payload_len(header: &[u8], max_msg: u32) -> Result<usize> {
        if !Self::is_trunk(header) || header.len() < HEADER_LEN {
            return Err(bad(format!(
                "header {:02x?} does not start with \"CXTK\"",
                &header[..header.len().min(HEADER_LEN)]
            )));
        }
        let len = u32_at(header, 8)?;
        if len > max_msg {
            return Err(bad(format!(
                "payload of {len} bytes, more than CROSSMPI_IMPI_MAX_MSG={max_msg}"
            )));
        }
        Ok(len as usize)
    }

    /// Decodes a message: its 12-byte header and its whole payload.
    pub fn decode(header: &[u8], body: &[u8], max_msg: u32) -> Result<TrunkMsg> {
        let len = Self::payload_len(header, max_msg)?;
        if body.len() != len {
            return Err(bad(format!("payload of {} bytes, not {len}", body.len())));
        }
        let exact = |want: usize| {
            if body.len() == want {
                Ok(())
            } else {
                Err(bad(format!("payload of {} bytes, not {want}", body.len())))
            }
        };
        let msg = match u32_at(header, 4)? {
            1 => {
                exact(4)?;
                TrunkMsg::Join {
                    trunk: u32_at(body, 0)?,
                }
            }
            2 => TrunkMsg::Hello {
                rank: u32_at(body, 0)?,
                ntrunks: u32_at(body, 4)?,
                mode: match u32_at(body, 8)? {
                    0 => TrunkMode::Destination,
                    1 => TrunkMode::Source,
                    m => return Err(bad(format!("trunk mode {m}"))),
                },
                server: String::from_utf8(body[12..].to_vec())
                    .map_err(|_| bad("server address is not UTF-8".into()))?,
            },
            3 => {
                exact(36)?;
                TrunkMsg::Place(TrunkAddrs {
                    global: addr_at(body, 0)?,
                    global_port: u32_at(body, 16)?,
                    private: addr_at(body, 20)?,
                })
            }
            4 => {
                exact(4)?;
                TrunkMsg::Size {
                    nclients: u32_at(body, 0)?,
                }
            }
            5 => TrunkMsg::Ports(
                body.chunks(4)
                    .enumerate()
                    .map(|(i, _)| {
                        let p = u32_at(body, 4 * i)?;
                        u16::try_from(p).map_err(|_| bad(format!("port {p}")))
                    })
                    .collect::<Result<_>>()?,
            ),
            6 => {
                let (inside, used) = decode_tables(body, max_msg)?;
                let (outside, rest) = decode_tables(&body[used..], max_msg)?;
                if used + rest != body.len() {
                    return Err(bad("bytes after the tables".into()));
                }
                TrunkMsg::Tables { inside, outside }
            }
            other => return Err(bad(format!("unknown type {other}"))),
        };
        Ok(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{client, ip};

    #[test]
    fn blocks_are_balanced_contiguous_and_agree_with_trunk_of() {
        for n in 1..40u32 {
            for k in 1..=n.min(9) {
                let sizes = block_sizes(n, k);
                assert_eq!(sizes.iter().sum::<u32>(), n);
                let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                assert!(hi - lo <= 1 && *lo >= 1, "n={n} k={k}: {sizes:?}");
                for t in 0..k {
                    for j in block(n, k, t) {
                        assert_eq!(trunk_of(n, k, j), t, "n={n} k={k} j={j}");
                    }
                }
                assert_eq!(block(n, k, 0).start, 0);
                assert_eq!(block(n, k, k - 1).end, n);
            }
        }
    }

    #[test]
    fn messages_round_trip() {
        let a = client(&[(ip(10, 0, 0, 1), 5000, &[7, 8])], (4, 8));
        let b = client(&[(ip(10, 0, 0, 2), 6000, &[9])], (2, 3));
        let tables = GlobalTables {
            clients: vec![a, b],
        };
        let msgs = [
            TrunkMsg::Join { trunk: 3 },
            TrunkMsg::Hello {
                rank: 1,
                ntrunks: 4,
                mode: TrunkMode::Source,
                server: "192.0.2.1:4000".into(),
            },
            TrunkMsg::Place(TrunkAddrs {
                global: ip(192, 0, 2, 9),
                global_port: 7000,
                private: ip(10, 0, 0, 254),
            }),
            TrunkMsg::Size { nclients: 3 },
            TrunkMsg::Ports(vec![0, 40000, 65535]),
            TrunkMsg::Tables {
                inside: tables.clone(),
                outside: tables,
            },
        ];
        for m in msgs {
            let mut out = Vec::new();
            m.emit(&mut out);
            assert!(TrunkMsg::is_trunk(&out));
            let back = TrunkMsg::decode(&out[..HEADER_LEN], &out[HEADER_LEN..], 1 << 20).unwrap();
            assert_eq!(back, m);
        }
    }

    #[test]
    fn bad_messages_are_named() {
        let mut out = Vec::new();
        TrunkMsg::Size { nclients: 2 }.emit(&mut out);
        let e =
            TrunkMsg::decode(&out[..HEADER_LEN], &out[HEADER_LEN..HEADER_LEN + 2], 64).unwrap_err();
        assert!(e.to_string().contains("payload of 2 bytes"), "{e}");
        let e = TrunkMsg::payload_len(b"AUTHxxxxxxxx", 64).unwrap_err();
        assert!(e.to_string().contains("CXTK"), "{e}");
        let mut big = Vec::new();
        TrunkMsg::Ports(vec![1; 100]).emit(&mut big);
        let e = TrunkMsg::payload_len(&big[..HEADER_LEN], 64).unwrap_err();
        assert!(e.to_string().contains("CROSSMPI_IMPI_MAX_MSG"), "{e}");
        out[7] = 99;
        let e = TrunkMsg::decode(&out[..HEADER_LEN], &out[HEADER_LEN..], 64).unwrap_err();
        assert!(e.to_string().contains("unknown type 99"), "{e}");
    }
}
