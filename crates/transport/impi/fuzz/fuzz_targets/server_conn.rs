//! The server state machine under arbitrary connection events. Input: byte 0 picks the
//! client count, byte 1 the auth policy, then operations of two bytes plus data:
//! `op % 4` = 0 accept, 1 feed `len` bytes to connection `op >> 2`, 2 close it, 3 drain
//! every output. It must never panic, and what it buffers stays bounded.
#![no_main]

use crossmpi_impi::startup::server::{Server, ServerAuth, ServerConfig};
use crossmpi_impi::wire::Limits;
use libfuzzer_sys::fuzz_target;

const MAX: u32 = 1 << 12;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let auth = if data[1] & 1 == 0 {
        ServerAuth::None
    } else {
        ServerAuth::Key(0x1234)
    };
    let mut s = Server::new(ServerConfig {
        nclients: 1 + u32::from(data[0] % 4),
        auth,
        limits: Limits { max_msg: MAX },
    })
    .unwrap();
    let mut conns = Vec::new();
    let mut rest = &data[2..];
    while let [op, len, tail @ ..] = rest {
        let target = conns
            .get(usize::from(op >> 2) % conns.len().max(1))
            .copied();
        rest = tail;
        match op % 4 {
            0 => conns.push(s.accept()),
            1 => {
                let n = usize::from(*len).min(rest.len());
                if let Some(c) = target {
                    s.handle_input(c, &rest[..n]);
                }
                rest = &rest[n..];
            }
            2 => {
                if let Some(c) = target {
                    s.handle_close(c);
                }
            }
            _ => {
                for &c in &conns {
                    // Replies hold at most 14 labels of at most MAX bytes each.
                    assert!(s.take_output(c).len() <= 16 * (MAX as usize + 16));
                    let _ = s.should_close(c);
                }
            }
        }
        while s.poll_event().is_some() {}
        let _ = s.waiting_for();
    }
    assert!(s.open_connections() <= conns.len());
});
