"""Issue 7, first part: clusters with private addresses join an IMPI job through one
IMPI relay each, on the lab grid of examples/lab/grid-relay.toml (two private clusters
using the same 10.0.0.0/24 behind front-ends with NAT and a firewall, two global
clusters).

- C test programs of tests/mpi across a private and a global cluster (PC-GC: the
  private one is client 0, so the global cluster's hosts must reach it: only the relay
  makes that possible) and across the two private clusters (PC-PC), 2+2 ranks; the
  program checks its own answers and prints "OK <name>".
- Application kernels across PC-GC give the same result line as one cluster running
  the same ranks.
- A subset at 5 ms one-way WAN delay.
- Without the relay the same PC-GC job cannot run: the global cluster's hosts cannot
  open connections into the private cluster, and every part of the job ends with a
  message.
- Trunking, on examples/lab/grid-trunk.toml (private p with 4 front-ends, private q with
  2, global g; 4 ranks per cluster): C test programs PC-GC with 1, 2 and 4 relays for p
  and PC-PC with 1+1, 2+2 and 4+2 (destination mode), and PC-GC 4 and PC-PC 4+2 in
  source mode; the cg kernel through 4+2 trunks (both modes) giving the one cluster
  answer; and an all-to-all exchange between the clusters (bench/crossbw.c, 128
  MiB) PC-GC with 2 and 4 trunks and PC-PC with 4+2 (both modes), whose bytes, counted on every
  front-end's WAN interface, spread over the front-ends that run a relay (each at least
  half its fair share) and not over the others.
- A relay's death it cannot survive: a job running a loop of collectives through
  relays (PC-GC and PC-PC with 1 trunk) whose relay process is killed (SIGKILL, by
  PID) mid-job ends: every other process exits non-zero within 10 s, each cluster's
  output names a connection that closed, and no rank is left running.
- A relay's death it survives: with 2 trunks (PC-GC, PC-PC, destination and source
  mode), trunk 1, or trunk 0 (which also holds the cluster's connection to the IMPI
  server), killed while the ranks exchange 256 KiB per pair in rounds of
  all-to-all (the collective loop's `alltoall` mode, every element checked): the job
  finishes, every
  process but the dead relay exits 0, the program prints its OK line, and the ranks of
  the cluster that lost the relay say which relay took over.

The relay's added latency is measured by crates/daemons/impi-relay/bench/relayjob.py
(docs/impi-relay.md). About 3 minutes on 2 cores. Needs root and crossmpi installed in
CROSSMPI_PREFIX.
"""

import contextlib
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from conftest import unique_name

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PREFIX = os.environ.get("CROSSMPI_PREFIX", os.path.join(ROOT, "build", "install"))
sys.path.insert(0, os.path.join(ROOT, "crates", "daemons", "impi-relay", "bench"))

from relayjob import LAB_FILE, run_relayed, start_relayed, wan_bytes  # noqa: E402

TRUNK_LAB_FILE = "grid-trunk.toml"
from gridjob import GridJobs, grid_lab  # noqa: E402

RUN_TIMEOUT = 90
PROGRAMS = ["sendrecv", "p2p_modes", "p2p_order", "p2p_wildcards", "probe", "cancel", "waittest", "dtype_p2p",
            "coll_basic", "coll_nonblocking", "coll_inter", "intercomm", "topo_cart"]
PAIRS = {
    "pcgc": [("p", 2, True), ("g", 2, False)],
    "pcpc": [("p", 2, True), ("q", 2, True)],
}
DELAYED = [("coll_basic", "pcgc"), ("p2p_modes", "pcpc"), ("cancel", "pcgc")]
KERNELS = ["c/cg", "c/isort"]


def build(out, src, extra=()):
    exe = os.path.join(out, os.path.basename(src).rsplit(".", 1)[0])
    p = subprocess.run([os.path.join(PREFIX, "bin", "mpicc"), "-O2", "-o", exe, src, *extra], capture_output=True,
                       text=True)
    if p.returncode != 0:
        pytest.fail(f"building {src} failed:\n{p.stdout}{p.stderr}")
    return exe


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    if not os.access(os.path.join(PREFIX, "bin", "impi-relay"), os.X_OK):
        pytest.fail(f"{PREFIX}/bin/impi-relay is missing: install crossmpi first (make install)")
    out = str(tmp_path_factory.mktemp("relay-bin"))
    built = {name: build(out, os.path.join(ROOT, "tests", "mpi", name + ".c")) for name in PROGRAMS}
    for k in KERNELS:
        built[k] = build(out, os.path.join(ROOT, "tests", "kernels", k + ".c"), ["-lm"])
    return built


