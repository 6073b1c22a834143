//! Inbox segments: a header page, then one ring of cells per local sender.
//!
//! ```text
//! offset 0      header: magic, senders, cells, cell_bytes, owner pid
//! offset 64     sleeping flag (own cache line: written by the owner, read by senders)
//! offset 4096   ring of sender 0: cells x cell_bytes
//!               ring of sender 1 ...
//! cell:         state (u32: 0 empty, 1 full) | frame length (u32) | frame bytes
//! ```
//! The cell's state word is the only synchronisation: the sender writes the frame, then
//! publishes it with a release store of `FULL`; the receiver reads it after an acquire
//! load and hands the cell back with a release store of `EMPTY`.

use std::ffi::CString;
use std::fmt;
use std::io;
use std::sync::atomic::{fence, AtomicU32, Ordering};

const MAGIC: u64 = 0x6372_6f73_736d_7069; // "crossmpi"
const HEADER_BYTES: usize = 4096;
const SLEEPING_OFFSET: usize = 64;
const CELL_HEADER: usize = 8;
const EMPTY: u32 = 0;
const FULL: u32 = 1;

/// Shape of every inbox of a node; all local ranks must agree on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InboxLayout {
    /// Number of local ranks that may send into the inbox (the node's rank count).
    pub senders: usize,
    /// Cells per sender ring.
    pub cells: usize,
    /// Bytes per cell, cell header included.
    pub cell_bytes: usize,
}

impl InboxLayout {
    fn ring_bytes(&self) -> usize {
        self.cells * self.cell_bytes
    }

    fn total_bytes(&self) -> usize {
        HEADER_BYTES + self.senders * self.ring_bytes()
    }

    /// Largest frame one cell carries.
    pub fn frame_capacity(&self) -> usize {
        self.cell_bytes - CELL_HEADER
    }

    fn validate(&self) -> Result<(), SegmentError> {
        let ok = self.senders >= 1
            && self.cells >= 2
            && self.cell_bytes >= 256
            && self.cell_bytes.is_multiple_of(64)
            && self.cell_bytes <= u32::MAX as usize;
        if ok {
            Ok(())
        } else {
            Err(SegmentError::Layout(*self))
        }
    }
}

#[derive(Debug)]
pub enum SegmentError {
    Io(String, io::Error),
    Layout(InboxLayout),
    Mismatch(String),
}

impl fmt::Display for SegmentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SegmentError::Io(what, e) => write!(f, "shared memory: {what}: {e}"),
            SegmentError::Layout(l) => write!(
                f,
                "shared memory: invalid layout (senders {}, cells {}, cell bytes {}): need cells >= 2 and cell bytes a multiple of 64, >= 256",
                l.senders, l.cells, l.cell_bytes
            ),
            SegmentError::Mismatch(m) => write!(f, "shared memory: {m}"),
        }
    }
}

impl std::error::Error for SegmentError {}

/// A mapping of one inbox file.
struct Mapping {
    base: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain shared memory; all cross-process access goes through the
// cell state atomics, and the owning Inbox/Outbox serialise access within the process.
unsafe impl Send for Mapping {}

impl Mapping {
    fn map(path: &str, len: usize, create: bool) -> Result<Mapping, SegmentError> {
        let cpath = CString::new(path)
            .map_err(|_| SegmentError::Mismatch(format!("bad segment name {path:?}")))?;
        let flags = if create {
            libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC
        } else {
            libc::O_RDWR | libc::O_CLOEXEC
        };
        // SAFETY: FFI call with a valid NUL-terminated path.
        let fd = unsafe { libc::open(cpath.as_ptr(), flags, 0o600) };
        if fd < 0 {
            return Err(SegmentError::Io(
                format!("open {path}"),
                io::Error::last_os_error(),
            ));
        }
        let result = Self::map_fd(fd, path, len, create);
        // SAFETY: fd is a descriptor we opened; the mapping stays valid after close.
        unsafe { libc::close(fd) };
        result
    }

