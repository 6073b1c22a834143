//! Two-level allgather: members send their block to their part's leader, the leaders
//! exchange whole parts (a ring over parts of different sizes), and each leader hands
//! the assembled result to its part.

use crate::coll::levels::split;
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `blocks[i]`: member i's block (all the same length); this member's is in place.
pub fn build(s: &mut Sched, t: Team, blocks: &[Span], key: &[u32]) {
    let Some(cut) = split(t, key, None) else {
        return super::ring::build(s, t, blocks);
    };
    let b = blocks[0].len;
    let part = cut.part_team();
    if !cut.is_leader() {
        s.send(part.peer(0), blocks[t.me]);
        s.wait();
        for &blk in blocks.iter() {
            s.recv(part.peer(0), blk);
        }
        s.wait();
        return;
    }
    // The leader stages every part contiguously, in leader order.
    let staged = s.temp(b * t.size());
    let mut part_spans = Vec::with_capacity(cut.parts.len());
    let mut at = 0;
    for p in &cut.parts {
        part_spans.push(staged.sub(at, p.len() * b));
        at += p.len() * b;
    }
    let mine = part_spans[cut.my_part];
    for (k, &member) in cut.parts[cut.my_part].iter().enumerate() {
        if k == 0 {
            s.copy(blocks[member], mine.block(0, b));
        } else {
            s.recv(part.peer(k), mine.block(k, b));
        }
    }
    s.wait();
    super::ring::build(s, cut.leader_team(), &part_spans);
    for (p, span) in cut.parts.iter().zip(&part_spans) {
        for (k, &member) in p.iter().enumerate() {
            s.copy(span.block(k, b), blocks[member]);
        }
    }
    for k in 1..part.size() {
        for &blk in blocks.iter() {
            s.send(part.peer(k), blk);
        }
    }
    s.wait();
}
