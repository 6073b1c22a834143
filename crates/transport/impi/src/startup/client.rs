//! An IMPI client's startup as a state machine: authentication, rank registration, every
//! label in LAM/MPI's order, and DONE; it yields the global tables. Later, FINI.
//!
//! By default it runs in lock-step like LAM/MPI (send a label, await its reply, send the
//! next); with `pipeline` it sends every label at once, which a server must also accept.

use super::Inbox;
use crate::error::{Error, Result};
use crate::wire::label::Label;
use crate::wire::startup::{
    emit_auth_key, AuthMethod, AuthReply, ClientMessage, CollReply, ServerMessage, BARE_LEN,
    MAX_CLIENTS,
};
use crate::wire::tables::{ClientInfo, GlobalTables};
use crate::wire::Limits;
use std::collections::BTreeMap;

/// The methods a client offers, from `IMPI_AUTH_NONE` / `IMPI_AUTH_KEY` as LAM/MPI reads
/// them.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ClientAuth {
    pub allow_none: bool,
    pub key: Option<u64>,
}

impl std::fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientAuth")
            .field("allow_none", &self.allow_none)
            .field("key", &self.key.map(|_| "<hidden>"))
            .finish()
    }
}

impl ClientAuth {
    /// `IMPI_AUTH_NONE` set (any value) offers NONE; `IMPI_AUTH_KEY` (a decimal 64-bit
    /// integer, as LAM/MPI's `atoll` reads it) offers KEY.
    pub fn from_env() -> Result<ClientAuth> {
        let key = match std::env::var("IMPI_AUTH_KEY") {
            Err(_) => None,
            Ok(v) => Some(parse_key(&v)?),
        };
        Ok(ClientAuth {
            allow_none: std::env::var_os("IMPI_AUTH_NONE").is_some(),
            key,
        })
    }

    /// The `auth_mask` sent in AUTH.
    pub fn mask(&self) -> u32 {
        let mut m = 0;
        if self.allow_none {
            m |= AuthMethod::None.bit();
        }
        if self.key.is_some() {
            m |= AuthMethod::Key.bit();
        }
        m
    }
}

/// Parses an `IMPI_AUTH_KEY` value: a decimal integer, signed (LAM/MPI's `atoll`) or
/// unsigned, kept as its 64 bits.
pub fn parse_key(text: &str) -> Result<u64> {
    let t = text.trim();
    t.parse::<u64>()
        .or_else(|_| t.parse::<i64>().map(|v| v as u64))
        .map_err(|_| Error::Invalid {
            what: "IMPI_AUTH_KEY",
            reason: format!("'{text}' is not a decimal 64-bit integer"),
        })
}

#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// This client's rank, 0..nclients (fixes its place in MPI_COMM_WORLD).
    pub rank: u32,
    pub auth: ClientAuth,
    /// This client's contribution to every label.
    pub info: ClientInfo,
    /// Send every label at once instead of LAM/MPI's lock-step.
    pub pipeline: bool,
    pub limits: Limits,
}

/// Progress, for the owner's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientEvent {
    Authenticated(AuthMethod),
    Joined {
        nclients: u32,
    },
    Reply(Label),
    /// The DONE reply arrived; [`Client::tables`] holds the global tables.
    StartupComplete,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    AwaitAuthReply,
    AwaitSize,
    Collecting,
    AwaitDone,
    Ready,
    Finished,
    Failed(Error),
}

/// The client startup state machine.
#[derive(Debug)]
pub struct Client {
    config: ClientConfig,
    state: State,
    inbox: Inbox,
    out: Vec<u8>,
    /// Labels sent but not yet answered, or not yet sent (lock-step), in LAM order.
    pending: Vec<Label>,
    sent: usize,
    nclients: u32,
    replies: BTreeMap<Label, CollReply>,
    tables: Option<GlobalTables>,
    events: Vec<ClientEvent>,
}

