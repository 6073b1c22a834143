//! The protocols between two `State`s wired back to back, without any transport: frames
//! queued by one side are handed to the other, whole or with their payload split in two
//! (the way a TCP stream may deliver it).

use super::*;
use crate::request::{ANY_SOURCE, ANY_TAG};
use crate::userbuf;

const CREDIT: u64 = 4096;

fn pair() -> (State, State) {
    let mk = |me: u32| {
        let peers = (0..2)
            .map(|w| Peer::new(if w == me { Route::Local } else { Route::Tcp }, CREDIT))
            .collect();
        let mut st = State::new(me, peers, CREDIT);
        st.tcp_eager = 1024;
        st
    };
    (mk(0), mk(1))
}

fn env(tag: i32) -> Envelope {
    Envelope {
        context: 8,
        src: 0,
        tag,
    }
}

/// The payload bytes of a queued frame.
fn payload_of(st: &State, out: &Outgoing) -> Vec<u8> {
    match &out.payload {
        Payload::None => Vec::new(),
        Payload::Owned(v) => v.clone(),
        Payload::Send { req, offset, len } => {
            let mut v = vec![0u8; *len as usize];
            if let Some(s) = st.requests.get(*req).and_then(Request::send_op) {
                s.buf.pack_into(*offset, &mut v);
            }
            v
        }
    }
}

/// Moves every frame queued at `from` for `to` across; returns how many moved.
fn deliver(from: &mut State, to: &mut State, split: bool) -> usize {
    let (f, t) = (from.me, to.me);
    let mut n = 0;
    while let Some(out) = from.peers[t as usize].queue.pop_front() {
        let data = payload_of(from, &out);
        if split && data.len() > 1 {
            let (sink, delivery) = to.begin_frame(f, &out.head, data.len() as u64);
            let sink = match sink {
                Sink::Buffer(mut v) => {
                    v.extend_from_slice(&data);
                    Sink::Buffer(v)
                }
                Sink::Direct { req, offset } => {
                    if let Some(r) = to.requests.get(req).and_then(Request::recv_op) {
                        r.buf.unpack_from(offset, &data);
                    }
                    Sink::Direct { req, offset }
                }
                other => other,
            };
            to.end_frame(f, sink, delivery);
        } else {
            to.on_frame(f, &out.head, &data);
        }
        if let Some(req) = out.on_written {
            from.frame_written(req);
        }
        n += 1;
    }
    n
}

fn exchange(a: &mut State, b: &mut State) {
    while deliver(a, b, false) + deliver(b, a, false) > 0 {}
}

fn buf(v: &mut [u8]) -> UserBuf {
    userbuf::bytes(v.as_mut_ptr() as usize, v.len())
}

#[test]
fn eager_message_to_a_posted_receive() {
    let (mut a, mut b) = pair();
    let mut src = *b"hello";
    let mut dst = [0u8; 5];
    let r = b.start_recv(buf(&mut dst), 8, 0, 3);
    let s = a.start_send(buf(&mut src), 1, env(3), SendMode::Standard);
    exchange(&mut a, &mut b);
    assert!(a.is_done(s) && b.is_done(r));
    assert_eq!(&dst, b"hello");
    assert_eq!(b.requests.get(r).unwrap().status.bytes, 5);
}

#[test]
fn unexpected_messages_match_in_order_with_wildcards() {
    let (mut a, mut b) = pair();
    let mut m1 = [1u8; 4];
    let mut m2 = [2u8; 4];
    a.start_send(buf(&mut m1), 1, env(7), SendMode::Standard);
    a.start_send(buf(&mut m2), 1, env(7), SendMode::Standard);
    exchange(&mut a, &mut b);
    let (mut d1, mut d2) = ([0u8; 4], [0u8; 4]);
    let r1 = b.start_recv(buf(&mut d1), 8, ANY_SOURCE, ANY_TAG);
    let r2 = b.start_recv(buf(&mut d2), 8, 0, 7);
    assert!(b.is_done(r1) && b.is_done(r2));
    assert_eq!((d1, d2), ([1; 4], [2; 4]), "non-overtaking");
}

#[test]
fn large_messages_use_the_rendezvous_and_land_intact() {
    let (mut a, mut b) = pair();
    let mut src: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
    let mut dst = vec![0u8; 10_000];
    let s = a.start_send(buf(&mut src), 1, env(1), SendMode::Standard);
    deliver(&mut a, &mut b, false);
    assert!(!a.is_done(s), "the send waits for the receiver");
    let r = b.start_recv(buf(&mut dst), 8, 0, 1);
    exchange(&mut a, &mut b);
    assert!(a.is_done(s) && b.is_done(r));
    assert_eq!(src, dst);
}

