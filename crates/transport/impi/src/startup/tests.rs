//! The client and server state machines driven against each other in memory.

use super::client::{Client, ClientAuth, ClientConfig, ClientEvent};
use super::server::{ConnId, Phase, Server, ServerAuth, ServerConfig, ServerEvent};
use crate::error::Error;
use crate::wire::label::Label;
use crate::wire::startup::ClientMessage;
use crate::wire::tables::tests::client as client_info;
use crate::wire::tables::{ClientInfo, GlobalTables};
use crate::wire::Limits;

fn server(n: u32, auth: ServerAuth) -> Server {
    Server::new(ServerConfig {
        nclients: n,
        auth,
        limits: Limits::default(),
    })
    .unwrap()
}

fn config(rank: u32, info: ClientInfo, pipeline: bool) -> ClientConfig {
    ClientConfig {
        rank,
        auth: ClientAuth {
            allow_none: true,
            key: None,
        },
        info,
        pipeline,
        limits: Limits::default(),
    }
}

/// Moves bytes both ways until nothing moves; `chunk` bytes at a time. Returns every
/// byte the server sent to each client.
fn pump(s: &mut Server, clients: &mut [(ConnId, Client)], chunk: usize) -> Vec<Vec<u8>> {
    let mut seen = vec![Vec::new(); clients.len()];
    loop {
        let mut moved = false;
        for (i, (conn, c)) in clients.iter_mut().enumerate() {
            let out = c.take_output();
            for piece in out.chunks(chunk) {
                s.handle_input(*conn, piece);
                moved = true;
            }
            let back = s.take_output(*conn);
            for piece in back.chunks(chunk) {
                c.handle_input(piece).unwrap();
                moved = true;
            }
            seen[i].extend_from_slice(&back);
        }
        if !moved {
            return seen;
        }
    }
}

fn events(s: &mut Server) -> Vec<ServerEvent> {
    std::iter::from_fn(|| s.poll_event()).collect()
}

fn start(s: &mut Server, configs: Vec<ClientConfig>) -> Vec<(ConnId, Client)> {
    configs
        .into_iter()
        .map(|cfg| (s.accept(), Client::new(cfg).unwrap()))
        .collect()
}

#[test]
fn worked_example_nhosts_reply() {
    let infos = vec![
        client_info(0, &[1, 1, 1]),
        client_info(1, &[2, 1]),
        client_info(2, &[1, 1]),
    ];
    let mut s = server(3, ServerAuth::None);
    let cfgs = infos
        .iter()
        .enumerate()
        .map(|(r, i)| config(r as u32, i.clone(), false))
        .collect();
    let mut clients = start(&mut s, cfgs);
    let seen = pump(&mut s, &mut clients, 4096);
    let want: Vec<u8> = [0x434F_4C4Cu32, 20, 0x1100, 7, 3, 2, 2]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    for bytes in &seen {
        assert!(
            bytes.windows(want.len()).any(|w| w == want.as_slice()),
            "every client gets COLL len 20 label 0x1100 mask 7, 3, 2, 2"
        );
    }
    let expected = GlobalTables { clients: infos };
    for (_, c) in &clients {
        assert!(c.is_ready());
        assert_eq!(c.tables(), Some(&expected));
    }
}

#[test]
fn byte_by_byte_mixed_pipelining_with_key_then_fini() {
    let mut s = server(3, ServerAuth::Key(0xfeed));
    let cfgs = (0..3u32)
        .map(|r| {
            let mut c = config(2 - r, client_info(r as u8, &[r + 1, 2]), r == 1);
            c.auth = ClientAuth {
                allow_none: false,
                key: Some(0xfeed),
            };
            c
        })
        .collect();
    let mut clients = start(&mut s, cfgs);
    pump(&mut s, &mut clients, 1);
    let ev = events(&mut s);
    let labels = ev
        .iter()
        .filter(|e| matches!(e, ServerEvent::LabelComplete { .. }))
        .count();
    assert_eq!(labels, Label::LAM_ORDER.len());
    assert!(ev.contains(&ServerEvent::AllDone));
    assert_eq!(s.phase(), Phase::Running);
    let t = clients[0].1.tables().unwrap().clone();
    // Ranks were given in reverse: client rank 0 is the third config.
    assert_eq!(t.clients[0].hosts.len(), 2);
    assert_eq!(t.clients[0].hosts[0].nprocs, 3);
    let c0 = &mut clients[0].1;
    assert_eq!(
        c0.poll_event(),
        Some(ClientEvent::Authenticated(
            crate::wire::startup::AuthMethod::Key
        ))
    );
    for (_, c) in clients.iter_mut() {
        c.finish().unwrap();
    }
    pump(&mut s, &mut clients, 3);
    assert!(events(&mut s).contains(&ServerEvent::JobComplete));
    assert_eq!(s.phase(), Phase::Complete);
}

