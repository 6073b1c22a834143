//! The target side: requests arriving on a window's private context are taken from the
//! unexpected queue by the progress engine, received whole, and applied in arrival order
//! (so accumulates to one element are atomic and ordered, as MPI requires). Lock requests
//! wait in a queue until they can be granted; an origin does not wait for the grant
//! before its operations, so those that arrive while its lock waits are held, and
//! applied in order once it is granted.

use super::atomic;
use super::layout;
use super::wire::{Head, Kind, Request};
use super::{Memory, Window, TAG_DATA, TAG_REQ};
use crate::request::{SendMode, ANY_SOURCE};
use crate::runtime::Runtime;
use crate::userbuf;
use crossmpi_datatype::op::{self, Op};
use std::collections::{HashMap, VecDeque};

/// A request being received.
pub(super) struct Incoming {
    req: crate::request::ReqId,
    source: i32,
    msg: Vec<u8>,
}

/// The data of a streamed put being received (into the window, or into `scratch` when
/// the range is not window memory), acknowledged once it is in.
pub(super) struct Landing {
    req: crate::request::ReqId,
    origin: i32,
    reply_tag: i32,
    _scratch: Vec<u8>,
}

/// The window's lock as its target keeps it.
#[derive(Default)]
pub(super) struct LockState {
    exclusive: bool,
    shared: u32,
    /// (origin, exclusive, reply tag) of requests not yet granted, in arrival order.
    waiting: VecDeque<(i32, bool, i32)>,
    /// Requests of origins whose lock waits (or was granted and they are still to be
    /// applied), in arrival order.
    held: HashMap<i32, VecDeque<Vec<u8>>>,
    /// Origins granted a lock while they had requests held.
    granted: VecDeque<i32>,
}

impl LockState {
    fn grantable(&self, exclusive: bool) -> bool {
        !self.exclusive && (!exclusive || self.shared == 0)
    }

    fn waits(&self, origin: i32) -> bool {
        self.waiting.iter().any(|&(o, ..)| o == origin)
    }

    /// Keeps request `msg` of `origin` while its lock waits, or while requests of it
    /// are still held (they go first); gives it back when it may be applied now.
    fn hold(&mut self, origin: i32, msg: Vec<u8>) -> Option<Vec<u8>> {
        if !self.waits(origin) && !self.held.contains_key(&origin) {
            return Some(msg);
        }
        self.held.entry(origin).or_default().push_back(msg);
        None
    }

    /// The next held request that may be applied: of an origin granted its lock, up
    /// to the next lock request of it that has to wait again.
    fn next_released(&mut self) -> Option<(i32, Vec<u8>)> {
        while let Some(&origin) = self.granted.front() {
            if self.waits(origin) {
                self.granted.pop_front();
                continue;
            }
            match self.held.get_mut(&origin).and_then(VecDeque::pop_front) {
                Some(msg) => return Some((origin, msg)),
                None => {
                    self.held.remove(&origin);
                    self.granted.pop_front();
                }
            }
        }
        None
    }
}

/// Takes new requests, applies those fully received, reaps finished replies.
pub(super) fn service(rt: &mut Runtime, w: &mut Window) -> bool {
    let mut any = false;
    while let Some(u) = rt
        .st
        .matching
        .take_unexpected(w.context, ANY_SOURCE, TAG_REQ)
    {
        // The length was bounded by the sender's own window description, and a peer
        // of this job is trusted as far as sizes go (as for any received message).
        let msg = vec![0u8; u.len as usize];
        let source = u.source;
        let req = rt.receive_message(userbuf::bytes(msg.as_ptr() as usize, msg.len()), u);
        w.incoming.push_back(Incoming { req, source, msg });
        any = true;
    }
    while w.incoming.front().is_some_and(|i| rt.st.is_done(i.req)) {
        let i = w.incoming.pop_front().expect("front checked");
        rt.st.requests.discard(i.req);
        if let Some(msg) = w.lock.hold(i.source, i.msg) {
            apply(rt, w, i.source, &msg);
        }
        while let Some((origin, msg)) = w.lock.next_released() {
            apply(rt, w, origin, &msg);
        }
        any = true;
    }
    while w.landing.first().is_some_and(|l| rt.st.is_done(l.req)) {
        let l = w.landing.remove(0);
        rt.st.requests.discard(l.req);
        reply(rt, w, l.origin, l.reply_tag, Vec::new());
        any = true;
    }
    super::sweep(&mut w.replies, &mut w.replies_calls, |(req, _), _| {
        let done = rt.st.is_done(*req);
        if done {
            rt.st.requests.discard(*req);
        }
        done
    });
    any
}

