//! Authenticated encryption between the relays of different clusters (`-encrypt`), as a
//! sans-IO record layer over one host connection: bytes in, plaintext out; plaintext in,
//! records out.
//!
//! Both ends first send a hello in the clear: `"CXRE"`, version 1, 16 random bytes. The
//! keys of the two directions are derived from the job's key (`IMPI_AUTH_KEY`, which
//! every client of the job shares) and both hellos, by a chain of HChaCha20 (a PRF keyed
//! by its 32-byte key, as XChaCha20 uses it): job key, then the dialer's random bytes,
//! then the acceptor's, then the direction's 16-byte label. Fresh random bytes on each
//! side make a recorded connection useless against a new one (its records do not
//! authenticate under the new keys), and distinct direction keys make a record sent back
//! to its sender fail. After the hellos, everything is records: a 4-byte big-endian
//! plaintext length (at most [`MAX_RECORD`], authenticated as associated data), the
//! ChaCha20-Poly1305 ciphertext and its 16-byte tag, under the nonce `0^4 || counter`
//! (the count of records sent in that direction), so a replayed, dropped or reordered
//! record fails too. Each side's first record is empty: it proves the key at once, even
//! on a connection that never carries a packet. Any failure ends the connection with
//! the reason; nothing unauthenticated is ever handed on.
//!
//! Memory is bounded: at most two records of input and one of output per connection.

use chacha20::{hchacha, R20};
use chacha20poly1305::aead::{AeadInOut, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Nonce, Tag};
use crossmpi_impi::wire::tables::GlobalTables;
use std::fmt;
use std::ops::Range;

/// The version entry (major "CXRE", minor [`VERSION`]) an encrypting relay appends to
/// its client's IMPI_C_VERSION going out, so that every relay knows at startup which
/// clients encrypt and a mismatch is named before any host connection is made.
pub const ENCRYPT_MAJOR: u32 = 0x4358_5245;

/// Whether client `me` of the outside tables encrypts (its relays marked its versions),
/// after checking that every other client does the same. The error names the client
/// that differs and what to change. `chosen` is trunk 0's own choice (-encrypt), which
/// its client's entry must show: the tables come through the IMPI server, and a mark
/// removed on the way must not turn encryption off.
pub fn agreed_encryption(
    me: u32,
    outside: &GlobalTables,
    chosen: Option<bool>,
) -> Result<bool, String> {
    let marked = |c: usize| {
        outside.clients[c]
            .versions
            .iter()
            .any(|v| v.major == ENCRYPT_MAJOR)
    };
    let mine = marked(me as usize);
    if chosen.is_some_and(|c| c != mine) {
        return Err(format!(
            "the tables from the IMPI server {} this relay's encryption mark although it was \
             started {}: they were altered on the way",
            if mine { "carry" } else { "lack" },
            if mine {
                "without -encrypt"
            } else {
                "with -encrypt"
            }
        ));
    }
    for c in (0..outside.clients.len()).filter(|&c| c != me as usize) {
        match (mine, marked(c)) {
            (true, false) => {
                return Err(format!(
                    "client {c} does not encrypt: with -encrypt every other client must be \
                     a crossmpi relay started with -encrypt (a plain host cannot read \
                     encrypted packets)"
                ))
            }
            (false, true) => {
                return Err(format!(
                    "client {c}'s relay encrypts (-encrypt): start this cluster's relay with \
                     -encrypt too, or neither"
                ))
            }
            _ => {}
        }
    }
    Ok(mine)
}

/// The hello's first bytes.
pub const HELLO_MAGIC: [u8; 4] = *b"CXRE";
/// The record layer's version, in the hello.
pub const VERSION: u32 = 1;
/// Random bytes per hello.
pub const RANDOM_LEN: usize = 16;
/// Magic, version, random bytes.
pub const HELLO_LEN: usize = 8 + RANDOM_LEN;
/// A record's length prefix.
pub const RECORD_HEADER: usize = 4;
/// Poly1305's tag.
pub const TAG_LEN: usize = 16;
/// Largest plaintext per record: 16 KiB keeps the per-connection buffers small while
/// the 20 bytes of framing and tag stay about 0.1 % of the stream.
pub const MAX_RECORD: usize = 16 << 10;
const MAX_WIRE_RECORD: usize = RECORD_HEADER + MAX_RECORD + TAG_LEN;

/// Which end of the TCP connection this relay is (IMPI's rule decides who connects).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Dialer,
    Acceptor,
}

/// The job's secret, from `IMPI_AUTH_KEY` (so the encryption is only as strong as that
/// key's 64 bits).
#[derive(Clone, Copy)]
pub struct JobKey([u8; 32]);

