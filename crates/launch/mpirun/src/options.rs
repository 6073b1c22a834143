//! The command line of `mpirun`/`mpiexec`: Open MPI's and Hydra's common spellings.

use crate::hosts::{parse_host_list, read_hostfile, HostSpec};
use std::path::PathBuf;
use std::time::Duration;

/// One MPMD application: `-n N program args` between `:` separators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct App {
    pub np: Option<usize>,
    pub argv: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub apps: Vec<App>,
    pub hosts: Vec<HostSpec>,
    /// Variables to set in every rank, in command-line order.
    pub env: Vec<(String, String)>,
    pub wdir: Option<PathBuf>,
    pub tag_output: bool,
    pub timeout: Option<Duration>,
    /// `--launch-agent` split into words (default `ssh`).
    pub launch_agent: Vec<String>,
    pub verbose: bool,
    pub help: bool,
}

pub const USAGE: &str = "\
usage: mpirun [options] program [args] [: [-n N] program [args] ...]
  -n, -np N              number of ranks (default: the slots of the hosts, or 1)
  -H, --host H[:S],...   hosts, each with S slots (default 1); ranks fill them in order
  --hostfile, -f FILE    hosts from a file: `host slots=N` or `host:N` lines, # comments
  -x VAR[=VALUE]         export VAR (mpirun's value, or VALUE) to every rank
  --env, -genv VAR VALUE set VAR=VALUE in every rank
  -wdir, --wdir DIR      working directory of the ranks (default: the current one)
  --tag-output, -l       prefix every output line with `[RANK] `
  --timeout SECONDS      end the job after SECONDS (exit status 124)
  -client RANK ADDR:PORT run the ranks as IMPI client RANK of the job whose IMPI server
                         listens at ADDR:PORT (one MPI_COMM_WORLD across clusters)
  --launch-agent CMD     how to reach other hosts (default: ssh); run as CMD HOST COMMAND
  --oversubscribe, --allow-run-as-root   accepted (crossmpi never refuses either)
  -v, --verbose          print placement and launch commands
  -h, --help             this text
See docs/launcher.md.";

fn usage_error(option: &str, what: String) -> String {
    format!("mpirun: option {option}: {what}")
}

fn positive(option: &str, value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(usage_error(
            option,
            format!("value {value:?} is not a positive whole number"),
        )),
    }
}