#[test]
fn wrong_key_drops_only_that_connection() {
    let mut s = server(1, ServerAuth::Key(42));
    let mut cfg = config(0, client_info(0, &[1]), false);
    cfg.auth = ClientAuth {
        allow_none: false,
        key: Some(41),
    };
    let mut clients = start(&mut s, vec![cfg]);
    pump(&mut s, &mut clients, 64);
    let conn = clients[0].0;
    assert!(s.should_close(conn));
    assert!(matches!(
        events(&mut s).as_slice(),
        [ServerEvent::Rejected {
            reason: Error::Invalid {
                what: "IMPI_AUTH_KEY",
                ..
            },
            ..
        }]
    ));
    assert_eq!(s.phase(), Phase::Joining, "the job goes on");
    s.handle_close(conn);
    let e = clients[0].1.handle_close();
    assert!(e.to_string().contains("the key is wrong"), "{e}");
}

#[test]
fn auth_mismatch_names_the_missing_variable() {
    let mut s = server(1, ServerAuth::None);
    let mut cfg = config(0, client_info(0, &[1]), false);
    cfg.auth = ClientAuth {
        allow_none: false,
        key: Some(1),
    };
    let mut clients = start(&mut s, vec![cfg]);
    pump(&mut s, &mut clients, 64);
    let ev = events(&mut s);
    let ServerEvent::Rejected { reason, .. } = &ev[0] else {
        panic!("{ev:?}")
    };
    assert!(reason.to_string().contains("IMPI_AUTH_NONE"), "{reason}");
}

#[test]
fn duplicate_and_out_of_range_ranks_end_the_job() {
    for (ranks, needle) in [(vec![1, 1], "already registered"), (vec![0, 2], "0..2")] {
        let mut s = server(2, ServerAuth::None);
        let cfgs = ranks
            .iter()
            .map(|&r| config(r, client_info(r as u8, &[1]), false))
            .collect();
        let mut clients = start(&mut s, cfgs);
        pump(&mut s, &mut clients, 64);
        let ev = events(&mut s);
        let failed = ev.iter().find_map(|e| match e {
            ServerEvent::JobFailed { reason } => Some(reason.clone()),
            _ => None,
        });
        let reason = failed.unwrap_or_else(|| panic!("{ev:?}"));
        assert!(reason.contains(needle), "{reason}");
        assert_eq!(s.phase(), Phase::Failed);
        assert!(s.should_close(clients[0].0));
    }
}

#[test]
fn vanishing_and_malformed_clients_are_named() {
    let mut s = server(2, ServerAuth::None);
    let mut clients = start(&mut s, vec![config(0, client_info(0, &[1]), false)]);
    pump(&mut s, &mut clients, 64);
    let second = s.accept();
    let mut hello = Vec::new();
    ClientMessage::Auth { mask: 1 }.emit(&mut hello);
    ClientMessage::Rank(1).emit(&mut hello);
    s.handle_input(second, &hello);
    pump(&mut s, &mut clients, 64);
    assert_eq!(s.phase(), Phase::Collecting);
    clients.push((
        second,
        Client::new(config(1, client_info(1, &[1]), false)).unwrap(),
    ));
    // Client 1 sends half a COLL header, then vanishes.
    s.handle_input(clients[1].0, &[0x43, 0x4f, 0x4c]);
    s.handle_close(clients[1].0);
    let ev = events(&mut s);
    let reason = ev
        .iter()
        .find_map(|e| match e {
            ServerEvent::JobFailed { reason } => Some(reason.clone()),
            _ => None,
        })
        .unwrap();
    assert!(reason.contains("client 1"), "{reason}");

    let mut s = server(1, ServerAuth::None);
    let mut clients = start(&mut s, vec![config(0, client_info(0, &[2]), false)]);
    pump(&mut s, &mut clients, 64);
    let mut bad = Vec::new();
    ClientMessage::Coll {
        label: Label::HPort,
        payload: vec![0; 12],
    }
    .emit(&mut bad);
    s.handle_input(clients[0].0, &bad);
    let reason = format!("{:?}", events(&mut s));
    assert!(
        reason.contains("client 0") && reason.contains("IMPI_H_PORT"),
        "{reason}"
    );
}

