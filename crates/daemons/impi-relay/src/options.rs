//! Command-line options of `impi-relay`, in GridMPI's single-dash form or with `--`, and
//! the relay's tunables.

use crate::router::RouterConfig;
use crate::survive::DEFAULT_SURVIVE;
use crate::trunk::{TrunkMode, Trunking, MAX_TRUNKS};
use crossmpi_impi::wire::startup::MAX_CLIENTS;
use crossmpi_impi::wire::Limits;
use crossmpi_tcp::{Congestion, IMPI_CONGESTION_VAR};
use std::net::IpAddr;
use std::time::Duration;

pub const USAGE: &str = "usage: impi-relay -relay RANK SERVER:PORT [-trunks K] [-net PRIVATE_ADDR]
                  [-port P] [--global-addr ADDR] [-encrypt] [-v]
       impi-relay -trunk k -join ADDR:PORT [-net PRIVATE_ADDR] [--global-addr ADDR] [-v]
  -relay RANK SERVER:PORT  stand in for IMPI client RANK towards the IMPI server at
                   SERVER:PORT; the private cluster runs `mpirun -client RANK ADDR:PORT`
                   with the ADDR:PORT this relay prints
  -trunks K        the cluster has K relays (default 1), each on its own front-end; this
                   one is trunk 0 and waits for the others before starting
  -trunk-mode destination|source  with -trunks: which relay a packet takes: the one
                   standing for its destination (default; any IMPI inside), or the one of
                   its inside process both ways (symmetric; needs crossmpi inside)
  -trunk k -join ADDR:PORT  be trunk k (1..K) of the cluster whose trunk 0 printed
                   ADDR:PORT
  -net ADDR        the relay's address on the private network: it listens there and
                   the cluster's hosts reach it there (default: listen on all addresses
                   and use this host's first non-loopback address)
  -port P          the port the cluster's agent connects to (default 0: any free port)
  --global-addr ADDR  the address outside hosts reach the relay at (default: the
                   address this host uses to reach the IMPI server)
  -encrypt         encrypt and authenticate the connections to the other clients, which
                   must all be relays with -encrypt; keyed from IMPI_AUTH_KEY, which the
                   IMPI server must ask for (-auth key) (also CROSSMPI_RELAY_ENCRYPT=1;
                   the other trunks follow trunk 0)
  -v               log every step to standard error
The first line of standard output is the ADDR:PORT for `mpirun -client RANK`.";

/// Default of `CROSSMPI_RELAY_CONNECT_TIMEOUT`: how long the relay retries reaching the
/// IMPI server and the hosts it connects to. Thirty seconds covers a server started a
/// little after the relay and hosts still opening their ports; a longer wait only delays
/// the error when one is unreachable.
pub const DEFAULT_CONNECT_SECS: u64 = 30;

/// Default of `CROSSMPI_RELAY_BUFFER`: bytes queued towards one connection before its
/// sources stop being read. 256 KiB keeps a 1 Gbit/s link busy across 2 ms of the
/// receiver not reading, while 100 connections cost at most 25 MiB.
pub const DEFAULT_BUFFER: usize = 256 << 10;

/// Default of `CROSSMPI_RELAY_SPLICE`: whether packet data between plain host
/// connections moves with splice(2) instead of through the relay's buffers. Off: on
/// loopback it measured no faster than the one copy (docs/impi-relay.md, "Measured"),
/// and copying keeps one path for all data.
pub const DEFAULT_SPLICE: bool = false;

/// Default of `CROSSMPI_RELAY_TRUNK_TIMEOUT`: how long trunk 0 waits for the other
/// trunks to join (and each to answer during startup). A minute covers relays started
/// by hand on several front-ends; a trunk that never comes should not hang the job.
pub const DEFAULT_TRUNK_SECS: u64 = 60;

/// Default of `CROSSMPI_RELAY_SPIN_US`: how long after its last activity the relay keeps
/// polling its sockets (yielding the processor between polls) before it sleeps in
/// poll(2). Waking a process that sleeps costs tens of microseconds on a virtual
/// machine whose idle processor has halted (35 us measured on the 2-core test machine,
/// against a 10 us budget per hop), while a request-reply exchange through the relay
/// comes back well within 200 us; yielding leaves the processor to other work.
pub const DEFAULT_SPIN_US: u64 = 200;

