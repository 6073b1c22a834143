//! The runtime of one MPI process: built by `MPI_Init`, kept behind one lock at
//! `MPI_THREAD_MULTIPLE` (a coarse lock makes it correct) and behind a busy flag below
//! it, torn down by `MPI_Finalize`.

use crate::bootstrap::{self, Boot};
use crate::comm::{Comm, CommId, Group};
use crate::config::Config;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::progress::{self, WaitPolicy, Waiter};
use crate::proto::{Route, State};
use crate::route::impi::ImpiRoute;
use crate::route::shm::ShmRoute;
use crate::route::tcp::TcpRoute;
use crate::slab::Slab;
use crossmpi_pmi::Client;
use std::cell::{Cell, UnsafeCell};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// `MPI_THREAD_MULTIPLE` (MPI-5.0 ABI value).
pub const THREAD_MULTIPLE: i32 = 4096;

pub struct Runtime {
    pub cfg: Config,
    pub rank: u32,
    pub size: u32,
    pub st: State,
    pub shm: Option<ShmRoute>,
    pub tcp: Option<TcpRoute>,
    pub impi: Option<ImpiRoute>,
    /// The IMPI server connection, on the agent of each cluster of an IMPI job.
    impi_server: Option<crate::route::impi::startup::ServerLink>,
    /// IMPI host index of every world rank (an IMPI job), else the node index.
    pub host_of: Arc<Vec<u32>>,
    /// `MPI_TAG_UB`: the largest tag every cluster accepts.
    pub tag_ub: i32,
    pub pmi: Option<Client>,
    pub comms: Slab<Comm>,
    pub world: CommId,
    pub self_comm: CommId,
    /// Node index of every world rank.
    pub node_of: Arc<Vec<u32>>,
    /// This process's node has more of the job's ranks than processors
    /// ([`crate::bootstrap::Boot::node_crowded`]; the same in every rank of the node).
    pub node_crowded: bool,
    /// The ranks of this process's node are bound to processors
    /// ([`crate::bootstrap::Boot::node_bound`]; the same in every rank of the node).
    pub node_bound: bool,
    /// Site (cluster) index of every world rank.
    pub site_of: Arc<Vec<u32>>,
    pub impi_coll: ImpiColl,
    /// The next context id this process may hand out (every communicator takes two).
    pub next_context: u64,
    pub thread_level: i32,
    pub appnum: i32,
    pub universe_size: Option<usize>,
    /// The buffer attached for buffered-mode sends.
    pub bsend_buffer: Option<crate::p2p::BsendBuffer>,
    /// Nonblocking collectives in progress.
    pub colls: crate::coll::sched::Active,
    /// `MPI_Comm_idup` agreements in progress, and those over until their requests
    /// collect them.
    pub idups: crate::comm_idup::Running,
    /// Ports, and the processes of other jobs in the process table.
    pub dynamic: crate::dynamic::Dynamic,
    /// User code progress met, to run once the call lets the runtime go
    /// ([`Runtime::defer`]).
    deferred: Vec<UserCall>,
    wait_policy: WaitPolicy,
    /// The run of nonblocking calls that found nothing to do ([`Runtime::poll`]).
    polls: Waiter,
}

/// What the IMPI clients of a multi-cluster job agreed for collectives (IMPI draft
/// section on collectives): the defaults of IMPI version 0.0 in a single-cluster job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImpiColl {
    /// Up to this many client masters a collective uses linear algorithms, above it a
    /// binomial tree (`IMPI_C_COLL_MAXLINEAR`).
    pub maxlinear: usize,
    /// Messages of at least this many bytes use the long protocols
    /// (`IMPI_C_COLL_XSIZE`).
    pub xsize: u64,
    /// Every client is crossmpi, so its WAN-aware algorithms may replace IMPI's.
    pub all_crossmpi: bool,
    /// Largest message the route between sites sends eagerly (IMPI's agreed data length,
    /// else crossmpi's TCP eager limit): the WAN-aware algorithms cut longer messages
    /// between sites into pieces of this size, so that no crossing waits a round trip
    /// for a rendezvous.
    pub wide_eager: u64,
}

impl Default for ImpiColl {
    fn default() -> ImpiColl {
        ImpiColl {
            maxlinear: 4,
            xsize: 1024,
            all_crossmpi: true,
            wide_eager: u64::MAX,
        }
    }
}

