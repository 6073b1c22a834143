//! Dynamic processes: ports (`MPI_Open_port`, `MPI_Comm_accept`, `MPI_Comm_connect`),
//! `MPI_Comm_join` and `MPI_Comm_disconnect`.
//!
//! Two groups of processes (of two jobs, or of one) become one intercommunicator:
//! their roots meet over one TCP connection (a port's listener, or the socket given to
//! join), swap their groups' business cards (`wire::Card`) and agree on a context id
//! with values swapped over that connection and shared inside each group. Processes of
//! the other group that this process does not know yet get the next indices of its
//! process table (after the world ranks, so groups keep naming processes by index) and a
//! TCP connection each: the connecting side's processes connect to the accepting side's
//! dynamic listeners, saying hello with the agreed context id. Shared memory is never
//! used between jobs.

pub mod names;
pub mod spawn;
pub mod wire;

use crate::coll::{allgather_bytes, bcast_bytes};
use crate::comm::{CommId, Group};
use crate::comm_ops::{agree_with, check_intra, install, max_of};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::proto::{Peer, Route};
use crate::route::tcp::TcpRoute;
use crate::runtime::{self, Runtime};
use crossmpi_tcp::wire::Hello;
use crossmpi_tcp::{Connection, Incoming, Listener};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wire::{Card, Decoder, Msg, FAILED};

/// This process's dynamic-process state, part of the runtime.
pub struct Dynamic {
    /// World rank `w` has the key `job_key | w`; the job key's low 32 bits are zero.
    job_key: u64,
    world: u32,
    /// Keys of the processes beyond the world, by index minus the world size.
    keys: Vec<u64>,
    /// Node index given to each (job, node) of another job.
    nodes: BTreeMap<(u64, u64), u32>,
    /// Accepts the connections of other jobs' processes (bound at first use).
    listener: Option<Listener>,
    /// Open ports by name.
    ports: BTreeMap<String, TcpListener>,
    /// Connections that said hello for an establishment this process has not reached
    /// yet: (job tag, rank, connection).
    early: Vec<(u32, u32, Connection)>,
    /// The intercommunicator to the parents of a spawned process.
    parent: Option<CommId>,
}

impl Dynamic {
    /// `job` names the job (a hash of its PMI key space, of an IMPI job's processes, or of
    /// the singleton process).
    pub fn new(job: u64, world: u32) -> Dynamic {
        Dynamic {
            job_key: job & !0xffff_ffff,
            world,
            keys: Vec::new(),
            nodes: BTreeMap::new(),
            listener: None,
            ports: BTreeMap::new(),
            early: Vec::new(),
            parent: None,
        }
    }

    /// A key for process index `w` that is the same in every process that knows it:
    /// it orders the groups of `MPI_Intercomm_merge` alike on both sides.
    pub fn key_of(&self, w: u32) -> u64 {
        if w < self.world {
            self.job_key | u64::from(w)
        } else {
            self.keys[(w - self.world) as usize]
        }
    }

    /// The process index of the process with `key`, if this process knows it.
    pub fn index_of_key(&self, key: u64) -> Option<u32> {
        if key & !0xffff_ffff == self.job_key && ((key & 0xffff_ffff) as u32) < self.world {
            return Some((key & 0xffff_ffff) as u32);
        }
        self.keys
            .iter()
            .position(|&k| k == key)
            .map(|i| self.world + i as u32)
    }
}

/// This machine's addresses for a listener on `port`: interfaces first, loopback last.
fn addresses(port: u16) -> Vec<SocketAddr> {
    let mut ips = crate::bootstrap::interface_addresses();
    ips.push(IpAddr::V4(Ipv4Addr::LOCALHOST));
    ips.into_iter()
        .map(|ip| SocketAddr::new(ip, port))
        .collect()
}

fn port_err(function: &str, arg: &str, value: &str, why: impl std::fmt::Display) -> MpiError {
    MpiError::arg(ErrorClass::Port, function, arg, value, why.to_string())
}

fn node_hash() -> u64 {
    crate::bootstrap::fnv1a(crate::bootstrap::node_identity().as_bytes())
}

