//! The TCP congestion control a connection asks the kernel for (`TCP_CONGESTION`).
//!
//! crossmpi's connections choose their own instead of taking the machine's default:
//! `CROSSMPI_TCP_CONGESTION` for the TCP route inside a cluster, and
//! `CROSSMPI_IMPI_TCP_CONGESTION` for the connections between clusters (read by the ranks
//! and by the relays). Both default to cubic, because BBR (the default on many machines,
//! this one included) costs crossmpi's traffic in two ways. Between clusters the traffic
//! is bursts (a round of an all-to-all arrives from several ranks at once and ends
//! together) from senders that stall whenever their process is not scheduled: BBR paces
//! at its estimate of the bottleneck's rate and keeps the bottleneck's queue near empty,
//! so every stall leaves the link idle, where cubic's standing queue at the bottleneck
//! carries the link through it. Four trunked relays behind 100 Mbit/s front-ends moved
//! 1.02 of four times one trunk's all-to-all bandwidth with cubic and 0.80-0.85 with BBR
//! (docs/impi-relay.md, "The congestion control (stop 19)"). Inside a node or a cluster,
//! BBR without the fq queueing discipline paces every send with the kernel's own timers:
//! 4 MiB messages over loopback moved 5.6 GB/s with BBR and 8.3 with cubic
//! (docs/tunables.md).

use std::io;
use std::net::TcpStream;

/// The kernel's limit on an algorithm's name, its terminating zero included
/// (`TCP_CA_NAME_MAX`).
const NAME_MAX: usize = 16;

/// The variable that chooses it for the connections between clusters, read by the ranks
/// and by the relays alike.
pub const IMPI_CONGESTION_VAR: &str = "CROSSMPI_IMPI_TCP_CONGESTION";

/// The variable that chooses it for the TCP route's connections inside a cluster.
pub const TCP_CONGESTION_VAR: &str = "CROSSMPI_TCP_CONGESTION";

/// The algorithm asked for when the variable is unset.
pub const DEFAULT_CONGESTION: &str = "cubic";

/// An algorithm's name, at most 15 bytes of printable ASCII (kept inline so that the
/// configurations that carry it stay `Copy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlgorithmName {
    bytes: [u8; NAME_MAX],
    len: u8,
}

impl AlgorithmName {
    pub fn new(name: &str) -> Option<AlgorithmName> {
        let ok =
            !name.is_empty() && name.len() < NAME_MAX && name.bytes().all(|b| b.is_ascii_graphic());
        ok.then(|| {
            let mut bytes = [0; NAME_MAX];
            bytes[..name.len()].copy_from_slice(name.as_bytes());
            AlgorithmName {
                bytes,
                len: name.len() as u8,
            }
        })
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len as usize]).expect("checked ASCII")
    }
}

/// Which congestion control a connection gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Congestion {
    /// The kernel's default (`net.ipv4.tcp_congestion_control`).
    Kernel,
    /// This algorithm if the kernel offers it, else the kernel's default: the choice
    /// when nothing was asked for, which must not stop a job.
    Prefer(AlgorithmName),
    /// This algorithm; a connection that cannot have it is an error.
    Require(AlgorithmName),
}

impl Default for Congestion {
    fn default() -> Congestion {
        Congestion::Prefer(AlgorithmName::new(DEFAULT_CONGESTION).expect("a valid name"))
    }
}

impl Congestion {
    /// The choice `var` (its value `value`) makes: unset prefers
    /// [`DEFAULT_CONGESTION`], `kernel` (or empty) keeps the kernel's default, and any
    /// other value names the algorithm required.
    pub fn from_var(var: &str, value: Option<&str>) -> Result<Congestion, String> {
        let Some(value) = value.map(str::trim) else {
            return Ok(Congestion::default());
        };
        if value.is_empty() || value == "kernel" {
            return Ok(Congestion::Kernel);
        }
        AlgorithmName::new(value)
            .map(Congestion::Require)
            .ok_or_else(|| {
                format!(
                    "{var}={value:?} is not a congestion-control name (at most {} printable \
                 characters, e.g. cubic, bbr, reno; or kernel for the machine's default)",
                    NAME_MAX - 1
                )
            })
    }

    /// Asks the kernel for the algorithm on `sock`; `var` names the setting in the error.
    pub fn apply(&self, sock: &TcpStream, var: &str) -> Result<(), String> {
        match self {
            Congestion::Kernel => Ok(()),
            Congestion::Prefer(name) => {
                // Not offered (a kernel without it, or not allowed to this user): the
                // kernel's default still carries the job, only more slowly.
                let _ = set_algorithm(sock, name);
                Ok(())
            }
            Congestion::Require(name) => set_algorithm(sock, name).map_err(|e| {
                let offered =
                    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
                        .unwrap_or_default();
                format!(
                    "{var}={:?}: the kernel refused it on a connection ({e}); allowed here: {}",
                    name.as_str(),
                    offered.trim()
                )
            }),
        }
    }
}

fn set_algorithm(sock: &TcpStream, name: &AlgorithmName) -> io::Result<()> {
    crate::sockopt::set(sock, libc::TCP_CONGESTION, &name.bytes[..name.len as usize])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn algorithm_of(sock: &TcpStream) -> String {
        let mut buf = [0u8; NAME_MAX];
        let len = crate::sockopt::get(sock, libc::TCP_CONGESTION, &mut buf).unwrap();
        let end = buf.iter().position(|&b| b == 0).unwrap_or(len);
        String::from_utf8_lossy(&buf[..end]).into_owned()
    }

    fn pair() -> TcpStream {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        TcpStream::connect(l.local_addr().unwrap()).unwrap()
    }

    #[test]
    fn the_variable_reads_as_documented() {
        let v = IMPI_CONGESTION_VAR;
        let cubic = AlgorithmName::new("cubic").unwrap();
        assert_eq!(Congestion::from_var(v, None), Ok(Congestion::Prefer(cubic)));
        assert_eq!(Congestion::from_var(v, Some("")), Ok(Congestion::Kernel));
        assert_eq!(
            Congestion::from_var(v, Some("kernel")),
            Ok(Congestion::Kernel)
        );
        let reno = AlgorithmName::new("reno").unwrap();
        assert_eq!(
            Congestion::from_var(v, Some(" reno ")),
            Ok(Congestion::Require(reno))
        );
        let long = Congestion::from_var(v, Some("a_name_of_16_chr")).unwrap_err();
        assert!(
            long.contains(v) && long.contains("a_name_of_16_chr"),
            "{long}"
        );
        assert!(Congestion::from_var(v, Some("cu bic")).is_err());
    }

    #[test]
    fn a_required_algorithm_is_set_and_an_unknown_one_refused() {
        // reno is built into every Linux kernel and allowed to every user.
        let s = pair();
        let reno = Congestion::from_var("V", Some("reno")).unwrap();
        reno.apply(&s, "V").unwrap();
        assert_eq!(algorithm_of(&s), "reno");
        let missing = Congestion::from_var("V", Some("nosuchcc")).unwrap();
        let e = missing.apply(&s, "V").unwrap_err();
        assert!(e.contains("V=\"nosuchcc\"") && e.contains("refused"), "{e}");
        assert_eq!(algorithm_of(&s), "reno");
    }

    #[test]
    fn a_preferred_algorithm_the_kernel_lacks_leaves_its_default() {
        let s = pair();
        let before = algorithm_of(&s);
        let missing = Congestion::Prefer(AlgorithmName::new("nosuchcc").unwrap());
        missing.apply(&s, "V").unwrap();
        assert_eq!(algorithm_of(&s), before);
    }
}
