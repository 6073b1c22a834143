//! Algorithm selection: by message size and member count, unless the environment names
//! one (`CROSSMPI_COLL_<COLLECTIVE>=<algorithm>`, e.g. `CROSSMPI_COLL_ALLREDUCE=
//! rabenseifner`; docs/tunables.md lists them). A forced algorithm that cannot run on a
//! call (recursive doubling on a member count that is not a power of two, two-level on
//! one node) falls back to the default choice for that call. Like every tunable, a value
//! that does not parse is reported on standard error and the default holds.

use crate::runtime::ImpiColl;
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
    /// `CROSSMPI_COLL_BCAST_SEGMENT` (default 256 KiB): the binomial broadcast among at
    /// most 4 members passes longer data down the tree in segments of this size, so that
    /// a member forwards one while it receives the next (4 ranks on 2 cores, 1 MiB:
    /// 245-250 us against 330-350 whole; 128 KiB segments 270, 512 KiB 334, 16-32 KiB
    /// 450-470).
    pub bcast_segment: usize,
    /// `CROSSMPI_COLL_BCAST_CROWDED_SEGMENT` (default 16 KiB; 0: never) and
    /// `CROSSMPI_COLL_BCAST_CROWDED_MAX` (default 128 KiB): on a node with more ranks than
    /// processors whose ranks are not bound to processors (`CROSSMPI_BIND=none`: by
    /// default they are, `crate::binding`), the binomial broadcast among at most 4
    /// members of that node passes data longer than the segment and at most the maximum
    /// down the tree in segments of this size. Each is a message sent eagerly through
    /// the ring, so the root and every forwarding member go on without waiting for a
    /// descheduled child to take it. 4 ranks on 2 cores, back-to-back broadcasts, medians of 5-7 (us): 32 KiB 12.0
    /// -> 7.6, 64 KiB 22.1 -> 14.1 (Open MPI 16.2), 128 KiB 32.1 -> 24.2 (28.1); 256 KiB
    /// 43 whole against 57 in segments, 1 MiB 199 against 372. 3 ranks, 64 KiB: 13.0 ->
    /// 8.8. Segments of 8 KiB (18.1) and of 32000 B (28.5 at 64 KiB, 31.5 at 128 KiB)
    /// were slower; 2 ranks on 2 cores (not crowded) were slower in segments (64 KiB 3.7
    /// -> 5.6), so a node with a processor per rank sends whole. Bound ranks send whole
    /// too: each member then pulls the whole message with one copy (a crowded node pulls
    /// every rendezvous message), and no member is moved away from the processor the
    /// others expect it on. 4 bound ranks, medians of 5-7 (us), segments / whole / Open
    /// MPI: 64 KiB 27.9 / 12.2 / 15.0 (128 calls, as bench/coll) and 16.9 / 10.9 / 14.0
    /// (2000 calls), 128 KiB 67.4 / 20.5 / 27.4; 3 bound ranks, 64 KiB, 11.3 / 13.5 /
    /// 13.3 (the one case where segments still did better).
    pub bcast_crowded_segment: usize,
    pub bcast_crowded_max: usize,
    /// `CROSSMPI_COLL_ALLREDUCE_LARGE` (default 64 KiB): from here commutative
    /// allreduces use Rabenseifner's algorithm, which halves the data each member sends
    /// and reduces; below it the log2 n exchanges of the whole vector cost less latency.
    pub allreduce_large: usize,
    /// `CROSSMPI_COLL_ALLTOALL_LARGE` (default 32 KiB per block): from here all-to-all
    /// between nodes runs pairwise (one exchange in flight, no burst of n-1 large
    /// messages on the network). Inside one node every block stays in one round: each is
    /// a request the receiver pulls, so a burst costs nothing, and whichever member runs
    /// pulls what is ready instead of waiting for one partner (4 ranks on 2 cores, 1 MiB:
    /// 580 us against 720 pairwise; 64 KiB at 8 ranks 240 against 280).
    pub alltoall_large: usize,
    /// `CROSSMPI_COLL_ALLGATHER_SMALL` (default 4 KiB per block): up to here a
    /// power-of-two member count uses recursive doubling (log2 n rounds, not n-1).
    pub allgather_small: usize,
    /// `CROSSMPI_COLL_ALLGATHER_CROWDED_MAX` (default 256 KiB per block): on a node with
    /// more ranks than processors, a power-of-two team of 8 or more members of that node
    /// uses recursive doubling up to here too. Every round needs every member to run,
    /// and a crowded node runs them in turns, so the ring's n-1 rounds cost more than
    /// doubling's log2 n. 8 ranks on 2 cores, medians of 7 (us), ring / doubling / Open
    /// MPI: 16 KiB 142 / 96 / 101, 64 KiB 384 / 320 / 313, 256 KiB 1170 / 1097 / 1006;
    /// 1 MiB 3822 / 3957 (5 runs). With 4 ranks the ring was as fast or faster (64 KiB
    /// 69 / 73, 1 MiB 800 / 1054), so smaller teams keep it.
    pub allgather_crowded_max: usize,
}