impl Options {
    /// Parses the arguments after the program name; `env_lookup` reads mpirun's own
    /// environment (for `-x VAR`).
    pub fn parse(
        args: &[String],
        env_lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Options, String> {
        let mut o = Options {
            apps: vec![App {
                np: None,
                argv: Vec::new(),
            }],
            hosts: Vec::new(),
            env: Vec::new(),
            wdir: None,
            tag_output: false,
            timeout: None,
            launch_agent: vec!["ssh".to_string()],
            verbose: false,
            help: false,
        };
        let mut i = 0;
        // After `--` the next word is the program even if it starts with `-`.
        let mut end_of_options = false;
        while i < args.len() {
            let arg = &args[i];
            i += 1;
            let app = o.apps.last_mut().expect("apps is never empty");
            if arg == ":" {
                o.apps.push(App {
                    np: None,
                    argv: Vec::new(),
                });
                continue;
            }
            if !app.argv.is_empty()
                || !arg.starts_with('-')
                || arg == "-"
                || std::mem::take(&mut end_of_options)
            {
                app.argv.push(arg.clone());
                continue;
            }
            if arg == "--" {
                end_of_options = true;
                continue;
            }
            // `--name=value` and `-name value` are the same; one or two dashes alike.
            let (name, inline) = match arg.trim_start_matches('-').split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (arg.trim_start_matches('-'), None),
            };
            let mut value = |count: usize| -> Result<Vec<String>, String> {
                let mut vals: Vec<String> = inline.iter().cloned().collect();
                while vals.len() < count {
                    let v = args
                        .get(i)
                        .ok_or_else(|| usage_error(arg, format!("needs {count} value(s)")))?;
                    vals.push(v.clone());
                    i += 1;
                }
                Ok(vals)
            };
            match name {
                "n" | "np" | "c" => app.np = Some(positive(arg, &value(1)?[0])?),
                "H" | "host" | "hosts" => o
                    .hosts
                    .extend(parse_host_list(&value(1)?[0]).map_err(|e| usage_error(arg, e))?),
                "hostfile" | "machinefile" | "f" => o
                    .hosts
                    .extend(read_hostfile(&value(1)?[0]).map_err(|e| usage_error(arg, e))?),
                "x" => {
                    let v = value(1)?.remove(0);
                    let (name, val) = match v.split_once('=') {
                        Some((k, val)) => (k.to_string(), Some(val.to_string())),
                        None => (v.clone(), env_lookup(&v)),
                    };
                    if name.is_empty() {
                        return Err(usage_error(arg, format!("{v:?} does not name a variable")));
                    }
                    // `-x VAR` with VAR unset in mpirun exports nothing, as Open MPI does.
                    if let Some(val) = val {
                        o.env.push((name, val));
                    }
                }
                "env" | "genv" => {
                    let mut v = value(2)?;
                    let val = v.pop().unwrap_or_default();
                    o.env.push((v.remove(0), val));
                }
                "wdir" | "wd" => o.wdir = Some(PathBuf::from(value(1)?.remove(0))),
                "tag-output" | "l" | "prepend-rank" => o.tag_output = true,
                "timeout" => {
                    let v = value(1)?.remove(0);
                    let secs: f64 = v
                        .parse()
                        .ok()
                        .filter(|s: &f64| s.is_finite() && *s > 0.0)
                        .ok_or_else(|| {
                            usage_error(
                                arg,
                                format!("value {v:?} is not a positive number of seconds"),
                            )
                        })?;
                    o.timeout = Some(Duration::from_secs_f64(secs));
                }
                "launch-agent" => {
                    let v = value(1)?.remove(0);
                    o.launch_agent = v.split_whitespace().map(str::to_string).collect();
                    if o.launch_agent.is_empty() {
                        return Err(usage_error(arg, "the agent command is empty".into()));
                    }
                }
                "client" => {
                    let mut v = value(2)?;
                    let server = v.pop().unwrap_or_default();
                    let rank = v.remove(0);
                    if rank.parse::<u32>().map_or(true, |r| r >= 32) {
                        return Err(usage_error(
                            arg,
                            format!("client rank {rank:?} is not a whole number below 32"),
                        ));
                    }
                    if !server.contains(':') {
                        return Err(usage_error(
                            arg,
                            format!("server {server:?} is not ADDRESS:PORT"),
                        ));
                    }
                    o.env.push(("CROSSMPI_IMPI_CLIENT".into(), rank));
                    o.env.push(("CROSSMPI_IMPI_SERVER".into(), server));
                }
                "oversubscribe" | "allow-run-as-root" => {}
                "v" | "verbose" => o.verbose = true,
                "h" | "help" => o.help = true,
                _ => return Err(format!("mpirun: unknown option {arg} (see mpirun --help)")),
            }
        }
        if !o.help {
            if let Some(k) = o.apps.iter().position(|a| a.argv.is_empty()) {
                return Err(format!(
                    "mpirun: application {} names no program (see mpirun --help)",
                    k + 1
                ));
            }
        }
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(words: &str) -> Result<Options, String> {
        let args: Vec<String> = words.split_whitespace().map(str::to_string).collect();
        Options::parse(&args, |v| (v == "HOME").then(|| "/home/me".to_string()))
    }

    #[test]
    fn common_spellings() {
        let o = parse("-np 4 --host a:2,b -x HOME -x A=1 --env B 2 -genv C 3 -wdir /tmp -l --timeout 1.5 --oversubscribe --allow-run-as-root prog -n 9 x").unwrap();
        assert_eq!(
            o.apps,
            vec![App {
                np: Some(4),
                argv: vec!["prog".into(), "-n".into(), "9".into(), "x".into()]
            }]
        );
        assert_eq!(
            o.hosts,
            vec![
                HostSpec {
                    name: "a".into(),
                    slots: Some(2)
                },
                HostSpec {
                    name: "b".into(),
                    slots: None
                }
            ]
        );
        let env: Vec<(&str, &str)> = o
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            env,
            vec![("HOME", "/home/me"), ("A", "1"), ("B", "2"), ("C", "3")]
        );
        assert_eq!(o.wdir, Some(PathBuf::from("/tmp")));
        assert!(o.tag_output);
        assert_eq!(o.timeout, Some(Duration::from_millis(1500)));
        let o = parse("-x UNSET_VAR -- -prog -n").unwrap();
        assert!(o.env.is_empty());
        assert_eq!(o.apps[0].argv, ["-prog", "-n"]);
        let o = parse("-client 1 10.0.0.1:4000 -n 2 app").unwrap();
        assert_eq!(
            o.env,
            vec![
                ("CROSSMPI_IMPI_CLIENT".to_string(), "1".to_string()),
                (
                    "CROSSMPI_IMPI_SERVER".to_string(),
                    "10.0.0.1:4000".to_string()
                )
            ]
        );
        let o = parse("--np=2 --launch-agent=rsh prog").unwrap();
        assert_eq!(o.apps[0].np, Some(2));
        assert_eq!(o.launch_agent, vec!["rsh"]);
    }

    #[test]
    fn mpmd_applications() {
        let o = parse("-n 2 a 1 : -n 3 b").unwrap();
        assert_eq!(o.apps.len(), 2);
        assert_eq!(
            (o.apps[0].np, o.apps[0].argv.clone()),
            (Some(2), vec!["a".to_string(), "1".to_string()])
        );
        assert_eq!(
            (o.apps[1].np, o.apps[1].argv.clone()),
            (Some(3), vec!["b".to_string()])
        );
    }

    #[test]
    fn errors_name_the_option_and_value() {
        assert_eq!(
            parse("-n zero prog").unwrap_err(),
            "mpirun: option -n: value \"zero\" is not a positive whole number"
        );
        assert!(parse("-n 0 prog").is_err());
        assert!(parse("--bogus prog").unwrap_err().contains("--bogus"));
        assert!(parse("-n").unwrap_err().contains("needs 1 value"));
        assert!(parse("-client 32 h:1 a").unwrap_err().contains("\"32\""));
        assert!(parse("-client 0 nowhere a")
            .unwrap_err()
            .contains("nowhere"));
        assert!(parse("-n 2").unwrap_err().contains("no program"));
        assert!(parse("-n 1 a :").unwrap_err().contains("application 2"));
        assert!(parse("--timeout -3 a").unwrap_err().contains("-3"));
        assert!(parse("-H a:x prog").unwrap_err().contains("a:x"));
        assert!(parse("--help").unwrap().help);
    }
}
