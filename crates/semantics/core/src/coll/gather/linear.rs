//! Linear gather: every member sends its block to the root, which receives them all in
//! one round. With shared memory and few ranks per node, one round beats a tree.

use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `mine`: this member's data; `blocks` (root only): where member i's data goes.
pub fn build(s: &mut Sched, t: Team, root: usize, mine: Option<Span>, blocks: &[Span]) {
    if t.me == root {
        for (i, &b) in blocks.iter().enumerate() {
            if i == root {
                if let Some(m) = mine {
                    s.copy(m, b);
                }
            } else {
                s.recv(t.peer(i), b);
            }
        }
    } else if let Some(m) = mine {
        s.send(t.peer(root), m);
    }
    s.wait();
}
