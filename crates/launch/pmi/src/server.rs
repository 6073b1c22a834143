//! The launcher's side of PMI-1, sans-IO: the caller feeds each connection's bytes in,
//! sends what [`Server::poll_transmit`] hands out, and acts on the [`Event`]s (a process
//! initialized, finalized, aborted, asked to spawn, or broke the protocol).
//!
//! One server serves every job of one launcher: the job it started with and the jobs its
//! processes spawn (`mcmd=spawn`), each with its own key space, size, ranks and barrier.
//! The launcher numbers all processes in one sequence (the first job's ranks first, then
//! each spawned job's, see [`Server::add_job`]); events name processes by that number.
//! The name service (`publish_name`, `lookup_name`, `unpublish_name`) is shared by all.

use crate::spawn::{SpawnSegment, MAX_SEGMENT_LINES};
use crate::wire::{one_word, Command, LineBuffer, SetKey};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

/// The limits the server advertises in `cmd=maxes` (Hydra's figures, so that a
/// program tuned for Hydra fits).
pub const KVSNAME_MAX: usize = 256;
pub const KEYLEN_MAX: usize = 64;
pub const VALLEN_MAX: usize = 1024;
/// Entries one rank may put: far above what an MPI library publishes (a few addresses),
/// low enough that a runaway rank cannot exhaust the launcher's memory.
pub const PUTS_PER_RANK_MAX: usize = 4096;
/// Names the name service holds at most, for the same reason.
pub const NAMES_MAX: usize = 4096;

/// What the server knows about one job it serves.
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

/// Something the launcher must act on. `process` is the launcher-wide process number
/// (for the first job, the rank).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Initialized {
        process: usize,
    },
    Finalized {
        process: usize,
    },
    /// The process asked to end the whole job.
    Aborted {
        process: Option<usize>,
        code: i32,
        message: Option<String>,
    },
    /// The process asks for new processes; the launcher starts them (after
    /// [`Server::add_job`]) or not, and answers with [`Server::answer_spawn`].
    Spawn {
        conn: ConnId,
        process: usize,
        segments: Vec<SpawnSegment>,
    },
    /// The connection broke the protocol; the caller must close it (and log `reason`).
    Dropped {
        conn: ConnId,
        process: Option<usize>,
        reason: String,
    },
}

#[derive(Debug, Default)]
struct Connection {
    process: Option<usize>,
    lines: LineBuffer,
    puts: usize,
    /// Lines of an `mcmd=spawn` block being read, and the segments read so far.
    block: Option<Vec<Vec<u8>>>,
    segments: Vec<SpawnSegment>,
}

#[derive(Debug)]
struct Job {
    spec: JobSpec,
    /// Process number of rank 0.
    first: usize,
    kvs: HashMap<String, String>,
    in_barrier: HashSet<usize>,
}

/// The PMI server: connections, the jobs' key-value spaces and barriers, the names.
#[derive(Debug)]
pub struct Server {
    jobs: Vec<Job>,
    /// (job, rank) of each process number.
    processes: Vec<(usize, usize)>,
    process_conn: Vec<Option<ConnId>>,
    conns: HashMap<ConnId, Connection>,
    names: BTreeMap<String, String>,
    outbox: VecDeque<(ConnId, Vec<u8>)>,
    events: VecDeque<Event>,
}

impl Server {
    /// A server for the launcher's first job (process numbers 0..size).
    pub fn new(spec: JobSpec) -> Server {
        let mut s = Server {
            jobs: Vec::new(),
            processes: Vec::new(),
            process_conn: Vec::new(),
            conns: HashMap::new(),
            names: BTreeMap::new(),
            outbox: VecDeque::new(),
            events: VecDeque::new(),
        };
        s.add_job(spec, Vec::new());
        s
    }

