//! Hierarchical broadcast: the root's leader group broadcasts among the leaders (the
//! next level), then each leader broadcasts inside its part (node, site). On a wide
//! level the root sends straight to every other site's leader: the data crosses once
//! per remote site, in one wide-area latency.

use crate::coll::levels::{cut, Cut, Level};
use crate::coll::scatter::linear as scatter;
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

pub fn build(s: &mut Sched, t: Team, root: usize, data: Span, levels: &[Level]) {
    let Some((level, rest)) = levels.split_first() else {
        return super::binomial::build(s, t, root, data);
    };
    let cut = match cut(t, level, Some(root)) {
        Cut::Through => return build(s, t, root, data, rest),
        Cut::Wide => return linear(s, t, root, data, level.piece),
        Cut::Split(c) => c,
    };
    if cut.is_leader() {
        let root_part = cut
            .parts
            .iter()
            .position(|p| p[0] == root)
            .expect("the root leads its part");
        if cut.wide {
            linear(s, cut.leader_team(), root_part, data, cut.piece);
        } else {
            build(s, cut.leader_team(), root_part, data, rest);
        }
    }
    super::binomial::build(s, cut.part_team(), 0, data);
}

/// The root sends the data to every member at once (one round), in pieces of at most
/// `piece` bytes (see `levels::send_pieces`).
pub fn linear(s: &mut Sched, t: Team, root: usize, data: Span, piece: usize) {
    scatter::build_in_pieces(s, t, root, &vec![data; t.size()], Some(data), piece);
}
