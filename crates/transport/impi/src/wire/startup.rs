//! Startup messages between a client and the IMPI server, and their incremental decoders.
//!
//! A decoder looks at the front of a receive buffer and returns `Ok(None)` while the
//! message is incomplete. It validates the command header, including the length bound,
//! before it waits for (and so before anyone buffers) the payload.

use super::cmd::{CmdHeader, CmdRepr, Command, CMD_HEADER_LEN};
use super::label::Label;
use super::{be_u32, be_u64};
use crate::error::{Error, Result};

/// `IMPI_MAX_CLIENTS`: the client mask has 32 bits.
pub const MAX_CLIENTS: u32 = 32;

/// Authentication methods; a client offers the set `1 << method`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMethod {
    None,
    Key,
}

impl AuthMethod {
    pub fn raw(self) -> u32 {
        match self {
            AuthMethod::None => 0,
            AuthMethod::Key => 1,
        }
    }

    /// This method's bit in a client's auth mask.
    pub fn bit(self) -> u32 {
        1 << self.raw()
    }

    pub fn from_raw(raw: u32) -> Result<AuthMethod> {
        match raw {
            0 => Ok(AuthMethod::None),
            1 => Ok(AuthMethod::Key),
            other => Err(Error::OutOfRange {
                what: "IMPI server auth reply 'which'",
                value: other.into(),
                allowed: "0 (IMPI_AUTH_NONE) or 1 (IMPI_AUTH_KEY)".into(),
            }),
        }
    }
}

/// What a client sends to the server (all with a command header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientMessage {
    /// `IMPI_Client_auth`: the set of offered methods.
    Auth {
        mask: u32,
    },
    /// `IMPI_CMD_IMPI` with the client's rank.
    Rank(u32),
    /// One label's contribution.
    Coll {
        label: Label,
        payload: Vec<u8>,
    },
    Done,
    Fini,
}

/// The server's reply to one label: every contributor's payload in client order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollReply {
    pub label: Label,
    /// Bit i set: client i contributed.
    pub client_mask: u32,
    pub data: Vec<u8>,
}

/// What the server sends to a client after authentication (all with a command header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerMessage {
    /// `IMPI_CMD_IMPI` with the number of clients.
    Size(u32),
    Coll(CollReply),
    /// The DONE reply. `payload_len` is what a lenient reader skipped (LAM/MPI accepts a
    /// DONE reply with a payload; crossmpi sends none).
    Done {
        payload_len: u32,
    },
}

/// Length of the bare `IMPI_Server_auth` and `IMPI_Auth_key`, sent without a command header.
pub const BARE_LEN: usize = 8;

/// The bare 8-byte `IMPI_Server_auth { Int4 which; Int4 len; }`. `len` is undefined by
/// the sources and ignored by LAM/MPI: crossmpi sends the length of what the client must
/// send next (0, or 8 for a key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthReply {
    pub method: AuthMethod,
    pub len: i32,
}

impl AuthReply {
    pub fn for_method(method: AuthMethod) -> AuthReply {
        let len = match method {
            AuthMethod::None => 0,
            AuthMethod::Key => BARE_LEN as i32,
        };
        AuthReply { method, len }
    }

    pub fn decode(buf: &[u8]) -> Result<Option<AuthReply>> {
        if buf.len() < BARE_LEN {
            return Ok(None);
        }
        Ok(Some(AuthReply {
            method: AuthMethod::from_raw(be_u32(buf, 0)?)?,
            len: be_u32(buf, 4)? as i32,
        }))
    }

    pub fn emit(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.method.raw().to_be_bytes());
        out.extend_from_slice(&self.len.to_be_bytes());
    }
}

/// The bare 8-byte `IMPI_Auth_key`.
pub fn decode_auth_key(buf: &[u8]) -> Result<Option<u64>> {
    if buf.len() < BARE_LEN {
        return Ok(None);
    }
    be_u64(buf, 0).map(Some)
}

pub fn emit_auth_key(key: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(&key.to_be_bytes());
}

/// A validated header and the payload bytes after it, once all have arrived.
fn frame(buf: &[u8], max_len: u32) -> Result<Option<(CmdRepr, &[u8])>> {
    let Ok(view) = CmdHeader::new_checked(buf) else {
        return Ok(None);
    };
    let header = CmdRepr::parse(&view, max_len)?;
    let end = CMD_HEADER_LEN + header.len as usize;
    Ok(buf
        .get(CMD_HEADER_LEN..end)
        .map(|payload| (header, payload)))
}

fn exact_len(what: &'static str, payload: &[u8], want: usize) -> Result<()> {
    if payload.len() != want {
        return Err(Error::BadLength {
            what,
            len: payload.len() as u64,
            expected: format!("{want} bytes"),
        });
    }
    Ok(())
}