#[test]
fn oversized_and_unknown_messages() {
    let mut s = Server::new(ServerConfig {
        nclients: 1,
        auth: ServerAuth::None,
        limits: Limits { max_msg: 64 },
    })
    .unwrap();
    let mut clients = start(&mut s, vec![config(0, client_info(0, &[1]), false)]);
    clients[0].1.take_output();
    // A stranger's oversized AUTH is refused from its header alone.
    let stranger = s.accept();
    s.handle_input(stranger, &[b'A', b'U', b'T', b'H', 0x7f, 0xff, 0xff, 0xff]);
    assert!(s.should_close(stranger));
    assert!(matches!(
        events(&mut s).as_slice(),
        [ServerEvent::Rejected {
            reason: Error::TooLong { .. },
            ..
        }]
    ));
    let conn = clients[0].0;
    let mut hello = Vec::new();
    ClientMessage::Auth { mask: 1 }.emit(&mut hello);
    ClientMessage::Rank(0).emit(&mut hello);
    s.handle_input(conn, &hello);
    s.handle_input(conn, &[b'C', b'O', b'L', b'L', 0, 0, 1, 0]);
    let reason = format!("{:?}", events(&mut s));
    assert!(
        reason.contains("TooLong") || reason.contains("exceeds"),
        "{reason}"
    );
    assert_eq!(s.phase(), Phase::Failed);

    let mut s = server(1, ServerAuth::None);
    let c = s.accept();
    s.handle_input(c, &hello);
    s.handle_input(c, &[b'C', b'O', b'L', b'L', 0, 0, 0, 4, 0, 0, 0x17, 0]);
    assert!(format!("{:?}", events(&mut s)).contains("UnknownLabel(5888)"));
}

#[test]
fn timeout_message_names_missing_clients() {
    let mut s = server(3, ServerAuth::None);
    let mut clients = start(&mut s, vec![config(1, client_info(1, &[1]), false)]);
    pump(&mut s, &mut clients, 64);
    assert_eq!(
        s.waiting_for(),
        "clients 0, 2 have not registered (IMPI rank)"
    );
    s.fail(format!("timeout: {}", s.waiting_for()));
    assert_eq!(s.phase(), Phase::Failed);
}

#[test]
fn a_client_closing_after_fini_still_counts() {
    let mut s = server(2, ServerAuth::None);
    let cfgs = (0..2)
        .map(|r| config(r, client_info(r as u8, &[1]), false))
        .collect();
    let mut clients = start(&mut s, cfgs);
    pump(&mut s, &mut clients, 64);
    assert_eq!(s.waiting_for(), "clients 0, 1 have not sent FINI");
    for (conn, c) in clients.iter_mut() {
        c.finish().unwrap();
        s.handle_input(*conn, &c.take_output());
        s.handle_close(*conn);
        if s.phase() == Phase::Running {
            assert_eq!(s.waiting_for(), "client 1 has not sent FINI");
        }
    }
    assert_eq!(s.phase(), Phase::Complete);
    assert!(events(&mut s).contains(&ServerEvent::JobComplete));
}

/// Two clients whose version lists are `lists` (after IMPI 0.0), through DONE.
fn started_with_versions(lists: [&[(u32, u32)]; 2]) -> (Server, Vec<(ConnId, Client)>) {
    let mut s = server(2, ServerAuth::None);
    let cfgs = (0..2u32)
        .map(|r| {
            let mut info = client_info(r as u8, &[1]);
            for &(major, minor) in lists[r as usize] {
                info.versions
                    .push(crate::wire::tables::Version { major, minor });
            }
            config(r, info, false)
        })
        .collect();
    let mut clients = start(&mut s, cfgs);
    pump(&mut s, &mut clients, 64);
    assert_eq!(s.phase(), Phase::Running);
    (s, clients)
}

#[test]
fn a_client_behind_surviving_relays_may_leave_before_fini() {
    use crate::wire::tables::{CROSSMPI_MAJOR, SURVIVAL_MAJOR};
    let crossmpi = (CROSSMPI_MAJOR, 5);
    // Client 0 is behind two trunks that survive a trunk's death; every client is
    // crossmpi: its connection (trunk 0's) closing leaves the job running.
    let (mut s, mut clients) =
        started_with_versions([&[crossmpi, (SURVIVAL_MAJOR, 2)], &[crossmpi]]);
    s.handle_close(clients[0].0);
    assert_eq!(s.phase(), Phase::Running);
    assert_eq!(s.waiting_for(), "client 1 has not sent FINI");
    let (conn, c) = &mut clients[1];
    c.finish().unwrap();
    s.handle_input(*conn, &c.take_output());
    assert_eq!(s.phase(), Phase::Complete);
    let seen = events(&mut s);
    assert!(
        seen.contains(&ServerEvent::ClientLeft { rank: 0 })
            && seen.contains(&ServerEvent::JobComplete)
    );
    // Every client leaving before FINI is a failure.
    let (mut s, clients) = started_with_versions([
        &[crossmpi, (SURVIVAL_MAJOR, 2)],
        &[crossmpi, (SURVIVAL_MAJOR, 2)],
    ]);
    s.handle_close(clients[0].0);
    s.handle_close(clients[1].0);
    assert_eq!(s.phase(), Phase::Failed);
    // An unmarked client, or a marked one in a job with a client that is not crossmpi,
    // ends the job by closing early, as IMPI says.
    for lists in [
        [&[crossmpi][..], &[crossmpi]],
        [&[crossmpi, (SURVIVAL_MAJOR, 2)][..], &[]],
    ] {
        let (mut s, clients) = started_with_versions(lists);
        s.handle_close(clients[0].0);
        assert_eq!(s.phase(), Phase::Failed, "{lists:?}");
    }
}
