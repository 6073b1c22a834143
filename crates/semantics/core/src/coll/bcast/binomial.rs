//! Binomial-tree broadcast: log2 n rounds; every member that has the data sends it to
//! the member 2^k further (relative to the root). In a tree of at most
//! [`PIPELINED_MEMBERS`], data longer than a segment (`CROSSMPI_COLL_BCAST_SEGMENT`) goes
//! down segment by segment: a member passes segment k to its children while it receives
//! segment k + 1, so the tree's levels copy at once instead of one after another. On a
//! crowded node (more ranks than processors) moderate data goes down in small segments
//! that travel eagerly, so no member waits for a descheduled child
//! (`CROSSMPI_COLL_BCAST_CROWDED_SEGMENT`).

use crate::coll::sched::{Sched, Span};
use crate::coll::select::thresholds;
use crate::coll::team::Team;

/// The most members a segmented tree serves. 4 ranks on 2 cores, 1 MiB: 250 us against
/// 350 whole (medians of 9); 8 ranks: 815 against 640, more levels and more handshakes
/// on the same two cores costing more than the overlap wins.
pub const PIPELINED_MEMBERS: usize = 4;

pub fn build(s: &mut Sched, t: Team, root: usize, data: Span) {
    let segment = segment(s, t, data.len);
    pipelined(s, t, root, data, segment);
}

/// The segment size for `len` bytes over team `t`. Every member must choose alike: the
/// crowded case applies only when the whole team is on this process's node, whose
/// members all computed the same `node_crowded` and `node_bound`.
fn segment(s: &Sched, t: Team, len: usize) -> usize {
    let th = thresholds();
    if t.size() > PIPELINED_MEMBERS {
        return len;
    }
    let on_my_node = (0..t.size()).all(|i| s.nodes[t.rank(i)] == s.nodes[s.rank]);
    let floating = s.node_crowded && !s.node_bound && on_my_node;
    if floating && th.bcast_crowded_segment > 0 && len <= th.bcast_crowded_max {
        th.bcast_crowded_segment
    } else {
        th.bcast_segment
    }
}

fn pipelined(s: &mut Sched, t: Team, root: usize, data: Span, segment: usize) {
    let n = t.size();
    let v = (t.me + n - root) % n;
    let mut mask = 1;
    let mut parent = None;
    while mask < n {
        if v & mask != 0 {
            parent = Some(t.peer((v - mask + root) % n));
            break;
        }
        mask <<= 1;
    }
    // The members 2^k further for every k below this member's own bit, farthest first.
    let children = || {
        std::iter::successors(Some(mask >> 1), |m| Some(m >> 1))
            .take_while(|&m| m > 0)
            .filter(move |&m| v + m < n)
            .map(move |m| t.peer((v + m + root) % n))
    };
    let segment = segment.max(1);
    let count = data.len.div_ceil(segment).max(1);
    let piece = |k: usize| data.sub(k * segment, segment.min(data.len - k * segment));
    if let Some(p) = parent {
        s.recv(p, piece(0));
        s.wait();
    }
    for k in 0..count {
        for c in children() {
            s.send(c, piece(k));
        }
        if let Some(p) = parent.filter(|_| k + 1 < count) {
            s.recv(p, piece(k + 1));
        }
        s.wait();
    }
}
