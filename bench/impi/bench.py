"""Runs the cross-cluster benchmark in crossmpi lab (bench/impi/run.sh calls it).

usage: bench.py PREFIX BIN_DIR RAW_CSV

For each WAN one-way delay a lab of two global-address clusters (examples/lab/
grid-impi-2.toml with that delay) is brought up once, and every variant of every part
runs in turn for each repeat (interleaved, so all see the same machine load):

  p2p      latency and bandwidth between a1 and b1: `impi` (an IMPI job, one rank per
           cluster) and `tcp` (one crossmpi mpirun, ranks on a1 and b1: crossmpi's own
           TCP over the same path)
  coll     the 8 collectives on LAYOUT ranks: `magpie` and `impispec` (IMPI jobs with
           CROSSMPI_COLL_WAN=magpie / impi), `flat` (one crossmpi mpirun over both
           clusters), `openmpi` (Open MPI 4.1 over both clusters, TCP on eth0)
  kernels  the C application kernels at delay 0 only: `impi` (2 clusters, all ranks of
           a cluster on its first host) and `one` (one cluster, the same ranks per
           host on as many hosts), so that only the link between the two hosts differs

Raw rows: part,variant,delay_ms,layout,bench,bytes,repeat,value ("fail" when a run
failed; its log is kept next to the CSV). Settings come from the environment, as
run.sh documents them.
"""

import csv
import os
import sys

from gridjob import GridJobs, grid_lab

P2P_VARIANTS = ["impi", "tcp"]
COLL_VARIANTS = ["magpie", "impispec", "flat", "openmpi"]
KERNEL_VARIANTS = ["impi", "one"]


def words(name, default):
    return os.environ.get(name, default).split()


