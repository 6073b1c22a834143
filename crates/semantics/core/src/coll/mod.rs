//! Collective operations over the point-to-point protocols, on the communicator's
//! collective context (so they never match user messages).
//!
//! Every collective builds a schedule ([`sched`]) with one of its algorithms (one folder
//! per collective, one file per algorithm; [`select`] chooses) and runs it blocking or
//! as a nonblocking request. Hierarchical algorithms cut the communicator along the
//! levels of [`levels`]: the node, then (on a communicator spanning sites) the site,
//! whose leaders exchange in one round so a collective crosses between sites once;
//! `CROSSMPI_COLL_WAN` selects IMPI's algorithms instead ([`select::Wan`]). The
//! byte-level `barrier`, `bcast_bytes` and `allgather_bytes` serve the runtime itself
//! (context agreement, finalize).

pub mod allgather;
pub mod allreduce;
pub mod alltoall;
pub mod barrier;
pub mod bcast;
pub mod gather;
pub mod inter;
pub mod levels;
pub mod light;
pub mod masters;
pub mod neighbor;
pub mod reduce;
pub mod reduce_scatter;
pub mod scan;
pub mod scatter;
pub mod sched;
pub mod select;
pub mod team;

use crate::comm::{CommId, Group};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::reduce::ReduceOp;
use crate::request::{ReqId, PROC_NULL};
use crate::runtime;
use crate::topo::Topology;
use crate::userbuf::UserBuf;
use inter::leaders::Side;
use levels::Level;
use sched::{Mode, Sched, Span};
use select::{forced, thresholds, Wan};
use std::sync::Arc;
use team::Team;

/// `MPI_ROOT` (MPI-5.0 ABI value).
pub const ROOT: i32 = -4;

/// What a collective needs to know about its communicator.
#[derive(Clone)]
pub struct Members {
    pub context: u64,
    pub rank: usize,
    pub group: Arc<Group>,
}

impl Members {
    pub fn size(&self) -> usize {
        self.group.size()
    }

    pub fn of(function: &str, comm: CommId) -> MpiResult<Members> {
        runtime::with(function, |rt| {
            let c = rt.comm(function, comm)?;
            Ok(Members {
                context: c.coll_context(),
                rank: c.rank,
                group: c.group.clone(),
            })
        })
    }
}

// ---------------------------------------------------------------- internal byte helpers

/// Barrier (also used by `MPI_Finalize`).
pub fn barrier(function: &str, comm: CommId) -> MpiResult<()> {
    sched::run(function, comm, |s| {
        build_barrier(s);
        Ok(())
    })
}

/// Broadcast of `data` from `root` (an intracommunicator rank).
pub fn bcast_bytes(function: &str, comm: CommId, root: usize, data: &mut [u8]) -> MpiResult<()> {
    sched::run(function, comm, |s| {
        let span = s.region(data.as_mut_ptr() as usize, data.len());
        if magpie(s) {
            bcast::two_level::build(s, whole(s), root, span, &levels(s));
        } else {
            bcast::binomial::build(s, whole(s), root, span);
        }
        Ok(())
    })
}

/// Allgather of equal blocks: returns every member's `mine`, in rank order.
pub fn allgather_bytes(function: &str, comm: CommId, mine: &[u8]) -> MpiResult<Vec<u8>> {
    let n = Members::of(function, comm)?.size();
    let b = mine.len();
    let mut all = vec![0u8; n * b];
    sched::run(function, comm, |s| {
        let span = s.region(all.as_mut_ptr() as usize, all.len());
        let me = s.rank;
        let own = s.region(mine.as_ptr() as usize, b);
        s.copy(own, span.block(me, b));
        let blocks: Vec<Span> = (0..n).map(|i| span.block(i, b)).collect();
        if magpie(s) {
            allgather::two_level::build(s, whole(s), &blocks, &levels(s));
        } else {
            allgather::ring::build(s, whole(s), &blocks);
        }
        Ok(())
    })?;
    Ok(all)
}

fn whole(s: &Sched) -> Team<'static> {
    Team::all(s.size(), s.rank)
}

/// True when `key` holds more than one value. Every collective call asks this of the
/// sites (and barrier and bcast of the nodes), so it must not allocate.
fn several(key: &[u32]) -> bool {
    key.first().is_some_and(|&k| key.iter().any(|&x| x != k))
}

