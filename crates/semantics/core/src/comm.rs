//! Groups and communicators.

use crate::slab::Id;
use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::sync::Arc;

pub type CommId = Id;

/// Every member's world rank and shared-memory index (see [`Comm::local_team`]).
pub type LocalTeam = Box<[(u32, usize)]>;

/// `MPI_UNDEFINED` (MPI-5.0 ABI value).
pub const UNDEFINED: i32 = -32766;

/// An ordered set of processes, as world ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub members: Vec<u32>,
}

impl Group {
    pub fn new(members: Vec<u32>) -> Arc<Group> {
        Arc::new(Group { members })
    }

    pub fn size(&self) -> usize {
        self.members.len()
    }

    /// Rank of world rank `w` in the group, if a member.
    pub fn rank_of(&self, w: u32) -> Option<usize> {
        self.members.iter().position(|&m| m == w)
    }

    pub fn world_rank(&self, rank: usize) -> u32 {
        self.members[rank]
    }
}

/// A cached attribute's value, of the two kinds the standard tells apart (MPI-4.0 section
/// 19.3.7, "Attributes"): an address, as C sets it, or an integer, as Fortran sets it,
/// which C reads through a pointer to where it is stored. The ABI layer gives each
/// language its view.
pub enum AttributeValue {
    /// The pointer C set.
    Address(usize),
    /// The integer Fortran set (an `MPI_ATTR_PUT` `INTEGER` sign-extended), boxed so that
    /// the pointer C is given stays valid while the attribute is set.
    Integer(Box<isize>),
}

/// A communicator. Context `context` carries point-to-point traffic and `context + 1`
/// the collectives, so user messages never match internal ones.
pub struct Comm {
    pub context: u64,
    pub group: Arc<Group>,
    /// This process's rank in `group`.
    pub rank: usize,
    /// The remote group of an intercommunicator.
    pub remote: Option<Arc<Group>>,
    pub name: String,
    /// The error handler, as an id the ABI layer interprets.
    pub errhandler: u32,
    /// Cached attributes: keyval -> (value, when it was set), owned by the ABI layer (it
    /// runs the callbacks, and deletes in reverse order of setting at `MPI_Finalize`).
    pub attributes: BTreeMap<i32, (AttributeValue, u64)>,
    /// Node of each member (index into the runtime's node list), for node-aware
    /// collectives and `MPI_COMM_TYPE_SHARED`.
    pub nodes: Arc<Vec<u32>>,
    /// Site (cluster) index of every group rank (see `Runtime::site_of`).
    pub sites: Arc<Vec<u32>>,
    /// Sequence number of collectives started on this communicator; nonblocking
    /// collectives use it to keep their messages apart.
    pub coll_seq: u64,
    /// The process topology (`MPI_Cart_create`, ...), if any.
    pub topology: Option<Arc<crate::topo::Topology>>,
    /// Info hints set by `MPI_Comm_set_info` / `MPI_Comm_dup_with_info` (key, value).
    pub hints: BTreeMap<String, String>,
    /// Every member's world rank and shared-memory index when all of them share this
    /// process's node and site, else `None`: found by the first small collective's light
    /// path (coll/light.rs) and kept, since neither routes nor sites change in a job.
    pub local_team: OnceCell<Option<LocalTeam>>,
}

impl Comm {
    pub fn size(&self) -> usize {
        self.group.size()
    }

    pub fn coll_context(&self) -> u64 {
        self.context + 1
    }

    /// Size of the group messages go to: the remote group of an intercommunicator.
    pub fn peer_group(&self) -> &Arc<Group> {
        self.remote.as_ref().unwrap_or(&self.group)
    }

    /// For collectives over an intercommunicator: the world rank of the other group's
    /// leader. Each side's leader is its rank 0 (as in dup and merge).
    pub fn remote_leader(&self) -> Option<u32> {
        self.remote.as_ref().map(|g| g.world_rank(0))
    }

    pub fn is_inter(&self) -> bool {
        self.remote.is_some()
    }
}
