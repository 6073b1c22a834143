//! A rank's side of PMI-1, sans-IO: one request at a time, each answered by the reply
//! line its command calls for (`cmd=initack` by four lines). The caller writes the bytes
//! [`ClientMachine::start`] produces, feeds what it reads to
//! [`ClientMachine::receive`], and polls for the reply.

use crate::error::Error;
use crate::spawn::SpawnSegment;
use crate::wire::{Command, LineBuffer, SetKey};

/// A complete answer to the pending request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// The one reply line of an ordinary request.
    Line(Command),
    /// The answer to `cmd=initack`: what the following `cmd=set` lines assigned.
    Identified { size: usize, rank: usize },
}

#[derive(Debug)]
struct Pending {
    request: &'static str,
    expect: &'static str,
    /// `initack`: the `set` lines still to come, and what they said.
    acked: bool,
    sets_left: u8,
    size: Option<i64>,
    rank: Option<i64>,
}

#[derive(Debug, Default)]
pub struct ClientMachine {
    lines: LineBuffer,
    pending: Option<Pending>,
}

/// The reply each request waits for; `None` for requests answered by nothing.
fn expected_reply(request: &Command) -> Result<Option<&'static str>, &'static str> {
    Ok(Some(match request {
        Command::InitAck { .. } => "initack",
        Command::Init { .. } => "response_to_init",
        Command::GetMaxes => "maxes",
        Command::GetAppnum => "appnum",
        Command::GetMyKvsname => "my_kvsname",
        Command::GetUniverseSize => "universe_size",
        Command::Put { .. } => "put_result",
        Command::BarrierIn => "barrier_out",
        Command::Get { .. } => "get_result",
        Command::Finalize => "finalize_ack",
        Command::PublishName { .. } => "publish_result",
        Command::UnpublishName { .. } => "unpublish_result",
        Command::LookupName { .. } => "lookup_result",
        Command::Abort { .. } => return Ok(None),
        _ => return Err("is a response, not a request"),
    }))
}

impl ClientMachine {
    /// Encodes `request` into `out` and starts waiting for its reply.
    pub fn start(&mut self, request: &Command, out: &mut Vec<u8>) -> Result<(), Error> {
        let name = request.name();
        if let Some(p) = &self.pending {
            return Err(Error::new(
                name,
                format!("cmd={} is still waiting for its reply", p.request),
            ));
        }
        let expect = expected_reply(request).map_err(|why| Error::new(name, why.to_string()))?;
        request
            .emit(out)
            .map_err(|e| Error::new(name, e.to_string()))?;
        self.wait_for(name, expect);
        Ok(())
    }

    /// Encodes one segment of a spawn into `out`; the last one waits for the
    /// `spawn_result` that answers the whole request.
    pub fn start_spawn(&mut self, segment: &SpawnSegment, out: &mut Vec<u8>) -> Result<(), Error> {
        if let Some(p) = &self.pending {
            return Err(Error::new(
                "spawn",
                format!("cmd={} is still waiting for its reply", p.request),
            ));
        }
        segment
            .emit(out)
            .map_err(|e| Error::new("spawn", e.to_string()))?;
        let last = segment.number == segment.total;
        self.wait_for("spawn", last.then_some("spawn_result"));
        Ok(())
    }

    fn wait_for(&mut self, name: &'static str, expect: Option<&'static str>) {
        self.pending = expect.map(|expect| Pending {
            request: name,
            expect,
            acked: false,
            sets_left: if expect == "initack" { 3 } else { 0 },
            size: None,
            rank: None,
        });
    }

    /// Whether a request is waiting for its reply.
    pub fn is_waiting(&self) -> bool {
        self.pending.is_some()
    }

    pub fn receive(&mut self, bytes: &[u8]) {
        self.lines.push(bytes);
    }