/// True when some value occurs more than once in `key`.
fn repeats(key: &[u32]) -> bool {
    let mut v: Vec<u32> = key.to_vec();
    v.sort_unstable();
    v.windows(2).any(|w| w[0] == w[1])
}

/// How this communicator's collectives treat sites: `Flat` when it spans one site.
fn wan(s: &Sched) -> Wan {
    if several(&s.sites) {
        s.wan
    } else {
        Wan::Flat
    }
}

/// The IMPI parameter of a communicator that runs IMPI's algorithms.
fn impi(s: &Sched) -> Option<usize> {
    match wan(s) {
        Wan::Impi { maxlinear } => Some(maxlinear),
        _ => None,
    }
}

/// True when the WAN-aware (hierarchical, site level on top) algorithms run.
fn magpie(s: &Sched) -> bool {
    matches!(wan(s), Wan::Magpie { .. })
}

/// The largest message the WAN-aware algorithms send between sites in one piece.
fn wide_piece(s: &Sched) -> usize {
    match wan(s) {
        Wan::Magpie { piece } => piece,
        _ => usize::MAX,
    }
}

/// The hierarchy levels hierarchical algorithms cut along, innermost first: the node,
/// then on a communicator spanning sites the site (nodes refined by site, so a node
/// part never spans two sites).
fn levels(s: &Sched) -> Vec<Level> {
    if magpie(s) {
        let nodes = levels::refine(&s.nodes, &s.sites);
        vec![
            Level::local(Arc::new(nodes)),
            Level::wide(s.sites.clone()).in_pieces(wide_piece(s)),
        ]
    } else {
        vec![Level::local(s.nodes.clone())]
    }
}

/// The communicator cut by site (`root` first in its part), when the WAN-aware
/// algorithms run and some site holds several members.
fn site_cut(s: &Sched, t: Team, root: Option<usize>) -> Option<levels::Split> {
    if !magpie(s) {
        return None;
    }
    let mut cut = levels::split(t, &s.sites, root)?;
    cut.piece = wide_piece(s);
    Some(cut)
}

/// True when a hierarchical reduction keeps rank order (non-commutative operators):
/// every part of every level is a run of consecutive ranks.
fn ordered_levels(s: &Sched) -> bool {
    levels(s).iter().all(|l| levels::in_runs(&l.key))
}

/// True when a two-level scheme pays: more than one node, and some node with more than
/// one member.
fn spans_nodes(s: &Sched) -> bool {
    several(&s.nodes) && repeats(&s.nodes)
}

// ---------------------------------------------------------------- argument checks

fn root_of(s: &Sched, root: i32) -> MpiResult<usize> {
    if root >= 0 && (root as usize) < s.size() {
        return Ok(root as usize);
    }
    Err(MpiError::arg(
        ErrorClass::Root,
        s.function,
        "root",
        root,
        format!("communicator size {}", s.size()),
    ))
}

fn side_of(s: &Sched, root: i32) -> MpiResult<Side> {
    match root {
        ROOT => Ok(Side::Root),
        PROC_NULL => Ok(Side::Idle),
        r if r >= 0 && (r as usize) < s.remote_size() => Ok(Side::Other(r as usize)),
        r => Err(MpiError::arg(
            ErrorClass::Root,
            s.function,
            "root",
            r,
            format!(
                "intercommunicator: MPI_ROOT, MPI_PROC_NULL or a rank of the remote group of size {}",
                s.remote_size()
            ),
        )),
    }
}

fn not_inter(s: &Sched) -> MpiResult<()> {
    if s.is_inter() {
        return Err(MpiError::arg(
            ErrorClass::Comm,
            s.function,
            "comm",
            "an intercommunicator",
            "this collective is defined on intracommunicators only",
        ));
    }
    Ok(())
}

fn set_op(s: &mut Sched, op: &ReduceOp, buf: &UserBuf) -> MpiResult<bool> {
    op.check(s.function, &buf.dtype)?;
    s.set_reduction(op.clone(), buf.dtype.clone());
    Ok(op.is_commutative())
}

/// A snapshot of `buf` in a temporary (in-place data a collective overwrites).
fn snapshot(s: &mut Sched, buf: &UserBuf) -> Span {
    let t = s.temp(buf.bytes() as usize);
    let src = s.input(buf);
    s.copy(src, t);
    t
}

