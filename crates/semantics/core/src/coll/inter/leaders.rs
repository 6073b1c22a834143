//! Intercommunicator collectives through the two groups' rank-0 leaders.

use crate::coll::bcast::binomial as bcast;
use crate::coll::reduce::binomial as reduce;
use crate::coll::reduce_scatter::blocks;
use crate::coll::scatter::linear as scatter;
use crate::coll::sched::{Peer, Sched, Span};
use crate::coll::team::Team;

/// Barrier: each group gathers at its leader, the leaders exchange, and each leader
/// releases its group.
pub fn barrier(s: &mut Sched) {
    let t = Team::all(s.size(), s.rank);
    let none = s.temp(0);
    reduce_free_gather(s, t, none);
    if s.rank == 0 {
        s.send(Peer::Remote(0), none);
        s.recv(Peer::Remote(0), none);
        s.wait();
    }
    bcast::build(s, t, 0, none);
}

/// Empty check-in of every member with member 0 (a barrier's first half).
fn reduce_free_gather(s: &mut Sched, t: Team, none: Span) {
    if t.me == 0 {
        for i in 1..t.size() {
            s.recv(t.peer(i), none);
        }
    } else {
        s.send(t.peer(0), none);
    }
    s.wait();
}

/// Which side of a rooted intercommunicator collective this process is on.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// `root == MPI_ROOT`.
    Root,
    /// `root == MPI_PROC_NULL`: the root's group, not the root.
    Idle,
    /// The other group; the root is this rank of the remote group.
    Other(usize),
}

/// Broadcast from the root to the other group (through its leader).
pub fn bcast(s: &mut Sched, side: Side, data: Span) {
    match side {
        Side::Root => s.send(Peer::Remote(0), data),
        Side::Idle => {}
        Side::Other(root) => {
            if s.rank == 0 {
                s.recv(Peer::Remote(root), data);
            }
            s.wait();
            let t = Team::all(s.size(), s.rank);
            bcast::build(s, t, 0, data);
        }
    }
    s.wait();
}

/// Reduction of the other group's data to the root (reduced inside that group first).
pub fn reduce(s: &mut Sched, side: Side, input: Span, result: Option<Span>, commutative: bool) {
    match side {
        Side::Root => s.recv(
            Peer::Remote(0),
            result.expect("the root has a result buffer"),
        ),
        Side::Idle => {}
        Side::Other(root) => {
            let t = Team::all(s.size(), s.rank);
            let acc = (s.rank == 0).then(|| s.temp(input.len));
            reduce::build(s, t, 0, input, acc, commutative);
            if let Some(a) = acc {
                s.send(Peer::Remote(root), a);
            }
        }
    }
    s.wait();
}

/// Allreduce: every process gets the reduction of the other group's data.
pub fn allreduce(s: &mut Sched, input: Span, output: Span, commutative: bool) {
    let t = Team::all(s.size(), s.rank);
    let mine = (s.rank == 0).then(|| s.temp(input.len));
    reduce::build(s, t, 0, input, mine, commutative);
    if let Some(m) = mine {
        s.send(Peer::Remote(0), m);
        s.recv(Peer::Remote(0), output);
        s.wait();
    }
    bcast::build(s, t, 0, output);
}

/// Reduce-scatter: each group's vectors are reduced at its leader, the leaders swap
/// their results, and each leader scatters the other group's in blocks of `lens[i]`
/// bytes over its own group (`mine`: this member's block).
pub fn reduce_scatter(s: &mut Sched, input: Span, lens: &[usize], mine: Span, commutative: bool) {
    let t = Team::all(s.size(), s.rank);
    let ours = (t.me == 0).then(|| s.temp(input.len));
    reduce::build(s, t, 0, input, ours, commutative);
    let Some(ours) = ours else {
        scatter::build(s, t, 0, &[], Some(mine));
        return;
    };
    let theirs = s.temp(input.len);
    s.send(Peer::Remote(0), ours);
    s.recv(Peer::Remote(0), theirs);
    s.wait();
    scatter::build(s, t, 0, &blocks(theirs, lens), Some(mine));
}