/// `MPI_Open_port`: a new listener; its name says where it accepts.
pub fn open_port(function: &str) -> MpiResult<String> {
    let l = TcpListener::bind(("0.0.0.0", 0))
        .and_then(|l| l.set_nonblocking(true).map(|_| l))
        .map_err(|e| MpiError::context(ErrorClass::Port, function, format!("listen: {e}")))?;
    let port = l
        .local_addr()
        .map_err(|e| MpiError::context(ErrorClass::Port, function, e))?
        .port();
    let name = wire::port_name(&addresses(port));
    runtime::with(function, |rt| {
        rt.dynamic.ports.insert(name.clone(), l);
        Ok(name)
    })
}

/// `MPI_Close_port`: nobody can connect through the port any more.
pub fn close_port(function: &str, name: &str) -> MpiResult<()> {
    runtime::with(function, |rt| match rt.dynamic.ports.remove(name) {
        Some(_) => Ok(()),
        None => Err(port_err(
            function,
            "port_name",
            name,
            "not a port this process opened (or already closed)",
        )),
    })
}

/// How this side takes part in an establishment.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    /// Waits on a port; its processes accept the other side's connections.
    Accept,
    /// Reaches a port; its processes connect.
    Connect,
    /// Either end of a joined socket: the side whose root has the lower key connects.
    Join,
}

/// The root's end of the connection between the roots.
struct RootLink {
    stream: TcpStream,
    decoder: Decoder,
}

impl RootLink {
    fn new(stream: TcpStream, timeout: Duration) -> Result<RootLink, String> {
        stream
            .set_nonblocking(false)
            .and_then(|_| stream.set_read_timeout(Some(timeout)))
            .and_then(|_| stream.set_nodelay(true))
            .map_err(|e| e.to_string())?;
        Ok(RootLink {
            stream,
            decoder: Decoder::default(),
        })
    }

    fn send(&mut self, m: &Msg) -> Result<(), String> {
        self.stream
            .write_all(&m.encode())
            .map_err(|e| format!("the other root is gone: {e}"))
    }

    fn recv(&mut self) -> Result<Msg, String> {
        let mut chunk = [0u8; 4096];
        loop {
            if let Some(m) = self.decoder.next_msg()? {
                return Ok(m);
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => return Err("the other root closed the connection".into()),
                Ok(n) => self.decoder.push(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err("the other root did not answer within CROSSMPI_PORT_TIMEOUT".into())
                }
                Err(e) => return Err(format!("the other root is gone: {e}")),
            }
        }
    }

    /// Swaps cards; the side sending first never waits for the other's (large) cards
    /// while its own fill the socket.
    fn swap_cards(&mut self, first: bool, mine: Vec<Card>) -> Result<Vec<Card>, String> {
        let mine = Msg::Cards(mine);
        if first {
            self.send(&mine)?;
        }
        let theirs = match self.recv()? {
            Msg::Cards(c) => c,
            other => return Err(format!("expected the other group's cards, got {other:?}")),
        };
        if !first {
            self.send(&mine)?;
        }
        Ok(theirs)
    }

    fn swap_value(&mut self, v: u64) -> Result<u64, String> {
        self.send(&Msg::Value(v))?;
        match self.recv()? {
            Msg::Value(FAILED) => Err("the other side gave up (see its error)".into()),
            Msg::Value(t) => Ok(t),
            other => Err(format!("expected a value, got {other:?}")),
        }
    }
}

