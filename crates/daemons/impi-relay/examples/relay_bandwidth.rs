//! Bandwidth through relays on loopback: client 0's one simulated host streams DATA
//! packets to client 1's through one relay (PC-GC) or two (PC-PC), copying or splicing
//! (`CROSSMPI_RELAY_SPLICE` 0 / 1), and PC-PC with `-encrypt`, with the real IMPI server
//! and relays of this crate. Every case and packet size is run REPEATS times,
//! interleaved; prints the median MB/s (payload bytes received per second, from the
//! first packet's arrival to the last's), the ratios splice / copy and encrypted /
//! copy, and the CPU time the whole process (hosts, server and relays, all threads of
//! this process) used per GiB in each case, summed over the runs: the hosts' share is
//! the same in every case, so differences are the relays'. A benchmark, not a test.
//!
//!   cargo run --release -p crossmpi-impi-relay --example relay_bandwidth [MB] [REPEATS]

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

/// One cluster's host: client 0 sends `total` payload bytes in packets of `size`,
/// client 1 receives them; returns the receiver's MB/s (0 for the sender).
fn host(
    rank: u32,
    addr: SocketAddr,
    key: Option<u64>,
    size: usize,
    total: usize,
) -> Result<f64, String> {
    let mut c = Cluster::new(rank, 1, false);
    c.key = key;
    c.first_pid += i64::from(rank);
    let (tables, mut client, mut agent) = startup(&c, addr)?;
    let (_, _, mut sock) = dance(&c, &tables)?.pop().ok_or("no connection")?;
    sock.set_read_timeout(Some(TIMEOUT))
        .map_err(|e| e.to_string())?;
    let procs = proc_ids(&tables);
    let me = rank as usize;
    let count = total / size;
    let mut header = [0u8; HEADER_LEN];
    let mut data = vec![0u8; size];
    let mut rate = 0.0;
    if rank == 0 {
        let mut p = PacketRepr::control(PacketType::Data, procs[0], procs[1]);
        p.data_len = size as u32;
        p.msglen = size as u64;
        for i in 0..count {
            data[..8].copy_from_slice(&(i as u64).to_be_bytes());
            sock.write_all(&p.emit())
                .and_then(|_| sock.write_all(&data))
                .map_err(|e| e.to_string())?;
        }
    } else {
        let mut start = None;
        for i in 0..count {
            sock.read_exact(&mut header).map_err(|e| e.to_string())?;
            start.get_or_insert_with(Instant::now);
            let p = PacketRepr::parse(&PacketHeader::new_checked(&header[..]).unwrap(), 8 << 20)
                .map_err(|e| e.to_string())?;
            if p.dest != procs[me] || p.data_len as usize != size {
                return Err(format!("packet {i}: {p:?}"));
            }
            sock.read_exact(&mut data).map_err(|e| e.to_string())?;
            if data[..8] != (i as u64).to_be_bytes() {
                return Err(format!("packet {i} carries the wrong bytes"));
            }
        }
        let secs = start.map_or(0.0, |s| s.elapsed().as_secs_f64());
        // The first packet's payload arrived within the timed span only partly.
        rate = ((count - 1) * size) as f64 / secs / 1e6;
    }
    end_host(&mut sock, &mut client, &mut agent)?;
    Ok(rate)
}

/// How the relays of a case run.
#[derive(Clone, Copy)]
struct Case {
    name: &'static str,
    relayed: [bool; 2],
    key: Option<u64>,
    splice: bool,
}

/// MB/s with the given clients behind relays.
fn measure(case: Case, size: usize, total: usize) -> f64 {
    let start = |rank, server| {
        start_encrypted_trunks(
            rank,
            server,
            1,
            TrunkMode::Destination,
            256 << 10,
            case.key,
            Some(case.splice),
        )
    };
    let key = case.key;
    let host = move |rank, addr| std::thread::spawn(move || host(rank, addr, key, size, total));
    two_client_job(case.relayed, case.key, start, host)[1]
}

/// CPU seconds this process used so far (user + system, all threads), from
/// /proc/self/stat in USER_HZ (100 per second on Linux).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    // After the command name: state, then fields 4.. of proc(5); utime and stime are
    // fields 14 and 15.
    let field = |i: usize| {
        rest.split_whitespace()
            .nth(i - 3)
            .and_then(|x| x.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (field(14) + field(15)) / 100.0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .and_then(|a| a.parse().ok())
            .unwrap_or(default)
    };
    let total = arg(1, 256) << 20;
    let repeats = arg(2, 5);
    let case = |name, relayed, key, splice| Case {
        name,
        relayed,
        key,
        splice,
    };
    let cases = [
        case("PC-GC copy", [false, true], None, false),
        case("PC-GC splice", [false, true], None, true),
        case("PC-PC copy", [true, true], None, false),
        case("PC-PC splice", [true, true], None, true),
        case("PC-PC -encrypt", [true, true], Some(0x5eed), false),
    ];
    let sizes = [4 << 10, 64 << 10, 1 << 20];
    let mut rates = vec![vec![Vec::new(); sizes.len()]; cases.len()];
    let mut cpu = vec![vec![0.0; sizes.len()]; cases.len()];
    for _ in 0..repeats {
        for (c, &case) in cases.iter().enumerate() {
            for (s, &size) in sizes.iter().enumerate() {
                let before = cpu_seconds();
                rates[c][s].push(measure(case, size, total));
                cpu[c][s] += cpu_seconds() - before;
            }
        }
    }
    println!(
        "median MB/s, {} MiB per run, {repeats} interleaved runs, loopback",
        total >> 20
    );
    print!("{:<22}", "case");
    for size in sizes {
        print!("{:>12}", format!("{} KiB", size >> 10));
    }
    println!();
    let medians: Vec<Vec<f64>> = rates
        .into_iter()
        .map(|c| c.into_iter().map(median).collect())
        .collect();
    for (case, m) in cases.iter().zip(&medians) {
        print!("{:<22}", case.name);
        for r in m {
            print!("{r:>12.0}");
        }
        println!();
    }
    for (name, a, b) in [
        ("PC-GC splice/copy", 1, 0),
        ("PC-PC splice/copy", 3, 2),
        ("PC-PC encrypted/copy", 4, 2),
    ] {
        print!("{name:<22}");
        for (x, y) in medians[a].iter().zip(&medians[b]) {
            print!("{:>12.2}", x / y);
        }
        println!();
    }
    println!("CPU seconds per GiB (whole process)");
    let gib = (total * repeats) as f64 / f64::from(1u32 << 30);
    for (case, c) in cases.iter().zip(&cpu) {
        print!("{:<22}", case.name);
        for s in c {
            print!("{:>12.2}", s / gib);
        }
        println!();
    }
}
