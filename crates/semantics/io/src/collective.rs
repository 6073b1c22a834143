//! Two-phase collective I/O. The processes agree on the byte range their accesses
//! cover; aggregators (one per node by default) each own a contiguous file domain; in
//! rounds of at most `CROSSMPI_IO_BUFFER` bytes per aggregator, every process sends
//! each aggregator the list of its pieces in the aggregator's current window and (for
//! a write) their bytes, through alltoallv exchanges; the aggregator then writes (or
//! reads) the window's covered ranges as few large contiguous calls instead of every
//! process issuing its small pieces. Accesses that do not interleave between
//! processes skip the exchange (`CROSSMPI_IO_TWO_PHASE=auto`).

use crate::error::{FileClass, IoError, IoResult};
use crate::os::{self, Disk};
use crate::team::Team;
use crate::view::Extent;

/// When collective calls aggregate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TwoPhase {
    /// When the processes' byte ranges interleave and either the pieces are small
    /// (below `CROSSMPI_IO_PIECE` on average) or the processes span several nodes.
    Auto,
    Always,
    Never,
}

/// Tunables of collective I/O, read from the environment at open.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Number of aggregators; None: one per node.
    pub aggregators: Option<usize>,
    /// Bytes an aggregator handles per round.
    pub buffer: u64,
    pub two_phase: TwoPhase,
    /// Aggregation pays on one node only for pieces smaller than this (bytes).
    pub piece: u64,
}

impl Config {
    pub fn from_env() -> Config {
        let var = |name: &str| std::env::var(name).ok();
        Config {
            aggregators: var("CROSSMPI_IO_AGGREGATORS")
                .and_then(|v| v.parse().ok())
                .filter(|&n: &usize| n > 0),
            buffer: var("CROSSMPI_IO_BUFFER")
                .and_then(|v| v.parse().ok())
                .filter(|&n: &u64| n >= 4096)
                .unwrap_or(16 << 20),
            piece: var("CROSSMPI_IO_PIECE")
                .and_then(|v| v.parse().ok())
                .unwrap_or(32 << 10),
            two_phase: match var("CROSSMPI_IO_TWO_PHASE").as_deref() {
                Some("always") => TwoPhase::Always,
                Some("never") => TwoPhase::Never,
                _ => TwoPhase::Auto,
            },
        }
    }
}

/// Domains are aligned to this many bytes so aggregators write whole pages.
const ALIGN: u64 = 4096;

/// What every process computes alike from the gathered ranges.
struct Plan {
    aggregators: Vec<usize>,
    lo: u64,
    hi: u64,
    domain: u64,
    rounds: u64,
    buffer: u64,
}

impl Plan {
    /// Window of aggregator `a` in round `r` (possibly empty).
    fn window(&self, a: usize, r: u64) -> (u64, u64) {
        let start = self.lo + a as u64 * self.domain;
        let end = (start + self.domain).min(self.hi);
        let wl = (start + r * self.buffer).min(end);
        let wh = (wl + self.buffer).min(end);
        (wl, wh)
    }
}

/// Aggregators: the first `n` members ordered by (index on their node, node), so that
/// the first ones are one per node.
fn choose_aggregators(nodes: &[u32], n: Option<usize>) -> Vec<usize> {
    let mut seen: Vec<(u32, usize)> = Vec::new();
    let mut order: Vec<(usize, u32, usize)> = Vec::with_capacity(nodes.len());
    for (rank, &node) in nodes.iter().enumerate() {
        let index = match seen.iter_mut().find(|(n, _)| *n == node) {
            Some(entry) => {
                entry.1 += 1;
                entry.1
            }
            None => {
                seen.push((node, 0));
                0
            }
        };
        order.push((index, node, rank));
    }
    order.sort_unstable();
    let count = n.unwrap_or(seen.len()).clamp(1, nodes.len());
    let mut chosen: Vec<usize> = order[..count].iter().map(|e| e.2).collect();
    chosen.sort_unstable();
    chosen
}

fn u64s(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
}