    /// The reply to the pending request once its lines have all arrived; an error when
    /// the server says something else (the connection is then unusable).
    pub fn poll_reply(&mut self) -> Result<Option<Reply>, Error> {
        while let Some(p) = &self.pending {
            let request = p.request;
            let line = match self.lines.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => return Ok(None),
                Err(e) => return Err(Error::new(request, format!("reply: {e}"))),
            };
            let cmd =
                Command::parse(&line).map_err(|e| Error::new(request, format!("reply: {e}")))?;
            if let Some(reply) = self.accept(cmd)? {
                return Ok(Some(reply));
            }
        }
        Ok(None)
    }

    fn accept(&mut self, cmd: Command) -> Result<Option<Reply>, Error> {
        let Some(p) = self.pending.as_mut() else {
            return Ok(None);
        };
        let unexpected = |p: &Pending, cmd: &Command| {
            Error::new(
                p.request,
                format!(
                    "expected cmd={}, the launcher sent cmd={}",
                    p.expect,
                    cmd.name()
                ),
            )
        };
        if p.expect == "initack" {
            match (&cmd, p.acked) {
                (Command::InitAckReply, false) => p.acked = true,
                (Command::Set { key, value }, true) if p.sets_left > 0 => {
                    p.sets_left -= 1;
                    match key {
                        SetKey::Size => p.size = Some(*value),
                        SetKey::Rank => p.rank = Some(*value),
                        SetKey::Debug => {}
                    }
                }
                _ => return Err(unexpected(p, &cmd)),
            }
            if p.sets_left > 0 {
                return Ok(None);
            }
            let (size, rank) = (p.size, p.rank);
            self.pending = None;
            return match (size, rank) {
                (Some(s), Some(r)) if s > 0 && r >= 0 && r < s => Ok(Some(Reply::Identified {
                    size: s as usize,
                    rank: r as usize,
                })),
                _ => Err(Error::new(
                    "initack",
                    format!("launcher assigned size {size:?} and rank {rank:?}"),
                )),
            };
        }
        if cmd.name() != p.expect {
            return Err(unexpected(p, &cmd));
        }
        self.pending = None;
        Ok(Some(Reply::Line(cmd)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_request_at_a_time() {
        let mut m = ClientMachine::default();
        let mut out = Vec::new();
        m.start(&Command::BarrierIn, &mut out).unwrap();
        assert_eq!(out, b"cmd=barrier_in\n");
        assert!(m.start(&Command::Finalize, &mut out).is_err());
        assert_eq!(m.poll_reply().unwrap(), None);
        m.receive(b"cmd=barrier_o");
        assert_eq!(m.poll_reply().unwrap(), None);
        m.receive(b"ut\n");
        assert_eq!(
            m.poll_reply().unwrap(),
            Some(Reply::Line(Command::BarrierOut))
        );
        assert!(!m.is_waiting());
    }

    #[test]
    fn initack_collects_the_set_lines() {
        let mut m = ClientMachine::default();
        m.start(&Command::InitAck { pmiid: 2 }, &mut Vec::new())
            .unwrap();
        m.receive(b"cmd=initack\ncmd=set size=4\ncmd=set rank=2\n");
        assert_eq!(m.poll_reply().unwrap(), None);
        m.receive(b"cmd=set debug=0\n");
        assert_eq!(
            m.poll_reply().unwrap(),
            Some(Reply::Identified { size: 4, rank: 2 })
        );
    }

    #[test]
    fn wrong_replies_are_errors_naming_the_request() {
        let mut m = ClientMachine::default();
        m.start(&Command::Finalize, &mut Vec::new()).unwrap();
        m.receive(b"cmd=barrier_out\n");
        let e = m.poll_reply().unwrap_err().to_string();
        assert!(e.contains("finalize") && e.contains("barrier_out"), "{e}");

        let mut m = ClientMachine::default();
        m.start(&Command::InitAck { pmiid: 0 }, &mut Vec::new())
            .unwrap();
        m.receive(b"cmd=initack\ncmd=set size=2\ncmd=set rank=5\ncmd=set debug=0\n");
        assert!(m.poll_reply().is_err());
    }

    #[test]
    fn abort_expects_no_reply_and_responses_cannot_be_sent() {
        let mut m = ClientMachine::default();
        m.start(
            &Command::Abort {
                code: 1,
                message: None,
            },
            &mut Vec::new(),
        )
        .unwrap();
        assert!(!m.is_waiting());
        assert!(m.start(&Command::BarrierOut, &mut Vec::new()).is_err());
    }
}
