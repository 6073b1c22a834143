"""IMPI jobs through relays in a crossmpi lab grid (examples/lab/grid-relay.toml), and
the relay's latency benchmark.

`run_relayed(jobs, clusters, argv)` starts an `impi-server` on the first host of the
first global cluster, the `impi-relay`s of every private cluster that goes through
relays (trunk 0 on its front-end 1, `-relay I SERVER -trunks K`; trunk k on front-end
k+1, `-trunk k -join` trunk 0; each relay's `-net` is its front-end's private address,
its global address the one it reaches the server from), and one `mpirun -client I
ADDR:PORT` per cluster on that cluster's first host, ADDR:PORT being the server's or
trunk 0's.
Processes are started and ended by bench/impi/gridjob.py (by PID).

As a program (`python3 relayjob.py PREFIX [DELAY_MS...]`), it measures the 0-byte
half round trip between two ranks of different clusters: GC-GC (no relay), PC-GC
(one relay) and PC-PC (two relays), and prints a table with the latency each relay
hop adds. A benchmark, not a test: it asserts nothing.
"""

import contextlib
import os
import re
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "impi"))

from gridjob import Job, cluster_hosts, grid_lab, host_slots, read_first_line  # noqa: E402

LAB_FILE = "grid-relay.toml"


def run_relayed(jobs, clusters, argv, env=None, timeout=120, trunk_mode="destination", key=None):
    """An IMPI job; `clusters` lists (cluster name, ranks, relays) in client order, relays
    being 0 (joins directly) or the trunk count (True counts as one relay), trunked in
    `trunk_mode`. With `key`, the job uses it as IMPI_AUTH_KEY (the server's -auth key)
    and the relays encrypt with it (-encrypt). Returns the finished Job (relays are among
    its launchers, named "relay I" for client I's trunk 0 and "relay I.k" for trunk k)."""
    job = start_relayed(jobs, clusters, argv, env, timeout, trunk_mode, key)
    return jobs._finish(job, timeout)


def start_relayed(jobs, clusters, argv, env=None, timeout=120, trunk_mode="destination", key=None):
    """As run_relayed, but returns the Job as soon as every process started; finish it
    with jobs._finish(job, timeout)."""
    auth = []
    if key is not None:
        env = dict(env or {}, IMPI_AUTH_KEY=str(key))
        auth = ["-auth", "key"]
    lab = jobs.lab
    names = [h[0][:-1] for h in cluster_hosts(lab)]
    params = {c["name"]: c for c in lab.topo.params["clusters"]}
    server_cluster = next(n for n in names if params[n]["addressing"] == "global")
    server_host = f"{server_cluster}1"
    job = Job(started=time.monotonic())
    server = jobs._start(job, "server", server_host,
                         [f"{jobs.bin}/impi-server", "-server", str(len(clusters)), "-host", lab.ip(server_host),
                          "--timeout", str(timeout)] + auth, jobs._env(server_host, env), pipe_stdout=True)
    addr = read_first_line(server.popen.stdout.fileno(), 10)
    if not addr:
        jobs._finish(job, 0)
        raise RuntimeError(f"run_relayed: impi-server printed no address\n{job.describe()}")
    server.out = addr + "\n"
    for i, (cname, n, trunks) in enumerate(clusters):
        target = addr
        if trunks:
            fe = f"{cname}-fe1"
            relay = jobs._start(job, f"relay {i}", fe,
                                [f"{jobs.bin}/impi-relay", "-relay", str(i), addr, "-trunks", str(int(trunks)),
                                 "-trunk-mode", trunk_mode, "-net", lab.ip(fe, "priv0")]
                                + (["-encrypt", "-v"] if key is not None else []),
                                jobs._env(fe, env), pipe_stdout=True)
            target = read_first_line(relay.popen.stdout.fileno(), 10)
            if not target:
                jobs._finish(job, 0)
                raise RuntimeError(f"run_relayed: impi-relay printed no address\n{job.describe()}")
            relay.out = target + "\n"
            for k in range(1, int(trunks)):
                fe = f"{cname}-fe{k + 1}"
                jobs._start(job, f"relay {i}.{k}", fe,
                            [f"{jobs.bin}/impi-relay", "-trunk", str(k), "-join", target, "-net",
                             lab.ip(fe, "priv0")], jobs._env(fe, env))
        hosts = [f"{cname}{k}" for k in range(1, params[cname]["hosts"] + 1)]
        mpirun = jobs.mpirun_argv(host_slots(hosts, n), n, argv)
        jobs._start(job, f"cluster {i}", hosts[0], mpirun[:1] + ["-client", str(i), target] + mpirun[1:],
                    jobs._env(hosts[0], env))
    return job


