//! Linear scatter: the root sends each member its block in one round.

use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `blocks` (root only): member i's data; `mine`: where this member's block goes.
pub fn build(s: &mut Sched, t: Team, root: usize, blocks: &[Span], mine: Option<Span>) {
    if t.me == root {
        for (i, &b) in blocks.iter().enumerate() {
            if i == root {
                if let Some(m) = mine {
                    s.copy(b, m);
                }
            } else {
                s.send(t.peer(i), b);
            }
        }
    } else if let Some(m) = mine {
        s.recv(t.peer(root), m);
    }
    s.wait();
}
