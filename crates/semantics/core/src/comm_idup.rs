//! `MPI_Comm_idup`: the context agreement of [`comm_ops`](crate::comm_ops) taken in
//! steps instead of blocking calls, so the call returns at once and the agreement moves
//! on with the progress engine, whichever call drives it: a member waiting in another
//! call (a receive from a member that waits for the new communicator) answers too.
//!
//! Each round's two "largest value among the members" exchanges go through one leader
//! as point-to-point messages on the parent's collective context, under the collective
//! tag the idup took when it started: later steps start when a member tests the request,
//! at different points of its program on different members, so they must not take
//! places in the parent's sequence of collectives. The leader is the group's first
//! member; of an intercommunicator, the first member of the group whose first member
//! has the lower process key, and both groups' members report to it (messages within
//! its group carry the collectives' local-group tag bit, since the ranks that name
//! senders repeat between the groups).

use crate::coll::sched::{take_tag, TAG_LOCAL_GROUP};
use crate::comm::{CommId, Group};
use crate::comm_ops::{claim, claimed, install, propose, settle, spread};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::header::Envelope;
use crate::request::{ReqId, SendMode};
use crate::runtime::{self, Runtime};
use crate::topo::Topology;
use crate::userbuf;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The agreements of this process, by the request that collects each.
#[derive(Default)]
pub struct Running {
    agreeing: Vec<(ReqId, Idup)>,
    over: Vec<(ReqId, MpiResult<CommId>)>,
}

impl Running {
    /// Drives `idup` with the progress engine until request `req` collects it.
    pub fn launch(&mut self, req: ReqId, idup: Idup) {
        self.agreeing.push((req, idup));
    }

    /// The new communicator (or the error) of the agreement of `req`, once it is over.
    pub fn outcome(&mut self, req: ReqId) -> Option<MpiResult<CommId>> {
        let i = self.over.iter().position(|(r, _)| *r == req)?;
        Some(self.over.swap_remove(i).1)
    }
}

/// Takes every step of every agreement whose messages have arrived; true if one ended.
pub fn progress(rt: &mut Runtime) -> bool {
    if rt.idups.agreeing.is_empty() {
        return false;
    }
    let mut agreeing = std::mem::take(&mut rt.idups.agreeing);
    let mut ended = false;
    agreeing.retain_mut(|(req, idup)| {
        let Some(outcome) = idup.advance(rt, "MPI_Comm_idup").transpose() else {
            return true;
        };
        rt.idups.over.push((*req, outcome));
        ended = true;
        false
    });
    rt.idups.agreeing.append(&mut agreeing);
    ended
}

/// A nonblocking duplication in progress.
pub struct Idup {
    parent: CommId,
    group: Arc<Group>,
    /// The remote group of an intercommunicator.
    remote: Option<Arc<Group>>,
    /// This process's rank in its group (it names it in messages to the leader).
    rank: usize,
    role: Role,
    context: u64,
    /// Tells this agreement's retry spread from those of others running at once.
    salt: u64,
    round: u64,
    step: Step,
    exchange: Exchange,
    topology: Option<Arc<Topology>>,
    hints: BTreeMap<String, String>,
}

/// This process's part in every exchange, fixed when the idup starts.
enum Role {
    /// The leader: every other member as (process, rank in its group, message tag).
    Leader(Vec<(u32, usize, i32)>),
    /// Any other member: the leader's process and the tag of messages with it.
    Member { leader: u32, tag: i32 },
}

/// Which of a round's two exchanges runs.
enum Step {
    /// The members' proposals, for the candidate.
    Proposing,
    /// Whether any member could not claim `candidate`.
    Refusing { candidate: u64, claimed_it: bool },
}

/// One exchange in flight: every member's value to the leader, the largest back.
struct Exchange {
    /// The messages' 8-byte slots: the leader receives the value of the i-th member it
    /// leads into slot 1 + i and sends the largest from slot 0; any other member sends
    /// from slot 0 and receives into slot 1. Boxed: requests point into it while it
    /// moves with `Idup`.
    slots: Box<[[u8; 8]]>,
    reqs: Vec<ReqId>,
    /// The leader's replies are out: the exchange ends once they are sent.
    replying: bool,
}

impl Idup {
    /// Starts duplicating `parent` (`hints` replace its info hints when given).
    pub fn start(
        function: &str,
        parent: CommId,
        hints: Option<BTreeMap<String, String>>,
    ) -> MpiResult<Idup> {
        runtime::with(function, |rt| {
            let c = rt.comm_mut(function, parent)?;
            let tag = take_tag(c);
            let context = c.coll_context();
            let (group, remote, rank) = (c.group.clone(), c.remote.clone(), c.rank);
            let topology = c.topology.clone();
            let hints = hints.unwrap_or_else(|| c.hints.clone());
            let leads_here = remote.as_ref().is_none_or(|r| {
                rt.dynamic.key_of(group.world_rank(0)) < rt.dynamic.key_of(r.world_rank(0))
            });
            let tag_within = if remote.is_some() {
                tag | TAG_LOCAL_GROUP
            } else {
                tag
            };
            let role = match &remote {
                Some(r) if !leads_here => Role::Member {
                    leader: r.world_rank(0),
                    tag,
                },
                _ if rank != 0 => Role::Member {
                    leader: group.world_rank(0),
                    tag: tag_within,
                },
                _ => {
                    let within = (1..group.size()).map(|r| (group.world_rank(r), r, tag_within));
                    let across = remote
                        .iter()
                        .flat_map(|g| (0..g.size()).map(move |r| (g.world_rank(r), r, tag)));
                    Role::Leader(within.chain(across).collect())
                }
            };
            let mut idup = Idup {
                parent,
                group,
                remote,
                rank,
                role,
                context,
                salt: context ^ tag as u64,
                round: 0,
                step: Step::Proposing,
                exchange: Exchange {
                    slots: Box::new([]),
                    reqs: Vec::new(),
                    replying: false,
                },
                topology,
                hints,
            };
            idup.propose(rt);
            Ok(idup)
        })
    }