    /// Adds a job (a spawned one) whose key space starts with `preput`; returns the
    /// process number of its rank 0 (its ranks take the next numbers).
    pub fn add_job(&mut self, spec: JobSpec, preput: Vec<(String, String)>) -> usize {
        let first = self.processes.len();
        let job = self.jobs.len();
        self.processes.extend((0..spec.size).map(|r| (job, r)));
        self.process_conn.resize(self.processes.len(), None);
        self.jobs.push(Job {
            spec,
            first,
            kvs: preput.into_iter().collect(),
            in_barrier: HashSet::new(),
        });
        first
    }

    /// The job and rank of a process number.
    pub fn job_rank(&self, process: usize) -> Option<(usize, usize)> {
        self.processes.get(process).copied()
    }

    /// Registers a new connection; `process` is known for an inherited socket (PMI_FD
    /// mode) and learned from `cmd=initack` otherwise (PMI_PORT mode, `pmiid` being the
    /// process number).
    pub fn add_connection(&mut self, conn: ConnId, process: Option<usize>) -> Result<(), String> {
        if self.conns.contains_key(&conn) {
            return Err(format!(
                "Server::add_connection: connection {} already exists",
                conn.0
            ));
        }
        if let Some(p) = process {
            self.bind(conn, p)?;
        }
        self.conns.insert(
            conn,
            Connection {
                process,
                ..Connection::default()
            },
        );
        Ok(())
    }

    fn bind(&mut self, conn: ConnId, process: usize) -> Result<(), String> {
        match self.process_conn.get(process) {
            None => Err(format!(
                "process {process} is outside the jobs ({} processes)",
                self.processes.len()
            )),
            Some(Some(_)) => Err(format!("process {process} already has a PMI connection")),
            Some(None) => {
                self.process_conn[process] = Some(conn);
                Ok(())
            }
        }
    }

    /// Forgets a closed connection (its rank's barrier entry stays: a rank that left
    /// cannot take its arrival back, and the launcher ends the job anyway).
    pub fn remove_connection(&mut self, conn: ConnId) {
        if let Some(c) = self.conns.remove(&conn) {
            if let Some(p) = c.process {
                self.process_conn[p] = None;
            }
        }
    }

    /// A value some rank of the process's job published (committed at a fence), if any.
    pub fn value(&self, process: usize, key: &str) -> Option<&str> {
        let (job, _) = self.job_rank(process)?;
        self.jobs[job].kvs.get(key).map(String::as_str)
    }

