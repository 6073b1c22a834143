//! The startup dialogue through the relay, sans-IO: towards the inside agent the relay
//! is the IMPI server, towards the real server it is client `me`.
//!
//! Authentication passes through unchanged (the server decides; a key travels as the
//! agent sent it), the rank must be the relay's, labels go out rewritten as they arrive
//! and replies come in rewritten as soon as what they depend on is known (see
//! [`crate::rewrite`]), DONE passes both ways, and after startup the agent's FINI goes
//! on to the server.

use crate::rewrite::{InsideLabels, InwardContext, RelayPlace};
use crossmpi_impi::wire::label::Label;
use crossmpi_impi::wire::startup::{
    decode_auth_key, emit_auth_key, AuthMethod, AuthReply, ClientMessage, CollReply, ServerMessage,
    BARE_LEN,
};
use crossmpi_impi::wire::tables::{full_mask, GlobalTables};
use crossmpi_impi::wire::Limits;
use crossmpi_impi::{Error, Result};
use std::collections::BTreeMap;

/// Length of the only message accepted before authentication (`AUTH` with its mask).
pub const AUTH_MSG_LEN: usize = 12;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    AwaitAuth,
    AwaitAuthReply,
    AwaitKey,
    AwaitRank,
    AwaitSize,
    Collecting,
    Running,
    Finished,
}

/// Progress, for the I/O layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartupEvent {
    /// The server said how many clients there are: open one private listening port per
    /// other client on every trunk and call [`StartupRelay::set_private_ports`].
    Joined { nclients: u32 },
    /// DONE passed both ways: the data connections may start.
    Ready {
        inside: GlobalTables,
        outside: GlobalTables,
    },
    /// The inside agent sent FINI and it went on to the server.
    InsideFinished,
}

#[derive(Debug)]
pub struct StartupRelay {
    place: RelayPlace,
    limits: Limits,
    phase: Phase,
    from_inside: Vec<u8>,
    from_server: Vec<u8>,
    to_inside: Vec<u8>,
    to_server: Vec<u8>,
    inside: InsideLabels,
    ctx: Option<InwardContext>,
    outside_replies: BTreeMap<Label, CollReply>,
    inside_replies: BTreeMap<Label, CollReply>,
    /// Outside replies whose inward form waits for a count or the ports.
    deferred: Vec<CollReply>,
    events: Vec<StartupEvent>,
    /// The key an encrypting relay keys its connections with: the agent's key must be
    /// the same, or the relays of the job would not agree (their keys all equal the
    /// server's only if each equals its agent's).
    encryption_key: Option<u64>,
}

fn unexpected(state: &'static str, got: String) -> Error {
    Error::Unexpected { state, got }
}

impl StartupRelay {
    pub fn new(place: RelayPlace, limits: Limits) -> StartupRelay {
        StartupRelay {
            place,
            limits,
            phase: Phase::AwaitAuth,
            from_inside: Vec::new(),
            from_server: Vec::new(),
            to_inside: Vec::new(),
            to_server: Vec::new(),
            inside: InsideLabels::default(),
            ctx: None,
            outside_replies: BTreeMap::new(),
            inside_replies: BTreeMap::new(),
            deferred: Vec::new(),
            events: Vec::new(),
            encryption_key: None,
        }
    }

    /// Checks that the agent authenticates with `key` when it sends one (an encrypting
    /// relay's key).
    pub fn expecting_key(mut self, key: Option<u64>) -> StartupRelay {
        self.encryption_key = key;
        self
    }