fn reply(rt: &mut Runtime, w: &mut Window, to: i32, tag: i32, data: Vec<u8>) {
    let buf = userbuf::bytes(data.as_ptr() as usize, data.len());
    reply_from(rt, w, to, tag, buf, data);
}

/// Replies with the bytes `buf` describes; `data` (their owner, if they are not window
/// memory) lives until the send completes.
fn reply_from(
    rt: &mut Runtime,
    w: &mut Window,
    to: i32,
    tag: i32,
    buf: userbuf::UserBuf,
    data: Vec<u8>,
) {
    match rt.isend(
        "MPI one-sided target",
        w.comm,
        buf,
        to,
        tag,
        SendMode::Standard,
    ) {
        Ok(req) => w.replies.push_back((req, data)),
        Err(e) => crate::say!("crossmpi: one-sided reply to rank {to} failed: {e:?}"),
    }
}

/// The window memory [offset, offset + len) names, if it lies inside the window.
fn locate(mem: &Memory, offset: u64, len: u64) -> Option<usize> {
    match mem {
        Memory::Fixed { base, size } => {
            (offset.checked_add(len)? <= *size as u64).then(|| base + offset as usize)
        }
        Memory::Dynamic { regions } => {
            let end = offset.checked_add(len)?;
            regions
                .iter()
                .any(|&(b, s)| offset >= b as u64 && end <= (b + s) as u64)
                .then_some(offset as usize)
        }
    }
}

fn apply(rt: &mut Runtime, w: &mut Window, source: i32, msg: &[u8]) {
    let Request { head, runs, data } = match Head::parse(msg) {
        Ok(x) => x,
        Err(why) => {
            crate::say!("crossmpi: dropping a one-sided request from rank {source}: {why}");
            return;
        }
    };
    match head.kind {
        Kind::Lock => {
            w.lock
                .waiting
                .push_back((source, head.exclusive, head.reply_tag));
            grant(rt, w);
            return;
        }
        Kind::Unlock => {
            if w.lock.exclusive {
                w.lock.exclusive = false;
            } else {
                w.lock.shared = w.lock.shared.saturating_sub(1);
            }
            grant(rt, w);
            return;
        }
        _ => {}
    }
    let len = head.len as usize;
    let located = locate(&w.memory, head.offset, head.span);
    if head.kind == Kind::PutStream {
        let scratch = if located.is_some() {
            Vec::new()
        } else {
            vec![0u8; len]
        };
        let into = located.unwrap_or(scratch.as_ptr() as usize);
        match rt.irecv(
            "MPI one-sided target",
            w.comm,
            userbuf::bytes(into, len),
            source,
            TAG_DATA,
        ) {
            Ok(req) => w.landing.push(Landing {
                req,
                origin: source,
                reply_tag: head.reply_tag,
                _scratch: scratch,
            }),
            Err(e) => crate::say!("crossmpi: one-sided put from rank {source}: {e:?}"),
        }
        if located.is_none() {
            crate::say!(
                "crossmpi: one-sided put from rank {source}: bytes [{}, +{len}) are outside the window memory; ignored",
                head.offset
            );
        }
        return;
    }
    let Some(addr) = located else {
        // The origin checks fixed windows itself; in a dynamic window only the target
        // knows what is attached. The origin still gets its reply so it cannot hang.
        crate::say!(
            "crossmpi: one-sided {:?} from rank {source}: bytes [{}, +{}) are outside the window memory; ignored",
            head.kind, head.offset, head.span
        );
        let fill = if head.kind == Kind::Put || head.kind == Kind::Accumulate {
            0
        } else {
            len
        };
        reply(rt, w, source, head.reply_tag, vec![0; fill]);
        return;
    };
    let window_bytes = userbuf::bytes(addr, head.span as usize);
    if head.kind == Kind::Get && runs.is_empty() {
        // Straight from the window memory: a get conflicting with a concurrent update
        // is erroneous in MPI, so the memory may be read while the reply streams.
        reply_from(rt, w, source, head.reply_tag, window_bytes, Vec::new());
        return;
    }
    let span = window_bytes
        .dense_mut(0, head.span as usize)
        .expect("a byte buffer is dense");
    let whole = [(0, head.span)];
    let runs: &[layout::Run] = if runs.is_empty() { &whole } else { &runs };
    let old = match head.kind {
        Kind::Put => {
            layout::scatter(span, runs, data);
            Vec::new()
        }
        Kind::Get => layout::gather(span, runs),
        Kind::Accumulate | Kind::GetAccumulate | Kind::CompareAndSwap => {
            let old = accumulate(w.direct.is_some(), span, runs, &head, data);
            if head.kind == Kind::Accumulate {
                Vec::new()
            } else {
                old
            }
        }
        Kind::Lock | Kind::Unlock | Kind::PutStream => Vec::new(),
    };
    reply(rt, w, source, head.reply_tag, old);
}