/// Life cycle of the MPI library in this process.
const NOT_INITIALIZED: u8 = 0;
const INITIALIZED: u8 = 1;
const FINALIZED: u8 = 2;
static PHASE: AtomicU8 = AtomicU8::new(NOT_INITIALIZED);
static HOME: Home = Home {
    lock: Mutex::new(()),
    locking: AtomicBool::new(true),
    busy: AtomicBool::new(false),
    deferring: AtomicBool::new(false),
    runtime: UnsafeCell::new(None),
};

/// Where the runtime lives. At `MPI_THREAD_MULTIPLE`, or with the one-sided progress
/// thread, every call takes `lock`. Below `MPI_THREAD_MULTIPLE` the application promises
/// that no two threads are inside MPI at once (MPI-5.0 section 11.6.3, as Open MPI and
/// MPICH also take no lock there), so a call only marks the runtime `busy` with plain
/// stores: the lock's two locked instructions per call were full barriers that made the
/// call wait for its previous write into a peer's shared-memory ring to reach the other
/// core (2 ranks, 8 B, medians of 5, with the broadcast's prefetches: broadcast stream
/// 62 -> 54 ns, allreduce 159 -> 155; docs/architecture.md).
struct Home {
    lock: Mutex<()>,
    /// Whether calls take `lock`: true until `MPI_Init` has chosen, then fixed.
    locking: AtomicBool,
    /// A call that did not take `lock` is inside (catches a call from inside a call).
    busy: AtomicBool,
    /// The runtime holds deferred user code: read by every call on its way out, so
    /// it sits on this hot line rather than in the runtime's cold fields (there it cost
    /// the 2-rank 8-byte broadcast about 1 ns of its 48).
    deferring: AtomicBool,
    runtime: UnsafeCell<Option<Runtime>>,
}

// SAFETY: `runtime` is reached only through a `Guard`, which holds `lock` or, when calls
// do not lock, exists only while `busy` is set; below MPI_THREAD_MULTIPLE the
// application's own synchronisation orders one thread's calls before another's.
unsafe impl Sync for Home {}

/// Access to the runtime for the length of one call (or of one stretch of a wait).
struct Guard {
    /// Held at `MPI_THREAD_MULTIPLE`; None when the call set `busy` instead.
    locked: Option<MutexGuard<'static, ()>>,
}

impl Guard {
    fn holding(locked: MutexGuard<'static, ()>) -> Guard {
        Guard {
            locked: Some(locked),
        }
    }
}

impl std::ops::Deref for Guard {
    type Target = Option<Runtime>;
    fn deref(&self) -> &Option<Runtime> {
        // SAFETY: this guard is the only access to the runtime now (see `Home`).
        unsafe { &*HOME.runtime.get() }
    }
}

impl std::ops::DerefMut for Guard {
    fn deref_mut(&mut self) -> &mut Option<Runtime> {
        // SAFETY: this guard is the only access to the runtime now (see `Home`).
        unsafe { &mut *HOME.runtime.get() }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.locked.is_none() {
            HOME.busy.store(false, Ordering::Release);
        }
    }
}

pub fn is_initialized() -> bool {
    PHASE.load(Ordering::Acquire) != NOT_INITIALIZED
}

pub fn is_finalized() -> bool {
    PHASE.load(Ordering::Acquire) == FINALIZED
}

fn lock() -> Guard {
    enter().unwrap_or_else(|| {
        crate::fatal(
            "an MPI function was called while another MPI call of this process was running \
             (from a callback inside MPI, or from a second thread below MPI_THREAD_MULTIPLE)",
        )
    })
}

/// The runtime's guard, unless a call that does not lock is inside already (a lock is
/// waited for).
fn enter() -> Option<Guard> {
    if HOME.locking.load(Ordering::Relaxed) {
        return Some(Guard::holding(
            HOME.lock.lock().unwrap_or_else(|p| p.into_inner()),
        ));
    }
    if HOME.busy.load(Ordering::Relaxed) {
        return None;
    }
    HOME.busy.store(true, Ordering::Relaxed);
    Some(Guard { locked: None })
}

/// The runtime's guard for [`abort`], which must not wait: None while another call holds
/// the lock or is inside.
fn enter_now() -> Option<Guard> {
    if HOME.locking.load(Ordering::Relaxed) {
        return HOME.lock.try_lock().ok().map(Guard::holding);
    }
    enter()
}

