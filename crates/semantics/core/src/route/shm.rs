//! The shared-memory route: this rank's inbox, outboxes into each local peer's inbox,
//! and doorbells.

use crate::header::{Frame, Head, HEAD_LEN};
use crate::proto::{Payload, State};
use crate::request::ReqKind;
use crate::userbuf::UserBuf;
use crossmpi_shm::doorbell::{Doorbell, Ringer};
use crossmpi_shm::{Inbox, Outbox};

pub struct ShmRoute {
    inbox: Inbox,
    /// Outboxes by local index (None for this rank).
    outboxes: Vec<Option<Outbox>>,
    /// World rank of each local index.
    pub local_world: Vec<u32>,
    pub my_local: usize,
    doorbell: Doorbell,
    ringer: Ringer,
    bells: Vec<String>,
}

/// Frames taken from one ring per poll, so one busy sender cannot starve the others.
const POLL_BUDGET: usize = 32;

impl ShmRoute {
    pub fn new(
        inbox: Inbox,
        outboxes: Vec<Option<Outbox>>,
        local_world: Vec<u32>,
        my_local: usize,
        doorbell: Doorbell,
        bells: Vec<String>,
    ) -> std::io::Result<ShmRoute> {
        Ok(ShmRoute {
            inbox,
            outboxes,
            local_world,
            my_local,
            doorbell,
            ringer: Ringer::new()?,
            bells,
        })
    }

    pub fn frame_capacity(&self) -> usize {
        self.inbox.layout().frame_capacity()
    }

    /// Unlinks the inbox file once every local peer has mapped it.
    pub fn unlink(&mut self) {
        self.inbox.unlink();
    }

    pub fn doorbell_fd(&self) -> i32 {
        self.doorbell.fd()
    }

    pub fn set_sleeping(&self, sleeping: bool) {
        self.inbox.set_sleeping(sleeping);
        if !sleeping {
            self.doorbell.drain();
        }
    }

    /// Delivers arrived frames to the protocol. Returns whether any arrived.
    pub fn poll(&mut self, st: &mut State) -> bool {
        let mut any = false;
        for local in 0..self.local_world.len() {
            if local == self.my_local {
                continue;
            }
            let from = self.local_world[local];
            let mut popped = 0;
            while popped < POLL_BUDGET {
                let Some(frame) = self.inbox.peek(local) else {
                    break;
                };
                match Head::decode(frame) {
                    Ok(head) => st.on_frame(from, &head, &frame[HEAD_LEN..]),
                    Err(e) => crate::fatal(&format!(
                        "corrupt shared-memory frame from rank {from}: {e}"
                    )),
                }
                self.inbox.pop(local);
                popped += 1;
            }
            // The sender may sleep waiting for the cells just handed back.
            if popped > 0
                && self.outboxes[local]
                    .as_ref()
                    .is_some_and(|o| o.peer_sleeping())
            {
                self.wake(local);
            }
            any |= popped > 0;
        }
        any
    }

    /// Prepares the next message of a stream from local peer `local`: asks for the cell
    /// it will arrive in (see [`Inbox::prefetch_head`]).
    pub fn expect_from(&self, local: usize) {
        self.inbox.prefetch_head(local);
    }

    /// Prepares the next message of a stream to local peer `local`: asks for the cell it
    /// will go into (see [`Outbox::prefetch_tail`]).
    pub fn expect_to(&self, local: usize) {
        if let Some(out) = self.outboxes[local].as_ref() {
            out.prefetch_tail();
        }
    }

    /// Offers the frame at the head of local peer `local`'s ring to `take`, and consumes
    /// it if `take` accepts it (a blocking receive's fast path).
    pub fn take_head<R>(
        &mut self,
        local: usize,
        take: impl FnOnce(&Head, &[u8]) -> Option<R>,
    ) -> Option<R> {
        let frame = self.inbox.peek(local)?;
        let head = Head::decode(frame).ok()?;
        let r = take(&head, &frame[HEAD_LEN..])?;
        // Only a sender that filled the ring can be asleep waiting for this cell.
        if self.inbox.pop_was_full(local)
            && self.outboxes[local]
                .as_ref()
                .is_some_and(|o| o.peer_sleeping())
        {
            self.wake(local);
        }
        Some(r)
    }

