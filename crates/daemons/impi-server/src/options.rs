//! Command-line options of `impi-server`, in GridMPI's single-dash form or with `--`.

use crossmpi_impi::startup::client::parse_key;
use crossmpi_impi::startup::server::ServerAuth;
use crossmpi_impi::wire::startup::MAX_CLIENTS;
use crossmpi_impi::wire::Limits;
use std::net::IpAddr;
use std::time::Duration;

pub const USAGE: &str = "usage: impi-server -server N [-port P] [-auth none|key] [-host ADDR]
                   [--timeout SECONDS] [-v]
  -server N        serve exactly N IMPI clients (1..=32), then exit
  -port P          TCP port to listen on (default 0: any free port)
  -auth none|key   authentication: none (clients set IMPI_AUTH_NONE), or a 64-bit key
                   read from IMPI_AUTH_KEY (clients set the same IMPI_AUTH_KEY); default none
  -host ADDR       listen on and print this address (default: listen on all addresses
                   and print this host's first non-loopback address)
  --timeout S      end the job when startup (up to the DONE reply) takes longer than S
                   seconds (default 600, or CROSSMPI_IMPI_SERVER_TIMEOUT)
  -v               log every step to standard error
The first line of standard output is the address:port clients connect to.";

/// Default of `--timeout`: ten minutes lets a batch scheduler start every cluster's
/// part of the job; a larger value only delays the error when one never starts.
pub const DEFAULT_TIMEOUT_SECS: u64 = 600;

#[derive(Debug, Clone)]
pub struct Options {
    pub nclients: u32,
    pub port: u16,
    pub auth: ServerAuth,
    pub host: Option<IpAddr>,
    pub timeout: Duration,
    pub verbose: bool,
    pub limits: Limits,
}

fn value<'a>(it: &mut impl Iterator<Item = &'a String>, flag: &str) -> Result<&'a str, String> {
    it.next()
        .map(String::as_str)
        .ok_or_else(|| format!("impi-server: option {flag} needs a value"))
}

fn timeout_secs(text: &str, what: &str) -> Result<u64, String> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|&s| s > 0)
        .ok_or_else(|| format!("impi-server: {what}: '{text}' is not a number of seconds >= 1"))
}

impl Options {
    /// Parses the arguments (argv[0] excluded); `env` looks up environment variables.
    pub fn parse(args: &[String], env: &dyn Fn(&str) -> Option<String>) -> Result<Options, String> {
        let mut nclients = None;
        let mut port = 0u16;
        let mut auth_key = false;
        let mut host = None;
        let mut timeout = match env("CROSSMPI_IMPI_SERVER_TIMEOUT") {
            Some(t) => timeout_secs(&t, "CROSSMPI_IMPI_SERVER_TIMEOUT")?,
            None => DEFAULT_TIMEOUT_SECS,
        };
        let mut verbose = false;
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            let flag = arg.trim_start_matches('-');
            if !arg.starts_with('-') || flag.is_empty() {
                return Err(format!("impi-server: unexpected argument '{arg}'"));
            }
            match flag {
                "server" => {
                    let v = value(&mut it, arg)?;
                    let n = v
                        .parse::<u32>()
                        .ok()
                        .filter(|n| (1..=MAX_CLIENTS).contains(n));
                    nclients = Some(n.ok_or_else(|| {
                        format!("impi-server: -server: '{v}' is not a client count in 1..={MAX_CLIENTS}")
                    })?);
                }
                "port" => {
                    let v = value(&mut it, arg)?;
                    port = v.parse().map_err(|_| {
                        format!("impi-server: -port: '{v}' is not a port in 0..=65535")
                    })?;
                }
                "auth" => match value(&mut it, arg)? {
                    "none" => auth_key = false,
                    "key" => auth_key = true,
                    other => {
                        return Err(format!(
                            "impi-server: -auth: '{other}' is neither 'none' nor 'key'"
                        ))
                    }
                },
                "host" => {
                    let v = value(&mut it, arg)?;
                    host =
                        Some(v.parse().map_err(|_| {
                            format!("impi-server: -host: '{v}' is not an IP address")
                        })?);
                }
                "timeout" => timeout = timeout_secs(value(&mut it, arg)?, "--timeout")?,
                "v" | "verbose" => verbose = true,
                "h" | "help" => return Err(USAGE.to_string()),
                _ => return Err(format!("impi-server: unknown option '{arg}'\n{USAGE}")),
            }
        }
        let nclients =
            nclients.ok_or_else(|| format!("impi-server: -server N is required\n{USAGE}"))?;
        let auth = if auth_key {
            let text = env("IMPI_AUTH_KEY").ok_or(
                "impi-server: -auth key needs the key in the environment variable IMPI_AUTH_KEY",
            )?;
            ServerAuth::Key(parse_key(&text).map_err(|e| format!("impi-server: {e}"))?)
        } else {
            ServerAuth::None
        };
        let limits = Limits::from_var(env("CROSSMPI_IMPI_MAX_MSG").as_deref())
            .map_err(|e| format!("impi-server: {e}"))?;
        Ok(Options {
            nclients,
            port,
            auth,
            host,
            timeout: Duration::from_secs(timeout),
            verbose,
            limits,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str], env: &[(&str, &str)]) -> Result<Options, String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Options::parse(&args, &|k| {
            env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn both_dash_forms_and_defaults() {
        let o = parse(&["-server", "3", "--port", "9000", "-v"], &[]).unwrap();
        assert_eq!((o.nclients, o.port, o.verbose), (3, 9000, true));
        assert_eq!(o.auth, ServerAuth::None);
        assert_eq!(o.timeout, Duration::from_secs(600));
        let o = parse(
            &["--server", "2", "-auth", "key", "--timeout", "5"],
            &[("IMPI_AUTH_KEY", "-12")],
        )
        .unwrap();
        assert_eq!(o.auth, ServerAuth::Key(-12i64 as u64));
        assert_eq!(o.timeout, Duration::from_secs(5));
        let o = parse(&["-server", "1"], &[("CROSSMPI_IMPI_SERVER_TIMEOUT", "7")]).unwrap();
        assert_eq!(o.timeout, Duration::from_secs(7));
    }

    #[test]
    fn errors_name_the_option_and_value() {
        assert!(parse(&[], &[])
            .unwrap_err()
            .contains("-server N is required"));
        assert!(parse(&["-server", "33"], &[]).unwrap_err().contains("'33'"));
        assert!(parse(&["-server", "2", "-auth", "key"], &[])
            .unwrap_err()
            .contains("IMPI_AUTH_KEY"));
        assert!(parse(&["-server", "2", "-auth", "pw"], &[])
            .unwrap_err()
            .contains("'pw'"));
        assert!(parse(&["-server", "2", "-port"], &[])
            .unwrap_err()
            .contains("needs a value"));
        assert!(parse(&["-server", "2", "-bogus"], &[])
            .unwrap_err()
            .contains("'-bogus'"));
        assert!(parse(&["-server", "2", "--timeout", "0"], &[])
            .unwrap_err()
            .contains("'0'"));
    }
}
