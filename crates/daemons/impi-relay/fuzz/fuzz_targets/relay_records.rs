//! The encryption record layer: two relays' channels back to back, driven by a script
//! of operations (seal bytes on one side, carry some of its output to the other, maybe
//! with one bit flipped, take plaintext, close). Whatever the script, nothing panics and
//! the plaintext a side opens is always a prefix of what the other sealed: a flipped bit
//! ends the connection or stays in an unfinished record, it never changes what is
//! handed on.
#![no_main]

use crossmpi_impi_relay::secure::{JobKey, Role, SecureChannel};
use libfuzzer_sys::fuzz_target;

struct Side {
    ch: SecureChannel,
    /// Sealed plaintext, in order; its output bytes not yet carried.
    sealed: Vec<u8>,
    wire: Vec<u8>,
    /// Plaintext the peer opened from this side's records.
    opened: Vec<u8>,
    failed: bool,
}

fn side(role: Role, random: u8) -> Side {
    Side {
        ch: SecureChannel::new(JobKey::from_impi_key(42), role, [random; 16]),
        sealed: Vec::new(),
        wire: Vec::new(),
        opened: Vec::new(),
        failed: false,
    }
}

/// Moves what `from` wrote onto its wire.
fn write(from: &mut Side) {
    loop {
        let out = from.ch.pending_out().to_vec();
        if out.is_empty() {
            return;
        }
        from.wire.extend_from_slice(&out);
        from.ch.on_written(out.len());
    }
}

/// Carries up to `n` wire bytes from `from` to `to` (one bit flipped when `flip`).
fn carry(from: &mut Side, to: &mut Side, n: usize, flip: Option<u8>) {
    if to.failed {
        return;
    }
    let n = n.min(from.wire.len());
    let mut bytes: Vec<u8> = from.wire.drain(..n).collect();
    if let (Some(bit), false) = (flip, bytes.is_empty()) {
        let at = usize::from(bit) % bytes.len();
        bytes[at] ^= 1 << (bit % 8);
    }
    let mut rest = &bytes[..];
    loop {
        if !take(from, to) {
            return;
        }
        if rest.is_empty() {
            return;
        }
        let space = to.ch.read_space().expect("room once the plaintext is taken");
        assert!(!space.is_empty());
        let k = space.len().min(rest.len());
        space[..k].copy_from_slice(&rest[..k]);
        rest = &rest[k..];
        if to.ch.on_read(k).is_err() {
            to.failed = true;
            return;
        }
    }
}

/// Takes what `to` opened of `from`'s records; false once `to` failed.
fn take(from: &mut Side, to: &mut Side) -> bool {
    while !to.ch.plaintext().is_empty() {
        let p = to.ch.plaintext().to_vec();
        from.opened.extend_from_slice(&p);
        assert!(from.sealed.starts_with(&from.opened), "opened what was not sealed");
        if to.ch.consume(p.len()).is_err() {
            to.failed = true;
            return false;
        }
    }
    true
}

fuzz_target!(|data: &[u8]| {
    let mut a = side(Role::Dialer, 1);
    let mut b = side(Role::Acceptor, 2);
    for op in data.chunks(3) {
        let [code, x, y] = [op[0], *op.get(1).unwrap_or(&0), *op.get(2).unwrap_or(&0)];
        let (from, to) = if code & 1 == 0 {
            (&mut a, &mut b)
        } else {
            (&mut b, &mut a)
        };
        match code >> 1 & 3 {
            0 => {
                let len = usize::from(x) * 97 + usize::from(y);
                let plain: Vec<u8> = (0..len).map(|i| (i as u8) ^ y).collect();
                let mut at = 0;
                write(from);
                while at < plain.len() {
                    let n = from.ch.seal(&plain[at..]);
                    if n == 0 {
                        break;
                    }
                    from.sealed.extend_from_slice(&plain[at..at + n]);
                    at += n;
                    write(from);
                }
            }
            1 => {
                write(from);
                carry(from, to, usize::from(x) * 64 + usize::from(y), None);
            }
            2 => {
                write(from);
                carry(from, to, usize::from(x) + 1, Some(y));
            }
            _ => {
                let _ = to.ch.on_eof();
            }
        }
    }
});
