//! `MPI_Comm_spawn` on the launcher's side: a process's `mcmd=spawn` request becomes a
//! new job (its own PMI key space, ranks 0..n, appnum = the command's index) whose
//! processes are started and watched like the first job's.
//!
//! Info keys honoured per command: `host` (a host list as for `--host`, placing the
//! command's processes; default: this machine), `wdir` (working directory; default
//! mpirun's `-wdir`), `path` (a colon-separated list of directories searched for the
//! command before mpirun's PATH). Other keys are ignored, as MPI allows.

use super::{Job, JobInfo, RankPlan};
use crate::hosts::{self, HostSpec};
use crate::launch::resolve_program;
use crossmpi_pmi::server::JobSpec;
use crossmpi_pmi::spawn::SpawnSegment;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Key-value pairs a new job's key space starts with.
pub type Preput = Vec<(String, String)>;

/// The processes of a spawn request, numbered from rank 0 of the new job `job`, and the
/// key-value pairs its key space starts with; or why the request cannot be served.
pub fn plan_spawn(
    segments: &[SpawnSegment],
    job: usize,
    default_wdir: &Path,
    path_var: Option<&str>,
    hostname: &str,
) -> Result<(Vec<RankPlan>, Preput), String> {
    let mut plans = Vec::new();
    let mut preput = Vec::new();
    for (appnum, seg) in segments.iter().enumerate() {
        let info = |key: &str| {
            seg.info
                .iter()
                .rev()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        if seg.nprocs == 0 {
            return Err(format!("command {:?}: nprocs=0", seg.command));
        }
        let wdir = match info("wdir") {
            Some(d) => {
                let d = default_wdir.join(d);
                if !d.is_dir() {
                    return Err(format!("info wdir={:?} is not a directory", d.display()));
                }
                d
            }
            None => default_wdir.to_path_buf(),
        };
        let search = match (info("path"), path_var) {
            (Some(p), Some(v)) => Some(format!("{p}:{v}")),
            (Some(p), None) => Some(p.to_string()),
            (None, v) => v.map(str::to_string),
        };
        let program = resolve_program(&seg.command, &wdir, search.as_deref());
        let hosts: Vec<HostSpec> = match info("host") {
            Some(h) => hosts::parse_host_list(h).map_err(|e| format!("info host={h:?}: {e}"))?,
            None => Vec::new(),
        };
        for host in hosts::place(seg.nprocs, &hosts) {
            let local = hosts::is_local(&host, hostname);
            if local && !is_executable(&program) {
                return Err(format!(
                    "command {:?}: {} is not an executable file",
                    seg.command,
                    program.display()
                ));
            }
            plans.push(RankPlan {
                host,
                local,
                appnum: appnum as i32,
                program: program.clone(),
                args: seg.args.clone(),
                wdir: wdir.clone(),
                job,
                rank: plans.len(),
            });
        }
        for kv in &seg.preput {
            if !preput.contains(kv) {
                preput.push(kv.clone());
            }
        }
    }
    Ok((plans, preput))
}

fn is_executable(p: &PathBuf) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

impl Job {
    /// Starts the processes `segments` ask for as a new job; `Err` says why not (the
    /// requesting process gets it as the spawn's failure; the job goes on).
    pub(super) fn spawn_job(
        &mut self,
        parent: usize,
        segments: &[SpawnSegment],
    ) -> Result<(), String> {
        if self.ending_since.is_some() {
            return Err("the job is ending".into());
        }
        let job = self.jobs.len();
        let (plans, preput) = plan_spawn(
            segments,
            job,
            &self.settings.wdir,
            std::env::var("PATH").ok().as_deref(),
            &hosts::local_hostname(),
        )?;
        let size = plans.len();
        let kvsname = format!("{}_spawn{job}", self.jobs[0].kvsname);
        let first = self.server.add_job(
            JobSpec {
                kvsname: kvsname.clone(),
                size,
                appnums: plans.iter().map(|p| p.appnum).collect(),
                universe_size: Some(self.jobs[0].size),
            },
            preput,
        );
        debug_assert_eq!(first, self.plans.len());
        if self.settings.verbose {
            for (i, p) in plans.iter().enumerate() {
                super::say(&format!(
                    "{} spawns rank {i} of job {job} -> {}, app {}: {}",
                    self.name_of(parent),
                    p.host,
                    p.appnum,
                    p.program.display()
                ));
            }
        }
        self.jobs.push(JobInfo { kvsname, size });
        self.plans.extend(plans);
        self.start_processes(first..first + size);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(command: &str, nprocs: usize, info: &[(&str, &str)]) -> SpawnSegment {
        SpawnSegment {
            nprocs,
            command: command.into(),
            total: 1,
            number: 1,
            args: vec!["a".into()],
            preput: vec![("K".into(), "V".into())],
            info: info
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn plans_commands_with_appnums_hosts_and_info() {
        let (plans, preput) = plan_spawn(
            &[
                seg("sh", 2, &[]),
                seg("true", 1, &[("host", "nodeb:2"), ("wdir", "/tmp")]),
            ],
            3,
            Path::new("/"),
            Some("/bin:/usr/bin"),
            "nodea",
        )
        .unwrap();
        assert_eq!(preput, vec![("K".to_string(), "V".to_string())]);
        let summary: Vec<(usize, i32, bool, &str, usize)> = plans
            .iter()
            .map(|p| (p.rank, p.appnum, p.local, p.host.as_str(), p.job))
            .collect();
        assert_eq!(
            summary,
            [
                (0, 0, true, "localhost", 3),
                (1, 0, true, "localhost", 3),
                (2, 1, false, "nodeb", 3)
            ]
        );
        assert_eq!(plans[2].wdir, Path::new("/tmp"));
        assert!(plans[0].program.ends_with("sh"));
    }

    #[test]
    fn refuses_what_cannot_start() {
        let plan = |s: SpawnSegment| plan_spawn(&[s], 1, Path::new("/"), Some("/bin"), "x");
        let e = plan(seg("no-such-program-x", 1, &[])).unwrap_err();
        assert!(e.contains("no-such-program-x"), "{e}");
        let e = plan(seg("sh", 1, &[("wdir", "/no/such/dir")])).unwrap_err();
        assert!(e.contains("wdir"), "{e}");
        let e = plan(seg("sh", 1, &[("host", "a:x")])).unwrap_err();
        assert!(e.contains("host"), "{e}");
        assert!(plan(seg("sh", 0, &[])).is_err());
        // `path` is searched before PATH.
        let (p, _) = plan_spawn(
            &[seg("sh", 1, &[("path", "/usr/bin")])],
            1,
            Path::new("/"),
            Some("/bin"),
            "x",
        )
        .unwrap();
        assert_eq!(p[0].program, Path::new("/usr/bin/sh"));
    }
}
