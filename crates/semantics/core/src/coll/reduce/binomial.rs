//! Binomial-tree reduction: log2 n rounds; a member combines what its subtree sent and
//! passes the result to its parent.
//!
//! For a commutative operator the tree hangs from the root. For a non-commutative one it
//! hangs from member 0, where every subtree is a contiguous run of ranks combined in
//! rank order (`lower op higher`), and member 0 forwards the result to the root: the
//! result is the same on every run.

use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `input`: this member's data; `result`: the root's output (may equal `input`).
pub fn build(
    s: &mut Sched,
    t: Team,
    root: usize,
    input: Span,
    result: Option<Span>,
    commutative: bool,
) {
    let n = t.size();
    let top = if commutative { root } else { 0 };
    let v = (t.me + n - top) % n;
    let acc = match result {
        Some(r) if t.me == top => {
            s.copy(input, r);
            r
        }
        _ => {
            let a = s.temp(input.len);
            s.copy(input, a);
            a
        }
    };
    let mut tmp = None;
    let mut mask = 1;
    while mask < n {
        if v & mask != 0 {
            s.send(t.peer((v - mask + top) % n), acc);
            s.wait();
            break;
        }
        if v + mask < n {
            let buf = *tmp.get_or_insert_with(|| s.temp(input.len));
            s.recv(t.peer((v + mask + top) % n), buf);
            s.wait();
            if commutative {
                s.reduce(buf, acc);
            } else {
                // acc covers the lower ranks: acc = acc op buf.
                s.reduce(acc, buf);
                s.copy(buf, acc);
            }
        }
        mask <<= 1;
    }
    if top != root {
        if t.me == top {
            s.send(t.peer(root), acc);
        } else if t.me == root {
            s.recv(t.peer(top), result.expect("the root has a result buffer"));
        }
        s.wait();
    }
}
