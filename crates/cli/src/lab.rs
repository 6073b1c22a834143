//! `crossmpi lab`: runs the Python crossmpi lab (network namespaces), which lives in
//! `lab/` in the source tree and in `PREFIX/lib/crossmpi/python` once installed. The
//! Python process replaces this one (exec), so `crossmpi lab exec` used as mpirun's
//! launch agent *is* the rank it starts: a signal that kills the rank is what mpirun sees.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

pub fn main(prefix: &Path, args: Vec<String>) -> i32 {
    let installed = prefix.join("lib/crossmpi/python");
    let python = std::env::var("CROSSMPI_PYTHON").unwrap_or_else(|_| "/usr/bin/python3".into());
    let mut path = installed.display().to_string();
    if let Ok(old) = std::env::var("PYTHONPATH") {
        path = format!("{path}:{old}");
    }
    let err = Command::new(&python)
        .args(["-m", "crossmpi_lab"])
        .args(&args)
        .env("PYTHONPATH", path)
        .env("CROSSMPI_PREFIX", prefix)
        .exec();
    eprintln!("crossmpi lab: cannot run {python}: {err}");
    127
}
