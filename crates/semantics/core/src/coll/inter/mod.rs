//! Collectives over intercommunicators (MPI-2 semantics): data flows from one group to
//! the other. Rooted operations name the root as `MPI_ROOT` in the root's process,
//! `MPI_PROC_NULL` in the rest of its group, and the root's rank in the other group.
//! The groups combine inside themselves first where that saves messages across
//! (barrier, bcast, reduce, allreduce), over the rank-0 leaders; the rest exchange
//! directly with every remote member.

pub mod direct;
pub mod leaders;
