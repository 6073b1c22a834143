"""Issue 6, item 5: one MPI job across emulated clusters, started the IMPI way.

An impi-server on a1 and one `mpirun -client I ADDR:PORT` per cluster, each on its
cluster's first host placing ranks on that cluster's hosts through `crossmpi lab
exec` (bench/impi/gridjob.py). Clusters have global addresses (IMPI hosts connect
to each other directly) and an unshaped WAN with a one-way delay of 0 or 5 ms.

- Every C test program of tests/mpi across 2 clusters at 0 ms (but those with an
  `// impi: skip` or `// lab: skip` header), as 2+2 ranks when its
  `// ranks:` header allows 4, else as 1+1; its own header's expectations decide
  (the same ones tests/mpi/run.sh checks; `within=S` bounds the time between the
  first and the last cluster ending, since start-up through the lab takes longer
  than on one machine).
- Every application kernel of tests/kernels (C and Fortran) across 2+2 ranks at
  0 ms: its result line must equal that of one cluster running the same 4 ranks.
- A representative subset at 3 clusters and at 5 ms.
- Failures: a client that never joins (the server waits for 3 clients, 2 come)
  ends every started cluster with a message; a rank killed in one cluster ends every
  cluster within seconds, each with a message naming where and why.

About 4 minutes on 2 cores. Needs root and crossmpi installed in CROSSMPI_PREFIX.
"""

import contextlib
import os
import re
import subprocess
import sys

import pytest
from conftest import unique_name

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PREFIX = os.environ.get("CROSSMPI_PREFIX", os.path.join(ROOT, "build", "install"))
sys.path.insert(0, os.path.join(ROOT, "bench", "impi"))

from gridjob import GridJobs, grid_lab  # noqa: E402

MPI_TESTS = os.path.join(ROOT, "tests", "mpi")
KERNELS = os.path.join(ROOT, "tests", "kernels")
RUN_TIMEOUT = 90
# A failed job must be over this long after its first cluster ended: mpirun's teardown
# takes 0.6 s, the other clusters see their connections close at once.
FAILURE_SPREAD_S = 5

# The subsets beyond 2 clusters at 0 ms: (lab file, delay, program, cluster sizes).
SUBSET_PROGRAMS = [
    ("grid-impi-3.toml", 0, "coll_basic", [1, 1, 2]),
    ("grid-impi-3.toml", 0, "coll_nonblocking", [1, 1, 2]),
    ("grid-impi-3.toml", 0, "coll_inter", [1, 2, 2]),
    ("grid-impi-3.toml", 0, "coll_userop", [2, 2, 3]),
    ("grid-impi-3.toml", 0, "comm_stress", [2, 2, 4]),
    ("grid-impi-3.toml", 0, "intercomm", [1, 1, 2]),
    ("grid-impi-3.toml", 0, "p2p_wildcards", [1, 1, 2]),
    ("grid-impi-3.toml", 0, "probe", [1, 1, 2]),
    ("grid-impi-3.toml", 0, "topo_cart", [2, 2, 2]),
    ("grid-impi-3.toml", 0, "rank_dies", [1, 1, 2]),
    ("grid-impi-2.toml", 5, "p2p_modes", [2, 2]),
    ("grid-impi-2.toml", 5, "p2p_order", [1, 3]),
    ("grid-impi-2.toml", 5, "probe", [2, 2]),
    ("grid-impi-2.toml", 5, "cancel", [2, 2]),
    ("grid-impi-2.toml", 5, "sendrecv", [1, 3]),
    ("grid-impi-2.toml", 5, "dtype_p2p", [2, 2]),
    ("grid-impi-2.toml", 5, "mpit", [1, 2]),
    ("grid-impi-2.toml", 5, "coll_basic", [2, 2]),
    ("grid-impi-2.toml", 5, "coll_nonblocking", [2, 2]),
    ("grid-impi-2.toml", 5, "intercomm", [2, 2]),
    ("grid-impi-2.toml", 5, "abort", [2, 2]),
    ("grid-impi-2.toml", 5, "rank_dies", [1, 3]),
    ("grid-impi-3.toml", 5, "coll_basic", [1, 2, 2]),
    ("grid-impi-3.toml", 5, "intercomm", [1, 1, 2]),
]
SUBSET_KERNELS = [
    ("grid-impi-3.toml", 0, "c/cg", [1, 1, 2]),
    ("grid-impi-3.toml", 0, "fortran/fft3d", [1, 1, 2]),
    ("grid-impi-3.toml", 0, "c/mg", [1, 1, 2]),
    ("grid-impi-2.toml", 5, "c/fft3d", [2, 2]),
    ("grid-impi-2.toml", 5, "fortran/wavefront", [2, 2]),
    ("grid-impi-2.toml", 5, "c/isort", [1, 3]),
    ("grid-impi-3.toml", 5, "c/isort", [1, 1, 2]),
]


def header(path, name):
    """Value of the `// NAME:` (or `! NAME:`) header line of a source file, or ""."""
    with open(path) as f:
        for line in f:
            m = re.match(rf"^(?://|!) {name}: *(.*)$", line.rstrip("\n"))
            if m:
                return m.group(1)
    return ""