impl JobKey {
    pub fn from_impi_key(key: u64) -> JobKey {
        let mut k = [0u8; 32];
        k[..16].copy_from_slice(b"crossmpi relay 1");
        k[16..24].copy_from_slice(&key.to_be_bytes());
        JobKey(k)
    }
}

impl fmt::Debug for JobKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JobKey(..)")
    }
}

fn prf(key: &[u8; 32], input: &[u8; 16]) -> [u8; 32] {
    hchacha::<R20>(key.into(), input.into()).into()
}

/// The keys of one connection: (dialer to acceptor, acceptor to dialer).
fn direction_keys(
    job: &JobKey,
    dialer: &[u8; RANDOM_LEN],
    acceptor: &[u8; RANDOM_LEN],
) -> ([u8; 32], [u8; 32]) {
    let session = prf(&prf(&job.0, dialer), acceptor);
    (
        prf(&session, b"dialer->acceptor"),
        prf(&session, b"acceptor->dialer"),
    )
}

/// One direction's cipher and record count.
struct Direction {
    aead: ChaCha20Poly1305,
    count: u64,
}

impl Direction {
    fn new(key: &[u8; 32]) -> Direction {
        Direction {
            aead: ChaCha20Poly1305::new(key.into()),
            count: 0,
        }
    }

    /// The next record's nonce; counts it.
    fn next_nonce(&mut self) -> Nonce {
        let mut n = [0u8; 12];
        n[4..].copy_from_slice(&self.count.to_be_bytes());
        self.count += 1;
        n.into()
    }
}

/// The record layer of one connection.
pub struct SecureChannel {
    job: JobKey,
    role: Role,
    random: [u8; RANDOM_LEN],
    /// (sealing, opening), once the peer's hello arrived.
    keys: Option<(Direction, Direction)>,
    /// Bytes received and not yet taken: a hello or records.
    input: Vec<u8>,
    filled: usize,
    /// The opened plaintext not yet taken, within `input`, and where its record ends.
    plain: Range<usize>,
    record_end: usize,
    /// Bytes to send (hello, records) and how many are sent.
    out: Vec<u8>,
    sent: usize,
    /// Plaintext bytes the record in `out` carries.
    out_plain: usize,
}

impl SecureChannel {
    /// A connection's record layer; `random` must be fresh random bytes. The hello is
    /// queued at once.
    pub fn new(job: JobKey, role: Role, random: [u8; RANDOM_LEN]) -> SecureChannel {
        let mut out = Vec::with_capacity(MAX_WIRE_RECORD);
        out.extend_from_slice(&HELLO_MAGIC);
        out.extend_from_slice(&VERSION.to_be_bytes());
        out.extend_from_slice(&random);
        SecureChannel {
            job,
            role,
            random,
            keys: None,
            input: vec![0; 2 * MAX_WIRE_RECORD],
            filled: 0,
            plain: 0..0,
            record_end: 0,
            out,
            sent: 0,
            out_plain: 0,
        }
    }

    /// Whether the hellos were exchanged (records can be sealed).
    pub fn is_open(&self) -> bool {
        self.keys.is_some()
    }

    /// Where to read the socket into; None while opened plaintext waits to be taken.
    pub fn read_space(&mut self) -> Option<&mut [u8]> {
        if !self.plain.is_empty() {
            return None;
        }
        Some(&mut self.input[self.filled..])
    }

    /// `n` bytes were read into [`Self::read_space`]. Err ends the connection.
    pub fn on_read(&mut self, n: usize) -> Result<(), String> {
        self.filled += n;
        self.open_next()
    }

    /// Opened plaintext waiting to be taken.
    pub fn plaintext(&self) -> &[u8] {
        &self.input[self.plain.clone()]
    }

    /// `n` bytes of [`Self::plaintext`] were taken. Err ends the connection.
    pub fn consume(&mut self, n: usize) -> Result<(), String> {
        self.plain.start += n;
        if self.plain.is_empty() {
            self.drop_front(self.record_end);
            self.record_end = 0;
            self.plain = 0..0;
            return self.open_next();
        }
        Ok(())
    }

    /// The peer closed: Err when that cut a hello or a record short.
    pub fn on_eof(&self) -> Result<(), String> {
        if self.keys.is_none() {
            return Err(format!(
                "closed during the encryption handshake ({} of {HELLO_LEN} hello bytes)",
                self.filled
            ));
        }
        if self.filled > self.record_end {
            return Err(format!(
                "closed in the middle of a record ({} bytes of it): truncated",
                self.filled - self.record_end
            ));
        }
        Ok(())
    }