/// The spans of a reduction's input and output; `send` is `None` for `MPI_IN_PLACE`
/// (the input is then the output's prior contents).
fn in_out(s: &mut Sched, send: Option<&UserBuf>, recv: &UserBuf) -> (Span, Span) {
    match send {
        Some(b) => {
            let output = s.output(recv);
            (s.input(b), output)
        }
        None => {
            let both = s.inout(recv);
            (both, both)
        }
    }
}

// ---------------------------------------------------------------- the collectives

fn build_barrier(s: &mut Sched) {
    if s.is_inter() {
        return inter::leaders::barrier(s);
    }
    if let Some(maxlinear) = impi(s) {
        return barrier::impi::build(s, maxlinear);
    }
    let t = whole(s);
    let two = match forced("BARRIER") {
        _ if magpie(s) => true,
        Some("two_level") => true,
        Some(_) => false,
        None => spans_nodes(s),
    };
    if two {
        barrier::two_level::build(s, t, &levels(s));
    } else {
        barrier::dissemination::build(s, t);
    }
}

/// `MPI_Barrier` / `MPI_Ibarrier`.
pub fn barrier_call(function: &'static str, comm: CommId, mode: Mode) -> MpiResult<Option<ReqId>> {
    if mode == Mode::Blocking && light::barrier(function, light::known(comm))? {
        return Ok(None);
    }
    sched::start(function, comm, mode, |s| {
        build_barrier(s);
        Ok(())
    })
}

/// `MPI_Bcast` / `MPI_Ibcast`.
pub fn bcast(
    function: &'static str,
    comm: CommId,
    mode: Mode,
    buf: UserBuf,
    root: i32,
) -> MpiResult<Option<ReqId>> {
    if mode == Mode::Blocking && light::bcast(function, light::known(comm), &buf, root)? {
        return Ok(None);
    }
    sched::start(function, comm, mode, |s| {
        if s.is_inter() {
            let side = side_of(s, root)?;
            let data = match side {
                Side::Root => s.input(&buf),
                Side::Idle => return Ok(()),
                Side::Other(_) => s.output(&buf),
            };
            inter::leaders::bcast(s, side, data);
            return Ok(());
        }
        let root = root_of(s, root)?;
        let t = whole(s);
        let data = if t.me == root {
            s.input(&buf)
        } else {
            s.output(&buf)
        };
        // With single-copy shared memory the binomial tree stays ahead up to 8 members.
        let large = data.len >= thresholds().bcast_large && t.size() > 8;
        if let Some(maxlinear) = impi(s) {
            bcast::impi::build(s, root, data, maxlinear);
            return Ok(());
        }
        match forced("BCAST") {
            _ if magpie(s) => bcast::two_level::build(s, t, root, data, &levels(s)),
            Some("two_level") => bcast::two_level::build(s, t, root, data, &levels(s)),
            Some("scatter_allgather") => bcast::scatter_allgather::build(s, t, root, data),
            Some(_) => bcast::binomial::build(s, t, root, data),
            None if spans_nodes(s) => bcast::two_level::build(s, t, root, data, &levels(s)),
            None if large => bcast::scatter_allgather::build(s, t, root, data),
            None => bcast::binomial::build(s, t, root, data),
        }
        Ok(())
    })
}

/// Which way a rooted collective moves data.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    ToRoot,
    FromRoot,
}

/// `MPI_Gather(v)` (`Flow::ToRoot`) and `MPI_Scatter(v)` (`Flow::FromRoot`), blocking
/// or not: `blocks` (root only) are where each member's data goes or comes from, `own`
/// this member's data (`None`: `MPI_IN_PLACE` at the root, or no data on the root's
/// side of an intercommunicator).
pub fn rooted(
    function: &'static str,
    comm: CommId,
    mode: Mode,
    blocks: Vec<UserBuf>,
    own: Option<UserBuf>,
    root: i32,
    flow: Flow,
) -> MpiResult<Option<ReqId>> {
    sched::start(function, comm, mode, |s| {
        let (spans, mine): (Vec<Span>, _) = match flow {
            Flow::ToRoot => (
                blocks.iter().map(|b| s.output(b)).collect(),
                own.as_ref().map(|b| s.input(b)),
            ),
            Flow::FromRoot => (
                blocks.iter().map(|b| s.input(b)).collect(),
                own.as_ref().map(|b| s.output(b)),
            ),
        };
        if s.is_inter() {
            let side = side_of(s, root)?;
            let r = match side {
                Side::Other(r) => r,
                _ => 0,
            };
            let mine = mine.filter(|_| side != Side::Idle);
            let scatter = flow == Flow::FromRoot;
            inter::direct::rooted(s, side == Side::Root, r, &spans, mine, scatter);
            return Ok(());
        }
        let root = root_of(s, root)?;
        // Equal blocks (what forwarding through site leaders needs) is a property of
        // the function; every member then knows every block's length.
        let equal = !function.contains("atherv") && !function.contains("catterv");
        let t = whole(s);
        let len = mine.or(spans.first().copied()).map_or(0, |m| m.len);
        if let Some(cut) = site_cut(s, t, Some(root)).filter(|_| equal) {
            let lens = vec![len; t.size()];
            match flow {
                Flow::ToRoot => gather::sites::build(s, t, &cut, root, mine, &spans, &lens),
                Flow::FromRoot => scatter::sites::build(s, t, &cut, root, &spans, mine, &lens),
            }
            return Ok(());
        }
        match flow {
            Flow::ToRoot => gather::linear::build(s, t, root, mine, &spans),
            Flow::FromRoot => scatter::linear::build(s, t, root, &spans, mine),
        }
        Ok(())
    })
}

