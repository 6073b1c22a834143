"""Runs the relay benchmark (issue 7 item 8) in crossmpi lab; run.sh calls it.

usage: relaybench.py PREFIX BIN_DIR RAW_CSV

Parts (BENCH_PARTS), each in its own lab, every case of a repeat run in turn
(interleaved, so all see the same machine load):

  latency    examples/lab/grid-relay.toml, WAN unshaped, 0 ms: wanbench `latency`
             (0 B .. 4 MiB) GC-GC (g+h, no relay), PC-GC (p+g, one relay), PC-PC
             (p+q, two relays), 1+1 ranks; and the floor of a user-space hop: p joined
             second (its rank connects out through its front-end) with the kernel
             forwarding (NAT), with plain_forwarder on the front-end, and with impi-relay
  bandwidth  wanbench `bandwidth` (1 B .. 4 MiB), the same three cases, on grid-relay.toml
             with every WAN uplink shaped to BENCH_BW_MBIT (front-ends and hosts
             unshaped: direct and relayed paths cross the same two shaped uplinks), then
             with nothing shaped (CPU-bound)
  trunks     trunkbench.py's lab plus a second global cluster h (p: 4 hosts behind 4
             front-ends at BENCH_FE_MBIT; g, h: 4 hosts; WAN BENCH_WAN_MBIT, 0 ms):
             crossbw.c 4+4 PC-GC through 1, 2, 4 trunks, and the kernels (isort: IS-like,
             Alltoallv; fft3d: FT-like, Alltoall) 4+4 PC-GC through 1, 2, 4 trunks and GC-GC
  delays     the same lab at each of BENCH_DELAYS: the kernels PC-GC through
             BENCH_SWEEP_TRUNKS trunks and GC-GC (at 0 ms the trunks part's runs serve)

Raw rows: part,case,trunks,delay_ms,wan_mbit,bench,bytes,repeat,value; wan_mbit 0 means
unshaped, value "fail" when a run failed (its log is kept in logs/ next to the CSV).
"""

import contextlib
import csv
import os
import sys
import time
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "impi"))
sys.path.insert(0, HERE)

from gridjob import GridJobs, Lab, topology  # noqa: E402
from relayjob import CASES, FLOOR_CASES, FLOOR_PORT, LAB_FILE, plain_forwarding, run_relayed, wanbench_results  # noqa: E402
from trunkbench import FRONTENDS, TRUNKS, one_run, trunk_table  # noqa: E402

KERNEL_RANKS = 4  # per cluster: one per host
CROSSBW_BYTES = 1 << 20


def words(name, default):
    return os.environ.get(name, default).split()


