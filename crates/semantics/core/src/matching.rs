//! The matching engine: posted receives and unexpected messages, for every transport at
//! once (wildcard receives match whichever arrives first). Each source's messages reach
//! it in order through one channel, so scanning both queues from the front gives MPI's
//! non-overtaking order per (source, tag, communicator).

use crate::request::{ReqId, ANY_SOURCE, ANY_TAG};
use std::collections::VecDeque;

/// How an unexpected message's data is held until a receive matches it.
pub enum Held {
    /// Eager payload, copied out of the transport. `sync`: acknowledge when matched.
    Eager { data: Vec<u8>, sync: bool },
    /// An eager message whose head has arrived and whose payload is still arriving: it
    /// holds its place in the queue so later messages cannot overtake it.
    Arriving { sync: bool },
    /// Rendezvous: only the request to send; the data stays with the sender.
    Rts { cma_addr: u64 },
    /// A self-send by this process (synchronous self-sends complete `send` when matched).
    Local { data: Vec<u8>, send: Option<ReqId> },
}

pub struct Unexpected {
    pub context: u64,
    pub source: i32,
    pub tag: i32,
    pub len: u64,
    /// World rank of the sending process and its message id.
    pub from: u32,
    pub msg: u64,
    pub held: Held,
}

impl Unexpected {
    pub fn new(
        env: crate::header::Envelope,
        len: u64,
        from: u32,
        msg: u64,
        held: Held,
    ) -> Unexpected {
        Unexpected {
            context: env.context,
            source: env.src,
            tag: env.tag,
            len,
            from,
            msg,
            held,
        }
    }
}

pub struct Posted {
    pub req: ReqId,
    pub context: u64,
    pub source: i32,
    pub tag: i32,
}

fn matches(context: u64, source: i32, tag: i32, m_context: u64, m_source: i32, m_tag: i32) -> bool {
    context == m_context
        && (source == ANY_SOURCE || source == m_source)
        && (tag == ANY_TAG || tag == m_tag)
}

#[derive(Default)]
pub struct Matching {
    posted: VecDeque<Posted>,
    unexpected: VecDeque<Unexpected>,
    /// Unexpected messages queued so far: a blocking receive polling one ring looks in
    /// the queue again only when this has changed.
    arrivals: u64,
}

impl Matching {
    /// Finds and removes the oldest posted receive matching an arriving envelope.
    pub fn take_posted(&mut self, context: u64, source: i32, tag: i32) -> Option<ReqId> {
        let i = self
            .posted
            .iter()
            .position(|p| matches(p.context, p.source, p.tag, context, source, tag))?;
        self.posted.remove(i).map(|p| p.req)
    }

    /// Finds and removes the oldest unexpected message a new receive matches.
    pub fn take_unexpected(&mut self, context: u64, source: i32, tag: i32) -> Option<Unexpected> {
        let i = self.find_unexpected(context, source, tag)?;
        self.unexpected.remove(i)
    }

    /// Looks at (without removing) the oldest unexpected message a probe matches.
    pub fn peek_unexpected(&self, context: u64, source: i32, tag: i32) -> Option<&Unexpected> {
        self.find_unexpected(context, source, tag)
            .map(|i| &self.unexpected[i])
    }

    fn find_unexpected(&self, context: u64, source: i32, tag: i32) -> Option<usize> {
        self.unexpected
            .iter()
            .position(|u| matches(context, source, tag, u.context, u.source, u.tag))
    }

    /// Whether a posted receive could match a message of `source` on `context` (such a
    /// receive, posted earlier, takes precedence over a newer one).
    pub fn has_posted_for(&self, context: u64, source: i32) -> bool {
        self.posted
            .iter()
            .any(|p| p.context == context && (p.source == ANY_SOURCE || p.source == source))
    }

    pub fn post(&mut self, p: Posted) {
        self.posted.push_back(p);
    }

    pub fn add_unexpected(&mut self, u: Unexpected) {
        self.unexpected.push_back(u);
        self.arrivals += 1;
    }

