//! A plain user-space TCP forwarder: the floor under any relay's hop on a given machine.
//! It accepts one connection on LISTEN, connects to TARGET and copies bytes both ways as
//! they arrive, polling both sockets without sleeping and yielding the processor after
//! an empty poll, as impi-relay does while it spins. It parses nothing, rewrites nothing
//! and keeps no state, so a hop through it costs what every user-space relay pays and no
//! more: a second TCP leg and the forwarding process's turn on a processor. The relay
//! benchmark's part (a) runs its cross-cluster ping-pong through this beside impi-relay
//! (docs/impi-relay.md, "The floor of a user-space hop"). A benchmark tool, not part of
//! the relay.
//!
//!   plain_forwarder LISTEN_ADDR:PORT TARGET_ADDR:PORT
//!
//! Prints `ready` once it listens; ends when either side closes its connection.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [listen, target] = args.as_slice() else {
        eprintln!("usage: plain_forwarder LISTEN_ADDR:PORT TARGET_ADDR:PORT");
        std::process::exit(2);
    };
    if let Err(e) = run(listen, target) {
        eprintln!("plain_forwarder: {e}");
        std::process::exit(1);
    }
}

fn run(listen: &str, target: &str) -> Result<(), String> {
    let listener = TcpListener::bind(listen).map_err(|e| format!("bind {listen}: {e}"))?;
    println!("ready");
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    let (inside, from) = listener.accept().map_err(|e| format!("accept: {e}"))?;
    let outside = TcpStream::connect(target).map_err(|e| format!("connect {target}: {e}"))?;
    let socks = [inside, outside];
    for s in &socks {
        s.set_nodelay(true).map_err(|e| e.to_string())?;
        s.set_nonblocking(true).map_err(|e| e.to_string())?;
    }
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let mut moved = false;
        for (side, sock) in socks.iter().enumerate() {
            match (&*sock).read(&mut buf) {
                Ok(0) => return Ok(()),
                Ok(n) => {
                    send_all(&socks[1 - side], &buf[..n])
                        .map_err(|e| format!("write ({from} side {side}): {e}"))?;
                    moved = true;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => return Err(format!("read ({from} side {side}): {e}")),
            }
        }
        if !moved {
            std::thread::yield_now();
        }
    }
}

/// Writes all of `bytes` to a nonblocking socket, yielding while it is full.
fn send_all(mut sock: &TcpStream, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        match sock.write(bytes) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::yield_now(),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
