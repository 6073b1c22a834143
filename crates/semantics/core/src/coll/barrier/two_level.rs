//! Two-level barrier: members of a part (node) check in with their leader, the leaders
//! run the barrier of the next level, and each leader releases its part.

use crate::coll::levels::split;
use crate::coll::sched::Sched;
use crate::coll::team::Team;
use std::sync::Arc;

pub fn build(s: &mut Sched, t: Team, levels: &[Arc<Vec<u32>>]) {
    let Some((key, rest)) = levels.split_first() else {
        return super::dissemination::build(s, t);
    };
    let Some(cut) = split(t, key, None) else {
        return build(s, t, rest);
    };
    let none = s.temp(0);
    let part = cut.part_team();
    if cut.is_leader() {
        for i in 1..part.size() {
            s.recv(part.peer(i), none);
        }
        s.wait();
        build(s, cut.leader_team(), rest);
        for i in 1..part.size() {
            s.send(part.peer(i), none);
        }
    } else {
        s.send(part.peer(0), none);
        s.recv(part.peer(0), none);
    }
    s.wait();
}
