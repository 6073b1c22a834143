//! The levels of the machine hierarchy hierarchical collectives combine through: members
//! sharing a node first, then one leader per node across the network, then (on a
//! communicator spanning sites) one leader per site across the wide-area links. The
//! levels form a list, innermost first, and [`cut`] cuts a team at one level.
//!
//! A *wide* level is one whose leaders talk over wide-area links, where latency, not
//! bandwidth, is what costs: its leaders run one-round (linear) algorithms so that a
//! collective crosses between sites once, and send what crosses in pieces the route
//! sends eagerly (see [`send_pieces`]).

use super::sched::{Peer, Sched, Span};
use super::team::Team;
use std::sync::Arc;

/// One level of the hierarchy: the part (node, site) of every group rank.
#[derive(Clone)]
pub struct Level {
    pub key: Arc<Vec<u32>>,
    /// The parts are joined by wide-area links.
    pub wide: bool,
    /// Largest message sent in one piece between parts (see [`send_pieces`]).
    pub piece: usize,
}

impl Level {
    pub fn local(key: Arc<Vec<u32>>) -> Level {
        Level {
            key,
            wide: false,
            piece: usize::MAX,
        }
    }

    pub fn wide(key: Arc<Vec<u32>>) -> Level {
        Level {
            key,
            wide: true,
            piece: usize::MAX,
        }
    }

    /// This level with messages between its parts cut into pieces of `piece` bytes.
    pub fn in_pieces(self, piece: usize) -> Level {
        Level { piece, ..self }
    }
}

/// The pieces of at most `piece` bytes `data` travels in (one, possibly empty, when
/// it fits).
fn pieces(data: Span, piece: usize) -> impl Iterator<Item = Span> {
    let piece = piece.max(1);
    (0..data.len.div_ceil(piece).max(1)).map(move |k| {
        let at = k * piece;
        data.sub(at, piece.min(data.len - at))
    })
}

/// Sends `data` to `to` in pieces of at most `piece` bytes (a wide level's
/// [`Level::piece`]): a longer message would take the route's rendezvous and wait a
/// round trip between sites for the receiver's go-ahead (IMPI's DATASYNC/SYNCACK, the
/// RTS/CTS of crossmpi's TCP) before its data crosses; pieces within the eager limit
/// cross at once. The receiver takes them with [`recv_pieces`] of the same length and
/// `piece` (pieces of one pair and tag match in order).
pub fn send_pieces(s: &mut Sched, to: Peer, data: Span, piece: usize, subtag: i32) {
    for p in pieces(data, piece) {
        s.send_tagged(to, p, subtag);
    }
}

/// Receives what [`send_pieces`] sent.
pub fn recv_pieces(s: &mut Sched, from: Peer, data: Span, piece: usize, subtag: i32) {
    for p in pieces(data, piece) {
        s.recv_tagged(from, p, subtag);
    }
}

/// How a team stands at one level.
pub enum Cut {
    /// One part only: nothing to combine at this level.
    Through,
    /// Every member in a part of its own on a wide level: the members talk directly, in
    /// one round.
    Wide,
    /// Several parts, some with more than one member.
    Split(Split),
}

/// Cuts `team` at `level` (see [`split`] for `root`).
pub fn cut(team: Team, level: &Level, root: Option<usize>) -> Cut {
    match split(team, &level.key, root) {
        Some(mut s) => {
            s.wide = level.wide;
            s.piece = level.piece;
            Cut::Split(s)
        }
        None if level.wide
            && team.size() > 1
            && level.key[team.rank(0)] != level.key[team.rank(1)] =>
        {
            Cut::Wide
        }
        None => Cut::Through,
    }
}

/// The spans of `members`' blocks (`lens[m]` bytes each) laid back to back in `whole`.
pub fn layout(whole: Span, members: &[usize], lens: &[usize]) -> Vec<Span> {
    let mut at = 0;
    members
        .iter()
        .map(|&m| {
            at += lens[m];
            whole.sub(at - lens[m], lens[m])
        })
        .collect()
}

/// True when the members of every part form one run of consecutive ranks, so combining
/// inside parts first keeps rank order (what non-commutative reductions need).
pub fn in_runs(key: &[u32]) -> bool {
    let mut seen: Vec<u32> = Vec::new();
    for (i, &k) in key.iter().enumerate() {
        if i > 0 && key[i - 1] == k {
            continue;
        }
        if seen.contains(&k) {
            return false;
        }
        seen.push(k);
    }
    true
}

/// `inner` refined by `outer`: one value per distinct (outer, inner) pair, so an inner
/// part never spans two outer parts (a node shared by two declared sites is two parts).
pub fn refine(inner: &[u32], outer: &[u32]) -> Vec<u32> {
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    inner
        .iter()
        .zip(outer)
        .map(|(&i, &o)| match pairs.iter().position(|&p| p == (o, i)) {
            Some(k) => k as u32,
            None => {
                pairs.push((o, i));
                (pairs.len() - 1) as u32
            }
        })
        .collect()
}

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
    /// The leaders are joined by wide-area links (see [`Level::wide`]).
    pub wide: bool,
    /// Largest message sent in one piece between leaders (see [`Level::piece`]).
    pub piece: usize,
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
        wide: false,
        piece: usize::MAX,
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

    #[test]
    fn wide_level_with_one_member_per_site_talks_directly() {
        let sites = Level::wide(Arc::new(vec![0, 1, 2]));
        assert!(matches!(cut(Team::all(3, 1), &sites, None), Cut::Wide));
        let nodes = Level::local(Arc::new(vec![0, 1, 2]));
        assert!(matches!(cut(Team::all(3, 1), &nodes, None), Cut::Through));
        let one = Level::wide(Arc::new(vec![4, 4]));
        assert!(matches!(cut(Team::all(2, 0), &one, None), Cut::Through));
        match cut(
            Team::all(4, 3),
            &Level::wide(Arc::new(vec![0, 0, 1, 1])),
            None,
        ) {
            Cut::Split(s) => assert!(s.wide && s.leaders == vec![0, 2]),
            _ => panic!("two sites of two"),
        }
    }

    #[test]
    fn pieces_cover_the_message_in_order() {
        let whole = Span {
            region: 3,
            offset: 10,
            len: 10,
        };
        let cut: Vec<(usize, usize)> = pieces(whole, 4).map(|p| (p.offset, p.len)).collect();
        assert_eq!(cut, vec![(10, 4), (14, 4), (18, 2)]);
        assert_eq!(pieces(whole, usize::MAX).count(), 1);
        assert_eq!(pieces(whole, 10).count(), 1);
        let empty = whole.sub(0, 0);
        assert_eq!(pieces(empty, 4).map(|p| p.len).collect::<Vec<_>>(), vec![0]);
    }

    #[test]
    fn runs_and_refinement() {
        assert!(in_runs(&[0, 0, 1, 1, 2]));
        assert!(in_runs(&[5]));
        assert!(!in_runs(&[0, 1, 0]));
        // one node, two sites interleaved: two parts
        assert_eq!(refine(&[0, 0, 0, 0], &[0, 1, 0, 1]), vec![0, 1, 0, 1]);
        // node 7 is shared by sites 0 and 1
        assert_eq!(refine(&[7, 7, 8, 7], &[0, 0, 1, 1]), vec![0, 0, 1, 2]);
    }
}
