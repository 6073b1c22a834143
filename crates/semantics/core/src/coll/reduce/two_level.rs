//! Hierarchical reduction: each part (node, site) reduces to its leader, then the
//! leaders reduce at the next level; leaders of a wide level send their partial result
//! straight to the root's leader (the data crosses once per remote site).
//!
//! Commutative operators put the root at the head of its part. Non-commutative ones
//! need every part to be a run of consecutive ranks (see `levels::in_runs`): parts then
//! combine in rank order, each led by its lowest rank, and the leader of the root's part
//! hands the result to the root.

use crate::coll::levels::{cut, Cut, Level};
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

#[allow(clippy::too_many_arguments)]
pub fn build(
    s: &mut Sched,
    t: Team,
    root: usize,
    input: Span,
    result: Option<Span>,
    levels: &[Level],
    commutative: bool,
) {
    let Some((level, rest)) = levels.split_first() else {
        return super::binomial::build(s, t, root, input, result, commutative);
    };
    let cut = match cut(t, level, commutative.then_some(root)) {
        Cut::Through => return build(s, t, root, input, result, rest, commutative),
        Cut::Wide => return super::linear::build(s, t, root, input, result),
        Cut::Split(c) => c,
    };
    let root_part = cut
        .parts
        .iter()
        .position(|p| p.contains(&root))
        .expect("the root is in a part");
    let root_leader = cut.parts[root_part][0];
    if !cut.is_leader() {
        super::binomial::build(s, cut.part_team(), 0, input, None, commutative);
    } else {
        let partial = match result {
            Some(r) if t.me == root => r,
            _ => s.temp(input.len),
        };
        super::binomial::build(s, cut.part_team(), 0, input, Some(partial), commutative);
        let out = (t.me == root_leader).then_some(partial);
        if cut.wide {
            super::linear::build(s, cut.leader_team(), root_part, partial, out);
        } else {
            build(
                s,
                cut.leader_team(),
                root_part,
                partial,
                out,
                rest,
                commutative,
            );
        }
        if t.me == root_leader && root != root_leader {
            s.send(t.peer(root), partial);
        }
    }
    if t.me == root && root != root_leader {
        s.recv(
            t.peer(root_leader),
            result.expect("the root has a result buffer"),
        );
    }
    s.wait();
}