/// Applies an accumulate run by run and returns the previous contents, packed. In a
/// segment window (`shared`) members of the node update the memory at the same time
/// with atomic instructions, so runs whose elements allow it are updated the same way
/// (`atomic`); all other elements change only here, one request after the other.
fn accumulate(
    shared: bool,
    span: &mut [u8],
    runs: &[layout::Run],
    head: &Head,
    data: &[u8],
) -> Vec<u8> {
    let basic = head.basic.expect("checked by parse");
    let len = head.len as usize;
    let mut old = vec![0u8; len];
    let mut at = 0;
    for &(offset, n) in runs {
        let (o, n) = (offset as usize, n as usize);
        let fetched = &mut old[at..at + n];
        let origin = data.get(at..at + n).unwrap_or(&[]);
        let update = match head.kind {
            Kind::CompareAndSwap => atomic::Update::Swap {
                origin,
                compare: &data[len + at..len + at + n],
            },
            _ => atomic::Update::Op(head.op, origin),
        };
        let mem = &mut span[o..o + n];
        if shared && atomic::eligible(basic, mem.as_ptr() as usize, n) {
            // SAFETY: `mem` is window memory inside the segment, eligible for atomic
            // updates of `basic`.
            unsafe { atomic::apply(basic, mem.as_mut_ptr() as usize, n, update, Some(fetched)) };
        } else {
            fetched.copy_from_slice(mem);
            match update {
                atomic::Update::Op(Op::NoOp, _) => {}
                atomic::Update::Op(op, origin) => {
                    if let Err(e) = op::apply(op, basic, origin, mem) {
                        crate::say!("crossmpi: one-sided accumulate: {e}");
                    }
                }
                atomic::Update::Swap { origin, compare } => {
                    if fetched == compare {
                        mem.copy_from_slice(origin);
                    }
                }
            }
        }
        at += n;
    }
    old
}