/// `MPI_Comm_accept`; `port` is significant at the root only.
pub fn accept(function: &str, port: &str, comm: CommId, root: usize) -> MpiResult<CommId> {
    establish(
        function,
        comm,
        root,
        Side::Accept,
        ("port_name", port),
        |timeout| {
            let l = runtime::with(function, |rt| {
                Ok(rt.dynamic.ports.get(port).map(|l| l.try_clone()))
            })
            .map_err(|e| e.to_string())?
            .ok_or_else(|| {
                "not an open port of this process (MPI_Open_port opens one)".to_string()
            })?
            .map_err(|e| e.to_string())?;
            let deadline = Instant::now() + timeout;
            loop {
                match l.accept() {
                    Ok((s, _)) => return Ok(s),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(format!("accept: {e}")),
                }
                if Instant::now() > deadline {
                    return Err(format!(
                        "nobody connected within CROSSMPI_PORT_TIMEOUT ({timeout:?})"
                    ));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        },
    )
}

/// `MPI_Comm_connect`; `port` is significant at the root only.
pub fn connect(function: &str, port: &str, comm: CommId, root: usize) -> MpiResult<CommId> {
    establish(
        function,
        comm,
        root,
        Side::Connect,
        ("port_name", port),
        |timeout| {
            let addrs = wire::parse_port(port)?;
            let mut last = String::new();
            for a in &addrs {
                match TcpStream::connect_timeout(a, timeout) {
                    Ok(s) => return Ok(s),
                    Err(e) => last = format!("{a}: {e}"),
                }
            }
            Err(format!(
                "no process accepts there (a closed port, or its job ended): {last}"
            ))
        },
    )
}

/// `MPI_Comm_join` over a connected socket (owned from here on).
pub fn join(function: &str, fd: i32, stream: TcpStream) -> MpiResult<CommId> {
    let world_self = runtime::with(function, |rt| Ok(rt.self_comm))?;
    let mut stream = Some(stream);
    establish(
        function,
        world_self,
        0,
        Side::Join,
        ("fd", &fd.to_string()),
        move |_| {
            stream
                .take()
                .ok_or_else(|| "the socket was used already".to_string())
        },
    )
}

/// `MPI_Comm_disconnect`'s wait: every member is through (a barrier, so messages sent
/// before it were matched), and nothing is left queued for the communicator's processes.
pub fn disconnect(function: &str, comm: CommId) -> MpiResult<()> {
    crate::coll::barrier(function, comm)?;
    let members: Vec<u32> = runtime::with(function, |rt| {
        let c = rt.comm(function, comm)?;
        Ok(c.group
            .members
            .iter()
            .chain(&c.peer_group().members)
            .copied()
            .collect())
    })?;
    runtime::wait_for(function, |rt| {
        members
            .iter()
            .all(|&w| rt.st.peers[w as usize].queue.is_empty())
            .then_some(())
    })
}

/// This process's card, its dynamic listener bound at first use.
fn my_card(function: &str, rt: &mut Runtime) -> MpiResult<Card> {
    if rt.dynamic.listener.is_none() {
        let l = Listener::bind(0)
            .map_err(|e| MpiError::context(ErrorClass::Port, function, format!("listen: {e}")))?;
        rt.dynamic.listener = Some(l);
    }
    let port = rt.dynamic.listener.as_ref().expect("bound above").port();
    Ok(Card {
        key: rt.dynamic.key_of(rt.rank),
        node: node_hash(),
        addrs: addresses(port),
    })
}

/// Every member's card, in rank order (a gather of texts of different lengths).
fn gather_cards(function: &str, comm: CommId, mine: &Card) -> MpiResult<Vec<Card>> {
    let text = mine.encode().into_bytes();
    let longest = max_of(&allgather_bytes(
        function,
        comm,
        &(text.len() as u64).to_le_bytes(),
    )?);
    let mut padded = text;
    padded.resize(longest as usize, 0);
    let all = allgather_bytes(function, comm, &padded)?;
    all.chunks(longest.max(1) as usize)
        .map(|c| {
            let end = c.iter().position(|&b| b == 0).unwrap_or(c.len());
            let s = String::from_utf8_lossy(&c[..end]);
            Card::decode(&s).map_err(|e| MpiError::context(ErrorClass::Intern, function, e))
        })
        .collect()
}

/// Broadcasts `Ok(bytes)` or the root's failure from `root`; members learn which.
fn bcast_outcome(
    function: &str,
    comm: CommId,
    root: usize,
    at_root: Option<Result<Vec<u8>, String>>,
) -> MpiResult<Result<Vec<u8>, String>> {
    let mut len = match &at_root {
        Some(Ok(b)) => b.len() as u64,
        _ => FAILED,
    }
    .to_le_bytes();
    bcast_bytes(function, comm, root, &mut len)?;
    let len = u64::from_le_bytes(len);
    if len == FAILED {
        return Ok(Err(match at_root {
            Some(Err(e)) => e,
            _ => format!("the root (rank {root}) failed (see its error)"),
        }));
    }
    let mut bytes = match at_root {
        Some(Ok(b)) => b,
        _ => vec![0u8; len as usize],
    };
    bcast_bytes(function, comm, root, &mut bytes)?;
    Ok(Ok(bytes))
}

fn establish(
    function: &str,
    comm: CommId,
    root: usize,
    side: Side,
    (arg, value): (&str, &str),
    open: impl FnOnce(Duration) -> Result<TcpStream, String>,
) -> MpiResult<CommId> {
    let fail = |why: String| port_err(function, arg, value, why);
    check_intra(function, comm)?;
    let (rank, group, timeout) = runtime::with(function, |rt| {
        let c = rt.comm(function, comm)?;
        Ok((
            c.rank,
            c.group.clone(),
            Duration::from_secs(rt.cfg.port_timeout_s),
        ))
    })?;
    let mine = runtime::with(function, |rt| my_card(function, rt))?;
    let local_cards = gather_cards(function, comm, &mine)?;
    let local_root_key = local_cards[root].key;

    // The roots meet and swap their groups' cards; the members learn them.
    let mut link = None;
    let at_root = (rank == root).then(|| {
        let stream = open(timeout)?;
        let mut l = RootLink::new(stream, timeout)?;
        let first = side != Side::Accept;
        let theirs = l.swap_cards(first, local_cards.clone())?;
        link = Some(l);
        Ok(Msg::Cards(theirs).encode()[4..].to_vec())
    });
    let remote = match bcast_outcome(function, comm, root, at_root)? {
        Ok(bytes) => match Msg::decode_body(&bytes) {
            Ok(Msg::Cards(c)) if !c.is_empty() => c,
            Ok(_) => return Err(fail("the other side sent no cards".into())),
            Err(e) => return Err(fail(e)),
        },
        Err(e) => return Err(fail(e)),
    };
    let remote_root_key = remote[0].key;
    let connects = match side {
        Side::Accept => false,
        Side::Connect => true,
        Side::Join => local_root_key < remote_root_key,
    };

    // A context id unused on both sides: each side's largest proposal, swapped by the
    // roots. The salt is the same on both sides.
    let link = RefCell::new(link);
    let context = agree_with(function, local_root_key ^ remote_root_key, &|v| {
        let local_max = max_of(&allgather_bytes(function, comm, &v.to_le_bytes())?);
        let at_root = link.borrow_mut().as_mut().map(|l| {
            l.swap_value(local_max)
                .map(|t| t.to_le_bytes().to_vec())
                .inspect_err(|_| {
                    let _ = l.send(&Msg::Value(FAILED));
                })
        });
        match bcast_outcome(function, comm, root, at_root)? {
            Ok(b) => Ok(local_max.max(u64::from_le_bytes(
                b.try_into()
                    .map_err(|_| fail("a value of the wrong size".into()))?,
            ))),
            Err(e) => Err(fail(e)),
        }
    })?;
    drop(link);

    let remote_group =
        connect_processes(function, &remote, rank as u32, connects, context, timeout)
            .map_err(fail)?;
    Ok(runtime::with(function, |rt| {
        install(rt, function, comm, context, group, Some(remote_group))
    })?
    .expect("a member of the local communicator is in the local group"))
}

/// Gives every process of `remote` an index (new ones after the known processes) and,
/// for new ones, a TCP connection; returns the remote group.
fn connect_processes(
    function: &str,
    remote: &[Card],
    my_rank: u32,
    connects: bool,
    context: u64,
    timeout: Duration,
) -> Result<Arc<Group>, String> {
    let here = node_hash();
    let known: Vec<Option<u32>> = runtime::with(function, |rt| {
        Ok(remote
            .iter()
            .map(|c| rt.dynamic.index_of_key(c.key))
            .collect())
    })
    .map_err(|e| e.to_string())?;
    let hello = Hello {
        job: context,
        rank: my_rank,
    };
    let mut conns: Vec<Option<Connection>> = remote.iter().map(|_| None).collect();
    for (i, c) in remote.iter().enumerate() {
        if known[i].is_some() || !connects {
            continue;
        }
        // Same node: loopback first.
        let mut addrs = c.addrs.clone();
        if c.node == here {
            if let Some(p) = addrs.first().map(|a| a.port()) {
                addrs.insert(0, SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), p));
            }
        }
        conns[i] = Some(
            Connection::connect(&addrs, hello, timeout)
                .map_err(|e| format!("cannot connect to process {i} of the other side: {e}"))?,
        );
    }
    if !connects {
        accept_processes(function, &known, context, timeout, &mut conns)?;
    }
    runtime::with(function, |rt| {
        let mut members = Vec::with_capacity(remote.len());
        for (i, c) in remote.iter().enumerate() {
            let w = match known[i] {
                Some(w) => w,
                None => add_process(
                    rt,
                    c,
                    conns[i].take().expect("a connection to every new process"),
                )
                .map_err(|e| MpiError::context(ErrorClass::Port, function, e))?,
            };
            members.push(w);
        }
        Ok(Group::new(members))
    })
    .map_err(|e| e.to_string())
}