@pytest.fixture(scope="module")
def grids(tmp_path_factory):
    """grids(delay) -> GridJobs of the relay lab at that WAN delay, up on first use."""
    work = str(tmp_path_factory.mktemp("relay-work"))
    with contextlib.ExitStack() as stack:
        labs = {}

        def get(delay):
            if delay not in labs:
                lab = stack.enter_context(grid_lab(LAB_FILE, delay, unique_name("r")))
                labs[delay] = GridJobs(lab, PREFIX, work)
            return labs[delay]

        yield get


def check_ok(job, name):
    assert not job.timed_out, f"{name} did not finish within {RUN_TIMEOUT} s\n{job.describe()}"
    assert job.ok, f"{name} failed\n{job.describe()}"
    assert re.search(rf"^OK {name}$", job.stdout, re.M), f"no 'OK {name}' line\n{job.describe()}"


CASES = [(name, pair, 0) for name in PROGRAMS for pair in PAIRS] + [(n, p, 5) for n, p in DELAYED]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}ms")
def test_program_through_relays(case, binaries, grids):
    name, pair, delay = case
    job = run_relayed(grids(delay), PAIRS[pair], [binaries[name]], timeout=RUN_TIMEOUT)
    check_ok(job, name)


@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_through_a_relay_gives_the_one_cluster_answer(kernel, binaries, grids):
    jobs = grids(0)
    name = kernel.split("/")[1]
    job = run_relayed(jobs, PAIRS["pcgc"], [binaries[kernel]], timeout=RUN_TIMEOUT)
    check_ok(job, name)
    one = jobs.run_flat([4], [binaries[kernel]], timeout=RUN_TIMEOUT)
    assert one.ok, one.describe()
    result = [re.findall(rf"^{name}: .*$", j.stdout, re.M) for j in (job, one)]
    assert len(result[0]) == 1 and result[0] == result[1], f"through the relay {result[0]}, one cluster {result[1]}"


ENCRYPTED = ["sendrecv", "p2p_modes", "coll_basic", "c/cg"]


@pytest.mark.parametrize("program", ENCRYPTED)
def test_program_through_encrypting_relays(program, binaries, grids):
    """PC-PC with both relays encrypting (-encrypt, keyed from the job's IMPI_AUTH_KEY):
    the programs pass, cg gives the one-cluster answer, and each relay says that it
    encrypts its connections to the other client."""
    jobs = grids(0)
    name = program.split("/")[-1]
    key = int.from_bytes(os.urandom(8), "big")
    job = run_relayed(jobs, PAIRS["pcpc"], [binaries[program]], timeout=RUN_TIMEOUT, key=key)
    check_ok(job, name)
    assert job.describe().count("the connections to the other clients are encrypted") == 2, job.describe()
    if name == "cg":
        one = jobs.run_flat([4], [binaries[program]], timeout=RUN_TIMEOUT)
        assert one.ok, one.describe()
        result = [re.findall(rf"^{name}: .*$", j.stdout, re.M) for j in (job, one)]
        assert len(result[0]) == 1 and result[0] == result[1], f"encrypted {result[0]}, one cluster {result[1]}"


def test_without_the_relay_the_network_blocks_the_job(binaries, grids):
    """The same PC-GC job with the private cluster joining the server directly: its
    agent reaches the server (outgoing connections pass the NAT), but the global
    cluster's hosts cannot connect to the private addresses it publishes."""
    env = {"CROSSMPI_IMPI_JOIN_TIMEOUT": "10"}
    job = run_relayed(grids(0), [("p", 2, False), ("g", 2, False)], [binaries["sendrecv"]], env=env, timeout=60)
    assert not job.timed_out, job.describe()
    for p in job.launchers:
        assert p.rc not in (0, None), f"{p.name} should have failed\n{job.describe()}"
    text = "".join(p.out + p.err for p in job.launchers)
    assert re.search(r"cannot connect to IMPI host \d+ at 10\.0\.0\.\d+", text), job.describe()


# Trunking: cluster (name, ranks, relays) lists in client order, and the trunk mode.
TRUNK_PROGRAMS = ["sendrecv", "p2p_order", "coll_basic"]
TRUNK_PAIRS = {
    "pcgc-1": ([("p", 4, 1), ("g", 4, 0)], "destination"),
    "pcgc-2": ([("p", 4, 2), ("g", 4, 0)], "destination"),
    "pcgc-4": ([("p", 4, 4), ("g", 4, 0)], "destination"),
    "pcpc-1": ([("p", 4, 1), ("q", 4, 1)], "destination"),
    "pcpc-2": ([("p", 4, 2), ("q", 4, 2)], "destination"),
    "pcpc-4x2": ([("p", 4, 4), ("q", 4, 2)], "destination"),
    "pcgc-4-src": ([("p", 4, 4), ("g", 4, 0)], "source"),
    "pcpc-4x2-src": ([("p", 4, 4), ("q", 4, 2)], "source"),
}
FRONTENDS = {"p": 4, "q": 2}


