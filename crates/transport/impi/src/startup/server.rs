//! The IMPI server's protocol as a state machine over any number of connections.
//!
//! The I/O layer calls [`Server::accept`] for each new connection, feeds received bytes
//! to [`Server::handle_input`], reports closed sockets with [`Server::handle_close`],
//! sends what [`Server::take_output`] returns, closes connections for which
//! [`Server::should_close`] is true, and reads [`ServerEvent`]s for its log.
//!
//! Failures before a connection has authenticated drop only that connection (a port
//! scanner or a client with a wrong key cannot end the job); any failure of an
//! authenticated client ends the job with an error naming it, because the other clients
//! cannot finish without it.

use super::Inbox;
use crate::error::{Error, Result};
use crate::wire::label::{Extent, Label};
use crate::wire::startup::{
    decode_auth_key, AuthMethod, AuthReply, ClientMessage, CollReply, ServerMessage, MAX_CLIENTS,
};
use crate::wire::tables::{full_mask, CROSSMPI_MAJOR, SURVIVAL_MAJOR};
use crate::wire::Limits;
use std::collections::{BTreeMap, VecDeque};

/// How clients must authenticate.
#[derive(Clone, PartialEq, Eq)]
pub enum ServerAuth {
    /// `IMPI_AUTH_NONE`: the client must offer it.
    None,
    /// `IMPI_AUTH_KEY`: the client must offer it and send this 64-bit key.
    Key(u64),
}

impl std::fmt::Debug for ServerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerAuth::None => f.write_str("None"),
            ServerAuth::Key(_) => f.write_str("Key(<hidden>)"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Number of clients (1..=32).
    pub nclients: u32,
    pub auth: ServerAuth,
    pub limits: Limits,
}

/// Identifies a connection; chosen by [`Server::accept`].
pub type ConnId = u64;

/// What happened, for the I/O layer's log and exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerEvent {
    /// This connection was refused; close it. The job goes on.
    Rejected {
        conn: ConnId,
        reason: Error,
    },
    Authenticated {
        conn: ConnId,
        method: AuthMethod,
    },
    Registered {
        conn: ConnId,
        rank: u32,
    },
    /// Every client registered; each got the size.
    AllJoined,
    /// Every client submitted `label`; each got the reply of `len` payload bytes.
    LabelComplete {
        label: Label,
        len: usize,
    },
    /// Every client sent DONE; each got the DONE reply.
    AllDone,
    ClientFinished {
        rank: u32,
    },
    /// Client `rank`, whose relays survive a trunk's death, closed its connection before
    /// FINI: its trunk 0 relay died, and the job goes on without it.
    ClientLeft {
        rank: u32,
    },
    /// Every client sent FINI (or left, as above, while another sent FINI): the server
    /// exits successfully.
    JobComplete,
    /// The job cannot complete; the reason names the client.
    JobFailed {
        reason: String,
    },
}

/// The job's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for every client to register its rank.
    Joining,
    /// Collecting labels and DONE.
    Collecting,
    /// DONE replied; the MPI job runs until every client sends FINI.
    Running,
    Complete,
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ConnState {
    AwaitAuth,
    AwaitKey,
    AwaitRank,
    Joined(u32),
    SentDone(u32),
    SentFini(u32),
    Refused,
}

#[derive(Debug)]
struct Conn {
    state: ConnState,
    inbox: Inbox,
    out: Vec<u8>,
}

/// One label's submissions, by client rank.
#[derive(Debug)]
struct Round {
    parts: Vec<Option<Vec<u8>>>,
    bytes: usize,
}

/// Host and proc counts a client declared, to check its H_ and P_ lengths.
#[derive(Debug, Default, Clone, Copy)]
struct Declared {
    nhosts: Option<u32>,
    nprocs: Option<u32>,
}

/// The IMPI server state machine.
#[derive(Debug)]
pub struct Server {
    config: ServerConfig,
    conns: BTreeMap<ConnId, Conn>,
    next_conn: ConnId,
    by_rank: Vec<Option<ConnId>>,
    declared: Vec<Declared>,
    rounds: BTreeMap<Label, Round>,
    /// Clients that sent DONE, and FINI (a client may close after FINI, so these are
    /// counted rather than read off the open connections).
    done: Vec<bool>,
    finished: Vec<bool>,
    /// Clients that left before FINI in a job that survives their trunk 0's death.
    left: Vec<bool>,
    /// The version majors each client listed in IMPI_C_VERSION.
    majors: Vec<Vec<u32>>,
    phase: Phase,
    events: VecDeque<ServerEvent>,
}

