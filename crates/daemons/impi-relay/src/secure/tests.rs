use super::*;

const KEY: u64 = 0x1234_5678_9abc_def0;

fn pair(dial_key: u64, accept_key: u64) -> (SecureChannel, SecureChannel) {
    (
        SecureChannel::new(JobKey::from_impi_key(dial_key), Role::Dialer, [1; 16]),
        SecureChannel::new(JobKey::from_impi_key(accept_key), Role::Acceptor, [2; 16]),
    )
}

/// Everything `ch` has to send, as written to a socket; returns the bytes and the
/// plaintext count the writes completed.
fn drain(ch: &mut SecureChannel) -> (Vec<u8>, usize) {
    let mut wire = Vec::new();
    let mut done = 0;
    loop {
        let out = ch.pending_out().to_vec();
        if out.is_empty() {
            return (wire, done);
        }
        // Write in two pieces: a record is only done with its last byte.
        let half = out.len() / 2;
        wire.extend_from_slice(&out);
        assert_eq!(
            ch.on_written(half),
            if half == out.len() { ch.out_plain } else { 0 }
        );
        done += ch.on_written(out.len() - half);
    }
}

/// Feeds `wire` to `ch` in `chunk`-byte reads, taking the plaintext as it opens.
fn feed(ch: &mut SecureChannel, wire: &[u8], chunk: usize) -> Result<Vec<u8>, String> {
    let mut plain = Vec::new();
    let mut rest = wire;
    loop {
        while !ch.plaintext().is_empty() {
            assert!(
                ch.read_space().is_none(),
                "no reading while plaintext waits"
            );
            let p = ch.plaintext().to_vec();
            // Taken in two steps, as a router with little room would.
            let take = p.len().div_ceil(2);
            plain.extend_from_slice(&p[..take]);
            ch.consume(take)?;
            plain.extend_from_slice(&p[take..]);
            ch.consume(p.len() - take)?;
        }
        if rest.is_empty() {
            return Ok(plain);
        }
        let space = ch.read_space().expect("room once the plaintext is taken");
        let n = chunk.min(rest.len()).min(space.len());
        space[..n].copy_from_slice(&rest[..n]);
        rest = &rest[n..];
        ch.on_read(n)?;
    }
}

/// Exchanges hellos and key confirmations between `d` and `a`.
fn handshake(d: &mut SecureChannel, a: &mut SecureChannel) {
    let (dh, _) = drain(d);
    let (ah, _) = drain(a);
    assert_eq!(dh.len(), HELLO_LEN);
    assert!(feed(a, &dh, 7).unwrap().is_empty());
    assert!(feed(d, &ah, 7).unwrap().is_empty());
    assert!(d.is_open() && a.is_open());
    // The key confirmations: empty records.
    let (dc, _) = drain(d);
    let (ac, _) = drain(a);
    assert_eq!(dc.len(), RECORD_HEADER + TAG_LEN);
    assert!(feed(a, &dc, 3).unwrap().is_empty());
    assert!(feed(d, &ac, 3).unwrap().is_empty());
}

/// Seals all of `data` on `ch`, returning the wire bytes.
fn seal_all(ch: &mut SecureChannel, data: &[u8]) -> Vec<u8> {
    let mut wire = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let n = ch.seal(&data[at..]);
        assert!(n > 0 && n <= MAX_RECORD);
        assert_eq!(ch.seal(&data[at + n..]), 0, "one record at a time");
        let (w, done) = drain(ch);
        assert_eq!(
            done, n,
            "a record's plaintext counts once its bytes are written"
        );
        wire.extend_from_slice(&w);
        at += n;
    }
    wire
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
}