    /// How many unexpected messages have been queued since the start.
    pub fn arrivals(&self) -> u64 {
        self.arrivals
    }

    /// Removes a posted receive (cancel); false if it was already matched.
    pub fn unpost(&mut self, req: ReqId) -> bool {
        match self.posted.iter().position(|p| p.req == req) {
            Some(i) => {
                self.posted.remove(i);
                true
            }
            None => false,
        }
    }

    /// Removes the unexpected message `msg` of process `from` (remote cancel).
    pub fn withdraw(&mut self, from: u32, msg: u64) -> Option<Unexpected> {
        let i = self
            .unexpected
            .iter()
            .position(|u| u.from == from && u.msg == msg)?;
        self.unexpected.remove(i)
    }

    /// The unexpected message `msg` of process `from`, to fill in its data.
    pub fn find_mut(&mut self, from: u32, msg: u64) -> Option<&mut Unexpected> {
        self.unexpected
            .iter_mut()
            .find(|u| u.from == from && u.msg == msg)
    }

    pub fn unexpected_len(&self) -> usize {
        self.unexpected.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slab::Id;

    fn id(i: u32) -> ReqId {
        Id {
            index: i,
            generation: 0,
        }
    }

    fn unexp(source: i32, tag: i32, msg: u64) -> Unexpected {
        Unexpected {
            context: 4,
            source,
            tag,
            len: 0,
            from: source as u32,
            msg,
            held: Held::Eager {
                data: vec![],
                sync: false,
            },
        }
    }

    #[test]
    fn wildcards_match_the_oldest_in_order() {
        let mut m = Matching::default();
        m.add_unexpected(unexp(1, 5, 1));
        m.add_unexpected(unexp(2, 5, 2));
        m.add_unexpected(unexp(1, 6, 3));
        assert_eq!(m.take_unexpected(4, 1, ANY_TAG).unwrap().msg, 1);
        assert_eq!(m.take_unexpected(4, ANY_SOURCE, 6).unwrap().msg, 3);
        assert!(
            m.take_unexpected(5, ANY_SOURCE, ANY_TAG).is_none(),
            "other context"
        );
        assert_eq!(m.take_unexpected(4, ANY_SOURCE, ANY_TAG).unwrap().msg, 2);
    }

    #[test]
    fn posted_receives_match_in_posting_order() {
        let mut m = Matching::default();
        m.post(Posted {
            req: id(1),
            context: 0,
            source: ANY_SOURCE,
            tag: 3,
        });
        m.post(Posted {
            req: id(2),
            context: 0,
            source: 2,
            tag: ANY_TAG,
        });
        assert_eq!(m.take_posted(0, 2, 3), Some(id(1)));
        assert_eq!(m.take_posted(0, 2, 3), Some(id(2)));
        assert_eq!(m.take_posted(0, 2, 3), None);
        m.post(Posted {
            req: id(3),
            context: 0,
            source: 1,
            tag: 1,
        });
        assert!(m.unpost(id(3)));
        assert!(!m.unpost(id(3)));
    }

    #[test]
    fn withdraw_finds_a_message_by_sender_and_id() {
        let mut m = Matching::default();
        m.add_unexpected(unexp(1, 5, 10));
        m.add_unexpected(unexp(2, 5, 10));
        assert_eq!(m.withdraw(2, 10).unwrap().source, 2);
        assert!(m.withdraw(2, 10).is_none());
        assert_eq!(m.unexpected_len(), 1);
    }

    #[test]
    fn arrivals_count_every_queued_message_and_stay_when_taken() {
        let mut m = Matching::default();
        assert_eq!(m.arrivals(), 0);
        m.add_unexpected(unexp(1, 5, 10));
        m.add_unexpected(unexp(2, 5, 11));
        assert_eq!(m.arrivals(), 2);
        assert!(m.take_unexpected(4, 1, 5).is_some());
        assert_eq!(m.arrivals(), 2, "taking a message is not an arrival");
    }
}
