//! Schedules of all members executed against each other in memory: every algorithm,
//! including the node-aware ones that need several nodes, on any member count and node
//! layout, without processes. Sends are buffered at once; a member posts every step up
//! to a wait point, as the engine does; a receive takes the oldest message of its
//! (source, destination, tag) and must match its length exactly; a sweep without
//! progress before every schedule ended is a deadlock.

use super::{Sched, Span, Step};
use crate::coll::levels::Level;
use crate::coll::levels::{layout, split};
use crate::coll::team::Team;
use crate::coll::{
    allgather, allreduce, alltoall, barrier, bcast, gather, reduce, reduce_scatter, scan, scatter,
};
use crate::comm::Group;
use crate::reduce::ReduceOp;
use crossmpi_datatype::op::Op;
use crossmpi_datatype::{Basic, Datatype};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

impl Sched<'static> {
    fn detached(rank: usize, nodes: &[u32], sites: &[u32]) -> Sched<'static> {
        Sched {
            function: "sim",
            context: 1,
            tag: 16,
            rank,
            group: Group::new((0..nodes.len() as u32).collect()),
            remote: None,
            nodes: Arc::new(nodes.to_vec()),
            sites: Arc::new(sites.to_vec()),
            node_crowded: false,
            node_bound: false,
            wan: crate::coll::select::Wan::Flat,
            topology: None,
            b: Default::default(),
            reduction: None,
            next: 0,
            finished: false,
            user_reduction: None,
            direct: false,
        }
    }
}

/// Messages each member sent to each other one: (from, to) -> count.
type Sent = HashMap<(usize, usize), usize>;

