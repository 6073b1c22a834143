//! The launcher's side of PMI-1 for one job, sans-IO: the caller feeds each connection's
//! bytes in, sends what [`Server::poll_transmit`] hands out, and acts on the
//! [`Event`]s (a rank initialized, finalized, aborted, or broke the protocol).

use crate::wire::{Command, LineBuffer, SetKey};
use std::collections::{HashMap, HashSet, VecDeque};

/// The limits the server advertises in `cmd=maxes` (Hydra's figures, so that a
/// program tuned for Hydra fits).
pub const KVSNAME_MAX: usize = 256;
pub const KEYLEN_MAX: usize = 64;
pub const VALLEN_MAX: usize = 1024;
/// Entries one rank may put: far above what an MPI library publishes (a few addresses),
/// low enough that a runaway rank cannot exhaust the launcher's memory.
pub const PUTS_PER_RANK_MAX: usize = 4096;

/// What the server knows about the job it serves.
#[derive(Debug, Clone)]
pub struct JobSpec {
    pub kvsname: String,
    pub size: usize,
    /// The MPMD application number of each rank (`appnums.len() == size`).
    pub appnums: Vec<i32>,
    pub universe_size: Option<usize>,
}

/// Identifies one connection; the caller chooses the numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnId(pub usize);

/// Something the launcher must act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Initialized {
        rank: usize,
    },
    Finalized {
        rank: usize,
    },
    /// The rank asked to end the whole job.
    Aborted {
        rank: Option<usize>,
        code: i32,
        message: Option<String>,
    },
    /// The connection broke the protocol; the caller must close it (and log `reason`).
    Dropped {
        conn: ConnId,
        rank: Option<usize>,
        reason: String,
    },
}

#[derive(Debug, Default)]
struct Connection {
    rank: Option<usize>,
    lines: LineBuffer,
    puts: usize,
}

/// One job's PMI server: connections, the key-value space, the barrier.
#[derive(Debug)]
pub struct Server {
    spec: JobSpec,
    conns: HashMap<ConnId, Connection>,
    rank_conn: Vec<Option<ConnId>>,
    kvs: HashMap<String, String>,
    in_barrier: HashSet<usize>,
    outbox: VecDeque<(ConnId, Vec<u8>)>,
    events: VecDeque<Event>,
}