/// Grants waiting lock requests in order while they can be granted.
fn grant(rt: &mut Runtime, w: &mut Window) {
    while let Some(&(origin, exclusive, tag)) = w.lock.waiting.front() {
        if !w.lock.grantable(exclusive) {
            break;
        }
        w.lock.waiting.pop_front();
        if exclusive {
            w.lock.exclusive = true;
        } else {
            w.lock.shared += 1;
        }
        if w.lock.held.contains_key(&origin) {
            w.lock.granted.push_back(origin);
        }
        reply(rt, w, origin, tag, Vec::new());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_exclude_writers_and_share_readers() {
        let mut l = LockState::default();
        assert!(l.grantable(true) && l.grantable(false));
        l.shared = 2;
        assert!(!l.grantable(true) && l.grantable(false));
        l.shared = 0;
        l.exclusive = true;
        assert!(!l.grantable(true) && !l.grantable(false));
    }

    #[test]
    fn requests_behind_a_waiting_lock_are_held_until_it_is_granted() {
        // Origin 1 holds an exclusive lock; origin 2 asks for one and sends two
        // requests right behind it.
        let mut l = LockState {
            exclusive: true,
            ..Default::default()
        };
        l.waiting.push_back((2, true, 16));
        assert_eq!(l.hold(2, vec![1]), None);
        assert_eq!(l.hold(2, vec![2]), None);
        // Others are not held up.
        assert_eq!(l.hold(3, vec![9]), Some(vec![9]));
        assert_eq!(l.next_released(), None);
        // Granted (as `grant` does): the two come out in order, and a request that
        // arrives meanwhile goes behind them.
        l.waiting.pop_front();
        l.granted.push_back(2);
        assert_eq!(l.hold(2, vec![3]), None);
        assert_eq!(l.next_released(), Some((2, vec![1])));
        assert_eq!(l.next_released(), Some((2, vec![2])));
        // Applying a held lock request that must wait again stops the release.
        l.waiting.push_back((2, true, 17));
        assert_eq!(l.next_released(), None);
        assert_eq!(l.hold(2, vec![4]), None);
        l.waiting.pop_front();
        l.granted.push_back(2);
        assert_eq!(l.next_released(), Some((2, vec![3])));
        assert_eq!(l.next_released(), Some((2, vec![4])));
        assert_eq!(l.next_released(), None);
        assert_eq!(l.hold(2, vec![5]), Some(vec![5]));
    }

    #[test]
    fn accumulates_apply_run_by_run_and_fetch_the_old_values() {
        use crossmpi_datatype::Basic;
        let ints = |v: &[i32]| v.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
        let head = |kind, op| Head {
            kind,
            op,
            basic: Some(Basic::Int),
            exclusive: false,
            reply_tag: 0,
            offset: 0,
            span: 16,
            len: 8,
        };
        // Elements 0 and 2 of four; atomic (segment window) or not, the same outcome.
        let runs = [(0, 4), (8, 4)];
        for shared in [false, true] {
            let mut span = ints(&[1, 2, 3, 4]);
            let sum = head(Kind::GetAccumulate, Op::Sum);
            let old = accumulate(shared, &mut span, &runs, &sum, &ints(&[10, 20]));
            assert_eq!((old, &span), (ints(&[1, 3]), &ints(&[11, 2, 23, 4])));
            let fetch = head(Kind::GetAccumulate, Op::NoOp);
            let old = accumulate(shared, &mut span, &runs, &fetch, &[]);
            assert_eq!((old, &span), (ints(&[11, 23]), &ints(&[11, 2, 23, 4])));
            let swap = Head {
                span: 4,
                len: 4,
                ..head(Kind::CompareAndSwap, Op::Replace)
            };
            let old = accumulate(shared, &mut span[8..], &[(0, 4)], &swap, &ints(&[7, 23]));
            assert_eq!((old, &span), (ints(&[23]), &ints(&[11, 2, 7, 4])));
        }
    }

    #[test]
    fn accesses_must_lie_inside_the_window_memory() {
        let fixed = Memory::Fixed {
            base: 4096,
            size: 100,
        };
        assert_eq!(locate(&fixed, 10, 90), Some(4106));
        assert_eq!(locate(&fixed, 10, 91), None);
        assert_eq!(locate(&fixed, u64::MAX, 2), None);
        let dynamic = Memory::Dynamic {
            regions: vec![(8192, 64), (100_000, 8)],
        };
        assert_eq!(locate(&dynamic, 8200, 8), Some(8200));
        assert_eq!(locate(&dynamic, 100_004, 8), None);
        assert_eq!(locate(&dynamic, 50, 1), None);
    }
}