/// Whether an allgather of `block` bytes per member among `members` (a power of two, on
/// one node, crowded or not) takes recursive doubling rather than the ring (see
/// [`select::Thresholds::allgather_small`] and `allgather_crowded_max`).
fn doubling_pays(crowded: bool, members: usize, block: usize) -> bool {
    let t = thresholds();
    block <= t.allgather_small || (crowded && members >= 8 && block <= t.allgather_crowded_max)
}

/// The allgather algorithm of a call.
enum Gathering {
    TwoLevel,
    /// Recursive doubling over the whole receive buffer.
    Doubling(Span),
    Ring,
}

/// `MPI_Allgather(v)` / `MPI_Iallgather(v)`: `send` is `None` for `MPI_IN_PLACE` (this
/// member's block is already in `blocks`); `equal`: the blocks are equal and laid out
/// back to back in one buffer (`MPI_Allgather`), which allows recursive doubling.
pub fn allgather(
    function: &'static str,
    comm: CommId,
    mode: Mode,
    send: Option<UserBuf>,
    blocks: Vec<UserBuf>,
    whole_buf: Option<UserBuf>,
) -> MpiResult<Option<ReqId>> {
    if mode == Mode::Blocking
        && light::allgather(
            function,
            light::known(comm),
            send.as_ref(),
            &light::Blocks::Each(&blocks),
        )?
    {
        return Ok(None);
    }
    sched::start(function, comm, mode, |s| {
        if s.is_inter() {
            let mine = s.input(send.as_ref().expect("intercommunicator allgather has data"));
            let spans: Vec<Span> = blocks.iter().map(|b| s.output(b)).collect();
            let out = vec![mine; spans.len()];
            inter::direct::exchange(s, &out, &spans);
            return Ok(());
        }
        let t = whole(s);
        let (spans, whole_span) = match &whole_buf {
            Some(w) if send.is_none() => {
                let ws = s.inout(w);
                let b = ws.len / t.size().max(1);
                (
                    (0..t.size()).map(|i| ws.block(i, b)).collect::<Vec<_>>(),
                    Some(ws),
                )
            }
            Some(w) => {
                let ws = s.output(w);
                let b = ws.len / t.size().max(1);
                ((0..t.size()).map(|i| ws.block(i, b)).collect(), Some(ws))
            }
            None if send.is_none() => (blocks.iter().map(|b| s.inout(b)).collect(), None),
            None => (blocks.iter().map(|b| s.output(b)).collect(), None),
        };
        let mine = send.as_ref().map(|b| s.input(b));
        let block = spans[0].len;
        let pow2 = t.size().is_power_of_two();
        let algorithm = match (forced("ALLGATHER"), whole_span) {
            _ if magpie(s) => Gathering::TwoLevel,
            (Some("two_level"), Some(_)) => Gathering::TwoLevel,
            (Some("recursive_doubling"), Some(w)) if pow2 => Gathering::Doubling(w),
            (Some(_), _) => Gathering::Ring,
            (None, Some(_)) if spans_nodes(s) => Gathering::TwoLevel,
            (None, Some(w)) if pow2 && doubling_pays(s.node_crowded, t.size(), block) => {
                Gathering::Doubling(w)
            }
            (None, _) => Gathering::Ring,
        };
        // The ring sends this member's block from the send buffer while copying it
        // into place; the others need it in place first.
        if let (Gathering::Ring, Some(own)) = (&algorithm, mine) {
            allgather::ring::build_from(s, t, &spans, own);
            return Ok(());
        }
        if let Some(own) = mine {
            s.copy(own, spans[t.me]);
        }
        match algorithm {
            Gathering::TwoLevel => allgather::two_level::build(s, t, &spans, &levels(s)),
            Gathering::Doubling(w) => allgather::recursive_doubling::build(s, t, w, block),
            Gathering::Ring => allgather::ring::build(s, t, &spans),
        }
        Ok(())
    })
}