    /// Takes every step whose messages have arrived; the new communicator once the
    /// members agreed.
    fn advance(&mut self, rt: &mut Runtime, function: &str) -> MpiResult<Option<CommId>> {
        while let Some(largest) = self.exchanged(rt) {
            match self.step {
                Step::Proposing => {
                    let candidate = largest + spread(self.salt, self.round);
                    let claimed_it = claim(rt.next_context, &mut claimed(), candidate);
                    self.step = Step::Refusing {
                        candidate,
                        claimed_it,
                    };
                    self.exchange(rt, u64::from(!claimed_it));
                }
                Step::Refusing {
                    candidate,
                    claimed_it,
                } => {
                    settle(&mut rt.next_context, &mut claimed(), candidate, claimed_it);
                    if largest == 0 {
                        return self.install(rt, function, candidate).map(Some);
                    }
                    self.round += 1;
                    self.step = Step::Proposing;
                    self.propose(rt);
                }
            }
        }
        Ok(None)
    }

    /// Starts a round: this process's lowest free context id goes to the exchange.
    fn propose(&mut self, rt: &mut Runtime) {
        let mine = propose(rt.next_context, &claimed());
        self.exchange(rt, mine);
    }

    fn install(&self, rt: &mut Runtime, function: &str, context: u64) -> MpiResult<CommId> {
        let (group, remote) = (self.group.clone(), self.remote.clone());
        let new = install(rt, function, self.parent, context, group, remote)?.ok_or_else(|| {
            MpiError::context(
                ErrorClass::Intern,
                function,
                "a member of the parent is not a member of its duplicate",
            )
        })?;
        let c = rt.comm_mut(function, new)?;
        c.topology = self.topology.clone();
        c.hints = self.hints.clone();
        Ok(new)
    }

    /// Starts an exchange of `value`.
    fn exchange(&mut self, rt: &mut Runtime, value: u64) {
        let slots = match &self.role {
            Role::Leader(led) => 1 + led.len(),
            Role::Member { .. } => 2,
        };
        let mut slots = vec![[0u8; 8]; slots].into_boxed_slice();
        slots[0] = value.to_le_bytes();
        self.exchange = Exchange {
            slots,
            reqs: Vec::new(),
            replying: false,
        };
        let e = &mut self.exchange;
        match &self.role {
            Role::Leader(led) => {
                for (i, &(_, rank, tag)) in led.iter().enumerate() {
                    let buf = userbuf::bytes(e.slots[1 + i].as_mut_ptr() as usize, 8);
                    e.reqs
                        .push(rt.st.start_recv(buf, self.context, rank as i32, tag));
                }
            }
            &Role::Member { leader, tag } => {
                let env = Envelope {
                    context: self.context,
                    src: self.rank as i32,
                    tag,
                };
                let out = userbuf::bytes(e.slots[0].as_ptr() as usize, 8);
                e.reqs
                    .push(rt.st.start_send(out, leader, env, SendMode::Standard));
                let reply = userbuf::bytes(e.slots[1].as_mut_ptr() as usize, 8);
                e.reqs.push(rt.st.start_recv(reply, self.context, 0, tag));
            }
        }
        rt.flush();
    }

    /// The exchange's result once it is over.
    fn exchanged(&mut self, rt: &mut Runtime) -> Option<u64> {
        let e = &mut self.exchange;
        if !e.reqs.iter().all(|&r| rt.st.is_done(r)) {
            return None;
        }
        for r in e.reqs.drain(..) {
            rt.st.requests.discard(r);
        }
        let value = |slot: &[u8; 8]| u64::from_le_bytes(*slot);
        let Role::Leader(led) = &self.role else {
            return Some(value(&e.slots[1]));
        };
        let largest = e.slots.iter().map(value).max().unwrap_or(0);
        if e.replying || led.is_empty() {
            return Some(largest);
        }
        // Every value is in: the largest goes back to each member.
        e.slots[0] = largest.to_le_bytes();
        for &(to, _, tag) in led {
            let out = userbuf::bytes(e.slots[0].as_ptr() as usize, 8);
            let env = Envelope {
                context: self.context,
                src: 0,
                tag,
            };
            e.reqs
                .push(rt.st.start_send(out, to, env, SendMode::Standard));
        }
        e.replying = true;
        rt.flush();
        None
    }
}