#[derive(Debug, Clone)]
pub struct Options {
    /// The client rank and the IMPI server (a joining trunk learns both from trunk 0).
    pub rank: u32,
    pub server: String,
    /// The cluster's relay count and this relay's index among them.
    pub ntrunks: u32,
    pub trunk: u32,
    pub trunk_mode: TrunkMode,
    /// Trunk 0's agent port, for a trunk k > 0.
    pub join: Option<String>,
    pub trunk_timeout: Duration,
    pub net: Option<IpAddr>,
    pub port: u16,
    pub global_addr: Option<IpAddr>,
    pub verbose: bool,
    /// Trunk 0: encrypt the outside connections (the other trunks learn it from the
    /// tables).
    pub encrypt: bool,
    /// The job's key (`IMPI_AUTH_KEY`), which keys the encryption.
    pub key: Option<u64>,
    /// Move packet data between plain host connections with splice(2)
    /// (`CROSSMPI_RELAY_SPLICE`).
    pub splice: bool,
    /// Trunk 0 with 2 or more trunks: mark the cluster survivable
    /// (`CROSSMPI_RELAY_SURVIVE`; the other trunks follow the tables).
    pub survive: bool,
    pub connect_timeout: Duration,
    /// How long after its last activity the relay polls before sleeping
    /// (`CROSSMPI_RELAY_SPIN_US`).
    pub spin: Duration,
    pub router: RouterConfig,
    pub limits: Limits,
    /// The TCP congestion control of the data connections
    /// (`CROSSMPI_IMPI_TCP_CONGESTION`, shared with the ranks; why cubic:
    /// `crossmpi_tcp::Congestion`).
    pub congestion: Congestion,
}

fn value<'a>(it: &mut impl Iterator<Item = &'a String>, flag: &str) -> Result<&'a str, String> {
    it.next()
        .map(String::as_str)
        .ok_or_else(|| format!("impi-relay: option {flag} needs a value"))
}

fn ip(text: &str, flag: &str) -> Result<IpAddr, String> {
    text.parse()
        .map_err(|_| format!("impi-relay: {flag}: '{text}' is not an IP address"))
}

fn number<T: std::str::FromStr + PartialOrd>(
    env: &dyn Fn(&str) -> Option<String>,
    name: &str,
    default: T,
    min: T,
) -> Result<T, String> {
    match env(name) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse::<T>()
            .ok()
            .filter(|n| *n >= min)
            .ok_or_else(|| format!("impi-relay: {name}={v:?} is not a whole number that large")),
    }
}

/// An on/off tunable: `0` or `1` (None when unset).
fn switch(env: &dyn Fn(&str) -> Option<String>, name: &str) -> Result<Option<bool>, String> {
    match env(name).as_deref().map(str::trim) {
        None => Ok(None),
        Some("0") => Ok(Some(false)),
        Some("1") => Ok(Some(true)),
        Some(v) => Err(format!("impi-relay: {name}={v:?} is not 0 or 1")),
    }
}

impl Options {
    /// This relay's place among the cluster's relays.
    pub fn trunking(&self) -> Trunking {
        Trunking {
            trunk: self.trunk,
            ntrunks: self.ntrunks,
            mode: self.trunk_mode,
        }
    }

