//! Starting the ranks: local ones by fork/exec with an inherited PMI socket, the
//! others through the launch agent with a TCP address to connect back to.

use super::{say, Job, Output, RankProc};
use crate::launch::{forwarded_to_remote, lib_dir, pmi_address_for, prepend_path, remote_argv};
use crate::output::LineForwarder;
use crate::pmi_socket::PmiSocket;
use crate::sys;
use std::fs::File;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

impl Job {
    /// Starts the planned processes `range` (the first job's, or a spawned job's).
    pub(super) fn start_processes(&mut self, range: std::ops::Range<usize>) {
        if self.listener.is_none() && self.plans[range.clone()].iter().any(|p| !p.local) {
            let bound = TcpListener::bind("[::]:0").or_else(|_| TcpListener::bind("0.0.0.0:0"));
            match bound.and_then(|l| l.set_nonblocking(true).map(|_| l)) {
                Ok(l) => self.listener = Some(l),
                Err(e) => return self.fail(1, &format!("cannot listen for PMI connections: {e}")),
            }
        }
        for rank in range {
            if self.failure.is_some() {
                self.ranks.push(RankProc {
                    child: None,
                    status: None,
                    initialized: false,
                    finalized: false,
                });
                continue;
            }
            let child = match self.spawn(rank) {
                Ok(child) => Some(child),
                Err((status, why)) => {
                    self.fail(status, &why);
                    None
                }
            };
            self.ranks.push(RankProc {
                child,
                status: None,
                initialized: false,
                finalized: false,
            });
        }
    }

    /// The variables every process gets on top of what it inherits.
    fn common_env(&self, process: usize, base_ld_path: Option<String>) -> Vec<(String, String)> {
        let plan = &self.plans[process];
        let job = &self.jobs[plan.job];
        let mut env = self.settings.env.clone();
        let user_ld = self
            .settings
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == "LD_LIBRARY_PATH")
            .map(|(_, v)| v.clone());
        if let Some(lib) = lib_dir() {
            env.push((
                "LD_LIBRARY_PATH".into(),
                prepend_path(&lib, user_ld.or(base_ld_path).as_deref()),
            ));
        }
        env.push(("CROSSMPI_LAUNCHER".into(), "mpirun".into()));
        env.push(("PMI_RANK".into(), plan.rank.to_string()));
        env.push(("PMI_SIZE".into(), job.size.to_string()));
        env.push(("PMI_JOBID".into(), job.kvsname.clone()));
        env
    }

    fn spawn(&mut self, rank: usize) -> Result<Child, (i32, String)> {
        let plan = self.plans[rank].clone();
        let mut cmd;
        let mut child_end = None;
        if plan.local {
            let (ours, theirs) =
                UnixStream::pair().map_err(|e| (1, format!("socketpair for rank {rank}: {e}")))?;
            let fd = theirs.as_raw_fd();
            cmd = Command::new(&plan.program);
            cmd.args(&plan.args).current_dir(&plan.wdir);
            cmd.env_remove("PMI_PORT").env_remove("PMI_ID");
            cmd.envs(self.common_env(rank, std::env::var("LD_LIBRARY_PATH").ok()));
            cmd.env("PMI_FD", fd.to_string());
            // SAFETY: the closure only calls fcntl (async-signal-safe) on a descriptor
            // number captured by value; it allocates nothing and takes no lock.
            unsafe { cmd.pre_exec(move || sys::keep_across_exec(fd)) };
            self.add_conn(PmiSocket::Unix(ours), Some(rank))
                .map_err(|e| (1, e))?;
            child_end = Some(theirs);
        } else {
            let listener = self
                .listener
                .as_ref()
                .ok_or((1, "no PMI listener".to_string()))?;
            let ip: IpAddr = pmi_address_for(&plan.host, self.settings.mpirun_addr.as_deref())
                .map_err(|e| {
                    (
                        1,
                        format!("{} on host {}: {e}", self.name_of(rank), plan.host),
                    )
                })?;
            let port = listener
                .local_addr()
                .map_err(|e| (1, e.to_string()))?
                .port();
            let mut env = forwarded_to_remote(std::env::vars());
            env.extend(self.common_env(rank, std::env::var("LD_LIBRARY_PATH").ok()));
            env.push(("PMI_PORT".into(), SocketAddr::new(ip, port).to_string()));
            env.push(("PMI_ID".into(), rank.to_string()));
            let argv = remote_argv(
                &self.settings.launch_agent,
                &plan.host,
                &env,
                &plan.program,
                &plan.args,
            );
            cmd = Command::new(&argv[0]);
            cmd.args(&argv[1..]).current_dir(&self.settings.wdir);
        }
        cmd.process_group(0)
            .stdin(if rank == 0 {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if self.settings.verbose {
            say(&format!("{} on {}: {cmd:?}", self.name_of(rank), plan.host));
        }
        let spawned = cmd.spawn();
        drop(child_end);
        let mut child = spawned.map_err(|e| {
            let status = if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            };
            let what = if plan.local {
                plan.program.display().to_string()
            } else {
                self.settings.launch_agent[0].clone()
            };
            (
                status,
                format!(
                    "cannot start {} on {}: {what}: {e}",
                    self.name_of(rank),
                    plan.host
                ),
            )
        })?;
        let stdin = child
            .stdin
            .take()
            .filter(|_| sys::stdin_readable_without_stopping());
        if let Some(mut stdin) = stdin {
            // Rank 0's stdin is fed from mpirun's; a thread keeps a slow reader from
            // stalling the loop. It ends when either side closes.
            std::thread::spawn(move || std::io::copy(&mut std::io::stdin().lock(), &mut stdin));
        }
        let tag = self.settings.tag_output;
        for (fd, to_stderr) in [
            (child.stdout.take().map(OwnedFd::from), false),
            (child.stderr.take().map(OwnedFd::from), true),
        ] {
            if let Some(fd) = fd {
                self.outputs.push(Output {
                    to_stderr,
                    file: File::from(fd),
                    forwarder: LineForwarder::new(rank, tag),
                });
            }
        }
        Ok(child)
    }
}