/// `MPI_Alltoall(v/w)` / `MPI_Ialltoall(v/w)`: `send` is `None` for `MPI_IN_PLACE` (the
/// data to send is in `recv`).
pub fn alltoall(
    function: &'static str,
    comm: CommId,
    mode: Mode,
    send: Option<Vec<UserBuf>>,
    recv: Vec<UserBuf>,
) -> MpiResult<Option<ReqId>> {
    // Equal blocks everywhere (what the light path beyond two members and aggregating at
    // site leaders need) is a property of the function, not of one member's arguments.
    let equal = !function.contains("lltoallv") && !function.contains("lltoallw");
    if let (Mode::Blocking, Some(out)) = (mode, &send) {
        let (out, into) = (light::Blocks::Each(out), light::Blocks::Each(&recv));
        if light::alltoall(function, light::known(comm), &out, &into, equal)? {
            return Ok(None);
        }
    }
    sched::start(function, comm, mode, |s| {
        let out: Vec<Span> = match &send {
            Some(v) => v.iter().map(|b| s.input(b)).collect(),
            None => recv.iter().map(|b| snapshot(s, b)).collect(),
        };
        let into: Vec<Span> = recv.iter().map(|b| s.output(b)).collect();
        if s.is_inter() {
            inter::direct::exchange(s, &out, &into);
            return Ok(());
        }
        let t = whole(s);
        let largest = out.iter().map(|b| b.len).max().unwrap_or(0);
        let small = largest < thresholds().alltoall_large;
        if let Some(cut) = site_cut(s, t, None).filter(|_| equal && small) {
            alltoall::sites::build(s, t, &cut, &out, &into);
            return Ok(());
        }
        if magpie(s) {
            // Large blocks across sites: every pair at once, in eager pieces between
            // sites, so the data crosses in one wide-area latency (pairwise rounds
            // would pay one per round with a remote partner, aggregating at leaders a
            // copy and one connection for all of a site's data).
            let (sites, piece) = (s.sites.clone(), wide_piece(s));
            let my_site = sites[t.rank(t.me)];
            let piece_to = |j: usize| {
                if sites[t.rank(j)] == my_site {
                    usize::MAX
                } else {
                    piece
                }
            };
            alltoall::linear::build_in_pieces(s, t, &out, &into, &piece_to);
            return Ok(());
        }
        match forced("ALLTOALL") {
            Some("pairwise") => alltoall::pairwise::build(s, t, &out, &into),
            Some(_) => alltoall::linear::build(s, t, &out, &into),
            None if largest >= thresholds().alltoall_large && spans_nodes(s) => {
                alltoall::pairwise::build(s, t, &out, &into)
            }
            None => alltoall::linear::build(s, t, &out, &into),
        }
        Ok(())
    })
}

