//! Hierarchical allgather(v): members send their block to their part's leader, the
//! leaders allgather whole parts at the next level (a ring, or on a wide level one
//! exchange of every site's blocks between site leaders, in eager pieces), and each
//! leader hands the assembled result to its part in one message.

use crate::coll::alltoall::linear as alltoall;
use crate::coll::levels::{cut, Cut, Level};
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `blocks[i]`: member i's block (any lengths, known to all); this member's is in place.
pub fn build(s: &mut Sched, t: Team, blocks: &[Span], levels: &[Level]) {
    let Some((level, rest)) = levels.split_first() else {
        return super::ring::build(s, t, blocks);
    };
    let cut = match cut(t, level, None) {
        Cut::Through => return build(s, t, blocks, rest),
        Cut::Wide => return exchange(s, t, blocks, level.piece),
        Cut::Split(c) => c,
    };
    // Every part's blocks back to back, in leader order: one message per part.
    let total = blocks.iter().map(|b| b.len).sum();
    let staged = s.temp(total);
    let mut placed = blocks.to_vec();
    let mut part_spans = Vec::with_capacity(cut.parts.len());
    let mut at = 0;
    for p in &cut.parts {
        let start = at;
        for &m in p {
            placed[m] = staged.sub(at, blocks[m].len);
            at += blocks[m].len;
        }
        part_spans.push(staged.sub(start, at - start));
    }
    let part = cut.part_team();
    if cut.is_leader() {
        for (k, &m) in cut.parts[cut.my_part].iter().enumerate() {
            if k == 0 {
                s.copy(blocks[m], placed[m]);
            } else {
                s.recv(part.peer(k), placed[m]);
            }
        }
        s.wait();
        if cut.wide {
            exchange(s, cut.leader_team(), &part_spans, cut.piece);
        } else {
            build(s, cut.leader_team(), &part_spans, rest);
        }
        for k in 1..part.size() {
            s.send(part.peer(k), staged);
        }
    } else {
        s.send(part.peer(0), blocks[t.me]);
        s.recv(part.peer(0), staged);
        s.wait();
    }
    for (m, (&from, &to)) in placed.iter().zip(blocks).enumerate() {
        if m != t.me {
            s.copy(from, to);
        }
    }
    s.wait();
}

/// Every member sends its block to every other one: one round, in pieces of at most
/// `piece` bytes (members in different sites).
fn exchange(s: &mut Sched, t: Team, blocks: &[Span], piece: usize) {
    alltoall::build_in_pieces(s, t, &vec![blocks[t.me]; t.size()], blocks, &|_| piece);
}