#[test]
fn synchronous_sends_complete_only_when_matched() {
    let (mut a, mut b) = pair();
    let mut src = [9u8; 8];
    let s = a.start_send(buf(&mut src), 1, env(2), SendMode::Synchronous);
    exchange(&mut a, &mut b);
    assert!(!a.is_done(s), "no receive posted yet");
    let mut dst = [0u8; 8];
    b.start_recv(buf(&mut dst), 8, 0, 2);
    exchange(&mut a, &mut b);
    assert!(a.is_done(s));
}

#[test]
fn a_truncated_receive_reports_the_error_and_keeps_what_fits() {
    let (mut a, mut b) = pair();
    let mut src = *b"abcdef";
    let mut dst = [0u8; 3];
    let r = b.start_recv(buf(&mut dst), 8, 0, 0);
    a.start_send(buf(&mut src), 1, env(0), SendMode::Standard);
    exchange(&mut a, &mut b);
    let st = b.requests.get(r).unwrap().status;
    assert_eq!(st.error, crate::error::ErrorClass::Truncate.code());
    assert_eq!(&dst, b"abc");
}

#[test]
fn cancel_withdraws_an_unmatched_send_but_not_a_matched_one() {
    let (mut a, mut b) = pair();
    let mut src = [5u8; 4];
    let s = a.start_send(buf(&mut src), 1, env(4), SendMode::Standard);
    exchange(&mut a, &mut b);
    a.cancel(s);
    exchange(&mut a, &mut b);
    assert!(a.is_done(s));
    assert!(a.requests.get(s).unwrap().status.cancelled);
    assert!(b.matching.peek_unexpected(8, 0, 4).is_none(), "withdrawn");

    let mut dst = [0u8; 4];
    let r = b.start_recv(buf(&mut dst), 8, 0, 4);
    let s2 = a.start_send(buf(&mut src), 1, env(4), SendMode::Standard);
    exchange(&mut a, &mut b);
    a.cancel(s2);
    exchange(&mut a, &mut b);
    assert!(b.is_done(r) && a.is_done(s2));
    assert!(
        !a.requests.get(s2).unwrap().status.cancelled,
        "already received"
    );
}

#[test]
fn exhausted_credit_turns_eager_sends_into_rendezvous_until_returned() {
    let (mut a, mut b) = pair();
    let mut src = vec![1u8; 1000];
    // 4096 bytes of credit at 1064 per message: three go eagerly, the fourth does not.
    let sends: Vec<_> = (0..4)
        .map(|_| a.start_send(buf(&mut src), 1, env(6), SendMode::Standard))
        .collect();
    exchange(&mut a, &mut b);
    assert!(sends[..3].iter().all(|&s| a.is_done(s)));
    assert!(
        !a.is_done(sends[3]),
        "sent as a rendezvous, waits for the receiver"
    );
    let mut dst = vec![0u8; 1000];
    for _ in 0..4 {
        b.start_recv(buf(&mut dst), 8, 0, 6);
        exchange(&mut a, &mut b);
    }
    assert!(a.is_done(sends[3]));
    assert_eq!(
        a.peers[1].send_credit, CREDIT,
        "every byte of credit came back"
    );
}

#[test]
fn a_receive_posted_while_a_message_arrives_gets_that_message() {
    let (mut a, mut b) = pair();
    let (mut m1, mut m2) = ([1u8; 16], [2u8; 16]);
    a.start_send(buf(&mut m1), 1, env(5), SendMode::Standard);
    a.start_send(buf(&mut m2), 1, env(5), SendMode::Standard);
    // The head of the first message arrives, its payload has not.
    let first = a.peers[1].queue.pop_front().unwrap();
    let data = payload_of(&a, &first);
    let (sink, delivery) = b.begin_frame(0, &first.head, data.len() as u64);
    let mut d1 = [0u8; 16];
    let r1 = b.start_recv(buf(&mut d1), 8, 0, 5);
    let Sink::Buffer(mut v) = sink else {
        panic!("unexpected data is buffered")
    };
    v.extend_from_slice(&data);
    b.end_frame(0, Sink::Buffer(v), delivery);
    deliver(&mut a, &mut b, true);
    let mut d2 = [0u8; 16];
    let r2 = b.start_recv(buf(&mut d2), 8, 0, 5);
    assert!(b.is_done(r1) && b.is_done(r2));
    assert_eq!(
        (d1, d2),
        ([1; 16], [2; 16]),
        "the second message cannot overtake the first"
    );
}

