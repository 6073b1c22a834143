//! `MPI_Win_allocate_shared`: one segment per node, mapped by every member, each
//! member's part following the previous one's (rounded to a cache line), so loads and
//! stores reach the other members' memory directly, and so do the one-sided calls of the
//! members (`direct.rs`). `MPI_Win_allocate` lays out each node's members the same way.

use super::{install, windows, Direct, Flavor, Memory, Remote, WinId};
use crate::comm::CommId;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::runtime;
use std::ffi::CString;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// Alignment of every member's part (a cache line, so members never share one).
const PART_ALIGN: u64 = 64;

/// The mapped node segment of a shared window.
pub(super) struct Segment {
    addr: usize,
    len: usize,
    /// Byte offset of every member's part.
    offsets: Vec<u64>,
    /// World rank of every member, in the order of `offsets`.
    members: Vec<u32>,
}

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: addr/len are exactly the mapping `map` created, unmapped only here.
        unsafe { libc::munmap(self.addr as *mut libc::c_void, self.len) };
    }
}

/// Every member's part: offsets of `sizes` laid out one after another, and the total.
fn layout(sizes: &[u64]) -> (Vec<u64>, u64) {
    let mut at = 0u64;
    let offsets = sizes
        .iter()
        .map(|&s| {
            let o = at;
            at = at.saturating_add(s.div_ceil(PART_ALIGN) * PART_ALIGN);
            o
        })
        .collect();
    (offsets, at)
}

fn os_error(function: &str, what: &str) -> MpiError {
    MpiError::context(
        ErrorClass::RmaShared,
        function,
        format!("{what}: {}", std::io::Error::last_os_error()),
    )
}

/// Opens (rank 0 creates) the named segment and maps `len` bytes of it.
fn map(function: &str, name: &CString, len: usize, create: bool) -> MpiResult<usize> {
    let flags = if create {
        libc::O_CREAT | libc::O_EXCL | libc::O_RDWR
    } else {
        libc::O_RDWR
    };
    // SAFETY: a NUL-terminated name; the descriptor is closed below on every path.
    let fd = unsafe { libc::shm_open(name.as_ptr(), flags, 0o600) };
    if fd < 0 {
        return Err(os_error(function, "shm_open of the window segment"));
    }
    // SAFETY: fd is the descriptor opened above; the mapping is shared, read-write, of
    // the segment's size (set by its creator before the others open it).
    let addr = unsafe {
        if create && libc::ftruncate(fd, len as libc::off_t) != 0 {
            libc::close(fd);
            return Err(os_error(function, "sizing the window segment"));
        }
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        );
        libc::close(fd);
        p
    };
    if addr == libc::MAP_FAILED {
        return Err(os_error(function, "mapping the window segment"));
    }
    Ok(addr as usize)
}

/// Collective over `node` (members of one node): maps a segment holding every
/// member's part of `size` bytes.
fn map_node(function: &str, node: CommId, size: u64) -> MpiResult<Segment> {
    let (rank, members) = runtime::with(function, |rt| {
        let c = rt.comm(function, node)?;
        Ok((c.rank, c.group.members.clone()))
    })?;
    let all = crate::coll::allgather_bytes(function, node, &size.to_le_bytes())?;
    let sizes: Vec<u64> = all
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let (offsets, total) = layout(&sizes);
    let len = total.max(1) as usize;
    static SERIAL: AtomicU32 = AtomicU32::new(0);
    let mut name = [0u8; 64];
    let creator = if rank == 0 {
        let s = format!(
            "/crossmpi-win-{}-{}",
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::Relaxed)
        );
        let made = map(
            function,
            &CString::new(s.clone()).expect("no NUL"),
            len,
            true,
        );
        if made.is_ok() {
            name[..s.len()].copy_from_slice(s.as_bytes());
        }
        Some(made)
    } else {
        None
    };
    // Everyone learns the name (empty if the creator failed, so all fail together).
    crate::coll::bcast_bytes(function, node, 0, &mut name)?;
    let n = CString::new(name.split(|&b| b == 0).next().unwrap_or(&[])).expect("no NUL");
    let mapped = match creator {
        Some(r) => r,
        None if n.as_bytes().is_empty() => Err(MpiError::context(
            ErrorClass::RmaShared,
            function,
            "the node's first member could not create the window segment",
        )),
        None => map(function, &n, len, false),
    };
    crate::coll::barrier(function, node)?;
    if rank == 0 && !n.as_bytes().is_empty() {
        // SAFETY: a NUL-terminated name; every member has mapped the segment by now.
        unsafe { libc::shm_unlink(n.as_ptr()) };
    }
    Ok(Segment {
        addr: mapped?,
        len,
        offsets,
        members,
    })
}