@pytest.fixture(scope="module")
def trunk_jobs(tmp_path_factory):
    work = str(tmp_path_factory.mktemp("trunk-work"))
    with grid_lab(TRUNK_LAB_FILE, 0, unique_name("rt")) as lab:
        yield GridJobs(lab, PREFIX, work)


@pytest.fixture(scope="module")
def crossbw(tmp_path_factory):
    bench = os.path.join(ROOT, "crates", "daemons", "impi-relay", "bench", "crossbw.c")
    return build(str(tmp_path_factory.mktemp("trunk-bin")), bench)


@pytest.mark.parametrize("case", [(n, p) for p in TRUNK_PAIRS for n in TRUNK_PROGRAMS], ids=lambda c: f"{c[0]}-{c[1]}")
def test_program_through_trunks(case, binaries, trunk_jobs):
    name, pair = case
    clusters, mode = TRUNK_PAIRS[pair]
    job = run_relayed(trunk_jobs, clusters, [binaries[name]], timeout=RUN_TIMEOUT, trunk_mode=mode)
    check_ok(job, name)


@pytest.mark.parametrize("pair", ["pcpc-4x2", "pcpc-4x2-src"])
def test_kernel_through_trunks_gives_the_one_cluster_answer(pair, binaries, trunk_jobs):
    clusters, mode = TRUNK_PAIRS[pair]
    job = run_relayed(trunk_jobs, clusters, [binaries["c/cg"]], timeout=RUN_TIMEOUT, trunk_mode=mode)
    check_ok(job, "cg")
    one = trunk_jobs.run_flat([8], [binaries["c/cg"]], timeout=RUN_TIMEOUT)
    assert one.ok, one.describe()
    result = [re.findall(r"^cg: .*$", j.stdout, re.M) for j in (job, one)]
    assert len(result[0]) == 1 and result[0] == result[1], f"through trunks {result[0]}, one cluster {result[1]}"


@pytest.mark.parametrize("pair", ["pcgc-2", "pcgc-4", "pcpc-4x2", "pcpc-4x2-src"])
def test_traffic_spreads_over_the_trunks(pair, crossbw, trunk_jobs):
    clusters, mode = TRUNK_PAIRS[pair]
    lab = trunk_jobs.lab
    fes = [f"{c}-fe{k}" for c, _, relays in clusters if relays for k in range(1, FRONTENDS[c] + 1)]
    before = {fe: wan_bytes(lab, fe) for fe in fes}
    # Every rank of one cluster exchanges 1 MiB with every rank of the other, 3 times
    # (and once to warm up): 128 MiB across, checked by the program.
    job = run_relayed(trunk_jobs, clusters, [crossbw, str(clusters[0][1]), str(1 << 20), "3"], timeout=RUN_TIMEOUT,
                      trunk_mode=mode)
    check_ok(job, "crossbw")
    moved = {fe: wan_bytes(lab, fe) - before[fe] for fe in fes}
    for c, _, relays in clusters:
        if not relays:
            continue
        used = [moved[f"{c}-fe{k}"] for k in range(1, relays + 1)]
        idle = [moved[f"{c}-fe{k}"] for k in range(relays + 1, FRONTENDS[c] + 1)]
        total = sum(used) + sum(idle)
        assert total > 20 << 20, f"{c}: only {total} bytes crossed the front-ends: {moved}"
        for b in used:
            assert b >= total / relays / 2, f"{c}: {relays} trunks but bytes per front-end {moved}"
        for b in idle:
            assert b < total / 100, f"{c}: a front-end without a relay carried bytes: {moved}"


# A relay's death mid-job that ends the job: (clusters, the relay process killed), on
# the trunk lab.
KILLS = {
    "pcgc-1": ([("p", 4, 1), ("g", 4, 0)], "relay 0"),
    "pcpc-1": ([("p", 4, 1), ("q", 4, 1)], "relay 1"),
}
KILL_DEADLINE_S = 10

# A relay's death mid-job that the job survives: (clusters, trunk mode, the relay
# process killed).
SURVIVED_KILLS = {
    "pcgc-2": ([("p", 4, 2), ("g", 4, 0)], "destination", "relay 0.1"),
    "pcpc-2": ([("p", 4, 2), ("q", 4, 2)], "destination", "relay 0.1"),
    "pcpc-2-src": ([("p", 4, 2), ("q", 4, 2)], "source", "relay 1.1"),
    "pcgc-2-trunk0": ([("p", 4, 2), ("g", 4, 0)], "destination", "relay 0"),
    "pcpc-2-trunk0": ([("p", 4, 2), ("q", 4, 2)], "destination", "relay 1"),
}


