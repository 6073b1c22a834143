//! Hierarchical allreduce: reduce inside each part (node, site) to its leader, allreduce
//! among the leaders at the next level, broadcast inside each part. Leaders of a wide
//! level exchange their partial results once (see [`super::exchange`]).
//!
//! Non-commutative operators need every part to be a run of consecutive ranks (see
//! `levels::in_runs`); parts are then led by their lowest rank and combine in order.

use super::exchange;
use crate::coll::bcast::binomial as bcast;
use crate::coll::levels::{cut, Cut, Level};
use crate::coll::reduce::binomial as reduce;
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

pub fn build(
    s: &mut Sched,
    t: Team,
    input: Span,
    output: Span,
    levels: &[Level],
    commutative: bool,
) {
    let Some((level, rest)) = levels.split_first() else {
        return super::recursive_doubling::build(s, t, input, output, commutative);
    };
    let cut = match cut(t, level, None) {
        Cut::Through => return build(s, t, input, output, rest, commutative),
        Cut::Wide => return exchange::build(s, t, input, output, level.piece),
        Cut::Split(c) => c,
    };
    let part = cut.part_team();
    reduce::build(s, part, 0, input, Some(output), commutative);
    if cut.is_leader() {
        if cut.wide {
            exchange::build(s, cut.leader_team(), output, output, cut.piece);
        } else {
            build(s, cut.leader_team(), output, output, rest, commutative);
        }
    }
    bcast::build(s, part, 0, output);
}
