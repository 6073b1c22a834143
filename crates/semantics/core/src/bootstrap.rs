//! Start-up: learn the job from the launcher (PMI-1) or run as a singleton, exchange
//! business cards, decide each peer's route and set up the shared-memory and TCP routes.

use crate::config::{Config, TransportChoice};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::proto::{Peer, Route};
use crate::route::impi::startup::{self as impi_startup, HostCard, JoinConfig, ServerLink};
use crate::route::impi::translate::Translator;
use crate::route::impi::ImpiRoute;
use crate::route::shm::ShmRoute;
use crate::route::tcp::TcpRoute;
use crate::runtime::ImpiColl;
use crossmpi_impi::flow::FlowParams;
use crossmpi_impi::wire::packet::Proc;
use crossmpi_impi::wire::tables::GlobalTables;
use crossmpi_pmi::Client;
use crossmpi_shm::doorbell::Doorbell;
use crossmpi_shm::{Inbox, InboxLayout, Outbox};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

/// What start-up produced.
pub struct Boot {
    pub rank: u32,
    pub size: u32,
    pub pmi: Option<Client>,
    pub peers: Vec<Peer>,
    /// Node index of every world rank (ranks with equal index share a node).
    pub node_of: Vec<u32>,
    /// Ranks of the job running on this machine, this one included: they share its
    /// processors, whichever cluster they belong to (the progress engine's waiting policy
    /// asks whether they outnumber them).
    pub machine_ranks: usize,
    /// This process's node holds more of its cluster's ranks than the fewest processors
    /// any of them may run on ([`crowded`]). Every rank of the node computes it from the
    /// same cards, so they agree, as a collective algorithm choosing by it requires.
    pub node_crowded: bool,
    /// The ranks of this process's node bound themselves to processors
    /// (`crate::binding`; decided from the cards, as `node_crowded` is, and
    /// `CROSSMPI_BIND`, so alike on the node, whether or not the system call succeeded).
    pub node_bound: bool,
    /// Processors this process could run on at start, before it bound itself to one
    /// (`crate::binding`): what the waiting policy weighs the machine's ranks against.
    pub cpus: usize,
    /// Site (cluster) index of every world rank: the IMPI client it belongs to, or what
    /// `CROSSMPI_SITE_OF` declares for a flat job spanning sites; 0 for everyone otherwise.
    pub site_of: Vec<u32>,
    pub pids: Vec<u32>,
    pub shm: Option<ShmRoute>,
    pub tcp: Option<TcpRoute>,
    pub impi: Option<ImpiJoined>,
    pub appnum: i32,
    pub universe_size: Option<usize>,
}

/// What joining a multi-cluster job produced.
pub struct ImpiJoined {
    pub route: ImpiRoute,
    /// The agent's server connection (PMI rank 0 only).
    pub server: Option<ServerLink>,
    pub coll: ImpiColl,
    /// IMPI host index of every world rank.
    pub host_of: Vec<u32>,
    pub tag_ub: i32,
    /// User data crosses clusters in external32 (see `impi_startup::external32_needed`).
    pub external32: bool,
    /// The job's identity in every cluster (`impi_startup::job_identity`).
    pub job: u64,
}

pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// This process's node: its host name and network namespace. Ranks in different
/// namespaces of one machine are different nodes (they cannot share loopback or doorbells).
pub fn node_identity() -> String {
    let host = hostname();
    let netns = std::fs::metadata("/proc/self/ns/net")
        .map(|m| std::os::unix::fs::MetadataExt::ino(&m))
        .unwrap_or(0);
    format!("{host}/{netns}")
}

pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "localhost".to_string())
}

