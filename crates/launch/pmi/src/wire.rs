//! PMI-1 lines, in two levels: [`Fields`], a view that splits one line into `key=value`
//! words without allocating and never panics, and [`Command`], the typed message parsed
//! from it with full validation and emitted back into bytes.
//!
//! A line is `cmd=NAME key=value ...` terminated by `\n`; words are separated by
//! spaces, a word's key ends at its first `=`, and its value runs to the next space
//! (so a value may contain `=` but never a space, a tab, a newline or a NUL).

use std::fmt;

/// Longest line accepted or emitted, newline included. Hydra advertises
/// `vallen_max=1024`, `keylen_max=64` and `kvsname_max=256`, so a `put` fits well within
/// it; the bound is what keeps a hostile peer from growing a line buffer forever.
pub const MAX_LINE_LEN: usize = 4096;

/// Why a line is not a valid PMI-1 command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// The line (without newline) is longer than [`MAX_LINE_LEN`].
    TooLong(usize),
    /// The line is not UTF-8.
    NotUtf8,
    /// A word has no `=`.
    NotKeyValue(String),
    /// The first word is not `cmd=NAME`.
    NoCommand,
    /// A command lacks a field it needs.
    Missing {
        cmd: &'static str,
        key: &'static str,
    },
    /// A field's value is not what its command allows.
    BadValue {
        cmd: &'static str,
        key: &'static str,
        value: String,
    },
    /// A value to emit contains a byte the line format cannot carry.
    Unencodable { key: &'static str, value: String },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::TooLong(n) => write!(f, "line of {n} bytes exceeds {MAX_LINE_LEN}"),
            WireError::NotUtf8 => write!(f, "line is not UTF-8"),
            WireError::NotKeyValue(w) => write!(f, "word {w:?} is not key=value"),
            WireError::NoCommand => write!(f, "line does not start with cmd=NAME"),
            WireError::Missing { cmd, key } => write!(f, "cmd={cmd} lacks {key}="),
            WireError::BadValue { cmd, key, value } => {
                write!(f, "cmd={cmd} has invalid {key}={value:?}")
            }
            WireError::Unencodable { key, value } => write!(
                f,
                "{key} value {value:?} is empty or holds a space, tab, newline or NUL"
            ),
        }
    }
}

impl std::error::Error for WireError {}

/// A view over one line (newline excluded): its `key=value` words in order.
#[derive(Debug, Clone, Copy)]
pub struct Fields<'a> {
    line: &'a str,
}

impl<'a> Fields<'a> {
    /// Checks length and encoding only; the words are split lazily by [`Fields::iter`].
    pub fn new(line: &'a [u8]) -> Result<Self, WireError> {
        if line.len() >= MAX_LINE_LEN {
            return Err(WireError::TooLong(line.len()));
        }
        let line = std::str::from_utf8(line).map_err(|_| WireError::NotUtf8)?;
        Ok(Fields {
            line: line.trim_end_matches('\r'),
        })
    }

    /// The words as `(key, value)`; a word without `=` yields an error item.
    pub fn iter(&self) -> impl Iterator<Item = Result<(&'a str, &'a str), WireError>> + 'a {
        self.line
            .split([' ', '\t'])
            .filter(|w| !w.is_empty())
            .map(|w| {
                w.split_once('=')
                    .ok_or_else(|| WireError::NotKeyValue(w.to_string()))
            })
    }

    /// The value of the first word with this key.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.iter()
            .flatten()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }
}

