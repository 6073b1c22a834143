//! The ends' half of surviving a relay's death (docs/impi-relay.md, "Surviving a relay's
//! death"): in a job whose clusters sit behind trunked relays, a relay that dies takes
//! the packets it held with it, and IMPI's sender has forgotten them (TCP acknowledged
//! them to the relay). So every packet that counts for flow control is numbered per
//! direction of a process pair (in `pk_reserved`) and kept by its sender until the
//! receiver's PROTOACK, which then carries the receiver's cumulative count, covers it;
//! after a path changes, the receiver's count says where to resend from, and numbers at
//! or below it are duplicates. IMPI's window (hiwater packets unacknowledged) bounds what
//! is kept. Sans-IO: the route supplies the packets' bytes and writes the resends.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// What to do with an arriving numbered packet.
#[derive(Debug, PartialEq, Eq)]
pub enum Accept {
    /// The next packet of its stream: handle it.
    Next,
    /// Already handled (a resend overlapping what arrived): drop it.
    Duplicate,
    /// Beyond the next: an earlier one was lost with a relay, and the resend that the
    /// loss triggers brings this one again after it, so drop it for now.
    Early,
}

/// Both directions of the stream with one remote process.
#[derive(Default)]
struct Stream {
    /// Numbered packets sent (the last number given).
    sent: u64,
    /// How many of them the receiver has confirmed.
    acked: u64,
    /// Copies of the unconfirmed ones, oldest first, with their numbers.
    kept: VecDeque<(u64, Arc<Vec<u8>>)>,
    /// Numbered packets received in order from it.
    received: u64,
    /// `acked`, and whether copies were kept, at the last `stalled` check.
    checked: (u64, bool),
    /// `acked` when we last asked the receiver for its count with a probe, until its
    /// answer (`None` after a `RESUME`, whose answer always resends).
    probed: Option<u64>,
}

#[derive(Default)]
pub struct ResendLog {
    streams: HashMap<u32, Stream>,
}

impl ResendLog {
    fn stream(&mut self, peer: u32) -> &mut Stream {
        self.streams.entry(peer).or_default()
    }

    /// The number of the next packet to `to`.
    pub fn number(&mut self, to: u32) -> u64 {
        let s = self.stream(to);
        s.sent += 1;
        s.sent
    }

    /// Keeps the bytes (header and data) of packet `number` to `to` until confirmed.
    pub fn keep(&mut self, to: u32, number: u64, bytes: Arc<Vec<u8>>) {
        self.stream(to).kept.push_back((number, bytes));
    }

    pub fn sent(&self, to: u32) -> u64 {
        self.streams.get(&to).map_or(0, |s| s.sent)
    }

    pub fn received(&self, from: u32) -> u64 {
        self.streams.get(&from).map_or(0, |s| s.received)
    }

    /// `peer` has received `count` of our packets in order: forgets their copies and
    /// returns how many are now confirmed. A count above what was sent breaks the rule.
    pub fn confirmed(&mut self, peer: u32, count: u64) -> Result<u64, String> {
        let s = self.stream(peer);
        if count > s.sent {
            return Err(format!(
                "PROTOACK confirms {count} packets, but only {} were sent",
                s.sent
            ));
        }
        s.acked = s.acked.max(count);
        while s.kept.front().is_some_and(|(n, _)| *n <= s.acked) {
            s.kept.pop_front();
        }
        Ok(s.acked)
    }

    /// Classifies numbered packet `number` from `from`, counting it when it is the next.
    pub fn accept(&mut self, from: u32, number: u64) -> Result<Accept, String> {
        if number == 0 {
            return Err("numbered packet without a number (pk_reserved 0)".into());
        }
        let s = self.stream(from);
        Ok(if number == s.received + 1 {
            s.received = number;
            Accept::Next
        } else if number <= s.received {
            Accept::Duplicate
        } else {
            Accept::Early
        })
    }

    /// The processes whose oldest kept packet was already kept at the previous call and
    /// is still not confirmed: with calls a period apart, nothing of theirs has been
    /// confirmed for a whole period. A loss no end sees (the connection between two
    /// relays that both live breaking) shows only this way.
    pub fn stalled(&mut self) -> Vec<u32> {
        let mut late = Vec::new();
        for (&peer, s) in self.streams.iter_mut() {
            let kept = !s.kept.is_empty();
            if kept && s.checked == (s.acked, true) {
                late.push(peer);
            }
            s.checked = (s.acked, kept);
        }
        late.sort_unstable();
        late
    }

