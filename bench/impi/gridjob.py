"""One MPI job across the clusters of a crossmpi lab grid, started the way users start
one on real clusters: each cluster's launcher runs on that cluster's first host and
places ranks on that cluster's hosts through `crossmpi lab exec`.

- `run_impi`: an IMPI job. An `impi-server` on the first cluster's first host, then
  one `mpirun -client I ADDR:PORT` per cluster (client I's ranks follow client I-1's
  in MPI_COMM_WORLD).
- `run_flat`: one crossmpi `mpirun` on the first host placing ranks on hosts of every
  cluster (crossmpi's own TCP between clusters).
- `run_openmpi`: the same with Open MPI's `mpirun`, its rsh agent being `crossmpi lab
  exec` and its out-of-band and TCP traffic bound to the hosts' `eth0`.

Shared by lab/tests/test_impi_grid.py and bench/impi/bench.py. Every job's processes
are started here and ended here by PID (SIGTERM, then SIGKILL) when they outlive
their time limit.
"""

import math
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "lab"))

from crossmpi_lab import Lab, topology  # noqa: E402

EXAMPLES = os.path.join(ROOT, "examples", "lab")
# Seconds a job's processes get between SIGTERM and SIGKILL when they outlive the job's
# time limit: mpirun's own teardown takes about 0.6 s.
KILL_GRACE_S = 5


def grid_lab(file_name, delay_ms, name):
    """A Lab (not yet up) from examples/lab/FILE with the WAN's one-way delay replaced:
    one topology file serves every delay a test or benchmark needs."""
    path = os.path.join(EXAMPLES, file_name)
    with open(path, "rb") as f:
        table = tomllib.load(f)
    table.setdefault("wan", {})["delay_ms"] = delay_ms
    table["description"] = f"{table.get('description', file_name)} (delay_ms = {delay_ms})"
    return Lab(topology.from_table(table, f"{path} with delay_ms = {delay_ms}", name))


def cluster_hosts(lab, per_cluster=None):
    """The compute hosts of each cluster of a grid lab, in cluster order (the first
    per_cluster of each when given)."""
    return [[f"{c['name']}{i}" for i in range(1, c["hosts"] + 1)][:per_cluster] for c in lab.topo.params["clusters"]]


def host_slots(hosts, n):
    """mpirun's --host value placing n ranks in blocks over hosts (the first hosts take
    one more when n does not divide evenly), e.g. (["a1", "a2"], 3) -> "a1:2,a2:1"."""
    used = hosts[:n]
    per, extra = divmod(n, len(used))
    return ",".join(f"{h}:{per + (i < extra)}" for i, h in enumerate(used))


def flat_hosts(lab, sizes, per_cluster=None):
    """--host value of a flat job with sizes[i] ranks in cluster i (the IMPI rank order)."""
    return ",".join(host_slots(hosts, n) for hosts, n in zip(cluster_hosts(lab, per_cluster), sizes) if n > 0)


@dataclass
class Proc:
    """One process of a job: a cluster's mpirun or the IMPI server."""
    name: str
    host: str
    argv: list
    popen: subprocess.Popen = None
    out_path: str = ""
    err_path: str = ""
    rc: int = None
    ended: float = None  # time.monotonic() at exit
    out: str = ""
    err: str = ""


@dataclass
class Job:
    procs: list = field(default_factory=list)  # launchers in cluster order, then the server if any
    started: float = 0.0
    timed_out: bool = False

    @property
    def launchers(self):
        return [p for p in self.procs if p.name != "server"]

    @property
    def server(self):
        return next((p for p in self.procs if p.name == "server"), None)

    @property
    def ok(self):
        return not self.timed_out and all(p.rc == 0 for p in self.procs)

    @property
    def stdout(self):
        return "".join(p.out for p in self.launchers)

    @property
    def elapsed(self):
        ends = [p.ended for p in self.procs if p.ended is not None]
        return (max(ends) if ends else time.monotonic()) - self.started

    def describe(self):
        """Every process's command, status and output, for an assertion message."""
        parts = []
        for p in self.procs:
            when = f"{p.ended - self.started:.2f} s" if p.ended is not None else "never"
            parts.append(f"--- {p.name} on {p.host}: exit {p.rc} after {when}\n$ {' '.join(p.argv)}\n"
                         f"{p.out}{p.err}")
        return ("(timed out)\n" if self.timed_out else "") + "\n".join(parts)


