//! One job from start to end: the poll loop that forwards output, serves PMI and
//! watches for exits, and the teardown (starting the ranks is in `start`, the jobs that
//! ranks spawn in `spawn`).

mod spawn;
mod start;

use crate::output::LineForwarder;
use crate::pmi_socket::PmiSocket;
use crate::sys::{self, signal_name, SignalPipe};
use crossmpi_pmi::server::{ConnId, Event, JobSpec, Server};
use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// How often the loop wakes without input: bounds how late a timeout or the SIGKILL
/// escalation can be (child exits wake it at once through SIGCHLD).
const TICK: Duration = Duration::from_millis(50);
/// How long output is still forwarded after every rank has exited, for pipes that a
/// left-behind grandchild keeps open.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(1);

/// Where and what one process runs. Processes are numbered across jobs: the first
/// job's ranks, then each spawned job's (the PMI server's process numbers).
#[derive(Debug, Clone)]
pub struct RankPlan {
    pub host: String,
    pub local: bool,
    pub appnum: i32,
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Working directory (of local processes).
    pub wdir: PathBuf,
    /// The job (0: the one mpirun started; then spawned ones) and the rank in it.
    pub job: usize,
    pub rank: usize,
}

/// One job's PMI identity.
#[derive(Debug, Clone)]
struct JobInfo {
    kvsname: String,
    size: usize,
}

/// Everything the job needs besides the rank plans.
#[derive(Debug, Clone)]
pub struct JobSettings {
    pub env: Vec<(String, String)>,
    pub wdir: PathBuf,
    pub tag_output: bool,
    pub timeout: Option<Duration>,
    pub launch_agent: Vec<String>,
    pub verbose: bool,
    pub kill_grace: Duration,
    pub mpirun_addr: Option<String>,
}

#[derive(Debug)]
struct RankProc {
    child: Option<Child>,
    status: Option<ExitStatus>,
    initialized: bool,
    finalized: bool,
}

#[derive(Debug)]
struct Output {
    to_stderr: bool,
    file: File,
    forwarder: LineForwarder,
}

struct Job {
    plans: Vec<RankPlan>,
    settings: JobSettings,
    jobs: Vec<JobInfo>,
    server: Server,
    conns: HashMap<ConnId, PmiSocket>,
    next_conn: usize,
    listener: Option<TcpListener>,
    ranks: Vec<RankProc>,
    outputs: Vec<Output>,
    /// The job's exit status once something failed (the first failure wins).
    failure: Option<i32>,
    ending_since: Option<Instant>,
    killed: bool,
}

/// One write per line (`writeln!` writes each piece on its own), so mpirun's lines and
/// the ranks' forwarded lines never split one another.
fn say(message: &str) {
    let _ = std::io::stderr().write_all(format!("mpirun: {message}\n").as_bytes());
}

/// The exit status for `MPI_Abort(code)`: the code modulo 256, or 1 when that is 0, so
/// an abort never looks like success.
fn abort_status(code: i32) -> i32 {
    match code & 0xff {
        0 => 1,
        s => s,
    }
}

/// Runs the job to its end and returns mpirun's exit status.
pub fn run(plans: Vec<RankPlan>, settings: JobSettings) -> i32 {
    let signals =
        match SignalPipe::install(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGCHLD]) {
            Ok(s) => s,
            Err(e) => {
                say(&format!("cannot install signal handlers: {e}"));
                return 1;
            }
        };
    let size = plans.len();
    // Unique per job on this machine: mpirun's pid and start time.
    let started = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    let kvsname = format!(
        "crossmpi_{}_{}",
        std::process::id(),
        started.map_or(0, |d| d.as_micros())
    );
    let appnums = plans.iter().map(|p| p.appnum).collect();
    let server = Server::new(JobSpec {
        kvsname: kvsname.clone(),
        size,
        appnums,
        universe_size: Some(size),
    });
    let mut job = Job {
        plans,
        settings,
        jobs: vec![JobInfo { kvsname, size }],
        server,
        conns: HashMap::new(),
        next_conn: 0,
        listener: None,
        ranks: Vec::new(),
        outputs: Vec::new(),
        failure: None,
        ending_since: None,
        killed: false,
    };
    job.start_processes(0..size);
    let status = job.event_loop(&signals);
    // Ranks killed during their start-up may have left shared-memory files behind.
    for j in &job.jobs {
        crossmpi_shm::remove_job_segments(&j.kvsname);
    }
    status
}