/// Initialises the library; returns the thread level provided.
pub fn init(function: &str, required: i32) -> MpiResult<i32> {
    let mut guard = lock();
    if PHASE.load(Ordering::Acquire) != NOT_INITIALIZED {
        return Err(MpiError::context(
            ErrorClass::Other,
            function,
            "MPI is already initialized (or was finalized); it can be initialized only once",
        ));
    }
    let cfg = Config::from_env();
    let boot = bootstrap::boot(&cfg)?;
    let provided = required.clamp(0, THREAD_MULTIPLE);
    *guard = Some(Runtime::new(cfg, boot, provided));
    PHASE.store(INITIALIZED, Ordering::Release);
    // Chosen under the lock, before any later call: they all see the same choice.
    let locking = provided == THREAD_MULTIPLE || crate::rma::progress_thread_requested();
    HOME.locking.store(locking, Ordering::Relaxed);
    drop(guard);
    crate::dynamic::spawn::connect_parent(function)?;
    Ok(provided)
}

/// Runs `f` on the runtime, or fails when MPI is not (or no longer) initialized.
pub fn with<R>(function: &str, f: impl FnOnce(&mut Runtime) -> MpiResult<R>) -> MpiResult<R> {
    let mut guard = lock();
    let r = match guard.as_mut() {
        Some(rt) => f(rt),
        None => Err(not_initialized(function)),
    };
    run_deferred(guard);
    r
}

/// Whether the runtime holds deferred user code ([`Runtime::defer`]).
fn has_deferred() -> bool {
    HOME.deferring.load(Ordering::Relaxed)
}

/// Lets the runtime go and runs the user code progress deferred
/// ([`Runtime::defer`]). Every call passes here, so the common case is one
/// load, inlined, and the rest is out of line.
#[inline(always)]
fn run_deferred(guard: Guard) {
    if has_deferred() {
        run_deferred_now(guard);
    }
}

#[cold]
#[inline(never)]
fn run_deferred_now(mut guard: Guard) {
    HOME.deferring.store(false, Ordering::Relaxed);
    let Some(rt) = guard.as_mut() else {
        return;
    };
    let calls = std::mem::take(&mut rt.deferred);
    drop(guard);
    for call in calls {
        call();
    }
}

pub fn not_initialized(function: &str) -> MpiError {
    let when = if is_finalized() {
        "after MPI_Finalize"
    } else {
        "before MPI_Init"
    };
    MpiError::context(ErrorClass::Other, function, format!("called {when}"))
}

/// Drives progress until `check` returns a value: polls, then sleeps until a route has
/// work. Other threads may enter MPI between polls.
pub fn wait_for<R>(function: &str, check: impl FnMut(&mut Runtime) -> Option<R>) -> MpiResult<R> {
    wait_for_polling(function, &Cell::new(1), check)
}

/// How often a wait whose check polls the shared-memory ring it waits on itself runs
/// full progress, in rounds: a few microseconds at most while nothing yields. A check
/// that does not poll a ring itself must use 1, since only progress completes it.
pub const SELF_POLLED_PROGRESS_EVERY: u32 = 32;

