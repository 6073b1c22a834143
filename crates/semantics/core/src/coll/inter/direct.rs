//! Intercommunicator collectives that exchange with every member of the other group.

use crate::coll::sched::{Peer, Sched, Span};

/// Every process sends `out[i]` to remote member i and receives `into[i]` from it
/// (allgather sends the same span everywhere; alltoall one block each).
pub fn exchange(s: &mut Sched, out: &[Span], into: &[Span]) {
    for (i, &b) in into.iter().enumerate() {
        s.recv(Peer::Remote(i), b);
    }
    for (i, &b) in out.iter().enumerate() {
        s.send(Peer::Remote(i), b);
    }
    s.wait();
}

/// Gather to the root from every member of the other group (or scatter, `scatter`).
pub fn rooted(
    s: &mut Sched,
    root_side: bool,
    root: usize,
    blocks: &[Span],
    mine: Option<Span>,
    scatter: bool,
) {
    if root_side {
        for (i, &b) in blocks.iter().enumerate() {
            if scatter {
                s.send(Peer::Remote(i), b);
            } else {
                s.recv(Peer::Remote(i), b);
            }
        }
    } else if let Some(m) = mine {
        if scatter {
            s.recv(Peer::Remote(root), m);
        } else {
            s.send(Peer::Remote(root), m);
        }
    }
    s.wait();
}