def program_names():
    return sorted(f[:-2] for f in os.listdir(MPI_TESTS) if f.endswith(".c"))


def kernel_names():
    return sorted(f"{lang}/{os.path.splitext(f)[0]}" for lang, ext in (("c", ".c"), ("fortran", ".f90"))
                  for f in os.listdir(os.path.join(KERNELS, lang)) if f.endswith(ext))


def kernel_source(kernel):
    lang, name = kernel.split("/")
    return os.path.join(KERNELS, lang, name + (".c" if lang == "c" else ".f90"))


def two_cluster_sizes(ranks):
    """2+2 when the program runs at 4 ranks, else 1+1 at 2 ranks, else None (a
    1-rank program cannot cross clusters)."""
    allowed = ranks.split()
    return [2, 2] if "4" in allowed else [1, 1] if "2" in allowed else None


def program_cases():
    cases = []
    for name in program_names():
        src = os.path.join(MPI_TESTS, name + ".c")
        sizes = two_cluster_sizes(header(src, "ranks"))
        # `// impi: skip` rules out IMPI jobs, `// lab: skip` jobs spanning hosts.
        if sizes is None or header(src, "impi") or header(src, "lab"):
            continue
        for arg in header(src, "args").split() or [""]:
            cases.append(("grid-impi-2.toml", 0, name, sizes, arg))
    for lab_file, delay, name, sizes in SUBSET_PROGRAMS:
        src = os.path.join(MPI_TESTS, name + ".c")
        assert str(sum(sizes)) in header(src, "ranks").split(), f"{name} does not run at {sum(sizes)} ranks"
        for arg in header(src, "args").split()[:1] or [""]:
            cases.append((lab_file, delay, name, sizes, arg))
    return cases


def case_id(case):
    lab_file, delay, name, sizes, *arg = case
    return f"{name}{'-' + arg[0] if arg and arg[0] else ''}-{'+'.join(map(str, sizes))}-{delay}ms"


def kernel_cases():
    return [("grid-impi-2.toml", 0, k, [2, 2]) for k in kernel_names()] + SUBSET_KERNELS


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    """binaries[name]: a test program or kernel ("c/cg") built with crossmpi's
    compilers on first use; a build that fails fails only the tests that use it."""
    mpicc, mpifort = os.path.join(PREFIX, "bin", "mpicc"), os.path.join(PREFIX, "bin", "mpifort")
    if not os.access(mpicc, os.X_OK):
        pytest.fail(f"{mpicc} is missing: install crossmpi first (make install)")
    return Binaries(mpicc, mpifort, tmp_path_factory.mktemp("impi-bin"))


