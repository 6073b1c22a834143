//! Inbox segments: a header page, then one ring of cells per local sender.
//!
//! ```text
//! offset 0      header: magic, senders, cells, cell_bytes, owner pid
//! offset 64     sleeping flag (own cache line: written by the owner, read by senders)
//! offset 4096   ring of sender 0: cells x cell_bytes
//!               ring of sender 1 ...
//! cell:         state (u32: 0 empty, n >= 1 full with n frames) | length of the first
//!               frame (u32) | its bytes | more frames, each at an 8-byte boundary:
//!               length (u32) | unused (u32) | bytes
//! ```
//! The cell's state word is the only synchronisation. The sender writes a frame into an
//! empty cell and publishes it with state 1; the receiver reads it and hands the cell
//! back with state 0 (a compare-and-swap from the count it read). So a small message
//! costs one cache line each way, the line holding state, length and bytes.
//!
//! When every cell is full (the receiver has fallen behind: a broadcast root running
//! ahead of its children, a window of small sends), the sender appends frames behind
//! those of the cell it filled last, publishing each by raising the count with a
//! compare-and-swap from n to n + 1. Exactly one of the two swaps on a cell wins: a
//! receiver that read all n frames first takes the cell back, and the sender's frame
//! then goes into the next cell, which is empty by then. A ring of 16 cells thus holds
//! hundreds of small messages for a slow receiver, without costing a receiver that
//! keeps up anything.

use std::ffi::CString;
use std::fmt;
use std::io;
use std::sync::atomic::{fence, AtomicU32, Ordering};

const MAGIC: u64 = 0x6372_6f73_736d_7069; // "crossmpi"
const HEADER_BYTES: usize = 4096;
const SLEEPING_OFFSET: usize = 64;
/// The state word and the first frame's length.
const CELL_HEADER: usize = 8;
/// The length word (and padding) before each frame appended behind the first.
const FRAME_PREFIX: usize = 8;
const EMPTY: u32 = 0;

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

    /// Asks for the cache line at `offset` for writing (exclusively), without waiting:
    /// a line this core is about to read and then write would otherwise cross twice,
    /// shared for the read and once more to become writable.
    fn prefetch_for_write(&self, offset: usize) {
        assert!(offset < self.len);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is a hint with no architectural effect; the address is inside
        // the mapping (checked above). `prefetchw` itself, since `_mm_prefetch` with the
        // write hint compiles to a plain read prefetch unless the crate is built for the
        // `prfchw` feature; processors without it treat the opcode as a no-op.
        unsafe {
            std::arch::asm!(
                "prefetchw [{0}]",
                in(reg) self.base.add(offset),
                options(nostack, readonly, preserves_flags)
            );
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
        // SAFETY: in bounds; the cell protocol gives the receiver the bytes of every frame
        // the state word counts, from its acquire until the cell goes back.
        unsafe { std::slice::from_raw_parts(self.base.add(offset), len) }
    }

    #[allow(clippy::mut_from_ref)]
    fn bytes_mut(&self, offset: usize, len: usize) -> &mut [u8] {
        assert!(offset + len <= self.len);
        // SAFETY: in bounds; the sender owns an EMPTY cell exclusively until it publishes
        // it, and the bytes behind the last frame of a full cell until it appends there;
        // &mut self on the Outbox prevents two writers in this process.
        unsafe { std::slice::from_raw_parts_mut(self.base.add(offset), len) }
    }
}

