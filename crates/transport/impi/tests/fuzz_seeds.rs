//! The fuzzers' seed corpus (fuzz/seeds/TARGET/NAME), built with the crate's own
//! encoders. This test checks the committed seeds are exactly what the encoders produce
//! and that each is a valid session; `CROSSMPI_WRITE_FUZZ_SEEDS=1` rewrites them.

use crossmpi_impi::startup::client::{Client, ClientAuth, ClientConfig};
use crossmpi_impi::startup::server::{Phase, Server, ServerAuth, ServerConfig};
use crossmpi_impi::wire::addr::HostAddr;
use crossmpi_impi::wire::label::Label;
use crossmpi_impi::wire::packet::{PacketHeader, PacketRepr, PacketType, Proc};
use crossmpi_impi::wire::startup::{AuthMethod, AuthReply, ClientMessage, ServerMessage};
use crossmpi_impi::wire::tables::{ClientInfo, GlobalTables};
use crossmpi_impi::wire::Limits;
use std::path::PathBuf;

/// The client the startup_decoder target runs (fuzz_targets/startup_decoder.rs).
fn fuzz_client_info() -> ClientInfo {
    ClientInfo::one_host(HostAddr::default(), 1, &[1], 1024)
}

/// What a client sends in a whole session (AUTH .. FINI).
fn client_session(rank: u32, info: &ClientInfo, key: Option<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    let mask = if key.is_some() { 2 } else { 1 };
    ClientMessage::Auth { mask }.emit(&mut out);
    if let Some(k) = key {
        out.extend_from_slice(&k.to_be_bytes());
    }
    ClientMessage::Rank(rank).emit(&mut out);
    for label in Label::LAM_ORDER {
        let payload = info.contribution(label);
        ClientMessage::Coll { label, payload }.emit(&mut out);
    }
    ClientMessage::Done.emit(&mut out);
    ClientMessage::Fini.emit(&mut out);
    out
}

/// What the server sends one client after authentication.
fn server_session(tables: &GlobalTables) -> Vec<u8> {
    let mut out = Vec::new();
    ServerMessage::Size(tables.clients.len() as u32).emit(&mut out);
    for label in Label::LAM_ORDER {
        ServerMessage::Coll(tables.reply(label)).emit(&mut out);
    }
    ServerMessage::Done { payload_len: 0 }.emit(&mut out);
    out
}

/// server_conn input: accept `sessions.len()` connections, then feed them round-robin.
fn server_conn_input(nclients: u8, key: bool, sessions: &[Vec<u8>]) -> Vec<u8> {
    let mut v = vec![nclients - 1, u8::from(key)];
    for _ in sessions {
        v.extend_from_slice(&[0, 0]);
    }
    let mut cursors = vec![0usize; sessions.len()];
    while cursors.iter().zip(sessions).any(|(c, s)| *c < s.len()) {
        for (i, s) in sessions.iter().enumerate() {
            let n = (s.len() - cursors[i]).min(200);
            if n > 0 {
                v.extend_from_slice(&[1 | (i as u8) << 2, n as u8]);
                v.extend_from_slice(&s[cursors[i]..cursors[i] + n]);
                cursors[i] += n;
            }
        }
        v.extend_from_slice(&[3, 0]);
    }
    v
}

fn header(ty: PacketType, data_len: u32, msglen: u64) -> Vec<u8> {
    let mut id = [0u8; 16];
    id[12..].copy_from_slice(&[10, 0, 0, 1]);
    let mut p = PacketRepr::control(
        ty,
        Proc {
            hostid: HostAddr(id),
            pid: 7,
        },
        Proc {
            hostid: HostAddr(id),
            pid: 8,
        },
    );
    p.data_len = data_len;
    p.msglen = msglen;
    p.srqid = 42;
    // The target reads its pk_len bound from the last 4 bytes (pk_reserved).
    p.reserved = 4096;
    p.emit().to_vec()
}

fn seeds() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let me = fuzz_client_info();
    let one = GlobalTables {
        clients: vec![me.clone()],
    };
    let mut view = Vec::new();
    AuthReply::for_method(AuthMethod::None).emit(&mut view);
    view.extend_from_slice(&server_session(&one));
    let mut second = me.clone();
    second.procs[0].pid = 2;
    vec![
        (
            "startup_decoder",
            "client_session",
            client_session(0, &me, None),
        ),
        ("startup_decoder", "server_session", server_session(&one)),
        ("startup_decoder", "client_view", view),
        (
            "startup_decoder",
            "worked_example",
            [0x434F_4C4Cu32, 20, 0x1100, 7, 3, 2, 2]
                .iter()
                .flat_map(|v| v.to_be_bytes())
                .collect(),
        ),
        (
            "packet_header",
            "datasync_long",
            header(PacketType::DataSync, 1024, 4000),
        ),
        (
            "packet_header",
            "data_short",
            header(PacketType::Data, 16, 16),
        ),
        (
            "packet_header",
            "syncack",
            header(PacketType::SyncAck, 0, 0),
        ),
        ("packet_header", "fini", header(PacketType::Fini, 0, 0)),
        (
            "server_conn",
            "one_client",
            server_conn_input(1, false, &[client_session(0, &me, None)]),
        ),
        (
            "server_conn",
            "two_clients_key",
            server_conn_input(
                2,
                true,
                &[
                    client_session(1, &second, Some(0x1234)),
                    client_session(0, &me, Some(0x1234)),
                ],
            ),
        ),
    ]
}

#[test]
fn seeds_are_valid_sessions() {
    let me = fuzz_client_info();
    // The client view drives the fuzz client to the end of startup.
    let mut c = Client::new(ClientConfig {
        rank: 0,
        auth: ClientAuth {
            allow_none: true,
            key: Some(5),
        },
        info: me.clone(),
        pipeline: false,
        limits: Limits::default(),
    })
    .unwrap();
    let view = &seeds()[2].2;
    c.handle_input(view).unwrap();
    assert!(c.is_ready());
    // The client session completes a one-client job.
    let mut s = Server::new(ServerConfig {
        nclients: 1,
        auth: ServerAuth::None,
        limits: Limits::default(),
    })
    .unwrap();
    let conn = s.accept();
    s.handle_input(conn, &seeds()[0].2);
    assert_eq!(s.phase(), Phase::Complete);
    for (target, name, bytes) in seeds() {
        if target == "packet_header" {
            let v = PacketHeader::new_checked(&bytes[..]).unwrap();
            PacketRepr::parse(&v, 4096).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
}

#[test]
fn committed_seeds_match_the_encoders() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    let write = std::env::var_os("CROSSMPI_WRITE_FUZZ_SEEDS").is_some();
    for (target, name, bytes) in seeds() {
        let path = dir.join(target).join(name);
        if write {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &bytes).unwrap();
        }
        let on_disk = std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (run with CROSSMPI_WRITE_FUZZ_SEEDS=1)",
                path.display()
            )
        });
        assert_eq!(on_disk, bytes, "{} is stale", path.display());
    }
}