/// IPv4 addresses of the interfaces that are up, loopback excluded.
pub(crate) fn interface_addresses() -> Vec<IpAddr> {
    let mut out = Vec::new();
    let mut ifap: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills ifap with a list we free below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut ifap) } != 0 {
        return out;
    }
    let mut cur = ifap;
    while !cur.is_null() {
        // SAFETY: cur points into the list getifaddrs returned, which stays valid until
        // freeifaddrs; ifa_addr is checked for null and its family before the cast.
        unsafe {
            let ifa = &*cur;
            let up = ifa.ifa_flags & libc::IFF_UP as u32 != 0;
            let lo = ifa.ifa_flags & libc::IFF_LOOPBACK as u32 != 0;
            if up
                && !lo
                && !ifa.ifa_addr.is_null()
                && (*ifa.ifa_addr).sa_family as i32 == libc::AF_INET
            {
                let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                out.push(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                    sin.sin_addr.s_addr,
                ))));
            }
            cur = ifa.ifa_next;
        }
    }
    // SAFETY: freeing the list getifaddrs allocated, once.
    unsafe { libc::freeifaddrs(ifap) };
    out
}

/// A business card: how other ranks reach this one.
struct Card {
    node: u64,
    pid: u32,
    addrs: Vec<SocketAddr>,
    /// Processors the rank may run on.
    cpus: u32,
}

impl Card {
    fn encode(&self) -> String {
        let addrs: Vec<String> = self.addrs.iter().map(|a| a.to_string()).collect();
        let (node, pid, cpus) = (self.node, self.pid, self.cpus);
        format!("{node:x}|{pid}|{}|{cpus}", addrs.join(","))
    }

    fn decode(s: &str) -> Option<Card> {
        let mut parts = s.split('|');
        let node = u64::from_str_radix(parts.next()?, 16).ok()?;
        let pid = parts.next()?.parse().ok()?;
        let addrs = parts
            .next()?
            .split(',')
            .filter(|a| !a.is_empty())
            .map(|a| a.parse().ok())
            .collect::<Option<Vec<_>>>()?;
        let cpus = parts.next()?.parse().ok()?;
        Some(Card {
            node,
            pid,
            addrs,
            cpus,
        })
    }
}

fn pmi_err(e: crossmpi_pmi::Error) -> MpiError {
    MpiError::context(ErrorClass::Other, "MPI_Init", format!("PMI: {e}"))
}

fn io_err(what: &str, e: impl std::fmt::Display) -> MpiError {
    MpiError::context(ErrorClass::Other, "MPI_Init", format!("{what}: {e}"))
}

/// Whether node `node` holds more ranks (of those `cards` describe) than the fewest
/// processors any of them may run on: its ranks then take turns on the processors.
fn crowded(cards: &[Card], node: u64) -> bool {
    let (ranks, fewest) = node_load(cards, node);
    ranks > fewest
}

/// Whether `node`'s ranks are at least as many as the fewest processors any of them may
/// run on: every processor is taken by one of them (the binding rule,
/// [`crate::binding::Binding::applies`]).
fn full(cards: &[Card], node: u64) -> bool {
    let (ranks, fewest) = node_load(cards, node);
    ranks >= fewest
}

/// The ranks on `node` and the fewest processors any of them may run on (`usize::MAX`
/// on a node without ranks, which is thus neither crowded nor full).
fn node_load(cards: &[Card], node: u64) -> (usize, usize) {
    let on_node = || cards.iter().filter(|c| c.node == node);
    let fewest = on_node()
        .map(|c| c.cpus as usize)
        .min()
        .unwrap_or(usize::MAX);
    (on_node().count(), fewest)
}

pub fn boot(cfg: &Config) -> MpiResult<Boot> {
    match Client::from_env().map_err(pmi_err)? {
        None => Ok(singleton(cfg)),
        Some(pmi) => with_launcher(cfg, pmi),
    }
}

fn singleton(cfg: &Config) -> Boot {
    Boot {
        rank: 0,
        size: 1,
        pmi: None,
        peers: vec![Peer::new(Route::Local, cfg.eager_credit)],
        node_of: vec![0],
        machine_ranks: 1,
        node_crowded: false,
        node_bound: false,
        cpus: crate::progress::available_cpus(),
        site_of: vec![0],
        pids: vec![std::process::id()],
        shm: None,
        tcp: None,
        impi: None,
        appnum: 0,
        universe_size: Some(1),
    }
}