    /// We ask `peer` for its count because it confirmed nothing for a period.
    pub fn probing(&mut self, peer: u32) {
        let s = self.stream(peer);
        s.probed = Some(s.acked);
    }

    /// We ask `peer` to resend because a path was lost: its answer resends.
    pub fn resuming(&mut self, peer: u32) {
        self.stream(peer).probed = None;
    }

    /// `peer` answered our ask with its count: whether to resend the kept packets after
    /// it. After a probe only when nothing arrived since the probe's confirmed count
    /// (packets then lost, or a receiver that read nothing for a whole period); a count
    /// that moved on means the stream flows and its confirmations were merely late, and
    /// resending would send everything still in flight twice.
    pub fn answered(&mut self, peer: u32, count: u64) -> bool {
        match self.stream(peer).probed.take() {
            Some(at) => count <= at,
            None => true,
        }
    }

    /// The kept packets to `to` numbered above `count`, oldest first.
    pub fn kept_after(&self, to: u32, count: u64) -> impl Iterator<Item = &Arc<Vec<u8>>> {
        self.streams
            .get(&to)
            .into_iter()
            .flat_map(|s| s.kept.iter())
            .filter(move |(n, _)| *n > count)
            .map(|(_, b)| b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_live_until_confirmed() {
        let mut log = ResendLog::default();
        for _ in 0..4 {
            let n = log.number(7);
            log.keep(7, n, Arc::new(vec![n as u8]));
        }
        assert_eq!(log.confirmed(7, 2), Ok(2));
        let left: Vec<&[u8]> = log.kept_after(7, 0).map(|b| b.as_slice()).collect();
        assert_eq!(left, vec![&[3u8][..], &[4u8][..]]);
        assert_eq!(log.kept_after(7, 3).count(), 1);
        assert_eq!(log.confirmed(7, 1), Ok(2), "an older count changes nothing");
        assert!(log.confirmed(7, 5).is_err(), "more than was sent");
        assert_eq!(log.kept_after(8, 0).count(), 0);
    }

    #[test]
    fn a_stream_is_stalled_when_a_whole_period_confirms_nothing() {
        let mut log = ResendLog::default();
        let send = |log: &mut ResendLog, to| {
            let n = log.number(to);
            log.keep(to, n, Arc::new(vec![0]));
        };
        send(&mut log, 1);
        send(&mut log, 2);
        assert!(log.stalled().is_empty(), "kept only since this period");
        send(&mut log, 1);
        assert_eq!(log.confirmed(2, 1), Ok(1));
        // Process 1 confirmed nothing for a period; process 2 has nothing kept.
        assert_eq!(log.stalled(), vec![1]);
        assert_eq!(log.confirmed(1, 1), Ok(1));
        assert!(
            log.stalled().is_empty(),
            "a confirmation restarts the period"
        );
        assert_eq!(log.stalled(), vec![1]);
        assert_eq!(log.confirmed(1, 2), Ok(2));
        assert!(log.stalled().is_empty());
        assert!(log.stalled().is_empty(), "nothing kept, nothing late");
    }

    #[test]
    fn a_probe_answer_resends_only_when_nothing_arrived() {
        let mut log = ResendLog::default();
        for _ in 0..3 {
            let n = log.number(5);
            log.keep(5, n, Arc::new(vec![0]));
        }
        assert_eq!(log.confirmed(5, 1), Ok(1));
        log.probing(5);
        assert_eq!(log.confirmed(5, 2), Ok(2));
        assert!(
            !log.answered(5, 2),
            "the stream moved on: late confirmations"
        );
        log.probing(5);
        assert!(log.answered(5, 2), "nothing arrived for a period: resend");
        log.probing(5);
        log.resuming(5);
        assert!(
            log.answered(5, 3),
            "after a lost path the answer always resends"
        );
        assert!(
            log.answered(6, 0),
            "an answer nobody probed for (a RESUME's) resends"
        );
    }

    #[test]
    fn the_receiver_takes_each_number_once_and_in_order() {
        let mut log = ResendLog::default();
        assert_eq!(log.accept(3, 1), Ok(Accept::Next));
        assert_eq!(log.accept(3, 3), Ok(Accept::Early));
        assert_eq!(log.accept(3, 2), Ok(Accept::Next));
        assert_eq!(log.accept(3, 2), Ok(Accept::Duplicate));
        assert_eq!(log.accept(3, 1), Ok(Accept::Duplicate));
        assert_eq!(log.accept(3, 3), Ok(Accept::Next));
        assert_eq!(log.received(3), 3);
        assert_eq!(log.received(4), 0);
        assert!(log.accept(3, 0).is_err());
    }
}
