//! Algorithm selection: by message size and member count, unless the environment names
//! one (`CROSSMPI_COLL_<COLLECTIVE>=<algorithm>`, e.g. `CROSSMPI_COLL_ALLREDUCE=
//! rabenseifner`; docs/tunables.md lists them). A forced algorithm that cannot run on a
//! call (recursive doubling on a member count that is not a power of two, two-level on
//! one node) falls back to the default choice for that call.

use crate::error::{ErrorClass, MpiError, MpiResult};
use std::sync::OnceLock;

/// The algorithm names each collective accepts.
pub const ALGORITHMS: &[(&str, &[&str])] = &[
    ("BARRIER", &["dissemination", "two_level"]),
    ("BCAST", &["binomial", "scatter_allgather", "two_level"]),
    ("REDUCE", &["binomial", "two_level"]),
    (
        "ALLREDUCE",
        &["recursive_doubling", "rabenseifner", "two_level"],
    ),
    ("ALLGATHER", &["ring", "recursive_doubling", "two_level"]),
    ("ALLTOALL", &["linear", "pairwise"]),
];

/// Sizes where the defaults switch algorithm (bytes), with their variables.
pub struct Thresholds {
    /// `CROSSMPI_COLL_BCAST_LARGE` (default 128 KiB): from here, with more than 8
    /// members, a broadcast scatters and allgathers (each member moves ~2x the data
    /// once) instead of the binomial tree (the root sends it log2 n times; with
    /// single-copy shared memory the tree is faster up to 8 members, measured).
    pub bcast_large: usize,
    /// `CROSSMPI_COLL_ALLREDUCE_LARGE` (default 64 KiB): from here commutative
    /// allreduces use Rabenseifner's algorithm, which halves the data each member sends
    /// and reduces; below it the log2 n exchanges of the whole vector cost less latency.
    pub allreduce_large: usize,
    /// `CROSSMPI_COLL_ALLTOALL_LARGE` (default 32 KiB per block): from here all-to-all
    /// runs pairwise (one exchange in flight, no burst of n-1 large messages).
    pub alltoall_large: usize,
    /// `CROSSMPI_COLL_ALLGATHER_SMALL` (default 4 KiB per block): up to here a
    /// power-of-two member count uses recursive doubling (log2 n rounds, not n-1).
    pub allgather_small: usize,
}

fn env_bytes(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

pub fn thresholds() -> &'static Thresholds {
    static T: OnceLock<Thresholds> = OnceLock::new();
    T.get_or_init(|| Thresholds {
        bcast_large: env_bytes("CROSSMPI_COLL_BCAST_LARGE", 128 * 1024),
        allreduce_large: env_bytes("CROSSMPI_COLL_ALLREDUCE_LARGE", 64 * 1024),
        alltoall_large: env_bytes("CROSSMPI_COLL_ALLTOALL_LARGE", 32 * 1024),
        allgather_small: env_bytes("CROSSMPI_COLL_ALLGATHER_SMALL", 4096),
    })
}

/// The algorithm the environment forces for `coll` (one of [`ALGORITHMS`]), if any.
pub fn forced(function: &str, coll: &str) -> MpiResult<Option<&'static str>> {
    static FORCED: OnceLock<Vec<(&'static str, Result<&'static str, String>)>> = OnceLock::new();
    let all = FORCED.get_or_init(|| {
        ALGORITHMS
            .iter()
            .filter_map(|&(c, names)| {
                let v = std::env::var(format!("CROSSMPI_COLL_{c}")).ok()?;
                let v = v.trim().to_ascii_lowercase();
                Some((c, names.iter().copied().find(|&n| n == v).ok_or(v)))
            })
            .collect()
    });
    match all.iter().find(|(c, _)| *c == coll) {
        None => Ok(None),
        Some((_, Ok(name))) => Ok(Some(name)),
        Some((c, Err(v))) => Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            &format!("CROSSMPI_COLL_{c}"),
            v,
            format!(
                "not an algorithm of this collective (one of: {})",
                ALGORITHMS
                    .iter()
                    .find(|(x, _)| x == c)
                    .map(|(_, n)| n.join(", "))
                    .unwrap_or_default()
            ),
        )),
    }
}