/// One PMI-1 message, either direction. Requests go from a rank to the launcher,
/// responses back; the names and field spellings are those MPICH's Hydra speaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    // ---- requests (rank -> launcher)
    /// `cmd=initack pmiid=ID`: first line in PMI_PORT mode, identifies the connection.
    InitAck {
        pmiid: usize,
    },
    /// `cmd=init pmi_version=1 pmi_subversion=1`.
    Init {
        version: u32,
        subversion: u32,
    },
    GetMaxes,
    GetAppnum,
    GetMyKvsname,
    GetUniverseSize,
    Put {
        kvsname: String,
        key: String,
        value: String,
    },
    BarrierIn,
    Get {
        kvsname: String,
        key: String,
    },
    Finalize,
    /// `cmd=abort exitcode=N [error_msg=WORD]`.
    Abort {
        code: i32,
        message: Option<String>,
    },
    // ---- responses (launcher -> rank)
    /// `cmd=initack`, followed by three `cmd=set` lines (size, rank, debug).
    InitAckReply,
    /// `cmd=set KEY=VALUE` after `cmd=initack`.
    Set {
        key: SetKey,
        value: i64,
    },
    ResponseToInit {
        version: u32,
        subversion: u32,
        rc: i32,
    },
    Maxes {
        kvsname_max: usize,
        keylen_max: usize,
        vallen_max: usize,
    },
    Appnum {
        appnum: i32,
    },
    MyKvsname {
        kvsname: String,
    },
    /// Hydra answers `size=-1` when it does not know the universe size.
    UniverseSize {
        size: i64,
    },
    PutResult {
        rc: i32,
        msg: String,
    },
    BarrierOut,
    GetResult {
        rc: i32,
        msg: String,
        value: String,
    },
    FinalizeAck,
    /// The answer to a whole spawn request (its last `mcmd=spawn` segment); `msg` is
    /// crossmpi's reason when `rc` is not 0 (Hydra sends none).
    SpawnResult {
        rc: i32,
        msg: String,
    },
    // ---- the name service (requests, then responses)
    PublishName {
        service: String,
        port: String,
    },
    UnpublishName {
        service: String,
    },
    LookupName {
        service: String,
    },
    /// `cmd=publish_result info=ok|fail rc=N msg=WORD` (and `unpublish_result`).
    PublishResult {
        rc: i32,
        msg: String,
    },
    UnpublishResult {
        rc: i32,
        msg: String,
    },
    /// `cmd=lookup_result port=P info=ok rc=0 msg=success`, or without `port` and
    /// `info=fail` when the service is not published.
    LookupResult {
        rc: i32,
        msg: String,
        port: Option<String>,
    },
}

/// The variables a PMI_PORT server sets after `cmd=initack`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetKey {
    Size,
    Rank,
    Debug,
}

impl SetKey {
    fn as_str(self) -> &'static str {
        match self {
            SetKey::Size => "size",
            SetKey::Rank => "rank",
            SetKey::Debug => "debug",
        }
    }
}

/// Reads the value of `key` in `fields` as a number of type `T`.
fn number<T: std::str::FromStr>(
    fields: &Fields<'_>,
    cmd: &'static str,
    key: &'static str,
) -> Result<T, WireError> {
    let v = fields.get(key).ok_or(WireError::Missing { cmd, key })?;
    v.parse().map_err(|_| WireError::BadValue {
        cmd,
        key,
        value: v.to_string(),
    })
}

/// Reads the value of `key` in `fields` as a string.
fn text(fields: &Fields<'_>, cmd: &'static str, key: &'static str) -> Result<String, WireError> {
    fields
        .get(key)
        .map(str::to_string)
        .ok_or(WireError::Missing { cmd, key })
}

/// Whether `value` can be carried as one word of a line.
pub fn is_token(value: &str) -> bool {
    !value.is_empty()
        && !value
            .bytes()
            .any(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0))
}

/// `text` as one word of a line: whitespace and NUL become `_`, cut at 256 bytes.
pub fn one_word(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_whitespace() || c == '\0' {
                '_'
            } else {
                c
            }
        })
        .scan(0usize, |len, c| {
            *len += c.len_utf8();
            (*len <= 256).then_some(c)
        })
        .collect()
}

