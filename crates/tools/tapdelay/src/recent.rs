//! Frames this process has just written, recognised when they come back (sans-IO).
//!
//! Cluster-to-cluster traffic crosses two delay lines: out of one cluster's uplink
//! into the WAN core bridge, and from there into the other cluster's uplink. Both
//! are served by this process, and the kernel forwards a frame written to the first
//! line's TAP through the bridge onto the second line's TAP within the write call.
//! The process reads it back a turn of the loop later (10-20 µs here). Stamping the
//! frame with the moment it was written makes the WAN core forward in no time, so
//! two clusters are exactly the sum of their uplinks' delays apart, as configured.
//!
//! Frames are recognised by a fingerprint of their length and first bytes (Ethernet,
//! IP and transport headers: a ping's sequence number, TCP's sequence and
//! acknowledgement numbers), which the bridge does not change.

/// How many recent writes are remembered: more than one turn of the loop releases
/// (the write is read back in the next turn).
const CAPACITY: usize = 64;
/// Bytes of a frame that enter its fingerprint: all headers of a TCP/IP frame with
/// options.
const FINGERPRINT_BYTES: usize = 128;
/// A write is matched only this long: a frame comes back within a turn of the loop,
/// and an older write with the same fingerprint (a repeated ARP request) is another
/// frame.
const MAX_AGE_NS: u64 = 1_000_000;

fn fingerprint(frame: &[u8]) -> u64 {
    // FNV-1a, 64 bit: fast and well spread for a handful of header bytes.
    let head = &frame[..frame.len().min(FINGERPRINT_BYTES)];
    (frame.len() as u64)
        .to_le_bytes()
        .iter()
        .chain(head)
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// A ring of (fingerprint, write time) of the latest writes.
pub struct RecentWrites {
    entries: [(u64, u64); CAPACITY],
    next: usize,
    len: usize,
}

impl RecentWrites {
    pub fn new() -> Self {
        Self {
            entries: [(0, 0); CAPACITY],
            next: 0,
            len: 0,
        }
    }

    /// `frame` (its bytes on the wire) was handed to the kernel at `at_ns`.
    pub fn wrote(&mut self, frame: &[u8], at_ns: u64) {
        self.entries[self.next] = (fingerprint(frame), at_ns);
        self.next = (self.next + 1) % CAPACITY;
        self.len = (self.len + 1).min(CAPACITY);
    }

    /// When `frame`, read at `now_ns`, was written by this process, if it was (the
    /// latest matching write of the last [`MAX_AGE_NS`]).
    pub fn written_at(&self, frame: &[u8], now_ns: u64) -> Option<u64> {
        let fp = fingerprint(frame);
        (1..=self.len)
            .map(|back| self.entries[(self.next + CAPACITY - back) % CAPACITY])
            .take_while(|(_, at)| now_ns.saturating_sub(*at) <= MAX_AGE_NS)
            .find(|(f, _)| *f == fp)
            .map(|(_, at)| at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(seq: u8, len: usize) -> Vec<u8> {
        let mut f = vec![0u8; len];
        f[40] = seq;
        f
    }

    #[test]
    fn a_written_frame_is_recognised_with_its_write_time() {
        let mut r = RecentWrites::new();
        r.wrote(&frame(1, 98), 1_000);
        r.wrote(&frame(2, 98), 2_000);
        assert_eq!(r.written_at(&frame(1, 98), 20_000), Some(1_000));
        assert_eq!(r.written_at(&frame(2, 98), 20_000), Some(2_000));
        // Another sequence number, another length: not ours.
        assert_eq!(r.written_at(&frame(3, 98), 20_000), None);
        assert_eq!(r.written_at(&frame(1, 99), 20_000), None);
        // Bytes beyond the fingerprint do not matter (the payload of a segment).
        let mut long = frame(4, 9000);
        r.wrote(&long, 3_000);
        long[8000] = 7;
        assert_eq!(r.written_at(&long, 4_000), Some(3_000));
    }

    #[test]
    fn old_writes_and_overwritten_entries_are_not_matched() {
        let mut r = RecentWrites::new();
        r.wrote(&frame(1, 60), 0);
        assert_eq!(r.written_at(&frame(1, 60), MAX_AGE_NS), Some(0));
        assert_eq!(r.written_at(&frame(1, 60), MAX_AGE_NS + 1), None);
        // The same frame written again later matches its latest write.
        r.wrote(&frame(1, 60), 500);
        assert_eq!(r.written_at(&frame(1, 60), 600), Some(500));
        for i in 0..CAPACITY as u64 {
            r.wrote(&frame(2, 70 + i as usize), 600 + i);
        }
        assert_eq!(r.written_at(&frame(1, 60), 700), None);
        assert_eq!(r.written_at(&frame(2, 70), 700), Some(600));
    }

    #[test]
    fn empty_ring_matches_nothing() {
        let r = RecentWrites::new();
        assert_eq!(r.written_at(&[0u8; 60], 0), None);
        assert_eq!(r.written_at(&[], 5), None);
    }
}
