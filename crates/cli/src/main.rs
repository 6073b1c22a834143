//! `crossmpi`: the command-line front end, one multi-call binary.
//!
//! Called by one of its installed names (`mpicc`, `mpicxx`, `mpifort`, `mpirun`,
//! `mpiexec`, `impi-server`, `impi-relay`) it acts as that tool; called as `crossmpi SUBCOMMAND`
//! it dispatches on the subcommand. One binary keeps an install relocatable: every
//! tool finds the prefix from its own path.

mod lab;
mod wrapper;

use std::path::{Path, PathBuf};

const USAGE: &str = "usage: crossmpi <command> [args]
commands:
  mpirun | mpiexec ARGS     start an MPI job (see docs/launcher.md)
  mpicc | mpicxx | mpifort  compile and link MPI programs (-show prints the command)
  impi-server ARGS          run an IMPI server (see docs/impi.md)
  impi-relay ARGS           run an IMPI relay on a front-end (see docs/impi-relay.md)
  lab ARGS                  crossmpi lab: emulated clusters and WANs (see docs/testbed.md)
  prefix                    print the installation prefix";

fn main() {
    let mut args: Vec<String> = std::env::args().collect();
    let invoked = args
        .first()
        .map(|a| tool_name(Path::new(a)))
        .unwrap_or_default();
    let tool = if invoked == "crossmpi" || invoked.is_empty() {
        if args.len() < 2 {
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
        args.remove(0);
        args[0].clone()
    } else {
        invoked
    };
    let rest: Vec<String> = args.into_iter().skip(1).collect();
    let code = match tool.as_str() {
        "mpirun" | "mpiexec" => crossmpi_mpirun::main(rest),
        "impi-server" => crossmpi_impi_server::main(rest),
        "impi-relay" => crossmpi_impi_relay::main(rest),
        "lab" => lab::main(&prefix(), rest),
        "prefix" => {
            println!("{}", prefix().display());
            0
        }
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            0
        }
        other => match wrapper::Language::from_tool(other) {
            Some(lang) => wrapper::main(&prefix(), lang, rest),
            None => {
                eprintln!("crossmpi: unknown command '{other}'\n{USAGE}");
                2
            }
        },
    };
    std::process::exit(code);
}

/// The name a tool was invoked by: the file name of argv[0].
fn tool_name(argv0: &Path) -> String {
    argv0
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The installation prefix: the parent of the `bin/` folder holding this binary.
fn prefix() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("crossmpi"));
    let exe = exe.canonicalize().unwrap_or(exe);
    exe.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}
