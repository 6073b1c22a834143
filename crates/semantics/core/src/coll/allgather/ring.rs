//! Ring allgather: n-1 rounds; in each, every member passes the block it received last
//! to its right neighbour. Bandwidth-optimal, any block sizes.

use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `blocks[i]` is member i's block; this member's own block is already in place.
pub fn build(s: &mut Sched, t: Team, blocks: &[Span]) {
    let n = t.size();
    let (right, left) = (t.peer((t.me + 1) % n), t.peer((t.me + n - 1) % n));
    for step in 0..n.saturating_sub(1) {
        s.send(right, blocks[(t.me + n - step) % n]);
        s.recv(left, blocks[(t.me + n - step - 1) % n]);
        s.wait();
    }
}
