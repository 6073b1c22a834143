//! Files opened by threads standing in for processes: collective I/O, views, shared
//! pointers and data representations, checked against the bytes in the file.

use crossmpi_core::datatype::{Basic, Datatype};
use crossmpi_core::userbuf::UserBuf;
use crossmpi_io::amode::{CREATE, RDWR};
use crossmpi_io::team::Team;
use crossmpi_io::{At, File, IoResult};
use std::sync::{Arc, Barrier, Mutex};

struct Shared {
    barrier: Barrier,
    /// Blocks in flight: `slots[from][to]`.
    slots: Mutex<Vec<Vec<Vec<u8>>>>,
}

struct ThreadTeam {
    rank: usize,
    nodes: Vec<u32>,
    shared: Arc<Shared>,
}

impl ThreadTeam {
    fn post(&self, blocks: Vec<Vec<u8>>) {
        self.shared.slots.lock().unwrap()[self.rank] = blocks;
        self.shared.barrier.wait();
    }
    fn take(&self, from: usize, to: usize) -> Vec<u8> {
        self.shared.slots.lock().unwrap()[from][to].clone()
    }
}

impl Team for ThreadTeam {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.nodes.len()
    }
    fn nodes(&self) -> Vec<u32> {
        self.nodes.clone()
    }
    fn barrier(&self, _: &'static str) -> IoResult<()> {
        self.shared.barrier.wait();
        Ok(())
    }
    fn allgather(&self, _: &'static str, mine: &[u8]) -> IoResult<Vec<u8>> {
        self.post(vec![mine.to_vec()]);
        let all = (0..self.size()).flat_map(|i| self.take(i, 0)).collect();
        self.shared.barrier.wait();
        Ok(all)
    }
    fn bcast(&self, _: &'static str, root: usize, data: &mut [u8]) -> IoResult<()> {
        self.post(vec![data.to_vec()]);
        data.copy_from_slice(&self.take(root, 0));
        self.shared.barrier.wait();
        Ok(())
    }
    fn alltoallv(&self, _: &'static str, send: &[&[u8]], recv: &mut [&mut [u8]]) -> IoResult<()> {
        self.post(send.iter().map(|s| s.to_vec()).collect());
        for (i, r) in recv.iter_mut().enumerate() {
            r.copy_from_slice(&self.take(i, self.rank));
        }
        self.shared.barrier.wait();
        Ok(())
    }
}

/// Runs `body(rank, team)` on `n` threads (nodes as given) and returns their results.
fn run<T: Send + 'static>(
    nodes: &[u32],
    body: impl Fn(usize, Box<dyn Team>) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let n = nodes.len();
    let shared = Arc::new(Shared {
        barrier: Barrier::new(n),
        slots: Mutex::new(vec![Vec::new(); n]),
    });
    let body = Arc::new(body);
    let threads: Vec<_> = (0..n)
        .map(|rank| {
            let team = ThreadTeam {
                rank,
                nodes: nodes.to_vec(),
                shared: shared.clone(),
            };
            let body = body.clone();
            std::thread::spawn(move || body(rank, Box::new(team)))
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

fn temp(name: &str) -> String {
    let p = std::env::temp_dir().join(format!("crossmpi-io-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p.display().to_string()
}

fn ints(v: &mut [i32]) -> UserBuf {
    UserBuf::new(
        v.as_mut_ptr() as usize,
        v.len() as u64,
        Datatype::basic(Basic::Int),
    )
}

/// Rank r owns blocks r, r+n, r+2n, ... of `block` ints: the interleaved pattern.
fn interleaved_view(f: &mut File, n: usize, block: u64) {
    let int = Datatype::basic(Basic::Int);
    let ft = Datatype::contiguous(block, &int).unwrap();
    let ft = Datatype::resized(&ft, 0, (block * 4 * n as u64) as i64).unwrap();
    let disp = f.team().rank() as u64 * block * 4;
    f.set_view("set_view", Some(disp), int, ft, "native")
        .unwrap();
}

fn check_collective(
    path: String,
    nodes: &'static [u32],
    buffer: &str,
    two_phase: &str,
    atomic: bool,
) {
    std::env::set_var("CROSSMPI_IO_BUFFER", buffer);
    std::env::set_var("CROSSMPI_IO_TWO_PHASE", two_phase);
    let (n, block, blocks) = (nodes.len(), 3u64, 50usize);
    let p = path.clone();
    run(nodes, move |rank, team| {
        let mut f = File::open_with("open", team, None, &p, RDWR | CREATE).unwrap();
        interleaved_view(&mut f, n, block);
        f.set_atomicity("set_atomicity", atomic).unwrap();
        let mut data: Vec<i32> = (0..blocks * block as usize)
            .map(|i| (rank * 100_000 + i) as i32)
            .collect();
        let w = f
            .write("write_all", At::Individual, &ints(&mut data), true)
            .unwrap();
        assert_eq!(w, data.len() as u64 * 4);
        let mut back = vec![0i32; data.len()];
        let r = f
            .read("read_all", At::Offset(0), &ints(&mut back), true)
            .unwrap();
        assert_eq!((r, &back), (w, &data));
        f.close("close").unwrap();
    });
    let bytes = std::fs::read(&path).unwrap();
    let got: Vec<i32> = bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got.len(), n * blocks * block as usize);
    for (i, v) in got.iter().enumerate() {
        let (b, within) = (i / block as usize, i % block as usize);
        let (rank, k) = (b % n, b / n);
        assert_eq!(
            *v as usize,
            rank * 100_000 + k * block as usize + within,
            "int {i}"
        );
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn collective_writes_and_reads_through_aggregators() {
    check_collective(temp("two-phase"), &[0, 0, 1, 1], "4096", "always", false);
    // Atomic mode locks around the system calls, not around the exchange.
    check_collective(temp("atomic"), &[0, 0, 1, 1], "4096", "always", true);
    check_collective(temp("one-node"), &[0, 0, 0], "1048576", "auto", false);
    check_collective(temp("direct"), &[0, 1, 2, 3], "4096", "never", true);
}

#[test]
fn shared_pointer_and_ordered_access() {
    let path = temp("shared");
    let p = path.clone();
    run(&[0, 0, 0], move |rank, team| {
        let mut f = File::open_with("open", team, None, &p, RDWR | CREATE).unwrap();
        let int = Datatype::basic(Basic::Int);
        f.set_view("set_view", Some(0), int.clone(), int, "external32")
            .unwrap();
        let mut mine = vec![rank as i32 + 1; rank + 1];
        f.write("write_ordered", At::Shared, &ints(&mut mine), true)
            .unwrap();
        f.team().barrier("b").unwrap();
        assert_eq!(f.position_shared("pos").unwrap(), 6);
        f.team().barrier("b").unwrap();
        f.write("write_shared", At::Shared, &ints(&mut [7]), false)
            .unwrap();
        f.team().barrier("b").unwrap();
        assert_eq!(f.position_shared("pos").unwrap(), 9);
        let mut all = vec![0i32; 9];
        f.read("read_at", At::Offset(0), &ints(&mut all), false)
            .unwrap();
        assert_eq!(&all[..6], &[1, 2, 2, 3, 3, 3]);
        assert_eq!(&all[6..], &[7, 7, 7]);
        f.close("close").unwrap();
    });
    // external32 is big-endian in the file.
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..8], &[0, 0, 0, 1, 0, 0, 0, 2]);
    std::fs::remove_file(&path).unwrap();
}