impl Server {
    pub fn new(spec: JobSpec) -> Server {
        let size = spec.size;
        Server {
            spec,
            conns: HashMap::new(),
            rank_conn: vec![None; size],
            kvs: HashMap::new(),
            in_barrier: HashSet::new(),
            outbox: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    /// Registers a new connection; `rank` is known for an inherited socket (PMI_FD
    /// mode) and learned from `cmd=initack` otherwise (PMI_PORT mode).
    pub fn add_connection(&mut self, conn: ConnId, rank: Option<usize>) -> Result<(), String> {
        if self.conns.contains_key(&conn) {
            return Err(format!(
                "Server::add_connection: connection {} already exists",
                conn.0
            ));
        }
        if let Some(r) = rank {
            self.bind(conn, r)?;
        }
        self.conns.insert(
            conn,
            Connection {
                rank,
                ..Connection::default()
            },
        );
        Ok(())
    }

    fn bind(&mut self, conn: ConnId, rank: usize) -> Result<(), String> {
        match self.rank_conn.get(rank) {
            None => Err(format!(
                "rank {rank} is outside the job of size {}",
                self.spec.size
            )),
            Some(Some(_)) => Err(format!("rank {rank} already has a PMI connection")),
            Some(None) => {
                self.rank_conn[rank] = Some(conn);
                Ok(())
            }
        }
    }

    /// Forgets a closed connection (its rank's barrier entry stays: a rank that left
    /// cannot take its arrival back, and the launcher ends the job anyway).
    pub fn remove_connection(&mut self, conn: ConnId) {
        if let Some(c) = self.conns.remove(&conn) {
            if let Some(r) = c.rank {
                self.rank_conn[r] = None;
            }
        }
    }

    /// The rank bound to a connection, if known.
    /// A value some rank published (committed at a fence), if any.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.kvs.get(key).map(String::as_str)
    }

    pub fn rank_of(&self, conn: ConnId) -> Option<usize> {
        self.conns.get(&conn).and_then(|c| c.rank)
    }

    /// Feeds bytes read from a connection and processes every complete line.
    pub fn receive(&mut self, conn: ConnId, bytes: &[u8]) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        c.lines.push(bytes);
        loop {
            let Some(c) = self.conns.get_mut(&conn) else {
                return;
            };
            let rank = c.rank;
            let line = match c.lines.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => return,
                Err(e) => return self.drop_conn(conn, rank, e.to_string()),
            };
            match Command::parse(&line) {
                Ok(cmd) => {
                    if let Err(reason) = self.handle(conn, rank, cmd) {
                        return self.drop_conn(conn, rank, reason);
                    }
                }
                Err(e) => return self.drop_conn(conn, rank, e.to_string()),
            }
        }
    }

    fn drop_conn(&mut self, conn: ConnId, rank: Option<usize>, reason: String) {
        self.remove_connection(conn);
        self.events.push_back(Event::Dropped { conn, rank, reason });
    }

    fn reply(&mut self, conn: ConnId, cmd: Command) {
        let mut out = Vec::new();
        // Replies are built from validated requests and the server's own tokens; a
        // value that cannot be encoded would be a server bug, answered with nothing.
        if cmd.emit(&mut out).is_ok() {
            self.outbox.push_back((conn, out));
        }
    }

    fn handle(&mut self, conn: ConnId, rank: Option<usize>, cmd: Command) -> Result<(), String> {
        let rank = match (cmd.clone(), rank) {
            (Command::InitAck { pmiid }, None) => {
                self.bind(conn, pmiid)?;
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.rank = Some(pmiid);
                }
                self.reply(conn, Command::InitAckReply);
                let size = self.spec.size as i64;
                self.reply(
                    conn,
                    Command::Set {
                        key: SetKey::Size,
                        value: size,
                    },
                );
                self.reply(
                    conn,
                    Command::Set {
                        key: SetKey::Rank,
                        value: pmiid as i64,
                    },
                );
                self.reply(
                    conn,
                    Command::Set {
                        key: SetKey::Debug,
                        value: 0,
                    },
                );
                return Ok(());
            }
            (Command::InitAck { .. }, Some(r)) => {
                return Err(format!(
                    "cmd=initack from rank {r}, whose connection is already identified"
                ))
            }
            (_, None) => return Err(format!("cmd={} before cmd=initack pmiid=", cmd.name())),
            (_, Some(r)) => r,
        };
        match cmd {
            Command::Init { version, .. } => {
                let rc = if version == 1 { 0 } else { -1 };
                self.reply(
                    conn,
                    Command::ResponseToInit {
                        version: 1,
                        subversion: 1,
                        rc,
                    },
                );
                if rc != 0 {
                    return Err(format!(
                        "cmd=init asks for PMI version {version}; only 1 is served"
                    ));
                }
                self.events.push_back(Event::Initialized { rank });
            }
            Command::GetMaxes => self.reply(
                conn,
                Command::Maxes {
                    kvsname_max: KVSNAME_MAX,
                    keylen_max: KEYLEN_MAX,
                    vallen_max: VALLEN_MAX,
                },
            ),
            Command::GetAppnum => {
                let appnum = self.spec.appnums.get(rank).copied().unwrap_or(0);
                self.reply(conn, Command::Appnum { appnum })
            }
            Command::GetMyKvsname => {
                let kvsname = self.spec.kvsname.clone();
                self.reply(conn, Command::MyKvsname { kvsname })
            }
            Command::GetUniverseSize => {
                let size = self.spec.universe_size.map_or(-1, |u| u as i64);
                self.reply(conn, Command::UniverseSize { size })
            }
            Command::Put {
                kvsname,
                key,
                value,
            } => {
                let (rc, msg) = self.put(conn, &kvsname, key, value);
                self.reply(conn, Command::PutResult { rc, msg })
            }
            Command::Get { kvsname, key } => {
                let reply = if kvsname != self.spec.kvsname {
                    Command::GetResult {
                        rc: -1,
                        msg: "kvs_not_found".into(),
                        value: "unknown".into(),
                    }
                } else {
                    match self.kvs.get(&key) {
                        Some(v) => Command::GetResult {
                            rc: 0,
                            msg: "success".into(),
                            value: v.clone(),
                        },
                        None => Command::GetResult {
                            rc: -1,
                            msg: format!("key_{key}_not_found"),
                            value: "unknown".into(),
                        },
                    }
                };
                self.reply(conn, reply)
            }
            Command::BarrierIn => {
                self.in_barrier.insert(rank);
                if self.in_barrier.len() == self.spec.size {
                    self.in_barrier.clear();
                    let waiting: Vec<ConnId> = self.rank_conn.iter().flatten().copied().collect();
                    for c in waiting {
                        self.reply(c, Command::BarrierOut);
                    }
                }
            }
            Command::Finalize => {
                self.reply(conn, Command::FinalizeAck);
                self.events.push_back(Event::Finalized { rank });
            }
            Command::Abort { code, message } => self.events.push_back(Event::Aborted {
                rank: Some(rank),
                code,
                message,
            }),
            other => return Err(format!("cmd={} is a response, not a request", other.name())),
        }
        Ok(())
    }

    fn put(&mut self, conn: ConnId, kvsname: &str, key: String, value: String) -> (i32, String) {
        if kvsname != self.spec.kvsname {
            return (-1, "kvs_not_found".into());
        }
        if key.len() > KEYLEN_MAX || value.len() > VALLEN_MAX {
            return (-1, "key_or_value_too_long".into());
        }
        let Some(c) = self.conns.get_mut(&conn) else {
            return (-1, "no_connection".into());
        };
        if c.puts >= PUTS_PER_RANK_MAX {
            return (-1, "too_many_puts".into());
        }
        c.puts += 1;
        self.kvs.insert(key, value);
        (0, "success".into())
    }

    /// Bytes to send on a connection, in order.
    pub fn poll_transmit(&mut self) -> Option<(ConnId, Vec<u8>)> {
        self.outbox.pop_front()
    }

    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(size: usize) -> Server {
        Server::new(JobSpec {
            kvsname: "kvs_t".into(),
            size,
            appnums: (0..size as i32).collect(),
            universe_size: Some(size),
        })
    }

    fn replies(s: &mut Server) -> Vec<(usize, String)> {
        std::iter::from_fn(|| s.poll_transmit())
            .map(|(c, b)| (c.0, String::from_utf8(b).unwrap()))
            .collect()
    }

    #[test]
    fn answers_queries_like_hydra() {
        let mut s = server(2);
        s.add_connection(ConnId(0), Some(1)).unwrap();
        s.receive(
            ConnId(0),
            b"cmd=init pmi_version=1 pmi_subversion=1\ncmd=get_maxes\ncmd=get_appnum\n",
        );
        s.receive(ConnId(0), b"cmd=get_my_kvsname\ncmd=get_universe_size\n");
        assert_eq!(
            replies(&mut s),
            vec![
                (
                    0,
                    "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n".into()
                ),
                (
                    0,
                    "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n".into()
                ),
                (0, "cmd=appnum appnum=1\n".into()),
                (0, "cmd=my_kvsname kvsname=kvs_t\n".into()),
                (0, "cmd=universe_size size=2\n".into()),
            ]
        );
        assert_eq!(s.poll_event(), Some(Event::Initialized { rank: 1 }));
        assert_eq!(s.poll_event(), None);
    }

    #[test]
    fn barrier_releases_only_when_every_rank_arrived() {
        let mut s = server(3);
        for r in 0..3 {
            s.add_connection(ConnId(10 + r), Some(r)).unwrap();
        }
        s.receive(
            ConnId(10),
            b"cmd=put kvsname=kvs_t key=a value=1\ncmd=barrier_in\n",
        );
        s.receive(ConnId(11), b"cmd=barrier_in\n");
        assert_eq!(
            replies(&mut s),
            vec![(10, "cmd=put_result rc=0 msg=success\n".into())]
        );
        s.receive(ConnId(12), b"cmd=barrier_in\n");
        let mut got = replies(&mut s);
        got.sort();
        assert_eq!(
            got,
            (10..13)
                .map(|c| (c, "cmd=barrier_out\n".to_string()))
                .collect::<Vec<_>>()
        );
        s.receive(
            ConnId(12),
            b"cmd=get kvsname=kvs_t key=a\ncmd=get kvsname=kvs_t key=zz\n",
        );
        assert_eq!(
            replies(&mut s),
            vec![
                (12, "cmd=get_result rc=0 msg=success value=1\n".into()),
                (
                    12,
                    "cmd=get_result rc=-1 msg=key_zz_not_found value=unknown\n".into()
                ),
            ]
        );
        // A second barrier counts afresh.
        s.receive(ConnId(10), b"cmd=barrier_in\n");
        assert!(replies(&mut s).is_empty());
    }

    #[test]
    fn initack_binds_rank_in_port_mode() {
        let mut s = server(4);
        s.add_connection(ConnId(5), None).unwrap();
        s.receive(ConnId(5), b"cmd=initack pmiid=3\n");
        assert_eq!(
            replies(&mut s)
                .into_iter()
                .map(|(_, l)| l)
                .collect::<String>(),
            "cmd=initack\ncmd=set size=4\ncmd=set rank=3\ncmd=set debug=0\n"
        );
        assert_eq!(s.rank_of(ConnId(5)), Some(3));
        // The same rank cannot be claimed twice.
        s.add_connection(ConnId(6), None).unwrap();
        s.receive(ConnId(6), b"cmd=initack pmiid=3\n");
        assert!(matches!(
            s.poll_event(),
            Some(Event::Dropped {
                conn: ConnId(6),
                ..
            })
        ));
    }

    #[test]
    fn commands_before_initack_drop_the_connection() {
        let mut s = server(2);
        s.add_connection(ConnId(1), None).unwrap();
        s.receive(ConnId(1), b"cmd=barrier_in\n");
        match s.poll_event() {
            Some(Event::Dropped {
                conn: ConnId(1),
                rank: None,
                reason,
            }) => assert!(reason.contains("initack")),
            e => panic!("unexpected {e:?}"),
        }
        // Bytes for a dropped connection are ignored.
        s.receive(ConnId(1), b"cmd=barrier_in\n");
        assert_eq!(s.poll_event(), None);
    }

    #[test]
    fn abort_finalize_and_garbage_become_events() {
        let mut s = server(2);
        s.add_connection(ConnId(0), Some(0)).unwrap();
        s.add_connection(ConnId(1), Some(1)).unwrap();
        s.receive(ConnId(0), b"cmd=finalize\n");
        s.receive(ConnId(1), b"cmd=abort exitcode=9 error_msg=boom\n");
        assert_eq!(s.poll_event(), Some(Event::Finalized { rank: 0 }));
        assert_eq!(
            s.poll_event(),
            Some(Event::Aborted {
                rank: Some(1),
                code: 9,
                message: Some("boom".into())
            })
        );
        assert_eq!(replies(&mut s), vec![(0, "cmd=finalize_ack\n".into())]);
        s.receive(ConnId(1), b"hello\n");
        assert!(matches!(
            s.poll_event(),
            Some(Event::Dropped { rank: Some(1), .. })
        ));
        s.add_connection(ConnId(2), Some(1)).unwrap();
        s.receive(ConnId(2), &vec![b'x'; 5000]);
        assert!(matches!(
            s.poll_event(),
            Some(Event::Dropped { rank: Some(1), .. })
        ));
    }

    #[test]
    fn survives_arbitrary_bytes_from_many_connections() {
        let words: [&[u8]; 12] = [
            b"cmd=",
            b"put ",
            b"kvsname=kvs_t ",
            b"key=a ",
            b"value=1",
            b"\n",
            b"barrier_in",
            b"initack pmiid=1",
            b"get",
            b"abort exitcode=x",
            b" ",
            b"=\xff",
        ];
        let mut s = server(3);
        let mut state = 0x9e37_79b9_u32;
        for step in 0..30_000usize {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let conn = ConnId((state % 5) as usize);
            if step % 97 == 0 {
                s.remove_connection(conn);
                let _ = s.add_connection(conn, (conn.0 < 3).then_some(conn.0));
            }
            s.receive(conn, words[(state >> 8) as usize % words.len()]);
            while s.poll_transmit().is_some() {}
            while s.poll_event().is_some() {}
        }
    }

    #[test]
    fn put_checks_limits_and_kvsname() {
        let mut s = server(1);
        s.add_connection(ConnId(0), Some(0)).unwrap();
        s.receive(ConnId(0), b"cmd=put kvsname=other key=a value=1\n");
        let long = format!(
            "cmd=put kvsname=kvs_t key=a value={}\n",
            "v".repeat(VALLEN_MAX + 1)
        );
        s.receive(ConnId(0), long.as_bytes());
        let got: Vec<String> = replies(&mut s).into_iter().map(|(_, l)| l).collect();
        assert_eq!(got[0], "cmd=put_result rc=-1 msg=kvs_not_found\n");
        assert_eq!(got[1], "cmd=put_result rc=-1 msg=key_or_value_too_long\n");
        assert!(s.add_connection(ConnId(0), Some(0)).is_err());
        assert!(s.add_connection(ConnId(9), Some(1)).is_err());
    }
}
