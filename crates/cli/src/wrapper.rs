//! Compiler wrappers: `mpicc`, `mpicxx`, `mpifort` (and the `mpif77`/`mpif90` names).
//!
//! They add crossmpi's include and library paths (with an rpath, so programs find
//! `libmpi.so` without `LD_LIBRARY_PATH`) to the underlying compiler's command line.
//! `-show` prints the command instead of running it. The underlying compiler can be
//! overridden with `CROSSMPI_CC`, `CROSSMPI_CXX` and `CROSSMPI_FC` (defaults: `cc`,
//! `c++`, `gfortran`), the names Open MPI's and MPICH's users know as `OMPI_CC`/`MPICH_CC`.

use std::path::Path;
use std::process::Command;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    C,
    Cxx,
    Fortran,
}

impl Language {
    pub fn from_tool(name: &str) -> Option<Language> {
        match name {
            "mpicc" => Some(Language::C),
            "mpicxx" | "mpic++" | "mpiCC" => Some(Language::Cxx),
            "mpifort" | "mpif90" | "mpif77" => Some(Language::Fortran),
            _ => None,
        }
    }

    fn compiler(self) -> String {
        let (var, default) = match self {
            Language::C => ("CROSSMPI_CC", "cc"),
            Language::Cxx => ("CROSSMPI_CXX", "c++"),
            Language::Fortran => ("CROSSMPI_FC", "gfortran"),
        };
        std::env::var(var).unwrap_or_else(|_| default.to_string())
    }
}

/// True when the arguments only compile or preprocess, so no link flags are needed.
fn compile_only(args: &[String]) -> bool {
    args.iter()
        .any(|a| a == "-c" || a == "-E" || a == "-S" || a == "-M" || a == "-MM")
}

pub fn command_line(prefix: &Path, lang: Language, user_args: &[String]) -> Vec<String> {
    let inc = prefix.join("include");
    let lib = prefix.join("lib");
    let mut cmd = vec![lang.compiler(), format!("-I{}", inc.display())];
    if lang == Language::Fortran {
        cmd.push(format!("-I{}", lib.join("fortran").display()));
    }
    cmd.extend(user_args.iter().cloned());
    if !compile_only(user_args) {
        cmd.push(format!("-L{}", lib.display()));
        cmd.push(format!("-Wl,-rpath,{}", lib.display()));
        if lang == Language::Fortran {
            cmd.push("-lmpifort".to_string());
        }
        cmd.push("-lmpi".to_string());
    }
    cmd
}

pub fn main(prefix: &Path, lang: Language, args: Vec<String>) -> i32 {
    let show = args
        .iter()
        .any(|a| a == "-show" || a == "--show" || a == "-showme");
    let user: Vec<String> = args
        .into_iter()
        .filter(|a| a != "-show" && a != "--show" && a != "-showme")
        .collect();
    let cmd = command_line(prefix, lang, &user);
    if show {
        println!("{}", cmd.join(" "));
        return 0;
    }
    match Command::new(&cmd[0]).args(&cmd[1..]).status() {
        Ok(status) => status.code().unwrap_or(1),
        Err(e) => {
            eprintln!("crossmpi: cannot run compiler '{}': {e}", cmd[0]);
            127
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_against_the_prefix_library_with_rpath() {
        let cmd = command_line(Path::new("/opt/x"), Language::C, &["a.c".into()]);
        assert!(cmd.contains(&"-I/opt/x/include".to_string()));
        assert!(cmd.contains(&"-Wl,-rpath,/opt/x/lib".to_string()));
        assert_eq!(cmd.last().unwrap(), "-lmpi");
    }

    #[test]
    fn compile_only_adds_no_link_flags() {
        let cmd = command_line(
            Path::new("/p"),
            Language::Cxx,
            &["-c".into(), "a.cc".into()],
        );
        assert!(!cmd.iter().any(|a| a.starts_with("-L") || a == "-lmpi"));
    }
}
