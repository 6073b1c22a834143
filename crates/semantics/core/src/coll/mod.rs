//! Collective operations over the point-to-point protocols, on the communicator's
//! collective context (so they never match user messages).
//!
//! This module holds the byte-level building blocks the runtime itself needs
//! (communicator creation agrees on context ids with them, `MPI_Finalize` synchronises
//! with a barrier); each algorithm is its own small function.

use crate::comm::{CommId, Group};
use crate::error::MpiResult;
use crate::header::Envelope;
use crate::request::{ReqId, SendMode};
use crate::runtime::{self, Runtime};
use crate::userbuf;
use std::sync::Arc;

/// Tags of the internal collectives on the collective context.
#[derive(Clone, Copy)]
#[repr(i32)]
pub enum CollTag {
    Barrier = 1,
    Bcast = 2,
    Allgather = 3,
}

/// What a collective needs to know about its communicator.
#[derive(Clone)]
pub struct Members {
    pub context: u64,
    pub rank: usize,
    pub group: Arc<Group>,
}

impl Members {
    pub fn size(&self) -> usize {
        self.group.size()
    }

    pub fn of(function: &str, comm: CommId) -> MpiResult<Members> {
        runtime::with(function, |rt| {
            let c = rt.comm(function, comm)?;
            Ok(Members {
                context: c.coll_context(),
                rank: c.rank,
                group: c.group.clone(),
            })
        })
    }

    fn send(&self, rt: &mut Runtime, to: usize, tag: CollTag, data: &[u8]) -> ReqId {
        let env = Envelope {
            context: self.context,
            src: self.rank as i32,
            tag: tag as i32,
        };
        let buf = userbuf::bytes(data.as_ptr() as usize, data.len());
        rt.st
            .start_send(buf, self.group.world_rank(to), env, SendMode::Standard)
    }

    fn recv(&self, rt: &mut Runtime, from: usize, tag: CollTag, data: &mut [u8]) -> ReqId {
        let buf = userbuf::bytes(data.as_mut_ptr() as usize, data.len());
        rt.st.start_recv(buf, self.context, from as i32, tag as i32)
    }
}

/// Waits for every request and releases them.
fn wait_all(function: &str, reqs: Vec<ReqId>) -> MpiResult<()> {
    runtime::with(function, |rt| {
        rt.flush();
        Ok(())
    })?;
    runtime::wait_for(function, |rt| {
        if reqs.iter().all(|&r| rt.st.is_done(r)) {
            for &r in &reqs {
                rt.st.requests.remove(r);
            }
            Some(())
        } else {
            None
        }
    })
}

/// Exchanges with two peers at once: sends `out` to `to`, receives `into` from `from`.
fn exchange(
    function: &str,
    m: &Members,
    tag: CollTag,
    to: usize,
    out: &[u8],
    from: usize,
    into: &mut [u8],
) -> MpiResult<()> {
    let reqs = runtime::with(function, |rt| {
        Ok(vec![m.send(rt, to, tag, out), m.recv(rt, from, tag, into)])
    })?;
    wait_all(function, reqs)
}

/// Dissemination barrier: ceil(log2 n) rounds of one message each way.
pub fn barrier(function: &str, comm: CommId) -> MpiResult<()> {
    let m = Members::of(function, comm)?;
    let n = m.size();
    let mut k = 1;
    while k < n {
        exchange(
            function,
            &m,
            CollTag::Barrier,
            (m.rank + k) % n,
            &[],
            (m.rank + n - k) % n,
            &mut [],
        )?;
        k *= 2;
    }
    Ok(())
}

/// Binomial-tree broadcast of `data` from `root`.
pub fn bcast_bytes(function: &str, comm: CommId, root: usize, data: &mut [u8]) -> MpiResult<()> {
    let m = Members::of(function, comm)?;
    let n = m.size();
    let vrank = (m.rank + n - root) % n;
    let mut mask = 1;
    while mask < n {
        if vrank & mask != 0 {
            let parent = (vrank - mask + root) % n;
            let r = runtime::with(function, |rt| Ok(m.recv(rt, parent, CollTag::Bcast, data)))?;
            wait_all(function, vec![r])?;
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    let mut reqs = Vec::new();
    while mask > 0 {
        if vrank + mask < n {
            let child = (vrank + mask + root) % n;
            reqs.push(runtime::with(function, |rt| {
                Ok(m.send(rt, child, CollTag::Bcast, data))
            })?);
        }
        mask >>= 1;
    }
    wait_all(function, reqs)
}

/// Ring allgather of equal blocks: returns every member's `mine`, in rank order.
pub fn allgather_bytes(function: &str, comm: CommId, mine: &[u8]) -> MpiResult<Vec<u8>> {
    let m = Members::of(function, comm)?;
    let (n, b) = (m.size(), mine.len());
    let mut all = vec![0u8; n * b];
    all[m.rank * b..(m.rank + 1) * b].copy_from_slice(mine);
    let (right, left) = ((m.rank + 1) % n, (m.rank + n - 1) % n);
    for step in 0..n.saturating_sub(1) {
        let send_block = (m.rank + n - step) % n;
        let recv_block = (m.rank + n - step - 1) % n;
        let out = all[send_block * b..(send_block + 1) * b].to_vec();
        exchange(
            function,
            &m,
            CollTag::Allgather,
            right,
            &out,
            left,
            &mut all[recv_block * b..(recv_block + 1) * b],
        )?;
    }
    Ok(all)
}
