//! IMPI's barrier: a barrier inside each site, then the masters: linear up to
//! `maxlinear` of them (master 0 hears from every master, then answers each), IMPI's
//! tree above (fan-in to master 0, then fan-out), then a barrier inside each site again.

use crate::coll::masters::{children, parent, Masters};
use crate::coll::sched::Sched;

pub fn build(s: &mut Sched, maxlinear: usize) {
    let ms = Masters::of(s.rank, &s.sites);
    super::dissemination::build(s, ms.local_team());
    if let Some(t) = ms.team() {
        let none = s.temp(0);
        let m = t.size();
        let (up, down): (Vec<usize>, Option<usize>) = if m <= maxlinear {
            match t.me {
                0 => ((1..m).collect(), None),
                _ => (Vec::new(), Some(0)),
            }
        } else {
            (children(t.me, m).collect(), parent(t.me))
        };
        for &c in &up {
            s.recv(t.peer(c), none);
        }
        s.wait();
        if let Some(p) = down {
            s.send(t.peer(p), none);
            s.recv(t.peer(p), none);
            s.wait();
        }
        for &c in &up {
            s.send(t.peer(c), none);
        }
        s.wait();
    }
    super::dissemination::build(s, ms.local_team());
}