impl Command {
    /// Parses one line, with or without its trailing newline.
    pub fn parse(line: &[u8]) -> Result<Command, WireError> {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let f = Fields::new(line)?;
        for word in f.iter() {
            word?;
        }
        let name = match f.iter().next() {
            Some(Ok(("cmd", name))) => name,
            _ => return Err(WireError::NoCommand),
        };
        Ok(match name {
            "initack" if f.get("pmiid").is_some() => Command::InitAck {
                pmiid: number(&f, "initack", "pmiid")?,
            },
            "initack" => Command::InitAckReply,
            "init" => Command::Init {
                version: number(&f, "init", "pmi_version")?,
                subversion: number(&f, "init", "pmi_subversion")?,
            },
            "get_maxes" => Command::GetMaxes,
            "get_appnum" => Command::GetAppnum,
            "get_my_kvsname" => Command::GetMyKvsname,
            "get_universe_size" => Command::GetUniverseSize,
            "put" => Command::Put {
                kvsname: text(&f, "put", "kvsname")?,
                key: text(&f, "put", "key")?,
                value: text(&f, "put", "value")?,
            },
            "barrier_in" => Command::BarrierIn,
            "get" => Command::Get {
                kvsname: text(&f, "get", "kvsname")?,
                key: text(&f, "get", "key")?,
            },
            "finalize" => Command::Finalize,
            "abort" => Command::Abort {
                code: number(&f, "abort", "exitcode")?,
                message: f.get("error_msg").map(str::to_string),
            },
            "set" => {
                let (key, value) = f.iter().flatten().nth(1).ok_or(WireError::Missing {
                    cmd: "set",
                    key: "size",
                })?;
                let key = match key {
                    "size" => SetKey::Size,
                    "rank" => SetKey::Rank,
                    "debug" => SetKey::Debug,
                    _ => {
                        return Err(WireError::BadValue {
                            cmd: "set",
                            key: "key",
                            value: key.to_string(),
                        })
                    }
                };
                let value = value.parse().map_err(|_| WireError::BadValue {
                    cmd: "set",
                    key: key.as_str(),
                    value: value.to_string(),
                })?;
                Command::Set { key, value }
            }
            "response_to_init" => Command::ResponseToInit {
                version: number(&f, "response_to_init", "pmi_version")?,
                subversion: number(&f, "response_to_init", "pmi_subversion")?,
                rc: number(&f, "response_to_init", "rc")?,
            },
            "maxes" => Command::Maxes {
                kvsname_max: number(&f, "maxes", "kvsname_max")?,
                keylen_max: number(&f, "maxes", "keylen_max")?,
                vallen_max: number(&f, "maxes", "vallen_max")?,
            },
            "appnum" => Command::Appnum {
                appnum: number(&f, "appnum", "appnum")?,
            },
            "my_kvsname" => Command::MyKvsname {
                kvsname: text(&f, "my_kvsname", "kvsname")?,
            },
            "universe_size" => Command::UniverseSize {
                size: number(&f, "universe_size", "size")?,
            },
            "put_result" => Command::PutResult {
                rc: number(&f, "put_result", "rc")?,
                msg: f.get("msg").unwrap_or("").to_string(),
            },
            "barrier_out" => Command::BarrierOut,
            "get_result" => Command::GetResult {
                rc: number(&f, "get_result", "rc")?,
                msg: f.get("msg").unwrap_or("").to_string(),
                value: f.get("value").unwrap_or("").to_string(),
            },
            "finalize_ack" => Command::FinalizeAck,
            "spawn_result" => Command::SpawnResult {
                rc: number(&f, "spawn_result", "rc")?,
                msg: f.get("msg").unwrap_or("").to_string(),
            },
            "publish_name" => Command::PublishName {
                service: text(&f, "publish_name", "service")?,
                port: text(&f, "publish_name", "port")?,
            },
            "unpublish_name" => Command::UnpublishName {
                service: text(&f, "unpublish_name", "service")?,
            },
            "lookup_name" => Command::LookupName {
                service: text(&f, "lookup_name", "service")?,
            },
            "publish_result" => Command::PublishResult {
                rc: number(&f, "publish_result", "rc")?,
                msg: f.get("msg").unwrap_or("").to_string(),
            },
            "unpublish_result" => Command::UnpublishResult {
                rc: number(&f, "unpublish_result", "rc")?,
                msg: f.get("msg").unwrap_or("").to_string(),
            },
            "lookup_result" => Command::LookupResult {
                rc: number(&f, "lookup_result", "rc")?,
                msg: f.get("msg").unwrap_or("").to_string(),
                port: f.get("port").map(str::to_string),
            },
            other => {
                return Err(WireError::BadValue {
                    cmd: "(any)",
                    key: "cmd",
                    value: other.to_string(),
                })
            }
        })
    }

