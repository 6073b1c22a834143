//! `mcmd=spawn`, the one multi-line PMI-1 request (`MPI_Comm_spawn`), sans-IO.
//!
//! A spawn of `count` commands is `count` segments, each one block of lines:
//!
//! ```text
//! mcmd=spawn
//! nprocs=N
//! execname=PROGRAM
//! totspawns=COUNT
//! spawnssofar=I          (1-based: this segment's number)
//! argcnt=M
//! arg1=WORDS ... argM=WORDS
//! preput_num=P
//! preput_key_0=K preput_val_0=V ...
//! info_num=Q
//! info_key_0=K info_val_0=V ...
//! endcmd
//! ```
//!
//! every `key=value` on a line of its own, the value running to the end of the line (so
//! arguments may hold spaces). The launcher answers the last segment with one
//! `cmd=spawn_result rc=N`. These are the spellings MPICH's simple PMI client sends and
//! Hydra serves.

use crate::wire::{WireError, MAX_LINE_LEN};

/// Most lines one segment may have: far above any real argument list, low enough that
/// a runaway client cannot grow the launcher's memory without bound.
pub const MAX_SEGMENT_LINES: usize = 4096;

/// One command of a spawn request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnSegment {
    pub nprocs: usize,
    pub command: String,
    /// How many segments the request has (`totspawns`).
    pub total: usize,
    /// This segment's number, 1-based (`spawnssofar`).
    pub number: usize,
    pub args: Vec<String>,
    /// Key-value pairs to put into the new job's key space before it starts.
    pub preput: Vec<(String, String)>,
    pub info: Vec<(String, String)>,
}

const CMD: &str = "spawn";

fn bad(key: &'static str, value: impl Into<String>) -> WireError {
    WireError::BadValue {
        cmd: CMD,
        key,
        value: value.into(),
    }
}

/// Whether `value` fits the rest of one line.
fn fits_line(value: &str) -> bool {
    !value.bytes().any(|b| matches!(b, b'\n' | b'\r' | 0))
}

impl SpawnSegment {
    /// Appends the block (from `mcmd=spawn` to `endcmd`, newlines included) to `out`;
    /// fails, leaving `out` unchanged, on a value the block cannot carry.
    pub fn emit(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        let mut lines = vec![
            "mcmd=spawn".to_string(),
            format!("nprocs={}", self.nprocs),
            format!("execname={}", self.command),
            format!("totspawns={}", self.total),
            format!("spawnssofar={}", self.number),
            format!("argcnt={}", self.args.len()),
        ];
        if self.command.is_empty() || !fits_line(&self.command) {
            return Err(WireError::Unencodable {
                key: "execname",
                value: self.command.clone(),
            });
        }
        for (i, a) in self.args.iter().enumerate() {
            if !fits_line(a) {
                return Err(WireError::Unencodable {
                    key: "arg",
                    value: a.clone(),
                });
            }
            lines.push(format!("arg{}={a}", i + 1));
        }
        for (what, pairs) in [("preput", &self.preput), ("info", &self.info)] {
            lines.push(format!("{what}_num={}", pairs.len()));
            for (i, (k, v)) in pairs.iter().enumerate() {
                if k.is_empty() || k.contains('=') || !fits_line(k) || !fits_line(v) {
                    return Err(WireError::Unencodable {
                        key: "key",
                        value: format!("{k}={v}"),
                    });
                }
                lines.push(format!("{what}_key_{i}={k}"));
                lines.push(format!("{what}_val_{i}={v}"));
            }
        }
        lines.push("endcmd".into());
        if let Some(l) = lines.iter().find(|l| l.len() >= MAX_LINE_LEN) {
            return Err(WireError::TooLong(l.len()));
        }
        for l in lines {
            out.extend_from_slice(l.as_bytes());
            out.push(b'\n');
        }
        Ok(())
    }

