//! Linear all-to-all: all receives and sends posted in one round, in an order shifted by
//! the member's rank so no member is everyone's first target.

use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `out[i]`: data for member i; `into[i]`: data from member i.
pub fn build(s: &mut Sched, t: Team, out: &[Span], into: &[Span]) {
    let n = t.size();
    s.copy(out[t.me], into[t.me]);
    for k in 1..n {
        s.recv(t.peer((t.me + n - k) % n), into[(t.me + n - k) % n]);
    }
    for k in 1..n {
        s.send(t.peer((t.me + k) % n), out[(t.me + k) % n]);
    }
    s.wait();
}
