//! Recursive-doubling prefix reduction: in round k each member exchanges the partial
//! reduction of its 2^k-block with the partner across bit k; what comes from lower ranks
//! also enters the member's own result. Lower ranks always come first in the operator,
//! so non-commutative operators combine in rank order.

use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `exclusive`: `MPI_Exscan` (member 0's output is left untouched).
pub fn build(
    s: &mut Sched,
    t: Team,
    input: Span,
    output: Span,
    exclusive: bool,
    commutative: bool,
) {
    let n = t.size();
    let partial = s.temp(input.len);
    s.copy(input, partial);
    if !exclusive {
        s.copy(input, output);
    }
    let tmp = s.temp(input.len);
    let mut have = !exclusive;
    let mut mask = 1;
    while mask < n {
        let p = t.me ^ mask;
        if p < n {
            s.send(t.peer(p), partial);
            s.recv(t.peer(p), tmp);
            s.wait();
            if p < t.me {
                s.reduce(tmp, partial);
                if have {
                    s.reduce(tmp, output);
                } else {
                    s.copy(tmp, output);
                    have = true;
                }
            } else if commutative {
                s.reduce(tmp, partial);
            } else {
                s.reduce(partial, tmp);
                s.copy(tmp, partial);
            }
        }
        mask <<= 1;
    }
}
