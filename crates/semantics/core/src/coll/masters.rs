//! IMPI's view of a communicator spanning sites (IMPI clients): one *master* per site,
//! its lowest-ranked member (so rank 0 is always a master), masters numbered in rank
//! order; and IMPI's binomial tree over the masters (LAM's hypercube, whose parent
//! clears the highest set bit of a member's number, unlike the trees of `binomial.rs`).

use super::team::Team;

pub struct Masters {
    /// Group ranks of the masters, in rank order (master i).
    pub ranks: Vec<usize>,
    /// Site of each master.
    sites: Vec<u32>,
    /// Group ranks of this process's site, ascending.
    pub local: Vec<usize>,
    /// This process's index in `local`.
    pub me_local: usize,
    rank: usize,
}

impl Masters {
    /// The masters of a group whose member r is at site `sites[r]`, seen from `rank`.
    pub fn of(rank: usize, sites: &[u32]) -> Masters {
        let (mut ranks, mut keys) = (Vec::new(), Vec::new());
        for (r, &site) in sites.iter().enumerate() {
            if !keys.contains(&site) {
                keys.push(site);
                ranks.push(r);
            }
        }
        let local: Vec<usize> = (0..sites.len())
            .filter(|&r| sites[r] == sites[rank])
            .collect();
        let me_local = local.iter().position(|&r| r == rank).expect("own site");
        Masters {
            ranks,
            sites: keys,
            local,
            me_local,
            rank,
        }
    }

    /// The members of this process's site.
    pub fn local_team(&self) -> Team<'_> {
        Team::of(&self.local, self.me_local)
    }

    /// The masters' team, for a master (`None` for the others).
    pub fn team(&self) -> Option<Team<'_>> {
        let me = self.ranks.iter().position(|&r| r == self.rank)?;
        Some(Team::of(&self.ranks, me))
    }

    /// The participants of the global phase of a rooted collective: the masters, with
    /// the root standing in for its own site's master (LAM's rule); and the root's
    /// number among them.
    pub fn rooted(&self, root: usize, site_of_root: u32) -> (Vec<usize>, usize) {
        let rootnum = self
            .sites
            .iter()
            .position(|&s| s == site_of_root)
            .expect("the root's site has a master");
        let mut ranks = self.ranks.clone();
        ranks[rootnum] = root;
        (ranks, rootnum)
    }

    /// This process's index in `local` of the member that leads its site in a rooted
    /// collective: the root in the root's site, the master elsewhere.
    pub fn local_root(&self, root: usize) -> usize {
        self.local.iter().position(|&r| r == root).unwrap_or(0)
    }
}

/// The parent of member `v` (numbered from the tree's root) in IMPI's tree.
pub fn parent(v: usize) -> Option<usize> {
    (v > 0).then(|| v & !(1 << v.ilog2()))
}

/// The children of member `v` of `m` in IMPI's tree: `v` with one higher bit set.
pub fn children(v: usize, m: usize) -> impl Iterator<Item = usize> {
    let from = if v == 0 { 0 } else { v.ilog2() + 1 };
    let dim = m.next_power_of_two().ilog2();
    (from..dim)
        .map(move |i| v | (1 << i))
        .filter(move |&c| c < m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masters_are_the_lowest_rank_of_each_site_in_rank_order() {
        let m = Masters::of(4, &[2, 0, 2, 1, 0]);
        assert_eq!(m.ranks, vec![0, 1, 3]);
        assert_eq!(m.local, vec![1, 4]);
        assert_eq!(m.me_local, 1);
        assert!(m.team().is_none());
        // the root (rank 4, site 0 = master 1) stands in for rank 1
        assert_eq!(m.rooted(4, 0), (vec![0, 4, 3], 1));
        assert_eq!(m.local_root(4), 1);
        assert_eq!(m.local_root(2), 0);
    }

    #[test]
    fn impi_tree_is_lams_hypercube() {
        // 6 members: 0 -> 1, 2, 4; 1 -> 3, 5; 2 -> none (6 is out); 3 -> none
        assert_eq!(children(0, 6).collect::<Vec<_>>(), vec![1, 2, 4]);
        assert_eq!(children(1, 6).collect::<Vec<_>>(), vec![3, 5]);
        assert_eq!(children(2, 6).count(), 0);
        assert_eq!(children(3, 8).collect::<Vec<_>>(), vec![7]);
        assert_eq!(parent(0), None);
        assert_eq!(parent(5), Some(1));
        assert_eq!(parent(6), Some(2));
        // every member but the root has exactly one parent that lists it as a child
        for m in 1..20 {
            for v in 1..m {
                let p = parent(v).unwrap();
                assert!(children(p, m).any(|c| c == v), "m {m} v {v}");
            }
        }
    }
}
