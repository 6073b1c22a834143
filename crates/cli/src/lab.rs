//! `crossmpi lab`: runs the Python crossmpi lab (Mininet-based), which lives in
//! `lab/` in the source tree and in `PREFIX/lib/crossmpi/python` once installed.

use std::path::Path;
use std::process::Command;

pub fn main(prefix: &Path, args: Vec<String>) -> i32 {
    let installed = prefix.join("lib/crossmpi/python");
    let python = std::env::var("CROSSMPI_PYTHON").unwrap_or_else(|_| "/usr/bin/python3".into());
    let mut path = installed.display().to_string();
    if let Ok(old) = std::env::var("PYTHONPATH") {
        path = format!("{path}:{old}");
    }
    match Command::new(&python)
        .args(["-m", "crossmpi_lab"])
        .args(&args)
        .env("PYTHONPATH", path)
        .env("CROSSMPI_PREFIX", prefix)
        .status()
    {
        Ok(s) => s.code().unwrap_or(1),
        Err(e) => {
            eprintln!("crossmpi lab: cannot run {python}: {e}");
            127
        }
    }
}
