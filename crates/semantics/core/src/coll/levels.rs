//! The levels of the machine hierarchy node-aware collectives combine through: members
//! sharing a node first, then one leader per node across the network. The levels form a
//! list (today: the node; next: the site or cluster), and [`split`] cuts a team at one
//! level, so a third level is one more entry.

use super::team::Team;

/// A team cut at one level: the part this process belongs to and the leaders of every
/// part (one per key, in order of first appearance).
pub struct Split {
    /// Group ranks of this process's part, its leader first.
    pub part: Vec<usize>,
    /// This process's index in `part`.
    pub me_in_part: usize,
    /// Group ranks of the leaders.
    pub leaders: Vec<usize>,
    /// Index of this process's leader in `leaders`.
    pub my_part: usize,
    /// Team indices of every part's members (leader first), in `leaders` order.
    pub parts: Vec<Vec<usize>>,
}

impl Split {
    pub fn is_leader(&self) -> bool {
        self.me_in_part == 0
    }

    pub fn part_team(&self) -> Team<'_> {
        Team::of(&self.part, self.me_in_part)
    }

    /// The leaders' team; meaningful for leaders only.
    pub fn leader_team(&self) -> Team<'_> {
        Team::of(&self.leaders, self.my_part)
    }
}

/// Cuts `team` by `key` (the level's value for each group rank). The leader of a part is
/// `root` when it lies in the part, else its first member. `None` when the cut would not
/// help: a single part, or one member per part.
pub fn split(team: Team, key: &[u32], root: Option<usize>) -> Option<Split> {
    let n = team.size();
    let mut keys: Vec<u32> = Vec::new();
    let mut parts: Vec<Vec<usize>> = Vec::new();
    for i in 0..n {
        let k = key[team.rank(i)];
        match keys.iter().position(|&x| x == k) {
            Some(p) => parts[p].push(i),
            None => {
                keys.push(k);
                parts.push(vec![i]);
            }
        }
    }
    if parts.len() == 1 || parts.len() == n {
        return None;
    }
    if let Some(r) = root {
        for p in parts.iter_mut() {
            if let Some(pos) = p.iter().position(|&i| i == r) {
                p.swap(0, pos);
                p[1..].sort_unstable();
            }
        }
    }
    let my_part = parts
        .iter()
        .position(|p| p.contains(&team.me))
        .expect("every member is in a part");
    let part: Vec<usize> = parts[my_part].iter().map(|&i| team.rank(i)).collect();
    let me_in_part = parts[my_part]
        .iter()
        .position(|&i| i == team.me)
        .expect("member of its part");
    let leaders = parts.iter().map(|p| team.rank(p[0])).collect();
    Some(Split {
        part,
        me_in_part,
        leaders,
        my_part,
        parts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_by_node_puts_root_first_and_keeps_order() {
        // ranks 0..6 on nodes 0,1,0,1,2,2; root 3
        let key = [0, 1, 0, 1, 2, 2];
        let s = split(Team::all(6, 2), &key, Some(3)).unwrap();
        assert_eq!(s.parts, vec![vec![0, 2], vec![3, 1], vec![4, 5]]);
        assert_eq!(s.leaders, vec![0, 3, 4]);
        assert_eq!(s.part, vec![0, 2]);
        assert_eq!(s.me_in_part, 1);
        assert!(!s.is_leader());
        assert!(split(Team::all(3, 0), &[0, 0, 0], None).is_none());
        assert!(split(Team::all(3, 0), &[0, 1, 2], None).is_none());
    }
}
