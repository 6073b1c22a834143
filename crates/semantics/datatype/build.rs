//! Compiles `shim/extended_float.c` (reductions on `long double` and `__float128`, which
//! Rust cannot express) with the system C compiler and archives it for static linking.
//! No `cc` crate: one compiler call and one `ar` call are all it takes.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn run(cmd: &mut Command) {
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(status.success(), "{cmd:?} failed with {status}");
}

fn main() {
    let src = "shim/extended_float.c";
    println!("cargo:rerun-if-changed={src}");
    println!("cargo:rerun-if-env-changed=CC");
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let obj = out.join("extended_float.o");
    let cc = env::var("CC").unwrap_or_else(|_| "cc".into());
    run(Command::new(cc)
        .args(["-O2", "-fPIC", "-Wall", "-Werror", "-c", src, "-o"])
        .arg(&obj));
    run(Command::new("ar")
        .arg("crs")
        .arg(out.join("libcrossmpi_extended_float.a"))
        .arg(&obj));
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=crossmpi_extended_float");
}