impl Job {
    fn add_conn(&mut self, socket: PmiSocket, process: Option<usize>) -> Result<(), String> {
        let conn = ConnId(self.next_conn);
        self.next_conn += 1;
        socket
            .set_nonblocking(true)
            .map_err(|e| format!("PMI socket: {e}"))?;
        self.server.add_connection(conn, process)?;
        self.conns.insert(conn, socket);
        Ok(())
    }

    /// How messages name a process: its rank, and its job when it was spawned.
    fn name_of(&self, process: usize) -> String {
        let p = &self.plans[process];
        if p.job == 0 {
            format!("rank {}", p.rank)
        } else {
            format!("rank {} of spawned job {}", p.rank, p.job)
        }
    }

    /// Records the first failure and starts the teardown.
    fn fail(&mut self, status: i32, message: &str) {
        if self.failure.is_none() && self.ending_since.is_none() {
            say(&format!("{message}; ending the job"));
            self.failure = Some(status);
        }
        self.begin_ending();
    }

    fn begin_ending(&mut self) {
        if self.ending_since.is_some() {
            return;
        }
        self.ending_since = Some(Instant::now());
        self.signal_live(libc::SIGTERM);
    }

    fn signal_live(&self, signal: libc::c_int) {
        for r in &self.ranks {
            if let (Some(child), None) = (&r.child, r.status) {
                sys::signal_group(child.id() as i32, signal);
            }
        }
    }

    fn all_exited(&self) -> bool {
        self.ranks.len() == self.plans.len()
            && self
                .ranks
                .iter()
                .all(|r| r.child.is_none() || r.status.is_some())
    }

    fn event_loop(&mut self, signals: &SignalPipe) -> i32 {
        let deadline = self.settings.timeout.map(|t| Instant::now() + t);
        let mut exited_at: Option<Instant> = None;
        loop {
            if self.all_exited() {
                let since = *exited_at.get_or_insert_with(Instant::now);
                if self.outputs.is_empty() || since.elapsed() > DRAIN_AFTER_EXIT {
                    break;
                }
            }
            self.wait_and_read(signals);
            for signal in signals.take() {
                if signal == libc::SIGCHLD {
                    continue;
                }
                if self.ending_since.is_some() && !self.killed {
                    // A second Ctrl-C does not wait for the grace period.
                    self.killed = true;
                    self.signal_live(libc::SIGKILL);
                }
                self.fail(128 + signal, &format!("received {}", signal_name(signal)));
            }
            self.pump_server();
            self.reap();
            if let (Some(d), None) = (deadline, self.ending_since) {
                if Instant::now() >= d {
                    let secs = self.settings.timeout.unwrap_or_default().as_secs_f64();
                    self.fail(124, &format!("the job exceeded --timeout {secs} s"));
                }
            }
            if let Some(since) = self.ending_since {
                if !self.killed && since.elapsed() >= self.settings.kill_grace {
                    self.killed = true;
                    self.signal_live(libc::SIGKILL);
                }
            }
        }
        let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
        for o in &mut self.outputs {
            let _ = if o.to_stderr {
                o.forwarder.finish(&mut err)
            } else {
                o.forwarder.finish(&mut out)
            };
        }
        self.failure.unwrap_or(0)
    }

