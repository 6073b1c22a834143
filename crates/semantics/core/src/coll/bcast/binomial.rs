//! Binomial-tree broadcast: log2 n rounds; every member that has the data sends it to
//! the member 2^k further (relative to the root).

use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

pub fn build(s: &mut Sched, t: Team, root: usize, data: Span) {
    let n = t.size();
    let v = (t.me + n - root) % n;
    let mut mask = 1;
    while mask < n {
        if v & mask != 0 {
            s.recv(t.peer((v - mask + root) % n), data);
            s.wait();
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if v + mask < n {
            s.send(t.peer((v + mask + root) % n), data);
        }
        mask >>= 1;
    }
    s.wait();
}
