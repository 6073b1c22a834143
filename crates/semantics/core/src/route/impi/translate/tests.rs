//! Two translators back to back (world ranks 0 and 1, each its own IMPI host): every
//! crossmpi frame crosses as the IMPI packets the protocol notes prescribe and comes back
//! as the same frame.

use super::*;
use crossmpi_impi::wire::addr::HostAddr;
use std::net::{IpAddr, Ipv4Addr};

const MAX: u32 = 100;

fn proc_(i: u8) -> Proc {
    Proc {
        hostid: HostAddr::from_ip(IpAddr::V4(Ipv4Addr::new(10, 0, 0, i))),
        pid: 1000 + i as i64,
    }
}

fn pair(ackmark: u32, hiwater: u32) -> (Translator, Translator) {
    translators(ackmark, hiwater, false)
}

fn translators(ackmark: u32, hiwater: u32, survivable: bool) -> (Translator, Translator) {
    let procs = vec![proc_(1), proc_(2)];
    let flow = FlowParams::new(ackmark, hiwater).unwrap();
    (
        Translator::new(0, procs.clone(), &[1], MAX, flow, survivable),
        Translator::new(1, procs, &[0], MAX, flow, survivable),
    )
}

fn env() -> Envelope {
    Envelope {
        context: 4,
        src: 0,
        tag: 7,
    }
}

/// Every packet of `frame` from `a` to world rank 1, with the payload ranges.
fn packets(a: &mut Translator, frame: Frame, payload_len: u64) -> Vec<Outbound> {
    let mut out = Vec::new();
    let mut done = 0;
    let mut blocked = false;
    while let Some(o) = a.next_packet(1, &frame, payload_len, done, &mut blocked) {
        done += o.len;
        let stop = !matches!(frame, Frame::Data { .. } | Frame::Early { .. });
        out.push(o);
        if stop {
            break;
        }
    }
    assert!(!blocked);
    out
}

/// `o`'s header through the wire format, as a host would see it.
fn received(o: &Outbound) -> PacketRepr {
    let bytes = o.packet.emit();
    let view = crossmpi_impi::wire::packet::PacketHeader::new_checked(&bytes[..]).unwrap();
    PacketRepr::parse(&view, MAX).unwrap()
}

fn arrive(b: &mut Translator, o: &Outbound) -> Arrival {
    b.arrive(&received(o), &vec![0xab; o.len as usize]).unwrap()
}

#[test]
fn eager_messages_are_one_data_or_datasync_packet() {
    let (mut a, mut b) = pair(10, 20);
    for sync in [false, true] {
        let frame = Frame::Eager {
            env: env(),
            msg: 5,
            len: 60,
            sync,
        };
        let out = packets(&mut a, frame, 60);
        assert_eq!(out.len(), 1);
        let p = &out[0].packet;
        let ty = if sync {
            PacketType::DataSync
        } else {
            PacketType::Data
        };
        assert_eq!((p.ty, p.data_len, p.msglen, p.srqid), (ty, 60, 60, 5));
        assert_eq!((p.cid, p.tag, p.lsrank), (4, 7, 0));
        assert_eq!((p.src, p.dest), (proc_(1), proc_(2)));
        assert_eq!(
            arrive(&mut b, &out[0]),
            Arrival::Frame {
                from: 0,
                head: Head::new(frame)
            }
        );
    }
    // The synchronous-mode acknowledgement goes back as a SYNCACK with drqid 0.
    let ack = Frame::SyncAck { msg: 5 };
    let mut blocked = false;
    let o = b.next_packet(0, &ack, 0, 0, &mut blocked).unwrap();
    assert_eq!(
        (o.packet.ty, o.packet.srqid, o.packet.drqid),
        (PacketType::SyncAck, 5, 0)
    );
    let p = o.packet;
    assert_eq!(
        a.arrive(&p, &[]).unwrap(),
        Arrival::Frame {
            from: 1,
            head: Head::new(ack)
        }
    );
}