class RelayBench:
    def __init__(self, prefix, bin_dir, raw):
        self.prefix, self.bin, self.raw = prefix, bin_dir, raw
        self.logs = os.path.join(os.path.dirname(raw), "logs")
        self.work = os.path.join(os.path.dirname(raw), "work")
        os.makedirs(self.logs, exist_ok=True)
        os.makedirs(self.work, exist_ok=True)
        self.repeat = int(os.environ.get("BENCH_REPEAT", "5"))
        self.parts = words("BENCH_PARTS", "latency bandwidth trunks delays")
        self.budget = os.environ.get("BENCH_BUDGET", "0.3")
        self.timeout = int(os.environ.get("BENCH_TIMEOUT", "300"))
        self.bw_mbit = float(os.environ.get("BENCH_BW_MBIT", "1000"))
        self.fe_mbit = float(os.environ.get("BENCH_FE_MBIT", "100"))
        self.wan_mbit = float(os.environ.get("BENCH_WAN_MBIT", "400"))
        self.trunk_wan_mbit = float(os.environ.get("BENCH_TRUNK_WAN_MBIT", "1000"))
        self.delays = [float(d) for d in words("BENCH_DELAYS", "0 2 5 10")]
        self.sweep_trunks = int(os.environ.get("BENCH_SWEEP_TRUNKS", "4"))
        self.kernels = words("BENCH_KERNELS", "isort fft3d")
        self.name = f"rl{os.getpid() % 10000}"
        with open(raw, "w", newline="") as f:
            csv.writer(f).writerow(["part", "case", "trunks", "delay_ms", "wan_mbit", "bench", "bytes", "repeat",
                                    "value"])

    def record(self, rows):
        with open(self.raw, "a", newline="") as f:
            csv.writer(f).writerows(rows)

    def attempt(self, label, run):
        """run() or None after logging why it failed; says how long it took."""
        t0 = time.monotonic()
        try:
            result, status = run(), "ok"
        except RuntimeError as e:
            log = os.path.join(self.logs, label.replace(" ", "-") + ".log")
            with open(log, "w") as f:
                f.write(str(e))
            result, status = None, f"FAILED ({log})"
        print(f"bench/relay: {label}: {status} in {time.monotonic() - t0:.1f} s", file=sys.stderr, flush=True)
        return result

    def wanbench(self, jobs, part, bench, wan, rep):
        exe = os.path.join(self.bin, "wanbench")
        for case, clusters in CASES:
            trunks = sum(1 for _, _, relays in clusters if relays)  # relays on the path
            found = self.attempt(f"{part} {case} wan{wan:g} r{rep}",
                                 lambda: wanbench_results(jobs, clusters, exe, bench, self.budget,
                                                          timeout=self.timeout))
            rows = sorted((found or {0: "fail"}).items())
            self.record([[part, case, trunks, 0, f"{wan:g}", bench, n, rep, v] for n, v in rows])

    def floor(self, jobs, rep):
        """The floor of a user-space hop (relayjob.FLOOR_CASES): wanbench `latency`
        through p's front-end forwarded by the kernel, by plain_forwarder and by
        impi-relay, in the latency part's lab (the report shows 0 and 64 bytes)."""
        exe = os.path.join(self.bin, "wanbench")
        env = {"CROSSMPI_IMPI_PORT": str(FLOOR_PORT)}
        for case, clusters, plain in FLOOR_CASES:
            def run():
                forwarding = plain_forwarding(jobs.lab, os.path.join(self.bin, "plain_forwarder")) if plain \
                    else contextlib.nullcontext()
                with forwarding:
                    return wanbench_results(jobs, clusters, exe, "latency", self.budget, env=env,
                                            timeout=self.timeout)
            found = self.attempt(f"floor {case} r{rep}", run)
            rows = sorted((found or {0: "fail"}).items())
            relays = sum(1 for _, _, r in clusters if r)
            self.record([["floor", case, relays, 0, "0", "latency", n, rep, v] for n, v in rows])

    def point_to_point(self):
        labs = []
        if "latency" in self.parts:
            labs.append((0.0, "latency", "latency"))
        if "bandwidth" in self.parts:
            labs += [(self.bw_mbit, "bandwidth", "bandwidth"), (0.0, "bandwidth", "bandwidth")]
        for wan in sorted({w for w, _, _ in labs}, reverse=True):
            with Lab(relay_topology(wan, f"{self.name}w{int(wan)}"[:10])) as lab:
                jobs = GridJobs(lab, self.prefix, self.work)
                for rep in range(1, self.repeat + 1):
                    for w, part, bench in labs:
                        if w == wan:
                            self.wanbench(jobs, part, bench, wan, rep)
                    if wan == 0.0 and "latency" in self.parts:
                        self.floor(jobs, rep)

    def kernel(self, jobs, name, case, trunks, delay, wan, rep):
        clusters = [("p", KERNEL_RANKS, trunks), ("g", KERNEL_RANKS, 0)] if case == "PC-GC" else \
            [("g", KERNEL_RANKS, 0), ("h", KERNEL_RANKS, 0)]

        def run():
            job = run_relayed(jobs, clusters, [os.path.join(self.bin, f"kernel-{name}")], timeout=self.timeout)
            lines = job.stdout.splitlines()
            seconds = next((ln.split()[1] for ln in lines if ln.startswith("TIME ")), None)
            if not job.ok or seconds is None or f"OK {name}" not in lines:
                raise RuntimeError(job.describe())
            return float(seconds)

        seconds = self.attempt(f"kernel {name} {case} {trunks}t {delay:g}ms r{rep}", run)
        self.record([["kernels", case, trunks, delay, f"{wan:g}", name, 0, rep,
                      "fail" if seconds is None else seconds]])

    def alltoall(self, jobs, trunks, wan, rep):
        found = self.attempt(f"alltoall {trunks}t r{rep}",
                             lambda: one_run(jobs, os.path.join(self.bin, "crossbw"), trunks, "destination"))
        mbs, shares = found if found else ("fail", ["fail"] * FRONTENDS)
        self.record([["alltoall", "PC-GC", trunks, 0, f"{wan:g}", "crossbw", CROSSBW_BYTES, rep, mbs]]
                    + [["alltoall", "PC-GC", trunks, 0, f"{wan:g}", f"share_fe{i + 1}", CROSSBW_BYTES,
                        rep, s] for i, s in enumerate(shares)])

    def trunk_labs(self):
        """(c) in a lab whose WAN is faster than the front-ends together (they are the
        bottleneck, as the target requires), (d) in labs whose WAN the four front-ends
        just fill (so four trunks can match GC-GC): {(delay, WAN): (all-to-all?, trunk
        counts of the PC-GC kernel runs)}, one lab each."""
        labs = {}
        if "trunks" in self.parts:
            labs[(0.0, self.trunk_wan_mbit)] = (True, list(TRUNKS))
        if "delays" in self.parts:
            for d in self.delays:
                alltoall, ks = labs.get((d, self.wan_mbit), (False, []))
                labs[(d, self.wan_mbit)] = (alltoall, ks if self.sweep_trunks in ks else ks + [self.sweep_trunks])
        for i, ((delay, wan), (alltoall, kernel_trunks)) in enumerate(sorted(labs.items())):
            table = trunk_table(delay, self.fe_mbit, wan, reference=True)
            with Lab(topology.from_table(table, "relaybench.py", f"{self.name}t{i}")) as lab:
                jobs = GridJobs(lab, self.prefix, self.work)
                for rep in range(1, self.repeat + 1):
                    if alltoall:
                        for k in TRUNKS:
                            self.alltoall(jobs, k, wan, rep)
                    for name in self.kernels:
                        for k in kernel_trunks:
                            self.kernel(jobs, name, "PC-GC", k, delay, wan, rep)
                        self.kernel(jobs, name, "GC-GC", 0, delay, wan, rep)

    def main(self):
        if "latency" in self.parts or "bandwidth" in self.parts:
            self.point_to_point()
        if "trunks" in self.parts or "delays" in self.parts:
            self.trunk_labs()


def relay_topology(mbit, name):
    """grid-relay.toml (0 ms) with every cluster's WAN uplink shaped to mbit (0: unshaped)."""
    path = os.path.join(ROOT, "examples", "lab", LAB_FILE)
    with open(path, "rb") as f:
        table = tomllib.load(f)
    if mbit:
        table["wan"]["mbit"] = mbit
        table["description"] = f"{table['description']} (WAN {mbit:g} Mbit/s)"
    return topology.from_table(table, f"{path} with wan.mbit = {mbit:g}", name)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    RelayBench(*sys.argv[1:]).main()