fn with_launcher(cfg: &Config, mut pmi: Client) -> MpiResult<Boot> {
    let rank = pmi.rank() as u32;
    let size = pmi.size() as u32;
    let job = fnv1a(pmi.kvsname().as_bytes());
    let job_name = crossmpi_shm::job_name(pmi.kvsname());
    let inbox_prefix = crossmpi_shm::job_prefix(pmi.kvsname());
    let node = fnv1a(node_identity().as_bytes());

    let listener =
        crossmpi_tcp::Listener::bind(cfg.tcp_port).map_err(|e| io_err("TCP listen", e))?;
    let port = listener.port();
    let mut ips: Vec<IpAddr> = pmi
        .local_ip()
        .into_iter()
        .filter(|ip| !ip.is_loopback())
        .collect();
    for ip in interface_addresses() {
        if !ips.contains(&ip) {
            ips.push(ip);
        }
    }
    let mine = Card {
        node,
        pid: std::process::id(),
        addrs: ips.iter().map(|&ip| SocketAddr::new(ip, port)).collect(),
        cpus: crate::progress::available_cpus() as u32,
    };
    pmi.put(&format!("cmpi-{rank}"), &mine.encode())
        .map_err(pmi_err)?;
    let timeout = Duration::from_secs(cfg.connect_timeout_s);
    let join = JoinConfig::from_env(Duration::from_secs(cfg.impi_join_timeout_s))
        .map_err(|e| io_err("IMPI", e))?;
    let impi_listener = match &join {
        None => None,
        Some(_) => {
            let l = std::net::TcpListener::bind(("0.0.0.0", cfg.impi_port))
                .map_err(|e| io_err("IMPI listen", e))?;
            let card = HostCard {
                addr: impi_startup::advertised_address(&ips).map_err(|e| io_err("IMPI", e))?,
                port: l.local_addr().map_err(|e| io_err("IMPI listen", e))?.port(),
                pid: std::process::id(),
            };
            pmi.put(&format!("cmpi-impi-{rank}"), &card.encode())
                .map_err(pmi_err)?;
            Some(l)
        }
    };
    pmi.fence().map_err(pmi_err)?;
    // The world: this cluster's ranks from `base` on, among `world` ranks of all clusters.
    let impi_job = match &join {
        None => None,
        Some(jc) => Some(join_clusters(&mut pmi, jc, rank, size)?),
    };
    let (base, world) = match &impi_job {
        None => (0, size),
        Some((tables, _)) => (
            tables.first_rank(join.as_ref().unwrap().client as usize),
            tables.nprocs(),
        ),
    };
    let mut cards = Vec::with_capacity(size as usize);
    for r in 0..size {
        let v = pmi.get(&format!("cmpi-{r}")).map_err(pmi_err)?;
        cards.push(
            Card::decode(&v)
                .ok_or_else(|| io_err("business card", format!("rank {r} published {v:?}")))?,
        );
    }

    let mut nodes: Vec<u64> = Vec::new();
    let local_node_of: Vec<u32> = cards
        .iter()
        .map(|c| match nodes.iter().position(|&n| n == c.node) {
            Some(i) => i as u32,
            None => {
                nodes.push(c.node);
                (nodes.len() - 1) as u32
            }
        })
        .collect();
    // This cluster's ranks as world ranks.
    let local_world: Vec<u32> = (0..size)
        .filter(|&r| cards[r as usize].node == node)
        .map(|r| base + r)
        .collect();
    let me = base + rank;
    let my_local = local_world.iter().position(|&w| w == me).unwrap();
    let node_crowded = crowded(&cards, node);
    // Bound before the shared memory is created, so that it is first touched from the
    // processor that uses it.
    let node_bound = cfg.bind.applies(full(&cards, node));
    if node_bound {
        if let Err(e) = crate::binding::bind(my_local, local_world.len()) {
            crate::say!("crossmpi: rank {me} runs unbound: CROSSMPI_BIND: {e}");
        }
    }
    let use_shm = cfg.transport == TransportChoice::Auto && local_world.len() > 1;
    let in_cluster = |w: u32| w >= base && w < base + size;

    let peers: Vec<Peer> = (0..world)
        .map(|w| {
            if !in_cluster(w) {
                // Paced by IMPI's per-pair counters instead of eager credit.
                return Peer::new(Route::Impi, u64::MAX / 2);
            }
            let route = if w == me {
                Route::Local
            } else if use_shm && cards[(w - base) as usize].node == node {
                Route::Shm {
                    local: local_world.iter().position(|&x| x == w).unwrap(),
                }
            } else {
                Route::Tcp
            };
            Peer::new(route, cfg.eager_credit)
        })
        .collect();

    // Shared memory: every local rank creates its inbox, all fence, everyone maps its
    // peers' inboxes, all fence again, and the names are removed. Every rank of the job
    // fences the same number of times, with or without shared memory.
    let layout = InboxLayout {
        senders: local_world.len(),
        cells: cfg.shm_cells,
        cell_bytes: cfg.shm_cell_bytes,
    };
    let inbox_path = |l: usize| format!("{}/{inbox_prefix}{node:x}-{l}", crossmpi_shm::SHM_DIR);
    let bell_name = |w: u32| format!("crossmpi-{job_name}-{job:x}-{w}");
    let inbox = if use_shm {
        let _ = std::fs::remove_file(inbox_path(my_local));
        Some(Inbox::create(&inbox_path(my_local), layout).map_err(|e| io_err("shared memory", e))?)
    } else {
        None
    };
    let doorbell = if use_shm {
        Some(Doorbell::bind(&bell_name(me)).map_err(|e| io_err("doorbell", e))?)
    } else {
        None
    };
    pmi.fence().map_err(pmi_err)?;
    let shm = match (inbox, doorbell) {
        (Some(inbox), Some(doorbell)) => {
            let mut outboxes = Vec::with_capacity(local_world.len());
            for l in 0..local_world.len() {
                outboxes.push(if l == my_local {
                    None
                } else {
                    Some(
                        Outbox::open(&inbox_path(l), layout, my_local)
                            .map_err(|e| io_err("shared memory", e))?,
                    )
                });
            }
            let bells = local_world.iter().map(|&w| bell_name(w)).collect();
            Some(
                ShmRoute::new(
                    inbox,
                    outboxes,
                    local_world.clone(),
                    my_local,
                    doorbell,
                    bells,
                )
                .map_err(|e| io_err("shared memory", e))?,
            )
        }
        _ => None,
    };
    pmi.fence().map_err(pmi_err)?;
    let mut shm = shm;
    if let Some(s) = shm.as_mut() {
        s.unlink();
    }

    let tcp_peers: Vec<u32> = (0..world)
        .filter(|&w| peers[w as usize].route == Route::Tcp)
        .collect();
    let tcp = if tcp_peers.is_empty() {
        None
    } else {
        let peers = tcp_peers
            .iter()
            .map(|&w| {
                let card = &cards[(w - base) as usize];
                let addrs = if card.node == node {
                    let port = card.addrs.first().map(|a| a.port()).unwrap_or(0);
                    vec![SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)]
                } else {
                    card.addrs.clone()
                };
                (w, addrs)
            })
            .collect();
        Some(
            TcpRoute::establish(
                listener,
                job,
                me,
                world as usize,
                peers,
                timeout,
                cfg.tcp_tuning(),
            )
            .map_err(|e| io_err("TCP", e))?,
        )
    };
    let pids = (0..world)
        .map(|w| match cards.get(w.wrapping_sub(base) as usize) {
            Some(c) if in_cluster(w) && c.node == node => c.pid,
            _ => 0,
        })
        .collect();
    let appnum = pmi.appnum();
    let (node_of, machine_ranks, site_of, impi, universe_size) = match impi_job {
        None => {
            let site_of = match &cfg.site_of {
                Some(sites) if sites.len() == size as usize => sites.clone(),
                Some(sites) => {
                    return Err(io_err(
                        "CROSSMPI_SITE_OF",
                        format!("names {} sites for {size} ranks", sites.len()),
                    ))
                }
                None => vec![0; size as usize],
            };
            let machine_ranks = cards.iter().filter(|c| c.node == node).count();
            (
                local_node_of,
                machine_ranks,
                site_of,
                None,
                pmi.universe_size(),
            )
        }
        Some((tables, server)) => {
            let jc = join.as_ref().expect("an IMPI job has a join configuration");
            let layout = WorldLayout::of(&tables);
            // Every cluster must number nodes alike, so node identity comes from the
            // global tables: a process's client and address (P_IPV6).
            let node_of = layout.node_of.clone();
            let addrs: Vec<IpAddr> = tables.procs().map(|p| p.id.to_ip()).collect();
            let machine_ranks = ranks_on_this_machine(&addrs, me, &interface_addresses());
            let my_host = tables.first_host(jc.client as usize) + rank;
            let links = impi_startup::connect_hosts(
                impi_listener.as_ref().expect("an IMPI job listens"),
                &tables,
                jc.client as usize,
                my_host,
                jc.timeout,
            )
            .map_err(|e| io_err("IMPI", e))?;
            let joined = impi_route(
                &tables,
                &layout,
                links,
                me,
                server,
                cfg.impi_external32.clone(),
                jc,
            )?;
            (
                node_of,
                machine_ranks,
                layout.client_of,
                Some(joined),
                Some(world as usize),
            )
        }
    };
    Ok(Boot {
        rank: me,
        size: world,
        pmi: Some(pmi),
        peers,
        node_of,
        machine_ranks,
        node_crowded,
        node_bound,
        cpus: mine.cpus as usize,
        site_of,
        pids,
        shm,
        tcp,
        impi,
        appnum,
        universe_size,
    })
}