/// Like [`wait_for`] for a `check` that polls the channel it waits on itself (the
/// blocking-receive fast path): full progress runs only every `progress_every` rounds
/// ([`SELF_POLLED_PROGRESS_EVERY`]), so the message is mostly caught by the check rather
/// than queued by progress first. The check may change `progress_every` as it learns
/// whether it polls a channel itself.
pub fn wait_for_polling<R>(
    function: &str,
    progress_every: &Cell<u32>,
    mut check: impl FnMut(&mut Runtime) -> Option<R>,
) -> MpiResult<R> {
    let mut guard = lock();
    let Some(rt) = guard.as_mut() else {
        return Err(not_initialized(function));
    };
    let mut waiter = Waiter::new(rt.wait_policy);
    let multiple = rt.thread_level == THREAD_MULTIPLE;
    let mut round = 0u32;
    loop {
        let rt = guard.as_mut().expect("runtime present while waiting");
        // Check before polling: a check may take what it waits for straight from a
        // transport before progress would queue it.
        if let Some(r) = check(rt) {
            return Ok(r);
        }
        round = round.wrapping_add(1);
        if !round.is_multiple_of(progress_every.get()) {
            // A yielding wait gives the processor away every round, not only when full
            // progress runs: the peers it waits for may need it (ranks outnumber cores).
            waiter.pause();
            continue;
        }
        let progressed = rt.progress();
        if has_deferred() {
            run_deferred_now(guard);
            guard = lock();
            waiter.busy();
            continue;
        }
        if progressed {
            waiter.busy();
        } else if waiter.idle() {
            rt.set_sleeping(true);
            // Deferred user code counts as progress: they run before any sleep.
            let progressed = rt.progress() || has_deferred();
            if let Some(r) = check(rt) {
                rt.set_sleeping(false);
                return Ok(r);
            }
            if !progressed {
                let fds = rt.wait_fds();
                let timeout = if multiple {
                    Duration::from_millis(1)
                } else {
                    Duration::from_millis(100)
                };
                drop(guard);
                progress::sleep_on(&fds, timeout);
                guard = lock();
            }
            if let Some(rt) = guard.as_mut() {
                rt.set_sleeping(false);
            }
            waiter.busy();
            continue;
        }
        if multiple {
            drop(guard);
            std::thread::yield_now();
            guard = lock();
        }
    }
}

/// Ends the library: flushes what is queued, synchronises with every rank, leaves PMI.
pub fn finalize(function: &str) -> MpiResult<()> {
    let world = with(function, |rt| Ok(rt.world))?;
    wait_for(function, |rt| {
        rt.st.peers.iter().all(|p| p.queue.is_empty()).then_some(())
    })?;
    crate::coll::barrier(function, world)?;
    wait_for(function, |rt| {
        rt.st.peers.iter().all(|p| p.queue.is_empty()).then_some(())
    })?;
    // IMPI: FINI on every host connection, then the cluster's agent tells the server
    // once every rank of the cluster is through (a PMI fence).
    with(function, |rt| {
        if let Some(impi) = rt.impi.as_mut() {
            impi.send_fini();
        }
        Ok(())
    })?;
    wait_for(function, |rt| {
        rt.impi.as_ref().is_none_or(|i| i.finished()).then_some(())
    })?;
    let mut guard = lock();
    let mut rt = guard.take().ok_or_else(|| not_initialized(function))?;
    PHASE.store(FINALIZED, Ordering::Release);
    drop(guard);
    if rt.impi.is_some() {
        if let Some(pmi) = rt.pmi.as_mut() {
            pmi.fence()
                .map_err(|e| MpiError::context(ErrorClass::Other, function, format!("PMI: {e}")))?;
        }
        if let Some(server) = rt.impi_server.take() {
            server
                .fini()
                .map_err(|e| MpiError::context(ErrorClass::Other, function, e))?;
        }
    }
    if let Some(pmi) = rt.pmi.as_mut() {
        pmi.finalize()
            .map_err(|e| MpiError::context(ErrorClass::Other, function, format!("PMI: {e}")))?;
    }
    Ok(())
}

/// Ends the whole job (`MPI_Abort`, or a fatal error under `MPI_ERRORS_ARE_FATAL`).
pub fn abort(code: i32, message: &str) -> ! {
    crate::stderr_line(message);
    // Another thread may hold the lock forever (it may be the one waiting on the peer
    // that died), or this abort comes from inside a call; the launcher ends the job when
    // this process exits anyway.
    if let Some(mut guard) = enter_now() {
        if let Some(rt) = guard.as_mut() {
            let linger = Duration::from_millis(rt.cfg.abort_linger_ms);
            if let Some(pmi) = rt.pmi.as_mut() {
                wait_stderr_read(linger);
                let _ = pmi.abort(code, message, linger);
            }
        }
    }
    std::process::exit(if code == 0 { 1 } else { code & 0xff });
}