    /// Reserves room for a frame of `len` bytes in local peer `local`'s ring, fills it
    /// with `write` (which returns the frame length, at most `len`) and publishes it.
    /// None when the ring is full; else whether the receiver sleeps and must be woken.
    fn publish(
        &mut self,
        local: usize,
        len: usize,
        write: impl FnOnce(&mut [u8]) -> usize,
    ) -> Option<bool> {
        let mut cell = self.outboxes[local].as_mut()?.try_reserve(len)?;
        let len = write(&mut cell.buf()[..len]);
        Some(cell.commit(len))
    }

    fn wake(&self, local: usize) {
        if let Err(e) = self.ringer.ring(&self.bells[local]) {
            crate::fatal(&format!(
                "cannot wake local rank {}: {e}",
                self.local_world[local]
            ));
        }
    }

    /// Writes one whole frame at once if a cell is free (the blocking-send fast path).
    pub fn write_now(&mut self, local: usize, head: &Head, buf: &UserBuf) -> bool {
        let len = buf.bytes() as usize;
        let wake = self.publish(local, HEAD_LEN + len, |cell| {
            cell[..HEAD_LEN].copy_from_slice(&head.encode());
            buf.pack_into(0, &mut cell[HEAD_LEN..HEAD_LEN + len]);
            HEAD_LEN + len
        });
        if wake == Some(true) {
            self.wake(local);
        }
        wake.is_some()
    }

    /// Writes the frames queued for local peer `local` while cells are free.
    pub fn flush(&mut self, st: &mut State, local: usize) {
        let w = self.local_world[local] as usize;
        let mut wake = false;
        let chunk = (self.frame_capacity() - HEAD_LEN) as u64;
        while let Some(front) = st.peers[w].queue.front_mut() {
            let requests = &st.requests;
            let mut sent = 0;
            let mut finished = false;
            let need = HEAD_LEN
                + match &front.payload {
                    Payload::None => 0,
                    Payload::Owned(v) => v.len(),
                    Payload::Send { len, .. } => (*len).min(chunk) as usize,
                };
            let published = self.publish(local, need, |cell| {
                let room = cell.len() - HEAD_LEN;
                cell[..HEAD_LEN].copy_from_slice(&front.head.encode());
                let (n, done) = match &mut front.payload {
                    Payload::None => (0, true),
                    Payload::Owned(v) => {
                        cell[HEAD_LEN..HEAD_LEN + v.len()].copy_from_slice(v);
                        (v.len(), true)
                    }
                    Payload::Send { req, offset, len } => {
                        let n = (*len).min(room as u64) as usize;
                        if let Some(ReqKind::Send(s)) = requests.get(*req).map(|r| &r.kind) {
                            s.buf.pack_into(*offset, &mut cell[HEAD_LEN..HEAD_LEN + n]);
                        }
                        *offset += n as u64;
                        *len -= n as u64;
                        (n, *len == 0)
                    }
                };
                sent = n;
                finished = done;
                HEAD_LEN + n
            });
            let Some(w_) = published else {
                break;
            };
            wake |= w_;
            if finished {
                let done = st.peers[w].queue.pop_front().and_then(|f| f.on_written);
                if let Some(req) = done {
                    st.frame_written(req);
                }
            } else if let Some(front) = st.peers[w].queue.front_mut() {
                front.head.credit = 0;
                if let Frame::Data { offset, .. } = &mut front.head.frame {
                    *offset += sent as u64;
                }
            }
        }
        if wake {
            self.wake(local);
        }
    }
}
