//! Reduce-scatter as a binomial reduction of the whole vector to member 0 (rank-ordered
//! for non-commutative operators) followed by a linear scatter of the blocks.

use crate::coll::reduce::binomial as reduce;
use crate::coll::scatter::linear as scatter;
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `input`: the whole vector of this member; `lens[i]`: bytes of member i's block.
pub fn build(s: &mut Sched, t: Team, input: Span, lens: &[usize], mine: Span, commutative: bool) {
    if t.me == 0 {
        let whole = s.temp(input.len);
        reduce::build(s, t, 0, input, Some(whole), commutative);
        scatter::build(s, t, 0, &super::blocks(whole, lens), Some(mine));
    } else {
        reduce::build(s, t, 0, input, None, commutative);
        scatter::build(s, t, 0, &[], Some(mine));
    }
}
