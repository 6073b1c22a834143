//! The `mpirun`/`mpiexec` launcher: reads the command line, places ranks on hosts,
//! starts them (fork/exec here, a launch agent such as ssh elsewhere), serves them PMI-1,
//! forwards their output line by line and ends the whole job when one rank fails.
//! It knows nothing of MPI semantics. See docs/launcher.md.

mod hosts;
mod job;
mod launch;
mod options;
mod output;
mod pmi_socket;
mod sys;

use job::{JobSettings, RankPlan};
use options::{Options, USAGE};
use std::time::Duration;

/// Default of `CROSSMPI_KILL_GRACE_MS`: how long ranks get between SIGTERM and SIGKILL
/// at teardown; long enough to flush output, short enough that a failed job ends within
/// a second.
const KILL_GRACE_MS_DEFAULT: u64 = 500;

fn kill_grace() -> Result<Duration, String> {
    match std::env::var("CROSSMPI_KILL_GRACE_MS") {
        Err(_) => Ok(Duration::from_millis(KILL_GRACE_MS_DEFAULT)),
        Ok(v) => v.trim().parse().map(Duration::from_millis).map_err(|_| {
            format!("mpirun: CROSSMPI_KILL_GRACE_MS={v:?} is not a whole number of milliseconds")
        }),
    }
}

fn plan(options: &Options, wdir: &std::path::Path) -> Vec<RankPlan> {
    let hostname = hosts::local_hostname();
    let path_var = std::env::var("PATH").ok();
    let single = options.apps.len() == 1;
    let default_np = if single {
        hosts::total_slots(&options.hosts)
    } else {
        1
    };
    let mut plans = Vec::new();
    for (appnum, app) in options.apps.iter().enumerate() {
        let program = launch::resolve_program(&app.argv[0], wdir, path_var.as_deref());
        for _ in 0..app.np.unwrap_or(default_np) {
            plans.push(RankPlan {
                host: String::new(),
                local: true,
                appnum: appnum as i32,
                program: program.clone(),
                args: app.argv[1..].to_vec(),
                wdir: wdir.to_path_buf(),
                job: 0,
                rank: plans.len(),
            });
        }
    }
    let placement = hosts::place(plans.len(), &options.hosts);
    for (p, host) in plans.iter_mut().zip(placement) {
        p.local = hosts::is_local(&host, &hostname);
        p.host = host;
    }
    plans
}

fn settings(options: &Options) -> Result<JobSettings, String> {
    let wdir = match &options.wdir {
        Some(d) => {
            let d =
                std::path::absolute(d).map_err(|e| format!("mpirun: option -wdir: {d:?}: {e}"))?;
            if !d.is_dir() {
                return Err(format!(
                    "mpirun: option -wdir: {:?} is not a directory",
                    d.display()
                ));
            }
            d
        }
        None => std::env::current_dir().map_err(|e| format!("mpirun: current directory: {e}"))?,
    };
    Ok(JobSettings {
        env: options.env.clone(),
        wdir,
        tag_output: options.tag_output,
        timeout: options.timeout,
        launch_agent: options.launch_agent.clone(),
        verbose: options.verbose,
        kill_grace: kill_grace()?,
        mpirun_addr: std::env::var("CROSSMPI_MPIRUN_ADDR").ok(),
    })
}

/// Entry point of `mpirun` with its arguments (argv[0] excluded); returns the exit status.
pub fn main(args: Vec<String>) -> i32 {
    let options = match Options::parse(&args, |v| std::env::var(v).ok()) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    if options.help {
        println!("{USAGE}");
        return 0;
    }
    let settings = match settings(&options) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let plans = plan(&options, &settings.wdir);
    if settings.verbose {
        for (rank, p) in plans.iter().enumerate() {
            let place = if p.local { "local" } else { "remote" };
            eprintln!(
                "mpirun: rank {rank} -> {} ({place}), app {}: {}",
                p.host,
                p.appnum,
                p.program.display()
            );
        }
    }
    job::run(plans, settings)
}