#[test]
fn long_messages_go_as_datasync_syncack_and_data_continuations() {
    let (mut a, mut b) = pair(10, 20);
    let len = 250;
    let rts = Frame::Rts {
        env: env(),
        msg: 9,
        len,
        cma_addr: 0,
    };
    let first = packets(&mut a, rts, 0);
    assert_eq!(first.len(), 1);
    let p = &first[0].packet;
    assert_eq!(
        (p.ty, p.data_len, p.msglen),
        (PacketType::DataSync, MAX, len)
    );
    assert_eq!((first[0].offset, first[0].len), (0, MAX as u64));
    assert_eq!(
        arrive(&mut b, &first[0]),
        Arrival::Frame {
            from: 0,
            head: Head::new(rts)
        }
    );
    // The receiver matches it with request 33: SYNCACK, and the first piece is handed over.
    let cts = Frame::Cts { msg: 9, rreq: 33 };
    let mut blocked = false;
    let ack = b.next_packet(0, &cts, 0, 0, &mut blocked).unwrap();
    assert_eq!(
        (ack.packet.ty, ack.packet.srqid, ack.packet.drqid),
        (PacketType::SyncAck, 9, 33)
    );
    assert_eq!(b.matched_long(0, 9, 33), vec![0xab; MAX as usize]);
    assert_eq!(
        a.arrive(&ack.packet, &[]).unwrap(),
        Arrival::Frame {
            from: 1,
            head: Head::new(cts)
        }
    );
    // The rest streams in DATA packets of at most MAX bytes, counted in order.
    let data = Frame::Data {
        rreq: 33,
        offset: 0,
    };
    let rest = packets(&mut a, data, len);
    let ranges: Vec<(u64, u64)> = rest.iter().map(|o| (o.offset, o.len)).collect();
    assert_eq!(ranges, vec![(100, 100), (200, 50)]);
    assert_eq!(a.streamed_len(len), 150);
    let offsets: Vec<Arrival> = rest.iter().map(|o| arrive(&mut b, o)).collect();
    assert_eq!(
        offsets,
        vec![
            Arrival::Frame {
                from: 0,
                head: Head::new(Frame::Data {
                    rreq: 33,
                    offset: 100
                })
            },
            Arrival::Frame {
                from: 0,
                head: Head::new(Frame::Data {
                    rreq: 33,
                    offset: 200
                })
            }
        ]
    );
    // A further continuation for the finished request breaks the protocol.
    let extra = &rest[1].packet;
    let err = b.arrive(extra, &[0; 50]).unwrap_err();
    assert!(err.contains("unknown request 33"), "{err}");
}

/// Like [`arrive`], with distinct bytes per packet (its offset), to see where they land.
fn arrive_marked(b: &mut Translator, o: &Outbound) -> Arrival {
    b.arrive(&received(o), &vec![o.offset as u8; o.len as usize])
        .unwrap()
}

/// The packets of long message 9 of `len` bytes sent early: its `Rts` frame, the
/// `DATASYNC` and the `DATA` packets that follow it at once.
fn sent_early(a: &mut Translator, len: u64) -> (Frame, Vec<Outbound>, Vec<Outbound>) {
    let rts = Frame::Rts {
        env: env(),
        msg: 9,
        len,
        cma_addr: 0,
    };
    let first = packets(a, rts, 0);
    let early = packets(a, Frame::Early { msg: 9 }, len);
    (rts, first, early)
}

#[test]
fn early_packets_wait_with_the_first_piece_until_matched_then_continue_the_receive() {
    let (mut a, mut b) = pair(10, 20);
    b.accept_early = true;
    let (rts, first, early) = sent_early(&mut a, 450);
    let shape: Vec<(u64, u64, u64, u64)> = early
        .iter()
        .map(|o| (o.offset, o.len, o.packet.srqid, o.packet.drqid))
        .collect();
    assert_eq!(
        shape,
        vec![
            (100, 100, 9, EARLY),
            (200, 100, 9, EARLY),
            (300, 100, 9, EARLY),
            (400, 50, 9, EARLY)
        ]
    );
    assert!(early.iter().all(|o| b.wants_whole(&o.packet)), "kept whole");
    assert_eq!(
        arrive_marked(&mut b, &first[0]),
        Arrival::Frame {
            from: 0,
            head: Head::new(rts)
        }
    );
    // Two arrive before the receive is matched: kept behind the first piece.
    for o in &early[..2] {
        assert_eq!(arrive_marked(&mut b, o), Arrival::Nothing);
    }
    let mut want = vec![0u8; 100];
    want.extend(vec![100u8; 100]);
    want.extend(vec![200u8; 100]);
    assert_eq!(
        b.matched_long(0, 9, 33),
        want,
        "first piece, then the early bytes in order"
    );
    // The rest continue request 33 where the held bytes ended.
    let rest: Vec<Arrival> = early[2..]
        .iter()
        .map(|o| arrive_marked(&mut b, o))
        .collect();
    let data = |offset| Arrival::Frame {
        from: 0,
        head: Head::new(Frame::Data { rreq: 33, offset }),
    };
    assert_eq!(rest, vec![data(300), data(400)]);
    // The SYNCACK still goes back (it returns the sender's room), as a CTS frame.
    let mut blocked = false;
    let ack = b
        .next_packet(0, &Frame::Cts { msg: 9, rreq: 33 }, 0, 0, &mut blocked)
        .unwrap();
    assert_eq!(
        a.arrive(&ack.packet, &[]).unwrap(),
        Arrival::Frame {
            from: 1,
            head: Head::new(Frame::Cts { msg: 9, rreq: 33 })
        }
    );
    // An early packet past the message's end, or for a message never announced, is an
    // error that names it.
    let err = b.arrive(&early[3].packet, &[0; 50]).unwrap_err();
    assert!(err.contains("message 9 that has no first piece"), "{err}");
}

