//! Two-level broadcast: the root's leader group broadcasts among the leaders (the next
//! level), then each leader broadcasts inside its part (node).

use crate::coll::levels::split;
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;
use std::sync::Arc;

pub fn build(s: &mut Sched, t: Team, root: usize, data: Span, levels: &[Arc<Vec<u32>>]) {
    let Some((key, rest)) = levels.split_first() else {
        return super::binomial::build(s, t, root, data);
    };
    let Some(cut) = split(t, key, Some(root)) else {
        return build(s, t, root, data, rest);
    };
    if cut.is_leader() {
        let root_part = cut
            .parts
            .iter()
            .position(|p| p[0] == root)
            .expect("the root leads its part");
        build(s, cut.leader_team(), root_part, data, rest);
    }
    super::binomial::build(s, cut.part_team(), 0, data);
}