/// Reports a tunable that does not parse (once, on standard error); the default holds.
fn report(name: &str, value: &str, expected: &str) {
    let rank = std::env::var("PMI_RANK").unwrap_or_else(|_| "?".into());
    crate::say!("crossmpi: rank {rank}: {name}={value} is not {expected}; using the default");
}

fn env_bytes(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            report(name, &v, "a number of bytes");
            default
        }),
        Err(_) => default,
    }
}

pub fn thresholds() -> &'static Thresholds {
    static T: OnceLock<Thresholds> = OnceLock::new();
    T.get_or_init(|| Thresholds {
        bcast_large: env_bytes("CROSSMPI_COLL_BCAST_LARGE", 128 * 1024),
        bcast_segment: env_bytes("CROSSMPI_COLL_BCAST_SEGMENT", 256 * 1024),
        bcast_crowded_segment: env_bytes("CROSSMPI_COLL_BCAST_CROWDED_SEGMENT", 16 * 1024),
        bcast_crowded_max: env_bytes("CROSSMPI_COLL_BCAST_CROWDED_MAX", 128 * 1024),
        allreduce_large: env_bytes("CROSSMPI_COLL_ALLREDUCE_LARGE", 64 * 1024),
        alltoall_large: env_bytes("CROSSMPI_COLL_ALLTOALL_LARGE", 32 * 1024),
        allgather_small: env_bytes("CROSSMPI_COLL_ALLGATHER_SMALL", 4096),
        allgather_crowded_max: env_bytes("CROSSMPI_COLL_ALLGATHER_CROWDED_MAX", 256 * 1024),
    })
}

/// The algorithm the environment forces for `coll` (one of [`ALGORITHMS`]), if any. A
/// name the collective does not have is reported once and ignored.
pub fn forced(coll: &str) -> Option<&'static str> {
    static FORCED: OnceLock<Vec<(&'static str, &'static str)>> = OnceLock::new();
    let all = FORCED.get_or_init(|| {
        ALGORITHMS
            .iter()
            .filter_map(|&(c, names)| {
                let var = format!("CROSSMPI_COLL_{c}");
                let v = std::env::var(&var).ok()?;
                let found = names
                    .iter()
                    .copied()
                    .find(|&n| n == v.trim().to_ascii_lowercase());
                if found.is_none() {
                    report(&var, &v, &format!("one of {}", names.join(", ")));
                }
                Some((c, found?))
            })
            .collect()
    });
    all.iter().find(|(c, _)| *c == coll).map(|&(_, n)| n)
}

/// How collectives treat a communicator spanning several sites (`CROSSMPI_COLL_WAN`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wan {
    /// Sites are ignored (only nodes count): the benchmarks' baseline.
    Flat,
    /// crossmpi's WAN-aware algorithms: a site level above the node level, joined by
    /// one-round exchanges between site leaders, so a collective crosses between sites
    /// once (MagPIe's idea). Messages between sites go in eager pieces of at most
    /// `piece` bytes (see `ImpiColl::wide_eager`).
    Magpie { piece: usize },
    /// IMPI's algorithms (one master per site; linear among up to `maxlinear` masters,
    /// a binomial tree above), the ones another IMPI implementation runs.
    Impi { maxlinear: usize },
}

/// The choice for a job with the agreed IMPI collective parameters: `CROSSMPI_COLL_WAN`
/// = `auto` (default: WAN-aware when every client is crossmpi, else IMPI's), `magpie`,
/// `impi` or `flat`.
pub fn wan(agreed: &ImpiColl) -> Wan {
    static CHOICE: OnceLock<&'static str> = OnceLock::new();
    let choice = CHOICE.get_or_init(|| {
        const NAMES: [&str; 4] = ["auto", "magpie", "impi", "flat"];
        let Ok(v) = std::env::var("CROSSMPI_COLL_WAN") else {
            return "auto";
        };
        let want = v.trim().to_ascii_lowercase();
        NAMES
            .iter()
            .copied()
            .find(|&n| n == want)
            .unwrap_or_else(|| {
                report("CROSSMPI_COLL_WAN", &v, "one of auto, magpie, impi, flat");
                "auto"
            })
    });
    let impi = Wan::Impi {
        maxlinear: agreed.maxlinear,
    };
    let magpie = Wan::Magpie {
        piece: usize::try_from(agreed.wide_eager).unwrap_or(usize::MAX),
    };
    match *choice {
        "flat" => Wan::Flat,
        "magpie" => magpie,
        "impi" => impi,
        _ if agreed.all_crossmpi => magpie,
        _ => impi,
    }
}
