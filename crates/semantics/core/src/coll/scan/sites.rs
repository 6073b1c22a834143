//! Prefix reduction across sites whose members are runs of consecutive ranks: each site
//! scans inside itself, the last member of every site sends the site's total to the
//! last member of every later site (one message per ordered pair of sites, all in one
//! round), which folds the totals of the earlier sites in rank order and hands that
//! prefix to its site; every member puts it in front of its own result. Rank order
//! holds throughout, so non-commutative operators are right.

use crate::coll::bcast::binomial as bcast;
use crate::coll::levels::Split;
use crate::coll::reduce::linear::fold;
use crate::coll::scan::recursive_doubling as local_scan;
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `cut`: `t` cut by site (parts in rank order); `exclusive`: `MPI_Exscan` (member 0's
/// output is left untouched).
#[allow(clippy::too_many_arguments)]
pub fn build(
    s: &mut Sched,
    t: Team,
    cut: &Split,
    input: Span,
    output: Span,
    exclusive: bool,
    commutative: bool,
) {
    let part = cut.part_team();
    let k = cut.me_in_part;
    let last = part.size() - 1;
    // Before this member inside its site (nothing for the site's first member).
    let before = s.temp(input.len);
    local_scan::build(s, part, input, before, true, commutative);
    // The site's total (last member) or this member's inclusive local result.
    let upto = s.temp(input.len);
    s.copy(input, upto);
    if k > 0 {
        s.reduce(before, upto);
    }
    let q = cut.my_part;
    let prefix = (q > 0).then(|| s.temp(input.len));
    if k == last {
        let earlier: Vec<Span> = (0..q).map(|_| s.temp(input.len)).collect();
        for (j, &from) in earlier.iter().enumerate() {
            s.recv(
                t.peer(*cut.parts[j].last().expect("parts are not empty")),
                from,
            );
        }
        for later in &cut.parts[q + 1..] {
            s.send(t.peer(*later.last().expect("parts are not empty")), upto);
        }
        s.wait();
        if let Some(p) = prefix {
            fold(s, &earlier, p);
        }
    }
    if let Some(p) = prefix {
        bcast::build(s, part, last, p);
    }
    // output = [prefix] op [before] (op input, inclusive)
    let acc = if exclusive { before } else { upto };
    match (prefix, exclusive && k == 0) {
        (Some(p), true) => s.copy(p, output),
        (Some(p), false) => {
            s.reduce(p, acc);
            s.copy(acc, output);
        }
        (None, true) => {}
        (None, false) => s.copy(acc, output),
    }
}
