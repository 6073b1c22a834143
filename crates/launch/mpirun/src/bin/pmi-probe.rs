//! A test program for the launcher: bootstraps through `crossmpi_pmi::Client`,
//! exchanges one key per rank (put, fence, get every rank's), prints what it found, then
//! performs the actions given as arguments, in order. `@R ACTION` limits an action to
//! rank R. Actions: `env VAR` (print it), `cwd`, `stdin` (echo stdin's lines),
//! `lines N` (print N long lines), `exit CODE`, `abort CODE`, `crash` (die by SIGABRT),
//! `hang` (print the pid, sleep forever), `sleep MS`, `no-finalize` (exit 0 without
//! PMI finalize), `fence`, `get KEY` (print the value of KEY in the job's key space),
//! `spawn N ACTION` (start N copies of this program as a new job with `PARENT=from-RANK`
//! preput; they run `get PARENT ACTION`), `spawn-missing` (ask to spawn a program that
//! does not exist and print the refusal), `publish SERVICE PORT`, `lookup SERVICE`,
//! `unpublish SERVICE` (print the outcome).

use crossmpi_pmi::spawn::SpawnSegment;
use crossmpi_pmi::Client;
use std::io::{BufRead, Write};

fn fail(msg: String) -> ! {
    eprintln!("pmi-probe: {msg}");
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut client = match Client::from_env() {
        Ok(Some(c)) => c,
        Ok(None) => fail("no PMI environment".into()),
        Err(e) => fail(e.to_string()),
    };
    let (rank, size) = (client.rank(), client.size());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    client
        .put(
            &format!("probe-{rank}"),
            &format!("{}@{}", rank * 7, host.trim()),
        )
        .unwrap_or_else(|e| fail(e.to_string()));
    client.fence().unwrap_or_else(|e| fail(e.to_string()));
    for r in 0..size {
        let v = client
            .get(&format!("probe-{r}"))
            .unwrap_or_else(|e| fail(e.to_string()));
        if !v.starts_with(&format!("{}@", r * 7)) {
            fail(format!("rank {rank} read probe-{r}={v}"));
        }
    }
    println!(
        "rank {rank} of {size}: exchange ok, appnum {}",
        client.appnum()
    );
    let mut finalize = true;
    let mut words = args.iter().peekable();
    while let Some(word) = words.next() {
        let target = word
            .strip_prefix('@')
            .map(|r| r.parse::<usize>().unwrap_or(usize::MAX));
        let action = if target.is_some() {
            words.next().map_or("", |s| s.as_str())
        } else {
            word.as_str()
        };
        let takes_value = matches!(
            action,
            "env"
                | "lines"
                | "exit"
                | "abort"
                | "sleep"
                | "get"
                | "lookup"
                | "unpublish"
                | "spawn"
                | "publish"
        );
        let value = if takes_value {
            words.next().cloned().unwrap_or_default()
        } else {
            String::new()
        };
        let second = if matches!(action, "spawn" | "publish") {
            words.next().cloned().unwrap_or_default()
        } else {
            String::new()
        };
        if target.is_some_and(|t| t != rank) {
            continue;
        }
        let number = || {
            value
                .parse::<i64>()
                .unwrap_or_else(|_| fail(format!("{action}: bad number {value:?}")))
        };
        let mut out = std::io::stdout().lock();
        match action {
            "env" => {
                let _ = writeln!(
                    out,
                    "rank {rank}: {value}={}",
                    std::env::var(&value).unwrap_or("<unset>".into())
                );
            }
            "cwd" => {
                let _ = writeln!(
                    out,
                    "rank {rank}: cwd={}",
                    std::env::current_dir().unwrap().display()
                );
            }
            "stdin" => {
                for line in std::io::stdin().lock().lines() {
                    let _ = writeln!(out, "rank {rank}: stdin: {}", line.unwrap_or_default());
                }
            }
            "lines" => {
                for i in 0..number() {
                    let _ = writeln!(out, "rank {rank} line {i} {}", "x".repeat(200));
                }
            }
            "exit" => std::process::exit(number() as i32),
            "abort" => {
                client
                    .abort(
                        number() as i32,
                        "probe asked to abort",
                        std::time::Duration::from_secs(2),
                    )
                    .unwrap_or_else(|e| fail(e.to_string()));
                std::thread::sleep(std::time::Duration::from_secs(30));
            }
            "crash" => std::process::abort(),
            "hang" => {
                let _ = writeln!(out, "rank {rank}: pid {}", std::process::id());
                let _ = out.flush();
                loop {
                    std::thread::sleep(std::time::Duration::from_secs(60));
                }
            }
            "sleep" => std::thread::sleep(std::time::Duration::from_millis(number() as u64)),
            "no-finalize" => finalize = false,
            "fence" => client.fence().unwrap_or_else(|e| fail(e.to_string())),
            "get" => {
                let v = client.get(&value).unwrap_or_else(|e| e.to_string());
                let _ = writeln!(out, "rank {rank}: {value}={v}");
            }
            "spawn" | "spawn-missing" => {
                let (nprocs, command, args) = if action == "spawn" {
                    let n = value
                        .parse()
                        .unwrap_or_else(|_| fail(format!("spawn: bad number {value:?}")));
                    let me = std::env::current_exe().unwrap_or_else(|e| fail(e.to_string()));
                    let args = vec!["get".to_string(), "PARENT".to_string(), second.clone()];
                    (n, me.display().to_string(), args)
                } else {
                    (1, "/no/such/program".to_string(), Vec::new())
                };
                let segment = SpawnSegment {
                    nprocs,
                    command,
                    total: 1,
                    number: 1,
                    args,
                    preput: vec![("PARENT".into(), format!("from-{rank}"))],
                    info: Vec::new(),
                };
                match client.spawn(&[segment]) {
                    Ok(()) => {
                        let _ = writeln!(out, "rank {rank}: spawned {nprocs}");
                    }
                    Err(e) => {
                        let _ = writeln!(out, "rank {rank}: spawn refused: {e}");
                    }
                }
            }
            "publish" => {
                let r = client.publish_name(&value, &second);
                let _ = writeln!(out, "rank {rank}: publish {value}: {r:?}");
            }
            "lookup" => {
                let r = client.lookup_name(&value);
                let _ = writeln!(out, "rank {rank}: lookup {value}: {r:?}");
            }
            "unpublish" => {
                let r = client.unpublish_name(&value);
                let _ = writeln!(out, "rank {rank}: unpublish {value}: {r:?}");
            }
            other => fail(format!("unknown action {other:?}")),
        }
    }
    if finalize {
        client.finalize().unwrap_or_else(|e| fail(e.to_string()));
    }
}
