//! Linear all-to-all: all receives and sends posted in one round, in an order shifted by
//! the member's rank so no member is everyone's first target.

use crate::coll::levels::{recv_pieces, send_pieces};
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `out[i]`: data for member i; `into[i]`: data from member i.
pub fn build(s: &mut Sched, t: Team, out: &[Span], into: &[Span]) {
    build_in_pieces(s, t, out, into, &|_| usize::MAX);
}

/// [`build`] with the messages between this member and member i cut into pieces of at
/// most `piece(i)` bytes (members in different sites: see `levels::send_pieces`).
pub fn build_in_pieces(
    s: &mut Sched,
    t: Team,
    out: &[Span],
    into: &[Span],
    piece: &dyn Fn(usize) -> usize,
) {
    let n = t.size();
    for k in 1..n {
        let from = (t.me + n - k) % n;
        recv_pieces(s, t.peer(from), into[from], piece(from), 0);
    }
    for k in 1..n {
        let to = (t.me + k) % n;
        send_pieces(s, t.peer(to), out[to], piece(to), 0);
    }
    // The own block last: the peers can pull what was just offered to them while this
    // member copies.
    s.copy(out[t.me], into[t.me]);
    s.wait();
}