/// Pre-authentication messages are tiny: a stranger cannot make the server buffer more.
const PRE_AUTH_MAX: u32 = 4;

/// Compares keys without an early exit, so timing does not reveal matching bytes.
fn keys_equal(a: u64, b: u64) -> bool {
    let diff = a
        .to_be_bytes()
        .iter()
        .zip(b.to_be_bytes().iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

impl Server {
    pub fn new(config: ServerConfig) -> Result<Server> {
        if config.nclients == 0 || config.nclients > MAX_CLIENTS {
            return Err(Error::OutOfRange {
                what: "impi-server -server (number of clients)",
                value: config.nclients.into(),
                allowed: format!("1..={MAX_CLIENTS}"),
            });
        }
        let n = config.nclients as usize;
        Ok(Server {
            config,
            conns: BTreeMap::new(),
            next_conn: 0,
            by_rank: vec![None; n],
            declared: vec![Declared::default(); n],
            rounds: BTreeMap::new(),
            done: vec![false; n],
            finished: vec![false; n],
            left: vec![false; n],
            majors: vec![Vec::new(); n],
            phase: Phase::Joining,
            events: VecDeque::new(),
        })
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Registers a new connection. Once every client has joined, new connections are
    /// refused at once.
    pub fn accept(&mut self) -> ConnId {
        let id = self.next_conn;
        self.next_conn += 1;
        self.conns.insert(
            id,
            Conn {
                state: ConnState::AwaitAuth,
                inbox: Inbox::default(),
                out: Vec::new(),
            },
        );
        if self.phase != Phase::Joining {
            self.refuse(
                id,
                Error::Unexpected {
                    state: "every client has already joined",
                    got: "a new connection".into(),
                },
            );
        }
        id
    }

    /// Number of connections still open in the state machine's view.
    pub fn open_connections(&self) -> usize {
        self.conns.len()
    }

    pub fn poll_event(&mut self) -> Option<ServerEvent> {
        self.events.pop_front()
    }

    /// Bytes to send on `conn` (empty when none).
    pub fn take_output(&mut self, conn: ConnId) -> Vec<u8> {
        self.conns
            .get_mut(&conn)
            .map(|c| std::mem::take(&mut c.out))
            .unwrap_or_default()
    }

    /// True when `conn` must be closed once its output is sent (refused, or the job has
    /// ended).
    pub fn should_close(&self, conn: ConnId) -> bool {
        match self.conns.get(&conn) {
            None => true,
            Some(c) => {
                c.state == ConnState::Refused
                    || matches!(self.phase, Phase::Failed | Phase::Complete)
            }
        }
    }

    /// Who `conn` is, for messages.
    pub fn describe(&self, conn: ConnId) -> String {
        match self.conns.get(&conn).map(|c| c.state) {
            Some(ConnState::Joined(r) | ConnState::SentDone(r) | ConnState::SentFini(r)) => {
                format!("client {r} (connection {conn})")
            }
            _ => format!("connection {conn} (no rank registered)"),
        }
    }

    /// Ends the job from outside (e.g. the I/O layer's timeout).
    pub fn fail(&mut self, reason: String) {
        if !matches!(self.phase, Phase::Failed | Phase::Complete) {
            self.phase = Phase::Failed;
            self.events.push_back(ServerEvent::JobFailed { reason });
        }
    }

    /// What the job waits for, naming the clients, for a timeout message.
    pub fn waiting_for(&self) -> String {
        // "client 2 has not ..." or "clients 0, 2 have not ...".
        let missing = |pred: &dyn Fn(u32) -> bool| -> String {
            let v: Vec<String> = (0..self.config.nclients)
                .filter(|&r| pred(r))
                .map(|r| r.to_string())
                .collect();
            match v.len() {
                1 => format!("client {} has", v[0]),
                _ => format!("clients {} have", v.join(", ")),
            }
        };
        match self.phase {
            Phase::Joining => format!(
                "{} not registered (IMPI rank)",
                missing(&|r| self.by_rank[r as usize].is_none())
            ),
            Phase::Collecting => {
                for label in Label::LAM_ORDER {
                    if let Some(round) = self.rounds.get(&label) {
                        return format!(
                            "{} not submitted {label}",
                            missing(&|r| round.parts[r as usize].is_none())
                        );
                    }
                }
                format!("{} not sent DONE", missing(&|r| !self.done[r as usize]))
            }
            Phase::Running => format!(
                "{} not sent FINI",
                missing(&|r| !self.finished[r as usize] && !self.left[r as usize])
            ),
            Phase::Complete | Phase::Failed => "nothing".into(),
        }
    }

    /// Feeds bytes received on `conn`.
    pub fn handle_input(&mut self, conn: ConnId, data: &[u8]) {
        if matches!(self.phase, Phase::Failed | Phase::Complete) {
            return;
        }
        match self.conns.get_mut(&conn) {
            Some(c) if c.state != ConnState::Refused => c.inbox.push(data),
            _ => return,
        }
        while let Some(state) = self.conns.get(&conn).map(|c| c.state) {
            if matches!(self.phase, Phase::Failed | Phase::Complete) {
                return;
            }
            match self.step(conn, state) {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => {
                    self.connection_error(conn, state, e);
                    return;
                }
            }
        }
    }

    /// The peer closed `conn`.
    pub fn handle_close(&mut self, conn: ConnId) {
        let Some(c) = self.conns.remove(&conn) else {
            return;
        };
        match c.state {
            ConnState::SentDone(r) if self.phase == Phase::Running && self.may_leave(r) => {
                self.left[r as usize] = true;
                self.events.push_back(ServerEvent::ClientLeft { rank: r });
                self.complete_if_all_ended();
            }
            ConnState::Joined(r) | ConnState::SentDone(r) => {
                let what = if c.state == ConnState::Joined(r) {
                    "during startup"
                } else {
                    "before sending FINI"
                };
                self.fail(format!(
                    "client {r} (connection {conn}) closed its connection {what}; the job cannot continue"
                ));
            }
            _ => {}
        }
    }

    /// Whether client `r` may close its connection before FINI while the job goes on:
    /// it is behind relays that survive a trunk's death ("CXRS" in its IMPI_C_VERSION,
    /// so its connection is trunk 0's, which may die), and every client is crossmpi
    /// (only crossmpi ends resend what a dead relay held).
    fn may_leave(&self, r: u32) -> bool {
        self.majors.iter().all(|m| m.contains(&CROSSMPI_MAJOR))
            && self.majors[r as usize].contains(&SURVIVAL_MAJOR)
    }

    /// Completes the job once every client sent FINI or left, and one sent FINI.
    fn complete_if_all_ended(&mut self) {
        let ended = (0..self.finished.len()).all(|r| self.finished[r] || self.left[r]);
        if !ended {
            return;
        }
        if self.finished.iter().any(|&f| f) {
            self.phase = Phase::Complete;
            self.events.push_back(ServerEvent::JobComplete);
        } else {
            self.fail("every client closed its connection before sending FINI".into());
        }
    }

    fn connection_error(&mut self, conn: ConnId, state: ConnState, e: Error) {
        match state {
            ConnState::AwaitAuth | ConnState::AwaitKey | ConnState::Refused => self.refuse(conn, e),
            _ => {
                let who = self.describe(conn);
                self.refuse(conn, e.clone());
                self.fail(format!("{who}: {e}"));
            }
        }
    }

    fn refuse(&mut self, conn: ConnId, reason: Error) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.state = ConnState::Refused;
            c.inbox = Inbox::default();
        }
        self.events
            .push_back(ServerEvent::Rejected { conn, reason });
    }

    /// Handles the next complete message of `conn`; Ok(false) when none is complete.
    fn step(&mut self, conn: ConnId, state: ConnState) -> Result<bool> {
        let c = self.conns.get_mut(&conn).ok_or(Error::Closed {
            state: "reading a connection",
        })?;
        if state == ConnState::AwaitKey {
            let Some(key) = decode_auth_key(&c.inbox.bytes)? else {
                return Ok(false);
            };
            c.inbox.consume(8);
            let ServerAuth::Key(want) = self.config.auth else {
                return Err(Error::Unexpected {
                    state: "authenticating",
                    got: "a key".into(),
                });
            };
            if !keys_equal(key, want) {
                return Err(Error::Invalid {
                    what: "IMPI_AUTH_KEY",
                    reason: "the client's key does not match the server's".into(),
                });
            }
            c.state = ConnState::AwaitRank;
            self.events.push_back(ServerEvent::Authenticated {
                conn,
                method: AuthMethod::Key,
            });
            return Ok(true);
        }
        let max = match state {
            ConnState::AwaitAuth | ConnState::AwaitRank => PRE_AUTH_MAX,
            _ => self.config.limits.max_msg,
        };
        let Some((msg, used)) = ClientMessage::decode(&c.inbox.bytes, max)? else {
            return Ok(false);
        };
        c.inbox.consume(used);
        self.on_message(conn, state, msg)?;
        Ok(true)
    }

    fn on_message(&mut self, conn: ConnId, state: ConnState, msg: ClientMessage) -> Result<()> {
        match (state, msg) {
            (ConnState::AwaitAuth, ClientMessage::Auth { mask }) => self.on_auth(conn, mask),
            (ConnState::AwaitRank, ClientMessage::Rank(rank)) => self.on_rank(conn, rank),
            (ConnState::Joined(r), ClientMessage::Coll { label, payload }) => {
                self.on_coll(r, label, payload)
            }
            (ConnState::Joined(r), ClientMessage::Done) => self.on_done(conn, r),
            (ConnState::SentDone(r), ClientMessage::Fini) if self.phase == Phase::Running => {
                self.set_state(conn, ConnState::SentFini(r));
                self.events
                    .push_back(ServerEvent::ClientFinished { rank: r });
                self.finished[r as usize] = true;
                self.complete_if_all_ended();
                Ok(())
            }
            (state, msg) => Err(Error::Unexpected {
                state: match state {
                    ConnState::AwaitAuth => "awaiting AUTH",
                    ConnState::AwaitKey => "awaiting the key",
                    ConnState::AwaitRank => "awaiting the IMPI rank",
                    ConnState::Joined(_) => "collecting labels (COLL or DONE expected)",
                    ConnState::SentDone(_) => "awaiting FINI (after DONE)",
                    ConnState::SentFini(_) => "after FINI (nothing more expected)",
                    ConnState::Refused => "refused",
                },
                got: describe_message(&msg),
            }),
        }
    }

    fn set_state(&mut self, conn: ConnId, state: ConnState) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.state = state;
        }
    }

    fn send(&mut self, conn: ConnId, emit: impl FnOnce(&mut Vec<u8>)) {
        if let Some(c) = self.conns.get_mut(&conn) {
            emit(&mut c.out);
        }
    }

    /// Sends `msg` to every client in rank order.
    fn broadcast(&mut self, msg: &ServerMessage) {
        let ids: Vec<ConnId> = self.by_rank.iter().flatten().copied().collect();
        for id in ids {
            self.send(id, |out| msg.emit(out));
        }
    }

    fn on_auth(&mut self, conn: ConnId, mask: u32) -> Result<()> {
        let method = match self.config.auth {
            ServerAuth::None => AuthMethod::None,
            ServerAuth::Key(_) => AuthMethod::Key,
        };
        if mask & method.bit() == 0 {
            let hint = match method {
                AuthMethod::None => "set IMPI_AUTH_NONE in the client's environment",
                AuthMethod::Key => {
                    "set IMPI_AUTH_KEY to the server's key in the client's environment"
                }
            };
            return Err(Error::Invalid {
                what: "IMPI AUTH auth_mask",
                reason: format!(
                    "the client offers 0x{mask:x} but this server requires {method:?} (bit 0x{:x}): {hint}",
                    method.bit()
                ),
            });
        }
        self.send(conn, |out| AuthReply::for_method(method).emit(out));
        match method {
            AuthMethod::None => {
                self.set_state(conn, ConnState::AwaitRank);
                self.events
                    .push_back(ServerEvent::Authenticated { conn, method });
            }
            AuthMethod::Key => self.set_state(conn, ConnState::AwaitKey),
        }
        Ok(())
    }

    fn on_rank(&mut self, conn: ConnId, rank: u32) -> Result<()> {
        let n = self.config.nclients;
        if rank >= n {
            return Err(Error::OutOfRange {
                what: "IMPI IMPI (client rank)",
                value: rank.into(),
                allowed: format!("0..{n}: this server was started with -server {n}"),
            });
        }
        if let Some(other) = self.by_rank[rank as usize] {
            return Err(Error::Invalid {
                what: "IMPI IMPI (client rank)",
                reason: format!("rank {rank} is already registered by connection {other}"),
            });
        }
        self.by_rank[rank as usize] = Some(conn);
        self.set_state(conn, ConnState::Joined(rank));
        self.events
            .push_back(ServerEvent::Registered { conn, rank });
        if self.by_rank.iter().all(Option::is_some) {
            self.broadcast(&ServerMessage::Size(n));
            self.phase = Phase::Collecting;
            self.events.push_back(ServerEvent::AllJoined);
        }
        Ok(())
    }

    fn on_coll(&mut self, rank: u32, label: Label, payload: Vec<u8>) -> Result<()> {
        let declared = self.declared[rank as usize];
        let count = match label.extent() {
            Extent::PerHost => Some(
                declared
                    .nhosts
                    .ok_or_else(|| out_of_order(label, Label::CNhosts))?,
            ),
            Extent::PerProc => Some(
                declared
                    .nprocs
                    .ok_or_else(|| out_of_order(label, Label::CNprocs))?,
            ),
            _ => None,
        };
        label.check_contribution(payload.len(), count)?;
        if matches!(label, Label::CNhosts | Label::CNprocs) {
            let v = u32::from_be_bytes(payload[..4].try_into().unwrap_or([0; 4]));
            if (v as i32) < 1 {
                return Err(Error::OutOfRange {
                    what: label.name(),
                    value: (v as i32).into(),
                    allowed: "1..=2147483647".into(),
                });
            }
            let d = &mut self.declared[rank as usize];
            if label == Label::CNhosts {
                d.nhosts = Some(v);
            } else {
                d.nprocs = Some(v);
            }
        }
        let n = self.config.nclients as usize;
        let max_data = (self.config.limits.max_msg as usize).saturating_sub(8);
        let round = self.rounds.entry(label).or_insert_with(|| Round {
            parts: vec![None; n],
            bytes: 0,
        });
        if round.parts[rank as usize].is_some() {
            return Err(Error::Invalid {
                what: label.name(),
                reason: "submitted twice".into(),
            });
        }
        if round.bytes + payload.len() > max_data {
            return Err(Error::TooLong {
                what: "IMPI COLL reply (all clients' payloads)",
                len: (round.bytes + payload.len()) as u64,
                max: max_data as u64,
            });
        }
        round.bytes += payload.len();
        round.parts[rank as usize] = Some(payload);
        if round.parts.iter().all(Option::is_some) {
            let Some(round) = self.rounds.remove(&label) else {
                return Ok(());
            };
            if label == Label::CVersion {
                self.majors = round
                    .parts
                    .iter()
                    .map(|p| {
                        p.iter()
                            .flat_map(|v| v.chunks_exact(8))
                            .map(|v| u32::from_be_bytes([v[0], v[1], v[2], v[3]]))
                            .collect()
                    })
                    .collect();
            }
            let data: Vec<u8> = round.parts.into_iter().flatten().flatten().collect();
            let len = data.len();
            self.broadcast(&ServerMessage::Coll(CollReply {
                label,
                client_mask: full_mask(self.config.nclients),
                data,
            }));
            self.events
                .push_back(ServerEvent::LabelComplete { label, len });
        }
        Ok(())
    }

    fn on_done(&mut self, conn: ConnId, rank: u32) -> Result<()> {
        self.set_state(conn, ConnState::SentDone(rank));
        self.done[rank as usize] = true;
        if self.done.iter().all(|&d| d) {
            if let Some((label, _)) = self.rounds.iter().next() {
                return Err(Error::Invalid {
                    what: "IMPI DONE",
                    reason: format!("every client sent DONE but {label} is still incomplete"),
                });
            }
            self.broadcast(&ServerMessage::Done { payload_len: 0 });
            self.phase = Phase::Running;
            self.events.push_back(ServerEvent::AllDone);
        }
        Ok(())
    }
}

fn out_of_order(label: Label, needed: Label) -> Error {
    Error::Invalid {
        what: label.name(),
        reason: format!("submitted before this client's {}", needed.name()),
    }
}

fn describe_message(msg: &ClientMessage) -> String {
    match msg {
        ClientMessage::Auth { .. } => "AUTH".into(),
        ClientMessage::Rank(r) => format!("IMPI (rank {r})"),
        ClientMessage::Coll { label, .. } => format!("COLL {label}"),
        ClientMessage::Done => "DONE".into(),
        ClientMessage::Fini => "FINI".into(),
    }
}