/// Client and IMPI host of every world rank, from the global tables.
struct WorldLayout {
    client_of: Vec<u32>,
    host_of: Vec<u32>,
    /// Distinct (client, process address) pairs, numbered in world order.
    node_of: Vec<u32>,
}

impl WorldLayout {
    fn of(tables: &GlobalTables) -> WorldLayout {
        let mut client_of = Vec::new();
        let mut host_of = Vec::new();
        for (h, (client, info)) in tables.hosts().enumerate() {
            for _ in 0..info.nprocs {
                client_of.push(client as u32);
                host_of.push(h as u32);
            }
        }
        let mut seen = Vec::new();
        let node_of = tables
            .procs()
            .zip(&client_of)
            .map(|(p, &c)| match seen.iter().position(|&k| k == (c, p.id)) {
                Some(i) => i as u32,
                None => {
                    seen.push((c, p.id));
                    (seen.len() - 1) as u32
                }
            })
            .collect();
        WorldLayout {
            client_of,
            host_of,
            node_of,
        }
    }
}

/// How many of the ranks at IMPI process addresses `addrs` (world order) run on the
/// machine of rank `me`, whose interfaces have addresses `own`. Other clusters may run on
/// this machine too: a rank counts when its address is `me`'s, one of this machine's, or
/// a loopback address (reachable only from this machine). Shared memory does not tell:
/// it joins only the ranks of one cluster.
fn ranks_on_this_machine(addrs: &[IpAddr], me: u32, own: &[IpAddr]) -> usize {
    let mine = addrs[me as usize];
    addrs
        .iter()
        .filter(|a| **a == mine || a.is_loopback() || own.contains(a))
        .count()
}

