//! Sends waiting for their receiver's answer (a rendezvous's `Cts` or `Fin`, a
//! synchronous send's acknowledgement), by message id, with a count per destination so
//! that "does a message of ours to this peer wait?" costs the same with one such send or
//! with hundreds of thousands (a flood of one-sided operations beyond the eager credit).

use crate::request::ReqId;
use std::collections::HashMap;

#[derive(Default)]
pub struct Awaiting {
    by_msg: HashMap<u64, (ReqId, u32)>,
    per_dest: HashMap<u32, usize>,
}

impl Awaiting {
    /// Send `req` of message `msg` to world rank `dest` now waits for an answer.
    pub fn insert(&mut self, msg: u64, req: ReqId, dest: u32) {
        if let Some((_, old)) = self.by_msg.insert(msg, (req, dest)) {
            self.forget(old);
        }
        *self.per_dest.entry(dest).or_default() += 1;
    }

    /// The answer for `msg` arrived (or it was cancelled): its send, if it waited.
    pub fn remove(&mut self, msg: u64) -> Option<ReqId> {
        let (req, dest) = self.by_msg.remove(&msg)?;
        self.forget(dest);
        Some(req)
    }

    fn forget(&mut self, dest: u32) {
        if let Some(n) = self.per_dest.get_mut(&dest) {
            *n -= 1;
            if *n == 0 {
                self.per_dest.remove(&dest);
            }
        }
    }

    pub fn get(&self, msg: u64) -> Option<ReqId> {
        self.by_msg.get(&msg).map(|&(req, _)| req)
    }

    pub fn contains(&self, msg: u64) -> bool {
        self.by_msg.contains_key(&msg)
    }

    /// Whether some send to `dest` waits for its answer.
    pub fn any_to(&self, dest: u32) -> bool {
        self.per_dest.contains_key(&dest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slab::Id;

    #[test]
    fn counts_follow_inserts_and_removals_per_destination() {
        let mut a = Awaiting::default();
        a.insert(1, Id::from_u64(10), 3);
        a.insert(2, Id::from_u64(11), 3);
        a.insert(3, Id::from_u64(12), 4);
        assert!(a.any_to(3) && a.any_to(4) && !a.any_to(5));
        assert_eq!(a.remove(1), Some(Id::from_u64(10)));
        assert!(a.any_to(3));
        assert_eq!(a.remove(2), Some(Id::from_u64(11)));
        assert!(!a.any_to(3));
        assert_eq!(a.remove(2), None);
        assert_eq!(a.get(3), Some(Id::from_u64(12)));
        assert!(a.contains(3) && !a.contains(1));
    }

    #[test]
    fn a_reused_message_id_moves_its_count() {
        let mut a = Awaiting::default();
        a.insert(7, Id::from_u64(1), 2);
        a.insert(7, Id::from_u64(2), 5);
        assert!(!a.any_to(2) && a.any_to(5));
        assert_eq!(a.remove(7), Some(Id::from_u64(2)));
        assert!(!a.any_to(5));
    }
}
