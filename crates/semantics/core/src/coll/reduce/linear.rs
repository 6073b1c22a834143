//! Linear reduction: every member sends its data to the root, which folds them in rank
//! order (x0 op (x1 op (... op x(n-1)))), so it is right for non-commutative operators
//! too. One round: the reduction of a wide level, and IMPI's for non-commutative
//! operators and for few masters.

use crate::coll::gather::linear as gather;
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `input`: this member's data; `result`: the root's output (may equal `input`).
pub fn build(s: &mut Sched, t: Team, root: usize, input: Span, result: Option<Span>) {
    if t.me != root {
        return gather::build(s, t, root, Some(input), &[]);
    }
    let result = result.expect("the root has a result buffer");
    let n = t.size();
    let mut all: Vec<Span> = (0..n).map(|_| s.temp(input.len)).collect();
    all[root] = input;
    gather::build(s, t, root, None, &all);
    fold(s, &all, result);
}

/// `result = all[0] op (all[1] op (... op all[n-1]))`; `result` may be one of `all`.
pub fn fold(s: &mut Sched, all: &[Span], result: Span) {
    let Some((&last, rest)) = all.split_last() else {
        return;
    };
    let acc = s.temp(last.len);
    s.copy(last, acc);
    for &x in rest.iter().rev() {
        s.reduce(x, acc);
    }
    s.copy(acc, result);
}
