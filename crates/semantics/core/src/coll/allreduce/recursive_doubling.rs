//! Recursive-doubling allreduce: log2 n rounds of one exchange each (at 2 members: one
//! exchange in total). With n not a power of two, the first 2r members (r = n - 2^k)
//! fold pairwise first and the odd ones get the result back at the end. Every partial
//! result covers a contiguous run of ranks and is combined as `lower op higher`, so
//! non-commutative operators give the rank-ordered result.

use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// The power-of-two core after folding: this member's rank in it, and how members
/// outside the fold map back.
pub struct Core {
    pub newrank: Option<usize>,
    pub pof2: usize,
    rem: usize,
}

impl Core {
    /// The team index of core rank `r`.
    pub fn member(&self, r: usize) -> usize {
        if r < self.rem {
            r * 2 + 1
        } else {
            r + self.rem
        }
    }
}

/// Folds the first 2r members pairwise into `data` of the odd one (`tmp`: scratch).
pub fn fold(s: &mut Sched, t: Team, data: Span, tmp: Span) -> Core {
    let n = t.size();
    let pof2 = 1 << n.ilog2();
    let rem = n - pof2;
    let me = t.me;
    let newrank = if me < 2 * rem {
        if me.is_multiple_of(2) {
            s.send(t.peer(me + 1), data);
            s.wait();
            None
        } else {
            s.recv(t.peer(me - 1), tmp);
            s.wait();
            s.reduce(tmp, data);
            Some(me / 2)
        }
    } else {
        Some(me - rem)
    };
    Core { newrank, pof2, rem }
}

/// Hands the result back to the members folded away.
pub fn unfold(s: &mut Sched, t: Team, core: &Core, data: Span) {
    if t.me < 2 * core.rem {
        if t.me % 2 == 1 {
            s.send(t.peer(t.me - 1), data);
        } else {
            s.recv(t.peer(t.me + 1), data);
        }
        s.wait();
    }
}

/// `input`: this member's data (may equal `output`).
pub fn build(s: &mut Sched, t: Team, input: Span, output: Span, commutative: bool) {
    s.copy(input, output);
    if t.size() == 1 {
        return;
    }
    let tmp = s.temp(output.len);
    let core = fold(s, t, output, tmp);
    if let Some(nr) = core.newrank {
        let mut mask = 1;
        while mask < core.pof2 {
            let partner = core.member(nr ^ mask);
            s.send(t.peer(partner), output);
            s.recv(t.peer(partner), tmp);
            s.wait();
            if partner < t.me || commutative {
                s.reduce(tmp, output);
            } else {
                s.reduce(output, tmp);
                s.copy(tmp, output);
            }
            mask <<= 1;
        }
    }
    unfold(s, t, &core, output);
}