#[test]
fn both_directions_carry_the_bytes_in_bounded_records() {
    let (mut d, mut a) = pair(KEY, KEY);
    assert_eq!(d.seal(b"early"), 0, "nothing is sealed before the hellos");
    handshake(&mut d, &mut a);
    let big = pattern(3 * MAX_RECORD + 5);
    let wire = seal_all(&mut d, &big);
    assert_eq!(wire.len(), big.len() + 4 * (RECORD_HEADER + TAG_LEN));
    assert!(!wire.windows(64).any(|w| big.windows(64).any(|b| b == w)));
    for chunk in [1, 1000, usize::MAX] {
        let (mut d, mut a) = pair(KEY, KEY);
        handshake(&mut d, &mut a);
        let wire = seal_all(&mut d, &big);
        assert_eq!(feed(&mut a, &wire, chunk).unwrap(), big);
        let back = pattern(100);
        let wire = seal_all(&mut a, &back);
        assert_eq!(feed(&mut d, &wire, chunk).unwrap(), back);
        assert!(a.on_eof().is_ok() && d.on_eof().is_ok());
    }
}

#[test]
fn directions_and_connections_have_their_own_keys() {
    let keys = direction_keys(&JobKey::from_impi_key(KEY), &[1; 16], &[2; 16]);
    assert_ne!(keys.0, keys.1);
    let other = direction_keys(&JobKey::from_impi_key(KEY), &[1; 16], &[3; 16]);
    assert_ne!(keys.0, other.0);
    let other = direction_keys(&JobKey::from_impi_key(KEY + 1), &[1; 16], &[2; 16]);
    assert_ne!(keys.0, other.0);
}

fn session() -> (SecureChannel, SecureChannel, Vec<u8>) {
    let (mut d, mut a) = pair(KEY, KEY);
    handshake(&mut d, &mut a);
    let mut wire = seal_all(&mut d, b"first record");
    wire.extend(seal_all(&mut d, b"second record"));
    (d, a, wire)
}

const FIRST: usize = RECORD_HEADER + 12 + TAG_LEN;

fn fails(result: Result<Vec<u8>, String>, why: &str) {
    let e = result.expect_err("must drop the connection");
    assert!(e.contains(why), "{e}");
}

#[test]
fn tampered_records_fail() {
    for at in [RECORD_HEADER, RECORD_HEADER + 5, FIRST - 1] {
        let (_, mut a, mut wire) = session();
        wire[at] ^= 0x40;
        fails(feed(&mut a, &wire, usize::MAX), "does not authenticate");
    }
    // A length changed within the limit: the associated data no longer matches.
    let (_, mut a, mut wire) = session();
    wire[3] -= 1;
    fails(feed(&mut a, &wire, usize::MAX), "does not authenticate");
    let (_, mut a, mut wire) = session();
    wire[1] = 0x7f;
    fails(feed(&mut a, &wire, usize::MAX), "more than 16384");
}

#[test]
fn truncated_streams_fail() {
    let (_, mut a, wire) = session();
    assert_eq!(feed(&mut a, &wire[..FIRST], 9).unwrap(), b"first record");
    assert!(
        a.on_eof().is_ok(),
        "a close between records is the router's to judge"
    );
    let (_, mut a, wire) = session();
    assert_eq!(
        feed(&mut a, &wire[..FIRST + 10], 9).unwrap(),
        b"first record"
    );
    assert!(a.on_eof().unwrap_err().contains("truncated"));
    let (mut d, _) = pair(KEY, KEY);
    let (hello, _) = drain(&mut d);
    let (_, mut a) = pair(KEY, KEY);
    feed(&mut a, &hello[..10], 100).unwrap();
    assert!(a.on_eof().unwrap_err().contains("handshake"));
}

#[test]
fn replayed_and_reordered_records_fail() {
    let (_, mut a, wire) = session();
    let mut replayed = wire[..FIRST].to_vec();
    replayed.extend_from_slice(&wire[..FIRST]);
    fails(feed(&mut a, &replayed, usize::MAX), "record 2 does not");
    let (_, mut a, wire) = session();
    let mut swapped = wire[FIRST..].to_vec();
    swapped.extend_from_slice(&wire[..FIRST]);
    fails(feed(&mut a, &swapped, usize::MAX), "record 1 does not");
    // A dropped record: the next one is out of sequence.
    let (_, mut a, wire) = session();
    fails(
        feed(&mut a, &wire[FIRST..], usize::MAX),
        "record 1 does not",
    );
}

