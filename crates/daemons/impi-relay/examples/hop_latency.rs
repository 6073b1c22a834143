//! What a relay hop adds to the latency, on loopback: two simulated clusters of one
//! host each ping-pong 0-byte DATA packets directly (GC-GC), through one relay (PC-GC)
//! and through two (PC-PC, plain and with `-encrypt`), with the real IMPI server and
//! relays of this crate. Prints the median and mean half round trip of each and the
//! latency added per hop (from the medians, which other load on the machine disturbs
//! least). A benchmark, not a test.
//!
//!   cargo run --release -p crossmpi-impi-relay --example hop_latency [ROUND_TRIPS]

#[allow(dead_code)] // the shared test fixtures: this benchmark uses a few
#[path = "../tests/common/mod.rs"]
mod common;

use common::{dance, end_host, start_encrypted_trunks, startup, two_client_job, Cluster, TIMEOUT};
use crossmpi_impi::wire::packet::{PacketHeader, PacketRepr, PacketType, HEADER_LEN};
use crossmpi_impi_relay::topology::proc_ids;
use crossmpi_impi_relay::trunk::TrunkMode;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::Instant;

/// One cluster's host: `rounds` round trips, started by client 0; returns client 0's
/// half round trips in microseconds.
fn host(rank: u32, addr: SocketAddr, key: Option<u64>, rounds: usize) -> Result<Vec<f64>, String> {
    let mut c = Cluster::new(rank, 1, false);
    c.key = key;
    // Distinct pids: without a relay nothing renames colliding identities.
    c.first_pid += i64::from(rank);
    let (tables, mut client, mut agent) = startup(&c, addr)?;
    let (_, _, mut sock) = dance(&c, &tables)?.pop().ok_or("no connection")?;
    sock.set_nodelay(true).map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(TIMEOUT))
        .map_err(|e| e.to_string())?;
    let procs = proc_ids(&tables);
    let me = rank as usize;
    let ping = PacketRepr::control(PacketType::Data, procs[me], procs[1 - me]).emit();
    let mut got = [0u8; HEADER_LEN];
    let mut half = Vec::with_capacity(rounds);
    let mut exchange = |first: bool| -> std::io::Result<()> {
        if first {
            sock.write_all(&ping)?;
            sock.read_exact(&mut got)
        } else {
            sock.read_exact(&mut got)?;
            sock.write_all(&ping)
        }
    };
    for _ in 0..rounds {
        let t = Instant::now();
        exchange(rank == 0).map_err(|e| e.to_string())?;
        half.push(t.elapsed().as_secs_f64() * 1e6 / 2.0);
    }
    let p = PacketRepr::parse(&PacketHeader::new_checked(&got[..]).unwrap(), 0)
        .map_err(|e| e.to_string())?;
    if p.dest != procs[me] {
        return Err(format!(
            "client {rank}: the last packet went to {:?}",
            p.dest
        ));
    }
    end_host(&mut sock, &mut client, &mut agent)?;
    Ok(half)
}

/// Median and mean half round trip with the given clients behind relays (encrypting
/// with `key`).
fn measure(relayed: [bool; 2], key: Option<u64>, rounds: usize) -> (f64, f64) {
    let mut half = two_client_job(
        relayed,
        key,
        |rank, server| {
            start_encrypted_trunks(
                rank,
                server,
                1,
                TrunkMode::Destination,
                256 << 10,
                key,
                None,
            )
        },
        |rank, addr| std::thread::spawn(move || host(rank, addr, key, rounds)),
    )
    .swap_remove(0);
    half.sort_by(f64::total_cmp);
    let mean = half.iter().sum::<f64>() / half.len() as f64;
    (half[half.len() / 2], mean)
}

fn main() {
    let rounds = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20000usize);
    let cases = [
        ("GC-GC   ", 0, [false, false], None),
        ("PC-GC   ", 1, [true, false], None),
        ("PC-PC   ", 2, [true, true], None),
        ("PC-PC -e", 2, [true, true], Some(0x5eed)),
    ];
    println!(
        "case      relays  median_us  mean_us   ({rounds} round trips, 0-byte DATA, loopback)"
    );
    let mut medians = Vec::new();
    for (name, relays, relayed, key) in cases {
        let (median, mean) = measure(relayed, key, rounds);
        println!("{name}  {relays:>6}  {median:>9.1}  {mean:>7.1}");
        medians.push(median);
    }
    println!(
        "added per relay hop (median): {:.1} us (one relay), {:.1} us (two relays, per hop), \
         {:.1} us (two encrypting relays, per hop)",
        medians[1] - medians[0],
        (medians[2] - medians[0]) / 2.0,
        (medians[3] - medians[0]) / 2.0
    );
}