    /// One poll over the signal pipe, the PMI listener and sockets, and the output pipes.
    fn wait_and_read(&mut self, signals: &SignalPipe) {
        let pollin = |fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let mut fds = vec![pollin(signals.fd())];
        if let Some(l) = &self.listener {
            fds.push(pollin(l.as_raw_fd()));
        }
        let conn_ids: Vec<ConnId> = self.conns.keys().copied().collect();
        fds.extend(conn_ids.iter().map(|c| pollin(self.conns[c].fd())));
        let first_output = fds.len();
        fds.extend(self.outputs.iter().map(|o| pollin(o.file.as_raw_fd())));
        if let Err(e) = sys::poll(&mut fds, TICK) {
            say(&format!("poll: {e}"));
            std::thread::sleep(TICK);
            return;
        }
        if self.listener.is_some() && fds[1].revents != 0 {
            self.accept();
        }
        let first_conn = first_output - conn_ids.len();
        for (i, conn) in conn_ids.iter().enumerate() {
            if fds[first_conn + i].revents != 0 {
                self.read_conn(*conn);
            }
        }
        let ready: Vec<bool> = fds[first_output..].iter().map(|p| p.revents != 0).collect();
        let mut buf = vec![0u8; 64 * 1024];
        let mut closed = Vec::new();
        for (i, o) in self.outputs.iter_mut().enumerate() {
            if !ready[i] {
                continue;
            }
            // One read per readiness never blocks, so the pipes can stay blocking.
            let n = o.file.read(&mut buf).unwrap_or(0);
            let r = if o.to_stderr {
                let mut sink = std::io::stderr().lock();
                if n == 0 {
                    o.forwarder.finish(&mut sink)
                } else {
                    o.forwarder.push(&buf[..n], &mut sink)
                }
            } else {
                let mut sink = std::io::stdout().lock();
                if n == 0 {
                    o.forwarder.finish(&mut sink)
                } else {
                    o.forwarder.push(&buf[..n], &mut sink)
                }
            };
            // mpirun's own stdout closing (a pipe to `head`) must not stop the job.
            drop(r);
            if n == 0 {
                closed.push(i);
            }
        }
        for i in closed.into_iter().rev() {
            self.outputs.remove(i);
        }
    }

    fn accept(&mut self) {
        let Some(listener) = &self.listener else {
            return;
        };
        let mut accepted = Vec::new();
        while let Ok((stream, _)) = listener.accept() {
            let _ = stream.set_nodelay(true);
            accepted.push(stream);
        }
        for stream in accepted {
            if let Err(e) = self.add_conn(PmiSocket::Tcp(stream), None) {
                say(&format!("refused a PMI connection: {e}"));
            }
        }
    }

    fn read_conn(&mut self, conn: ConnId) {
        let Some(socket) = self.conns.get_mut(&conn) else {
            return;
        };
        match socket.read_available() {
            Ok(Some(bytes)) => self.server.receive(conn, &bytes),
            Ok(None) | Err(_) => {
                self.server.remove_connection(conn);
                self.conns.remove(&conn);
            }
        }
    }

    fn pump_server(&mut self) {
        loop {
            self.transmit();
            let Some(event) = self.server.poll_event() else {
                return;
            };
            self.on_event(event);
        }
    }

    fn transmit(&mut self) {
        while let Some((conn, bytes)) = self.server.poll_transmit() {
            if let Some(socket) = self.conns.get_mut(&conn) {
                if let Err(e) = socket.send(&bytes) {
                    let who = self
                        .server
                        .process_of(conn)
                        .map_or(format!("connection {}", conn.0), |p| self.name_of(p));
                    say(&format!(
                        "dropped the PMI connection of {who}: cannot send: {e}"
                    ));
                    self.server.remove_connection(conn);
                    self.conns.remove(&conn);
                }
            }
        }
    }