    fn map_fd(fd: i32, path: &str, len: usize, create: bool) -> Result<Mapping, SegmentError> {
        if create {
            // SAFETY: FFI call on our own descriptor.
            if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
                return Err(SegmentError::Io(
                    format!("resize {path} to {len} bytes"),
                    io::Error::last_os_error(),
                ));
            }
        } else {
            // SAFETY: zeroed stat is a valid out-parameter for fstat.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: FFI call on our own descriptor with a valid out-pointer.
            if unsafe { libc::fstat(fd, &mut st) } != 0 || (st.st_size as usize) < len {
                return Err(SegmentError::Mismatch(format!(
                    "{path} is {} bytes, expected {len}",
                    st.st_size
                )));
            }
        }
        // SAFETY: mapping a regular file of at least `len` bytes, shared, read-write.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(SegmentError::Io(
                format!("map {path}"),
                io::Error::last_os_error(),
            ));
        }
        Ok(Mapping {
            base: base as *mut u8,
            len,
        })
    }

    fn word(&self, offset: usize) -> &AtomicU32 {
        assert!(offset + 4 <= self.len && offset.is_multiple_of(4));
        // SAFETY: in bounds (checked above), 4-byte aligned (the mapping is page aligned),
        // and the memory is only ever accessed atomically at this offset.
        unsafe { AtomicU32::from_ptr(self.base.add(offset) as *mut u32) }
    }

    /// Starts moving the cache line at `offset` into this core's cache, without waiting.
    fn prefetch(&self, offset: usize) {
        assert!(offset < self.len);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is a hint with no architectural effect; the address is inside
        // the mapping (checked above).
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(self.base.add(offset) as *const i8)
        }
    }

    fn write_u64(&self, offset: usize, value: u64) {
        assert!(offset + 8 <= self.len);
        // SAFETY: in bounds; written only by the creator before the segment is published.
        unsafe { (self.base.add(offset) as *mut u64).write_unaligned(value) }
    }

    fn read_u64(&self, offset: usize) -> u64 {
        assert!(offset + 8 <= self.len);
        // SAFETY: in bounds; the header is immutable once published.
        unsafe { (self.base.add(offset) as *const u64).read_unaligned() }
    }

    /// The frame bytes of a cell, for the side that currently owns the cell.
    fn bytes(&self, offset: usize, len: usize) -> &[u8] {
        assert!(offset + len <= self.len);
        // SAFETY: in bounds; the cell protocol gives the caller exclusive ownership of
        // these bytes between the acquire of the state word and its release.
        unsafe { std::slice::from_raw_parts(self.base.add(offset), len) }
    }

    #[allow(clippy::mut_from_ref)]
    fn bytes_mut(&self, offset: usize, len: usize) -> &mut [u8] {
        assert!(offset + len <= self.len);
        // SAFETY: in bounds; the sender owns an EMPTY cell exclusively until it publishes
        // it, and &mut self on the Outbox prevents two writers in this process.
        unsafe { std::slice::from_raw_parts_mut(self.base.add(offset), len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the region mapped in `map_fd`.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

fn cell_offset(layout: &InboxLayout, sender: usize, index: usize) -> usize {
    HEADER_BYTES + sender * layout.ring_bytes() + index * layout.cell_bytes
}

/// The receiving side: this rank's own inbox.
pub struct Inbox {
    map: Mapping,
    layout: InboxLayout,
    path: String,
    heads: Vec<usize>,
    unlinked: bool,
}

impl Inbox {
    /// Creates the inbox file at `path` (a /dev/shm path) with the given layout.
    pub fn create(path: &str, layout: InboxLayout) -> Result<Inbox, SegmentError> {
        layout.validate()?;
        let map = Mapping::map(path, layout.total_bytes(), true)?;
        map.write_u64(0, MAGIC);
        map.write_u64(8, layout.senders as u64);
        map.write_u64(16, layout.cells as u64);
        map.write_u64(24, layout.cell_bytes as u64);
        map.write_u64(32, std::process::id() as u64);
        Ok(Inbox {
            map,
            layout,
            path: path.to_string(),
            heads: vec![0; layout.senders],
            unlinked: false,
        })
    }

    pub fn layout(&self) -> InboxLayout {
        self.layout
    }

    /// Removes the file name (the mapping stays); call once every sender has mapped it.
    pub fn unlink(&mut self) {
        if !self.unlinked {
            let _ = std::fs::remove_file(&self.path);
            self.unlinked = true;
        }
    }

    /// The frame at the head of `sender`'s ring, if one has arrived.
    pub fn peek(&self, sender: usize) -> Option<&[u8]> {
        let off = cell_offset(&self.layout, sender, self.heads[sender]);
        if self.map.word(off).load(Ordering::Acquire) != FULL {
            return None;
        }
        let len = self.map.word(off + 4).load(Ordering::Relaxed) as usize;
        let len = len.min(self.layout.frame_capacity());
        Some(self.map.bytes(off + CELL_HEADER, len))
    }

    /// Hands the head cell of `sender`'s ring back to the sender.
    pub fn pop(&mut self, sender: usize) {
        let off = cell_offset(&self.layout, sender, self.heads[sender]);
        self.map.word(off).store(EMPTY, Ordering::Release);
        self.heads[sender] = (self.heads[sender] + 1) % self.layout.cells;
    }

    /// Pops like [`Inbox::pop`] and tells whether the ring was full, the only case in which
    /// the sender can be asleep waiting for this cell. The pop is a read-modify-write, so
    /// the check of the previous cell cannot be ordered before it: if the sender filled
    /// the ring, the previous cell (its last write) is still full, since cells are freed
    /// in order.
    pub fn pop_was_full(&mut self, sender: usize) -> bool {
        let off = cell_offset(&self.layout, sender, self.heads[sender]);
        self.map.word(off).swap(EMPTY, Ordering::SeqCst);
        let previous = (self.heads[sender] + self.layout.cells - 1) % self.layout.cells;
        self.heads[sender] = (self.heads[sender] + 1) % self.layout.cells;
        let prev_off = cell_offset(&self.layout, sender, previous);
        self.map.word(prev_off).load(Ordering::SeqCst) == FULL
    }

    /// Announces that this rank is about to sleep. Callers must poll every ring once more
    /// after this before sleeping: a sender either sees the flag or its frame is seen.
    pub fn set_sleeping(&self, sleeping: bool) {
        self.map
            .word(SLEEPING_OFFSET)
            .swap(sleeping as u32, Ordering::SeqCst);
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        self.unlink();
    }
}

/// The sending side: a local peer's inbox, mapped to write into our ring of it.
pub struct Outbox {
    map: Mapping,
    layout: InboxLayout,
    ring: usize,
    tail: usize,
}

impl Outbox {
    /// Maps the inbox at `path` (created by the peer) to send as local rank `ring`.
    pub fn open(path: &str, layout: InboxLayout, ring: usize) -> Result<Outbox, SegmentError> {
        layout.validate()?;
        let map = Mapping::map(path, layout.total_bytes(), false)?;
        let found = (
            map.read_u64(0),
            map.read_u64(8),
            map.read_u64(16),
            map.read_u64(24),
        );
        let expected = (
            MAGIC,
            layout.senders as u64,
            layout.cells as u64,
            layout.cell_bytes as u64,
        );
        if found != expected {
            return Err(SegmentError::Mismatch(format!(
                "{path}: header {found:x?} does not match the expected layout {expected:x?}"
            )));
        }
        if ring >= layout.senders {
            return Err(SegmentError::Mismatch(format!(
                "{path}: sender index {ring} out of range (senders {})",
                layout.senders
            )));
        }
        Ok(Outbox {
            map,
            layout,
            ring,
            tail: 0,
        })
    }

    /// Process id of the inbox owner (for cross-memory attach).
    pub fn owner_pid(&self) -> u32 {
        self.map.read_u64(32) as u32
    }

    pub fn frame_capacity(&self) -> usize {
        self.layout.frame_capacity()
    }

    /// The next free cell, if the receiver has consumed it.
    pub fn try_reserve(&mut self) -> Option<CellWriter<'_>> {
        let off = cell_offset(&self.layout, self.ring, self.tail);
        if self.map.word(off).load(Ordering::Acquire) != EMPTY {
            return None;
        }
        Some(CellWriter { outbox: self, off })
    }

    /// Writes one frame made of `parts` if a cell is free. Returns None when the ring is
    /// full, else whether the receiver is asleep and must be woken.
    pub fn try_send(&mut self, parts: &[&[u8]]) -> Option<bool> {
        let mut cell = self.try_reserve()?;
        let buf = cell.buf();
        let mut at = 0;
        for p in parts {
            buf[at..at + p.len()].copy_from_slice(p);
            at += p.len();
        }
        Some(cell.commit(at))
    }

    fn receiver_sleeping(&self) -> bool {
        self.map.word(SLEEPING_OFFSET).load(Ordering::SeqCst) != 0
    }

    /// Whether the owner of this inbox (our peer) is asleep. A receiver that handed cells
    /// back calls it after a SeqCst fence: a sender that found its ring full and went to
    /// sleep must then be woken, or it would wait for its sleep timeout.
    pub fn peer_sleeping(&self) -> bool {
        fence(Ordering::SeqCst);
        self.receiver_sleeping()
    }
}

/// A reserved cell: fill [`CellWriter::buf`], then [`CellWriter::commit`] the length.
pub struct CellWriter<'a> {
    outbox: &'a mut Outbox,
    off: usize,
}

impl CellWriter<'_> {
    pub fn buf(&mut self) -> &mut [u8] {
        self.outbox
            .map
            .bytes_mut(self.off + CELL_HEADER, self.outbox.layout.frame_capacity())
    }

    /// Publishes the frame; returns whether the receiver is asleep and must be woken.
    pub fn commit(self, len: usize) -> bool {
        assert!(len <= self.outbox.layout.frame_capacity());
        let map = &self.outbox.map;
        map.word(self.off + 4).store(len as u32, Ordering::Relaxed);
        // A read-modify-write publishes the frame and orders the load of the sleeping
        // flag after it (a locked instruction: cheaper than a store plus a full fence).
        map.word(self.off).swap(FULL, Ordering::SeqCst);
        self.outbox.tail = (self.outbox.tail + 1) % self.outbox.layout.cells;
        // The receiver last wrote the next cell (handing it back), so reading its state
        // word in the next send's reserve would miss the cache and stall that send for a
        // cross-core transfer; asking for the line now overlaps the transfer with
        // whatever the caller does until then (in a ping-pong: waiting for the reply).
        map.prefetch(cell_offset(
            &self.outbox.layout,
            self.outbox.ring,
            self.outbox.tail,
        ));
        self.outbox.receiver_sleeping()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(tag: &str) -> String {
        format!("/dev/shm/crossmpi-test-{}-{tag}", std::process::id())
    }

    const LAYOUT: InboxLayout = InboxLayout {
        senders: 2,
        cells: 4,
        cell_bytes: 256,
    };

    #[test]
    fn frames_arrive_in_order_and_the_ring_fills() {
        let p = path("order");
        let mut inbox = Inbox::create(&p, LAYOUT).unwrap();
        let mut out = Outbox::open(&p, LAYOUT, 1).unwrap();
        assert_eq!(out.owner_pid(), std::process::id());
        for i in 0..4u8 {
            assert_eq!(out.try_send(&[&[i], &[i, i]]), Some(false));
        }
        assert_eq!(out.try_send(&[&[9]]), None, "ring of 4 cells is full");
        assert!(inbox.peek(0).is_none(), "nothing from sender 0");
        for i in 0..4u8 {
            assert_eq!(inbox.peek(1).unwrap(), &[i, i, i]);
            inbox.pop(1);
        }
        assert!(inbox.peek(1).is_none());
        assert_eq!(out.try_send(&[&[7]]), Some(false), "cells were handed back");
    }

    #[test]
    fn a_pop_tells_whether_the_ring_was_full() {
        let p = path("full");
        let mut inbox = Inbox::create(&p, LAYOUT).unwrap();
        let mut out = Outbox::open(&p, LAYOUT, 0).unwrap();
        out.try_send(&[b"a"]).unwrap();
        assert!(!inbox.pop_was_full(0), "one frame in a ring of four");
        for _ in 0..4 {
            out.try_send(&[b"b"]).unwrap();
        }
        assert!(inbox.pop_was_full(0), "the ring was full");
        assert!(!inbox.pop_was_full(0));
    }

    #[test]
    fn a_sleeping_receiver_is_reported_to_the_sender() {
        let p = path("sleep");
        let inbox = Inbox::create(&p, LAYOUT).unwrap();
        let mut out = Outbox::open(&p, LAYOUT, 0).unwrap();
        inbox.set_sleeping(true);
        assert_eq!(out.try_send(&[b"x"]), Some(true));
        inbox.set_sleeping(false);
        assert_eq!(out.try_send(&[b"y"]), Some(false));
    }

    #[test]
    fn a_sleeping_sender_is_visible_to_its_receiver() {
        // Rank A's inbox, mapped by rank B as its outbox to A: B sees A's sleeping flag.
        let p = path("peer-sleep");
        let inbox_a = Inbox::create(&p, LAYOUT).unwrap();
        let to_a = Outbox::open(&p, LAYOUT, 1).unwrap();
        assert!(!to_a.peer_sleeping());
        inbox_a.set_sleeping(true);
        assert!(to_a.peer_sleeping());
    }

    #[test]
    fn mismatched_layouts_and_bad_layouts_are_refused() {
        let p = path("mismatch");
        let _inbox = Inbox::create(&p, LAYOUT).unwrap();
        let other = InboxLayout { cells: 8, ..LAYOUT };
        assert!(matches!(
            Outbox::open(&p, other, 0),
            Err(SegmentError::Mismatch(_))
        ));
        assert!(matches!(
            Outbox::open(&p, LAYOUT, 2),
            Err(SegmentError::Mismatch(_))
        ));
        let bad = InboxLayout {
            cell_bytes: 100,
            ..LAYOUT
        };
        assert!(matches!(
            Inbox::create(&path("bad"), bad),
            Err(SegmentError::Layout(_))
        ));
    }

    #[test]
    fn the_file_disappears_after_unlink_but_the_mapping_works() {
        let p = path("unlink");
        let mut inbox = Inbox::create(&p, LAYOUT).unwrap();
        let mut out = Outbox::open(&p, LAYOUT, 0).unwrap();
        inbox.unlink();
        assert!(!std::path::Path::new(&p).exists());
        out.try_send(&[b"still"]).unwrap();
        assert_eq!(inbox.peek(0).unwrap(), b"still");
    }
}