/// `MPI_Reduce` / `MPI_Ireduce`: `send` is `None` for `MPI_IN_PLACE` at the root;
/// `recv` matters at the root only.
pub fn reduce(
    function: &'static str,
    comm: CommId,
    mode: Mode,
    send: Option<UserBuf>,
    recv: Option<UserBuf>,
    op: ReduceOp,
    root: i32,
) -> MpiResult<Option<ReqId>> {
    sched::start(function, comm, mode, |s| {
        if s.is_inter() {
            let side = side_of(s, root)?;
            let Some(typed) = send.as_ref().or(recv.as_ref()) else {
                return Ok(()); // MPI_PROC_NULL: no part in it
            };
            let commutative = set_op(s, &op, typed)?;
            let result = match (side, &recv) {
                (Side::Root, Some(r)) => Some(s.output(r)),
                _ => None,
            };
            let input = match (side, &send) {
                (Side::Other(_), Some(b)) => s.input(b),
                _ => s.temp(0),
            };
            inter::leaders::reduce(s, side, input, result, commutative);
            return Ok(());
        }
        let typed = send.as_ref().or(recv.as_ref()).ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Buffer,
                function,
                "sendbuf",
                "MPI_IN_PLACE",
                "allowed at the root only",
            )
        })?;
        let commutative = set_op(s, &op, typed)?;
        let root = root_of(s, root)?;
        let t = whole(s);
        let result = if t.me == root {
            recv.as_ref().map(|r| {
                if send.is_none() {
                    s.inout(r)
                } else {
                    s.output(r)
                }
            })
        } else {
            None
        };
        let input = match &send {
            Some(b) => s.input(b),
            None => result.expect("MPI_IN_PLACE only at the root"),
        };
        if let Some(maxlinear) = impi(s) {
            reduce::impi::build(s, root, input, result, commutative, maxlinear);
            return Ok(());
        }
        let two = match forced("REDUCE") {
            _ if magpie(s) => commutative || ordered_levels(s),
            Some("two_level") => commutative,
            Some(_) => false,
            None => commutative && spans_nodes(s),
        };
        if two {
            reduce::two_level::build(s, t, root, input, result, &levels(s), commutative);
        } else {
            reduce::binomial::build(s, t, root, input, result, commutative);
        }
        Ok(())
    })
}

/// `MPI_Allreduce` / `MPI_Iallreduce`: `send` is `None` for `MPI_IN_PLACE`.
pub fn allreduce(
    function: &'static str,
    comm: CommId,
    mode: Mode,
    send: Option<UserBuf>,
    recv: UserBuf,
    op: ReduceOp,
) -> MpiResult<Option<ReqId>> {
    if mode == Mode::Blocking
        && light::allreduce(function, light::known(comm), send.as_ref(), &recv, &op)?
    {
        return Ok(None);
    }
    sched::start(function, comm, mode, |s| {
        let commutative = set_op(s, &op, &recv)?;
        let (input, output) = in_out(s, send.as_ref(), &recv);
        if s.is_inter() {
            inter::leaders::allreduce(s, input, output, commutative);
            return Ok(());
        }
        let t = whole(s);
        let elem = recv.dtype.size().max(1) as usize;
        let pof2 = 1usize << t.size().ilog2();
        let rabenseifner_fits = commutative && output.len / elem >= pof2 && t.size() > 1;
        let large = output.len >= thresholds().allreduce_large;
        if let Some(maxlinear) = impi(s) {
            allreduce::impi::build(s, input, output, commutative, maxlinear);
            return Ok(());
        }
        let ordered = commutative || ordered_levels(s);
        match forced("ALLREDUCE") {
            _ if magpie(s) && ordered => {
                allreduce::two_level::build(s, t, input, output, &levels(s), commutative)
            }
            Some("two_level") if commutative => {
                allreduce::two_level::build(s, t, input, output, &levels(s), true)
            }
            Some("rabenseifner") if rabenseifner_fits => {
                allreduce::rabenseifner::build(s, t, input, output, elem)
            }
            Some(_) => allreduce::recursive_doubling::build(s, t, input, output, commutative),
            None if commutative && spans_nodes(s) => {
                allreduce::two_level::build(s, t, input, output, &levels(s), true)
            }
            None if large && rabenseifner_fits => {
                allreduce::rabenseifner::build(s, t, input, output, elem)
            }
            None => allreduce::recursive_doubling::build(s, t, input, output, commutative),
        }
        Ok(())
    })
}

/// `MPI_Reduce_scatter(_block)` and their nonblocking forms: `input` is the whole
/// vector (the send buffer, or the receive buffer for `MPI_IN_PLACE`), `counts[i]`
/// the elements member i gets, `mine` this member's result. On an intercommunicator
/// each group gets the other group's reduction, scattered by its own counts.
pub fn reduce_scatter(
    function: &'static str,
    comm: CommId,
    mode: Mode,
    input: UserBuf,
    mine: UserBuf,
    counts: Vec<u64>,
    op: ReduceOp,
) -> MpiResult<Option<ReqId>> {
    sched::start(function, comm, mode, |s| {
        let commutative = set_op(s, &op, &input)?;
        let elem = input.dtype.size() as usize;
        let lens: Vec<usize> = counts.iter().map(|&c| c as usize * elem).collect();
        let inp = snapshot(s, &input);
        let out = s.output(&mine);
        if s.is_inter() {
            inter::leaders::reduce_scatter(s, inp, &lens, out, commutative);
            return Ok(());
        }
        let t = whole(s);
        if magpie(s) && (commutative || ordered_levels(s)) {
            let lv = levels(s);
            reduce_scatter::two_level::build(s, t, inp, &lens, out, &lv, commutative);
            return Ok(());
        }
        reduce_scatter::reduce_then_scatter::build(s, t, inp, &lens, out, commutative);
        Ok(())
    })
}