impl Mapping {
    /// Copies `len` bytes from offset `from` to offset `to` of the mapping.
    fn copy_within(&self, from: usize, to: usize, len: usize) {
        assert!(from + len <= self.len && to + len <= self.len);
        // SAFETY: both ranges are in bounds (checked above) and the sender's own: the
        // source behind the frames of a cell the receiver took back, the target an empty
        // cell; they lie in different cells, so they do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(self.base.add(from), self.base.add(to), len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the region mapped in `map_fd`.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// The cells of one sender's ring, as offsets in the mapping.
#[derive(Clone, Copy)]
struct Ring {
    first: usize,
    end: usize,
    cell_bytes: usize,
}

impl Ring {
    fn of(layout: &InboxLayout, sender: usize) -> Ring {
        let first = HEADER_BYTES + sender * layout.ring_bytes();
        Ring {
            first,
            end: first + layout.ring_bytes(),
            cell_bytes: layout.cell_bytes,
        }
    }

    /// The cell after the one at `cell`.
    fn next(&self, cell: usize) -> usize {
        let next = cell + self.cell_bytes;
        if next == self.end {
            self.first
        } else {
            next
        }
    }

    /// The cell before the one at `cell`.
    fn previous(&self, cell: usize) -> usize {
        if cell == self.first {
            self.end - self.cell_bytes
        } else {
            cell - self.cell_bytes
        }
    }
}

/// The receiving side: this rank's own inbox.
pub struct Inbox {
    map: Mapping,
    layout: InboxLayout,
    path: String,
    /// Where this receiver stands in each sender's ring.
    heads: Vec<Head>,
    unlinked: bool,
}

/// A receiver's place in one ring: the ring, the cell it reads (its offset in the
/// mapping), how many of its frames it read and how many it last saw counted, the offset
/// in the cell of the next frame behind the first, and the length of the frame last
/// peeked.
#[derive(Clone, Copy)]
struct Head {
    ring: Ring,
    cell: usize,
    read: u32,
    seen: u32,
    at: usize,
    len: usize,
}

impl Head {
    fn at_cell(ring: Ring, cell: usize) -> Head {
        Head {
            ring,
            cell,
            read: 0,
            seen: 0,
            at: 0,
            len: 0,
        }
    }

    /// Moves past the frame peeked last (behind which another frame waits).
    fn step(&mut self) {
        self.at = if self.read == 1 {
            next_frame(CELL_HEADER + self.len)
        } else {
            next_frame(self.at + FRAME_PREFIX + self.len)
        };
    }
}

/// The offset at which the frame after one ending at `end` starts.
fn next_frame(end: usize) -> usize {
    end.next_multiple_of(8)
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
            heads: (0..layout.senders)
                .map(|sender| {
                    let ring = Ring::of(&layout, sender);
                    Head::at_cell(ring, ring.first)
                })
                .collect(),
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
    pub fn peek(&mut self, sender: usize) -> Option<&[u8]> {
        let h = &mut self.heads[sender];
        let off = h.cell;
        if h.read == h.seen {
            let n = self.map.word(off).load(Ordering::Acquire);
            if n <= h.read {
                return None;
            }
            h.seen = n;
        }
        // The sender wrote the length before publishing the frame (acquired above); a
        // length running past the cell would be a corrupt segment, cut to the cell.
        let (len_at, data) = if h.read == 0 {
            (off + 4, off + CELL_HEADER)
        } else {
            (off + h.at, off + h.at + FRAME_PREFIX)
        };
        let len = self.map.word(len_at).load(Ordering::Relaxed) as usize;
        h.len = len.min(off + h.ring.cell_bytes - data);
        let len = h.len;
        Some(self.map.bytes(data, len))
    }

    /// Asks for the cell at the head of `sender`'s ring for writing (see
    /// [`Inbox::pop`]'s hand-back), for a receiver that expects its next frame there soon
    /// and has nothing to wait for meanwhile.
    pub fn prefetch_head(&self, sender: usize) {
        self.map.prefetch_for_write(self.heads[sender].cell);
    }

    /// Consumes the frame [`Inbox::peek`] returned; once every frame of the cell is read,
    /// hands the cell back, unless the sender appended another meanwhile. Returns whether
    /// the cell went back.
    pub fn pop(&mut self, sender: usize) -> bool {
        let h = &mut self.heads[sender];
        h.read += 1;
        if h.read < h.seen {
            h.step();
            return false;
        }
        // A compare-and-swap, not a store: the sender may just be appending a frame to
        // this cell; if its swap came first, that frame is read before the cell goes back.
        let state = self.map.word(h.cell);
        match state.compare_exchange(h.seen, EMPTY, Ordering::SeqCst, Ordering::Acquire) {
            Ok(_) => {
                *h = Head::at_cell(h.ring, h.ring.next(h.cell));
                true
            }
            Err(n) => {
                h.seen = n;
                h.step();
                false
            }
        }
    }

    /// Pops like [`Inbox::pop`] and tells whether the ring was full, the only case in which
    /// the sender can be asleep waiting for room. The hand-back is a read-modify-write, so
    /// the check of the previous cell cannot be ordered before it: if the sender filled
    /// the ring, the previous cell (its last write) is still full, since cells are freed
    /// in order.
    pub fn pop_was_full(&mut self, sender: usize) -> bool {
        let h = self.heads[sender];
        if !self.pop(sender) {
            return false;
        }
        let previous = h.ring.previous(h.cell);
        self.map.word(previous).load(Ordering::SeqCst) != EMPTY
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
    cells: Ring,
    /// The next cell to fill from empty (its offset in the mapping).
    tail: usize,
    /// The cell filled last: its offset, where in it a frame appended behind its frames
    /// would start, and how many frames it holds (its state word, unless the receiver
    /// took it back).
    last: Option<(usize, usize, u32)>,
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
            cells: Ring::of(&layout, ring),
            tail: Ring::of(&layout, ring).first,
            last: None,
        })
    }