/// Gathers every process's range and piece statistics; None when nobody accesses
/// anything, else the plan and whether aggregating pays (see `aggregate`).
fn plan(
    function: &'static str,
    team: &dyn Team,
    cfg: &Config,
    extents: &[Extent],
) -> IoResult<Option<(Plan, bool)>> {
    let (lo, hi) = match (extents.first(), extents.last()) {
        (Some(f), Some(l)) => (f.0, l.0 + l.1),
        _ => (u64::MAX, 0),
    };
    let bytes: u64 = extents.iter().map(|e| e.1).sum();
    let mut mine = Vec::with_capacity(32);
    for v in [lo, hi, extents.len() as u64, bytes] {
        mine.extend_from_slice(&v.to_le_bytes());
    }
    let all: Vec<u64> = u64s(&team.allgather(function, &mine)?).collect();
    let (pieces, total) = all
        .chunks_exact(4)
        .fold((0u64, 0u64), |acc, c| (acc.0 + c[2], acc.1 + c[3]));
    let mut ranges: Vec<(u64, u64)> = all
        .chunks_exact(4)
        .map(|c| (c[0], c[1]))
        .filter(|r| r.0 < r.1)
        .collect();
    if ranges.is_empty() {
        return Ok(None);
    }
    ranges.sort_unstable();
    let interleaved = ranges.windows(2).any(|w| w[1].0 < w[0].1);
    let lo = ranges[0].0;
    let hi = ranges.iter().map(|r| r.1).max().unwrap_or(lo);
    let nodes = team.nodes();
    let aggregators = choose_aggregators(&nodes, cfg.aggregators);
    let domain = (hi - lo)
        .div_ceil(aggregators.len() as u64)
        .next_multiple_of(ALIGN);
    let buffer = cfg.buffer.min(domain).max(1);
    let small = total / pieces.max(1) < cfg.piece;
    let several_nodes = nodes.iter().any(|&n| n != nodes[0]);
    let aggregate = match cfg.two_phase {
        TwoPhase::Always => true,
        TwoPhase::Never => false,
        TwoPhase::Auto => interleaved && (small || several_nodes),
    };
    Ok(Some((
        Plan {
            aggregators,
            lo,
            hi,
            domain,
            rounds: domain.div_ceil(buffer),
            buffer,
        },
        aggregate,
    )))
}

/// A process's pieces in one aggregator window: (file offset, length) and the stream
/// range they come from (consecutive, since the stream follows file order).
struct Pieces {
    list: Vec<Extent>,
    stream: (u64, u64),
}

/// Walks a process's extents window by window (each aggregator's windows advance).
struct Cursor<'a> {
    extents: &'a [Extent],
    starts: Vec<u64>,
    at: Vec<usize>,
}