class GridJobs:
    """Starts jobs in one lab that is up, with crossmpi installed in prefix."""

    def __init__(self, lab, prefix, workdir):
        self.lab = lab
        self.prefix = prefix
        self.workdir = workdir
        self.bin = os.path.join(prefix, "bin")
        self.agent = f"{self.bin}/crossmpi lab exec --lab={lab.name}"
        # Open MPI's launch agent: a one-word script (plm_rsh_agent keeps only the first
        # word of a longer one) that maps the host addresses Open MPI is given back to
        # lab host names. Open MPI gets addresses because it resolves host names with
        # DNS, which a lab host cannot reach: each lookup blocks its event loop for the
        # resolver's timeout and the job never starts.
        self.ompi_agent = os.path.join(workdir, f"lab-exec-{lab.name}")
        hosts = [h for cluster in cluster_hosts(lab) for h in cluster]
        cases = "".join(f"  {lab.ip(h)}) host={h} ;;\n" for h in hosts)
        with open(self.ompi_agent, "w") as f:
            f.write(f'#!/bin/sh\nhost=$1\nshift\ncase $host in\n{cases}esac\nexec {self.agent} "$host" "$@"\n')
        os.chmod(self.ompi_agent, 0o755)

    def _env(self, host, extra):
        env = dict(os.environ, CROSSMPI_LAB=self.lab.name, CROSSMPI_MPIRUN_ADDR=self.lab.ip(host),
                   IMPI_AUTH_NONE="1")
        env.update(extra or {})
        return env

    def _start(self, job, name, host, argv, env, pipe_stdout=False):
        """Starts argv in host; output goes to files of the work folder (stdout to a
        pipe when the caller reads it as the job runs)."""
        p = Proc(name, host, argv)
        fd_err, p.err_path = tempfile.mkstemp(prefix=f"{name.replace(' ', '')}.", suffix=".err", dir=self.workdir)
        if pipe_stdout:
            stdout = subprocess.PIPE
        else:
            stdout, p.out_path = tempfile.mkstemp(prefix=f"{name.replace(' ', '')}.", suffix=".out", dir=self.workdir)
        p.popen = self.lab.popen(host, argv, env=env, cwd=self.workdir, stdin=subprocess.DEVNULL, stdout=stdout,
                                 stderr=fd_err, start_new_session=True)
        os.close(fd_err)
        if not pipe_stdout:
            os.close(stdout)
        job.procs.append(p)
        return p

    def _finish(self, job, timeout):
        """Waits for every process (recording when each ended); past the time limit,
        SIGTERM then SIGKILL to those left, by PID."""
        try:
            self._wait(job, timeout)
        except BaseException:  # e.g. Ctrl-C or the lab's SIGTERM: leave no process behind
            self._signal_all(job, signal.SIGTERM)  # mpirun then ends its ranks itself
            for p in job.procs:
                try:
                    p.popen.wait(KILL_GRACE_S)
                except subprocess.TimeoutExpired:
                    p.popen.kill()
                    p.popen.wait()
            raise
        for p in job.procs:
            if p.popen.stdout is not None:
                p.out += p.popen.stdout.read().decode(errors="replace")
                p.popen.stdout.close()
            else:
                p.out = read_and_remove(p.out_path)
            p.err = read_and_remove(p.err_path)
        return job

    def _wait(self, job, timeout):
        deadline = job.started + timeout
        while any(p.rc is None for p in job.procs):
            for p in job.procs:
                if p.rc is None and p.popen.poll() is not None:
                    p.rc, p.ended = p.popen.returncode, time.monotonic()
            if time.monotonic() > deadline and not job.timed_out:
                job.timed_out = True
                self._signal_all(job, signal.SIGTERM)
                deadline = time.monotonic() + KILL_GRACE_S
            elif job.timed_out and time.monotonic() > deadline:
                self._signal_all(job, signal.SIGKILL)
                deadline = math.inf
            time.sleep(0.01)

    @staticmethod
    def _signal_all(job, sig):
        for p in job.procs:
            if p.rc is None:
                try:
                    os.kill(p.popen.pid, sig)
                except ProcessLookupError:
                    pass

    def mpirun_argv(self, hosts, n, argv):
        return [f"{self.bin}/mpirun", "--host", hosts, "--launch-agent", self.agent, "-n", str(n), *argv]

    def run_impi(self, sizes, argv, env=None, timeout=120, clients=None, server_timeout=None, per_cluster=None):
        """An IMPI job with sizes[i] ranks in cluster i, on the first per_cluster hosts
        of each (default: all). `clients` (default: one per cluster) is what the server
        waits for, so a larger value leaves a client that never joins; `server_timeout`
        is the server's --timeout (default: the job's)."""
        clusters = cluster_hosts(self.lab, per_cluster)
        if len(sizes) > len(clusters):
            raise ValueError(f"run_impi: sizes={sizes}: lab {self.lab.name} has {len(clusters)} clusters")
        job = Job(started=time.monotonic())
        first = clusters[0][0]
        server_argv = [f"{self.bin}/impi-server", "-server", str(clients or len(sizes)), "-host",
                       self.lab.ip(first), "--timeout", str(math.ceil(server_timeout or timeout))]
        server = self._start(job, "server", first, server_argv, self._env(first, env), pipe_stdout=True)
        addr = read_first_line(server.popen.stdout.fileno(), 10)
        if not addr:  # the job fails with the server's own message
            return self._finish(job, 0)
        server.out = addr + "\n"
        for i, n in enumerate(sizes):
            host = clusters[i][0]
            mpirun = self.mpirun_argv(host_slots(clusters[i], n), n, argv)
            self._start(job, f"cluster {i}", host, mpirun[:1] + ["-client", str(i), addr] + mpirun[1:],
                        self._env(host, env))
        return self._finish(job, timeout)

    def run_flat(self, sizes, argv, env=None, timeout=120, per_cluster=None):
        """One crossmpi mpirun on the first host; sizes[i] ranks in cluster i, on the
        first per_cluster hosts of each (default: all)."""
        job = Job(started=time.monotonic())
        host = cluster_hosts(self.lab)[0][0]
        self._start(job, "flat", host, self.mpirun_argv(flat_hosts(self.lab, sizes, per_cluster), sum(sizes), argv),
                    self._env(host, env))
        return self._finish(job, timeout)

    def run_openmpi(self, sizes, argv, env=None, timeout=120):
        """Open MPI's mpirun on the first host; sizes[i] ranks in cluster i: TCP (ob1)
        between hosts and vader between ranks of one host, as crossmpi uses shared
        memory there; every socket on eth0."""
        job = Job(started=time.monotonic())
        host = cluster_hosts(self.lab)[0][0]
        env = dict(env or {})
        addresses = ",".join(f"{self.lab.ip(h)}:{n}" for h, n in
                             (slot.split(":") for slot in flat_hosts(self.lab, sizes).split(",")))
        mpirun = ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "--host", addresses,
                  "-n", str(sum(sizes)),
                  "--mca", "plm_rsh_agent", self.ompi_agent, "--mca", "plm_rsh_no_tree_spawn", "1",
                  "--mca", "oob_tcp_if_include", "eth0", "--mca", "btl_tcp_if_include", "eth0",
                  "--mca", "pml", "ob1", "--mca", "btl", "tcp,vader,self",
                  # The lab's hosts share this machine's cores (bench/lib/lab.sh).
                  "--mca", "mpi_yield_when_idle", "1"]
        for k in env:
            mpirun += ["-x", k]
        # Open MPI hands the agent one remote command line with shell syntax, as ssh gets.
        env["CROSSMPI_LAB_EXEC_SHELL"] = "1"
        self._start(job, "openmpi", host, mpirun + list(argv), self._env(host, env))
        return self._finish(job, timeout)


def read_first_line(fd, timeout):
    """The first line of a pipe (without its newline), or "" after timeout seconds.
    Byte by byte from the descriptor, so nothing after the line is consumed."""
    deadline = time.monotonic() + timeout
    line = b""
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return ""
        ch = os.read(fd, 1)
        if not ch:
            return ""
        line += ch
    return line.decode(errors="replace").strip()


def read_and_remove(path):
    with open(path, errors="replace") as f:
        text = f.read()
    os.unlink(path)
    return text