class Bench:
    def __init__(self, prefix, bin_dir, raw):
        self.prefix, self.bin, self.raw = prefix, bin_dir, raw
        self.logs = os.path.join(os.path.dirname(raw), "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.repeat = int(os.environ.get("BENCH_REPEAT", "3"))
        self.kernel_repeat = int(os.environ.get("BENCH_KERNEL_REPEAT", "9"))
        self.budget = os.environ.get("BENCH_BUDGET", "0.3")
        self.timeout = float(os.environ.get("BENCH_TIMEOUT", "300"))
        self.layout = [int(n) for n in os.environ.get("BENCH_COLL_LAYOUT", "2+2").split("+")]
        self.coll_sizes = words("BENCH_COLL_SIZES", "8 65536 1048576")
        self.kernel_layout = [int(n) for n in os.environ.get("BENCH_KERNEL_LAYOUT", "2+2").split("+")]
        self.kernels = words("BENCH_KERNELS", "cg fft3d isort mg wavefront")
        self.parts = words("BENCH_PARTS", "p2p coll kernels")
        self.p2p_delays = [int(d) for d in words("BENCH_DELAYS", "0 2 5 10")]
        self.coll_delays = [int(d) for d in words("BENCH_COLL_DELAYS", "0 10")]
        with open(raw, "w", newline="") as f:
            csv.writer(f).writerow(["part", "variant", "delay_ms", "layout", "bench", "bytes", "repeat", "value"])

    def record(self, rows):
        with open(self.raw, "a", newline="") as f:
            csv.writer(f).writerows(rows)

    def run(self, jobs, part, variant, delay, rep, argv, label):
        """One run; returns its stdout, or None after logging why it failed."""
        sizes = self.layout if part == "coll" else self.kernel_layout if part == "kernels" else [1, 1]
        env = {}
        if variant in ("magpie", "impispec"):
            env["CROSSMPI_COLL_WAN"] = "magpie" if variant == "magpie" else "impi"
        if part == "kernels" and variant == "impi":
            job = jobs.run_impi(sizes, argv, timeout=self.timeout, per_cluster=1)
        elif variant in ("impi", "magpie", "impispec"):
            job = jobs.run_impi(sizes, argv, env=env, timeout=self.timeout)
        elif variant == "one":
            job = jobs.run_flat([sum(sizes)], argv, timeout=self.timeout, per_cluster=len(sizes))
        elif variant == "openmpi":
            job = jobs.run_openmpi(sizes, argv, timeout=self.timeout)
        else:
            job = jobs.run_flat(sizes, argv, timeout=self.timeout)
        log = os.path.join(self.logs, f"{part}-{label}-{variant}-{delay}ms-{rep}.log")
        with open(log, "w") as f:
            f.write(job.describe())
        print(f"bench/impi: {part} {label} {variant} {delay} ms repeat {rep}: "
              f"{'ok' if job.ok else 'FAILED (' + log + ')'} in {job.elapsed:.1f} s", file=sys.stderr, flush=True)
        return job.stdout if job.ok else None

    def results(self, out, part, variant, delay, layout, rep, expected):
        """Rows from RESULT lines; `expected` (bench, bytes) pairs get "fail" when the
        run failed or left them out."""
        got = {}
        for line in (out or "").splitlines():
            w = line.split()
            if len(w) == 4 and w[0] == "RESULT":
                got[(w[1], w[2])] = w[3]
        keys = list(got) if out else []
        keys += [k for k in expected if k not in got]
        return [[part, variant, delay, layout, b, n, rep, got.get((b, n), "fail")] for b, n in keys]

    def p2p(self, jobs, delay, rep):
        for bench in ("latency", "bandwidth"):
            sizes = ([0] if bench == "latency" else []) + [4 ** k for k in range(12)]
            for v in P2P_VARIANTS:
                exe = os.path.join(self.bin, "wanbench")
                out = self.run(jobs, "p2p", v, delay, rep, [exe, self.budget, bench], bench)
                self.record(self.results(out, "p2p", v, delay, "1+1", rep, [(bench, str(n)) for n in sizes]))

    def openmpi_starts(self, jobs, delay):
        """Whether Open MPI can start a job across this lab's clusters at all (a plain
        `hostname` within 20 s), so that a launcher that hangs costs 20 s, not a
        BENCH_TIMEOUT per run."""
        job = jobs.run_openmpi([1, 1], ["hostname"], timeout=20)
        if not job.ok:
            log = os.path.join(self.logs, f"openmpi-start-{delay}ms.log")
            with open(log, "w") as f:
                f.write(job.describe())
            print(f"bench/impi: Open MPI cannot start across the clusters ({log}); its cells are recorded as fail",
                  file=sys.stderr, flush=True)
        return job.ok

    def coll(self, jobs, delay, rep, openmpi):
        layout = "+".join(map(str, self.layout))
        expected = [("barrier", "0")] + [(c, n) for c in ("bcast", "reduce", "allreduce", "allgather", "alltoall",
                                                           "gather", "scatter") for n in self.coll_sizes]
        for v in COLL_VARIANTS:
            exe = os.path.join(self.bin, "wanbench-openmpi" if v == "openmpi" else "wanbench")
            out = None
            if v != "openmpi" or openmpi:
                out = self.run(jobs, "coll", v, delay, rep, [exe, self.budget, "coll", *self.coll_sizes], "coll")
            self.record(self.results(out, "coll", v, delay, layout, rep, expected))

    def kernel_runs(self, jobs, delay, rep):
        layout = "+".join(map(str, self.kernel_layout))
        for k in self.kernels:
            for v in KERNEL_VARIANTS:
                out = self.run(jobs, "kernels", v, delay, rep, [os.path.join(self.bin, f"kernel-{k}")], k)
                seconds = next((w.split()[1] for w in (out or "").splitlines() if w.startswith("TIME ")), "fail")
                if out is not None and f"OK {k}" not in out.splitlines():
                    seconds = "fail"
                self.record([["kernels", v, delay, layout, k, 0, rep, seconds]])

    def main(self):
        work = os.path.join(os.path.dirname(self.raw), "work")
        os.makedirs(work, exist_ok=True)
        delays = sorted(set(self.p2p_delays * ("p2p" in self.parts) + self.coll_delays * ("coll" in self.parts)
                            + [0] * ("kernels" in self.parts)))
        for delay in delays:
            with grid_lab("grid-impi-2.toml", delay, f"ib{os.getpid()}") as lab:
                jobs = GridJobs(lab, self.prefix, work)
                openmpi = "coll" in self.parts and delay in self.coll_delays and self.openmpi_starts(jobs, delay)
                for rep in range(1, max(self.repeat, self.kernel_repeat) + 1):
                    if "p2p" in self.parts and delay in self.p2p_delays and rep <= self.repeat:
                        self.p2p(jobs, delay, rep)
                    if "coll" in self.parts and delay in self.coll_delays and rep <= self.repeat:
                        self.coll(jobs, delay, rep, openmpi)
                    if "kernels" in self.parts and delay == 0 and rep <= self.kernel_repeat:
                        self.kernel_runs(jobs, delay, rep)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    Bench(*sys.argv[1:]).main()