    /// Process id of the inbox owner (for cross-memory attach).
    pub fn owner_pid(&self) -> u32 {
        self.map.read_u64(32) as u32
    }

    pub fn frame_capacity(&self) -> usize {
        self.layout.frame_capacity()
    }

    /// Room for a frame of `len` bytes (at most [`Outbox::frame_capacity`]): the next
    /// cell if the receiver has handed it back, else, when the ring is full, behind the
    /// frames of the cell filled last if they leave room. None when neither.
    pub fn try_reserve(&mut self, len: usize) -> Option<CellWriter<'_>> {
        if self.map.word(self.tail).load(Ordering::Acquire) == EMPTY {
            let cell = self.tail;
            return Some(CellWriter {
                outbox: self,
                cell,
                at: 4,
                append: None,
            });
        }
        let (cell, at, frames) = self.last?;
        (at + FRAME_PREFIX + len <= self.layout.cell_bytes).then_some(CellWriter {
            outbox: self,
            cell,
            at,
            append: Some(frames),
        })
    }

    /// Writes one frame made of `parts` if there is room. Returns None when the ring is
    /// full, else whether the receiver is asleep and must be woken.
    pub fn try_send(&mut self, parts: &[&[u8]]) -> Option<bool> {
        let len = parts.iter().map(|p| p.len()).sum();
        let mut cell = self.try_reserve(len)?;
        let buf = cell.buf();
        let mut at = 0;
        for p in parts {
            buf[at..at + p.len()].copy_from_slice(p);
            at += p.len();
        }
        Some(cell.commit(at))
    }

    /// Publishes the frame of `len` bytes written into the tail cell.
    fn publish_fresh(&mut self, len: usize) -> bool {
        let off = self.tail;
        self.map.word(off + 4).store(len as u32, Ordering::Relaxed);
        // A read-modify-write publishes the frame and orders the load of the sleeping
        // flag after it (a locked instruction: cheaper than a store plus a full fence).
        self.map.word(off).swap(1, Ordering::SeqCst);
        self.last = Some((off, next_frame(CELL_HEADER + len), 1));
        self.tail = self.cells.next(off);
        // The receiver last wrote the next cell (handing it back), so reading its state
        // word in the next send's reserve would miss the cache and stall that send for a
        // cross-core transfer; asking for the line now overlaps the transfer with
        // whatever the caller does until then (in a ping-pong: waiting for the reply).
        self.map.prefetch(self.tail);
        self.receiver_sleeping()
    }

    /// Asks for the next cell to fill for writing, for a sender about to send again
    /// (a broadcast root): [`Outbox::publish_fresh`] asks for it only for reading.
    pub fn prefetch_tail(&self) {
        self.map.prefetch_for_write(self.tail);
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

/// Reserved room for one frame: fill [`CellWriter::buf`], then [`CellWriter::commit`]
/// the length.
pub struct CellWriter<'a> {
    outbox: &'a mut Outbox,
    /// The cell's offset in the mapping.
    cell: usize,
    /// Offset in the cell of the frame's length word.
    at: usize,
    /// Appending behind the frames of a full cell: their count.
    append: Option<u32>,
}