/// `MPI_Scan` / `MPI_Exscan` and their nonblocking forms: `send` is `None` for
/// `MPI_IN_PLACE`.
pub fn scan(
    function: &'static str,
    comm: CommId,
    mode: Mode,
    send: Option<UserBuf>,
    recv: UserBuf,
    op: ReduceOp,
    exclusive: bool,
) -> MpiResult<Option<ReqId>> {
    sched::start(function, comm, mode, |s| {
        not_inter(s)?;
        let commutative = set_op(s, &op, &recv)?;
        let (input, output) = in_out(s, send.as_ref(), &recv);
        let t = whole(s);
        let in_runs = levels::in_runs(&s.sites);
        if let Some(cut) = site_cut(s, t, None).filter(|_| in_runs) {
            scan::sites::build(s, t, &cut, input, output, exclusive, commutative);
            return Ok(());
        }
        scan::recursive_doubling::build(s, t, input, output, exclusive, commutative);
        Ok(())
    })
}

/// Neighbourhood collectives: `out[j]` goes to destination j, `into[i]` comes from
/// source i of the communicator's topology.
pub fn neighbor_exchange(
    function: &'static str,
    comm: CommId,
    mode: Mode,
    out: Vec<UserBuf>,
    into: Vec<UserBuf>,
) -> MpiResult<Option<ReqId>> {
    sched::start(function, comm, mode, |s| {
        let topo = s.topology.clone().ok_or_else(|| no_topology(function))?;
        let (sources, dests) = topo.neighbors(s.rank);
        let o: Vec<Span> = out.iter().map(|b| s.input(b)).collect();
        let i: Vec<Span> = into.iter().map(|b| s.output(b)).collect();
        let cartesian = matches!(*topo, Topology::Cart(_));
        neighbor::linear::build(s, &sources, &i, &dests, &o, cartesian);
        Ok(())
    })
}

fn no_topology(function: &str) -> MpiError {
    MpiError::arg(
        ErrorClass::Topology,
        function,
        "comm",
        "a communicator without topology",
        "neighbourhood collectives need a Cartesian or graph topology",
    )
}

/// The neighbour counts (sources, destinations) of a communicator's topology.
pub fn neighbor_counts(function: &str, comm: CommId) -> MpiResult<(usize, usize)> {
    runtime::with(function, |rt| {
        let c = rt.comm(function, comm)?;
        let (src, dst) = c.neighbors().ok_or_else(|| no_topology(function))?;
        Ok((src.len(), dst.len()))
    })
}

#[cfg(test)]
mod tests {
    use super::{doubling_pays, repeats, several};

    #[test]
    fn allgather_doubles_small_blocks_and_moderate_ones_on_a_crowded_node_of_8() {
        assert!(doubling_pays(false, 4, 4096), "small blocks, any node");
        assert!(
            !doubling_pays(false, 8, 65536),
            "a processor per rank: the ring"
        );
        assert!(
            doubling_pays(true, 8, 65536),
            "8 ranks taking turns: fewer rounds"
        );
        assert!(doubling_pays(true, 16, 256 * 1024));
        assert!(
            !doubling_pays(true, 4, 65536),
            "4 crowded ranks: the ring measured faster"
        );
        assert!(!doubling_pays(true, 8, 1 << 20), "past the crowded maximum");
    }

    #[test]
    fn several_tells_one_value_from_more() {
        assert!(!several(&[]));
        assert!(!several(&[3]));
        assert!(!several(&[3, 3, 3]));
        assert!(several(&[3, 3, 4]));
        assert!(several(&[4, 3]));
    }

    #[test]
    fn repeats_finds_a_value_held_twice_wherever_it_is() {
        assert!(!repeats(&[]));
        assert!(!repeats(&[0, 1, 2]));
        assert!(repeats(&[0, 1, 0]));
        assert!(repeats(&[2, 2]));
    }
}
