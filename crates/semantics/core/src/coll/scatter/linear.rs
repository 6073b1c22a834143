//! Linear scatter: the root sends each member its block in one round.

use crate::coll::levels::{recv_pieces, send_pieces};
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `blocks` (root only): member i's data; `mine`: where this member's block goes.
pub fn build(s: &mut Sched, t: Team, root: usize, blocks: &[Span], mine: Option<Span>) {
    build_in_pieces(s, t, root, blocks, mine, usize::MAX);
}

/// [`build`] with every message cut into pieces of at most `piece` bytes (members in
/// different sites: see `levels::send_pieces`).
pub fn build_in_pieces(
    s: &mut Sched,
    t: Team,
    root: usize,
    blocks: &[Span],
    mine: Option<Span>,
    piece: usize,
) {
    if t.me == root {
        for (i, &b) in blocks.iter().enumerate() {
            if i == root {
                if let Some(m) = mine {
                    s.copy(b, m);
                }
            } else {
                send_pieces(s, t.peer(i), b, piece, 0);
            }
        }
    } else if let Some(m) = mine {
        recv_pieces(s, t.peer(root), m, piece, 0);
    }
    s.wait();
}