#[test]
fn a_recorded_connection_does_not_replay_into_a_new_one() {
    let (mut d, mut a) = pair(KEY, KEY);
    let (hello, _) = drain(&mut d);
    feed(&mut a, &hello, usize::MAX).unwrap();
    feed(&mut d, &drain(&mut a).0, usize::MAX).unwrap();
    let mut recorded = drain(&mut d).0;
    recorded.extend(seal_all(&mut d, b"packet"));
    // The same dialer bytes to an acceptor with other random bytes.
    let mut fresh = SecureChannel::new(JobKey::from_impi_key(KEY), Role::Acceptor, [9; 16]);
    let mut replay = hello.clone();
    replay.extend_from_slice(&recorded);
    fails(feed(&mut fresh, &replay, usize::MAX), "record 0 does not");
}

#[test]
fn reflected_records_fail() {
    let (mut d, _) = pair(KEY, KEY);
    let (hello, _) = drain(&mut d);
    // A man in the middle answers the dialer with its own hello, then its own records.
    feed(&mut d, &hello, usize::MAX).unwrap();
    let confirm = drain(&mut d).0;
    fails(feed(&mut d, &confirm, usize::MAX), "record 0 does not");
}

#[test]
fn a_wrong_key_fails_at_the_first_record() {
    let (mut d, mut a) = pair(KEY, KEY ^ 1);
    feed(&mut a, &drain(&mut d).0, usize::MAX).unwrap();
    // The acceptor's hello and key confirmation: the dialer fails on the latter.
    fails(
        feed(&mut d, &drain(&mut a).0, usize::MAX),
        "IMPI_AUTH_KEY differ",
    );
}

#[test]
fn a_peer_without_encryption_is_named() {
    let (_, mut a) = pair(KEY, KEY);
    // An IMPI host index and a packet header, as a relay without -encrypt sends.
    let mut plain = 3u32.to_be_bytes().to_vec();
    plain.extend_from_slice(&[0; 124]);
    fails(
        feed(&mut a, &plain, usize::MAX),
        "not a relay started with -encrypt",
    );
    let (mut d, mut a) = pair(KEY, KEY);
    let mut hello = drain(&mut d).0;
    hello[7] = 2;
    fails(feed(&mut a, &hello, usize::MAX), "version 2");
}

#[test]
fn relays_agree_on_encryption_or_name_the_client() {
    use crossmpi_impi::wire::addr::HostAddr;
    use crossmpi_impi::wire::tables::{ClientInfo, GlobalTables, Version};
    let client = |marked: bool| {
        let mut c = ClientInfo::one_host(HostAddr([1; 16]), 5000, &[1], 1024);
        if marked {
            c.versions.push(Version {
                major: ENCRYPT_MAJOR,
                minor: VERSION,
            });
        }
        c
    };
    let tables = |marks: &[bool]| GlobalTables {
        clients: marks.iter().map(|&m| client(m)).collect(),
    };
    assert_eq!(
        agreed_encryption(0, &tables(&[true, true]), Some(true)),
        Ok(true)
    );
    assert_eq!(
        agreed_encryption(1, &tables(&[false, false]), None),
        Ok(false)
    );
    let e = agreed_encryption(0, &tables(&[true, false]), Some(true)).unwrap_err();
    assert!(e.contains("client 1 does not encrypt"), "{e}");
    let e = agreed_encryption(1, &tables(&[true, false]), None).unwrap_err();
    assert!(e.contains("client 0's relay encrypts"), "{e}");
    // Marks stripped (or added) on the way through the server: trunk 0 knows better.
    let e = agreed_encryption(0, &tables(&[false, false]), Some(true)).unwrap_err();
    assert!(e.contains("lack this relay's encryption mark"), "{e}");
    let e = agreed_encryption(0, &tables(&[true, true]), Some(false)).unwrap_err();
    assert!(e.contains("carry this relay's encryption mark"), "{e}");
}
