//! The startup relay fed arbitrary bytes from both sides: the first byte of every
//! chunk says which side sent it and how long it is. It must never panic, and the
//! private ports are given as soon as it asks for them, as the I/O loop does.
#![no_main]

use crossmpi_impi::wire::addr::HostAddr;
use crossmpi_impi::wire::Limits;
use crossmpi_impi_relay::rewrite::RelayPlace;
use crossmpi_impi_relay::startup::{StartupEvent, StartupRelay};
use crossmpi_impi_relay::trunk::{TrunkAddrs, TrunkMode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let place = RelayPlace {
        me: 1,
        trunks: vec![TrunkAddrs {
            global: HostAddr([9; 16]),
            global_port: 4000,
            private: HostAddr([10; 16]),
        }],
        mode: TrunkMode::Destination,
        encrypt: false,
        survive: true,
    };
    let mut relay = StartupRelay::new(place, Limits { max_msg: 1 << 16 });
    let mut rest = data;
    while let Some((&ctl, tail)) = rest.split_first() {
        let len = usize::from(ctl & 0x7f).min(tail.len());
        let (chunk, tail) = tail.split_at(len);
        rest = tail;
        let result = if ctl & 0x80 == 0 {
            relay.handle_inside(chunk)
        } else {
            relay.handle_server(chunk)
        };
        if result.is_err() {
            return;
        }
        let _ = (relay.take_to_inside(), relay.take_to_server());
        while let Some(ev) = relay.poll_event() {
            if let StartupEvent::Joined { nclients } = ev {
                let ports = (0..nclients).map(|c| 5000 + c as u16).collect();
                if relay.set_private_ports(vec![ports]).is_err() {
                    return;
                }
            }
        }
    }
    let _ = (relay.inside_closed(), relay.server_closed());
});
