//! mpirun end to end: the `mpirun-dev` binary (this crate's `main`) starting the
//! `pmi-probe` test program, which bootstraps through crossmpi_pmi::Client.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const MPIRUN: &str = env!("CARGO_BIN_EXE_mpirun-dev");
const PROBE: &str = env!("CARGO_BIN_EXE_pmi-probe");

fn mpirun(args: &[&str]) -> Output {
    mpirun_with(args, |_| {})
}

fn mpirun_with(args: &[&str], tune: impl FnOnce(&mut Command)) -> Output {
    let mut cmd = Command::new(MPIRUN);
    cmd.args(args)
        .stdin(Stdio::null())
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT");
    tune(&mut cmd);
    cmd.output().expect("run mpirun-dev")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn stdout_lines(o: &Output) -> Vec<String> {
    text(&o.stdout).lines().map(str::to_string).collect()
}

/// A scratch directory unique to this test process and `name`.
fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("crossmpi-mpirun-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn pid_alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

fn hung_pids(o: &Output) -> Vec<u32> {
    stdout_lines(o)
        .iter()
        .filter_map(|l| l.split(": pid ").nth(1))
        .map(|p| p.parse().unwrap())
        .collect()
}

#[test]
fn one_to_four_ranks_exchange_keys() {
    for n in 1..=4 {
        let o = mpirun(&["-n", &n.to_string(), PROBE]);
        assert!(o.status.success(), "n={n}: {}", text(&o.stderr));
        let mut lines = stdout_lines(&o);
        lines.sort();
        let want: Vec<String> = (0..n)
            .map(|r| format!("rank {r} of {n}: exchange ok, appnum 0"))
            .collect();
        assert_eq!(lines, want);
    }
}

#[test]
fn hosts_slots_and_hostfile_place_ranks_in_order() {
    let o = mpirun(&["-v", "-n", "4", "--host", "localhost:2,127.0.0.1", PROBE]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    for (rank, host) in [
        (0, "localhost"),
        (1, "localhost"),
        (2, "127.0.0.1"),
        (3, "localhost"),
    ] {
        assert!(
            err.contains(&format!("rank {rank} -> {host} (local)")),
            "{err}"
        );
    }
    let file = scratch("hostfile").join("hosts");
    std::fs::write(
        &file,
        "# two hosts\nlocalhost slots=2\n127.0.0.1  # one slot\n",
    )
    .unwrap();
    let o = mpirun(&["-v", "--hostfile", file.to_str().unwrap(), PROBE]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(stdout_lines(&o).len(), 3, "no -n: as many ranks as slots");
    assert!(text(&o.stderr).contains("rank 2 -> 127.0.0.1 (local)"));
}

#[test]
fn environment_and_working_directory() {
    let wdir = scratch("wdir");
    let o = mpirun_with(
        &[
            "-n",
            "2",
            "-x",
            "A_VAR=one",
            "-x",
            "INHERITED_VAR",
            "--env",
            "B_VAR",
            "two words",
            "-genv",
            "C_VAR",
            "3",
            "-wdir",
            wdir.to_str().unwrap(),
            PROBE,
            "env",
            "A_VAR",
            "env",
            "INHERITED_VAR",
            "env",
            "B_VAR",
            "env",
            "C_VAR",
            "env",
            "CROSSMPI_LAUNCHER",
            "env",
            "LD_LIBRARY_PATH",
            "cwd",
        ],
        |c| {
            c.env("INHERITED_VAR", "from-mpirun")
                .env("LD_LIBRARY_PATH", "/opt/x");
        },
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    for r in 0..2 {
        for want in [
            format!("rank {r}: A_VAR=one"),
            format!("rank {r}: INHERITED_VAR=from-mpirun"),
            format!("rank {r}: B_VAR=two words"),
            format!("rank {r}: C_VAR=3"),
            format!("rank {r}: CROSSMPI_LAUNCHER=mpirun"),
            format!("rank {r}: cwd={}", wdir.display()),
        ] {
            assert!(out.contains(&want), "missing {want:?} in\n{out}");
        }
    }
    // PREFIX/lib in front: PREFIX is the parent of the folder holding mpirun.
    let exe = std::path::Path::new(MPIRUN).canonicalize().unwrap();
    let lib = exe.parent().unwrap().parent().unwrap().join("lib");
    assert!(
        out.contains(&format!("rank 0: LD_LIBRARY_PATH={}:/opt/x", lib.display())),
        "{out}"
    );
    let o = mpirun(&["-wdir", "/no/such/dir", PROBE]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("/no/such/dir"));
}

#[test]
fn stdin_reaches_rank_zero_only() {
    let mut child = Command::new(MPIRUN)
        .args(["-n", "2", PROBE, "stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"first\nsecond\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let stdin_lines: Vec<String> = stdout_lines(&o)
        .into_iter()
        .filter(|l| l.contains("stdin:"))
        .collect();
    assert_eq!(
        stdin_lines,
        ["rank 0: stdin: first", "rank 0: stdin: second"]
    );
}

#[test]
fn tagged_output_lines_never_interleave() {
    let o = mpirun(&["-n", "3", "--tag-output", PROBE, "lines", "3000"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut per_rank = [0usize; 3];
    let body = "x".repeat(200);
    for line in stdout_lines(&o) {
        let (tag, rest) = line.split_once(' ').unwrap();
        let rank: usize = tag
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse()
            .unwrap();
        if rest.contains(" line ") {
            assert!(
                rest.starts_with(&format!("rank {rank} line ")) && rest.ends_with(&body),
                "torn line {line:?}"
            );
            per_rank[rank] += 1;
        }
    }
    assert_eq!(per_rank, [3000; 3]);
}

#[test]
fn first_failing_exit_status_ends_the_job() {
    let start = Instant::now();
    let o = mpirun(&[
        "-n", "3", PROBE, "@1", "exit", "3", "@0", "hang", "@2", "hang",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(start.elapsed() < Duration::from_secs(3));
    let err = text(&o.stderr);
    assert!(
        err.contains("rank 1 (pid") && err.contains("exited with status 3"),
        "{err}"
    );
    for pid in hung_pids(&o) {
        assert!(!pid_alive(pid), "rank pid {pid} survived");
    }
}

#[test]
fn abort_ends_the_job_within_a_second() {
    let o = mpirun(&[
        "-n", "3", PROBE, "@0", "hang", "@1", "hang", "@2", "sleep", "300", "@2", "abort", "5",
    ]);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains(
            "rank 2 on localhost called MPI_Abort with error code 5: probe_asked_to_abort"
        ),
        "{err}"
    );
    let pids = hung_pids(&o);
    assert_eq!(pids.len(), 2);
    for pid in pids {
        assert!(!pid_alive(pid), "rank pid {pid} survived");
    }
    // Timed separately from start-up: abort to exit.
    let mut child = Command::new(MPIRUN)
        .args([
            "-n", "2", PROBE, "@0", "hang", "@1", "sleep", "500", "@1", "abort", "7",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while !lines.next().unwrap().unwrap().contains(": pid ") {}
    let hung_at = Instant::now();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(7));
    let ended_after = hung_at.elapsed();
    assert!(
        ended_after < Duration::from_millis(500 + 1000),
        "abort took {ended_after:?} (500 ms of it the sleep)"
    );
}

#[test]
fn death_by_signal_and_missing_finalize_end_the_job() {
    let o = mpirun(&["-n", "2", PROBE, "@1", "crash", "@0", "hang"]);
    assert_eq!(o.status.code(), Some(128 + 6));
    let err = text(&o.stderr);
    assert!(
        err.contains("rank 1 (pid") && err.contains("killed by SIGABRT (6)"),
        "{err}"
    );

    let o = mpirun(&["-n", "2", PROBE, "@1", "no-finalize", "@0", "hang"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("rank 1 (pid"));
    assert!(text(&o.stderr).contains("without calling MPI_Finalize"));
    for pid in hung_pids(&o) {
        assert!(!pid_alive(pid));
    }
}

#[test]
fn a_rank_killed_by_another_hand_while_the_job_ends_is_named_too() {
    // Rank 0 fails first; rank 1 ignores the SIGTERM of the teardown and is then killed
    // by SIGKILL that mpirun did not send (as a rank killed on another host is reaped
    // after the peers it left exited): both are named, the status is the first failure's.
    let script = "trap '' TERM; if [ \"$PMI_RANK\" = 0 ]; then sleep 0.2; exit 3; fi; \
                  sleep 0.6; kill -KILL $$";
    let o = mpirun_with(&["-n", "2", "sh", "-c", script], |c| {
        c.env("CROSSMPI_KILL_GRACE_MS", "5000");
    });
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("rank 0 (pid") && err.contains("exited with status 3"),
        "{err}"
    );
    assert!(
        err.contains("rank 1 (pid")
            && err.contains("killed by SIGKILL (9) (found while the job was ending)"),
        "{err}"
    );
    // The teardown's own SIGTERM is not reported as a cause.
    let o = mpirun(&[
        "-n", "3", PROBE, "@1", "exit", "3", "@0", "hang", "@2", "hang",
    ]);
    assert!(
        !text(&o.stderr).contains("found while the job was ending"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn timeout_kills_the_job() {
    let start = Instant::now();
    let o = mpirun(&["-n", "2", "--timeout", "0.5", PROBE, "hang"]);
    assert_eq!(o.status.code(), Some(124));
    assert!(text(&o.stderr).contains("exceeded --timeout 0.5 s"));
    assert!(start.elapsed() < Duration::from_secs(3));
    for pid in hung_pids(&o) {
        assert!(!pid_alive(pid));
    }
}

#[test]
fn remote_hosts_go_through_the_launch_agent() {
    // The agent drops the host word and runs the command here, as ssh would there.
    let dir = scratch("agent");
    let agent = dir.join("agent.sh");
    let log = dir.join("agent.log");
    std::fs::write(
        &agent,
        format!(
            "#!/bin/sh\necho \"$@\" >> {}\nshift\nexec \"$@\"\n",
            log.display()
        ),
    )
    .unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(&agent)
        .status()
        .unwrap();
    let o = mpirun_with(
        &[
            "-n",
            "3",
            "-H",
            "127.0.0.2:2,localhost",
            "--launch-agent",
            agent.to_str().unwrap(),
            "-x",
            "FOO=bar",
            PROBE,
            "env",
            "FOO",
            "env",
            "PMI_PORT",
            "env",
            "CROSSMPI_SOMETHING",
        ],
        |c| {
            c.env("CROSSMPI_SOMETHING", "forwarded");
        },
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    for r in 0..3 {
        assert!(out.contains(&format!("rank {r} of 3: exchange ok")));
        assert!(out.contains(&format!("rank {r}: FOO=bar")));
        assert!(out.contains(&format!("rank {r}: CROSSMPI_SOMETHING=forwarded")));
    }
    assert!(out.contains("rank 0: PMI_PORT=127.0.0.1:"), "{out}");
    assert!(
        out.contains("rank 2: PMI_PORT=<unset>"),
        "local rank uses PMI_FD: {out}"
    );
    let agent_lines = std::fs::read_to_string(&log).unwrap();
    assert_eq!(agent_lines.lines().count(), 2);
    assert!(agent_lines
        .lines()
        .all(|l| l.starts_with("127.0.0.2 env ") && l.contains(&format!(" {PROBE} env FOO"))));

    // A host name that does not resolve: mpirun's address comes from CROSSMPI_MPIRUN_ADDR.
    let o = mpirun_with(
        &[
            "-n",
            "2",
            "-H",
            "node-x.invalid",
            "--launch-agent",
            agent.to_str().unwrap(),
            PROBE,
            "@1",
            "exit",
            "4",
        ],
        |c| {
            c.env("CROSSMPI_MPIRUN_ADDR", "127.0.0.1");
        },
    );
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("rank 1 (launch agent pid"));
    assert!(text(&o.stderr).contains("for node-x.invalid) exited with status 4"));
    let o = mpirun(&[
        "-H",
        "node-x.invalid",
        "--launch-agent",
        agent.to_str().unwrap(),
        PROBE,
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("CROSSMPI_MPIRUN_ADDR"));
}

#[test]
fn interrupt_cleans_up_every_rank() {
    for (signal, status) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let mut child = Command::new(MPIRUN)
            .args(["-n", "3", PROBE, "hang"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut pids = Vec::new();
        while pids.len() < 3 {
            let line = lines.next().unwrap().unwrap();
            if let Some(p) = line.split(": pid ").nth(1) {
                pids.push(p.parse::<u32>().unwrap());
            }
        }
        // SAFETY: signals the mpirun child this test started, by its pid.
        unsafe { libc::kill(child.id() as i32, signal) };
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(status));
        assert!(
            text(&o.stderr).contains("received SIG"),
            "{}",
            text(&o.stderr)
        );
        for pid in pids {
            assert!(!pid_alive(pid), "rank pid {pid} survived");
        }
    }
}

#[test]
fn mpmd_applications_get_their_appnum() {
    let o = mpirun(&["-n", "1", PROBE, ":", "-n", "2", PROBE]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut lines = stdout_lines(&o);
    lines.sort();
    assert_eq!(
        lines,
        [
            "rank 0 of 3: exchange ok, appnum 0",
            "rank 1 of 3: exchange ok, appnum 1",
            "rank 2 of 3: exchange ok, appnum 1"
        ]
    );
}

#[test]
fn bad_command_lines_and_programs_are_named() {
    let o = mpirun(&["--frobnicate", PROBE]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("unknown option --frobnicate"));
    let o = mpirun(&["-n", "2"]);
    assert_eq!(o.status.code(), Some(2));
    let o = mpirun(&["-n", "2", "/no/such/program"]);
    assert_eq!(o.status.code(), Some(127));
    assert!(text(&o.stderr).contains("cannot start rank 0 on localhost: /no/such/program"));
    let o = mpirun_with(&["-n", "1", PROBE], |c| {
        c.env("CROSSMPI_KILL_GRACE_MS", "soon");
    });
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("CROSSMPI_KILL_GRACE_MS=\"soon\""));
    let o = mpirun(&["--help"]);
    assert!(o.status.success() && text(&o.stdout).contains("--launch-agent"));
    // A program that is not an MPI program runs and ends cleanly.
    let o = mpirun(&["-n", "2", "-l", "echo", "plain"]);
    assert!(o.status.success());
    let mut lines = stdout_lines(&o);
    lines.sort();
    assert_eq!(lines, ["[0] plain", "[1] plain"]);
}

#[test]
fn hydra_starts_crossmpi_ranks() {
    let hydra = "/usr/bin/mpiexec.mpich";
    if !std::path::Path::new(hydra).exists() {
        eprintln!("skipped: {hydra} is not installed");
        return;
    }
    // PMI_FD mode (Hydra's default), then PMI_PORT mode with the initack handshake.
    for extra in [&[][..], &["-pmi-port"][..]] {
        let o = Command::new(hydra)
            .args(extra)
            .args(["-n", "4", PROBE])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(o.status.success(), "{extra:?}: {}", text(&o.stderr));
        let mut lines = stdout_lines(&o);
        lines.sort();
        let want: Vec<String> = (0..4)
            .map(|r| format!("rank {r} of 4: exchange ok, appnum 0"))
            .collect();
        assert_eq!(lines, want, "{extra:?}");
    }
    let o = Command::new(hydra)
        .args(["-n", "2", PROBE, "@1", "abort", "9"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(9));
    // Hydra serves crossmpi's spawn request (preput key, a job of its own) and names.
    let o = Command::new(hydra)
        .args([
            "-n", "2", PROBE, "@1", "spawn", "2", "cwd", "@0", "publish", "s", "p",
        ])
        .args(["fence", "@1", "lookup", "s"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    for want in [
        "rank 1: spawned 2",
        "rank 0 of 2: exchange ok",
        "rank 1: PARENT=from-1",
        "rank 1: lookup s: Ok(\"p\")",
    ] {
        assert!(out.contains(want), "lacks {want:?}: {out}");
    }
}

#[test]
fn hostile_pmi_input_drops_only_that_connection() {
    // The rank writes garbage and an endless line straight into its PMI socket.
    let script = "printf 'cmd=hello there\\n' >&$PMI_FD; head -c 10000 /dev/zero >&$PMI_FD; sleep 0.2; echo alive";
    let o = mpirun(&["-n", "2", "sh", "-c", script]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(stdout_lines(&o), ["alive", "alive"]);
    let err = text(&o.stderr);
    for r in 0..2 {
        assert!(
            err.contains(&format!(
                "dropped the PMI connection of rank {r}: word \"there\" is not key=value"
            )),
            "{err}"
        );
    }
}

#[test]
fn spawned_jobs_get_their_own_key_space_and_output() {
    let o = mpirun(&["-n", "2", "-l", PROBE, "@1", "spawn", "3", "cwd"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut lines = stdout_lines(&o);
    lines.sort();
    let cwd = std::env::current_dir().unwrap();
    let mut want = vec![
        "[0] rank 0 of 2: exchange ok, appnum 0".to_string(),
        "[1] rank 1 of 2: exchange ok, appnum 0".to_string(),
        "[1] rank 1: spawned 3".to_string(),
    ];
    // Spawned processes are numbered after the first job's ranks (2, 3, 4).
    for r in 0..3 {
        want.push(format!("[{}] rank {r} of 3: exchange ok, appnum 0", r + 2));
        want.push(format!("[{}] rank {r}: PARENT=from-1", r + 2));
        want.push(format!("[{}] rank {r}: cwd={}", r + 2, cwd.display()));
    }
    want.sort();
    assert_eq!(lines, want);
}

#[test]
fn a_failing_spawned_process_ends_the_job_and_bad_spawns_are_refused() {
    let t0 = Instant::now();
    let o = mpirun(&["-n", "2", PROBE, "@0", "spawn", "2", "crash", "hang"]);
    assert_eq!(o.status.code(), Some(128 + 6), "{}", text(&o.stderr));
    assert!(t0.elapsed() < Duration::from_secs(5));
    let err = text(&o.stderr);
    assert!(
        err.contains("of spawned job 1") && err.contains("SIGABRT"),
        "{err}"
    );
    for pid in hung_pids(&o) {
        assert!(!pid_alive(pid), "pid {pid} survived the teardown");
    }

    let o = mpirun(&["-n", "1", PROBE, "spawn-missing"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("spawn refused") && out.contains("/no/such/program"),
        "{out}"
    );
}

#[test]
fn names_are_shared_by_the_ranks_of_one_mpirun() {
    let o = mpirun(&[
        "-n",
        "2",
        PROBE,
        "@0",
        "publish",
        "svc",
        "port-1",
        "fence",
        "@1",
        "lookup",
        "svc",
        "@1",
        "publish",
        "svc",
        "port-2",
        "fence",
        "@0",
        "unpublish",
        "svc",
        "fence",
        "@1",
        "lookup",
        "svc",
        "@1",
        "unpublish",
        "svc",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    for want in [
        "rank 0: publish svc: Ok(())",
        "rank 1: lookup svc: Ok(\"port-1\")",
        "rank 1: publish svc: Err(",
        "rank 0: unpublish svc: Ok(())",
        "rank 1: lookup svc: Err(",
        "rank 1: unpublish svc: Err(",
    ] {
        assert!(out.contains(want), "lacks {want:?}: {out}");
    }
}

#[test]
fn names_are_not_seen_by_another_mpirun() {
    let publisher = Command::new(MPIRUN)
        .args(["-n", "1", PROBE, "publish", "scoped", "p", "sleep", "1500"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT")
        .spawn()
        .unwrap();
    let o = mpirun(&["-n", "1", PROBE, "sleep", "300", "lookup", "scoped"]);
    let published = publisher.wait_with_output().unwrap();
    assert!(text(&published.stdout).contains("publish scoped: Ok(())"));
    let out = text(&o.stdout);
    assert!(out.contains("lookup scoped: Err("), "{out}");
}
