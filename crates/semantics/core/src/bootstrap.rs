//! Start-up: learn the job from the launcher (PMI-1) or run as a singleton, exchange
//! business cards, decide each peer's route and set up the shared-memory and TCP routes.

use crate::config::{Config, TransportChoice};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::proto::{Peer, Route};
use crate::route::shm::ShmRoute;
use crate::route::tcp::TcpRoute;
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
    /// Site (cluster) index of every world rank: the IMPI client it belongs to, or what
    /// `CROSSMPI_SITE_OF` declares for a flat job spanning sites; 0 for everyone otherwise.
    pub site_of: Vec<u32>,
    pub pids: Vec<u32>,
    pub shm: Option<ShmRoute>,
    pub tcp: Option<TcpRoute>,
    pub appnum: i32,
    pub universe_size: Option<usize>,
}

fn fnv1a(bytes: &[u8]) -> u64 {
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
fn interface_addresses() -> Vec<IpAddr> {
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
}

impl Card {
    fn encode(&self) -> String {
        let addrs: Vec<String> = self.addrs.iter().map(|a| a.to_string()).collect();
        format!("{:x}|{}|{}", self.node, self.pid, addrs.join(","))
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
        Some(Card { node, pid, addrs })
    }
}

fn pmi_err(e: crossmpi_pmi::Error) -> MpiError {
    MpiError::context(ErrorClass::Other, "MPI_Init", format!("PMI: {e}"))
}

fn io_err(what: &str, e: impl std::fmt::Display) -> MpiError {
    MpiError::context(ErrorClass::Other, "MPI_Init", format!("{what}: {e}"))
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
        site_of: vec![0],
        pids: vec![std::process::id()],
        shm: None,
        tcp: None,
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
    };
    pmi.put(&format!("cmpi-{rank}"), &mine.encode())
        .map_err(pmi_err)?;
    pmi.fence().map_err(pmi_err)?;
    let mut cards = Vec::with_capacity(size as usize);
    for r in 0..size {
        let v = pmi.get(&format!("cmpi-{r}")).map_err(pmi_err)?;
        cards.push(
            Card::decode(&v)
                .ok_or_else(|| io_err("business card", format!("rank {r} published {v:?}")))?,
        );
    }

    let mut nodes: Vec<u64> = Vec::new();
    let node_of: Vec<u32> = cards
        .iter()
        .map(|c| match nodes.iter().position(|&n| n == c.node) {
            Some(i) => i as u32,
            None => {
                nodes.push(c.node);
                (nodes.len() - 1) as u32
            }
        })
        .collect();
    let local_world: Vec<u32> = (0..size)
        .filter(|&r| cards[r as usize].node == node)
        .collect();
    let my_local = local_world.iter().position(|&r| r == rank).unwrap();
    let use_shm = cfg.transport == TransportChoice::Auto && local_world.len() > 1;

    let peers: Vec<Peer> = (0..size)
        .map(|r| {
            let route = if r == rank {
                Route::Local
            } else if use_shm && cards[r as usize].node == node {
                Route::Shm {
                    local: local_world.iter().position(|&x| x == r).unwrap(),
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
        Some(Doorbell::bind(&bell_name(rank)).map_err(|e| io_err("doorbell", e))?)
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

    let tcp_peers: Vec<u32> = (0..size)
        .filter(|&r| peers[r as usize].route == Route::Tcp)
        .collect();
    let tcp = if tcp_peers.is_empty() {
        None
    } else {
        let peers = tcp_peers
            .iter()
            .map(|&r| {
                let card = &cards[r as usize];
                let addrs = if card.node == node {
                    let port = card.addrs.first().map(|a| a.port()).unwrap_or(0);
                    vec![SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)]
                } else {
                    card.addrs.clone()
                };
                (r, addrs)
            })
            .collect();
        let timeout = Duration::from_secs(cfg.connect_timeout_s);
        Some(
            TcpRoute::establish(listener, job, rank, size as usize, peers, timeout)
                .map_err(|e| io_err("TCP", e))?,
        )
    };
    let pids = (0..size as usize)
        .map(|r| {
            if cards[r].node == node {
                cards[r].pid
            } else {
                0
            }
        })
        .collect();
    let appnum = pmi.appnum();
    let universe_size = pmi.universe_size();
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
    Ok(Boot {
        rank,
        size,
        pmi: Some(pmi),
        peers,
        node_of,
        site_of,
        pids,
        shm,
        tcp,
        appnum,
        universe_size,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_round_trip() {
        let c = Card {
            node: 0xabcdef,
            pid: 42,
            addrs: vec![
                "10.0.0.1:5000".parse().unwrap(),
                "192.168.1.2:5000".parse().unwrap(),
            ],
        };
        let d = Card::decode(&c.encode()).unwrap();
        assert_eq!((d.node, d.pid, d.addrs), (c.node, c.pid, c.addrs));
        assert!(Card::decode("zz|1|").is_none());
        assert!(Card::decode("1|x|").is_none());
        assert!(Card::decode("1|2|not-an-address").is_none());
    }

    #[test]
    fn node_identity_names_host_and_namespace() {
        let id = node_identity();
        assert!(id.starts_with(&hostname()));
        assert!(id.rsplit('/').next().unwrap().parse::<u64>().unwrap() > 0);
    }
}