/// Runs one schedule per member to the end; returns how many messages each member sent
/// to each other one.
fn execute(scheds: &mut [Sched<'static>]) -> Sent {
    let mut sent = Sent::new();
    for s in scheds.iter_mut() {
        s.seal();
    }
    let mut mail: HashMap<(usize, usize, i32), VecDeque<Vec<u8>>> = HashMap::new();
    let mut waiting: Vec<Vec<(usize, i32, Span)>> = vec![Vec::new(); scheds.len()];
    loop {
        let mut moved = false;
        for (me, s) in scheds.iter_mut().enumerate() {
            let pending = &mut waiting[me];
            let mut still = Vec::new();
            for (src, tag, span) in pending.drain(..) {
                match mail.get_mut(&(src, me, tag)).and_then(|q| q.pop_front()) {
                    Some(msg) if still.iter().all(|&(s2, t2, _)| (s2, t2) != (src, tag)) => {
                        assert_eq!(
                            msg.len(),
                            span.len,
                            "member {me}: message from {src} has the wrong length"
                        );
                        s.slice(span).write().0.copy_from_slice(&msg);
                        moved = true;
                    }
                    Some(msg) => {
                        mail.get_mut(&(src, me, tag)).unwrap().push_front(msg);
                        still.push((src, tag, span));
                    }
                    None => still.push((src, tag, span)),
                }
            }
            *pending = still;
            // Like the engine: everything up to a wait point is posted at once.
            while s.next < s.b.steps.len() {
                let i = s.next;
                if matches!(s.b.steps[i], Step::Wait) && !pending.is_empty() {
                    break;
                }
                s.next += 1;
                moved = true;
                match s.b.steps[i] {
                    Step::Send { to, data, subtag } => {
                        let (w, bit) = s.world_of(to);
                        let msg = s.slice(data).read().0.to_vec();
                        *sent.entry((me, w as usize)).or_default() += 1;
                        mail.entry((me, w as usize, s.tag | bit | super::subtag_bits(subtag)))
                            .or_default()
                            .push_back(msg);
                    }
                    Step::Recv { from, data, subtag } => {
                        let (w, bit) = s.world_of(from);
                        pending.push((w as usize, s.tag | bit | super::subtag_bits(subtag), data));
                    }
                    Step::Wait => {}
                    _ => s.run_local(i).unwrap(),
                }
            }
        }
        let all_done = scheds
            .iter()
            .enumerate()
            .all(|(m, s)| s.next >= s.b.steps.len() && waiting[m].is_empty());
        if all_done {
            assert!(
                mail.values().all(|q| q.is_empty()),
                "messages left over: {mail:?}"
            );
            return sent;
        }
        assert!(
            moved,
            "deadlock: {:?}",
            scheds.iter().map(|s| s.next).collect::<Vec<_>>()
        );
    }
}

fn ints(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn from_ints(b: &[u8]) -> Vec<i32> {
    b.chunks(4)
        .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

const LAYOUTS: &[&[u32]] = &[
    &[0],
    &[0, 0],
    &[0, 1],
    &[0, 0, 1, 1],
    &[0, 1, 0, 1, 2],
    &[0, 0, 0, 1, 1, 2, 2, 2],
    &[3, 1, 3, 1, 3, 1, 0],
    &[0, 1, 2, 3, 4, 5, 6, 7, 0],
];

/// Builds one schedule per member with `build(sched, team, member data, member output)`
/// over `len`-int buffers, runs them, and returns every member's output.
fn run_all(
    nodes: &[u32],
    len: usize,
    op: Option<ReduceOp>,
    input: impl Fn(usize) -> Vec<i32>,
    build: impl Fn(&mut Sched<'static>, Team, Span, Span),
) -> Vec<Vec<i32>> {
    run_on(nodes, &vec![0; nodes.len()], len, op, input, build).0
}

/// [`run_all`] on members at `sites`; also returns the messages each member sent to
/// each other one.
fn run_on(
    nodes: &[u32],
    sites: &[u32],
    len: usize,
    op: Option<ReduceOp>,
    input: impl Fn(usize) -> Vec<i32>,
    build: impl Fn(&mut Sched<'static>, Team, Span, Span),
) -> (Vec<Vec<i32>>, Sent) {
    let n = nodes.len();
    let mut ins: Vec<Vec<u8>> = (0..n).map(|r| ints(&input(r))).collect();
    let mut outs: Vec<Vec<u8>> = (0..n).map(|_| vec![0xee; len * 4]).collect();
    let mut scheds: Vec<Sched<'static>> = (0..n)
        .map(|r| {
            let mut s = Sched::detached(r, nodes, sites);
            if let Some(o) = &op {
                s.set_reduction(o.clone(), Datatype::basic(Basic::Int));
            }
            let i = s.region(ins[r].as_mut_ptr() as usize, ins[r].len());
            let o = s.region(outs[r].as_mut_ptr() as usize, outs[r].len());
            build(&mut s, Team::all(n, r), i, o);
            s
        })
        .collect();
    let sent = execute(&mut scheds);
    (outs.iter().map(|o| from_ints(o)).collect(), sent)
}

fn levels(nodes: &[u32]) -> Vec<Level> {
    vec![Level::local(Arc::new(nodes.to_vec()))]
}

/// A non-commutative, associative operator on pairs of ints: composition of affine
/// maps, (a1, b1) op (a2, b2) = (a1 a2, b1 a2 + b2) (apply the first, then the second).
fn affine() -> ReduceOp {
    ReduceOp::User {
        f: Arc::new(|i: &[u8], io: &mut [u8], _n, _t: &Datatype| {
            for (x, y) in i.chunks(8).zip(io.chunks_mut(8)) {
                let x = from_ints(x);
                let z = from_ints(y);
                let r = compose((x[0], x[1]), (z[0], z[1]));
                y.copy_from_slice(&ints(&[r.0, r.1]));
            }
        }),
        commutative: false,
    }
}

fn compose(f: (i32, i32), g: (i32, i32)) -> (i32, i32) {
    (
        f.0.wrapping_mul(g.0),
        f.1.wrapping_mul(g.0).wrapping_add(g.1),
    )
}

/// Member r's pair.
fn pair(r: usize) -> Vec<i32> {
    vec![r as i32 + 2, 100 * r as i32 + 1]
}

/// The rank-ordered composition of members lo..hi.
fn composed(lo: usize, hi: usize) -> Vec<i32> {
    let r = (lo..hi)
        .map(|r| (r as i32 + 2, 100 * r as i32 + 1))
        .reduce(compose)
        .unwrap();
    vec![r.0, r.1]
}

/// Member r holds the composition of members 0..=r (0..r when `exclusive`; member 0's
/// output is then undefined).
fn assert_prefixes(got: &[Vec<i32>], exclusive: bool, what: &str) {
    for (r, g) in got.iter().enumerate() {
        let upto = if exclusive { r } else { r + 1 };
        if upto > 0 {
            assert_eq!(
                g,
                &composed(0, upto),
                "{what} (exclusive: {exclusive}) member {r}"
            );
        }
    }
}

fn sum() -> Option<ReduceOp> {
    Some(ReduceOp::Builtin(Op::Sum))
}

#[test]
fn allreduce_every_algorithm_and_layout() {
    for nodes in LAYOUTS {
        let n = nodes.len();
        for len in [1, 5, 64] {
            let want: Vec<i32> = (0..len as i32)
                .map(|i| (0..n as i32).map(|r| r * 100 + i).sum())
                .collect();
            let inp = |r: usize| {
                (0..len as i32)
                    .map(|i| r as i32 * 100 + i)
                    .collect::<Vec<_>>()
            };
            let lv = levels(nodes);
            for got in [
                run_all(nodes, len, sum(), inp, |s, t, i, o| {
                    allreduce::recursive_doubling::build(s, t, i, o, true)
                }),
                run_all(nodes, len, sum(), inp, |s, t, i, o| {
                    allreduce::two_level::build(s, t, i, o, &lv, true)
                }),
                run_all(nodes, len, sum(), inp, |s, t, i, o| {
                    if len >= 8 {
                        allreduce::rabenseifner::build(s, t, i, o, 4)
                    } else {
                        allreduce::recursive_doubling::build(s, t, i, o, true)
                    }
                }),
            ] {
                for (r, g) in got.iter().enumerate() {
                    assert_eq!(g, &want, "nodes {nodes:?} len {len} member {r}");
                }
            }
            let ordered = run_all(nodes, 2, Some(affine()), pair, |s, t, i, o| {
                allreduce::recursive_doubling::build(s, t, i, o, false)
            });
            for g in &ordered {
                assert_eq!(
                    g,
                    &composed(0, n),
                    "non-commutative allreduce, nodes {nodes:?}"
                );
            }
        }
    }
}

#[test]
fn reduce_and_bcast_every_root_and_layout() {
    for nodes in LAYOUTS {
        let n = nodes.len();
        let lv = levels(nodes);
        let inp = |r: usize| vec![r as i32 + 1, 10 * r as i32];
        for root in 0..n {
            let plain = run_all(nodes, 2, sum(), inp, |s, t, i, o| {
                let res = (t.me == root).then_some(o);
                reduce::binomial::build(s, t, root, i, res, true)
            });
            let two = run_all(nodes, 2, sum(), inp, |s, t, i, o| {
                let res = (t.me == root).then_some(o);
                reduce::two_level::build(s, t, root, i, res, &lv, true)
            });
            let want = vec![(1..=n as i32).sum::<i32>(), 10 * (0..n as i32).sum::<i32>()];
            assert_eq!(
                plain[root], want,
                "binomial reduce, nodes {nodes:?} root {root}"
            );
            assert_eq!(
                two[root], want,
                "two-level reduce, nodes {nodes:?} root {root}"
            );
            let ordered = run_all(nodes, 2, Some(affine()), pair, |s, t, i, o| {
                let res = (t.me == root).then_some(o);
                reduce::binomial::build(s, t, root, i, res, false)
            });
            assert_eq!(
                ordered[root],
                composed(0, n),
                "ordered reduce, nodes {nodes:?} root {root}"
            );
            for len in [3, 40] {
                let data = |r: usize| {
                    if r == root {
                        (0..len as i32).map(|i| i * 7 + 1).collect()
                    } else {
                        vec![0; len]
                    }
                };
                let want: Vec<i32> = (0..len as i32).map(|i| i * 7 + 1).collect();
                let copy_in = |s: &mut Sched<'static>, i: Span, o: Span| s.copy(i, o);
                for got in [
                    run_all(nodes, len, None, data, |s, t, i, o| {
                        copy_in(s, i, o);
                        bcast::binomial::build(s, t, root, o)
                    }),
                    run_all(nodes, len, None, data, |s, t, i, o| {
                        copy_in(s, i, o);
                        bcast::two_level::build(s, t, root, o, &lv)
                    }),
                    run_all(nodes, len, None, data, |s, t, i, o| {
                        copy_in(s, i, o);
                        bcast::scatter_allgather::build(s, t, root, o)
                    }),
                ] {
                    for (r, g) in got.iter().enumerate() {
                        assert_eq!(
                            g, &want,
                            "bcast nodes {nodes:?} root {root} len {len} member {r}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn a_crowded_node_broadcasts_moderate_data_in_segments_and_a_mixed_team_whole() {
    let segment = crate::coll::select::thresholds().bcast_crowded_segment;
    let len = 20_000; // ints: 80 000 bytes
    let root = 1;
    let data = |r: usize| {
        if r == root {
            (0..len as i32).map(|i| i * 3 - 7).collect()
        } else {
            vec![0; len]
        }
    };
    let want: Vec<i32> = (0..len as i32).map(|i| i * 3 - 7).collect();
    for (nodes, per_edge) in [
        (&[0, 0, 0, 0][..], (len * 4).div_ceil(segment)),
        (&[0, 0, 1, 1][..], 1),
    ] {
        let (got, sent) = run_on(nodes, &[0; 4], len, None, data, |s, t, i, o| {
            s.node_crowded = true;
            s.copy(i, o);
            bcast::binomial::build(s, t, root, o)
        });
        assert!(got.iter().all(|g| *g == want), "nodes {nodes:?}");
        // Root 1 sends to members 3 and 2; member 3 passes on to member 0.
        let mut edges: Vec<_> = sent.into_iter().collect();
        edges.sort();
        assert_eq!(
            edges,
            [((1, 2), per_edge), ((1, 3), per_edge), ((3, 0), per_edge)],
            "nodes {nodes:?}"
        );
    }
}

#[test]
fn allgather_barrier_and_scan_every_layout() {
    for nodes in LAYOUTS {
        let n = nodes.len();
        let b = 3;
        let want: Vec<i32> = (0..n as i32)
            .flat_map(|r| (0..b as i32).map(move |i| r * 10 + i))
            .collect();
        let inp = |r: usize| (0..b as i32).map(|i| r as i32 * 10 + i).collect::<Vec<_>>();
        let gather = |two: bool, rd: bool| {
            run_all(nodes, n * b, None, inp, |s, t, i, o| {
                let blocks: Vec<Span> = (0..n).map(|k| o.block(k, b * 4)).collect();
                s.copy(i, blocks[t.me]);
                if two {
                    allgather::two_level::build(s, t, &blocks, &levels(nodes))
                } else if rd && n.is_power_of_two() {
                    allgather::recursive_doubling::build(s, t, o, b * 4)
                } else {
                    allgather::ring::build(s, t, &blocks)
                }
            })
        };
        for got in [
            gather(false, false),
            gather(true, false),
            gather(false, true),
        ] {
            for (r, g) in got.iter().enumerate() {
                assert_eq!(g, &want, "allgather nodes {nodes:?} member {r}");
            }
        }
        let lv = levels(nodes);
        run_all(
            nodes,
            0,
            None,
            |_| vec![],
            |s, t, _, _| barrier::two_level::build(s, t, &lv),
        );
        run_all(
            nodes,
            0,
            None,
            |_| vec![],
            |s, t, _, _| barrier::dissemination::build(s, t),
        );
        for exclusive in [false, true] {
            let got = run_all(nodes, 2, Some(affine()), pair, |s, t, i, o| {
                scan::recursive_doubling::build(s, t, i, o, exclusive, false)
            });
            assert_prefixes(&got, exclusive, "flat scan");
        }
    }
}

/// (nodes, sites) of members spanning sites: blocked, interleaved on one node, nodes
/// shared by sites, three sites, one member per site.
const SITE_LAYOUTS: &[(&[u32], &[u32])] = &[
    (&[0, 0, 0, 0], &[0, 0, 1, 1]),
    (&[0, 0, 0, 0], &[0, 1, 0, 1]),
    (&[0, 0, 1, 1, 2, 2], &[0, 0, 0, 0, 1, 1]),
    (&[5, 5, 5, 6, 6, 6, 6], &[0, 0, 1, 1, 1, 1, 1]),
    (&[0, 1, 2, 3, 4, 5, 6, 7], &[0, 0, 0, 1, 1, 1, 2, 2]),
    (&[0, 0, 0], &[2, 0, 1]),
];

fn site_levels(nodes: &[u32], sites: &[u32]) -> Vec<Level> {
    let inner = crate::coll::levels::refine(nodes, sites);
    vec![
        Level::local(Arc::new(inner)),
        Level::wide(Arc::new(sites.to_vec())),
    ]
}

/// Messages from site a to site b, for every ordered pair of distinct sites.
fn crossings(sites: &[u32], sent: &Sent) -> HashMap<(u32, u32), usize> {
    let mut c: HashMap<(u32, u32), usize> = HashMap::new();
    for a in sites {
        for b in sites {
            if a != b {
                c.insert((*a, *b), 0);
            }
        }
    }
    for (&(from, to), &k) in sent {
        if sites[from] != sites[to] {
            *c.get_mut(&(sites[from], sites[to])).unwrap() += k;
        }
    }
    c
}

/// Asserts `want(a, b)` messages from site a to site b for every pair.
fn assert_crossings(what: &str, sites: &[u32], sent: &Sent, want: impl Fn(u32, u32) -> usize) {
    for ((a, b), k) in crossings(sites, sent) {
        assert_eq!(k, want(a, b), "{what}: sites {sites:?}: {a} -> {b}");
    }
}

#[test]
fn wan_aware_collectives_cross_between_sites_once() {
    for &(nodes, sites) in SITE_LAYOUTS {
        let n = nodes.len();
        let lv = site_levels(nodes, sites);
        let ordered = lv.iter().all(|l| crate::coll::levels::in_runs(&l.key));
        let (_, sent) = run_on(
            nodes,
            sites,
            0,
            None,
            |_| vec![],
            |s, t, _, _| barrier::two_level::build(s, t, &lv),
        );
        assert_crossings("barrier", sites, &sent, |_, _| 1);

        let inp = |r: usize| vec![r as i32 + 1, 10 * r as i32];
        let want = vec![(1..=n as i32).sum::<i32>(), 10 * (0..n as i32).sum::<i32>()];
        let (got, sent) = run_on(nodes, sites, 2, sum(), inp, |s, t, i, o| {
            allreduce::two_level::build(s, t, i, o, &lv, true)
        });
        assert!(
            got.iter().all(|g| g == &want),
            "allreduce {sites:?}: {got:?}"
        );
        assert_crossings("allreduce", sites, &sent, |_, _| 1);
        if ordered {
            let (got, sent) = run_on(nodes, sites, 2, Some(affine()), pair, |s, t, i, o| {
                allreduce::two_level::build(s, t, i, o, &lv, false)
            });
            assert!(
                got.iter().all(|g| g == &composed(0, n)),
                "ordered allreduce {sites:?}"
            );
            assert_crossings("ordered allreduce", sites, &sent, |_, _| 1);
        }

        for root in 0..n {
            let rs = sites[root];
            let (got, sent) = run_on(nodes, sites, 2, sum(), inp, |s, t, i, o| {
                let res = (t.me == root).then_some(o);
                reduce::two_level::build(s, t, root, i, res, &lv, true)
            });
            assert_eq!(got[root], want, "reduce {sites:?} root {root}");
            assert_crossings("reduce", sites, &sent, |_, b| usize::from(b == rs));
            if ordered {
                let (got, sent) = run_on(nodes, sites, 2, Some(affine()), pair, |s, t, i, o| {
                    let res = (t.me == root).then_some(o);
                    reduce::two_level::build(s, t, root, i, res, &lv, false)
                });
                assert_eq!(
                    got[root],
                    composed(0, n),
                    "ordered reduce {sites:?} root {root}"
                );
                assert_crossings("ordered reduce", sites, &sent, |_, b| usize::from(b == rs));
            }
            let data = |r: usize| if r == root { vec![7, 8, 9] } else { vec![0; 3] };
            let (got, sent) = run_on(nodes, sites, 3, None, data, |s, t, i, o| {
                s.copy(i, o);
                bcast::two_level::build(s, t, root, o, &lv)
            });
            assert!(
                got.iter().all(|g| g == &[7, 8, 9]),
                "bcast {sites:?} root {root}"
            );
            assert_crossings("bcast", sites, &sent, |a, _| usize::from(a == rs));
        }

        // allgatherv: member r has r % 3 + 1 ints
        let len = |r: usize| r % 3 + 1;
        let total: usize = (0..n).map(len).sum();
        let want: Vec<i32> = (0..n)
            .flat_map(|r| (0..len(r) as i32).map(move |k| r as i32 * 10 + k))
            .collect();
        let (got, sent) = run_on(
            nodes,
            sites,
            total,
            None,
            |r| (0..len(r) as i32).map(|k| r as i32 * 10 + k).collect(),
            |s, t, i, o| {
                let mut at = 0;
                let blocks: Vec<Span> = (0..n)
                    .map(|r| {
                        at += len(r) * 4;
                        o.sub(at - len(r) * 4, len(r) * 4)
                    })
                    .collect();
                s.copy(i, blocks[t.me]);
                allgather::two_level::build(s, t, &blocks, &lv)
            },
        );
        assert!(
            got.iter().all(|g| g == &want),
            "allgatherv {sites:?}: {got:?}"
        );
        assert_crossings("allgather", sites, &sent, |_, _| 1);

        let b = 2;
        let (got, sent) = run_on(
            nodes,
            sites,
            n * b,
            None,
            |r| (0..(n * b) as i32).map(|x| r as i32 * 1000 + x).collect(),
            |s, t, i, o| {
                let out: Vec<Span> = (0..n).map(|k| i.block(k, b * 4)).collect();
                let into: Vec<Span> = (0..n).map(|k| o.block(k, b * 4)).collect();
                let site_level = Level::wide(Arc::new(sites.to_vec()));
                match crate::coll::levels::cut(t, &site_level, None) {
                    crate::coll::levels::Cut::Split(c) => {
                        alltoall::sites::build(s, t, &c, &out, &into)
                    }
                    _ => alltoall::linear::build(s, t, &out, &into),
                }
            },
        );
        for (r, g) in got.iter().enumerate() {
            let want: Vec<i32> = (0..n)
                .flat_map(|i| (0..b).map(move |k| i as i32 * 1000 + (r * b + k) as i32))
                .collect();
            assert_eq!(g, &want, "alltoall {sites:?} member {r}");
        }
        assert_crossings("alltoall", sites, &sent, |_, _| 1);
    }
}

#[test]
fn impi_collectives_use_masters_and_the_root() {
    for &(nodes, sites) in SITE_LAYOUTS {
        let n = nodes.len();
        let nsites = {
            let mut v = sites.to_vec();
            v.sort_unstable();
            v.dedup();
            v.len()
        };
        let masters: Vec<usize> = (0..n)
            .filter(|&r| !sites[..r].contains(&sites[r]))
            .collect();
        for maxlinear in [1, 4] {
            let (_, sent) = run_on(
                nodes,
                sites,
                0,
                None,
                |_| vec![],
                |s, _, _, _| barrier::impi::build(s, maxlinear),
            );
            for (&(a, b), _) in sent.iter().filter(|((a, b), _)| sites[*a] != sites[*b]) {
                assert!(
                    masters.contains(&a) && masters.contains(&b),
                    "barrier {a}->{b}"
                );
            }
            let crossing: usize = crossings(sites, &sent).values().sum();
            assert_eq!(
                crossing,
                2 * (nsites - 1),
                "barrier {sites:?}: a tree over the masters"
            );

            let inp = |r: usize| vec![r as i32 + 1, 10 * r as i32];
            let want = vec![(1..=n as i32).sum::<i32>(), 10 * (0..n as i32).sum::<i32>()];
            let (got, _) = run_on(nodes, sites, 2, sum(), inp, |s, _, i, o| {
                allreduce::impi::build(s, i, o, true, maxlinear)
            });
            assert!(
                got.iter().all(|g| g == &want),
                "impi allreduce {sites:?}: {got:?}"
            );
            let (got, _) = run_on(nodes, sites, 2, Some(affine()), pair, |s, _, i, o| {
                allreduce::impi::build(s, i, o, false, maxlinear)
            });
            assert!(
                got.iter().all(|g| g == &composed(0, n)),
                "impi ordered allreduce"
            );
            for root in 0..n {
                let (got, sent) = run_on(nodes, sites, 2, sum(), inp, |s, t, i, o| {
                    let res = (t.me == root).then_some(o);
                    reduce::impi::build(s, root, i, res, true, maxlinear)
                });
                assert_eq!(got[root], want, "impi reduce {sites:?} root {root}");
                // the root stands in for its site's master in the global phase
                let is_global =
                    |r: usize| r == root || (masters.contains(&r) && sites[r] != sites[root]);
                for (&(a, b), _) in sent.iter().filter(|((a, b), _)| sites[*a] != sites[*b]) {
                    assert!(
                        is_global(a) && is_global(b),
                        "impi reduce root {root}: {a}->{b}"
                    );
                }
                let data = |r: usize| if r == root { vec![4, 5] } else { vec![0; 2] };
                let (got, sent) = run_on(nodes, sites, 2, None, data, |s, _, i, o| {
                    s.copy(i, o);
                    bcast::impi::build(s, root, o, maxlinear)
                });
                assert!(
                    got.iter().all(|g| g == &[4, 5]),
                    "impi bcast {sites:?} root {root}"
                );
                for (&(a, b), _) in sent.iter().filter(|((a, b), _)| sites[*a] != sites[*b]) {
                    assert!(
                        is_global(a) && is_global(b),
                        "impi bcast root {root}: {a}->{b}"
                    );
                }
                assert_eq!(crossings(sites, &sent).values().sum::<usize>(), nsites - 1);
            }
        }
    }
}

#[test]
fn rooted_and_prefix_collectives_across_sites() {
    for &(nodes, sites) in SITE_LAYOUTS {
        let n = nodes.len();
        let b = 2;
        let lens = vec![b * 4; n];
        let members: Vec<usize> = (0..n).collect();
        for root in 0..n {
            let Some(_) = split(Team::all(n, root), sites, Some(root)) else {
                continue;
            };
            let rs = sites[root];
            let (got, sent) = run_on(
                nodes,
                sites,
                n * b,
                None,
                |r| (0..b as i32).map(|k| r as i32 * 10 + k).collect(),
                |s, t, i, o| {
                    let cut = split(t, sites, Some(root)).unwrap();
                    let blocks = layout(o, &members, &lens);
                    let blocks = if t.me == root { blocks } else { vec![] };
                    gather::sites::build(s, t, &cut, root, Some(i), &blocks, &lens)
                },
            );
            let want: Vec<i32> = (0..n as i32)
                .flat_map(|r| (0..b as i32).map(move |k| r * 10 + k))
                .collect();
            assert_eq!(got[root], want, "gather {sites:?} root {root}");
            assert_crossings("gather", sites, &sent, |_, to| usize::from(to == rs));

            let (got, sent) = run_on(
                nodes,
                sites,
                b,
                None,
                |r| {
                    if r == root {
                        (0..(n * b) as i32).map(|x| x + 5).collect()
                    } else {
                        vec![0; n * b]
                    }
                },
                |s, t, i, o| {
                    let cut = split(t, sites, Some(root)).unwrap();
                    let blocks = layout(i, &members, &lens);
                    let blocks = if t.me == root { blocks } else { vec![] };
                    scatter::sites::build(s, t, &cut, root, &blocks, Some(o), &lens)
                },
            );
            for (r, g) in got.iter().enumerate() {
                let want: Vec<i32> = (0..b).map(|k| (r * b + k) as i32 + 5).collect();
                assert_eq!(g, &want, "scatter {sites:?} root {root} member {r}");
            }
            assert_crossings("scatter", sites, &sent, |from, _| usize::from(from == rs));
        }

        let lv = site_levels(nodes, sites);
        let ordered = lv.iter().all(|l| crate::coll::levels::in_runs(&l.key));
        if !ordered {
            continue;
        }
        // reduce-scatter of rank-ordered compositions: member r gets pair r
        let (got, _) = run_on(
            nodes,
            sites,
            2,
            Some(affine()),
            |r| (0..n).flat_map(|i| pair(r + i)).collect(),
            |s, t, i, o| {
                let inp = s.temp(i.len);
                s.copy(i, inp);
                let lens = vec![8; n];
                reduce_scatter::two_level::build(s, t, inp, &lens, o, &lv, false)
            },
        );
        for (r, g) in got.iter().enumerate() {
            let want = (0..n)
                .map(|m| (pair(m + r)[0], pair(m + r)[1]))
                .reduce(compose)
                .unwrap();
            assert_eq!(
                g,
                &vec![want.0, want.1],
                "reduce_scatter {sites:?} member {r}"
            );
        }
        let Some(_) = split(Team::all(n, 0), sites, None) else {
            continue;
        };
        for exclusive in [false, true] {
            let (got, sent) = run_on(nodes, sites, 2, Some(affine()), pair, |s, t, i, o| {
                let cut = split(t, sites, None).unwrap();
                scan::sites::build(s, t, &cut, i, o, exclusive, false)
            });
            assert_prefixes(&got, exclusive, &format!("scan across sites {sites:?}"));
            assert_crossings("scan", sites, &sent, |a, b| usize::from(a < b));
        }
    }
}

#[test]
fn wan_aware_collectives_cross_in_pieces() {
    // Pieces of one int: every int that crosses between sites is a message of its own.
    let piece = 4;
    for &(nodes, sites) in SITE_LAYOUTS {
        let n = nodes.len();
        let b = 2;
        let lens = vec![b * 4; n];
        let members: Vec<usize> = (0..n).collect();
        let at = |site: u32| sites.iter().filter(|&&x| x == site).count();
        let lv: Vec<Level> = site_levels(nodes, sites)
            .into_iter()
            .map(|l| if l.wide { l.in_pieces(piece) } else { l })
            .collect();
        let wide_cut = |t: Team, root: Option<usize>| {
            split(t, sites, root).map(|mut c| {
                c.piece = piece;
                c
            })
        };
        let mine = |r: usize| (0..b as i32).map(|k| r as i32 * 10 + k).collect::<Vec<_>>();
        let all: Vec<i32> = (0..n).flat_map(mine).collect();

        let (got, sent) = run_on(nodes, sites, n * b, None, mine, |s, t, i, o| {
            let blocks: Vec<Span> = (0..n).map(|k| o.block(k, b * 4)).collect();
            s.copy(i, blocks[t.me]);
            allgather::two_level::build(s, t, &blocks, &lv)
        });
        assert!(got.iter().all(|g| g == &all), "allgather {sites:?}");
        assert_crossings("allgather", sites, &sent, |a, _| at(a) * b);

        let Some(_) = split(Team::all(n, 0), sites, None) else {
            continue;
        };
        let (got, sent) = run_on(
            nodes,
            sites,
            n * b,
            None,
            |r| (0..(n * b) as i32).map(|x| r as i32 * 1000 + x).collect(),
            |s, t, i, o| {
                let out: Vec<Span> = (0..n).map(|k| i.block(k, b * 4)).collect();
                let into: Vec<Span> = (0..n).map(|k| o.block(k, b * 4)).collect();
                alltoall::sites::build(s, t, &wide_cut(t, None).unwrap(), &out, &into)
            },
        );
        for (r, g) in got.iter().enumerate() {
            let want: Vec<i32> = (0..n)
                .flat_map(|i| (0..b).map(move |k| i as i32 * 1000 + (r * b + k) as i32))
                .collect();
            assert_eq!(g, &want, "alltoall {sites:?} member {r}");
        }
        assert_crossings("alltoall", sites, &sent, |a, c| at(a) * at(c) * b);

        for root in 0..n {
            let rs = sites[root];
            let (got, sent) = run_on(nodes, sites, n * b, None, mine, |s, t, i, o| {
                let blocks = layout(o, &members, &lens);
                let blocks = if t.me == root { blocks } else { vec![] };
                let cut = wide_cut(t, Some(root)).unwrap();
                gather::sites::build(s, t, &cut, root, Some(i), &blocks, &lens)
            });
            assert_eq!(got[root], all, "gather {sites:?} root {root}");
            assert_crossings("gather", sites, &sent, |a, c| {
                usize::from(c == rs) * at(a) * b
            });

            let (got, sent) = run_on(
                nodes,
                sites,
                b,
                None,
                |r| {
                    if r == root {
                        all.clone()
                    } else {
                        vec![0; n * b]
                    }
                },
                |s, t, i, o| {
                    let blocks = layout(i, &members, &lens);
                    let blocks = if t.me == root { blocks } else { vec![] };
                    let cut = wide_cut(t, Some(root)).unwrap();
                    scatter::sites::build(s, t, &cut, root, &blocks, Some(o), &lens)
                },
            );
            for (r, g) in got.iter().enumerate() {
                assert_eq!(g, &mine(r), "scatter {sites:?} root {root} member {r}");
            }
            assert_crossings("scatter", sites, &sent, |a, c| {
                usize::from(a == rs) * at(c) * b
            });
        }
    }
}
