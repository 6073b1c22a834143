//! The relay fuzzers' seeds (fuzz/seeds/TARGET/NAME), built with the IMPI encoders: a
//! whole startup through the relay, and a data phase. This test checks the committed
//! seeds are what the encoders produce and that each drives its state machine to the
//! end; `CROSSMPI_WRITE_FUZZ_SEEDS=1` rewrites them.

use crossmpi_impi::wire::addr::HostAddr;
use crossmpi_impi::wire::label::Label;
use crossmpi_impi::wire::packet::{PacketRepr, PacketType, Proc};
use crossmpi_impi::wire::startup::{
    AuthMethod, AuthReply, ClientMessage, CollReply, ServerMessage,
};
use crossmpi_impi::wire::tables::ClientInfo;
use crossmpi_impi::wire::Limits;
use crossmpi_impi_relay::rewrite::{InsideLabels, RelayPlace};
use crossmpi_impi_relay::startup::{StartupEvent, StartupRelay};
use crossmpi_impi_relay::trunk::{TrunkAddrs, TrunkMode};
use std::path::PathBuf;

/// The relay the relay_startup target runs (fuzz_targets/relay_startup.rs).
fn place() -> RelayPlace {
    RelayPlace {
        me: 1,
        trunks: vec![TrunkAddrs {
            global: HostAddr([9; 16]),
            global_port: 4000,
            private: HostAddr([10; 16]),
        }],
        mode: TrunkMode::Destination,
        encrypt: false,
        survive: true,
    }
}

/// Chunks of one side in the targets' format: a control byte (`side` in bit 7 for
/// relay_startup, or the router target's connection and operation bits) and at most
/// `max` bytes.
fn chunks(ctl: u8, shift: u32, max: usize, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for c in data.chunks(max) {
        out.push(ctl | (c.len() as u8) << shift);
        out.extend_from_slice(c);
    }
    out
}

fn inside_info() -> ClientInfo {
    let mut info = ClientInfo::one_host(HostAddr([3; 16]), 5001, &[7], 1024);
    let second = ClientInfo::one_host(HostAddr([4; 16]), 5002, &[8], 1024);
    info.hosts.extend(second.hosts);
    info.procs.extend(second.procs);
    info
}

fn startup_seed() -> Vec<u8> {
    let inside = inside_info();
    let other = ClientInfo::one_host(HostAddr([1; 16]), 5000, &[1, 2], 1024);
    let (mut from_inside, mut from_server) = (Vec::new(), Vec::new());
    ClientMessage::Auth { mask: 1 }.emit(&mut from_inside);
    AuthReply::for_method(AuthMethod::None).emit(&mut from_server);
    ClientMessage::Rank(1).emit(&mut from_inside);
    ServerMessage::Size(2).emit(&mut from_server);
    let mut labels = InsideLabels::default();
    let mut replies = Vec::new();
    for label in Label::LAM_ORDER {
        let payload = inside.contribution(label);
        let mut data = other.contribution(label);
        data.extend(labels.outward(&place(), label, &payload).unwrap());
        ClientMessage::Coll { label, payload }.emit(&mut from_inside);
        ServerMessage::Coll(CollReply {
            label,
            client_mask: 3,
            data,
        })
        .emit(&mut replies);
    }
    let mut seed = chunks(0, 0, 127, &from_inside[..12]);
    seed.extend(chunks(0x80, 0, 127, &from_server[..8]));
    seed.extend(chunks(0, 0, 127, &from_inside[12..24]));
    seed.extend(chunks(0x80, 0, 127, &from_server[8..]));
    seed.extend(chunks(0, 0, 127, &from_inside[24..]));
    seed.extend(chunks(0x80, 0, 127, &replies));
    let (mut done, mut server_done, mut fini) = (Vec::new(), Vec::new(), Vec::new());
    ClientMessage::Done.emit(&mut done);
    ServerMessage::Done { payload_len: 0 }.emit(&mut server_done);
    ClientMessage::Fini.emit(&mut fini);
    seed.extend(chunks(0, 0, 127, &done));
    seed.extend(chunks(0x80, 0, 127, &server_done));
    seed.extend(chunks(0, 0, 127, &fini));
    seed
}

/// Connection indexes of the relay_router target: 0 dialed (outside host 0), 1 global,
/// 2 and 3 private (inside hosts 1 and 2 on client 0's virtual host).
fn router_seed() -> Vec<u8> {
    let read = |conn: u8, data: &[u8]| chunks(conn, 3, 31, data);
    let mut seed = read(2, &1u32.to_be_bytes());
    seed.extend(read(3, &2u32.to_be_bytes()));
    let inside = inside_info();
    let src = Proc {
        hostid: inside.procs[0].id,
        pid: 7,
    };
    let dest = Proc {
        hostid: HostAddr([1; 16]),
        pid: 2,
    };
    let mut p = PacketRepr::control(PacketType::Data, src, dest);
    p.data_len = 40;
    p.msglen = 40;
    let mut bytes = p.emit().to_vec();
    bytes.extend([0x5a; 40]);
    seed.extend(read(2, &bytes));
    // The relay's client as the fuzz target's outside view shows it: one host, [2; 16].
    let back = PacketRepr::control(
        PacketType::ProtoAck,
        dest,
        Proc {
            hostid: HostAddr([2; 16]),
            pid: 7,
        },
    );
    seed.extend(read(0, &back.emit()));
    let fini = PacketRepr::control(PacketType::Fini, Proc::FINI, Proc::FINI).emit();
    for conn in [2, 3, 0] {
        seed.extend(read(conn, &fini));
    }
    for conn in [0, 2, 3] {
        seed.push(4 | conn | 31 << 3);
        seed.extend([0; 31]);
    }
    seed
}

#[test]
fn startup_seed_is_a_whole_session() {
    let mut relay = StartupRelay::new(place(), Limits { max_msg: 1 << 16 });
    let seed = startup_seed();
    let mut rest = &seed[..];
    while let Some((&ctl, tail)) = rest.split_first() {
        let (chunk, tail) = tail.split_at(usize::from(ctl & 0x7f));
        rest = tail;
        if ctl & 0x80 == 0 {
            relay.handle_inside(chunk).unwrap();
        } else {
            relay.handle_server(chunk).unwrap();
        }
        while let Some(ev) = relay.poll_event() {
            if let StartupEvent::Joined { .. } = ev {
                relay.set_private_ports(vec![vec![5000, 0]]).unwrap();
            }
        }
    }
    assert!(relay.is_finished());
}

#[test]
fn committed_seeds_match_the_encoders() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    let write = std::env::var_os("CROSSMPI_WRITE_FUZZ_SEEDS").is_some();
    for (target, name, bytes) in [
        ("relay_startup", "pcgc_session", startup_seed()),
        ("relay_router", "traffic_and_fini", router_seed()),
    ] {
        let path = dir.join(target).join(name);
        if write {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &bytes).unwrap();
        }
        let on_disk = std::fs::read(&path).unwrap_or_default();
        assert!(
            on_disk == bytes,
            "{}: stale; rerun with CROSSMPI_WRITE_FUZZ_SEEDS=1",
            path.display()
        );
    }
}