/// Two states of one node: shared-memory routes, cross-memory attach between them (both
/// "processes" are this one, so it always works), the receiver choosing by measurement.
fn node_pair() -> (State, State) {
    let mk = |me: u32| {
        let peers = (0..2)
            .map(|w| {
                let route = if w == me {
                    Route::Local
                } else {
                    Route::Shm { local: w as usize }
                };
                Peer::new(route, CREDIT)
            })
            .collect();
        let mut st = State::new(me, peers, CREDIT);
        st.shm_eager = 1024;
        st.pids = vec![std::process::id(); 2];
        st.copy = CopyChoice::new(0, false);
        st
    };
    (mk(0), mk(1))
}

#[test]
fn rendezvous_on_a_node_are_pulled_split_or_streamed_and_land_intact() {
    let (mut a, mut b) = node_pair();
    transfers_land_intact(&mut a, &mut b);
}

#[test]
fn a_split_whose_sender_cannot_write_is_pulled_whole_by_the_receiver() {
    let (mut a, mut b) = node_pair();
    a.pids[1] = 0; // the sender cannot reach the receiver's memory
    transfers_land_intact(&mut a, &mut b);
}

/// Forty rendezvous of 256 KiB from `a` to `b`, each checked, some of them split.
fn transfers_land_intact(a: &mut State, b: &mut State) {
    let n = 256 * 1024;
    let mut pushes = 0;
    for round in 0..40u32 {
        let mut src: Vec<u8> = (0..n as u32).map(|i| (i * 7 + round) as u8).collect();
        let mut dst = vec![0u8; n];
        let s = a.start_send(buf(&mut src), 1, env(1), SendMode::Standard);
        let r = b.start_recv(buf(&mut dst), 8, 0, 1);
        loop {
            let mut moved = deliver(a, b, false);
            let queued = &b.peers[0].queue;
            pushes += queued
                .iter()
                .filter(|o| matches!(o.head.frame, Frame::Push { .. }))
                .count();
            moved += deliver(b, a, false);
            // The runtime pulls split halves once the frames asking for the others are
            // written, as here after delivering them.
            if b.has_pulls() {
                b.run_pulls();
            } else if moved == 0 {
                break;
            }
        }
        assert!(a.is_done(s) && b.is_done(r), "round {round}");
        assert_eq!(src, dst, "round {round}");
    }
    assert!(
        pushes >= BURST_OF_SPLITS,
        "a run of split transfers: {pushes}"
    );
}

const BURST_OF_SPLITS: usize = copy_choice::TRY as usize;

#[test]
fn both_ends_of_a_two_way_exchange_pull_and_never_split() {
    let (mut a, mut b) = node_pair();
    let n = 256 * 1024;
    for round in 0..40u32 {
        let mut out_a: Vec<u8> = (0..n as u32).map(|i| (i * 3 + round) as u8).collect();
        let mut out_b: Vec<u8> = (0..n as u32).map(|i| (i * 5 + round) as u8).collect();
        let (mut in_a, mut in_b) = (vec![0u8; n], vec![0u8; n]);
        let sa = a.start_send(buf(&mut out_a), 1, env(1), SendMode::Standard);
        let from_b = Envelope { src: 1, ..env(1) };
        let sb = b.start_send(buf(&mut out_b), 0, from_b, SendMode::Standard);
        let ra = a.start_recv(buf(&mut in_a), 8, 1, 1);
        let rb = b.start_recv(buf(&mut in_b), 8, 0, 1);
        loop {
            let pushed = |st: &State, to: usize| {
                st.peers[to]
                    .queue
                    .iter()
                    .any(|o| matches!(o.head.frame, Frame::Push { .. }))
            };
            let moved = deliver(&mut a, &mut b, false) + deliver(&mut b, &mut a, false);
            assert!(!pushed(&a, 1) && !pushed(&b, 0), "round {round}: a split");
            assert!(!a.has_pulls() && !b.has_pulls());
            if moved == 0 {
                break;
            }
        }
        assert!([sa, ra].iter().all(|&r| a.is_done(r)), "round {round}");
        assert!([sb, rb].iter().all(|&r| b.is_done(r)), "round {round}");
        assert_eq!((&in_a, &in_b), (&out_b, &out_a), "round {round}");
    }
}