impl<'a> Cursor<'a> {
    fn new(extents: &'a [Extent], aggregators: usize) -> Cursor<'a> {
        let mut starts = Vec::with_capacity(extents.len());
        let mut total = 0;
        for e in extents {
            starts.push(total);
            total += e.1;
        }
        Cursor {
            extents,
            starts,
            at: vec![0; aggregators],
        }
    }

    fn pieces(&mut self, a: usize, (wl, wh): (u64, u64)) -> Pieces {
        let mut list = Vec::new();
        let mut stream = (0, 0);
        if wl >= wh {
            return Pieces { list, stream };
        }
        let mut i = self.at[a];
        // Skip extents before the window (the first window of a domain).
        while i < self.extents.len() && self.extents[i].0 + self.extents[i].1 <= wl {
            i += 1;
        }
        self.at[a] = i;
        while i < self.extents.len() && self.extents[i].0 < wh {
            let (off, len) = self.extents[i];
            let from = off.max(wl);
            let to = (off + len).min(wh);
            let s = self.starts[i] + (from - off);
            if list.is_empty() {
                stream.0 = s;
            }
            stream.1 = s + (to - from);
            list.push((from, to - from));
            if off + len > wh {
                break;
            }
            i += 1;
        }
        Pieces { list, stream }
    }
}

fn encode_list(list: &[Extent]) -> Vec<u8> {
    let mut out = Vec::with_capacity(list.len() * 16);
    for &(o, l) in list {
        out.extend_from_slice(&o.to_le_bytes());
        out.extend_from_slice(&l.to_le_bytes());
    }
    out
}

/// Sends `send[i]` to member i and returns what each member sent us (`recv_lens[i]`
/// bytes from member i).
fn exchange(
    function: &'static str,
    team: &dyn Team,
    send: &[&[u8]],
    recv_lens: &[usize],
) -> IoResult<Vec<Vec<u8>>> {
    let mut recv: Vec<Vec<u8>> = recv_lens.iter().map(|&n| vec![0u8; n]).collect();
    let mut r: Vec<&mut [u8]> = recv.iter_mut().map(|v| v.as_mut_slice()).collect();
    team.alltoallv(function, send, &mut r)?;
    Ok(recv)
}

/// Who has which pieces in which window, for every round: computed before the first
/// round with two exchanges (counts, then lists), so that each round moves data only.
struct Schedule {
    /// This process's pieces: `mine[round][aggregator]`.
    mine: Vec<Vec<Pieces>>,
    /// At an aggregator, every member's pieces in its window: `theirs[round][member]`.
    theirs: Vec<Vec<Vec<Extent>>>,
}

impl Schedule {
    fn new(
        function: &'static str,
        team: &dyn Team,
        plan: &Plan,
        extents: &[Extent],
        me_agg: Option<usize>,
    ) -> IoResult<Schedule> {
        let (n, aggs, rounds) = (team.size(), plan.aggregators.len(), plan.rounds as usize);
        let mut cursor = Cursor::new(extents, aggs);
        let mine: Vec<Vec<Pieces>> = (0..plan.rounds)
            .map(|r| {
                (0..aggs)
                    .map(|a| cursor.pieces(a, plan.window(a, r)))
                    .collect()
            })
            .collect();
        let mut counts = vec![Vec::new(); n];
        let mut lists = vec![Vec::new(); n];
        for (a, &rank) in plan.aggregators.iter().enumerate() {
            for round in &mine {
                counts[rank].extend_from_slice(&(round[a].list.len() as u64).to_le_bytes());
                lists[rank].extend(encode_list(&round[a].list));
            }
        }
        let expect = if me_agg.is_some() { 8 * rounds } else { 0 };
        let c: Vec<&[u8]> = counts.iter().map(|v| v.as_slice()).collect();
        let got = exchange(function, team, &c, &vec![expect; n])?;
        let per_round: Vec<Vec<usize>> = got
            .iter()
            .map(|b| u64s(b).map(|k| k as usize).collect())
            .collect();
        let lens: Vec<usize> = per_round
            .iter()
            .map(|v| v.iter().sum::<usize>() * 16)
            .collect();
        let l: Vec<&[u8]> = lists.iter().map(|v| v.as_slice()).collect();
        let got = exchange(function, team, &l, &lens)?;
        let mut theirs = vec![vec![Vec::new(); n]; if me_agg.is_some() { rounds } else { 0 }];
        for (member, bytes) in got.iter().enumerate() {
            let pairs: Vec<u64> = u64s(bytes).collect();
            let mut at = 0;
            for (r, &k) in per_round[member].iter().enumerate() {
                theirs[r][member] = pairs[at..at + 2 * k]
                    .chunks_exact(2)
                    .map(|c| (c[0], c[1]))
                    .collect();
                at += 2 * k;
            }
        }
        Ok(Schedule { mine, theirs })
    }
}

/// Splits `buf` into the (increasing, disjoint) stream ranges this process exchanges
/// with each member in one round; members that are no aggregator get nothing.
fn stream_slices<'a>(
    buf: &'a mut [u8],
    plan: &Plan,
    mine: &[Pieces],
    n: usize,
) -> Vec<&'a mut [u8]> {
    let mut out: Vec<&'a mut [u8]> = (0..n).map(|_| <&mut [u8]>::default()).collect();
    let mut rest = buf;
    let mut consumed = 0u64;
    for (a, &rank) in plan.aggregators.iter().enumerate() {
        let (s, e) = mine[a].stream;
        if s == e {
            continue;
        }
        let tail = std::mem::take(&mut rest);
        let (_, tail) = tail.split_at_mut((s - consumed) as usize);
        let (slice, tail) = tail.split_at_mut((e - s) as usize);
        out[rank] = slice;
        rest = tail;
        consumed = e;
    }
    out
}

/// Makes every process return the same outcome: if any failed, all fail (with its own
/// error where it has one). In collective accesses this also orders the aggregators'
/// writes before any process returns, so a process reads what it wrote collectively.
pub fn agree(function: &'static str, team: &dyn Team, result: IoResult<()>) -> IoResult<()> {
    let code = match &result {
        Ok(()) => 0i32,
        Err(e) => e.class.code(),
    };
    let all = team.allgather(function, &code.to_le_bytes())?;
    result?;
    for (rank, c) in all.chunks_exact(4).enumerate() {
        let c = i32::from_le_bytes(c.try_into().unwrap_or([0; 4]));
        if c != 0 {
            return Err(IoError::file(
                FileClass::Io,
                function,
                "fh",
                "",
                format!("the call failed on rank {rank} of the file's group (error class {c})"),
            ));
        }
    }
    Ok(())
}

