//! Tunables. Every one is a `CROSSMPI_*` environment variable, read once at `MPI_Init`;
//! docs/tunables.md lists them with their reasons.

use std::str::FromStr;

/// Which transport ranks of one node use between themselves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportChoice {
    /// Shared memory inside a node, TCP between nodes (default).
    Auto,
    /// TCP between every pair, also inside a node (tests of the TCP path).
    Tcp,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub transport: TransportChoice,
    /// Cells per shared-memory ring (`CROSSMPI_SHM_CELLS`).
    pub shm_cells: usize,
    /// Bytes per shared-memory cell (`CROSSMPI_SHM_CELL_BYTES`).
    pub shm_cell_bytes: usize,
    /// Messages at least this long are pulled with cross-memory attach instead of being
    /// streamed through the ring (`CROSSMPI_SHM_CMA_MIN`; 0 = the receiver measures which
    /// way is faster, `proto::copy_choice`).
    pub shm_cma_min: u64,
    /// Largest message sent eagerly over TCP (`CROSSMPI_TCP_EAGER`).
    pub tcp_eager: u64,
    /// Most bytes handed to the kernel per TCP write (`CROSSMPI_TCP_WRITE_CHUNK`).
    pub tcp_write_chunk: usize,
    /// The congestion control of the TCP route's connections (`CROSSMPI_TCP_CONGESTION`).
    pub tcp_congestion: crossmpi_tcp::Congestion,
    /// Eager bytes a sender may have outstanding at one receiver (`CROSSMPI_EAGER_CREDIT`).
    pub eager_credit: u64,
    /// How long a waiting call polls before sleeping, in microseconds (`CROSSMPI_SPIN_US`;
    /// 0 = automatic).
    pub spin_us: u64,
    /// After how many microseconds without news polling starts yielding the processor
    /// (`CROSSMPI_YIELD_US`; None = automatic).
    pub yield_us: Option<u64>,
    /// TCP port to listen on (`CROSSMPI_TCP_PORT`, 0 = any).
    pub tcp_port: u16,
    /// Seconds to wait for a TCP connection to a peer (`CROSSMPI_CONNECT_TIMEOUT`).
    pub connect_timeout_s: u64,
    /// Seconds `MPI_Comm_accept` waits for a connector, and a root waits for the other
    /// root's answers (`CROSSMPI_PORT_TIMEOUT`).
    pub port_timeout_s: u64,
    /// The site of every world rank, for a flat job that spans sites
    /// (`CROSSMPI_SITE_OF`, comma-separated site indices in rank order).
    pub site_of: Option<Vec<u32>>,
    /// Bytes of long messages sent to one IMPI peer ahead of its matching receives
    /// (`CROSSMPI_IMPI_EARLY`; used when every client is crossmpi).
    pub impi_early: u64,
    /// Port of the IMPI listening socket (`CROSSMPI_IMPI_PORT`, 0 = any).
    pub impi_port: u16,
    /// Seconds the cluster's agent waits for the IMPI server to complete startup, i.e.
    /// for every other cluster to join (`CROSSMPI_IMPI_JOIN_TIMEOUT`).
    pub impi_join_timeout_s: u64,
    /// `auto` (default): user data crosses clusters in external32 unless every client is
    /// crossmpi with the same native representation; `always`: always
    /// (`CROSSMPI_IMPI_EXTERNAL32`).
    pub impi_external32: String,
    /// When a rank binds itself to one processor (`CROSSMPI_BIND`, `crate::binding`).
    pub bind: crate::binding::Binding,
    /// Milliseconds an aborting rank keeps its launcher connection open for the
    /// launcher to end it (`CROSSMPI_ABORT_LINGER_MS`).
    pub abort_linger_ms: u64,
}

/// Parses `CROSSMPI_SITE_OF`; a malformed value is reported and ignored.
fn site_list() -> Option<Vec<u32>> {
    let v = std::env::var("CROSSMPI_SITE_OF").ok()?;
    let parsed: Result<Vec<u32>, _> = v.split(',').map(|s| s.trim().parse()).collect();
    match parsed {
        Ok(sites) => Some(sites),
        Err(_) => {
            crate::say!(
                "crossmpi: ignoring CROSSMPI_SITE_OF={v:?}: expected site indices like 0,0,1,1"
            );
            None
        }
    }
}