impl Segment {
    /// This process's address of the part of the member with world rank `world`.
    fn part_of(&self, world: u32) -> Option<usize> {
        let i = self.members.iter().position(|&m| m == world)?;
        Some(self.addr + self.offsets[i] as usize)
    }
}

/// Makes a window over a node segment: `comm` is the window's communicator, `node`
/// the members of this node among it. Every member of the node gets direct access to
/// the others' parts (see `Window::direct`).
fn install_segment(
    function: &str,
    comm: CommId,
    node: CommId,
    size: u64,
    disp_unit: i64,
    flavor: Flavor,
) -> MpiResult<(WinId, usize)> {
    let disp_unit = super::check_disp_unit(function, disp_unit)?;
    let segment = map_node(function, node, size)?;
    let me = runtime::with(function, |rt| Ok(rt.rank))?;
    let base = segment.part_of(me).expect("a member of its node");
    let memory = Memory::Fixed {
        base,
        size: size as usize,
    };
    let mine = Remote {
        base: base as u64,
        size,
        disp_unit,
    };
    let win = install(function, comm, mine, memory, flavor)?;
    let segment = Arc::new(segment);
    runtime::with(function, |rt| {
        // With shared memory switched off (CROSSMPI_TRANSPORT=tcp) only the memory of
        // MPI_Win_allocate_shared is accessed directly, as the application asked.
        let direct = flavor == Flavor::Shared || rt.shm.is_some();
        if let Some(w) = windows().get_mut(win) {
            if direct {
                w.direct = Some(Arc::new(Direct {
                    bases: w
                        .group
                        .members
                        .iter()
                        .map(|&world| segment.part_of(world))
                        .collect(),
                    remote: w.remote.clone(),
                    flavor,
                    outstanding: AtomicUsize::new(0),
                    _segment: segment.clone(),
                }));
            }
            w.shared = Some(segment);
        }
        Ok(())
    })?;
    Ok((win, base))
}

/// `MPI_Win_allocate_shared`: collective over `comm`, whose members must share a node.
/// Returns the window and this member's base address.
pub fn allocate_shared(
    function: &str,
    comm: CommId,
    size: u64,
    disp_unit: i64,
) -> MpiResult<(WinId, usize)> {
    let one_node = runtime::with(function, |rt| {
        let c = rt.comm(function, comm)?;
        let node = |w: u32| rt.node_of[w as usize];
        let first = node(c.group.world_rank(0));
        Ok(c.group.members.iter().all(|&w| node(w) == first))
    })?;
    if !one_node {
        return Err(MpiError::arg(
            ErrorClass::RmaShared,
            function,
            "comm",
            comm.index,
            "its members run on several nodes; split it with MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) first",
        ));
    }
    install_segment(function, comm, comm, size, disp_unit, Flavor::Shared)
}

/// `MPI_Win_allocate`: the memory of each node's members is one shared segment, so
/// puts and gets between them are plain copies (no message, no target involvement).
pub fn allocate(
    function: &str,
    comm: CommId,
    size: u64,
    disp_unit: i64,
) -> MpiResult<(WinId, usize)> {
    let node = crate::comm_ops::split_shared(function, comm, 0)?
        .expect("every process belongs to its node");
    let made = install_segment(function, comm, node, size, disp_unit, Flavor::Allocate);
    crate::comm_ops::free(function, node)?;
    made
}

/// `MPI_Win_shared_query`: (size, disp_unit, base address in this process) of `rank`'s
/// part; `MPI_PROC_NULL` gives the first member with a non-empty part. Any flavor may be
/// asked (MPI-4.1): a part this process does not map (another node's, or any part of a
/// window over memory the application gave) is size 0 at address 0 (NULL). An empty part
/// this process maps keeps its place in the segment (where it would begin in contiguous
/// memory, as Open MPI gives it); the C layer makes it NULL under
/// `alloc_shared_noncontig`, as Open MPI and MPICH do.
pub fn shared_query(function: &str, win: WinId, rank: i32) -> MpiResult<(u64, u64, usize)> {
    super::with_win(function, win, |_, w| {
        let n = w.remote.len();
        let r = if rank == crate::request::PROC_NULL {
            (0..n).find(|&r| w.remote[r].size > 0).unwrap_or(0)
        } else {
            super::member(function, "rank", n, rank)?
        };
        let remote = w.remote[r];
        let mapped = w
            .shared
            .as_ref()
            .and_then(|seg| seg.part_of(w.group.world_rank(r)));
        Ok(match mapped {
            Some(addr) => (remote.size, remote.disp_unit, addr),
            None => (0, remote.disp_unit, 0),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_follow_each_other_on_cache_lines() {
        let (offsets, total) = layout(&[10, 0, 64, 65]);
        assert_eq!(offsets, vec![0, 64, 64, 128]);
        assert_eq!(total, 256);
    }
}
