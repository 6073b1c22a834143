//! Two-level reduction (commutative operators): each part (node) reduces to its leader,
//! then the leaders reduce to the root at the next level.

use crate::coll::levels::split;
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;
use std::sync::Arc;

pub fn build(
    s: &mut Sched,
    t: Team,
    root: usize,
    input: Span,
    result: Option<Span>,
    levels: &[Arc<Vec<u32>>],
) {
    let Some((key, rest)) = levels.split_first() else {
        return super::binomial::build(s, t, root, input, result, true);
    };
    let Some(cut) = split(t, key, Some(root)) else {
        return build(s, t, root, input, result, rest);
    };
    if !cut.is_leader() {
        return super::binomial::build(s, cut.part_team(), 0, input, None, true);
    }
    let partial = match result {
        Some(r) if t.me == root => r,
        _ => s.temp(input.len),
    };
    super::binomial::build(s, cut.part_team(), 0, input, Some(partial), true);
    let root_part = cut
        .parts
        .iter()
        .position(|p| p[0] == root)
        .expect("the root leads its part");
    let out = (t.me == root).then_some(partial);
    build(s, cut.leader_team(), root_part, partial, out, rest);
}
