//! Every startup decoder on arbitrary bytes: client and server messages (each decoded
//! message must re-encode to bytes that decode to the same message), the bare auth
//! messages, the host handshake, the global tables built from whatever COLL replies the
//! input holds, and the client state machine fed the input as server bytes.
#![no_main]

use crossmpi_impi::startup::client::{Client, ClientAuth, ClientConfig};
use crossmpi_impi::wire::addr::HostAddr;
use crossmpi_impi::wire::handshake::HostHandshake;
use crossmpi_impi::wire::startup::{decode_auth_key, AuthReply, ClientMessage, ServerMessage};
use crossmpi_impi::wire::tables::{ClientInfo, GlobalTables};
use crossmpi_impi::wire::Limits;
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;

/// Small enough that the fuzzer reaches the bound; the check happens before allocation.
const MAX: u32 = 1 << 16;

fn client_messages(mut data: &[u8]) {
    while let Ok(Some((m, used))) = ClientMessage::decode(data, MAX) {
        assert!(used > 0 && used <= data.len());
        let mut again = Vec::new();
        m.emit(&mut again);
        assert_eq!(
            ClientMessage::decode(&again, MAX).ok(),
            Some(Some((m, again.len())))
        );
        data = &data[used..];
    }
}

fn server_messages(mut data: &[u8], nclients: u32) {
    let mut replies = BTreeMap::new();
    while let Ok(Some((m, used))) = ServerMessage::decode(data, MAX) {
        assert!(used > 0 && used <= data.len());
        if let ServerMessage::Coll(r) = &m {
            replies.insert(r.label, r.clone());
        }
        if !matches!(m, ServerMessage::Done { payload_len } if payload_len > 0) {
            let mut again = Vec::new();
            m.emit(&mut again);
            assert_eq!(
                ServerMessage::decode(&again, MAX).ok(),
                Some(Some((m, again.len())))
            );
        }
        data = &data[used..];
    }
    if let Ok(tables) = GlobalTables::decode(nclients, &replies) {
        let reencoded = tables.clients.first().map(|_| {
            crossmpi_impi::wire::label::Label::LAM_ORDER
                .into_iter()
                .map(|l| (l, tables.reply(l)))
                .collect::<BTreeMap<_, _>>()
        });
        if let Some(r) = reencoded {
            assert_eq!(GlobalTables::decode(nclients, &r).as_ref(), Ok(&tables));
        }
    }
}

fn client_machine(data: &[u8]) {
    // The same client as fuzz_client_info in tests/fuzz_seeds.rs, whose seeds drive it.
    let info = ClientInfo::one_host(HostAddr::default(), 1, &[1], 1024);
    let cfg = ClientConfig {
        rank: 0,
        auth: ClientAuth {
            allow_none: true,
            key: Some(5),
        },
        info,
        pipeline: data.first().is_some_and(|b| b & 1 == 1),
        limits: Limits { max_msg: MAX },
    };
    let Ok(mut c) = Client::new(cfg) else { return };
    for chunk in data.chunks(37) {
        if c.handle_input(chunk).is_err() {
            break;
        }
        assert!(c.take_output().len() < 1 << 20);
    }
    let _ = c.handle_close();
}

fuzz_target!(|data: &[u8]| {
    client_messages(data);
    server_messages(data, 1 + u32::from(data.last().copied().unwrap_or(0) % 32));
    let _ = AuthReply::decode(data);
    let _ = decode_auth_key(data);
    let _ = HostHandshake::decode(data, 64, 3);
    client_machine(data);
});