    /// Parses the arguments (argv[0] excluded); `env` looks up environment variables.
    pub fn parse(args: &[String], env: &dyn Fn(&str) -> Option<String>) -> Result<Options, String> {
        let mut relay = None;
        let mut ntrunks = None;
        let mut member = None;
        let mut join = None;
        let mut trunk_mode = None;
        let mut net = None;
        let mut port = 0u16;
        let mut global_addr = None;
        let mut verbose = false;
        let mut encrypt_flag = false;
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            let flag = arg.trim_start_matches('-');
            if !arg.starts_with('-') || flag.is_empty() {
                return Err(format!("impi-relay: unexpected argument '{arg}'\n{USAGE}"));
            }
            match flag {
                "relay" => {
                    let r = value(&mut it, arg)?;
                    let rank = r.parse::<u32>().ok().filter(|&n| n < MAX_CLIENTS).ok_or_else(|| {
                        format!("impi-relay: -relay: '{r}' is not a client rank in 0..{MAX_CLIENTS}")
                    })?;
                    let server = value(&mut it, arg)?;
                    if !server.contains(':') {
                        return Err(format!("impi-relay: -relay: '{server}' is not SERVER:PORT"));
                    }
                    relay = Some((rank, server.to_string()));
                }
                "trunks" => {
                    let v = value(&mut it, arg)?;
                    ntrunks = Some(v.parse::<u32>().ok().filter(|k| (1..=MAX_TRUNKS).contains(k)).ok_or_else(
                        || format!("impi-relay: -trunks: '{v}' is not a trunk count in 1..={MAX_TRUNKS}"),
                    )?);
                }
                "trunk" => {
                    let v = value(&mut it, arg)?;
                    member = Some(v.parse::<u32>().ok().filter(|k| (1..MAX_TRUNKS).contains(k)).ok_or_else(
                        || format!("impi-relay: -trunk: '{v}' is not a trunk index in 1..{MAX_TRUNKS}"),
                    )?);
                }
                "trunk-mode" => {
                    trunk_mode = Some(match value(&mut it, arg)? {
                        "destination" => TrunkMode::Destination,
                        "source" => TrunkMode::Source,
                        v => {
                            return Err(format!(
                                "impi-relay: -trunk-mode: '{v}' is not destination or source"
                            ))
                        }
                    })
                }
                "join" => {
                    let v = value(&mut it, arg)?;
                    if !v.contains(':') {
                        return Err(format!("impi-relay: -join: '{v}' is not ADDR:PORT"));
                    }
                    join = Some(v.to_string());
                }
                "net" => net = Some(ip(value(&mut it, arg)?, arg)?),
                "port" => {
                    let v = value(&mut it, arg)?;
                    port = v.parse().map_err(|_| {
                        format!("impi-relay: -port: '{v}' is not a port in 0..=65535")
                    })?;
                }
                "global-addr" => global_addr = Some(ip(value(&mut it, arg)?, arg)?),
                "v" | "verbose" => verbose = true,
                "encrypt" => encrypt_flag = true,
                "h" | "help" => return Err(USAGE.to_string()),
                _ => return Err(format!("impi-relay: unknown option '{arg}'\n{USAGE}")),
            }
        }
        let (rank, server, ntrunks, trunk) = match (relay, member, &join) {
            (Some((rank, server)), None, None) => (rank, server, ntrunks.unwrap_or(1), 0),
            (None, Some(trunk), Some(_)) if ntrunks.is_none() && trunk_mode.is_none() => {
                (0, String::new(), 0, trunk)
            }
            (None, None, None) => {
                return Err(format!(
                    "impi-relay: -relay RANK SERVER:PORT is required\n{USAGE}"
                ))
            }
            _ => {
                return Err(format!(
                    "impi-relay: use either -relay RANK SERVER:PORT [-trunks K] or \
                     -trunk k -join ADDR:PORT\n{USAGE}"
                ))
            }
        };
        if encrypt_flag && join.is_some() {
            return Err(
                "impi-relay: -encrypt is trunk 0's choice (-relay); the other trunks follow it"
                    .into(),
            );
        }
        let encrypt = join.is_none()
            && (switch(env, "CROSSMPI_RELAY_ENCRYPT")? == Some(true) || encrypt_flag);
        let key = match env("IMPI_AUTH_KEY") {
            Some(text) => Some(
                crossmpi_impi::startup::client::parse_key(&text)
                    .map_err(|e| format!("impi-relay: {e}"))?,
            ),
            None if encrypt => {
                return Err("impi-relay: -encrypt needs the job's key in IMPI_AUTH_KEY \
                            (the IMPI server's -auth key)"
                    .into())
            }
            None => None,
        };
        let splice = switch(env, "CROSSMPI_RELAY_SPLICE")?.unwrap_or(DEFAULT_SPLICE);
        let survive = switch(env, "CROSSMPI_RELAY_SURVIVE")?.unwrap_or(DEFAULT_SURVIVE);
        let connect = number(
            env,
            "CROSSMPI_RELAY_CONNECT_TIMEOUT",
            DEFAULT_CONNECT_SECS,
            1,
        )?;
        let send_buffer = number(env, "CROSSMPI_RELAY_BUFFER", DEFAULT_BUFFER, 4096)?;
        let trunk_secs = number(env, "CROSSMPI_RELAY_TRUNK_TIMEOUT", DEFAULT_TRUNK_SECS, 1)?;
        let spin_us = number(env, "CROSSMPI_RELAY_SPIN_US", DEFAULT_SPIN_US, 0)?;
        let limits = Limits::from_var(env("CROSSMPI_IMPI_MAX_MSG").as_deref())
            .map_err(|e| format!("impi-relay: {e}"))?;
        let congestion =
            Congestion::from_var(IMPI_CONGESTION_VAR, env(IMPI_CONGESTION_VAR).as_deref())
                .map_err(|e| format!("impi-relay: {e}"))?;
        Ok(Options {
            rank,
            server,
            ntrunks,
            trunk,
            trunk_mode: trunk_mode.unwrap_or_default(),
            join,
            trunk_timeout: Duration::from_secs(trunk_secs),
            net,
            port,
            global_addr,
            verbose,
            encrypt,
            key,
            splice,
            survive,
            connect_timeout: Duration::from_secs(connect),
            spin: Duration::from_micros(spin_us),
            router: RouterConfig {
                send_buffer,
                ..RouterConfig::default()
            },
            limits,
            congestion,
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
    fn gridmpi_form_and_defaults() {
        let o = parse(
            &[
                "-relay",
                "1",
                "10.0.0.1:4000",
                "-net",
                "192.168.1.1",
                "-port",
                "9000",
                "-v",
            ],
            &[],
        )
        .unwrap();
        assert_eq!(
            (o.rank, o.server.as_str(), o.port, o.verbose),
            (1, "10.0.0.1:4000", 9000, true)
        );
        assert_eq!(o.net, Some("192.168.1.1".parse().unwrap()));
        assert_eq!(o.global_addr, None);
        assert_eq!(o.router.send_buffer, DEFAULT_BUFFER);
        assert_eq!((o.ntrunks, o.trunk, o.join.as_deref()), (1, 0, None));
        assert_eq!(o.connect_timeout, Duration::from_secs(30));
        assert_eq!(o.splice, DEFAULT_SPLICE);
        assert_eq!(o.survive, DEFAULT_SURVIVE);
        assert_eq!(o.congestion, Congestion::default());
        let kernel = [("CROSSMPI_IMPI_TCP_CONGESTION", "kernel")];
        let o = parse(&["-relay", "1", "a:1"], &kernel).unwrap();
        assert_eq!(o.congestion, Congestion::Kernel);
        for (v, want) in [("0", false), ("1", true)] {
            let env = [("CROSSMPI_RELAY_SPLICE", v), ("CROSSMPI_RELAY_SURVIVE", v)];
            let o = parse(&["-relay", "1", "a:1"], &env).unwrap();
            assert_eq!((o.splice, o.survive), (want, want));
        }
        let e = parse(
            &["-relay", "1", "a:1"],
            &[("CROSSMPI_RELAY_SURVIVE", "yes")],
        )
        .unwrap_err();
        assert!(
            e.contains("CROSSMPI_RELAY_SURVIVE=\"yes\" is not 0 or 1"),
            "{e}"
        );
        let o = parse(
            &["--relay", "0", "h:1", "--global-addr", "::1"],
            &[
                ("CROSSMPI_RELAY_BUFFER", "8192"),
                ("CROSSMPI_RELAY_CONNECT_TIMEOUT", "3"),
            ],
        )
        .unwrap();
        assert_eq!(o.global_addr, Some("::1".parse().unwrap()));
        assert_eq!(
            (o.router.send_buffer, o.connect_timeout.as_secs()),
            (8192, 3)
        );
    }

    #[test]
    fn trunk_forms() {
        let o = parse(&["-relay", "2", "s:1", "-trunks", "4"], &[]).unwrap();
        assert_eq!((o.rank, o.ntrunks, o.trunk), (2, 4, 0));
        assert_eq!(o.trunk_mode, TrunkMode::Destination);
        let o = parse(
            &[
                "-relay",
                "2",
                "s:1",
                "-trunks",
                "2",
                "-trunk-mode",
                "source",
            ],
            &[],
        )
        .unwrap();
        assert_eq!(o.trunk_mode, TrunkMode::Source);
        assert_eq!(o.trunk_timeout, Duration::from_secs(DEFAULT_TRUNK_SECS));
        let o = parse(
            &["-trunk", "3", "-join", "10.0.0.1:900"],
            &[("CROSSMPI_RELAY_TRUNK_TIMEOUT", "5")],
        )
        .unwrap();
        assert_eq!((o.trunk, o.join.as_deref()), (3, Some("10.0.0.1:900")));
        assert_eq!(o.trunk_timeout, Duration::from_secs(5));
        for (args, want) in [
            (&["-relay", "1", "s:1", "-trunks", "0"][..], "'0'"),
            (&["-relay", "1", "s:1", "-trunks", "65"][..], "'65'"),
            (&["-trunk", "0", "-join", "a:1"][..], "'0'"),
            (&["-trunk", "1"][..], "either"),
            (
                &["-trunk", "1", "-join", "a:1", "-trunks", "2"][..],
                "either",
            ),
            (&["-relay", "1", "s:1", "-join", "a:1"][..], "either"),
            (&["-trunk", "1", "-join", "nohost"][..], "'nohost'"),
            (&["-relay", "1", "s:1", "-trunk-mode", "x"][..], "'x'"),
            (
                &["-trunk", "1", "-join", "a:1", "-trunk-mode", "source"][..],
                "either",
            ),
        ] {
            let e = parse(args, &[]).unwrap_err();
            assert!(e.contains(want), "{args:?}: {e}");
        }
    }

    #[test]
    fn encryption_needs_the_key() {
        let key = [("IMPI_AUTH_KEY", "-12")];
        let o = parse(&["-relay", "1", "s:1"], &[]).unwrap();
        assert_eq!((o.encrypt, o.key), (false, None));
        let o = parse(&["-relay", "1", "s:1", "-encrypt"], &key).unwrap();
        assert_eq!((o.encrypt, o.key), (true, Some(-12i64 as u64)));
        let env = [key[0], ("CROSSMPI_RELAY_ENCRYPT", "1")];
        assert!(parse(&["-relay", "1", "s:1"], &env).unwrap().encrypt);
        let o = parse(&["-trunk", "1", "-join", "a:1"], &env).unwrap();
        assert_eq!((o.encrypt, o.key), (false, Some(-12i64 as u64)));
        for (args, env, want) in [
            (
                &["-relay", "1", "s:1", "-encrypt"][..],
                &[][..],
                "IMPI_AUTH_KEY",
            ),
            (
                &["-relay", "1", "s:1"][..],
                &[("CROSSMPI_RELAY_ENCRYPT", "1")][..],
                "IMPI_AUTH_KEY",
            ),
            (
                &["-relay", "1", "s:1"][..],
                &[("CROSSMPI_RELAY_ENCRYPT", "yes")][..],
                "\"yes\"",
            ),
            (
                &["-relay", "1", "s:1", "-encrypt"][..],
                &[("IMPI_AUTH_KEY", "x1")][..],
                "'x1'",
            ),
            (
                &["-trunk", "1", "-join", "a:1", "-encrypt"][..],
                &key[..],
                "trunk 0's choice",
            ),
        ] {
            let e = parse(args, env).unwrap_err();
            assert!(e.contains(want), "{args:?} {env:?}: {e}");
        }
    }

    #[test]
    fn errors_name_the_option_and_value() {
        assert!(parse(&[], &[])
            .unwrap_err()
            .contains("-relay RANK SERVER:PORT is required"));
        assert!(parse(&["-relay", "32", "a:1"], &[])
            .unwrap_err()
            .contains("'32'"));
        assert!(parse(&["-relay", "1"], &[])
            .unwrap_err()
            .contains("needs a value"));
        assert!(parse(&["-relay", "1", "nohost"], &[])
            .unwrap_err()
            .contains("'nohost'"));
        assert!(parse(&["-relay", "1", "a:1", "-net", "x"], &[])
            .unwrap_err()
            .contains("'x'"));
        assert!(parse(&["-relay", "1", "a:1", "-bogus"], &[])
            .unwrap_err()
            .contains("'-bogus'"));
        let e = parse(&["-relay", "1", "a:1"], &[("CROSSMPI_RELAY_SPLICE", "on")]).unwrap_err();
        assert!(e.contains("CROSSMPI_RELAY_SPLICE=\"on\""), "{e}");
        let e = parse(&["-relay", "1", "a:1"], &[("CROSSMPI_RELAY_BUFFER", "10")]).unwrap_err();
        assert!(e.contains("CROSSMPI_RELAY_BUFFER"), "{e}");
        let bad = [("CROSSMPI_IMPI_TCP_CONGESTION", "cu bic")];
        let e = parse(&["-relay", "1", "a:1"], &bad).unwrap_err();
        assert!(e.contains("CROSSMPI_IMPI_TCP_CONGESTION=\"cu bic\""), "{e}");
    }
}
