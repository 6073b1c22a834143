//! Recursive-doubling allgather: log2 n rounds, each doubling the contiguous run of
//! blocks a member holds. Needs a power-of-two member count and equal blocks laid out
//! in member order.

use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

pub fn build(s: &mut Sched, t: Team, whole: Span, block: usize) {
    let n = t.size();
    debug_assert!(n.is_power_of_two());
    let mut mask = 1;
    while mask < n {
        let partner = t.me ^ mask;
        let mine = t.me & !(mask - 1);
        let theirs = partner & !(mask - 1);
        s.send(t.peer(partner), whole.sub(mine * block, mask * block));
        s.recv(t.peer(partner), whole.sub(theirs * block, mask * block));
        s.wait();
        mask <<= 1;
    }
}
