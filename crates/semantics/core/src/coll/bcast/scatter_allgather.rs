//! Broadcast of large data (van de Geijn): the root hands each member one n-th of the
//! data, then a ring allgather assembles it everywhere. Every member moves about twice
//! the data once, instead of the root sending all of it log2 n times.

use crate::coll::allgather::ring;
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

pub fn build(s: &mut Sched, t: Team, root: usize, data: Span) {
    let n = t.size();
    let chunk = data.len.div_ceil(n);
    // Chunk j (in order relative to the root) belongs to member (root + j) % n.
    let blocks: Vec<Span> = (0..n)
        .map(|i| {
            let j = (i + n - root) % n;
            let start = (j * chunk).min(data.len);
            data.sub(start, chunk.min(data.len - start))
        })
        .collect();
    if t.me == root {
        for (i, &b) in blocks.iter().enumerate() {
            if i != root {
                s.send(t.peer(i), b);
            }
        }
    } else {
        s.recv(t.peer(root), blocks[t.me]);
    }
    s.wait();
    ring::build(s, t, &blocks);
}