    /// The `cmd=` name of this message.
    pub fn name(&self) -> &'static str {
        match self {
            Command::InitAck { .. } | Command::InitAckReply => "initack",
            Command::Init { .. } => "init",
            Command::GetMaxes => "get_maxes",
            Command::GetAppnum => "get_appnum",
            Command::GetMyKvsname => "get_my_kvsname",
            Command::GetUniverseSize => "get_universe_size",
            Command::Put { .. } => "put",
            Command::BarrierIn => "barrier_in",
            Command::Get { .. } => "get",
            Command::Finalize => "finalize",
            Command::Abort { .. } => "abort",
            Command::Set { .. } => "set",
            Command::ResponseToInit { .. } => "response_to_init",
            Command::Maxes { .. } => "maxes",
            Command::Appnum { .. } => "appnum",
            Command::MyKvsname { .. } => "my_kvsname",
            Command::UniverseSize { .. } => "universe_size",
            Command::PutResult { .. } => "put_result",
            Command::BarrierOut => "barrier_out",
            Command::GetResult { .. } => "get_result",
            Command::FinalizeAck => "finalize_ack",
            Command::SpawnResult { .. } => "spawn_result",
            Command::PublishName { .. } => "publish_name",
            Command::UnpublishName { .. } => "unpublish_name",
            Command::LookupName { .. } => "lookup_name",
            Command::PublishResult { .. } => "publish_result",
            Command::UnpublishResult { .. } => "unpublish_result",
            Command::LookupResult { .. } => "lookup_result",
        }
    }

    /// Appends the line (with its newline) to `out`; fails, leaving `out` unchanged, when
    /// a string field cannot be carried or the line would exceed [`MAX_LINE_LEN`].
    pub fn emit(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        let mut words: Vec<(&'static str, String)> = Vec::new();
        let mut word = |k: &'static str, v: String| words.push((k, v));
        match self {
            Command::InitAck { pmiid } => word("pmiid", pmiid.to_string()),
            Command::Init {
                version,
                subversion,
            }
            | Command::ResponseToInit {
                version,
                subversion,
                ..
            } => {
                word("pmi_version", version.to_string());
                word("pmi_subversion", subversion.to_string());
                if let Command::ResponseToInit { rc, .. } = self {
                    word("rc", rc.to_string());
                }
            }
            Command::Put {
                kvsname,
                key,
                value,
            } => {
                word("kvsname", kvsname.clone());
                word("key", key.clone());
                word("value", value.clone());
            }
            Command::Get { kvsname, key } => {
                word("kvsname", kvsname.clone());
                word("key", key.clone());
            }
            Command::Abort { code, message } => {
                word("exitcode", code.to_string());
                if let Some(m) = message {
                    word("error_msg", m.clone());
                }
            }
            Command::Set { key, value } => word(key.as_str(), value.to_string()),
            Command::Maxes {
                kvsname_max,
                keylen_max,
                vallen_max,
            } => {
                word("kvsname_max", kvsname_max.to_string());
                word("keylen_max", keylen_max.to_string());
                word("vallen_max", vallen_max.to_string());
            }
            Command::Appnum { appnum } => word("appnum", appnum.to_string()),
            Command::MyKvsname { kvsname } => word("kvsname", kvsname.clone()),
            Command::UniverseSize { size } => word("size", size.to_string()),
            Command::PutResult { rc, msg } => {
                word("rc", rc.to_string());
                word("msg", msg.clone());
            }
            Command::GetResult { rc, msg, value } => {
                word("rc", rc.to_string());
                word("msg", msg.clone());
                word("value", value.clone());
            }
            Command::SpawnResult { rc, msg } => {
                word("rc", rc.to_string());
                if !msg.is_empty() {
                    word("msg", msg.clone());
                }
            }
            Command::PublishName { service, port } => {
                word("service", service.clone());
                word("port", port.clone());
            }
            Command::UnpublishName { service } | Command::LookupName { service } => {
                word("service", service.clone())
            }
            Command::PublishResult { rc, msg } | Command::UnpublishResult { rc, msg } => {
                word("info", if *rc == 0 { "ok" } else { "fail" }.into());
                word("rc", rc.to_string());
                word("msg", msg.clone());
            }
            Command::LookupResult { rc, msg, port } => {
                if let Some(p) = port {
                    word("port", p.clone());
                }
                word("info", if *rc == 0 { "ok" } else { "fail" }.into());
                word("rc", rc.to_string());
                word("msg", msg.clone());
            }
            Command::InitAckReply
            | Command::GetMaxes
            | Command::GetAppnum
            | Command::GetMyKvsname
            | Command::GetUniverseSize
            | Command::BarrierIn
            | Command::Finalize
            | Command::BarrierOut
            | Command::FinalizeAck => {}
        }
        let mut line = format!("cmd={}", self.name());
        for (k, v) in words {
            if !is_token(&v) {
                return Err(WireError::Unencodable { key: k, value: v });
            }
            line.push(' ');
            line.push_str(k);
            line.push('=');
            line.push_str(&v);
        }
        if line.len() >= MAX_LINE_LEN {
            return Err(WireError::TooLong(line.len()));
        }
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
        Ok(())
    }
}

