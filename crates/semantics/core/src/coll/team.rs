//! The set of members an algorithm runs over: the whole group, or a part of it (the
//! ranks of one node, or one leader per node) in the two-level schemes.

use super::sched::Peer;

#[derive(Clone, Copy)]
pub struct Team<'a> {
    /// Group ranks of the members, in team order; `None` = ranks 0..n of the group.
    ranks: Option<&'a [usize]>,
    n: usize,
    /// This process's index in the team.
    pub me: usize,
}

impl<'a> Team<'a> {
    pub fn all(n: usize, me: usize) -> Team<'static> {
        Team { ranks: None, n, me }
    }

    pub fn of(ranks: &'a [usize], me: usize) -> Team<'a> {
        Team {
            ranks: Some(ranks),
            n: ranks.len(),
            me,
        }
    }

    pub fn size(&self) -> usize {
        self.n
    }

    /// The group rank of member `i`.
    pub fn rank(&self, i: usize) -> usize {
        self.ranks.map_or(i, |r| r[i])
    }

    pub fn peer(&self, i: usize) -> Peer {
        Peer::Local(self.rank(i))
    }
}