/// Waits for a hello from every new process of the other side (`known[i]` is `None`).
fn accept_processes(
    function: &str,
    known: &[Option<u32>],
    context: u64,
    timeout: Duration,
    conns: &mut [Option<Connection>],
) -> Result<(), String> {
    let tag = Hello::job_tag(context);
    let mut missing = known.iter().filter(|k| k.is_none()).count();
    let mut pending: Vec<Connection> = Vec::new();
    let deadline = Instant::now() + timeout;
    while missing > 0 {
        if Instant::now() > deadline {
            return Err(format!("{missing} processes of the other side did not connect within CROSSMPI_PORT_TIMEOUT ({timeout:?})"));
        }
        runtime::with(function, |rt| {
            rt.progress();
            let d = &mut rt.dynamic;
            if let Some(l) = d.listener.as_ref() {
                while let Ok(Some(c)) = l.accept() {
                    pending.push(c);
                }
            }
            for mut c in std::mem::take(&mut pending) {
                match c.poll() {
                    Ok(Incoming::Nothing) => pending.push(c),
                    Ok(Incoming::Hello { rank, job_tag }) => d.early.push((job_tag, rank, c)),
                    other => crate::say!(
                        "crossmpi: {function}: dropped a connection before its hello: {other:?}"
                    ),
                }
            }
            let mut i = 0;
            while i < d.early.len() {
                let (t, r, _) = &d.early[i];
                let r = *r as usize;
                if *t == tag && r < known.len() && known[r].is_none() && conns[r].is_none() {
                    conns[r] = Some(d.early.swap_remove(i).2);
                    missing -= 1;
                } else {
                    i += 1;
                }
            }
            Ok(())
        })
        .map_err(|e| e.to_string())?;
        if missing > 0 {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    // Connections still pending say hello later, to a later establishment.
    runtime::with(function, |rt| {
        for mut c in pending {
            if let Ok(Incoming::Hello { rank, job_tag }) = c.poll() {
                rt.dynamic.early.push((job_tag, rank, c));
            }
        }
        Ok(())
    })
    .map_err(|e| e.to_string())
}

/// Adds a process of another job to the process table, reached by TCP over `conn`.
fn add_process(rt: &mut Runtime, card: &Card, conn: Connection) -> Result<u32, String> {
    let w = rt.st.peers.len() as u32;
    if rt.tcp.is_none() {
        rt.tcp = Some(TcpRoute::empty(rt.cfg.tcp_tuning())?);
    }
    rt.tcp.as_mut().expect("created above").attach(w, conn)?;
    rt.st.peers.push(Peer::new(Route::Tcp, rt.cfg.eager_credit));
    rt.st.pids.resize(rt.st.peers.len(), 0);
    rt.dynamic.keys.push(card.key);
    // Processes of another job are on a node of their own (no shared memory with this
    // job), shared with the processes of their job on the same node.
    let next_node = rt.node_of.iter().copied().max().map_or(0, |n| n + 1);
    let next_node = next_node.max(rt.dynamic.nodes.values().map(|n| n + 1).max().unwrap_or(0));
    let node = *rt
        .dynamic
        .nodes
        .entry((card.key & !0xffff_ffff, card.node))
        .or_insert(next_node);
    Arc::make_mut(&mut rt.node_of).push(node);
    Arc::make_mut(&mut rt.site_of).push(0);
    Arc::make_mut(&mut rt.host_of).push(node);
    Ok(w)
}