#[test]
fn without_every_client_crossmpi_an_early_packet_is_an_unknown_request() {
    let (mut a, mut b) = pair(10, 20);
    let (_, first, early) = sent_early(&mut a, 250);
    arrive(&mut b, &first[0]);
    assert!(!b.wants_whole(&early[0].packet));
    let err = b.arrive(&early[0].packet, &[0; 100]).unwrap_err();
    assert!(err.contains("unknown request"), "{err}");
}

#[test]
fn the_window_closes_at_hiwater_and_protoacks_reopen_it() {
    let (mut a, mut b) = pair(2, 4);
    let frame = Frame::Eager {
        env: env(),
        msg: 0,
        len: 1,
        sync: false,
    };
    let mut sent = Vec::new();
    let mut blocked = false;
    while let Some(o) = a.next_packet(1, &frame, 1, 0, &mut blocked) {
        sent.push(o);
    }
    assert!(blocked);
    assert_eq!(sent.len(), 4);
    for o in &sent {
        arrive(&mut b, o);
    }
    // Every second counted packet earns a PROTOACK.
    assert_eq!(b.acks_due, vec![0, 0]);
    for to in std::mem::take(&mut b.acks_due) {
        let ack = b.protoack(to);
        assert_eq!(a.arrive(&ack, &[]).unwrap(), Arrival::Nothing);
    }
    assert!(a.next_packet(1, &frame, 1, 0, &mut blocked).is_some());
    // A PROTOACK beyond what is unacknowledged (1 packet) is a protocol error.
    let ack = b.protoack(0);
    assert!(a.arrive(&ack, &[]).unwrap_err().contains("PROTOACK"));
}

#[test]
fn the_byte_window_stops_data_packets_but_not_control_ones() {
    let (mut a, _) = pair(2, 100);
    // Below two full packets (ackmark 2 x MAX 100) the limit would stop the sender for
    // good, so it is raised to them: two eager messages of 100 bytes, then none.
    a.limit_window(50, FlowParams::new(2, 100).unwrap());
    let eager = |msg| Frame::Eager {
        env: env(),
        msg,
        len: 100,
        sync: false,
    };
    let mut blocked = false;
    for msg in 0..2 {
        assert!(a
            .next_packet(1, &eager(msg), 100, 0, &mut blocked)
            .is_some());
    }
    assert!(a.next_packet(1, &eager(2), 100, 0, &mut blocked).is_none() && blocked);
    // A one-byte message too: the window admits by the most a data packet may carry.
    assert!(a.next_packet(1, &one_byte(3), 1, 0, &mut blocked).is_none());
    blocked = false;
    let syncack = Frame::SyncAck { msg: 4 };
    assert!(a.next_packet(1, &syncack, 0, 0, &mut blocked).is_some() && !blocked);
}

/// A standard eager message of one byte, number `msg`.
fn one_byte(msg: u64) -> Frame {
    Frame::Eager {
        env: env(),
        msg,
        len: 1,
        sync: false,
    }
}

#[test]
fn numbered_packets_survive_a_lost_path() {
    let (mut a, mut b) = translators(2, 4, true);
    let sent: Vec<Outbound> = (0..4)
        .flat_map(|m| packets(&mut a, one_byte(m), 1))
        .collect();
    let numbers: Vec<u64> = sent.iter().map(|o| o.packet.reserved).collect();
    assert_eq!(numbers, vec![1, 2, 3, 4]);
    // Packet 2 is lost with a relay: 3 and 4 arrive early and are dropped, unacknowledged.
    assert!(matches!(arrive(&mut b, &sent[0]), Arrival::Frame { .. }));
    assert_eq!(arrive(&mut b, &sent[2]), Arrival::Dropped);
    assert_eq!(arrive(&mut b, &sent[3]), Arrival::Dropped);
    assert!(b.acks_due.is_empty(), "dropped packets do not count");
    let mut blocked = false;
    assert!(a.next_packet(1, &one_byte(9), 1, 0, &mut blocked).is_none() && blocked);
    // The receiver asks for a resend after its count (1); the sender resends 2..4 and
    // answers with its own count of the receiver's packets (none).
    let ask = b.resume(0, RESUME);
    assert_eq!((ask.reserved, ask.count), (1, RESUME));
    assert_eq!(a.arrive(&ask, &[]).unwrap(), Arrival::Nothing);
    assert_eq!(a.resends_due, vec![(1, 1)]);
    assert_eq!(a.answers_due, vec![1]);
    for o in &sent[1..] {
        assert!(matches!(arrive(&mut b, o), Arrival::Frame { .. }));
    }
    assert_eq!(arrive(&mut b, &sent[1]), Arrival::Dropped, "a duplicate");
    // PROTOACKs carry the cumulative count and reopen the window however many were lost.
    assert_eq!(b.acks_due, vec![0, 0]);
    let ack = b.protoack(0);
    assert_eq!(ack.reserved, 4);
    assert_eq!(a.arrive(&ack, &[]).unwrap(), Arrival::Nothing);
    assert!(a.next_packet(1, &one_byte(9), 1, 0, &mut blocked).is_some());
    let mut late = b.protoack(0);
    late.reserved = 6;
    assert!(a
        .arrive(&late, &[])
        .unwrap_err()
        .contains("only 5 were sent"));
}