fn min_len(what: &'static str, payload: &[u8], min: usize, holding: &str) -> Result<()> {
    if payload.len() < min {
        return Err(Error::BadLength {
            what,
            len: payload.len() as u64,
            expected: format!("at least {min} bytes ({holding})"),
        });
    }
    Ok(())
}

/// The count of an `IMPI_Impi` union (a rank or a size), an `Int4` in `0..MAX_CLIENTS`.
fn client_count_field(what: &'static str, payload: &[u8], min: i64) -> Result<u32> {
    exact_len(what, payload, 4)?;
    let v = be_u32(payload, 0)? as i32;
    if i64::from(v) < min || v as u32 > MAX_CLIENTS - 1 + min as u32 {
        return Err(Error::OutOfRange {
            what,
            value: v.into(),
            allowed: format!("{min}..={}", MAX_CLIENTS as i64 - 1 + min),
        });
    }
    Ok(v as u32)
}

impl ClientMessage {
    /// Decodes the message at the front of `buf`; returns it with the bytes it used.
    pub fn decode(buf: &[u8], max_len: u32) -> Result<Option<(ClientMessage, usize)>> {
        let Some((header, payload)) = frame(buf, max_len)? else {
            return Ok(None);
        };
        let msg = match header.cmd {
            Command::Auth => {
                exact_len("IMPI AUTH (client auth mask)", payload, 4)?;
                ClientMessage::Auth {
                    mask: be_u32(payload, 0)?,
                }
            }
            Command::Impi => {
                ClientMessage::Rank(client_count_field("IMPI IMPI (client rank)", payload, 0)?)
            }
            Command::Coll => {
                min_len("IMPI COLL (client submission)", payload, 4, "the label")?;
                let label = Label::from_raw(be_u32(payload, 0)?)?;
                let data = &payload[4..];
                label.check_contribution(data.len(), None)?;
                ClientMessage::Coll {
                    label,
                    payload: data.to_vec(),
                }
            }
            Command::Done => {
                exact_len("IMPI DONE (client)", payload, 0)?;
                ClientMessage::Done
            }
            Command::Fini => {
                exact_len("IMPI FINI (client)", payload, 0)?;
                ClientMessage::Fini
            }
        };
        Ok(Some((msg, CMD_HEADER_LEN + payload.len())))
    }

    pub fn emit(&self, out: &mut Vec<u8>) {
        let (cmd, len) = match self {
            ClientMessage::Auth { .. } => (Command::Auth, 4),
            ClientMessage::Rank(_) => (Command::Impi, 4),
            ClientMessage::Coll { payload, .. } => (Command::Coll, 4 + payload.len()),
            ClientMessage::Done => (Command::Done, 0),
            ClientMessage::Fini => (Command::Fini, 0),
        };
        CmdRepr {
            cmd,
            len: len as u32,
        }
        .emit(out);
        match self {
            ClientMessage::Auth { mask } => out.extend_from_slice(&mask.to_be_bytes()),
            ClientMessage::Rank(r) => out.extend_from_slice(&r.to_be_bytes()),
            ClientMessage::Coll { label, payload } => {
                out.extend_from_slice(&label.raw().to_be_bytes());
                out.extend_from_slice(payload);
            }
            ClientMessage::Done | ClientMessage::Fini => {}
        }
    }
}

impl ServerMessage {
    /// Decodes the message at the front of `buf`; returns it with the bytes it used.
    pub fn decode(buf: &[u8], max_len: u32) -> Result<Option<(ServerMessage, usize)>> {
        let Some((header, payload)) = frame(buf, max_len)? else {
            return Ok(None);
        };
        let msg = match header.cmd {
            Command::Impi => {
                ServerMessage::Size(client_count_field("IMPI IMPI (server size)", payload, 1)?)
            }
            Command::Coll => {
                min_len(
                    "IMPI COLL (server reply)",
                    payload,
                    8,
                    "label and client mask",
                )?;
                ServerMessage::Coll(CollReply {
                    label: Label::from_raw(be_u32(payload, 0)?)?,
                    client_mask: be_u32(payload, 4)?,
                    data: payload[8..].to_vec(),
                })
            }
            Command::Done => ServerMessage::Done {
                payload_len: header.len,
            },
            other => {
                return Err(Error::Unexpected {
                    state: "reading a server message",
                    got: format!("command {other}, which only clients send"),
                })
            }
        };
        Ok(Some((msg, CMD_HEADER_LEN + payload.len())))
    }