    fn on_event(&mut self, event: Event) {
        match event {
            Event::Initialized { process } => self.ranks[process].initialized = true,
            Event::Finalized { process } => self.ranks[process].finalized = true,
            Event::Aborted {
                process,
                code,
                message,
            } => {
                let who = process.map_or("a rank".to_string(), |p| {
                    format!("{} on {}", self.name_of(p), self.plans[p].host)
                });
                let text = message.map(|m| format!(": {m}")).unwrap_or_default();
                self.fail(
                    abort_status(code),
                    &format!("{who} called MPI_Abort with error code {code}{text}"),
                );
            }
            Event::Spawn {
                conn,
                process,
                segments,
            } => {
                let outcome = self.spawn_job(process, &segments);
                if let Err(e) = &outcome {
                    if self.settings.verbose {
                        say(&format!(
                            "refused the spawn of {}: {e}",
                            self.name_of(process)
                        ));
                    }
                }
                self.server.answer_spawn(conn, outcome);
            }
            Event::Dropped {
                conn,
                process,
                reason,
            } => {
                let who = process.map_or(format!("connection {}", conn.0), |p| self.name_of(p));
                say(&format!("dropped the PMI connection of {who}: {reason}"));
                self.conns.remove(&conn);
            }
        }
    }

    /// How failure messages name rank `rank` (process `pid`). In a multi-cluster (IMPI)
    /// job the ranks publish where this cluster's ranks start in MPI_COMM_WORLD, so the
    /// rank is named as the program knows it.
    fn describe_rank(&self, rank: usize, pid: u32) -> String {
        let host = &self.plans[rank].host;
        let name = match self
            .server
            .value(rank, "cmpi-impi-base")
            .and_then(|b| b.parse::<usize>().ok())
        {
            Some(base) => format!("rank {} (this cluster's rank {rank})", base + rank),
            None => self.name_of(rank),
        };
        if self.plans[rank].local {
            format!("{name} (pid {pid} on {host})")
        } else {
            format!("{name} (launch agent pid {pid} for {host})")
        }
    }

    /// A rank found dead by a signal mpirun did not send while the job was already
    /// ending: often the cause of the failure mpirun saw first (a rank killed on a remote
    /// host is reaped through its launch agent after its peers noticed the closed
    /// connections and exited), so it is named too. The exit status stays the first
    /// failure's.
    fn report_unsent_signal(&self, rank: usize, pid: u32, status: std::process::ExitStatus) {
        let Some(signal) = status.signal() else {
            return;
        };
        let ours = signal == libc::SIGTERM || (signal == libc::SIGKILL && self.killed);
        if !ours {
            say(&format!(
                "{} was killed by {} (found while the job was ending)",
                self.describe_rank(rank, pid),
                signal_name(signal)
            ));
        }
    }

    /// Collects exited ranks; an exit that is not a clean end of a rank ends the job.
    fn reap(&mut self) {
        for rank in 0..self.ranks.len() {
            let r = &mut self.ranks[rank];
            let Some(child) = r.child.as_mut() else {
                continue;
            };
            if r.status.is_some() {
                continue;
            }
            let Ok(Some(status)) = child.try_wait() else {
                continue;
            };
            r.status = Some(status);
            let pid = child.id();
            // A rank that aborted and exited at once: its abort line may still be unread.
            let conns: Vec<ConnId> = self
                .conns
                .keys()
                .copied()
                .filter(|c| self.server.process_of(*c) == Some(rank))
                .collect();
            for conn in conns {
                self.read_conn(conn);
            }
            self.pump_server();
            if self.ending_since.is_some() {
                self.report_unsent_signal(rank, pid, status);
                continue;
            }
            let who = self.describe_rank(rank, pid);
            let r = &self.ranks[rank];
            if let Some(signal) = status.signal() {
                self.fail(
                    128 + signal,
                    &format!("{who} was killed by {}", signal_name(signal)),
                );
            } else if let Some(code) = status.code().filter(|&c| c != 0) {
                self.fail(code, &format!("{who} exited with status {code}"));
            } else if r.initialized && !r.finalized {
                self.fail(
                    1,
                    &format!(
                        "{who} exited with status 0 after MPI_Init without calling MPI_Finalize"
                    ),
                );
            }
        }
    }
}