/// Waits, at most `limit`, until the launcher has read what this process wrote to
/// stderr, when stderr is a pipe: a launcher that ends the job on the abort may close the
/// pipe with the message still in it (Hydra did so in about 1 run in 30), and the user
/// would never learn which rank aborted or why.
fn wait_stderr_read(limit: Duration) {
    let fd = libc::STDERR_FILENO;
    // SAFETY: an all-zero stat is a valid value (plain integers), and fstat only writes
    // into that buffer, which we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 || st.st_mode & libc::S_IFMT != libc::S_IFIFO {
        return;
    }
    let deadline = std::time::Instant::now() + limit;
    loop {
        let mut queued: libc::c_int = 0;
        // SAFETY: FIONREAD on a pipe (either end) writes the count of unread bytes into
        // the int we own.
        if unsafe { libc::ioctl(fd, libc::FIONREAD, &mut queued) } != 0
            || queued == 0
            || std::time::Instant::now() >= deadline
        {
            return;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// User code the runtime met while it ran (a user reduction operator, a generalized
/// request's `query_fn`): it may call MPI, so it runs once the runtime is let go.
pub type UserCall = Box<dyn FnOnce()>;

impl Runtime {
    /// Queues user code to run once the call lets the runtime go: it may call MPI.
    pub fn defer(&mut self, call: UserCall) {
        self.deferred.push(call);
        HOME.deferring.store(true, Ordering::Relaxed);
    }

    fn new(cfg: Config, boot: Boot, thread_level: i32) -> Runtime {
        let Boot {
            rank,
            size,
            pmi,
            peers,
            node_of,
            machine_ranks,
            node_crowded,
            node_bound,
            cpus,
            site_of,
            pids,
            shm,
            tcp,
            impi,
            appnum,
            universe_size,
        } = boot;
        let mut st = State::new(rank, peers, cfg.eager_credit);
        st.pids = pids;
        st.tcp_eager = cfg.tcp_eager;
        // The clusters of an IMPI job share its identity, not their PMI key spaces.
        let impi_job = impi.as_ref().map(|j| j.job);
        let (impi, impi_server, impi_coll, host_of, tag_ub) = match impi {
            Some(j) => {
                st.impi_eager = j.route.tr.max_data;
                if j.coll.all_crossmpi {
                    st.impi_early = cfg.impi_early;
                }
                st.impi_external32 = j.external32;
                (Some(j.route), j.server, j.coll, j.host_of, j.tag_ub)
            }
            None => {
                let coll = ImpiColl {
                    wide_eager: cfg.tcp_eager,
                    ..ImpiColl::default()
                };
                (None, None, coll, node_of.clone(), i32::MAX)
            }
        };
        if let Some(s) = shm.as_ref() {
            st.shm_eager = (s.frame_capacity() - crate::header::HEAD_LEN) as u64;
        }
        st.copy = crate::proto::copy_choice::CopyChoice::new(cfg.shm_cma_min, machine_ranks > cpus);
        let node_of = Arc::new(node_of);
        let site_of = Arc::new(site_of);
        let mut comms = Slab::default();
        let world = comms.insert(Comm {
            context: 0,
            group: Group::new((0..size).collect()),
            rank: rank as usize,
            remote: None,
            name: "MPI_COMM_WORLD".into(),
            errhandler: 0,
            attributes: BTreeMap::new(),
            nodes: node_of.clone(),
            sites: site_of.clone(),
            coll_seq: 0,
            topology: None,
            hints: BTreeMap::new(),
            local_team: Default::default(),
        });
        let self_comm = comms.insert(Comm {
            context: 2,
            group: Group::new(vec![rank]),
            rank: 0,
            remote: None,
            name: "MPI_COMM_SELF".into(),
            errhandler: 0,
            attributes: BTreeMap::new(),
            nodes: Arc::new(vec![node_of[rank as usize]]),
            sites: Arc::new(vec![site_of[rank as usize]]),
            coll_seq: 0,
            topology: None,
            hints: BTreeMap::new(),
            local_team: Default::default(),
        });
        let job = match (impi_job, pmi.as_ref()) {
            (Some(job), _) => job,
            (None, Some(p)) => crate::bootstrap::fnv1a(p.kvsname().as_bytes()),
            (None, None) => crate::bootstrap::fnv1a(
                format!(
                    "{}/{}/{:?}",
                    bootstrap::node_identity(),
                    std::process::id(),
                    std::time::SystemTime::now()
                )
                .as_bytes(),
            ),
        };
        let wait_policy = WaitPolicy::new(cfg.spin_us, cfg.yield_us, machine_ranks, cpus);
        Runtime {
            dynamic: crate::dynamic::Dynamic::new(job, size),
            wait_policy,
            polls: Waiter::new(wait_policy),
            deferred: Vec::new(),
            cfg,
            rank,
            size,
            st,
            shm,
            tcp,
            impi,
            impi_server,
            host_of: Arc::new(host_of),
            tag_ub,
            pmi,
            comms,
            world,
            self_comm,
            node_of,
            node_crowded,
            node_bound,
            site_of,
            impi_coll,
            next_context: 4,
            thread_level,
            appnum,
            universe_size,
            bsend_buffer: None,
            colls: Default::default(),
            idups: Default::default(),
        }
    }

    /// Polls every route once: frames in, queued frames out. True if anything moved.
    pub fn progress(&mut self) -> bool {
        let mut any = false;
        if let Some(shm) = self.shm.as_mut() {
            any |= shm.poll(&mut self.st);
        }
        if let Some(tcp) = self.tcp.as_mut() {
            any |= tcp.poll(&mut self.st);
        }
        if let Some(impi) = self.impi.as_mut() {
            any |= impi.poll(&mut self.st);
        }
        any |= crate::coll::sched::progress(self);
        any |= crate::comm_idup::progress(self);
        any |= crate::rma::progress(self);
        self.flush();
        for req in std::mem::take(&mut self.st.orphaned) {
            self.st.requests.discard(req);
        }
        any
    }

    /// Progress for a nonblocking call (a test or a probe), which a program may call in
    /// a loop until it succeeds: once such calls have found nothing to do for the wait
    /// policy's `yield_after` (at once when ranks outnumber cores), each yields the
    /// processor as a blocking wait does, so the peers the loop waits for get to run.
    /// Below `MPI_THREAD_MULTIPLE` only (the runtime lock is held: under it, a yield
    /// would hold up the process's other threads).
    pub fn poll(&mut self) -> bool {
        let any = self.progress();
        if any {
            self.polls.busy();
        } else if self.thread_level < THREAD_MULTIPLE {
            self.polls.idle();
        }
        any
    }

    /// Writes queued frames of every peer that has some.
    pub fn flush(&mut self) {
        for w in 0..self.st.peers.len() {
            self.flush_peer(w);
        }
        // A split rendezvous's first half is pulled once the request for its second half
        // is written, so that sender and receiver copy at once.
        if self.st.has_pulls() {
            self.st.run_pulls();
            for w in 0..self.st.peers.len() {
                self.flush_peer(w);
            }
        }
    }

    /// Writes what world rank `w`'s route takes of the frames queued to it.
    pub fn flush_peer(&mut self, w: usize) {
        if self.st.peers[w].queue.is_empty() {
            return;
        }
        match self.st.peers[w].route {
            Route::Shm { local } => {
                if let Some(shm) = self.shm.as_mut() {
                    shm.flush(&mut self.st, local);
                }
            }
            Route::Tcp => {
                if let Some(tcp) = self.tcp.as_mut() {
                    tcp.flush(&mut self.st, w as u32);
                }
            }
            Route::Impi => {
                if let Some(impi) = self.impi.as_mut() {
                    impi.flush(&mut self.st, w as u32);
                }
            }
            Route::Local => {}
        }
    }

    fn set_sleeping(&mut self, sleeping: bool) {
        if let Some(shm) = self.shm.as_ref() {
            shm.set_sleeping(sleeping);
        }
        if !sleeping {
            if let Some(tcp) = self.tcp.as_ref() {
                tcp.clear_wakeups();
            }
            if let Some(impi) = self.impi.as_ref() {
                impi.clear_wakeups();
            }
        }
    }

    fn wait_fds(&self) -> Vec<i32> {
        let mut fds = Vec::with_capacity(2);
        if let Some(shm) = self.shm.as_ref() {
            fds.push(shm.doorbell_fd());
        }
        if let Some(tcp) = self.tcp.as_ref() {
            fds.push(tcp.wait_fd());
        }
        if let Some(impi) = self.impi.as_ref() {
            fds.push(impi.wait_fd());
        }
        fds
    }

    pub fn comm(&self, function: &str, id: CommId) -> MpiResult<&Comm> {
        self.comms.get(id).ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Comm,
                function,
                "comm",
                id.index,
                "freed or never created",
            )
        })
    }

    pub fn comm_mut(&mut self, function: &str, id: CommId) -> MpiResult<&mut Comm> {
        self.comms.get_mut(id).ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Comm,
                function,
                "comm",
                id.index,
                "freed or never created",
            )
        })
    }
}