    pub fn emit(&self, out: &mut Vec<u8>) {
        match self {
            ServerMessage::Size(n) => {
                CmdRepr {
                    cmd: Command::Impi,
                    len: 4,
                }
                .emit(out);
                out.extend_from_slice(&n.to_be_bytes());
            }
            ServerMessage::Coll(reply) => reply.emit(out),
            ServerMessage::Done { .. } => CmdRepr {
                cmd: Command::Done,
                len: 0,
            }
            .emit(out),
        }
    }
}

impl CollReply {
    pub fn emit(&self, out: &mut Vec<u8>) {
        CmdRepr {
            cmd: Command::Coll,
            len: (8 + self.data.len()) as u32,
        }
        .emit(out);
        out.extend_from_slice(&self.label.raw().to_be_bytes());
        out.extend_from_slice(&self.client_mask.to_be_bytes());
        out.extend_from_slice(&self.data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(m: &ClientMessage) -> Vec<u8> {
        let mut v = Vec::new();
        m.emit(&mut v);
        v
    }

    #[test]
    fn client_messages_roundtrip_byte_by_byte() {
        let msgs = [
            ClientMessage::Auth { mask: 3 },
            ClientMessage::Rank(31),
            ClientMessage::Coll {
                label: Label::CNhosts,
                payload: vec![0, 0, 0, 3],
            },
            ClientMessage::Done,
            ClientMessage::Fini,
        ];
        for m in &msgs {
            let b = bytes(m);
            for cut in 0..b.len() {
                assert_eq!(ClientMessage::decode(&b[..cut], 64).unwrap(), None);
            }
            assert_eq!(
                ClientMessage::decode(&b, 64).unwrap(),
                Some((m.clone(), b.len()))
            );
        }
    }

    #[test]
    fn worked_example_reply_bytes() {
        // IMPI draft node 41: cmd=COLL, len=20, label=NHOSTS, client_mask=0x7, 3, 2, 2.
        let reply = ServerMessage::Coll(CollReply {
            label: Label::CNhosts,
            client_mask: 7,
            data: [3u32, 2, 2].iter().flat_map(|v| v.to_be_bytes()).collect(),
        });
        let mut b = Vec::new();
        reply.emit(&mut b);
        let want: Vec<u8> = [0x434F_4C4Cu32, 20, 0x1100, 7, 3, 2, 2]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        assert_eq!(b, want);
        assert_eq!(
            ServerMessage::decode(&b, 64).unwrap(),
            Some((reply, b.len()))
        );
    }

    #[test]
    fn rejections_name_the_field() {
        let mut b = Vec::new();
        CmdRepr {
            cmd: Command::Impi,
            len: 4,
        }
        .emit(&mut b);
        b.extend_from_slice(&32u32.to_be_bytes());
        let e = ClientMessage::decode(&b, 64).unwrap_err();
        assert!(e.to_string().contains("client rank"), "{e}");
        let mut b = Vec::new();
        CmdRepr {
            cmd: Command::Coll,
            len: 9,
        }
        .emit(&mut b);
        b.extend_from_slice(&0x1100u32.to_be_bytes());
        b.extend_from_slice(&[0; 5]);
        assert!(matches!(
            ClientMessage::decode(&b, 64),
            Err(Error::BadLength { len: 5, .. })
        ));
        // Oversized: rejected from the header alone, before the payload arrives.
        let mut b = Vec::new();
        CmdRepr {
            cmd: Command::Coll,
            len: 1 << 30,
        }
        .emit(&mut b);
        assert!(matches!(
            ClientMessage::decode(&b, 1 << 20),
            Err(Error::TooLong { .. })
        ));
        let mut b = Vec::new();
        ClientMessage::Done.emit(&mut b);
        assert!(ServerMessage::decode(&b[..4], 8).unwrap().is_none());
        let mut fini = Vec::new();
        ClientMessage::Fini.emit(&mut fini);
        assert!(matches!(
            ServerMessage::decode(&fini, 8),
            Err(Error::Unexpected { .. })
        ));
    }

    #[test]
    fn bare_auth_messages() {
        let mut b = Vec::new();
        AuthReply::for_method(AuthMethod::Key).emit(&mut b);
        assert_eq!(b, [0, 0, 0, 1, 0, 0, 0, 8]);
        assert_eq!(AuthReply::decode(&b[..7]).unwrap(), None);
        assert_eq!(
            AuthReply::decode(&b).unwrap().unwrap().method,
            AuthMethod::Key
        );
        assert!(AuthReply::decode(&[0, 0, 0, 2, 0, 0, 0, 0]).is_err());
        let mut k = Vec::new();
        emit_auth_key(0x0102_0304_0506_0708, &mut k);
        assert_eq!(decode_auth_key(&k).unwrap(), Some(0x0102_0304_0506_0708));
    }
}
