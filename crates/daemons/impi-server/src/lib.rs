//! The IMPI server: `impi-server -server N [-port P] [-auth none|key]`.
//!
//! It prints its `address:port` as the first line of standard output, serves exactly N
//! IMPI clients through startup (authentication, ranks, every label, DONE) and waits for
//! each client's FINI, then exits 0. The protocol is the sans-IO state machine of
//! `crossmpi-impi`; this crate is the options and the I/O loop. See docs/impi.md.

pub mod options;
pub mod serve;

use options::Options;
use std::io::Write;

/// Entry point of `impi-server` with its arguments (argv[0] excluded); returns the exit status.
pub fn main(args: Vec<String>) -> i32 {
    let opts = match Options::parse(&args, &|k| std::env::var(k).ok()) {
        Ok(o) => o,
        Err(msg) => {
            let help = args
                .iter()
                .any(|a| a == "-h" || a == "--help" || a == "-help");
            if help {
                println!("{msg}");
                return 0;
            }
            eprintln!("{msg}");
            return 2;
        }
    };
    let listener = match serve::bind(&opts) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("impi-server: cannot listen on port {}: {e}", opts.port);
            return 1;
        }
    };
    match serve::advertised(&listener) {
        Ok(addr) => {
            println!("{addr}");
            let _ = std::io::stdout().flush();
        }
        Err(e) => {
            eprintln!("impi-server: cannot read the listening address: {e}");
            return 1;
        }
    }
    match serve::serve(listener, &opts) {
        Ok(()) => 0,
        Err(msg) => {
            eprintln!("{msg}");
            1
        }
    }
}