/// The cluster's agent (PMI rank 0) joins the IMPI server for every rank of the cluster
/// and shares the global tables through PMI; every rank returns them (the agent also the
/// server connection).
fn join_clusters(
    pmi: &mut Client,
    jc: &JoinConfig,
    rank: u32,
    size: u32,
) -> MpiResult<(GlobalTables, Option<ServerLink>)> {
    let mut server = None;
    if rank == 0 {
        let mut cards = Vec::with_capacity(size as usize);
        for r in 0..size {
            let v = pmi.get(&format!("cmpi-impi-{r}")).map_err(pmi_err)?;
            cards
                .push(HostCard::decode(&v).ok_or_else(|| {
                    io_err("IMPI host card", format!("rank {r} published {v:?}"))
                })?);
        }
        let info = impi_startup::client_info(jc, &cards);
        let (tables, link) = impi_startup::join_server(jc, info).map_err(|e| io_err("IMPI", e))?;
        let text = impi_startup::tables_to_text(&tables);
        let chunks: Vec<&str> = text
            .as_bytes()
            .chunks(PMI_CHUNK)
            .map(|c| std::str::from_utf8(c).expect("hex and digits are ASCII"))
            .collect();
        pmi.put("cmpi-impi-tables", &chunks.len().to_string())
            .map_err(pmi_err)?;
        // For the launcher's messages: where this cluster's ranks start in the world.
        pmi.put(
            "cmpi-impi-base",
            &tables.first_rank(jc.client as usize).to_string(),
        )
        .map_err(pmi_err)?;
        for (i, c) in chunks.iter().enumerate() {
            pmi.put(&format!("cmpi-impi-tables-{i}"), c)
                .map_err(pmi_err)?;
        }
        server = Some(link);
    }
    pmi.fence().map_err(pmi_err)?;
    let n: usize = pmi
        .get("cmpi-impi-tables")
        .map_err(pmi_err)?
        .parse()
        .map_err(|e| io_err("IMPI tables", e))?;
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&pmi.get(&format!("cmpi-impi-tables-{i}")).map_err(pmi_err)?);
    }
    let tables = impi_startup::tables_from_text(&text).map_err(|e| io_err("IMPI tables", e))?;
    let mine = tables
        .clients
        .get(jc.client as usize)
        .map(|c| c.procs.len());
    if mine != Some(size as usize) {
        return Err(io_err(
            "IMPI",
            format!(
                "client {} has {mine:?} processes in the tables, but {size} ranks",
                jc.client
            ),
        ));
    }
    Ok((tables, server))
}

