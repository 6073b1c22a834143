//! The IMPI relay: `impi-relay -relay RANK SERVER:PORT [-trunks K] [-net ADDR] [-port P]`,
//! and `impi-relay -trunk k -join ADDR:PORT` for the other relays of a trunked cluster.
//!
//! It runs on a front-end with a private and a global side and lets a cluster whose
//! hosts have private addresses join an IMPI job: towards the IMPI server and the other
//! clients it is client RANK with ONE host holding all of the cluster's processes;
//! towards the cluster it is the IMPI server, and every other client is ONE host at the
//! relay's private address. It relays the startup dialogue rewriting the tables
//! ([`rewrite`], [`startup`]), then the packets between the hosts of both sides
//! rewriting `pk_src`/`pk_dest` ([`topology`], [`router`]). With K relays ([`trunk`]),
//! the cluster is K hosts outside and every other client K virtual hosts inside, each
//! relay standing for one of them. All protocol logic is sans-IO;
//! [`io`] is the poll loop. See docs/impi-relay.md.

pub mod io;
pub mod options;
pub mod rewrite;
pub mod router;
pub mod secure;
pub mod splice;
pub mod startup;
pub mod survive;
#[cfg(test)]
mod testing;
pub mod topology;
pub mod trunk;

use options::Options;
use std::io::Write;

/// Entry point of `impi-relay` with its arguments (argv[0] excluded); returns the exit status.
pub fn main(args: Vec<String>) -> i32 {
    let opts = match Options::parse(&args, &|k| std::env::var(k).ok()) {
        Ok(o) => o,
        Err(msg) => {
            if args
                .iter()
                .any(|a| a == "-h" || a == "--help" || a == "-help")
            {
                println!("{msg}");
                return 0;
            }
            eprintln!("{msg}");
            return 2;
        }
    };
    if opts.join.is_some() {
        return match io::run_member(&opts) {
            Ok(()) => 0,
            Err(msg) => {
                eprintln!("{msg}");
                1
            }
        };
    }
    let (listener, shown) = match io::bind(&opts) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("impi-relay: cannot listen on port {}: {e}", opts.port);
            return 1;
        }
    };
    let mut out = std::io::stdout();
    if writeln!(out, "{shown}").and_then(|_| out.flush()).is_err() {
        eprintln!("impi-relay: cannot print the address {shown} on standard output");
        return 1;
    }
    match io::run(listener, shown.ip(), &opts) {
        Ok(()) => 0,
        Err(msg) => {
            eprintln!("{msg}");
            1
        }
    }
}