    pub fn take_to_inside(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.to_inside)
    }

    pub fn take_to_server(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.to_server)
    }

    pub fn poll_event(&mut self) -> Option<StartupEvent> {
        (!self.events.is_empty()).then(|| self.events.remove(0))
    }

    /// True once the agent's AUTH has been accepted (the inside connection is the one).
    pub fn has_agent(&self) -> bool {
        self.phase != Phase::AwaitAuth
    }

    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Finished
    }

    /// The private listening port of every client's virtual host, per trunk and in
    /// client order (`ports[trunk][client]`; the relay's own client's entry is ignored).
    pub fn set_private_ports(&mut self, ports: Vec<Vec<u16>>) -> Result<()> {
        let ctx = self
            .ctx
            .as_mut()
            .ok_or_else(|| unexpected("awaiting the server's size", "private ports".into()))?;
        ctx.ports = Some(ports);
        self.release_deferred()
    }

    /// What the inside agent closing its connection means now.
    pub fn inside_closed(&self) -> Option<String> {
        match self.phase {
            Phase::AwaitAuth | Phase::Finished => None,
            _ => Some(
                "the inside agent closed its connection before FINI: its cluster failed".into(),
            ),
        }
    }

    /// What the server closing its connection means now.
    pub fn server_closed(&self) -> Option<String> {
        match self.phase {
            Phase::Finished => None,
            Phase::AwaitAuthReply => Some(
                "the IMPI server closed the connection during authentication: it refused the \
                 inside agent's auth mask (see the server's log)"
                    .into(),
            ),
            _ => Some(
                "the IMPI server closed the connection before this cluster finished: another \
                 client failed, left or never joined (see the server's log)"
                    .into(),
            ),
        }
    }

    /// Bytes from the inside agent.
    pub fn handle_inside(&mut self, data: &[u8]) -> Result<()> {
        self.from_inside.extend_from_slice(data);
        while self.inside_step()? {}
        Ok(())
    }

    /// Bytes from the IMPI server.
    pub fn handle_server(&mut self, data: &[u8]) -> Result<()> {
        self.from_server.extend_from_slice(data);
        while self.server_step()? {}
        Ok(())
    }

    fn inside_step(&mut self) -> Result<bool> {
        let buf = &self.from_inside;
        match self.phase {
            Phase::AwaitKey => {
                let Some(key) = decode_auth_key(buf)? else {
                    return Ok(false);
                };
                if self.encryption_key.is_some_and(|k| k != key) {
                    return Err(Error::Invalid {
                        what: "impi-relay (inside agent)",
                        reason: "the agent's IMPI_AUTH_KEY differs from this relay's, which \
                                 keys the encryption (-encrypt): give both the job's key"
                            .into(),
                    });
                }
                self.from_inside.drain(..BARE_LEN);
                emit_auth_key(key, &mut self.to_server);
                self.phase = Phase::AwaitRank;
                return Ok(true);
            }
            Phase::AwaitAuthReply | Phase::AwaitSize => {
                if buf.is_empty() {
                    return Ok(false);
                }
                return Err(unexpected(
                    "awaiting the server (inside agent)",
                    format!("{} bytes", buf.len()),
                ));
            }
            _ => {}
        }
        let max = if self.phase == Phase::AwaitAuth {
            4
        } else {
            self.limits.max_msg
        };
        let Some((msg, used)) = ClientMessage::decode(buf, max)? else {
            return Ok(false);
        };
        self.from_inside.drain(..used);
        match (self.phase, msg) {
            (Phase::AwaitAuth, msg @ ClientMessage::Auth { .. }) => {
                msg.emit(&mut self.to_server);
                self.phase = Phase::AwaitAuthReply;
            }
            (Phase::AwaitRank, ClientMessage::Rank(r)) => {
                if r != self.place.me {
                    return Err(Error::Invalid {
                        what: "impi-relay (inside agent's rank)",
                        reason: format!(
                            "the agent registered as client {r}, but this relay is client {} \
                             (mpirun -client must name the relay's rank)",
                            self.place.me
                        ),
                    });
                }
                ClientMessage::Rank(r).emit(&mut self.to_server);
                self.phase = Phase::AwaitSize;
            }
            (Phase::Collecting, ClientMessage::Coll { label, payload }) => {
                let payload = self.inside.outward(&self.place, label, &payload)?;
                ClientMessage::Coll { label, payload }.emit(&mut self.to_server);
            }
            (Phase::Collecting, ClientMessage::Done) => {
                if self.inside_replies.len() != Label::LAM_ORDER.len() {
                    return Err(unexpected(
                        "collecting labels (inside agent)",
                        "DONE before every label was answered".into(),
                    ));
                }
                ClientMessage::Done.emit(&mut self.to_server);
            }
            (Phase::Running, ClientMessage::Fini) => {
                ClientMessage::Fini.emit(&mut self.to_server);
                self.phase = Phase::Finished;
                self.events.push(StartupEvent::InsideFinished);
            }
            (phase, msg) => {
                return Err(unexpected(
                    "relaying the startup (inside agent)",
                    format!("{msg:?} in phase {phase:?}"),
                ))
            }
        }
        Ok(true)
    }

    fn server_step(&mut self) -> Result<bool> {
        let buf = &self.from_server;
        if buf.is_empty() {
            return Ok(false);
        }
        if self.phase == Phase::AwaitAuthReply {
            let Some(reply) = AuthReply::decode(buf)? else {
                return Ok(false);
            };
            if self.encryption_key.is_some() && reply.method == AuthMethod::None {
                return Err(Error::Invalid {
                    what: "impi-relay (IMPI server)",
                    reason: "the server lets the agent in without a key (IMPI_AUTH_NONE), but \
                             -encrypt needs key authentication (impi-server -auth key), which \
                             makes every relay's key the server's"
                        .into(),
                });
            }
            self.from_server.drain(..BARE_LEN);
            reply.emit(&mut self.to_inside);
            self.phase = match reply.method {
                AuthMethod::Key => Phase::AwaitKey,
                AuthMethod::None => Phase::AwaitRank,
            };
            return Ok(true);
        }
        let Some((msg, used)) = ServerMessage::decode(buf, self.limits.max_msg)? else {
            return Ok(false);
        };
        self.from_server.drain(..used);
        match (self.phase, msg) {
            (Phase::AwaitSize, ServerMessage::Size(n)) => {
                if self.place.me >= n {
                    return Err(Error::OutOfRange {
                        what: "impi-relay client rank",
                        value: self.place.me.into(),
                        allowed: format!("0..{n} (the server has {n} clients)"),
                    });
                }
                ServerMessage::Size(n).emit(&mut self.to_inside);
                self.ctx = Some(InwardContext::new(self.place.clone(), n));
                self.phase = Phase::Collecting;
                self.events.push(StartupEvent::Joined { nclients: n });
            }
            (Phase::Collecting, ServerMessage::Coll(reply)) => self.on_reply(reply)?,
            (Phase::Collecting, ServerMessage::Done { .. }) => self.on_done()?,
            (phase, msg) => {
                return Err(unexpected(
                    "relaying the startup (IMPI server)",
                    format!("{msg:?} in phase {phase:?}"),
                ))
            }
        }
        Ok(true)
    }

    fn on_reply(&mut self, reply: CollReply) -> Result<()> {
        let ctx = self.ctx.as_mut().expect("Collecting has a context");
        let full = full_mask(ctx.nclients);
        if reply.client_mask != full || self.outside_replies.contains_key(&reply.label) {
            return Err(Error::Invalid {
                what: "impi-relay (server reply)",
                reason: format!(
                    "reply to {} with client mask 0x{:x} (expected 0x{full:x}, once)",
                    reply.label, reply.client_mask
                ),
            });
        }
        ctx.learn(reply.label, &reply.data)?;
        self.outside_replies.insert(reply.label, reply.clone());
        self.deferred.push(reply);
        self.release_deferred()
    }

    /// Sends inside every deferred reply whose inward form can now be built.
    fn release_deferred(&mut self) -> Result<()> {
        let Some(ctx) = self.ctx.as_ref() else {
            return Ok(());
        };
        let mut waiting = Vec::new();
        for reply in std::mem::take(&mut self.deferred) {
            match ctx.inward(&self.inside, reply.label, &reply.data)? {
                None => waiting.push(reply),
                Some(data) => {
                    let inward = CollReply {
                        label: reply.label,
                        client_mask: reply.client_mask,
                        data,
                    };
                    ServerMessage::Coll(inward.clone()).emit(&mut self.to_inside);
                    self.inside_replies.insert(reply.label, inward);
                }
            }
        }
        self.deferred = waiting;
        Ok(())
    }

    fn on_done(&mut self) -> Result<()> {
        let n = self.ctx.as_ref().map(|c| c.nclients).unwrap_or(0);
        if self.inside_replies.len() != Label::LAM_ORDER.len() {
            return Err(unexpected(
                "collecting labels (IMPI server)",
                format!(
                    "DONE with {} of {} replies relayed inside",
                    self.inside_replies.len(),
                    Label::LAM_ORDER.len()
                ),
            ));
        }
        let outside = GlobalTables::decode(n, &self.outside_replies)?;
        let inside = GlobalTables::decode(n, &self.inside_replies).map_err(|e| Error::Invalid {
            what: "impi-relay (tables shown inside)",
            reason: e.to_string(),
        })?;
        ServerMessage::Done { payload_len: 0 }.emit(&mut self.to_inside);
        self.phase = Phase::Running;
        self.events.push(StartupEvent::Ready { inside, outside });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::trunk_place;

    /// An encrypting relay whose agent authenticates with `agent_key` (None: the server
    /// lets it in without one).
    fn authenticate(agent_key: Option<u64>) -> Result<Vec<u8>> {
        let mut relay = StartupRelay::new(trunk_place(1), Limits::default()).expecting_key(Some(5));
        let mut auth = Vec::new();
        ClientMessage::Auth { mask: 0b11 }.emit(&mut auth);
        relay.handle_inside(&auth)?;
        let mut reply = Vec::new();
        let method = agent_key.map_or(AuthMethod::None, |_| AuthMethod::Key);
        AuthReply::for_method(method).emit(&mut reply);
        relay.handle_server(&reply)?;
        let mut key = Vec::new();
        emit_auth_key(agent_key.unwrap_or_default(), &mut key);
        relay.handle_inside(&key)?;
        Ok(relay.take_to_server())
    }

    #[test]
    fn an_encrypting_relay_needs_the_agent_to_authenticate_with_its_key() {
        assert!(authenticate(Some(5))
            .unwrap()
            .ends_with(&5u64.to_be_bytes()));
        let e = authenticate(Some(6)).unwrap_err().to_string();
        assert!(e.contains("IMPI_AUTH_KEY differs"), "{e}");
        let e = authenticate(None).unwrap_err().to_string();
        assert!(e.contains("needs key authentication"), "{e}");
    }
}