/// Accumulates bytes from a stream and hands out complete lines, refusing to hold a
/// line longer than [`MAX_LINE_LEN`].
#[derive(Debug, Default)]
pub struct LineBuffer {
    buf: Vec<u8>,
}

impl LineBuffer {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete line (newline excluded), `Ok(None)` when none is complete yet,
    /// or an error when the pending bytes already exceed the line limit.
    pub fn next_line(&mut self) -> Result<Option<Vec<u8>>, WireError> {
        match self.buf.iter().position(|&b| b == b'\n') {
            Some(i) if i < MAX_LINE_LEN => {
                let mut line: Vec<u8> = self.buf.drain(..=i).collect();
                line.pop();
                Ok(Some(line))
            }
            Some(i) => Err(WireError::TooLong(i)),
            None if self.buf.len() >= MAX_LINE_LEN => Err(WireError::TooLong(self.buf.len())),
            None => Ok(None),
        }
    }

    /// Whether bytes of an unfinished line are pending.
    pub fn has_partial(&self) -> bool {
        !self.buf.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(c: Command) {
        let mut out = Vec::new();
        c.emit(&mut out).unwrap();
        assert_eq!(out.last(), Some(&b'\n'));
        assert_eq!(
            Command::parse(&out).unwrap(),
            c,
            "{}",
            String::from_utf8_lossy(&out)
        );
    }

    #[test]
    fn every_command_round_trips() {
        let s = |x: &str| x.to_string();
        for c in [
            Command::InitAck { pmiid: 3 },
            Command::Init {
                version: 1,
                subversion: 1,
            },
            Command::GetMaxes,
            Command::GetAppnum,
            Command::GetMyKvsname,
            Command::GetUniverseSize,
            Command::Put {
                kvsname: s("kvs_1"),
                key: s("k"),
                value: s("a=b#c$"),
            },
            Command::BarrierIn,
            Command::Get {
                kvsname: s("kvs_1"),
                key: s("k"),
            },
            Command::Finalize,
            Command::Abort {
                code: -3,
                message: Some(s("bad_thing")),
            },
            Command::Abort {
                code: 7,
                message: None,
            },
            Command::InitAckReply,
            Command::Set {
                key: SetKey::Rank,
                value: 2,
            },
            Command::ResponseToInit {
                version: 1,
                subversion: 1,
                rc: 0,
            },
            Command::Maxes {
                kvsname_max: 256,
                keylen_max: 64,
                vallen_max: 1024,
            },
            Command::Appnum { appnum: 1 },
            Command::MyKvsname {
                kvsname: s("kvs_9"),
            },
            Command::UniverseSize { size: -1 },
            Command::PutResult {
                rc: 0,
                msg: s("success"),
            },
            Command::BarrierOut,
            Command::GetResult {
                rc: -1,
                msg: s("key_x_not_found"),
                value: s("unknown"),
            },
            Command::FinalizeAck,
            Command::SpawnResult {
                rc: 0,
                msg: String::new(),
            },
            Command::SpawnResult {
                rc: -1,
                msg: s("no_such_program"),
            },
            Command::PublishName {
                service: s("svc"),
                port: s("crossmpi:tcp:1.2.3.4:5"),
            },
            Command::UnpublishName { service: s("svc") },
            Command::LookupName { service: s("svc") },
            Command::PublishResult {
                rc: 0,
                msg: s("success"),
            },
            Command::UnpublishResult {
                rc: 1,
                msg: s("service_not_found"),
            },
            Command::LookupResult {
                rc: 0,
                msg: s("success"),
                port: Some(s("p")),
            },
            Command::LookupResult {
                rc: 1,
                msg: s("service_not_found"),
                port: None,
            },
        ] {
            round_trip(c);
        }
    }

    #[test]
    fn parses_hydra_lines() {
        let c =
            Command::parse(b"cmd=get_result rc=0 msg=success value=(vector,(0,1,1))\n").unwrap();
        assert_eq!(
            c,
            Command::GetResult {
                rc: 0,
                msg: "success".into(),
                value: "(vector,(0,1,1))".into()
            }
        );
        let c = Command::parse(b"cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024").unwrap();
        assert_eq!(
            c,
            Command::Maxes {
                kvsname_max: 256,
                keylen_max: 64,
                vallen_max: 1024
            }
        );
    }

    #[test]
    fn rejects_malformed_lines() {
        assert_eq!(Command::parse(b"").unwrap_err(), WireError::NoCommand);
        assert_eq!(
            Command::parse(b"key=1 cmd=init").unwrap_err(),
            WireError::NoCommand
        );
        assert!(matches!(
            Command::parse(b"cmd=put kvsname=a key=b").unwrap_err(),
            WireError::Missing { key: "value", .. }
        ));
        assert!(matches!(
            Command::parse(b"cmd=init pmi_version=x pmi_subversion=1").unwrap_err(),
            WireError::BadValue { .. }
        ));
        assert!(matches!(
            Command::parse(b"cmd=barrier_in junk").unwrap_err(),
            WireError::NotKeyValue(_)
        ));
        assert!(matches!(
            Command::parse(b"cmd=spawn").unwrap_err(),
            WireError::BadValue { .. }
        ));
        assert_eq!(
            Command::parse(&[b'c', 0xff]).unwrap_err(),
            WireError::NotUtf8
        );
        let long = vec![b'a'; MAX_LINE_LEN];
        assert!(matches!(
            Command::parse(&long).unwrap_err(),
            WireError::TooLong(_)
        ));
    }

    #[test]
    fn refuses_to_emit_unencodable_values() {
        let mut out = Vec::new();
        let c = Command::Put {
            kvsname: "k".into(),
            key: "a".into(),
            value: "two words".into(),
        };
        assert!(matches!(
            c.emit(&mut out),
            Err(WireError::Unencodable { key: "value", .. })
        ));
        let c = Command::Put {
            kvsname: "k".into(),
            key: "a".into(),
            value: "x".repeat(MAX_LINE_LEN),
        };
        assert!(matches!(c.emit(&mut out), Err(WireError::TooLong(_))));
        assert!(out.is_empty());
    }

    #[test]
    fn never_panics_on_arbitrary_bytes() {
        // A deterministic pseudo-random walk over short lines built from PMI-ish bytes.
        let alphabet = b"cmd=initputgetak _\t\n0123456789-=\xff";
        let mut state = 0x2545_f491_u32;
        for _ in 0..20_000 {
            let mut line = Vec::new();
            for _ in 0..(state % 40) {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                line.push(alphabet[(state as usize) % alphabet.len()]);
            }
            let _ = Command::parse(&line);
        }
    }

    #[test]
    fn line_buffer_splits_and_bounds() {
        let mut b = LineBuffer::default();
        b.push(b"cmd=barr");
        assert_eq!(b.next_line().unwrap(), None);
        b.push(b"ier_in\ncmd=fin");
        assert_eq!(b.next_line().unwrap().unwrap(), b"cmd=barrier_in");
        assert_eq!(b.next_line().unwrap(), None);
        assert!(b.has_partial());
        b.push(&vec![b'x'; MAX_LINE_LEN]);
        assert!(b.next_line().is_err());
    }
}