/// Longest piece of the tables in one PMI value (PMI-1 values hold 1024 bytes).
const PMI_CHUNK: usize = 960;

fn impi_route(
    tables: &GlobalTables,
    layout: &WorldLayout,
    links: Vec<crate::route::impi::HostLink>,
    me: u32,
    server: Option<ServerLink>,
    external32_setting: String,
    jc: &JoinConfig,
) -> MpiResult<ImpiJoined> {
    let procs: Vec<Proc> = tables
        .procs()
        .map(|p| Proc {
            hostid: p.id,
            pid: p.pid,
        })
        .collect();
    let my_client = layout.client_of[me as usize];
    let remote: Vec<u32> = (0..procs.len() as u32)
        .filter(|&w| layout.client_of[w as usize] != my_client)
        .collect();
    let link_of = (0..procs.len())
        .map(|w| {
            let host = impi_startup::host_towards(tables, me, w as u32, layout.host_of[w]);
            links
                .iter()
                .position(|l| l.host == host && layout.client_of[w] != my_client)
        })
        .collect();
    let flow = FlowParams::from_tables(tables).map_err(|e| io_err("IMPI flow control", e))?;
    let survivable = tables.survivable();
    let relay_of = links
        .iter()
        .map(|l| {
            let client = impi_startup::relay_client(tables, my_client as usize, l.host);
            client.filter(|_| survivable)
        })
        .collect();
    let all_crossmpi = tables.all_crossmpi();
    let mut tr = Translator::new(me, procs, &remote, tables.max_data_len(), flow, survivable);
    tr.limit_window(jc.window_bytes.into(), flow);
    tr.accept_early = all_crossmpi;
    let route = ImpiRoute::new(links, link_of, relay_of, tr, jc.resend_period, jc.sending)
        .map_err(|e| io_err("IMPI", e))?;
    let external32 = impi_startup::external32_needed(tables, &external32_setting);
    let coll = ImpiColl {
        maxlinear: tables.coll_maxlinear().map_err(|e| io_err("IMPI", e))? as usize,
        xsize: tables.coll_xsize().map_err(|e| io_err("IMPI", e))? as u64,
        all_crossmpi,
        wide_eager: route.tr.max_data,
    };
    Ok(ImpiJoined {
        route,
        server,
        coll,
        external32,
        host_of: layout.host_of.clone(),
        tag_ub: tables.tag_ub(),
        job: impi_startup::job_identity(tables),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_of_every_cluster_on_this_machine_count() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        // Two clusters of two ranks on loopback: all four share this machine.
        let loopback = vec![ip("127.0.0.1"); 4];
        assert_eq!(ranks_on_this_machine(&loopback, 2, &[ip("10.0.0.1")]), 4);
        // A cluster here at 10.0.0.1 (the second address of this machine: 10.0.0.2), one
        // on another machine.
        let two = [
            ip("10.0.0.1"),
            ip("10.0.0.1"),
            ip("10.0.0.9"),
            ip("10.0.0.2"),
        ];
        let own = [ip("10.0.0.1"), ip("10.0.0.2")];
        assert_eq!(ranks_on_this_machine(&two, 0, &own), 3);
        // An address not among the interfaces (NAT) still counts for its own rank.
        assert_eq!(ranks_on_this_machine(&two, 2, &[]), 1);
    }

    #[test]
    fn cards_round_trip() {
        let c = Card {
            node: 0xabcdef,
            pid: 42,
            addrs: vec![
                "10.0.0.1:5000".parse().unwrap(),
                "192.168.1.2:5000".parse().unwrap(),
            ],
            cpus: 2,
        };
        let d = Card::decode(&c.encode()).unwrap();
        assert_eq!(
            (d.node, d.pid, d.addrs, d.cpus),
            (c.node, c.pid, c.addrs, c.cpus)
        );
        assert!(Card::decode("zz|1||2").is_none());
        assert!(Card::decode("1|x||2").is_none());
        assert!(Card::decode("1|2|not-an-address|2").is_none());
        assert!(Card::decode("1|2|").is_none(), "no processor count");
        assert!(Card::decode("1|2||two").is_none());
    }

    #[test]
    fn a_node_is_crowded_when_its_ranks_outnumber_the_fewest_processors_of_any() {
        let card = |node, cpus| Card {
            node,
            pid: 1,
            addrs: vec![],
            cpus,
        };
        let cards = [card(7, 4), card(7, 2), card(9, 1), card(7, 4)];
        // Node 7: three ranks, one of which may run on two processors only.
        assert!(crowded(&cards, 7));
        assert!(!crowded(&cards, 9));
        assert!(!crowded(&[card(7, 4), card(7, 4)], 7));
        assert!(!crowded(&cards, 8), "a node without ranks");
    }

    #[test]
    fn a_node_is_full_when_its_ranks_take_every_processor() {
        let card = |node, cpus| Card {
            node,
            pid: 1,
            addrs: vec![],
            cpus,
        };
        assert!(
            full(&[card(7, 2), card(7, 2)], 7),
            "two ranks, two processors"
        );
        assert!(
            full(&[card(7, 2), card(7, 2), card(7, 2)], 7),
            "crowded is full too"
        );
        assert!(!full(&[card(7, 2)], 7), "one rank leaves a processor free");
        assert!(
            full(&[card(7, 4), card(7, 1)], 7),
            "the fewest processors count"
        );
        assert!(!full(&[card(7, 2)], 8), "a node without ranks");
    }

    #[test]
    fn node_identity_names_host_and_namespace() {
        let id = node_identity();
        assert!(id.starts_with(&hostname()));
        assert!(id.rsplit('/').next().unwrap().parse::<u64>().unwrap() > 0);
    }
}