    /// The process bound to a connection, if known.
    pub fn process_of(&self, conn: ConnId) -> Option<usize> {
        self.conns.get(&conn).and_then(|c| c.process)
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
            let process = c.process;
            let line = match c.lines.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => return,
                Err(e) => return self.drop_conn(conn, process, e.to_string()),
            };
            if let Err(reason) = self.line(conn, process, line) {
                return self.drop_conn(conn, process, reason);
            }
        }
    }

    fn line(&mut self, conn: ConnId, process: Option<usize>, line: Vec<u8>) -> Result<(), String> {
        let Some(c) = self.conns.get_mut(&conn) else {
            return Ok(());
        };
        if let Some(block) = c.block.as_mut() {
            if line.as_slice() != b"endcmd" {
                if block.len() >= MAX_SEGMENT_LINES {
                    return Err(format!(
                        "mcmd=spawn block longer than {MAX_SEGMENT_LINES} lines"
                    ));
                }
                block.push(line);
                return Ok(());
            }
            let block = c.block.take().unwrap_or_default();
            let segment = SpawnSegment::parse(&block).map_err(|e| e.to_string())?;
            return self.segment(conn, process, segment);
        }
        if line.as_slice() == b"mcmd=spawn" {
            if process.is_none() {
                return Err("mcmd=spawn before cmd=initack pmiid=".into());
            }
            c.block = Some(Vec::new());
            return Ok(());
        }
        let cmd = Command::parse(&line).map_err(|e| e.to_string())?;
        self.handle(conn, process, cmd)
    }

    /// Collects the segments of one spawn; the last one makes the request an event.
    fn segment(
        &mut self,
        conn: ConnId,
        process: Option<usize>,
        segment: SpawnSegment,
    ) -> Result<(), String> {
        let (Some(process), Some(c)) = (process, self.conns.get_mut(&conn)) else {
            return Ok(());
        };
        let expected = c.segments.len() + 1;
        if segment.number != expected
            || c.segments.first().is_some_and(|s| s.total != segment.total)
        {
            return Err(format!(
                "mcmd=spawn segment {} of {} where segment {expected} was due",
                segment.number, segment.total
            ));
        }
        let last = segment.number == segment.total;
        c.segments.push(segment);
        if last {
            let segments = std::mem::take(&mut c.segments);
            self.events.push_back(Event::Spawn {
                conn,
                process,
                segments,
            });
        }
        Ok(())
    }

    /// Answers a [`Event::Spawn`]: `Ok` once the processes are started, or why not.
    pub fn answer_spawn(&mut self, conn: ConnId, outcome: Result<(), String>) {
        let (rc, msg) = match outcome {
            Ok(()) => (0, String::new()),
            Err(why) => (-1, one_word(&why)),
        };
        self.reply(conn, Command::SpawnResult { rc, msg });
    }

    fn drop_conn(&mut self, conn: ConnId, process: Option<usize>, reason: String) {
        self.remove_connection(conn);
        self.events.push_back(Event::Dropped {
            conn,
            process,
            reason,
        });
    }

    fn reply(&mut self, conn: ConnId, cmd: Command) {
        let mut out = Vec::new();
        // Replies are built from validated requests and the server's own tokens; a
        // value that cannot be encoded would be a server bug, answered with nothing.
        if cmd.emit(&mut out).is_ok() {
            self.outbox.push_back((conn, out));
        }
    }

    fn handle(&mut self, conn: ConnId, process: Option<usize>, cmd: Command) -> Result<(), String> {
        let process = match (cmd.clone(), process) {
            (Command::InitAck { pmiid }, None) => {
                self.bind(conn, pmiid)?;
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.process = Some(pmiid);
                }
                let (job, rank) = self.processes[pmiid];
                let size = self.jobs[job].spec.size as i64;
                self.reply(conn, Command::InitAckReply);
                for (key, value) in [
                    (SetKey::Size, size),
                    (SetKey::Rank, rank as i64),
                    (SetKey::Debug, 0),
                ] {
                    self.reply(conn, Command::Set { key, value });
                }
                return Ok(());
            }
            (Command::InitAck { .. }, Some(p)) => {
                return Err(format!(
                    "cmd=initack from process {p}, whose connection is already identified"
                ))
            }
            (_, None) => return Err(format!("cmd={} before cmd=initack pmiid=", cmd.name())),
            (_, Some(p)) => p,
        };
        let (job, rank) = self.processes[process];
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
                self.events.push_back(Event::Initialized { process });
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
                let appnum = self.jobs[job].spec.appnums.get(rank).copied().unwrap_or(0);
                self.reply(conn, Command::Appnum { appnum })
            }
            Command::GetMyKvsname => {
                let kvsname = self.jobs[job].spec.kvsname.clone();
                self.reply(conn, Command::MyKvsname { kvsname })
            }
            Command::GetUniverseSize => {
                let size = self.jobs[job].spec.universe_size.map_or(-1, |u| u as i64);
                self.reply(conn, Command::UniverseSize { size })
            }
            Command::Put {
                kvsname,
                key,
                value,
            } => {
                let (rc, msg) = self.put(conn, job, &kvsname, key, value);
                self.reply(conn, Command::PutResult { rc, msg })
            }
            Command::Get { kvsname, key } => {
                let reply = match self.jobs.iter().find(|j| j.spec.kvsname == kvsname) {
                    None => Command::GetResult {
                        rc: -1,
                        msg: "kvs_not_found".into(),
                        value: "unknown".into(),
                    },
                    Some(j) => match j.kvs.get(&key) {
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
                    },
                };
                self.reply(conn, reply)
            }
            Command::BarrierIn => {
                let j = &mut self.jobs[job];
                j.in_barrier.insert(rank);
                if j.in_barrier.len() == j.spec.size {
                    j.in_barrier.clear();
                    let waiting: Vec<ConnId> = self.process_conn[j.first..j.first + j.spec.size]
                        .iter()
                        .flatten()
                        .copied()
                        .collect();
                    for c in waiting {
                        self.reply(c, Command::BarrierOut);
                    }
                }
            }
            Command::Finalize => {
                self.reply(conn, Command::FinalizeAck);
                self.events.push_back(Event::Finalized { process });
            }
            Command::Abort { code, message } => self.events.push_back(Event::Aborted {
                process: Some(process),
                code,
                message,
            }),
            Command::PublishName { service, port } => {
                let (rc, msg) = if self.names.contains_key(&service) {
                    (1, "service_already_published")
                } else if self.names.len() >= NAMES_MAX {
                    (1, "too_many_names")
                } else {
                    self.names.insert(service, port);
                    (0, "success")
                };
                let msg = msg.into();
                self.reply(conn, Command::PublishResult { rc, msg })
            }
            Command::UnpublishName { service } => {
                let (rc, msg) = match self.names.remove(&service) {
                    Some(_) => (0, "success"),
                    None => (1, "service_not_found"),
                };
                let msg = msg.into();
                self.reply(conn, Command::UnpublishResult { rc, msg })
            }
            Command::LookupName { service } => {
                let reply = match self.names.get(&service) {
                    Some(port) => Command::LookupResult {
                        rc: 0,
                        msg: "success".into(),
                        port: Some(port.clone()),
                    },
                    None => Command::LookupResult {
                        rc: 1,
                        msg: "service_not_found".into(),
                        port: None,
                    },
                };
                self.reply(conn, reply)
            }
            other => return Err(format!("cmd={} is a response, not a request", other.name())),
        }
        Ok(())
    }

    fn put(
        &mut self,
        conn: ConnId,
        job: usize,
        kvsname: &str,
        key: String,
        value: String,
    ) -> (i32, String) {
        if kvsname != self.jobs[job].spec.kvsname {
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
        self.jobs[job].kvs.insert(key, value);
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
        assert_eq!(s.poll_event(), Some(Event::Initialized { process: 1 }));
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
        assert_eq!(s.process_of(ConnId(5)), Some(3));
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
                process: None,
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
        assert_eq!(s.poll_event(), Some(Event::Finalized { process: 0 }));
        assert_eq!(
            s.poll_event(),
            Some(Event::Aborted {
                process: Some(1),
                code: 9,
                message: Some("boom".into())
            })
        );
        assert_eq!(replies(&mut s), vec![(0, "cmd=finalize_ack\n".into())]);
        s.receive(ConnId(1), b"hello\n");
        assert!(matches!(
            s.poll_event(),
            Some(Event::Dropped {
                process: Some(1),
                ..
            })
        ));
        s.add_connection(ConnId(2), Some(1)).unwrap();
        s.receive(ConnId(2), &vec![b'x'; 5000]);
        assert!(matches!(
            s.poll_event(),
            Some(Event::Dropped {
                process: Some(1),
                ..
            })
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

    #[test]
    fn spawn_segments_become_one_event_and_a_new_job() {
        let mut s = server(1);
        s.add_connection(ConnId(0), Some(0)).unwrap();
        let seg = |number, command: &str| SpawnSegment {
            nprocs: 2,
            command: command.into(),
            total: 2,
            number,
            args: vec!["x y".into()],
            preput: vec![("PARENT".into(), "port".into())],
            info: Vec::new(),
        };
        let mut bytes = Vec::new();
        seg(1, "a").emit(&mut bytes).unwrap();
        s.receive(ConnId(0), &bytes);
        assert_eq!(s.poll_event(), None);
        bytes.clear();
        seg(2, "b").emit(&mut bytes).unwrap();
        s.receive(ConnId(0), &bytes);
        match s.poll_event() {
            Some(Event::Spawn {
                conn: ConnId(0),
                process: 0,
                segments,
            }) => assert_eq!(segments, vec![seg(1, "a"), seg(2, "b")]),
            e => panic!("unexpected {e:?}"),
        }
        let first = s.add_job(
            JobSpec {
                kvsname: "kvs_c".into(),
                size: 4,
                appnums: vec![0, 0, 1, 1],
                universe_size: Some(1),
            },
            vec![("PARENT".into(), "port".into())],
        );
        assert_eq!(first, 1);
        assert_eq!(s.job_rank(3), Some((1, 2)));
        s.answer_spawn(ConnId(0), Ok(()));
        assert_eq!(replies(&mut s), vec![(0, "cmd=spawn_result rc=0\n".into())]);
        // A child in PMI_PORT mode: its pmiid is its process number.
        s.add_connection(ConnId(7), None).unwrap();
        s.receive(
            ConnId(7),
            b"cmd=initack pmiid=3\ncmd=get_appnum\ncmd=get kvsname=kvs_c key=PARENT\n",
        );
        let got: String = replies(&mut s).into_iter().map(|(_, l)| l).collect();
        assert_eq!(
            got,
            "cmd=initack\ncmd=set size=4\ncmd=set rank=2\ncmd=set debug=0\n\
             cmd=appnum appnum=1\ncmd=get_result rc=0 msg=success value=port\n"
        );
        // The children's barrier is theirs alone.
        s.receive(ConnId(7), b"cmd=barrier_in\n");
        s.receive(ConnId(0), b"cmd=barrier_in\n");
        assert_eq!(replies(&mut s), vec![(0, "cmd=barrier_out\n".into())]);
        s.answer_spawn(ConnId(0), Err("no such program".into()));
        assert_eq!(
            replies(&mut s),
            vec![(0, "cmd=spawn_result rc=-1 msg=no_such_program\n".into())]
        );
    }

    #[test]
    fn spawn_segments_out_of_order_drop_the_connection() {
        let mut s = server(1);
        s.add_connection(ConnId(0), Some(0)).unwrap();
        s.receive(
            ConnId(0),
            b"mcmd=spawn\nnprocs=1\nexecname=a\ntotspawns=2\nspawnssofar=2\nendcmd\n",
        );
        assert!(matches!(s.poll_event(), Some(Event::Dropped { .. })));
    }

    #[test]
    fn names_are_published_looked_up_and_unpublished() {
        let mut s = server(2);
        s.add_connection(ConnId(0), Some(0)).unwrap();
        s.add_connection(ConnId(1), Some(1)).unwrap();
        s.receive(ConnId(0), b"cmd=publish_name service=ocean port=p:1\n");
        s.receive(ConnId(0), b"cmd=publish_name service=ocean port=p:2\n");
        s.receive(ConnId(1), b"cmd=lookup_name service=ocean\n");
        s.receive(ConnId(1), b"cmd=unpublish_name service=ocean\n");
        s.receive(ConnId(1), b"cmd=lookup_name service=ocean\n");
        s.receive(ConnId(1), b"cmd=unpublish_name service=ocean\n");
        let got: Vec<String> = replies(&mut s).into_iter().map(|(_, l)| l).collect();
        assert_eq!(
            got,
            [
                "cmd=publish_result info=ok rc=0 msg=success\n",
                "cmd=publish_result info=fail rc=1 msg=service_already_published\n",
                "cmd=lookup_result port=p:1 info=ok rc=0 msg=success\n",
                "cmd=unpublish_result info=ok rc=0 msg=success\n",
                "cmd=lookup_result info=fail rc=1 msg=service_not_found\n",
                "cmd=unpublish_result info=fail rc=1 msg=service_not_found\n",
            ]
        );
    }
}