    fn drop_front(&mut self, n: usize) {
        self.input.copy_within(n..self.filled, 0);
        self.filled -= n;
    }

    /// Takes the peer's hello, then opens records until one has plaintext or no whole
    /// record is left.
    fn open_next(&mut self) -> Result<(), String> {
        if self.keys.is_none() {
            if self.filled < HELLO_LEN {
                return Ok(());
            }
            self.take_hello()?;
        }
        while self.plain.is_empty() && self.filled >= RECORD_HEADER {
            let len = u32::from_be_bytes(self.input[..4].try_into().expect("4 bytes")) as usize;
            if len > MAX_RECORD {
                return Err(format!(
                    "a record claims {len} bytes, more than {MAX_RECORD}: tampered or not \
                     this protocol"
                ));
            }
            let end = RECORD_HEADER + len + TAG_LEN;
            if self.filled < end {
                return Ok(());
            }
            let (_, open) = self.keys.as_mut().expect("keys follow the hello");
            let record = open.count;
            let nonce = open.next_nonce();
            let (header, rest) = self.input.split_at_mut(RECORD_HEADER);
            let (body, tail) = rest.split_at_mut(len);
            let tag = Tag::try_from(&tail[..TAG_LEN]).expect("16 bytes");
            open.aead
                .decrypt_inout_detached(&nonce, header, body.into(), &tag)
                .map_err(|_| {
                    format!(
                        "record {record} does not authenticate: tampered, replayed, reordered, \
                         or the relays' IMPI_AUTH_KEY differ"
                    )
                })?;
            if len == 0 {
                self.drop_front(end);
            } else {
                self.plain = RECORD_HEADER..RECORD_HEADER + len;
                self.record_end = end;
            }
        }
        Ok(())
    }

    fn take_hello(&mut self) -> Result<(), String> {
        let hello = &self.input[..HELLO_LEN];
        if hello[..4] != HELLO_MAGIC {
            return Err(format!(
                "the peer sent {:02x?} instead of the encryption hello: it is not a relay \
                 started with -encrypt",
                &hello[..4]
            ));
        }
        let version = u32::from_be_bytes(hello[4..8].try_into().expect("4 bytes"));
        if version != VERSION {
            return Err(format!(
                "the peer's record layer is version {version}, this relay's {VERSION}"
            ));
        }
        let theirs: [u8; RANDOM_LEN] = hello[8..].try_into().expect("16 bytes");
        let (to_acceptor, to_dialer) = match self.role {
            Role::Dialer => direction_keys(&self.job, &self.random, &theirs),
            Role::Acceptor => direction_keys(&self.job, &theirs, &self.random),
        };
        let (seal, open) = match self.role {
            Role::Dialer => (to_acceptor, to_dialer),
            Role::Acceptor => (to_dialer, to_acceptor),
        };
        self.keys = Some((Direction::new(&seal), Direction::new(&open)));
        self.drop_front(HELLO_LEN);
        self.push_record(&[]);
        Ok(())
    }

    /// Appends one sealed record to the output.
    fn push_record(&mut self, plain: &[u8]) {
        let (seal, _) = self.keys.as_mut().expect("sealing follows the hello");
        let nonce = seal.next_nonce();
        let header = (plain.len() as u32).to_be_bytes();
        self.out.extend_from_slice(&header);
        let start = self.out.len();
        self.out.extend_from_slice(plain);
        let tag = seal
            .aead
            .encrypt_inout_detached(&nonce, &header, (&mut self.out[start..]).into())
            .expect("a record is far below ChaCha20-Poly1305's length limit");
        self.out.extend_from_slice(&tag);
    }

    /// Seals the front of `plain` (at most one record) when nothing else waits to be
    /// sent; returns the plaintext bytes sealed (0: nothing now).
    pub fn seal(&mut self, plain: &[u8]) -> usize {
        if self.keys.is_none() || !self.pending_out().is_empty() || plain.is_empty() {
            return 0;
        }
        let n = plain.len().min(MAX_RECORD);
        self.out.clear();
        self.sent = 0;
        self.push_record(&plain[..n]);
        self.out_plain = n;
        n
    }

    /// Bytes to write to the socket.
    pub fn pending_out(&self) -> &[u8] {
        &self.out[self.sent..]
    }

    /// `n` bytes of [`Self::pending_out`] were written; returns the plaintext bytes now
    /// wholly sent (those of a record whose last byte went).
    pub fn on_written(&mut self, n: usize) -> usize {
        self.sent += n;
        if self.sent < self.out.len() {
            return 0;
        }
        self.out.clear();
        self.sent = 0;
        std::mem::take(&mut self.out_plain)
    }
}

#[cfg(test)]
mod tests;
