//! Reduce-scatter on a communicator spanning sites: a hierarchical reduction of the
//! whole vector to member 0 (nodes, then sites: one crossing per remote site), then a
//! scatter of the blocks with one message per remote site.

use crate::coll::levels::{cut, layout, Cut, Level};
use crate::coll::reduce::two_level as reduce;
use crate::coll::scatter::{linear, sites};
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `input`: the whole vector of this member; `lens[i]`: bytes of member i's block;
/// `levels`: innermost first, the last one the sites.
pub fn build(
    s: &mut Sched,
    t: Team,
    input: Span,
    lens: &[usize],
    mine: Span,
    levels: &[Level],
    commutative: bool,
) {
    let whole = (t.me == 0).then(|| s.temp(input.len));
    reduce::build(s, t, 0, input, whole, levels, commutative);
    let members: Vec<usize> = (0..t.size()).collect();
    let blocks = whole.map_or_else(Vec::new, |w| layout(w, &members, lens));
    match levels.last().map(|site| cut(t, site, Some(0))) {
        Some(Cut::Split(c)) => sites::build(s, t, &c, 0, &blocks, Some(mine), lens),
        _ => linear::build(s, t, 0, &blocks, Some(mine)),
    }
}