    /// Parses the lines between `mcmd=spawn` and `endcmd` (both excluded).
    pub fn parse(lines: &[Vec<u8>]) -> Result<SpawnSegment, WireError> {
        let mut fields: Vec<(&str, &str)> = Vec::with_capacity(lines.len());
        for l in lines {
            let l = std::str::from_utf8(l).map_err(|_| WireError::NotUtf8)?;
            let l = l.trim_end_matches('\r');
            let kv = l
                .split_once('=')
                .ok_or_else(|| WireError::NotKeyValue(l.to_string()))?;
            fields.push(kv);
        }
        let get = |key: &str| fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        let text = |key: &'static str| get(key).ok_or(WireError::Missing { cmd: CMD, key });
        let number = |key: &'static str| -> Result<usize, WireError> {
            let v = text(key)?;
            v.trim().parse().map_err(|_| bad(key, v))
        };
        let command = text("execname")?.to_string();
        if command.is_empty() {
            return Err(bad("execname", ""));
        }
        let total = number("totspawns")?;
        let number_ = number("spawnssofar")?;
        if total == 0 || number_ == 0 || number_ > total {
            return Err(bad("spawnssofar", format!("{number_} of {total}")));
        }
        let argcnt = number("argcnt").or_else(|e| match get("argcnt") {
            None => Ok(0),
            Some(_) => Err(e),
        })?;
        if argcnt > MAX_SEGMENT_LINES {
            return Err(bad("argcnt", argcnt.to_string()));
        }
        let args = (1..=argcnt)
            .map(|i| {
                get(&format!("arg{i}"))
                    .map(str::to_string)
                    .ok_or(WireError::Missing {
                        cmd: CMD,
                        key: "argN",
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let pairs = |what: &str, count: &'static str| -> Result<Vec<(String, String)>, WireError> {
            let n = match get(count) {
                None => 0,
                Some(v) => v.trim().parse().map_err(|_| bad(count, v))?,
            };
            if n > MAX_SEGMENT_LINES {
                return Err(bad(count, n.to_string()));
            }
            (0..n)
                .map(|i| {
                    let k = get(&format!("{what}_key_{i}"));
                    let v = get(&format!("{what}_val_{i}"));
                    match (k, v) {
                        (Some(k), Some(v)) => Ok((k.to_string(), v.to_string())),
                        _ => Err(WireError::Missing {
                            cmd: CMD,
                            key: count,
                        }),
                    }
                })
                .collect()
        };
        Ok(SpawnSegment {
            nprocs: number("nprocs")?,
            command,
            total,
            number: number_,
            args,
            preput: pairs("preput", "preput_num")?,
            info: pairs("info", "info_num")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::LineBuffer;

    fn segment() -> SpawnSegment {
        SpawnSegment {
            nprocs: 3,
            command: "./child".into(),
            total: 2,
            number: 1,
            args: vec!["a b".into(), "".into(), "x=y".into()],
            preput: vec![("PARENT_ROOT_PORT_NAME".into(), "p:1,2".into())],
            info: vec![("wdir".into(), "/tmp".into())],
        }
    }

    fn block_lines(bytes: &[u8]) -> Vec<Vec<u8>> {
        let mut lb = LineBuffer::default();
        lb.push(bytes);
        let mut lines = Vec::new();
        while let Some(l) = lb.next_line().unwrap() {
            lines.push(l);
        }
        lines
    }

    #[test]
    fn segments_round_trip_with_spaces_in_arguments() {
        let mut out = Vec::new();
        segment().emit(&mut out).unwrap();
        let lines = block_lines(&out);
        assert_eq!(lines.first().unwrap(), b"mcmd=spawn");
        assert_eq!(lines.last().unwrap(), b"endcmd");
        assert_eq!(
            SpawnSegment::parse(&lines[1..lines.len() - 1]).unwrap(),
            segment()
        );
    }

    #[test]
    fn rejects_bad_segments() {
        let parse = |text: &str| {
            let lines: Vec<Vec<u8>> = text.lines().map(|l| l.as_bytes().to_vec()).collect();
            SpawnSegment::parse(&lines)
        };
        let ok = "nprocs=1\nexecname=a\ntotspawns=1\nspawnssofar=1\n";
        assert_eq!(parse(ok).unwrap().args, Vec::<String>::new());
        assert!(parse("nprocs=1\ntotspawns=1\nspawnssofar=1").is_err());
        assert!(parse("nprocs=x\nexecname=a\ntotspawns=1\nspawnssofar=1").is_err());
        assert!(parse("nprocs=1\nexecname=a\ntotspawns=1\nspawnssofar=2").is_err());
        assert!(parse(&format!("{ok}argcnt=2\narg1=x")).is_err());
        assert!(parse(&format!("{ok}preput_num=1\npreput_key_0=k")).is_err());
        assert!(parse(&format!("{ok}junk")).is_err());
        let mut bad = segment();
        bad.args.push("two\nlines".into());
        let mut out = Vec::new();
        assert!(bad.emit(&mut out).is_err());
        assert!(out.is_empty());
    }
}
