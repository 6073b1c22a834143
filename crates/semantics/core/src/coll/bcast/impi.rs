//! IMPI's broadcast: a global phase among the masters, the root standing in for its own
//! site's master (linear up to `maxlinear` participants, IMPI's tree above), then a
//! binomial broadcast inside each site from the root or the master.

use crate::coll::masters::{children, parent, Masters};
use crate::coll::sched::{Sched, Span};
use crate::coll::team::Team;

pub fn build(s: &mut Sched, root: usize, data: Span, maxlinear: usize) {
    let ms = Masters::of(s.rank, &s.sites);
    let (gm, rootnum) = ms.rooted(root, s.sites[root]);
    if let Some(me) = gm.iter().position(|&r| r == s.rank) {
        let t = Team::of(&gm, me);
        let m = t.size();
        if m <= maxlinear {
            super::two_level::linear(s, t, rootnum, data, usize::MAX);
        } else {
            let v = (me + m - rootnum) % m;
            let peer = |x: usize| t.peer((x + rootnum) % m);
            if let Some(p) = parent(v) {
                s.recv(peer(p), data);
                s.wait();
            }
            for c in children(v, m) {
                s.send(peer(c), data);
            }
            s.wait();
        }
    }
    super::binomial::build(s, ms.local_team(), ms.local_root(root), data);
}
