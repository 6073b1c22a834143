//! What two roots say to each other over a port connection (or a joined socket), sans-IO:
//! business cards and 64-bit values, each in a frame of a 4-byte little-endian length
//! and a body whose first byte names its kind. Decoding never panics: malformed input
//! is an error naming what was wrong.

use std::net::SocketAddr;

/// Longest frame body accepted (a card of one process is about 100 bytes).
pub const MAX_BODY: usize = 16 << 20;

/// A process's business card: how processes of another job reach it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Card {
    /// The process's key, unique among all jobs (`Dynamic::key_of`).
    pub key: u64,
    /// Hash of its node identity (host name and network namespace).
    pub node: u64,
    /// Where its dynamic-connection listener accepts.
    pub addrs: Vec<SocketAddr>,
}

impl Card {
    pub fn encode(&self) -> String {
        let addrs: Vec<String> = self.addrs.iter().map(|a| a.to_string()).collect();
        format!("{:x}|{:x}|{}", self.key, self.node, addrs.join(","))
    }

    pub fn decode(s: &str) -> Result<Card, String> {
        let mut parts = s.split('|');
        let mut hex = |what: &str| {
            let p = parts
                .next()
                .ok_or_else(|| format!("card {s:?} lacks its {what}"))?;
            u64::from_str_radix(p, 16).map_err(|_| format!("card {s:?}: bad {what} {p:?}"))
        };
        let key = hex("key")?;
        let node = hex("node")?;
        let addrs = parts
            .next()
            .ok_or_else(|| format!("card {s:?} lacks its addresses"))?
            .split(',')
            .filter(|a| !a.is_empty())
            .map(|a| {
                a.parse()
                    .map_err(|_| format!("card {s:?}: bad address {a:?}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if parts.next().is_some() {
            return Err(format!("card {s:?} has more than three fields"));
        }
        Ok(Card { key, node, addrs })
    }
}

/// One message between roots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Msg {
    /// The cards of every process of the sender's side, in rank order.
    Cards(Vec<Card>),
    /// A value of the context agreement (or a failure marker, see `FAILED`).
    Value(u64),
}

/// A `Value` that says the sender's side gave up (its root hit an error).
pub const FAILED: u64 = u64::MAX;

impl Msg {
    /// The whole frame: length, kind, body.
    pub fn encode(&self) -> Vec<u8> {
        let body: Vec<u8> = match self {
            Msg::Cards(cards) => {
                let text: Vec<String> = cards.iter().map(Card::encode).collect();
                let mut b = vec![b'C'];
                b.extend_from_slice(text.join("\n").as_bytes());
                b
            }
            Msg::Value(v) => {
                let mut b = vec![b'V'];
                b.extend_from_slice(&v.to_le_bytes());
                b
            }
        };
        let mut out = (body.len() as u32).to_le_bytes().to_vec();
        out.extend_from_slice(&body);
        out
    }

    /// A frame's body (without its length).
    pub fn decode_body(body: &[u8]) -> Result<Msg, String> {
        match body.split_first() {
            Some((b'C', rest)) => {
                let text = std::str::from_utf8(rest).map_err(|_| "cards are not UTF-8")?;
                if text.is_empty() {
                    return Ok(Msg::Cards(Vec::new()));
                }
                Ok(Msg::Cards(
                    text.split('\n')
                        .map(Card::decode)
                        .collect::<Result<_, _>>()?,
                ))
            }
            Some((b'V', rest)) => {
                let v: [u8; 8] = rest
                    .try_into()
                    .map_err(|_| format!("a value of {} bytes, not 8", rest.len()))?;
                Ok(Msg::Value(u64::from_le_bytes(v)))
            }
            Some((k, _)) => Err(format!("unknown message kind {k:#04x}")),
            None => Err("an empty message".into()),
        }
    }
}

/// Splits a byte stream into messages.
#[derive(Default)]
pub struct Decoder {
    buf: Vec<u8>,
}

impl Decoder {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete message, `Ok(None)` if more bytes are needed.
    pub fn next_msg(&mut self) -> Result<Option<Msg>, String> {
        let Some(len) = self.buf.get(..4) else {
            return Ok(None);
        };
        let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
        if len > MAX_BODY {
            return Err(format!("a message of {len} bytes (at most {MAX_BODY})"));
        }
        if self.buf.len() < 4 + len {
            return Ok(None);
        }
        let msg = Msg::decode_body(&self.buf[4..4 + len]);
        self.buf.drain(..4 + len);
        msg.map(Some)
    }
}

/// A port name: `crossmpi:tcp:ADDR[,ADDR...]`, the addresses the port's listener accepts
/// on (interface addresses first, loopback last).
pub const PORT_PREFIX: &str = "crossmpi:tcp:";

pub fn port_name(addrs: &[SocketAddr]) -> String {
    let a: Vec<String> = addrs.iter().map(|a| a.to_string()).collect();
    format!("{PORT_PREFIX}{}", a.join(","))
}

pub fn parse_port(name: &str) -> Result<Vec<SocketAddr>, String> {
    let rest = name
        .strip_prefix(PORT_PREFIX)
        .ok_or_else(|| format!("does not start with {PORT_PREFIX:?}"))?;
    let addrs = rest
        .split(',')
        .map(|a| {
            a.parse()
                .map_err(|_| format!("{a:?} is not an IP address and port"))
        })
        .collect::<Result<Vec<SocketAddr>, _>>()?;
    if addrs.is_empty() {
        return Err("names no address".into());
    }
    Ok(addrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(key: u64) -> Card {
        Card {
            key,
            node: 0xfeed,
            addrs: vec![
                "10.0.0.1:5000".parse().unwrap(),
                "127.0.0.1:5000".parse().unwrap(),
            ],
        }
    }

    #[test]
    fn messages_round_trip_split_anywhere() {
        let msgs = vec![
            Msg::Cards(vec![card(1), card(u64::MAX - 1)]),
            Msg::Value(42),
            Msg::Cards(Vec::new()),
            Msg::Value(FAILED),
        ];
        let bytes: Vec<u8> = msgs.iter().flat_map(Msg::encode).collect();
        for cut in 0..bytes.len() {
            let mut d = Decoder::default();
            let mut got = Vec::new();
            for chunk in [&bytes[..cut], &bytes[cut..]] {
                d.push(chunk);
                while let Some(m) = d.next_msg().unwrap() {
                    got.push(m);
                }
            }
            assert_eq!(got, msgs);
        }
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        for body in [
            &b""[..],
            b"X",
            b"V1234",
            b"C\xff\xfe",
            b"Czz|1|",
            b"C1|2|nowhere",
            b"C1|2",
            b"C1|2|10.0.0.1:5|extra",
        ] {
            let mut frame = (body.len() as u32).to_le_bytes().to_vec();
            frame.extend_from_slice(body);
            let mut d = Decoder::default();
            d.push(&frame);
            assert!(d.next_msg().is_err(), "{body:?}");
        }
        let mut d = Decoder::default();
        d.push(&u32::MAX.to_le_bytes());
        assert!(d.next_msg().is_err());
        // Arbitrary bytes: errors or waits, never panics.
        let mut x = 0x1234_5678u32;
        for _ in 0..2000 {
            let mut d = Decoder::default();
            let junk: Vec<u8> = (0..(x % 40))
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    (x >> 16) as u8
                })
                .collect();
            d.push(&(junk.len() as u32).to_le_bytes());
            d.push(&junk);
            let _ = d.next_msg();
        }
    }

    #[test]
    fn port_names_round_trip_and_reject_garbage() {
        let addrs: Vec<SocketAddr> = vec![
            "192.168.1.2:4000".parse().unwrap(),
            "127.0.0.1:4000".parse().unwrap(),
        ];
        assert_eq!(parse_port(&port_name(&addrs)).unwrap(), addrs);
        for bad in [
            "",
            "tcp://1.2.3.4:5",
            "crossmpi:tcp:",
            "crossmpi:tcp:1.2.3.4",
            "crossmpi:tcp:x:1,",
        ] {
            assert!(parse_port(bad).is_err(), "{bad:?}");
        }
    }
}
