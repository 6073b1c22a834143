"""How each trunk's front-end link is used over time during one trunkbench.py job.

    python3 trunktimeline.py PREFIX [TRUNKS] [MODE] [BIN_MS]

The lab grid and the job are trunkbench.py's (4+4 ranks of bench/crossbw.c through
TRUNKS relays, default 4, MODE destination or source). While the job runs, a sampler
in every front-end's network namespace reads its WAN interface's byte counters
(/proc/net/dev) every 10 ms. Printed: MB/s sent (out, towards the global cluster) and
received (in) per front-end in bins of BIN_MS (default 20) from the first to the last
bin that moved data, then per front-end and direction the share of those bins that were
idle (below 1 MB/s), partial (1 to 10) and near the line rate (above 10; 100 Mbit/s is
11.9 MB/s of TCP payload). The job's warm-up round is included. A diagnostic: it asserts
nothing (docs/impi-relay.md, "Trunking bandwidth").
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from trunkbench import FRONTENDS, ROOT, trunk_table  # noqa: E402  (also puts bench/impi on the path)
from gridjob import GridJobs, Lab, topology  # noqa: E402
from relayjob import run_relayed  # noqa: E402

# Runs inside a front-end until SIGTERM, then prints "seconds received sent" per sample.
SAMPLER = r"""
import signal, time
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
rows = []
while not stop:
    with open("/proc/net/dev") as f:
        for line in f:
            name, _, counters = line.partition(":")
            if name.strip() == "wan0":
                c = counters.split()
                rows.append((time.monotonic(), int(c[0]), int(c[8])))
    time.sleep(0.01)
print("\n".join(f"{t:.4f} {rx} {tx}" for t, rx, tx in rows))
"""


def bytes_at(rows, t, col):
    """Counter `col` at time t, interpolated between samples."""
    prev = rows[0]
    for row in rows:
        if row[0] >= t:
            if row[0] == prev[0]:
                return row[col]
            return prev[col] + (t - prev[0]) / (row[0] - prev[0]) * (row[col] - prev[col])
        prev = row
    return rows[-1][col]


def main(argv):
    prefix = os.path.abspath(argv[1]) if len(argv) > 1 else os.path.join(ROOT, "build", "install")
    trunks = int(argv[2]) if len(argv) > 2 else 4
    mode = argv[3] if len(argv) > 3 else "destination"
    bin_s = (float(argv[4]) if len(argv) > 4 else 20.0) / 1000
    work = os.path.join("/tmp", f"trunk-timeline-{os.getpid()}")
    os.makedirs(work, exist_ok=True)
    crossbw = os.path.join(work, "crossbw")
    subprocess.run([f"{prefix}/bin/mpicc", "-O2", "-o", crossbw, os.path.join(HERE, "crossbw.c")], check=True)
    fes = [f"p-fe{k}" for k in range(1, FRONTENDS + 1)][:trunks]
    with Lab(topology.from_table(trunk_table(), "trunktimeline.py", f"tl{os.getpid() % 100000}")) as lab:
        samplers = [lab.popen(fe, ["python3", "-c", SAMPLER], stdout=subprocess.PIPE, text=True) for fe in fes]
        try:
            job = run_relayed(GridJobs(lab, prefix, work), [("p", 4, trunks), ("g", 4, 0)],
                              [crossbw, "4", str(1 << 20), "4"], timeout=300, trunk_mode=mode)
        finally:
            for s in samplers:
                s.terminate()
        series = [[tuple(float(x) for x in line.split()) for line in s.communicate()[0].split("\n") if line]
                  for s in samplers]
    if not job.ok or "OK crossbw" not in job.stdout:
        raise RuntimeError(f"trunktimeline: the job failed\n{job.describe()}")
    result = next(ln for ln in job.stdout.splitlines() if ln.startswith("RESULT crossbw"))
    start = min(rows[0][0] for rows in series)
    end = max(rows[-1][0] for rows in series)
    bins = []
    t = start
    while t + bin_s <= end:
        bins.append((t, [[(bytes_at(rows, t + bin_s, col) - bytes_at(rows, t, col)) / bin_s / 1e6 for col in (2, 1)]
                         for rows in series]))
        t += bin_s
    moving = [i for i, (_, rates) in enumerate(bins) if any(r >= 1 for fe in rates for r in fe)]
    bins = bins[moving[0]:moving[-1] + 1] if moving else []
    print(f"{trunks} trunk(s), {mode} mode: {result.split()[3]} MB/s; MB/s out/in per front-end per "
          f"{bin_s * 1000:g} ms")
    print("     s  " + "  ".join(f"{fe:>11}" for fe in fes))
    for t, rates in bins:
        print(f"{t - bins[0][0]:6.2f}  " + "  ".join(f"{o:5.1f}/{i:5.1f}" for o, i in rates))
    print("share of bins: idle (< 1 MB/s), partial (1-10), near line rate (> 10)")
    for k, fe in enumerate(fes):
        for d, name in enumerate(("out", "in")):
            rates = [rs[k][d] for _, rs in bins]
            n = len(rates) or 1
            idle = sum(r < 1 for r in rates) / n
            full = sum(r > 10 for r in rates) / n
            print(f"{fe} {name:>3}: idle {idle:4.0%}  partial {1 - idle - full:4.0%}  near line rate {full:4.0%}")


if __name__ == "__main__":
    main(sys.argv)
