//! IMPI's reduction. Commutative operators: a reduction inside each site (to the root in
//! its site, to the master elsewhere), then the masters (the root standing in for its
//! site's master) reduce to the root: linear up to `maxlinear` participants, a binomial
//! tree above. Non-commutative ones: every member sends to the root, which folds in rank
//! order.

use crate::coll::masters::Masters;
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `input`: this member's data; `result`: the root's output (may equal `input`).
pub fn build(
    s: &mut Sched,
    root: usize,
    input: Span,
    result: Option<Span>,
    commutative: bool,
    maxlinear: usize,
) {
    if !commutative {
        let whole = Team::all(s.size(), s.rank);
        return super::linear::build(s, whole, root, input, result);
    }
    let ms = Masters::of(s.rank, &s.sites);
    let (gm, rootnum) = ms.rooted(root, s.sites[root]);
    let local_root = ms.local_root(root);
    let partial = match result {
        Some(r) if s.rank == root => Some(r),
        _ if ms.me_local == local_root => Some(s.temp(input.len)),
        _ => None,
    };
    super::binomial::build(s, ms.local_team(), local_root, input, partial, true);
    if let Some(me) = gm.iter().position(|&r| r == s.rank) {
        let t = Team::of(&gm, me);
        let p = partial.expect("a participant leads its site");
        let out = (me == rootnum).then_some(p);
        if t.size() <= maxlinear {
            super::linear::build(s, t, rootnum, p, out);
        } else {
            super::binomial::build(s, t, rootnum, p, out, true);
        }
    }
}
