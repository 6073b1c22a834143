//! Dissemination barrier: ceil(log2 n) rounds; in round k each member signals the one
//! 2^k ahead and hears from the one 2^k behind.

use crate::coll::sched::Sched;
use crate::coll::team::Team;

pub fn build(s: &mut Sched, t: Team) {
    let n = t.size();
    let none = s.temp(0);
    let mut k = 1;
    while k < n {
        s.send(t.peer((t.me + k) % n), none);
        s.recv(t.peer((t.me + n - k) % n), none);
        s.wait();
        k *= 2;
    }
}