/// A congestion-control choice (`crossmpi_tcp::Congestion::from_var`); an invalid name is
/// reported and the default kept, like every other tunable here.
fn congestion(name: &str) -> crossmpi_tcp::Congestion {
    let value = std::env::var(name).ok();
    crossmpi_tcp::Congestion::from_var(name, value.as_deref()).unwrap_or_else(|e| {
        crate::say!("crossmpi: ignoring {e}");
        crossmpi_tcp::Congestion::default()
    })
}

/// `CROSSMPI_BIND`; an invalid value is reported and the default kept.
fn binding() -> crate::binding::Binding {
    let value = std::env::var("CROSSMPI_BIND").ok();
    crate::binding::Binding::from_var(value.as_deref()).unwrap_or_else(|e| {
        crate::say!("crossmpi: ignoring {e}");
        crate::binding::Binding::Auto
    })
}

fn env<T: FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => match v.trim().parse() {
            Ok(x) => x,
            Err(_) => {
                crate::say!("crossmpi: ignoring {name}={v:?}: not a valid value");
                default
            }
        },
        Err(_) => default,
    }
}

impl Config {
    pub fn tcp_tuning(&self) -> crate::route::tcp::TcpTuning {
        crate::route::tcp::TcpTuning {
            write_chunk: self.tcp_write_chunk,
            congestion: self.tcp_congestion,
        }
    }

    pub fn from_env() -> Config {
        let transport = match std::env::var("CROSSMPI_TRANSPORT").as_deref() {
            Ok("tcp") => TransportChoice::Tcp,
            Ok("auto") | Ok("") | Err(_) => TransportChoice::Auto,
            Ok(other) => {
                crate::say!("crossmpi: ignoring CROSSMPI_TRANSPORT={other:?}: use auto or tcp");
                TransportChoice::Auto
            }
        };
        Config {
            transport,
            shm_cells: env("CROSSMPI_SHM_CELLS", 16),
            // 32 KiB of payload and room for the 56 bytes of cell, frame and message
            // headers (64: cells are multiples of 64 bytes), so that a 32 KiB message,
            // a size programs use often, goes eagerly in one cell.
            shm_cell_bytes: env("CROSSMPI_SHM_CELL_BYTES", 32 * 1024 + 64),
            shm_cma_min: env("CROSSMPI_SHM_CMA_MIN", 0),
            tcp_eager: env("CROSSMPI_TCP_EAGER", 64 * 1024),
            tcp_write_chunk: env("CROSSMPI_TCP_WRITE_CHUNK", 1 << 20),
            tcp_congestion: congestion(crossmpi_tcp::TCP_CONGESTION_VAR),
            eager_credit: env("CROSSMPI_EAGER_CREDIT", 4 * 1024 * 1024),
            spin_us: env("CROSSMPI_SPIN_US", 0),
            yield_us: std::env::var_os("CROSSMPI_YIELD_US").map(|_| env("CROSSMPI_YIELD_US", 20)),
            tcp_port: env("CROSSMPI_TCP_PORT", 0),
            connect_timeout_s: env("CROSSMPI_CONNECT_TIMEOUT", 30),
            port_timeout_s: env("CROSSMPI_PORT_TIMEOUT", 60),
            site_of: site_list(),
            impi_port: env("CROSSMPI_IMPI_PORT", 0),
            impi_early: env("CROSSMPI_IMPI_EARLY", 4 << 20),
            impi_join_timeout_s: env("CROSSMPI_IMPI_JOIN_TIMEOUT", 600),
            abort_linger_ms: env("CROSSMPI_ABORT_LINGER_MS", 2000),
            bind: binding(),
            impi_external32: match std::env::var("CROSSMPI_IMPI_EXTERNAL32").as_deref() {
                Ok("always") => "always".into(),
                Ok("auto") | Err(_) => "auto".into(),
                Ok(other) => {
                    crate::say!(
                        "crossmpi: ignoring CROSSMPI_IMPI_EXTERNAL32={other:?}: use auto or always"
                    );
                    "auto".into()
                }
            },
        }
    }
}