def wan_bytes(lab, fe):
    """Bytes received plus sent on a front-end's WAN interface (/proc/net/dev is per
    network namespace)."""
    for line in lab.cmd(fe, "cat /proc/net/dev").splitlines():
        name, _, counters = line.partition(":")
        if name.strip() == "wan0":
            fields = counters.split()
            return int(fields[0]) + int(fields[8])
    raise KeyError(f"{fe} has no wan0 in /proc/net/dev")


# The three cases of the latency table: (name, clusters in client order).
CASES = [
    ("GC-GC", [("g", 1, False), ("h", 1, False)]),
    ("PC-GC", [("p", 1, True), ("g", 1, False)]),
    ("PC-PC", [("p", 1, True), ("q", 1, True)]),
]

# The floor of a user-space hop: the private cluster p joins second (client 1), so its
# rank is the IMPI host that opens the connection (the higher-ranked host connects),
# and p's front-end lets connections out through its NAT. The same ping-pong then runs
# with the kernel forwarding ("nat"), with p's connection redirected on the front-end to
# plain_forwarder, a user-space process that copies bytes and nothing else ("plain"),
# and through impi-relay ("relay"). FLOOR_PORT fixes g's rank's IMPI port
# (CROSSMPI_IMPI_PORT) so that the front-end can redirect exactly that connection.
FLOOR_PORT = 9100
FLOOR_CASES = [
    ("GC-PC nat", [("g", 1, False), ("p", 1, False)], False),
    ("GC-PC plain", [("g", 1, False), ("p", 1, False)], True),
    ("GC-PC relay", [("g", 1, False), ("p", 1, True)], False),
]


@contextlib.contextmanager
def plain_forwarding(lab, forwarder, fe="p-fe1", target_host="g1", port=FLOOR_PORT):
    """Within the block, the connection a host behind `fe` opens to target_host:port
    goes through `forwarder` (plain_forwarder) on `fe` (iptables REDIRECT to port + 1).
    The forwarder serves one connection; it and the rule are gone after the block."""
    target = f"{lab.ip(target_host)}:{port}"
    proc = lab.popen(fe, [forwarder, f"0.0.0.0:{port + 1}", target], stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL, start_new_session=True)
    rule = f"PREROUTING -i priv0 -p tcp -d {lab.ip(target_host)} --dport {port} -j REDIRECT --to-ports {port + 1}"
    try:
        if read_first_line(proc.stdout.fileno(), 10) != "ready":
            raise RuntimeError(f"plain_forwarder on {fe} did not start")
        lab.cmd(fe, f"iptables -t nat -I {rule}")
        try:
            yield
        finally:
            lab.cmd(fe, f"iptables -t nat -D {rule}")
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()


def wanbench_results(jobs, clusters, wanbench, bench, budget=0.3, env=None, timeout=300, trunk_mode="destination",
                     key=None):
    """bench/impi/wanbench.c `bench` (latency or bandwidth) as one relayed job:
    {bytes: value} from its RESULT lines; RuntimeError when the job fails."""
    job = run_relayed(jobs, clusters, [wanbench, str(budget), bench], env=env, timeout=timeout,
                      trunk_mode=trunk_mode, key=key)
    found = {int(b): float(v) for b, v in re.findall(rf"^RESULT {bench} (\d+) ([\d.]+)", job.stdout, re.M)}
    if not job.ok or not found:
        raise RuntimeError(f"wanbench {bench} failed\n{job.describe()}")
    return found


def latency_us(jobs, wanbench, budget=0.3):
    """0-byte half round trip (us) for every case."""
    return {name: wanbench_results(jobs, clusters, wanbench, "latency", budget)[0] for name, clusters in CASES}


def main(argv):
    from gridjob import GridJobs
    prefix = os.path.abspath(argv[1]) if len(argv) > 1 else os.path.join(ROOT, "build", "install")
    delays = [float(d) for d in argv[2:]] or [0.0]
    work = os.path.join("/tmp", f"relay-bench-{os.getpid()}")
    os.makedirs(work, exist_ok=True)
    wanbench = os.path.join(work, "wanbench")
    subprocess.run([f"{prefix}/bin/mpicc", "-O2", "-o", wanbench, os.path.join(ROOT, "bench", "impi", "wanbench.c")],
                   check=True)
    print("delay_ms  GC-GC_us  PC-GC_us  PC-PC_us  added_per_hop_us (PC-GC - GC-GC, (PC-PC - GC-GC)/2)")
    for delay in delays:
        with grid_lab(LAB_FILE, delay, f"rb{os.getpid() % 10000}") as lab:
            lat = latency_us(GridJobs(lab, prefix, work), wanbench)
        one = lat["PC-GC"] - lat["GC-GC"]
        two = (lat["PC-PC"] - lat["GC-GC"]) / 2
        print(f"{delay:8g}  {lat['GC-GC']:8.1f}  {lat['PC-GC']:8.1f}  {lat['PC-PC']:8.1f}  {one:.1f}, {two:.1f}")


if __name__ == "__main__":
    main(sys.argv)