fn io_error(function: &str, what: &str, e: std::io::Error) -> IoError {
    IoError::file(FileClass::Io, function, "fh", "", format!("{what}: {e}"))
}

/// Writes `data` to `extents` one call each.
pub fn write_extents(function: &str, disk: Disk, extents: &[Extent], data: &[u8]) -> IoResult<()> {
    let _lock = disk
        .lock(true)
        .map_err(|e| io_error(function, "locking (atomic mode)", e))?;
    let mut at = 0usize;
    for &(off, len) in extents {
        os::write_at(disk.file, &data[at..at + len as usize], off)
            .map_err(|e| io_error(function, "pwrite", e))?;
        at += len as usize;
    }
    Ok(())
}

/// What reads and writes share before their rounds: the plan, the schedule and this
/// process's aggregator index; None when the access is complete already (nothing to
/// access, or accessed by `direct` because aggregating does not pay).
fn setup(
    function: &'static str,
    team: &dyn Team,
    cfg: &Config,
    extents: &[Extent],
    direct: impl FnOnce() -> IoResult<()>,
) -> IoResult<Option<(Plan, Schedule, Option<usize>)>> {
    let Some((plan, aggregate)) = plan(function, team, cfg, extents)? else {
        return Ok(None);
    };
    if !aggregate {
        agree(function, team, direct())?;
        return Ok(None);
    }
    let me_agg = plan.aggregators.iter().position(|&r| r == team.rank());
    let sched = Schedule::new(function, team, &plan, extents, me_agg)?;
    Ok(Some((plan, sched, me_agg)))
}

/// `MPI_File_write_all` and friends: `data` is this process's stream, `extents` where it
/// goes (in file order).
pub fn write(
    function: &'static str,
    team: &dyn Team,
    disk: Disk,
    cfg: &Config,
    extents: &[Extent],
    data: &[u8],
) -> IoResult<()> {
    let direct = || write_extents(function, disk, extents, data);
    let Some((plan, sched, me_agg)) = setup(function, team, cfg, extents, direct)? else {
        return Ok(());
    };
    let n = team.size();
    let mut window = Vec::new();
    let mut failed: IoResult<()> = Ok(());
    for r in 0..plan.rounds as usize {
        let mine = &sched.mine[r];
        let mut send: Vec<&[u8]> = vec![&[]; n];
        for (a, &rank) in plan.aggregators.iter().enumerate() {
            let (s, e) = mine[a].stream;
            send[rank] = &data[s as usize..e as usize];
        }
        let lists = sched.theirs.get(r);
        let lens: Vec<usize> = match lists {
            Some(l) => l
                .iter()
                .map(|l| l.iter().map(|p| p.1 as usize).sum())
                .collect(),
            None => vec![0; n],
        };
        let got = exchange(function, team, &send, &lens)?;
        if let (Some(a), Some(lists), Ok(())) = (me_agg, lists, &failed) {
            failed = write_window(
                function,
                disk,
                plan.window(a, r as u64),
                lists,
                &got,
                &mut window,
            );
        }
    }
    agree(function, team, failed)
}

/// At an aggregator: places every member's pieces in the window buffer and writes each
/// covered range with one call.
fn write_window(
    function: &str,
    disk: Disk,
    (wl, wh): (u64, u64),
    lists: &[Vec<Extent>],
    got: &[Vec<u8>],
    window: &mut Vec<u8>,
) -> IoResult<()> {
    window.resize((wh - wl) as usize, 0);
    let mut covered: Vec<Extent> = Vec::new();
    for (list, bytes) in lists.iter().zip(got) {
        let mut at = 0usize;
        for &(off, len) in list {
            let dst = (off - wl) as usize;
            window[dst..dst + len as usize].copy_from_slice(&bytes[at..at + len as usize]);
            at += len as usize;
            covered.push((off, len));
        }
    }
    covered.sort_unstable();
    let mut merged: Vec<Extent> = Vec::new();
    for (off, len) in covered {
        match merged.last_mut() {
            Some(m) if off <= m.0 + m.1 => m.1 = m.1.max(off + len - m.0),
            _ => merged.push((off, len)),
        }
    }
    let _lock = disk
        .lock(true)
        .map_err(|e| io_error(function, "locking (atomic mode)", e))?;
    for (off, len) in merged {
        let src = &window[(off - wl) as usize..(off - wl + len) as usize];
        os::write_at(disk.file, src, off).map_err(|e| io_error(function, "pwrite", e))?;
    }
    Ok(())
}

