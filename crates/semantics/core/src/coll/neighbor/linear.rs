//! All neighbour exchanges posted in one round. On a Cartesian topology the sub-tag of a
//! message names its direction: what a process sends to its +1 neighbour in dimension d
//! arrives in that neighbour's -1 slot, even when both neighbours are the same process
//! (a periodic dimension of length 1 or 2).

use crate::coll::sched::{Peer, Sched, Span};

/// `sources[i]`/`into[i]`: where block i comes from and goes; `dests[j]`/`out[j]`
/// likewise for sends. `None` neighbours are `MPI_PROC_NULL`.
pub fn build(
    s: &mut Sched,
    sources: &[Option<usize>],
    into: &[Span],
    dests: &[Option<usize>],
    out: &[Span],
    cartesian: bool,
) {
    for (i, (src, &b)) in sources.iter().zip(into).enumerate() {
        if let Some(r) = src {
            let sub = if cartesian { (i ^ 1) as i32 } else { 0 };
            s.recv_tagged(Peer::Local(*r), b, sub);
        }
    }
    for (j, (dst, &b)) in dests.iter().zip(out).enumerate() {
        if let Some(r) = dst {
            let sub = if cartesian { j as i32 } else { 0 };
            s.send_tagged(Peer::Local(*r), b, sub);
        }
    }
    s.wait();
}
