//! Pairwise all-to-all: in round k every member sends to the member k ahead and receives
//! from the member k behind; one exchange in flight per member.

use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `out[i]`: data for member i; `into[i]`: data from member i.
pub fn build(s: &mut Sched, t: Team, out: &[Span], into: &[Span]) {
    let n = t.size();
    s.copy(out[t.me], into[t.me]);
    for k in 1..n {
        let (to, from) = ((t.me + k) % n, (t.me + n - k) % n);
        s.send(t.peer(to), out[to]);
        s.recv(t.peer(from), into[from]);
        s.wait();
    }
}