/// `MPI_File_read_all` and friends: fills `out` (this process's stream) from `extents`.
/// Bytes past the end of the file read as zeros; the caller counts what was there.
pub fn read(
    function: &'static str,
    team: &dyn Team,
    disk: Disk,
    cfg: &Config,
    extents: &[Extent],
    out: &mut [u8],
) -> IoResult<()> {
    let direct = || read_extents(function, disk, extents, out);
    let Some((plan, sched, me_agg)) = setup(function, team, cfg, extents, direct)? else {
        return Ok(());
    };
    let n = team.size();
    let mut window = Vec::new();
    let mut failed: IoResult<()> = Ok(());
    for r in 0..plan.rounds as usize {
        let mut send = vec![Vec::new(); n];
        if let (Some(a), Some(lists)) = (me_agg, sched.theirs.get(r)) {
            let (wl, _) = plan.window(a, r as u64);
            let lo = lists.iter().filter_map(|l| l.first()).map(|p| p.0).min();
            let hi = lists
                .iter()
                .filter_map(|l| l.last())
                .map(|p| p.0 + p.1)
                .max();
            if let (Some(lo), Some(hi), Ok(())) = (lo, hi, &failed) {
                // One read of the span the requests cover (holes included: reading
                // more is harmless and one large call beats many small ones).
                window.clear();
                window.resize((hi - wl) as usize, 0);
                let read = disk.lock(false).and_then(|_lock| {
                    os::read_at(disk.file, &mut window[(lo - wl) as usize..], lo)
                });
                if let Err(e) = read {
                    failed = Err(io_error(function, "pread", e));
                }
            }
            for (member, list) in lists.iter().enumerate() {
                let mut bytes = Vec::with_capacity(list.iter().map(|p| p.1 as usize).sum());
                for &(off, len) in list {
                    let at = (off - wl) as usize;
                    match window.get(at..at + len as usize) {
                        Some(b) if failed.is_ok() => bytes.extend_from_slice(b),
                        _ => bytes.resize(bytes.len() + len as usize, 0),
                    }
                }
                send[member] = bytes;
            }
        }
        let s: Vec<&[u8]> = send.iter().map(|v| v.as_slice()).collect();
        let mut recv = stream_slices(out, &plan, &sched.mine[r], n);
        team.alltoallv(function, &s, &mut recv)?;
    }
    agree(function, team, failed)
}

/// Reads `extents` into `out` one call each; a short read (end of file) leaves zeros.
pub fn read_extents(
    function: &str,
    disk: Disk,
    extents: &[Extent],
    out: &mut [u8],
) -> IoResult<()> {
    let _lock = disk
        .lock(false)
        .map_err(|e| io_error(function, "locking (atomic mode)", e))?;
    let mut at = 0usize;
    for &(off, len) in extents {
        let dst = &mut out[at..at + len as usize];
        let n = os::read_at(disk.file, dst, off).map_err(|e| io_error(function, "pread", e))?;
        dst[n..].fill(0);
        at += len as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_aggregator_per_node_first() {
        assert_eq!(choose_aggregators(&[0, 0, 1, 1], None), vec![0, 2]);
        assert_eq!(choose_aggregators(&[0, 1, 0, 1], None), vec![0, 1]);
        assert_eq!(choose_aggregators(&[0, 0, 0, 0], Some(2)), vec![0, 1]);
        assert_eq!(choose_aggregators(&[0, 0, 1, 1], Some(3)), vec![0, 1, 2]);
        assert_eq!(choose_aggregators(&[5], Some(9)), vec![0]);
    }

    #[test]
    fn cursor_cuts_extents_at_window_edges() {
        let ext = [(0, 10), (20, 10), (40, 10)];
        let mut c = Cursor::new(&ext, 1);
        let p = c.pieces(0, (5, 25));
        assert_eq!(p.list, vec![(5, 5), (20, 5)]);
        assert_eq!(p.stream, (5, 15));
        let p = c.pieces(0, (25, 45));
        assert_eq!(p.list, vec![(25, 5), (40, 5)]);
        assert_eq!(p.stream, (15, 25));
        let p = c.pieces(0, (45, 100));
        assert_eq!(p.list, vec![(45, 5)]);
        assert_eq!(p.stream, (25, 30));
    }
}
