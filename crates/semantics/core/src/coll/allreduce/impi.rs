//! IMPI's allreduce: IMPI's reduction to rank 0, then IMPI's broadcast from it.

use crate::coll::bcast::impi as bcast;
use crate::coll::reduce::impi as reduce;
use crate::coll::sched::{Sched, Span};

/// `input`: this member's data (may equal `output`).
pub fn build(s: &mut Sched, input: Span, output: Span, commutative: bool, maxlinear: usize) {
    let at_root = (s.rank == 0).then_some(output);
    reduce::build(s, 0, input, at_root, commutative, maxlinear);
    s.wait();
    bcast::build(s, 0, output, maxlinear);
}
