//! `MPI_Reduce_scatter(_block)`: reduce to member 0, then scatter the blocks (flat, or
//! across sites with one crossing per remote site in each half).

pub mod reduce_then_scatter;
pub mod two_level;

use crate::coll::sched::Span;

/// `whole` cut into consecutive blocks of `lens[i]` bytes, member i's block i.
pub fn blocks(whole: Span, lens: &[usize]) -> Vec<Span> {
    let mut at = 0;
    lens.iter()
        .map(|&l| {
            at += l;
            whole.sub(at - l, l)
        })
        .collect()
}
