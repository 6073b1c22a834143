//! Allreduce in one round: every member sends its data to every other one and folds
//! what it received in rank order (right for non-commutative operators too). Costs
//! n-1 messages per member but a single latency: the algorithm of the few leaders of a
//! wide level, where each wide-area crossing costs milliseconds.

use crate::coll::alltoall::linear as alltoall;
use crate::coll::reduce::linear::fold;
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

/// `input`: this member's data (may equal `output`); messages go in pieces of at most
/// `piece` bytes (see `levels::send_pieces`).
pub fn build(s: &mut Sched, t: Team, input: Span, output: Span, piece: usize) {
    let n = t.size();
    let mut all: Vec<Span> = (0..n).map(|_| s.temp(input.len)).collect();
    all[t.me] = input;
    alltoall::build_in_pieces(s, t, &vec![input; n], &all, &|_| piece);
    fold(s, &all, output);
}
