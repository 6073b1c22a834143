//! Hierarchical barrier: members of a part (node, site) check in with their leader, the
//! leaders run the barrier of the next level, and each leader releases its part. Leaders
//! of a wide level signal each other in one round (one message each way per pair of
//! sites).

use crate::coll::alltoall::linear as exchange;
use crate::coll::levels::{cut, Cut, Level};
use crate::coll::sched::Sched;
use crate::coll::team::Team;

pub fn build(s: &mut Sched, t: Team, levels: &[Level]) {
    let Some((level, rest)) = levels.split_first() else {
        return super::dissemination::build(s, t);
    };
    let cut = match cut(t, level, None) {
        Cut::Through => return build(s, t, rest),
        Cut::Wide => return signal_all(s, t),
        Cut::Split(c) => c,
    };
    let none = s.temp(0);
    let part = cut.part_team();
    if cut.is_leader() {
        for i in 1..part.size() {
            s.recv(part.peer(i), none);
        }
        s.wait();
        if cut.wide {
            signal_all(s, cut.leader_team());
        } else {
            build(s, cut.leader_team(), rest);
        }
        for i in 1..part.size() {
            s.send(part.peer(i), none);
        }
    } else {
        s.send(part.peer(0), none);
        s.recv(part.peer(0), none);
    }
    s.wait();
}

/// Every member signals every other one and hears from all: one round.
fn signal_all(s: &mut Sched, t: Team) {
    let none = s.temp(0);
    let all = vec![none; t.size()];
    exchange::build(s, t, &all, &all);
}