@pytest.fixture(scope="module")
def collective_loop(tmp_path_factory):
    src = os.path.join(ROOT, "crates", "daemons", "impi-relay", "tests", "c", "collective_loop.c")
    return build(str(tmp_path_factory.mktemp("kill-bin")), src)


def wait_for_line(path, line, timeout):
    """True once the file at `path` has `line` as one of its lines."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(path, errors="replace") as f:
            if line in f.read().splitlines():
                return True
        time.sleep(0.1)
    return False


def kill_mid_job(trunk_jobs, clusters, argv, victim_name, mode="destination"):
    """Starts the collective loop `argv` through relays, and once its first round is done
    kills relay `victim_name` (SIGKILL, by PID). The relay is stopped for 0.3 s first,
    so it dies with the packets sent to it unread in its sockets (one that keeps up may
    otherwise die holding nothing to resend). Returns the finished job, the victim and
    the time of the kill."""
    job = start_relayed(trunk_jobs, clusters, argv, timeout=RUN_TIMEOUT, trunk_mode=mode)
    try:
        first = next(p for p in job.procs if p.name == "cluster 0")
        started = wait_for_line(first.out_path, "RUNNING", 60)
        victim = next(p for p in job.procs if p.name == victim_name)
        os.kill(victim.popen.pid, signal.SIGSTOP)
        time.sleep(0.3)
        os.kill(victim.popen.pid, signal.SIGKILL)
        killed = time.monotonic()
    finally:
        trunk_jobs._finish(job, RUN_TIMEOUT)
    assert started, f"the job did not get past its first round\n{job.describe()}"
    assert not job.timed_out, job.describe()
    return job, victim, killed


@pytest.mark.parametrize("case", KILLS)
def test_a_killed_relay_ends_the_job(case, collective_loop, trunk_jobs):
    """SIGKILL one relay process while the ranks exchange collectives through the
    relays: the job cannot go on (nothing can resend what the dead relay held), so every
    other party must end, non-zero, within KILL_DEADLINE_S, each cluster naming a
    connection that closed, and no rank may be left running."""
    clusters, victim_name = KILLS[case]
    job, victim, killed = kill_mid_job(trunk_jobs, clusters, [collective_loop, "60"], victim_name)
    for p in job.procs:
        if p is victim:
            assert p.rc == -signal.SIGKILL, job.describe()
            continue
        assert p.rc != 0, f"{p.name} exited 0 after the relay's death\n{job.describe()}"
        took = p.ended - killed
        assert took < KILL_DEADLINE_S, f"{p.name} ended {took:.1f} s after the kill\n{job.describe()}"
    for p in job.procs:
        if p.name.startswith("cluster"):
            text = p.out + p.err
            assert "closed its connection" in text, f"{p.name} names no closed connection\n{job.describe()}"
            assert re.search(r"^mpirun: .*ending the job", text, re.M), f"{p.name}: no end\n{job.describe()}"
    left = subprocess.run(["pgrep", "-f", collective_loop], capture_output=True, text=True).stdout.split()
    assert not left, f"ranks left running: {left}\n{job.describe()}"
    print(f"{case}: killed {victim_name}; the last party ended "
          f"{max(p.ended for p in job.procs if p is not victim) - killed:.2f} s later")


@pytest.mark.parametrize("case", SURVIVED_KILLS)
def test_a_killed_trunk_is_survived(case, collective_loop, trunk_jobs):
    """SIGKILL one trunk of a 2-trunk cluster (trunk 1, or trunk 0 with the cluster's
    connection to the IMPI server) while every rank exchanges 256 KiB with every other in
    rounds of all-to-all (every element checked by the program): the ends resend what
    the dead relay held through the other trunk, so the job finishes."""
    clusters, mode, victim_name = SURVIVED_KILLS[case]
    argv = [collective_loop, "6", str(32 * 1024), "alltoall"]
    job, victim, _ = kill_mid_job(trunk_jobs, clusters, argv, victim_name, mode)
    for p in job.procs:
        if p is victim:
            assert p.rc == -signal.SIGKILL, job.describe()
        else:
            assert p.rc == 0, f"{p.name} failed after {victim_name}'s death\n{job.describe()}"
    first = next(p for p in job.procs if p.name == "cluster 0")
    assert re.search(r"^OK collective_loop \d+ rounds$", first.out, re.M), job.describe()
    lost = int(victim_name.split()[1].split(".")[0])
    ranks = next(p for p in job.procs if p.name == f"cluster {lost}")
    assert "(another relay of that cluster) takes over" in ranks.out + ranks.err, job.describe()