#[test]
fn a_probe_is_answered_without_a_resend_and_its_answer_resends_only_a_standstill() {
    let (mut a, mut b) = translators(2, 64, true);
    let sent: Vec<Outbound> = (0..3)
        .flat_map(|m| packets(&mut a, one_byte(m), 1))
        .collect();
    assert!(matches!(arrive(&mut b, &sent[0]), Arrival::Frame { .. }));
    // a probes b (nothing confirmed for a period); b answers and resends nothing itself.
    let probe = a.resume(1, PROBE);
    assert_eq!((probe.reserved, probe.count), (0, PROBE));
    assert_eq!(b.arrive(&probe, &[]).unwrap(), Arrival::Nothing);
    assert!(
        b.resends_due.is_empty(),
        "a probe's receiver resends nothing"
    );
    assert_eq!(b.answers_due, vec![0]);
    // b had one packet more than a knew: the stream moves, nothing is resent.
    let answer = b.resume(0, RESUME_ANSWER);
    assert_eq!(answer.reserved, 1);
    assert_eq!(a.arrive(&answer, &[]).unwrap(), Arrival::Nothing);
    assert!(
        a.resends_due.is_empty(),
        "late confirmations are not a loss"
    );
    // The next probe's answer shows no progress: the packets after it are resent.
    let probe = a.resume(1, PROBE);
    assert_eq!(b.arrive(&probe, &[]).unwrap(), Arrival::Nothing);
    let answer = b.resume(0, RESUME_ANSWER);
    assert_eq!(a.arrive(&answer, &[]).unwrap(), Arrival::Nothing);
    assert_eq!(a.resends_due, vec![(1, 1)]);
    assert_eq!(sent.len(), 3);
}

#[test]
fn cancel_and_its_answers() {
    let (mut a, mut b) = pair(10, 20);
    let rts = Frame::Rts {
        env: env(),
        msg: 3,
        len: 500,
        cma_addr: 0,
    };
    arrive(&mut b, &packets(&mut a, rts, 0)[0]);
    let req = Frame::CancelReq { msg: 3 };
    let o = &packets(&mut a, req, 0)[0];
    assert_eq!(o.packet.ty, PacketType::Cancel);
    assert_eq!(
        arrive(&mut b, o),
        Arrival::Frame {
            from: 0,
            head: Head::new(req)
        }
    );
    let yes = Frame::CancelReply {
        msg: 3,
        cancelled: true,
    };
    let mut blocked = false;
    let o = b.next_packet(0, &yes, 0, 0, &mut blocked).unwrap();
    assert_eq!(o.packet.ty, PacketType::CancelYes);
    // The withdrawn message's first piece is gone.
    assert!(b.matched_long(0, 3, 1).is_empty());
    assert_eq!(
        a.arrive(&o.packet, &[]).unwrap(),
        Arrival::Frame {
            from: 1,
            head: Head::new(yes)
        }
    );
}

#[test]
fn packets_from_strangers_or_for_others_are_refused() {
    let (mut a, mut b) = pair(10, 20);
    let frame = Frame::Eager {
        env: env(),
        msg: 1,
        len: 0,
        sync: false,
    };
    let mut o = packets(&mut a, frame, 0).remove(0);
    o.packet.src = proc_(9);
    assert!(b
        .arrive(&o.packet, &[])
        .unwrap_err()
        .contains("unknown process"));
    o.packet.src = proc_(1);
    o.packet.dest = proc_(1);
    assert!(b
        .arrive(&o.packet, &[])
        .unwrap_err()
        .contains("another process"));
    assert_eq!(b.arrive(&Translator::fini(), &[]).unwrap(), Arrival::Fini);
    // Credit frames have no IMPI form.
    let mut blocked = false;
    assert!(a
        .next_packet(1, &Frame::Credit, 0, 0, &mut blocked)
        .is_none());
}