impl CellWriter<'_> {
    /// Offset in the cell of the frame's bytes.
    fn data(&self) -> usize {
        self.at
            + if self.append.is_some() {
                FRAME_PREFIX
            } else {
                4
            }
    }

    /// The frame's bytes: from its start to the end of the cell.
    pub fn buf(&mut self) -> &mut [u8] {
        let data = self.data();
        let o = &self.outbox;
        o.map.bytes_mut(self.cell + data, o.cells.cell_bytes - data)
    }

    /// Publishes the frame; returns whether the receiver is asleep and must be woken.
    pub fn commit(self, len: usize) -> bool {
        let data = self.data();
        let o = self.outbox;
        assert!(data + len <= o.cells.cell_bytes);
        let Some(n) = self.append else {
            return o.publish_fresh(len);
        };
        let off = self.cell;
        o.map
            .word(off + self.at)
            .store(len as u32, Ordering::Relaxed);
        // A read-modify-write publishes the frame and orders the load of the sleeping
        // flag after it; it fails only when the receiver read the n frames and took the
        // cell back first.
        let state = o.map.word(off);
        if state
            .compare_exchange(n, n + 1, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok()
        {
            o.last = Some((self.cell, next_frame(data + len), n + 1));
            return o.receiver_sleeping();
        }
        // The receiver has read every frame published so far, so the tail cell is empty
        // again: the frame moves there.
        let tail = o.tail;
        assert_eq!(o.map.word(tail).load(Ordering::Acquire), EMPTY);
        o.map.copy_within(off + data, tail + CELL_HEADER, len);
        o.publish_fresh(len)
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

    /// A frame that fills a cell of [`LAYOUT`] but for one small frame behind it.
    const BIG: [u8; 200] = [5; 200];

    #[test]
    fn frames_arrive_in_order_and_the_ring_fills() {
        let p = path("order");
        let mut inbox = Inbox::create(&p, LAYOUT).unwrap();
        let mut out = Outbox::open(&p, LAYOUT, 1).unwrap();
        assert_eq!(out.owner_pid(), std::process::id());
        for i in 0..4u8 {
            assert_eq!(out.try_send(&[&[i], &BIG]), Some(false));
        }
        assert_eq!(out.try_send(&[&BIG]), None, "ring of 4 cells is full");
        assert!(inbox.peek(0).is_none(), "nothing from sender 0");
        for i in 0..4u8 {
            let f = inbox.peek(1).unwrap();
            assert_eq!((f[0], &f[1..]), (i, &BIG[..]));
            assert!(inbox.pop(1), "one frame per cell: it goes back");
        }
        assert!(inbox.peek(1).is_none());
        assert_eq!(out.try_send(&[&[7]]), Some(false), "cells were handed back");
        assert_eq!(inbox.peek(1).unwrap(), &[7]);
    }

    #[test]
    fn a_full_ring_takes_small_frames_behind_the_last_one() {
        let p = path("append");
        let mut inbox = Inbox::create(&p, LAYOUT).unwrap();
        let mut out = Outbox::open(&p, LAYOUT, 0).unwrap();
        for i in 0..4u8 {
            out.try_send(&[&[i; 20]]).unwrap();
        }
        // Cell 3 holds 20 bytes at 8..28; frames of 20 bytes take 28 more each.
        for i in 4..11u8 {
            assert_eq!(out.try_send(&[&[i; 20]]), Some(false), "frame {i} appended");
        }
        assert_eq!(out.try_send(&[&[0; 20]]), None, "cell 3 is full too");
        for i in 0..11u8 {
            assert_eq!(inbox.peek(0).unwrap(), &[i; 20]);
            assert_eq!(inbox.pop(0), i < 3 || i == 10, "frame {i}");
        }
        assert!(inbox.peek(0).is_none());
        assert_eq!(out.try_send(&[b"next"]), Some(false));
        assert_eq!(inbox.peek(0).unwrap(), b"next");
    }

    #[test]
    fn a_frame_appended_as_its_cell_goes_back_moves_to_the_next_cell() {
        let p = path("race");
        let mut inbox = Inbox::create(&p, LAYOUT).unwrap();
        let mut out = Outbox::open(&p, LAYOUT, 0).unwrap();
        for i in 0..4u8 {
            out.try_send(&[&[i]]).unwrap();
        }
        let mut late = out.try_reserve(6).unwrap();
        assert!(late.append.is_some(), "the ring is full: append");
        late.buf()[..6].copy_from_slice(b"behind");
        // The receiver reads the four frames published and takes every cell back...
        for i in 0..4u8 {
            assert_eq!(inbox.peek(0).unwrap(), &[i]);
            assert!(inbox.pop(0));
        }
        // ...so the append loses its swap and the frame goes into the next cell.
        assert!(!late.commit(6), "the receiver is awake");
        assert_eq!(inbox.peek(0).unwrap(), b"behind");
        assert!(inbox.pop(0));
        out.try_send(&[b"after"]).unwrap();
        assert_eq!(inbox.peek(0).unwrap(), b"after");
    }

    #[test]
    fn a_receiver_behind_a_fast_sender_sees_every_frame_in_order() {
        let p = path("threads");
        let layout = InboxLayout {
            senders: 1,
            cells: 4,
            cell_bytes: 1024,
        };
        let mut inbox = Inbox::create(&p, layout).unwrap();
        let mut out = Outbox::open(&p, layout, 0).unwrap();
        const FRAMES: u32 = 300_000;
        let sender = std::thread::spawn(move || {
            for i in 0..FRAMES {
                // Lengths 4..886, mostly small: frames join full cells or take one alone.
                let len = 4
                    + (i.wrapping_mul(2_654_435_761) % 89) as usize
                        * if i % 16 == 0 { 10 } else { 1 };
                let mut frame = vec![(i % 251) as u8; len];
                frame[..4].copy_from_slice(&i.to_le_bytes());
                while out.try_send(&[&frame]).is_none() {
                    std::hint::spin_loop();
                }
            }
        });
        let mut next = 0u32;
        while next < FRAMES {
            let Some(f) = inbox.peek(0) else {
                std::hint::spin_loop();
                continue;
            };
            assert_eq!(u32::from_le_bytes(f[..4].try_into().unwrap()), next);
            assert!(
                f[4..].iter().all(|&b| b == (next % 251) as u8),
                "frame {next}"
            );
            inbox.pop(0);
            next += 1;
        }
        sender.join().unwrap();
        assert!(inbox.peek(0).is_none());
    }

    #[test]
    fn a_pop_tells_whether_the_ring_was_full() {
        let p = path("full");
        let mut inbox = Inbox::create(&p, LAYOUT).unwrap();
        let mut out = Outbox::open(&p, LAYOUT, 0).unwrap();
        out.try_send(&[b"a"]).unwrap();
        inbox.peek(0).unwrap();
        assert!(!inbox.pop_was_full(0), "one frame in a ring of four");
        for _ in 0..4 {
            out.try_send(&[&BIG]).unwrap();
        }
        out.try_send(&[b"c"]).unwrap();
        inbox.peek(0).unwrap();
        assert!(inbox.pop_was_full(0), "the ring was full");
        for _ in 0..2 {
            inbox.peek(0).unwrap();
            assert!(!inbox.pop_was_full(0));
        }
        inbox.peek(0).unwrap();
        assert!(
            !inbox.pop_was_full(0),
            "a frame read, another behind it in the cell"
        );
        inbox.peek(0).unwrap();
        assert!(
            !inbox.pop_was_full(0),
            "the last cell goes back; the one before is empty"
        );
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