impl Client {
    /// Validates the configuration and queues AUTH.
    pub fn new(config: ClientConfig) -> Result<Client> {
        config.info.validate()?;
        if config.rank >= MAX_CLIENTS {
            return Err(Error::OutOfRange {
                what: "ClientConfig rank",
                value: config.rank.into(),
                allowed: format!("0..{MAX_CLIENTS}"),
            });
        }
        let mask = config.auth.mask();
        if mask == 0 {
            return Err(Error::Invalid {
                what: "ClientConfig auth",
                reason: "no method offered: set IMPI_AUTH_NONE or IMPI_AUTH_KEY".into(),
            });
        }
        let mut out = Vec::new();
        ClientMessage::Auth { mask }.emit(&mut out);
        Ok(Client {
            config,
            state: State::AwaitAuthReply,
            inbox: Inbox::default(),
            out,
            pending: Label::LAM_ORDER.to_vec(),
            sent: 0,
            nclients: 0,
            replies: BTreeMap::new(),
            tables: None,
            events: Vec::new(),
        })
    }

    /// Bytes to send to the server (empty when none).
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        (!self.events.is_empty()).then(|| self.events.remove(0))
    }

    /// The global tables, once startup is complete.
    pub fn tables(&self) -> Option<&GlobalTables> {
        self.tables.as_ref()
    }

    pub fn is_ready(&self) -> bool {
        self.state == State::Ready
    }

    /// Feeds bytes from the server. After an error the client stays failed.
    pub fn handle_input(&mut self, data: &[u8]) -> Result<()> {
        if let State::Failed(e) = &self.state {
            return Err(e.clone());
        }
        self.inbox.push(data);
        loop {
            match self.step() {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                Err(e) => {
                    self.state = State::Failed(e.clone());
                    return Err(e);
                }
            }
        }
    }

    /// The server closed the connection: the error says what that means at this point.
    pub fn handle_close(&mut self) -> Error {
        let rank = self.config.rank;
        let e = match &self.state {
            State::Failed(e) => return e.clone(),
            State::Finished => return Error::Closed { state: "finished" },
            State::AwaitAuthReply => Error::Invalid {
                what: "IMPI server",
                reason: format!(
                    "closed the connection during authentication: it refused this client's \
                     auth mask 0x{:x} (see the server's log)",
                    self.config.auth.mask()
                ),
            },
            State::AwaitSize => Error::Invalid {
                what: "IMPI server",
                reason: format!(
                    "closed the connection after this client registered as rank {rank}: \
                     another client did not join before the server's timeout, or the key \
                     is wrong, or rank {rank} is already taken or not below the server's \
                     client count (see the server's log)"
                ),
            },
            State::Collecting | State::AwaitDone => Error::Invalid {
                what: "IMPI server",
                reason: format!(
                    "closed the connection during startup (client rank {rank}, {} of {} \
                     labels answered): another client failed or the server timed out",
                    self.replies.len(),
                    Label::LAM_ORDER.len()
                ),
            },
            State::Ready => Error::Closed {
                state: "the job runs (before FINI)",
            },
        };
        self.state = State::Failed(e.clone());
        e
    }

    /// Queues FINI, once all of this client's processes have exited.
    pub fn finish(&mut self) -> Result<()> {
        if self.state != State::Ready {
            return Err(Error::Unexpected {
                state: "startup is not complete",
                got: "Client::finish".into(),
            });
        }
        ClientMessage::Fini.emit(&mut self.out);
        self.state = State::Finished;
        Ok(())
    }

    fn send_label(&mut self, label: Label) {
        let payload = self.config.info.contribution(label);
        ClientMessage::Coll { label, payload }.emit(&mut self.out);
        self.sent += 1;
    }

    /// Handles the next complete message; Ok(false) when none is complete.
    fn step(&mut self) -> Result<bool> {
        match self.state {
            State::AwaitAuthReply => {
                let Some(reply) = AuthReply::decode(&self.inbox.bytes)? else {
                    return Ok(false);
                };
                self.inbox.consume(BARE_LEN);
                self.on_auth(reply.method)?;
                Ok(true)
            }
            State::Ready | State::Finished if self.inbox.is_empty() => Ok(false),
            State::Failed(_) => Ok(false),
            _ => {
                let Some((msg, used)) =
                    ServerMessage::decode(&self.inbox.bytes, self.config.limits.max_msg)?
                else {
                    return Ok(false);
                };
                self.inbox.consume(used);
                self.on_message(msg)?;
                Ok(true)
            }
        }
    }

    fn on_auth(&mut self, method: AuthMethod) -> Result<()> {
        if self.config.auth.mask() & method.bit() == 0 {
            return Err(Error::Invalid {
                what: "IMPI server auth reply",
                reason: format!(
                    "the server chose {method:?}, which this client did not offer (mask 0x{:x})",
                    self.config.auth.mask()
                ),
            });
        }
        if let (AuthMethod::Key, Some(key)) = (method, self.config.auth.key) {
            emit_auth_key(key, &mut self.out);
        }
        ClientMessage::Rank(self.config.rank).emit(&mut self.out);
        self.state = State::AwaitSize;
        self.events.push(ClientEvent::Authenticated(method));
        Ok(())
    }

    fn on_message(&mut self, msg: ServerMessage) -> Result<()> {
        match (&self.state, msg) {
            (State::AwaitSize, ServerMessage::Size(n)) => {
                if self.config.rank >= n {
                    return Err(Error::OutOfRange {
                        what: "this client's IMPI rank",
                        value: self.config.rank.into(),
                        allowed: format!("0..{n} (the server has {n} clients)"),
                    });
                }
                self.nclients = n;
                self.events.push(ClientEvent::Joined { nclients: n });
                self.state = State::Collecting;
                let burst = if self.config.pipeline {
                    Label::LAM_ORDER.len()
                } else {
                    1
                };
                for label in Label::LAM_ORDER.into_iter().take(burst) {
                    self.send_label(label);
                }
                Ok(())
            }
            (State::Collecting, ServerMessage::Coll(reply)) => self.on_reply(reply),
            (State::AwaitDone, ServerMessage::Done { .. }) => {
                self.state = State::Ready;
                self.events.push(ClientEvent::StartupComplete);
                Ok(())
            }
            (state, msg) => Err(Error::Unexpected {
                state: match state {
                    State::AwaitSize => "awaiting the server's IMPI size",
                    State::Collecting => "awaiting COLL replies",
                    State::AwaitDone => "awaiting the DONE reply",
                    _ => "startup is over",
                },
                got: match msg {
                    ServerMessage::Size(n) => format!("IMPI size {n}"),
                    ServerMessage::Coll(r) => format!("COLL reply to {}", r.label),
                    ServerMessage::Done { .. } => "DONE".into(),
                },
            }),
        }
    }

    fn on_reply(&mut self, reply: CollReply) -> Result<()> {
        let label = reply.label;
        let awaited = self.pending.first().copied();
        let expected = if self.config.pipeline {
            self.pending.contains(&label)
        } else {
            awaited == Some(label)
        };
        if !expected {
            return Err(Error::Unexpected {
                state: "awaiting COLL replies",
                got: format!("a reply to {label}, which is not awaited"),
            });
        }
        self.pending.retain(|&l| l != label);
        self.replies.insert(label, reply);
        self.events.push(ClientEvent::Reply(label));
        if let Some(&next) = self.pending.first() {
            if self.sent < Label::LAM_ORDER.len() {
                self.send_label(next);
            }
            return Ok(());
        }
        self.tables = Some(GlobalTables::decode(self.nclients, &self.replies)?);
        ClientMessage::Done.emit(&mut self.out);
        self.state = State::AwaitDone;
        Ok(())
    }
}
