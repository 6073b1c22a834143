//! Host lists (`--host`, `--hostfile`), which hosts are this machine, and rank placement.

/// A host and how many ranks it takes per round (`None`: one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSpec {
    pub name: String,
    pub slots: Option<usize>,
}

fn host_with_slots(word: &str) -> Result<HostSpec, String> {
    let (name, slots) = match word.rsplit_once(':') {
        // `::1` and other IPv6 literals hold colons: only a numeric tail counts as slots.
        Some((n, s)) if !n.is_empty() && !n.ends_with(':') => {
            let slots = s.parse::<usize>().ok().filter(|&s| s > 0);
            (
                n,
                Some(slots.ok_or_else(|| {
                    format!("host {word:?}: slots {s:?} is not a positive whole number")
                })?),
            )
        }
        _ => (word, None),
    };
    if name.is_empty() {
        return Err(format!("empty host name in {word:?}"));
    }
    Ok(HostSpec {
        name: name.to_string(),
        slots,
    })
}

/// `h1:2,h2` → two hosts, the first with 2 slots.
pub fn parse_host_list(list: &str) -> Result<Vec<HostSpec>, String> {
    list.split(',')
        .filter(|w| !w.trim().is_empty())
        .map(|w| host_with_slots(w.trim()))
        .collect()
}

/// Hostfile text: one host per line, `host`, `host:N` or `host slots=N` (other
/// `key=value` words such as `max_slots=` are ignored); `#` starts a comment.
pub fn parse_hostfile(text: &str) -> Result<Vec<HostSpec>, String> {
    let mut hosts = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { continue };
        let mut host = host_with_slots(first).map_err(|e| format!("line {}: {e}", n + 1))?;
        for word in words {
            if let Some(v) = word.strip_prefix("slots=") {
                let slots = v.parse::<usize>().ok().filter(|&s| s > 0);
                host.slots = Some(slots.ok_or_else(|| {
                    format!("line {}: slots={v:?} is not a positive whole number", n + 1)
                })?);
            }
        }
        hosts.push(host);
    }
    Ok(hosts)
}

pub fn read_hostfile(path: &str) -> Result<Vec<HostSpec>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("cannot read hostfile {path:?}: {e}"))?;
    parse_hostfile(&text).map_err(|e| format!("hostfile {path:?}: {e}"))
}

/// This machine's host name as the kernel knows it.
pub fn local_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Whether `name` is this machine: `localhost`, a loopback literal, or its host name
/// (with or without domain).
pub fn is_local(name: &str, hostname: &str) -> bool {
    let short = |h: &str| h.split('.').next().unwrap_or("").to_string();
    matches!(name, "localhost" | "127.0.0.1" | "::1")
        || (!hostname.is_empty()
            && (name == hostname || short(name) == short(hostname) && !short(name).is_empty()))
}

/// The host of each of `np` ranks: hosts are filled in order, each with its slots,
/// and the list is reused from the start when it has fewer slots than ranks
/// (oversubscription is never refused). No hosts: every rank on `localhost`.
pub fn place(np: usize, hosts: &[HostSpec]) -> Vec<String> {
    if hosts.is_empty() {
        return vec!["localhost".to_string(); np];
    }
    hosts
        .iter()
        .flat_map(|h| (0..h.slots.unwrap_or(1)).map(|_| h.name.clone()))
        .cycle()
        .take(np)
        .collect()
}

/// The default rank count: the slots of the hosts given, or 1.
pub fn total_slots(hosts: &[HostSpec]) -> usize {
    hosts
        .iter()
        .map(|h| h.slots.unwrap_or(1))
        .sum::<usize>()
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(name: &str, slots: Option<usize>) -> HostSpec {
        HostSpec {
            name: name.into(),
            slots,
        }
    }

    #[test]
    fn host_lists_and_hostfiles() {
        assert_eq!(
            parse_host_list("a:2,b, c:1").unwrap(),
            vec![h("a", Some(2)), h("b", None), h("c", Some(1))]
        );
        assert_eq!(parse_host_list("::1").unwrap(), vec![h("::1", None)]);
        assert!(parse_host_list("a:0").is_err());
        let text = "# cluster\nn1 slots=4 max_slots=8\n\n n2:2 # two\nn3\n";
        assert_eq!(
            parse_hostfile(text).unwrap(),
            vec![h("n1", Some(4)), h("n2", Some(2)), h("n3", None)]
        );
        let e = parse_hostfile("n1\nn2 slots=x\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("\"x\""), "{e}");
    }

    #[test]
    fn placement_fills_slots_in_order_then_wraps() {
        let hosts = [h("a", Some(2)), h("b", None)];
        assert_eq!(place(3, &hosts), ["a", "a", "b"]);
        assert_eq!(place(5, &hosts), ["a", "a", "b", "a", "a"]);
        assert_eq!(place(2, &[]), ["localhost", "localhost"]);
        assert_eq!(total_slots(&hosts), 3);
        assert_eq!(total_slots(&[]), 1);
    }

    #[test]
    fn local_names() {
        assert!(is_local("localhost", "vm"));
        assert!(is_local("127.0.0.1", "vm"));
        assert!(is_local("vm", "vm.example.org"));
        assert!(is_local("vm.example.org", "vm"));
        assert!(!is_local("127.0.0.2", "vm"));
        assert!(!is_local("node7", "vm"));
        assert!(!is_local("", ""));
    }
}