class Binaries(dict):
    def __init__(self, mpicc, mpifort, out):
        super().__init__()
        self.mpicc, self.mpifort, self.out = mpicc, mpifort, out

    def __missing__(self, name):
        path = str(self.out / name.replace("/", "-"))
        if name in program_names():
            cmd = [self.mpicc, "-O2", "-o", path, os.path.join(MPI_TESTS, name + ".c")]
        elif name.startswith("c/"):
            cmd = [self.mpicc, "-O2", "-o", path, kernel_source(name), "-lm"]
        else:
            cmd = [self.mpifort, "-O2", "-J", str(self.out), "-o", path, kernel_source(name)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            pytest.fail(f"{' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
        self[name] = path
        return path


@pytest.fixture(scope="module")
def grids(tmp_path_factory):
    """grids(file, delay) -> GridJobs of a lab brought up on first use; all go down at
    the end of the module."""
    work = tmp_path_factory.mktemp("impi-work")
    with contextlib.ExitStack() as stack:
        labs = {}

        def get(lab_file, delay):
            key = (lab_file, delay)
            if key not in labs:
                lab = stack.enter_context(grid_lab(lab_file, delay, unique_name("i")))
                labs[key] = GridJobs(lab, PREFIX, str(work))
            return labs[key]

        yield get


def check_expectations(job, name, spec):
    """The reasons (empty when none) why a job misses the expectations of a test
    program's header, read as tests/mpi/run.sh reads them."""
    text = "".join(p.out + p.err for p in job.procs)
    rcs = [p.rc for p in job.launchers]
    ends = [p.ended for p in job.launchers if p.ended is not None]
    spread = max(ends) - min(ends) if ends else None
    reasons = []
    for key, op, val in re.findall(r'([a-z]+)(=|~)("[^"]*"|\S+)', spec):
        val = val.strip('"')
        if key == "exit" and val == "nonzero":
            if any(rc == 0 for rc in rcs):
                reasons.append(f"exit statuses {rcs}: every cluster must end non-zero")
        elif key == "exit":
            want = int(val)
            if want == 0 and (any(rcs) or (job.server and job.server.rc != 0)):
                reasons.append(f"exit statuses {rcs}, server {job.server.rc if job.server else '-'}: expected 0")
            elif want != 0 and (want not in rcs or 0 in rcs):
                reasons.append(f"exit statuses {rcs}: expected {want} in one cluster and non-zero in all")
        elif key == "within":
            if spread is None or spread > float(val):
                reasons.append(f"clusters ended {spread} s apart, expected at most {val} s")
        elif key == "output" and op == "~":
            if not re.search(val, text, re.M):
                reasons.append(f"output lacks /{val}/")
        else:
            reasons.append(f"cannot read expectation {key}{op}{val}")
    return reasons


@pytest.mark.parametrize("case", program_cases(), ids=case_id)
def test_program_across_clusters(case, binaries, grids):
    lab_file, delay, name, sizes, arg = case
    src = os.path.join(MPI_TESTS, name + ".c")
    spec = header(src, "expect") or f'exit=0 output~"^OK {name}$"'
    spec += " " + header(src, "expect-crossmpi")
    job = grids(lab_file, delay).run_impi(sizes, [binaries[name]] + ([arg] if arg else []), timeout=RUN_TIMEOUT)
    assert not job.timed_out, f"{name} did not finish within {RUN_TIMEOUT} s\n{job.describe()}"
    reasons = check_expectations(job, name, spec)
    assert not reasons, f"{name} on {sizes} ranks, {delay} ms: {'; '.join(reasons)}\n{job.describe()}"


def kernel_result(job, kernel):
    """The kernel's result line ("cg: N=256 grid 2x2, 722 iterations, ..."): what it
    computed, which must not depend on where its ranks run."""
    name = kernel.split("/")[1]
    assert job.ok, f"{kernel} failed\n{job.describe()}"
    assert re.search(rf"^OK {name}$", job.stdout, re.M), f"{kernel}: no 'OK {name}' line\n{job.describe()}"
    lines = re.findall(rf"^{name}: .*$", job.stdout, re.M)
    assert len(lines) == 1, f"{kernel}: expected one result line\n{job.describe()}"
    return lines[0]


@pytest.mark.parametrize("case", kernel_cases(), ids=case_id)
def test_kernel_same_answer_as_one_cluster(case, binaries, grids):
    lab_file, delay, kernel, sizes = case
    jobs = grids(lab_file, delay)
    across = kernel_result(jobs.run_impi(sizes, [binaries[kernel]], timeout=RUN_TIMEOUT), kernel)
    one = kernel_result(jobs.run_flat([sum(sizes)], [binaries[kernel]], timeout=RUN_TIMEOUT), kernel)
    assert across == one, f"{kernel} across clusters {sizes} gave\n  {across}\none cluster gave\n  {one}"


def test_client_that_never_joins(binaries, grids):
    """The server waits for 3 clients, 2 join: its --timeout ends the start-up, it
    names the missing client, and both started clusters end non-zero saying why."""
    job = grids("grid-impi-2.toml", 0).run_impi([2, 2], [binaries["sendrecv"]], clients=3, server_timeout=4,
                                                timeout=60)
    assert not job.timed_out, job.describe()
    assert job.server.rc == 1 and "client 2" in job.server.err, job.describe()
    for p in job.launchers:
        assert p.rc not in (0, None), job.describe()
        assert "did not join" in p.out + p.err, f"{p.name} does not say another client did not join\n" \
                                                 f"{job.describe()}"
    assert job.elapsed < 4 + FAILURE_SPREAD_S, job.describe()


@pytest.mark.parametrize("sizes", [[2, 2], [1, 3]], ids=["killed-in-first-cluster", "killed-in-second-cluster"])
@pytest.mark.parametrize("delay", [0, 5], ids=["0ms", "5ms"])
def test_rank_killed_ends_every_cluster(sizes, delay, binaries, grids):
    """rank_dies: world rank 1 kills itself (SIGKILL) while every other rank waits on
    it. Its cluster's mpirun names it and the signal; every other cluster's names the
    IMPI host or the server whose connection closed; all end non-zero within seconds
    of each other."""
    job = grids("grid-impi-2.toml", delay).run_impi(sizes, [binaries["rank_dies"]], timeout=60)
    assert not job.timed_out, job.describe()
    dead_cluster = 0 if sizes[0] > 1 else 1
    ends = []
    for i, p in enumerate(job.launchers):
        assert p.rc not in (0, None), job.describe()
        text = p.out + p.err
        if i == dead_cluster:
            assert re.search(r"mpirun: rank 1 .*killed by SIGKILL", text), \
                f"{p.name} does not name rank 1\n{job.describe()}"
        else:
            # Whichever closes first: the dead cluster's ranks, or the server it left.
            assert re.search(r"IMPI host \d+ at [\d.]+:\d+: closed its connection before FINI"
                             r"|the IMPI server [\d.]+:\d+ closed its connection before this cluster finished",
                             text), f"{p.name} does not say which connection closed\n{job.describe()}"
        ends.append(p.ended)
    assert max(ends) - min(ends) < FAILURE_SPREAD_S, job.describe()
    assert job.server.rc == 1 and "before sending FINI" in job.server.err, job.describe()
