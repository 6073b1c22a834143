//! The result buffers of outstanding fetching operations (get, get-accumulate,
//! fetch-and-op, compare-and-swap), so that fetches into overlapping buffers land in the
//! order they were started.
//!
//! Each operation's reply is a message of its own, and replies from one target may
//! overtake each other: a reply that goes by rendezvous (long, or past the eager credit)
//! lands after a later eager one. Where two outstanding operations write the same bytes,
//! the later one must win, as the default `accumulate_ordering` and every MPI's users
//! expect (MPICH's `threads/rma/mt_getaccfence` checks it). So an operation whose result
//! overlaps an outstanding one receives its reply into a staging buffer, and copies it
//! out only once every operation started before it on the window is done. Operations
//! into disjoint buffers, the common case, receive in place and never wait for others.

use std::collections::BTreeMap;
use std::ops::Range;

/// An outstanding result buffer: its first address and a sequence number.
pub(super) type Key = (usize, u64);

#[derive(Default)]
pub(super) struct Results {
    /// Byte ranges of outstanding result buffers: key -> one past the last address.
    ranges: BTreeMap<Key, usize>,
    /// The longest range recorded since the map was last empty: an overlap search
    /// stops at ranges starting that far below the new one.
    longest: usize,
    next: u64,
}

impl Results {
    /// Records the result buffer `range` of a new operation (ask [`Results::overlaps`]
    /// first); its key. Empty ranges are not recorded.
    pub fn insert(&mut self, range: Range<usize>) -> Option<Key> {
        if range.is_empty() {
            return None;
        }
        let key = (range.start, self.next);
        self.next += 1;
        self.longest = self.longest.max(range.len());
        self.ranges.insert(key, range.end);
        Some(key)
    }

    /// Whether `range` overlaps the result buffer of an outstanding operation.
    pub fn overlaps(&self, range: &Range<usize>) -> bool {
        !range.is_empty()
            && self
                .ranges
                .range(..(range.end, 0))
                .rev()
                .take_while(|((start, _), _)| start + self.longest > range.start)
                .any(|(_, &end)| end > range.start)
    }

    pub fn remove(&mut self, key: Key) {
        self.ranges.remove(&key);
        if self.ranges.is_empty() {
            self.longest = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `issue` does with a result buffer: asks whether it overlaps, then records it.
    fn record(r: &mut Results, range: Range<usize>) -> Option<(Key, bool)> {
        let overlaps = r.overlaps(&range);
        r.insert(range).map(|key| (key, overlaps))
    }

    #[test]
    fn the_same_slot_overlaps_until_its_operation_is_removed() {
        let mut r = Results::default();
        let (a, first) = record(&mut r, 100..104).unwrap();
        assert!(!first);
        let (b, second) = record(&mut r, 100..104).unwrap();
        assert!(second);
        r.remove(a);
        r.remove(b);
        assert_eq!(record(&mut r, 100..104).map(|(_, o)| o), Some(false));
    }

    #[test]
    fn adjacent_ranges_do_not_overlap_and_covering_ones_do() {
        let mut r = Results::default();
        for start in (0..64).step_by(8) {
            assert_eq!(
                record(&mut r, start..start + 8).map(|(_, o)| o),
                Some(false)
            );
        }
        assert_eq!(record(&mut r, 64..72).map(|(_, o)| o), Some(false));
        // Starts below every recorded range, ends inside the first.
        assert_eq!(record(&mut r, 0..1).map(|(_, o)| o), Some(true));
        assert_eq!(record(&mut r, 30..34).map(|(_, o)| o), Some(true));
    }

    #[test]
    fn a_long_range_below_is_found_past_short_ones() {
        let mut r = Results::default();
        r.insert(0..1000).unwrap();
        r.insert(2000..2004).unwrap();
        assert_eq!(record(&mut r, 990..994).map(|(_, o)| o), Some(true));
        assert_eq!(record(&mut r, 1000..1004).map(|(_, o)| o), Some(false));
    }

    #[test]
    fn empty_ranges_are_not_recorded() {
        let mut r = Results::default();
        assert!(r.insert(5..5).is_none());
        assert!(!r.overlaps(&(5..5)));
        assert_eq!(record(&mut r, 5..6).map(|(_, o)| o), Some(false));
    }
}
