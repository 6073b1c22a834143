//! What each rank is started as: its environment, its program path, and for other
//! hosts the launch-agent command line (ssh form: `AGENT... HOST env VAR=VALUE ...
//! /abs/program args`).

use std::net::{IpAddr, ToSocketAddrs, UdpSocket};
use std::path::{Path, PathBuf};

/// Where crossmpi's `libmpi_abi.so.1` lives: `PREFIX/lib`, PREFIX being the parent of
/// the folder holding the running binary.
pub fn lib_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?.canonicalize().ok()?;
    Some(exe.parent()?.parent()?.join("lib"))
}

/// `dir` in front of a colon-separated search path.
pub fn prepend_path(dir: &Path, existing: Option<&str>) -> String {
    match existing.filter(|e| !e.is_empty()) {
        Some(e) => format!("{}:{e}", dir.display()),
        None => dir.display().to_string(),
    }
}

/// The program as an absolute path: a path with a `/` is taken relative to the
/// working directory of the ranks; a bare name is looked up in `path_var`, and kept as
/// is when not found there (the rank's own PATH may still find it).
pub fn resolve_program(program: &str, wdir: &Path, path_var: Option<&str>) -> PathBuf {
    if program.contains('/') {
        return wdir.join(program);
    }
    path_var
        .unwrap_or("")
        .split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(program))
}

/// Quotes `word` for a POSIX shell (what ssh hands its command line to).
pub fn shell_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The variables of mpirun's environment that a rank on another host receives besides
/// `-x`/`--env` ones: every `CROSSMPI_*`, the IMPI client's `IMPI_AUTH_*` and
/// `IMPI_HOST_NAME`, and PATH.
pub fn forwarded_to_remote(vars: impl Iterator<Item = (String, String)>) -> Vec<(String, String)> {
    vars.filter(|(k, _)| {
        k.starts_with("CROSSMPI_")
            || k.starts_with("IMPI_AUTH_")
            || k == "IMPI_HOST_NAME"
            || k == "PATH"
    })
    .collect()
}

/// `AGENT... HOST env VAR=VALUE ... PROGRAM ARGS...`; every word after HOST is
/// shell-quoted when the agent is ssh (ssh joins them into one shell command line),
/// and passed unchanged otherwise.
pub fn remote_argv(
    agent: &[String],
    host: &str,
    env: &[(String, String)],
    program: &Path,
    args: &[String],
) -> Vec<String> {
    let mut command = vec!["env".to_string()];
    command.extend(env.iter().map(|(k, v)| format!("{k}={v}")));
    command.push(program.display().to_string());
    command.extend(args.iter().cloned());
    let is_ssh = agent
        .first()
        .and_then(|a| Path::new(a).file_name())
        .is_some_and(|n| n == "ssh");
    if is_ssh {
        command = command.iter().map(|w| shell_quote(w)).collect();
    }
    let mut argv = agent.to_vec();
    argv.push(host.to_string());
    argv.extend(command);
    argv
}

/// The address of mpirun that ranks on `host` reach: `CROSSMPI_MPIRUN_ADDR` when given,
/// else the address of the local interface the kernel routes `host`'s address through.
pub fn pmi_address_for(host: &str, configured: Option<&str>) -> Result<IpAddr, String> {
    if let Some(a) = configured {
        return a
            .trim()
            .parse()
            .map_err(|_| format!("CROSSMPI_MPIRUN_ADDR={a:?} is not an IP address"));
    }
    let target = (host, 9)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve host {host:?} ({e}); set CROSSMPI_MPIRUN_ADDR"))?
        .next()
        .ok_or_else(|| format!("host {host:?} has no address; set CROSSMPI_MPIRUN_ADDR"))?;
    let bind: IpAddr = if target.is_ipv4() {
        [0, 0, 0, 0].into()
    } else {
        [0u16; 8].into()
    };
    // Connecting a UDP socket sends nothing; it only asks the kernel for the route.
    let socket =
        UdpSocket::bind((bind, 0)).map_err(|e| format!("route lookup for {host:?}: {e}"))?;
    socket
        .connect(target)
        .map_err(|e| format!("no route to host {host:?} ({target}): {e}"))?;
    socket
        .local_addr()
        .map(|a| a.ip())
        .map_err(|e| format!("route lookup for {host:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_a_shell() {
        for word in [
            "plain",
            "two words",
            "it's",
            "$HOME",
            "a\"b",
            "",
            "x;rm -rf y",
        ] {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("printf %s {}", shell_quote(word)))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), word);
        }
    }

    #[test]
    fn remote_command_lines() {
        let env = vec![("A".to_string(), "1 2".to_string())];
        let prog = Path::new("/bin/prog");
        let args = vec!["x y".to_string()];
        let ssh = remote_argv(&["ssh".into(), "-x".into()], "n1", &env, prog, &args);
        assert_eq!(
            ssh,
            ["ssh", "-x", "n1", "env", "'A=1 2'", "/bin/prog", "'x y'"]
        );
        let lab = remote_argv(
            &["crossmpi".into(), "lab".into(), "exec".into()],
            "n1",
            &env,
            prog,
            &args,
        );
        assert_eq!(
            lab,
            [
                "crossmpi",
                "lab",
                "exec",
                "n1",
                "env",
                "A=1 2",
                "/bin/prog",
                "x y"
            ]
        );
    }

    #[test]
    fn program_resolution_and_paths() {
        assert_eq!(
            resolve_program("./a.out", Path::new("/w"), None),
            Path::new("/w/./a.out")
        );
        assert_eq!(
            resolve_program("/bin/sh", Path::new("/w"), None),
            Path::new("/bin/sh")
        );
        assert_eq!(
            resolve_program("sh", Path::new("/w"), Some("/nonexistent:/bin")),
            Path::new("/bin/sh")
        );
        assert_eq!(
            resolve_program("no-such-prog", Path::new("/w"), Some("/bin")),
            Path::new("no-such-prog")
        );
        assert_eq!(prepend_path(Path::new("/p/lib"), Some("/x")), "/p/lib:/x");
        assert_eq!(prepend_path(Path::new("/p/lib"), Some("")), "/p/lib");
        let vars = vec![
            ("PATH".into(), "/bin".into()),
            ("HOME".into(), "/h".into()),
            ("CROSSMPI_X".into(), "1".into()),
        ];
        assert_eq!(forwarded_to_remote(vars.into_iter()).len(), 2);
    }

    #[test]
    fn address_selection() {
        assert_eq!(
            pmi_address_for("127.0.0.2", None).unwrap().to_string(),
            "127.0.0.1"
        );
        assert_eq!(
            pmi_address_for("x", Some("10.1.2.3")).unwrap().to_string(),
            "10.1.2.3"
        );
        assert!(pmi_address_for("x", Some("nope"))
            .unwrap_err()
            .contains("CROSSMPI_MPIRUN_ADDR"));
        assert!(pmi_address_for("no-such-host.invalid", None)
            .unwrap_err()
            .contains("CROSSMPI_MPIRUN_ADDR"));
    }
}
