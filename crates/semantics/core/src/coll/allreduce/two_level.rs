//! Two-level allreduce (commutative operators): reduce inside each part (node) to its
//! leader, allreduce among the leaders at the next level, broadcast inside each part.

use crate::coll::bcast::binomial as bcast;
use crate::coll::levels::split;
use crate::coll::reduce::binomial as reduce;
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;
use std::sync::Arc;

pub fn build(s: &mut Sched, t: Team, input: Span, output: Span, levels: &[Arc<Vec<u32>>]) {
    let Some((key, rest)) = levels.split_first() else {
        return super::recursive_doubling::build(s, t, input, output, true);
    };
    let Some(cut) = split(t, key, None) else {
        return build(s, t, input, output, rest);
    };
    let part = cut.part_team();
    reduce::build(s, part, 0, input, Some(output), true);
    if cut.is_leader() {
        build(s, cut.leader_team(), output, output, rest);
    }
    bcast::build(s, part, 0, output);
}
